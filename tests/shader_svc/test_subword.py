"""Sub-word generic memory (LD/ST .U8 .S8 .U16 .S16; ``lower/memory.py``'s ``generic_sub``) run
on lavapipe from a hand-written SM53 kernel: loads zero- / sign-extend, and neighbouring lanes
storing adjacent bytes and halves of one 32-bit word at the same time all land, while the
bytes past the last lane's keep what the buffer held (a plain read-modify-write of the word
would lose the neighbours' stores: checked, this test then fails).  The -G half kernels of
the CUDA corpus run the local-window path on both ISAs."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from compute_dispatch import run_spirv, upload
from shader_svc.sm53 import assemble as asm
from shader_svc.sm53 import decode as dec
from shader_svc.sm53.to_spirv import ComputeSpec, cbank0, translate_compute

BS = 64
# params: a (0x140), out (0x148: 4 words a lane), bytes out (0x150), halves out (0x158), n (0x160)
KERNEL = """
        S2R R0, SR_TID.X
        S2R R2, SR_CTAID.X
        ISCADD R0, R2, R0, 0x6                 // i
        ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x160], PT
        @P0 EXIT
        IADD R4.CC, R0, c[0x0][0x140]          // a + i: byte i
        IADD.X R5, RZ, c[0x0][0x144]
        LD.E.S8 R6, [R4]
        LD.E.U8 R7, [R4]
        ISCADD R4.CC, R0, c[0x0][0x140], 0x1   // a + 2i: half i
        IADD.X R5, RZ, c[0x0][0x144]
        LD.E.S16 R8, [R4]
        LD.E.U16 R9, [R4]
        ISCADD R4.CC, R0, c[0x0][0x148], 0x4
        IADD.X R5, RZ, c[0x0][0x14c]
        STG.E [R4], R6
        STG.E [R4+0x4], R7
        STG.E [R4+0x8], R8
        STG.E [R4+0xc], R9
        IADD R4.CC, R0, c[0x0][0x150]          // bytes out + i <- the sign-extended byte
        IADD.X R5, RZ, c[0x0][0x154]
        ST.E.U8 [R4], R6
        ISCADD R4.CC, R0, c[0x0][0x158], 0x1   // halves out + 2i <- the sign-extended half
        IADD.X R5, RZ, c[0x0][0x15c]
        ST.E.U16 [R4], R8
        EXIT
"""


@pytest.mark.parametrize("n", [10, 131])
def test_sub_word_loads_and_neighbouring_stores(compute_device, n):
    code = asm.assemble_program(KERNEL)
    spv = translate_compute(dec.decode_stream(code), ComputeSpec((BS, 1, 1)))
    a = np.random.default_rng(n).integers(0, 2**32, (2 * n + 3) // 4 + 1, dtype=np.uint32)
    a[0] = 0x80FF7F01  # both signs in the first bytes and halves
    ab, hb = a.view(np.uint8), a.view(np.uint16)
    fill = np.full((2 * n + 3) // 4 + 1, 0xA5A5A5A5, np.uint32)
    ba, bo = upload(compute_device, a), upload(compute_device, np.zeros(4 * n, np.uint32))
    bb, bh = upload(compute_device, fill), upload(compute_device, fill)
    params = struct.pack("<QQQQI", ba.address, bo.address, bb.address, bh.address, n)
    out, ob, oh = run_spirv(compute_device, spv, cbank0, 0, n, params, [bo, bb, bh], BS)
    want = np.stack(
        [
            ab[:n].view(np.int8).astype(np.int32).view(np.uint32),
            ab[:n].astype(np.uint32),
            hb[:n].view(np.int16).astype(np.int32).view(np.uint32),
            hb[:n].astype(np.uint32),
        ],
        axis=1,
    )
    assert np.array_equal(out[: 4 * n].reshape(n, 4), want)
    got_b = ob[: len(fill)].view(np.uint8)
    assert np.array_equal(got_b[:n], ab[:n]) and np.all(got_b[n:] == 0xA5)
    got_h = oh[: len(fill)].view(np.uint16)
    assert np.array_equal(got_h[:n], hb[:n]) and np.all(got_h[n:] == 0xA5A5)
