"""Functions that never return to their caller (``noreturn_functions``): on every path from the
entry, no RET, no jump out through a register, every tail call to another such function (and
no RET anywhere in the function's span of the image).  A path ends at a call of one, and at a
call followed only by padding before the next function.  A call of one ends its path in the
lifted code."""

from __future__ import annotations

import struct

from recompiler.analysis.image import Memory
from recompiler.analysis.transfer import ENDS
from recompiler.lift import effects, liveness
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


def noreturn_functions(
    funcs: dict[int, FunctionPlan], mem: Memory | None = None, inexact: set[int] = frozenset(), weak: set[int] = frozenset()
) -> set[int]:
    """The functions that never return to their caller: no RET, no jump out through a register
    (a jump table's targets and an IFUNC stub's candidates count as tail calls), and every tail
    call (a branch out, the fall into the next function) goes to such a function, on every path
    from the entry.  A path ends at a call of a function already found to be one: the code after
    such a call is not reached from it (glibc's ``malloc_printerr`` calls ``__libc_message``,
    which aborts, and its next word is the next function's first, into which it would otherwise
    fall; its callers' bytes after the call are no code either).  What runs after a call of one
    is never reached by that call (a non-local exit lands elsewhere: at a setjmp's return, a
    landing pad): the lifter ends such a call with a fatal error instead of falling into the
    code after it, so neither liveness nor clang sees a path from the call on.  ``inexact``:
    BRs whose table rests on a guess (``analysis.tables.Recovered.exact``), which may go
    elsewhere.  ``weak``: entries seen only as code pointers (a data word, an ``adrp``+``add``),
    which may be something else that looks like a code address: a call followed by one is no
    call followed by the next function (below).  Least fixed point: mutual tail recursion with
    no other way out is left out; so is a function with a RET anywhere in its span of the image
    (``_returns_in_span``), and one that keeps its return address somewhere other than its
    frame (``_captures_return_address``: a later jump there is its return, as Go's ``mcall`` and
    ``morestack`` are left)."""
    returning = _returns_in_span(mem, funcs) if mem is not None else set()
    cands = [e for e in funcs if e not in returning and not _captures_return_address(funcs[e])]
    # who may change its answer when a function is found never to return: its callers and
    # the functions that branch or fall into it
    users: dict[int, set[int]] = {}
    for e in cands:
        plan = funcs[e]
        for i in plan.insns:
            for t in (branch_target(i), *plan.jump_tables.get(i.addr, ()), *plan.ifunc_targets.get(i.addr, ())):
                if t is not None:
                    users.setdefault(t, set()).add(e)
            users.setdefault(i.addr + 4, set()).add(e)
    noret: set[int] = set()
    work = list(cands)
    queued = set(work)
    while work:
        e = work.pop()
        queued.discard(e)
        if e in noret or not _never_returns(funcs[e], noret, inexact, weak):
            continue
        noret.add(e)
        for u in users.get(e, ()):
            if u not in noret and u not in queued:
                queued.add(u)
                work.append(u)
    return noret


def _captures_return_address(plan: FunctionPlan) -> bool:
    """Whether the function reads X30 other than to store it into a stack slot (base SP or
    X29: a frame record): it may keep its return address (its entry's X30) in memory or a
    register, and something may jump there later.  Go's ``mcall`` and ``morestack`` store it in
    the goroutine's saved context and never return; ``gogo`` later resumes the goroutine at that
    address, after the call, whose next instruction then runs (``morestack``'s callers go back
    to their own entry from there).  Conservative: a read of X30 after a call (no longer the
    entry's) counts too."""
    lr = liveness.xbit(30)
    for i in plan.insns:
        if not effects.declare(i).reads & lr or i.name in ("RET", "BR", "BLR"):
            continue
        if i.name.startswith("ST") and i.f.get("Rn") in (29, 31):
            continue  # a save into the frame
        return True
    return False


def _never_returns(plan: FunctionPlan, noret: set[int], inexact: set[int], weak: set[int] = frozenset()) -> bool:
    """Every path from ``plan``'s entry ends in a trap, a tail call of a function in ``noret``
    (or of itself) or a call of one; none reaches a RET, a jump through a register without an
    exact table, or a branch or fall out of the body to any other function."""
    at = {i.addr: i for i in plan.insns}
    seen: set[int] = set()
    work = [plan.entry]
    while work:
        a = work.pop()
        if a in seen:
            continue
        i = at.get(a)
        if i is None:  # out of the body: a tail call
            if a != plan.entry and a not in noret:
                return False
            continue
        seen.add(a)
        n = i.name
        if n == "RET" or (n == "BR" and (a not in plan.jump_tables or a in inexact) and a not in plan.ifunc_targets):
            return False
        work.extend(plan.jump_tables.get(a, ()))
        work.extend(plan.ifunc_targets.get(a, ()))
        if n == "BL" and branch_target(i) in noret:
            continue  # the call does not come back: the next instruction is not reached from here
        t = branch_target(i) if n != "BL" else None
        if t is not None:
            if t == plan.entry and t not in at:
                continue
            work.append(t)
        if i.form is not None and n not in ENDS and not (i.group == "BCOND" and i.f["cond"] >> 1 == 7):
            if n not in ("BL", "BLR") or _after_call(at, a) in at or _after_call(at, a) in weak:
                work.append(a + 4)
            # else a call followed by nothing but padding before the next function: no compiler
            # lets a call's return run on into another function, so the callee does not return
            # from there (``malloc_printerr``'s ``__libc_message`` returns only for other
            # arguments) and the path ends.  Not where that function is a weak entry: bash's
            # rodata holds the getopt string "...C:DEI", whose last word reads 0x494544, the
            # return address of a call of a function that returns; its body ended at the call,
            # it was taken never to return, and its caller stopped with a fatal error there
    return True


def _after_call(at: dict, a: int) -> int:
    """The first address after the call at ``a`` that is not a ``nop`` of the body ``at``."""
    b = a + 4
    while b in at and at[b].name == "NOP":
        b += 4
    return b
