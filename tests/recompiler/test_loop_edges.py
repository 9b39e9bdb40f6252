"""The loop-edge compiler barrier goes on exactly the back edges that close a round with nothing
that makes clang reload memory (recompiler/lift/loop_edges.py).

The barrier keeps a loop that polls memory another thread writes honest (its end-to-end check:
tests/horizon/test_polling_loop.py, a guest thread's store ends another's spin-wait, and
``test_spin_wait_on_a_store_beside_it`` there); here each shape is lifted on its own and the C
is read for ``NX_LOOP_EDGE``.  The instructions are built from the form table's fields and
checked against capstone's text (an oracle nobody here wrote) before they are lifted."""

from __future__ import annotations

import re

import pytest

from recompiler.decode import decode, disasm
from recompiler.isa import FORMS
from recompiler.lift import HANDLERS
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan

F = {f.name: f for f in FORMS}
BASE = 0x400000


def ldr(rt: int, rn: int) -> int:
    return F["LDR_uimm"].encode(size=2, imm12=0, Rn=rn, Rt=rt)


def st(rt: int, rn: int) -> int:
    return F["STR_uimm"].encode(size=2, imm12=0, Rn=rn, Rt=rt)


def cbz(rt: int, off: int, nz: int = 0) -> int:
    return F["CBNZ" if nz else "CBZ"].encode(sf=0, imm19=(off // 4) & 0x7FFFF, Rt=rt)


def bl(off: int) -> int:
    return F["BL"].encode(imm26=(off // 4) & 0x3FFFFFF)


BLR_X3 = 0xD63F0060
SVC0 = 0xD4000001
RET = 0xD65F03C0


def _barriers(words: list[int], text: list[str], monkeypatch, mode: str = "needed") -> set[str]:
    """The labels whose back edges got the barrier (a function with calls is written twice, its
    twin entered at the resume points)."""
    assert [disasm(w, BASE + 4 * k) for k, w in enumerate(words)] == text
    monkeypatch.setenv("NXRECOMP_RECOMPILER_LOOP_EDGES", mode)
    insns = [decode(w, BASE + 4 * k) for k, w in enumerate(words)]
    c = FunctionEmitter(FunctionPlan(BASE, insns), {BASE}, trust_abi=True).emit(HANDLERS)
    return set(re.findall(r"NX_LOOP_EDGE; goto (L_\w+);", c))


SHAPES = {
    # a spin-wait on a word another thread writes: loads only
    "spin": ([ldr(8, 9), cbz(8, -4), RET], ["ldr w8, [x9]", "cbz w8, #0x400000", "ret"], 1),
    # a store in every round: clang cannot keep the polled word across it
    "store": (
        [ldr(8, 9), st(8, 10), cbz(8, -8), RET],
        ["ldr w8, [x9]", "str w8, [x10]", "cbz w8, #0x400000", "ret"],
        0,
    ),
    # a store on one path of the round only: the other path is a spin
    "store on one path": (
        [ldr(8, 9), cbz(8, 8, 1), st(8, 10), cbz(8, -12), RET],
        ["ldr w8, [x9]", "cbnz w8, #0x40000c", "str w8, [x10]", "cbz w8, #0x400000", "ret"],
        1,
    ),
    # a direct call may be copied into the shard or be read-only: it does not count
    "direct call": (
        [ldr(8, 9), bl(-4), cbz(8, -8), RET],
        ["ldr w8, [x9]", "bl #0x400000", "cbz w8, #0x400000", "ret"],
        1,
    ),
    # a call through a register and a system call do
    "indirect call": (
        [ldr(8, 9), BLR_X3, cbz(8, -8), RET],
        ["ldr w8, [x9]", "blr x3", "cbz w8, #0x400000", "ret"],
        0,
    ),
    "system call": (
        [ldr(8, 9), SVC0, cbz(8, -8), RET],
        ["ldr w8, [x9]", "svc #0", "cbz w8, #0x400000", "ret"],
        0,
    ),
    # an inner spin (its own barrier) in an outer loop that stores: the outer edge needs none
    "nested, outer stores": (
        [st(1, 2), ldr(8, 9), cbz(8, -4), cbz(1, -12), RET],
        ["str w1, [x2]", "ldr w8, [x9]", "cbz w8, #0x400004", "cbz w1, #0x400000", "ret"],
        1,
    ),
    # the same outer loop with a load in place of its store: a round of it (the inner loop
    # falling through at once) stores nothing
    "nested, outer loads": (
        [ldr(1, 2), ldr(8, 9), cbz(8, -4), cbz(1, -12), RET],
        ["ldr w1, [x2]", "ldr w8, [x9]", "cbz w8, #0x400004", "cbz w1, #0x400000", "ret"],
        2,
    ),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_barrier_only_where_a_round_may_store_nothing(shape: str, monkeypatch) -> None:
    words, text, barriers = SHAPES[shape]
    assert len(_barriers(words, text, monkeypatch)) == barriers
    # recompiler.loop_edges = all: every back edge, as before
    back_edges = sum(1 for k, w in enumerate(words) if w >> 24 in (0x34, 0x35) and (w >> 23) & 1)
    assert len(_barriers(words, text, monkeypatch, "all")) == back_edges
