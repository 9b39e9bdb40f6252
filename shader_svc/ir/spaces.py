"""Which memory space each generic (flat) access of a program's IR reaches, proved where the
address's provenance is known, so its lowering emits one path instead of the run-time
selection over shared / local / global memory (``lower/memory.py``'s ``_generic_paths``).

nvcc -G code (and -O3 code that loses a pointer's space) reaches memory through generic
addresses: a parameter pointer (global), the shared window plus an offset (constant bank 0's
window word: SM86 ``c[0x0][0x18]``, SM53 ``c[0x0][0x0]``), the local window plus the stack
pointer R1 (SM86 ``c[0x0][0x20]`` + R1 with carry into ``c[0x0][0x24]``; SM53 ``c[0x0][0x4]``
ORed with R1, high word 0).  -G code spills every value to the stack, so such pointers travel
through local-memory slots (``STL [R1+0x10]`` ... ``LDL``) and through structures on the stack
reached by generic stores, before an access uses them.

The analysis is an abstract interpretation of the IR function after the optimiser, a fixed
point over its basic blocks.  Each value gets a *kind* and, where known, a byte offset:

- ``n``: a number (constants, thread ids, dims; ``off`` its value when constant);
- ``p``: a kernel parameter word (a pointer parameter is a global address, also plus a number
  or an unknown word; added to another pointer it is an offset);
- ``u``: a word of unknown meaning (loaded from global or shared memory, an unknown slot);
- ``g`` global, ``s`` the shared window, ``lw`` the local window's base, ``sp`` the stack
  pointer (``off``: bytes from R1's start), ``l`` a generic address in the local window
  (``off``: its stack offset): pointer kinds;
- ``x``: a register or stack word no path wrote (uninitialised: -G spills callee-saved
  registers it never set); it takes no part in joins, mixed with a value it is ``u``;
- ``TOP``: conflicting or untracked (``BOT``: not reached yet).

Arithmetic (adds, ors, 64-bit pairs and their carries, moves, selects) combines its operands'
kinds: a pointer kind plus numbers stays that kind (valid CUDA never adds two pointers), the
local window plus the stack pointer is a local address, two different pointers are TOP.  The
block state maps registers and the lowering's variables, and the stack's words (by offset from
R1's start) to abstract values; a store through a local address of known offset (LDL/STL, or a
generic store proved local) writes its slot, one of unknown offset or space joins every slot
(data written so leaves a pointer word's kind: assumed not to rebuild a pointer piecewise;
sub-word STL and local atomics make their words unknown).  Joins at block entries take the
lattice join (different kinds: TOP).  An access whose address is ``g`` or ``p``, ``s``, ``l``
(or a constant outside both windows) is proved to that space; ``TOP``, ``u``, ``n`` keep the
selection.

The fixed point is sparse conditional constant propagation: constants are evaluated as the
optimiser folds them (``optimize._EVAL``), also through the stack's words; a conditional
branch on a known condition follows one edge, on one not reached yet none.  Block entries and
values accumulate over the passes (monotone).  A live operation still on an unreached value
makes the analysis give up.

The result is written into the operations (attribute ``proven``: 'global', 'shared', 'local'),
read by the lowering; ``SpaceIs`` on a proved address becomes a constant there.  With ``fold``,
branches with one taken edge become unconditional and unreachable blocks go (``_fold``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from shader_svc.ir.block import Function, Op, Term
from shader_svc.ir.optimize import _EVAL
from shader_svc.ir.types import Type

GENERIC = {
    "GenericLoad",
    "GenericStore32",
    "GenericStore64",
    "GenericStore128",
    "GenericAtomic32",
    "GenericAtomicF32",
    "GenericLoadSub",
    "GenericStoreSub",
    "GenericAtomicCas32",
    "GenericAtomic64",
    "GenericAtomicCas64",
    "SpaceIs",
}
STORES = {"GenericStore32": 1, "GenericStore64": 2, "GenericStore128": 4}
PTR = frozenset(("g", "s", "lw", "sp", "l"))
WEAK = ("n", "p", "u")  # ordered: joined to the larger
SPACE = {"g": "global", "p": "global", "s": "shared", "l": "local"}


class AV(NamedTuple):
    kind: str  # BOT, TOP, a weak or a pointer kind (module docstring)
    off: int | None = None


BOT, TOP, U = AV("BOT"), AV("TOP"), AV("u")
X = AV("x")  # a register or stack word no path wrote (uninitialised)
M64 = (1 << 64) - 1


@dataclass(frozen=True)
class Layout:
    """Where one ISA's constant bank 0 keeps the windows (each ISA part's ``GENERIC_LAYOUT``, from
    its ``cbank.py``): byte offset -> kind for the window words, the stack top's offset, the
    parameters' start, the generic address range of the two windows."""

    words: dict = field(default_factory=dict)  # offset -> 's' / 'lw'
    stack_top: int = 0
    params: int = 0
    windows: tuple[int, int] = (0, 0)  # the generic addresses of the local and shared windows


def join(a: AV, b: AV) -> AV:
    """The lattice join (control-flow merges, selects); an uninitialised word (``X``) takes no
    part (no defined execution relies on its value)."""
    if a == b or b.kind in ("BOT", "x"):
        return a if a.kind != "BOT" else b
    if a.kind in ("BOT", "x"):
        return b
    if a.kind == "TOP" or b.kind == "TOP":
        return TOP
    if a.kind == b.kind:
        return AV(a.kind)
    if a.kind in WEAK and b.kind in WEAK:
        return AV(max(a.kind, b.kind, key=WEAK.index))
    return TOP


def _add_off(a: int | None, b: int | None, sub: bool = False) -> int | None:
    if a is None or b is None:
        return None
    return (a - b if sub else a + b) & M64


def combine(a: AV, b: AV, offsets: bool = True) -> AV:
    """The kind of an arithmetic result of ``a`` and ``b`` (an add when ``offsets``)."""
    if a.kind == "BOT" or b.kind == "BOT":
        return BOT
    if a.kind == "x" or b.kind == "x":  # garbage stays garbage; mixed with a value: unknown
        return X if a.kind == b.kind else U
    if a.kind == "TOP" or b.kind == "TOP":
        return TOP
    off = _add_off(a.off, b.off) if offsets else None
    if a.kind in WEAK and b.kind in WEAK:
        # a parameter plus an unknown word is the parameter pointer plus an offset (a gather
        # through a loaded index): global, as the parameter alone
        k = "p" if "p" in (a.kind, b.kind) else max(a.kind, b.kind, key=WEAK.index)
        return AV(k, off if k == "n" else None)
    if b.kind in PTR and a.kind in WEAK:
        a, b = b, a
    if b.kind in WEAK:  # pointer + number / unknown word: still that pointer
        return AV(a.kind, off if b.kind == "n" and a.kind in ("sp", "l") else None)
    pair = {a.kind, b.kind}
    if pair == {"lw", "sp"}:  # the local window plus R1: a local generic address
        sp = a if a.kind == "sp" else b
        return AV("l", sp.off if offsets else None)
    if pair == {"l", "lw"}:  # the high word's carry chain of a local address
        return AV("l", (a if a.kind == "l" else b).off)
    if a.kind == b.kind and a.kind in ("s", "g", "lw"):  # a window's two words, a pair's halves
        return AV(a.kind)
    return TOP


def pack(lo: AV, hi: AV) -> AV:
    """``Pack64``: a 64-bit address from its words; the low word's kind and offset decide, the
    high word must agree (its window word, carries, a number)."""
    if lo.kind == "BOT" or hi.kind == "BOT":
        return BOT
    if lo.kind == "x" or hi.kind == "x":
        return X if lo.kind == hi.kind else U
    if lo.kind == "TOP" or hi.kind == "TOP":
        return TOP
    if lo.kind in WEAK and hi.kind in WEAK:
        k = max(lo.kind, hi.kind, key=WEAK.index)
        known = k == "n" and lo.off is not None and hi.off is not None
        return AV(k, lo.off | hi.off << 32 if known else None)
    if lo.kind in PTR and (hi.kind in WEAK or hi.kind == lo.kind or (lo.kind == "l" and hi.kind == "lw")):
        return lo
    if lo.kind in WEAK and hi.kind in ("s", "g"):
        return AV(hi.kind)
    return TOP


_IDENT = {"Trunc32", "ZExt64", "SExt64", "BitcastU32", "BitcastF32"}
_ARITH = {
    "IAnd32",
    "IMul32",
    "IMul64",
    "Lut3",
    "Permute32",
    "Shl64",
    "Shr64",
    "Sar64",
    "IShl32",
    "IShr32",
    "ISar32",
    "IXor32",
    "INot32",
}


def _var_key(o: Op) -> tuple | None:
    """The register / predicate / flag / lowering variable a read or write names (``zero``:
    RZ, URZ and PT, read as constants)."""
    n, at = o.op.name, o.attrs
    if n in ("GetReg", "SetReg"):
        f, r = at["file"], at["reg"]
        return ("zero", 0) if (f, r) in (("R", 255), ("UR", 63)) else (f, r)
    if n in ("GetPred", "SetPred"):
        f = at.get("file", "P")
        return ("zero", 1) if at["pred"] == 7 else (f + "P", at["pred"])
    if n in ("GetFlag", "SetFlag"):
        return ("flag", at["flag"])
    if n in ("LoadVarU32", "StoreVarU32", "LoadVarBool", "StoreVarBool"):
        return ("var", at["var"])
    return None


@dataclass
class Stats:
    proven: dict = field(default_factory=dict)  # space -> accesses proved
    unproven: int = 0
    space_is: int = 0  # SpaceIs queries answered
    passes: int = 0
    folded: int = 0  # conditional branches made unconditional
    removed: int = 0  # blocks no edge reaches, removed


class _Interp:
    def __init__(self, fn: Function, consts: dict, layout: Layout) -> None:
        self.fn, self.consts, self.layout = fn, consts, layout
        self.val: dict[int, AV] = {}

    def put(self, index: int, r) -> None:
        """A value's abstract value, joined with what earlier passes gave it (monotone: a
        pass that sees fewer paths into a loop never narrows what an earlier one saw); a
        ``GenericLoad``'s is a tuple, one per word."""
        old = self.val.get(index)
        if old is None or old == BOT:
            self.val[index] = r
        elif isinstance(r, AV) and r.kind == "BOT":
            pass
        elif isinstance(r, AV) and isinstance(old, AV):
            self.val[index] = join(old, r)
        elif not isinstance(r, AV) and not isinstance(old, AV):
            self.val[index] = tuple(join(x, y) for x, y in zip(old, r))
        else:
            self.val[index] = TOP

    def get(self, v) -> AV:
        c = self.consts.get(v.index)
        if c is not None:
            return AV("n", c[1])
        if v.index in self.fn.fixed:
            return U
        return self.val.get(v.index, BOT)

    # --- the stack's words -------------------------------------------------------------------
    @staticmethod
    def _load(slots: dict, off: int | None) -> AV:
        """A stack word (key None: what a word never stored since holds)."""
        if off is None:
            r = BOT
            for v in slots.values():
                r = join(r, v)
            return join(r, U)
        return slots.get(off, slots.get(None, X))

    @staticmethod
    def _store(slots: dict, off: int | None, v: AV) -> None:
        if off is None:  # unknown offset: any word may be written
            for k in list(slots):
                # data (not a pointer) written at an unknown offset (a loop over a local array)
                # leaves a pointer word's kind: assumed not to rebuild a pointer there piecewise
                if not (v.kind in WEAK and slots[k].kind in PTR):
                    slots[k] = join(slots[k], v)
            slots[None] = join(slots.get(None, X), v)
        else:
            slots[off] = v

    def space_of(self, addr: AV) -> str | None:
        if addr.kind == "n" and addr.off is not None:  # a constant address (a __device__ global's)
            lo, hi = self.layout.windows
            return None if lo <= addr.off < hi else "global"
        return SPACE.get(addr.kind)

    def block(self, b, regs: dict, slots: dict) -> None:
        get, lay = self.get, self.layout
        for o in b.items:
            n, a = o.op.name, o.args
            r: AV | None = None
            key = _var_key(o)
            if key is not None:
                if o.result is not None:  # a read
                    # a register no path wrote: uninitialised
                    r = regs.get(key, X) if key[0] != "zero" else AV("n", key[1])
                    if n == "GetPred" and o.attrs.get("not") and r.kind == "n" and r.off is not None:
                        r = AV("n", 1 - r.off)
                else:
                    regs[key] = get(a[0])
                if o.result is not None:
                    self.put(o.result.index, r)
                continue
            args = [get(x) for x in a]
            if any(isinstance(x, AV) and x.kind == "BOT" for x in args):
                if o.result is not None:
                    self.put(o.result.index, BOT)
                continue
            f = _EVAL.get(n)
            if f is not None and args and all(isinstance(x, AV) and x.kind == "n" and x.off is not None for x in args):
                got = f([x.off for x in args], o.attrs)
                if got is not None:  # the optimiser's constant evaluation, through the stack's words
                    self.put(o.result.index, AV("n", got))
                    continue
            if n in ("ConstU32", "ConstU64", "ConstBool"):
                r = AV("n", int(o.attrs["value"]))
            elif n == "CBankU32":
                off = o.attrs["offset"]
                if o.attrs["bank"] != 0:
                    r = AV("g") if o.attrs["bank"] == 4 else AV("n")  # bank 4: the globals' addresses
                elif off in lay.words:
                    r = AV(lay.words[off])
                elif off == lay.stack_top:
                    r = AV("sp", 0)
                else:
                    r = AV("p") if off >= lay.params else AV("n")
            elif n == "CBankDynU32":
                at = get(a[0])
                r = AV("p") if o.attrs["bank"] == 0 and at.kind == "n" and at.off is not None and at.off >= lay.params else U
            elif n in ("BuiltinU32", "LocalIndex"):
                r = AV("n")
            elif n in _IDENT:
                x = get(a[0])
                r = AV(x.kind, None if x.off is None else x.off & 0xFFFFFFFF) if n == "Trunc32" else x
            elif n in ("IAdd32", "IAdd64", "IOr32"):
                x, y = get(a[0]), get(a[1])
                # an OR into a window base is an add (SM53's local window | R1: the window is
                # 16 MiB aligned); two numbers' OR is folded by the optimiser
                r = combine(x, y, not (n == "IOr32" and x.kind == y.kind == "n"))
                if n != "IAdd64" and r.off is not None:
                    r = AV(r.kind, r.off & 0xFFFFFFFF)
            elif n == "ISub32":
                x, y = get(a[0]), get(a[1])
                if x.kind in ("BOT",) or y.kind == "BOT":
                    r = BOT
                elif x.kind == "x" or y.kind == "x":
                    r = X if x.kind == y.kind else U
                elif x.kind in PTR and x.kind == y.kind:
                    r = AV("n", _add_off(x.off, y.off, True))
                elif y.kind in WEAK and x.kind not in ("TOP",):
                    r = AV(x.kind, _add_off(x.off, y.off, True) if y.kind == "n" else None)
                    r = AV(r.kind, None if r.off is None else r.off & 0xFFFFFFFF)
                else:
                    r = TOP
            elif n == "Pack64":
                r = pack(get(a[0]), get(a[1]))
            elif n in ("Select32", "Select64"):
                r = join(get(a[1]), get(a[2]))
            elif n in _ARITH:
                r = get(a[0])
                for x in a[1:]:
                    if x.type in (Type.U32, Type.U64):
                        r = combine(r, get(x), False)
                r = AV(r.kind) if r.kind != "n" else AV("n")
            elif n == "LocalPtr":
                x = get(a[0])
                if x.kind == "BOT":
                    r = BOT
                else:
                    off = None if x.kind != "sp" or x.off is None else (x.off + o.attrs["offset"]) & 0xFFFFFFFF
                    r = AV("slot", off)
            elif n == "LoadLocal32":
                p = get(a[0])
                r = BOT if p.kind == "BOT" else self._load(slots, p.off)
            elif n == "StoreLocal32":
                p = get(a[0])
                if p.kind != "BOT":
                    self._store(slots, p.off, get(a[1]))
            elif n == "StoreSub" and o.attrs["space"] == "local":  # STL.U8/.U16: part of a word
                x = get(a[0])
                known = x.kind == "sp" and x.off is not None
                self._store(slots, x.off & ~3 & 0xFFFFFFFF if known else None, U)
            elif n in GENERIC:
                r = self.generic(o, slots)
            elif n == "Word":
                w = get(a[0])
                r = w[o.attrs["index"]] if isinstance(w, tuple) and not isinstance(w, AV) else w
            elif o.result is not None:
                # anything else: a word of unknown meaning, TOP where a pointer went in
                kinds = [get(x).kind for x in a if x.type in (Type.U32, Type.U64)]
                r = TOP if any(k in PTR or k == "TOP" for k in kinds) else U
            if o.result is not None and r is not None:
                self.put(o.result.index, r)

    def generic(self, o: Op, slots: dict):
        """An access's effect on the stack's words, and its result's abstract value."""
        n = o.op.name
        addr = self.get(o.args[0])
        if addr.kind == "BOT":
            return BOT
        local = addr.kind == "l"
        maybe_local = addr.kind not in ("g", "p", "s")
        off = addr.off & 0xFFFFFFFF if local and addr.off is not None else None
        if n == "GenericLoad":
            w = o.attrs["words"]
            if local:
                return tuple(self._load(slots, None if off is None else (off + 4 * k) & 0xFFFFFFFF) for k in range(w))
            return tuple(U for _ in range(w))
        if n in STORES:
            vals = [self.get(x) for x in o.args[2:]]
            for k, v in enumerate(vals):
                if local:
                    self._store(slots, None if off is None else (off + 4 * k) & 0xFFFFFFFF, v)
                elif maybe_local:
                    self._store(slots, None, v)
            return None
        if n == "SpaceIs":
            sp = self.space_of(addr)
            return AV("n", int(sp == o.attrs["space"])) if sp is not None else U
        if n == "GenericStoreSub":  # part of a word: the word's meaning is lost
            if maybe_local:
                self._store(slots, None if not local or off is None else off & ~3, U)
            return None
        if n == "GenericLoadSub":
            return U
        # atomics: their old values are words of memory; a local one may write (the 64-bit
        # compare-exchange does): its words become unknown
        if maybe_local:
            for k in range(2 if n == "GenericAtomicCas64" else 1):
                self._store(slots, None if off is None else (off + 4 * k) & 0xFFFFFFFF, U)
        return U if o.result is not None else None

    def taken(self, b, succ: list[int], index: dict) -> list[int]:
        """The successors a block's end may reach: a conditional branch on a known condition
        takes one edge, on a condition not reached yet none (the fixed point is optimistic)."""
        t = b.term
        if t is None or t.kind != "OpBranchConditional":
            return succ
        v = self.fn.placeholders.get(t.args[0])
        c = self.get(v) if v is not None else U
        if c.kind == "BOT":
            return []
        if c.kind == "n" and c.off is not None:
            return [index[t.args[1] if c.off else t.args[2]]]
        return succ

    def run(self, max_passes: int = 60) -> int:
        """The fixed point over the blocks (reverse post-order) and the edges they may take;
        the passes it took (0: gave up)."""
        blocks = self.fn.blocks
        index = {b.label: i for i, b in enumerate(blocks)}
        succ = [[index[s] for s in b.term.successors() if s in index] if b.term else [] for b in blocks]
        preds: list[list[int]] = [[] for _ in blocks]
        for i, ss in enumerate(succ):
            for s in ss:
                preds[s].append(i)
        order = _rpo(succ)
        out: list[tuple[dict, dict] | None] = [None] * len(blocks)
        taken: list[list[int]] = [[] for _ in blocks]
        entry: list[tuple[dict, dict] | None] = [None] * len(blocks)
        for p in range(1, max_passes + 1):
            changed = False
            before = dict(self.val)
            for i in order:
                ins = [out[q] for q in preds[i] if out[q] is not None and i in taken[q]]
                if i != 0 and not ins:
                    continue
                regs, slots = _entry(ins + ([entry[i]] if entry[i] is not None else []), i == 0)
                entry[i] = (dict(regs), dict(slots))  # accumulated: never narrows
                self.block(blocks[i], regs, slots)
                t = self.taken(blocks[i], succ[i], index)
                if out[i] != (regs, slots) or taken[i] != t:
                    out[i], taken[i] = (regs, slots), t
                    changed = True
            if not changed and before == self.val:
                self.out, self.preds, self.index, self.succ_taken = out, preds, index, taken
                # a live block ending on a condition never reached would cut its successors off
                # (a value the analysis cannot see): give up rather than fold on it
                for i, b in enumerate(blocks):
                    if out[i] is not None and b.term.kind == "OpBranchConditional" and not taken[i]:
                        return 0
                # likewise an operation of a live block still on a value never reached (a read
                # no path wrote): a store skipped on it would leave a stale stack word
                for i, b in enumerate(blocks):
                    if out[i] is not None and any(self.get(x) == BOT for o in b.items for x in o.args):
                        return 0
                return p
        return 0


def _entry(outs: list, entry: bool) -> tuple[dict, dict]:
    """A block's entry state: the join of its predecessors' exits.  A register or stack word a
    predecessor never wrote (uninitialised there: reading it gives no address anyone relies on)
    does not take part; a stack word a predecessor lacks is its default (key None: what a weak
    store left everywhere), where it has one.  The function's entry: nothing written."""
    if not outs:
        return {}, {}
    regs: dict = dict(outs[0][0])
    slots: dict = dict(outs[0][1])
    for r2, s2 in outs[1:]:
        for k, v in r2.items():
            regs[k] = join(regs[k], v) if k in regs else v
        d1, d2 = slots.get(None), s2.get(None)
        for k in set(slots) | set(s2):
            a, b = slots.get(k, d1), s2.get(k, d2)
            slots[k] = a if b is None else b if a is None else join(a, b)
    return regs, slots


def _rpo(succ: list[list[int]]) -> list[int]:
    seen, order = set(), []
    stack = [(0, iter(succ[0]))] if succ else []
    seen.add(0)
    while stack:
        node, it = stack[-1]
        nxt = next((s for s in it if s not in seen), None)
        if nxt is None:
            stack.pop()
            order.append(node)
        else:
            seen.add(nxt)
            stack.append((nxt, iter(succ[nxt])))
    order.reverse()
    return order + [i for i in range(len(succ)) if i not in seen]


def annotate(fn: Function, consts: dict, layout: Layout, fold: bool = True) -> Stats:
    """Prove the generic accesses' spaces of ``fn`` (after ``ir/optimize.py``; ``consts`` its
    folded values) and mark each proved one ``proven`` = 'global' / 'shared' / 'local'; with
    ``fold``, branches on conditions the analysis knows (constants through the stack's words,
    ``SpaceIs`` on a proved address) become unconditional and blocks no edge reaches go."""
    st = Stats()
    if not any(o.op.name in GENERIC for b in fn.blocks for o in b.items):
        return st
    it = _Interp(fn, consts, layout)
    st.passes = it.run()
    if not st.passes:
        return st
    live = [o is not None for o in it.out]
    for b, ok in zip(fn.blocks, live):
        for o in b.items:
            if o.op.name not in GENERIC:
                continue
            o.attrs.pop("proven", None)
            sp = it.space_of(it.get(o.args[0])) if ok else None
            if sp is None:
                st.unproven += ok and o.op.name != "SpaceIs"
                continue
            o.attrs["proven"] = sp
            if o.op.name == "SpaceIs":
                st.space_is += 1
            else:
                st.proven[sp] = st.proven.get(sp, 0) + 1
    if fold:
        st.folded, st.removed = _fold(fn, it, live)
    return st


def _fold(fn: Function, it: _Interp, live: list[bool]) -> tuple[int, int]:
    """Branches with one taken edge become ``OpBranch`` (a selection header loses its merge; a
    loop header keeps its branch); blocks never reached go, except those a live block still
    names (a merge block, a loop header's untaken edge: kept as ``OpUnreachable``) and a live
    loop's continue target (kept branching to its header)."""
    folded = 0
    for i, b in enumerate(fn.blocks):
        t = b.term
        if not live[i] or t.kind != "OpBranchConditional" or (b.merge is not None and b.merge.kind == "OpLoopMerge"):
            continue
        if len(it.succ_taken[i]) == 1:
            b.term = Term("OpBranch", (fn.blocks[it.succ_taken[i][0]].label,))
            b.merge = None
            folded += 1
    keep: dict[int, Term] = {}
    for i, b in enumerate(fn.blocks):
        if not live[i]:
            continue
        # a label a live block still names (a loop header's untaken edge, a merge) stays
        for lab in b.term.successors() + ([b.merge.args[0]] if b.merge is not None else []):
            keep.setdefault(lab, Term("OpUnreachable", ()))
        if b.merge is not None and b.merge.kind == "OpLoopMerge":
            keep[b.merge.args[1]] = Term("OpBranch", (b.label,))
    blocks, removed = [], 0
    for i, b in enumerate(fn.blocks):
        if live[i]:
            blocks.append(b)
        elif b.label in keep:
            b.items, b.merge, b.term = [], None, keep[b.label]
            blocks.append(b)
        else:
            removed += 1
    fn.blocks = blocks
    return folded, removed
