"""``nxrecomp exec``: run a recompiled Linux AArch64 program (the test personality)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("exec", help="run a recompiled Linux AArch64 bundle: nxrecomp exec BUNDLE -- ARGV0 ARGS...")
    p.add_argument("bundle", help="bundle folder made by 'nxrecomp recompile'")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="the program's argv (argv[0] first)")
    p.set_defaults(func=_exec)


def _exec(a: argparse.Namespace) -> int:
    from cpu_host.runner import run

    argv = a.argv[1:] if a.argv and a.argv[0] == "--" else a.argv
    return run(a.bundle, argv or ["program"])
