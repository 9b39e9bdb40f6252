/* nvn.h — the GPU API our guest programs use, served by the CPU host's NVN front end
 * (cpu_host/horizon/hle/nvn/).  The entry points carry the public names of NVN's functions
 * (the names games look up through nvnBootstrapLoader / nvnDeviceGetProcAddress); the
 * structures, enumerations and signatures are our own, written from the public description of
 * NVN's object model (devices, memory pools, builders, command buffers with command and
 * control memory, queues, syncs, windows, texture and sampler pools with bindless handles).
 * No Nintendo header was read or used; this is not binary-compatible with Nintendo's NVN.
 *
 * As with NVN, a program first gets the entry points: nvnBootstrapLoader("nvnDeviceGetProcAddress")
 * returns the loader, and nvn_load_procs() (below) fills the table by name. */
#ifndef NVN_H
#define NVN_H
#include <stdint.h>
#include <stddef.h>

/* Objects: guest memory the host keeps its handle in (word 0).  Sizes leave room to grow. */
#define NVN_OBJ(name) typedef struct name { uint64_t host; uint64_t reserved[7]; } name
NVN_OBJ(NVNdevice); NVN_OBJ(NVNdeviceBuilder); NVN_OBJ(NVNmemoryPool); NVN_OBJ(NVNmemoryPoolBuilder);
NVN_OBJ(NVNbuffer); NVN_OBJ(NVNbufferBuilder); NVN_OBJ(NVNtexture); NVN_OBJ(NVNtextureBuilder);
NVN_OBJ(NVNsampler); NVN_OBJ(NVNsamplerBuilder); NVN_OBJ(NVNtexturePool); NVN_OBJ(NVNsamplerPool);
NVN_OBJ(NVNprogram); NVN_OBJ(NVNqueue); NVN_OBJ(NVNqueueBuilder); NVN_OBJ(NVNcommandBuffer);
NVN_OBJ(NVNsync); NVN_OBJ(NVNwindow); NVN_OBJ(NVNwindowBuilder);
NVN_OBJ(NVNevent); NVN_OBJ(NVNeventBuilder);
typedef uint64_t NVNcommandHandle;
typedef uint64_t NVNbufferAddress;
typedef uint64_t NVNtextureHandle;

/* Plain-data states (ours) */
typedef struct { uint32_t format; uint32_t offset; uint32_t stream; uint32_t location; } NVNvertexAttribState;
typedef struct { uint32_t stride; uint32_t divisor; } NVNvertexStreamState;
typedef struct { uint32_t blend_enable; } NVNcolorState;
/* A shader: code lives in a memory pool (data = its GPU address); control describes it. */
typedef struct { uint32_t magic; uint32_t stage; uint32_t arch; uint32_t size; } NVNshaderControl;
typedef struct { NVNbufferAddress data; const NVNshaderControl *control; } NVNshaderData;
#define NVN_SHADER_MAGIC 0x4853584eu           /* "NXSH" */

enum { NVN_STAGE_COMPUTE = 1, NVN_STAGE_VERTEX = 2, NVN_STAGE_FRAGMENT = 3, NVN_STAGE_GEOMETRY = 4 };  /* as the shader service numbers them (geometry: its first geometry stage; the front end translates for every input primitive) */
/* A compute stage's NVNshaderControl is followed by this (ours): the kernel's workgroup size, the
 * size of its constant bank 0, and the constant banks that are part of the program (bank_count
 * entries of banks: e.g. ptxas's SM5x literal pool, the cubin's .nv.constant2.<kernel>, as bank 2;
 * each one's bytes in a memory pool) (cpu_host/horizon/hle/nvn/compute.py). */
typedef struct { uint32_t bank; uint32_t size; NVNbufferAddress data; } NVNconstantBank;
/* The kernel's __device__ globals (ours; cpu_host/horizon/hle/nvn/compute_globals.py): a region of
 * size bytes (init_size initialised bytes in a memory pool, then zeros) placed by the GPU process,
 * and the relocations that write "region address + addend" at offset of where (0 the region's
 * bytes, 1 the code, 2 program bank `bank`) as kind 0 (a 64-bit slot), 1 / 2 (a MOV immediate's
 * low / high 32 bits: code).  NVNcomputeControl.flags bit 0 says a pointer to it follows. */
enum { NVN_COMPUTE_GLOBALS = 1 };
enum { NVN_GLOBAL_RELOC_DATA = 0, NVN_GLOBAL_RELOC_CODE = 1, NVN_GLOBAL_RELOC_BANK = 2 };
typedef struct { uint32_t where; uint32_t kind; uint32_t bank; uint32_t reserved; uint64_t offset; int64_t addend; } NVNglobalReloc;
typedef struct {
    uint32_t size; uint32_t init_size; NVNbufferAddress init;
    uint32_t reloc_count; uint32_t reserved; const NVNglobalReloc *relocs;
} NVNcomputeGlobals;
typedef struct {
    uint32_t local_size[3]; uint32_t bank_size;
    uint32_t bank_count; uint32_t flags; const NVNconstantBank *banks;
    const NVNcomputeGlobals *globals; /* read only with flags & NVN_COMPUTE_GLOBALS */
} NVNcomputeControl;
typedef uint64_t NVNimageHandle;
enum { NVN_SHADER_ARCH_SPIRV = 0, NVN_SHADER_ARCH_SM53 = 53, NVN_SHADER_ARCH_SM86 = 86 };
enum { NVN_FORMAT_RGBA8 = 1, NVN_FORMAT_BGRA8 = 2, NVN_FORMAT_R8 = 3, NVN_FORMAT_RG8 = 4, NVN_FORMAT_RGB565 = 5,
       NVN_FORMAT_RGBA16F = 6, NVN_FORMAT_RGBA32F = 7, NVN_FORMAT_BC1 = 8, NVN_FORMAT_BC3 = 9, NVN_FORMAT_BC7 = 10,
       NVN_FORMAT_ASTC_4x4 = 11, NVN_FORMAT_ASTC_8x8 = 12 };
enum { NVN_ATTR_FLOAT1 = 1, NVN_ATTR_FLOAT2 = 2, NVN_ATTR_FLOAT3 = 3, NVN_ATTR_FLOAT4 = 4, NVN_ATTR_RGBA8_UNORM = 5 };
enum { NVN_TEXTURE_FLAGS_DISPLAY = 1, NVN_TEXTURE_FLAGS_RENDER_TARGET = 2, NVN_TEXTURE_FLAGS_LINEAR = 4 };
enum { NVN_DRAW_TRIANGLES = 0, NVN_DRAW_TRIANGLE_STRIP = 1, NVN_DRAW_LINES = 2, NVN_DRAW_POINTS = 3 };
enum { NVN_INDEX_U16 = 2, NVN_INDEX_U32 = 4 };
enum { NVN_FILTER_NEAREST = 0, NVN_FILTER_LINEAR = 1 };
enum { NVN_WRAP_CLAMP = 0, NVN_WRAP_REPEAT = 1 };
enum { NVN_SYNC_ALREADY_SIGNALED = 0, NVN_SYNC_CONDITION_SATISFIED = 1, NVN_SYNC_TIMEOUT_EXPIRED = 2 };
/* Memory pool flags.  CPU_CACHED: the CPU's writes reach the GPU only through
 * nvnMemoryPoolFlushMappedRange (the host then re-reads only what was flushed); CPU_UNCACHED
 * (or no flag): writes need no flush, the host compares what the GPU samples at each submit. */
enum { NVN_MEMORY_POOL_FLAGS_CPU_UNCACHED = 2, NVN_MEMORY_POOL_FLAGS_CPU_CACHED = 4 };
/* Depth/stencil render-target formats (bytes a texel in pool storage: 2, 4 (depth24 | stencil << 24),
 * 4 (float), 8 (float, then a word whose low byte is the stencil)). */
enum { NVN_FORMAT_DEPTH16 = 13, NVN_FORMAT_DEPTH24_STENCIL8 = 14, NVN_FORMAT_DEPTH32F = 15,
       NVN_FORMAT_DEPTH32F_STENCIL8 = 16 };
/* Fixed-function state: plain structures of ours that the state functions below fill (their
 * layouts are this header's own).  Enumerations number things in the order the GPU process's
 * protocol does (gpu_host/PROTOCOL.md). */
enum { NVN_COMPARE_NEVER = 0, NVN_COMPARE_LESS = 1, NVN_COMPARE_EQUAL = 2, NVN_COMPARE_LEQUAL = 3,
       NVN_COMPARE_GREATER = 4, NVN_COMPARE_NOTEQUAL = 5, NVN_COMPARE_GEQUAL = 6, NVN_COMPARE_ALWAYS = 7 };
enum { NVN_STENCIL_OP_KEEP = 0, NVN_STENCIL_OP_ZERO = 1, NVN_STENCIL_OP_REPLACE = 2, NVN_STENCIL_OP_INCR = 3,
       NVN_STENCIL_OP_DECR = 4, NVN_STENCIL_OP_INVERT = 5, NVN_STENCIL_OP_INCR_WRAP = 6, NVN_STENCIL_OP_DECR_WRAP = 7 };
enum { NVN_FACE_NONE = 0, NVN_FACE_FRONT = 1, NVN_FACE_BACK = 2, NVN_FACE_FRONT_AND_BACK = 3 };
/* Winding as seen in the render target, y pointing down (the protocol's coordinates). */
enum { NVN_FRONT_FACE_CCW = 0, NVN_FRONT_FACE_CW = 1 };
enum { NVN_POLYGON_MODE_FILL = 0, NVN_POLYGON_MODE_LINE = 1 };
enum { NVN_POLYGON_OFFSET_ENABLE_LINE = 2, NVN_POLYGON_OFFSET_ENABLE_FILL = 4 };
enum { NVN_BLEND_FUNC_ZERO = 0, NVN_BLEND_FUNC_ONE = 1, NVN_BLEND_FUNC_SRC_COLOR = 2,
       NVN_BLEND_FUNC_ONE_MINUS_SRC_COLOR = 3, NVN_BLEND_FUNC_DST_COLOR = 4, NVN_BLEND_FUNC_ONE_MINUS_DST_COLOR = 5,
       NVN_BLEND_FUNC_SRC_ALPHA = 6, NVN_BLEND_FUNC_ONE_MINUS_SRC_ALPHA = 7, NVN_BLEND_FUNC_DST_ALPHA = 8,
       NVN_BLEND_FUNC_ONE_MINUS_DST_ALPHA = 9, NVN_BLEND_FUNC_CONSTANT_COLOR = 10,
       NVN_BLEND_FUNC_ONE_MINUS_CONSTANT_COLOR = 11, NVN_BLEND_FUNC_CONSTANT_ALPHA = 12,
       NVN_BLEND_FUNC_ONE_MINUS_CONSTANT_ALPHA = 13, NVN_BLEND_FUNC_SRC_ALPHA_SATURATE = 14 };
/* A depth-compare sampler (nvnSamplerBuilderSetCompare): sampling a depth texture gives 1 where
 * "reference FUNC depth" holds, else 0 (the shader's shadow lookups). */
enum { NVN_COMPARE_MODE_NONE = 0, NVN_COMPARE_MODE_COMPARE_R_TO_TEXTURE = 1 };
/* Layered textures (nvnTextureBuilderSetTarget, layers by nvnTextureBuilderSetDepth; a cube has 6
 * faces +X -X +Y -Y +Z -Z, a cube array 6 per cube): layers one after another in the storage, each
 * nvnTextureBuilderGetStorageSize / layers bytes (whole blocks of the block-linear layout).
 * A 2D array render target is a compute surface (2D array pool); a 3D texture (depth slices by
 * nvnTextureBuilderSetDepth) is a linear colour render target, a compute surface of the 3D pool;
 * a 1D texture (height 1) or 1D array (layers by nvnTextureBuilderSetDepth) is a colour render
 * target, a compute surface of the 1D or 1D array pool. */
enum { NVN_TEXTURE_TARGET_2D = 0, NVN_TEXTURE_TARGET_2D_ARRAY = 1, NVN_TEXTURE_TARGET_CUBEMAP = 2,
       NVN_TEXTURE_TARGET_CUBEMAP_ARRAY = 3, NVN_TEXTURE_TARGET_3D = 4, NVN_TEXTURE_TARGET_1D = 5,
       NVN_TEXTURE_TARGET_1D_ARRAY = 6 };
enum { NVN_BLEND_EQUATION_ADD = 0, NVN_BLEND_EQUATION_SUB = 1, NVN_BLEND_EQUATION_REVERSE_SUB = 2,
       NVN_BLEND_EQUATION_MIN = 3, NVN_BLEND_EQUATION_MAX = 4 };
/* front/back: a face's stencil-fail, depth-fail and depth-pass ops, then its stencil func; the stencil
 * reference and masks are command-buffer state (nvnCommandBufferSetStencilRef/ValueMask/Mask). */
typedef struct { uint32_t depth_test, depth_write, depth_func, stencil_test; uint32_t front[4], back[4];
                 uint32_t reserved[4]; } NVNdepthStencilState;
typedef struct { uint32_t cull_face, front_face, polygon_mode, offset_enables; } NVNpolygonState;
typedef struct { uint32_t target, src_color, dst_color, src_alpha, dst_alpha, color_equation, alpha_equation,
                 reserved; } NVNblendState;
/* r g b a write bits (1 2 4 8) of colour target i in bits 4i..4i+3 */
typedef struct { uint32_t masks; } NVNchannelMaskState;
typedef struct { uint32_t samples, alpha_to_coverage; } NVNmultisampleState;
/* NVNcolorState.blend_enable (above) is a mask: bit i enables blending on colour target i.  A
 * recording that binds a colour state before any blend or channel-mask state gets the older
 * meaning of an enabled blend: source-alpha over. */
/* Events: a 32-bit value in memory-pool storage (nvnEventBuilderSetStorage: pool, 4-aligned offset).
 * The CPU reads it with nvnEventGetValue and writes it with nvnEventSignal (WRITE the value or ADD
 * it, modulo 2^32) in place, no flush needed.  nvnCommandBufferSignalEvent makes the GPU write or add
 * the value once the commands recorded before it completed (before the fences after it signal;
 * location and flags are accepted and ignored: every signal is at the end of the pipeline).
 * nvnCommandBufferWaitEvent makes the GPU wait, before the commands recorded after it, until the
 * value is EQUAL to the given one or GEQUAL_WRAP (the signed 32-bit difference value - given >= 0,
 * so it holds across the 2^32 wrap).  A flush never blocks the CPU on a wait: the GPU waits (at most
 * gpu_host.event_wait_timeout_s, then the rest of that submission is dropped), the CPU goes on and
 * may signal the event itself.  Commands after a wait read buffers as they are once it is over. */
enum { NVN_EVENT_SIGNAL_MODE_WRITE = 0, NVN_EVENT_SIGNAL_MODE_ADD = 1 };
enum { NVN_EVENT_WAIT_MODE_EQUAL = 0, NVN_EVENT_WAIT_MODE_GEQUAL_WRAP = 1 };
enum { NVN_EVENT_SIGNAL_LOCATION_TOP = 0, NVN_EVENT_SIGNAL_LOCATION_BOTTOM = 1 };
#define NVN_MEMORY_POOL_STORAGE_ALIGNMENT 4096
#define NVN_MAX_TEXTURE_BINDINGS 4
#define NVN_MAX_UNIFORM_BINDINGS 4

typedef void (*NVNgenericFuncPtr)(void);
NVNgenericFuncPtr nvnBootstrapLoader(const char *name);

/* Every entry point: X(return type, name, parameters) */
#define NVN_PROCS(X) \
    X(NVNgenericFuncPtr, nvnDeviceGetProcAddress, (const NVNdevice *device, const char *name)) \
    X(void, nvnDeviceBuilderSetDefaults, (NVNdeviceBuilder *b)) \
    X(int, nvnDeviceInitialize, (NVNdevice *device, const NVNdeviceBuilder *b)) \
    X(void, nvnDeviceFinalize, (NVNdevice *device)) \
    X(NVNtextureHandle, nvnDeviceGetTextureHandle, (const NVNdevice *device, int texture_id, int sampler_id)) \
    X(void, nvnMemoryPoolBuilderSetDefaults, (NVNmemoryPoolBuilder *b)) \
    X(void, nvnMemoryPoolBuilderSetDevice, (NVNmemoryPoolBuilder *b, NVNdevice *device)) \
    X(void, nvnMemoryPoolBuilderSetStorage, (NVNmemoryPoolBuilder *b, void *memory, size_t size)) \
    X(void, nvnMemoryPoolBuilderSetFlags, (NVNmemoryPoolBuilder *b, int flags)) \
    X(int, nvnMemoryPoolInitialize, (NVNmemoryPool *pool, const NVNmemoryPoolBuilder *b)) \
    X(void, nvnMemoryPoolFinalize, (NVNmemoryPool *pool)) \
    X(NVNbufferAddress, nvnMemoryPoolGetBufferAddress, (const NVNmemoryPool *pool)) \
    X(void *, nvnMemoryPoolMap, (const NVNmemoryPool *pool)) \
    X(void, nvnMemoryPoolFlushMappedRange, (const NVNmemoryPool *pool, ptrdiff_t offset, size_t size)) \
    X(void, nvnBufferBuilderSetDefaults, (NVNbufferBuilder *b)) \
    X(void, nvnBufferBuilderSetDevice, (NVNbufferBuilder *b, NVNdevice *device)) \
    X(void, nvnBufferBuilderSetStorage, (NVNbufferBuilder *b, NVNmemoryPool *pool, ptrdiff_t offset, size_t size)) \
    X(int, nvnBufferInitialize, (NVNbuffer *buffer, const NVNbufferBuilder *b)) \
    X(void, nvnBufferFinalize, (NVNbuffer *buffer)) \
    X(NVNbufferAddress, nvnBufferGetAddress, (const NVNbuffer *buffer)) \
    X(void *, nvnBufferMap, (const NVNbuffer *buffer)) \
    X(void, nvnTextureBuilderSetDefaults, (NVNtextureBuilder *b)) \
    X(void, nvnTextureBuilderSetDevice, (NVNtextureBuilder *b, NVNdevice *device)) \
    X(void, nvnTextureBuilderSetFlags, (NVNtextureBuilder *b, int flags)) \
    X(void, nvnTextureBuilderSetFormat, (NVNtextureBuilder *b, int format)) \
    X(void, nvnTextureBuilderSetSize2D, (NVNtextureBuilder *b, int width, int height)) \
    X(void, nvnTextureBuilderSetStorage, (NVNtextureBuilder *b, NVNmemoryPool *pool, ptrdiff_t offset)) \
    X(size_t, nvnTextureBuilderGetStorageSize, (const NVNtextureBuilder *b)) \
    X(int, nvnTextureBuilderGetBlockHeightLog2, (const NVNtextureBuilder *b)) \
    X(int, nvnTextureInitialize, (NVNtexture *texture, const NVNtextureBuilder *b)) \
    X(void, nvnTextureFinalize, (NVNtexture *texture)) \
    X(void, nvnSamplerBuilderSetDefaults, (NVNsamplerBuilder *b)) \
    X(void, nvnSamplerBuilderSetDevice, (NVNsamplerBuilder *b, NVNdevice *device)) \
    X(void, nvnSamplerBuilderSetMinMagFilter, (NVNsamplerBuilder *b, int min, int mag)) \
    X(void, nvnSamplerBuilderSetWrapMode, (NVNsamplerBuilder *b, int s, int t, int r)) \
    X(int, nvnSamplerInitialize, (NVNsampler *sampler, const NVNsamplerBuilder *b)) \
    X(int, nvnTexturePoolInitialize, (NVNtexturePool *tp, NVNmemoryPool *pool, ptrdiff_t offset, int count)) \
    X(void, nvnTexturePoolRegisterTexture, (NVNtexturePool *tp, int id, const NVNtexture *texture, const void *view)) \
    X(int, nvnSamplerPoolInitialize, (NVNsamplerPool *sp, NVNmemoryPool *pool, ptrdiff_t offset, int count)) \
    X(void, nvnSamplerPoolRegisterSampler, (NVNsamplerPool *sp, int id, const NVNsampler *sampler)) \
    X(int, nvnProgramInitialize, (NVNprogram *program, NVNdevice *device)) \
    X(int, nvnProgramSetShaders, (NVNprogram *program, int count, const NVNshaderData *stages)) \
    X(void, nvnQueueBuilderSetDefaults, (NVNqueueBuilder *b)) \
    X(void, nvnQueueBuilderSetDevice, (NVNqueueBuilder *b, NVNdevice *device)) \
    X(int, nvnQueueInitialize, (NVNqueue *queue, const NVNqueueBuilder *b)) \
    X(void, nvnQueueSubmitCommands, (NVNqueue *queue, int count, const NVNcommandHandle *handles)) \
    X(void, nvnQueueFlush, (NVNqueue *queue)) \
    X(void, nvnQueueFinish, (NVNqueue *queue)) \
    X(void, nvnQueueFenceSync, (NVNqueue *queue, NVNsync *sync, int condition, int flags)) \
    X(void, nvnQueuePresentTexture, (NVNqueue *queue, NVNwindow *window, int index)) \
    X(int, nvnSyncInitialize, (NVNsync *sync, NVNdevice *device)) \
    X(int, nvnSyncWait, (const NVNsync *sync, uint64_t timeout_ns)) \
    X(void, nvnWindowBuilderSetDefaults, (NVNwindowBuilder *b)) \
    X(void, nvnWindowBuilderSetDevice, (NVNwindowBuilder *b, NVNdevice *device)) \
    X(void, nvnWindowBuilderSetTextures, (NVNwindowBuilder *b, int count, NVNtexture *const *textures)) \
    X(int, nvnWindowInitialize, (NVNwindow *window, const NVNwindowBuilder *b)) \
    X(int, nvnWindowAcquireTexture, (NVNwindow *window, NVNsync *sync, int *index)) \
    X(int, nvnCommandBufferInitialize, (NVNcommandBuffer *cb, NVNdevice *device)) \
    X(void, nvnCommandBufferAddCommandMemory, (NVNcommandBuffer *cb, const NVNmemoryPool *pool, ptrdiff_t offset, size_t size)) \
    X(void, nvnCommandBufferAddControlMemory, (NVNcommandBuffer *cb, void *memory, size_t size)) \
    X(void, nvnCommandBufferBeginRecording, (NVNcommandBuffer *cb)) \
    X(NVNcommandHandle, nvnCommandBufferEndRecording, (NVNcommandBuffer *cb)) \
    X(void, nvnCommandBufferSetRenderTargets, (NVNcommandBuffer *cb, int count, NVNtexture *const *colors, const void *views, NVNtexture *depth, const void *depth_view)) \
    X(void, nvnCommandBufferClearColor, (NVNcommandBuffer *cb, int index, const float *color, int mask)) \
    X(void, nvnCommandBufferBindProgram, (NVNcommandBuffer *cb, const NVNprogram *program, int stages)) \
    X(void, nvnCommandBufferBindVertexAttribState, (NVNcommandBuffer *cb, int count, const NVNvertexAttribState *attribs)) \
    X(void, nvnCommandBufferBindVertexStreamState, (NVNcommandBuffer *cb, int count, const NVNvertexStreamState *streams)) \
    X(void, nvnCommandBufferBindVertexBuffer, (NVNcommandBuffer *cb, int index, NVNbufferAddress address, size_t size)) \
    X(void, nvnCommandBufferBindUniformBuffer, (NVNcommandBuffer *cb, int stage, int index, NVNbufferAddress address, size_t size)) \
    X(void, nvnCommandBufferBindTexture, (NVNcommandBuffer *cb, int stage, int index, NVNtextureHandle handle)) \
    X(void, nvnCommandBufferBindColorState, (NVNcommandBuffer *cb, const NVNcolorState *state)) \
    X(void, nvnCommandBufferSetViewport, (NVNcommandBuffer *cb, int x, int y, int w, int h)) \
    X(void, nvnCommandBufferDrawArrays, (NVNcommandBuffer *cb, int mode, int first, int count)) \
    X(void, nvnCommandBufferDrawArraysInstanced, (NVNcommandBuffer *cb, int mode, int first, int count, int base_instance, int instances)) \
    X(void, nvnCommandBufferDrawElements, (NVNcommandBuffer *cb, int mode, int type, int count, NVNbufferAddress indices)) \
    X(void, nvnCommandBufferDrawElementsInstanced, (NVNcommandBuffer *cb, int mode, int type, int count, NVNbufferAddress indices, int base_vertex, int base_instance, int instances)) \
    X(void, nvnDepthStencilStateSetDefaults, (NVNdepthStencilState *s)) \
    X(void, nvnDepthStencilStateSetDepthTestEnable, (NVNdepthStencilState *s, int enable)) \
    X(void, nvnDepthStencilStateSetDepthWriteEnable, (NVNdepthStencilState *s, int enable)) \
    X(void, nvnDepthStencilStateSetDepthFunc, (NVNdepthStencilState *s, int func)) \
    X(void, nvnDepthStencilStateSetStencilTestEnable, (NVNdepthStencilState *s, int enable)) \
    X(void, nvnDepthStencilStateSetStencilFunc, (NVNdepthStencilState *s, int faces, int func)) \
    X(void, nvnDepthStencilStateSetStencilOp, (NVNdepthStencilState *s, int faces, int fail, int depth_fail, int depth_pass)) \
    X(void, nvnPolygonStateSetDefaults, (NVNpolygonState *s)) \
    X(void, nvnPolygonStateSetCullFace, (NVNpolygonState *s, int face)) \
    X(void, nvnPolygonStateSetFrontFace, (NVNpolygonState *s, int face)) \
    X(void, nvnPolygonStateSetPolygonMode, (NVNpolygonState *s, int mode)) \
    X(void, nvnPolygonStateSetPolygonOffsetEnables, (NVNpolygonState *s, int enables)) \
    X(void, nvnBlendStateSetDefaults, (NVNblendState *s)) \
    X(void, nvnBlendStateSetBlendTarget, (NVNblendState *s, int target)) \
    X(void, nvnBlendStateSetBlendFunc, (NVNblendState *s, int src_color, int dst_color, int src_alpha, int dst_alpha)) \
    X(void, nvnBlendStateSetBlendEquation, (NVNblendState *s, int color, int alpha)) \
    X(void, nvnColorStateSetDefaults, (NVNcolorState *s)) \
    X(void, nvnColorStateSetBlendEnable, (NVNcolorState *s, int target, int enable)) \
    X(void, nvnChannelMaskStateSetDefaults, (NVNchannelMaskState *s)) \
    X(void, nvnChannelMaskStateSetChannelMask, (NVNchannelMaskState *s, int target, int r, int g, int b, int a)) \
    X(void, nvnMultisampleStateSetDefaults, (NVNmultisampleState *s)) \
    X(void, nvnMultisampleStateSetSamples, (NVNmultisampleState *s, int samples)) \
    X(void, nvnMultisampleStateSetAlphaToCoverageEnable, (NVNmultisampleState *s, int enable)) \
    X(void, nvnCommandBufferBindDepthStencilState, (NVNcommandBuffer *cb, const NVNdepthStencilState *s)) \
    X(void, nvnCommandBufferBindPolygonState, (NVNcommandBuffer *cb, const NVNpolygonState *s)) \
    X(void, nvnCommandBufferBindBlendState, (NVNcommandBuffer *cb, const NVNblendState *s)) \
    X(void, nvnCommandBufferBindChannelMaskState, (NVNcommandBuffer *cb, const NVNchannelMaskState *s)) \
    X(void, nvnCommandBufferBindMultisampleState, (NVNcommandBuffer *cb, const NVNmultisampleState *s)) \
    X(void, nvnCommandBufferSetStencilRef, (NVNcommandBuffer *cb, int faces, int ref)) \
    X(void, nvnCommandBufferSetStencilValueMask, (NVNcommandBuffer *cb, int faces, int mask)) \
    X(void, nvnCommandBufferSetStencilMask, (NVNcommandBuffer *cb, int faces, int mask)) \
    X(void, nvnCommandBufferSetScissor, (NVNcommandBuffer *cb, int x, int y, int w, int h)) \
    X(void, nvnCommandBufferSetDepthBias, (NVNcommandBuffer *cb, const float *constant_slope_clamp)) \
    X(void, nvnCommandBufferSetBlendColor, (NVNcommandBuffer *cb, const float *rgba)) \
    X(void, nvnCommandBufferClearDepthStencil, (NVNcommandBuffer *cb, const float *depth, int depth_mask, int stencil, int stencil_mask)) \
    X(void, nvnSamplerBuilderSetCompare, (NVNsamplerBuilder *b, int mode, int func)) \
    X(void, nvnTextureBuilderSetTarget, (NVNtextureBuilder *b, int target)) \
    X(void, nvnTextureBuilderSetDepth, (NVNtextureBuilder *b, int layers)) \
    X(void, nvnEventBuilderSetDefaults, (NVNeventBuilder *b)) \
    X(void, nvnEventBuilderSetStorage, (NVNeventBuilder *b, const NVNmemoryPool *pool, int64_t offset)) \
    X(int, nvnEventInitialize, (NVNevent *event, const NVNeventBuilder *b)) \
    X(void, nvnEventFinalize, (NVNevent *event)) \
    X(uint32_t, nvnEventGetValue, (const NVNevent *event)) \
    X(void, nvnEventSignal, (NVNevent *event, int mode, uint32_t value)) \
    X(void, nvnCommandBufferSignalEvent, (NVNcommandBuffer *cb, const NVNevent *event, int mode, int location, int flags, uint32_t value)) \
    X(void, nvnCommandBufferWaitEvent, (NVNcommandBuffer *cb, const NVNevent *event, int mode, uint32_t value)) \
    X(void, nvnTextureBuilderSetSamples, (NVNtextureBuilder *b, int samples)) \
    X(void, nvnCommandBufferDownsample, (NVNcommandBuffer *cb, const NVNtexture *src, const NVNtexture *dst)) \
    X(void, nvnCommandBufferBindStorageBuffer, (NVNcommandBuffer *cb, int stage, int index, NVNbufferAddress address, size_t size)) \
    X(NVNimageHandle, nvnDeviceGetImageHandle, (const NVNdevice *device, int textureId)) \
    X(void, nvnCommandBufferBindImage, (NVNcommandBuffer *cb, int stage, int index, NVNimageHandle handle)) \
    X(void, nvnCommandBufferDispatchCompute, (NVNcommandBuffer *cb, int groupsX, int groupsY, int groupsZ))

#define NVN_PTR_FIELD(ret, name, params) ret (*name) params;
typedef struct NvnProcs { NVN_PROCS(NVN_PTR_FIELD) } NvnProcs;

/* Fill `p` through the loader, by name, as a game does; returns how many entry points are missing. */
static inline int nvn_load_procs(NvnProcs *p) {
    NVNgenericFuncPtr (*get)(const NVNdevice *, const char *) =
        (NVNgenericFuncPtr (*)(const NVNdevice *, const char *))nvnBootstrapLoader("nvnDeviceGetProcAddress");
    int missing = 0;
    if (!get) return -1;
#define NVN_LOAD(ret, name, params) p->name = (ret (*) params)get(0, #name); missing += !p->name;
    NVN_PROCS(NVN_LOAD)
#undef NVN_LOAD
    return missing;
}

#endif
