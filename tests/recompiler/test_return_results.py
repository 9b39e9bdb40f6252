"""What a return stores: the results, not the scratch registers (interproc._ret_mask).

AAPCS64 leaves a callee's argument and scratch registers undefined after a call, so a caller
uses only its results (X0-X1, V0-V3) and the low halves of V8-V15, which the callee keeps.  A
whole-program build's returns store no other caller-saved register: glibc's strcmp stored
X1-X10 at each return for callers that never look at them.  Here on a hand-encoded leaf that
writes results and scratch registers: the built C's return stores X1 and V0 but none of
X2-X10 and V5, a single function lifted for a host caller that compares every register (the
Unicorn harness's case) stores them all, and a C driver running the built code finds the
results where its caller used them."""

from __future__ import annotations

import sys
from pathlib import Path

from recompiler.analyse import Memory, analyse
from recompiler.build import build
from recompiler.lift.interproc import vcopy
from recompiler.decode import decode
from recompiler.lift import lift_function
from recompiler.lift.emitter import SIG, FunctionPlan

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, movz, run_function  # noqa: E402

BASE = 0x400000
CALLER, LEAF = BASE, BASE + 0x100


def _program() -> dict[int, int]:
    """caller: saves x29/x30, calls leaf, returns x0 + x1 (the leaf's two results) + the low
    bits of d0 (its FP result, moved back to x2).  leaf: x0 = 3, x1 = 4, d0 = x1, scratch
    x2-x10 and d5 written."""
    c, f = CALLER, LEAF
    prog = {
        c: 0xA9BF7BFD,  # stp x29, x30, [sp, #-16]!
        c + 4: 0x94000000 | ((f - (c + 4)) >> 2),  # bl leaf
        c + 8: 0x8B010000,  # add x0, x0, x1
        c + 12: 0x9E660002,  # fmov x2, d0
        c + 16: 0x8B020000,  # add x0, x0, x2
        c + 20: 0xA8C17BFD,  # ldp x29, x30, [sp], #16
        c + 24: RET,
    }
    words = [movz(0, 3), movz(1, 4), 0x9E670020]  # fmov d0, x1
    words += [movz(r, 0x100 + r) for r in range(2, 11)]  # mov x2..x10, #0x1rr
    words += [0x9E670045, RET]  # fmov d5, x2; ret
    prog.update({f + 4 * i: w for i, w in enumerate(words)})
    return prog


def _memory() -> Memory:
    size = 0x1000
    data = bytearray(size)
    for a, v in _program().items():
        data[a - BASE : a - BASE + 4] = v.to_bytes(4, "little")
    return Memory([(BASE, size, bytes(data), True)])


def _return_stores(text: str, entry: int) -> str:
    f = text[text.index(f"NxRet F_{entry:x}{SIG} {{") :]
    f = f[: f.index("\n}\n")]
    rets = [line for line in f.splitlines() if line.strip().endswith("return (NxRet){ x30, x0 };")]
    assert rets, f
    return "\n".join(rets)


DRIVER = r"""
    static NxCpu s;
    s.x[30] = 0x1234; s.sp = 0x10008000;
    nx_enter(&s, fn);
    printf("%llx %llx %llx %llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0],
           (unsigned long long)s.x[1], (unsigned long long)s.v[0].d[0]);
"""


def test_returns_store_results_not_scratch(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    prog = analyse(_memory(), CALLER, {CALLER, LEAF}, [], {})
    bundle = tmp_path / "bundle"
    build(prog, bundle)
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    whole = _return_stores(text, LEAF)
    assert "s->x[1] = x1" in whole and vcopy("s->v[0]", "v0") in whole, whole
    for r in range(2, 11):
        assert f"s->x[{r}] =" not in whole, (r, whole)
    assert "s->v[5]" not in whole, whole

    # one function lifted on its own (a host caller that reads every register): all it changed
    leaf = sorted((a, w) for a, w in _program().items() if a >= LEAF)
    plan = FunctionPlan(LEAF, [decode(w, a) for a, w in leaf])
    alone, _called, _live = lift_function(plan, {LEAF})
    single = _return_stores(alone, LEAF)
    for r in range(1, 11):
        assert f"s->x[{r}] = x{r}" in single, (r, single)
    assert vcopy("s->v[0]", "v0") in single and vcopy("s->v[5]", "v5") in single, single

    (line,) = run_function(tmp_path, bundle, CALLER, DRIVER)
    pc, x0, x1, d0 = line.split()
    # x0 = 3 + 4 + 4 (d0 holds x1's bits): the caller found both integer results and the FP one
    assert (pc, int(x0, 16), int(x1, 16), int(d0, 16)) == ("1234", 11, 4, 4), line
