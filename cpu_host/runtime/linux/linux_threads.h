/* linux_threads.h — guest threads of the Linux personality, shared by linux_syscalls.c (system
 * calls, signals) and linux_threads.c (clone of a thread, thread exit, thread ids).  Internal to
 * the personality: nothing outside linux_*.c includes it.
 *
 * Each guest thread runs on a host thread of its own with its own NxCpu; guest memory, file
 * descriptors, the working directory and signal dispositions are the process's and so shared,
 * as CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND share them (clone(2)).  What Linux keeps
 * per thread and the personality emulates is here: the signal mask, the signals recorded for
 * the thread, the alternate signal stack, clear_child_tid, the thread id the guest sees. */
#ifndef NX_LINUX_THREADS_H
#define NX_LINUX_THREADS_H
#include "nxrt.h"
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

typedef struct LxThread {
    NxCpu *cpu;                 /* its registers (the main thread's belongs to the runner) */
    long host_tid;              /* the host thread that runs it */
    long guest_tid;             /* what gettid answers: the process id for the main thread (as
                                 * on Linux and under qemu), else the host thread's id */
    int is_main;
    uint64_t clear_child_tid;   /* set_tid_address / CLONE_CHILD_CLEARTID: zeroed and woken at exit */
    /* signals (linux_syscalls.c "signals"): written by this thread and by its host handler,
     * which runs on this thread too */
    uint64_t mask;              /* the guest's blocked set (bit sig-1) */
    volatile uint64_t pend;     /* recorded, not yet delivered */
    int ready;                  /* pend & ~mask was non-empty: counted in the process's total */
    uint64_t altstack[3];       /* sigaltstack: sp, flags, size (per thread, as on Linux) */
    siginfo_t info[65];
    sigjmp_buf exit_jb;         /* exit(2) of a thread other than the last comes back here */
    int slot;                   /* its row in the table of live threads' ids and masks, or -1 */
} LxThread;

/* The calling host thread's guest thread; NULL on host threads that run no guest code. */
extern __thread LxThread *lx_self;
/* The main guest thread (signals another host thread takes are passed on to it). */
extern LxThread *lx_main;

/* Made by the first system call (init_once): the main thread's record. */
void lx_threads_init(NxCpu *s);
/* clone with CLONE_THREAD: the new thread's id, or -errno. */
long lx_clone_thread(NxCpu *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t tls, uint64_t ctid);
/* exit(2) of the calling thread: the process's exit when it is the last one. */
void lx_exit_thread(int status) __attribute__((noreturn));
/* The host thread id of guest thread id tid (they differ only for the main thread). */
long lx_host_tid_of(long tid);
/* The table of live guest threads' host ids and masks, which a host thread that runs no guest
 * code reads in a signal handler (lock-free): t's row made, its mask stored, its row cleared. */
void lx_slot_publish(LxThread *t);
void lx_slot_mask(LxThread *t);
void lx_slot_clear(LxThread *t);
/* The host id of a live guest thread that does not block guest signal g, or 0. */
long lx_taker_of(int g);
/* In a fork child: the calling thread is the only one, and the main thread. */
void lx_after_fork(void);

/* linux_syscalls.c's parts the thread code uses */
long lx_hsys(long n, long a, long b, long c, long d, long e, long f);
void lx_host_setmask(uint64_t guest_mask);
uint64_t lx_host_block_all(void);
void lx_host_restore(uint64_t old);
void lx_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lx_process_exit(int status) __attribute__((noreturn));   /* exit_group: hook, flush, end */
int lx_guest_mapped(uint64_t addr, uint64_t len);   /* guest memory the personality knows of */

#endif
