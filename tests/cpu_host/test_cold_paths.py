"""Cold paths out of hot functions (recompiler/lift/cold.py) on a C++ program built here
(programs/cold_paths.cpp, zig's clang++ for aarch64, static libc++): a comparison with
``memcmp`` on its hot path and a throw (with a cleanup pad ending in ``_Unwind_Resume``) on its
cold one, a function whose cold paths read integer and floating-point values its hot path
computed (an error reporter that exits, ``abort``, ``__assert_fail``), and a function that
catches its own throw (its pad goes back to hot code: not cold).  Each mode takes one cold
path after the hot loops: the exception caught, uncaught (``std::terminate``), the reporter's
exit status, ``abort``'s and a failed assertion's SIGABRT.  Stdout, stderr and the exit status
must be qemu-aarch64's, with the cold paths split (checked in the bundle's C) and without
(``recompiler.no_opt = cold``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs

MODES = ("hot", "throw", "uncaught", "fail", "abort", "assert")
# each mode's exit status under qemu (SIGABRT: -6), so that no mode passes by not taking its path
EXPECTED = {"hot": 0, "throw": 0, "uncaught": -6, "fail": 3, "abort": -6, "assert": -6}


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build_for_qemu("cold_paths", tmp_path_factory.mktemp("cold"))


@pytest.fixture(scope="module")
def bundles(program, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cold_bundles")
    return {
        "split": aarch64_programs.recompile(program, d / "split"),
        "kept": aarch64_programs.recompile(program, d / "kept", NXRECOMP_RECOMPILER_NO_OPT="cold"),
    }


def _symbol(program: Path, name: str) -> int:
    syms, _prog = aarch64_programs.symbols_and_program(program)
    return next(a for s, a in syms.items() if name in s)


def test_the_hot_functions_leave_their_cold_paths_to_the_twin(program, bundles):
    text = "".join(p.read_text() for p in sorted((bundles["split"] / "src").glob("*.c")))
    for sym in ("_Z8key_lessRK3KeyS1_", "_Z4stepllPKdi"):
        a = _symbol(program, sym)
        f = text[text.index(f"NxRet F_{a:x}(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) {{") :]
        f = f[: f.index("\n}\n")]
        assert re.search(rf"s->resume = 3; MUSTTAIL return R_{a:x}\(", f), f"{sym}: no cold exit"
        assert "_r = F_" not in f, f"{sym}: a call stayed in F_x"
    kept = "".join(p.read_text() for p in sorted((bundles["kept"] / "src").glob("*.c")))
    assert "s->resume = 3;" not in kept


# qemu-aarch64's own report of a guest killed by a signal (the kernel prints none)
QEMU_SIGNAL = re.compile(rb"qemu: uncaught target signal \d+ \([^)]*\) - core dumped\n")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("way", ("split", "kept"))
def test_every_mode_runs_as_under_qemu(program, bundles, mode, way):
    ours = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(bundles[way]), "--", program.name, mode], capture_output=True, timeout=300
    )
    ref = subprocess.run(["qemu-aarch64", str(program), mode], capture_output=True, timeout=300)
    ref_err = QEMU_SIGNAL.sub(b"", ref.stderr)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref_err), ours.stderr[-1500:]
    assert ref.stdout.startswith(b"less ") and ref.returncode == EXPECTED[mode], (ref.returncode, ref.stdout)
