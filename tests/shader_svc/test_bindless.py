"""Bindless textures (SM86 TEX.B / TLD.B / TLD4.B): fragment and vertex programs written with our
assembler read textures through a handle register (texture index in bits 0..19, sampler index
above), from a constant bank (the same for every invocation) and computed per pixel (different in
neighbouring invocations).  Translated, spirv-val clean, drawn on lavapipe with the pools bound in
set 1, and compared with numpy's texels of the pool entries the handles name."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import listings
from quad_draw import FS53_HDR, FS_HDR, H, VS_PASS, VS_PASS_HDR, W, draw_quad, fragment53, program, program53, quad, spirv, uv
from shader_svc import translate as tr
from shader_svc.sm86.to_spirv import TranslateError
from shader_svc.sm86.to_spirv_gfx import SAMPLER_POOL, TEXTURE_POOL
from spirv_checks import spirv_val
from texel_refs import gather, sample

# per pixel: texture x & 7, sampler y & 3 (handle = sampler << 20 | texture), uv from varying 0
FS_PER_PIXEL = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R8, a[0x70]
IPA.PASS R9, a[0x74]
F2I.TRUNC.NTZ R8, R8
F2I.TRUNC.NTZ R9, R9
LOP3.LUT R10, R8, 0x7, RZ, 0xc0, !PT
LOP3.LUT R11, R9, 0x3, RZ, 0xc0, !PT
IMAD R12, R11, 0x100000, R10
TEX.B R6, R4, R0, R12, 2D
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R7
EXIT
"""
# the handle is the word at c[0x0][0x0]: the same for the whole draw
FS_UNIFORM = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
MOV R12, c[0x0][0x0]
TEX.B.LZ R6, R4, R0, R12, 2D
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R7
EXIT
"""
# texel fetch at (x & 3, y & 3) of texture y & 15 (per pixel); green gathered (TLD4.G.B) through
# the handle at c[0x0][0x4] into alpha
FS_FETCH_GATHER = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R8, a[0x70]
IPA.PASS R9, a[0x74]
F2I.TRUNC.NTZ R8, R8
F2I.TRUNC.NTZ R9, R9
LOP3.LUT R10, R8, 0x3, RZ, 0xc0, !PT
LOP3.LUT R11, R9, 0x3, RZ, 0xc0, !PT
LOP3.LUT R12, R9, 0xf, RZ, 0xc0, !PT
TLD.B.LZ R6, R4, R10, R12, 2D
MOV R13, c[0x0][0x4]
TLD4.G.B R16, R14, R0, R13, 2D
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R14
EXIT
"""
# vertex program: colour sampled (LOD 0) through the handle at c[0x0][0x0] at the vertex's uv
VS_SAMPLE = """
ALD.128 R0, a[0x80]
ALD.64 R4, a[0x90]
MOV R12, c[0x0][0x0]
TEX.B.LZ R10, R8, R4, R12, 2D
AST.128 a[0x70], R0
AST.128 a[0x80], R8
EXIT
"""
VS_SAMPLE_HDR = dict(inputs={0x80, 0x84, 0x88, 0x8C, 0x90, 0x94}, outputs={0x70, 0x74, 0x78, 0x7C} | {0x80, 0x84, 0x88, 0x8C})
FS_COLOUR = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R2, a[0x88]
IPA.PASS R3, a[0x8c]
EXIT
"""
FS_COLOUR_HDR = dict(inputs={0x80 + 4 * i: "constant" for i in range(4)}, targets=(0xF,))


def handle(texture: int, sampler: int) -> int:
    return sampler << 20 | texture


def draw(gpu, fs_text, pools, uniforms=None, vs=None, fs_hdr=FS_HDR, verts=None):
    from vk_graphics import Pools

    fs = spirv("fragment", fs_text, fs_hdr)
    vs = vs or spirv("vertex", VS_PASS, VS_PASS_HDR)
    return gpu.draw(vs, fs, quad() if verts is None else verts, (W, H), uniforms=uniforms, pools=Pools(*pools)).astype(int)


def test_per_invocation_handles_pick_texture_and_sampler(gpu, pool_textures, tmp_path):
    """Neighbouring pixels use different textures and samplers (nearest / linear): each pixel
    equals numpy's sample of the entries its own handle names."""
    spirv_val(spirv("fragment", FS_PER_PIXEL, FS_HDR), tmp_path, "per_pixel")
    samplers = [False, True, False, True]
    img = draw(gpu, FS_PER_PIXEL, (pool_textures, samplers))
    want = np.array([[sample(pool_textures[x & 7], *uv(x, y), samplers[y & 3]) for x in range(W)] for y in range(H)])
    diff = np.abs(img - np.round(want))
    assert diff.max() <= 1, np.argwhere(diff > 1)[:5]
    # the handles really differ: a draw that took one texture for all would not match
    alone = np.array([[sample(pool_textures[0], *uv(x, y), False) for x in range(W)] for y in range(H)])
    assert np.abs(img - alone).max() > 32


def test_uniform_handle_from_a_constant_bank(gpu, pool_textures):
    """The handle read from c[0x0][0x0]: the same module draws texture 5 with a nearest sampler,
    then texture 11 with a linear one, as the bank says."""
    for t, s, linear in ((5, 2, False), (11, 1, True)):
        img = draw(
            gpu,
            FS_UNIFORM,
            (pool_textures, [False, True, False, False]),
            uniforms={0: struct.pack("<I", handle(t, s)) + bytes(60)},
        )
        want = np.array([[sample(pool_textures[t], *uv(x, y), linear) for x in range(W)] for y in range(H)])
        assert np.abs(img - np.round(want)).max() <= 1, (t, s)


def test_handle_outside_the_pools_reads_zero(gpu, pool_textures):
    for h in (handle(TEXTURE_POOL, 0), handle(0, SAMPLER_POOL), 0xFFFFFFFF):
        img = draw(gpu, FS_UNIFORM, (pool_textures, [False]), uniforms={0: struct.pack("<I", h) + bytes(60)})
        assert (img == 0).all(), hex(h)


def test_fetch_and_gather_through_handles(gpu, pool_textures):
    """TLD.B.LZ with a per-pixel handle (texture y & 15 at texel (x & 3, y & 3)) and TLD4.B.G with
    a uniform one (texture 9): rgb = the fetched texel, alpha = the gather's first component
    (the texel below-left of the sample point, Vulkan's / NVIDIA's gather order)."""
    img = draw(gpu, FS_FETCH_GATHER, (pool_textures, [True]), uniforms={0: struct.pack("<2I", 0, handle(9, 0)) + bytes(56)})
    for y in range(H):
        for x in range(W):
            assert (img[y, x, :3] == pool_textures[y & 15][y & 3, x & 3, :3]).all(), (x, y)
            assert abs(img[y, x, 3] - gather(pool_textures[9], *uv(x, y), 1)[0]) <= 1, (x, y)


def test_vertex_program_samples_through_a_handle(gpu, pool_textures, tmp_path):
    """A vertex program (no subgroup operations there on lavapipe: the switch needs none) reads
    texture 3 through a uniform handle at each vertex's uv; flat-shaded triangles show the
    provoking vertex's texel."""
    vs = spirv("vertex", VS_SAMPLE, VS_SAMPLE_HDR)
    spirv_val(vs, tmp_path, "vs_bindless")
    verts = quad()
    verts[:, 1, :2] = [[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.6, 0.4], [0.9, 0.9], [0.1, 0.9]]
    img = draw(
        gpu,
        FS_COLOUR,
        (pool_textures, [False]),
        uniforms={0: struct.pack("<I", handle(3, 0)) + bytes(60)},
        vs=vs,
        fs_hdr=FS_COLOUR_HDR,
        verts=verts,
    )
    first = sample(pool_textures[3], 0.1, 0.1, False)  # provoking vertex of triangle 1
    second = sample(pool_textures[3], 0.6, 0.4, False)  # and of triangle 2
    got = {tuple(p) for p in img.reshape(-1, 4)}
    assert got == {tuple(first.astype(int)), tuple(second.astype(int))}


def test_reflection_reports_the_pools():
    refl = tr.reflect(tr.make_program(86, 3, program("fragment", FS_PER_PIXEL, FS_HDR)))
    assert refl.texture_pools and refl.textures == ()
    refl = tr.reflect(tr.make_program(86, 3, program("fragment", FS_COLOUR, FS_COLOUR_HDR)))
    assert not refl.texture_pools
    from shader_svc.reflection import Reflection

    refl = tr.reflect(tr.make_program(86, 2, program("vertex", VS_SAMPLE, VS_SAMPLE_HDR)))
    assert Reflection.from_dict(refl.to_dict()) == refl and refl.texture_pools


@pytest.mark.parametrize(
    "line, why",
    [
        ("TEX.B R6, R4, R0, R12, 3D", "only 2D textures"),
        ("TLD.B.LZ R6, R4, R0, R12, ARRAY_2D", "only 2D textures"),
        ("TXQ.B RZ, R4, R2, TEX_HEADER_TEXTURE_TYPE, 0xf", "only TEX_HEADER_DIMENSION"),
    ],
)
def test_untranslated_bindless_forms_are_refused_clearly(line, why):
    text = f"IPA.PASS R0, a[0x80]\nIPA.PASS R1, a[0x84]\n{line}\nEXIT\n"
    p = tr.make_program(86, 3, program("fragment", text, FS_HDR))
    with pytest.raises(TranslateError) as e:
        tr.translate(p)
    assert why in str(e.value) and "offset 0x" in str(e.value)


# explicit level through a per-pixel handle: handle in R12 (Rb), level 2.0 in R13 (Rb+1; as a
# handle it would name sampler 0x400, outside the pools); the pool textures have one level
FS_LEVEL = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R8, a[0x70]
F2I.TRUNC.NTZ R8, R8
LOP3.LUT R12, R8, 0xf, RZ, 0xc0, !PT
MOV R13, 0x40000000
TEX.B.LL R6, R4, R0, R12, 2D
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R7
EXIT
"""
# size query through a per-pixel handle (texture x & 15) at level R13 = 0: width / 32, height / 64
FS_SIZE = """
IPA.PASS R8, a[0x70]
F2I.TRUNC.NTZ R8, R8
LOP3.LUT R12, R8, 0xf, RZ, 0xc0, !PT
MOV R13, RZ
TXQ.B RZ, R4, R12, TEX_HEADER_DIMENSION, 0x3
I2FP.F32.S32 R4, R4
I2FP.F32.S32 R5, R5
FMUL R0, R4, 0.03125
FMUL R1, R5, 0.015625
MOV R2, RZ
MOV R3, 0x3f800000
EXIT
"""


def test_bias_and_level_forms_are_valid_spirv(tmp_path):
    for line in (
        "TEX.B.LB R6, R4, R0, R12, 2D",
        "TEX.B.LL R6, R4, R0, R12, 2D",
        "TLD.B.LL R6, R4, R0, R12, 2D",
        "TLD4.A.B R6, R4, R0, R12, 2D, 0x3",
    ):
        text = f"IPA.PASS R0, a[0x80]\nIPA.PASS R1, a[0x84]\nMOV R12, c[0x0][0x0]\nMOV R13, c[0x0][0x4]\n{line}\nEXIT\n"
        spirv_val(spirv("fragment", text, FS_HDR), tmp_path, line.split()[0])


def test_explicit_level_reads_the_handle_from_rb(gpu, pool_textures):
    img = draw(gpu, FS_LEVEL, (pool_textures, [False]))
    want = np.array([[sample(pool_textures[x & 15], *uv(x, y), False) for x in range(W)] for y in range(H)])
    assert np.abs(img - np.round(want)).max() <= 1


def test_size_query_through_per_pixel_handles(gpu):
    sizes = [(t + 1, 2 * t + 1) for t in range(TEXTURE_POOL)]  # (width, height)
    texs = [np.zeros((h, w, 4), np.uint8) for w, h in sizes]
    img = draw(gpu, FS_SIZE, (texs, [False]), fs_hdr=dict(inputs={0x70: "perspective"}, targets=(0xF,)))
    for x in range(W):
        w, h = sizes[x & 15]
        assert abs(img[0, x, 0] - round(w / 32 * 255)) <= 1 and abs(img[0, x, 1] - round(h / 64 * 255)) <= 1, x


def test_the_bindless_programs_are_what_nvdisasm_reads(nv_tools):
    """Every listing here (TEX.B, TEX.B.LZ, TLD.B.LZ, TLD4.G.B included) is real SM86: nvdisasm
    prints exactly the source lines."""
    listings.check_sm86([FS_PER_PIXEL, FS_UNIFORM, FS_FETCH_GATHER, VS_SAMPLE, FS_COLOUR, FS_LEVEL, FS_SIZE])


# --- SM53 (Maxwell): TEX.B / TLD.B ------------------------------------------------------------------
# coordinates by the compilers' perspective idiom; handle = (y & 3) << 20 | (x & 7) per pixel
FS53_PER_PIXEL = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
IPA.PASS R8, a[0x70], RZ
IPA.PASS R9, a[0x74], RZ
F2I.S32.F32.FLOOR R8, R8
F2I.S32.F32.FLOOR R9, R9
LOP32I.AND R12, R8, 0x7
LOP32I.AND R13, R9, 0x3
SHL R13, R13, 0x14
LOP.OR R12, R12, R13
TEX.B R0, R0, R12, 0x0, 2D, 0xf
EXIT
"""
# texel (x & 3, y & 3) of texture c[0x0][0x0]'s handle, level 0 in Rb+1
FS53_FETCH = """
IPA.PASS R8, a[0x70], RZ
IPA.PASS R9, a[0x74], RZ
F2I.S32.F32.FLOOR R8, R8
F2I.S32.F32.FLOOR R9, R9
LOP32I.AND R4, R8, 0x3
LOP32I.AND R5, R9, 0x3
MOV R12, c[0x0][0x0]
MOV R13, RZ
TLD.B.LL R0, R4, R12, 0x0, 2D, 0xf
EXIT
"""


def test_sm53_bindless_draws_equal_numpy(gpu, pool_textures, tmp_path):
    from vk_graphics import Pools

    fs = fragment53(FS53_PER_PIXEL)
    spirv_val(fs, tmp_path, "fs53")
    samplers = [False, True, False, True]
    img = draw_quad(gpu, fs, pools=Pools(pool_textures, samplers))
    want = np.array([[sample(pool_textures[x & 7], *uv(x, y), samplers[y & 3]) for x in range(W)] for y in range(H)])
    assert np.abs(img - np.round(want)).max() <= 1
    img = draw_quad(
        gpu,
        fragment53(FS53_FETCH),
        uniforms={0: struct.pack("<I", handle(6, 0)) + bytes(60)},
        pools=Pools(pool_textures, [False]),
    )
    for y in range(H):
        for x in range(W):
            assert (img[y, x] == pool_textures[6][y & 3, x & 3]).all(), (x, y)
    refl = tr.reflect(tr.make_program(53, 3, program53(FS53_FETCH, FS53_HDR)))
    assert refl.texture_pools and refl.textures == ()


def test_sm53_bindless_forms_agree_with_nvdisasm(nv_tools):
    """The SM53 listings print back as their lines under nvdisasm 11.8; 400 mutated TEX.B/TLD.B
    words decode to nvdisasm's text or are refused (and many agree)."""
    listings.check_sm53([FS53_PER_PIXEL, FS53_FETCH])
    agree = sum(listings.sm53_mutations_agree({"TEX.B", "TLD.B"}, 400, seed=5386).values())
    assert agree > 60, agree
