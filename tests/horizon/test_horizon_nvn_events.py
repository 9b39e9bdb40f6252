"""NVN events through the whole split runtime: a guest program of our own (below, built with our
guest SDK) (1) has command buffers signal an event (WRITE, then ADD) and polls nvnEventGetValue
until the GPU process's write shows, then adds from the CPU with nvnEventSignal; (2) flushes a
command buffer that waits on a second event, goes on (reads the event: still 0), writes the
uniform block the draw after the wait reads, signals the event from the CPU, waits on a sync
fenced after the frame, and the presented frame shows the draw before the wait and the one after
it (in the colour the CPU wrote after the flush).  Expected values are plain u32 arithmetic;
pixels are numpy slices of rectangles with edges on pixel boundaries."""

from __future__ import annotations

import numpy as np

from cpu_host.gpu_client.shaders import compile_glsl
from tests.horizon.hz_build import run_guest_c
from tests.horizon.test_horizon_nvn import cpu_lines, read_frame
from tests.horizon.test_horizon_nvn_depth import FS, VS

W = 32
RECT_BEFORE = (4, 4, 16, 16)  # x0, y0, x1, y1: drawn before the wait, green
RECT_AFTER = (12, 20, 28, 28)  # drawn after it, with the uniform the CPU rewrote (blue)


def quad(x0, y0, x1, y1) -> str:
    def px(v):
        return f"{2.0 * v / W - 1.0:.6f}f"

    pts = [(x0, y0), (x0, y1), (x1, y1), (x0, y0), (x1, y1), (x1, y0)]
    return "{" + ", ".join(f"{px(x)}, {px(y)}, 0.5f" for x, y in pts) + "}"


EVENTS_C = r"""
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

#define W @W@
static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture win_tex[2];
static NVNprogram prog;
static NVNwindow window;
static NVNsync done;
static NVNevent ev_a, ev_b;
static uint8_t pool_mem[128 * 1024] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_UBO = 0x1000, OFF_EVENTS = 0x2000, OFF_SHADERS = 0x10000 };
static const float verts[2][18] = {@BEFORE@, @AFTER@};
static const float green[4] = {0, 1, 0, 1}, red[4] = {1, 0, 0, 1}, blue[4] = {0, 0, 1, 1}, black[4] = {0, 0, 0, 1};

static uint32_t poll_until_not(NVNevent *ev, uint32_t old) {
    uint32_t v = old;
    for (int i = 0; i < 2000 && v == old; i++) {     /* at most ~20 s */
        v = nvn.nvnEventGetValue(ev);
        if (v == old) nnosSleepThread(10000000);
    }
    return v;
}

static void signal_from_gpu(int mode, uint32_t value) {
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSignalEvent(&cmd, &ev_a, mode, NVN_EVENT_SIGNAL_LOCATION_BOTTOM, 0, value);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueueFlush(&queue);
}

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    hz_printf("nvn entry points missing: %d\n", nvn_load_procs(&nvn));
    nvnu_device_and_pool(&nvn, &dev, &pool, pool_mem, sizeof pool_mem);
    memcpy(pool_mem + OFF_VERTS, verts, sizeof verts);
    memcpy(pool_mem + OFF_UBO, green, 16);
    memcpy(pool_mem + OFF_UBO + 0x100, red, 16);
    NVNeventBuilder eb;
    nvn.nvnEventBuilderSetDefaults(&eb);
    nvn.nvnEventBuilderSetStorage(&eb, &pool, OFF_EVENTS);
    nvn.nvnEventInitialize(&ev_a, &eb);
    nvn.nvnEventBuilderSetStorage(&eb, &pool, OFF_EVENTS + 4);
    nvn.nvnEventInitialize(&ev_b, &eb);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[0], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[1], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);

    static NVNshaderControl ctl[2];
    uint32_t off = OFF_SHADERS;
    nvnu_program(&nvn, &dev, &pool, pool_mem, &off, &prog, ctl, "rom:/shaders/z.vs", "rom:/shaders/z.fs", NVN_SHADER_ARCH_SPIRV);
    nvnu_queue_and_window(&nvn, &dev, &queue, &cmd, &done, &window, &win_tex[0], &win_tex[1]);

    /* (1) the GPU signals, the CPU polls */
    hz_printf("event a: %u\n", nvn.nvnEventGetValue(&ev_a));
    signal_from_gpu(NVN_EVENT_SIGNAL_MODE_WRITE, 0xFFFFFFF0u);
    hz_printf("event a: %x\n", poll_until_not(&ev_a, 0));
    signal_from_gpu(NVN_EVENT_SIGNAL_MODE_ADD, 0x15);                 /* wraps past 2^32 */
    hz_printf("event a: %x\n", poll_until_not(&ev_a, 0xFFFFFFF0u));
    nvn.nvnEventSignal(&ev_a, NVN_EVENT_SIGNAL_MODE_ADD, 0xFFFFFFFFu);   /* minus one, from the CPU */
    hz_printf("event a: %x\n", nvn.nvnEventGetValue(&ev_a));

    /* (2) a command buffer that waits on ev_b, which the CPU signals after the flush */
    NVNvertexAttribState pos[1] = {{NVN_ATTR_FLOAT3, 0, 0, 0}};
    NVNvertexStreamState s12 = {12, 0};
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);
    int index = 0;
    nvn.nvnWindowAcquireTexture(&window, 0, &index);
    NVNtexture *colour[1] = {&win_tex[index]};
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, colour, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferClearColor(&cmd, 0, black, 0xF);
    nvn.nvnCommandBufferBindProgram(&cmd, &prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, pos);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s12);
    nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO, 16);
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS, 72);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    nvn.nvnCommandBufferWaitEvent(&cmd, &ev_b, NVN_EVENT_WAIT_MODE_GEQUAL_WRAP, 1);
    nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO + 0x100, 16);
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + 72, 72);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueuePresentTexture(&queue, &window, index);
    nvn.nvnQueueFenceSync(&queue, &done, 0, 0);
    nvn.nvnQueueFlush(&queue);
    hz_printf("flushed, event b: %u\n", nvn.nvnEventGetValue(&ev_b));
    nnosSleepThread(200000000);                   /* the GPU is waiting meanwhile */
    hz_printf("sync before the signal: %d\n", nvn.nvnSyncWait(&done, 0));
    memcpy(pool_mem + OFF_UBO + 0x100, blue, 16);  /* the data of the draw after the wait, then the signal */
    nvn.nvnEventSignal(&ev_b, NVN_EVENT_SIGNAL_MODE_WRITE, 1);
    hz_printf("sync: %d\n", nvn.nvnSyncWait(&done, 10000000000ull));
    hz_printf("done\n");
    return 0;
}
"""


def test_events_through_the_split_runtime(tmp_path) -> None:
    r, log, frames = run_guest_c(
        EVENTS_C.replace("@W@", str(W)).replace("@BEFORE@", quad(*RECT_BEFORE)).replace("@AFTER@", quad(*RECT_AFTER)),
        {"/shaders/z.vs": compile_glsl(VS, "vert"), "/shaders/z.fs": compile_glsl(FS, "frag")},
        tmp_path,
    )
    assert r.returncode == 0, log[-3000:]
    a = 0xFFFFFFF0
    b = (a + 0x15) & 0xFFFFFFFF
    c = (b + 0xFFFFFFFF) & 0xFFFFFFFF
    assert cpu_lines(log) == [
        "nvn entry points missing: 0",
        "event a: 0",
        f"event a: {a:x}",
        f"event a: {b:x}",
        f"event a: {c:x}",
        "flushed, event b: 0",
        "sync before the signal: 2",  # NVN_SYNC_TIMEOUT_EXPIRED: the GPU waits
        "sync: 1",
        "done",
    ], log[-3000:]
    want = np.zeros((W, W, 4), np.uint8)
    want[..., 3] = 255
    x0, y0, x1, y1 = RECT_BEFORE
    want[y0:y1, x0:x1] = (0, 255, 0, 255)
    x0, y0, x1, y1 = RECT_AFTER
    want[y0:y1, x0:x1] = (0, 0, 255, 255)
    got = read_frame(frames / "frame_000001.png")
    bad = np.argwhere((got != want).any(-1))
    assert not len(bad), (
        f"{len(bad)} pixels differ, first at (y, x) {tuple(bad[0])}: {got[tuple(bad[0])]} != {want[tuple(bad[0])]}"
    )
