"""Guest threads in the Linux personality: zstd's worker pool (zstd 1.5.7 built with
ZSTD_MULTITHREAD, our driver's -jN = ZSTD_c_nbWorkers) recompiled vs the same sources built
natively for x86-64 (clang -O2, static musl) vs qemu-aarch64, at 0 (no pool), 1, 2 and 4 workers,
and our pthreads exercise (tests/realprogs/src/pthreads_test.c: thread start-up and futex
traffic) recompiled vs qemu.  The ways run interleaved (bench/realprogs.py timed_ways), best of
--reps.

    .venv/bin/python bench/threads.py [--mb 32] [--reps 3] [--no-qemu]

Prints seconds and ratios (native/ours: 1.0 is native speed; qemu/ours: how much faster than
qemu) and, per way, the speed-up of N workers over none (how much the threads run in parallel:
bounded by the machine's cores)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from realprogs import timed_ways  # noqa: E402
from tests.realprogs import sources  # noqa: E402
from tests.realprogs.test_xxhash_zstd import text_data  # noqa: E402


def recompile(binary: Path, out: Path) -> Path:
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)], capture_output=True, text=True
    )
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=32, help="input size for zstd (text-like data)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-qemu", action="store_true")
    a = ap.parse_args()
    qemu = None if a.no_qemu else shutil.which("qemu-aarch64")
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-thr-"))
    try:
        z_arm, z_nat = sources.build("zstd_mt", "aarch64"), sources.build("zstd_mt", "x86_64")
        p_arm = sources.build("pthreads_test", "aarch64")
        z_b, p_b = recompile(z_arm, tmp / "zstd"), recompile(p_arm, tmp / "pthreads")
        (tmp / "in.txt").write_bytes(text_data(a.mb << 20, 3))
        print(f"input {a.mb} MB of text-like data; best of {a.reps}, the ways interleaved; cores: {os.cpu_count()}")
        print(f"{'zstd -3':12} {'native':>9} {'recompiled':>11} {'qemu':>9} {'native/ours':>12} {'qemu/ours':>10}")
        base: dict[str, float] = {}
        for w in (0, 1, 2, 4):
            extra = [f"-j{w}"] if w else []
            ways = {"native": [str(z_nat), "-3", *extra], "ours": [str(z_b / "nxrun"), "zstd", "-3", *extra]}
            if qemu:
                ways["qemu"] = [qemu, "-0", "zstd", str(z_arm), "-3", *extra]
            res = timed_ways(ways, tmp, a.reps, "in.txt")
            t = {k: v[0] for k, v in res.items()}
            if len({v[1] for v in res.values()}) != 1:
                raise SystemExit(f"zstd -j{w}: the ways' outputs differ")
            if not w:
                base = dict(t)
            tq = t.get("qemu", float("nan"))
            speedup = "" if not w else "   speed-up over no pool: " + ", ".join(f"{k} {base[k] / t[k]:.2f}x" for k in t)
            print(
                f"{'workers ' + str(w):12} {t['native']:8.2f}s {t['ours']:10.2f}s {tq:8.2f}s "
                f"{t['native'] / t['ours']:11.2f}x {tq / t['ours']:9.2f}x{speedup}"
            )
        ways = {"ours": [str(p_b / "nxrun"), "pthreads_test"]}
        if qemu:
            ways["qemu"] = [qemu, "-0", "pthreads_test", str(p_arm)]
        res = timed_ways(ways, tmp, a.reps, None)
        tq = res["qemu"][0] if qemu else float("nan")
        print(
            f"pthreads_test (every part; ~80 ms of it timed waits): recompiled {res['ours'][0]:.2f}s, "
            f"qemu {tq:.2f}s, qemu/ours {tq / res['ours'][0]:.2f}x"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
