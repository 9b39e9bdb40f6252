"""Block-linear deswizzle against a reference written here from the public description of the
Tegra X1 GOB: 512 bytes = 64 bytes x 8 rows, whose address bits are, from bit 0:
x[0..3], y[0], x[4], y[1..2], x[5]; GOBs stack vertically into blocks of 2**n GOBs, blocks
run left to right then top to bottom."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_host import blocklinear


def ref_address(xb: int, y: int, width_bytes: int, bh_log2: int) -> int:
    gob_addr = ((xb & 0xF) | ((y & 1) << 4) | (((xb >> 4) & 1) << 5)
                | (((y >> 1) & 3) << 6) | (((xb >> 5) & 1) << 8))
    gobs_high = 1 << bh_log2
    gobs_wide = (width_bytes + 63) // 64
    block_size = 512 * gobs_high
    block_x, block_y = xb // 64, y // (8 * gobs_high)
    gob_in_block = (y // 8) % gobs_high
    return (block_y * gobs_wide + block_x) * block_size + gob_in_block * 512 + gob_addr


def ref_deswizzle(src: bytes, width_bytes: int, height: int, bh_log2: int) -> np.ndarray:
    out = np.zeros((height, width_bytes), np.uint8)
    for y in range(height):
        for x in range(width_bytes):
            out[y, x] = src[ref_address(x, y, width_bytes, bh_log2)]
    return out


def test_known_addresses():
    assert ref_address(16, 0, 64, 0) == 32
    assert ref_address(0, 1, 64, 0) == 16
    assert ref_address(32, 0, 64, 0) == 256
    assert ref_address(0, 2, 64, 0) == 64
    assert ref_address(0, 8, 128, 1) == 512      # second GOB of the block is below the first
    assert ref_address(64, 0, 128, 1) == 1024    # next block to the right
    off = blocklinear._offsets(128, 16, 1)
    assert off[0, 16] == 32 and off[1, 0] == 16 and off[8, 0] == 512 and off[0, 64] == 1024


@pytest.mark.parametrize("bpp", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("bh", [0, 1, 2, 4])
def test_deswizzle_matches_reference(bpp, bh):
    rng = np.random.default_rng(bpp * 10 + bh)
    w = int(rng.integers(1, 40))
    h = int(rng.integers(1, 70))
    wb = w * bpp
    size = blocklinear.size_bytes(wb, h, bh)
    src = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    assert np.array_equal(blocklinear.deswizzle(src, wb, h, bh), ref_deswizzle(src, wb, h, bh))


def test_swizzle_roundtrip_and_padding():
    rng = np.random.default_rng(7)
    lin = rng.integers(0, 256, (37, 100), dtype=np.uint8)
    sw = blocklinear.swizzle(lin, 2)
    assert len(sw) == blocklinear.size_bytes(100, 37, 2) == 2 * 2 * 512 * 4
    assert np.array_equal(blocklinear.deswizzle(sw, 100, 37, 2), lin)


def test_short_source_is_an_error():
    with pytest.raises(ValueError, match="needs 512 bytes"):
        blocklinear.deswizzle(b"\0" * 100, 64, 8, 0)
