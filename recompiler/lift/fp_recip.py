"""Reciprocal and reciprocal-square-root estimates and Newton-Raphson steps: FRECPE, FRSQRTE,
URECPE, URSQRTE, FRECPX (scalar and vector), FRECPS and FRSQRTS.

The estimates are bit-exact table look-ups (``cpu_host/runtime/core/lifted_fp.h``, tables from
``fp_estimate.py``) done on the operands' bits, so FPCR.FZ/DN/RMode act exactly as the Arm ARM's
FPRecipEstimate/FPRSqrtEstimate say.  The steps are one fused multiply-add on the host (its
MXCSR holds the guest's rounding mode and FZ) with the architecture's special cases around it
(the first operand negated before NaN selection, inf * 0 giving 2 or 1.5).  Half-precision
forms (FEAT_FP16) are not lifted."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import vector
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.fp_simd import _fp_loop, _fp_lanes


def _scalar_bits(em: FunctionEmitter, d: int, sz: int, expr: str) -> None:
    """Write a 32/64-bit result (bits) to lane 0 of Vd, clearing the rest."""
    em.out(f"{{ u64 _b = (u64)({expr}){'' if sz else ' & 0xffffffffull'}; {vector.low(em, d, '_b')} }}")


def h_recip_est(em: FunctionEmitter, i: Insn) -> None:
    """Vector FRECPE (U=0, o=1), FRSQRTE (U=1, o=1), URECPE (U=0, o=0), URSQRTE (U=1, o=0)."""
    f = i.f
    U, sz, o = f["U"], f["sz"], f["o"]
    n, d = f["Rn"], f["Rd"]
    if o == 0:  # (sz = 1 is reserved: the URECPE/URSQRTE rows fix sz = 0)
        _fp_loop(em, d, 4 if f["Q"] else 2, "s", f"NX_{'URSQRTE' if U else 'URECPE'}(a.s[i])", {"a": n})
        return
    T, w, iw, ut, L = _fp_lanes(em, dict(f, size=sz))
    bits = 64 if T == "D" else 32
    fn = "NX_FRSQRTE" if U else "NX_FRECPE"
    _fp_loop(em, d, L, iw, f"({ut}){fn}(a.{iw}[i], {bits}, s->fpcr)", {"a": n})


def h_scalar_recip_est(em: FunctionEmitter, i: Insn) -> None:
    """Scalar FRECPE (U=0, o=1), FRSQRTE (U=1, o=1), FRECPX (U=0, o=3)."""
    f = i.f
    U, sz, o = f["U"], f["sz"], f["o"]
    fn = {(0, 1): "NX_FRECPE", (1, 1): "NX_FRSQRTE", (0, 3): "NX_FRECPX"}[(U, o)]  # (the rows fix U, o)
    src = f"v{f['Rn']}.{'d' if sz else 's'}[0]"
    _scalar_bits(em, f["Rd"], sz, f"{fn}({src}, {64 if sz else 32}, s->fpcr)")


def h_recip_step(em: FunctionEmitter, i: Insn) -> None:
    """FRECPS (o=0) / FRSQRTS (o=1), vector and scalar."""
    f = i.f
    fn = "FRSQRTS" if f["o"] else "FRECPS"
    if i.group == "SIMD_scalar_recip_step":
        T, w = ("D", "fd") if f["sz"] else ("S", "f")
        a, b = f"v{f['Rn']}.{w}[0]", f"v{f['Rm']}.{w}[0]"
        t = "double" if T == "D" else "float"
        em.out(f"{{ {t} _r = {fn}_{T}({a}, {b}, s->fpcr); {vector.low_fp(em, f['Rd'], w, '_r')} }}")
        return
    T, w, iw, ut, L = _fp_lanes(em, dict(f, size=f["sz"]))
    _fp_loop(em, f["Rd"], L, w, f"{fn}_{T}(a.{w}[i], b.{w}[i], s->fpcr)", {"a": f["Rn"], "b": f["Rm"]})
