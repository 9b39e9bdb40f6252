/* host_calls.h — what the runtime offers a personality beyond nxrt.h: host functions bound at
 * guest addresses (SDK functions served by host code), a preemption hook run at indirect calls
 * and jumps, and running a guest thread on a host thread.  Kept out of nxrt.h on purpose: the
 * lifted code does not use these, and a change to nxrt.h rebuilds every shard. */
#ifndef NX_HOST_CALLS_H
#define NX_HOST_CALLS_H
#include "nxrt.h"

/* Bind fn at guest address addr: every indirect call or jump to addr runs fn, which must
 * behave as a lifted function (results in X0.., s->pc = the return address, s->x[30]).
 * 0, or -1 when the table is full or the arguments are bad.  Call before threads start. */
int nx_host_bind(uint64_t addr, NxHostFn fn);

typedef void (*NxPreemptHook)(NxCpu *s);
extern volatile int nx_preempt_pending;      /* set by the personality; read at indirect calls */
void nx_set_preempt_hook(NxPreemptHook h);

int nx_run_on_thread(NxCpu *s, uint64_t host_stack_bytes);
void nx_call_indirect(NxCpu *s);             /* host code: call s->pc as BLR does (registers in s; results back in s) */
void nx_thread_release(NxCpu *s);
void nx_thread_begin(NxCpu *s);             /* on a new host thread, before it runs s (crash report, FPCR) */

#endif
