"""The busybox applet cases both busybox suites run (Unicorn as the CPU in
tests/cpu_host/test_linux_busybox.py; recompiled code in tests/recompiler/test_busybox_recompiled.py),
each compared with qemu-aarch64 running the same binary on the same inputs; and the fetch of
the Debian binary and the one recompiled bundle a test run shares."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_tmp import run_dir


def fetch_busybox() -> Path:
    """Debian's arm64 busybox-static (downloaded once into the cache), or a loud skip."""
    from nxrecomp.common import debian

    try:
        return debian.busybox("arm64")
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch busybox-static:arm64: {e}")


def shared_bundle(busybox: Path, tmp_path_factory) -> Path:
    """The recompiled bundle of one test run, shared by the xdist workers and the suites (the
    first to get the lock builds it, the others wait; shards come from the object cache)."""
    root = run_dir(tmp_path_factory)
    out = root / "bb-bundle"
    with open(root / "bb-bundle.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "manifest.json").exists():
            r = subprocess.run(
                [sys.executable, "-m", "nxrecomp", "recompile", str(busybox), "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=3600,
            )
            assert r.returncode == 0, r.stderr[-3000:]
            assert (out / "nxrun").exists() and (out / "launch.txt").exists(), "recompile installs the launcher"
    return out


ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}

CASES = [
    ["echo", "hello", "world"],
    ["cat", "words.txt"],
    ["md5sum", "lines.txt", "words.txt"],
    ["sha1sum", "lines.txt"],
    ["sha256sum", "lines.txt"],
    ["sha512sum", "words.txt"],
    ["wc", "lines.txt", "words.txt"],
    ["sort", "-n", "-k1,1", "-s", "lines.txt"],
    ["uniq", "-c", "words.txt"],
    ["cut", "-d", " ", "-f", "2,3", "lines.txt"],
    ["head", "-n", "5", "lines.txt"],
    ["tail", "-n", "3", "lines.txt"],
    ["seq", "-s", ",", "1", "3", "20"],
    ["expr", "12", "*", "34", "+", "5"],
    ["printf", "%5.2f|%-4s|%x\n", "3.14159", "ab", "255"],
    ["od", "-A", "x", "-t", "x1", "-c", "words.txt"],
    ["grep", "-n", "the", "words.txt"],
    ["sed", "-e", "s/the/THE/g", "-e", "/lazy/d", "words.txt"],
    ["awk", '{ s += $1 } END { printf "%d %.3f\\n", s, s / NR }', "lines.txt"],
    [
        "awk",
        'BEGIN { x = 17; s = "nxrecomp"; printf "%s %d %05.1f %s\\n", toupper(substr(s, 3)), x % 5, x / 3, '
        'length(s) * 2; n = split("a:b:c", p, ":"); print n, p[2], index(s, "rec") }',
    ],
    ["ls", "/nonexistent-dir"],
    ["false"],
    ["sh", "-c", "for i in 1 2 3; do echo $((i * i)); done; exit 7"],
    [
        "sh",
        "-c",
        "f() { local n=$1; [ $n -le 1 ] && { echo 1; return; }; echo $(( n * $(f $((n - 1))) )); }; "
        "f 10; x=0; while [ $x -lt 5 ]; do x=$((x + 1)); done; echo $x; case abc in a*) echo yes;; esac; "
        'set -- a b c; echo $# $2; test -n "$HOME" && echo home',
    ],
    ["sh", "-c", "cat words.txt | tr a-z A-Z | sort | uniq -c"],
    ["sh", "-c", "gzip -c lines.txt | gunzip -c | md5sum; bzip2 -c words.txt | bunzip2 | wc -c"],
]

HEAVY_CASES = {
    "sort-200k": ["sh", "-c", "seq 200000 | sort -r | md5sum"],
    "gzip-bzip2-100k": ["sh", "-c", "seq 100000 | gzip -9 | gunzip | bzip2 | bunzip2 | sha256sum"],
    "awk-loop": ["awk", "BEGIN { for (i = 0; i < 300000; i++) s = (s * 31 + i) % 1000003; print s }"],
}


def expected_status(argv: list[str]) -> int:
    """The exit status each case is meant to have (a failure that is meant, so a case that fails
    by accident is not taken for a match of two identical errors)."""
    return {"ls": 1, "false": 1}.get(argv[0], 7 if "exit 7" in argv[-1] else 0)


def make_inputs(d: Path) -> Path:
    (d / "lines.txt").write_text("".join(f"{(i * 7919) % 1000} line {i % 13}\n" for i in range(3000)))
    (d / "words.txt").write_text("the quick brown fox\njumps over\nthe lazy dog\n\nthe end\n")
    return d


def compare_with_qemu(ours: list[str], busybox: Path, work: Path, argv: list[str], stdin: bytes = b"") -> int:
    """Run ``ours + argv`` and qemu-aarch64 on ``busybox`` with ``argv`` in ``work``; assert
    equal stdout, stderr and exit status; return the status."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    got = subprocess.run([*ours, *argv], input=stdin, capture_output=True, cwd=work, env=ENV, timeout=600)
    ref = subprocess.run(
        ["qemu-aarch64", "-0", argv[0], str(busybox), *argv[1:]], input=stdin, capture_output=True, cwd=work, env=ENV, timeout=600
    )
    why = (
        f"{argv}: ours exit {got.returncode} stderr {got.stderr[-600:]!r}; qemu exit {ref.returncode} "
        f"stderr {ref.stderr[-300:]!r}"
    )
    assert (got.returncode, got.stderr.decode(errors="replace")) == (ref.returncode, ref.stderr.decode(errors="replace")), why
    assert got.stdout == ref.stdout, f"{argv}: stdout differs: ours {got.stdout[:300]!r} qemu {ref.stdout[:300]!r}"
    return ref.returncode
