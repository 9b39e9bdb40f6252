"""Block-linear volumes (gpu_host/blocklinear.py ``swizzle_3d``/``deswizzle_3d``; PROTOCOL.md
"Compute", volume targets): the 3D GOB layout, whose blocks are ``2**block_height_log2`` GOBs high
and ``2**block_depth_log2`` slices deep.

The reference here is written independently, byte by byte, from the documented formula (the public
Tegra X1 TRM's GOB as Ryujinx's BlockLinearLayout, yuzu's texture decoders and the tegra_swizzle
crate describe it; none of our code is imported for it): a GOB is 64 bytes x 8 rows; inside it
byte (x, y) sits at ``(x%64/32)*256 + (y%8/2)*64 + (x%32/16)*32 + (y%2)*16 + x%16`` (Fermi GOBs,
Switch 1); a block is one GOB wide, ``bh`` GOBs high, ``bd`` slices deep, GOBs of a slice stacked
vertically and the block's slices one after another; blocks run x, then y, then z in slabs of
``bd`` slices: ``slab = ceil(height / (8 bh)) * ceil(width_bytes / 64) * 512 * bh * bd`` and
``offset = (z / bd) * slab + (z % bd) * 512 * bh + (y / (8 bh)) * gobs_x * block + (y / 8 % bh)
* 512 + (x / 64) * block + in_gob(x, y)``.

Through the real processes: a ``surf3Dwrite`` kernel (SM86 and SM53, the shader corpus's tools: a
loud skip where they cannot be fetched) writes every texel of an odd-sized 13x5x3 RGBA8 volume
render target registered block-linear (block height 1 GOB, block depth 2 slices: two slabs, the
second half empty); WRITEBACK puts it into pool memory exactly as the reference swizzles the numpy
expectation, padding zero, the bytes after it untouched.  Mip levels are not modelled (volumes,
like every texture here, have mip 0 only)."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, TextureDesc
from gpu_guest import P, Gpu, compute_kernels, gpu_log

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools

W, H, D = 13, 5, 3  # odd: a partial GOB in x (52 of 64 bytes) and in y (5 of 8 rows)
N = W * H * D
BLOCK = 64
GROUPS = -(-N // BLOCK)
BH, BD = 0, 1  # block: 1 GOB high, 2 slices deep
A_OFF, B_OFF, O_OFF, PAR_OFF, SURF_OFF = 0x400000, 0x410000, 0x420000, 0x430000, 0x500000
SRC_BODY = r"""
K(vol_bl) {
  int i = TID; if (i >= n) return;
  uint32_t w = b[2], h = b[3];
  uint32_t v = a[i] * 7u + 0x01010101u;
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  int x = i % w, y = (i / w) % h, z = i / (w * h);
  o[i] = v;
  surf3Dwrite(v, s, x * 4, y, z);
}
"""


def ref_offset(x: int, y: int, z: int, width_bytes: int, height: int, bh: int, bd: int) -> int:
    """The documented block-linear offset of byte x of row y of slice z (Fermi GOBs)."""
    gobs_high, slices = 1 << bh, 1 << bd
    block = 512 * gobs_high * slices
    gobs_x = -(-width_bytes // 64)
    slab = -(-height // (8 * gobs_high)) * gobs_x * block
    in_gob = (x % 64 // 32) * 256 + (y % 8 // 2) * 64 + (x % 32 // 16) * 32 + (y % 2) * 16 + x % 16
    return (
        (z // slices) * slab
        + (z % slices) * 512 * gobs_high
        + (y // (8 * gobs_high)) * gobs_x * block
        + (y // 8 % gobs_high) * 512
        + (x // 64) * block
        + in_gob
    )


def ref_size(width_bytes: int, height: int, depth: int, bh: int, bd: int) -> int:
    slabs = -(-depth // (1 << bd))
    return slabs * -(-height // (8 << bh)) * -(-width_bytes // 64) * (512 << bh << bd)


def ref_swizzle(vol: np.ndarray, bh: int, bd: int) -> bytes:
    d, h, wb = vol.shape
    out = bytearray(ref_size(wb, h, d, bh, bd))
    for z in range(d):
        for y in range(h):
            for x in range(wb):
                out[ref_offset(x, y, z, wb, h, bh, bd)] = int(vol[z, y, x])
    return bytes(out)


@pytest.mark.parametrize(
    "wb,h,d,bh,bd",
    [(52, 5, 3, 0, 1), (64, 8, 1, 0, 0), (200, 37, 5, 1, 2), (16, 3, 9, 0, 3), (130, 20, 4, 2, 0), (72, 9, 17, 1, 4)],
)
def test_swizzle_3d_matches_the_documented_formula(wb, h, d, bh, bd):
    from gpu_host import blocklinear

    vol = np.random.default_rng(wb * h + d).integers(1, 256, (d, h, wb), dtype=np.uint8)
    want = ref_swizzle(vol, bh, bd)
    assert blocklinear.size_bytes_3d(wb, h, d, bh, bd) == len(want)
    got = blocklinear.swizzle_3d(vol, bh, bd)
    assert got == want
    assert np.array_equal(blocklinear.deswizzle_3d(want, wb, h, d, bh, bd), vol)
    # depth 1, block depth 1: the 2D layout exactly (each slice a 2D surface of its own)
    if bd == 0:
        assert got[: blocklinear.size_bytes(wb, h, bh)] == blocklinear.swizzle(vol[0], bh)
    with pytest.raises(ValueError, match="block-linear volume needs"):
        blocklinear.deswizzle_3d(want[:-1], wb, h, d, bh, bd)


def test_block_depth_puts_slices_of_one_block_next_to_each_other():
    """Slice 1 of a 2-deep block starts one block-height of GOBs after slice 0 (512 bytes for a
    1-GOB block), not after a whole slice of blocks: the layout a 2D stack of slices lacks."""
    from gpu_host import blocklinear

    vol = np.zeros((2, 8, 128), np.uint8)
    vol[1, 0, 0] = 7
    out = np.frombuffer(blocklinear.swizzle_3d(vol, 0, 1), np.uint8)
    assert out[512] == 7 and out.sum() == 7
    assert ref_offset(0, 0, 1, 128, 8, 0, 1) == 512


@pytest.fixture(scope="module")
def kernels():
    """{isa: (SPIR-V, bank size, parameters' offset)} of ``vol_bl`` (O3)."""
    import cuda_corpus

    return {isa: k for (isa, name), k in compute_kernels(cuda_corpus.HEADER + SRC_BODY, BLOCK).items() if name == "vol_bl"}


@pytest.fixture(scope="module")
def env(kernels):
    g = Gpu()
    yield g
    g.close()


@pytest.mark.parametrize("isa", [86, 53])
def test_a_kernel_fills_an_odd_block_linear_volume_and_writeback_swizzles_it(env, kernels, isa):
    from cpu_host.horizon.hle.nvn.compute import ComputeInfo, driver_words

    spv, bank, pat = kernels[isa]
    prog, tex = 470 + isa, 570 + isa
    c = env.client
    c.register(ProgramDesc(prog, spv, b""))
    c.register(
        TextureDesc(
            tex, 1, SURF_OFF, W, H, "RGBA8", block_height_log2=BH, render_target=True, layers=D, volume=True, block_depth_log2=BD
        )
    )
    size = ref_size(W * 4, H, D, BH, BD)
    assert size == 2 * 512 * 2  # two slabs of one 2-slice block
    env.pool.write(SURF_OFF, bytes([0x5A]) * (size + 4096))
    a = np.random.default_rng(isa).integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    env.pool.write(A_OFF, a.tobytes())
    env.pool.write(B_OFF, struct.pack("<QII", 0, W, H).ljust(64, b"\0"))
    env.pool.write(O_OFF, bytes(4 * GROUPS * BLOCK))
    env.pool.write(PAR_OFF, struct.pack("<QQQi", 0xA, 0xB, 0xC, N))
    consts = [(P.OP_COMPUTE_CONST, at, v) for at, v in driver_words(ComputeInfo(isa, (BLOCK, 1, 1), bank), (GROUPS, 1, 1))]
    cmds = [
        *consts,
        (P.OP_COMPUTE_BUFFER, 0, 1, A_OFF, 4 * N, pat, False),
        (P.OP_COMPUTE_BUFFER, 1, 1, B_OFF, 64, pat + 8, False),
        (P.OP_COMPUTE_BUFFER, 2, 1, O_OFF, 4 * GROUPS * BLOCK, pat + 16, True),
        (P.OP_COMPUTE_SURFACE, 0, tex),
        (P.OP_DISPATCH, prog, GROUPS, 1, 1, bank, 7, 1, PAR_OFF, 28, pat),
        (P.OP_WRITEBACK, tex),
    ]
    before = c.dropped()
    c.wait(c.submit(cmds))
    assert c.dropped() == before, gpu_log(env.dir)[-2000:]
    v = (a.astype(np.uint64) * 7 + 0x01010101).astype(np.uint32)
    assert np.array_equal(np.frombuffer(bytes(env.pool.mm[O_OFF : O_OFF + 4 * N]), np.uint32), v)
    vol = v.reshape(D, H, W).view(np.uint8).reshape(D, H, W * 4)
    mem = bytes(env.pool.mm[SURF_OFF : SURF_OFF + size + 4096])
    assert mem[:size] == ref_swizzle(vol, BH, BD)
    assert mem[size:] == bytes([0x5A]) * 4096  # nothing past the volume's blocks


def test_block_depth_is_refused_by_name_where_it_means_nothing(env):
    c = env.client
    with pytest.raises(Exception, match="field block_depth_log2 1 needs a block-linear volume"):
        c.register(TextureDesc(580, 1, SURF_OFF, W, H, "RGBA8", render_target=True, layers=2, block_depth_log2=1))
    with pytest.raises(Exception, match="field block_depth_log2 1 needs a block-linear volume"):
        c.register(
            TextureDesc(
                581,
                1,
                SURF_OFF,
                W,
                H,
                "RGBA8",
                block_linear=False,
                pitch=64,
                render_target=True,
                layers=2,
                volume=True,
                block_depth_log2=1,
            )
        )
    with pytest.raises(Exception, match="field block_depth_log2 6 is above 5"):
        c.register(TextureDesc(582, 1, SURF_OFF, W, H, "RGBA8", render_target=True, layers=2, volume=True, block_depth_log2=6))
    # a block-linear volume's WRITEBACK range is its whole slabs: one running past the pool is dropped
    from test_compute_dispatch import _dropped_with

    c.register(
        TextureDesc(583, 1, (8 << 20) - 1024, W, H, "RGBA8", render_target=True, layers=3, volume=True, block_depth_log2=1)
    )
    _dropped_with(env, [(P.OP_WRITEBACK, 583)], "run past pool 1's end")
