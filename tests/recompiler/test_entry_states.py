"""Start values along jumps between functions (``analysis.entry_states``).

A function entered by a tail jump (``b f``) sees a table base the jumping code put in a
register only as "the register's value at entry" (a fragment its caller jumps into, as glibc's
vfprintf enters its table fragments; an interpreter's handler entered from a dispatch in
another function).  Its entry state is the join of the states at every branch into it: here
two functions jump to the same dispatch, each with its own table in ``x20``, so the ``br``
gets the cases of both tables -- exactly the bounded entries (three each; the fourth word after
the first table points at code too and is not taken).  The dispatch lies before its callers in
address order, so no search backwards from the branch can find a base (the old window search
and its window base found no table here: the test fails on the code before).  A seeded base is
a merge that something else reaches too (a call from elsewhere may pass anything): the table
is not complete, the lifted ``BR`` keeps its fallback.  Instructions built from their fields
(Arm ARM: B, B.cond, ADRP, ADD (immediate)) and checked against capstone's text."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse
from recompiler.decode import disasm

BASE = 0x30000000
RODATA = BASE + 0x2000
FILL = 60
DISPATCH, BR = BASE, BASE + 0xFC
CASES = [BASE + 0x100, BASE + 0x108, BASE + 0x110]
RETS = [BASE + 0x104, BASE + 0x10C, BASE + 0x114]  # the second table's entries
OUT = BASE + 0x118
F1, F3 = BASE + 0x11C, BASE + 0x128


def b(pc: int, to: int, cond: int | None = None) -> int:
    off = (to - pc) // 4
    return 0x14000000 | (off & 0x3FFFFFF) if cond is None else 0x54000000 | ((off & 0x7FFFF) << 5) | cond


def adrp(pc: int, to: int, rd: int) -> int:
    imm = ((to >> 12) - (pc >> 12)) & 0x1FFFFF
    return 0x90000000 | ((imm & 3) << 29) | ((imm >> 2) << 5) | rd


def add_imm(rd: int, rn: int, imm: int) -> int:
    return 0x91000000 | (imm << 10) | (rn << 5) | rd


CODE = (
    [0x7100083F, b(BASE + 4, OUT, 8)]  # DISPATCH: cmp w1, #2; b.hi OUT
    + [0x91000463] * FILL  # add x3, x3, #1
    + [0xF8615A80, 0xD61F0000]  # ldr x0, [x20, w1, uxtw #3]; br x0
    + [0xD2800020, 0xD65F03C0, 0xD2800040, 0xD65F03C0, 0xD2800060, 0xD65F03C0]  # the cases
    + [0xD65F03C0]  # OUT: ret
    + [adrp(F1, RODATA, 20), add_imm(20, 20, 0x100), b(F1 + 8, DISPATCH)]  # F1
    + [adrp(F3, RODATA, 20), add_imm(20, 20, 0x200), b(F3 + 8, DISPATCH)]  # F3
)
TEXT = (
    ["cmp w1, #2", "b.hi #0x30000118"]
    + ["add x3, x3, #1"] * FILL
    + ["ldr x0, [x20, w1, uxtw #3]", "br x0", "mov x0, #1", "ret", "mov x0, #2", "ret", "mov x0, #3", "ret", "ret"]
    + ["adrp x20, #0x30002000", "add x20, x20, #0x100", "b #0x30000000"]
    + ["adrp x20, #0x30002000", "add x20, x20, #0x200", "b #0x30000000"]
)


def test_a_base_the_jumping_code_set_reaches_the_dispatch() -> None:
    assert [disasm(w, BASE + 4 * k) for k, w in enumerate(CODE)] == TEXT
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    rodata = bytearray(0x1000)
    for k, t in enumerate([*CASES, OUT]):  # the first table, then a word that also points at code
        rodata[0x100 + 8 * k : 0x108 + 8 * k] = t.to_bytes(8, "little")
    for k, t in enumerate(RETS):
        rodata[0x200 + 8 * k : 0x208 + 8 * k] = t.to_bytes(8, "little")
    mem = Memory(
        [(BASE, 0x1000, code, True), (RODATA, 0x1000, bytes(rodata), False)], read_only=[(BASE, 0x1000), (RODATA, 0x1000)]
    )
    prog = analyse(mem, F1, {DISPATCH, F1, F3}, [], {})
    plan = prog.functions[DISPATCH]
    table = {hex(a): [hex(t) for t in v] for a, v in plan.jump_tables.items()}
    assert sorted(plan.jump_tables.get(BR, ())) == sorted(CASES + RETS), table
    assert prog.stats.tables_by_kind == {"bounded": 1}, prog.stats.tables_by_kind
    assert prog.unresolved_br == []
    assert BR not in plan.complete_tables and BR not in plan.direct_tables  # (others may call it)
