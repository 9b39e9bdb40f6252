"""Kernels sampling 3D and 2D array texture objects through the real GPU process (gfx-layers):
nvcc/ptxas (PyPI) compile ``tex3D<float4>`` and ``tex2DLayered<float4>`` for sm_86 (TEX.B.LL
3D / ARRAY_2D), the shader service translates them (set 1 bindings 8 and 7: the 3D and 2D array
texture pools), and the GPU process puts the POOLS packet's volume (block-linear, uploaded and
deswizzled) and layered texture in those pools; every thread's word equals numpy's texel
arithmetic (nearest sampling, texels multiples of 1/8: exact).  A decoy 2D texture in another
entry shows a wrong pick.  A module declaring the wrong image type at binding 7 or 8 is refused
by name at registration."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu_host"))  # gpu_guest, the dispatch harness
import test_compute_dispatch as cd  # noqa: E402

from test_compute_dispatch import A_OFF, B_OFF, BLOCK, N, O_OFF, PAR_OFF, _rebind, words  # noqa: E402

# the dispatch harness's fixtures (a GPU process with sampler 62, the shader service, its kernels)
env, kernels, shader_service = cd.env, cd.kernels, cd.shader_service

from cpu_host.gpu_client.registry import ProgramDesc, TextureDesc  # noqa: E402
from gpu_guest import P, gpu_log  # noqa: E402
from gpu_host import blocklinear  # noqa: E402

# thread i samples texel (i & 3, (i >> 2) & 3) of slice / layer (i >> 4) & 3 at its centre and
# writes v.x - 2 v.w
SRC = r"""
K(tex3r) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = tex3D<float4>(t, ((i & 3) + 0.5f) * 0.25f, (((i >> 2) & 3) + 0.5f) * 0.25f, (((i >> 4) & 3) + 0.5f) * 0.25f);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
K(texar) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = tex2DLayered<float4>(t, ((i & 3) + 0.5f) * 0.25f, (((i >> 2) & 3) + 0.5f) * 0.25f, (i >> 4) & 3);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
"""
TEX_OFF, DECOY_OFF = 0x600000, 0x608000
TEX_SLOT, SAMPLER_SLOT = 5, 1


@pytest.fixture(scope="module")
def built():
    import cuda_build
    import cuda_corpus
    import nvtools

    try:
        return cuda_build.build(cuda_corpus.HEADER + SRC, 86, "O3")
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")


def translated(k) -> bytes:
    from shader_svc.sm86 import decode
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    return translate_compute(decode.decode_stream(k.code), ComputeSpec((BLOCK, 1, 1), ()))


def dispatch(env, k, prog: int, pool_tex: list[int]) -> None:
    from cpu_host.horizon.hle.nvn.compute import ComputeInfo, driver_words
    from shader_svc.sm86.cbank import PARAMS

    bank = (k.cbank0_size + 15) & ~15
    consts = [(P.OP_COMPUTE_CONST, at, v) for at, v in driver_words(ComputeInfo(86, (BLOCK, 1, 1), bank), (N // BLOCK, 1, 1))]
    samplers = [P.EMPTY] * P.POOL_SAMPLERS
    samplers[SAMPLER_SLOT] = 62  # env's nearest, clamped sampler
    cmds = [
        (P.OP_POOLS, pool_tex, samplers),
        *consts,
        (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, 4 * N, PARAMS, False),
        (P.OP_COMPUTE_BUFFER, 1, 1, B_OFF, 64, PARAMS + 8, False),
        (P.OP_COMPUTE_BUFFER, 2, 1, O_OFF, 4 * N, PARAMS + 16, True),
        (P.OP_DISPATCH, prog, N // BLOCK, 1, 1, bank, 7, 1, PAR_OFF, 28, PARAMS),
    ]
    env.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, 0xB, 0xC, N))
    env.pool.write(B_OFF, struct.pack("<Q", SAMPLER_SLOT << 20 | TEX_SLOT) + bytes(56))
    env.pool.write(O_OFF, bytes(4 * N))
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]


def want_words(texels: np.ndarray) -> np.ndarray:
    i = np.arange(N)
    px = texels[(i >> 4) & 3, (i >> 2) & 3, i & 3]
    return (px[:, 0] - np.float32(2) * px[:, 3]).astype(np.float32).view(np.uint32)


@pytest.mark.parametrize("name", ["tex3r", "texar"])
def test_kernel_samples_a_3d_or_layered_texture_of_its_pool(env, built, name):
    k = built[name]
    from shader_svc.sm86 import decode

    text = "\n".join(i.text() for i in decode.decode_stream(k.code))
    assert ("3D" if name == "tex3r" else "ARRAY_2D") in text and "TEX.B" in text, text
    prog = 700 + (name == "texar")
    env.client.register(ProgramDesc(prog, translated(k), b""))
    r = np.random.default_rng(len(name))
    texels = (r.integers(-1000, 1000, (4, 4, 4, 4)) / 8).astype(np.float32)
    tid, did = 720 + (name == "texar"), 730
    if name == "tex3r":  # a block-linear volume, two slices a block (two slabs)
        env.pool.write(TEX_OFF, blocklinear.swizzle_3d(texels.view(np.uint8).reshape(4, 4, 64), 0, 1))
        env.client.register(TextureDesc(tid, 1, TEX_OFF, 4, 4, "RGBA32F", layers=4, volume=True, block_depth_log2=1))
    else:  # a pitch-linear 2D array
        env.pool.write(TEX_OFF, texels.tobytes())
        env.client.register(TextureDesc(tid, 1, TEX_OFF, 4, 4, "RGBA32F", block_linear=False, pitch=64, layers=4))
    decoy = (r.integers(-1000, 1000, (4, 4, 4)) / 8).astype(np.float32)
    env.pool.write(DECOY_OFF, decoy.tobytes())
    env.client.register(TextureDesc(did, 1, DECOY_OFF, 4, 4, "RGBA32F", block_linear=False, pitch=64))
    pool = [P.EMPTY] * P.POOL_TEXTURES
    pool[TEX_SLOT], pool[TEX_SLOT - 1] = tid, did
    dispatch(env, k, prog, pool)
    assert np.array_equal(words(env, O_OFF), want_words(texels))
    # the texture in another entry: this entry reads the dummy (0), not the texture
    pool[TEX_SLOT], pool[TEX_SLOT + 1] = P.EMPTY, tid
    dispatch(env, k, prog, pool)
    assert not np.array_equal(words(env, O_OFF), want_words(texels))


def test_wrong_image_types_at_the_dimension_pools_refused_by_name(env, built):
    from nxrecomp.common.errors import NxError

    spv = translated(built["tex3r"])
    with pytest.raises(
        NxError,
        match=r"set 1 binding 7 is the 2D ARRAY texture pool: sampled images \(Dim, Arrayed, Sampled\) = "
        r"\(1, 1, 1\), but the module declares \(2, 0, 1\) there",
    ):
        env.client.register(ProgramDesc(791, _rebind(spv, (1, 8), (1, 7)), b""))
    env.client.register(ProgramDesc(792, spv, b""))  # as translated: served
