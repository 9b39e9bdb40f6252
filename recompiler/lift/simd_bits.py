"""Advanced SIMD integer forms that hashing and compression code uses beyond the core set:
CNT/NOT/RBIT (vector), [SU]ADDLP/[SU]ADALP (pairwise long add, accumulate), SRI/SLI (shift and
insert, vector and scalar).  Lane loops over ``NxVec`` that clang vectorises."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _LANE, _lanes, _vop


def h_bitcount(em: FunctionEmitter, i: Insn) -> None:
    """CNT (U=0, bytes), NOT (U=1, size 0), RBIT (U=1, size 1): all act on bytes."""
    f = i.f
    U, size, Q = f["U"], f["size"], f["Q"]
    e = {
        (0, 0): "(u8)__builtin_popcount(a.b[i])",
        (1, 0): "(u8)~a.b[i]",
        (1, 1): "(u8)(__builtin_bitreverse32(a.b[i]) >> 24)",
    }[(U, size)]  # (the CNT_vec, NOT_vec and RBIT_vec rows fix U and size)
    _vop(em, f["Rd"], Q, 0, e, {"a": f["Rn"]})


def h_addlp(em: FunctionEmitter, i: Insn) -> None:
    """SADDLP/UADDLP (op=0), SADALP/UADALP (op=1): adjacent lane pairs summed into lanes of
    twice the width, the accumulating forms adding onto Vd's wide lanes."""
    f = i.f
    U, size, Q, acc = f["U"], f["size"], f["Q"], f["op"]  # (size 11 is reserved: isa.py's ``!size=11``)
    w, ut, st, _bits = _LANE[size]
    ww, wut = _LANE[size + 1][0], _LANE[size + 1][1]
    t = ut if U else st
    e = f"({wut})(({wut})({t})a.{w}[2*i] + ({wut})({t})a.{w}[2*i+1]{f' + c.{ww}[i]' if acc else ''})"
    _vop(em, f["Rd"], Q, size + 1, e, {"a": f["Rn"], "c": f["Rd"]})


def h_shift_ins(em: FunctionEmitter, i: Insn) -> None:
    """SRI (op=0) / SLI (op=1): the shifted Vn lanes replace the bits of Vd they cover."""
    f = i.f
    scalar = i.group == "SIMD_scalar_shift_ins"
    immh, immb, op = f["immh"], f["immb"], f["op"]
    # immh 0000 is the modified-immediate space (SIMD_movi's rows, earlier in isa.py); the scalar
    # forms' immh 0xxx and the vector forms' immh 1xxx with Q 0 are reserved (``!`` clauses)
    size = immh.bit_length() - 1
    Q = 1 if scalar else f["Q"]
    w, ut, _st, bits = _LANE[size]
    imm = (immh << 3) | immb
    ones = (1 << bits) - 1
    if op == 0:
        sh = 2 * bits - imm
        mask = ones >> sh if sh < bits else 0
        moved = f"(a.{w}[i] >> {sh})" if sh < bits else "0"
    else:
        sh = imm - bits
        mask = (ones << sh) & ones
        moved = f"({ut})(a.{w}[i] << {sh})"
    e = f"({ut})((c.{w}[i] & ({ut}){(~mask) & ones:#x}ull) | {moved})"
    lanes = 1 if scalar else _lanes(Q, size)
    em.out(
        f"{{ NxVec a = v{f['Rn']}, c = v{f['Rd']}; NxVec _r; _r.q = 0; "
        f"for (int i = 0; i < {lanes}; i++) _r.{w}[i] = {e}; v{f['Rd']} = _r; }}"
    )
