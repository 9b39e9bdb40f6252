"""The texture rows of the IR (``ir/ops.py``'s texture block, lowered by ``lower/graphics.py``):
an SM53 and an SM86 texture instruction of the same meaning become the same IR row with the
same attributes (the ISA parts only read their fields and source registers), the builder
refuses an ill-typed use of a texel, and the optimiser drops the components nobody reads (and
the local-memory reads and generic-load words nobody uses).  What the rows compute is checked
on lavapipe against GLSL by the graphics tests (``test_sm86_draw.py``, ``test_sm53_gfx.py``,
``test_sm53_tex_dims.py``, ``test_tex_short_dims.py``, ``test_tld4_offsets.py``,
``test_sm53_tld4.py``)."""

from __future__ import annotations

import pytest

from shader_svc.ir import optimize as ir_opt
from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import BasicBlock, Block, Function, IRError, Op, Term

REAL_EMIT = ir_spirv.emit
ROWS = ("TexSample", "TexFetch", "TexGather", "TexQueryDims")


def _rows(monkeypatch, isa: int, text: str) -> list[tuple]:
    """The texture rows a fragment program's translation builds: name, attributes (the
    instruction left out), and the destination registers of the components, in order."""
    import quad_draw

    out: list[tuple] = []

    def spy(lw, block):
        for o in block.ops:
            if o.op.name in ROWS:
                attrs = sorted((k, v) for k, v in o.attrs.items() if k != "inst")
                words = {u.result.index: u.attrs["comp"] for u in block.ops if u.op.name == "TexelWord"}
                dst = [
                    (u.attrs["reg"], words[u.args[0].index])
                    for u in block.ops
                    if u.op.name == "SetReg" and u.args[0].index in words
                ]
                out.append((o.op.name, attrs, dst))
        return REAL_EMIT(lw, block)

    monkeypatch.setattr(ir_spirv, "emit", spy)
    if isa == 53:
        quad_draw.fragment53(text + "\nEXIT\n")
    else:
        quad_draw.spirv("fragment", text + "\nEXIT\n", quad_draw.FS_HDR)
    return out


def test_sm53_and_sm86_texture_instructions_build_the_same_rows(monkeypatch):
    # a level-zero 2D sample of slot 1, all four components
    s53 = _rows(monkeypatch, 53, "TEX.LZ R8, R4, 0x1, 2D, 0xf")
    s86 = _rows(monkeypatch, 86, "TEX.LZ R10, R8, R4, 0x0, 0x1, 2D")
    want = [("TexSample", [("arrayed", 0), ("dc", 0), ("dim", "2D"), ("lod", 1)], [(8, 0), (9, 1), (10, 2), (11, 3)])]
    assert s53 == want
    # SM86 (printed d2 first): the first two components to the pair R8, the rest to the pair R10
    assert s86 == want
    # the short form TEXS of the same meaning: components 0, 1 to R2, R3, 2, 3 to R6, R7
    assert _rows(monkeypatch, 53, "TEXS.LZ.NODEP R6, R2, R0, R1, 0x1, 2D, RGBA") == [
        ("TexSample", [("arrayed", 0), ("dc", 0), ("dim", "2D"), ("lod", 1)], [(2, 0), (3, 1), (6, 2), (7, 3)])
    ]
    # a gather of G and a size query
    g53 = _rows(monkeypatch, 53, "TLD4.G R0, R4, 0x0, 2D, 0xf")
    g86 = _rows(monkeypatch, 86, "TLD4.G R2, R0, R4, 0x0, 0x0, 2D")
    assert (
        g53
        == g86
        == [("TexGather", [("arrayed", 0), ("comp", 1), ("dc", 0), ("dim", "2D"), ("off", 0)], [(0, 0), (1, 1), (2, 2), (3, 3)])]
    )
    q = [("TexQueryDims", [("arrayed", 0), ("dim", "2D")], [(0, 0), (1, 1)])]
    assert _rows(monkeypatch, 53, "TXQ R0, RZ, TEX_HEADER_DIMENSION, 0x0, 0x3") == q
    assert _rows(monkeypatch, 86, "TXQ R2, R0, RZ, TEX_HEADER_DIMENSION, 0x0, 0x0, 0x3") == q


def test_texel_rows_refuse_ill_typed_uses():
    b = Block()
    z = b.const_u32(0)
    with pytest.raises(IRError, match="TexelWord"):
        b.emit("TexelWord", z, comp=0, float=True)  # a u32 is no texel
    with pytest.raises(IRError, match="TexSample"):
        b.emit("TexSample", z, z, z, z, z, dim="2D", arrayed=0, lod=0, dc=0, inst=None)  # five sources


def _key(o: Op) -> int:
    return ir_opt.ZERO if o.attrs["reg"] == 255 else 1000 + o.attrs["reg"]


def test_unread_components_local_reads_and_words_are_dropped():
    """A texel component, a local-memory read and a generic load's word that nobody reads go
    (their lowering has no effect); the texture access itself (it names its instruction) and
    what is read stay."""
    b = Block()
    z = b.const_u32(0)
    vec = b.emit("TexSample", z, z, z, z, z, z, dim="2D", arrayed=0, lod=0, dc=0, inst=None)
    used = b.emit("TexelWord", vec, comp=0, float=True)
    b.emit("TexelWord", vec, comp=1, float=True)  # unread
    p = b.emit("LocalPtr", b.get_reg(1), offset=0)
    b.op("LoadLocal32", p)  # unread
    a = b.const_u64(0x1000)
    words = b.emit("GenericLoad", a, a, words=4, inst=None)
    b.emit("Word", words, index=2)  # unread
    b.emit("StoreGlobal32", b.op("GlobalPtr", a), used)  # the component read
    fn = Function([BasicBlock(10, list(b.ops), None, Term("OpReturn"))])
    ir_opt.optimize(fn, _key)
    assert [it.op.name for it in fn.blocks[0].items] == ["TexSample", "TexelWord", "GenericLoad", "GlobalPtr", "StoreGlobal32"]


def test_sm53_and_sm86_attribute_loads_and_stores_build_the_same_rows(monkeypatch):
    """ALD.64 / AST.64 of a vertex program: one ``LoadInputF32`` / ``StoreOutputF32`` per word,
    its component the instruction's address's plus one per word, the registers in order."""
    import quad_draw
    import sm53_gfx_programs as p53

    text = "ALD.64 R4, a[0x90]\nAST.64 a[0x80], R4\nEXIT\n"
    got: dict[int, list] = {}
    for isa in (53, 86):
        seen: list = []

        def spy(lw, block, seen=seen):
            seen.extend((o.op.name, o.attrs["comp"]) for o in block.ops if o.op.name in ("LoadInputF32", "StoreOutputF32"))
            seen.extend(("SetReg", o.attrs["reg"]) for o in block.ops if o.op.name == "SetReg")
            seen.extend(("GetReg", o.attrs["reg"]) for o in block.ops if o.op.name == "GetReg")
            return REAL_EMIT(lw, block)

        monkeypatch.setattr(ir_spirv, "emit", spy)
        if isa == 53:
            p53.translate("vertex", p53.program("vertex", text, **quad_draw.VS_PASS_HDR))
        else:
            quad_draw.spirv("vertex", text, quad_draw.VS_PASS_HDR)
        got[isa] = seen
    assert (
        got[53]
        == got[86]
        == [
            ("LoadInputF32", 0),
            ("LoadInputF32", 1),
            ("SetReg", 4),
            ("SetReg", 5),
            ("StoreOutputF32", 0),
            ("StoreOutputF32", 1),
            ("GetReg", 4),
            ("GetReg", 5),
        ]
    )
