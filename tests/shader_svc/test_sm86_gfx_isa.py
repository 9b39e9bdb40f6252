"""Graphics-stage instructions of the SM86 table (ALD, AST, IPA, KILL, TEX/TLD/TLD4/TXQ bound
and bindless, graphics S2R values) against NVIDIA's nvdisasm: lines we assemble print back as
exactly their text; randomly mutated words decode to nvdisasm's text or are refused, and what
both accept assembles back to the same word."""

from __future__ import annotations

import listings
import nvtools
from shader_svc.sm86 import decode as dec
from shader_svc.sm86.assemble import assemble_line, unshown

MASK64 = 2**64 - 1

# One line per form and modifier value we claim, as nvdisasm prints them.
LINES = """
ALD R0, a[0x80]
ALD.64 R2, a[0x90]
ALD.96 R4, a[0xa0]
ALD.128 R8, a[0x80]
ALD.O.128 R0, a[0x80]
ALD R0, a[0x2fc]
ALD R1, a[0x84], R3
AST a[0x80], R4
AST.64 a[0x88], R6
AST.128 a[0x70], R0
AST.P a[0x84], R4, R9
IPA.PASS R0, a[0x80]
IPA.PASS.CENTROID R1, a[0x84]
IPA.CONSTANT R2, a[0x88]
IPA.STATE R3, a[0x8c]
IPA.PASS R4, P2, a[0x7c]
IPA.PASS.OFFSET R0, a[0x90], R6
KILL
KILL !P0
@P1 KILL
S2R R0, SR_Y_DIRECTION
S2R R1, SR_INVOCATION_ID
S2R R2, SR_THREAD_KILL
TEX RZ, R4, R2, 0x0, 0x0, 2D
TEX R6, R4, R2, 0x0, 0x1, 2D
TEX RZ, R4, R2, 0x0, 0x3, 2D, 0x3
TEX.LZ RZ, R4, R2, 0x0, 0x2, 2D, 0x1
TEX.LL RZ, R4, R2, R8, 0x0, 0x0, 2D
TEX.LB.NODEP R12, R8, R0, R3, 0x1, 0x5, 3D
TEX P0, R10, R8, R0, 0x0, 0x1a, CUBE, 0x7
TEX RZ, R4, R2, 0x0, 0x0, ARRAY_2D
TEX.B RZ, R4, R2, R6, 2D
TEX.B.LZ R0, R4, R2, R6, 1D, 0x3
TLD.LZ RZ, R4, R2, 0x0, 0x0, 2D
TLD.LL RZ, R4, R2, R6, 0x0, 0x3, 2D
TLD.B.LZ RZ, R4, R2, R6, 2D
TLD4.R RZ, R4, R2, 0x0, 0x0, 2D
TLD4.G RZ, R4, R2, 0x0, 0x1, 2D
TLD4.A P6, RZ, R4, R2, 0x3, 0x5, 2D
TLD4.B.B RZ, R4, R2, R6, 2D
TXQ RZ, R4, R2, TEX_HEADER_DIMENSION, 0x0, 0x0, 0xf
TXQ R6, R4, R2, TEX_HEADER_TEXTURE_TYPE, 0x0, 0x2, 0x3
TXQ.B RZ, R4, R2, TEX_HEADER_DIMENSION, 0xf
""".strip().splitlines()


def _split(w: int) -> tuple[int, int]:
    return w & MASK64, w >> 64


def test_assembled_graphics_lines_print_back_as_their_text(nv_tools):
    words = [_split(assemble_line(t, 16 * i)) for i, t in enumerate(LINES)]
    ref = nvtools.nvdisasm_raw(words, "SM86")
    bad = [(t, r and r.text) for t, r in zip(LINES, ref) if r is None or r.text != t]
    assert not bad, bad
    # and our own decoder prints the same
    assert [dec.decode(*w, addr=16 * i).text() for i, w in enumerate(words)] == LINES


def test_mutated_graphics_words_decode_like_nvdisasm_or_are_refused(nv_tools):
    # bits from 12 up: the opcode kept, these rows are the point
    muts = listings.sm86_mutations([assemble_line(t, 0) for t in LINES], 1500, seed=86, flips=(1, 1, 2), low_bit=12)
    ref = nvtools.nvdisasm_raw(muts, "SM86")
    agree, wrong, back_wrong = 0, [], []
    for i, (w, r) in enumerate(zip(muts, ref)):
        try:
            inst = dec.decode(*w, addr=16 * i)
        except dec.DecodeError:
            continue
        if r is None or inst.text() != r.text:
            wrong.append((f"{w[1]:016x}{w[0]:016x}", r and r.text, inst.text()))
            continue
        agree += 1
        got = assemble_line(r.text, 16 * i, inst.control, unshown(inst))
        if got != (w[0] | w[1] << 64):
            back_wrong.append((r.text, f"{got ^ (w[0] | w[1] << 64):#x}"))
    assert not wrong, wrong[:10]
    assert not back_wrong, back_wrong[:10]
    assert agree > 300, agree  # refusing everything would fail here


def test_graphics_rows_are_refused_with_a_reason():
    # TEX with bit 91 (which nvdisasm refuses) and bindless TEX with RZ as its handle
    w = assemble_line("TEX RZ, R4, R2, 0x0, 0x0, 2D", 0) | 1 << 91
    try:
        dec.decode(*_split(w))
    except dec.DecodeError as e:
        assert "refused" in str(e) and "TEX" in str(e)
    else:
        raise AssertionError("bit 91 decoded")
    w = assemble_line("TEX.B RZ, R4, R2, R6, 2D", 0)
    w = (w & ~(0xFF << 32)) | 0xFF << 32
    try:
        dec.decode(*_split(w))
    except dec.DecodeError as e:
        assert "TEX" in str(e)
    else:
        raise AssertionError("TEX.B with RZ handle decoded")
