"""1D and 1D array surfaces (issue 31; gpu_host/compute.py, PROTOCOL.md "Compute"): a one-row
colour render target registered with ``one_dim`` is entry k of the 1D surface pool (set 1
binding 3) or, layered, of the 1D array pool (binding 4) when COMPUTE_SURFACE binds it to slot k.
Its R32ui twin is a 1D (array) image, filled from the texture and put back through a buffer
(Vulkan copies no texels between 1D and 2D images).  CUDA-style kernels compiled by the shader
corpus's tools for SM86 and SM53 (``surf1Dwrite`` / ``surf1Dread``, ``surf1DLayeredwrite``;
tests/shader_svc/cuda_build.py: nvcc/NVRTC + ptxas from PyPI, a loud skip where they cannot be
fetched), translated by the shader service, write them through a real GPU process: exact against
numpy after WRITEBACK; stores past the row or past the last layer (cudaBoundaryModeZero) change
nothing; a second dispatch reads what the first left.  A ``one_dim`` texture of two rows, a
volume, a depth format or one that is not a render target is refused by name.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, TextureDesc
from gpu_guest import P, Gpu, compute_kernels, gpu_log

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools

N = BLOCK = 64  # threads: one texel each
LINE_W = N  # the 1D surface: 64 texels
ARR_W, ARR_L = 16, 4  # the 1D array surface: 4 layers of 16 texels
ARR_PITCH = ARR_W * 4 + 32  # a layer is one row; the gap after it stays the guest's
A_OFF, B_OFF, O_OFF, PAR_OFF, SURF_OFF = 0x400000, 0x410000, 0x420000, 0x430000, 0x500000
SRC_BODY = r"""
K(line) {
  int i = TID; if (i >= n) return;
  uint32_t v = a[i] * 3u + 0x11223344u;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  uint32_t old = b[2] ? surf1Dread<uint32_t>(s, i * 4) : 0u;
  o[i] = old;
  surf1Dwrite(v + old, s, i * 4);
  surf1Dwrite(~v, s, (i + 64) * 4, cudaBoundaryModeZero);
}
K(lines) {
  int i = TID; if (i >= n) return;
  uint32_t v = a[i] * 9u + 0x0F0E0D0Cu;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  int x = (i & 15) * 4, l = i >> 4;
  surf1DLayeredwrite(v, s, x, l);
  surf1DLayeredwrite(~v, s, x, l + 4, cudaBoundaryModeZero);
}
"""


@pytest.fixture(scope="module")
def kernels():
    """{(isa, name): (SPIR-V, bank size, parameters' offset)} of ``line`` and ``lines``, SM86 and
    SM53 (O3)."""
    import cuda_corpus

    return compute_kernels(cuda_corpus.HEADER + SRC_BODY, BLOCK)


@pytest.fixture(scope="module")
def env(kernels):
    g = Gpu()
    yield g
    g.close()


def dispatch(gpu: Gpu, isa: int, kernels, name: str, prog: int, tex: int) -> list[tuple]:
    """Compute program ``prog`` (kernel ``name``) registered; the packets of one dispatch writing
    surface ``tex`` through slot 0, and its WRITEBACK."""
    from cpu_host.horizon.hle.nvn.compute import ComputeInfo, driver_words

    spv, bank, pat = kernels[(isa, name)]
    gpu.client.register(ProgramDesc(prog, spv, b""))
    consts = [(P.OP_COMPUTE_CONST, at, v) for at, v in driver_words(ComputeInfo(isa, (BLOCK, 1, 1), bank), (1, 1, 1))]
    return [
        *consts,
        (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, 4 * N, pat, False),
        (P.OP_COMPUTE_BUFFER, 1, 1, B_OFF, 64, pat + 8, False),
        (P.OP_COMPUTE_BUFFER, 2, 1, O_OFF, 4 * N, pat + 16, True),
        (P.OP_COMPUTE_SURFACE, 0, tex),
        (P.OP_DISPATCH, prog, 1, 1, 1, bank, 7, 1, PAR_OFF, 28, pat),
        (P.OP_WRITEBACK, tex),
    ]


def inputs(gpu: Gpu, seed: int, accumulate: bool) -> np.ndarray:
    a = np.random.default_rng(seed).integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    gpu.pool.write(A_OFF, a.tobytes())
    gpu.pool.write(B_OFF, struct.pack("<QI", 0, int(accumulate)).ljust(64, b"\0"))  # handle 0, b[2]
    gpu.pool.write(O_OFF, bytes(4 * N))
    gpu.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, 0xB, 0xC, N))  # guest addresses: replaced
    gpu.pool.write(SURF_OFF, bytes([0x5A]) * 0x1000)
    return a


def submit_ok(gpu: Gpu, cmds: list) -> None:
    before = gpu.client.dropped()
    gpu.client.wait(gpu.client.submit(cmds))
    assert gpu.client.dropped() == before, gpu_log(gpu.dir)[-2000:]


def words(gpu: Gpu, off: int, n: int) -> np.ndarray:
    return np.frombuffer(bytes(gpu.pool.mm[off : off + 4 * n]), "<u4").copy()


def raw(gpu: Gpu, off: int, n: int) -> np.ndarray:
    return np.frombuffer(bytes(gpu.pool.mm[off : off + n]), np.uint8)


@pytest.mark.parametrize("isa", [86, 53])
def test_a_kernel_writes_a_1d_surface_and_a_second_reads_it_back(env, kernels, isa):
    """``surf1Dwrite`` of 64 texels into a 64x1 RGBA8 one_dim target (the 1D pool, a 1D twin):
    WRITEBACK gives exactly a * 3 + 0x11223344; the stores at texels 64..127 land outside the
    row (the bytes after it stay 0x5A); a second dispatch reads each texel as the first left it
    (the twin filled from the texture through the buffer) and adds to it."""
    prog, tex = 700 + isa, 710 + isa
    env.client.register(
        TextureDesc(tex, 1, SURF_OFF, LINE_W, 1, "RGBA8", block_linear=False, pitch=LINE_W * 4, render_target=True, one_dim=True)
    )
    cmds = dispatch(env, isa, kernels, "line", prog, tex)
    a = inputs(env, isa, False)
    submit_ok(env, cmds)
    want = (a.astype(np.uint64) * 3 + 0x11223344).astype(np.uint32)
    assert np.array_equal(words(env, SURF_OFF, LINE_W), want)
    assert (raw(env, SURF_OFF + 4 * LINE_W, 0x1000 - 4 * LINE_W) == 0x5A).all()
    assert not words(env, O_OFF, N).any()  # b[2] = 0: no reads
    b = inputs(env, isa + 1, True)
    env.pool.write(SURF_OFF, want.tobytes())  # the pool as the first WRITEBACK left it
    submit_ok(env, cmds)
    assert np.array_equal(words(env, O_OFF, N), want)  # read through the 1D twin
    second = (b.astype(np.uint64) * 3 + 0x11223344).astype(np.uint32)
    assert np.array_equal(words(env, SURF_OFF, LINE_W), (want.astype(np.uint64) + second).astype(np.uint32))


@pytest.mark.parametrize("isa", [86, 53])
def test_a_kernel_writes_every_layer_of_a_1d_array_surface(env, kernels, isa):
    """``surf1DLayeredwrite`` into a 16-texel, 4-layer one_dim target (the 1D array pool): layer l
    lands at offset + l * pitch (pitch-linear layers: one row each), exact; the gap after each row
    and the bytes past layer 3 (the stores to layers 4..7) stay the guest's."""
    prog, tex = 720 + isa, 730 + isa
    env.client.register(
        TextureDesc(
            tex,
            1,
            SURF_OFF,
            ARR_W,
            1,
            "RGBA8",
            block_linear=False,
            pitch=ARR_PITCH,
            render_target=True,
            layers=ARR_L,
            one_dim=True,
        )
    )
    cmds = dispatch(env, isa, kernels, "lines", prog, tex)
    a = inputs(env, 3 * isa, False)
    submit_ok(env, cmds)
    want = (a.astype(np.uint64) * 9 + 0x0F0E0D0C).astype(np.uint32).reshape(ARR_L, ARR_W)
    mem = raw(env, SURF_OFF, 0x1000)
    rows = mem[: ARR_PITCH * ARR_L].reshape(ARR_L, ARR_PITCH)
    assert np.array_equal(rows[:, : ARR_W * 4].copy().view("<u4"), want)
    assert (rows[:, ARR_W * 4 :] == 0x5A).all()
    assert (mem[ARR_PITCH * ARR_L :] == 0x5A).all()


def test_1d_surfaces_misregistered_or_misbound_are_refused_by_name(env, kernels):
    """A one_dim texture of two rows, a volume, a depth format or not a render target is refused at
    registration naming what is wrong; a one-row 2D target (no one_dim) in slot 0 of a dispatch of
    the 1D kernel is an entry of the 2D pool, not the 1D one: the kernel's stores go to the 1D
    pool's dummy and the target's WRITEBACK gives what it gave before the dispatch."""
    from nxrecomp.common.errors import NxError

    msg = r"a 1D texture is a one-row \(height 1\), one-sample, non-cube, non-volume colour render target"
    bad = [
        dict(height=2),
        dict(render_target=False),
        dict(format="D32F"),
        dict(layers=2, volume=True),
    ]
    for i, over in enumerate(bad):
        kw = dict(height=1, format="RGBA8", render_target=True)
        kw.update(over)
        h, fmt = kw.pop("height"), kw.pop("format")
        with pytest.raises(NxError, match=msg):
            env.client.register(
                TextureDesc(790 + i, 1, SURF_OFF, LINE_W, h, fmt, block_linear=False, pitch=LINE_W * 4, one_dim=True, **kw)
            )
    flat = 799
    env.client.register(
        TextureDesc(flat, 1, SURF_OFF, LINE_W, 1, "RGBA8", block_linear=False, pitch=LINE_W * 4, render_target=True)
    )
    cmds = dispatch(env, 86, kernels, "line", 740, flat)
    inputs(env, 5, False)
    submit_ok(env, [(P.OP_WRITEBACK, flat)])
    before = raw(env, SURF_OFF, 4 * LINE_W).copy()
    env.pool.write(SURF_OFF, bytes([0xA5]) * 4 * LINE_W)
    submit_ok(env, cmds)
    assert np.array_equal(raw(env, SURF_OFF, 4 * LINE_W), before)


def test_nvn_front_end_registers_a_1d_array_texture_a_kernel_writes(env, kernels, monkeypatch):
    """nvnTextureInitialize with NVN_TEXTURE_TARGET_1D_ARRAY (our nvn.h), 4 layers by SetDepth,
    height 1, render-target and linear flags: the front end's Texture is one_dim with its layers
    and the GPU process registers a 1D array target the ``lines`` kernel writes, every layer at
    width * 4 bytes (linear: pitch = a row); a 1D texture of two rows, or a display one, is
    refused by name; a target past NVN_TEXTURE_TARGET_1D_ARRAY likewise.  (gpu-pools: one without
    the render-target flag is a sampled W x 1 texture: tests/gpu_host/test_compute_pools.py.)"""
    from cpu_host.horizon.hle.abi import GuestError
    from cpu_host.horizon.hle.nvn.tables import FLAG_DISPLAY, FLAG_LINEAR, FLAG_RENDER_TARGET, TARGET_1D, TARGET_1D_ARRAY
    from test_compute_dispatch import Guest

    g = Guest(env, monkeypatch)
    s = g.svc
    g.mem[20] = 1
    builder = g.at(21)
    flags = FLAG_RENDER_TARGET | FLAG_LINEAR
    good = {"format": 1, "width": ARR_W, "height": 1, "flags": flags, "target": TARGET_1D_ARRAY, "layers": ARR_L}
    s.builders[builder] = dict(good, pool=g.at(20), offset=SURF_OFF)
    assert g.call(s.texture_storage_size, builder) == ARR_W * 4 * ARR_L
    g.call(s.texture_initialize, g.at(22), builder)
    tex = int(g.mem[22])
    assert s.objects[tex].one_dim and s.objects[tex].layers == ARR_L
    cmds = dispatch(env, 53, kernels, "lines", 750, tex)
    a = inputs(env, 57, False)
    submit_ok(env, cmds)
    want = (a.astype(np.uint64) * 9 + 0x0F0E0D0C).astype(np.uint32)
    assert np.array_equal(words(env, SURF_OFF, N), want)
    assert (raw(env, SURF_OFF + 4 * N, 0x100) == 0x5A).all()
    for bad in ({"height": 2}, {"flags": FLAG_LINEAR | FLAG_DISPLAY}, {"target": TARGET_1D, "height": 2}):
        s.builders[builder].update(good)
        s.builders[builder].update(bad)
        with pytest.raises(GuestError, match="a 1D texture is one row of colour texels"):
            g.call(s.texture_initialize, g.at(23), builder)
    s.builders[builder].update(good, target=TARGET_1D_ARRAY + 1)
    with pytest.raises(GuestError, match=r"target 7 is not one nvn.h defines \(0..6\)"):
        g.call(s.texture_initialize, g.at(23), builder)
