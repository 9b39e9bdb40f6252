"""SM53 reconvergence-stack continue entries (shader-ctl): PCNT pushes a continue target, CONT
unwinds the stack to the innermost continue entry and goes to its target (the kinds typed as
PBK/BRK's; Ryujinx's public decoder lists PCNT with PBK/SSY as the stack's push operations and
CONT with BRK/SYNC as branches).  ptxas 12.9 does not emit them (a divergent ``continue`` at -O3
and -G compiles to PBK/BRK + SSY/SYNC), NVIDIA's graphics compiler does; so the kernel here is
written by hand, the form a compiler gives ``for (k = 0; k < 16; k++) { v = a >> k; if (v & 1)
continue; s += k ^ v; if (s > LIMIT) break; }``, and run on lavapipe against numpy, through the
structured lowering (the stack a static state) and through the dispatcher loop (the stack at
run time)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from compute_dispatch import run_spirv, upload
from shader_svc.sm53 import assemble as asm
from shader_svc.sm53 import decode as dec
from shader_svc.sm53.to_spirv import Compute53, ComputeSpec, cbank0

BS = 64
LIMIT = 0x100000

CONTINUE_LOOP = """
        S2R R0, SR_TID.X
        S2R R2, SR_CTAID.X
        ISCADD R0, R2, R0, 0x6
        ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x150], PT
        @P0 EXIT
        ISCADD R4.CC, R0, c[0x0][0x140], 0x2
        SHR.U32 R3, R0, 0x1e
        IADD.X R5, R3, c[0x0][0x144]
        LDG.E R6, [R4]
        MOV R8, RZ
        MOV R9, RZ
        MOV32I R13, {limit}
        PBK BREAK
LOOP:   PCNT NEXT
        SHR.U32 R10, R6, R8
        LOP32I.AND R11, R10, 0x1
        ISETP.NE.U32.AND P1, PT, R11, RZ, PT
        @P1 CONT
        LOP.XOR R12, R8, R10
        IADD R9, R9, R12
        ISETP.GT.U32.AND P2, PT, R9, R13, PT
        @P2 BRK
        CONT
NEXT:   IADD32I R8, R8, 0x1
        ISETP.LT.U32.AND P3, PT, R8, 0x10, PT
        @P3 BRA LOOP
        BRK
BREAK:  ISCADD R4.CC, R0, c[0x0][0x148], 0x2
        IADD.X R5, R3, c[0x0][0x14c]
        STG.E [R4], R9
        EXIT
""".format(limit=hex(LIMIT))


def _ref(a: np.ndarray) -> np.ndarray:
    out = []
    for x in a.tolist():
        s = 0
        for k in range(16):
            v = x >> k
            if v & 1:
                continue
            s += k ^ v
            if s > LIMIT:
                break
        out.append(s)
    return np.array(out, np.uint32)


class _Dispatcher(Compute53):
    def structure_ok(self) -> bool:  # the run-time stack instead of the static one
        return False


def _code() -> bytes:
    code = asm.assemble_program(CONTINUE_LOOP)
    texts = [i.text() for i in dec.decode_stream(code)]
    assert any(t.startswith("PCNT 0x") for t in texts) and "@P1 CONT" in texts and "CONT" in texts
    return code


@pytest.mark.parametrize("structured", [True, False])
def test_pcnt_cont_loop_runs_exactly(compute_device, structured):
    insts = dec.decode_stream(_code())
    if structured:
        lw = Compute53(insts, ComputeSpec((BS, 1, 1)))
        spv = lw.build()
        assert lw.structured
    else:
        spv = _Dispatcher(insts, ComputeSpec((BS, 1, 1))).build()
    n = 200
    a = np.random.default_rng(7).integers(0, 2**20, n, dtype=np.uint32)
    ba, bo = upload(compute_device, a), upload(compute_device, np.zeros(n, np.uint32))
    (out,) = run_spirv(compute_device, spv, cbank0, 0, n, struct.pack("<QQI", ba.address, bo.address, n), [bo], BS)
    ref = _ref(a)
    assert 0 < int((ref > LIMIT).sum()) < n  # both exits taken
    assert np.array_equal(out[:n], ref)
