"""Callee-saved registers across calls, tail calls and longjmps, with whole-program register
summaries (recompiler/lift/interproc.py): a call stores only what its callee may read, a return
stores X19-X29 back only where its own calls overwrote them, and frames whose C frames a
longjmp unwound are re-entered from NxCpu.  A program built here for aarch64 keeps values live
in callee-saved registers across all of these and prints them; the recompiled program must
print what qemu-aarch64 prints."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build("unwind_regs", tmp_path_factory.mktemp("unwind"))


def test_callee_saved_registers_survive_calls_and_longjmps_like_qemu(program, tmp_path):
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    out = tmp_path / "bundle"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(program), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    ours = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(out), "--", "unwind_regs", "300"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    ref = subprocess.run(["qemu-aarch64", str(program), "300"], capture_output=True, text=True, timeout=300)
    assert ref.returncode == 0 and "hits 1500" in ref.stdout, ref.stdout[-300:]
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)
