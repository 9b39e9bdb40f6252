/* A small zstd command of our own over the zstd library (zstd.c, downloaded at test time):
 *   zstd -LEVEL [-T] [-jN] < in > out   compress stdin to stdout at LEVEL (streaming API, checksum on)
 *   zstd -d < in > out                  decompress stdin to stdout
 * -T also sets long-distance matching and a 2^24 window (other match finders); -jN compresses
 * with N worker threads (ZSTD_c_nbWorkers: a library built with ZSTD_MULTITHREAD; its output
 * is the same for every N >= 1, whatever the threads' timing).
 * The last stderr line is a summary (bytes in/out), so a silent truncation is seen too. */
#include "zstd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, size_t code) {
    fprintf(stderr, "zstd: %s: %s\n", what, ZSTD_getErrorName(code));
    return 1;
}

int main(int argc, char **argv) {
    int decompress = 0, level = 3, ldm = 0, workers = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-d")) decompress = 1;
        else if (!strcmp(argv[i], "-T")) ldm = 1;
        else if (!strncmp(argv[i], "-j", 2) && argv[i][2]) workers = atoi(argv[i] + 2);
        else if (argv[i][0] == '-' && argv[i][1] >= '0' && argv[i][1] <= '9') level = atoi(argv[i] + 1);
        else { fprintf(stderr, "zstd: bad argument %s\n", argv[i]); return 2; }
    }
    size_t inCap = decompress ? ZSTD_DStreamInSize() : ZSTD_CStreamInSize();
    size_t outCap = decompress ? ZSTD_DStreamOutSize() : ZSTD_CStreamOutSize();
    char *in = malloc(inCap), *out = malloc(outCap);
    unsigned long long tin = 0, tout = 0;
    if (decompress) {
        ZSTD_DCtx *d = ZSTD_createDCtx();
        size_t r, last = 0;
        while ((r = fread(in, 1, inCap, stdin)) > 0) {
            ZSTD_inBuffer ib = {in, r, 0};
            tin += r;
            while (ib.pos < ib.size) {
                ZSTD_outBuffer ob = {out, outCap, 0};
                last = ZSTD_decompressStream(d, &ob, &ib);
                if (ZSTD_isError(last)) return fail("decompress", last);
                fwrite(out, 1, ob.pos, stdout);
                tout += ob.pos;
            }
        }
        if (last != 0) { fprintf(stderr, "zstd: truncated input\n"); return 1; }
        ZSTD_freeDCtx(d);
    } else {
        ZSTD_CCtx *c = ZSTD_createCCtx();
        size_t e = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
        if (ZSTD_isError(e)) return fail("level", e);
        ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
        if (workers) {
            e = ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers);
            if (ZSTD_isError(e)) return fail("workers", e);
        }
        if (ldm) {
            ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1);
            ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 24);
        }
        for (;;) {
            size_t r = fread(in, 1, inCap, stdin);
            tin += r;
            int lastChunk = r < inCap;
            ZSTD_EndDirective mode = lastChunk ? ZSTD_e_end : ZSTD_e_continue;
            ZSTD_inBuffer ib = {in, r, 0};
            int finished;
            do {
                ZSTD_outBuffer ob = {out, outCap, 0};
                size_t rem = ZSTD_compressStream2(c, &ob, &ib, mode);
                if (ZSTD_isError(rem)) return fail("compress", rem);
                fwrite(out, 1, ob.pos, stdout);
                tout += ob.pos;
                finished = lastChunk ? (rem == 0) : (ib.pos == ib.size);
            } while (!finished);
            if (lastChunk) break;
        }
        ZSTD_freeCCtx(c);
    }
    fflush(stdout);
    fprintf(stderr, "zstd: %s %llu -> %llu bytes\n", decompress ? "decompressed" : "compressed", tin, tout);
    return 0;
}
