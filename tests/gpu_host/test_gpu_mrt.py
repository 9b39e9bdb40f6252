"""Multiple colour render targets (RENDER_TARGETS, CLEAR_TARGET, per-target BLEND_STATE) on
lavapipe, through the real client, ring and GPU process.

One fragment shader writes a different colour to each of locations 0..3; the four targets are
of mixed formats (RGBA8, RGBA16F, R8, RG8) and are written back into pool memory (pitch-linear
rows), where numpy reads them: unorm values are round(c * 255), RGBA16F values numpy's own
float16 of the colour.  Blending is computed here from the blend equation's definition."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import TEX_VS, P, Scene, assert_unorm, frame_image, rect_uv_px, start_gpu, attach, stop_gpu, to8, unorm8

W, H = 32, 16
E = P.EMPTY
FORMATS = ("RGBA8", "RGBA16F", "R8", "RG8")
BPP = {"RGBA8": 4, "RGBA16F": 8, "R8": 1, "RG8": 2}
CHANNELS = {"RGBA8": 4, "RGBA16F": 4, "R8": 1, "RG8": 2}
WB_BASE = 6 << 20  # where the targets' pool ranges start (pool 1)

MRT_VS = """#version 450
layout(location=0) in vec3 pos;
void main() { gl_Position = vec4(pos, 1.0); }"""
MRT_FS = """#version 450
layout(set=0, binding=0) uniform U { vec4 c[4]; } u;
layout(location=0) out vec4 o0;
layout(location=1) out vec4 o1;
layout(location=2) out vec4 o2;
layout(location=3) out vec4 o3;
void main() { o0 = u.c[0]; o1 = u.c[1]; o2 = u.c[2]; o3 = u.c[3]; }"""
LAYOUT = (P.OP_VERTEX_LAYOUT, 12, 0, [[0, 3, 0]])
_fences = itertools.count(1)


@pytest.fixture(scope="module")
def mrt_prog(gpu):
    pid = gpu.id()
    gpu.client.register_program(pid, GlslSource(MRT_VS, MRT_FS))
    return pid


def rect_z(x0, y0, x1, y1, z, w=W, h=H) -> np.ndarray:
    a, b = 2 * x0 / w - 1, 2 * x1 / w - 1
    c, d = 2 * y0 / h - 1, 2 * y1 / h - 1
    return np.array([[a, c, z], [b, c, z], [b, d, z], [a, c, z], [b, d, z], [a, d, z]], np.float32)


def make_targets(gpu, formats=FORMATS, w=W, h=H) -> list[int]:
    """Render targets of ``formats``, each with its own pitch-linear range in pool 1."""
    ids = []
    for k, fmt in enumerate(formats):
        t = gpu.id()
        gpu.client.register(
            TextureDesc(t, 1, WB_BASE + k * 65536, w, h, fmt, block_linear=False, pitch=w * BPP[fmt], render_target=True)
        )
        ids.append(t)
    return ids


def draw(sc, prog, rect, colors) -> list:
    """One rectangle (x0, y0, x1, y1, z) writing ``colors[k]`` to location k."""
    cols = np.zeros((4, 4), np.float32)
    cols[: len(colors)] = colors
    return [
        (P.OP_PROGRAM, prog),
        LAYOUT,
        (P.OP_VERTEX, *sc.put(rect_z(*rect).tobytes())),
        (P.OP_UNIFORM, 0, *sc.put(cols.tobytes())),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]


def run_wb(gpu, ids, formats, cmds) -> list[np.ndarray]:
    """Submit ``cmds`` plus a WRITEBACK of every target; each target's pixels as (h, w, channels)."""
    fence = next(_fences)
    before = gpu.client.dropped()
    seq = gpu.client.submit(cmds + [(P.OP_WRITEBACK, t) for t in ids] + [(P.OP_SIGNAL, 9, fence)])
    gpu.client.wait(seq)
    assert gpu.client.dropped() == before, gpu.log()[-1500:]
    out = []
    for k, fmt in enumerate(formats):
        n = W * H * BPP[fmt]
        raw = np.frombuffer(bytes(gpu.pool.mm[WB_BASE + k * 65536 : WB_BASE + k * 65536 + n]), np.uint8)
        if fmt == "RGBA16F":
            out.append(raw.view("<f2").reshape(H, W, 4))
        else:
            out.append(raw.reshape(H, W, CHANNELS[fmt]))
    return out


def expect(fmt, bg, rects) -> np.ndarray:
    """A target of ``fmt`` cleared to ``bg`` with ``rects`` ((x0, y0, x1, y1), colour) painted: its
    halves, or for 8-bit formats the exact (unrounded) values ``check`` compares as Vulkan allows."""
    ch = CHANNELS[fmt]
    conv = (lambda c: np.asarray(c[:ch], np.float16)) if fmt == "RGBA16F" else (lambda c: unorm8(c[:ch]))
    img = np.empty((H, W, ch), np.float16 if fmt == "RGBA16F" else np.float64)
    img[:] = conv(bg)
    for (x0, y0, x1, y1), col in rects:
        img[y0:y1, x0:x1] = conv(col)
    return img


def check(got: np.ndarray, want: np.ndarray, what: str = "target") -> None:
    """RGBA16F exactly; 8-bit targets as the float -> UNORM conversion allows (either integer next
    to a non-integer c x 255: NVIDIA rounds 127.5 down, lavapipe up)."""
    if want.dtype == np.float16:
        assert np.array_equal(got, want), what
    else:
        assert_unorm(got, want, what)


BG = [(0.2, 0.4, 0.6, 1.0), (0.25, -1.5, 8.0, 0.5), (0.25, 0, 0, 0), (0.5, 0.75, 0, 0)]
FG = [(1.0, 0.0, 0.0, 0.5), (2.0, 3.0, 4.0, 1.0), (0.5, 0, 0, 0), (0.0, 1.0, 0, 0)]
RECT = (4, 2, 20, 12)


def test_four_targets_of_mixed_formats_each_get_their_location(gpu, mrt_prog):
    ids = make_targets(gpu)
    sc = Scene(gpu.pool, 0)
    cmds = [(P.OP_RENDER_TARGETS, tuple(ids), E)]
    cmds += [(P.OP_CLEAR_TARGET, k, *BG[k]) for k in range(4)]
    cmds += draw(sc, mrt_prog, (*RECT, 0.5), FG)
    got = run_wb(gpu, ids, FORMATS, cmds)
    for k, fmt in enumerate(FORMATS):
        check(got[k], expect(fmt, BG[k], [(RECT, FG[k])]), fmt)
    # target 0 is also presented as it is: the same pixels
    n = next(gpu.frames)
    gpu.client.wait(gpu.client.submit([(P.OP_PRESENT, n, ids[0])]))
    assert np.array_equal(frame_image(gpu.client, n), got[0])


def test_clear_is_target_0_and_clear_target_clears_one(gpu, mrt_prog):
    ids = make_targets(gpu)
    cmds = [(P.OP_RENDER_TARGETS, tuple(ids), E)] + [(P.OP_CLEAR_TARGET, k, *BG[k]) for k in range(4)]
    cmds += [(P.OP_CLEAR, 0.0, 1.0, 0.0, 1.0), (P.OP_CLEAR_TARGET, 2, 1.0, 0, 0, 0)]
    got = run_wb(gpu, ids, FORMATS, cmds)
    check(got[0], expect("RGBA8", (0, 1, 0, 1), []))
    check(got[1], expect("RGBA16F", BG[1], []))
    check(got[2], expect("R8", (1.0,), []))
    check(got[3], expect("RG8", BG[3], []))


def test_blend_and_write_mask_per_target(gpu, mrt_prog):
    """Target 0: source-alpha over; 1: write mask red only; 2: additive (one, one); 3: off."""
    ids = make_targets(gpu)
    sc = Scene(gpu.pool, 0)
    one, zero, add = P.BLEND_FACTORS.index("one"), P.BLEND_FACTORS.index("zero"), P.BLEND_OPS.index("add")
    cmds = [(P.OP_RENDER_TARGETS, tuple(ids), E)] + [(P.OP_CLEAR_TARGET, k, *BG[k]) for k in range(4)]
    cmds += [
        P.BLEND_OVER,
        (P.OP_BLEND_STATE, 1, False, one, zero, add, one, zero, add, 1),
        (P.OP_BLEND_STATE, 2, True, one, one, add, one, one, add, 15),
    ]
    cmds += draw(sc, mrt_prog, (*RECT, 0.5), FG)
    got = run_wb(gpu, ids, FORMATS, cmds)
    # 0: the destination is what the target holds (8-bit); c = s*a + d*(1-a), alpha = a + d_a*(1-a)
    d = to8(BG[0]).astype(np.float64) / 255
    s = np.array(FG[0])
    a = s[3]
    want0 = np.array([*(s[:3] * a + d[:3] * (1 - a)), a + d[3] * (1 - a)])
    inside = got[0][RECT[1] : RECT[3], RECT[0] : RECT[2]].astype(int)
    assert np.abs(inside - np.round(want0 * 255)).max() <= 1
    check(got[0][0 : RECT[1]], expect("RGBA8", BG[0], [])[0 : RECT[1]])
    want1 = np.asarray(BG[1], np.float16).copy()
    want1[0] = np.float16(FG[1][0])
    w1 = expect("RGBA16F", BG[1], [(RECT, tuple(float(v) for v in want1))])
    assert np.array_equal(got[1], w1), (got[1][RECT[1], RECT[0]], w1[RECT[1], RECT[0]])
    r8 = got[2][RECT[1] : RECT[3], RECT[0] : RECT[2], 0].astype(int)
    assert np.abs(r8 - (int(to8(BG[2][:1])[0]) + int(to8(FG[2][:1])[0]))).max() <= 1
    check(got[3], expect("RG8", BG[3], [(RECT, FG[3])]))


def test_depth_test_with_mrt(gpu, mrt_prog):
    """Two overlapping rectangles at z 0.25 (drawn second) and 0.75: the nearer wins in both
    colour targets, whichever order they come in."""
    fmts = ("RGBA8", "RG8")
    ids = make_targets(gpu, fmts)
    d = gpu.id()
    gpu.client.register(TextureDesc(d, 0, 0, W, H, "D32F", render_target=True))
    sc = Scene(gpu.pool, 0)
    near, far = (2, 2, 18, 12), (10, 4, 30, 15)
    cn, cf = [(1, 0, 0, 1), (0.0, 1.0, 0, 0)], [(0, 0, 1, 1), (1.0, 0.0, 0, 0)]
    ds = (P.OP_DEPTH_STENCIL, True, True, P.COMPARE_OPS.index("less"), False, *(0, 0, 0, 7, 0, 255, 255) * 2)
    for order in ((near, cn, 0.25), (far, cf, 0.75)), ((far, cf, 0.75), (near, cn, 0.25)):
        cmds = [
            (P.OP_RENDER_TARGETS, tuple(ids), d),
            (P.OP_CLEAR, 0, 0, 0, 1),
            (P.OP_CLEAR_TARGET, 1, 0, 0, 0, 0),
            (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1),
            ds,
        ]
        for rect, cols, z in order:
            cmds += draw(sc, mrt_prog, (*rect, z), cols)
        got = run_wb(gpu, ids, fmts, cmds)
        for k, fmt in enumerate(fmts):
            want = expect(fmt, (0, 0, 0, 1) if k == 0 else (0, 0, 0, 0), [(far, cf[k]), (near, cn[k])])
            check(got[k], want, f"{fmt} {order}")


def sample_pass(sc, target, src, smp) -> list:
    return [
        (P.OP_TARGET, target),
        (P.OP_CLEAR, 0, 0, 0, 1),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(rect_uv_px(0, 0, W, H, W, H).tobytes())),
        (P.OP_TEXTURE, 0, src, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]


def test_each_target_sampled_in_a_later_pass(gpu, mrt_prog):
    """After the MRT pass every target is sampled (nearest, texel centres) into an RGBA8 target:
    the unorm targets read back exactly, missing channels as Vulkan fills them (0, 0, 1)."""
    ids = make_targets(gpu)
    out, smp = gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(out, 0, 0, W, H, "RGBA8", render_target=True))
    gpu.client.register(SamplerDesc(smp))
    sc = Scene(gpu.pool, 0)
    fg = [FG[0], (0.5, 0.25, 1.0, 1.0), FG[2], FG[3]]
    bg = [BG[0], (0.0, 0.5, 0.25, 1.0), BG[2], BG[3]]
    mrt = [(P.OP_RENDER_TARGETS, tuple(ids), E)] + [(P.OP_CLEAR_TARGET, k, *bg[k]) for k in range(4)]
    mrt += draw(sc, mrt_prog, (*RECT, 0.5), fg)
    for k, fmt in enumerate(FORMATS):
        n = next(gpu.frames)
        seq = gpu.client.submit(mrt + sample_pass(sc, out, ids[k], smp) + [(P.OP_PRESENT, n, out)])
        gpu.client.wait(seq)
        img = frame_image(gpu.client, n)
        fill = {1: (0, 0, 1), 2: (0, 1), 4: ()}[CHANNELS[fmt]]

        def full(c):
            return tuple(c[: CHANNELS[fmt]]) + fill

        # what the target stored (either integer next to c x 255), sampled and written back as it is
        want = np.empty((H, W, 4), np.float64)
        want[:] = unorm8(full(bg[k]))
        want[RECT[1] : RECT[3], RECT[0] : RECT[2]] = unorm8(full(fg[k]))
        assert_unorm(img, want, fmt)


def expect_dropped(gpu, cmds, message) -> None:
    before = gpu.client.dropped()
    seq = gpu.client.submit(cmds)
    gpu.client.wait(seq, timeout=20)
    assert gpu.client.dropped() == before + 1
    deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
    while message not in gpu.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert message in gpu.log(), gpu.log()[-2000:]


def test_hostile_render_targets_are_dropped_and_the_process_keeps_serving(gpu, mrt_prog):
    ids = make_targets(gpu)
    small, dep, plain, smp, small_dep = gpu.id(), gpu.id(), gpu.id(), gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(small, 0, 0, W // 2, H, "RGBA8", render_target=True))
    gpu.client.register(TextureDesc(dep, 0, 0, W, H, "D32F", render_target=True))
    gpu.client.register(TextureDesc(small_dep, 0, 0, W, H // 2, "D16", render_target=True))
    gpu.client.register(TextureDesc(plain, 1, 0, W, H, "RGBA8", block_linear=False, pitch=W * 4))
    gpu.client.register(SamplerDesc(smp))
    sc = Scene(gpu.pool, 0)
    rt = P.OP_RENDER_TARGETS
    cases = [
        ([(rt, (ids[0], small), E)], "field colors[1] = %d is 16x16, colors[0] = %d 32x16" % (small, ids[0])),
        ([(rt, (ids[0],), small_dep)], "field depth = %d is 32x8" % small_dep),
        ([(rt, (ids[0], dep), E)], "field colors[1] = %d has depth format D32F" % dep),
        ([(rt, (ids[0], ids[1], ids[0]), E)], "field colors[2] = %d is also colors[0]" % ids[0]),
        ([(rt, (ids[0], 999999), E)], "field colors[1] = 999999 is not a registered texture"),
        ([(rt, (ids[0], plain), E)], "field colors[1] = %d was not registered as a render target" % plain),
        ([(rt, (ids[0], E, ids[1]), E)], "field colors[1] is empty but a later colour target is set"),
        ([(rt, (E,), E)], "fields colors and depth are all empty"),
        ([(rt, (ids[0],), ids[1])], "field depth = %d has format RGBA16F, not a depth format" % ids[1]),
        ([(rt, tuple(ids[:2]), E), (P.OP_CLEAR_TARGET, 2, 0, 0, 0, 0)], "field index = 2 names no bound colour target"),
        ([(rt, tuple(ids), E), (P.OP_PRESENT, 1 << 40, ids[1])], "has format RGBA16F; only RGBA8 and BGRA8"),
        (
            [(rt, tuple(ids), E), (P.OP_TEXTURE, 0, ids[3], smp)] + draw(sc, mrt_prog, (*RECT, 0.5), FG),
            "texture %d in slot 0 is the current render target" % ids[3],
        ),
        ([(rt, tuple(ids) * 2 + (ids[0],), E)], "RENDER_TARGETS: field colors = "),  # 9: over the packet's 8
        ([(rt, tuple(ids), E), (P.OP_CLEAR_TARGET, 8, 0, 0, 0, 0)], "CLEAR_TARGET: field index = 8 is not in 0..7"),
    ]
    for cmds, message in cases:
        expect_dropped(gpu, cmds, message)
    # still serving: a good MRT submission draws
    got = run_wb(gpu, ids, FORMATS, [(rt, tuple(ids), E)] + [(P.OP_CLEAR_TARGET, k, *BG[k]) for k in range(4)])
    check(got[2], expect("R8", BG[2], []))


def test_mrt_recording_replays_to_the_same_frames(tmp_path):
    """A recording of MRT passes (per-target clears and blends, a depth target) and a pass
    sampling two of the targets replays alone (``nxrecomp replay``) to the live run's frames."""
    rec = tmp_path / "run.nxgpu"
    proc, dr = start_gpu(args=["--record", str(rec)])
    live = {}
    try:
        from cpu_host.gpu_client.client import GpuClient

        cl = GpuClient(dr, ring_capacity=1 << 20)
        attach(cl, proc)
        pool = cl.create_pool(1, 1 << 20)
        cl.register_program(1, GlslSource(MRT_VS, MRT_FS))
        cl.register_program(
            2,
            GlslSource(
                TEX_VS,
                """#version 450
layout(location=0) in vec2 t;
layout(set=0, binding=4) uniform sampler2D a;
layout(set=0, binding=5) uniform sampler2D b;
layout(location=0) out vec4 o;
void main() { o = vec4(texture(a, t).rg, texture(b, t).r, 1.0); }""",
            ),
        )
        for k, fmt in enumerate(FORMATS):
            cl.register(TextureDesc(3 + k, 0, 0, W, H, fmt, render_target=True))
        cl.register(TextureDesc(7, 0, 0, W, H, "D16", render_target=True))
        cl.register(TextureDesc(8, 0, 0, W, H, "RGBA8", render_target=True))
        cl.register(SamplerDesc(9))
        for frame in range(1, 4):
            sc = Scene(pool, 0)
            cmds = [(P.OP_RENDER_TARGETS, (3, 4, 5, 6), 7)] + [(P.OP_CLEAR_TARGET, k, *BG[k]) for k in range(4)]
            cmds += [
                (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1),
                (P.OP_DEPTH_STENCIL, True, True, 1, False, *(0, 0, 0, 7, 0, 255, 255) * 2),
                (P.OP_BLEND_STATE, 2, True, 1, 1, 0, 1, 1, 0, 15),
            ]
            cmds += draw(sc, 1, (2 * frame, 2, 20, 12, 0.5), FG) + draw(sc, 1, (8, 4, 28, 14, 0.25), list(reversed(FG)))
            cmds += [
                (P.OP_TARGET, 8),
                (P.OP_CLEAR, 0, 0, 0, 1),
                (P.OP_PROGRAM, 2),
                (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
                (P.OP_VERTEX, *sc.put(rect_uv_px(0, 0, W, H, W, H).tobytes())),
                (P.OP_TEXTURE, 0, 6, 9),
                (P.OP_TEXTURE, 1, 5, 9),
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_PRESENT, frame, 8),
                (P.OP_PRESENT, 100 + frame, 3),
            ]
            cl.wait(cl.submit(cmds))
            assert cl.dropped() == 0
            live[frame] = cl.frame(frame).sha256
            live[100 + frame] = cl.frame(100 + frame).sha256
        cl.close()
    finally:
        stop_gpu(proc)
        shutil.rmtree(dr, ignore_errors=True)
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "replay", str(rec), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    got = {int(f): h for f, h in (line.split() for line in (out / "frames.txt").read_text().splitlines())}
    assert got == live and len({live[f] for f in (1, 2, 3)}) == 3


def test_event_wait_carries_the_mrt_binding_and_every_targets_blend():
    """The state an EVENT_WAIT's rest starts from (gpu_host.events.carried_state) keeps the
    RENDER_TARGETS binding and each target's last BLEND_STATE (BLEND being target 0's)."""
    from gpu_host.events import carried_state

    b1 = (P.OP_BLEND_STATE, 1, True, 1, 1, 0, 1, 1, 0, 15)
    b2 = (P.OP_BLEND_STATE, 2, False, 1, 0, 0, 1, 0, 0, 1)
    cmds = [
        (P.OP_TARGET, 3),
        (P.OP_RENDER_TARGETS, (3, 4, 5), E),
        (P.OP_VIEWPORT, 0.0, 0.0, 8.0, 8.0),
        b1,
        (P.OP_BLEND, True),
        b2,
        (P.OP_BLEND_STATE, 1, False, 1, 0, 0, 1, 0, 0, 15),
    ]
    got = carried_state(cmds)
    assert got[:2] == [(P.OP_RENDER_TARGETS, (3, 4, 5), E), (P.OP_VIEWPORT, 0.0, 0.0, 8.0, 8.0)]
    assert sorted(got[2:]) == sorted([(P.OP_BLEND, True), b2, (P.OP_BLEND_STATE, 1, False, 1, 0, 0, 1, 0, 0, 15)])
