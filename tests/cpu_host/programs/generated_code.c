/* Guest program for tests/cpu_host/test_generated_code.py: code written at run time into
 * executable memory and called, as a JIT compiler does.  The machine code is copied from the
 * program's own functions (their bytes in .text: position-independent leaf code, and one that
 * calls through a pointer it is given), so nothing here is a hand-written encoding.
 *
 *   generated_code rewrite      mmap RWX, copy `triple` there, call; copy `mangle` over it at the
 *                               same address, call again (the second result is mangle's)
 *   generated_code remap        the same region unmapped and mapped again at its address, with
 *                               the other function's code, then the first's again
 *   generated_code wx           W^X: mmap RW, copy, mprotect RX, call; mprotect RW, rewrite, RX
 *   generated_code callback N   generated code that calls back into the program, N times
 *   generated_code data         a call into memory mapped without PROT_EXEC (qemu: SIGSEGV)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CODE_BYTES 96

__attribute__((noinline)) uint64_t triple(uint64_t x) { return x * 3 + 7; }
__attribute__((noinline)) uint64_t mangle(uint64_t x) {
    uint64_t h = x;
    for (int i = 0; i < 5; i++) h = (h ^ (h >> 7)) * 0x9e3779b1u + (uint64_t)i;
    return h;
}
__attribute__((noinline)) uint64_t twice_via(uint64_t (*cb)(uint64_t), uint64_t x) { return cb(cb(x)) + 1; }
__attribute__((noinline)) uint64_t add_one(uint64_t x) { return x + 1; }

typedef uint64_t (*Fn)(uint64_t);
typedef uint64_t (*Via)(uint64_t (*)(uint64_t), uint64_t);

static void put(void *at, const void *fn) {
    memcpy(at, fn, CODE_BYTES);
    __builtin___clear_cache((char *)at, (char *)at + CODE_BYTES);
}

static void *map(void *at, int prot) {
    void *p = mmap(at, 65536, prot, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(2); }
    return p;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "rewrite";
    int rwx = PROT_READ | PROT_WRITE | PROT_EXEC;
    if (!strcmp(mode, "rewrite")) {
        char *p = map(NULL, rwx);
        uint64_t sum = 0;
        for (uint64_t i = 0; i < 3; i++) {
            put(p + 256, (const void *)triple);
            sum += ((Fn)(p + 256))(i + 10);
            printf("triple(%llu) = %llu\n", (unsigned long long)(i + 10), (unsigned long long)((Fn)(p + 256))(i + 10));
            put(p + 256, (const void *)mangle);
            printf("mangle(%llu) = %llu\n", (unsigned long long)(i + 10), (unsigned long long)((Fn)(p + 256))(i + 10));
        }
        printf("sum %llu\n", (unsigned long long)sum);
    } else if (!strcmp(mode, "remap")) {
        char *p = map(NULL, rwx);
        put(p, (const void *)triple);
        printf("first: %llu\n", (unsigned long long)((Fn)p)(5));
        if (munmap(p, 65536)) { perror("munmap"); return 2; }
        char *q = map(p, rwx);
        put(q, (const void *)mangle);
        printf("same address %d: %llu\n", q == p, (unsigned long long)((Fn)q)(5));
        munmap(q, 65536);
        q = map(p, rwx);
        put(q, (const void *)triple);
        printf("again: %llu\n", (unsigned long long)((Fn)q)(6));
    } else if (!strcmp(mode, "wx")) {
        char *p = map(NULL, PROT_READ | PROT_WRITE);
        put(p, (const void *)mangle);
        if (mprotect(p, 65536, PROT_READ | PROT_EXEC)) { perror("mprotect"); return 2; }
        printf("rx: %llu\n", (unsigned long long)((Fn)p)(77));
        mprotect(p, 65536, PROT_READ | PROT_WRITE);
        put(p, (const void *)triple);
        mprotect(p, 65536, PROT_READ | PROT_EXEC);
        printf("rx again: %llu\n", (unsigned long long)((Fn)p)(77));
    } else if (!strcmp(mode, "callback")) {
        int n = argc > 2 ? atoi(argv[2]) : 10;
        char *p = map(NULL, rwx);
        put(p + 4096, (const void *)twice_via);
        uint64_t acc = 0;
        for (int i = 0; i < n; i++) acc += ((Via)(p + 4096))(i & 1 ? add_one : triple, (uint64_t)i);
        printf("callback %d: %llu\n", n, (unsigned long long)acc);
    } else if (!strcmp(mode, "data")) {
        char *p = map(NULL, PROT_READ | PROT_WRITE);
        put(p, (const void *)triple);
        printf("calling data\n");
        fflush(stdout);
        printf("%llu\n", (unsigned long long)((Fn)p)(1));
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
