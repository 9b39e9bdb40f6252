"""A framebuffer queued over vi + binder + nvdrv, as libnx's framebufferCreate/Begin/End do it,
from a guest that writes the parcels from the public layout (libnx display/parcel.c,
buffer_producer.c, nvidia/graphic_buffer.h; Android's Parcel): the queued frame comes out as
a PNG (settings cpu_host.framebuffer_dir) with the guest's pixels."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.horizon.hz_build import ROOT, bundle_from_c

# The setup libnx's framebufferCreate does, as raw IPC: vi display service, relay, a stray layer;
# nvdrv + nvmap objects in the heap; binder CONNECT and SET_PREALLOCATED_BUFFER of slot 0 (64x16
# pitch-linear, pitch 256, at fb) and slot 1 (the same size block-linear with 16-GOB blocks, at
# fb2).  Shared with test_framebuffer_present.py, which queues frames through the GPU process.
FB_SETUP = r"""
static uint8_t inparcel[0x200] __attribute__((aligned(16))), outparcel[0x200] __attribute__((aligned(16)));
static uint32_t pw;                        /* payload words written */
static void p32(uint32_t v) { memcpy(inparcel + 0x10 + pw * 4, &v, 4); pw++; }
static void ptoken(void) {
    static const char t[] = "android.gui.IGraphicBufferProducer";
    uint32_t n = sizeof t - 1;
    p32(0x100); p32(n);
    uint16_t *s = (uint16_t *)(inparcel + 0x10 + pw * 4);
    for (uint32_t i = 0; i <= n; i++) s[i] = (uint16_t)t[i];
    pw += ((n + 1) * 2 + 3) / 4;
}
static Handle relay;
static int32_t binder_id;
/* TransactParcel (IHOSBinderDriver 0): s32 binder, u32 code, u32 flags; A: parcel in, B: parcel out */
static Result transact(uint32_t code) {
    uint32_t hdr[4] = {pw * 4, 0x10, 0, 0x10 + pw * 4};
    memcpy(inparcel, hdr, 16);
    memset(outparcel, 0, sizeof outparcel);
    struct { int32_t id; uint32_t code, flags; } in = {binder_id, code, 0};
    Msg m = {.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)inparcel}, .a_size = {0x10 + pw * 4},
             .nb = 1, .b_addr = {(uint64_t)(uintptr_t)outparcel}, .b_size = {sizeof outparcel}};
    build(&m, 0, &in, sizeof in, 0);
    Reply r;
    Result rc = call(relay, &r, 0, 0);
    pw = 0;
    return rc ? rc : r.result;
}
static uint32_t out32(uint32_t word) { return u32at(outparcel + u32at(outparcel + 4) + word * 4); }

static void fb_setup(uint8_t **fb_out, uint8_t **fb2_out, uint64_t *disp_out, Handle *ads_out) {
    Reply r;
    Msg m;
    uint64_t zero = 0;
    svcConnectToNamedPort(&sm, "sm:");
    m = (Msg){.type = 4, .send_pid = 1};
    build(&m, 0, &zero, 8, 0);
    call(sm, &r, 0, 0);
    /* vi: display service, relay, default display, a stray layer's native window */
    Handle vi = get_service("vi:u");
    uint32_t policy = 0;
    m = (Msg){.type = 4};
    build(&m, 0, &policy, 4, 0);
    call(vi, &r, 0, 0);
    Handle ads = r.move[0];
    m = (Msg){.type = 4};
    build(&m, 100, 0, 0, 0);
    call(ads, &r, 0, 0);
    relay = r.move[0];
    static char dname[0x40] = "Default";
    m = (Msg){.type = 4};
    build(&m, 1010, dname, 0x40, 0);
    call(ads, &r, 0, 8);
    uint64_t disp = u64at(r.data);
    static uint8_t nw[0x100] __attribute__((aligned(8)));
    struct { uint32_t flags, pad; uint64_t display; } cs = {0, 0, disp};
    m = (Msg){.type = 4, .nb = 1, .b_addr = {(uint64_t)(uintptr_t)nw}, .b_size = {0x100}};
    build(&m, 2030, &cs, sizeof cs, 0);
    Result rc = call(ads, &r, 0, 16);
    binder_id = (int32_t)u32at(nw + u32at(nw + 4) + 8);
    hz_printf("CreateStrayLayer: %x binder nonzero %d\n", rc, binder_id != 0);

    /* nvdrv + nvmap: a 64x16 RGBA buffer (pitch 256) in the heap */
    void *heap;
    svcSetHeapSize(&heap, 0x200000);
    uint8_t *hp = heap;
    Handle nvs = get_service("nvdrv");
    Handle tm;
    svcCreateTransferMemory(&tm, hp + 0x100000, 0x10000, 0);
    uint32_t tsize = 0x10000;
    m = (Msg){.type = 4, .ncopy = 2, .copy = {0xFFFF8001u, tm}};
    build(&m, 3, &tsize, 4, 0);
    call(nvs, &r, 0, 4);
    static const char nvmap_path[] = "/dev/nvmap";
    m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)nvmap_path}, .a_size = {sizeof nvmap_path - 1}};
    build(&m, 0, 0, 0, 0);
    call(nvs, &r, 0, 8);
    uint32_t fd = u32at(r.data);
    static uint32_t arg[8] __attribute__((aligned(16)));
    #define NV_IOCTL(req, n) do { struct { uint32_t f, q; } in_ = {fd, (req)}; \
        m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)arg}, .a_size = {(n)}, .nb = 1, \
                  .b_addr = {(uint64_t)(uintptr_t)arg}, .b_size = {(n)}}; \
        build(&m, 1, &in_, 8, 0); call(nvs, &r, 0, 4); } while (0)
    memset(arg, 0, sizeof arg); arg[0] = 0x4000;
    NV_IOCTL(0xC0080101u, 8);
    uint32_t h = arg[1];
    uint8_t *fb = hp + 0x40000;
    uint64_t fba = (uint64_t)(uintptr_t)fb;
    memset(arg, 0, sizeof arg); arg[0] = h; arg[2] = 1; arg[3] = 0x1000; memcpy(&arg[6], &fba, 8);
    NV_IOCTL(0xC0200104u, 0x20);
    memset(arg, 0, sizeof arg); arg[1] = h;
    NV_IOCTL(0xC008010Eu, 8);
    uint32_t nvmap_id = arg[0];

    /* binder: CONNECT, SET_PREALLOCATED_BUFFER(slot 0, GBFR + NvGraphicBuffer ints) */
    ptoken(); p32(0); p32(2); p32(0);
    rc = transact(10);
    hz_printf("CONNECT: %x status %d\n", rc, (int32_t)out32(4));
    static uint8_t nvgb[0x150];                       /* NvGraphicBuffer (its header: 0xC bytes) */
    memset(nvgb, 0, sizeof nvgb);
    uint32_t w = 64, hgt = 16, pitch = 256;
    memcpy(nvgb + 0x10, &nvmap_id, 4);
    uint32_t one = 1, layout_pitch = 1;
    memcpy(nvgb + 0x30, &w, 4);                       /* stride in pixels */
    memcpy(nvgb + 0x34, &(uint32_t){pitch * hgt}, 4); /* total size */
    memcpy(nvgb + 0x38, &one, 4);                     /* planes */
    memcpy(nvgb + 0x40 + 0x00, &w, 4);
    memcpy(nvgb + 0x40 + 0x04, &hgt, 4);
    memcpy(nvgb + 0x40 + 0x10, &layout_pitch, 4);
    memcpy(nvgb + 0x40 + 0x14, &pitch, 4);
    uint32_t nints = (sizeof nvgb - 0xC) / 4;
    ptoken(); p32(0); p32(1);
    p32(0x28 + nints * 4); p32(0);                    /* flattened: length, fd count */
    p32(0x47424652); p32(w); p32(hgt); p32(w); p32(1); p32(0xB00); p32(42); p32(0); p32(0); p32(nints);
    for (uint32_t i = 0; i < nints; i++) p32(u32at(nvgb + 0xC + i * 4));
    rc = transact(14);
    hz_printf("SET_PREALLOCATED_BUFFER: %x\n", rc);

    /* slot 1: the same size, block-linear (libnx framebufferCreate's layout: 16 GOBs a block) in
     * another nvmap object; GOB = 64 bytes x 8 rows, 512 bytes (Tegra X1 block-linear layout) */
    memset(arg, 0, sizeof arg); arg[0] = 0x20000;
    NV_IOCTL(0xC0080101u, 8);
    uint32_t h2 = arg[1];
    uint8_t *fb2 = hp + 0x80000;
    uint64_t fba2 = (uint64_t)(uintptr_t)fb2;
    memset(arg, 0, sizeof arg); arg[0] = h2; arg[2] = 1; arg[3] = 0x1000; memcpy(&arg[6], &fba2, 8);
    NV_IOCTL(0xC0200104u, 0x20);
    memset(arg, 0, sizeof arg); arg[1] = h2;
    NV_IOCTL(0xC008010Eu, 8);
    uint32_t nvmap_id2 = arg[0], layout_bl = 3, bhl = 4;
    memcpy(nvgb + 0x10, &nvmap_id2, 4);
    memcpy(nvgb + 0x40 + 0x10, &layout_bl, 4);
    memcpy(nvgb + 0x40 + 0x24, &bhl, 4);
    ptoken(); p32(1); p32(1);
    p32(0x28 + nints * 4); p32(0);
    p32(0x47424652); p32(w); p32(hgt); p32(w); p32(1); p32(0xB00); p32(42); p32(0); p32(0); p32(nints);
    for (uint32_t i = 0; i < nints; i++) p32(u32at(nvgb + 0xC + i * 4));
    rc = transact(14);
    *fb_out = fb;
    *fb2_out = fb2;
    *disp_out = disp;
    *ads_out = ads;
    hz_printf("SET_PREALLOCATED_BUFFER (block linear): %x\n", rc);
}

/* byte offset of linear byte xb of row y in a block-linear surface of pitch bytes, 16-GOB blocks
 * (GOB = 64 bytes x 8 rows, 512 bytes; Tegra X1 block-linear layout, Fermi GOB) */
static uint32_t bl_offset(uint32_t xb, uint32_t y, uint32_t pitch) {
    uint32_t gx = xb % 64, gy = y % 8;
    uint32_t in_gob = (gx / 32) * 256 + (gy / 2) * 64 + ((gx % 32) / 16) * 32 + (gy % 2) * 16 + gx % 16;
    return (y / 128) * ((pitch / 64) * 512 * 16) + (xb / 64) * (512 * 16) + ((y / 8) % 16) * 512 + in_gob;
}
"""

FB_MAIN = (
    FB_SETUP
    + r"""
int hz_main(void) {
    uint8_t *fb, *fb2;
    uint64_t disp;
    Handle ads;
    fb_setup(&fb, &fb2, &disp, &ads);
    Reply r;
    Msg m;
    Result rc;
    uint32_t w = 64, hgt = 16, pitch = 256;
    for (uint32_t y = 0; y < hgt; y++)
        for (uint32_t xb = 0; xb < w * 4; xb++) {
            uint32_t off = bl_offset(xb, y, pitch);
            uint32_t x = xb / 4, c = xb % 4;
            fb2[off] = c == 0 ? (uint8_t)(255 - x) : c == 1 ? (uint8_t)(y * 8) : c == 2 ? 0x40 : 0xFF;
        }

    /* DEQUEUE, draw, QUEUE */
    ptoken(); p32(0); p32(w); p32(hgt); p32(1); p32(0xB00);
    rc = transact(3);
    int32_t slot = (int32_t)out32(0);
    hz_printf("DEQUEUE_BUFFER: %x slot %d fence flag %d status %d\n", rc, slot, out32(1),
              (int32_t)out32(2 + 2 + 0x24 / 4));
    for (uint32_t y = 0; y < hgt; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *px = fb + y * pitch + x * 4;
            px[0] = (uint8_t)(x * 4); px[1] = (uint8_t)(y * 16); px[2] = 0x80; px[3] = 0xFF;
        }
    ptoken(); p32((uint32_t)slot); p32(0x54); p32(0);
    for (int i = 0; i < 0x54 / 4; i++) p32(0);
    rc = transact(7);
    hz_printf("QUEUE_BUFFER: %x size %dx%d status %d\n", rc, out32(0), out32(1), (int32_t)out32(4));
    ptoken(); p32(0);
    rc = transact(3);
    int32_t slot2 = (int32_t)out32(0);
    hz_printf("DEQUEUE_BUFFER again: %x slot %d\n", rc, slot2);
    ptoken(); p32((uint32_t)slot2); p32(0x54); p32(0);
    for (int i = 0; i < 0x54 / 4; i++) p32(0);
    rc = transact(7);
    hz_printf("QUEUE_BUFFER (block linear): %x status %d\n", rc, (int32_t)out32(4));
    for (int k = 0; k < 2; k++) { ptoken(); p32(0); transact(3); }
    ptoken(); p32(0); p32(w); p32(hgt); p32(1); p32(0xB00);
    rc = transact(3);
    hz_printf("DEQUEUE with every slot out: %x status %d\n", rc, (int32_t)out32(2));
    /* a parcel whose header overruns: BadValue */
    pw = 0; p32(0);
    uint32_t bad[4] = {0x1000, 0x10, 0, 0};
    memcpy(inparcel, bad, 16);
    struct { int32_t id; uint32_t code, flags; } in = {binder_id, 3, 0};
    m = (Msg){.type = 4, .na = 1, .a_addr = {(uint64_t)(uintptr_t)inparcel}, .a_size = {0x14},
              .nb = 1, .b_addr = {(uint64_t)(uintptr_t)outparcel}, .b_size = {sizeof outparcel}};
    build(&m, 0, &in, sizeof in, 0);
    rc = call(relay, &r, 0, 0);
    hz_printf("broken parcel: %x status %d\n", rc, (int32_t)out32(0));
    return 0;
}
"""
)


def test_framebuffer_queued_over_binder(tmp_path) -> None:
    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    src = src[: src.index("int hz_main(void)")] + FB_MAIN
    bundle = bundle_from_c(src, {}, tmp_path / "w")
    frames = tmp_path / "frames"
    env = {**os.environ, "NXRECOMP_CPU_HOST_FRAMEBUFFER_DIR": str(frames)}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "CreateStrayLayer: 0 binder nonzero 1",
        "CONNECT: 0 status 0",
        "SET_PREALLOCATED_BUFFER: 0",
        "SET_PREALLOCATED_BUFFER (block linear): 0",
        "DEQUEUE_BUFFER: 0 slot 0 fence flag 1 status 0",
        "QUEUE_BUFFER: 0 size 64x16 status 0",  # BqBufferOutput: the buffer's size
        "DEQUEUE_BUFFER again: 0 slot 1",  # the next free slot
        "QUEUE_BUFFER (block linear): 0 status 0",
        "DEQUEUE with every slot out: 0 status -11",  # WouldBlock
        "broken parcel: 0 status -22",  # BadValue
    ]
    from gpu_host import png

    w, h, px = png.decode((frames / "frame_000001.png").read_bytes())
    assert (w, h) == (64, 16)
    px = px.reshape(h, w, 4)
    for x, y in ((0, 0), (10, 3), (63, 15)):
        assert tuple(int(v) for v in px[y, x]) == ((x * 4) & 0xFF, (y * 16) & 0xFF, 0x80, 0xFF)
    w, h, px = png.decode((frames / "frame_000002.png").read_bytes())  # the block-linear one
    px = px.reshape(h, w, 4)
    for x, y in ((0, 0), (17, 9), (63, 15)):
        assert tuple(int(v) for v in px[y, x]) == (255 - x, (y * 8) & 0xFF, 0x40, 0xFF)
