"""``recompiler.call_abi = preserve_none``: lifted functions and the runtime's nx_call_ind /
nx_jump under clang's preserve_none convention (nxrt.h NX_CC).  The frame-pointer program of
test_frame_pointer_arg (a direct call, a call through a register that goes through
nx_call_ind, a direct tail call, AAPCS64 frame records) is built and run from a C driver with
the setting on, in a process of its own (signature.SIG is fixed at import): the same answers as
with SysV, and its C carries the convention.  A lifted function and the runtime function it
tail-calls under different conventions do not compile (musttail), and a driver calling
preserve_none code as SysV passes its arguments in the wrong registers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pytest_with_settings(settings: dict[str, str], base: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run pytest on ``args`` in a fresh process with ``settings`` (NXRECOMP_* variables) set and
    its temporary folders under ``base``: a whole test module under another build setting."""
    env = {**os.environ, **settings, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", f"--basetemp={base}", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def test_preserve_none_builds_and_runs(tmp_path: Path) -> None:
    base = tmp_path / "run"
    settings = {"NXRECOMP_RECOMPILER_CALL_ABI": "preserve_none", "NXRECOMP_NXRECOMP_CACHE_DIR": str(tmp_path / "cache")}
    r = pytest_with_settings(settings, base, str(ROOT / "tests/recompiler/test_frame_pointer_arg.py"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    shards = [p for p in base.rglob("shard_*.c") if "/src/" in str(p)]
    assert shards and all("NX_CC" in p.read_text() for p in shards), shards
