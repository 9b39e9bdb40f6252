"""Layered textures on lavapipe: 2D arrays, cubes and cube arrays read from pool memory (layers one
after another, each block-linear) and sampled by GLSL sampler2DArray / samplerCube /
samplerCubeArray.  Each output pixel names one texel of one layer; the shader turns it into a
direction with the inverse of the Vulkan spec's cube face table (major axis, sc, tc), and the
expected image is the random texels placed by plain indexing here."""

from __future__ import annotations

import numpy as np
import pytest

from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import P, Scene, frame_image, rect_px
from gpu_host.blocklinear import size_bytes
from nxrecomp.common.errors import NxError
from test_gpu_draws import ref_swizzle

N = 4  # texels across a face / layer
VS = """#version 450
layout(location=0) in vec2 pos;
void main() { gl_Position = vec4(pos, 0.0, 1.0); }"""
# Pixel (x, y): face x / N, texel (x % N, y % N); cube (array layer) y / N.
DIRECTION = """
vec3 direction(ivec2 p) {
    int face = p.x / %(n)d;
    float sc = 2.0 * (float(p.x %% %(n)d) + 0.5) / %(n)d.0 - 1.0, tc = 2.0 * (float(p.y %% %(n)d) + 0.5) / %(n)d.0 - 1.0;
    if (face == 0) return vec3(1.0, -tc, -sc);       // +X: sc = -rz, tc = -ry
    if (face == 1) return vec3(-1.0, -tc, sc);       // -X: sc = +rz, tc = -ry
    if (face == 2) return vec3(sc, 1.0, tc);         // +Y: sc = +rx, tc = +rz
    if (face == 3) return vec3(sc, -1.0, -tc);       // -Y: sc = +rx, tc = -rz
    if (face == 4) return vec3(sc, -tc, 1.0);        // +Z: sc = +rx, tc = -ry
    return vec3(-sc, -tc, -1.0);                     // -Z: sc = -rx, tc = -ry
}""" % {"n": N}
FS = {
    "cube": """#version 450
layout(set=0, binding=4) uniform samplerCube tex;
layout(location=0) out vec4 o;
%s
void main() { o = texture(tex, direction(ivec2(gl_FragCoord.xy))); }"""
    % DIRECTION,
    "cube_array": """#version 450
layout(set=0, binding=4) uniform samplerCubeArray tex;
layout(location=0) out vec4 o;
%s
void main() { ivec2 p = ivec2(gl_FragCoord.xy); o = texture(tex, vec4(direction(p), float(p.y / %d))); }"""
    % (DIRECTION, N),
    "2d_array": """#version 450
layout(set=0, binding=4) uniform sampler2DArray tex;
layout(location=0) out vec4 o;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    o = texture(tex, vec3((vec2(p %% %(n)d) + 0.5) / %(n)d.0, float(p.x / %(n)d)));
}"""
    % {"n": N},
}


@pytest.mark.parametrize("kind,layers", [("cube", 6), ("cube_array", 12), ("2d_array", 5)])
def test_layered_texture_sampled(gpu, kind, layers):
    rng = np.random.default_rng(layers)
    texels = rng.integers(0, 256, (layers, N, N, 4), dtype=np.uint8)
    stride = size_bytes(N * 4, N, 0)
    raw = b"".join(ref_swizzle(texels[k].reshape(N, N * 4), 0).ljust(stride, b"\0") for k in range(layers))
    sc = Scene(gpu.pool, 1 << 20)
    tex_range = sc.put(raw)
    cubes = layers // 6 if kind != "2d_array" else 1
    across = 6 if kind != "2d_array" else layers
    w, h = across * N, cubes * N
    tex, smp, t, prog = gpu.id(), gpu.id(), gpu.id(), gpu.id()
    gpu.client.register(
        TextureDesc(
            tex, 1, tex_range[1], N, N, "RGBA8", block_linear=True, block_height_log2=0, layers=layers, cube=kind != "2d_array"
        )
    )
    gpu.client.register(SamplerDesc(smp))
    gpu.client.register(TextureDesc(t, 0, 0, w, h, "RGBA8", render_target=True))
    gpu.client.register_program(prog, GlslSource(VS, FS[kind]))
    n = next(gpu.frames)
    seq = gpu.client.submit(
        [
            (P.OP_TARGET, t),
            (P.OP_CLEAR, 0, 0, 0, 0),
            (P.OP_PROGRAM, prog),
            (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
            (P.OP_VERTEX, *sc.put(rect_px(0, 0, w, h, w, h).tobytes())),
            (P.OP_TEXTURE, 0, tex, smp),
            (P.OP_DRAW, 6, 1, 0, 0),
            (P.OP_PRESENT, n, t),
        ]
    )
    gpu.client.wait(seq)
    assert gpu.client.dropped() == 0, gpu.log()[-1500:]
    img = frame_image(gpu.client, n)
    want = np.zeros((h, w, 4), np.uint8)
    for y in range(h):
        for x in range(w):
            layer = (y // N) * 6 + x // N if kind != "2d_array" else x // N
            want[y, x] = texels[layer, y % N, x % N]
    assert np.array_equal(img, want)


def test_layered_textures_refused_where_they_do_not_fit(gpu):
    from test_gpu_hostile import expect_dropped

    with pytest.raises(NxError, match="a cube needs square faces and layers a multiple of 6"):
        gpu.client.register(TextureDesc(gpu.id(), 1, 0, 4, 4, "RGBA8", layers=7, cube=True))
    # a layered colour render target is a compute surface (test_compute_layered.py); a cube or a
    # layered depth target is refused
    with pytest.raises(NxError, match="a render target is not a cube and a layered one is a colour format"):
        gpu.client.register(TextureDesc(gpu.id(), 0, 0, 4, 4, "RGBA8", layers=6, cube=True, render_target=True))
    with pytest.raises(NxError, match="a render target is not a cube and a layered one is a colour format"):
        gpu.client.register(TextureDesc(gpu.id(), 0, 0, 4, 4, "D32F", layers=2, render_target=True))
    cube, smp, t = gpu.id(), gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(cube, 1, 0, 4, 4, "RGBA8", layers=6, cube=True))
    gpu.client.register(SamplerDesc(smp))
    gpu.client.register(TextureDesc(t, 0, 0, 8, 8, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 1 << 20)
    draw = [
        (P.OP_TARGET, t),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *sc.put(np.zeros((6, 4), np.float32).tobytes())),
    ]
    before = gpu.client.dropped()
    seq = gpu.client.submit(draw + [(P.OP_TEXTURE, 0, cube, smp), (P.OP_DRAW, 6, 1, 0, 0)])
    expect_dropped(
        gpu, seq, f"packet 5 DRAW: texture {cube} in slot 0 is a cube texture; program 2 samples binding 4 as 2d", before
    )
    # gpu-pools: a cube in the POOLS packet is an entry of the kernels' cube pool (set 1 binding 9,
    # tests/gpu_host/test_compute_pools.py), served; a multisampled texture there is still dropped
    gpu.client.wait(gpu.client.submit(draw + [(P.OP_POOLS, [cube] + [P.EMPTY] * 15, [P.EMPTY] * 4)]), timeout=20)
    assert gpu.client.dropped() == before + 1, gpu.log()[-2000:]
    ms = gpu.id()
    gpu.client.register(TextureDesc(ms, 0, 0, 8, 8, "RGBA8", render_target=True, samples=4))
    seq = gpu.client.submit(draw + [(P.OP_POOLS, [ms] + [P.EMPTY] * 15, [P.EMPTY] * 4)])
    expect_dropped(gpu, seq, f"packet 4 POOLS: field textures[0] = {ms} is multisampled (4 samples)", before + 1)
