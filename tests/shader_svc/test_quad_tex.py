"""ptxas's tex3DGrad quad loop and MOV's quad-lane mask (issue 31; shader-ndv,
``shader_svc/lower/quad_tex.py``).  The loop itself runs exactly on lavapipe in the CUDA corpus
(groups ``texture_grad3``, ``texture_1d``: ``test_cuda_corpus.py``); here: MOV's lane mask on
both ISAs against its definition (lane id & 3 writes where its bit is set), and the refusals
(offset, word and form) of what the loop's translation does not take."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import sm53_ab
from compute_dispatch import run_spirv, upload

# out[i] = 7, then MOV out, tid under each mask: lanes (i & 3) in the mask take tid
MASKS = (0x1, 0x5, 0xA, 0xE, 0x0)
MOV86 = """
    MOV R1, c[0x0][0x28]
    S2R R0, SR_TID.X
    S2R R3, SR_CTAID.X
    IMAD R0, R3, c[0x0][0x0], R0
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x178], PT
    @P0 EXIT
    ULDC.64 UR4, c[0x0][0x118]
    IMAD.MOV.U32 R5, RZ, RZ, 0x20
    IMAD.WIDE.U32 R8, R0, R5, c[0x0][0x170]
{body}
    STG.E.128 [R8.64], R12
    STG.E.128 [R8.64+0x10], R16
    EXIT
""".format(body="\n".join(f"    MOV R{12 + k}, 0x7\n    MOV R{12 + k}, R0, {m:#x}" for k, m in enumerate(MASKS)))
# params: a 0x140, b 0x148, out 0x150, n 0x158; sm53_ab.head puts tid in R0 and &out[tid * 8] in R8
MOV53 = sm53_ab.head(5) + "\n".join(
    [f"        MOV32I R{12 + k}, 0x7\n        MOV R{12 + k}, R0, {m:#x}" for k, m in enumerate(MASKS)]
    + ["        STG.E.128 [R8], R12", "        STG.E.128 [R8+0x10], R16", "        EXIT", ""]
)


def _want(n: int) -> np.ndarray:
    out = np.zeros((n, 8), np.uint32)
    for i in range(n):
        for k, m in enumerate(MASKS):
            out[i, k] = i if m >> (i & 3) & 1 else 7
    return out


def test_mov_quad_lane_mask_sm86(compute_device):
    import vk_compute
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    n = 64
    spirv = translate_compute(dec.decode_stream(assemble_program(MOV86)), ComputeSpec((32, 1, 1)))
    dev = compute_device
    z = np.zeros(4, np.uint32)
    ba, bb, bo = upload(dev, z), upload(dev, z), upload(dev, np.zeros(8 * n, np.uint32))
    params = struct.pack("<QQQI", ba.address, bb.address, bo.address, n)
    (out,) = run_spirv(dev, spirv, vk_compute.cbank0, 0x17C, n, params, [bo], 32)
    got = out[: 8 * n].reshape(n, 8)[:, : len(MASKS)]
    assert (got == _want(n)[:, : len(MASKS)]).all(), got[:8]


def test_mov_quad_lane_mask_sm53(compute_device):
    src = MOV53
    assert "MOV R12, R0, 0x1" in src
    got = sm53_ab.run(compute_device, src, [np.zeros(64, np.uint32), np.zeros(64, np.uint32)], 8)
    n = len(got)
    assert n >= 32
    assert (got[:, : len(MASKS)] == _want(n)[:, : len(MASKS)]).all(), got[:8]


def test_mov_lane_mask_refused_in_graphics():
    """A graphics stage has no established quad lane order here: MOV with a mask is refused."""
    from shader_svc.lower.base import TranslateError
    from shader_svc.lower.quad_tex import mask_lanes_ir
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_line

    w = assemble_line("MOV R18, R4, 0x1")
    inst = dec.decode(w & (2**64 - 1), w >> 64, addr=0x30)

    class Gfx:
        spec = None

    with pytest.raises(
        TranslateError, match=r"MOV R18, R4, 0x1 \(word 0x[0-9a-f]+\): MOV with a quad-lane mask in a graphics stage"
    ):
        mask_lanes_ir(Gfx(), None, inst, None)


CUBE = r"""
#include <stdint.h>
extern "C" __global__ void cube_grad(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                     uint32_t *__restrict__ o, int n, cudaTextureObject_t t) {
  // K(cube_grad): the texture object a kernel parameter (a bound TEX.NDV)
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  const float *f = (const float *)a;
  float4 v = texCubemapLayeredGrad<float4>(t, f[i], f[i + n], f[i + 2 * n], 1, make_float4(f[i + 3 * n], 0.f, 0.f, 0.f),
                                           make_float4(0.f, f[i + 4 * n], 0.f, 0.f));
  ((float *)o)[i] = v.x;
}
"""


@pytest.mark.parametrize("isa", [86, 53])
def test_bound_cube_array_grad_translates_and_an_unseen_split_is_refused(isa):
    """texCubemapLayeredGrad on a texture object passed as a kernel parameter: the bound TEX.NDV
    on a cube array (gpu-pools: SM86 ``TEX.SCR.NDV`` Ra = (layer, x), Rb = (y, z); SM53
    ``TEX.NDV.P`` Ra = (layer, x, y, z)) translates now that the GPU process binds the cube array
    pool (its run: tests/gpu_host/test_compute_pools.py, exact); before it was refused.  SM86's
    bound form with .SCR cleared (Ra would hold five values: not seen from ptxas) is refused by
    offset, word and form."""
    import cuda_build
    import cuda_corpus as cc
    from shader_svc.lower.base import TranslateError

    try:
        k = cuda_build.build(CUBE, isa, "O3")["cube_grad"]
    except cuda_build.NoCompiler as e:
        pytest.skip(str(e))
    assert cc.translate(isa, k.code)
    if isa != 86:
        return
    from shader_svc.sm86 import decode as dec

    code = bytearray(k.code)
    (tex,) = [i for i in dec.decode_stream(bytes(code)) if ".NDV" in i.text() and "ARRAY_CUBE" in i.text()][:1]
    assert ".SCR." in tex.text(), tex.text()
    word = int.from_bytes(code[tex.addr : tex.addr + 16], "little") & ~(1 << 60)  # .SCR: bit 60
    code[tex.addr : tex.addr + 16] = word.to_bytes(16, "little")
    with pytest.raises(
        TranslateError,
        match=r"offset 0x[0-9a-f]+: TEX\.NDV.* ARRAY_CUBE.*\(word 0x[0-9a-f]+\): TEX\.NDV on a cube array texture other than \.B",
    ):
        cc.translate(isa, bytes(code))


def test_ndv_outside_a_region_refused():
    """TEX.NDV whose quad is not made whole (no BMOV.32.PQUAD before it) is refused."""
    from shader_svc.lower.base import TranslateError
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.assemble import assemble_program
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    src = """
    MOV R1, c[0x0][0x28]
    MOV R4, RZ
    MOV R5, RZ
    MOV R2, RZ
    MOV R3, RZ
    TEX.SCR.B.NDV R6, R4, R4, R2, 3D
    EXIT
"""
    with pytest.raises(
        TranslateError,
        match=r"offset 0x50: TEX\.SCR\.B\.NDV R6, R4, R4, R2, 3D \(word 0x[0-9a-f]+\): TEX\.NDV outside a quad region",
    ):
        translate_compute(dec.decode_stream(assemble_program(src)), ComputeSpec((32, 1, 1)))
