"""Any commands against each other, interleaved: the least user + system CPU time of each.

    .venv/bin/python bench/ab.py --reps 5 \\
        native="$NATIVE_LUA tests/realprogs/lua/spectral.lua 500" \\
        before="/tmp/lua-a/nxrun lua tests/realprogs/lua/spectral.lua 500" \\
        after="/tmp/lua-b/nxrun lua tests/realprogs/lua/spectral.lua 500"

Each ``label=command`` (a shell command line) runs in turn, ``--reps`` rounds, and the least CPU
time of each is kept (as ``bench/busybox_ab.py``, which does the same for busybox's workloads
on two bundles: CPU time, not wall, and the least, since interference only ever adds).  Prints
each label's seconds and the first label's time over it (the speed relative to the first).
For A/B decisions on any program; the benchmarks of record are ``bench/busybox.py`` and
``bench/realprogs.py``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.busybox_ab import cpu_seconds  # noqa: E402


def parse_way(text: str) -> tuple[str, list[str]]:
    label, sep, cmd = text.partition("=")
    if not sep or not label or not cmd.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected label=command")
    return label, ["/bin/sh", "-c", cmd]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ways", nargs="+", type=parse_way, metavar="label=command")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    best = {label: float("inf") for label, _ in a.ways}
    for _ in range(a.reps):
        for label, cmd in a.ways:
            best[label] = min(best[label], cpu_seconds(cmd, Path.cwd()))
    first = best[a.ways[0][0]]
    print(f"least CPU seconds of {a.reps} interleaved runs; load average {os.getloadavg()[0]:.1f}")
    for label, _ in a.ways:
        print(f"{label:12} {best[label]:8.3f} s {first / best[label]:6.2f}x")


if __name__ == "__main__":
    main()
