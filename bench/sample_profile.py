"""A sample profile (clang's ``-fprofile-sample-use`` text format) of a bundle's lifted C, from a
callgrind run of it: how much a profile-guided compile of the generated code could gain, before
any mechanism in the recompiler is built for it.

    .venv/bin/python bench/sample_profile.py BUNDLE CG [CG ...] -o OUT_DIR [--shards N]

``BUNDLE`` is built with ``NXRECOMP_RECOMPILER_DEBUG_INFO=1`` (line tables in game.so; the code
is the same as without them); ``CG`` a callgrind output of a run of it written with
``--dump-instr=yes`` (callgrind's default ``--dump-line=yes`` gives each instruction's C file and
line); several runs (a training set) add up.  Each executed C line of a shard gets the count of its most executed instruction (the
times the line ran: AutoFDO's rule), summed over the functions it was inlined into, and is
written under the C function whose body holds it, at its offset from the function's first line
(the line of its name, DWARF's ``decl_line``).  One profile per shard with samples:
``OUT_DIR/shard_*.prof``; the N shards with the most executed instructions are listed in
``OUT_DIR/hot.txt`` (for ``bench/shard_relink.py --sub-dir`` with ``--cflags
"-gline-tables-only -fprofile-sample-use=..."``, one shard at a time)."""

from __future__ import annotations

import argparse
import collections
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recompiler import profile as prof  # noqa: E402

_NAMED = re.compile(r"(c?(?:ob|fl|fi|fe|fn))=\((\d+)\)(?: (.*))?")


def line_costs(cg: Path) -> Iterator[tuple[str, str, str, int, int, int]]:
    """(object, C file, function symbol, address, line, instructions) of every self-cost line of a
    callgrind output written with ``--dump-instr=yes`` (positions ``instr line``).  An inlined
    callee's lines come under ``fi=``/``fe=``; a ``calls=`` line's next cost line is the call's
    inclusive cost and is skipped."""
    names: dict[str, str] = {}
    ob = fl = fn = cur_file = ""
    addr = line_no = 0
    after_call = False
    with open(cg) as f:
        for raw in f:
            c = raw[0] if raw else ""
            if c.isalpha():
                if raw.startswith("calls="):
                    after_call = True
                    continue
                m = _NAMED.match(raw.rstrip("\n"))
                if m is None:
                    continue
                kind, ident, name = m[1], m[2], m[3]
                key = ("ob" if kind.endswith("ob") else "fn" if kind.endswith("fn") else "fl") + ident
                if name:
                    names[key] = name
                value = names.get(key, "")
                if kind == "ob":
                    ob = value
                elif kind == "fl":
                    fl = cur_file = value
                elif kind in ("fi", "fe"):
                    cur_file = value
                elif kind == "fn":
                    fn, cur_file = value, fl
                continue
            if c not in "0123456789+-*":
                continue
            parts = raw.split()
            if len(parts) < 3:
                continue
            addr = _pos(parts[0], addr)
            line_no = _pos(parts[1], line_no)
            if after_call:
                after_call = False
                continue
            yield ob, cur_file, fn, addr, line_no, int(parts[2])


def _pos(s: str, last: int) -> int:
    if s == "*":
        return last
    if s[0] == "+":
        return last + int(s[1:], 0)
    if s[0] == "-":
        return last - int(s[1:], 0)
    return int(s, 0)


def line_counts(
    cgs: list[Path], obj_suffix: str = "game.so", lines_so: Path | None = None
) -> tuple[dict[tuple[str, int], int], dict[str, int]]:
    """(times each (C file, line) ran, instructions per C file) of the object ending in
    ``obj_suffix``: per (function symbol, file, line) the most executed instruction, summed over
    the symbols (a line inlined into several callers ran in each)."""
    per_insn: dict[tuple[str, str, int, int], int] = collections.Counter()
    per_file: dict[str, int] = collections.Counter()
    costs = addr_line_costs(cgs, lines_so, obj_suffix) if lines_so else (c for cg in cgs for c in line_costs(cg))
    for ob, fl, fn, addr, ln, n in costs:
        if ob.endswith(obj_suffix) and ln > 0:
            per_insn[fl, fn, ln, addr] += n
            per_file[fl] += n
    best: dict[tuple[str, str, int], int] = {}
    for (fl, fn, ln, _), n in per_insn.items():
        k = (fl, fn, ln)
        if n > best.get(k, 0):
            best[k] = n
    out: dict[tuple[str, int], int] = collections.Counter()
    for (fl, _, ln), n in best.items():
        out[fl, ln] += n
    return out, per_file


def addr_line_costs(
    cgs: list[Path], lines_so: Path, obj_suffix: str = "game.so"
) -> Iterator[tuple[str, str, str, int, int, int]]:
    """``line_costs`` of runs of a game.so without line tables, the lines read from
    ``lines_so``: the same game.so linked from objects compiled with ``-gline-tables-only``
    (the same instructions at the same addresses; checked by the caller)."""
    import subprocess

    from bench.callgrind_ir import per_address

    counts: dict[int, int] = collections.Counter()
    for cg in cgs:
        for a, n in per_address(cg, obj_suffix).items():
            counts[a] += n
    addrs = sorted(counts)
    r = subprocess.run(
        ["addr2line", "-a", "-e", str(lines_so)],
        input="".join(f"{a:#x}\n" for a in addrs),
        capture_output=True,
        text=True,
        check=True,
    )
    syms = []
    for line in subprocess.run(["nm", "-n", str(lines_so)], capture_output=True, text=True, check=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tT":
            syms.append((int(p[0], 16), p[2]))
    import bisect

    starts = [a for a, _ in syms]
    out = r.stdout.splitlines()
    for i in range(0, len(out) - 1, 2):
        a = int(out[i], 16)
        fl, _, ln = out[i + 1].rpartition(":")
        ln = ln.split()[0] if ln else "0"
        if not ln.isdigit() or fl == "??":
            continue
        k = bisect.bisect_right(starts, a) - 1
        yield obj_suffix, fl, syms[k][1] if k >= 0 else "?", a, int(ln), counts[a]


def write_profile(c_path: Path, counts: dict[int, int], out: Path) -> tuple[int, int]:
    """Write the sample profile of one shard; (functions, lines) with samples."""
    fns = prof.functions_of(c_path.read_text())
    recs = []
    lines_n = 0
    for name, first, last in fns:
        body = {ln - first: counts[ln] for ln in range(first, last + 1) if counts.get(ln)}
        if not body:
            continue
        head = max(body.get(0, 0), body.get(1, 0))
        recs.append((name, sum(body.values()), head, body))
        lines_n += len(body)
    with open(out, "w") as f:
        for name, total, head, body in sorted(recs, key=lambda r: -r[1]):
            f.write(f"{name}:{total}:{head}\n")
            for off in sorted(body):
                f.write(f" {off}: {body[off]}\n")
    return len(recs), lines_n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("cg", type=Path, nargs="+", help="callgrind outputs of the training runs")
    ap.add_argument("-o", "--out", type=Path, required=True, help="folder of the shards' profiles")
    ap.add_argument(
        "--blocks",
        action="store_true",
        help="by guest blocks (recompiler/profile.py): each block's count is its most executed line's, and "
        "every line of the block gets it; OUT_DIR/blocks.json is the block profile",
    )
    ap.add_argument(
        "--lines",
        type=Path,
        help="the runs were of a game.so without line tables: read lines from this game.so (its objects compiled "
        "with -gline-tables-only, the same instructions: bench/shard_relink.py --cflags=-gline-tables-only)",
    )
    ap.add_argument("--shards", type=int, default=12, help="how many of the hottest shards hot.txt lists")
    a = ap.parse_args()
    counts, per_file = line_counts(a.cg, lines_so=a.lines)
    a.out.mkdir(parents=True, exist_ok=True)
    by_shard: dict[str, dict[int, int]] = collections.defaultdict(dict)
    for (fl, ln), n in counts.items():
        by_shard[Path(fl).name][ln] = n
    total = sum(per_file.values())
    shards = sorted((n, Path(fl).name) for fl, n in per_file.items() if Path(fl).name.startswith("shard_"))[::-1]
    written = 0
    all_blocks: dict[int, int] = {}
    for name in sorted(by_shard):
        c = a.bundle / "src" / name
        if not name.startswith("shard_") or not c.exists():
            continue
        if a.blocks:
            text = c.read_text()
            b = prof.blocks_from_lines(text, by_shard[name])
            for k, v in b.items():
                all_blocks[k] = max(all_blocks.get(k, 0), v)
            sp, nf, nb = prof.sample_profile(text, b)
            if sp:
                (a.out / f"{Path(name).stem}.prof").write_text(sp)
                written += 1
            continue
        write_profile(c, by_shard[name], a.out / f"{Path(name).stem}.prof")
        written += 1
    if a.blocks:
        prof.write(a.out / "blocks.json", all_blocks)
        print(f"{len(all_blocks)} guest blocks with samples")
    (a.out / "hot.txt").write_text("".join(f"{name} {n}\n" for n, name in shards[: a.shards]))
    print(f"{written} shard profiles; game.so {total:,} instructions with a line; hottest shards:")
    for n, name in shards[: a.shards]:
        print(f"  {name:24s} {n:>15,} ({100 * n / max(total, 1):.1f} %)")


if __name__ == "__main__":
    main()
