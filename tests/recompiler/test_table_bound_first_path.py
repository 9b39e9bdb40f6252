"""A switch first reached on a path where its index is a constant its bound excludes gets the
bound's entries only (``analysis.transfer.edge_feasible``, ``analysis.tables``).

libpcre2-8's match function (Debian 12 arm64) switches on a property type,
``cmp w4, #13; b.hi; ldrh w3, [x3, w4, uxtw #1]; adr x7; add x3, x7, w3, sxth #2; br x3``.  The
first path the value analysis saw to it held ``w4 = -1`` (the paths that load the real types come
through the opcode switch's cases, found a round later).  Past the ``b.hi`` with that constant,
the entry's address lay outside the image, its value was an opaque leaf, and the table was read
as an *open* one whose index is the 16-bit entry itself: every instruction after the ``br``
(12,442 of them) became a case, and stayed one when the bounded table was found next round.  Now an
edge whose bound a known constant violates is never taken by the analysis, and a table read at
a constant address outside the image is no table (no path loads it): the ``br`` gets nothing in
the first round, and the next one finds the bounded table alone.

The function below is that shape in small (assembled and linked by zig's clang, the words
checked against capstone's text): ``mov w4, #-1; cbz w1, ret_switch`` first, then an opcode
switch (two cases) whose cases set ``w4`` to 0 and 3 and jump to ``ret_switch``, a 4-entry
switch (``cmp w4, #3; b.hi``) over the four ``mov x0; ret`` pairs after it.  On the code before,
the return switch has ten targets (every instruction from the first case to the end) and kind
``bounded`` (the kind of the last round, the open table's targets kept).  A second check: the
branch verdicts of ``edge_feasible`` against Unicorn running ``cmp`` + ``b.cond`` on constants
(the edge the emulated branch takes is never called infeasible)."""

from __future__ import annotations

import pytest

from recompiler.analyse import Memory, analyse
from recompiler.analysis import expr as E
from recompiler.analysis.transfer import State, Transfer, edge_feasible
from recompiler.decode import decode, disasm

BASE = 0x1010138
RODATA = 0x1000120  # optab (two bytes), then rettab at +0x10 (four halfwords)
RET_BR = 0x101018C
CASES = [0x1010190, 0x1010198, 0x10101A0, 0x10101A8]

CODE = [
    (0x12800004, "mov w4, #-1"),
    (0x340001A1, "cbz w1, #0x1010170"),
    (0x7100041F, "cmp w0, #1"),
    (0x54000368, "b.hi #0x10101b0"),
    (0xD503201F, "nop"),
    (0x10F7FEA5, "adr x5, #0x1000120"),
    (0x386048A6, "ldrb w6, [x5, w0, uxtw]"),
    (0x10000067, "adr x7, #0x1010160"),
    (0x8B2608E7, "add x7, x7, w6, uxtb #2"),
    (0xD61F00E0, "br x7"),
    (0x52800004, "mov w4, #0"),  # op0
    (0x14000003, "b #0x1010170"),
    (0x52800064, "mov w4, #3"),  # op1
    (0x14000001, "b #0x1010170"),
    (0x71000C9F, "cmp w4, #3"),  # ret_switch
    (0x540001E8, "b.hi #0x10101b0"),
    (0x90FFFF83, "adrp x3, #0x1000000"),
    (0x9104C063, "add x3, x3, #0x130"),
    (0x78645863, "ldrh w3, [x3, w4, uxtw #1]"),
    (0x10000067, "adr x7, #0x1010190"),
    (0x8B23A8E3, "add x3, x7, w3, sxth #2"),
    (0xD61F0060, "br x3"),
    (0xD2800140, "mov x0, #0xa"),
    (0xD65F03C0, "ret"),
    (0xD2800160, "mov x0, #0xb"),
    (0xD65F03C0, "ret"),
    (0xD2800180, "mov x0, #0xc"),
    (0xD65F03C0, "ret"),
    (0xD28001A0, "mov x0, #0xd"),
    (0xD65F03C0, "ret"),
    (0xD2800000, "mov x0, #0"),  # done
    (0xD65F03C0, "ret"),
]


def test_a_switch_first_reached_with_an_index_out_of_bound_has_the_bounds_entries() -> None:
    assert [disasm(w, BASE + 4 * k) for k, (w, _t) in enumerate(CODE)] == [t for _w, t in CODE]
    code = b"".join(w.to_bytes(4, "little") for w, _t in CODE)
    optab, rettab = bytes([0, 2]), b"".join(k.to_bytes(2, "little") for k in (0, 2, 4, 6))
    rodata = optab + bytes(14) + rettab + bytes(0x100 - 0x18)
    mem = Memory(
        [(BASE, len(code), code, True), (RODATA, len(rodata), rodata, False)],
        read_only=[(BASE, len(code)), (RODATA, len(rodata))],
    )
    prog = analyse(mem, BASE, set(), [], {})
    plan = prog.functions[BASE]
    got = {hex(a): [hex(t) for t in v] for a, v in plan.jump_tables.items()}
    assert sorted(plan.jump_tables.get(RET_BR, ())) == CASES, got
    assert sorted(plan.jump_tables.get(BASE + 0x24, ())) == [BASE + 0x28, BASE + 0x30], got
    assert prog.stats.tables_by_kind == {"bounded": 2}, prog.stats.tables_by_kind


# pcre2's opcode dispatch (``cmp w2, #125; b.hi; ldrh w1, [x23, w2, uxtw #1]``) holds its table
# base in x23, which other paths (the return id, 0 at the entry) use for something else: the
# loop head merges both, and a bounded table tried with each constant dropped the whole table
# when the 0 base read no code.  Now a guessed base whose entries are not code is passed over
# (the table is then not exact: the lifted BR keeps its fallback).  Below, x23 is 0 where w2 is
# not 0, and that path leaves before the switch (a correlation the analysis does not follow).
MERGED = 0x1010128
MERGED_RODATA = 0x1000120
MERGED_CODE = [
    (0xD2800017, "mov x23, #0"),
    (0x35000062, "cbnz w2, #0x1010138"),
    (0xD503201F, "nop"),
    (0x10F7FF77, "adr x23, #0x1000120"),
    (0x350001A2, "cbnz w2, #0x101016c"),  # skip
    (0x7100081F, "cmp w0, #2"),
    (0x54000168, "b.hi #0x101016c"),
    (0x78605AE1, "ldrh w1, [x23, w0, uxtw #1]"),
    (0x10000064, "adr x4, #0x1010154"),
    (0x8B21A881, "add x1, x4, w1, sxth #2"),
    (0xD61F0020, "br x1"),
    (0xD2800140, "mov x0, #0xa"),
    (0xD65F03C0, "ret"),
    (0xD2800160, "mov x0, #0xb"),
    (0xD65F03C0, "ret"),
    (0xD2800180, "mov x0, #0xc"),
    (0xD65F03C0, "ret"),
    (0xD2800000, "mov x0, #0"),  # out
    (0xD65F03C0, "ret"),
]


def test_a_bounded_table_keeps_the_guessed_bases_that_name_code() -> None:
    assert [disasm(w, MERGED + 4 * k) for k, (w, _t) in enumerate(MERGED_CODE)] == [t for _w, t in MERGED_CODE]
    code = b"".join(w.to_bytes(4, "little") for w, _t in MERGED_CODE)
    rodata = b"".join(k.to_bytes(2, "little") for k in (0, 2, 4)) + bytes(0x100 - 6)
    mem = Memory(
        [(MERGED, len(code), code, True), (MERGED_RODATA, len(rodata), rodata, False)],
        read_only=[(MERGED, len(code)), (MERGED_RODATA, len(rodata))],
    )
    prog = analyse(mem, MERGED, set(), [], {})
    plan = prog.functions[MERGED]
    br = MERGED + 0x28
    assert sorted(plan.jump_tables.get(br, ())) == [MERGED + 0x2C, MERGED + 0x34, MERGED + 0x3C], plan.jump_tables
    assert prog.stats.tables_by_kind == {"bounded": 1}, prog.stats.tables_by_kind
    assert br not in plan.complete_tables  # (the 0 base was passed over: not every value is a case)


# ---- edge_feasible against Unicorn ------------------------------------------------------
AT = 0x10000
VALUES = [0, 1, 2, 3, 13, 14, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, 0xFFFFFFFFFFFFFFFF]


def _emulate(words: list[int], x0: int) -> bool:
    """Whether the branch (last word, target AT + 0x100) is taken with ``x0``."""
    from unicorn import UC_ARCH_ARM64, UC_MODE_ARM, Uc
    from unicorn.arm64_const import UC_ARM64_REG_PC, UC_ARM64_REG_X0

    uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
    uc.mem_map(AT, 0x1000)
    uc.mem_write(AT, b"".join(w.to_bytes(4, "little") for w in words))
    uc.reg_write(UC_ARM64_REG_X0, x0)
    uc.emu_start(AT, AT + 4 * len(words), count=len(words))
    pc = uc.reg_read(UC_ARM64_REG_PC)
    assert pc in (AT + 0x100, AT + 4 * len(words)), hex(pc)
    return pc == AT + 0x100


def _verdicts(words: list[int], x0: int) -> tuple[bool, bool]:
    """(taken edge feasible, fall-through feasible) with x0 the constant ``x0``."""
    t = Transfer(None)
    st = State.entry()
    st.regs[0] = E.const(x0)
    insns = [decode(w, AT + 4 * k) for k, w in enumerate(words)]
    for i in insns[:-1]:
        t.step(st, i)
    return edge_feasible(st, insns[-1], True), edge_feasible(st, insns[-1], False)


def _bcond(cond: int, at: int) -> int:
    return 0x54000000 | (((AT + 0x100 - at) // 4) << 5) | cond


@pytest.mark.parametrize("sf", [0, 1])
def test_edge_feasible_agrees_with_unicorn(sf: int) -> None:
    decided = 0
    for imm in (0, 1, 3, 13, 0xFFF):
        cmp = (0xF100001F if sf else 0x7100001F) | imm << 10  # cmp x0/w0, #imm
        for cond in range(16):
            words = [cmp, _bcond(cond, AT + 4)]
            for x in VALUES:
                taken = _emulate(words, x)
                ft, ff = _verdicts(words, x)
                assert (ft, ff)[not taken], (disasm(cmp, AT), cond, hex(x))  # the path run is feasible
                decided += not (ft and ff)
    assert decided > 0
    # the shape of pcre2's switch: ``cmp w0, #13; b.hi`` with w0 = -1 never falls through
    assert _verdicts([0x7100341F, _bcond(8, AT + 4)], 0xFFFFFFFF) == (True, False)
