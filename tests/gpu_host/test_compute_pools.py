"""The texture pools the GPU process binds for kernels (issue 31, gpu-pools; gpu_host/compute.py,
nxrecomp/common/kernel_pools.py): CUDA kernels compiled at test time by the corpus's tools
(tests/shader_svc/cuda_build.py: nvcc/NVRTC + ptxas from PyPI, cached; a loud skip where they
cannot be had) for SM86 and SM53, translated by the shader service and dispatched by a real GPU
process on lavapipe, every word compared with numpy:

- ``texCubemap`` / ``texCubemapLayered`` (texture object in a buffer: TEX.B CUBE / ARRAY_CUBE;
  a kernel parameter: SM86 TEX.SCR.LL / TEX.LL, SM53 TEXS CUBE / TEX ARRAY_CUBE) on a registered
  cube (6 faces) or cube array (12 layers), entries of the cube pool (set 1 binding 9) and the
  cube array pool (binding 10).  The reference picks the face and (s, t) with the rules of the
  Vulkan specification's "Cube Map Face Selection" (CUDA's cube maps follow them: the CUDA
  Programming Guide, "Cubemap Textures"), from random directions kept clear of ties between
  axes and of texel edges (nearest sampling: exact).  A decoy in another pool entry shows a
  wrong pick.
- ``suq.width`` / ``suq.height`` on surface objects (TXQ on the texture header pool): each surface
  bound at COMPUTE_SURFACE slot k is also texture-pool entry k, so a 2D, layered, 1D and volume
  surface each report their size.
- ``tex1D`` / ``tex1DLod`` / ``tex1Dfetch`` / ``tex1DLayered``: 1D textures are W x 1 textures of
  the 2D pool (a 1D array a 2D array of W x 1 layers), as the translation samples them
  (kernel_pools.TEXTURE_VIEW_POOL).
- A module declaring the wrong image type at the cube pools is refused at registration naming
  the pool, binding and program.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, TextureDesc
from gpu_guest import P, gpu_log

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools
import test_compute_dispatch as cd  # noqa: E402

env, kernels, shader_service = cd.env, cd.kernels, cd.shader_service
N, BLOCK = 192, 64
A_OFF, B_OFF, O_OFF, PAR_OFF = 0x400000, 0x410000, 0x420000, 0x430000
TEX_OFF, DECOY_OFF, SURF_OFF = 0x600000, 0x640000, 0x680000
TEX_SLOT, SAMPLER_SLOT = 5, 1
S = 4  # cube face size
W1, L1 = 16, 3  # the 1D texture's width, the 1D array's layers

# thread i samples direction (a[3i], a[3i+1], a[3i+2]) (cube arrays: cube i & 1) and writes v.x - 2 v.w
SRC = r"""
#define DIR __uint_as_float(a[3 * i]), __uint_as_float(a[3 * i + 1]), __uint_as_float(a[3 * i + 2])
#define OUT(v) o[i] = __float_as_uint((v).x - 2.0f * (v).w)
#define BK(name) extern "C" __global__ void name(const uint32_t *__restrict__ a, cudaTextureObject_t t, uint32_t *__restrict__ o, int n)
K(cube) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = texCubemap<float4>(t, DIR); OUT(v);
}
K(cubel) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = texCubemapLayered<float4>(t, DIR, i & 1); OUT(v);
}
BK(cubeb) {
  int i = TID; if (i >= n) return;
  float4 v = texCubemap<float4>(t, DIR); OUT(v);
}
BK(cubelb) {
  int i = TID; if (i >= n) return;
  float4 v = texCubemapLayered<float4>(t, DIR, i & 1); OUT(v);
}
#define DX make_float4(0.01f, 0.f, 0.f, 0.f), make_float4(0.f, 0.01f, 0.f, 0.f)
K(cubeg) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = texCubemapGrad<float4>(t, DIR, DX); OUT(v);
}
K(cubelg) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = texCubemapLayeredGrad<float4>(t, DIR, i & 1, DX); OUT(v);
}
BK(cubegb) {
  int i = TID; if (i >= n) return;
  float4 v = texCubemapGrad<float4>(t, DIR, DX); OUT(v);
}
BK(cubelgb) {
  int i = TID; if (i >= n) return;
  float4 v = texCubemapLayeredGrad<float4>(t, DIR, i & 1, DX); OUT(v);
}
K(suq) {
  int i = TID; if (i >= n) return;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[i & 3];
  int w, h;
  asm volatile("suq.width.b32 %0, [%2]; suq.height.b32 %1, [%2];" : "=r"(w), "=r"(h) : "l"(s));
  o[i] = w + 65536 * h;
}
K(tex1) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float x = ((i & 15) + 0.5f) * (1.0f / 16);
  float4 v = (i >> 6) == 0 ? tex1D<float4>(t, x) : (i >> 6) == 1 ? tex1DLod<float4>(t, x, 0.0f)
                                                                   : tex1Dfetch<float4>(t, i & 15);
  OUT(v);
}
K(tex1l) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  float4 v = tex1DLayered<float4>(t, ((i & 15) + 0.5f) * (1.0f / 16), (i >> 4) % 3); OUT(v);
}
"""
BOUND = ("cubeb", "cubelb", "cubegb", "cubelgb")
CUBES = ["cube", "cubel", "cubeb", "cubelb", "cubeg", "cubelg", "cubegb", "cubelgb"]
# the instruction each kernel must contain at -O3, per ISA (read off ptxas 13 sm_86 / 12.9 sm_53);
# the gradient forms are ptxas's quad loop of TEX.NDV (shader_svc/lower/quad_tex.py)
FORMS = {
    86: {
        "cube": r"TEX\.B\.LL .*\bCUBE\b",
        "cubel": r"TEX\.B\.LL .*ARRAY_CUBE",
        "cubeb": r"TEX\.SCR\.LL .*\bCUBE\b",
        "cubelb": r"TEX\.LL .*ARRAY_CUBE",
        "cubeg": r"TEX\.SCR\.B\.NDV .*\bCUBE\b",
        "cubelg": r"TEX\.B\.NDV .*ARRAY_CUBE",
        "cubegb": r"TEX\.SCR\.NDV .*\bCUBE\b",
        "cubelgb": r"TEX\.SCR\.NDV .*ARRAY_CUBE",  # (bound .SCR: refused before gpu-pools)
    },
    53: {
        "cube": r"TEX\.B\.P .*\bCUBE\b",
        "cubel": r"TEX\.B\.P .*ARRAY_CUBE",
        "cubeb": r"TEXS\.P .*\bCUBE\b",
        "cubelb": r"TEX\.P .*ARRAY_CUBE",
        "cubeg": r"TEX\.B\.NDV\.P .*\bCUBE\b",
        "cubelg": r"TEX\.B\.NDV\.P .*ARRAY_CUBE",
        "cubegb": r"TEX\.NDV\.P .*\bCUBE\b",
        "cubelgb": r"TEX\.NDV\.P .*ARRAY_CUBE",  # (bound: refused before gpu-pools)
    },
}


@pytest.fixture(scope="module")
def built():
    import cuda_build
    import cuda_corpus
    import nvtools

    try:
        out = {isa: cuda_build.build(cuda_corpus.HEADER + SRC, isa, "O3") for isa in (86, 53)}
        out.update({(isa, "G"): cuda_build.build(cuda_corpus.HEADER + SRC, isa, "G") for isa in (86, 53)})
        return out
    except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")


def _isa(isa: int):
    if isa == 53:
        from shader_svc.sm53 import cbank, decode, to_spirv
    else:
        from shader_svc.sm86 import cbank, decode, to_spirv
    return decode, to_spirv, cbank


def disassembly(k, isa: int) -> str:
    return "\n".join(i.text() for i in _isa(isa)[0].decode_stream(k.code))


def translated(k, isa: int) -> bytes:
    decode, to_spirv, _ = _isa(isa)
    return to_spirv.translate_compute(decode.decode_stream(k.code), to_spirv.ComputeSpec((BLOCK, 1, 1), k.banks))


def dispatch(
    env, k, prog: int, isa: int, pool_tex: list[int], a: bytes, b: bytes, bound: bool = False, surfaces=()
) -> np.ndarray:
    """One dispatch of ``k`` (buffers a, b (absent where ``bound``: the handle is the second
    parameter), o; the POOLS packet ``pool_tex``; ``surfaces`` the textures of COMPUTE_SURFACE
    slots 0..); o's words after it."""
    from cpu_host.horizon.hle.nvn.compute import ComputeInfo, driver_words

    params = _isa(isa)[2].PARAMS
    bank = (k.cbank0_size + 15) & ~15
    consts = [(P.OP_COMPUTE_CONST, at, v) for at, v in driver_words(ComputeInfo(isa, (BLOCK, 1, 1), bank), (N // BLOCK, 1, 1))]
    samplers = [P.EMPTY] * P.POOL_SAMPLERS
    samplers[SAMPLER_SLOT] = 62  # env's nearest, clamped sampler (level 0)
    handle = SAMPLER_SLOT << 20 | TEX_SLOT
    cmds = [
        *([(P.OP_POOLS, pool_tex, samplers)] if pool_tex is not None else []),
        *consts,
        (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, len(a), params, False),
        *([] if bound else [(P.OP_COMPUTE_BUFFER, 1, 1, B_OFF, 64, params + 8, False)]),
        (P.OP_COMPUTE_BUFFER, 2, 1, O_OFF, 4 * N, params + 16, True),
        *[(P.OP_COMPUTE_SURFACE, j, t) for j, t in enumerate(surfaces)],
        (P.OP_DISPATCH, prog, N // BLOCK, 1, 1, bank, 5 if bound else 7, 1, PAR_OFF, 28, params),
    ]
    env.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, handle if bound else 0xB, 0xC, N))
    env.pool.write(A_OFF, a)
    env.pool.write(B_OFF, b.ljust(64, b"\0"))
    env.pool.write(O_OFF, bytes(4 * N))
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]
    return np.frombuffer(bytes(env.pool.mm[O_OFF : O_OFF + 4 * N]), np.uint32).copy()


# -- cube maps -------------------------------------------------------------------------------------
def cube_face(d: np.ndarray) -> tuple[int, float, float]:
    """(face, s, t) of direction ``d`` by the Vulkan specification's "Cube Map Face Selection"
    table: the major axis is the component of largest magnitude; face +X: (sc, tc, ma) = (-rz,
    -ry, rx), -X: (rz, -ry, rx), +Y: (rx, rz, ry), -Y: (rx, -rz, ry), +Z: (rx, -ry, rz), -Z: (-rx,
    -ry, rz); s = (sc / |ma| + 1) / 2, t = (tc / |ma| + 1) / 2; faces in layer order +X -X +Y -Y
    +Z -Z."""
    rx, ry, rz = (float(v) for v in d)
    axis = int(np.argmax(np.abs(d)))
    neg = d[axis] < 0
    sc, tc, ma = {
        (0, False): (-rz, -ry, rx),
        (0, True): (rz, -ry, rx),
        (1, False): (rx, rz, ry),
        (1, True): (rx, -rz, ry),
        (2, False): (rx, -ry, rz),
        (2, True): (-rx, -ry, rz),
    }[axis, bool(neg)]
    return 2 * axis + int(neg), (sc / abs(ma) + 1) / 2, (tc / abs(ma) + 1) / 2


def directions(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """N random directions clear of ties (the two largest magnitudes differ by 10 %) and of texel
    edges (s * S, t * S at least 0.1 from an integer), and their (face, row, column) texels."""
    r = np.random.default_rng(seed)
    out, texel = [], []
    while len(out) < N:
        d = r.uniform(-2, 2, 3).astype(np.float32)
        m = np.sort(np.abs(d))
        if m[2] < 0.25 or m[1] > 0.9 * m[2]:
            continue
        f, s, t = cube_face(d)
        if min(abs(s * S - round(s * S)), abs(t * S - round(t * S))) < 0.1:
            continue
        out.append(d)
        texel.append((f, min(int(t * S), S - 1), min(int(s * S), S - 1)))
    return np.array(out, np.float32), np.array(texel)


def want_words(px: np.ndarray) -> np.ndarray:
    return (px[:, 0] - np.float32(2) * px[:, 3]).astype(np.float32).view(np.uint32)


@pytest.mark.parametrize("opt", ["O3", "G"])
@pytest.mark.parametrize("isa", [86, 53])
@pytest.mark.parametrize("name", CUBES)
def test_kernel_samples_a_cube_or_cube_array_of_its_pool(env, built, name, isa, opt):
    """texCubemap / texCubemapLayered (and their Grad forms, ptxas's quad loop; gradients of 0.01:
    level 0) in a kernel read the registered cube (cube array) through the cube (cube array) pool,
    set 1 binding 9 (10).  Before, the translation refused TEX CUBE in a kernel ("kernels have no
    cube pool") and a bound TEX.NDV on a cube array, the GPU process bound no cube pool, and a
    POOLS packet naming a cube was dropped."""
    import re

    k = built[isa if opt == "O3" else (isa, opt)][name]
    text = disassembly(k, isa)
    if opt == "O3":
        assert re.search(FORMS[isa][name], text), text
    array = name.startswith("cubel")
    prog = 900 + 20 * (isa == 53) + 40 * (opt == "G") + CUBES.index(name)
    spv = translated(k, isa)
    env.client.register(ProgramDesc(prog, spv, b""))
    r = np.random.default_rng(len(name) + isa)
    cubes = 2 if array else 1
    texels = (r.integers(-1000, 1000, (6 * cubes, S, S, 4)) / 8).astype(np.float32)
    tid, did = 1400 + prog, 1500 + prog
    env.pool.write(TEX_OFF, texels.tobytes())  # pitch-linear faces, one after another
    env.client.register(
        TextureDesc(tid, 1, TEX_OFF, S, S, "RGBA32F", block_linear=False, pitch=S * 16, layers=6 * cubes, cube=True)
    )
    decoy = (r.integers(-1000, 1000, (6 * cubes, S, S, 4)) / 8).astype(np.float32)
    env.pool.write(DECOY_OFF, decoy.tobytes())
    env.client.register(
        TextureDesc(did, 1, DECOY_OFF, S, S, "RGBA32F", block_linear=False, pitch=S * 16, layers=6 * cubes, cube=True)
    )
    dirs, tx = directions(prog)
    layer = 6 * (np.arange(N) & 1) if array else np.zeros(N, int)
    want = want_words(texels[layer + tx[:, 0], tx[:, 1], tx[:, 2]])
    pool = [P.EMPTY] * P.POOL_TEXTURES
    pool[TEX_SLOT], pool[TEX_SLOT - 1] = tid, did
    handle = struct.pack("<Q", SAMPLER_SLOT << 20 | TEX_SLOT)
    got = dispatch(env, k, prog, isa, pool, dirs.tobytes(), handle, name in BOUND)
    assert np.array_equal(got, want), np.flatnonzero(got != want)[:8]
    # the decoy at the handle's entry: its texels, not the first cube's
    pool[TEX_SLOT], pool[TEX_SLOT - 1] = did, tid
    got = dispatch(env, k, prog, isa, pool, dirs.tobytes(), handle, name in BOUND)
    assert np.array_equal(got, want_words(decoy[layer + tx[:, 0], tx[:, 1], tx[:, 2]]))


def test_wrong_image_types_at_the_cube_pools_refused_by_name(env, built):
    from nxrecomp.common.errors import NxError
    from test_compute_dispatch import _rebind

    spv = translated(built[86]["cube"], 86)
    with pytest.raises(
        NxError,
        match=r"compute program 991: set 1 binding 10 is the CUBE ARRAY texture pool: sampled images \(Dim, Arrayed, "
        r"Sampled\) = \(3, 1, 1\), but the module declares \(3, 0, 1\) there",
    ):
        env.client.register(ProgramDesc(991, _rebind(spv, (1, 9), (1, 10)), b""))
    with pytest.raises(NxError, match=r"compute program 991: uses descriptor set 1 binding 11; the GPU process binds"):
        env.client.register(ProgramDesc(991, _rebind(spv, (1, 9), (1, 11)), b""))
    env.client.register(ProgramDesc(992, spv, b""))  # as translated: served


# -- suq: surfaces as texture-pool entries -----------------------------------------------------------
@pytest.mark.parametrize("isa", [86, 53])
def test_suq_reads_the_size_of_each_bound_surface(env, built, isa):
    """PTX suq.width / .height on a surface object compile to TXQ.B on the texture header pool
    (one pool on NVIDIA); the GPU process puts the surface of COMPUTE_SURFACE slot k at texture-pool
    entry k, so thread i reads the size of the surface of handle i & 3: a 2D 24x10, a layered 16x4
    (3 layers), a 1D 40-texel and a volume 8x6 (2 slices) render target.  Before, TXQ read the
    pools' dummies (1 x 1).  Where the POOLS packet names another texture at the entry, that
    texture stays (documented in compute.surface_headers): its size is read."""
    k = built[isa]["suq"]
    assert "TXQ.B" in disassembly(k, isa)
    prog = 980 + isa
    env.client.register(ProgramDesc(prog, translated(k, isa), b""))
    sizes = [(24, 10, {}), (16, 4, {"layers": 3}), (40, 1, {"one_dim": True}), (8, 6, {"layers": 2, "volume": True})]
    ids = []
    for j, (w, h, kw) in enumerate(sizes):
        tid = 1000 + 10 * isa + j
        env.client.register(
            TextureDesc(tid, 1, SURF_OFF + j * 0x2000, w, h, "RGBA8", block_linear=False, pitch=w * 4, render_target=True, **kw)
        )
        ids.append(tid)
    b = struct.pack("<4Q", 0, 1, 2, 3)  # the surface handles: slots 0..3
    want = np.array([sizes[i & 3][0] + 65536 * sizes[i & 3][1] for i in range(N)], np.uint32)
    got = dispatch(env, k, prog, isa, None, b"\0" * 64, b, surfaces=ids)
    assert np.array_equal(got, want), got[:4]
    # a POOLS packet giving entry 1 another (5 x 7) texture: TXQ on handle 1 reads it
    other = 1000 + 10 * isa + 9
    env.pool.write(DECOY_OFF, bytes(5 * 7 * 16))
    env.client.register(TextureDesc(other, 1, DECOY_OFF, 5, 7, "RGBA32F", block_linear=False, pitch=5 * 16))
    pool = [P.EMPTY] * P.POOL_TEXTURES
    pool[1] = other
    got = dispatch(env, k, prog, isa, pool, b"\0" * 64, b, surfaces=ids)
    want[1::4] = 5 + 65536 * 7
    assert np.array_equal(got, want), got[:4]


# -- 1D textures: W x 1 entries of the 2D pools --------------------------------------------------------
@pytest.mark.parametrize("isa", [86, 53])
def test_1d_textures_are_w_by_1_entries_of_the_2d_pools(env, built, isa):
    """tex1D / tex1DLod / tex1Dfetch (threads 0..63 / 64..127 / 128..191) on a 16 x 1 texture and
    tex1DLayered on a 16 x 1 texture of 3 layers: the GPU process registers them as a W x 1 2D
    texture (2D array) and puts them in the 2D (2D array) pool, where the translation samples
    1D textures (ptxas samples them with 2D instructions); every word is texel i & 15's."""
    from nxrecomp.common import kernel_pools

    assert kernel_pools.TEXTURE_VIEW_POOL == {"1d": "2d", "1d_array": "2d_array"}
    r = np.random.default_rng(isa)
    line = (r.integers(-1000, 1000, (1, W1, 4)) / 8).astype(np.float32)
    layers = (r.integers(-1000, 1000, (L1, 1, W1, 4)) / 8).astype(np.float32)
    one, arr = 1100 + isa, 1200 + isa
    env.pool.write(TEX_OFF, line.tobytes())
    env.client.register(TextureDesc(one, 1, TEX_OFF, W1, 1, "RGBA32F", block_linear=False, pitch=W1 * 16))
    env.pool.write(TEX_OFF + 0x1000, layers.tobytes())
    env.client.register(TextureDesc(arr, 1, TEX_OFF + 0x1000, W1, 1, "RGBA32F", block_linear=False, pitch=W1 * 16, layers=L1))
    i = np.arange(N)
    handle = struct.pack("<Q", SAMPLER_SLOT << 20 | TEX_SLOT)
    for name, tid, px in (("tex1", one, line[0, i & 15]), ("tex1l", arr, layers[(i >> 4) % 3, 0, i & 15])):
        k = built[isa][name]
        prog = 1300 + 10 * isa + (name == "tex1l")
        env.client.register(ProgramDesc(prog, translated(k, isa), b""))
        pool = [P.EMPTY] * P.POOL_TEXTURES
        pool[TEX_SLOT] = tid
        got = dispatch(env, k, prog, isa, pool, b"\0" * 64, handle)
        assert np.array_equal(got, want_words(px)), (name, got[:4])


@pytest.mark.parametrize("isa", [86, 53])
def test_nvn_front_end_registers_a_sampled_1d_texture_a_kernel_samples(env, built, isa, monkeypatch):
    """nvnTextureInitialize with NVN_TEXTURE_TARGET_1D (our nvn.h), width 16, height 1, linear,
    without the render-target flag (refused before: a 1D texture was only a compute surface):
    the front end registers a 16 x 1 texture (not a 1D surface), nvnTexturePoolRegisterTexture's
    entry goes into the POOLS packet the front end records before the dispatch, and the kernel's
    tex1D / tex1DLod / tex1Dfetch read its texels through the 2D pool."""
    from cpu_host.horizon.hle.nvn.objects import Sampler
    from cpu_host.horizon.hle.nvn.tables import FLAG_LINEAR, TARGET_1D
    from test_compute_dispatch import Guest, record_dispatch, targets

    slot = 3
    g = Guest(env, monkeypatch)
    s = g.svc
    k = built[isa]["tex1"]
    prog = g.program(16, isa, k.code, k.cbank0_size)
    line = (np.random.default_rng(isa + 7).integers(-1000, 1000, (W1, 4)) / 8).astype(np.float32)
    off = 0x700000
    g.mem[20] = 1  # the front end's memory pool object (pool 1)
    builder = g.at(21)
    s.builders[builder] = {"format": 7, "width": W1, "height": 1, "flags": FLAG_LINEAR, "target": TARGET_1D}
    s.builders[builder].update(pool=g.at(20), offset=off)
    assert g.call(s.texture_storage_size, builder) == W1 * 16
    g.call(s.texture_initialize, g.at(22), builder)
    tex = s.objects[int(g.mem[22])]
    assert tex.one_dim and tex.height == 1
    env.pool.write(off, line.tobytes())
    s.texture_slots[slot] = tex
    s.sampler_slots[SAMPLER_SLOT] = Sampler(62, False, False)
    surf, _ = targets(env, 14)
    env.pool.write(B_OFF, struct.pack("<Q", SAMPLER_SLOT << 20 | slot).ljust(64, b"\0"))
    env.pool.write(O_OFF, bytes(4 * N))
    env.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, 0xB, 0xC, N))
    cmds = record_dispatch(g, prog, surf, O_OFF)
    pools = [c for c in cmds if c[0] == P.OP_POOLS]
    assert pools and pools[-1][1][slot] == tex.id
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]
    got = np.frombuffer(bytes(env.pool.mm[O_OFF : O_OFF + 4 * N]), np.uint32)
    assert np.array_equal(got, want_words(line[np.arange(N) & 15])), got[:4]


def test_cube_array_pool_refused_by_name_where_the_device_lacks_image_cube_array(built):
    """A device without imageCubeArray cannot make the cube array pool's CUBE_ARRAY views, so the
    GPU process leaves binding 10 out of its layout (``Compute.dim_pools``) and a kernel declaring
    it is refused at registration naming the program, the pool and its binding (before any
    Vulkan object is made; the device here is a stand-in: lavapipe has the feature)."""
    from types import SimpleNamespace

    from gpu_host.compute import TEXTURE_DIM_POOLS, Compute
    from gpu_host.objects import ObjectError

    comp = Compute.__new__(Compute)
    limits = SimpleNamespace(maxComputeWorkGroupSize=[1024] * 3, maxComputeWorkGroupInvocations=1024)
    comp.dev = SimpleNamespace(buffer_device_address=True, limits=limits, name="a device without imageCubeArray")
    comp.dim_pools = {k: v for k, v in TEXTURE_DIM_POOLS.items() if k != "cube_array"}
    for isa in (86, 53):
        with pytest.raises(
            ObjectError,
            match=r"compute program 77: samples the CUBE ARRAY texture pool \(set 1 binding 10\), which a device "
            r"without imageCubeArray cannot bind: a cube array view needs the imageCubeArray feature",
        ):
            comp.register(None, 77, translated(built[isa]["cubel"], isa))
