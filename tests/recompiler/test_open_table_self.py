"""An unbounded table's word that names its own ``BR`` is no case (``analysis.bodies``).

Lua's str_pack switches on what a call returned (no compare bounds it) through a byte table of
offsets from a label: ``adr x9, L; ldrb w10, [x22, x8]; add x9, x9, x10, lsl #2; br x9``.  The
table's entries are read while they are code of the function (kind ``open``); past its real
entries a byte happened to name the ``br`` itself.  Kept, that target made the branch its own
predecessor: its register became a merge of itself, the next round found no table, and the old
window search took over (kind ``window``, the ``br`` among its targets).  Now such an entry is
dropped (it would loop on the same register forever: never a compiler's case) and the table
stays the data flow's.  Fails on the code before (``window``, four targets).  Instructions built
from their fields (Arm ARM: MADD, LDRB, ADR, ADRP, ADD) and checked against capstone's text."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse
from recompiler.decode import disasm

BASE = 0x30000000
RODATA = BASE + 0x2000
L0 = BASE + 0x10
DISPATCH, BR = BASE + 0x28, BASE + 0x34
CASES = [L0, L0 + 8, L0 + 16]


def adr(pc: int, to: int, rd: int) -> int:
    imm = (to - pc) & 0x1FFFFF
    return 0x10000000 | ((imm & 3) << 29) | ((imm >> 2) << 5) | rd


CODE = [
    0x1B017C08,  # mul w8, w0, w1            (the index: not bounded anywhere)
    0x90000016 | (((RODATA - BASE) >> 12 & 3) << 29) | (((RODATA - BASE) >> 14) << 5),  # adrp x22, RODATA
    0x910002D6,  # add x22, x22, #0
    0x14000000 | ((DISPATCH - (BASE + 0xC)) // 4),  # b DISPATCH
    0xD2800020,  # L0: mov x0, #1
    0xD65F03C0,
    0xD2800040,  # mov x0, #2
    0xD65F03C0,
    0xD2800060,  # mov x0, #3
    0xD65F03C0,
    adr(DISPATCH, L0, 9),  # DISPATCH: adr x9, L0
    0x38686ACA,  # ldrb w10, [x22, x8]
    0x8B0A0929,  # add x9, x9, x10, lsl #2
    0xD61F0120,  # br x9
]
TEXT = [
    "mul w8, w0, w1",
    "adrp x22, #0x30002000",
    "add x22, x22, #0",
    "b #0x30000028",
    "mov x0, #1",
    "ret",
    "mov x0, #2",
    "ret",
    "mov x0, #3",
    "ret",
    "adr x9, #0x30000010",
    "ldrb w10, [x22, x8]",
    "add x9, x9, x10, lsl #2",
    "br x9",
]


def test_an_open_tables_entry_naming_its_branch_is_dropped() -> None:
    assert [disasm(w, BASE + 4 * k) for k, w in enumerate(CODE)] == TEXT
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    # three cases, then a byte naming the br (L0 + 9 * 4), then one past the code (ends the table)
    rodata = bytes([0, 2, 4, (BR - L0) // 4, 0xFF]) + bytes(0x100 - 5)
    mem = Memory([(BASE, len(code), code, True), (RODATA, 0x100, rodata, False)], read_only=[(BASE, len(code)), (RODATA, 0x100)])
    prog = analyse(mem, BASE, set(), [], {})
    plan = prog.functions[BASE]
    assert sorted(plan.jump_tables.get(BR, ())) == CASES, {hex(a): [hex(t) for t in v] for a, v in plan.jump_tables.items()}
    assert prog.stats.tables_by_kind == {"open": 1}, prog.stats.tables_by_kind
