/* The client's submit of a native recording that lies in the command arena, in C: one call writes
 * the submission's reference part (ring tag 5, gpu_host/PROTOCOL.md "Command arena" and "Staged
 * chunks") into the command ring, publishes it and rings the doorbell.  It is the same record
 * cpu_host/gpu_client/blob.py's part_records + RingWriter.write make in Python (those stay the
 * reference and the path for everything else: inline parts, several items, a full ring); the
 * layout constants are gpu_host/ring_layout.py's and gpu_host/binpackets.py's, passed in by
 * ringput.py (generated defines), so they are written down once.
 *
 * Trust: the ring is the producer's own memory, but its read position is written by the GPU
 * process, so it is checked like any peer input (a read position ahead of the write position or
 * more than a capacity behind is refused: the caller falls back to the Python path, which waits
 * and recovers). */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* recorder.c's Chunk: a chunk's offset in the recording's buffer, its packets, its stage serial */
typedef struct { uint64_t offset; uint32_t count; uint32_t stage; } Chunk;

enum { PUT_OK = 0, PUT_FULL = 1, PUT_BAD = 2 };

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Write the reference part of submission ``seq``: ``nch`` chunks of the recording at arena offset
 * ``at`` (``total`` bytes; chunk i from ch[i].offset to ch[i+1].offset, the last to ``total``).
 * ``ring``: the ring's mapping (header page first); ``cap``: its data capacity; ``*wpos``: the
 * producer's write position, advanced on success.  Returns PUT_OK, PUT_FULL (no room now:
 * nothing written) or PUT_BAD (inconsistent input: nothing written). */
int nx_ring_put_ref(uint8_t *ring, uint64_t cap, uint64_t *wpos, uint64_t seq, uint64_t chunks_addr, uint32_t nch,
                    uint64_t total, uint64_t at, int bell) {
    const Chunk *ch = (const Chunk *)(uintptr_t)chunks_addr;
    if (cap == 0 || cap % 8 || (nch && !ch)) return PUT_BAD;
    int staged = 0;
    uint64_t packets = 0;
    for (uint32_t i = 0; i < nch; i++) {
        uint64_t end = i + 1 < nch ? ch[i + 1].offset : total;
        if (end < ch[i].offset || end > total) return PUT_BAD;
        staged |= ch[i].stage != 0;
        packets += ch[i].count;
    }
    if (packets > 0xFFFFFFFFu || total - (nch ? ch[0].offset : 0) > 0xFFFFFFFFu) return PUT_BAD;
    uint64_t base = nch ? ch[0].offset : 0; /* the chunks lie back to back from here */
    uint64_t nranges = staged ? 2 * (uint64_t)nch + 1 : 1; /* at most */
    uint64_t rsize = staged ? NX_STAGED_RANGE : NX_REF_RANGE;
    uint64_t most = NX_BLOB_PART + NX_BLOB_HEADER + nranges * rsize;
    if (most > NX_MAX_PACKET) return PUT_BAD;
    /* the record: built in place once room is known; its exact length is found while writing */
    uint64_t need_most = NX_REC_HDR + ((most + 7) & ~(uint64_t)7);
    if (need_most > cap) return PUT_BAD;
    volatile uint64_t *rd = (volatile uint64_t *)(ring + NX_OFF_READ);
    uint64_t w = *wpos, r = __atomic_load_n(rd, __ATOMIC_ACQUIRE);
    if (r > w || w - r > cap) return PUT_BAD;
    uint64_t off = w % cap;
    uint64_t pad = off + need_most > cap ? cap - off : 0;
    if (cap - (w - r) < need_most + pad) return PUT_FULL;
    uint8_t *data = ring + NX_HEADER_SIZE;
    if (pad) {
        put32(data + off, (uint32_t)(pad - NX_REC_HDR));
        put32(data + off + 4, NX_TAG_PAD);
        w += pad;
        off = 0;
    }
    uint8_t *rec = data + off + NX_REC_HDR, *p = rec;
    put64(p, seq);
    put32(p + 8, 0);
    put32(p + 12, NX_BLOB_LAST | (staged ? NX_BLOB_STAGED : 0));
    p += NX_BLOB_PART;
    put32(p, NX_BLOB_MAGIC);
    put32(p + 4, NX_BLOB_VERSION | (NX_BLOB_HEADER << 16)); /* u16 version, u16 header size */
    put32(p + 8, (uint32_t)packets);
    put32(p + 12, (uint32_t)(total - base));
    p += NX_BLOB_HEADER;
    if (!staged) {
        put64(p, at + base);
        put64(p + 8, total - base);
        p += 16;
    } else {
        /* one range per staged chunk (its serial), one per run of chunks not staged (serial 0) */
        uint64_t run_at = at + base, run = 0, nout = 0;
        for (uint32_t i = 0; i < nch; i++) {
            uint64_t len = (i + 1 < nch ? ch[i + 1].offset : total) - ch[i].offset;
            uint64_t c_at = at + ch[i].offset;
            if (ch[i].stage) {
                if (run) {
                    put64(p, run_at), put64(p + 8, run), put64(p + 16, 0), p += 24, nout++;
                }
                put64(p, c_at), put64(p + 8, len), put64(p + 16, ch[i].stage), p += 24, nout++;
                run = 0;
                run_at = c_at + len;
            } else {
                run += len;
            }
        }
        if (run || !nout) put64(p, run_at), put64(p + 8, run), put64(p + 16, 0), p += 24;
    }
    uint64_t len = (uint64_t)(p - rec);
    put32(data + off, (uint32_t)len);
    put32(data + off + 4, NX_TAG_BLOB_REF);
    w += NX_REC_HDR + ((len + 7) & ~(uint64_t)7);
    /* publish: the record's bytes before the write position (release), then the doorbell */
    __atomic_store_n((uint64_t *)(ring + NX_OFF_WRITE), w, __ATOMIC_RELEASE);
    *wpos = w;
    uint64_t one = 1;
    if (bell >= 0) (void)!write(bell, &one, 8);
    return PUT_OK;
}
