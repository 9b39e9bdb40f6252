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
