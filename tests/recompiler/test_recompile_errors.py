"""Bad input to `nxrecomp recompile` gets a one-line error naming the file and the field, exit
status 2, no traceback, and no bundle folder is left behind.  (An unknown relocation type is
covered by tests/recompiler/test_link.py.)"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest


def _elf_header(phoff: int = 64, phnum: int = 1, machine: int = 183) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHIQQQIHHHHHH", 2, machine, 1, 0x400000, phoff, 0, 0, 64, 56, phnum, 64, 0, 0)


CASES = {
    "not-an-elf": (b"#!/bin/sh\necho hi\n", "e_ident"),
    "truncated-header": (_elf_header()[:30], "e_ident"),
    "phdr-past-end": (_elf_header(phoff=4096), "e_phoff"),
    "wrong-machine": (_elf_header(machine=62) + bytes(56), "e_machine"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_elf_gives_one_line_error(tmp_path: Path, name: str) -> None:
    data, field = CASES[name]
    src = tmp_path / f"{name}.elf"
    src.write_bytes(data)
    out = tmp_path / "bundle"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(src), "-o", str(out)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert str(src) in lines[0] and field in lines[0], lines[0]
    assert not out.exists()
