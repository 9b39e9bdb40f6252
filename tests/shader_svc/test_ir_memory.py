"""The memory and warp operations in IR (``ir/ops.py``'s last block, ``lower/memory.py``):
an SM53 and an SM86 instruction of the same meaning become the same IR (the ISA parts only
read their fields), the builder and the lowering refuse misuse of the operations that pair
with another one's result, and each warp/atomic/local family lowers to its SPIR-V.  Their
results on a device are checked by the compute tests (``test_sm53_compute.py``,
``test_sm86_compute.py``) and the CUDA corpus (``test_cuda_corpus.py``)."""

from __future__ import annotations

import pytest

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, IRError
from shader_svc.ir.types import Type

REAL_EMIT = ir_spirv.emit
MEMORY_OPS = (
    "CBankDyn",
    "Local",
    "LoadLocal",
    "StoreLocal",
    "Atomic",
    "Generic",
    "Barrier",
    "MemoryFence",
    "Shfl",
    "Warp",
    "SharedPtr",
    "LoadSub",
    "StoreSub",
)


def _ir(monkeypatch, isa: int, text: str) -> list[list[tuple]]:
    """The IR blocks translating ``text`` builds that hold a memory or warp operation: each
    operation's name and attributes (the instruction record left out)."""
    from shader_svc.sm53 import assemble as asm53
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm53.to_spirv import translate_compute as t53
    from shader_svc.sm86 import decode as dec86
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import translate_compute as t86

    blocks: list[list[tuple]] = []

    def spy(lw, block):
        if any(o.op.name.startswith(MEMORY_OPS) for o in block.ops):
            blocks.append([(o.op.name, sorted((k, v) for k, v in o.attrs.items() if k != "inst")) for o in block.ops])
        return REAL_EMIT(lw, block)

    monkeypatch.setattr(ir_spirv, "emit", spy)
    if isa == 53:
        t53(dec53.decode_stream(asm53.assemble_program(text + "\nEXIT\n")))
    else:
        t86(dec86.decode_stream(assemble_program(text + "\nEXIT\n")))
    return blocks


SAME = [
    ("SHFL.BFLY PT, R0, R1, 0x1, 0x1f", None, ["ConstU32", "ConstU32", "GetReg", "ShflWarp", "SetReg", "ShflInRange", "SetPred"]),
    ("SHFL.IDX PT, R0, R1, R2, 0x1f", None, ["GetReg", "ConstU32", "GetReg", "ShflWarp", "SetReg", "ShflInRange", "SetPred"]),
    ("VOTE.ANY R0, PT, P0", None, ["GetPred", "WarpBallot", "WarpVote", "SetReg"]),
    ("VOTE.ALL R0, P1, !P0", None, ["GetPred", "WarpBallot", "WarpVote", "SetReg", "SetPred"]),
    ("BAR.SYNC 0x0", None, ["Barrier"]),
    (
        "LDL.64 R2, [R1+0x8]",
        None,
        ["GetReg", "ConstU32", "IAdd32", "LocalPtr", "LoadLocal32", "SetReg"] + ["LocalPtr", "LoadLocal32", "SetReg"],
    ),
    ("STL [R1+0x8], R0", None, ["GetReg", "ConstU32", "IAdd32", "LocalPtr", "GetReg", "StoreLocal32"]),
    ("LDS R0, [R1+0x8]", None, ["GetReg", "ConstU32", "IAdd32", "ConstU32", "IAdd32", "SharedPtr", "LoadShared32", "SetReg"]),
    (
        "ATOM.E.ADD R0, [R2], R4",
        "ATOMG.E.ADD.STRONG.GPU PT, R0, [R2.64], R4",
        ["GetReg", "GetReg", "Pack64", "ConstU64", "IAdd64", "GlobalPtr", "GetReg", "AtomicGlobal32", "SetReg"],
    ),
    (
        "RED.E.ADD [R2], R4",
        "RED.E.ADD.STRONG.GPU [R2.64], R4",
        ["GetReg", "GetReg", "Pack64", "ConstU64", "IAdd64", "GlobalPtr", "GetReg", "AtomicGlobal32"],
    ),
]


@pytest.mark.parametrize("t53,t86,want", SAME, ids=[s[0] for s in SAME])
def test_memory_and_warp_instructions_are_the_same_ir_on_both_isas(monkeypatch, t53, t86, want):
    """One meaning, written once: the two encodings become the same operations with the same
    attributes (mode, offsets, atomic op), so the same SPIR-V."""
    ir53 = _ir(monkeypatch, 53, t53)
    ir86 = _ir(monkeypatch, 86, t86 or t53)
    assert ir53 == ir86
    # programs with warp rows mark their running lanes at entry and return (``WarpLive``, the
    # emulated warp's bookkeeping, lower/warp.py): the instruction's own block is the rest
    blocks = [[name for name, _ in blk] for blk in ir53]
    assert [b for b in blocks if b != ["WarpLive"]] == [want]


def test_compare_and_swap_is_one_ir_operation_on_both_isas(monkeypatch):
    """CAS: SM53 takes (compare, new) from a register pair, SM86 from two operands; both
    become ``AtomicCasGlobal32`` (SM86 reads the new value first, as it always did)."""
    ir53 = _ir(monkeypatch, 53, "ATOM.E.CAS R0, [R2], R4, R5")
    ir86 = _ir(monkeypatch, 86, "ATOMG.E.CAS.STRONG.GPU PT, R0, [R2], R4, R5")
    assert [[n for n, _ in b] for b in ir53] == [[n for n, _ in b] for b in ir86]
    assert "AtomicCasGlobal32" in [n for n, _ in ir53[0]]


def test_generic_accesses_are_ir_with_their_words(monkeypatch):
    """Generic LD/ST: one GenericLoad of two words read with Word, one GenericStore64 of two
    register values (SM53's window is c[0x0][0x0], SM86's the pair at c[0x0][0x18])."""
    ld53 = [n for n, _ in _ir(monkeypatch, 53, "LD.E.64 R0, [R2]")[0]]
    ld86 = [n for n, _ in _ir(monkeypatch, 86, "LD.E.64 R0, [R2.64]")[0]]
    for ld in (ld53, ld86):
        assert ld.count("GenericLoad") == 1 and ld[-4:] == ["Word", "SetReg", "Word", "SetReg"]
    st86 = _ir(monkeypatch, 86, "ST.E.64 [R2.64], R4")[0]
    assert [n for n, _ in st86][-3:] == ["GetReg", "GetReg", "GenericStore64"]


def test_paired_operations_refuse_a_value_of_another_operation():
    """``Word`` takes only a GenericLoad's words (the builder's types); ``ShflInRange`` and
    ``WarpVote`` only the result of a ShflWarp / WarpBallot (the lowering says so)."""
    from shader_svc.lower.base import ComputeSpec
    from shader_svc.sm86.to_spirv import Compute86

    b = Block()
    r = b.get_reg(1)
    with pytest.raises(IRError, match=r"Word: arguments \['u32'\], wants \['words'\]"):
        b.emit("Word", r, index=0)
    for name, attrs in (("ShflInRange", {}), ("WarpVote", {"mode": 0})):
        b = Block()
        b.emit(name, b.get_reg(1), **attrs)
        lw = Compute86([], ComputeSpec((64, 1, 1)))
        lw.put_label(lw.label())  # the program's IR function: its entry block, the block, a return
        ir_spirv.emit(lw, b)
        lw.end("OpReturn")
        with pytest.raises(TypeError, match=f"{name} of a value that is not its operation's result"):
            lw._lower_ir()  # (rows are lowered with the whole function, after the optimiser)
    assert Type.WORDS.value == "words"


# --- shader-mem (issue 31): 64-bit atomics, INC/DEC, sub-word accesses, 64-bit shared words ------
SAME_MEM = [
    ("RED.E.ADD.U64 [R2], R4", "RED.E.ADD.64.STRONG.GPU [R2.64], R4", "AtomicGlobal64", ("op", "IAdd")),
    ("ATOM.E.MAX.S64 R0, [R2], R4", "ATOMG.E.MAX.S64.STRONG.GPU PT, R0, [R2.64], R4", "AtomicGlobal64", ("op", "SMax")),
    ("ATOM.E.INC R0, [R2], R4", "ATOMG.E.INC.STRONG.GPU PT, R0, [R2.64], R4", "AtomicGlobal32", ("op", "Inc")),
    ("RED.E.DEC [R2], R4", "RED.E.DEC.STRONG.GPU [R2.64], R4", "AtomicGlobal32", ("op", "Dec")),
    ("LDS.S8 R0, [R1+0x9]", "LDS.S8 R0, [R1+0x9]", "LoadSub", ("signed", True)),
    ("STL.U16 [R1+0x6], R0", "STL.U16 [R1+0x6], R0", "StoreSub", ("space", "local")),
    ("STG.E.U8 [R2+0x3], R0", "STG.E.U8 [R2.64+0x3], R0", "StoreSubGlobal", ("bytes", 1)),
]


@pytest.mark.parametrize("t53,t86,op,attr", SAME_MEM, ids=[s[0] for s in SAME_MEM])
def test_wide_atomics_and_sub_word_accesses_are_the_same_ir_on_both_isas(monkeypatch, t53, t86, op, attr):
    """SM53's and SM86's encodings of a 64-bit atomic, an INC/DEC and a sub-word access become
    the same operation with the same attributes (op, signedness, size, space)."""
    ir53 = _ir(monkeypatch, 53, t53)
    ir86 = _ir(monkeypatch, 86, t86)
    ops53 = [o for blk in ir53 for o in blk if o[0] == op]
    ops86 = [o for blk in ir86 for o in blk if o[0] == op]
    assert ops53 and ops53 == ops86
    assert attr in ops53[0][1]


def _caps_and_arrays(isa: int, text: str) -> tuple[set[int], list[int]]:
    """The capabilities of the module translating ``text`` and the element widths of its
    workgroup arrays (spirv-val checked)."""
    import struct
    import subprocess
    import tempfile

    from shader_svc.sm53 import assemble as asm53
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm53.to_spirv import translate_compute as t53
    from shader_svc.sm86 import decode as dec86
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import translate_compute as t86

    if isa == 53:
        spv = t53(dec53.decode_stream(asm53.assemble_program(text + "\nEXIT\n")))
    else:
        spv = t86(dec86.decode_stream(assemble_program(text + "\nEXIT\n")))
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spv)
        f.flush()
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", f.name], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    words = struct.unpack(f"<{len(spv) // 4}I", spv)
    caps, ints, arrays, ptr_wg = set(), {}, {}, []
    i = 5
    while i < len(words):
        n, opc = words[i] >> 16, words[i] & 0xFFFF
        w = words[i + 1 : i + n]
        if opc == 17:  # OpCapability
            caps.add(w[0])
        elif opc == 21:  # OpTypeInt
            ints[w[0]] = w[1]
        elif opc == 28:  # OpTypeArray
            arrays[w[0]] = w[1]
        elif opc == 32 and w[1] == 4:  # OpTypePointer Workgroup
            ptr_wg.append(w[2])
        i += n
    return caps, sorted(ints[arrays[p]] for p in ptr_wg if p in arrays)


@pytest.mark.parametrize(
    "isa,text",
    [(86, "ATOMS.CAS.64 R0, [R2], R4, R6\nSTS [R1+0x4], R0"), (53, "ATOMS.CAS.64 R0, [R2], R4, R6\nSTS [R1+0x4], R0")],
)
def test_a_64_bit_shared_atomic_makes_shared_memory_64_bit_words(isa, text):
    """With a 64-bit shared atomic the module declares Int64Atomics (capability 12) and its
    shared memory as 64-bit words (its 32-bit store then reaches half of one); without one,
    32-bit words and no Int64Atomics."""
    caps, widths = _caps_and_arrays(isa, text)
    assert 12 in caps and widths == [64]
    caps, widths = _caps_and_arrays(isa, text.split("\n")[1])
    assert 12 not in caps and widths == [32]
