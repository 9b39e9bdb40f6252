"""SM86 R2P / UR2UP with a byte select (issue 31, decode-gaps) on lavapipe against a reference
written from their public definition: each predicate i (P0..P6, UP0..UP6) whose mask bit i is set
takes bit i of byte n of the source register; nvdisasm 13.5 prints the byte select (bits 76..77)
on the register, 'R2P PR, R2.B1, 0x7f', as SM53 prints its Ra.Bn (yuzu's register-set-predicate
decoder names the field).  The predicates are read back with P2R / UP2UR at byte 0 and with
P2R's own .Bn.  Two lines subtract a uniform register through its negate bit (bit 63: IADD3's
'-UR4', form 6, as ptxas -O3 subtracts clock readings; IMAD's addend, form 7).  The kernel is assembled by ``sm86/assemble.py``; every line prints back from its
word as written, and as nvdisasm prints it (heavy)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

M32 = 0xFFFFFFFF
BS = 64

# params (c[0x0][0x160..]): a, b, out, n; R10 = a[i], R11 = b[i], R6 = a[i] ^ b[i]
KERNEL = """
S2R R0, SR_TID.X
S2R R1, SR_CTAID.X
LEA R0, R1, R0, 0x6
IMAD.WIDE.U32 R2, R0, 0x4, RZ
IADD3 R4, P0, R2, c[0x0][0x160], RZ
IADD3.X R5, R3, c[0x0][0x164], RZ, P0, !PT
LDG.E R10, [R4.64]
IADD3 R4, P0, R2, c[0x0][0x168], RZ
IADD3.X R5, R3, c[0x0][0x16c], RZ, P0, !PT
LDG.E R11, [R4.64]
IMAD.WIDE.U32 R2, R0, 0x10, RZ
IADD3 R8, P0, R2, c[0x0][0x170], RZ
IADD3.X R9, R3, c[0x0][0x174], RZ, P0, !PT
LOP3.LUT R6, R10, R11, RZ, 0x3c, !PT
R2P PR, R10, 0x7f
P2R R12, PR, R11, 0x7f
R2P PR, R11.B2, R6
P2R.B1 R13, PR, R10, 0x7f
R2P PR, R10.B3, 0x55
@P6 IADD3 R13, R13, 0x1, RZ
P2R.B3 R14, PR, RZ, 0x7f
R2P PR, R11.B1, c[0x0][0x160]
P2R.B2 R14, PR, R14, 0x3c
ULDC UR4, c[0x0][0x168]
UR2UP UPR, UR4.B1, 0x7f
UP2UR UR5, UPR, URZ, 0x7f
MOV R15, UR5
IADD3 R15, R15, -UR4, RZ
IMAD R12, R12, R10, -UR4
STG.E.128 [R8.64], R12
EXIT
"""


def _r2p(p: list[bool], v: int, byte: int, mask: int) -> list[bool]:
    return [bool(v >> (8 * byte + i) & 1) if mask >> i & 1 else p[i] for i in range(7)]


def _p2r(p: list[bool], a: int, byte: int, mask: int) -> int:
    bits = sum(1 << i for i in range(7) if p[i])
    m = (mask & 0xFF) << (8 * byte)
    return (a & ~m | (bits << (8 * byte)) & m) & M32


def _ref(x: int, y: int, a_addr: int, b_addr: int) -> list[int]:
    c = x ^ y
    p = _r2p([False] * 7, x, 0, 0x7F)
    out = [_p2r(p, y, 0, 0x7F)]
    p = _r2p(p, y, 2, c)
    out.append(_p2r(p, x, 1, 0x7F))
    p = _r2p(p, x, 3, 0x55)
    out[1] = (out[1] + p[6]) & M32
    r14 = _p2r(p, 0, 3, 0x7F)
    p = _r2p(p, y, 1, a_addr & M32)
    out.append(_p2r(p, r14, 2, 0x3C))
    up = _r2p([False] * 7, b_addr & M32, 1, 0x7F)
    out.append(_p2r(up, 0, 0, 0x7F))
    # a negated uniform operand (bit 63 of the B slot): IADD3 (form 6) and IMAD's addend (form 7)
    out[3] = (out[3] - b_addr) & M32
    out[0] = (out[0] * x - b_addr) & M32
    return out


def _insts():
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program

    return dec.decode_stream(assemble_program(KERNEL))


def test_sm86_r2p_byte_select_matches_its_definition(compute_device):
    import isa_coverage
    import vk_compute
    from compute_dispatch import run_spirv, upload
    from shader_svc.lower.base import ComputeSpec
    from shader_svc.sm86.to_spirv import translate_compute

    n = 256
    rng = np.random.default_rng(8602)
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    spirv = translate_compute(_insts(), ComputeSpec((BS, 1, 1)))
    dev = compute_device
    ba, bb, bo = upload(dev, a), upload(dev, b), upload(dev, np.zeros(4 * n, np.uint32))
    params = struct.pack("<QQQI", ba.address, bb.address, bo.address, n)
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x17C, n, params, [bo], BS)
    out = out[: 4 * n].reshape(n, 4)
    bad = []
    for i in range(n):
        want = _ref(int(a[i]), int(b[i]), ba.address, bb.address)
        for w, v in enumerate(want):
            if int(out[i, w]) != v:
                bad.append((i, w, hex(int(a[i])), hex(int(b[i])), hex(int(out[i, w])), hex(v)))
    isa_coverage.record_exact_program(86, "test_sm86_pr::KERNEL", KERNEL.splitlines(), not bad)
    assert not bad, f"{len(bad)} results differ, first: {bad[:5]}"


def test_sm86_pr_kernel_text_decodes_back():
    lines = [ln.strip() for ln in KERNEL.strip().splitlines()]
    assert [i.text() for i in _insts()[: len(lines)]] == lines
    r2p = [i for i in _insts() if i.row.mnemonic in ("R2P", "UR2UP")]
    assert [i.ops["a"].get("bsel") for i in r2p] == [0, 2, 3, 1, 1]


@pytest.mark.heavy
def test_sm86_pr_kernel_text_is_nvdisasms():
    import listings

    listings.check_sm86([KERNEL])


def test_byte_select_with_reuse_flags_prints_as_nvdisasm():
    """The select prints after the reuse flag ('R3.reuse.B1'), in every R2P form and UR2UP."""
    import isa_sweep
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program

    lines = [
        "R2P PR, R3.reuse.B3, R3.reuse",
        "R2P PR, R3.reuse.B2, c[0x0][0x0]",
        "R2P PR, R3.reuse.B1, 0x3",
        "UR2UP UPR, UR2.B2, 0x7f",
    ]
    words = []
    for ln in lines:
        lo, hi = struct.unpack_from("<QQ", assemble_program(ln + "\nEXIT\n"))
        assert dec.decode(lo, hi).text() == ln
        words.append(lo | hi << 64)
    assert isa_sweep.oracle(86, words) == lines
