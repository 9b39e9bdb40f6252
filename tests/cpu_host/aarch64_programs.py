"""Small C programs of tests/cpu_host/programs, built here for aarch64 (static musl, -O2) with
zig's clang, for tests that recompile them and compare with qemu-aarch64."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "programs"


def build(name: str, out_dir: Path) -> Path:
    """``programs/<name>.c`` compiled to ``out_dir/<name>``."""
    out = out_dir / name
    r = subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", "aarch64-linux-musl", "-static", "-O2",
                        str(PROGRAMS / f"{name}.c"), "-o", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return out
