"""Size and time of the translation of the CUDA corpus's largest programs (shader-size): for each
named kernel (built by tests/shader_svc/cuda_build.py, cached; __device__ globals placed at
address 0 as cuda_corpus.check does), its instruction count, the CPU seconds of the translation
(decode + lowering + optimiser + SPIR-V, in process: CPU time, not wall, so a loaded machine
gives the same figure), the SPIR-V bytes and bytes per instruction, whether the program was
structured or ran in the dispatcher loop, its SPIR-V blocks and loops, and whether spirv-val
accepts it.  ``--lavapipe`` also dispatches it through the corpus harness and reports pipeline
creation and the fence wait (lavapipe compiles there; MESA_SHADER_CACHE_DISABLE=true for a cold
figure).

    .venv/bin/python bench/shader_big.py [--isa 86] [--opt G] [--lavapipe] [kernel ...]
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "shader_svc"))

import cuda_build  # noqa: E402
import cuda_corpus as cc  # noqa: E402

DEFAULT = ("cpa_pipeline_prims", "g2_cuda_barrier", "atom_ops64", "g2_virtual")


class _Dispatched(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.why = ""

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("dispatcher loop"):
            self.why = record.getMessage()


def measure(name: str, isa: int, opt: str) -> str:
    import cuda_globals
    from shader_svc.request import FEATURES

    case = next(c for c in cc.CASES if c.name == name)
    k = cuda_build.build(cc.group_source(case.group, isa), isa, opt)[name]
    code, banks, data = k.code, (), ()
    if getattr(k, "globals_cubin", b""):
        placed = cuda_globals.place(k.globals_cubin, k.name, isa, 0)
        code, data = placed.code, ((0, placed.image),)
        banks = ((4, placed.bank4),) if placed.bank4 else ()
    if isa == 86:
        from shader_svc.sm86 import decode as dec
    else:
        from shader_svc.sm53 import decode as dec
    n = len(dec.decode_stream(code))
    h = _Dispatched()
    lg = logging.getLogger("shader_svc.lower.control")
    lg.addHandler(h)
    lg.setLevel(logging.DEBUG)
    t = time.process_time()
    spv, _ = cc.translate(isa, code, getattr(k, "cbank2", b""), banks, data, FEATURES["shader_clock"])
    cpu = time.process_time() - t
    lg.removeHandler(h)
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spv)
        f.flush()
        dis = subprocess.run(["spirv-dis", "--raw-id", f.name], capture_output=True, text=True).stdout
    labels, loops = dis.count("= OpLabel"), dis.count("OpLoopMerge")
    shape = "dispatcher" if h.why else "structured"
    return (
        f"sm{isa} {opt} {name:20} {n:6} instructions  {cpu:6.1f} s CPU  {len(spv):9,} bytes "
        f"({len(spv) / n:5.0f} B/instruction)  {shape}  {labels} blocks {loops} loops  spirv-val {cc.spirv_val(spv)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels", nargs="*", default=list(DEFAULT))
    ap.add_argument("--isa", type=int, action="append")
    ap.add_argument("--opt", default="G")
    ap.add_argument("--lavapipe", action="store_true")
    a = ap.parse_args()
    for isa in a.isa or [86, 53]:
        for name in a.kernels:
            if isa < next(c for c in cc.CASES if c.name == name).min_sm:
                continue  # the compiler refuses it for this ISA
            print(measure(name, isa, a.opt), flush=True)
            if a.lavapipe:
                _lavapipe(name, isa, a.opt)


def _lavapipe(name: str, isa: int, opt: str) -> None:
    """The corpus check of one program with lavapipe's pipeline creation and fence wait timed."""
    import vk_compute

    vk = vk_compute.vk
    cp, wf = vk.vkCreateComputePipelines, vk.vkWaitForFences

    def create(*a, **kw):
        t = time.time()
        try:
            return cp(*a, **kw)
        finally:
            print(f"  lavapipe: pipeline created in {time.time() - t:.1f} s", flush=True)

    def wait(d, n, f, all_, timeout):
        t = time.time()
        try:
            return wf(d, n, f, all_, timeout)
        finally:
            print(f"  lavapipe: fence waited {time.time() - t:.1f} s", flush=True)

    vk.vkCreateComputePipelines, vk.vkWaitForFences = create, wait
    try:
        cc.main(["-k", name, "--isa", str(isa), "--opt", opt])
    finally:
        vk.vkCreateComputePipelines, vk.vkWaitForFences = cp, wf


if __name__ == "__main__":
    main()
