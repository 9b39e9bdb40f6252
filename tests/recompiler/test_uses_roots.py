"""``interproc.uses_roots``: why a function's summary reads a register.

A call graph of hand-made facts (``FnLive``, as the lifter leaves them): the top function calls
one callee with V0 open (nothing wrote it before the call) and another after writing V0; the
first reaches a function that reads V0 itself through a call and through a tail call.  The roots
are the functions that read V0 themselves along open paths only, each with its shortest chain;
the summary of the top function (``summarize``) holds V0 exactly because of them."""

from __future__ import annotations

from recompiler.lift import interproc
from recompiler.lift import liveness as L

V0, X2 = L.vbit(0), L.xbit(2)
TOP, OPEN, CLOSED, LEAF, TAIL, OTHER = 0x100, 0x200, 0x300, 0x400, 0x500, 0x600


def _fn(entry: int, base: int, sites: list[tuple[int, int]] = (), tails: list[tuple[int, int]] = ()) -> interproc.FnLive:
    f = interproc.FnLive(entry, base, 0, False, sorted({g for g, _ in [*sites, *tails]}))
    f.site_target = [g for g, _ in sites]
    f.site_open = [o for _, o in sites]
    f.site_live = [0] * len(sites)
    f.tail_target = [g for g, _ in tails]
    f.tail_open = [o for _, o in tails]
    f.tail_flags_open = [False] * len(tails)
    return f


def _graph() -> list[interproc.FnLive]:
    return [
        # TOP: OPEN called with everything open, CLOSED after TOP wrote V0
        _fn(TOP, 0, [(OPEN, L.ALL), (CLOSED, L.ALL & ~V0)]),
        # OPEN: calls LEAF and OTHER with V0 open, tail-calls TAIL
        _fn(OPEN, 0, [(LEAF, L.ALL), (OTHER, L.ALL)], [(TAIL, L.ALL)]),
        _fn(CLOSED, V0),  # reads V0, but TOP wrote it first
        _fn(LEAF, V0 | X2),
        _fn(TAIL, V0),
        _fn(OTHER, X2),  # reads X2 only
    ]


def test_roots_follow_open_paths_only() -> None:
    fns = _graph()
    summ = interproc.summarize(fns)
    assert summ[TOP].uses & V0  # through OPEN, not through CLOSED
    roots = interproc.uses_roots(fns, summ, TOP, V0)
    assert sorted(roots) == [[TOP, OPEN, LEAF], [TOP, OPEN, TAIL]]


def test_roots_of_another_register_and_of_a_reader() -> None:
    fns = _graph()
    summ = interproc.summarize(fns)
    assert sorted(interproc.uses_roots(fns, summ, TOP, X2)) == [[TOP, OPEN, LEAF], [TOP, OPEN, OTHER]]
    assert interproc.uses_roots(fns, summ, CLOSED, V0) == [[CLOSED]]
    assert interproc.uses_roots(fns, summ, OTHER, V0) == []


def test_an_unknown_entry_has_no_roots() -> None:
    fns = _graph()
    assert interproc.uses_roots(fns, interproc.summarize(fns), 0x999, V0) == []


def test_bench_register_names() -> None:
    import pytest

    from bench.uses_roots import register_bit

    assert register_bit("v0") == V0 and register_bit("X2") == X2
    for bad in ("v32", "x31", "q0", "x"):
        with pytest.raises(SystemExit, match=bad):
            register_bit(bad)
