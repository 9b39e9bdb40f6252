"""A complete jump table is no exit of its function (``emitter.table_falls_back``).

A BR through a table of ``SHARED_TABLE`` or more targets dispatches through a host label array
whose shared block falls back to ``nx_jump`` after storing every local.  Where the table is
complete (every entry its index can select is code of this function read from memory the
program cannot write: ``FunctionPlan.complete_tables``) each site's miss is ``nx_table_miss``,
a fatal error, and that fallback never runs.  Counted as an exit anyway, it made the function
*opaque*: every return stored X19-X29 back into ``NxCpu`` and every save of them stayed (QuickJS's
``JS_CallInternal``, whose opcode dispatch is complete: ten saves, ten restores and twelve
stores back at each of its 1.1 M calls in bench/callgrind_ir.py's workload).

Here a hand-encoded interpreter (words from ``llvm-mc -triple=aarch64 -show-encoding``, the
branches' offsets computed below as the Arm ARM encodes B and BL): a frame saving X19 and X20,
a loaded-byte dispatch over 18 handlers (16 that add a constant, one that calls a function, one
that returns), its table filled to all 256 entries in read-only memory (complete) or in writable
memory (not complete: the fallback stays, and so does the opaque function).  Fails on the code
before ``table_falls_back`` (opaque, no save dropped, for the complete table too)."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse
from recompiler.lift import forms, liveness
from recompiler.lift.emitter import FunctionEmitter

BASE = 0x30000000
RODATA = BASE + 0x2000
DISPATCH = BASE + 0x1C
BR = DISPATCH + 8


def _b(at: int, to: int, link: bool = False) -> int:
    """B / BL ``to`` from ``at`` (imm26, the word offset)."""
    return (0x94000000 if link else 0x14000000) | (((to - at) >> 2) & 0x3FFFFFF)


def _code() -> tuple[list[int], list[int], int]:
    words = [
        0xA9BE7BFD,  # stp x29, x30, [sp, #-32]!
        0xA9014FF4,  # stp x20, x19, [sp, #16]
        0x910003FD,  # mov x29, sp
        0xD0000014,  # adrp x20, RODATA
        0x91040294,  # add x20, x20, #0x100   (the table base, kept in x20)
        0xAA0003F3,  # mov x19, x0            (the bytecode pointer)
        0xD2800000,  # mov x0, #0
        0x38401668,  # DISPATCH: ldrb w8, [x19], #1
        0xF8687A89,  # ldr x9, [x20, x8, lsl #3]
        0xD61F0120,  # br x9
    ]
    handlers = []
    for k in range(16):  # add x0, x0, #k+1; b DISPATCH
        handlers.append(BASE + 4 * len(words))
        words += [0x91000000 | ((k + 1) << 10), 0]
        words[-1] = _b(BASE + 4 * (len(words) - 1), DISPATCH)
    handlers.append(BASE + 4 * len(words))  # bl CALLEE; b DISPATCH
    words += [0, 0]
    callee_at = BASE + 4 * (len(words) + 4)
    words[-2] = _b(BASE + 4 * (len(words) - 2), callee_at, link=True)
    words[-1] = _b(BASE + 4 * (len(words) - 1), DISPATCH)
    handlers.append(BASE + 4 * len(words))
    words += [
        0xA9414FF4,  # ldp x20, x19, [sp, #16]
        0xA8C27BFD,  # ldp x29, x30, [sp], #32
        0xD65F03C0,  # ret
        0xD503201F,  # nop
        0xD65F03C0,  # CALLEE: ret
    ]
    assert BASE + 4 * (len(words) - 1) == callee_at
    return words, handlers, callee_at


def _emit(writable: bool) -> tuple[FunctionEmitter, str]:
    words, handlers, callee = _code()
    table = [handlers[k % len(handlers)] for k in range(256)]
    rodata = bytearray(0x1000)
    rodata[0x100 : 0x100 + 8 * 256] = b"".join(t.to_bytes(8, "little") for t in table)
    code = b"".join(w.to_bytes(4, "little") for w in words)
    ro = [(BASE, 0x1000)] + ([] if writable else [(RODATA, 0x1000)])
    mem = Memory([(BASE, 0x1000, code, True), (RODATA, 0x1000, bytes(rodata), False)], read_only=ro)
    prog = analyse(mem, BASE, {BASE, callee}, [], {})
    plan = prog.functions[BASE]
    assert sorted(set(plan.jump_tables[BR])) == handlers, plan.jump_tables
    em = FunctionEmitter(plan, set(prog.functions))
    return em, str(em.emit(forms.HANDLERS))


SAVED = liveness.xbit(19) | liveness.xbit(20)


def test_a_complete_tables_fallback_is_no_exit() -> None:
    em, c = _emit(writable=False)
    assert em.plan.complete_tables, "the table should be complete"
    assert "JT_0_bad" in c and "nx_table_miss" in c
    f = em.facts
    assert not f.opaque
    # X19 and X20 are saved only to be restored for the caller: the saves may go
    assert f.save_drop & SAVED == SAVED, hex(f.save_drop)
    assert not em.full_exit and em.falls_back == {"JT_0": False}


def test_a_writable_table_keeps_its_fallback_and_the_function_opaque() -> None:
    em, c = _emit(writable=True)
    assert not em.plan.complete_tables
    assert em.falls_back == {"JT_0": True}
    assert em.full_exit and em.facts.opaque
    assert em.facts.save_drop == 0
