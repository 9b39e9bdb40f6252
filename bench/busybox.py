"""Recompiled arm64 busybox vs the native amd64 build vs qemu-aarch64, in one run.

    .venv/bin/python bench/busybox.py [--mb 24] [--reps 3] [--skip-recompile | --recompile-only]
    .venv/bin/python bench/busybox.py --loop-edges [--only sort] [--mb 24] [--reps 5]

Workloads (files of tens of MB made here): md5sum, sha256sum, gzip -c, bzip2 -c, sort.
Anchors: Debian 12's amd64 ``busybox-static`` (native speed) and ``qemu-aarch64`` running the
arm64 binary.  Also times the recompile of busybox end to end cold (empty object cache) and
after one function changed (one instruction of one function patched in a copy of the binary).
Ours runs through the bundle's native launcher (``BUNDLE/nxrun``, cpu_host/launcher), which
is what ``nxrecomp exec`` execs into.  Prints a table of seconds and ratios (native/ours: 1.0
is native speed, higher is faster).

``--loop-edges``: an A/B of where loops get the compiler barrier (``recompiler.loop_edges``):
two bundles from the warm object cache, ``needed`` (the default) and ``all`` (every back
edge), timed interleaved with the native build on the workloads (``--only`` picks some)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.chart import groups  # noqa: E402
from nxrecomp.common import debian  # noqa: E402

WORKLOADS = {
    "md5sum": ["md5sum", "big.bin"],
    "sha256sum": ["sha256sum", "big.bin"],
    "gzip": ["gzip", "-c", "big.txt"],
    "bzip2": ["bzip2", "-c", "small.txt"],
    "sort": ["sort", "big.txt"],
}


def make_inputs(d: Path, mb: int) -> None:
    rnd = os.urandom(1 << 20)
    with open(d / "big.bin", "wb") as f:
        for i in range(mb):
            f.write(rnd[i:] + rnd[:i])
    lines = "".join(f"{(i * 2654435761) % 1000003:07d} record {i % 977} of the benchmark\n" for i in range(200000))
    data = (lines * (mb * (1 << 20) // len(lines) + 1))[: mb << 20]
    (d / "big.txt").write_text(data)
    (d / "small.txt").write_text(data[: (mb << 20) // 4])


def timed(cmd: list[str], cwd: Path, reps: int) -> float:
    return timed_ways({"": cmd}, cwd, reps)[""]


def timed_ways(cmds: dict[str, list[str]], cwd: Path, reps: int) -> dict[str, float]:
    """Least wall time of each command, the commands interleaved (each round runs every one
    once), so that a burst of other work on the machine falls on all of them alike."""
    best: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(reps):
        for k, cmd in cmds.items():
            t = time.perf_counter()
            r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            best[k].append(time.perf_counter() - t)
            if r.returncode != 0:
                raise SystemExit(f"{cmd[:4]} failed: {r.stderr.decode()[-500:]}")
    return {k: min(v) for k, v in best.items()}


def recompile(src: Path, out: Path, cache: Path, zig_cache: Path | None = None) -> float:
    """Seconds to recompile ``src``; prints CPU seconds, load averages and the build's stats.
    ``zig_cache``: zig's own cache folder (zig cc keeps every object it compiles there too, so
    a cold measurement needs an empty one as well as an empty object cache)."""
    env = {**os.environ, "NXRECOMP_NXRECOMP_CACHE_DIR": str(cache)}
    if zig_cache is not None:
        env.update(ZIG_GLOBAL_CACHE_DIR=str(zig_cache), ZIG_LOCAL_CACHE_DIR=str(zig_cache))
    load0, r0, t = os.getloadavg(), resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(src), "-o", str(out)], env=env, capture_output=True, text=True
    )
    wall, r1 = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])
    stats = json.loads((out / "manifest.json").read_text())["stats"]
    print(
        f"recompile {src.name} -> {out.name}: {wall:.1f} s wall, {r1.ru_utime - r0.ru_utime:.0f} s user "
        f"+ {r1.ru_stime - r0.ru_stime:.0f} s sys; load average {load0[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after; {json.dumps({k: stats.get(k) for k in _STATS})}"
    )
    return wall


_STATS = ("shards", "objects_cached", "seconds", "cpu_seconds", "wall_seconds", "slowest")


def warm_zig_libc(zig_cache: Path) -> None:
    """Build zig's glibc stubs and start files into an empty ``zig_cache`` (untimed): they are
    made once per machine (~35 s of CPU), not per program, so a cold recompile excludes them."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "t.c").write_text("int main(void) { return 0; }\n")
        env = {**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(zig_cache), "ZIG_LOCAL_CACHE_DIR": str(zig_cache)}
        for extra in (["-shared", "-fPIC"], ["-fPIE", "-pie"]):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "ziglang",
                    "cc",
                    "-target",
                    "x86_64-linux-gnu",
                    *extra,
                    "-o",
                    str(Path(d) / "t.out"),
                    str(Path(d) / "t.c"),
                    "-lpthread",
                ],
                env=env,
                check=True,
            )


def patch_one_function(src: Path, dst: Path) -> None:
    """Copy ``src`` with one prologue's `mov x29, sp` turned into `add x29, sp, #16`, so
    exactly one function's C (one shard) changes and no control flow does.  (The copy is only
    recompiled, never run.  A `nop` is no good: the first one is padding between functions,
    which the analysis leaves out, so patching it changed no shard.)"""
    data = bytearray(src.read_bytes())
    mov_fp = (0x910003FD).to_bytes(4, "little")
    off = data.find(mov_fp, 0x10000)
    while off % 4:
        off = data.find(mov_fp, off + 1)
    data[off : off + 4] = (0x910043FD).to_bytes(4, "little")
    dst.write_bytes(bytes(data))
    dst.chmod(0o755)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip-recompile", action="store_true", help="reuse the warm object cache; no cold timing")
    ap.add_argument("--recompile-only", action="store_true", help="only the two recompile timings, no workloads")
    ap.add_argument("--loop-edges", action="store_true", help="A/B of recompiler.loop_edges: needed vs all")
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    a = ap.parse_args()
    if a.loop_edges:
        loop_edges_ab(a)
        return
    arm = debian.busybox("arm64")
    amd = debian.busybox("amd64")
    qemu = shutil.which("qemu-aarch64")
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-"))
    bundle = tmp / "bundle"
    rows = []
    if a.skip_recompile:
        recompile(arm, bundle, Path(os.environ.get("NXRECOMP_NXRECOMP_CACHE_DIR", Path.home() / ".cache/nxrecomp")))
    else:
        cache = tmp / "cache"
        warm_zig_libc(tmp / "zig-cache")
        cold = recompile(arm, bundle, cache, tmp / "zig-cache")
        patched = tmp / "busybox-patched"
        patch_one_function(arm, patched)
        warm = recompile(patched, tmp / "bundle-patched", cache, tmp / "zig-cache")
        rows.append(("recompile busybox, cold", cold))
        rows.append(("recompile busybox, one function changed", warm))
    if a.recompile_only:
        for what, sec in rows:
            print(f"{what}: {sec:.1f}s")
        shutil.rmtree(tmp, ignore_errors=True)
        return
    work = tmp / "work"
    work.mkdir()
    make_inputs(work, a.mb)
    # the bundle's native launcher (what `nxrecomp exec` execs into, without Python's start-up)
    ours_cmd = [str(bundle / "nxrun")]
    # start-up of each way to run a program (``true``): ours pays dlopen of game.so + mapping
    s_nat = timed([str(amd), "true"], work, 5)
    s_ours = timed([*ours_cmd, "true"], work, 5)
    s_q = timed([qemu, "-0", "true", str(arm)], work, 5) if qemu else float("nan")
    print(
        f"inputs: {a.mb} MB files; best of {a.reps}, the ways interleaved; cores: {os.cpu_count()}; "
        f"start-up (busybox true): native {s_nat * 1000:.0f} ms, ours {s_ours * 1000:.0f} ms, qemu {s_q * 1000:.0f} ms"
    )
    print(
        f"{'workload':12} {'native amd64':>13} {'recompiled':>11} {'qemu':>9} {'native/ours':>12} "
        f"{'qemu/ours':>10} {'compute only: native/ours':>26}"
    )
    ratios, compute = [], []
    drawn: dict[str, dict[str, float]] = {}
    for name, argv in WORKLOADS.items():
        cmds = {"native": [str(amd), *argv], "ours": [*ours_cmd, *argv]}
        if qemu:
            cmds["qemu"] = [qemu, "-0", argv[0], str(arm), *argv[1:]]
        t = timed_ways(cmds, work, a.reps)
        t_nat, t_ours, t_q = t["native"], t["ours"], t.get("qemu", float("nan"))
        ratios.append(t_nat / t_ours)
        c = (t_nat - s_nat) / max(t_ours - s_ours, 1e-6)
        compute.append(c)
        drawn[name] = {"native amd64": t_nat, "recompiled": t_ours, "qemu-aarch64": t_q}
        print(f"{name:12} {t_nat:12.2f}s {t_ours:10.2f}s {t_q:8.2f}s {t_nat / t_ours:11.2f}x {t_q / t_ours:9.2f}x {c:25.2f}x")
    print(
        f"geometric mean speed vs native: {statistics.geometric_mean(ratios):.2f}x whole runs, "
        f"{statistics.geometric_mean(compute):.2f}x without start-up (target >= 0.8x)"
    )
    for what, sec in rows:
        print(f"{what}: {sec:.1f}s")
    groups(
        __file__, "workloads", drawn, title=f"busybox on {a.mb} MB inputs (best of {a.reps}; lower is faster)", ylabel="seconds"
    )
    shutil.rmtree(tmp, ignore_errors=True)


def loop_edges_ab(a: argparse.Namespace) -> None:
    """Bundles with the loop-edge barrier where needed and on every back edge, timed in one run."""
    arm = debian.busybox("arm64")
    amd = debian.busybox("amd64")
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-"))
    cache = Path(os.environ.get("NXRECOMP_NXRECOMP_CACHE_DIR", Path.home() / ".cache/nxrecomp"))
    ways = {}
    for mode in ("needed", "all"):
        os.environ["NXRECOMP_RECOMPILER_LOOP_EDGES"] = mode
        recompile(arm, tmp / f"bundle-{mode}", cache)
        ways[f"ours, {mode}"] = tmp / f"bundle-{mode}" / "nxrun"
    os.environ.pop("NXRECOMP_RECOMPILER_LOOP_EDGES")
    work = tmp / "work"
    work.mkdir()
    make_inputs(work, a.mb)
    only = [w for w in a.only.split(",") if w] or list(WORKLOADS)
    print(f"inputs: {a.mb} MB files; best of {a.reps}, the ways interleaved; native/ours (higher is faster)")
    for name in only:
        argv = WORKLOADS[name]
        t = timed_ways({"native": [str(amd), *argv], **{k: [str(p), *argv] for k, p in ways.items()}}, work, a.reps)
        cols = "  ".join(f"{k} {v:.2f}s ({t['native'] / v:.2f}x)" for k, v in t.items() if k != "native")
        print(f"{name:10} native {t['native']:.2f}s  {cols}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
