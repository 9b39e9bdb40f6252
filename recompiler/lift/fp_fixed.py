"""Conversions between floating point and fixed point in a general register: SCVTF/UCVTF
(integer / 2^fbits) and FCVTZS/FCVTZU (value * 2^fbits, toward zero, saturating).

Scaling by a power of two is exact in the ranges these reach (|fbits| <= 64 keeps results far
from the subnormal range), so one host conversion does the one rounding the architecture
makes; the float -> integer direction scales in double, where every float times 2^64 is exact.
Half precision: integer -> half is one software rounding (``NX_I2H_FIX``, FZ16 flushes a tiny
result), half -> integer scales the half's exact double value."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import vector
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _FT, _fget, _fset


def h_fp_fix(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, ftype, rmode, op, scale = f["sf"], f["ftype"], f["rmode"], f["opcode"], f["scale"]
    fbits = 64 - scale  # (sf 0 with scale<5> 0 and ftype 10 are reserved: isa.py's ``!`` clauses)
    if ftype == 3:
        _half(em, i, fbits)
        return
    ft = _FT[ftype]
    n, d = f["Rn"], f["Rd"]
    if rmode == 0 and op in (2, 3):  # SCVTF / UCVTF
        x = f"NX_AFTER_FPCR({em.x(n)})"
        if op == 3 and sf:
            conv = f"NX_U64TO{'D' if ftype else 'F'}({x})"
        else:
            conv = f"({ft[1]})" + (f"(i64){x}" if sf else (f"(i32){x}" if op == 2 else f"(u32){x}"))
        _fset(em, d, ft, f"{conv} * ({ft[1]})0x1p-{fbits}")
        return
    # rmode 11, opcode 00x: FCVTZS / FCVTZU (the four rows fix rmode and opcode)
    bits = 64 if sf else 32
    fn = f"FCVT_{'S' if op == 0 else 'U'}{bits}"
    em.setx(d, f"{fn}(__builtin_trunc((double){_fget(n, ft)} * 0x1p{fbits}))", sf)


def _half(em: FunctionEmitter, i: Insn, fbits: int) -> None:
    """The same for half precision (FP16): one software rounding (lifted_fp.h), FZ16."""
    f = i.f
    sf, rmode, op, n, d = f["sf"], f["rmode"], f["opcode"], f["Rn"], f["Rd"]
    if rmode == 0 and op in (2, 3):
        v = f"(i64){em.x(n)}" if sf else (f"(i64)(i32){em.x(n, 0)}" if op == 2 else f"(i64)(u32){em.x(n, 0)}")
        if op == 3 and sf:
            e = f"NX_I2H_FIX({em.x(n)}, 0, {fbits}, s->fpcr)"
        else:
            e = f"NX_I2H_FIX({v} < 0 ? 0 - (u64){v} : (u64){v}, {v} < 0, {fbits}, s->fpcr)"
        em.out(f"{{ u16 _h = {e}; {vector.low(em, d, '_h')} }}")
        return
    # rmode 11, opcode 00x: FCVTZS / FCVTZU
    bits = 64 if sf else 32
    em.setx(d, f"FCVT_{'S' if op == 0 else 'U'}{bits}(__builtin_trunc(NX_HVAL(v{n}.h[0], s->fpcr) * 0x1p{fbits}))", sf)
