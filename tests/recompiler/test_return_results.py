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

import re
import subprocess
from pathlib import Path

from recompiler import cc
from recompiler.analyse import Memory, analyse
from recompiler.build import RUNTIME_DIR, build
from recompiler.decode import decode
from recompiler.lift import lift_function
from recompiler.lift.emitter import SIG, FunctionPlan

BASE = 0x400000
CALLER, LEAF = BASE, BASE + 0x100
RET = 0xD65F03C0


def _movz(rd: int, imm: int) -> int:
    return 0xD2800000 | (imm << 5) | rd


def _program() -> dict[int, int]:
    """caller: saves x29/x30, calls leaf, returns x0 + x1 (the leaf's two results) + the low
    bits of d0 (its FP result, moved back to x2).  leaf: x0 = 3, x1 = 4, d0 = x1, scratch
    x2-x10 and d5 written."""
    c, f = CALLER, LEAF
    prog = {c: 0xA9BF7BFD,                       # stp x29, x30, [sp, #-16]!
            c + 4: 0x94000000 | ((f - (c + 4)) >> 2),   # bl leaf
            c + 8: 0x8B010000,                   # add x0, x0, x1
            c + 12: 0x9E660002,                  # fmov x2, d0
            c + 16: 0x8B020000,                  # add x0, x0, x2
            c + 20: 0xA8C17BFD,                  # ldp x29, x30, [sp], #16
            c + 24: RET}
    words = [_movz(0, 3), _movz(1, 4), 0x9E670020]          # fmov d0, x1
    words += [_movz(r, 0x100 + r) for r in range(2, 11)]    # mov x2..x10, #0x1rr
    words += [0x9E670045, RET]                               # fmov d5, x2; ret
    prog.update({f + 4 * i: w for i, w in enumerate(words)})
    return prog


def _memory() -> Memory:
    size = 0x1000
    data = bytearray(size)
    for a, v in _program().items():
        data[a - BASE:a - BASE + 4] = v.to_bytes(4, "little")
    return Memory([(BASE, size, bytes(data), True)])


def _return_stores(text: str, entry: int) -> str:
    f = text[text.index(f"NxRet F_{entry:x}{SIG} {{"):]
    f = f[:f.index("\n}\n")]
    rets = [line for line in f.splitlines() if line.strip().endswith("return (NxRet){ x30, x0 };")]
    assert rets, f
    return "\n".join(rets)


DRIVER = r"""
#include "nxrt.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    unsigned long long func = strtoull(argv[2], 0, 0), stack = 0x10000000ull;
    if (mmap((void *)stack, 0x10000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)stack)
        return 3;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    NxFn (*lookup)(uint64_t, uint32_t *) = (NxFn (*)(uint64_t, uint32_t *))dlsym(h, "nx_lookup");
    uint32_t kind = 0;
    NxFn fn = lookup ? lookup(func, &kind) : 0;
    if (!fn) return 4;
    static NxCpu s;
    s.x[30] = 0x1234; s.sp = stack + 0x8000;
    nx_enter(&s, fn);
    printf("%llx %llx %llx %llx\n", (unsigned long long)s.pc, (unsigned long long)s.x[0],
           (unsigned long long)s.x[1], (unsigned long long)s.v[0].d[0]);
    return 0;
}
"""


def test_returns_store_results_not_scratch(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NXRECOMP_NXRECOMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NXRECOMP_RECOMPILER_JOBS", "2")
    prog = analyse(_memory(), CALLER, {CALLER, LEAF}, [], {})
    bundle = tmp_path / "bundle"
    build(prog, bundle)
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    whole = _return_stores(text, LEAF)
    assert "s->x[1] = x1" in whole and "s->v[0] = v0" in whole, whole
    for r in range(2, 11):
        assert f"s->x[{r}] =" not in whole, (r, whole)
    assert "s->v[5] =" not in whole, whole

    # one function lifted on its own (a host caller that reads every register): all it changed
    leaf = sorted((a, w) for a, w in _program().items() if a >= LEAF)
    plan = FunctionPlan(LEAF, [decode(w, a) for a, w in leaf])
    alone, _called, _live = lift_function(plan, {LEAF})
    single = _return_stores(alone, LEAF)
    for r in range(1, 11):
        assert f"s->x[{r}] = x{r}" in single, (r, single)
    assert "s->v[0] = v0" in single and "s->v[5] = v5" in single, single

    driver = tmp_path / "driver"
    (tmp_path / "driver.c").write_text(DRIVER)
    r = subprocess.run([*cc.compiler(), str(tmp_path / "driver.c"), "-o", str(driver), f"-I{RUNTIME_DIR}", "-ldl"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([str(driver), str(bundle / "game.so"), hex(CALLER)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    pc, x0, x1, d0 = r.stdout.split()
    # x0 = 3 + 4 + 4 (d0 holds x1's bits): the caller found both integer results and the FP one
    assert (pc, int(x0, 16), int(x1, 16), int(d0, 16)) == ("1234", 11, 4, 4), r.stdout
