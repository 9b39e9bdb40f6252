/* A bytecode interpreter shaped like QuickJS's JS_CallInternal: a computed goto of 20 handlers,
 * more values live across its loop than x86-64 has callee-saved registers (the bytecode and
 * stack pointers, a context, frame counters, accumulators), several used only around calls,
 * calls out of some handlers, a recursive call of the interpreter itself, a call through a
 * function pointer, and an error that longjmps out of nested interpreter frames.
 * tests/cpu_host/test_interp_loop.py runs it lifted and under qemu-aarch64. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
    long calls, allocs, depth, errors;
    unsigned long hash;
    long (*hook)(struct Ctx *, long);
    jmp_buf *err;
} Ctx;

__attribute__((noinline)) static long helper(Ctx *c, long a, long b) {
    c->calls++;
    return a * 31 + b;
}
__attribute__((noinline)) static long *grow(Ctx *c, long *p, long n) {
    c->allocs++;
    long *q = realloc(p, (size_t)n * sizeof *q);
    if (!q) abort();
    return q;
}
__attribute__((noinline)) static long hook_a(Ctx *c, long v) { return v ^ (long)(c->hash & 0xff); }
__attribute__((noinline)) static long hook_b(Ctx *c, long v) { return v + c->depth; }

enum { PUSH, ADD, SUB, MUL, DUP, SWAP, DROP, JNZ, DEC, CALLH, GROW, HOOK, FLIP, REC, MIX, NOP1, NOP2, THROW, LOADK, HALT };

static long interp(Ctx *c, const unsigned char *code, long arg, long *konst);

/* the program: counts arg down, at each step mixing helper calls, allocations, a hook call
 * through a pointer, and (every 8th step) a recursive interpreter call of depth-1 */
static const unsigned char prog[] = {
    PUSH, 0,              /* acc */
    LOADK, 0,             /* counter = arg */
    /* loop: (pc 4) */
    SWAP, CALLH, MIX, HOOK, REC, SWAP, DUP, FLIP, GROW, DROP, NOP1, NOP2,
    DEC, DUP, JNZ, 4,
    DROP, HALT,
};

static long interp(Ctx *c, const unsigned char *code, long arg, long *konst) {
    static void *const tab[] = {&&op_push, &&op_add,  &&op_sub,   &&op_mul,  &&op_dup,   &&op_swap, &&op_drop,
                                &&op_jnz,  &&op_dec,  &&op_callh, &&op_grow, &&op_hook, &&op_flip, &&op_rec,
                                &&op_mix,  &&op_nop1, &&op_nop2,  &&op_throw, &&op_loadk, &&op_halt};
    long stack[64], *sp = stack;
    const unsigned char *pc = code;
    long *buf = NULL, cap = 0, used = 0, flips = 0, mixes = 0, recs = 0;
    unsigned long h = c->hash;
    c->depth++;
#define NEXT goto *tab[*pc++]
    NEXT;
op_push: *sp++ = *pc++; NEXT;
op_add: sp--; sp[-1] += sp[0]; NEXT;
op_sub: sp--; sp[-1] -= sp[0]; NEXT;
op_mul: sp--; sp[-1] *= sp[0]; NEXT;
op_dup: sp[0] = sp[-1]; sp++; NEXT;
op_swap: { long t = sp[-1]; sp[-1] = sp[-2]; sp[-2] = t; } NEXT;
op_drop: sp--; NEXT;
op_jnz: { long t = *--sp; unsigned char to = *pc++; if (t) pc = code + to; } NEXT;
op_dec: sp[-1]--; NEXT;
op_callh: sp[-1] = helper(c, sp[-1], (long)(h & 0xffff)); NEXT;
op_grow:
    if (used == cap) { cap = cap ? cap * 2 : 4; buf = grow(c, buf, cap); }
    buf[used++] = sp[-1] & 0xfff;
    NEXT;
op_hook: sp[-1] = c->hook(c, sp[-1]); NEXT;
op_flip: flips++; c->hook = (flips & 1) ? hook_a : hook_b; NEXT;
op_rec:
    if (c->depth < 3 && (sp[-1] & 7) == 0) { recs++; sp[-1] += interp(c, prog, 9, konst); }
    NEXT;
op_mix: h = h * 6364136223846793005ul + (unsigned long)sp[-1]; mixes++; sp[-1] &= 0xffffffff; NEXT;
op_nop1: NEXT;
op_nop2: NEXT;
op_throw: c->errors++; longjmp(*c->err, 1);
op_loadk: *sp++ = konst[*pc++] + arg; NEXT;
op_halt: {
        long sum = 0;
        for (long i = 0; i < used; i++) sum += buf[i];
        free(buf);
        c->hash = h;
        c->depth--;
        return sp[-1] + sum + flips * 3 + mixes * 5 + recs * 7;
    }
}

static const unsigned char thrower[] = {PUSH, 1, LOADK, 0, REC, THROW};

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long konst[1] = {0};
    Ctx c = {0};
    c.hook = hook_a;
    c.hash = 12345;
    long total = 0;
    for (int round = 0; round < 4; round++) {
        c.depth = 0;
        total += interp(&c, prog, n + round, konst);
        jmp_buf jb;
        c.err = &jb;
        if (setjmp(jb) == 0) {
            c.depth = 0;
            total += interp(&c, thrower, 16 + round, konst);
        } else {
            total += 1000;
        }
    }
    printf("interp total %ld calls %ld allocs %ld errors %ld hash %lu\n", total, c.calls, c.allocs, c.errors, c.hash);
    return 0;
}
