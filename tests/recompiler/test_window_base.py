"""A table whose base the value analysis cannot see (``analysis.tables.recover_with_window_base``).

A function entered with the table's address already in a register (a fragment its caller
jumps into, as glibc's vfprintf enters its table fragments with its own frame) sees that base
only as "the register's value at entry".  The data flow still knows the index and its bound
(here a compare 60 instructions before the dispatch, out of the old window search's reach);
the base is the register's last write before the ``br`` in address order (the caller's
``adrp`` + ``add``).  The table then has exactly the bounded entries: three, not the fourth
word after it (which points at code, and which the old window search's open table took).
The instructions are built from the form table's fields and checked against capstone's text.
Fails on the code before the fallback (four entries, kind ``window``)."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse
from recompiler.decode import disasm

BASE = 0x30000000
RODATA = BASE + 0x2000
F2, BR = BASE + 0x0C, BASE + 0x108
CASES = [BASE + 0x10C, BASE + 0x114, BASE + 0x11C]
OUT = BASE + 0x124
FILL = 60

CODE = (
    [0xD0000014, 0x91040294, 0x14000001]  # F1: adrp x20, RODATA; add x20, x20, #0x100; b F2
    + [0x7100083F, 0x540008A8]  # F2: cmp w1, #2; b.hi OUT
    + [0x91000463] * FILL  # add x3, x3, #1
    + [0xF8615A80, 0xD61F0000]  # ldr x0, [x20, w1, uxtw #3]; br x0
    + [0xD2800020, 0xD65F03C0, 0xD2800040, 0xD65F03C0, 0xD2800060, 0xD65F03C0]  # the cases
    + [0xD65F03C0]  # OUT: ret
)
TEXT = (
    ["adrp x20, #0x30002000", "add x20, x20, #0x100", "b #0x3000000c", "cmp w1, #2", "b.hi #0x30000124"]
    + ["add x3, x3, #1"] * FILL
    + ["ldr x0, [x20, w1, uxtw #3]", "br x0", "mov x0, #1", "ret", "mov x0, #2", "ret", "mov x0, #3", "ret", "ret"]
)


def test_a_base_set_before_the_function_is_found_before_the_branch() -> None:
    assert [disasm(w, BASE + 4 * k) for k, w in enumerate(CODE)] == TEXT
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    rodata = bytearray(0x1000)
    for k, t in enumerate([*CASES, OUT]):  # the table, then a word that also points at code
        rodata[0x100 + 8 * k : 0x108 + 8 * k] = t.to_bytes(8, "little")
    mem = Memory(
        [(BASE, 0x1000, code, True), (RODATA, 0x1000, bytes(rodata), False)], read_only=[(BASE, 0x1000), (RODATA, 0x1000)]
    )
    prog = analyse(mem, BASE, {BASE, F2}, [], {})
    plan = prog.functions[F2]
    assert plan.jump_tables.get(BR) == CASES, {hex(a): [hex(t) for t in v] for a, v in plan.jump_tables.items()}
    assert prog.stats.tables_by_kind.get("bounded+window base") == 1, prog.stats.tables_by_kind
    assert BR not in plan.direct_tables  # the guess is not checked at the branch: no direct jump
