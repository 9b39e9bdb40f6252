"""TLD4 (texture gather) with texel offsets (.AOFFI, per-texel .PTP) and depth comparison (.DC),
on SM53 (TLD4S and TLD4) and SM86, plus TLD (texel fetch) with .AOFFI.

Where the offsets and the reference sit is ptxas's (NVIDIA's compiler) packing, read back from
its own code for PTX ``tld4`` with offsets / a depth reference: coordinates in Ra's pair, Rb's
tuple the offsets word (signed 6-bit x at bits 0..5, y at 8..13: ptxas builds it with
``BFI ..., 0x608``) then the reference.  The lowering gathers with a run-time Offset
(ImageGatherExtended) and OpImageDrefGather; on lavapipe the draws equal numpy's gather of the
offset 2x2 footprint (clamped to the edge) and numpy's comparisons."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

import listings
from ptxas_packing import V, packed_sm53, ptx_kernel, register_sources
from isa_coverage import exact_program
from quad_draw import FS53_HDR, FS_HDR, VS_PASS, H, W, draw53, draw86, program, program53
from shader_svc import translate as tr
from spirv_checks import spirv_val
from texel_refs import cube_texel

GS = 8  # gathered textures are 8x8: no sample point of the 32x16 quad is a rounding tie

# perspective-correct u, v into R8, R9; c[0x0][0x0] (the offsets word) into R10, c[0x0][0x4]
# (the depth reference) into R11
PRO53 = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R8, a[0x80], R4
IPA R9, a[0x84], R4
MOV R10, c[0x0][0x0]
MOV R11, c[0x0][0x4]
"""
FS53_OFF = PRO53 + "TLD4S.G.AOFFI R2, R0, R8, R10, 0x0\nEXIT\n"
FS53_DC = PRO53 + "TLD4S.R.DC R2, R0, R8, R11, 0x0\nEXIT\n"
FS53_OFF_DC = PRO53 + "TLD4S.R.AOFFI.DC R2, R0, R8, R10, 0x0\nEXIT\n"
LISTINGS53 = [FS53_OFF, FS53_DC, FS53_OFF_DC]


def uvs() -> tuple[np.ndarray, np.ndarray]:
    return (np.arange(W) + 0.5) / W, (np.arange(H) + 0.5) / H


def gather_ref(tex: np.ndarray, dx: int = 0, dy: int = 0) -> np.ndarray:
    """Per pixel (H, W, 4): Vulkan's gather footprint (i0, j0+1), (i0+1, j0+1), (i0+1, j0),
    (i0, j0) around the pixel's uv, moved by (dx, dy) texels, clamped to the edge; ``tex``
    (h, w) of one component or depths."""
    th, tw = tex.shape
    u, v = uvs()
    i0 = np.floor(u * tw - 0.5).astype(int) + dx
    j0 = np.floor(v * th - 0.5).astype(int) + dy
    J, I = np.meshgrid(j0, i0, indexing="ij")
    ci = lambda a: np.clip(a, 0, tw - 1)  # noqa: E731
    cj = lambda a: np.clip(a, 0, th - 1)  # noqa: E731
    return np.stack([tex[cj(J + 1), ci(I)], tex[cj(J + 1), ci(I + 1)], tex[cj(J), ci(I + 1)], tex[cj(J), ci(I)]], axis=2)


def _uniforms(dx: int, dy: int, dref: float) -> dict:
    return {0: struct.pack("<If", (dx & 0x3F) | (dy & 0x3F) << 8, dref) + bytes(56)}


@pytest.mark.parametrize("dx,dy", [(1, -2), (-3, 1), (0, 0), (-32, 31)])
def test_sm53_tld4s_offsets(gpu, tmp_path, dx, dy):
    """dx != dy catches swapped fields, negative values the sign, -32 / 31 the field width
    (a 4- or 8-bit reading would differ)."""
    from vk_graphics import Texture

    texels = np.random.default_rng(31).integers(0, 256, (GS, GS, 4), dtype=np.uint8)
    with exact_program(f"test_tld4_offsets::FS53_OFF[{dx},{dy}]", (53, FS53_OFF), (86, VS_PASS)):
        fs, img = draw53(gpu, FS53_OFF, Texture(texels), _uniforms(dx, dy, 0.0))
        spirv_val(fs, tmp_path, "tld4s_off")
        assert (img == gather_ref(texels[..., 1], dx, dy)).all()


@pytest.mark.parametrize("text,dx,dy", [(FS53_DC, 0, 0), (FS53_OFF_DC, 2, -1)])
def test_sm53_tld4s_depth_compare(gpu, tmp_path, text, dx, dy):
    """The sampler compares the reference with each texel (LESS: ref < texel -> 1)."""
    from vk_graphics import Texture

    depths = np.random.default_rng(32).integers(1, 1000, (GS, GS)).astype(np.float32) / 1000
    for dref in (0.25, 0.5, 0.7505):
        fs, img = draw53(gpu, text, Texture(depths, compare="LESS"), _uniforms(dx, dy, dref))
        want = (np.float32(dref) < gather_ref(depths, dx, dy)).astype(int) * 255
        assert (img == want).all(), dref
    spirv_val(fs, tmp_path, "tld4s_dc")


def test_sm53_tld4s_packing_is_what_ptxas_makes(nv_tools, nvdisasm53):
    """ptxas's TLD4S for PTX tld4 with offsets {c, d} and / or a depth reference e: coordinates
    from a, b in Ra's pair; Rb the BFI-packed offsets word, then e."""
    cases = {
        f"tld4.g.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], {{%r3,%r4}};": ("off",),
        f"tld4.r.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], %f5;": ("dref",),
        f"tld4.r.2d.v4.f32.f32 {V}, [t, {{%f1,%f2}}], {{%r3,%r4}}, %f5;": ("off", "dref"),
    }
    want = {"x": 0x148, "y": 0x14C, "off": "bfi", "dref": 0x158}
    for ins, rb_roles in cases.items():
        p = packed_sm53(ins, "TLD4S")
        inst, listing, addrs = p.inst, p.listing, sorted(p.listing)
        assert (bool(inst.mods["AOFFI"]), bool(inst.mods["DC"])) == ("off" in rb_roles, "dref" in rb_roles)
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        p.check_roles([(a, "x"), (a + 1, "y")] + [(b + i, r) for i, r in enumerate(rb_roles)], want)
        if "off" in rb_roles:  # the BFI: 6 bits of d at bit 8 over c (x in bits 0..5)
            bfi = [listing[x] for x in addrs if x < p.at and listing[x].opcode == "BFI"]
            movs = {
                m.group(1): int(m.group(2), 16)
                for ln in listing.values()
                if (m := re.fullmatch(r"(R\d+), (0x[0-9a-f]+)", ln.operands)) and ln.opcode == "MOV32I"
            }
            assert len(bfi) == 1 and movs.get(bfi[0].operands.split(", ")[2]) == 0x608, bfi


def test_sm53_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm53(LISTINGS53)


def test_one_slot_with_and_without_comparison_is_refused():
    from shader_svc.sm86.to_spirv import TranslateError

    text = PRO53 + "TLD4S.R.DC R2, R0, R8, R11, 0x0\nTLD4S.R R6, R4, R8, R9, 0x0\nEXIT\n"
    with pytest.raises(TranslateError, match="one binding has one dimension"):
        tr.translate(tr.make_program(53, 3, program53(text, FS53_HDR)))


# --- SM53 full TLD4: arrays and cubes, .AOFFI / .DC ------------------------------------------------
# Ra's tuple: the layer (y & 3), then u, v (R12, R13, R14); Rb's: the offsets word, the reference
PRO53_ARRAY = (
    PRO53
    + """
IPA.PASS R12, a[0x74], RZ
F2I.S32.F32.FLOOR R12, R12
LOP32I.AND R12, R12, 0x3
MOV R13, R8
MOV R14, R9
"""
)
FS53_FULL_ARRAY_OFF = PRO53_ARRAY + "TLD4.G.AOFFI R0, R12, R10, 0x0, ARRAY_2D, 0xf\nEXIT\n"
FS53_FULL_OFF_DC = PRO53 + "TLD4.R.AOFFI.DC R0, R8, R10, 0x0, 2D, 0xf\nEXIT\n"
FS53_FULL_DC = PRO53 + "TLD4.R.DC R0, R8, R11, 0x0, 2D, 0xf\nEXIT\n"
# the direction from c[0x0][0x8..0x10]
FS53_FULL_CUBE = """
MOV R4, c[0x0][0x8]
MOV R5, c[0x0][0xc]
MOV R6, c[0x0][0x10]
TLD4.B R0, R4, 0x0, CUBE, 0xf
EXIT
"""
LISTINGS53_FULL = [FS53_FULL_ARRAY_OFF, FS53_FULL_OFF_DC, FS53_FULL_DC, FS53_FULL_CUBE]


@pytest.mark.parametrize("dx,dy", [(2, -1), (-5, 3)])
def test_sm53_tld4_array_with_offsets(gpu, tmp_path, dx, dy):
    from vk_graphics import Texture

    arr = np.random.default_rng(33).integers(0, 256, (4, GS, GS, 4), dtype=np.uint8)
    with exact_program(f"test_tld4_offsets::FS53_FULL_ARRAY_OFF[{dx},{dy}]", (53, FS53_FULL_ARRAY_OFF), (86, VS_PASS)):
        fs, img = draw53(gpu, FS53_FULL_ARRAY_OFF, Texture(arr, kind="ARRAY_2D"), _uniforms(dx, dy, 0.0))
        spirv_val(fs, tmp_path, "tld4_array_off")
        for layer in range(4):
            want = gather_ref(arr[layer, ..., 1], dx, dy)
            rows = [y for y in range(H) if y & 3 == layer]
            assert (img[rows] == want[rows]).all(), layer


@pytest.mark.parametrize("text,dx,dy", [(FS53_FULL_DC, 0, 0), (FS53_FULL_OFF_DC, -2, 3)])
def test_sm53_tld4_depth_compare(gpu, tmp_path, text, dx, dy):
    from vk_graphics import Texture

    depths = np.random.default_rng(34).integers(1, 1000, (GS, GS)).astype(np.float32) / 1000
    for dref in (0.3, 0.6125):
        fs, img = draw53(gpu, text, Texture(depths, compare="GREATER"), _uniforms(dx, dy, dref))
        want = (np.float32(dref) > gather_ref(depths, dx, dy)).astype(int) * 255
        assert (img == want).all(), dref
    spirv_val(fs, tmp_path, "tld4_dc")


def test_sm53_tld4_cube_picks_the_face(gpu, tmp_path):
    """Faces of one colour each: every gathered texel is the face's blue (x, y, z from Ra..Ra+2)."""
    from vk_graphics import Texture

    faces = np.zeros((6, 4, 4, 4), np.uint8)
    faces[..., 2] = np.array([20, 60, 100, 140, 180, 220], np.uint8)[:, None, None]
    # minor components within 0.75 of the major: the 2x2 footprint stays inside the face
    for d in [(1.0, 0.3, -0.6), (-0.2, -1.0, 0.7), (0.6, -0.45, 1.0), (-0.1, 0.5, -1.0), (-1.0, 0.2, 0.1)]:
        u = {0: bytes(8) + struct.pack("<3f", *d) + bytes(44)}
        fs, img = draw53(gpu, FS53_FULL_CUBE, Texture(faces, kind="CUBE"), u)
        assert (img == int(cube_texel(faces, d)[2])).all(), d
    spirv_val(fs, tmp_path, "tld4_cube")


def test_sm53_tld4_packing_is_what_ptxas_makes(nv_tools, nvdisasm53):
    """ptxas's full TLD4 (arrays, cubes): the layer and coordinates in Ra's tuple, the BFI-packed
    offsets then the reference in Rb's."""
    from shader_svc.sm53.to_spirv_gfx import TEX_DIMS

    cases = [
        f"tld4.r.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], {{%r3,%r5}}, %f5;",
        f"tld4.r.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}], %f5;",
        f"tld4.r.cube.v4.f32.f32 {V}, [t, {{%f1,%f2,%f3,%f3}}], %f5;",
        f"tld4.g.a2d.v4.f32.f32 {V}, [t, {{%r4,%f1,%f2,%f2}}];",
    ]
    want = {"layer": 0x154, "x": 0x148, "y": 0x14C, "z": 0x150, "off": "bfi", "dref": 0x158}
    for ins in cases:
        p = packed_sm53(ins, "TLD4")
        inst = p.inst
        _, arrayed, n = TEX_DIMS[inst.ops["dim"]["sym"]]
        ra_roles = ["layer"] * arrayed + ["x", "y", "z"][:n]
        rb_roles = ["off"] * (inst.mods["off"] == 1) + ["dref"] * inst.mods["DC"]
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        p.check_roles([(a + i, r) for i, r in enumerate(ra_roles)] + [(b + i, r) for i, r in enumerate(rb_roles)], want)


def test_sm53_full_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm53(LISTINGS53_FULL)


@pytest.mark.parametrize(
    "line,why",
    [
        ("TLD4.R.AOFFI R0, R4, R10, 0x0, CUBE, 0xf", "offsets on a cube"),
        ("TLD4.R R0, R8, R10, 0x0, 3D, 0xf", "2D, 2D array and cube"),
        ("TLD4.R R0, R8, R10, 0x0, 2D, 0xf", "without .AOFFI / .DC"),
    ],
)
def test_sm53_tld4_forms_refused(line, why):
    from shader_svc.sm86.to_spirv import TranslateError

    with pytest.raises(TranslateError, match=re.escape(line.split(" ")[0]) + ".*" + re.escape(why)):
        tr.translate(tr.make_program(53, 3, program53(PRO53 + line + "\nEXIT", FS53_HDR)))


# === SM86 TLD4 .AOFFI / .DC =====================================================================
# The offsets word and the reference follow the layer and coordinates in the source list, split
# over Ra's and Rb's tuples (sm86.to_spirv_gfx.source_split); ptxas builds the word with
# LOP3 (y << 8 into bits 8..13 over x).
PRO86 = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R9, a[0x74]
F2I.TRUNC.NTZ R9, R9
LOP3.LUT R9, R9, 0x3, RZ, 0xc0, !PT
MOV R2, c[0x0][0x0]
MOV R3, c[0x0][0x4]
"""
OUT86 = """
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R7
EXIT
"""
FS86_OFF = PRO86 + "TLD4.G.AOFFI R6, R4, R0, R2, 0x0, 0x0, 2D\n" + OUT86  # Ra (u, v), Rb off
FS86_DC = PRO86 + "TLD4.R.DC R6, R4, R0, R3, 0x0, 0x0, 2D\n" + OUT86  # Ra (u, v), Rb dref
FS86_OFF_DC = PRO86 + "TLD4.R.AOFFI.DC R6, R4, R0, R2, 0x0, 0x0, 2D\n" + OUT86  # Rb (off, dref)
# Ra (layer, u), Rb (v, off)
FS86_ARRAY_OFF = (
    PRO86
    + """
MOV R10, R9
MOV R11, R0
MOV R12, R1
MOV R13, R2
TLD4.G.AOFFI R6, R4, R10, R12, 0x0, 0x0, ARRAY_2D
"""
    + OUT86
)
LISTINGS86 = [FS86_OFF, FS86_DC, FS86_OFF_DC, FS86_ARRAY_OFF]


@pytest.mark.parametrize("dx,dy", [(1, -2), (-32, 31), (0, 0)])
def test_sm86_tld4_offsets(gpu, tmp_path, dx, dy):
    from vk_graphics import Texture

    texels = np.random.default_rng(41).integers(0, 256, (GS, GS, 4), dtype=np.uint8)
    with exact_program(f"test_tld4_offsets::FS86_OFF[{dx},{dy}]", (86, FS86_OFF), (86, FS86_ARRAY_OFF), (86, VS_PASS)):
        fs, img = draw86(gpu, FS86_OFF, Texture(texels), _uniforms(dx, dy, 0.0))
        spirv_val(fs, tmp_path, "tld4_86_off")
        assert (img == gather_ref(texels[..., 1], dx, dy)).all()
        arr = np.random.default_rng(42).integers(0, 256, (4, GS, GS, 4), dtype=np.uint8)
        fs, img = draw86(gpu, FS86_ARRAY_OFF, Texture(arr, kind="ARRAY_2D"), _uniforms(dx, dy, 0.0))
        spirv_val(fs, tmp_path, "tld4_86_array_off")
        for layer in range(4):
            rows = [y for y in range(H) if y & 3 == layer]
            assert (img[rows] == gather_ref(arr[layer, ..., 1], dx, dy)[rows]).all(), layer


@pytest.mark.parametrize("text,dx,dy", [(FS86_DC, 0, 0), (FS86_OFF_DC, 3, -1)])
def test_sm86_tld4_depth_compare(gpu, tmp_path, text, dx, dy):
    from vk_graphics import Texture

    depths = np.random.default_rng(43).integers(1, 1000, (GS, GS)).astype(np.float32) / 1000
    for dref in (0.2, 0.5005):
        fs, img = draw86(gpu, text, Texture(depths, compare="LESS_OR_EQUAL"), _uniforms(dx, dy, dref))
        assert (img == (np.float32(dref) <= gather_ref(depths, dx, dy)).astype(int) * 255).all(), dref
    spirv_val(fs, tmp_path, "tld4_86_dc")


def test_sm86_tld4_packing_is_what_ptxas_makes(nv_tools):
    import nvtools
    from shader_svc.sm86.to_spirv_gfx import DIMS86, Gfx86, source_split

    v = "{%f10,%f11,%f12,%f13}"
    cases = [
        f"tld4.g.2d.v4.f32.f32 {v}, [t, {{%f1,%f2}}], {{%r3,%r4}};",
        f"tld4.r.2d.v4.f32.f32 {v}, [t, {{%f1,%f2}}], %f5;",
        f"tld4.r.2d.v4.f32.f32 {v}, [t, {{%f1,%f2}}], {{%r3,%r4}}, %f5;",
        f"tld4.r.a2d.v4.f32.f32 {v}, [t, {{%r4,%f1,%f2,%f2}}], {{%r3,%r5}};",
        f"tld4.r.a2d.v4.f32.f32 {v}, [t, {{%r4,%f1,%f2,%f2}}], %f5;",
        f"tld4.r.cube.v4.f32.f32 {v}, [t, {{%f1,%f2,%f3,%f3}}], %f5;",
        # five values: layer, u, v in Ra; offsets, reference in Rb
        f"tld4.r.a2d.v4.f32.f32 {v}, [t, {{%r4,%f1,%f2,%f2}}], {{%r3,%r5}}, %f5;",
    ]
    want = {"x": 0x168, "y": 0x16C, "z": 0x170, "layer": 0x174, "off": "bfi", "dref": 0x178}
    names = {"2D": 1, "CUBE": 3, "ARRAY_2D": 5}
    for ins in cases:
        ptx = ptx_kernel(ins).replace(".version 7.0", ".version 7.1").replace("sm_53", "sm_86")
        lines = nvtools.nvdisasm_cubin(nvtools.ptxas(ptx, "sm_86"))["k"]
        at = [k for k, ln in enumerate(lines) if ln.opcode.startswith("TLD4")]
        assert len(at) == 1
        tex = lines[at[0]]
        ops = [o.strip() for o in tex.operands.split(",")]
        regs = [o for o in ops if re.fullmatch(r"R\d+|RZ", o)]
        a, b = int(regs[2][1:]), (int(regs[3][1:]) if len(regs) > 3 and regs[3] != "RZ" else 255)
        _, arrayed, n = DIMS86[names[ops[-1]]]
        roles = Gfx86._roles(arrayed, n, False) + ["off"] * (".AOFFI" in tex.opcode) + ["dref"] * (".DC" in tex.opcode)
        split = source_split(len(roles), sum(r in ("layer", "x", "y", "z") for r in roles))
        src = register_sources(lines[: at[0]])
        where = [a + i for i in range(split)] + [b + i for i in range(len(roles) - split)]
        for role, r in zip(roles, where):
            assert src.get(r) == want[role], (ins, tex.text, role, f"R{r}", src.get(r))


def test_sm86_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm86(LISTINGS86)


@pytest.mark.parametrize("line,why", [("TLD4.R.AOFFI R6, R4, R0, R2, 0x0, 0x0, CUBE", "offsets on a cube")])
def test_sm86_tld4_forms_refused(line, why):
    from shader_svc.sm86.to_spirv import TranslateError

    with pytest.raises(TranslateError, match=re.escape(line.split(" ")[0]) + ".*" + why):
        tr.translate(tr.make_program(86, 3, program("fragment", PRO86 + line + "\nEXIT", FS_HDR)))


# === .PTP: per-texel offsets (both architectures) =============================================
# Two words: texel k's x and y offsets in bytes 2k, 2k + 1 (k in the gather's result order),
# Mesa NAK's packing (ptxas makes no .PTP: PTX has no per-texel offsets).  From c[0x0][0x8..0xc].
FS53_PTP = (
    PRO53
    + """
MOV R12, c[0x0][0x8]
MOV R13, c[0x0][0xc]
TLD4.G.PTP R0, R8, R12, 0x0, 2D, 0xf
EXIT
"""
)
FS53_PTP_DC = (
    PRO53
    + """
MOV R12, c[0x0][0x8]
MOV R13, c[0x0][0xc]
MOV R14, c[0x0][0x4]
TLD4.R.PTP.DC R0, R8, R12, 0x0, 2D, 0xf
EXIT
"""
)
FS86_PTP = (
    PRO86
    + """
MOV R12, c[0x0][0x8]
MOV R13, c[0x0][0xc]
TLD4.G.PTP R6, R4, R0, R12, 0x0, 0x0, 2D
"""
    + OUT86
)
PTP_CASES = [[(1, 0), (0, 2), (-1, -1), (3, -2)], [(-32, 31), (31, -32), (0, 0), (-7, 5)]]


def _ptp_uniforms(offs: list[tuple[int, int]], dref: float = 0.0) -> dict:
    b = bytes(v & 0xFF for xy in offs for v in xy)
    return {0: struct.pack("<If", 0, dref) + b + bytes(48)}


def _ptp_ref(tex: np.ndarray, offs: list[tuple[int, int]]) -> np.ndarray:
    return np.stack([gather_ref(tex, dx, dy)[..., k] for k, (dx, dy) in enumerate(offs)], axis=2)


@pytest.mark.parametrize("offs", PTP_CASES)
def test_ptp_gathers_move_each_texel(gpu, tmp_path, offs):
    from vk_graphics import Texture

    texels = np.random.default_rng(51).integers(0, 256, (GS, GS, 4), dtype=np.uint8)
    fs, img = draw53(gpu, FS53_PTP, Texture(texels), _ptp_uniforms(offs))
    spirv_val(fs, tmp_path, "ptp53")
    assert (img == _ptp_ref(texels[..., 1], offs)).all()
    fs, img = draw86(gpu, FS86_PTP, Texture(texels), _ptp_uniforms(offs))
    spirv_val(fs, tmp_path, "ptp86")
    assert (img == _ptp_ref(texels[..., 1], offs)).all()
    depths = np.random.default_rng(52).integers(1, 1000, (GS, GS)).astype(np.float32) / 1000
    fs, img = draw53(gpu, FS53_PTP_DC, Texture(depths, compare="LESS"), _ptp_uniforms(offs, 0.5))
    assert (img == (np.float32(0.5) < _ptp_ref(depths, offs)).astype(int) * 255).all()


def test_ptp_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm86([FS86_PTP])
    listings.check_sm53((FS53_PTP, FS53_PTP_DC))


# === TLD (texel fetch) .AOFFI, both architectures =================================================
# Signed 4-bit x, y, z offsets at bits 0, 4, 8 of a word (ptxas: BFI ..., 0x404 / 0x408 on sm_53,
# LOP3 with 0xf0 / 0xf00 on sm_86), added to the texel coordinates: texel (1 + x & 1, 1 + y & 1,
# slice 1) moved by c[0x0][0x0]'s offsets.
FETCH_PRO53 = """
IPA.PASS R12, a[0x70], RZ
IPA.PASS R13, a[0x74], RZ
F2I.S32.F32.FLOOR R12, R12
F2I.S32.F32.FLOOR R13, R13
LOP32I.AND R4, R12, 0x1
LOP32I.AND R5, R13, 0x1
IADD32I R4, R4, 0x1
IADD32I R5, R5, 0x1
MOV32I R6, 0x1
MOV R9, RZ
MOV R10, c[0x0][0x0]
"""
FS53_TLD_OFF_3D = FETCH_PRO53 + "TLD.LZ.AOFFI R0, R4, R10, 0x0, 3D, 0xf\nEXIT\n"  # Ra (x, y, z), Rb off
FS53_TLD_OFF_LL = FETCH_PRO53 + "TLD.LL.AOFFI R0, R4, R9, 0x0, 2D, 0xf\nEXIT\n"  # Rb (level, off)
FETCH_PRO86 = """
IPA.PASS R8, a[0x70]
IPA.PASS R9, a[0x74]
F2I.TRUNC.NTZ R8, R8
F2I.TRUNC.NTZ R9, R9
LOP3.LUT R0, R8, 0x1, RZ, 0xc0, !PT
LOP3.LUT R1, R9, 0x1, RZ, 0xc0, !PT
IADD3 R0, R0, 0x1, RZ
IADD3 R1, R1, 0x1, RZ
MOV R2, 0x1
MOV R3, c[0x0][0x0]
MOV R8, RZ
MOV R9, c[0x0][0x0]
"""
FS86_TLD_OFF_3D = FETCH_PRO86 + "TLD.LZ.AOFFI R6, R4, R0, R2, 0x0, 0x0, 3D\n" + OUT86  # 2 + 2: (x, y), (z, off)
FS86_TLD_OFF_LL = FETCH_PRO86 + "TLD.LL.AOFFI R6, R4, R0, R8, 0x0, 0x0, 3D\n" + OUT86  # 3 + 2: (x, y, z), (lod, off)
FETCH_OFFSETS = [(1, -1, 0), (-1, 1, 2), (0, 0, -1)]  # inside the 4x4x4 volume


def _fetch_word(dx: int, dy: int, dz: int) -> dict:
    return {0: struct.pack("<I", (dx & 0xF) | (dy & 0xF) << 4 | (dz & 0xF) << 8) + bytes(60)}


@pytest.mark.parametrize("dx,dy,dz", FETCH_OFFSETS)
def test_tld_offsets_move_the_fetched_texel(gpu, tmp_path, dx, dy, dz):
    from vk_graphics import Texture

    vol = np.random.default_rng(61).integers(0, 256, (4, 4, 4, 4), dtype=np.uint8)
    want3 = np.array([[vol[1 + dz, 1 + (y & 1) + dy, 1 + (x & 1) + dx] for x in range(W)] for y in range(H)])
    want2 = np.array([[vol[0, 1 + (y & 1) + dy, 1 + (x & 1) + dx] for x in range(W)] for y in range(H)])
    with exact_program(
        f"test_tld4_offsets::TLD_OFF[{dx},{dy},{dz}]",
        (53, FS53_TLD_OFF_3D),
        (53, FS53_TLD_OFF_LL),
        (86, FS86_TLD_OFF_3D),
        (86, FS86_TLD_OFF_LL),
        (86, VS_PASS),
    ):
        for text, tex, want in ((FS53_TLD_OFF_3D, Texture(vol, kind="3D"), want3), (FS53_TLD_OFF_LL, Texture(vol[0]), want2)):
            fs, img = draw53(gpu, text, tex, _fetch_word(dx, dy, dz))
            spirv_val(fs, tmp_path, "tld53_off")
            assert (img == want).all(), text
        for text in (FS86_TLD_OFF_3D, FS86_TLD_OFF_LL):
            fs, img = draw86(gpu, text, Texture(vol, kind="3D"), _fetch_word(dx, dy, dz))
            spirv_val(fs, tmp_path, "tld86_off")
            assert (img == want3).all(), text


def test_tld_offset_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm86((FS86_TLD_OFF_3D, FS86_TLD_OFF_LL))
    listings.check_sm53((FS53_TLD_OFF_3D, FS53_TLD_OFF_LL))


# SM86 .PTP with .DC: five values, (u, v) in Ra, (ptp0, ptp1, reference) in Rb
FS86_PTP_DC = (
    PRO86
    + """
MOV R12, c[0x0][0x8]
MOV R13, c[0x0][0xc]
MOV R14, c[0x0][0x4]
TLD4.R.PTP.DC R6, R4, R0, R12, 0x0, 0x0, 2D
"""
    + OUT86
)


def test_sm86_ptp_with_depth_compare(gpu, tmp_path):
    from vk_graphics import Texture

    depths = np.random.default_rng(53).integers(1, 1000, (GS, GS)).astype(np.float32) / 1000
    for offs in PTP_CASES:
        fs, img = draw86(gpu, FS86_PTP_DC, Texture(depths, compare="LESS"), _ptp_uniforms(offs, 0.5))
        assert (img == (np.float32(0.5) < _ptp_ref(depths, offs)).astype(int) * 255).all(), offs
    spirv_val(fs, tmp_path, "ptp86_dc")
