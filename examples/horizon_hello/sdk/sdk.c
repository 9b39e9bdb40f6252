/* sdk.c — the `sdk` module of our guest SDK: start-up, libc basics, printing, threads,
 * mutexes and condition variables over Horizon's SVCs. */
#include "hz_sdk.h"

void *memset(void *d, int c, size_t n) {
    volatile unsigned char *p = d;   /* volatile: keep the compiler from calling memset here */
    while (n--) *p++ = (unsigned char)c;
    return d;
}

void *memcpy(void *d, const void *s, size_t n) {
    volatile unsigned char *p = d;
    const unsigned char *q = s;
    while (n--) *p++ = *q++;
    return d;
}

size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static inline uintptr_t tls_base(void) {
    uintptr_t v;
    __asm__ volatile("mrs %0, tpidrro_el0" : "=r"(v));
    return v;
}

Handle hz_self(void) { return *(volatile Handle *)(tls_base() + HZ_TLS_HANDLE_OFFSET); }

/* Module initialisers: the host runs them as rtld does, before the program starts; each
 * module's constructor takes the next number, so a program can see the order. */
volatile int hz_init_sequence;   /* volatile: else the compiler evaluates the constructor at build time */
volatile int hz_sdk_init_order;
__attribute__((constructor)) static void hz_sdk_constructor(void) { hz_sdk_init_order = ++hz_init_sequence; }

/* Entered from main's start code with the main thread's handle (Horizon passes it in X1). */
void hz_sdk_start(Handle main_thread) __attribute__((noreturn));
void hz_sdk_start(Handle main_thread) {
    *(volatile Handle *)(tls_base() + HZ_TLS_HANDLE_OFFSET) = main_thread;
    hz_main();
    svcExitProcess();
}

/* ---- printing ------------------------------------------------------------------------ */
typedef struct { char *buf; size_t size, len; } Out;

static void put(Out *o, char c) {
    if (o->len + 1 < o->size) o->buf[o->len] = c;
    o->len++;
}

static void put_num(Out *o, unsigned long long v, unsigned base, int neg, int width, char pad) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = "0123456789abcdef"[v % base]; v /= base; } while (v);
    if (neg) tmp[n++] = '-';
    while (n < width) { put(o, pad); width--; }
    while (n) put(o, tmp[--n]);
}

int hz_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) {
    Out o = {buf, size, 0};
    for (; *fmt; fmt++) {
        if (*fmt != '%') { put(&o, *fmt); continue; }
        fmt++;
        char pad = ' ';
        int width = 0, longs = 0;
        if (*fmt == '0') { pad = '0'; fmt++; }
        while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l') { longs++; fmt++; }
        switch (*fmt) {
        case 'd': {
            long long v = longs ? va_arg(ap, long long) : va_arg(ap, int);
            put_num(&o, v < 0 ? -(unsigned long long)v : (unsigned long long)v, 10, v < 0, width, pad);
            break;
        }
        case 'u': put_num(&o, longs ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 10, 0, width, pad); break;
        case 'x': put_num(&o, longs ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 16, 0, width, pad); break;
        case 'p': put(&o, '0'); put(&o, 'x'); put_num(&o, (uintptr_t)va_arg(ap, void *), 16, 0, width, pad); break;
        case 's': { const char *s = va_arg(ap, const char *); while (*s) put(&o, *s++); break; }
        case 'c': put(&o, (char)va_arg(ap, int)); break;
        case '%': put(&o, '%'); break;
        case 0: fmt--; break;
        default: put(&o, '%'); put(&o, *fmt); break;
        }
    }
    if (size) buf[o.len < size ? o.len : size - 1] = 0;
    return (int)o.len;
}

void hz_printf(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = hz_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    svcOutputDebugString(buf, n < (int)sizeof buf ? (uint64_t)n : sizeof buf - 1);
}

/* ---- threads ----------------------------------------------------------------------------- */
/* Every thread starts here: it learns its own handle from its HzThread (the creator stores it
 * there before StartThread), keeps it in its TLS, runs the entry and exits. */
static void thread_trampoline(HzThread *t) __attribute__((noreturn));
static void thread_trampoline(HzThread *t) {
    *(volatile Handle *)(tls_base() + HZ_TLS_HANDLE_OFFSET) = t->handle;
    t->entry(t->arg);
    svcExitThread();
}

Result hz_thread_create(HzThread *t, void (*entry)(void *), void *arg, void *stack, size_t stack_size,
                        int prio, int core) {
    t->entry = entry;
    t->arg = arg;
    void *top = (void *)(((uintptr_t)stack + stack_size) & ~(uintptr_t)15);
    return svcCreateThread(&t->handle, (void *)thread_trampoline, t, top, prio, core);
}

Result hz_thread_start(HzThread *t) { return svcStartThread(t->handle); }

Result hz_thread_join(HzThread *t) {
    int32_t idx;
    Result r = svcWaitSynchronization(&idx, &t->handle, 1, -1);
    if (r == 0) r = svcCloseHandle(t->handle);
    return r;
}

/* ---- mutex: the word holds the owner's handle; HZ_MUTEX_WAITERS says others wait -------- */
void hz_mutex_lock(HzMutex *m) {
    Handle self = hz_self();
    for (;;) {
        uint32_t cur = 0;
        if (__atomic_compare_exchange_n(&m->tag, &cur, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        if ((cur & ~HZ_MUTEX_WAITERS) == self)
            return;     /* the kernel handed it to us */
        if (!(cur & HZ_MUTEX_WAITERS) &&
            !__atomic_compare_exchange_n(&m->tag, &cur, cur | HZ_MUTEX_WAITERS, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            continue;   /* the word changed: look again */
        svcArbitrateLock(cur & ~HZ_MUTEX_WAITERS, &m->tag, self);
        if ((__atomic_load_n(&m->tag, __ATOMIC_ACQUIRE) & ~HZ_MUTEX_WAITERS) == self)
            return;
    }
}

void hz_mutex_unlock(HzMutex *m) {
    uint32_t self = hz_self();
    if (__atomic_compare_exchange_n(&m->tag, &self, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        return;
    svcArbitrateUnlock(&m->tag);   /* waiters: the kernel hands it to the best one */
}

Result hz_cond_wait(HzCond *c, HzMutex *m, int64_t timeout_ns) {
    Result r = svcWaitProcessWideKeyAtomic(&m->tag, &c->key, hz_self(), timeout_ns);
    if (r == HZ_R_TIMED_OUT)
        hz_mutex_lock(m);   /* a timed-out waiter is not handed the mutex: take it back */
    return r;
}

void hz_cond_signal(HzCond *c) { svcSignalProcessWideKey(&c->key, 1); }
void hz_cond_broadcast(HzCond *c) { svcSignalProcessWideKey(&c->key, -1); }
