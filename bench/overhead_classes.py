"""Where a lifted program's instructions go, by kind of overhead: each executed instruction of
game.so classed by the generated C line (and the inlined lifted.h helper) it came from, beside
the native amd64 build's total on the same workload.  Counts, not time: load-independent.

    .venv/bin/python bench/overhead_classes.py --prog zstd [--bundle B] [--stdin FILE] [--keep DIR] -- -3
    .venv/bin/python bench/overhead_classes.py --busybox [--stdin FILE] -- sort big.txt
    .venv/bin/python bench/overhead_classes.py --elf PROG-aarch64 --native PROG-x86_64 -- ARGS
    .venv/bin/python bench/overhead_classes.py --bundle B --cg-ours CG [--cg-native CG] [--native N]

The bundle must be built with line tables (``recompiler.debug_info``; without ``--bundle`` one
is recompiled here with ``NXRECOMP_RECOMPILER_DEBUG_INFO=1``, which leaves the code as it is:
zstd's game.so differs in 1 of 494,398 instructions).  Both programs run under
``valgrind --tool=callgrind --dump-instr=yes`` (``bench/callgrind_ir.py``'s join of counts per
address), or their outputs are given (``--cg-ours``/``--cg-native``).  Every executed address of
game.so is put through ``llvm-symbolizer`` (inline chain: innermost helper, outermost shard line)
and ``objdump -d`` (a lifted function inlined into its caller counts by its own lines: the
innermost frame in a shard), and goes to the first class that fits:

- ``preempt poll``: the flag's read (an operand naming ``nx_preempt_pending``/``nx_preempt_here``),
  the compare of the register it was loaded into and the branch after it;
- ``runtime``: code outside the shards (dispatch.c, the personality, the runtime's libc; a
  lifted.h macro's expansion is classed by the macro: ``NX_JT_GO`` a jump table);
- ``host stack``: an operand on ``(%rsp)``, push, pop (spills, reloads, the frame; the native
  build's total also counts ``(%rbp)`` operands where RBP is its frame pointer: ``stack_share``);
- by the shard line: ``inline cache`` (``NX_IC`` sites: target compare, indirect call),
  ``returned-pc check`` (``_r.pc !=``), ``call-site stores`` (the ``x30 = ...; do { s->x[..] =
  ..} while`` line), ``call-site reloads`` (``= _r.x0; do {``), ``call/tail transfer`` (the
  call itself and its argument moves), ``returns`` (``return (NxRet)``, ``NX_RF``),
  ``entry loads`` (a function's register declarations), ``flags`` (NZCV kept as values:
  ``SUBC``/``ADDC``/``LOGICF``/``FLAGS_SET``, ``N =``, carried compares; their ``cmp``,
  ``test`` and branches count as guest computation: native has them too), ``jump table``
  (``NX_JT_GO``), ``FP semantics`` (NaN, rounding and saturation helpers of lifted.h),
  ``guest load/store`` (``L8``..``SQ128``: guest addresses are host addresses, so this is the
  access alone), else ``guest computation``.

Prints game.so's total against native's (native/ours is the corpus bench's ratio counted in
instructions), instructions outside game.so (nxrun, ld.so, the kernel entry) apart, and the
table of classes; ``--by-function N`` adds the N hottest functions' rows.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.callgrind_ir import _BRK_RESERVE, callgrind, guest_names, per_address, self_costs  # noqa: E402

_INSN = re.compile(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)")
_FN = re.compile(r"([0-9a-f]+) <(.*)>:")
_POLL = re.compile(r"<nx_preempt_(pending|here)")
_SHARD = re.compile(r"/shard_[0-9a-f_]+\.c$")
_LIFTED_H = re.compile(r"/lifted[a-z_0-9]*\.h$")
_FP_HELPERS = re.compile(
    r"^(FPR_|FPRD_|FDN_|FZIN_|NAN3_|ISNAN_|ISSNAN_|FCVT_|FMA_|FMAX|FMIN|NX_ROUND|NX_FP|NX_MXCSR|NX_AFTER_FPCR)"
)
_MEM_HELPERS = re.compile(r"^(L8|L16|L32|L64|L128|LQ128|S8|S16|S32|S64|SQ128)$")
_FLAGS = re.compile(r"\b(SUBC(32|64)|ADDC(32|64)|LOGICF(32|64)|FLAGS_SET)\b|(^|[;{]\s*)[NZCV] = |_f[ab]\d+ = ")

# The classes whose memory operands are NxCpu slots (``--slots``: which guest registers they move)
SLOT_CLASSES = ("entry loads", "call-site stores", "call-site reloads", "returns")
_MEM_OP = re.compile(r"(?<![\w)])(-?0x[0-9a-f]+|\d+)?\((%r\w+)\)")


def nxcpu_slots() -> dict[int, str]:
    """Byte offset in NxCpu -> the slot's name (x0..x30, sp, pc, v0..v31, ...), every 8 bytes of
    a field (a V register's upper half is ``vN+8``)."""
    from cpu_host import abi

    out = {}
    fields, _size = abi.nxcpu_fields()
    for f in fields:
        elem = f.size // f.count
        for i in range(f.count):
            base = f.name if f.count == 1 else f"{f.name}{i}"
            for k in range(0, elem, 8):
                out[f.offset + i * elem + k] = base if k == 0 else f"{base}+{k}"
    return out


def slot_group(name: str) -> str:
    """A slot's group for the summary: what an argument convention could carry in host registers
    (X2-X7, V0-V7), X1, the callee-saved ones (X19-X28, V8-V15), the rest."""
    m = re.fullmatch(r"([xv])(\d+)(\+8)?", name)
    if not m:
        return "other"
    n = int(m[2])
    if m[1] == "x":
        return {0: "X0", 1: "X1"}.get(n) or (
            "X2-X7" if 2 <= n <= 7 else "X8-X18" if n <= 18 else "X19-X28" if n <= 28 else "X29-X30"
        )
    return "V0-V7" if n <= 7 else "V8-V15" if n <= 15 else "V16-V31"


CLASSES = (
    "preempt poll",
    "inline cache",
    "returned-pc check",
    "call-site stores",
    "call-site reloads",
    "call/tail transfer",
    "returns",
    "entry loads",
    "flags",
    "jump table",
    "FP semantics",
    "host stack",
    "guest load/store",
    "guest computation",
    "runtime",
)


def disassembly(so: Path) -> dict[int, tuple[str, str, str]]:
    """address -> (function, mnemonic, operands) of every instruction of ``so``."""
    out = {}
    fn = "?"
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(so)], capture_output=True, text=True, check=True)
    for line in dis.stdout.splitlines():
        if m := _FN.match(line):
            fn = m[2]
            continue
        if m := _INSN.match(line):
            out[int(m[1], 16)] = (fn, m[2], m[3])
    return out


def symbolize(so: Path, addrs: list[int]) -> dict[int, list[tuple[str, str, int]]]:
    """address -> inline chain, innermost first: (function, file, line)."""
    if not shutil.which("llvm-symbolizer"):
        raise SystemExit("llvm-symbolizer is not installed (apt-get install llvm)")
    r = subprocess.run(
        ["llvm-symbolizer", f"--obj={so}", "--inlining", "--output-style=LLVM"],
        input="".join(f"{a:#x}\n" for a in addrs),
        capture_output=True,
        text=True,
        check=True,
    )
    chains = r.stdout.split("\n\n")
    out = {}
    for a, block in zip(addrs, chains):
        lines = block.strip().splitlines()
        chain = []
        for i in range(0, len(lines) - 1, 2):
            f, _, rest = lines[i + 1].rpartition(":")  # file:line:col
            f, _, ln = f.rpartition(":")
            chain.append((lines[i], f, int(ln) if ln.isdigit() else 0))
        out[a] = chain
    return out


class Sources:
    """Lines of the shards' C files, read once each."""

    def __init__(self) -> None:
        self.files: dict[str, list[str]] = {}

    def line(self, path: str, n: int) -> str:
        if path not in self.files:
            try:
                self.files[path] = Path(path).read_text().splitlines()
            except OSError:
                self.files[path] = []
        lines = self.files[path]
        return lines[n - 1] if 0 < n <= len(lines) else ""


def _header_class(src: Sources, path: str, n: int) -> str:
    """The class of code whose outermost line is in a lifted-code header: a macro's expansion
    (the macro named by the ``#define`` that line continues)."""
    for k in range(n, max(n - 8, 0), -1):
        m = re.match(r"\s*#\s*define\s+(\w+)", src.line(path, k))
        if m:
            return {"NX_JT_GO": "jump table"}.get(m[1], "flags" if _FLAGS.search(m[1]) else "guest computation")
        if k < n and not src.line(path, k).rstrip().endswith("\\"):
            break
    return "guest computation"


def shard_class(text: str, inner: str) -> str:
    """The class of a shard line (``text``) whose innermost inlined helper is ``inner``."""
    t = text.strip()
    if "NX_IC(" in t:
        return "inline cache"
    if "_r.pc != " in t:
        return "returned-pc check"
    if re.match(r"x30 = 0x[0-9a-f]+ull; do \{", t):
        return "call-site stores"
    if re.search(r"= _r\.x0; do \{|^do \{ *x\d+ = s->|RELOAD_(CALL|ALL|V)\b", t):
        return "call-site reloads"
    if "return (NxRet)" in t or "NX_RF(" in t:
        return "returns"
    if re.search(r"\b_r = [FR]_[0-9a-f]+\(|MUSTTAIL return [FRC]_|NxRet _o = [FR]_", t):
        return "call/tail transfer"
    if t.startswith("u64 x0 = a0") or t.startswith("NxRet ") or re.match(r"u64 x\d+ = ", t):
        return "entry loads"
    if "STORE_ALL" in t or "STORE_CALL" in t or "STORE_INDIRECT" in t:
        return "call-site stores"
    if "NX_JT_GO" in t:
        return "jump table"
    if _FP_HELPERS.match(inner):
        return "FP semantics"
    if _MEM_HELPERS.match(inner):
        return "guest load/store"
    if _FLAGS.search(t):
        return "flags"
    return "guest computation"


def classify(so: Path, counts: dict[int, int]) -> tuple[dict[str, int], dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """(instructions per class, per function per class, per (class, shard line text) for the
    classes' hottest lines) of the executed addresses of ``so``."""
    dis = disassembly(so)
    addrs = sorted(a for a in counts if a in dis)
    chains = symbolize(so, addrs)
    src = Sources()
    per: dict[str, int] = collections.Counter()
    per_fn: dict[str, dict[str, int]] = collections.defaultdict(collections.Counter)
    lines: dict[tuple[str, str], int] = collections.Counter()
    slot_names = nxcpu_slots()
    slots: dict[tuple[str, str], int] = collections.Counter()  # (class, NxCpu slot or "no slot")
    poll_reg = None  # register the preemption flag's address was loaded into
    poll_cmp = False
    for a in addrs:
        fn, mn, ops = dis[a]
        c = counts[a]
        chain = chains.get(a) or [("?", "", 0)]
        # the innermost frame in a shard: a lifted function clang inlined into its caller is
        # classed by its own lines, not by the caller's call line
        k = next((i for i, f in enumerate(chain) if _SHARD.search(f[1])), len(chain) - 1)
        outer = chain[k]
        inner = chain[0][0] if k > 0 else ""
        cls = None
        if _POLL.search(ops):
            cls = "preempt poll"
            m = re.search(r",(%\w+)$", ops)
            poll_reg = m[1] if m and mn.startswith("lea") else None
            poll_cmp = not poll_reg  # a direct compare: its branch follows
        elif poll_reg and f"({poll_reg})" in ops:
            cls, poll_reg, poll_cmp = "preempt poll", None, True
        elif poll_cmp and mn.startswith("j"):
            cls, poll_cmp = "preempt poll", False
        else:
            poll_reg, poll_cmp = None, False
        text = ""
        if cls is None:
            header = _LIFTED_H.search(outer[1])
            if not header and not _SHARD.search(outer[1]):
                cls = "runtime"
            elif "(%rsp)" in ops or mn.startswith(("push", "pop")):
                cls = "host stack"
            elif header:
                cls = _header_class(src, outer[1], outer[2])
            else:
                text = src.line(outer[1], outer[2])
                cls = shard_class(text, inner)
                if cls == "flags" and mn.startswith(("cmp", "test", "j")):
                    cls = "guest computation"  # the compare and branch native code has too
        per[cls] += c
        per_fn[fn][cls] += c
        if text:
            lines[(cls, re.sub(r"0x[0-9a-f]+ull", "K", text.strip())[:110])] += c
        if cls in SLOT_CLASSES:
            m = _MEM_OP.search(ops)
            off = int(m[1], 0) if m and m[1] else 0
            name = slot_names.get(off, "no slot") if m and m[2] != "%rsp" and not mn.startswith("lea") else "no slot"
            slots[(cls, name)] += c
    classify.slots = slots  # (read by report: the return value's shape stays as it was)
    return per, per_fn, lines


def stack_share(binary: Path, counts: dict[int, int]) -> int:
    """Executed instructions of ``binary`` with a ``(%rsp)`` operand or a push/pop, or with a
    ``(%rbp)`` operand in a function that made RBP its frame pointer (``mov %rsp,%rbp``: the
    native build's frames, 66 of jsontestrunner's 291 M stack instructions)."""
    n = 0
    cur, framed = None, False
    for a, (fn, mn, ops) in disassembly(binary).items():
        if fn != cur:
            cur, framed = fn, False
        if mn == "mov" and ops.split("#")[0].strip() == "%rsp,%rbp":
            framed = True
        if a in counts and ("(%rsp)" in ops or mn.startswith(("push", "pop")) or (framed and "(%rbp)" in ops)):
            n += counts[a]
    return n


def totals_by_object(cg: Path) -> dict[str, int]:
    """Instructions per object (``ob=``) of a callgrind output, self cost only."""
    per: dict[str, int] = collections.Counter()
    for obj, _, n in self_costs(cg):
        per[Path(obj).name] += n
    return per


def report(
    label: str,
    so: Path,
    cg_ours: Path,
    native: Path | None,
    cg_native: Path | None,
    top_fns: int,
    top_lines: int,
    names: dict[str, str],
    slots: bool = False,
) -> dict[str, int]:
    counts = per_address(cg_ours, so.name)
    per, per_fn, lines = classify(so, counts)
    ours = sum(per.values())
    objs = totals_by_object(cg_ours)
    other = sum(v for k, v in objs.items() if k != so.name)
    print(f"{label}: game.so {ours / 1e6:,.2f} M instructions; outside game.so (nxrun, ld.so, ...) {other / 1e6:,.2f} M")
    nat = 0
    if native and cg_native:
        nc = per_address(cg_native, native.name)
        nat = sum(nc.values())
        ns = stack_share(native, nc)
        print(
            f"native {nat / 1e6:,.2f} M (host stack {ns / 1e6:,.2f} M); native/ours {nat / ours:.3f}; "
            f"ours - native {(ours - nat) / 1e6:+,.2f} M"
        )
    print(f"{'class':22} {'M instr':>10} {'% ours':>7}" + (f" {'% of excess':>11}" if nat else ""))
    for k in CLASSES:
        v = per.get(k, 0)
        ex = f" {100 * v / (ours - nat):11.1f}" if nat and ours > nat else ""
        print(f"{k:22} {v / 1e6:10.2f} {100 * v / ours:7.2f}{ex}")
    if slots:
        sl = getattr(classify, "slots", {})
        print("\nNxCpu slots of the argument/result classes (M instructions; 'no slot': no NxCpu operand):")
        groups = ("X0", "X1", "X2-X7", "X8-X18", "X19-X28", "X29-X30", "V0-V7", "V8-V15", "V16-V31", "other", "no slot")
        print(f"{'class':20} " + " ".join(f"{g:>8}" for g in groups))
        for k in SLOT_CLASSES:
            g = collections.Counter()
            for (c, name), v in sl.items():
                if c == k:
                    g["no slot" if name == "no slot" else slot_group(name)] += v
            print(f"{k:20} " + " ".join(f"{g.get(x, 0) / 1e6:8.2f}" for x in groups))
        for k in SLOT_CLASSES:
            best = sorted(((v, n) for (c, n), v in sl.items() if c == k and n != "no slot"), reverse=True)[:10]
            print(f"  {k}: " + ", ".join(f"{n} {v / 1e6:.2f}" for v, n in best))
    if top_fns:
        cols = [k for k in CLASSES if per.get(k, 0) > 0.002 * ours]
        short = [k.split()[0][:8] for k in cols]
        print(f"\n{'function':30} {'M':>8} " + " ".join(f"{s:>8}" for s in short))
        for fn, d in sorted(per_fn.items(), key=lambda kv: -sum(kv[1].values()))[:top_fns]:
            tot = sum(d.values())
            print(f"{names.get(fn, fn)[:30]:30} {tot / 1e6:8.2f} " + " ".join(f"{d.get(k, 0) / 1e6:8.2f}" for k in cols))
    if top_lines:
        print("\nhottest shard lines per overhead class (K: a constant):")
        for k in CLASSES[:10]:
            best = sorted(((v, t) for (c, t), v in lines.items() if c == k), reverse=True)[:top_lines]
            for v, t in best:
                print(f"  {k:20} {v / 1e6:8.2f} M  {t}")
    return dict(per)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prog", help="a program of tests/realprogs/sources.py (zstd, xxhsum, lua, ...)")
    ap.add_argument("--busybox", action="store_true", help="Debian 12's busybox-static (arm64 lifted, amd64 native)")
    ap.add_argument("--elf", type=Path, help="any aarch64 program (its native build: --native)")
    ap.add_argument("--bundle", type=Path, help="a bundle built with recompiler.debug_info (default: recompile here)")
    ap.add_argument("--stdin", type=Path, help="the workload's standard input")
    ap.add_argument("--cg-ours", type=Path, help="a callgrind output of the bundle's run (skip running it)")
    ap.add_argument("--cg-native", type=Path, help="a callgrind output of the native run (skip running it)")
    ap.add_argument("--native", type=Path, help="the native program (default: --prog's / --busybox's amd64 build)")
    ap.add_argument("--no-native", action="store_true", help="leave the native run out")
    ap.add_argument("--by-function", type=int, default=8, help="rows of the hottest functions (0: none)")
    ap.add_argument("--lines", type=int, default=3, help="hottest shard lines per overhead class (0: none)")
    ap.add_argument("--slots", action="store_true", help="split entry loads, call-site stores/reloads and returns by NxCpu slot")
    ap.add_argument("--keep", type=Path, help="keep the callgrind outputs (cg.native, cg.ours) here")
    ap.add_argument("args", nargs="*", help="the program's arguments")
    a = ap.parse_args()
    arm = nat = None
    if a.busybox:
        from nxrecomp.common import debian

        arm, nat = debian.busybox("arm64"), debian.busybox("amd64")
    elif a.prog:
        from tests.realprogs import sources

        arm, nat = sources.build(a.prog, "aarch64"), sources.build(a.prog, "x86_64")
    if a.elf:
        arm = a.elf.resolve()
    if a.native:
        nat = a.native.resolve()
    if a.no_native:
        nat = None
    tmp = Path(tempfile.mkdtemp(prefix="nxbench-oc-"))
    bundle = a.bundle
    if bundle is None:
        if arm is None:
            raise SystemExit("give --prog, --busybox, --elf or --bundle")
        bundle = tmp / "bundle"
        env = {**os.environ, "NXRECOMP_RECOMPILER_DEBUG_INFO": "1"}
        r = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "recompile", str(arm), "-o", str(bundle)],
            capture_output=True,
            text=True,
            env=env,
        )
        if r.returncode:
            raise SystemExit(r.stderr[-2000:])
    so = bundle / "game.so"
    if not so.exists():
        raise SystemExit(f"{bundle} holds no game.so")
    cg_o, cg_n = a.cg_ours, a.cg_native
    stdin = a.stdin.resolve() if a.stdin else None
    if cg_o is None or (nat and cg_n is None):
        if not shutil.which("valgrind"):
            raise SystemExit("valgrind is not installed (apt-get install valgrind)")
        if arm is None:
            raise SystemExit("running the workload needs --prog, --busybox or --elf (or give --cg-ours)")
    if cg_o is None:
        launch = bundle / "launch.txt"
        text = launch.read_text()
        if f"brk_reserve {_BRK_RESERVE:#x}" not in text:  # valgrind's own mappings sit above a 1 GB break
            launch.write_text(re.sub(r"(?m)^brk_reserve .*$", f"brk_reserve {_BRK_RESERVE:#x}", text))
        cg_o = tmp / "cg.ours"
        out_o = callgrind([str(bundle / "nxrun"), str(arm), *a.args], cg_o, tmp, stdin)
    if nat and cg_n is None:
        cg_n = tmp / "cg.native"
        out_n = callgrind([str(nat), *a.args], cg_n, tmp, stdin)
        if a.cg_ours is None and out_n != out_o:
            raise SystemExit(f"outputs differ:\nnative {out_n[:300]!r}\nours   {out_o[:300]!r}")
    names = guest_names(arm) if arm else {}
    label = f"{(arm.name if arm else bundle.name)} {' '.join(a.args)}"
    report(label, so, cg_o, nat, cg_n, a.by_function, a.lines, names, a.slots)
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
        for src, n in ((cg_o, "cg.ours"), (cg_n, "cg.native")):
            if src and src.exists() and src.parent == tmp:
                shutil.copy(src, a.keep / n)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
