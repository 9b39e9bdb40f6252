"""What ``nxrecomp build`` takes, read into one ``ExeFs``, and who relocates each module.

**Inputs** (``load_program``): an ExeFS folder, a PFS0 (``.nsp``/``.pfs0``), a single ``.nso``
(the ``main`` module) or a homebrew ``.nro`` (the ``main`` module; its ASET RomFS is written
into the bundle by ``recompiler.horizon``).  Without ``main.npdm`` the program gets ``DEFAULT_NPDM`` (an application in
the 39-bit space, main thread priority 44 on core 0, a 1 MiB stack, every service and syscall
allowed) and a one-line notice.

**Who relocates** (``self_relocating``): on the console only rtld applies relocations; the
kernel's loader and hbloader never do.  So a module relocates itself (homebrew: libnx's crt0
applies its RELA/RELR, libtransistor's its RELA) when the program has no ``rtld`` module and
(it is an NRO, or its MOD0 carries libnx's ``LNY0`` extension, or it is the program's only
module and no relocation of it names a symbol it does not define).  Such a module keeps its
bytes as its crt0 expects them (relocations applied twice would double every RELR/REL word).
A program of several modules without rtld and without the homebrew mark (our own SDK's test
ExeFS) is linked by the host as rtld would.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common.errors import NxError
from recompiler.formats.detect import detect_format, read_file
from recompiler.formats.exefs import ExeFs, load_exefs
from recompiler.formats.npdm import parse_npdm
from recompiler.formats.nro import NroModule, parse_nro
from recompiler.formats.nso import NsoModule, parse_nso
from recompiler.formats.pack_npdm import NpdmSpec, pack_npdm

# What a program without main.npdm gets: the documented default (see module docstring).
DEFAULT_NPDM = NpdmSpec(
    name="homebrew",
    address_space=3,
    main_thread_priority=44,
    main_thread_core=0,
    main_thread_stack_size=0x100000,
    services=[("*", False)],
)


@dataclass(frozen=True)
class Program:
    """What ``nxrecomp build`` was given, as an ExeFS: ``kind`` is "exefs" (folder), "pfs0",
    "nso" or "nro"; ``exefs.npdm`` is never None (the default when the input had none)."""

    path: str
    kind: str
    exefs: ExeFs
    npdm_default: bool
    nro: NroModule | None = None

    @property
    def homebrew_abi(self) -> str | None:
        """How the main thread starts: "nro" (hbloader's: X0 = loader config, X1 = -1), "nso"
        (the kernel's: X0 = 0, X1 = main thread handle) for a self-relocating program, else
        None (the SDK's start-up the host plays rtld for)."""
        if self.kind == "nro":
            return "nro"
        main = dict(self.exefs.modules)["main"]
        return "nso" if self_relocating(self.exefs, main) else None


def self_relocating(exefs: ExeFs, module: NsoModule | NroModule) -> bool:
    """The rule of the module docstring: no rtld, and an NRO, libnx's MOD0 mark or a lone module
    without imports."""
    names = [n for n, _m in exefs.modules]
    if "rtld" in names:
        return False
    if isinstance(module, NroModule):
        return True
    if module.mod0 is not None and module.mod0.homebrew:
        return True
    return len(names) == 1 and not _imports(module)


def _imports(module: NsoModule | NroModule) -> bool:
    """Some relocation names a symbol the module does not define (or one that cannot be read):
    only a dynamic linker can apply it, so the host links such a module."""
    dyn = module.dynamic
    if dyn is None:
        return False
    syms = dyn.symbols
    return any(r.symbol and (r.symbol >= len(syms) or not syms[r.symbol].defined) for r in dyn.relocations)


def load_program(path: str | Path) -> Program:
    """Read any input ``nxrecomp build`` takes (see the module docstring)."""
    p = Path(path)
    if not p.exists():
        raise NxError("no such file or folder", path=str(p))
    kind = "exefs"
    nro = None
    if p.is_dir():
        exefs = load_exefs(p)
    else:
        data = read_file(p)
        fmt = detect_format(data)
        if fmt == "pfs0":
            kind, exefs = "pfs0", load_exefs(p)
        elif fmt == "nso":
            kind, exefs = "nso", ExeFs(str(p), None, [("main", parse_nso(data, str(p)))], [])
        elif fmt == "nro":
            nro = parse_nro(data, str(p))
            kind, exefs = "nro", ExeFs(str(p), None, [("main", nro)], [])  # type: ignore[list-item]
        else:
            raise NxError(
                "not a program nxrecomp build takes (an ExeFS folder, a PFS0, an NSO0 or an NRO0 file)", path=str(p), offset=0
            )
    default = exefs.npdm is None
    if default:
        print(
            f"notice: {p.name} has no main.npdm: using the default (application, 39-bit address space, "
            "main thread priority 44 on core 0, 1 MiB stack, all services allowed)",
            flush=True,
        )
        npdm = parse_npdm(pack_npdm(DEFAULT_NPDM), f"{p}:<default main.npdm>")
        exefs = ExeFs(exefs.path, npdm, exefs.modules, exefs.other_files)
    return Program(str(p), kind, exefs, default, nro)
