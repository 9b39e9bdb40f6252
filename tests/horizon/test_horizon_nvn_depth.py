"""A depth-tested scene through the whole split runtime: a guest program of our own (below, built
with our guest SDK) draws through the CPU host's NVN front end with depth/stencil, polygon
(cull), scissor, blend and channel-mask state; the GPU process replays it on lavapipe; the
presented frame and the depth/stencil texels the guest reads back from its pool are compared
with what is computed here from the scene description.  A second frame shows the depth target
through a depth-compare sampler (1 where 0.6 < depth)."""

from __future__ import annotations

import re

import numpy as np

from cpu_host.gpu_client.shaders import compile_glsl
from tests.horizon.hz_build import nxrecomp, run_guest_c
from tests.horizon.test_horizon_nvn import cpu_lines, read_frame

W = 64
# (name, x0, y0, x1, y1, z, rgba, wound clockwise): drawn in this order
GREEN = ("green", 8, 8, 56, 40, 0.75, (0, 1, 0, 1), False)
RED = ("red", 24, 24, 48, 56, 0.25, (1, 0, 0, 1), False)
BLUE = ("blue", 0, 0, 32, 32, 0.5, (0, 0, 1, 1), False)
YELLOW = ("yellow", 0, 48, 16, 64, 0.1, (1, 1, 0, 1), True)  # back-facing once culling is on
MAGENTA = ("magenta", 48, 0, 64, 16, 0.1, (1, 0, 1, 1), False)
WHITE = ("white", 0, 0, 64, 64, 0.05, (1, 1, 1, 1), False)  # scissored to rows 0..7
CYAN = ("cyan", 0, 56, 64, 64, 0.0, (0, 1, 1, 0.5), False)  # blended, alpha not written
RECTS = [GREEN, RED, BLUE, YELLOW, MAGENTA, WHITE, CYAN]
PIXELS = [(4, 4), (20, 20), (30, 30), (50, 30), (55, 10), (8, 60), (60, 50), (4, 50)]

VS = """#version 450
layout(location=0) in vec3 pos;
layout(set=0, binding=0) uniform U { vec4 color; } u;
layout(location=0) out vec4 c;
void main() { gl_Position = vec4(pos, 1.0); c = u.color; }"""
FS = """#version 450
layout(location=0) in vec4 c;
layout(location=0) out vec4 o;
void main() { o = c; }"""
SHADOW_VS = """#version 450
layout(location=0) in vec2 pos;
layout(location=1) in vec2 uv;
layout(location=0) out vec2 t;
void main() { gl_Position = vec4(pos, 0.0, 1.0); t = uv; }"""
SHADOW_FS = """#version 450
layout(location=0) in vec2 t;
layout(set=0, binding=4) uniform sampler2DShadow depth;
layout(location=0) out vec4 o;
void main() { o = vec4(texture(depth, vec3(t, 0.6)), 0.0, 0.0, 1.0); }"""


def c_program() -> str:
    """The guest: vertex data and colours are generated here into C initialisers."""

    def px(v):
        return f"{2.0 * v / W - 1.0:.6f}f"

    verts, colors = [], []
    for _, x0, y0, x1, y1, z, rgba, cw in RECTS:
        if cw:  # (x0,y0) (x1,y0) (x1,y1): clockwise with y pointing down
            pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1)]
        else:  # (x0,y0) (x0,y1) (x1,y1): counter-clockwise
            pts = [(x0, y0), (x0, y1), (x1, y1), (x0, y0), (x1, y1), (x1, y0)]
        verts.append("{" + ", ".join(f"{px(x)}, {px(y)}, {z:.6f}f" for x, y in pts) + "}")
        colors.append("{" + ", ".join(f"{v:.6f}f" for v in rgba) + "}")
    pixels = ", ".join(f"{{{x}, {y}}}" for x, y in PIXELS)
    return (
        DEPTH_C.replace("@VERTS@", ",\n    ".join(verts))
        .replace("@COLORS@", ",\n    ".join(colors))
        .replace("@NRECTS@", str(len(RECTS)))
        .replace("@PIXELS@", pixels)
        .replace("@NPIXELS@", str(len(PIXELS)))
    )


DEPTH_C = r"""
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

#define W 64
static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture win_tex[2], depth_tex;
static NVNprogram prog, shadow_prog;
static NVNsampler compare_less;
static NVNtexturePool tpool;
static NVNsamplerPool spool;
static const float quad[24] = {-1, -1, 0, 0, 1, -1, 1, 0, 1, 1, 1, 1, -1, -1, 0, 0, 1, 1, 1, 1, -1, 1, 0, 1};
static NVNwindow window;
static NVNsync done;
static uint8_t pool_mem[256 * 1024] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_QUAD = 0xF00, OFF_UBO = 0x1000, OFF_DEPTH = 0x4000, OFF_SHADERS = 0x10000,
       OFF_TPOOL = 0x30000, OFF_SPOOL = 0x31000 };
static const float verts[@NRECTS@][18] = {
    @VERTS@
};
static const float colors[@NRECTS@][4] = {
    @COLORS@
};
static const int pixels[@NPIXELS@][2] = {@PIXELS@};
static const float black[4] = {0, 0, 0, 1};
static const float one = 1.0f;

static void draw(int i) {
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);
    nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO + 0x100 * i, 16);
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + 0x100 * i, sizeof verts[i]);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
}

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    hz_printf("nvn entry points missing: %d\n", nvn_load_procs(&nvn));
    nvnu_device_and_pool(&nvn, &dev, &pool, pool_mem, sizeof pool_mem);
    for (int i = 0; i < @NRECTS@; i++) {
        memcpy(pool_mem + OFF_VERTS + 0x100 * i, verts[i], sizeof verts[i]);
        memcpy(pool_mem + OFF_UBO + 0x100 * i, colors[i], sizeof colors[i]);
    }
    memset(pool_mem + OFF_DEPTH, 0x55, 0x8000);
    memcpy(pool_mem + OFF_QUAD, quad, sizeof quad);

    NVNtextureBuilder tb;
    nvn.nvnTextureBuilderSetDefaults(&tb);
    nvn.nvnTextureBuilderSetDevice(&tb, &dev);
    nvn.nvnTextureBuilderSetFlags(&tb, NVN_TEXTURE_FLAGS_RENDER_TARGET);
    nvn.nvnTextureBuilderSetFormat(&tb, NVN_FORMAT_DEPTH24_STENCIL8);
    nvn.nvnTextureBuilderSetSize2D(&tb, W, W);
    nvn.nvnTextureBuilderSetStorage(&tb, &pool, OFF_DEPTH);
    int bh = nvn.nvnTextureBuilderGetBlockHeightLog2(&tb);
    hz_printf("depth storage: %d bytes\n", (int)nvn.nvnTextureBuilderGetStorageSize(&tb));
    nvn.nvnTextureInitialize(&depth_tex, &tb);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[0], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[1], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    NVNsamplerBuilder sb;
    nvn.nvnSamplerBuilderSetDefaults(&sb);
    nvn.nvnSamplerBuilderSetDevice(&sb, &dev);
    nvn.nvnSamplerBuilderSetMinMagFilter(&sb, NVN_FILTER_NEAREST, NVN_FILTER_NEAREST);
    nvn.nvnSamplerBuilderSetWrapMode(&sb, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP);
    nvn.nvnSamplerBuilderSetCompare(&sb, NVN_COMPARE_MODE_COMPARE_R_TO_TEXTURE, NVN_COMPARE_LESS);
    nvn.nvnSamplerInitialize(&compare_less, &sb);
    nvn.nvnTexturePoolInitialize(&tpool, &pool, OFF_TPOOL, 16);
    nvn.nvnSamplerPoolInitialize(&spool, &pool, OFF_SPOOL, 16);
    nvn.nvnTexturePoolRegisterTexture(&tpool, 1, &depth_tex, 0);
    nvn.nvnSamplerPoolRegisterSampler(&spool, 1, &compare_less);
    NVNtextureHandle h_depth = nvn.nvnDeviceGetTextureHandle(&dev, 1, 1);

    static NVNshaderControl ctl[2];
    uint32_t off = OFF_SHADERS;
    nvnu_program(&nvn, &dev, &pool, pool_mem, &off, &prog, ctl, "rom:/shaders/z.vs", "rom:/shaders/z.fs", NVN_SHADER_ARCH_SPIRV);
    static NVNshaderControl ctl2[2];
    nvnu_program(&nvn, &dev, &pool, pool_mem, &off, &shadow_prog, ctl2, "rom:/shaders/shadow.vs", "rom:/shaders/shadow.fs", NVN_SHADER_ARCH_SPIRV);

    nvnu_queue_and_window(&nvn, &dev, &queue, &cmd, &done, &window, &win_tex[0], &win_tex[1]);

    NVNdepthStencilState ds;
    nvn.nvnDepthStencilStateSetDefaults(&ds);
    nvn.nvnDepthStencilStateSetDepthTestEnable(&ds, 1);
    nvn.nvnDepthStencilStateSetDepthWriteEnable(&ds, 1);
    nvn.nvnDepthStencilStateSetDepthFunc(&ds, NVN_COMPARE_LESS);
    nvn.nvnDepthStencilStateSetStencilTestEnable(&ds, 1);
    nvn.nvnDepthStencilStateSetStencilFunc(&ds, NVN_FACE_FRONT_AND_BACK, NVN_COMPARE_ALWAYS);
    nvn.nvnDepthStencilStateSetStencilOp(&ds, NVN_FACE_FRONT_AND_BACK, NVN_STENCIL_OP_KEEP, NVN_STENCIL_OP_KEEP,
                                         NVN_STENCIL_OP_REPLACE);
    NVNpolygonState cull;
    nvn.nvnPolygonStateSetDefaults(&cull);
    nvn.nvnPolygonStateSetCullFace(&cull, NVN_FACE_BACK);
    nvn.nvnPolygonStateSetFrontFace(&cull, NVN_FRONT_FACE_CCW);
    NVNblendState over;
    nvn.nvnBlendStateSetDefaults(&over);
    nvn.nvnBlendStateSetBlendTarget(&over, 0);
    nvn.nvnBlendStateSetBlendFunc(&over, NVN_BLEND_FUNC_SRC_ALPHA, NVN_BLEND_FUNC_ONE_MINUS_SRC_ALPHA,
                                  NVN_BLEND_FUNC_ONE, NVN_BLEND_FUNC_ONE_MINUS_SRC_ALPHA);
    nvn.nvnBlendStateSetBlendEquation(&over, NVN_BLEND_EQUATION_ADD, NVN_BLEND_EQUATION_ADD);
    NVNcolorState blend_on;
    nvn.nvnColorStateSetDefaults(&blend_on);
    nvn.nvnColorStateSetBlendEnable(&blend_on, 0, 1);
    NVNchannelMaskState rgb_only;
    nvn.nvnChannelMaskStateSetDefaults(&rgb_only);
    nvn.nvnChannelMaskStateSetChannelMask(&rgb_only, 0, 1, 1, 1, 0);
    NVNmultisampleState ms;
    nvn.nvnMultisampleStateSetDefaults(&ms);
    nvn.nvnMultisampleStateSetSamples(&ms, 1);

    NVNvertexAttribState pos[1] = {{NVN_ATTR_FLOAT3, 0, 0, 0}};
    NVNvertexStreamState s12 = {12, 0};
    int index = 0;
    nvn.nvnWindowAcquireTexture(&window, 0, &index);
    NVNtexture *colour[1] = {&win_tex[index]};
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, colour, 0, &depth_tex, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferBindMultisampleState(&cmd, &ms);
    nvn.nvnCommandBufferClearColor(&cmd, 0, black, 0xF);
    nvn.nvnCommandBufferClearDepthStencil(&cmd, &one, 1, 0, 0xFF);
    nvn.nvnCommandBufferBindProgram(&cmd, &prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, pos);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s12);
    nvn.nvnCommandBufferBindDepthStencilState(&cmd, &ds);
    nvn.nvnCommandBufferSetStencilRef(&cmd, NVN_FACE_FRONT_AND_BACK, 5);
    nvn.nvnCommandBufferSetStencilMask(&cmd, NVN_FACE_FRONT_AND_BACK, 0xFF);
    draw(0); draw(1); draw(2);                       /* green far, red near, blue between */
    nvn.nvnCommandBufferBindPolygonState(&cmd, &cull);
    draw(3); draw(4);                                /* yellow is wound clockwise: culled */
    nvn.nvnCommandBufferSetScissor(&cmd, 0, 0, W, 8);
    draw(5);                                         /* white, rows 0..7 only */
    nvn.nvnCommandBufferSetScissor(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferBindBlendState(&cmd, &over);
    nvn.nvnCommandBufferBindChannelMaskState(&cmd, &rgb_only);
    nvn.nvnCommandBufferBindColorState(&cmd, &blend_on);
    draw(6);                                         /* half-transparent cyan over the bottom rows */
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueuePresentTexture(&queue, &window, index);
    nvn.nvnQueueFenceSync(&queue, &done, 0, 0);
    nvn.nvnQueueFlush(&queue);
    hz_printf("sync: %d\n", nvn.nvnSyncWait(&done, 10000000000ull) != NVN_SYNC_TIMEOUT_EXPIRED);
    for (int i = 0; i < @NPIXELS@; i++) {
        uint32_t x = (uint32_t)pixels[i][0], y = (uint32_t)pixels[i][1], v;
        memcpy(&v, pool_mem + OFF_DEPTH + nvnu_block_linear_offset(x * 4, y, W * 4, bh), 4);
        hz_printf("depth (%d, %d): %x\n", (int)x, (int)y, v);
    }
    /* frame 2: the depth target through the compare sampler, full screen, 1:1 */
    NVNvertexAttribState pos_uv[2] = {{NVN_ATTR_FLOAT2, 0, 0, 0}, {NVN_ATTR_FLOAT2, 8, 0, 1}};
    NVNvertexStreamState s16 = {16, 0};
    nvn.nvnWindowAcquireTexture(&window, 0, &index);
    colour[0] = &win_tex[index];
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, colour, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferClearColor(&cmd, 0, black, 0xF);
    nvn.nvnCommandBufferBindProgram(&cmd, &shadow_prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 2, pos_uv);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s16);
    nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, 0, h_depth);
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, nvn.nvnMemoryPoolGetBufferAddress(&pool) + OFF_QUAD, sizeof quad);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueuePresentTexture(&queue, &window, index);
    nvn.nvnQueueFinish(&queue);
    hz_printf("done\n");
    return 0;
}
"""


def expected() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(colour RGBA8, depth, stencil) from the scene: LESS depth test, stencil 5 wherever a
    fragment passed, back faces culled from YELLOW on, the scissor on WHITE, CYAN blended
    source-alpha over with alpha not written."""
    img = np.zeros((W, W, 4), np.float64)
    img[:] = (0, 0, 0, 1)
    depth = np.ones((W, W))
    stencil = np.zeros((W, W), np.uint32)
    culling = False
    for name, x0, y0, x1, y1, z, rgba, cw in RECTS:
        culling = culling or name == "yellow"
        if culling and cw:
            continue
        if name == "white":
            y1 = 8
        region = (slice(y0, y1), slice(x0, x1))
        passed = z < depth[region]
        src = np.asarray(rgba, np.float64)
        if name == "cyan":
            dst = img[region]
            out = dst.copy()
            out[..., :3] = src[:3] * src[3] + dst[..., :3] * (1 - src[3])
        else:
            out = np.broadcast_to(src, img[region].shape)
        img[region] = np.where(passed[..., None], out, img[region])
        depth[region] = np.where(passed, z, depth[region])
        stencil[region] = np.where(passed, 5, stencil[region])
    return np.round(img * 255).astype(np.uint8), depth, stencil


def test_depth_tested_scene_through_the_split_runtime(tmp_path) -> None:
    r, log, frames = run_guest_c(
        c_program(),
        {
            "/shaders/z.vs": compile_glsl(VS, "vert"),
            "/shaders/z.fs": compile_glsl(FS, "frag"),
            "/shaders/shadow.vs": compile_glsl(SHADOW_VS, "vert"),
            "/shaders/shadow.fs": compile_glsl(SHADOW_FS, "frag"),
        },
        tmp_path,
    )
    assert r.returncode == 0, log[-3000:]
    lines = cpu_lines(log)
    assert lines[:3] == ["nvn entry points missing: 0", "depth storage: 16384 bytes", "sync: 1"], log[-3000:]
    assert lines[-1] == "done"
    want_img, want_depth, want_stencil = expected()
    got = read_frame(frames / "frame_000001.png").astype(int)
    bad = np.argwhere(np.abs(got - want_img.astype(int)).max(-1) > 1)
    assert not len(bad), (
        f"{len(bad)} pixels differ, first at (y, x) {tuple(bad[0])}: {got[tuple(bad[0])]} != {want_img[tuple(bad[0])]}"
    )
    # the depth target's storage: D24S8 texels, depth24 | stencil << 24, written back by the GPU
    # process before the fence signalled
    read = {}
    for line in lines:
        m = re.fullmatch(r"depth \((\d+), (\d+)\): ([0-9a-f]+)", line)
        if m:
            read[(int(m[1]), int(m[2]))] = int(m[3], 16)
    assert sorted(read) == sorted(PIXELS), lines
    for (x, y), v in read.items():
        z24 = round(want_depth[y, x] * 0xFFFFFF)
        assert v >> 24 == want_stencil[y, x] and abs((v & 0xFFFFFF) - z24) <= 1, (
            f"pixel ({x}, {y}): {v:#x}, expected depth {want_depth[y, x]} ({z24:#x}) stencil {want_stencil[y, x]}"
        )
    # frame 2: the compare sampler's result, 1 where 0.6 < depth (LESS: reference < texel; no depth is
    # near 0.6, so D24's rounding cannot flip one)
    shadow = read_frame(frames / "frame_000002.png")
    assert np.array_equal(shadow[..., 0], np.where(0.6 < want_depth, 255, 0))
    assert not shadow[..., 1:3].any() and (shadow[..., 3] == 255).all()


CUBE_VS = """#version 450
layout(location=0) in vec2 pos;
void main() { gl_Position = vec4(pos, 0.0, 1.0); }"""
# Pixel (x, y) of the 24x4 window: face x / 4, texel (x % 4, y); the direction is the inverse of the
# Vulkan spec's cube face table (major axis, sc, tc) at that texel's centre.
CUBE_FS = """#version 450
layout(set=0, binding=4) uniform samplerCube tex;
layout(location=0) out vec4 o;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    int face = p.x / 4;
    float sc = 2.0 * (float(p.x % 4) + 0.5) / 4.0 - 1.0, tc = 2.0 * (float(p.y) + 0.5) / 4.0 - 1.0;
    vec3 d = face == 0 ? vec3(1.0, -tc, -sc) : face == 1 ? vec3(-1.0, -tc, sc) : face == 2 ? vec3(sc, 1.0, tc)
           : face == 3 ? vec3(sc, -1.0, -tc) : face == 4 ? vec3(sc, -tc, 1.0) : vec3(-sc, -tc, -1.0);
    o = texture(tex, d);
}"""

CUBE_C = r"""
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture win_tex, cube;
static NVNsampler nearest;
static NVNtexturePool tpool;
static NVNsamplerPool spool;
static NVNprogram prog;
static NVNwindow window;
static uint8_t pool_mem[128 * 1024] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_CUBE = 0x1000, OFF_SHADERS = 0x8000, OFF_TPOOL = 0x18000, OFF_SPOOL = 0x19000 };
static const float rect[12] = {-1, -1, 1, -1, 1, 1, -1, -1, 1, 1, -1, 1};

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    hz_printf("nvn entry points missing: %d\n", nvn_load_procs(&nvn));
    nvnu_device_and_pool(&nvn, &dev, &pool, pool_mem, sizeof pool_mem);
    memcpy(pool_mem + OFF_VERTS, rect, sizeof rect);

    NVNtextureBuilder tb;
    nvn.nvnTextureBuilderSetDefaults(&tb);
    nvn.nvnTextureBuilderSetDevice(&tb, &dev);
    nvn.nvnTextureBuilderSetTarget(&tb, NVN_TEXTURE_TARGET_CUBEMAP);
    nvn.nvnTextureBuilderSetFormat(&tb, NVN_FORMAT_RGBA8);
    nvn.nvnTextureBuilderSetSize2D(&tb, 4, 4);
    nvn.nvnTextureBuilderSetStorage(&tb, &pool, OFF_CUBE);
    int bh = nvn.nvnTextureBuilderGetBlockHeightLog2(&tb);
    size_t layer = nvn.nvnTextureBuilderGetStorageSize(&tb) / 6;
    hz_printf("cube storage: %d bytes\n", (int)(layer * 6));
    for (uint32_t f = 0; f < 6; f++)
        for (uint32_t y = 0; y < 4; y++)
            for (uint32_t x = 0; x < 4; x++) {
                uint8_t *p = pool_mem + OFF_CUBE + f * layer + nvnu_block_linear_offset(x * 4, y, 16, bh);
                p[0] = (uint8_t)(f * 40 + 10); p[1] = (uint8_t)(x * 60 + 5); p[2] = (uint8_t)(y * 60 + 7); p[3] = 255;
            }
    nvn.nvnTextureInitialize(&cube, &tb);
    nvnu_texture(&nvn, &dev, &pool, &win_tex, NVN_FORMAT_RGBA8, 24, 4, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    NVNsamplerBuilder sb;
    nvn.nvnSamplerBuilderSetDefaults(&sb);
    nvn.nvnSamplerBuilderSetDevice(&sb, &dev);
    nvn.nvnSamplerBuilderSetMinMagFilter(&sb, NVN_FILTER_NEAREST, NVN_FILTER_NEAREST);
    nvn.nvnSamplerInitialize(&nearest, &sb);
    nvn.nvnTexturePoolInitialize(&tpool, &pool, OFF_TPOOL, 16);
    nvn.nvnSamplerPoolInitialize(&spool, &pool, OFF_SPOOL, 16);
    nvn.nvnTexturePoolRegisterTexture(&tpool, 1, &cube, 0);
    nvn.nvnSamplerPoolRegisterSampler(&spool, 1, &nearest);

    static NVNshaderControl ctl[2];
    uint32_t off = OFF_SHADERS;
    nvnu_program(&nvn, &dev, &pool, pool_mem, &off, &prog, ctl, "rom:/shaders/cube.vs", "rom:/shaders/cube.fs", NVN_SHADER_ARCH_SPIRV);

    NVNqueueBuilder qb;
    nvn.nvnQueueBuilderSetDefaults(&qb);
    nvn.nvnQueueBuilderSetDevice(&qb, &dev);
    nvn.nvnQueueInitialize(&queue, &qb);
    nvn.nvnCommandBufferInitialize(&cmd, &dev);
    NVNwindowBuilder wb;
    NVNtexture *wt[1] = {&win_tex};
    nvn.nvnWindowBuilderSetDefaults(&wb);
    nvn.nvnWindowBuilderSetDevice(&wb, &dev);
    nvn.nvnWindowBuilderSetTextures(&wb, 1, wt);
    nvn.nvnWindowInitialize(&window, &wb);
    NVNvertexAttribState pos[1] = {{NVN_ATTR_FLOAT2, 0, 0, 0}};
    NVNvertexStreamState s8 = {8, 0};
    int index = 0;
    nvn.nvnWindowAcquireTexture(&window, 0, &index);
    NVNtexture *colour[1] = {&win_tex};
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, colour, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, 24, 4);
    nvn.nvnCommandBufferBindProgram(&cmd, &prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, pos);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s8);
    nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, 0, nvn.nvnDeviceGetTextureHandle(&dev, 1, 1));
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, nvn.nvnMemoryPoolGetBufferAddress(&pool) + OFF_VERTS, sizeof rect);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueuePresentTexture(&queue, &window, index);
    nvn.nvnQueueFinish(&queue);
    hz_printf("done\n");
    return 0;
}
"""


def test_cube_texture_through_the_split_runtime(tmp_path) -> None:
    """A cube texture the guest writes face by face (block-linear, layers one after another) and
    samples with a samplerCube: each pixel is the texel its direction names."""
    r, log, frames = run_guest_c(
        CUBE_C, {"/shaders/cube.vs": compile_glsl(CUBE_VS, "vert"), "/shaders/cube.fs": compile_glsl(CUBE_FS, "frag")}, tmp_path
    )
    assert r.returncode == 0, log[-3000:]
    assert cpu_lines(log) == ["nvn entry points missing: 0", "cube storage: 3072 bytes", "done"], log[-3000:]
    got = read_frame(frames / "frame_000001.png")
    ys, xs = np.mgrid[0:4, 0:24]
    want = np.stack([(xs // 4) * 40 + 10, (xs % 4) * 60 + 5, ys * 60 + 7, np.full_like(xs, 255)], -1)
    assert np.array_equal(got, want.astype(np.uint8))


MISUSE_C = r"""
#include "hz_sdk.h"
#include "nvn.h"
static NvnProcs nvn;
int hz_main(void) {
    nvn_load_procs(&nvn);
    NVNdepthStencilState ds;
    nvn.nvnDepthStencilStateSetDefaults(&ds);
    hz_printf("defaults %d %d %d %d\n", (int)ds.depth_test, (int)ds.depth_write, (int)ds.depth_func, (int)ds.front[3]);
    nvn.nvnDepthStencilStateSetStencilOp(&ds, NVN_FACE_BACK, NVN_STENCIL_OP_ZERO, NVN_STENCIL_OP_INVERT,
                                         NVN_STENCIL_OP_INCR_WRAP);
    hz_printf("back ops %d %d %d, front ops %d %d %d\n", (int)ds.back[0], (int)ds.back[1], (int)ds.back[2],
              (int)ds.front[0], (int)ds.front[1], (int)ds.front[2]);
    nvn.nvnDepthStencilStateSetDepthFunc(&ds, 9);
    hz_printf("not reached\n");
    return 0;
}
"""


def test_state_misuse_is_a_named_crash(tmp_path) -> None:
    """The state functions fill our structures (read back by the guest), and an unknown compare
    op ends the guest with a report naming the function and the value, at the guest's call."""
    from examples.horizon_hello.build_exefs import build_exefs
    from recompiler.horizon import recompile_exefs

    src = tmp_path / "misuse.c"
    src.write_text(MISUSE_C)
    recompile_exefs(build_exefs(src, tmp_path / "exefs"), tmp_path / "bundle")
    r = nxrecomp("hz-run", str(tmp_path / "bundle"), timeout=120)
    assert r.returncode == 134, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == "defaults 0 1 1 7\nback ops 1 5 6, front ops 0 0 0\n", r.stdout
    lines = r.stderr.strip().splitlines()
    assert "host function nvnDepthStencilStateSetDepthFunc: " in lines[0] and "value 9 is not in 0..7" in lines[0], r.stderr[
        -2000:
    ]
    assert "main+" in lines[1] and "hz_main" in lines[1], lines[1]
