/* Block profiles of a bundle built with recompiler.profile_gen (recompiler/profile.py): each shard
   of such a build counts the runs of its guest blocks in a static array (one counter a label,
   plain increments: a count another thread's increment raced with may lose one) and registers
   it here from a constructor.  At the process's exit nx_block_profile_write sums the counters per
   guest address and writes the profile file (cpu_host.block_profile_file, default
   nxrecomp-profile.json in the working folder) through a temporary file renamed over it, so a
   reader never sees half a file.  In an ordinary build nothing registers and nothing is written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct BpShard {
    uint64_t *counts;
    const uint64_t *pcs;
    uint32_t n;
    const char *program;
    struct BpShard *next;
} BpShard;

static BpShard *bp_shards;  /* constructors run one at a time (dlopen), before any guest thread */

void nx_block_profile_register(uint64_t *counts, const uint64_t *pcs, uint32_t n, const char *program) {
    BpShard *b = malloc(sizeof *b);
    if (!b) return;
    *b = (BpShard){counts, pcs, n, program, bp_shards};
    bp_shards = b;
}

typedef struct { uint64_t pc, n; } BpPair;

static int bp_cmp(const void *a, const void *b) {
    uint64_t x = ((const BpPair *)a)->pc, y = ((const BpPair *)b)->pc;
    return x < y ? -1 : x > y;
}

void nx_block_profile_write(void) {
    static int written;
    if (!bp_shards || __atomic_exchange_n(&written, 1, __ATOMIC_ACQ_REL)) return;
    size_t total = 0;
    for (BpShard *b = bp_shards; b; b = b->next) total += b->n;
    BpPair *v = malloc((total ? total : 1) * sizeof *v);
    if (!v) return;
    size_t k = 0;
    for (BpShard *b = bp_shards; b; b = b->next)
        for (uint32_t i = 0; i < b->n; i++)
            if (b->counts[i]) v[k++] = (BpPair){b->pcs[i], b->counts[i]};
    qsort(v, k, sizeof *v, bp_cmp);
    const char *path = getenv("NXRECOMP_CPU_HOST_BLOCK_PROFILE_FILE");
    if (!path || !*path) path = "nxrecomp-profile.json";
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "nxrecomp: cannot write the block profile %s\n", tmp);
        free(v);
        return;
    }
    fprintf(f, "{\"format\": \"nxrecomp-block-profile\", \"version\": 1, \"program\": \"%s\", \"blocks\": {",
            bp_shards->program);
    size_t out = 0;
    for (size_t i = 0; i < k;) {
        uint64_t pc = v[i].pc, n = 0;
        for (; i < k && v[i].pc == pc; i++) n += v[i].n;  /* a block's copies (inlined, twins) */
        fprintf(f, "%s\n\"0x%llx\": %llu", out++ ? "," : "", (unsigned long long)pc, (unsigned long long)n);
    }
    fprintf(f, "\n}}\n");
    int bad = ferror(f);
    bad |= fclose(f);
    if (bad || rename(tmp, path)) {
        fprintf(stderr, "nxrecomp: cannot write the block profile %s\n", path);
        unlink(tmp);
    }
    free(v);
}
