"""The ``nxrecomp`` command.  Each package adds its subcommands through ``<pkg>/cli.py``'s
``register(subparsers)``; this module only gathers them and turns ``NxError`` into one line."""
from __future__ import annotations

import argparse
import importlib
import sys

from nxrecomp.errors import NxError

# Packages that contribute subcommands, in help order.
CLI_MODULES = ("recompiler", "cpu_host", "cpu_host.horizon.cli", "gpu_host", "shader_svc", "relay", "nxrecomp.main_job",
               "nxrecomp.demo_job", "nxrecomp.report", "nxrecomp.doctor")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nxrecomp", description="Statically recompile Switch games and run them.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sp = sub.add_parser("settings", help="print the settings table (keys, env variables, defaults)")
    sp.set_defaults(func=lambda a: print(__import__("nxrecomp.settings").settings.table()) or 0)
    for name in CLI_MODULES:
        modname = name if name.count(".") else f"{name}.cli"
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if not (e.name and (modname == e.name or modname.startswith(e.name + "."))):
                raise  # a missing dependency inside the module is a real error
            continue
        mod.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    from nxrecomp import log

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        log.setup(args.command)
        rc = args.func(args)
    except NxError as e:
        log.flush()
        print(f"nxrecomp {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    log.flush()
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
