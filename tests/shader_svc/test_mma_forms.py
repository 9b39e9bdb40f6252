"""SM86 warp matrix and asynchronous-copy forms the translator refuses (shader-mma): each is
assembled from nvdisasm's text, decodes back to that text, and the translator's error names the
offset, the word and the text (``sm86/lower_mma.py``, ``sm86/lower_async.py``).  The translated
forms are checked by execution in ``cuda_corpus_mma.py``."""

from __future__ import annotations

import pytest

REFUSED = [
    "HMMA.16816.F32 R4, R8, R12, R4, UP0",  # a uniform predicate on the multiply
    "HMMA.16816.F32 R4, -R8, R12, R4",  # a negated A
    "HMMA.16816.F32.TF32 R4, R8, R12, R4",  # tf32 is m16n8k8 / k4 only in PTX
    "IMMA.8816.S8.S8.SAT R4, R8.ROW, R12.COL, R4",
    "LDSM.16.M816.2 R4, [R8]",
    "MOVM.16.M832 R4, R8",
    "DMMA.884.RZ R4, R8, R12, R4",
]


@pytest.mark.parametrize("text", REFUSED)
def test_refused_form_names_offset_word_and_text(text):
    from shader_svc.sm86 import assemble as asm
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.to_spirv import TranslateError, translate_compute

    code = asm.assemble_program(f"S2R R0, SR_TID.X\n{text}\nEXIT\n")
    insts = dec.decode_stream(code)
    assert insts[1].text() == text
    with pytest.raises(TranslateError) as e:
        translate_compute(insts)
    msg = str(e.value)
    assert "offset 0x10" in msg and f"(word {insts[1].word:#x})" in msg and text in msg, msg


def test_translated_forms_make_modules():
    """Every translated form (one of each row and modifier the lowering reads) gives a module."""
    from shader_svc.sm86 import assemble as asm
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.to_spirv import translate_compute

    forms = [
        "LDGSTS.E.BYPASS.128.ZFILL [R4], [R8.64], P0",
        "LDGSTS.E.64 [R4+0x8], [R8.64+UR4+0x10]",
        "LDGDEPBAR",
        "DEPBAR.LE SB0, 0x1",
        "LDSM.16.M88 R4, [R8]",
        "LDSM.16.MT88.4 R4, [R8+0x100]",
        "MOVM.16.MT88 R4, R8",
        "HMMA.1688.F16 R4, R8, R12, RZ",
        "HMMA.16816.F32.BF16 R4, R8, R12, R16",
        "HMMA.1688.F32.TF32 R4, R8, R12, R16",
        "IMMA.8816.U8.S8 R4, R8.ROW, R12.COL, R4",
        "IMMA.16832.S8.U8 R4, R8.ROW, R12.COL, RZ",
        "DMMA.884 R4, R8, R12, R16",
        "BMMA.168256.XOR.POPC R4, R8.ROW, R12.COL, R4",
        "IMMA.8832.S4.U4 R4, R8.ROW, R12.COL, RZ",
        "IMMA.16864.S4.S4 R4, R8.ROW, R12.COL, R4",
        "HMMA.1684.F32.TF32 R4, R8, R12, RZ",
    ]
    for text in forms:
        insts = dec.decode_stream(asm.assemble_program(f"S2R R0, SR_TID.X\n{text}\nEXIT\n"))
        assert insts[1].text() == text
        assert translate_compute(insts)[:4] == b"\x03\x02\x23\x07", text  # the SPIR-V magic


def _setf(w: int, lo: int, width: int, v: int) -> int:
    return (w & ~(((1 << width) - 1) << lo)) | (v << lo)


# ptxas's words (nvcc 13, sm_86): ARRIVES.LDGSTSBAR.64 [URZ+0x100] (cp.async.mbarrier.arrive) and
# LDGSTS.E [R13], [R4.64] (bit 76: no uniform register)
ARRIVES = 0x000FE20008000A3F00010000FF0079B0
LDGSTS = 0x0003E2000B92184400000000040D7FAE
LDGSTS_UR = LDGSTS & ~(1 << 76)


def test_async_addresses_print_as_nvdisasm(nv_tools):
    """The address forms nvdisasm 13.5 shortens: ARRIVES leaves out an RZ register, LDGSTS's
    source leaves out '+URZ'; every word prints as nvdisasm prints it and assembles back (the
    one exception: a word without bit 76 and with URZ prints as ptxas's bit-76 word does, and
    assembles to that)."""
    import nvtools
    from shader_svc.sm86 import assemble as asm
    from shader_svc.sm86 import decode as dec

    words = [
        ARRIVES,
        _setf(ARRIVES, 64, 6, 4),
        _setf(ARRIVES, 24, 8, 2),
        _setf(_setf(ARRIVES, 24, 8, 2), 64, 6, 4),
        LDGSTS,
        _setf(LDGSTS, 24, 8, 255),
        _setf(LDGSTS_UR, 24, 8, 255),
        _setf(_setf(LDGSTS_UR, 24, 8, 255), 70, 1, 0),
        _setf(_setf(_setf(LDGSTS_UR, 24, 8, 255), 64, 6, 63), 70, 1, 0),
        _setf(_setf(LDGSTS_UR, 24, 8, 255), 64, 6, 63),
    ]
    ref = nvtools.nvdisasm_raw([(w & (2**64 - 1), w >> 64) for w in words])
    assert ref[0].text == "ARRIVES.LDGSTSBAR.64 [URZ+0x100]"
    for i, (w, r) in enumerate(zip(words, ref)):
        inst = dec.decode(w & (2**64 - 1), w >> 64)
        assert inst.text() == r.text, (hex(w), inst.text(), r.text)
        back = asm.assemble_line(r.text, 0, inst.control, asm.unshown(inst))
        if i == len(words) - 1:  # printed as the bit-76 form: assembles to that
            assert back >> 76 & 1 and dec.decode(back & (2**64 - 1), back >> 64).text() == r.text
        else:
            assert back == w, (hex(w), r.text, hex(back ^ w))
