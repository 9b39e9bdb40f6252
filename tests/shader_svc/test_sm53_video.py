"""SM53 forms of shader-video's lowering that no compiler of the corpus writes (issue 31), on
lavapipe against references written from their public definitions: IMADSP (read from nvdisasm
11.8's operand-type names: A * B + C of the typed fields, modulo 2^32; ptxas 12.9 writes BFE +
XMAD for PTX mul24/mad24 instead) and VSETP (the video operands' comparison into two predicates,
ISETP's fields).  The scalar video ops ptxas does write are checked by the corpus group ``video``
(tests/shader_svc/cuda_corpus_video.py).  The kernel is assembled by ``sm53/assemble.py``; every
line prints back from its word as written, and as nvdisasm prints it (heavy)."""

from __future__ import annotations


import numpy as np
import pytest

import isa_coverage
import sm53_ab

M32 = 0xFFFFFFFF

# params: a 0x140, b 0x148, out 0x150, n 0x158; R10 = a[i], R11 = b[i], R6 = a[i] ^ b[i]
KERNEL = (
    sm53_ab.head(0x5)
    + """\
        LOP.XOR R6, R10, R11
        IMADSP.U32.U24.U32 R12, R10, R11, R6
        IMADSP.S24.U16H0.S32 R13, R10, R11, R6
        IMADSP.U16H1.S16H0.S16H0 R14, R10, R11, R6
        IMADSP.S16H1.U24.S24 R15, R10, 0x1234, R6
        IMADSP.S32.S24.S16H0 R16, R10, R11, R6
        VSETP.LT.AND P0, PT, R10, R11, PT
        VSETP.GE.S16.S8.OR P1, P2, R10.H1, R11.B3, !P0
        VSETP.EQ.U8.U8.XOR P3, PT, R10.B2, R11.B2, P1
        SEL R17, R10, R11, P0
        SEL R18, R10, R11, P2
        SEL R19, R10, R11, P3
        STG.E.128 [R8], R12
        STG.E.128 [R8+0x10], R16
        EXIT
"""
)
SP_A = {"U32": (0, 32, 0), "S32": (0, 32, 1), "U24": (0, 24, 0), "S24": (0, 24, 1)}
SP_A.update({"U16H0": (0, 16, 0), "S16H0": (0, 16, 1), "U16H1": (16, 16, 0), "S16H1": (16, 16, 1)})


def _field(v: int, sh: int, w: int, signed: bool) -> int:
    x = (v >> sh) & ((1 << w) - 1)
    return x - (1 << w) if signed and x >> (w - 1) else x


def _imadsp(x: int, y: int, c: int, ta: str, tb: str, tc: str) -> int:
    """A * B + C, each operand the field its nvdisasm type names (C: 32, 24 or 16H0, signed when
    A or B is), modulo 2^32."""
    a, b = SP_A[ta], SP_A[tb]
    cs = bool(a[2] or b[2])
    cw = {"32": (0, 32), "24": (0, 24), "16H0": (0, 16)}[tc[1:]]
    return (_field(x, *a) * _field(y, *b) + _field(c, *cw, cs)) & M32


def _sel(v: int, t: str, s: str) -> int:
    """A video operand: the byte/half/word of ``v`` ``s`` names, extended by ``t``'s sign."""
    sh, w = {"": (0, 32), "B2": (16, 8), "B3": (24, 8), "H1": (16, 16), "H0": (0, 16)}[s]
    w = {"8": 8, "16": 16, "32": 32}[t[1:]] if s in ("", "H0") and t[1:] != "32" else w
    return _field(v, sh, w, t[0] == "S")


def _ref(x: int, y: int) -> list[int]:
    c = x ^ y
    out = [
        _imadsp(x, y, c, "U32", "U24", "U32"),
        _imadsp(x, y, c, "S24", "U16H0", "S32"),
        _imadsp(x, y, c, "U16H1", "S16H0", "S16H0"),
        _imadsp(x, 0x1234, c, "S16H1", "U24", "S24"),
        _imadsp(x, y, c, "S32", "S24", "S16H0"),
    ]
    p0 = _sel(x, "S32", "") < _sel(y, "S32", "")  # no types printed: both .S32
    q = _sel(x, "S16", "H1") >= _sel(y, "S8", "B3")
    p1, p2 = q or (not p0), (not q) or (not p0)
    p3 = (_sel(x, "U8", "B2") == _sel(y, "U8", "B2")) != p1
    out += [x if p else y for p in (p0, p2, p3)]
    return out


def test_sm53_imadsp_vsetp_match_their_definitions(compute_device):
    n = 256
    rng = np.random.default_rng(531)
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b[::4] = a[::4] ^ (rng.integers(0, 2, n // 4, dtype=np.uint64).astype(np.uint32) << 31)  # equal halves/bytes too
    bad = sm53_ab.mismatches(sm53_ab.run(compute_device, KERNEL, [a, b], 8), a, b, _ref)
    isa_coverage.record_exact_program(53, "test_sm53_video::KERNEL", KERNEL.splitlines(), not bad)
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"


def test_sm53_video_kernel_text_decodes_back():
    got, lines = sm53_ab.printed_back(KERNEL)
    assert got == lines


@pytest.mark.heavy
def test_sm53_video_kernel_text_is_nvdisasms():
    import listings

    listings.check_sm53([KERNEL])
