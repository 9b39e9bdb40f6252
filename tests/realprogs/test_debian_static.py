"""Debian 12 arm64 static programs nobody here wrote, recompiled and run against qemu-aarch64:
``zsh-static`` (scripts covering arithmetic, arrays, parameter expansion, printf, read,
redirections, here-docs, patterns, functions, traps), ``sash`` (another code base: its
built-in commands) and busybox applets beyond tests/cpu_host/busybox_cases.py.  stdout, stderr
and exit status must be identical; a branch recovery miss is a fatal error at run time
(``branch to an address with no lifted code``), so identical output means analysis found
every target the run took.  The module prints a table: program, cases, identical, run-time lifts (a lift's notice on
stderr would also make stderr differ from qemu's).

Inputs are in tests/realprogs/debian_cases.py (with the busybox applets skipped and why).
CI runs a handful of zsh scripts and the sash script; the rest is ``heavy``.  The packages
are downloaded at test time (nxrecomp.common.debian: apt-get download into the cache)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host.busybox_cases import fetch_busybox, make_inputs, shared_bundle
from tests.realprogs import debian_cases as C
from tests.realprogs import results_table
from tests.shared_tmp import run_dir

pytestmark = pytest.mark.network
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}
RESULTS: dict[str, list[int]] = {}  # program -> [cases run, identical, run-time lifts]
ZSH_CI = {"arith", "params", "printf", "heredocs", "functions-nofork", "redirections-nofork", "params-more"}


def _fetch(package: str, rel: str) -> Path:
    from nxrecomp.common import debian

    try:
        return debian.fetch(package, "arm64") / rel
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch {package}:arm64: {e}")


def _bundle(binary: Path, name: str, tmp_path_factory) -> Path:
    """The program recompiled once per test run (shared by xdist workers under a lock)."""
    root = run_dir(tmp_path_factory)
    out = root / f"debian-{name}-bundle"
    with open(root / f"debian-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "manifest.json").exists():
            r = subprocess.run(
                [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=5400,
            )
            assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture(scope="module", autouse=True)
def table(request):
    yield
    results_table.write(request, RESULTS)


def compare(
    program: str, binary: Path, bundle: Path, tmp: Path, argv: list[str], stdin: bytes = b"", files: dict[str, str] | None = None
) -> int:
    """Run ``argv`` (argv[0] the program's name) recompiled and under qemu-aarch64, each in a
    fresh folder with the same input files; assert identical stdout, stderr, exit status."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    runs = []
    for who in ("ours", "qemu"):
        (tmp / who).mkdir(parents=True, exist_ok=True)
        d = make_inputs(tmp / who)
        for name, text in (files or {}).items():
            (d / name).write_text(text)
        cmd = (
            [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", *argv]
            if who == "ours"
            else ["qemu-aarch64", "-0", argv[0], str(binary), *argv[1:]]
        )
        # (PYTHONPATH passed on: a worktree's own code runs its own bundle)
        env = {**ENV, **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ and who == "ours" else {})}
        runs.append(subprocess.run(cmd, input=stdin, capture_output=True, cwd=d, env=env, timeout=600))
    ours, ref = runs
    row = RESULTS.setdefault(program, [0, 0, 0])
    row[0] += 1
    row[2] += len(results_table.LIFT_NOTICE.findall(ours.stderr))
    why = (
        f"{argv}: ours exit {ours.returncode} stderr {ours.stderr[-800:]!r}; qemu exit {ref.returncode} "
        f"stderr {ref.stderr[-300:]!r}"
    )
    assert (ours.returncode, ours.stderr) == (ref.returncode, ref.stderr), why
    assert ours.stdout == ref.stdout, f"{argv}: stdout ours {ours.stdout[-600:]!r}\nqemu {ref.stdout[-600:]!r}"
    row[1] += 1
    return ref.returncode


@pytest.fixture(scope="module")
def zsh(tmp_path_factory) -> tuple[Path, Path]:
    binary = _fetch("zsh-static", "bin/zsh-static")
    return binary, _bundle(binary, "zsh", tmp_path_factory)


@pytest.fixture(scope="module")
def sash(tmp_path_factory) -> tuple[Path, Path]:
    binary = _fetch("sash", "bin/sash")
    return binary, _bundle(binary, "sash", tmp_path_factory)


def _zsh_params():
    for name, script, stdin, _signals in C.ZSH:  # (scripts that fork need guest signals: they run)
        marks = [] if name in ZSH_CI else [pytest.mark.heavy]
        if name in C.ZSH_XFAIL:
            marks.append(pytest.mark.xfail(reason=C.ZSH_XFAIL[name], strict=True))
        yield pytest.param(name, script, stdin, marks=marks, id=name)


@pytest.mark.parametrize("name,script,stdin", list(_zsh_params()))
def test_zsh_script_matches_qemu(zsh, tmp_path, name, script, stdin) -> None:
    binary, bundle = zsh
    compare("zsh-static", binary, bundle, tmp_path, ["zsh", "-f", "script.zsh"], stdin, {"script.zsh": script})


def test_sash_script_matches_qemu(sash, tmp_path) -> None:
    binary, bundle = sash
    assert compare("sash", binary, bundle, tmp_path, ["sash", "-f", "script.sash"], b"", {"script.sash": C.SASH}) == 5


@pytest.fixture(scope="module")
def busybox(tmp_path_factory) -> tuple[Path, Path]:
    binary = fetch_busybox()
    return binary, shared_bundle(binary, tmp_path_factory)


@pytest.mark.heavy
@pytest.mark.parametrize("argv,stdin", C.BUSYBOX, ids=lambda a: " ".join(a)[:40] if isinstance(a, list) else "")
def test_busybox_applet_matches_qemu(busybox, tmp_path, argv, stdin) -> None:
    binary, bundle = busybox
    compare("busybox", binary, bundle, tmp_path, argv, stdin)
