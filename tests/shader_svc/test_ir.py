"""The lowering's structure (issue 33): the IR's operation table, its builder's type checks and
its one lowering to SPIR-V; the ISA parts' ``RULES`` tables cover every instruction they
declare lowered; and one machine instruction of the IR family (FADD) becomes the same IR on
SM53 and SM86, so its meaning is written once."""

from __future__ import annotations

import pytest

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, IRError
from shader_svc.ir.ops import OPS
from shader_svc.ir.types import Type

REAL_EMIT = ir_spirv.emit


def test_every_ir_operation_has_one_lowering():
    assert set(OPS) == set(ir_spirv.LOWER)


def test_the_builder_refuses_an_ill_typed_operation():
    b = Block()
    r = b.get_reg(1)  # u32
    with pytest.raises(IRError, match=r"FAdd32: arguments \['u32', 'u32'\], wants \['f32', 'f32'\]"):
        b.op("FAdd32", r, r)
    f = b.op("BitcastF32", r)
    assert f.type is Type.F32 and b.op("FAdd32", f, f).type is Type.F32
    with pytest.raises(IRError, match="SetReg: attributes"):
        b.emit("SetReg", b.op("BitcastU32", f), reg=0)  # the register file is missing
    with pytest.raises(IRError, match="unknown IR operation"):
        b.op("FAdd33", f, f)


def _tables():
    from shader_svc.sm53.lower import LOWERED as L53
    from shader_svc.sm53.to_spirv import Compute53
    from shader_svc.sm53.to_spirv_gfx import GFX_LOWERED as G53
    from shader_svc.sm53.to_spirv_gfx import Gfx53
    from shader_svc.sm86.lower import LOWERED as L86
    from shader_svc.sm86.lower import Lower86
    from shader_svc.sm86.to_spirv import EXT, Compute86
    from shader_svc.sm86.to_spirv_gfx import GFX_LOWERED as G86
    from shader_svc.sm86.to_spirv_gfx import Gfx86

    return [(Lower86, L86), (Compute86, L86 | EXT), (Gfx86, G86), (Compute53, L53), (Gfx53, G53)]


@pytest.mark.parametrize("cls,lowered", _tables(), ids=lambda x: getattr(x, "__name__", ""))
def test_rules_cover_what_each_lowering_declares(cls, lowered):
    """Every lowering key a lowering accepts has a handler in its table (control flow, handled
    by the block structure, excepted), and every handler the table names exists."""
    control = set(cls.STRUCT_BRANCH) | set(cls.STRUCT_SKIP) | {"KILL", "KIL"}
    assert sorted(k for k in lowered if k not in cls.RULES and k not in control) == []
    assert sorted(k for k, m in cls.RULES.items() if not callable(getattr(cls, m, None))) == []


def _ir_of(monkeypatch, translate, insts, family: str = "FAdd") -> list[list[str]]:
    """The IR blocks a translation builds that hold an operation named ``family...`` (operand
    reads included)."""
    blocks: list[list[str]] = []

    def spy(lw, block):
        if any(o.op.name.startswith(family) for o in block.ops):
            blocks.append([o.op.name for o in block.ops])
        return REAL_EMIT(lw, block)

    monkeypatch.setattr(ir_spirv, "emit", spy)
    translate(insts)
    return blocks


def test_fadd_is_the_same_ir_on_both_isas(monkeypatch):
    from shader_svc.sm53 import assemble as asm53
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm53.to_spirv import translate_compute as t53
    from shader_svc.sm86 import decode as dec86
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import translate_compute as t86

    text = "FADD.FTZ R0, -R1, |R2|\nEXIT\n"
    ir86 = _ir_of(monkeypatch, t86, dec86.decode_stream(assemble_program(text)))
    ir53 = _ir_of(monkeypatch, t53, dec53.decode_stream(asm53.assemble_program(text)))
    assert (
        ir86
        == ir53
        == [
            [
                "GetReg",
                "BitcastF32",
                "FNeg32",
                "BitcastU32",
                "BitcastF32",
                "FFlushDenorm32",
                "GetReg",
                "BitcastF32",
                "FAbs32",
                "BitcastU32",
                "BitcastF32",
                "FFlushDenorm32",
                "FAdd32",
                "FFlushDenorm32",
                "BitcastU32",
                "SetReg",
            ]
        ]
    )


@pytest.mark.parametrize(
    "text,family,want",
    [
        ("ISETP.GE.U32.AND P0, PT, R0, R1, PT", "ICmp", ["GetReg", "GetReg", "ICmp32", "GetPred", "LAnd", "SetPred"]),
        (
            "DSETP.GT.AND P0, PT, R2, R4, PT",
            "FCmp",
            ["GetReg", "GetReg", "PackF64", "GetReg", "GetReg", "PackF64", "FCmp64", "GetPred", "LAnd", "SetPred"],
        ),
        (
            "DADD R0, R2, -R4",
            "FAdd64",
            [
                "GetReg",
                "GetReg",
                "PackF64",
                "GetReg",
                "GetReg",
                "PackF64",
                "FNeg64",
                "FAdd64",
                "BitcastU64",
                "Trunc32",
                "SetReg",
                "ConstU64",
                "Shr64",
                "Trunc32",
                "SetReg",
            ],
        ),
    ],
)
def test_comparisons_and_fp64_are_the_same_ir_on_both_isas(monkeypatch, text, family, want):
    """Integer and FP64 comparisons and FP64 arithmetic: one meaning, written once (the SM53
    and SM86 encodings become the same operations, so the same SPIR-V)."""
    from shader_svc.sm53 import assemble as asm53
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm53.to_spirv import translate_compute as t53
    from shader_svc.sm86 import decode as dec86
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import translate_compute as t86

    text += "\nEXIT\n"
    ir86 = _ir_of(monkeypatch, t86, dec86.decode_stream(assemble_program(text)), family)
    ir53 = _ir_of(monkeypatch, t53, dec53.decode_stream(asm53.assemble_program(text)), family)
    assert ir86 == ir53 == [want]


def _imports(folder: str) -> dict[str, set[str]]:
    """Module file -> the ``shader_svc`` modules it imports (anywhere in its body)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "shader_svc" / folder
    out = {}
    for f in sorted(root.rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
        out[f.name] = {n for n in names if n.startswith("shader_svc")}
    return out


@pytest.mark.parametrize(
    "folder,forbidden",
    [
        ("sm53", "shader_svc.sm86"),
        ("sm86", "shader_svc.sm53"),
        ("isa", "shader_svc.sm"),
        ("ir", "shader_svc.sm"),
        ("lower", "shader_svc.sm"),
    ],
)
def test_layers(folder, forbidden):
    """The neutral core (isa/, ir/, lower/) knows no ISA; neither ISA part imports the other."""
    bad = {f: sorted(n for n in names if n.startswith(forbidden)) for f, names in _imports(folder).items()}
    assert {f: n for f, n in bad.items() if n} == {}


def test_translator_identity_covers_every_translator_folder():
    """Every folder of the translator is hashed into the translator id, so a change to the IR,
    the shared lowering or an ISA part makes the service translate again (failed while ``ir/``
    was missing from ``identity.SOURCES``)."""
    from shader_svc import identity

    folders = {p.name for p in identity.PKG.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert sorted(folders - set(identity.SOURCES)) == []


def test_rows_are_lowered_with_the_function_and_spirv_while_building_is_refused():
    """A handler's rows join the function as they are, those that name their instruction too
    (surfaces, generic 64-bit compare-exchange: checked when built, nothing written; before,
    rows without a check were lowered at once into raw SPIR-V items); SPIR-V written while the
    function is built, by anything but the driver's control flow and variables, is an
    ``IRError`` naming the SPIR-V instruction."""
    from shader_svc.sm86.to_spirv import Compute86, ComputeSpec

    lw = Compute86([], ComputeSpec())
    lw.fn.start(lw.label())
    b = Block()
    z, a = b.const_u32(0), b.const_u64(0x1000)
    v = b.emit("SurfaceLoad32", z, z, z, z, dim=3, ba=1, clamp=1, esize=4, word=0, signed=0, inst=None)
    b.set_reg(1, v)
    b.emit("GenericAtomicCas64", a, a, a, a, inst=None)
    ir_spirv.emit(lw, b)
    assert [o.op.name for o in lw.fn.current.items] == ["ConstU32", "ConstU64", "SurfaceLoad32", "SetReg", "GenericAtomicCas64"]
    assert len(lw.fn.blocks) == 1  # no SPIR-V blocks, no pool, no variable: nothing lowered yet
    assert "_surface_pools" not in vars(lw) and not any(k.startswith("gcas64") for k in lw.vars)
    with pytest.raises(IRError, match="OpIAdd: SPIR-V written while the IR function is built"):
        lw.op("OpIAdd", lw.u32, lw.c(1), lw.reg(1))
    with pytest.raises(IRError, match="OpMemoryBarrier: SPIR-V written"):
        lw.do("OpMemoryBarrier", lw.c(1), lw.c(0))
    lw.do("OpReturn")  # the driver's control flow: the block's terminator
    assert lw.fn.blocks[0].term.kind == "OpReturn"
