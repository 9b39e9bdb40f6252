"""SM53 P2R/R2P on the predicate file (PR: P0..P6 as bits 0..6; issue 31, shader-video2) on
lavapipe against a reference written from their public definitions: R2P sets each predicate i
whose mask bit i is set to bit i of Ra's byte n (Ra.Bn, bits 41..42; yuzu's register-set-predicate
decoder), P2R.Bn replaces the bits of ``(mask & 0xff) << 8n`` of Ra with the predicates shifted
alike (Ryujinx's EmitP2r; PT is not in the file, bit 7 reads 0).  ptxas -O3 keeps
__syncthreads_and/_or's predicates through ``R2P PR, R2, 0x3`` (corpus kernel sync_reduce); the
byte selects, register/immediate masks and a mask wider than a byte are this kernel's.  The
kernel is assembled by ``sm53/assemble.py``; every line prints back from its word as written,
and as nvdisasm prints it (heavy)."""

from __future__ import annotations


import numpy as np
import pytest

import isa_coverage
import sm53_ab

M32 = 0xFFFFFFFF

# params: a 0x140, b 0x148, out 0x150, n 0x158; R10 = a[i], R11 = b[i], R6 = a[i] ^ b[i]
KERNEL = (
    sm53_ab.head(0x4)
    + """\
        LOP.XOR R6, R10, R11
        R2P PR, R10, 0x7f
        P2R R12, PR, R11, 0x7f
        R2P PR, R11.B2, R6
        P2R.B1 R13, PR, R10, R6
        R2P PR, R10.B3, 0x55
        @P6 IADD32I R13, R13, 0x1
        P2R.B3 R14, PR, RZ, 0xff
        P2R.B2 R15, PR, R11, 0x3c
        STG.E.128 [R8], R12
        EXIT
"""
)


def _r2p(p: list[bool], v: int, byte: int, mask: int) -> list[bool]:
    return [bool(v >> (8 * byte + i) & 1) if mask >> i & 1 else p[i] for i in range(7)]


def _p2r(p: list[bool], a: int, byte: int, mask: int) -> int:
    bits = sum(1 << i for i in range(7) if p[i])
    m = (mask & 0xFF) << (8 * byte)
    return (a & ~m | (bits << (8 * byte)) & m) & M32


def _ref(x: int, y: int) -> list[int]:
    c = x ^ y
    p = _r2p([False] * 7, x, 0, 0x7F)
    out = [_p2r(p, y, 0, 0x7F)]
    p = _r2p(p, y, 2, c)
    out.append(_p2r(p, x, 1, c))
    p = _r2p(p, x, 3, 0x55)
    out[1] = (out[1] + p[6]) & M32
    out += [_p2r(p, 0, 3, 0xFF), _p2r(p, y, 2, 0x3C)]
    return out


def test_sm53_p2r_r2p_pr_match_their_definitions(compute_device):
    n = 256
    rng = np.random.default_rng(5302)
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    bad = sm53_ab.mismatches(sm53_ab.run(compute_device, KERNEL, [a, b], 4), a, b, _ref)
    isa_coverage.record_exact_program(53, "test_sm53_pr::KERNEL", KERNEL.splitlines(), not bad)
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"


def test_sm53_pr_kernel_text_decodes_back():
    got, lines = sm53_ab.printed_back(KERNEL)
    assert got == lines


@pytest.mark.heavy
def test_sm53_pr_kernel_text_is_nvdisasms():
    import listings

    listings.check_sm53([KERNEL])


def test_p2r_r2p_rows_every_bit_flipped():
    """P2R/R2P's rows (register, constant-bank and immediate masks; PR and CC): each row's
    reference word, every single-bit flip of it and 20 random 2-3-bit mutations print as
    nvdisasm 11.8 prints them (R2P's byte select on Ra: 'R2P PR, R2.B1, 0x3') or are refused,
    and every word printed equal assembles back to itself."""
    import isa_coverage as cov
    from shader_svc.sm53.table import ROWS

    rows = [r for r in ROWS if r.mnemonic in ("P2R", "R2P")]
    checks = cov.check_rows(53, rows, multi=20)
    assert len(rows) == 6 and not cov.failures(checks), cov.failures(checks)[:10]
    assert all(c.agree >= 5 for c in checks), [(c.row.mnemonic, c.agree) for c in checks]


def test_r2p_byte_select_prints_as_nvdisasm():
    """R2P's bits 41..42 (every value, the three mask forms, PR and CC) decode to the text
    nvdisasm 11.8 prints for the word (the table held them unclaimed before: such words were
    refused)."""
    import sm53_tools as tools

    from shader_svc.sm53 import decode as dec

    bases = (0x38F0000000370200, 0x5CF0000000370300, 0x4CF0001401370200)  # imm 0x3, R3, c[0x5][0x4c]
    words = [w | n << 41 | cc << 40 for w in bases for n in range(4) for cc in (0, 1)]
    ref = tools.nvdisasm53_raw(words)
    got = [dec.decode(w, addr=tools.raw_addr(i)).text() for i, w in enumerate(words)]
    assert [r.text for r in ref] == got
    assert sum(".B" in t for t in got) == 18
