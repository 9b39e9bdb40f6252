"""Pipelines linked from graphics-pipeline-library parts draw what whole pipelines draw, and the
driver's compiled pipelines are kept on disk: written whole (a checksummed file renamed in),
read back by the next GPU process, a damaged file ignored with a warning, never a crash.
Real GPU processes on lavapipe (which has VK_EXT_graphics_pipeline_library)."""

from __future__ import annotations

import numpy as np

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from gpu_guest import Gpu, P, Scene, frame_image, gpu_log, rect_px, rect_uv_px, stop_gpu, ubo
from gpu_host import blocklinear
from gpu_host.pipelines import CACHE_MAGIC, read_cache

W, H = 64, 48


def scene_frame(gpu: Gpu) -> np.ndarray:
    """Colour rects (program 1, two blend states) and a textured quad (program 2): four pipelines."""
    c = gpu.client
    t = gpu.id()
    c.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 0)
    lin = (np.arange(16 * 8 * 4) * 37 % 256).astype(np.uint8).reshape(8, 64)
    tex, smp = gpu.id(), gpu.id()
    c.register(TextureDesc(tex, 1, sc.put(blocklinear.swizzle(lin, 0))[1], 16, 8, "RGBA8"))
    c.register(SamplerDesc(smp))
    cmds = [(P.OP_TARGET, t), (P.OP_CLEAR, 0.1, 0.2, 0.3, 1), (P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]])]
    for i, blend in enumerate((False, True)):
        cmds += [
            (P.OP_BLEND, blend),
            (P.OP_VERTEX, *sc.put(rect_px(4 + 20 * i, 4, 30 + 20 * i, 30, W, H).tobytes())),
            (P.OP_UNIFORM, 0, *sc.put(ubo((0.9, 0.3 * i, 0.2, 0.6)))),
            (P.OP_DRAW, 6, 1, 0, 0),
        ]
    cmds += [
        (P.OP_BLEND, False),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(rect_uv_px(40, 30, 56, 38, W, H).tobytes())),
        (P.OP_TEXTURE, 0, tex, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]
    n = next(gpu.frames)
    c.wait(c.submit(cmds + [(P.OP_PRESENT, n, t)]))
    assert c.dropped() == 0
    return frame_image(c, n)


def run_gpu(env: dict) -> tuple[np.ndarray, str]:
    """One frame from a fresh GPU process, stopped cleanly (SIGTERM); and its log."""
    g = Gpu(env)
    try:
        img = scene_frame(g)
    finally:
        g.client.close()
        stop_gpu(g.proc)
        log = gpu_log(g.dir)
        g.close = lambda: None
    return img, log


def test_library_parts_draw_what_whole_pipelines_draw(tmp_path):
    env = {"NXRECOMP_NXRECOMP_CACHE_DIR": str(tmp_path), "NXRECOMP_NXRECOMP_LOG_LEVEL": "info"}
    linked, log = run_gpu(env)
    assert "pipeline library: on" in log, log[-2000:]
    whole, log = run_gpu({**env, "NXRECOMP_GPU_HOST_PIPELINE_LIBRARY": "off"})
    assert "pipeline library: off" in log, log[-2000:]
    assert np.array_equal(linked, whole)
    assert len({tuple(p) for p in linked.reshape(-1, 4)}) >= 4  # clear, two rects, texels: a real scene


def test_pipeline_cache_kept_on_disk_and_damage_ignored(tmp_path):
    env = {"NXRECOMP_NXRECOMP_CACHE_DIR": str(tmp_path), "NXRECOMP_NXRECOMP_LOG_LEVEL": "info"}
    first, _ = run_gpu(env)
    files = list((tmp_path / "gpu_host").glob("pipelines-*.bin"))
    assert len(files) == 1, files
    raw = files[0].read_bytes()
    assert raw[:8] == CACHE_MAGIC and len(raw) >= 40 + 16  # our header + the driver's own header
    assert read_cache(files[0]) == raw[40:]
    assert not list((tmp_path / "gpu_host").glob(".*tmp"))  # no temporary file left behind
    again, log = run_gpu(env)
    assert f"{len(raw) - 40} bytes loaded" in log, log[-2000:]
    assert np.array_equal(first, again)
    damaged = bytearray(raw)
    damaged[-1] ^= 0xFF
    files[0].write_bytes(bytes(damaged))
    third, log = run_gpu(env)
    assert "does not match" in log and "ignored" in log, log[-2000:]
    assert np.array_equal(first, third)
    assert read_cache(files[0]) == raw[40:], "the damaged file was not replaced by a whole one"
