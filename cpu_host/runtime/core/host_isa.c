/* host_isa.c — game.so refuses to start on an x86-64 CPU that lacks an instruction set
 * extension its code was compiled for (recompiler.march), with a message that names what is
 * missing, instead of dying later of SIGILL somewhere in lifted code.
 *
 * What is required is what the compiler enabled for this very build (its __AVX2__, __FMA__...
 * macros), so the check follows the setting without being told it.  The check itself is
 * compiled for the baseline x86-64 (target attribute): it must run on the CPUs it rejects.
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* "arch=" alone keeps what -m flags on the command line added; "no-avx" also drops everything
 * built on it (AVX2, FMA, F16C, AVX-512) */
#define NX_BASELINE __attribute__((target("arch=x86-64,no-avx,no-sse4.2,no-popcnt,no-bmi,no-bmi2,no-lzcnt,no-movbe")))

NX_BASELINE static uint64_t nx_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

NX_BASELINE static void nx_need(char *missing, size_t cap, int have, const char *name) {
    if (have) return;
    size_t n = strlen(missing);
    snprintf(missing + n, cap - n, "%s%s", n ? ", " : "", name);
}

NX_BASELINE __attribute__((constructor)) static void nx_host_isa_check(void) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    unsigned c1 = 0, b7 = 0, cx = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) c1 = c;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) b7 = b;
    if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) cx = c;
    int osxsave = (c1 >> 27) & 1;
    int avx_os = osxsave && (nx_xcr0() & 6) == 6;   /* the OS saves the XMM and YMM state */
    char missing[160] = "";
    (void)b7; (void)cx; (void)avx_os;
#if defined(__POPCNT__)
    nx_need(missing, sizeof missing, (c1 >> 23) & 1, "POPCNT");
#endif
#if defined(__SSE4_2__)
    nx_need(missing, sizeof missing, (c1 >> 20) & 1, "SSE4.2");
#endif
#if defined(__AVX__)
    nx_need(missing, sizeof missing, ((c1 >> 28) & 1) && avx_os, "AVX");
#endif
#if defined(__AVX2__)
    nx_need(missing, sizeof missing, ((b7 >> 5) & 1) && avx_os, "AVX2");
#endif
#if defined(__FMA__)
    nx_need(missing, sizeof missing, ((c1 >> 12) & 1) && avx_os, "FMA");
#endif
#if defined(__AVX512F__)
    /* and the OS saves the opmask and ZMM state */
    nx_need(missing, sizeof missing, ((b7 >> 16) & 1) && osxsave && (nx_xcr0() & 0xe6) == 0xe6, "AVX512F");
#endif
#if defined(__F16C__)
    nx_need(missing, sizeof missing, (c1 >> 29) & 1, "F16C");
#endif
#if defined(__BMI__)
    nx_need(missing, sizeof missing, (b7 >> 3) & 1, "BMI1");
#endif
#if defined(__BMI2__)
    nx_need(missing, sizeof missing, (b7 >> 8) & 1, "BMI2");
#endif
#if defined(__LZCNT__)
    nx_need(missing, sizeof missing, (cx >> 5) & 1, "LZCNT");
#endif
#if defined(__MOVBE__)
    nx_need(missing, sizeof missing, (c1 >> 22) & 1, "MOVBE");
#endif
    if (!missing[0]) return;
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "nxrecomp: game.so was compiled for x86-64 extensions this CPU lacks (%s); "
                     "recompile the bundle with NXRECOMP_RECOMPILER_MARCH=x86-64 (setting recompiler.march)\n",
                     missing);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(70);
}
