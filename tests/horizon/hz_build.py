"""Shared helpers of the Horizon tests: build an ExeFS of one of our guest programs
(examples/horizon_hello) and recompile it into a bundle; run a bundle with ``nxrecomp hz-run``."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from examples.horizon_hello.build_exefs import build_exefs
from recompiler.formats.pack_npdm import NpdmSpec
from recompiler.horizon import recompile_exefs

ROOT = Path(__file__).resolve().parents[2]


def make_bundle(program: str, tmp: Path, npdm: NpdmSpec | None = None) -> Path:
    exefs = build_exefs(program, tmp / f"{program}_exefs", npdm)
    recompile_exefs(exefs, tmp / f"{program}_bundle")
    return tmp / f"{program}_bundle"


def nxrecomp(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nxrecomp", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
