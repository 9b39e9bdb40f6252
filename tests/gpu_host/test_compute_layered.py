"""Layered surfaces (issue 31; gpu_host/compute.py, PROTOCOL.md "Compute"): a layered colour
render target is entry k of the 2D array surface pool (set 1 binding 5) when COMPUTE_SURFACE binds
it to slot k.  A CUDA-style kernel compiled by the shader corpus's tools for SM86 and SM53
(``surf2DLayeredread`` / ``surf2DLayeredwrite``; tests/shader_svc/cuda_build.py: nvcc/NVRTC +
ptxas from PyPI, a loud skip where they cannot be fetched), translated by the shader service's
translators, writes every layer of a 16x4x3 RGBA8 target and WRITEBACK puts every layer at its
layer stride into pool memory: exact against numpy.  Its stores to layers past the third (with
cudaBoundaryModeZero) land outside the image and change nothing (a sentinel after the texture's
bytes stays).  A second dispatch reads what the first left in each layer and adds to it.  A
layered target bound as a draw target (TARGET, RENDER_TARGETS, DEPTH_TARGET's colour) or
PRESENTed is dropped by name while the process goes on serving; a killed GPU process is replaced
and the client's replay of the layered texture, the program and the pending submission gives the
same words.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, SamplerDesc, TextureDesc
from gpu_guest import P, Gpu, compute_kernels, gpu_log

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools

W, H, LAYERS = 16, 4, 3  # the surface: one texel per thread, 64 threads a layer
N = W * H * LAYERS
BLOCK = 64
PITCH = W * 4 + 64  # rows with a gap: WRITEBACK writes rows only, the gap stays the guest's
A_OFF, B_OFF, O_OFF, PAR_OFF, SURF_OFF = 0x400000, 0x410000, 0x420000, 0x430000, 0x500000
LAYER_STRIDE = PITCH * H  # pitch-linear layers: whole rows one after another (PROTOCOL.md)
SRC_BODY = r"""
K(layered) {
  int i = TID; if (i >= n) return;
  uint32_t v = a[i] * 5u + 0x0A0B0C0Du;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  int x = (i & 15) * 4, y = (i >> 4) & 3, l = i >> 6;
  uint32_t old = b[2] ? surf2DLayeredread<uint32_t>(s, x, y, l) : 0u;
  o[i] = old;
  surf2DLayeredwrite(v + old, s, x, y, l);
  surf2DLayeredwrite(~v, s, x, y, l + 3, cudaBoundaryModeZero);
}
K(volume) {
  int i = TID; if (i >= n) return;
  uint32_t v = a[i] * 7u + 0x01010101u;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  int x = (i & 15) * 4, y = (i >> 4) & 3, z = i >> 6;
  surf3Dwrite(v, s, x, y, z);
  surf3Dwrite(~v, s, x, y, z + 3, cudaBoundaryModeZero);
}
"""


def values(a: np.ndarray) -> np.ndarray:
    return (a.astype(np.uint64) * 5 + 0x0A0B0C0D).astype(np.uint32)


@pytest.fixture(scope="module")
def kernels():
    """{isa: (SPIR-V, bank size, parameters' offset)} of ``layered`` for SM86 and SM53 (O3), and
    {(isa, "volume"): ...} of ``volume``."""
    import cuda_corpus

    built = compute_kernels(cuda_corpus.HEADER + SRC_BODY, BLOCK)
    return {isa if name == "layered" else (isa, name): k for (isa, name), k in built.items()}


@pytest.fixture(scope="module")
def env(kernels):
    g = Gpu()
    yield g
    g.close()


def register(gpu: Gpu, isa: int, kernels, prog: int, tex: int, texture: bool = True, volume: bool = False) -> list[tuple]:
    """Compute program ``prog`` and (``texture``) the layered target ``tex`` (``volume``: the 3D
    target and the ``volume`` kernel); the packets of one dispatch writing it and its WRITEBACK."""
    from cpu_host.horizon.hle.nvn.compute import ComputeInfo, driver_words

    spv, bank, pat = kernels[(isa, "volume") if volume else isa]
    c = gpu.client
    c.register(ProgramDesc(prog, spv, b""))
    if texture:
        c.register(
            TextureDesc(
                tex, 1, SURF_OFF, W, H, "RGBA8", block_linear=False, pitch=PITCH, render_target=True, layers=LAYERS, volume=volume
            )
        )
    consts = [(P.OP_COMPUTE_CONST, at, v) for at, v in driver_words(ComputeInfo(isa, (BLOCK, 1, 1), bank), (N // BLOCK, 1, 1))]
    return [
        *consts,
        (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, 4 * N, pat, False),
        (P.OP_COMPUTE_BUFFER, 1, 1, B_OFF, 64, pat + 8, False),
        (P.OP_COMPUTE_BUFFER, 2, 1, O_OFF, 4 * N, pat + 16, True),
        (P.OP_COMPUTE_SURFACE, 0, tex),
        (P.OP_DISPATCH, prog, N // BLOCK, 1, 1, bank, 7, 1, PAR_OFF, 28, pat),
        (P.OP_WRITEBACK, tex),
    ]


def inputs(gpu: Gpu, seed: int, accumulate: bool) -> np.ndarray:
    a = np.random.default_rng(seed).integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    gpu.pool.write(A_OFF, a.tobytes())
    gpu.pool.write(B_OFF, struct.pack("<QI", 0, int(accumulate)).ljust(64, b"\0"))  # handle 0, b[2]
    gpu.pool.write(O_OFF, bytes(4 * N))
    gpu.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, 0xB, 0xC, N))  # guest addresses: replaced
    return a


def surface(gpu: Gpu, pitch: int = PITCH) -> np.ndarray:
    """The layers as WRITEBACK left them in the pool: (layers, rows, texels) of 32-bit words."""
    raw = np.frombuffer(bytes(gpu.pool.mm[SURF_OFF : SURF_OFF + pitch * H * LAYERS]), np.uint8)
    return raw.reshape(LAYERS, H, pitch)[:, :, : W * 4].copy().view("<u4")


def clear_pool(gpu: Gpu) -> None:
    gpu.pool.write(SURF_OFF, bytes([0x5A]) * (LAYER_STRIDE * (LAYERS + 2)))


def submit_ok(gpu: Gpu, cmds: list) -> None:
    before = gpu.client.dropped()
    gpu.client.wait(gpu.client.submit(cmds))
    assert gpu.client.dropped() == before, gpu_log(gpu.dir)[-2000:]


@pytest.mark.parametrize("isa", [86, 53])
def test_a_kernel_writes_every_layer_and_writeback_puts_each_at_its_stride(env, kernels, isa):
    prog, tex = 400 + isa, 500 + isa
    cmds = register(env, isa, kernels, prog, tex)
    clear_pool(env)
    a = inputs(env, isa, False)
    submit_ok(env, cmds)
    want = values(a).reshape(LAYERS, H, W)  # thread i: layer i >> 6, row (i >> 4) & 3, column i & 15
    assert np.array_equal(surface(env), want)
    mem = np.frombuffer(bytes(env.pool.mm[SURF_OFF : SURF_OFF + LAYER_STRIDE * (LAYERS + 2)]), np.uint8)
    gaps = mem[: LAYER_STRIDE * LAYERS].reshape(LAYERS, H, PITCH)[:, :, W * 4 :]
    assert (gaps == 0x5A).all()  # the bytes between rows are the guest's
    assert (mem[LAYER_STRIDE * LAYERS :] == 0x5A).all()  # layers 3, 4: no texture, nothing written
    assert not np.any(np.frombuffer(bytes(env.pool.mm[O_OFF : O_OFF + 4 * N]), np.uint32))  # b[2] = 0: no reads
    # WRITEBACKs alone (a submission the C native replay would take: it hands it to Python, which
    # copies every layer) put every layer in place again; a one-layer target first, so the layered
    # one's read-back lies elsewhere in the read-back buffer than the last submission's
    flat = 600 + isa
    env.client.register(TextureDesc(flat, 1, 0x640000, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
    clear_pool(env)
    submit_ok(env, [(P.OP_WRITEBACK, flat), (P.OP_WRITEBACK, tex)])
    assert np.array_equal(surface(env), want)
    # a second dispatch reads each layer as the first left it (the twin copied in and out whole)
    b = inputs(env, isa + 1, True)
    submit_ok(env, cmds)
    assert np.array_equal(np.frombuffer(bytes(env.pool.mm[O_OFF : O_OFF + 4 * N]), np.uint32), want.ravel())
    assert np.array_equal(surface(env), (want.astype(np.uint64) + values(b).reshape(LAYERS, H, W)).astype(np.uint32))


def test_layered_targets_are_surfaces_only_named_where_drawn_or_presented(env, kernels):
    from test_compute_dispatch import _dropped_with

    prog, tex, flat, cube = 410, 510, 511, 512
    cmds = register(env, 86, kernels, prog, tex)
    c = env.client
    c.register(TextureDesc(flat, 1, 0x600000, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
    c.register(TextureDesc(cube, 1, 0x610000, 8, 8, "RGBA8", block_linear=False, pitch=32, layers=6, cube=True))
    layered = f"is a layered render target ({LAYERS} layers): it is a surface pool entry"
    # (gfx-layers: a layered target is now drawn into with all its layers: tests/gpu_host/test_gpu_layered.py)
    cases = [
        ([(P.OP_RENDER_TARGETS, [flat, tex] + [P.EMPTY] * 6, P.EMPTY)], "the colour targets' layer counts differ"),
        ([(P.OP_PRESENT, 1, tex)], f"field texture = {tex} {layered}"),
        ([(P.OP_COMPUTE_SURFACE, 0, cube)], f"field texture {cube} (RGBA8, 1 sample(s), 6 layer(s)) is not a one-sample"),
    ]
    for bad, msg in cases:
        _dropped_with(env, bad, msg)
    with pytest.raises(Exception, match="a render target is not a cube and a layered one is a colour format"):
        c.register(TextureDesc(513, 1, 0x620000, 8, 8, "RGBA8", layers=6, cube=True, render_target=True))
    # and a good dispatch still runs, exactly
    clear_pool(env)
    a = inputs(env, 77, False)
    submit_ok(env, cmds)
    assert np.array_equal(surface(env), values(a).reshape(LAYERS, H, W))


def test_a_killed_gpu_process_is_replaced_and_the_layered_dispatch_replayed(env, kernels):
    """SIGSTOP the GPU process, submit the layered dispatch, SIGKILL it, start another on the same
    sockets: the client registers the layered texture and the program again and rewrites the
    pending submission, whose write-back puts every layer in place."""
    prog, tex = 420, 520
    cmds = register(env, 86, kernels, prog, tex)
    clear_pool(env)
    a = inputs(env, 321, False)
    env.submit_to_a_replaced_process(cmds)
    assert np.array_equal(surface(env), values(a).reshape(LAYERS, H, W))


def test_nvn_front_end_registers_a_layered_render_target_a_kernel_writes(env, kernels, monkeypatch):
    """nvnTextureInitialize of a builder with NVN_TEXTURE_TARGET_2D_ARRAY (nvn.h), 3 layers by
    nvnTextureBuilderSetDepth and the render-target and linear flags: the front end's Texture holds
    its layers and the GPU process registers a layered target (pitch w * 4, layers one after
    another) that a dispatch writes and WRITEBACK puts in place.  The display flag with layers, or
    a layered depth format, is refused by name."""
    from cpu_host.horizon.hle.abi import GuestError
    from cpu_host.horizon.hle.nvn.tables import FLAG_DISPLAY, FLAG_LINEAR, FLAG_RENDER_TARGET, FORMATS
    from test_compute_dispatch import Guest

    g = Guest(env, monkeypatch)
    s = g.svc
    g.mem[20] = 1  # the memory pool object's id, as the builder's storage names it
    builder = g.at(21)
    flags = FLAG_RENDER_TARGET | FLAG_LINEAR
    s.builders[builder] = {"format": 1, "width": W, "height": H, "flags": flags, "target": 1, "layers": LAYERS}
    s.builders[builder].update(pool=g.at(20), offset=SURF_OFF)
    assert g.call(s.texture_storage_size, builder) == W * 4 * H * LAYERS
    g.call(s.texture_initialize, g.at(22), builder)
    tex = int(g.mem[22])
    assert s.objects[tex].layers == LAYERS
    cmds = register(env, 86, kernels, 430, tex, texture=False)
    clear_pool(env)
    a = inputs(env, 55, False)
    submit_ok(env, cmds)
    assert np.array_equal(surface(env, W * 4), values(a).reshape(LAYERS, H, W))
    d32f = next(k for k, v in FORMATS.items() if v[0] == "D32F")
    for bad in ({"flags": flags | FLAG_DISPLAY}, {"format": d32f}):
        s.builders[builder].update(flags=flags, format=1)
        s.builders[builder].update(bad)
        with pytest.raises(GuestError, match="a layered one is a colour, non-display texture"):
            g.call(s.texture_initialize, g.at(23), builder)


@pytest.mark.parametrize("isa", [86, 53])
def test_a_kernel_writes_every_slice_of_a_volume_target(env, kernels, isa):
    """``surf3Dwrite`` into a 16x4x3 volume (3D) render target: the 3D surface pool (set 1
    binding 6) entry, a 3D R32ui twin; WRITEBACK puts slice z at offset + z * pitch * rows, exact;
    stores to slices 3..5 dropped (the bytes past the last slice stay); WRITEBACKs alone (the native
    replay hands them to Python) write every slice too."""
    prog, tex, flat = 440 + isa, 540 + isa, 640 + isa
    cmds = register(env, isa, kernels, prog, tex, volume=True)
    clear_pool(env)
    a = inputs(env, 7 * isa, False)
    submit_ok(env, cmds)
    want = (a.astype(np.uint64) * 7 + 0x01010101).astype(np.uint32).reshape(LAYERS, H, W)
    assert np.array_equal(surface(env), want)
    mem = np.frombuffer(bytes(env.pool.mm[SURF_OFF : SURF_OFF + LAYER_STRIDE * (LAYERS + 2)]), np.uint8)
    assert (mem[: LAYER_STRIDE * LAYERS].reshape(LAYERS, H, PITCH)[:, :, W * 4 :] == 0x5A).all()
    assert (mem[LAYER_STRIDE * LAYERS :] == 0x5A).all()  # slices 3, 4: outside the image
    env.client.register(TextureDesc(flat, 1, 0x640000, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
    clear_pool(env)
    submit_ok(env, [(P.OP_WRITEBACK, flat), (P.OP_WRITEBACK, tex)])
    assert np.array_equal(surface(env), want)


def test_volume_targets_are_surfaces_only_named_where_sampled_drawn_or_misdeclared(env, kernels):
    from test_compute_dispatch import _dropped_with

    cmds = register(env, 86, kernels, 450, 550, volume=True)
    volume = "is a volume (3D) texture (3 slices): it is a 3D surface pool entry or a bound 3D texture"
    cases = [
        ([(P.OP_TARGET, 550)], f"field texture = 550 {volume}"),
        ([(P.OP_PRESENT, 1, 550)], f"field texture = 550 {volume}"),
    ]
    env.client.register(SamplerDesc(62))
    for bad, msg in cases:
        _dropped_with(env, bad, msg)
    with pytest.raises(Exception, match="a volume \\(3D\\) texture is a one-sample, uncompressed colour texture"):
        env.client.register(TextureDesc(551, 1, SURF_OFF, W, H, "RGBA8", render_target=True, layers=2, volume=True, samples=4))
    # (gfx-layers: a volume that is no render target is a sampled 3D texture; a compressed one is refused)
    with pytest.raises(Exception, match="a volume \\(3D\\) texture is a one-sample, uncompressed colour texture"):
        env.client.register(TextureDesc(552, 1, SURF_OFF, W, H, "BC1", block_linear=False, pitch=64, layers=2, volume=True))
    # and the good dispatch still runs, exactly
    clear_pool(env)
    a = inputs(env, 78, False)
    submit_ok(env, cmds)
    assert np.array_equal(surface(env), (a.astype(np.uint64) * 7 + 0x01010101).astype(np.uint32).reshape(LAYERS, H, W))


def test_nvn_front_end_registers_a_3d_texture_a_kernel_writes(env, kernels, monkeypatch):
    """nvnTextureInitialize with NVN_TEXTURE_TARGET_3D (nvn.h), 3 slices by SetDepth, linear and
    render-target flags: a volume target the ``volume`` kernel writes, every slice written back;
    without the linear flag a block-linear volume with a block depth; a 3D texture that is no
    display texture is refused by name (one that is no render target is a sampled 3D texture:
    tests/shader_svc/test_tex3d_gpu.py)."""
    from cpu_host.horizon.hle.abi import GuestError
    from cpu_host.horizon.hle.nvn.tables import FLAG_DISPLAY, FLAG_LINEAR, FLAG_RENDER_TARGET, TARGET_3D
    from test_compute_dispatch import Guest

    g = Guest(env, monkeypatch)
    s = g.svc
    g.mem[20] = 1
    builder = g.at(21)
    flags = FLAG_RENDER_TARGET | FLAG_LINEAR
    s.builders[builder] = {"format": 1, "width": W, "height": H, "flags": flags, "target": TARGET_3D, "layers": LAYERS}
    s.builders[builder].update(pool=g.at(20), offset=SURF_OFF)
    g.call(s.texture_initialize, g.at(22), builder)
    tex = int(g.mem[22])
    assert s.objects[tex].volume and s.objects[tex].layers == LAYERS
    cmds = register(env, 53, kernels, 460, tex, texture=False, volume=True)
    clear_pool(env)
    a = inputs(env, 56, False)
    submit_ok(env, cmds)
    assert np.array_equal(surface(env, W * 4), (a.astype(np.uint64) * 7 + 0x01010101).astype(np.uint32).reshape(LAYERS, H, W))
    # without the linear flag: block-linear, blocks 1 GOB high (4 rows) and 4 slices deep (3 slices),
    # one slab; the storage size the builder reports is that block's (test_compute_volume_bl.py
    # checks the layout itself)
    s.builders[builder].update(flags=FLAG_RENDER_TARGET)
    assert g.call(s.texture_storage_size, builder) == 512 * 4
    g.call(s.texture_initialize, g.at(23), builder)
    desc = env.client.registry.objects[("TextureDesc", int(g.mem[23]))]
    assert desc.volume and desc.block_linear and (desc.block_height_log2, desc.block_depth_log2) == (0, 2)
    s.builders[builder].update(flags=FLAG_LINEAR | FLAG_DISPLAY)
    with pytest.raises(GuestError, match="a 3D texture is an uncompressed colour texture, not display"):
        g.call(s.texture_initialize, g.at(24), builder)
