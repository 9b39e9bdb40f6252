"""Hostile depth/stencil, raster and blend input: each bad packet or binding drops its submission
with one log line naming the packet and the field, and the GPU process keeps serving."""

from __future__ import annotations

import pytest

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from gpu_guest import P, Scene, rect_px, ubo
from nxrecomp.common.errors import NxError
from test_gpu_hostile import check_still_serving, expect_dropped, good, submit_raw

W = H = 32
E = P.EMPTY
DS_OK = list(P.DS_DEFAULT[1:])


@pytest.fixture(scope="module")
def env(gpu):
    t, d, small, d16 = gpu.id(), gpu.id(), gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    gpu.client.register(TextureDesc(d, 0, 0, W, H, "D24S8", render_target=True))
    gpu.client.register(TextureDesc(small, 0, 0, 16, 16, "D32F", render_target=True))
    gpu.client.register(TextureDesc(d16, 0, 0, W, H, "D16", render_target=True))
    sc = Scene(gpu.pool, 4 << 20)
    vb = sc.put(rect_px(0, 0, 16, 16, W, H).tobytes())
    ub = sc.put(ubo((1, 0, 0, 1)))
    return gpu, t, d, small, vb, ub


def with_ds(fields: list) -> bytes:
    return P.encode(P.OP_DEPTH_STENCIL, *fields)


def replaced(i: int, v) -> list:
    f = list(DS_OK)
    f[i] = v
    return f


BAD_STATE_PACKETS = [
    (with_ds(replaced(2, 8)), "DEPTH_STENCIL: field depth_func = 8 is not in 0..7"),
    (with_ds(replaced(5, 9)), "DEPTH_STENCIL: field front_depth_fail = 9 is not in 0..7"),
    (with_ds(replaced(16, 300)), "DEPTH_STENCIL: field back_read_mask = 300 is not in 0..255"),
    (with_ds(replaced(0, 1)), "DEPTH_STENCIL: field depth_test = 1 is not a boolean"),
    (with_ds(DS_OK[:-1]), "DEPTH_STENCIL: has 17 fields, expected 18"),
    (P.encode(P.OP_RASTER, 4, 0, 0, False), "RASTER: field cull = 4 is not in 0..3"),
    (P.encode(P.OP_RASTER, 0, 2, 0, False), "RASTER: field front_face = 2 is not in 0..1"),
    (P.encode(P.OP_RASTER, 0, 0, 2, False), "RASTER: field polygon_mode = 2 is not in 0..1"),
    (P.encode(P.OP_DEPTH_BIAS, 1.0, float("nan"), 0.0), "DEPTH_BIAS: field slope = nan is not a finite number"),
    (P.encode(P.OP_BLEND_STATE, 0, True, 15, 0, 0, 1, 0, 0, 15), "BLEND_STATE: field src_color = 15 is not in 0..14"),
    (P.encode(P.OP_BLEND_STATE, 0, True, 1, 0, 5, 1, 0, 0, 15), "BLEND_STATE: field color_op = 5 is not in 0..4"),
    (P.encode(P.OP_BLEND_STATE, 8, True, 1, 0, 0, 1, 0, 0, 15), "BLEND_STATE: field target = 8 is not in 0..7"),
    (P.encode(P.OP_BLEND_STATE, 0, True, 1, 0, 0, 1, 0, 0, 16), "BLEND_STATE: field write_mask = 16 is not in 0..15"),
    (P.encode(P.OP_CLEAR_DEPTH_STENCIL, 1.5, 0, 3), "CLEAR_DEPTH_STENCIL: field depth = 1.5 is not in 0..1"),
    (P.encode(P.OP_CLEAR_DEPTH_STENCIL, 1.0, 256, 3), "CLEAR_DEPTH_STENCIL: field stencil = 256 is not in 0..255"),
    (P.encode(P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 0), "CLEAR_DEPTH_STENCIL: field aspects = 0 clears nothing"),
    (P.encode(P.OP_SCISSOR, 0, 0, 16385, 4), "SCISSOR: field width = 16385 is not in 0..16384"),
    (P.encode(P.OP_MULTISAMPLE, 3, False), "MULTISAMPLE: field samples = 3 is not one of (1, 2, 4, 8, 16)"),
    (P.encode(P.OP_BLEND_CONSTANT, 0.0, 0.0, None, 1.0), "BLEND_CONSTANT: field b = None is not a finite number"),
]


@pytest.mark.parametrize("payload,message", BAD_STATE_PACKETS, ids=[m.split(" is")[0] for _, m in BAD_STATE_PACKETS])
def test_malformed_state_packets(env, payload, message):
    gpu, t, d, small, vb, ub = env
    cmds = [P.encode(*c) for c in good(t, vb, ub)]
    before = gpu.client.dropped()
    seq = submit_raw(gpu, cmds[:3] + [payload] + cmds[3:])
    expect_dropped(gpu, seq, f"dropped submission {seq}: packet 3: {message}", before)
    check_still_serving(gpu, t, vb, ub)


def test_bad_depth_bindings(env):
    gpu, t, d, small, vb, ub = env
    smp = gpu.id()
    gpu.client.register(SamplerDesc(smp))
    g = good(t, vb, ub)
    cases = [
        ([(P.OP_DEPTH_TARGET, t, t)] + g[1:], f"packet 0 DEPTH_TARGET: field depth = {t} has format RGBA8, not a depth format"),
        ([(P.OP_DEPTH_TARGET, d, d)] + g[1:], f"packet 0 DEPTH_TARGET: field color = {d} has depth format D24S8"),
        (
            [(P.OP_DEPTH_TARGET, t, small)] + g[1:],
            f"packet 0 DEPTH_TARGET: field depth = {small} is 16x16, the colour target {t} 32x32",
        ),
        ([(P.OP_DEPTH_TARGET, E, E)] + g[1:], "packet 0 DEPTH_TARGET: fields color and depth are both empty"),
        ([(P.OP_DEPTH_TARGET, t, 7777)] + g[1:], "packet 0 DEPTH_TARGET: field texture 7777 is not a registered"),
        ([(P.OP_TARGET, d)] + g[1:], f"packet 0 TARGET: field texture {d} has depth format D24S8; bind it with DEPTH_TARGET"),
        (g[:1] + [(P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3)], "packet 1 CLEAR_DEPTH_STENCIL: no depth target set"),
        (
            [(P.OP_DEPTH_TARGET, E, d), (P.OP_CLEAR, 0, 0, 0, 1)],
            f"packet 1 CLEAR: no colour target set (the depth target {d} is bound alone)",
        ),
        (
            [(P.OP_DEPTH_TARGET, t, d)] + g[1:6] + [(P.OP_TEXTURE, 0, d, smp), (P.OP_DRAW, 6, 1, 0, 0)],
            f"packet 7 DRAW: texture {d} in slot 0 is the current render target",
        ),
        (
            [(P.OP_DEPTH_TARGET, t, d), (P.OP_PRESENT, 1, d)],
            f"packet 1 PRESENT: field texture {d} has depth format D24S8; only colour targets are presented",
        ),
    ]
    for cmds, message in cases:
        before = gpu.client.dropped()
        seq = gpu.client.submit(cmds)
        expect_dropped(gpu, seq, f"dropped submission {seq}: {message}", before)
    check_still_serving(gpu, t, vb, ub)


def test_depth_descriptors_rejected_by_name(env):
    gpu, t, d, small, vb, ub = env
    with pytest.raises(NxError, match="field format D32F is a depth format; it must be a render target"):
        gpu.client.register(TextureDesc(gpu.id(), 1, 0, 8, 8, "D32F", block_linear=True))
    check_still_serving(gpu, t, vb, ub)


def test_depth_state_with_a_valid_depth_target_still_draws(env):
    """The good submission with a depth target bound and every state packet at its default
    draws the same pixels (state packets alone change nothing)."""
    gpu, t, d, small, vb, ub = env
    from test_gpu_hostile import frame_image, to8
    import numpy as np

    n = 700000 + gpu.id()
    g = good(t, vb, ub)
    seq = gpu.client.submit(
        [
            (P.OP_DEPTH_TARGET, t, d),
            (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3),
            P.DS_DEFAULT,
            P.RASTER_DEFAULT,
            P.BLEND_OFF,
            (P.OP_MULTISAMPLE, 4, True),
            (P.OP_SCISSOR, 0, 0, W, H),
            (P.OP_DEPTH_BIAS, 0.0, 0.0, 0.0),
            (P.OP_BLEND_CONSTANT, 0, 0, 0, 0),
        ]
        + g[1:]
        + [(P.OP_PRESENT, n, t)]
    )
    gpu.client.wait(seq)
    img = frame_image(gpu.client, n)
    want = np.empty((H, W, 4), np.uint8)
    want[:] = to8((0, 0, 1, 1))
    want[:16, :16] = to8((1, 0, 0, 1))
    assert np.array_equal(img, want)
