"""A false entry's stores of callee-saved registers into the frame of the function it lies in
are spills, not saves: the registers stay inputs of its summary, and a tail call into it
stores them (``frame_facts._frame_saves``).

Analysis takes every BL's target for a function entry, words of data in an executable segment
that decode as a BL included, and a body that falls into another entry ends there with a tail
call.  Debian's libjq has such words naming instructions in its bison parser's loop
(``yyparse``, split into 11 lifted functions that tail-call each other).  With ``recompiler.elide_saves`` a store of a
callee-saved register into a stack slot is a save, whose read is no input of the function (a
prologue only saves its caller's value to hand it back), and the function owns the register: its
reads of the entry value count for nothing.  In a fragment of another function, though, the
"save" is that function's spill of its own working value into its frame (above the fragment's
SP), and what the fragment reads of the register at its entry is a live value: the summaries of
yyparse's fragments left out X23 (yyn), their tail calls into each other stored it nowhere, and
every run of jq reported a syntax error in jq's own builtins.

``programs/false_entry_spills.c`` has that shape: two words in its executable segment decode
as calls of two labels in ``work``; the first label's function computes X21 and X22 and falls
into the second's, whose loop runs across its entry, reads X21 before writing it, spills the X21
it computes into [sp, #8] around a call, and stores X22 as it came into [sp, #16].  Recompiled,
it runs as under qemu-aarch64 (the oracle)."""

from __future__ import annotations


from tests.cpu_host import aarch64_programs


def test_a_false_entrys_spills_keep_its_registers_inputs(tmp_path) -> None:
    program = aarch64_programs.build_for_qemu("false_entry_spills", tmp_path)
    syms, prog = aarch64_programs.symbols_and_program(program)
    work = syms["work"]
    first, second = work + 44, work + 56  # .Lfirst, after the call; .Lsecond, after the loop's head
    assert first in prog.functions and second in prog.functions, "no entries at the labels: the test shows nothing"
    assert not {first, second} & {i.addr for i in prog.functions[work].insns}
    assert [i.addr for i in prog.functions[first].insns] == [first, first + 4, first + 8]  # falls into .Lsecond
    assert second - 4 in {i.addr for i in prog.functions[second].insns}  # the loop runs across its entry

    stdout = aarch64_programs.exec_matches_qemu(program, aarch64_programs.recompile(program, tmp_path / "bundle"))
    assert stdout.startswith(b"work(1) = ")
