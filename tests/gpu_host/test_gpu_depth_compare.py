"""Depth-compare samplers on lavapipe: a depth target rendered in one pass is sampled in the next
through a sampler with a compare op (GLSL sampler2DShadow: OpImageSampleDrefImplicitLod on a
depth image); each pixel is 1 where ``reference OP depth`` holds, else 0, computed here."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import TEX_VS, P, Scene, frame_image, rect_uv_px
from nxrecomp.common.errors import NxError
from test_gpu_depth import BLACK, RED, Z_FS, Z_VS, draws, ds

W, H = 48, 32
SHADOW_FS = """#version 450
layout(location=0) in vec2 t;
layout(set=0, binding=4) uniform sampler2DShadow tex;
layout(location=0) out vec4 o;
void main() { o = vec4(texture(tex, vec3(t, 0.5)), 0.0, 0.0, 1.0); }"""
PY = {
    "never": lambda a, b: False,
    "less": operator.lt,
    "equal": operator.eq,
    "less_or_equal": operator.le,
    "greater": operator.gt,
    "not_equal": operator.ne,
    "greater_or_equal": operator.ge,
    "always": lambda a, b: True,
}


@pytest.fixture(scope="module")
def progs(gpu):
    z, shadow = gpu.id(), gpu.id()
    gpu.client.register_program(z, GlslSource(Z_VS, Z_FS))
    gpu.client.register_program(shadow, GlslSource(TEX_VS, SHADOW_FS))
    return z, shadow


@pytest.mark.parametrize("func", P.COMPARE_OPS)
def test_compare_sampler(gpu, progs, func):
    zprog, shadow = progs
    d, c, smp = gpu.id(), gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(d, 0, 0, 32, 16, "D32F", render_target=True))
    gpu.client.register(TextureDesc(c, 0, 0, W, H, "RGBA8", render_target=True))
    gpu.client.register(SamplerDesc(smp, compare=1 + P.COMPARE_OPS.index(func)))
    sc = Scene(gpu.pool, 0)
    cmds = [(P.OP_DEPTH_TARGET, P.EMPTY, d), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 1), ds()]
    cmds += draws(sc, zprog, [(4, 2, 20, 12, 0.5, RED), (20, 2, 28, 12, 0.25, RED)], 32, 16)
    cmds += [
        (P.OP_TARGET, c),
        (P.OP_CLEAR, *BLACK),
        (P.OP_PROGRAM, shadow),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(rect_uv_px(8, 8, 40, 24, W, H).tobytes())),
        (P.OP_TEXTURE, 0, d, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]
    n = next(gpu.frames)
    seq = gpu.client.submit(cmds + [(P.OP_PRESENT, n, c)])
    gpu.client.wait(seq)
    assert gpu.client.dropped() == 0, gpu.log()[-1500:]
    img = frame_image(gpu.client, n)
    depth = np.ones((16, 32))
    depth[2:12, 4:20] = 0.5
    depth[2:12, 20:28] = 0.25
    want = np.vectorize(lambda v: 255 if PY[func](0.5, v) else 0)(depth)
    assert np.array_equal(img[8:24, 8:40, 0], want)
    assert not img[:8].any(axis=(0, 1))[:3].any()


def test_bad_compare_refused_by_name(gpu):
    with pytest.raises(NxError, match="field compare 9 is not 0 .no compare. or 1..8"):
        gpu.client.register(SamplerDesc(gpu.id(), compare=9))
