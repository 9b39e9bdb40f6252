"""Two recompiled busybox bundles against each other and native amd64 busybox, interleaved.

    .venv/bin/python bench/busybox_ab.py BUNDLE_A BUNDLE_B [--mb 24] [--reps 7]

For judging a lifter change: build one bundle before and one after (``nxrecomp recompile`` into
two folders), then run this.  Each workload runs native, A, B, native, A, B, ... and the
figure kept is the least user + system CPU time of each (CPU time, not wall: on a shared
machine a run that waits for a core is not slower code; the least of many because
interference only ever adds).  Prints seconds, native/A, native/B and B/A speed-up.
``bench/busybox.py`` is the benchmark of record; this one is for A/B decisions."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.busybox import WORKLOADS, make_inputs  # noqa: E402
from nxrecomp.common import debian  # noqa: E402


def cpu_seconds(cmd: list[str], cwd: Path) -> float:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed: {r.stderr.decode()[-500:]}")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=Path, help="bundle folder (before)")
    ap.add_argument("b", type=Path, help="bundle folder (after)")
    ap.add_argument("--mb", type=int, default=24)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    native = str(debian.busybox("amd64"))
    runs = {"native": [native], "A": [str(a.a.resolve() / "nxrun")], "B": [str(a.b.resolve() / "nxrun")]}
    with tempfile.TemporaryDirectory(prefix="nxab-") as d:
        work = Path(d)
        make_inputs(work, a.mb)
        print(
            f"inputs {a.mb} MB, least CPU seconds of {a.reps} interleaved runs; load average "
            f"{os.getloadavg()[0]:.1f}; A = {a.a}, B = {a.b}"
        )
        print(f"{'workload':12} {'native':>8} {'A':>8} {'B':>8} {'native/A':>9} {'native/B':>9} {'B vs A':>7}")
        ra, rb = [], []
        for name, argv in WORKLOADS.items():
            best = {k: float("inf") for k in runs}
            for _ in range(a.reps):
                for k, pre in runs.items():
                    best[k] = min(best[k], cpu_seconds([*pre, *argv], work))
            ra.append(best["native"] / best["A"])
            rb.append(best["native"] / best["B"])
            print(
                f"{name:12} {best['native']:8.3f} {best['A']:8.3f} {best['B']:8.3f} {ra[-1]:8.2f}x {rb[-1]:8.2f}x "
                f"{best['A'] / best['B']:6.2f}x"
            )
        print(f"geometric mean vs native: A {statistics.geometric_mean(ra):.3f}x, B {statistics.geometric_mean(rb):.3f}x")


if __name__ == "__main__":
    main()
