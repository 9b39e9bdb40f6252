"""Census of the generic-access proofs (``shader_svc/ir/spaces.py``) over the CUDA corpus: for
each kernel of the chosen ISAs and levels (built by tests/shader_svc/cuda_build.py, cached;
__device__ globals placed at address 0 as bench/shader_big.py does), the generic accesses proved
global / shared / local, those left to the run-time selection, SpaceIs queries answered, branches
folded and blocks removed.  Deterministic counts (no timing).

    .venv/bin/python bench/shader_spaces.py [--isa 86] [--opt G] [-k name] [-v]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "shader_svc"))

import cuda_build  # noqa: E402
import cuda_corpus as cc  # noqa: E402
from shader_svc.lower import control  # noqa: E402


def main() -> None:
    import cuda_globals
    from shader_svc.request import FEATURES

    ap = argparse.ArgumentParser()
    ap.add_argument("--isa", type=int, action="append")
    ap.add_argument("--opt", action="append")
    ap.add_argument("-k", default="")
    ap.add_argument("-v", action="store_true", help="one line per kernel")
    a = ap.parse_args()
    got = []
    real = control.ir_spaces.annotate

    def keep(fn, consts, layout, fold=True):
        st = real(fn, consts, layout, fold)
        got.append(st)
        return st

    control.ir_spaces.annotate = keep
    for isa in a.isa or [86, 53]:
        for opt in a.opt or ["G"]:
            tot: collections.Counter = collections.Counter()
            kernels = failed = 0
            cases = [c for c in cc.CASES if a.k in c.name and isa >= c.min_sm]
            for g in sorted({c.group for c in cases}):
                try:
                    ks = cuda_build.build(cc.group_source(g, isa), isa, opt)
                except Exception as e:  # noqa: BLE001 - the compiler refused the group: say so
                    print(f"sm{isa} {opt} group {g}: build failed: {str(e)[-200:]}")
                    continue
                for c in (c for c in cases if c.group == g):
                    k = ks[c.name]
                    code, banks, data = k.code, (), ()
                    if getattr(k, "globals_cubin", b""):
                        placed = cuda_globals.place(k.globals_cubin, k.name, isa, 0)
                        code, data = placed.code, ((0, placed.image),)
                        banks = ((4, placed.bank4),) if placed.bank4 else ()
                    got.clear()
                    try:
                        cc.translate(isa, code, getattr(k, "cbank2", b""), banks, data, FEATURES["shader_clock"])
                    except Exception as e:  # noqa: BLE001 - a refusal: counted, named
                        failed += 1
                        print(f"sm{isa} {opt} {c.name}: not translated: {str(e)[:120]}")
                        continue
                    kernels += 1
                    row: collections.Counter = collections.Counter()
                    for st in got:
                        row.update({f"proved {k}": v for k, v in st.proven.items()})
                        row.update(unproved=st.unproven, space_is=st.space_is, folded=st.folded, removed=st.removed)
                    tot.update(row)
                    if a.v and any(row.values()):
                        print(f"sm{isa} {opt} {c.name:24} " + " ".join(f"{k}={v}" for k, v in sorted(row.items()) if v))
            keys = ("proved global", "proved shared", "proved local", "unproved", "space_is", "folded", "removed")
            print(f"sm{isa} {opt}: {kernels} kernels translated ({failed} not): " + ", ".join(f"{k} {tot[k]}" for k in keys))


if __name__ == "__main__":
    main()
