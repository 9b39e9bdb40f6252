"""A data word naming a call's return address is no reason to take the caller for a function
that never returns (``analysis.noreturn``, its ``weak`` argument).

Analysis takes every aligned data word that names code for a function pointer (a weak entry),
and a body stops at another entry.  Bash's rodata holds the getopt string "...C:DEI", whose
last 8 bytes read 0x494544: the instruction after a ``bl`` in a function that binds readline
variables.  That function's body then ended at the call, and the rule for ``bl
__libc_message; nop`` and then the next function (no compiler lets a call's return run on into
another function) took it for one that never returns; every caller's lifted call of it ended
in ``nx_noreturn_returned``, and ``bash -i`` stopped at its start.  A weak entry after a call is
no such next function: the path goes on into it as a tail call.

``programs/false_entry_after_call.c`` has that shape (a word in rodata naming the instruction
after ``twice``'s first call, under a local label, so no symbol names it); recompiled, it runs
as under qemu-aarch64."""

from __future__ import annotations


from recompiler.lift.control import branch_target
from tests.cpu_host import aarch64_programs


def test_a_call_before_a_data_words_target_still_returns(tmp_path) -> None:
    program = aarch64_programs.build_for_qemu("false_entry_after_call", tmp_path)
    syms, prog = aarch64_programs.symbols_and_program(program)
    twice = syms["twice"]
    after_call = twice + 16  # stp, mov, str, bl step: the data word's target
    assert after_call in prog.functions, "the data word's target is no entry any more: the test shows nothing"
    assert [i.addr for i in prog.functions[twice].insns][-1] == after_call - 4
    calls = [i for p in prog.functions.values() for i in p.insns if i.name == "BL" and branch_target(i) == twice]
    assert calls and not any(i.addr in p.noreturn_calls for p in prog.functions.values() for i in calls)

    stdout = aarch64_programs.exec_matches_qemu(program, aarch64_programs.recompile(program, tmp_path / "bundle"))
    assert stdout.startswith(b"twice(5) = 65\n")
