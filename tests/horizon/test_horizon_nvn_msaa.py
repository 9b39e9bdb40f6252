"""An anti-aliased triangle through the whole split runtime: a guest program of our own (below,
built with our guest SDK) makes a 4-sample render target (nvnTextureBuilderSetSamples), binds a
4-sample multisample state, draws a triangle whose edges cross pixels, resolves it with
nvnCommandBufferDownsample into the window texture and presents that.

The oracle is the Vulkan specification's table of standard sample locations (4 samples: (0.375,
0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875) within the pixel): numpy decides which
samples the triangle covers and each presented pixel must be the mean of its samples' 8-bit
colours, within 1/255.  The vertices lie on a 1/16 pixel grid and every sample stays more than
0.01 px from every edge, so the rasterizer's tie rules never decide a sample."""

from __future__ import annotations

import numpy as np

from cpu_host.gpu_client.shaders import compile_glsl
from tests.horizon.hz_build import run_guest_c
from tests.horizon.test_horizon_nvn import cpu_lines, read_frame

W = 32
STD4 = np.array([(0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875)])
TRI = np.array([(2.4375, 3.8125), (29.4375, 7.0), (12.0625, 21.4375)])  # pixels, y down
FG, BG = (1.0, 0.5, 0.25, 1.0), (0.0, 0.2, 0.6, 1.0)

VS = """#version 450
layout(location=0) in vec2 pos;
void main() { gl_Position = vec4(pos, 0.0, 1.0); }"""
FS = """#version 450
layout(location=0) out vec4 o;
void main() { o = vec4(1.0, 0.5, 0.25, 1.0); }"""

MSAA_C = r"""
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
static NVNtexture win_tex[2], ms_tex;
static NVNprogram prog;
static NVNwindow window;
static NVNsync done;
static uint8_t pool_mem[128 * 1024] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_SHADERS = 0x10000 };
static const float verts[6] = {@VERTS@};
static const float bg[4] = {@BG@};

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    hz_printf("nvn entry points missing: %d\n", nvn_load_procs(&nvn));
    nvnu_device_and_pool(&nvn, &dev, &pool, pool_mem, sizeof pool_mem);
    memcpy(pool_mem + OFF_VERTS, verts, sizeof verts);
    hz_printf("ms texture: %d\n", nvnu_texture_ms(&nvn, &dev, &ms_tex, NVN_FORMAT_RGBA8, W, W, 4));
    nvnu_texture(&nvn, &dev, &pool, &win_tex[0], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[1], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    static NVNshaderControl ctl[2];
    uint32_t off = OFF_SHADERS;
    nvnu_program(&nvn, &dev, &pool, pool_mem, &off, &prog, ctl, "rom:/shaders/tri.vs", "rom:/shaders/tri.fs", NVN_SHADER_ARCH_SPIRV);
    nvnu_queue_and_window(&nvn, &dev, &queue, &cmd, &done, &window, &win_tex[0], &win_tex[1]);

    NVNmultisampleState ms;
    nvn.nvnMultisampleStateSetDefaults(&ms);
    nvn.nvnMultisampleStateSetSamples(&ms, 4);
    NVNvertexAttribState pos[1] = {{NVN_ATTR_FLOAT2, 0, 0, 0}};
    NVNvertexStreamState s8 = {8, 0};
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);
    NVNtexture *targets[1] = {&ms_tex};
    int index = 0;
    nvn.nvnWindowAcquireTexture(&window, 0, &index);
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, targets, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferClearColor(&cmd, 0, bg, 0xF);
    nvn.nvnCommandBufferBindMultisampleState(&cmd, &ms);
    nvn.nvnCommandBufferBindProgram(&cmd, &prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, pos);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s8);
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS, sizeof verts);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 3);
    nvn.nvnCommandBufferDownsample(&cmd, &ms_tex, &win_tex[index]);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueuePresentTexture(&queue, &window, index);
    nvn.nvnQueueFinish(&queue);
    hz_printf("done\n");
    return 0;
}
"""


def c_program() -> str:
    verts = ", ".join(f"{2.0 * v / W - 1.0:.8f}f" for p in TRI for v in p)
    return MSAA_C.replace("@VERTS@", verts).replace("@BG@", ", ".join(f"{v:.6f}f" for v in BG))


def coverage(locs: np.ndarray) -> np.ndarray:
    """(W, W, samples): which samples the triangle covers; no sample within 0.01 px of an edge."""
    ys, xs = np.mgrid[0:W, 0:W]
    px, py = xs[..., None] + locs[:, 0], ys[..., None] + locs[:, 1]
    es = []
    for i in range(3):
        a, b = TRI[i], TRI[(i + 1) % 3]
        e = (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0])
        assert np.abs(e).min() / np.hypot(*(b - a)) > 0.01, "a sample lies on an edge: the oracle is ambiguous"
        es.append(e)
    return ((es[0] > 0) & (es[1] > 0) & (es[2] > 0)) | ((es[0] < 0) & (es[1] < 0) & (es[2] < 0))


def q8(v) -> np.ndarray:
    return np.round(np.clip(np.asarray(v, np.float64), 0, 1) * 255)


def resolved(locs: np.ndarray) -> np.ndarray:
    cov = coverage(locs).astype(np.float64)[..., None]
    return (cov * q8(FG) + (1 - cov) * q8(BG)).mean(axis=2)


def test_antialiased_triangle_through_the_split_runtime(tmp_path) -> None:
    r, log, frames = run_guest_c(
        c_program(), {"/shaders/tri.vs": compile_glsl(VS, "vert"), "/shaders/tri.fs": compile_glsl(FS, "frag")}, tmp_path
    )
    assert r.returncode == 0, log[-3000:]
    assert cpu_lines(log) == ["nvn entry points missing: 0", "ms texture: 1", "done"], log[-3000:]
    got = read_frame(frames / "frame_000001.png").astype(np.float64)
    want = resolved(STD4)
    cov = coverage(STD4)
    partial = cov.any(axis=2) & ~cov.all(axis=2)
    assert partial.sum() > 20
    bad = np.argwhere(np.abs(got - want).max(-1) > 1.0)
    assert not len(bad), (
        f"{len(bad)} pixels differ, first at (y, x) {tuple(bad[0])}: {got[tuple(bad[0])]} != {want[tuple(bad[0])]}"
    )
    # anti-aliased: the edge pixels are not what one sample at the pixel centre gives
    single = resolved(np.array([(0.5, 0.5)]))
    assert (np.abs(single - got)[partial].max(axis=1) > 8).mean() > 0.9
