"""The C++ programs of tests/realprogs/test_cxx.py on workloads of their own: recompiled aarch64
build vs the same sources built natively for x86-64 (zig's clang++, the same -O level, static
musl, libc++) vs qemu-aarch64 on the aarch64 build, in one run.

    .venv/bin/python bench/cxx.py [--scale 1.0] [--reps 3] [--no-qemu] [--opt 2|0|3|all] [--cpu]

Workloads:
- ``jsontestrunner``: a generated JSON document (``--scale`` 1: ~8 MB of nested objects, arrays,
  numbers, strings with escapes) parsed, printed as JsonCpp's value tree, written back with
  ``StyledWriter``, parsed again and printed again (what the runner does with each test input);
- ``xmltest``: a generated XML document (~24 MB of nested elements, attributes, text, comments)
  loaded by TinyXML-2 and freed (``xmltest FILE``; its printed clock values are not compared);
- ``jsoncpp_test``: JsonCpp's whole unit-test suite (121 tests; throws and catches).

Prints seconds (best of ``--reps``, the ways interleaved; ``--cpu``: least user + system CPU
seconds) and ratios (native/ours: 1.0 is native speed, higher is faster; qemu/ours: how much
faster than qemu), and the geometric mean of native/ours.  Outputs of ours and qemu must be
identical."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import cpu_ways, recompile_bundle  # noqa: E402
from bench.realprogs import timed_ways  # noqa: E402
from recompiler import cc  # noqa: E402
from tests.realprogs import sources  # noqa: E402

PROGRAMS = ("jsontestrunner", "xmltest", "jsoncpp_test")
CLOCKS = re.compile(rb"(time=)\d+")  # xmltest FILE prints its clock() differences


def workloads() -> list[tuple[str, str, list[str]]]:
    """(label, program, argv after the program)"""
    return [
        ("jsontestrunner big.json", "jsontestrunner", ["--json-writer", "StyledWriter", "big.json"]),
        ("xmltest big.xml", "xmltest", ["big.xml"]),
        ("jsoncpp_test (suite)", "jsoncpp_test", []),
    ]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))


def prepare(tmp: Path, scale: float) -> None:
    """big.json and big.xml, the same bytes every run (seeded)."""
    rng = random.Random(1)
    n = max(1, int(20_000 * scale))
    items = []
    for i in range(n):
        items.append(
            {
                "id": i,
                "name": _word(rng) + " " + _word(rng),
                "score": rng.random() * 1000,
                "big": rng.randint(-(1 << 60), 1 << 60),
                "ok": rng.random() < 0.5,
                "tags": [_word(rng) for _ in range(rng.randint(0, 6))],
                "text": 'line\n\t"quoted" ' + _word(rng) + " \u00e9\u4e2d",
                "nested": {"a": [rng.randint(0, 99) for _ in range(8)], "b": None, "c": {"d": _word(rng)}},
            }
        )
    (tmp / "big.json").write_text(json.dumps({"items": items, "count": n}, indent=1, ensure_ascii=False))
    parts = ['<?xml version="1.0"?>\n<root>\n']
    for i in range(max(1, int(100_000 * scale))):
        w = _word(rng)
        elems = "".join(f'<e k="{j}">{_word(rng)}</e>' for j in range(rng.randint(1, 6)))
        parts.append(
            f'  <item id="{i}" name="{w}" v="{rng.random():.6f}">\n'
            f"    <!-- {_word(rng)} -->\n"
            f"    <title>{w} &amp; {_word(rng)}</title>\n"
            f"    <list>{elems}</list>\n"
            f"    <text><![CDATA[{_word(rng)} <raw> {_word(rng)}]]></text>\n"
            "  </item>\n"
        )
    parts.append("</root>\n")
    (tmp / "big.xml").write_text("".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-qemu", action="store_true")
    ap.add_argument("--opt", default="2", help="optimisation level of both builds: 0, 2, 3 or all")
    ap.add_argument("--only", default=",".join(PROGRAMS), help="programs, comma-separated")
    ap.add_argument("--cpu", action="store_true", help="least user+system CPU seconds instead of wall")
    a = ap.parse_args()
    opts = list(sources.OPTS) if a.opt == "all" else [a.opt]
    if any(o not in sources.OPTS for o in opts):
        raise SystemExit(f"--opt {a.opt!r}: expected one of {', '.join(sources.OPTS)} or all")
    only = [p for p in a.only.split(",") if p]
    qemu = None if a.no_qemu else shutil.which("qemu-aarch64")
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-cxx-"))
    prepare(tmp, a.scale)
    print(
        f"scale {a.scale}; best of {a.reps} ({'CPU' if a.cpu else 'wall'} seconds), the ways interleaved; "
        f"cores: {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}; "
        f"recompiled code compiled for {cc.march()}; native built for x86-64 baseline (same clang++ and flags)"
    )
    print(f"{'workload':30} {'native':>9} {'recompiled':>11} {'qemu':>9} {'native/ours':>12} {'qemu/ours':>10}")
    measure = cpu_ways if a.cpu else timed_ways
    per_prog: dict[str, list[float]] = {}
    for opt in opts:
        for label, prog, argv in workloads():
            if prog not in only:
                continue
            arm, nat = sources.build(prog, "aarch64", opt=opt), sources.build(prog, "x86_64", opt=opt)
            b = tmp / f"{prog}-O{opt}-bundle"
            if not b.exists():
                recompile_bundle(arm, b)
            ways = {"native": [str(nat)], "ours": [str(b / "nxrun"), prog]}
            if qemu:
                ways["qemu"] = [qemu, "-0", prog, str(arm)]
            res = measure({w: [*cmd, *argv] for w, cmd in ways.items()}, tmp, a.reps, None)
            outs = {w: CLOCKS.sub(rb"\1N", v[1]) for w, v in res.items()}
            if outs["ours"] != outs.get("qemu", outs["ours"]):
                raise SystemExit(f"{label} -O{opt}: recompiled output differs from qemu's")
            t = {w: v[0] for w, v in res.items()}
            per_prog.setdefault(f"{prog} -O{opt}", []).append(t["native"] / t["ours"])
            tq = t.get("qemu", float("nan"))
            print(
                f"{label + ' -O' + opt:30} {t['native']:8.2f}s {t['ours']:10.2f}s {tq:8.2f}s "
                f"{t['native'] / t['ours']:11.2f}x {tq / t['ours']:9.2f}x"
            )
    means = {p: statistics.geometric_mean(v) for p, v in per_prog.items()}
    print("native/ours per program: " + ", ".join(f"{p} {m:.2f}x" for p, m in means.items()))
    print(f"geometric mean over programs: {statistics.geometric_mean(list(means.values())):.2f}x")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
