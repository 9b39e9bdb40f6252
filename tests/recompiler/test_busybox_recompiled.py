"""Debian's arm64 busybox-static, recompiled to x86-64 by nxrecomp and run by the CPU host's
Linux personality: stdout, stderr and exit status equal qemu-aarch64's on the same inputs.

The bundle is built once per run; compiled shards come from the object cache (cache_dir), so
only the first run on a machine pays the full compile."""
from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from nxrecomp import debian
from tests.cpu_host.busybox_cases import CASES, HEAVY_CASES, compare_with_qemu, expected_status, make_inputs

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def busybox() -> Path:
    try:
        return debian.busybox("arm64")
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch busybox-static:arm64: {e}")


@pytest.fixture(scope="module")
def bundle(busybox, tmp_path_factory) -> Path:
    # one build per test run, shared by the xdist workers (the first builds, the others wait)
    root = tmp_path_factory.getbasetemp().parent
    out = root / "bb-bundle"
    with open(root / "bb-bundle.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "manifest.json").exists():
            r = subprocess.run([sys.executable, "-m", "nxrecomp", "recompile", str(busybox), "-o", str(out)],
                               capture_output=True, text=True, timeout=3600)
            assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return make_inputs(tmp_path_factory.mktemp("bbwork"))


def compare(busybox: Path, bundle: Path, work: Path, argv: list[str], stdin: bytes = b"") -> int:
    return compare_with_qemu([sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--"], busybox, work, argv, stdin)


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(a)[:40])
def test_recompiled_busybox_matches_qemu(busybox, bundle, work, argv):
    assert compare(busybox, bundle, work, argv) == expected_status(argv)


def test_recompiled_busybox_reads_stdin(busybox, bundle, work):
    assert compare(busybox, bundle, work, ["tr", "a-z", "n-za-m"], (work / "words.txt").read_bytes()) == 0


@pytest.mark.heavy
@pytest.mark.parametrize("argv", list(HEAVY_CASES.values()), ids=list(HEAVY_CASES))
def test_recompiled_busybox_heavy(busybox, bundle, work, argv):
    assert compare(busybox, bundle, work, argv) == 0
