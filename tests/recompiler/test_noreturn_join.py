"""No path of the value analysis goes on after a call of a function that never returns
(``analyse._after_noreturn``, ``FunctionValues``' ``noreturn_calls``).

Which functions never return is known only once every body is; the first analysis of each
body lets a call of one fall into the code after it, which belongs to other paths.  gpgv's
format parser spills its step table's base to a frame slot, and the block after its
``__stack_chk_fail`` call reuses that slot for a counter and joins the parser's loop: the base
became unknown there, the table was lost, and a run took run-time lifts of its cases.
``programs/noreturn_join.c`` has that shape in a few instructions; recompiled, it runs
as under qemu-aarch64 with no run-time lift, on a path through the table and on the path that
calls the function that never returns."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cpu_host import aarch64_programs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("noreturn_join")
    program = aarch64_programs.build_for_qemu("noreturn_join", tmp)
    return program, aarch64_programs.recompile(program, tmp / "bundle")


@pytest.mark.parametrize("ops,status", [("abacdab", 0), ("dcba", 0), ("abx", 7)])
def test_a_table_base_in_a_slot_survives_a_noreturn_call(built, ops, status) -> None:
    program, bundle = built
    ours = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", "noreturn_join", ops], capture_output=True, timeout=300
    )
    ref = subprocess.run(["qemu-aarch64", "-0", "noreturn_join", str(program), ops], capture_output=True, timeout=300)
    assert b"lifted at run time" not in ours.stderr, ours.stderr.decode()[-1500:]
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)
    assert ref.returncode == status
