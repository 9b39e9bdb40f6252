"""FPSR's cumulative exception flags (IOC DZC OFC UFC IXC), for programs that read them.

Nothing is tracked per FP instruction: the host's MXCSR collects its own status flags while the
lifted code runs, in the thread the guest thread runs on.  So a guest ``MRS Xt, FPSR`` reads
``s->fpsr`` ORed with those flags (``NX_FPSR_HOST``), ``MSR FPSR, Xt`` stores ``s->fpsr`` and
clears them, and ``MSR FPCR`` keeps them while it changes the rounding mode and FZ.  Code that
never reads FPSR pays nothing.  Before either access (and before MSR FPCR) every register local
is stored, so an FP result held in a local (FCVTZS into X0, FADD into D0...) is computed first;
after it the vector locals are reloaded from ``NxCpu`` (``RELOAD_V``), so an FP operation that
follows reads values the asm's memory clobber orders after it (the compiler may move
arithmetic on locals across an asm).  Limits: docs/ARCHITECTURE.md,
"FPSR".  The forms ``MRS_fpsr`` and ``MSR_fp`` (isa.py) are this module's; every other system
register is control.py's."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import control
from recompiler.lift.emitter import FunctionEmitter


def h_mrs(em: FunctionEmitter, i: Insn) -> None:
    em.fp_env()
    em.out("STORE_ALL;")
    em.setx(i.f["Rt"], "(s->fpsr | NX_FPSR_HOST())")
    em.out("RELOAD_V;")


def h_msr(em: FunctionEmitter, i: Insn) -> None:
    r = control._sysreg(i.f)
    v = em.x(i.f["Rt"])
    if r == control._FPSR:  # N Z C V QC and the cumulative exception flags
        em.fp_env()
        em.out(f"STORE_ALL; s->fpsr = {v} & 0xf800009full; NX_FPSR_CLEAR_HOST(); RELOAD_V;")
    elif r == control._FPCR:  # only AHP DN FZ RMode Stride FZ16 Len exist; the rest is RES0
        em.fp_env()
        em.out(f"STORE_ALL; s->fpcr = {v} & 0x07ff0000ull; NX_FPCR_APPLY_KEEP(s->fpcr); RELOAD_V;")
