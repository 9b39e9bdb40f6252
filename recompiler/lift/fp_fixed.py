"""Conversions between floating point and fixed point in a general register: SCVTF/UCVTF
(integer / 2^fbits) and FCVTZS/FCVTZU (value * 2^fbits, toward zero, saturating).

Scaling by a power of two is exact in the ranges these reach (|fbits| <= 64 keeps results far
from the subnormal range), so one host conversion does the one rounding the architecture
makes; the float -> integer direction scales in double, where every float times 2^64 is exact."""
from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter, LiftError
from recompiler.lift.fp_simd import _FT, _fget, _fset


def h_fp_fix(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sf, ftype, rmode, op, scale = f["sf"], f["ftype"], f["rmode"], f["opcode"], f["scale"]
    if ftype not in _FT:
        raise LiftError("half-precision fixed-point conversion")
    if not sf and scale < 32:
        raise LiftError("reserved fixed-point scale")
    fbits = 64 - scale
    ft = _FT[ftype]
    n, d = f["Rn"], f["Rd"]
    if rmode == 0 and op in (2, 3):     # SCVTF / UCVTF
        x = f"NX_AFTER_FPCR({em.x(n)})"
        if op == 3 and sf:
            conv = f"NX_U64TO{'D' if ftype else 'F'}({x})"
        else:
            conv = f"({ft[1]})" + (f"(i64){x}" if sf else (f"(i32){x}" if op == 2 else f"(u32){x}"))
        _fset(em, d, ft, f"{conv} * ({ft[1]})0x1p-{fbits}")
        return
    if rmode == 3 and op in (0, 1):     # FCVTZS / FCVTZU
        bits = 64 if sf else 32
        fn = f"FCVT_{'S' if op == 0 else 'U'}{bits}"
        em.setx(d, f"{fn}(__builtin_trunc((double){_fget(n, ft)} * 0x1p{fbits}))", sf)
        return
    raise LiftError("fixed-point conversion form")


HANDLERS = {"FP_FIX_CONV": h_fp_fix}
