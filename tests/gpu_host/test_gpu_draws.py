"""End to end on lavapipe: a fake guest drives the real client, ring and GPU process; every
frame is compared with pixels computed here with numpy.  Colours written to 8-bit targets are
compared as Vulkan defines the conversion (``assert_unorm``: exact where c x 255 is an integer,
either neighbour where it is not): lavapipe rounds 127.5 to 128, NVIDIA to 127."""

from __future__ import annotations

import time

import numpy as np
import pytest

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from gpu_guest import P, Scene, assert_unorm, frame_image, rect_px, rect_uv_px, ubo, unorm8
from gpu_host import png
from test_gpu_blocklinear import ref_address

W, H = 64, 48


def target(gpu, fmt="RGBA8", w=W, h=H) -> int:
    tid = gpu.id()
    gpu.client.register(TextureDesc(tid, 0, 0, w, h, fmt, render_target=True))
    return tid


def run(gpu, cmds) -> np.ndarray:
    n = next(gpu.frames)
    seq = gpu.client.submit(cmds + [(P.OP_PRESENT, n, cmds[0][1])])
    gpu.client.wait(seq)
    assert gpu.client.dropped() == 0, "a valid submission was dropped"
    return frame_image(gpu.client, n), n


def color_draws(scene: Scene, rects, w=W, h=H):
    """Commands drawing each (x0, y0, x1, y1, rgba) rect with its own uniform block."""
    cmds = [(P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]])]
    for x0, y0, x1, y1, col in rects:
        cmds += [
            (P.OP_VERTEX, *scene.put(rect_px(x0, y0, x1, y1, w, h).tobytes())),
            (P.OP_UNIFORM, 0, *scene.put(ubo(col))),
            (P.OP_DRAW, 6, 1, 0, 0),
        ]
    return cmds


def expect(bg, rects, w=W, h=H) -> np.ndarray:
    """The exact (unrounded) 8-bit values of the frame: ``assert_unorm`` compares."""
    img = np.empty((h, w, 4), np.float64)
    img[:] = unorm8(bg)
    for x0, y0, x1, y1, col in rects:
        img[y0:y1, x0:x1] = unorm8(col)
    return img


@pytest.mark.parametrize("fmt", ["RGBA8", "BGRA8"])
def test_clear_is_exact(gpu, fmt):
    t = target(gpu, fmt)
    img, _ = run(gpu, [(P.OP_TARGET, t), (P.OP_CLEAR, 0.2, 0.4, 0.6, 1.0)])
    assert_unorm(img, expect((0.2, 0.4, 0.6, 1.0), []))


def test_rectangles_overlap_in_order(gpu):
    t = target(gpu)
    sc = Scene(gpu.pool, 0)
    rects = [(4, 4, 40, 30, (1, 0, 0, 1)), (20, 10, 60, 44, (0, 1, 0, 1)), (0, 0, 8, 8, (0, 0, 1, 1))]
    img, n = run(gpu, [(P.OP_TARGET, t), (P.OP_CLEAR, 0, 0, 0, 1)] + color_draws(sc, rects))
    assert_unorm(img, expect((0, 0, 0, 1), rects))
    # The same frame was dumped as a PNG (headless present).
    w, h, from_png = png.decode((gpu.frames_dir / f"frame_{n:06d}.png").read_bytes())
    assert (w, h) == (W, H) and np.array_equal(from_png, img)


def test_triangle_edge_pixels(gpu):
    """Triangle (0,0),(16,0),(0,32) px: a pixel is in iff its centre satisfies 2x + y < 32."""
    t = target(gpu)
    sc = Scene(gpu.pool, 0)
    tri = np.array([[-1, -1], [2 * 16 / W - 1, -1], [-1, 2 * 32 / H - 1]], np.float32)
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 0, 0),
        (P.OP_PROGRAM, 1),
        (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
        (P.OP_VERTEX, *sc.put(tri.tobytes())),
        (P.OP_UNIFORM, 0, *sc.put(ubo((1, 1, 1, 1)))),
        (P.OP_DRAW, 3, 1, 0, 0),
    ]
    img, _ = run(gpu, cmds)
    ys, xs = np.mgrid[0:H, 0:W]
    inside = 2 * (xs + 0.5) + (ys + 0.5) < 32
    assert np.array_equal(img[..., 0] == 255, inside)
    assert inside.sum() == 256


@pytest.mark.parametrize("isz", [2, 4])
def test_indexed_instanced(gpu, isz):
    t = target(gpu)
    sc = Scene(gpu.pool, 0)
    q = rect_px(2, 2, 10, 12, W, H)
    verts = np.vstack([np.zeros((5, 2), np.float32), q[[0, 1, 2, 5]]])  # 5 unused vertices first
    idx = np.array([0, 1, 2, 0, 2, 3], np.uint16 if isz == 2 else np.uint32)
    step = (2 * 12 / W, 2 * 14 / H)  # 12 px right, 14 px down
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 0, 1),
        (P.OP_PROGRAM, 1),
        (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
        (P.OP_VERTEX, *sc.put(verts.tobytes())),
        (P.OP_INDEX, *sc.put(idx.tobytes()), isz),
        (P.OP_UNIFORM, 0, *sc.put(ubo((1, 0.5, 0, 1), step=step))),
        (P.OP_DRAW_INDEXED, 6, 3, 0, 5, 0),
    ]
    img, _ = run(gpu, cmds)
    rects = [(2 + 12 * i, 2 + 14 * i, 10 + 12 * i, 12 + 14 * i, (1, 0.5, 0, 1)) for i in range(3)]
    assert_unorm(img, expect((0, 0, 0, 1), rects))


def test_uniforms_rewritten_every_frame(gpu):
    t = target(gpu)
    sc = Scene(gpu.pool, 0)
    vb = sc.put(rect_px(0, 0, 8, 8, W, H).tobytes())
    ub = sc.put(ubo((0, 0, 0, 1)))
    for frame in range(6):
        col = (frame / 5, 1 - frame / 5, 0.5, 1)
        off = (2 * 8 * frame / W, 2 * 4 * frame / H)
        gpu.pool.write(ub[1], ubo(col, off))  # same block, new contents each frame
        img, _ = run(
            gpu,
            [
                (P.OP_TARGET, t),
                (P.OP_CLEAR, 0, 0, 0, 1),
                (P.OP_PROGRAM, 1),
                (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
                (P.OP_VERTEX, *vb),
                (P.OP_UNIFORM, 0, *ub),
                (P.OP_DRAW, 6, 1, 0, 0),
            ],
        )
        x, y = 8 * frame, 4 * frame
        assert_unorm(img, expect((0, 0, 0, 1), [(x, y, x + 8, y + 8, col)]), f"frame {frame}")


def ref_swizzle(lin: np.ndarray, bh: int) -> bytes:
    from gpu_host.blocklinear import size_bytes

    h, wb = lin.shape
    out = bytearray(size_bytes(wb, h, bh))
    for y in range(h):
        for x in range(wb):
            out[ref_address(x, y, wb, bh)] = lin[y, x]
    return bytes(out)


def texels(fmt: str, w: int, h: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(linear bytes h x w*bpp, expected RGBA8 h x w x 4) for random texels of ``fmt``."""
    k = rng.integers(0, 256, (h, w, 4)).astype(np.uint8)
    one = np.full((h, w), 255, np.uint8)
    zero = np.zeros((h, w), np.uint8)
    if fmt == "RGBA8":
        return k.reshape(h, -1), k
    if fmt == "BGRA8":
        return k[..., [2, 1, 0, 3]].reshape(h, -1), k
    if fmt == "R8":
        return k[..., 0].copy(), np.stack([k[..., 0], zero, zero, one], -1)
    if fmt == "RG8":
        return k[..., :2].reshape(h, -1), np.stack([k[..., 0], k[..., 1], zero, one], -1)
    if fmt == "RGB565":
        r, g, b = (rng.integers(0, m, (h, w)) for m in (32, 64, 32))
        v = ((r << 11) | (g << 5) | b).astype("<u2")
        exp = np.stack([np.round(r * 255 / 31), np.round(g * 255 / 63), np.round(b * 255 / 31), one], -1)
        return v.view(np.uint8).reshape(h, -1), exp.astype(np.uint8)
    if fmt in ("RGBA16F", "RGBA32F"):
        dt = "<f2" if fmt == "RGBA16F" else "<f4"
        v = (k / 255.0).astype(dt)
        return v.view(np.uint8).reshape(h, -1), k
    raise AssertionError(fmt)


@pytest.mark.parametrize("fmt", ["RGBA8", "BGRA8", "R8", "RG8", "RGB565", "RGBA16F", "RGBA32F"])
@pytest.mark.parametrize("bh", [0, 1, 3])
def test_block_linear_textures(gpu, fmt, bh):
    rng = np.random.default_rng(hash((fmt, bh)) & 0xFFFF)
    tw, th = 24, 20
    lin, want = texels(fmt, tw, th, rng)
    sc = Scene(gpu.pool, 1 << 20)
    tex_range = sc.put(ref_swizzle(lin, bh))
    tex, smp, t = gpu.id(), gpu.id(), target(gpu)
    gpu.client.register(TextureDesc(tex, 1, tex_range[1], tw, th, fmt, block_linear=True, block_height_log2=bh))
    gpu.client.register(SamplerDesc(smp))
    x0, y0 = 5, 7
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 0, 0),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(rect_uv_px(x0, y0, x0 + tw, y0 + th, W, H).tobytes())),
        (P.OP_TEXTURE, 0, tex, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]
    img, _ = run(gpu, cmds)
    region = img[y0 : y0 + th, x0 : x0 + tw].astype(int)
    tol = 0 if fmt in ("RGBA8", "BGRA8", "R8", "RG8") else 1
    assert np.abs(region - want.astype(int)).max() <= tol
    assert not img[:y0].any() and not img[y0 + th :].any()


def test_pitch_linear_texture(gpu):
    rng = np.random.default_rng(3)
    lin, want = texels("RGBA8", 10, 6, rng)
    pitch = 64
    buf = np.zeros((6, pitch), np.uint8)
    buf[:, :40] = lin
    sc = Scene(gpu.pool, 2 << 20)
    r = sc.put(buf.tobytes())
    tex, smp, t = gpu.id(), gpu.id(), target(gpu)
    gpu.client.register(TextureDesc(tex, 1, r[1], 10, 6, "RGBA8", block_linear=False, pitch=pitch))
    gpu.client.register(SamplerDesc(smp))
    img, _ = run(
        gpu,
        [
            (P.OP_TARGET, t),
            (P.OP_CLEAR, 0, 0, 0, 0),
            (P.OP_PROGRAM, 2),
            (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
            (P.OP_VERTEX, *sc.put(rect_uv_px(0, 0, 10, 6, W, H).tobytes())),
            (P.OP_TEXTURE, 0, tex, smp),
            (P.OP_DRAW, 6, 1, 0, 0),
        ],
    )
    assert np.array_equal(img[:6, :10], want)


def test_render_to_texture_then_sample(gpu):
    rt, smp, t = target(gpu, w=32, h=16), gpu.id(), target(gpu)
    gpu.client.register(SamplerDesc(smp))
    sc = Scene(gpu.pool, 3 << 20)
    inner = [(0, 0, 10, 16, (1, 0, 0, 1)), (10, 4, 32, 12, (0, 0, 1, 1))]
    cmds = [(P.OP_TARGET, rt), (P.OP_CLEAR, 0, 1, 0, 1)] + color_draws(sc, inner, 32, 16)
    ox, oy = 20, 24
    cmds += [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0.5, 0.5, 0.5, 1),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(rect_uv_px(ox, oy, ox + 32, oy + 16, W, H).tobytes())),
        (P.OP_TEXTURE, 0, rt, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]
    cmds = [(P.OP_TARGET, t)] + cmds  # run() presents cmds[0]'s texture
    img, _ = run(gpu, cmds)
    want = expect((0.5, 0.5, 0.5, 1), [])
    want[oy : oy + 16, ox : ox + 32] = expect((0, 1, 0, 1), inner, 32, 16)
    assert_unorm(img, want)


def test_fences_signal_in_order(gpu):
    t = target(gpu)
    seqs = [gpu.client.submit([(P.OP_TARGET, t), (P.OP_CLEAR, 0, 0, 0, 1), (P.OP_SIGNAL, 3, 10 + i)]) for i in range(20)]
    gpu.client.wait(seqs[-1])
    assert gpu.client.fence(3) == 29
    from proto import gpu_pb2

    st = gpu.client.stub.WaitFence(gpu_pb2.FenceWait(session=gpu.client.session, fence=3, value=29, timeout_s=1))
    assert st.reached and st.value == 29


_fence_values = iter(range(1, 1 << 30))


@pytest.mark.parametrize("layout", ["block_linear", "pitch"])
def test_writeback_render_target_into_pool(gpu, layout):
    """Render to a texture, WRITEBACK it into its pool range, SIGNAL a fence: once the fence
    is reached, the guest's memory holds the pixels in the Switch layout (deswizzled here with
    the reference address function written from the GOB description)."""
    w, h, bh, pitch = 40, 24, 1, 192
    base = 5 << 20
    gpu.pool.write(base, bytes([0xAB]) * 65536)  # stale bytes the write-back must replace
    rt = gpu.id()
    gpu.client.register(
        TextureDesc(
            rt,
            1,
            base,
            w,
            h,
            "RGBA8",
            block_linear=layout == "block_linear",
            block_height_log2=bh,
            pitch=pitch,
            render_target=True,
        )
    )
    sc = Scene(gpu.pool, 5 << 20 | 1 << 19)
    rects = [(0, 0, 20, 10, (1, 0, 0, 1)), (15, 5, 40, 24, (0, 0.5, 1, 0.25))]
    fence = next(_fence_values)  # grows within this GPU process
    seq = gpu.client.submit(
        [(P.OP_TARGET, rt), (P.OP_CLEAR, 0, 0, 0, 1)]
        + color_draws(sc, rects, w, h)
        + [(P.OP_WRITEBACK, rt), (P.OP_SIGNAL, 7, fence)]
    )
    from proto import gpu_pb2

    st = gpu.client.stub.WaitFence(gpu_pb2.FenceWait(session=gpu.client.session, fence=7, value=fence, timeout_s=10))
    assert st.reached, gpu.log()[-1500:]
    gpu.client.wait(seq)
    assert gpu.client.dropped() == 0
    mem = bytes(gpu.pool.mm[base : base + 65536])
    if layout == "block_linear":
        img = np.array([[mem[ref_address(x, y, w * 4, bh)] for x in range(w * 4)] for y in range(h)], np.uint8)
    else:
        img = np.frombuffer(mem, np.uint8)[: pitch * h].reshape(h, pitch)[:, : w * 4]
        assert mem[w * 4 : pitch] == bytes([0xAB]) * (pitch - w * 4)  # bytes between rows are left alone
    assert_unorm(img.reshape(h, w, 4), expect((0, 0, 0, 1), rects, w, h), "written-back pixels")


def test_writeback_hostile(gpu):
    """WRITEBACK of a texture that is not a render target, or whose range runs past its pool:
    the submission is dropped with a line naming it, and the pool is not touched."""
    before = gpu.client.dropped()
    tex, rt = gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(tex, 1, 0, 8, 8, "RGBA8", block_linear=True))
    gpu.client.register(TextureDesc(rt, 1, (8 << 20) - 1024, 64, 64, "RGBA8", block_linear=True, render_target=True))
    for cmds, msg in [
        ([(P.OP_WRITEBACK, tex)], f"texture {tex} is not a render target"),
        ([(P.OP_TARGET, rt), (P.OP_CLEAR, 1, 1, 1, 1), (P.OP_WRITEBACK, rt)], "run past pool 1's end"),
        ([(P.OP_WRITEBACK, 999999)], "texture 999999 is not a registered texture"),
    ]:
        seq = gpu.client.submit(cmds)
        gpu.client.wait(seq)
        deadline = time.monotonic() + 60  # a bound, not a speed check: the log file is written a moment after completion
        while msg not in gpu.log() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert msg in gpu.log(), gpu.log()[-1500:]
    assert gpu.client.dropped() == before + 3
    assert bytes(gpu.pool.mm[(8 << 20) - 1024 :]) != bytes([255]) * 1024
