"""Executed loads and stores of chosen ``NxCpu`` slots in a bundle's game.so, from a callgrind
output of its run (``bench/callgrind_ir.py --keep DIR`` writes ``DIR/cg.ours``): what the
register traffic through ``NxCpu`` costs at run time, where ``bench/call_lists.py`` counts it in
the placed C.  Each store is also put by where it stands: by the first control transfer after it
within a few host instructions: a ``ret`` (a lifted return's write-back), a ``jmp`` (a tail
call's, or a jump to a shared epilogue), a ``call`` (a call site's, an SVC's or a runtime
call's), else a conditional branch or none seen.

    .venv/bin/python bench/nxcpu_slots.py BUNDLE CALLGRIND_OUT [--slots x29,sp,x30]

A slot is matched by its offset in ``NxCpu`` (``cpu_host/runtime/core/nxrt.h``: ``x[N]`` at 8*N,
``sp`` at 0xf8) on any base register; an access of another structure at the same offset counts
too, so pick slots whose offsets are uncommon (X19-X30, SP).  Counts, not time.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.callgrind_ir import per_address  # noqa: E402

_INSN = re.compile(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)")
_WHERE = {o: f"before {o.removesuffix('q')}" for o in ("ret", "retq", "jmp", "jmpq", "call", "callq")}
_LOOKAHEAD = 16  # host instructions after a store searched for the control transfer that ends it


def offset(slot: str) -> int:
    if slot == "sp":
        return 0xF8
    m = re.fullmatch(r"x(\d+)", slot)
    if m is None or int(m[1]) > 30:
        raise SystemExit(f"bad slot {slot!r}: give x0..x30 or sp")
    return 8 * int(m[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("callgrind_out", type=Path)
    ap.add_argument("--slots", default="x29,sp")
    a = ap.parse_args()
    so = a.bundle / "game.so"
    if not so.is_file():
        raise SystemExit(f"{so}: no game.so (not a bundle built by nxrecomp recompile?)")
    if not a.callgrind_out.is_file():
        raise SystemExit(f"{a.callgrind_out}: no such callgrind output")
    slots = {f"{offset(s):#x}": s for s in a.slots.split(",")}
    counts = per_address(a.callgrind_out, "game.so")
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(so)], capture_output=True, text=True, check=True)
    insns = [(int(m[1], 16), m[2], m[3]) for m in map(_INSN.match, dis.stdout.splitlines()) if m]
    run: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    static: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for i, (addr, op, args) in enumerate(insns):
        if not op.startswith("mov"):
            continue
        m = re.search(r",\s*(0x[0-9a-f]+)\(%r\w+\)$", args)
        if m and m[1] in slots:
            nxt = [o for _, o, _ in insns[i + 1 : i + 1 + _LOOKAHEAD] if o[0] in "rjc" and o not in ("cmp", "cmpq", "cmpl")]
            first = next((o for o in nxt if o.startswith(("ret", "jmp", "call", "j"))), "")
            where = _WHERE.get(first, "elsewhere")
            kind = f"store {slots[m[1]]} {where}"
        elif (m := re.match(r"(0x[0-9a-f]+)\(%r\w+\),", args)) and m[1] in slots:
            kind = f"load {slots[m[1]]}"
        else:
            continue
        run[kind]["n"] += counts.get(addr, 0)
        static[kind]["n"] += 1
    total = sum(counts.values())
    print(f"{so}: {total:,} instructions executed in game.so")
    for k in sorted(run):
        n = run[k]["n"]
        print(f"  {k:24} executed {n:>13,} ({100 * n / max(total, 1):.2f} %)  static {static[k]['n']:,}")


if __name__ == "__main__":
    main()
