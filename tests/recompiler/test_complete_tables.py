"""Complete jump tables and loaded-index dispatch (``analysis.tables.Recovered.complete``,
``FunctionPlan.complete_tables``, ``DirectTable.loaded``).

A table is complete when every entry the index can select (a compare bound, a mask, or the
range of a loaded byte) is code read from memory the program cannot write: the lifted BR can
then take no other target, so its fallback is a fatal error that keeps no register live,
instead of the general jump that keeps every register live at every dispatch of an
interpreter's loop.  A loaded byte index (QuickJS's ``ldrb w24, [x23]`` ...
``ldr x8, [x22, w24, uxtw #3]; br x8``) also indexes a host label array directly, with the
table base and the index's range checked at run time.

The code is test_loaded_index.py's hand-encoded interpreter; here its table is filled to all
256 entries (complete) or left at three entries (not complete: the fourth is not code), and
the table is put in writable memory (not complete: the program may change it).  Fails on the
code before complete tables (no ``complete_tables``, no loaded ``DirectTable``)."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse
from recompiler.lift import forms
from recompiler.lift.emitter import FunctionEmitter
from tests.recompiler.test_loaded_index import BASE, BR1, BR2, CODE, H, RODATA


def _memory(table: list[int], writable: bool = False) -> Memory:
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    rodata = bytearray(0x1000)
    blob = b"".join(t.to_bytes(8, "little") for t in table)
    rodata[0x100 : 0x100 + len(blob)] = blob
    ro = [(BASE, 0x1000)] + ([] if writable else [(RODATA, 0x1000)])
    return Memory([(BASE, 0x1000, code, True), (RODATA, 0x1000, bytes(rodata), False)], read_only=ro)


def _plan(table: list[int], writable: bool = False):
    prog = analyse(_memory(table, writable), BASE, {BASE}, [], {})
    return prog, prog.functions[BASE]


FULL = [H[k % 3] for k in range(256)]  # every byte value selects a handler


def test_a_table_covering_every_byte_is_complete_and_indexed_by_the_byte() -> None:
    _, plan = _plan(FULL)
    assert plan.complete_tables == {BR1, BR2}
    for br, reg in ((BR1, 8), (BR2, 24)):
        d = plan.direct_tables[br]
        assert d.loaded and d.reg == reg and d.mask == 0xFF
        assert list(d.targets) == FULL


def test_a_table_that_ends_early_or_can_be_written_is_not_complete() -> None:
    _, plan = _plan(H)  # entry 3 is not code: byte 3 would branch elsewhere
    assert plan.complete_tables == set()
    _, plan = _plan(FULL, writable=True)
    assert plan.complete_tables == set()
    assert sorted(plan.jump_tables[BR1]) == H  # still found, through the general fallback


def _c(plan, prog) -> str:
    em = FunctionEmitter(plan, set(prog.functions))
    return str(em.emit(forms.HANDLERS))


def test_a_complete_tables_fallback_is_fatal() -> None:
    # (three handlers: each BR is a switch of its cases, SHARED_TABLE targets or more take the
    # label arrays; QuickJS's dispatch takes them in tests/realprogs/test_corpus.py)
    prog, plan = _plan(FULL)
    c = _c(plan, prog).split("NxRet C_")[0]  # (the resume twin: a copy)
    assert c.count("nx_table_miss(s, ") == 2 and "nx_jump" not in c, c
    prog, plan = _plan(H)
    c = _c(plan, prog).split("NxRet C_")[0]
    assert "nx_table_miss" not in c and c.count("nx_jump") == 2, c
