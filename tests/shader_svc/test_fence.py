"""MEMBAR behind the device feature memory_barrier (shader-ctl, ``shader_svc/lower/fence.py``):
without the bit nothing is emitted (lavapipe 22.3 stalls on OpMemoryBarrier once some invocations
of a workgroup have exited: ``lower/memory.py`` ``_fence``); with it, one OpMemoryBarrier at
device scope, AcquireRelease | UniformMemory | WorkgroupMemory | ImageMemory (SPIR-V "Memory
Semantics" 0x8 | 0x40 | 0x100 | 0x800, "Scope" Device = 1).  Both ISAs, and through the service's
request (the feature word reaches the compute translation); on lavapipe a kernel whose
invocations all reach the fence runs exactly with it."""

from __future__ import annotations

import struct

import numpy as np

from shader_svc.lower.base import ComputeSpec
from shader_svc.request import FEATURES, make_program
from shader_svc.sm53 import assemble as asm53
from shader_svc.sm53 import decode as dec53
from shader_svc.sm53.to_spirv import translate_compute as tr53
from shader_svc.sm86 import decode as dec86
from shader_svc.sm86.assemble import assemble_program as asm86
from shader_svc.sm86.to_spirv import translate_compute as tr86
from shader_svc.translate import translate

BIT = FEATURES["memory_barrier"]
OP_MEMORY_BARRIER = 225
OP_CONSTANT = 43
SEMANTICS = 0x8 | 0x40 | 0x100 | 0x800

# o[i] = a[i] + 1, a fence, then o[i] += 1 (every invocation reaches the fence: no early exit)
SM86 = """S2R R0, SR_TID.X
IMAD.WIDE.U32 R2, R0, 0x4, RZ
IADD3 R4, P0, R2, c[0x0][0x160], RZ
IADD3.X R5, R3, c[0x0][0x164], RZ, P0, !PT
LDG.E R6, [R4.64]
IADD3 R6, R6, 0x1, RZ
IADD3 R8, P0, R2, c[0x0][0x170], RZ
IADD3.X R9, R3, c[0x0][0x174], RZ, P0, !PT
STG.E [R8.64], R6
MEMBAR.SC.VC
LDG.E R7, [R8.64]
IADD3 R7, R7, 0x1, RZ
STG.E [R8.64], R7
EXIT
"""


def _barriers(spv: bytes) -> list[tuple[int, int]]:
    """(scope, semantics) of every OpMemoryBarrier, its id operands resolved to constants."""
    w = struct.unpack(f"<{len(spv) // 4}I", spv)
    consts, out, i = {}, [], 5
    while i < len(w):
        n, op = w[i] >> 16, w[i] & 0xFFFF
        if op == OP_CONSTANT and n == 4:
            consts[w[i + 2]] = w[i + 3]
        if op == OP_MEMORY_BARRIER:
            out.append((w[i + 1], w[i + 2]))
        i += n
    return [(consts[s], consts[m]) for s, m in out]


def test_sm86_membar_is_a_barrier_only_with_the_feature():
    insts = dec86.decode_stream(asm86(SM86))
    assert _barriers(tr86(insts)) == []
    assert _barriers(tr86(insts, ComputeSpec(features=BIT))) == [(1, SEMANTICS)]


def test_sm53_membar_is_a_barrier_only_with_the_feature():
    for level in ("CTA", "GL", "SYS"):
        insts = dec53.decode_stream(asm53.assemble_program(f"S2R R0, SR_TID.X\nMEMBAR.{level}\nEXIT\n"))
        assert insts[1].text() == f"MEMBAR.{level}"
        assert _barriers(tr53(insts)) == []
        assert _barriers(tr53(insts, ComputeSpec(features=BIT))) == [(1, SEMANTICS)]


def test_the_request_feature_reaches_the_compute_translation():
    code = asm86(SM86)
    assert _barriers(translate(make_program(86, 1, code, (64, 1, 1), BIT))) == [(1, SEMANTICS)]
    assert _barriers(translate(make_program(86, 1, code, (64, 1, 1)))) == []


def test_kernel_with_the_barrier_runs_exactly(compute_device):
    import vk_compute
    from compute_dispatch import run_spirv, upload

    n = 64
    spv = tr86(dec86.decode_stream(asm86(SM86)), ComputeSpec((64, 1, 1), features=BIT))
    a = np.random.default_rng(3).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    ba, bb, bo = upload(compute_device, a), upload(compute_device, a), upload(compute_device, np.zeros(n, np.uint32))
    params = struct.pack("<QQQi", ba.address, bb.address, bo.address, n)
    (got,) = run_spirv(compute_device, spv, vk_compute.cbank0, 0x17C, n, params, [bo], 64)
    assert np.array_equal(got[:n], a + np.uint32(2))
