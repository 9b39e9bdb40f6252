"""The guest programs' shaders as SM86 machine code (examples/demo/shaders/*.sm86, assembled by
shader_svc's assembler at build time) draw the same pixels as the GLSL they replace.

Oracle: the GLSL (examples/demo/shaders/scene.vert/.frag; tests/gpu_host/gpu_guest.py's
COLOR_*/TEX_*) compiled by glslang and drawn by the same Vulkan driver with the same inputs,
binding layout and vertex data (tests/shader_svc/vk_graphics.py).  The SM86 pair goes through the
shader service's translator.  On lavapipe the images are equal bit for bit: the listings
compute in the order lavapipe evaluates the GLSL (mvp * v from column 3 inwards), and inputs
include rounding ties (0.5 * odd texels) so a one-ulp difference anywhere upstream would show.
The same draws on NVIDIA's driver (an H200 lent to a session, 2026-11-29, driver 580.159.04)
also gave 0 differing pixels; on other drivers FMA contraction may differ, so 1/255 is allowed
off lavapipe (said in the assert).
End to end: the recompiled gfx program and demo game, given /shaders/arch = "sm86", draw their
expected frames through CPU host -> shader service -> GPU process.  Each comparison was seen to
fail with a changed listing: mvp summed from column 0 (ties + linear), a wrong uvx offset,
the instance index ignored, TEX's destination pairs swapped, screen-linear instead of
perspective varyings, a colour multiply dropped (also the demo's reference pictures).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from examples.demo.shaders import build as shaders
from nxrecomp.common.errors import NxError
import nvtools
from shader_svc import sph
from shader_svc import translate as tr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu_host"))
import gpu_guest  # noqa: E402  (the GLSL the gfx test program used so far)
from glsl_compare import QUAD, QUAD_UV, assert_same  # noqa: E402
from guest_frames import check_demo_matches_reference, check_gfx_guest_frames  # noqa: E402


def sm86_spirv(name: str, stage: str) -> bytes:
    code = shaders.sm86_program(name, stage)
    return tr.translate(tr.make_program(86, 2 if stage == "vertex" else 3, code))


def sm53_spirv(name: str, stage: str) -> bytes:
    code = shaders.sm53_program(name, stage)
    return tr.translate(tr.make_program(53, 2 if stage == "vertex" else 3, code))


MACHINE = {"sm86": sm86_spirv, "sm53": sm53_spirv}


@pytest.fixture(params=sorted(MACHINE))
def arch(request) -> str:
    """The guest's machine code: each drawing test runs for the Switch 2's SM86 listings and the
    Switch 1's SM53 ones, against the same GLSL."""
    return request.param


def glsl_spirv(name: str, stage: str) -> bytes:
    from cpu_host.gpu_client.shaders import compile_glsl

    glsl = {
        ("color", "vertex"): gpu_guest.COLOR_VS,
        ("color", "fragment"): gpu_guest.COLOR_FS,
        ("tex", "vertex"): gpu_guest.TEX_VS,
        ("tex", "fragment"): gpu_guest.TEX_FS,
    }
    src = glsl.get((name, stage)) or shaders.glsl_source(name, stage)
    return compile_glsl(src, "vert" if stage == "vertex" else "frag")


def pair(name: str, make) -> tuple[bytes, bytes]:
    return make(name, "vertex"), make(name, "fragment")


def draw_both(gpu, arch: str, name: str, verts: np.ndarray, size, **kw) -> tuple[np.ndarray, np.ndarray]:
    a = gpu.draw(*pair(name, MACHINE[arch]), verts, size, **kw)
    b = gpu.draw(*pair(name, glsl_spirv), verts, size, **kw)
    return a, b


# --- the demo's scene program ------------------------------------------------------------------------


def scene_ubo(mvp: np.ndarray, color, uvx) -> bytes:
    """std140 { mat4 mvp; vec4 color; vec4 uvx; }: the matrix column-major."""
    return (
        np.asarray(mvp, np.float32).T.tobytes() + np.asarray(color, np.float32).tobytes() + np.asarray(uvx, np.float32).tobytes()
    )


def perspective_mvp(angle: float, dist: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    view = np.array([[c, 0, s, 0], [0.3 * s, 1, 0, 0.1], [-s, 0, c, dist], [0, 0, 0, 1]])
    proj = np.array([[1.2, 0, 0, 0], [0, 1.5, 0, 0], [0, 0, 0.5, 0.2], [0, 0, 1, 0]])
    return proj @ view


def scene_vertices(rng, n_tri: int) -> np.ndarray:
    """(n, 2, 4): pos.xyz in -1..1 and uv in -0.2..1.2; the components the programs must ignore
    (pos.w, uv.zw) hold garbage."""
    v = np.zeros((3 * n_tri, 2, 4), np.float32)
    v[:, 0, :3] = rng.uniform(-1, 1, (3 * n_tri, 3))
    v[:, 0, 3] = 7.0
    v[:, 1, :2] = rng.uniform(-0.2, 1.2, (3 * n_tri, 2))
    v[:, 1, 2:] = (-3.0, 5.0)
    return v


@pytest.mark.parametrize("linear", [False, True], ids=["nearest", "linear"])
def test_scene_under_perspective_matches_glsl(gpu, arch, linear):
    from vk_graphics import Texture

    rng = np.random.default_rng(21)
    tex = Texture(rng.integers(0, 256, (16, 16, 4), dtype=np.uint8), linear=linear)
    for k in range(3):
        verts = scene_vertices(rng, 10)
        mvp = perspective_mvp(0.3 + 0.7 * k, 3.0) + rng.normal(0, 0.05, (4, 4)) * (k > 0)
        ubo = scene_ubo(mvp, (0.83, 0.61, 0.47, 0.93), (2.0 - k * 0.5, 1.5, 0.25, -0.1))
        a, b = draw_both(gpu, arch, "scene", verts, (64, 48), uniforms={0: ubo}, textures={0: tex})
        assert_same(gpu, a, b, min_covered=100, min_colours=20)


def test_scene_rounding_ties_match_glsl(gpu, arch):
    """Colour 0.5 times odd texels: every pixel is a tie in the 8-bit conversion, so the
    interpolated colour must equal the GLSL's to the last bit (which needs w alike, which needs
    the position computed in the same order)."""
    from vk_graphics import Texture

    rng = np.random.default_rng(8)
    tex = Texture((rng.integers(0, 128, (8, 8, 4)) * 2 + 1).astype(np.uint8))
    for k in range(4):
        verts = scene_vertices(rng, 20)
        mvp = perspective_mvp(0.5 * k, 3.0) + rng.normal(0, 0.2, (4, 4))
        ubo = scene_ubo(mvp, (0.5, 0.5, 0.5, 0.5), (1.0, 1.0, 0.0, 0.0))
        a, b = draw_both(gpu, arch, "scene", verts, (64, 48), uniforms={0: ubo}, textures={0: tex})
        assert_same(gpu, a, b, min_covered=100, min_colours=8)


def test_scene_screen_quad_equals_the_texture(gpu, arch):
    """Identity mvp, uv scaled by uvx onto the texture's texels, colour 1: the image is the
    texture (numpy slicing), and the GLSL draws the same."""
    from vk_graphics import Texture

    texels = np.random.default_rng(3).integers(0, 256, (12, 16, 4), dtype=np.uint8)
    verts = np.zeros((6, 2, 4), np.float32)
    verts[:, 0, :2], verts[:, 0, 2] = QUAD, 0.5
    verts[:, 1, :2] = QUAD_UV * 2 - 1  # uv -1..1, brought to 0..1 by uvx = (0.5, 0.5, 0.5, 0.5)
    ubo = scene_ubo(np.eye(4), (1, 1, 1, 1), (0.5, 0.5, 0.5, 0.5))
    a, b = draw_both(gpu, arch, "scene", verts, (16, 12), uniforms={0: ubo}, textures={0: Texture(texels)})
    assert_same(gpu, a, b, min_covered=16 * 12, min_colours=100)
    assert np.array_equal(a, texels)


# --- the gfx test program's colour and texture programs ----------------------------------------------


def color_ubo(color, offset, step) -> bytes:
    return gpu_guest.ubo(color, offset, step)


def test_color_program_with_instances_matches_glsl(gpu, arch, monkeypatch):
    """COLOR_VS places instance i at offset + i * step (gl_InstanceIndex = ALD a[0x2f8]).
    vk_graphics draws one instance; here its vkCmdDraw draws 4 (the later ones on top)."""
    import vk_graphics as vkg

    real = vkg.vk.vkCmdDraw
    monkeypatch.setattr(vkg.vk, "vkCmdDraw", lambda cb, n, inst, fv, fi: real(cb, n, 4, fv, fi))
    rng = np.random.default_rng(12)
    for k in range(3):
        tri = rng.uniform(-1, 0.3, (6, 2)).astype(np.float32)
        verts = np.zeros((6, 1, 4), np.float32)
        verts[:, 0, :2], verts[:, 0, 2:] = tri, (9.0, -9.0)  # zw: garbage the program ignores
        col = (0.5, 0.25 + 0.2 * k, 0.8, 0.5)
        ubo = color_ubo(col, (0.1 * k, -0.05), (0.2, 0.13 - 0.1 * k))
        a, b = draw_both(gpu, arch, "color", verts, (48, 40), uniforms={0: ubo})
        assert_same(gpu, a, b, min_covered=200, min_colours=2)
        # four instances really drawn: the shape's pixels moved by step
        single = gpu.draw(*pair("color", glsl_spirv), verts, (48, 40), uniforms={0: color_ubo(col, (0.1 * k, -0.05), (0, 0))})
        assert (a.any(axis=2)).sum() > (single.any(axis=2)).sum()


def test_texture_program_matches_glsl(gpu, arch):
    from vk_graphics import Texture

    rng = np.random.default_rng(30)
    for linear in (False, True):
        tex = Texture(rng.integers(0, 256, (10, 14, 4), dtype=np.uint8), linear=linear)
        verts = np.zeros((24, 2, 4), np.float32)
        verts[:, 0, :2] = rng.uniform(-1.2, 1.2, (24, 2))
        verts[:, 0, 2:] = (4.0, 0.25)
        verts[:, 1, :2] = rng.uniform(-0.1, 1.1, (24, 2))
        verts[:, 1, 2:] = (6.0, -1.0)
        a, b = draw_both(gpu, arch, "tex", verts, (40, 32), textures={0: tex})
        assert_same(gpu, a, b, min_covered=300, min_colours=40)


def test_rect_program_as_the_gfx_test_uses_it(gpu, arch):
    """gpu_guest's pixel-aligned rectangle with uv 0..1 over a texture of the same size: the
    texture itself, from both programs."""
    from vk_graphics import Texture

    texels = np.random.default_rng(1).integers(0, 256, (8, 12, 4), dtype=np.uint8)
    v = gpu_guest.rect_uv_px(0, 0, 12, 8, 12, 8)
    verts = np.zeros((6, 2, 4), np.float32)
    verts[:, 0, :2], verts[:, 1, :2] = v[:, :2], v[:, 2:]
    a, b = draw_both(gpu, arch, "tex", verts, (12, 8), textures={0: Texture(texels)})
    assert_same(gpu, a, b, min_covered=96, min_colours=50)
    assert np.array_equal(a, texels)


# --- end to end: the gfx guest program carrying SM86 ----------------------------------------------------


def test_gfx_guest_program_draws_its_frames_from_sm86(tmp_path):
    """examples/horizon_hello's gfx program, recompiled, with /shaders/arch = "sm86": the CPU
    host's NVN front end sends our machine code to the shader service (run by the supervisor),
    the GPU process draws with the translations, and every frame equals the numpy picture
    tests/horizon/test_horizon_nvn.py computes for the GLSL build (checker, RGB565 ramp,
    instances, render target, per-frame uniforms)."""
    check_gfx_guest_frames(tmp_path, "sm86")


def test_demo_game_with_sm86_shaders_matches_its_reference_pictures(tmp_path):
    """``nxrecomp demo --shaders sm86``: the demo game's scene program as SM86 through the
    shader service; frames 1 and 60 equal tests/demo's reference pictures (made with the GLSL
    build on lavapipe), compared as tests/demo compares them (on lavapipe they are equal to
    the bit outside the frame-time digits)."""
    check_demo_matches_reference(tmp_path, "--shaders", "sm86")


# --- what the programs are ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", shaders.PROGRAMS)
def test_gpu_process_sees_the_same_interface(name):
    """The GPU process's layout check (gpu_host/spirv_reflect.py) accepts the translations and
    sees the same vertex inputs and bindings as in the GLSL's modules."""
    from gpu_host.spirv_reflect import reflect as gpu_reflect

    for stage in ("vertex", "fragment"):
        ours = gpu_reflect(sm86_spirv(name, stage), f"{name} {stage}")
        glsl = gpu_reflect(glsl_spirv(name, stage), f"{name} {stage}")
        assert ours.execution_model == glsl.execution_model
        assert ours.input_locations == glsl.input_locations
        assert ours.bindings == glsl.bindings


@pytest.mark.parametrize("name", shaders.PROGRAMS)
def test_headers_declare_what_the_programs_use(name):
    vs, fs = shaders.sm86_program(name, "vertex"), shaders.sm86_program(name, "fragment")
    hv, hf = sph.parse(vs, "vertex"), sph.parse(fs, "fragment")
    assert hv.size == hf.size == 0x80 and hf.targets[0] == 0xF and not hf.kills_pixels
    # every varying the fragment program reads, the vertex program writes, perspective-correct
    # as GLSL's default
    assert {a for a, _ in hf.interp} <= hv.outputs and {m for _, m in hf.interp} == {"perspective"}
    assert {0x70, 0x74, 0x78, 0x7C} <= hv.outputs
    rv = tr.reflect(tr.make_program(86, 2, vs))
    rf = tr.reflect(tr.make_program(86, 3, fs))
    assert rv.writes_position and set(rf.inputs) <= set(rv.outputs)
    assert rf.textures == ((0,) if name != "color" else ())
    assert rv.uniform_bindings == ((0,) if name != "tex" else ())


def test_the_listings_are_what_nvdisasm_reads(nv_tools):
    """The words after each header are real SM86: nvdisasm prints exactly the listing's lines."""
    for name in shaders.PROGRAMS:
        for stage in ("vertex", "fragment"):
            lst = shaders.listing(name, stage)
            code = shaders.sm86_program(name, stage)[0x80:]
            words = [struct.unpack_from("<QQ", code, i) for i in range(0, len(code), 16)]
            got = [r.text if r else None for r in nvtools.nvdisasm_raw(words, "SM86")]
            want = [ln.split("//")[0].strip() for ln in lst.text.splitlines()]
            assert got == [w for w in want if w], (name, stage)


def test_romfs_files_for_both_archs():
    from cpu_host.gpu_client.shaders import compile_glsl

    names = {"/shaders/arch"} | {f"/shaders/{n}.{e}" for n in ("scene", "color", "tex") for e in ("vs", "fs")}
    sm = shaders.romfs_shaders("sm86")
    sv = shaders.romfs_shaders("spirv")
    assert set(sm) == set(sv) == names
    assert sm["/shaders/arch"] == b"sm86" and sv["/shaders/arch"] == b"spirv"
    assert sm["/shaders/scene.vs"] == shaders.sm86_program("scene", "vertex")
    assert sm["/shaders/tex.fs"] == shaders.sm86_program("tex", "fragment")
    # the guests tell SPIR-V and SM86 apart only by /shaders/arch: the SM86 files start with a
    # header, the SPIR-V ones with SPIR-V's magic
    assert all(sph.parse(sm[f"/shaders/{n}.vs"], "vertex") for n in shaders.PROGRAMS)
    assert all(struct.unpack_from("<I", v)[0] == 0x07230203 for k, v in sv.items() if k != "/shaders/arch")
    # the GLSL files here are the gfx program's shaders, as its test compiles them
    assert sv["/shaders/color.vs"] == compile_glsl(gpu_guest.COLOR_VS, "vert")
    assert sv["/shaders/tex.fs"] == compile_glsl(gpu_guest.TEX_FS, "frag")
    for n, s in (
        ("color.vert", gpu_guest.COLOR_VS),
        ("color.frag", gpu_guest.COLOR_FS),
        ("tex.vert", gpu_guest.TEX_VS),
        ("tex.frag", gpu_guest.TEX_FS),
    ):
        assert (shaders.HERE / n).read_text().strip() == s.strip(), n


def test_the_demo_build_takes_the_sm86_shaders():
    from examples.demo.build import shader_files

    files = shader_files("sm86")
    assert set(files) == {"/shaders/arch", "/shaders/scene.vs", "/shaders/scene.fs"}
    assert files["/shaders/scene.fs"] == shaders.sm86_program("scene", "fragment")


# --- bad input -------------------------------------------------------------------------------------------


def test_bad_names_and_listings_are_clear_errors(tmp_path):
    with pytest.raises(NxError, match="unknown shader program 'sky'"):
        shaders.sm86_program("sky", "vertex")
    with pytest.raises(NxError, match="unknown shader stage 'geometry'"):
        shaders.sm86_program("scene", "geometry")
    with pytest.raises(NxError, match="unknown shader arch 'sm70'"):
        shaders.romfs_shaders("sm70")
    cases = {
        "no header line": ("EXIT\n", "exactly one //@sph header line, has 0"),
        "two header lines": ("//@sph vertex\n//@sph vertex\nEXIT\n", "has 2"),
        "no stage": ("//@sph inputs=0x80\nEXIT\n", "line 1: //@sph needs a stage"),
        "bad range": ("//@sph vertex inputs=0x81\nEXIT\n", "line 1: attribute range '0x81' must be word-aligned"),
        "not a range": ("//@sph vertex outputs=R0\nEXIT\n", "attribute range 'R0' is not"),
        "no interpolation": ("//@sph fragment inputs=0x80\nEXIT\n", "fragment input '0x80' needs"),
        "bad target": ("//@sph fragment targets=0x1f\nEXIT\n", "targets '0x1f'"),
        "unknown key": ("//@sph vertex targets=0xf\nEXIT\n", "unknown setting 'targets=0xf'"),
        "not key=value": ("//@sph vertex inputs\nEXIT\n", "'inputs' is not key=value"),
        "bad instruction": ("//@sph vertex outputs=0x70-0x7c\nMOV R0, R1\nFROB R2\nEXIT\n", "line 3"),
    }
    for what, (text, msg) in cases.items():
        p = tmp_path / "x.vs.sm86"
        p.write_text(text)
        with pytest.raises(NxError) as e:
            shaders.assemble_listing(shaders.read_listing(p))
        assert msg in str(e.value) and str(p) in str(e.value), (what, str(e.value))
    with pytest.raises(NxError, match="cannot read shader listing"):
        shaders.read_listing(tmp_path / "missing.sm86")
