"""An ExeFS: the program's NSO modules and ``main.npdm``, from a PFS0 file or an extracted
folder, in the order Horizon's loader places modules (rtld, main, subsdk0..9, sdk)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common.errors import NxError
from recompiler.formats.detect import read_file
from recompiler.formats.npdm import Npdm, parse_npdm
from recompiler.formats.nso import NsoModule, parse_nso
from recompiler.formats.pfs0 import parse_pfs0

MODULE_ORDER = ("rtld", "main", *(f"subsdk{i}" for i in range(10)), "sdk")


@dataclass(frozen=True)
class ExeFs:
    path: str
    npdm: Npdm | None
    modules: list[tuple[str, NsoModule]]  # in load order
    other_files: list[str]  # present but not modules (e.g. main.npdm's siblings)


def _collect(path: str, files: dict[str, bytes]) -> ExeFs:
    if "main" not in files:
        raise NxError("an ExeFS needs a 'main' module", path=path)
    modules = [(n, parse_nso(files[n], f"{path}/{n}")) for n in MODULE_ORDER if n in files]
    npdm = parse_npdm(files["main.npdm"], f"{path}/main.npdm") if "main.npdm" in files else None
    other = sorted(set(files) - set(MODULE_ORDER) - {"main.npdm"})
    return ExeFs(path, npdm, modules, other)


def load_exefs(path: str | os.PathLike) -> ExeFs:
    """``path`` is a PFS0 file (``exefs.nsp``/``.pfs0``) or a folder holding the files."""
    p = Path(path)
    if p.is_dir():
        files = {f.name: read_file(f) for f in p.iterdir() if f.is_file()}
        return _collect(str(p), files)
    pfs = parse_pfs0(read_file(p), str(p))
    return _collect(str(p), {n: pfs.read(n) for n in pfs.names()})
