"""The demo's assets, made at build time by code (nothing drawn by hand, nothing copied):
textures as the game reads them from the RomFS — a 20-byte header (magic "NXTX", width,
height, NVN format code of examples/horizon_hello/sdk/nvn.h, byte count) then the texels in the
Switch block-linear layout with the block height the CPU host's NVN front end assigns (for a
compressed format the elements the layout swizzles are its blocks).

The floor is BC1 (our own small encoder: per 4x4 block the darkest and brightest texels as
endpoints, each texel the nearest of the four colours), the orbs ASTC 4x4 (each block a
constant-colour "void-extent" block, the simplest valid ASTC encoding: the orb becomes a
mosaic of its block averages); font and white are RGBA8."""

from __future__ import annotations

import struct

import numpy as np

from cpu_host.horizon.hle.nvn.frontend import block_height_log2
from gpu_host import blocklinear

TEX_MAGIC = 0x5854584E  # "NXTX"
FORMAT_RGBA8, FORMAT_BC1, FORMAT_ASTC_4x4 = 1, 8, 11
ASTC_VOID_EXTENT_LDR = 0xFFFFFFFFFFFFFDFC  # block mode 0x1FC, LDR, reserved 11, no extent (all ones)
# 3x5 digit glyphs, one string of 15 bits (rows top to bottom) per digit
DIGITS = [
    "111101101101111",
    "010110010010111",
    "111001111100111",
    "111001111001111",
    "101101111001001",
    "111100111001111",
    "111100111101111",
    "111001001001001",
    "111101111101111",
    "111101111001111",
]


def texture_file(rgba: np.ndarray, fmt: int = FORMAT_RGBA8, gob: str = "fermi") -> bytes:
    """Header + block-linear texels (RGBA8) or blocks (BC1, ASTC 4x4) of an h x w x 4 image, in
    the GOBs of the console the build is for (``gob``: Switch 1 "fermi", Switch 2 "turing")."""
    h, w, _ = rgba.shape
    if fmt == FORMAT_RGBA8:
        rows = rgba.reshape(h, w * 4).astype(np.uint8)
    else:
        blocks = rgba.astype(np.uint8).reshape(h // 4, 4, w // 4, 4, 4).transpose(0, 2, 1, 3, 4)  # by, bx, y, x, c
        enc = bc1_block if fmt == FORMAT_BC1 else astc_void_block
        rows = np.array([[np.frombuffer(enc(b), np.uint8) for b in row] for row in blocks], np.uint8).reshape(h // 4, -1)
    data = blocklinear.swizzle(rows, block_height_log2(rows.shape[0]), gob)
    return struct.pack("<5I", TEX_MAGIC, w, h, fmt, len(data)) + data


def _rgb565(c: np.ndarray) -> int:
    r, g, b = (int(v) for v in c[:3])
    return (r * 31 + 127) // 255 << 11 | (g * 63 + 127) // 255 << 5 | (b * 31 + 127) // 255


def _expand565(v: int) -> np.ndarray:
    r, g, b = v >> 11 & 31, v >> 5 & 63, v & 31
    return np.array([r << 3 | r >> 2, g << 2 | g >> 4, b << 3 | b >> 2], np.int32)


def bc1_block(block: np.ndarray) -> bytes:
    """One 4x4 block (4 x 4 x 4 uint8) as BC1 in its four-colour mode (colour0 > colour1)."""
    px = block.reshape(16, 4)[:, :3].astype(np.int32)
    lum = px @ np.array([2, 5, 1])
    c0, c1 = _rgb565(px[lum.argmax()]), _rgb565(px[lum.argmin()])
    if c0 == c1:
        return struct.pack("<HHI", c0, c1, 0)
    if c0 < c1:
        c0, c1 = c1, c0
    e0, e1 = _expand565(c0), _expand565(c1)
    palette = np.stack([e0, e1, (2 * e0 + e1) // 3, (e0 + 2 * e1) // 3])
    idx = ((px[:, None, :] - palette[None, :, :]) ** 2).sum(-1).argmin(1)
    bits = sum(int(i) << (2 * k) for k, i in enumerate(idx))
    return struct.pack("<HHI", c0, c1, bits)


def astc_void_block(block: np.ndarray) -> bytes:
    """One 4x4 block as an ASTC constant-colour block of the block's mean colour (UNORM16)."""
    mean = np.round(block.reshape(16, 4).astype(np.float64).mean(0)).astype(int)
    return struct.pack("<Q4H", ASTC_VOID_EXTENT_LDR, *(int(v) * 257 for v in mean))


def floor_texture() -> np.ndarray:
    y, x = np.mgrid[0:64, 0:64]
    checker = ((x // 16 + y // 16) & 1).astype(np.int32)
    noise = ((x * 7919 + y * 104729) * 2654435761 >> 8) & 15  # integer hash: same bytes everywhere
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


def romfs_files(shader_files: dict[str, bytes], gob: str = "fermi") -> dict[str, bytes]:
    """The RomFS of one build: its textures in the GOBs of its console, its shaders."""
    white = np.full((8, 8, 4), 255, np.int32)
    return {
        "/textures/floor.tex": texture_file(floor_texture(), FORMAT_BC1, gob),
        "/textures/font.tex": texture_file(font_texture(), gob=gob),
        "/textures/white.tex": texture_file(white, gob=gob),
        "/textures/orb.tex": texture_file(orb_texture(), FORMAT_ASTC_4x4, gob),
        **shader_files,
    }
