"""Debian's arm64 busybox-static, recompiled to x86-64 by nxrecomp and run by the CPU host's
Linux personality: stdout, stderr and exit status equal qemu-aarch64's on the same inputs.

The bundle is built once per run; compiled shards come from the object cache (cache_dir), so
only the first run on a machine pays the full compile."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cpu_host.busybox_cases import (
    CASES,
    HEAVY_CASES,
    compare_with_qemu,
    expected_status,
    fetch_busybox,
    make_inputs,
    shared_bundle,
)

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def busybox() -> Path:
    return fetch_busybox()


@pytest.fixture(scope="module")
def bundle(busybox, tmp_path_factory) -> Path:
    return shared_bundle(busybox, tmp_path_factory)


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
