"""Depth/stencil targets and state on lavapipe, through the real client, ring and GPU process.

Every expectation is computed here: which rectangle is nearer from its z, compare ops with
Python's own operators, stencil from the rectangles drawn, the depth values a target holds
from z (and the unorm conversion formula of each format)."""

from __future__ import annotations

import operator
import time

import numpy as np
import pytest

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import Gpu, P, Scene, assert_unorm, frame_image, rect_uv_px, to8, unorm8
from test_gpu_blocklinear import ref_address

W, H = 48, 32
E = P.EMPTY

Z_VS = """#version 450
layout(location=0) in vec3 pos;
layout(set=0, binding=0) uniform U { vec4 color; } u;
layout(location=0) out vec4 c;
void main() { gl_Position = vec4(pos, 1.0); c = u.color; }"""
Z_FS = """#version 450
layout(location=0) in vec4 c;
layout(location=0) out vec4 o;
void main() { o = c; }"""
Z_LAYOUT = (P.OP_VERTEX_LAYOUT, 12, 0, [[0, 3, 0]])


@pytest.fixture(scope="module")
def zprog(gpu):
    pid = gpu.id()
    gpu.client.register_program(pid, GlslSource(Z_VS, Z_FS))
    return pid


def rect_z(x0, y0, x1, y1, z, w=W, h=H) -> np.ndarray:
    """Two triangles covering pixels [x0,x1) x [y0,y1) at depth z (vec3 per vertex)."""
    a, b = 2 * x0 / w - 1, 2 * x1 / w - 1
    c, d = 2 * y0 / h - 1, 2 * y1 / h - 1
    return np.array([[a, c, z], [b, c, z], [b, d, z], [a, c, z], [b, d, z], [a, d, z]], np.float32)


def color_ubo(col) -> bytes:
    return np.array(col, np.float32).tobytes()


def targets(gpu, depth_fmt="D32F", w=W, h=H, color=True) -> tuple[int, int]:
    c = gpu.id() if color else E
    if color:
        gpu.client.register(TextureDesc(c, 0, 0, w, h, "RGBA8", render_target=True))
    d = gpu.id()
    gpu.client.register(TextureDesc(d, 0, 0, w, h, depth_fmt, render_target=True))
    return c, d


def ds(test=True, write=True, func="less", stencil=False, front=None, back=None) -> tuple:
    face = front or ("keep", "keep", "keep", "always", 0, 255, 255)

    def enc(f):
        return (
            P.STENCIL_OPS.index(f[0]),
            P.STENCIL_OPS.index(f[1]),
            P.STENCIL_OPS.index(f[2]),
            P.COMPARE_OPS.index(f[3]),
            *f[4:],
        )

    return (P.OP_DEPTH_STENCIL, test, write, P.COMPARE_OPS.index(func), stencil, *enc(face), *enc(back or face))


def draws(sc, prog, rects, w=W, h=H) -> list:
    """(x0, y0, x1, y1, z, rgba) rectangles, each with its own uniform block."""
    cmds = [(P.OP_PROGRAM, prog), Z_LAYOUT]
    for x0, y0, x1, y1, z, col in rects:
        cmds += [
            (P.OP_VERTEX, *sc.put(rect_z(x0, y0, x1, y1, z, w, h).tobytes())),
            (P.OP_UNIFORM, 0, *sc.put(color_ubo(col))),
            (P.OP_DRAW, 6, 1, 0, 0),
        ]
    return cmds


def run(gpu, color, cmds) -> np.ndarray:
    n = next(gpu.frames)
    before = gpu.client.dropped()
    seq = gpu.client.submit(cmds + [(P.OP_PRESENT, n, color)])
    gpu.client.wait(seq)
    assert gpu.client.dropped() == before, gpu.log()[-1500:]
    return frame_image(gpu.client, n)


def paint(bg, rects, w=W, h=H, keep=lambda r: True) -> np.ndarray:
    img = np.empty((h, w, 4), np.uint8)
    img[:] = to8(bg)
    for r in rects:
        if keep(r):
            x0, y0, x1, y1 = r[:4]
            img[y0:y1, x0:x1] = to8(r[-1])
    return img


RED, GREEN, BLUE, BLACK = (1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1), (0, 0, 0, 1)


@pytest.mark.parametrize("fmt", ["D16", "D24S8", "D32F", "D32F_S8"])
def test_nearer_wins_in_either_order(gpu, zprog, fmt):
    c, d = targets(gpu, fmt)
    sc = Scene(gpu.pool, 0)
    near, far = (4, 4, 30, 24, 0.25, RED), (16, 8, 44, 30, 0.75, GREEN)
    start = [(P.OP_DEPTH_TARGET, c, d), (P.OP_CLEAR, *BLACK), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3), ds()]
    a = run(gpu, c, start + draws(sc, zprog, [near, far]))
    b = run(gpu, c, start + draws(sc, zprog, [far, near]))
    want = paint(BLACK, [far, near])  # nearer (smaller z) painted last
    assert np.array_equal(a, want) and np.array_equal(b, want)


@pytest.mark.parametrize("func", P.COMPARE_OPS)
def test_compare_ops(gpu, zprog, func):
    """Depth cleared to 0.5; rectangles at z 0.25, 0.5, 0.75 pass where ``z FUNC 0.5``."""
    c, d = targets(gpu, "D32F")
    sc = Scene(gpu.pool, 0)
    rects = [(0, 0, 16, H, 0.25, RED), (16, 0, 32, H, 0.5, GREEN), (32, 0, 48, H, 0.75, BLUE)]
    py = {
        "never": lambda a, b: False,
        "less": operator.lt,
        "equal": operator.eq,
        "less_or_equal": operator.le,
        "greater": operator.gt,
        "not_equal": operator.ne,
        "greater_or_equal": operator.ge,
        "always": lambda a, b: True,
    }[func]
    img = run(
        gpu,
        c,
        [(P.OP_DEPTH_TARGET, c, d), (P.OP_CLEAR, *BLACK), (P.OP_CLEAR_DEPTH_STENCIL, 0.5, 0, 1), ds(func=func, write=False)]
        + draws(sc, zprog, rects),
    )
    assert np.array_equal(img, paint(BLACK, rects, keep=lambda r: py(r[4], 0.5)))


def test_depth_write_off_and_test_off(gpu, zprog):
    c, d = targets(gpu, "D32F")
    sc = Scene(gpu.pool, 0)
    near, far = (0, 0, 24, 32, 0.2, RED), (8, 8, 40, 24, 0.8, GREEN)
    # write off: the near rectangle leaves the depth at 1.0, so the far one still passes LESS
    img = run(
        gpu,
        c,
        [(P.OP_DEPTH_TARGET, c, d), (P.OP_CLEAR, *BLACK), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1), ds(write=False)]
        + draws(sc, zprog, [near])
        + [ds()]
        + draws(sc, zprog, [far]),
    )
    assert np.array_equal(img, paint(BLACK, [near, far]))
    # test off (the default state): no depth test and no depth write, whatever the compare op
    img = run(
        gpu,
        c,
        [
            (P.OP_DEPTH_TARGET, c, d),
            (P.OP_CLEAR, *BLACK),
            (P.OP_CLEAR_DEPTH_STENCIL, 0.0, 0, 1),
            ds(test=False, write=True, func="never"),
        ]
        + draws(sc, zprog, [near, far]),
    )
    assert np.array_equal(img, paint(BLACK, [near, far]))


@pytest.mark.parametrize("fmt", ["D24S8", "D32F_S8"])
def test_stencil_mask(gpu, zprog, fmt):
    """Write 1 into the stencil where a quad is (colour writes masked off), then draw a big
    rectangle only where stencil == 1, and another only where it is not."""
    c, d = targets(gpu, fmt)
    sc = Scene(gpu.pool, 0)
    mask_quad = (10, 6, 30, 20, 0.5, BLUE)
    big = (0, 0, W, H, 0.5, RED)
    outside = (0, 0, W, H, 0.5, GREEN)
    write_one = ("replace", "replace", "replace", "always", 1, 255, 255)
    eq_one = ("keep", "keep", "keep", "equal", 1, 255, 0)
    ne_one = ("keep", "keep", "keep", "not_equal", 1, 255, 0)
    no_color = (P.OP_BLEND_STATE, 0, False, 1, 0, 0, 1, 0, 0, 0)
    all_color = (P.OP_BLEND_STATE, 0, False, 1, 0, 0, 1, 0, 0, 15)
    img = run(
        gpu,
        c,
        [
            (P.OP_DEPTH_TARGET, c, d),
            (P.OP_CLEAR, *BLACK),
            (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3),
            no_color,
            ds(test=False, stencil=True, front=write_one),
        ]
        + draws(sc, zprog, [mask_quad])
        + [all_color, ds(test=False, stencil=True, front=eq_one)]
        + draws(sc, zprog, [big])
        + [ds(test=False, stencil=True, front=ne_one)]
        + draws(sc, zprog, [outside]),
    )
    want = paint(GREEN, [])
    want[6:20, 10:30] = to8(RED)
    assert np.array_equal(img, want)


def tri(pts, w=W, h=H) -> np.ndarray:
    return np.array([[2 * x / w - 1, 2 * y / h - 1, 0.5] for x, y in pts], np.float32)


def shoelace(pts) -> float:
    """Vulkan's signed area a = -1/2 sum(x_i y_i+1 - x_i+1 y_i) in framebuffer coordinates
    (y down): a > 0 is counter-clockwise."""
    s = sum(pts[i][0] * pts[(i + 1) % 3][1] - pts[(i + 1) % 3][0] * pts[i][1] for i in range(3))
    return -0.5 * s


@pytest.mark.parametrize("cull", P.CULL_MODES)
@pytest.mark.parametrize("front", P.FRONT_FACES)
def test_cull_and_front_face(gpu, zprog, cull, front):
    """Two rectangles, one wound each way; each is kept unless its facing is culled."""
    c = gpu.id()
    gpu.client.register(TextureDesc(c, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 0)
    left = [(2, 2), (20, 2), (20, 30), (2, 2), (20, 30), (2, 30)]  # area < 0: clockwise
    right = [(26, 2), (26, 30), (44, 30), (26, 2), (44, 30), (44, 2)]  # area > 0: counter-clockwise
    cmds = [
        (P.OP_TARGET, c),
        (P.OP_CLEAR, *BLACK),
        (P.OP_RASTER, P.CULL_MODES.index(cull), P.FRONT_FACES.index(front), 0, False),
        (P.OP_PROGRAM, zprog),
        Z_LAYOUT,
    ]
    want = paint(BLACK, [])
    for pts, col, box in ((left, RED, (2, 2, 20, 30)), (right, GREEN, (26, 2, 44, 30))):
        cmds += [(P.OP_VERTEX, *sc.put(tri(pts).tobytes())), (P.OP_UNIFORM, 0, *sc.put(color_ubo(col))), (P.OP_DRAW, 6, 1, 0, 0)]
        ccw = shoelace(pts[:3]) > 0
        assert ccw == (shoelace(pts[3:]) > 0)
        is_front = ccw == (front == "counter_clockwise")
        culled = cull == "front_and_back" or (cull == "front" and is_front) or (cull == "back" and not is_front)
        if not culled:
            x0, y0, x1, y1 = box
            want[y0:y1, x0:x1] = to8(col)
    assert np.array_equal(run(gpu, c, cmds), want)


def test_scissor(gpu, zprog):
    c = gpu.id()
    gpu.client.register(TextureDesc(c, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 0)
    full = (0, 0, W, H, 0.5, RED)
    img = run(
        gpu,
        c,
        [(P.OP_TARGET, c), (P.OP_CLEAR, *BLACK), (P.OP_SCISSOR, 8, 4, 20, 10)]
        + draws(sc, zprog, [full])
        + [(P.OP_SCISSOR, 40, 20, 1000, 1000)]  # clamped to the target
        + draws(sc, zprog, [(0, 0, W, H, 0.5, GREEN)]),
    )
    want = paint(BLACK, [])
    want[4:14, 8:28] = to8(RED)
    want[20:, 40:] = to8(GREEN)
    assert np.array_equal(img, want)


def test_depth_bias(gpu, zprog):
    """A second rectangle at the same z fails LESS; a negative constant bias pulls it nearer
    (D16: one unit is 1/65535), and only with RASTER's depth_bias on."""
    c, d = targets(gpu, "D16")
    sc = Scene(gpu.pool, 0)
    first, second = (4, 4, 40, 28, 0.5, RED), (10, 10, 30, 20, 0.5, GREEN)
    start = [(P.OP_DEPTH_TARGET, c, d), (P.OP_CLEAR, *BLACK), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1), ds()]
    on = run(
        gpu,
        c,
        start
        + draws(sc, zprog, [first])
        + [(P.OP_DEPTH_BIAS, -4.0, 0.0, 0.0), (P.OP_RASTER, 0, 0, 0, True)]
        + draws(sc, zprog, [second]),
    )
    assert np.array_equal(on, paint(BLACK, [first, second]))
    off = run(
        gpu,
        c,
        start
        + draws(sc, zprog, [first])
        + [(P.OP_DEPTH_BIAS, -4.0, 0.0, 0.0), (P.OP_RASTER, 0, 0, 0, False)]
        + draws(sc, zprog, [second]),
    )
    assert np.array_equal(off, paint(BLACK, [first]))


def seg_dist(px: np.ndarray, py: np.ndarray, a, b) -> np.ndarray:
    """Distance of points (px, py) from segment a-b."""
    ax, ay, bx, by = *a, *b
    t = np.clip(((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2), 0, 1)
    return np.hypot(px - (ax + t * (bx - ax)), py - (ay + t * (by - ay)))


def test_polygon_mode_line(gpu, zprog):
    """Line mode draws the two triangles' edges, not their interiors: every lit pixel's centre
    lies within 1.5 px of an edge, no pixel farther away is lit, and the edges are mostly lit
    (which pixels exactly is the rasteriser's line rule)."""
    c = gpu.id()
    gpu.client.register(TextureDesc(c, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 0)
    img = run(
        gpu,
        c,
        [(P.OP_TARGET, c), (P.OP_CLEAR, *BLACK), (P.OP_RASTER, 0, 0, 1, False)] + draws(sc, zprog, [(8, 8, 40, 24, 0.5, RED)]),
    )
    lit = img[..., 0] == 255
    ys, xs = np.mgrid[0:H, 0:W] + 0.5
    edges = [((8, 8), (40, 8)), ((40, 8), (40, 24)), ((40, 24), (8, 24)), ((8, 24), (8, 8)), ((8, 8), (40, 24))]
    near = np.min([seg_dist(xs, ys, a, b) for a, b in edges], 0)
    assert lit.any() and not lit[near > 1.5].any()
    assert lit.sum() >= 0.8 * (2 * 32 + 2 * 16 + 32)  # about one pixel per unit of edge length
    assert not lit[near > 1.5].any() and (~lit[(near > 1.5)]).all()


# -- blending ---------------------------------------------------------------------------------
def factor(name: str, src: np.ndarray, dst: np.ndarray, k: np.ndarray) -> np.ndarray:
    one = np.ones(4)
    return {
        "zero": 0 * one,
        "one": one,
        "src_color": src,
        "one_minus_src_color": 1 - src,
        "dst_color": dst,
        "one_minus_dst_color": 1 - dst,
        "src_alpha": src[3] * one,
        "one_minus_src_alpha": (1 - src[3]) * one,
        "dst_alpha": dst[3] * one,
        "one_minus_dst_alpha": (1 - dst[3]) * one,
        "constant_color": k,
        "one_minus_constant_color": 1 - k,
        "constant_alpha": k[3] * one,
        "one_minus_constant_alpha": (1 - k[3]) * one,
        "src_alpha_saturate": np.array([*[min(src[3], 1 - dst[3])] * 3, 1.0]),
    }[name]


def blend_ref(src, dst, k, sc, dc, cop, sa, da, aop, mask) -> np.ndarray:
    """The blend equation as the Vulkan spec writes it, in float, then the write mask."""
    src, dst, k = (np.asarray(v, np.float64) for v in (src, dst, k))
    fs_c, fd_c = factor(sc, src, dst, k), factor(dc, src, dst, k)
    fs_a, fd_a = factor(sa, src, dst, k), factor(da, src, dst, k)
    ops = {
        "add": lambda s, fs, d, fd: s * fs + d * fd,
        "subtract": lambda s, fs, d, fd: s * fs - d * fd,
        "reverse_subtract": lambda s, fs, d, fd: d * fd - s * fs,
        "min": lambda s, fs, d, fd: np.minimum(s, d),
        "max": lambda s, fs, d, fd: np.maximum(s, d),
    }
    out = np.empty(4)
    out[:3] = ops[cop](src[:3], fs_c[:3], dst[:3], fd_c[:3])
    out[3] = ops[aop](src[3], fs_a[3], dst[3], fd_a[3])
    out = np.clip(out, 0, 1)
    keep = np.array([(mask >> i) & 1 for i in range(4)], bool)
    return np.where(keep, out, dst)


BLENDS = [
    ("src_alpha", "one_minus_src_alpha", "add", "one", "one_minus_src_alpha", "add", 15),
    ("one", "one", "add", "one", "one", "add", 15),
    ("src_color", "dst_color", "subtract", "zero", "one", "reverse_subtract", 15),
    ("one", "one", "reverse_subtract", "dst_alpha", "one_minus_dst_alpha", "add", 15),
    ("one", "one", "min", "one", "one", "max", 15),
    ("constant_color", "one_minus_constant_color", "add", "constant_alpha", "one_minus_constant_alpha", "add", 15),
    ("one_minus_dst_color", "src_alpha_saturate", "add", "one", "zero", "add", 0b0101),
    ("dst_alpha", "one_minus_src_color", "max", "one_minus_dst_alpha", "src_alpha", "min", 0b1010),
]


@pytest.mark.parametrize("blend", BLENDS, ids=["-".join(map(str, b)) for b in BLENDS])
def test_blend_state(gpu, zprog, blend):
    sc_, dc, cop, sa, da, aop, mask = blend
    c = gpu.id()
    gpu.client.register(TextureDesc(c, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 0)
    bg, src, k = (0.2, 0.6, 0.9, 0.4), (0.7, 0.3, 0.5, 0.6), (0.25, 0.5, 0.75, 0.3)
    pkt = (
        P.OP_BLEND_STATE,
        0,
        True,
        P.BLEND_FACTORS.index(sc_),
        P.BLEND_FACTORS.index(dc),
        P.BLEND_OPS.index(cop),
        P.BLEND_FACTORS.index(sa),
        P.BLEND_FACTORS.index(da),
        P.BLEND_OPS.index(aop),
        mask,
    )
    img = run(
        gpu,
        c,
        [(P.OP_TARGET, c), (P.OP_CLEAR, *bg), pkt, (P.OP_BLEND_CONSTANT, *k)] + draws(sc, zprog, [(8, 8, 24, 24, 0.5, src)]),
    )
    dst = to8(bg) / 255.0  # what the target holds: the clear colour in 8 bits
    want = np.round(blend_ref(src, dst, k, sc_, dc, cop, sa, da, aop, mask) * 255)
    got = img[8:24, 8:24].reshape(-1, 4).astype(int)
    assert np.abs(got - want).max() <= 1, (got[0], want)
    # the clear colour as stored: 0.9 x 255 is 229.5 in single precision, either neighbour (assert_unorm)
    assert_unorm(img[:8], np.broadcast_to(unorm8(bg), img[:8].shape), "cleared rows")


def test_old_blend_packet_is_source_alpha_over(gpu, zprog):
    """BLEND true (the old packet) is BLEND_STATE source-alpha over: the same pixels."""
    c = gpu.id()
    gpu.client.register(TextureDesc(c, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 0)
    body = draws(sc, zprog, [(4, 4, 20, 20, 0.5, (1, 0.5, 0, 0.5))])
    a = run(gpu, c, [(P.OP_TARGET, c), (P.OP_CLEAR, 0, 0, 1, 1), (P.OP_BLEND, True)] + body)
    b = run(gpu, c, [(P.OP_TARGET, c), (P.OP_CLEAR, 0, 0, 1, 1), P.BLEND_OVER] + body)
    want = blend_ref((1, 0.5, 0, 0.5), (0, 0, 1, 1), (0, 0, 0, 0), *BLENDS[0])
    assert np.array_equal(a, b) and np.abs(a[10, 10].astype(int) - np.round(want * 255)).max() <= 1


# -- depth written back and sampled ------------------------------------------------------------
_fences = iter(range(1, 1 << 30))


def expected_depth_bytes(fmt: str, z: np.ndarray, stencil: np.ndarray) -> tuple[np.ndarray, int]:
    """(texels as the guest holds them per formats.py, tolerance in the integer depth units)."""
    if fmt == "D16":
        return np.round(z * 65535).astype("<u2").view(np.uint8), 1
    if fmt == "D24S8":
        return (np.round(z * 0xFFFFFF).astype("<u4") | stencil.astype("<u4") << 24).view(np.uint8), 1
    if fmt == "D32F":
        return z.astype("<f4").view(np.uint8), 0
    return np.stack([z.astype("<f4").view("<u4"), stencil.astype("<u4")], -1).view(np.uint8), 0


def compare_depth(fmt, got: np.ndarray, want: np.ndarray, tol: int) -> None:
    if fmt == "D16":
        g, w_ = got.view("<u2").astype(int), want.view("<u2").astype(int)
        assert np.abs(g - w_).max() <= tol
    elif fmt == "D24S8":
        g, w_ = got.view("<u4"), want.view("<u4")
        assert np.array_equal(g >> 24, w_ >> 24)  # stencil exact
        assert np.abs((g & 0xFFFFFF).astype(int) - (w_ & 0xFFFFFF).astype(int)).max() <= tol
    else:
        assert np.array_equal(got, want)


def writeback_case(gpu, zprog, fmt, layout, base) -> None:
    w, h, bh, bpp = 24, 16, 1, {"D16": 2, "D24S8": 4, "D32F": 4, "D32F_S8": 8}[fmt]
    pitch = w * bpp + 64
    gpu.pool.write(base, bytes([0xAB]) * 32768)
    c, d = gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(c, 0, 0, w, h, "RGBA8", render_target=True))
    gpu.client.register(
        TextureDesc(
            d, 1, base, w, h, fmt, block_linear=layout == "block_linear", block_height_log2=bh, pitch=pitch, render_target=True
        )
    )
    sc = Scene(gpu.pool, base + 32768)
    stencil_on = fmt in ("D24S8", "D32F_S8")
    write7 = ("replace", "replace", "replace", "always", 7, 255, 255)
    cmds = [(P.OP_DEPTH_TARGET, c, d), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 3, 3), ds(stencil=stencil_on, front=write7)]
    cmds += draws(sc, zprog, [(2, 2, 12, 10, 0.25, RED), (8, 6, 20, 14, 0.625, GREEN)], w, h)
    fence = next(_fences)
    seq = gpu.client.submit(cmds + [(P.OP_WRITEBACK, d), (P.OP_SIGNAL, 9, fence)])
    gpu.client.wait(seq)
    assert gpu.client.dropped() == 0, gpu.log()[-1500:]
    assert gpu.client.fence(9) >= fence
    z = np.ones((h, w))
    st = np.full((h, w), 3)
    z[6:14, 8:20], st[6:14, 8:20] = 0.625, 7
    z[2:10, 2:12], st[2:10, 2:12] = 0.25, 7  # nearer, drawn first: LESS keeps it
    want, tol = expected_depth_bytes(fmt, z, st)
    want = want.reshape(h, w * bpp)
    mem = bytes(gpu.pool.mm[base : base + 32768])
    if layout == "block_linear":
        got = np.array([[mem[ref_address(x, y, w * bpp, bh)] for x in range(w * bpp)] for y in range(h)], np.uint8)
    else:
        got = np.frombuffer(mem, np.uint8)[: pitch * h].reshape(h, pitch)
        assert (got[:, w * bpp :] == 0xAB).all()  # bytes between rows left alone
        got = got[:, : w * bpp]
    compare_depth(fmt, np.ascontiguousarray(got), np.ascontiguousarray(want), tol)


@pytest.mark.parametrize(
    "fmt,layout", [("D16", "pitch"), ("D24S8", "block_linear"), ("D32F", "block_linear"), ("D32F_S8", "pitch")]
)
def test_depth_written_back_into_pool(gpu, zprog, fmt, layout):
    writeback_case(gpu, zprog, fmt, layout, 6 << 20)


def test_depth_target_sampled_in_a_later_pass(gpu, zprog):
    """Pass 1 renders depth only (no colour target); pass 2 samples the depth target: .r is the
    depth value (0.25 inside the rectangle, 1.0 elsewhere)."""
    _, d = targets(gpu, "D24S8", 32, 16, color=False)
    c, smp = gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(c, 0, 0, W, H, "RGBA8", render_target=True))
    gpu.client.register(SamplerDesc(smp))
    sc = Scene(gpu.pool, 0)
    cmds = [(P.OP_DEPTH_TARGET, E, d), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3), ds()]
    cmds += draws(sc, zprog, [(4, 2, 20, 12, 0.25, RED)], 32, 16)
    cmds += [
        (P.OP_TARGET, c),
        (P.OP_CLEAR, *BLACK),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(rect_uv_px(8, 8, 40, 24, W, H).tobytes())),
        (P.OP_TEXTURE, 0, d, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]
    img = run(gpu, c, cmds)
    depth = np.ones((16, 32))
    depth[2:12, 4:20] = 0.25
    got = img[8:24, 8:40, 0].astype(int)
    assert np.abs(got - np.round(depth * 255)).max() <= 1
    assert (img[:8] == to8(BLACK)).all()


def test_d24s8_fallback_when_the_device_lacks_it():
    """With D24S8 treated as missing (gpu_host.avoid_formats) the target is made D32F_S8, said in
    the log, and what the guest reads back is still D24S8 texels."""
    g = Gpu(env={"NXRECOMP_GPU_HOST_AVOID_FORMATS": "VK_FORMAT_D24_UNORM_S8_UINT"})
    try:
        pid = g.id()
        g.client.register_program(pid, GlslSource(Z_VS, Z_FS))
        writeback_case(g, pid, "D24S8", "block_linear", 6 << 20)
        deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
        while "VK_FORMAT_D32_SFLOAT_S8_UINT" not in g.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "format D24S8: device" in g.log() and "depth targets use VK_FORMAT_D32_SFLOAT_S8_UINT" in g.log()
    finally:
        g.close()


def test_depth_scene_recorded_and_replayed(tmp_path):
    """A recording holding depth targets, state packets, a depth WRITEBACK and a compare sampler
    replays alone (``nxrecomp replay``) to the frames the live run presented."""
    import shutil
    import subprocess
    import sys

    from cpu_host.gpu_client.client import GpuClient
    from gpu_guest import TEX_VS, start_gpu, attach, stop_gpu
    from test_gpu_depth_compare import SHADOW_FS

    rec = tmp_path / "run.nxgpu"
    proc, dr = start_gpu(args=["--record", str(rec)])
    live = {}
    try:
        cl = GpuClient(dr, ring_capacity=1 << 20)
        attach(cl, proc)
        pool = cl.create_pool(1, 1 << 20)
        cl.register_program(1, GlslSource(Z_VS, Z_FS))
        cl.register_program(2, GlslSource(TEX_VS, SHADOW_FS))
        cl.register(TextureDesc(3, 0, 0, W, H, "RGBA8", render_target=True))
        cl.register(TextureDesc(4, 1, 1 << 19, W, H, "D24S8", render_target=True))
        cl.register(SamplerDesc(5, compare=1 + P.COMPARE_OPS.index("less")))
        for frame in range(1, 4):
            sc = Scene(pool, 0)
            near = (4 + frame, 4, 30, 24, 0.25, RED)
            cmds = [
                (P.OP_DEPTH_TARGET, 3, 4),
                (P.OP_CLEAR, *BLACK),
                (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3),
                ds(),
                (P.OP_RASTER, 1, 0, 0, False),
                (P.OP_SCISSOR, 0, 0, 40, 30),
            ]  # rect_z is clockwise: kept
            cmds += draws(sc, 1, [(16, 8, 44, 30, 0.75, GREEN), near])
            cmds += [
                (P.OP_WRITEBACK, 4),
                (P.OP_TARGET, 3),
                (P.OP_PROGRAM, 2),
                (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
                (P.OP_VERTEX, *sc.put(rect_uv_px(0, 24, 16, 32, W, H).tobytes())),
                (P.OP_TEXTURE, 0, 4, 5),
                P.BLEND_OVER,
                (P.OP_DRAW, 6, 1, 0, 0),
                (P.OP_PRESENT, frame, 3),
            ]
            cl.wait(cl.submit(cmds))
            assert cl.dropped() == 0
            live[frame] = cl.frame(frame).sha256
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
    assert got == live and len(set(live.values())) == 3
