"""A dispatch indexed by an unsigned byte the program loads (``analysis.tables``, kind
``loaded``): an interpreter's ``ldrb w8, [x22], #1; ldr x9, [x20, x8, lsl #3]; br x9``.

QuickJS's JS_CallInternal dispatches its 213 opcode handlers this way (a computed goto, each
handler ending in its own copy of the dispatch), the table base in a callee-saved register set
at the function's entry, so neither the window search before the branch (the base is in
another block) nor a compare bound (there is none: the byte is the bound) finds the table; a
loaded unsigned byte/halfword is taken as the index, up to 256/65536 entries read while they
are code.

Here on hand-encoded code of that shape (assembled by zig's clang from the instructions in the
comments): a table of three handler addresses in a read-only page, the entry after it not
code; both dispatches (the plain ``lsl #3`` and QuickJS's ``w24, uxtw #3`` form) get exactly
the three handlers.  Fails on the code before the ``loaded`` kind (both ``br`` unresolved)."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse

BASE = 0x30000000
RODATA = BASE + 0x2000
TABLE = RODATA + 0x100
BR1, BR2 = BASE + 0x18, BASE + 0x28
H = [BASE + 0x1C, BASE + 0x2C, BASE + 0x34]  # handlers 0, 1, 2

CODE = [
    0xD0000014,  # adrp x20, RODATA
    0x91040294,  # add x20, x20, #0x100        (the table base, kept in x20)
    0xAA0003F6,  # mov x22, x0                 (the bytecode pointer: an argument)
    0xD2800000,  # mov x0, #0
    0x384016C8,  # DISPATCH: ldrb w8, [x22], #1
    0xF8687A89,  # ldr x9, [x20, x8, lsl #3]
    0xD61F0120,  # br x9                       BR1
    0x91000400,  # H0: add x0, x0, #1
    0x384016D8,  # ldrb w24, [x22], #1
    0xF8785A89,  # ldr x9, [x20, w24, uxtw #3]
    0xD61F0120,  # br x9                       BR2 (the handler's own dispatch)
    0xD1000400,  # H1: sub x0, x0, #1
    0x17FFFFF8,  # b DISPATCH
    0xD65F03C0,  # H2: ret
]


def _memory(table: list[int]) -> Memory:
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    rodata = bytearray(0x1000)
    blob = b"".join(t.to_bytes(8, "little") for t in table)
    rodata[0x100 : 0x100 + len(blob)] = blob
    return Memory(
        [(BASE, 0x1000, code, True), (RODATA, 0x1000, bytes(rodata), False)], read_only=[(BASE, 0x1000), (RODATA, 0x1000)]
    )


def test_a_loaded_byte_indexes_an_interpreters_dispatch() -> None:
    prog = analyse(_memory(H), BASE, {BASE}, [], {})
    plan = prog.functions[BASE]
    for br in (BR1, BR2):
        assert sorted(plan.jump_tables.get(br, [])) == H, {hex(a): v for a, v in plan.jump_tables.items()}
        assert br not in prog.unresolved_br
    # the two dispatches, and the copy of one in the handler function that holds it (a label
    # function, started from the constants its enclosing function holds there: EntrySeed)
    assert prog.stats.tables_by_kind == {"loaded": 4}, prog.stats.tables_by_kind
    for e, p in prog.functions.items():
        for br, t in p.jump_tables.items():
            assert sorted(t) == H, (hex(e), hex(br))
    assert all(h in {i.addr for i in plan.insns} for h in H)


def test_entries_are_read_only_while_they_are_code() -> None:
    """A table whose second entry is data (an address outside code): only the first is taken
    (the rest of the 256 go through the general dispatch)."""
    prog = analyse(_memory([H[0], RODATA + 8, H[2]]), BASE, {BASE}, [], {})
    assert prog.functions[BASE].jump_tables.get(BR1) == [H[0]]


def test_entries_are_read_only_while_they_are_this_functions_code() -> None:
    """A table followed by a word that points at code of another function (the next table, a
    function pointer): the run of entries ends there, since taking it as a case would graft the
    other function's body onto this one.  Fails on the code before the ``own`` check."""
    other = BASE + 0x100  # a function of its own (a hint): `ret` after padding
    mem = _memory([*H, other])
    code = mem.segments[0][2]
    code = code + bytes(0x100 - len(code)) + (0xD65F03C0).to_bytes(4, "little")
    mem = Memory([(BASE, 0x1000, code, True), mem.segments[1]], read_only=mem.read_only)
    prog = analyse(mem, BASE, {BASE, other}, [], {})
    assert other in prog.functions
    assert prog.functions[BASE].jump_tables.get(BR1) == H


def test_the_incremental_join_agrees_with_the_full_one(monkeypatch) -> None:
    """``FunctionValues`` rejoins only the predecessors whose state changed where a block has
    ``INCREMENTAL_PREDS`` of them (a handler reached from every dispatch): on this function
    (its dispatch and handlers are blocks of two predecessors) the state before every
    instruction is the one the join of all predecessors at each visit gives."""
    from recompiler.analysis import values
    from recompiler.analysis.transfer import Transfer
    from recompiler.decode import decode

    mem = _memory(H)
    insns = {BASE + 4 * k: decode(w, BASE + 4 * k) for k, w in enumerate(CODE)}
    edges = {BR1: H, BR2: H}
    states = {}
    for n in (2, 10**9):
        monkeypatch.setattr(values, "INCREMENTAL_PREDS", n)
        fv = values.FunctionValues(Transfer(mem), insns, BASE, edges)
        assert fv.ok
        assert bool(fv._joined) == (n == 2)  # (the incremental path ran, or did not)
        states[n] = {a: fv.before(a) for a in insns}
        assert all(s is not None for s in states[n].values())
    assert states[2] == states[10**9]
