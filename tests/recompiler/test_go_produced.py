"""What a Go function can hand back at all (interproc.go_produced) and the returns of the
runtime's assembly narrowed to what their callers read (interproc.go_result_uses).

Hand-made call graphs of ``FnLive`` records (the facts the lifter gives interproc): the bound
is the registers that hold a value the function produced at every return (its arguments, its
own writes, a callee's bound or a register the callee leaves alone), whatever calls it, so an
open function (a closure, a method value) hands back no more; a closed function of the
runtime's assembly hands back only what its callers read after their calls.  shfmt's
lifted run against qemu-aarch64 is tests/realprogs/test_go_static.py."""

from __future__ import annotations

from recompiler.lift import interproc as I
from recompiler.lift import liveness as L

X = L.xbit
ARG0 = L.GO_NOARG_INPUTS | X(0)  # a Go function handed one argument, X0 (its stack check's spill)


def _fn(
    entry: int, chunks: list[tuple[int, list[int], int | None, bool]], *, asm: bool = False, uses_cap: int = ARG0
) -> I.FnLive:
    """``chunks``: (what it writes, its successors, its call's callee or None for no call,
    whether it returns).  A call's callee -1 is an unknown one (a BLR)."""
    targets = [c for _w, _s, c, _r in chunks if c is not None]
    f = I.FnLive(entry, uses_cap, 0, False, sorted({c for c in targets if c >= 0}))
    f.go = True
    f.hands = L.ALL if asm else L.GO_RET_HANDED
    f.uses_cap = uses_cap
    f.entry_index = 0
    f.other_exit = False
    k = r = 0
    for w, succs, callee, ret in chunks:
        f.writes.append(w)
        f.writes_all |= w
        f.succs.append(succs)
        f.gen.append(0)
        f.kill.append(w)
        f.out_fixed.append(0)
        f.out_noret.append(0)
        f.event.append(False)
        if callee is not None:
            f.site.append(k)
            f.site_target.append(None if callee < 0 else callee)
            f.site_live.append(L.ALL)
            f.site_open.append(L.ALL)
            f.site_ret.append(0)
            k += 1
        else:
            f.site.append(-1)
        f.ret.append(r if ret else -1)
        if ret:
            f.ret_normal.append(True)
            r += 1
    return f


def _bound(fns: list[I.FnLive]) -> dict[int, int]:
    return {e: b & I.GO_ALL_RESULTS for e, b in I.go_produced(fns, I.summarize(fns)).items()}


def test_bound_is_the_intersection_over_returns() -> None:
    # two returns: one after writing X1, the other after writing X2: only the argument X0 is
    # produced at both
    f = _fn(0x100, [(0, [1, 2], None, False), (X(1), [], None, True), (X(2), [], None, True)])
    assert _bound([f]) == {0x100: X(0)}


def test_bound_through_a_call() -> None:
    # g writes X0 and X5; f writes X3, calls g, returns: X3 survives (g leaves it), X0 and X5
    # are g's bound; X1, which f never produced, is no result of f
    g = _fn(0x200, [(X(0) | X(5), [1], None, False), (0, [], None, True)])
    f = _fn(0x100, [(X(3), [1], 0x200, False), (0, [], None, True)])
    assert _bound([f, g])[0x100] == X(0) | X(3) | X(5)
    # a register g changes but does not produce (its bound leaves it out) is dropped
    g2 = _fn(0x200, [(X(0) | X(3), [1], 0x201, False), (0, [], None, True)])
    h = _fn(0x201, [(X(3), [1], None, False), (0, [], None, True)], uses_cap=L.GO_NOARG_INPUTS)
    f2 = _fn(0x100, [(X(4), [1], 0x200, False), (0, [], None, True)])
    b = _bound([f2, g2, h])
    assert b[0x201] == X(3)
    assert b[0x200] == X(0) | X(3)  # h changes only X3: g2's X0 survives its call
    assert b[0x100] == X(0) | X(3) | X(4)


def test_unknown_call_or_recursion() -> None:
    # after a call through a register every result may be the callee's
    f = _fn(0x100, [(X(3), [1], -1, False), (0, [], None, True)])
    assert _bound([f])[0x100] == I.GO_ALL_RESULTS
    # a function that calls itself: the greatest fixed point keeps what every path produces
    r = _fn(0x300, [(X(1), [1, 2], None, False), (0, [3], 0x300, False), (0, [], None, True), (X(2), [], None, True)])
    assert _bound([r])[0x300] == X(0) | X(1)


def test_open_function_hands_back_no_more_than_it_produces() -> None:
    # f is open (not closed): before, it handed back every result register
    f = _fn(0x100, [(X(0) | X(2), [1], None, False), (0, [], None, True)])
    fns = [f]
    I.go_result_uses(fns, I.summarize(fns), frozenset())
    assert f.hands & I.GO_ALL_RESULTS == X(0) | X(2)
    assert f.hands & ~I.GO_ALL_RESULTS == L.GO_RET_HANDED & ~I.GO_ALL_RESULTS


def test_closed_assembly_hands_back_what_callers_read() -> None:
    # memmove-like: an assembly leaf writing X3-X7 and V0; its only caller (closed, and no
    # caller reads its results) reads nothing after the call; another assembly function whose
    # caller reads X4 after the call hands X4
    leaf = _fn(0x200, [(sum(X(i) for i in range(3, 8)) | L.vbit(0), [1], None, False), (0, [], None, True)], asm=True)
    caller = _fn(0x100, [(X(0), [1], 0x200, False), (0, [], None, True)])
    fns = [caller, leaf]
    I.go_result_uses(fns, I.summarize(fns), frozenset({0x100, 0x200}))
    assert leaf.hands & I.GO_ASM_RESULTS == 0
    assert leaf.hands & ~I.GO_ASM_RESULTS == L.ALL & ~I.GO_ASM_RESULTS
    leaf2 = _fn(0x200, [(X(4) | X(5), [1], None, False), (0, [], None, True)], asm=True)
    caller2 = _fn(0x100, [(0, [1], 0x200, False), (0, [], None, True)])
    caller2.gen[1] = X(4)  # reads X4 after the call
    fns = [caller2, leaf2]
    I.go_result_uses(fns, I.summarize(fns), frozenset({0x100, 0x200}))
    assert leaf2.hands & I.GO_ASM_RESULTS == X(4)
    # open, or with a documented convention (MODS capped), it keeps every register
    for closed, cap in ((frozenset({0x100}), L.ALL), (frozenset({0x100, 0x200}), X(16))):
        leaf3 = _fn(0x200, [(X(4), [1], None, False), (0, [], None, True)], asm=True)
        leaf3.mods_cap = cap
        fns = [_fn(0x100, [(0, [1], 0x200, False), (0, [], None, True)]), leaf3]
        I.go_result_uses(fns, I.summarize(fns), closed)
        assert leaf3.hands == L.ALL


def test_declared_results_mask() -> None:
    # analysis.go_args.R0_HANDED (the runtime's assembly declared with at most R0 as result)
    # is every register but the ones interproc may leave out of an assembly function's returns
    from recompiler.analysis import go_args

    assert go_args.R0_HANDED == L.ALL & ~I.GO_ASM_RESULTS
    assert go_args.R0_HANDED & X(0) and go_args.R0_HANDED & X(28) and go_args.R0_HANDED & X(30)


def test_result_passed_on_as_an_argument() -> None:
    # shfmt -d: diff.Text passed myers.Diff's result (a slice, X0-X2) straight on to
    # write.Unified's arguments, with no instruction between the calls: the callee's X1 and X2
    # are read by the next callee (its USES), not by the caller's own code
    g = _fn(0x200, [(X(0) | X(1) | X(2), [1], None, False), (0, [], None, True)])
    h = _fn(0x300, [(0, [1], None, False), (0, [], None, True)], uses_cap=L.GO_NOARG_INPUTS | X(0) | X(1) | X(2))
    h.base_uses = h.uses_cap
    h.gen[0] = X(0) | X(1) | X(2)
    f = _fn(0x100, [(0, [1], 0x200, False), (0, [2], 0x300, False), (X(0), [], None, True)])
    fns = [f, g, h]
    I.go_result_uses(fns, I.summarize(fns), frozenset({0x100, 0x200, 0x300}))
    assert g.hands & I.GO_ALL_RESULTS == X(0) | X(1) | X(2)
    # what a later callee may change and nobody reads before is no result wanted of g: X3,
    # written by g and h, read after h
    g2 = _fn(0x200, [(X(0) | X(3), [1], None, False), (0, [], None, True)])
    h2 = _fn(0x300, [(X(3), [1], None, False), (0, [], None, True)])
    f2 = _fn(0x100, [(0, [1], 0x200, False), (0, [2], 0x300, False), (0, [3], None, False), (X(0), [], None, True)])
    f2.gen[2] = X(3)
    fns = [f2, g2, h2]
    I.go_result_uses(fns, I.summarize(fns), frozenset({0x100, 0x200, 0x300}))
    assert g2.hands & X(3) == 0
    assert h2.hands & X(3)


def test_result_passed_on_to_a_tail_callee() -> None:
    # the same through a direct tail call: f calls g, then jumps to h, which reads X1
    g = _fn(0x200, [(X(0) | X(1), [1], None, False), (0, [], None, True)])
    h = _fn(0x300, [(0, [1], None, False), (0, [], None, True)], uses_cap=L.GO_NOARG_INPUTS | X(0) | X(1))
    h.base_uses = h.uses_cap
    h.gen[0] = X(0) | X(1)
    f = _fn(0x100, [(0, [1], 0x200, False), (0, [], None, False)])
    f.callees = [0x200, 0x300]
    f.tail_target, f.tail_chunk, f.tail_normal, f.tail_open = [0x300], [1], [True], [L.ALL]
    fns = [f, g, h]
    I.go_result_uses(fns, I.summarize(fns), frozenset({0x100, 0x200, 0x300}))
    assert g.hands & X(1)


def test_compiled_caller_reloads_only_what_a_callee_hands_back() -> None:
    # f calls g (assembly declared with at most R0 as result: its returns store R0_HANDED, so
    # not X5, which it changes), then an unknown callee (a closure call: the worst case reads
    # X0-X15).  Liveness sees X5 read after g; compiled from Go, f reads nothing of g but what
    # g hands back (anything else is no value after the call), so X5 is neither stored before
    # nor reloaded after g's call; runtime assembly as caller keeps its lists
    from recompiler.analysis import go_args

    def graph(compiled: bool) -> tuple[I.FnLive, dict[int, I.Summary]]:
        g = _fn(0x200, [(X(0) | X(5), [1], None, False), (0, [], None, True)], asm=True)
        g.hands = go_args.R0_HANDED
        f = _fn(0x100, [(0, [1], 0x200, False), (0, [2], -1, False), (X(0), [], None, True)], asm=not compiled)
        f.go_compiled = compiled
        f.unknown_uses = L.GO_CALL_USES
        summ = I.summarize([f, g])
        I.go_hands([f, g], summ)
        return f, summ

    f, summ = graph(compiled=False)
    assert summ[0x200].mods & X(5)
    assert I.go_lists(f, summ)[0][0] & X(5)  # the worst case: X5 live after g
    f, summ = graph(compiled=True)
    live = I.go_lists(f, summ)[0]
    assert not live[0] & X(5)
    assert live[0] & X(0) and live[0] & L.xbit(L.SP_BIT)  # g's result, what gogo sets
    stores, reloads, *_ = I.site_lists(f, summ)
    assert not (stores[0] | reloads[0]) & X(5)
