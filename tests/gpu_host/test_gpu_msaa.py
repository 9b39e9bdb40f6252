"""Multisampled render targets and RESOLVE on lavapipe, through the real client, ring and GPU
process.

A triangle whose edges cross pixels is drawn into a 4-sample target and resolved.  The oracle is
the Vulkan specification's table of standard sample locations (4 samples: (0.375, 0.125),
(0.875, 0.375), (0.125, 0.625), (0.625, 0.875) within the pixel): numpy decides which samples the
triangle covers, and a resolved pixel must be the mean of its samples' colours (within 1/255).
The geometry keeps every sample well away from every edge, so the tie rules never matter."""

from __future__ import annotations

import itertools
import subprocess
import sys
import time

import numpy as np
import pytest

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from nxrecomp.common.errors import NxError
from gpu_guest import P, Scene, frame_image, start_gpu, attach, stop_gpu, to8, ubo

W, H = 32, 24
E = P.EMPTY
# Vulkan spec, "Standard sample locations" (VK_SAMPLE_COUNT_4_BIT), in pixel units.
STD4 = np.array([(0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875)])
# pixel coordinates, y down, on a 1/16 grid (exact through the rasterizer's 8 subpixel bits)
TRI = np.array([(2.4375, 3.8125), (29.4375, 7.0), (12.0625, 21.4375)])
# No channel of FG/BG is an 8-bit rounding tie (c x 255 = n + 0.5 may be stored as either neighbour:
# NVIDIA rounds 127.5 down, lavapipe up), so their 8-bit values below are the devices' own.
FG, BG = (1.0, 0.4, 0.25, 1.0), (0.0, 0.2, 0.6, 1.0)
LAYOUT = (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]])
_frames = itertools.count(900000)


def _edge(a, b, px, py):
    return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0])


def coverage(tri: np.ndarray, locs: np.ndarray, check: bool = True) -> np.ndarray:
    """(H, W, samples) bool: which samples lie inside ``tri``; ``check``: assert that none is within
    0.01 px of an edge (the rasterizer's 1/256 px vertex snapping cannot move them across it)."""
    ys, xs = np.mgrid[0:H, 0:W]
    px = xs[..., None] + locs[:, 0]
    py = ys[..., None] + locs[:, 1]
    es = [_edge(tri[i], tri[(i + 1) % 3], px, py) for i in range(3)]
    for i, e in enumerate(es):
        a, b = tri[i], tri[(i + 1) % 3]
        assert not check or np.abs(e).min() / np.hypot(*(b - a)) > 0.01, "a sample lies on an edge: the oracle is ambiguous"
    return ((es[0] > 0) & (es[1] > 0) & (es[2] > 0)) | ((es[0] < 0) & (es[1] < 0) & (es[2] < 0))


def expected(locs: np.ndarray) -> np.ndarray:
    """Resolved RGBA as floats 0..255: each pixel the mean of its samples' 8-bit colours."""
    cov = coverage(TRI, locs).astype(np.float64)[..., None]
    fg, bg = to8(FG).astype(np.float64), to8(BG).astype(np.float64)
    return (cov * fg + (1 - cov) * bg).mean(axis=2)


def tri_ndc() -> np.ndarray:
    return np.array([(2 * x / W - 1, 2 * y / H - 1) for x, y in TRI], np.float32)


def draw(sc) -> list:
    return [
        (P.OP_PROGRAM, 1),
        LAYOUT,
        (P.OP_VERTEX, *sc.put(tri_ndc().tobytes())),
        (P.OP_UNIFORM, 0, *sc.put(ubo(FG))),
        (P.OP_DRAW, 3, 1, 0, 0),
    ]


def rt(gpu, samples=1, fmt="RGBA8", w=W, h=H) -> int:
    t = gpu.id()
    gpu.client.register(TextureDesc(t, 1, 0, w, h, fmt, block_linear=False, pitch=w * 4, render_target=True, samples=samples))
    return t


def present(gpu, cmds, target) -> np.ndarray:
    n = next(_frames)
    before = gpu.client.dropped()
    gpu.client.wait(gpu.client.submit(cmds + [(P.OP_PRESENT, n, target)]))
    assert gpu.client.dropped() == before, gpu.log()[-1500:]
    return frame_image(gpu.client, n)


def test_4x_triangle_resolves_to_the_mean_of_covered_samples(gpu):
    ms, out, one = rt(gpu, 4), rt(gpu), rt(gpu)
    sc = Scene(gpu.pool, 0)
    got = present(
        gpu, [(P.OP_TARGET, ms), (P.OP_CLEAR, *BG), (P.OP_MULTISAMPLE, 4, False)] + draw(sc) + [(P.OP_RESOLVE, ms, out)], out
    ).astype(np.float64)
    want = expected(STD4)
    cov = coverage(TRI, STD4)
    partial = cov.any(axis=2) & ~cov.all(axis=2)
    assert partial.sum() > 20  # the edges cross many pixels
    assert np.abs(got - want).max() <= 1.0, np.argwhere(np.abs(got - want) > 1.0)[:5]
    # interior and exterior pixels exact
    assert np.array_equal(got[cov.all(axis=2)], np.broadcast_to(to8(FG), got[cov.all(axis=2)].shape))
    assert np.array_equal(got[~cov.any(axis=2)], np.broadcast_to(to8(BG), got[~cov.any(axis=2)].shape))
    # the same triangle at one sample: pixel centres only; the edge pixels differ from the resolve
    single = present(gpu, [(P.OP_TARGET, one), (P.OP_CLEAR, *BG)] + draw(Scene(gpu.pool, 0)), one).astype(np.float64)
    centre = expected(np.array([(0.5, 0.5)]))
    assert np.array_equal(single, centre)
    assert (np.abs(single - got)[partial].max(axis=1) > 8).mean() > 0.9


def test_2x_and_8x_targets_draw_and_resolve_or_are_refused_by_the_device(gpu):
    """Other counts: where the device renders them, interior and exterior exact and edge pixels
    between FG and BG; where it does not (lavapipe offers 1 and 4), registration is refused naming
    the field and the device limit."""
    for n in (2, 8):
        try:
            ms = rt(gpu, n)
        except NxError as e:
            assert f"field samples {n} is not in" in str(e) and "framebufferColorSampleCounts" in str(e), e
            continue
        out = rt(gpu)
        got = present(
            gpu, [(P.OP_TARGET, ms), (P.OP_CLEAR, *BG)] + draw(Scene(gpu.pool, 0)) + [(P.OP_RESOLVE, ms, out)], out
        ).astype(int)
        far = coverage(TRI, np.array([(dx, dy) for dx in (0.01, 0.99) for dy in (0.01, 0.99)]), check=False)
        inside, outside = far.all(axis=2), ~far.any(axis=2)
        assert np.array_equal(got[inside], np.broadcast_to(to8(FG), got[inside].shape)), n
        assert np.array_equal(got[outside], np.broadcast_to(to8(BG), got[outside].shape)), n
        lo, hi = np.minimum(to8(FG), to8(BG)).astype(int), np.maximum(to8(FG), to8(BG)).astype(int)
        assert ((got >= lo) & (got <= hi)).all()
        mixed = ~inside & ~outside
        assert (np.abs(got[mixed] - to8(FG).astype(int)).max(axis=1) > 8).any(), n


def test_4x_with_a_4x_depth_target(gpu):
    """A multisampled depth target beside the colour one: a nearer full-screen quad drawn after
    hides the triangle everywhere, a farther one nowhere (per sample)."""
    ms, out, d = rt(gpu, 4), rt(gpu), gpu.id()
    gpu.client.register(TextureDesc(d, 0, 0, W, H, "D32F", render_target=True, samples=4))
    sc = Scene(gpu.pool, 0)
    less = P.COMPARE_OPS.index("less")
    ds = (P.OP_DEPTH_STENCIL, True, True, less, False, *(0, 0, 0, 7, 0, 255, 255) * 2)
    quad = np.array([(-1, -1), (1, -1), (1, 1), (-1, -1), (1, 1), (-1, 1)], np.float32)
    cmds = [(P.OP_DEPTH_TARGET, ms, d), (P.OP_CLEAR, *BG), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1), ds] + draw(sc)
    got = present(gpu, cmds + [(P.OP_RESOLVE, ms, out)], out).astype(np.float64)
    assert np.abs(got - expected(STD4)).max() <= 1.0
    # a quad at z 0 (the triangle is at z 0 too: "less" keeps the triangle) — nothing changes
    cmds2 = cmds + [
        (P.OP_VERTEX, *sc.put(quad.tobytes())),
        (P.OP_UNIFORM, 0, *sc.put(ubo((0, 1, 0, 1)))),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_RESOLVE, ms, out),
    ]
    got2 = present(gpu, cmds2, out).astype(np.float64)
    cov = coverage(TRI, STD4).astype(np.float64)[..., None]
    want2 = (cov * to8(FG) + (1 - cov) * to8((0, 1, 0, 1))).mean(axis=2)
    assert np.abs(got2 - want2).max() <= 1.0


def test_alpha_to_coverage_changes_the_resolve(gpu):
    """Alpha 0.5 with alpha-to-coverage: inside the triangle some samples are written, not all
    (Vulkan leaves which ones to the implementation), so interior pixels lie strictly between
    FG and BG; without it they are FG with alpha 0.5 exactly."""
    ms, out = rt(gpu, 4), rt(gpu)
    half = (1.0, 0.5, 0.25, 0.5)
    base = [(P.OP_TARGET, ms), (P.OP_CLEAR, *BG), (P.OP_PROGRAM, 1), LAYOUT]
    sc = Scene(gpu.pool, 0)
    tri = [(P.OP_VERTEX, *sc.put(tri_ndc().tobytes())), (P.OP_UNIFORM, 0, *sc.put(ubo(half))), (P.OP_DRAW, 3, 1, 0, 0)]
    inside = coverage(TRI, STD4).all(axis=2)
    off = present(gpu, base + [(P.OP_MULTISAMPLE, 4, False)] + tri + [(P.OP_RESOLVE, ms, out)], out)
    from gpu_guest import assert_unorm, unorm8  # (either neighbour of alpha 0.5's 127.5)

    assert_unorm(off[inside], np.broadcast_to(unorm8(half), off[inside].shape), "alpha-to-coverage off")
    on = present(gpu, base + [(P.OP_MULTISAMPLE, 4, True)] + tri + [(P.OP_RESOLVE, ms, out)], out).astype(int)
    r = on[inside][:, 0]
    assert ((r > to8(BG)[0]) & (r < to8(half)[0])).all(), np.unique(r)


def test_bad_sample_counts_are_refused_at_registration(gpu):
    for n, msg in (
        (3, "field samples 3 is not one of"),
        (16, "field samples 16 is not one of"),
        (64, "field samples 64 is not one of"),
    ):
        with pytest.raises(NxError, match=msg):
            rt(gpu, n)
    with pytest.raises(NxError, match="field samples 4 needs a render target"):
        gpu.client.register(TextureDesc(gpu.id(), 1, 0, 8, 8, "RGBA8", block_linear=False, pitch=32, samples=4))


def test_hostile_submissions_are_dropped_by_name(gpu):
    ms, ms2, out, small, d1 = rt(gpu, 4), rt(gpu, 4), rt(gpu), rt(gpu, 1, w=16), gpu.id()
    r16 = rt(gpu, 1, "RGBA16F")
    ms16 = rt(gpu, 4, "RGBA16F")
    gpu.client.register(TextureDesc(d1, 0, 0, W, H, "D32F", render_target=True))
    smp = gpu.id()
    gpu.client.register(SamplerDesc(smp))
    sc = Scene(gpu.pool, 0)
    tex = [
        (P.OP_TARGET, out),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(np.zeros(24, np.float32).tobytes())),
        (P.OP_TEXTURE, 0, ms, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]
    cases = [
        ([(P.OP_RESOLVE, out, out)], f"packet 0 RESOLVE: field src = {out} has one sample"),
        ([(P.OP_RESOLVE, ms, ms2)], f"packet 0 RESOLVE: field dst = {ms2} has 4 samples; it must have one"),
        ([(P.OP_RESOLVE, ms, small)], f"packet 0 RESOLVE: field dst = {small} is 16x24, src = {ms} 32x24"),
        ([(P.OP_RESOLVE, ms, r16)], f"packet 0 RESOLVE: field dst = {r16} has format RGBA16F, src = {ms} RGBA8"),
        ([(P.OP_RESOLVE, ms16, out)], f"packet 0 RESOLVE: field dst = {out} has format RGBA8, src = {ms16} RGBA16F"),
        ([(P.OP_RESOLVE, 77777, out)], "packet 0 RESOLVE: field src = 77777 is not a registered texture"),
        ([(P.OP_RESOLVE, ms, d1)], f"packet 0 RESOLVE: field dst = {d1} has depth format D32F"),
        ([(P.OP_TARGET, ms), (P.OP_PRESENT, 5, ms)], f"packet 1 PRESENT: field texture {ms} is multisampled"),
        ([(P.OP_TARGET, ms), (P.OP_WRITEBACK, ms)], f"packet 1 WRITEBACK: field texture {ms} is multisampled"),
        (tex, f"packet 4 TEXTURE: field texture {ms} is multisampled (4 samples)"),
        ([(P.OP_POOLS, (ms, *[E] * 15), (E,) * 4)], f"packet 0 POOLS: field textures[0] = {ms} is multisampled"),
        (
            [(P.OP_TARGET, ms), (P.OP_MULTISAMPLE, 2, False)] + draw(Scene(gpu.pool, 0)),
            f"packet 6 DRAW: MULTISAMPLE's samples = 2 but target {ms} has 4 sample(s)",
        ),
        (
            [(P.OP_DEPTH_TARGET, ms, d1)] + draw(Scene(gpu.pool, 0)),
            f"packet 5 DRAW: the bound targets' sample counts differ ({ms}: 4, {d1}: 1)",
        ),
        (
            [(P.OP_RENDER_TARGETS, (ms, out), E)] + draw(Scene(gpu.pool, 0)),
            f"packet 5 DRAW: the bound targets' sample counts differ ({ms}: 4, {out}: 1)",
        ),
    ]
    for cmds, message in cases:
        before = gpu.client.dropped()
        seq = gpu.client.submit(cmds)
        gpu.client.wait(seq)
        assert gpu.client.dropped() == before + 1, message
        line = f"dropped submission {seq}: {message}"
        deadline = time.monotonic() + 60  # a bound, not a speed check: the log is written by a writer thread
        while line not in gpu.log() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert line in gpu.log(), (message, gpu.log()[-800:])
    # still serving, and a one-sample target ignores MULTISAMPLE's count (as before multisampled targets)
    got = present(
        gpu, [(P.OP_TARGET, out), (P.OP_CLEAR, *BG), (P.OP_MULTISAMPLE, 4, True)] + draw(Scene(gpu.pool, 0)), out
    ).astype(np.float64)
    assert np.array_equal(got, expected(np.array([(0.5, 0.5)])))


def test_recording_replays_to_the_same_frames(tmp_path):
    from cpu_host.gpu_client.client import GpuClient
    from cpu_host.gpu_client.shaders import GlslSource
    from gpu_guest import COLOR_FS, COLOR_VS

    rec = tmp_path / "msaa.rec"
    proc, d = start_gpu(args=["--record", str(rec)])
    try:
        client = GpuClient(d, ring_capacity=1 << 20)
        attach(client, proc)
        pool = client.create_pool(1, 1 << 20)
        client.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
        client.register(TextureDesc(10, 1, 0, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True, samples=4))
        client.register(TextureDesc(11, 1, 0, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
        sc = Scene(pool, 0)
        client.wait(
            client.submit(
                [(P.OP_TARGET, 10), (P.OP_CLEAR, *BG), (P.OP_MULTISAMPLE, 4, False)]
                + draw(sc)
                + [(P.OP_RESOLVE, 10, 11), (P.OP_PRESENT, 1, 11)]
            )
        )
        live = frame_image(client, 1).copy()
        live_sha = client.frame(1).sha256
        client.close()
    finally:
        stop_gpu(proc)
    assert np.abs(live.astype(np.float64) - expected(STD4)).max() <= 1.0
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "replay", str(rec), "--out", str(out)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    frames = dict(line.split() for line in (out / "frames.txt").read_text().splitlines())
    assert {int(k): v for k, v in frames.items()} == {1: live_sha}
