"""Lift one guest function to C: the emitter (``emitter.py``) and the table of each form's handler
(``forms.py``)."""

from __future__ import annotations

import logging

from recompiler.lift.emitter import FunctionEmitter, FunctionPlan
from recompiler.lift.forms import HANDLERS
from recompiler.lift.interproc import FnLive
from recompiler.lift.template import CText

__all__ = ["HANDLERS", "FunctionEmitter", "FunctionPlan", "FnLive", "lift_function"]


def lift_function(
    plan: FunctionPlan,
    functions: set[int],
    *,
    trust_abi: bool = True,
    comments: bool = False,
    trace: bool = False,
    defer: bool = False,
    elide_saves: bool = True,
    abi: str = "aapcs64",
) -> tuple[CText | str, set[int], FnLive | None]:
    """C source of ``plan``'s function, the set of functions it calls directly, and, with
    ``defer``, what ``interproc.place`` needs to fill its slots (``template.CText``; None when
    the lists are written at once: ``trust_abi`` off, trace builds).  Without ``defer`` the C is
    a string, its lists written for unknown callees.  ``abi``: the code's calling convention
    (``Program.abi``: "aapcs64" or "go")."""
    em = FunctionEmitter(plan, functions, trust_abi=trust_abi, comments=comments, trace=trace, elide_saves=elide_saves, abi=abi)
    code = em.emit(HANDLERS, defer=defer)
    for err in em.internal_errors:
        logging.getLogger("recompiler.lift").warning("lifter error (lifted as a fatal trap): %s", err)
    return code, em.callees, em.facts if defer else None
