"""Minimal PNG (RGBA8, 8-bit) writer and reader: frames are dumped without any imaging library."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np

SIG = b"\x89PNG\r\n\x1a\n"


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode(rgba: bytes, width: int, height: int) -> bytes:
    rows = np.frombuffer(rgba, np.uint8).reshape(height, width * 4)
    raw = np.hstack([np.zeros((height, 1), np.uint8), rows]).tobytes()  # filter type 0 per row
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return SIG + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b"")


def write(path: Path, rgba: bytes, width: int, height: int) -> None:
    """Atomic: a reader never sees half a frame."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(encode(rgba, width, height))
    os.replace(tmp, path)


def decode(data: bytes) -> tuple[int, int, np.ndarray]:
    """(width, height, HxWx4 uint8) of an 8-bit RGBA, non-interlaced PNG (all five filters)."""
    if data[:8] != SIG:
        raise ValueError("not a PNG file")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, tag = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
        if tag == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    if hdr is None or hdr[2:5] != (8, 6, 0) or hdr[6] != 0:
        raise ValueError(f"unsupported PNG header {hdr}")
    w, h = hdr[0], hdr[1]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, w * 4 + 1)
    out = np.zeros((h, w * 4), np.int32)
    prev = np.zeros(w * 4, np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        cur = np.zeros(w * 4, np.int32)
        if f in (0, 2):  # the common filters, vectorised
            out[y] = prev = (line + (prev if f == 2 else 0)) & 0xFF
            continue
        for x in range(w * 4):
            a = cur[x - 4] if x >= 4 else 0
            b = prev[x]
            c = prev[x - 4] if x >= 4 else 0
            if f == 0:
                p = 0
            elif f == 1:
                p = a
            elif f == 2:
                p = b
            elif f == 3:
                p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + p) & 0xFF
        out[y] = cur
        prev = cur
    return w, h, out.astype(np.uint8).reshape(h, w, 4)
