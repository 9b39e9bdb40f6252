/* Calls through function pointers whose targets the recompiler's analysis can guess
 * (recompiler/analysis/call_targets.py): fold()'s call site is reached with two constant
 * functions and one read from writable data that the program changes at run time (an
 * unknown target for the analysis), qsort and bsearch call their comparators through a
 * pointer, and apply_all() hands its callback through a struct in its frame.
 * Usage: callback_targets [N]  (N elements sorted and searched; default 2000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef long (*op_fn)(long, long);

__attribute__((noinline)) long op_add(long a, long b) { return a + b; }
__attribute__((noinline)) long op_mul(long a, long b) { return (a * (b | 1)) % 1000003; }
__attribute__((noinline)) long op_xor(long a, long b) { return (a ^ b) + 7; }
__attribute__((noinline)) long op_sub(long a, long b) { return a - 3 * b; }

/* writable: the analysis sees op_xor here, the program puts op_sub there first */
op_fn table[2] = { op_xor, op_add };

__attribute__((noinline)) long fold(op_fn f, const long *v, int n, long acc) {
    for (int i = 0; i < n; i++)
        acc = f(acc, v[i]);
    return acc;
}

struct job { const long *v; int n; op_fn f; long seed; };

__attribute__((noinline)) long run_job(const struct job *j) {
    long acc = j->seed;
    for (int i = 0; i < j->n; i++)
        acc = j->f(acc, j->v[i]) ^ (acc >> 7);
    return acc;
}

__attribute__((noinline)) long apply_all(const long *v, int n, op_fn f) {
    struct job j = { v, n, f, 12345 };
    return run_job(&j);
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 1)
        n = 1;
    long *v = malloc(sizeof(long) * n);
    unsigned long s = 88172645463325252ul;
    for (int i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        v[i] = (long)(s % 1000000);
    }
    table[0] = argc > 5 ? op_mul : op_sub;  /* the unknown one: not what the data word held */
    long a = fold(op_add, v, n, 0);
    long b = fold(op_mul, v, n, 1);
    long c = fold(table[argc & 1], v, n, 5);
    long d = apply_all(v, n, op_add) + apply_all(v, n, table[0]);
    printf("fold add %ld mul %ld table %ld apply %ld\n", a, b, c, d);
    qsort(v, n, sizeof(long), cmp_long);
    long found = 0, sum = 0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < n; i++) {
            long key = (long)((i * 7919u + r) % 1000000);
            long *p = bsearch(&key, v, n, sizeof(long), cmp_long);
            if (p) { found++; sum += p - v; }
        }
    printf("sorted %ld %ld %ld, found %ld at %ld\n", v[0], v[n / 2], v[n - 1], found, sum);
    return 0;
}
