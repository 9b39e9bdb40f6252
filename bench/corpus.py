"""The large programs of tests/realprogs/test_corpus.py on their own workloads: recompiled
aarch64 build vs the same sources built natively for x86-64 (zig's clang, -O2, static musl,
the same flags) vs qemu-aarch64 on the aarch64 build, in one run.

    .venv/bin/python bench/corpus.py [--scale 1.0] [--reps 3] [--no-qemu] [--only sqlite3,brotli,qjs]
                                     [--cpu] [--ab-define NAME] [--ab-env NAME=VALUE]
    .venv/bin/python bench/corpus.py --recompile-only [--only ...]

``--cpu`` keeps each way's least user + system CPU seconds instead of its least wall time (on
the shared VM, a run that waits for a core is not slower code).  ``--ab-define NAME`` builds a
second bundle of each program with ``-DNAME`` given to the C compiler (a switch of
cpu_host/runtime/core/lifted.h, e.g. ``NX_LQ128_WHOLE``) and runs it as one more way,
``ours+NAME``, interleaved with the others: an A/B of a runtime-header choice in one run.  The object
cache's key holds the compiler's whole command line (``cc.identity``), so that bundle's objects
share the cache without ever being taken for the other's.  ``--ab-env NAME=VALUE`` is the same for
a run-time choice (a setting the runtime or the launcher reads from the environment, e.g.
``NXRECOMP_CPU_HOST_HUGE_PAGES=1``): no second bundle, the same one run once more with that
variable set, as the way ``ours+NAME=VALUE`` (both ways start through ``env``, so that neither
pays for a process the other does not).

``--recompile-only`` times each program's recompile cold (empty object cache and empty zig
cache, zig's libc stubs made first, untimed, as bench/busybox.py does) and prints wall and CPU
seconds: on this shared 2-core VM the wall time depends on the load, so CPU seconds / 2 is the
figure for 2 idle cores (target: < 5 minutes).

Workloads:
- ``sqlite3``: tests/realprogs/corpus_cases.py's SQL_WORKLOAD (200k rows through inserts, two
  index builds, aggregates, a self-join, window functions, updates, deletes) in ``:memory:``;
- ``brotli``: 16 MB of text-like data (random words) compressed at quality 5 and 9, Brotli's
  own corpus texts (1.9 MB) at quality 11, and 64 MB of such data decompressed;
- ``qjs``: QuickJS's own ``tests/microbench.js``.  Its tests calibrate their iteration counts by
  the clock, so its wall time says nothing; instead each way runs it with ``-r`` against the
  native run's results (``-s``), and the figure is microbench's own ``total`` score (1000 = as
  fast as native), reported as a ratio.  Best of ``--reps`` for the others, one run here.

Prints seconds and ratios (native/ours: 1.0 is native speed, higher is faster; qemu/ours: how
much faster than qemu), and the geometric mean of native/ours (targets: every program >= 0.8x,
mean >= 1.0x).  Outputs of ours and qemu must be identical (microbench's timings excepted)."""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.busybox import recompile, warm_zig_libc  # noqa: E402
from bench.realprogs import timed_ways  # noqa: E402
from recompiler import cc  # noqa: E402
from tests.realprogs import corpus_cases, sources  # noqa: E402
from tests.realprogs.test_xxhash_zstd import text_data  # noqa: E402

PROGRAMS = ("sqlite3", "brotli", "qjs")
TEXTS = ("alice29.txt", "asyoulik.txt", "lcet10.txt", "plrabn12.txt")


def workloads(scale: float) -> list[tuple[str, str, list[str], str | None]]:
    """(label, program, argv after the program, stdin file or None)"""
    mb = max(1, int(16 * scale))
    return [
        ("sqlite3 SQL workload", "sqlite3", [":memory:"], "work.sql"),
        (f"brotli -q 5 ({mb} MB)", "brotli", ["-c", "-q", "5", "big.txt"], None),
        (f"brotli -q 9 ({mb} MB)", "brotli", ["-c", "-q", "9", "big.txt"], None),
        ("brotli -q 11 (1.9 MB)", "brotli", ["-c", "-q", "11", "texts.txt"], None),
        (f"brotli -d ({4 * mb} MB)", "brotli", ["-dc", "huge.br"], None),
    ]


def prepare(tmp: Path, scale: float) -> None:
    """Brotli's inputs: its corpus's four English texts (quality 11), and text-like data of
    words drawn at random (bench/realprogs.py's generator; repeating the small corpus would let
    every match reach back one copy and measure nothing)."""
    data = sources.fetch("brotli") / "tests" / "testdata"
    (tmp / "texts.txt").write_bytes(b"".join((data / t).read_bytes() for t in TEXTS))
    mb = max(1, int(16 * scale))
    (tmp / "big.txt").write_bytes(text_data(mb << 20, 1))
    (tmp / "huge.txt").write_bytes(text_data(4 * mb << 20, 2))
    (tmp / "work.sql").write_text(corpus_cases.SQL_WORKLOAD.format(rows=int(200_000 * scale)))
    nat = sources.build("brotli", "x86_64")
    subprocess.run([str(nat), "-c", "-q", "5", "huge.txt"], cwd=tmp, stdout=open(tmp / "huge.br", "wb"), check=True)
    for t in (sources.fetch("quickjs") / "tests").glob("*.js"):
        shutil.copyfile(t, tmp / t.name)


def microbench(ways: dict[str, list[str]], tmp: Path) -> dict[str, float]:
    """microbench's total score of each way against the native run (1000 = native speed)."""
    # (microbench saves its results only when it ran its whole list: all tests, every way)
    # (--std: microbench reads its clock (os.now) and writes/reads results through std/os;
    # without it, it falls back to Date.now's milliseconds and cannot save a reference)
    subprocess.run([*ways["native"], "--std", "microbench.js", "-s", "ref.txt"], cwd=tmp, check=True, capture_output=True)
    if not (tmp / "ref.txt").exists():
        raise SystemExit("qjs microbench.js -s ref.txt wrote no reference file")
    scores = {}
    for way, cmd in ways.items():
        r = subprocess.run([*cmd, "--std", "microbench.js", "-r", "ref.txt", "-s", ""], cwd=tmp, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"qjs microbench ({way}) failed: {r.stderr[-800:]}")
        total = [ln for ln in r.stdout.splitlines() if ln.split()[:1] == ["total"]]
        scores[way] = float(total[-1].split()[-1])
    return scores


def cpu_ways(cmds: dict[str, list[str]], cwd: Path, reps: int, stdin: str | None) -> dict[str, tuple[float, bytes]]:
    """(least user + system CPU seconds, stdout) of each command, interleaved as timed_ways."""
    best: dict[str, float] = {k: float("inf") for k in cmds}
    outs: dict[str, bytes] = {}
    for _ in range(reps):
        for k, cmd in cmds.items():
            fin = open(cwd / stdin, "rb") if stdin else subprocess.DEVNULL
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = subprocess.run(cmd, cwd=cwd, stdin=fin, capture_output=True)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if stdin:
                fin.close()
            if r.returncode != 0:
                raise SystemExit(f"{cmd[:5]} failed: {r.stderr.decode()[-500:]}")
            best[k] = min(best[k], (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
            outs[k] = r.stdout
    return {k: (best[k], outs[k]) for k in cmds}


def recompile_bundle(prog: Path, out: Path, define: str | None = None) -> None:
    """``nxrecomp recompile`` of ``prog`` into ``out``; with ``define``, the C compiler gets
    ``-D<define>`` (part of each object's cache key: ``cc.identity``)."""
    env = dict(os.environ)
    if define:
        env["NXRECOMP_RECOMPILER_CC"] = " ".join([*cc.compiler(), f"-D{define}"])
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "recompile", str(prog), "-o", str(out)], capture_output=True, text=True, env=env
    )
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-qemu", action="store_true")
    ap.add_argument("--only", default=",".join(PROGRAMS), help="programs, comma-separated")
    ap.add_argument("--recompile-only", action="store_true", help="time cold recompiles only")
    ap.add_argument("--cpu", action="store_true", help="least user+system CPU seconds instead of wall")
    ap.add_argument("--ab-define", metavar="NAME", help="also a bundle built with -DNAME, as the way ours+NAME")
    ap.add_argument("--ab-env", metavar="NAME=VALUE", help="also the same bundle run with NAME=VALUE set, as ours+NAME=VALUE")
    a = ap.parse_args()
    if a.ab_define and a.ab_env:
        raise SystemExit("--ab-define and --ab-env: one A/B at a time")
    if a.ab_env and ("=" not in a.ab_env or not a.ab_env.split("=", 1)[0]):
        raise SystemExit(f"--ab-env {a.ab_env!r}: expected NAME=VALUE")
    only = [p for p in a.only.split(",") if p]
    if a.recompile_only:
        with tempfile.TemporaryDirectory(prefix="nxbench-corpus-cold-") as d:
            warm_zig_libc(Path(d) / "zig-cache")
            for name in only:
                recompile(
                    sources.build(name, "aarch64"), Path(d) / f"{name}-bundle", Path(d) / f"cache-{name}", Path(d) / "zig-cache"
                )
        return
    qemu = None if a.no_qemu else shutil.which("qemu-aarch64")
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-corpus-"))
    arm, nat, bundles = {}, {}, {}
    ab = f"ours+{a.ab_define or a.ab_env}" if a.ab_define or a.ab_env else None
    for name in only:
        arm[name], nat[name] = sources.build(name, "aarch64"), sources.build(name, "x86_64")
        bundles[name] = tmp / f"{name}-bundle"
        recompile_bundle(arm[name], bundles[name])
        if a.ab_define:
            recompile_bundle(arm[name], tmp / f"{name}-bundle-ab", a.ab_define)
    prepare(tmp, a.scale)

    def ways(prog: str) -> dict[str, list[str]]:
        w = {"native": [str(nat[prog])], "ours": [str(bundles[prog] / "nxrun"), prog]}
        if a.ab_define:
            w[ab] = [str(tmp / f"{prog}-bundle-ab" / "nxrun"), prog]
        elif a.ab_env:
            w["ours"] = ["env", *w["ours"]]
            w[ab] = ["env", a.ab_env, *w["ours"][1:]]
        if qemu:
            w["qemu"] = [qemu, "-0", prog, str(arm[prog])]
        return w

    print(
        f"scale {a.scale}; best of {a.reps} ({'CPU' if a.cpu else 'wall'} seconds), the ways interleaved; "
        f"cores: {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}; "
        f"recompiled code compiled for {cc.march()}; native built for x86-64 baseline (same clang, -O2)"
    )
    print(f"{'workload':24} {'native':>9} {'recompiled':>11} {'qemu':>9} {'native/ours':>12} {'qemu/ours':>10}")
    if ab:
        print(f"(way {ab}: each line's second row; 'B/A' = its time over ours: above 1, ours is faster)")
    per_prog: dict[str, list[float]] = {}
    per_ab: dict[str, list[float]] = {}
    measure = cpu_ways if a.cpu else timed_ways
    for label, prog, argv, stdin in workloads(a.scale):
        if prog not in only:
            continue
        res = measure({way: [*cmd, *argv] for way, cmd in ways(prog).items()}, tmp, a.reps, stdin)
        t = {k: v[0] for k, v in res.items()}
        for way in res:
            if way != "native" and res[way][1] != res.get("qemu", res["ours"])[1]:
                raise SystemExit(f"{label}: {way}'s output differs from {'qemu' if qemu else 'ours'}'")
        per_prog.setdefault(prog, []).append(t["native"] / t["ours"])
        tq = t.get("qemu", float("nan"))
        print(
            f"{label:24} {t['native']:8.2f}s {t['ours']:10.2f}s {tq:8.2f}s {t['native'] / t['ours']:11.2f}x "
            f"{tq / t['ours']:9.2f}x"
        )
        if ab:
            per_ab.setdefault(prog, []).append(t["native"] / t[ab])
            print(f"{'  ' + ab:24} {'':9} {t[ab]:10.2f}s {'':9} {t['native'] / t[ab]:11.2f}x   B/A {t[ab] / t['ours']:.2f}x")
    if "qjs" in only:
        s = microbench(ways("qjs"), tmp)
        per_prog["qjs"] = [s["ours"] / s["native"]]
        sq = s.get("qemu", float("nan"))
        print(
            f"{'qjs microbench.js score':24} {s['native']:9.0f} {s['ours']:11.0f} {sq:9.0f} "
            f"{s['ours'] / s['native']:11.2f}x {s['ours'] / sq:9.2f}x   (microbench's total score; higher is faster)"
        )
        if ab:
            per_ab["qjs"] = [s[ab] / s["native"]]
            print(f"{'  ' + ab:24} {'':9} {s[ab]:11.0f} {'':9} {s[ab] / s['native']:11.2f}x")
    for name, table in (("ours", per_prog), (ab, per_ab)):
        means = {p: statistics.geometric_mean(v) for p, v in table.items()}
        if not means:
            continue
        print(
            f"{name}: per program (geometric mean of its workloads), native/{name}: "
            + ", ".join(f"{p} {m:.2f}x" for p, m in means.items())
        )
        print(
            f"{name}: geometric mean over programs: {statistics.geometric_mean(list(means.values())):.2f}x "
            f"(targets: every program >= 0.8x, mean >= 1.0x)"
        )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
