"""``nxrecomp inspect FILE``: print what a Switch file holds."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nxrecomp.common.errors import NxError


def _inspect(args: argparse.Namespace) -> int:
    try:
        return _inspect_to_stdout(args)
    except BrokenPipeError:
        # `nxrecomp inspect X | head`: the reader left; stop quietly, as other tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _inspect_to_stdout(args: argparse.Namespace) -> int:
    from recompiler.formats.describe import describe
    from recompiler.formats.detect import load
    from recompiler.formats.pfs0 import Pfs0
    from recompiler.formats.romfs import Romfs

    if Path(args.file).is_dir():
        from recompiler.formats.exefs import load_exefs

        ex = load_exefs(args.file)
        print(
            f"{ex.path}: ExeFS folder, modules {', '.join(n for n, _ in ex.modules)}"
            f"{', other files ' + ', '.join(ex.other_files) if ex.other_files else ''}"
        )
        for sub in ([ex.npdm] if ex.npdm else []) + [m for _, m in ex.modules]:
            for line in describe(sub, symbols=args.symbols, relocs=args.relocs):
                print("  " + line)
        return 0
    obj = load(args.file, args.format)
    if args.cat:
        if not isinstance(obj, (Pfs0, Romfs)):
            raise NxError("--cat needs a PFS0 or RomFS file", path=args.file)
        try:
            blob = obj.read(args.cat)
        except KeyError:
            raise NxError(f"no file {args.cat!r} inside", path=args.file) from None
        sys.stdout.buffer.write(blob)
        return 0
    for line in describe(obj, symbols=args.symbols, relocs=args.relocs):
        print(line)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("inspect", help="print what a Switch file holds (NSO, NRO, NPDM, PFS0/ExeFS, RomFS)")
    p.add_argument("file", help="the file to read (or an extracted ExeFS folder)")
    p.add_argument("--format", choices=("nso", "nro", "npdm", "pfs0", "romfs"), help="skip detection by magic")
    p.add_argument("--symbols", action="store_true", help="list dynamic symbols of modules")
    p.add_argument("--relocs", action="store_true", help="list relocations of modules")
    p.add_argument("--cat", metavar="PATH", help="write the file PATH inside a PFS0/RomFS to stdout")
    p.set_defaults(func=_inspect)
