"""A jump table indexed by a variable in writable memory (``analysis.tables._fold_loads``).

busybox bc's lexer switches on a global token (``ldr w25, [x19]`` with x19 read from the GOT),
bounded by ``cmp w0, #0x35; b.hi``, its table base spilled to ``[sp]`` before the loop head and
reloaded before the ``br``.  A load from writable memory at a constant address made the whole
target unknown, so that dispatch had no table (the window search cannot see through the
spill) and six of its case labels were lifted at run time.  Such a load is an unknown value, a
possible index like any other: the compare bounds it, the table has exactly that many entries.

Here on hand-encoded code of that shape (assembled by zig's clang): the token in a writable
page, the table of code addresses in a read-only one; analysis finds its four targets, exactly,
and a table base read from writable memory still makes no table."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse

BASE = 0x30000000
DATA, RODATA = BASE + 0x1000, BASE + 0x2000
TABLE = RODATA + 0x100
BR = BASE + 0x80
LABEL = BASE + 0x84  # the adr: entries are (target - LABEL) / 4
H = [BASE + 0x94 + 8 * k for k in range(4)]  # handler k: x0 = k + 1; ret
# the page's adrp far from its add (as in bc: 17 instructions), which the window search
# before the branch does not reach through the spill
FILLER = [0x52800000 | r for r in (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 21, 22, 23, 24, 26)]

CODE = [
    0xD0000014,  # adrp x20, RODATA
    *FILLER,  # mov wN, #0 (20 of them)
    0x91040281,  # add x1, x20, #0x100        TABLE
    0xF90003E1,  # str x1, [sp]               (the base spilled)
    0xB0000013,  # adrp x19, DATA
    0xB9400A79,  # ldr w25, [x19, #8]         (the token: writable memory)
    0x51001720,  # sub w0, w25, #5
    0x71000C1F,  # cmp w0, #3
    0x54000108,  # b.hi DEFAULT
    0xF94003E1,  # ldr x1, [sp]
    0x78605820,  # ldrh w0, [x1, w0, uxtw #1]
    0x10000061,  # adr x1, LABEL
    0x8B20A820,  # add x0, x1, w0, sxth #2
    0xD61F0000,  # br x0
    0xD2800000,
    0xD65F03C0,  # LABEL: mov x0, #0; ret
    0xD2800120,
    0xD65F03C0,  # DEFAULT: mov x0, #9; ret
    0xD2800020,
    0xD65F03C0,
    0xD2800040,
    0xD65F03C0,  # mov x0, #1; ret; mov x0, #2; ret
    0xD2800060,
    0xD65F03C0,
    0xD2800080,
    0xD65F03C0,  # mov x0, #3; ret; mov x0, #4; ret
]


def _memory() -> Memory:
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    table = b"".join(((h - LABEL) // 4).to_bytes(2, "little") for h in H)
    data = bytearray(0x1000)
    rodata = bytearray(0x1000)
    rodata[0x100 : 0x100 + len(table)] = table
    return Memory(
        [(BASE, 0x1000, code, True), (DATA, 0x1000, bytes(data), False), (RODATA, 0x1000, bytes(rodata), False)],
        read_only=[(BASE, 0x1000), (RODATA, 0x1000)],
    )


def test_a_bounded_index_read_from_writable_memory_makes_a_table() -> None:
    prog = analyse(_memory(), BASE, {BASE}, [], {})
    plan = prog.functions[BASE]
    assert sorted(plan.jump_tables.get(BR, [])) == H, {hex(a): v for a, v in plan.jump_tables.items()}
    assert BR not in prog.unresolved_br
    assert all(h in {i.addr for i in plan.insns} for h in H)


def test_a_table_base_read_from_writable_memory_makes_none() -> None:
    """The same dispatch with its base read from a pointer variable: no table (the variable
    holds what the program stores there, not what the image says)."""
    words = list(CODE)
    words[20] = 0xB0000013  # adrp x19, DATA      (in the last filler's place)
    words[21] = 0xF9400A61  # ldr x1, [x19, #16]  (a pointer variable as the base, spilled)
    prog = analyse(_memory_words(words), BASE, {BASE}, [], {})
    assert BR not in prog.functions[BASE].jump_tables
    assert BR in prog.unresolved_br


def _memory_words(words: list[int]) -> Memory:
    m = _memory()
    code = b"".join(w.to_bytes(4, "little") for w in words)
    return Memory([(BASE, 0x1000, code, True), *m.segments[1:]], read_only=m.read_only)
