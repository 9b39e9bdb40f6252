"""``inspect``: its ``register`` on a real parser, output for each format, one-line errors."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from tests.formats import fmt_fieldwise as F
from nxrecomp.common.errors import NxError
from recompiler.formats.cli import register
from recompiler.formats.pack_nro import NroAssets, pack_nro
from recompiler.formats.pack_nacp import pack_nacp
from recompiler.formats.pack_npdm import pack_npdm
from recompiler.formats.pack_nso import pack_nso
from recompiler.formats.pack_pfs0 import pack_pfs0
from recompiler.formats.pack_romfs import pack_romfs

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    register(p.add_subparsers(dest="command"))
    args = p.parse_args(argv)
    assert args.func(args) == 0


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    text, ro, data, bss = F.module_image()
    blobs = {
        "main.nso": pack_nso(text, ro, data, bss_size=bss, name="main"),
        "hb.nro": pack_nro(text, ro, data, bss_size=bss, assets=NroAssets(b"i", pack_nacp("CLI Game", "Me", "2.0"), b"")),
        "main.npdm": pack_npdm(),
        "game.romfs": pack_romfs({"/x/y.txt": b"romfs says hi"}),
    }
    blobs["exefs.nsp"] = pack_pfs0({"main": blobs["main.nso"], "main.npdm": blobs["main.npdm"]})
    out = {}
    for name, blob in blobs.items():
        out[name] = tmp_path / name
        out[name].write_bytes(blob)
    return out


def test_inspect_each_format(files, capsys) -> None:
    _run(["inspect", str(files["main.nso"]), "--symbols", "--relocs"])
    o = capsys.readouterr().out
    assert "NSO0 module 'main'" in o and "MOD0     at 0x100" in o and "nnMain" in o and "JUMP_SLOT" in o
    _run(["inspect", str(files["hb.nro"])])
    assert "'CLI Game' version '2.0'" in capsys.readouterr().out
    _run(["inspect", str(files["main.npdm"])])
    o = capsys.readouterr().out
    assert "AddressSpace64Bit" in o and "kernel version 3.0" in o and "syscalls 0x0-0xbf" in o
    _run(["inspect", str(files["exefs.nsp"])])
    o = capsys.readouterr().out
    assert "PFS0 with 2 files" in o and "(nso)" in o and "thread priority 28..59" in o
    _run(["inspect", str(files["game.romfs"])])
    assert "/x/y.txt" in capsys.readouterr().out


def test_inspect_cat(files, capsysbinary) -> None:
    _run(["inspect", str(files["game.romfs"]), "--cat", "/x/y.txt"])
    assert capsysbinary.readouterr().out == b"romfs says hi"


def test_inspect_errors(files, tmp_path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x7fELF" + bytes(100))
    for argv, msg in (
        (["inspect", str(junk)], "not a Switch file"),
        (["inspect", str(tmp_path / "missing")], "cannot read"),
        (["inspect", str(files["game.romfs"]), "--cat", "/nope"], "no file '/nope'"),
        (["inspect", str(files["main.npdm"]), "--cat", "x"], "needs a PFS0 or RomFS"),
    ):
        with pytest.raises(NxError, match=msg):
            _run(argv)


def test_through_the_nxrecomp_command(files) -> None:
    """``nxrecomp inspect`` is a command of ``nxrecomp``: it prints one line and exits 2 on a bad
    file."""
    from nxrecomp.app.cli import build_parser

    assert "inspect" in build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    bad = files["main.npdm"].read_bytes()[:0x40]
    (files["main.npdm"].parent / "cut.npdm").write_bytes(bad)
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "inspect", str(files["main.npdm"].parent / "cut.npdm")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "field META" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "inspect", str(files["exefs.nsp"])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "PFS0 with 2 files" in r.stdout


def test_inspect_into_a_closed_pipe(tmp_path) -> None:
    """``nxrecomp inspect BIG | head -1`` stops quietly (no BrokenPipe traceback): a listing
    far larger than a pipe's buffer, read one line."""
    big = tmp_path / "big.romfs"
    big.write_bytes(pack_romfs({f"/dir{i % 50}/a_rather_long_file_name_{i}.bin": b"" for i in range(6000)}))
    code = (
        "import argparse, sys; from recompiler.formats.cli import register; p = argparse.ArgumentParser(); "
        "register(p.add_subparsers()); a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))"
    )
    r = subprocess.run(
        f"'{sys.executable}' -c \"{code}\" inspect '{big}' | head -1",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.stdout.startswith(str(big)) and len(r.stdout.splitlines()) == 1
    assert "Traceback" not in r.stderr
