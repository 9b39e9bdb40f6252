/* id_regs.h — the values an MRS of an identification register reads: the runtime's answer
 * (dispatch.c nx_sysreg_read) and the Unicorn harness's (tests/cpu_host/test_linux_busybox.py,
 * so a program run under Unicorn picks the same IFUNC variants and code paths as the lifted run,
 * which tests/recompiler/lockstep.py needs to compare the two).  MIDR says "generic Arm
 * implementer, no known core" so no core-specific routines are chosen; the ID_AA64 registers
 * are built from cpu_features.h, the one table of what the lifter implements. */
#ifndef NX_ID_REGS_H
#define NX_ID_REGS_H
#include <stdint.h>
#include "cpu_features.h"

/* an MRS key: op0 << 16 | op1 << 12 | CRn << 8 | CRm << 4 | op2 */
#define NX_SYSREG_KEY(op0, op1, crn, crm, op2) \
    ((uint32_t)(op0) << 16 | (uint32_t)(op1) << 12 | (uint32_t)(crn) << 8 | (uint32_t)(crm) << 4 | (uint32_t)(op2))

enum { NX_REG_NONE, NX_REG_ISAR0, NX_REG_ISAR1, NX_REG_PFR0 };
static inline uint64_t nx_id_value(int reg) {   /* folded to a constant per register */
    uint64_t v = 0;
#define NX_ID_FIELD(name, word, bit, r, shift, value, classes) \
    if (NX_REG_##r == reg) v |= (uint64_t)(value) << (shift);
    NX_CPU_FEATURES(NX_ID_FIELD)
#undef NX_ID_FIELD
    return v;
}

/* 1 and *v set for an identification or cache-geometry register (op0 = 3, op1 = 0, CRn = 0:
 * an ID register we do not list reads as 0, "feature absent"; CTR_EL0, DCZID_EL0); 0 for any
 * other register (counters, FPCR, TPIDR: the caller's own state). */
static inline int nx_id_register(uint32_t key, uint64_t *v) {
    switch (key) {
    case NX_SYSREG_KEY(3, 3, 0, 0, 7): *v = 4; return 1;               /* DCZID_EL0: 64-byte DC ZVA */
    case NX_SYSREG_KEY(3, 3, 0, 0, 1): *v = 0x8444c004ull; return 1;   /* CTR_EL0 */
    case NX_SYSREG_KEY(3, 0, 0, 0, 0): *v = 0x410f0000ull; return 1;   /* MIDR_EL1 */
    case NX_SYSREG_KEY(3, 0, 0, 0, 5): *v = 0x80000000ull; return 1;   /* MPIDR_EL1 */
    case NX_SYSREG_KEY(3, 0, 0, 4, 0): *v = nx_id_value(NX_REG_PFR0); return 1;   /* ID_AA64PFR0_EL1 */
    case NX_SYSREG_KEY(3, 0, 0, 6, 0): *v = nx_id_value(NX_REG_ISAR0); return 1;  /* ID_AA64ISAR0_EL1 */
    case NX_SYSREG_KEY(3, 0, 0, 6, 1): *v = nx_id_value(NX_REG_ISAR1); return 1;  /* ID_AA64ISAR1_EL1 */
    }
    if ((key >> 8) == (3u << 8)) { *v = 0; return 1; }   /* op0 3, op1 0, CRn 0: other ID registers */
    return 0;
}
#endif
