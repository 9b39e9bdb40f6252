/* cpu_features.h — the one table of the AArch64 features the lifter implements.
 *
 * What a program is told (Linux AT_HWCAP/AT_HWCAP2, the ID registers it reads with MRS) must
 * say exactly what the lifted code does: a claimed feature must be lifted bit-exactly, or a
 * program that picks its code path from these bits runs instructions we cannot run.  Each row
 * names the Unicorn differential-test classes (recompiler/isa.py `cls`) that prove it;
 * tests/recompiler/test_cpu_features.py checks those classes exist, and recompiler/features.py
 * reads this table (the Linux personality's auxiliary vector, the native launcher).
 *
 * F(name, hwcap word (1 = AT_HWCAP, 2 = AT_HWCAP2, 0 = none), bit,
 *   ID register (ISAR0, ISAR1, PFR0), field shift, field value, "proving classes") */
#ifndef NX_CPU_FEATURES_H
#define NX_CPU_FEATURES_H

#define NX_CPU_FEATURES(F)                                                                     \
    F(EL0_AARCH64, 0, 0, PFR0, 0, 1, "")                                                       \
    F(EL1_AARCH64, 0, 0, PFR0, 4, 1, "")                                                       \
    F(FP, 1, 0, PFR0, 16, 1, "fp_arith fp_cvt fp_cmp fp_half")         /* FP with FP16 */      \
    F(ASIMD, 1, 1, PFR0, 20, 1, "simd_3same simd_2reg fp_half_vec")    /* AdvSIMD with FP16 */ \
    F(AES, 1, 3, ISAR0, 4, 2, "crypto_aes crypto_pmull")               /* AES + PMULL */       \
    F(PMULL, 1, 4, ISAR0, 4, 2, "crypto_pmull")                                                \
    F(SHA1, 1, 5, ISAR0, 8, 1, "crypto_sha")                                                   \
    F(SHA2, 1, 6, ISAR0, 12, 2, "crypto_sha crypto_sha512")            /* SHA256 + SHA512 */   \
    F(CRC32, 1, 7, ISAR0, 16, 1, "dp2")                                                        \
    F(ATOMICS, 1, 8, ISAR0, 20, 2, "ldst_atomic ldst_excl")            /* LSE incl. CAS(P) */  \
    F(FPHP, 1, 9, NONE, 0, 0, "fp_half fp_half_misc")                                          \
    F(ASIMDHP, 1, 10, NONE, 0, 0, "fp_half_vec")                                               \
    F(CPUID, 1, 11, NONE, 0, 0, "sysreg")                  /* ID registers readable at EL0 */  \
    F(ASIMDRDM, 1, 12, ISAR0, 28, 1, "simd_rdm simd_elem")             /* SQRDMLAH/SQRDMLSH */ \
    F(JSCVT, 1, 13, ISAR1, 12, 1, "fp_round")                                                  \
    F(LRCPC, 1, 15, ISAR1, 20, 2, "ldst_atomic")                      /* LDAPR (+ RCPC2) */   \
    F(SHA3, 1, 17, ISAR0, 32, 1, "crypto_sha3")                                                \
    F(ASIMDDP, 1, 20, ISAR0, 44, 1, "simd_dot")                        /* SDOT / UDOT */       \
    F(SHA512, 1, 21, NONE, 0, 0, "crypto_sha512")                                              \
    F(ILRCPC, 1, 26, ISAR1, 20, 2, "ldst_imm")                        /* LDAPUR / STLUR */    \
    F(FRINT, 2, 8, ISAR1, 32, 1, "fp_round")                           /* FRINT32/64 */

#endif
