/* unwind_regs.c — callee-saved registers across calls, tail calls and non-local returns.
 *
 * Lifted calls store and reload only what each callee may read or change (whole-program
 * register summaries, recompiler/interproc.py), and a return stores X19-X29 back only where
 * its own calls overwrote them.  This program keeps many values live in callee-saved
 * registers across calls to leaves, to functions that use callee-saved registers themselves,
 * through tail calls, and across longjmps that unwind several frames whose callers keep
 * running afterwards (their C frames are gone: nx_run re-creates them from their records).
 * A switch-dispatched loop (interp) keeps running in its resume twin after such a longjmp.
 * Every result is printed; the test compares the output with qemu-aarch64's. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static jmp_buf outer, inner;
static volatile int depth_hit;

NOINLINE static uint64_t leaf_mix(uint64_t a, uint64_t b) { return a * 0x9e3779b97f4a7c15ull ^ (b >> 3); }

NOINLINE static double leaf_fp(double a, double b) { return a * 1.0000001 + b / 3.0; }

/* uses many callee-saved registers itself (saves and restores them) */
NOINLINE static uint64_t busy(uint64_t x, int n) {
    uint64_t a = x, b = x ^ 1, c = x + 7, d = x * 3, e = x >> 2, f = ~x, g = x | 5, h = x & 0xff;
    for (int i = 0; i < n; i++) {
        a = leaf_mix(a, b); b = leaf_mix(b, c); c = leaf_mix(c, d); d = leaf_mix(d, e);
        e = leaf_mix(e, f); f = leaf_mix(f, g); g = leaf_mix(g, h); h = leaf_mix(h, a);
    }
    return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
}

/* a tail call (clang makes `return busy(...)` a B) */
NOINLINE static uint64_t tail(uint64_t x, int n) { return busy(x + 11, n); }

NOINLINE static void thrower(int level, int which) {
    if (level == 0) {
        depth_hit++;
        longjmp(which ? inner : outer, level + 1 + which);
    }
    uint64_t keep = leaf_mix(level, which);
    thrower(level - 1, which);
    printf("never %llu\n", (unsigned long long)keep);
}

/* values live in callee-saved registers across a longjmp out of a deeper frame */
NOINLINE static uint64_t catcher(uint64_t seed, int which) {
    uint64_t s0 = seed, s1 = seed * 3, s2 = seed ^ 0xabcdef, s3 = seed + 99, s4 = seed << 5;
    double f0 = (double)seed * 0.5, f1 = f0 + 1.25;
    volatile int rc = 0;
    if ((rc = setjmp(which ? inner : outer)) == 0) {
        s0 = leaf_mix(s0, s1); f0 = leaf_fp(f0, f1);
        thrower(5 + which, which);
    }
    s1 = leaf_mix(s1, s2) + busy(s3, 3) + tail(s4, 2);
    f1 = leaf_fp(f1, f0);
    return s0 ^ s1 ^ s2 ^ s3 ^ s4 ^ (uint64_t)rc ^ (uint64_t)(f0 * 1000) ^ (uint64_t)(f1 * 1000);
}

/* a caller whose C frame is unwound too when its callee's callee longjmps to a frame above it */
NOINLINE static uint64_t middle(uint64_t v) {
    uint64_t m0 = v + 1, m1 = v * 5, m2 = v ^ 0x55;
    m0 += catcher(m1, 1);             /* an inner setjmp/longjmp pair below this frame */
    if (v & 1) longjmp(outer, 9);     /* out of this frame and the one above */
    return m0 ^ m1 ^ m2 ^ busy(m2, 2);
}

NOINLINE static uint64_t top(uint64_t v) {
    uint64_t t0 = v * 7, t1 = v + 3, t2 = leaf_mix(v, 1);
    volatile uint64_t got = 0;
    int rc = setjmp(outer);
    if (rc == 0)
        got = middle(v);
    else
        got = 1000 + (uint64_t)rc;
    return t0 ^ t1 ^ t2 ^ got ^ tail(t0, 1);
}

/* keeps its own values in callee-saved registers across calls to a callee that reads them
 * (busy saves them), so it stores its values into NxCpu's callee-saved slots */
NOINLINE static uint64_t clobber(uint64_t x, int n) {
    uint64_t a = x + 1, b = x * 3, c = x ^ 0x77, d = x + 1234567, e = x * 11, f = x - 5;
    for (int i = 0; i < n; i++) {
        a = busy(a ^ b, 1); b = busy(b + c, 1);
        c += d; d ^= e; e += f; f ^= a;
    }
    return a ^ b ^ c ^ d ^ e ^ f;
}

/* its values must be in NxCpu when a longjmp below it unwinds its C frame, although the call
 * before (clobber) wrote other values into those slots */
NOINLINE static uint64_t driver(uint64_t v) {
    uint64_t d0 = v * 13, d1 = v ^ 0x1234, d2 = v + 77, d3 = v * v, d4 = v >> 3, d5 = ~v;
    uint64_t r = clobber(d0, 2);
    r ^= catcher(d1 + r, 0);
    return r ^ d0 ^ d1 ^ d2 ^ d3 ^ d4 ^ d5;
}

/* a switch-dispatched loop (a jump table: the lifter gives such a function a resume twin, which
 * holds its resume points) that keeps running after a longjmp below it unwound its C frame: from
 * there on this call runs in the twin, with its values taken from NxCpu */
NOINLINE static uint64_t interp(const unsigned char *code, int n, uint64_t acc) {
    uint64_t r0 = acc, r1 = acc ^ 0x1234, r2 = acc * 3, r3 = 7;
    for (int pc = 0; pc < n; pc++) {
        switch (code[pc]) {
        case 0: r0 += r1; break;
        case 1: r1 = leaf_mix(r1, r2); break;
        case 2: r2 ^= r0 >> 3; break;
        case 3: r3 = r3 * 31 + catcher(r0 + r3, 1); break;     /* a longjmp below this frame */
        case 4: r0 = busy(r0, 1); break;
        case 5: r1 -= r3; break;
        case 6: r2 = tail(r2, 1); break;
        case 7: r3 ^= r1 + r2; break;
        case 8: r0 = r0 * 5 + 1; break;
        case 9: r1 = (r1 << 7) | (r1 >> 57); break;
        case 10: r2 += r3 * 9; break;
        case 11: r3 -= r0 & 0xffff; break;
        case 12: r0 ^= r2 + 0x9e37; break;
        case 13: r1 += r0 >> 11; break;
        case 14: r2 = ~r2 + r1; break;
        case 15: r3 = r3 * 3 ^ r2; break;
        }
    }
    return r0 ^ r1 ^ r2 ^ r3;
}

static const unsigned char PROGRAM[] = {0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 1, 0, 3, 7, 12, 2, 5, 6, 4, 0, 7, 9};

int main(int argc, char **argv) {
    uint64_t acc = 0;
    int n = argc > 1 ? atoi(argv[1]) : 200;
    for (int i = 0; i < n; i++) {
        uint64_t r = top((uint64_t)i * 2654435761u);
        acc = leaf_mix(acc, r) + catcher((uint64_t)i, 0) + driver(acc ^ (uint64_t)i);
        acc ^= interp(PROGRAM, (int)sizeof PROGRAM - i % 3, acc);
        if (i % 50 == 0) printf("%d %016llx %016llx\n", i, (unsigned long long)r, (unsigned long long)acc);
    }
    printf("acc %016llx hits %d\n", (unsigned long long)acc, depth_hit);
    return 0;
}
