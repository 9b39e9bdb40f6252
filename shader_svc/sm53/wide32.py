"""64-bit two's-complement integers as pairs of 32-bit IR values (issue 31, shader-video2), so
that the video ops' exact intermediates (lower_video.py) need no Int64: the GPU process's device
enables none, and the same lowering serves compute and graphics stages.

Contract: a ``W`` is (lo, hi), the value lo + 2^32 hi modulo 2^64; every function builds IR rows
in the given block from 32-bit operations only (``IAdd32``, ``IMul32``, shifts with amounts below
32, ``ICmp32``, ``Select32``).  Carries and borrows are explicit: a sum's carry out of the low
word is ``lo < one addend`` (unsigned); a product of two words is formed from four 16 x 16-bit
products (each below 2^32, exact).  Comparisons are exact for any pair of values (signed: the
high words signed, then the low words unsigned).  Variable shift amounts must lie in 0..32 (the
callers clamp them as the PTX ISA's vshl/vshr do)."""

from __future__ import annotations

from dataclasses import dataclass

from shader_svc.ir.block import Block, Value

M32 = 0xFFFFFFFF
M64 = 2**64 - 1
LT, EQ = 1, 2  # ICmp32's comparisons (NVIDIA's numbering, ir/ops.py)


@dataclass(frozen=True)
class W:
    """A 64-bit value as its low and high words."""

    lo: Value
    hi: Value


def const(b: Block, v: int) -> W:
    v &= M64
    return W(b.const_u32(v & M32), b.const_u32(v >> 32))


def ext(b: Block, x: Value, signed: bool) -> W:
    """A word widened by its sign or zeros."""
    return W(x, b.op("ISar32", x, b.const_u32(31)) if signed else b.const_u32(0))


def _bit(b: Block, c: Value) -> Value:
    return b.op("Select32", c, b.const_u32(1), b.const_u32(0))


def _ult(b: Block, x: Value, y: Value) -> Value:
    return b.emit("ICmp32", x, y, cmp=LT, unsigned=True)


def add(b: Block, p: W, q: W) -> W:
    lo = b.op("IAdd32", p.lo, q.lo)
    return W(lo, b.op("IAdd32", b.op("IAdd32", p.hi, q.hi), _bit(b, _ult(b, lo, p.lo))))


def neg(b: Block, p: W) -> W:
    """-p = ~p + 1: the low word negated, the high word inverted plus the carry of ~lo + 1."""
    carry = _bit(b, b.op("IEq32", p.lo, b.const_u32(0)))
    return W(b.op("INeg32", p.lo), b.op("IAdd32", b.op("INot32", p.hi), carry))


def sub(b: Block, p: W, q: W) -> W:
    return add(b, p, neg(b, q))


def eq(b: Block, p: W, q: W) -> Value:
    return b.op("LAnd", b.op("IEq32", p.lo, q.lo), b.op("IEq32", p.hi, q.hi))


def slt(b: Block, p: W, q: W) -> Value:
    """p < q as signed 64-bit integers."""
    hi_lt = b.emit("ICmp32", p.hi, q.hi, cmp=LT, unsigned=False)
    return b.op("LOr", hi_lt, b.op("LAnd", b.op("IEq32", p.hi, q.hi), _ult(b, p.lo, q.lo)))


def select(b: Block, c: Value, p: W, q: W) -> W:
    return W(b.op("Select32", c, p.lo, q.lo), b.op("Select32", c, p.hi, q.hi))


def clamp(b: Block, p: W, lo: int, hi: int) -> W:
    """p clamped to [lo, hi] (signed 64-bit bounds)."""
    clo, chi = const(b, lo), const(b, hi)
    p = select(b, slt(b, p, clo), clo, p)
    return select(b, slt(b, chi, p), chi, p)


def shift_right_const(b: Block, p: W, k: int, signed: bool) -> W:
    """p >> k for 0 < k < 32 (arithmetic when ``signed``)."""
    lo = b.op("IOr32", b.op("IShr32", p.lo, b.const_u32(k)), b.op("IShl32", p.hi, b.const_u32(32 - k)))
    return W(lo, b.op("ISar32" if signed else "IShr32", p.hi, b.const_u32(k)))


def sar(b: Block, p: W, n: Value) -> W:
    """p >> n arithmetically, n in 0..32 (32: the high word, extended)."""
    k = b.op("IAnd32", n, b.const_u32(31))
    # hi << (32 - k) as (hi << 1) << (31 - k): 0 for k = 0, every amount below 32
    up = b.op("IShl32", b.op("IShl32", p.hi, b.const_u32(1)), b.op("ISub32", b.const_u32(31), k))
    small = W(b.op("IOr32", b.op("IShr32", p.lo, k), up), b.op("ISar32", p.hi, k))
    whole = W(p.hi, b.op("ISar32", p.hi, b.const_u32(31)))
    return select(b, b.op("IEq32", n, b.const_u32(32)), whole, small)


def shl(b: Block, p: W, n: Value) -> W:
    """p << n modulo 2^64, n in 0..32 (32: the low word moves up)."""
    k = b.op("IAnd32", n, b.const_u32(31))
    down = b.op("IShr32", b.op("IShr32", p.lo, b.const_u32(1)), b.op("ISub32", b.const_u32(31), k))
    small = W(b.op("IShl32", p.lo, k), b.op("IOr32", b.op("IShl32", p.hi, k), down))
    whole = W(b.const_u32(0), p.lo)
    return select(b, b.op("IEq32", n, b.const_u32(32)), whole, small)


def sext34(b: Block, p: W) -> W:
    """Bits 0..33 of p, sign-extended from bit 33 (the PTX ISA's .s34 intermediate)."""
    return W(p.lo, b.op("ISar32", b.op("IShl32", p.hi, b.const_u32(30)), b.const_u32(30)))


def mul_wide_u32(b: Block, x: Value, y: Value) -> W:
    """The 64-bit product of two unsigned words, from 16 x 16-bit partial products."""
    m16, s16 = b.const_u32(0xFFFF), b.const_u32(16)
    x0, x1 = b.op("IAnd32", x, m16), b.op("IShr32", x, s16)
    y0, y1 = b.op("IAnd32", y, m16), b.op("IShr32", y, s16)
    p00, p01 = b.op("IMul32", x0, y0), b.op("IMul32", x0, y1)
    p10, p11 = b.op("IMul32", x1, y0), b.op("IMul32", x1, y1)
    mid = b.op("IAdd32", p01, p10)
    mid_carry = b.op("IShl32", _bit(b, _ult(b, mid, p01)), s16)  # 2^48 of the mid sum's carry
    lo = b.op("IAdd32", p00, b.op("IShl32", mid, s16))
    hi = b.op("IAdd32", b.op("IAdd32", p11, b.op("IShr32", mid, s16)), mid_carry)
    return W(lo, b.op("IAdd32", hi, _bit(b, _ult(b, lo, p00))))


def mul(b: Block, p: W, q: W) -> W:
    """p * q modulo 2^64: the low words' wide product plus the cross terms in the high word."""
    w = mul_wide_u32(b, p.lo, q.lo)
    cross = b.op("IAdd32", b.op("IMul32", p.lo, q.hi), b.op("IMul32", p.hi, q.lo))
    return W(w.lo, b.op("IAdd32", w.hi, cross))
