"""Lift on miss (cpu_host/runtime/core/lift_miss.c, cpu_host/lift_on_miss.py, docs/ARCHITECTURE.md
"Lift on miss"), Linux personality.

``programs/lift_miss.c`` is built for aarch64 and recompiled with two functions left out of
the build on purpose (``recompiler.hide_entries``); qemu-aarch64 runs the same binary as the
reference.  Each test works on its own copy of the bundle (a run notes what it lifted in the
bundle).  Addresses are read from the ELF's symbol table with pyelftools, not from our linker.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host import aarch64_programs

HIDDEN = ("hidden_step", "hidden_worker")
NOTICE = re.compile(
    r"^nxrecomp: lifted at run time: function at (0x[0-9a-f]+) \((\d+) instructions, "
    r"(\d+) bytes of guest code\), compiled in ([0-9.]+) s",
    re.MULTILINE,
)


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    return aarch64_programs.build("lift_miss", tmp_path_factory.mktemp("liftmiss"))


@pytest.fixture(scope="module")
def symbols(program) -> dict[str, tuple[int, int]]:
    """name -> (address, size) from the ELF's .symtab (pyelftools)."""
    from elftools.elf.elffile import ELFFile

    with open(program, "rb") as f:
        tab = ELFFile(f).get_section_by_name(".symtab")
        return {s.name: (s["st_value"], s["st_size"]) for s in tab.iter_symbols() if s.name}


def _recompile(program: Path, out: Path, **env: str) -> subprocess.CompletedProcess:
    e = {**os.environ, "NXRECOMP_RECOMPILER_HIDE_ENTRIES": ",".join(HIDDEN), **env}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(program), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=e,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r


@pytest.fixture(scope="module")
def pristine(program, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("liftmiss_bundle") / "b"
    _recompile(program, out)
    return out


@pytest.fixture
def bundle(pristine, tmp_path) -> Path:
    out = tmp_path / "bundle"
    shutil.copytree(pristine, out, symlinks=True)
    return out


def _bytes_at(program: Path, addr: int, n: int) -> bytes:
    from elftools.elf.elffile import ELFFile

    with open(program, "rb") as f:
        for seg in ELFFile(f).iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_vaddr"] <= addr and addr + n <= seg["p_vaddr"] + seg["p_filesz"]:
                return seg.data()[addr - seg["p_vaddr"] : addr - seg["p_vaddr"] + n]
    raise AssertionError(f"{addr:#x} is in no loaded segment")


def _ours(bundle: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(bundle / "nxrun"), "lift_miss", *args], capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )


def _qemu(program: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["qemu-aarch64", str(program), *args], capture_output=True, text=True, timeout=300)


def _lifts(stderr: str) -> list[int]:
    return [int(m.group(1), 16) for m in NOTICE.finditer(stderr)]


def test_hidden_function_pointer_target_is_lifted_at_run_time_and_the_rebuild_takes_it(program, symbols, bundle):
    ref = _qemu(program, "pointer", "50")
    assert ref.returncode == 0 and "step 35: " in ref.stdout and "pointer 50 -> " in ref.stdout, ref.stderr
    step, size = symbols["hidden_step"]
    # the build left it out: the manifest's functions do not hold it
    import json

    assert step not in json.loads((bundle / "manifest.json").read_text())["functions"]
    ours = _ours(bundle, "pointer", "50")
    assert (ours.returncode, ours.stdout) == (0, ref.stdout), ours.stderr[-2000:]
    assert _lifts(ours.stderr) == [step], ours.stderr
    m = NOTICE.search(ours.stderr)
    assert int(m.group(2)) == size // 4 and int(m.group(3)) == size, (m.group(0), size)  # the whole function
    assert f"nxrecomp: run-time lifts: 1 ({step:#x})" in ours.stderr  # the exit summary
    # nothing but the notices on stderr: the guest's own stderr is qemu's
    assert [ln for ln in ours.stderr.splitlines() if not ln.startswith("nxrecomp: ")] == ref.stderr.splitlines()
    text = (bundle / "discovered_entries.txt").read_text()
    assert f"{step:#x}" in text.split()
    assert not list(bundle.glob(".discovered_entries.txt-*")), "a temporary file was left in the bundle"

    # the next build reads the list (the hide setting still on) and lifts it statically
    r = _recompile(program, bundle)
    assert "took 1 of 1 entries from" in r.stderr, r.stderr[-1500:]
    assert json.loads((bundle / "manifest.json").read_text())["stats"]["discovered_entries"] == 1
    again = _ours(bundle, "pointer", "50")
    assert (again.returncode, again.stdout) == (0, ref.stdout), again.stderr[-2000:]
    assert _lifts(again.stderr) == [] and "run-time lifts" not in again.stderr, again.stderr


@pytest.mark.parametrize("off", [12, 20, 24])
def test_branch_into_the_middle_of_a_function_lifts_from_there(program, symbols, bundle, off):
    """A BR whose target analysis cannot know (an offset from the command line): 12 and 20 land
    on code no path of the function reaches statically, 24 in the middle of code lifted inside
    the function, with no entry of its own (a missed case label)."""
    ref = _qemu(program, "label", str(off))
    assert ref.returncode == 0, ref.stderr
    ours = _ours(bundle, "label", str(off))
    assert (ours.returncode, ours.stdout) == (0, ref.stdout), ours.stderr[-2000:]
    # the target is the asm's `adr x9, .` (ADR: op=0, bits 28-24 10000, Rd 9) plus off
    start, size = symbols["computed_label"]
    code = _bytes_at(program, start, size)
    words = [int.from_bytes(code[k : k + 4], "little") for k in range(0, size, 4)]
    adr = [start + 4 * k for k, w in enumerate(words) if w & 0x9F00001F == 0x10000009]
    assert len(adr) == 1, [hex(w) for w in words]
    assert _lifts(ours.stderr) == [adr[0] + off], ours.stderr


def test_off_setting_keeps_the_fatal_error_and_names_the_setting(program, symbols, bundle):
    ours = _ours(bundle, "pointer", "5", NXRECOMP_CPU_HOST_LIFT_ON_MISS="off")
    assert ours.returncode == 134, (ours.returncode, ours.stderr[-800:])
    first = ours.stderr.splitlines()[0]
    step = symbols["hidden_step"][0]
    assert first.startswith("nxrecomp: fatal: branch to an address with no lifted code"), first
    assert "cpu_host.lift_on_miss" in first and "NXRECOMP_CPU_HOST_LIFT_ON_MISS" in first, first
    assert f"at guest pc {step:#x}" in first and "BLR at guest pc 0x" in first, first
    assert not (bundle / "discovered_entries.txt").exists()


def test_branch_to_no_code_is_a_fatal_error_naming_the_target_and_the_branch(program, symbols, bundle):
    ref = _qemu(program, "nowhere")
    assert ref.returncode != 0 and ref.stdout == "before\n"  # qemu: SIGSEGV (no execute permission)
    ours = _ours(bundle, "nowhere")
    assert ours.returncode == 134 and ours.stdout == "before\n", (ours.returncode, ours.stderr[-800:])
    fatal = [ln for ln in ours.stderr.splitlines() if "fatal" in ln]
    data = symbols["not_code"][0]
    assert len(fatal) == 1 and "not code of the program" in fatal[0] and f"at guest pc {data:#x}" in fatal[0], fatal
    assert "BLR at guest pc 0x" in fatal[0], fatal
    assert not (bundle / "discovered_entries.txt").exists()


def test_call_to_all_ones_names_that_address_not_a_stale_one(program, bundle):
    """An empty inline cache holds a row of address ~0 (lifted.h NX_IC_EMPTY), so a call through a
    pointer of all ones "hits" it; the site stores s->pc only when it misses, so that row's function
    stores it before the runtime's path names it."""
    ref = _qemu(program, "allones")
    assert ref.returncode != 0 and ref.stdout == "before\n"
    ours = _ours(bundle, "allones")
    assert ours.returncode == 134 and ours.stdout == "before\n", (ours.returncode, ours.stderr[-800:])
    fatal = [ln for ln in ours.stderr.splitlines() if "fatal" in ln]
    assert len(fatal) == 1 and "at guest pc 0xffffffffffffffff" in fatal[0] and "BLR at guest pc 0x" in fatal[0], fatal


def test_compile_failure_names_the_function_and_the_compilers_message(program, symbols, bundle):
    ours = _ours(bundle, "pointer", "5", NXRECOMP_RECOMPILER_OPT="-fno-such-flag-nxrecomp")
    assert ours.returncode == 134, (ours.returncode, ours.stderr[-800:])
    step = symbols["hidden_step"][0]
    assert f"the function at {step:#x} lifted at run time" in ours.stderr, ours.stderr[-1500:]
    assert "-fno-such-flag-nxrecomp" in ours.stderr  # the compiler's own complaint
    assert "run-time lift of the function at this address failed" in ours.stderr
    assert not (bundle / "discovered_entries.txt").exists()


def test_guest_environment_without_home_still_lifts(program, symbols, bundle, tmp_path):
    """The helper inherits the guest's environment: with no usable HOME (here a file, where no
    cache folder can be made, even by root) it still finds the caches launch.txt names
    (lift_env), and compiles there (a fresh -O1 object)."""
    ref = _qemu(program, "pointer", "9")
    home = tmp_path / "home_is_a_file"
    home.write_text("")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "NXRECOMP_RECOMPILER_OPT": "-O1"}
    ours = subprocess.run(
        [str(bundle / "nxrun"), "lift_miss", "pointer", "9"], capture_output=True, text=True, timeout=300, env=env
    )
    assert (ours.returncode, ours.stdout) == (0, ref.stdout), ours.stderr[-2000:]
    assert _lifts(ours.stderr) == [symbols["hidden_step"][0]], ours.stderr


def test_python_runner_lifts_too(program, symbols, bundle):
    """The cffi runner (cpu_host.native_launcher off) sets the lifter up the same way."""
    ref = _qemu(program, "pointer", "7")
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", "lift_miss", "pointer", "7"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NXRECOMP_CPU_HOST_NATIVE_LAUNCHER": "0"},
    )
    assert (r.returncode, r.stdout) == (0, ref.stdout), r.stderr[-1500:]
    assert _lifts(r.stderr) == [symbols["hidden_step"][0]], r.stderr


def test_discovered_list_bad_lines_name_the_file_and_line(tmp_path):
    from nxrecomp.common.errors import NxError
    from recompiler import discovered

    assert discovered.read(tmp_path) == set()
    assert discovered.append(tmp_path, 0x1000) and not discovered.append(tmp_path, 0x1000)
    assert discovered.append(tmp_path, 0x800)
    assert discovered.read(tmp_path) == {0x800, 0x1000}
    (tmp_path / discovered.FILE).write_text("# c\n0x1000\nzz\n")
    with pytest.raises(NxError, match=r"discovered_entries.txt: line 3: 'zz' is not a hex address"):
        discovered.read(tmp_path)
    (tmp_path / discovered.FILE).write_text("0x1002\n")
    with pytest.raises(NxError, match="line 1: 0x1002 is not an instruction address"):
        discovered.read(tmp_path)


def test_hide_entries_names_an_unknown_symbol(program, symbols, monkeypatch):
    from nxrecomp.common.errors import NxError
    from recompiler.link import link_program
    from recompiler.pipeline import hidden_entries

    image = link_program(program)
    monkeypatch.setenv("NXRECOMP_RECOMPILER_HIDE_ENTRIES", "hidden_step, 0x10")
    assert hidden_entries(image) == {symbols["hidden_step"][0], 0x10}
    monkeypatch.setenv("NXRECOMP_RECOMPILER_HIDE_ENTRIES", "no_such_function")
    with pytest.raises(NxError, match="recompiler.hide_entries.*'no_such_function' is neither"):
        hidden_entries(image)
