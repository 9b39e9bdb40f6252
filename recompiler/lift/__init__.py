"""Lift one guest function to C: the emitter plus the handler table of every instruction form."""
from __future__ import annotations

import logging

from recompiler.lift import (control, crypto, fp_across, fp_f16, fp_fixed, fp_fpsr, fp_half, fp_recip, fp_round,
                             fp_simd, integer, memory, simd_bits, simd_dot, simd_int, simd_vec)
from recompiler.lift.interproc import FnLive
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan

HANDLERS: dict = {**integer.HANDLERS, **memory.HANDLERS, **control.HANDLERS, **fp_simd.HANDLERS,
                  **simd_bits.HANDLERS, **fp_fixed.HANDLERS, **crypto.HANDLERS,
                  **fp_recip.HANDLERS, **fp_half.HANDLERS, **fp_round.HANDLERS, **fp_f16.HANDLERS,
                  **fp_across.HANDLERS, **simd_dot.HANDLERS,
                  **simd_int.HANDLERS,   # after fp_simd's: takes its forms first, hands the rest back
                  **simd_vec.HANDLERS,   # after both: the forms with a vector-typed lowering
                  **fp_fpsr.HANDLERS}   # after control's: takes FPSR/FPCR accesses, hands the rest back


def lift_function(plan: FunctionPlan, functions: set[int], *, trust_abi: bool = True,
                  comments: bool = False, trace: bool = False,
                  defer: bool = False, elide_saves: bool = True) -> tuple[str, set[int], FnLive | None]:
    """C source of ``plan``'s function, the set of functions it calls directly, and, with
    ``defer``, what ``interproc.place`` needs to fill its call sites' placeholders (None when
    the lists are written at once: ``trust_abi`` off, trace builds)."""
    em = FunctionEmitter(plan, functions, trust_abi=trust_abi, comments=comments, trace=trace,
                         elide_saves=elide_saves)
    code = em.emit(HANDLERS, defer=defer)
    for err in em.internal_errors:
        logging.getLogger("recompiler.lift").warning("lifter error (lifted as a fatal trap): %s", err)
    return code, em.callees, em.facts if defer else None
