"""What a program is told about the CPU is what the lifter does (issue 7: "the ID registers and
HWCAP values the runtime reports say exactly what the lifter implements").

One table (cpu_host/runtime/core/cpu_features.h) gives AT_HWCAP, AT_HWCAP2 and the ID registers;
each row names the Unicorn classes that prove it.  A real program (built here for aarch64 with
zig's clang, dot-product intrinsics on) is recompiled and run: it must read exactly the table's
values through getauxval and MRS, and its dot products must equal qemu-aarch64's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recompiler import features
from tests.cpu_host import aarch64_programs
from recompiler.isa import FORMS
from recompiler.lift import HANDLERS


def test_every_claimed_feature_names_lifted_classes():
    lifted = {f.cls for f in FORMS if f.name in HANDLERS}
    rows = features.features()
    assert {"FP", "ASIMD", "ATOMICS", "ASIMDDP", "FRINT"} <= {f.name for f in rows}
    for f in rows:
        if f.hwcap_word:
            assert f.classes, f"{f.name}: an HWCAP bit with no Unicorn class proving it"
        missing = set(f.classes) - lifted
        assert not missing, f"{f.name}: classes {sorted(missing)} have no lifted form in recompiler/isa.py"
    # Linux's bit positions (arch/arm64 uapi hwcap.h) for the ones glibc and libgcc test
    assert features.hwcap(1) & (1 << 8) and features.hwcap(1) & (1 << 20) and features.hwcap(2) == 1 << 8


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return aarch64_programs.build("cpu_features", tmp_path_factory.mktemp("cpufeat"))


def test_program_reads_the_table_and_computes_like_qemu(program, tmp_path):
    out = tmp_path / "bundle"
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(program), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    ours = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(out), "--", "cpu_features"], capture_output=True, text=True, timeout=120
    )
    assert ours.returncode == 0, ours.stderr
    want = (
        f"hwcap {features.hwcap(1):x} hwcap2 {features.hwcap(2):x} isar0 {features.id_register('ISAR0'):x} "
        f"isar1 {features.id_register('ISAR1'):x} pfr0 {features.id_register('PFR0'):x}"
    )
    assert ours.stderr.strip() == want
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) not installed; the table part passed")
    ref = subprocess.run(["qemu-aarch64", str(program)], capture_output=True, text=True, timeout=120)
    assert ref.returncode == 0 and ours.stdout == ref.stdout and ours.stdout.startswith("dot ")
