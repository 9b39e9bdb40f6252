"""Textures beyond 2D (issue #3's gaps): SM53 short forms (TEXS / TLDS: 2D array, 3D and cube
samples, 1D / 2D array / 3D fetches, TLDS .AOFFI, TEXS .DC), SM86's full forms on the same
dimensions (Ampere has no short forms), cube arrays on both, TXQ on a slot's non-2D view, and
TEX .DC on both.

Which register holds what (the layer, each coordinate, the level, the offsets) is not something
we decide: ptxas (NVIDIA's assembler, PyPI) packs them when it compiles PTX ``tex``
instructions to TEXS / TLDS, and ``test_packing_is_what_ptxas_makes`` reads that packing back
from its output (nvdisasm 11.8's listing says which parameter each register was loaded from)
and compares it with the lowering's table (``sm53.to_spirv_gfx.TEXS_FORMS`` / ``TLDS_FORMS``).
SM86's split of the source list over Ra and Rb is read back the same way (nvdisasm 13.5).  The
draws then check the lowering on lavapipe against numpy's texels, and the listings print back
under nvdisasm as written."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

import listings
from ptxas_packing import V, packed_sm53, ptx_kernel, register_sources
from isa_coverage import exact_program
from quad_draw import FS53_HDR, FS_HDR, TS, VS_PASS, H, W, draw53, draw86, program, program53, uv
from shader_svc import translate as tr
from shader_svc.sm53.to_spirv_gfx import TEXS_FORMS, TLDS_FORMS
from shader_svc.sm86.to_spirv import TranslateError
from spirv_checks import spirv_val
from texel_refs import cube_texel, gather

# --- the packing, from ptxas -------------------------------------------------------------------
# kernel parameters: out (u64) at 0x140, then a, b, c, d, e (32-bit) at 0x148..0x158; PTX passes
# a, b, c as the coordinates, d as the array layer, e as the level
ROLE_PARAM = {"x": 0x148, "y": 0x14C, "z": 0x150, "layer": 0x154, "lod": 0x158, "off": "bfi", "dref": 0x150}
# PTX instruction -> (mnemonic, target) ptxas is expected to make of it
PTX_CASES = {
    f"tex.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}];": ("TEXS", 1),
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], 0f00000000;": ("TEXS", 2),
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], %f5;": ("TEXS", 3),
    f"tex.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}];": ("TEXS", 7),
    f"tex.level.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], 0f00000000;": ("TEXS", 8),
    f"tex.3d.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}];": ("TEXS", 10),
    f"tex.level.3d.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}], 0f00000000;": ("TEXS", 11),
    f"tex.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}];": ("TEXS", 12),
    f"tex.level.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}], %f5;": ("TEXS", 13),
    f"tex.1d.v4.f32.s32 {V}, [t, {{%r1}}];": ("TLDS", 0),
    f"tex.2d.v4.f32.s32 {V}, [t, {{%r1,%r2}}];": ("TLDS", 2),
    f"tex.2d.v4.f32.s32 {V}, [t, {{%r1,%r2}}], {{%r3,%r4}};": ("TLDS", 4),
    f"tex.3d.v4.f32.s32 {V}, [t, {{%r1,%r2,%r3,%r3}}];": ("TLDS", 7),
    f"tex.a2d.v4.f32.s32 {V}, [t, {{%r4,%r1,%r2,%r2}}];": ("TLDS", 8),
    # depth compare: the reference (PTX's c) last
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], %f5, %f3;": ("TEXS", 5),
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], 0f00000000, %f3;": ("TEXS", 6),
    f"tex.level.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], 0f00000000, %f3;": ("TEXS", 9),
}
# forms of the tables ptxas was not seen to make: TLDS 2D .LL (kept from the 2D lowering before),
# TEXS 2D .DC with implicit LOD (compute has none; .LZ.DC's registers, as every implicit / .LZ
# pair ptxas makes shares them)
NOT_FROM_PTXAS = {("TLDS", 5), ("TEXS", 4)}


def test_packing_is_what_ptxas_makes(nv_tools, nvdisasm53):
    """For each PTX texture instruction ptxas compiles to a TEXS/TLDS form, the registers the
    lowering's table reads for the layer / coordinates / level / offsets hold those PTX operands
    in ptxas's code; every form of the tables is checked so (or listed as not made by ptxas)."""
    seen = set()
    for ins, (mn, target) in PTX_CASES.items():
        p = packed_sm53(ins, mn)
        inst, src = p.inst, p.sources
        assert (inst.row.ir, inst.mods["target"]) == (mn, target), (ins, inst.text())
        _, arrayed, lod, ra_roles, rb_roles = (TEXS_FORMS if mn == "TEXS" else TLDS_FORMS)[target]
        for base, roles in ((inst.ops["a"]["reg"], ra_roles), (inst.ops["b"]["reg"], rb_roles)):
            for i, role in enumerate(roles):
                got = src.get(base + i)
                # ptxas writes a 1D sample's missing v as RZ; the 2D forms read it as y
                assert got == ROLE_PARAM[role] or (role == "y" and got == 0 and "1d" in ins), (
                    ins,
                    inst.text(),
                    role,
                    f"R{base + i}",
                    got,
                )
        seen.add((mn, target))
    tables = {("TEXS", t) for t in TEXS_FORMS} | {("TLDS", t) for t in TLDS_FORMS}
    assert tables - seen == NOT_FROM_PTXAS


# --- draws on lavapipe -------------------------------------------------------------------------
# perspective-correct u, v into R8, R9; the pixel's x >> 2 & 3 into R10 (a layer / depth slice)
PROLOGUE = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R8, a[0x80], R4
IPA R9, a[0x84], R4
IPA.PASS R12, a[0x70], RZ
IPA.PASS R13, a[0x74], RZ
F2I.S32.F32.FLOOR R12, R12
F2I.S32.F32.FLOOR R13, R13
SHR.U32 R10, R12, 0x2
LOP32I.AND R10, R10, 0x3
"""
# TEXS ARRAY_2D: Ra = (layer, u), Rb = v
FS_TEXS_ARRAY = (
    PROLOGUE
    + """
MOV R5, R8
MOV R6, R9
MOV R4, R10
TEXS{lod} R2, R0, R4, R6, 0x0, ARRAY_2D, RGBA
EXIT
"""
)
# TEXS 3D: Ra = (u, v), Rb = w = (slice + 0.5) / 4
FS_TEXS_3D = (
    PROLOGUE
    + """
I2F.F32.U32 R10, R10
FADD R10, R10, 0.5
FMUL R10, R10, 0.25
TEXS{lod} R2, R0, R8, R10, 0x0, 3D, RGBA
EXIT
"""
)
# TEXS CUBE: Ra = (x, y), Rb = z (and the level after it for .LL); the direction from c[0x0][0x0..0x8]
FS_TEXS_CUBE = """
MOV R4, c[0x0][0x0]
MOV R5, c[0x0][0x4]
MOV R6, c[0x0][0x8]
MOV R7, RZ
TEXS{lod} R2, R0, R4, R6, 0x0, CUBE, RGBA
EXIT
"""
# TLDS 1D: Ra = x & 3 (Rb unused, printed away); TLDS 3D: Ra = (x & 3, y & 3), Rb = slice;
# TLDS ARRAY_2D: Ra = layer, Rb = (x & 3, y & 3)
FS_TLDS_1D = (
    PROLOGUE
    + """
LOP32I.AND R4, R12, 0x3
TLDS.LZ R2, R0, R4, 0x0, 1D, RGBA
EXIT
"""
)
FS_TLDS_3D = (
    PROLOGUE
    + """
LOP32I.AND R4, R12, 0x3
LOP32I.AND R5, R13, 0x3
TLDS.LZ R2, R0, R4, R10, 0x0, 3D, RGBA
EXIT
"""
)
FS_TLDS_ARRAY = (
    PROLOGUE
    + """
LOP32I.AND R6, R12, 0x3
LOP32I.AND R7, R13, 0x3
TLDS.LZ R2, R0, R10, R6, 0x0, ARRAY_2D, RGBA
EXIT
"""
)
# TLDS 2D .AOFFI: Ra = (1 + x & 1, 1 + y & 1), Rb = the offsets word from c[0x0][0x0]
FS_TLDS_AOFFI = (
    PROLOGUE
    + """
LOP32I.AND R4, R12, 0x1
LOP32I.AND R5, R13, 0x1
IADD32I R4, R4, 0x1
IADD32I R5, R5, 0x1
MOV R6, c[0x0][0x0]
TLDS.LZ.AOFFI R2, R0, R4, R6, 0x0, 2D, RGBA
EXIT
"""
)
LISTINGS = [
    FS_TEXS_ARRAY.format(lod=""),
    FS_TEXS_ARRAY.format(lod=".LZ"),
    FS_TEXS_3D.format(lod=""),
    FS_TEXS_3D.format(lod=".LZ"),
    FS_TEXS_CUBE.format(lod=""),
    FS_TEXS_CUBE.format(lod=".LL"),
    FS_TLDS_1D,
    FS_TLDS_3D,
    FS_TLDS_ARRAY,
    FS_TLDS_AOFFI,
]


@pytest.mark.parametrize("lod", ["", ".LZ"])
def test_texs_array_and_volume(gpu, tmp_path, lod):
    from vk_graphics import Texture

    arr = np.random.default_rng(11).integers(0, 256, (4, TS, TS, 4), dtype=np.uint8)
    fs, img = draw53(gpu, FS_TEXS_ARRAY.format(lod=lod), Texture(arr, kind="ARRAY_2D"))
    spirv_val(fs, tmp_path, "texs_array")
    want = np.array([[arr[(x >> 2) & 3, int(uv(x, y)[1] * TS), int(uv(x, y)[0] * TS)] for x in range(W)] for y in range(H)])
    assert (img == want).all()
    fs, img = draw53(gpu, FS_TEXS_3D.format(lod=lod), Texture(arr, kind="3D"))
    spirv_val(fs, tmp_path, "texs_3d")
    assert (img == want).all()


@pytest.mark.parametrize("lod", ["", ".LL"])
def test_texs_cube(gpu, tmp_path, lod):
    from vk_graphics import Texture

    faces = np.random.default_rng(12).integers(0, 256, (6, TS, TS, 4), dtype=np.uint8)
    text = FS_TEXS_CUBE.format(lod=lod)
    for d in [(1.0, 0.3, -0.6), (-0.2, -1.0, 0.7), (0.6, -0.45, 1.0), (-0.1, 0.9, -1.0)]:
        fs, img = draw53(gpu, text, Texture(faces, kind="CUBE"), uniforms={0: struct.pack("<3f", *d) + bytes(52)})
        assert (img == cube_texel(faces, d)).all(), d
    spirv_val(fs, tmp_path, "texs_cube")


def test_tlds_1d_3d_array(gpu, tmp_path):
    from vk_graphics import Texture

    rng = np.random.default_rng(13)
    line = rng.integers(0, 256, (1, 1, TS, 4), dtype=np.uint8)
    vol = rng.integers(0, 256, (4, TS, TS, 4), dtype=np.uint8)
    with exact_program("test_tex_short_dims::FS_TLDS", (53, FS_TLDS_1D), (53, FS_TLDS_3D), (53, FS_TLDS_ARRAY), (86, VS_PASS)):
        fs, img = draw53(gpu, FS_TLDS_1D, Texture(line, kind="1D"))
        spirv_val(fs, tmp_path, "tlds_1d")
        assert (img == np.array([[line[0, 0, x & 3] for x in range(W)] for _ in range(H)])).all()
        fs, img = draw53(gpu, FS_TLDS_3D, Texture(vol, kind="3D"))
        spirv_val(fs, tmp_path, "tlds_3d")
        want = np.array([[vol[(x >> 2) & 3, y & 3, x & 3] for x in range(W)] for y in range(H)])
        assert (img == want).all()
        fs, img = draw53(gpu, FS_TLDS_ARRAY, Texture(vol, kind="ARRAY_2D"))
        spirv_val(fs, tmp_path, "tlds_array")
        assert (img == want).all()


@pytest.mark.parametrize("dx,dy", [(-1, 1), (1, -1), (0, 0)])
def test_tlds_offsets(gpu, tmp_path, dx, dy):
    """Signed 4-bit offsets, x in bits 0..3 and y in 4..7 (ptxas's BFI packing), added to the
    texel coordinates; dx != dy catches swapped fields, -1 the sign."""
    from vk_graphics import Texture

    tex = np.random.default_rng(14).integers(0, 256, (TS, TS, 4), dtype=np.uint8)
    word = (dx & 0xF) | (dy & 0xF) << 4
    with exact_program(f"test_tex_short_dims::FS_TLDS_AOFFI[{dx},{dy}]", (53, FS_TLDS_AOFFI), (86, VS_PASS)):
        fs, img = draw53(gpu, FS_TLDS_AOFFI, Texture(tex), uniforms={0: struct.pack("<I", word) + bytes(60)})
        spirv_val(fs, tmp_path, "tlds_aoffi")
        want = np.array([[tex[1 + (y & 1) + dy, 1 + (x & 1) + dx] for x in range(W)] for y in range(H)])
        assert (img == want).all()


def test_reflection_names_the_short_forms_dimensions():
    want = {
        FS_TEXS_ARRAY.format(lod=""): "ARRAY_2D",
        FS_TEXS_3D.format(lod=".LZ"): "3D",
        FS_TEXS_CUBE.format(lod=".LL"): "CUBE",
        FS_TLDS_1D: "1D",
        FS_TLDS_ARRAY: "ARRAY_2D",
    }
    for text, dim in want.items():
        r = tr.reflect(tr.make_program(53, 3, program53(text, FS53_HDR)))
        assert r.textures == (0,) and r.texture_dims == (dim,), text


@pytest.mark.parametrize(
    "line,why",
    [
        ("TEXS.LZ R2, R0, R4, 0x0, 1D, RGBA", "TEXS target"),
        ("TEXS.LZ.DC R2, R0, R4, R6, 0x0, 2D, RGBA", "other than R"),
        ("TLDS.LZ.MS R2, R0, R4, R6, 0x0, 2D, RGBA", "TLDS target"),
        ("TLDS.LL R2, R0, R4, R6, 0x0, 1D, RGBA", "TLDS target"),
        ("TEX.LZ.DC R0, R8, R11, 0x0, 2D, 0xf", "mask 0x1"),
        ("TEX.LZ.DC R0, R8, R11, 0x0, 3D, 0x1", "2D \\(array\\) and cube"),
    ],
)
def test_untranslated_forms_are_refused(line, why):
    with pytest.raises(TranslateError, match=re.escape(line.split(" ")[0]) + ".*" + why):
        tr.translate(tr.make_program(53, 3, program53(line + "\nEXIT", FS53_HDR)))


def test_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm53(LISTINGS + [FS_TXQ.format(mask="0xf", use=TXQ_USES["3D"])])


# --- TXQ on a slot sampled as 3D / cube / 1D -----------------------------------------------------
# the TXQ comes before the instruction that says the slot's dimension; sizes / 256 into R0..R3
FS_TXQ = """
TXQ R4, RZ, TEX_HEADER_DIMENSION, 0x0, {mask}
I2F.F32.U32 R4, R4
I2F.F32.U32 R5, R5
I2F.F32.U32 R6, R6
I2F.F32.U32 R7, R7
FMUL R0, R4, 0.00390625
FMUL R1, R5, 0.00390625
FMUL R2, R6, 0.00390625
FMUL R3, R7, 0.00390625
MOV R8, RZ
MOV R9, RZ
MOV R10, RZ
{use}
EXIT
"""
TXQ_USES = {
    "3D": "TEXS.LZ R10, R8, R8, R10, 0x0, 3D, RGBA",
    "CUBE": "TEXS R10, R8, R8, R10, 0x0, CUBE, RGBA",
    "1D": "TLDS.LZ R10, R8, R8, 0x0, 1D, RGBA",
    "ARRAY_2D": "TLDS.LZ R10, R8, R8, R10, 0x0, ARRAY_2D, RGBA",
}


@pytest.mark.parametrize(
    "kind,shape,mask,want",
    [
        ("3D", (2, 4, 8), "0xf", (8, 4, 2, 1)),  # texels (depth, h, w): x = w, y = h, z = depth, w = levels
        ("CUBE", (6, 4, 4), "0xb", (4, 4, 1)),  # x, y, levels
        ("1D", (1, 1, 8), "0x9", (8, 1)),  # x, levels
        ("ARRAY_2D", (3, 4, 8), "0xf", (8, 4, 3, 1)),  # x, y, layers (shader-tex), levels
    ],
)
def test_txq_on_the_slots_view(gpu, tmp_path, kind, shape, mask, want):
    from vk_graphics import Texture

    texels = np.random.default_rng(15).integers(0, 256, shape + (4,), dtype=np.uint8)
    text = FS_TXQ.format(mask=mask, use=TXQ_USES[kind])
    fs, img = draw53(gpu, text, Texture(texels, kind=kind))
    spirv_val(fs, tmp_path, "txq")
    expect = [round(v / 256 * 255) for v in want] + [0] * (4 - len(want))
    assert (img == np.array(expect)).all(), img[0, 0]
    assert tr.reflect(tr.make_program(53, 3, program53(text, FS53_HDR))).texture_dims == (kind,)


@pytest.mark.parametrize("kind,mask", [("CUBE", "0x4"), ("1D", "0x2")])
def test_txq_components_not_established_are_refused(kind, mask):
    text = FS_TXQ.format(mask=mask, use=TXQ_USES[kind])
    with pytest.raises(TranslateError, match=r"TXQ R4, RZ, TEX_HEADER_DIMENSION.*not translated"):
        tr.translate(tr.make_program(53, 3, program53(text, FS53_HDR)))


# === SM86 (Ampere) ===============================================================================
# Ampere has no short texture forms (nvdisasm 13.5 knows no TEXS/TLDS/TLD4S opcode; ptxas makes
# TEX/TLD/TLD4 of every PTX texture instruction for sm_86), so its non-2D gap was in the full
# forms: TEX / TLD / TLD4 on 1D, 1D array, 2D array, 3D and cube textures, TXQ on such slots.
# Their sources split over Ra's and Rb's tuples (sm86.to_spirv_gfx.source_split), read back from
# ptxas here as for SM53.
ROLE_PARAM86 = {"x": 0x168, "y": 0x16C, "z": 0x170, "layer": 0x174, "lod": 0x178, "off": "bfi", "dref": 0x170}
PTX86 = [
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], 0f00000000;",
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], %f5;",
    f"tex.level.a1d.v4.f32.f32 {V}, [t, {{%r4,%f1}}], 0f00000000;",
    f"tex.level.a1d.v4.f32.f32 {V}, [t, {{%r4,%f1}}], %f5;",
    f"tex.level.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], 0f00000000;",
    f"tex.level.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], %f5;",
    f"tex.level.3d.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}], 0f00000000;",
    f"tex.level.3d.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}], %f5;",
    f"tex.level.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}], 0f00000000;",
    f"tex.level.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}], %f5;",
    f"tex.1d.v4.f32.s32 {V}, [t, {{%r1}}];",
    f"tex.level.1d.v4.f32.s32 {V}, [t, {{%r1}}], %r5;",
    f"tex.2d.v4.f32.s32 {V}, [t, {{%r1,%r2}}];",
    f"tex.a1d.v4.f32.s32 {V}, [t, {{%r4,%r1}}];",
    f"tex.a2d.v4.f32.s32 {V}, [t, {{%r4,%r1,%r2,%r2}}];",
    f"tex.level.a2d.v4.f32.s32 {V}, [t, {{%r4,%r1,%r2,%r2}}], %r5;",
    f"tex.3d.v4.f32.s32 {V}, [t, {{%r1,%r2,%r3,%r3}}];",
    f"tex.level.3d.v4.f32.s32 {V}, [t, {{%r1,%r2,%r3,%r3}}], %r5;",
    f"tld4.r.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}];",
    f"tld4.r.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}];",
    f"tld4.r.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}];",
    # five values: the coordinate block in Ra (cube array 4 + 1, 3D / 2D-array fetch 3 + 2)
    f"tex.level.acube.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f3}}], %f5;",
    f"tex.level.3d.v4.f32.s32 {V}, [t, {{%r1,%r2,%r3,%r3}}], %r5, {{%r4,%r4,%r4,%r4}};",
    f"tex.level.a2d.v4.f32.s32 {V}, [t, {{%r4,%r1,%r2,%r2}}], %r5, {{%r3,%r3}};",
    # TLD .AOFFI (offsets after the coordinates and level)
    f"tex.3d.v4.f32.s32 {V}, [t, {{%r1,%r2,%r3,%r3}}], {{%r4,%r5,%r5,%r5}};",
    f"tex.a2d.v4.f32.s32 {V}, [t, {{%r4,%r1,%r2,%r2}}], {{%r3,%r5}};",
    f"tex.level.2d.v4.f32.s32 {V}, [t, {{%r1,%r2}}], %r5, {{%r3,%r4}};",
    # TEX .DC: the reference after the level (3, 4 and 5 values)
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], 0f00000000, %f3;",
    f"tex.level.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], %f5, %f3;",
    f"tex.level.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], %f5, %f3;",
]


def test_sm86_packing_is_what_ptxas_makes(nv_tools):
    """For each PTX texture instruction, ptxas's TEX/TLD/TLD4 for sm_86 holds the layer /
    coordinates / level / offsets in the registers ``source_split`` assigns them (two values:
    Rb = Ra+1, where both readings agree); every count the lowering uses (1..5) is seen."""
    import cubin
    import nvtools
    from shader_svc.sm86.to_spirv_gfx import DIMS86, Gfx86, source_split

    names = {"1D": 0, "2D": 1, "3D": 2, "CUBE": 3, "ARRAY_1D": 4, "ARRAY_2D": 5, "ARRAY_CUBE": 7}
    counts = set()
    for ins in PTX86:
        ptx = ptx_kernel(ins).replace(".version 7.0", ".version 7.1").replace("sm_53", "sm_86")
        lines = nvtools.nvdisasm_cubin(nvtools.ptxas(ptx, "sm_86"))["k"]
        assert cubin is not None
        at = [k for k, ln in enumerate(lines) if ln.opcode.split(".")[0] in ("TEX", "TLD", "TLD4")]
        assert len(at) == 1, (ins, [ln.opcode for ln in lines])
        tex = lines[at[0]]
        ops = [o.strip() for o in tex.operands.split(",")]
        regs = [o for o in ops if re.fullmatch(r"R\d+|RZ", o)]
        a = int(regs[2][1:])
        b = int(regs[3][1:]) if len(regs) > 3 and regs[3] != "RZ" else 255
        dim, arrayed, n = DIMS86[names[ops[-1]]]
        lod = ".LL" in tex.opcode
        roles = Gfx86._roles(arrayed, n, lod) + ["off"] * (".AOFFI" in tex.opcode) + ["dref"] * (".DC" in tex.opcode)
        split = source_split(len(roles), sum(r in ("layer", "x", "y", "z") for r in roles))
        counts.add(len(roles))
        src = register_sources(lines[: at[0]])
        where = [a + i for i in range(split)] + [b + i for i in range(len(roles) - split)]
        for role, r in zip(roles, where):
            assert src.get(r) == ROLE_PARAM86[role], (ins, tex.text, role, f"R{r}", src.get(r))
        if len(roles) == 2:
            assert b in (255, a + 1), tex.text
    assert counts == {1, 2, 3, 4, 5}


# uv perspective-correct; y & 3 (a layer / slice) in R9; the texel (x & 3, y & 3) in R10, R11
PRO86 = """
IPA.PASS R12, a[0x80]
IPA.PASS R13, a[0x84]
IPA.PASS R8, a[0x70]
IPA.PASS R9, a[0x74]
F2I.TRUNC.NTZ R8, R8
F2I.TRUNC.NTZ R9, R9
LOP3.LUT R10, R8, 0x3, RZ, 0xc0, !PT
LOP3.LUT R9, R9, 0x3, RZ, 0xc0, !PT
MOV R11, R9
"""
OUT86 = """
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R7
EXIT
"""
# TEX ARRAY_2D: Ra = (layer, u), Rb = (v[, level])
FS86_TEX_ARRAY = (
    PRO86
    + """
MOV R0, R9
MOV R1, R12
MOV R2, R13
MOV R3, RZ
TEX{lod} R6, R4, R0, R2, 0x0, 0x0, ARRAY_2D
"""
    + OUT86
)
# TEX 3D: Ra = (u, v), Rb = (w[, level]), w = (slice + 0.5) / 4
FS86_TEX_3D = (
    PRO86
    + """
I2FP.F32.S32 R2, R9
FADD R2, R2, 0.5
FMUL R2, R2, 0.25
MOV R3, RZ
TEX{lod} R6, R4, R12, R2, 0x0, 0x0, 3D
"""
    + OUT86
)
# TEX CUBE: Ra = (x, y), Rb = (z[, level]) from c[0x0][0x0..0x8]
FS86_TEX_CUBE = (
    """
MOV R0, c[0x0][0x0]
MOV R1, c[0x0][0x4]
MOV R2, c[0x0][0x8]
MOV R3, RZ
TEX{lod} R6, R4, R0, R2, 0x0, 0x0, CUBE
"""
    + OUT86
)
# TLD 3D: Ra = (x & 3, y & 3), Rb = slice; ARRAY_2D: Ra = (layer, x & 3), Rb = y & 3; 1D .LL: Ra = x & 3,
# Rb = Ra+1 = the level (0)
FS86_TLD_3D = (
    PRO86
    + """
TLD.LZ R6, R4, R10, R9, 0x0, 0x0, 3D
"""
    + OUT86
)
FS86_TLD_ARRAY = (
    PRO86
    + """
MOV R0, R9
MOV R1, R10
TLD.LZ R6, R4, R0, R11, 0x0, 0x0, ARRAY_2D
"""
    + OUT86
)
FS86_TLD_1D = (
    PRO86
    + """
MOV R11, RZ
TLD.LL R6, R4, R10, R11, 0x0, 0x0, 1D
"""
    + OUT86
)
# TLD4.G on a 2D array: Ra = (layer, u), Rb = v
FS86_TLD4_ARRAY = (
    PRO86
    + """
MOV R0, R9
MOV R1, R12
TLD4.G R6, R4, R0, R13, 0x0, 0x0, ARRAY_2D
"""
    + OUT86
)
LISTINGS86 = [
    FS86_TEX_ARRAY.format(lod=".LZ"),
    FS86_TEX_ARRAY.format(lod=".LL"),
    FS86_TEX_3D.format(lod=""),
    FS86_TEX_3D.format(lod=".LL"),
    FS86_TEX_CUBE.format(lod=".LZ"),
    FS86_TEX_CUBE.format(lod=".LL"),
    FS86_TLD_3D,
    FS86_TLD_ARRAY,
    FS86_TLD_1D,
    FS86_TLD4_ARRAY,
]


@pytest.mark.parametrize("lod", [".LZ", ".LL", ""])
def test_sm86_tex_array_and_volume(gpu, tmp_path, lod):
    from vk_graphics import Texture

    arr = np.random.default_rng(21).integers(0, 256, (4, TS, TS, 4), dtype=np.uint8)
    want = np.array([[arr[y & 3, int(uv(x, y)[1] * TS), int(uv(x, y)[0] * TS)] for x in range(W)] for y in range(H)])
    fs, img = draw86(gpu, FS86_TEX_ARRAY.format(lod=lod), Texture(arr, kind="ARRAY_2D"))
    spirv_val(fs, tmp_path, "tex86_array")
    assert (img == want).all()
    fs, img = draw86(gpu, FS86_TEX_3D.format(lod=lod), Texture(arr, kind="3D"))
    spirv_val(fs, tmp_path, "tex86_3d")
    assert (img == want).all()


@pytest.mark.parametrize("lod", [".LZ", ".LL"])
def test_sm86_tex_cube(gpu, tmp_path, lod):
    from vk_graphics import Texture

    faces = np.random.default_rng(22).integers(0, 256, (6, TS, TS, 4), dtype=np.uint8)
    for d in [(1.0, 0.3, -0.6), (-0.2, -1.0, 0.7), (0.6, -0.45, 1.0), (-0.1, 0.9, -1.0)]:
        fs, img = draw86(
            gpu, FS86_TEX_CUBE.format(lod=lod), Texture(faces, kind="CUBE"), uniforms={0: struct.pack("<3f", *d) + bytes(52)}
        )
        assert (img == cube_texel(faces, d)).all(), d
    spirv_val(fs, tmp_path, "tex86_cube")


def test_sm86_tld_volume_array_line(gpu, tmp_path):
    from vk_graphics import Texture

    rng = np.random.default_rng(23)
    vol = rng.integers(0, 256, (4, TS, TS, 4), dtype=np.uint8)
    line = rng.integers(0, 256, (1, 1, TS, 4), dtype=np.uint8)
    want = np.array([[vol[y & 3, y & 3, x & 3] for x in range(W)] for y in range(H)])
    fs, img = draw86(gpu, FS86_TLD_3D, Texture(vol, kind="3D"))
    spirv_val(fs, tmp_path, "tld86_3d")
    assert (img == want).all()
    fs, img = draw86(gpu, FS86_TLD_ARRAY, Texture(vol, kind="ARRAY_2D"))
    spirv_val(fs, tmp_path, "tld86_array")
    assert (img == want).all()
    fs, img = draw86(gpu, FS86_TLD_1D, Texture(line, kind="1D"))
    spirv_val(fs, tmp_path, "tld86_1d")
    assert (img == np.array([[line[0, 0, x & 3] for x in range(W)] for _ in range(H)])).all()


def test_sm86_tld4_on_an_array(gpu, tmp_path):
    from vk_graphics import Texture

    arr = np.random.default_rng(24).integers(0, 256, (4, TS, TS, 4), dtype=np.uint8)
    fs, img = draw86(gpu, FS86_TLD4_ARRAY, Texture(arr, kind="ARRAY_2D"))
    spirv_val(fs, tmp_path, "tld4_86_array")
    want = np.array([[gather(arr[y & 3], *uv(x, y), 1) for x in range(W)] for y in range(H)])
    assert (img == want).all()


FS86_TXQ = """
TXQ R6, R4, RZ, TEX_HEADER_DIMENSION, 0x0, 0x0, {mask}
I2FP.F32.S32 R0, R4
I2FP.F32.S32 R1, R5
I2FP.F32.S32 R2, R6
I2FP.F32.S32 R3, R7
FMUL R0, R0, 0.00390625
FMUL R1, R1, 0.00390625
FMUL R2, R2, 0.00390625
FMUL R3, R3, 0.00390625
MOV R8, RZ
MOV R9, RZ
{use}
EXIT
"""


@pytest.mark.parametrize(
    "kind,shape,mask,use,want",
    [
        ("3D", (2, 4, 8), "0xf", "TEX.LZ R10, R8, R8, R9, 0x0, 0x0, 3D", (8, 4, 2, 1)),
        ("CUBE", (6, 4, 4), "0xb", "TEX.LZ R10, R8, R8, R9, 0x0, 0x0, CUBE", (4, 4, 1)),
        # shader-tex: a 2D array's z is its layer count (3)
        ("ARRAY_2D", (3, 4, 8), "0xf", "TEX.LZ R10, R8, R8, R9, 0x0, 0x0, ARRAY_2D", (8, 4, 3, 1)),
    ],
)
def test_sm86_txq_on_the_slots_view(gpu, tmp_path, kind, shape, mask, use, want):
    from vk_graphics import Texture

    texels = np.random.default_rng(25).integers(0, 256, shape + (4,), dtype=np.uint8)
    fs, img = draw86(gpu, FS86_TXQ.format(mask=mask, use=use), Texture(texels, kind=kind))
    spirv_val(fs, tmp_path, "txq86")
    expect = [round(v / 256 * 255) for v in want] + [0] * (4 - len(want))
    assert (img == np.array(expect)).all(), img[0, 0]


def test_sm86_reflection_and_refusals():

    for text, dim in (
        (FS86_TEX_ARRAY.format(lod=".LZ"), "ARRAY_2D"),
        (FS86_TEX_3D.format(lod=""), "3D"),
        (FS86_TEX_CUBE.format(lod=".LL"), "CUBE"),
        (FS86_TLD_1D, "1D"),
    ):
        r = tr.reflect(tr.make_program(86, 3, program("fragment", text, FS_HDR)))
        assert r.textures == (0,) and r.texture_dims == (dim,), text
    for line, why in (
        ("TLD.LZ R6, R4, R0, R4, 0x0, 0x0, ARRAY_1D", "Rb other than RZ or Ra\\+1"),
        (
            "TXQ R6, R4, RZ, TEX_HEADER_DIMENSION, 0x0, 0x0, 0x4\nTEX.LZ R10, R8, R8, R9, 0x0, 0x0, CUBE",
            "TXQ components 0x4 of a Cube",
        ),
    ):
        with pytest.raises(TranslateError, match=why):
            tr.translate(tr.make_program(86, 3, program("fragment", line + "\nEXIT", FS_HDR)))


def test_sm86_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm86(LISTINGS86 + [FS86_TXQ.format(mask="0xf", use="TEX.LZ R10, R8, R8, R9, 0x0, 0x0, 3D")])


# === cube arrays (both architectures) ===========================================================
# SM53 TEX: Ra's tuple (layer, x, y, z), Rb the level; SM86 TEX: five values 4 + 1 (.LL), four
# 2 + 2 (.LZ); SM53 / SM86 TLD4: (layer, x, y, z) in Ra's tuple / 2 + 2.  The direction from
# c[0x0][0x0..0x8], the cube from c[0x0][0xc].
FS53_CUBE_ARRAY = """
MOV R4, c[0x0][0xc]
MOV R5, c[0x0][0x0]
MOV R6, c[0x0][0x4]
MOV R7, c[0x0][0x8]
MOV R8, RZ
TEX{lod} R0, R4, {rb}0x0, ARRAY_CUBE, 0xf
EXIT
"""
FS86_CUBE_ARRAY_LL = (
    """
MOV R8, c[0x0][0xc]
MOV R9, c[0x0][0x0]
MOV R10, c[0x0][0x4]
MOV R11, c[0x0][0x8]
MOV R12, RZ
TEX.LL R6, R4, R8, R12, 0x0, 0x0, ARRAY_CUBE
"""
    + OUT86
)
FS86_CUBE_ARRAY_LZ = (
    """
MOV R8, c[0x0][0xc]
MOV R9, c[0x0][0x0]
MOV R12, c[0x0][0x4]
MOV R13, c[0x0][0x8]
TEX.LZ R6, R4, R8, R12, 0x0, 0x0, ARRAY_CUBE
"""
    + OUT86
)
# TLD4.B (blue) of faces of one colour each: the face's value four times
FS53_CUBE_ARRAY_GATHER = FS53_CUBE_ARRAY.replace("TEX{lod} R0, R4, {rb}0x0", "TLD4.B R0, R4, 0x0")
FS86_CUBE_ARRAY_GATHER = FS86_CUBE_ARRAY_LZ.replace("TEX.LZ", "TLD4.B")
CUBE_DIRS = [(1.0, 0.3, -0.6), (-0.2, -1.0, 0.7), (0.6, -0.45, 1.0), (-0.1, 0.5, -1.0)]


@pytest.mark.parametrize(
    "arch,text",
    [
        (53, FS53_CUBE_ARRAY.format(lod=".LZ", rb="")),
        (53, FS53_CUBE_ARRAY.format(lod=".LL", rb="R8, ")),
        (86, FS86_CUBE_ARRAY_LL),
        (86, FS86_CUBE_ARRAY_LZ),
    ],
)
def test_cube_array_samples(gpu, tmp_path, arch, text):
    from vk_graphics import Texture

    faces = np.random.default_rng(26).integers(0, 256, (12, TS, TS, 4), dtype=np.uint8)
    for cube in (0, 1):
        for d in CUBE_DIRS:
            u = {0: struct.pack("<3fI", *d, cube) + bytes(48)}
            if arch == 53:
                fs, img = draw53(gpu, text, Texture(faces, kind="ARRAY_CUBE"), uniforms=u)
            else:
                fs, img = draw86(gpu, text, Texture(faces, kind="ARRAY_CUBE"), uniforms=u)
            assert (img == cube_texel(faces[6 * cube : 6 * cube + 6], d)).all(), (cube, d)
    spirv_val(fs, tmp_path, "cube_array")


@pytest.mark.parametrize("arch", [53, 86])
def test_cube_array_gathers(gpu, tmp_path, arch):
    from vk_graphics import Texture

    faces = np.zeros((12, TS, TS, 4), np.uint8)
    faces[..., 2] = (np.arange(12, dtype=np.uint8) * 20 + 10)[:, None, None]
    for cube in (0, 1):
        for d in CUBE_DIRS:
            u = {0: struct.pack("<3fI", *d, cube) + bytes(48)}
            if arch == 53:
                fs, img = draw53(gpu, FS53_CUBE_ARRAY_GATHER, Texture(faces, kind="ARRAY_CUBE"), uniforms=u)
            else:
                fs, img = draw86(gpu, FS86_CUBE_ARRAY_GATHER, Texture(faces, kind="ARRAY_CUBE"), uniforms=u)
            assert (img == int(cube_texel(faces[6 * cube : 6 * cube + 6], d)[2])).all(), (cube, d)
    spirv_val(fs, tmp_path, "cube_array_gather")


def test_cube_array_reflection_and_listings(nv_tools):
    assert tr.reflect(tr.make_program(53, 3, program53(FS53_CUBE_ARRAY.format(lod=".LZ", rb=""), FS53_HDR))).texture_dims == (
        "ARRAY_CUBE",
    )
    assert tr.reflect(tr.make_program(86, 3, program("fragment", FS86_CUBE_ARRAY_LL, FS_HDR))).texture_dims == ("ARRAY_CUBE",)
    listings.check_sm86((FS86_CUBE_ARRAY_LL, FS86_CUBE_ARRAY_LZ, FS86_CUBE_ARRAY_GATHER))
    listings.check_sm53((FS53_CUBE_ARRAY.format(lod=".LL", rb="R8, "), FS53_CUBE_ARRAY_GATHER))


# === TEXS depth compare (SM53) ==================================================================
# R0 = the comparison of c[0x0][0x0] with the texel at uv (LESS: reference < texel -> 1)
FS_TEXS_DC = (
    PROLOGUE
    + """
MOV R11, c[0x0][0x0]
MOV R12, RZ
MOV R13, R11
MOV R4, R10
MOV R5, R8
MOV R6, R9
MOV R7, R11
{tex}
EXIT
"""
)
TEXS_DC = {
    "LZ": "TEXS.LZ.DC RZ, R0, R8, R11, 0x0, 2D, R",
    "implicit": "TEXS.DC RZ, R0, R8, R11, 0x0, 2D, R",
    "LL": "TEXS.LL.DC RZ, R0, R8, R12, 0x0, 2D, R",
    "array": "TEXS.LZ.DC RZ, R0, R4, R6, 0x0, ARRAY_2D, R",
}


@pytest.mark.parametrize("form", list(TEXS_DC))
def test_texs_depth_compare(gpu, tmp_path, form):
    from vk_graphics import Texture

    depths = np.random.default_rng(27).integers(1, 1000, (4, TS, TS)).astype(np.float32) / 1000
    tex = Texture(depths, kind="ARRAY_2D", compare="LESS") if form == "array" else Texture(depths[0], compare="LESS")
    for dref in (0.3, 0.6005):
        fs, img = draw53(gpu, FS_TEXS_DC.format(tex=TEXS_DC[form]), tex, uniforms={0: struct.pack("<f", dref) + bytes(60)})
        for y in range(H):
            for x in range(W):
                u, v = uv(x, y)
                layer = (x >> 2) & 3 if form == "array" else 0
                want = 255 * int(np.float32(dref) < depths[layer, int(v * TS), int(u * TS)])
                assert list(img[y, x]) == [want, 0, 0, 0], (form, dref, x, y)
    spirv_val(fs, tmp_path, "texs_dc")


def test_texs_dc_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm53([FS_TEXS_DC.format(tex=tex) for tex in TEXS_DC.values()])


# === TEX (full) depth compare (SM53) ============================================================
# Ra's tuple (layer,) u, v; Rb's (level,) reference (ptxas's packing; test below); mask 0x1
FS_TEX_DC = {
    "LZ 2D": PROLOGUE + "MOV R11, c[0x0][0x0]\nTEX.LZ.DC R0, R8, R11, 0x0, 2D, 0x1\nEXIT\n",
    "LL array": PROLOGUE
    + """MOV R4, R10
MOV R5, R8
MOV R6, R9
MOV R12, RZ
MOV R13, c[0x0][0x0]
TEX.LL.DC R0, R4, R12, 0x0, ARRAY_2D, 0x1
EXIT
""",
}


@pytest.mark.parametrize("form", list(FS_TEX_DC))
def test_tex_depth_compare(gpu, tmp_path, form):
    from vk_graphics import Texture

    depths = np.random.default_rng(28).integers(1, 1000, (4, TS, TS)).astype(np.float32) / 1000
    array = form.endswith("array")
    tex = Texture(depths, kind="ARRAY_2D", compare="GREATER") if array else Texture(depths[0], compare="GREATER")
    for dref in (0.35, 0.7005):
        fs, img = draw53(gpu, FS_TEX_DC[form], tex, uniforms={0: struct.pack("<f", dref) + bytes(60)})
        for y in range(H):
            for x in range(W):
                u, v = uv(x, y)
                layer = (x >> 2) & 3 if array else 0
                want = 255 * int(np.float32(dref) > depths[layer, int(v * TS), int(u * TS)])
                assert list(img[y, x]) == [want, 0, 0, 0], (form, dref, x, y)
    spirv_val(fs, tmp_path, "tex_dc")


def test_tex_dc_packing_and_listings(nv_tools, nvdisasm53):
    """ptxas's TEX .DC (2D array .LL, cube .LL / .LZ, cube array .LL): the layer and coordinates
    in Ra's tuple, (the level,) the reference in Rb's; the listings print back under nvdisasm."""
    from shader_svc.sm53.to_spirv_gfx import TEX_DIMS

    cases = [
        f"tex.level.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], %f5, %f3;",
        f"tex.level.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f4,%f4}}], %f5, %f3;",
        f"tex.level.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f4,%f4}}], 0f00000000, %f3;",
        f"tex.level.acube.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f4}}], %f5, %f3;",
    ]
    # a cube's z is PTX's d here (0x154 when not arrayed): ptxas's FMUL by it
    want = {"layer": 0x154, "x": 0x148, "y": 0x14C, "z": 0x154, "lod": 0x158, "dref": 0x150}
    for ins in cases:
        p = packed_sm53(ins, "TEX")
        inst = p.inst
        assert inst.mods["DC"], inst.text()
        _, arrayed, n = TEX_DIMS[inst.ops["dim"]["sym"]]
        roles = ["layer"] * arrayed + ["x", "y", "z"][:n]
        rb_roles = ["lod"] * (inst.mods["lod"] == 3) + ["dref"]
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        p.check_roles([(a + i, r) for i, r in enumerate(roles)] + [(b + i, r) for i, r in enumerate(rb_roles)], want)
    listings.check_sm53(FS_TEX_DC.values())


# SM86 TEX .DC: 2D .LZ (u, v, reference: 2 + 1), 2D array .LL (layer, u, v + level, reference: 3 + 2)
FS86_TEX_DC = {
    "LZ 2D": PRO86
    + """
MOV R0, R12
MOV R1, R13
MOV R2, c[0x0][0x0]
TEX.LZ.DC R6, R4, R0, R2, 0x0, 0x0, 2D, 0x1
"""
    + OUT86,
    "LL array": PRO86
    + """
MOV R0, R9
MOV R1, R12
MOV R2, R13
MOV R14, RZ
MOV R15, c[0x0][0x0]
TEX.LL.DC R6, R4, R0, R14, 0x0, 0x0, ARRAY_2D, 0x1
"""
    + OUT86,
}


@pytest.mark.parametrize("form", list(FS86_TEX_DC))
def test_sm86_tex_depth_compare(gpu, tmp_path, form, nv_tools):
    from vk_graphics import Texture

    depths = np.random.default_rng(29).integers(1, 1000, (4, TS, TS)).astype(np.float32) / 1000
    array = form.endswith("array")
    tex = Texture(depths, kind="ARRAY_2D", compare="LESS") if array else Texture(depths[0], compare="LESS")
    for dref in (0.25, 0.6505):
        fs, img = draw86(gpu, FS86_TEX_DC[form], tex, uniforms={0: struct.pack("<f", dref) + bytes(60)})
        for y in range(H):
            for x in range(W):
                u, v = uv(x, y)
                want = 255 * int(np.float32(dref) < depths[y & 3 if array else 0, int(v * TS), int(u * TS)])
                assert list(img[y, x]) == [want, 0, 0, 0], (form, dref, x, y)
    spirv_val(fs, tmp_path, "tex86_dc")
    listings.check_sm86([FS86_TEX_DC[form]])
