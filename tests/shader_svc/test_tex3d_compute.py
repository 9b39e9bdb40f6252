"""Kernels sampling 3D and 2D array texture objects through the real GPU process (gfx-layers):
nvcc/ptxas (PyPI) compile ``tex3D<float4>`` and ``tex2DLayered<float4>`` for sm_86 (TEX.B.LL
3D / ARRAY_2D), the shader service translates them (set 1 bindings 8 and 7: the 3D and 2D array
texture pools), and the GPU process puts the POOLS packet's volume (block-linear, uploaded and
deswizzled) and layered texture in those pools; every thread's word equals numpy's texel
arithmetic (nearest sampling, texels multiples of 1/8: exact).  A decoy 2D texture in another
entry shows a wrong pick.  A module declaring the wrong image type at binding 7 or 8 is refused
by name at registration.

tex-kernels: the same on SM53 (nvcc 13's PTX through ptxas 12.9, as the corpus builds sm_53), and
on both ISAs the other forms on those dimensions: integer fetches (PTX ``tex.3d`` / ``tex.a2d``
with .s32 coordinates: TLD.B.LZ), ``tex2DLayeredGrad`` (TXD.B ARRAY_2D; gradients of 0.01 texel
units on a 4x4 level: magnified, level 0) and the bound forms (the texture object a kernel
parameter: SM86 TEX.SCR.LL / .LZ, SM53 TEX.LL, TEXS, TEXS.LZ)."""

from __future__ import annotations

import re
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
K(txdar) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = tex2DLayeredGrad<float4>(t, ((i & 3) + 0.5f) * 0.25f, (((i >> 2) & 3) + 0.5f) * 0.25f, (i >> 4) & 3,
                                      make_float2(0.01f, 0.f), make_float2(0.f, 0.01f));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
K(txq3) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  int w, h, d;
  asm volatile("txq.width.b32 %0, [%3]; txq.height.b32 %1, [%3]; txq.depth.b32 %2, [%3];"
               : "=r"(w), "=r"(h), "=r"(d) : "l"(t));
  o[i] = w + 16 * h + 256 * d;
}
K(tld3) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3;
  asm volatile("tex.3d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5,%6,%7,%7}];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
K(tldar) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3;
  asm volatile("tex.a2d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%7,%5,%6,%6}];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
K(tldl3) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3, l = a[i];
  asm volatile("tex.level.3d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5,%6,%7,%7}], %8;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z), "r"(l));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
K(tldla) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3, l = a[i];
  asm volatile("tex.level.a2d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%7,%5,%6,%6}], %8;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z), "r"(l));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
"""
# shader-tex: tldl3 / tldla are integer fetches with a level (PTX tex.level with .s32
# coordinates): ptxas writes TLD.B.LL.CL (no .SCR on SM86: Ra the three coordinates, Rb the
# handle, Rb+1 the level); the level words (-3..3 by thread): level 0 reads the texels, the
# others (outside the one level) read 0, as an H100's TLD.LL.CL does (shader-nv)
# tex-kernels: the same texels through a texture object passed as the kernel's second parameter
# (bound forms: the handle at c[0x0][0x148] (SM53) / c[0x0][0x168] (SM86)): ptxas 13 writes
# TEX.SCR.LL / TEX.SCR.LZ for SM86, ptxas 12.9 TEX.LL, TEXS (3D, ARRAY_2D) and TEXS.LZ for SM53;
# ``a`` holds zeros (level 0)
# (BK: cuda_build.build keeps the kernels whose "K(name)" it finds)
SRC_BOUND = r"""
#define BK(name) extern "C" __global__ void name(const uint32_t *__restrict__ a, cudaTextureObject_t t, uint32_t *__restrict__ o, int n)
#define XYZ ((i & 3) + 0.5f) * 0.25f, (((i >> 2) & 3) + 0.5f) * 0.25f
BK(tex3b) {
  int i = TID; if (i >= n) return;
  float4 v = tex3DLod<float4>(t, XYZ, (((i >> 4) & 3) + 0.5f) * 0.25f, a[i]);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(texab) {
  int i = TID; if (i >= n) return;
  float4 v = tex2DLayeredLod<float4>(t, XYZ, (i >> 4) & 3, a[i]);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(tex3c) {
  int i = TID; if (i >= n) return;
  float4 v = tex3D<float4>(t, XYZ, (((i >> 4) & 3) + 0.5f) * 0.25f);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(texac) {
  int i = TID; if (i >= n) return;
  float4 v = tex2DLayered<float4>(t, XYZ, (i >> 4) & 3);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(tld3b) {
  int i = TID; if (i >= n) return;
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3;
  asm volatile("tex.3d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5,%6,%7,%7}];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(tldab) {
  int i = TID; if (i >= n) return;
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3;
  asm volatile("tex.a2d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%7,%5,%6,%6}];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(tldl3b) {
  int i = TID; if (i >= n) return;
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3, l = a[i];
  asm volatile("tex.level.3d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5,%6,%7,%7}], %8;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z), "r"(l));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(tldlab) {
  int i = TID; if (i >= n) return;
  float4 v; int x = i & 3, y = (i >> 2) & 3, z = (i >> 4) & 3, l = a[i];
  asm volatile("tex.level.a2d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%7,%5,%6,%6}], %8;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(x), "r"(y), "r"(z), "r"(l));
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(tex3z) {
  int i = TID; if (i >= n) return;
  float4 v = tex3DLod<float4>(t, XYZ, (((i >> 4) & 3) + 0.5f) * 0.25f, 0.0f);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
BK(texaz) {
  int i = TID; if (i >= n) return;
  float4 v = tex2DLayeredLod<float4>(t, XYZ, (i >> 4) & 3, 0.0f);
  o[i] = __float_as_uint(v.x - 2.0f * v.w);
}
"""
BOUND = ["tex3b", "texab", "tex3c", "texac", "tex3z", "texaz", "tld3b", "tldab", "tldl3b", "tldlab"]
TEX_OFF, DECOY_OFF = 0x600000, 0x608000
TEX_SLOT, SAMPLER_SLOT = 5, 1


@pytest.fixture(scope="module")
def built():
    import cuda_build
    import cuda_corpus
    import nvtools

    try:
        return {isa: cuda_build.build(cuda_corpus.HEADER + SRC + SRC_BOUND, isa, "O3") for isa in (86, 53)}
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")


def _isa(isa: int):
    """(decode, to_spirv, cbank) of ``isa``."""
    if isa == 53:
        from shader_svc.sm53 import cbank, decode, to_spirv
    else:
        from shader_svc.sm86 import cbank, decode, to_spirv
    return decode, to_spirv, cbank


def disassembly(k, isa: int = 86) -> str:
    return "\n".join(i.text() for i in _isa(isa)[0].decode_stream(k.code))


def translated(k, isa: int = 86) -> bytes:
    decode, to_spirv, _ = _isa(isa)
    return to_spirv.translate_compute(decode.decode_stream(k.code), to_spirv.ComputeSpec((BLOCK, 1, 1), ()))


def dispatch(env, k, prog: int, pool_tex: list[int], isa: int = 86, bound: bool = False, a: bytes | None = None) -> None:
    """One dispatch of ``k`` on the texture pool ``pool_tex``: ``bound``, the handle is the second
    parameter (no buffer b); else b's first word is the handle; ``a`` the words of buffer a
    (zeros unless given)."""
    from cpu_host.horizon.hle.nvn.compute import ComputeInfo, driver_words

    PARAMS = _isa(isa)[2].PARAMS
    bank = (k.cbank0_size + 15) & ~15
    consts = [(P.OP_COMPUTE_CONST, at, v) for at, v in driver_words(ComputeInfo(isa, (BLOCK, 1, 1), bank), (N // BLOCK, 1, 1))]
    samplers = [P.EMPTY] * P.POOL_SAMPLERS
    samplers[SAMPLER_SLOT] = 62  # env's nearest, clamped sampler
    cmds = [
        (P.OP_POOLS, pool_tex, samplers),
        *consts,
        (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, 4 * N, PARAMS, False),
        *([] if bound else [(P.OP_COMPUTE_BUFFER, 1, 1, B_OFF, 64, PARAMS + 8, False)]),
        (P.OP_COMPUTE_BUFFER, 2, 1, O_OFF, 4 * N, PARAMS + 16, True),
        (P.OP_DISPATCH, prog, N // BLOCK, 1, 1, bank, 5 if bound else 7, 1, PAR_OFF, 28, PARAMS),
    ]
    handle = SAMPLER_SLOT << 20 | TEX_SLOT
    env.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, handle if bound else 0xB, 0xC, N))
    env.pool.write(A_OFF, a if a is not None else bytes(4 * N))
    env.pool.write(B_OFF, struct.pack("<Q", handle) + bytes(56))
    env.pool.write(O_OFF, bytes(4 * N))
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]


def want_words(texels: np.ndarray) -> np.ndarray:
    i = np.arange(N)
    px = texels[(i >> 4) & 3, (i >> 2) & 3, i & 3]
    return (px[:, 0] - np.float32(2) * px[:, 3]).astype(np.float32).view(np.uint32)


NAMES = ["tex3r", "texar", "tld3", "tldar", *BOUND, "txdar", "tldl3", "tldla"]
# the instruction each kernel must contain (the form under test), per ISA
FORMS = {
    "tex3r": r"TEX(\.SCR)?\.B\b",
    "texar": r"TEX(\.SCR)?\.B\b",
    "tld3": r"TLD(\.SCR)?\.B\.LZ",
    "tldar": r"TLD(\.SCR)?\.B\.LZ",
    "txdar": r"TXD\.B\b",
    "tldl3": r"TLD\.B\.LL\.CL",
    "tldla": r"TLD\.B\.LL\.CL",
    **{n: r"TEX\.SCR\.L[LZ] " for n in BOUND},
    "tldl3b": r"TLD(\.SCR)?\.LL\.CL ",
    "tldlab": r"TLD(\.SCR)?\.LL\.CL ",
    "tld3b": r"TLD\.SCR\.LZ ",
    "tldab": r"TLD\.SCR\.LZ ",
}
FORMS53 = {
    "tldl3b": r"TLD\.LL\.CL\.P ",
    "tldlab": r"TLD\.LL\.CL\.P ",
    "tld3b": r"TLDS\.LZ\.P ",
    "tldab": r"TLDS\.LZ\.P ",
    "tex3b": r"TEX\.LL\.P ",
    "texab": r"TEX\.LL\.P ",
    "tex3c": r"TEXS\.P ",
    "texac": r"TEXS\.P ",
    "tex3z": r"TEXS\.LZ\.P ",
    "texaz": r"TEXS\.LZ\.P ",
}


@pytest.mark.parametrize("isa", [86, 53])
@pytest.mark.parametrize("name", NAMES)
def test_kernel_samples_a_3d_or_layered_texture_of_its_pool(env, built, name, isa):
    """SM86 TEX.B.LL and (tex-kernels) SM53 TEX.B.P, 3D and ARRAY_2D; the integer fetches
    (``tex.3d`` / ``tex.a2d`` with .s32 coordinates: TLD.B.LZ, tex-kernels) on both ISAs read the
    same texels; so do the bound forms (the texture object a kernel parameter: SM86 TEX.SCR.LL /
    .LZ, SM53 TEX.LL, TEXS, TEXS.LZ).  On the old code SM53 refused "a texture other than 2D"
    (TEXS "this TEXS target") and TLD was not lowered."""
    k = built[isa][name]
    text = disassembly(k, isa)
    volume = "3" in name
    form = FORMS53.get(name, FORMS[name]) if isa == 53 else FORMS[name]
    assert ("3D" if volume else "ARRAY_2D") in text and re.search(form, text), text
    prog = 700 + NAMES.index(name) + 20 * (isa == 53)
    env.client.register(ProgramDesc(prog, translated(k, isa), b""))
    r = np.random.default_rng(len(name))
    texels = (r.integers(-1000, 1000, (4, 4, 4, 4)) / 8).astype(np.float32)
    tid, did = 760 + NAMES.index(name) + 20 * (isa == 53), 800 + NAMES.index(name) + 20 * (isa == 53)
    if volume:  # a block-linear volume, two slices a block (two slabs)
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
    levels = (np.arange(N) % 7 - 3).astype(np.int32).tobytes() if name.startswith("tldl") else None
    dispatch(env, k, prog, pool, isa, name in BOUND, levels)
    want = want_words(texels)
    if levels is not None:  # shader-nv: a level outside the one the texture has reads 0 (as an H100)
        want = np.where(np.frombuffer(levels, np.int32) == 0, want, 0).astype(np.uint32)
    assert np.array_equal(words(env, O_OFF), want)
    # the texture in another entry: this entry reads the dummy (0), not the texture
    pool[TEX_SLOT], pool[TEX_SLOT + 1] = P.EMPTY, tid
    dispatch(env, k, prog, pool, isa, name in BOUND, levels)
    assert not np.array_equal(words(env, O_OFF), want_words(texels))


def test_wrong_image_types_at_the_dimension_pools_refused_by_name(env, built):
    from nxrecomp.common.errors import NxError

    spv = translated(built[86]["tex3r"])
    with pytest.raises(
        NxError,
        match=r"set 1 binding 7 is the 2D ARRAY texture pool: sampled images \(Dim, Arrayed, Sampled\) = "
        r"\(1, 1, 1\), but the module declares \(2, 0, 1\) there",
    ):
        env.client.register(ProgramDesc(791, _rebind(spv, (1, 8), (1, 7)), b""))
    env.client.register(ProgramDesc(792, spv, b""))  # as translated: served


@pytest.mark.parametrize("isa", [86, 53])
def test_kernel_queries_the_dimensions_of_a_volume_layered_or_2d_texture(env, built, isa):
    """(tex-kernels) PTX txq.width / .height / .depth on a texture object: TXQ.B TEX_HEADER_DIMENSION
    components 0x1, 0x2, 0x4 on both ISAs (read off ptxas 13 / 12.9); the instruction names no
    dimension, so the kernel must find the texture in whichever pool holds it: an 8x4x2 volume
    gives (8, 4, 2), an 8x4 texture with 2 layers (8, 4, 2) (shader-tex: z is the layer count,
    as Ryujinx's TXQ reads an array's; it was 1) and a 2D 8x4 texture (8, 4, 1).  On the old
    code the kernel read the 2D pool's dummy for the volume and the array (1, 1, 1)."""
    k = built[isa]["txq3"]
    text = disassembly(k, isa)
    assert re.search(r"TXQ\.B.*TEX_HEADER_DIMENSION.*0x4", text), text
    prog = 690 + (isa == 53)
    env.client.register(ProgramDesc(prog, translated(k, isa), b""))
    vid, aid, tid = 850 + 3 * (isa == 53), 851 + 3 * (isa == 53), 852 + 3 * (isa == 53)
    env.pool.write(TEX_OFF, blocklinear.swizzle_3d(np.zeros((2, 4, 128), np.uint8), 0, 1))
    env.client.register(TextureDesc(vid, 1, TEX_OFF, 8, 4, "RGBA32F", layers=2, volume=True, block_depth_log2=1))
    env.pool.write(DECOY_OFF, bytes(2 * 4 * 128))
    env.client.register(TextureDesc(aid, 1, DECOY_OFF, 8, 4, "RGBA32F", block_linear=False, pitch=128, layers=2))
    env.client.register(TextureDesc(tid, 1, DECOY_OFF, 8, 4, "RGBA32F", block_linear=False, pitch=128))
    for t, want_d in ((vid, 2), (aid, 2), (tid, 1)):
        pool = [P.EMPTY] * P.POOL_TEXTURES
        pool[TEX_SLOT] = t
        dispatch(env, k, prog, pool, isa)
        got = words(env, O_OFF)
        assert np.all(got == 8 + 16 * 4 + 256 * want_d), (t, got[:4])
