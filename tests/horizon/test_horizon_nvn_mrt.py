"""A deferred-rendering G-buffer through the whole split runtime: a guest program of our own
(below, built with our guest SDK) sets three colour targets of mixed formats (RGBA8, RG8, R8) at
once with nvnCommandBufferSetRenderTargets, clears each by its index, draws two rectangles whose
fragment shader writes a different colour to each location (target 2 blended additively: its
own blend state and colour-state enable bit), then samples all three targets in a second pass
into the window texture.  The presented frame is compared with what numpy computes here from
the scene (each target's 8-bit storage rounding included)."""

from __future__ import annotations

import numpy as np

from cpu_host.gpu_client.shaders import compile_glsl
from tests.horizon.hz_build import run_guest_c
from tests.horizon.test_horizon_nvn import cpu_lines, read_frame

W = 32
CLEAR = [(0.1, 0.2, 0.3, 1.0), (0.5, 0.25, 0.0, 0.0), (0.2, 0.0, 0.0, 0.0)]
# (x0, y0, x1, y1), colours written to locations 0, 1, 2; drawn in this order
RECTS = [
    ((4, 4, 20, 20), [(0.8, 0.6, 0.4, 1.0), (0.0, 1.0, 0.0, 0.0), (0.3, 0.0, 0.0, 0.0)]),
    ((12, 12, 28, 28), [(0.2, 0.9, 0.5, 1.0), (1.0, 0.4, 0.0, 0.0), (0.4, 0.0, 0.0, 0.0)]),
]

GB_VS = """#version 450
layout(location=0) in vec2 pos;
void main() { gl_Position = vec4(pos, 0.0, 1.0); }"""
GB_FS = """#version 450
layout(set=0, binding=0) uniform U { vec4 c[3]; } u;
layout(location=0) out vec4 albedo;
layout(location=1) out vec4 normal;
layout(location=2) out vec4 light;
void main() { albedo = u.c[0]; normal = u.c[1]; light = u.c[2]; }"""
RESOLVE_VS = """#version 450
layout(location=0) in vec2 pos;
layout(location=1) in vec2 uv;
layout(location=0) out vec2 t;
void main() { gl_Position = vec4(pos, 0.0, 1.0); t = uv; }"""
RESOLVE_FS = """#version 450
layout(location=0) in vec2 t;
layout(set=0, binding=4) uniform sampler2D albedo;
layout(set=0, binding=5) uniform sampler2D normal;
layout(set=0, binding=6) uniform sampler2D light;
layout(location=0) out vec4 o;
void main() { o = vec4(texture(albedo, t).r, texture(normal, t).g, texture(light, t).r, 1.0); }"""


def c_program() -> str:
    def px(v):
        return f"{2.0 * v / W - 1.0:.6f}f"

    verts, ubos = [], []
    for (x0, y0, x1, y1), cols in RECTS:
        pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1)]
        verts.append("{" + ", ".join(f"{px(x)}, {px(y)}" for x, y in pts) + "}")
        ubos.append("{" + ", ".join(f"{v:.6f}f" for c in cols for v in c) + "}")
    clears = ", ".join("{" + ", ".join(f"{v:.6f}f" for v in c) + "}" for c in CLEAR)
    return MRT_C.replace("@VERTS@", ",\n    ".join(verts)).replace("@UBOS@", ",\n    ".join(ubos)).replace("@CLEARS@", clears)


MRT_C = r"""
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

#define W 32
static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture win_tex[2], gbuf[3];
static NVNprogram gb_prog, resolve_prog;
static NVNsampler nearest;
static NVNtexturePool tpool;
static NVNsamplerPool spool;
static NVNwindow window;
static NVNsync done;
static uint8_t pool_mem[256 * 1024] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_QUAD = 0xF00, OFF_UBO = 0x1000, OFF_SHADERS = 0x10000, OFF_TPOOL = 0x30000,
       OFF_SPOOL = 0x31000 };
static const float quad[24] = {-1, -1, 0, 0, 1, -1, 1, 0, 1, 1, 1, 1, -1, -1, 0, 0, 1, 1, 1, 1, -1, 1, 0, 1};
static const float verts[2][12] = {
    @VERTS@
};
static const float ubos[2][12] = {
    @UBOS@
};
static const float clears[3][4] = {@CLEARS@};
static const int formats[3] = {NVN_FORMAT_RGBA8, NVN_FORMAT_RG8, NVN_FORMAT_R8};

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    hz_printf("nvn entry points missing: %d\n", nvn_load_procs(&nvn));
    nvnu_device_and_pool(&nvn, &dev, &pool, pool_mem, sizeof pool_mem);
    memcpy(pool_mem + OFF_VERTS, verts, sizeof verts);
    memcpy(pool_mem + OFF_UBO, ubos[0], sizeof ubos[0]);
    memcpy(pool_mem + OFF_UBO + 0x100, ubos[1], sizeof ubos[1]);
    memcpy(pool_mem + OFF_QUAD, quad, sizeof quad);
    for (int i = 0; i < 3; i++)
        nvnu_texture(&nvn, &dev, &pool, &gbuf[i], formats[i], W, W, NVN_TEXTURE_FLAGS_RENDER_TARGET, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[0], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[1], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    NVNsamplerBuilder sb;
    nvn.nvnSamplerBuilderSetDefaults(&sb);
    nvn.nvnSamplerBuilderSetDevice(&sb, &dev);
    nvn.nvnSamplerBuilderSetMinMagFilter(&sb, NVN_FILTER_NEAREST, NVN_FILTER_NEAREST);
    nvn.nvnSamplerBuilderSetWrapMode(&sb, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP);
    nvn.nvnSamplerInitialize(&nearest, &sb);
    nvn.nvnTexturePoolInitialize(&tpool, &pool, OFF_TPOOL, 16);
    nvn.nvnSamplerPoolInitialize(&spool, &pool, OFF_SPOOL, 16);
    for (int i = 0; i < 3; i++) nvn.nvnTexturePoolRegisterTexture(&tpool, 1 + i, &gbuf[i], 0);
    nvn.nvnSamplerPoolRegisterSampler(&spool, 1, &nearest);

    static NVNshaderControl ctl[2], ctl2[2];
    uint32_t off = OFF_SHADERS;
    nvnu_program(&nvn, &dev, &pool, pool_mem, &off, &gb_prog, ctl, "rom:/shaders/gb.vs", "rom:/shaders/gb.fs", NVN_SHADER_ARCH_SPIRV);
    nvnu_program(&nvn, &dev, &pool, pool_mem, &off, &resolve_prog, ctl2, "rom:/shaders/resolve.vs", "rom:/shaders/resolve.fs", NVN_SHADER_ARCH_SPIRV);
    nvnu_queue_and_window(&nvn, &dev, &queue, &cmd, &done, &window, &win_tex[0], &win_tex[1]);

    /* target 2 (the light buffer) adds: its own blend state and colour-state enable bit */
    NVNblendState add;
    nvn.nvnBlendStateSetDefaults(&add);
    nvn.nvnBlendStateSetBlendTarget(&add, 2);
    nvn.nvnBlendStateSetBlendFunc(&add, NVN_BLEND_FUNC_ONE, NVN_BLEND_FUNC_ONE, NVN_BLEND_FUNC_ONE, NVN_BLEND_FUNC_ONE);
    nvn.nvnBlendStateSetBlendEquation(&add, NVN_BLEND_EQUATION_ADD, NVN_BLEND_EQUATION_ADD);
    NVNcolorState blend2;
    nvn.nvnColorStateSetDefaults(&blend2);
    nvn.nvnColorStateSetBlendEnable(&blend2, 2, 1);

    NVNvertexAttribState pos[1] = {{NVN_ATTR_FLOAT2, 0, 0, 0}};
    NVNvertexStreamState s8 = {8, 0};
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);
    NVNtexture *targets[3] = {&gbuf[0], &gbuf[1], &gbuf[2]};
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 3, targets, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    for (int i = 0; i < 3; i++) nvn.nvnCommandBufferClearColor(&cmd, i, clears[i], 0xF);
    nvn.nvnCommandBufferBindProgram(&cmd, &gb_prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, pos);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s8);
    nvn.nvnCommandBufferBindBlendState(&cmd, &add);
    nvn.nvnCommandBufferBindColorState(&cmd, &blend2);
    for (int i = 0; i < 2; i++) {
        nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_FRAGMENT, 0, base + OFF_UBO + 0x100 * i, sizeof ubos[i]);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + sizeof verts[0] * i, sizeof verts[i]);
        nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    }
    /* the resolve pass: all three G-buffer targets sampled into the window texture */
    int index = 0;
    nvn.nvnWindowAcquireTexture(&window, 0, &index);
    NVNtexture *colour[1] = {&win_tex[index]};
    NVNvertexAttribState pos_uv[2] = {{NVN_ATTR_FLOAT2, 0, 0, 0}, {NVN_ATTR_FLOAT2, 8, 0, 1}};
    NVNvertexStreamState s16 = {16, 0};
    NVNcolorState plain;
    nvn.nvnColorStateSetDefaults(&plain);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, colour, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferBindColorState(&cmd, &plain);
    nvn.nvnCommandBufferBindProgram(&cmd, &resolve_prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 2, pos_uv);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s16);
    for (int i = 0; i < 3; i++)
        nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, i, nvn.nvnDeviceGetTextureHandle(&dev, 1 + i, 1));
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_QUAD, sizeof quad);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueuePresentTexture(&queue, &window, index);
    nvn.nvnQueueFinish(&queue);
    hz_printf("done\n");
    return 0;
}
"""


def q8(v) -> np.ndarray:
    return np.round(np.clip(np.asarray(v, np.float64), 0, 1) * 255)


def expected() -> np.ndarray:
    """The window: (albedo.r, normal.g, light.r, 1) per pixel; albedo and normal overwritten by
    each rectangle, light blended ONE + ONE, each value stored as 8 bits after every write."""
    albedo = np.full((W, W), q8(CLEAR[0][0]))
    normal = np.full((W, W), q8(CLEAR[1][1]))
    light = np.full((W, W), q8(CLEAR[2][0]))
    for (x0, y0, x1, y1), cols in RECTS:
        r = (slice(y0, y1), slice(x0, x1))
        albedo[r] = q8(cols[0][0])
        normal[r] = q8(cols[1][1])
        light[r] = q8(light[r] / 255 + cols[2][0])
    return np.stack([albedo, normal, light, np.full((W, W), 255.0)], -1)


def test_gbuffer_of_three_targets_through_the_split_runtime(tmp_path) -> None:
    r, log, frames = run_guest_c(
        c_program(),
        {
            "/shaders/gb.vs": compile_glsl(GB_VS, "vert"),
            "/shaders/gb.fs": compile_glsl(GB_FS, "frag"),
            "/shaders/resolve.vs": compile_glsl(RESOLVE_VS, "vert"),
            "/shaders/resolve.fs": compile_glsl(RESOLVE_FS, "frag"),
        },
        tmp_path,
    )
    assert r.returncode == 0, log[-3000:]
    assert cpu_lines(log) == ["nvn entry points missing: 0", "done"], log[-3000:]
    got = read_frame(frames / "frame_000001.png").astype(int)
    want = expected().astype(int)
    bad = np.argwhere(np.abs(got - want).max(-1) > 1)
    assert not len(bad), (
        f"{len(bad)} pixels differ, first at (y, x) {tuple(bad[0])}: {got[tuple(bad[0])]} != {want[tuple(bad[0])]}"
    )
    # the light buffer really blended: its overlap is the sum of both rectangles and the clear
    assert abs(got[14, 14, 2] - q8(q8(q8(0.2) / 255 + 0.3) / 255 + 0.4)) <= 1 and got[14, 14, 2] > got[6, 6, 2]
