"""Block-linear texture layouts of the two Switch generations: 2D surfaces and 3D volumes (block depth, below).

A GOB is 64 bytes x 8 rows (512 bytes) made of 32-byte sectors (16 bytes x 2 rows); the GOB
kinds differ only in where a byte sits inside its GOB (x in bytes, divisions floor):

- ``fermi`` (Switch 1, Tegra X1 / Maxwell; every colour format of Fermi..Pascal):
  ``(x/32)*256 + (y%8/2)*64 + (x%32/16)*32 + (y%2)*16 + x%16``;
- ``turing`` (Switch 2's Ampere colour surfaces; Turing and later): the two 16-byte columns of
  a 32-byte half each hold four rows in a row, ``(x/32)*256 + (y%8/4)*128 + (x%32/16)*64 +
  (y%4)*16 + x%16``.

A block is ``2**block_height_log2`` GOBs stacked vertically; blocks are laid out row-major,
``ceil(width_bytes / 64)`` blocks per row, the same for both kinds.  Facts from the public
Tegra X1 TRM description, switchbrew, and Mesa's NIL (nouveau) tiling notes; this is our own
vectorised formulation.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

GOB_W, GOB_H, GOB_SIZE = 64, 8, 512
GOB_KINDS = ("fermi", "turing")
GENERATION_GOB = {"switch1": "fermi", "switch2": "turing"}  # a console's colour surfaces


def size_bytes(width_bytes: int, height: int, block_height_log2: int) -> int:
    """Bytes a block-linear surface occupies (whole blocks)."""
    bh = GOB_H << block_height_log2
    gobs_x = -(-width_bytes // GOB_W)
    blocks_y = -(-height // bh)
    return blocks_y * gobs_x * (GOB_SIZE << block_height_log2)


def gob_offset(x: int, y: int, gob: str = "fermi") -> int:
    """Offset of byte ``x`` (0..63) of row ``y`` (0..7) inside one GOB of kind ``gob``."""
    if gob == "turing":
        return (x // 32) * 256 + (y // 4) * 128 + ((x % 32) // 16) * 64 + (y % 4) * 16 + x % 16
    if gob == "fermi":
        return (x // 32) * 256 + (y // 2) * 64 + ((x % 32) // 16) * 32 + (y % 2) * 16 + x % 16
    raise ValueError(f"GOB kind {gob!r} (known: {', '.join(GOB_KINDS)})")


@lru_cache(maxsize=len(GOB_KINDS))
def _gob_table(gob: str) -> np.ndarray:
    """``gob_offset`` of every byte of one GOB, 8 rows x 64 bytes."""
    return np.array([[gob_offset(x, y, gob) for x in range(GOB_W)] for y in range(GOB_H)], np.int64)


@lru_cache(maxsize=64)
def _offsets(width_bytes: int, height: int, block_height_log2: int, gob: str = "fermi") -> np.ndarray:
    """Offset of every linear byte (row-major, ``height x width_bytes``) in the swizzled surface."""
    x = np.arange(width_bytes, dtype=np.int64)
    y = np.arange(height, dtype=np.int64)
    in_gob = _gob_table(gob)
    gobs_per_block = 1 << block_height_log2
    block_bytes = GOB_SIZE * gobs_per_block
    gobs_x = -(-width_bytes // GOB_W)
    col = (x // 64) * block_bytes
    row = (y // (8 * gobs_per_block)) * (gobs_x * block_bytes) + ((y // 8) % gobs_per_block) * GOB_SIZE
    offs = row[:, None] + col[None, :] + in_gob[(y % 8)[:, None], (x % 64)[None, :]]
    offs.setflags(write=False)
    return offs


def deswizzle(
    src: bytes | memoryview | np.ndarray, width_bytes: int, height: int, block_height_log2: int, gob: str = "fermi"
) -> np.ndarray:
    """Linear ``height x width_bytes`` uint8 image from block-linear bytes ``src``."""
    need = size_bytes(width_bytes, height, block_height_log2)
    buf = np.frombuffer(src, dtype=np.uint8) if not isinstance(src, np.ndarray) else src.reshape(-1)
    if buf.size < need:
        raise ValueError(f"block-linear surface needs {need} bytes, got {buf.size}")
    return buf[_offsets(width_bytes, height, block_height_log2, gob)]


def swizzle(linear: np.ndarray, block_height_log2: int, gob: str = "fermi") -> bytes:
    """Block-linear bytes of a linear ``height x width_bytes`` uint8 image (padding zero)."""
    h, wb = linear.shape
    out = np.zeros(size_bytes(wb, h, block_height_log2), dtype=np.uint8)
    out[_offsets(wb, h, block_height_log2, gob)] = linear
    return out.tobytes()


# -- 3D (volume) surfaces: blocks that are also ``2**block_depth_log2`` slices deep ------------------
#
# Facts (the public Tegra X1 TRM's block-linear description as Ryujinx's BlockLinearLayout, yuzu's
# texture decoders and the tegra_swizzle crate document it): a block is one GOB wide,
# ``2**block_height_log2`` GOBs high and ``2**block_depth_log2`` slices deep; inside a block the
# GOBs of one slice are stacked vertically and the slices follow one another (slice ``z % depth``
# starts ``(z % depth) * gobs_high * 512`` bytes into the block); blocks run x-fastest, then y,
# then z: a *slab* of ``2**block_depth_log2`` slices is ``ceil(height / (8 << bh))`` rows of
# ``ceil(width_bytes / 64)`` blocks, and slab ``z >> bd`` starts at ``(z >> bd) * slab_bytes``.
# With ``block_depth_log2 = 0`` every slice is a 2D surface of its own, ``size_bytes`` apart.


def size_bytes_3d(width_bytes: int, height: int, depth: int, block_height_log2: int, block_depth_log2: int) -> int:
    """Bytes a block-linear volume occupies (whole blocks, every slab)."""
    slabs = -(-depth // (1 << block_depth_log2))
    return slabs * (size_bytes(width_bytes, height, block_height_log2) << block_depth_log2)


@lru_cache(maxsize=16)
def _offsets_3d(
    width_bytes: int, height: int, depth: int, block_height_log2: int, block_depth_log2: int, gob: str = "fermi"
) -> np.ndarray:
    """Offset of every linear byte (``depth x height x width_bytes``, row-major) in the volume."""
    gobs_high, slices = 1 << block_height_log2, 1 << block_depth_log2
    block_bytes = GOB_SIZE * gobs_high * slices
    gobs_x = -(-width_bytes // GOB_W)
    slab_bytes = -(-height // (GOB_H * gobs_high)) * gobs_x * block_bytes
    x = np.arange(width_bytes, dtype=np.int64)
    y = np.arange(height, dtype=np.int64)
    z = np.arange(depth, dtype=np.int64)
    zoff = (z >> block_depth_log2) * slab_bytes + (z & (slices - 1)) * (GOB_SIZE * gobs_high)
    yoff = (y // (GOB_H * gobs_high)) * (gobs_x * block_bytes) + ((y // GOB_H) % gobs_high) * GOB_SIZE
    xoff = (x // GOB_W) * block_bytes
    in_gob = _gob_table(gob)[(y % GOB_H)[:, None], (x % GOB_W)[None, :]]
    offs = zoff[:, None, None] + (yoff[:, None] + xoff[None, :] + in_gob)[None]
    offs.setflags(write=False)
    return offs


def deswizzle_3d(
    src: bytes | memoryview | np.ndarray,
    width_bytes: int,
    height: int,
    depth: int,
    block_height_log2: int,
    block_depth_log2: int,
    gob: str = "fermi",
) -> np.ndarray:
    """Linear ``depth x height x width_bytes`` uint8 volume from block-linear bytes ``src``."""
    need = size_bytes_3d(width_bytes, height, depth, block_height_log2, block_depth_log2)
    buf = np.frombuffer(src, dtype=np.uint8) if not isinstance(src, np.ndarray) else src.reshape(-1)
    if buf.size < need:
        raise ValueError(f"block-linear volume needs {need} bytes, got {buf.size}")
    return buf[_offsets_3d(width_bytes, height, depth, block_height_log2, block_depth_log2, gob)]


def swizzle_3d(linear: np.ndarray, block_height_log2: int, block_depth_log2: int, gob: str = "fermi") -> bytes:
    """Block-linear bytes of a linear ``depth x height x width_bytes`` uint8 volume (padding zero)."""
    d, h, wb = linear.shape
    out = np.zeros(size_bytes_3d(wb, h, d, block_height_log2, block_depth_log2), dtype=np.uint8)
    out[_offsets_3d(wb, h, d, block_height_log2, block_depth_log2, gob)] = linear
    return out.tobytes()
