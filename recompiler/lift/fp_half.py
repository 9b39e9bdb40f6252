"""Conversions that change the FP width beyond single <-> double: FCVT to and from half
precision (scalar), FCVTN/FCVTN2 and FCVTL/FCVTL2 (vector, half <-> single and single <->
double) and FCVTXN/FCVTXN2 (double -> single, round to odd).

Half precision has no host type here (the x86-64 baseline lacks F16C), so a conversion to half
is one software rounding of the operand's bits (``NX_FCVT_NARROW`` in lifted_fp.h) under
FPCR.RMode, with FPCR.AHP (alternative half precision), DN and FZ (input side) as FPConvert
says; a conversion from half is exact.  Single <-> double lanes use the host conversion as the
scalar FCVT does (fp_simd.py)."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import vector
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _FT, _fset, _narrow


def h_fcvt_to_half(em: FunctionEmitter, i: Insn) -> None:
    """FCVT Hd, Sn (sz=0) / Hd, Dn (sz=1)."""
    f = i.f
    src = f"v{f['Rn']}.{'fd' if f['sz'] else 'f'}[0]"
    fn = "NX_D2H" if f["sz"] else "NX_F2H"
    em.out(f"{{ u16 _h = {fn}({src}, s->fpcr); {vector.low(em, f['Rd'], '_h')} }}")


def h_fcvt_from_half(em: FunctionEmitter, i: Insn) -> None:
    """FCVT Sd, Hn (o=0) / Dd, Hn (o=1)."""
    f = i.f
    ft = _FT[f["o"]]
    fn = "NX_H2D" if f["o"] else "NX_H2F"
    _fset(em, f["Rd"], ft, f"{fn}(v{f['Rn']}.h[0], s->fpcr)")


def h_fcvt_nl(em: FunctionEmitter, i: Insn) -> None:
    """FCVTN(2) (U=0, o=0), FCVTL(2) (U=0, o=1), FCVTXN(2) (U=1, o=0, sz=1)."""
    f = i.f
    Q, U, sz, o = f["Q"], f["U"], f["sz"], f["o"]
    n, d = f["Rn"], f["Rd"]
    if (U, o) == (0, 0):  # narrow: 4s -> 4h, 2d -> 2s, into the low or (Q) high half of Vd
        if sz:
            _narrow(em, d, Q, "f", 2, "FDN_S(NX_FCVT_DS(a.fd[i], s->fpcr), s->fpcr)", {"a": n})
        else:
            _narrow(em, d, Q, "h", 4, "NX_F2H(a.f[i], s->fpcr)", {"a": n})
        return
    if (U, o) == (1, 0):  # FCVTXN: 2d -> 2s, round to odd (sz 0 is reserved: isa.py's ``!sz=0``)
        _narrow(em, d, Q, "f", 2, "NX_D2F_ODD(a.fd[i], s->fpcr)", {"a": n})
        return
    # (U, o) = (0, 1): widen the low or (Q) high half of Vn (the rows fix U and o)
    if sz:
        part = 2 if Q else 0
        e = f"FDN_D((double)a.f[{part} + i], s->fpcr)"
        em.out(f"{{ NxVec a = v{n}; NxVec _r; for (int i = 0; i < 2; i++) _r.fd[i] = {e}; v{d} = _r; }}")
    else:
        part = 4 if Q else 0
        e = f"NX_H2F(a.h[{part} + i], s->fpcr)"
        em.out(f"{{ NxVec a = v{n}; NxVec _r; for (int i = 0; i < 4; i++) _r.f[i] = {e}; v{d} = _r; }}")


def h_scalar_fcvtxn(em: FunctionEmitter, i: Insn) -> None:
    f = i.f  # (sz 0 is reserved: isa.py's ``!sz=0``)
    _fset(em, f["Rd"], _FT[0], f"NX_D2F_ODD(v{f['Rn']}.fd[0], s->fpcr)")
