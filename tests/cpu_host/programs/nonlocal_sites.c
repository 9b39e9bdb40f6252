/* nonlocal_sites.c — non-local returns that land where the lifted callers keep callee-saved
 * registers in host locals only (recompiler.elide_saves).
 *
 * With elide_saves a call does not store X19-X28/D8-D15 for a callee that reads them only to
 * save them, so after a longjmp only the frame that called setjmp may be re-entered from NxCpu
 * (its setjmp call stored them); the frames above it must go on in their own C frames.  Each
 * mode below is one way to land somewhere else; the recompiled program must either print what
 * qemu-aarch64 prints or stop with the fatal error that names the setting, never print
 * something else.
 *
 *   nested   setjmp frames inside setjmp frames, longjmps out of deep recursion (works)
 *   vla      a VLA moves SP between setjmp and the call that longjmps: the setjmp frame is
 *            found by the SP it had at its setjmp call (works)
 *   pointer  setjmp called through a function pointer (an unknown callee, whose call stores
 *            no callee-saved register: stops with the fatal error) */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static jmp_buf jb_outer, jb_inner;

NOINLINE static uint64_t mix(uint64_t a, uint64_t b) { return a * 0x9e3779b97f4a7c15ull ^ (b >> 3); }

NOINLINE static void dive(int level, jmp_buf *to, int v) {
    if (level == 0) longjmp(*to, v);
    uint64_t keep = mix((uint64_t)level, (uint64_t)v);
    dive(level - 1, to, v + 1);
    printf("never %llu\n", (unsigned long long)keep);
}

/* ---- nested ---- */
NOINLINE static uint64_t inner(uint64_t s) {
    uint64_t a = mix(s, 1), b = mix(s, 2), c = mix(s, 3), d = mix(s, 4);
    volatile int rc = setjmp(jb_inner);
    if (rc == 0) {
        a = mix(a, b);
        dive((int)(s % 7), &jb_inner, 100);
    }
    if (rc < 103 && (s & 1)) dive(3, &jb_outer, 200);   /* out of this frame and the ones above */
    return a ^ b ^ c ^ d ^ (uint64_t)rc;
}

NOINLINE static uint64_t middle(uint64_t s) {
    uint64_t m0 = mix(s, 9), m1 = mix(s, 10), m2 = mix(s, 11);
    uint64_t r = inner(m0);
    return r ^ m0 ^ m1 ^ m2 ^ mix(m1, m2);
}

/* the same jmp_buf set once and landed on up to twice: a second call below may longjmp back */
NOINLINE static uint64_t nested(uint64_t s) {
    uint64_t t0 = mix(s, 5), t1 = mix(s, 6), t2 = mix(s, 7);
    volatile uint64_t got = 0;
    volatile int landed = 0;
    switch (setjmp(jb_outer)) {
    case 0:
        got = middle(t0);
        break;
    default:
        got += 5000 + (uint64_t)landed++;
        break;
    }
    if (landed == 1)
        got ^= middle(t1 ^ got);
    return t0 ^ t1 ^ t2 ^ got ^ mix(t0, t2);
}

/* ---- vla ---- */
NOINLINE static uint64_t with_vla(uint64_t s, int n) {
    uint64_t a = mix(s, 1), b = mix(s, 2), c = mix(s, 3);
    volatile int rc = setjmp(jb_outer);
    if (rc == 0) {
        char buf[n];
        memset(buf, (int)(s & 0x7f), (size_t)n);
        a += (uint64_t)buf[n - 1];
        dive(2, &jb_outer, n);
    }
    return a ^ b ^ c ^ (uint64_t)rc;
}

NOINLINE static uint64_t vla(uint64_t s) {
    uint64_t k0 = mix(s, 7), k1 = mix(s, 8), k2 = mix(s, 9);
    uint64_t r = with_vla(s, (int)(s % 50) + 20);
    return r ^ k0 ^ k1 ^ k2 ^ mix(k0, k1);
}

/* ---- pointer ---- */
typedef int (*setjmp_fn)(jmp_buf);
static setjmp_fn volatile setjmp_ptr;

NOINLINE static uint64_t through_pointer(uint64_t s) {
    uint64_t p0 = mix(s, 21), p1 = mix(s, 22), p2 = mix(s, 23), p3 = mix(s, 24);
    volatile int rc = setjmp_ptr(jb_outer);
    if (rc == 0) {
        p0 = mix(p0, p1);
        dive(2, &jb_outer, 7);
    }
    return p0 ^ p1 ^ p2 ^ p3 ^ (uint64_t)rc ^ mix(p2, p3);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "nested";
    int n = argc > 2 ? atoi(argv[2]) : 50;
    setjmp_ptr = setjmp;
    uint64_t acc = 0;
    for (int i = 0; i < n; i++) {
        uint64_t s = (uint64_t)i * 2654435761u;
        uint64_t r = !strcmp(mode, "vla") ? vla(s) : !strcmp(mode, "pointer") ? through_pointer(s) : nested(s);
        acc = mix(acc, r) + r;
        if (i % 10 == 0) printf("%s %d %016llx\n", mode, i, (unsigned long long)acc);
    }
    printf("%s acc %016llx\n", mode, (unsigned long long)acc);
    return 0;
}
