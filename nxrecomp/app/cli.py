"""The ``nxrecomp`` command.  The application's commands (``nxrecomp/app``: recompile, build,
run, replay, demo, report, doctor) and each process's entry point (``exec`` and ``hz-run`` of
the CPU host, ``gpu-host``, ``shader-svc``, ``relay``) and a package's tools (``inspect``,
``shader-asm``) register their subcommands (``register(subparsers)``); this module only gathers
them, in help order, and turns ``NxError`` into one line."""

from __future__ import annotations

import argparse
import importlib
import sys

from nxrecomp.common.errors import NxError

# (module, its function that adds subcommands), in help order.  A package that is not installed
# (ModuleNotFoundError of the module itself) contributes nothing.
CLI_MODULES = (
    ("nxrecomp.app.build", "register_recompile"),
    ("recompiler.formats.cli", "register"),
    ("cpu_host.cli", "register"),
    ("nxrecomp.app.build", "register_build"),
    ("cpu_host.horizon.cli", "register"),
    ("gpu_host.cli", "register"),
    ("nxrecomp.app.gpu_tools", "register"),
    ("nxrecomp.app.run", "register"),
    ("shader_svc.cli", "register"),
    ("relay.cli", "register"),
    ("nxrecomp.app.main_job", "register"),
    ("nxrecomp.app.demo_job", "register"),
    ("nxrecomp.app.report", "register"),
    ("nxrecomp.app.doctor", "register"),
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nxrecomp", description="Statically recompile Switch games and run them.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sp = sub.add_parser("settings", help="print the settings table (keys, env variables, defaults)")
    sp.set_defaults(func=_print_settings)
    for modname, register in CLI_MODULES:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if not (e.name and (modname == e.name or modname.startswith(e.name + "."))):
                raise  # a missing dependency inside the module is a real error
            continue
        getattr(mod, register)(sub)
    return p


def _print_settings(a: argparse.Namespace) -> int:
    from nxrecomp.common import settings

    print(settings.table())
    return 0


def main(argv: list[str] | None = None) -> int:
    from nxrecomp.common import log

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
