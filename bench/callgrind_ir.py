"""Instruction counts of a recompiled corpus program against its native amd64 build, per function,
with the share of each that loads or stores the host stack (spills): the load-independent
measure issue 29's speed work decides by (on the shared 2-core VM wall time is noise).

    .venv/bin/python bench/callgrind_ir.py [--prog qjs] [--top 12] [--bundle B] [--keep DIR] [--stdin F] [-- ARGS...]

Both ways run under ``valgrind --tool=callgrind --dump-instr=yes`` on the same arguments
(default: QuickJS on ``QJS_WORKLOAD``, a fixed script of calls, allocations, array, string,
float and closure work whose output is printed and compared).  The bundle is recompiled here with
the tree's lifter (``nxrecomp recompile``; cached objects are reused) and its launch file's
``brk_reserve`` lowered to 32 MB: the default 1 GB reservation from the guest's program break
collides with valgrind's own mappings.  ``--bundle`` measures an existing bundle instead (an A/B of
two lifters: build each with ``nxrecomp recompile``, then this once per bundle; its ``src`` is
not copied); ``--keep`` keeps both callgrind outputs for a closer look.  Per instruction address, the counts are joined with
``objdump -d`` of game.so (ours) and of the native program: per function, the instructions and
those whose operand is ``(%rsp)``-relative.  A lifted function ``F_<addr>`` is named by the
aarch64 program's symbol at that address.  Prints the totals (native/ours is the ratio the
corpus bench reports, counted in instructions instead of seconds) and the top functions.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.realprogs import sources  # noqa: E402

QJS_WORKLOAD = """
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function objs(n) { var s = 0; for (var i = 0; i < n; i++) { var o = { a: i, b: i * 2, c: "x" + (i & 7) }; s += o.a + o.b + o.c.length; } return s; }
function arr(n) { var a = []; for (var i = 0; i < n; i++) a.push(i * 1.5); var s = 0; for (var j = 0; j < a.length; j++) s += a[j]; return s; }
function str(n) { var s = ""; for (var i = 0; i < n; i++) s += String.fromCharCode(65 + i % 26); return s.length; }
function flt(n) { var x = 0.5; for (var i = 0; i < n; i++) x = x * 1.0000001 + Math.sqrt(i) / (i + 1); return x; }
function clos(n) { var c = 0; var f = function (k) { c += k; }; for (var i = 0; i < n; i++) f(i); return c; }
print(fib(25), objs(200000), arr(200000), str(100000), flt(300000).toFixed(6), clos(300000));
"""
_BRK_RESERVE = 0x2000000
_INSN = re.compile(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)")
_FN = re.compile(r"([0-9a-f]+) <(.*)>:")


def self_costs(cg: Path) -> Iterator[tuple[str, int, int]]:
    """(object path, address, instructions) of every self-cost line of a callgrind output file
    written with ``--dump-instr=yes`` (positions ``instr line``; a ``calls=`` line's next cost
    line is the call's inclusive cost, not the caller's own, so it is skipped)."""
    names: dict[str, str] = {}
    cur = ""
    last = 0
    after_call = False
    for line in cg.read_text().splitlines():
        if line.startswith(("ob=", "cob=")):
            m = re.match(r"(c?ob)=\((\d+)\)(?: (.*))?", line)
            if m is None:
                continue
            if m[3]:
                names[m[2]] = m[3]
            if m[1] == "ob":
                cur = names.get(m[2], "")
            continue
        if line.startswith("calls="):
            after_call = True
            continue
        if not line or line[0] not in "0123456789+-*":
            continue
        parts = line.split()
        a = parts[0]
        if a.startswith("+"):
            last += int(a[1:], 0)
        elif a.startswith("-"):
            last -= int(a[1:], 0)
        elif a != "*":
            last = int(a, 0)
        if after_call:
            after_call = False
            continue
        if len(parts) > 2:
            yield cur, last, int(parts[2])


def per_address(cg: Path, obj_suffix: str) -> dict[int, int]:
    """Instructions executed per address of the object whose path ends in ``obj_suffix``."""
    counts: dict[int, int] = collections.Counter()
    for obj, addr, n in self_costs(cg):
        if obj.endswith(obj_suffix):
            counts[addr] += n
    return counts


def per_function(binary: Path, counts: dict[int, int]) -> tuple[dict[str, int], dict[str, int]]:
    """(instructions, stack-relative instructions) per function of ``binary``'s disassembly.
    A stack-relative instruction has an operand on ``(%rsp)``, or on ``(%rbp)`` after the
    function made RBP its frame pointer (``mov %rsp,%rbp``: the native build's frames; game.so
    is compiled without frame pointers, where RBP is one more register)."""
    total: dict[str, int] = collections.Counter()
    stack: dict[str, int] = collections.Counter()
    fn = "?"
    framed = False
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(binary)], capture_output=True, text=True, check=True)
    for line in dis.stdout.splitlines():
        if m := _FN.match(line):
            fn, framed = m[2], False
            continue
        m = _INSN.match(line)
        if m is None:
            continue
        if m[2] == "mov" and m[3].split("#")[0].strip() == "%rsp,%rbp":
            framed = True
        c = counts.get(int(m[1], 16), 0)
        if c:
            total[fn] += c
            if "(%rsp)" in m[3] or (framed and "(%rbp)" in m[3]):
                stack[fn] += c
    return total, stack


def guest_names(aarch64: Path) -> dict[str, str]:
    """``F_<addr>`` -> the aarch64 program's symbol at that address (where it has symbols)."""
    out = {}
    r = subprocess.run(["nm", str(aarch64)], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tTwW":
            out[f"F_{int(p[0], 16):x}"] = p[2]
    return out


def callgrind(cmd: list[str], out: Path, cwd: Path, stdin: Path | None = None) -> bytes:
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as fin:
        r = subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}", *cmd],
            cwd=cwd,
            stdin=fin,
            capture_output=True,
        )
    if r.returncode:
        raise SystemExit(f"{cmd[0]} under callgrind failed ({r.returncode}): {r.stderr.decode()[-1500:]}")
    return r.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prog", default="qjs", help="a program of tests/realprogs/sources.py")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--bundle", type=Path, help="an existing bundle of the program (default: recompile one here)")
    ap.add_argument("--keep", type=Path, help="keep the callgrind outputs (cg.native, cg.ours) in this folder")
    ap.add_argument("--stdin", type=Path, help="a file both ways read as standard input (zstd -d: the compressed data)")
    ap.add_argument("args", nargs="*", help="the program's arguments (default for qjs: the workload script)")
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    arm, nat = sources.build(a.prog, "aarch64"), sources.build(a.prog, "x86_64")
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-cg-"))
    args = a.args
    if not args:
        if a.prog != "qjs":
            raise SystemExit("give the program's arguments after --")
        (tmp / "work.js").write_text(QJS_WORKLOAD)
        args = ["work.js"]
    bundle = tmp / "bundle"
    if a.bundle:
        shutil.copytree(a.bundle, bundle, ignore=shutil.ignore_patterns("src"))
    else:
        r = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "recompile", str(arm), "-o", str(bundle)], capture_output=True, text=True
        )
        if r.returncode:
            raise SystemExit(r.stderr[-2000:])
    launch = bundle / "launch.txt"
    launch.write_text(re.sub(r"(?m)^brk_reserve .*$", f"brk_reserve {_BRK_RESERVE:#x}", launch.read_text()))
    out_n = callgrind([str(nat), *args], tmp / "cg.native", tmp, a.stdin)
    out_o = callgrind([str(bundle / "nxrun"), str(arm), *args], tmp / "cg.ours", tmp, a.stdin)
    if out_n != out_o:
        raise SystemExit(f"outputs differ:\nnative {out_n[:300]!r}\nours   {out_o[:300]!r}")
    tn, sn = per_function(nat, per_address(tmp / "cg.native", nat.name))
    to, so = per_function(bundle / "game.so", per_address(tmp / "cg.ours", "game.so"))
    names = guest_names(arm)
    nt, ot = sum(tn.values()), sum(to.values())
    print(
        f"{a.prog} {' '.join(args)}: instructions native {nt / 1e6:,.1f} M, ours (game.so) {ot / 1e6:,.1f} M, native/ours {nt / ot:.2f}"
    )
    print(f"stack loads/stores: native {sum(sn.values()) / 1e6:,.1f} M, ours {sum(so.values()) / 1e6:,.1f} M")
    print(f"{'function':36} {'ours M':>9} {'stack %':>8} {'native M':>9} {'stack %':>8} {'native/ours':>12}")
    for fn, c in sorted(to.items(), key=lambda kv: -kv[1])[: a.top]:
        name = names.get(fn, fn)
        n = tn.get(name, 0)
        ratio = f"{n / c:.2f}" if n else "-"
        ns = f"{100 * sn.get(name, 0) / n:.1f}" if n else "-"
        print(f"{name[:36]:36} {c / 1e6:9.1f} {100 * so.get(fn, 0) / c:8.1f} {n / 1e6:9.1f} {ns:>8} {ratio:>12}")
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
        for n in ("cg.native", "cg.ours"):
            shutil.copy(tmp / n, a.keep / n)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
