"""Scalar floating point and the Advanced SIMD subset that compiled C and glibc's string
routines use.  Vector operations are lane loops over ``NxVec`` that clang vectorises.

FPCR: a guest ``MSR FPCR`` (control.py) copies RMode and FZ into the host's MXCSR
(``NX_FPCR_APPLY``), so each FP operation stays one host instruction in every rounding mode;
what MXCSR cannot say is done here: FPCR.DN on the NaN path (``FPRD_x``/``FDN_x``), FZ for the
operations that pick an operand (``FZIN_x``: FMAX/FMIN...), and conversions whose rounding is
fixed by the instruction use explicit rounding (roundeven, not rint).  Integer->FP conversions of
a register local go through ``NX_AFTER_FPCR`` so the compiler cannot hoist them above the MSR.
FPSR's cumulative flags come from the host's MXCSR at MRS FPSR (fp_fpsr.py).  The estimates,
half precision, FCVTXN, FRINT32/64 and FJCVTZS are in fp_recip.py, fp_half.py, fp_f16.py and
fp_round.py."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import vector
from recompiler.lift.emitter import FunctionEmitter

_LANE = {0: ("b", "u8", "i8", 8), 1: ("h", "u16", "i16", 16), 2: ("s", "u32", "i32", 32), 3: ("d", "u64", "i64", 64)}
_FT = {0: ("f", "float", "s", 4), 1: ("fd", "double", "d", 8)}


def _ftype(f: dict) -> tuple[str, str, str, int]:
    # ftype 10 is reserved (isa.py's ``!ftype=10``), 11 (half precision) the ``_h`` rows'
    return _FT[f["ftype"]]


def _fget(n: int, ft: tuple) -> str:
    return f"v{n}.{ft[0]}[0]"


def _fset(em: FunctionEmitter, d: int, ft: tuple, expr: str) -> None:
    # scalar FP writes clear the rest of the vector register
    em.out(f"{{ {ft[1]} _r = {expr}; {vector.low_fp(em, d, ft[0], '_r')} }}")


def _dn(T: str, expr: str) -> str:
    """``expr`` with FPCR.DN applied (a NaN result becomes the default NaN).  FPR_x(...) becomes
    FPRD_x(..., fpcr), whose DN test sits on the NaN path, so FPCR = 0 code is unchanged."""
    head = f"FPR_{T}("
    if expr.startswith(head) and expr.endswith(")"):
        depth = 0
        for k, ch in enumerate(expr[len(head) - 1 :], len(head) - 1):
            depth += (ch == "(") - (ch == ")")
            if depth == 0:
                if k == len(expr) - 1:
                    return f"FPRD_{T}({expr[len(head) : -1]}, s->fpcr)"
                break
    return f"FDN_{T}({expr}, s->fpcr)"


def _fset_dn(em: FunctionEmitter, d: int, ft: tuple, expr: str) -> None:
    """An arithmetic result: FPCR.DN turns a NaN into the default NaN."""
    _fset(em, d, ft, _dn("S" if ft[0] == "f" else "D", expr))


def h_fp_int(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, ftype, rmode, op = f["sf"], f["ftype"], f["rmode"], f["opcode"]
    n, d = f["Rn"], f["Rd"]
    if op in (6, 7):  # FMOV between general and FP registers
        if ftype == 2 and rmode == 1:  # FMOV Xd, Vn.D[1] / Vd.D[1], Xn
            if op == 6:
                em.setx(d, f"v{n}.d[1]")
            else:
                em.out(f"v{d}.d[1] = {em.x(n)};")
            return
        # (rmode 00 here; ftype 10 and sf != ftype are unallocated: isa.py's ``!`` clauses)
        if op == 6:
            em.setx(d, f"v{n}.{'d' if sf else 's'}[0]", sf)
        else:
            em.out(vector.low(em, d, f"({em.x(n, sf)})"))
        return
    ft = _ftype(f)
    if op in (2, 3) and rmode == 0:  # SCVTF / UCVTF
        x = f"NX_AFTER_FPCR({em.x(n)})"
        if op == 3 and sf:
            _fset(em, d, ft, f"NX_U64TO{'D' if ft[0] == 'fd' else 'F'}({x})")
            return
        src = f"(i64){x}" if sf else (f"(i32){x}" if op == 2 else f"(u32){x}")
        _fset(em, d, ft, f"({ft[1]}){src}")
        return
    if op in (0, 1):  # FCVT[NPMZ][SU]: rounding by rmode (N=0 ties-even, P=1, M=2, Z=3)
        # N is ties-to-even whatever FPCR.RMode says (rint would follow the host's MXCSR)
        rnd = ["__builtin_roundeven", "__builtin_ceil", "__builtin_floor", "__builtin_trunc"][rmode]
        if ft[0] == "f":
            rnd += "f"
        signed = op == 0
        bits = 64 if sf else 32
        fn = f"FCVT_{'S' if signed else 'U'}{bits}"
        em.setx(d, f"{fn}((double){rnd}({_fget(n, ft)}))", sf)
        return
    # rmode 00, opcode 10x: FCVTA[SU], ties away (the FP_INT rows take no other rmode/opcode)
    signed = op == 4
    bits = 64 if sf else 32
    em.setx(d, f"FCVT_{'S' if signed else 'U'}{bits}((double)NX_ROUND({_fget(n, ft)}))", sf)


def h_fp_dp1(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    ft = _ftype(f)
    op, n, d = f["opcode"], f["Rn"], f["Rd"]
    a = _fget(n, ft)
    suffix = "f" if ft[0] == "f" else ""
    if op == 0:
        em.out(f"{{ u64 _b = v{n}.d[0]; {vector.low(em, d, '(_b & ' + ('0xffffffffull' if ft[0] == 'f' else '~0ull') + ')')} }}")
        return
    if op in (1, 2):  # FABS / FNEG act on the sign bit (NaNs keep their payload)
        bit = "0x80000000u" if ft[0] == "f" else "0x8000000000000000ull"
        w = "s" if ft[0] == "f" else "d"
        expr = f"v{n}.{w}[0] & ~{bit}" if op == 1 else f"v{n}.{w}[0] ^ {bit}"
        em.out(f"{{ u64 _b = {expr}; {vector.low(em, d, '_b')} }}")
        return
    if op == 3:
        T = "S" if ft[0] == "f" else "D"
        _fset_dn(em, d, ft, f"FPR_{T}(__builtin_sqrt{suffix}({a}), {a}, 0, 0, 1)")
        return
    if op in (4, 5):  # FCVT between single and double
        dst = _FT[0] if op == 4 else _FT[1]  # (to its own precision: reserved, isa.py)
        _fset_dn(em, d, dst, f"NX_FCVT_DS({a}, s->fpcr)" if op == 4 else f"({dst[1]}){a}")
        return
    rnd = {
        8: "__builtin_rint",
        9: "__builtin_ceil",
        10: "__builtin_floor",
        11: "__builtin_trunc",
        12: "NX_ROUND",
        14: "__builtin_rint",
        15: "__builtin_nearbyint",
    }[op]  # (the FP_DP1 rows take no other opcode)
    if op == 8:
        rnd = "__builtin_roundeven"
    _fset_dn(em, d, ft, f"{rnd}{suffix}({a})")


def h_fp_dp2(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    ft = _ftype(f)
    a, b = _fget(f["Rn"], ft), _fget(f["Rm"], ft)
    op = f["opcode"]
    T = "S" if ft[0] == "f" else "D"
    arith = {0: "*", 1: "/", 2: "+", 3: "-"}
    if op in arith:
        e = f"FPR_{T}({a} {arith[op]} {b}, {a}, {b}, 0, 2)"
    elif op == 8:  # FNMUL = FPNeg(FPMul): a NaN result (the default NaN with DN too) is negated
        _fset(em, f["Rd"], ft, f"-FPRD_{T}({a} * {b}, {a}, {b}, 0, 2, s->fpcr)")
        return
    else:  # opcode 01xx (the FP_DP2 rows take opcode 0000-1000)
        e = f"{['FMAX', 'FMIN', 'FMAXNM', 'FMINNM'][op - 4]}_{T}(FZIN_{T}({a}, s->fpcr), FZIN_{T}({b}, s->fpcr))"
    _fset_dn(em, f["Rd"], ft, e)


def h_fp_dp3(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    ft = _ftype(f)
    a, b, c = _fget(f["Rn"], ft), _fget(f["Rm"], ft), _fget(f["Ra"], ft)
    T = "S" if ft[0] == "f" else "D"
    o1, o0 = f["o1"], f["o0"]
    # FMADD c+a*b, FMSUB c-a*b, FNMADD -c-a*b, FNMSUB -c+a*b, as FPMulAdd(addend, op1, op2)
    na = f"-{a}" if o0 != o1 else a
    nc = f"-{c}" if o1 else c
    _fset_dn(em, f["Rd"], ft, f"FMA_{T}({nc}, {na}, {b})")


def h_fp_cmp(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    ft = _ftype(f)
    a = _fget(f["Rn"], ft)
    b = "0" if f["opc"] & 8 else _fget(f["Rm"], ft)
    em.flags_touched()
    em.out(
        f"{{ {ft[1]} _a = {a}, _b = {b}; if (_a != _a || _b != _b) FLAGS_SET(3); "
        f"else if (_a == _b) FLAGS_SET(6); else if (_a < _b) FLAGS_SET(8); else FLAGS_SET(2); }}"
    )


def h_fp_ccmp(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    ft = _ftype(f)
    a, b = _fget(f["Rn"], ft), _fget(f["Rm"], ft)
    em.flags_touched()
    em.out(
        f"if ({em.cond(f['cond'])}) {{ {ft[1]} _a = {a}, _b = {b}; if (_a != _a || _b != _b) FLAGS_SET(3); "
        f"else if (_a == _b) FLAGS_SET(6); else if (_a < _b) FLAGS_SET(8); else FLAGS_SET(2); }} "
        f"else FLAGS_SET({f['nzcv']});"
    )


def h_fcsel(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    ft = _ftype(f)
    w = "s" if ft[0] == "f" else "d"
    em.out(f"{{ u64 _b = {em.cond(f['cond'])} ? v{f['Rn']}.{w}[0] : v{f['Rm']}.{w}[0]; {vector.low(em, f['Rd'], '_b')} }}")


def vfp_expand_imm(imm8: int, bits: int) -> int:
    e = 8 if bits == 32 else 11
    fbits = 23 if bits == 32 else 52
    sign = imm8 >> 7
    b6 = (imm8 >> 6) & 1
    exp = ((b6 ^ 1) << (e - 1)) | ((((1 << (e - 3)) - 1) if b6 else 0) << 2) | ((imm8 >> 4) & 3)
    frac = (imm8 & 0xF) << (fbits - 4)
    return (sign << (bits - 1)) | (exp << fbits) | frac


def h_fmov_imm(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    ft = _ftype(f)
    bits = 32 if ft[0] == "f" else 64
    em.out(vector.low(em, f["Rd"], f"{vfp_expand_imm(f['imm8'], bits):#x}ull"))


# ---- Advanced SIMD ---------------------------------------------------------------------
def _lanes(Q: int, size: int) -> int:
    return (16 if Q else 8) >> size


def _vop(em: FunctionEmitter, d: int, Q: int, size: int, expr: str, srcs: dict[str, int]) -> None:
    """r.lane[i] = expr for each lane; expr uses a/b/c (NxVec copies) and the lane index i."""
    w = _LANE[size][0]
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    em.out(f"{{ {loads} NxVec _r; _r.q = 0; for (int i = 0; i < {_lanes(Q, size)}; i++) _r.{w}[i] = {expr}; v{d} = _r; }}")


def _narrow(em: FunctionEmitter, d: int, Q: int, w: str, half: int, expr: str, srcs: dict[str, int]) -> None:
    """Write ``half`` narrow lanes: into the low half of a cleared Vd, or (the "2" forms,
    Q = 1) into the upper half of Vd, keeping its lower half."""
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    if Q:
        em.out(f"{{ {loads} for (int i = 0; i < {half}; i++) v{d}.{w}[{half} + i] = {expr}; }}")
    else:
        em.out(f"{{ {loads} NxVec _r; _r.q = 0; for (int i = 0; i < {half}; i++) _r.{w}[i] = {expr}; v{d} = _r; }}")


def h_copy(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, op, imm5, imm4 = f["Q"], f["op"], f["imm5"], f["imm4"]
    n, d = f["Rn"], f["Rd"]
    # (imm5 x0000 and each form's reserved size/Q values are the rows' ``!`` clauses)
    size = (imm5 & -imm5).bit_length() - 1
    w, ut, st, bits = _LANE[size]
    idx = imm5 >> (size + 1)
    if op == 1:  # INS (element): Q = 1
        src = imm4 >> size
        em.out(f"{{ {ut} _e = v{n}.{w}[{src}]; v{d}.{w}[{idx}] = _e; }}")
        return
    if imm4 == 0:  # DUP (element)
        _vop(em, d, Q, size, f"a.{w}[{idx}]", {"a": n})
    elif imm4 == 1:  # DUP (general)
        _vop(em, d, Q, size, f"({ut}){em.x(n)}", {})
    elif imm4 == 3:  # INS (general)
        em.out(f"v{d}.{w}[{idx}] = ({ut}){em.x(n)};")
    elif imm4 == 7:  # UMOV
        em.setx(d, f"(u64)v{n}.{w}[{idx}]", 1 if size == 3 else 0)
    else:  # imm4 0101: SMOV (the rows take no other imm4)
        em.setx(d, f"(u64)(i64)({st})v{n}.{w}[{idx}]", Q)


def h_scalar_copy(em: FunctionEmitter, i: Insn) -> None:  # DUP (element, scalar) = MOV Bd/Hd/Sd/Dd
    f = i.f
    imm5 = f["imm5"]
    size = (imm5 & -imm5).bit_length() - 1  # (imm5 x0000 is reserved: the row's ``!imm5=x0000``)
    w = _LANE[size][0]
    em.out(f"{{ u64 _e = v{f['Rn']}.{w}[{imm5 >> (size + 1)}]; {vector.low(em, f['Rd'], '_e')} }}")


def h_three_same(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    n, m, d = f["Rn"], f["Rm"], f["Rd"]
    if op == 3:  # logical, size selects the operation
        ops = {
            (0, 0): "a.d[i] & b.d[i]",
            (0, 1): "a.d[i] & ~b.d[i]",
            (0, 2): "a.d[i] | b.d[i]",
            (0, 3): "a.d[i] | ~b.d[i]",
            (1, 0): "a.d[i] ^ b.d[i]",
            (1, 1): "(c.d[i] & a.d[i]) | (~c.d[i] & b.d[i])",  # BSL (c = Vd)
            (1, 2): "(c.d[i] & ~b.d[i]) | (a.d[i] & b.d[i])",  # BIT
            (1, 3): "(c.d[i] & b.d[i]) | (a.d[i] & ~b.d[i])",
        }  # BIF
        _vop(em, d, Q, 3, ops[(U, size)], {"a": n, "b": m, "c": d})
        return
    if op >= 24:
        h_fp_three_same(em, f)
        return
    if _int_three_same_extra(em, f):
        return
    w, ut, st, bits = _LANE[size]
    # (size:Q 110, a 1D vector, is reserved: left out by the rows)
    A, B = f"a.{w}[i]", f"b.{w}[i]"
    sA, sB = f"({st}){A}", f"({st}){B}"
    table = {
        (0, 16): f"({ut})({A} + {B})",
        (1, 16): f"({ut})({A} - {B})",
        (1, 17): f"({A} == {B}) ? ({ut})-1 : 0",
        (0, 17): f"({A} & {B}) ? ({ut})-1 : 0",
        (0, 6): f"({sA} > {sB}) ? ({ut})-1 : 0",
        (1, 6): f"({A} > {B}) ? ({ut})-1 : 0",
        (0, 7): f"({sA} >= {sB}) ? ({ut})-1 : 0",
        (1, 7): f"({A} >= {B}) ? ({ut})-1 : 0",
        (0, 12): f"{sA} > {sB} ? {A} : {B}",
        (1, 12): f"{A} > {B} ? {A} : {B}",
        (0, 13): f"{sA} < {sB} ? {A} : {B}",
        (1, 13): f"{A} < {B} ? {A} : {B}",
        (0, 19): f"({ut})({A} * {B})",
    }
    if (U, op) in table:
        _vop(em, d, Q, size, table[(U, op)], {"a": n, "b": m})
        return
    if op in (20, 21, 23):  # pairwise max/min, ADDP
        half = _lanes(Q, size) // 2
        pa = f"(i < {half} ? a.{w}[2*i] : b.{w}[2*(i-{half})])"
        pb = f"(i < {half} ? a.{w}[2*i+1] : b.{w}[2*(i-{half})+1])"
        if op == 23 and U == 0:
            e = f"({ut})({pa} + {pb})"
        elif op == 20:
            e = f"({(st if not U else ut)}){pa} > ({(st if not U else ut)}){pb} ? {pa} : {pb}"
        else:  # op == 21; the rows take no other encoding
            e = f"({(st if not U else ut)}){pa} < ({(st if not U else ut)}){pb} ? {pa} : {pb}"
        _vop(em, d, Q, size, e, {"a": n, "b": m})
        return
    # op == 8 (SSHL/USHL (register shifts, non-saturating, non-rounding)): the rows take no other encoding
    sh = f"(i8)b.{w}[i]"
    if U:
        e = f"({sh} >= 0) ? ({sh} >= {bits} ? 0 : ({ut})({A} << {sh})) : (-{sh} >= {bits} ? 0 : ({ut})({A} >> -{sh}))"
    else:
        e = f"({sh} >= 0) ? ({sh} >= {bits} ? 0 : ({ut})({A} << {sh})) : ({ut})({sA} >> (-{sh} >= {bits} ? {bits - 1} : -{sh}))"
    _vop(em, d, Q, size, e, {"a": n, "b": m})


def h_three_diff(em: FunctionEmitter, i: Insn) -> None:
    """Long, wide and narrow forms: [SU]ADDL/W, [SU]SUBL/W, ADDHN/SUBHN, [SU]MULL, [SU]MLAL/MLSL."""
    f = i.f
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    n, m, d = f["Rn"], f["Rm"], f["Rd"]
    # (size == 3: reserved three-different size: left out by the rows)
    w, ut, st, bits = _LANE[size]
    ww, wut, wst, _ = _LANE[size + 1]
    half = 8 // (bits // 8)  # lanes in one 64-bit half
    part = half if Q else 0  # the "2" forms read the upper halves
    nt = ut if U else st

    def narrow_in(v: str) -> str:
        return f"({wut})({wst})({nt}){v}.{w}[{part} + i]" if not U else f"({wut}){v}.{w}[{part} + i]"

    if op in (0, 2, 12, 8, 10):  # long: both sources narrow
        a, b = narrow_in("a"), narrow_in("b")
        expr = {
            0: f"({wut})({a} + {b})",
            2: f"({wut})({a} - {b})",
            12: f"({wut})({a} * {b})",
            8: f"({wut})(c.{ww}[i] + {a} * {b})",
            10: f"({wut})(c.{ww}[i] - {a} * {b})",
        }[op]
        srcs = {"a": n, "b": m, "c": d}
    elif op in (1, 3):  # wide: first source already wide
        b = narrow_in("b")
        expr = f"({wut})(a.{ww}[i] {'+' if op == 1 else '-'} {b})"
        srcs = {"a": n, "b": m}
    else:  # op in (4, 6) and U == 0 (ADDHN/SUBHN (+2): high halves of wide sums, narrowed); the rows take no other encoding
        hi = f"({ut})((u64)(a.{ww}[i] {'+' if op == 4 else '-'} b.{ww}[i]) >> {bits})"
        _narrow(em, d, Q, w, half, hi, {"a": n, "b": m})
        return
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    em.out(f"{{ {loads} NxVec _r; for (int i = 0; i < {half}; i++) _r.{ww}[i] = {expr}; v{d} = _r; }}")


def h_two_reg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    n, d = f["Rn"], f["Rd"]
    if op >= 24 or (12 <= op <= 15 and size >= 2):
        h_fp_two_reg(em, f)
        return
    w, ut, st, bits = _LANE[size]
    A, sA = f"a.{w}[i]", f"({st})a.{w}[i]"
    if op == 4 and size < 3:  # CLS / CLZ (vector)
        if U:
            e = f"({ut})({A} ? __builtin_clz((u32){A}) - {32 - bits} : {bits})"
        else:
            t = f"({ut})({A} ^ ({ut})({sA} >> {bits - 1}))"
            e = f"({ut})(({t} ? __builtin_clz((u32){t}) - {32 - bits} : {bits}) - 1)" if bits < 64 else "0"
        _vop(em, d, Q, size, e, {"a": n})
        return
    if op == 20 and size < 3 or (op == 18 and U == 1 and size < 3):  # SQXTN/UQXTN/SQXTUN (+2)
        nw = _LANE[size + 1][0]
        wst = _LANE[size + 1][2]
        src = f"a.{nw}[i]" if (U and op == 20) else f"({wst})a.{nw}[i]"
        lo = 0 if U else -(1 << (bits - 1))
        hi = (1 << bits) - 1 if U else (1 << (bits - 1)) - 1
        _narrow(em, d, Q, w, 8 // (1 << size), _sat(f"(i128){src}", lo, hi, ut), {"a": n})
        return
    table = {
        (0, 9): f"{A} == 0 ? ({ut})-1 : 0",
        (1, 9): f"{sA} <= 0 ? ({ut})-1 : 0",
        (0, 8): f"{sA} > 0 ? ({ut})-1 : 0",
        (1, 8): f"{sA} >= 0 ? ({ut})-1 : 0",
        (0, 10): f"{sA} < 0 ? ({ut})-1 : 0",
        (1, 11): f"({ut})-{A}",
        (0, 11): f"{sA} < 0 ? ({ut})-{A} : {A}",
    }
    if (U, op) in table:
        _vop(em, d, Q, size, table[(U, op)], {"a": n})
        return
    if op in (0, 1) and U == 0 or (op == 0 and U == 1):  # REV64 / REV16 / REV32
        container = {(0, 0): 64, (0, 1): 16, (1, 0): 32}[(U, op)]
        per = container // bits
        # (per <= 1, a lane as wide as the container, is reserved: left out by the rows)
        _vop(em, d, Q, size, f"a.{w}[(i / {per}) * {per} + ({per} - 1 - i % {per})]", {"a": n})
        return
    # op == 18 and U == 0 (XTN/XTN2): the rows take no other encoding
    nw = _LANE[size + 1][0]  # (size 11 is reserved: left out by the rows)
    half = 8 // (1 << size)
    _narrow(em, d, Q, w, half, f"({ut})a.{nw}[i]", {"a": n})


def h_across(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    n, d = f["Rn"], f["Rd"]
    if i.group == "SIMD_scalar_pair":  # ADDP (scalar): Dd = Vn.D[0] + Vn.D[1]
        if f["U"] == 0 and f["opcode"] == 27 and f["size"] == 3:
            em.out(f"{{ u64 _s = v{n}.d[0] + v{n}.d[1]; {vector.low(em, d, '_s')} }}")
            return
        # the FP forms (U = 1; U = 0: halves, FP16): the rows take no other encoding
        h_fp_scalar_pair(em, f)
        return
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    # (size == 3: reserved across-lanes size: left out by the rows)
    w, ut, st, bits = _LANE[size]
    L = _lanes(Q, size)
    if op == 27 and U == 0:  # ADDV
        em.out(f"{{ {ut} _s = 0; for (int i = 0; i < {L}; i++) _s += v{n}.{w}[i]; {vector.low(em, d, '_s')} }}")
    elif op in (10, 26):  # [SU]MAXV / [SU]MINV
        t = ut if U else st
        cmp = ">" if op == 10 else "<"
        em.out(
            f"{{ {t} _s = ({t})v{n}.{w}[0]; for (int i = 1; i < {L}; i++) {{ {t} _e = ({t})v{n}.{w}[i]; if (_e {cmp} _s) _s = _e; }} "
            f"{vector.low(em, d, f'({ut})_s')} }}"
        )
    else:  # op == 3 ([SU]ADDLV); the rows take no other encoding
        wide = _LANE[size + 1][1]
        em.out(
            f"{{ {wide} _s = 0; for (int i = 0; i < {L}; i++) _s += ({wide})({ut if U else st})v{n}.{w}[i]; {vector.low(em, d, '_s')} }}"
        )


def h_shift_imm(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    immh, immb, op = f["immh"], f["immb"], f["opcode"]
    scalar = i.group == "SIMD_scalar_shift_imm"
    Q = 1 if scalar else f["Q"]
    U = f["U"]
    n, d = f["Rn"], f["Rd"]
    # (immh 0000 is the modified-immediate space: SIMD_movi's rows, earlier in isa.py)
    size = immh.bit_length() - 1
    w, ut, st, bits = _LANE[size]
    imm = (immh << 3) | immb
    rshift = 2 * bits - imm
    lshift = imm - bits
    if op in (28, 31):  # [SU]CVTF / FCVTZ[SU] (vector and scalar, fixed point: fbits = rshift)
        _fixed_cvt(em, f, scalar, size, rshift)
        return
    # (scalar and size != 3: scalar shift of non-64-bit: left out by the rows)
    lanes = 1 if scalar else _lanes(Q, size)
    srcs = {"a": n}
    if op == 0:  # SSHR / USHR
        e = f"({ut})(a.{w}[i] >> {rshift})" if U else f"({ut})(({st})a.{w}[i] >> {min(rshift, bits - 1)})"
        if U and rshift == bits:
            e = "0"
    elif op == 2:  # SSRA / USRA
        srcs["c"] = d
        sh = f"({ut})(a.{w}[i] >> {rshift})" if U else f"({ut})(({st})a.{w}[i] >> {min(rshift, bits - 1)})"
        if U and rshift == bits:
            sh = "0"
        e = f"({ut})(c.{w}[i] + {sh})"
    elif op in (4, 6):  # SRSHR/URSHR, SRSRA/URSRA: add the rounding bit first (in 128 bits)
        src = f"(i128)a.{w}[i]" if U else f"(i128)({st})a.{w}[i]"
        e = f"({ut})(({src} + ((i128)1 << {rshift - 1})) >> {rshift})"
        if op == 6:
            srcs["c"] = d
            e = f"({ut})(c.{w}[i] + {e})"
    elif op == 10 and U == 0:  # SHL
        e = f"({ut})(a.{w}[i] << {lshift})"
    elif op == 16 and U == 0 and not scalar:  # SHRN/SHRN2: immh gives the narrow lane size
        # (size == 3: reserved SHRN: left out by the rows)
        ww = _LANE[size + 1][0]
        rs = 2 * bits - imm
        half = 8 // (bits // 8)
        _narrow(em, d, Q, w, half, f"({ut})(a.{ww}[i] >> {rs})", {"a": n})
        return
    else:  # op == 20 and not scalar (SSHLL/USHLL (and SXTL/UXTL): widen from immh's size); the rows take no other encoding
        # (size == 3: reserved SSHLL: left out by the rows)
        ww, wut = _LANE[size + 1][0], _LANE[size + 1][1]
        half = 8 // (bits // 8)
        start = half if Q else 0
        src_t = ut if U else st
        em.out(
            f"{{ NxVec a = v{n}; NxVec _r; for (int i = 0; i < {half}; i++) _r.{ww}[i] = ({wut})(({wut})({src_t})a.{w}[{start} + i] << {lshift}); v{d} = _r; }}"
        )
        return
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    em.out(f"{{ {loads} NxVec _r; _r.q = 0; for (int i = 0; i < {lanes}; i++) _r.{w}[i] = {e}; v{d} = _r; }}")


def _fixed_cvt(em: FunctionEmitter, f: dict, scalar: bool, size: int, fbits: int) -> None:
    """SCVTF/UCVTF (opcode 28) and FCVTZS/FCVTZU (31) with ``fbits`` fraction bits, on lanes of
    16 (FP16), 32 or 64 bits.  Integer -> FP is one host conversion then an exact scaling by
    2^-fbits (as fp_fixed.py argues), or one software rounding for halves; FP -> integer scales
    the exact value (a single in double) by 2^fbits and truncates, saturating."""
    U, op, n, d = f["U"], f["opcode"], f["Rn"], f["Rd"]
    # (size == 0 or (size == 3 and not scalar and not f["Q"]): reserved fixed-point conversion size: left out by the rows)
    w, ut, st, bits = _LANE[size]
    lanes = 1 if scalar else _lanes(f["Q"], size)
    A = f"a.{w}[i]"
    if size == 1:
        if op == 28:
            e = (
                f"NX_I2H_FIX({A}, 0, {fbits}, s->fpcr)"
                if U
                else f"NX_I2H_FIX((i16){A} < 0 ? (u64)-(i64)(i16){A} : {A}, (i16){A} < 0, {fbits}, s->fpcr)"
            )
        else:
            e = f"FCVT_{'U' if U else 'S'}16(__builtin_trunc(NX_HVAL({A}, s->fpcr) * 0x1p{fbits}))"
        view = "h"
    elif op == 28:
        ft, fv = ("double", "fd") if size == 3 else ("float", "f")
        if U and size == 3:
            conv = f"NX_U64TOD({A})"
        else:
            conv = f"({ft})" + (A if U else f"({st}){A}")
        e, view = f"{conv} * ({ft})0x1p-{fbits}", fv
    else:
        src = "a.fd[i]" if size == 3 else "(double)a.f[i]"
        e, view = f"({ut})FCVT_{'U' if U else 'S'}{bits}(__builtin_trunc({src} * 0x1p{fbits}))", w
    em.out(f"{{ NxVec a = v{n}; NxVec _r; _r.q = 0; for (int i = 0; i < {lanes}; i++) _r.{view}[i] = {e}; v{d} = _r; }}")


def h_tbl(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    Q, ln, op = f["Q"], f["len"] + 1, f["op"]
    n, m, d = f["Rn"], f["Rm"], f["Rd"]
    nb = 16 if Q else 8
    regs = [(n + k) % 32 for k in range(ln)]
    copy = " ".join(f"memcpy(_t + {16 * k}, &v{r}, 16);" for k, r in enumerate(regs))
    default = "o.b[i]" if op else "0"
    em.out(
        f"{{ u8 _t[64]; {copy} NxVec ix = v{m}, o = v{d}, _r; _r.q = 0; "
        f"for (int i = 0; i < {nb}; i++) _r.b[i] = ix.b[i] < {16 * ln} ? _t[ix.b[i]] : {default}; v{d} = _r; }}"
    )


# scalar FP three-same forms (U, a, opcode): FMULX, FCMEQ, FCMGE, FCMGT, FACGE, FACGT, FABD
_SCALAR_FP3 = {(0, 0, 27), (0, 0, 28), (1, 0, 28), (1, 1, 28), (1, 0, 29), (1, 1, 29), (1, 1, 26)}


def h_scalar_three_same(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    if (U, size >> 1, op) in _SCALAR_FP3:
        h_fp_three_same(em, dict(f, Q=1), lanes=1)
        return
    # (size != 3: scalar three-same non-64-bit: left out by the rows)
    a, b = f"v{f['Rn']}.d[0]", f"v{f['Rm']}.d[0]"
    e = {
        (0, 16): f"{a} + {b}",
        (1, 16): f"{a} - {b}",
        (1, 17): f"{a} == {b} ? ~0ull : 0",
        (0, 17): f"({a} & {b}) ? ~0ull : 0",
        (1, 6): f"{a} > {b} ? ~0ull : 0",
        (1, 7): f"{a} >= {b} ? ~0ull : 0",
        (0, 6): f"(i64){a} > (i64){b} ? ~0ull : 0",
        (0, 7): f"(i64){a} >= (i64){b} ? ~0ull : 0",
    }[(U, op)]  # (the rows take no other U/opcode)
    em.out(f"{{ u64 _r = {e}; {vector.low(em, f['Rd'], '_r')} }}")


_SCALAR_FCVT = {
    (26, 0): "__builtin_roundeven",
    (26, 1): "__builtin_ceil",
    (27, 0): "__builtin_floor",
    (27, 1): "__builtin_trunc",
    (28, 0): "NX_ROUND",
}


def h_scalar_two_reg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    o2, sz = size >> 1, size & 1
    n, d = f["Rn"], f["Rd"]
    if (op, o2) in _SCALAR_FCVT:  # FCVT[NPMZA][SU] (scalar, to an integer in a SIMD register)
        src = f"v{n}.fd[0]" if sz else f"(double)v{n}.f[0]"
        cvt = f"FCVT_{'U' if U else 'S'}{64 if sz else 32}({_SCALAR_FCVT[(op, o2)]}({src}))"
        em.out(f"{{ u64 _r = {cvt}; {vector.low(em, d, '_r')} }}")
        return
    if op == 29 and o2 == 0:  # SCVTF / UCVTF (scalar, integer in a SIMD register)
        if sz:
            src = f"NX_U64TOD(v{n}.d[0])" if U else f"(double)(i64)v{n}.d[0]"
            em.out(f"{{ double _r = {src}; {vector.low_fp(em, d, 'fd', '_r')} }}")
        else:
            src = f"(float)v{n}.s[0]" if U else f"(float)(i32)v{n}.s[0]"
            em.out(f"{{ float _r = {src}; {vector.low_fp(em, d, 'f', '_r')} }}")
        return
    if o2 and 12 <= op <= 14 and not (U and op == 14):  # FCMGT/FCMEQ/FCMLT/FCMGE/FCMLE #0 (scalar)
        h_fp_two_reg(em, dict(f, Q=1), lanes=1)
        return
    # (size != 3: scalar two-reg non-64-bit: left out by the rows)
    a = f"v{f['Rn']}.d[0]"
    e = {
        (0, 9): f"{a} == 0 ? ~0ull : 0",
        (0, 8): f"(i64){a} > 0 ? ~0ull : 0",
        (1, 11): f"-{a}",
        (1, 8): f"(i64){a} >= 0 ? ~0ull : 0",
        (0, 10): f"(i64){a} < 0 ? ~0ull : 0",
    }[(U, op)]  # (the rows take no other U/opcode)
    em.out(f"{{ u64 _r = {e}; {vector.low(em, f['Rd'], '_r')} }}")


# ---- Advanced SIMD floating point (lanes of 32 or 64 bits) ------------------------------------
def _fp_lanes(em: FunctionEmitter, f: dict) -> tuple[str, str, str, str, int]:
    """(C helper suffix, float view, bits view, unsigned type, lane count) of an FP vector form."""
    Q, sz = f["Q"], f["size"] & 1
    # (sz and not Q: reserved 1D FP vector form: left out by the rows)
    return ("D", "fd", "d", "u64", 2) if sz else ("S", "f", "s", "u32", 4 if Q else 2)


def _fp_loop(em: FunctionEmitter, d: int, lanes: int, view: str, expr: str, srcs: dict[str, int]) -> None:
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    em.out(f"{{ {loads} NxVec _r; _r.q = 0; for (int i = 0; i < {lanes}; i++) _r.{view}[i] = {expr}; v{d} = _r; }}")


def h_fp_three_same(em: FunctionEmitter, f: dict, lanes: int | None = None) -> None:
    """FADD/FSUB/FMUL/FDIV/FABD/FMULX, FMLA/FMLS, FMAX/FMIN(NM), the FP compares and the pairwise
    FADDP/FMAXP/FMINP(NM)P: the scalar helpers per lane, so NaN/DN/FZ rules are the same.
    ``lanes=1``: the scalar forms (lane 0, the rest of Vd cleared)."""
    T, w, iw, ut, L = _fp_lanes(em, f)
    L = lanes or L
    key = (f["U"], f["size"] >> 1, f["opcode"])
    n, m, d = f["Rn"], f["Rm"], f["Rd"]
    A, B, C = f"a.{w}[i]", f"b.{w}[i]", f"c.{w}[i]"
    half = L // 2
    pa = f"(i < {half} ? a.{w}[2*i] : b.{w}[2*(i-{half})])"
    pb = f"(i < {half} ? a.{w}[2*i+1] : b.{w}[2*(i-{half})+1])"

    def dn(e: str) -> str:
        return f"FDN_{T}({e}, s->fpcr)"

    def fz(e: str) -> str:
        return f"FZIN_{T}({e}, s->fpcr)"

    arith = {(0, 0, 26): "+", (0, 1, 26): "-", (1, 0, 27): "*", (1, 0, 31): "/"}
    minmax = {(0, 0, 30): "FMAX", (0, 1, 30): "FMIN", (0, 0, 24): "FMAXNM", (0, 1, 24): "FMINNM"}
    pminmax = {(1, 0, 30): "FMAX", (1, 1, 30): "FMIN", (1, 0, 24): "FMAXNM", (1, 1, 24): "FMINNM"}
    cmp = {
        (0, 0, 28): f"{A} == {B}",
        (1, 0, 28): f"{A} >= {B}",
        (1, 1, 28): f"{A} > {B}",
        (1, 0, 29): f"__builtin_fabs({A}) >= __builtin_fabs({B})",
        (1, 1, 29): f"__builtin_fabs({A}) > __builtin_fabs({B})",
    }
    srcs = {"a": n, "b": m}
    if key in arith:
        e, view = _dn(T, f"FPR_{T}({A} {arith[key]} {B}, {A}, {B}, 0, 2)"), w
    elif key == (0, 0, 27):  # FMULX: inf * 0 = +-2
        e, view = f"FMULX_{T}({A}, {B}, s->fpcr)", w
    elif key == (1, 1, 26):  # FABD = FPAbs(FPSub): the sign of a NaN result is cleared too
        e, view = f"__builtin_fabs({_dn(T, f'FPR_{T}({A} - {B}, {A}, {B}, 0, 2)')})", w
    elif key in ((0, 0, 25), (0, 1, 25)):  # FMLA / FMLS = FPMulAdd(d, [-]n, m)
        neg = "-" if key[1] else ""
        e, view = dn(f"FMA_{T}({C}, {neg}{A}, {B})"), w
        srcs["c"] = d
    elif key in minmax:
        e, view = dn(f"{minmax[key]}_{T}({fz(A)}, {fz(B)})"), w
    elif key in pminmax:
        e, view = dn(f"{pminmax[key]}_{T}({fz(pa)}, {fz(pb)})"), w
    elif key == (1, 0, 26):  # FADDP
        e, view = _dn(T, f"FPR_{T}({pa} + {pb}, {pa}, {pb}, 0, 2)"), w
    else:  # key in cmp; the rows take no other encoding
        e, view = f"({cmp[key]}) ? ({ut})-1 : 0", iw
    _fp_loop(em, d, L, view, e, srcs)


_FRINT = {
    (0, 0, 24): "__builtin_roundeven",
    (0, 0, 25): "__builtin_floor",
    (0, 1, 24): "__builtin_ceil",
    (0, 1, 25): "__builtin_trunc",
    (1, 0, 24): "NX_ROUND",
    (1, 0, 25): "__builtin_rint",
    (1, 1, 25): "__builtin_nearbyint",
}
_FCVTI = {26: ("__builtin_roundeven", "__builtin_ceil"), 27: ("__builtin_floor", "__builtin_trunc"), 28: ("NX_ROUND", None)}


def h_fp_two_reg(em: FunctionEmitter, f: dict, lanes: int | None = None) -> None:
    """FABS/FNEG/FSQRT, compares against zero, FRINT*, FCVT[NMAPZ][SU] and [SU]CVTF (vector;
    ``lanes=1``: the scalar compares against zero)."""
    T, w, iw, ut, L = _fp_lanes(em, f)
    L = lanes or L
    U, a_bit, op = f["U"], f["size"] >> 1, f["opcode"]
    key = (U, a_bit, op)
    n, d = f["Rn"], f["Rd"]
    A = f"a.{w}[i]"
    suf = "" if T == "D" else "f"
    sign = "0x8000000000000000ull" if T == "D" else "0x80000000u"
    bits = 64 if T == "D" else 32
    zcmp = {(0, 1, 12): ">", (0, 1, 13): "==", (0, 1, 14): "<", (1, 1, 12): ">=", (1, 1, 13): "<="}
    if key == (0, 1, 15):
        e, view = f"a.{iw}[i] & ~{sign}", iw
    elif key == (1, 1, 15):
        e, view = f"a.{iw}[i] ^ {sign}", iw
    elif key == (1, 1, 31):
        e, view = f"FPRD_{T}(__builtin_sqrt{suf}({A}), {A}, 0, 0, 1, s->fpcr)", w
    elif key in zcmp:
        e, view = f"({A} {zcmp[key]} 0) ? ({ut})-1 : 0", iw
    elif key in _FRINT:
        e, view = f"FPRD_{T}({_FRINT[key]}{suf}({A}), {A}, 0, 0, 1, s->fpcr)", w
    elif a_bit == 0 and op == 29:  # SCVTF / UCVTF
        if U and T == "D":
            e = "NX_U64TOD(a.d[i])"
        else:
            e = f"({'double' if T == 'D' else 'float'})" + (f"a.{iw}[i]" if U else f"(i{bits})a.{iw}[i]")
        view = w
    else:  # op in _FCVTI and (a_bit == 0 or _FCVTI[op][1]); the rows take no other encoding
        rnd = _FCVTI[op][a_bit]
        e, view = f"FCVT_{'U' if U else 'S'}{bits}((double){rnd}{suf}({A}))", iw
    _fp_loop(em, d, L, view, e, {"a": n})


def _sat(expr: str, lo: int, hi: int, t: str) -> str:
    """Clamp an i128 expression to [lo, hi] (saturating forms; FPSR.QC is not tracked)."""
    return (
        f"({t})({{ i128 _t = {expr}; _t > (i128){hi}ull ? (i128){hi}ull : _t < -(i128){-lo}ull ? -(i128){-lo}ull : _t; }})"
        if lo < 0
        else f"({t})({{ i128 _t = {expr}; _t > (i128){hi}ull ? (i128){hi}ull : _t < 0 ? 0 : _t; }})"
    )


def _int_three_same_extra(em: FunctionEmitter, f: dict) -> bool:
    """SQADD/UQADD/SQSUB/UQSUB, MLA/MLS (vector); False when the form is not one of them."""
    Q, U, size, op = f["Q"], f["U"], f["size"], f["opcode"]
    w, ut, st, bits = _LANE[size]
    A, B = f"a.{w}[i]", f"b.{w}[i]"
    if op in (1, 5):
        # (size == 3 and not Q: reserved 1D saturating form: left out by the rows)
        o = "+" if op == 1 else "-"
        if U:
            e = _sat(f"(i128){A} {o} (i128){B}", 0, (1 << bits) - 1, ut)
        else:
            e = _sat(f"(i128)({st}){A} {o} (i128)({st}){B}", -(1 << (bits - 1)), (1 << (bits - 1)) - 1, ut)
        _vop(em, f["Rd"], Q, size, e, {"a": f["Rn"], "b": f["Rm"]})
        return True
    if op == 18 and size < 3:  # MLA / MLS
        _vop(em, f["Rd"], Q, size, f"({ut})(c.{w}[i] {'-' if U else '+'} {A} * {B})", {"a": f["Rn"], "b": f["Rm"], "c": f["Rd"]})
        return True
    return False


def h_elem(em: FunctionEmitter, i: Insn) -> None:
    """By element: MUL/MLA/MLS (vector) and FMUL/FMLA/FMLS/FMULX (vector and scalar; halves too,
    through fp_f16's helpers in lifted_fp.h); the element is
    Vm[index] with index = H:L:M (16-bit lanes, Vm in V0-V15), H:L (32-bit) or H (64-bit)."""
    f = i.f
    scalar = i.group == "SIMD_scalar_elem"
    U, size, op = f["U"], f["size"], f["opcode"]
    n, d = f["Rn"], f["Rd"]
    if size <= 1:
        idx, m = (f["H"] << 2) | (f["L"] << 1) | f["M"], f["Rm"]
    else:
        idx, m = (f["H"] << 1) | f["L"], (f["M"] << 4) | f["Rm"]
    if size == 0 and (U, op) in ((0, 1), (0, 5), (0, 9), (1, 9)):  # FP16: FMLA / FMLS / FMUL / FMULX
        A, B, C = "a.h[i]", f"b.h[{idx}]", "c.h[i]"
        e = {
            (0, 1): f"FMA_H({C}, {A}, {B}, s->fpcr)",
            (0, 5): f"FMA_H({C}, (u16)({A} ^ 0x8000u), {B}, s->fpcr)",
            (0, 9): f"FMUL_H({A}, {B}, s->fpcr)",
            (1, 9): f"FMULX_H({A}, {B}, s->fpcr)",
        }[(U, op)]
        _fp_loop(em, d, 1 if scalar else (8 if f["Q"] else 4), "h", e, {"a": n, "b": m, "c": d})
        return
    if (U, op) in ((0, 1), (0, 5), (0, 9), (1, 9)) and size >= 2:  # FMLA / FMLS / FMUL / FMULX
        if size == 3:
            # (f["L"]: reserved FP by-element index: left out by the rows)
            idx = f["H"]
        fq = dict(f, Q=1 if scalar else f["Q"])
        T, w, iw, ut, L = _fp_lanes(em, fq)
        A, B, C = f"a.{w}[i]", f"b.{w}[{idx}]", f"c.{w}[i]"
        if op == 9 and U:
            e = f"FMULX_{T}({A}, {B}, s->fpcr)"
        elif op == 9:
            e = f"FPRD_{T}({A} * {B}, {A}, {B}, 0, 2, s->fpcr)"
        else:
            e = f"FDN_{T}(FMA_{T}({C}, {'-' if op == 5 else ''}{A}, {B}), s->fpcr)"
        _fp_loop(em, d, 1 if scalar else L, w, e, {"a": n, "b": m, "c": d})
        return
    # (the integer forms: vector, size 01 or 10; the others are reserved: left out by the rows)
    w, ut, st, bits = _LANE[size]
    A, B, C = f"a.{w}[i]", f"b.{w}[{idx}]", f"c.{w}[i]"
    e = {(0, 8): f"({ut})({A} * {B})", (1, 0): f"({ut})({C} + {A} * {B})", (1, 4): f"({ut})({C} - {A} * {B})"}[
        (U, op)
    ]  # (the rows take no other U/opcode)
    _vop(em, d, f["Q"], size, e, {"a": n, "b": m, "c": d})


_FP_PAIR = {(0, 13): "FADDP", (0, 15): "FMAX", (1, 15): "FMIN", (0, 12): "FMAXNM", (1, 12): "FMINNM"}


def h_fp_scalar_pair(em: FunctionEmitter, f: dict) -> None:
    """FADDP/FMAXP/FMINP/FMAXNMP/FMINNMP (scalar): lanes 0 and 1 of Vn (U=0: halves)."""
    kind = _FP_PAIR[(f["size"] >> 1, f["opcode"])]  # (the rows take no other sz/opcode)
    if f["U"] == 0:  # FP16: FADDP/FMAXP/... Hd, Vn.2H through lifted_fp.h's half helpers
        a, b = f"v{f['Rn']}.h[0]", f"v{f['Rn']}.h[1]"
        e = (
            f"FADD_H({a}, {b}, s->fpcr)"
            if kind == "FADDP"
            else f"NX_HMINMAX({a}, {b}, s->fpcr, {int(kind.startswith('FMAX'))}, {int(kind.endswith('NM'))})"
        )
        em.out(f"{{ u16 _h = {e}; {vector.low(em, f['Rd'], '_h')} }}")
        return
    T, w = ("D", "fd") if f["size"] & 1 else ("S", "f")
    n = f["Rn"]
    a, b = f"v{n}.{w}[0]", f"v{n}.{w}[1]"
    if kind == "FADDP":
        e = f"FPR_{T}({a} + {b}, {a}, {b}, 0, 2)"
    else:
        e = f"{kind}_{T}(FZIN_{T}({a}, s->fpcr), FZIN_{T}({b}, s->fpcr))"
    _fset_dn(em, f["Rd"], (_FT[1] if T == "D" else _FT[0]), e)
