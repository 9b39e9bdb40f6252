"""Half-precision instructions as IR, the part both ISAs share (SM86 ``sm86/lower_half.py``,
SM53 ``sm53/lower_half.py`` read their operands and write the results): per result lane, the
operation HADD2 / HMUL2 / HFMA2 / HMNMX2 means, computed in f32 alone (no Float64, so graphics
stages too; shader-halfgfx) and rounded once to a half, exactly the half nearest the exact result:

- HMUL2: a product of two halves has at most 22 significant bits and lies in 2^-48..2^32, so
  the f32 product is exact, rounded once to a half;
- HADD2: fl32(a + b) rounded to a half is the half nearest a + b: rounding twice to nearest,
  first to p bits then to q bits, equals rounding once to q bits for +, -, *, / and sqrt of
  q-bit operands when p >= 2q + 2 (Figueroa, "When is double rounding innocuous?", SIGNUM
  Newsletter 30(3), 1995); f32 has p = 24 and a half q = 11, 24 >= 2*11 + 2, and the sum of
  two halves is a multiple of 2^-24, exact below 2^-14, so the half range's subnormals and
  f32's wider exponent range add no case;
- HFMA2: the exact product (as HMUL2) plus c rounded to odd in f32 (``FAddOdd32``: TwoSum's
  exact error picks the odd neighbour), then to the nearest half: rounding to odd with p bits
  followed by rounding to nearest with q bits is rounding to nearest once when p >= q + 2
  (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
  rounding to odd", IEEE Trans. Computers 57(4), 2008); 24 >= 13.
SM53's constant-bank operand is an f32, not a half (shader-video): added to a half (HADD2's B)
or to an exact product of halves (HFMA2's C) it is rounded to odd in f32 as HFMA2's sum is
(Boldo-Melquiond: TwoSum of a multiple of 2^-48 and an f32 stays exact and above the subnormal
range, a subnormal f32 operand being replaced by +/-2^-100, ``no_denormal_ir``), so those forms
run in graphics stages too; as a multiplier (HMUL2's B, HFMA2's B) y is split so that the
35-bit product is two exact f32 products, summed (with HFMA2's C: Boldo-Melquiond's sum of
three) rounded to odd (``f32_product_ir``).  HFMA2.F32 with an f32 multiplier is FFMA: Boldo and
Melquiond's emulated FMA in f32 alone (``f32_fma_ir``; shader-video2), so every SM53 half form
runs in graphics stages.

An operand's swizzle picks the half each result lane reads (``SWZ_LANES``): 0 = H1_H0 (lane i
reads half i), 2 = .H0_H0, 3 = .H1_H1 (both lanes read that half); 1 (.F32, an f32 operand) is
refused by the callers.  -x / |x| act on each half.  .FTZ flushes half denormals of the
operands and of the result; .SAT clamps the result to [0, 1] (NaN -> +0, as FSaturate32).  With
.F32 the instruction writes one f32: lane 0's operation rounded once to f32 (FADD/FMUL's IR;
HFMA2's product of halves is exact, so FAdd32 of it rounds once; .FTZ and .SAT as FADD's)."""

from __future__ import annotations

from shader_svc.ir.block import Block, Value

SWZ_LANES = {0: (0, 1), 2: (0, 0), 3: (1, 1)}
F32_OPS = {"HADD2": "FAdd32", "HMUL2": "FMul32", "HFMA2": "FFma32"}


def halves_ir(b: Block, raw: Value, swz: int, neg: bool, abs_: bool, ftz: bool) -> tuple[Value, Value]:
    """The two f32 values result lanes 0 and 1 read from the u32 ``raw``."""
    out = []
    for lane in SWZ_LANES[swz]:
        x = b.emit("UnpackF16", raw, lane=lane)
        if abs_:
            x = b.op("FAbs32", x)
        if neg:
            x = b.op("FNeg32", x)
        out.append(b.op("FFlushDenormF16", x) if ftz else x)
    return out[0], out[1]


def to_half_ir(b: Block, x: Value, ftz: bool, sat: bool, wide: bool = False) -> Value:
    """An f32 (an f64 where ``wide``) rounded to nearest even half (u32 < 0x10000), then .SAT
    and .FTZ on the half (the saturated/flushed value is a half again: rounding it is exact)."""
    h = b.emit("F16FromF64" if wide else "F16FromF32", x, rnd=0)
    if sat or ftz:
        f = b.emit("UnpackF16", h, lane=0)
        f = b.op("FSaturate32", f) if sat else f
        f = b.op("FFlushDenormF16", f) if ftz else f
        h = b.emit("F16FromF32", f, rnd=0)  # exact
    return h


def pack_ir(b: Block, lo: Value, hi: Value) -> Value:
    """Two halves (u32 < 0x10000 each) as one register."""
    return b.op("IOr32", lo, b.op("IShl32", hi, b.const_u32(16)))


def no_denormal_ir(b: Block, x: Value) -> Value:
    """An f32 operand with a subnormal value replaced by +/-2^-100 (its sign kept): where it is
    added to a half or to a product of halves (multiples of 2^-48), or multiplied into a half
    result, only its sign and its being non-zero can show, both kept, and no f32 subnormal (which
    a device may flush, graphics stages do) reaches the arithmetic."""
    u = b.op("BitcastU32", x)
    den = b.op(
        "LAnd",
        b.op("IEq32", b.op("IAnd32", u, b.const_u32(0x7F800000)), b.const_u32(0)),
        b.op("INe32", b.op("IAnd32", u, b.const_u32(0x7FFFFF)), b.const_u32(0)),
    )
    tiny = b.op("IOr32", b.op("IAnd32", u, b.const_u32(0x80000000)), b.const_u32(0x0D800000))  # 2^-100
    return b.op("BitcastF32", b.op("Select32", den, tiny, u))


def _two_sum_ir(b: Block, x: Value, y: Value) -> tuple[Value, Value]:
    """Knuth's TwoSum: s = fl(x + y) and its exact error e (x + y = s + e, six f32 operations
    the driver does as written), exact when nothing overflows or falls below the normal range."""
    s = b.op("FAdd32", x, y)
    bb = b.op("FAdd32", s, b.op("FNeg32", x))
    e1 = b.op("FAdd32", x, b.op("FNeg32", b.op("FAdd32", s, b.op("FNeg32", bb))))
    return s, b.op("FAdd32", e1, b.op("FAdd32", y, b.op("FNeg32", bb)))


def f32_product_ir(b: Block, x: Value, y: Value, z: Value | None) -> Value:
    """x * y (+ z) rounded to odd in f32, for a half x (and z) and an f32 y (SM53's constant-bank
    multiplier; shader-video), so that rounding it once more to a half is the half nearest the
    exact value (Boldo-Melquiond, p = 24 >= 11 + 2).  y is split (Veltkamp, 12 + 11 bits) so
    that x*yh and x*yl are exact; the two (or, with z, three: Boldo-Melquiond's correctly rounded
    sum of three, TwoSum(x*yl, z), TwoSum(x*yh, that sum), the low parts' sum rounded to odd) are
    summed rounded to odd.  Every quantity is then a multiple of 2^(Ey - 47) or of 2^-24 and
    below 2^80: no f32 subnormal (a device may flush them) and no overflow for 2^-79 <= |y| <
    2^64.  Outside: with |y| < 2^-79 (a subnormal y stands as +/-2^-100) |x*y| < 2^-62 only its
    sign can show and +/-2^-100 stands for it; with |y| >= 2^64 (x non-zero: beyond the half
    range), a zero, infinite or NaN operand, fl(x*y) (+ z) is already right."""
    y = no_denormal_ir(b, y)
    xb, yb = b.op("BitcastU32", x), b.op("BitcastU32", y)
    ey = b.op("UBitExtract32", yb, b.const_u32(23), b.const_u32(8))

    def finite(v: Value) -> Value:
        return b.op("INe32", b.op("IAnd32", v, b.const_u32(0x7F800000)), b.const_u32(0x7F800000))

    plain_case = b.op(
        "LOr",
        b.op("LOr", b.op("LNot", finite(xb)), b.op("IEq32", b.op("IAnd32", xb, b.const_u32(0x7FFFFFFF)), b.const_u32(0))),
        b.op("LOr", b.op("IEq32", ey, b.const_u32(0)), b.emit("ICmp32", ey, b.const_u32(127 + 64), cmp=6, unsigned=True)),
    )
    if z is not None:
        plain_case = b.op("LOr", plain_case, b.op("LNot", finite(b.op("BitcastU32", z))))
    tiny_case = b.emit("ICmp32", ey, b.const_u32(127 - 79), cmp=1, unsigned=True)
    plain = b.op("FMul32", x, y)
    plain = plain if z is None else b.op("FAdd32", plain, z)
    sign = b.op("IAnd32", b.op("IXor32", xb, yb), b.const_u32(0x80000000))
    tiny = b.op("BitcastF32", b.op("IOr32", sign, b.const_u32(0x0D800000)))  # +/-2^-100
    tiny = tiny if z is None else b.op("FAddOdd32", tiny, z)
    c = b.op("FMul32", y, b.emit("ConstF32", bits=0x45801000))  # 4097 = 2^12 + 1
    yh = b.op("FAdd32", c, b.op("FNeg32", b.op("FAdd32", c, b.op("FNeg32", y))))
    yl = b.op("FAdd32", y, b.op("FNeg32", yh))
    p1, p2 = b.op("FMul32", x, yh), b.op("FMul32", x, yl)  # exact: 11 + 12 bits each
    if z is None:
        split = b.op("FAddOdd32", p1, p2)
    else:
        uh, ul = _two_sum_ir(b, p2, z)
        th, tl = _two_sum_ir(b, p1, uh)
        split = b.op("FAddOdd32", th, b.op("FAddOdd32", tl, ul))
    bits = b.op("Select32", tiny_case, b.op("BitcastU32", tiny), b.op("BitcastU32", split))
    bits = b.op("Select32", plain_case, b.op("BitcastU32", plain), bits)
    return b.op("BitcastF32", bits)


def _split_product_ir(b: Block, x: Value, y: Value) -> tuple[Value, Value]:
    """x*y as (RN(x*y), its exact error) for a half x and an f32 y: y split (Veltkamp, 12 + 11
    bits) so that x*yh and x*yl are exact f32 products, then TwoSum of the two."""
    c = b.op("FMul32", y, b.emit("ConstF32", bits=0x45801000))  # 4097 = 2^12 + 1
    yh = b.op("FAdd32", c, b.op("FNeg32", b.op("FAdd32", c, b.op("FNeg32", y))))
    yl = b.op("FAdd32", y, b.op("FNeg32", yh))
    return _two_sum_ir(b, b.op("FMul32", x, yh), b.op("FMul32", x, yl))  # exact: 11 + 12 bits each


def _product_to_subnormal_grid_ir(b: Block, x: Value, ys: Value) -> Value:
    """x*ys rounded to nearest f32 where |x*ys| >= 2^-62, else to a multiple of 2^-85 (the f32
    subnormals' spacing, 2^-149, scaled by 2^64): the exact product (uh, ul) added to
    C = +/-2^-62 of its sign as Boldo-Melquiond's emulated FMA does (C + x*ys lies in
    [2^-62, 2^-61), where f32's places are 2^-85), then C taken off again (exact; a zero takes
    the product's sign, as RN's underflow does)."""
    uh, ul = _split_product_ir(b, x, ys)
    c = b.op(
        "BitcastF32", b.op("IOr32", b.op("IAnd32", b.op("BitcastU32", uh), b.const_u32(0x80000000)), b.const_u32(0x20800000))
    )
    th, tl = _two_sum_ir(b, c, uh)
    grid = b.op("FAdd32", b.op("FAdd32", th, b.op("FAddOdd32", tl, ul)), b.op("FNeg32", c))
    small = b.emit(
        "ICmp32", b.op("IAnd32", b.op("BitcastU32", uh), b.const_u32(0x7FFFFFFF)), b.const_u32(0x20800000), cmp=1, unsigned=True
    )
    sign = b.op("IAnd32", b.op("BitcastU32", uh), b.const_u32(0x80000000))  # a zero keeps x*ys's sign
    grid_bits = b.op("IOr32", b.op("BitcastU32", grid), sign)
    return b.op("BitcastF32", b.op("Select32", small, grid_bits, b.op("BitcastU32", uh)))


def f32_fma_ir(b: Block, x: Value, y: Value, z: Value) -> Value:
    """x*y + z rounded once to nearest f32, for a half x and z and an f32 y: HFMA2.F32 with SM53's
    constant-bank multiplier, which is FFMA (a 35-bit product; shader-video2), without Float64.
    Boldo and Melquiond's emulated FMA (IEEE Trans. Computers 57(4), 2008, "Emulation of FMA and
    correctly rounded sums: proved algorithms using rounding to odd"; p >= 5, no underflow or
    overflow): (uh, ul) the exact product with uh = RN(x*y), (th, tl) = TwoSum(z, uh),
    v = RO(tl + ul), result RN(th + v).  The exact product: y split (Veltkamp, 12 + 11 bits) so
    that x*yh and x*yl are exact f32 products, then TwoSum of the two gives uh = RN(x*y) and its
    exact error.  Ranges: with 2^-65 <= |y| < 2^64 every quantity is a multiple of 2^-112 (x, z
    multiples of 2^-24, y of 2^-88) below 2^80, so no f32 subnormal (a device may flush them) and
    no overflow arises; |y| >= 2^64 is scaled by 2^-64 with z (exact: z/2^64 >= 2^-88 stays
    normal) and the result by 2^64 (exact, or the overflow RN(x*y + z) has); with |y| < 2^-65,
    |x*y| < 2^-49 is below half a place of any non-zero half z in f32 (2^-24 and above; 2^-49
    below a power of two), so the result is z, or RN(x*y) (FMul32; with its sign against a zero
    z) where z is zero - for a subnormal y (which a device may flush) formed from its integer
    significand as x * (y 2^64) rounded onto the scaled f32 grid
    (``_product_to_subnormal_grid_ir``), then scaled by 2^-64 (exact; a subnormal result may be
    flushed by the device, as FFMA's in graphics stages).  A zero, infinite or NaN x, y or z: RN(RN(x*y) + z), already right
    (x*y is exact there; a subnormal y stands as +/-2^-100, ``no_denormal_ir``, its sign kept)."""
    xb, yb, zb = (b.op("BitcastU32", v) for v in (x, y, z))
    ey = b.op("UBitExtract32", yb, b.const_u32(23), b.const_u32(8))

    def finite(v: Value) -> Value:
        return b.op("INe32", b.op("IAnd32", v, b.const_u32(0x7F800000)), b.const_u32(0x7F800000))

    def zero(v: Value) -> Value:
        return b.op("IEq32", b.op("IAnd32", v, b.const_u32(0x7FFFFFFF)), b.const_u32(0))

    def f32c(bits: int) -> Value:
        return b.emit("ConstF32", bits=bits)

    plain_case = b.op(
        "LOr",
        b.op("LOr", b.op("LNot", finite(xb)), zero(xb)),
        b.op("LOr", b.op("LOr", b.op("LNot", finite(yb)), zero(yb)), b.op("LNot", finite(zb))),
    )
    plain = b.op("FAdd32", b.op("FMul32", x, no_denormal_ir(b, y)), z)
    tiny_case = b.emit("ICmp32", ey, b.const_u32(127 - 65), cmp=1, unsigned=True)
    # a subnormal y (m 2^-149) as m 2^-85 = y 2^64 (exact, normal), the product scaled back
    m = b.emit("I2F32", b.op("IAnd32", yb, b.const_u32(0x7FFFFF)), signed=False)
    ys_sub = b.op("FMul32", m, f32c(0x15000000))  # 2^-85
    ys_sub = b.op("BitcastF32", b.op("IOr32", b.op("BitcastU32", ys_sub), b.op("IAnd32", yb, b.const_u32(0x80000000))))
    prod_sub = b.op("FMul32", _product_to_subnormal_grid_ir(b, x, ys_sub), f32c(0x1F800000))  # 2^-64
    prod = b.op(
        "Select32", b.op("IEq32", ey, b.const_u32(0)), b.op("BitcastU32", prod_sub), b.op("BitcastU32", b.op("FMul32", x, y))
    )
    tiny = b.op("Select32", zero(zb), b.op("BitcastU32", b.op("FAdd32", b.op("BitcastF32", prod), z)), zb)
    big = b.emit("ICmp32", ey, b.const_u32(127 + 64), cmp=6, unsigned=True)
    down = b.op("BitcastF32", b.op("Select32", big, b.const_u32(0x1F800000), b.const_u32(0x3F800000)))  # 2^-64 or 1
    up = b.op("BitcastF32", b.op("Select32", big, b.const_u32(0x5F800000), b.const_u32(0x3F800000)))  # 2^64 or 1
    ys, zs = b.op("FMul32", y, down), b.op("FMul32", z, down)
    uh, ul = _split_product_ir(b, x, ys)
    th, tl = _two_sum_ir(b, zs, uh)
    r = b.op("FMul32", b.op("FAdd32", th, b.op("FAddOdd32", tl, ul)), up)
    bits = b.op("Select32", tiny_case, tiny, b.op("BitcastU32", r))
    return b.op("BitcastF32", b.op("Select32", plain_case, b.op("BitcastU32", plain), bits))


def arith2_ir(
    b: Block,
    ir: str,
    srcs: list[tuple[Value, Value]],
    f32: bool,
    ftz: bool,
    sat: bool,
    wide: bool = False,
    f32_operand: int | None = None,
) -> Value:
    """HADD2 / HMUL2 / HFMA2 (``ir``) of the operands' lane values: the register's new u32.
    ``f32_operand``: the index of an operand that is an f32 rather than a half (SM53's constant
    bank; shader-video): HADD2's B and HFMA2's addend C are done in f32 alone (round to odd, as
    HFMA2's sum), an f32 multiplier B (HMUL2, HFMA2) by ``f32_product_ir`` (``wide`` forces the
    older f64 path).  .F32 results: one f32 rounding of the exact value - a product of two halves
    is exact in f32, so HFMA2.F32 is that product plus C rounded once (FAdd32); HFMA2.F32 with an
    f32 multiplier is FFMA, single-rounded in f32 alone by ``f32_fma_ir`` (shader-video2)."""
    if f32:
        x = [s[0] for s in srcs]
        if ir == "HFMA2" and f32_operand == 1 and not wide:  # FFMA: single rounding in f32 alone
            r = f32_fma_ir(b, x[0], x[1], x[2])
        elif ir == "HFMA2" and not wide:
            r = b.op("FAdd32", b.op("FMul32", x[0], x[1]), x[2])  # the product is exact
        else:
            r = b.op(F32_OPS[ir], *x)
        r = b.op("FFlushDenorm32", r) if ftz else r
        return b.op("BitcastU32", b.op("FSaturate32", r) if sat else r)
    lanes = []
    for i in (0, 1):
        x = [s[i] for s in srcs]
        if f32_operand == 1 and ir != "HADD2" and not wide:  # an f32 multiplier: in f32 alone
            r = f32_product_ir(b, x[0], x[1], x[2] if ir == "HFMA2" else None)
            lanes.append(to_half_ir(b, r, ftz, sat))
            continue
        if f32_operand is not None and not wide:  # HADD2's B or HFMA2's C: round to odd in f32
            y = no_denormal_ir(b, x[f32_operand])
            p = x[0] if ir == "HADD2" else b.op("FMul32", x[0], x[1])  # exact
            lanes.append(to_half_ir(b, b.op("FAddOdd32", p, y), ftz, sat))
            continue
        if wide:  # 35 significant bits in a product with an f32: exact in f64, and so a sum
            if ir == "HADD2":
                r = b.op("FAdd64", b.op("CvtF64", x[0]), b.op("CvtF64", x[1]))
            else:
                r = b.op("FMul64", b.op("CvtF64", x[0]), b.op("CvtF64", x[1]))
                if ir == "HFMA2":
                    r = b.op("FAdd64", r, b.op("CvtF64", x[2]))
        elif ir == "HADD2":
            r = b.op("FAdd32", x[0], x[1])  # double rounding innocuous: 24 >= 2*11 + 2
        else:
            r = b.op("FMul32", x[0], x[1])  # exact: 22 significant bits
            if ir == "HFMA2":
                r = b.op("FAddOdd32", r, x[2])  # rounded to odd: 24 >= 11 + 2
        lanes.append(to_half_ir(b, r, ftz, sat, wide))
    return pack_ir(b, lanes[0], lanes[1])


def minmax2_ir(b: Block, x: tuple[Value, Value], y: tuple[Value, Value], p: Value) -> Value:
    """HMNMX2: FMNMX per lane (min where ``p`` holds; NaN-suppressing, two NaNs give the
    canonical half NaN), exact back to halves."""
    h = [b.emit("F16FromF32", b.op("FMinMax32", x[i], y[i], p), rnd=0) for i in (0, 1)]  # exact: a half
    return pack_ir(b, h[0], h[1])


def setp2_ir(
    b: Block, x: tuple[Value, Value], y: tuple[Value, Value], c: Value, bop: int, cmp: int, dests: tuple[int, int]
) -> None:
    """HSETP2: lane i's comparison ``cmp`` (FSETP's numbering) combined with predicate ``c`` by
    ``bop`` (0 AND, 1 OR, 2 XOR) into predicate ``dests[i]`` (7, PT, discards it)."""
    op = ("LAnd", "LOr", "LXor")[bop]
    for i, pred in enumerate(dests):
        r = b.emit("FCmp32", x[i], y[i], cmp=cmp)
        if pred != 7:
            b.set_pred(pred, b.op(op, r, c))


def directed_f64_ir(b: Block, ir: str, rnd: int, x: Value, y: Value, z: Value | None) -> Value:
    """DADD / DMUL / DFMA (``ir``) rounded in the direction ``rnd`` (1 down, 2 up, 3 toward
    zero) as one ``FFmaDirected64``: DADD is x*1 + y, DMUL x*y + 0 with the zero whose sum
    keeps the product's zero sign in that mode (+0 rounding down, -0 otherwise)."""
    if ir == "DFMA":
        return b.emit("FFmaDirected64", x, y, z, rnd=rnd)
    if ir == "DADD":
        return b.emit("FFmaDirected64", x, b.emit("ConstF64", bits=0x3FF0000000000000), y, rnd=rnd)
    return b.emit("FFmaDirected64", x, y, b.emit("ConstF64", bits=0 if rnd == 1 else 1 << 63), rnd=rnd)


def fchk_ir(b: Block, a: Value, d: Value) -> Value:
    """FCHK (both ISAs): whether the quotient a / d (u32 bits, -x/|x| applied) must take ptxas's
    slow path.  NVIDIA does not document the hardware's exact rule; the slow path is a complete
    division, so any superset of the hard cases is correct.  Chosen: true unless d is normal with
    a biased exponent in 2..252, a is zero or such a normal, and the exponents differ by at most
    125 (the quotient and the fast path's reciprocal and residual stay normal, away from
    overflow)."""
    mag_a = b.op("IAnd32", a, b.const_u32(0x7FFFFFFF))
    ea = b.op("UBitExtract32", a, b.const_u32(23), b.const_u32(8))
    ed = b.op("UBitExtract32", d, b.const_u32(23), b.const_u32(8))

    def normal(e: Value) -> Value:
        return b.op(
            "LAnd",
            b.emit("ICmp32", e, b.const_u32(2), cmp=6, unsigned=True),
            b.emit("ICmp32", e, b.const_u32(252), cmp=3, unsigned=True),
        )

    diff = b.op("ISub32", ea, ed)
    near = b.op(
        "LAnd",
        b.emit("ICmp32", diff, b.const_u32(125), cmp=3, unsigned=False),
        b.emit("ICmp32", diff, b.const_u32(-125), cmp=6, unsigned=False),
    )
    a_zero = b.op("IEq32", mag_a, b.const_u32(0))
    fast = b.op("LAnd", normal(ed), b.op("LOr", a_zero, b.op("LAnd", normal(ea), near)))
    return b.op("LNot", fast)


def directed_f32_ir(b: Block, ir: str, rnd: int, x: Value, y: Value, z: Value | None) -> Value:
    """FADD / FMUL / FFMA (``ir``) rounded in the direction ``rnd`` as one ``FFmaDirected32``
    (FADD = x*1 + y, FMUL = x*y + 0 with the zero that keeps the product's zero sign)."""
    if ir == "FFMA":
        return b.emit("FFmaDirected32", x, y, z, rnd=rnd)
    if ir == "FADD":
        return b.emit("FFmaDirected32", x, b.emit("ConstF32", bits=0x3F800000), y, rnd=rnd)
    return b.emit("FFmaDirected32", x, y, b.emit("ConstF32", bits=0 if rnd == 1 else 0x80000000), rnd=rnd)


# --- shader-alu (issue 31): HSET2, HMNMX2.NAN, F2FP.PACK_AB -----------------------------------
HALF_ONE, HALF_TRUE, HALF_NAN = 0x3C00, 0xFFFF, 0x7FFF  # 1.0, an all-ones lane, canonical NaN


def set2_ir(b: Block, x: tuple[Value, Value], y: tuple[Value, Value], c: Value, bop: int, cmp: int, bf: bool) -> Value:
    """HSET2 (PTX set.f16x2 / set.u32.f16x2): lane i is 1.0 (.BF) or 0xffff where lane i's
    comparison ``cmp`` (FSETP's numbering) combined with predicate ``c`` by ``bop`` holds, else 0."""
    op = ("LAnd", "LOr", "LXor")[bop]
    lanes = []
    for i in (0, 1):
        r = b.op(op, b.emit("FCmp32", x[i], y[i], cmp=cmp), c)
        lanes.append(b.op("Select32", r, b.const_u32(HALF_ONE if bf else HALF_TRUE), b.const_u32(0)))
    return pack_ir(b, lanes[0], lanes[1])


def minmax2_nan_ir(b: Block, x: tuple[Value, Value], y: tuple[Value, Value], p: Value) -> Value:
    """HMNMX2.NAN (PTX min.NaN / max.NaN .f16x2): HMNMX2's lane, but the canonical NaN (0x7fff)
    where either operand of the lane is a NaN."""
    lanes = []
    for i in (0, 1):
        h = b.emit("F16FromF32", b.op("FMinMax32", x[i], y[i], p), rnd=0)  # exact: a half
        lanes.append(b.op("Select32", b.emit("FCmp32", x[i], y[i], cmp=8), b.const_u32(HALF_NAN), h))
    return pack_ir(b, lanes[0], lanes[1])


def pack_ab_ir(b: Block, a: Value, c: Value) -> Value:
    """F2FP.PACK_AB (PTX cvt.rn.f16x2.f32 d, a, b): a rounded to nearest-even half in the high
    lane, b in the low one."""
    return pack_ir(b, b.emit("F16FromF32", c, rnd=0), b.emit("F16FromF32", a, rnd=0))
