#include <stdio.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <arm_neon.h>
#define MRS(r) ({ uint64_t v; __asm__ volatile("mrs %0, " #r : "=r"(v)); v; })
__attribute__((target("dotprod"))) static uint32_t dot_neon(const uint8_t *a, const uint8_t *b, int n) {
    uint32x4_t acc = vdupq_n_u32(0);
    for (int i = 0; i < n; i += 16) acc = vdotq_u32(acc, vld1q_u8(a + i), vld1q_u8(b + i));
    int32x4_t sacc = vdupq_n_s32(0);
    for (int i = 0; i < n; i += 16) sacc = vdotq_laneq_s32(sacc, vld1q_s8((const int8_t *)a + i), vld1q_s8((const int8_t *)b + i), 3);
    return vaddvq_u32(acc) ^ (uint32_t)vaddvq_s32(sacc);
}
int main(void) {
    uint8_t a[256], b[256];
    for (int i = 0; i < 256; i++) { a[i] = (uint8_t)(i * 37 + 11); b[i] = (uint8_t)(255 - i * 13); }
    printf("dot %08x\n", dot_neon(a, b, 256));
    fprintf(stderr, "hwcap %lx hwcap2 %lx isar0 %llx isar1 %llx pfr0 %llx\n", getauxval(AT_HWCAP), getauxval(AT_HWCAP2),
            (unsigned long long)MRS(ID_AA64ISAR0_EL1), (unsigned long long)MRS(ID_AA64ISAR1_EL1),
            (unsigned long long)MRS(ID_AA64PFR0_EL1));
    return 0;
}
