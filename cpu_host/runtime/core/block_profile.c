/* Block profiles of a bundle built with recompiler.profile_gen (recompiler/profile.py): each shard
   of such a build counts the runs of its guest blocks in a static array (plain increments: a
   count another thread's increment raced with may lose one) and registers it here from a
   constructor: nx_block_profile_register2 with a copy key a counter ("F0x10566f4:0x10567c0+1":
   the C copy holding the block, the block, the segment; recompiler/profile.py's segments) and
   the block's guest address for a block's first segment (0 for the others);
   nx_block_profile_register (no keys: one counter a block) is what version 1 builds call.  At the
   process's exit nx_block_profile_write sums the counters per guest address ("blocks") and per
   key ("copies": written where some shard has keys, version 2) and writes the profile file
   (cpu_host.block_profile_file, default nxrecomp-profile.json in the working folder) through a
   temporary file renamed over it, so a reader never sees half a file.  In an ordinary build
   nothing registers and nothing is written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct BpShard {
    uint64_t *counts;
    const uint64_t *pcs;
    const char *const *keys;  /* NULL: a version 1 shard */
    uint32_t n;
    const char *program;
    struct BpShard *next;
} BpShard;

static BpShard *bp_shards;  /* constructors run one at a time (dlopen), before any guest thread */

void nx_block_profile_register2(uint64_t *counts, const uint64_t *pcs, const char *const *keys, uint32_t n,
                                const char *program) {
    BpShard *b = malloc(sizeof *b);
    if (!b) return;
    *b = (BpShard){counts, pcs, keys, n, program, bp_shards};
    bp_shards = b;
}

void nx_block_profile_register(uint64_t *counts, const uint64_t *pcs, uint32_t n, const char *program) {
    nx_block_profile_register2(counts, pcs, NULL, n, program);
}

typedef struct { uint64_t pc, n; } BpPair;
typedef struct { const char *key; uint64_t n; } BpKey;

static int bp_cmp(const void *a, const void *b) {
    uint64_t x = ((const BpPair *)a)->pc, y = ((const BpPair *)b)->pc;
    return x < y ? -1 : x > y;
}

static int bp_key_cmp(const void *a, const void *b) {
    return strcmp(((const BpKey *)a)->key, ((const BpKey *)b)->key);
}

void nx_block_profile_write(void) {
    static int written;
    if (!bp_shards || __atomic_exchange_n(&written, 1, __ATOMIC_ACQ_REL)) return;
    size_t total = 0;
    int v2 = 0;
    for (BpShard *b = bp_shards; b; b = b->next) total += b->n, v2 |= b->keys != NULL;
    BpPair *v = malloc((total ? total : 1) * sizeof *v);
    BpKey *c = malloc((total ? total : 1) * sizeof *c);
    if (!v || !c) {
        free(v);
        free(c);
        return;
    }
    size_t k = 0, kc = 0;
    for (BpShard *b = bp_shards; b; b = b->next)
        for (uint32_t i = 0; i < b->n; i++) {
            if (!b->counts[i]) continue;
            if (b->pcs[i]) v[k++] = (BpPair){b->pcs[i], b->counts[i]};
            if (b->keys && b->keys[i][0]) c[kc++] = (BpKey){b->keys[i], b->counts[i]};
        }
    qsort(v, k, sizeof *v, bp_cmp);
    qsort(c, kc, sizeof *c, bp_key_cmp);
    const char *path = getenv("NXRECOMP_CPU_HOST_BLOCK_PROFILE_FILE");
    if (!path || !*path) path = "nxrecomp-profile.json";
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "nxrecomp: cannot write the block profile %s\n", tmp);
        free(v);
        free(c);
        return;
    }
    fprintf(f, "{\"format\": \"nxrecomp-block-profile\", \"version\": %d, \"program\": \"%s\", \"blocks\": {",
            v2 ? 2 : 1, bp_shards->program);
    size_t out = 0;
    for (size_t i = 0; i < k;) {
        uint64_t pc = v[i].pc, n = 0;
        for (; i < k && v[i].pc == pc; i++) n += v[i].n;  /* a block's copies (inlined, twins) */
        fprintf(f, "%s\n\"0x%llx\": %llu", out++ ? "," : "", (unsigned long long)pc, (unsigned long long)n);
    }
    if (v2) {
        fprintf(f, "\n}, \"copies\": {");
        out = 0;
        for (size_t i = 0; i < kc;) {
            const char *key = c[i].key;
            uint64_t n = 0;
            for (; i < kc && !strcmp(c[i].key, key); i++) n += c[i].n;  /* a static copy in several shards */
            fprintf(f, "%s\n\"%s\": %llu", out++ ? "," : "", key, (unsigned long long)n);
        }
    }
    fprintf(f, "\n}}\n");
    int bad = ferror(f);
    bad |= fclose(f);
    if (bad || rename(tmp, path)) {
        fprintf(stderr, "nxrecomp: cannot write the block profile %s\n", path);
        unlink(tmp);
    }
    free(v);
    free(c);
}
