"""Structured control flow from a machine-code CFG: if/else and loop nesting recovered from the
graph, as SPIR-V's structured constructs need it, or a refusal (``Unstructured``) the caller
answers with its dispatcher loop.

Input: the basic blocks' successors, as the lowering knows them: ``succ[i]`` is ``[t]`` (one
way), ``[taken, fallthrough]`` (a two-way branch on the block's guard) with ``RET`` for "leaves
the program" (EXIT, or falling off the end).  Output: a plan, a nested list of items the lowering
emits in order:

- ``("block", i)``: the instructions of block i (the current SPIR-V block stays open);
- ``("if", i, then, else)``: a selection on block i's branch condition; both arms are plans that
  end in a jump; a fresh merge block follows;
- ``("loop", h, body)``: a loop construct whose body plan starts with header block h; a fresh
  continue block branches back to the header, a fresh merge block follows;
- jumps, which end a plan: ``("stop",)`` to the innermost selection's merge, ``("cont",)`` to
  the innermost loop's continue block, ``("break",)`` to its merge, ``("ret",)`` (leave the
  program), ``("unreachable",)``.

Method: dominators and natural loops (a retreating edge whose target does not dominate its
source means an irreducible graph: refused); each loop needs one exit target (its merge; a
second one is refused); within a loop (and at the top) inner loops are collapsed to one node
leading to their merge, edges to the loop's header become ``cont``, to its merge ``break``;
a two-way block's merge is its immediate post-dominator in that acyclic region with the jumps
taken out (where the paths that do not break, continue or leave meet again), or the enclosing
selection's merge when no such block exists.  Every block is placed once: a block two arms would both need (a crossing that
only duplication or flags could express) is refused.  Facts used: the SPIR-V specification's
"Structured Control Flow" rules (headers, merge and continue blocks, breaks and continues).
"""

from __future__ import annotations

from dataclasses import dataclass

RET = -1
_NOSTOP = -2
_VEXIT = -3
JUMPS = {"cont", "break", "ret"}


class Unstructured(Exception):
    """The graph is irreducible or has a shape this structuriser does not express."""


@dataclass
class _Loop:
    header: int
    body: set[int]
    merge: int | None  # the one block its exits go to (None: it only leaves the program)
    parent: int | None = None  # header of the enclosing loop


def _rpo(succ: list[list[int]]) -> list[int]:
    seen, order = set(), []
    stack = [(0, iter(succ[0]))] if succ else []
    seen.add(0)
    while stack:
        n, it = stack[-1]
        for s in it:
            if s >= 0 and s not in seen:
                seen.add(s)
                stack.append((s, iter(succ[s])))
                break
        else:
            order.append(n)
            stack.pop()
    return order[::-1]


def _idoms(rpo: list[int], preds: dict[int, list[int]], index: dict[int, int], acyclic: bool) -> dict[int, int]:
    """Immediate dominators (Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm"),
    iterated until stable; an acyclic graph in reverse post-order needs one pass (every
    predecessor comes first), and a node no path reaches is its own dominator there."""
    idom = {rpo[0]: rpo[0]}
    changed = True
    while changed:
        changed = False
        for n in rpo[1:]:
            new = None
            for p in preds[n]:
                if p not in idom:
                    continue
                if new is None:
                    new = p
                    continue
                a, b = p, new
                while a != b:
                    while index[a] > index[b]:
                        a = idom[a]
                    while index[b] > index[a]:
                        b = idom[b]
                new = a
            if acyclic and new is None:
                new = n
            if idom.get(n) != new:
                idom[n] = new
                changed = not acyclic
    return idom


def _dominators(succ: list[list[int]], rpo: list[int]) -> dict[int, int]:
    """Immediate dominators of the whole CFG."""
    index = {n: k for k, n in enumerate(rpo)}
    preds: dict[int, list[int]] = {n: [] for n in rpo}
    for n in rpo:
        for s in succ[n]:
            if s >= 0:
                preds[s].append(n)
    return _idoms(rpo, preds, index, acyclic=False)


def _dominators_of(rpo: list[int], succ: dict[int, list[int]], index: dict[int, int]) -> dict[int, int]:
    """Immediate dominators of an acyclic graph given in reverse post-order."""
    preds: dict[int, list[int]] = {n: [] for n in rpo}
    for n in rpo:
        for s in succ[n]:
            preds[s].append(n)
    return _idoms(rpo, preds, index, acyclic=True)


def _dominates(idom: dict[int, int], a: int, b: int) -> bool:
    while True:
        if a == b:
            return True
        if idom[b] == b:
            return False
        b = idom[b]


def plan(succ: list[list[int]], weight: list[int] | None = None, pinned: frozenset[int] = frozenset()) -> list:
    """The structured plan of the graph whose entry is block 0 (see the module text).
    ``weight``: each block's size (its instructions), ``pinned``: blocks never duplicated (a
    workgroup barrier must stay one instance), for the tail duplication of crossings."""
    if not succ:
        return [("ret",)]
    rpo = _rpo(succ)
    reach = set(rpo)
    idom = _dominators(succ, rpo)
    index = {n: k for k, n in enumerate(rpo)}
    preds: dict[int, list[int]] = {n: [] for n in rpo}
    for n in rpo:
        for s in succ[n]:
            if s >= 0:
                preds[s].append(n)
    loops: dict[int, _Loop] = {}
    for n in rpo:
        for s in succ[n]:
            if s >= 0 and index[s] <= index[n]:  # retreating edge
                if not _dominates(idom, s, n):
                    raise Unstructured("irreducible control flow (a loop entered other than at its header)")
                body = loops.setdefault(s, _Loop(s, {s}, None)).body
                work = [n]
                while work:
                    x = work.pop()
                    if x not in body:
                        body.add(x)
                        work.extend(preds[x])
    # a loop leaving to several blocks takes in those only it can reach (every predecessor in
    # the loop): they run at the end of the loop, before its one break.  Blocks that only lead
    # on to another exit go first (SM53's "SYNC" block after a loop, which pops to where an
    # early exit already goes; code after an early "goto out" of a loop)
    for h in sorted(loops, key=lambda h: len(loops[h].body)):
        body = loops[h].body
        while True:
            exits = {t for n in body for t in succ[n] if t >= 0 and t not in body}
            if len(exits) <= 1:
                break
            own = [e for e in exits if e not in loops and all(p in body for p in preds[e])]
            if not own:
                break
            fwd = [e for e in own if all(t == RET or (t in exits and t != e) for t in succ[e])]
            body.add(min(fwd or own, key=lambda e: index[e]))
    # nesting: the innermost loop of each block; parents of loops
    innermost: dict[int, int | None] = {n: None for n in rpo}
    for h in sorted(loops, key=lambda h: len(loops[h].body), reverse=True):
        for n in loops[h].body:
            innermost[n] = h
    for h, lp in loops.items():
        outer = [g for g, o in loops.items() if g != h and h in o.body]
        lp.parent = min(outer, key=lambda g: len(loops[g].body)) if outer else None
        exits = {t for n in lp.body for t in succ[n] if t >= 0 and t not in lp.body}
        if len(exits) > 1:
            raise Unstructured(f"loop at block {h} leaves to {len(exits)} places")
        lp.merge = exits.pop() if exits else None
    pl = _Planner(succ, loops, innermost, reach)
    pl.weight, pl.pinned = weight or [1] * len(succ), pinned
    pl.budget = sum(pl.weight[n] for n in reach)  # duplicates at most double the program
    return pl.region(None)


class _Planner:
    def __init__(self, succ, loops, innermost, reach) -> None:
        self.succ, self.loops, self.innermost, self.reach = succ, loops, innermost, reach
        self.placed: set[int] = set()
        self.copying = 0  # > 0 while a tail is being placed again (``_copy_ok``)
        self.weight: list[int] = []
        self.pinned: frozenset[int] = frozenset()
        self.budget = 0
        self.header: int | None = None
        self.nodes: set[int] = set()
        self.ipdom: dict = {}

    # --- one region: the top level (None) or the body of one loop -------------------------------
    def region(self, header: int | None) -> list:
        saved = (self.header, self.nodes, self.ipdom)
        self.header = header
        self.nodes = {n for n in self.reach if self._in_region(n, header)}
        self.ipdom = self._post_dominators(self.nodes, header)
        try:
            return self._seq(0 if header is None else header, _NOSTOP, first=header)
        finally:
            self.header, self.nodes, self.ipdom = saved

    def _in_region(self, n: int, header: int | None) -> bool:
        """n belongs to the region directly, or is the header of a loop directly inside it."""
        own = self.innermost[n]
        if own == header:
            return True
        return n in self.loops and n != header and self.loops[n].parent == header

    def _map(self, t: int | None, header: int | None):
        """A successor as the region sees it: a node, or a jump kind."""
        if t is None:
            return "unreachable"
        if t == RET:
            return "ret"
        if header is not None:
            if t == header:
                return "cont"
            if t == self.loops[header].merge:
                return "break"
        if t in self.nodes:
            return t
        raise Unstructured(f"a branch to block {t} leaves more than the innermost loop")

    def _rsucc(self, n: int, header: int | None) -> list:
        if n in self.loops and n != header:
            return [self._map(self.loops[n].merge, header)]
        out = [self._map(t, header) for t in self.succ[n]]
        return out[:1] if len(out) == 2 and out[0] == out[1] else out

    def _post_dominators(self, nodes: set[int], header: int | None) -> dict:
        """Immediate post-dominators in the region's acyclic graph without its jumps (a block
        that only jumps leads to a virtual exit; one whose every path leaves the program is no
        path to a merge at all): the merge of a selection is where the paths
        that do not jump away meet again."""
        order: list[int] = []
        seen: set[int] = set()

        def visit(n: int) -> None:  # post-order along region edges (iterative)
            stack = [(n, iter(self._rsucc(n, header)))]
            seen.add(n)
            while stack:
                x, it = stack[-1]
                for s in it:
                    if isinstance(s, int) and s not in seen:
                        seen.add(s)
                        stack.append((s, iter(self._rsucc(s, header))))
                        break
                else:
                    order.append(x)
                    stack.pop()

        start = 0 if header is None else header
        visit(start)
        topo = {n: k for k, n in enumerate(reversed(order))}
        topo[_VEXIT] = len(topo) + 1
        ipdom: dict = {}
        # dead: blocks of their own (one predecessor) whose every path leaves the program
        # without meeting another path (a trap before a call); a shared exit block is not dead
        npred: dict[int, int] = {}
        for n in order:
            for t in self._rsucc(n, header):
                if isinstance(t, int):
                    npred[t] = npred.get(t, 0) + 1
        dead: set[int] = set()
        own = self._own_exits(order)
        for n in order:  # successors first
            rs = self._rsucc(n, header)
            live = [s for s in rs if s not in ("ret", "unreachable") and not (s in dead and npred.get(s, 0) == 1)]
            # a path that ends the program constrains no merge where another path goes on (an
            # arm of its own that leaves: where another arm goes on)
            cur = None
            for s in [s for s in live if not (s in own and npred.get(s, 0) == 1)] or live or rs:
                if not isinstance(s, int):
                    continue  # a jump leaves the construct: not a path to its merge
                if cur is None:
                    cur = s
                    continue
                a, b = cur, s
                while a != b:
                    if topo[a] < topo[b]:
                        a = ipdom[a]
                    else:
                        b = ipdom[b]
                cur = a
            ipdom[n] = _VEXIT if cur is None else cur
            if not live:
                dead.add(n)
        ipdom[_VEXIT] = _VEXIT
        return ipdom

    def _own_exits(self, order: list[int]) -> set[int]:
        """The blocks of the region (``order``: its post-order) whose every path leaves the
        program and which dominate every block those paths run (an assert's failure arm into its
        own inlined copy of __assertfail, whose blocks meet again before its trap): such an arm
        is a construct of its own that meets no other path, so it constrains no merge.  Found
        without walking each arm: A(n), the nearest common dominator of the blocks reachable
        from n, is n itself exactly when n dominates them all; A(n) = LCA(n, A(s) for each
        successor s), in post-order, with the region's dominator tree."""
        rpo = order[::-1]
        idx = {n: k for k, n in enumerate(rpo)}
        succ = {n: [s for s in self._rsucc(n, self.header) if isinstance(s, int)] for n in rpo}
        idom = _dominators_of(rpo, succ, idx)

        def lca(a: int, b: int) -> int:
            while a != b:
                while idx[a] > idx[b]:
                    a = idom[a]
                while idx[b] > idx[a]:
                    b = idom[b]
            return a

        leaves: set[int] = set()
        anc: dict[int, int] = {}
        own: set[int] = set()
        for n in order:
            a = n
            for s in succ[n]:
                a = lca(a, anc[s])
            anc[n] = a
            if all(s in ("ret", "unreachable") or s in leaves for s in self._rsucc(n, self.header)):
                leaves.add(n)
                if a == n:
                    own.add(n)
        return own

    def _copy_ok(self, n: int, stop) -> bool:
        """Whether block n, already placed in another construct, may be placed again here with
        the rest of its paths up to ``stop`` (tail duplication: a block two arms of a selection
        both reach before its merge, as nvcc -G's switch cases that join early): none of those
        blocks pinned, their size within the budget (what is left of doubling the program)."""
        seen, work, size = set(), [n], 0
        while work:
            x = work.pop()
            if not isinstance(x, int) or x == stop or x in seen:
                continue
            seen.add(x)
            body = self.loops[x].body if x in self.loops and x != self.header else {x}
            if body & self.pinned:
                return False
            size += sum(self.weight[b] for b in body)
            if size > self.budget:
                return False
            work.extend(self._rsucc(x, self.header))
        self.budget -= size
        return True

    def _seq(self, n, stop, first=None) -> list:
        out: list = []
        header = self.header
        while True:
            if n == stop:
                out.append(("stop",))
                return out
            if not isinstance(n, int):
                out.append((n,))
                return out
            if n in self.placed and n != first and not self.copying:
                if not self._copy_ok(n, stop):
                    raise Unstructured(f"block {n} is reached from two constructs")
                self.copying += 1
                try:
                    out += self._seq(n, stop, first=n)
                finally:
                    self.copying -= 1
                return out
            first = None
            self.placed.add(n)
            if n in self.loops and n != header:
                body = self.region(n)
                out.append(("loop", n, body))
                n = self._map(self.loops[n].merge, header)
                continue
            out.append(("block", n))
            ss = self._rsucc(n, header)
            if len(ss) == 1:
                n = ss[0]
                continue
            if not ss:
                out.append(("unreachable",))
                return out
            if n not in self.ipdom:
                raise Unstructured(f"block {n} is outside its region's graph")
            p = self.ipdom[n]
            merge = p if p != _VEXIT else stop
            out.append(("if", n, self._seq(ss[0], merge), self._seq(ss[1], merge)))
            if merge == _NOSTOP:
                out.append(("unreachable",))
                return out
            n = merge
