"""Where a lifted function's host-stack traffic comes from: callgrind's per-instruction counts of
one function of a bundle's game.so, each instruction mapped to the line of the shard's C that
clang made it from, and the host-stack loads and stores summed per C line, per guest block and
per stack slot.

    .venv/bin/python bench/spill_lines.py BUNDLE CG FUNC [--elf ELF] [--top 40] [--slots]
                                          [--obj OBJ] [--dump FILE]

``CG`` is a callgrind output written with ``--dump-instr=yes`` (``bench/callgrind_ir.py --keep
DIR`` leaves ``DIR/cg.ours``); ``FUNC`` is a lifted function's C name (``F_10566f4``) or, with
``--elf`` (the aarch64 program), its guest symbol (``JS_CallInternal``).  The function's shard
(``BUNDLE/src/shard_*.c``) is compiled again with the build's flags plus
``-gline-tables-only`` (line tables change no instruction: the object's instructions are
checked, mnemonic by mnemonic, against game.so's; the flag variants of recompiler/build.py are
tried in turn until one matches) and ``objdump -dl`` of it gives each instruction's C line.
Prints: the function's instructions and its host-stack ((%rsp)-relative) loads, stores and
other operands; the C lines with the most host-stack traffic (with the nearest guest label
above each line: the block the line belongs to); the hottest stack slots with the C lines that
store into them (what value a slot holds: the local assigned on the line); ``--dump`` writes
every executed instruction with its count, class and C line."""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.callgrind_ir import per_address  # noqa: E402

_INSN = re.compile(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)")
_LINE = re.compile(r"^(?:inlined by )?(\S+):(\d+)(?: \(.*\))?$")
_LABEL = re.compile(r"^\s*L_([0-9a-f]+):;")
_RSP = re.compile(r"(-?0x[0-9a-f]+|\d*)\(%rsp\)")


def disasm(obj: Path, fn: str, lines: bool) -> list[tuple[int, str, str, int]]:
    """(address, mnemonic, operands, C line or 0) of each instruction of ``fn`` in ``obj``."""
    args = ["objdump", "-d", "--no-show-raw-insn", f"--disassemble={fn}", str(obj)]
    if lines:  # the outermost C line of code inlined from lifted.h's helpers (S64, L64, ...)
        args[2:2] = ["-l", "--inlines"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    res = []
    line = 0
    for text in out.splitlines():
        if m := _LINE.match(text):
            if m[1].endswith(".c"):
                line = int(m[2])
            elif not text.startswith("inlined by"):
                line = 0
            continue
        m = _INSN.match(text)
        if m and not text.rstrip().endswith(":"):
            res.append((int(m[1], 16), m[2], m[3], line))
    return res


def shard_of(src: Path, fn: str) -> Path:
    pat = re.compile(rf"^(?:__attribute__\(\(always_inline\)\) )?NxRet {re.escape(fn)}\(.*\{{\s*$", re.M)
    for p in sorted(src.glob("shard_*.c")):
        if pat.search(p.read_text()):
            return p
    raise SystemExit(f"no shard of {src} defines {fn}")


def flag_variants() -> list[list[str]]:
    """The flag sets the build compiles a shard with (``bench.shard_relink.flag_sets``)."""
    from bench.shard_relink import flag_sets

    return flag_sets()


def compile_lines(shard: Path, fn: str, want: list[tuple[int, str, str, int]], obj: Path | None) -> list:
    from recompiler import build, cc

    inc = [f"-I{build.RUNTIME_DIR}"]
    tmp = Path(tempfile.mkdtemp(prefix="nxspill-"))
    objs = [obj] if obj else []
    for i, flags in enumerate([] if obj else flag_variants()):
        o = tmp / f"v{i}.o"
        cc.run(["-c", str(shard), "-o", str(o), *flags, "-gline-tables-only", *inc], str(shard))
        objs.append(o)
        got = disasm(o, fn, True)
        same = sum(g[1] == w[1] for g, w in zip(got, want))
        if len(got) == len(want) and same >= 0.98 * len(want):
            if same < len(want):  # line tables moved a few instructions (seen with clang 22)
                print(f"(flags variant {i}: {len(want) - same} of {len(want)} mnemonics differ)", file=sys.stderr)
            return got
        print(f"(flags variant {i}: {len(got)} instructions against game.so's {len(want)}; next)", file=sys.stderr)
    if obj:
        got = disasm(obj, fn, True)
        if len(got) == len(want):
            return got
    raise SystemExit(f"no flag variant compiles {shard.name}'s {fn} to game.so's instructions")


def classify(mn: str, ops: str) -> str:
    if "(%rsp)" not in ops:
        if mn.startswith("call"):
            return "call"
        if mn.startswith("push") or mn.startswith("pop"):
            return "push/pop"
        if "(" in ops and not mn.startswith(("lea", "nop")):
            return "memory"
        if mn.startswith("mov") and "(" not in ops:
            return "reg move"
        return "other"
    parts = ops.split(",")
    if mn.startswith("lea"):
        return "rsp lea"
    if "(%rsp)" in parts[-1] and mn.startswith(("mov", "vmov")):
        return "stack store"
    if "(%rsp)" in parts[0] and mn.startswith(("mov", "vmov")):
        return "stack load"
    return "stack other"


def guest_symbol(elf: Path, name: str) -> str:
    out = subprocess.run(["nm", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[2] == name and p[1] in "tTwW":
            return f"F_{int(p[0], 16):x}"
    raise SystemExit(f"{elf} has no function symbol {name}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle", type=Path)
    ap.add_argument("cg", type=Path)
    ap.add_argument("func")
    ap.add_argument("--elf", type=Path, help="the aarch64 program (to name FUNC by its guest symbol)")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--obj", type=Path, help="an object of the shard already compiled with -gline-tables-only")
    ap.add_argument("--dump", type=Path, help="write every executed instruction here")
    a = ap.parse_args()
    fn = a.func if a.func.startswith(("F_", "R_", "C_")) else guest_symbol(a.elf, a.func)
    counts = per_address(a.cg, "game.so")
    so = disasm(a.bundle / "game.so", fn, False)
    if not so:
        raise SystemExit(f"game.so has no {fn}")
    shard = shard_of(a.bundle / "src", fn)
    lines = compile_lines(shard, fn, so, a.obj)
    c_text = shard.read_text().splitlines()
    label_of = {}
    cur = ""
    for i, t in enumerate(c_text, 1):
        if m := _LABEL.match(t):
            cur = m[1]
        elif t.startswith("NxRet "):  # a function's head: no block of the one before
            cur = ""
        label_of[i] = cur
    by_class: dict[str, int] = collections.Counter()
    by_line: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    slot_use: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    slot_lines: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    dump = []
    for (addr, mn, ops, _), (_, _, _, ln) in zip(so, lines):
        c = counts.get(addr, 0)
        k = classify(mn, ops)
        if "(%rsp)" in ops and k != "rsp lea":
            slot = _RSP.search(ops)[1] or "0"
            slot_use[slot][k] += c
            if k == "stack store":
                slot_lines[slot][ln] += max(c, 1)
        if not c:
            continue
        by_class[k] += c
        by_line[ln][k] += c
        by_line[ln]["all"] += c
        dump.append(f"{c:>10} {k:12} {addr:8x} {mn:8} {ops:40} {ln:6} L_{label_of.get(ln, '')}")
    total = sum(by_class.values())
    print(f"{fn} ({shard.name}): {total / 1e6:,.1f} M instructions")
    for k, v in sorted(by_class.items(), key=lambda kv: -kv[1]):
        print(f"  {k:12} {v / 1e6:9.2f} M")

    def stack(cn: collections.Counter) -> int:
        return cn["stack load"] + cn["stack store"] + cn["stack other"]

    print(f"\nC lines by host-stack traffic (top {a.top}): M stack (load/store/other), M all, line, block, C")
    for ln, cn in sorted(by_line.items(), key=lambda kv: -stack(kv[1]))[: a.top]:
        if not stack(cn):
            break
        text = c_text[ln - 1].strip() if 0 < ln <= len(c_text) else "?"
        print(
            f"{stack(cn) / 1e6:6.2f} ({cn['stack load'] / 1e6:.2f}/{cn['stack store'] / 1e6:.2f}/{cn['stack other'] / 1e6:.2f})"
            f" {cn['all'] / 1e6:6.2f} {ln:6} L_{label_of.get(ln, ''):8} {text[:110]}"
        )
    print(f"\nstack slots by traffic (top {a.top // 2}): slot, M load/store/other, the C lines storing into it")
    for slot, cn in sorted(slot_use.items(), key=lambda kv: -sum(kv[1].values()))[: a.top // 2]:
        who = ", ".join(
            f"{ln}:{(c_text[ln - 1].strip() if 0 < ln <= len(c_text) else '?')[:40]}" for ln, _ in slot_lines[slot].most_common(3)
        )
        print(f"{slot:>8} {cn['stack load'] / 1e6:6.2f}/{cn['stack store'] / 1e6:.2f}/{cn['stack other'] / 1e6:.2f}  {who}")
    if a.dump:
        a.dump.write_text("\n".join(dump) + "\n")


if __name__ == "__main__":
    main()
