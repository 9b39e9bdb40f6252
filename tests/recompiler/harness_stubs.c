/* harness_stubs.c — test-only stand-ins for the runtime entry points that lifted code calls,
 * used by the Unicorn differential test (tests/recompiler/test_unicorn.py).  NOT the real
 * runtime: each one-instruction function under test leaves through nx_jump / nx_call_ind
 * with s->pc already set to where the guest would go next, and these put the registers passed
 * in host registers (X0, X1, X30, SP, X29) into NxCpu and return s->pc, so the harness reads the whole
 * state there.  Entry points that a tested instruction must never reach mark the
 * NxCpu (s->thread, unused by lifted code) so the comparison reports them instead of passing. */
#include <stddef.h>
#include "lifted.h"

#define NXH_TRAP(s, code) ((s)->thread = (void *)(uintptr_t)(code))

NxRet nx_jump(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) {
    s->x[0] = a0; s->x[1] = a1; s->x[30] = a30; s->sp = asp; s->x[29] = a29;
    return (NxRet){ s->pc, a0 };
}
NxRet nx_call_ind(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) { return nx_jump(s, a0, a1, a30, asp, a29); }
void nx_unimplemented(NxCpu *s, u64 pc, u32 word) { (void)pc; (void)word; NXH_TRAP(s, 1); }
void nx_bad_resume(NxCpu *s) { NXH_TRAP(s, 2); }
void nx_svc(NxCpu *s, uint32_t imm) { (void)imm; NXH_TRAP(s, 3); }
void nx_brk(NxCpu *s, uint64_t pc, uint32_t imm) { (void)pc; (void)imm; NXH_TRAP(s, 4); }
uint64_t nx_sysreg_read(NxCpu *s, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2) {
    (void)op0; (void)op1; (void)crn; (void)crm; (void)op2; NXH_TRAP(s, 5); return 0;
}
void nx_sysreg_write(NxCpu *s, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t v) {
    (void)op0; (void)op1; (void)crn; (void)crm; (void)op2; (void)v; NXH_TRAP(s, 6);
}
uint64_t nx_counter(void) { return 0; }
/* read by each inline cache's check (lifted.h NX_IC); never raised here */
volatile int nx_preempt_pending;
uint64_t nx_counter_freq = 19200000;

/* The layout of NxCpu as this compiler lays it out, so Python reads the same bytes. */
const uint64_t nxh_layout[] = {
    sizeof(NxCpu), offsetof(NxCpu, x), offsetof(NxCpu, sp), offsetof(NxCpu, pc),
    offsetof(NxCpu, nzcv), offsetof(NxCpu, fpcr), offsetof(NxCpu, fpsr),
    offsetof(NxCpu, tpidr_el0), offsetof(NxCpu, tpidrro_el0), offsetof(NxCpu, resume),
    offsetof(NxCpu, excl_size), offsetof(NxCpu, v), offsetof(NxCpu, thread),
};
