/* gfx: draws frames through the NVN front end.  Each frame (64x64, two window textures
 * presented in turn): a render-to-texture pass (32x32 target: cleared blue, left half red),
 * then the window: cleared to the frame's colour; a rectangle whose colour comes from a
 * uniform buffer rewritten every frame; three instances of a green rectangle stepped by the
 * instance index; an indexed quad sampling an RGBA8 checker and one sampling an RGB565 ramp,
 * both written by this program in the block-linear layout; the render target sampled 1:1.
 * The number of frames comes from rom:/config/frames (decimal text; 6 without it).
 * Shaders (SPIR-V, or SM86/SM53 code translated by the shader service) come from the RomFS.
 * tests/horizon/test_horizon_nvn.py computes the expected pixels independently. */
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

#define W 64
#define DEFAULT_FRAMES 6
#define PX(x) (2.0f * (x) / W - 1.0f)
#define RPX(x) (2.0f * (x) / 32 - 1.0f)
#define RECT(x0, y0, x1, y1) {PX(x0), PX(y0), PX(x1), PX(y0), PX(x1), PX(y1), PX(x0), PX(y0), PX(x1), PX(y1), PX(x0), PX(y1)}
#define QUAD(x0, y0, x1, y1) {PX(x0), PX(y0), 0, 0, PX(x1), PX(y0), 1, 0, PX(x1), PX(y1), 1, 1, PX(x0), PX(y1), 0, 1}

static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture win_tex[2], rt, checker, ramp;
static NVNsampler nearest;
static NVNtexturePool tpool;
static NVNsamplerPool spool;
static NVNprogram color_prog, tex_prog;
static NVNwindow window;
static NVNsync frame_done;

#define POOL_SIZE (256 * 1024)
static uint8_t pool_mem[POOL_SIZE] __attribute__((aligned(4096)));

/* offsets inside the pool */
enum { OFF_VERTS = 0, OFF_INDEX = 0x1000, OFF_UBO = 0x2000, OFF_CHECKER = 0x4000, OFF_RAMP = 0x8000,
       OFF_SHADERS = 0x10000 };

static const float rect_a[12] = RECT(0, 0, 16, 16);
static const float rect_inst[12] = RECT(0, 24, 8, 32);
static const float rect_rt[12] = {RPX(0), RPX(0), RPX(16), RPX(0), RPX(16), RPX(32), RPX(0), RPX(0), RPX(16), RPX(32), RPX(0), RPX(32)};
static const float quad_checker[16] = QUAD(16, 0, 32, 16);
static const float quad_ramp[16] = QUAD(32, 0, 48, 16);
static const float quad_rt[16] = QUAD(32, 32, 64, 64);
static const uint16_t quad_index[6] = {0, 1, 2, 0, 2, 3};
/* uniform blocks: color, offset, step (vec4 each) */
static const float ubo_rt[12] = {1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
static const float ubo_inst[12] = {0, 1, 0, 1, 0, 0, 0, 0, 0.5f, 0, 0, 0};
static const float frame_colors[4][4] = {{1, 1, 0, 1}, {0, 1, 1, 1}, {1, 0, 1, 1}, {1, 1, 1, 1}};
static const float clear_colors[4][4] = {{0, 0, 0, 1}, {0.5f, 0, 0, 1}, {0, 0.5f, 0, 1}, {0, 0, 0.5f, 1}};
static const float clear_blue[4] = {0, 0, 1, 1};


static int texture_block_height(int format, int w, int h) {
    NVNtextureBuilder b;
    nvn.nvnTextureBuilderSetDefaults(&b);
    nvn.nvnTextureBuilderSetFormat(&b, format);
    nvn.nvnTextureBuilderSetSize2D(&b, w, h);
    return nvn.nvnTextureBuilderGetBlockHeightLog2(&b);
}

static uint32_t shader_arch;

static void make_program(NVNprogram *p, const char *vs, const char *fs, uint32_t *off) {
    static NVNshaderControl ctl[4];
    static int n;
    NVNshaderData d[2];
    nvn.nvnProgramInitialize(p, &dev);
    d[0].data = nvn.nvnMemoryPoolGetBufferAddress(&pool) + *off;
    d[0].control = &ctl[n];
    *off += nvnu_load_shader(vs, pool_mem + *off, &ctl[n++], NVN_STAGE_VERTEX, (int)shader_arch);
    d[1].data = nvn.nvnMemoryPoolGetBufferAddress(&pool) + *off;
    d[1].control = &ctl[n];
    *off += nvnu_load_shader(fs, pool_mem + *off, &ctl[n++], NVN_STAGE_FRAGMENT, (int)shader_arch);
    if (!nvn.nvnProgramSetShaders(p, 2, d)) hz_printf("program failed\n");
}

static uint32_t fnv(uint32_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    while (n--) { h ^= *b++; h *= 16777619u; }
    return h;
}

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    shader_arch = (uint32_t)nvnu_shader_arch();
    int frames = DEFAULT_FRAMES;
    {
        NnFileHandle f;
        char text[16] = {0};
        if (nnfsOpenFile(&f, "rom:/config/frames", NN_FS_READ) == 0) {
            size_t got = 0;
            nnfsReadFileSized(&got, f, 0, text, sizeof text - 1);
            nnfsCloseFile(f);
            frames = 0;
            for (size_t i = 0; i < got && text[i] >= '0' && text[i] <= '9'; i++) frames = frames * 10 + (text[i] - '0');
        }
    }
    int missing = nvn_load_procs(&nvn);
    hz_printf("nvn entry points missing: %d\n", missing);
    NVNdeviceBuilder db;
    nvn.nvnDeviceBuilderSetDefaults(&db);
    hz_printf("device: %d\n", nvn.nvnDeviceInitialize(&dev, &db));

    NVNmemoryPoolBuilder pb;
    nvn.nvnMemoryPoolBuilderSetDefaults(&pb);
    nvn.nvnMemoryPoolBuilderSetDevice(&pb, &dev);
    nvn.nvnMemoryPoolBuilderSetStorage(&pb, pool_mem, POOL_SIZE);
    hz_printf("pool: %d\n", nvn.nvnMemoryPoolInitialize(&pool, &pb));
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);

    /* geometry and constant uniforms */
    uint8_t *v = pool_mem + OFF_VERTS;
    memcpy(v + 0, rect_a, sizeof rect_a);
    memcpy(v + 64, rect_inst, sizeof rect_inst);
    memcpy(v + 128, rect_rt, sizeof rect_rt);
    memcpy(v + 192, quad_checker, sizeof quad_checker);
    memcpy(v + 256, quad_ramp, sizeof quad_ramp);
    memcpy(v + 320, quad_rt, sizeof quad_rt);
    memcpy(pool_mem + OFF_INDEX, quad_index, sizeof quad_index);
    memcpy(pool_mem + OFF_UBO + 0x100, ubo_rt, sizeof ubo_rt);
    memcpy(pool_mem + OFF_UBO + 0x200, ubo_inst, sizeof ubo_inst);

    /* textures: an RGBA8 checker (4x4 cells) and an RGB565 ramp, block-linear */
    int bh = texture_block_height(NVN_FORMAT_RGBA8, 16, 16);
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t x = 0; x < 16; x++) {
            uint8_t *p = pool_mem + OFF_CHECKER + nvnu_block_linear_offset(x * 4, y, 64, bh);
            int on = ((x / 4) + (y / 4)) & 1;
            p[0] = on ? 255 : 20; p[1] = on ? 255 : 40; p[2] = on ? 0 : 200; p[3] = 255;
        }
    bh = texture_block_height(NVN_FORMAT_RGB565, 16, 16);
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t x = 0; x < 16; x++) {
            uint16_t c = (uint16_t)((x * 2) << 11 | (y * 4) << 5 | (31 - x * 2));
            uint8_t *p = pool_mem + OFF_RAMP + nvnu_block_linear_offset(x * 2, y, 32, bh);
            p[0] = (uint8_t)c; p[1] = (uint8_t)(c >> 8);
        }
    nvnu_texture(&nvn, &dev, &pool, &win_tex[0], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[1], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &rt, NVN_FORMAT_RGBA8, 32, 32, NVN_TEXTURE_FLAGS_RENDER_TARGET, -1);
    nvnu_texture(&nvn, &dev, &pool, &checker, NVN_FORMAT_RGBA8, 16, 16, 0, OFF_CHECKER);
    nvnu_texture(&nvn, &dev, &pool, &ramp, NVN_FORMAT_RGB565, 16, 16, 0, OFF_RAMP);
    NVNsamplerBuilder sb;
    nvn.nvnSamplerBuilderSetDefaults(&sb);
    nvn.nvnSamplerBuilderSetDevice(&sb, &dev);
    nvn.nvnSamplerBuilderSetMinMagFilter(&sb, NVN_FILTER_NEAREST, NVN_FILTER_NEAREST);
    nvn.nvnSamplerBuilderSetWrapMode(&sb, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP);
    nvn.nvnSamplerInitialize(&nearest, &sb);
    nvn.nvnTexturePoolInitialize(&tpool, &pool, 0x20000, 16);
    nvn.nvnSamplerPoolInitialize(&spool, &pool, 0x21000, 16);
    nvn.nvnTexturePoolRegisterTexture(&tpool, 1, &checker, 0);
    nvn.nvnTexturePoolRegisterTexture(&tpool, 2, &ramp, 0);
    nvn.nvnTexturePoolRegisterTexture(&tpool, 3, &rt, 0);
    nvn.nvnSamplerPoolRegisterSampler(&spool, 1, &nearest);
    NVNtextureHandle h_checker = nvn.nvnDeviceGetTextureHandle(&dev, 1, 1);
    NVNtextureHandle h_ramp = nvn.nvnDeviceGetTextureHandle(&dev, 2, 1);
    NVNtextureHandle h_rt = nvn.nvnDeviceGetTextureHandle(&dev, 3, 1);

    uint32_t shader_off = OFF_SHADERS;
    make_program(&color_prog, "rom:/shaders/color.vs", "rom:/shaders/color.fs", &shader_off);
    make_program(&tex_prog, "rom:/shaders/tex.vs", "rom:/shaders/tex.fs", &shader_off);

    NVNqueueBuilder qb;
    nvn.nvnQueueBuilderSetDefaults(&qb);
    nvn.nvnQueueBuilderSetDevice(&qb, &dev);
    nvn.nvnQueueInitialize(&queue, &qb);
    nvn.nvnCommandBufferInitialize(&cmd, &dev);
    nvn.nvnSyncInitialize(&frame_done, &dev);
    NVNwindowBuilder wb;
    NVNtexture *wt[2] = {&win_tex[0], &win_tex[1]};
    nvn.nvnWindowBuilderSetDefaults(&wb);
    nvn.nvnWindowBuilderSetDevice(&wb, &dev);
    nvn.nvnWindowBuilderSetTextures(&wb, 2, wt);
    hz_printf("window: %d\n", nvn.nvnWindowInitialize(&window, &wb));

    NVNvertexAttribState pos_only[1] = {{NVN_ATTR_FLOAT2, 0, 0, 0}};
    NVNvertexStreamState s8 = {8, 0}, s16 = {16, 0};
    NVNvertexAttribState pos_uv[2] = {{NVN_ATTR_FLOAT2, 0, 0, 0}, {NVN_ATTR_FLOAT2, 8, 0, 1}};
    NVNtexture *rt_list[1] = {&rt};
    NVNcolorState no_blend = {0};
    for (int f = 1; f <= frames; f++) {
        /* a bound, not a speed check: 60 s (a GPU process restart on a loaded machine, pipelines
           made again, takes seconds; the tests kill it while this program plays) */
        if (f > 1 && nvn.nvnSyncWait(&frame_done, 60000000000ull) == NVN_SYNC_TIMEOUT_EXPIRED)
            hz_printf("frame %d: previous frame never completed\n", f);
        /* the per-frame uniform block, rewritten once the GPU is done with the last frame */
        float ubo[12] = {0};
        memcpy(ubo, frame_colors[f % 4], 16);
        memcpy(pool_mem + OFF_UBO, ubo, sizeof ubo);
        int index = 0;
        nvn.nvnWindowAcquireTexture(&window, 0, &index);
        NVNtexture *target[1] = {&win_tex[index]};

        nvn.nvnCommandBufferBeginRecording(&cmd);
        nvn.nvnCommandBufferBindColorState(&cmd, &no_blend);
        /* pass 1: render to texture */
        nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, rt_list, 0, 0, 0);
        nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, 32, 32);
        nvn.nvnCommandBufferClearColor(&cmd, 0, clear_blue, 0xF);
        nvn.nvnCommandBufferBindProgram(&cmd, &color_prog, 3);
        nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, pos_only);
        nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s8);
        nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO + 0x100, 48);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + 128, 48);
        nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
        /* pass 2: the window texture */
        nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, target, 0, 0, 0);
        nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
        nvn.nvnCommandBufferClearColor(&cmd, 0, clear_colors[f % 4], 0xF);
        nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO, 48);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS, 48);
        nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
        nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_VERTEX, 0, base + OFF_UBO + 0x200, 48);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + 64, 48);
        nvn.nvnCommandBufferDrawArraysInstanced(&cmd, NVN_DRAW_TRIANGLES, 0, 6, 0, 3);
        nvn.nvnCommandBufferBindProgram(&cmd, &tex_prog, 3);
        nvn.nvnCommandBufferBindVertexAttribState(&cmd, 2, pos_uv);
        nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s16);
        nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, 0, h_checker);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + 192, 64);
        nvn.nvnCommandBufferDrawElements(&cmd, NVN_DRAW_TRIANGLES, NVN_INDEX_U16, 6, base + OFF_INDEX);
        nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, 0, h_ramp);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + 256, 64);
        nvn.nvnCommandBufferDrawElements(&cmd, NVN_DRAW_TRIANGLES, NVN_INDEX_U16, 6, base + OFF_INDEX);
        nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, 0, h_rt);
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + 320, 64);
        nvn.nvnCommandBufferDrawElements(&cmd, NVN_DRAW_TRIANGLES, NVN_INDEX_U16, 6, base + OFF_INDEX);
        NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
        nvn.nvnQueueSubmitCommands(&queue, 1, &h);
        nvn.nvnQueuePresentTexture(&queue, &window, index);
        nvn.nvnQueueFenceSync(&queue, &frame_done, 0, 0);
        nvn.nvnQueueFlush(&queue);
        hz_printf("frame %d: window texture %d, state %x\n", f, index, fnv(2166136261u, pool_mem + OFF_UBO, 48));
    }
    nvn.nvnQueueFinish(&queue);
    hz_printf("done\n");
    return 0;
}
