"""Copies of small leaf functions in the shards that call them, so that clang can inline them
(and ``single_callers``: functions with one caller in their own shard marked for inlining).

A lifted call passes its arguments and results through ``NxCpu``: the caller stores X0, the
callee loads it at its entry, stores its result at its return, and the caller loads that back.
Each of those loads waits for the store just before it (store-to-load forwarding, ~5 cycles on
the critical path), which in a small leaf is as long as the leaf's own work: Lua's
``luaH_getshortstr`` (a hash chain walk of ~20 instructions, a quarter of n-body's time) ran at
half native speed.  Where the caller and the callee are in one C file, clang inlines the callee
and the loads become the stored values themselves; a shard holds a range of addresses, so most
calls cross shards.

So after the call sites' lists are placed (``interproc.place``), each shard gets a ``static``
copy (``I_<addr>``) of every small leaf it calls that another shard defines, and its direct
calls of that leaf call the copy.  The copy is the leaf's own final C, so nothing about what
runs changes but where clang may see it, and how it hands back its result: X0 as the C result
and the pc it returns to through a pointer (``as_copy``), so that the caller's return check
folds away on the paths where that is the caller's own return address.  A leaf here is a function with no call, no indirect
jump, no trap or system call (``FnLive.opaque``) and no table: nothing in it depends on being a
separate C function.  Direct tail calls are allowed (the copy declares their targets): stdio's
``getc`` is a few loads and a store with a tail call of ``__uflow`` when the buffer is empty,
called once per byte read; clang turns an inlined ``musttail`` call into a plain call.

Each copy makes its callers' shards depend on the leaf's C: changing the leaf recompiles them
too.  A leaf called from more than ``MAX_CALLER_SHARDS`` other shards is left alone, which
bounds what one changed function costs an incremental build.

Except a library routine: a leaf of at most ``ROUTINE_LINES`` lines called at
``ROUTINE_SITES`` or more direct call sites (libc's strcmp, strlen, memchr: busybox calls strcmp
at 804 sites in 73 shards) is copied into every shard that calls it and marked
``always_inline``.  Such a routine runs in the innermost loops of whatever uses it: busybox
sort's compare spent 47 of its 241 host instructions in strcmp, 12 of them pushing and popping
the host's callee-saved registers that the lifted strcmp's unaligned path needs (clang could not
move them off the fast path), and inlined into compare_keys the compare takes 219.  Changing
such a routine recompiles every shard that calls it (busybox strcmp: 73); a program's own
functions are rarely called from so many sites.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recompiler.lift import interproc
from recompiler.lift.emitter import ARGS, SIG
from recompiler.lift.signature import PARAMS

MAX_LINES = 48  # a leaf's C, in lines (about one guest instruction a line), comments not counted
MAX_CALLER_SHARDS = 8  # shards a leaf may be copied into
ROUTINE_SITES = 16  # direct call sites that make a leaf a library routine
ROUTINE_LINES = 128  # a library routine's C, in lines

# A copy returns X0 as its C result and the pc it returns to through ``*_pc``: see as_copy.
COPY_SIG = PARAMS[:-1] + ", u64 *_pc)"
COPY_ARGS = ARGS[:-1] + ", &_pc)"
_RETURN = re.compile(r"(?:MUSTTAIL )?return ([^;\n]+);")  # every way a leaf's C returns but NX_BACK
_DEF = re.compile(r"^NxRet F_([0-9a-f]+)" + re.escape(SIG) + r" \{\n.*?^\}\n", re.M | re.S)
_CALL = re.compile(r"^  _r = F_([0-9a-f]+)" + re.escape(ARGS) + ";$", re.M)  # emitter.call's direct call statement
_TAIL = re.compile(r"MUSTTAIL return F_([0-9a-f]+)" + re.escape(ARGS) + ";")  # emitter.goto's tail call
_COMMENT_LINE = re.compile(r"^[ \t]*/\*.*\*/[ \t]*$", re.M)  # recompiler.comments' disassembly


def code_lines(body: str) -> int:
    """Lines of a function's C without the comment lines ``recompiler.comments`` adds, so a
    build with comments (for gdb and perf annotate) copies the same leaves as one without."""
    return body.count("\n") - len(_COMMENT_LINE.findall(body))


@dataclass
class Shard:
    text: str  # its C, call sites' lists placed
    facts: list[interproc.FnLive]  # its functions


def leaves(shards: list[Shard], max_lines: int = MAX_LINES) -> dict[int, str]:
    """entry -> C text of every leaf function of at most ``max_lines`` lines defined in ``shards``."""
    out: dict[int, str] = {}
    for sh in shards:
        small = {f.entry for f in sh.facts if not f.opaque and not f.site_target}
        if not small:
            continue
        for m in _DEF.finditer(sh.text):
            entry = int(m.group(1), 16)
            body = m.group(0)
            if entry in small and code_lines(body) <= max_lines and "static " not in body and "JT_" not in body:
                out[entry] = body
    return out


def as_copy(body: str, entry: int) -> str:
    """The leaf ``F_<entry>``'s C as the caller shards' copy ``I_<entry>``, which returns X0 as
    its C result and the pc through ``*_pc``.  Why: a leaf with two ways out (getc: the byte, or
    a tail call of ``__uflow``) returned an ``NxRet`` aggregate from each; inlined, the two became
    one phi of aggregates (instcombine folds the fields back into one), and clang never saw that
    the fast path's pc is the caller's own constant return address: the caller's return check
    (a compare and a branch, plus the move and jump into the merge) ran at every byte busybox
    read.  With scalar returns the pc is a phi of its own and jump threading drops the check on
    the paths that return the constant.  An inlined tail call becomes a plain call either way."""
    body = body.replace(f"NxRet F_{entry:x}{SIG}", f"u64 I_{entry:x}{COPY_SIG}", 1)
    body = _RETURN.sub(lambda m: f"{{ NxRet _o = {m.group(1)}; *_pc = _o.pc; return _o.x0; }}", body)
    body = body.replace("#define NX_CATCH return _r\n", "#define NX_CATCH { *_pc = _r.pc; return _r.x0; }\n")
    return body.replace("NX_BACK", "{ *_pc = s->pc; return s->x[0]; }")


def copy_call(entry: str) -> str:
    """A direct call statement of the copy ``I_<entry>`` in place of emitter.call's ``_r = F_...``."""
    return f"  {{ u64 _pc, _x0 = I_{entry}{COPY_ARGS}; _r.pc = _pc; _r.x0 = _x0; }}"


def routines(shards: list[Shard], leaf: dict[int, str] | None = None) -> set[int]:
    """The leaves of at most ``ROUTINE_LINES`` lines with ``ROUTINE_SITES`` or more direct call
    sites in the whole program: library routines, copied everywhere and always inlined.
    ``leaf``: ``leaves(shards, ROUTINE_LINES)`` where the caller has it already."""
    sites: dict[int, int] = {}
    for sh in shards:
        for f in sh.facts:
            for g in f.site_target:
                if g is not None:
                    sites[g] = sites.get(g, 0) + 1
    if leaf is None:
        leaf = leaves(shards, ROUTINE_LINES)
    return {e for e in leaf if sites.get(e, 0) >= ROUTINE_SITES}


def copy_into_callers(shards: list[Shard]) -> list[str]:
    """Each shard's text with static copies of the small leaves and the library routines it
    calls from other shards."""
    leaf = leaves(shards, ROUTINE_LINES)
    routine = routines(shards, leaf)
    small = {e for e, body in leaf.items() if code_lines(body) <= MAX_LINES}
    defined = [{f.entry for f in sh.facts} for sh in shards]
    wanted: list[set[int]] = []
    callers: dict[int, int] = {}
    for sh, own in zip(shards, defined):
        w = {int(a, 16) for a in _CALL.findall(sh.text)} & (small | routine)
        w -= own
        wanted.append(w)
        for e in w:
            callers[e] = callers.get(e, 0) + 1
    out = []
    for sh, w in zip(shards, wanted):
        w = {e for e in w if e in routine or callers[e] <= MAX_CALLER_SHARDS}
        if not w:
            out.append(sh.text)
            continue
        tails = sorted({t for e in w for t in _TAIL.findall(leaf[e])})
        copies = "".join(f"NxRet F_{t}{SIG};\n" for t in tails)
        copies += "".join(
            ("static __attribute__((always_inline)) " if e in routine else "static ") + as_copy(leaf[e], e) for e in sorted(w)
        )
        text = _CALL.sub(lambda m: copy_call(m.group(1)) if int(m.group(1), 16) in w else m.group(0), sh.text)
        first = _DEF.search(text)
        at = first.start() if first else len(text)
        out.append(text[:at] + copies + text[at:])
    return out


MAX_SITES = 2  # direct call sites of a function inlined into its only caller (code growth)
# Lines of C (about one guest instruction each) that marked callees may add to one function,
# their own marked callees' copies counted: see single_callers.
MAX_GROWTH = 2048


def single_callers(shards: list[Shard], texts: list[str], max_growth: int = MAX_GROWTH) -> list[str]:
    """``texts`` (the shards' final C) with each function that one other function of the same
    shard alone calls, at no more than ``MAX_SITES`` sites and never in a tail call, marked
    ``always_inline``: clang then inlines it there (its out-of-line definition stays, for the
    entry table) and its arguments, results and the host prologue and epilogue of a separate C
    function go away.  busybox sort's compare_keys calls get_key twice per compare, 25 host
    instructions of call overhead each.  Not a function with a jump table (a computed goto: clang
    cannot inline it).  Semantics do not change: an inlined call still checks the pc it returns
    to, and a return to somewhere else still goes up through the caller.

    Bounded by what the copies add: a function's expanded size is its own lines plus, for each
    marked callee, the callee's expanded size once per call site, and a callee is marked only
    while its caller grows by at most ``max_growth`` lines (smallest callees first).  Each
    marked callee is copied at every site, in the caller's ``F_`` and its cold ``R_`` twin alike,
    so a chain of functions each calling the next at two sites grows exponentially:
    in libgmp's shard of ``__gmpn_mul``, eight functions each called twice by the next (and
    nothing else) made a 10,000-line shard hold a 199,000-instruction LLVM function that took
    clang an hour."""
    where: dict[int, int] = {}
    sites: dict[int, list[int]] = {}
    tails: set[int] = set()
    for i, sh in enumerate(shards):
        for f in sh.facts:
            where[f.entry] = i
            for g in f.site_target:
                if g is not None:
                    sites.setdefault(g, []).append(f.entry)
            tails.update(f.tail_target)
    lines: dict[int, int] = {}  # a function's own lines, where it may be inlined at all
    for text in texts:
        for m in _DEF.finditer(text):
            body = m.group(0)
            if "JT_" not in body and "goto *" not in body:
                lines[int(m.group(1), 16)] = code_lines(body)
    wanted: dict[int, list[tuple[int, int]]] = {}  # caller -> [(callee, sites)]
    for g, callers in sites.items():
        c = set(callers)
        if len(c) != 1 or len(callers) > MAX_SITES or g in tails or g not in where or g not in lines:
            continue
        (f,) = c
        if f != g and where.get(f) == where[g]:
            wanted.setdefault(f, []).append((g, len(callers)))
    size: dict[int, int] = {}  # expanded size of each function with its marked callees copied in
    chosen: set[int] = set()
    for root in sorted(wanted):  # callees before callers (each callee has one caller: a forest)
        stack, seen = [(root, False)], {root}
        while stack:
            f, done = stack.pop()
            if f in size:
                continue
            if not done:
                stack.append((f, True))
                # (a callee already on the path: a cycle of only callers, never inlined into itself)
                stack += [(g, False) for g, _ in wanted.get(f, []) if g not in seen and not seen.add(g)]
                continue
            grown = 0
            for cost, g in sorted((size[g] * n, g) for g, n in wanted.get(f, []) if g in size and g not in chosen):
                if grown + cost <= max_growth:
                    grown += cost
                    chosen.add(g)
            size[f] = lines.get(f, 0) + grown
    marked: list[set[int]] = [set() for _ in shards]
    for g in chosen:
        marked[where[g]].add(g)
    out = []
    for text, mark in zip(texts, marked):

        def one(m: re.Match) -> str:
            body = m.group(0)
            if int(m.group(1), 16) not in mark:
                return body
            return "__attribute__((always_inline)) " + body

        out.append(_DEF.sub(one, text) if mark else text)
    return out
