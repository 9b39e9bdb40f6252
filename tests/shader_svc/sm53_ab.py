"""Hand-assembled SM53 kernels over u32 input arrays, run on the compute device (lavapipe) and
compared word by word with a numpy/Python reference: the harness test_sm53_pr, test_sm53_video,
test_sm53_half_imm and test_alu_forms share.  The kernel text is assembled by
``sm53/assemble.py`` (each test also checks that every line prints back as written, and, heavy,
that nvdisasm prints the words so); ``head`` is the prologue those kernels open with."""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from compute_dispatch import run_spirv, upload

BS = 64  # threads a block: the head's ISCADD R0, R2, R0, 0x6


def head(out_shift: int, regs: tuple[int, ...] = (10, 11)) -> str:
    """The kernel's first lines for params in0, in1, ... (u32 arrays, one a register of ``regs``),
    out and n from c[0x0][0x140] on (8 bytes each; by default a 0x140, b 0x148, out 0x150, n
    0x158): thread i (CTAID * 64 + TID) exits when i >= n, else R<regs[k]> = in_k[i] (R10 = a[i],
    R11 = b[i]) and R8:R9 = out + (i << out_shift), the address of its row of 2^out_shift bytes
    (ptxas's own sequence for it)."""
    out = 0x140 + 8 * len(regs)
    loads = "".join(
        f"""        ISCADD R4.CC, R0, c[0x0][{0x140 + 8 * k:#x}], 0x2
        IADD.X R5, R3, c[0x0][{0x144 + 8 * k:#x}]
        LDG.E R{r}, [R4]
"""
        for k, r in enumerate(regs)
    )
    return f"""
        S2R R0, SR_TID.X
        S2R R2, SR_CTAID.X
        ISCADD R0, R2, R0, 0x6
        ISETP.GE.U32.AND P0, PT, R0, c[0x0][{out + 8:#x}], PT
        @P0 EXIT
        SHR.U32 R3, R0, 0x1e
{loads}        SHR.U32 R3, R0, {32 - out_shift:#x}
        ISCADD R8.CC, R0, c[0x0][{out:#x}], {out_shift:#x}
        IADD.X R9, R3, c[0x0][{out + 4:#x}]
"""


def run(dev, kernel: str, inputs: list[np.ndarray], words: int, extra: bytes = b"") -> np.ndarray:
    """Assemble and translate ``kernel`` (blocks of ``BS``), upload ``inputs`` (u32 arrays of n
    each) and an output of ``words`` u32 a thread, pass their addresses, n and ``extra`` as the
    parameters at c[0x0][0x140], run n threads; the output as an (n, words) array."""
    from shader_svc.sm53 import assemble as asm
    from shader_svc.sm53 import decode as dec
    from shader_svc.sm53.cbank import cbank0
    from shader_svc.sm53.to_spirv import ComputeSpec, translate_compute

    n = len(inputs[0])
    spirv = translate_compute(dec.decode_stream(asm.assemble_program(kernel)), ComputeSpec((BS, 1, 1)))
    bufs = [upload(dev, x) for x in inputs]
    bo = upload(dev, np.zeros(words * n, np.uint32))
    params = struct.pack(f"<{len(bufs) + 1}QI", *(x.address for x in bufs), bo.address, n) + extra
    (out,) = run_spirv(dev, spirv, cbank0, 0, n, params, [bo], BS)
    return out[: words * n].reshape(n, words)


def mismatches(out: np.ndarray, a: np.ndarray, b: np.ndarray, ref: Callable[[int, int], list[int]]) -> list[tuple]:
    """(thread, word, a, b, got, want) for each word of ``out`` that differs from ``ref(a, b)``."""
    bad = []
    for i in range(len(a)):
        for w, v in enumerate(ref(int(a[i]), int(b[i]))):
            if int(out[i, w]) != v:
                bad.append((i, w, hex(int(a[i])), hex(int(b[i])), hex(int(out[i, w])), hex(v)))
    return bad


def printed_back(kernel: str) -> tuple[list[str], list[str]]:
    """(the text each assembled word decodes to, the kernel's lines): equal when every line
    assembles to a word that prints as the line."""
    from shader_svc.sm53 import assemble as asm
    from shader_svc.sm53 import decode as dec

    lines = [ln.strip() for ln in kernel.strip().splitlines()]
    return [i.text() for i in dec.decode_stream(asm.assemble_program(kernel))[: len(lines)]], lines
