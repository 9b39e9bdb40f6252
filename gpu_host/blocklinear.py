"""Switch (Tegra X1 / Maxwell) block-linear texture layout, 2D, block depth 1.

A GOB is 64 bytes x 8 rows (512 bytes).  Inside a GOB, byte (x, y) lives at
``(x/32)*256 + (y/2)*64 + ((x%32)/16)*32 + (y%2)*16 + x%16`` (x in bytes, divisions floor).
A block is ``2**block_height_log2`` GOBs stacked vertically; blocks are laid out row-major,
``ceil(width_bytes / 64)`` blocks per row.  Facts from the public Tegra X1 TRM description
(and switchbrew); this is our own vectorised formulation.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

GOB_W, GOB_H, GOB_SIZE = 64, 8, 512


def size_bytes(width_bytes: int, height: int, block_height_log2: int) -> int:
    """Bytes a block-linear surface occupies (whole blocks)."""
    bh = GOB_H << block_height_log2
    gobs_x = -(-width_bytes // GOB_W)
    blocks_y = -(-height // bh)
    return blocks_y * gobs_x * (GOB_SIZE << block_height_log2)


@lru_cache(maxsize=64)
def _offsets(width_bytes: int, height: int, block_height_log2: int) -> np.ndarray:
    """Offset of every linear byte (row-major, ``height x width_bytes``) in the swizzled surface."""
    x = np.arange(width_bytes, dtype=np.int64)
    y = np.arange(height, dtype=np.int64)
    gob_x = ((x % 64) // 32) * 256 + ((x % 32) // 16) * 32 + (x % 16)
    gob_y = ((y % 8) // 2) * 64 + (y % 2) * 16
    gobs_per_block = 1 << block_height_log2
    block_bytes = GOB_SIZE * gobs_per_block
    gobs_x = -(-width_bytes // GOB_W)
    col = (x // 64) * block_bytes
    row = (y // (8 * gobs_per_block)) * (gobs_x * block_bytes) + ((y // 8) % gobs_per_block) * GOB_SIZE
    offs = row[:, None] + gob_y[:, None] + col[None, :] + gob_x[None, :]
    offs.setflags(write=False)
    return offs


def deswizzle(src: bytes | memoryview | np.ndarray, width_bytes: int, height: int,
              block_height_log2: int) -> np.ndarray:
    """Linear ``height x width_bytes`` uint8 image from block-linear bytes ``src``."""
    need = size_bytes(width_bytes, height, block_height_log2)
    buf = np.frombuffer(src, dtype=np.uint8) if not isinstance(src, np.ndarray) else src.reshape(-1)
    if buf.size < need:
        raise ValueError(f"block-linear surface needs {need} bytes, got {buf.size}")
    return buf[_offsets(width_bytes, height, block_height_log2)]


def swizzle(linear: np.ndarray, block_height_log2: int) -> bytes:
    """Block-linear bytes of a linear ``height x width_bytes`` uint8 image (padding zero)."""
    h, wb = linear.shape
    out = np.zeros(size_bytes(wb, h, block_height_log2), dtype=np.uint8)
    out[_offsets(wb, h, block_height_log2)] = linear
    return out.tobytes()
