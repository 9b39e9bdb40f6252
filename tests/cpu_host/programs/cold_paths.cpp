// Hot functions with cold paths (every way on ends in a call that never returns: a throw, its
// cleanup's _Unwind_Resume, abort, __assert_fail, exit through an error reporter), for
// tests/cpu_host/test_cold_paths.py: the lifter moves such paths out of the function's C into
// its resume twin (recompiler/lift/cold.py).  The hot paths run many times; each cold path is
// taken once, by the mode named on the command line, with values computed on the hot path
// (integer and floating-point, some kept in callee-saved registers) read on the cold one.
#undef NDEBUG  // (zig c++ -O2 defines it)
#include <cassert>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

struct Key {
    const char *p;
    unsigned n;
};

// JsonCpp's CZString::operator< in shape: memcmp on the hot path, a throw (with a std::string
// temporary, so a cleanup pad ending in _Unwind_Resume) on the cold one
__attribute__((noinline)) bool key_less(const Key &a, const Key &b) {
    if (!a.p || !b.p) throw std::logic_error(std::string("key_less: null key of length ") + std::to_string(a.n + b.n));
    unsigned n = a.n < b.n ? a.n : b.n;
    int c = memcmp(a.p, b.p, n);
    return c < 0 || (c == 0 && a.n < b.n);
}

[[noreturn]] __attribute__((noinline)) void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
    exit(3);
}

// values live into the cold path: integers, a pointer and doubles computed on the hot path
__attribute__((noinline)) long step(long i, long acc, const double *w, int limit) {
    long a = i * 7 + acc, b = (acc ^ i) & 0xffff, c = a - b * 3;
    double x = w[i & 7] * (double)a, y = w[(i + 3) & 7] - (double)c;
    if (c == limit) fail("step: i=%ld a=%ld b=%ld c=%ld x=%.3f y=%.3f w=%.2f\n", i, a, b, c, x, y, w[1]);
    if (a < 0 && b == 0x7777) abort();
    assert(b != 0x7778 || c != limit + 1);
    return (a + b + c + (long)(x - y)) & 0xfffffffffffll;
}

// a throw this function catches itself: its landing pad goes back to the hot path
__attribute__((noinline)) long guarded(long v) {
    std::string s = "v" + std::to_string(v);
    try {
        if (v % 1000 == 999) throw std::runtime_error(s);
        return (long)s.size() + v;
    } catch (const std::exception &e) {
        return -(long)strlen(e.what());
    }
}

static char words[4096][12];

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "hot";
    double w[8] = {0.5, 1.25, -2.0, 3.5, 0.125, -0.75, 8.0, 1.0};
    unsigned seed = 12345;
    Key keys[4096];
    for (int i = 0; i < 4096; i++) {
        int n = 1 + (seed >> 24) % 10;
        for (int j = 0; j < n; j++) {
            seed = seed * 1103515245 + 12345;
            words[i][j] = 'a' + (seed >> 16) % 4;
        }
        keys[i] = Key{words[i], (unsigned)n};
    }
    long less = 0;
    for (int r = 0; r < 50; r++)
        for (int i = 0; i < 4096; i++) less += key_less(keys[i], keys[(i * 31 + r) & 4095]);
    long acc = 1;
    for (long i = 0; i < 200000; i++) acc = step(i, acc, w, -1);
    long g = 0;
    for (long v = 0; v < 5000; v++) g += guarded(v);
    printf("less %ld acc %ld guarded %ld\n", less, acc, g);
    fflush(stdout);
    if (!strcmp(mode, "throw")) {
        Key bad{nullptr, 5};
        try {
            less += key_less(keys[3], bad);
        } catch (const std::logic_error &e) {
            printf("caught: %s (less %ld)\n", e.what(), less);
        }
        return 0;
    }
    if (!strcmp(mode, "uncaught")) {
        Key bad{nullptr, 1};
        return key_less(bad, keys[0]);
    }
    if (!strcmp(mode, "fail")) step(5, 9, w, (int)(5 * 7 + 9 - ((9 ^ 5) & 0xffff) * 3));
    if (!strcmp(mode, "abort")) step(0, (long)0xffff000000007777ull, w, -1);
    if (!strcmp(mode, "assert")) {
        long i = 1, a0 = 0x7778 ^ i;  // (acc ^ i) & 0xffff == 0x7778
        long a = i * 7 + a0, c = a - 0x7778 * 3;
        step(i, a0, w, (int)(c - 1));
    }
    return 0;
}
