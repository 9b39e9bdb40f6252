/* Decoder and validator of the binary packet format (gpu_host/PROTOCOL.md, "Binary packets").
 *
 * A submission's commands arrive as one blob: a 16-byte header, then packets of a 4-byte header
 * (u8 op, u8 zero, u16 size in bytes including this header) and fixed-width little-endian fields
 * (u32/i32/f32/bool: 4 bytes, u64: 8 bytes; lists as gpu_host/binpackets.py writes them).  The op
 * table (field kinds, per-field maxima, names) is generated from gpu_host/packets.py's OPS into
 * nxpkt_ops.h at build time, so the format is written down once.
 *
 * Two passes, as the Python path does (packets.check on every packet, then validate.plan):
 *  1. format: header, every packet's op, size and every field's type and range;
 *  2. objects: handles registered, pool ranges inside their pools, the state a draw needs and its
 *     vertex/index ranges, the bound textures against the program's reflection.  Only for the
 *     ops listed NATIVE below; a submission holding another op is reported as such (rc 2) and
 *     goes to the Python path whole, so behaviour stays exact.
 * Every failure fills nx_error with the packet index, the op and the field; nothing here
 * allocates, and no read goes past `len` (checked before every field read). */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>

#include "nxpkt_ops.h"   /* generated: NX_NOPS, NX_OPS[], kinds, MAX_* constants */

typedef struct { uint32_t id; uint32_t flags; uint64_t size; } nx_pool;   /* flags 1: mapped writable */
/* flags: 1 render target, 2 depth format, 4 multisampled; kind: view kind code (NX_KIND_*) */
/* samples: its sample count; format: a number per format name (RESOLVE compares them) */
typedef struct { uint32_t id; uint32_t flags; uint32_t kind; uint32_t width, height, samples, format, pad; } nx_tex;
typedef struct { uint32_t id; uint32_t compare; } nx_smp;
/* kinds/lookups per texture slot 0..3 (bindings 4..7): NX_KIND_* (0 = not sampled) and
 * NX_LOOK_* (0 = no lookup); input_mask: bit n = the vertex stage reads location n */
/* flags: 1 = reads the bindless pools (set 1) */
typedef struct { uint32_t id; uint32_t input_mask; uint32_t flags; uint8_t kinds[4]; uint8_t lookups[4]; } nx_prog;
typedef struct {
    const nx_pool *pools; uint32_t npools;
    const nx_tex *texs; uint32_t ntexs;
    const nx_smp *smps; uint32_t nsmps;
    const nx_prog *progs; uint32_t nprogs;
    uint32_t max_colors;          /* the device's maxColorAttachments (RENDER_TARGETS natively up to it) */
    uint32_t independent_blend;   /* the device has independentBlend (BLEND_STATE of targets 1..7 natively) */
    uint32_t raster_features;     /* 1: fillModeNonSolid (line fill natively), 2: depthBiasClamp (a clamp natively) */
} nx_objects;   /* each table sorted by id */

typedef struct {
    int32_t index;      /* packet index; -1: the blob's header */
    int32_t op;         /* op code, 0 when unknown */
    char field[32];
    char message[224];
} nx_error;

enum { NX_KIND_NONE, NX_KIND_2D, NX_KIND_2D_ARRAY, NX_KIND_CUBE, NX_KIND_CUBE_ARRAY, NX_KIND_OTHER, NX_KIND_3D, NX_KINDS };
enum { NX_LOOK_NONE, NX_LOOK_PLAIN, NX_LOOK_DREF, NX_LOOK_BOTH };
static const char *const KIND_NAMES[] = {"none", "2d", "2d_array", "cube", "cube_array", "other", "3d"};

#define NX_OK 0
#define NX_BAD 1
#define NX_FALLBACK 2
#define HEADER 16
#define MAGIC 0x4247584Eu     /* "NXGB" little-endian */

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static float rdf(const uint8_t *p) { float v; memcpy(&v, p, 4); return v; }
#define EMPTY_ID 0xFFFFFFFFu   /* packets.EMPTY: no texture */
static int finite_bits(uint32_t b) { return (b & 0x7f800000u) != 0x7f800000u; }

static int fail(nx_error *e, int32_t index, int32_t op, const char *field, const char *fmt, ...) {
    va_list ap;
    e->index = index;
    e->op = op;
    snprintf(e->field, sizeof e->field, "%s", field);
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return NX_BAD;
}

static const char *op_name(int op) { return op > 0 && op < NX_NOPS && NX_OPS[op].name ? NX_OPS[op].name : "?"; }

/* Bytes a packet of `op` must have, given its body (lists with a count read from it); 0 when the
 * count itself is out of range (reported by the caller through *why). */
static uint32_t expected_size(const nx_op *o, const uint8_t *body, uint32_t avail, const char **why, int *fi) {
    uint32_t n = 4;
    for (int i = 0; i < o->nfields; i++) {
        switch (o->kinds[i]) {
        case K_U64: n += 8; break;
        case K_ATTRS: case K_COLOR_IDS: {
            uint32_t lo = 1, hi = o->kinds[i] == K_ATTRS ? MAX_ATTRS : MAX_COLOR_TARGETS;
            if (n + 4 > avail + 4) { *why = "is cut short"; *fi = i; return 0; }
            uint32_t cnt = rd32(body + n - 4);
            if (cnt < lo || cnt > hi) { *why = "count is out of range"; *fi = i; return 0; }
            n += 4 + cnt * (o->kinds[i] == K_ATTRS ? 12 : 4);
            break;
        }
        case K_TEX_IDS: n += 4 * POOL_TEXTURES; break;
        case K_SMP_IDS: n += 4 * POOL_SAMPLERS; break;
        default: n += 4;
        }
    }
    return n;
}

static const uint8_t VERTEX_BYTES[6] = {0, 4, 8, 12, 16, 4};

/* PRESENT_IMAGE (gpu_host/present_image.py, PROTOCOL.md "Presented images"): a framebuffer in
 * pool memory shown as a frame.  vals[] by field: frame (u64: 0), pool, offset (u64: 0), width,
 * height, layout (0 pitch, 1 block-linear), pitch, block_height_log2, format (3: RGB565, 2 bytes a
 * pixel; the others 4).  The rules between
 * fields, and the bytes the image covers (block-linear: whole blocks of 2^bh GOBs of 64 B x 8 rows). */
#define IMG_W 3
#define IMG_H 4
#define IMG_LAYOUT 5
#define IMG_PITCH 6
#define IMG_BLOCK 7
#define IMG_FORMAT 8
static int image_rules(int32_t idx, int op, const uint32_t *vals, nx_error *e) {
    uint32_t w = vals[IMG_W], h = vals[IMG_H], pitch = vals[IMG_PITCH];
    uint64_t row = (uint64_t)w * (vals[IMG_FORMAT] == 3 ? 2 : 4);      /* RGB565: 2 bytes a pixel */
    if (w == 0 || h == 0) return fail(e, idx, op, w ? "height" : "width", "PRESENT_IMAGE: size %ux%u is empty", w, h);
    if ((uint64_t)pitch < row)
        return fail(e, idx, op, "pitch", "PRESENT_IMAGE: field pitch = %u is below a row of %llu bytes", pitch, (unsigned long long)row);
    if (vals[IMG_LAYOUT] == 1 && pitch % 64)
        return fail(e, idx, op, "pitch", "PRESENT_IMAGE: field pitch = %u of a block-linear image is not a multiple of 64", pitch);
    return NX_OK;
}

static uint64_t image_bytes(const uint8_t *p) {
    uint32_t h = rd32(p + 28), layout = rd32(p + 32), pitch = rd32(p + 36), bh = rd32(p + 40);
    if (layout != 1) return (uint64_t)pitch * h;
    uint64_t rows = 8ull << bh, blocks_y = (h + rows - 1) / rows, gobs_x = (pitch + 63) / 64;
    return blocks_y * gobs_x * (512ull << bh);
}

/* Ops all of whose fields are u32 without a narrower range or i32 (any 32-bit pattern passes
 * the field checks), worked out with FIXED_SIZE when the library loads: pass 1 reads their fields
 * straight into the op rules (DRAW, the bulk of a frame's packets: ~110 of its ~165 instructions
 * a packet were the per-field loop). */
static uint8_t PLAIN[NX_NOPS];

/* Pass 1 on one packet: every field's type and range (packets.check_full's rules). */
static int check_fields(int32_t idx, int op, const uint8_t *p, uint32_t size, nx_error *e) {
    const nx_op *o = &NX_OPS[op];
    uint32_t at = 4;
    uint32_t vals[24];    /* u32-sized field values, for the op rules below */
    if (PLAIN[op]) {      /* no field of this op can fail on its own: only the op rules below */
        for (int i = 0; i < o->nfields; i++) vals[i] = rd32(p + 4 + 4 * i);
        goto rules;
    }
    for (int i = 0; i < o->nfields; i++) {
        const char *fname = o->fields[i];
        uint32_t v;
        switch (o->kinds[i]) {
        case K_U64:
            at += 8;
            vals[i] = 0;
            continue;
        case K_BOOL:
            v = rd32(p + at);
            if (v > 1) return fail(e, idx, op, fname, "%s: field %s = %u is not a boolean", o->name, fname, v);
            break;
        case K_F32:
            v = rd32(p + at);
            if (!finite_bits(v)) return fail(e, idx, op, fname, "%s: field %s is not a finite number", o->name, fname);
            break;
        case K_ATTRS: {
            uint32_t cnt = rd32(p + at);
            at += 4;
            for (uint32_t k = 0; k < cnt; k++, at += 12) {
                uint32_t loc = rd32(p + at), fmt = rd32(p + at + 4), off = rd32(p + at + 8);
                char f[32];
                snprintf(f, sizeof f, "attrs[%u]", k);
                if (loc >= 1u << 16 || fmt >= 1u << 16 || off >= 1u << 16)
                    return fail(e, idx, op, f, "%s: field %s is not [location, format, offset]", o->name, f);
                if (fmt < 1 || fmt > 5)
                    return fail(e, idx, op, f, "%s: field %s has unknown vertex format %u", o->name, f, fmt);
                if (loc >= 16)
                    return fail(e, idx, op, f, "%s: field %s location %u is not below 16", o->name, f, loc);
            }
            vals[i] = cnt;
            continue;
        }
        case K_COLOR_IDS: {
            uint32_t cnt = rd32(p + at);
            at += 4 + 4 * cnt;
            vals[i] = cnt;
            continue;
        }
        case K_TEX_IDS: at += 4 * POOL_TEXTURES; vals[i] = 0; continue;
        case K_SMP_IDS: at += 4 * POOL_SAMPLERS; vals[i] = 0; continue;
        default:   /* u32, i32: any 32-bit pattern is in range */
            v = rd32(p + at);
        }
        vals[i] = v;
        if (o->maxes[i] != 0xFFFFFFFFu && o->kinds[i] == K_U32 && v > o->maxes[i])
            return fail(e, idx, op, fname, "%s: field %s = %u is not in 0..%u", o->name, fname, v, o->maxes[i]);
        at += 4;
    }
rules:
    (void)size;
    switch (op) {
    case OP_VERTEX_LAYOUT: {
        uint32_t stride = vals[0];
        if (vals[1] > 3) return fail(e, idx, op, "topology", "VERTEX_LAYOUT: field topology = %u is not one of [0, 1, 2, 3]", vals[1]);
        if (stride == 0 || stride > 2048) return fail(e, idx, op, "stride", "VERTEX_LAYOUT: field stride = %u is not in 1..2048", stride);
        const uint8_t *a = p + 4 + 12;
        for (uint32_t k = 0; k < vals[2]; k++, a += 12) {
            uint32_t fmt = rd32(a + 4), off = rd32(a + 8);
            if (off + VERTEX_BYTES[fmt] > stride) {
                char f[32];
                snprintf(f, sizeof f, "attrs[%u]", k);
                return fail(e, idx, op, f, "VERTEX_LAYOUT: field %s offset %u runs past stride %u", f, off, stride);
            }
        }
        break;
    }
    case OP_INDEX:
        if (vals[3] != 2 && vals[3] != 4) return fail(e, idx, op, "index_size", "INDEX: field index_size = %u is not 2 or 4", vals[3]);
        break;
    case OP_UNIFORM:
        if (vals[0] >= UNIFORM_SLOTS) return fail(e, idx, op, "slot", "UNIFORM: field slot = %u is not below %d", vals[0], UNIFORM_SLOTS);
        break;
    case OP_TEXTURE:
        if (vals[0] >= TEXTURE_SLOTS) return fail(e, idx, op, "slot", "TEXTURE: field slot = %u is not below %d", vals[0], TEXTURE_SLOTS);
        break;
    case OP_DRAW: case OP_DRAW_INDEXED:
        if (vals[0] > MAX_DRAW_COUNT || vals[1] > MAX_DRAW_COUNT)
            return fail(e, idx, op, vals[0] > MAX_DRAW_COUNT ? o->fields[0] : o->fields[1],
                        "%s: counts %ux%u exceed %d", o->name, vals[0], vals[1], MAX_DRAW_COUNT);
        break;
    case OP_VIEWPORT: {
        float w = rdf(p + 12), h = rdf(p + 16);
        if (!(w > 0 && w <= 16384 && h > 0 && h <= 16384))
            return fail(e, idx, op, w > 0 && w <= 16384 ? "height" : "width", "VIEWPORT: size %gx%g is not in 1..16384", w, h);
        break;
    }
    case OP_VIEWPORT_INDEXED: {  /* shader-tex: VIEWPORT's size rule after the index */
        float w = rdf(p + 16), h = rdf(p + 20);
        if (!(w > 0 && w <= 16384 && h > 0 && h <= 16384))
            return fail(e, idx, op, w > 0 && w <= 16384 ? "height" : "width", "VIEWPORT_INDEXED: size %gx%g is not in 1..16384", w, h);
        break;
    }
    case OP_CLEAR_DEPTH_STENCIL: {
        float d = rdf(p + 4);
        if (!(d >= 0.0f && d <= 1.0f)) return fail(e, idx, op, "depth", "CLEAR_DEPTH_STENCIL: field depth = %g is not in 0..1", d);
        if (vals[2] == 0) return fail(e, idx, op, "aspects", "CLEAR_DEPTH_STENCIL: field aspects = 0 clears nothing (1 depth, 2 stencil, 3 both)");
        break;
    }
    case OP_PRESENT_IMAGE: {
        int rc = image_rules(idx, op, vals, e);
        if (rc) return rc;
        break;
    }
    case OP_MULTISAMPLE: {
        uint32_t s = vals[0];
        if (s != 1 && s != 2 && s != 4 && s != 8 && s != 16)
            return fail(e, idx, op, "samples", "MULTISAMPLE: field samples = %u is not one of (1, 2, 4, 8, 16)", s);
        break;
    }
    }
    return NX_OK;
}

/* The copy/stage step's fast loop (nx_pkt_format_body): ops of a fixed size whose fields can
 * only fail the op rules below, worked out when the library loads from the op table (fast_op).
 * FAST[op] is the op's fixed size (0: not fast; indexed by the op byte, so no range check), and
 * FAST_RULE says which of check_fields' op rules it has: none, "field 0 below FAST_LIMIT" (the
 * UNIFORM / TEXTURE slot), or DRAW's counts.  A packet the fast loop does not accept goes through
 * packet_at + check_fields as before, so the verdicts (and every error message) are theirs: the
 * fast loop accepts exactly the packets of these ops that those two accept. */
enum { FR_NONE = 1, FR_SLOT, FR_COUNTS };
static uint16_t FAST[256];
static uint8_t FAST_RULE[256];
static uint32_t FAST_LIMIT[256];

static void fast_op(int op, const nx_op *o);

/* The size of each op whose fields are all of fixed width (no list with a count in the body),
 * worked out once from the op table when the library loads (0: the op has a list, or no such op):
 * the walks take it from here instead of summing the fields per packet (expected_size was a
 * quarter of a walk's instructions at 10,000 draws, and a submission is walked four times). */
static uint32_t FIXED_SIZE[NX_NOPS];

__attribute__((constructor)) static void fixed_sizes(void) {
    for (int op = 1; op < NX_NOPS; op++) {
        const nx_op *o = &NX_OPS[op];
        if (!o->name) continue;
        uint32_t n = 4;
        for (int i = 0; i < o->nfields && n; i++) {
            switch (o->kinds[i]) {
            case K_ATTRS: case K_COLOR_IDS: n = 0; break;
            case K_U64: n += 8; break;
            case K_TEX_IDS: n += 4 * POOL_TEXTURES; break;
            case K_SMP_IDS: n += 4 * POOL_SAMPLERS; break;
            default: n += 4;
            }
        }
        FIXED_SIZE[op] = n;
        int plain = o->nfields <= 24;
        for (int i = 0; i < o->nfields; i++)
            plain &= o->kinds[i] == K_I32 || (o->kinds[i] == K_U32 && o->maxes[i] == 0xFFFFFFFFu);
        PLAIN[op] = (uint8_t)plain;
        fast_op(op, o);
    }
}

static void fast_op(int op, const nx_op *o) {
    if (!FIXED_SIZE[op] || FIXED_SIZE[op] > 0xFFFF) return;
    for (int i = 0; i < o->nfields; i++)  /* no field of its own can fail: i32, u64, u32 of full range */
        if (!(o->kinds[i] == K_I32 || o->kinds[i] == K_U64 || (o->kinds[i] == K_U32 && o->maxes[i] == 0xFFFFFFFFu))) return;
    /* the op rules of check_fields; an op with any other rule stays on the general path */
    switch (op) {
    case OP_UNIFORM: case OP_TEXTURE:
        if (o->nfields < 1 || o->kinds[0] != K_U32) return;
        FAST_RULE[op] = FR_SLOT;
        FAST_LIMIT[op] = op == OP_UNIFORM ? UNIFORM_SLOTS : TEXTURE_SLOTS;
        break;
    case OP_DRAW: case OP_DRAW_INDEXED:
        if (o->nfields < 2 || o->kinds[0] != K_U32 || o->kinds[1] != K_U32) return;
        FAST_RULE[op] = FR_COUNTS;
        break;
    case OP_VERTEX_LAYOUT: case OP_INDEX: case OP_VIEWPORT: case OP_CLEAR_DEPTH_STENCIL: case OP_PRESENT_IMAGE:
    case OP_MULTISAMPLE: case OP_VIEWPORT_INDEXED:
        return;
    default:
        FAST_RULE[op] = FR_NONE;
    }
    FAST[op] = (uint16_t)FIXED_SIZE[op];
}

/* Walk the blob's packets: calls `fn` on each with its index, op, bytes and size. */
typedef int (*visit_fn)(void *ctx, int32_t idx, int op, const uint8_t *p, uint32_t size, nx_error *e);

/* The structure checks of one packet at `p` (`left` bytes from it to the end of the body): a
 * known op, the reserved byte, a size that is a multiple of 4 inside the body and that its fields
 * take.  NX_OK with `*size` set, or NX_BAD (`e` names packet `i`). */
static inline __attribute__((always_inline)) int packet_at(const uint8_t *p, size_t left, uint32_t i, uint32_t *size_out,
                                                           nx_error *e) {
    int op = p[0];
    uint32_t size = p[2] | p[3] << 8;
    if (op <= 0 || op >= NX_NOPS || !NX_OPS[op].name) return fail(e, (int32_t)i, op, "op", "unknown op %d", op);
    if (p[1] != 0) return fail(e, (int32_t)i, op, "reserved", "%s: reserved byte = %u is not 0", op_name(op), p[1]);
    if (size < 4 || size % 4 || size > left)
        return fail(e, (int32_t)i, op, "size", "%s: field size = %u is not a multiple of 4 in 4..%zu", op_name(op), size, left);
    const char *why = NULL;
    int fi = 0;
    uint32_t want = FIXED_SIZE[op] ? FIXED_SIZE[op] : expected_size(&NX_OPS[op], p + 4, size - 4, &why, &fi);
    if (!want) return fail(e, (int32_t)i, op, NX_OPS[op].fields[fi], "%s: field %s %s", op_name(op), NX_OPS[op].fields[fi], why);
    if (want != size) return fail(e, (int32_t)i, op, "size", "%s: field size = %u, its fields take %u", op_name(op), size, want);
    *size_out = size;
    return NX_OK;
}

/* always inlined: each pass gets its own copy with its visitor called directly (often inlined),
 * not through a pointer per packet */
static inline __attribute__((always_inline)) int walk(const uint8_t *buf, size_t len, visit_fn fn, void *ctx, uint32_t *count,
                                                      nx_error *e) {
    if (len < HEADER) return fail(e, -1, 0, "header", "blob of %zu bytes is shorter than its %d-byte header", len, HEADER);
    if (rd32(buf) != MAGIC) return fail(e, -1, 0, "magic", "field magic = %#x is not %#x (\"NXGB\")", rd32(buf), MAGIC);
    uint32_t ver = buf[4] | buf[5] << 8, hsize = buf[6] | buf[7] << 8;
    if (ver != NX_VERSION) return fail(e, -1, 0, "version", "field version = %u is not %d", ver, NX_VERSION);
    if (hsize != HEADER) return fail(e, -1, 0, "header_size", "field header_size = %u is not %d", hsize, HEADER);
    uint32_t n = rd32(buf + 8), body = rd32(buf + 12);
    if ((uint64_t)body != len - HEADER)
        return fail(e, -1, 0, "body_size", "field body_size = %u but %zu bytes follow the header", body, len - HEADER);
    if (n > MAX_PACKETS) return fail(e, -1, 0, "count", "field count = %u is above %d", n, MAX_PACKETS);
    size_t at = HEADER;
    for (uint32_t i = 0; i < n; i++) {
        if (len - at < 4)
            return fail(e, -1, 0, "count", "field count = %u but the body ends after %u packets (%zu bytes left)", n, i, len - at);
        const uint8_t *p = buf + at;
        uint32_t size;
        int rc = packet_at(p, len - at, i, &size, e);
        if (rc) return rc;
        rc = fn(ctx, (int32_t)i, p[0], p, size, e);
        if (rc) return rc;
        at += size;
    }
    if (at != len) return fail(e, -1, 0, "count", "field count = %u but %zu bytes follow the last packet", n, len - at);
    if (count) *count = n;
    return NX_OK;
}

static int visit_format(void *ctx, int32_t idx, int op, const uint8_t *p, uint32_t size, nx_error *e) {
    (void)ctx;
    return check_fields(idx, op, p, size, e);
}

/* ---- pass 2: objects and draw state ------------------------------------------------------ */
static const void *find(const void *tab, uint32_t n, size_t stride, uint32_t id) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        uint32_t v = *(const uint32_t *)((const uint8_t *)tab + mid * stride);
        if (v == id) return (const uint8_t *)tab + mid * stride;
        if (v < id) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

typedef struct {
    const nx_objects *o;
    uint64_t seq;
    int fallback_op;                  /* first op outside the native set (0: none) */
    const nx_tex *target;             /* colour target 0 (TARGET, DEPTH_TARGET's colour, RENDER_TARGETS' first) */
    const nx_tex *colors[MAX_COLOR_TARGETS]; uint32_t ncolors;   /* every bound colour target */
    const nx_tex *depth;              /* the depth target */
    uint32_t ms_samples;              /* the last MULTISAMPLE's count (0: none sent) */
    const nx_prog *program;
    uint32_t stride, attr_end, loc_mask, have_layout;
    int have_vertex, have_index;
    uint64_t vertex_size, index_size_bytes;
    uint32_t index_size;
    const nx_tex *slot_tex[4];
    const nx_smp *slot_smp[4];
    const nx_tex *pool_tex[POOL_TEXTURES];   /* the last POOLS packet's registered entries */
    uint64_t draws;
} vstate;

static int bound(const vstate *s, const nx_tex *t) {   /* t is a bound colour or depth target */
    if (t == s->depth) return 1;
    for (uint32_t k = 0; k < s->ncolors; k++) if (t == s->colors[k]) return 1;
    return 0;
}

static int range_ok(vstate *s, int32_t idx, int op, uint32_t pool, uint64_t off, uint64_t size, nx_error *e) {
    const nx_pool *pl = find(s->o->pools, s->o->npools, sizeof(nx_pool), pool);
    if (!pl) return fail(e, idx, op, "pool", "%s: field pool %u is not a registered pool", op_name(op), pool);
    if (size == 0 || off > pl->size || size > pl->size - off)
        return fail(e, idx, op, "size", "%s: range %#llx+%#llx is empty or runs past pool %u's end %#llx", op_name(op),
                    (unsigned long long)off, (unsigned long long)size, pool, (unsigned long long)pl->size);
    return NX_OK;
}

static int visit_objects(void *ctx, int32_t idx, int op, const uint8_t *p, uint32_t size, nx_error *e) {
    vstate *s = ctx;
    const nx_objects *o = s->o;
    (void)size;
    switch (op) {
    case OP_TARGET: {
        uint32_t tid = rd32(p + 4);
        const nx_tex *t = find(o->texs, o->ntexs, sizeof(nx_tex), tid);
        if (!t) return fail(e, idx, op, "texture", "TARGET: field texture %u is not a registered texture", tid);
        if (!(t->flags & 1)) return fail(e, idx, op, "texture", "TARGET: texture %u was not registered as a render target", tid);
        if (t->flags & 2) return fail(e, idx, op, "texture", "TARGET: field texture %u has a depth format; bind it with DEPTH_TARGET", tid);
        s->target = s->colors[0] = t;
        s->ncolors = 1;
        s->depth = NULL;
        break;
    }
    case OP_DEPTH_TARGET: {
        /* natively: a one-sample colour render target or none, a one-sample depth render target or
         * none, one size; anything else goes to the Python path, whose validation names it */
        uint32_t cid = rd32(p + 4), did = rd32(p + 8);
        const nx_tex *c = cid == EMPTY_ID ? NULL : find(o->texs, o->ntexs, sizeof(nx_tex), cid);
        const nx_tex *d = did == EMPTY_ID ? NULL : find(o->texs, o->ntexs, sizeof(nx_tex), did);
        int ok = (c || d) && (cid == EMPTY_ID || (c && (c->flags & 3) == 1)) && (did == EMPTY_ID || (d && (d->flags & 3) == 3))
                 && !(c && d && (c->width != d->width || c->height != d->height || c->samples != d->samples));
        if (!ok) {
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        s->target = s->colors[0] = c;
        s->ncolors = c != NULL;
        s->depth = d;
        break;
    }
    case OP_RENDER_TARGETS: {
        /* natively: colour render targets 0..n-1 (no gap; trailing EMPTYs ignored), distinct, one-sample,
         * of one size, at most the device's maxColorAttachments, and a one-sample depth target or none;
         * anything else goes to the Python path, whose validation names it */
        uint32_t cnt = rd32(p + 4), did = rd32(p + 8 + 4 * cnt), n = 0;
        const nx_tex *cs[MAX_COLOR_TARGETS];
        int ok = 1;
        for (uint32_t k = 0; k < cnt && ok; k++) {
            uint32_t id = rd32(p + 8 + 4 * k);
            if (id == EMPTY_ID) continue;
            if (n != k) { ok = 0; break; }                       /* a gap before a set entry */
            const nx_tex *t = find(o->texs, o->ntexs, sizeof(nx_tex), id);
            ok = t && (t->flags & 3) == 1
                 && (!n || (t->width == cs[0]->width && t->height == cs[0]->height && t->samples == cs[0]->samples));
            for (uint32_t j = 0; ok && j < n; j++) ok = cs[j] != t;
            if (ok) cs[n++] = t;
        }
        const nx_tex *d = did == EMPTY_ID ? NULL : find(o->texs, o->ntexs, sizeof(nx_tex), did);
        ok = ok && (n || d) && n <= o->max_colors && (did == EMPTY_ID || (d && (d->flags & 3) == 3))
             && !(n && d && (d->width != cs[0]->width || d->height != cs[0]->height || d->samples != cs[0]->samples));
        if (!ok) {
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        for (uint32_t k = 0; k < n; k++) s->colors[k] = cs[k];
        s->ncolors = n;
        s->target = n ? cs[0] : NULL;
        s->depth = d;
        break;
    }
    case OP_MULTISAMPLE:
        s->ms_samples = rd32(p + 4);
        break;
    case OP_RESOLVE: {
        /* natively: src a multisampled colour render target, dst a one-sample one, one size and format;
         * anything else goes to the Python path, whose validation names it */
        const nx_tex *a = find(o->texs, o->ntexs, sizeof(nx_tex), rd32(p + 4));
        const nx_tex *b = find(o->texs, o->ntexs, sizeof(nx_tex), rd32(p + 8));
        if (!a || !b || (a->flags & 7) != 5 || (b->flags & 7) != 1 || a->width != b->width || a->height != b->height
            || a->format != b->format) {
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    }
    case OP_CLEAR_TARGET:
        if (rd32(p + 4) >= s->ncolors) {      /* no such colour target: the Python path names it */
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    case OP_CLEAR:
        if (!s->target && s->depth) {        /* the Python path's words: a depth target bound alone */
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        if (!s->target) return fail(e, idx, op, "target", "CLEAR: no render target set");
        break;
    case OP_CLEAR_DEPTH_STENCIL:
        if (!s->depth) {
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    case OP_POOLS: {
        /* natively: registered one-sample 2D textures and registered samplers (EMPTY: none); anything
         * else goes to the Python path, whose validation names the entry */
        for (int k = 0; k < POOL_TEXTURES; k++) {
            uint32_t tid = rd32(p + 4 + 4 * k);
            const nx_tex *t = tid == EMPTY_ID ? NULL : find(o->texs, o->ntexs, sizeof(nx_tex), tid);
            if (tid != EMPTY_ID && (!t || t->kind != NX_KIND_2D || (t->flags & 4))) {
                if (!s->fallback_op) s->fallback_op = op;
                return NX_FALLBACK;
            }
            s->pool_tex[k] = t;
        }
        for (int k = 0; k < POOL_SAMPLERS; k++) {
            uint32_t sid = rd32(p + 4 + 4 * POOL_TEXTURES + 4 * k);
            if (sid != EMPTY_ID && !find(o->smps, o->nsmps, sizeof(nx_smp), sid)) {
                if (!s->fallback_op) s->fallback_op = op;
                return NX_FALLBACK;
            }
        }
        break;
    }
    case OP_EVENT_SIGNAL: {
        /* natively: 4 aligned bytes inside a pool mapped writable; anything else goes to the Python
         * path, whose validation names it (events.problem) */
        const nx_pool *pl = find(o->pools, o->npools, sizeof(nx_pool), rd32(p + 4));
        uint64_t off = rd64(p + 8);
        if (!pl || off % 4 || off > pl->size || pl->size - off < 4 || !(pl->flags & 1)) {
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    }
    case OP_DIRTY: {
        int rc = range_ok(s, idx, op, rd32(p + 4), rd64(p + 8), rd64(p + 16), e);
        if (rc) return rc;
        break;
    }
    case OP_WRITEBACK: {
        /* natively: a texture the tables mark as written back in C (flag 16: a one-sample colour
         * render target whose rows fit its pitch and whose bytes lie in a pool mapped writable);
         * anything else goes to the Python path, whose validation names it */
        const nx_tex *t = find(o->texs, o->ntexs, sizeof(nx_tex), rd32(p + 4));
        if (!t || !(t->flags & 16)) {
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    }
    case OP_DEPTH_STENCIL: case OP_BLEND_CONSTANT: case OP_BLEND:
        break;   /* no handles; the format pass checked every field's range */
    case OP_BLEND_STATE:
        if (rd32(p + 4) != 0 && !o->independent_blend) {   /* the Python path names the missing feature */
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    case OP_RASTER:
        if (rd32(p + 12) != 0 && !(o->raster_features & 1)) {   /* line fill needs fillModeNonSolid: Python names it */
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    case OP_DEPTH_BIAS:
        if (rdf(p + 12) != 0.0f && !(o->raster_features & 2)) {   /* a clamp needs depthBiasClamp: Python names it */
            if (!s->fallback_op) s->fallback_op = op;
            return NX_FALLBACK;
        }
        break;
    case OP_PROGRAM: {
        uint32_t pid = rd32(p + 4);
        s->program = find(o->progs, o->nprogs, sizeof(nx_prog), pid);
        if (!s->program) return fail(e, idx, op, "program", "PROGRAM: field program %u is not a registered program", pid);
        break;
    }
    case OP_VERTEX_LAYOUT: {
        uint32_t cnt = rd32(p + 12);
        s->stride = rd32(p + 4);
        s->attr_end = 0;
        s->loc_mask = 0;
        for (uint32_t k = 0; k < cnt; k++) {
            const uint8_t *a = p + 16 + 12 * k;
            uint32_t end = rd32(a + 8) + VERTEX_BYTES[rd32(a + 4)];
            if (end > s->attr_end) s->attr_end = end;
            s->loc_mask |= 1u << rd32(a);
        }
        s->have_layout = 1;
        break;
    }
    case OP_VERTEX: case OP_INDEX: case OP_UNIFORM: {
        const uint8_t *f = p + 4 + (op == OP_UNIFORM ? 4 : 0);
        uint32_t pool = rd32(f);
        uint64_t off = rd64(f + 4), sz = rd64(f + 12);
        int rc = range_ok(s, idx, op, pool, off, sz, e);
        if (rc) return rc;
        if (op == OP_UNIFORM && sz > MAX_UNIFORM)
            return fail(e, idx, op, "size", "UNIFORM: uniform range of %llu bytes exceeds %d", (unsigned long long)sz, MAX_UNIFORM);
        if (op == OP_VERTEX) { s->have_vertex = 1; s->vertex_size = sz; }
        if (op == OP_INDEX) { s->have_index = 1; s->index_size_bytes = sz; s->index_size = rd32(f + 20); }
        break;
    }
    case OP_TEXTURE: {
        uint32_t slot = rd32(p + 4), tid = rd32(p + 8), sid = rd32(p + 12);
        const nx_tex *t = find(o->texs, o->ntexs, sizeof(nx_tex), tid);
        if (!t) return fail(e, idx, op, "texture", "TEXTURE: field texture %u is not a registered texture", tid);
        const nx_smp *sm = find(o->smps, o->nsmps, sizeof(nx_smp), sid);
        if (!sm) return fail(e, idx, op, "sampler", "TEXTURE: field sampler %u is not a registered sampler", sid);
        if (t->flags & 4)
            return fail(e, idx, op, "texture", "TEXTURE: field texture %u is multisampled; RESOLVE it into a one-sample texture to sample it", tid);
        s->slot_tex[slot] = t;
        s->slot_smp[slot] = sm;
        break;
    }
    case OP_SIGNAL:
        if (rd32(p + 4) >= NUM_FENCES) return fail(e, idx, op, "fence", "SIGNAL: field fence %u is not below %d", rd32(p + 4), NUM_FENCES);
        break;
    case OP_PRESENT: {
        uint32_t tid = rd32(p + 12);
        const nx_tex *t = find(o->texs, o->ntexs, sizeof(nx_tex), tid);
        if (!t) return fail(e, idx, op, "texture", "PRESENT: field texture %u is not a registered texture", tid);
        /* render target, colour, one sample, RGBA8/BGRA8: flag 8 says "presentable" */
        if (!(t->flags & 8)) return fail(e, idx, op, "texture", "PRESENT: field texture %u is not a one-sample RGBA8/BGRA8 colour render target", tid);
        break;
    }
    case OP_DRAW: case OP_DRAW_INDEXED: {
        const char *name = op_name(op);
        if (!s->target && !s->depth) return fail(e, idx, op, "state", "%s: no render target set", name);
        {   /* a multisampled target must have MULTISAMPLE's count: the Python path names the target */
            const nx_tex *t0 = s->target ? s->target : s->depth;
            if (s->ms_samples && t0->samples > 1 && t0->samples != s->ms_samples) {
                if (!s->fallback_op) s->fallback_op = op;
                return NX_FALLBACK;
            }
        }
        if (!s->program) return fail(e, idx, op, "state", "%s: no program set", name);
        if (!s->have_layout) return fail(e, idx, op, "state", "%s: no vertex layout set", name);
        if (!s->have_vertex) return fail(e, idx, op, "state", "%s: no vertex buffer set", name);
        const nx_prog *pr = s->program;
        uint32_t missing = pr->input_mask & ~s->loc_mask;
        if (missing) return fail(e, idx, op, "state", "%s: program %u reads vertex locations (mask %#x) the layout lacks", name, pr->id, missing);
        for (int k = 0; k < 4; k++) {
            const nx_tex *t = s->slot_tex[k];
            if (!t) continue;
            if (bound(s, t))
                return fail(e, idx, op, "state", "%s: texture %u in slot %d is the current render target", name, t->id, k);
            uint32_t want = pr->kinds[k];
            if (want && t->kind != want && (t->kind != NX_KIND_2D || want != NX_KIND_OTHER))
                return fail(e, idx, op, "state", "%s: texture %u in slot %d is a %s texture; program %u samples binding %d as %s",
                            name, t->id, k, KIND_NAMES[t->kind < NX_KINDS ? t->kind : 0], pr->id, 4 + k, KIND_NAMES[want < NX_KINDS ? want : 0]);
            uint32_t use = pr->lookups[k];
            int dref = use == NX_LOOK_DREF || use == NX_LOOK_BOTH, plain = use == NX_LOOK_PLAIN || use == NX_LOOK_BOTH;
            if (dref && !(t->flags & 2))
                return fail(e, idx, op, "state", "%s: texture %u in slot %d is a %s texture, but program %u looks binding %d up with a depth comparison (Dref), which needs a depth format (Vulkan leaves it undefined on colour formats)",
                            name, t->id, k, t->format < NX_NFORMATS ? NX_FORMAT_NAMES[t->format] : "?", pr->id, 4 + k);
            if (dref && !s->slot_smp[k]->compare)
                return fail(e, idx, op, "state", "%s: texture %u in slot %d is looked up with a depth comparison (Dref) by program %u at binding %d, but sampler %u is a plain sampler (no compare op; Vulkan leaves the result undefined)",
                            name, t->id, k, pr->id, 4 + k, s->slot_smp[k]->id);
            if (plain && s->slot_smp[k]->compare)
                return fail(e, idx, op, "state", "%s: sampler %u in slot %d (texture %u) has a compare op, but program %u's lookup at binding %d does not compare (no Dref; Vulkan leaves the result undefined)",
                            name, s->slot_smp[k]->id, k, t->id, pr->id, 4 + k);
        }
        if (pr->flags & 1)      /* the program reads the pools: none of their textures is a target */
            for (int k = 0; k < POOL_TEXTURES; k++) {
                const nx_tex *t = s->pool_tex[k];
                if (t && bound(s, t))
                    return fail(e, idx, op, "state", "%s: texture %u in the texture pool is the current render target", name, t->id);
            }
        uint64_t count = rd32(p + 4), first = rd32(p + 12);
        if (op == OP_DRAW) {
            if (count && (first + count - 1) * s->stride + s->attr_end > s->vertex_size)
                return fail(e, idx, op, "first_vertex", "DRAW: vertices %llu..%llu run past the %llu-byte vertex buffer (stride %u)",
                            (unsigned long long)first, (unsigned long long)(first + count - 1), (unsigned long long)s->vertex_size, s->stride);
        } else {
            if (!s->have_index) return fail(e, idx, op, "state", "DRAW_INDEXED: no index buffer set");
            if ((first + count) * s->index_size > s->index_size_bytes)
                return fail(e, idx, op, "first_index", "DRAW_INDEXED: indices %llu..%lld run past the %llu-byte index buffer",
                            (unsigned long long)first, (long long)(first + count) - 1, (unsigned long long)s->index_size_bytes);
        }
        s->draws++;
        break;
    }
    case OP_BEGIN: case OP_END:
        return fail(e, idx, op, "op", "%s: nested submission marker", op_name(op));
    case OP_VIEWPORT: case OP_SCISSOR:
        break;   /* no handles: the format pass checked everything */
    case OP_PRESENT_IMAGE: {
        /* its pool range (snapshotted; its pixels made from the snapshot after the run, no Vulkan work) */
        int rc = range_ok(s, idx, op, rd32(p + 12), rd64(p + 16), image_bytes(p), e);
        if (rc) return rc;
        break;
    }
    default:
        if (!s->fallback_op) s->fallback_op = op;
        return NX_FALLBACK;
    }
    return NX_OK;
}

/* Format-check the blob (pass 1); with `objs`, also validate it (pass 2).  Returns NX_OK,
 * NX_BAD (`e` says why) or NX_FALLBACK (well formed, but holds op `*fallback_op`, which only the
 * Python path replays: the caller replays the submission there, which validates it whole).
 * `*count`: the packets; `*draws`: the draws validated.  `flags & NX_FORMATTED`: every packet's
 * fields were checked already (nx_pkt_format_body on the GPU process's own copy of the bytes, as
 * they were staged): pass 1's field checks are left out (the structure is checked again by pass 2's
 * walk); without `objs` the flag is ignored. */
#define NX_FORMATTED 1u
int nx_pkt_check(const uint8_t *buf, size_t len, const nx_objects *objs, uint32_t flags, uint32_t *count, uint64_t *draws,
                 int32_t *fallback_op, nx_error *e) {
    memset(e, 0, sizeof *e);
    e->index = -1;
    *count = 0;
    *draws = 0;
    *fallback_op = 0;
    int rc = objs && (flags & NX_FORMATTED) ? NX_OK : walk(buf, len, visit_format, NULL, count, e);
    if (rc || !objs) return rc;
    vstate s;
    memset(&s, 0, sizeof s);
    s.o = objs;
    rc = walk(buf, len, visit_objects, &s, count, e);
    *draws = s.draws;
    if (rc == NX_FALLBACK) {
        memset(e, 0, sizeof *e);
        e->index = -1;
        *fallback_op = s.fallback_op;
    }
    return rc;
}

/* Pass 1 over bare packet bodies (a recorder chunk: whole packets back to back, no blob header),
 * as they are staged, while the client is still recording (PROTOCOL.md "Staged chunks"): the
 * number of packets where every one is well formed, else -1 (the submission that uses the chunk
 * is then checked whole, and its error named there). */
int64_t nx_pkt_format_body(const uint8_t *buf, size_t len) {
    nx_error e;
    size_t at = 0;
    int64_t n = 0;
    while (at < len) {
        if (len - at < 4 || n >= MAX_PACKETS) return -1;
        const uint8_t *p = buf + at;
        uint32_t fs = FAST[p[0]];
        /* the fast loop (see FAST): reserved byte 0, the op's fixed size, inside the body, its rule */
        if (fs && p[1] == 0 && (uint32_t)(p[2] | p[3] << 8) == fs && fs <= len - at) {
            uint8_t r = FAST_RULE[p[0]];
            if (r == FR_NONE || (r == FR_SLOT && rd32(p + 4) < FAST_LIMIT[p[0]]) ||
                (r == FR_COUNTS && rd32(p + 4) <= MAX_DRAW_COUNT && rd32(p + 8) <= MAX_DRAW_COUNT)) {
                at += fs;
                n++;
                continue;
            }
        }
        uint32_t size;
        if (packet_at(buf + at, len - at, (uint32_t)n, &size, &e) || check_fields((int32_t)n, buf[at], buf + at, size, &e)) return -1;
        at += size;
        n++;
    }
    return n;
}

/* The copy step of a staged chunk (or of an arena range a reference part names) and its format
 * pass in one call: `len` bytes from `src` (the client's arena) to `dst` (the GPU process's own
 * buffer), then nx_pkt_format_body on the copy, never on `src` (the client may change it).  The
 * caller checked both ranges; one C call per chunk instead of two slices and two calls. */
int64_t nx_pkt_copy_format_body(uint8_t *dst, const uint8_t *src, size_t len) {
    memcpy(dst, src, len);
    return nx_pkt_format_body(dst, len);
}

/* Decode a format-checked blob into words: per packet op, number of words that follow, then each
 * field (u32/i32/bool/f32 as their 32 bits, u64 whole; a list as its count then its items).
 * Returns the words written, or -1 when `cap` is too small. */
int64_t nx_pkt_decode(const uint8_t *buf, size_t len, uint64_t *out, size_t cap) {
    uint32_t n = rd32(buf + 8);
    size_t at = HEADER, w = 0;
    for (uint32_t i = 0; i < n && at + 4 <= len; i++) {
        const uint8_t *p = buf + at;
        uint32_t size = p[2] | p[3] << 8;
        const nx_op *o = &NX_OPS[p[0]];
        if (w + 2 > cap) return -1;
        out[w] = p[0];
        size_t nw = w + 1;
        w += 2;
        uint32_t f = 4;
        for (int k = 0; k < o->nfields; k++) {
            uint32_t items = 1, width = 4;
            if (o->kinds[k] == K_U64) width = 8;
            else if (o->kinds[k] == K_ATTRS) items = 1 + 3 * rd32(p + f);
            else if (o->kinds[k] == K_COLOR_IDS) items = 1 + rd32(p + f);
            else if (o->kinds[k] == K_TEX_IDS) items = POOL_TEXTURES;
            else if (o->kinds[k] == K_SMP_IDS) items = POOL_SAMPLERS;
            for (uint32_t j = 0; j < items; j++) {
                if (w >= cap) return -1;
                out[w++] = width == 8 ? rd64(p + f) : rd32(p + f);
                f += width;
            }
        }
        out[nw] = w - nw - 1;
        at += size;
    }
    return (int64_t)w;
}

/* ---- msgpack packets -> blob ------------------------------------------------------------------
 * The ring carries msgpack packets (PROTOCOL.md "Packets"); this turns one msgpack array of them
 * into a blob, byte for byte what binpackets.convert makes, in one call.  It accepts only values of
 * the exact msgpack types packets.check accepts (an int where an int goes, never a bool; a bool
 * only as a bool; an int or a float where a float goes), with a u32/u64/i32 field's value in its
 * range; anything else (another type, a float beyond f32, an int beyond 2^24 where a float goes)
 * returns NX_FALLBACK and the caller converts in Python, which names what is wrong.  Field ranges
 * and op rules are left to nx_pkt_check's format pass, which runs on the blob afterwards. */
typedef struct { const uint8_t *p, *end; } mp_in;

enum { MP_BAD, MP_INT, MP_UINT, MP_FLOAT, MP_BOOL, MP_ARRAY };
typedef struct { int kind; int64_t i; uint64_t u; double f; uint32_t n; } mp_val;

static int mp_need(mp_in *in, size_t n) { return (size_t)(in->end - in->p) >= n; }
static uint64_t be(const uint8_t *p, int n) { uint64_t v = 0; for (int i = 0; i < n; i++) v = v << 8 | p[i]; return v; }

static mp_val mp_next(mp_in *in) {
    mp_val v = {MP_BAD, 0, 0, 0, 0};
    if (!mp_need(in, 1)) return v;
    uint8_t b = *in->p++;
    int n = 0;
    if (b <= 0x7f) { v.kind = MP_UINT; v.u = b; return v; }
    if (b >= 0xe0) { v.kind = MP_INT; v.i = (int8_t)b; return v; }
    if (b >= 0x90 && b <= 0x9f) { v.kind = MP_ARRAY; v.n = b & 15; return v; }
    switch (b) {
    case 0xc2: case 0xc3: v.kind = MP_BOOL; v.u = b == 0xc3; return v;
    case 0xcc: n = 1; break;
    case 0xcd: n = 2; break;
    case 0xce: n = 4; break;
    case 0xcf: n = 8; break;
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        n = 1 << (b - 0xd0);
        if (!mp_need(in, n)) return v;
        uint64_t raw = be(in->p, n);
        in->p += n;
        int sh = 64 - 8 * n;
        v.kind = MP_INT;
        v.i = (int64_t)(raw << sh) >> sh;
        return v;
    }
    case 0xca: {
        if (!mp_need(in, 4)) return v;
        uint32_t raw = (uint32_t)be(in->p, 4);
        float f;
        memcpy(&f, &raw, 4);
        in->p += 4;
        v.kind = MP_FLOAT; v.f = f;
        return v;
    }
    case 0xcb: {
        if (!mp_need(in, 8)) return v;
        uint64_t raw = be(in->p, 8);
        memcpy(&v.f, &raw, 8);
        in->p += 8;
        v.kind = MP_FLOAT;
        return v;
    }
    case 0xdc: case 0xdd:
        n = b == 0xdc ? 2 : 4;
        if (!mp_need(in, n)) return v;
        v.n = (uint32_t)be(in->p, n);
        in->p += n;
        v.kind = MP_ARRAY;
        return v;
    default: return v;
    }
    if (!mp_need(in, n)) return v;
    v.kind = MP_UINT;
    v.u = be(in->p, n);
    in->p += n;
    return v;
}

/* an integer value (msgpack int or uint, not bool) in [lo, hi]: into *out (as int64 bits) */
static int mp_int_in(mp_val v, int64_t lo, uint64_t hi, uint64_t *out) {
    if (v.kind == MP_UINT) { if (v.u > hi || (lo > 0 && v.u < (uint64_t)lo)) return 0; *out = v.u; return 1; }
    if (v.kind == MP_INT) {
        if (v.i < lo || (v.i >= 0 && (uint64_t)v.i > hi)) return 0;
        *out = (uint64_t)v.i;
        return 1;
    }
    return 0;
}

typedef struct { uint8_t *o, *end; } bout;
static int put32(bout *b, uint32_t v) { if (b->end - b->o < 4) return 0; memcpy(b->o, &v, 4); b->o += 4; return 1; }
static int put64(bout *b, uint64_t v) { if (b->end - b->o < 8) return 0; memcpy(b->o, &v, 8); b->o += 8; return 1; }

static int mp_field(mp_in *in, bout *b, int kind) {
    mp_val v = mp_next(in);
    uint64_t x;
    switch (kind) {
    case K_U32: return mp_int_in(v, 0, 0xFFFFFFFFull, &x) && put32(b, (uint32_t)x);
    case K_U64: return mp_int_in(v, 0, UINT64_MAX, &x) && put64(b, x);
    case K_I32: return mp_int_in(v, INT32_MIN, INT32_MAX, &x) && put32(b, (uint32_t)(int32_t)(int64_t)x);
    case K_BOOL: return v.kind == MP_BOOL && put32(b, (uint32_t)v.u);
    case K_F32: {
        double d;
        if (v.kind == MP_FLOAT) d = v.f;
        else if (mp_int_in(v, -(1 << 24), 1 << 24, &x)) d = (double)(int64_t)x;
        else return 0;
        if (!(d >= -3.4028234663852886e38 && d <= 3.4028234663852886e38)) return 0;   /* NaN, inf, beyond f32 */
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        return put32(b, bits);
    }
    case K_ATTRS: case K_COLOR_IDS: case K_TEX_IDS: case K_SMP_IDS: {
        if (v.kind != MP_ARRAY) return 0;
        uint32_t want = kind == K_TEX_IDS ? POOL_TEXTURES : kind == K_SMP_IDS ? POOL_SAMPLERS : 0;
        uint32_t hi = kind == K_ATTRS ? MAX_ATTRS : MAX_COLOR_TARGETS;
        if (want ? v.n != want : (v.n < 1 || v.n > hi)) return 0;
        if (!want && !put32(b, v.n)) return 0;
        for (uint32_t i = 0; i < v.n; i++) {
            if (kind == K_ATTRS) {
                mp_val a = mp_next(in);
                if (a.kind != MP_ARRAY || a.n != 3) return 0;
                for (int k = 0; k < 3; k++) if (!mp_int_in(mp_next(in), 0, 0xFFFF, &x) || !put32(b, (uint32_t)x)) return 0;
            } else if (!mp_int_in(mp_next(in), 0, 0xFFFFFFFFull, &x) || !put32(b, (uint32_t)x)) {
                return 0;
            }
        }
        return 1;
    }
    }
    return 0;
}

/* One msgpack array of packets (`src`) into a blob in `out` (`cap` bytes).  Returns the blob's
 * length, or -1 (NX_FALLBACK's case: convert in Python), or -2 (out too small). */
int64_t nx_from_msgpack(const uint8_t *src, size_t len, uint8_t *out, size_t cap) {
    mp_in in = {src, src + len};
    mp_val arr = mp_next(&in);
    if (arr.kind != MP_ARRAY || cap < HEADER) return cap < HEADER ? -2 : -1;
    bout b = {out + HEADER, out + cap};
    for (uint32_t i = 0; i < arr.n; i++) {
        mp_val pk = mp_next(&in);
        if (pk.kind != MP_ARRAY || pk.n < 1) return -1;
        mp_val opv = mp_next(&in);
        if (opv.kind != MP_UINT || opv.u == 0 || opv.u >= NX_NOPS || !NX_OPS[opv.u].name) return -1;
        const nx_op *o = &NX_OPS[opv.u];
        if (pk.n != (uint32_t)o->nfields + 1) return -1;
        uint8_t *start = b.o;
        if (!put32(&b, 0)) return -2;
        for (int k = 0; k < o->nfields; k++)
            if (!mp_field(&in, &b, o->kinds[k])) return b.o >= b.end ? -2 : -1;
        size_t size = (size_t)(b.o - start);
        if (size > 0xFFFC) return -1;
        start[0] = (uint8_t)opv.u; start[1] = 0; start[2] = (uint8_t)size; start[3] = (uint8_t)(size >> 8);
    }
    if (in.p != in.end || arr.n > MAX_PACKETS) return -1;
    uint32_t hdr[4] = {MAGIC, NX_VERSION | HEADER << 16, arr.n, (uint32_t)(b.o - out - HEADER)};
    memcpy(out, hdr, 16);
    return b.o - out;
}
