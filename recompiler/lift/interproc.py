"""Whole-program register summaries: what each lifted function may read from and write to
``NxCpu``, so that a call site stores and reloads only that.

Native code passes arguments in registers; lifted code passes them through ``NxCpu``, so every
value a call site stores or reloads is a memory access native code does not make.  Without
knowing the callee a call site must assume AAPCS64's worst case: it may read X0-X8, X16-X29,
SP and V0-V15 (``liveness.CALL_USES``) and change every caller-saved register.  A leaf like
Lua's ``luaH_getshortstr`` reads X0-X1 and writes four registers; the interpreter loop that
calls it stored 25 registers and reloaded 11 around each call.

Each function's lifter output (``FnLive``) holds what does not depend on other functions: the
registers live at its entry when its direct callees read nothing (``base_uses``), for each
direct call site the registers not surely written between the entry and the call
(``site_open``), and every register it writes.  ``summarize`` iterates the call graph to a
fixed point: USES(f) = base_uses | OR over call sites and direct tail calls (USES(callee) &
site_open); MODS(f) = its writes | OR MODS(callee), or every caller-saved register when it
also jumps or calls through a register, traps or makes a system call (``opaque``).  ``place`` then fills each call site's
store and reload lists and each return's store list (see ``FunctionEmitter``), with a forward
pass over the function for what its locals hold that ``NxCpu`` lacks (``dirty``).

Sound under the assumptions ``recompiler.trust_abi`` already makes: a callee keeps X19-X29 and
SP, so a caller never reloads them; everything else is what the lifted C itself says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recompiler.lift import liveness as L
from recompiler.lift import template as T
from recompiler.lift.template import CText

X30 = L.xbit(30)
X0, X1, X29 = L.xbit(0), L.xbit(1), L.xbit(29)
# X0, X1, X30, SP and X29 travel as C arguments and X0 as the C result (emitter.SIG): at the
# entry their NxCpu slots may be stale, so they count as written there; a call passes them
# without storing them (X1 is stored for an unknown callee, whose stores we cannot see: see
# site_lists).  X29 follows SP's rules (signature.SIG).
SP = L.xbit(L.SP_BIT)
ARGS = X0 | X1 | X30 | SP | X29


@dataclass
class Summary:
    uses: int  # registers the function may read before writing them (through its callees too)
    mods: int  # registers whose NxCpu slot a call of it may change
    # it reads X19-X28/D8-D15 itself, or a function it tail-calls does: setjmp, which captures
    # them (its caller notes its SP at such a call: the frame a longjmp returns to, emitter NX_CATCH)
    captures: bool = False
    # it may read NZCV before writing them: a false entry, reached with the flags set (emitter
    # _flags_at_entry), directly or through a direct tail call made before it writes them
    flags_in: bool = False
    # its returns and direct tail calls write SP and X29 back wherever it has them (frame_stores)
    keep_frame: bool = True
    # a call of it surely comes back to its return address (always_return)
    returns: bool = False
    # Go: what its returns may store for a caller (``FnLive.hands`` once the whole program's
    # are narrowed: ``go_result_uses``); every register unless set there (``go_lists``)
    hands: int = L.ALL
    # the results (liveness.RET_LIVE) some caller may read after a call of it: all of them
    # unless every caller is known (result_uses)
    ret_uses: int = L.RET_LIVE


UNKNOWN = Summary(L.CALL_USES, L.CALL_CLOBBERS)


@dataclass
class FnLive:
    """One lifted function's call sites and returns, before the whole program is known."""

    entry: int
    base_uses: int  # live at the entry if direct callees read nothing
    writes_all: int  # every register its own C may write
    opaque: bool  # a jump out through a register, a trap, an SVC: an exit
    # that stores every local (STORE_ALL, STORE_INDIRECT)
    callees: list[int]  # direct call and tail-call targets
    # per chunk (the function's instructions in address order)
    writes: list[int] = field(default_factory=list)
    succs: list[list[int]] = field(default_factory=list)  # chunk indices
    site: list[int] = field(default_factory=list)  # call site number or -1
    ret: list[int] = field(default_factory=list)  # return number or -1
    event: list[bool] = field(default_factory=list)  # writes own values into NxCpu (sets _c)
    entry_index: int = -1  # the entry's chunk
    # per call site k
    site_target: list[int | None] = field(default_factory=list)  # a lifted callee, else None
    # the site (a BLR's, its callee unknown) whose guarded direct call of a guessed target this
    # one is (emitter.call), else -1: it has no chunk of its own, but its BLR's liveness
    site_alt: list[int] = field(default_factory=list)
    # per direct tail call: whether a BR's guessed target made it (control.h_br), not the code
    tail_guess: list[bool] = field(default_factory=list)
    site_live: list[int] = field(default_factory=list)  # live after the call
    site_open: list[int] = field(default_factory=list)  # not surely written before it
    # per direct tail call: its callee and what is not surely written before it
    tail_target: list[int] = field(default_factory=list)
    tail_open: list[int] = field(default_factory=list)
    tail_chunk: list[int] = field(default_factory=list)  # the chunk index of each
    # for writing the lists: the registers the function's C has as locals / writes
    regs: list[int] = field(default_factory=list)
    v_used: list[int] = field(default_factory=list)
    w_regs: list[int] = field(default_factory=list)
    w_sp: bool = False
    v_written: list[int] = field(default_factory=list)
    ret_extra: str = ""  # what a return also writes back (the flags, for a test)
    unknown_uses: int = L.CALL_USES  # what an unknown callee reads (less with elide_saves)
    save_drop: int = 0  # saves droppable unless a return hands the register back
    # a call through a register (BLR): its callee may change every caller-saved register, but its
    # site stores only what an unknown callee reads (``unknown_uses``), as any call site does, so
    # unlike ``opaque`` it leaves the callee-saved slots of NxCpu to the usual lists
    calls_unknown: bool = False
    # instruction -> the caller-saved registers it writes (emitter._mark_write_through), and
    # those written where no store can follow (write_through leaves them out)
    wt_sites: dict[int, int] = field(default_factory=dict)
    wt_unsafe: int = 0
    # NZCV: whether it may read them before writing them, whether each direct tail call comes
    # before any write of them, and whether it has the flags' C locals (can store them)
    flags_in: bool = False
    tail_flags_open: list[bool] = field(default_factory=list)
    flags_local: bool = False
    # per chunk, for solving the call sites' liveness again once the callees' summaries are
    # known (``site_liveness``): what it reads and surely overwrites, and what leaving there
    # reads besides its direct tail calls' callees (a return's results, an indirect jump's
    # worst case, a branch out of the function: everything)
    gen: list[int] = field(default_factory=list)
    kill: list[int] = field(default_factory=list)
    out_fixed: list[int] = field(default_factory=list)
    # SP and X29 at the exits (``frame_stores``): per return and per direct tail call, whether
    # it surely leaves with the entry's SP and X30 (facts._normal_exits); whether it jumps out
    # through a register (its X30 there not followed); whether its C has a resume twin (R_x)
    # and an ``sp`` local; whether its returns may leave SP and X29 out at all (a whole-program
    # build of trusted AAPCS64 code, no trace)
    ret_normal: list[bool] = field(default_factory=list)
    tail_normal: list[bool] = field(default_factory=list)
    tail_lr: list[bool] = field(default_factory=list)  # (per tail call, tables' too: X30 the entry's)
    jumps_out: bool = False
    jump_abnormal: bool = False  # one such jump where X30 is not surely the entry's
    lr_roots: list[int] = field(default_factory=list)  # false entries a table's miss may reach so
    # per call site its return address; whether it may leave other than by a return or a direct
    # tail call (a jump through a register or a table, an SVC, a trap): see ``always_return``
    site_ret: list[int] = field(default_factory=list)
    other_exit: bool = True
    dispatch: bool = False  # it dispatches through a jump table (an interpreter's loop)
    twin: bool = False
    # the chunks where F_x leaves a cold path to its twin (lift/cold.py): a COLD_EXIT slot each;
    # the call sites and instructions on cold paths (write_through counts neither)
    cold_exits: list[int] = field(default_factory=list)
    cold_pads: set[int] = field(default_factory=set)  # (those at a landing pad: see site_lists)
    cold_sites: set[int] = field(default_factory=set)
    cold_addrs: set[int] = field(default_factory=set)
    sp_local: bool = False
    frame_ok: bool = False
    # the same without what a return hands back (the results, liveness.RET_LIVE): a return's
    # out_fixed is this | RET_LIVE, where its callers' reads (Summary.ret_uses) go instead
    out_noret: list[int] = field(default_factory=list)
    # Go code (``liveness.GO``): no register is kept by a callee, SP and X29 included (``go_lists``)
    go: bool = False
    # what its USES may hold at most (``FunctionPlan.input_regs``: a Go function with no
    # arguments is handed no argument register, whatever its callees read)
    uses_cap: int = L.ALL
    # what its MODS may hold at most (``FunctionPlan.mods_cap``)
    mods_cap: int = L.ALL
    # Go: what its returns may hand a caller (``FunctionPlan.hands_back``), for its returns'
    # liveness and store lists (``go_lists``)
    hands: int = L.ALL
    # Go: compiled from Go (``hands_back`` ``GO_RET_HANDED``: ABIInternal's rules hold for its
    # code), not the runtime's assembly
    go_compiled: bool = False


def summarize(fns: list[FnLive]) -> dict[int, Summary]:
    """USES and MODS of every function, iterated to the least fixed point over the call graph
    (recursion included: each function is revisited until its callees' summaries settle)."""
    by_entry = {f.entry: f for f in fns}
    summ = {f.entry: Summary(f.base_uses, _own_mods(f) & f.mods_cap, _captures(f), f.flags_in, False) for f in fns}
    callers: dict[int, list[int]] = {}
    for f in fns:
        for g in f.callees:
            callers.setdefault(g, []).append(f.entry)
    work = [f.entry for f in fns]
    queued = set(work)
    while work:
        e = work.pop()
        queued.discard(e)
        f = by_entry[e]
        uses = f.base_uses
        for k, (g, opened) in enumerate([*zip(f.site_target, f.site_open), *zip(f.tail_target, f.tail_open)]):
            if g is not None:
                u = summ[g].uses if g in summ else f.unknown_uses
                n = len(f.site_target)
                if (k < n and k < len(f.site_alt) and f.site_alt[k] >= 0) or (
                    k >= n and k - n < len(f.tail_guess) and f.tail_guess[k - n]
                ):
                    # a BLR's guessed callee (a BR's guessed tail callee) reads, through this
                    # function, no more than the unknown callee its inline cache may enter:
                    # the cache's path takes that callee so, and the guess's own path stores
                    # what it reads.  (Taken whole, X28 went up into busybox sort's
                    # compare_keys, stored at its calls of get_key: +9 M instructions.)
                    u &= f.unknown_uses
                uses |= u & opened
        mods = _own_mods(f)
        for g in f.callees:
            mods |= summ[g].mods if g in summ else _clobbers(f)
        uses &= f.uses_cap
        mods &= f.mods_cap
        guess = f.tail_guess if len(f.tail_guess) == len(f.tail_target) else [False] * len(f.tail_target)
        captures = _captures(f) or any(summ[g].captures for g, q in zip(f.tail_target, guess) if g in summ and not q)
        flags_in = f.flags_in or any(_tail_reads_flags(g, summ) for g, o in zip(f.tail_target, f.tail_flags_open) if o)
        s = summ[e]
        if uses != s.uses or mods != s.mods or captures != s.captures or flags_in != s.flags_in:
            s.uses, s.mods, s.captures, s.flags_in = uses, mods, captures, flags_in
            for c in callers.get(e, ()):
                if c not in queued and c in by_entry:
                    queued.add(c)
                    work.append(c)
    for e in frame_keepers(fns):
        summ[e].keep_frame = True
    for e in always_return(fns):
        summ[e].returns = True
    return summ


def always_return(fns: list[FnLive]) -> set[int]:
    """The functions a direct call of which surely comes back to its return address, so that
    its call sites need no check of the pc (``RET_CHECK``): every return and direct tail call
    leaves with the entry's SP and X30 (``FnLive.ret_normal``), it leaves no other way (a jump
    through a register or a table, an SVC, a trap: ``other_exit``), calls no unknown function,
    and every function it calls or tail-calls is one too (the greatest fixed point: recursion
    is no return to somewhere else).  A return to somewhere else (longjmp, an unwinder, a
    context switch) comes up only through a function that is none of these."""
    by_entry = {f.entry: f for f in fns}
    ok = {
        f.entry
        for f in fns
        if f.frame_ok
        and not f.other_exit
        and not f.calls_unknown
        and all(f.ret_normal)
        and len(f.tail_normal) == len(f.tail_target)
        and all(f.tail_normal)
    }
    callers: dict[int, list[int]] = {}
    for f in fns:
        for g in [*f.site_target, *f.tail_target]:
            callers.setdefault(g, []).append(f.entry)
    work = [e for e in by_entry if e not in ok]
    for f in fns:  # a callee that is not lifted here (None: an unknown one, counted above)
        if f.entry in ok and any(g is not None and g not in by_entry for g in [*f.site_target, *f.tail_target]):
            ok.discard(f.entry)
            work.append(f.entry)
    while work:
        e = work.pop()
        for c in callers.get(e, ()):
            if c in ok:
                ok.discard(c)
                work.append(c)
    return ok


def frame_keepers(fns: list[FnLive], closed: frozenset[int] | set[int] | None = None) -> set[int]:
    """The functions whose exits still write SP and X29 back to ``NxCpu``: every one where the
    program makes a direct tail call that does not surely leave with its caller's SP and X30
    (then the callee's return, normal as it looks to the callee, goes somewhere its caller's
    caller does not expect, which re-enters a frame from NxCpu), and the functions it reaches
    by direct tail calls; every function an indirect jump may reach where such a chain, or any
    function's unproven register state, meets one (its target unknown).  See ``frame_stores``.

    Where the program's closed functions are known (``closed``: ``analysis.callers``, entered
    only by direct calls and tail calls from lifted code), an indirect jump reaches only the
    others (the open ones: an address some code builds or data holds, the runtime's entries) or
    a label inside a function, which the run loop enters in the frame's twin (its returns store
    SP and X29: ``NX_RF``); so such a jump keeps the open functions' lists and those of the
    functions they tail-call, not everyone's.  Without it (loaded code, trace builds) every
    function keeps them.  In busybox 38 functions (glibc's vfprintf among them) jump through a
    register with an X30 not surely their entry's, which made every return of the program store
    SP, and X29 where it moved it (busybox sort: 757.1 -> 727.4 M instructions)."""
    by_entry = {f.entry: f for f in fns}
    roots = [t for f in fns for t, ok in zip(f.tail_target, f.tail_lr) if not ok] + [a for f in fns for a in f.lr_roots]
    opened = False  # the open functions are roots (an indirect jump with an unexpected X30)
    if any(not f.frame_ok or f.jump_abnormal for f in fns):
        if closed is None:
            return set(by_entry)
        opened = True
        roots += [e for e in by_entry if e not in closed]
        roots += [t for f in fns if not f.frame_ok for t in f.tail_target]
    keep: set[int] = set()
    while roots:
        e = roots.pop()
        if e in keep:
            continue
        keep.add(e)
        f = by_entry.get(e)
        if f is None:
            continue
        if f.jumps_out and not opened:
            if closed is None:
                return set(by_entry)
            opened = True
            roots += [e for e in by_entry if e not in closed]
        roots += f.tail_target
    return keep


def narrow_frames(fns: list[FnLive], summ: dict[int, Summary], closed: frozenset[int] | set[int]) -> int:
    """``Summary.keep_frame`` again with the program's closed functions known (``frame_keepers``
    with ``closed``); returns how many functions no longer keep their frame stores."""
    keep = frame_keepers(fns, closed)
    n = 0
    for e, sm in summ.items():
        if sm.keep_frame and e not in keep:
            sm.keep_frame = False
            n += 1
    return n


# what a return hands back only where a caller reads it (result_uses): X1, V0-V3 and the
# platform register X18 (a scratch register to Linux; a shadow call stack's pointer, which every
# callee's prologue reads, stays live through its callers' liveness like any other); X0 is the
# C result, always handed back
NARROWED = L.RET_LIVE & ~X0


def result_uses(fns: list[FnLive], summ: dict[int, Summary], closed: frozenset[int] | set[int]) -> int:
    """Fill ``Summary.ret_uses`` of each function of ``closed`` (entered only by direct calls
    and tail calls from ``fns``: ``analysis.callers``): the results (X1, V0-V3, X18) live after
    some call site of it, or that a function tail-calling it hands back.  A least fixed point: a
    caller's liveness after its call sites depends on what its own callers read of its results
    (its returns read only those), so each function's sites are solved again while the
    results its callers read grow.  A result nobody reads was live after a call only because
    the caller's own return might hand it on: zstd's ZSTD_decompressSequences reloaded X1 after
    its calls and stored it at its returns for callers that never read it.  (V0 stays live where
    a later callee's summary reads V0-V7: a variadic callee's prologue saves them, an unknown
    callee may read them; see ``uses_roots``.)  Returns the number of functions narrowed.  An
    open function (an address taken, an entry of the runtime, a lift on miss's caller) hands
    back every result, as before."""
    by_entry = {f.entry: f for f in fns}
    closed = {e for e in closed if e in summ and e in by_entry}
    if not closed:
        return 0
    for e in closed:
        summ[e].ret_uses = L.RET_LIVE & ~NARROWED
    # callers before callees (reverse postorder of the call graph), so most are solved once
    order: list[int] = []
    seen: set[int] = set()
    for root in by_entry:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(by_entry[root].callees))]
        while stack:
            e, it = stack[-1]
            g = next(it, None)
            if g is None:
                stack.pop()
                order.append(e)
            elif g in by_entry and g not in seen:
                seen.add(g)
                stack.append((g, iter(by_entry[g].callees)))
    work = list(order)  # popped from the end: callers first
    queued = set(work)
    while work:
        h = work.pop()
        queued.discard(h)
        f = by_entry[h]
        grown: list[int] = []
        live = site_liveness(f, summ)
        for k, g in enumerate(f.site_target):
            if g in closed:
                r = summ[g].ret_uses | live[k] & NARROWED
                if r != summ[g].ret_uses:
                    summ[g].ret_uses = r
                    grown.append(g)
        for g in f.tail_target:
            if g in closed:
                r = summ[g].ret_uses | summ[h].ret_uses & NARROWED
                if r != summ[g].ret_uses:
                    summ[g].ret_uses = r
                    grown.append(g)
        for g in grown:
            if g not in queued:
                queued.add(g)
                work.append(g)
    return sum(1 for e in closed if summ[e].ret_uses != L.RET_LIVE)


# Go: the registers a return may hand back as results (ABIInternal's R0-R15, F0-F15); X0 is the C
# result, always handed back
GO_RESULTS = L.GO_RET_HANDED & L._mask(xs=range(1, 16), vs=range(16))
# Go: what a return of the runtime's assembly may leave out where no caller reads it: the
# general registers but X0 (the C result), X18 (reserved), g, X29, X30 and SP, and every vector
# register (NZCV stay: Go code never reads them after a call, but they are no bit here)
GO_ASM_RESULTS = L._mask(xs=[*range(1, 18), *range(19, 28)], vs=range(32))


def _go_asm_narrowable(f: FnLive) -> bool:
    """Whether a function of the runtime's assembly (``hands`` ALL: its kind has no results
    from a signature) may hand back only what its callers read: its MODS are what its code
    writes (no documented convention caps them, ``FunctionPlan.mods_cap``: a caller keeps in
    its locals what such a function saves and restores, so its returns must put back every
    NxCpu slot its callees overwrote), it leaves only by returns and direct tail calls with the
    entry's SP and X30 (no jump through a register, no table, no SVC: a return to somewhere
    else reads what NxCpu holds), and its chunks are known (``site_liveness``)."""
    return (
        f.go
        and f.hands == L.ALL
        and f.mods_cap == L.ALL
        and not f.opaque
        and not f.other_exit
        and bool(f.gen)
        and all(f.ret_normal)
        and len(f.tail_normal) == len(f.tail_target)
        and all(f.tail_normal)
    )


# Go: every register a result may take (ABIInternal's R0-R15, F0-F15)
GO_ALL_RESULTS = L._mask(xs=range(16), vs=range(16))


def go_produced(fns: list[FnLive], summ: dict[int, Summary], known: dict[int, int] | None = None) -> dict[int, int]:
    """For each function compiled from Go (``FnLive.hands`` ``GO_RET_HANDED``, set from the
    pclntab's kinds), the registers of ``GO_ALL_RESULTS`` that hold a value it produced at every
    one of its returns: a bound on its results, whatever enters it (a closure call, a method
    value, ``reflect``).  Go's compiler puts each result in its register before the return on
    every path, and a value in a register at a return comes from an argument (the function's
    ``uses_cap``: its stack check's spills), from its own write, or from a call: a callee's
    result, or a register the callee leaves alone (its MODS: ``runtime.gcWriteBarrier``'s
    convention, ``duffzero``'s); every other register a call may change holds nothing a caller
    may read (ABIInternal keeps no register across a call).  So per function a must-analysis
    over its chunks (the intersection over paths, each write adding, each call keeping what the
    callee leaves alone and adding its bound), the bound the intersection over its returns and
    direct tail calls, and over the call graph the greatest fixed point (every bound starts
    full and only shrinks: each step's bound still holds the true results, so every one does).
    The runtime's assembly, functions without chunk data and those that leave through a
    register or a table get every register, unless ``known`` bounds them (functions of the
    assembly, by what their callers read: ``go_result_uses``).  A bound that leaves results
    out lets an open function (a closure, a method value, whose callers are unknown) hand back
    fewer."""
    full = GO_ALL_RESULTS
    known = known or {}
    by_entry = {f.entry: f for f in fns}
    cand = {
        f.entry
        for f in fns
        if f.go
        and f.hands == L.GO_RET_HANDED
        and f.entry in summ
        and f.gen
        and len(f.gen) == len(f.succs)
        and not f.opaque
        and not f.jumps_out
        and f.entry_index >= 0
    }
    bound = {e: known.get(e, by_entry[e].hands) & full for e in by_entry} | dict.fromkeys(cand, full)
    callers: dict[int, set[int]] = {}
    for e in cand:
        for g in [*by_entry[e].site_target, *by_entry[e].tail_target]:
            if g is not None:
                callers.setdefault(g, set()).add(e)
    preds_of = {e: _preds(by_entry[e]) for e in cand}

    def after_call(d: int, g: int | None) -> int:
        if g is None or g not in summ:
            return full
        return d & ~summ[g].mods | bound.get(g, full) & summ[g].mods

    def solve(f: FnLive) -> int:
        n = len(f.gen)
        preds = preds_of[f.entry]
        d_out = [full] * n
        args = f.uses_cap & full
        changed = True
        while changed:
            changed = False
            for i in range(n):
                d = args if i == f.entry_index else full
                for p in preds[i]:
                    d &= d_out[p]
                d |= f.writes[i] & full
                k = f.site[i]
                if k >= 0:
                    d = after_call(d, f.site_target[k])
                if d != d_out[i]:
                    d_out[i] = d
                    changed = True
        # (d_out is the greatest fixed point: it starts full and only shrinks)
        out = full
        for i, r in enumerate(f.ret):
            if r >= 0:
                out &= d_out[i]
        for g, c in zip(f.tail_target, f.tail_chunk):
            out &= after_call(d_out[c], g)
        return out

    work = sorted(cand)
    queued = set(work)
    while work:
        e = work.pop()
        queued.discard(e)
        b = solve(by_entry[e]) & bound[e]
        if b != bound[e]:
            bound[e] = b
            for c in callers.get(e, ()):
                if c not in queued:
                    queued.add(c)
                    work.append(c)
    return bound


def go_read_after(f: FnLive, summ: dict[int, Summary], rets: int) -> list[int]:
    """For a function compiled from Go, the registers each call site's callee may have to hand
    back: read after the call by its own code or a later callee (its USES: an argument may be an
    earlier callee's result passed on in its register) before they are written, or handed on by
    its returns (``rets``), and kept so far: a later call ends what its callee may change (its
    MODS, every register for an unknown callee), since the compiler keeps nothing across a call
    that it treats as changing it.  ``site_liveness`` keeps them live through such calls: after
    a call in ``bufio.(*Writer).Write`` X1-X15 and V0-V15 stayed live past later calls for a
    closure call further on.  Exits that are no return keep their worst case."""
    n = len(f.gen)
    if n != len(f.succs) or n == 0 or len(f.out_noret) != n:
        return [L.ALL] * len(f.site_target)
    out_fixed = list(f.out_fixed)
    for i, r in enumerate(f.ret):
        if r >= 0:
            out_fixed[i] = f.out_noret[i] | rets
    for g, c in zip(f.tail_target, f.tail_chunk):  # (a tail callee reads its arguments too)
        out_fixed[c] |= rets | (summ[g].uses if g in summ else f.unknown_uses)
    kill = list(f.kill)
    call_gen = [0] * n
    for i, k in enumerate(f.site):
        if k >= 0:
            g = f.site_target[k]
            known = g is not None and g in summ
            kill[i] |= summ[g].mods if known else L.ALL
            # (its arguments may be an earlier callee's results, passed on in their registers)
            call_gen[i] = summ[g].uses if known else f.unknown_uses
    live_out = _solve_backward(f.gen, kill, f.succs, out_fixed, [0] * n, call_gen)
    result = [L.ALL] * len(f.site_target)
    for i, k in enumerate(f.site):
        if k >= 0:
            result[k] = live_out[i]
    return result


def go_result_uses(
    fns: list[FnLive], summ: dict[int, Summary], closed: frozenset[int] | set[int], floors: dict[int, int] | None = None
) -> int:
    """Narrow what the returns of each closed function compiled from Go hand back
    (``FnLive.hands``: its results R0-R15/F0-F15, g, X29 and SP, ``liveness.GO_RET_HANDED``) to
    the results some caller reads: those live after one of its call sites, or that a function
    tail-calling it hands back (``result_uses``' least fixed point, with Go's liveness: a
    caller's call sites are solved with its own returns' ``hands``).  Go's ABIInternal returns
    results in R0.. and F0.. in order and keeps no register across a call, so a register a
    caller reads after the call before writing it is a result of the callee; one no caller
    reads was stored at every return and loaded at the entry for nobody (``Parser.rune``
    returns one rune and stored X1-X6).  Open functions (an address taken) hand back every
    result they produce (``go_produced``, which caps the others too).  A compiled caller's
    reads after a call are ``go_read_after``'s.  ``floors``: methods entered only by direct
    calls, interfaces and ``reflect`` -> the result registers of their types
    (``analysis.go_args.method_results``), which those callers read.

    The runtime's assembly keeps its own conventions, so its returns hand back every register
    (``hands`` ALL), unless the function is closed and ``_go_asm_narrowable``: then they hand
    back what its callers read after their calls (``GO_ASM_RESULTS`` live there, whatever the
    convention: a caller that keeps a register across it reads it after the call, unless the
    callee's MODS leave it out, and then the callee's returns need not store it).
    ``runtime.memmove`` stored X1-X17 and X27 at its returns and loaded them at its entry for
    callers that read nothing after it.  What those callers read bounds what the assembly
    produces in the next pass (``go_produced``'s ``known``), up to ``GO_RESULT_ROUNDS``: each
    pass starts from the last one's over-approximation, so each is sound.  Returns the number
    narrowed (capped or narrowed ``hands``)."""
    floors = floors or {}
    initial = {f.entry: f.hands for f in fns}
    by_entry = {f.entry: f for f in fns}
    asm = {e for e in closed if e in initial and e in summ and e not in floors and _go_asm_narrowable(by_entry[e])}
    known: dict[int, int] = {}
    n = 0
    for _ in range(GO_RESULT_ROUNDS):
        n = _go_result_pass(fns, summ, closed, floors, initial, known)
        now = {e: f.hands & GO_ALL_RESULTS for f in fns if (e := f.entry) in asm}
        if now == known:
            break
        known = now
    return n


# rounds of go_result_uses at most: each bounds the assembly's results by what the last one's
# callers read (shfmt: the second changes nothing)
GO_RESULT_ROUNDS = 4


def _go_result_pass(
    fns: list[FnLive], summ: dict[int, Summary], closed, floors: dict[int, int], initial: dict[int, int], known: dict[int, int]
) -> int:
    """One pass of ``go_result_uses`` from the functions' first ``hands`` (``initial``), the
    assembly's results bounded by ``known``."""
    for f in fns:
        f.hands = initial[f.entry]
    by_entry = {f.entry: f for f in fns}
    compiled = {f.entry for f in fns if f.go and f.hands == L.GO_RET_HANDED}
    narrow = {
        e for e in {*closed, *floors} if e in by_entry and by_entry[e].go and by_entry[e].hands == L.GO_RET_HANDED and e in summ
    }
    asm = {e for e in closed if e in by_entry and e in summ and e not in floors and _go_asm_narrowable(by_entry[e])}
    # what each function compiled from Go can hand back at all (go_produced), open ones too
    cap = {e: b | ~GO_ALL_RESULTS | L.xbit(0) for e, b in go_produced(fns, summ, known).items()}
    capped = 0
    for e, c in cap.items():
        if e not in narrow and by_entry[e].hands & ~c:
            by_entry[e].hands &= c
            capped += 1
    if not narrow and not asm:
        return capped
    bits = dict.fromkeys(narrow, GO_RESULTS) | dict.fromkeys(asm, GO_ASM_RESULTS)
    for e in narrow:
        bits[e] &= cap.get(e, L.ALL)
        by_entry[e].hands = L.GO_RET_HANDED & ~GO_RESULTS | floors.get(e, 0) & bits[e]
    for e in asm:
        by_entry[e].hands = L.ALL & ~GO_ASM_RESULTS
    narrow |= asm
    work = [f.entry for f in fns if f.go]
    queued = set(work)
    while work:
        h = work.pop()
        queued.discard(h)
        f = by_entry[h]
        grown: list[int] = []
        if any(g in narrow for g in f.site_target):
            live = go_read_after(f, summ, f.hands) if h in compiled else site_liveness(f, summ, f.hands)
            for k, g in enumerate(f.site_target):
                if g in narrow:
                    r = by_entry[g].hands | live[k] & bits[g]
                    if r != by_entry[g].hands:
                        by_entry[g].hands = r
                        grown.append(g)
        for g in f.tail_target:
            if g in narrow:
                r = by_entry[g].hands | f.hands & bits[g]
                if r != by_entry[g].hands:
                    by_entry[g].hands = r
                    grown.append(g)
        for g in grown:  # its own call sites' liveness grows with what its returns hand on
            if g not in queued:
                queued.add(g)
                work.append(g)
    return capped + sum(1 for e in narrow if by_entry[e].hands != (L.ALL if e in asm else L.GO_RET_HANDED))


def uses_roots(fns: list[FnLive], summ: dict[int, Summary], entry: int, bit: int) -> list[list[int]]:
    """Why ``entry``'s summary reads ``bit``: for each function whose own facts read it
    (``base_uses``: its instructions, or a call through a register, a jump out, an SVC, whose
    reads are the worst case), the chain of entries ``[entry, ..., that function]`` along which
    the register stays open (``site_open``/``tail_open``) and each callee's summary holds it.
    Breadth first, so each chain is a shortest one.  A diagnostic (bench/uses_roots.py): Lua's
    luaG_traceexec reads V0-V7 through luaD_hook's hook pointer, luaD_throw's longjmp and
    luaD_growstack's call of the variadic luaG_runerror, whose prologue saves Q0-Q7."""
    by_entry = {f.entry: f for f in fns}
    prev: dict[int, int | None] = {entry: None}
    order = [entry]
    roots: list[list[int]] = []
    for e in order:  # grows while it is read: a breadth-first queue
        f = by_entry.get(e)
        if f is None:
            continue
        if f.base_uses & bit:
            chain, x = [], e
            while x is not None:
                chain.append(x)
                x = prev[x]
            roots.append(chain[::-1])
        for g, opened in [*zip(f.site_target, f.site_open), *zip(f.tail_target, f.tail_open)]:
            if g is not None and g not in prev and opened & bit and g in summ and summ[g].uses & bit:
                prev[g] = e
                order.append(g)
    return roots


def _tail_reads_flags(g: int, summ: dict[int, Summary]) -> bool:
    """Whether a direct tail call of ``g`` must hand it NZCV: it may read them at its entry (an
    unknown one may: a function lifted without a summary)."""
    return summ[g].flags_in if g in summ else True


def _own_mods(f: FnLive) -> int:
    """MODS of ``f`` before its direct callees': every caller-saved register where it calls or
    jumps through a register, traps or makes a system call, else what its own C writes."""
    if f.opaque:
        return _clobbers(f)
    return f.writes_all | (_clobbers(f) if f.calls_unknown else 0)


def _clobbers(f: FnLive) -> int:
    """What a callee that is not summarised may change: Go code keeps no register across a call
    (its stack growth moves SP and X29 too)."""
    return L.ALL if f.go else L.CALL_CLOBBERS


def _captures(f: FnLive) -> bool:
    """Whether ``f`` reads X19-X28/D8-D15 itself (``Summary.captures``: setjmp).  In Go code
    they are no callee-saved registers and every function reads X28, the goroutine."""
    return not f.go and bool(f.base_uses & L.ELIDED_SAVES)


def _preds(f: FnLive) -> list[list[int]]:
    """Each chunk's predecessors (indices), from ``f.succs``."""
    preds: list[list[int]] = [[] for _ in f.succs]
    for i, ss in enumerate(f.succs):
        for t in ss:
            preds[t].append(i)
    return preds


def write_through(f: FnLive, summ: dict[int, Summary]) -> int:
    """The caller-saved registers ``f`` keeps current in ``NxCpu``: stored where it writes them
    (``@@WT@@``), so that no call site stores them and its C local dies after its last own read.

    A register live only because callees may read it stays live in a C local from each write to
    every call that may read it: Lua's luaV_execute wrote X2-X5 and V0-V2 as temporaries in its
    handlers, and ~90 call sites (most on its trap path: luaG_traceexec, whose callees reach
    luaD_throw and setjmp) read them, so they lived across the whole dispatch loop next to the
    ~12 registers the interpreter itself keeps, and clang spilled and shuffled at every dispatch
    (a third of the loop's instructions).  A register is written through where the call sites
    that would store it for a callee are at least as many as the instructions that write it:
    each write then costs one store, each such call site one store less.  (Counted statically:
    a hot loop's write may cost more than a cold call site saves; Lua's V0 and V1, written in
    its float handlers, stay in locals.)  Neither counts on a cold path (lift/cold.py): its
    call sites' stores run only there, and so do the cold exit's of what it reads
    (JsonCpp's ``CZString::operator<`` wrote X9 through at each of its 3.64 M calls for its
    throw path's call)."""
    cand = 0
    writes: dict[int, int] = {}
    for a, m in f.wt_sites.items():
        cand |= m
        if a in f.cold_addrs:
            continue
        for b in _bits(m):
            writes[b] = writes.get(b, 0) + 1
    cand &= ~f.wt_unsafe
    if not cand:
        return 0
    unknown = f.unknown_uses
    reads: dict[int, int] = {}
    for k, g in enumerate(f.site_target):
        if k in f.cold_sites:
            continue
        uses = (summ[g].uses if g is not None and g in summ else unknown) & cand
        for b in _bits(uses):
            reads[b] = reads.get(b, 0) + 1
    out = 0
    for b, n in reads.items():
        if n >= writes.get(b, 0):
            out |= b
    return out


def site_liveness(f: FnLive, summ: dict[int, Summary], rets: int | None = None, cold: dict[int, int] | None = None) -> list[int]:
    """The registers live after each call site of ``f``, solved again with each direct
    callee's summary (its USES) in place of the worst case an unknown callee may read
    (``liveness.CALL_USES``, all the lifter knew of it).  A caller-saved register the callee
    may change and something after the call reads is stored before the call and reloaded
    after it; as the lifter saw it, every later call site read X0-X8 and V0-V7, so after any
    call these stayed live up to the next one: SQLite's call sites reloaded 5.2 registers each,
    X1-X8 and V0-V3 that no later callee reads.  An indirect callee, a jump out, a table's miss
    and a return read what they read before.  ``f.site_live`` (the lifter's) where ``f`` has
    no chunk data.  ``rets``: what a return and a direct tail call hand on, in place of the
    callers' reads (Go code: ``go_lists``).  ``cold``: filled with what is live into each of
    ``f.cold_exits``' chunks."""
    n = len(f.gen)
    if n != len(f.succs) or n == 0:
        if cold is not None:
            cold.update((i, L.ALL) for i in f.cold_exits)
        return list(f.site_live) if rets is None or not f.go else [L.ALL] * len(f.site_live)
    unknown = f.unknown_uses
    call_gen = [0] * n
    out_fixed = list(f.out_fixed)
    for i, k in enumerate(f.site):
        if k >= 0:
            g = f.site_target[k]
            call_gen[i] = summ[g].uses if g is not None and g in summ else unknown
    # (a BLR's guessed direct calls read no more than its unknown callee: summarize)
    alts = _alts(f)
    # a return reads the results its callers read (Summary.ret_uses; all where one is unknown)
    ret_uses = summ[f.entry].ret_uses if f.entry in summ else L.RET_LIVE
    if rets is not None:
        ret_uses = rets
    if (ret_uses != L.RET_LIVE or rets is not None) and len(f.out_noret) == n:
        for i, r in enumerate(f.ret):
            if r >= 0:
                out_fixed[i] = f.out_noret[i] | ret_uses
    # Go: a call passes X0, X1, X30, SP and X29 as C arguments, which its callee's returns
    # may store as they came (go_lists): they must hold their values at every call
    passed = ARGS if f.go else 0
    for i, k in enumerate(f.site):
        if k >= 0:
            call_gen[i] |= passed
    for g, c in zip(f.tail_target, f.tail_chunk):
        out_fixed[c] |= (summ[g].uses if g in summ else unknown) | ret_uses | passed
    site = f.site
    through = [call_gen[i] if site[i] >= 0 else 0 for i in range(n)]
    live_out = _solve_backward(f.gen, f.kill, f.succs, out_fixed, through, [0] * n)
    if cold is not None:  # (what is live at the start of each cold exit's chunk)
        for i in f.cold_exits:
            cold[i] = f.gen[i] | ((live_out[i] | through[i]) & ~f.kill[i])
        if f.cold_pads:  # at a landing pad: what its own code reads (see site_lists)
            own = _solve_backward(f.gen, f.kill, f.succs, out_fixed, [0] * n, [0] * n)
            for i in f.cold_pads:
                cold[i] = f.gen[i] | (own[i] & ~f.kill[i])
    result = list(f.site_live)
    for i, k in enumerate(site):
        if k >= 0:
            result[k] = live_out[i]
            for j in alts.get(k, ()):
                result[j] = live_out[i]
    return result


def _solve_backward(
    gen: list[int], kill: list[int], succs: list, out_fixed: list[int], through: list[int], after: list[int]
) -> list[int]:
    """Backward liveness over one function's chunks to its fixed point: a chunk's live-in is
    ``gen | after | ((out | through) & ~kill)`` (``through``: what a call reads that the chunk's
    kill does not end, as Go's passed registers; ``after``: what its callee reads past the kill),
    its live-out ``out_fixed`` and its successors' live-ins.  Returns the live-outs."""
    n = len(gen)
    live_in = [0] * n
    live_out = [0] * n
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            out = out_fixed[i]
            for t in succs[i]:
                out |= live_in[t]
            new_in = gen[i] | after[i] | ((out | through[i]) & ~kill[i])
            if out != live_out[i] or new_in != live_in[i]:
                live_out[i], live_in[i] = out, new_in
                changed = True
    return live_out


def _alts(f: FnLive) -> dict[int, list[int]]:
    """Call site -> its guessed direct calls (``FnLive.site_alt``)."""
    out: dict[int, list[int]] = {}
    for j, k in enumerate(f.site_alt):
        if k >= 0:
            out.setdefault(k, []).append(j)
    return out


def _bits(m: int) -> list[int]:
    out = []
    while m:
        low = m & -m
        out.append(low)
        m ^= low
    return out


def clobbered(results_only: bool) -> int:
    """The registers whose ``NxCpu`` slots a call may leave changed, for the lists of a caller.
    With AAPCS64 trusted (``results_only``) V8-V15 count as callee-saved, like X19-X28: a caller
    keeps them in its locals across a call (a low half the callee kept, an upper half AAPCS64
    leaves undefined), so a call site neither stores them for the callee to change nor reloads
    them, and a return stores them only where its own call sites overwrote their slots (a callee
    read them: setjmp).  Their epilogue reloads (``ldr d8``) are then dead code and their saves
    droppable (``recompiler.elide_saves``): sort's key compare saved and restored D8 through
    NxCpu and its frame at every comparison, for a numeric path it never took."""
    return L.CALL_CLOBBERS & ~L.V_PRESERVED_LOW_MASK if results_only else L.CALL_CLOBBERS


def _clob(f: FnLive, results_only: bool) -> int:
    """``clobbered`` for ``f``'s code: every register for Go's (``go_lists``)."""
    return L.ALL if f.go else clobbered(results_only)


def site_lists(
    f: FnLive, summ: dict[int, Summary], results_only: bool = False, wt: int = 0
) -> tuple[list[int], list[int], list[int], list[int], list[int], dict[int, int]]:
    """(stores, reloads) of each call site and the stores of each return: a call stores what
    its callee may read and what is live after it that the callee may change, a return the
    caller-saved registers (and the callee-saved ones its own calls overwrote), each only where
    the local may differ from ``NxCpu`` (forward "dirty" pass).  Last, for each call site, the
    callee-saved registers live after it that its locals alone hold (not stored: the callee
    does not read them): a frame re-entered there from ``NxCpu`` would not find them.  ``wt``:
    the registers written through (``write_through``), never dirty."""
    n = len(f.writes)
    preds = _preds(f)
    if f.go:
        results_only = False
    clob = _clob(f, results_only)
    unknown = Summary(f.unknown_uses, _clobbers(f))
    callee = [summ.get(g, unknown) if g is not None else unknown for g in f.site_target]
    cold_live = {i: L.ALL for i in f.cold_exits}
    site_live = site_liveness(f, summ, cold=cold_live) if summ else f.site_live
    store_live, not_reloaded, unsaved = site_live, X0 | X30, L.ELIDED_SAVES
    if f.go:
        site_live, store_live, not_reloaded, unsaved = go_lists(f, summ)
    # AAPCS64 trusted (results_only): of the caller-saved registers a callee changes, a caller
    # may read after the call only the results (RET_LIVE); the others it keeps in its C locals
    # across the call, neither stored before it nor reloaded after it.  A conforming caller
    # reads no such register before writing it (its value is undefined), a caller the guest
    # compiler knew the callee leaves it alone (-fipa-ra), or a helper that restores it (a TLS
    # descriptor resolver), finds its own value in the local, which is what the reload gave:
    # a return stores none of them (_ret_mask), so its slot held the caller's store or a
    # deeper call site's.  Liveness still sees reads of them where a later unknown callee is
    # assumed to read every argument register: SQLite's call sites reloaded X1-X8 and V0-V7
    # (5.2 registers a site) for the indirect calls behind its allocator and VFS.
    keep = clob & ~L.RET_LIVE if results_only else 0
    n_sites, n_rets = len(f.site_target), max(f.ret, default=-1) + 1
    stores = [0] * n_sites
    elided = [0] * n_sites
    # X0 after a call is the callee's result (NxRet.x0) and X30 its return address (the local
    # already holds it: a callee that came back here came back through it), never reloaded
    reloads = [site_live[k] & callee[k].mods & clob & ~keep & ~not_reloaded for k in range(n_sites)]
    # what a call passes in registers: X0, X1, X30, SP and X29, to any callee (an unknown one, BLR,
    # is entered with them by its inline cache or nx_call_ind; a host function bound there finds
    # them in NxCpu, where nx_call_ind stores them first).  Where the caller reloads X1 after an
    # unknown callee, X1 is stored as well: that callee's return stores X1 only if it may write X1
    # (_ret_mask), so the caller (a helper with its own convention keeps X1) must find its own
    # value there.  Where X1 is not reloaded after it, it is not stored for the callee to read:
    # SQLite's and sort's comparator calls stored X1 at each comparison.
    passed = [ARGS if g is not None else ARGS & ~X1 for g in f.site_target]
    alts = _alts(f)
    ret_stores = [0] * n_rets
    # a cold exit (lift/cold.py) stores what is live into its chunk and dirty before it; what
    # it passes (X0, X1, X30, SP, X29) the twin gets as arguments.  A landing pad is no
    # successor of its calls here (the callee-saved registers there are the locals' at the
    # call, which may be dirty, and the pass takes none for dirty there): one stores what the
    # pad's own code reads, dirty or not, and its call sites store what they stored in F_x (its
    # callees read the rest from NxCpu, there as here).  Everything live its callees may read
    # was up to 17 registers at each of TinyXML-2's XMLNode::ParseDeep's pads, kept live across
    # its calls for them (+1.5 M instructions)
    cold_stores = dict.fromkeys(f.cold_exits, 0)
    d_out = [0] * n
    changed = True
    while changed:
        changed = False
        for i in range(n):
            d = ARGS if i == f.entry_index else 0
            for p in preds[i]:
                d |= d_out[p]
            if i in cold_stores:
                cold_stores[i] = cold_live[i] & (L.ALL if i in f.cold_pads else d) & ~ARGS
            d |= f.writes[i] & ~wt
            k = f.site[i]
            if k >= 0:
                # a BLR's guessed direct calls (site_alt): each path stores its own list from
                # the same state; after them, dirty is what is dirty after any of them
                after = 0
                for j in alts.get(k, ()):
                    c = callee[j]
                    st = (c.uses & ~ARGS | (store_live[j] & c.mods & clob & ~keep) & ~passed[j]) & d
                    stores[j] = st
                    elided[j] = site_live[j] & unsaved & d & ~st
                    after |= (d & ~st & ~(c.mods & clob & ~keep)) | X0 | X30
                c = callee[k]
                st = (c.uses & ~ARGS | (store_live[k] & c.mods & clob & ~keep) & ~passed[k]) & d
                stores[k] = st
                elided[k] = site_live[k] & unsaved & d & ~st
                for j in alts.get(k, ()):  # (a frame resumed at the return address: any path's)
                    elided[k] |= elided[j]
                # after the call: what was stored is in NxCpu; a caller-saved register the
                # callee may change is either reloaded or dead (its NxCpu value is then as good
                # as the local's); a callee-saved one the callee leaves in NxCpu as it found it,
                # so a dirty one not stored stays dirty; so does a kept one (``keep``): where
                # the callee truly leaves it alone (-fipa-ra), its slot stays as it was (the
                # callee's own call sites store only registers it wrote, or the value it loaded
                # from that slot); where the callee changes it, AAPCS64 leaves its value
                # undefined, and the slot's is as good as the local's.  (Taken as dirty, every
                # later call site whose callee may read it stored it: QuickJS's rose from 0.9 to
                # 3.9 stores a site, X2-X7 for the indirect calls behind js_free and the like.)
                # X0 (the callee's result) and X30 (the return address) are in the locals only
                d = (d & ~st & ~(c.mods & clob & ~keep)) | X0 | X30 | after
            r = f.ret[i]
            if r >= 0:
                ret_stores[r] = d
            if d != d_out[i]:
                d_out[i] = d
                changed = True
    # A return stores the caller-saved registers it changed.  X19-X29 and SP its C caller keeps
    # in its locals (AAPCS64), so it stores them back only where it overwrote their NxCpu
    # slots itself: at a call site that stored its own values (a callee read them), or at a
    # write-back of everything (an SVC, an FPCR write).  Each function so leaves NxCpu's
    # callee-saved slots as it found them, which is what lets a caller keep a stored one
    # clean across the call; and where no callee reads them, their epilogue reloads are dead
    # code.  Frames re-entered from NxCpu after a return to somewhere else (docs/ARCHITECTURE.md)
    # still find their own values there: whatever captured the state that is being returned to
    # (setjmp, an unwinder's context, a context switch's SVC) read every callee-saved register,
    # so every caller on the way stored its dirty ones before calling down.
    # (not a call site on a cold path, lift/cold.py: no normal return follows one, nor its cold
    # exit's stores: only unwinding or a fatal error, after which a callee-saved slot of NxCpu
    # holds what the unwinder put there, as after any throw)
    kept = L.ALL & ~clob
    if not f.opaque:
        kept = 0
        for k, st in enumerate(stores):
            if k not in f.cold_sites:
                kept |= st & ~clob
    mask = _ret_mask(f, summ, results_only)
    # SP too, where the function moved it: it travels as an argument, so no call site stores it,
    # and a caller's frame re-entered from NxCpu after a return to somewhere else (nx_run, after
    # a longjmp landed below it) finds its SP there only through the returns of its callees
    # X29 as SP, where the function writes it (its frame record's restore): one that does not
    # keeps its caller's value, which also any NxCpu slot of it that it overwrote holds (an SVC's
    # write-back of its locals, an indirect call's nx_call_ind)
    # (place leaves both out again at an exit that surely goes back to the caller: frame_stores)
    moved = (SP | X29) & f.writes_all
    ret_stores = [m & (clob | kept & ~X29 | SP | moved) & mask for m in ret_stores]
    # A direct tail call is a call and the return in one: it stores what its callee reads and
    # what a return here would (X0 is the callee's result, X30 and X1 travel as arguments, but
    # X1 stays where a return would store it: the callee may leave it as it was).  SP and X29
    # travel as arguments too, but are stored where a return here would store them (the
    # function moved them): the callee's own return stores them only where the callee moves
    # them, and a slot this function overwrote (an indirect call stores its arguments there)
    # held its own frame's values (tests/recompiler/test_frame_pointer_arg.py)
    tail_stores = [
        (summ.get(g, unknown).uses | (clob | kept) & mask) & d_out[c] & ~X0 & ~X30 & ~SP & ~X29 | moved & d_out[c]
        for g, c in zip(f.tail_target, f.tail_chunk)
    ]
    return stores, reloads, ret_stores, elided, tail_stores, cold_stores


def go_lists(f: FnLive, summ: dict[int, Summary]) -> tuple[list[int], list[int], int, int]:
    """The liveness of Go code's call sites (``liveness.GO``), for ``site_lists``: (what is
    live after each call site for its own code, what is live after it for its returns too,
    the registers a call site never reloads, those a frame re-entered there from ``NxCpu``
    must find there).

    Go's ABIInternal keeps no register across a call: a callee may change any (MODS from its
    summary, every register where it is unknown or opaque), and its stack growth (morestack
    copies the goroutine's stack, then gogo resumes the function on the new one) moves SP and
    X29, so they are reloaded like any other register the callee may change.  A call site
    reloads what its own code reads after it (a return reads only X0, the C result); it stores
    what the callee reads and, where the callee may change it, what the code after it reads or
    a return may hand on unwritten (``liveness.GO_RET_HANDED``: the results, X28, X29, SP): a
    callee that leaves such a register alone must find the caller's value in ``NxCpu``, where
    the caller's return leaves it (it stores only what it changed since the call).  So after
    ``bl g; ldr x0, [sp, #8]; ldp x29, x30, [sp, #-8]; ret`` nothing but SP is reloaded.

    X30 is reloaded where the code after the call reads it (a morestack call's path back to
    the entry, which saves it again): a call may come back by gogo's jump to its return address
    with the LR gogo restored, which NxCpu holds; every return of Go code stores X30
    (``_ret_mask``), so after a normal return NxCpu holds the return address too.  X0, X1, X30,
    SP and X29 travel as C arguments, which the callee's returns may store as they came: they
    are live at every call (``site_liveness``).  A frame re-entered from ``NxCpu`` at a call
    site (a return to somewhere else: gogo, a goroutine switch) finds there every register
    live after it that is not such an argument (RESUME_CHECK, ``unsaved``): every call that
    may come back so reaches an indirect jump, whose MODS is every register."""
    live = site_liveness(f, summ, f.hands)
    if f.go_compiled:
        for k, g in enumerate(f.site_target):
            if g is not None and g in summ:
                live[k] &= ~(summ[g].mods & ~summ[g].hands & GO_UNDEFINED_AFTER)
    return live, live, X0, L.ALL & ~ARGS


# What code compiled from Go never reads after a call unless the callee hands it back: a
# register the callee may change and its returns do not store (``Summary.hands``) holds nothing
# after the call.  Not X0 (the C result), and not what gogo sets where a goroutine resumes at
# the call's return address (Go 1.19 runtime/asm_arm64.s ``gogo``: SP, X29, LR, R26, g; R0).
GO_UNDEFINED_AFTER = L.ALL & ~(X0 | X29 | X30 | SP | L.xbit(26) | L.xbit(28))


def go_hands(fns: list[FnLive], summ: dict[int, Summary]) -> None:
    """Give each Go function's summary what its returns store (``FnLive.hands``, as
    ``go_result_uses`` left it), for its compiled callers' lists (``go_lists``)."""
    for f in fns:
        if f.go and f.entry in summ:
            summ[f.entry].hands = f.hands


def _ret_mask(f: FnLive, summ: dict[int, Summary], results_only: bool = False) -> int:
    """What a return may store: not X0 (the C result) nor X30 (a caller knows it: the address
    it was returned to), and X1 (passed in, so perhaps not in NxCpu) only where a call of
    ``f`` may change it (its MODS), the only case in which a caller reloads it.

    ``results_only`` (whole-program builds, AAPCS64 trusted): of the caller-saved registers only
    what any return hands on (``liveness.EXIT_USES``: the results X0-X1 and V0-V3, X18, and
    V8-V15, whose low halves a callee keeps).  After a call a caller may use no other
    caller-saved register the callee changed (AAPCS64 leaves them undefined), though the liveness
    pass sees reads of them: the argument registers a later unknown callee is assumed to read.
    glibc's strcmp stored X1-X10 at each return, for callers that never look at them.  A host
    caller that inspects every register (the Unicorn harness's snippets) places without it.

    Go code stores X30 too (``go_lists``: a caller may reload it) and is never ``results_only``."""
    mods = summ[f.entry].mods if f.entry in summ else UNKNOWN.mods
    mask = ~X0 & (~X30 | (X30 if f.go else 0)) & (~X1 | (mods & X1))
    if f.go:
        return mask & (f.hands | X30)
    if not results_only:
        return mask
    # and of the results only those some caller reads (result_uses: every caller known)
    ret_uses = summ[f.entry].ret_uses if f.entry in summ else L.RET_LIVE
    return mask & (L.EXIT_USES | ~L.CALL_CLOBBERS) & ~(L.RET_LIVE & ~ret_uses)


def quiet_returns(f: FnLive, wt: int = 0, results_only: bool = False) -> list[int | None]:
    """Each return's store list on the paths from the entry that pass no call site, SVC or
    other write-back of the function's own values (``FnLive.event``; the C's ``_c`` stays 0 on
    them): the caller-saved registers written on the way, and no callee-saved register, whose
    ``NxCpu`` slots nothing on such a path overwrote.  None where every path to the return
    passes one.  A function's early exits (get_key's "the whole line is the key") so store
    what they changed, not what the function's other paths change."""
    n = len(f.writes)
    n_rets = max(f.ret, default=-1) + 1
    clob = _clob(f, results_only)
    out: list[int | None] = [None] * n_rets
    if f.entry_index < 0 or not any(f.event):
        return out
    preds = _preds(f)
    q_out: list[int | None] = [None] * n
    changed = True
    while changed:
        changed = False
        for i in range(n):
            d = ARGS if i == f.entry_index else None
            for p in preds[i]:
                if q_out[p] is not None:
                    d = (d or 0) | q_out[p]
            if d is not None:
                d |= f.writes[i] & ~wt
                r = f.ret[i]
                if r >= 0:
                    out[r] = d & clob
            new = None if d is None or f.event[i] else d
            if new != q_out[i]:
                q_out[i] = new
                changed = True
    return out


def place(text: "CText | str", fns: list[FnLive], summ: dict[int, Summary], results_only: bool = False) -> str:
    """The C of ``text`` (one or more lifted functions) with every slot (``template.py``) filled:
    each call site's and return's store or reload list, each write-through store, each save
    store kept or dropped.  A plain string has no slots."""
    if isinstance(text, str):
        return text
    lists = {}
    wts: dict[int, tuple[FnLive, int]] = {}
    for f in fns:
        wt = write_through(f, summ)
        wts[f.entry] = (f, wt)
        st, rl, rs, el, ts, cx = site_lists(f, summ, results_only, wt)
        mask = _ret_mask(f, summ, results_only)
        quiet = [None if q is None else q & mask for q in quiet_returns(f, wt, results_only)]
        # what some exit hands back: a return's or a direct tail call's list, every register
        # for an opaque function (an exit that stores every local: a jump out through a register)
        handed = L.ALL if f.opaque else 0
        for m in [*rs, *ts, *(q for q in quiet if q is not None)]:
            handed |= m
        lists[f.entry] = (f, st, rl, rs, quiet, el, ts, handed, cx)

    def one(slot: T.Slot) -> str:
        f, st, rl, rs, quiet, el, ts, handed, cx = lists[slot.entry]
        drop = results_only and f.frame_ok and f.entry in summ and not summ[f.entry].keep_frame
        k, kind = slot.k, slot.kind
        if kind == T.SAVE:  # a save's store (facts._mark_saves): dropped where nothing reads the slot back
            bit = 1 << k
            return "" if f.save_drop & bit and not handed & bit else slot.text
        if kind == T.WRITE_THROUGH:
            mask = f.wt_sites.get(k, 0) & wts[slot.entry][1]
            return " ".join(_store_statements(f, mask))
        if kind == T.STORE_CALL:
            return _stores(f, st[k])
        if kind == T.COLD_EXIT:
            return _stores(f, cx[k])
        if kind == T.STORE_TAIL:
            flags = "FLAGS_STORE;" if f.flags_local and _tail_reads_flags(f.tail_target[k], summ) else ""
            if not drop:
                return _stores(f, ts[k], f.ret_extra + flags)
            m, extra = frame_stores(f, ts[k], k < len(f.tail_normal) and f.tail_normal[k], tail=True)
            return _stores(f, m, f.ret_extra + flags + extra)
        if kind == T.NOTE_SP:  # call site k calls setjmp or the like: note this frame's SP
            g = f.site_target[k]
            return "_sjsp = sp; " if g is not None and g in summ and summ[g].captures else ""
        if kind == T.RET_CHECK:  # after call site k: its callee may come back elsewhere
            # (kept in a function with a jump table: without them clang allocated Lua's
            # luaV_execute worse, 10,451 -> 11,095 instructions, (%rsp) operands 1,444 -> 1,947,
            # and n-body ran 20 % more of them; an interpreter's loop calls few such callees)
            g = f.site_target[k]
            if results_only and not f.dispatch and g is not None and g in summ and summ[g].returns:
                return ""
            return f"if (UNLIKELY(_r.pc != {f.site_ret[k]:#x}ull)) NX_CATCH;"
        if kind == T.RESUME_CHECK:  # a resume point at call site k (wrap.py: the twin's switch)
            return "nx_elided_resume(s); NX_BACK; " if el[k] else ""
        if kind == T.STORE_RET:
            if drop:
                m, extra = frame_stores(f, rs[k], k < len(f.ret_normal) and f.ret_normal[k])
                full = _stores(f, m, f.ret_extra + extra)
            else:
                full = _stores(f, rs[k], f.ret_extra)
            if quiet[k] is None or quiet[k] == rs[k]:
                return full
            # _c: 0 on the paths that passed no write-back (clang threads the jump where it can)
            return f"if (_c) {full}; else {_stores(f, quiet[k], f.ret_extra)}"
        return _reloads(f, rl[k])

    return text.fill(one)


FRAME = SP | X29


def frame_stores(f: FnLive, mask: int, normal: bool, tail: bool = False) -> tuple[int, str]:
    """A return's or direct tail call's store list (``mask``) with SP and X29 as a whole-program
    build writes them back, and what it stores besides.  They travel as arguments, and a normal
    return (``FnLive.ret_normal``: SP and X30 surely the entry's) gives the caller back its own
    SP and X29 (AAPCS64), which a lifted caller holds in its locals: their ``NxCpu`` slots are
    read only by the runtime that entered the function (``nx_enter`` writes back the SP and X29
    it passed where the function came back to the X30 it passed), by a frame re-entered from
    ``NxCpu`` after a return to somewhere else (its twin's returns write them: ``NX_RF``, which
    only the twin defines; its tail exits are calls that write back what they passed where the
    callee came back normally: wrap's ``NX_TTAIL``), and after a return that is not surely
    normal (a longjmp: it writes them back, also where it did not move them, since the callees
    below it left a deeper frame's in ``NxCpu``).  So a normal exit of ``F_x`` leaves them out.
    Unless ``summ[f].keep_frame`` (``frame_keepers``): then ``place`` keeps the old lists."""
    if normal:
        return mask & ~FRAME, "" if tail or not f.twin else f"NX_RF(s->sp = {'sp' if f.sp_local else 'asp'}; s->x[29] = x29;)"
    extra = "s->sp = sp;" if f.sp_local and not f.w_sp else ""
    return mask | X29 | (SP if f.w_sp else 0), extra


def _store_statements(f: FnLive, mask: int) -> list[str]:
    out = [f"s->x[{r}] = x{r};" for r in f.w_regs if mask & L.xbit(r)]
    if f.w_sp and mask & L.xbit(L.SP_BIT):
        out.append("s->sp = sp;")
    elif f.go and mask & L.xbit(L.SP_BIT):
        # Go: a caller reloads SP after a call whose callee may move it (any unknown one), so a
        # return stores the SP it came in with too, where no call since may have stored another
        # (its own SP local, if it has one, still holds it: go_lists).  (strhash tail-calls
        # aeshashbody, which has no frame: its caller reloaded a stale SP.)
        out.append(f"s->sp = {'sp' if f.sp_local else 'asp'};")
    return out + [vcopy(f"s->v[{r}]", f"v{r}") for r in f.v_written if mask & L.vbit(r)]


def _stores(f: FnLive, mask: int, extra: str = "") -> str:
    return f"do {{ {' '.join(_store_statements(f, mask))} {extra} }} while (0)"


def reload_v(r: int) -> str:
    """V``r``'s reload after a call: a callee keeps only the low half of V8-V15 (AAPCS64), so
    those take back their upper lane alone, as a vector lane write (``NXV``, as lift/vector.py writes them)."""
    return f"NXV(NxV2u64, v{r})[1] = s->v[{r}].d[1];" if r in L.V_PRESERVED_LOW else vcopy(f"v{r}", f"s->v[{r}]")


def vcopy(dst: str, src: str) -> str:
    """A V register's copy between its C local and ``NxCpu`` as a 16-byte vector: as a union
    copy clang may give the local an integer type and move a Q register's loads and stores
    (emitter: LV128/SV128) in two general registers, 8 bytes at a time."""
    return f"NXV(NxV2u64, {dst}) = NXV(NxV2u64, {src});"


def _reloads(f: FnLive, mask: int) -> str:
    out = [f"x{r} = s->x[{r}];" for r in f.regs if mask & L.xbit(r)]
    if f.go and f.sp_local and mask & SP:  # (Go: a callee may move the stack)
        out.append("sp = s->sp;")
    out += [vcopy(f"v{r}", f"s->v[{r}]") if f.go else reload_v(r) for r in f.v_used if mask & L.vbit(r)]
    return f"do {{ {' '.join(out)} }} while (0)"
