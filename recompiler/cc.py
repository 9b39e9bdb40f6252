"""The C compiler: a system clang where present (``NXRECOMP_RECOMPILER_CC``, else ``clang``),
else clang from the ``ziglang`` wheel, which works on a bare machine.  gcc is not used: it
lacks ``musttail``, which tail calls in lifted code need so they do not grow the host stack."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError


@lru_cache(maxsize=1)
def compiler() -> tuple[str, ...]:
    want = settings.get("recompiler", "cc")
    if want and want != "auto":
        return tuple(want.split())
    for name in ("clang", "clang-19", "clang-16", "clang-15", "clang-14"):
        p = shutil.which(name)
        if p:
            return (p,)
    try:
        import ziglang  # noqa: F401  (only whether the wheel is installed)
    except ImportError:
        raise NxError("no C compiler: install clang or the ziglang wheel (pip install ziglang)") from None
    return (sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-linux-gnu")


# /proc/cpuinfo's names of what x86-64-v3 adds to the baseline (lzcnt is "abm")
_V3 = ("avx", "avx2", "bmi1", "bmi2", "fma", "f16c", "movbe", "abm", "popcnt", "sse4_2", "xsave")


def host_cpu_flags() -> set[str]:
    """The CPU's feature flags as /proc/cpuinfo names them (empty where it cannot be read)."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


@lru_cache(maxsize=1)
def march() -> str:
    """The x86-64 level lifted code is compiled for (``recompiler.march``): ``auto`` is
    x86-64-v3 (AVX2, FMA, BMI2: AArch64's fused multiply-add is one instruction instead of a
    software routine, flag-free shifts ease register pressure) where this machine has it, else
    the baseline; a bundle refuses to start on a CPU without what it was built for
    (cpu_host/runtime/core/host_isa.c)."""
    want = str(settings.get("recompiler", "march")).strip() or "auto"
    if want == "auto":
        want = "x86-64-v3" if host_cpu_flags().issuperset(_V3) else "x86-64"
    return want


def arch_flags() -> list[str]:
    """-march for ``march()`` as this compiler spells it (zig's clang names the levels
    x86_64_v3), and no contraction of a*b+c into FMA: the lifter fuses exactly where the guest
    did (FMADD), never where it rounded twice.  Vectors of at most 128 bits: the guest's NEON
    is 128-bit, and clang's 256-bit code was mostly the SLP vectorizer merging a store list's
    neighbouring 8-byte stores (NxCpu write-backs, guest-stack saves) into ymm stores, after
    which every call and return of the function needs a ``vzeroupper``: QuickJS's
    workload ran 8.5 M of them (7.2 M in JS_CallInternal) for 1.1 M ymm stores; with the limit
    2,703.4 M instructions instead of 2,710.9 M, Lua's and zstd's hot code unchanged."""
    name = march()
    if compiler()[1:3] == ("-m", "ziglang") and name.startswith("x86-64"):
        name = name.replace("-", "_")
    abi = ["-DNX_PRESERVE_NONE"] if settings.get("recompiler", "call_abi") in ("preserve_none", "auto") else []
    return [f"-march={name}", "-ffp-contract=off", "-mprefer-vector-width=128", *abi]


def identity() -> str:
    """The compiler's whole command line (``recompiler.cc``, defines included) and its version
    text: part of every object's cache key, so that a build with ``-DNAME`` in the command (an
    A/B of a lifted.h switch, bench/corpus.py ``--ab-define``) never takes an object compiled
    without it, nor a compiler upgrade one of the old compiler."""
    r = subprocess.run([*compiler(), "--version"], capture_output=True, text=True)
    version = (r.stdout or r.stderr).splitlines()[0] if (r.stdout or r.stderr) else "unknown"
    return "\0".join([*compiler(), version])


def run(args: list[str], what: str) -> None:
    r = subprocess.run([*compiler(), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise NxError(f"C compiler failed on {what}: {r.stderr.strip()[-2000:]}")


# A function's compile cost from what the lifter emits.  clang's time on lifted code is
# superlinear in the number of basic blocks of one function, not in its bytes: PHI elimination,
# the register coalescer and early tail duplication each walk (blocks) x (values live across
# them), and lifted code keeps the guest's registers live everywhere.  A block starts at each
# ``L_<addr>:`` label the lifter writes (a branch target or a jump table's entry), so the
# estimate is ``SECONDS_PER_BYTE * bytes + SECONDS_PER_LABEL2 * labels ** 2`` per function,
# fitted to the CPU time of zig's clang -O2 (build.py's flags; 2-core dev VM, 2026-12-07) on:
# QuickJS's JS_CallInternal shard (F_ and its resume twin R_: 1.25 MB, 1,525 labels each;
# estimated 10.6 s, measured 11.8 s user+sys), SQLite's sqlite3VdbeExec shard (1.17 MB, 1,739
# labels each; 12.1 s, 10.0 s), Lua's luaV_execute shard (0.47 MB, 617 labels; 2.8 s, 4.0 s),
# and libpcre2-8's match function shard (2.5 MB, 12,768 labels each, a 12,442-entry jump table;
# 401 s, over 10 minutes and unfinished).  Bytes alone would rank that shard with QuickJS's
# 3.5 MB shard of 105 small functions (14 s estimated).
SECONDS_PER_BYTE = 4e-6
SECONDS_PER_LABEL2 = 1.2e-6
_FN_DEF = re.compile(r"^(?:static |__attribute__\(\([^)]*\)\) )*(?:NxRet|u64) ([A-Z]_[0-9a-f]+)\(.*\{$", re.M)
_LABEL = re.compile(r"^ L_[0-9a-f]+:", re.M)


@dataclass
class FunctionCost:
    name: str  # its C name (F_, R_ resume twin, I_ inlined copy, ...)
    nbytes: int
    labels: int
    seconds: float  # estimated compile CPU time


def function_costs(text: str) -> list[FunctionCost]:
    """The estimated compile cost of each function of a shard's C (its definitions in order)."""
    starts = [(m.start(), m.group(1)) for m in _FN_DEF.finditer(text)]
    out = []
    for k, (s, name) in enumerate(starts):
        e = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        n = e - s
        labels = len(_LABEL.findall(text, s, e))
        out.append(FunctionCost(name, n, labels, SECONDS_PER_BYTE * n + SECONDS_PER_LABEL2 * labels * labels))
    return out
