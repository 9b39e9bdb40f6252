"""PRESENT_IMAGE (op 40; gpu_host/PROTOCOL.md "Presented images"): a framebuffer the CPU host
wrote into pool memory — a Horizon program's buffer queued through vi's binder relay — shown as
a presented frame, with no render target and no Vulkan work.

Fields: ``frame`` u64, ``pool`` u32, ``offset`` u64, ``width``, ``height`` (1..16384),
``layout`` (0 pitch-linear, 1 block-linear), ``pitch`` (bytes from one row to the next; for a
block-linear surface the surface's width in bytes, a multiple of the 64-byte GOB),
``block_height_log2`` (0..5: GOBs per block, block-linear only), ``format`` (0 RGBA8, 1 RGBX8:
the fourth byte is ignored and shown opaque, 2 BGRA8, 3 RGB565: a little-endian u16 with red in
bits 15..11, green 10..5, blue 4..0 — Android's and libnx's PIXEL_FORMAT_RGB_565, what libnx's
console draws in — widened to 8 bits by bit replication).  The image's bytes are ``pitch *
height`` (pitch-linear) or the whole blocks covering ``height`` rows (block-linear), from
``offset`` in ``pool``; the range is checked like any other (``validate.plan``), snapshotted
with the submission (so a recording holds the pixels) and turned into RGBA8 rows here.

Facts: the Switch 1 display surface is a Fermi-GOB block-linear RGBA8 image (libnx
``framebuffer.c``: 16-GOB blocks for 720 rows; Tegra X1 TRM "Block Linear" and Ryujinx's
``BlockLinearLayout`` describe the GOB: 64 bytes x 8 rows in 32-byte sectors); the deswizzle is
``gpu_host.blocklinear``'s, shared with texture uploads."""

from __future__ import annotations

import numpy as np

from gpu_host import blocklinear

LAYOUT_PITCH, LAYOUT_BLOCK_LINEAR = 0, 1
FORMAT_RGBA8, FORMAT_RGBX8, FORMAT_BGRA8, FORMAT_RGB565 = 0, 1, 2, 3
FORMATS = ("RGBA8", "RGBX8", "BGRA8", "RGB565")
BYTES_PER_PIXEL = (4, 4, 4, 2)
MAX_SIDE = 16384

# field positions in the packet tuple (op at 0)
F_FRAME, F_POOL, F_OFFSET, F_WIDTH, F_HEIGHT, F_LAYOUT, F_PITCH, F_BLOCK, F_FORMAT = range(1, 10)


def problem(cmd: tuple) -> str | None:
    """What is wrong with a packet whose fields each have their type and range, or None (the
    rules between fields; packets.check and nxpkt.c apply the same)."""
    if cmd[F_WIDTH] == 0 or cmd[F_HEIGHT] == 0:
        return f"size {cmd[F_WIDTH]}x{cmd[F_HEIGHT]} is empty"
    row = cmd[F_WIDTH] * BYTES_PER_PIXEL[cmd[F_FORMAT]]
    if cmd[F_PITCH] < row:
        return f"field pitch = {cmd[F_PITCH]} is below a row of {row} bytes"
    if cmd[F_LAYOUT] == LAYOUT_BLOCK_LINEAR and cmd[F_PITCH] % blocklinear.GOB_W:
        return f"field pitch = {cmd[F_PITCH]} of a block-linear image is not a multiple of {blocklinear.GOB_W}"
    return None


def byte_size(cmd: tuple) -> int:
    """Bytes of pool memory the image covers."""
    if cmd[F_LAYOUT] == LAYOUT_BLOCK_LINEAR:
        return blocklinear.size_bytes(cmd[F_PITCH], cmd[F_HEIGHT], cmd[F_BLOCK])
    return cmd[F_PITCH] * cmd[F_HEIGHT]


def key(cmd: tuple) -> tuple[int, int, int]:
    """(pool, offset, size): the snapshot range of the image."""
    return cmd[F_POOL], cmd[F_OFFSET], byte_size(cmd)


def rgba(cmd: tuple, src: bytes | memoryview) -> bytes:
    """The image as tightly packed RGBA8 rows (what frames are hashed, written and shown as)."""
    w, h, pitch = cmd[F_WIDTH], cmd[F_HEIGHT], cmd[F_PITCH]
    if cmd[F_LAYOUT] == LAYOUT_BLOCK_LINEAR:
        lin = blocklinear.deswizzle(src, pitch, h, cmd[F_BLOCK])
    else:
        lin = np.frombuffer(src, np.uint8, pitch * h).reshape(h, pitch)
    if cmd[F_FORMAT] == FORMAT_RGB565:
        v = lin[:, : w * 2].copy().view("<u2").astype(np.uint16)
        r, g, b = (v >> 11) & 31, (v >> 5) & 63, v & 31
        px = np.stack([(r << 3) | (r >> 2), (g << 2) | (g >> 4), (b << 3) | (b >> 2), np.full_like(v, 255)], -1).astype(np.uint8)
        return px.tobytes()
    px = lin[:, : w * 4].reshape(h, w, 4)
    if cmd[F_FORMAT] == FORMAT_BGRA8:
        px = px[:, :, [2, 1, 0, 3]]
    elif cmd[F_FORMAT] == FORMAT_RGBX8:
        px = px.copy()
        px[:, :, 3] = 255
    return np.ascontiguousarray(px).tobytes()
