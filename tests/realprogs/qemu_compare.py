"""One case of a real-program suite (test_corpus.py, test_cxx.py) run recompiled and under
qemu-aarch64, each in a fresh folder holding the same inputs: stdout (parts of it masked where
a program prints a time), stderr, exit status and the files each run leaves in its folder must
be identical, with 0 run-time lifts (issue 29: the static analysis finds all code)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.realprogs import results_table
from tests.realprogs.conftest import ENV


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def compare(
    row: list[int],
    aarch64: Path,
    bundle_dir: Path,
    tmp: Path,
    argv: list[str],
    inputs: dict[str, Path | str],
    stdin: bytes = b"",
    mask: re.Pattern | None = None,
    timeout: int = 900,
) -> subprocess.CompletedProcess:
    """Run ``argv`` (argv[0] the program's name) with ``bundle_dir``'s launcher and with
    qemu-aarch64 on ``aarch64``, each in ``tmp``/ours or ``tmp``/qemu with copies of ``inputs``
    (name -> file or text) and ``stdin``; assert 0 run-time lifts, identical exit status,
    stderr, stdout (``mask``'s matches, two groups around the varying part, replaced) and
    folder contents.  ``row`` (the suite's table: [cases run, identical, run-time lifts]) counts
    the case, its lifts, and whether it was identical."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    runs, folders = [], []
    for who in ("ours", "qemu"):
        d = tmp / who
        d.mkdir(parents=True)
        for name, src in inputs.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            if isinstance(src, Path):
                shutil.copyfile(src, d / name)
            else:
                (d / name).write_text(src)
        # (the native launcher is what `nxrecomp exec` runs; PYTHONPATH passed on so that a
        # worktree's run-time lifter is its own)
        cmd = [str(bundle_dir / "nxrun"), *argv] if who == "ours" else ["qemu-aarch64", "-0", argv[0], str(aarch64), *argv[1:]]
        env = {**ENV, **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
        runs.append(subprocess.run(cmd, input=stdin, capture_output=True, cwd=d, env=env, timeout=timeout))
        folders.append(d)
    ours, ref = runs
    row[0] += 1
    lifts = len(results_table.LIFT_NOTICE.findall(ours.stderr))
    row[2] += lifts
    assert lifts == 0, f"{argv}: {lifts} run-time lifts (static analysis missed code): {ours.stderr[-1500:]!r}"
    why = (
        f"{argv}: ours exit {ours.returncode} stderr {ours.stderr[-800:]!r}; qemu exit {ref.returncode} "
        f"stderr {ref.stderr[-300:]!r}"
    )
    assert (ours.returncode, ours.stderr) == (ref.returncode, ref.stderr), why
    a, b = ours.stdout, ref.stdout
    if mask is not None:
        a, b = mask.sub(rb"\1N\2", a), mask.sub(rb"\1N\2", b)
    if a != b:
        k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        raise AssertionError(
            f"{argv}: stdout differs at byte {k} (ours {len(a)} bytes, qemu {len(b)}): "
            f"ours {a[max(0, k - 80) : k + 120]!r}\nqemu {b[max(0, k - 80) : k + 120]!r}"
        )
    fo, fq = _files(folders[0]), _files(folders[1])
    assert fo.keys() == fq.keys(), f"{argv}: files left ours {sorted(fo)} qemu {sorted(fq)}"
    for name in fo:
        assert fo[name] == fq[name], f"{argv}: {name} differs ({len(fo[name])} bytes, qemu {len(fq[name])})"
    row[1] += 1
    return ours
