"""Translation time of compiled CUDA kernels (tests/shader_svc/cuda_corpus.py, built at run time
by nvcc 13 / ptxas 12.9 and cached): per ISA and optimisation level, the programs that translate,
their instruction count, and milliseconds per 1,000 instructions (decode + lowering + SPIR-V
emission, in process): cold (the first pass over every program, refusals included) and warm
(best of ``--repeat`` further passes over those that translate).  The warm boot of 1,000 programs through the
service's disk cache (target < 0.5 s) is bench/shader_translate.py's.

    .venv/bin/python bench/shader_corpus.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "shader_svc"))

import cuda_build  # noqa: E402
import cuda_corpus as cc  # noqa: E402

from nxrecomp.common.errors import NxError  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(f"{'ISA':5} {'level':5} {'programs':>8} {'instructions':>12} {'cold ms/1000':>13} {'warm ms/1000':>13}")
    for isa in (86, 53):
        for opt in ("O3", "G"):
            codes = []
            for g in cc.GROUPS:
                try:
                    ks = cuda_build.build(cc.group_source(g, isa), isa, opt)  # (kernels under their min_sm left out)
                except Exception as e:  # a compiler refusing a group: leave it out, say so
                    print(f"  (group {g} not built: {str(e)[:80]})")
                    continue
                # with the constant bank 2 the corpus passes (ptxas's jump tables, c[0x2] data): without it
                # those programs are refused and left out of both columns
                codes += [
                    (ks[c.name].code, getattr(ks[c.name], "cbank2", b"")) for c in cc.CASES if c.group == g and c.name in ks
                ]
            # cold: the first translation of each program in this process (the decoder's tables
            # are built at import); warm: the best of --repeat further passes
            t0 = time.perf_counter()
            ok = []
            for x in codes:
                try:
                    cc.translate(isa, *x)
                    ok.append(x)
                except NxError:
                    pass
            cold = time.perf_counter() - t0
            # SM53: every fourth 64-bit word is a control word
            n_all = sum(len(x) // 16 if isa == 86 else len(x) // 8 * 3 // 4 for x, _ in codes)
            n_inst = sum(len(x) // 16 if isa == 86 else len(x) // 8 * 3 // 4 for x, _ in ok)
            best = float("inf")
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                for x in ok:
                    cc.translate(isa, *x)
                best = min(best, time.perf_counter() - t0)
            print(
                f"SM{isa:<3} {opt:5} {len(ok):>8} {n_inst:>12} {1e6 * cold / max(n_all, 1):>13.1f} "
                f"{1e6 * best / max(n_inst, 1):>13.1f}"
            )


if __name__ == "__main__":
    main()
