/* linux_threads.c — guest threads of the Linux personality: clone(CLONE_THREAD ...) as musl's
 * and glibc's pthread_create issue it starts a host thread that runs the lifted code from the
 * clone's return with an NxCpu of its own; exit(2) of a thread, clear_child_tid, thread ids.
 *
 * Facts: clone(2), set_tid_address(2), exit(2), futex(2) and the kernel's uapi linux/sched.h
 * (Debian's linux-libc-dev) for the flags:
 *  - CLONE_THREAD needs CLONE_SIGHAND, which needs CLONE_VM (else EINVAL);
 *  - CLONE_SETTLS: the new thread's TLS register (TPIDR_EL0 on arm64) is the tls argument;
 *  - CLONE_PARENT_SETTID stores the new thread's id at ptid before clone returns, and
 *    CLONE_CHILD_SETTID at ctid before the thread runs; CLONE_CHILD_CLEARTID makes ctid the
 *    thread's clear_child_tid: at its exit the kernel stores 0 there and does FUTEX_WAKE of one
 *    waiter (pthread_join waits on it; musl points it at its thread-list lock);
 *  - the new thread's signal mask is the caller's; its alternate signal stack is cleared
 *    (CLONE_VM without CLONE_VFORK);
 *  - exit(2) ends the calling thread only; the process ends with its last thread, and then the
 *    exit status is the main thread's (a main thread that left first is a zombie whose status
 *    the parent's wait reports).
 * A guest thread runs on a host thread with its own large host stack (lifted code's C frames;
 * its guest stack is the clone's stack argument, in guest memory).  Futexes need no emulation:
 * guest addresses are host addresses, so the host kernel's futexes between host threads are the
 * guest's (FUTEX_WAIT/WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, bitsets, timeouts: forwarded).
 *
 * Not done: threads that do not share the file table, the working directory or the signal
 * handlers (CLONE_THREAD without CLONE_FILES/CLONE_FS is refused with EINVAL and a log line);
 * the robust-futex list is recorded, not handed to the kernel (a thread that dies holding a
 * robust mutex does not mark it); priority-inheritance futexes owned by the main thread (its
 * guest id, the process id, is not its host thread's id). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "linux_threads.h"
#include "host_calls.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* weak: test harnesses link the personality without dispatch.c (then no thread can start) */
#pragma weak nx_run
#pragma weak nx_thread_begin
#pragma weak nx_thread_release

#define A64_CSIGNAL 0xffull
#define A64_CLONE_VM 0x100ull
#define A64_CLONE_FS 0x200ull
#define A64_CLONE_FILES 0x400ull
#define A64_CLONE_SIGHAND 0x800ull
#define A64_CLONE_VFORK 0x4000ull
#define A64_CLONE_THREAD 0x10000ull
#define A64_CLONE_SYSVSEM 0x40000ull
#define A64_CLONE_SETTLS 0x80000ull
#define A64_CLONE_PARENT_SETTID 0x100000ull
#define A64_CLONE_CHILD_CLEARTID 0x200000ull
#define A64_CLONE_DETACHED 0x400000ull
#define A64_CLONE_CHILD_SETTID 0x1000000ull
/* what a thread may ask for; anything else with CLONE_THREAD is refused (namespaces, pidfd...) */
#define THREAD_FLAGS (A64_CLONE_VM | A64_CLONE_FS | A64_CLONE_FILES | A64_CLONE_SIGHAND | A64_CLONE_THREAD | \
                      A64_CLONE_SYSVSEM | A64_CLONE_SETTLS | A64_CLONE_PARENT_SETTID | A64_CLONE_CHILD_CLEARTID | \
                      A64_CLONE_DETACHED | A64_CLONE_CHILD_SETTID)
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1

/* Host stack of a guest thread other than the main one (the runner gives the main one 1 GiB):
 * reserved, and touched only as deep as lifted code's C frames go. */
#define THREAD_HOST_STACK (256ull << 20)

__thread LxThread *lx_self;
LxThread *lx_main;
static int live = 1;             /* guest threads that have not exited */
static int main_status = -1;     /* the main thread's exit status once it left before the others */

void lx_threads_init(NxCpu *s) {
    LxThread *t = calloc(1, sizeof *t);
    if (!t) {
        lx_log(30, "out of memory for the main thread's record");
        lx_process_exit(125);
    }
    t->cpu = s;
    t->is_main = 1;
    t->host_tid = lx_hsys(SYS_gettid, 0, 0, 0, 0, 0, 0);
    t->guest_tid = getpid();
    t->altstack[1] = 2;   /* SS_DISABLE */
    lx_main = t;
    lx_self = t;
    lx_slot_publish(t);   /* its mask: stored by signals_init */
}

#define SLOTS 4096
static struct { long tid; uint64_t mask; } slots[SLOTS];

void lx_slot_publish(LxThread *t) {
    t->slot = -1;
    for (int i = 0; i < SLOTS; i++) {
        long free_tid = 0;
        if (__atomic_compare_exchange_n(&slots[i].tid, &free_tid, -1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
            __atomic_store_n(&slots[i].mask, t->mask, __ATOMIC_SEQ_CST);
            __atomic_store_n(&slots[i].tid, t->host_tid, __ATOMIC_SEQ_CST);
            t->slot = i;
            return;
        }
    }
}
void lx_slot_mask(LxThread *t) {
    if (t && t->slot >= 0) __atomic_store_n(&slots[t->slot].mask, t->mask, __ATOMIC_SEQ_CST);
}
void lx_slot_clear(LxThread *t) {
    if (t && t->slot >= 0) __atomic_store_n(&slots[t->slot].tid, 0, __ATOMIC_SEQ_CST);
    if (t) t->slot = -1;
}
long lx_taker_of(int g) {
    for (int i = 0; i < SLOTS; i++) {
        long tid = __atomic_load_n(&slots[i].tid, __ATOMIC_SEQ_CST);
        if (tid > 0 && !(__atomic_load_n(&slots[i].mask, __ATOMIC_SEQ_CST) & (1ull << (g - 1)))) return tid;
    }
    return 0;
}

long lx_host_tid_of(long tid) {
    if (lx_main && tid == lx_main->guest_tid) return lx_main->host_tid;
    return tid;
}

void lx_after_fork(void) {
    LxThread *t = lx_self;
    live = 1;
    main_status = -1;
    for (int i = 0; i < SLOTS; i++) slots[i].tid = 0;   /* the other threads are not in the child */
    if (!t) return;
    t->is_main = 1;
    t->host_tid = lx_hsys(SYS_gettid, 0, 0, 0, 0, 0, 0);
    t->guest_tid = getpid();
    lx_main = t;
    lx_slot_publish(t);
}

/* What the new host thread gets from clone's caller, on the caller's stack until `done`. */
struct start {
    LxThread *t;
    uint64_t flags, ptid, ctid;
    long tid;
    int done;
};

static void *thread_main(void *p) {
    struct start *st = p;
    LxThread *t = st->t;
    lx_self = t;   /* first use of this thread's TLS here, not in a signal handler */
    t->host_tid = t->guest_tid = lx_hsys(SYS_gettid, 0, 0, 0, 0, 0, 0);
    int32_t tid = (int32_t)t->host_tid;
    if ((st->flags & A64_CLONE_PARENT_SETTID) && st->ptid) __atomic_store_n((int32_t *)st->ptid, tid, __ATOMIC_RELAXED);
    if ((st->flags & A64_CLONE_CHILD_SETTID) && st->ctid) __atomic_store_n((int32_t *)st->ctid, tid, __ATOMIC_RELAXED);
    st->tid = t->host_tid;
    __atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
    lx_hsys(SYS_futex, (long)&st->done, FUTEX_WAKE, 1, 0, 0, 0);   /* st is the caller's again */
    NxCpu *s = t->cpu;
    lx_slot_publish(t);
    if (nx_thread_begin) nx_thread_begin(s);   /* the fault report, the guest's FPCR */
    lx_host_setmask(t->mask);                  /* signals blocked until now (lx_clone_thread) */
    if (sigsetjmp(t->exit_jb, 0) == 0)
        nx_run(s);                             /* until lx_exit_thread longjmps back */
    if (nx_thread_release) nx_thread_release(s);
    free(s);
    free(t);
    return NULL;
}

long lx_clone_thread(NxCpu *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t tls, uint64_t ctid) {
    const uint64_t need = A64_CLONE_VM | A64_CLONE_SIGHAND;
    if ((flags & need) != need) return -EINVAL;   /* clone(2): THREAD needs SIGHAND needs VM */
    if ((flags & ~A64_CSIGNAL & ~THREAD_FLAGS) || !(flags & A64_CLONE_FS) || !(flags & A64_CLONE_FILES)) {
        lx_log(30, "clone of a thread with flags %#llx: only threads that share memory, files, the working "
               "directory and signal handlers are supported (flags %#llx at most): -EINVAL",
               (unsigned long long)flags, (unsigned long long)THREAD_FLAGS);
        return -EINVAL;
    }
    if (!nx_run) {
        lx_log(30, "clone of a thread: this build has no run loop to run it: -ENOSYS");
        return -ENOSYS;
    }
    LxThread *t = calloc(1, sizeof *t);
    NxCpu *c = aligned_alloc(64, (sizeof(NxCpu) + 63) & ~(size_t)63);
    if (!t || !c) {
        free(t);
        free(c);
        return -ENOMEM;
    }
    /* the caller's registers at the SVC (all in s: lifted SVC sites store them), the new
     * thread's own where clone says so; it goes on after the SVC with X0 = 0 */
    memcpy(c, s, sizeof *c);
    c->x[0] = 0;
    if (stack) c->sp = stack;
    if (flags & A64_CLONE_SETTLS) c->tpidr_el0 = tls;
    c->thread = NULL;
    c->resume = 0;
    c->excl_size = 0;
    t->cpu = c;
    t->mask = lx_self ? lx_self->mask : 0;
    t->altstack[1] = 2;   /* SS_DISABLE: cleared for CLONE_VM without CLONE_VFORK */
    if (flags & A64_CLONE_CHILD_CLEARTID) t->clear_child_tid = ctid;

    struct start st = {t, flags, ptid, ctid, 0, 0};
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, THREAD_HOST_STACK);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    __atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
    /* the new host thread starts with every signal blocked (it inherits this mask) and takes
     * the guest's mask once its record is in place */
    uint64_t old = lx_host_block_all();
    pthread_t h;
    int e = pthread_create(&h, &a, thread_main, &st);
    lx_host_restore(old);
    pthread_attr_destroy(&a);
    if (e) {
        __atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
        free(t);
        free(c);
        return e == EAGAIN ? -EAGAIN : -ENOMEM;
    }
    while (!__atomic_load_n(&st.done, __ATOMIC_ACQUIRE))
        lx_hsys(SYS_futex, (long)&st.done, FUTEX_WAIT, 0, 0, 0, 0);
    return st.tid;
}

void lx_exit_thread(int status) {
    LxThread *t = lx_self;
    lx_host_block_all();   /* no signal is taken by a thread that runs no more guest code */
    lx_slot_clear(t);
    /* the kernel ignores a clear_child_tid it cannot write (the thread's memory unmapped) */
    if (t && t->clear_child_tid && lx_guest_mapped(t->clear_child_tid, 4)) {
        __atomic_store_n((int32_t *)t->clear_child_tid, 0, __ATOMIC_SEQ_CST);
        lx_hsys(SYS_futex, (long)t->clear_child_tid, FUTEX_WAKE, 1, 0, 0, 0);
    }
    if (t && t->is_main) __atomic_store_n(&main_status, status, __ATOMIC_SEQ_CST);
    if (__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST) == 0) {
        int ms = __atomic_load_n(&main_status, __ATOMIC_SEQ_CST);
        lx_process_exit(ms >= 0 ? ms : status);
    }
    if (!t || t->is_main) {
        /* the main thread's host thread must not return (its runner would end the process):
         * it waits, every signal blocked, until the last thread ends the process */
        for (;;) lx_hsys(SYS_pause, 0, 0, 0, 0, 0, 0);
    }
    siglongjmp(t->exit_jb, 1);
}
