/* hipc_parse.c — the HIPC request envelope read in C (the layout of hipc.py's docstring:
 * switchbrew IPC_Marshalling, libnx sf/hipc.h).  The Python side (hipc.parse) turns the flat
 * result into a Message; the C side never trusts a count: every word it reads is checked against
 * the buffer's size first.
 *
 * Output, u64 each: [0] type, [1] has_pid, [2] pid, [3] ncopy, [4] nmove, [5] nx, [6] na, [7] nb,
 * [8] nw, [9] nc, [10] c_mode, [11] data_offset, [12] data word count; then the copy handles, the
 * move handles, X as (index, address, size), A/B/W as (address, size, mode), C as (index,
 * address, size).  At most 13 + 15 + 15 + 3*15 + 9*15 + 3*13 = 262 values.
 * Returns the number of values, or -(bytes the message needs) when it overruns its buffer. */
#include <stdint.h>
#include <string.h>

#define NX_HIPC_OUT_MAX 272

static inline uint32_t word(const unsigned char *b, uint32_t off) {
    uint32_t v;
    memcpy(&v, b + off, 4);
    return v;
}

int64_t nx_hipc_parse(const unsigned char *buf, uint32_t limit, uint64_t *out) {
#define NEED(off, n) do { if ((uint64_t)(off) + 4ull * (n) > limit) return -(int64_t)((off) + 4ull * (n)); } while (0)
    NEED(0, 2);
    uint32_t w0 = word(buf, 0), w1 = word(buf, 4);
    uint32_t nx = (w0 >> 16) & 0xF, na = (w0 >> 20) & 0xF, nb = (w0 >> 24) & 0xF, nw = (w0 >> 28) & 0xF;
    uint32_t ndata = w1 & 0x3FF, c_mode = (w1 >> 10) & 0xF, special = w1 >> 31;
    uint32_t off = 8, ncopy = 0, nmove = 0, has_pid = 0;
    uint64_t pid = 0;
    uint32_t n = 13;
    if (special) {
        NEED(off, 1);
        uint32_t sp = word(buf, off);
        off += 4;
        has_pid = sp & 1;
        ncopy = (sp >> 1) & 0xF;
        nmove = (sp >> 5) & 0xF;
        if (has_pid) {
            NEED(off, 2);
            pid = (uint64_t)word(buf, off) | (uint64_t)word(buf, off + 4) << 32;
            off += 8;
        }
        NEED(off, ncopy);                     /* copy handles, then move handles: checked in that order */
        NEED(off + 4 * ncopy, nmove);
        for (uint32_t i = 0; i < ncopy + nmove; i++, off += 4)
            out[n++] = word(buf, off);
    }
    for (uint32_t i = 0; i < nx; i++, off += 8) {
        NEED(off, 2);
        uint32_t d0 = word(buf, off), d1 = word(buf, off + 4);
        out[n++] = d0 & 0x3F;
        out[n++] = (uint64_t)d1 | (uint64_t)((d0 >> 12) & 0xF) << 32 | (uint64_t)((d0 >> 6) & 0x3F) << 36;
        out[n++] = d0 >> 16;
    }
    for (uint32_t i = 0; i < na + nb + nw; i++, off += 12) {
        NEED(off, 3);
        uint32_t size_lo = word(buf, off), addr_lo = word(buf, off + 4), d2 = word(buf, off + 8);
        out[n++] = (uint64_t)addr_lo | (uint64_t)((d2 >> 28) & 0xF) << 32 | (uint64_t)((d2 >> 2) & 0x3FFFFF) << 36;
        out[n++] = (uint64_t)size_lo | (uint64_t)((d2 >> 24) & 0xF) << 32;
        out[n++] = d2 & 3;
    }
    uint32_t data_offset = off;
    NEED(off, ndata);
    off += 4 * ndata;
    uint32_t nc = c_mode == 2 ? 1 : c_mode > 2 ? c_mode - 2 : 0;
    for (uint32_t i = 0; i < nc; i++, off += 8) {
        NEED(off, 2);
        uint32_t c0 = word(buf, off), c1 = word(buf, off + 4);
        out[n++] = i;
        out[n++] = (uint64_t)c0 | (uint64_t)(c1 & 0xFFFF) << 32;
        out[n++] = c1 >> 16;
    }
    out[0] = w0 & 0xFFFF; out[1] = has_pid; out[2] = pid; out[3] = ncopy; out[4] = nmove;
    out[5] = nx; out[6] = na; out[7] = nb; out[8] = nw; out[9] = nc; out[10] = c_mode;
    out[11] = data_offset; out[12] = ndata;
    return n;
#undef NEED
}
