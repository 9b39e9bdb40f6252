"""FSWZADD (both ISAs, issue 31, shader-u2): a float add whose operation depends on the
thread's lane within its quad (NVIDIA's building block for derivatives: the neighbour's value
comes from a SHFL before it).

Facts: the swizzle operand is four 2-bit fields, one per lane of the quad (lane id & 3), and
nvdisasm prints them from the high field down ('ZPPPZPPP' is 0xcc).  Lane 0's field is the
HIGH one (bits 6..7; shader-ndv, which reversed shader-u2's low-field reading): ptxas's own
tex3DGrad quad loop (nvcc 13 sm_86, ptxas 12.9 sm_53: ``FSWZADD.NDV Rx, RdPdx, Rx, ZPPPZPPP``
then ``..., ZPZPPPPP``, then ``TEX.NDV`` whose lane 0 texel it keeps) is right only if lane 0
holds P, lane 1 P + dP/dx, lane 2 P + dP/dy; Mesa nv50_ir's ``QUADOP(q, r, s, t)`` puts q, the
upper-left lane 0, at bits 6..7, and its derivatives (QUADOP(SUB, SUBR, SUB, SUBR) after the
neighbour's SHFL) and manual TXD loop read right with nvdisasm 11.8's SM53 letters only so.
(yuzu's recompiler reads field (lane & 3) from the low end; nothing here can tell which lane
numbering its source of the field had.)  What each field value does is what nvdisasm prints for it: two
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
    shift = b.op("ISub32", b.const_u32(6), b.op("IShl32", lane, b.const_u32(1)))  # lane 0: bits 6..7
    field = b.op("IAnd32", b.op("IShr32", b.const_u32(swz), shift), b.const_u32(3))
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


def fswzadd_lane_ir(b: Block, x: Value, y: Value, swz: int, letters: tuple[str, ...], ftz: bool, lane: int) -> Value:
    """The u32 bits of FSWZADD's result in quad lane ``lane`` (a constant: shader-ndv's virtual
    quad, ``lower/quad_tex.py``), f32 operands ``x`` (a) and ``y`` (b)."""
    if ftz:
        x, y = b.op("FFlushDenorm32", x), b.op("FFlushDenorm32", y)
    sa, sb = (SIGN[c] for c in letters[swz >> (6 - 2 * lane) & 3])
    xa = x if sa == 1 else b.op("FNeg32", x)
    yb = y if sb == 1 else b.op("FNeg32", y)
    f = yb if sa == 0 else b.op("FAdd32", xa, yb)
    if ftz:
        f = b.op("FFlushDenorm32", f)
    return b.op("BitcastU32", f)
