/* recorder.c — the NVN front end's per-draw path in C: the guest's command-buffer calls on the
 * hot path (draws; vertex/index/uniform/texture/program binds; vertex attribute/stream, polygon,
 * depth-stencil, colour, blend, channel-mask and multisample state and the stencil values;
 * viewport and scissor)
 * recorded straight into binary packets (gpu_host/PROTOCOL.md "Binary packets", version 1), no
 * Python and no msgpack per call.  cpu_host/horizon/hle/nvn/native.py builds and binds it.
 *
 * Contract:
 *  - Python keeps object creation and control (frontend.py): it tells this file about memory
 *    pools (id, guest address, size), programs (registered, reads the bindless pools), texture
 *    and sampler pool slots, and each recording as it begins (the command buffer's guest struct
 *    address and id) and ends; the other command-buffer calls (targets, clears, depth bias,
 *    blend colour, resolves, events) append their packets here through nxr_append, so one
 *    recording is one packet stream in call order.
 *  - Each hot entry point is a host function (`void fn(NxCpu *)`, bound with nx_host_bind): it
 *    checks its arguments exactly as frontend.py's Python function of the same call does, and
 *    records the same packets (a draw's VERTEX_LAYOUT when the layout changed, POOLS before a
 *    draw of a program that reads the pools when the pool entries changed).  Anything it cannot
 *    answer — a command-buffer pointer it does not know, a bad argument — goes to the Python
 *    function of that call (`fallback`), which names the error in the crash report (or, for a
 *    command buffer whose struct was copied, tells this file the new address and retries).
 *  - Guest addresses are host addresses (nxrt.h).  The command buffer's struct was checked
 *    readable by Python when its recording began; it is read again (its id) at each call, so a
 *    re-initialised struct goes to the Python path.  A program pointer is checked with the
 *    kernel's range check (nx_hz_range_ok) before it is read.
 *  - One mutex around all state: guest threads may record different command buffers at once.
 *  - A recording's packets are kept in chunks of at most NXR_CHUNK bytes (whole packets), so the
 *    client can cut a submission into ring records (at most 1 MiB each) without walking packets.
 *  - In the command arena, each chunk the recording fills is *staged* as it fills (PROTOCOL.md
 *    "Staged chunks"): its serial, arena offset and length go into the stage queue in the arena's
 *    first page and the doorbell is rung, so the GPU process copies it while the recording goes on;
 *    the last chunk is staged when the recording ends (if it holds NXR_STAGE_MIN bytes or more:
 *    a smaller copy costs less than the wake-up), copied while the client submits.
 */
#include <unistd.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nxrt.h"

#define EMPTY 0xFFFFFFFFu
#define MAX_ATTRS 8
#define MAX_SLOTS 4
#define POOL_TEXTURES 16
#define POOL_SAMPLERS 4
#define MAX_RECS 256
#define MAX_POOLS 1024
#define SAMPLER_SLOTS 4096
#define TEXTURE_SLOTS (1u << 20)
#define HANDLE_SAMPLER_SHIFT 20
#define NXR_CHUNK (128u << 10)   /* blob.py CHUNK: a ring part each, published as written (overlap) */

enum { OP_BLEND = 16, OP_BLEND_STATE = 26, OP_DEPTH_BIAS = 24, OP_BLEND_CONSTANT = 27, OP_MULTISAMPLE = 28, OP_DEPTH_STENCIL = 22, OP_RASTER = 23, OP_PROGRAM = 5, OP_VERTEX_LAYOUT = 6, OP_VERTEX = 7, OP_INDEX = 8, OP_UNIFORM = 9, OP_TEXTURE = 10,
       OP_VIEWPORT = 11, OP_DRAW = 12, OP_DRAW_INDEXED = 13, OP_POOLS = 19, OP_SCISSOR = 25 };

typedef void (*HostFn)(NxCpu *);
typedef int (*RangeOk)(uint64_t addr, uint64_t len, uint32_t perm);

typedef struct { uint32_t id; uint64_t addr, size; } Pool;
typedef struct { uint64_t offset; uint32_t count; uint32_t stage; } Chunk;   /* stage: its serial once staged (0: not) */

typedef struct {
    uint64_t addr[4];           /* guest struct addresses naming this command buffer (0: unused) */
    uint64_t id;                /* the command buffer's object id (0: slot free) */
    uint8_t *buf; size_t len, cap;
    Chunk *chunks; uint32_t nchunks, chunk_cap;
    uint32_t stride, nattr, attrs[MAX_ATTRS][3];      /* bound vertex stream / attribute state */
    int layout_sent; uint32_t l_stride, l_topo, l_nattr, l_attrs[MAX_ATTRS][3];   /* last VERTEX_LAYOUT */
    int prog_pools;                                   /* the bound program reads the pools */
    int pools_sent; uint32_t l_pools[POOL_TEXTURES + POOL_SAMPLERS];              /* last POOLS */
    uint32_t ds[18];            /* DEPTH_STENCIL's fields as bound so far (a bind or setter re-sends it) */
    /* colour/blend/channel-mask state as bound so far (frontend.py's Recording fields of the same names) */
    uint32_t color_blend;                     /* NVNcolorState's enable bits */
    int have_blend; uint32_t blend[6];        /* target 0: src_c, dst_c, src_a, dst_a, eq_c, eq_a */
    int have_mask; uint32_t channel_mask;     /* NVNchannelMaskState.masks */
    uint8_t have_blends[8]; uint32_t blends[8][6];   /* targets 1..7 */
    uint32_t extra_sent;                      /* targets 1..7 whose BLEND_STATE was recorded */
} Rec;

/* DEPTH_STENCIL at a recording's start (packets.DS_DEFAULT): tests off, LESS, stencil ops KEEP,
 * func ALWAYS, ref 0, masks 255 on both faces. */
static const uint32_t DS_DEFAULT[18] = {0, 0, 1, 0, 0, 0, 0, 7, 0, 255, 255, 0, 0, 0, 7, 0, 255, 255};

static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static Rec recs[MAX_RECS];
static Pool pools[MAX_POOLS];
static uint32_t npools;
static uint8_t *programs;               /* by object id: 0 not a registered program, 1 one, 3 reads the pools */
static uint64_t nprograms;
static uint32_t *tex_slots;             /* texture pool slot -> texture id (EMPTY) */
static uint32_t ntex_slots;
static uint32_t smp_slots[SAMPLER_SLOTS];
static HostFn host_yield;
static RangeOk range_ok;

enum { FN_DRAW_ARRAYS, FN_DRAW_ARRAYS_INST, FN_DRAW_ELEMENTS, FN_DRAW_ELEMENTS_INST, FN_VERTEX_BUFFER,
       FN_UNIFORM, FN_TEXTURE, FN_PROGRAM, FN_VIEWPORT, FN_SCISSOR, FN_ATTRIBS, FN_STREAMS, FN_POLYGON,
       FN_DEPTH_STENCIL, FN_STENCIL_REF, FN_STENCIL_VALUE_MASK, FN_STENCIL_MASK, FN_COLOR, FN_BLEND,
       FN_CHANNEL_MASK, FN_MULTISAMPLE, FN_DEPTH_BIAS, FN_BLEND_COLOR, FN_COUNT };
static HostFn fallback[FN_COUNT];
static const char *const FN_NAMES[FN_COUNT] = {
    "nvnCommandBufferDrawArrays", "nvnCommandBufferDrawArraysInstanced", "nvnCommandBufferDrawElements",
    "nvnCommandBufferDrawElementsInstanced", "nvnCommandBufferBindVertexBuffer",
    "nvnCommandBufferBindUniformBuffer", "nvnCommandBufferBindTexture", "nvnCommandBufferBindProgram",
    "nvnCommandBufferSetViewport", "nvnCommandBufferSetScissor", "nvnCommandBufferBindVertexAttribState",
    "nvnCommandBufferBindVertexStreamState", "nvnCommandBufferBindPolygonState",
    "nvnCommandBufferBindDepthStencilState", "nvnCommandBufferSetStencilRef", "nvnCommandBufferSetStencilValueMask",
    "nvnCommandBufferSetStencilMask", "nvnCommandBufferBindColorState", "nvnCommandBufferBindBlendState",
    "nvnCommandBufferBindChannelMaskState", "nvnCommandBufferBindMultisampleState", "nvnCommandBufferSetDepthBias",
    "nvnCommandBufferSetBlendColor"};

/* ---- control (Python, under frontend.py's lock) ------------------------------------------- */
int nxr_init(uint64_t yield_fn, uint64_t range_ok_fn);
int nxr_init(uint64_t yield_fn, uint64_t range_ok_fn) {
    pthread_mutex_lock(&M);
    host_yield = (HostFn)(uintptr_t)yield_fn;
    range_ok = (RangeOk)(uintptr_t)range_ok_fn;
    for (uint32_t i = 0; i < SAMPLER_SLOTS; i++) smp_slots[i] = EMPTY;
    pthread_mutex_unlock(&M);
    return FN_COUNT;
}

const char *nxr_fn_name(int i);
const char *nxr_fn_name(int i) { return i >= 0 && i < FN_COUNT ? FN_NAMES[i] : NULL; }

void nxr_set_fallback(int i, uint64_t fn);
void nxr_set_fallback(int i, uint64_t fn) {
    if (i >= 0 && i < FN_COUNT) fallback[i] = (HostFn)(uintptr_t)fn;
}

int nxr_pool(uint32_t id, uint64_t addr, uint64_t size);
int nxr_pool(uint32_t id, uint64_t addr, uint64_t size) {
    pthread_mutex_lock(&M);
    int rc = -1;
    if (npools < MAX_POOLS) { pools[npools++] = (Pool){id, addr, size}; rc = 0; }
    pthread_mutex_unlock(&M);
    return rc;
}

int nxr_program(uint64_t id, int reads_pools);
int nxr_program(uint64_t id, int reads_pools) {
    pthread_mutex_lock(&M);
    int rc = 0;
    if (id >= nprograms) {
        uint64_t n = nprograms ? nprograms : 64;
        while (n <= id) n *= 2;
        uint8_t *p = realloc(programs, n);
        if (!p) rc = -1;
        else { memset(p + nprograms, 0, n - nprograms); programs = p; nprograms = n; }
    }
    if (!rc) programs[id] = reads_pools ? 3 : 1;
    pthread_mutex_unlock(&M);
    return rc;
}

int nxr_texture_slot(uint32_t slot, uint32_t texture);
int nxr_texture_slot(uint32_t slot, uint32_t texture) {
    if (slot >= TEXTURE_SLOTS) return -1;
    pthread_mutex_lock(&M);
    int rc = 0;
    if (slot >= ntex_slots) {
        uint32_t n = ntex_slots ? ntex_slots : 256;
        while (n <= slot) n *= 2;
        uint32_t *p = realloc(tex_slots, (size_t)n * 4);
        if (!p) rc = -1;
        else { for (uint32_t i = ntex_slots; i < n; i++) p[i] = EMPTY; tex_slots = p; ntex_slots = n; }
    }
    if (!rc) tex_slots[slot] = texture;
    pthread_mutex_unlock(&M);
    return rc;
}

int nxr_sampler_slot(uint32_t slot, uint32_t sampler);
int nxr_sampler_slot(uint32_t slot, uint32_t sampler) {
    if (slot >= SAMPLER_SLOTS) return -1;
    pthread_mutex_lock(&M);
    smp_slots[slot] = sampler;
    pthread_mutex_unlock(&M);
    return 0;
}

static Rec *rec_by_id(uint64_t id) {
    for (int i = 0; i < MAX_RECS; i++)
        if (recs[i].id == id) return &recs[i];
    return NULL;
}

/* Packet buffers carry their capacity in a 16-byte prefix and are kept for reuse when freed (up to
 * SPARE of them): a game's recordings of every frame reuse pages already faulted in instead of
 * fresh ones (page faults are dear, under gVisor most of all).  Called with M held. */
#define SPARE 8
static uint8_t *spare[SPARE];
static int nspare;

static size_t buf_cap(const uint8_t *b) { size_t c; memcpy(&c, b - 16, sizeof c); return c; }

/* The command arena (nxr_arena): shared memory the GPU process maps too, so a recording made in it
 * reaches the GPU process as a reference (ring tag 5: offset and length) instead of being copied
 * into the ring.  Buffers in it have capacities of 4096 << k, kept on a free list per k when freed
 * (recordings reuse the same few sizes frame after frame); the arena's top grows until it is full,
 * after which new buffers come from malloc as before (and are copied into the ring). */
#define ARENA_CLASSES 40
static uint8_t *arena;
static uint64_t arena_size, arena_top;
static uint8_t *arena_free[ARENA_CLASSES];

static int in_arena(const uint8_t *b) { return arena && b >= arena && b < arena + arena_size; }

/* The stage queue (PROTOCOL.md "Staged chunks"; gpu_host/ring_layout.py STAGE_*): the arena's first
 * page, never a buffer: u64 entries ever published at 0, then STAGE_SLOTS entries of u64 serial,
 * offset, length from byte 64.  The GPU process reads entries behind the count; one it missed (the
 * queue overran) or could not use only means its chunk is copied at the submission as before. */
#define STAGE_PAGE 4096u
#define STAGE_SLOTS ((STAGE_PAGE - 64u) / 24u)
#define NXR_STAGE_MIN (16u << 10)   /* a recording's last chunk is staged when it ends if at least this big */
static int stage_bell = -1;            /* the ring's doorbell (an eventfd), rung per staged chunk */
static uint32_t stage_serial;

static void stage_chunk(Rec *r, Chunk *c, uint64_t len) {
    if (!arena || !in_arena(r->buf)) return;
    uint64_t *q = (uint64_t *)arena;
    uint64_t n = __atomic_load_n(&q[0], __ATOMIC_RELAXED);
    if (++stage_serial == 0) stage_serial = 1;
    c->stage = stage_serial;
    uint64_t *e = (uint64_t *)(arena + 64 + (n % STAGE_SLOTS) * 24);
    e[0] = c->stage;
    e[1] = (uint64_t)(r->buf - arena) + c->offset;
    e[2] = len;
    __atomic_store_n(&q[0], n + 1, __ATOMIC_RELEASE);    /* the chunk's bytes and the entry first */
    if (stage_bell >= 0) {
        uint64_t one = 1;
        ssize_t w = write(stage_bell, &one, sizeof one);
        (void)w;                           /* a full or closed eventfd: the GPU process polls anyway */
    }
}

static int arena_class(size_t cap) {
    int k = 0;
    while (k < ARENA_CLASSES - 1 && ((size_t)4096 << k) < cap) k++;
    return k;
}

static uint8_t *raw_alloc(size_t cap) {
    if (arena) {
        int k = arena_class(cap);
        size_t c = (size_t)4096 << k;
        uint8_t *b = arena_free[k];
        if (b) memcpy(&arena_free[k], b, sizeof(uint8_t *));             /* the next free one, kept in its bytes */
        else if (c >= cap && STAGE_PAGE + arena_top + c + 64 <= arena_size) {  /* 64-byte aligned data, 16-byte prefix */
            b = arena + STAGE_PAGE + arena_top + 64;
            arena_top += c + 64;
        }
        if (b) {
            memcpy(b - 16, &c, sizeof c);
            return b;
        }
    }
    uint8_t *raw = malloc(cap + 16);
    if (!raw) return NULL;
    memcpy(raw, &cap, sizeof cap);
    return raw + 16;
}

static void raw_free(uint8_t *b) {
    if (in_arena(b)) {
        int k = arena_class(buf_cap(b));
        memcpy(b, &arena_free[k], sizeof(uint8_t *));
        arena_free[k] = b;
    } else {
        free(b - 16);
    }
}

static uint8_t *buf_resize(uint8_t *b, size_t cap) {
    if (!arena) {
        uint8_t *raw = realloc(b ? b - 16 : NULL, cap + 16);
        if (!raw) return NULL;
        memcpy(raw, &cap, sizeof cap);
        return raw + 16;
    }
    uint8_t *n = raw_alloc(cap);
    if (!n) return NULL;
    if (b) {
        size_t old = buf_cap(b);
        memcpy(n, b, old < cap ? old : cap);
        raw_free(b);
    }
    return n;
}

static uint8_t *buf_get(void) {
    if (!nspare) return buf_resize(NULL, 4096);
    int best = 0;
    for (int i = 1; i < nspare; i++)
        if (buf_cap(spare[i]) > buf_cap(spare[best])) best = i;
    uint8_t *b = spare[best];
    spare[best] = spare[--nspare];
    return b;
}

static void buf_put(uint8_t *b) {
    if (!b) return;
    if (nspare < SPARE && (!arena || in_arena(b))) spare[nspare++] = b;  /* with an arena, spares are its own */
    else raw_free(b);
}

/* Record into `size` bytes of shared memory at `base` from now on (the GPU client's command arena),
 * staging filled chunks and ringing `bell` (the ring's doorbell eventfd; -1: none) for each.
 * Once per process: 0 when set (or already this one), -1 when another arena is set. */
int nxr_arena(uint8_t *base, uint64_t size, int bell);
int nxr_arena(uint8_t *base, uint64_t size, int bell) {
    pthread_mutex_lock(&M);
    int rc = 0;
    if (arena && (arena != base || arena_size != size)) rc = -1;
    else if (!arena && size <= STAGE_PAGE) rc = -1;
    else if (arena) stage_bell = bell;
    else {
        stage_bell = bell;
        arena = base;
        arena_size = size;
        arena_top = 0;
        for (int i = 0; i < nspare; i++) free(spare[i] - 16);   /* malloc's spares: none of them in the arena */
        nspare = 0;
    }
    pthread_mutex_unlock(&M);
    return rc;
}

/* Where `p` (a buffer nxr_take handed over) lies in the command arena, or -1 where it is not in it. */
int64_t nxr_arena_offset(const uint8_t *p);
int64_t nxr_arena_offset(const uint8_t *p) {
    pthread_mutex_lock(&M);
    int64_t off = in_arena(p) ? (int64_t)(p - arena) : -1;
    pthread_mutex_unlock(&M);
    return off;
}

static void rec_free(Rec *r) {
    buf_put(r->buf);
    free(r->chunks);
    memset(r, 0, sizeof *r);
}

/* Forget everything (a new NVN service in this process). */
void nxr_reset(void);
void nxr_reset(void) {
    pthread_mutex_lock(&M);
    for (int i = 0; i < MAX_RECS; i++) if (recs[i].id) rec_free(&recs[i]);
    npools = 0;
    if (programs) memset(programs, 0, nprograms);
    for (uint32_t i = 0; i < ntex_slots; i++) tex_slots[i] = EMPTY;
    for (uint32_t i = 0; i < SAMPLER_SLOTS; i++) smp_slots[i] = EMPTY;
    pthread_mutex_unlock(&M);
}

/* A recording begins (nvnCommandBufferBeginRecording): command buffer `id` whose guest struct is
 * at `addr`; a recording of the same buffer still open is dropped (Python began a new one). */
int nxr_begin(uint64_t id, uint64_t addr);
int nxr_begin(uint64_t id, uint64_t addr) {
    pthread_mutex_lock(&M);
    Rec *r = rec_by_id(id);
    if (r) rec_free(r);
    r = rec_by_id(0);
    int rc = -1;
    if (r) {
        r->id = id;
        r->addr[0] = addr;
        r->buf = buf_get();
        r->cap = r->buf ? buf_cap(r->buf) : 0;
        r->chunk_cap = 4;
        r->chunks = calloc(r->chunk_cap, sizeof(Chunk));
        r->nchunks = 1;
        memcpy(r->ds, DS_DEFAULT, sizeof r->ds);
        rc = (r->buf && r->chunks) ? 0 : -1;
        if (rc) rec_free(r);
    }
    pthread_mutex_unlock(&M);
    return rc;
}

/* One more guest address for command buffer `id` (Python found a recording through it). */
int nxr_alias(uint64_t id, uint64_t addr);
int nxr_alias(uint64_t id, uint64_t addr) {
    pthread_mutex_lock(&M);
    Rec *r = rec_by_id(id);
    int rc = -1;
    if (r) {
        memmove(&r->addr[1], &r->addr[0], 3 * sizeof r->addr[0]);   /* the newest first; the oldest drops */
        r->addr[0] = addr;
        rc = 0;
    }
    pthread_mutex_unlock(&M);
    return rc;
}

/* The finished recording's packets, handed over: `buf`/`len` and the chunk bounds `chunks` (nchunks)
 * become the caller's (nxr_free each); the recording is closed. */
int nxr_take(uint64_t id, uint8_t **buf, uint64_t *len, Chunk **chunks, uint32_t *nchunks);
int nxr_take(uint64_t id, uint8_t **buf, uint64_t *len, Chunk **chunks, uint32_t *nchunks) {
    pthread_mutex_lock(&M);
    Rec *r = rec_by_id(id);
    int rc = -1;
    if (r) {
        Chunk *last = &r->chunks[r->nchunks - 1];
        if (last->count && r->len - last->offset >= NXR_STAGE_MIN)
            stage_chunk(r, last, r->len - last->offset);   /* final now: copied while the client submits */
        *buf = r->buf;
        *len = r->len;
        *chunks = r->chunks;
        *nchunks = r->chunks[r->nchunks - 1].count ? r->nchunks : r->nchunks - 1;
        r->buf = NULL;
        r->chunks = NULL;
        rec_free(r);
        rc = 0;
    }
    pthread_mutex_unlock(&M);
    return rc;
}

void nxr_free(void *p);
void nxr_free(void *p) { free(p); }

/* A packet buffer nxr_take handed over, given back (kept for the next recordings). */
void nxr_free_buf(uint8_t *p);
void nxr_free_buf(uint8_t *p) {
    pthread_mutex_lock(&M);
    buf_put(p);
    pthread_mutex_unlock(&M);
}

/* Room for a packet of `n` bytes at the end of r's stream (a new chunk past NXR_CHUNK; the chunk
 * it fills is staged).  A buffer that moves (grows) takes its chunks' stages back: the staged
 * copies name the old place, so the submission copies those chunks instead. */
static uint8_t *put(Rec *r, uint32_t n) {
    if (r->len + n > r->cap) {
        size_t cap = r->cap * 2;
        while (cap < r->len + n) cap *= 2;
        uint8_t *p = buf_resize(r->buf, cap);
        if (!p) return NULL;
        if (p != r->buf)
            for (uint32_t i = 0; i < r->nchunks; i++) r->chunks[i].stage = 0;
        r->buf = p;
        r->cap = cap;
    }
    Chunk *c = &r->chunks[r->nchunks - 1];
    if (r->len - c->offset + n > NXR_CHUNK && c->count) {
        if (r->nchunks == r->chunk_cap) {
            Chunk *p = realloc(r->chunks, 2 * (size_t)r->chunk_cap * sizeof(Chunk));
            if (!p) return NULL;
            r->chunks = p;
            r->chunk_cap *= 2;
        }
        stage_chunk(r, &r->chunks[r->nchunks - 1], r->len - r->chunks[r->nchunks - 1].offset);
        c = &r->chunks[r->nchunks++];
        c->offset = r->len;
        c->count = 0;
        c->stage = 0;
    }
    uint8_t *at = r->buf + r->len;
    r->len += n;
    c->count++;
    at[0] = 0; at[1] = 0;                  /* op and reserved byte: set by the caller (op) */
    at[2] = (uint8_t)n; at[3] = (uint8_t)(n >> 8);
    return at;
}

static inline void w32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void w64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Packets made in Python (binpackets.packet), whole, `count` of them, in call order; a POOLS among
 * them makes the next pool-reading draw send its own POOLS again. */
int nxr_append(uint64_t id, const uint8_t *data, uint64_t len, uint32_t count);
int nxr_append(uint64_t id, const uint8_t *data, uint64_t len, uint32_t count) {
    pthread_mutex_lock(&M);
    Rec *r = rec_by_id(id);
    int rc = -1;
    uint64_t off = 0;
    for (uint32_t k = 0; r && k < count; k++) {       /* packet by packet, for the chunk bounds */
        if (off + 4 > len) break;
        uint32_t n = (uint32_t)data[off + 2] | (uint32_t)data[off + 3] << 8;
        if (n < 4 || off + n > len) break;
        uint8_t *at = put(r, n);
        if (!at) break;
        memcpy(at, data + off, n);
        if (data[off] == OP_POOLS) r->pools_sent = 0;  /* a compute dispatch's (nvn/compute.py): C's last is stale */
        off += n;
        if (k + 1 == count) rc = 0;
    }
    pthread_mutex_unlock(&M);
    return rc;
}

/* Vertex attribute / stream state as bound (nvnCommandBufferBindVertexAttribState/StreamState:
 * Python checks and stores; a draw records it as VERTEX_LAYOUT when it changed). */
int nxr_attribs(uint64_t id, uint32_t n, const uint32_t *attrs);
int nxr_attribs(uint64_t id, uint32_t n, const uint32_t *attrs) {
    if (n > MAX_ATTRS) return -1;
    pthread_mutex_lock(&M);
    Rec *r = rec_by_id(id);
    if (r) { r->nattr = n; memcpy(r->attrs, attrs, (size_t)n * 12); }
    pthread_mutex_unlock(&M);
    return r ? 0 : -1;
}

int nxr_stride(uint64_t id, uint32_t stride);
int nxr_stride(uint64_t id, uint32_t stride) {
    pthread_mutex_lock(&M);
    Rec *r = rec_by_id(id);
    if (r) r->stride = stride;
    pthread_mutex_unlock(&M);
    return r ? 0 : -1;
}

/* ---- the hot path ------------------------------------------------------------------------- */
enum { OK = 0, SLOW = 1, BAD = 2 };
#define ERR(...) (snprintf(err, 256, __VA_ARGS__), BAD)

static inline int32_t s32(const NxCpu *s, int i) { return (int32_t)(uint32_t)s->x[i]; }

/* The recording of the command buffer whose struct is at x0, or NULL (SLOW: Python finds it, or
 * names what is wrong with the pointer). */
static Rec *cur(const NxCpu *s) {
    uint64_t a = s->x[0];
    if (!a) return NULL;
    for (int i = 0; i < MAX_RECS; i++) {
        Rec *r = &recs[i];
        if (r->id && (r->addr[0] == a || r->addr[1] == a || r->addr[2] == a || r->addr[3] == a))
            return *(const uint64_t *)(uintptr_t)a == r->id ? r : NULL;
    }
    return NULL;
}

static const Pool *pool_at(uint64_t addr, __int128 size) {
    for (uint32_t i = 0; i < npools; i++) {
        const Pool *p = &pools[i];
        /* frontend.py's test: o.addr <= addr and addr + size <= o.addr + o.size (Python ints) */
        __int128 end = (__int128)addr + size;
        if (p->addr <= addr && end <= (__int128)p->addr + p->size) return p;
    }
    return NULL;
}

static void hexs(char *out, __int128 v) {     /* Python's f"{v:#x}" */
    if (v < 0) snprintf(out, 24, "-0x%llx", (unsigned long long)(-v));
    else snprintf(out, 24, "0x%llx", (unsigned long long)v);
}

static int no_pool(char *err, const char *what, uint64_t addr, __int128 size) {
    char a[24], b[24];
    hexs(a, addr);
    hexs(b, size);
    return ERR("%s: GPU address range %s+%s lies in no memory pool", what, a, b);
}

static int layout_and_pools(Rec *r, int32_t mode, char *err) {
    if (mode < 0 || mode > 3) return ERR("draw mode %d", mode);
    if (!r->layout_sent || r->l_stride != r->stride || r->l_topo != (uint32_t)mode || r->l_nattr != r->nattr ||
        memcmp(r->l_attrs, r->attrs, (size_t)r->nattr * 12)) {
        uint32_t n = 16 + 12 * r->nattr;
        uint8_t *p = put(r, n);
        if (!p) return ERR("out of memory recording a command buffer");
        p[0] = OP_VERTEX_LAYOUT;
        w32(p + 4, r->stride);
        w32(p + 8, (uint32_t)mode);
        w32(p + 12, r->nattr);
        memcpy(p + 16, r->attrs, (size_t)r->nattr * 12);
        r->layout_sent = 1;
        r->l_stride = r->stride;
        r->l_topo = (uint32_t)mode;
        r->l_nattr = r->nattr;
        memcpy(r->l_attrs, r->attrs, sizeof r->attrs);
    }
    if (r->prog_pools) {
        uint32_t now[POOL_TEXTURES + POOL_SAMPLERS];
        for (uint32_t i = 0; i < POOL_TEXTURES; i++) now[i] = i < ntex_slots ? tex_slots[i] : EMPTY;
        for (uint32_t i = 0; i < POOL_SAMPLERS; i++) now[POOL_TEXTURES + i] = smp_slots[i];
        if (!r->pools_sent || memcmp(now, r->l_pools, sizeof now)) {
            uint8_t *p = put(r, 4 + sizeof now);
            if (!p) return ERR("out of memory recording a command buffer");
            p[0] = OP_POOLS;
            memcpy(p + 4, now, sizeof now);
            memcpy(r->l_pools, now, sizeof now);
            r->pools_sent = 1;
        }
    }
    return OK;
}

static int draw_arrays(NxCpu *s, Rec *r, char *err, int instanced) {
    int32_t mode = s32(s, 1), first = s32(s, 2), count = s32(s, 3);
    int32_t base = instanced ? s32(s, 4) : 0, inst = instanced ? s32(s, 5) : 1;
    int rc = layout_and_pools(r, mode, err);
    if (rc) return rc;
    uint8_t *p = put(r, 20);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_DRAW;
    w32(p + 4, (uint32_t)count); w32(p + 8, (uint32_t)inst); w32(p + 12, (uint32_t)first); w32(p + 16, (uint32_t)base);
    return OK;
}

static int draw_elements(NxCpu *s, Rec *r, char *err, int instanced) {
    int32_t mode = s32(s, 1), itype = s32(s, 2), count = s32(s, 3);
    uint64_t addr = s->x[4];
    if (itype != 2 && itype != 4) return ERR("index type %d (2: u16, 4: u32)", itype);
    int32_t base_vertex = instanced ? s32(s, 5) : 0, base = instanced ? s32(s, 6) : 0, inst = instanced ? s32(s, 7) : 1;
    __int128 size = (__int128)count * itype;
    const Pool *pl = pool_at(addr, size);
    if (!pl) return no_pool(err, "index buffer", addr, size);
    int rc = layout_and_pools(r, mode, err);
    if (rc) return rc;
    uint8_t *p = put(r, 28);
    uint8_t *q = p ? put(r, 24) : NULL;
    if (!q) return ERR("out of memory recording a command buffer");
    p[0] = OP_INDEX;
    w32(p + 4, pl->id); w64(p + 8, addr - pl->addr); w64(p + 16, (uint64_t)(int64_t)size); w32(p + 24, (uint32_t)itype);
    q[0] = OP_DRAW_INDEXED;
    w32(q + 4, (uint32_t)count); w32(q + 8, (uint32_t)inst); w32(q + 12, 0); w32(q + 16, (uint32_t)base_vertex);
    w32(q + 20, (uint32_t)base);
    return OK;
}

static int vertex_buffer(NxCpu *s, Rec *r, char *err) {
    if (s32(s, 1) != 0) return ERR("vertex buffer index %d (index 0 is served)", s32(s, 1));
    const Pool *pl = pool_at(s->x[2], s->x[3]);
    if (!pl) return no_pool(err, "vertex buffer", s->x[2], s->x[3]);
    uint8_t *p = put(r, 24);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_VERTEX;
    w32(p + 4, pl->id); w64(p + 8, s->x[2] - pl->addr); w64(p + 16, s->x[3]);
    return OK;
}

static int uniform(NxCpu *s, Rec *r, char *err) {
    if (s32(s, 1) == 1) return SLOW;   /* the compute stage's parameters: nvn/compute.py records them */
    int32_t slot = s32(s, 2);
    if (slot < 0 || slot >= MAX_SLOTS) return ERR("uniform buffer index %d (0..%d)", slot, MAX_SLOTS - 1);
    const Pool *pl = pool_at(s->x[3], s->x[4]);
    if (!pl) return no_pool(err, "uniform buffer", s->x[3], s->x[4]);
    uint8_t *p = put(r, 28);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_UNIFORM;
    w32(p + 4, (uint32_t)slot); w32(p + 8, pl->id); w64(p + 12, s->x[3] - pl->addr); w64(p + 20, s->x[4]);
    return OK;
}

static int texture(NxCpu *s, Rec *r, char *err) {
    int32_t slot = s32(s, 2);
    uint64_t handle = s->x[3];
    if (slot < 0 || slot >= MAX_SLOTS) return ERR("texture binding %d (0..%d)", slot, MAX_SLOTS - 1);
    uint64_t tid = handle & ((1u << HANDLE_SAMPLER_SHIFT) - 1), sid = handle >> HANDLE_SAMPLER_SHIFT;
    uint32_t t = tid < ntex_slots ? tex_slots[tid] : EMPTY, m = sid < SAMPLER_SLOTS ? smp_slots[sid] : EMPTY;
    if (t == EMPTY || m == EMPTY)
        return ERR("texture handle 0x%llx: texture id %llu or sampler id %llu is not registered",
                   (unsigned long long)handle, (unsigned long long)tid, (unsigned long long)sid);
    uint8_t *p = put(r, 16);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_TEXTURE;
    w32(p + 4, (uint32_t)slot); w32(p + 8, t); w32(p + 12, m);
    return OK;
}

static int program(NxCpu *s, Rec *r, char *err) {
    (void)err;
    uint64_t a = s->x[1];
    if (!a || !range_ok(a, 8, 1)) return SLOW;                    /* Python names the bad pointer */
    uint64_t id = *(const uint64_t *)(uintptr_t)a;
    if (id >= nprograms || !programs[id]) return SLOW;            /* not a (registered) program */
    uint8_t *p = put(r, 8);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_PROGRAM;
    w32(p + 4, (uint32_t)id);
    r->prog_pools = programs[id] == 3;
    return OK;
}

static int viewport(NxCpu *s, Rec *r, char *err) {
    uint8_t *p = put(r, 20);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_VIEWPORT;
    for (int i = 0; i < 4; i++) {
        float f = (float)s32(s, 1 + i);
        memcpy(p + 4 + 4 * i, &f, 4);
    }
    return OK;
}

static int scissor(NxCpu *s, Rec *r, char *err) {
    int32_t v[4] = {s32(s, 1), s32(s, 2), s32(s, 3), s32(s, 4)};
    if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0)
        return ERR("nvnCommandBufferSetScissor: rectangle %d, %d, %dx%d has a negative field", v[0], v[1], v[2], v[3]);
    uint8_t *p = put(r, 20);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_SCISSOR;
    for (int i = 0; i < 4; i++) w32(p + 4 + 4 * i, (uint32_t)(v[i] < 16384 ? v[i] : 16384));
    return OK;
}

/* Vertex attribute state (no packet: a draw records the layout): `n` NVNvertexAttribState of 16
 * bytes (format, offset, stream, location) at x2; one vertex stream is served. */
static int attribs(NxCpu *s, Rec *r, char *err) {
    int32_t n = s32(s, 1);
    if (n < 0 || n > MAX_ATTRS) return ERR("%d vertex attributes (at most %d)", n, MAX_ATTRS);
    if (n && (!s->x[2] || !range_ok(s->x[2], 16 * (uint64_t)n, 1))) return SLOW;   /* Python names the pointer */
    uint32_t a[MAX_ATTRS][4];
    if (n) memcpy(a, (const void *)(uintptr_t)s->x[2], 16 * (size_t)n);
    for (int i = 0; i < n; i++)
        if (a[i][2] != 0) return ERR("vertex attribute %d: stream %u (one vertex stream is served)", i, a[i][2]);
    for (int i = 0; i < n; i++) { r->attrs[i][0] = a[i][3]; r->attrs[i][1] = a[i][0]; r->attrs[i][2] = a[i][1]; }
    r->nattr = (uint32_t)n;
    return OK;
}

static int streams(NxCpu *s, Rec *r, char *err) {
    int32_t n = s32(s, 1);
    if (n != 1) return ERR("%d vertex streams (one is served)", n);
    if (!s->x[2] || !range_ok(s->x[2], 8, 1)) return SLOW;
    memcpy(&r->stride, (const void *)(uintptr_t)s->x[2], 4);
    return OK;
}

/* RASTER from our NVNpolygonState (cull, front face, polygon mode, offset enables) at x1. */
static int polygon(NxCpu *s, Rec *r, char *err) {
    static const char *const what = "nvnCommandBufferBindPolygonState";
    if (!s->x[1] || !range_ok(s->x[1], 16, 1)) return SLOW;
    uint32_t w[4];
    memcpy(w, (const void *)(uintptr_t)s->x[1], 16);
    if (w[0] > 3) return ERR("%s: cull_face %u is not in 0..3", what, w[0]);
    if (w[1] > 1) return ERR("%s: front_face %u is not in 0..1", what, w[1]);
    if (w[2] > 1) return ERR("%s: polygon_mode %u is not in 0..1", what, w[2]);
    uint8_t *p = put(r, 20);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_RASTER;
    w32(p + 4, w[0]); w32(p + 8, w[1]); w32(p + 12, w[2]);
    w32(p + 16, (w[3] & (w[2] == 0 ? 4u : 2u)) ? 1 : 0);    /* POLYGON_OFFSET_FILL / _LINE of the mode */
    return OK;
}

static int put_ds(Rec *r, char *err) {
    uint8_t *p = put(r, 4 + 4 * 18);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_DEPTH_STENCIL;
    memcpy(p + 4, r->ds, 4 * 18);
    return OK;
}

/* Our NVNdepthStencilState (16 words: depth test, write, func, stencil test, front fail/zfail/pass/
 * func, back the same) at x1; stencil reference and masks stay the command buffer's. */
static int depth_stencil(NxCpu *s, Rec *r, char *err) {
    static const char *const what = "nvnCommandBufferBindDepthStencilState";
    static const char *const names[4] = {"fail", "depth_fail", "depth_pass", "func"};
    if (!s->x[1] || !range_ok(s->x[1], 64, 1)) return SLOW;
    uint32_t w[16];
    memcpy(w, (const void *)(uintptr_t)s->x[1], 64);
    if (w[2] > 7) return ERR("%s: depth_func %u is not in 0..7", what, w[2]);
    for (int f = 0; f < 2; f++)
        for (int j = 0; j < 4; j++)
            if (w[4 + 4 * f + j] > 7)
                return ERR("%s: %s %s %u is not in 0..7", what, f ? "back" : "front", names[j], w[4 + 4 * f + j]);
    r->ds[0] = w[0] != 0; r->ds[1] = w[1] != 0; r->ds[2] = w[2]; r->ds[3] = w[3] != 0;
    memcpy(&r->ds[4], &w[4], 16);
    memcpy(&r->ds[11], &w[8], 16);
    return put_ds(r, err);
}

/* SetStencilRef / ValueMask / Mask (`index` 0, 1, 2): faces x1 (1 front, 2 back, 3 both), value x2. */
static int stencil_value(NxCpu *s, Rec *r, char *err, int index, const char *what) {
    int32_t faces = s32(s, 1);
    if (faces < 1 || faces > 3) return ERR("%s: faces %d is not front (1), back (2) or both (3)", what, faces);
    for (int f = 0; f < 2; f++)
        if (faces & (1 << f)) r->ds[8 + 7 * f + index] = (uint32_t)s->x[2] & 0xFF;
    return put_ds(r, err);
}

/* BLEND_STATE of colour target k from what the recording bound (frontend.py's _blend_packet): the
 * colour state's enable bit, the blend state's factors (ONE/ZERO/ADD without one), the channel
 * mask's nibble (all channels without one); a target above 0 with nothing bound at all keeps the
 * older meaning of a bare colour state, source-alpha over. */
static void blend_fields(const Rec *r, int k, uint32_t f[9]) {
    const uint32_t *b = k == 0 ? (r->have_blend ? r->blend : NULL) : (r->have_blends[k] ? r->blends[k] : NULL);
    uint32_t sc = 1, dc = 0, sa = 1, da = 0, ce = 0, ae = 0;
    if (b) { sc = b[0]; dc = b[1]; sa = b[2]; da = b[3]; ce = b[4]; ae = b[5]; }
    if (k && !r->have_blend && !r->have_mask && !r->have_blends[k]) { sc = 6; dc = 7; ce = 0; sa = 1; da = 7; ae = 0; }
    uint32_t v[9] = {(uint32_t)k, r->color_blend >> k & 1, sc, dc, ce, sa, da, ae,
                     r->have_mask ? r->channel_mask >> 4 * k & 0xF : 0xF};
    memcpy(f, v, sizeof v);
}

static int put_blend(Rec *r, const uint32_t f[9], char *err) {
    uint8_t *p = put(r, 40);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_BLEND_STATE;
    memcpy(p + 4, f, 36);
    return OK;
}

/* Target 0's BLEND_STATE (`first`), then targets 1..7's where not the default or recorded before
 * (frontend.py's _extra_blend_packets: a single-target game records none of them). */
static int blend_packets(Rec *r, int first, char *err) {
    uint32_t f[9];
    if (first) {
        blend_fields(r, 0, f);
        if (put_blend(r, f, err)) return BAD;
    }
    for (int k = 1; k < 8; k++) {
        blend_fields(r, k, f);
        const uint32_t off[9] = {(uint32_t)k, 0, 1, 0, 0, 1, 0, 0, 15};
        if (r->extra_sent >> k & 1 || memcmp(f, off, sizeof f)) {
            r->extra_sent |= 1u << k;
            if (put_blend(r, f, err)) return BAD;
        }
    }
    return OK;
}

static int color_state(NxCpu *s, Rec *r, char *err) {
    if (!s->x[1] || !range_ok(s->x[1], 4, 1)) return SLOW;
    memcpy(&r->color_blend, (const void *)(uintptr_t)s->x[1], 4);
    if (!r->have_blend && !r->have_mask) {     /* the older meaning: BLEND, source-alpha over */
        uint8_t *p = put(r, 8);
        if (!p) return ERR("out of memory recording a command buffer");
        p[0] = OP_BLEND;
        w32(p + 4, r->color_blend & 1);
        return blend_packets(r, 0, err);
    }
    return blend_packets(r, 1, err);
}

static int blend_state(NxCpu *s, Rec *r, char *err) {
    static const char *const what = "nvnCommandBufferBindBlendState";
    static const char *const names[6] = {"src_color", "dst_color", "src_alpha", "dst_alpha", "color_equation",
                                         "alpha_equation"};
    if (!s->x[1] || !range_ok(s->x[1], 32, 1)) return SLOW;
    uint32_t w[8];
    memcpy(w, (const void *)(uintptr_t)s->x[1], 32);
    if (w[0] > 7) return ERR("%s: target %u is not in 0..7", what, w[0]);
    for (int i = 0; i < 6; i++) {
        uint32_t limit = i < 4 ? 14 : 4;
        if (w[1 + i] > limit) return ERR("%s: %s %u is not in 0..%u", what, names[i], w[1 + i], limit);
    }
    if (w[0] == 0) {
        r->have_blend = 1;
        memcpy(r->blend, &w[1], 24);
        uint32_t f[9];
        blend_fields(r, 0, f);
        return put_blend(r, f, err);
    }
    r->have_blends[w[0]] = 1;
    memcpy(r->blends[w[0]], &w[1], 24);
    return blend_packets(r, 0, err);
}

static int channel_mask_state(NxCpu *s, Rec *r, char *err) {
    if (!s->x[1] || !range_ok(s->x[1], 4, 1)) return SLOW;
    memcpy(&r->channel_mask, (const void *)(uintptr_t)s->x[1], 4);
    r->have_mask = 1;
    return blend_packets(r, 1, err);
}

static int multisample_state(NxCpu *s, Rec *r, char *err) {
    if (!s->x[1] || !range_ok(s->x[1], 8, 1)) return SLOW;
    uint32_t w[2];
    memcpy(w, (const void *)(uintptr_t)s->x[1], 8);
    if (w[0] != 0 && w[0] != 1 && w[0] != 2 && w[0] != 4 && w[0] != 8 && w[0] != 16)
        return ERR("nvnCommandBufferBindMultisampleState: samples %u is not 0 or one of (1, 2, 4, 8, 16)", w[0]);
    uint8_t *p = put(r, 12);
    if (!p) return ERR("out of memory recording a command buffer");
    p[0] = OP_MULTISAMPLE;
    w32(p + 4, w[0] ? w[0] : 1);
    w32(p + 8, w[1] != 0);
    return OK;
}

/* SetDepthBias (constant, slope, clamp) / SetBlendColor (r, g, b, a): `n` floats at x1, recorded as
 * DEPTH_BIAS / BLEND_CONSTANT; a value that is not finite is Python's to name (its words print the
 * values as Python does). */
static int floats(NxCpu *s, Rec *r, int op, int n) {
    uint64_t a = s->x[1];
    if (!a || !range_ok(a, 4 * (uint64_t)n, 1)) return SLOW;
    float v[4];
    memcpy(v, (const void *)(uintptr_t)a, 4 * (size_t)n);
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return SLOW;
    uint8_t *p = put(r, 4 + 4 * (uint32_t)n);
    if (!p) return SLOW;
    p[0] = (uint8_t)op;
    memcpy(p + 4, v, 4 * (size_t)n);
    return OK;
}

/* One hot call: OK (recorded), SLOW (Python's turn: unknown command buffer or object) or BAD
 * (`err` says what is wrong, in frontend.py's words). */
int nxr_try(int fn, uint64_t cpu, char *err);
int nxr_try(int fn, uint64_t cpu, char *err) {
    NxCpu *s = (NxCpu *)(uintptr_t)cpu;
    pthread_mutex_lock(&M);
    Rec *r = cur(s);
    int rc = SLOW;
    if (r) switch (fn) {
        case FN_DRAW_ARRAYS: rc = draw_arrays(s, r, err, 0); break;
        case FN_DRAW_ARRAYS_INST: rc = draw_arrays(s, r, err, 1); break;
        case FN_DRAW_ELEMENTS: rc = draw_elements(s, r, err, 0); break;
        case FN_DRAW_ELEMENTS_INST: rc = draw_elements(s, r, err, 1); break;
        case FN_VERTEX_BUFFER: rc = vertex_buffer(s, r, err); break;
        case FN_UNIFORM: rc = uniform(s, r, err); break;
        case FN_TEXTURE: rc = texture(s, r, err); break;
        case FN_PROGRAM: rc = program(s, r, err); break;
        case FN_VIEWPORT: rc = viewport(s, r, err); break;
        case FN_SCISSOR: rc = scissor(s, r, err); break;
        case FN_ATTRIBS: rc = attribs(s, r, err); break;
        case FN_STREAMS: rc = streams(s, r, err); break;
        case FN_POLYGON: rc = polygon(s, r, err); break;
        case FN_DEPTH_STENCIL: rc = depth_stencil(s, r, err); break;
        case FN_STENCIL_REF: case FN_STENCIL_VALUE_MASK: case FN_STENCIL_MASK:
            rc = stencil_value(s, r, err, fn - FN_STENCIL_REF, FN_NAMES[fn]);
            break;
        case FN_COLOR: rc = color_state(s, r, err); break;
        case FN_BLEND: rc = blend_state(s, r, err); break;
        case FN_CHANNEL_MASK: rc = channel_mask_state(s, r, err); break;
        case FN_MULTISAMPLE: rc = multisample_state(s, r, err); break;
        case FN_DEPTH_BIAS: rc = floats(s, r, OP_DEPTH_BIAS, 3); break;
        case FN_BLEND_COLOR: rc = floats(s, r, OP_BLEND_CONSTANT, 4); break;
        default: rc = ERR("no hot function %d", fn);
    }
    pthread_mutex_unlock(&M);
    return rc;
}

/* The host functions bound at the guest's entry points: recorded here, else the Python function
 * of the call (which answers, faults with the named error, and returns to the guest itself). */
#define HOT(name, index)                                                \
    static void hot_##name(NxCpu *s) {                                  \
        char err[256];                                                  \
        if (nxr_try(index, (uint64_t)(uintptr_t)s, err) != OK) {        \
            fallback[index](s);                                         \
            return;                                                     \
        }                                                               \
        s->pc = s->x[30];                                               \
        host_yield(s);                                                  \
    }
HOT(draw_arrays, FN_DRAW_ARRAYS)
HOT(draw_arrays_inst, FN_DRAW_ARRAYS_INST)
HOT(draw_elements, FN_DRAW_ELEMENTS)
HOT(draw_elements_inst, FN_DRAW_ELEMENTS_INST)
HOT(vertex_buffer, FN_VERTEX_BUFFER)
HOT(uniform, FN_UNIFORM)
HOT(texture, FN_TEXTURE)
HOT(program, FN_PROGRAM)
HOT(viewport, FN_VIEWPORT)
HOT(scissor, FN_SCISSOR)
HOT(attribs, FN_ATTRIBS)
HOT(streams, FN_STREAMS)
HOT(polygon, FN_POLYGON)
HOT(depth_stencil, FN_DEPTH_STENCIL)
HOT(stencil_ref, FN_STENCIL_REF)
HOT(stencil_value_mask, FN_STENCIL_VALUE_MASK)
HOT(stencil_mask, FN_STENCIL_MASK)
HOT(color, FN_COLOR)
HOT(blend, FN_BLEND)
HOT(channel_mask, FN_CHANNEL_MASK)
HOT(multisample, FN_MULTISAMPLE)
HOT(depth_bias, FN_DEPTH_BIAS)
HOT(blend_color, FN_BLEND_COLOR)

static const HostFn HOTS[FN_COUNT] = {hot_draw_arrays, hot_draw_arrays_inst, hot_draw_elements,
                                      hot_draw_elements_inst, hot_vertex_buffer, hot_uniform, hot_texture,
                                      hot_program, hot_viewport, hot_scissor, hot_attribs, hot_streams,
                                      hot_polygon, hot_depth_stencil, hot_stencil_ref, hot_stencil_value_mask,
                                      hot_stencil_mask, hot_color, hot_blend, hot_channel_mask, hot_multisample,
                                      hot_depth_bias, hot_blend_color};

/* The host function of hot call `i` (what nx_host_bind takes), or 0. */
uint64_t nxr_hot(int i);
uint64_t nxr_hot(int i) { return i >= 0 && i < FN_COUNT ? (uint64_t)(uintptr_t)HOTS[i] : 0; }

static void no_yield(NxCpu *s) { (void)s; }
static int all_mapped(uint64_t addr, uint64_t len, uint32_t perm) { (void)addr; (void)len; (void)perm; return 1; }

/* No guest kernel (bench/gpu_split.py, tests): no scheduling point after a call, every guest
 * pointer taken as mapped (the caller passes host memory). */
void nxr_bench_init(void);
void nxr_bench_init(void) {
    nxr_init((uint64_t)(uintptr_t)no_yield, (uint64_t)(uintptr_t)all_mapped);
}

/* bench/gpu_split.py's recording cost: `draws` draws of issue 32's realistic frame (a program
 * bind every 50 draws, a texture bind every 5, a uniform range before every draw) through the
 * host functions above as the guest's calls reach them, on a CPU of its own (`cpu`, x30 = a
 * return address) into the recording of command buffer `cb_addr`. */
int nxr_bench_frame(uint64_t cpu, uint64_t cb_addr, uint64_t prog_ptrs, uint32_t draws, uint64_t ubo_addr,
                    uint32_t ubos, uint32_t frame, uint64_t handles, uint32_t ntex);
int nxr_bench_frame(uint64_t cpu, uint64_t cb_addr, uint64_t prog_ptrs, uint32_t draws, uint64_t ubo_addr,
                    uint32_t ubos, uint32_t frame, uint64_t handles, uint32_t ntex) {
    NxCpu *s = (NxCpu *)(uintptr_t)cpu;
    const uint64_t *progs = (const uint64_t *)(uintptr_t)prog_ptrs, *hs = (const uint64_t *)(uintptr_t)handles;
    for (uint32_t i = 0; i < draws; i++) {
        if (i % 50 == 0) { s->x[0] = cb_addr; s->x[1] = progs[(i / 50) % 2]; hot_program(s); }
        if (i % 5 == 0) { s->x[0] = cb_addr; s->x[1] = 3; s->x[2] = 0; s->x[3] = hs[(i / 5) % ntex]; hot_texture(s); }
        s->x[0] = cb_addr; s->x[1] = 3; s->x[2] = 0; s->x[3] = ubo_addr + 256 * ((i + frame) % ubos); s->x[4] = 48;
        hot_uniform(s);
        s->x[0] = cb_addr; s->x[1] = 0; s->x[2] = 0; s->x[3] = 6;
        hot_draw_arrays(s);
    }
    return 0;
}
