"""Thousands of malformed IPC requests from a recompiled guest (``programs/ipc_fuzz.c``: random
headers and descriptor counts, buffers outside guest memory or in read-only code, bogus and
pseudo handles, unknown domain objects and command ids, Close messages): the host never
crashes, the kernel answers only the results Horizon's kernel gives for them (switchbrew
Error_codes / Atmosphère svc results: 0xE401 InvalidHandle, 0xD401 InvalidCurrentMemory, 0xE801
InvalidCombination for a message larger than its buffer, 0xF601 SessionClosed after a Close),
and a well-formed request still works afterwards.  Unknown commands are stubbed
(cpu_host.ipc_unknown = stub) so the run goes on past them."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.horizon.hz_build import ROOT, make_bundle

ALLOWED = {0x0, 0xE401, 0xD401, 0xE801, 0xF601}


def test_ipc_fuzz(tmp_path) -> None:
    bundle = make_bundle("ipc_fuzz", tmp_path)
    env = {
        **os.environ,
        "NXRECOMP_CPU_HOST_IPC_UNKNOWN": "stub",
        "NXRECOMP_CPU_HOST_SD_DIR": str(tmp_path / "sd"),
        "NXRECOMP_CPU_HOST_SAVE_DIR": str(tmp_path / "saves"),
    }
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=180, env=env
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "raised" not in r.stderr  # no exception of ours inside the IPC layer
    lines = r.stdout.splitlines()
    assert lines[-2:] == ["after the fuzz: 0 0 100", "fuzz done 4000"]
    counts = {int(x.split()[1].rstrip(":"), 16): int(x.split()[2]) for x in lines if x.startswith("result ")}
    assert set(counts) <= ALLOWED, counts
    assert sum(counts.values()) == 4000
    # every class of refusal was exercised, and many requests reached the services
    assert all(counts.get(c, 0) > 20 for c in (0xE401, 0xD401, 0xE801)), counts
    assert counts.get(0, 0) > 500, counts
