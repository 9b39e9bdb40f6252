/* A small xxhsum of our own over xxHash's library (xxhash.h, downloaded at test time):
 * for each file, XXH32, XXH64, XXH3-64 and XXH128 of the whole contents (one-shot), then the
 * same through the streaming API fed in uneven chunks, with a seed; both must agree, so a
 * lifter bug in either path shows up as a mismatch line as well as a difference from qemu. */
#define XXH_STATIC_LINKING_ONLY
#define XXH_INLINE_ALL
#include "xxhash.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (n == cap) buf = realloc(buf, cap *= 2);
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0) break;
        n += r;
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    int status = 0;
    for (int i = 1; i < argc; i++) {
        size_t n;
        unsigned char *b = slurp(argv[i], &n);
        if (!b) { fprintf(stderr, "xxhsum: %s: cannot open\n", argv[i]); status = 1; continue; }
        XXH128_hash_t h128 = XXH3_128bits(b, n);
        printf("XXH32  %08x  %s\n", XXH32(b, n, 0), argv[i]);
        printf("XXH64  %016llx  %s\n", (unsigned long long)XXH64(b, n, 0), argv[i]);
        printf("XXH3   %016llx  %s\n", (unsigned long long)XXH3_64bits(b, n), argv[i]);
        printf("XXH128 %016llx%016llx  %s\n", (unsigned long long)h128.high64, (unsigned long long)h128.low64, argv[i]);
        /* streaming, seeded, uneven chunks */
        unsigned long long seed = 0x9e3779b97f4a7c15ull ^ n;
        XXH32_state_t *s32 = XXH32_createState(); XXH32_reset(s32, (unsigned)seed);
        XXH64_state_t *s64 = XXH64_createState(); XXH64_reset(s64, seed);
        XXH3_state_t *s3 = XXH3_createState(); XXH3_64bits_reset_withSeed(s3, seed);
        XXH3_state_t *s128 = XXH3_createState(); XXH3_128bits_reset_withSeed(s128, seed);
        size_t off = 0, step = 1;
        while (off < n) {
            size_t k = step < n - off ? step : n - off;
            XXH32_update(s32, b + off, k); XXH64_update(s64, b + off, k);
            XXH3_64bits_update(s3, b + off, k); XXH3_128bits_update(s128, b + off, k);
            off += k;
            step = step * 3 + 7; if (step > 100000) step = 13;
        }
        unsigned a32 = XXH32_digest(s32);
        unsigned long long a64 = XXH64_digest(s64), a3 = XXH3_64bits_digest(s3);
        XXH128_hash_t a128 = XXH3_128bits_digest(s128);
        int ok = a32 == XXH32(b, n, (unsigned)seed) && a64 == XXH64(b, n, seed) &&
                 a3 == XXH3_64bits_withSeed(b, n, seed) && XXH128_isEqual(a128, XXH3_128bits_withSeed(b, n, seed));
        printf("seeded %08x %016llx %016llx %016llx%016llx %s  %s\n", a32, a64, a3,
               (unsigned long long)a128.high64, (unsigned long long)a128.low64, ok ? "stream=oneshot" : "STREAM-MISMATCH", argv[i]);
        if (!ok) status = 3;
        XXH32_freeState(s32); XXH64_freeState(s64); XXH3_freeState(s3); XXH3_freeState(s128);
        free(b);
    }
    return status;
}
