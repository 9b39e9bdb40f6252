/* dispatch.c — the address-keyed function table, the run loop, indirect calls and jumps,
 * fatal reports, system registers.  Linked into every game.so. */
#define _GNU_SOURCE 1   /* REG_RIP, for the crash report's host pc */
#include "lifted.h"
#include "lift_miss.h"
#include "host_calls.h"
#include "cpu_features.h"
#include "id_regs.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

uint64_t nx_counter_freq = 19200000ull;  /* overwritten by the personality (Linux: 1 GHz-free) */
void nx_die(NxCpu *s, const char *what, uint64_t pc, uint64_t extra) __attribute__((noreturn));
/* The core knows no personality: the one linked in sets its handler (Linux when game.so is
 * loaded, Horizon in nx_hz_init). */
static void no_personality(NxCpu *s, uint32_t imm) {
    nx_die(s, "SVC before the personality set its handler (nx_set_svc_handler)", s->pc, imm);
}
static NxSvcHandler svc_handler = no_personality;

void nx_set_svc_handler(NxSvcHandler h) { svc_handler = h; }
void nx_svc(NxCpu *s, uint32_t imm) { svc_handler(s, imm); }

void nx_die(NxCpu *s, const char *what, uint64_t pc, uint64_t extra) {
    fprintf(stderr, "nxrecomp: fatal: %s at guest pc %#llx (%#llx)\n", what,
            (unsigned long long)pc, (unsigned long long)extra);
    for (int i = 0; i < 31; i += 2)
        fprintf(stderr, "  x%-2d %016llx  x%-2d %016llx\n", i, (unsigned long long)s->x[i], i + 1,
                i + 1 < 31 ? (unsigned long long)s->x[i + 1] : (unsigned long long)s->sp);
    fprintf(stderr, "  sp  %016llx  nzcv %08llx\n", (unsigned long long)s->sp, (unsigned long long)s->nzcv);
    fflush(stderr);
    _exit(134);
}

/* A direct-mapped cache per guest thread (hung on s->thread) in front of the sorted table:
 * indirect calls (qsort's comparator, virtual calls, PLT stubs) hit the same few targets
 * again and again, and a binary search over ~20k entries costs ~15 dependent loads. */
#define NX_LOOKUP_CACHE 4096
typedef struct NxThread {
    struct { uint64_t addr; NxFn fn; uint64_t kind; } cache[NX_LOOKUP_CACHE];
    uint64_t ic_retargets;    /* misses of inline caches that held another target (nx_ic_fill) */
} NxThread;

static NxFn nx_lookup_table(uint64_t addr, uint32_t *kind);

/* The lifted function or resume point at addr (host bindings are not lifted code: see
 * run_host). */
NxFn nx_lookup(uint64_t addr, uint32_t *kind) { return nx_lookup_table(addr, kind); }

/* The calling guest thread's dispatch data, made on first use; NULL when out of memory. */
static inline NxThread *thread_of(NxCpu *s) {
    NxThread *t = (NxThread *)s->thread;
    if (UNLIKELY(!t)) {
        t = calloc(1, sizeof *t);
        s->thread = t;
    }
    return t;
}

static inline NxFn nx_lookup_cached(NxCpu *s, uint64_t addr, uint32_t *kind) {
    NxThread *t = thread_of(s);
    if (UNLIKELY(!t)) return nx_lookup_table(addr, kind);
    unsigned slot = (unsigned)(addr >> 2) & (NX_LOOKUP_CACHE - 1);
    if (LIKELY(t->cache[slot].addr == addr && t->cache[slot].fn)) {
        *kind = (uint32_t)t->cache[slot].kind;
        return t->cache[slot].fn;
    }
    NxFn f = nx_lookup_table(addr, kind);
    if (f) {
        t->cache[slot].addr = addr;
        t->cache[slot].fn = f;
        t->cache[slot].kind = *kind;
    }
    return f;
}

void nx_thread_forget(NxCpu *s, uint64_t lo, uint64_t hi) {
    NxThread *t = (NxThread *)s->thread;
    for (unsigned i = 0; t && i < NX_LOOKUP_CACHE; i++)
        if (t->cache[i].addr >= lo && t->cache[i].addr < hi) t->cache[i].addr = 0, t->cache[i].fn = NULL;
}

/* Free what dispatch.c hung on a guest thread's NxCpu (call when the thread exits). */
void nx_thread_release(NxCpu *s) {
    free(s->thread);
    s->thread = NULL;
}

/* Host functions bound at guest addresses (the personality's SDK served by host code): an
 * open-addressing table consulted before the lifted functions, so a host binding at the
 * address of a lifted export overrides it for every indirect call (PLT calls included).
 * Filled before guest threads start; read-only afterwards. */
#define NX_HOST_SLOTS 8192
static struct { uint64_t addr; NxHostFn fn; } host_fns[NX_HOST_SLOTS];
static unsigned host_count;

int nx_host_bind(uint64_t addr, NxHostFn fn) {
    if (!addr || !fn) return -1;
    unsigned i = (unsigned)(addr >> 2) * 2654435761u & (NX_HOST_SLOTS - 1);
    for (unsigned n = 0; n < NX_HOST_SLOTS; n++, i = (i + 1) & (NX_HOST_SLOTS - 1)) {
        if (host_fns[i].addr == addr) { host_fns[i].fn = fn; return 0; }
        if (!host_fns[i].addr) {
            if (host_count + 1 >= NX_HOST_SLOTS / 2) return -1;   /* keep probes short */
            host_fns[i].addr = addr;
            host_fns[i].fn = fn;
            host_count++;
            return 0;
        }
    }
    return -1;
}

static NxHostFn host_lookup(uint64_t addr) {
    unsigned i = (unsigned)(addr >> 2) * 2654435761u & (NX_HOST_SLOTS - 1);
    while (host_fns[i].addr) {
        if (host_fns[i].addr == addr) return host_fns[i].fn;
        i = (i + 1) & (NX_HOST_SLOTS - 1);
    }
    return NULL;
}

/* Preemption at indirect calls: a personality that wants a running thread to reach a
 * scheduling point raises nx_preempt_pending; the next indirect call or jump of any thread
 * calls the hook, which decides whether that thread hands its core over. */
volatile int nx_preempt_pending;
/* the same flag under a name that game.so binds to itself (one load, not the GOT's address first) */
extern volatile int nx_preempt_here __attribute__((alias("nx_preempt_pending"), visibility("hidden")));
static NxPreemptHook preempt_hook;
void nx_set_preempt_hook(NxPreemptHook h) { preempt_hook = h; }
#define NX_PREEMPT_POINT(s) do { if (UNLIKELY(nx_preempt_here) && preempt_hook) preempt_hook(s); } while (0)

/* A host function bound at s->pc, if there is one: run it with every register in NxCpu (it
 * leaves its return address in s->pc). */
static inline int run_host(NxCpu *s) {
    if (!host_count) return 0;
    NxHostFn h = host_lookup(s->pc);
    if (!h) return 0;
    s->resume = 0;
    h(s);
    return 1;
}

/* The row of addr: nx_entries (the build's), else the overlay of functions lifted at run time
 * (lift_miss.c; lock-free, its rows never move). */
static const NxEntry *entry_row(uint64_t addr) {
    uint64_t lo = 0, hi = nx_entry_count;
    while (lo < hi) {
        uint64_t mid = (lo + hi) >> 1;
        if (nx_entries[mid].addr < addr) lo = mid + 1; else hi = mid;
    }
    if (lo < nx_entry_count && nx_entries[lo].addr == addr) return &nx_entries[lo];
    return nx_overlay_find(addr);
}

static NxFn nx_lookup_table(uint64_t addr, uint32_t *kind) {
    const NxEntry *e = entry_row(addr);
    if (!e) return NULL;
    if (kind) *kind = e->kind;
    return e->fn;
}

void nx_fatal_unmapped(NxCpu *s, uint64_t pc, uint64_t target) {
    nx_die(s, "branch to an address with no lifted code", target, pc);
}

/* A dispatch miss: the function lifted at run time (lift_miss.c), or a fatal error naming why. */
static NxFn miss(NxCpu *s, const char *how, uint64_t from, uint32_t *kind) {
    NxFn f = nx_lift_miss(s, how, from, s->pc, kind);
    NxThread *t = thread_of(s);    /* the lookup cache takes it as nx_lookup_cached would */
    if (t) {
        unsigned slot = (unsigned)(s->pc >> 2) & (NX_LOOKUP_CACHE - 1);
        t->cache[slot].addr = s->pc;
        t->cache[slot].fn = f;
        t->cache[slot].kind = *kind;
    }
    return f;
}

/* Every register is in NxCpu here: a return to somewhere else came up as an NxRet, which
 * nx_enter stored. */
void nx_run(NxCpu *s) {
    for (;;) {
        NX_PREEMPT_POINT(s);   /* also the Linux personality's signal delivery point */
        if (run_host(s)) continue;
        uint32_t kind = 0;
        NxFn f = nx_lookup_cached(s, s->pc, &kind);
        if (UNLIKELY(!f))
            f = miss(s, "by a return, a jump or a thread's start reaching the run loop; x30 %#llx", s->x[30], &kind);
        s->resume = kind == NX_ENTRY_RESUME;
        nx_enter(s, f);
    }
}

/* Lifted code's way into the runtime (BLR, BR): X0, X1, X30, SP and X29 go to NxCpu first, where a
 * host function, a resume point's entry and the preemption hook read every register.  1 when
 * a host function bound at s->pc ran (its return address is then in s->pc). */
static inline int from_lifted(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) {
    s->x[0] = a0;
    s->x[1] = a1;
    s->x[30] = a30;
    s->sp = asp;
    s->x[29] = a29;
    NX_PREEMPT_POINT(s);
    return run_host(s);
}

/* The lifted function whose own entry is s->pc, where nothing else needs the registers in
 * NxCpu first: then it is entered as an inline cache's hit enters it, with the arguments as they
 * came (their NxCpu slots may be stale at a function's entry by design).  Only from the thread's
 * lookup cache, which holds no address with a host binding (every way that fills it, nx_run,
 * nx_call_ind, nx_jump and a miss's lift, runs a host function bound at its address first, and
 * bindings are made before threads start, or at addresses with no lifted code), and only a
 * function's own entry.  NULL otherwise: a preemption request, an address not cached yet, a
 * resume point (its twin reads NxCpu) take the general path below.  A site whose inline cache
 * holds another target comes here at each of its calls (QuickJS's call of C functions, SQLite's
 * record compare, busybox sort's comparators): the five stores of from_lifted, its host probe
 * and the five reloads of the arguments from NxCpu are gone. */
NXI NxFn direct_entry(NxCpu *s) {
    NxThread *t = (NxThread *)s->thread;
    uint64_t a = s->pc;
    if (UNLIKELY(nx_preempt_here) || UNLIKELY(!t)) return NULL;
    unsigned slot = (unsigned)(a >> 2) & (NX_LOOKUP_CACHE - 1);
    return t->cache[slot].addr == a && t->cache[slot].kind == NX_ENTRY_FUNC ? t->cache[slot].fn : NULL;
}

/* BLR to s->pc from lifted code: the general path (out of line, so that the direct one below
 * keeps no frame). */
static __attribute__((noinline)) NxRet call_ind_general(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC {
    if (from_lifted(s, a0, a1, a30, asp, a29)) NX_BACK;
    uint32_t kind = 0;
    NxFn f = nx_lookup_cached(s, s->pc, &kind);
    if (UNLIKELY(!f)) f = miss(s, "by a call, BLR at guest pc %#llx", s->x[30] - 4, &kind);
    s->resume = kind == NX_ENTRY_RESUME;
    return f(s, s->x[0], s->x[1], s->x[30], s->sp, s->x[29]);
}

NxRet nx_call_ind(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC {
    NxFn d = direct_entry(s);
    if (LIKELY(d)) {
        s->resume = 0;
        MUSTTAIL return d(s, a0, a1, a30, asp, a29);
    }
    MUSTTAIL return call_ind_general(s, a0, a1, a30, asp, a29);
}

/* The same for host code: every register in NxCpu before; after, what a return hands on (X0-X1,
 * V0-V3, X18, V8-V15 and the callee-saved registers: interproc._ret_mask). */
void nx_call_indirect(NxCpu *s) {
    uint64_t lr = s->x[30], sp = s->sp, fp = s->x[29];
    const NxEntry *e = entry_row(s->pc);   /* (a resume point's twin is no function: no fix-up) */
    int at_entry = !e || e->kind == NX_ENTRY_FUNC;
    NxRet r = nx_call_ind(s, s->x[0], s->x[1], lr, sp, fp);
    if (at_entry && r.pc == lr && nx_frame_writeback()) {   /* a normal return: SP and X29 as passed (nx_enter) */
        s->sp = sp;
        s->x[29] = fp;
    }
    s->pc = r.pc;
    s->x[0] = r.x0;
}

/* BR to s->pc from lifted code (it stored its registers first): the general path. */
static __attribute__((noinline)) NxRet jump_general(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC {
    if (from_lifted(s, a0, a1, a30, asp, a29)) NX_BACK;
    uint32_t kind = 0;
    NxFn f = nx_lookup_cached(s, s->pc, &kind);
    if (UNLIKELY(!f)) f = miss(s, "by a jump, BR out of lifted code; x30 %#llx", s->x[30], &kind);
    if (f && kind == NX_ENTRY_FUNC) {
        s->resume = 0;
        MUSTTAIL return f(s, s->x[0], s->x[1], s->x[30], s->sp, s->x[29]);
    }
    /* a resume point: return to the caller, whose return-address check sends control up to
     * nx_run (which enters it) */
    NX_BACK;
}

NxRet nx_jump(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC {
    NxFn d = direct_entry(s);
    if (LIKELY(d)) {
        s->resume = 0;
        MUSTTAIL return d(s, a0, a1, a30, asp, a29);
    }
    MUSTTAIL return jump_general(s, a0, a1, a30, asp, a29);
}

/* Misses of lifted code's inline caches (lifted.h NX_IC): an empty cache takes the target
 * s->pc when it is a lifted function's own entry with no host binding over it (bindings are
 * made before threads start).  A cache holding another target is retargeted on every
 * NX_IC_RETARGET-th such miss of the thread: a site whose steady target is not its first
 * (Lua's call of C functions, first taken by a library's initialisation, then math.sqrt at
 * every call) hits again after a few calls, while a site that alternates between targets pays
 * the table search only now and then.  Any interleaving of threads leaves some entry there, and
 * NX_IC checks its address before use. */
#define NX_IC_RETARGET 16
static __attribute__((noinline)) NxCpu *ic_fill_general(NxCpu *s, const NxEntry **ic, const NxEntry *cur, int full) {
    if (full == 2) {   /* a full cache of a thread without its dispatch data yet */
        NxThread *t = thread_of(s);
        if (!t || ++t->ic_retargets % NX_IC_RETARGET) return s;
        full = 1;
    }
    uint64_t addr = s->pc;
    if (host_count && host_lookup(addr)) return s;
    const NxEntry *e = entry_row(addr);   /* a run-time lift's row too: overlay rows never move */
    if (!e || e->kind != NX_ENTRY_FUNC) return s;
    if (full)
        __atomic_store_n(ic, e, __ATOMIC_RELEASE);
    else
        __atomic_compare_exchange_n(ic, &cur, e, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    return s;
}

/* (a cache holding another target, the common miss, returns at once: no frame) */
NxCpu *nx_ic_fill(NxCpu *s, const NxEntry **ic) {
    const NxEntry *cur = __atomic_load_n(ic, __ATOMIC_RELAXED);
    int full = cur && cur->addr != NX_IC_EMPTY;   /* empty: lifted.h's nx_ic_empty_* row */
    if (full) {
        NxThread *t = (NxThread *)s->thread;
        if (UNLIKELY(!t)) return ic_fill_general(s, ic, cur, 2);
        if (++t->ic_retargets % NX_IC_RETARGET) return s;
    }
    return ic_fill_general(s, ic, cur, full);
}

void nx_ifunc_miss(NxCpu *s, u64 stub_pc, u64 target) {
    nx_die(s, "IFUNC slot holds an address its resolver's recompile-time candidates do not include "
              "(recompile with NXRECOMP_RECOMPILER_IFUNC_STUBS=0)", stub_pc, target);
}
/* The guest would have branched into data: its registers were not stored (they are not
 * needed to report it, and storing them would keep them all live at every dispatch). */
void nx_bad_table_entry(NxCpu *s, uint64_t index, uint64_t target) {
    char what[128];
    snprintf(what, sizeof what, "branch to an address with no lifted code (entry %llu of a computed goto's "
             "table; registers below not current)", (unsigned long long)index);
    nx_die(s, what, target, index);
}
/* A BR whose table analysis found complete (every entry it may read, from memory the program
 * cannot write, is in the table) took another target: an analysis error, reported where the
 * general jump would have hidden it.  Registers were not stored (as above). */
void nx_table_miss(NxCpu *s, uint64_t br_pc, uint64_t target) {
    char what[160];
    snprintf(what, sizeof what, "computed goto at %#llx (0: one of the function's dispatches) left its complete "
             "jump table (an analysis error; registers below not current)", (unsigned long long)br_pc);
    nx_die(s, what, target, br_pc);
}
void nx_bad_resume(NxCpu *s) { nx_die(s, "resume at an address the function does not hold", s->pc, 0); }
/* A frame re-entered from NxCpu (a return to somewhere else) at a call site whose callee-saved
 * registers lived only in its C locals: the callee did not read them, so the site did not store
 * them (recompiler.elide_saves), and NxCpu holds no value of them to resume with.  A setjmp's
 * call site always stores them; this is a non-local return to another kind of site. */
void nx_elided_resume(NxCpu *s) {
    nx_die(s, "a non-local return resumed a frame at a call site that kept its callee-saved "
              "registers in host locals only (recompile with NXRECOMP_RECOMPILER_ELIDE_SAVES=0)", s->pc, 0);
}

/* The recompiler ends a call of a function it found never returns (no RET, no jump out through a
 * register, tail calls only to such functions) with this instead of the code after the call. */
void nx_noreturn_returned(NxCpu *s, uint64_t call_pc) {
    nx_die(s, "a function the recompiler found never returns returned to this call "
              "(recompile with NXRECOMP_RECOMPILER_NORETURN_CALLS=0)", call_pc, 0);
}

void nx_unimplemented(NxCpu *s, uint64_t pc, uint32_t word) {
    nx_die(s, "instruction the lifter does not implement", pc, word);
}

void nx_brk(NxCpu *s, uint64_t pc, uint32_t imm) { nx_die(s, "BRK/UDF (guest trap)", pc, imm); }

uint64_t nx_counter(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)((unsigned __int128)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) *
                      nx_counter_freq / 1000000000ull);
}

/* ID registers: what we report decides which variants glibc's IFUNC resolvers pick (id_regs.h,
 * shared with the Unicorn harness); the counters are the host's clock. */
uint64_t nx_sysreg_read(NxCpu *s, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2) {
    (void)s;
    uint32_t key = NX_SYSREG_KEY(op0, op1, crn, crm, op2);
    uint64_t v;
    if (nx_id_register(key, &v))
        return v;
    switch (key) {
    case NX_SYSREG_KEY(3, 3, 14, 0, 2): /* CNTVCT_EL0 */
    case NX_SYSREG_KEY(3, 3, 14, 0, 6): /* CNTVCTSS_EL0 */
        return nx_counter();
    case NX_SYSREG_KEY(3, 3, 14, 0, 0): return nx_counter_freq; /* CNTFRQ_EL0 */
    default: return 0; /* other registers: feature absent */
    }
}

void nx_sysreg_write(NxCpu *s, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t v) {
    (void)s; (void)op0; (void)op1; (void)crn; (void)crm; (void)op2; (void)v;
}

/* Crash report: a fault in lifted code (a bad guest pointer, or a lifter bug) prints the
 * faulting address, the guest function whose lifted code faulted and the guest state last
 * written back to NxCpu, then dies by the signal. */
#include <signal.h>
#include <string.h>
#include <ucontext.h>
static __thread NxCpu *nx_current;

/* The row of nx_entries whose host code starts closest below host address pc (a function's own
 * row before its resume points'), or NULL below all lifted code: the runtime's objects come
 * first in game.so.  Reads only the table, so it may run in a signal handler. */
static const NxEntry *nx_entry_of_host(uintptr_t pc) {
    const NxEntry *best = NULL;
    for (uint64_t i = 0; i < nx_entry_count; i++) {
        const NxEntry *e = &nx_entries[i];
        uintptr_t f = (uintptr_t)e->fn;
        if (f > pc) continue;
        if (!best || f > (uintptr_t)best->fn || (f == (uintptr_t)best->fn && e->kind == NX_ENTRY_FUNC))
            best = e;
    }
    return best;
}

static void nx_fault(int sig, siginfo_t *si, void *uc) {
    char buf[200];
    int n = snprintf(buf, sizeof buf, "nxrecomp: fatal: signal %d (%s) at address %p in lifted code\n", sig,
                     sig == SIGSEGV ? "segmentation fault" : sig == SIGBUS ? "bus error" : "fault", si->si_addr);
    if (write(2, buf, (size_t)n) < 0) {}
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    const NxEntry *e = nx_entry_of_host(pc);
    if (e)   /* s->pc is where control last left a function through the runtime, not here */
        n = snprintf(buf, sizeof buf, "  in the lifted code of %s %#llx (or of one inlined there; host pc %p, %#llx into it)\n",
                     e->kind == NX_ENTRY_FUNC ? "guest function" : "the guest function holding",
                     (unsigned long long)e->addr, (void *)pc, (unsigned long long)(pc - (uintptr_t)e->fn));
    else
        n = snprintf(buf, sizeof buf, "  host pc %p is below all lifted code (the runtime)\n", (void *)pc);
    if (write(2, buf, (size_t)n) < 0) {}
    if (nx_current) {
        NxCpu *s = nx_current;
        n = snprintf(buf, sizeof buf, "  last guest state written back: pc %#llx sp %#llx x30 %#llx\n",
                     (unsigned long long)s->pc, (unsigned long long)s->sp, (unsigned long long)s->x[30]);
        if (write(2, buf, (size_t)n) < 0) {}
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Run a guest thread on a host thread with a large stack: deep guest recursion runs on it. */
struct nx_start { NxCpu *s; sigset_t mask; };
static void *nx_thread_main(void *p) {
    NxCpu *s = ((struct nx_start *)p)->s;
    pthread_sigmask(SIG_SETMASK, &((struct nx_start *)p)->mask, NULL);   /* the creator's own */
    nx_current = s;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = nx_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    NX_FPCR_APPLY(s->fpcr);   /* the guest's rounding mode and FZ live in this thread's MXCSR */
    nx_run(s);
    return NULL;
}

/* A guest thread that a personality started on a host thread of its own (the Linux
 * personality's clone of a thread): the crash report knows its NxCpu, MXCSR holds its FPCR. */
void nx_thread_begin(NxCpu *s) {
    nx_current = s;
    NX_FPCR_APPLY(s->fpcr);
}

int nx_run_on_thread(NxCpu *s, uint64_t host_stack_bytes) {
    pthread_attr_t a;
    pthread_t t;
    struct nx_start st = {s};
    /* the waiting thread blocks every signal from before the guest thread exists (which takes
     * the mask this thread had): a signal sent to the process reaches the guest thread, as it
     * would a one-thread program, and waits in the kernel while the guest blocks it (the Linux
     * personality's signals) */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &st.mask);
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, host_stack_bytes);
    int ok = pthread_create(&t, &a, nx_thread_main, &st) == 0;
    if (ok) pthread_join(t, NULL);
    pthread_sigmask(SIG_SETMASK, &st.mask, NULL);
    return ok ? 0 : -1;
}

/* Lockstep debugging (recompiler.trace): each lifted function's entry appends a record
 * (entry, X0-X30, SP, NZCV, V0-V31) to $NXRECOMP_TRACE_FILE, to compare with Unicorn running the
 * same program (tests/recompiler/lockstep.py).  At a function's entry every register is in
 * NxCpu, so the records are the architectural state. */
#include <fcntl.h>
static int trace_fd = -2;
static uint64_t trace_left = 2000000;
void nx_trace_entry(NxCpu *s, uint64_t entry) {
    if (trace_fd == -2) {
        const char *p = getenv("NXRECOMP_TRACE_FILE");
        trace_fd = p ? open(p, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644) : -1;
        /* out of the guest's sight: a program that looks at its descriptors (a shell does) must
         * find the same ones as in the Unicorn run, which moves its trace file up the same way */
        if (trace_fd >= 0) {
            int hi = fcntl(trace_fd, F_DUPFD_CLOEXEC, 900);
            close(trace_fd);
            trace_fd = hi;
        }
    }
    if (trace_fd < 0 || !trace_left) return;
    trace_left--;
    uint64_t rec[34 + 64];
    rec[0] = entry;
    memcpy(&rec[1], s->x, 31 * 8);
    rec[32] = s->sp;
    rec[33] = s->nzcv;
    memcpy(&rec[34], s->v, 32 * 16);   /* V0-V31, each as its low and high 64 bits */
    if (write(trace_fd, rec, sizeof rec) < 0) trace_fd = -1;
}
