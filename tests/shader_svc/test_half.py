"""Half precision on lavapipe against an exact reference (issue 31): a hand-written SM86 kernel
(assembled by ``sm86/assemble.py``, words nvdisasm-checked by the corpus tests) runs HADD2,
HMUL2, HFMA2, HMNMX2, HSETP2 and F2F.F16.F32 in all four rounding modes on halves drawn from
every bit pattern (denormals, infinities, overflow, ties) and compares every result with the
nearest half computed from the exact value (``fractions.Fraction``; numpy's float16 only gives
the candidates).  The CUDA corpus (test_cuda_corpus.py, half_*) checks the same instructions as
nvcc and ptxas emit them, on both ISAs, with ordinary inputs."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from compute_dispatch import run_spirv, upload
from shader_svc.sm86 import decode as dec
from shader_svc.sm86.assemble import assemble_program


def _loads(third: str) -> str:
    """The kernels' common start: thread index i (exit past n = c[0x180]), the words a[i], b[i],
    c[i] of the buffers at c[0x160], c[0x168], c[0x170] into R10, R11 and ``third``, and R8:R9 =
    the 48-byte output record of i in the buffer at c[0x178]."""
    return (
        """
    MOV R1, c[0x0][0x28]
    S2R R0, SR_TID.X
    S2R R3, SR_CTAID.X
    IMAD R0, R3, c[0x0][0x0], R0
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x180], PT
    @P0 EXIT
    ULDC.64 UR4, c[0x0][0x118]
    IMAD.MOV.U32 R5, RZ, RZ, 0x4
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160]
    LDG.E R10, [R2.64]
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x168]
    LDG.E R11, [R2.64]
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x170]
    LDG.E """
        + third
        + """, [R2.64]
    IMAD.MOV.U32 R5, RZ, RZ, 0x30
    IMAD.WIDE.U32 R8, R0, R5, c[0x0][0x178]
"""
    )


KERNEL = (
    _loads("R22")
    + """
    HADD2 R12, R10, -R11
    HMUL2 R13, R10, R11
    HFMA2 R14, R10, R11, R10.H1_H1
    HMNMX2 R15, R10, R11, PT
    F2F.F16.F32 R16, R22
    F2F.F16.F32.RM R17, R22
    F2F.F16.F32.RP R18, R22
    F2F.F16.F32.RZ R19, R22
    HSETP2.GTU.AND P1, PT, R10, R11, PT
    HSETP2.LT.AND P2, PT, R10.H1_H1, R11.H1_H1, PT
    SEL R20, RZ, 0x1, !P1
    SEL R21, RZ, 0x1, !P2
    STG.E.128 [R8.64], R12
    STG.E.128 [R8.64+0x10], R16
    STG.E.64 [R8.64+0x20], R20
    EXIT
END: BRA END
"""
)

F16_MAX = Fraction(65504)


def _exact(h: int) -> Fraction | float:
    """The exact value of half bits ``h`` (a float for zeros, infinities and NaN: the sign of a
    zero matters)."""
    v = float(np.uint16(h).view(np.float16))
    return v if not math.isfinite(v) or v == 0 else Fraction(v)


def _bits(v: float) -> int:
    return int(np.float16(v).view(np.uint16))


def _round(x, f64: float = 0.0, rnd: int = 0) -> int:
    """The half nearest the exact ``x`` in the direction ``rnd`` (0 nearest even, 1 down, 2 up,
    3 toward zero); an exact zero takes its sign from ``f64`` (the IEEE double computation of the
    same expression), a nonzero value rounded to zero keeps its own; NaN is returned as 0x7e00
    (the caller accepts any NaN)."""
    if not isinstance(x, Fraction):
        return 0x7E00 if math.isnan(x) else _bits(x)
    if x == 0:
        return 0x8000 if math.copysign(1.0, f64) < 0 else 0
    # every half that could be the answer: numpy's nearest to the f64 and its two neighbours
    with np.errstate(over="ignore"):  # beyond the half range: infinity, a candidate like the others
        f = np.float16(float(x))
        cands = {f, np.nextafter(f, np.float16(np.inf)), np.nextafter(f, np.float16(-np.inf))}
    finite = sorted(Fraction(float(c)) for c in cands if np.isfinite(c))
    lo = max((c for c in finite if c <= x), default=-math.inf)
    hi = min((c for c in finite if c >= x), default=math.inf)
    if x > F16_MAX:
        lo, hi = F16_MAX, math.inf
    if x < -F16_MAX:
        lo, hi = -math.inf, -F16_MAX
    if lo == hi:
        pick = lo
    elif rnd == 1:
        pick = lo
    elif rnd == 2:
        pick = hi
    elif rnd == 3:
        pick = lo if x > 0 else hi
    elif x >= 65520:  # nearest: infinity from half a place past the largest half on
        pick = math.inf
    elif x <= -65520:
        pick = -math.inf
    else:
        dl, dh = x - lo, hi - x
        pick = lo if dl < dh or (dl == dh and _bits(float(lo)) & 1 == 0) else hi
    return 0x8000 if pick == 0 and x < 0 else _bits(float(pick))


def _same(got: int, want: int) -> bool:
    if want & 0x7C00 == 0x7C00 and want & 0x3FF:  # NaN: any NaN
        return got & 0x7C00 == 0x7C00 and got & 0x3FF != 0
    return got == want


def _lanes(w: int) -> tuple[int, int]:
    return w & 0xFFFF, w >> 16


def _op(fn, *xs) -> tuple:
    """(the exact value, or the double's where an operand is infinite; the IEEE double value)."""
    with np.errstate(all="ignore"):
        f64 = float(fn(*[np.float64(float(x)) for x in xs]))
    return (fn(*xs) if all(isinstance(x, Fraction) for x in xs) else f64), f64


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(31)
    h = rng.integers(0, 0x10000, (2, n, 2), dtype=np.uint32)
    h[(h & 0x7C00) == 0x7C00] &= 0xFC00  # no NaN operands (their payload is the device's)
    special = np.array([0, 0x8000, 1, 0x8001, 0x3FF, 0x400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x3C00, 0x3C01], np.uint32)
    h[0, : len(special), 0] = special
    h[1, : len(special), 0] = special[::-1]
    a, b = (h[k, :, 0] | h[k, :, 1] << 16 for k in (0, 1))
    # f32 inputs of F2F around the half range (exponents 2^-30..2^20) and its edges
    c = rng.integers(97 << 23, 148 << 23, n, dtype=np.uint32) | (rng.integers(0, 2, n, dtype=np.uint32) << 31)
    edges = [65504.0, 65519.99, 65520.0, 65536.0, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-14 * 0.99, np.inf, 1 + 2.0**-11]
    ef = np.array(edges + [-x for x in edges], np.float32).view(np.uint32)
    c[: len(ef)] = ef
    return a.astype(np.uint32), b.astype(np.uint32), c


def test_half_instructions_match_the_exact_reference(compute_device):
    import vk_compute
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    n = 2048
    a, b, c = _inputs(n)
    dev = compute_device
    spirv = translate_compute(dec.decode_stream(assemble_program(KERNEL)), ComputeSpec((32, 1, 1)))
    ba, bb, bc = upload(dev, a), upload(dev, b), upload(dev, c)
    bo = upload(dev, np.zeros(12 * n, np.uint32))
    params = struct.pack("<QQQQI", ba.address, bb.address, bc.address, bo.address, n)
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x188, n, params, [bo], 32)
    out = out[: 12 * n].reshape(n, 12)
    bad = []
    for i in range(n):
        (a0, a1), (b0, b1) = _lanes(int(a[i])), _lanes(int(b[i]))
        x, y = (_exact(a0), _exact(a1)), (_exact(b0), _exact(b1))
        want = {
            0: [_round(*_op(lambda p, q: p - q, x[k], y[k])) for k in (0, 1)],
            1: [_round(*_op(lambda p, q: p * q, x[k], y[k])) for k in (0, 1)],
            2: [_round(*_op(lambda p, q, r: p * q + r, x[k], y[k], x[1])) for k in (0, 1)],
        }
        for word, lanes in want.items():
            got = _lanes(int(out[i, word]))
            if not all(_same(g, w) for g, w in zip(got, lanes)):
                bad.append((i, word, [hex(v) for v in (a[i], b[i])], [hex(g) for g in got], [hex(w) for w in lanes]))
        mins = [float(min(x[k], y[k])) for k in (0, 1)]
        got = [float(np.uint16(g).view(np.float16)) for g in _lanes(int(out[i, 3]))]
        if got != mins:
            bad.append((i, 3, hex(a[i]), hex(b[i]), got, mins))
        f = float(np.uint32(c[i]).view(np.float32))
        fx = Fraction(f) if math.isfinite(f) else f
        for r in range(4):
            if not _same(int(out[i, 4 + r]), _round(fx, f, r)):
                bad.append((i, 4 + r, f, hex(out[i, 4 + r]), hex(_round(fx, f, r))))
        gtu = [not (x[k] <= y[k]) for k in (0, 1)]  # unordered or greater (no NaN operands)
        if [int(out[i, 8]), int(out[i, 9])] != [int(gtu[0]), int(x[1] < y[1])]:
            bad.append((i, 8, hex(a[i]), hex(b[i]), out[i, 8:10].tolist()))
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"


@pytest.mark.parametrize("text", ["HADD2.F32 R0, -RZ, R2.H0_H0", "HFMA2 R0, R2.H1_H1, -R5, |R2|.H0_H0"])
def test_half_text_assembles_and_decodes_back(text):
    code = assemble_program(text + "\nEXIT\n")
    assert dec.decode_stream(code)[0].text() == text


FFMA_KERNEL = (
    _loads("R12")
    + """
    FFMA R16, R10, R11, R12
    FFMA.RM R17, R10, R11, R12
    FFMA.RP R18, R10, R11, R12
    FFMA.RZ R19, R10, R11, R12
    FMUL.RM R20, R10, R11
    FMUL.RP R21, R10, R11
    FMUL.RZ R22, R10, R11
    FADD.RM R23, R10, R12
    FADD.RP R24, R10, R12
    FADD.RZ R25, R10, R12
    STG.E.128 [R8.64], R16
    STG.E.128 [R8.64+0x10], R20
    STG.E.64 [R8.64+0x20], R24
    EXIT
END: BRA END
"""
)


def _f32_round(x: Fraction, rnd: int) -> int:
    """The f32 nearest the exact nonzero finite ``x`` in the direction ``rnd`` (candidates from
    numpy, the choice exact)."""
    with np.errstate(over="ignore"):  # beyond the f32 range: infinity, a candidate like the others
        f = np.float32(float(x))
        cands = {f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))}
    fin = sorted(Fraction(float(c)) for c in cands if np.isfinite(c))
    big = Fraction(float(np.finfo(np.float32).max))
    lo = max((c for c in fin if c <= x), default=None)
    hi = min((c for c in fin if c >= x), default=None)
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    if lo == hi:
        pick = lo
    elif rnd == 0 and abs(x) >= 2**128 - 2**103:  # half a place past the largest f32
        pick = math.copysign(math.inf, x)
    elif rnd == 0:
        dl, dh = x - lo, hi - x
        even = np.float32(float(lo)).view(np.uint32) & 1 == 0 if math.isfinite(lo) else False
        pick = lo if dl < dh or (dl == dh and even) else hi
    else:
        pick = {1: lo, 2: hi, 3: lo if x > 0 else hi}[rnd]
    if abs(pick) == math.inf and rnd == 3:
        pick = math.copysign(float(big), x)
    out = int(np.float32(float(pick)).view(np.uint32))
    return out | 0x80000000 if pick == 0 and x < 0 else out


def test_ffma_directed_rounding_matches_the_exact_reference(compute_device):
    """FFMA.RM/.RP/.RZ (no per-instruction rounding mode in Vulkan: emulated, lower/half.py)
    on products and sums that are inexact, tie, cancel, overflow and underflow."""
    import vk_compute
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    n = 2048
    rng = np.random.default_rng(53)
    a = (rng.integers(100 << 23, 160 << 23, n, dtype=np.uint32) | rng.integers(0, 2, n, dtype=np.uint32) << 31).astype(np.uint32)
    b = (rng.integers(100 << 23, 160 << 23, n, dtype=np.uint32) | rng.integers(0, 2, n, dtype=np.uint32) << 31).astype(np.uint32)
    af, bf = a.view(np.float32).astype(np.float64), b.view(np.float32).astype(np.float64)
    c = np.where(rng.random(n) < 0.5, -(af * bf), rng.standard_normal(n) * 4).astype(np.float32).view(np.uint32)
    a[:5] = np.array([2.0**100, 2.0**-100, 1 + 2.0**-23, 3.0, 3.0], np.float32).view(np.uint32)
    b[:5] = np.array([2.0**100, 2.0**-60, 1 + 2.0**-23, 1.0, 1.0], np.float32).view(np.uint32)
    c[:5] = np.array([1.0, 0.0, -1.0, 2.0**-30, -3.0], np.float32).view(np.uint32)
    dev = compute_device
    spirv = translate_compute(dec.decode_stream(assemble_program(FFMA_KERNEL)), ComputeSpec((32, 1, 1)))
    bufs = [upload(dev, x) for x in (a, b, c)]
    bo = upload(dev, np.zeros(12 * n, np.uint32))
    params = struct.pack("<QQQQI", *(x.address for x in bufs), bo.address, n)
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x188, n, params, [bo], 32)
    out = out[: 12 * n].reshape(n, 12)
    bad = []
    for i in range(n):
        x, y, z = (Fraction(float(np.uint32(v).view(np.float32))) for v in (a[i], b[i], c[i]))
        fx, fy, fz = (float(np.uint32(v).view(np.float32)) for v in (a[i], b[i], c[i]))
        # (column, exact value, mode, the IEEE zero the operation gives where the value is 0)
        cases = [(r, x * y + z, r, 0x80000000 if r == 1 else 0) for r in range(4)]  # x - x: -0 only in RM
        prod_zero = 0x80000000 if math.copysign(1, fx) * math.copysign(1, fy) < 0 else 0
        cases += [(3 + r, x * y, r, prod_zero) for r in (1, 2, 3)]
        sum_zero = 0 if (fx == 0 and fz == 0 and math.copysign(1, fx) > 0 and math.copysign(1, fz) > 0) else 0x80000000
        cases += [
            (
                6 + r,
                x + z,
                r,
                sum_zero
                if r == 1
                else (0x80000000 if fx == 0 and fz == 0 and math.copysign(1, fx) < 0 and math.copysign(1, fz) < 0 else 0),
            )
            for r in (1, 2, 3)
        ]
        for col, exact, r, zero in cases:
            want = _f32_round(exact, r) if exact != 0 else zero
            if int(out[i, col]) != want:
                bad.append((i, col, hex(a[i]), hex(b[i]), hex(c[i]), hex(out[i, col]), hex(want)))
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"


DFMA_KERNEL = """
    MOV R1, c[0x0][0x28]
    S2R R0, SR_TID.X
    S2R R3, SR_CTAID.X
    IMAD R0, R3, c[0x0][0x0], R0
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x180], PT
    @P0 EXIT
    ULDC.64 UR4, c[0x0][0x118]
    IMAD.MOV.U32 R5, RZ, RZ, 0x8
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160]
    LDG.E.64 R10, [R2.64]
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x168]
    LDG.E.64 R12, [R2.64]
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x170]
    LDG.E.64 R14, [R2.64]
    IMAD.MOV.U32 R5, RZ, RZ, 0x60
    IMAD.WIDE.U32 R8, R0, R5, c[0x0][0x178]
    DFMA R16, R10, R12, R14
    DFMA.RM R18, R10, R12, R14
    DFMA.RP R20, R10, R12, R14
    DFMA.RZ R22, R10, R12, R14
    DMUL.RM R24, R10, R12
    DMUL.RP R26, R10, R12
    DMUL.RZ R28, R10, R12
    DADD.RM R30, R10, R14
    DADD.RP R32, R10, R14
    DADD.RZ R34, R10, R14
    STG.E.64 [R8.64], R16
    STG.E.64 [R8.64+0x8], R18
    STG.E.64 [R8.64+0x10], R20
    STG.E.64 [R8.64+0x18], R22
    STG.E.64 [R8.64+0x20], R24
    STG.E.64 [R8.64+0x28], R26
    STG.E.64 [R8.64+0x30], R28
    STG.E.64 [R8.64+0x38], R30
    STG.E.64 [R8.64+0x40], R32
    STG.E.64 [R8.64+0x48], R34
    EXIT
END: BRA END
"""


def _f64_round(x: Fraction, rnd: int) -> int:
    """The double nearest the exact nonzero ``x`` in the direction ``rnd`` (no overflow in the
    inputs below); ``float(Fraction)`` is correctly rounded to nearest."""
    f = float(x)
    lo = f if Fraction(f) <= x else np.nextafter(f, -np.inf)
    hi = f if Fraction(f) >= x else np.nextafter(f, np.inf)
    pick = {0: f, 1: lo, 2: hi, 3: lo if x > 0 else hi}[rnd]
    out = int(np.float64(pick).view(np.uint64))
    return out | 1 << 63 if pick == 0 and x < 0 else out


def test_directed_double_arithmetic_matches_the_exact_reference(compute_device):
    """DFMA/DMUL/DADD with .RM/.RP/.RZ (ptxas uses them in the slow paths of __ddiv_rn and
    __dsqrt_rn): inexact, cancelling and exactly zero results against ``Fraction``."""
    import vk_compute
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    n = 1024
    rng = np.random.default_rng(64)
    a = rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)
    b = rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)
    c = np.where(rng.random(n) < 0.4, -(a * b), rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n))
    a[:4], b[:4], c[:4] = [3.0, 1.0, 0.0, -2.0], [1.0, 0.0, 0.0, 1.0 + 2.0**-52], [-3.0, 0.0, -0.0, 2.0]
    dev = compute_device
    spirv = translate_compute(dec.decode_stream(assemble_program(DFMA_KERNEL)), ComputeSpec((32, 1, 1)))
    bufs = [upload(dev, x.astype(np.float64).view(np.uint32)) for x in (a, b, c)]
    bo = upload(dev, np.zeros(24 * n, np.uint32))
    params = struct.pack("<QQQQI", *(x.address for x in bufs), bo.address, n)
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x188, n, params, [bo], 32)
    out = out[: 24 * n].view(np.uint64).reshape(n, 12)
    bad = []
    for i in range(n):
        x, y, z = (Fraction(float(v)) for v in (a[i], b[i], c[i]))
        with np.errstate(all="ignore"):
            cases = (
                [
                    (x * y + z, r, float(a[i]) * float(b[i]) + float(c[i]))
                    for r in range(4)  # IEEE zero sign (RN) from the double expression
                ]
                + [(x * y, r, float(a[i]) * float(b[i])) for r in (1, 2, 3)]
                + [(x + z, r, float(a[i]) + float(c[i])) for r in (1, 2, 3)]
            )
        for k, (exact, r, f64) in enumerate(cases):
            if exact != 0:
                want = _f64_round(exact, r)
            elif k >= 4 and k < 7:  # a product's zero keeps the sign of the product in every mode
                want = int(np.float64(f64).view(np.uint64))
            else:  # a sum's exact zero: -0 rounding down unless both addends are +0, else RN's sign
                both_pos = k < 4 and float(a[i]) * float(b[i]) == 0 and math.copysign(1, float(a[i]) * float(b[i])) > 0
                both_pos = both_pos or (k >= 7 and a[i] == 0 and math.copysign(1, a[i]) > 0)
                both_pos = both_pos and c[i] == 0 and math.copysign(1, c[i]) > 0
                want = (0 if both_pos else 1 << 63) if r == 1 else int(np.float64(f64).view(np.uint64))
            if int(out[i, k]) != want:
                bad.append((i, k, a[i], b[i], c[i], hex(out[i, k]), hex(want)))
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"
    assert (out[:, 1] != out[:, 2]).sum() > n // 2  # the inputs are mostly inexact: RM and RP differ


# ptxas's fmin / fmax on doubles (sm86 O3, cuda_corpus dbl_minmax): DSETP.MIN/.MAX, FSEL/SEL
# on the first predicate, the quiet bit ORed into b's high word on the second
DMINMAX_KERNEL = """
    MOV R1, c[0x0][0x28]
    S2R R0, SR_TID.X
    S2R R3, SR_CTAID.X
    IMAD R0, R3, c[0x0][0x0], R0
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x180], PT
    @P0 EXIT
    ULDC.64 UR4, c[0x0][0x118]
    IMAD.MOV.U32 R7, RZ, RZ, 0x8
    IMAD.WIDE.U32 R4, R0, R7, c[0x0][0x160]
    IMAD.WIDE.U32 R2, R0, R7, c[0x0][0x168]
    LDG.E.64 R4, [R4.64]
    LDG.E.64 R2, [R2.64]
    DSETP.MIN.AND P0, P1, R4, R2, PT
    DSETP.MAX.AND P2, P3, R4, R2, PT
    FSEL R9, R5, R3, P0
    SEL R8, R4, R2, P0
    FSEL R11, R5, R3, P2
    SEL R10, R4, R2, P2
    @P1 LOP3.LUT R9, R3, 0x80000, RZ, 0xfc, !PT
    @P3 LOP3.LUT R11, R3, 0x80000, RZ, 0xfc, !PT
    IMAD.MOV.U32 R7, RZ, RZ, 0x10
    IMAD.WIDE.U32 R6, R0, R7, c[0x0][0x170]
    STG.E.64 [R6.64], R8
    STG.E.64 [R6.64+0x8], R10
    EXIT
END: BRA END
"""


def test_dsetp_minmax_gives_ptx_fmin_fmax(compute_device):
    """The predicates of DSETP.MIN/.MAX (lower_alu._dsetp_minmax) under ptxas's own sequence give
    PTX's min/max.f64: a NaN operand yields the other one, two NaNs a NaN; ±0 and infinities."""
    import vk_compute
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    vals = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.25, 5e-324, 1e308], np.float64)
    a, b = (x.ravel() for x in np.meshgrid(vals, vals))
    n = len(a)
    dev = compute_device
    spirv = translate_compute(dec.decode_stream(assemble_program(DMINMAX_KERNEL)), ComputeSpec((32, 1, 1)))
    ba, bb = upload(dev, a.view(np.uint32)), upload(dev, b.view(np.uint32))
    bo = upload(dev, np.zeros(4 * n, np.uint32))
    params = struct.pack("<QQQQI", ba.address, bb.address, bo.address, 0, n)  # a, b, out, -, n
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x188, n, params, [bo], 32)
    got = out[: 4 * n].view(np.float64).reshape(n, 2)
    for fn, col in ((np.fmin, 0), (np.fmax, 1)):
        want = fn(a, b)
        same = (got[:, col] == want) | (np.isnan(got[:, col]) & np.isnan(want))
        assert same.all(), [(a[i], b[i], got[i, col], want[i]) for i in np.nonzero(~same)[0][:5]]
