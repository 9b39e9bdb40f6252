"""Functions that never return to their caller (``noreturn_functions``): no RET (none anywhere
in the function's span of the image either), no jump out through a register, every tail call
to another such function.  A call of one ends its path in the lifted code."""

from __future__ import annotations

import struct

from recompiler.analysis.image import Memory
from recompiler.analysis.transfer import ENDS
from recompiler.lift.control import branch_target
from recompiler.lift.emitter import FunctionPlan


def _returns_in_span(mem: Memory, funcs: dict[int, FunctionPlan]) -> set[int]:
    """The functions with a RET (or a ``br x30``) anywhere between their lowest instruction and
    the next function's entry: code their branches do not reach may still return (a landing pad
    the unwinder enters)."""
    starts = sorted(funcs)
    out: set[int] = set()
    for k, e in enumerate(starts):
        body = funcs[e].insns
        lo = min(body[0].addr, e)
        if k + 1 < len(starts):
            hi = max(body[-1].addr + 4, starts[k + 1])
        else:  # the last function: up to the end of its code segment
            hi = max([body[-1].addr + 4, *(va + len(d) for va, _m, d, x in mem.segments if x and va <= e < va + len(d))])
        data = mem.read(lo, hi - lo) if hi > lo else None
        if data is None:
            out.add(e)
            continue
        for (w,) in struct.iter_unpack("<I", data[: len(data) // 4 * 4]):
            if w & 0xFFFFFC1F == 0xD65F0000 or w in (0xD65F0BFF, 0xD65F0FFF, 0xD61F03C0):
                out.add(e)
                break
    return out


def noreturn_functions(funcs: dict[int, FunctionPlan], mem: Memory | None = None, inexact: set[int] = frozenset()) -> set[int]:
    """The functions that never return to their caller: no RET, no jump out through a register
    (a jump table's targets and an IFUNC stub's candidates count as tail calls), and every tail
    call (a branch out, the fall into the next function) goes to such a function.  What runs
    after a call of one is never reached by that call (a non-local exit lands elsewhere: at a
    setjmp's return, a landing pad): the lifter ends such a call with a fatal error instead of
    falling into the code after it, so neither liveness nor clang sees a path from the call on.
    ``inexact``: BRs whose table rests on a guess (``analysis.tables.Recovered.exact``), which
    may go elsewhere.  Least fixed point: mutual tail recursion with no other way out is left out; so is a
    function with a RET anywhere in its span of the image (``_returns_in_span``)."""
    tails: dict[int, set[int]] = {}
    returning = _returns_in_span(mem, funcs) if mem is not None else set()
    for e, plan in funcs.items():
        if e in returning:
            continue
        addrs = {i.addr for i in plan.insns}
        out: set[int] | None = set()
        for i in plan.insns:
            n = i.name
            if n == "RET" or (
                n == "BR" and (i.addr not in plan.jump_tables or i.addr in inexact) and i.addr not in plan.ifunc_targets
            ):
                out = None
                break
            targets = [*plan.jump_tables.get(i.addr, ()), *plan.ifunc_targets.get(i.addr, ())]
            t = branch_target(i) if n != "BL" else None
            if t is not None:
                targets.append(t)
            falls = i.form is not None and n not in ENDS and not (i.group == "BCOND" and i.f["cond"] >> 1 == 7)
            if falls and i.addr + 4 not in addrs and n not in ("BL", "BLR"):
                targets.append(i.addr + 4)  # the fall into the next function
            out |= {x for x in targets if x not in addrs}
        if out is not None:
            tails[e] = out
    noret: set[int] = set()
    changed = True
    while changed:
        changed = False
        for e, out in tails.items():
            if e not in noret and all(x == e or x in noret for x in out):
                noret.add(e)
                changed = True
    return noret
