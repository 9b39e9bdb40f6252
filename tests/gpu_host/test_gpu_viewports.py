"""Viewport index output of a geometry program through the real GPU process on lavapipe
(shader-tex, issue 31): the point-to-square geometry program (tests/shader_svc/
geometry_programs.py, SM86 and SM53, nvdisasm's text) writes ``AST a[0x68]`` (ViewportIndex)
from each point's varying; the translation copies it to the ``ViewportIndex`` output at each
emitted vertex (MultiViewport), and the GPU process draws such a program with the device's
viewports: viewport 0 from VIEWPORT, the others from VIEWPORT_INDEXED (the whole target where
none was set).  Four viewports are the quadrants of a 32x32 target: each quadrant equals numpy's
squares of the points that named it, drawn into a 16x16 raster (within 1/255, edge pixels left
out); points naming viewport 16 (beyond the device's 16) or -1 are not emitted, so nothing of
them appears; a point naming viewport 5 (not set) covers the whole target's raster.  A target
resets the indexed viewports (a later draw without them puts every square in the whole target).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, TextureDesc
from gpu_guest import P, Gpu, Scene

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the test programs
from geometry_programs import POINT_QUAD53, POINT_QUAD86, points_to_quads  # noqa: E402
from quad_draw import VS_PASS, VS_PASS_HDR, spirv  # noqa: E402
from test_gpu_geometry import FS_QUAD, FS_QUAD_HDR  # noqa: E402
from test_gpu_layered import LAYER_HDR, code  # noqa: E402

from shader_svc import translate as tr  # noqa: E402
from shader_svc.request import GEOMETRY_STAGES  # noqa: E402

W = H = 32
OFF = 0x380000
# the point's viewport: input varying 1's x truncated, written once before the four vertices
VP86 = POINT_QUAD86.replace(
    "ALD.128 R12, a[0x80], R4\n", "ALD.128 R12, a[0x80], R4\nALD R6, a[0x90], R4\nF2I.TRUNC.NTZ R6, R6\nAST a[0x68], R6, R5\n"
)
VP53 = POINT_QUAD53.replace(
    "ALD.128 R12, a[0x80], R4\n", "ALD.128 R12, a[0x80], R4\nALD R6, a[0x90], R4\nF2I.S32.F32.TRUNC R6, R6\nAST a[0x68], R6, R5\n"
)
VP_HDR = dict(inputs=LAYER_HDR["inputs"], outputs=LAYER_HDR["outputs"] - {0x64} | {0x68})
QUADRANTS = [(0, 0), (16, 0), (0, 16), (16, 16)]  # viewport k's pixel origin (16 x 16 each)
PTS = np.array([[-0.5, -0.5], [0.5, -0.5], [0.0, 0.5], [0.5, 0.5], [-0.5, 0.25], [0.0, 0.0], [-0.25, -0.25]])
VP_OF = np.array([0, 1, 2, 3, 1, 16, -1], np.float32)  # 16 and -1: beyond the device's viewports


def modules(arch: int) -> tuple[tuple[int, bytes], ...]:
    c = code(arch, VP86 if arch == 86 else VP53, VP_HDR)
    return tuple((s, tr.translate(tr.make_program(arch, s, c))) for s in GEOMETRY_STAGES)


@pytest.fixture(scope="module")
def gpu():
    g = Gpu()  # lavapipe has multiViewport and 16 viewports
    yield g
    g.close()


def draw(g: Gpu, prog: int, pts, cols, vp_of, half: float, viewports: bool = True) -> np.ndarray:
    t = g.id()
    g.client.register(TextureDesc(t, g.pool.id, OFF, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
    g.pool.write(OFF, bytes([0x5A]) * (W * H * 4))
    sc = Scene(g.pool, 0)
    verts = np.zeros((len(pts), 4, 4), np.float32)
    verts[:, 0] = np.c_[pts, np.zeros(len(pts)), np.ones(len(pts))]
    verts[:, 1, :2] = cols
    verts[:, 2, 0] = vp_of
    vps = []
    if viewports:
        vps = [(P.OP_VIEWPORT, *map(float, QUADRANTS[0]), 16.0, 16.0)]
        vps += [(P.OP_VIEWPORT_INDEXED, k, *map(float, QUADRANTS[k]), 16.0, 16.0) for k in (1, 2, 3)]
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 0, 0),
        *vps,
        (P.OP_PROGRAM, prog),
        (P.OP_VERTEX_LAYOUT, 64, 3, [[i, 4, 16 * i] for i in range(4)]),
        (P.OP_VERTEX, *sc.put(verts.tobytes())),
        (P.OP_UNIFORM, 0, *sc.put(struct.pack("<f", half) + bytes(60))),
        (P.OP_DRAW, len(pts), 1, 0, 0),
        (P.OP_WRITEBACK, t),
    ]
    before = g.client.dropped()
    g.client.wait(g.client.submit(cmds))
    assert g.client.dropped() == before, g.log()[-2000:]
    raw = np.frombuffer(bytes(g.pool.mm[OFF : OFF + W * H * 4]), np.uint8)
    return raw.reshape(H, W, 4).astype(int)


def want(pts, cols, half: float, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    covered, ambiguous, ref = points_to_quads(pts, cols, half, size)
    out = np.round(np.clip(ref, 0, 1) * 255).astype(int)
    out[~covered] = 0
    return out, ambiguous


@pytest.mark.parametrize("arch", [86, 53])
def test_points_become_squares_in_the_viewport_each_names(gpu, arch):
    prog = gpu.id()
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    gpu.client.register(ProgramDesc(prog, vs, fs, geometry=modules(arch)))
    cols = np.random.default_rng(arch).uniform(0.1, 0.9, (len(PTS), 2))
    half = 0.3
    img = draw(gpu, prog, PTS, cols, VP_OF, half)
    for k, (x, y) in enumerate(QUADRANTS):
        sel = VP_OF == k
        assert sel.any()
        ref, amb = want(PTS[sel], cols[sel], half, (16, 16))
        part = img[y : y + 16, x : x + 16]
        diff = np.abs(part - ref)[~amb]
        assert diff.max() <= 1, (k, diff.max(), np.argwhere(np.abs(part - ref).max(axis=2) > 1)[:5])
        assert (part.max(axis=2) > 0).sum() >= 12 * sel.sum()  # the squares are there (about 4 x 4 pixels each)
    # viewport 16 and -1 squares (centred at (0, 0) and (-0.25, -0.25)) are drawn nowhere: every
    # pixel is in its quadrant's reference above (checked), so none of them leaked in


def test_an_unset_viewport_is_the_whole_target_and_a_target_resets_them(gpu):
    prog = gpu.id()
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    gpu.client.register(ProgramDesc(prog, vs, fs, geometry=modules(86)))
    cols = np.random.default_rng(9).uniform(0.1, 0.9, (2, 2))
    pts, half = PTS[:2], 0.2
    for viewports, vp_of in ((True, np.array([5, 7], np.float32)), (False, np.array([1, 3], np.float32))):
        img = draw(gpu, prog, pts, cols, vp_of, half, viewports)
        ref, amb = want(pts, cols, half, (W, H))
        assert np.abs(img - ref)[~amb].max() <= 1, viewports
        assert (img.max(axis=2) > 0).sum() >= 30 * len(pts)


def test_viewport_packets_refused_by_name():
    from gpu_host import packets

    with pytest.raises(packets.PacketError, match=r"VIEWPORT_INDEXED: field index = 16 is not in 0..15"):
        packets.check_full((P.OP_VIEWPORT_INDEXED, 16, 0.0, 0.0, 16.0, 16.0))
    with pytest.raises(packets.PacketError, match=r"VIEWPORT_INDEXED: size 0.0x16.0 is not in 1..16384"):
        packets.check_full((P.OP_VIEWPORT_INDEXED, 1, 0.0, 0.0, 0.0, 16.0))


def test_the_viewport_count_constant_is_the_one_both_sides_name():
    from gpu_host.objects import VIEWPORT_COUNT_SPEC_ID as gpu_side
    from gpu_host.spirv_reflect import reflect
    from shader_svc.lower.gfx_geometry import VIEWPORT_COUNT_SPEC_ID as shader_side

    assert gpu_side == shader_side
    r = reflect(modules(86)[0][1], "geometry")
    assert r.spec_ids == {gpu_side}
