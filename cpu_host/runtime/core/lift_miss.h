/* lift_miss.h — lift on miss (lift_miss.c): the runtime's overlay of functions lifted at run
 * time.  Apart from nxrt.h so that generated shards (which include nxrt.h through lifted.h) do
 * not depend on it: their cached objects stay valid when this changes. */
#ifndef NX_LIFT_MISS_H
#define NX_LIFT_MISS_H
#include "nxrt.h"

/* The function at target lifted at run time, or a fatal error (off, not code, a failed
 * compile); `how_fmt` names the branch for the report (a printf format of `from`: its pc, or X30). */
NxFn nx_lift_miss(NxCpu *s, const char *how_fmt, uint64_t from, uint64_t target, uint32_t *kind);
const NxEntry *nx_overlay_find(uint64_t addr);   /* a run-time lift's row, lock-free; NULL if none */
/* How to start the helper (python -m cpu_host.lift_on_miss BUNDLE ADDR): the bundle folder, the
 * interpreter, and what goes first on its PYTHONPATH.  Without it a miss is a fatal error. */
void nx_lift_setup(const char *bundle, const char *python, const char *pythonpath);
/* KEY=VALUE for the helper's environment where the process's own has no KEY (16 at most);
 * 0, or -1 when it is no KEY=VALUE or there is no room. */
int nx_lift_add_env(const char *kv);
uint64_t nx_lift_count(void);                  /* run-time lifts of this process */
/* Code generated at run time (the Linux personality's executable mappings, linux_syscalls.c):
 * a lifted function found the guest's bytes changed since it was lifted from them; the rows of
 * [lo, hi) leave the overlay and the calling thread's lookup cache (the lifted code then jumps
 * to its own address again, which lifts what is there now). */
void nx_generated_stale(NxCpu *s, uint64_t lo, uint64_t hi);
/* dispatch.c: addresses of [lo, hi) leave the calling thread's lookup cache */
void nx_thread_forget(NxCpu *s, uint64_t lo, uint64_t hi);
void nx_lift_report(int status);               /* the exit summary line (none without lifts) */

#endif
