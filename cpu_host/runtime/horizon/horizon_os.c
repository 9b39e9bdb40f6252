/* horizon_os.c — nn::os served by the host: threads, mutexes, condition variables, events,
 * semaphores and message queues, on the kernel's own threads, priorities and wait queues
 * (horizon_kernel.c's nx_hzk_* functions), so the SVC path and the nn::os path share one
 * scheduler: waiters are woken best priority first (FIFO among equals), a mutex holder runs at
 * its best waiter's priority, timeouts are nanoseconds (nn::TimeSpan).
 *
 * Each entry point nx_os_<name>(s) serves one SDK function for the calling guest thread
 * (cpu_host/horizon/hle/os.py binds it under the mangled name): arguments in X0.., the
 * function's value in X0.  It returns 0, or 1 with a sentence for nx_os_why() (the calling
 * thread's last failure) when the guest broke a precondition the SDK would abort on (a bad pointer, an object never initialised, unlocking a
 * mutex it does not hold): the host ends the process with a crash report naming the function.
 * Nothing here dereferences a guest pointer before the kernel confirmed it is mapped.
 *
 * The objects live in guest memory, in our own layouts (no larger than the SDK's public type
 * sizes; first word a magic number so an object never initialised is recognised):
 *   ThreadType 0x50 (of 0x1C0): magic, kernel handle, entry, argument, stack, stack size, name
 *                               pointer, name[32].  The kernel's thread record knows its
 *                               ThreadType's address; a thread the SDK did not create (the
 *                               main thread) gets a host-side record on GetCurrentThread.
 *   MutexType 0x20 (of 0x20):   magic, recursive, lock level, nest count, lock word (owner's
 *                               handle | 0x40000000 while others wait: ArbitrateLock's word).
 *   ConditionVariableType 0x8:  magic, key word (1 while threads wait: the kernel's key).
 *   EventType 0x10 (of 0x28):   magic, signalled, initially signalled, clear mode.
 *   SemaphoreType 0x10 (of 0x28): magic, count, maximum.
 *   MessageQueueType 0x20 (of 0x50): magic, capacity, buffer, count, head index.
 * nn::os priorities 0 (highest) .. 31 are kernel priorities 28..59. */
#include "nxrt.h"
#include "horizon_kernel.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OS_PRIO_OFFSET 28            /* nn::os priority 0 is kernel priority 28 */
#define OS_PRIO_LOWEST 31
#define WAITERS 0x40000000u
#define RW (HZ_PERM_R | HZ_PERM_W)

#define MAGIC_THREAD 0x4854534fu     /* "OSTH" */
#define MAGIC_MUTEX  0x584d534fu     /* "OSMX" */
#define MAGIC_COND   0x5643534fu     /* "OSCV" */
#define MAGIC_EVENT  0x5645534fu     /* "OSEV" */
#define MAGIC_SEMA   0x4d53534fu     /* "OSSM" */
#define MAGIC_QUEUE  0x514d534fu     /* "OSMQ" */

typedef struct OsThread {
    uint32_t magic, handle;
    uint64_t entry, arg, stack, stack_size, name;
    char name_buf[32];
} OsThread;
typedef struct OsMutex {
    uint32_t magic;
    uint8_t recursive, pad[3];
    int32_t lock_level;
    uint32_t nest;
    uint32_t word;
    uint32_t pad2;
    uint64_t reserved;
} OsMutex;
typedef struct OsCond { uint32_t magic, key; } OsCond;
typedef struct OsEvent { uint32_t magic; uint8_t signaled, initially, mode, pad; uint64_t reserved; } OsEvent;
typedef struct OsSema { uint32_t magic; int32_t count, max, pad; } OsSema;
typedef struct OsQueue { uint32_t magic, capacity; uint64_t buffer; uint32_t count, head; uint64_t reserved; } OsQueue;

_Static_assert(sizeof(OsThread) == 0x50, "ThreadType layout");
_Static_assert(sizeof(OsMutex) == 0x20, "MutexType layout");
_Static_assert(sizeof(OsCond) == 0x8, "ConditionVariableType layout");
_Static_assert(sizeof(OsEvent) == 0x10, "EventType layout");
_Static_assert(sizeof(OsSema) == 0x10, "SemaphoreType layout");
_Static_assert(sizeof(OsQueue) == 0x20, "MessageQueueType layout");

enum { CLEAR_MANUAL = 0, CLEAR_AUTO = 1 };

typedef struct OsCall {
    NxCpu *s;
    HzThread *t;
} OsCall;

/* per host thread: each guest thread is one, and its failure ends the process anyway */
static __thread char why[256];
const char *nx_os_why(void);
const char *nx_os_why(void) { return why; }

static uint32_t fail(OsCall *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static uint32_t fail(OsCall *c, const char *fmt, ...) {
    (void)c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return 1;
}

static unsigned long long A(uint64_t v) { return (unsigned long long)v; }
static uint64_t arg(OsCall *c, int i) { return c->s->x[i]; }
static int32_t arg32(OsCall *c, int i) { return (int32_t)c->s->x[i]; }
static void ret(OsCall *c, uint64_t v) { c->s->x[0] = v; }

/* An object of `size` bytes at p that the guest may read and write (aligned to 8), or NULL
 * with the reason; with `magic`, it must also have been initialised. */
static void *object(OsCall *c, uint64_t p, uint64_t size, const char *type, uint32_t magic) {
    if (p == 0) { fail(c, "%s pointer is null", type); return NULL; }
    if (p & 7) { fail(c, "%s at %#llx is not 8-byte aligned", type, A(p)); return NULL; }
    if (!nx_hzk_range_ok(p, size, RW)) {
        fail(c, "%s at %#llx: %#llx bytes there are not writable guest memory", type, A(p), A(size));
        return NULL;
    }
    if (magic && *(volatile uint32_t *)(uintptr_t)p != magic) {
        fail(c, "%s at %#llx is not initialised (never initialised, or finalised)", type, A(p));
        return NULL;
    }
    return (void *)(uintptr_t)p;
}

static int out_u64(OsCall *c, uint64_t p, const char *what) {
    if (p == 0 || (p & 7) || !nx_hzk_range_ok(p, 8, RW)) {
        fail(c, "%s at %#llx is not a writable, 8-byte aligned guest word", what, A(p));
        return 0;
    }
    return 1;
}

/* ---- threads ------------------------------------------------------------------------------ */
/* The kernel thread behind a ThreadType pointer (the kernel's record is what says it is one) */
static HzThread *thread_of(OsCall *c, uint64_t p) {
    HzThread *o = p ? nx_hzk_thread_by_os(p) : NULL;
    if (!o) fail(c, "ThreadType at %#llx is not a thread made by CreateThread or GetCurrentThread (or it was destroyed)", A(p));
    return o;
}

/* o's ThreadType, writable: a host record, or guest memory that is still mapped */
static OsThread *record(OsCall *c, HzThread *o) {
    uint64_t p = nx_hzk_os(o);
    if (!nx_hzk_os_host(o) && !nx_hzk_range_ok(p, sizeof(OsThread), RW)) {
        fail(c, "ThreadType at %#llx is no longer writable guest memory", A(p));
        return NULL;
    }
    return (OsThread *)(uintptr_t)p;
}

static void set_name(OsThread *r, const char *name, size_t n) {
    memset(r->name_buf, 0, sizeof r->name_buf);
    memcpy(r->name_buf, name, n < sizeof r->name_buf - 1 ? n : sizeof r->name_buf - 1);
    r->name = (uint64_t)(uintptr_t)r->name_buf;
}

static uint32_t create_thread(OsCall *c, int core) {
    uint64_t p = arg(c, 0), entry = arg(c, 1), targ = arg(c, 2), stack = arg(c, 3), size = arg(c, 4);
    int prio = arg32(c, 5);
    OsThread *r = object(c, p, sizeof *r, "ThreadType", 0);
    if (!r) return 1;
    if (nx_hzk_thread_by_os(p)) return fail(c, "ThreadType at %#llx is already a live thread", A(p));
    if (entry == 0) return fail(c, "thread function is null");
    if ((stack & 0xFFF) || (size & 0xFFF) || size == 0)
        return fail(c, "stack %#llx, size %#llx: the stack must be 4 KiB aligned and a non-zero multiple of 4 KiB",
                    A(stack), A(size));
    if (!nx_hzk_range_ok(stack, size, RW))
        return fail(c, "stack %#llx..%#llx is not writable guest memory", A(stack), A(stack + size));
    if (prio < 0 || prio > OS_PRIO_LOWEST || !nx_hzk_priority_ok(prio + OS_PRIO_OFFSET))
        return fail(c, "priority %d is outside 0..31 (or the process's ThreadInfo range)", prio);
    if (core == -1) core = -2;          /* IdealCoreDontCare: the process's default core */
    uint32_t result;
    HzThread *o = nx_hzk_os_thread_create(c->t, entry, targ, stack + size, prio + OS_PRIO_OFFSET, core, p, &result);
    if (!o && result >> 9 == 113) return fail(c, "ideal core %d is not a core of this process", core);
    if (!o && result >> 9 == 112) return fail(c, "priority %d is outside the process's ThreadInfo range", prio);
    if (!o) { ret(c, result); return 0; }   /* out of thread records: the Result says so */
    memset(r, 0, sizeof *r);
    r->magic = MAGIC_THREAD;
    r->handle = nx_hzk_handle(o);
    r->entry = entry;
    r->arg = targ;
    r->stack = stack;
    r->stack_size = size;
    set_name(r, "Thread", 6);
    ret(c, 0);
    return 0;
}

static uint32_t op_create_thread(OsCall *c) { return create_thread(c, -2); }
static uint32_t op_create_thread_core(OsCall *c) { return create_thread(c, arg32(c, 6)); }

static uint32_t op_start_thread(OsCall *c) {
    HzThread *o = thread_of(c, arg(c, 0));
    if (!o) return 1;
    if (nx_hzk_thread_started(o)) return fail(c, "ThreadType at %#llx was started already", A(arg(c, 0)));
    if (nx_hzk_thread_start(o)) return fail(c, "the host could not start a thread");
    return 0;
}

static uint32_t op_wait_thread(OsCall *c) {
    HzThread *o = thread_of(c, arg(c, 0));
    if (!o) return 1;
    if (o == c->t) return fail(c, "a thread waits for its own exit (a deadlock)");
    if (!nx_hzk_thread_started(o)) return fail(c, "ThreadType at %#llx was never started", A(arg(c, 0)));
    nx_hzk_thread_join(c->t, o);
    return 0;
}

static uint32_t op_destroy_thread(OsCall *c) {
    uint64_t p = arg(c, 0);
    HzThread *o = thread_of(c, p);
    if (!o) return 1;
    if (o == c->t) return fail(c, "a thread destroys itself");
    if (nx_hzk_thread_started(o)) nx_hzk_thread_join(c->t, o);
    OsThread *r = record(c, o);
    if (!r) return 1;
    nx_hzk_set_os(o, 0, 0);    /* the kernel's handle stays: mutex words may still name it */
    r->magic = 0;
    return 0;
}

static uint32_t op_get_current_thread(OsCall *c) {
    uint64_t p = nx_hzk_os(c->t);
    if (!p) {   /* a thread the SDK did not create: a host record, kept while the process lives */
        OsThread *r = calloc(1, sizeof *r);
        if (!r) return fail(c, "host out of memory");
        r->magic = MAGIC_THREAD;
        r->handle = nx_hzk_handle(c->t);
        set_name(r, "MainThread", 10);
        p = (uint64_t)(uintptr_t)r;
        nx_hzk_set_os(c->t, p, 1);
    }
    ret(c, p);
    return 0;
}

static uint32_t op_change_thread_priority(OsCall *c) {
    HzThread *o = thread_of(c, arg(c, 0));
    int prio = arg32(c, 1);
    if (!o) return 1;
    if (prio < 0 || prio > OS_PRIO_LOWEST || !nx_hzk_priority_ok(prio + OS_PRIO_OFFSET))
        return fail(c, "priority %d is outside 0..31 (or the process's ThreadInfo range)", prio);
    int before = nx_hzk_priority(o, 0) - OS_PRIO_OFFSET;
    nx_hzk_set_priority(o, prio + OS_PRIO_OFFSET);
    ret(c, (uint64_t)(int64_t)before);
    return 0;
}

static uint32_t thread_priority(OsCall *c, int effective) {
    HzThread *o = thread_of(c, arg(c, 0));
    if (!o) return 1;
    ret(c, (uint64_t)(int64_t)(nx_hzk_priority(o, effective) - OS_PRIO_OFFSET));
    return 0;
}
static uint32_t op_get_thread_priority(OsCall *c) { return thread_priority(c, 0); }
static uint32_t op_get_thread_current_priority(OsCall *c) { return thread_priority(c, 1); }

static uint32_t op_yield_thread(OsCall *c) { nx_hzk_yield(c->t); return 0; }

static uint32_t op_set_thread_name(OsCall *c) {
    uint64_t name = arg(c, 1);
    HzThread *o = thread_of(c, arg(c, 0));
    if (!o) return 1;
    char buf[32];
    size_t n = 0;
    for (; name && n < sizeof buf - 1; n++) {
        if (!nx_hzk_range_ok(name + n, 1, HZ_PERM_R)) return fail(c, "thread name at %#llx is not readable guest memory", A(name));
        buf[n] = *(const char *)(uintptr_t)(name + n);
        if (!buf[n]) break;
    }
    OsThread *r = record(c, o);
    if (!r) return 1;
    set_name(r, buf, n);
    return 0;
}

static uint32_t op_get_thread_name_pointer(OsCall *c) {
    HzThread *o = thread_of(c, arg(c, 0));
    OsThread *r = o ? record(c, o) : NULL;
    if (!r) return 1;
    ret(c, r->name);
    return 0;
}

static uint32_t op_get_current_core_number(OsCall *c) { ret(c, (uint64_t)(int64_t)nx_hzk_core(c->t)); return 0; }

static uint32_t op_set_thread_core_mask(OsCall *c) {
    HzThread *o = thread_of(c, arg(c, 0));
    int32_t ideal = arg32(c, 1);
    uint64_t mask = arg(c, 2);
    if (!o) return 1;
    if (nx_hzk_set_core_mask(o, ideal, mask))
        return fail(c, "ideal core %d with affinity mask %#llx: not cores of this process, or the ideal core is "
                    "outside the mask", ideal, A(mask));
    return 0;
}

static uint32_t op_get_thread_core_mask(OsCall *c) {
    uint64_t pideal = arg(c, 0), pmask = arg(c, 1);
    HzThread *o = thread_of(c, arg(c, 2));
    if (!o) return 1;
    int32_t ideal;
    uint64_t mask;
    nx_hzk_core_mask(o, &ideal, &mask);
    if (pideal) {
        if ((pideal & 3) || !nx_hzk_range_ok(pideal, 4, RW)) return fail(c, "ideal core out pointer %#llx is not writable", A(pideal));
        *(int32_t *)(uintptr_t)pideal = ideal;
    }
    if (pmask) {
        if (!out_u64(c, pmask, "affinity mask out pointer")) return 1;
        *(uint64_t *)(uintptr_t)pmask = mask;
    }
    return 0;
}

/* ---- mutexes -------------------------------------------------------------------------------- */
static OsMutex *mutex(OsCall *c, uint64_t p) { return object(c, p, sizeof(OsMutex), "MutexType", MAGIC_MUTEX); }
static uint32_t owner_of(OsMutex *m) { return __atomic_load_n(&m->word, __ATOMIC_ACQUIRE) & ~WAITERS; }

static uint32_t op_initialize_mutex(OsCall *c) {
    OsMutex *m = object(c, arg(c, 0), sizeof *m, "MutexType", 0);
    if (!m) return 1;
    memset(m, 0, sizeof *m);
    m->recursive = arg(c, 1) & 1;
    m->lock_level = arg32(c, 2);
    __atomic_store_n(&m->magic, MAGIC_MUTEX, __ATOMIC_RELEASE);
    return 0;
}

static uint32_t op_finalize_mutex(OsCall *c) {
    OsMutex *m = mutex(c, arg(c, 0));
    if (!m) return 1;
    if (__atomic_load_n(&m->word, __ATOMIC_ACQUIRE)) return fail(c, "MutexType at %#llx is still locked", A(arg(c, 0)));
    m->magic = 0;
    return 0;
}

/* The caller holds m already: a recursive mutex counts one more level, a plain one would
 * deadlock (the SDK aborts). */
static uint32_t relock(OsCall *c, OsMutex *m) {
    if (!m->recursive)
        return fail(c, "the calling thread locks the non-recursive MutexType at %#llx it already holds (a deadlock)",
                    A(arg(c, 0)));
    if (m->nest == 0xFFFFFFFFu) return fail(c, "MutexType at %#llx locked recursively too often", A(arg(c, 0)));
    m->nest++;
    return 0;
}

/* Take m's lock word, blocking; m is checked again afterwards (the wait may be long). */
static uint32_t take_word(OsCall *c, OsMutex *m, uint64_t p) {
    uint32_t r = nx_hzk_mutex_lock(c->t, (uint64_t)(uintptr_t)&m->word);
    if (r || !mutex(c, p)) {
        if (r) fail(c, "MutexType at %#llx: its lock word %s", A(p),
                    r >> 9 == 114 ? "names no thread (overwritten?)" : "is no longer writable guest memory");
        return 1;
    }
    return 0;
}

static uint32_t op_lock_mutex(OsCall *c) {
    OsMutex *m = mutex(c, arg(c, 0));
    if (!m) return 1;
    uint32_t self = nx_hzk_handle(c->t);
    if (owner_of(m) == self) return relock(c, m);
    if (take_word(c, m, arg(c, 0))) return 1;
    m->nest = 1;
    return 0;
}

static uint32_t op_try_lock_mutex(OsCall *c) {
    OsMutex *m = mutex(c, arg(c, 0));
    if (!m) return 1;
    uint32_t self = nx_hzk_handle(c->t), zero = 0;
    if (owner_of(m) == self) {
        if (relock(c, m)) return 1;
        ret(c, 1);
        return 0;
    }
    int got = __atomic_compare_exchange_n(&m->word, &zero, self, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (got) m->nest = 1;
    ret(c, (uint64_t)got);
    return 0;
}

static uint32_t op_unlock_mutex(OsCall *c) {
    OsMutex *m = mutex(c, arg(c, 0));
    if (!m) return 1;
    if (owner_of(m) != nx_hzk_handle(c->t))
        return fail(c, "the calling thread unlocks the MutexType at %#llx, which it does not hold", A(arg(c, 0)));
    if (--m->nest == 0) nx_hzk_mutex_unlock(c->t, (uint64_t)(uintptr_t)&m->word);
    return 0;
}

static uint32_t op_is_mutex_locked_by_current_thread(OsCall *c) {
    OsMutex *m = mutex(c, arg(c, 0));
    if (!m) return 1;
    ret(c, owner_of(m) == nx_hzk_handle(c->t));
    return 0;
}

/* ---- condition variables ------------------------------------------------------------------ */
static OsCond *cond(OsCall *c, uint64_t p) { return object(c, p, sizeof(OsCond), "ConditionVariableType", MAGIC_COND); }

static uint32_t op_initialize_condition_variable(OsCall *c) {
    OsCond *v = object(c, arg(c, 0), sizeof *v, "ConditionVariableType", 0);
    if (!v) return 1;
    v->key = 0;
    __atomic_store_n(&v->magic, MAGIC_COND, __ATOMIC_RELEASE);
    return 0;
}

static uint32_t op_finalize_condition_variable(OsCall *c) {
    OsCond *v = cond(c, arg(c, 0));
    if (!v) return 1;
    if (nx_hzk_cv_waiting((uint64_t)(uintptr_t)&v->key))
        return fail(c, "ConditionVariableType at %#llx: threads still wait on it", A(arg(c, 0)));
    v->magic = 0;
    return 0;
}

static uint32_t signal_cond(OsCall *c, int32_t count) {
    OsCond *v = cond(c, arg(c, 0));
    if (!v) return 1;
    nx_hzk_cv_signal((uint64_t)(uintptr_t)&v->key, count);
    return 0;
}
static uint32_t op_signal_condition_variable(OsCall *c) { return signal_cond(c, 1); }
static uint32_t op_broadcast_condition_variable(OsCall *c) { return signal_cond(c, -1); }

/* Release the mutex (held once by the caller), wait, hold it again; X0 = 1 when signalled,
 * 0 after the timeout (ConditionVariableStatus NoTimeout / Timeout). */
static uint32_t wait_cond(OsCall *c, int64_t timeout_ns) {
    OsCond *v = cond(c, arg(c, 0));
    if (!v) return 1;
    OsMutex *m = mutex(c, arg(c, 1));
    if (!m) return 1;
    if (owner_of(m) != nx_hzk_handle(c->t))
        return fail(c, "waits on a condition variable with the MutexType at %#llx, which it does not hold", A(arg(c, 1)));
    if (m->nest != 1)
        return fail(c, "waits on a condition variable with the MutexType at %#llx locked %u times", A(arg(c, 1)), m->nest);
    if (timeout_ns == 0) { ret(c, 0); return 0; }
    uint64_t word = (uint64_t)(uintptr_t)&m->word;
    uint32_t r = nx_hzk_cv_wait(c->t, word, (uint64_t)(uintptr_t)&v->key, timeout_ns < 0 ? -1 : timeout_ns);
    if (r ? take_word(c, m, arg(c, 1)) : !mutex(c, arg(c, 1))) return 1;   /* not handed the mutex: take it back */
    m->nest = 1;
    ret(c, r == 0);
    return 0;
}
static uint32_t op_wait_condition_variable(OsCall *c) { return wait_cond(c, -1); }
static uint32_t op_timed_wait_condition_variable(OsCall *c) {
    int64_t ns = (int64_t)arg(c, 2);
    return wait_cond(c, ns < 0 ? 0 : ns);
}

/* ---- events --------------------------------------------------------------------------------- */
static OsEvent *event(OsCall *c, uint64_t p) { return object(c, p, sizeof(OsEvent), "EventType", MAGIC_EVENT); }
static uint64_t key(const void *o) { return (uint64_t)(uintptr_t)o; }

static uint32_t op_initialize_event(OsCall *c) {
    OsEvent *e = object(c, arg(c, 0), sizeof *e, "EventType", 0);
    uint32_t mode = (uint32_t)arg(c, 2);
    if (!e) return 1;
    if (mode != CLEAR_MANUAL && mode != CLEAR_AUTO)
        return fail(c, "EventClearMode %u is neither ManualClear (0) nor AutoClear (1)", mode);
    memset(e, 0, sizeof *e);
    e->signaled = e->initially = arg(c, 1) & 1;
    e->mode = (uint8_t)mode;
    __atomic_store_n(&e->magic, MAGIC_EVENT, __ATOMIC_RELEASE);
    return 0;
}

static uint32_t op_finalize_event(OsCall *c) {
    OsEvent *e = event(c, arg(c, 0));
    if (!e) return 1;
    if (nx_hzk_best_waiter(key(e), key(e))) return fail(c, "EventType at %#llx: threads still wait on it", A(arg(c, 0)));
    e->magic = 0;
    return 0;
}

/* AutoClear: the best waiter takes the signal (the event stays clear), else it stays signalled
 * for the next waiter.  ManualClear: signalled until ClearEvent, every waiter wakes. */
static uint32_t op_signal_event(OsCall *c) {
    OsEvent *e = event(c, arg(c, 0));
    if (!e) return 1;
    if (e->mode == CLEAR_AUTO) {
        if (e->signaled) return 0;
        HzThread *w = nx_hzk_best_waiter(key(e), key(e));
        if (w) nx_hzk_wake(w);
        else e->signaled = 1;
        return 0;
    }
    e->signaled = 1;
    for (HzThread *w; (w = nx_hzk_best_waiter(key(e), key(e)));) nx_hzk_wake(w);
    return 0;
}

/* X0 = 1 when the event was (or became) signalled, 0 after the timeout (timeout_ns 0: try) */
static uint32_t wait_event(OsCall *c, int64_t timeout_ns) {
    OsEvent *e = event(c, arg(c, 0));
    if (!e) return 1;
    if (e->signaled) {
        if (e->mode == CLEAR_AUTO) e->signaled = 0;
        ret(c, 1);
        return 0;
    }
    ret(c, timeout_ns == 0 ? 0 : nx_hzk_wait(c->t, key(e), 0, timeout_ns) == 0);
    return 0;
}
static uint32_t op_wait_event(OsCall *c) { return wait_event(c, -1); }
static uint32_t op_try_wait_event(OsCall *c) { return wait_event(c, 0); }
static uint32_t op_timed_wait_event(OsCall *c) {
    int64_t ns = (int64_t)arg(c, 1);
    return wait_event(c, ns < 0 ? 0 : ns);
}

static uint32_t op_clear_event(OsCall *c) {
    OsEvent *e = event(c, arg(c, 0));
    if (!e) return 1;
    e->signaled = 0;
    return 0;
}

/* ---- semaphores ----------------------------------------------------------------------------- */
static OsSema *sema(OsCall *c, uint64_t p) { return object(c, p, sizeof(OsSema), "SemaphoreType", MAGIC_SEMA); }

static uint32_t op_initialize_semaphore(OsCall *c) {
    OsSema *m = object(c, arg(c, 0), sizeof *m, "SemaphoreType", 0);
    int32_t count = arg32(c, 1), max = arg32(c, 2);
    if (!m) return 1;
    if (max < 1 || count < 0 || count > max)
        return fail(c, "initial count %d, maximum %d: need 0 <= count <= maximum and maximum >= 1", count, max);
    m->count = count;
    m->max = max;
    m->pad = 0;
    __atomic_store_n(&m->magic, MAGIC_SEMA, __ATOMIC_RELEASE);
    return 0;
}

static uint32_t op_finalize_semaphore(OsCall *c) {
    OsSema *m = sema(c, arg(c, 0));
    if (!m) return 1;
    if (nx_hzk_best_waiter(key(m), key(m))) return fail(c, "SemaphoreType at %#llx: threads still wait on it", A(arg(c, 0)));
    m->magic = 0;
    return 0;
}

/* A released unit goes straight to the best waiter (so a thread that comes later cannot take
 * it first); X0 = 1 when a unit was taken, 0 after the timeout (timeout_ns 0: try). */
static uint32_t acquire(OsCall *c, int64_t timeout_ns) {
    OsSema *m = sema(c, arg(c, 0));
    if (!m) return 1;
    if (m->count > 0) {
        m->count--;
        ret(c, 1);
        return 0;
    }
    ret(c, timeout_ns == 0 ? 0 : nx_hzk_wait(c->t, key(m), 0, timeout_ns) == 0);
    return 0;
}
static uint32_t op_acquire_semaphore(OsCall *c) { return acquire(c, -1); }
static uint32_t op_try_acquire_semaphore(OsCall *c) { return acquire(c, 0); }
static uint32_t op_timed_acquire_semaphore(OsCall *c) {
    int64_t ns = (int64_t)arg(c, 1);
    return acquire(c, ns < 0 ? 0 : ns);
}

static uint32_t release(OsCall *c, int32_t n) {
    OsSema *m = sema(c, arg(c, 0));
    if (!m) return 1;
    if (n < 1) return fail(c, "releases %d units of the SemaphoreType at %#llx", n, A(arg(c, 0)));
    if ((int64_t)m->count + n > m->max)
        return fail(c, "SemaphoreType at %#llx: count %d + %d would exceed its maximum %d", A(arg(c, 0)), m->count, n, m->max);
    for (int32_t i = 0; i < n; i++) {
        HzThread *w = nx_hzk_best_waiter(key(m), key(m));
        if (w) nx_hzk_wake(w);
        else m->count++;
    }
    return 0;
}
static uint32_t op_release_semaphore(OsCall *c) { return release(c, 1); }
static uint32_t op_release_semaphore_n(OsCall *c) { return release(c, arg32(c, 1)); }

static uint32_t op_get_current_semaphore_count(OsCall *c) {
    OsSema *m = sema(c, arg(c, 0));
    if (!m) return 1;
    ret(c, (uint64_t)(int64_t)m->count);
    return 0;
}

/* ---- message queues ------------------------------------------------------------------------
 * Wait keys inside the queue object: q+0 receivers, q+1 peekers, q+2 senders, q+3 jammers
 * (each sender waits with its message).  Messages are handed over: a receiver waits only
 * while the queue is empty and is handed the next message sent (in its wait record: it writes
 * its own out pointer when it runs, checked again then); a sender waits only while the queue
 * is full and its message goes in as soon as a slot frees. */
enum { K_RECV, K_PEEK, K_SEND, K_JAM };

static OsQueue *queue(OsCall *c, uint64_t p) {
    OsQueue *q = object(c, p, sizeof(OsQueue), "MessageQueueType", MAGIC_QUEUE);
    if (q && !nx_hzk_range_ok(q->buffer, (uint64_t)q->capacity * 8, RW)) {
        fail(c, "MessageQueueType at %#llx: its buffer %#llx (%u messages) is no longer writable guest memory", A(p),
             A(q->buffer), q->capacity);
        return NULL;
    }
    return q;
}

static uint64_t *slots(OsQueue *q) { return (uint64_t *)(uintptr_t)q->buffer; }

static void put(OsQueue *q, uint64_t v, int jam) {
    if (jam) {
        q->head = (q->head + q->capacity - 1) % q->capacity;
        slots(q)[q->head] = v;
    } else {
        slots(q)[(q->head + q->count) % q->capacity] = v;
    }
    q->count++;
}

static uint64_t take(OsQueue *q) {
    uint64_t v = slots(q)[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->count--;
    return v;
}

/* A message went in: every peeker sees the front; the best receiver takes it. */
static void after_put(OsQueue *q) {
    for (HzThread *w; (w = nx_hzk_best_waiter(key(q) + K_PEEK, key(q) + K_PEEK));) {
        nx_hzk_set_waiter_value(w, slots(q)[q->head]);
        nx_hzk_wake(w);
    }
    HzThread *w = nx_hzk_best_waiter(key(q) + K_RECV, key(q) + K_RECV);
    if (w && q->count) {
        nx_hzk_set_waiter_value(w, take(q));
        nx_hzk_wake(w);
    }
}

/* A slot freed: the best sender or jammer puts its message in. */
static void after_take(OsQueue *q) {
    HzThread *w = nx_hzk_best_waiter(key(q) + K_SEND, key(q) + K_JAM);
    if (w && q->count < q->capacity) {
        put(q, nx_hzk_waiter_value(w), nx_hzk_waiter_key(w) == key(q) + K_JAM);
        nx_hzk_wake(w);
    }
}

static uint32_t op_initialize_message_queue(OsCall *c) {
    OsQueue *q = object(c, arg(c, 0), sizeof *q, "MessageQueueType", 0);
    uint64_t buf = arg(c, 1), n = arg(c, 2);
    if (!q) return 1;
    if (n == 0 || n > 0x10000000u) return fail(c, "message queue capacity %llu (need 1 .. 2^28)", A(n));
    if ((buf & 7) || !nx_hzk_range_ok(buf, n * 8, RW))
        return fail(c, "message buffer %#llx for %llu messages is not writable, 8-byte aligned guest memory", A(buf), A(n));
    memset(q, 0, sizeof *q);
    q->capacity = (uint32_t)n;
    q->buffer = buf;
    __atomic_store_n(&q->magic, MAGIC_QUEUE, __ATOMIC_RELEASE);
    return 0;
}

static uint32_t op_finalize_message_queue(OsCall *c) {
    OsQueue *q = queue(c, arg(c, 0));
    if (!q) return 1;
    if (nx_hzk_best_waiter(key(q), key(q) + K_JAM))
        return fail(c, "MessageQueueType at %#llx: threads still wait on it", A(arg(c, 0)));
    q->magic = 0;
    return 0;
}

/* Send (jam: to the front); X0 = 1 when the message went in, 0 after the timeout */
static uint32_t send(OsCall *c, int jam, int64_t timeout_ns) {
    OsQueue *q = queue(c, arg(c, 0));
    uint64_t v = arg(c, 1);
    if (!q) return 1;
    if (q->count < q->capacity) {
        put(q, v, jam);
        after_put(q);
        ret(c, 1);
        return 0;
    }
    ret(c, timeout_ns == 0 ? 0 : nx_hzk_wait(c->t, key(q) + (jam ? K_JAM : K_SEND), v, timeout_ns) == 0);
    return 0;
}
static uint32_t op_send_message_queue(OsCall *c) { return send(c, 0, -1); }
static uint32_t op_try_send_message_queue(OsCall *c) { return send(c, 0, 0); }
static uint32_t op_timed_send_message_queue(OsCall *c) {
    int64_t ns = (int64_t)arg(c, 2);
    return send(c, 0, ns < 0 ? 0 : ns);
}
static uint32_t op_jam_message_queue(OsCall *c) { return send(c, 1, -1); }
static uint32_t op_try_jam_message_queue(OsCall *c) { return send(c, 1, 0); }
static uint32_t op_timed_jam_message_queue(OsCall *c) {
    int64_t ns = (int64_t)arg(c, 2);
    return send(c, 1, ns < 0 ? 0 : ns);
}

/* Receive (peek: without taking it) into *X0 from the queue X1; X0 = 1 with a message, 0 after
 * the timeout */
static uint32_t receive(OsCall *c, int peek, int64_t timeout_ns) {
    uint64_t out = arg(c, 0);
    OsQueue *q = queue(c, arg(c, 1));
    if (!q) return 1;
    if (!out_u64(c, out, "message out pointer")) return 1;
    if (q->count) {
        if (peek) {
            *(uint64_t *)(uintptr_t)out = slots(q)[q->head];
        } else {
            *(uint64_t *)(uintptr_t)out = take(q);
            after_take(q);
        }
        ret(c, 1);
        return 0;
    }
    if (timeout_ns == 0 || nx_hzk_wait(c->t, key(q) + (peek ? K_PEEK : K_RECV), 0, timeout_ns)) {
        ret(c, 0);
        return 0;
    }
    if (!out_u64(c, out, "message out pointer")) return 1;     /* still mapped after the wait? */
    *(uint64_t *)(uintptr_t)out = nx_hzk_waiter_value(c->t);
    ret(c, 1);
    return 0;
}
static uint32_t op_receive_message_queue(OsCall *c) { return receive(c, 0, -1); }
static uint32_t op_try_receive_message_queue(OsCall *c) { return receive(c, 0, 0); }
static uint32_t op_timed_receive_message_queue(OsCall *c) {
    int64_t ns = (int64_t)arg(c, 2);
    return receive(c, 0, ns < 0 ? 0 : ns);
}
static uint32_t op_peek_message_queue(OsCall *c) { return receive(c, 1, -1); }
static uint32_t op_try_peek_message_queue(OsCall *c) { return receive(c, 1, 0); }
static uint32_t op_timed_peek_message_queue(OsCall *c) {
    int64_t ns = (int64_t)arg(c, 2);
    return receive(c, 1, ns < 0 ? 0 : ns);
}

/* ---- entry points: the kernel lock around each operation ------------------------------------ */
#define OS_ENTRY(name)                                                  \
    uint32_t nx_os_##name(NxCpu *s);                                    \
    uint32_t nx_os_##name(NxCpu *s) {                                   \
        nx_hzk_lock();                                                  \
        OsCall c = {s, nx_hzk_self(s)};                                 \
        uint32_t r = op_##name(&c);                                     \
        nx_hzk_unlock();                                                \
        return r;                                                       \
    }

#define OS_FUNCTIONS(X) \
    X(create_thread) \
    X(create_thread_core) \
    X(start_thread) \
    X(wait_thread) \
    X(destroy_thread) \
    X(get_current_thread) \
    X(change_thread_priority) \
    X(get_thread_priority) \
    X(get_thread_current_priority) \
    X(yield_thread) \
    X(set_thread_name) \
    X(get_thread_name_pointer) \
    X(get_current_core_number) \
    X(set_thread_core_mask) \
    X(get_thread_core_mask) \
    X(initialize_mutex) \
    X(finalize_mutex) \
    X(lock_mutex) \
    X(try_lock_mutex) \
    X(unlock_mutex) \
    X(is_mutex_locked_by_current_thread) \
    X(initialize_condition_variable) \
    X(finalize_condition_variable) \
    X(signal_condition_variable) \
    X(broadcast_condition_variable) \
    X(wait_condition_variable) \
    X(timed_wait_condition_variable) \
    X(initialize_event) \
    X(finalize_event) \
    X(signal_event) \
    X(wait_event) \
    X(try_wait_event) \
    X(timed_wait_event) \
    X(clear_event) \
    X(initialize_semaphore) \
    X(finalize_semaphore) \
    X(acquire_semaphore) \
    X(try_acquire_semaphore) \
    X(timed_acquire_semaphore) \
    X(release_semaphore) \
    X(release_semaphore_n) \
    X(get_current_semaphore_count) \
    X(initialize_message_queue) \
    X(finalize_message_queue) \
    X(send_message_queue) \
    X(try_send_message_queue) \
    X(timed_send_message_queue) \
    X(jam_message_queue) \
    X(try_jam_message_queue) \
    X(timed_jam_message_queue) \
    X(receive_message_queue) \
    X(try_receive_message_queue) \
    X(timed_receive_message_queue) \
    X(peek_message_queue) \
    X(try_peek_message_queue) \
    X(timed_peek_message_queue)

OS_FUNCTIONS(OS_ENTRY)

/* ---- native bindings: the guest's call lands here without Python --------------------------- */
/* Each entry point as a host function of its own (what nx_host_bind takes): the operation, then
 * the return to the caller as the Python wrapper would do it; a broken precondition becomes the
 * crash report of host function NX_OS_NATIVE_FAULT | index, its sentence kept for the report
 * (the crashing thread's own `why` is thread-local). */
#define NX_OS_NATIVE_FAULT 0x80000000u
enum {
#define OS_INDEX(name) OS_INDEX_##name,
    OS_FUNCTIONS(OS_INDEX)
    OS_COUNT
};
static char fault_why[256];
const char *nx_os_fault_why(void);
const char *nx_os_fault_why(void) { return fault_why; }

#define OS_NATIVE(name)                                                 \
    static void native_##name(NxCpu *s) {                               \
        if (nx_os_##name(s)) {                                          \
            memcpy(fault_why, why, sizeof fault_why);                   \
            nx_hz_host_fault(s, NX_OS_NATIVE_FAULT | OS_INDEX_##name);   \
        }                                                               \
        s->pc = s->x[30];                                               \
        nx_hz_host_yield(s);                                            \
    }
OS_FUNCTIONS(OS_NATIVE)

static const struct { const char *name; NxHostFn fn; } natives[OS_COUNT] = {
#define OS_TABLE(name) {#name, native_##name},
    OS_FUNCTIONS(OS_TABLE)
};

/* The native host function of entry point `name` (e.g. "lock_mutex") and its index, or NULL. */
NxHostFn nx_os_native(const char *name, uint32_t *index);
NxHostFn nx_os_native(const char *name, uint32_t *index) {
    for (uint32_t i = 0; i < OS_COUNT; i++)
        if (!strcmp(natives[i].name, name)) {
            if (index) *index = NX_OS_NATIVE_FAULT | i;
            return natives[i].fn;
        }
    return NULL;
}

