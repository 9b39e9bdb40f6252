"""Non-local returns with callee-saved registers kept in host locals only
(``recompiler.elide_saves``, docs/ARCHITECTURE.md "Returns to somewhere else").

A call does not store X19-X28/D8-D15 for a callee that reads them only to save them, so after a
longjmp the frame that called setjmp must go on in its own C frame (its catch, ``C_x``), and a
frame that nx_run would have to re-enter from NxCpu at a call site that did not store them
stops with a fatal error naming the setting.  ``programs/nonlocal_sites.c`` lands somewhere
else three ways; qemu-aarch64 runs the same binary as the reference."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs

FATAL = "recompile with NXRECOMP_RECOMPILER_ELIDE_SAVES=0"


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build_for_qemu("nonlocal_sites", tmp_path_factory.mktemp("nonlocal"))


def _bundle(program: Path, out: Path, elide: bool) -> Path:
    return aarch64_programs.recompile(program, out, NXRECOMP_RECOMPILER_ELIDE_SAVES="1" if elide else "0")


@pytest.fixture(scope="module")
def bundles(program, tmp_path_factory) -> dict[bool, Path]:
    root = tmp_path_factory.mktemp("nonlocal_bundles")
    return {elide: _bundle(program, root / f"elide{int(elide)}", elide) for elide in (True, False)}


def _ours(bundle: Path, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bundle / "nxrun"), "nonlocal_sites", mode, "40"], capture_output=True, text=True, timeout=300)


def _qemu(program: Path, mode: str) -> subprocess.CompletedProcess:
    r = subprocess.run(["qemu-aarch64", str(program), mode, "40"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and f"{mode} acc" in r.stdout, r.stdout[-300:] + r.stderr[-300:]
    return r


@pytest.mark.parametrize("mode", ["nested", "vla"])
def test_setjmp_frames_run_like_qemu_with_saves_elided(program, bundles, mode):
    """Nested setjmp frames and longjmps out of deep recursion; a VLA between setjmp and the
    longjmp (the frame is found by the SP it had at its setjmp call, ``_sjsp``)."""
    ref = _qemu(program, mode)
    ours = _ours(bundles[True], mode)
    assert (ours.returncode, ours.stdout, ours.stderr) == (0, ref.stdout, ref.stderr)


@pytest.mark.parametrize("mode", ["pointer"])
def test_resume_at_a_site_that_kept_registers_in_locals_stops_with_a_clear_error(program, bundles, mode):
    """Never output other than qemu's: setjmp called through a pointer is an unknown callee,
    whose call site stores no callee-saved register, and the frame resumed there from NxCpu has
    no values of them, so the program stops naming the setting (exit 134, like the runtime's
    other fatal errors)."""
    _qemu(program, mode)
    ours = _ours(bundles[True], mode)
    assert ours.returncode == 134, (ours.returncode, ours.stdout[-300:], ours.stderr[-500:])
    first = ours.stderr.splitlines()[0]
    assert "non-local return resumed a frame" in first and FATAL in first, first


@pytest.mark.parametrize("mode", ["nested", "vla", "pointer"])
def test_every_mode_runs_like_qemu_with_the_setting_off(program, bundles, mode):
    ref = _qemu(program, mode)
    ours = _ours(bundles[False], mode)
    assert (ours.returncode, ours.stdout, ours.stderr) == (0, ref.stdout, ref.stderr)
