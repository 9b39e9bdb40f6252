"""Cache control (shader-ctl, ``shader_svc/lower/cache.py``): the hints with no observable
effect (prefetches, eviction priority, discard; CCTLL of thread-private local memory) translate
to exactly what a NOP there gives; write-back, invalidation, reset and query are refused by name.
The forms ptxas emits run in the corpus kernel ``cache_hints`` (``cuda_corpus_ctl.py``)."""

from __future__ import annotations

import pytest

from shader_svc.lower.base import TranslateError
from shader_svc.sm53 import assemble as asm53
from shader_svc.sm53 import decode as dec53
from shader_svc.sm53.to_spirv import translate_compute as tr53
from shader_svc.sm86 import decode as dec86
from shader_svc.sm86.assemble import assemble_program as asm86
from shader_svc.sm86.to_spirv import translate_compute as tr86

BODY86 = "S2R R0, SR_TID.X\n{op}\nIADD3 R0, R0, 0x1, RZ\nEXIT\n"
BODY53 = "S2R R0, SR_TID.X\n{op}\nIADD32I R0, R0, 0x1\nEXIT\n"


@pytest.mark.parametrize(
    "form",
    [
        "CCTL.E.PF1 [R2+0x80]",
        "CCTL.E.PF2 [R2]",
        "CCTL.E.PML2 [R2+0x80]",
        "CCTL.E.DML2 [R2]",
        "CCTL.E.RML2 [R2]",
        "@P0 CCTL.E.PF2 [R2]",
        "CCTLL.WB [R2]",
    ],
)
def test_sm86_hints_are_nops(form):
    insts = dec86.decode_stream(asm86(BODY86.format(op=form)))
    assert insts[1].text() == form
    nop = form.split("CCTL")[0] + "NOP"
    assert tr86(insts) == tr86(dec86.decode_stream(asm86(BODY86.format(op=nop))))


@pytest.mark.parametrize("form,op", [("CCTL.E.IV [R2]", "IV"), ("CCTL.E.WB [R2]", "WB"), ("CCTL.E.RS [R2]", "RS")])
def test_sm86_coherence_operations_are_refused(form, op):
    insts = dec86.decode_stream(asm86(BODY86.format(op=form)))
    with pytest.raises(TranslateError) as e:
        tr86(insts)
    assert f"cache operation {op} not translated" in str(e.value) and "offset 0x10" in str(e.value)


@pytest.mark.parametrize("form", ["CCTL.E.PF1 [R2+0x100]", "CCTL.PF1.5 [R2]", "CCTL.E.C.PF2 [R2]"])
def test_sm53_hints_are_nops(form):
    insts = dec53.decode_stream(asm53.assemble_program(BODY53.format(op=form)))
    assert insts[1].text() == form
    want = tr53(dec53.decode_stream(asm53.assemble_program(BODY53.format(op="NOP"))))
    assert tr53(insts) == want


@pytest.mark.parametrize("form,op", [("CCTL.E.IV [R2]", "IV"), ("CCTL.WB [R2]", "WB"), ("CCTL.QRY1[R2]", "QRY1")])
def test_sm53_coherence_operations_are_refused(form, op):
    insts = dec53.decode_stream(asm53.assemble_program(BODY53.format(op=form)))
    assert insts[1].text() == form
    with pytest.raises(TranslateError, match=f"cache operation {op} not translated"):
        tr53(insts)
