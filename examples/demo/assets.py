"""The demo's assets, made at build time by code (nothing drawn by hand, nothing copied):
textures as the game reads them from the RomFS — a 20-byte header (magic "NXTX", width,
height, NVN format code of examples/horizon_hello/sdk/nvn.h, byte count) then the texels in the
Switch block-linear layout with the block height the CPU host's NVN front end assigns — and the
shaders."""
from __future__ import annotations

import struct

import numpy as np

from cpu_host.horizon.hle.nvn.frontend import block_height_log2
from gpu_host import blocklinear

TEX_MAGIC = 0x5854584E          # "NXTX"
FORMAT_RGBA8 = 1
# 3x5 digit glyphs, one string of 15 bits (rows top to bottom) per digit
DIGITS = ["111101101101111", "010110010010111", "111001111100111", "111001111001111", "101101111001001",
          "111100111001111", "111100111101111", "111001001001001", "111101111101111", "111101111001111"]


def texture_file(rgba: np.ndarray) -> bytes:
    h, w, _ = rgba.shape
    data = blocklinear.swizzle(rgba.reshape(h, w * 4).astype(np.uint8), block_height_log2(h))
    return struct.pack("<5I", TEX_MAGIC, w, h, FORMAT_RGBA8, len(data)) + data


def floor_texture() -> np.ndarray:
    y, x = np.mgrid[0:64, 0:64]
    checker = ((x // 16 + y // 16) & 1).astype(np.int32)
    noise = ((x * 7919 + y * 104729) * 2654435761 >> 8) & 15        # integer hash: same bytes everywhere
    g = 120 + 40 * checker + noise
    return np.stack([g // 3, g, g // 3 + 20, np.full_like(g, 255)], -1).clip(0, 255)


def font_texture() -> np.ndarray:
    img = np.zeros((8, 80, 4), np.int32)
    for d, bits in enumerate(DIGITS):
        for r in range(5):
            for c in range(3):
                if bits[r * 3 + c] == "1":
                    img[1 + r, d * 8 + 2 + c] = (255, 255, 255, 255)
    return img


def orb_texture() -> np.ndarray:
    y, x = np.mgrid[0:16, 0:16]
    ring = (((x - 8) ** 2 + (y - 8) ** 2) // 12) & 1
    v = 200 + 55 * ring
    return np.stack([v, v, v, np.full_like(v, 255)], -1)


def romfs_files(shader_files: dict[str, bytes]) -> dict[str, bytes]:
    white = np.full((8, 8, 4), 255, np.int32)
    return {"/textures/floor.tex": texture_file(floor_texture()), "/textures/font.tex": texture_file(font_texture()),
            "/textures/white.tex": texture_file(white), "/textures/orb.tex": texture_file(orb_texture()),
            **shader_files}
