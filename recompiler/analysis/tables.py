"""Jump tables from the value analysis: the targets an indirect ``BR`` may take.

The ``BR`` register's value before the branch (``FunctionValues.before``) is a symbolic
expression; its unknown part is the index.  The index's range comes from, in order:
1. a bound learned on every path to the branch (``cmp`` + ``b.hi/b.hs/b.ls/b.lo``, ``cbz``,
   a ``csel`` clamp, anywhere before it, also through a spill and reload of the index): the
   table has exactly that many entries, whatever their number;
2. a mask on the index (``and x9, x27, #0x1f``, a computed goto's opcode field): up to
   ``mask + 1`` entries, read while they land on code (the rest go through the general
   dispatch, or a ``DirectTable``'s fatal slot); likewise an index loaded by ``ldrb``/``ldrh``
   from memory not known here, inside the address a table entry is read from (an
   interpreter's opcode byte: QuickJS's
   ``ldr x8, [x22, w24, uxtw #3]`` after ``ldrb w24, [pc]``): up to 256 / 65536 entries,
   read while they are code of this function (``own``);
3. nothing: entries are read from index 0 (index 0 may be unused) while they are code of this
   function (``own``), with no count limit but the size of the image.
A table base merged from several paths takes each constant that reaches it (a value set);
where something else reaches it too the lifted ``BR`` still switches on the real target, so a
wrong guess costs only the fallback through the dispatch table.  A bounded table passes over a
guessed base whose entries are not all code (a register that holds the base on the paths to
the switch and something else on others the join merged in: pcre2's opcode dispatch, whose
base register holds a return id of 0 at the entry); the table is then not exact.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

from recompiler.analysis import expr as E
from recompiler.analysis.values import FunctionValues
from recompiler.decode import Insn
from recompiler.lift.emitter import DirectTable

MAX_BOUND = 1 << 16  # a compare bound above this is taken as no bound
MAX_OPEN = 1 << 16  # entries of a table with no bound (the image ends before, in practice)
MAX_COMBOS = 8  # product of candidate bases tried


@dataclass
class Recovered:
    targets: list[int]
    kind: str  # "bounded", "masked", "loaded", "open", "constant", "candidates"
    direct: DirectTable | None = None
    # every value the register may hold is a target: no base guessed from a merge that
    # something else reaches too (``noreturn_functions`` may then trust the list)
    exact: bool = True
    # every value the register may hold is read from memory the program cannot write, at an
    # index the table covers: a target outside ``targets`` cannot happen (the lifted BR's
    # fallback is then a fatal error, which keeps no register live in an interpreter's loop)
    complete: bool = False


def _nodes(e: tuple):
    """Sub-values of ``e``, outermost first."""
    yield e
    for x in e[1:]:
        if isinstance(x, tuple):
            yield from _nodes(x)


def recover(fv: FunctionValues, br: Insn, mem, own: Callable[[int], bool]) -> Recovered | None:
    """The table of ``br`` (None where the value at the branch does not name one); ``own``:
    whether an address is code of this function (where an unbounded table's entries stop)."""
    st = fv.before(br.addr)
    if st is None or br.f["Rn"] == 31:
        return None
    target = st.regs[br.f["Rn"]]
    target = _fold_loads(target, mem)
    if target is None or target[0] == "top" or E.TOP in E.leaves(target):
        return None
    read = mem.read

    def code(v: int | None) -> bool:
        return v is not None and v % 4 == 0 and mem.is_code(v)

    all_leaves = E.leaves(target)
    if not all_leaves:
        v = E.evaluate(target, {}, read)
        return Recovered([v], "constant", complete=True) if code(v) else None
    # the index: a bounded or masked sub-value holding every leaf that is not a merged constant
    guessable = {x for x in all_leaves if x[0] == "phi" and fv.candidates(x)[0]}
    bounds = _folded_bounds(st, mem)
    index, bound, kind, loaded = None, None, None, None
    # a loaded index selects a table entry: it is inside the address of a load (the entry's),
    # never the entry itself (a table of 16-bit offsets read from an unknown base is no index)
    addressing = {x for n in _nodes(target) if n[0] == "load" for x in _nodes(n[3])}
    for n in _nodes(target):
        if n[0] in E.CONSTS or not E.leaves(n):
            continue
        rest = all_leaves - E.leaves(n)
        if not rest <= guessable:
            continue
        b = bounds.get(E.strip(n))
        if b is not None and b < MAX_BOUND:
            index, bound, kind = n, b, "bounded"
            break
        if n[0] == "mask" and n[2] < MAX_BOUND:
            index, bound, kind = n, n[2], "masked"
            break
        if n[0] == "load" and not n[2] and n[1] <= 2 and loaded is None and n in addressing:
            loaded = n  # an unsigned byte/halfword: used only where no bound or mask is found
    if index is None and loaded is not None:
        index, bound, kind = loaded, (1 << 8 * loaded[1]) - 1, "loaded"
    if index is None:
        fixed = all_leaves - guessable
        if not fixed:  # only merged constants: the targets are those
            combos = _combos(fv, all_leaves)
            out = [v for env in combos if code(v := E.evaluate(target, env, read))]
            return Recovered(_uniq(out), "candidates", exact=_closed(fv, all_leaves)) if out else None
        index = _smallest_holding(target, fixed)
        kind = "open"
    guesses = all_leaves - E.leaves(index)
    combos = _combos(fv, guesses)
    if not combos:
        return None
    out: list[int] = []
    # (not where _combos stopped at MAX_COMBOS: a base it did not try may be the one)
    complete = kind in ("bounded", "masked", "loaded") and len(combos) == _n_combos(fv, guesses)
    dropped = False  # a guessed base whose bounded table is not code (the merge's other values)
    for env in combos:
        if complete and not all(_loads_read_only(target, {**env, index: k}, mem) for k in range(bound + 1)):
            complete = False
        if kind == "bounded":
            vals = [E.evaluate(target, {**env, index: k}, read) for k in range(bound + 1)]
            if not all(code(v) for v in vals):
                # a bound that does not fit the table: not this table's, or a guessed base the
                # merge brings from paths where the register holds something else (pcre2's
                # dispatch base, a return id of 0 on the paths a loop head merges)
                dropped = True
                continue
            out += vals
        elif kind in ("masked", "loaded"):
            for k in range(bound + 1):
                v = E.evaluate(target, {**env, index: k}, read)
                # a loaded index's run of up to 256/65536 entries ends where they stop being
                # code of this function: past its table the words may still point at code
                # (the next table, a function pointer), which would graft another body on
                if not code(v) or (kind == "loaded" and not own(v)):
                    complete = False
                    if k == 0:
                        # an unused first slot (glibc's unaligned memcpy: ``and x14, x3, #0xf;
                        # cbnz x14`` before a table whose entry 0 is 0, naming the table itself,
                        # which is rodata, not code)
                        continue
                    break
                out.append(v)
        else:
            for k in range(MAX_OPEN):
                v = E.evaluate(target, {**env, index: k}, read)
                if not code(v) or not own(v):
                    if k == 0:
                        continue  # an unused first slot (glibc's memcpy handles index 0 before)
                    break
                out.append(v)
    if not out:
        return None
    exact = _closed(fv, guesses) and not dropped
    rec = Recovered(_uniq(out), kind, exact=exact, complete=complete and exact)
    if kind in ("masked", "loaded") and len(combos) == 1:
        rec.direct = _direct(st, target, index, combos[0], mem, bound if kind == "loaded" else None)
    return rec


def _closed(fv: FunctionValues, leaves) -> bool:
    """No merged leaf of ``leaves`` is reached by anything but its constants."""
    return not any(fv.candidates(x)[1] for x in leaves)


def _fold_loads(e: tuple, mem) -> tuple | None:
    """``e`` with each load from a constant address folded: read-only memory gives its value;
    writable memory (a GOT slot an IFUNC resolver fills at startup, a pointer or a counter
    variable) gives a value not known here, an opaque leaf (``_volatile``): an index may be
    one (busybox bc's lexer switches on a global token, bounded by a compare), a table base
    never is (``recover`` guesses only merged constants outside the index)."""
    k = e[0]
    if k == "load":
        addr = _fold_loads(e[3], mem)
        if addr is None:
            return None
        a = E.cval(addr)
        if a is not None:
            if mem.read(a, e[1]) is None:
                # outside the image: no path that gets here loads it (a switch's index that
                # its compare excludes, a constant the analysis carried past the compare:
                # libpcre2-8's ``w4 = -1``); read as a leaf, its value made an open table of
                # every instruction after the branch
                return None
            if not mem.is_read_only(a, e[1]):
                return _volatile(e[1], e[2], a)
            v = E.evaluate(("load", e[1], e[2], addr), {}, mem.read)
            return None if v is None else E.const(v)
        return ("load", e[1], e[2], addr)
    if k in ("add", "shl", "lsr", "mask", "ext"):
        parts = [(_fold_loads(x, mem) if isinstance(x, tuple) else x) for x in e[1:]]
        if any(p is None for p in parts):
            return None
        return E.substitute((k, *parts), {})
    return e


def _volatile(size: int, signed: bool, addr: int) -> tuple:
    """The opaque leaf of a load of writable memory at a constant address."""
    return ("def", addr, ("mem", size, signed))


def _folded_bounds(st, mem) -> dict:
    """The state's learned bounds, keyed as ``_fold_loads`` writes the values they bound."""
    out: dict = {}
    for k, b in st.bounds.items():
        f = _fold_loads(k, mem)
        if f is not None:
            f = E.strip(f)
            out[f] = min(b, out.get(f, b))
    return out


def _uniq(xs: list[int]) -> list[int]:
    return list(dict.fromkeys(xs))


def _n_combos(fv: FunctionValues, leaves: frozenset) -> int:
    """How many assignments ``_combos`` would give without its limit."""
    n = 1
    for x in leaves:
        n *= len(fv.candidates(x)[0])
    return n


def _combos(fv: FunctionValues, leaves: frozenset) -> list[dict]:
    """Each assignment of a candidate constant to the merged ``leaves`` (few)."""
    leaves = sorted(leaves, key=repr)
    options = [sorted(fv.candidates(x)[0]) for x in leaves]
    if any(not o for o in options):
        return []
    out = []
    for vals in itertools.product(*options):
        out.append(dict(zip(leaves, vals)))
        if len(out) >= MAX_COMBOS:
            break
    return out


def _smallest_holding(e: tuple, leaves: frozenset) -> tuple:
    """The innermost sub-value of ``e`` holding all of ``leaves``."""
    while True:
        inner = [x for x in e[1:] if isinstance(x, tuple) and leaves <= E.leaves(x)]
        if not inner:
            return e
        e = inner[0]


def _direct(st, target: tuple, index: tuple, env: dict, mem, loaded: int | None = None) -> DirectTable | None:
    """A masked table the lifted ``BR`` may index with the register itself (``DirectTable``):
    the masked value is what some register holds at the branch, each guessed base is held by
    a register (checked at run time: the guards), the rest is constant computed in registers
    (none read back from the stack), and every load reads memory the program cannot write.
    ``loaded``: the index is itself a loaded byte/halfword of at most this value (no mask: the
    lifted BR checks the register's range and that it is the one the entry's load used)."""
    y, m = (index[1], index[2]) if loaded is None else (index, loaded)
    held = {v: r for r, v in reversed(list(enumerate(st.regs[:31])))}
    if y not in held:
        return None
    regs = {y: held[y]}
    guards = []
    for leaf, c in env.items():
        if leaf not in held:
            return None
        regs[leaf] = held[leaf]
        guards.append((held[leaf], c))
    expr = E.to_emitter(target, regs)
    if expr is None:
        return None
    slots = []
    for k in range(m + 1):
        env_k = {**env, index: k}
        if not _loads_read_only(target, env_k, mem):
            return None
        v = E.evaluate(target, env_k, mem.read)
        slots.append(v if v is not None and v % 4 == 0 and mem.is_code(v) else None)
    return DirectTable(regs[y], m, tuple(sorted(guards)), tuple(slots), expr, loaded is not None)


def _loads_read_only(e: tuple, env: dict, mem) -> bool:
    if e in env:
        return True
    if e[0] == "load":
        a = E.evaluate(e[3], env, mem.read)
        return a is not None and mem.is_read_only(a, e[1]) and _loads_read_only(e[3], env, mem)
    return all(_loads_read_only(x, env, mem) for x in e[1:] if isinstance(x, tuple))
