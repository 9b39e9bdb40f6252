"""A direct jump out of a function with its frame still live goes on into the code it reaches
(``analysis.live_frames.join_live_frames``): that code returns on the jumper's behalf and is
no function of its own.

Taken for a tail call, such a jump stored the jumper's working values of X19-X28 into ``NxCpu``
for its callee, whose epilogue then restored the jumper's caller's values into its own C locals
only (a return hands back only the callee-saved slots the function overwrote itself), so the
working value came back to the caller in the slot.  ``programs/live_frame_jumps.c``: a jump to
a cold part with an FDE of its own (GCC's ``foo.cold``), which returns itself or jumps back; a
jump into another function's shared epilogue, which a rodata word names (a weak entry outside
the jumper's span); a fall into an address that a word in the code names as a ``bl`` target
(Debian's busybox-static and gpgv-static have such falls: rodata that decodes as a ``bl``).  Each
caller keeps 42 in X28 and asks ``snap``, which stores the X28 it is called with (as setjmp
does), before and after its call.  Recompiled, it runs as under qemu-aarch64 (before, the
second answer was the jumper's working value: 105, 205, 405, 505)."""

from __future__ import annotations


from tests.cpu_host import aarch64_programs


def test_jumps_with_a_live_frame_join_the_jumper_and_run_as_under_qemu(tmp_path) -> None:
    program = aarch64_programs.build_for_qemu("live_frame_jumps", tmp_path)
    syms, prog = aarch64_programs.symbols_and_program(program)
    for part in ("hot.cold", "hot2.cold", "owner"):
        assert syms[part] in prog.functions, f"{part} is no entry: the test shows nothing"
    where = dict(prog.stats.live_frame_where)
    # the static facts: each of these jumps leaves with the frame live, big's tail call does not
    falls_mid = syms["falls"] + 16  # stp, mov, stp, add: the `bl` word's target
    assert falls_mid in prog.functions, "the `bl` word's target is no entry: the test shows nothing"
    expect = {
        syms["hot"] + 16: syms["hot.cold"],
        syms["hot2"] + 16: syms["hot2.cold"],
        syms["cross"] + 16: syms["owner"] + 24,
        falls_mid - 4: falls_mid,
    }
    for a, t in expect.items():
        assert where.get(a) == t, (hex(a), {hex(k): hex(v) for k, v in where.items()})
    assert not any(a in range(syms["big"], syms["big"] + 0x30) for a in where), "big's tail call restored its frame"
    # each jumper's body goes on into the code it jumps to
    for fn, last in (
        ("hot", syms["hot.cold"] + 16),
        ("hot2", syms["hot2.cold"] + 8),
        ("cross", syms["owner"] + 36),
        ("falls", syms["falls"] + 32),
    ):
        body = {i.addr for i in prog.functions[syms[fn]].insns}
        assert last in body, (fn, hex(last), sorted(hex(a) for a in body))

    stdout = aarch64_programs.exec_matches_qemu(program, aarch64_programs.recompile(program, tmp_path / "bundle"))
    for what in ("hot", "hot2", "cross", "falls"):
        assert f"{what}(5): X28 before the call 42, after it 42,".encode() in stdout, stdout
