"""A direct branch of a function to a label of its own that a data word also names goes on into
the label's code (``Analyser._walk``): it is no tail call into a function of its own.

Analysis takes every aligned data word that names code for a function pointer (a weak entry),
and a body stops at another entry, so the branch became a tail call.  A tail call stores into
``NxCpu`` the registers its callee reads, callee-saved ones too, and the callee's returns hand
back only the callee-saved registers whose slots it overwrote itself: a real function's
epilogue has restored them before any tail call.  A label inside a function runs with that
function's working values instead, and its epilogue restores the caller's values into the
label function's own locals only.  Debian's gpgv-static: ``_int_malloc`` branches (``cbnz``) to
the code after its call of ``malloc_printerr``, which a rodata word happens to name; the arena
pointer it kept in X28 came back to ``malloc``'s callers in X28's slot, and the packet parser,
which keeps X28 there (``mem_regs``), read a public key with a wrong count of MPIs ("mpi larger
than indicated length (0 bits)", ``keydb_search failed: Invalid packet``).

``programs/branch_into_weak_entry.c`` has that shape: ``work`` keeps a working value in X28 and
branches to a label after a call of ``abort`` (nothing falls into it) that a rodata word names;
its caller keeps 42 in X28 and asks ``snap``, which stores the X28 it is called with (as setjmp
does), before and after the call.  Recompiled, it runs as under qemu-aarch64."""

from __future__ import annotations


from tests.cpu_host import aarch64_programs


def test_a_branch_to_a_label_a_data_word_names_stays_in_the_function(tmp_path) -> None:
    program = aarch64_programs.build_for_qemu("branch_into_weak_entry", tmp_path)
    syms, prog = aarch64_programs.symbols_and_program(program)
    work = syms["work"]
    label = work + 24  # stp, mov, stp, add, cbnz, bl abort: the data word's target
    assert label in prog.functions, "the data word's target is no entry any more: the test shows nothing"
    body = [i.addr for i in prog.functions[work].insns]
    assert label in body and body[-1] == label + 12, [hex(a) for a in body]

    stdout = aarch64_programs.exec_matches_qemu(program, aarch64_programs.recompile(program, tmp_path / "bundle"))
    assert stdout.startswith(b"keeps(5): X28 before the call 42, after it 42, work 106\n")
