"""ALU forms no compiler of the CUDA corpus writes, on lavapipe against a reference written from
their public definitions (issue 31, shader-u).  Hand-written kernels, assembled by
``sm*/assemble.py``; every line prints back from its word as written (``*_text_decodes_back``)
and as nvdisasm prints it (``listings.check_sm*``, heavy: checked when written).  Each kernel is
refused by the translator before shader-u (no lowering rule).

SM53: the condition code's overflow flag (O: IADD.CC, the subtraction form, IADD.X.CC; P2R/R2P
CC bit 3; CSET's tests reading it, as yuzu's flow tests define them), FMUL/FFMA .FMZ (the field value beside .FTZ: .FTZ, and a product with a zero factor is +0
whatever the other factor, infinity or NaN -- the D3D9 'legacy' multiply, Mesa nv50_ir's
'dnz'), HADD2 .MRG_H0/.MRG_H1 (one half of the destination written, the other kept: yuzu's
MergeResult), CS2R (S2R's registers), PSET (.BF), IMAD32I (.HI, signed immediate), FCMP, VABSDIFF4 (PTX vabsdiff4: byte
selectors, signs, the mask's merge and .ACC).
SM86: P2R/R2P and UP2UR/UR2UP (predicates P0..P6 as bits 0..6, Ryujinx's layout), UPLOP3,
USGXT (PTX szext), UBMSK (PTX bmsk) on uniform registers loaded by R2UR."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import compute_cases as cc
import isa_coverage
import sm53_ab
from compute_dispatch import run_spirv, upload
from test_half import _exact, _lanes, _op, _round, _same

M32 = 0xFFFFFFFF
BS = 64

# params: a 0x140, b 0x148, h 0x150, g 0x158, out 0x160, n 0x168
KERNEL53 = (
    sm53_ab.head(0x7, (10, 11, 6, 7))
    + """\
        FMUL.FMZ R12, R10, R11
        FFMA.FMZ R13, R10, R11, R10
        MOV R14, R7
        HADD2.MRG_H0 R14, R6, R7
        MOV R15, R6
        HADD2.MRG_H1 R15, R6, R7
        STG.E.128 [R8], R12
        ISETP.LT.AND P1, PT, R10, R11, PT
        ISETP.GT.U32.AND P2, PT, R10, 0x40000, PT
        PSET.BF.XOR.AND R16, P1, P2, PT
        MOV R17, R11
        IMAD32I R17, R10, 0x12345, R17
        FCMP.LT R18, R10, R11, R10
        PSET.OR.AND R19, !P1, P2, PT
        STG.E.128 [R8+0x10], R16
        MOV R20, R10
        IMAD32I.HI R20, R10, -0x12345, R20
        MOV R21, R11
        IMAD32I.HI R21, R11, 0x7654321, R21
        VABSDIFF4.S8.U8.XZ R22, R10.3201, R11.4567, R11
        VABSDIFF4.U8.S8.ACC R23, R10.3120, R11.6745, R10
        VABSDIFF4.Y R24, R10.4321, R11.5432, R10
        STG.E.128 [R8+0x20], R20
        STG.E [R8+0x30], R24
        IADD R25.CC, R10, R11
        P2R R12, CC, RZ, 0xf
        CSET.LT.AND R13, CC, PT
        CSET.BF.GEU.OR R14, CC, !PT
        IADD R28.CC, R10, -R11
        P2R R16, CC, RZ, 0xf
        CSET.GT.AND R17, CC, PT
        CSET.LE.AND R18, CC, PT
        CSET.OFT.AND R15, CC, PT
        IADD.X R30.CC, R11, R10
        P2R R19, CC, RZ, 0xf
        STG.E.128 [R8+0x40], R12
        STG.E.128 [R8+0x50], R16
        R2P CC, R10, 0xf
        CSET.LTU.AND R20, CC, PT
        CSET.RGT.AND R21, CC, PT
        P2R R22, CC, RZ, 0xf
        CSET.GTU.AND R23, CC, PT
        STG.E.128 [R8+0x60], R20
        CS2R R24, SR_TID.X
        CS2R R25, SR_LANEID
        CS2R R26, SR_LTMASK
        CS2R R27, SR_CTAID.X
        STG.E.128 [R8+0x70], R24
        EXIT
"""
)


def _f(u: int) -> np.float32:
    return np.uint32(u).view(np.float32)


def _flush(v: np.float32) -> np.float32:
    return np.float32(0.0) * np.sign(v) if v != 0 and abs(v) < np.float32(2.0**-126) else v


def _s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def _floats(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    """f32 pairs: ordinary values, zeros of both signs against infinities, NaN, denormals and
    ordinary values (the .FMZ cases), and denormal products."""
    a = (rng.standard_normal(n) * 4.0).astype(np.float32)
    b = (rng.standard_normal(n) * 4.0).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e-39, 2.5, -7.0, 1e-30], np.float32)
    k = len(special)
    a[: k * k] = np.repeat(special, k)
    b[: k * k] = np.tile(special, k)
    a[k * k : k * k + 32] = np.float32(1e-20)
    b[k * k : k * k + 32] = np.float32(1e-19) * np.arange(1, 33, dtype=np.float32)
    return a.view(np.uint32), b.view(np.uint32)


def _fmz_ref(x: np.float32, y: np.float32, c: np.float32 | None) -> int:
    x, y = _flush(x), _flush(y)
    if x == 0 or y == 0:
        r = np.float32(0.0) if c is None else np.float32(_flush(c) + np.float32(0.0))
    elif c is None:
        with np.errstate(all="ignore"):
            r = np.float32(x * y)
    elif not all(np.isfinite(v) for v in (x, y, c)):  # infinities and NaN: no rounding to do
        with np.errstate(all="ignore"):
            r = np.float32(np.float64(x) * np.float64(y) + np.float64(_flush(c)))
    else:
        r = cc.fma_f32_exact(np.array([x]), np.array([y]), np.array([_flush(c)]))[0]
    return int(np.float32(_flush(r)).view(np.uint32))


def _same_f32(got: int, want: int) -> bool:
    if want & 0x7F800000 == 0x7F800000 and want & 0x7FFFFF:
        return got & 0x7F800000 == 0x7F800000 and got & 0x7FFFFF != 0
    return got == want


def _vabsdiff4(a: int, b: int, c: int, asel: str, bsel: str, sa: bool, sb: bool, mask: int, acc: bool) -> int:
    """PTX vabsdiff4: bytes picked from {b, a} by the selectors (digits for bytes 3..0), each
    extended by its type, |difference|; .add sums the masked ones into c, else the masked bytes
    replace c's."""
    src = [(a >> (8 * k)) & 0xFF for k in range(4)] + [(b >> (8 * k)) & 0xFF for k in range(4)]

    def ext(v: int, signed: bool) -> int:
        return v - 256 if signed and v >= 128 else v

    va = [ext(src[int(ch)], sa) for ch in asel[::-1]]
    vb = [ext(src[int(ch)], sb) for ch in bsel[::-1]]
    r = [abs(p - q) for p, q in zip(va, vb)]
    if acc:
        return (c + sum(r[k] for k in range(4) if mask >> k & 1)) & M32
    out = c
    for k in range(4):
        if mask >> k & 1:
            out = (out & ~(0xFF << (8 * k))) | ((r[k] & 0xFF) << (8 * k))
    return out & M32


# the condition-code tests as yuzu's shader recompiler evaluates them (z, s, c, o)
_CC = {
    "LT": lambda z, s, c, o: (s and not z) != o,
    "GT": lambda z, s, c, o: ((not s) != o) and not z,
    "LE": lambda z, s, c, o: s != (z or o),
    "GEU": lambda z, s, c, o: ((not s) or z) != o,
    "LTU": lambda z, s, c, o: s != o,
    "GTU": lambda z, s, c, o: (not s) != (z or o),
    "RGT": lambda z, s, c, o: not s and not z,
    "OFT": lambda z, s, c, o: o,
}


def _adder(p: int, q: int, cin: int, z_in: bool = True) -> tuple[int, tuple]:
    """p + q + cin as the adder computes it: the word and the flags (Z, S, C, O); O: the
    inputs of one sign and the result of the other."""
    t = p + q + cin
    r = t & M32
    o = bool(((p ^ r) & (q ^ r)) >> 31)
    return r, (r == 0 and z_in, bool(r >> 31), bool(t >> 32), o)


def _cc_words(x: int, y: int) -> dict[int, int]:
    def p2r(f):
        return sum(int(v) << k for k, v in enumerate(f))

    out = {}
    _, f = _adder(x, y, 0)
    out[16], out[17], out[18] = p2r(f), M32 if _CC["LT"](*f) else 0, 0x3F800000 if _CC["GEU"](*f) else 0
    _, f = _adder(x, ~y & M32, 1)  # x - y: x + ~y + 1
    out[20], out[21], out[22], out[19] = (
        p2r(f),
        M32 if _CC["GT"](*f) else 0,
        M32 if _CC["LE"](*f) else 0,
        M32 if _CC["OFT"](*f) else 0,
    )
    _, f = _adder(y, x, int(f[2]), f[0])  # .X: the carry in, Z kept across the chain
    out[23] = p2r(f)
    f = tuple(bool(x >> k & 1) for k in range(4))  # R2P CC, x, 0xf
    out[24], out[25] = M32 if _CC["LTU"](*f) else 0, M32 if _CC["RGT"](*f) else 0
    out[26], out[27] = p2r(f), M32 if _CC["GTU"](*f) else 0
    return out


def _half_add(p: int, q: int) -> int:
    return _round(*_op(lambda u, v: u + v, _exact(p), _exact(q)))


def test_sm53_forms_match_their_definitions(compute_device):
    n = 256
    rng = np.random.default_rng(53)
    a, b = _floats(rng, n)
    h = rng.integers(0, 0x10000, (2, n, 2), dtype=np.uint32)
    h[(h & 0x7C00) == 0x7C00] &= 0xFC00  # no NaN halves (their payload is the device's)
    hh, gg = (h[k, :, 0] | h[k, :, 1] << 16 for k in (0, 1))
    out = sm53_ab.run(compute_device, KERNEL53, [np.asarray(v, np.uint32) for v in (a, b, hh, gg)], 32)
    bad = []
    for i in range(n):
        x, y, p, q = int(a[i]), int(b[i]), int(hh[i]), int(gg[i])
        fx, fy = _f(x), _f(y)
        p1, p2 = _s32(x) < _s32(y), x > 0x40000
        want_u = {
            4: 0x3F800000 if p1 != p2 else 0,
            5: (x * 0x12345 + y) & M32,
            6: x if fx < 0 else y,
            7: M32 if (not p1) or p2 else 0,
            8: (((_s32(x) * -0x12345) >> 32) + x) & M32,
            9: (((_s32(y) * 0x7654321) >> 32) + y) & M32,
            10: _vabsdiff4(x, y, y, "3201", "4567", True, False, 0b0101, False),
            11: _vabsdiff4(x, y, x, "3120", "6745", False, True, 0b1111, True),
            12: _vabsdiff4(x, y, x, "4321", "5432", True, True, 0b0010, False),
        }
        want_u.update(_cc_words(x, y))
        want_u.update({28: i % BS, 29: i % 32, 30: (1 << (i % 32)) - 1, 31: i // BS})  # CS2R
        for w, v in want_u.items():
            if int(out[i, w]) != v:
                bad.append((i, w, hex(x), hex(y), hex(int(out[i, w])), hex(v)))
        for w, v in ((0, _fmz_ref(fx, fy, None)), (1, _fmz_ref(fx, fy, fx))):
            if not _same_f32(int(out[i, w]), v):
                bad.append((i, w, hex(x), hex(y), hex(int(out[i, w])), hex(v)))
        (p0, p1h), (q0, q1) = _lanes(p), _lanes(q)
        for w, lanes in ((2, (_half_add(p0, q0), q1)), (3, (p0, _half_add(p1h, q1)))):
            got = _lanes(int(out[i, w]))
            if not all(_same(g, e) for g, e in zip(got, lanes)):
                bad.append((i, w, hex(p), hex(q), [hex(g) for g in got], [hex(e) for e in lanes]))
    isa_coverage.record_exact_program(53, "test_alu_forms::KERNEL53", KERNEL53.splitlines(), not bad)
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"


def test_sm53_kernel_text_decodes_back():
    got, lines = sm53_ab.printed_back(KERNEL53)
    assert got == lines


@pytest.mark.heavy
def test_sm53_kernel_text_is_nvdisasms():
    import listings

    listings.check_sm53([KERNEL53])


# params: a 0x160, b 0x168, out 0x170, n 0x178; R10 = a[i], R11 = b[i], R8:R9 = 8 words of out
KERNEL86 = """
    MOV R1, c[0x0][0x28]
    S2R R0, SR_TID.X
    S2R R3, SR_CTAID.X
    IMAD R0, R3, c[0x0][0x0], R0
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x178], PT
    @P0 EXIT
    ULDC.64 UR4, c[0x0][0x118]
    IMAD.MOV.U32 R5, RZ, RZ, 0x4
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160]
    LDG.E R10, [R2.64]
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x168]
    LDG.E R11, [R2.64]
    IMAD.MOV.U32 R5, RZ, RZ, 0x20
    IMAD.WIDE.U32 R8, R0, R5, c[0x0][0x170]
    R2P PR, R10, 0x7f
    P2R R12, PR, R11, 0x7f
    P2R.B1 R13, PR, R11, 0x3c
    R2P PR, R11, 0xf
    P2R R15, PR, RZ, 0x7f
    R2UR UR4, R10
    R2UR UR5, R11
    UR2UP UPR, UR4, 0x7f
    UP2UR UR6, UPR, UR5, 0x7f
    UPLOP3.LUT UP0, UP1, UP2, UP3, UP4, 0x96, 0x1e
    UP2UR UR12, UPR, URZ, 0x3
    USGXT UR7, UR4, UR5
    USGXT.W.U32 UR8, UR4, UR5
    UBMSK UR9, UR4, UR5
    UBMSK.W UR10, UR4, UR5
    USEL UR11, UR4, UR5, UP0
    MOV R14, UR6
    STG.E.128 [R8.64], R12
    MOV R16, UR12
    MOV R17, UR7
    IADD3 R17, R17, UR8, RZ
    MOV R18, UR9
    MOV R20, UR10
    MOV R21, UR11
    LOP3.LUT R19, R18, R21, R20, 0x96, !PT
    STG.E.128 [R8.64+0x10], R16
    EXIT
"""


def _szext(a: int, b: int, wrap: bool, signed: bool) -> int:
    """PTX szext's pseudo-code."""
    b1 = b & 31
    too_large = b >= 32 and not wrap
    mask = 0 if too_large else (M32 << b1) & M32
    sign = not (b1 == 0 or too_large or not signed) and (a >> ((b1 - 1) & 31)) & 1
    return (a & ~mask & M32) | (mask if sign else 0)


def _bmsk(a: int, b: int, wrap: bool) -> int:
    """PTX bmsk's pseudo-code."""
    a1, b1 = a & 31, b & 31
    mask0, over = (M32 << a1) & M32, a1 + b1 >= 32
    if not wrap:
        if a >= 32:
            mask0, over = 0, True
        over = over or b >= 32
    mask1 = 0 if over else (M32 if b1 == 0 else (M32 << (a1 + b1)) & M32)
    return mask0 & ~mask1 & M32


def _ref86(x: int, y: int) -> list[int]:
    lo7 = x & 0x7F
    preds = (y & 0xF) | (x & 0x70)  # after R2P PR, y, 0xf: P0..P3 from y, P4..P6 kept
    u2, u3, u4 = (x >> 2) & 1, (x >> 3) & 1, (x >> 4) & 1
    up0, up1 = u2 ^ u3 ^ u4, u2 ^ (u3 | u4)
    sel = x if up0 else y
    bm = _bmsk(x, y, False)
    return [
        (y & ~0x7F) | lo7,
        (y & ~(0x3C << 8)) | ((lo7 & 0x3C) << 8),
        (y & ~0x7F) | lo7,
        preds,
        up0 | up1 << 1,
        (_szext(x, y, False, True) + _szext(x, y, True, False)) & M32,
        bm,
        bm ^ _bmsk(x, y, True) ^ sel,
    ]


def test_sm86_predicate_and_uniform_forms_match_their_definitions(compute_device):
    import vk_compute
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    n = 512
    rng = np.random.default_rng(86)
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b[: n // 2] = rng.integers(0, 40, n // 2)  # widths and positions around 32
    a[: n // 4] = rng.integers(0, 40, n // 4)
    spirv = translate_compute(dec.decode_stream(assemble_program(KERNEL86)), ComputeSpec((32, 1, 1)))
    dev = compute_device
    ba, bb, bo = upload(dev, a), upload(dev, b), upload(dev, np.zeros(8 * n, np.uint32))
    params = struct.pack("<QQQI", ba.address, bb.address, bo.address, n)
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x17C, n, params, [bo], 32)
    out = out[: 8 * n].reshape(n, 8)
    bad = []
    for i in range(n):
        want = _ref86(int(a[i]), int(b[i]))
        got = [int(v) for v in out[i]]
        if got != want:
            bad.append((i, hex(a[i]), hex(b[i]), [hex(v) for v in got], [hex(v) for v in want]))
    isa_coverage.record_exact_program(86, "test_alu_forms::KERNEL86", KERNEL86.splitlines(), not bad)
    assert not bad, f"{len(bad)} of {n} differ, first: {bad[:3]}"


def test_sm86_kernel_text_decodes_back():
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program

    insts = dec.decode_stream(assemble_program(KERNEL86))
    lines = [ln.strip() for ln in KERNEL86.strip().splitlines()]
    assert [i.text() for i in insts[: len(lines)]] == lines


@pytest.mark.heavy
def test_sm86_kernel_text_is_nvdisasms():
    import listings

    listings.check_sm86([KERNEL86])


# --- graphics stages (shader-u2): the same rows in a fragment program ------------------------
# c[0x0]: u0..u3 at 0x0..0xc (the uniform datapath's inputs), 1/255 at 0x10, two odd multipliers
# at 0x14/0x18 (the per-pixel inputs).  The uniform block computes UR8.. from u0..u3 alone (a
# value the whole warp shares, as the hardware requires), the vector block from R4/R5, which
# differ per pixel (p = x + 32 y hashed); '{res}' is the register whose four bytes become the
# pixel's colour (byte / 255 in each 8-bit channel: exact).
FRAG86 = """
IPA.PASS R0, a[0x70]
IPA.PASS R1, a[0x74]
F2I.TRUNC.NTZ R0, R0
F2I.TRUNC.NTZ R1, R1
IMAD R2, R1, 0x20, R0
ULDC.64 UR4, c[0x0][0x0]
ULDC.64 UR6, c[0x0][0x8]
UR2UP UPR, UR6, 0x7f
UIMAD UR8, UR4, UR5, UR6
ULOP3.LUT UR9, UR4, UR5, UR7, 0x96, !UPT
UPRMT UR10, UR4, 0x5140, UR5
UPRMT UR20, UR4, UR7, UR5
UPOPC UR11, UR4
UBREV UR12, UR5
UFLO.U32 UR13, UR6
UBMSK UR14, UR7, UR5
USGXT UR15, UR4, UR7
UISETP.GE.U32.AND UP0, UPT, UR4, UR5, UPT
UISETP.LT.AND UP1, UP2, UR6, UR7, UP0
USEL UR16, UR4, UR5, UP0
UPLOP3.LUT UP3, UP4, UP0, UP1, UP2, 0x96, 0x1e
UP2UR UR17, UPR, URZ, 0x7f
UIADD3 UR18, UR4, UR5, UR6
UP2UR UR19, UPR, UR7, 0x3c
MOV R3, UR4
IMAD R4, R2, c[0x0][0x14], R3
MOV R3, UR5
IMAD R5, R2, c[0x0][0x18], R3
LOP3.LUT R6, R4, 0x8001ffff, RZ, 0xc0, !PT
LOP3.LUT R7, R5, 0x27, RZ, 0xc0, !PT
LOP3.LUT R8, R4, 0x27, RZ, 0xc0, !PT
R2P PR, R4, 0x7f
P2R R10, PR, R5, 0x7f
I2I.S16.S32.SAT R11, R6
I2IP.S8.S32.SAT R12, R6, R5, R4
IDP.4A.S8.U8 R13, R4, R5, R6
VABSDIFF4.U8.ACC R14, R4, R5, R6
VABSDIFF4.U8 R15, R4, R5, RZ
BMSK R16, R8, R7
FSET.BF.GT.FTZ.AND R17, R4, R5, PT
I2I.U8.S32.SAT R18, R5
SHF.R.U32.HI R21, RZ, 0x5, R4
SHF.L.U32 R22, R4, 0x7, RZ
SHF.R.S32.HI R23, RZ, R7, R4
SHF.L.U32.HI R24, R4, R8, R5
SHF.R.U32 R25, R4, R7, R5
SHF.L.W.U32.HI R26, R4, R5, R6
LEA R27, R4, R5, 0x3
LEA.HI R28, R4, R5, R6, 0x1c
LEA.HI.SX32 R29, R4, R5, 0x2
LEA R30, R4, -R5, 0x3
USHF.L.U32 UR21, UR4, 0x3, URZ
ULEA UR22, UR4, UR5, 0x4
USHF.R.S32.HI UR23, URZ, 0x3, UR5
MOV R20, {res}
PRMT R0, R20, 0x4440, RZ
PRMT R1, R20, 0x4441, RZ
PRMT R2, R20, 0x4442, RZ
PRMT R3, R20, 0x4443, RZ
I2FP.F32.U32 R0, R0
I2FP.F32.U32 R1, R1
I2FP.F32.U32 R2, R2
I2FP.F32.U32 R3, R3
FMUL R0, R0, c[0x0][0x10]
FMUL R1, R1, c[0x0][0x10]
FMUL R2, R2, c[0x0][0x10]
FMUL R3, R3, c[0x0][0x10]
EXIT
"""
FRAG86_HDR = dict(inputs={0x70: "perspective", 0x74: "perspective"}, targets=(0xF,))
K1, K2 = 0x9E3779B1, 0x85EBCA6B


def _prmt(a: int, sel: int, b: int) -> int:
    """PTX prmt (default mode): result byte i is byte (nibble i & 7) of b:a, or that byte's sign
    replicated where the nibble's bit 3 is set."""
    src = [(a >> 8 * k) & 0xFF for k in range(4)] + [(b >> 8 * k) & 0xFF for k in range(4)]
    r = 0
    for i in range(4):
        s = (sel >> 4 * i) & 0xF
        v = src[s & 7]
        r |= ((0xFF if v & 0x80 else 0) if s & 8 else v) << 8 * i
    return r


def _sat(x: int, lo: int, hi: int) -> int:
    return min(max(_s32(x), lo), hi)


def _frag86_ref(u: list[int], p: int) -> dict[str, int]:
    """Every result register of FRAG86 for uniforms ``u`` at pixel index ``p``."""
    u0, u1, u2, u3 = u
    up = [(u2 >> i) & 1 for i in range(7)]  # UR2UP UPR, UR6, 0x7f
    up[0] = int(u0 >= u1)
    lt = int(_s32(u2) < _s32(u3))
    up[1], up[2] = lt & up[0], (1 - lt) & up[0]
    a, b, c = up[0], up[1], up[2]
    up[3], up[4] = a ^ b ^ c, a ^ (b | c)  # LUTs 0x96, 0x1e (index a*4 + b*2 + c)
    bits = sum(v << i for i, v in enumerate(up))
    r4, r5 = (p * K1 + u0) & M32, (p * K2 + u1) & M32
    r6, r7, r8 = r4 & 0x8001FFFF, r5 & 0x27, r4 & 0x27

    def sb(x: int, k: int) -> int:
        v = (x >> 8 * k) & 0xFF
        return v - 256 if v & 0x80 else v

    i2ip = ((_sat(r6, -128, 127) & 0xFF) << 8) | (_sat(r5, -128, 127) & 0xFF) | (r4 << 16)
    f4, f5 = _flush(_f(r4)), _flush(_f(r5))  # .FTZ (lavapipe's fragment stage flushes denormal operands itself)
    return {
        "UR8": (u0 * u1 + u2) & M32,
        "UR9": u0 ^ u1 ^ u3,
        "UR10": _prmt(u0, 0x5140, u1),
        "UR20": _prmt(u0, u3 & 0xFFFF, u1),
        "UR11": bin(u0).count("1"),
        "UR12": int(f"{u1:032b}"[::-1], 2),
        "UR13": u2.bit_length() - 1 if u2 else M32,
        "UR14": _bmsk(u3, u1, False),
        "UR15": _szext(u0, u3, False, True),
        "UR16": u0 if up[0] else u1,
        "UR17": bits,
        "UR18": (u0 + u1 + u2) & M32,
        "UR19": (u3 & ~(0x3C << 0)) | (bits & 0x3C),
        "R10": (r5 & ~0x7F) | (r4 & 0x7F),
        "R11": _sat(r6, -32768, 32767) & 0xFFFF,
        "R12": i2ip & M32,
        "R13": (r6 + sum(sb(r4, k) * ((r5 >> 8 * k) & 0xFF) for k in range(4))) & M32,
        "R14": (r6 + sum(abs(((r4 >> 8 * k) & 0xFF) - ((r5 >> 8 * k) & 0xFF)) for k in range(4))) & M32,
        "R15": sum(abs(((r4 >> 8 * k) & 0xFF) - ((r5 >> 8 * k) & 0xFF)) << 8 * k for k in range(4)),
        "R16": _bmsk(r8, r7, False),
        "R17": 0x3F800000 if f4 > f5 else 0,
        "R18": _sat(r5, 0, 255),
        # the 32-bit shifts of the graphics lowering (shader-u2): the pair (c:a) as one integer
        "R21": r4 >> 5,
        "R22": (r4 << 7) & M32,
        "R23": (_s32(r4) << 32) >> min(r7, 32) >> 32 & M32,
        "R24": ((r5 << 32 | r4) << min(r8, 32)) >> 32 & M32,
        "R25": ((r5 << 32 | r4) >> min(r7, 32)) & M32,
        "R26": ((r6 << 32 | r4) << (r5 & 31)) >> 32 & M32,
        "R27": ((r4 << 3) + r5) & M32,
        "R28": ((((r6 << 32 | r4) << 28) >> 32) + r5) & M32,
        "R29": (((_s32(r4) << 2) >> 32) + r5) & M32,
        "R30": ((r4 << 3) - r5) & M32,
        "UR21": (u0 << 3) & M32,
        "UR22": ((u0 << 4) + u1) & M32,
        "UR23": (_s32(u1) >> 3) & M32,
    }


FRAG86_UNIFORMS = [
    (0x89ABCDEF, 0x01234567, 0xF00DFACE, 0x00000011),
    (0x00000013, 0x00000009, 0x7FFFFF85, 0x8000A01F),
    (0x00000003, 0xFFFFFFFF, 0x00000000, 0x00002745),
]


def test_sm86_fragment_program_runs_the_uniform_and_alu_rows(gpu, tmp_path):
    """The uniform datapath and the ALU rows in a fragment program (the graphics lowering reads
    the same rule table as compute's): for each result register, a program whose pixels' colours
    are its bytes, equal to the rows' definitions (PTX bmsk/szext/prmt/cvt.sat/dp4a/vabsdiff4,
    the predicate layout as above) for three sets of uniforms."""
    from quad_draw import H, W, draw_quad, spirv
    from spirv_checks import spirv_val

    bad = []
    for res in sorted(_frag86_ref([1, 2, 3, 4], 0)):
        fs = spirv("fragment", FRAG86.format(res=res), FRAG86_HDR)
        spirv_val(fs, tmp_path, "fs")
        for u in FRAG86_UNIFORMS:
            c0 = struct.pack("<4If2I", *u, np.float32(1 / 255), K1, K2)
            img = draw_quad(gpu, fs, uniforms={0: c0 + bytes(256 - len(c0))})
            got = (img[..., 0] | img[..., 1] << 8 | img[..., 2] << 16 | img[..., 3] << 24).astype(np.int64)
            for y in range(H):
                for x in range(W):
                    want = _frag86_ref(list(u), x + 32 * y)[res]
                    if int(got[y, x]) != want:
                        bad.append((res, [hex(v) for v in u], x, y, hex(int(got[y, x])), hex(want)))
    # every line's result is some program's output: the programs count as executed exactly only together
    isa_coverage.record_exact_program(86, "test_alu_forms::FRAG86", FRAG86.format(res="R10").splitlines(), not bad)
    assert not bad, f"{len(bad)} pixels differ, first: {bad[:3]}"


def test_sm86_fragment_text_decodes_back():
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program

    text = FRAG86.format(res="R10")
    lines = [ln.strip() for ln in text.strip().splitlines()]
    assert [i.text() for i in dec.decode_stream(assemble_program(text))[: len(lines)]] == lines


@pytest.mark.heavy
def test_sm86_fragment_text_is_nvdisasms():
    import listings

    listings.check_sm86([FRAG86.format(res="R10")])


def test_graphics_and_compute_read_one_alu_registration():
    """Every stage-neutral ALU rule (the uniform datapath included) is in both lowerings' tables
    with the same handler, and the graphics lowering admits it."""
    from shader_svc.sm86.lower_alu import STAGE_ALU_RULES
    from shader_svc.sm86.to_spirv import Compute86
    from shader_svc.sm86.to_spirv_gfx import Gfx86

    for key, handler in STAGE_ALU_RULES.items():
        assert Compute86.RULES.get(key) == handler, key
        assert Gfx86.RULES.get(key) == handler, key
        assert Gfx86.lowered(Gfx86, key), key


# --- FSWZADD (shader-u2): lane (id & 3) of the quad adds with the signs its two letters name --
SWZ_LINES = ("FSWZADD R12, R10, R11, PPPNNPZP", "FSWZADD R13, R11, R10, ZPNPPNPP", "FSWZADD.FTZ R14, R10, R11, NPPNZPPP")
SWZ86 = """
    MOV R1, c[0x0][0x28]
    S2R R0, SR_TID.X
    S2R R3, SR_CTAID.X
    IMAD R0, R3, c[0x0][0x0], R0
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x178], PT
    @P0 EXIT
    ULDC.64 UR4, c[0x0][0x118]
    IMAD.MOV.U32 R5, RZ, RZ, 0x4
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160]
    LDG.E R10, [R2.64]
    IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x168]
    LDG.E R11, [R2.64]
    IMAD.MOV.U32 R5, RZ, RZ, 0x10
    IMAD.WIDE.U32 R8, R0, R5, c[0x0][0x170]
{body}
    STG.E.128 [R8.64], R12
    EXIT
""".format(body="\n".join("    " + t for t in SWZ_LINES + ("FSWZADD.FTZ R15, R11, R11, ZPZPZPZP",)))
# params: a 0x140, b 0x148, out 0x150, n 0x158
SWZ53 = (
    sm53_ab.head(0x4)
    + """\
{body}
        STG.E.128 [R8], R12
        EXIT
""".format(body="\n".join("        " + t for t in SWZ_LINES + ("FSWZADD.FTZ R15, R11, R11, ZPZPZPZP",)))
)


def _swz_ref(text: str, lane: int, x: int, y: int) -> int:
    """FSWZADD from its text: lane L's two letters (the pattern lists lanes 0..3: shader-ndv, read
    off ptxas's tex3DGrad quad loop, see lower/swizzle_add.py), the sign of a then b (P +1, N -1,
    Z: a not used)."""
    body = text.split(" ", 1)[1].replace(",", "").split()
    d, a, b, pat = body
    ftz = ".FTZ" in text
    va, vb = (_f(x), _f(y)) if (a, b) == ("R10", "R11") else ((_f(y), _f(x)) if (a, b) == ("R11", "R10") else (_f(y), _f(y)))
    if ftz:
        va, vb = _flush(va), _flush(vb)
    sa, sb = pat[2 * lane], pat[2 * lane + 1]
    term_b = vb if sb == "P" else -vb
    with np.errstate(all="ignore"):
        r = term_b if sa == "Z" else np.float32((va if sa == "P" else -va) + term_b)
    if ftz:
        r = _flush(r)
    return int(np.float32(r).view(np.uint32))


def _swz_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a, b = _floats(rng, n)
    nan = np.isnan(a.view(np.float32)) | np.isnan(b.view(np.float32))
    a[nan], b[nan] = 0x3F800000, 0xC0000000  # (a NaN's payload is the device's)
    return a, b


def _swz_check(out: np.ndarray, a: np.ndarray, b: np.ndarray, bs: int) -> list:
    lines = SWZ_LINES + ("FSWZADD.FTZ R15, R11, R11, ZPZPZPZP",)
    bad = []
    for i in range(len(a)):
        for k, t in enumerate(lines):
            want, got = _swz_ref(t, (i % bs) & 3, int(a[i]), int(b[i])), int(out[i, k])
            if not _same_f32(got, want):
                bad.append((i, t, hex(a[i]), hex(b[i]), hex(got), hex(want)))
    return bad


def test_fswzadd_matches_its_lane_signs_sm86(compute_device):
    import vk_compute
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    n = 512
    a, b = _swz_inputs(n)
    spirv = translate_compute(dec.decode_stream(assemble_program(SWZ86)), ComputeSpec((32, 1, 1)))
    dev = compute_device
    ba, bb, bo = upload(dev, a), upload(dev, b), upload(dev, np.zeros(4 * n, np.uint32))
    params = struct.pack("<QQQI", ba.address, bb.address, bo.address, n)
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x17C, n, params, [bo], 32)
    bad = _swz_check(out[: 4 * n].reshape(n, 4), a, b, 32)
    isa_coverage.record_exact_program(86, "test_alu_forms::SWZ86", SWZ86.splitlines(), not bad)
    assert not bad, f"{len(bad)} results differ, first: {bad[:4]}"


def test_fswzadd_matches_its_lane_signs_sm53(compute_device):
    n = 256
    a, b = _swz_inputs(n)
    bad = _swz_check(sm53_ab.run(compute_device, SWZ53, [a, b], 4), a, b, BS)
    isa_coverage.record_exact_program(53, "test_alu_forms::SWZ53", SWZ53.splitlines(), not bad)
    assert not bad, f"{len(bad)} results differ, first: {bad[:4]}"


def test_fswzadd_text_decodes_back():
    from shader_svc.sm53 import assemble as asm
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm86 import decode as dec86
    from shader_svc.sm86.assemble import assemble_program

    for text, insts in (
        (SWZ86, dec86.decode_stream(assemble_program(SWZ86))),
        (SWZ53, dec53.decode_stream(asm.assemble_program(SWZ53))),
    ):
        lines = [ln.strip() for ln in text.strip().splitlines()]
        assert [i.text() for i in insts[: len(lines)]] == lines


@pytest.mark.heavy
def test_fswzadd_text_is_nvdisasms():
    import listings

    listings.check_sm86([SWZ86])
    listings.check_sm53([SWZ53])


# --- F2I to 8/16 bits (shader-u2): SM86's 0x105 rows .U8/.S8/.U16/.S16, SM53's .U16/.S16 -----
F2I_NARROW86 = [
    f"F2I{ftz}.{sz}{rnd}{ntz} R2, {src}"
    for sz in ("U8", "S8", "U16", "S16")
    for rnd in ("", ".FLOOR", ".CEIL", ".TRUNC")
    for ftz in ("", ".FTZ")
    for ntz in ("", ".NTZ")
    for src in ("R4", "c[0x0][0x168]", "1.5", "-R3", "|R7|")
]
F2I_NARROW53 = [
    f"F2I{ftz}.{sz}.F32{rnd} R2, {src}"
    for sz in ("U16", "S16")
    for rnd in ("", ".FLOOR", ".CEIL", ".TRUNC")
    for ftz in ("", ".FTZ")
    for src in ("R4", "-R3", "|R7|")
]


def test_f2i_narrow_rows_decode_back():
    from shader_svc.sm53 import assemble as asm53
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm86 import decode as dec86
    from shader_svc.sm86.assemble import assemble_line

    for t in F2I_NARROW86:
        w = assemble_line(t, 0)
        assert dec86.decode(w & (2**64 - 1), w >> 64).text() == t
    text = "\n".join(F2I_NARROW53)
    assert [i.text() for i in dec53.decode_stream(asm53.assemble_program(text))][: len(F2I_NARROW53)] == F2I_NARROW53


@pytest.mark.heavy
def test_f2i_narrow_rows_print_as_nvdisasm():
    import listings
    import nvtools
    from shader_svc.sm86.assemble import assemble_line

    words = [assemble_line(t, 0) for t in F2I_NARROW86]
    ref = nvtools.nvdisasm_raw([(w & (2**64 - 1), w >> 64) for w in words], "SM86")
    assert [r and r.text for r in ref] == F2I_NARROW86
    listings.check_sm53(["\n".join(F2I_NARROW53)])


@pytest.mark.parametrize(
    "line",
    ["IADD3 R0, P0, R1, R2, RZ", "SHF.L.U64.HI R0, R1, 0x3, R2", "IMAD.WIDE.U32 R0, R1, R2, RZ", "DADD R0, R2, R4"],
)
def test_graphics_refuses_64_bit_rows_by_name(line):
    """A row whose handler needs Int64/Float64 is refused in a fragment program with a reason
    (the module would otherwise declare a type the GPU process's device does not enable)."""
    from quad_draw import spirv
    from shader_svc.lower.base import TranslateError

    with pytest.raises(TranslateError, match="graphics stages"):
        spirv(
            "fragment",
            f"IPA.PASS R1, a[0x80]\nIPA.PASS R2, a[0x84]\n{line}\nEXIT\n",
            FRAG86_HDR | {"inputs": {0x80: "perspective", 0x84: "perspective"}},
        )


# --- SM53 graphics (shader-u2): the Maxwell ALU rows in a fragment program ---------------------
# c[0x0]: u0, u1 at 0x0/0x4 (the hash's offsets), 1/255 at 0x10; R4/R5 differ per pixel
FRAG53 = """
IPA.PASS R0, a[0x70], RZ
IPA.PASS R1, a[0x74], RZ
F2I.S32.F32.FLOOR R0, R0
F2I.S32.F32.FLOOR R1, R1
ISCADD R2, R1, R0, 0x5
MOV R4, c[0x0][0x0]
IMAD32I R4, R2, -0x61c8864f, R4
MOV R5, c[0x0][0x4]
IMAD32I R5, R2, -0x7a143595, R5
LOP32I.AND R6, R4, 0x8001ffff
HSET2.BF.LT.AND R11, R4, R5, PT
FCMP.LT.FTZ R12, R4, R5, R5
ISETP.LT.AND P0, PT, R4, R5, PT
ISETP.GT.U32.AND P1, PT, R4, R5, PT
PSET.BF.XOR.AND R13, P0, P1, PT
VABSDIFF4.U8.S8.ACC R15, R4.3120, R5.6745, R4
MOV R16, R5
IMAD32I R16, R4, 0x12345, R16
FSET.BF.LT.FTZ.AND R17, R4, R5, PT
ISET.BF.LT.AND R18, R4, R5, PT
FADD32I.FTZ R19, R4, 1.5
MOV R20, {res}
BFE.U32 R0, R20, 0x800
BFE.U32 R1, R20, 0x808
BFE.U32 R2, R20, 0x810
BFE.U32 R3, R20, 0x818
I2F.F32.U32 R0, R0
I2F.F32.U32 R1, R1
I2F.F32.U32 R2, R2
I2F.F32.U32 R3, R3
FMUL R0, R0, c[0x0][0x10]
FMUL R1, R1, c[0x0][0x10]
FMUL R2, R2, c[0x0][0x10]
FMUL R3, R3, c[0x0][0x10]
EXIT
"""
FRAG53_HDR = dict(inputs={0x70: "perspective", 0x74: "perspective"}, targets=(0xF,))


def _frag53_ref(u: list[int], p: int) -> dict[str, int]:
    """Every result register of FRAG53 for uniforms ``u`` at pixel index ``p``."""
    r4, r5 = (p * 0x9E3779B1 + u[0]) & M32, (p * 0x85EBCA6B + u[1]) & M32
    h = lambda w, k: float(np.uint16((w >> 16 * k) & 0xFFFF).view(np.float16))  # noqa: E731
    f4, f5 = _flush(_f(r4)), _flush(_f(r5))
    p0, p1 = _s32(r4) < _s32(r5), r4 > r5
    with np.errstate(all="ignore"):
        fadd = _flush(np.float32(f4 + np.float32(1.5)))
    return {
        "R11": sum((0x3C00 if h(r4, k) < h(r5, k) else 0) << 16 * k for k in range(2)),
        "R12": r4 if f5 < 0 else r5,
        "R13": 0x3F800000 if p0 != p1 else 0,
        "R15": _vabsdiff4(r4, r5, r4, "3120", "6745", False, True, 0b1111, True),
        "R16": (r4 * 0x12345 + r5) & M32,
        "R17": 0x3F800000 if f4 < f5 else 0,
        "R18": 0x3F800000 if p0 else 0,
        "R19": int(np.float32(fadd).view(np.uint32)),
    }


def test_sm53_fragment_program_runs_the_alu_rows(gpu, tmp_path):
    """The Maxwell ALU rows (shader-u's and shader-alu's) in a fragment program: the graphics
    lowering admits them (``sm53/stage_alu.py``); each result register's bytes are a pixel's
    colour, equal to the definitions above for two sets of uniforms."""
    from quad_draw import H, W, draw_quad, program53
    from shader_svc import translate as tr
    from spirv_checks import spirv_val

    bad = []
    for res in sorted(_frag53_ref([1, 2], 0)):
        fs = tr.translate(tr.make_program(53, 3, program53(FRAG53.format(res=res), FRAG53_HDR)))
        spirv_val(fs, tmp_path, "fs")
        for u in ((0x89ABCDEF, 0x01234567), (0x3F800000, 0xBF000000)):
            c0 = struct.pack("<2I2If", *u, 0, 0, np.float32(1 / 255))
            img = draw_quad(gpu, fs, uniforms={0: c0 + bytes(256 - len(c0))})
            got = (img[..., 0] | img[..., 1] << 8 | img[..., 2] << 16 | img[..., 3] << 24).astype(np.int64)
            for y in range(H):
                for x in range(W):
                    want = _frag53_ref(list(u), x + 32 * y)[res]
                    g = int(got[y, x])
                    if not (_same_f32(g, want) if res == "R19" else g == want):
                        bad.append((res, x, y, hex(g), hex(want)))
    isa_coverage.record_exact_program(53, "test_alu_forms::FRAG53", FRAG53.format(res="R11").splitlines(), not bad)
    assert not bad, f"{len(bad)} pixels differ, first: {bad[:3]}"


def test_sm53_fragment_text_decodes_back():
    from shader_svc.sm53 import assemble as asm
    from shader_svc.sm53 import decode as dec

    text = FRAG53.format(res="R11")
    lines = [ln.strip() for ln in text.strip().splitlines()]
    assert [i.text() for i in dec.decode_stream(asm.assemble_program(text))][: len(lines)] == lines


@pytest.mark.heavy
def test_sm53_fragment_text_is_nvdisasms():
    import listings

    listings.check_sm53([FRAG53.format(res="R11")])
