"""A register a function was entered with is never a table by itself, and never a complete one
(the window-guessed base that made it one is gone; start values passed along jumps,
``analysis.entry_states``, are merges that something else reaches too: never complete).

musl's ``static void call(void *p) { ((void (*)(void))p)(); }`` is one ``br x0`` placed right
after ``atexit`` (``adrp x0, call; add x0, x0, :lo12:call; b __cxa_atexit``).  The guess took
x0's last write in address order -- the previous function's ``adrp``/``add`` -- as the whole
target: a "complete table" of one entry, ``call`` itself, so every atexit handler ended the
SQLite shell with ``nx_table_miss`` (exit 134 after its output).  Failed on the code before
the fix of session 25."""

from __future__ import annotations

from recompiler.analyse import Memory, analyse

BASE = 0x30000000
CALL = BASE + 0xC
CODE = [
    0x90000000,  # atexit:  adrp x0, BASE
    0x91003000,  #          add  x0, x0, #0xc      (x0 = call)
    0x14000004,  #          b    BASE + 0x18       (__cxa_atexit)
    0xD61F0000,  # call:    br   x0
    0xD503201F,  #          nop
    0xD503201F,  #          nop
    0xD65F03C0,  # __cxa_atexit: ret
]


def test_a_register_the_function_was_entered_with_is_no_guessed_table() -> None:
    code = b"".join(w.to_bytes(4, "little") for w in CODE)
    mem = Memory([(BASE, 0x1000, code, True)], read_only=[(BASE, 0x1000)])
    prog = analyse(mem, BASE, {BASE, CALL, BASE + 0x18}, [], {})
    plan = prog.functions[CALL]
    assert plan.complete_tables == set()
    assert CALL not in plan.jump_tables.get(CALL, [])  # (x0 is whatever the caller passed)
