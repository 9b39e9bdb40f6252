"""Speed figures of the recompiler on a quiet machine: the corpus programs' workloads lifted vs
native amd64 vs qemu-aarch64, staged here and run on the device machine's idle CPU cores.

    # here: build (or take from the cache) what the runs need into a git-ignored carry folder
    .venv/bin/python bench/quiet_stage.py stage --carry build/quiet [--reps 5] [--mb-reps 2]
                                                [--only qjs,sqlite3,busybox,...] [--no-qemu]
    # there (device tool: run, carry ["build/quiet"]):  bash build/quiet/device.sh
    #   -> prints the table and writes $OUT/quiet_table.txt, $OUT/quiet_results.json
    # anywhere, as a test of the staged folder (1 rep; the table goes to --out):
    bash build/quiet/device.sh --reps 1 --mb-reps 1 --out /tmp/quiet-out

The dev VM has 2 shared cores at load 15-35, so its wall-time ratios (docs/PERFORMANCE.md) move
by 10 % between runs; a device machine's 16 cores sit idle.  ``stage`` gathers, for each program:
the lifted bundle (``nxrecomp recompile`` with this tree's lifter, cached per program and lifter
in ``<cache_dir>/quiet_stage/bundles``: nxrun, game.so, image.bin, launch.txt, all it needs), the
native amd64 build of the same source with the same clang and flags (``tests/realprogs/sources.py``;
busybox: Debian 12's amd64 ``busybox-static``; shfmt, a Go program: Debian 12's amd64 ``shfmt``, the
same 3.6.0 source and Go 1.19 as the arm64 one; the C++ programs ``jsontestrunner`` (JsonCpp) and
``xmltest`` (TinyXML-2): zig's clang++ -O2, libc++, static musl, as ``bench/cxx.py`` builds them),
the aarch64 program itself (qemu's input) and the workload inputs, made by the benchmarks of record
(``bench/corpus.py``, ``bench/realprogs.py``, ``bench/busybox.py``, ``bench/callgrind_ir.py``,
``bench/cxx.py``: their workload lists and input makers are imported, not copied).  Debian 12's static ``qemu-aarch64`` (package ``qemu-user-static``, the
same 7.2 as the dev VM's qemu-user) goes with them.  Everything is packed into xz archives
(QuickJS's game.so is 24 MB, 5 MB packed); ``stage`` stops if the folder would pass ``--limit-mb``
(the device tool carries 64 MiB with the repository): stage twice with ``--only`` into two folders
then.  Inputs whose bytes need not travel are made there: random files from ``/dev/urandom``,
zstd's and Brotli's compressed inputs by the native program (as bench/realprogs.py and
bench/corpus.py make them here), zstd's 48 MB input from three copies of the 16 MB text and
Brotli's 64 MB -d input from four (zstd -3's window is 2 MB, Brotli -q 5's 4 MB, so no match
reaches another copy: the reason bench/corpus.py makes fresh text instead of repeating a corpus);
bench/cxx.py's 32 MB of JSON and XML by its own generator, whose source travels as
``cxx_inputs.py`` (the device checks the files' sha256 against the staging's).  Outputs compared:
stdout and exit status, plus the files jsontestrunner writes beside its input (``.actual``,
``.rewrite``, ``.actual-rewrite``); xmltest's printed clock values are masked.

``device`` (stdlib only; this same file, copied into the folder) unpacks into ``/tmp/quiet``,
points each bundle's ``exe`` at the carried aarch64 program, turns lift-on-miss off (a missed
branch is then a fatal error, not a silent compile), checks that every way starts (a one-line
command of each program through native, ours and qemu, outputs compared), then runs the jobs:
each workload is one job whose ways run interleaved (native, ours, qemu, native, ...) ``--reps``
times (qemu, 3-10x slower and not the figure of record, in the first ``--qemu-reps`` rounds only), pinned (taskset) to one core that no other job uses meanwhile; jobs run side by side on
distinct physical cores (one thread of each core; the first core left to the system and this
runner).  QuickJS's ``microbench.js`` calibrates its loops by the clock, so its time is no figure:
each way runs it ``--mb-reps`` times on a core of its own, saving its per-test times (``-s``),
and the score is what microbench's ``-r`` computes (1000 x tests / sum of time ratios), from each
test's least time of the runs.  Every run's stdout and exit status must be identical across the
ways (microbench's timings excepted); a difference is reported in the table's last column.

Prints one table (workload, native s, ours s, native/ours of the least wall times, the median and
range of each round's native/ours, qemu s, qemu/ours, the spread of ours' runs, identical), the
geometric means and the machine's CPU model (lscpu); writes it and the raw runs to ``--out``
(``$OUT`` on the device); ``table RESULTS.json`` prints the table again from the raw runs.
Seen on the 16-core host (12-07): with 15 jobs side by side the first round ran up to 1.9x
slower than the last (all jobs start together; the machine speeds up as they finish), alike for
every way of a job: the least times come from the later rounds, and the per-round column shows
how far a single round's ratio strays; ``--jobs N`` runs fewer side by side."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ("qjs", "sqlite3", "busybox", "brotli", "lua", "zstd", "xxhsum", "shfmt", "jsontestrunner", "xmltest")
CXX = ("jsontestrunner", "xmltest")  # bench/cxx.py's programs (C++: JsonCpp, TinyXML-2)
TEXT_MB = 16  # corpus.py's big.txt at scale 1 (made there by the carried generator); zstd's 48 MB input (realprogs.py's size) is 3 copies of it
BB_MB = 64  # busybox inputs (bench/busybox.py's default)
# shfmt's input: the shell scripts of this machine that session 31's dev-VM figure formatted
# (/usr/bin/*.sh and /etc/init.d/*, sorted by name), repeated; made here, they travel
SH_GLOBS = ("/usr/bin/*.sh", "/etc/init.d/*")
SH_COPIES = 128
RANDOM_MB = 192  # xxhsum's random input (bench/realprogs.py's size), made on the device
CXX_SCALE = 1.0  # bench/cxx.py's big.json (8 MB) and big.xml (24 MB): made on the device by its generator
GEN = "gen_inputs.py"  # the input makers of record (their source) that travel: 11 MB of xz less
XMLTEST_TIMES = r"(time=)\d+"  # xmltest FILE prints its clock() differences (bench/cxx.py's CLOCKS)
JSON_OUTS = ("{}.actual", "{}.rewrite", "{}.actual-rewrite")  # what jsontestrunner writes beside its input
BROTLI_ROWS = ("brotli -q 5", "brotli -d")  # of bench/corpus.py's Brotli workloads (-q 9 / -q 11 with --all-brotli)
LIFT_OFF = {"NXRECOMP_CPU_HOST_LIFT_ON_MISS": "0"}
DEVICE_SH = """#!/bin/bash
# Runs the staged speed figures (bench/quiet_stage.py device); extra arguments go to it.
D="$(cd "$(dirname "$0")" && pwd)"
exec python3 "$D/quiet_stage.py" device --carry "$D" --out "${OUT:-/tmp/quiet-out}" "$@"
"""


# ----------------------------------------------------------------------------------------------
# here: staging
# ----------------------------------------------------------------------------------------------


def _repo_imports() -> None:
    """This tree's modules, here and in the ``nxrecomp recompile`` it starts."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] != str(ROOT):
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def lifter_id() -> str:
    """The lifter's identity: git's tree ids of recompiler/, cpu_host/ and nxrecomp/ (plus a
    digest of their uncommitted changes), so a bundle is rebuilt when the lifter changes."""
    ids = subprocess.run(
        ["git", "rev-parse", "HEAD:recompiler", "HEAD:cpu_host", "HEAD:nxrecomp"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    dirty = subprocess.run(
        ["git", "diff", "HEAD", "--", "recompiler", "cpu_host", "nxrecomp"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return hashlib.sha256(" ".join(ids).encode() + dirty).hexdigest()[:12]


def _cache() -> Path:
    _repo_imports()
    from nxrecomp.common import settings

    p = Path(settings.get("nxrecomp", "cache_dir")) / "quiet_stage"
    p.mkdir(parents=True, exist_ok=True)
    return p


def program_files(name: str) -> tuple[Path, Path]:
    """(aarch64 program, native amd64 program) of a corpus program."""
    _repo_imports()
    if name == "busybox":
        from nxrecomp.common import debian

        return debian.busybox("arm64"), debian.busybox("amd64")
    if name == "shfmt":  # (Go, static: Debian 12's arm64 and amd64 builds of shfmt 3.6.0)
        from nxrecomp.common import debian

        arm, nat = (debian.fetch("shfmt", a) / "usr" / "bin" / "shfmt" for a in ("arm64", "amd64"))
        return arm, nat
    from tests.realprogs import sources

    return sources.build(name, "aarch64"), sources.build(name, "x86_64")


def bundle_for(name: str, arm: Path) -> Path:
    """The lifted bundle of ``arm``, from the cache or built now (bench/corpus.py's recompile); two
    stagings at once (a lock per bundle): one builds, the other waits and takes it."""
    import fcntl

    _repo_imports()
    from bench.corpus import recompile_bundle

    key = f"{name}-{hashlib.sha256(arm.read_bytes()).hexdigest()[:12]}-{lifter_id()}"
    out = _cache() / "bundles" / key
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_name(key + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "launch.txt").exists():
            tmp = out.with_name(key + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            t = time.perf_counter()
            print(f"recompile {name} ({arm.name}) ...", flush=True)
            recompile_bundle(arm, tmp)
            shutil.rmtree(out, ignore_errors=True)
            os.replace(tmp, out)
            print(f"recompile {name}: {time.perf_counter() - t:.0f} s", flush=True)
    return out


BUNDLE_FILES = ("nxrun", "game.so", "image.bin", "launch.txt")


def pack_program(name: str, arm: Path, nat: Path, bundle: Path) -> Path:
    """xz archive of one program's three ways' files (cached by the bundle's and programs' names)."""
    key = f"{bundle.name}-{arm.stat().st_size:x}-{nat.name}-{nat.stat().st_size:x}"
    out = _cache() / "packs" / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}-{name}.tar.xz"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        with tarfile.open(tmp, "w:xz", preset=9) as tf:
            for f in BUNDLE_FILES:
                tf.add(bundle / f, f"bundles/{name}/{f}")
            tf.add(arm, f"bin/{name}-arm")
            tf.add(nat, f"bin/{name}-native")
        os.replace(tmp, out)
    return out


def _qemu_static() -> Path:
    _repo_imports()
    from nxrecomp.common import debian

    return debian.fetch("qemu-user-static", "amd64") / "usr" / "bin" / "qemu-aarch64-static"


def plan_rows(only: list[str], all_brotli: bool) -> tuple[list[dict], list[dict]]:
    """(workload rows, device-side input steps) from the benchmarks of record's lists."""
    _repo_imports()
    from bench.busybox import WORKLOADS as BB
    from bench.corpus import workloads as corpus_workloads
    from bench.realprogs import LUA
    from bench.realprogs import workloads as rp_workloads

    rows: list[dict] = []
    if "qjs" in only:
        rows.append({"label": "qjs microbench.js score", "prog": "qjs", "argv0": "qjs", "kind": "microbench", "cwd": "t"})
        rows.append(
            {"label": "qjs fixed script", "prog": "qjs", "argv0": "qjs", "args": ["work.js"], "cwd": "t", "in_means": False}
        )
    for label, prog, argv, stdin in corpus_workloads(1.0):
        if prog not in only or (prog == "brotli" and not all_brotli and not label.startswith(BROTLI_ROWS)):
            continue
        rows.append({"label": label, "prog": prog, "argv0": prog, "args": argv, "stdin": stdin, "cwd": "t"})
    for label, (prog, argv, stdin) in rp_workloads(1.0).items():
        if prog not in only:
            continue
        args = [Path(x).name if x.startswith(str(LUA)) else x for x in argv]
        if prog == "zstd":  # (zstd -3's window is 2 MB: no match reaches another copy of the text)
            stdin = stdin.replace("big.txt", "zin.txt")
        size = {"zstd": f" ({3 * TEXT_MB} MB)", "xxhsum": f" ({RANDOM_MB} MB)"}.get(prog, "")
        rows.append({"label": label + size, "prog": prog, "argv0": prog, "args": args, "stdin": stdin, "cwd": "t"})
    if "busybox" in only:
        for label, argv in BB.items():
            rows.append(
                {"label": f"busybox {label} ({BB_MB} MB)", "prog": "busybox", "argv0": argv[0], "args": argv[1:], "cwd": "bb"}
            )
    if "shfmt" in only:
        rows.append(
            {
                "label": f"shfmt ({SH_COPIES} x scripts)",
                "prog": "shfmt",
                "argv0": "shfmt",
                "args": [],
                "stdin": "sh.sh",
                "cwd": "t",
            }
        )
    if "jsontestrunner" in only or "xmltest" in only:
        from bench.cxx import workloads as cxx_workloads

        for label, prog, argv in cxx_workloads():
            if prog not in only:
                continue
            row = {"label": label, "prog": prog, "argv0": prog, "args": argv, "cwd": "t"}
            if prog == "jsontestrunner":
                row["files"] = [f.format(Path(argv[-1]).stem) for f in JSON_OUTS]
            else:
                row["mask"] = XMLTEST_TIMES
            rows.append(row)
    prep = []
    if {"brotli", "zstd"} & set(only):
        text = ["text", "big.txt", str(TEXT_MB << 20), "1"]
        prep.append({"cwd": "t", "py": GEN, "args": text, "sha256": gen_digests(*text)})
    if "jsontestrunner" in only or "xmltest" in only:
        cxx = ["cxx", ".", str(CXX_SCALE)]
        prep.append({"cwd": "t", "py": GEN, "args": cxx, "sha256": gen_digests(*cxx)})
    if "zstd" in only:
        prep.append({"cwd": "t", "cmd": ["cat", "big.txt", "big.txt", "big.txt"], "stdout": "zin.txt"})
        prep.append({"cwd": "t", "cmd": ["{native:zstd}", "-3"], "stdin": "zin.txt", "stdout": "zin.txt.zst"})
    if "xxhsum" in only:
        prep.append({"cwd": "t", "cmd": ["head", "-c", f"{RANDOM_MB}M", "/dev/urandom"], "stdout": "big.bin"})
    if "brotli" in only:
        prep.append({"cwd": "t", "cmd": ["cat", "big.txt", "big.txt", "big.txt", "big.txt"], "stdout": "huge.txt"})
        prep.append({"cwd": "t", "cmd": ["{native:brotli}", "-c", "-q", "5", "huge.txt"], "stdout": "huge.br"})
    return rows, prep


# a one-line command per program: do all three ways start and agree?
SMOKE = {
    "qjs": {"argv0": "qjs", "args": ["-e", "print(6 * 7, JSON.stringify([1, 'a']))"]},
    "sqlite3": {"argv0": "sqlite3", "args": [":memory:", "select 6 * 7, sqlite_version();"]},
    "busybox": {"argv0": "echo", "args": ["hello", "from", "busybox"]},
    "brotli": {"argv0": "brotli", "args": ["-c", "-q", "5", "texts.txt"]},
    "lua": {"argv0": "lua", "args": ["-e", "print(6 * 7, _VERSION)"]},
    "zstd": {"argv0": "zstd", "args": ["-3"], "stdin": "texts.txt"},
    "xxhsum": {"argv0": "xxhsum", "args": ["texts.txt"]},
    "shfmt": {"argv0": "shfmt", "args": ["-i", "2"], "stdin": "sh1.sh"},
    "jsontestrunner": {
        "argv0": "jsontestrunner",
        "args": ["--json-writer", "StyledWriter", "small.json"],
        "files": [f.format("small") for f in JSON_OUTS],
    },
    "xmltest": {"argv0": "xmltest", "args": ["small.xml"], "mask": XMLTEST_TIMES},
}


def generator() -> str:
    """The input makers of record as one stdlib-only script (their source, not a copy), run there as
    ``python3 gen_inputs.py text FILE BYTES SEED`` (tests' ``text_data``: bench/corpus.py's and
    bench/realprogs.py's text) or ``python3 gen_inputs.py cxx DIR SCALE`` (bench/cxx.py's inputs)."""
    _repo_imports()
    import inspect

    from bench import cxx
    from tests.realprogs import test_xxhash_zstd

    return (
        '"""Inputs of record, written by bench/quiet_stage.py from their makers\' source."""\n\n'
        "import json\nimport random\nimport sys\nfrom pathlib import Path\n\n\n"
        + inspect.getsource(test_xxhash_zstd.text_data)
        + "\n\n"
        + inspect.getsource(cxx._word)
        + "\n\n"
        + inspect.getsource(cxx.prepare)
        + "\n\nif __name__ == '__main__':\n"
        "    if sys.argv[1] == 'text':\n"
        "        Path(sys.argv[2]).write_bytes(text_data(int(sys.argv[3]), int(sys.argv[4])))\n"
        "    elif sys.argv[1] == 'cxx':\n"
        "        prepare(Path(sys.argv[2]), float(sys.argv[3]))\n"
        "    else:\n"
        "        sys.exit(f'gen_inputs.py: unknown input kind {sys.argv[1]!r} (text, cxx)')\n"
    )


GEN_FILES = {"text": lambda args: [args[0]], "cxx": lambda args: ["big.json", "big.xml"]}


def gen_digests(kind: str, *args: str) -> dict[str, str]:
    """sha256 of the files the generator writes here (the device checks its own against them)."""
    with tempfile.TemporaryDirectory(prefix="quiet-gen-") as d:
        (Path(d) / GEN).write_text(generator())
        subprocess.run([sys.executable, GEN, kind, *args], cwd=d, check=True)
        return {n: hashlib.sha256((Path(d) / n).read_bytes()).hexdigest() for n in GEN_FILES[kind](args)}


def make_inputs(work: Path, only: list[str]) -> None:
    """The inputs that travel: Brotli's corpus texts, the SQL script,
    the QuickJS scripts, the Lua scripts (folder t) and busybox's files (folder bb)."""
    _repo_imports()
    from bench.busybox import make_inputs as bb_inputs
    from bench.callgrind_ir import QJS_WORKLOAD
    from bench.corpus import TEXTS
    from bench.realprogs import LUA
    from tests.realprogs import corpus_cases, sources

    t = work / "t"
    t.mkdir(parents=True)
    data = sources.fetch("brotli") / "tests" / "testdata"
    (t / "texts.txt").write_bytes(b"".join((data / n).read_bytes() for n in TEXTS))
    if "sqlite3" in only:
        (t / "work.sql").write_text(corpus_cases.SQL_WORKLOAD.format(rows=200_000))
    if "qjs" in only:
        shutil.copyfile(sources.fetch("quickjs") / "tests" / "microbench.js", t / "microbench.js")
        (t / "work.js").write_text(QJS_WORKLOAD)
    if "lua" in only:
        for f in LUA.glob("*.lua"):
            shutil.copyfile(f, t / f.name)
    if "shfmt" in only:
        import glob

        files = [Path(f) for g in SH_GLOBS for f in sorted(glob.glob(g)) if Path(f).is_file()]
        if not files:
            raise SystemExit(f"shfmt: no shell scripts on this machine matched {', '.join(SH_GLOBS)}")
        one = b"".join(f.read_bytes() for f in files)
        (t / "sh1.sh").write_bytes(one)
        (t / "sh.sh").write_bytes(one * SH_COPIES)
        lines = one.count(b"\n")
        print(f"shfmt input: {len(files)} scripts, {lines} lines, x {SH_COPIES}", flush=True)
    if "jsontestrunner" in only:  # (the start check's input: one of JsonCpp's own test files)
        shutil.copyfile(sources.fetch("jsoncpp") / "test" / "data" / "legacy_test_complex_01.json", t / "small.json")
    if "xmltest" in only:
        shutil.copyfile(sources.fetch("tinyxml2") / "resources" / "dream.xml", t / "small.xml")
    if "busybox" in only:
        (work / "bb").mkdir()
        bb_inputs(work / "bb", BB_MB)


def cmd_stage(a: argparse.Namespace) -> None:
    only = [p for p in a.only.split(",") if p]
    bad = [p for p in only if p not in PROGRAMS]
    if bad:
        raise SystemExit(f"--only: unknown program(s) {', '.join(bad)}; known: {', '.join(PROGRAMS)}")
    carry = a.carry.resolve()
    shutil.rmtree(carry, ignore_errors=True)
    carry.mkdir(parents=True)
    progs = {}
    for name in only:
        arm, nat = program_files(name)
        bundle = bundle_for(name, arm)
        pack = pack_program(name, arm, nat, bundle)
        shutil.copyfile(pack, carry / f"p-{name}.tar.xz")
        progs[name] = {"multicall": name == "busybox", "bundle": bundle.name}
        print(f"{name}: {bundle.name}, {pack.stat().st_size / 2**20:.1f} MiB packed", flush=True)
    if not a.no_qemu:
        with tarfile.open(carry / "qemu.tar.xz", "w:xz", preset=9) as tf:
            tf.add(_qemu_static(), "bin/qemu-aarch64")
    with tempfile.TemporaryDirectory(prefix="quiet-stage-") as d:
        work = Path(d) / "work"
        make_inputs(work, only)
        with tarfile.open(carry / "data.tar.xz", "w:xz", preset=9) as tf:
            tf.add(work, "work")
    rows, prep = plan_rows(only, a.all_brotli)
    plan = {
        "made": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "lifter": subprocess.run(  # the last commit that changed the lifter (the bundles' code)
            ["git", "log", "-1", "--format=%H", "--", "recompiler", "cpu_host", "nxrecomp"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip(),
        "head": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip(),
        "lifter_id": lifter_id(),
        "reps": a.reps,
        "mb_reps": a.mb_reps,
        "qemu_reps": a.qemu_reps,
        "qemu": not a.no_qemu,
        "programs": progs,
        "smoke": {p: SMOKE[p] for p in only},
        "prep": prep,
        "rows": rows,
    }
    (carry / "plan.json").write_text(json.dumps(plan, indent=1))
    shutil.copyfile(__file__, carry / "quiet_stage.py")
    if any(st.get("py") == GEN for st in prep):
        (carry / GEN).write_text(generator())
    (carry / "device.sh").write_text(DEVICE_SH)
    (carry / "device.sh").chmod(0o755)
    total = sum(f.stat().st_size for f in carry.iterdir())
    print(f"staged {len(rows)} workloads of {', '.join(only)} in {carry}: {total / 2**20:.1f} MiB")
    if total > a.limit_mb << 20:
        raise SystemExit(
            f"{carry}: {total / 2**20:.1f} MiB is over --limit-mb {a.limit_mb}: stage the programs in two "
            f"folders with --only and run each in its own call"
        )


# ----------------------------------------------------------------------------------------------
# there: the runs (stdlib only)
# ----------------------------------------------------------------------------------------------


def physical_cores() -> list[int]:
    """One logical CPU of each physical core this process may use, the first core left out when
    there are more than two (the system's and this runner's)."""
    allowed = sorted(os.sched_getaffinity(0))
    seen, out = set(), []
    for c in allowed:
        try:
            sib = Path(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list").read_text().strip()
        except OSError:
            sib = str(c)
        if sib not in seen:
            seen.add(sib)
            out.append(c)
    return out[1:] if len(out) > 2 else out


class Runner:
    def __init__(self, base: Path, plan: dict, timeout: float) -> None:
        self.base, self.plan, self.timeout = base, plan, timeout
        self.qemu = str(base / "bin" / "qemu-aarch64") if plan["qemu"] else None

    def ways(self, prog: str, argv0: str, args: list[str]) -> dict[str, list[str]]:
        b = self.base
        multi = self.plan["programs"][prog]["multicall"]
        w = {
            "native": [str(b / "bin" / f"{prog}-native"), *([argv0] if multi else []), *args],
            "ours": [str(b / "bundles" / prog / "nxrun"), argv0, *args],
        }
        if self.qemu:
            w["qemu"] = [self.qemu, "-0", argv0, str(b / "bin" / f"{prog}-arm"), *args]
        return w

    def run_once(
        self, cmd: list[str], cwd: str, stdin: str | None, core: int | None, files: tuple = (), mask: str | None = None
    ) -> dict:
        """One run: wall seconds, user+sys CPU seconds, exit status, stderr's tail and one digest of
        stdout (``mask``: a regex whose matches keep only group 1, e.g. printed clock values) and
        of the ``files`` the program writes (removed before the run, so none is a former run's)."""
        wd = self.base / "work" / cwd
        for f in files:
            (wd / f).unlink(missing_ok=True)
        pin = None
        if core is not None and shutil.which("taskset"):
            cmd = ["taskset", "-c", str(core), *cmd]
        elif core is not None:  # (no util-linux: the same affinity, set in the child before exec)
            pin = lambda: os.sched_setaffinity(0, {core})  # noqa: E731
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            fin = open(wd / stdin, "rb") if stdin else subprocess.DEVNULL
            t = time.perf_counter()
            p = subprocess.Popen(cmd, cwd=wd, stdin=fin, stdout=out, stderr=err, preexec_fn=pin)
            killer = threading.Timer(self.timeout, p.kill)  # (this job's thread waits; the timer ends a hung run)
            killer.start()
            _, status, ru = os.wait4(p.pid, 0)
            killer.cancel()
            wall = time.perf_counter() - t
            p.returncode = os.waitstatus_to_exitcode(status)
            if stdin:
                fin.close()
            out.seek(0)
            h = hashlib.sha256()
            if mask:
                h.update(re.sub(mask.encode(), rb"\1N", out.read()))
            while chunk := out.read(1 << 20):
                h.update(chunk)
            for f in files:
                h.update(f"\0{f}\0".encode())
                if (wd / f).exists():
                    with open(wd / f, "rb") as fo:
                        while chunk := fo.read(1 << 20):
                            h.update(chunk)
                else:
                    h.update(b"(missing)")
            err.seek(0)
            etail = err.read()[-600:].decode(errors="replace")
        return {
            "wall": wall,
            "cpu": ru.ru_utime + ru.ru_stime,
            "rc": p.returncode,
            "out": h.hexdigest()[:16],
            "err": etail,
            "timed_out": wall > self.timeout,
        }


def cpu_stat() -> list[int]:
    """/proc/stat's all-CPU jiffies: user nice system idle iowait irq softirq steal ([] elsewhere)."""
    try:
        return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return []


def host_quiet(before: list[int], after: list[int], loads: list[float]) -> dict:
    """How quiet the host was during the jobs: the share of CPU time the hypervisor gave to others
    (steal), the share this machine was busy, and the 1-minute load average's range."""
    if len(before) < 8 or len(after) < 8:
        return {"loads": loads}
    d = [b - a for a, b in zip(before, after)]
    total = sum(d) or 1
    return {
        "steal_pct": 100 * d[7] / total,
        "busy_pct": 100 * (total - d[3] - d[4]) / total,
        "load_min": min(loads, default=float("nan")),
        "load_max": max(loads, default=float("nan")),
    }


def _rounds(ratios: list[float]) -> str:
    """median (least-most) of per-round ratios: a drift of the machine during the job shows here."""
    if not ratios:
        return "-"
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def _fmt_s(x: float) -> str:
    return f"{x:.3f}" if x == x else "-"


def cmd_device(a: argparse.Namespace) -> None:
    carry = a.carry.resolve()
    plan = json.loads((carry / "plan.json").read_text())
    reps = a.reps or plan["reps"]
    mb_reps = a.mb_reps or plan["mb_reps"]
    qemu_reps = a.qemu_reps or plan.get("qemu_reps", reps)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    base = Path(a.work)
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    t0 = time.perf_counter()
    log_lines: list[str] = []

    def log(s: str) -> None:
        print(s, flush=True)
        log_lines.append(s)

    # unpack, side by side
    archives = sorted(carry.glob("*.tar.xz"))

    def unpack(p: Path) -> None:
        with tarfile.open(p, "r:xz") as tf:
            tf.extractall(base, filter="tar")

    with ThreadPoolExecutor(max_workers=max(1, min(8, len(archives)))) as ex:
        list(ex.map(unpack, archives))
    if plan["qemu"] and not (base / "bin" / "qemu-aarch64").exists():
        plan["qemu"] = False
    for prog in plan["programs"]:
        lt = base / "bundles" / prog / "launch.txt"
        lines = [f"exe {base / 'bin' / (prog + '-arm')}" if ln.startswith("exe ") else ln for ln in lt.read_text().splitlines()]
        lt.write_text("\n".join(lines) + "\n")
    os.environ.update(LIFT_OFF)
    run = Runner(base, plan, a.timeout)
    only = [p for p in (a.only or "").split(",") if p]
    for st in plan["prep"]:
        wd = base / "work" / st["cwd"]
        if "py" in st:  # a carried input maker; its files must be the staging's (same generator, seed)
            subprocess.run([sys.executable, str(carry / st["py"]), *st["args"]], cwd=wd, check=True)
            for n, want in st.get("sha256", {}).items():
                got = hashlib.sha256((wd / n).read_bytes()).hexdigest()
                if got != want:
                    log(
                        f"NOTE: {n} made here differs from the staging's ({got[:12]} vs {want[:12]}; python {sys.version.split()[0]})"
                    )
            continue
        cmd = [str(base / "bin" / f"{c[8:-1]}-native") if c.startswith("{native:") else c for c in st["cmd"]]
        with open(wd / st["stdout"], "wb") as fo:
            fin = open(wd / st["stdin"], "rb") if st.get("stdin") else subprocess.DEVNULL
            subprocess.run(cmd, cwd=wd, stdin=fin, stdout=fo, stderr=subprocess.DEVNULL, check=True)
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout if shutil.which("lscpu") else ""
    model = next((ln.split(":", 1)[1].strip() for ln in lscpu.splitlines() if ln.startswith("Model name")), "?")
    cores = physical_cores()[: a.jobs or None]
    log(
        f"machine: {model}; {os.cpu_count()} logical CPUs, {len(cores)} cores used for jobs ({','.join(map(str, cores))}); "
        f"load average {os.getloadavg()[0]:.2f}; unpacked in {time.perf_counter() - t0:.1f} s"
    )
    log(
        f"lifter {plan['lifter'][:12]} (staged {plan['made']}); rounds {reps} (qemu in the first {qemu_reps if plan['qemu'] else 0}), "
        f"microbench runs {mb_reps} a way"
    )

    # do the three ways start and agree?
    smoke_bad = {}
    for prog, sm in plan["smoke"].items():
        if only and prog not in only:
            continue
        res = {
            w: run.run_once(c, "t", sm.get("stdin"), None, tuple(sm.get("files", ())), sm.get("mask"))
            for w, c in run.ways(prog, sm["argv0"], sm["args"]).items()
        }
        sig = {w: (r["rc"], r["out"]) for w, r in res.items()}
        if any(r["rc"] for r in res.values()) or len(set(sig.values())) > 1:
            smoke_bad[prog] = {w: {"rc": r["rc"], "out": r["out"], "err": r["err"][-300:]} for w, r in res.items()}
            log(f"START CHECK FAILED {prog}: {json.dumps(smoke_bad[prog])}")
        else:
            log(f"start check {prog}: {', '.join(res)} ok, identical output")

    rows = [r for r in plan["rows"] if (not only or r["prog"] in only) and r["prog"] not in smoke_bad]
    free: queue.Queue[int] = queue.Queue()
    for c in cores:
        free.put(c)
    results: dict[str, dict] = {}
    lock = threading.Lock()
    stop_at = t0 + a.budget_s

    def timed_job(row: dict) -> None:
        core = free.get()
        try:
            ways = run.ways(row["prog"], row["argv0"], row["args"])
            runs: dict[str, list[dict]] = {w: [] for w in ways}
            for i in range(reps):
                if i and time.perf_counter() > stop_at:
                    break
                for w, cmd in ways.items():
                    if w == "qemu" and i >= qemu_reps:
                        continue
                    runs[w].append(
                        run.run_once(cmd, row["cwd"], row.get("stdin"), core, tuple(row.get("files", ())), row.get("mask"))
                    )
            with lock:
                results[row["label"]] = {"row": row, "core": core, "runs": runs}
        finally:
            free.put(core)

    def microbench_job(row: dict, way: str) -> None:
        core = free.get()
        try:
            cmd0 = run.ways(row["prog"], row["argv0"], [])[way]
            runs = []
            for i in range(mb_reps):
                if i and time.perf_counter() > stop_at:
                    break
                name = f"mb-{way}-{i}.json"
                r = run.run_once([*cmd0, "--std", "microbench.js", "-s", name], row["cwd"], None, core)
                f = base / "work" / row["cwd"] / name
                r["times"] = json.loads(f.read_text()) if f.exists() else {}
                runs.append(r)
            with lock:
                results.setdefault(row["label"], {"row": row, "runs": {}})["runs"][way] = runs
        finally:
            free.put(core)

    jobs = []
    for row in rows:
        if row.get("kind") == "microbench":
            jobs += [(microbench_job, (row, w)) for w in run.ways(row["prog"], row["argv0"], [])]
    jobs += [(timed_job, (row,)) for row in rows if row.get("kind") != "microbench"]
    stat0, loads, done = cpu_stat(), [os.getloadavg()[0]], threading.Event()

    def sample_load() -> None:
        while not done.wait(5.0):
            loads.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample_load, daemon=True)
    sampler.start()
    with ThreadPoolExecutor(max_workers=len(cores)) as ex:
        futs = [ex.submit(fn, *args) for fn, args in jobs]
        for f in futs:
            f.result()
    done.set()
    quiet = host_quiet(stat0, cpu_stat(), loads)
    log(f"all jobs done in {time.perf_counter() - t0:.1f} s")
    if "steal_pct" in quiet:
        log(
            f"host during the jobs: steal {quiet['steal_pct']:.2f} % of CPU time (given to other guests), busy "
            f"{quiet['busy_pct']:.1f} % ({len(cores)} jobs' cores of {os.cpu_count()}), 1-minute load "
            f"{quiet['load_min']:.2f}-{quiet['load_max']:.2f}"
        )
    table = report(plan, rows, results, smoke_bad, model)
    for ln in table:
        log(ln)
    (out / "quiet_table.txt").write_text("\n".join(log_lines) + "\n\n" + lscpu)
    (out / "quiet_results.json").write_text(
        json.dumps(
            {"plan": plan, "model": model, "lscpu": lscpu, "results": results, "smoke_bad": smoke_bad, "host": quiet},
            indent=1,
        )
    )


def cmd_table(a: argparse.Namespace) -> None:
    d = json.loads(a.results.read_text())
    plan = d["plan"]
    rows = [r for r in plan["rows"] if r["label"] in d["results"] or r["prog"] not in d["smoke_bad"]]
    print("\n".join(report(plan, rows, d["results"], d["smoke_bad"], d["model"], "cpu" if a.cpu else "wall")))


def microbench_score(way: dict[str, float], ref: dict[str, float]) -> float:
    """microbench.js's total score of ``way`` against ``ref`` (its -r): 1000 x tests / sum of
    the tests' time ratios (a test without a reference counts 1)."""
    ratios = [way[k] / ref[k] if isinstance(ref.get(k), (int, float)) and ref[k] else 1.0 for k in way]
    return 1000 * len(ratios) / sum(ratios) if ratios else float("nan")


def _least_times(runs: list[dict]) -> dict[str, float]:
    best: dict[str, float] = {}
    for r in runs:
        for k, v in r.get("times", {}).items():
            best[k] = min(best.get(k, math.inf), v)
    return best


def report(plan: dict, rows: list[dict], results: dict, smoke_bad: dict, model: str, key: str = "wall") -> list[str]:
    """The table: least wall (``key`` "cpu": user + system CPU) seconds of each way, ratios, ours'
    spread, identical outputs.  CPU seconds leave out the time a loaded machine makes a run wait
    (the dev VM's wall is up to 5x its CPU time at load 15), not what other work does to caches."""
    hdr = (
        f"{'workload':28} {'native s':>9} {'ours s':>9} {'native/ours':>11} {'per round':>17} {'qemu s':>9} "
        f"{'qemu/ours':>9} {'spread':>7} {'runs':>4}  identical"
    )
    lines = [f"CPU: {model}", hdr, "-" * len(hdr)]
    per_prog: dict[str, list[float]] = {}
    for row in rows:
        res = results.get(row["label"])
        if res is None:
            lines.append(f"{row['label']:28} not run")
            continue
        runs = res["runs"]
        if row.get("kind") == "microbench":
            ref = _least_times(runs.get("native", []))
            sc = {w: microbench_score(_least_times(rs), ref) for w, rs in runs.items()}
            bad = [w for w, rs in runs.items() if any(r["rc"] or not r["times"] for r in rs)]
            keys = {w: sorted(_least_times(rs)) for w, rs in runs.items()}
            same = "yes (tests run)" if not bad and len({tuple(k) for k in keys.values()}) == 1 else f"NO ({','.join(bad)})"
            ratio = sc["ours"] / sc["native"] if sc.get("native") else float("nan")
            paired = [  # run i of ours against run i of native: how far one run's score moves
                microbench_score(o["times"], n["times"]) for o, n in zip(runs["ours"], runs.get("native", [])) if o["times"]
            ]
            mspread = (max(paired) - min(paired)) / min(paired) if paired and min(paired) > 0 else float("nan")
            q = sc.get("qemu", float("nan"))
            lines.append(
                f"{row['label']:28} {sc['native']:9.0f} {sc['ours']:9.0f} {ratio:10.2f}x {_rounds([p / 1000 for p in paired]):>17} "
                f"{q:9.0f} {sc['ours'] / q if q == q and q else float('nan'):8.2f}x {mspread * 100:6.1f}% {len(runs['ours']):4}  {same}"
                f"   (score; higher is faster; each way {sum(r['wall'] for r in runs['ours']) / len(runs['ours']):.0f} s a run)"
            )
            per_prog.setdefault(row["prog"], []).append(ratio)
            continue
        best = {w: min(r[key] for r in rs) for w, rs in runs.items()}
        sigs = {(r["rc"], r["out"]) for rs in runs.values() for r in rs}
        failed = [w for w, rs in runs.items() if any(r["rc"] for r in rs)]
        same = "yes" if len(sigs) == 1 and not failed else f"NO ({'failed: ' + ','.join(failed) if failed else 'outputs differ'})"
        ours = [r[key] for r in runs["ours"]]
        spread = (max(ours) - min(ours)) / min(ours) if ours else float("nan")
        ratio = best["native"] / best["ours"]
        q = best.get("qemu", float("nan"))
        lines.append(
            f"{row['label']:28} {_fmt_s(best['native']):>9} {_fmt_s(best['ours']):>9} {ratio:10.2f}x "
            f"{_rounds([n[key] / o[key] for n, o in zip(runs['native'], runs['ours'])]):>17} {_fmt_s(q):>9} "
            f"{q / best['ours']:8.2f}x {spread * 100:6.1f}% {len(ours):4}  {same}"
            + ("" if row.get("in_means", True) else "   (not in the means)")
        )
        if row.get("in_means", True):
            per_prog.setdefault(row["prog"] if row["prog"] != "busybox" else f"busybox {row['argv0']}", []).append(ratio)
    lines.append("-" * len(hdr))
    means = {p: statistics.geometric_mean(v) for p, v in per_prog.items() if v and all(x > 0 for x in v)}
    if means:
        lines.append(
            "per program (geometric mean of its workloads), native/ours: " + ", ".join(f"{p} {m:.2f}x" for p, m in means.items())
        )
        below = [p for p, m in means.items() if m < 0.8]
        lines.append(
            f"geometric mean over programs: {statistics.geometric_mean(list(means.values())):.2f}x (target >= 1.0x); "
            f"below 0.8x: {', '.join(below) or 'none'}"
        )
    lines.append(
        f"times: least {'user + system CPU' if key == 'cpu' else 'wall'} seconds of the runs, ways interleaved, each job on its own core (taskset); per round = "
        "native/ours of each round's pair of runs, median (least-most); spread = (slowest - fastest) / fastest of "
        "ours' runs"
    )
    if smoke_bad:
        lines.append(f"NOT RUN (start check failed): {', '.join(smoke_bad)}")
    return lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stage", help="build/collect and pack everything into a carry folder")
    s.add_argument("--carry", type=Path, required=True, help="folder to write (git-ignored, inside the repository that travels)")
    s.add_argument("--only", default=",".join(PROGRAMS), help=f"programs, comma-separated (of {','.join(PROGRAMS)})")
    s.add_argument("--reps", type=int, default=5, help="interleaved rounds of each workload there")
    s.add_argument("--mb-reps", type=int, default=2, help="runs of QuickJS's microbench.js per way there")
    s.add_argument("--qemu-reps", type=int, default=2, help="of those rounds, how many run qemu too (the first ones)")
    s.add_argument("--no-qemu", action="store_true")
    s.add_argument("--all-brotli", action="store_true", help="also bench/corpus.py's -q 9 and -q 11 rows")
    s.add_argument("--limit-mb", type=int, default=54, help="largest folder to stage (MiB)")
    d = sub.add_parser("device", help="run the staged folder (on the device machine)")
    d.add_argument("--carry", type=Path, required=True)
    d.add_argument("--out", default=os.environ.get("OUT", "/tmp/quiet-out"))
    d.add_argument("--work", default="/tmp/quiet", help="where to unpack")
    d.add_argument("--reps", type=int, default=0, help="override the staged --reps")
    d.add_argument("--mb-reps", type=int, default=0, help="override the staged --mb-reps")
    d.add_argument("--qemu-reps", type=int, default=0, help="override the staged --qemu-reps")
    d.add_argument("--only", default="", help="programs, comma-separated (default: all staged)")
    d.add_argument("--timeout", type=float, default=300.0, help="seconds one run may take")
    d.add_argument(
        "--jobs", type=int, default=0, help="jobs side by side (default: one per core; fewer = less shared memory traffic)"
    )
    d.add_argument("--budget-s", type=float, default=420.0, help="after this many seconds start no further rounds")
    t = sub.add_parser("table", help="print the table again from a run's quiet_results.json")
    t.add_argument("results", type=Path)
    t.add_argument("--cpu", action="store_true", help="user + system CPU seconds instead of wall (microbench: its own times)")
    a = ap.parse_args(argv)
    {"stage": cmd_stage, "device": cmd_device, "table": cmd_table}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
