"""Code generated at run time (Linux personality): a program writes AArch64 code into memory it
mapped executable and calls it (docs/ARCHITECTURE.md, "Code generated at run time (Linux)").

``programs/generated_code.c`` copies the bytes of its own functions into an mmap'd region (no
hand-written encodings), calls them, rewrites the region at the same address, unmaps and maps it
again, and uses the W^X pattern (mprotect RW, write, mprotect RX); qemu-aarch64 runs the same
binary as the reference.  The results must be those of the code in memory at each call (the
second call's result is the new code's).  CI runs the rewrite case and the error cases; the rest
is ``heavy``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs

NOTICE = re.compile(
    r"^nxrecomp: lifted at run time: code generated at run time, the function at (0x[0-9a-f]+) \((\d+) instructions",
    re.MULTILINE,
)


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build_for_qemu("generated_code", tmp_path_factory.mktemp("gencode"))


@pytest.fixture(scope="module")
def bundle(program, tmp_path_factory) -> Path:
    return aarch64_programs.recompile(program, tmp_path_factory.mktemp("gencode_bundle") / "b")


def _ours(bundle: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(bundle / "nxrun"), "generated_code", *args], capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )


def _qemu(program: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["qemu-aarch64", str(program), *args], capture_output=True, text=True, timeout=300)


def _same_as_qemu(program: Path, bundle: Path, *args: str, **env: str) -> list[int]:
    """Run both; stdout and exit status identical, the guest's stderr (ours less our notice
    lines) identical; the addresses lifted as generated code, in order."""
    ref = _qemu(program, *args)
    assert ref.returncode == 0, ref.stderr
    ours = _ours(bundle, *args, **env)
    assert (ours.returncode, ours.stdout) == (0, ref.stdout), ours.stderr[-2000:]
    assert [ln for ln in ours.stderr.splitlines() if not ln.startswith("nxrecomp: ")] == ref.stderr.splitlines()
    lifts = [int(m.group(1), 16) for m in NOTICE.finditer(ours.stderr)]
    summary = [ln for ln in ours.stderr.splitlines() if ln.startswith("nxrecomp: run-time lifts: ")]
    assert len(summary) == 1 and f"{len(lifts)} in code generated at run time (not noted for the next build)" in summary[0]
    # generated code is not the program's: nothing for the next build
    assert not (bundle / "discovered_entries.txt").exists()
    return lifts


def test_code_rewritten_at_the_same_address_runs_the_new_code(program, bundle):
    lifts = _same_as_qemu(program, bundle, "rewrite")
    # triple and mangle alternate at one address, three times each: each rewrite is seen; the
    # first two are lifted, the others find code lifted before and take its rows again
    assert len(lifts) == 2 and len(set(lifts)) == 1, [hex(a) for a in lifts]
    ours = _ours(bundle, "rewrite")
    summary = "generated code rewritten after its lift 5 times; generated code back to bytes lifted before 4 times"
    assert summary in ours.stderr, ours.stderr[-1500:]
    # the manifest's functions do not change either
    assert all(a not in json.loads((bundle / "manifest.json").read_text())["functions"] for a in lifts)


@pytest.mark.heavy
def test_unmapped_and_mapped_again_at_the_same_address(program, bundle):
    lifts = _same_as_qemu(program, bundle, "remap")
    # triple, mangle, triple again: the third is the first's code back (its rows, no lift)
    assert len(lifts) == 2 and len(set(lifts)) == 1, [hex(a) for a in lifts]


@pytest.mark.heavy
def test_write_xor_execute_through_mprotect(program, bundle):
    lifts = _same_as_qemu(program, bundle, "wx")
    assert len(lifts) == 2, [hex(a) for a in lifts]


@pytest.mark.heavy
def test_generated_code_calls_back_into_the_program(program, bundle):
    """One lift serves every call (the entry check passes; the callbacks go through the
    dispatch to the program's lifted functions)."""
    assert len(_same_as_qemu(program, bundle, "callback", "300")) == 1


@pytest.mark.heavy
def test_python_runner_lifts_generated_code_too(program, bundle):
    ref = _qemu(program, "remap")
    ours = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", "generated_code", "remap"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NXRECOMP_CPU_HOST_NATIVE_LAUNCHER": "0"},
    )
    assert (ours.returncode, ours.stdout) == (0, ref.stdout), ours.stderr[-2000:]
    assert len(NOTICE.findall(ours.stderr)) == 2, ours.stderr[-2000:]


def test_call_into_memory_not_mapped_executable_names_the_address_and_why(program, bundle):
    ref = _qemu(program, "data")
    assert ref.returncode != 0 and ref.stdout == "calling data\n"  # qemu: SIGSEGV (no execute permission)
    ours = _ours(bundle, "data")
    assert ours.returncode == 134 and ours.stdout == "calling data\n", (ours.returncode, ours.stderr[-800:])
    fatal = [ln for ln in ours.stderr.splitlines() if "fatal" in ln]
    assert len(fatal) == 1 and "not mapped executable" in fatal[0] and "no mmap or mprotect with PROT_EXEC" in fatal[0]
    assert re.search(r"at guest pc 0x[0-9a-f]{6,} ", fatal[0]) and "BLR at guest pc 0x" in fatal[0], fatal


def test_off_setting_is_a_fatal_error_naming_it_and_the_mapping(program, bundle):
    ours = _ours(bundle, "rewrite", NXRECOMP_CPU_HOST_GENERATED_CODE="off")
    assert ours.returncode == 134 and ours.stdout == "", (ours.returncode, ours.stderr[-800:])
    first = ours.stderr.splitlines()[0]
    assert first.startswith("nxrecomp: fatal: branch into code generated at run time"), first
    assert "cpu_host.generated_code" in first and "NXRECOMP_CPU_HOST_GENERATED_CODE=on" in first, first
    m = re.search(r"executable, \[(0x[0-9a-f]+), (0x[0-9a-f]+)\)\).* at guest pc (0x[0-9a-f]+) ", first)
    assert m and int(m.group(1), 16) <= int(m.group(3), 16) < int(m.group(2), 16), first
    assert int(m.group(2), 16) - int(m.group(1), 16) == 65536, first  # the program's one 64 KiB mapping
