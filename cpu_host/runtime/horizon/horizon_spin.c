/* Is a host thread parked in an endless branch-to-self?  Some runtimes' start-up code ends in
 * `b .` after main returns; lifted, that is a `goto` to its own label, which the C compiler
 * turns into a jump to itself (x86-64 `jmp rel8 -2` EB FE, or `jmp rel32 -5` E9 FB FF FF FF).
 * A thread there can never do anything again.  The runner's watchdog (cpu_host/horizon/spin.py)
 * asks each running thread of the process, one at a time, with a signal: the handler reads
 * the interrupted host pc from its ucontext, looks at the instruction there and finds the
 * guest function whose lifted code holds it (nx_entries, as the fault report does).  Nothing
 * here changes a thread's state; SA_RESTART keeps interrupted waits going. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "nxrt.h"

static volatile sig_atomic_t probe_done;
static volatile uint64_t probe_pc, probe_guest;
static volatile int probe_spin, probe_lifted;
static int probe_signo;
static uintptr_t text_lo, text_hi;     /* game.so's executable segment */

static int find_text(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size; (void)data;
    uintptr_t want = (uintptr_t)&nx_entries[0];
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && lo <= want && want < lo + ph->p_memsz) mine = 1;
    }
    if (!mine) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            text_lo = info->dlpi_addr + ph->p_vaddr;
            text_hi = text_lo + ph->p_memsz;
        }
    }
    return 1;
}

int nx_lift_text_find(uintptr_t pc, uint64_t *guest, uintptr_t *hi);   /* lift_miss.c */

static void probe_handler(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)si;
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    const NxEntry *best = NULL;
    for (uint64_t i = 0; pc >= text_lo && pc + 5 <= text_hi && i < nx_entry_count; i++) {
        uintptr_t f = (uintptr_t)nx_entries[i].fn;
        if (f <= pc && (!best || f > (uintptr_t)best->fn)) best = &nx_entries[i];
    }
    const uint8_t *p = (const uint8_t *)pc;
    /* only lifted code is read: game.so's own (the runtime's objects come first in it, below
     * every lifted function; other libraries lie outside its executable segment) or an object
     * lifted at run time (lift_miss.c keeps their executable segments) */
    uint64_t loaded_guest = 0;
    uintptr_t loaded_hi = 0;
    int loaded = !best && nx_lift_text_find(pc, &loaded_guest, &loaded_hi) && pc + 5 <= loaded_hi;
    int lifted = best != NULL || loaded;
    probe_spin = lifted && ((p[0] == 0xEB && p[1] == 0xFE) ||
                            (p[0] == 0xE9 && p[1] == 0xFB && p[2] == 0xFF && p[3] == 0xFF && p[4] == 0xFF));
    probe_lifted = lifted;
    probe_pc = pc;
    probe_guest = best ? best->addr : loaded_guest;
    __atomic_store_n(&probe_done, 1, __ATOMIC_RELEASE);
}

/* Install the handler for `signo` (a real-time signal no one else uses); 0 or -1. */
int nx_spin_install(int signo) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = probe_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    probe_signo = signo;
    dl_iterate_phdr(find_text, NULL);
    if (!text_hi) return -1;
    return sigaction(signo, &sa, NULL);
}

/* Probe thread `tid` of this process: 1 at a jump to itself in lifted code, 0 in lifted code
 * elsewhere, 2 outside lifted code, -1 when it did not answer within `timeout_ms` (gone, or
 * the signal blocked).  `guest` gets the guest function holding the host pc.  One probe at a
 * time (the watchdog's single thread). */
int nx_spin_probe(int tid, int timeout_ms, uint64_t *guest) {
    __atomic_store_n(&probe_done, 0, __ATOMIC_RELEASE);
    if (syscall(SYS_tgkill, getpid(), tid, probe_signo) != 0) return -1;
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < timeout_ms; i++) {
        if (__atomic_load_n(&probe_done, __ATOMIC_ACQUIRE)) {
            if (guest) *guest = probe_guest;
            return probe_spin ? 1 : probe_lifted ? 0 : 2;
        }
        nanosleep(&ts, NULL);
    }
    return -1;
}
