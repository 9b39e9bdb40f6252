"""NANOSLEEP (SM86; shader-tex): CUDA's __nanosleep(ns) "suspends the thread for a sleep
duration of approximately ns nanoseconds ... guaranteed to be in the interval [0, 2*ns]"
(CUDA C++ Programming Guide, "Nanosleep Function"), so sleeping 0 ns, i.e. nothing, is an exact
translation: each form becomes the same module as a NOP there (compute and fragment)."""

from __future__ import annotations

import pytest

from shader_svc.sm86 import decode as dec
from shader_svc.sm86.assemble import assemble_program
from shader_svc.sm86.to_spirv import translate_compute

BODY = "S2R R0, SR_TID.X\n{op}\nIADD3 R0, R0, 0x1, RZ\nEXIT\n"


@pytest.mark.parametrize("form", ["NANOSLEEP 0x10", "NANOSLEEP R2", "@P0 NANOSLEEP 0x100"])
def test_nanosleep_is_a_nop(form):
    insts = dec.decode_stream(assemble_program(BODY.format(op=form)))
    assert insts[1].text() == form and insts[1].mnemonic == "NANOSLEEP"
    nop = form.split("NANOSLEEP")[0] + "NOP"  # under the same guard
    want = translate_compute(dec.decode_stream(assemble_program(BODY.format(op=nop))))
    assert translate_compute(insts) == want


def test_nanosleep_in_a_fragment_program():
    from quad_draw import FS_HDR, spirv

    text = "IPA.PASS R0, a[0x80]\n{op}\nMOV R1, R0\nMOV R2, R0\nMOV R3, R0\nEXIT\n"
    assert spirv("fragment", text.format(op="NANOSLEEP 0x20"), FS_HDR) == spirv("fragment", text.format(op="NOP"), FS_HDR)
