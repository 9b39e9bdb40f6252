"""Scalar half-precision arithmetic (FEAT_FP16 on H registers): FADD/FSUB/FMUL/FDIV/FNMUL,
FMAX/FMIN(NM), FABS/FNEG/FSQRT/FMOV, FRINT*, FMADD/FMSUB/FNMADD/FNMSUB, FCMP(E)/FCCMP(E), FCSEL,
FMOV (immediate and to/from general registers), SCVTF/UCVTF and FCVT[NPMZA][SU].

The vector FP16 forms of the three-same and two-register groups too: FADD/FSUB/FMUL/FDIV/FABD/
FMULX, FMLA/FMLS, FMAX/FMIN(NM) and their pairwise forms, FADDP, the compares (also against
zero and absolute), FRECPS/FRSQRTS, FRECPE/FRSQRTE, FRINT*, FCVT[NMAPZ][SU], [SU]CVTF, FABS/FNEG/FSQRT.

Each is a helper of lifted_fp.h working on the half's bits: the value as an exact double, the
operation, one rounding to half under FPCR.RMode with FZ16 (not FZ) and DN.  The scalar forms
of the same groups (FABD Hd, FCMEQ Hd, FRECPE/FRECPX Hd, FCVTZS Hd...) share the handlers; the
by-element forms are in fp_simd.py's h_elem, FMAXV/FMINV in fp_across.py, FMOV Vd.8H, #imm in
modified_imm.py's h_fmov_h, the fixed-point conversions in fp_fixed.py."""

from __future__ import annotations

import re

from recompiler.decode import Insn
from recompiler.lift import vector
from recompiler.lift.emitter import FunctionEmitter


def _h(n: int) -> str:
    return f"v{n}.h[0]"


def _hset(em: FunctionEmitter, d: int, expr: str) -> None:
    """A half result: lane 0 of Vd, the rest of the register cleared."""
    em.out(f"{{ u16 _h = {expr}; {vector.low(em, d, '_h')} }}")


_FRINT_MODE = {8: 0, 9: 1, 10: 2, 11: 3, 12: 4, 14: 5, 15: 5}  # N P M Z A X I


def h_dp1_h(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    op, a, d = f["opcode"], _h(f["Rn"]), f["Rd"]
    if op == 0:
        _hset(em, d, a)
    elif op == 1:
        _hset(em, d, f"(u16)({a} & 0x7fffu)")
    elif op == 2:
        _hset(em, d, f"(u16)({a} ^ 0x8000u)")
    elif op == 3:
        _hset(em, d, f"FSQRT_H({a}, s->fpcr)")
    else:  # op in _FRINT_MODE; the rows take no other encoding
        _hset(em, d, f"FRINT_H({a}, {_FRINT_MODE[op]}, s->fpcr)")


_DP2 = {
    0: "FMUL_H({a}, {b}, s->fpcr)",
    1: "FDIV_H({a}, {b}, s->fpcr)",
    2: "FADD_H({a}, {b}, s->fpcr)",
    3: "FSUB_H({a}, {b}, s->fpcr)",
    4: "NX_HMINMAX({a}, {b}, s->fpcr, 1, 0)",
    5: "NX_HMINMAX({a}, {b}, s->fpcr, 0, 0)",
    6: "NX_HMINMAX({a}, {b}, s->fpcr, 1, 1)",
    7: "NX_HMINMAX({a}, {b}, s->fpcr, 0, 1)",
    8: "(u16)(FMUL_H({a}, {b}, s->fpcr) ^ 0x8000u)",
}  # FNMUL = FPNeg(FPMul), NaNs too


def h_dp2_h(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    e = _DP2[f["opcode"]]  # (the rows take no other opcode)
    _hset(em, f["Rd"], e.format(a=_h(f["Rn"]), b=_h(f["Rm"])))


def h_dp3_h(em: FunctionEmitter, i: Insn) -> None:
    """FMADD c+a*b, FMSUB c-a*b, FNMADD -c-a*b, FNMSUB -c+a*b, as FPMulAdd(addend, op1, op2)
    with the operands negated first (a NaN operand keeps its flipped sign)."""
    f = i.f
    a, b, c = _h(f["Rn"]), _h(f["Rm"]), _h(f["Ra"])
    na = f"(u16)({a} ^ 0x8000u)" if f["o0"] != f["o1"] else a
    nc = f"(u16)({c} ^ 0x8000u)" if f["o1"] else c
    _hset(em, f["Rd"], f"FMA_H({nc}, {na}, {b}, s->fpcr)")


def h_cmp_h(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    b = "0" if f["opc"] & 8 else _h(f["Rm"])
    em.flags_touched()
    em.out(f"FLAGS_SET(NX_HCMP({_h(f['Rn'])}, {b}, s->fpcr));")


def h_ccmp_h(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    em.flags_touched()
    em.out(f"if ({em.cond(f['cond'])}) FLAGS_SET(NX_HCMP({_h(f['Rn'])}, {_h(f['Rm'])}, s->fpcr)); else FLAGS_SET({f['nzcv']});")


def h_fcsel_h(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    _hset(em, f["Rd"], f"{em.cond(f['cond'])} ? {_h(f['Rn'])} : {_h(f['Rm'])}")


def expand_imm16(imm8: int) -> int:
    """VFPExpandImm for half precision: sign, NOT(b6):b6:b6:imm8<5:4> exponent, imm8<3:0> fraction top."""
    b6 = imm8 >> 6 & 1
    exp = ((b6 ^ 1) << 4) | ((3 if b6 else 0) << 2) | (imm8 >> 4 & 3)
    return (imm8 >> 7) << 15 | exp << 10 | (imm8 & 0xF) << 6


def h_fmov_imm_h(em: FunctionEmitter, i: Insn) -> None:
    _hset(em, i.f["Rd"], f"(u16){expand_imm16(i.f['imm8']):#x}u")


_ROUND = ["__builtin_roundeven", "__builtin_ceil", "__builtin_floor", "__builtin_trunc"]


def h_fp_int_h(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, rmode, op, n, d = f["sf"], f["rmode"], f["opcode"], f["Rn"], f["Rd"]
    bits = 64 if sf else 32
    if rmode == 0 and op == 6:  # FMOV Wd/Xd, Hn
        em.setx(d, f"(u64){_h(n)}", sf)
    elif rmode == 0 and op == 7:  # FMOV Hd, Wn/Xn
        _hset(em, d, f"(u16){em.x(n)}")
    elif rmode == 0 and op in (2, 3):  # SCVTF / UCVTF
        if op == 3:
            _hset(em, d, f"NX_I2H((u64){em.x(n, sf)}, 0, s->fpcr)")
        else:
            v = f"(i64){em.x(n)}" if sf else f"(i64)(i32){em.x(n, 0)}"
            em.out(
                f"{{ i64 _v = {v}; u16 _h = NX_I2H(_v < 0 ? 0 - (u64)_v : (u64)_v, _v < 0, s->fpcr); {vector.low(em, d, '_h')} }}"
            )
    elif op in (0, 1):  # FCVT[NPMZ][SU]
        em.setx(d, f"FCVT_{'S' if op == 0 else 'U'}{bits}({_ROUND[rmode]}(NX_HVAL({_h(n)}, s->fpcr)))", sf)
    else:  # rmode == 0 and op in (4, 5) (FCVTA[SU]); the rows take no other encoding
        em.setx(d, f"FCVT_{'S' if op == 4 else 'U'}{bits}(NX_ROUND(NX_HVAL({_h(n)}, s->fpcr)))", sf)


# ---- vector FP16 ------------------------------------------------------------------------------
def _hloop(em: FunctionEmitter, d: int, lanes: int, expr: str, srcs: dict[str, int]) -> None:
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    em.out(f"{{ {loads} NxVec _r; _r.q = 0; for (int i = 0; i < {lanes}; i++) _r.h[i] = {expr}; v{d} = _r; }}")


def _lanes(i: Insn) -> int:
    """8 or 4 halves (vector, by Q), or 1 for the scalar forms (the rest of Vd cleared)."""
    return 1 if "scalar" in i.group else (8 if i.f["Q"] else 4)


# the scalar forms of the two groups (others there are unallocated)
_SCALAR_THREE = {(0, 0, 3), (0, 0, 4), (0, 0, 7), (0, 1, 7), (1, 0, 4), (1, 0, 5), (1, 1, 2), (1, 1, 4), (1, 1, 5)}


_MASK = "? (u16)0xffffu : (u16)0"
_THREE = {  # (U, a, opcode) -> lane expression over A, B, C (Vd), PA/PB (pairwise operands)
    (0, 0, 0): "NX_HMINMAX(A, B, s->fpcr, 1, 1)",
    (0, 0, 1): "FMA_H(C, A, B, s->fpcr)",
    (0, 0, 2): "FADD_H(A, B, s->fpcr)",
    (0, 0, 3): "FMULX_H(A, B, s->fpcr)",
    (0, 0, 4): f"(NX_HVAL(A, s->fpcr) == NX_HVAL(B, s->fpcr)) {_MASK}",
    (0, 0, 6): "NX_HMINMAX(A, B, s->fpcr, 1, 0)",
    (0, 0, 7): "FRECPS_H(A, B, s->fpcr)",
    (0, 1, 0): "NX_HMINMAX(A, B, s->fpcr, 0, 1)",
    (0, 1, 1): "FMA_H(C, (u16)(A ^ 0x8000u), B, s->fpcr)",
    (0, 1, 2): "FSUB_H(A, B, s->fpcr)",
    (0, 1, 6): "NX_HMINMAX(A, B, s->fpcr, 0, 0)",
    (0, 1, 7): "FRSQRTS_H(A, B, s->fpcr)",
    (1, 0, 0): "NX_HMINMAX(PA, PB, s->fpcr, 1, 1)",
    (1, 0, 2): "FADD_H(PA, PB, s->fpcr)",
    (1, 0, 3): "FMUL_H(A, B, s->fpcr)",
    (1, 0, 4): f"(NX_HVAL(A, s->fpcr) >= NX_HVAL(B, s->fpcr)) {_MASK}",
    (1, 0, 5): f"(__builtin_fabs(NX_HVAL(A, s->fpcr)) >= __builtin_fabs(NX_HVAL(B, s->fpcr))) {_MASK}",
    (1, 0, 6): "NX_HMINMAX(PA, PB, s->fpcr, 1, 0)",
    (1, 0, 7): "FDIV_H(A, B, s->fpcr)",
    (1, 1, 0): "NX_HMINMAX(PA, PB, s->fpcr, 0, 1)",
    (1, 1, 2): "FABD_H(A, B, s->fpcr)",
    (1, 1, 4): f"(NX_HVAL(A, s->fpcr) > NX_HVAL(B, s->fpcr)) {_MASK}",
    (1, 1, 5): f"(__builtin_fabs(NX_HVAL(A, s->fpcr)) > __builtin_fabs(NX_HVAL(B, s->fpcr))) {_MASK}",
    (1, 1, 6): "NX_HMINMAX(PA, PB, s->fpcr, 0, 0)",
}


def h_three_same_fp16(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    key = (f["U"], f["a"], f["opcode"])
    e = _THREE[key]  # (the rows, vector and scalar, take no other U/a/opcode)
    half = 4 if f.get("Q") else 2
    subst = {
        "PA": f"(i < {half} ? a.h[2*i] : b.h[2*(i-{half})])",
        "PB": f"(i < {half} ? a.h[2*i+1] : b.h[2*(i-{half})+1])",
        "A": "a.h[i]",
        "B": "b.h[i]",
        "C": "c.h[i]",
    }
    e = re.sub(r"\b(PA|PB|A|B|C)\b", lambda m: subst[m.group(1)], e)
    _hloop(em, f["Rd"], _lanes(i), e, {"a": f["Rn"], "b": f["Rm"], "c": f["Rd"]})


_RINT = {(0, 0, 24): 0, (0, 0, 25): 2, (0, 1, 24): 1, (0, 1, 25): 3, (1, 0, 24): 4, (1, 0, 25): 5, (1, 1, 25): 5}
_CVT = {
    (0, 26): "__builtin_roundeven",
    (0, 27): "__builtin_floor",
    (0, 28): "NX_ROUND",
    (1, 26): "__builtin_ceil",
    (1, 27): "__builtin_trunc",
}  # (a, opcode)
_ZCMP = {(0, 12): ">", (0, 13): "==", (0, 14): "<", (1, 12): ">=", (1, 13): "<="}  # (U, opcode), a = 1


def h_two_reg_fp16(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    U, a, op = f["U"], f["a"], f["opcode"]
    A = "a.h[i]"
    # (the scalar rows take only the conversions, FRECPE/FRSQRTE/FRECPX and the compares with zero)
    if (U, a, op) in _RINT:
        e = f"FRINT_H({A}, {_RINT[(U, a, op)]}, s->fpcr)"
    elif (a, op) in _CVT:
        e = f"FCVT_{'U' if U else 'S'}16({_CVT[(a, op)]}(NX_HVAL({A}, s->fpcr)))"
    elif a == 0 and op == 29:  # SCVTF / UCVTF
        e = f"NX_I2H({A}, 0, s->fpcr)" if U else f"NX_I2H((i16){A} < 0 ? (u64)-(i64)(i16){A} : {A}, (i16){A} < 0, s->fpcr)"
    elif a == 1 and op == 29:  # FRECPE / FRSQRTE
        e = f"(u16)NX_{'FRSQRTE' if U else 'FRECPE'}({A}, 16, s->fpcr)"
    elif a == 1 and (U, op) in _ZCMP:
        e = f"(NX_HVAL({A}, s->fpcr) {_ZCMP[(U, op)]} 0) {_MASK}"
    elif a == 1 and op == 15:  # FABS / FNEG
        e = f"(u16)({A} ^ 0x8000u)" if U else f"(u16)({A} & 0x7fffu)"
    elif (U, a, op) == (1, 1, 31):
        e = f"FSQRT_H({A}, s->fpcr)"
    else:  # (U, a, op) == (0, 1, 31) and "scalar" in i.group (FRECPX (unallocated as a vector form)); the rows take no other encoding
        e = f"(u16)NX_FRECPX({A}, 16, s->fpcr)"
    _hloop(em, f["Rd"], _lanes(i), e, {"a": f["Rn"]})
