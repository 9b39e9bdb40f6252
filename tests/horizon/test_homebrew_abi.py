"""The homebrew start-up end to end, on a small program of ours (``hb_guest/``) that does what
libnx's crt0 does: it applies its own RELR relocations, reads the Homebrew ABI loader
configuration (NRO form) or the kernel's start registers (NSO form), prints what it found with
svcOutputDebugString and returns 42 to the loader's return address.

What would break it: the host relocating the module too (RELR words doubled: the printed
strings come out wrong or the guest faults), the NRO form's X1 not -1 or a missing entry,
X30 not the loader's return (no exit code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recompiler.formats.pack_elf import elf_to_nro, elf_to_nso
from recompiler.formats.pack_nacp import pack_nacp
from recompiler.formats.pack_nro import NroAssets
from recompiler.horizon import recompile_exefs

ROOT = Path(__file__).resolve().parents[2]
GUEST = Path(__file__).resolve().parent / "hb_guest"
SDK = ROOT / "examples" / "horizon_hello" / "sdk"
FLAGS = [
    "-target",
    "aarch64-freestanding-none",
    "-fPIC",
    "-O1",
    "-mno-outline-atomics",
    "-fno-omit-frame-pointer",
    "-fno-stack-protector",
    "-mgeneral-regs-only",
]


def _zig(*args: str, cwd: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "ziglang", *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    assert r.returncode == 0, r.stderr


def _guest(work: Path, crt0: str) -> bytes:
    _zig("cc", *FLAGS, f"-I{SDK}", f"-Wa,-I{SDK}", "-c", str(GUEST / crt0), "-o", "crt0.o", cwd=work)
    _zig("cc", *FLAGS, "-fvisibility=hidden", "-c", str(GUEST / "guest.c"), "-o", "guest.o", cwd=work)
    # RELR as recent libnx links (implicit addends: applied twice, every pointer is off by the base)
    _zig(
        "ld.lld",
        "-shared",
        "-T",
        str(SDK / "module.ld"),
        "--build-id=sha1",
        "-z",
        "pack-relative-relocs",
        "-z",
        "notext",
        "crt0.o",
        "guest.o",
        "-o",
        "guest.elf",
        cwd=work,
    )
    return (work / "guest.elf").read_bytes()


@pytest.fixture(scope="module")
def guest_elf(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _guest(tmp_path_factory.mktemp("hb_guest"), "crt0.s")


def _run(bundle: Path, sd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NXRECOMP_CPU_HOST_SD_DIR": str(sd)} if sd is not None else None
    return subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def test_nro_starts_as_hbloader_starts_it(guest_elf: bytes, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    nro = tmp_path / "hello.nro"
    nro.write_bytes(elf_to_nro(guest_elf, assets=NroAssets(nacp=pack_nacp("Hello ABI", "nobody", "1.2"), romfs=b"R" * 64)))
    m = recompile_exefs(nro, tmp_path / "bundle")
    assert "has no main.npdm: using the default" in capsys.readouterr().out
    assert m["input"] == "nro"
    assert m["homebrew"] == {
        "abi": "nro",
        "self_relocating": ["main"],
        "npdm_default": True,
        "title": "Hello ABI",
        "version": "1.2",
    }
    assert (tmp_path / "bundle" / "romfs.bin").read_bytes() == b"R" * 64
    assert json.loads((tmp_path / "bundle" / "manifest.json").read_text())["romfs"].endswith("romfs.bin")
    p = m["process"]
    assert (p["address_space_bits"], p["main_thread_priority"], p["main_thread_core"], p["main_thread_stack_size"]) == (
        39,
        44,
        0,
        0x100000,
    )
    sd = tmp_path / "sd"
    (sd / "switch").mkdir(parents=True)
    (sd / "switch" / "Hello_ABI.nro").write_bytes(b"an older build")
    r = _run(tmp_path / "bundle", sd)
    lines = r.stdout.splitlines()
    assert r.returncode == 42, r.stderr[-2000:]
    # the NRO lies at its argv path on the SD card, as hbloader found it (libnx's romfsInit reads
    # it back there): the stale file there was replaced by the program's own bytes
    assert (sd / "switch" / "Hello_ABI.nro").read_bytes() == nro.read_bytes()
    assert lines[0] == "form nro"
    handle = int(lines[1].split()[-1], 16)
    assert handle != 0
    assert lines[2:] == [
        "argv sdmc:/switch/Hello_ABI.nro",
        f"heap size {0x40000000:#018x}",
        f"applet type {0:#018x}",
        f"syscall hint {(1 << 64) - 1:#018x}",
        "end of list: nxrecomp homebrew start-up (hbloader's configuration)",
        "relocated pointer ok",
        "pointer ok",
    ]
    assert "exited with code 0x2a" in r.stderr


def test_nso_starts_with_the_kernels_registers(guest_elf: bytes, tmp_path: Path) -> None:
    nso = tmp_path / "main.nso"
    nso.write_bytes(elf_to_nso(guest_elf, name="guest"))
    m = recompile_exefs(nso, tmp_path / "bundle")
    assert (m["input"], m["homebrew"]["abi"], m["homebrew"]["self_relocating"]) == ("nso", "nso", ["main"])
    r = _run(tmp_path / "bundle")
    assert r.returncode == 42, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0] == "form nso" and int(lines[1].split()[-1], 16) != 0
    assert lines[2:] == ["relocated pointer ok", "pointer ok"]


def test_start_up_that_spins_after_main_ends_with_a_notice(tmp_path: Path) -> None:
    """crt0_spin.s ends in `b .` once the program returns: the watchdog (cpu_host/horizon/spin.py)
    sees the only guest thread parked at a jump to itself and ends the process with a notice,
    instead of the run hanging until the time bound."""
    work = tmp_path / "w"
    work.mkdir()
    nso = tmp_path / "spin.nso"
    nso.write_bytes(elf_to_nso(_guest(work, "crt0_spin.s"), name="spin"))
    recompile_exefs(nso, tmp_path / "bundle")
    r = _run(tmp_path / "bundle")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines()[-2:] == ["relocated pointer ok", "pointer ok"]
    notice = [ln for ln in r.stderr.splitlines() if "endless branch-to-self" in ln]
    assert len(notice) == 1 and "every guest thread is parked" in notice[0] and "0x8000000" in notice[0]
