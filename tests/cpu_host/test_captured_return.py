"""A function that keeps its return address in memory and never returns, whose return address
a later jump goes to (Go's ``morestack`` and ``mcall``, resumed by ``gogo``): the recompiler must
not take it for a function that never returns (``analysis.noreturn._captures_return_address``),
or the lifted call ends in a fatal error where the program goes on; and, without
``recompiler.trust_abi``, X30 after such a call is the jump's.  ``programs/captured_return.c``
against qemu-aarch64."""

from __future__ import annotations

import subprocess

import pytest

from recompiler.analysis.noreturn import _captures_return_address
from recompiler.decode import decode
from recompiler.lift.emitter import FunctionPlan
from tests.cpu_host import aarch64_programs


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return aarch64_programs.build_for_qemu("captured_return", tmp_path_factory.mktemp("captured_return"))


def test_captured_return_runs_like_qemu(program, tmp_path) -> None:
    bundle = aarch64_programs.recompile(program, tmp_path / "bundle")
    ref = subprocess.run(["qemu-aarch64", str(program), "4"], capture_output=True, text=True, timeout=120)
    assert ref.returncode == 52 and "after capture 3 acc 52" in ref.stdout, ref.stdout + ref.stderr
    ours = subprocess.run([str(bundle / "nxrun"), "captured_return", "4"], capture_output=True, text=True, timeout=120)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)


def test_x30_after_a_jump_back_is_the_jumps_without_trust_abi(program, tmp_path) -> None:
    """With ``recompiler.trust_abi`` off (Go programs), a call that comes back by a jump to its
    return address from elsewhere has the X30 the jump left (Go's gogo restores the goroutine's
    saved LR), not the call's return address."""
    bundle = aarch64_programs.recompile(program, tmp_path / "bundle", NXRECOMP_RECOMPILER_TRUST_ABI="0")
    ref = subprocess.run(["qemu-aarch64", str(program), "1", "lr"], capture_output=True, text=True, timeout=120)
    assert ref.returncode == 0 and "lr 0x1234" in ref.stdout, ref.stdout + ref.stderr
    ours = subprocess.run([str(bundle / "nxrun"), "captured_return", "1", "lr"], capture_output=True, text=True, timeout=120)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)


def _plan(words: list[int]) -> FunctionPlan:
    return FunctionPlan(0x1000, [decode(w, 0x1000 + 4 * k) for k, w in enumerate(words)])


def test_frame_saves_of_x30_are_no_capture() -> None:
    # stp x29, x30, [sp, #-16]!; str x30, [sp, #8]; stur x30, [x29, #-8]; bl; brk
    assert not _captures_return_address(_plan([0xA9BF7BFD, 0xF90007FE, 0xF81F83BE, 0x94000010, 0xD4200000]))
    # str x30, [x28, #16] (Go's morestack: into the goroutine's context)
    assert _captures_return_address(_plan([0xF9000B9E, 0xD4200000]))
    # mov x3, x30 (a Go prologue hands its own return address to morestack in a register)
    assert _captures_return_address(_plan([0xAA1E03E3, 0xD4200000]))
