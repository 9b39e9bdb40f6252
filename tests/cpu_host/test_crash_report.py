"""A fault in lifted code (a bad guest pointer) ends the recompiled program by the signal, with
a report that names the guest function whose lifted code faulted: the host pc mapped back
through the bundle's entry table (cpu_host/runtime/core/dispatch.c, nx_fault).  The program reads
through a null pointer in a function of its own; the report must give that function's address
as the guest's symbol table has it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from elftools.elf.elffile import ELFFile

from tests.cpu_host import aarch64_programs


def _symbol(path: Path, name: str) -> int:
    with open(path, "rb") as f:
        return next(s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols() if s.name == name)


def test_a_null_read_names_the_guest_function(tmp_path: Path) -> None:
    program = aarch64_programs.build("null_deref", tmp_path)
    out = tmp_path / "bundle"
    # The call through the pointer is what keeps read_through out of main's C: a guessed target
    # (recompiler.devirt_targets, analysis/call_targets.py) would make it a direct call that
    # inline_leaves copies into main, and the report would then name main, as it says ("or of
    # one inlined there").  This test is about a function that stands alone, so no guesses.
    env = {**os.environ, "NXRECOMP_RECOMPILER_DEVIRT_TARGETS": "0"}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(program), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([str(out / "nxrun"), "null_deref"], capture_output=True, text=True, timeout=120)
    assert r.returncode in (-signal.SIGSEGV, 128 + signal.SIGSEGV), (r.returncode, r.stderr)
    assert r.stdout == "before\n"
    assert "nxrecomp: fatal: signal 11 (segmentation fault) at address (nil) in lifted code" in r.stderr, r.stderr
    m = re.search(
        r"in the lifted code of guest function (0x[0-9a-f]+) \(or of one inlined there; "
        r"host pc 0x[0-9a-f]+, (0x[0-9a-f]+|0) into it\)",
        r.stderr,
    )
    assert m, r.stderr
    assert int(m.group(1), 16) == _symbol(program, "read_through"), (r.stderr, hex(_symbol(program, "read_through")))
