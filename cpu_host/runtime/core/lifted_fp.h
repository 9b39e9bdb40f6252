/* lifted_fp.h — FP helpers of generated code beyond lifted.h's core (included by lifted.h):
 * the reciprocal estimates and steps (FRECPE/FRSQRTE/URECPE/URSQRTE/FRECPS/FRSQRTS/FRECPX),
 * conversions to and from half precision and FCVTXN's round-to-odd (one software rounding,
 * FPCR.RMode/AHP/DN/FZ read from s->fpcr), FJCVTZS, FRINT32/64, FMULX, FP16 arithmetic (the
 * half's exact value as a double, one rounding back under RMode/FZ16/DN), and FPSR's
 * cumulative exception flags taken from the host's MXCSR.  Values travel as their bits
 * (u16/u32/u64) where a host conversion would round, quieten or flush differently from the
 * architecture.  The recompiler's lift/fp_*.py modules emit calls to these. */
#ifndef NX_LIFTED_FP_H
#define NX_LIFTED_FP_H

/* ---- estimate tables: computed from the Arm ARM's RecipEstimate / RecipSqrtEstimate by
 * recompiler/lift/fp_estimate.py (tests/recompiler/test_fp_recip.py keeps them equal) ---- */
/* RecipEstimate(256 + i) */
static const u16 NX_RECIP_EST[256] = {
511,509,507,505,503,501,499,497,496,494,492,490,488,486,485,483,481,479,477,476,474,472,471,469,
467,466,464,462,461,459,457,456,454,453,451,450,448,447,445,444,442,441,439,438,436,435,433,432,
430,429,428,426,425,423,422,421,419,418,417,415,414,413,412,410,409,408,406,405,404,403,401,400,
399,398,397,395,394,393,392,391,390,388,387,386,385,384,383,382,380,379,378,377,376,375,374,373,
372,371,370,369,368,367,366,365,364,363,362,361,360,359,358,357,356,355,354,353,352,351,350,349,
348,347,346,345,344,344,343,342,341,340,339,338,337,337,336,335,334,333,332,331,331,330,329,328,
327,326,326,325,324,323,322,322,321,320,319,319,318,317,316,315,315,314,313,312,312,311,310,309,
309,308,307,307,306,305,304,304,303,302,302,301,300,300,299,298,298,297,296,296,295,294,294,293,
292,292,291,290,290,289,288,288,287,286,286,285,285,284,283,283,282,282,281,280,280,279,279,278,
277,277,276,276,275,274,274,273,273,272,272,271,271,270,269,269,268,268,267,267,266,266,265,265,
264,263,263,262,262,261,261,260,260,259,259,258,258,257,257,256};
/* RecipSqrtEstimate(128 + i) */
static const u16 NX_RSQRT_EST[384] = {
511,509,507,505,503,501,499,498,496,494,492,490,489,487,485,484,482,480,479,477,475,474,472,471,
469,468,466,465,463,462,460,459,457,456,454,453,452,450,449,448,446,445,444,442,441,440,439,437,
436,435,434,432,431,430,429,428,426,425,424,423,422,421,420,419,418,416,415,414,413,412,411,410,
409,408,407,406,405,404,403,402,401,400,399,398,397,396,396,395,394,393,392,391,390,389,388,387,
387,386,385,384,383,382,382,381,380,379,378,377,377,376,375,374,374,373,372,371,370,370,369,368,
367,367,366,365,365,364,363,362,361,361,360,360,359,359,357,357,356,356,355,355,353,353,352,352,
351,351,349,349,348,348,347,347,346,346,344,344,343,343,342,342,341,341,340,340,338,338,337,337,
336,336,335,335,334,334,333,333,332,332,331,331,330,330,328,328,327,327,326,326,325,325,324,324,
323,323,322,322,321,321,320,320,319,319,318,318,317,317,316,316,316,316,315,315,314,314,313,313,
312,312,311,311,310,310,309,309,308,308,307,307,307,307,306,306,305,305,304,304,303,303,302,302,
302,302,301,301,300,300,299,299,298,298,298,298,297,297,296,296,295,295,294,294,294,294,293,293,
292,292,291,291,291,291,290,290,289,289,289,289,288,288,287,287,286,286,286,286,285,285,284,284,
284,284,283,283,282,282,282,282,281,281,280,280,280,280,279,279,278,278,278,278,277,277,276,276,
276,276,275,275,275,275,274,274,273,273,273,273,272,272,272,272,271,271,270,270,270,270,269,269,
269,269,268,268,267,267,267,267,266,266,266,266,265,265,265,265,264,264,264,264,263,263,262,262,
262,262,261,261,261,261,260,260,260,260,259,259,259,259,258,258,258,258,257,257,257,257,256,256};

/* The long helpers are out of line (one copy per shard): inlined into every lane of every
 * vector form they would multiply the C compiler's work for little gain. */
#define NXFP static __attribute__((noinline, unused))
#define NX_FZ(fpcr) ((int)((fpcr) >> 24 & 1))
#define NX_DN(fpcr) ((int)((fpcr) >> 25 & 1))
#define NX_AHP(fpcr) ((int)((fpcr) >> 26 & 1))
#define NX_RMODE(fpcr) ((int)((fpcr) >> 22 & 3))

/* Fields of an N-bit format (N = 16, 32, 64): exponent bits E, fraction bits F. */
#define NX_FE(N) ((N) == 16 ? 5 : (N) == 32 ? 8 : 11)
#define NX_FF(N) ((N) == 16 ? 10 : (N) == 32 ? 23 : 52)

/* FPProcessNaN of one operand: the quietened NaN, or the default NaN under FPCR.DN. */
NXI u64 NX_PNAN(u64 x, int N, u64 fpcr) {
    int F = NX_FF(N);
    if (NX_DN(fpcr)) return ((((u64)1 << NX_FE(N)) - 1) << F) | ((u64)1 << (F - 1));
    return x | ((u64)1 << (F - 1));
}

/* FRECPE on the bits of a half (N=16), single (N=32) or double (N=64). */
NXFP u64 NX_FRECPE(u64 x, int N, u64 fpcr) {
    int E = NX_FE(N), F = NX_FF(N);
    u64 sign = x >> (N - 1) & 1, emax = ((u64)1 << E) - 1;
    u64 expf = x >> F & emax, frac = x & (((u64)1 << F) - 1);
    u64 sbit = sign << (N - 1), inf = sbit | emax << F;
    if (expf == emax) return frac ? NX_PNAN(x, N, fpcr) : sbit;          /* NaN; 1/inf = 0 */
    int fz = N == 16 ? (int)(fpcr >> 19 & 1) : NX_FZ(fpcr);               /* FZ16 for halves */
    if (expf == 0 && (frac == 0 || fz)) return inf;                       /* 1/0 (DZC) */
    if (expf == 0 && frac < ((u64)1 << (F - 2))) {                        /* overflows */
        int rm = NX_RMODE(fpcr);
        int to_inf = rm == 0 || (rm == 1 && !sign) || (rm == 2 && sign);
        return to_inf ? inf : inf - 1;                                    /* largest normal */
    }
    if (fz && expf >= emax - 2) return sbit;                              /* result flushed */
    u64 f52 = frac << (52 - F);
    int exp = (int)expf;
    if (exp == 0) {
        if (!(f52 >> 51 & 1)) { exp = -1; f52 = (f52 << 2) & 0xfffffffffffffull; }
        else f52 = (f52 << 1) & 0xfffffffffffffull;
    }
    u64 est = NX_RECIP_EST[(f52 >> 44) & 0xff];
    int rexp = (N == 16 ? 29 : N == 32 ? 253 : 2045) - exp;
    u64 rf = (est & 0xff) << 44;
    if (rexp == 0) rf = ((u64)1 << 51) | (rf >> 1);
    else if (rexp == -1) { rf = ((u64)1 << 50) | (rf >> 2); rexp = 0; }
    return sbit | (u64)rexp << F | rf >> (52 - F);
}

/* FRSQRTE on the bits of a half, single or double. */
NXFP u64 NX_FRSQRTE(u64 x, int N, u64 fpcr) {
    int E = NX_FE(N), F = NX_FF(N);
    u64 sign = x >> (N - 1) & 1, emax = ((u64)1 << E) - 1;
    u64 expf = x >> F & emax, frac = x & (((u64)1 << F) - 1);
    u64 dnan = (emax << F) | ((u64)1 << (F - 1));
    if (expf == emax && frac) return NX_PNAN(x, N, fpcr);
    int fz = N == 16 ? (int)(fpcr >> 19 & 1) : NX_FZ(fpcr);
    if (expf == 0 && (frac == 0 || fz)) return sign << (N - 1) | emax << F;             /* DZC */
    if (sign) return dnan;                                                            /* IOC */
    if (expf == emax) return 0;
    u64 f52 = frac << (52 - F);
    int exp = (int)expf;
    if (exp == 0) {
        while (!(f52 >> 51 & 1)) { f52 = (f52 << 1) & 0xfffffffffffffull; exp--; }
        f52 = (f52 << 1) & 0xfffffffffffffull;
    }
    u32 scaled = (exp & 1) == 0 ? (u32)(256 | (f52 >> 44)) : (u32)(128 | (f52 >> 45));
    int rexp = ((N == 16 ? 44 : N == 32 ? 380 : 3068) - exp) / 2;
    u64 est = NX_RSQRT_EST[scaled - 128];
    return (u64)rexp << F | (est & 0xff) << (F - 8);
}

/* URECPE / URSQRTE on one 32-bit lane */
NXI u32 NX_URECPE(u32 a) { return a >> 31 ? (u32)NX_RECIP_EST[(a >> 23) - 256] << 23 : 0xffffffffu; }
NXI u32 NX_URSQRTE(u32 a) { return a >> 30 ? (u32)NX_RSQRT_EST[(a >> 23) - 128] << 23 : 0xffffffffu; }

/* FRECPX: the exponent inverted, fraction cleared; zeros and denormals get the largest
 * normal exponent. */
NXI u64 NX_FRECPX(u64 x, int N, u64 fpcr) {
    int E = NX_FE(N), F = NX_FF(N);
    u64 emax = ((u64)1 << E) - 1, expf = x >> F & emax, frac = x & (((u64)1 << F) - 1);
    u64 sbit = x >> (N - 1) << (N - 1);
    if (expf == emax && frac) return NX_PNAN(x, N, fpcr);
    if (expf == 0) return sbit | (emax - 1) << F;
    return sbit | (~expf & emax) << F;
}

/* FRECPS = 2 - a*b and FRSQRTS = (3 - a*b) / 2, each rounded once.  The architecture negates
 * a first, so a NaN a comes back with its sign flipped; inf * 0 gives 2 (1.5), not a NaN. */
#define NX_RSTEP(T, F, FBITS, BITS, FMA)                                                  \
NXI F FRECPS_##T(F a, F b, u64 fpcr) {                                                       \
    F na = -a;                                                                               \
    if (UNLIKELY(na != na || b != b)) {                                                      \
        if (NX_DN(fpcr)) return FDN_##T(na + b, fpcr);                                       \
        return FBITS(NAN3_##T(BITS(na), BITS(b), 0, 2)); }                                   \
    F za = FZIN_##T(na, fpcr), zb = FZIN_##T(b, fpcr);                                       \
    if ((__builtin_isinf(za) && zb == 0) || (za == 0 && __builtin_isinf(zb))) return (F)2;   \
    return FMA(za, zb, (F)2); }                                                              \
NXI F FRSQRTS_##T(F a, F b, u64 fpcr) {                                                      \
    F na = -a;                                                                               \
    if (UNLIKELY(na != na || b != b)) {                                                      \
        if (NX_DN(fpcr)) return FDN_##T(na + b, fpcr);                                       \
        return FBITS(NAN3_##T(BITS(na), BITS(b), 0, 2)); }                                   \
    F za = FZIN_##T(na, fpcr), zb = FZIN_##T(b, fpcr);                                       \
    if ((__builtin_isinf(za) && zb == 0) || (za == 0 && __builtin_isinf(zb))) return (F)1.5; \
    /* halve the larger operand (exact) so that a*b/2 near the top of the range stays finite */ \
    if (__builtin_fabs((double)za) >= 0x1p-100) return FMA(za * (F)0.5, zb, (F)1.5);          \
    if (__builtin_fabs((double)zb) >= 0x1p-100) return FMA(za, zb * (F)0.5, (F)1.5);          \
    return FMA(za, zb, (F)3) * (F)0.5; }
NX_RSTEP(S, float, F32OF, FPBITS32, __builtin_fmaf)
NX_RSTEP(D, double, F64OF, FPBITS64, __builtin_fma)

/* FPRound of sign * mant * 2^exp2 (mant != 0) to a format of E exponent and F fraction bits:
 * mode 0..3 = RN/RP/RM/RZ, 4 = round to odd; ahp: the alternative half precision (no
 * infinities, saturates); fz: a result tiny before rounding becomes zero.  Returns the bits. */
NXFP u64 NX_FROUND(int sign, u64 mant, int exp2, int E, int F, int mode, int ahp, int fz) {
    int lz = __builtin_clzll(mant);
    mant <<= lz; exp2 -= lz;                        /* value = mant * 2^exp2, mant in [2^63, 2^64) */
    int e = exp2 + 63, bias = (1 << (E - 1)) - 1, emin = 1 - bias;
    u64 sbit = (u64)sign << (E + F);
    if (fz && e < emin) return sbit;
    int ee = e < emin ? emin : e;
    int shift = ee - F - exp2;                      /* >= 63 - F */
    u64 q, halfbit, sticky;
    if (shift >= 65) { q = 0; halfbit = 0; sticky = 1; }
    else if (shift == 64) { q = 0; halfbit = mant >> 63; sticky = (mant << 1) != 0; }
    else { q = mant >> shift; u64 rem = mant << (64 - shift); halfbit = rem >> 63; sticky = (rem << 1) != 0; }
    int inexact = (halfbit | sticky) != 0;
    int up = mode == 0 ? (halfbit && (sticky || (q & 1))) : mode == 1 ? (inexact && !sign)
           : mode == 2 ? (inexact && sign) : 0;
    q += (u64)up;
    if (mode == 4 && inexact) q |= 1;
    u64 bits = ((u64)(ee - emin) << F) + q;       /* a carry out of q moves into the exponent */
    u64 emaxf = ((u64)1 << E) - 1;
    if (!ahp) {
        if ((bits >> F) >= emaxf) {
            int to_inf = mode == 0 || (mode == 1 && !sign) || (mode == 2 && sign);
            bits = to_inf ? emaxf << F : (emaxf << F) - 1;
        }
    } else if ((bits >> F) > emaxf) {
        bits = ((u64)1 << (E + F)) - 1;
    }
    return sbit | bits;
}

/* FPConvert from a single/double (bits x, N = 32/64) to half precision or, with N = 64 and
 * to = 32, to single (FCVTXN: mode 4, round to odd).  FZ applies to the input only (FZ16 is
 * ignored by conversions); AHP and DN as FPCR says. */
NXFP u64 NX_FCVT_NARROW(u64 x, int N, int to, int mode, u64 fpcr) {
    int E = NX_FE(N), F = NX_FF(N), TE = NX_FE(to), TF = NX_FF(to);
    int ahp = to == 16 && NX_AHP(fpcr);
    u64 emax = ((u64)1 << E) - 1, temax = ((u64)1 << TE) - 1;
    int sign = (int)(x >> (N - 1) & 1);
    u64 expf = x >> F & emax, frac = x & (((u64)1 << F) - 1);
    u64 sbit = (u64)sign << (to - 1);
    if (expf == emax) {
        if (frac) {                                 /* NaN */
            if (ahp) return sbit;
            if (NX_DN(fpcr)) return (temax << TF) | ((u64)1 << (TF - 1));
            return sbit | (temax << TF) | ((u64)1 << (TF - 1)) | (frac >> (F - TF));
        }
        return ahp ? sbit | (((u64)1 << (to - 1)) - 1) : sbit | (temax << TF);   /* infinity */
    }
    if (expf == 0 && (frac == 0 || NX_FZ(fpcr))) return sbit;
    int bias = (1 << (E - 1)) - 1;
    u64 mant = expf ? frac | ((u64)1 << F) : frac;
    int exp2 = (expf ? (int)expf : 1) - bias - F;
    return NX_FROUND(sign, mant, exp2, TE, TF, mode, ahp, to == 32 && NX_FZ(fpcr));
}
NXI u16 NX_F2H(float a, u64 fpcr) { return (u16)NX_FCVT_NARROW(FPBITS32(a), 32, 16, NX_RMODE(fpcr), fpcr); }
NXI u16 NX_D2H(double a, u64 fpcr) { return (u16)NX_FCVT_NARROW(FPBITS64(a), 64, 16, NX_RMODE(fpcr), fpcr); }
NXI float NX_D2F_ODD(double a, u64 fpcr) { return F32OF((u32)NX_FCVT_NARROW(FPBITS64(a), 64, 32, 4, fpcr)); }

/* FPConvert from half precision to single (N=32) or double (N=64): exact; a NaN is quietened
 * (its payload moves to the top of the wider fraction) or the default NaN under DN; with AHP
 * the top exponent is an ordinary one. */
NXFP u64 NX_FCVT_FROM_HALF(u16 h, int N, u64 fpcr) {
    int E = NX_FE(N), F = NX_FF(N);
    u64 emax = ((u64)1 << E) - 1;
    u64 sbit = (u64)(h >> 15) << (N - 1);
    u32 expf = h >> 10 & 31, frac = h & 0x3ff;
    if (expf == 31 && !NX_AHP(fpcr)) {
        if (!frac) return sbit | emax << F;
        if (NX_DN(fpcr)) return (emax << F) | ((u64)1 << (F - 1));
        return sbit | (emax << F) | ((u64)1 << (F - 1)) | ((u64)frac << (F - 10));
    }
    if (expf == 0 && frac == 0) return sbit;
    u32 mant = expf ? frac | 0x400 : frac;
    int e = (expf ? (int)expf : 1) - 15;            /* value = mant * 2^(e - 10) */
    int lz = __builtin_clz(mant) - 21;              /* normalise mant to 11 bits */
    mant <<= lz; e -= lz;
    int bias = (1 << (E - 1)) - 1;
    return sbit | (u64)(e + bias) << F | ((u64)(mant & 0x3ff) << (F - 10));
}
NXI float NX_H2F(u16 h, u64 fpcr) { return F32OF((u32)NX_FCVT_FROM_HALF(h, 32, fpcr)); }
NXI double NX_H2D(u16 h, u64 fpcr) { return F64OF(NX_FCVT_FROM_HALF(h, 64, fpcr)); }

/* FJCVTZS: the double rounded toward zero, modulo 2^32 (JavaScript's ToInt32); *z is 1 when
 * the conversion was exact and in the signed 32-bit range (and not -0). */
NXI u32 NX_FJCVTZS(u64 b, u64 fpcr, u8 *z) {
    int sign = (int)(b >> 63);
    int expf = (int)(b >> 52 & 0x7ff);
    u64 frac = b & 0xfffffffffffffull;
    if (expf == 0x7ff) { *z = 0; return 0; }
    if (expf == 0) { *z = (u8)(!sign && (frac == 0 || NX_FZ(fpcr))); return 0; }   /* a denormal kept is inexact */
    u64 m = frac | ((u64)1 << 52);
    int e = expf - 1075;                            /* value = m * 2^e */
    u64 ip; int inexact = 0, in_range;
    if (e >= 0) { ip = e >= 64 ? 0 : m << e; in_range = 0; }
    else {
        ip = -e >= 64 ? 0 : m >> -e;
        inexact = -e >= 64 ? 1 : (m & (((u64)1 << -e) - 1)) != 0;
        in_range = sign ? ip <= 0x80000000ull : ip <= 0x7fffffffull;
    }
    *z = (u8)(in_range && !inexact && !(sign && ip == 0));
    return sign ? (u32)(0u - (u32)ip) : (u32)ip;
}

/* FMULX: FMUL, except that inf * 0 (after FZ) is 2 with the product's sign */
#define NX_FMULX(T, F)                                                                       \
NXI F FMULX_##T(F a, F b, u64 fpcr) {                                                        \
    F za = FZIN_##T(a, fpcr), zb = FZIN_##T(b, fpcr);                                        \
    if (UNLIKELY((__builtin_isinf(za) && zb == 0) || (za == 0 && __builtin_isinf(zb))))      \
        return __builtin_signbit(za) != __builtin_signbit(zb) ? (F)-2 : (F)2;                \
    return FPRD_##T(a * b, a, b, 0, 2, fpcr); }
NX_FMULX(S, float)
NX_FMULX(D, double)

/* FRINT32Z/FRINT32X/FRINT64Z/FRINT64X: rounded to an integral value (toward zero, or as FPCR
 * says: the host's MXCSR holds the guest's mode) that fits an intN; NaN, infinity and values
 * out of range give -2^(N-1). */
#define NX_FRINTN(T, F, SUF)                                                           \
NXI F FRINT##T##Z(F a, F lim) { F r = __builtin_trunc##SUF(a); return (r >= -lim && r < lim) ? r : -lim; } \
NXI F FRINT##T##X(F a, F lim) { F r = __builtin_rint##SUF(a); return (r >= -lim && r < lim) ? r : -lim; }
NX_FRINTN(S, float, f)
NX_FRINTN(D, double, )

/* ---- FPSR's cumulative exception flags (IOC DZC OFC UFC IXC) ----
 * Lifted code never tracks them: the host's MXCSR status bits collect them as the FP
 * instructions run.  MRS FPSR reads s->fpsr ORed with the MXCSR flags (IE->IOC, ZE->DZC,
 * OE->OFC, UE->UFC, PE->IXC); MSR FPSR writes s->fpsr and clears them; MSR FPCR keeps them.
 * So code that never reads FPSR pays nothing. */
NXI u64 NX_FPSR_HOST(void) {
#if defined(__x86_64__)
    u32 m;
    __asm__ volatile("stmxcsr %0" : "=m"(m) : : "memory");
    return (m & 1) | (m >> 1 & 2) | (m >> 1 & 4) | (m >> 1 & 8) | (m >> 1 & 16);
#else
    return 0;
#endif
}
NXI void NX_FPSR_CLEAR_HOST(void) {
#if defined(__x86_64__)
    u32 m;
    __asm__ volatile("stmxcsr %0" : "=m"(m) : : "memory");
    m &= ~0x3fu;
    __asm__ volatile("ldmxcsr %0" : : "m"(m) : "memory");
#endif
}
/* MSR FPCR that keeps the flags already raised (NX_FPCR_APPLY loads a fresh MXCSR). */
NXI void NX_FPCR_APPLY_KEEP(u64 fpcr) {
#if defined(__x86_64__)
    u32 old, m = NX_MXCSR_OF(fpcr);
    __asm__ volatile("stmxcsr %0" : "=m"(old) : : "memory");
    m |= old & 0x3fu;
    __asm__ volatile("ldmxcsr %0" : : "m"(m) : "memory");
#else
    (void)fpcr;
#endif
}

/* ---- FP16 arithmetic (scalar): a half's value is exact as a double, and a sum, difference
 * or product of two halves is exact in a double; a quotient or square root computed in double
 * (53 bits >= 2 * 11 + 2) rounds to half as one rounding would.  So each operation is the
 * double operation (the host's MXCSR carries the rounding mode, which only matters for the
 * sign of an exact zero there) then one rounding to half (NX_HROUND) under FPCR.RMode and FZ16.
 * FMADD's exact value needs 81 bits: it is an __int128 sum of integers in units of 2^-48.
 * NaNs follow the same rules as single/double, in the half's own bits. ---- */
NX_FPNAN(H, u16, 0x1fu, 10, 9, 0x7e00u)
#define NX_FZ16(fpcr) ((int)((fpcr) >> 19 & 1))
#define NX_HDEFNAN 0x7e00u
/* FZ16: a denormal half input counts as a zero of its sign */
NXI u16 NX_HFZ(u16 h, u64 fpcr) { return (NX_FZ16(fpcr) && !(h & 0x7c00u)) ? (u16)(h & 0x8000u) : h; }
NXI double NX_HVAL(u16 h, u64 fpcr) { return F64OF(NX_FCVT_FROM_HALF(NX_HFZ(h, fpcr), 64, 0)); }
NXI u16 NX_HNAN(u16 a, u16 b, u16 c, int n, u64 fpcr) { return NX_DN(fpcr) ? (u16)NX_HDEFNAN : NAN3_H(a, b, c, n); }
/* round a double that is not a NaN to half precision (FPRound with FZ16) */
NXFP u16 NX_HROUND(double r, u64 fpcr) {
    u64 b = FPBITS64(r);
    int sign = (int)(b >> 63);
    u64 expf = b >> 52 & 0x7ff, frac = b & 0xfffffffffffffull;
    if (expf == 0x7ff) return (u16)(sign << 15 | 0x7c00);
    if (expf == 0 && frac == 0) return (u16)(sign << 15);
    u64 mant = expf ? frac | ((u64)1 << 52) : frac;
    int exp2 = (expf ? (int)expf : 1) - 1075;
    return (u16)NX_FROUND(sign, mant, exp2, 5, 10, NX_RMODE(fpcr), 0, NX_FZ16(fpcr));
}
#define NX_HOP2(NAME, EXPR)                                                                  \
NXFP u16 NAME(u16 a, u16 b, u64 fpcr) {                                                       \
    if (UNLIKELY(ISNAN_H(a) || ISNAN_H(b))) return NX_HNAN(a, b, 0, 2, fpcr);                \
    double x = NX_HVAL(a, fpcr), y = NX_HVAL(b, fpcr), r = (EXPR);                           \
    return r != r ? (u16)NX_HDEFNAN : NX_HROUND(r, fpcr); }
NX_HOP2(FADD_H, x + y)
NX_HOP2(FSUB_H, x - y)
NX_HOP2(FMUL_H, x * y)
NX_HOP2(FDIV_H, x / y)
NXI u16 FABD_H(u16 a, u16 b, u64 fpcr) { return (u16)(FSUB_H(a, b, fpcr) & 0x7fffu); }   /* FPAbs(FPSub) */
/* FMAX/FMIN/FMAXNM/FMINNM (nm: a quiet NaN loses to a number) */
NXFP u16 NX_HMINMAX(u16 a, u16 b, u64 fpcr, int max, int nm) {
    int na = ISNAN_H(a), nb = ISNAN_H(b);
    if (nm && na && !nb && !ISSNAN_H(a)) return NX_HFZ(b, fpcr);
    if (nm && nb && !na && !ISSNAN_H(b)) return NX_HFZ(a, fpcr);
    if (na || nb) return NX_HNAN(a, b, 0, 2, fpcr);
    double x = NX_HVAL(a, fpcr), y = NX_HVAL(b, fpcr);
    return NX_HROUND(max ? FMAX_D(x, y) : FMIN_D(x, y), fpcr);
}
NXFP u16 FSQRT_H(u16 a, u64 fpcr) {
    if (ISNAN_H(a)) return NX_HNAN(a, 0, 0, 1, fpcr);
    double x = NX_HVAL(a, fpcr);
    return x < 0 ? (u16)NX_HDEFNAN : NX_HROUND(__builtin_sqrt(x), fpcr);
}
/* FRINT[NPMZAXI] of a half: mode 0..3 = RN/RP/RM/RZ, 4 = ties away, 5 = FPCR's (host MXCSR) */
NXFP u16 FRINT_H(u16 a, int mode, u64 fpcr) {
    if (ISNAN_H(a)) return NX_HNAN(a, 0, 0, 1, fpcr);
    double x = NX_HVAL(a, fpcr);
    double r = mode == 0 ? __builtin_roundeven(x) : mode == 1 ? __builtin_ceil(x) : mode == 2 ? __builtin_floor(x)
             : mode == 3 ? __builtin_trunc(x) : mode == 4 ? NX_ROUND(x) : __builtin_rint(x);
    return NX_HROUND(r, fpcr);
}
/* a finite half as an integer number of 2^-24 (exact, < 2^40 in magnitude) */
NXI i64 NX_HINT24(u16 h) {
    u32 e = h >> 10 & 31, f = h & 0x3ffu;
    i64 m = e ? (i64)(f | 0x400u) << (e - 1) : (i64)f;
    return h >> 15 ? -m : m;
}
/* FPMulAdd(addend c, a, b) = c + a*b in half precision, rounded once (times 2^scale first:
 * FRSQRTS halves its sum before the one rounding) */
NXFP u16 NX_HFMA(u16 c, u16 a, u16 b, int scale, u64 fpcr) {
    a = NX_HFZ(a, fpcr); b = NX_HFZ(b, fpcr); c = NX_HFZ(c, fpcr);
    int infa = (a & 0x7fffu) == 0x7c00u, infb = (b & 0x7fffu) == 0x7c00u, infc = (c & 0x7fffu) == 0x7c00u;
    int za = !(a & 0x7fffu), zb = !(b & 0x7fffu), zc = !(c & 0x7fffu);
    int infzero = (infa && zb) || (za && infb);
    if (ISNAN_H(a) || ISNAN_H(b) || ISNAN_H(c)) {
        if (ISNAN_H(c) && !ISSNAN_H(c) && !ISSNAN_H(a) && !ISSNAN_H(b) && infzero) return NX_HDEFNAN;
        return NX_HNAN(c, a, b, 3, fpcr);
    }
    if (infzero) return NX_HDEFNAN;
    int sp = (a ^ b) >> 15 & 1, sc = c >> 15 & 1;
    if (infa || infb || infc) {
        if ((infa || infb) && infc && sp != sc) return NX_HDEFNAN;
        return (u16)(((infa || infb) ? sp : sc) << 15 | 0x7c00u);
    }
    if ((za || zb) && zc) return (u16)((sp == sc ? sc : NX_RMODE(fpcr) == 2) << 15);
    i128 m = (i128)NX_HINT24(a) * NX_HINT24(b) + ((i128)NX_HINT24(c) << 24);   /* units of 2^-48 */
    if (m == 0) return (u16)((NX_RMODE(fpcr) == 2) << 15);
    int sign = m < 0;
    u128 mag = (u128)(sign ? -m : m);
    int exp2 = -48 + scale;
    while (mag >> 64) { mag = (mag >> 1) | (mag & 1); exp2++; }   /* keep a sticky bit */
    return (u16)NX_FROUND(sign, (u64)mag, exp2, 5, 10, NX_RMODE(fpcr), 0, NX_FZ16(fpcr));
}
NXI u16 FMA_H(u16 c, u16 a, u16 b, u64 fpcr) { return NX_HFMA(c, a, b, 0, fpcr); }
/* FRECPS/FRSQRTS on halves: -a (NaN sign flipped too), inf * 0 gives 2 (1.5) */
NXFP u16 FRECPS_H(u16 a, u16 b, u64 fpcr) {
    u16 na = (u16)(a ^ 0x8000u), za = NX_HFZ(na, fpcr), zb = NX_HFZ(b, fpcr);
    if (!ISNAN_H(na) && !ISNAN_H(b) && (((za & 0x7fffu) == 0x7c00u && !(zb & 0x7fffu)) || (!(za & 0x7fffu) && (zb & 0x7fffu) == 0x7c00u)))
        return 0x4000u;
    return NX_HFMA(0x4000u, na, b, 0, fpcr);
}
NXFP u16 FRSQRTS_H(u16 a, u16 b, u64 fpcr) {
    u16 na = (u16)(a ^ 0x8000u), za = NX_HFZ(na, fpcr), zb = NX_HFZ(b, fpcr);
    if (!ISNAN_H(na) && !ISNAN_H(b) && (((za & 0x7fffu) == 0x7c00u && !(zb & 0x7fffu)) || (!(za & 0x7fffu) && (zb & 0x7fffu) == 0x7c00u)))
        return 0x3e00u;
    if (ISNAN_H(na) || ISNAN_H(b)) return NX_HNAN(na, b, 0, 2, fpcr);
    u16 r = NX_HFMA(0x4200u, na, b, -1, fpcr);     /* (3 - a*b) / 2 */
    return r;
}
/* FMULX: FMUL, except that inf * 0 is 2 with the product's sign */
NXFP u16 FMULX_H(u16 a, u16 b, u64 fpcr) {
    u16 za = NX_HFZ(a, fpcr), zb = NX_HFZ(b, fpcr);
    if (!ISNAN_H(a) && !ISNAN_H(b) && (((za & 0x7fffu) == 0x7c00u && !(zb & 0x7fffu)) || (!(za & 0x7fffu) && (zb & 0x7fffu) == 0x7c00u)))
        return (u16)(((a ^ b) & 0x8000u) | 0x4000u);
    return FMUL_H(a, b, fpcr);
}
/* FCVT[NMAPZ][SU] to 16-bit lanes: saturating, NaN -> 0 */
NXI u16 FCVT_S16(double d) { if (d != d) return 0; if (d >= 32767.0) return 0x7fffu; if (d <= -32768.0) return 0x8000u; return (u16)(i16)d; }
NXI u16 FCVT_U16(double d) { if (d != d || d <= 0) return 0; if (d >= 65535.0) return 0xffffu; return (u16)d; }
/* SCVTF/UCVTF to half: the integer's magnitude and sign, rounded once */
NXI u16 NX_I2H(u64 mag, int sign, u64 fpcr) {
    if (!mag) return 0;
    return (u16)NX_FROUND(sign, mag, 0, 5, 10, NX_RMODE(fpcr), 0, 0);
}
/* SCVTF/UCVTF Hd, Rn, #fbits: (magnitude / 2^fbits) rounded once; FZ16 flushes a tiny result */
NXI u16 NX_I2H_FIX(u64 mag, int sign, int fbits, u64 fpcr) {
    if (!mag) return 0;
    return (u16)NX_FROUND(sign, mag, -fbits, 5, 10, NX_RMODE(fpcr), 0, NX_FZ16(fpcr));
}
/* FCMP of halves: NZCV */
NXFP u32 NX_HCMP(u16 a, u16 b, u64 fpcr) {
    if (ISNAN_H(a) || ISNAN_H(b)) return 3;
    double x = NX_HVAL(a, fpcr), y = NX_HVAL(b, fpcr);
    return x == y ? 6 : x < y ? 8 : 2;
}
/* FSQRT as the one host instruction.  __builtin_sqrt is libm's sqrt, which sets errno: unless
 * built with -fno-math-errno clang guards every square root with a compare against zero and a
 * call of sqrt() for negative inputs (three more instructions on the path).  The elementwise
 * builtin has no errno.  The empty asm keeps the square root computed on every path: without
 * it clang folds FPR's NaN test of the result into "x < 0" and computes the root only where it
 * is a number, so a negative input would no longer raise Invalid Operation in MXCSR (FPSR.IOC,
 * tests/recompiler/test_fp_fpsr.py). */
#if defined(__has_builtin) && __has_builtin(__builtin_elementwise_sqrt)
NXI double NX_SQRTD(double x) { double r = __builtin_elementwise_sqrt(x); NX_FP_OPAQUE(r); return r; }
NXI float NX_SQRTF(float x) { float r = __builtin_elementwise_sqrt(x); NX_FP_OPAQUE(r); return r; }
#else
NXI double NX_SQRTD(double x) { return __builtin_sqrt(x); }
NXI float NX_SQRTF(float x) { return __builtin_sqrtf(x); }
#endif
/* FP -> integer (FCVT[NPMZA][SU]: FPToFixed, saturating, NaN -> 0), the common case in one host
 * conversion.  x86's cvttsd2si/cvttss2si to 64 bits give the "integer indefinite" INT64_MIN for
 * a NaN or an out-of-range input, so a range test of the 64-bit result picks every value the
 * conversion got right (an integral ``r`` after the instruction's own rounding, or any value for
 * round towards zero, which the conversion does itself); NaNs, saturation and a true INT64_MIN
 * go to FCVT_* (lifted.h) on the same ``r``, as before.  FCVT_* truncates a non-integral input
 * the same way cvtt does, so passing the unrounded value in RZ mode changes no result.  Before:
 * a rounding, three compares and their branches and the conversion (11 instructions for
 * FCVTZS Wd, Dn); now the conversion, a sign extension, a compare and a branch. */
#if defined(__x86_64__)
NXI i64 NX_CVTT_D(double r) { return __builtin_ia32_cvttsd2si64((NxV2f64){ r, 0.0 }); }
NXI i64 NX_CVTT_F(float r) { return __builtin_ia32_cvttss2si64((NxV4f32){ r, 0.0f, 0.0f, 0.0f }); }
#define NX_FCVT_FAST(SUF, F, CVT)                                                                 \
NXI u64 NX_FCVT_S32##SUF(F r) { i64 v = CVT(r); if (LIKELY(v == (i64)(i32)v)) return (u32)v; return FCVT_S32((double)r); } \
NXI u64 NX_FCVT_U32##SUF(F r) { i64 v = CVT(r); if (LIKELY((u64)v <= 0xffffffffull)) return (u64)v; return FCVT_U32((double)r); } \
NXI u64 NX_FCVT_S64##SUF(F r) { i64 v = CVT(r); if (LIKELY(v != INT64_MIN)) return (u64)v; return FCVT_S64((double)r); } \
NXI u64 NX_FCVT_U64##SUF(F r) { i64 v = CVT(r); if (LIKELY(v >= 0)) return (u64)v; return FCVT_U64((double)r); }
NX_FCVT_FAST(D, double, NX_CVTT_D)
NX_FCVT_FAST(F, float, NX_CVTT_F)
#else
#define NX_FCVT_SLOW(SUF, F) \
NXI u64 NX_FCVT_S32##SUF(F r) { return FCVT_S32((double)r); } NXI u64 NX_FCVT_U32##SUF(F r) { return FCVT_U32((double)r); } \
NXI u64 NX_FCVT_S64##SUF(F r) { return FCVT_S64((double)r); } NXI u64 NX_FCVT_U64##SUF(F r) { return FCVT_U64((double)r); }
NX_FCVT_SLOW(D, double)
NX_FCVT_SLOW(F, float)
#endif
#endif
