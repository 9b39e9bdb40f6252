"""FSWZADD (both ISAs, issue 31, shader-u2): a float add whose operation depends on the
thread's lane within its quad (NVIDIA's building block for derivatives: the neighbour's value
comes from a SHFL before it).

Facts: the swizzle operand is four 2-bit fields, field k selecting the operation of lane k of
the quad (lane id & 3): yuzu's shader recompiler reads field (lane & 3) and forms
``a * lut_a[f] + b * lut_b[f]``; Mesa nv50_ir's QUADOP (lane 0 in the low field; its
derivatives, QUADOP(SUB, SUBR, SUB, SUBR) after the neighbour's SHFL, give right - left on both
lanes only with that order).  What each field value does is what nvdisasm prints for it: two
letters, the sign of a then of b (P +1, N -1, Z 0: 'PN' is a - b, 'ZP' is b); the ISA tables
give each ISA's letters (SM86 PP/PN/NP/ZP, SM53 PP/NP/PN/ZP: Mesa's ADD/SUBR/SUB/MOV2).  'ZP'
is b itself (Mesa: MOV2), not 0 * a + b (which would differ for a = inf/NaN and b = -0).
.FTZ flushes denormal operands and the result.  The lane is the emulated warp's (compute:
the invocation's index & 31); graphics stages refuse it (their quad lane order is not
established here, and they have no SHFL for the neighbour)."""

from __future__ import annotations

from shader_svc.ir.block import Block, Value

SIGN = {"P": 1, "N": -1, "Z": 0}


def fswzadd_ir(b: Block, x: Value, y: Value, swz: int, letters: tuple[str, ...], ftz: bool) -> Value:
    """The u32 bits of FSWZADD's result for f32 operands ``x`` (a) and ``y`` (b), the swizzle
    constant ``swz`` and the ISA's letters per field value (``letters[v]``: 'PP', 'PN' ...)."""
    if ftz:
        x, y = b.op("FFlushDenorm32", x), b.op("FFlushDenorm32", y)
    lane = b.op("IAnd32", b.emit("LocalIndex"), b.const_u32(3))
    field = b.op("IAnd32", b.op("IShr32", b.const_u32(swz), b.op("IShl32", lane, b.const_u32(1))), b.const_u32(3))
    r = None
    for v in range(4):
        sa, sb = (SIGN[c] for c in letters[v])
        xa = x if sa == 1 else b.op("FNeg32", x)
        yb = y if sb == 1 else b.op("FNeg32", y)
        f = yb if sa == 0 else b.op("FAdd32", xa, yb)
        if ftz:
            f = b.op("FFlushDenorm32", f)
        bits = b.op("BitcastU32", f)
        r = bits if r is None else b.op("Select32", b.op("IEq32", field, b.const_u32(v)), bits, r)
    return r
