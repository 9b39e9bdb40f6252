/* horizon_kernel.c — the Horizon SVC personality (kernel HLE in C), compiled into every
 * game.so and selected with nx_set_svc_handler() by nx_hz_init().
 *
 * Facts it follows (public: switchbrew's SVC table and kernel notes):
 *  - SVC inputs in X0..X7, result code in W0 (0 = success; kernel results are module 1 with
 *    the description shifted left by 9), outputs from X1 on; GetSystemTick returns its value
 *    in X0 and counts at 19.2 MHz.
 *  - Priorities 0..63, a lower number is better; a thread may run only on a core of its
 *    affinity mask; among threads that want the same core the best priority wins, FIFO
 *    among equals; SleepThread(0) yields to ready threads of the same priority.
 *  - A guest mutex is a 32-bit word holding the owner's handle, bit 30 set when threads wait
 *    in the kernel (ArbitrateLock); ArbitrateUnlock hands the word to the best waiter.  A
 *    condition variable is a word the kernel sets to 1 while threads wait on it
 *    (WaitProcessWideKeyAtomic releases the mutex and waits; SignalProcessWideKey wakes the
 *    best waiters, each of which then takes the mutex or queues on its owner).
 *  - The owner of a mutex runs at the best priority of the threads waiting for it.
 *
 * Model: every guest thread is a host thread; there are three virtual cores.  A thread runs
 * guest code only while it holds a core; a thread that blocks gives its core back, and one
 * that becomes ready waits for a core.  A better-priority thread that wants a held core
 * preempts its holder at the holder's next SVC (the only point where lifted code enters the
 * kernel; an indirect-call hook would add more).  All kernel state is guarded by one lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "nxrt.h"
#include "horizon_kernel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "host_calls.h"

#define HZ_CORES 3
#define HZ_MAX_THREADS 1024
#define HZ_MAX_HANDLES 1024
#define HZ_MAX_REGIONS 512
#define HZ_TLS_SLOT 0x200
#define HZ_WAITERS 0x40000000u
/* Horizon's pseudo-handles (switchbrew SVC page; libnx svc.h CUR_PROCESS_HANDLE/CUR_THREAD_HANDLE;
 * Atmosphere svc::PseudoHandle): the current thread is 0xFFFF8000, the current process 0xFFFF8001. */
#define HZ_PSEUDO_THREAD  0xFFFF8000u
#define HZ_PSEUDO_PROCESS 0xFFFF8001u
#define HZ_HEAP_ALIGN 0x200000ull
#define HZ_PROCESS_ID 0x81ull          /* the one process's id (GetProcessId, an IPC request's PID) */
#define HZ_FIRST_THREAD_ID 0x100ull    /* GetThreadId: this plus the handle's slot */

#define R(desc) (1u | ((uint32_t)(desc) << 9))
#define R_NOT_IMPLEMENTED   R(33)
#define R_INVALID_SIZE      R(101)
#define R_INVALID_ADDRESS   R(102)
#define R_OUT_OF_RESOURCE   R(103)
#define R_OUT_OF_MEMORY     R(104)
#define R_OUT_OF_HANDLES    R(105)
#define R_INVALID_CUR_MEM   R(106)
#define R_INVALID_PRIORITY  R(112)
#define R_INVALID_CORE      R(113)
#define R_INVALID_HANDLE    R(114)
#define R_INVALID_COMBO     R(116)
#define R_TIMED_OUT         R(117)
#define R_OUT_OF_RANGE      R(119)
#define R_INVALID_ENUM      R(120)
#define R_CANCELLED         R(118)
#define R_INVALID_STATE     R(125)

/* T_HOST: running host code (an SDK function served by the host) without a core */
enum { T_CREATED = 1, T_READY, T_RUNNING, T_BLOCKED, T_EXITED, T_HOST };

typedef struct HzThread {
    NxCpu cpu;                   /* first: the kernel finds its thread from the NxCpu * of an SVC */
    int state;
    int base_prio;
    int core;                    /* held core, -1 when none */
    int ideal_core;
    uint64_t affinity;
    uint64_t seq;                /* order of becoming ready (FIFO among equal priorities) */
    uint64_t wait_seq;           /* order of starting a wait */
    uint32_t handle;             /* the handle CreateThread returned (mutex tags use it) */
    uint64_t tls;
    uint64_t host_stack;
    pthread_cond_t cv;           /* signalled when the thread is given a core */
    /* what it waits for (state T_BLOCKED) */
    struct HzThread *wait_owner; /* a mutex held by this thread ... */
    uint64_t wait_mutex;         /* ... at this address */
    uint32_t wait_tag;           /* the tag it asked to be written into the mutex word */
    uint64_t wait_key;           /* a condition variable */
    uint64_t cv_mutex;           /* the mutex to take again when signalled */
    uint64_t wait_addr;          /* WaitForAddress */
    uint64_t wait_obj;           /* an nn::os object's wait key (horizon_os.c) ... */
    uint64_t wait_value;         /* ... and what it hands over (a message) or is handed */
    uint64_t os_thread;          /* its nn::os ThreadType (guest address or a host record), 0 if none */
    int os_host;                 /* os_thread is a host record (not guest memory) */
    uint64_t os_entry, os_arg;   /* an nn::os thread runs os_entry(os_arg), then exits */
    void *sync[64];              /* WaitSynchronization objects (HzThread or HzEvent) */
    int nsync, sync_index;
    int sleeping;
    int timeout_applies;         /* a timeout ends the wait only while this is set */
    uint32_t wait_result;
    uint64_t ipc_buf, ipc_size;  /* the message of its request to a guest-served session */
    uint32_t light[7];           /* a light request's or reply's words */
    int cancellable;             /* in a wait CancelSynchronization ends (WaitSynchronization, ReplyAndReceive*) */
    int wait_cancelled;          /* CancelSynchronization came while it was not in such a wait */
} HzThread;

typedef struct { uint64_t addr, size; uint32_t type, perm, attr; } HzRegion;

/* An event: one object behind two handles, the writable one (SignalEvent) and the readable
 * one (WaitSynchronization, ResetSignal).  Signalled until cleared, as Horizon's are. */
typedef struct HzEvent { int signaled; } HzEvent;

/* A session's client end: the server side is the host's IPC layer (cpu_host/horizon/ipc/),
 * which knows the session by `id`.  Shared memory: a host memfd (so other processes, the GPU
 * process among them, can map the same pages), mapped by MapSharedMemory with at most `perm`.
 * Transfer memory: guest pages lent to a service (the service reads them in place; the host
 * keeps them accessible, the region table marks them as lent). */
/* refs: handles naming the object (a copy handle between guest threads adds one); it is released
 * when the last goes */
typedef struct HzSession { uint64_t id; int refs; } HzSession;
typedef struct HzShmem { int fd; uint64_t size; uint32_t perm; uint64_t mapped; } HzShmem;
typedef struct HzTmem { uint64_t addr, size; uint32_t perm, owner_perm, owner_type; uint64_t mapped; int refs; } HzTmem;

/* H_SESSION: a session served by the host; H_KSERVER/H_KCLIENT: the ends of a session between
 * guest threads, H_SPORT/H_CPORT: a port's (both: see "sessions and ports between guest threads") */
enum { H_THREAD = 1, H_EVENT_W, H_EVENT_R, H_SESSION, H_SHMEM, H_TMEM, H_PROCESS, H_KSERVER, H_KCLIENT, H_SPORT, H_CPORT, H_CODEMEM,
       H_LSERVER, H_LCLIENT };

static pthread_mutex_t K = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t exit_cv = PTHREAD_COND_INITIALIZER;
static HzConfig cfg;
static HzThread *cores[HZ_CORES];
static HzThread *threads[HZ_MAX_THREADS];
static int nthreads, alive;
static struct { uint32_t gen; int kind; void *obj; } handles[HZ_MAX_HANDLES];
static uint32_t handle_gen = 1;
static uint64_t seq_counter;
static HzRegion regions[HZ_MAX_REGIONS];
static int nregions;
static uint64_t heap_size_now;
static int exit_state;
static HzCrash crash;
static uint64_t tls_used;
static pthread_condattr_t cv_attr;

/* ---- memory regions (QueryMemory) ---------------------------------------------------- */
static void regions_sort(void) {
    for (int a = 0; a < nregions; a++)
        for (int b = a + 1; b < nregions; b++)
            if (regions[b].addr < regions[a].addr) { HzRegion t = regions[a]; regions[a] = regions[b]; regions[b] = t; }
}

/* Cut [addr, addr+size) out of every region (splitting the ones that straddle its ends).
 * -1 when the table would overflow. */
static int region_carve(uint64_t addr, uint64_t size) {
    uint64_t end = addr + size;
    for (int i = 0; i < nregions; i++) {
        HzRegion r = regions[i];
        uint64_t rend = r.addr + r.size;
        if (rend <= addr || r.addr >= end) continue;
        if (r.addr < addr && rend > end) {           /* a hole in the middle: two pieces */
            if (nregions == HZ_MAX_REGIONS) return -1;
            regions[i].size = addr - r.addr;
            regions[nregions++] = (HzRegion){end, rend - end, r.type, r.perm, r.attr};
        } else if (r.addr < addr) {
            regions[i].size = addr - r.addr;
        } else if (rend > end) {
            regions[i].addr = end;
            regions[i].size = rend - end;
        } else {
            memmove(&regions[i], &regions[i + 1], (size_t)(nregions - i - 1) * sizeof regions[0]);
            nregions--;
            i--;
        }
    }
    regions_sort();
    return 0;
}

static int region_put(uint64_t addr, uint64_t size, uint32_t type, uint32_t perm, uint32_t attr) {
    if (region_carve(addr, size) || nregions == HZ_MAX_REGIONS) return -1;
    regions[nregions++] = (HzRegion){addr, size, type, perm, attr};
    regions_sort();
    /* adjacent blocks in the same state are one block, as QueryMemory reports them */
    for (int i = 0; i + 1 < nregions; i++) {
        HzRegion *a = &regions[i], *b = &regions[i + 1];
        if (a->addr + a->size == b->addr && a->type == b->type && a->perm == b->perm && a->attr == b->attr) {
            a->size += b->size;
            memmove(b, b + 1, (size_t)(nregions - i - 2) * sizeof regions[0]);
            nregions--;
            i--;
        }
    }
    return 0;
}

/* The one region holding all of [addr, addr+size), or NULL */
static HzRegion *region_holding(uint64_t addr, uint64_t size) {
    for (int i = 0; i < nregions; i++)
        if (regions[i].addr <= addr && addr + size <= regions[i].addr + regions[i].size) return &regions[i];
    return NULL;
}

/* Whether every page of [addr, addr+size) is a heap page with this perm and attribute */
static int all_of_type(uint64_t addr, uint64_t size, uint32_t type, uint32_t perm, uint32_t attr) {
    uint64_t at = addr;
    while (at < addr + size) {
        HzRegion *r = region_holding(at, 1);
        if (!r || r->type != type || r->perm != perm || r->attr != attr) return 0;
        at = r->addr + r->size;
    }
    return 1;
}
static int all_heap(uint64_t addr, uint64_t size, uint32_t perm, uint32_t attr) {
    return all_of_type(addr, size, HZ_MEM_HEAP, perm, attr);
}

static int nothing_mapped(uint64_t addr, uint64_t size) {
    for (int i = 0; i < nregions; i++)
        if (regions[i].addr < addr + size && addr < regions[i].addr + regions[i].size) return 0;
    return 1;
}

/* [addr, addr+len) lies inside regions that all have permission `perm` */
static int guest_range_ok(uint64_t addr, uint64_t len, uint32_t perm) {
    if (addr + len < addr) return 0;
    uint64_t at = addr, end = addr + len;
    while (at < end) {
        int found = 0;
        for (int i = 0; i < nregions; i++) {
            HzRegion *r = &regions[i];
            if (r->addr <= at && at < r->addr + r->size) {
                if ((r->perm & perm) != perm) return 0;
                at = r->addr + r->size;
                found = 1;
                break;
            }
        }
        if (!found) return 0;
    }
    return 1;
}

int nx_hz_add_region(uint64_t addr, uint64_t size, uint32_t type, uint32_t perm) {
    pthread_mutex_lock(&K);
    region_put(addr, size, type, perm, 0);
    pthread_mutex_unlock(&K);
    return 0;
}

/* ---- handles ----------------------------------------------------------------------------- */
static uint32_t handle_new_of(int kind, void *obj) {
    for (uint32_t i = 1; i < HZ_MAX_HANDLES; i++) {
        if (!handles[i].obj) {
            handles[i].obj = obj;
            handles[i].kind = kind;
            handles[i].gen = handle_gen++ & 0x7FFF;
            if (!handles[i].gen) handles[i].gen = handle_gen++ & 0x7FFF;
            return handles[i].gen << 15 | i;
        }
    }
    return 0;
}

static uint32_t handle_new(HzThread *t) { return handle_new_of(H_THREAD, t); }

/* the object behind handle h and its kind (0 when h is not a live handle) */
static void *handle_obj(HzThread *self, uint32_t h, int *kind) {
    *kind = 0;
    if (h == HZ_PSEUDO_THREAD) { *kind = self ? H_THREAD : 0; return self; }
    if (h == HZ_PSEUDO_PROCESS) { *kind = H_PROCESS; return &cfg; }
    uint32_t i = h & 0x7FFF, gen = h >> 15;
    if (i == 0 || i >= HZ_MAX_HANDLES || !handles[i].obj || handles[i].gen != gen) return NULL;
    *kind = handles[i].kind;
    return handles[i].obj;
}

static HzThread *handle_thread(HzThread *self, uint32_t h) {
    int kind;
    void *o = handle_obj(self, h, &kind);
    return kind == H_THREAD ? o : NULL;
}

static HzEvent *handle_event(uint32_t h, int want) {
    int kind;
    void *o = handle_obj(NULL, h, &kind);
    return kind == want ? o : NULL;
}

/* ---- priorities and the scheduler ---------------------------------------------------- */
/* A mutex holder runs at its best waiter's priority (waiters may themselves hold mutexes). */
static int eff_prio_depth(HzThread *t, int depth) {
    int p = t->base_prio;
    if (depth > 16) return p;
    for (int i = 0; i < nthreads; i++) {
        HzThread *w = threads[i];
        if (w->state == T_BLOCKED && w->wait_owner == t) {
            int q = eff_prio_depth(w, depth + 1);
            if (q < p) p = q;
        }
    }
    return p;
}
static int eff_prio(HzThread *t) { return eff_prio_depth(t, 0); }

static int better(HzThread *a, int pa, uint64_t sa, HzThread *b, int pb, uint64_t sb) {
    (void)a; (void)b;
    return pa < pb || (pa == pb && sa < sb);
}

/* K held.  Raise dispatch.c's preemption flag while a ready thread could take a core held
 * by a running thread of strictly worse priority: that holder hands the core over at its
 * next SVC, host call, or indirect call/jump (the hook below), as Horizon's would at its
 * next interrupt. */
static volatile uint32_t preempt_cores;   /* bit c: core c's holder should hand it over */
static void preempt_update(void) {
    uint32_t want = 0;
    for (int i = 0; i < nthreads; i++) {
        HzThread *r = threads[i];
        if (r->state != T_READY) continue;
        int p = eff_prio(r);
        for (int c = 0; c < HZ_CORES; c++)
            if ((r->affinity >> c & 1) && cores[c] && eff_prio(cores[c]) > p) want |= 1u << c;
    }
    preempt_cores = want;
    nx_preempt_pending = want != 0;
}

/* Give free cores to ready threads: best priority first, each on a free core of its mask
 * (its ideal core when that one is free). */
static void schedule(void) {
    for (;;) {
        HzThread *best = NULL;
        int bp = 0, bc = -1;
        for (int i = 0; i < nthreads; i++) {
            HzThread *t = threads[i];
            if (t->state != T_READY) continue;
            int c = -1;
            if (t->ideal_core >= 0 && t->ideal_core < HZ_CORES && (t->affinity >> t->ideal_core & 1) && !cores[t->ideal_core])
                c = t->ideal_core;
            for (int k = 0; c < 0 && k < HZ_CORES; k++)
                if ((t->affinity >> k & 1) && !cores[k]) c = k;
            if (c < 0) continue;
            int p = eff_prio(t);
            if (!best || better(t, p, t->seq, best, bp, best->seq)) { best = t; bp = p; bc = c; }
        }
        if (!best) { preempt_update(); return; }
        best->state = T_RUNNING;
        best->core = bc;
        cores[bc] = best;
        pthread_cond_signal(&best->cv);
    }
}

static void make_ready(HzThread *t) {
    t->state = T_READY;
    t->seq = ++seq_counter;
    t->wait_owner = NULL;
    t->wait_key = 0;
    t->wait_addr = 0;
    t->wait_obj = 0;
    t->nsync = 0;
    t->sleeping = 0;
    t->timeout_applies = 0;
    schedule();
}

static void release_core(HzThread *t) {
    if (t->core >= 0) {
        cores[t->core] = NULL;
        t->core = -1;
    }
    schedule();
}

/* K held.  Wait until the scheduler gives `t` a core.  With a deadline, a wait that is still
 * cancellable when it passes ends with TimedOut and the thread queues for a core. */
static void wait_for_core(HzThread *t, const struct timespec *deadline) {
    while (t->core < 0) {
        if (deadline && t->state == T_BLOCKED && t->timeout_applies) {
            int rc = pthread_cond_timedwait(&t->cv, &K, deadline);
            if (rc == ETIMEDOUT && t->state == T_BLOCKED && t->timeout_applies) {
                t->wait_result = t->sleeping ? 0 : R_TIMED_OUT;
                make_ready(t);
            }
        } else {
            pthread_cond_wait(&t->cv, &K);
        }
    }
}

static void deadline_in(struct timespec *ts, int64_t ns) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    int64_t sec = ns / 1000000000ll, rem = ns % 1000000000ll;
    ts->tv_sec += sec;
    ts->tv_nsec += rem;
    if (ts->tv_nsec >= 1000000000l) { ts->tv_sec++; ts->tv_nsec -= 1000000000l; }
}

/* K held, t running: block (give the core back) until woken; timeout_ns < 0 = forever. */
static uint32_t block(HzThread *t, int64_t timeout_ns) {
    t->state = T_BLOCKED;
    t->wait_seq = ++seq_counter;
    t->wait_result = 0;
    t->timeout_applies = timeout_ns >= 0;
    release_core(t);
    struct timespec dl;
    if (timeout_ns >= 0) deadline_in(&dl, timeout_ns);
    wait_for_core(t, timeout_ns >= 0 ? &dl : NULL);
    return t->wait_result;
}

/* K held: hand the core over when a ready thread that may use it should run instead:
 * strictly better priority (preemption), or equal priority when yielding; or when the core
 * left the thread's affinity mask. */
static void maybe_yield(HzThread *t, int yielding) {
    if (t->state != T_RUNNING || t->core < 0) return;
    int c = t->core, mine = eff_prio(t), go = !(t->affinity >> c & 1);
    for (int i = 0; !go && i < nthreads; i++) {
        HzThread *r = threads[i];
        if (r->state != T_READY || !(r->affinity >> c & 1)) continue;
        int p = eff_prio(r);
        if (p < mine || (yielding && p == mine)) go = 1;
    }
    if (!go) return;
    t->state = T_READY;
    t->seq = ++seq_counter;
    release_core(t);
    wait_for_core(t, NULL);
}

/* ---- threads ----------------------------------------------------------------------------- */
static HzThread *thread_new(uint64_t entry, uint64_t arg, uint64_t stack_top, int prio, int core) {
    if (nthreads == HZ_MAX_THREADS || tls_used + HZ_TLS_SLOT > cfg.tls_size) return NULL;
    HzThread *t = aligned_alloc(64, (sizeof(HzThread) + 63) / 64 * 64);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->handle = handle_new(t);
    if (!t->handle) { free(t); return NULL; }
    t->state = T_CREATED;
    t->base_prio = prio;
    t->core = -1;
    t->ideal_core = core;
    t->affinity = 1ull << core;
    t->tls = cfg.tls_base + tls_used;
    tls_used += HZ_TLS_SLOT;
    memset((void *)t->tls, 0, HZ_TLS_SLOT);
    pthread_cond_init(&t->cv, &cv_attr);
    t->cpu.pc = entry;
    t->cpu.x[0] = arg;
    t->cpu.sp = stack_top;
    t->cpu.tpidrro_el0 = t->tls;
    threads[nthreads++] = t;
    return t;
}

/* Host side of a guest thread: a small helper thread that runs the guest on a host thread
 * with a large stack (dispatch.c's nx_run_on_thread also installs the fault report). */
static void *host_thread(void *p) {
    HzThread *t = p;
    pthread_mutex_lock(&K);
    wait_for_core(t, NULL);          /* no guest code before the thread holds a core */
    pthread_mutex_unlock(&K);
    nx_run_on_thread(&t->cpu, t->host_stack);
    return NULL;
}

static int thread_start(HzThread *t) {
    t->host_stack = t->host_stack ? t->host_stack : (256ull << 20);
    make_ready(t);
    alive++;
    pthread_attr_t a;
    pthread_t pt;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 1 << 16);
    int rc = pthread_create(&pt, &a, host_thread, t);
    pthread_attr_destroy(&a);
    if (rc) {
        alive--;
        t->state = T_EXITED;
        release_core(t);
        return -1;
    }
    return 0;
}

/* NxCpu is the first member of HzThread (s->thread belongs to dispatch.c's lookup cache) */
static HzThread *current(NxCpu *s) { return (HzThread *)(void *)s; }

static void process_end(int how) {
    if (!exit_state) {
        exit_state = how;
        pthread_cond_broadcast(&exit_cv);
    }
}

static void park_forever(void) {
    /* the process is ending: the runner's main thread exits it */
    for (;;) pthread_cond_wait(&exit_cv, &K);
}

static void crash_report(HzThread *t, uint32_t svc, uint64_t reason, uint64_t info, uint64_t size) {
    if (exit_state) return;
    memcpy(crash.x, t->cpu.x, sizeof crash.x);
    crash.sp = t->cpu.sp;
    crash.pc = t->cpu.pc - 4;     /* the lifter stores the address after the SVC */
    crash.tpidrro = t->tls;
    crash.reason = reason;
    crash.info_addr = info;
    crash.info_size = size;
    crash.svc = svc;
    crash.thread_handle = t->handle;
    process_end(HZ_EXIT_CRASH);
}

/* ---- mutexes and condition variables ----------------------------------------------------- */
static uint32_t *word(uint64_t addr) { return (uint32_t *)(uintptr_t)addr; }

static HzThread *best_waiter(HzThread *owner, uint64_t addr) {
    HzThread *best = NULL;
    int bp = 0;
    for (int i = 0; i < nthreads; i++) {
        HzThread *w = threads[i];
        if (w->state != T_BLOCKED || w->wait_owner != owner || w->wait_mutex != addr) continue;
        int p = eff_prio(w);
        if (!best || better(w, p, w->wait_seq, best, bp, best->wait_seq)) { best = w; bp = p; }
    }
    return best;
}

/* Release the mutex at addr held by t: the word goes to the best waiter (the others now wait
 * on that one), or to 0 when nobody waits. */
static void mutex_release(HzThread *t, uint64_t addr) {
    HzThread *next = best_waiter(t, addr);
    if (!next) {
        __atomic_store_n(word(addr), 0, __ATOMIC_RELEASE);
        return;
    }
    int others = 0;
    for (int i = 0; i < nthreads; i++) {
        HzThread *w = threads[i];
        if (w != next && w->state == T_BLOCKED && w->wait_owner == t && w->wait_mutex == addr) {
            w->wait_owner = next;
            others = 1;
        }
    }
    __atomic_store_n(word(addr), next->wait_tag | (others ? HZ_WAITERS : 0), __ATOMIC_RELEASE);
    next->wait_result = 0;
    make_ready(next);
}

/* A signalled condition-variable waiter takes its mutex, or queues on the mutex's owner. */
static void mutex_acquire_for(HzThread *w) {
    uint64_t addr = w->cv_mutex;
    w->wait_key = 0;
    if (!guest_range_ok(addr, 4, HZ_PERM_R | HZ_PERM_W)) {   /* unmapped while it waited */
        w->wait_result = R_INVALID_CUR_MEM;
        make_ready(w);
        return;
    }
    for (;;) {
        uint32_t v = __atomic_load_n(word(addr), __ATOMIC_ACQUIRE);
        if (v == 0) {
            if (__atomic_compare_exchange_n(word(addr), &v, w->wait_tag, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                w->wait_result = 0;
                make_ready(w);
                return;
            }
            continue;
        }
        if (!(v & HZ_WAITERS) &&
            !__atomic_compare_exchange_n(word(addr), &v, v | HZ_WAITERS, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        HzThread *owner = handle_thread(NULL, v & ~HZ_WAITERS);
        if (!owner) {
            w->wait_result = R_INVALID_STATE;
            make_ready(w);
            return;
        }
        w->wait_owner = owner;      /* stays blocked, now on the mutex, without a timeout */
        w->wait_mutex = addr;
        w->timeout_applies = 0;
        return;
    }
}

/* t (running, holding the mutex word at maddr) releases it and waits on the condition key;
 * signalled, it takes the mutex again or queues on its owner (mutex_acquire_for).  A timeout
 * leaves it without the mutex (the caller takes it back). */
static uint32_t cv_wait(HzThread *t, uint64_t maddr, uint64_t key, uint32_t tag, int64_t timeout) {
    mutex_release(t, maddr);
    t->wait_key = key;
    t->cv_mutex = maddr;
    t->wait_tag = tag;
    __atomic_store_n(word(key), 1, __ATOMIC_RELEASE);
    return block(t, timeout < 0 ? -1 : timeout);
}

/* Wake `count` waiters of the key (all when count <= 0), best priority first (FIFO among
 * equals); the key word goes back to 0 when nobody waits any more. */
static void cv_signal(uint64_t key, int32_t count) {
    for (int n = 0; count <= 0 || n < count; n++) {
        HzThread *best = NULL;
        int bp = 0;
        for (int i = 0; i < nthreads; i++) {
            HzThread *w = threads[i];
            if (w->state != T_BLOCKED || w->wait_key != key || !key) continue;
            int p = eff_prio(w);
            if (!best || better(w, p, w->wait_seq, best, bp, best->wait_seq)) { best = w; bp = p; }
        }
        if (!best) break;
        mutex_acquire_for(best);
    }
    int left = 0;
    for (int i = 0; i < nthreads; i++)
        if (threads[i]->state == T_BLOCKED && threads[i]->wait_key == key) left = 1;
    if (!left && guest_range_ok(key, 4, HZ_PERM_W)) __atomic_store_n(word(key), 0, __ATOMIC_RELEASE);
}

/* ---- the SVCs ------------------------------------------------------------------------- */
/* MapMemory's live mappings: (dst, src, size) */
#define HZ_MAX_MAPPINGS 256
static struct { uint64_t dst, src, size; uint32_t src_type; } mappings[HZ_MAX_MAPPINGS];
static int nmappings;

static void svc_set_heap_size(NxCpu *s) {
    uint64_t size = s->x[1];
    if (size % HZ_HEAP_ALIGN) { s->x[0] = R_INVALID_SIZE; return; }
    /* the heap's size stays put while pages of it are lent out (MapMemory) or re-protected */
    if (nmappings || !all_heap(cfg.heap_base, heap_size_now, HZ_PERM_R | HZ_PERM_W, 0)) {
        s->x[0] = R_INVALID_STATE;
        return;
    }
    if (size > cfg.heap_size) { s->x[0] = R_OUT_OF_MEMORY; return; }
    if (size > heap_size_now) {
        if (mprotect((void *)(uintptr_t)cfg.heap_base, size, PROT_READ | PROT_WRITE)) { s->x[0] = R_OUT_OF_MEMORY; return; }
    } else if (size < heap_size_now) {
        void *p = (void *)(uintptr_t)(cfg.heap_base + size);
        madvise(p, heap_size_now - size, MADV_DONTNEED);
        mprotect(p, heap_size_now - size, PROT_NONE);
    }
    heap_size_now = size;
    region_carve(cfg.heap_base, cfg.heap_size);
    if (size) region_put(cfg.heap_base, size, HZ_MEM_HEAP, HZ_PERM_R | HZ_PERM_W, 0);
    s->x[0] = 0;
    s->x[1] = cfg.heap_base;
}

static void svc_query_memory(NxCpu *s) {
    uint64_t out = s->x[0], addr = s->x[2];
    if (!guest_range_ok(out, 0x28, HZ_PERM_W)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    uint64_t base = 0, size = 0;
    uint32_t type = HZ_MEM_UNMAPPED, perm = 0, attr = 0;
    if (addr >= cfg.address_space_end) {
        base = cfg.address_space_end;
        size = 0 - cfg.address_space_end;
        type = HZ_MEM_INACCESSIBLE;
    } else {
        uint64_t lo = 0, hi = cfg.address_space_end;
        int hit = 0;
        for (int i = 0; i < nregions; i++) {
            HzRegion *r = &regions[i];
            if (r->addr <= addr && addr < r->addr + r->size) {
                base = r->addr; size = r->size; type = r->type; perm = r->perm; attr = r->attr; hit = 1;
                break;
            }
            if (r->addr + r->size <= addr && r->addr + r->size > lo) lo = r->addr + r->size;
            if (r->addr > addr && r->addr < hi) hi = r->addr;
        }
        if (!hit) { base = lo; size = hi - lo; }
    }
    uint64_t *o = (uint64_t *)(uintptr_t)out;
    uint32_t *w = (uint32_t *)(uintptr_t)(out + 16);
    o[0] = base; o[1] = size;
    w[0] = type; w[1] = attr; w[2] = perm; w[3] = 0; w[4] = 0; w[5] = 0;
    s->x[0] = 0;
    s->x[1] = 0;   /* page info */
}

/* ---- MapMemory and friends ------------------------------------------------------------------ */
#define R_INVALID_NEW_PERM   R(108)
#define R_INVALID_MEM_REGION R(110)
#define HZ_ATTR_LOCKED   1u
#define HZ_ATTR_UNCACHED 8u
#define HZ_MEM_NORMAL 0x02

static uint32_t check_range(uint64_t addr, uint64_t size) {
    if (addr & 0xFFF) return R_INVALID_ADDRESS;
    if (!size || size & 0xFFF) return R_INVALID_SIZE;
    if (addr + size <= addr) return R_INVALID_MEM_REGION;
    return 0;
}

static int in_range(uint64_t addr, uint64_t size, uint64_t base, uint64_t len) {
    return addr >= base && addr + size <= base + len;
}

/* MapMemory(dst, src, size): heap pages appear at dst in the stack region (the SDK's thread
 * stacks); src is locked and inaccessible until UnmapMemory.  The pages move (mremap), so
 * writes through dst are what src holds again afterwards; a PROT_NONE placeholder keeps src. */
static void svc_map_memory(NxCpu *s, int unmap) {
    uint64_t dst = s->x[0], src = s->x[1], size = s->x[2];
    uint32_t r = check_range(dst, size);
    if (!r && src & 0xFFF) r = R_INVALID_ADDRESS;
    if (!r && src + size <= src) r = R_INVALID_MEM_REGION;
    if (!r && !in_range(dst, size, cfg.stack_base, cfg.stack_size)) r = R_INVALID_MEM_REGION;
    if (r) { s->x[0] = r; return; }
    if (!unmap) {
        /* the source may be heap or a module's data (.data/.bss): both states carry FlagCanAlias
         * (Atmosphere's KMemoryState_Normal 0x037EBD05, KMemoryState_CodeData 0x03FEBD04 and
         * KMemoryState_AliasCodeData 0x0FFFBD09: a loaded NRO's .bss);
         * nx-hbloader maps its threads' stacks from its .bss this way */
        HzRegion *sr = region_holding(src, 1);
        uint32_t src_type = sr && (sr->type == HZ_MEM_CODE_MUTABLE || sr->type == 0x09) ? sr->type : HZ_MEM_HEAP;
        if (!all_of_type(src, size, src_type, HZ_PERM_R | HZ_PERM_W, 0) || !nothing_mapped(dst, size) ||
            nmappings == HZ_MAX_MAPPINGS) {
            s->x[0] = R_INVALID_CUR_MEM;
            return;
        }
        void *m = mremap((void *)(uintptr_t)src, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)dst);
        if (m == MAP_FAILED) { s->x[0] = R_OUT_OF_RESOURCE; return; }
        mmap((void *)(uintptr_t)src, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        region_put(src, size, src_type, 0, HZ_ATTR_LOCKED);
        region_put(dst, size, HZ_MEM_STACK, HZ_PERM_R | HZ_PERM_W, 0);
        mappings[nmappings].dst = dst; mappings[nmappings].src = src; mappings[nmappings].size = size;
        mappings[nmappings].src_type = src_type;
        nmappings++;
    } else {
        int k;
        for (k = 0; k < nmappings; k++)
            if (mappings[k].dst == dst && mappings[k].src == src && mappings[k].size == size) break;
        if (k == nmappings) { s->x[0] = R_INVALID_CUR_MEM; return; }   /* not what MapMemory mapped */
        void *m = mremap((void *)(uintptr_t)dst, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)src);
        if (m == MAP_FAILED) { s->x[0] = R_OUT_OF_RESOURCE; return; }
        region_carve(dst, size);
        region_put(src, size, mappings[k].src_type, HZ_PERM_R | HZ_PERM_W, 0);
        mappings[k] = mappings[--nmappings];
    }
    s->x[0] = 0;
}

/* SetMemoryPermission(addr, size, perm): none, R or RW on memory whose state allows
 * reprotection (Atmosphere's KMemoryState FlagCanReprotect: heap, CodeMutable = a module's
 * data such as its RELRO, Normal); not on code, stacks, shared or locked memory. */
static int reprotect_ok(uint32_t type) {
    /* AliasCodeData (0x0FFFBD09) carries CodeData's (0x0FFEBD04) data flags: a loaded NRO's RELRO */
    return type == HZ_MEM_HEAP || type == HZ_MEM_CODE_MUTABLE || type == HZ_MEM_NORMAL || type == 0x09;
}

static void svc_set_memory_permission(NxCpu *s) {
    uint64_t addr = s->x[0], size = s->x[1];
    uint32_t perm = (uint32_t)s->x[2];
    if (addr & 0xFFF) { s->x[0] = R_INVALID_ADDRESS; return; }
    if (!size || size & 0xFFF) { s->x[0] = R_INVALID_SIZE; return; }
    if (addr + size <= addr) { s->x[0] = R_INVALID_CUR_MEM; return; }
    if (perm != 0 && perm != HZ_PERM_R && perm != (HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_NEW_PERM; return; }
    for (uint64_t at = addr; at < addr + size;) {
        HzRegion *g = region_holding(at, 1);
        if (!g || !reprotect_ok(g->type) || g->attr) { s->x[0] = R_INVALID_CUR_MEM; return; }
        at = g->addr + g->size;
    }
    /* one piece per region crossed: each keeps its memory type */
    for (uint64_t at = addr; at < addr + size;) {
        HzRegion *g = region_holding(at, 1);
        uint64_t end = g->addr + g->size < addr + size ? g->addr + g->size : addr + size;
        uint32_t type = g->type;
        mprotect((void *)(uintptr_t)at, end - at, (perm & HZ_PERM_R ? PROT_READ : 0) | (perm & HZ_PERM_W ? PROT_WRITE : 0));
        region_put(at, end - at, type, perm, 0);
        at = end;
    }
    s->x[0] = 0;
}

/* SetMemoryAttribute(addr, size, mask, attr): only the uncached bit may change; kept for
 * QueryMemory (the host's caches are coherent, nothing else to do) */
static void svc_set_memory_attribute(NxCpu *s) {
    uint64_t addr = s->x[0], size = s->x[1];
    uint32_t mask = (uint32_t)s->x[2], attr = (uint32_t)s->x[3], r = check_range(addr, size);
    if (r) { s->x[0] = r; return; }
    if ((mask | attr) & ~HZ_ATTR_UNCACHED || (attr & ~mask)) { s->x[0] = R_INVALID_COMBO; return; }
    for (uint64_t at = addr; at < addr + size;) {
        HzRegion *g = region_holding(at, 1);
        if (!g || g->type != HZ_MEM_HEAP || g->attr & ~HZ_ATTR_UNCACHED) { s->x[0] = R_INVALID_CUR_MEM; return; }
        uint64_t end = g->addr + g->size < addr + size ? g->addr + g->size : addr + size;
        uint32_t type = g->type, perm = g->perm, a = (g->attr & ~mask) | attr;
        region_put(at, end - at, type, perm, a);
        at = end;
    }
    s->x[0] = 0;
}

/* MapPhysicalMemory(addr, size) / UnmapPhysicalMemory: fresh zeroed pages in the alias region */
static void svc_map_physical(NxCpu *s, int unmap) {
    uint64_t addr = s->x[0], size = s->x[1];
    uint32_t r = check_range(addr, size);
    if (!r && !in_range(addr, size, cfg.alias_base, cfg.alias_size)) r = R_INVALID_MEM_REGION;
    if (r) { s->x[0] = r; return; }
    if (!unmap) {
        if (!nothing_mapped(addr, size)) { s->x[0] = R_INVALID_CUR_MEM; return; }
        void *m = mmap((void *)(uintptr_t)addr, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (m == MAP_FAILED || m != (void *)(uintptr_t)addr) { s->x[0] = R_OUT_OF_MEMORY; return; }
        region_put(addr, size, HZ_MEM_NORMAL, HZ_PERM_R | HZ_PERM_W, 0);
    } else {
        for (uint64_t at = addr; at < addr + size;) {
            HzRegion *g = region_holding(at, 1);
            if (!g || g->type != HZ_MEM_NORMAL) { s->x[0] = R_INVALID_CUR_MEM; return; }
            at = g->addr + g->size;
        }
        munmap((void *)(uintptr_t)addr, size);
        region_carve(addr, size);
    }
    s->x[0] = 0;
}

static uint64_t used_memory(void) {
    uint64_t n = heap_size_now + tls_used;
    for (int i = 0; i < nregions; i++)
        if (regions[i].type != HZ_MEM_HEAP && regions[i].type != HZ_MEM_THREAD_LOCAL) n += regions[i].size;
    return n;
}

/* cpu_host.deterministic (env NXRECOMP_CPU_HOST_DETERMINISTIC): RandomEntropy answers fixed words,
 * so a program that seeds its generator from them (libnx's randomGet64) makes the same choices
 * each run: a loader's random load address among them, which keeps code lifted at run time in
 * the cache (cpu_host/horizon/loaded_code.py). */
static int deterministic_entropy(void) {
    static int det = -1;
    if (det < 0) {
        const char *v = getenv("NXRECOMP_CPU_HOST_DETERMINISTIC");
        det = v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcasecmp(v, "yes"));
    }
    return det;
}

static uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void svc_get_info(HzThread *t, NxCpu *s) {
    uint32_t id0 = (uint32_t)s->x[1], h = (uint32_t)s->x[2];
    uint64_t id1 = s->x[3], v = 0;
    (void)t;
    switch (id0) {
    case 8: case 11:    /* DebuggerAttached, RandomEntropy: no handle */
        if (h != 0) { s->x[0] = R_INVALID_HANDLE; return; }
        if (id0 == 11) {
            if (id1 > 3) { s->x[0] = R_INVALID_COMBO; return; }
            if (deterministic_entropy()) v = splitmix64(0x6E787265636F6D70ull + id1);
            else if (getrandom(&v, sizeof v, 0) != sizeof v) v = nx_counter();
        }
        s->x[0] = 0; s->x[1] = v;
        return;
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 12: case 13: case 14: case 15:
    case 16: case 17: case 18: case 20: case 21: case 22: case 23: case 24:
        break;
    default:
        s->x[0] = R_INVALID_ENUM;
        return;
    }
    if (h != HZ_PSEUDO_PROCESS) { s->x[0] = R_INVALID_HANDLE; return; }
    if (id1 != 0) { s->x[0] = R_INVALID_COMBO; return; }
    switch (id0) {
    case 0: for (int c = cfg.min_core; c <= cfg.max_core; c++) v |= 1ull << c; break;
    case 1: for (int p = cfg.highest_priority; p <= cfg.lowest_priority; p++) v |= 1ull << p; break;
    case 2: v = cfg.alias_base; break;
    case 3: v = cfg.alias_size; break;
    case 4: v = cfg.heap_base; break;
    case 5: v = cfg.heap_size; break;
    case 6: case 21: v = cfg.total_memory; break;
    case 7: case 22: v = used_memory(); break;
    case 12: v = cfg.code_base; break;
    case 13: v = cfg.code_size; break;
    case 14: v = cfg.stack_base; break;
    case 15: v = cfg.stack_size; break;
    case 18: v = cfg.program_id; break;
    case 23: v = 1; break;    /* IsApplication */
    case 24: v = (uint64_t)(HZ_MAX_THREADS - nthreads); break;   /* FreeThreadCount */
    default: v = 0; break;    /* system resource sizes, user exception context: none */
    }
    s->x[0] = 0;
    s->x[1] = v;
}

static void svc_create_thread(HzThread *t, NxCpu *s) {
    uint64_t entry = s->x[1], arg = s->x[2], stack_top = s->x[3];
    int prio = (int32_t)s->x[4], core = (int32_t)s->x[5];
    if (core == -2) core = cfg.default_core;
    if (core < cfg.min_core || core > cfg.max_core || core < 0 || core >= HZ_CORES) { s->x[0] = R_INVALID_CORE; return; }
    if (prio < cfg.highest_priority || prio > cfg.lowest_priority || prio > 63) { s->x[0] = R_INVALID_PRIORITY; return; }
    HzThread *n = thread_new(entry, arg, stack_top, prio, core);
    if (!n) { s->x[0] = R_OUT_OF_RESOURCE; return; }
    n->host_stack = t->host_stack;
    s->x[0] = 0;
    s->x[1] = n->handle;
}

static int sync_signaled(int kind, void *o);
static void sync_hold(void **objs, const int *kinds, int n, int d);
static uint32_t close_handle(HzThread *t, uint32_t h);

static void svc_wait_sync(HzThread *t, NxCpu *s) {
    uint64_t hp = s->x[1];
    int32_t n = (int32_t)s->x[2];
    int64_t timeout = (int64_t)s->x[3];
    if (n < 0 || n > 64) { s->x[0] = R_OUT_OF_RANGE; return; }
    if (n && !guest_range_ok(hp, 4ull * n, HZ_PERM_R)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    void *objs[64];
    int kinds[64];
    for (int i = 0; i < n; i++) {
        objs[i] = handle_obj(t, ((uint32_t *)(uintptr_t)hp)[i], &kinds[i]);
        int signaled = objs[i] ? sync_signaled(kinds[i], objs[i]) : -1;
        if (signaled < 0) { s->x[0] = R_INVALID_HANDLE; return; }
        if (signaled) { s->x[0] = 0; s->x[1] = (uint64_t)i; return; }
    }
    if (timeout == 0) { s->x[0] = R_TIMED_OUT; return; }
    if (t->wait_cancelled) { t->wait_cancelled = 0; s->x[0] = R_CANCELLED; s->x[1] = (uint64_t)-1; return; }
    memcpy(t->sync, objs, sizeof objs[0] * (size_t)n);
    t->nsync = n;
    t->sync_index = -1;
    sync_hold(objs, kinds, n, +1);
    t->cancellable = 1;
    uint32_t r = block(t, timeout < 0 ? -1 : timeout);
    t->cancellable = 0;
    sync_hold(objs, kinds, n, -1);
    s->x[0] = r;
    s->x[1] = r == 0 ? (uint64_t)(int64_t)t->sync_index : (uint64_t)-1;
}

/* `obj` became signalled: every thread waiting for it wakes with its index */
static void wake_sync_waiters(void *obj) {
    for (int i = 0; i < nthreads; i++) {
        HzThread *w = threads[i];
        if (w->state != T_BLOCKED) continue;
        for (int k = 0; k < w->nsync; k++) {
            if (w->sync[k] == obj) {
                w->sync_index = k;
                w->wait_result = 0;
                make_ready(w);
                break;
            }
        }
    }
}

static void thread_exit(HzThread *t) {
    t->state = T_EXITED;
    release_core(t);
    wake_sync_waiters(t);
    if (--alive == 0) process_end(HZ_EXIT_PROCESS);
}

static uint32_t set_core_mask(HzThread *o, int32_t ideal, uint64_t mask) {
    if (ideal == -3) ideal = o->ideal_core;          /* keep the ideal core */
    else if (ideal == -2) ideal = cfg.default_core;  /* the process's default */
    if (ideal == -1 || ideal == -3) ideal = o->ideal_core;
    if (mask == 0) return R_INVALID_COMBO;
    for (int c = 0; c < 64; c++)
        if ((mask >> c & 1) && (c < cfg.min_core || c > cfg.max_core || c >= HZ_CORES)) return R_INVALID_CORE;
    if (ideal < 0 || ideal >= HZ_CORES) return R_INVALID_CORE;
    if (!(mask >> ideal & 1)) return R_INVALID_COMBO;
    o->ideal_core = ideal;
    o->affinity = mask;
    if (o->state == T_READY) schedule();
    return 0;
}

static void svc_set_core_mask(HzThread *t, NxCpu *s) {
    HzThread *o = handle_thread(t, (uint32_t)s->x[0]);
    if (!o) { s->x[0] = R_INVALID_HANDLE; return; }
    s->x[0] = set_core_mask(o, (int32_t)s->x[1], s->x[2]);
}

/* WaitForAddress(addr, type, value, timeout): 0 WaitIfLessThan, 1 DecrementAndWaitIfLessThan,
 * 2 WaitIfEqual; a value that does not meet the condition is InvalidState. */
static void svc_wait_for_address(HzThread *t, NxCpu *s) {
    uint64_t addr = s->x[0];
    uint32_t type = (uint32_t)s->x[1];
    int32_t value = (int32_t)s->x[2];
    int64_t timeout = (int64_t)s->x[3];
    if (addr & 3) { s->x[0] = R_INVALID_ADDRESS; return; }
    if (type > 2) { s->x[0] = R_INVALID_ENUM; return; }
    if (!guest_range_ok(addr, 4, HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    int32_t *w = (int32_t *)(uintptr_t)addr;
    int32_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    if (type == 2) {
        if (cur != value) { s->x[0] = R_INVALID_STATE; return; }
    } else {
        for (;;) {
            if (cur >= value) { s->x[0] = R_INVALID_STATE; return; }
            if (type == 0 || __atomic_compare_exchange_n(w, &cur, cur - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
        }
    }
    if (timeout == 0) { s->x[0] = R_TIMED_OUT; return; }
    t->wait_addr = addr;
    s->x[0] = block(t, timeout < 0 ? -1 : timeout);
}

/* SignalToAddress(addr, type, value, count): 0 Signal, 1 SignalAndIncrementIfEqual, 2
 * SignalAndModifyByWaitingCountIfEqual; wakes up to `count` waiters (all when count <= 0), best
 * priority first.  Type 2's new value follows the waiters there are W: count <= 0: value - 2
 * with waiters, value + 1 without; count > 0: value + 1 without waiters, value - 1 when all W
 * are woken (W <= count), value when some stay; the word must hold `value` (InvalidState). */
static void svc_signal_to_address(NxCpu *s) {
    uint64_t addr = s->x[0];
    uint32_t type = (uint32_t)s->x[1];
    int32_t value = (int32_t)s->x[2], count = (int32_t)s->x[3];
    if (addr & 3) { s->x[0] = R_INVALID_ADDRESS; return; }
    if (type > 2) { s->x[0] = R_INVALID_ENUM; return; }
    if (!guest_range_ok(addr, 4, HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    if (type >= 1) {
        int32_t next = value + 1;
        if (type == 2) {
            int waiters = 0;
            for (int i = 0; i < nthreads; i++)
                waiters += threads[i]->state == T_BLOCKED && threads[i]->wait_addr == addr;
            if (count <= 0) next = waiters ? value - 2 : value + 1;
            else next = !waiters ? value + 1 : waiters <= count ? value - 1 : value;
        }
        int32_t cur = value;
        if (!__atomic_compare_exchange_n((int32_t *)(uintptr_t)addr, &cur, next, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            s->x[0] = R_INVALID_STATE;
            return;
        }
    }
    for (int n = 0; count <= 0 || n < count; n++) {
        HzThread *best = NULL;
        int bp = 0;
        for (int i = 0; i < nthreads; i++) {
            HzThread *w = threads[i];
            if (w->state != T_BLOCKED || w->wait_addr != addr) continue;
            int p = eff_prio(w);
            if (!best || better(w, p, w->wait_seq, best, bp, best->wait_seq)) { best = w; bp = p; }
        }
        if (!best) break;
        best->wait_result = 0;
        make_ready(best);
    }
    s->x[0] = 0;
}


/* ---- sessions, shared and transfer memory --------------------------------------------------
 * ConnectToNamedPort and SendSync* go to the host's IPC layer (nx_hz_set_ipc_handler): the SVC
 * handler drops the kernel lock and calls it on the guest thread, which keeps its core (the
 * call is the service's work, done synchronously as Horizon's server would while the client
 * waits).  The handler makes handles with the nx_hz_* calls below, which take the lock. */
static NxHzIpcFn ipc_fn;
void nx_hz_set_ipc_handler(NxHzIpcFn fn) { ipc_fn = fn; }

/* Session handles closed since the IPC layer last asked (it releases their server side): a
 * small ring under K; when it is full the oldest ids are dropped (their server objects leak). */
#define HZ_CLOSED_RING 256
static uint64_t closed_ids[HZ_CLOSED_RING];
static unsigned closed_head, closed_tail;
int64_t nx_hz_session_closed_pop(void) {
    pthread_mutex_lock(&K);
    int64_t id = closed_head == closed_tail ? -1 : (int64_t)closed_ids[closed_tail++ % HZ_CLOSED_RING];
    pthread_mutex_unlock(&K);
    return id;
}

static uint32_t handle_new_locked(int kind, void *obj) {
    pthread_mutex_lock(&K);
    uint32_t h = handle_new_of(kind, obj);
    pthread_mutex_unlock(&K);
    return h;
}

uint32_t nx_hz_session_new(uint64_t id) {
    HzSession *o = malloc(sizeof *o);
    if (!o) return 0;
    o->id = id;
    o->refs = 1;
    uint32_t h = handle_new_locked(H_SESSION, o);
    if (!h) free(o);
    return h;
}

int64_t nx_hz_session_id(uint32_t h) {
    pthread_mutex_lock(&K);
    int kind;
    void *o = handle_obj(NULL, h, &kind);
    int64_t id = kind == H_SESSION ? (int64_t)((HzSession *)o)->id : -1;
    pthread_mutex_unlock(&K);
    return id;
}

/* The kind of handle h as seen from thread s (0: not a live handle); the IPC layer checks the
 * handles a request copies or moves. */
int nx_hz_handle_kind(NxCpu *s, uint32_t h) {
    pthread_mutex_lock(&K);
    int kind;
    handle_obj(s ? current(s) : NULL, h, &kind);
    pthread_mutex_unlock(&K);
    return kind;
}

/* An event a service signals (vsync, applet messages): the service keeps the object, the guest
 * gets readable handles to it (a copy handle in a reply). */
uint64_t nx_hz_event_new(void) { return (uint64_t)(uintptr_t)calloc(1, sizeof(HzEvent)); }
uint32_t nx_hz_event_handle(uint64_t ev) { return ev ? handle_new_locked(H_EVENT_R, (void *)(uintptr_t)ev) : 0; }
void nx_hz_event_set(uint64_t ev, int on) {
    HzEvent *e = (HzEvent *)(uintptr_t)ev;
    pthread_mutex_lock(&K);
    if (on && !e->signaled) { e->signaled = 1; wake_sync_waiters(e); }
    if (!on) e->signaled = 0;
    pthread_mutex_unlock(&K);
}

/* A shared-memory handle over `fd` (dup'ed: the caller keeps its own) of `size` bytes, which
 * the guest may map with at most `perm`. */
uint32_t nx_hz_shmem_new(int fd, uint64_t size, uint32_t perm) {
    HzShmem *o = calloc(1, sizeof *o);
    if (!o) return 0;
    o->fd = dup(fd);
    o->size = size;
    o->perm = perm;
    uint32_t h = o->fd >= 0 ? handle_new_locked(H_SHMEM, o) : 0;
    if (!h) { if (o->fd >= 0) close(o->fd); free(o); }
    return h;
}

/* Where a transfer-memory handle's pages are: 0, or -1 when h is not one. */
int nx_hz_tmem_info(uint32_t h, uint64_t *addr, uint64_t *size) {
    pthread_mutex_lock(&K);
    int kind;
    HzTmem *o = handle_obj(NULL, h, &kind);
    int ok = kind == H_TMEM;
    if (ok) { *addr = o->addr; *size = o->size; }
    pthread_mutex_unlock(&K);
    return ok ? 0 : -1;
}

static int prot_of(uint32_t perm) { return (perm & HZ_PERM_R ? PROT_READ : 0) | (perm & HZ_PERM_W ? PROT_WRITE : 0); }

/* MapSharedMemory(handle, addr, size, perm): the whole object at a free, page-aligned range
 * inside the address space; perm R or RW, no more than the object allows. */
static void svc_map_shared(HzThread *t, NxCpu *s, int unmap) {
    uint32_t h = (uint32_t)s->x[0], perm = (uint32_t)s->x[3];
    uint64_t addr = s->x[1], size = s->x[2];
    uint32_t r = check_range(addr, size);
    if (r) { s->x[0] = r; return; }
    if (addr + size > cfg.address_space_end) { s->x[0] = R_INVALID_MEM_REGION; return; }
    int kind;
    HzShmem *o = handle_obj(t, h, &kind);
    if (kind != H_SHMEM) { s->x[0] = R_INVALID_HANDLE; return; }
    if (unmap) {
        HzRegion *g = region_holding(addr, size);
        if (!o->mapped || o->mapped != addr || size != o->size || !g || g->type != HZ_MEM_SHARED) {
            s->x[0] = R_INVALID_CUR_MEM;
            return;
        }
        mmap((void *)(uintptr_t)addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        munmap((void *)(uintptr_t)addr, size);
        region_carve(addr, size);
        o->mapped = 0;
        s->x[0] = 0;
        return;
    }
    if (perm != HZ_PERM_R && perm != (HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_NEW_PERM; return; }
    if ((perm & ~o->perm) != 0) { s->x[0] = R_INVALID_NEW_PERM; return; }
    if (size != o->size) { s->x[0] = R_INVALID_SIZE; return; }
    if (o->mapped || !nothing_mapped(addr, size)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    void *m = mmap((void *)(uintptr_t)addr, size, prot_of(perm), MAP_SHARED | MAP_FIXED_NOREPLACE, o->fd, 0);
    if (m == MAP_FAILED || m != (void *)(uintptr_t)addr) {
        if (m != MAP_FAILED) munmap(m, size);
        s->x[0] = R_INVALID_CUR_MEM;
        return;
    }
    region_put(addr, size, HZ_MEM_SHARED, perm, 0);
    o->mapped = addr;
    s->x[0] = 0;
}

/* CreateTransferMemory(addr, size, perm): heap (or alias-region) pages lent to a service; the
 * owner keeps `perm` (none, R or RW) on them until the handle is closed. */
static void svc_create_transfer(HzThread *t, NxCpu *s) {
    uint64_t addr = s->x[1], size = s->x[2];
    uint32_t perm = (uint32_t)s->x[3], r = check_range(addr, size);
    (void)t;
    if (r) { s->x[0] = r; return; }
    if (perm != 0 && perm != HZ_PERM_R && perm != (HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_NEW_PERM; return; }
    HzRegion *g = region_holding(addr, size);
    if (!g || (g->type != HZ_MEM_HEAP && g->type != HZ_MEM_NORMAL) || g->attr || g->perm != (HZ_PERM_R | HZ_PERM_W)) {
        s->x[0] = R_INVALID_CUR_MEM;
        return;
    }
    HzTmem *o = calloc(1, sizeof *o);
    uint32_t h = o ? handle_new_of(H_TMEM, o) : 0;
    if (!h) { free(o); s->x[0] = R_OUT_OF_HANDLES; return; }
    o->addr = addr; o->size = size; o->perm = perm; o->owner_perm = g->perm; o->owner_type = g->type;
    o->refs = 1;
    /* the host keeps the pages accessible (the service reads them in place); the region table
     * says what the owner may do, so checked accesses (SVCs, services) follow Horizon's rule */
    region_put(addr, size, o->owner_type, perm, HZ_ATTR_LOCKED);
    s->x[0] = 0;
    s->x[1] = h;
}

/* CreateCodeMemory(X1 = addr, X2 = size) -> W1: heap pages (Normal and CodeData carry
 * FlagCanCodeMemory) become a code-memory object; the owner's pages are locked until the handle
 * is closed.  ControlCodeMemory(W0 = handle, W1 = operation, X2 = addr, X3 = size, W4 = perm)
 * maps them as code for a process other than their owner (a loader's job); this process owns
 * every code memory it can name, and Horizon [5.0.0+] refuses that to the owner with
 * InvalidCurrentMemory (0xD401) before looking at the operation, as nx-hbloader's probe of the
 * kernel documents (it then loads through MapProcessCodeMemory instead).  Argument checks:
 * Atmosphère's svc_code_memory.cpp (page-aligned address: InvalidAddress; size non-zero and
 * page-aligned: InvalidSize; wrap: InvalidCurrentMemory; handle: InvalidHandle). */
static void svc_create_code_memory(NxCpu *s) {
    uint64_t addr = s->x[1], size = s->x[2];
    if (addr & 0xFFF) { s->x[0] = R_INVALID_ADDRESS; return; }
    if (!size || (size & 0xFFF)) { s->x[0] = R_INVALID_SIZE; return; }
    if (addr + size <= addr) { s->x[0] = R_INVALID_CUR_MEM; return; }
    HzRegion *g = region_holding(addr, size);
    if (!g || (g->type != HZ_MEM_HEAP && g->type != HZ_MEM_CODE_MUTABLE && g->type != 0x09) || g->attr ||
        g->perm != (HZ_PERM_R | HZ_PERM_W)) {
        s->x[0] = R_INVALID_CUR_MEM;
        return;
    }
    HzTmem *o = calloc(1, sizeof *o);
    uint32_t h = o ? handle_new_of(H_CODEMEM, o) : 0;
    if (!h) { free(o); s->x[0] = o ? R_OUT_OF_HANDLES : R_OUT_OF_RESOURCE; return; }
    o->addr = addr; o->size = size; o->owner_perm = g->perm; o->owner_type = g->type;
    o->refs = 1;
    region_put(addr, size, o->owner_type, o->owner_perm, HZ_ATTR_LOCKED);
    s->x[0] = 0;
    s->x[1] = h;
}

static void svc_control_code_memory(HzThread *t, NxCpu *s) {
    uint64_t addr = s->x[2], size = s->x[3];
    if (addr & 0xFFF) { s->x[0] = R_INVALID_ADDRESS; return; }
    if (!size || (size & 0xFFF)) { s->x[0] = R_INVALID_SIZE; return; }
    if (addr + size <= addr) { s->x[0] = R_INVALID_CUR_MEM; return; }
    int kind;
    void *o = handle_obj(t, (uint32_t)s->x[0], &kind);
    if (!o || kind != H_CODEMEM) { s->x[0] = R_INVALID_HANDLE; return; }
    s->x[0] = R_INVALID_CUR_MEM;     /* the owner itself: see above */
}

/* ---- code loaded at run time: MapProcessCodeMemory and friends ---------------------------------
 * How a homebrew loader (nx-hbloader) runs an NRO it read into its heap: MapProcessCodeMemory
 * (0x77) aliases the heap pages at a free address as code, SetProcessMemoryPermission (0x73) makes
 * the text R-X, the rodata R and the data RW, the loader jumps to it, and UnmapProcessCodeMemory
 * (0x78, per segment) gives the pages back to the heap when the program returns.  Facts
 * (Atmosphère's kern_svc_process_memory.cpp and KPageTableBase::MapCodeMemory /
 * UnmapCodeMemory / SetProcessMemoryPermission, switchbrew's SVC page; facts only):
 *  - all three take a process handle; 0x77/0x78 refuse the pseudo-handle (InvalidHandle: a loader
 *    first gets a real handle to itself), 0x73 accepts it;
 *  - page-aligned addresses (InvalidAddress), size non-zero and page-aligned (InvalidSize), no
 *    wrap (InvalidCurrentMemory);
 *  - dst must lie in the alias-code region (here: the code region) outside the heap and alias
 *    regions (InvalidCurrentMemory at the SVC, InvalidMemoryRegion in the page table: both are
 *    what hbloader's retry loop expects, 0xD401 / 0xDC01), and be free (InvalidCurrentMemory);
 *    src must be heap with RW and no attribute (InvalidCurrentMemory);
 *  - after the map: src keeps its state with no user permission and the Locked attribute; dst is
 *    AliasCode (QueryMemory type 8) with no user permission; SetProcessMemoryPermission on memory
 *    whose state has the code flag (Code, CodeData, AliasCode, AliasCodeData) sets none, R, RW,
 *    R-X or X (else InvalidNewMemoryPermission); a writable AliasCode page becomes AliasCodeData
 *    (type 9), a writable Code page CodeData;
 *  - unmap: dst must be AliasCode/AliasCodeData holding the very pages of src (else
 *    InvalidMemoryRegion), src locked heap; afterwards dst is free and src RW heap again.
 * Here the pages move (mremap), as MapMemory's do; a PROT_NONE placeholder keeps src.  The run-time
 * lifter (lift_miss.c) asks nx_loaded_code_region which mapping a branch target lies in, and
 * lifts from a copy of that mapping; an unmap drops the lifted rows of the range (nx_lift_forget). */
#define HZ_MEM_ALIAS_CODE      0x08
#define HZ_MEM_ALIAS_CODE_DATA 0x09
#define HZ_MAX_CODE_MAPS 64
static struct { uint64_t dst, src, size, live; } code_maps[HZ_MAX_CODE_MAPS];   /* live: bytes still mapped */
static int ncode_maps;

void nx_lift_forget(uint64_t lo, uint64_t hi);

static int is_code_state(uint32_t type) {
    return type == HZ_MEM_CODE_STATIC || type == HZ_MEM_CODE_MUTABLE || type == HZ_MEM_ALIAS_CODE ||
           type == HZ_MEM_ALIAS_CODE_DATA;
}

/* the common argument checks of 0x77/0x78; 0 or the result */
static uint32_t process_code_args(HzThread *t, NxCpu *s) {
    uint64_t dst = s->x[1], src = s->x[2], size = s->x[3];
    if ((dst | src) & 0xFFF) return R_INVALID_ADDRESS;
    if (!size || size & 0xFFF) return R_INVALID_SIZE;
    if (dst + size <= dst || src + size <= src) return R_INVALID_CUR_MEM;
    int kind;
    uint32_t h = (uint32_t)s->x[0];
    if (h == HZ_PSEUDO_PROCESS || h == HZ_PSEUDO_THREAD || !handle_obj(t, h, &kind) || kind != H_PROCESS)
        return R_INVALID_HANDLE;
    if (src + size > cfg.address_space_end) return R_INVALID_CUR_MEM;
    int in_code = in_range(dst, size, cfg.code_base, cfg.code_size);
    int in_heap = dst < cfg.heap_base + cfg.heap_size && cfg.heap_base < dst + size;
    int in_alias = dst < cfg.alias_base + cfg.alias_size && cfg.alias_base < dst + size;
    if (!in_code || in_heap || in_alias) return R_INVALID_CUR_MEM;
    return 0;
}

static void svc_map_process_code(HzThread *t, NxCpu *s) {
    uint64_t dst = s->x[1], src = s->x[2], size = s->x[3];
    uint32_t r = process_code_args(t, s);
    if (r) { s->x[0] = r; return; }
    if (!all_heap(src, size, HZ_PERM_R | HZ_PERM_W, 0) || !nothing_mapped(dst, size)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    if (ncode_maps == HZ_MAX_CODE_MAPS) { s->x[0] = R_OUT_OF_RESOURCE; return; }
    /* a host mapping the guest does not know of (the host's own) also makes dst unusable */
    void *probe = mmap((void *)(uintptr_t)dst, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                       MAP_FIXED_NOREPLACE, -1, 0);
    if (probe != (void *)(uintptr_t)dst) {
        if (probe != MAP_FAILED) munmap(probe, size);
        s->x[0] = R_INVALID_CUR_MEM;
        return;
    }
    void *m = mremap((void *)(uintptr_t)src, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)dst);
    if (m == MAP_FAILED) { munmap(probe, size); s->x[0] = R_OUT_OF_RESOURCE; return; }
    mprotect(m, size, PROT_NONE);
    mmap((void *)(uintptr_t)src, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    region_put(src, size, HZ_MEM_HEAP, 0, HZ_ATTR_LOCKED);
    region_put(dst, size, HZ_MEM_ALIAS_CODE, 0, 0);
    code_maps[ncode_maps].dst = dst; code_maps[ncode_maps].src = src;
    code_maps[ncode_maps].size = code_maps[ncode_maps].live = size;
    ncode_maps++;
    s->x[0] = 0;
}

static void svc_unmap_process_code(HzThread *t, NxCpu *s) {
    uint64_t dst = s->x[1], src = s->x[2], size = s->x[3];
    uint32_t r = process_code_args(t, s);
    if (r) { s->x[0] = r; return; }
    if (!all_of_type(src, size, HZ_MEM_HEAP, 0, HZ_ATTR_LOCKED)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    for (uint64_t at = dst; at < dst + size;) {
        HzRegion *g = region_holding(at, 1);
        if (!g || (g->type != HZ_MEM_ALIAS_CODE && g->type != HZ_MEM_ALIAS_CODE_DATA) || g->attr) {
            s->x[0] = R_INVALID_CUR_MEM;
            return;
        }
        at = g->addr + g->size;
    }
    int k;   /* the same pages: dst and src at the same offset of one mapping */
    for (k = 0; k < ncode_maps; k++)
        if (in_range(dst, size, code_maps[k].dst, code_maps[k].size) && src - code_maps[k].src == dst - code_maps[k].dst)
            break;
    if (k == ncode_maps) { s->x[0] = R_INVALID_MEM_REGION; return; }
    void *m = mremap((void *)(uintptr_t)dst, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)src);
    if (m == MAP_FAILED) { s->x[0] = R_OUT_OF_RESOURCE; return; }
    mprotect(m, size, PROT_READ | PROT_WRITE);
    region_carve(dst, size);
    region_put(src, size, HZ_MEM_HEAP, HZ_PERM_R | HZ_PERM_W, 0);
    nx_lift_forget(dst, dst + size);      /* code lifted from these pages is gone with them */
    code_maps[k].live -= size;
    if (!code_maps[k].live) {   /* the last piece: say so (a loader's program has returned to it) */
        fprintf(stderr, "nxrecomp: notice: the code mapped at %#llx (%#llx bytes) was unmapped (svcUnmapProcessCodeMemory)\n",
                (unsigned long long)code_maps[k].dst, (unsigned long long)code_maps[k].size);
        fflush(stderr);
        code_maps[k] = code_maps[--ncode_maps];
    }
    s->x[0] = 0;
}

static void svc_set_process_memory_permission(HzThread *t, NxCpu *s) {
    uint64_t addr = s->x[1], size = s->x[2];
    uint32_t perm = (uint32_t)s->x[3];
    if (addr & 0xFFF) { s->x[0] = R_INVALID_ADDRESS; return; }
    if (!size || size & 0xFFF) { s->x[0] = R_INVALID_SIZE; return; }
    if (addr + size <= addr) { s->x[0] = R_INVALID_CUR_MEM; return; }
    if (perm != 0 && perm != HZ_PERM_R && perm != (HZ_PERM_R | HZ_PERM_W) && perm != (HZ_PERM_R | HZ_PERM_X) &&
        perm != HZ_PERM_X) {
        s->x[0] = R_INVALID_NEW_PERM;
        return;
    }
    int kind;
    if (!handle_obj(t, (uint32_t)s->x[0], &kind) || kind != H_PROCESS) { s->x[0] = R_INVALID_HANDLE; return; }
    if (addr + size > cfg.address_space_end) { s->x[0] = R_INVALID_CUR_MEM; return; }
    for (uint64_t at = addr; at < addr + size;) {
        HzRegion *g = region_holding(at, 1);
        if (!g || !is_code_state(g->type) || g->attr) { s->x[0] = R_INVALID_CUR_MEM; return; }
        at = g->addr + g->size;
    }
    for (uint64_t at = addr; at < addr + size;) {
        HzRegion *g = region_holding(at, 1);
        uint64_t end = g->addr + g->size < addr + size ? g->addr + g->size : addr + size;
        uint32_t type = g->type;
        if (perm & HZ_PERM_W)
            type = type == HZ_MEM_ALIAS_CODE ? HZ_MEM_ALIAS_CODE_DATA : type == HZ_MEM_CODE_STATIC ? HZ_MEM_CODE_MUTABLE : type;
        /* guest code is data to the host: R-X is readable, never executable here */
        mprotect((void *)(uintptr_t)at, end - at, perm & (HZ_PERM_R | HZ_PERM_X) ? PROT_READ | (perm & HZ_PERM_W ? PROT_WRITE : 0)
                                                                                 : PROT_NONE);
        region_put(at, end - at, type, perm, 0);
        at = end;
    }
    s->x[0] = 0;
}

/* For the run-time lifter: the code mapping holding addr ([*base, *base + *size)) and its pieces as
 * "offset:size:perm" words joined by ',' (perm as QueryMemory's bits); 0 when addr is in none. */
int nx_loaded_code_region(uint64_t addr, uint64_t *base, uint64_t *size, char *segs, size_t n) {
    pthread_mutex_lock(&K);
    int k, found = 0;
    for (k = 0; k < ncode_maps; k++)
        if (addr >= code_maps[k].dst && addr < code_maps[k].dst + code_maps[k].size) break;
    if (k < ncode_maps) {
        HzRegion *g = region_holding(addr, 1);
        found = g && (g->type == HZ_MEM_ALIAS_CODE || g->type == HZ_MEM_ALIAS_CODE_DATA);
    }
    if (found) {
        *base = code_maps[k].dst;
        *size = code_maps[k].size;
        size_t used = 0;
        segs[0] = 0;
        for (int i = 0; i < nregions && used + 64 < n; i++) {
            HzRegion *g = &regions[i];
            if (g->addr < *base || g->addr + g->size > *base + *size) continue;
            if (g->type != HZ_MEM_ALIAS_CODE && g->type != HZ_MEM_ALIAS_CODE_DATA) continue;
            used += (size_t)snprintf(segs + used, n - used, "%s%llx:%llx:%u", used ? "," : "",
                                     (unsigned long long)(g->addr - *base), (unsigned long long)g->size, g->perm);
        }
    }
    pthread_mutex_unlock(&K);
    return found;
}

static void tmem_release(HzTmem *o) {
    if (o->mapped) return;   /* still mapped elsewhere: the owner gets it back at unmap */
    region_put(o->addr, o->size, o->owner_type, o->owner_perm, 0);
    o->addr = 0;
}

/* MapTransferMemory(handle, addr, size, perm) / Unmap: the lent pages appear at addr (they
 * move, as MapMemory's do) when the owner kept no access (perm none), as Horizon requires of
 * an isolated transfer memory; the pages go back to the owner at unmap. */
static void svc_map_transfer(HzThread *t, NxCpu *s, int unmap) {
    uint32_t h = (uint32_t)s->x[0], perm = (uint32_t)s->x[3];
    uint64_t addr = s->x[1], size = s->x[2];
    uint32_t r = check_range(addr, size);
    if (r) { s->x[0] = r; return; }
    if (!in_range(addr, size, cfg.alias_base, cfg.alias_size) && !in_range(addr, size, cfg.code_base, cfg.code_size)) {
        s->x[0] = R_INVALID_MEM_REGION;
        return;
    }
    int kind;
    HzTmem *o = handle_obj(t, h, &kind);
    if (kind != H_TMEM || !o->addr) { s->x[0] = R_INVALID_HANDLE; return; }
    if (size != o->size) { s->x[0] = R_INVALID_SIZE; return; }
    if (unmap) {
        if (o->mapped != addr) { s->x[0] = R_INVALID_CUR_MEM; return; }
        void *m = mremap((void *)(uintptr_t)addr, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)o->addr);
        if (m == MAP_FAILED) { s->x[0] = R_OUT_OF_RESOURCE; return; }
        region_carve(addr, size);
        o->mapped = 0;
        region_put(o->addr, o->size, o->owner_type, o->perm, HZ_ATTR_LOCKED);
        s->x[0] = 0;
        return;
    }
    if (perm != o->perm && !(o->perm == 0 && perm == (HZ_PERM_R | HZ_PERM_W))) { s->x[0] = R_INVALID_NEW_PERM; return; }
    if (o->perm != 0) { s->x[0] = R_INVALID_STATE; return; }
    if (o->mapped || !nothing_mapped(addr, size)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    void *m = mremap((void *)(uintptr_t)o->addr, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)addr);
    if (m == MAP_FAILED) { s->x[0] = R_OUT_OF_RESOURCE; return; }
    mmap((void *)(uintptr_t)o->addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    region_put(addr, size, HZ_MEM_TRANSFER_ISOLATED, HZ_PERM_R | HZ_PERM_W, 0);
    o->mapped = addr;
    s->x[0] = 0;
}

/* ---- sessions and ports between guest threads ---------------------------------------------
 * Horizon's in-process IPC (switchbrew SVC page; Atmosphère's KSession/KServerSession/KPort
 * behaviour, facts only): CreateSession (0x40) gives a server and a client handle; a client's
 * SendSyncRequest (0x21) / SendSyncRequestWithUserBuffer (0x22) queues the calling thread on the
 * session and blocks it; the server session is signalled while a request waits and none is being
 * served, or once every client handle is closed.  ReplyAndReceive (0x43) first replies to its
 * reply target (the request being served, else InvalidState), then waits on its handles and
 * receives the first request of a signalled server session (a closed client: SessionClosed with
 * that index).  Closing every server handle ends the served and queued requests with
 * SessionClosed (0xF601); a request to a session whose server is closed fails the same way.
 * CreatePort (0x70), ManageNamedPort (0x71), ConnectToPort (0x72), AcceptSession (0x41) and
 * ConnectToNamedPort (0x1F) for names registered here make sessions through ports; light sessions (0x20 / 0x42) below.
 *
 * The message moves as HIPC (switchbrew IPC_Marshalling): the kernel copies the header, the
 * special header and the data words into the receiver's buffer, writes the sender's process id
 * where send-PID asks for it, and translates handles: a copy handle gives the receiver a new
 * handle to the same object (the pseudo-handles 0xFFFF8000/0xFFFF8001 become real handles to the
 * thread/process), a move handle leaves the sender's table.  Both ends live in one address space
 * here, so buffer descriptors (A/B/W/X, receive lists) pass verbatim: their addresses are valid
 * for the server as they are for the client.  Light ports (CreatePort with is_light) are not
 * served (NotImplemented). */
#define R_OUT_OF_SESSIONS   R(7)
#define R_INVALID_POINTER   R(115)
#define R_NOT_FOUND         R(121)
#define R_SESSION_CLOSED    R(123)
#define R_PORT_CLOSED       R(131)
#define R_MESSAGE_TOO_LARGE R(260)
#define HZ_PORT_QUEUE 64
#define HZ_NAMED_PORTS 32

typedef struct HzKPort HzKPort;
typedef struct HzKSession {
    int nclient, nserver;         /* live handles to each end (copy handles add some) */
    int client_closed, server_closed;   /* every handle of that end is gone */
    int pending;                  /* connected through a port, not yet accepted */
    int held;                     /* threads in a wait that names it: it outlives their wait */
    int light;                    /* a light session: 7 words in registers (0x20 / 0x42) */
    HzThread *receiver;           /* light: the server thread waiting for a request */
    HzThread *served_by;          /* light: the thread that received the request being served */
    HzThread *queue[HZ_MAX_THREADS > 64 ? 64 : HZ_MAX_THREADS];   /* threads whose requests wait, FIFO */
    int nqueue;
    HzThread *serving;            /* the request received and not yet replied to */
    HzKPort *port;                /* the port it came through, or NULL */
} HzKSession;

struct HzKPort {
    int nclient, nserver;
    int held;
    int max_sessions, nsessions;
    HzKSession *pending[HZ_PORT_QUEUE];   /* connected, not yet accepted */
    int npending;
    char name[12];                /* a named port's name ("" when none) */
};
static HzKPort *named_ports[HZ_NAMED_PORTS];

static int ksession_signaled(HzKSession *k) { return k->client_closed || (k->nqueue && !k->serving); }
static int kport_signaled(HzKPort *p) { return p->npending > 0; }

/* waitable kinds (KSynchronizationObject): is the object signalled? -1 when the kind is not one */
static int sync_signaled(int kind, void *o) {
    switch (kind) {
    case H_THREAD: return ((HzThread *)o)->state == T_EXITED;
    case H_EVENT_R: return ((HzEvent *)o)->signaled;
    case H_KSERVER: return ksession_signaled(o);
    case H_SPORT: return kport_signaled(o);
    default: return -1;
    }
}

static void kport_maybe_free(HzKPort *p) {
    if (p->nclient || p->nserver || p->name[0] || p->nsessions || p->held) return;
    free(p);
}

static void ksession_maybe_free(HzKSession *k);

/* a waiting thread keeps the sessions and ports it waits on (Horizon holds a reference) */
static void sync_hold(void **objs, const int *kinds, int n, int d) {
    for (int i = 0; i < n; i++) {
        if (kinds[i] == H_KSERVER) {
            ((HzKSession *)objs[i])->held += d;
            if (d < 0) ksession_maybe_free(objs[i]);
        } else if (kinds[i] == H_SPORT) {
            ((HzKPort *)objs[i])->held += d;
            if (d < 0) kport_maybe_free(objs[i]);
        }
    }
}

static void ksession_maybe_free(HzKSession *k) {
    if (k->nclient || k->nserver || k->nqueue || k->serving || k->pending || k->held || k->receiver) return;
    if (k->port) { k->port->nsessions--; kport_maybe_free(k->port); }
    free(k);
}

/* a moved handle leaves the sender's table without closing its object */
static void handle_forget(uint32_t h, int kind, void *obj) {
    if (kind == H_KSERVER || kind == H_LSERVER) ((HzKSession *)obj)->nserver--;
    if (kind == H_KCLIENT || kind == H_LCLIENT) ((HzKSession *)obj)->nclient--;
    if (kind == H_SPORT) ((HzKPort *)obj)->nserver--;
    if (kind == H_CPORT) ((HzKPort *)obj)->nclient--;
    if (kind == H_SESSION) ((HzSession *)obj)->refs--;
    if (kind == H_TMEM || kind == H_CODEMEM) ((HzTmem *)obj)->refs--;
    handles[h & 0x7FFF].obj = NULL;
}

/* a new handle to `obj` of `kind` (K held), counting the ends of sessions and ports */
static uint32_t handle_add_ref(int kind, void *obj) {
    uint32_t h = handle_new_of(kind, obj);
    if (!h) return 0;
    if (kind == H_KSERVER || kind == H_LSERVER) ((HzKSession *)obj)->nserver++;
    if (kind == H_KCLIENT || kind == H_LCLIENT) ((HzKSession *)obj)->nclient++;
    if (kind == H_SPORT) ((HzKPort *)obj)->nserver++;
    if (kind == H_CPORT) ((HzKPort *)obj)->nclient++;
    if (kind == H_SESSION) ((HzSession *)obj)->refs++;
    if (kind == H_TMEM || kind == H_CODEMEM) ((HzTmem *)obj)->refs++;
    return h;
}

/* the requester `w` is done: it returns `result` from its SendSyncRequest */
static void ksession_finish(HzThread *w, uint32_t result) {
    w->wait_result = result;
    if (w->state == T_BLOCKED) make_ready(w);
}

static void ksession_server_gone(HzKSession *k) {
    k->server_closed = 1;
    if (k->receiver) ksession_finish(k->receiver, R_SESSION_CLOSED);
    if (k->serving) { ksession_finish(k->serving, R_SESSION_CLOSED); k->serving = NULL; }
    for (int i = 0; i < k->nqueue; i++) ksession_finish(k->queue[i], R_SESSION_CLOSED);
    k->nqueue = 0;
    ksession_maybe_free(k);
}

static void ksession_close_server(HzKSession *k) {
    if (--k->nserver == 0) ksession_server_gone(k);
}

static void ksession_close_client(HzKSession *k) {
    if (--k->nclient > 0) return;
    k->client_closed = 1;
    if (k->light) {     /* KLightServerSession::CleanupRequests: the served request and the receiver end too */
        if (k->serving) { ksession_finish(k->serving, R_SESSION_CLOSED); k->serving = NULL; }
        if (k->receiver) ksession_finish(k->receiver, R_SESSION_CLOSED);
    }
    /* queued requests can no longer be received (ReceiveRequest answers SessionClosed) */
    for (int i = 0; i < k->nqueue; i++) ksession_finish(k->queue[i], R_SESSION_CLOSED);
    k->nqueue = 0;
    wake_sync_waiters(k);     /* the server session is signalled from now on */
    ksession_maybe_free(k);
}

/* the last server-port handle: sessions waiting to be accepted lose their server */
static void kport_close_server(HzKPort *p) {
    if (--p->nserver > 0) return;
    int n = p->npending;
    p->npending = 0;
    for (int i = 0; i < n; i++) {
        p->pending[i]->pending = 0;
        ksession_server_gone(p->pending[i]);
    }
    kport_maybe_free(p);
}

/* HIPC header facts (switchbrew IPC_Marshalling): word 0 = type:16, #X:4, #A:4, #B:4, #W:4;
 * word 1 = #data words:10, C mode:4, pad:6, receive-list offset:11, special header:1; the
 * special header = send PID:1, #copy:4, #move:4, then the PID (8 bytes), the copy handles, the
 * move handles, the X descriptors (2 words each), A/B/W (3 words each), the data words. */
typedef struct { uint32_t words, handles_at, ncopy, nmove, pid_at; int send_pid; } HzMsgLayout;

static void msg_layout(const uint32_t *m, HzMsgLayout *L) {
    uint32_t w0 = m[0], w1 = m[1];
    uint32_t nx = w0 >> 16 & 0xF, na = w0 >> 20 & 0xF, nb = w0 >> 24 & 0xF, nw = w0 >> 28 & 0xF;
    uint32_t at = 2;
    memset(L, 0, sizeof *L);
    if (w1 >> 31) {
        uint32_t sp = m[2];
        L->send_pid = sp & 1;
        L->ncopy = sp >> 1 & 0xF;
        L->nmove = sp >> 5 & 0xF;
        at = 3;
        if (L->send_pid) { L->pid_at = at; at += 2; }
        L->handles_at = at;
        at += L->ncopy + L->nmove;
    }
    L->words = at + 2 * nx + 3 * (na + nb + nw) + (w1 & 0x3FF);
}

/* Copy the message at `src` (sender `from`) to `dst`, translating handles into the one table.
 * On failure nothing is written and no handle changes. */
static uint32_t msg_transfer(HzThread *from, uint64_t src, uint64_t src_size, uint64_t dst, uint64_t dst_size) {
    uint32_t *m = (uint32_t *)(uintptr_t)src;
    if (src_size < 8) return R_INVALID_CUR_MEM;
    HzMsgLayout L;
    msg_layout(m, &L);
    if ((uint64_t)L.words * 4 > src_size) return R_INVALID_CUR_MEM;
    if ((uint64_t)L.words * 4 > dst_size) return R_MESSAGE_TOO_LARGE;
    uint32_t n = L.ncopy + L.nmove, in[30], out[30];
    void *objs[30];
    int kinds[30];
    for (uint32_t i = 0; i < n; i++) {
        in[i] = m[L.handles_at + i];
        objs[i] = NULL;
        kinds[i] = 0;
        if (!in[i]) continue;                      /* handle 0 passes as 0 */
        int is_move = i >= L.ncopy;
        if (is_move && (in[i] == HZ_PSEUDO_THREAD || in[i] == HZ_PSEUDO_PROCESS)) return R_INVALID_HANDLE;
        objs[i] = handle_obj(from, in[i], &kinds[i]);
        if (!objs[i]) return R_INVALID_HANDLE;
    }
    for (uint32_t i = 0; i < n; i++) {
        out[i] = objs[i] ? handle_add_ref(kinds[i], objs[i]) : 0;
        if (objs[i] && !out[i]) {
            for (uint32_t j = 0; j < i; j++) if (out[j]) close_handle(from, out[j]);
            return R_OUT_OF_HANDLES;
        }
    }
    for (uint32_t i = L.ncopy; i < n; i++) if (in[i]) handle_forget(in[i], kinds[i], objs[i]);   /* moved away */
    uint32_t *d = (uint32_t *)(uintptr_t)dst;
    if (d != m) memmove(d, m, (size_t)L.words * 4);
    if (L.send_pid) { d[L.pid_at] = (uint32_t)HZ_PROCESS_ID; d[L.pid_at + 1] = (uint32_t)(HZ_PROCESS_ID >> 32); }
    for (uint32_t i = 0; i < n; i++) d[L.handles_at + i] = out[i];
    return 0;
}

/* SendSync* to a session between guest threads (K held): queue and block until replied. */
static uint32_t ksession_send(HzThread *t, HzKSession *k, uint64_t buf, uint64_t size) {
    if (k->server_closed) return R_SESSION_CLOSED;
    if (k->nqueue == (int)(sizeof k->queue / sizeof k->queue[0])) return R_OUT_OF_RESOURCE;
    t->ipc_buf = buf;
    t->ipc_size = size;
    k->queue[k->nqueue++] = t;
    if (ksession_signaled(k)) wake_sync_waiters(k);
    t->nsync = 0;
    return block(t, -1);
}

static void svc_send_sync(HzThread *t, NxCpu *s, uint32_t imm, HzKSession *k) {
    uint64_t buf = t->tls, size = 0x100;
    if (imm == 0x22) {
        buf = s->x[0];
        size = s->x[1];
        if (buf & 0xFFF) { s->x[0] = R_INVALID_ADDRESS; return; }
        if (!size || (size & 0xFFF)) { s->x[0] = R_INVALID_SIZE; return; }
        if (buf + size < buf || !guest_range_ok(buf, size, HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_CUR_MEM; return; }
    }
    s->x[0] = ksession_send(t, k, buf, size);
}

/* the server's reply to the request k serves (ReplyAndReceive's first half) */
static uint32_t ksession_reply(HzThread *t, HzKSession *k, uint64_t buf, uint64_t size) {
    HzThread *w = k->serving;
    if (!w) return R_INVALID_STATE;
    k->serving = NULL;
    if (k->nqueue) wake_sync_waiters(k);
    if (k->client_closed) {
        ksession_finish(w, R_SESSION_CLOSED);
        ksession_maybe_free(k);
        return R_SESSION_CLOSED;
    }
    ksession_finish(w, msg_transfer(t, buf, size, w->ipc_buf, w->ipc_size));
    return 0;
}

/* receive k's first queued request into t's buffer: 0, SessionClosed, or NotFound (try again) */
static uint32_t ksession_receive(HzKSession *k, uint64_t buf, uint64_t size) {
    if (k->client_closed) return R_SESSION_CLOSED;
    if (k->serving || !k->nqueue) return R_NOT_FOUND;
    HzThread *w = k->queue[0];
    memmove(k->queue, k->queue + 1, sizeof k->queue[0] * (size_t)--k->nqueue);
    uint32_t r = msg_transfer(w, w->ipc_buf, w->ipc_size, buf, size);
    if (r) { ksession_finish(w, r); return R_NOT_FOUND; }   /* the client gets the error */
    k->serving = w;
    return 0;
}

static int64_t ns_until(const struct timespec *end) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ns = (int64_t)(end->tv_sec - now.tv_sec) * 1000000000ll + (end->tv_nsec - now.tv_nsec);
    return ns > 0 ? ns : 0;
}

/* ReplyAndReceive(X1 = handles, W2 = count, W3 = reply target, X4 = timeout) -> W1 = index, the
 * message in the TLS; ReplyAndReceiveWithUserBuffer (0x44) takes the message buffer in X1/X2 and
 * the rest one register later (libnx svc.s), the buffer page-aligned (InvalidAddress), its size
 * a non-zero page multiple (InvalidSize), mapped RW (InvalidCurrentMemory). */
static void rr_wait(HzThread *t, NxCpu *s, void **objs, const int *kinds, int n, int64_t timeout, uint64_t buf,
                    uint64_t size);
static void svc_reply_and_receive(HzThread *t, NxCpu *s, int user_buffer) {
    uint64_t buf = t->tls, size = 0x100;
    const uint64_t *a = &s->x[1];
    if (user_buffer) {
        buf = s->x[1];
        size = s->x[2];
        if (buf & 0xFFF) { s->x[0] = R_INVALID_ADDRESS; return; }
        if (!size || (size & 0xFFF)) { s->x[0] = R_INVALID_SIZE; return; }
        if (buf + size < buf || !guest_range_ok(buf, size, HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_CUR_MEM; return; }
        a = &s->x[3];
    }
    uint64_t hp = a[0];
    int32_t n = (int32_t)a[1];
    uint32_t target = (uint32_t)a[2];
    int64_t timeout = (int64_t)a[3];
    if (n < 0 || n > 64) { s->x[0] = R_OUT_OF_RANGE; return; }
    if (n && !guest_range_ok(hp, 4ull * (uint64_t)n, HZ_PERM_R)) { s->x[0] = R_INVALID_POINTER; return; }
    void *objs[64];
    int kinds[64];
    for (int i = 0; i < n; i++) {
        uint32_t h = ((uint32_t *)(uintptr_t)hp)[i];
        objs[i] = h == HZ_PSEUDO_THREAD || h == HZ_PSEUDO_PROCESS ? NULL : handle_obj(t, h, &kinds[i]);
        if (!objs[i] || sync_signaled(kinds[i], objs[i]) < 0) { s->x[0] = R_INVALID_HANDLE; return; }
    }
    if (target) {
        int kind;
        HzKSession *k = handle_obj(t, target, &kind);
        if (!k || kind != H_KSERVER) { s->x[0] = R_INVALID_HANDLE; return; }
        uint32_t r = ksession_reply(t, k, buf, size);
        if (r) { s->x[0] = r; s->x[1] = (uint64_t)-1; return; }
    }
    sync_hold(objs, kinds, n, +1);
    rr_wait(t, s, objs, kinds, n, timeout, buf, size);
    sync_hold(objs, kinds, n, -1);
}

static void rr_wait(HzThread *t, NxCpu *s, void **objs, const int *kinds, int n, int64_t timeout, uint64_t buf,
                    uint64_t size) {
    struct timespec end;
    if (timeout > 0) deadline_in(&end, timeout);
    for (;;) {
        int idx = -1;
        for (int i = 0; i < n && idx < 0; i++) if (sync_signaled(kinds[i], objs[i])) idx = i;
        if (idx < 0) {
            int64_t left = timeout < 0 ? -1 : timeout == 0 ? 0 : ns_until(&end);
            if (left == 0) { s->x[0] = R_TIMED_OUT; return; }
            if (t->wait_cancelled) { t->wait_cancelled = 0; s->x[0] = R_CANCELLED; s->x[1] = (uint64_t)-1; return; }
            memcpy(t->sync, objs, sizeof objs[0] * (size_t)n);
            t->nsync = n;
            t->sync_index = -1;
            t->cancellable = 1;
            uint32_t w = block(t, left);
            t->cancellable = 0;
            if (w) { s->x[0] = w; s->x[1] = (uint64_t)-1; return; }   /* TimedOut, Cancelled */
            continue;    /* something was signalled: look again (another thread may have taken it) */
        }
        uint32_t r = 0;
        if (kinds[idx] == H_KSERVER) {
            r = ksession_receive(objs[idx], buf, size);
            if (r == R_NOT_FOUND) continue;
        }
        s->x[0] = r;
        s->x[1] = (uint64_t)idx;
        return;
    }
}

/* a new session: a client handle, and a server handle unless it waits in `port` for AcceptSession */
static uint32_t session_new(HzKPort *port, uint32_t *server, uint32_t *client, int light) {
    HzKSession *k = calloc(1, sizeof *k);
    if (!k) return R_OUT_OF_RESOURCE;
    k->light = light;
    *server = port ? 0 : handle_add_ref(light ? H_LSERVER : H_KSERVER, k);
    *client = port || *server ? handle_add_ref(light ? H_LCLIENT : H_KCLIENT, k) : 0;
    if (!*client) {
        if (*server) handles[*server & 0x7FFF].obj = NULL;
        free(k);
        return R_OUT_OF_HANDLES;
    }
    if (port) {
        k->port = port;
        k->pending = 1;
        port->pending[port->npending++] = k;
        port->nsessions++;
    }
    return 0;
}

/* CreateSession(W2 = is_light, X3 = name) -> W1 = server, W2 = client */
static void svc_create_session(NxCpu *s) {
    uint32_t server = 0, client = 0, r = session_new(NULL, &server, &client, (uint32_t)s->x[2] != 0);
    s->x[0] = r;
    if (!r) { s->x[1] = server; s->x[2] = client; }
}

static HzKPort *port_new(int32_t max_sessions) {
    HzKPort *p = calloc(1, sizeof *p);
    if (p) p->max_sessions = max_sessions;
    return p;
}

/* a client connects through port p (ConnectToPort, ConnectToNamedPort) -> W1 = client session */
static void port_connect(NxCpu *s, HzKPort *p) {
    if (!p->nserver) { s->x[0] = R_PORT_CLOSED; return; }
    if (p->nsessions >= p->max_sessions || p->npending == HZ_PORT_QUEUE) { s->x[0] = R_OUT_OF_SESSIONS; return; }
    uint32_t server, client, r = session_new(p, &server, &client, 0);
    if (r) { s->x[0] = r; return; }
    wake_sync_waiters(p);
    s->x[0] = 0;
    s->x[1] = client;
}

/* a port name: up to 11 characters and a NUL in 12 bytes (0, InvalidPointer, OutOfRange) */
static uint32_t port_name(uint64_t addr, char out[12]) {
    for (int i = 0; i < 12; i++) {
        if (!guest_range_ok(addr + (uint64_t)i, 1, HZ_PERM_R)) return R_INVALID_POINTER;
        out[i] = *(const char *)(uintptr_t)(addr + (uint64_t)i);
        if (!out[i]) return 0;
    }
    return R_OUT_OF_RANGE;
}

static HzKPort **named_port(const char *name) {
    for (int i = 0; i < HZ_NAMED_PORTS; i++)
        if (named_ports[i] && !strcmp(named_ports[i]->name, name)) return &named_ports[i];
    return NULL;
}

/* Light sessions (CreateSession with is_light): W0 = handle, W1..W7 = the 7 words of the request
 * or reply, in and out (Atmosphère's light-IPC entry stores w1..w7 and loads them back).
 * SendSyncRequestLight (0x20) blocks until the reply; ReplyAndReceiveLight (0x42) first replies
 * when word 0 has bit 31 (KLightSession::ReplyFlag) set — SessionClosed if either end closed,
 * InvalidState with nothing received by this thread — then waits, without timeout, for the next
 * request (InvalidState when another thread already waits or serves; SessionClosed once an end
 * closed).  A light server session is no synchronization object. */
static void light_args_in(uint32_t *d, const NxCpu *s) { for (int i = 0; i < 7; i++) d[i] = (uint32_t)s->x[i + 1]; }
static void light_args_out(NxCpu *s, const uint32_t *d) { for (int i = 0; i < 7; i++) s->x[i + 1] = d[i]; }

static void svc_send_light(HzThread *t, NxCpu *s) {
    int kind;
    HzKSession *k = handle_obj(t, (uint32_t)s->x[0], &kind);
    if (!k || kind != H_LCLIENT) { s->x[0] = R_INVALID_HANDLE; return; }
    if (k->server_closed) { s->x[0] = R_SESSION_CLOSED; return; }
    if (k->nqueue == (int)(sizeof k->queue / sizeof k->queue[0])) { s->x[0] = R_OUT_OF_RESOURCE; return; }
    light_args_in(t->light, s);
    k->queue[k->nqueue++] = t;
    if (k->receiver) ksession_finish(k->receiver, 0);
    t->nsync = 0;
    s->x[0] = block(t, -1);
    light_args_out(s, t->light);
}

static void svc_reply_receive_light(HzThread *t, NxCpu *s) {
    int kind;
    HzKSession *k = handle_obj(t, (uint32_t)s->x[0], &kind);
    if (!k || kind != H_LSERVER) { s->x[0] = R_INVALID_HANDLE; return; }
    uint32_t d[7];
    light_args_in(d, s);
    if (d[0] & 0x80000000u) {
        if (k->client_closed || k->server_closed) { s->x[0] = R_SESSION_CLOSED; return; }
        if (!k->serving || k->served_by != t) { s->x[0] = R_INVALID_STATE; return; }
        memcpy(k->serving->light, d, sizeof d);
        ksession_finish(k->serving, 0);
        k->serving = NULL;
        k->served_by = NULL;
    }
    for (;;) {
        if (k->receiver || k->serving) { s->x[0] = R_INVALID_STATE; return; }
        if (k->client_closed || k->server_closed) { s->x[0] = R_SESSION_CLOSED; return; }
        if (k->nqueue) {
            HzThread *w = k->queue[0];
            memmove(k->queue, k->queue + 1, sizeof k->queue[0] * (size_t)--k->nqueue);
            k->serving = w;
            k->served_by = t;
            light_args_out(s, w->light);
            s->x[0] = 0;
            return;
        }
        if (t->wait_cancelled) { t->wait_cancelled = 0; s->x[0] = R_CANCELLED; return; }
        k->receiver = t;
        t->nsync = 0;
        t->cancellable = 1;
        uint32_t r = block(t, -1);
        t->cancellable = 0;
        k->receiver = NULL;
        if (r) { s->x[0] = r; ksession_maybe_free(k); return; }
    }
}

/* the in-process IPC SVCs (K held); 0x1F answers 1 when the name is no port of ours (the host's) */
static int svc_kipc(HzThread *t, NxCpu *s, uint32_t imm) {
    switch (imm) {
    case 0x1F: {  /* ConnectToNamedPort(X1 = name) */
        char name[12];
        if (port_name(s->x[1], name)) return 1;    /* the host's layer checks and answers it */
        HzKPort **p = named_port(name);
        if (!p) return 1;
        port_connect(s, *p);
        return 0;
    }
    case 0x40: svc_create_session(s); return 0;
    case 0x41: {  /* AcceptSession(W1 = server port) -> W1 = server session */
        int kind;
        HzKPort *p = handle_obj(t, (uint32_t)s->x[1], &kind);
        if (!p || kind != H_SPORT) { s->x[0] = R_INVALID_HANDLE; return 0; }
        if (!p->npending) { s->x[0] = R_NOT_FOUND; return 0; }
        HzKSession *k = p->pending[0];
        uint32_t h = handle_add_ref(H_KSERVER, k);
        if (!h) { s->x[0] = R_OUT_OF_HANDLES; return 0; }
        memmove(p->pending, p->pending + 1, sizeof p->pending[0] * (size_t)--p->npending);
        k->pending = 0;
        s->x[0] = 0;
        s->x[1] = h;
        return 0;
    }
    case 0x20: svc_send_light(t, s); return 0;
    case 0x42: svc_reply_receive_light(t, s); return 0;
    case 0x43: svc_reply_and_receive(t, s, 0); return 0;
    case 0x44: svc_reply_and_receive(t, s, 1); return 0;
    case 0x70: {  /* CreatePort(W2 = max sessions, W3 = is_light, X4 = name) -> W1 = server, W2 = client */
        int32_t max = (int32_t)s->x[2];
        if (max <= 0) { s->x[0] = R_OUT_OF_RANGE; return 0; }
        if ((uint32_t)s->x[3]) { s->x[0] = R_NOT_IMPLEMENTED; return 0; }
        HzKPort *p = port_new(max);
        uint32_t sh = p ? handle_add_ref(H_SPORT, p) : 0, ch = sh ? handle_add_ref(H_CPORT, p) : 0;
        if (!ch) {
            if (sh) close_handle(t, sh);
            else free(p);
            s->x[0] = p ? R_OUT_OF_HANDLES : R_OUT_OF_RESOURCE;
            return 0;
        }
        s->x[0] = 0;
        s->x[1] = sh;
        s->x[2] = ch;
        return 0;
    }
    case 0x71: {  /* ManageNamedPort(X1 = name, W2 = max sessions) -> W1 = server port */
        char name[12];
        int32_t max = (int32_t)s->x[2];
        uint32_t r = port_name(s->x[1], name);
        if (r) { s->x[0] = r; return 0; }
        if (max < 0) { s->x[0] = R_OUT_OF_RANGE; return 0; }
        HzKPort **slot = named_port(name);
        if (max == 0) {           /* deletes the name */
            if (!slot) { s->x[0] = R_NOT_FOUND; return 0; }
            HzKPort *p = *slot;
            *slot = NULL;
            p->name[0] = 0;
            kport_maybe_free(p);
            s->x[0] = 0;
            return 0;
        }
        if (slot) { s->x[0] = R_INVALID_STATE; return 0; }
        for (int i = 0; i < HZ_NAMED_PORTS && !slot; i++) if (!named_ports[i]) slot = &named_ports[i];
        if (!slot) { s->x[0] = R_OUT_OF_RESOURCE; return 0; }
        HzKPort *p = port_new(max);
        uint32_t sh = p ? handle_add_ref(H_SPORT, p) : 0;
        if (!sh) { free(p); s->x[0] = p ? R_OUT_OF_HANDLES : R_OUT_OF_RESOURCE; return 0; }
        memcpy(p->name, name, sizeof name);
        *slot = p;
        s->x[0] = 0;
        s->x[1] = sh;
        return 0;
    }
    case 0x72: {  /* ConnectToPort(W1 = client port) -> W1 = client session */
        int kind;
        HzKPort *p = handle_obj(t, (uint32_t)s->x[1], &kind);
        if (!p || kind != H_CPORT) { s->x[0] = R_INVALID_HANDLE; return 0; }
        port_connect(s, p);
        return 0;
    }
    }
    return 1;
}

/* CloseHandle: the handle goes; objects stay (mutex words may still name a thread, the other
 * end may hold an event, a service may still signal it); transfer memory returns to its owner. */
static uint32_t close_handle(HzThread *t, uint32_t h) {
    int kind;
    if (h == HZ_PSEUDO_THREAD || h == HZ_PSEUDO_PROCESS) return 0;
    void *o = handle_obj(t, h, &kind);
    if (!o) return R_INVALID_HANDLE;
    if (kind == H_TMEM && --((HzTmem *)o)->refs == 0) tmem_release(o);
    if (kind == H_CODEMEM && --((HzTmem *)o)->refs == 0) {
        HzTmem *c = o;
        region_put(c->addr, c->size, c->owner_type, c->owner_perm, 0);
        free(c);
    }
    if (kind == H_KSERVER || kind == H_LSERVER) ksession_close_server(o);
    if (kind == H_KCLIENT || kind == H_LCLIENT) ksession_close_client(o);
    if (kind == H_SPORT) kport_close_server(o);
    if (kind == H_CPORT && --((HzKPort *)o)->nclient == 0) kport_maybe_free(o);
    if (kind == H_SESSION && --((HzSession *)o)->refs == 0) {
        if (closed_head - closed_tail == HZ_CLOSED_RING) closed_tail++;
        closed_ids[closed_head++ % HZ_CLOSED_RING] = ((HzSession *)o)->id;
        free(o);
    }
    handles[h & 0x7FFF].obj = NULL;
    return 0;
}

void nx_hz_svc(NxCpu *s, uint32_t imm) {
    HzThread *t = current(s);
    int yielding = 0;
    pthread_mutex_lock(&K);
    switch (imm) {
    case 0x01: svc_set_heap_size(s); break;
    case 0x02: svc_set_memory_permission(s); break;
    case 0x03: svc_set_memory_attribute(s); break;
    case 0x04: svc_map_memory(s, 0); break;
    case 0x05: svc_map_memory(s, 1); break;
    case 0x06: svc_query_memory(s); break;
    case 0x2C: svc_map_physical(s, 0); break;
    case 0x2D: svc_map_physical(s, 1); break;
    case 0x07: {  /* ExitProcess */
        void nx_block_profile_write(void);  /* core/block_profile.c: a profile_gen build's counts */
        nx_block_profile_write();
        process_end(HZ_EXIT_PROCESS);
        park_forever();
        break;
    }
    case 0x08: svc_create_thread(t, s); break;
    case 0x09: {  /* StartThread */
        HzThread *o = handle_thread(t, (uint32_t)s->x[0]);
        if (!o) s->x[0] = R_INVALID_HANDLE;
        else if (o->state != T_CREATED) s->x[0] = R_INVALID_STATE;
        else s->x[0] = thread_start(o) ? R_OUT_OF_RESOURCE : 0;
        break;
    }
    case 0x0A:  /* ExitThread */
        thread_exit(t);
        pthread_mutex_unlock(&K);
        pthread_exit(NULL);
    case 0x0B: {  /* SleepThread */
        int64_t ns = (int64_t)s->x[0];
        if (ns <= 0) {
            yielding = 1;
        } else {
            t->sleeping = 1;
            block(t, ns);
        }
        break;
    }
    case 0x0C: {  /* GetThreadPriority */
        HzThread *o = handle_thread(t, (uint32_t)s->x[1]);
        if (!o) { s->x[0] = R_INVALID_HANDLE; break; }
        s->x[0] = 0;
        s->x[1] = (uint64_t)eff_prio(o);
        break;
    }
    case 0x0D: {  /* SetThreadPriority */
        HzThread *o = handle_thread(t, (uint32_t)s->x[0]);
        int prio = (int32_t)s->x[1];
        if (!o) { s->x[0] = R_INVALID_HANDLE; break; }
        if (prio < cfg.highest_priority || prio > cfg.lowest_priority || prio > 63) { s->x[0] = R_INVALID_PRIORITY; break; }
        o->base_prio = prio;
        s->x[0] = 0;
        break;
    }
    case 0x0E: {  /* GetThreadCoreMask */
        HzThread *o = handle_thread(t, (uint32_t)s->x[2]);
        if (!o) { s->x[0] = R_INVALID_HANDLE; break; }
        s->x[0] = 0;
        s->x[1] = (uint64_t)(int64_t)o->ideal_core;
        s->x[2] = o->affinity;
        break;
    }
    case 0x0F: svc_set_core_mask(t, s); break;
    case 0x10: s->x[0] = (uint64_t)t->core; break;   /* GetCurrentProcessorNumber */
    case 0x16: s->x[0] = close_handle(t, (uint32_t)s->x[0]); break;   /* CloseHandle */
    case 0x13: svc_map_shared(t, s, 0); break;
    case 0x14: svc_map_shared(t, s, 1); break;
    case 0x15: svc_create_transfer(t, s); break;
    case 0x51: svc_map_transfer(t, s, 0); break;
    case 0x4B: svc_create_code_memory(s); break;
    case 0x4C: svc_control_code_memory(t, s); break;
    case 0x52: svc_map_transfer(t, s, 1); break;
    case 0x73: svc_set_process_memory_permission(t, s); break;
    case 0x77: svc_map_process_code(t, s); break;
    case 0x78: svc_unmap_process_code(t, s); break;
    case 0x20: case 0x40: case 0x41: case 0x42: case 0x43: case 0x44: case 0x70: case 0x71: case 0x72:
        svc_kipc(t, s, imm);
        break;
    case 0x1F: case 0x21: case 0x22: {  /* ConnectToNamedPort, SendSyncRequest(WithUserBuffer) */
        if (imm == 0x1F && !svc_kipc(t, s, imm)) break;     /* a port registered here */
        int kind;
        void *o = imm == 0x1F ? NULL : handle_obj(t, (uint32_t)(imm == 0x21 ? s->x[0] : s->x[2]), &kind);
        if (o && kind == H_KCLIENT) { svc_send_sync(t, s, imm, o); break; }
        if (!ipc_fn) { crash_report(t, imm, 0, 0, 0); park_forever(); }
        pthread_mutex_unlock(&K);
        ipc_fn(s, imm);
        pthread_mutex_lock(&K);
        break;
    }
    case 0x24: {  /* GetProcessId(handle): a process or thread handle */
        int kind;
        handle_obj(t, (uint32_t)s->x[1], &kind);
        if (kind != H_PROCESS && kind != H_THREAD) { s->x[0] = R_INVALID_HANDLE; break; }
        s->x[0] = 0;
        s->x[1] = HZ_PROCESS_ID;
        break;
    }
    case 0x25: {  /* GetThreadId(handle) */
        HzThread *o = handle_thread(t, (uint32_t)s->x[1]);
        if (!o) { s->x[0] = R_INVALID_HANDLE; break; }
        s->x[0] = 0;
        s->x[1] = HZ_FIRST_THREAD_ID + (uint64_t)(o->handle & 0x7FFF);
        break;
    }
    case 0x28:   /* ReturnFromException: no user exception is ever delivered here, so there is
                  * none to leave; the process ends with a report (as a failed handler does) */
        crash_report(t, 0x28, s->x[0], 0, 0);
        park_forever();
        break;
    case 0x11: {  /* SignalEvent(writable handle) */
        HzEvent *e = handle_event((uint32_t)s->x[0], H_EVENT_W);
        if (!e) { s->x[0] = R_INVALID_HANDLE; break; }
        if (!e->signaled) { e->signaled = 1; wake_sync_waiters(e); }
        s->x[0] = 0;
        break;
    }
    case 0x12: {  /* ClearEvent(either handle) */
        HzEvent *e = handle_event((uint32_t)s->x[0], H_EVENT_W);
        if (!e) e = handle_event((uint32_t)s->x[0], H_EVENT_R);
        if (!e) { s->x[0] = R_INVALID_HANDLE; break; }
        e->signaled = 0;
        s->x[0] = 0;
        break;
    }
    case 0x17: {  /* ResetSignal(readable handle): clears, InvalidState when not signalled */
        HzEvent *e = handle_event((uint32_t)s->x[0], H_EVENT_R);
        if (!e) { s->x[0] = R_INVALID_HANDLE; break; }
        s->x[0] = e->signaled ? 0 : R_INVALID_STATE;
        e->signaled = 0;
        break;
    }
    case 0x45: {  /* CreateEvent -> W1 writable, W2 readable */
        HzEvent *e = calloc(1, sizeof *e);
        uint32_t w = e ? handle_new_of(H_EVENT_W, e) : 0, r = w ? handle_new_of(H_EVENT_R, e) : 0;
        if (!r) {
            if (w) handles[w & 0x7FFF].obj = NULL;
            free(e);
            s->x[0] = R_OUT_OF_HANDLES;
            break;
        }
        s->x[0] = 0;
        s->x[1] = w;
        s->x[2] = r;
        break;
    }
    case 0x18: svc_wait_sync(t, s); break;
    case 0x19: {  /* CancelSynchronization(W0 thread): ends its cancellable wait with Cancelled, or
                   * makes its next one end so at once (Atmosphère KThread::WaitCancel) */
        HzThread *o = handle_thread(t, (uint32_t)s->x[0]);
        if (!o) { s->x[0] = R_INVALID_HANDLE; break; }
        if (o->state == T_BLOCKED && o->cancellable) {
            o->wait_cancelled = 0;
            o->wait_result = R_CANCELLED;
            o->sync_index = -1;
            make_ready(o);
        } else {
            o->wait_cancelled = 1;
        }
        s->x[0] = 0;
        break;
    }
    case 0x1A: {  /* ArbitrateLock(owner, addr, tag) */
        uint64_t addr = s->x[1];
        uint32_t owner_h = (uint32_t)s->x[0], tag = (uint32_t)s->x[2];
        if (addr & 3) { s->x[0] = R_INVALID_ADDRESS; break; }
        if (!guest_range_ok(addr, 4, HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_CUR_MEM; break; }
        if (__atomic_load_n(word(addr), __ATOMIC_ACQUIRE) != (owner_h | HZ_WAITERS)) { s->x[0] = 0; break; }
        HzThread *owner = handle_thread(t, owner_h);
        if (!owner || owner == t) { s->x[0] = R_INVALID_HANDLE; break; }
        t->wait_owner = owner;
        t->wait_mutex = addr;
        t->wait_tag = tag;
        s->x[0] = block(t, -1);
        break;
    }
    case 0x1B: {  /* ArbitrateUnlock(addr) */
        uint64_t addr = s->x[0];
        if (addr & 3) { s->x[0] = R_INVALID_ADDRESS; break; }
        if (!guest_range_ok(addr, 4, HZ_PERM_R | HZ_PERM_W)) { s->x[0] = R_INVALID_CUR_MEM; break; }
        mutex_release(t, addr);
        s->x[0] = 0;
        break;
    }
    case 0x1C: {  /* WaitProcessWideKeyAtomic(mutex, key, tag, timeout) */
        uint64_t maddr = s->x[0], key = s->x[1];
        int64_t timeout = (int64_t)s->x[3];
        if ((maddr & 3) || (key & 3)) { s->x[0] = R_INVALID_ADDRESS; break; }
        if (!guest_range_ok(maddr, 4, HZ_PERM_R | HZ_PERM_W) || !guest_range_ok(key, 4, HZ_PERM_R | HZ_PERM_W)) {
            s->x[0] = R_INVALID_CUR_MEM;
            break;
        }
        s->x[0] = cv_wait(t, maddr, key, (uint32_t)s->x[2], timeout);
        break;
    }
    case 0x1D: {  /* SignalProcessWideKey(key, count) */
        cv_signal(s->x[0], (int32_t)s->x[1]);
        s->x[0] = 0;
        break;
    }
    case 0x1E: s->x[0] = nx_counter(); break;   /* GetSystemTick */
    case 0x26:  /* Break(reason, info, size) */
        if (s->x[0] & 0x80000000u) { s->x[0] = 0; break; }   /* a notification only */
        crash_report(t, 0x26, s->x[0], s->x[1], s->x[2]);
        park_forever();
        break;
    case 0x27: {  /* OutputDebugString(text, size) */
        uint64_t p = s->x[0], n = s->x[1];
        if (n && !guest_range_ok(p, n, HZ_PERM_R)) { s->x[0] = R_INVALID_CUR_MEM; break; }
        while (n) {
            ssize_t w = write(cfg.debug_fd, (const void *)(uintptr_t)p, n);
            if (w <= 0) break;
            p += (uint64_t)w;
            n -= (uint64_t)w;
        }
        s->x[0] = 0;
        break;
    }
    case 0x29: svc_get_info(t, s); break;
    case 0x34: svc_wait_for_address(t, s); break;
    case 0x35: svc_signal_to_address(s); break;
    default:
        crash_report(t, imm, 0, 0, 0);
        park_forever();
    }
    maybe_yield(t, yielding);
    pthread_mutex_unlock(&K);
}

/* ---- preemption at indirect calls, host calls ---------------------------------------------- */
static void preempt_hook(NxCpu *s) {
    HzThread *t = current(s);
    int c = t->core;               /* read without the lock: a hint, checked again under it */
    if (c < 0 || !(preempt_cores >> c & 1)) return;
    pthread_mutex_lock(&K);
    maybe_yield(t, 0);
    pthread_mutex_unlock(&K);
}

/* Whether [addr, addr + len) is mapped with perm (host functions check guest pointers). */
int nx_hz_range_ok(uint64_t addr, uint64_t len, uint32_t perm) {
    pthread_mutex_lock(&K);
    int ok = guest_range_ok(addr, len, perm);
    pthread_mutex_unlock(&K);
    return ok;
}

/* A host function about to do host work (file I/O, waiting on the host, long copies) gives
 * its core back, so guest threads keep running meanwhile; nx_hz_host_end queues it for a core
 * again (priority order, like any wake-up). */
void nx_hz_host_begin(NxCpu *s) {
    HzThread *t = current(s);
    pthread_mutex_lock(&K);
    t->state = T_HOST;
    release_core(t);
    pthread_mutex_unlock(&K);
}

void nx_hz_host_end(NxCpu *s) {
    HzThread *t = current(s);
    pthread_mutex_lock(&K);
    make_ready(t);
    wait_for_core(t, NULL);
    pthread_mutex_unlock(&K);
}

/* The end of every host call: the same scheduling point as the end of an SVC. */
void nx_hz_host_yield(NxCpu *s) {
    HzThread *t = current(s);
    pthread_mutex_lock(&K);
    maybe_yield(t, 0);
    pthread_mutex_unlock(&K);
}

/* A host function failed (a guest error it cannot answer with a result code, or a bug): the
 * process ends with a crash report at the call site; `index` names the function for the runner. */
void nx_hz_host_fault(NxCpu *s, uint32_t index) {
    HzThread *t = current(s);
    pthread_mutex_lock(&K);
    if (t->state == T_HOST) { make_ready(t); }
    t->cpu.pc = t->cpu.x[30];          /* crash.pc = the call instruction */
    crash_report(t, HZ_CRASH_HOST, index, 0, 0);
    park_forever();
}

/* The IPC layer could not serve a request (an unserved service or command with
 * cpu_host.ipc_unknown = fatal, or a bug of ours): crash report at the SVC; `index` names the
 * reason for the runner (registry.describe_fault). */
void nx_hz_ipc_fault(NxCpu *s, uint32_t index) {
    HzThread *t = current(s);
    pthread_mutex_lock(&K);
    crash_report(t, HZ_CRASH_HOST, index, 0, 0);
    park_forever();
}

/* ---- start-up: what rtld does after relocating --------------------------------------------- */
static HzBoot boot;
static int inits_done;

/* Call guest function `fn` from host code on the calling guest thread and return its X0.  The
 * return address is a sentinel no code lives at: a guest that leaves some other way (a
 * longjmp out of an initialiser) is a crash report. */
static uint64_t call_guest(NxCpu *s, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3) {
    uint64_t sentinel = boot.boot_slot + 8;
    s->x[0] = a0; s->x[1] = a1; s->x[2] = a2; s->x[3] = a3;
    s->x[30] = sentinel;
    s->pc = fn;
    nx_call_indirect(s);
    if (s->pc != sentinel) {
        HzThread *t = current(s);
        pthread_mutex_lock(&K);
        crash_report(t, HZ_CRASH_BOOT, fn, s->pc, 0);
        park_forever();
    }
    return s->x[0];
}

static void run_inits(NxCpu *s) {
    if (inits_done) return;
    inits_done = 1;
    for (uint32_t i = 0; i < boot.ninits; i++) call_guest(s, boot.inits[i], 0, 0, 0, 0);
}

static void host_return(NxCpu *s) { s->pc = s->x[30]; }

static void call_initializator(NxCpu *s) {
    uint64_t lr = s->x[30], sp = s->sp;
    run_inits(s);
    s->sp = sp;
    s->x[30] = lr;
    host_return(s);
}

static void notify_exception_handler_ready(NxCpu *s) { host_return(s); }

static void boot_main(NxCpu *s) {
    uint64_t handle = s->x[1], arg = s->x[0];
    if (boot.sdk_start) {
        call_guest(s, boot.sdk_start, handle, arg, boot.notify_slot, boot.initializator_slot);
    } else if (boot.nn_main) {
        const uint64_t before[] = {boot.init_libc0, 0, boot.init_libc1, boot.diag_startup, boot.init_sdk_module,
                                   boot.init_abort_observer, boot.init_startup, boot.init_libc2};
        for (unsigned i = 0; i < sizeof before / sizeof before[0]; i++) {
            if (i == 1) {
                if (boot.os_initialize) call_guest(s, boot.os_initialize, handle, arg, 0, 0);
                continue;       /* then rtld's notify_exception_handler_ready: nothing to do here */
            }
            if (before[i]) call_guest(s, before[i], 0, 0, 0, 0);
        }
        run_inits(s);
        call_guest(s, boot.nn_main, 0, 0, 0, 0);
        if (boot.finalize_sdk_module) call_guest(s, boot.finalize_sdk_module, 0, 0, 0, 0);
        if (boot.os_quick_exit) call_guest(s, boot.os_quick_exit, 0, 0, 0, 0);
    } else {
        run_inits(s);
        s->x[0] = arg;
        s->x[1] = handle;
        s->pc = boot.entry;         /* nx_run goes on at the program's own entry */
        return;
    }
    nx_svc(s, 0x07);                /* the SDK returned: ExitProcess, as rtld does */
}

static void os_thread_main(NxCpu *s);

/* The start-up slots are 16 bytes each and hold code at their first byte only: boot_slot + 8
 * is call_guest's return sentinel, notify_slot + 8 where every nn::os thread starts. */
static uint64_t os_thread_entry(void) { return boot.notify_slot ? boot.notify_slot + 8 : 0; }

int nx_hz_set_boot(const HzBoot *b) {
    boot = *b;
    if (boot.ninits > HZ_BOOT_MAX_INITS) return -1;
    if (nx_host_bind(boot.boot_slot, boot_main) || nx_host_bind(boot.notify_slot, notify_exception_handler_ready) ||
        nx_host_bind(boot.initializator_slot, call_initializator) || nx_host_bind(os_thread_entry(), os_thread_main))
        return -1;
    return 0;
}

/* ---- for horizon_os.c: the nn::os objects served by the host -------------------------------
 * The same threads, priorities, inheritance and wake order as the SVCs: nn::os mutexes are
 * guest words taken and handed over exactly as ArbitrateLock/Unlock do, condition variables
 * are the process-wide keys, and the other objects (events, semaphores, message queues) wait on
 * a key with wait_obj.  Every function here expects K held (nx_hzk_lock). */
void nx_hzk_lock(void) { pthread_mutex_lock(&K); }
void nx_hzk_unlock(void) { pthread_mutex_unlock(&K); }
HzThread *nx_hzk_self(NxCpu *s) { return current(s); }
uint32_t nx_hzk_handle(HzThread *t) { return t->handle; }
int nx_hzk_range_ok(uint64_t addr, uint64_t len, uint32_t perm) { return guest_range_ok(addr, len, perm); }

uint32_t nx_hzk_wait(HzThread *t, uint64_t key, uint64_t value, int64_t timeout_ns) {
    t->wait_obj = key;
    t->wait_value = value;
    return block(t, timeout_ns < 0 ? -1 : timeout_ns);
}

/* The waiter to wake first among those whose key lies in [lo, hi]: best effective priority,
 * then the earliest to start waiting. */
HzThread *nx_hzk_best_waiter(uint64_t lo, uint64_t hi) {
    HzThread *best = NULL;
    int bp = 0;
    for (int i = 0; i < nthreads; i++) {
        HzThread *w = threads[i];
        if (w->state != T_BLOCKED || !w->wait_obj || w->wait_obj < lo || w->wait_obj > hi) continue;
        int p = eff_prio(w);
        if (!best || better(w, p, w->wait_seq, best, bp, best->wait_seq)) { best = w; bp = p; }
    }
    return best;
}
uint64_t nx_hzk_waiter_key(HzThread *w) { return w->wait_obj; }
uint64_t nx_hzk_waiter_value(HzThread *w) { return w->wait_value; }
void nx_hzk_set_waiter_value(HzThread *w, uint64_t value) { w->wait_value = value; }
void nx_hzk_wake(HzThread *w) { w->wait_result = 0; make_ready(w); }

/* Take the mutex word at addr for t (ArbitrateLock's protocol, blocking while another holds
 * it, the holder inheriting t's priority); 0, InvalidHandle for a word naming no thread, or
 * InvalidCurrentMemory when the word is (no longer) writable guest memory. */
uint32_t nx_hzk_mutex_lock(HzThread *t, uint64_t addr) {
    for (;;) {
        if ((addr & 3) || !guest_range_ok(addr, 4, HZ_PERM_R | HZ_PERM_W)) return R_INVALID_CUR_MEM;
        uint32_t v = 0;
        if (__atomic_compare_exchange_n(word(addr), &v, t->handle, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 0;
        if ((v & ~HZ_WAITERS) == t->handle) return 0;       /* handed over to t */
        if (!(v & HZ_WAITERS) &&
            !__atomic_compare_exchange_n(word(addr), &v, v | HZ_WAITERS, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        HzThread *owner = handle_thread(NULL, v & ~HZ_WAITERS);
        if (!owner || owner == t) return R_INVALID_HANDLE;
        t->wait_owner = owner;
        t->wait_mutex = addr;
        t->wait_tag = t->handle;
        uint32_t r = block(t, -1);
        if (r) return r;
    }
}

void nx_hzk_mutex_unlock(HzThread *t, uint64_t addr) {
    uint32_t v = t->handle;
    if (!__atomic_compare_exchange_n(word(addr), &v, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        mutex_release(t, addr);     /* waiters: the best one gets the word */
}

uint32_t nx_hzk_cv_wait(HzThread *t, uint64_t mutex, uint64_t key, int64_t timeout_ns) {
    return cv_wait(t, mutex, key, t->handle, timeout_ns);
}
void nx_hzk_cv_signal(uint64_t key, int32_t count) { cv_signal(key, count); }
int nx_hzk_cv_waiting(uint64_t key) {
    for (int i = 0; i < nthreads; i++)
        if (threads[i]->state == T_BLOCKED && threads[i]->wait_key == key) return 1;
    return 0;
}

/* An nn::os thread: a kernel thread that starts at os_thread_main, which calls entry(arg) and
 * exits the thread when it returns.  *result: 0, or the kernel result CreateThread would give. */
HzThread *nx_hzk_os_thread_create(HzThread *creator, uint64_t entry, uint64_t arg, uint64_t stack_top, int prio,
                                  int core, uint64_t os_thread, uint32_t *result) {
    if (core == -2) core = cfg.default_core;
    if (core < cfg.min_core || core > cfg.max_core || core < 0 || core >= HZ_CORES) { *result = R_INVALID_CORE; return NULL; }
    if (prio < cfg.highest_priority || prio > cfg.lowest_priority || prio > 63) { *result = R_INVALID_PRIORITY; return NULL; }
    HzThread *n = os_thread_entry() ? thread_new(os_thread_entry(), 0, stack_top, prio, core) : NULL;
    if (!n) { *result = R_OUT_OF_RESOURCE; return NULL; }
    n->host_stack = creator->host_stack;
    n->os_entry = entry;
    n->os_arg = arg;
    n->os_thread = os_thread;
    *result = 0;
    return n;
}

static void os_thread_main(NxCpu *s) {
    HzThread *t = current(s);
    call_guest(s, t->os_entry, t->os_arg, 0, 0, 0);
    pthread_mutex_lock(&K);
    thread_exit(t);
    pthread_mutex_unlock(&K);
    pthread_exit(NULL);
}

int nx_hzk_thread_start(HzThread *t) { return t->state == T_CREATED ? thread_start(t) : -1; }
int nx_hzk_thread_started(HzThread *t) { return t->state != T_CREATED; }

/* t waits until o has exited (as WaitSynchronization on o's handle) */
uint32_t nx_hzk_thread_join(HzThread *t, HzThread *o) {
    if (o->state == T_EXITED) return 0;
    t->sync[0] = o;
    t->nsync = 1;
    t->sync_index = -1;
    return block(t, -1);
}

HzThread *nx_hzk_thread_by_os(uint64_t os_thread) {
    for (int i = 0; os_thread && i < nthreads; i++)
        if (threads[i]->os_thread == os_thread) return threads[i];
    return NULL;
}
uint64_t nx_hzk_os(HzThread *t) { return t->os_thread; }
int nx_hzk_os_host(HzThread *t) { return t->os_host; }
void nx_hzk_set_os(HzThread *t, uint64_t os_thread, int host_record) {
    t->os_thread = os_thread;
    t->os_host = host_record;
}

int nx_hzk_priority(HzThread *t, int effective) { return effective ? eff_prio(t) : t->base_prio; }
int nx_hzk_priority_ok(int prio) { return prio >= cfg.highest_priority && prio <= cfg.lowest_priority && prio <= 63; }

/* A new base priority: a ready thread may now take a core (or preempt its holder at the
 * holder's next scheduling point); the caller's own hand-over is the end of its host call. */
void nx_hzk_set_priority(HzThread *t, int prio) {
    t->base_prio = prio;
    schedule();
}

uint32_t nx_hzk_set_core_mask(HzThread *t, int32_t ideal, uint64_t mask) { return set_core_mask(t, ideal, mask); }
void nx_hzk_core_mask(HzThread *t, int32_t *ideal, uint64_t *mask) { *ideal = t->ideal_core; *mask = t->affinity; }
int nx_hzk_core(HzThread *t) { return t->core; }
void nx_hzk_yield(HzThread *t) { maybe_yield(t, 1); }

/* ---- the runner's side --------------------------------------------------------------- */
int nx_hz_init(const HzConfig *c) {
    cfg = *c;
    nx_counter_freq = 19200000ull;
    pthread_condattr_init(&cv_attr);
    pthread_condattr_setclock(&cv_attr, CLOCK_MONOTONIC);
    void *h = mmap((void *)(uintptr_t)cfg.heap_base, cfg.heap_size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (h == MAP_FAILED || h != (void *)(uintptr_t)cfg.heap_base) return -(h == MAP_FAILED ? errno : EEXIST);
    void *tl = mmap((void *)(uintptr_t)cfg.tls_base, cfg.tls_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (tl == MAP_FAILED || tl != (void *)(uintptr_t)cfg.tls_base) return -(tl == MAP_FAILED ? errno : EEXIST);
    region_put(cfg.tls_base, cfg.tls_size, HZ_MEM_THREAD_LOCAL, HZ_PERM_R | HZ_PERM_W, 0);
    nx_set_svc_handler(nx_hz_svc);
    nx_set_preempt_hook(preempt_hook);
    return 0;
}

uint32_t nx_hz_start_main(uint64_t entry, uint64_t stack_top, int32_t priority, int32_t core,
                          uint64_t host_stack_bytes) {
    pthread_mutex_lock(&K);
    HzThread *t = thread_new(entry, 0, stack_top, priority, core);
    uint32_t h = 0;
    if (t) {
        t->cpu.x[1] = t->handle;
        t->host_stack = host_stack_bytes;
        if (thread_start(t) == 0) h = t->handle;
    }
    pthread_mutex_unlock(&K);
    return h;
}

int nx_hz_wait_exit(void) {
    pthread_mutex_lock(&K);
    while (!exit_state) pthread_cond_wait(&exit_cv, &K);
    int r = exit_state;
    pthread_mutex_unlock(&K);
    return r;
}

void nx_hz_crash(HzCrash *out) {
    pthread_mutex_lock(&K);
    *out = crash;
    pthread_mutex_unlock(&K);
}
