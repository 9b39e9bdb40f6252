"""SM53 TEX/TLD on 1D, 1D array, 2D array, 3D and cube textures: each program prints back as nvdisasm 11.8
prints it, translates to a spirv-val clean module, and draws on lavapipe what numpy reads from
the texels (Vulkan's nearest sampling; the cube face and its s/t by the Vulkan specification's
cube map table)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import listings
from quad_draw import FS53_HDR, H, TS, W, draw53, draw_quad, fragment53, program53, uv
from shader_svc import translate as tr
from shader_svc.sm86.to_spirv import TranslateError
from spirv_checks import spirv_val
from texel_refs import cube_texel

# layer (x >> 2) & 3 of the array (Ra), the interpolated uv after it (Ra+1, Ra+2)
FS_ARRAY = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R5, a[0x80], R4
IPA R6, a[0x84], R4
IPA.PASS R8, a[0x70], RZ
F2I.S32.F32.FLOOR R8, R8
SHR.U32 R4, R8, 0x2
LOP32I.AND R4, R4, 0x3
TEX.LZ R0, R4, 0x0, ARRAY_2D, 0xf
EXIT
"""
# texel (x & 3, y & 3, (x >> 2) & 3) of the volume
FS_FETCH_3D = """
IPA.PASS R8, a[0x70], RZ
IPA.PASS R9, a[0x74], RZ
F2I.S32.F32.FLOOR R8, R8
F2I.S32.F32.FLOOR R9, R9
LOP32I.AND R4, R8, 0x3
LOP32I.AND R5, R9, 0x3
SHR.U32 R6, R8, 0x2
LOP32I.AND R6, R6, 0x3
TLD.LZ R0, R4, 0x0, 3D, 0xf
EXIT
"""
# uv and w = ((x >> 2) & 3 + 0.5) / 4 sampled from the volume
FS_SAMPLE_3D = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R4, a[0x80], R4
IPA.PASS R7, a[0x7c], RZ
MUFU.RCP R7, R7
IPA R5, a[0x84], R7
IPA.PASS R8, a[0x70], RZ
F2I.S32.F32.FLOOR R8, R8
SHR.U32 R6, R8, 0x2
LOP32I.AND R6, R6, 0x3
I2F.F32.U32 R6, R6
FADD R6, R6, 0.5
FMUL R6, R6, 0.25
TEX.LZ R0, R4, 0x0, 3D, 0xf
EXIT
"""
# the direction from c[0x0][0x0..0x8]
FS_CUBE = """
MOV R4, c[0x0][0x0]
MOV R5, c[0x0][0x4]
MOV R6, c[0x0][0x8]
TEX.LZ R0, R4, 0x0, CUBE, 0xf
EXIT
"""
# 1D: u sampled; 1D array: layer y & 3 (Ra), u (Ra+1); fetches of texel x & 3 (layer y & 3)
FS_1D = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R4, a[0x80], R4
TEX.LZ R0, R4, 0x0, 1D, 0xf
EXIT
"""
FS_ARRAY_1D = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R5, a[0x80], R4
IPA.PASS R9, a[0x74], RZ
F2I.S32.F32.FLOOR R9, R9
LOP32I.AND R4, R9, 0x3
TEX.LZ R0, R4, 0x0, ARRAY_1D, 0xf
EXIT
"""
FS_FETCH_1D = """
IPA.PASS R8, a[0x70], RZ
IPA.PASS R9, a[0x74], RZ
F2I.S32.F32.FLOOR R8, R8
F2I.S32.F32.FLOOR R9, R9
LOP32I.AND R5, R8, 0x3
LOP32I.AND R4, R9, 0x3
TLD.LZ R0, R4, 0x0, ARRAY_1D, 0xf
TLD.LZ R8, R5, 0x1, 1D, 0x3
MOV R2, R8
EXIT
"""
PROGRAMS = (FS_ARRAY, FS_FETCH_3D, FS_SAMPLE_3D, FS_CUBE, FS_1D, FS_ARRAY_1D, FS_FETCH_1D)


def test_array_layer_then_coordinates(gpu, tmp_path):
    from vk_graphics import Texture

    arr = np.random.default_rng(1).integers(0, 256, (4, TS, TS, 4), dtype=np.uint8)
    fs, img = draw53(gpu, FS_ARRAY, Texture(arr, kind="ARRAY_2D"))
    spirv_val(fs, tmp_path, "array")
    for y in range(H):
        for x in range(W):
            u, v = uv(x, y)
            assert (img[y, x] == arr[(x >> 2) & 3, int(v * TS), int(u * TS)]).all(), (x, y)


def test_volume_fetch_and_sample(gpu, tmp_path):
    from vk_graphics import Texture

    vol = np.random.default_rng(2).integers(0, 256, (4, TS, TS, 4), dtype=np.uint8)
    fs, img = draw53(gpu, FS_FETCH_3D, Texture(vol, kind="3D"))
    spirv_val(fs, tmp_path, "fetch3d")
    for y in range(H):
        for x in range(W):
            assert (img[y, x] == vol[(x >> 2) & 3, y & 3, x & 3]).all(), (x, y)
    fs, img = draw53(gpu, FS_SAMPLE_3D, Texture(vol, kind="3D"))
    spirv_val(fs, tmp_path, "sample3d")
    for y in range(H):
        for x in range(W):
            u, v = uv(x, y)
            assert (img[y, x] == vol[(x >> 2) & 3, int(v * TS), int(u * TS)]).all(), (x, y)


@pytest.mark.parametrize(
    "d", [(1.0, 0.3, -0.6), (-1.0, -0.2, 0.7), (0.4, 1.0, 0.1), (-0.3, -1.0, 0.8), (0.6, -0.45, 1.0), (-0.1, 0.9, -1.0)]
)
def test_cube_faces(gpu, tmp_path, d):
    from vk_graphics import Texture

    faces = np.random.default_rng(3).integers(0, 256, (6, TS, TS, 4), dtype=np.uint8)
    fs, img = draw53(gpu, FS_CUBE, Texture(faces, kind="CUBE"), uniforms={0: struct.pack("<3f", *d) + bytes(52)})
    spirv_val(fs, tmp_path, "cube")
    assert (img == cube_texel(faces, d)).all()


def test_1d_and_1d_array_sample_and_fetch(gpu, tmp_path):
    from vk_graphics import Texture

    rng = np.random.default_rng(4)
    line = rng.integers(0, 256, (1, 1, TS, 4), dtype=np.uint8)
    lines = rng.integers(0, 256, (4, 1, TS, 4), dtype=np.uint8)
    fs, img = draw53(gpu, FS_1D, Texture(line, kind="1D"))
    spirv_val(fs, tmp_path, "s1d")
    for y in range(H):
        for x in range(W):
            assert (img[y, x] == line[0, 0, int(uv(x, y)[0] * TS)]).all(), (x, y)
    fs, img = draw53(gpu, FS_ARRAY_1D, Texture(lines, kind="ARRAY_1D"))
    spirv_val(fs, tmp_path, "sa1d")
    for y in range(H):
        for x in range(W):
            assert (img[y, x] == lines[y & 3, 0, int(uv(x, y)[0] * TS)]).all(), (x, y)
    from vk_graphics import Texture as T

    fs = fragment53(FS_FETCH_1D)
    spirv_val(fs, tmp_path, "f1d")
    img = draw_quad(gpu, fs, textures={0: T(lines, kind="ARRAY_1D"), 1: T(line, kind="1D")})
    for y in range(H):
        for x in range(W):
            want = lines[y & 3, 0, x & 3].copy()
            want[2] = line[0, 0, x & 3, 0]  # R2 = the 1D fetch's red
            assert (img[y, x] == want).all(), (x, y)


def test_one_slot_two_dimensions_is_refused():
    text = FS_CUBE.replace("EXIT", "TEX.LZ R8, R4, 0x0, 3D, 0xf\nEXIT")
    with pytest.raises(TranslateError, match="one binding has one dimension"):
        tr.translate(tr.make_program(53, 3, program53(text, FS53_HDR)))


def test_dimension_programs_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm53(PROGRAMS)


def test_reflection_names_each_slots_dimension():
    """The GPU process binds a view of the dimension the reflection names (proto field 12)."""
    from shader_svc.service import reflection_message

    want = {FS_ARRAY: "ARRAY_2D", FS_FETCH_3D: "3D", FS_SAMPLE_3D: "3D", FS_CUBE: "CUBE", FS_1D: "1D", FS_ARRAY_1D: "ARRAY_1D"}
    for text, dim in want.items():
        r = tr.reflect(tr.make_program(53, 3, program53(text, FS53_HDR)))
        assert r.textures == (0,) and r.texture_dims == (dim,)
        assert list(reflection_message(r).texture_dims) == [dim]
    two = FS_CUBE.replace("MOV R4, c[0x0][0x0]", "TEX.LZ R8, R4, 0x1, 2D, 0xf\nMOV R4, c[0x0][0x0]")
    assert tr.reflect(tr.make_program(53, 3, program53(two, FS53_HDR))).texture_dims == ("CUBE", "2D")
