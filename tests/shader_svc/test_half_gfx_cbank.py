"""SM53's constant-bank half forms and HFMA2.F32 in fragment programs (issue 31, shader-video):
the c[][] operand is one f32 in both lanes (lower/half_ir.py); HADD2's B and HFMA2's addend C
are now computed in f32 alone - the sum rounded to odd (TwoSum), then once to a half - and
HFMA2.F32 as the exact product of halves plus C rounded once, so the graphics lowering
translates them without Float64 (it refused them by name before).  Each result register's bytes
are drawn as a pixel's colour on lavapipe (test_half_gfx.py's fragment harness) and compared
with the half (or f32) nearest the exact value (``fractions.Fraction``), for constants chosen to
reach an f32 with all 24 bits, sums a hair off a half's midpoint, an f32 subnormal (whose sign
alone can show), huge values, infinity and NaN; the f32-multiplier forms (HMUL2's and HFMA2's B)
through ``half_ir.f32_product_ir`` (a split product summed rounded to odd).  An .F32 result that is an f32 subnormal may
come back flushed to zero (the device's, as for FADD in graphics stages); the half results never
meet an f32 subnormal (``half_ir.no_denormal_ir``).  The f32-multiplier forms (HMUL2's and HFMA2's
B) too; only HFMA2.F32 with an f32 multiplier (FFMA) still needs Float64 and is refused by name."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np

import test_half_gfx as hg
from test_half import _round

M32 = 0xFFFFFFFF
# result register: (text, kind): 'add' x + k, 'fma' x*y + k, 'fma_neg' x*y - k, 'f32' x0*y0 + z0, 'f32k' x0*y0 + k
RESULTS = {
    "R10": ("HADD2 R10, R4, c[0x0][0x40]", "add", False, False),
    "R11": ("HFMA2 R11, R4, R5, c[0x0][0x40]", "fma", False, False),
    "R12": ("HADD2.FTZ R12, R4, -c[0x0][0x40]", "add_neg", True, False),
    "R13": ("HFMA2.SAT R13, R4, R5, -c[0x0][0x40]", "fma_neg", False, True),
    "R14": ("HFMA2.F32 R14, R4, R5, R6", "f32", False, False),
    "R15": ("HFMA2.F32 R15, R4, R5, c[0x0][0x40]", "f32k", False, False),
    "R16": ("HMUL2 R16, R4, c[0x0][0x40]", "mul", False, False),
    "R17": ("HFMA2 R17, R4, -c[0x0][0x40], R5", "fmab_neg", False, False),
    "R18": ("HFMA2.FTZ.SAT R18, R4, c[0x0][0x40], R5", "fmab", True, True),
    "R19": ("HFMA2.F32 R19, R4, c[0x0][0x40], R5", "f32b", False, False),  # FFMA (shader-video2)
}
# the f32 constants (bits): 0.1 (24 bits), -1/3, 2^-11 (1 + 2^-23) (added to a half in [1, 2): a
# hair above the midpoint of two halves, which the f32 sum rounds onto), 2^-25 (1 + 2^-23) (just
# above half of the smallest half subnormal), a negative f32 subnormal, 3e38, -inf, a NaN
CONSTS = (0x3DCCCCCD, 0xBEAAAAAB, 0x3A000001, 0x33000001, 0x80000123, 0x7F61B1E6, 0xFF800000, 0x7FC00000)
SETS = {k: hg.SETS[k] for k in ("random", "subnormal", "fma_ties", "inf_nan")}


def _h(v: int) -> float:
    return float(np.uint16(v).view(np.float16))


def _f(v: int) -> float:
    return float(np.uint32(v).view(np.float32))


def _flush32(v: int) -> int:
    return v & 0x80000000 if v & 0x7F800000 == 0 else v


def _lane(kind: str, ftz: bool, sat: bool, a: int, b: int, k: int) -> int:
    """A half lane's result for halves a, b and the f32 constant bits k."""
    if ftz:
        a, b, k = hg._flush(a), hg._flush(b), _flush32(k)
    x, y, c = _h(a), _h(b), _f(k)
    if kind.endswith("_neg"):
        c = -c
    kind = kind.removesuffix("_neg")  # (c negated above)
    with np.errstate(all="ignore"):  # mul: x * c; fmab: the constant multiplies, b is the addend
        f64 = {"mul": lambda: x * c, "fmab": lambda: x * c + y}.get(kind, lambda: x + c if kind == "add" else x * y + c)()
    if not math.isfinite(f64):
        exact = f64
    elif kind == "mul":
        exact = Fraction(x) * Fraction(c)
    elif kind == "fmab":
        exact = Fraction(x) * Fraction(c) + Fraction(y)
    elif kind == "add":
        exact = Fraction(x) + Fraction(c)
    else:
        exact = Fraction(x) * Fraction(y) + Fraction(c)
    r = _round(exact, f64)
    if ftz:
        r = hg._flush(r)
    if sat:
        v = _h(r)
        r = 0 if math.isnan(v) or v <= 0 else 0x3C00 if v >= 1 else r
    return r


def _f32_nearest(exact, f64: float) -> int:
    """The f32 nearest the exact value (ties to even), its bits; NaN as 0x7fc00000."""
    if not isinstance(exact, Fraction):
        return 0x7FC00000 if math.isnan(exact) else int(np.float32(exact).view(np.uint32))
    if exact == 0:
        return 0x80000000 if math.copysign(1.0, f64) < 0 else 0
    f = np.float32(float(exact))  # within one place: check the neighbours
    cands = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1))
    return int(best.view(np.uint32))


def _ref(res: str, s: tuple, p: int, k: int) -> int:
    _, kind, ftz, sat = RESULTS[res]
    ops = hg._operands(s, p)
    if kind.startswith("f32"):
        x, y = _h(ops[0] & 0xFFFF), _h(ops[1] & 0xFFFF)
        z = _h(ops[2] & 0xFFFF) if kind == "f32" else _f(k)
        if kind == "f32b":  # the constant multiplies, R5's low half is the addend
            y, z = _f(k), y
        with np.errstate(all="ignore"):
            f64 = x * y + z
        exact = Fraction(x) * Fraction(y) + Fraction(z) if math.isfinite(f64) else f64
        return _f32_rn(exact, f64)
    out = 0
    for lane in range(2):
        a, b = ((v >> 16 * lane) & 0xFFFF for v in ops[:2])
        out |= _lane(kind, ftz, sat, a, b, k) << 16 * lane
    return out


def _same(res: str, got: int, want: int) -> bool:
    if RESULTS[res][1].startswith("f32"):
        nan = lambda v: v & 0x7F800000 == 0x7F800000 and v & 0x7FFFFF  # noqa: E731
        # an f32 subnormal result (or operand) is the device's to flush, as for FADD/FFMA in
        # graphics stages (README "Known gaps": FP denormal handling is the driver's)
        sub = want & 0x7F800000 == 0 and want & 0x7FFFFF
        return got == want or bool(nan(got) and nan(want)) or bool(sub and got & 0x7FFFFFFF == 0)
    return hg._same(got, want)


def _uniforms(s: tuple, k: int) -> bytes:
    u = bytearray(hg._uniforms(s))
    u[0x40:0x44] = struct.pack("<I", k)
    return bytes(u)


def _fragment(res: str) -> bytes:
    from quad_draw import program53
    from shader_svc import translate as tr

    body = RESULTS[res][0] + "\n"
    return tr.translate(tr.make_program(53, 3, program53(hg.FRAG53.format(body=body, res=res), hg.HDR)))


def test_constants_reach_the_cases():
    """Not vacuous: across the constants and sets the lanes hit sums that rounding the f32 sum to
    nearest first would get wrong, a constant whose 24 bits matter, and NaN/infinity results."""
    from quad_draw import H, W

    wrong_naive = 0
    for k in CONSTS[:4]:
        for p in range(W * H):
            for lane in range(2):
                a = (hg._operands(SETS["fma_ties"], p)[0] >> 16 * lane) & 0xFFFF
                naive = int(np.float16(np.float32(_h(a)) + np.float32(_f(k))).view(np.uint16))
                wrong_naive += not hg._same(naive, _lane("add", False, False, a, 0, k))
    assert wrong_naive > 0


def test_constant_bank_half_forms_in_a_fragment_program_are_exact(gpu, tmp_path):
    from quad_draw import H, W, draw_quad
    from spirv_checks import spirv_val

    bad = []
    for res in RESULTS:
        fs = _fragment(res)
        spirv_val(fs, tmp_path, "fs")
        words = np.frombuffer(fs, np.uint32)
        assert not any(words[i] == (2 << 16 | 17) and words[i + 1] == 10 for i in range(5, len(words) - 1)), (
            "OpCapability Float64 in a graphics module"
        )
        for name, s in SETS.items():
            for k in CONSTS:
                img = draw_quad(gpu, fs, uniforms={0: _uniforms(s, k)})
                got = (img[..., 0] | img[..., 1] << 8 | img[..., 2] << 16 | img[..., 3] << 24).astype(np.int64)
                for y in range(H):
                    for x in range(W):
                        want = _ref(res, s, x + 32 * y, k)
                        if not _same(res, int(got[y, x]), want):
                            ops = [hex(v) for v in hg._operands(s, x + 32 * y)]
                            bad.append((res, name, hex(k), ops, hex(int(got[y, x])), hex(want)))
    assert not bad, f"{len(bad)} pixels differ, first: {bad[:4]}"


# --- the f32-multiplier argument on the host: half_ir.f32_product_ir's steps in numpy's f32
# (round to nearest even, no flush), against the half nearest the exact value -------------------
F32 = np.float32


def _two_sum(a, b):
    s = F32(a + b)
    bb = F32(s - a)
    return s, F32(F32(a - F32(s - bb)) + F32(b - bb))


def _odd(a, b):
    s, e = _two_sum(a, b)
    if not np.isfinite(s) or e == 0 or np.isnan(e):
        return s
    bits = int(np.array(s, F32).view(np.uint32))
    if bits & 1:
        return s
    same = ((bits ^ int(np.array(e, F32).view(np.uint32))) >> 31) == 0
    return np.array((bits + (1 if same else -1)) & M32, np.uint32).view(F32)[()]


def _product(x, y, z):
    yb = int(np.array(y, F32).view(np.uint32))
    if yb & 0x7F800000 == 0 and yb & 0x7FFFFF:  # a subnormal stands as +/-2^-100
        yb = yb & 0x80000000 | 0x0D800000
        y = np.array(yb, np.uint32).view(F32)[()]
    ey = (yb >> 23) & 0xFF
    if not np.isfinite(x) or x == 0 or ey == 0 or ey >= 127 + 64 or (z is not None and not np.isfinite(z)):
        r = F32(x * y)
        return r if z is None else F32(r + z)
    if ey < 127 - 79:
        p = F32(-(2.0**-100) if (x < 0) != (y < 0) else 2.0**-100)
        return p if z is None else _odd(p, z)
    c = F32(y * F32(4097))
    yh = F32(c - F32(c - y))
    p1, p2 = F32(x * yh), F32(x * F32(y - yh))
    if z is None:
        return _odd(p1, p2)
    uh, ul = _two_sum(p2, z)
    th, tl = _two_sum(p1, uh)
    return _odd(th, _odd(tl, ul))


def test_f32_multiplier_steps_round_to_the_exact_half_on_the_host():
    """12,000 products x*y (+ z) of a half x, z and an f32 y (random words, y near 1, mid-range,
    products a hair off a half's midpoint, and z = -x*y rounded to a half: cancellation) - the f32
    steps then one rounding to a half give the half nearest the exact value.  Rounding the sums to
    nearest instead of to odd fails it."""
    rng = np.random.default_rng(31)
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    halves = halves[~np.isnan(halves)].astype(F32)
    bad, n = [], 0
    with np.errstate(all="ignore"):
        for t in range(12000):
            x = halves[rng.integers(len(halves))]
            z = halves[rng.integers(len(halves))] if t % 2 else None
            yb = [
                int(rng.integers(0, 2**32)),
                0x3F800000 + int(rng.integers(-4096, 4096)),
                int(rng.integers(0x20000000, 0x5F000000)) | int(rng.integers(0, 2)) << 31,
            ][t % 3]
            if t % 5 == 4:  # x*y a hair off a half's midpoint, where rounding to nearest f32 lands on it
                x = F32(halves[rng.integers(len(halves))] or 1)
                h = float(halves[rng.integers(len(halves))])
                if not math.isfinite(float(x)) or not math.isfinite(h) or abs(h) < 2**-14 or abs(h) >= 32768:
                    continue
                mid = h + math.copysign(2.0 ** (math.floor(math.log2(abs(h))) - 11), h)
                yb = (int(np.array(F32(mid / float(x)), F32).view(np.uint32)) + int(rng.integers(-2, 3))) & M32
                z = None if t % 2 else F32(0)
            y = np.array(yb, np.uint32).view(F32)[()]
            if np.isnan(y):
                continue
            if z is not None and t % 7 == 3 and np.isfinite(np.float16(-float(x) * float(y))):
                z = F32(np.float16(-float(x) * float(y)))
            got = int(np.float16(_product(x, y, z)).view(np.uint16))
            f64 = float(x) * float(y) + (0.0 if z is None else float(z))
            exact = (
                Fraction(float(x)) * Fraction(float(y)) + (0 if z is None else Fraction(float(z))) if math.isfinite(f64) else f64
            )
            want = _round(exact, f64 if z is not None else float(x) * float(y))
            n += 1
            if not hg._same(got, want):
                bad.append((float(x), hex(yb), z, hex(got), hex(want)))
    assert n > 10000 and not bad, bad[:5]


# --- shader-video2: HFMA2.F32 with an f32 multiplier (FFMA) in f32 alone, half_ir.f32_fma_ir's
# steps in numpy's f32 (round to nearest even, no flush) against the f32 nearest the exact value
def _split32(x, y):
    c = F32(y * F32(4097))
    yh = F32(c - F32(c - y))
    return _two_sum(F32(x * yh), F32(x * F32(y - yh)))


def _fma32(x, y, z):
    yb = int(np.array(y, F32).view(np.uint32))
    ey = (yb >> 23) & 0xFF
    if not np.isfinite(x) or x == 0 or not np.isfinite(y) or y == 0 or not np.isfinite(z):
        if ey == 0:  # a subnormal y stands as +/-2^-100
            y = F32(math.copysign(2.0**-100, y))
        return F32(F32(x * y) + z)
    if ey < 127 - 65:
        if z != 0:
            return z
        if ey == 0:  # x * (y 2^64) from y's integer significand, on the scaled grid, scaled back
            ys = F32(F32(yb & 0x7FFFFF) * F32(2.0**-85)) * F32(-1 if yb >> 31 else 1)
            uh, ul = _split32(x, ys)
            if abs(uh) < F32(2.0**-62):
                c = F32(math.copysign(2.0**-62, uh))
                th, tl = _two_sum(c, uh)
                uh = F32(math.copysign(F32(F32(th + _odd(tl, ul)) - c), uh))
            return F32(F32(uh * F32(2.0**-64)) + z)
        return F32(F32(x * y) + z)
    down, up = (F32(2.0**-64), F32(2.0**64)) if ey >= 127 + 64 else (F32(1), F32(1))
    ys, zs = F32(y * down), F32(z * down)
    uh, ul = _split32(x, ys)
    th, tl = _two_sum(zs, uh)
    return F32(F32(th + _odd(tl, ul)) * up)


def _f32_rn(exact, f64: float) -> int:
    """``_f32_nearest``, with an exact value at or beyond 2^128 - 2^103 (half a place above the
    largest f32, a tie rounding to the even infinity) overflowing to an infinity."""
    if isinstance(exact, Fraction) and abs(exact) >= 2**128 - 2**103:
        return 0x7F800000 | (0x80000000 if exact < 0 else 0)
    return _f32_nearest(exact, f64)


def test_f32_multiplier_fma_to_f32_rounds_once_on_the_host():
    """20,000 x*y + z of halves x, z and an f32 y (random words, y near 1, mid-range, huge, tiny
    and subnormal y, z = -x*y rounded to a half: cancellation, and z a few places off -x*y's f32): the f32
    steps give the f32 nearest the exact value (``_f32_nearest``).  Rounding x*y to f32 first and
    adding z (a double rounding) fails some of them, so the cases are not vacuous."""
    rng = np.random.default_rng(3153)
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    halves = halves[~np.isnan(halves)].astype(F32)
    bad, naive_wrong, n = [], 0, 0
    with np.errstate(all="ignore"):
        for t in range(20000):
            x, z = halves[rng.integers(len(halves))], halves[rng.integers(len(halves))]
            yb = [
                int(rng.integers(0, 2**32)),
                0x3F800000 + int(rng.integers(-4096, 4096)),
                int(rng.integers(0x20000000, 0x5F000000)) | int(rng.integers(0, 2)) << 31,
                int(rng.integers(0x5F000000, 0x7F800000)),
                int(rng.integers(0x00800000, 0x1F800000)) | 0x80000000,
                int(rng.integers(1, 0x800000)) | int(rng.integers(0, 2)) << 31,  # subnormal
            ][t % 6]
            y = np.array(yb, np.uint32).view(F32)[()]
            if np.isnan(y):
                continue
            p = float(x) * float(y)
            if t % 3 == 1 and math.isfinite(p) and abs(p) < 65504:
                z = F32(np.float16(-p))  # cancellation
            elif t % 3 == 2 and math.isfinite(p) and abs(p) < 65504 and p != 0:
                z = F32(np.float16(p * float(rng.integers(-8, 9)) / 8))  # a sum near p's f32 places
            f64 = p + float(z)
            exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) if math.isfinite(f64) else f64
            want = _f32_rn(exact, f64)
            got = int(np.array(_fma32(x, y, z), F32).view(np.uint32))
            naive = int(np.array(F32(F32(x * y) + z), F32).view(np.uint32))
            n += 1
            same = lambda g: g == want or (g & 0x7FFFFFFF > 0x7F800000 and want & 0x7FFFFFFF > 0x7F800000)  # noqa: E731
            naive_wrong += not same(naive)
            if not same(got):
                bad.append((float(x), hex(yb), float(z), hex(got), hex(want)))
    assert n > 15000 and naive_wrong > 0 and not bad, (naive_wrong, bad[:5])
