"""Block-linear deswizzle against a reference written here from the public description of the
Tegra X1 GOB: 512 bytes = 64 bytes x 8 rows, whose address bits are, from bit 0:
x[0..3], y[0], x[4], y[1..2], x[5]; GOBs stack vertically into blocks of 2**n GOBs, blocks
run left to right then top to bottom.

The Switch 2's colour surfaces use the GOB of Turing and later GPUs (Mesa NIL's notes describe
it as 16-byte lines): the same 512-byte GOB whose address bits are x[0..3], y[0..1], x[4], y[2],
x[5]; blocks and GOBs within them are arranged as before."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_host import blocklinear


def ref_address(xb: int, y: int, width_bytes: int, bh_log2: int) -> int:
    gob_addr = (xb & 0xF) | ((y & 1) << 4) | (((xb >> 4) & 1) << 5) | (((y >> 1) & 3) << 6) | (((xb >> 5) & 1) << 8)
    gobs_high = 1 << bh_log2
    gobs_wide = (width_bytes + 63) // 64
    block_size = 512 * gobs_high
    block_x, block_y = xb // 64, y // (8 * gobs_high)
    gob_in_block = (y // 8) % gobs_high
    return (block_y * gobs_wide + block_x) * block_size + gob_in_block * 512 + gob_addr


def turing_lines() -> dict[tuple[int, int], int]:
    """(x of a 16-byte line, row) -> its offset in a Turing GOB, as the line table lists them:
    each 256-byte half holds its 32-byte-wide column; inside, the left 16 bytes of rows 0-3,
    the right 16 bytes of rows 0-3, then the same for rows 4-7."""
    table = {}
    for half in range(2):
        for k in range(16):
            x = half * 32 + (16 if (k // 4) % 2 else 0)
            y = k % 4 + 4 * (k // 8)
            table[(x, y)] = half * 256 + k * 16
    return table


def ref_address_turing(xb: int, y: int, width_bytes: int, bh_log2: int) -> int:
    gob_addr = (xb & 0xF) | ((y & 3) << 4) | (((xb >> 4) & 1) << 6) | (((y >> 2) & 1) << 7) | (((xb >> 5) & 1) << 8)
    fermi_base = ref_address(xb, y, width_bytes, bh_log2)
    return fermi_base - (fermi_base & 511) + gob_addr


def ref_deswizzle(src: bytes, width_bytes: int, height: int, bh_log2: int, gob: str = "fermi") -> np.ndarray:
    addr = ref_address_turing if gob == "turing" else ref_address
    out = np.zeros((height, width_bytes), np.uint8)
    for y in range(height):
        for x in range(width_bytes):
            out[y, x] = src[addr(x, y, width_bytes, bh_log2)]
    return out


def test_known_addresses():
    assert ref_address(16, 0, 64, 0) == 32
    assert ref_address(0, 1, 64, 0) == 16
    assert ref_address(32, 0, 64, 0) == 256
    assert ref_address(0, 2, 64, 0) == 64
    assert ref_address(0, 8, 128, 1) == 512  # second GOB of the block is below the first
    assert ref_address(64, 0, 128, 1) == 1024  # next block to the right
    off = blocklinear._offsets(128, 16, 1)
    assert off[0, 16] == 32 and off[1, 0] == 16 and off[8, 0] == 512 and off[0, 64] == 1024


def test_turing_gob_matches_the_line_table():
    """Both references of the Turing GOB, and the vectorised one, agree byte for byte."""
    lines = turing_lines()
    assert sorted(lines.values()) == list(range(0, 512, 16))
    for y in range(8):
        for x in range(64):
            want = lines[(x - x % 16, y)] + x % 16
            assert ref_address_turing(x, y, 64, 0) == want
            assert blocklinear.gob_offset(x, y, "turing") == want
            assert blocklinear.gob_offset(x, y, "fermi") == ref_address(x, y, 64, 0)
    assert ref_address_turing(0, 1, 64, 0) == 16 and ref_address_turing(16, 0, 64, 0) == 64
    assert ref_address_turing(0, 4, 64, 0) == 128 and ref_address_turing(0, 2, 64, 0) == 32


@pytest.mark.parametrize("gob", blocklinear.GOB_KINDS)
@pytest.mark.parametrize("bpp", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("bh", [0, 1, 2, 4])
def test_deswizzle_matches_reference(bpp, bh, gob):
    rng = np.random.default_rng(bpp * 10 + bh)
    w = int(rng.integers(1, 40))
    h = int(rng.integers(1, 70))
    wb = w * bpp
    size = blocklinear.size_bytes(wb, h, bh)
    src = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    assert np.array_equal(blocklinear.deswizzle(src, wb, h, bh, gob), ref_deswizzle(src, wb, h, bh, gob))


@pytest.mark.parametrize("gob", blocklinear.GOB_KINDS)
def test_swizzle_roundtrip_and_padding(gob):
    rng = np.random.default_rng(7)
    lin = rng.integers(0, 256, (37, 100), dtype=np.uint8)
    sw = blocklinear.swizzle(lin, 2, gob)
    assert len(sw) == blocklinear.size_bytes(100, 37, 2) == 2 * 2 * 512 * 4
    assert np.array_equal(blocklinear.deswizzle(sw, 100, 37, 2, gob), lin)


def test_the_two_kinds_differ_and_unknown_kinds_are_refused():
    lin = np.arange(64 * 8, dtype=np.uint32).astype(np.uint8).reshape(8, 64)
    assert blocklinear.swizzle(lin, 0, "fermi") != blocklinear.swizzle(lin, 0, "turing")
    with pytest.raises(ValueError, match="GOB kind 'kepler'"):
        blocklinear.swizzle(lin, 0, "kepler")


def test_short_source_is_an_error():
    with pytest.raises(ValueError, match="needs 512 bytes"):
        blocklinear.deswizzle(b"\0" * 100, 64, 8, 0)
