/* readback: the GPU's pixels read by the CPU.  A render target with storage in a memory pool
 * is drawn into (cleared, a rectangle), the submission is fenced, and once the sync is
 * signalled the program reads the pixels straight from the pool memory, in the block-linear
 * layout.  Rule: a render target's storage holds what was rendered once its fence signalled. */
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

#define W 64
#define PX(x) (2.0f * (x) / W - 1.0f)
static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture target;
static NVNprogram prog;
static NVNsync done;
static uint8_t pool_mem[256 * 1024] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_UBO = 0x1000, OFF_TARGET = 0x4000, OFF_SHADERS = 0x20000 };
/* x 13..47, y 5..39: edges inside GOBs and inside their 16-byte lines, so a reader whose GOB
 * layout differs from the writer's finds green outside the rectangle */
static const float rect[12] = {PX(13), PX(5), PX(48), PX(5), PX(48), PX(40), PX(13), PX(5), PX(48), PX(40), PX(13), PX(40)};
static const float ubo[12] = {0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
static const float clear[4] = {1, 0, 0, 1};


static void pixel(int x, int y, int bh) {
    const uint8_t *p = pool_mem + OFF_TARGET + nvnu_block_linear_offset((uint32_t)x * 4, (uint32_t)y, W * 4, bh);
    hz_printf("pixel (%d, %d): %d %d %d %d\n", x, y, p[0], p[1], p[2], p[3]);
}

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    nvn_load_procs(&nvn);
    NVNdeviceBuilder db;
    nvn.nvnDeviceBuilderSetDefaults(&db);
    nvn.nvnDeviceInitialize(&dev, &db);
    NVNmemoryPoolBuilder pb;
    nvn.nvnMemoryPoolBuilderSetDefaults(&pb);
    nvn.nvnMemoryPoolBuilderSetDevice(&pb, &dev);
    nvn.nvnMemoryPoolBuilderSetStorage(&pb, pool_mem, sizeof pool_mem);
    nvn.nvnMemoryPoolInitialize(&pool, &pb);
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);
    memcpy(pool_mem + OFF_VERTS, rect, sizeof rect);
    memcpy(pool_mem + OFF_UBO, ubo, sizeof ubo);
    memset(pool_mem + OFF_TARGET, 0x55, 0x4000);          /* what is there before the GPU writes */
    nvnu_texture(&nvn, &dev, &pool, &target, NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_RENDER_TARGET, OFF_TARGET);
    NVNtextureBuilder tb;
    nvn.nvnTextureBuilderSetDefaults(&tb);
    nvn.nvnTextureBuilderSetFormat(&tb, NVN_FORMAT_RGBA8);
    nvn.nvnTextureBuilderSetSize2D(&tb, W, W);
    int bh = nvn.nvnTextureBuilderGetBlockHeightLog2(&tb);
    static NVNshaderControl ctl[2];
    NVNshaderData sd[2];
    int arch = nvnu_shader_arch();
    uint32_t off = OFF_SHADERS;
    sd[0].data = base + off; sd[0].control = &ctl[0];
    off += nvnu_load_shader("rom:/shaders/color.vs", pool_mem + off, &ctl[0], NVN_STAGE_VERTEX, arch);
    sd[1].data = base + off; sd[1].control = &ctl[1];
    off += nvnu_load_shader("rom:/shaders/color.fs", pool_mem + off, &ctl[1], NVN_STAGE_FRAGMENT, arch);
    nvn.nvnProgramInitialize(&prog, &dev);
    nvn.nvnProgramSetShaders(&prog, 2, sd);
    NVNqueueBuilder qb;
    nvn.nvnQueueBuilderSetDefaults(&qb);
    nvn.nvnQueueBuilderSetDevice(&qb, &dev);
    nvn.nvnQueueInitialize(&queue, &qb);
    nvn.nvnCommandBufferInitialize(&cmd, &dev);
    nvn.nvnSyncInitialize(&done, &dev);

    NVNtexture *targets[1] = {&target};
    NVNvertexAttribState attr = {NVN_ATTR_FLOAT2, 0, 0, 0};
    NVNvertexStreamState stream = {8, 0};
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, targets, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferClearColor(&cmd, 0, clear, 0xF);
    nvn.nvnCommandBufferBindProgram(&cmd, &prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, &attr);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &stream);
    nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO, 48);
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS, 48);
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueueFenceSync(&queue, &done, 0, 0);
    nvn.nvnQueueFlush(&queue);
    hz_printf("rule: a render target's storage holds what was rendered once its fence signalled\n");
    hz_printf("sync: %d\n", nvn.nvnSyncWait(&done, 10000000000ull) != NVN_SYNC_TIMEOUT_EXPIRED);
    pixel(0, 0, bh);      /* the clear colour */
    pixel(20, 10, bh);    /* inside the rectangle */
    pixel(47, 39, bh);
    pixel(48, 39, bh);    /* just outside */
    pixel(63, 63, bh);
    /* every pixel, read at the address this build's GOB layout gives it: a layout that differs
     * from the GPU's in any byte puts green pixels outside the rectangle */
    int green = 0, inside = 0;
    for (int y = 0; y < W; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *p = pool_mem + OFF_TARGET + nvnu_block_linear_offset((uint32_t)x * 4, (uint32_t)y, W * 4, bh);
            if (p[0] == 0 && p[1] == 255 && p[2] == 0 && p[3] == 255) {
                green++;
                inside += x >= 13 && x < 48 && y >= 5 && y < 40;
            }
        }
    hz_printf("green pixels: %d, inside the rectangle: %d\n", green, inside);
    return 0;
}
