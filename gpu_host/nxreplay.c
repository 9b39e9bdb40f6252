/* Native replay of a validated binary blob (gpu_host/native_replay.py drives it).
 *
 * Two calls per submission, after nx_pkt_check passed with no fallback op:
 *  - nx_plan: the distinct memory ranges the blob binds (VERTEX/INDEX/UNIFORM, first-seen order:
 *    the snapshot Python copies into the arena), the distinct (program, layout packet, target)
 *    triples its draws need a pipeline for, its PRESENTs and SIGNALs;
 *  - nx_record: the commands into the command buffer Python began, calling the vkCmd* entry
 *    points of the VkDevice the Python side created (vkGetDeviceProcAddr from the already loaded
 *    loader), with every handle (arena, images, views, samplers, pipelines) given by Python as
 *    integers.  The replay's order and state are gpu_host/replay.py's (_record) for these ops:
 *    rendering begun at the first CLEAR or draw after a target change, viewport reset by TARGET,
 *    scissor clamped to the target, full barriers at target switches and around PRESENT copies,
 *    the dynamic state's defaults set once at the first draw, all eight descriptors pushed when a
 *    UNIFORM/TEXTURE/PROGRAM changed them, DRAW_INDEXED's index values checked on the snapshot.
 * The Vulkan structures are declared here from the Vulkan 1.3 specification (no SDK headers on
 * the build machine); tests/gpu_host/test_gpu_native_replay.py checks their sizes and offsets
 * against the `vulkan` binding's cffi declarations, generated from the registry's vk.xml. */
#include <dlfcn.h>
#include "nxpkt.c"

typedef uint64_t H;          /* a non-dispatchable handle */
typedef void *D;             /* a dispatchable handle (VkDevice, VkCommandBuffer) */
typedef struct { float x, y, w, h, mind, maxd; } VkViewport_;
typedef struct { int32_t x, y; uint32_t w, h; } VkRect2D_;
typedef union { float f[4]; int32_t i[4]; uint32_t u[4]; struct { float depth; uint32_t stencil; } ds; } VkClearValue_;
typedef struct { uint32_t aspect; uint32_t att; VkClearValue_ v; } VkClearAttachment_;
typedef struct { VkRect2D_ rect; uint32_t base, count; } VkClearRect_;
typedef struct { uint32_t sType; const void *pNext; uint32_t src, dst; } VkMemoryBarrier_;
typedef struct {
    uint32_t sType; const void *pNext; H view; uint32_t layout; uint32_t resolveMode; H resolveView;
    uint32_t resolveLayout; uint32_t loadOp; uint32_t storeOp; VkClearValue_ clear;
} VkRenderingAttachmentInfo_;
typedef struct {
    uint32_t sType; const void *pNext; uint32_t flags; VkRect2D_ area; uint32_t layers, viewMask, ncolor;
    const VkRenderingAttachmentInfo_ *colors, *depth, *stencil;
} VkRenderingInfo_;
typedef struct { H buffer; uint64_t offset, range; } VkDescriptorBufferInfo_;
typedef struct { H sampler; H view; uint32_t layout; } VkDescriptorImageInfo_;
typedef struct {
    uint32_t sType; const void *pNext; H set; uint32_t binding, element, count, type;
    const VkDescriptorImageInfo_ *images; const VkDescriptorBufferInfo_ *buffers; const H *texel;
} VkWriteDescriptorSet_;
typedef struct {
    uint64_t offset; uint32_t rowLength, imageHeight; uint32_t aspect, mip, base, count;
    int32_t ox, oy, oz; uint32_t w, h, d;
} VkBufferImageCopy_;
typedef struct { uint32_t aspect, mip, base, count; } VkImageSubresourceLayers_;
typedef struct {
    VkImageSubresourceLayers_ src; int32_t sx, sy, sz; VkImageSubresourceLayers_ dst; int32_t dx, dy, dz;
    uint32_t w, h, d;
} VkImageResolve_;

/* Numbers from the Vulkan specification (checked against the binding by the tests). */
#define ST_MEMORY_BARRIER 46
#define ST_WRITE_DESCRIPTOR_SET 35
#define ST_RENDERING_INFO 1000044000
#define ST_RENDERING_ATTACHMENT_INFO 1000044001
#define LAYOUT_GENERAL 1
#define LOAD_OP_LOAD 0
#define STORE_OP_STORE 0
#define ASPECT_COLOR 1
#define ASPECT_DEPTH 2
#define ASPECT_STENCIL 4
#define STENCIL_FRONT 1
#define STENCIL_BACK 2
#define STAGE_ALL_COMMANDS 0x10000
#define ACCESS_MEMORY_READ 0x8000
#define ACCESS_MEMORY_WRITE 0x10000
#define DESC_UNIFORM_BUFFER 6
#define DESC_COMBINED_IMAGE_SAMPLER 1
#define BIND_GRAPHICS 0
#define INDEX_UINT16 0
#define INDEX_UINT32 1
#define STENCIL_FRONT_AND_BACK 3
#define COMPARE_LESS 1
#define COMPARE_ALWAYS 7

typedef void *(*PFN_gdpa)(D, const char *);
static struct {
    void (*Draw)(D, uint32_t, uint32_t, uint32_t, uint32_t);
    void (*DrawIndexed)(D, uint32_t, uint32_t, uint32_t, int32_t, uint32_t);
    void (*BindPipeline)(D, uint32_t, H);
    void (*BindVertexBuffers)(D, uint32_t, uint32_t, const H *, const uint64_t *);
    void (*BindIndexBuffer)(D, H, uint64_t, uint32_t);
    void (*PushDescriptorSetKHR)(D, uint32_t, H, uint32_t, uint32_t, const VkWriteDescriptorSet_ *);
    void (*SetViewport)(D, uint32_t, uint32_t, const VkViewport_ *);
    void (*SetScissor)(D, uint32_t, uint32_t, const VkRect2D_ *);
    void (*BeginRendering)(D, const VkRenderingInfo_ *);
    void (*EndRendering)(D);
    void (*ClearAttachments)(D, uint32_t, const VkClearAttachment_ *, uint32_t, const VkClearRect_ *);
    void (*PipelineBarrier)(D, uint32_t, uint32_t, uint32_t, uint32_t, const VkMemoryBarrier_ *, uint32_t,
                            const void *, uint32_t, const void *);
    void (*CopyImageToBuffer)(D, H, uint32_t, H, uint32_t, const VkBufferImageCopy_ *);
    void (*SetDepthBoundsTestEnable)(D, uint32_t);
    void (*SetDepthTestEnable)(D, uint32_t);
    void (*SetDepthWriteEnable)(D, uint32_t);
    void (*SetDepthCompareOp)(D, uint32_t);
    void (*SetStencilTestEnable)(D, uint32_t);
    void (*SetStencilOp)(D, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t);
    void (*SetStencilReference)(D, uint32_t, uint32_t);
    void (*SetStencilCompareMask)(D, uint32_t, uint32_t);
    void (*SetStencilWriteMask)(D, uint32_t, uint32_t);
    void (*SetCullMode)(D, uint32_t);
    void (*SetFrontFace)(D, uint32_t);
    void (*SetDepthBiasEnable)(D, uint32_t);
    void (*SetDepthBias)(D, float, float, float);
    void (*SetBlendConstants)(D, const float *);
    void (*BindDescriptorSets)(D, uint32_t, H, uint32_t, uint32_t, const H *, uint32_t, const uint32_t *);
    void (*ResolveImage)(D, H, uint32_t, H, uint32_t, uint32_t, const VkImageResolve_ *);
} vk;

/* Load the entry points of `device` (a VkDevice as an integer).  Returns 0, or the 1-based
 * number of the entry point the device lacks (-1: no loader). */
int nx_vk_init(uint64_t device) {
    void *loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!loader) loader = dlopen("libvulkan.so.1", RTLD_NOW);
    if (!loader) return -1;
    PFN_gdpa gdpa = (PFN_gdpa)dlsym(loader, "vkGetDeviceProcAddr");
    if (!gdpa) return -1;
    static const char *const names[] = {
        "vkCmdDraw", "vkCmdDrawIndexed", "vkCmdBindPipeline", "vkCmdBindVertexBuffers", "vkCmdBindIndexBuffer",
        "vkCmdPushDescriptorSetKHR", "vkCmdSetViewport", "vkCmdSetScissor", "vkCmdBeginRendering",
        "vkCmdEndRendering", "vkCmdClearAttachments", "vkCmdPipelineBarrier", "vkCmdCopyImageToBuffer",
        "vkCmdSetDepthBoundsTestEnable", "vkCmdSetDepthTestEnable", "vkCmdSetDepthWriteEnable",
        "vkCmdSetDepthCompareOp", "vkCmdSetStencilTestEnable", "vkCmdSetStencilOp", "vkCmdSetStencilReference",
        "vkCmdSetStencilCompareMask", "vkCmdSetStencilWriteMask", "vkCmdSetCullMode", "vkCmdSetFrontFace",
        "vkCmdSetDepthBiasEnable", "vkCmdSetDepthBias", "vkCmdSetBlendConstants", "vkCmdBindDescriptorSets",
        "vkCmdResolveImage"};
    void **slots = (void **)&vk;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        slots[i] = gdpa((D)(uintptr_t)device, names[i]);
        if (!slots[i]) return (int)i + 1;
    }
    return 0;
}

/* ---- plan ---------------------------------------------------------------------------------- */
#define NX_BLENDS 64
#define NX_POOLS_WINDOW 64
#define NO_FRAME UINT64_MAX     /* presents[]: a WRITEBACK's copy (no frame) */
#define EVENT_FRAME (UINT64_MAX - 1)   /* presents[]: an EVENT_SIGNAL (its packet's byte offset beside it) */
#define IMAGE_FRAME (UINT64_MAX - 2)   /* presents[]: a PRESENT_IMAGE (its packet's byte offset beside it) */
typedef struct { uint32_t pool; uint32_t pad; uint64_t offset, size; } nx_range;
/* layout: its packet index; target/depth: texture ids (EMPTY_ID: none); rt: the byte offset of the
 * RENDER_TARGETS packet in force (EMPTY_ID: TARGET/DEPTH_TARGET, `target` is the colour target);
 * blend[k]: the byte offset of the BLEND/BLEND_STATE packet of colour target k in force (EMPTY_ID:
 * none, blending off); mode: RASTER's polygon mode; a2c: MULTISAMPLE's alpha-to-coverage */
typedef struct { uint32_t program, layout, target, depth, rt, mode, a2c, blend[MAX_COLOR_TARGETS]; } nx_pipekey;
typedef struct {
    nx_range *ranges; uint32_t nranges;     /* out: distinct ranges, first-seen order */
    nx_pipekey *pipes; uint32_t npipes;     /* out: distinct pipeline keys */
    uint32_t *aux;                          /* out, per packet: range index / pipeline key index */
    uint32_t *hash; uint32_t hash_cap;      /* scratch: open addressing over ranges (power of 2) */
    uint32_t *textures; uint32_t ntextures; /* out: texture ids bound by TEXTURE (distinct) */
    uint64_t *presents; uint32_t npresents; /* out: (frame, texture) pairs */
    uint64_t *signals; uint32_t nsignals;   /* out: (fence, value) pairs */
    uint32_t *targets; uint32_t ntargets;   /* out: target ids (distinct) */
    nx_range *dirty; uint32_t ndirty;       /* out: DIRTY ranges, in order */
    uint32_t *poolsets; uint32_t npoolsets; /* out: byte offsets of POOLS packets (aux: the index), distinct
                                               among the last NX_POOLS_WINDOW by their bytes */
    uint32_t cap;                           /* capacity of every out array (the packet count) */
    uint32_t cur_prog, cur_layout, cur_target, have;
    uint32_t cur_depth, cur_rt, cur_mode, cur_a2c, cur_blend[MAX_COLOR_TARGETS];
    const uint8_t *base;                    /* the blob (set by nx_plan) */
    uint32_t blends[NX_BLENDS], nblends;    /* scratch: distinct blend packets' offsets */
} nx_plan_t;

static uint32_t add_distinct(uint32_t *arr, uint32_t *n, uint32_t v) {
    for (uint32_t i = 0; i < *n; i++) if (arr[i] == v) return i;
    arr[*n] = v;
    return (*n)++;
}

/* The offset of the first BLEND/BLEND_STATE packet of the blob with these bytes: a game that
 * re-sends the same blend state per draw keys one pipeline, not one per packet. */
static uint32_t blend_key(nx_plan_t *pl, const uint8_t *p, uint32_t size) {
    for (uint32_t i = 0; i < pl->nblends; i++) {
        const uint8_t *q = pl->base + pl->blends[i];
        if (q[0] == p[0] && memcmp(q, p, size) == 0) return pl->blends[i];
    }
    uint32_t off = (uint32_t)(p - pl->base);
    if (pl->nblends < NX_BLENDS) pl->blends[pl->nblends++] = off;
    return off;
}

static int visit_plan(void *ctx, int32_t idx, int op, const uint8_t *p, uint32_t size, nx_error *e) {
    nx_plan_t *pl = ctx;
    (void)size; (void)e;
    switch (op) {
    case OP_VERTEX: case OP_INDEX: case OP_UNIFORM: {
        const uint8_t *f = p + 4 + (op == OP_UNIFORM ? 4 : 0);
        nx_range r = {rd32(f), 0, rd64(f + 4), rd64(f + 12)};
        uint64_t h = (r.offset * 0x9E3779B97F4A7C15ull) ^ (r.size * 0xC2B2AE3D27D4EB4Full) ^ r.pool;
        uint32_t m = pl->hash_cap - 1, k = (uint32_t)(h >> 20) & m;
        for (;;) {
            uint32_t slot = pl->hash[k];
            if (slot == 0) {
                pl->ranges[pl->nranges] = r;
                pl->hash[k] = ++pl->nranges;
                pl->aux[idx] = pl->nranges - 1;
                break;
            }
            nx_range *q = &pl->ranges[slot - 1];
            if (q->pool == r.pool && q->offset == r.offset && q->size == r.size) { pl->aux[idx] = slot - 1; break; }
            k = (k + 1) & m;
        }
        break;
    }
    case OP_TEXTURE: add_distinct(pl->textures, &pl->ntextures, rd32(p + 8)); break;
    case OP_TARGET:
        pl->cur_target = rd32(p + 4);
        pl->cur_depth = pl->cur_rt = EMPTY_ID;
        add_distinct(pl->targets, &pl->ntargets, pl->cur_target);
        break;
    case OP_RENDER_TARGETS: {
        uint32_t cnt = rd32(p + 4);
        pl->cur_rt = (uint32_t)(p - pl->base);
        pl->cur_target = EMPTY_ID;
        pl->cur_depth = rd32(p + 8 + 4 * cnt);
        for (uint32_t k = 0; k < cnt; k++)
            if (rd32(p + 8 + 4 * k) != EMPTY_ID) add_distinct(pl->targets, &pl->ntargets, rd32(p + 8 + 4 * k));
        if (pl->cur_depth != EMPTY_ID) add_distinct(pl->targets, &pl->ntargets, pl->cur_depth);
        break;
    }
    case OP_DEPTH_TARGET:
        pl->cur_rt = EMPTY_ID;
        pl->cur_target = rd32(p + 4);
        pl->cur_depth = rd32(p + 8);
        if (pl->cur_target != EMPTY_ID) add_distinct(pl->targets, &pl->ntargets, pl->cur_target);
        if (pl->cur_depth != EMPTY_ID) add_distinct(pl->targets, &pl->ntargets, pl->cur_depth);
        break;
    case OP_BLEND:
    case OP_BLEND_STATE:
        pl->cur_blend[op == OP_BLEND ? 0 : rd32(p + 4)] = blend_key(pl, p, size);
        break;
    case OP_RASTER:
        pl->cur_mode = rd32(p + 12);
        break;
    case OP_MULTISAMPLE:
        pl->cur_a2c = rd32(p + 8);
        break;
    case OP_RESOLVE:
        add_distinct(pl->targets, &pl->ntargets, rd32(p + 4));
        add_distinct(pl->targets, &pl->ntargets, rd32(p + 8));
        break;
    case OP_PROGRAM: pl->cur_prog = rd32(p + 4); pl->have |= 1; break;
    case OP_VERTEX_LAYOUT:   /* aux: the packet's byte offset in the blob (its tuple for pipelines) */
        pl->cur_layout = (uint32_t)idx;
        pl->have |= 2;
        pl->aux[idx] = (uint32_t)(p - pl->base);
        break;
    case OP_PRESENT: case OP_WRITEBACK:    /* copies out, in order; a WRITEBACK's frame: NO_FRAME */
        pl->presents[2 * pl->npresents] = op == OP_PRESENT ? rd64(p + 4) : NO_FRAME;
        pl->presents[2 * pl->npresents + 1] = rd32(p + (op == OP_PRESENT ? 12 : 4));
        pl->npresents++;
        break;
    case OP_POOLS: {
        uint32_t i = pl->npoolsets, lo = i > NX_POOLS_WINDOW ? i - NX_POOLS_WINDOW : 0;
        while (i > lo && memcmp(pl->base + pl->poolsets[i - 1], p, size)) i--;
        if (i > lo) pl->aux[idx] = i - 1;
        else { pl->poolsets[pl->npoolsets] = (uint32_t)(p - pl->base); pl->aux[idx] = pl->npoolsets++; }
        for (int k = 0; k < POOL_TEXTURES; k++)     /* sampled: uploaded like TEXTURE's */
            if (rd32(p + 4 + 4 * k) != EMPTY_ID) add_distinct(pl->textures, &pl->ntextures, rd32(p + 4 + 4 * k));
        break;
    }
    case OP_EVENT_SIGNAL:   /* applied after the run, in order with the write-backs */
    case OP_PRESENT_IMAGE:  /* made from the snapshot after the run */
        pl->presents[2 * pl->npresents] = op == OP_EVENT_SIGNAL ? EVENT_FRAME : IMAGE_FRAME;
        pl->presents[2 * pl->npresents + 1] = (uint32_t)(p - pl->base);
        pl->npresents++;
        break;
    case OP_DIRTY: {
        nx_range r = {rd32(p + 4), 0, rd64(p + 8), rd64(p + 16)};
        pl->dirty[pl->ndirty++] = r;
        break;
    }
    case OP_SIGNAL:
        pl->signals[2 * pl->nsignals] = rd32(p + 4);
        pl->signals[2 * pl->nsignals + 1] = rd64(p + 8);
        pl->nsignals++;
        break;
    case OP_DRAW: case OP_DRAW_INDEXED: {
        uint32_t i;
        for (i = 0; i < pl->npipes; i++) {
            nx_pipekey *k = &pl->pipes[i];
            if (k->program == pl->cur_prog && k->layout == pl->cur_layout && k->target == pl->cur_target
                && k->depth == pl->cur_depth && k->rt == pl->cur_rt && k->mode == pl->cur_mode && k->a2c == pl->cur_a2c
                && !memcmp(k->blend, pl->cur_blend, sizeof k->blend)) break;
        }
        if (i == pl->npipes) {
            nx_pipekey *k = &pl->pipes[pl->npipes++];
            k->program = pl->cur_prog; k->layout = pl->cur_layout; k->target = pl->cur_target;
            k->depth = pl->cur_depth; k->rt = pl->cur_rt; k->mode = pl->cur_mode; k->a2c = pl->cur_a2c;
            memcpy(k->blend, pl->cur_blend, sizeof k->blend);
        }
        pl->aux[idx] = i;
        break;
    }
    }
    return NX_OK;
}

/* Plan a blob nx_pkt_check passed (no fallback).  `pl`'s arrays hold `cap` entries each. */
int nx_plan(const uint8_t *buf, size_t len, nx_plan_t *pl, nx_error *e) {
    memset(pl->hash, 0, sizeof *pl->hash * pl->hash_cap);
    pl->nranges = pl->npipes = pl->ntextures = pl->npresents = pl->nsignals = pl->ntargets = pl->ndirty = 0;
    pl->npoolsets = 0;
    pl->have = 0;
    pl->cur_target = pl->cur_depth = pl->cur_rt = EMPTY_ID;
    for (int k = 0; k < MAX_COLOR_TARGETS; k++) pl->cur_blend[k] = EMPTY_ID;
    pl->cur_mode = pl->cur_a2c = 0;
    pl->nblends = 0;
    pl->base = buf;
    return walk(buf, len, visit_plan, pl, NULL, e);
}

/* ---- record ------------------------------------------------------------------------------- */
/* by id; flags 1: a stencil aspect, 2: a depth format (its depth aspect is copied out) */
typedef struct { uint32_t id, width, height, flags; H image, view, sample_view; } nx_rt;
typedef struct { uint32_t id, pad; H view; } nx_view;                                       /* by id */
typedef struct { uint32_t id, pad; H sampler; } nx_sampler_h;                               /* by id */
typedef struct { uint32_t id, pools; H views[4]; H samplers[4]; } nx_progdef;   /* by id; pools: reads set 1 */
typedef struct {
    D cb; H layout;                          /* command buffer (begun), pipeline layout */
    H arena; const uint8_t *arena_map;       /* the snapshot's buffer and its mapping */
    const uint64_t *range_at;                /* arena offset of each planned range */
    const nx_range *ranges;
    const H *pipes;                          /* pipeline of each planned key */
    const nx_rt *rts; uint32_t nrts;
    const nx_view *views; uint32_t nviews;   /* sampled textures' views */
    const nx_sampler_h *samplers; uint32_t nsamplers;
    const nx_progdef *progs; uint32_t nprogs;
    H dummy_ubo; uint64_t dummy_ubo_range;
    H readback; const uint64_t *present_at;  /* read-back buffer, offset of each PRESENT/WRITEBACK */
    const uint64_t *stencil_at;              /* ... and of a depth target's stencil aspect past it */
    const uint32_t *aux;                     /* nx_plan's */
    const H *pool_sets;                      /* set 1 of each planned POOLS packet, then the empty pools' */
    uint32_t npool_sets;
    uint64_t draws;                          /* out */
    uint64_t skipped;                        /* out: draws whose pipeline was 0 (still being made) */
} nx_rec_t;

typedef struct {
    nx_rec_t *r;
    const nx_rt *target;             /* colour target 0 (NULL: none) */
    const nx_rt *colors[MAX_COLOR_TARGETS]; uint32_t ncolors;   /* every bound colour target */
    const nx_rt *depth;              /* the depth target (NULL: none) */
    int rendering, pipe_dirty, dyn_dirty;
    uint32_t desc_dirty;             /* push_descriptors' bits: bindings whose source changed */
    /* dynamic state as the packets set it (DEPTH_STENCIL's 18 fields, RASTER's cull, front face,
     * bias enable, DEPTH_BIAS, BLEND_CONSTANT) and as last set in the command buffer (valid: set) */
    uint32_t ds[18], raster[3];
    float bias[3], constants[4];
    int dyn_valid;
    uint32_t set_ds[18], set_raster[3];
    float set_bias[3], set_constants[4];
    int have_viewport, have_scissor;
    float viewport[4];
    uint32_t scissor[4];
    H bound_pipe;
    const nx_progdef *prog;
    int32_t ubo[4];                  /* range index bound at each slot, -1 none */
    uint32_t pools_idx; int pools_dirty;     /* the POOLS in force (index into pool_sets) */
    H tex_view[4], tex_smp[4];       /* bound at each slot (0: none) */
    uint32_t stride, attr_end;
    int32_t vertex_range, index_range;
    uint32_t index_size;
    uint32_t npresent;
    int pushed_all;                  /* the 8 set-0 descriptors pushed once in this command buffer */
    VkDescriptorBufferInfo_ pushed_bi[4];
    VkDescriptorImageInfo_ pushed_ii[4];
} rstate;

static void barrier(D cb) {
    VkMemoryBarrier_ b = {ST_MEMORY_BARRIER, NULL, ACCESS_MEMORY_WRITE, ACCESS_MEMORY_READ | ACCESS_MEMORY_WRITE};
    vk.PipelineBarrier(cb, STAGE_ALL_COMMANDS, STAGE_ALL_COMMANDS, 0, 1, &b, 0, NULL, 0, NULL);
}

static const nx_rt *sized(rstate *s) { return s->target ? s->target : s->depth; }   /* one size (checked) */

static void set_scissor(rstate *s) {
    uint32_t w = sized(s)->width, h = sized(s)->height, x0 = 0, y0 = 0, x1 = w, y1 = h;
    if (s->have_scissor) {
        uint64_t sx = s->scissor[0], sy = s->scissor[1];
        x0 = sx < w ? (uint32_t)sx : w;
        y0 = sy < h ? (uint32_t)sy : h;
        x1 = sx + s->scissor[2] < w ? (uint32_t)(sx + s->scissor[2]) : w;
        y1 = sy + s->scissor[3] < h ? (uint32_t)(sy + s->scissor[3]) : h;
    }
    VkRect2D_ r = {(int32_t)x0, (int32_t)y0, x1 - x0, y1 - y0};
    vk.SetScissor(s->r->cb, 0, 1, &r);
}

static void attachment(VkRenderingAttachmentInfo_ *att, H view) {
    memset(att, 0, sizeof *att);
    att->sType = ST_RENDERING_ATTACHMENT_INFO;
    att->view = view;
    att->layout = LAYOUT_GENERAL;
    att->loadOp = LOAD_OP_LOAD;
    att->storeOp = STORE_OP_STORE;
}

static void begin(rstate *s) {
    if (s->rendering) return;
    VkRenderingAttachmentInfo_ att[MAX_COLOR_TARGETS], datt;
    VkRenderingInfo_ ri;
    memset(&ri, 0, sizeof ri);
    ri.sType = ST_RENDERING_INFO;
    ri.area.w = sized(s)->width;
    ri.area.h = sized(s)->height;
    ri.layers = 1;
    for (uint32_t k = 0; k < s->ncolors; k++) attachment(&att[k], s->colors[k]->view);
    ri.ncolor = s->ncolors;
    ri.colors = s->ncolors ? att : NULL;
    if (s->depth) {      /* the depth image's view; its stencil aspect through the same view */
        attachment(&datt, s->depth->view);
        ri.depth = &datt;
        if (s->depth->flags & 1) ri.stencil = &datt;
    }
    vk.BeginRendering(s->r->cb, &ri);
    VkViewport_ vp = {0, 0, (float)ri.area.w, (float)ri.area.h, 0, 1};
    if (s->have_viewport) { vp.x = s->viewport[0]; vp.y = s->viewport[1]; vp.w = s->viewport[2]; vp.h = s->viewport[3]; }
    vk.SetViewport(s->r->cb, 0, 1, &vp);
    set_scissor(s);
    s->rendering = 1;
}

static void end(rstate *s) {
    if (s->rendering) {
        vk.EndRendering(s->r->cb);
        barrier(s->r->cb);
        s->rendering = 0;
    }
}

/* replay.py's _Dynamic.set: the dynamic state's calls whose values changed since they were last
 * set in this command buffer (all of them the first time: depth bounds off once). */
static void set_dynamic(rstate *s) {
    D cb = s->r->cb;
    const uint32_t *ds = s->ds;
    int all = !s->dyn_valid;
    if (all) vk.SetDepthBoundsTestEnable(cb, 0);
    if (all || memcmp(ds, s->set_ds, 4 * sizeof *ds)) {
        vk.SetDepthTestEnable(cb, ds[0]);
        vk.SetDepthWriteEnable(cb, ds[1]);
        vk.SetDepthCompareOp(cb, ds[2]);
        vk.SetStencilTestEnable(cb, ds[3]);
    }
    if (all || memcmp(ds + 4, s->set_ds + 4, 14 * sizeof *ds)) {
        /* per face: fail, depth fail, pass, func, ref, read mask, write mask; one call for both
         * faces where they are equal (Vulkan's order: fail, pass, depth fail, func) */
        int same = !memcmp(ds + 4, ds + 11, 7 * sizeof *ds);
        for (int f = 0; f < (same ? 1 : 2); f++) {
            const uint32_t *x = ds + 4 + 7 * f;
            uint32_t mask = same ? STENCIL_FRONT_AND_BACK : f ? STENCIL_BACK : STENCIL_FRONT;
            vk.SetStencilOp(cb, mask, x[0], x[2], x[1], x[3]);
            vk.SetStencilReference(cb, mask, x[4]);
            vk.SetStencilCompareMask(cb, mask, x[5]);
            vk.SetStencilWriteMask(cb, mask, x[6]);
        }
    }
    if (all || s->raster[0] != s->set_raster[0]) vk.SetCullMode(cb, s->raster[0]);
    if (all || s->raster[1] != s->set_raster[1]) vk.SetFrontFace(cb, s->raster[1]);
    if (all || s->raster[2] != s->set_raster[2]) vk.SetDepthBiasEnable(cb, s->raster[2]);
    if (all || memcmp(s->bias, s->set_bias, sizeof s->bias))
        vk.SetDepthBias(cb, s->bias[0], s->bias[2], s->bias[1]);   /* constant, clamp, slope */
    if (all || memcmp(s->constants, s->set_constants, sizeof s->constants)) vk.SetBlendConstants(cb, s->constants);
    memcpy(s->set_ds, ds, sizeof s->set_ds);
    memcpy(s->set_raster, s->raster, sizeof s->raster);
    memcpy(s->set_bias, s->bias, sizeof s->bias);
    memcpy(s->set_constants, s->constants, sizeof s->constants);
    s->dyn_valid = 1;
}

/* The set-0 descriptors the draw needs, pushed where they differ from what was pushed last: push
 * descriptors "can be updated incrementally" and stay until overwritten or the set is disturbed
 * (Vulkan spec, vkCmdPushDescriptorSet; one pipeline layout for every pipeline here, so nothing
 * disturbs them); all 8 the first time in a command buffer (they start undefined).  A uniform
 * range changing every draw pushes one descriptor, not eight.  ``desc_dirty``: a bit per binding
 * whose source changed since the last push (bit b: uniform slot b, bit 4+k: texture slot k; all
 * of them at a PROGRAM, whose defaults fill unbound texture slots): only those are rebuilt and
 * compared, so a draw after one UNIFORM looks at one binding, not eight. */
static void push_descriptors(rstate *s) {
    nx_rec_t *r = s->r;
    VkDescriptorBufferInfo_ bi[4];
    VkDescriptorImageInfo_ ii[4];
    VkWriteDescriptorSet_ w[8];
    uint32_t n = 0, dirty = s->pushed_all ? s->desc_dirty : 0xffu;
    for (int b = 0; b < 4; b++) {
        if (!(dirty & (1u << b))) continue;
        VkDescriptorBufferInfo_ *x = &bi[b];
        memset(x, 0, sizeof *x);
        if (s->ubo[b] < 0) {
            x->buffer = r->dummy_ubo; x->offset = 0; x->range = r->dummy_ubo_range;
        } else {
            x->buffer = r->arena; x->offset = r->range_at[s->ubo[b]]; x->range = r->ranges[s->ubo[b]].size;
        }
        if (s->pushed_all && !memcmp(x, &s->pushed_bi[b], sizeof *x)) continue;
        s->pushed_bi[b] = *x;
        memset(&w[n], 0, sizeof w[n]);
        w[n].sType = ST_WRITE_DESCRIPTOR_SET; w[n].binding = b; w[n].count = 1;
        w[n].type = DESC_UNIFORM_BUFFER; w[n].buffers = x;
        n++;
    }
    for (int k = 0; k < 4; k++) {
        if (!(dirty & (16u << k))) continue;
        VkDescriptorImageInfo_ *x = &ii[k];
        memset(x, 0, sizeof *x);
        if (s->tex_view[k]) { x->view = s->tex_view[k]; x->sampler = s->tex_smp[k]; }
        else { x->view = s->prog->views[k]; x->sampler = s->prog->samplers[k]; }
        x->layout = LAYOUT_GENERAL;
        if (s->pushed_all && !memcmp(x, &s->pushed_ii[k], sizeof *x)) continue;
        s->pushed_ii[k] = *x;
        memset(&w[n], 0, sizeof w[n]);
        w[n].sType = ST_WRITE_DESCRIPTOR_SET; w[n].binding = 4 + k; w[n].count = 1;
        w[n].type = DESC_COMBINED_IMAGE_SAMPLER; w[n].images = x;
        n++;
    }
    s->pushed_all = 1;
    if (n) vk.PushDescriptorSetKHR(r->cb, BIND_GRAPHICS, r->layout, 0, n, w);
}

static int check_indices(rstate *s, int32_t idx, const uint8_t *p, nx_error *e) {
    uint32_t count = rd32(p + 4), first = rd32(p + 12);
    int32_t voff = (int32_t)rd32(p + 16);
    if (count == 0) return NX_OK;
    const uint8_t *base = s->r->arena_map + s->r->range_at[s->index_range] + (uint64_t)first * s->index_size;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t v;
        if (s->index_size == 2) { uint16_t x; memcpy(&x, base + 2 * i, 2); v = x; } else memcpy(&v, base + 4 * i, 4);
        if ((int64_t)v < lo) lo = v;
        if ((int64_t)v > hi) hi = v;
    }
    lo += voff;
    hi += voff;
    uint64_t vsize = s->r->ranges[s->vertex_range].size;
    if (lo < 0 || (uint64_t)hi * s->stride + s->attr_end > vsize)
        return fail(e, idx, OP_DRAW_INDEXED, "vertex_offset", "DRAW_INDEXED: vertex indices %lld..%lld run outside the %llu-byte vertex buffer",
                    (long long)lo, (long long)hi, (unsigned long long)vsize);
    return NX_OK;
}

static int visit_record(void *ctx, int32_t idx, int op, const uint8_t *p, uint32_t size, nx_error *e) {
    rstate *s = ctx;
    nx_rec_t *r = s->r;
    D cb = r->cb;
    (void)size;
    switch (op) {
    case OP_TARGET: case OP_DEPTH_TARGET: {
        end(s);
        uint32_t c = rd32(p + 4), d = op == OP_DEPTH_TARGET ? rd32(p + 8) : EMPTY_ID;
        s->target = s->colors[0] = c == EMPTY_ID ? NULL : find(r->rts, r->nrts, sizeof(nx_rt), c);
        s->ncolors = s->target != NULL;
        s->depth = d == EMPTY_ID ? NULL : find(r->rts, r->nrts, sizeof(nx_rt), d);
        s->pipe_dirty = 1;
        s->have_viewport = 0;
        break;
    }
    case OP_RENDER_TARGETS: {      /* checked: colour targets 0..n-1 without a gap, then EMPTYs */
        end(s);
        uint32_t cnt = rd32(p + 4), d = rd32(p + 8 + 4 * cnt);
        s->ncolors = 0;
        for (uint32_t k = 0; k < cnt; k++)
            if (rd32(p + 8 + 4 * k) != EMPTY_ID) s->colors[s->ncolors++] = find(r->rts, r->nrts, sizeof(nx_rt), rd32(p + 8 + 4 * k));
        s->target = s->ncolors ? s->colors[0] : NULL;
        s->depth = d == EMPTY_ID ? NULL : find(r->rts, r->nrts, sizeof(nx_rt), d);
        s->pipe_dirty = 1;
        s->have_viewport = 0;
        break;
    }
    case OP_CLEAR: case OP_CLEAR_TARGET: case OP_CLEAR_DEPTH_STENCIL: {
        begin(s);
        VkClearAttachment_ a;
        memset(&a, 0, sizeof a);
        if (op == OP_CLEAR) {
            a.aspect = ASPECT_COLOR;
            memcpy(a.v.f, p + 4, 16);
        } else if (op == OP_CLEAR_TARGET) {     /* colour attachment `index` */
            a.aspect = ASPECT_COLOR;
            a.att = rd32(p + 4);
            memcpy(a.v.f, p + 8, 16);
        } else {      /* the stencil of a format without one: nothing to clear there */
            uint32_t asp = rd32(p + 12);
            a.aspect = (asp & 1 ? ASPECT_DEPTH : 0) | (asp & 2 && s->depth->flags & 1 ? ASPECT_STENCIL : 0);
            a.v.ds.depth = rdf(p + 4);
            a.v.ds.stencil = rd32(p + 8);
            if (!a.aspect) break;
        }
        VkClearRect_ rc = {{0, 0, sized(s)->width, sized(s)->height}, 0, 1};
        vk.ClearAttachments(cb, 1, &a, 1, &rc);
        break;
    }
    case OP_DEPTH_STENCIL:
        for (int k = 0; k < 18; k++) s->ds[k] = rd32(p + 4 + 4 * k);
        s->dyn_dirty = 1;
        break;
    case OP_RASTER:
        s->raster[0] = rd32(p + 4);
        s->raster[1] = rd32(p + 8);
        s->raster[2] = rd32(p + 16);
        s->dyn_dirty = 1;
        break;
    case OP_DEPTH_BIAS:
        memcpy(s->bias, p + 4, 12);
        s->dyn_dirty = 1;
        break;
    case OP_BLEND_CONSTANT:
        memcpy(s->constants, p + 4, 16);
        s->dyn_dirty = 1;
        break;
    case OP_BLEND: case OP_BLEND_STATE: case OP_MULTISAMPLE:
        s->pipe_dirty = 1;        /* the planned key of the next draw names its pipeline */
        break;
    case OP_RESOLVE: {            /* checked: a multisampled colour target into a one-sample one */
        end(s);
        const nx_rt *a = find(r->rts, r->nrts, sizeof(nx_rt), rd32(p + 4));
        const nx_rt *b = find(r->rts, r->nrts, sizeof(nx_rt), rd32(p + 8));
        VkImageResolve_ rv;
        memset(&rv, 0, sizeof rv);
        rv.src.aspect = rv.dst.aspect = ASPECT_COLOR;
        rv.src.count = rv.dst.count = 1;
        rv.w = a->width; rv.h = a->height; rv.d = 1;
        barrier(cb);
        vk.ResolveImage(cb, a->image, LAYOUT_GENERAL, b->image, LAYOUT_GENERAL, 1, &rv);
        barrier(cb);
        break;
    }
    case OP_PROGRAM:
        s->prog = find(r->progs, r->nprogs, sizeof(nx_progdef), rd32(p + 4));
        s->pipe_dirty = 1;
        s->desc_dirty = 0xffu;
        break;
    case OP_VERTEX_LAYOUT: {
        uint32_t cnt = rd32(p + 12);
        s->stride = rd32(p + 4);
        s->attr_end = 0;
        for (uint32_t k = 0; k < cnt; k++) {
            const uint8_t *a = p + 16 + 12 * k;
            uint32_t end_ = rd32(a + 8) + VERTEX_BYTES[rd32(a + 4)];
            if (end_ > s->attr_end) s->attr_end = end_;
        }
        s->pipe_dirty = 1;
        break;
    }
    case OP_VERTEX: {
        uint64_t off = r->range_at[r->aux[idx]];
        s->vertex_range = (int32_t)r->aux[idx];
        vk.BindVertexBuffers(cb, 0, 1, &r->arena, &off);
        break;
    }
    case OP_INDEX:
        s->index_range = (int32_t)r->aux[idx];
        s->index_size = rd32(p + 24);
        vk.BindIndexBuffer(cb, r->arena, r->range_at[r->aux[idx]], s->index_size == 2 ? INDEX_UINT16 : INDEX_UINT32);
        break;
    case OP_UNIFORM:
        s->ubo[rd32(p + 4)] = (int32_t)r->aux[idx];
        s->desc_dirty |= 1u << rd32(p + 4);
        break;
    case OP_TEXTURE: {
        uint32_t slot = rd32(p + 4);
        const nx_view *v = find(r->views, r->nviews, sizeof(nx_view), rd32(p + 8));
        const nx_sampler_h *sm = find(r->samplers, r->nsamplers, sizeof(nx_sampler_h), rd32(p + 12));
        s->tex_view[slot] = v->view;
        s->tex_smp[slot] = sm->sampler;
        s->desc_dirty |= 16u << slot;
        break;
    }
    case OP_VIEWPORT:
        memcpy(s->viewport, p + 4, 16);
        s->have_viewport = 1;
        if (s->rendering) {
            VkViewport_ vp = {s->viewport[0], s->viewport[1], s->viewport[2], s->viewport[3], 0, 1};
            vk.SetViewport(cb, 0, 1, &vp);
        }
        break;
    case OP_SCISSOR:
        memcpy(s->scissor, p + 4, 16);
        s->have_scissor = 1;
        if (s->rendering) set_scissor(s);
        break;
    case OP_DRAW: case OP_DRAW_INDEXED:
        begin(s);
        if (s->pipe_dirty) {
            H pipe = r->pipes[r->aux[idx]];
            if (!pipe) {             /* policy skip: its pipeline is still being made */
                r->skipped++;
                break;
            }
            if (pipe != s->bound_pipe) {
                vk.BindPipeline(cb, BIND_GRAPHICS, pipe);
                s->bound_pipe = pipe;
            }
            s->pipe_dirty = 0;
        }
        if (s->dyn_dirty || !s->dyn_valid) {
            set_dynamic(s);
            s->dyn_dirty = 0;
        }
        if (s->desc_dirty) {
            push_descriptors(s);
            s->desc_dirty = 0;
        }
        if (s->prog->pools && s->pools_dirty) {
            vk.BindDescriptorSets(cb, BIND_GRAPHICS, r->layout, 1, 1, &r->pool_sets[s->pools_idx], 0, NULL);
            s->pools_dirty = 0;
        }
        if (op == OP_DRAW) {
            vk.Draw(cb, rd32(p + 4), rd32(p + 8), rd32(p + 12), rd32(p + 16));
        } else {
            int rc = check_indices(s, idx, p, e);
            if (rc) { end(s); return rc; }
            vk.DrawIndexed(cb, rd32(p + 4), rd32(p + 8), rd32(p + 12), (int32_t)rd32(p + 16), rd32(p + 20));
        }
        r->draws++;
        break;
    case OP_PRESENT: case OP_WRITEBACK: {     /* a target's texels into the read-back buffer */
        end(s);
        const nx_rt *t = find(r->rts, r->nrts, sizeof(nx_rt), rd32(p + (op == OP_PRESENT ? 12 : 4)));
        barrier(cb);
        VkBufferImageCopy_ c[2];
        memset(c, 0, sizeof c);
        uint32_t n = 1, i = s->npresent++;
        c[0].offset = r->present_at[i];
        c[0].aspect = t->flags & 2 ? ASPECT_DEPTH : ASPECT_COLOR;
        if (t->flags & 1) {      /* a depth target's stencil aspect: its own region (replay._aspect_copies) */
            c[1] = c[0];
            c[1].offset = r->present_at[i] + r->stencil_at[i];
            c[1].aspect = ASPECT_STENCIL;
            n = 2;
        }
        for (uint32_t k = 0; k < n; k++) {
            c[k].count = 1;
            c[k].w = t->width; c[k].h = t->height; c[k].d = 1;
        }
        vk.CopyImageToBuffer(cb, t->image, LAYOUT_GENERAL, r->readback, n, c);
        barrier(cb);
        break;
    }
    case OP_SIGNAL:   /* published by the caller after the run */
    case OP_DIRTY:    /* applied by the caller before the snapshot */
        break;
    case OP_EVENT_SIGNAL:   /* the caller applies it after the run; its place in the copies' order */
    case OP_PRESENT_IMAGE:  /* the caller makes its frame from the snapshot */
        s->npresent++;
        break;
    case OP_POOLS:
        s->pools_idx = r->aux[idx];
        s->pools_dirty = 1;
        break;
    default:          /* nx_pkt_check sends every other op to the Python path */
        return fail(e, idx, op, "op", "%s: not replayed natively (nx_pkt_check should have said so)", op_name(op));
    }
    return NX_OK;
}

/* Record a planned blob into r->cb.  Returns NX_OK or NX_BAD (an index check failed: rendering
 * was ended, the caller ends the command buffer and drops the submission). */
int nx_record(const uint8_t *buf, size_t len, nx_rec_t *r, nx_error *e) {
    rstate s;
    memset(&s, 0, sizeof s);
    s.r = r;
    s.pipe_dirty = 1;
    s.desc_dirty = 0xffu;
    /* packets.DS_DEFAULT: depth and stencil tests off, less, keep/always, ref 0, masks 255 */
    static const uint32_t ds_default[18] = {0, 0, 1, 0, 0, 0, 0, 7, 0, 255, 255, 0, 0, 0, 7, 0, 255, 255};
    memcpy(s.ds, ds_default, sizeof s.ds);
    s.vertex_range = s.index_range = -1;
    for (int k = 0; k < 4; k++) s.ubo[k] = -1;
    s.pools_idx = r->npool_sets - 1;     /* no POOLS yet: every entry empty */
    s.pools_dirty = 1;
    r->draws = r->skipped = 0;
    memset(e, 0, sizeof *e);
    int rc = walk(buf, len, visit_record, &s, NULL, e);
    if (rc == NX_OK) end(&s);
    return rc;
}

/* Sizes and field offsets of the Vulkan structures declared above, for the test that checks them
 * against the `vulkan` binding's: pairs (size or offset) in a fixed order (native_replay.LAYOUT). */
#define OFF(T, f) (uint32_t)offsetof(T, f)
uint32_t nx_vk_layout(uint32_t *out) {
    uint32_t v[] = {
        sizeof(VkViewport_), sizeof(VkRect2D_), sizeof(VkClearAttachment_), OFF(VkClearAttachment_, v),
        sizeof(VkClearRect_), OFF(VkClearRect_, base), sizeof(VkMemoryBarrier_), OFF(VkMemoryBarrier_, src),
        sizeof(VkRenderingAttachmentInfo_), OFF(VkRenderingAttachmentInfo_, view), OFF(VkRenderingAttachmentInfo_, layout),
        OFF(VkRenderingAttachmentInfo_, resolveView), OFF(VkRenderingAttachmentInfo_, loadOp),
        OFF(VkRenderingAttachmentInfo_, storeOp), OFF(VkRenderingAttachmentInfo_, clear),
        sizeof(VkRenderingInfo_), OFF(VkRenderingInfo_, area), OFF(VkRenderingInfo_, layers),
        OFF(VkRenderingInfo_, ncolor), OFF(VkRenderingInfo_, colors), OFF(VkRenderingInfo_, stencil),
        sizeof(VkDescriptorBufferInfo_), sizeof(VkDescriptorImageInfo_), OFF(VkDescriptorImageInfo_, layout),
        sizeof(VkWriteDescriptorSet_), OFF(VkWriteDescriptorSet_, set), OFF(VkWriteDescriptorSet_, binding),
        OFF(VkWriteDescriptorSet_, type), OFF(VkWriteDescriptorSet_, images), OFF(VkWriteDescriptorSet_, buffers),
        sizeof(VkBufferImageCopy_), OFF(VkBufferImageCopy_, aspect), OFF(VkBufferImageCopy_, ox),
        OFF(VkBufferImageCopy_, w), sizeof(VkImageResolve_), OFF(VkImageResolve_, sx), OFF(VkImageResolve_, dst),
        OFF(VkImageResolve_, dx), OFF(VkImageResolve_, w),
        ST_MEMORY_BARRIER, ST_WRITE_DESCRIPTOR_SET, ST_RENDERING_INFO, ST_RENDERING_ATTACHMENT_INFO,
        LAYOUT_GENERAL, LOAD_OP_LOAD, STORE_OP_STORE, ASPECT_COLOR, STAGE_ALL_COMMANDS, ACCESS_MEMORY_READ,
        ACCESS_MEMORY_WRITE, DESC_UNIFORM_BUFFER, DESC_COMBINED_IMAGE_SAMPLER, BIND_GRAPHICS, INDEX_UINT16,
        INDEX_UINT32, STENCIL_FRONT_AND_BACK, COMPARE_LESS, COMPARE_ALWAYS, ASPECT_DEPTH, ASPECT_STENCIL,
        STENCIL_FRONT, STENCIL_BACK};
    memcpy(out, v, sizeof v);
    return (uint32_t)(sizeof v / sizeof *v);
}
