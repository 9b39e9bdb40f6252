"""The compile budget (``recompiler.cc_budget_s``): each function's estimated compile cost from
the C the lifter wrote (``cc.function_costs``: its bytes and its ``L_`` labels, the blocks clang
sees), and a shard over the budget compiled with ``build.CHEAP_FLAGS`` instead of the
optimisation level.  The cheap code must behave as the optimised code does: a computed-goto
interpreter (``tests/cpu_host/programs/interp_loop.c``: recursion, longjmp, calls through
pointers) recompiled with a budget so small that every shard is over it prints what
qemu-aarch64 prints, and the build's stats name its shards."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from recompiler import cc
from recompiler.build import CHEAP_FLAGS, TAIL_DUP_FLAGS, cheap_flags
from tests.cpu_host import aarch64_programs

SIG = "(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29)"


def _function(name: str, labels: int, prefix: str = "NxRet ") -> str:
    body = "".join(f" L_{0x1000 + 4 * k:x}:;\n  x0 = x0 + {k};\n" for k in range(labels))
    return f"{prefix}{name}{SIG} {{\n  u64 x0 = a0;\n{body}  return (NxRet){{ x0, a30 }};\n}}\n"


def test_function_costs_count_each_functions_own_labels() -> None:
    text = (
        '#include "lifted.h"\n'
        + f"NxRet F_10{SIG};\n"  # a prototype is no definition
        + _function("F_10", 3)
        + _function("C_10", 0, "static __attribute__((noinline, cold)) NxRet ")
        + _function("R_10", 40)
    )
    costs = cc.function_costs(text)
    assert [(f.name, f.labels) for f in costs] == [("F_10", 3), ("C_10", 0), ("R_10", 40)]
    assert sum(f.nbytes for f in costs) == len(text) - text.index(
        "NxRet F_10(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29) {"
    )
    # quadratic in the labels: ten times the blocks, about a hundred times the cost's block term
    small, big = (cc.function_costs(_function("F_1", n))[0] for n in (100, 1000))
    block = [f.seconds - cc.SECONDS_PER_BYTE * f.nbytes for f in (small, big)]
    assert block[1] == pytest.approx(100 * block[0])


def test_cheap_flags_replace_the_optimisation_level_only() -> None:
    flags = ["-O2", "-fPIC", *TAIL_DUP_FLAGS, "-march=x86_64_v3", "-fno-slp-vectorize", "-DNX_GAME_SO"]
    assert cheap_flags(flags) == [*CHEAP_FLAGS, "-fPIC", "-march=x86_64_v3", "-DNX_GAME_SO"]
    assert cheap_flags(["-O3", "-g0"]) == [*CHEAP_FLAGS, "-g0"]


def _find(d, key):
    if isinstance(d, dict):
        for k, v in d.items():
            if k == key:
                return v
            found = _find(v, key)
            if found is not None:
                return found
    return None


def test_shards_over_the_budget_compile_cheaply_and_run_like_qemu(tmp_path) -> None:
    program = aarch64_programs.build_for_qemu("interp_loop", tmp_path)
    want = subprocess.run(["qemu-aarch64", str(program), "300"], capture_output=True, text=True, timeout=300)
    assert want.returncode == 0 and "interp total" in want.stdout, want.stderr[-500:]
    bundle = aarch64_programs.recompile(program, tmp_path / "b", NXRECOMP_RECOMPILER_CC_BUDGET_S="1e-9")
    over = _find(json.loads((bundle / "manifest.json").read_text()), "over_cc_budget")
    shards = sorted(p.name for p in Path(bundle / "src").glob("shard_*.c"))
    assert over is not None and sorted(row[0] for row in over) == shards
    got = subprocess.run([str(bundle / "nxrun"), str(program), "300"], capture_output=True, text=True, timeout=300)
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr[-1000:]
