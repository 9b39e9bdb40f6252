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
    return subprocess.run([sys.executable, "-m", "nxrecomp", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def bundle_from_c(c_text: str, romfs_files: dict[str, bytes], work: Path) -> Path:
    """A guest program given as C source (built with our guest SDK) plus RomFS files, recompiled
    into ``work/bundle``."""
    from recompiler.formats.pack_romfs import pack_romfs

    work.mkdir(parents=True, exist_ok=True)
    src = work / "guest.c"
    src.write_text(c_text)
    rom = work / "rom.bin"
    rom.write_bytes(pack_romfs(romfs_files))
    recompile_exefs(build_exefs(src, work / "exefs"), work / "bundle", romfs=rom)
    return work / "bundle"


def run_guest_c(
    c_text: str, romfs_files: dict[str, bytes], work: Path, timeout: float = 240
) -> tuple[subprocess.CompletedProcess, str, Path]:
    """``bundle_from_c``, then ``nxrecomp run`` of it through every process with frames written
    as PNG: (the run, its run.log, the frames folder)."""
    bundle = bundle_from_c(c_text, romfs_files, work)
    frames = work / "frames"
    r = nxrecomp("run", str(bundle), "--run-dir", str(work / "run"), "--frames-dir", str(frames), timeout=timeout)
    return r, (work / "run" / "run.log").read_text(), frames
