"""The value analysis of one function: a forward fixed point over its CFG.

Input: the function's instructions (address -> ``Insn``) and the edges its resolved indirect
branches add (``BR`` address -> targets).  Output: the abstract ``State`` before any
instruction (``before``) and, for each merged location, the constants that reach it
(``candidates``: a small value set, so a table base that is one constant on one path and
reloaded on another is still known as a likely value).

Join at a block's start: a location every predecessor agrees on keeps its value; one they
disagree on becomes the opaque ``("phi", block, loc)`` (once a phi, always a phi there: that
is what makes the iteration end).  Leaves name the latest value an instruction produced, so a
value of a loop's previous iteration must never meet the current one under the same name: it
cannot, since every block has a predecessor outside its cycle (the entry has the entry
state), whose values never mention what the cycle defines, so the join turns such a location
into the block's phi.  Bounds (from compares on edges) are kept where every predecessor has
one (the largest).  Stack slots: see ``transfer`` (a frame slot written on some paths only is
still known on those, as a merge that is never exact).  An edge of a conditional branch whose
bound a known constant violates is never taken (``transfer.edge_feasible``): a switch's
``cmp w4, #13; b.hi`` reached with ``w4 = -1`` passes nothing to its table's load, whose
address would lie outside the image.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

from recompiler.analysis import expr as E
from recompiler.analysis.transfer import State, Transfer, edge_feasible, edge_refine, slot_of, successors
from recompiler.decode import Insn


@dataclass
class EntrySeed:
    """The constants registers and stack slots may hold where a function is entered by a jump
    from another that holds its code (``FunctionValues.seed_at``); slots keyed from the entry SP."""

    regs: dict[int, frozenset] = field(default_factory=dict)
    slots: dict[int, tuple[int, frozenset]] = field(default_factory=dict)

    def union(self, o: EntrySeed) -> EntrySeed:
        """Both callers' constants (a location only one of them knows keeps that one's)."""
        regs = {r: self.regs.get(r, frozenset()) | o.regs.get(r, frozenset()) for r in {*self.regs, *o.regs}}
        slots = {}
        for k in {*self.slots, *o.slots}:
            a, b = self.slots.get(k), o.slots.get(k)
            if a is not None and b is not None and a[0] != b[0]:
                continue
            slots[k] = (a or b)[0], (a[1] if a else frozenset()) | (b[1] if b else frozenset())
        return EntrySeed(regs, slots)


MAX_VISITS = 1000  # state changes per block (and joins per block, on average): past it the analysis gives up
MAX_CANDIDATES = 16
# blocks taken from the work list per block of the function, for the analysis that keeps
# partly written slots (an extra try, after the plain one found no table): those that end
# take under 5 per block in the corpus (busybox, sash, zsh, QuickJS, SQLite, Lua, Brotli);
# glibc's vfprintf never ends (a slot that comes and goes with a loop's paths) and took 4 s
# of sash's 18 to give up at MAX_VISITS
PARTIAL_POPS = 32
INCREMENTAL_PREDS = 8  # a block with this many predecessors joins only what changed
# what a path that never wrote a slot of the function's frame passes to a join (an opaque leaf
# that no instruction defines; never stored in a state: the merge becomes the block's phi)
UNWRITTEN = ("def", -1, "unwritten")


class FunctionValues:
    def __init__(
        self,
        transfer: Transfer,
        insns: dict[int, Insn],
        entry: int,
        table_edges: dict[int, list[int]] | None = None,
        seed: EntrySeed | None = None,
        partial_slots: bool = False,
        noreturn_calls: frozenset[int] = frozenset(),
    ) -> None:
        """``partial_slots``: a frame slot written on some paths only stays known on those (a
        join over the slots of every path, not only those all paths wrote: slower, so asked
        for where a jump table was not found without it).  ``noreturn_calls``: the calls of
        functions found never to return (``analysis.noreturn``, known after a first analysis
        of every body): no path goes on after one.  The code after such a call belongs to other
        paths (a ``__stack_chk_fail`` call's next block is often one that joins a loop), and a
        path through it merges values no real path brings there (gpgv's format parser: its
        step table's base, spilled to a frame slot that later code reuses for a counter)."""
        self.t = transfer
        self.partial = partial_slots
        self.insns = insns
        self.entry = entry
        self.ok = True
        self.noreturn_calls = noreturn_calls
        self._blocks(table_edges or {})
        self.phis: set[tuple] = set()
        self._last: dict[tuple, tuple] = {}  # phi -> the values last merged into it
        # phi leaf -> (constants reaching it, whether something else reaches it too)
        self.cands: dict[tuple, tuple[frozenset, bool]] = {}
        self.entry_state = State.entry()
        if seed is not None:
            self._seed(seed)
        self._joined: dict[int, State] = {}  # block -> its last join (the incremental ones)
        self._phi_blocks: set[int] = set()  # blocks with a phi (``phis``' blocks)
        self._mixed: set[tuple[int, int]] = set()  # (block, slot) that paths wrote with different sizes
        self._solve()

    def _seed(self, seed: EntrySeed) -> None:
        """Registers and frame slots at the entry that are one of some constants: a merge at the
        entry (``("phi", entry, loc)``) those constants reach, and something else too (the
        seed is what one caller passes; another may pass something else)."""
        for r, cs in seed.regs.items():
            if len(cs) > MAX_CANDIDATES:
                continue
            leaf = ("phi", self.entry, r)
            self.entry_state.regs[r] = leaf
            self.cands[leaf] = (cs, True)
        for off, (size, cs) in seed.slots.items():
            if len(cs) > MAX_CANDIDATES:
                continue
            leaf = ("phi", self.entry, ("s", off))
            self.entry_state.slots[off] = (size, leaf)
            self.cands[leaf] = (cs, True)

    def seed_at(self, addr: int) -> EntrySeed | None:
        """What this function passes to code at ``addr`` that is also entered on its own (a
        label function: a weak entry inside this body; a function this one jumps to from
        ``addr``): the constants each register and frame slot may hold before the instruction
        there, with slots keyed from the stack pointer at ``addr``."""
        st = self.before(addr)
        return None if st is None else self.seed_of(st)

    def seed_after(self, addr: int) -> EntrySeed | None:
        """What this function passes to the code after ``addr`` (falling into another entry)."""
        st = self.before(addr)
        if st is None:
            return None
        self.t.step(st, self.insns[addr])
        return self.seed_of(st)

    def seed_of(self, st: State) -> EntrySeed:
        """The constants of ``st`` as an entry's seed (frame slots only where the stack
        pointer is an offset from the entry's: after an alloca it is not, and only the
        registers are passed)."""
        sp = slot_of(st.regs[31])
        regs = {}
        for r in range(31):
            cs = self._consts(st.regs[r])
            if cs:
                regs[r] = cs
        slots = {}
        for off, (size, v) in st.slots.items() if sp is not None else ():
            cs = self._consts(v)
            if cs and size <= 8:
                slots[off - sp] = (size, cs)
        return EntrySeed(regs, slots)

    def _consts(self, v: tuple) -> frozenset:
        c = E.cval(v)
        if c is not None:
            return frozenset((c,))
        if v[0] == "phi":
            return self.candidates(v)[0]
        return frozenset()

    # ---- CFG --------------------------------------------------------------------------
    def _blocks(self, table_edges: dict[int, list[int]]) -> None:
        addrs = sorted(self.insns)
        leaders = {self.entry}
        for a in addrs:
            i = self.insns[a]
            t, falls = successors(i)
            falls = falls and a not in self.noreturn_calls
            if t is not None:
                leaders.add(t)
            if t is not None or not falls or i.name == "BR":
                leaders.add(a + 4)
            if a - 4 not in self.insns:
                leaders.add(a)
        for ts in table_edges.values():
            leaders.update(ts)
        self.starts = [a for a in addrs if a in leaders]
        self.succ: dict[int, list[tuple[int, bool | None]]] = {}  # block -> (block, branch taken?)
        self.preds: dict[int, list[int]] = {b: [] for b in self.starts}
        self.end: dict[int, int] = {}
        for k, b in enumerate(self.starts):
            nxt = self.starts[k + 1] if k + 1 < len(self.starts) else None
            a = b
            while a + 4 in self.insns and a + 4 != nxt:
                a += 4
            self.end[b] = a
            i = self.insns[a]
            t, falls = successors(i)
            falls = falls and a not in self.noreturn_calls
            out = []
            if t is not None and t in self.insns:
                out.append((t, True))
            if falls and a + 4 in self.insns:
                out.append((a + 4, False if t is not None else None))
            for x in table_edges.get(a, ()):
                if x in self.insns:
                    out.append((x, None))
            self.succ[b] = out
            for s, _ in out:
                self.preds[s].append(b)

    # ---- fixed point --------------------------------------------------------------------
    def _solve(self) -> None:
        self.state_in: dict[int, State] = {}
        # block -> predecessor -> the state it passes to the block (an edge's last, where a
        # block reaches a successor by two edges); kept per block so that a join reads only
        # its own predecessors' states, and those that changed since its last join
        # (``_dirty``), never the whole predecessor list of an interpreter's handler
        self.incoming: dict[int, dict[int, State]] = {b: {} for b in self.starts}
        self._dirty: dict[int, list[int]] = {}
        # entries of a block's predecessor list that have passed it a state (a predecessor
        # reaching it by two edges counts twice, as the list does)
        self._reached: dict[int, int] = {}
        order = self._rpo()
        work = [(order[self.entry], self.entry)] if self.entry in self.preds else []
        queued = {self.entry}
        visits: dict[int, int] = {}
        pops = (PARTIAL_POPS if self.partial else MAX_VISITS) * len(self.starts)
        self.pops = 0  # blocks taken from the work list (the cost, for ``bench``)
        while work:
            _k, b = heapq.heappop(work)
            queued.discard(b)
            pops -= 1
            self.pops += 1
            st = self._join(b)
            if b in self.state_in and self.state_in[b] == st:
                continue
            # a block's state that keeps changing (each change is a location becoming a phi, a
            # slot becoming written or a bound widening: finitely many), or a join that keeps
            # being asked (a handler reached from every dispatch of an interpreter): give up
            visits[b] = visits.get(b, 0) + 1
            if visits[b] > MAX_VISITS or pops < 0:
                self.ok = False
                return
            self.state_in[b] = st
            st = st.copy()
            a = b
            while a < self.end[b]:
                self.t.step(st, self.insns[a])
                a += 4
            last = self.insns[a]
            self.t.step(st, last)
            for s, taken in self.succ[b]:
                o = st
                if taken is not None:
                    if not edge_feasible(st, last, taken):
                        continue  # (a constant the branch tests decides it the other way)
                    o = st.copy()
                    edge_refine(o, last, taken)
                inc = self.incoming[s]
                old = inc.get(b)
                if old != o:
                    if old is None:
                        self._reached[s] = self._reached.get(s, 0) + self.preds[s].count(b)
                    inc[b] = o
                    self._dirty.setdefault(s, []).append(b)
                    if s not in queued:
                        queued.add(s)
                        heapq.heappush(work, (order[s], s))

    def _rpo(self) -> dict[int, int]:
        """Reverse postorder of the blocks from the entry (blocks it does not reach last): the
        order that visits a block after its forward predecessors, so few blocks repeat."""
        post: list[int] = []
        seen = {self.entry}
        stack = [(self.entry, 0)] if self.entry in self.succ else []
        while stack:
            b, k = stack.pop()
            ss = self.succ[b]
            if k < len(ss):
                stack.append((b, k + 1))
                w = ss[k][0]
                if w not in seen:
                    seen.add(w)
                    stack.append((w, 0))
            else:
                post.append(b)
        order = {b: k for k, b in enumerate(reversed(post))}
        for b in self.starts:
            order.setdefault(b, len(order))
        return order

    def _join(self, b: int) -> State:
        dirty = self._dirty.pop(b, ())
        if self._reached.get(b, 0) < INCREMENTAL_PREDS or b == self.entry:
            return self._full_join(b)
        st = self._joined.get(b)
        if st is None:
            st = self._full_join(b)
        elif dirty:  # (a predecessor reached for the first time is one that changed)
            inc = self.incoming[b]
            st = self._add_outs(b, st, [inc[p] for p in dict.fromkeys(dirty)])
        self._joined[b] = st
        return st

    def _add_outs(self, b: int, j: State, outs: list[State]) -> State:
        """The join ``j`` of a block's incoming states with ``outs`` (the new states of some of
        its predecessors, or of those reached for the first time) in place of their old ones.  Each location of ``j`` is either the
        block's phi (the new values only add candidates) or the value every predecessor
        agreed on (a new value that differs makes it the phi): the predecessors that did not
        change need not be read again, which is what keeps an interpreter's handler (a block
        with hundreds of predecessors, one per dispatch) from costing its predecessor count
        at each visit.  What is only kept where every predecessor agrees (a slot, the flags, a
        bound) is dropped or widened by a new state, never brought back (less known: sound); a slot
        some path never wrote is dropped here too (a handler's join: the frame slots of hundreds
        of paths coming and going would make it rejoin at each change)."""
        regs = list(j.regs)
        last, cands = self._last, self.cands
        for r in range(32):
            cur = regs[r]
            vals = tuple({o.regs[r] for o in outs})
            if (
                cur[0] == "phi"
                and cur[1] == b
                and cur[2] == r
                and cands[cur][1]
                and all(v == cur or (v[0] not in E.CONSTS and v[0] != "phi") for v in vals)
            ):
                # the block's phi, already reached by something else than constants, and no
                # new candidate: what _merge would note of it, without the rest
                last[cur] = (cur, *vals)
                continue
            if vals == (cur,) and (b, r) not in self.phis:
                continue
            regs[r] = self._merge(b, r, (cur, *vals))
        slots = {}
        for off, (size, cur) in j.slots.items():
            vals = []
            for o in outs:
                x = o.slots.get(off)
                if x is None:
                    break
                if x[0] != size or (b, off) in self._mixed:
                    self._mixed.add((b, off))
                    self._phi_blocks.add(b)
                    size = max(size, x[0])
                vals.append(x[1])
            else:
                if (b, off) in self._mixed:
                    slots[off] = (size, E.TOP)
                    continue
                loc = ("s", off)
                vals = tuple(set(vals))
                slots[off] = (size, cur if (b, loc) not in self.phis and vals == (cur,) else self._merge(b, loc, (cur, *vals)))
        flags = j.flags if all(o.flags == j.flags for o in outs) else None
        bounds = {}
        for k, v in j.bounds.items():
            for o in outs:
                x = o.bounds.get(k)
                if x is None:
                    break
                v = max(v, x)
            else:
                bounds[k] = v
        return State(regs, slots, flags, bounds)

    def _full_join(self, b: int) -> State:
        inc = self.incoming[b]
        ins = [inc[p] for p in self.preds[b] if p in inc]
        if b == self.entry:
            ins.append(self.entry_state)
        if len(ins) == 1 and b != self.entry:
            return ins[0]
        regs = []
        phis, last = self.phis, self._last
        rl = [s.regs for s in ins]
        if b not in self._phi_blocks and all(x == rl[0] for x in rl[1:]):
            rl = ()  # every predecessor passes the same registers and none is a phi here
            regs = list(ins[0].regs)
        for r, vals in enumerate(zip(*rl)):
            if (b, r) not in phis:
                first = vals[0]
                if vals.count(first) == len(vals):
                    regs.append(first)  # (the common case, without a call)
                    continue
            else:
                phi = ("phi", b, r)
                if last.get(phi) == vals:
                    regs.append(phi)  # (a loop's phi revisited with the same inputs)
                    continue
            regs.append(self._merge(b, r, vals))
        slots = {}
        same = b not in self._phi_blocks and all(s.slots == ins[0].slots for s in ins[1:])
        # a slot of the caller's frame (offset >= 0) is kept where every path holds it; one of
        # this function's frame where some path wrote it (the others never did: what they
        # pass is ``UNWRITTEN``, which makes the merge reached by something else than constants)
        offs = () if same else (set().union if self.partial else set.intersection)(*(set(s.slots) for s in ins))
        for off in offs:
            got = [s.slots.get(off) for s in ins]
            if off >= 0 and None in got:
                continue
            x = self._slot_join(b, off, got)
            if x is not None:
                slots[off] = x
        if same:
            slots = dict(ins[0].slots)
        flags = ins[0].flags if all(s.flags == ins[0].flags for s in ins) else None
        bounds = {}
        for k in set.intersection(*(set(s.bounds) for s in ins)):
            bounds[k] = max(s.bounds[k] for s in ins)
        return State(regs, slots, flags, bounds)

    def _constant(self, v: tuple) -> bool:
        """``v`` is a constant or a merge of some."""
        return E.cval(v) is not None or (v[0] == "phi" and bool(self.cands.get(v, ((),))[0]))

    def _slot_join(self, b: int, off: int, got: list) -> tuple[int, tuple] | None:
        """A slot's (size, value) at block ``b`` from what each path holds there (None: the
        path never wrote it).  Paths that wrote different sizes leave it written with a value
        not known (TOP), and at that block for good: a slot that came and went with the sizes
        of a loop's paths would keep the fixed point from ending."""
        if None in got and not any(x is not None and self._constant(x[1]) for x in got):
            return None  # (a value not known on the paths that wrote it: as good as unwritten)
        sizes = {x[0] for x in got if x is not None}
        if len(sizes) > 1 or (b, off) in self._mixed:
            self._mixed.add((b, off))
            self._phi_blocks.add(b)  # (no shortcut of the join where all paths agree, from now on)
            return max(sizes), E.TOP
        if any(x is not None and x[1] == E.TOP for x in got):
            return sizes.pop(), E.TOP  # (written, not known on some path: no merge to follow)
        vals = tuple(x[1] if x is not None else UNWRITTEN for x in got)
        return sizes.pop(), self._merge(b, ("s", off), vals)

    def _merge(self, b: int, loc, vals: tuple) -> tuple:
        phi = ("phi", b, loc)
        first = vals[0]
        if (b, loc) not in self.phis and vals.count(first) == len(vals):
            return first
        self.phis.add((b, loc))
        self._phi_blocks.add(b)
        if self._last.get(phi) == vals:
            return phi
        self._last[phi] = vals
        consts, other = self.cands.get(phi, (frozenset(), False))
        for v in set(vals):  # (hundreds of predecessors hold few distinct values)
            if v == phi:
                continue
            c = E.cval(v)
            if c is not None:
                consts = consts | {c}
            elif v[0] == "phi" and v in self.cands:
                cs, o = self.cands[v]
                consts, other = consts | cs, other or o
            else:
                other = True
        if len(consts) > MAX_CANDIDATES:
            consts, other = frozenset(), True
        self.cands[phi] = (consts, other)
        return phi

    # ---- queries ----------------------------------------------------------------------
    def block_of(self, addr: int) -> int | None:
        k = bisect.bisect_right(self.starts, addr) - 1
        return self.starts[k] if k >= 0 and addr <= self.end.get(self.starts[k], -1) else None

    def before(self, addr: int) -> State | None:
        """The state before the instruction at ``addr`` (None if the analysis never reached it)."""
        b = self.block_of(addr)
        if b is None or b not in self.state_in or not self.ok:
            return None
        st = self.state_in[b].copy()
        a = b
        while a < addr:
            self.t.step(st, self.insns[a])
            a += 4
        return st

    def candidates(self, leaf: tuple) -> tuple[frozenset, bool]:
        """Constants that reach the phi ``leaf`` and whether anything else does."""
        return self.cands.get(leaf, (frozenset(), True))
