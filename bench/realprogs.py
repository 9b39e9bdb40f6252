"""Real FP/SIMD-heavy programs: recompiled aarch64 build vs the same sources built natively for
x86-64 (both clang -O2, static musl) vs qemu-aarch64 on the aarch64 build, in one run.  Where
the recompiled code is compiled for x86-64-v3 (``recompiler.march``, auto on such a CPU) the
native sources are also built for x86-64-v3 and shown beside the baseline build ("native v3"),
so that the ratio at equal instruction sets is on the record too.

    .venv/bin/python bench/realprogs.py [--scale 1.0] [--reps 3] [--no-qemu]

Workloads: Lua 5.4 n-body and spectral-norm (float-heavy interpreter loops), zstd -3 compress
and decompress of text-like data, xxhsum (XXH32/64/XXH3/XXH128 + seeded streaming) of a random
file.  Programs and sources come from ``tests/realprogs/sources.py`` (cached).  Prints seconds
and ratios (native/ours: 1.0 is native speed, higher is faster; qemu/ours: how much faster than
qemu); "compute only" takes each way's start-up (``lua -e ''``) off both sides."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recompiler import cc  # noqa: E402
from tests.realprogs import sources  # noqa: E402
from tests.realprogs.test_xxhash_zstd import text_data  # noqa: E402

LUA = ROOT / "tests" / "realprogs" / "lua"


def workloads(scale: float) -> dict[str, tuple[str, list[str], str | None]]:
    """name -> (program, argv after the program, stdin file or None)"""
    return {
        "lua n-body": ("lua", [str(LUA / "nbody.lua"), str(int(400_000 * scale))], None),
        "lua spectral-norm": ("lua", [str(LUA / "spectral.lua"), str(int(500 * scale**0.5))], None),
        "zstd -3 compress": ("zstd", ["-3"], "big.txt"),
        "zstd decompress": ("zstd", ["-d"], "big.txt.zst"),
        "xxhsum": ("xxhsum", ["big.bin"], None),
    }


def timed(cmd: list[str], cwd: Path, reps: int, stdin: str | None) -> tuple[float, bytes]:
    return timed_ways({"": cmd}, cwd, reps, stdin)[""]


def timed_ways(cmds: dict[str, list[str]], cwd: Path, reps: int, stdin: str | None) -> dict[str, tuple[float, bytes]]:
    """(least wall time, stdout) of each command, the commands interleaved (each round runs
    every one once), so that a burst of other work on the machine falls on all of them alike."""
    best: dict[str, list[float]] = {k: [] for k in cmds}
    outs: dict[str, bytes] = {}
    for _ in range(reps):
        for k, cmd in cmds.items():
            fin = open(cwd / stdin, "rb") if stdin else subprocess.DEVNULL
            t = time.perf_counter()
            r = subprocess.run(cmd, cwd=cwd, stdin=fin, capture_output=True)
            best[k].append(time.perf_counter() - t)
            if stdin:
                fin.close()
            if r.returncode != 0:
                raise SystemExit(f"{cmd[:5]} failed: {r.stderr.decode()[-500:]}")
            outs[k] = r.stdout
    return {k: (min(v), outs[k]) for k, v in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-qemu", action="store_true")
    a = ap.parse_args()
    qemu = None if a.no_qemu else shutil.which("qemu-aarch64")
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-rp-"))
    arm, nat, nat3, bundles = {}, {}, {}, {}
    v3 = cc.march() == "x86-64-v3"
    for name in ("lua", "zstd", "xxhsum"):
        arm[name], nat[name] = sources.build(name, "aarch64"), sources.build(name, "x86_64")
        if v3:
            nat3[name] = sources.build(name, "x86_64", cpu="x86_64_v3")
        bundles[name] = tmp / f"{name}-bundle"
        r = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "recompile", str(arm[name]), "-o", str(bundles[name])],
            capture_output=True,
            text=True,
        )
        if r.returncode:
            raise SystemExit(r.stderr[-2000:])
    mb = max(1, int(48 * a.scale))
    (tmp / "big.txt").write_bytes(text_data(mb << 20, 1))
    (tmp / "big.bin").write_bytes(os.urandom(4 * mb << 20))
    subprocess.run(
        [str(nat["zstd"]), "-3"],
        stdin=open(tmp / "big.txt", "rb"),
        stdout=open(tmp / "big.txt.zst", "wb"),
        stderr=subprocess.DEVNULL,
        check=True,
    )

    def ways(prog: str) -> dict[str, list[str]]:
        w = {
            "native": [str(nat[prog])],
            "ours": [str(bundles[prog] / "nxrun"), prog],
        }  # native launcher (what `nxrecomp exec` execs)
        if v3:
            w["native v3"] = [str(nat3[prog])]
        if qemu:
            w["qemu"] = [qemu, "-0", prog, str(arm[prog])]
        return w

    start = {k: timed([*v, "-e", ""], tmp, 5, None)[0] for k, v in ways("lua").items()}
    print(
        f"inputs: text {mb} MB, random {4 * mb} MB, n-body {int(400_000 * a.scale)} steps; best of {a.reps}, the ways interleaved; "
        f"cores: {os.cpu_count()}; start-up (lua -e ''): " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in start.items())
    )
    print(f"recompiled code compiled for {cc.march()}")
    print(
        f"{'workload':18} {'native x86-64':>13} {'native v3':>10} {'recompiled':>11} {'qemu':>9} {'native/ours':>12} "
        f"{'v3/ours':>8} {'qemu/ours':>10} {'compute only: native/ours':>26}"
    )
    ratios, ratios3, compute = [], [], []
    for name, (prog, argv, stdin) in workloads(a.scale).items():
        res = timed_ways({way: [*cmd, *argv] for way, cmd in ways(prog).items()}, tmp, a.reps, stdin)
        t = {k: v[0] for k, v in res.items()}
        outs = {k: v[1] for k, v in res.items()}
        if outs["ours"] != outs.get("qemu", outs["ours"]):
            raise SystemExit(f"{name}: recompiled output differs from qemu's")
        ratios.append(t["native"] / t["ours"])
        t3 = t.get("native v3", float("nan"))
        if t3 == t3:
            ratios3.append(t3 / t["ours"])
        c = (
            (t["native"] - start["native"]) / (t["ours"] - start["ours"]) if t["ours"] - start["ours"] > 0.05 else float("nan")
        )  # too short to tell
        if c == c:
            compute.append(c)
        tq = t.get("qemu", float("nan"))
        print(
            f"{name:18} {t['native']:12.2f}s {t3:9.2f}s {t['ours']:10.2f}s {tq:8.2f}s {t['native'] / t['ours']:11.2f}x "
            f"{t3 / t['ours']:7.2f}x {tq / t['ours']:9.2f}x {c:25.2f}x"
        )
    print(
        f"geometric mean speed vs native: {statistics.geometric_mean(ratios):.2f}x whole runs, "
        f"{statistics.geometric_mean(compute) if compute else float('nan'):.2f}x without start-up (target >= 0.8x)"
        + (f"; vs native built for x86-64-v3: {statistics.geometric_mean(ratios3):.2f}x" if ratios3 else "")
    )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
