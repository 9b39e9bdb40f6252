/* Guest program for tests/cpu_host/test_lift_on_miss.py: code the build is told to miss
 * (recompiler.hide_entries), reached at run time in several ways.
 *
 *   lift_miss pointer N   a function reached only through a function pointer (hidden_step)
 *   lift_miss threads N   two pthreads call a hidden function at the same moment (hidden_worker)
 *   lift_miss label OFF   a computed branch into the middle of a function (no case table)
 *   lift_miss nowhere     a call through a pointer to data (no code there): qemu faults
 *   lift_miss allones     a call through a pointer of all ones, the address an empty inline
 *                         cache's row holds (lifted.h NX_IC_EMPTY): qemu faults
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a small hash step, so a wrong lift shows as a wrong number (lifted statically) */
__attribute__((noinline)) uint64_t mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* hidden: lifted at run time; it calls code lifted by the build (mix, and printf in libc) */
__attribute__((noinline)) uint64_t hidden_step(uint64_t h, uint64_t x) {
    h = mix(h, x);
    if (x % 16 == 3) printf("step %llu: %016llx\n", (unsigned long long)x, (unsigned long long)h);
    return h ^ (h >> 31);
}

__attribute__((noinline)) uint64_t hidden_worker(uint64_t seed) {
    uint64_t h = seed;
    for (int i = 0; i < 1000; i++) h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull + (uint64_t)i;
    return h;
}

/* pointers the compiler cannot see through (volatile): the calls are BLR */
uint64_t (*volatile step_ptr)(uint64_t, uint64_t) = hidden_step;
uint64_t (*volatile worker_ptr)(uint64_t) = hidden_worker;

static pthread_barrier_t start;
static uint64_t results[2];

static void *thread_main(void *arg) {
    uintptr_t k = (uintptr_t)arg;
    pthread_barrier_wait(&start);     /* both threads reach the hidden function together */
    results[k] = worker_ptr(k + 1);
    return NULL;
}

/* OFF 0: no branch; else a BR to the instruction OFF bytes past the `adr` (the offset comes
 * from the command line, so no analysis can know it): 12 and 20 reach code no path of the
 * function reaches statically, 24 the middle of code it does reach (the OFF 0 path), which
 * is lifted inside this function with no entry of its own.  Each lifts a function starting
 * in the middle of this one, which then returns to the caller as this function would. */
__attribute__((noinline)) long computed_label(long off, long x) {
    long r;
    __asm__ volatile(
        "mov %0, %2\n\t"
        "cbz %1, 2f\n\t"
        "adr x9, .\n\t"
        "add x9, x9, %1\n\t"
        "br x9\n\t"
        "add %0, %0, #1\n\t"
        "b 2f\n\t"
        "add %0, %0, #100\n"
        "2:\n\t"
        "add %0, %0, #7\n\t"
        : "=&r"(r) : "r"(off), "r"(x) : "x9");
    return r * 3;
}

static char not_code[64] __attribute__((aligned(16)));

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "pointer";
    long n = argc > 2 ? strtol(argv[2], NULL, 0) : 10;
    if (!strcmp(mode, "pointer")) {
        uint64_t h = 1;
        for (long i = 0; i < n; i++) h = step_ptr(h, (uint64_t)i);
        printf("pointer %ld -> %016llx\n", n, (unsigned long long)h);
    } else if (!strcmp(mode, "threads")) {
        pthread_t t[2];
        pthread_barrier_init(&start, NULL, 2);
        for (uintptr_t k = 0; k < 2; k++) pthread_create(&t[k], NULL, thread_main, (void *)k);
        for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
        printf("threads %016llx %016llx\n", (unsigned long long)results[0], (unsigned long long)results[1]);
    } else if (!strcmp(mode, "label")) {
        printf("label %ld -> %ld\n", n, computed_label(n, 1000 + n));
    } else if (!strcmp(mode, "nowhere")) {
        printf("before\n");
        fflush(stdout);
        void (*f)(void) = (void (*)(void))(uintptr_t)not_code;
        f();
        printf("after\n");
    } else if (!strcmp(mode, "allones")) {
        printf("before\n");
        fflush(stdout);
        void (*volatile g)(void) = (void (*)(void))~(uintptr_t)0;
        g();
        printf("after\n");
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
