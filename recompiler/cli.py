"""``nxrecomp recompile`` (and the Switch-format subcommands of recompiler.formats)."""
from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recompile", help="recompile an AArch64 Linux ELF program into a bundle (game.so + manifest)")
    p.add_argument("program", help="AArch64 ELF executable")
    p.add_argument("-o", "--out", required=True, help="bundle folder to write")
    p.add_argument("-L", "--lib-root", action="append", default=[],
                   help="folder holding lib/aarch64-linux-gnu (unpacked Debian packages) for shared libraries")
    p.add_argument("--stats", action="store_true",
                   help="print what analysis found: entries by source, jump tables by kind, unresolved BRs")
    p.set_defaults(func=_recompile)
    try:
        from recompiler.formats import cli as formats_cli
    except ImportError:
        return
    formats_cli.register(sub)


def _recompile(a: argparse.Namespace) -> int:
    from recompiler.pipeline import recompile_elf

    m = recompile_elf(a.program, a.out, a.lib_root)
    stats = dict(m["stats"])
    analysis = stats.pop("analysis", None)
    print(json.dumps(stats))
    if a.stats and analysis is not None:
        from recompiler.analysis.stats import AnalysisStats
        print(AnalysisStats(**{**analysis, "unresolved_br": [int(x, 16) for x in analysis["unresolved_br"]]}).text())
    return 0
