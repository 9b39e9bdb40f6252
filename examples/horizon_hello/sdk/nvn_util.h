/* nvn_util.h — small helpers our guest programs share on top of nvn.h: textures from a builder
 * in one call, the shader code kind the RomFS carries, a shader read from the RomFS into pool
 * memory with its control record. */
#ifndef NVN_UTIL_H
#define NVN_UTIL_H
#include "nn.h"
#include "nvn.h"

/* A 2D texture; `offset` < 0: no storage (render targets and window textures are GPU-owned). */
static inline int nvnu_texture(const NvnProcs *nvn, NVNdevice *dev, NVNmemoryPool *pool, NVNtexture *t,
                               int format, int w, int h, int flags, int offset) {
    NVNtextureBuilder b;
    nvn->nvnTextureBuilderSetDefaults(&b);
    nvn->nvnTextureBuilderSetDevice(&b, dev);
    nvn->nvnTextureBuilderSetFlags(&b, flags);
    nvn->nvnTextureBuilderSetFormat(&b, format);
    nvn->nvnTextureBuilderSetSize2D(&b, w, h);
    if (offset >= 0) nvn->nvnTextureBuilderSetStorage(&b, pool, offset);
    return nvn->nvnTextureInitialize(t, &b);
}

/* rom:/shaders/arch says which code the shaders are: "sm86", "sm53" or "spirv" */
static inline int nvnu_shader_arch(void) {
    NnFileHandle f;
    char kind[8] = {0};
    if (nnfsOpenFile(&f, "rom:/shaders/arch", NN_FS_READ)) return NVN_SHADER_ARCH_SPIRV;
    nnfsReadFile(f, 0, kind, 4);
    nnfsCloseFile(f);
    return kind[2] == '8' ? NVN_SHADER_ARCH_SM86 : kind[2] == '5' ? NVN_SHADER_ARCH_SM53 : NVN_SHADER_ARCH_SPIRV;
}

/* Read a shader file into pool memory at `mem` and fill its control record; returns the bytes
 * it takes, rounded up to 256 (0 when the file is missing). */
static inline uint32_t nvnu_load_shader(const char *path, uint8_t *mem, NVNshaderControl *ctl, int stage, int arch) {
    NnFileHandle f;
    int64_t size = 0;
    if (nnfsOpenFile(&f, path, NN_FS_READ)) { hz_printf("missing %s\n", path); return 0; }
    nnfsGetFileSize(&size, f);
    nnfsReadFile(f, 0, mem, (size_t)size);
    nnfsCloseFile(f);
    ctl->magic = NVN_SHADER_MAGIC; ctl->stage = (uint32_t)stage; ctl->arch = (uint32_t)arch; ctl->size = (uint32_t)size;
    return (uint32_t)((size + 255) & ~255);
}

/* The device and one memory pool over `mem` (aligned to NVN_MEMORY_POOL_STORAGE_ALIGNMENT). */
static inline void nvnu_device_and_pool(const NvnProcs *nvn, NVNdevice *dev, NVNmemoryPool *pool, void *mem,
                                        size_t size) {
    NVNdeviceBuilder db;
    nvn->nvnDeviceBuilderSetDefaults(&db);
    nvn->nvnDeviceInitialize(dev, &db);
    NVNmemoryPoolBuilder pb;
    nvn->nvnMemoryPoolBuilderSetDefaults(&pb);
    nvn->nvnMemoryPoolBuilderSetDevice(&pb, dev);
    nvn->nvnMemoryPoolBuilderSetStorage(&pb, mem, size);
    nvn->nvnMemoryPoolInitialize(pool, &pb);
}

/* A program of a vertex and a fragment shader read from the RomFS into the pool's memory
 * (`pool_mem`, its CPU view) at *off, which moves past them; `ctl` must outlive the program.
 * Prints "program failed" when the front end refuses it; returns what SetShaders returned. */
static inline int nvnu_program(const NvnProcs *nvn, NVNdevice *dev, NVNmemoryPool *pool, uint8_t *pool_mem,
                               uint32_t *off, NVNprogram *prog, NVNshaderControl ctl[2], const char *vs,
                               const char *fs, int arch) {
    NVNshaderData sd[2];
    NVNbufferAddress base = nvn->nvnMemoryPoolGetBufferAddress(pool);
    nvn->nvnProgramInitialize(prog, dev);
    sd[0].data = base + *off; sd[0].control = &ctl[0];
    *off += nvnu_load_shader(vs, pool_mem + *off, &ctl[0], NVN_STAGE_VERTEX, arch);
    sd[1].data = base + *off; sd[1].control = &ctl[1];
    *off += nvnu_load_shader(fs, pool_mem + *off, &ctl[1], NVN_STAGE_FRAGMENT, arch);
    int ok = nvn->nvnProgramSetShaders(prog, 2, sd);
    if (!ok) hz_printf("program failed\n");
    return ok;
}

/* A queue, a command buffer and a window presenting two textures (`sync`: also one sync, if
 * not NULL). */
static inline void nvnu_queue_and_window(const NvnProcs *nvn, NVNdevice *dev, NVNqueue *queue, NVNcommandBuffer *cmd,
                                         NVNsync *sync, NVNwindow *window, NVNtexture *t0, NVNtexture *t1) {
    NVNqueueBuilder qb;
    nvn->nvnQueueBuilderSetDefaults(&qb);
    nvn->nvnQueueBuilderSetDevice(&qb, dev);
    nvn->nvnQueueInitialize(queue, &qb);
    nvn->nvnCommandBufferInitialize(cmd, dev);
    if (sync) nvn->nvnSyncInitialize(sync, dev);
    NVNwindowBuilder wb;
    NVNtexture *wt[2] = {t0, t1};
    nvn->nvnWindowBuilderSetDefaults(&wb);
    nvn->nvnWindowBuilderSetDevice(&wb, dev);
    nvn->nvnWindowBuilderSetTextures(&wb, 2, wt);
    nvn->nvnWindowInitialize(window, &wb);
}

/* Byte (x, y) of a block-linear surface `width_bytes` wide whose blocks are 2^bh GOBs tall (a
 * GOB: 64 bytes x 8 rows of 32-byte sectors; the layout as public documentation describes it).
 * A game is built for one console: Switch 1 (Maxwell GOBs) by default, Switch 2 (the GOBs of
 * Turing and later GPUs, Ampere's colour surfaces) when built with -DNVNU_SWITCH2. */
static inline size_t nvnu_block_linear_offset(uint32_t x, uint32_t y, uint32_t width_bytes, int bh) {
    uint32_t gobs_x = (width_bytes + 63) / 64, gpb = 1u << bh, block = 512u * gpb;
#ifdef NVNU_SWITCH2
    size_t in_gob = (x % 64) / 32 * 256 + (y % 8) / 4 * 128 + (x % 32) / 16 * 64 + (y % 4) * 16 + x % 16;
#else
    size_t in_gob = (x % 64) / 32 * 256 + (y % 8) / 2 * 64 + (x % 32) / 16 * 32 + (y % 2) * 16 + x % 16;
#endif
    return (size_t)(y / (8 * gpb)) * gobs_x * block + (y / 8) % gpb * 512 + (size_t)(x / 64) * block + in_gob;
}

/* A multisampled render target (2, 4 or 8 samples per pixel): drawn into, then resolved into a
   one-sample texture with nvnCommandBufferDownsample. */
static inline int nvnu_texture_ms(const NvnProcs *nvn, NVNdevice *dev, NVNtexture *t, int format, int w, int h,
                                  int samples) {
    NVNtextureBuilder b;
    nvn->nvnTextureBuilderSetDefaults(&b);
    nvn->nvnTextureBuilderSetDevice(&b, dev);
    nvn->nvnTextureBuilderSetFlags(&b, NVN_TEXTURE_FLAGS_RENDER_TARGET);
    nvn->nvnTextureBuilderSetFormat(&b, format);
    nvn->nvnTextureBuilderSetSize2D(&b, w, h);
    nvn->nvnTextureBuilderSetSamples(&b, samples);
    return nvn->nvnTextureInitialize(t, &b);
}

#endif
