"""Advanced SIMD integer forms beyond the core set, exact to the bit: halving and rounding-halving
adds/subtracts, absolute differences (and their long/accumulating forms), shifts by register
with saturation and/or rounding, saturating shifts by immediate (incl. SQSHLU), saturating and
rounding narrowing shifts, rounding high-half narrows, saturating doubling multiplies
(SQDMULH/SQRDMULH, SQDMULL/SQDMLAL/SQDMLSL, vector, by element and scalar), long multiplies by
element, SQRDMLAH/SQRDMLSH (RDM), PMUL, SQABS/SQNEG/SUQADD/USQADD and the scalar saturating forms.

Each lane is computed in ``i128`` (wide enough for every intermediate: a 64-bit value shifted
left by up to 63, a doubled 32x32 product) and then clamped or truncated, so one expression
states the architecture's pseudocode and clang narrows the arithmetic.  FPSR.QC (cumulative
saturation) is not tracked, as for the core saturating forms.

Which forms each handler here lifts is said by forms.py's rows (``_rows``, by form name), never
by a test of the instruction's fields: the other forms of the same groups are ``simd_vec``'s or
``fp_simd``'s.
"""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import fp_simd as core
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _LANE, _lanes, _sat


def _emit(em: FunctionEmitter, d: int, lanes: int, w: str, expr: str, srcs: dict[str, int]) -> None:
    """Vd.w[i] = expr for i < lanes, the rest of Vd zeroed (vector Q=0 and scalar forms)."""
    loads = " ".join(f"NxVec {k} = v{v};" for k, v in srcs.items())
    em.out(f"{{ {loads} NxVec _r; _r.q = 0; for (int i = 0; i < {lanes}; i++) _r.{w}[i] = {expr}; v{d} = _r; }}")


def _rng(bits: int, signed: bool) -> tuple[int, int]:
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def _val(v: str, size: int, signed: bool, index: str = "i") -> str:
    """Lane ``index`` of NxVec ``v`` as an i128, sign- or zero-extended."""
    w, _ut, st, _b = _LANE[size]
    return f"(i128)({st}){v}.{w}[{index}]" if signed else f"(i128){v}.{w}[{index}]"


def _shift_reg(x: str, sh: str, bits: int, signed: bool, sat: bool, rnd: bool, ut: str) -> str:
    """[SU]Q?R?SHL: shift by the signed low byte of element 2; negative shifts go right (rounded
    for the R forms); left shifts saturate (Q forms) or truncate."""
    lo, hi = _rng(bits, signed)
    big = f"((i128)1 << {bits + 1})"  # any value past the range: saturates like the true one
    if sat:
        left = f"(_sh >= {bits} ? (_x == 0 ? (i128)0 : _x < 0 ? -{big} : {big}) : _x * ((i128)1 << _sh))"
    else:
        left = f"(_sh >= {bits} ? (i128)0 : _x * ((i128)1 << _sh))"
    # a right shift past the lane gives 0 or -1 (or 0/1 rounded): bits + 1 places say the same
    right = (
        f"({{ int _rs = -_sh > {bits + 1} ? {bits + 1} : -_sh; "
        f"(_x + {'((i128)1 << (_rs - 1))' if rnd else '(i128)0'}) >> _rs; }})"
    )
    body = f"_sh >= 0 ? {left} : {right}"
    out = _sat("_v", lo, hi, ut) if sat else f"({ut})_v"
    return f"({{ i8 _sh = (i8)({sh}); i128 _x = {x}; i128 _v = {body}; {out}; }})"


def _dmulh(x: str, y: str, bits: int, rnd: bool, ut: str) -> str:
    lo, hi = _rng(bits, True)
    r = f" + ((i128)1 << {bits - 1})" if rnd else ""
    return _sat(f"((i128)2 * {x} * {y}{r}) >> {bits}", lo, hi, ut)


def _dmull(x: str, y: str, wbits: int) -> str:
    """SQDMULL's saturated doubled product (as an i128 in the wide lane's range)."""
    lo, hi = _rng(wbits, True)
    return _sat(f"(i128)2 * {x} * {y}", lo, hi, "i128")


# ---- three registers, same type -------------------------------------------------------------
def _three_same_expr(U: int, op: int, size: int, scalar: bool) -> str | None:
    w, ut, st, bits = _LANE[size]
    signed = not U
    X, Y = _val("a", size, signed), _val("b", size, signed)
    lo, hi = _rng(bits, signed)
    if op in (0, 2, 4) and not scalar and size < 3:  # [SU]HADD, [SU]RHADD, [SU]HSUB
        return {0: f"({ut})(({X} + {Y}) >> 1)", 2: f"({ut})(({X} + {Y} + 1) >> 1)", 4: f"({ut})(({X} - {Y}) >> 1)"}[op]
    if op in (1, 5) and scalar:  # SQADD/UQADD/SQSUB/UQSUB (scalar)
        return _sat(f"{X} {'+' if op == 1 else '-'} {Y}", lo, hi, ut)
    if op in (9, 10, 11) and (not scalar or op != 10 or size == 3) or (op == 8 and scalar and size == 3):
        return _shift_reg(X, f"b.{w}[i]", bits, signed, sat=op in (9, 11), rnd=op in (10, 11), ut=ut)
    if op in (14, 15) and not scalar and size < 3:  # [SU]ABD, [SU]ABA
        diff = f"({{ i128 _d = {X} - {Y}; _d < 0 ? -_d : _d; }})"
        return f"({ut})(c.{w}[i] + {diff})" if op == 15 else f"({ut}){diff}"
    if op == 22 and size in (1, 2):  # SQDMULH / SQRDMULH
        return _dmulh(_val("a", size, True), _val("b", size, True), bits, bool(U), ut)
    if op == 19 and U and size == 0 and not scalar:  # PMUL (bytes, carry-less)
        terms = " ^ ".join(f"((b.b[i] >> {k} & 1) ? (u8)(a.b[i] << {k}) : 0)" for k in range(8))
        return f"(u8)({terms})"
    return None


def h_three_same(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    e = _three_same_expr(U, op, size, False)
    _emit(em, f["Rd"], _lanes(f["Q"], size), _LANE[size][0], e, {"a": f["Rn"], "b": f["Rm"], "c": f["Rd"]})


def h_scalar_three_same(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    e = _three_same_expr(U, op, size, True)
    _emit(em, f["Rd"], 1, _LANE[size][0], e, {"a": f["Rn"], "b": f["Rm"]})


# ---- SQRDMLAH / SQRDMLSH (Armv8.1 RDM): Vd's lane shifted up, plus or minus the doubled
# product, rounded, saturated, the high half kept ------------------------------------------
def _rdm(size: int, sub: bool, y_index: str = "i") -> str:
    w, ut, _st, bits = _LANE[size]
    lo, hi = _rng(bits, True)
    prod = f"(i128)2 * {_val('a', size, True)} * {_val('b', size, True, y_index)}"
    acc = f"({_val('c', size, True)} * ((i128)1 << {bits}))"
    return _sat(f"({acc} {'-' if sub else '+'} {prod} + ((i128)1 << {bits - 1})) >> {bits}", lo, hi, ut)


def h_rdm(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    size, scalar = f["size"], i.group == "SIMD_scalar_rdm"
    # (size 00 and 11 are reserved: left out by the rows)
    _emit(
        em,
        f["Rd"],
        1 if scalar else _lanes(f["Q"], size),
        _LANE[size][0],
        _rdm(size, bool(f["S"])),
        {"a": f["Rn"], "b": f["Rm"], "c": f["Rd"]},
    )


# ---- three registers, different types (long / wide / narrow) --------------------------------
# The long forms with a narrow Vn and a wide Vd, by (U, opcode) of the three-different groups'
# rows (SABAL_vec ... SQDMULL_vec, SQDMLAL_scalar ...) and by opcode of the by-element groups'
# (SMLAL_elem ... SQDMULL_elem_scalar).  Their rows leave out size 11, and size 00 of SQDM*
# (no byte form): reserved.
_LONG_DIFF = {
    (0, 5): "abal",
    (1, 5): "abal",
    (0, 7): "abdl",
    (1, 7): "abdl",
    (0, 9): "dmlal",
    (0, 11): "dmlsl",
    (0, 13): "dmull",
}
_LONG_ELEM = {2: "mlal", 6: "mlsl", 10: "mull", 3: "dmlal", 7: "dmlsl", 11: "dmull"}


def _long(em: FunctionEmitter, f: dict, kind: str, scalar: bool, y_index: str | None = None, m: int | None = None) -> None:
    """Long forms with a narrow Vn (upper half for the "2" forms) and a wide Vd: [SU]ABAL,
    [SU]ABDL, SQDMLAL, SQDMLSL, SQDMULL; by element ([SU]MLAL/MLSL/MULL, SQDM*) when
    ``y_index`` names the element (``kind``: ``_LONG_DIFF``/``_LONG_ELEM``'s)."""
    size = f["size"]
    elem = y_index is not None
    U = f["U"]
    w, ut, st, bits = _LANE[size]
    ww, wut, wst, wbits = _LANE[size + 1]
    half = 1 if scalar else 8 // (bits // 8)
    part = 0 if scalar else (half if f["Q"] else 0)
    pos = f"{part} + i"
    signed = kind.startswith("d") or not U
    X = _val("a", size, signed, pos)
    Y = _val("b", size, signed, y_index if elem else pos)
    C = f"(i128)({wst})c.{ww}[i]"
    wlo, whi = _rng(wbits, True)
    if kind == "abal":
        e = f"({wut})(c.{ww}[i] + ({{ i128 _d = {X} - {Y}; _d < 0 ? -_d : _d; }}))"
    elif kind == "abdl":
        e = f"({wut})({{ i128 _d = {X} - {Y}; _d < 0 ? -_d : _d; }})"
    elif kind in ("mlal", "mlsl", "mull"):
        prod = f"{X} * {Y}"
        e = {
            "mull": f"({wut})({prod})",
            "mlal": f"({wut})(c.{ww}[i] + ({wut})({prod}))",
            "mlsl": f"({wut})(c.{ww}[i] - ({wut})({prod}))",
        }[kind]
    elif kind == "dmull":
        e = f"({wut}){_dmull(X, Y, wbits)}"
    else:
        e = _sat(f"{C} {'+' if kind == 'dmlal' else '-'} {_dmull(X, Y, wbits)}", wlo, whi, wut)
    _emit(em, f["Rd"], half, ww, e, {"a": f["Rn"], "b": f["Rm"] if m is None else m, "c": f["Rd"]})


def h_three_diff(em: FunctionEmitter, i: Insn) -> None:
    """[SU]ABAL, [SU]ABDL, SQDMLAL, SQDMLSL, SQDMULL (+2)."""
    f = i.f
    _long(em, f, _LONG_DIFF[(f["U"], f["opcode"])], scalar=False)


def h_rounding_narrow_high(em: FunctionEmitter, i: Insn) -> None:
    """RADDHN / RSUBHN (+2): the rounded high half of each wide sum or difference."""
    f = i.f
    size, op = f["size"], f["opcode"]
    w, ut, _st, bits = _LANE[size]
    ww = _LANE[size + 1][0]
    hi = f"({ut})((u64)(a.{ww}[i] {'+' if op == 4 else '-'} b.{ww}[i] + ((u64)1 << {bits - 1})) >> {bits})"
    core._narrow(em, f["Rd"], f["Q"], w, 8 // (bits // 8), hi, {"a": f["Rn"], "b": f["Rm"]})


def h_scalar_three_diff(em: FunctionEmitter, i: Insn) -> None:
    """SQDMLAL, SQDMLSL, SQDMULL (scalar)."""
    f = i.f
    _long(em, f, _LONG_DIFF[(f["U"], f["opcode"])], scalar=True)


# ---- by element (vector and scalar; their rows leave out size 00 and 11) ----------------------
def _elem_index(f: dict) -> tuple[int, int]:
    if f["size"] <= 1:
        return (f["H"] << 2) | (f["L"] << 1) | f["M"], f["Rm"]
    return (f["H"] << 1) | f["L"], (f["M"] << 4) | f["Rm"]


def h_rdm_elem(em: FunctionEmitter, i: Insn) -> None:
    """SQRDMLAH / SQRDMLSH by element."""
    f = i.f
    scalar = i.group == "SIMD_scalar_elem"
    size = f["size"]
    idx, m = _elem_index(f)
    e = _rdm(size, f["opcode"] == 15, str(idx))
    _emit(em, f["Rd"], 1 if scalar else _lanes(f["Q"], size), _LANE[size][0], e, {"a": f["Rn"], "b": m, "c": f["Rd"]})


def h_dmulh_elem(em: FunctionEmitter, i: Insn) -> None:
    """SQDMULH / SQRDMULH by element."""
    f = i.f
    scalar = i.group == "SIMD_scalar_elem"
    size = f["size"]
    idx, m = _elem_index(f)
    w, ut, _st, bits = _LANE[size]
    e = _dmulh(_val("a", size, True), _val("b", size, True, str(idx)), bits, f["opcode"] == 13, ut)
    _emit(em, f["Rd"], 1 if scalar else _lanes(f["Q"], size), w, e, {"a": f["Rn"], "b": m})


def h_long_elem(em: FunctionEmitter, i: Insn) -> None:
    """[SU]MLAL, [SU]MLSL, [SU]MULL, SQDMLAL, SQDMLSL, SQDMULL by element (+2)."""
    f = i.f
    idx, m = _elem_index(f)
    _long(em, f, _LONG_ELEM[f["opcode"]], i.group == "SIMD_scalar_elem", str(idx), m)


# ---- shifts by immediate --------------------------------------------------------------------
def h_shift_imm(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    immh, immb, op, U = f["immh"], f["immb"], f["opcode"], f["U"]
    scalar = i.group == "SIMD_scalar_shift_imm"
    size = immh.bit_length() - 1
    Q = 1 if scalar else f["Q"]
    imm = (immh << 3) | immb
    n, d = f["Rn"], f["Rd"]
    w, ut, st, bits = _LANE[size]
    if op in (12, 14):  # SQSHLU, SQSHL/UQSHL (immediate)
        # (immh 1xxx with Q 0, a 1D vector, is reserved: left out by the rows)
        sh = imm - bits
        signed_src = not (op == 14 and U)
        lo, hi = _rng(bits, signed=not U)  # SQSHLU and UQSHL saturate unsigned
        e = _sat(f"{_val('a', size, signed_src)} * ((i128)1 << {sh})", lo, hi, ut)
        _emit(em, d, 1 if scalar else _lanes(Q, size), w, e, {"a": n})
        return
    # narrowing: immh gives the narrow size; Vn has lanes twice as wide
    # (immh 1xxx is reserved for the narrowing shifts: left out by the rows)
    rs = 2 * bits - imm
    signed_src = not (U and op in (18, 19))  # UQ(R)SHRN take unsigned sources
    rnd = op in (17, 19)
    src = _val("a", size + 1, signed_src)
    shifted = f"(({src}{f' + ((i128)1 << {rs - 1})' if rnd else ''}) >> {rs})"
    if op == 17 and not U:  # RSHRN: rounding, no saturation
        e = f"({ut}){shifted}"
    else:  # SQ(R)SHRUN (op 16/17, U=1) saturate unsigned
        lo, hi = _rng(bits, signed=not (op in (16, 17) or U))
        e = _sat(shifted, lo, hi, ut)
    if scalar:
        _emit(em, d, 1, w, e, {"a": n})
    else:
        core._narrow(em, d, Q, w, 8 // (bits // 8), e, {"a": n})


# ---- two registers --------------------------------------------------------------------------
def _two_reg_expr(U: int, op: int, size: int) -> str:
    """SQABS / SQNEG (opcode 7) or SUQADD / USQADD (opcode 3): the rows give these handlers no
    other opcode."""
    w, ut, st, bits = _LANE[size]
    if op == 7:  # SQABS / SQNEG
        lo, hi = _rng(bits, True)
        x = _val("a", size, True)
        return _sat(f"(-{x})" if U else f"({x} < 0 ? -{x} : {x})", lo, hi, ut)
    # SUQADD / USQADD (accumulate into Vd): SUQADD is signed Vd plus unsigned Vn, saturated
    # signed; USQADD the other way round
    lo, hi = _rng(bits, signed=not U)
    return _sat(f"{_val('c', size, not U)} + {_val('a', size, bool(U))}", lo, hi, ut)


def h_two_reg(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    e = _two_reg_expr(U, op, size)
    _emit(em, f["Rd"], _lanes(f["Q"], size), _LANE[size][0], e, {"a": f["Rn"], "c": f["Rd"]})


def h_scalar_two_reg(em: FunctionEmitter, i: Insn) -> None:
    """SUQADD, USQADD, SQABS, SQNEG (scalar)."""
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    e = _two_reg_expr(U, op, size)
    _emit(em, f["Rd"], 1, _LANE[size][0], e, {"a": f["Rn"], "c": f["Rd"]})


def h_scalar_xtn(em: FunctionEmitter, i: Insn) -> None:
    """SQXTN / UQXTN / SQXTUN (scalar; their rows leave out size 11)."""
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    w, ut, _st, bits = _LANE[size]
    src = _val("a", size + 1, signed=not (U and op == 20))
    lo, hi = _rng(bits, signed=not U)
    _emit(em, f["Rd"], 1, w, _sat(src, lo, hi, ut), {"a": f["Rn"]})
