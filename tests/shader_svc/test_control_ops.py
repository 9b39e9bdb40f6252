"""Control instructions (shader-tex).

- NANOSLEEP (SM86): CUDA's __nanosleep(ns) "suspends the thread for a sleep duration of
  approximately ns nanoseconds ... guaranteed to be in the interval [0, 2*ns]" (CUDA C++
  Programming Guide, "Nanosleep Function"), so sleeping 0 ns, i.e. nothing, is an exact
  translation: each form becomes the same module as a NOP there (compute and fragment).
- BAR.SYNC's memory semantics: PTX bar.sync orders all the CTA's memory accesses (membar.cta
  semantics), so the workgroup barrier covers shared, global (buffer addresses) and image
  memory: AcquireRelease | UniformMemory | WorkgroupMemory | ImageMemory (SPIR-V "Memory
  Semantics" 0x8 | 0x40 | 0x100 | 0x800).
"""

from __future__ import annotations

import subprocess
import tempfile

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


@pytest.mark.parametrize("isa", [86, 53])
def test_barrier_orders_shared_global_and_image_memory(isa):
    if isa == 86:
        spv = translate_compute(dec.decode_stream(assemble_program("BAR.SYNC.DEFER_BLOCKING 0x0\nEXIT\n")))
    else:
        from shader_svc.sm53 import decode as dec53
        from shader_svc.sm53.assemble import assemble_program as asm53
        from shader_svc.sm53.to_spirv import translate_compute as tc53

        spv = tc53(dec53.decode_stream(asm53("BAR.SYNC 0x0\nEXIT\n")))
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spv)
        f.flush()
        text = subprocess.run(["spirv-dis", "--raw-id", f.name], capture_output=True, text=True, check=True).stdout
    consts = dict(
        (line.split()[0], int(line.split()[-1]))
        for line in text.splitlines()
        if " = OpConstant " in line and line.split()[-1].isdigit()
    )
    bars = [line.split() for line in text.splitlines() if "OpControlBarrier" in line]
    assert len(bars) == 1, bars
    assert consts[bars[0][-1]] == 0x8 | 0x40 | 0x100 | 0x800
