"""Indirect branches (shader-ctl, ``shader_svc/lower/indirect.py``): BRX translated where its
targets are bounded by a jump table in a constant bank of the program, refused by name where
not.  The executed forms (what ptxas emits for PTX ``brx.idx`` on sm_86 and sm_53, -O3 and -G)
are the corpus group ``ctl_switch`` (``cuda_corpus_ctl.py``, run by test_cuda_corpus.py); these
tests hold the refusals and the bounding on hand-assembled programs."""

from __future__ import annotations

import struct
import pytest

from shader_svc.lower.base import ComputeSpec, TranslateError
from shader_svc.sm53 import decode as dec53
from shader_svc.sm53.assemble import assemble_program as asm53
from shader_svc.sm53.to_spirv import translate_compute as tr53
from shader_svc.sm86 import decode as dec86
from shader_svc.sm86.assemble import assemble_program as asm86
from shader_svc.sm86.to_spirv import translate_compute as tr86

# SM86: a 3-way table at 0x40 (BRX at 0x30: next = 0x40, field -0x40); targets 0x40, 0x60, 0x80
SM86 = """S2R R0, SR_TID.X
LOP3.LUT R0, R0, 0x3, RZ, 0xc0, !PT
{ldc}
BRX R2 -0x40
MOV R4, 0x1
BRA 0x90
MOV R4, 0x2
BRA 0x90
MOV R4, 0x3
EXIT
"""
TABLE = struct.pack("<3I", 0x40, 0x60, 0x80)


def _spv_ok(spv: bytes) -> None:
    from cuda_corpus import spirv_val

    assert spirv_val(spv) == "ok"


def _insts86(ldc: str = "LDC R2, c[0x2][R0]"):
    return dec86.decode_stream(asm86(SM86.format(ldc=ldc)))


def test_sm86_brx_bounded_by_its_table(nv_tools):
    insts = _insts86()
    assert insts[3].text() == "BRX R2 -0x40"
    _spv_ok(tr86(insts, ComputeSpec(banks=((2, TABLE),))))


def test_sm86_brx_without_the_bank_is_refused():
    with pytest.raises(TranslateError) as e:
        tr86(_insts86())
    msg = str(e.value)
    assert "offset 0x30" in msg and "BRX R2 -0x40" in msg and "word 0x" in msg and "not bounded" in msg


def test_sm86_brx_from_a_computed_register_is_refused():
    with pytest.raises(TranslateError, match="R2 is not read by an LDC"):
        tr86(_insts86("IADD3 R2, R0, 0x40, RZ"), ComputeSpec(banks=((2, TABLE),)))


def test_sm86_brx_table_words_outside_the_code_are_refused():
    with pytest.raises(TranslateError, match="no word of constant bank 0x2 is a target"):
        tr86(_insts86(), ComputeSpec(banks=((2, struct.pack("<2I", 0x44, 0x1000)),)))


def test_sm86_brx_entered_between_table_read_and_branch_is_refused():
    # a branch into the BRX itself: the path it comes from did not read the table
    text = SM86.format(ldc="LDC R2, c[0x2][R0]").replace("EXIT\n", "BRA 0x30\n")
    with pytest.raises(TranslateError, match="not bounded"):
        tr86(dec86.decode_stream(asm86(text)), ComputeSpec(banks=((2, TABLE),)))


# SM53: BRX at 0x28 (next 0x30, a group's control word: the target enters 0x38)
SM53 = """S2R R0, SR_TID.X
LOP32I.AND R0, R0, 0x3
SHL R0, R0, 0x2
LDC R2, c[0x2][R0]
BRX R2 -0x30
MOV32I R4, 0x1
EXIT
MOV32I R4, 0x2
EXIT
"""


def test_sm53_brx_bounded_by_its_table(nv_tools):
    insts = dec53.decode_stream(asm53(SM53))
    brx = next(i for i in insts if i.row.ir == "BRX")
    assert brx.text() == "BRX R2 -0x30"
    at = {i.text(): i.addr for i in insts}
    table = struct.pack("<2I", at["MOV32I R4, 0x1"], at["MOV32I R4, 0x2"])  # next + R2 - 0x30 = R2
    _spv_ok(tr53(insts, ComputeSpec(banks=((2, table),))))
    with pytest.raises(TranslateError, match=f"offset {brx.addr:#x}.*not bounded"):
        tr53(insts)


# --- shader-ctl (session 27): LEPC, calls through registers, barrier reductions, mbarriers ------
# (the executed compiler forms are the corpus groups ctl_call / ctl_bar / ctl_mbar)
LEPC86 = """S2R R0, SR_TID.X
LEPC R2
MOV R6, 0x4
IMAD.WIDE R4, R0, R6, c[0x0][0x170]
IADD3 R2, R2, R0, R3
STG.E [R4.64], R2
EXIT
"""


def test_sm86_lepc_is_its_own_offset_from_the_code_start(compute_device):
    """LEPC gives its own address (nvcc computes a return address as LEPC - LEPC's offset + the
    return point), counted from the code's start as CALL.ABS/RET.ABS targets are: 0x10 here, the
    high word 0 (out[i] = lo + i + hi)."""
    import numpy as np
    import vk_compute
    from compute_dispatch import run_spirv, upload

    insts = dec86.decode_stream(asm86(LEPC86))
    assert insts[1].text() == "LEPC R2"
    spv = tr86(insts, ComputeSpec((64, 1, 1)))
    _spv_ok(spv)
    n = 64
    bo = upload(compute_device, np.zeros(n, np.uint32))
    params = struct.pack("<QQQi", 0, 0, bo.address, n)
    (out,) = run_spirv(compute_device, spv, vk_compute.cbank0, 0x17C, n, params, [bo], 64)
    ok = out[:n].tolist() == [0x10 + i for i in range(n)]
    import isa_coverage  # the coverage table's "executed exactly" column

    isa_coverage.record_exact_program(86, "test_control_indirect::LEPC86", LEPC86.splitlines(), ok)
    assert ok, out[:8]


def test_sm53_lepc_is_refused_by_name():
    insts = dec53.decode_stream(asm53("LEPC R2 ;\nEXIT ;\n"))
    with pytest.raises(TranslateError, match=r"offset 0x8: LEPC R2 \(word 0x50d0000000070002\): not translated"):
        tr53(insts)


def test_sm86_call_to_an_address_from_a_bank_outside_the_program_is_refused():
    """nvcc's assert calls __assertfail through an address read from constant bank 4."""
    code = asm86("MOV R2, 0x48\nLDC.64 R2, c[0x4][R2]\nMOV R20, 0x40\nCALL.ABS.NOINC R2\nEXIT\n")
    with pytest.raises(TranslateError, match=r"CALL.ABS.NOINC R2 .*constant bank 0x4, which is not part of the program"):
        tr86(dec86.decode_stream(code))


def test_sm86_bar_red_over_part_of_the_workgroup_is_refused():
    code = asm86("BAR.RED.POPC.DEFER_BLOCKING 0x1, 0x20, P0\nB2R.RESULT R4\nEXIT\n")
    insts = dec86.decode_stream(code)
    assert [i.text() for i in insts[:2]] == ["BAR.RED.POPC.DEFER_BLOCKING 0x1, 0x20, P0", "B2R.RESULT R4"]
    with pytest.raises(TranslateError, match="a barrier of 32 threads in a workgroup of 64"):
        tr86(insts, ComputeSpec((64, 1, 1)))
    _spv_ok(tr86(insts, ComputeSpec((32, 1, 1))))  # the whole workgroup: translated
    guarded = dec86.decode_stream(asm86("@P1 BAR.RED.OR.DEFER_BLOCKING 0x0, P0\nB2R.RESULT RZ, P2\nEXIT\n"))
    with pytest.raises(TranslateError, match="guarded barrier reduction not translated"):
        tr86(guarded)


def test_sm86_guarded_arrives_is_refused():
    insts = dec86.decode_stream(asm86("@P0 ARRIVES.LDGSTSBAR.64 [URZ+0x100]\nEXIT\n"))
    with pytest.raises(TranslateError, match="guarded ARRIVES not translated"):
        tr86(insts)


def test_sm53_jmx_to_an_address_from_a_bank_outside_the_program_is_refused():
    """ptxas's assert: PRET + JMX through __assertfail's address in constant bank 4."""
    code = asm53("MOV32I R3, 0x48 ;\nLDC R3, c[0x4][R3] ;\nPRET 0x30 ;\nJMX R3 ;\nEXIT ;\n")
    insts = dec53.decode_stream(code)
    assert [i.text() for i in insts][2:4] == ["PRET 0x30", "JMX R3"]
    with pytest.raises(TranslateError, match=r"JMX R3 .*constant bank 0x4, which is not part of the program"):
        tr53(insts)


def test_sm53_pret_noinc_is_refused_by_name():
    insts = dec53.decode_stream(asm53("PRET.NOINC 0x18 ;\nEXIT ;\n"))
    with pytest.raises(TranslateError, match="PRET.NOINC 0x18: modifier inc not translated"):
        tr53(insts)


# --- indirect-refuse (issue 31): calls through a register whose targets the program does not bound
_LOADED86 = "MOV R4, c[0x0][0x160]\nMOV R5, c[0x0][0x164]\n{load}\nMOV R20, 0x60\nCALL.ABS.NOINC R2\nEXIT\nEXIT\n"


def test_sm86_call_through_a_pointer_loaded_from_global_memory_is_refused_without_data():
    """The callee's address is in memory the host wrote (a vtable, a __device__ table): without
    the program's data no word of the program bounds it (the old code took the program's move
    immediates, 0x60 here, as the only callee)."""
    insts = dec86.decode_stream(asm86(_LOADED86.format(load="LD.E.64 R2, [R4.64]")))
    with pytest.raises(
        TranslateError,
        match=r"offset 0x40: CALL.ABS.NOINC R2 .*call through R2: call target loaded from global memory with no program data \(written at 0x20 by LD.E.64 R2, \[R4.64\]\)",
    ):
        tr86(insts)
    _spv_ok(tr86(insts, ComputeSpec(data=((0x7000_0000, struct.pack("<Q", 0x60)),))))  # with the data: bounded


def test_sm86_call_through_shared_memory_or_arithmetic_is_refused():
    shared = dec86.decode_stream(asm86(_LOADED86.format(load="LDS R2, [R4]")))
    with pytest.raises(TranslateError, match="call target loaded from shared memory, of which the translator has no image"):
        tr86(shared)
    added = dec86.decode_stream(asm86("MOV R2, 0x40\nIADD3 R2, R2, 0x10, RZ\nMOV R20, 0x40\nCALL.ABS.NOINC R2\nEXIT\nEXIT\n"))
    with pytest.raises(TranslateError, match=r"call target computed by IADD3, which the analysis cannot bound \(written at 0x10"):
        tr86(added, ComputeSpec(data=((0x7000_0000, struct.pack("<Q", 0x50)),)))


def test_sm86_call_whose_register_joins_a_global_load_is_refused():
    """One path moves a code address, the other loads one from global memory: every writer
    that reaches the call counts (the old code saw no writer on the straight line and took the
    program's immediates)."""
    code = "MOV R4, c[0x0][0x160]\nMOV R5, c[0x0][0x164]\nMOV R2, 0x80\n@P0 BRA 0x50\nLD.E.64 R2, [R4.64]\nMOV R20, 0x70\nCALL.ABS.NOINC R2\nEXIT\nEXIT\n"
    with pytest.raises(TranslateError, match=r"CALL.ABS.NOINC R2 .*global memory with no program data \(written at 0x40"):
        tr86(dec86.decode_stream(asm86(code)))


def test_sm53_jmx_through_a_global_load_is_refused_without_data():
    code = asm53("MOV R4, c[0x0][0x140] ;\nLDG.E R3, [R4] ;\nPRET 0x38 ;\nJMX R3 ;\nEXIT ;\nEXIT ;\n")
    insts = dec53.decode_stream(code)
    with pytest.raises(TranslateError, match=r"JMX R3 .*call target loaded from global memory with no program data"):
        tr53(insts)


# shader-size: a function pointer copied into another register and kept across a call, and a
# return address set before a block boundary (0x90 is a branch target: its block holds only the
# CALL), as nvcc -G code has them.  Both have one value on every path (``known_values``), so
# the program is structured (no dispatcher loop: no OpSwitch) and runs: out[i] = i + 0x100 + 7.
POINTER86 = """S2R R0, SR_TID.X
MOV R6, 0x4
IMAD.WIDE R8, R0, R6, c[0x0][0x170]
MOV R2, 0x100
MOV R28, R2
MOV R20, 0x70
CALL.ABS.NOINC 0x120
MOV R20, 0xa0
@P0 BRA 0x90
CALL.ABS.NOINC R28
STG.E [R8.64], R0
EXIT
EXIT
EXIT
EXIT
EXIT
IADD3 R0, R0, 0x7, RZ
RET.ABS.NODEC R20 0x0
IADD3 R0, R0, 0x100, RZ
RET.ABS.NODEC R20 0x0
"""


def test_sm86_one_valued_pointer_and_return_address_are_structured(compute_device):
    import numpy as np
    import vk_compute
    from compute_dispatch import run_spirv, upload

    insts = dec86.decode_stream(asm86(POINTER86))
    assert [i.text() for i in insts if i.addr in (0x80, 0x90, 0x100, 0x120)] == [
        "@P0 BRA 0x90",
        "CALL.ABS.NOINC R28",
        "IADD3 R0, R0, 0x7, RZ",
        "IADD3 R0, R0, 0x100, RZ",
    ]
    spv = tr86(insts, ComputeSpec((64, 1, 1)))
    _spv_ok(spv)
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spv)
        f.flush()
        text = subprocess.run(["spirv-dis", f.name], capture_output=True, text=True, check=True).stdout
    assert "OpSwitch" not in text  # structured: the calls inlined, no dispatcher loop
    n = 64
    bo = upload(compute_device, np.zeros(n, np.uint32))
    params = struct.pack("<QQQi", 0, 0, bo.address, n)
    (out,) = run_spirv(compute_device, spv, vk_compute.cbank0, 0x17C, n, params, [bo], 64)
    assert out[:n].tolist() == [i + 0x107 for i in range(n)], out[:8]
