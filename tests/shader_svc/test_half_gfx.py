"""Half arithmetic in fragment programs, both ISAs (issue 31, shader-halfgfx): HADD2, HMUL2 and
HFMA2 (plain, .FTZ, .SAT) are computed in f32 alone (``lower/half_ir.py``: exact products, the
double-rounding bound p >= 2q + 2 for sums, round-to-odd for HFMA2), so the graphics lowering
translates them where it used to refuse them ("FP64 arithmetic is not translated in graphics
stages": the GPU process's device has no Float64).  Each result register's bytes are drawn as a
pixel's colour on lavapipe and compared with the half nearest the exact value
(``fractions.Fraction``, test_half.py's reference) for operand sets chosen to reach ties,
subnormals, overflow, infinities and NaN; the sets' coverage of those cases is asserted too."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from test_half import _round

M32 = 0xFFFFFFFF
K = (0x9E3779B1, 0x85EBCA6B, 0xC2B2AE35)  # per-operand multipliers of the pixel index
# per uniform set: seed, then (mask, or) for each of a, b, c: operand = (p * K + seed) & mask | or
SETS = {
    "random": (0x12345678, (M32, 0), (M32, 0), (M32, 0)),
    "add_ties": (0x0BADF00D, (0x83FF83FF, 0x50005000), (0x9C039C03, 0x20002000), (M32, 0)),
    "subnormal": (0x2468ACE1, (0x83FF83FF, 0), (0x87FF87FF, 0), (0x83FF83FF, 0)),
    "overflow": (0x13579BDF, (0x87FF87FF, 0x78007800), (0x87FF87FF, 0x78007800), (0x83FF83FF, 0x78007800)),
    "inf_nan": (0x7F4A7C15, (0x80018001, 0x7C007C00), (M32, 0), (0x80008000, 0x7C007C00)),
    "fma_ties": (0x3C6EF372, (0x80FF80FF, 0x3C003C00), (0x80FF80FF, 0x3C003C00), (0x83FF83FF, 0x3C003C00)),
    "fma_tiny": (0x6A09E667, (0x83FF83FF, 0x04000400), (0x83FF83FF, 0x04000400), (0x800F800F, 0)),
    # (1 + k 2^-10)(~1 - 2^-8) 2^-11 + (1 + j 2^-10): sums a hair off a half's midpoint, where
    # rounding the f32 sum to nearest and then to a half goes the wrong way (round-to-odd's case)
    "fma_double_rounding": (0x5BE0CD19, (0x80038003, 0x3C043C04), (0x800F800F, 0x0FF00FF0), (0x800F800F, 0x3C003C00)),
}
# result register: (instruction, .FTZ, .SAT)
RESULTS = {
    "R10": ("HADD2", False, False),
    "R11": ("HMUL2", False, False),
    "R12": ("HFMA2", False, False),
    "R13": ("HADD2", True, False),
    "R14": ("HFMA2", False, True),
}
BODY = """HADD2 R10, R4, R5
HMUL2 R11, R4, R5
HFMA2 R12, R4, R5, R6
HADD2.FTZ R13, R4, R5
HFMA2.SAT R14, R4, R5, R6
"""
# SM53: pixel index p = x + 32 y, operands hashed from it (c[0x0]: seed, then mask/or pairs at
# 0x4.., 1/255 at 0x1c), the result's four bytes as the colour (byte / 255 per channel: exact)
FRAG53 = """IPA.PASS R0, a[0x70], RZ
IPA.PASS R1, a[0x74], RZ
F2I.S32.F32.FLOOR R0, R0
F2I.S32.F32.FLOOR R1, R1
ISCADD R2, R1, R0, 0x5
MOV R4, c[0x0][0x0]
IMAD32I R4, R2, -0x61c8864f, R4
LOP.AND R4, R4, c[0x0][0x4]
LOP.OR R4, R4, c[0x0][0x8]
MOV R5, c[0x0][0x0]
IMAD32I R5, R2, -0x7a143595, R5
LOP.AND R5, R5, c[0x0][0xc]
LOP.OR R5, R5, c[0x0][0x10]
MOV R6, c[0x0][0x0]
IMAD32I R6, R2, -0x3d4d51cb, R6
LOP.AND R6, R6, c[0x0][0x14]
LOP.OR R6, R6, c[0x0][0x18]
{body}MOV R20, {res}
BFE.U32 R0, R20, 0x800
BFE.U32 R1, R20, 0x808
BFE.U32 R2, R20, 0x810
BFE.U32 R3, R20, 0x818
I2F.F32.U32 R0, R0
I2F.F32.U32 R1, R1
I2F.F32.U32 R2, R2
I2F.F32.U32 R3, R3
FMUL R0, R0, c[0x0][0x1c]
FMUL R1, R1, c[0x0][0x1c]
FMUL R2, R2, c[0x0][0x1c]
FMUL R3, R3, c[0x0][0x1c]
EXIT
"""
# SM86: the same, the multipliers at c[0x0][0x20..0x28]
FRAG86 = """IPA.PASS R0, a[0x70]
IPA.PASS R1, a[0x74]
F2I.TRUNC.NTZ R0, R0
F2I.TRUNC.NTZ R1, R1
IMAD R2, R1, 0x20, R0
MOV R3, c[0x0][0x0]
IMAD R4, R2, c[0x0][0x20], R3
LOP3.LUT R4, R4, c[0x0][0x4], RZ, 0xc0, !PT
LOP3.LUT R4, R4, c[0x0][0x8], RZ, 0xfc, !PT
IMAD R5, R2, c[0x0][0x24], R3
LOP3.LUT R5, R5, c[0x0][0xc], RZ, 0xc0, !PT
LOP3.LUT R5, R5, c[0x0][0x10], RZ, 0xfc, !PT
IMAD R6, R2, c[0x0][0x28], R3
LOP3.LUT R6, R6, c[0x0][0x14], RZ, 0xc0, !PT
LOP3.LUT R6, R6, c[0x0][0x18], RZ, 0xfc, !PT
{body}MOV R20, {res}
PRMT R0, R20, 0x4440, RZ
PRMT R1, R20, 0x4441, RZ
PRMT R2, R20, 0x4442, RZ
PRMT R3, R20, 0x4443, RZ
I2FP.F32.U32 R0, R0
I2FP.F32.U32 R1, R1
I2FP.F32.U32 R2, R2
I2FP.F32.U32 R3, R3
FMUL R0, R0, c[0x0][0x1c]
FMUL R1, R1, c[0x0][0x1c]
FMUL R2, R2, c[0x0][0x1c]
FMUL R3, R3, c[0x0][0x1c]
EXIT
"""
HDR = dict(inputs={0x70: "perspective", 0x74: "perspective"}, targets=(0xF,))


def _operands(s: tuple, p: int) -> list[int]:
    seed = s[0]
    return [((p * k + seed) & M32) & m | o for k, (m, o) in zip(K, s[1:])]


def _flush(h: int) -> int:
    return h & 0x8000 if h & 0x7C00 == 0 else h


def _is_nan(h: int) -> bool:
    return h & 0x7C00 == 0x7C00 and h & 0x3FF != 0


def _lane(ir: str, ftz: bool, sat: bool, a: int, b: int, c: int) -> tuple[int, str]:
    """The half lane's result and its case (for the coverage check): 'nan', 'inf', 'tie',
    'subnormal' or ''."""
    if ftz:
        a, b, c = _flush(a), _flush(b), _flush(c)
    fx, fy, fz = (float(np.uint16(h).view(np.float16)) for h in (a, b, c))
    with np.errstate(all="ignore"):  # an infinite or NaN operand is the only way to a non-finite f64
        f64 = fx + fy if ir == "HADD2" else fx * fy if ir == "HMUL2" else fx * fy + fz
    if math.isfinite(f64):
        x, y = Fraction(fx), Fraction(fy)
        exact = x + y if ir == "HADD2" else x * y if ir == "HMUL2" else x * y + Fraction(fz)
    else:
        exact = f64
    r = _round(exact, f64)
    case = ""
    if isinstance(exact, Fraction) and exact != 0:
        m = abs(exact)
        e = max(math.floor(math.log2(m)), -14)
        q = m / Fraction(2) ** (e - 10)
        case = "tie" if q.denominator == 2 else "subnormal" if r & 0x7C00 == 0 and r & 0x3FF else ""
    if ftz:
        r = _flush(r)
    if sat:
        v = float(np.uint16(r).view(np.float16))
        r = 0 if math.isnan(v) or v <= 0 else 0x3C00 if v >= 1 else r
    if _is_nan(r):
        case = "nan"
    elif r & 0x7FFF == 0x7C00:
        case = "inf"
    return r, case


def _ref(res: str, s: tuple, p: int) -> tuple[int, set[str]]:
    ir, ftz, sat = RESULTS[res]
    ops = _operands(s, p)
    out, cases = 0, set()
    for k in range(2):
        h, case = _lane(ir, ftz, sat, *((v >> 16 * k) & 0xFFFF for v in ops))
        out |= h << 16 * k
        cases.add(case)
    return out, cases


def _same(got: int, want: int) -> bool:
    """Equal bits per lane, any NaN for a NaN (NVIDIA's canonical one is 0x7fff)."""
    return all(_is_nan(g) and _is_nan(w) or g == w for g, w in (((got >> s) & 0xFFFF, (want >> s) & 0xFFFF) for s in (0, 16)))


def _uniforms(s: tuple) -> bytes:
    words = [s[0]] + [w for mo in s[1:] for w in mo]
    c0 = struct.pack("<7If3I", *words, np.float32(1 / 255), *K)
    return c0 + bytes(256 - len(c0))


def _fragment(isa: int, res: str) -> bytes:
    from quad_draw import program53, spirv
    from shader_svc import translate as tr

    if isa == 53:
        return tr.translate(tr.make_program(53, 3, program53(FRAG53.format(body=BODY, res=res), HDR)))
    return spirv("fragment", FRAG86.format(body=BODY, res=res), HDR)


def test_operand_sets_reach_the_edge_cases():
    """The sets below are not vacuous: across them the lanes hit ties, subnormal results,
    overflow to infinity and NaN (checked on the reference, independent of any device)."""
    from quad_draw import H, W

    seen: dict[str, set[str]] = {r: set() for r in RESULTS}
    for s in SETS.values():
        for p in range(W * H):
            for res in RESULTS:
                seen[res] |= _ref(res, s, p)[1]
    for res in ("R10", "R11", "R12"):
        assert {"tie", "subnormal", "inf", "nan"} <= seen[res], (res, seen[res])
    # and HFMA2 lanes where f32's a*b + c rounded to nearest, then to a half, is wrong
    naive_wrong = 0
    for p in range(W * H):
        for k in range(2):
            a, b, c = ((v >> 16 * k) & 0xFFFF for v in _operands(SETS["fma_double_rounding"], p))
            fa, fb, fc = (np.uint16(h).view(np.float16).astype(np.float32) for h in (a, b, c))
            naive = int(np.float16(np.float32(fa * fb) + fc).view(np.uint16))
            naive_wrong += not _same(naive, _lane("HFMA2", False, False, a, b, c)[0])
    assert naive_wrong > 0


@pytest.mark.parametrize("isa", [53, 86])
def test_half_arithmetic_in_a_fragment_program_is_exact(gpu, tmp_path, isa):
    """HADD2/HMUL2/HFMA2 (and .FTZ, .SAT) in a fragment program: translated (the old lowering
    refused them, needing Float64), valid SPIR-V without the Float64 capability, and every
    pixel's result the exactly rounded half of the reference for every operand set."""
    from quad_draw import H, W, draw_quad
    from spirv_checks import spirv_val

    bad = []
    for res in RESULTS:
        fs = _fragment(isa, res)
        spirv_val(fs, tmp_path, "fs")
        words = np.frombuffer(fs, np.uint32)
        assert not any(words[i] == (2 << 16 | 17) and words[i + 1] == 10 for i in range(5, len(words) - 1)), (
            "OpCapability Float64 in a graphics module"
        )
        for name, s in SETS.items():
            img = draw_quad(gpu, fs, uniforms={0: _uniforms(s)})
            got = (img[..., 0] | img[..., 1] << 8 | img[..., 2] << 16 | img[..., 3] << 24).astype(np.int64)
            for y in range(H):
                for x in range(W):
                    want = _ref(res, s, x + 32 * y)[0]
                    if not _same(int(got[y, x]), want):
                        ops = [hex(v) for v in _operands(s, x + 32 * y)]
                        bad.append((isa, res, name, ops, hex(int(got[y, x])), hex(want)))
    assert not bad, f"{len(bad)} pixels differ, first: {bad[:4]}"


def test_sm53_constant_bank_f32_multiplier_fma_translates_in_graphics():
    """SM53's constant-bank operand is an f32 (not a half): HFMA2.F32 with it as the multiplier is
    FFMA, once refused in graphics (its exact path needed Float64); now single-rounded in f32
    alone (``half_ir.f32_fma_ir``, shader-video2): the module declares neither Float64 nor Int64
    (its results: test_half_gfx_cbank.py, R19)."""
    from quad_draw import program53
    from shader_svc import translate as tr

    text = "IPA.PASS R4, a[0x70], RZ\nHFMA2.F32 R0, R4, -c[0x0][0x8], R4\nEXIT\n"
    words = np.frombuffer(tr.translate(tr.make_program(53, 3, program53(text, HDR))), np.uint32)
    caps = {int(words[i + 1]) for i in range(5, len(words) - 1) if words[i] == (2 << 16 | 17)}
    assert caps and not caps & {10, 11}, caps  # OpCapability Float64 (10), Int64 (11)


# --- the two rounding arguments, checked on the host (no device: numpy's f32/f64 -> f16
# conversions round to nearest even, the f64 sum of two halves is exact) -----------------------
def _sum_pairs_differ(stride: int) -> int:
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    fin = h[np.isfinite(h)]
    b32, b64 = fin[::stride].astype(np.float32), fin[::stride].astype(np.float64)
    bad = 0
    with np.errstate(all="ignore"):
        for a in fin:
            r32 = (np.float32(a) + b32).astype(np.float16).view(np.uint16)
            r64 = (np.float64(a) + b64).astype(np.float16).view(np.uint16)
            bad += int(np.count_nonzero(r32 != r64))
    return bad


def test_f32_sum_of_halves_rounds_to_the_exact_sums_half():
    """HADD2's argument (24 >= 2*11 + 2): the f32 sum rounded to a half is the exact sum's half,
    for every finite half a against every 61st finite half b (the heavy test takes all)."""
    assert _sum_pairs_differ(61) == 0


@pytest.mark.heavy
def test_f32_sum_of_halves_rounds_to_the_exact_sums_half_exhaustively():
    """All 4.03e9 ordered pairs of finite halves (about a minute)."""
    assert _sum_pairs_differ(1) == 0


def _odd_add(a: np.float32, b: np.float32) -> np.float32:
    """``lower/half.py``'s ``fadd_odd32`` step for step in numpy f32 (OpFOrdNotEqual: a NaN error
    never moves the sum)."""
    f = np.float32
    s = f(a + b)
    bb = f(s - a)
    e = f(f(a - f(s - bb)) + f(b - bb))
    bits = int(np.array(s).view(np.uint32))
    if e == e and e != 0 and not bits & 1:
        same = bits >> 31 == int(np.array(e).view(np.uint32)) >> 31
        bits = (bits + (1 if same else -1)) & M32
    return np.array(bits, np.uint32).view(np.float32)


def test_round_to_odd_fma_matches_the_exact_half_on_random_operands():
    """HFMA2's argument (round to odd at 24 >= 11 + 2 bits, then to nearest): the exact f32
    product plus c rounded to odd, then to a half, is the exact a*b+c's half, on 20,000 random
    operand triples, half of them with c near -a*b (cancellation, ties, subnormal results), a
    quarter where rounding the f32 sum to nearest first would be wrong."""
    import random

    rng = random.Random(31)
    bad = []
    with np.errstate(all="ignore"):
        for _ in range(20000):
            hs = [rng.getrandbits(16) for _ in range(3)]
            a, b = (float(np.uint16(h).view(np.float16)) for h in hs[:2])
            mode = rng.random()
            if mode < 0.5:
                hs[2] = (int(np.float16(-a * b).view(np.uint16)) + rng.randint(-3, 3)) & 0xFFFF
            elif mode < 0.75:  # a*b a hair off half of c's last place (SETS["fma_double_rounding"])
                d, sg = rng.randint(-2, 12), [rng.getrandbits(1) << 15 for _ in range(3)]
                hs = [
                    sg[0] | 0x3C04 | rng.getrandbits(2),
                    sg[1] | (3 + d) << 10 | 0x3F0 | rng.getrandbits(4),
                    sg[2] | (15 + d) << 10 | rng.getrandbits(4),
                ]
            fa, fb, fc = (np.uint16(h).view(np.float16).astype(np.float32) for h in hs)
            got = int(np.float16(_odd_add(np.float32(fa * fb), fc)).view(np.uint16))
            if not _same(got, _lane("HFMA2", False, False, *hs)[0]):
                bad.append([hex(h) for h in hs])
    assert not bad, bad[:4]
