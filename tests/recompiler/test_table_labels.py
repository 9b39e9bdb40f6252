"""A function's own labels never become entries, also where another body overlaps it
(``analysis.pointers.accept``).

Busybox's ``cpio`` ran into code lifted at run time (0x411e8c, inside glibc's scanf): scanf
switches through tables of halfword offsets from a label it builds with ``adr`` right after
the ``br`` (``ldrh w0, [x0, w20, uxtw #1]; adr x20, L; add x0, x20, w0, sxth #2; br x0``), and
one such label also starts the block of a second dispatch, which the function reaches by a
direct branch.  A weak entry inside scanf (an address in data) has a body of its own that
overlaps scanf's and builds the same labels; the label's owner was looked up as the first
body holding it (scanf's), not the builder's own body, so the labels were taken as entries.
Each cut scanf's body there: the second dispatch became a function of its own, in which its
index has no bound, and most of its table (the entry for 0x411e8c among them) was lost.

Here the same shape, built from the form table's fields and shown as capstone's text: ``F``
bounds ``w1`` and branches to ``L``, which dispatches through a halfword table with an ``adr``
label; a data word names ``W``, whose body builds ``L`` with ``adr`` and reaches it too.  Neither label may become a function, and ``F``'s body keeps the
bounded table of three cases.  Fails on the code before the fix (both labels were entries)."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse

BASE = 0x30000000
RODATA = BASE + 0x2000
W, L, L2 = BASE + 0x0C, BASE + 0x14, BASE + 0x2C
BR = BASE + 0x28
CASES = [BASE + 0x2C, BASE + 0x34, BASE + 0x3C]

CODE = [
    0x7100083F,  # 0x00: cmp w1, #2
    0x54000089,  # 0x04: b.ls #0x30000014         (F reaches L directly)
    0xD65F03C0,  # 0x08: ret
    0x10000054,  # 0x0c: adr x20, #0x30000014     (W: named by a data word)
    0x14000001,  # 0x10: b #0x30000014
    0xD0000000,  # 0x14: adrp x0, #0x30002000      (L)
    0x91040000,  # 0x18: add x0, x0, #0x100
    0x78615800,  # 0x1c: ldrh w0, [x0, w1, uxtw #1]
    0x10000062,  # 0x20: adr x2, #0x3000002c      (L2: the table's base label)
    0x8B20A840,  # 0x24: add x0, x2, w0, sxth #2
    0xD61F0000,  # 0x28: br x0
    0xD2800020,  # 0x2c: mov x0, #1
    0xD65F03C0,  # 0x30: ret
    0xD2800040,  # 0x34: mov x0, #2
    0xD65F03C0,  # 0x38: ret
    0xD2800060,  # 0x3c: mov x0, #3
    0xD65F03C0,  # 0x40: ret
]


def test_the_encodings_are_what_the_comments_say() -> None:
    from recompiler.decode import disasm

    assert [disasm(w, BASE + 4 * k) for k, w in enumerate(CODE)] == _COMMENTS


_COMMENTS = [
    "cmp w1, #2",
    "b.ls #0x30000014",
    "ret",
    "adr x20, #0x30000014",
    "b #0x30000014",
    "adrp x0, #0x30002000",
    "add x0, x0, #0x100",
    "ldrh w0, [x0, w1, uxtw #1]",
    "adr x2, #0x3000002c",
    "add x0, x2, w0, sxth #2",
    "br x0",
    "mov x0, #1",
    "ret",
    "mov x0, #2",
    "ret",
    "mov x0, #3",
    "ret",
]


def _memory() -> Memory:
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    rodata = bytearray(0x1000)
    rodata[0:8] = W.to_bytes(8, "little")  # the data word that makes W a (weak) entry
    for k, t in enumerate(CASES):  # halfword offsets from L2, in words
        rodata[0x100 + 2 * k : 0x102 + 2 * k] = ((t - L2) // 4).to_bytes(2, "little", signed=True)
    return Memory(
        [(BASE, 0x1000, code, True), (RODATA, 0x1000, bytes(rodata), False)], read_only=[(BASE, 0x1000), (RODATA, 0x1000)]
    )


def test_labels_a_function_builds_stay_its_own() -> None:
    prog = analyse(_memory(), BASE, {BASE}, [], {})
    assert L not in prog.functions and L2 not in prog.functions, sorted(hex(e) for e in prog.functions)
    plan = prog.functions[BASE]
    body = {i.addr for i in plan.insns}
    assert {L, BR, *CASES} <= body
    assert plan.jump_tables.get(BR) == CASES, {hex(a): [hex(t) for t in v] for a, v in plan.jump_tables.items()}
