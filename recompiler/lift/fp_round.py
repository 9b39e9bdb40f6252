"""FRINT32Z/FRINT32X/FRINT64Z/FRINT64X (scalar and vector: round to an integral value that fits
a 32/64-bit integer, else the most negative one) and FJCVTZS (JavaScript's double -> int32:
toward zero, modulo 2^32, Z set when exact and in range).  Helpers in lifted_fp.h."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _FT, _fget, _fp_lanes, _fp_loop, _fset

_LIMIT = {(0, 0): "0x1p31f", (0, 1): "0x1p63f", (1, 0): "0x1p31", (1, 1): "0x1p63"}  # (double?, 64-bit?)


def _frint(T: str, op: int, sz: int, a: str) -> str:
    """op bit 1: 64-bit range; bit 0: X (FPCR rounding) rather than Z (toward zero)."""
    return f"FRINT{T}{'X' if op & 1 else 'Z'}({a}, {_LIMIT[(sz, op >> 1)]})"


def h_frint_n(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    sz = f["sz"]
    ft = _FT[sz]
    _fset(em, f["Rd"], ft, _frint("D" if sz else "S", f["op"], sz, _fget(f["Rn"], ft)))


def h_simd_frint_n(em: FunctionEmitter, i: Insn) -> None:
    """Vector forms: opcode bit 0 (``op``) picks 64-bit range, U picks X."""
    f = i.f
    T, w, _iw, _ut, L = _fp_lanes(em, dict(f, size=f["sz"]))
    op = (f["op"] << 1) | f["U"]
    _fp_loop(em, f["Rd"], L, w, _frint(T, op, f["sz"], f"a.{w}[i]"), {"a": f["Rn"]})


def h_fjcvtzs(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    em.flags_touched()
    em.out(f"{{ u8 _z; u64 _j = NX_FJCVTZS(v{f['Rn']}.d[0], s->fpcr, &_z); FLAGS_SET((u32)_z << 2);")
    em.setx(f["Rd"], "_j", 0)
    em.out("}")
