"""SM53 (Maxwell) decoder, printer, assembler and compute translation speed, next to the SM86
ones on the same PTX corpus (each built by ptxas for its architecture), as ratios.

    .venv/bin/python bench/shader_sm53.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "shader_svc")]  # the oracles and harnesses live with the tests

import cubin  # noqa: E402
import nvtools  # noqa: E402
import sm53_corpus as corpus  # noqa: E402
from shader_svc.sm53 import assemble as asm53, decode as dec53, to_spirv as ts53  # noqa: E402
from shader_svc.sm86 import assemble as asm86, decode as dec86, to_spirv as ts86  # noqa: E402

SHARED = ["add_i32", "saxpy", "loop_sum", "branch", "int_ops", "fp_ops"]  # translated on both


def rate(fn, n_items: int, repeat: int) -> float:
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return n_items * repeat / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    r = ap.parse_args().repeat
    k53 = corpus.build(ROOT / "tests/shader_svc/ptx/sm53")
    k86 = {}
    for f in sorted((ROOT / "tests/shader_svc/ptx").glob("*.ptx")):
        k86.update(cubin.kernels(nvtools.ptxas(f.read_text(), "sm_86"), str(f)))
    codes53 = [k53[n].code for n in SHARED]
    codes86 = [k86[n].code for n in SHARED]
    i53 = [dec53.decode_stream(c) for c in codes53]
    i86 = [dec86.decode_stream(c) for c in codes86]
    n53, n86 = sum(map(len, i53)), sum(map(len, i86))
    t53 = [[i.text() for i in p] for p in i53]
    t86 = [[i.text() for i in p] for p in i86]
    rows = [
        (
            "decode (instructions/s)",
            rate(lambda: [dec53.decode_stream(c) for c in codes53], n53, r),
            rate(lambda: [dec86.decode_stream(c) for c in codes86], n86, r),
        ),
        (
            "print (instructions/s)",
            rate(lambda: [[i.text() for i in p] for p in i53], n53, r),
            rate(lambda: [[i.text() for i in p] for p in i86], n86, r),
        ),
        (
            "assemble (instructions/s)",
            rate(lambda: [asm53.assemble(t) for p in t53 for t in p], n53, max(1, r // 4)),
            rate(lambda: [asm86.assemble_line(t) for p in t86 for t in p], n86, max(1, r // 4)),
        ),
        (
            "translate (programs/s)",
            rate(lambda: [ts53.translate_compute(p) for p in i53], len(SHARED), r),
            rate(lambda: [ts86.translate_compute(p) for p in i86], len(SHARED), r),
        ),
    ]
    print(f"{len(SHARED)} kernels: {n53} SM53 instructions, {n86} SM86 instructions")
    print(f"{'':28s} {'SM53':>10s} {'SM86':>10s} {'SM53/SM86':>10s}")
    for name, a, b in rows:
        print(f"{name:28s} {a:10.0f} {b:10.0f} {a / b:10.2f}")


if __name__ == "__main__":
    main()
