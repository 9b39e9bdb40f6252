"""Small C programs of tests/cpu_host/programs, built here for aarch64 (static musl, -O2) with
zig's clang, for tests that recompile them and compare with qemu-aarch64."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"


def build(name: str, out_dir: Path, *flags: str, out_name: str | None = None) -> Path:
    """``programs/<name>.c`` (or ``<name>.cpp``, with zig's libc++) compiled to ``out_dir/<name>``
    (``out_name``), with more compiler ``flags`` (``-DNAME=VALUE``)."""
    out = out_dir / (out_name or name)
    cxx = (PROGRAMS / f"{name}.cpp").exists()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ziglang",
            "c++" if cxx else "cc",
            "-target",
            "aarch64-linux-musl",
            "-static",
            "-O2",
            *flags,
            str(PROGRAMS / f"{name}.{'cpp' if cxx else 'c'}"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return out


def build_for_qemu(name: str, out_dir: Path, *flags: str, out_name: str | None = None) -> Path:
    """``build()``, skipping the test loudly where qemu-aarch64, the reference it is compared
    with, is not installed."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    return build(name, out_dir, *flags, out_name=out_name)


def recompile(program: Path, out: Path, **settings: str) -> Path:
    """``nxrecomp recompile PROGRAM -o OUT`` with settings given as their NXRECOMP_* variables
    (e.g. ``NXRECOMP_RECOMPILER_SIGNAL_POLLS="1"``); returns ``out``."""
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(program), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, **settings},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def exec_matches_qemu(program: Path, bundle: Path) -> bytes:
    """Runs ``bundle`` (``nxrecomp exec``) and ``program`` under qemu-aarch64 and asserts the
    same exit status, stdout and stderr; returns qemu's stdout."""
    ours = subprocess.run([sys.executable, "-m", "nxrecomp", "exec", str(bundle)], capture_output=True, timeout=300)
    ref = subprocess.run(["qemu-aarch64", str(program)], capture_output=True, timeout=300)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr), (
        ours.stdout,
        ours.stderr[-1500:],
    )
    return ref.stdout


def symbols_and_program(program: Path):
    """(symbol -> address from ``.symtab``, the static analysis's Program) of a built program,
    for tests that check where analysis put a function's body."""
    from elftools.elf.elffile import ELFFile

    from recompiler.analyse import analyse
    from recompiler.link import link_program
    from recompiler.pipeline import eh_frames, ifunc_slots, image_memory

    with open(program, "rb") as f:
        syms = {s.name: s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()}
    image = link_program(str(program))
    return syms, analyse(image_memory(image), image.entry, image.func_hints, eh_frames(image), ifunc_slots(image))
