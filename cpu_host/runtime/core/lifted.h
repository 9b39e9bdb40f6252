/* lifted.h — helpers included by every generated shard.  Short names keep the generated C
 * small (compile time is the recompiler's main cost); each helper has exact A64 semantics. */
#ifndef NX_LIFTED_H
#define NX_LIFTED_H
#include "nxrt.h"
#include <string.h>

typedef uint8_t u8; typedef uint16_t u16; typedef uint32_t u32; typedef uint64_t u64;
typedef int8_t i8; typedef int16_t i16; typedef int32_t i32; typedef int64_t i64;
typedef unsigned __int128 u128; typedef __int128 i128;
#define NXI static inline __attribute__((always_inline))
/* Vector views of an NxVec for the integer NEON forms that have one (recompiler/lift/simd_vec.py):
 * clang turns these into SSE/AVX directly, where per-lane loops over the union's arrays are
 * left to its SLP vectorizer, which gives up on widening multiplies, narrows and permutes
 * (XXH3's UMLAL loop ran as scalar code).  NxV<lanes><u|i><bits>: 16 bytes; the 8-byte ones
 * are the halves a narrow or a widening form works on. */
#define NX_VT(T, E, N) typedef E T __attribute__((vector_size(N)))
NX_VT(NxV16u8, u8, 16); NX_VT(NxV16i8, i8, 16); NX_VT(NxV8u16, u16, 16); NX_VT(NxV8i16, i16, 16);
NX_VT(NxV4u32, u32, 16); NX_VT(NxV4i32, i32, 16); NX_VT(NxV2u64, u64, 16); NX_VT(NxV2i64, i64, 16);
NX_VT(NxV8u8, u8, 8); NX_VT(NxV8i8, i8, 8); NX_VT(NxV4u16, u16, 8); NX_VT(NxV4i16, i16, 8);
NX_VT(NxV2u32, u32, 8); NX_VT(NxV2i32, i32, 8); NX_VT(NxV2f64, double, 16); NX_VT(NxV4f32, float, 16);
#undef NX_VT
#define NXV(T, x) (*(T *)&(x))   /* an NxVec seen as vector type T (built with -fno-strict-aliasing) */
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MUSTTAIL __attribute__((musttail))
/* Every backward branch inside a function (a loop's back edge) is a compiler barrier: a guest
 * loop that polls memory another thread writes (`1: ldr w0, [x20, #8]; cmp w22, w0; b.ne 1b`, as
 * C-Thread-Pool's wait for its workers in nx.js) reloads it each time round, as the Arm memory
 * model promises (a store is eventually seen by every observer); without the barrier clang hoists
 * the plain load out of the loop and it never ends.  No instruction is emitted; values the guest
 * keeps in registers are C locals and stay in host registers. */
#define NX_LOOP_EDGE __asm__ volatile("" ::: "memory")
/* A computed goto through a function's dense label array (recompiler/lift/emitter.py
 * shared_table): slot (target - lo) / 4; rotating the offset right by 2 puts a misaligned
 * target's low bits on top, so it, like any target past the table, takes the last slot.
 * Empty slots are null and go to `miss` by a branch: a label whose address is taken is a
 * successor of every computed goto of the function for the C compiler, and the miss path
 * stores every register, which would keep all of them live at each dispatch. */
#define NX_JT_GO(tab, lo, slots, miss) do { u64 _ji = __builtin_rotateright64(_jt - (lo), 2); \
    void *_jp = (tab)[_ji < (slots) ? _ji : (slots)]; if (UNLIKELY(!_jp)) goto miss; goto *_jp; } while (0)

/* guest memory: guest address == host address; memcpy keeps unaligned access defined */
NXI u8  L8(u64 a)  { u8 v;  memcpy(&v, (void *)a, 1); return v; }
NXI u16 L16(u64 a) { u16 v; memcpy(&v, (void *)a, 2); return v; }
NXI u32 L32(u64 a) { u32 v; memcpy(&v, (void *)a, 4); return v; }
NXI u64 L64(u64 a) { u64 v; memcpy(&v, (void *)a, 8); return v; }
NXI u128 L128(u64 a) { u128 v; memcpy(&v, (void *)a, 16); return v; }
NXI void S8(u64 a, u8 v)   { memcpy((void *)a, &v, 1); }
NXI void S16(u64 a, u16 v) { memcpy((void *)a, &v, 2); }
NXI void S32(u64 a, u32 v) { memcpy((void *)a, &v, 4); }
NXI void S64(u64 a, u64 v) { memcpy((void *)a, &v, 8); }
/* A Q register's load and store as one 16-byte vector move of the V local seen as a vector:
 * through a u128 clang moves the value in two general registers, 8 bytes at a time, and a load
 * of 8 bytes that two earlier stores wrote parts of waits for both to retire (zstd's match
 * copy, LDR Q / STR Q).  The lifter writes LV128/SV128 on the NxVec; the emitter turns them into
 * these (emitter._vector_writes): an NxVec passed or returned by value is a u128 to clang too. */
typedef u64 NxV2u64u __attribute__((vector_size(16), aligned(1)));
/* The load is two 8-byte loads joined in the vector register: x86 forwards a store to a load
 * only when the load lies within that one store, so a 16-byte load of bytes that two 8-byte
 * stores had just written (an STP X / two STR X, then LDR Q: QuickJS builds each 16-byte
 * JSValue with two stores and copies it with LDR Q / STR Q) waits until both stores leave the
 * store buffer, where each half forwards from its own store, and from a 16-byte store as well
 * (zstd's and Brotli's 16-byte copies).  The empty asm hides that the halves are adjacent, or
 * clang's instruction selection joins them into one 16-byte load again; the loads stay plain C,
 * so clang still takes a value stored earlier in the same function without a load.  Costs one
 * shuffle per Q load; -DNX_LQ128_WHOLE gives the one 16-byte load back (bench/corpus.py
 * --ab-define NX_LQ128_WHOLE runs both). */
#if defined(__x86_64__) && !defined(NX_LQ128_WHOLE)
NXI NxV2u64 LQ128(u64 a) {
    NxV2u64 lo = { L64(a), 0 }, hi = { L64(a + 8), 0 };
    __asm__("" : "+x"(hi));
    return __builtin_shufflevector(lo, hi, 0, 2); }
#else   /* one 16-byte load: hosts that forward it, A/B measurements */
NXI NxV2u64 LQ128(u64 a) { return *(const NxV2u64u *)a; }
#endif
NXI void SQ128(u64 a, NxV2u64 v) { *(NxV2u64u *)a = v; }

/* flags: N Z C V live in four C locals of each function */
#define FLAGS_DECL u8 N = 0, Z = 0, C = 0, V = 0
#define FLAGS_LOAD do { u64 _f = s->nzcv; N = _f >> 31 & 1; Z = _f >> 30 & 1; C = _f >> 29 & 1; V = _f >> 28 & 1; } while (0)
#define FLAGS_STORE (s->nzcv = ((u64)N << 31) | ((u64)Z << 30) | ((u64)C << 29) | ((u64)V << 28))
#define FLAGS_SET(nzcv4) do { u32 _n = (nzcv4); N = _n >> 3 & 1; Z = _n >> 2 & 1; C = _n >> 1 & 1; V = _n & 1; } while (0)

/* ADDS/SUBS/ADCS/SBCS (SUB = ADD of ~b with carry 1, as the architecture defines it) */
#define ADDC64(r, a, b, cin) do { u64 _a = (a), _b = (b); u128 _u = (u128)_a + _b + (cin); \
    r = (u64)_u; N = (i64)r < 0; Z = r == 0; C = (u8)(_u >> 64); \
    V = (i64)((_a ^ r) & (_b ^ r)) < 0; } while (0)
#define ADDC32(r, a, b, cin) do { u32 _a = (u32)(a), _b = (u32)(b); u64 _u = (u64)_a + _b + (cin); \
    u32 _rr = (u32)_u; r = _rr; N = (i32)_rr < 0; Z = _rr == 0; C = (u8)(_u >> 32); \
    V = (i32)((_a ^ _rr) & (_b ^ _rr)) < 0; } while (0)
/* SUBS/CMP/CCMP: the same flags written so that clang sees a compare: C is a >= b unsigned and
 * V is N ^ (a < b signed), which is what V means after a subtraction (N != V is signed less
 * than).  A B.HI, B.LT or B.GT on them then folds into one cmp and jcc; through ADDC's 65-bit
 * sum of a, ~b and 1 clang made six to twelve instructions of each (gzip's match loop bounds) */
#define SUBC64(r, a, b) do { u64 _a = (a), _b = (b); r = _a - _b; N = (i64)r < 0; Z = _a == _b; \
    C = _a >= _b; V = N ^ ((i64)_a < (i64)_b); } while (0)
#define SUBC32(r, a, b) do { u32 _a = (u32)(a), _b = (u32)(b); u32 _rr = _a - _b; r = _rr; \
    N = (i32)_rr < 0; Z = _a == _b; C = _a >= _b; V = N ^ ((i32)_a < (i32)_b); } while (0)
#define LOGICF64(r) do { N = (i64)(r) < 0; Z = (r) == 0; C = 0; V = 0; } while (0)
#define LOGICF32(r) do { N = (i32)(u32)(r) < 0; Z = (u32)(r) == 0; C = 0; V = 0; } while (0)

NXI u64 ROR64(u64 v, unsigned r) { r &= 63; return r ? (v >> r) | (v << (64 - r)) : v; }
NXI u32 ROR32(u32 v, unsigned r) { r &= 31; return r ? (v >> r) | (v << (32 - r)) : v; }
NXI u64 ASR64(u64 v, unsigned r) { return (u64)((i64)v >> (r & 63)); }
NXI u32 ASR32(u32 v, unsigned r) { return (u32)((i32)v >> (r & 31)); }
NXI u64 CLZ64(u64 v) { return v ? (u64)__builtin_clzll(v) : 64; }
NXI u64 CLZ32(u32 v) { return v ? (u64)__builtin_clz(v) : 32; }
NXI u64 CLS64x(u64 v) { u64 t = v ^ (u64)((i64)v >> 63); return (t ? (u64)__builtin_clzll(t) : 64) - 1; }
NXI u64 CLS32x(u32 v) { u32 t = v ^ (u32)((i32)v >> 31); return (t ? (u64)__builtin_clz(t) : 32) - 1; }
NXI u64 RBIT64(u64 v) { return __builtin_bitreverse64(v); }
NXI u32 RBIT32(u32 v) { return __builtin_bitreverse32(v); }
NXI u64 REV16_64(u64 v) { return ((v & 0x00ff00ff00ff00ffull) << 8) | ((v >> 8) & 0x00ff00ff00ff00ffull); }
NXI u64 REV32_64(u64 v) { u64 t = __builtin_bswap64(v); return (t >> 32) | (t << 32); }
NXI u64 UDIV64(u64 a, u64 b) { return b ? a / b : 0; }
NXI u32 UDIV32(u32 a, u32 b) { return b ? a / b : 0; }
NXI u64 SDIV64(u64 a, u64 b) { if (!b) return 0; if ((i64)a == INT64_MIN && (i64)b == -1) return a; return (u64)((i64)a / (i64)b); }
NXI u32 SDIV32(u32 a, u32 b) { if (!b) return 0; if ((i32)a == INT32_MIN && (i32)b == -1) return a; return (u32)((i32)a / (i32)b); }
NXI u64 UMULH(u64 a, u64 b) { return (u64)(((u128)a * b) >> 64); }
NXI u64 SMULH(u64 a, u64 b) { return (u64)(((i128)(i64)a * (i64)b) >> 64); }

/* shifts by register: amount taken modulo the data size (LSLV etc.) */
NXI u64 LSLV64(u64 a, u64 b) { return a << (b & 63); }
NXI u64 LSRV64(u64 a, u64 b) { return a >> (b & 63); }
NXI u32 LSLV32(u32 a, u64 b) { return a << (b & 31); }
NXI u32 LSRV32(u32 a, u64 b) { return a >> (b & 31); }

/* CRC32 / CRC32C, bitwise (reflected polynomials) */
NXI u32 CRC32X(u32 acc, u64 val, int bytes, u32 poly) {
    for (int i = 0; i < bytes * 8; i++) { u32 bit = (acc ^ (u32)(val >> i)) & 1; acc = (acc >> 1) ^ (bit ? poly : 0); }
    return acc;
}

/* vector registers: handlers write s->v[N]; the emitter renames it to the function's NxVec local vN */
NXI u64 FPBITS64(double d) { u64 v; memcpy(&v, &d, 8); return v; }
NXI u32 FPBITS32(float f) { u32 v; memcpy(&v, &f, 4); return v; }
NXI double F64OF(u64 v) { double d; memcpy(&d, &v, 8); return d; }
NXI float F32OF(u32 v) { float f; memcpy(&f, &v, 4); return f; }

void nx_unimplemented(NxCpu *s, u64 pc, u32 word);
NxRet nx_call_ind(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC;   /* call s->pc as a function (BLR) */
NxRet nx_jump(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC;       /* jump to s->pc (BR out of the function) */
void nx_bad_resume(NxCpu *s);
void nx_elided_resume(NxCpu *s) __attribute__((cold));
/* a call of a function the recompiler found never returns returned (recompiler.noreturn_calls) */
void nx_noreturn_returned(NxCpu *s, u64 call_pc) __attribute__((noreturn, cold));
/* Leave to nx_run with every register in NxCpu (after STORE_ALL, or a runtime call that
 * wrote them): a trap, a bad resume, an unimplemented instruction. */
#define NX_BACK return (NxRet){ s->pc, s->x[0] }
/* an IFUNC's PLT stub found a target its resolver's candidates do not include (control.py) */
void nx_ifunc_miss(NxCpu *s, u64 stub_pc, u64 target) __attribute__((noreturn, cold));
void nx_trace_entry(NxCpu *s, u64 entry);  /* trace builds only (recompiler.trace) */
/* a computed goto indexed a table entry that holds no code address (lift/emitter.py direct_goto) */
void nx_bad_table_entry(NxCpu *s, u64 index, u64 target) __attribute__((noreturn, cold));

/* Inline cache of one indirect branch or call site (BR/BLR to a register): a lifted function
 * the site reaches is remembered as a pointer to its row of nx_entries, one word, so a racing
 * thread never pairs one target's address with another's function.  A hit skips the
 * runtime's lookup; a miss calls nx_ic_fill (which fills an empty cache and now and then
 * retargets a full one; it returns s, so no register is kept across it) and goes on to
 * nx_jump / nx_call_ind as before.  A
 * preemption request takes the runtime path.  Weak: a harness without the runtime
 * (tests/recompiler's Unicorn cases) leaves nx_ic_fill unresolved; its sites always miss. */
NxCpu *nx_ic_fill(NxCpu *s, const NxEntry **ic) __attribute__((weak));
/* The preemption flag an inline cache's hit reads.  In game.so (NX_GAME_SO: the build's shards,
 * linked with the runtime) it is dispatch.c's hidden alias of nx_preempt_pending, so the read is
 * one compare of a rip-relative word (`cmpl $0, nx_preempt_here(%rip)`), where the weak symbol
 * took its address first (`lea` or a GOT load, then the compare).  Code loaded at run time
 * (runtime lifts, loaded.so) and the harnesses without the runtime read the weak default-
 * visibility name, which game.so exports: the same variable under both names. */
#ifdef NX_GAME_SO
extern volatile int nx_preempt_here __attribute__((visibility("hidden")));
#define NX_PREEMPT_FLAG nx_preempt_here
#else
extern volatile int nx_preempt_pending __attribute__((weak));
#define NX_PREEMPT_FLAG nx_preempt_pending
#endif
/* A target analysis guessed for an indirect call or jump (analysis/call_targets.py), tried as
 * a direct call first: like an inline cache's hit, it is taken only when no preemption is
 * requested, so an indirect call stays a scheduling point (examples' preempt.c). */
#define NX_GUESS(t, g) (LIKELY((t) == (g)) && LIKELY(!NX_PREEMPT_FLAG))
/* An empty cache points at one of these rows (never NULL: a hit is one compare, not two).
 * No lifted function has their address (not even a word-aligned one); a branch to it anyway
 * (a register holding all ones) "hits" the runtime's own path, nx_call_ind or nx_jump, which
 * reports it as a branch to an address with no lifted code: a site stores s->pc, the runtime's
 * input, only when it misses, so these rows' functions store it first.  nx_ic_fill knows them
 * by NX_IC_EMPTY. */
#define NX_IC_EMPTY (~0ull)
static NxRet nx_ic_ones_call(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC {
    s->pc = NX_IC_EMPTY; MUSTTAIL return nx_call_ind(s, a0, a1, a30, asp, a29); }
static NxRet nx_ic_ones_jump(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) NX_CC {
    s->pc = NX_IC_EMPTY; MUSTTAIL return nx_jump(s, a0, a1, a30, asp, a29); }
static const NxEntry nx_ic_empty_call = { NX_IC_EMPTY, nx_ic_ones_call, 0, 0 };
static const NxEntry nx_ic_empty_jump = { NX_IC_EMPTY, nx_ic_ones_jump, 0, 0 };
NXI const NxEntry *NX_IC(const NxEntry **ic, u64 t) {
    const NxEntry *e = __atomic_load_n(ic, __ATOMIC_ACQUIRE);
    return LIKELY(e->addr == t) && LIKELY(!NX_PREEMPT_FLAG) ? e : 0;
}

/* exclusive monitor: LDXR records address and value; STXR is a CAS against that value */
NXI void EXCL_MARK(NxCpu *s, u64 a, u64 lo, u64 hi, int size) { s->excl_addr = a; s->excl_lo = lo; s->excl_hi = hi; s->excl_size = size; }
NXI u32 EXCL_STORE(NxCpu *s, u64 a, u64 lo, u64 hi, int size) {
    if (s->excl_size != (u64)size || s->excl_addr != a) { s->excl_size = 0; return 1; }
    s->excl_size = 0;
    int ok;
    switch (size) {
    case 1: { u8 e = (u8)s->excl_lo; ok = __atomic_compare_exchange_n((u8 *)a, &e, (u8)lo, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); break; }
    case 2: { u16 e = (u16)s->excl_lo; ok = __atomic_compare_exchange_n((u16 *)a, &e, (u16)lo, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); break; }
    case 4: { u32 e = (u32)s->excl_lo; ok = __atomic_compare_exchange_n((u32 *)a, &e, (u32)lo, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); break; }
    case 8: { u64 e = s->excl_lo; ok = __atomic_compare_exchange_n((u64 *)a, &e, lo, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); break; }
    default: { u128 e = (u128)s->excl_lo | ((u128)s->excl_hi << 64); u128 nv = (u128)lo | ((u128)hi << 64);
               ok = __atomic_compare_exchange_n((u128 *)a, &e, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); break; }
    }
    return ok ? 0 : 1;
}

/* FP -> integer conversions saturate; NaN gives 0 (A64 FPToFixed) */
NXI u64 FCVT_S64(double d) { if (d != d) return 0; if (d >= 9223372036854775808.0) return (u64)INT64_MAX; if (d < -9223372036854775808.0) return (u64)INT64_MIN; return (u64)(i64)d; }
NXI u64 FCVT_U64(double d) { if (d != d || d <= 0) return 0; if (d >= 18446744073709551616.0) return UINT64_MAX; return (u64)d; }
NXI u64 FCVT_S32(double d) { if (d != d) return 0; if (d >= 2147483648.0) return (u32)INT32_MAX; if (d < -2147483648.0) return (u32)INT32_MIN; return (u32)(i32)d; }
NXI u64 FCVT_U32(double d) { if (d != d || d <= 0) return 0; if (d >= 4294967296.0) return UINT32_MAX; return (u32)d; }

/* AArch64 NaN rules for scalar FP (x86 picks other NaNs): a NaN result takes the first
 * signalling NaN operand (quietened), else the first quiet NaN operand, else the default NaN
 * (positive, quiet).  Only evaluated when the result is a NaN. */
#define NX_FPNAN(T, B, EXP, MANT, QBIT, DEF) \
NXI int ISSNAN_##T(B v) { return ((v >> MANT) & EXP) == EXP && (v & ((1ull << MANT) - 1)) && !(v >> QBIT & 1); } \
NXI int ISNAN_##T(B v) { return ((v >> MANT) & EXP) == EXP && (v & ((1ull << MANT) - 1)); } \
NXI B NAN3_##T(B a, B b, B c, int n) { \
    B o[3] = {a, b, c}; \
    for (int i = 0; i < n; i++) if (ISSNAN_##T(o[i])) return o[i] | ((B)1 << QBIT); \
    for (int i = 0; i < n; i++) if (ISNAN_##T(o[i])) return o[i]; \
    return DEF; }
NX_FPNAN(S, u32, 0xffu, 23, 22, 0x7fc00000u)
NX_FPNAN(D, u64, 0x7ffull, 52, 51, 0x7ff8000000000000ull)
NXI float FPR_S(float r, float a, float b, float c, int n) {
    if (LIKELY(r == r)) return r;
    return F32OF(NAN3_S(FPBITS32(a), FPBITS32(b), FPBITS32(c), n)); }
NXI double FPR_D(double r, double a, double b, double c, int n) {
    if (LIKELY(r == r)) return r;
    return F64OF(NAN3_D(FPBITS64(a), FPBITS64(b), FPBITS64(c), n)); }
/* clang folds FP as if rounding were to nearest: "c ? t + k : t" becomes t + (c ? k : -0.0),
 * and under round-down +0 + -0 is -0.  An empty asm hides a value's origin from such folds. */
#define NX_FP_OPAQUE(v) __asm__("" : "+x"(v))
/* Round half away from zero (FRINTA, FCVTA*) whatever the host rounding mode: with SSE4.1
 * clang expands round() inline as trunc(x + nextbelow(0.5)), whose sum rounds by MXCSR (the
 * guest's FPCR.RMode), so under round-towards-plus an already integral 2^60 came out one ulp
 * up.  Below 2^52 (2^23), x - trunc(x) and trunc(x) +- 1 are exact. */
#define NX_ROUND_T(NAME, F, SUF, LIM) \
NXI F NAME(F x) { \
    F t = __builtin_trunc##SUF(x); \
    if (!(__builtin_fabs##SUF(x) < LIM)) return t;   /* integral, infinite or NaN: no inf - inf */ \
    F u = t; \
    NX_FP_OPAQUE(u); \
    return __builtin_fabs##SUF(x - t) >= (F)0.5 ? u + __builtin_copysign##SUF((F)1, x) : t; }
NX_ROUND_T(NX_ROUND, double, , 0x1p52)
NX_ROUND_T(NX_ROUNDf, float, f, 0x1p23f)
/* FMADD family: FPMulAdd(addend, op1, op2); a quiet NaN addend with inf*0 gives the default NaN */
NXI float FMA_S(float add, float x, float y) {
    float r = __builtin_fmaf(x, y, add);
    if (LIKELY(r == r)) return r;
    if (!ISSNAN_S(FPBITS32(add)) && !ISSNAN_S(FPBITS32(x)) && !ISSNAN_S(FPBITS32(y)) && ISNAN_S(FPBITS32(add)) &&
        ((__builtin_isinf(x) && y == 0) || (__builtin_isinf(y) && x == 0))) return F32OF(0x7fc00000u);
    return F32OF(NAN3_S(FPBITS32(add), FPBITS32(x), FPBITS32(y), 3)); }
NXI double FMA_D(double add, double x, double y) {
    double r = __builtin_fma(x, y, add);
    if (LIKELY(r == r)) return r;
    if (!ISSNAN_D(FPBITS64(add)) && !ISSNAN_D(FPBITS64(x)) && !ISSNAN_D(FPBITS64(y)) && ISNAN_D(FPBITS64(add)) &&
        ((__builtin_isinf(x) && y == 0) || (__builtin_isinf(y) && x == 0))) return F64OF(0x7ff8000000000000ull);
    return F64OF(NAN3_D(FPBITS64(add), FPBITS64(x), FPBITS64(y), 3)); }
/* FMAX/FMIN (NaN in, NaN out; +0 > -0) and FMAXNM/FMINNM (a quiet NaN loses to a number) */
#define NX_FMINMAX(T, F) \
NXI F FMAX_##T(F a, F b) { if (a != a || b != b) return FPR_##T(a + b, a, b, 0, 2); \
    if (a == 0 && b == 0) return __builtin_signbit(a) ? b : a; return a > b ? a : b; } \
NXI F FMIN_##T(F a, F b) { if (a != a || b != b) return FPR_##T(a + b, a, b, 0, 2); \
    if (a == 0 && b == 0) return __builtin_signbit(a) ? a : b; return a < b ? a : b; }
NX_FMINMAX(S, float)
NX_FMINMAX(D, double)
#define NX_FMINMAXNM(T, F, BITS) \
NXI F FMAXNM_##T(F a, F b) { if (a != a && !ISSNAN_##T(BITS(a)) && b == b) return b; \
    if (b != b && !ISSNAN_##T(BITS(b)) && a == a) return a; return FMAX_##T(a, b); } \
NXI F FMINNM_##T(F a, F b) { if (a != a && !ISSNAN_##T(BITS(a)) && b == b) return b; \
    if (b != b && !ISSNAN_##T(BITS(b)) && a == a) return a; return FMIN_##T(a, b); }
NX_FMINMAXNM(S, float, FPBITS32)
NX_FMINMAXNM(D, double, FPBITS64)
/* FPCR lives in s->fpcr; its RMode and FZ are mirrored into the host's MXCSR when the guest
 * writes FPCR (MSR), so FP arithmetic stays one host instruction in every mode.
 * RMode RN/RP/RM/RZ -> MXCSR RC nearest/up/down/zero; FZ -> FTZ + DAZ; exceptions stay masked. */
NXI u32 NX_MXCSR_OF(u64 fpcr) {
    u32 m = 0x1f80u | (((0x6240u >> (4 * ((fpcr >> 22) & 3))) & 0xfu) << 12);
    if (fpcr >> 24 & 1) m |= 0x8040u;
    return m;
}
NXI void NX_FPCR_APPLY(u64 fpcr) {
#if defined(__x86_64__)
    u32 m = NX_MXCSR_OF(fpcr);
    __asm__ volatile("ldmxcsr %0" : : "m"(m) : "memory");
#else
    (void)fpcr;
#endif
}
/* FPCR.DN: every NaN result of an arithmetic operation is the default NaN.  The test sits
 * behind the (already taken) NaN branch, so the FPCR = 0 path only pays one compare. */
NXI float FDN_S(float r, u64 fpcr) { if (LIKELY(r == r) || !(fpcr >> 25 & 1)) return r; return F32OF(0x7fc00000u); }
NXI double FDN_D(double r, u64 fpcr) { if (LIKELY(r == r) || !(fpcr >> 25 & 1)) return r; return F64OF(0x7ff8000000000000ull); }
/* FPCR.FZ for the operations that pick an operand (FMAX/FMIN...): a denormal input counts as
 * a zero of its sign; arithmetic gets this from MXCSR.DAZ. */
NXI float FZIN_S(float a, u64 fpcr) { if (UNLIKELY(fpcr >> 24 & 1)) { u32 b = FPBITS32(a); if (!(b & 0x7f800000u)) return F32OF(b & 0x80000000u); } return a; }
NXI double FZIN_D(double a, u64 fpcr) { if (UNLIKELY(fpcr >> 24 & 1)) { u64 b = FPBITS64(a); if (!(b & 0x7ff0000000000000ull)) return F64OF(b & 0x8000000000000000ull); } return a; }
/* An integer register that an FP conversion rounds (SCVTF/UCVTF): the empty volatile asm
 * keeps the conversion after an earlier MSR FPCR's ldmxcsr.  Without it the compiler may
 * hoist the conversion of a register local above the asm (values read from s->v are already
 * ordered by the asm's memory clobber). */
NXI u64 NX_AFTER_FPCR(u64 v) { __asm__ volatile("" : "+r"(v)); return v; }
/* The second half of a 64-bit LDP/STP: the empty asm hides where the value came from, so the
 * compiler cannot fuse the pair with a neighbouring pair into one 16-byte load and store (a
 * callee-saved pair restored from the stack into s->x[19..20], the prologue's copy of them).
 * A 16-byte load of bytes that two 8-byte stores wrote just before cannot take them from the
 * store buffer: x86 waits for both stores to retire (measured: busybox sort's key function
 * spent half its time on that one load). */
NXI u64 NX_SPLIT(u64 v) { __asm__("" : "+r"(v)); return v; }
/* UCVTF to double: a signed conversion with a sticky bit for the top half (one rounding in
 * every mode; the compiler's magic-number sequence gives -0 for 0 when rounding down). */
NXI double NX_U64TOD(u64 v) { if ((i64)v >= 0) return (double)(i64)v; return (double)(i64)((v >> 1) | (v & 1)) * 2.0; }
NXI float NX_U64TOF(u64 v) { if ((i64)v >= 0) return (float)(i64)v; return (float)(i64)((v >> 1) | (v & 1)) * 2.0f; }
/* FPR_S/FPR_D with FPCR.DN: the DN test only runs once the result is known to be a NaN. */
NXI float FPRD_S(float r, float a, float b, float c, int n, u64 fpcr) {
    if (LIKELY(r == r)) return r;
    if (fpcr >> 25 & 1) return F32OF(0x7fc00000u);
    return F32OF(NAN3_S(FPBITS32(a), FPBITS32(b), FPBITS32(c), n)); }
NXI double FPRD_D(double r, double a, double b, double c, int n, u64 fpcr) {
    if (LIKELY(r == r)) return r;
    if (fpcr >> 25 & 1) return F64OF(0x7ff8000000000000ull);
    return F64OF(NAN3_D(FPBITS64(a), FPBITS64(b), FPBITS64(c), n)); }
/* FCVT double->single with FPCR.FZ: Arm flushes a result that is tiny before rounding, x86's
 * FTZ only one tiny after rounding, so a value just below FLT_MIN that rounds up to it is
 * flushed here by hand. */
NXI float NX_FCVT_DS(double a, u64 fpcr) {
    float r = (float)a;
    if (UNLIKELY(fpcr >> 24 & 1) && __builtin_fabsf(r) == 0x1p-126f && __builtin_fabs(a) < 0x1p-126) r = __builtin_copysignf(0.0f, r);
    return r; }
/* ---- Armv8 cryptography extension (AESE/AESD/AESMC/AESIMC, SHA1*, SHA256*, PMULL).  The
 * state is the 16 bytes of a vector register, byte i = row i%4, column i/4 (FIPS-197's order);
 * the S-boxes were computed from GF(2^8) inverses and the affine map. */
static const u8 NX_AES_SBOX[256] = {0x63,0x7c,0x77,0x7b,0xf2,0x6b,0x6f,0xc5,0x30,0x01,0x67,0x2b,0xfe,0xd7,0xab,0x76,0xca,0x82,0xc9,0x7d,0xfa,0x59,0x47,0xf0,0xad,0xd4,0xa2,0xaf,0x9c,0xa4,0x72,0xc0,0xb7,0xfd,0x93,0x26,0x36,0x3f,0xf7,0xcc,0x34,0xa5,0xe5,0xf1,0x71,0xd8,0x31,0x15,0x04,0xc7,0x23,0xc3,0x18,0x96,0x05,0x9a,0x07,0x12,0x80,0xe2,0xeb,0x27,0xb2,0x75,0x09,0x83,0x2c,0x1a,0x1b,0x6e,0x5a,0xa0,0x52,0x3b,0xd6,0xb3,0x29,0xe3,0x2f,0x84,0x53,0xd1,0x00,0xed,0x20,0xfc,0xb1,0x5b,0x6a,0xcb,0xbe,0x39,0x4a,0x4c,0x58,0xcf,0xd0,0xef,0xaa,0xfb,0x43,0x4d,0x33,0x85,0x45,0xf9,0x02,0x7f,0x50,0x3c,0x9f,0xa8,0x51,0xa3,0x40,0x8f,0x92,0x9d,0x38,0xf5,0xbc,0xb6,0xda,0x21,0x10,0xff,0xf3,0xd2,0xcd,0x0c,0x13,0xec,0x5f,0x97,0x44,0x17,0xc4,0xa7,0x7e,0x3d,0x64,0x5d,0x19,0x73,0x60,0x81,0x4f,0xdc,0x22,0x2a,0x90,0x88,0x46,0xee,0xb8,0x14,0xde,0x5e,0x0b,0xdb,0xe0,0x32,0x3a,0x0a,0x49,0x06,0x24,0x5c,0xc2,0xd3,0xac,0x62,0x91,0x95,0xe4,0x79,0xe7,0xc8,0x37,0x6d,0x8d,0xd5,0x4e,0xa9,0x6c,0x56,0xf4,0xea,0x65,0x7a,0xae,0x08,0xba,0x78,0x25,0x2e,0x1c,0xa6,0xb4,0xc6,0xe8,0xdd,0x74,0x1f,0x4b,0xbd,0x8b,0x8a,0x70,0x3e,0xb5,0x66,0x48,0x03,0xf6,0x0e,0x61,0x35,0x57,0xb9,0x86,0xc1,0x1d,0x9e,0xe1,0xf8,0x98,0x11,0x69,0xd9,0x8e,0x94,0x9b,0x1e,0x87,0xe9,0xce,0x55,0x28,0xdf,0x8c,0xa1,0x89,0x0d,0xbf,0xe6,0x42,0x68,0x41,0x99,0x2d,0x0f,0xb0,0x54,0xbb,0x16};
static const u8 NX_AES_ISBOX[256] = {0x52,0x09,0x6a,0xd5,0x30,0x36,0xa5,0x38,0xbf,0x40,0xa3,0x9e,0x81,0xf3,0xd7,0xfb,0x7c,0xe3,0x39,0x82,0x9b,0x2f,0xff,0x87,0x34,0x8e,0x43,0x44,0xc4,0xde,0xe9,0xcb,0x54,0x7b,0x94,0x32,0xa6,0xc2,0x23,0x3d,0xee,0x4c,0x95,0x0b,0x42,0xfa,0xc3,0x4e,0x08,0x2e,0xa1,0x66,0x28,0xd9,0x24,0xb2,0x76,0x5b,0xa2,0x49,0x6d,0x8b,0xd1,0x25,0x72,0xf8,0xf6,0x64,0x86,0x68,0x98,0x16,0xd4,0xa4,0x5c,0xcc,0x5d,0x65,0xb6,0x92,0x6c,0x70,0x48,0x50,0xfd,0xed,0xb9,0xda,0x5e,0x15,0x46,0x57,0xa7,0x8d,0x9d,0x84,0x90,0xd8,0xab,0x00,0x8c,0xbc,0xd3,0x0a,0xf7,0xe4,0x58,0x05,0xb8,0xb3,0x45,0x06,0xd0,0x2c,0x1e,0x8f,0xca,0x3f,0x0f,0x02,0xc1,0xaf,0xbd,0x03,0x01,0x13,0x8a,0x6b,0x3a,0x91,0x11,0x41,0x4f,0x67,0xdc,0xea,0x97,0xf2,0xcf,0xce,0xf0,0xb4,0xe6,0x73,0x96,0xac,0x74,0x22,0xe7,0xad,0x35,0x85,0xe2,0xf9,0x37,0xe8,0x1c,0x75,0xdf,0x6e,0x47,0xf1,0x1a,0x71,0x1d,0x29,0xc5,0x89,0x6f,0xb7,0x62,0x0e,0xaa,0x18,0xbe,0x1b,0xfc,0x56,0x3e,0x4b,0xc6,0xd2,0x79,0x20,0x9a,0xdb,0xc0,0xfe,0x78,0xcd,0x5a,0xf4,0x1f,0xdd,0xa8,0x33,0x88,0x07,0xc7,0x31,0xb1,0x12,0x10,0x59,0x27,0x80,0xec,0x5f,0x60,0x51,0x7f,0xa9,0x19,0xb5,0x4a,0x0d,0x2d,0xe5,0x7a,0x9f,0x93,0xc9,0x9c,0xef,0xa0,0xe0,0x3b,0x4d,0xae,0x2a,0xf5,0xb0,0xc8,0xeb,0xbb,0x3c,0x83,0x53,0x99,0x61,0x17,0x2b,0x04,0x7e,0xba,0x77,0xd6,0x26,0xe1,0x69,0x14,0x63,0x55,0x21,0x0c,0x7d};
NXI u8 NX_XT(u8 a) { return (u8)((a << 1) ^ ((a >> 7) * 0x1b)); }
NXI u8 NX_GM(u8 a, u8 b) { u8 r = 0; for (int i = 0; i < 4; i++) { if (b >> i & 1) r ^= a; a = NX_XT(a); } return r; }
/* AESE: SubBytes(ShiftRows(d ^ k)); AESD: InvSubBytes(InvShiftRows(d ^ k)) */
static inline NxVec NX_AESE(NxVec d, NxVec k) {
    NxVec t, r; t.q = d.q ^ k.q;
    for (int i = 0; i < 16; i++) { int row = i & 3, col = i >> 2; r.b[i] = NX_AES_SBOX[t.b[row + 4 * ((col + row) & 3)]]; }
    return r; }
static inline NxVec NX_AESD(NxVec d, NxVec k) {
    NxVec t, r; t.q = d.q ^ k.q;
    for (int i = 0; i < 16; i++) { int row = i & 3, col = i >> 2; r.b[row + 4 * ((col + row) & 3)] = NX_AES_ISBOX[t.b[i]]; }
    return r; }
static inline NxVec NX_AESMC(NxVec a) {
    NxVec r;
    for (int c = 0; c < 4; c++) { u8 *x = &a.b[4 * c]; u8 *y = &r.b[4 * c];
        for (int j = 0; j < 4; j++) y[j] = (u8)(NX_XT(x[j]) ^ NX_XT(x[(j + 1) & 3]) ^ x[(j + 1) & 3] ^ x[(j + 2) & 3] ^ x[(j + 3) & 3]); }
    return r; }
static inline NxVec NX_AESIMC(NxVec a) {
    NxVec r;
    for (int c = 0; c < 4; c++) { u8 *x = &a.b[4 * c]; u8 *y = &r.b[4 * c];
        for (int j = 0; j < 4; j++) y[j] = (u8)(NX_GM(x[j], 14) ^ NX_GM(x[(j + 1) & 3], 11) ^ NX_GM(x[(j + 2) & 3], 13) ^ NX_GM(x[(j + 3) & 3], 9)); }
    return r; }
NXI u32 NX_ROL32(u32 v, int r) { return (v << r) | (v >> (32 - r)); }
/* SHA1C/SHA1P/SHA1M (op 0/1/2): four rounds on X = abcd, y = e, W = w + k */
static inline NxVec NX_SHA1HASH(NxVec x, u32 y, NxVec w, int op) {
    for (int e = 0; e < 4; e++) {
        u32 b = x.s[1], c = x.s[2], d = x.s[3];
        u32 t = op == 0 ? (((c ^ d) & b) ^ d) : op == 1 ? (b ^ c ^ d) : ((b & c) | ((b | c) & d));
        y = y + NX_ROL32(x.s[0], 5) + t + w.s[e];
        x.s[1] = NX_ROL32(b, 30);
        u32 top = x.s[3]; x.s[3] = x.s[2]; x.s[2] = x.s[1]; x.s[1] = x.s[0]; x.s[0] = y; y = top;
    }
    return x; }
NXI NxVec NX_SHA1SU0(NxVec d, NxVec n, NxVec m) {
    NxVec r; r.d[0] = d.d[1]; r.d[1] = n.d[0]; r.q ^= d.q ^ m.q; return r; }
NXI NxVec NX_SHA1SU1(NxVec d, NxVec n) {
    NxVec t, r; t.q = d.q ^ (n.q >> 32);
    for (int i = 0; i < 4; i++) r.s[i] = NX_ROL32(t.s[i], 1);
    r.s[3] ^= NX_ROL32(t.s[0], 2); return r; }
NXI u32 NX_ROR32(u32 v, int r) { return (v >> r) | (v << (32 - r)); }
/* SHA256H (part1: returns X) / SHA256H2 (returns Y): four rounds, X = abcd, Y = efgh */
static inline NxVec NX_SHA256HASH(NxVec x, NxVec y, NxVec w, int part1) {
    for (int e = 0; e < 4; e++) {
        u32 chs = ((y.s[1] ^ y.s[2]) & y.s[0]) ^ y.s[2];
        u32 maj = (x.s[0] & x.s[1]) | ((x.s[0] | x.s[1]) & x.s[2]);
        u32 t = y.s[3] + (NX_ROR32(y.s[0], 6) ^ NX_ROR32(y.s[0], 11) ^ NX_ROR32(y.s[0], 25)) + chs + w.s[e];
        x.s[3] = t + x.s[3];
        y.s[3] = t + (NX_ROR32(x.s[0], 2) ^ NX_ROR32(x.s[0], 13) ^ NX_ROR32(x.s[0], 22)) + maj;
        u32 xt = x.s[3], yt = y.s[3];
        x.s[3] = x.s[2]; x.s[2] = x.s[1]; x.s[1] = x.s[0]; x.s[0] = yt;
        y.s[3] = y.s[2]; y.s[2] = y.s[1]; y.s[1] = y.s[0]; y.s[0] = xt;
    }
    return part1 ? x : y; }
NXI NxVec NX_SHA256SU0(NxVec d, NxVec n) {
    NxVec r; u32 t[4] = {d.s[1], d.s[2], d.s[3], n.s[0]};
    for (int e = 0; e < 4; e++) r.s[e] = (NX_ROR32(t[e], 7) ^ NX_ROR32(t[e], 18) ^ (t[e] >> 3)) + d.s[e];
    return r; }
NXI NxVec NX_SHA256SU1(NxVec d, NxVec n, NxVec m) {
    NxVec r; u32 t0[4] = {n.s[1], n.s[2], n.s[3], m.s[0]};
    for (int e = 0; e < 4; e++) {
        u32 v = e < 2 ? m.s[2 + e] : r.s[e - 2];
        r.s[e] = (NX_ROR32(v, 17) ^ NX_ROR32(v, 19) ^ (v >> 10)) + d.s[e] + t0[e];
    }
    return r; }
/* PMULL: carry-less products (64x64 -> 128; 8x8 -> 16) */
NXI u128 NX_CLMUL64(u64 a, u64 b) { u128 r = 0; for (int i = 0; i < 64; i++) if (b >> i & 1) r ^= (u128)a << i; return r; }
NXI u16 NX_CLMUL8(u8 a, u8 b) { u16 r = 0; for (int i = 0; i < 8; i++) if (b >> i & 1) r ^= (u16)((u16)a << i); return r; }
/* recompiler.signal_polls: the Linux personality's pending-signal flag, read at backward
 * branches, and its delivery (linux_syscalls.c) */
extern volatile int nx_signal_flag __attribute__((visibility("hidden")));
void nx_signal_poll(NxCpu *s);
#include "lifted_fp.h"   /* FP estimates, half precision, FJCVTZS, FRINT32/64, FPSR flags */
#endif
