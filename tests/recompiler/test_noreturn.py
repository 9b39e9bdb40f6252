"""Calls of functions that never return (``analyse.noreturn_functions``,
``recompiler.noreturn_calls``).

A function with no RET, no jump out through a register and only tail calls to such functions
never comes back to its caller, so the lifter ends a call of it with a fatal error instead of
falling into the code after it (code of other paths: Lua's ``luaG_runerror`` has a loop's tail
after its ``luaG_errormsg`` call).  Liveness then no longer takes what that code reads as live
after the call.  A function with a RET anywhere in its span (code no branch reaches, as a
landing pad the unwinder enters) is never taken for one."""

from __future__ import annotations

import pytest

from recompiler.lift import interproc
from recompiler.analyse import Memory, analyse
from recompiler.lift import lift_function

BASE = 0x400000
MAIN, DIE, EXIT, PAD = BASE, BASE + 0x100, BASE + 0x200, BASE + 0x300
RET = 0xD65F03C0


def _bl(at: int, to: int) -> int:
    return 0x94000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _b(at: int, to: int) -> int:
    return 0x14000000 | (((to - at) >> 2) & 0x3FFFFFF)


def _program() -> dict[int, int]:
    return {
        MAIN: 0xB4000060,  # cbz x0, MAIN+12
        MAIN + 4: _bl(MAIN + 4, DIE),  # the call of a function that never returns
        MAIN + 8: 0x8B0C0000,  # add x0, x0, x12 (reached from MAIN+12 only)
        MAIN + 12: 0xB5FFFFE1,  # cbnz x1, MAIN+8
        MAIN + 16: RET,
        DIE: _bl(DIE, EXIT),  # its last instruction: EXIT does not return
        EXIT: 0xD4000001,  # svc #0
        EXIT + 4: _b(EXIT + 4, EXIT),
        PAD: _bl(PAD, EXIT),  # no RET its branches reach, but one in its span
        PAD + 4: _b(PAD + 4, PAD),
        PAD + 8: RET,
    }


def _analyse(noreturn: bool = True):
    size = 0x1000
    data = bytearray(size)
    for a, v in _program().items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    return analyse(Memory([(BASE, size, bytes(data), True)]), MAIN, {MAIN, DIE, EXIT, PAD}, [], {}, noreturn)


def _lift(prog) -> dict[int, str]:
    lifted = {a: lift_function(p, set(prog.functions), defer=True) for a, p in prog.functions.items()}
    summ = interproc.summarize([facts for _c, _called, facts in lifted.values()])
    return {a: interproc.place(c, [facts], summ) for a, (c, _called, facts) in lifted.items()}


def test_functions_that_never_return_and_their_calls():
    prog = _analyse()
    assert prog.functions[MAIN].noreturn_calls == {MAIN + 4}
    assert prog.functions[DIE].noreturn_calls == {DIE}
    assert prog.functions[PAD].noreturn_calls == {PAD}  # it calls EXIT; itself may return
    assert not prog.functions[EXIT].noreturn_calls


def test_a_ret_anywhere_in_the_span_keeps_a_function_returning():
    from recompiler.analyse import noreturn_functions

    prog = _analyse()
    size = 0x1000
    data = bytearray(size)
    for a, v in _program().items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    mem = Memory([(BASE, size, bytes(data), True)])
    assert noreturn_functions(prog.functions, mem) == {DIE, EXIT}
    assert PAD in noreturn_functions(prog.functions)  # without the span, by its branches only


@pytest.mark.parametrize("noreturn", [True, False])
def test_the_call_ends_in_a_fatal_error_and_reads_nothing_after_it(noreturn):
    code = _lift(_analyse(noreturn))[MAIN]
    assert ("nx_noreturn_returned(s, 0x400004ull);" in code) == noreturn
    # X12, read by the code after the call, is no longer live after it: not reloaded there
    after = code.split("_r = F_400100(s, x0, x1, x30, sp, x29);", 1)[1].split("\n")[2]
    assert ("x12 = s->x[12];" in after) == (not noreturn), after


# A call whose return would run on into the next function (only padding between): glibc's
# malloc_printerr is `bl __libc_message; nop` and then the next function's first instruction;
# __libc_message returns for other arguments (its span holds a RET), so only the shape of the
# caller says that this call does not come back.
MSG, PRINTERR, NEXT, USER = BASE + 0x400, BASE + 0x500, BASE + 0x50C, BASE + 0x600


def _printerr_program() -> dict[int, int]:
    return {
        MSG: 0xB4000040,  # cbz x0, MSG+8
        MSG + 4: RET,  # it returns where its argument says so
        MSG + 8: _b(MSG + 8, EXIT),  # else it tail-calls EXIT
        PRINTERR: 0x52800020,  # mov w0, #1
        PRINTERR + 4: _bl(PRINTERR + 4, MSG),
        PRINTERR + 8: 0xD503201F,  # nop: padding before the next function
        NEXT: RET,
        USER: 0xB40000A0,  # cbz x0, USER+20
        USER + 4: _bl(USER + 4, PRINTERR),
        USER + 8: 0x8B0C0000,  # add x0, x0, x12: bytes after the call, no code of any path
        USER + 12: RET,
        USER + 20: RET,
    }


def test_a_call_followed_only_by_padding_before_the_next_function_does_not_return():
    from recompiler.analyse import noreturn_functions

    prog_words = {**_program(), **_printerr_program()}
    size = 0x1000
    data = bytearray(size)
    for a, v in prog_words.items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    mem = Memory([(BASE, size, bytes(data), True)])
    prog = analyse(mem, MAIN, {MAIN, DIE, EXIT, PAD, MSG, PRINTERR, NEXT, USER}, [], {}, True)
    noret = noreturn_functions(prog.functions, mem)
    assert MSG not in noret  # it may return
    assert PRINTERR in noret  # its call of MSG runs on into NEXT: it cannot come back
    assert NEXT not in noret and USER not in noret
    # the caller's path ends at the call: the bytes after it are not reached from it
    assert prog.functions[USER].noreturn_calls == {USER + 4}
