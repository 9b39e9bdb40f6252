"""Vertex + fragment programs written with our SM86 assembler (attribute loads, interpolation
in three modes, constant-bank uniforms in both stages, a bound texture, KILL, colour outputs
from the header's output map) translate to spirv-val-clean SPIR-V and draw on lavapipe exactly
what a small numpy rasteriser of the same triangles computes (8-bit colours within 1)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from quad_draw import VS_PASS, VS_PASS_HDR, program, spirv
import nvtools
from shader_svc import sph
from shader_svc import translate as tr
from shader_svc.sm86.assemble import assemble_program
from spirv_checks import spirv_val

# red: varying 0.x perspective-correct; green: varying 1.y flat; blue: varying 2.z screen-linear
FS_MODES = """
IPA.PASS R0, a[0x80]
IPA.CONSTANT R1, a[0x94]
IPA.PASS R2, a[0xa8]
MOV R3, 0x3f800000
EXIT
"""
FS_MODES_HDR = dict(inputs={0x80: "perspective", 0x94: "constant", 0xA8: "linear"}, targets=(0xF,))

# position scaled/offset by c[0x0] (scale at 0x0, offset at 0x4), texture coordinates passed on
VS_UNIFORM = """
ALD.128 R0, a[0x80]
ALD.64 R4, a[0x90]
MOV R8, c[0x0][0x4]
FFMA R0, R0, c[0x0][0x0], R8
FFMA R1, R1, c[0x0][0x0], R8
AST.128 a[0x70], R0
AST.64 a[0x80], R4
EXIT
"""
VS_UNIFORM_HDR = dict(inputs={0x80, 0x84, 0x88, 0x8C, 0x90, 0x94}, outputs={0x70, 0x74, 0x78, 0x7C, 0x80, 0x84})
# texel of slot 1 (binding 5) times the tint in c[0x1], alpha from the texel; u < 0.25 killed
FS_TEXTURE = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
TEX.LZ R6, R4, R0, 0x0, 0x1, 2D
ISETP.LT.AND P0, PT, R0, 0x3e800000, PT
@P0 KILL
FMUL R0, R4, c[0x1][0x0]
FMUL R1, R5, c[0x1][0x4]
FMUL R2, R6, c[0x1][0x8]
MOV R3, R7
EXIT
"""
FS_TEXTURE_HDR = dict(inputs={0x80: "perspective", 0x84: "perspective"}, targets=(0xF,))
# texel fetch at the pixel's integer position (FragCoord -> F2I) from slot 2; alpha = width / 128
FS_FETCH = """
IPA.PASS R0, a[0x70]
IPA.PASS R1, a[0x74]
F2I.TRUNC.NTZ R0, R0
F2I.TRUNC.NTZ R1, R1
TLD.LZ R6, R4, R0, 0x0, 0x2, 2D
TXQ R10, R8, RZ, TEX_HEADER_DIMENSION, 0x0, 0x2, 0x3
I2FP.F32.S32 R8, R8
FMUL R3, R8, 0.0078125
MOV R0, R4
MOV R1, R5
MOV R2, R6
EXIT
"""
FS_FETCH_HDR = dict(inputs={0x70: "perspective", 0x74: "perspective"}, targets=(0xF,))


# --- numpy reference rasteriser ---------------------------------------------------------------


def rasterise(clip: np.ndarray, attrs: np.ndarray, size: tuple[int, int], mode: str):
    """Per pixel: covered (bool), ambiguous (centre too near an edge to call) and the
    interpolated attributes of triangles ``clip`` (n, 3, 4) with ``attrs`` (n, 3, k):
    'perspective', 'linear' (screen) or 'flat' (first vertex, Vulkan's provoking vertex)."""
    w, h = size
    ys, xs = np.mgrid[0:h, 0:w] + 0.5
    covered = np.zeros((h, w), bool)
    ambiguous = np.zeros((h, w), bool)
    out = np.zeros((h, w, attrs.shape[2]))
    for tri, at in zip(clip, attrs):
        sx = (tri[:, 0] / tri[:, 3] + 1) * w / 2
        sy = (tri[:, 1] / tri[:, 3] + 1) * h / 2
        area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0])
        lam = []
        for i in range(3):
            a, b = (i + 1) % 3, (i + 2) % 3
            lam.append(((sx[b] - sx[a]) * (ys - sy[a]) - (sy[b] - sy[a]) * (xs - sx[a])) / area)
        lam = np.stack(lam)
        inside = (lam > 1e-4).all(axis=0)
        edge = (np.abs(lam) <= 1e-4).any(axis=0) & (lam > -1e-4).all(axis=0)
        ambiguous |= edge
        if mode == "flat":
            val = np.broadcast_to(at[0], (h, w, at.shape[1]))
        elif mode == "linear":
            val = np.einsum("ihw,ik->hwk", lam, at)
        else:
            q = lam / tri[:, 3][:, None, None]
            val = np.einsum("ihw,ik->hwk", q, at) / q.sum(axis=0)[..., None]
        out[inside] = val[inside]
        covered |= inside
    return covered, ambiguous, out


def unorm8(v: np.ndarray) -> np.ndarray:
    return np.round(np.clip(v, 0, 1) * 255).astype(int)


# --- tests --------------------------------------------------------------------------------------


def test_interpolation_modes_match_a_numpy_rasteriser(gpu, tmp_path):
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_MODES, FS_MODES_HDR)
    spirv_val(vs, tmp_path, "vs")
    spirv_val(fs, tmp_path, "fs")
    rng = np.random.default_rng(5)
    size = (40, 32)
    # two triangles, w != 1 so perspective-correct and screen-linear differ
    ndc = np.array([[[-0.9, -0.8], [0.85, -0.6], [-0.2, 0.9]], [[0.9, 0.95], [0.1, 0.2], [0.95, -0.9]]])
    wv = np.array([[1.0, 2.5, 0.6], [0.7, 1.8, 3.0]])
    clip = np.concatenate([ndc * wv[..., None], np.full((2, 3, 1), 0.5) * wv[..., None], wv[..., None]], axis=2)
    cols = rng.uniform(0.05, 0.95, (2, 3, 3, 4))  # (triangle, vertex, varying, rgba)
    verts = np.concatenate([clip[:, :, None, :], cols], axis=2).reshape(6, 4, 4)
    img = gpu.draw(vs, fs, verts, size, clear=(0.0, 0.0, 0.0, 0.0)).astype(int)
    covered, ambiguous, red = rasterise(clip, cols[:, :, 0, 0:1], size, "perspective")
    _, _, green = rasterise(clip, cols[:, :, 1, 1:2], size, "flat")
    _, _, blue = rasterise(clip, cols[:, :, 2, 2:3], size, "linear")
    sure = ~ambiguous
    assert covered.sum() > 300 and (~covered & sure).sum() > 200  # both cases are really tested
    want = np.concatenate([unorm8(red), unorm8(green), unorm8(blue), np.full(red.shape, 255)], axis=2)
    want[~covered] = 0
    diff = np.abs(img - want)[sure]
    assert diff.max() <= 1, (diff.max(), np.argwhere(np.abs(img - want).max(axis=2) > 1)[:5])
    # and the modes really differ from each other here (a wrong decoration would show)
    lin = rasterise(clip, cols[:, :, 0, 0:1], size, "linear")[2]
    assert np.abs(unorm8(lin) - unorm8(red))[covered & sure].max() > 8


def test_uniforms_texture_and_kill_match_numpy(gpu, tmp_path):
    vs = spirv("vertex", VS_UNIFORM, VS_UNIFORM_HDR)
    fs = spirv("fragment", FS_TEXTURE, FS_TEXTURE_HDR)
    spirv_val(vs, tmp_path, "vs")
    spirv_val(fs, tmp_path, "fs")
    from vk_graphics import Texture

    size = (32, 24)
    rng = np.random.default_rng(11)
    tex = rng.integers(0, 256, (size[1], size[0], 4), dtype=np.uint8)
    # a quad twice the screen, brought to it by the uniform scale 0.5 (offset 0)
    pos = np.array([[-2, -2, 0, 1], [2, -2, 0, 1], [-2, 2, 0, 1], [2, -2, 0, 1], [2, 2, 0, 1], [-2, 2, 0, 1]], float)
    uv = np.array([[0, 0], [1, 0], [0, 1], [1, 0], [1, 1], [0, 1]], float)
    verts = np.zeros((6, 2, 4))
    verts[:, 0], verts[:, 1, :2] = pos, uv
    tint = np.array([0.5, 1.0, 0.25, 0.0], np.float32)
    c0 = struct.pack("<2f", 0.5, 0.0) + bytes(56)
    img = gpu.draw(
        vs,
        fs,
        verts.astype(np.float32),
        size,
        uniforms={0: c0, 1: tint.tobytes() + bytes(48)},
        textures={1: Texture(tex)},
        clear=(0.0, 0.0, 1.0, 1.0),
    ).astype(int)
    want = unorm8(tex[..., :3] / 255.0 * tint[:3])
    want = np.concatenate([want, tex[..., 3:].astype(int)], axis=2)
    xs = np.arange(size[0]) + 0.5
    killed = np.broadcast_to(xs / size[0] < 0.25, size[::-1])
    want[killed] = (0, 0, 255, 255)
    diff = np.abs(img - want)
    assert killed.sum() > 0 and (~killed).sum() > 0
    assert diff.max() <= 1, (diff.max(), np.argwhere(diff.max(axis=2) > 1)[:5])


def test_texel_fetch_and_size_query_match_numpy(gpu, tmp_path):
    from vk_graphics import Texture

    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_FETCH, FS_FETCH_HDR)
    spirv_val(fs, tmp_path, "fetch")
    size = (32, 20)
    tex = np.random.default_rng(2).integers(0, 256, (size[1], size[0], 4), dtype=np.uint8)
    quad = np.zeros((6, 4, 4), np.float32)
    quad[:, 0] = [[-1, -1, 0, 1], [1, -1, 0, 1], [-1, 1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1], [-1, 1, 0, 1]]
    img = gpu.draw(vs, fs, quad, size, textures={2: Texture(tex)}).astype(int)
    want = np.concatenate([tex[..., :3].astype(int), np.full((size[1], size[0], 1), 64)], axis=2)
    assert np.abs(img - want).max() <= 1  # the texel at each pixel; alpha = 32 / 128


# the green components of the 2x2 texels around the point (slot 3), as RGBA
FS_GATHER = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
TLD4.G R2, R0, R0, 0x0, 0x3, 2D
EXIT
"""


def test_gather_matches_numpy(gpu):
    from vk_graphics import Texture

    vs = spirv("vertex", VS_PASS, VS_PASS_HDR)
    fs = spirv("fragment", FS_GATHER, dict(inputs={0x80: "perspective", 0x84: "perspective"}, targets=(0xF,)))
    tw, th = 12, 9
    tex = np.random.default_rng(4).integers(0, 256, (th, tw, 4), dtype=np.uint8)
    size = (2 * tw, 2 * th)  # sample points at texel coordinates k +- 0.25: no rounding ties
    quad = np.zeros((6, 4, 4), np.float32)
    quad[:, 0] = [[-1, -1, 0, 1], [1, -1, 0, 1], [-1, 1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1], [-1, 1, 0, 1]]
    quad[:, 1, :2] = [[0, 0], [1, 0], [0, 1], [1, 0], [1, 1], [0, 1]]
    img = gpu.draw(vs, fs, quad, size, textures={3: Texture(tex)}).astype(int)
    px = np.arange(size[0])
    py = np.arange(size[1])
    i0 = np.floor((px + 0.5) / size[0] * tw - 0.5).astype(int)
    j0 = np.floor((py + 0.5) / size[1] * th - 0.5).astype(int)
    ci = lambda v: np.clip(v, 0, tw - 1)  # noqa: E731  (clamp to edge)
    cj = lambda v: np.clip(v, 0, th - 1)  # noqa: E731
    g = tex[..., 1].astype(int)
    J0, I0 = np.meshgrid(j0, i0, indexing="ij")
    want = np.stack([g[cj(J0 + 1), ci(I0)], g[cj(J0 + 1), ci(I0 + 1)], g[cj(J0), ci(I0 + 1)], g[cj(J0), ci(I0)]], axis=2)
    assert np.abs(img - want).max() <= 1


def test_reflection_reports_bindings_and_locations():
    refl = tr.reflect(tr.make_program(86, 3, program("fragment", FS_TEXTURE, FS_TEXTURE_HDR)))
    assert refl.stage == "fragment" and refl.textures == (1,) and refl.uniform_bindings == (1,)
    assert refl.inputs == (0,) and refl.outputs == (0,)
    assert [(c.bank, c.offset, c.size) for c in refl.const_ranges] == [(1, 0, 12)]
    refl = tr.reflect(tr.make_program(86, 2, program("vertex", VS_UNIFORM, VS_UNIFORM_HDR)))
    assert refl.stage == "vertex" and refl.inputs == (0, 1) and refl.outputs == (0,) and refl.writes_position
    assert refl.uniform_bindings == (0,) and refl.textures == ()


def test_the_gpu_process_accepts_the_modules():
    """The GPU process's own check of its fixed layout (gpu_host/spirv_reflect.py) accepts our
    modules and sees the same inputs and bindings our reflection reports."""
    from gpu_host.spirv_reflect import reflect as gpu_reflect

    vs = gpu_reflect(spirv("vertex", VS_UNIFORM, VS_UNIFORM_HDR), "vs")
    fs = gpu_reflect(spirv("fragment", FS_TEXTURE, FS_TEXTURE_HDR), "fs")
    assert vs.input_locations == {0, 1} and vs.bindings == {0}
    assert fs.bindings == {1, 5}
    assert gpu_reflect(spirv("vertex", VS_PASS, VS_PASS_HDR), "vs").input_locations == {0, 1, 2, 3}


def test_texel_fetch_size_query_and_vertex_id_are_valid_spirv(tmp_path):
    vs = """
    ALD R0, a[0x2fc]
    I2FP.F32.S32 R0, R0
    AST.128 a[0x70], R0
    EXIT
    """
    fs = """
    IPA.PASS R0, a[0x80]
    IPA.PASS R1, a[0x84]
    TLD.LZ R6, R4, R0, 0x0, 0x0, 2D
    TXQ R10, R8, RZ, TEX_HEADER_DIMENSION, 0x0, 0x2, 0xf
    TEX R2, R0, R0, 0x0, 0x3, 2D, 0x3
    IADD3 R0, R4, R8, R9
    MOV R1, R10
    EXIT
    """
    v = tr.make_program(86, 2, program("vertex", vs.replace("I2FP.F32.S32 R0, R0\n", ""), dict(outputs={0x70, 0x74, 0x78, 0x7C})))
    spirv_val(tr.translate(v), tmp_path, "vid")
    f = tr.make_program(86, 3, program("fragment", fs, dict(inputs={0x80: "linear", 0x84: "linear"}, targets=(0x3,))))
    spirv_val(tr.translate(f), tmp_path, "tld")
    assert tr.reflect(f).textures == (0, 2, 3)


def test_the_test_programs_are_what_nvdisasm_reads(nv_tools):
    """The assembled test programs are real SM86: nvdisasm prints exactly their source lines."""
    for text in (VS_PASS, FS_MODES, VS_UNIFORM, FS_TEXTURE, FS_FETCH, FS_GATHER):
        code = assemble_program(text)
        words = [struct.unpack_from("<QQ", code, i) for i in range(0, len(code), 16)]
        got = [r.text if r else None for r in nvtools.nvdisasm_raw(words, "SM86")]
        assert got == [ln.strip() for ln in text.strip().splitlines()]


# colour (u, v, 0, 1); sample mask R4 = x & 1 (the first register after the colours), depth R5
FS_MASK_DEPTH = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
MOV R2, RZ
MOV R3, 0x3f800000
IPA.PASS R8, a[0x70]
F2I.TRUNC.NTZ R8, R8
LOP3.LUT R4, R8, 0x1, RZ, 0xc0, !PT
FMUL R5, R0, R1
FMUL R5, R5, 0.5
FADD R5, R5, 0.125
EXIT
"""


@pytest.mark.parametrize("mask,depth", [(True, True), (True, False), (False, True)])
def test_sample_mask_and_depth_outputs(gpu, tmp_path, mask, depth):
    """Header bits 608 / 609: R4 = SampleMask[0] (one sample per pixel: odd pixels kept), R5 =
    FragDepth, whether or not the other is declared (Mesa NAK's fragment outputs: colours, the
    mask or 0, depth)."""
    hdr = bytearray(sph.build("fragment", inputs={0x80: "perspective", 0x84: "perspective", 0x70: "perspective"}, targets=(0xF,)))
    struct.pack_into("<I", hdr, 4 * 19, struct.unpack_from("<I", hdr, 4 * 19)[0] | depth << 1 | mask)
    code = bytes(hdr) + assemble_program(FS_MASK_DEPTH, base=len(hdr))
    h = sph.parse(code, "fragment")
    assert (h.writes_sample_mask, h.writes_depth) == (mask, depth)
    fs = tr.translate(tr.make_program(86, 3, code))
    spirv_val(fs, tmp_path, "mask_depth")
    vs = spirv("vertex", VS_PASS, VS_PASS_HDR)
    quad = np.zeros((6, 4, 4), np.float32)
    quad[:, 0] = [[-1, -1, 0, 1], [1, -1, 0, 1], [-1, 1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1], [-1, 1, 0, 1]]
    quad[:, 1, :2] = [[0, 0], [1, 0], [0, 1], [1, 0], [1, 1], [0, 1]]
    w, h_ = 16, 8
    colour, zbuf = gpu.draw(vs, fs, quad, (w, h_), depth=True)
    for y in range(h_):
        for x in range(w):
            u, v = (x + 0.5) / w, (y + 0.5) / h_
            if x & 1 or not mask:
                assert abs(int(colour[y, x, 0]) - u * 255) <= 1 and colour[y, x, 3] == 255, (x, y)
                want = np.float32(u) * np.float32(v) * np.float32(0.5) + np.float32(0.125) if depth else 0.0
                assert abs(zbuf[y, x] - want) < 1e-5, (x, y, zbuf[y, x])
            else:
                assert (colour[y, x] == 0).all() and zbuf[y, x] == 1.0, (x, y)
