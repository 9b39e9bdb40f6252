"""Half precision and directed rounding as SPIR-V, both ISAs (issue 31): what the IR operations
``UnpackF16``, ``F16FromF64``, ``FFlushDenormF16``, ``FFmaDirected32``, ``FFmaDirected64`` and
``FMinMax64`` mean (``ir/ops.py`` documents them; ``ir/to_spirv.py`` calls these functions).

No Float16 capability and no device conversion is relied on: lavapipe's f16 conversions (and
GLSL's packHalf2x16) leave the rounding to the implementation, so a half is widened and rounded
here in integer arithmetic.  The method, exact for every input:

- a half widens to f32 exactly (sign, exponent + 112, fraction << 13; a denormal is its 10-bit
  fraction times 2^-24, exact in f32; infinities and NaNs keep their payload);
- an operation on halves is done in f32 and rounded once to a half by ``f16_from_f32``
  (``half_ir.py`` gives the argument: exact products, sums at 24 >= 2*11 + 2 bits, HFMA2's
  sum rounded to odd by ``fadd_odd32``; shader-halfgfx), so graphics stages, whose device has
  no Float64, take it too, SM53's f32 constant-bank operand included (added or multiplied in
  f32 alone: ``half_ir.f32_product_ir``, ``half_ir.f32_fma_ir``; shader-video, shader-video2);
- ``f16_from_f64`` (``f16_from_f32`` alike) rounds the f64's 53-bit significand at the half's last place (2^(e-10), or
  2^-24 below the normal range) with the remainder against half a place: to nearest even,
  toward zero, down or up; overflow gives infinity or the largest finite half as the mode
  says; NaN gives the canonical 0x7fff (NVIDIA's canonical NaN).

Directed FFMA/DFMA (.RM/.RP/.RZ; Vulkan 1.x has no per-instruction rounding mode): the exact
a*b+c is represented as an unevaluated sum s + e (s the nearest f64 / the nearest double-double
pair), then s moves one place toward the mode's direction where e points that way past it:
FFMA through f64 with round-to-odd (as ``Semantics._fma``), then a directed f64 -> f32 step;
DFMA from the error-free transformations of ``Semantics._dfma``'s parts.
"""

from __future__ import annotations

from shader_svc.lower.base import GLSL
from shader_svc.lower.semantics import Semantics

F16_NAN = 0x7FFF  # NVIDIA's canonical half NaN


def unpack_f16(lw: Semantics, v: int, lane: int) -> int:
    """The half in bits 16*lane.. of the u32 ``v`` as an exact f32."""
    u32, op, c = lw.u32, lw.op, lw.c
    h = op("OpBitFieldUExtract", u32, v, c(16 * lane), c(16))
    sign = op("OpShiftLeftLogical", u32, op("OpBitwiseAnd", u32, h, c(0x8000)), c(16))
    e = op("OpBitFieldUExtract", u32, h, c(10), c(5))
    m = op("OpBitwiseAnd", u32, h, c(0x3FF))
    frac = op("OpShiftLeftLogical", u32, m, c(13))
    normal = op("OpBitwiseOr", u32, op("OpShiftLeftLogical", u32, op("OpIAdd", u32, e, c(112)), c(23)), frac)
    special = op("OpBitwiseOr", u32, c(0x7F800000), frac)
    den = op("OpFMul", lw.f32, op("OpConvertUToF", lw.f32, m), lw.m.const(lw.f32, 0x33800000))  # m * 2^-24, exact
    den = op("OpBitcast", u32, den)
    r = op("OpSelect", u32, op("OpIEqual", lw.bool, e, c(31)), special, normal)
    r = op("OpSelect", u32, op("OpIEqual", lw.bool, e, c(0)), den, r)
    return op("OpBitcast", lw.f32, op("OpBitwiseOr", u32, r, sign))


def flush_denorm_f16(lw: Semantics, x: int) -> int:
    """.FTZ of a half held as f32: below 2^-14 in magnitude (a half denormal) becomes a zero of
    its sign."""
    u32, op, c = lw.u32, lw.op, lw.c
    bits = op("OpBitcast", u32, x)
    tiny = op("OpULessThan", lw.bool, op("OpBitwiseAnd", u32, bits, c(0x7FFFFFFF)), c(0x38800000))
    return op("OpBitcast", lw.f32, op("OpSelect", u32, tiny, op("OpBitwiseAnd", u32, bits, c(0x80000000)), bits))


def _round_up(lw: Semantics, rnd: int, neg: int, inexact: int, more_than_half: int, tie_odd: int) -> int:
    """Whether the magnitude rounds up: ``rnd`` 0 nearest even, 1 down, 2 up, 3 toward zero."""
    b, op = lw.bool, lw.op
    if rnd == 0:
        return op("OpLogicalOr", b, more_than_half, tie_odd)
    if rnd == 3:
        return lw.m.const_bool(False)
    away = neg if rnd == 1 else op("OpLogicalNot", b, neg)  # RM grows negatives, RP positives
    return op("OpLogicalAnd", b, inexact, away)


def f16_from_f64(lw: Semantics, x: int, rnd: int) -> int:
    """The half nearest the f64 ``x`` in the direction ``rnd`` (module docstring), as a u32 <
    0x10000."""
    return _to_f16(lw, lw.op("OpBitcast", lw.u64, x), rnd, wide=True)


def f16_from_f32(lw: Semantics, x: int, rnd: int) -> int:
    """``f16_from_f64`` for an f32, in 32-bit integers only (no Float64/Int64: graphics stages)."""
    return _to_f16(lw, lw.op("OpBitcast", lw.u32, x), rnd, wide=False)


def _to_f16(lw: Semantics, bits: int, rnd: int, wide: bool) -> int:
    """Round the float whose bits are ``bits`` (f64 as u64 or f32 as u32) to a half: its
    significand with the implicit bit, cut at the half's last place (2^(e-10), never below
    2^-24), the remainder against half a place."""
    u32, b, op, c = lw.u32, lw.bool, lw.op, lw.c
    t, k = (lw.u64, lw.c64) if wide else (u32, c)
    mbits, low = (52, 1009) if wide else (23, 113)  # fraction bits; biased exponent of 2^-14
    sign_bit, maxshift = (63, 63) if wide else (31, 31)
    inf = (0x7FF << 52) if wide else 0x7F800000
    neg = op("OpINotEqual", b, op("OpShiftRightLogical", t, bits, k(sign_bit)), k(0))
    a = op("OpBitwiseAnd", t, bits, k((1 << sign_bit) - 1))
    shifted = op("OpShiftRightLogical", t, a, k(mbits))
    big_e = op("OpUConvert", u32, shifted) if wide else shifted
    implicit = op("OpSelect", t, op("OpIEqual", b, big_e, c(0)), k(0), k(1 << mbits))
    sig = op("OpBitwiseOr", t, op("OpBitwiseAnd", t, a, k((1 << mbits) - 1)), implicit)
    # drop (mbits - 10) + max(0, low - E) bits, at most maxshift
    below = lw.op("OpExtInst", u32, lw.glsl, GLSL["SMax"], op("OpISub", u32, c(low), big_e), c(0))
    s = lw.op("OpExtInst", u32, lw.glsl, GLSL["UMin"], op("OpIAdd", u32, below, c(mbits - 10)), c(maxshift))
    st = op("OpUConvert", t, s) if wide else s
    one = k(1)
    q = op("OpShiftRightLogical", t, sig, st)
    rem = op("OpBitwiseAnd", t, sig, op("OpISub", t, op("OpShiftLeftLogical", t, one, st), one))
    half = op("OpShiftLeftLogical", t, one, op("OpISub", t, st, one))
    q32 = op("OpUConvert", u32, q) if wide else q
    odd = op("OpINotEqual", b, op("OpBitwiseAnd", u32, q32, c(1)), c(0))
    tie_odd = op("OpLogicalAnd", b, op("OpIEqual", b, rem, half), odd)
    up = _round_up(lw, rnd, neg, op("OpINotEqual", b, rem, k(0)), op("OpUGreaterThan", b, rem, half), tie_odd)
    q32 = op("OpIAdd", u32, q32, op("OpSelect", u32, up, c(1), c(0)))
    # exponent field + the significand (its implicit bit carries into the field)
    ef = lw.op("OpExtInst", u32, lw.glsl, GLSL["SMax"], op("OpISub", u32, big_e, c(low)), c(0))
    r = op("OpIAdd", u32, op("OpShiftLeftLogical", u32, ef, c(10)), q32)
    if rnd == 0:
        top = c(0x7C00)
    elif rnd == 3:
        top = c(0x7BFF)
    else:  # the mode's infinity on its side, the largest finite half on the other
        top = op("OpSelect", u32, neg, c(0x7C00 if rnd == 1 else 0x7BFF), c(0x7BFF if rnd == 1 else 0x7C00))
    r = op("OpSelect", u32, op("OpUGreaterThanEqual", b, r, c(0x7C00)), top, r)
    r = op("OpSelect", u32, op("OpIEqual", b, a, k(inf)), c(0x7C00), r)
    r = op("OpBitwiseOr", u32, r, op("OpSelect", u32, neg, c(0x8000), c(0)))
    return op("OpSelect", u32, op("OpUGreaterThan", b, a, k(inf)), c(F16_NAN), r)


def ffma_directed32(lw: Semantics, a: int, b: int, c: int, rnd: int) -> int:
    """FFMA.RM/.RP/.RZ: the f32 nearest a*b+c (``Semantics._fma_odd``: the f64 rounded to odd,
    whose directed rounding is the exact value's), moved one place where it lies on the wrong
    side: the bits of a float step its magnitude by one place (zero to the smallest denormal,
    infinity to the largest finite), so the step is +1 or -1 on the bits by the sign."""
    u32, b_, op, c_ = lw.u32, lw.bool, lw.op, lw.c
    v = lw._fma_odd(a, b, c)
    r = op("OpFConvert", lw.f32, v)
    rv = op("OpFConvert", lw.f64t, r)
    bits = op("OpBitcast", u32, r)
    neg = op("OpINotEqual", b_, op("OpShiftRightLogical", u32, bits, c_(31)), c_(0))
    if rnd == 3:  # toward zero: |r| > |v|
        move = op(
            "OpFOrdGreaterThan",
            b_,
            lw.op("OpExtInst", lw.f64t, lw.glsl, GLSL["FAbs"], rv),
            lw.op("OpExtInst", lw.f64t, lw.glsl, GLSL["FAbs"], v),
        )
        step = c_(0xFFFFFFFF)  # magnitude down
    else:
        move = op("OpFOrdGreaterThan" if rnd == 1 else "OpFOrdLessThan", b_, rv, v)
        grow = neg if rnd == 1 else op("OpLogicalNot", b_, neg)  # down grows negatives, up positives
        step = op("OpSelect", u32, grow, c_(1), c_(0xFFFFFFFF))
    bits = op("OpSelect", u32, move, op("OpIAdd", u32, bits, step), bits)
    if rnd == 1:  # an exact zero is -0 rounding down unless a*b and c are both +0 (IEEE 754)
        f64 = lw.f64t
        p = op("OpFMul", f64, op("OpFConvert", f64, a), op("OpFConvert", f64, b))  # exact
        both_pos = op(
            "OpLogicalAnd",
            b_,
            op("OpIEqual", b_, op("OpBitcast", lw.u64, p), lw.c64(0)),
            op("OpIEqual", b_, op("OpBitcast", u32, c), c_(0)),
        )
        zero = op("OpFOrdEqual", b_, v, lw.m.const(f64, 0, 0))
        bits = op("OpSelect", u32, zero, op("OpSelect", u32, both_pos, c_(0), c_(0x80000000)), bits)
    return op("OpBitcast", lw.f32, bits)


def dfma_directed64(lw: Semantics, a: int, b: int, c: int, rnd: int) -> int:
    """DFMA (and DADD/DMUL through it) with .RM/.RP/.RZ: a*b+c = th + o with o rounded to odd
    (``Semantics._dfma_parts``), th + o rounded to nearest as s with its exact error e (TwoSum),
    s moved one place where e lies on the mode's side; an exact zero is -0 rounding down unless
    a*b and c are both +0.  A tiny a*b and c are scaled up first (below); an infinite or NaN
    product takes the plain sum; a finite a*b+c that overflows gives the largest double where the
    mode rounds toward zero (``_overflow_directed64``)."""
    t, u64, b_, op, c64 = lw.f64t, lw.u64, lw.bool, lw.op, lw.c64
    zero = lw.m.const(t, 0, 0)
    # a tiny a*b and c (below 2^-900): the error-free product would underflow, so the smaller
    # factor and c are scaled by 2^110 first; s' + e' is then the exact scaled sum, s its
    # nearest double scaled back (rounded where it is a denormal) and e the sign-exact rest
    # (s' - s * 2^110 is exact: the low bits s' loses on the coarser grid) + e'
    fabs = lambda x: op("OpExtInst", t, lw.glsl, GLSL["FAbs"], x)  # noqa: E731
    lim = _f64c(lw, 2.0**-900)
    tiny = op(
        "OpLogicalAnd",
        b_,
        op("OpFOrdLessThan", b_, fabs(lw.fop("OpFMul", t, a, b)), lim),
        op("OpFOrdLessThan", b_, fabs(c), lim),
    )
    scale = op("OpSelect", t, tiny, _f64c(lw, 2.0**110), _f64c(lw, 1.0))
    a_small = op("OpFOrdLessThan", b_, fabs(a), fabs(b))
    a2 = op("OpSelect", t, a_small, lw.fop("OpFMul", t, a, scale), a)
    b2 = op("OpSelect", t, a_small, b, lw.fop("OpFMul", t, b, scale))
    ph, th, o = lw._dfma_parts(a2, b2, lw.fop("OpFMul", t, c, scale))
    s1, e1 = lw._two_sum(th, o)
    s = lw.fop("OpFMul", t, s1, op("OpSelect", t, tiny, _f64c(lw, 2.0**-110), _f64c(lw, 1.0)))
    e = lw.fop("OpFAdd", t, lw.fop("OpFSub", t, s1, lw.fop("OpFMul", t, s, scale)), e1)
    ph = op("OpSelect", t, tiny, lw.fop("OpFMul", t, a, b), ph)
    bits = op("OpBitcast", u64, s)
    neg = op("OpINotEqual", b_, op("OpShiftRightLogical", u64, bits, c64(63)), c64(0))
    if rnd == 3:  # toward zero: the error points back toward zero
        move = op(
            "OpLogicalAnd",
            b_,
            op("OpFOrdNotEqual", b_, e, zero),
            op("OpLogicalNotEqual", b_, op("OpFOrdLessThan", b_, e, zero), neg),
        )
        step = c64(-1)
    else:
        move = op("OpFOrdLessThan" if rnd == 1 else "OpFOrdGreaterThan", b_, e, zero)
        grow = neg if rnd == 1 else op("OpLogicalNot", b_, neg)
        step = op("OpSelect", u64, grow, c64(1), c64(-1))
    bits = op("OpSelect", u64, move, op("OpIAdd", u64, bits, step), bits)
    if rnd == 1:
        both_pos = op(
            "OpLogicalAnd",
            b_,
            op("OpIEqual", b_, op("OpBitcast", u64, ph), c64(0)),
            op("OpIEqual", b_, op("OpBitcast", u64, c), c64(0)),
        )
        exact_zero = op("OpLogicalAnd", b_, op("OpFOrdEqual", b_, s, zero), op("OpFOrdEqual", b_, e, zero))
        bits = op("OpSelect", u64, exact_zero, op("OpSelect", u64, both_pos, c64(0), c64(1 << 63)), bits)
    r = op("OpBitcast", t, bits)
    finite = op("OpLogicalNot", b_, op("OpLogicalOr", b_, op("OpIsInf", b_, ph), op("OpIsNan", b_, ph)))
    r = op("OpSelect", t, finite, r, lw.fop("OpFAdd", t, ph, c))
    return _overflow_directed64(lw, a, b, c, r, rnd)


def _overflow_directed64(lw: Semantics, a: int, b: int, c: int, r: int, rnd: int) -> int:
    """A finite a*b+c beyond the largest double: the nearest sum is an infinity, the directed
    modes give the largest finite double where they round toward zero (IEEE 754 7.4: .RZ both
    ways, .RM above, .RP below).  (Shader-alu: found by the corpus's dfma_*_edge kernels.)"""
    u64, b_, op, c64 = lw.u64, lw.bool, lw.op, lw.c64
    inputs_finite = op("OpLogicalAnd", b_, _finite64(lw, a), op("OpLogicalAnd", b_, _finite64(lw, b), _finite64(lw, c)))
    # (an intermediate sum that overflowed leaves a NaN: the plain sum is the signed infinity)
    plain = lw.fop("OpFAdd", lw.f64t, lw.fop("OpFMul", lw.f64t, a, b), c)
    r = op("OpSelect", lw.f64t, op("OpLogicalAnd", b_, inputs_finite, op("OpIsNan", b_, r)), plain, r)
    bits = op("OpBitcast", u64, r)
    neg = op("OpINotEqual", b_, op("OpShiftRightLogical", u64, bits, c64(63)), c64(0))
    over = op("OpLogicalAnd", b_, inputs_finite, op("OpIsInf", b_, r))
    if rnd == 1:
        over = op("OpLogicalAnd", b_, over, op("OpLogicalNot", b_, neg))
    elif rnd == 2:
        over = op("OpLogicalAnd", b_, over, neg)
    big = op("OpBitwiseOr", u64, c64(0x7FEFFFFFFFFFFFFF), op("OpBitwiseAnd", u64, bits, c64(1 << 63)))
    return op("OpBitcast", lw.f64t, op("OpSelect", u64, over, big, bits))


def _f64c(lw: Semantics, v: float) -> int:
    import struct

    return lw.m.const(lw.f64t, *struct.unpack("<II", struct.pack("<d", v)))


def _finite64(lw: Semantics, x: int) -> int:
    b_, op = lw.bool, lw.op
    return op("OpLogicalNot", b_, op("OpLogicalOr", b_, op("OpIsInf", b_, x), op("OpIsNan", b_, x)))


def fminmax64(lw: Semantics, a: int, b: int, p: int) -> int:
    """DMNMX: the minimum where ``p`` holds, else the maximum, NaN-suppressing (PTX's
    min/max.f64: a NaN operand gives the other one, two NaNs a NaN), as FMNMX's f32 form."""
    t = lw.f64t
    lo = lw.op("OpExtInst", t, lw.glsl, GLSL["NMin"], a, b)
    hi = lw.op("OpExtInst", t, lw.glsl, GLSL["NMax"], a, b)
    return lw.op("OpSelect", t, p, lo, hi)


# --- shader-halfgfx (issue 31): HFMA2 without Float64 ------------------------------------------
def fadd_odd32(lw: Semantics, a: int, b: int) -> int:
    """a+b rounded to odd in f32: s = fl(a+b) and its exact error e by Knuth's TwoSum (six
    correctly rounded f32 operations, exact when nothing overflows or falls below the normal
    range), then s moved one place toward e where e is nonzero and s's last bit is even (the
    bits of a float step its magnitude by one place, so +1 where e has s's sign, else -1).
    An infinite or NaN s is kept.  Used for HFMA2: a*b of two halves is exact in f32 (22
    significant bits, |a*b| in 2^-48..2^32), every quantity is a multiple of 2^-48, so no f32
    denormal arises and the flush a device may apply to them never acts."""
    f32, u32, bo, op, c = lw.f32, lw.u32, lw.bool, lw.op, lw.c
    s = lw.fop("OpFAdd", f32, a, b)
    bb = lw.fop("OpFSub", f32, s, a)
    e = lw.fop("OpFAdd", f32, lw.fop("OpFSub", f32, a, lw.fop("OpFSub", f32, s, bb)), lw.fop("OpFSub", f32, b, bb))
    bits = op("OpBitcast", u32, s)
    ebits = op("OpBitcast", u32, e)
    zero = lw.m.const(f32, 0)
    inexact = op("OpFOrdNotEqual", bo, e, zero)  # false for a NaN e (an infinite s)
    even = op("OpIEqual", bo, op("OpBitwiseAnd", u32, bits, c(1)), c(0))
    same = op("OpIEqual", bo, op("OpShiftRightLogical", u32, op("OpBitwiseXor", u32, bits, ebits), c(31)), c(0))
    step = op("OpSelect", u32, same, c(1), c(0xFFFFFFFF))
    move = op("OpLogicalAnd", bo, inexact, even)
    bits = op("OpSelect", u32, move, op("OpIAdd", u32, bits, step), bits)
    return op("OpBitcast", f32, bits)
