"""Which back edges of a lifted function need the loop-edge compiler barrier (lifted.h NX_LOOP_EDGE).

Why a barrier at all: a guest loop that polls memory another thread writes (`1: ldr w8, [x9];
cbz w8, 1b`) must load it again each time round, as the Arm memory model promises; the lifted C
reads guest memory with plain loads, and clang may keep the first value for every later round
of a loop in which nothing can change memory.  Something that may change memory as far as clang
can tell forces the reload as well: a store through a guest address (clang cannot tell it from
the polled word's), a system call, an FPSR/FPCR access or a trap (each stores every register
into ``NxCpu`` and calls the runtime), a call through a register (an unknown callee).  A direct
call does not count: its callee may be copied into the shard (``inline_leaves``) or be seen by
clang to only read memory.  The barrier keeps clang from reordering the loop's loads and
vectorising it, which costs loops that load and store (busybox sort 0.72x -> 0.64x of native
with it on every back edge), so it goes only where a round of the loop can run with none of
these: on every other back edge it is left out.

The decision, per back edge ``src -> target`` (``target <= src``), as the emitter reaches it in
address order (every instruction at or below ``src`` lifted, each one's ``Lifted`` record final
but ``src``'s own): every cycle of the control-flow graph has a highest instruction, whose back
edge closes it, and all its other instructions lie below that one.  So the cycles closed at
``src -> target`` are the paths from ``target`` to ``src`` through instructions at or below
``src``; the barrier goes there if one of them passes no instruction that forces a reload and
no back edge already given the barrier.  Edges are the records' own: the labels each branches to
(``Lifted.succs``), the fall to the next instruction, the function's jump tables' and direct
tables' targets.  Memory effects are the records' (``Lifted.memory``, declared by each form as
it is lifted: ``lift/effects/``).  A search
that meets more than ``MAX_VISIT`` instructions gives the barrier (safe, and rare).

``recompiler.loop_edges = all`` puts the barrier on every back edge, as before (for the A/B of
``bench/busybox.py --loop-edges`` and for bisecting a hang).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompiler.lift.result import Lifted, Mem

if TYPE_CHECKING:
    from recompiler.lift.emitter import FunctionEmitter

MAX_VISIT = 4096  # instructions one back edge's search may meet before it gives the barrier


class LoopEdges:
    """The back-edge decisions of one function being lifted (kept by its emitter)."""

    def __init__(self, em: FunctionEmitter) -> None:
        self.em = em
        self.at: dict[int, int] = {}  # address -> index of its record in em.records
        self.forces: dict[int, bool] = {}  # address -> whether it forces a reload
        self.barriers: set[tuple[int, int]] = set()  # back edges given the barrier
        plan = em.plan
        # targets of tables the records do not list as succs (a shared or direct table's)
        self.table_succs: dict[int, list[int]] = {}
        for a, ts in plan.jump_tables.items():
            self.table_succs.setdefault(a, []).extend(t for t in ts if t in em.addrs)
        for a, d in plan.direct_tables.items():
            self.table_succs.setdefault(a, []).extend(t for t in d.targets if t is not None and t in em.addrs)

    def _index(self) -> None:
        recs = self.em.records
        for k in range(len(self.at), len(recs)):
            self.at[recs[k].addr] = k

    def _forces(self, k: int) -> bool:
        """Whether record ``k`` (complete: a later record follows it) may change memory for clang."""
        rec: Lifted = self.em.records[k]
        v = self.forces.get(rec.addr)
        if v is None:
            if rec.svc or rec.fp_env or rec.fatal:
                v = True
            elif rec.call is not None and self.em.call_targets[rec.call] is None:
                v = True  # a call through a register or to an address that is no function
            else:  # declared by the form as it was lifted (lift/effects/)
                v = bool(rec.memory & Mem.STORE)
            self.forces[rec.addr] = v
        return v

    def _succs(self, k: int) -> list[int]:
        rec: Lifted = self.em.records[k]
        out = list(rec.succs)
        if rec.falls and rec.addr + 4 in self.em.addrs:
            out.append(rec.addr + 4)
        out.extend(self.table_succs.get(rec.addr, ()))
        return out

    def needs_barrier(self, src: int, target: int) -> bool:
        """Whether the back edge ``src -> target`` closes a cycle in which nothing forces a
        reload (the module docstring); it is recorded when it gets the barrier."""
        self._index()
        need = self._search(src, target)
        if need:
            self.barriers.add((src, target))
        return need

    def _search(self, src: int, target: int) -> bool:
        if target == src or target not in self.at:
            return True
        seen = {target}
        work = [target]
        while work:
            a = work.pop()
            k = self.at[a]
            if self._forces(k):
                continue
            for b in self._succs(k):
                if b == src:
                    return True
                if b > src or b in seen or b not in self.at or (b <= a and (a, b) in self.barriers):
                    continue
                if len(seen) >= MAX_VISIT:
                    return True
                seen.add(b)
                work.append(b)
        return False
