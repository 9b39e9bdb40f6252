"""Instructions executed per repeated unit of work, counted by single-stepping under gdb.

This machine has no hardware performance counters (no ``perf stat -e instructions``) and its
timings move by 10-30 % with other work; an instruction count does not.  The script stops a
program at the ``--skip``-th hit of a breakpoint (a symbol of the recompiled ``game.so``, such
as ``F_400d40``, or ``*0xADDRESS`` in a native binary), then single-steps ``--cycles`` times
from one hit to the next and prints the instructions of each cycle and, averaged, how many of
them ran in each host function.  Run the same unit of work natively and recompiled and compare:

    python3 bench/gdb_steps.py --break F_400d40 --skip 200000 --cycles 10 -- \\
        BUNDLE/nxrun busybox sort -o /dev/null big.txt      # one string compare of the sort

With ``--lines N`` and a bundle built with ``recompiler.debug_info`` (and ``recompiler.comments``,
so each C line has its guest instruction above it), it also lists the N C lines of the lifted
code that ran the most instructions.  An instruction with no line of its own (a register move
or spill clang put on an edge, code of a lifted.h helper) counts for the last lifted line
stepped before it, as "after" that line: Lua's n-body showed ~40 % of luaV_execute's
instructions so, on the edges into its shared instruction fetch.

With ``--memops`` it also counts the instructions that write memory and those that read it
(``memop``): a lifted function's traffic to ``NxCpu`` and its spills against native code's.

Stepping runs ~10,000 instructions a second, so a cycle should be thousands, not millions.
Needs gdb (Debian: ``apt-get install gdb``)."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile


def memop(insn: str) -> tuple[int, int]:
    """(writes, reads) of memory by one x86-64 instruction in gdb's AT&T text ("mov %rax,0x8(%rbx)"):
    a memory destination (the last operand), a push or a call writes; any other memory operand,
    a pop or a ret reads (a read-modify-write counts once, as a write; `lea` and `nop` touch none;
    a direct jump's or call's target is no operand)."""
    text = insn.split("#", 1)[0].strip()
    mn, _, rest = text.partition(" ")
    if mn.startswith(("lea", "nop", "prefetch")):
        return 0, 0
    if mn.startswith(("push", "call")):
        return 1, 0
    if mn.startswith(("pop", "ret")):
        return 0, 1
    ops, depth, cur = [], 0, ""
    for ch in rest.strip():
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            ops.append(cur)
            cur = ""
        else:
            cur += ch
    ops.append(cur)
    branch = mn.startswith("j")

    def mem(op: str) -> bool:
        op = op.strip().split(" <", 1)[0]
        if op.startswith("*"):
            op = op[1:]
        elif branch:
            return False  # jmp 0x401000: a target
        return "(" in op or op.startswith(("%fs:", "%gs:")) or op[:1].isdigit() or op.startswith("-")

    if ops and mem(ops[-1]) and not mn.startswith(("cmp", "test", "bt", "j")):
        return 1, 0
    return 0, int(any(mem(o) for o in ops if o.strip()))


# runs inside gdb's Python (with memop's source before it): the numbers come back as one JSON line
_GDB_SCRIPT = r"""
import gdb, json
def _fn(pc):
    b = gdb.block_for_pc(pc)
    # the host function itself, not a helper inlined into it (a debug-info build has blocks
    # for those): the block just inside the file's static block
    while b is not None and b.superblock is not None and not b.superblock.is_static:
        b = b.superblock
    if b is not None and b.function is not None:
        return b.function.name
    s = gdb.execute("info symbol %#x" % pc, to_string=True).split()
    return s[0] if s and s[0] != "No" else "?"
def _line(pc):
    sal = gdb.find_pc_line(pc)
    if sal.symtab is None or sal.line <= 0:
        return None
    name = sal.symtab.filename
    if not name.endswith(".c") or "/runtime/" in name:
        return None
    return "%s:%d" % (name, sal.line)
def nx_steps(where, skip, cycles, want_lines=False, want_memops=False):
    for cmd in ("set pagination off", "set confirm off", "set breakpoint pending on",
                "set startup-with-shell off"):
        gdb.execute(cmd)
    bp = gdb.Breakpoint(where)
    bp.ignore_count = skip
    gdb.execute("run", to_string=True)
    bp.enabled = False
    start = int(gdb.parse_and_eval("$pc"))
    per_cycle, bins, lines, last, mem = [], {}, {}, None, [0, 0]
    for _ in range(cycles):
        n = 0
        while True:
            if want_memops:
                w, r = memop(gdb.execute("x/i $pc", to_string=True).split(":", 1)[1].strip())
                mem[0] += w
                mem[1] += r
            gdb.execute("stepi", to_string=True)
            n += 1
            pc = int(gdb.parse_and_eval("$pc"))
            name = _fn(pc)
            bins[name] = bins.get(name, 0) + 1
            if want_lines:
                at = _line(pc)
                key = at if at is not None else "after " + str(last)
                if at is not None:
                    last = at
                lines[key] = lines.get(key, 0) + 1
            if pc == start:
                break
        per_cycle.append(n)
    print("NXSTEPS " + json.dumps({"cycles": per_cycle, "bins": bins, "lines": lines, "memops": mem}))
    gdb.execute("kill")
"""


def count(where: str, skip: int, cycles: int, argv: list[str], lines: bool = False, memops: bool = False) -> dict:
    """{"cycles": [instructions of each cycle], "bins": {function: instructions},
    "lines": {"FILE:LINE" or "after FILE:LINE": instructions} (with ``lines``),
    "memops": [instructions writing memory, instructions reading it] over all cycles (with ``memops``)}."""
    gdb = shutil.which("gdb")
    if gdb is None:
        raise SystemExit("gdb_steps: gdb is not installed (Debian: apt-get install gdb)")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(inspect.getsource(memop) + _GDB_SCRIPT)
        script = f.name
    try:
        r = subprocess.run(
            [
                gdb,
                "-q",
                "-batch",
                "-ex",
                f"source {script}",
                "-ex",
                f"python nx_steps({where!r}, {skip}, {cycles}, {lines!r}, {memops!r})",
                "--args",
                *argv,
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
    finally:
        os.unlink(script)
    for line in r.stdout.splitlines():
        if line.startswith("NXSTEPS "):
            return json.loads(line[len("NXSTEPS ") :])
    tail = (r.stdout + r.stderr).strip().splitlines()[-5:]
    raise SystemExit(
        f"gdb_steps: no count came back (the breakpoint was never reached {skip + 1} times?):\n  " + "\n  ".join(tail)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--break", dest="where", required=True, help="where a cycle starts: a function name, or *0xADDRESS")
    ap.add_argument("--skip", type=int, default=1000, help="hits to let pass first (warm-up)")
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--top", type=int, default=12, help="functions to list")
    ap.add_argument(
        "--lines",
        type=int,
        default=0,
        metavar="N",
        help="also list the N lifted C lines that ran the most instructions (a bundle "
        "built with recompiler.debug_info, best with recompiler.comments)",
    )
    ap.add_argument("--memops", action="store_true", help="also count the instructions that write memory and those that read it")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    a = ap.parse_args()
    argv = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
    if not argv:
        ap.error("the program to run goes after --")
    res = count(a.where, a.skip, a.cycles, argv, lines=a.lines > 0, memops=a.memops)
    cyc = res["cycles"]
    print(f"instructions per cycle: {sum(cyc) / len(cyc):.1f} (each: {', '.join(map(str, cyc))})")
    if a.memops:
        w, r = res["memops"]
        print(f"  writing memory {w / len(cyc):.1f}, reading memory {r / len(cyc):.1f} a cycle")
    for name, n in sorted(res["bins"].items(), key=lambda kv: -kv[1])[: a.top]:
        print(f"  {n / len(cyc):8.1f}  {name}")
    if a.lines:
        print_lines(res["lines"], len(cyc), a.lines)
    sys.stdout.flush()


def print_lines(lines: dict[str, int], cycles: int, top: int) -> None:
    """The ``top`` C lines by instructions per cycle, each with its text and the line above
    (the guest instruction's comment in a build with recompiler.comments)."""
    total = sum(lines.values())
    if not any(not k.startswith("after ") for k in lines):
        print("no instruction had a lifted C line: build the bundle with NXRECOMP_RECOMPILER_DEBUG_INFO=1")
        return
    off = sum(n for k, n in lines.items() if k.startswith("after "))
    print(
        f"lifted C lines: {total - off} instructions on a line of their own, {off} "
        f"({100 * off / max(total, 1):.0f} %) without one (counted after the line stepped before)"
    )
    texts: dict[str, list[str]] = {}
    for key, n in sorted(lines.items(), key=lambda kv: -kv[1])[:top]:
        where = key.removeprefix("after ")
        path, _, num = where.rpartition(":")
        if path not in texts:
            try:
                texts[path] = open(path).read().splitlines()
            except OSError:
                texts[path] = []
        src = texts[path]
        k = int(num) if num.isdigit() else 0
        shown = " | ".join(t.strip()[:70] for t in src[max(k - 2, 0) : k]) if 0 < k <= len(src) else ""
        tag = "after " if key.startswith("after ") else ""
        print(f"  {n / cycles:8.1f}  {tag}{os.path.basename(path)}:{num}  {shown}")


if __name__ == "__main__":
    main()
