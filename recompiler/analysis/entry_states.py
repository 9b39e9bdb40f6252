"""Start values passed along jumps between functions: a function entered by a branch that is
not a call -- a tail jump (``b f``), a conditional branch or a fall-through into another
entry, a jump table's target that is an entry -- starts with what the code that jumps there
holds.  Its entry state is the join of the states at every such branch in the image
(``EntrySeed.union``: the constants each register and frame slot may hold), taken as a merge
that something else reaches too (a call from elsewhere may pass anything), so a table found
through it is never exact: the lifted ``BR`` still switches on the real target.

That is where a label function's table base comes from when the code jumping to it set the
base up in a register (an interpreter's handler entered from a dispatch in another function, a
fragment its caller jumps into with the table's address already loaded).  Label functions
inside the body of the function that jumps to them get the same from that function's own
analysis (``Analyser._note_seeds``); this pass covers jumps from other functions.

Demand-driven, to keep the cost down: only a function with a ``BR`` still without a table is
given a seed, and the value analysis of the functions jumping into it is run only then (once
each; cached).  The seeded function is analysed again; its callers' seeds may change in turn,
so the pass repeats, at most ``ROUNDS`` times.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompiler.analysis.transfer import successors
from recompiler.analysis.values import EntrySeed, FunctionValues
from recompiler.lift.emitter import FunctionPlan

if TYPE_CHECKING:
    from recompiler.analysis.bodies import Analyser

ROUNDS = 3


def jumps_into(funcs: dict[int, FunctionPlan]) -> dict[int, list[tuple[int, int, bool]]]:
    """Entry -> (function, branch address, falls into it) for each transfer that is not a call
    from another function's body to the entry."""
    out: dict[int, list[tuple[int, int, bool]]] = {}
    for e, plan in funcs.items():
        own = {i.addr for i in plan.insns}
        for i in plan.insns:
            t, falls = successors(i)
            ts = [t] if t is not None else []
            ts += plan.jump_tables.get(i.addr, ())
            for x in dict.fromkeys(ts):
                if x in funcs and x not in own:
                    out.setdefault(x, []).append((e, i.addr, False))
            if falls and i.addr + 4 in funcs and i.addr + 4 not in own:
                out.setdefault(i.addr + 4, []).append((e, i.addr, True))
    return out


def unresolved(plan: FunctionPlan) -> bool:
    """``plan`` has an indirect ``BR`` with no table (nor IFUNC list)."""
    return any(i.name == "BR" and i.addr not in plan.jump_tables and i.addr not in plan.ifunc_targets for i in plan.insns)


def pass_entry_states(an: Analyser, funcs: dict[int, FunctionPlan]) -> set[int]:
    """Seed the functions with an unresolved ``BR`` from the branches into them and analyse
    them again (``funcs`` updated in place); the functions whose body or tables changed."""
    values: dict[int, FunctionValues | None] = {}

    def analysis(e: int) -> FunctionValues | None:
        if e not in values:
            plan = funcs[e]
            fv = FunctionValues(an.transfer, {i.addr: i for i in plan.insns}, e, plan.jump_tables, an.seeds.get(e))
            values[e] = fv if fv.ok else None
        return values[e]

    changed: set[int] = set()
    for _round in range(ROUNDS):
        into = jumps_into(funcs)
        grew = False
        for e in sorted(x for x in into if x in funcs and unresolved(funcs[x])):
            seed: EntrySeed | None = None
            for c, a, falls in into[e]:
                fv = analysis(c) if c in funcs else None
                s = None if fv is None else fv.seed_after(a) if falls else fv.seed_at(a)
                if s is not None:
                    seed = s if seed is None else seed.union(s)
            if seed is None or not (seed.regs or seed.slots):
                continue
            old = an.seeds.get(e)
            new = seed if old is None else old.union(seed)
            if new == old:
                continue
            an.seeds[e] = new
            before = funcs[e]
            plan = an.function(e)
            if not plan.insns:
                continue
            funcs[e] = plan
            values.pop(e, None)  # (its own seed changed: what it passes on may too)
            if plan.jump_tables != before.jump_tables or len(plan.insns) != len(before.insns):
                changed.add(e)
                grew = True
        if not grew:
            break
    return changed
