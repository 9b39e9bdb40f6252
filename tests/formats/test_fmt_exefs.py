"""ExeFS as a PFS0 file and as a folder: modules in Horizon's load order, the NPDM, and the
``inspect`` view of a folder; large files are mapped rather than read."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.formats import fmt_fieldwise as F
from nxrecomp.common.errors import NxError
from recompiler.formats import detect
from recompiler.formats.cli import register
from recompiler.formats.exefs import load_exefs
from recompiler.formats.pack_nso import pack_nso
from recompiler.formats.pack_romfs import pack_romfs


def _exefs_files() -> dict[str, bytes]:
    text, ro, data, bss = F.module_image()
    nso = pack_nso(text, ro, data, bss_size=bss)
    return {
        "sdk": nso,
        "subsdk1": nso,
        "main": nso,
        "rtld": nso,
        "subsdk0": nso,
        "main.npdm": F.npdm_file(flags=0b0111),
        "readme.txt": b"not a module",
    }


def test_pfs0_and_folder_give_the_same_exefs(tmp_path: Path) -> None:
    files = _exefs_files()
    (tmp_path / "exefs.nsp").write_bytes(F.pfs0_file(list(files.items())))
    folder = tmp_path / "exefs"
    folder.mkdir()
    for n, b in files.items():
        (folder / n).write_bytes(b)
    for ex in (load_exefs(tmp_path / "exefs.nsp"), load_exefs(folder)):
        assert [n for n, _ in ex.modules] == ["rtld", "main", "subsdk0", "subsdk1", "sdk"]
        assert ex.npdm is not None and ex.npdm.name == "TestProg"
        assert ex.other_files == ["readme.txt"]
        assert all(m.dynamic is not None and len(m.dynamic.relocations) == 4 for _, m in ex.modules)


def test_exefs_errors(tmp_path: Path) -> None:
    files = _exefs_files()
    del files["main"]
    (tmp_path / "x.nsp").write_bytes(F.pfs0_file(list(files.items())))
    with pytest.raises(NxError, match="needs a 'main'"):
        load_exefs(tmp_path / "x.nsp")
    files = _exefs_files()
    files["sdk"] = files["sdk"][:0x90]
    (tmp_path / "y.nsp").write_bytes(F.pfs0_file(list(files.items())))
    with pytest.raises(NxError, match=r"y.nsp/sdk, field header"):
        load_exefs(tmp_path / "y.nsp")


def test_inspect_folder(tmp_path: Path, capsys) -> None:
    for n, b in _exefs_files().items():
        (tmp_path / n).write_bytes(b)
    p = argparse.ArgumentParser()
    register(p.add_subparsers(dest="command"))
    args = p.parse_args(["inspect", str(tmp_path), "--symbols"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "ExeFS folder, modules rtld, main, subsdk0, subsdk1, sdk, other files readme.txt" in out
    assert out.count("NSO0 module") == 5 and "TestProg" in out and "g_counter" in out


def test_large_files_are_mapped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(detect, "MAP_THRESHOLD", 4096)
    blob = bytes(range(256)) * 64
    (tmp_path / "game.romfs").write_bytes(pack_romfs({"/a/b.bin": blob, "/c": b"c"}))
    fs = detect.load(tmp_path / "game.romfs")
    assert not isinstance(fs.r.data, bytes)
    assert fs.read("/a/b.bin") == blob and fs.read("/c") == b"c"
