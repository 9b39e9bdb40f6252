"""Layered rendering through the real GPU process on lavapipe (gfx-layers, issue 31/32): a geometry
program (SM86 and SM53, nvdisasm's text: tests/shader_svc/geometry_programs.py's point-to-square
program plus ``AST a[0x64]``, the render target array index) turns points into squares and
writes each point's layer; the layered (2D array) colour target is drawn with all its layers
(VK 2D_ARRAY view, ``layerCount``), cleared whole, and WRITEBACK puts every layer in the pool.
Each layer equals the numpy reference of the squares sent to it (within 1/255, edge pixels
left out).  A Layer at or beyond the target's layers (4, and -1) is what Vulkan leaves
undefined: those vertices are not emitted, so nothing of those squares appears in any layer.
A program without Layer draws into layer 0 only.  Refused by name: a layered target with a depth
target, colour targets of different layer counts, PRESENT of a layered target, and a vertex
program's Layer at translation (a geometry program's ViewportIndex: test_gpu_viewports.py)."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, TextureDesc
from gpu_guest import P, Gpu, Scene

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the test programs
from geometry_programs import (  # noqa: E402
    GENERIC0,
    GENERIC1,
    POINT_QUAD53,
    POINT_QUAD86,
    POINT_QUAD_GEO,
    POS,
    header,
    points_to_quads,
)
from quad_draw import VS_PASS, VS_PASS_HDR, spirv  # noqa: E402
from test_gpu_geometry import FS_QUAD, FS_QUAD_HDR  # noqa: E402

from shader_svc import translate as tr  # noqa: E402
from shader_svc.request import GEOMETRY_STAGES  # noqa: E402
from shader_svc.sm86.to_spirv import TranslateError  # noqa: E402

W = H = 32
LAYERS = 4
OFF = 0x300000  # the layered target's bytes in the test pool (pitch-linear, layers one after another)
# the point's layer: input varying 1's x (a float) truncated, written once before the four vertices
# (the translation keeps it for every vertex emitted after it)
LAYER86 = POINT_QUAD86.replace(
    "ALD.128 R12, a[0x80], R4\n", "ALD.128 R12, a[0x80], R4\nALD R6, a[0x90], R4\nF2I.TRUNC.NTZ R6, R6\nAST a[0x64], R6, R5\n"
)
LAYER53 = POINT_QUAD53.replace(
    "ALD.128 R12, a[0x80], R4\n", "ALD.128 R12, a[0x80], R4\nALD R6, a[0x90], R4\nF2I.S32.F32.TRUNC R6, R6\nAST a[0x64], R6, R5\n"
)
LAYER_HDR = dict(inputs=POS | GENERIC0 | {0x90}, outputs=POS | GENERIC0 | GENERIC1 | {0x64})


def code(arch: int, text: str, hdr: dict) -> bytes:
    from shader_svc.sm53.assemble import assemble_program as asm53
    from shader_svc.sm86.assemble import assemble_program as asm86

    h = header(POINT_QUAD_GEO, hdr, version=4 if arch == 86 else 3)
    return h + (asm86(text, base=len(h)) if arch == 86 else asm53(text, base_addr=len(h)))


def modules(arch: int, text: str, hdr: dict) -> tuple[tuple[int, bytes], ...]:
    c = code(arch, text, hdr)
    return tuple((s, tr.translate(tr.make_program(arch, s, c))) for s in GEOMETRY_STAGES)


@pytest.fixture(scope="module")
def gpu():
    g = Gpu()
    yield g
    g.close()


def layered_target(g: Gpu, layers: int = LAYERS) -> int:
    t = g.id()
    g.client.register(
        TextureDesc(t, g.pool.id, OFF, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True, layers=layers)
    )
    return t


def draw(g: Gpu, prog: int, target: int, pts: np.ndarray, cols: np.ndarray, layer: np.ndarray, half: float) -> np.ndarray:
    """Points drawn with ``prog`` into ``target`` (cleared to 0 first), written back: (layers, H, W, 4)."""
    g.pool.write(OFF, bytes([0x5A]) * (W * H * 4 * LAYERS))
    sc = Scene(g.pool, 0)
    verts = np.zeros((len(pts), 4, 4), np.float32)
    verts[:, 0] = np.c_[pts, np.zeros(len(pts)), np.ones(len(pts))]
    verts[:, 1, :2] = cols
    verts[:, 2, 0] = layer
    cmds = [
        (P.OP_TARGET, target),
        (P.OP_CLEAR, 0, 0, 0, 0),
        (P.OP_PROGRAM, prog),
        (P.OP_VERTEX_LAYOUT, 64, 3, [[i, 4, 16 * i] for i in range(4)]),
        (P.OP_VERTEX, *sc.put(verts.tobytes())),
        (P.OP_UNIFORM, 0, *sc.put(struct.pack("<f", half) + bytes(60))),
        (P.OP_DRAW, len(pts), 1, 0, 0),
        (P.OP_WRITEBACK, target),
    ]
    before = g.client.dropped()
    g.client.wait(g.client.submit(cmds))
    assert g.client.dropped() == before, g.log()[-2000:]
    raw = np.frombuffer(bytes(g.pool.mm[OFF : OFF + W * H * 4 * LAYERS]), np.uint8)
    return raw.reshape(LAYERS, H, W, 4).astype(int)


def check_layer(img: np.ndarray, pts: np.ndarray, cols: np.ndarray, half: float) -> None:
    covered, ambiguous, ref = points_to_quads(pts, cols, half, (W, H))
    want = np.round(np.clip(ref, 0, 1) * 255).astype(int)
    want[~covered] = 0
    diff = np.abs(img - want)[~ambiguous]
    assert diff.max() <= 1, (diff.max(), np.argwhere(np.abs(img - want).max(axis=2) > 1)[:5])


PTS = np.array([[-0.5, -0.5], [0.5, -0.5], [0.0, 0.5], [0.5, 0.5], [-0.5, 0.25], [0.0, 0.0], [-0.25, -0.25]])
LAYER_OF = np.array([0, 1, 2, 3, 1, 4, -1], np.float32)  # 4 and -1: beyond the target's layers


@pytest.mark.parametrize("arch", [86, 53])
def test_points_become_squares_in_the_layer_each_names(gpu, arch):
    prog = gpu.id()
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    gpu.client.register(ProgramDesc(prog, vs, fs, geometry=modules(arch, LAYER86 if arch == 86 else LAYER53, LAYER_HDR)))
    cols = np.random.default_rng(arch).uniform(0.1, 0.9, (len(PTS), 2))
    half = 0.2
    img = draw(gpu, prog, layered_target(gpu), PTS, cols, LAYER_OF, half)
    for k in range(LAYERS):
        sel = LAYER_OF == k
        assert sel.any()
        check_layer(img[k], PTS[sel], cols[sel], half)
        assert (img[k].max(axis=2) > 0).sum() >= 30 * sel.sum()  # the squares are there (about 6 x 6 pixels each)
    # the squares named layer 4 and -1 (centred at (0, 0) and (-0.25, -0.25)) are in no layer:
    # pixels (15, 15) and (12, 12) are inside one of them each and inside no other square
    assert (img[:, 15, 15] == 0).all() and (img[:, 12, 12] == 0).all()


def test_a_program_without_layer_draws_into_layer_0(gpu):
    from test_gpu_geometry import geometry_modules

    prog = gpu.id()
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    gpu.client.register(ProgramDesc(prog, vs, fs, geometry=geometry_modules(86)))
    cols = np.random.default_rng(5).uniform(0.1, 0.9, (len(PTS), 2))
    img = draw(gpu, prog, layered_target(gpu), PTS[:4], cols[:4], LAYER_OF[:4], 0.2)
    check_layer(img[0], PTS[:4], cols[:4], 0.2)
    assert (img[1:] == 0).all()  # cleared (every layer), nothing drawn


def _dropped_with(g: Gpu, cmds: list, msg: str) -> None:
    import time

    before = g.client.dropped()
    seq = g.client.submit(cmds)
    g.client.wait(seq)
    assert g.client.dropped() == before + 1, f"not dropped: {cmds}"
    end = time.monotonic() + 10
    while time.monotonic() < end:
        lines = [ln for ln in g.log().splitlines() if f"dropped submission {seq}: " in ln]
        if lines:
            assert msg in lines[-1], lines[-1]
            return
        time.sleep(0.05)
    raise AssertionError(f"no log line for submission {seq}")


def test_layered_target_misuse_refused_by_name(gpu):
    t, t2 = layered_target(gpu), layered_target(gpu, 2)
    flat, depth = gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(flat, 0, 0, W, H, "RGBA8", render_target=True))
    gpu.client.register(TextureDesc(depth, 0, 0, W, H, "D32F", render_target=True))
    cases = [
        (
            [(P.OP_DEPTH_TARGET, t, depth)],
            f"colour target {t} is layered ({LAYERS} layers) and depth target {depth} has one layer",
        ),
        ([(P.OP_RENDER_TARGETS, [t, flat] + [P.EMPTY] * 6, P.EMPTY)], "the colour targets' layer counts differ"),
        ([(P.OP_RENDER_TARGETS, [t, t2] + [P.EMPTY] * 6, P.EMPTY)], f"({t}: {LAYERS}, {t2}: 2)"),
        ([(P.OP_RENDER_TARGETS, [t] + [P.EMPTY] * 7, depth)], "a layered target is drawn without a depth target"),
        ([(P.OP_PRESENT, 1, t)], f"field texture = {t} is a layered render target ({LAYERS} layers)"),
    ]
    for cmds, msg in cases:
        _dropped_with(gpu, cmds, msg)


def test_a_vertex_programs_layer_and_viewport_index_refused_by_name():
    """(shader-tex: a geometry program's ViewportIndex is translated, test_gpu_viewports.py.)"""
    from quad_draw import program

    for a, name in ((0x64, "Layer"), (0x68, "ViewportIndex")):
        vs = VS_PASS.replace("EXIT", f"AST a[{a:#x}], R0\nEXIT")
        with pytest.raises(TranslateError, match=rf"a\[{a:#x}\] \({name}\) is translated in geometry programs only"):
            tr.translate(tr.make_program(86, 2, program("vertex", vs, dict(VS_PASS_HDR, outputs=VS_PASS_HDR["outputs"] | {a}))))
    # undeclared by the header: refused as any undeclared output
    with pytest.raises(TranslateError, match=r"writes a\[0x64\], which the shader program header does not declare"):
        tr.translate(tr.make_program(86, 4, code(86, LAYER86, dict(LAYER_HDR, outputs=LAYER_HDR["outputs"] - {0x64}))))


def test_the_layer_count_constant_is_the_one_both_sides_name():
    from gpu_host.objects import LAYER_COUNT_SPEC_ID as gpu_side
    from gpu_host.spirv_reflect import reflect
    from shader_svc.lower.gfx_geometry import LAYER_COUNT_SPEC_ID as shader_side

    assert gpu_side == shader_side
    r = reflect(modules(86, LAYER86, LAYER_HDR)[0][1], "geometry")
    assert r.spec_ids == {gpu_side}


def test_whole_pipelines_are_specialised_on_the_layer_count_too():
    """Without graphics pipeline libraries (``gpu_host.pipeline_library = off``) the whole
    pipeline carries the geometry stage's layer count: the same layers."""
    g = Gpu({"NXRECOMP_GPU_HOST_PIPELINE_LIBRARY": "off"})
    try:
        prog = g.id()
        vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
        g.client.register(ProgramDesc(prog, vs, fs, geometry=modules(86, LAYER86, LAYER_HDR)))
        cols = np.random.default_rng(3).uniform(0.1, 0.9, (len(PTS), 2))
        img = draw(g, prog, layered_target(g), PTS, cols, LAYER_OF, 0.2)
        for k in range(LAYERS):
            check_layer(img[k], PTS[LAYER_OF == k], cols[LAYER_OF == k], 0.2)
        assert (img[:, 15, 15] == 0).all() and (img[:, 12, 12] == 0).all()
    finally:
        g.close()


# --- through the NVN front end: nvnProgramSetShaders with a geometry stage writing Layer -------------
from test_gpu_geometry import monkeypatch_module, nvn, set_shaders  # noqa: E402, F401  (fixtures)


def test_nvn_program_writing_layer_draws_each_layer(gpu, nvn):  # noqa: F811  (the imported fixture)
    """The front end translates the SM86 geometry program with ``AST a[0x64]`` for every input
    primitive (its vertex and fragment programs beside it) and registers them; the draw into a
    layered target is the same as above."""
    from quad_draw import program

    stages = [
        (2, 86, program("vertex", VS_PASS, VS_PASS_HDR)),
        (3, 86, program("fragment", FS_QUAD, FS_QUAD_HDR)),
        (4, 86, code(86, LAYER86, LAYER_HDR)),
    ]
    assert set_shaders(nvn, 30, stages) == 1
    pid = nvn.mem[30]
    cols = np.random.default_rng(30).uniform(0.1, 0.9, (len(PTS), 2))
    img = draw(gpu, pid, layered_target(gpu), PTS, cols, LAYER_OF, 0.2)
    for k in range(LAYERS):
        check_layer(img[k], PTS[LAYER_OF == k], cols[LAYER_OF == k], 0.2)
