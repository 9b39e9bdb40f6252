"""The functions an indirect call or jump (``BLR``/``BR`` through a register) may reach, where
analysis can name them: the lifter then tries them first, as direct calls (``emitter.call``) or
direct tail calls (``control.h_br``), each behind a compare of the register with its address,
and keeps the inline-cache path for any other value.  A guess is never trusted: a wrong one
costs a compare.

The register's value before the branch comes from the function's value analysis
(``values.FunctionValues``): a constant or a merge of constants; else a symbolic value built from
the function's inputs, which is followed into its callers:
- ``("in", r)``: register r at the entry.  For a function only direct calls enter (every caller
  known: ``analysis.callers.closed_entries``) it is the union over its call sites (``BL``, direct
  tail jumps, a table's case in another function) of what each caller holds in r there, followed
  in turn (a comparator handed down through a wrapper);
- ``("load", 8, _, base + k)`` with ``base`` such an input: a field of a struct whose address the
  caller passed; where the caller passed the address of its own stack slot, the value it stored
  in the slot ``k`` bytes above (glibc's ``msort_with_tmp`` loads the comparator from the
  ``msort_param`` that ``qsort_r`` filled in its frame), where it passed a constant address, the
  data word there (its value in the image: a function pointer a program sets up front);
- a merge: each value merged there.
Recursion (msort calling itself with its own parameter) adds nothing.  For a function that is
not closed, the callers analysis knows still give a guess (guarded like any other): among them
the indirect sites guessed in a first round, so that a call through a wrapper that a guessed
call enters (musl's ``qsort`` hands its comparator to ``wrapper_cmp``, which ``__qsort_r``'s
sift calls through a register) is followed too.

A site gets its guesses where they are at most ``MAX_TARGETS`` lifted functions; ``exact`` says
that nothing else was seen to reach it (still guarded: a caller outside the program's code, a
store the analysis does not follow)."""

from __future__ import annotations

from dataclasses import dataclass, field

from recompiler.analysis import expr as E
from recompiler.analysis.transfer import Transfer, slot_of, successors
from recompiler.lift.edges import branch_target
from recompiler.analysis.values import FunctionValues

MAX_TARGETS = 2  # guarded direct calls at one site (each a compare on the way to the inline cache)
MAX_DEPTH = 8  # callers followed up from one site
MAX_CALLERS = 32  # call sites of a closed function read (each caller analysed once)
MAX_OPEN_CALLERS = 4  # the same for a function that is not closed
MAX_STEPS = 512  # values followed from one site
# a function's value analysis is run only below this size: an interpreter's loop (Lua's
# luaV_execute, 3,811 instructions: 8 s of the pass's 11 s at load 12) calls what its
# bytecode names, which no analysis here knows
MAX_INSNS = 2000
ANALYSIS_STEPS = 32  # what a caller's value analysis not yet run costs of them


@dataclass
class SiteGuess:
    targets: tuple[int, ...]  # lifted entries, tried in this order
    exact: bool  # nothing else seen to reach the register


@dataclass
class Found:
    """What the pass found (``AnalysisStats``' ``devirt_*``)."""

    sites: dict[int, SiteGuess] = field(default_factory=dict)  # branch address -> guess
    considered: int = 0  # indirect calls and jumps looked at
    too_many: int = 0  # sites with more than MAX_TARGETS candidates
    analysed: int = 0  # functions whose value analysis ran


class CallTargets:
    def __init__(self, mem, functions: dict, closed: frozenset[int] | set[int]) -> None:
        self.t = Transfer(mem)
        self.mem = mem
        self.fns = functions
        self.closed = closed
        self._fv: dict[int, FunctionValues | None] = {}
        self._memo: dict[tuple[int, tuple], tuple[frozenset, bool]] = {}
        self.found = Found()
        self.steps = MAX_STEPS
        # entry -> (caller entry, branch address) of each direct transfer into it; entries a
        # fall from another body reaches (no state to read: something else reaches them)
        self.callers: dict[int, list[tuple[int, int]]] = {}
        self.fallen: set[int] = set()
        for e, plan in functions.items():
            own = {i.addr for i in plan.insns}
            for i in plan.insns:
                t, falls = successors(i)
                if i.name == "BL":
                    t = branch_target(i)
                ts = [t] if t is not None else []
                ts += plan.jump_tables.get(i.addr, ())
                for x in dict.fromkeys(ts):
                    if x in functions and (x not in own or i.name == "BL"):
                        self.callers.setdefault(x, []).append((e, i.addr))
                if falls and i.name not in ("BL", "BLR") and i.addr + 4 in functions and i.addr + 4 not in own:
                    self.fallen.add(i.addr + 4)

    def values(self, e: int) -> FunctionValues | None:
        if e not in self._fv:
            plan = self.fns.get(e)
            fv = None
            if plan is not None and plan.insns and len(plan.insns) <= MAX_INSNS:
                self.found.analysed += 1
                fv = FunctionValues(
                    self.t,
                    {i.addr: i for i in plan.insns},
                    e,
                    plan.jump_tables,
                    noreturn_calls=frozenset(plan.noreturn_calls),
                )
                if not fv.ok:
                    fv = None
            self._fv[e] = fv
        return self._fv[e]

    # ---- the value of a register at a site, as functions ------------------------------------
    def resolve(self, e: int, v: tuple, depth: int = 0, active: frozenset = frozenset()) -> tuple[frozenset, bool]:
        """(lifted entries ``v``, a value in function ``e``, may be, whether anything else may
        reach it)."""
        key = (e, v)
        if key in self._memo:
            return self._memo[key]
        if key in active:
            return frozenset(), False  # (a cycle: what it adds comes in by the other paths)
        self.steps -= 1
        if self.steps < 0:  # (the site's budget spent: nothing more is followed)
            return frozenset(), True
        active = active | {key}
        out = self._resolve(e, v, depth, active)
        # kept also where a cycle through an ancestor left it partial (a guess, still guarded:
        # the ancestor has the rest); without it each path up re-reads every caller again
        self._memo[key] = out
        return out

    def _resolve(self, e: int, v: tuple, depth: int, active: frozenset) -> tuple[frozenset, bool]:
        c = E.cval(v)
        if c is not None:
            return (frozenset((c,)), False) if c in self.fns else (frozenset(), True)
        kind = v[0]
        if kind == "phi":
            fv = self.values(e)
            if fv is None:
                return frozenset(), True
            consts, other = fv.candidates(v)
            got = frozenset(x for x in consts if x in self.fns)
            other = other or len(got) != len(consts)
            if other:  # what else is merged there, followed
                other = False
                for x in fv._last.get(v, ()):
                    if x == v or E.cval(x) is not None:
                        continue
                    g, o = self.resolve(e, x, depth, active)
                    got |= g
                    other |= o
            return got, other
        if depth >= MAX_DEPTH:
            return frozenset(), True
        if kind == "in" and v[1] < 31:
            return self._from_callers(e, depth, active, lambda st: st.regs[v[1]])
        if kind == "load" and v[1] == 8:
            addr = v[3]
            base, k = addr, 0
            if addr[0] == "add" and E.cval(addr[2]) is not None:
                base, k = addr[1], E.cval(addr[2])
            if base[0] == "in" and base[1] < 31:
                r = base[1]

                def field_of(st, r=r, k=k):
                    p = st.regs[r]
                    off = slot_of(p)
                    if off is not None:
                        s = st.slots.get(off + k)
                        return s[1] if s is not None and s[0] == 8 else E.TOP
                    a = E.cval(p)
                    if a is not None:
                        return self._word(a + k)
                    if p[0] == "in":  # (the caller's own input, handed on: its callers)
                        return E.load(8, False, E.add(p, E.const(k)))
                    return E.TOP

                return self._from_callers(e, depth, active, field_of)
            a = E.cval(addr)
            if a is not None:
                w = self._word(a)
                return self.resolve(e, w, depth, active) if w != E.TOP else (frozenset(), True)
        return frozenset(), True

    def _word(self, a: int) -> tuple:
        """The data word at ``a`` as the image holds it, if it names a lifted function."""
        b = self.mem.read(a & E.M64, 8)
        if b is None:
            return E.TOP
        w = int.from_bytes(b, "little")
        return E.const(w) if w in self.fns else E.TOP

    def _from_callers(self, e: int, depth: int, active: frozenset, pick) -> tuple[frozenset, bool]:
        sites = self.callers.get(e, [])
        closed = e in self.closed and e not in self.fallen
        other = not closed or not sites
        # (an open function's known callers are followed only where they are few: most of its
        # calls may come through pointers, and each caller's analysis costs)
        if len(sites) > (MAX_CALLERS if closed else MAX_OPEN_CALLERS):
            return frozenset(), True
        got: frozenset = frozenset()
        for c, a in sites:
            if c not in self._fv:
                self.steps -= ANALYSIS_STEPS
                if self.steps < 0:
                    return got, True
            fv = self.values(c)
            st = None if fv is None else fv.before(a)
            if st is None:
                other = True
                continue
            g, o = self.resolve(c, pick(st), depth + 1, active)
            got |= g
            other |= o
        return got, other

    # ---- the pass ----------------------------------------------------------------------------
    def site(self, e: int, addr: int, reg: int) -> tuple[frozenset, bool] | None:
        self.steps = MAX_STEPS
        fv = self.values(e)
        st = None if fv is None else fv.before(addr)
        if st is None:
            return None
        return self.resolve(e, st.regs[reg])


def indirect_sites(plan) -> list:
    """The ``BLR``s and the ``BR``s left to the run-time dispatch (no table, no IFUNC list, not
    through X30: a return) of ``plan``."""
    out = []
    for i in plan.insns:
        if i.name == "BLR" or (
            i.name == "BR" and i.addr not in plan.jump_tables and i.addr not in plan.ifunc_targets and i.f["Rn"] != 30
        ):
            out.append(i)
    return out


def guess_targets(mem, functions: dict, closed: frozenset[int] | set[int], max_targets: int = MAX_TARGETS) -> Found:
    """Each indirect call or jump of ``functions`` whose register analysis can name as at most
    ``max_targets`` lifted functions (``FunctionPlan.call_guesses`` is filled from it by the
    caller).  Two rounds: the second follows the first round's guessed sites as callers."""
    ct = CallTargets(mem, functions, closed)
    todo = [(e, i) for e in sorted(functions) for i in indirect_sites(functions[e])]
    ct.found.considered = len(todo)
    many: dict[int, int] = {}
    for _round in range(2):
        added = False
        for e, i in todo:
            if i.addr in ct.found.sites:
                continue
            r = ct.site(e, i.addr, i.f["Rn"])
            if r is None or not r[0]:
                continue
            got, other = r
            if len(got) > max_targets:
                many[i.addr] = len(got)
                continue
            many.pop(i.addr, None)
            ct.found.sites[i.addr] = SiteGuess(tuple(sorted(got)), not other)
            for t in got:  # (a caller of its targets, for the next round)
                ct.callers.setdefault(t, []).append((e, i.addr))
            added = True
        if not added:
            break
        ct._memo.clear()
    ct.found.too_many = len(many)
    return ct.found
