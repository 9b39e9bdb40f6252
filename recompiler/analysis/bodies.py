"""Function bodies: what an entry reaches by fall-through, direct branches and the targets of
its jump tables, stopping at other entries (``Analyser.function``).  The analyser also holds
what the other parts share: the entries (strong, and weak ones seen only as code pointers), the
decoder's cache and how each table was found."""

from __future__ import annotations

import bisect

from recompiler.analysis import expr as E
from recompiler.analysis.image import Memory
from recompiler.analysis.tables import recover
from recompiler.analysis.transfer import ENDS, Transfer
from recompiler.analysis.values import EntrySeed, FunctionValues
from recompiler.decode import Insn, decode
from recompiler.lift.control import branch_target
from recompiler.lift.emitter import DirectTable, FunctionPlan

_CALLS = ("BL", "BLR")
MAX_ROUNDS = 32  # value analysis reruns per function as its jump tables grow its body


class Analyser:
    def __init__(self, mem: Memory, entries: set[int]) -> None:
        self.mem = mem
        self.entries = {e for e in entries if e % 4 == 0 and mem.is_code(e)}
        # entries seen only as code pointers in data (or adrp+add): possibly labels of a
        # computed goto rather than functions; a jump table of a function may take them in
        self.weak: set[int] = set()
        self._strong: list[int] | None = None
        self._cache: dict[int, Insn] = {}
        self.transfer = Transfer(mem)
        self.table_kinds: dict[int, dict[int, str]] = {}  # function -> BR -> how its table was found
        self.source: dict[int, str] = {}  # entry -> how it was found first (analysis.stats)
        self.inexact: set[int] = set()  # BRs whose table rests on a guessed base
        # label function -> the constants the functions holding its code pass to it (their
        # value analysis at the label): where its own paths do not show a table base, which
        # the enclosing function set up before jumping there (glibc's vfprintf spills its
        # step tables' bases to the frame, an interpreter keeps its dispatch table in a register)
        self.seeds: dict[int, EntrySeed] = {}
        self._values: dict[tuple[int, bool], tuple[tuple, FunctionValues]] = {}  # (``values``)
        # function -> the entries its direct jumps (or falls, or its tables) reach with its frame
        # still live, which its body goes on into (``analysis.live_frames.join_live_frames``)
        self.joined: dict[int, set[int]] = {}
        # the functions found never to return (``analysis.noreturn``), once every body is known:
        # the value analysis of a body analysed again ends its paths at their calls
        self.noreturn: set[int] = set()
        # C++ call-site ranges with a landing pad (start, end, pad), sorted
        # (``eh_frame.landing_pads``): a call in a range also goes on at its pad (``_walk``)
        self.call_sites: list[tuple[int, int, int]] = []

    def landing_pad(self, addr: int) -> int | None:
        """The landing pad a throw out of the call at ``addr`` resumes at, if any."""
        k = bisect.bisect_right(self.call_sites, (addr, 1 << 64, 0)) - 1
        if k >= 0 and self.call_sites[k][0] <= addr < self.call_sites[k][1]:
            return self.call_sites[k][2]
        return None

    def insn(self, addr: int) -> Insn | None:
        i = self._cache.get(addr)
        if i is None:
            b = self.mem.read(addr, 4)
            if b is None or not self.mem.is_code(addr):
                return None
            i = decode(int.from_bytes(b, "little"), addr)
            self._cache[addr] = i
        return i

    def function(self, entry: int) -> FunctionPlan:
        """The body of the function at ``entry``: what it reaches by fall-through, direct
        branches and the targets of the jump tables the value analysis finds
        (``recompiler.analysis.tables``), which is rerun on the grown body until no ``BR``
        gains targets (a computed goto's handlers end in more dispatches)."""
        seen: dict[int, Insn] = {}
        work = [entry]
        tables: dict[int, list[int]] = {}
        kinds: dict[int, str] = {}
        direct: dict[int, DirectTable] = {}
        complete: set[int] = set()  # BRs whose every target is in their table (Recovered.complete)
        inner: set[int] = set()  # weak entries this function's own jump tables reach: its labels
        # weak entries inside this function's span that its own direct branches reach: its labels
        # too (``_walk``)
        branched: set[int] = set()
        settled = False
        fv = partial = None
        # where a table's entries count as this function's code: a label function (a weak entry
        # inside another, entered by a jump from its parent) shares its parent's span, so an
        # interpreter handler's copy of the dispatch reads the whole table, handlers before it too
        home = self._enclosing(entry) if entry in self.weak else entry
        for _round in range(MAX_ROUNDS):
            self._walk(entry, seen, work, inner, branched)
            brs = [a for a, i in seen.items() if i.name == "BR"]
            if not brs:
                settled = True
                break
            # every BR again on the grown body: a path the new code adds may change a base
            # that looked constant (a direct table must hold on the final body)
            fv = self.values(entry, seen, tables)
            grew = False
            partial = None
            for a in brs:
                own_code = lambda v: v in seen or self._near(home, v)  # noqa: E731
                rec = recover(fv, seen[a], self.mem, own_code)
                direct.pop(a, None)
                complete.discard(a)
                if rec is None and _reloaded(fv, seen[a]):  # a base or index reloaded from a slot some path did not write
                    if partial is None:
                        partial = self.values(entry, seen, tables, partial=True)
                    rec = recover(partial, seen[a], self.mem, own_code)
                if rec is None:
                    # (a table found in an earlier round stays: the edges it added may have
                    # made the branch's own value a merge the analysis cannot split)
                    continue
                # an entry naming the branch itself would loop on the same register forever:
                # a word past the table's end read by an open table, never a case; kept, it
                # would make the BR its own predecessor and its target a merge of itself
                tbl = list(dict.fromkeys(x for x in [*tables.get(a, ()), *rec.targets] if x != a))
                tables[a], kinds[a] = tbl, rec.kind
                if not rec.exact:
                    self.inexact.add(a)
                if rec.direct is not None:
                    direct[a] = rec.direct
                if rec.complete:
                    complete.add(a)
                # a label function (itself weak) keeps them as tail calls: else each
                # of a computed goto's labels would copy the rest of the interpreter
                own = {x for x in tbl if x in self.weak and entry not in self.weak and self._near(entry, x)}
                inner |= own
                joined = self.joined.get(entry, ())
                new = [x for x in tbl if x not in seen and (x not in self.entries or x in own or x in joined)]
                work.extend(new)
                grew = grew or bool(new)
            if not grew:
                settled = True
                break
        if not settled:
            direct.clear()  # the last analysis did not see the final body
            complete.clear()
        if fv is not None:  # (the analysis that kept partly written slots, where one was made)
            self._note_seeds(entry, partial or fv, seen)
        if inner:
            # an interpreter's computed goto: a dispatch whose table base was not found is
            # most likely the same table, so it gets the same label switch; the lifted BR
            # switches on the real target, so a wrong guess only costs the nx_jump it had
            main = max((t for t in tables.values() if set(t) & inner), key=len)
            for a, i in seen.items():
                if i.name == "BR" and a not in tables:
                    tables[a], kinds[a] = main, "shared"
        body = [seen[k] for k in sorted(seen)]
        self.table_kinds[entry] = kinds
        pads = (
            {a: lp for a, i in seen.items() if i.name in _CALLS and (lp := self.landing_pad(a)) in seen}
            if self.call_sites
            else {}
        )
        return FunctionPlan(entry, body, jump_tables=tables, direct_tables=direct, complete_tables=complete, landing_pads=pads)

    def values(self, entry: int, seen: dict[int, Insn], tables: dict[int, list[int]], partial: bool = False) -> FunctionValues:
        """The value analysis of the body ``seen`` with its table edges and its seed: the last
        one of each entry is kept, since bodies are computed again with the same inputs when
        entries elsewhere change (``merge_fallen_into``, the pointer rounds)."""
        seed = self.seeds.get(entry)
        noret = frozenset(a for a, i in seen.items() if i.name == "BL" and branch_target(i) in self.noreturn)
        key = (frozenset(seen), tuple((a, tuple(t)) for a, t in sorted(tables.items())), _seed_key(seed), noret)
        hit = self._values.get((entry, partial))
        if hit is not None and hit[0] == key:
            return hit[1]
        fv = FunctionValues(self.transfer, dict(seen), entry, tables, seed, partial_slots=partial, noreturn_calls=noret)
        self._values[(entry, partial)] = (key, fv)
        return fv

    def _note_seeds(self, entry: int, fv: FunctionValues, seen: dict[int, Insn]) -> None:
        """Each label function inside this body gets what this function passes to it."""
        for x in seen:
            if x != entry and x in self.weak:
                seed = fv.seed_at(x)
                if seed is not None:
                    old = self.seeds.get(x)
                    self.seeds[x] = seed if old is None else old.union(seed)

    def _walk(self, entry: int, seen: dict[int, Insn], work: list[int], inner: set[int], branched: set[int]) -> None:
        """Grow ``seen`` from ``work`` by fall-through and direct branches, stopping at other
        entries, except the weak ones of ``inner`` and ``branched``.  A direct branch (not a call)
        to a weak entry inside this function's own span (``_near``) goes on into it and adds it to
        ``branched``: a data word that happens to name one of its labels is no function start,
        and the label's code runs with this function's frame and working registers.  Taken for a
        tail call, its epilogue's restores of callee-saved registers stay in the other function's
        locals, while this function's working values, stored into ``NxCpu`` for the jump, go back
        to its caller: gpgv's ``_int_malloc`` handed its arena pointer back in X28 that way
        (tests/recompiler/test_branch_into_weak_entry.py).  A label function (itself weak) keeps
        such jumps as tail calls, as it keeps its table targets.  The entries of ``joined[entry]``
        (jumped to with this function's frame live: ``analysis.live_frames``) are walked into too.
        A call inside a C++ call-site range with a landing pad (``call_sites``) goes on at that pad
        too: the unwinder resumes there, in this function's frame, when the callee throws; a weak
        entry there (a data word naming it) is a label of this function as a branched one is."""
        joined = self.joined.get(entry, ())
        while work:
            a = work.pop()
            while a not in seen:
                if a != entry and a in self.entries and a not in inner and a not in branched and a not in joined:
                    break  # falls into another function: a tail call
                i = self.insn(a)
                if i is None:
                    break
                seen[a] = i
                n = i.name
                t = branch_target(i)
                if n != "BL" and t is not None and t not in seen and self.mem.is_code(t):
                    if t in self.weak and entry not in self.weak and t != entry and self._near(entry, t):
                        branched.add(t)
                    if t not in self.entries or t in inner or t in branched or t in joined:
                        work.append(t)
                if n in _CALLS and self.call_sites and (lp := self.landing_pad(a)) is not None and lp not in seen:
                    if lp in self.weak:
                        branched.add(lp)
                    if self.mem.is_code(lp) and (lp not in self.entries or lp in branched):
                        work.append(lp)
                if n in ENDS or i.form is None or (i.group == "BCOND" and i.f["cond"] >> 1 == 7):
                    break
                a += 4

    def entries_changed(self) -> None:
        """Entries were added or dropped after bodies were found: ``_near`` sorts them again."""
        self._strong = None

    def _enclosing(self, x: int) -> int:
        """The last entry that is not weak at or before ``x`` (``x`` itself if none)."""
        if self._strong is None:
            self._strong = sorted(self.entries - self.weak)
        k = bisect.bisect_right(self._strong, x)
        return self._strong[k - 1] if k else x

    def _near(self, entry: int, x: int) -> bool:
        """``x`` lies after ``entry`` and before the next entry that is not weak: inside the
        same function's code, as the labels of its computed gotos are."""
        if self._strong is None:  # entries are final once the analysis lifts functions
            self._strong = sorted(self.entries - self.weak)
        k = bisect.bisect_right(self._strong, entry)
        return entry <= x and (k == len(self._strong) or self._strong[k] > x)


def _seed_key(seed: EntrySeed | None) -> tuple | None:
    if seed is None:
        return None
    regs = tuple(sorted((r, tuple(sorted(cs))) for r, cs in seed.regs.items()))
    slots = tuple(sorted((k, n, tuple(sorted(cs))) for k, (n, cs) in seed.slots.items()))
    return regs, slots


def _reloaded(fv: FunctionValues, br: Insn) -> bool:
    """The ``br``'s target holds a value read back from a frame slot the analysis did not know."""
    st = fv.before(br.addr)
    if st is None or br.f["Rn"] == 31:
        return False
    return any(x[0] == "def" and x[2] == "slot" for x in E.leaves(st.regs[br.f["Rn"]]))
