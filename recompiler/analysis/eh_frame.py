"""Function starts from ``.eh_frame``: the ``pc_begin`` of every FDE, its pointer encoding
read from its CIE's augmentation (the LSB's exception frame format: the System V ABI's
``.eh_frame`` section, DWARF's CFI with GNU's augmentation strings).  Static glibc has an FDE
for nearly every function."""

from __future__ import annotations

import struct

M64 = (1 << 64) - 1


def eh_frame_starts(addr: int, data: bytes) -> list[int]:
    """pc_begin of every FDE in an .eh_frame section (pointer encoding from each CIE)."""
    out: list[int] = []
    cie_enc: dict[int, int] = {}
    off = 0
    while off + 8 <= len(data):
        (length,) = struct.unpack_from("<I", data, off)
        if length == 0:
            break
        hdr = 4
        if length == 0xFFFFFFFF:
            (length,) = struct.unpack_from("<Q", data, off + 4)
            hdr = 12
        body = off + hdr
        end = body + length
        if end > len(data):
            break
        (cie_id,) = struct.unpack_from("<I", data, body)
        if cie_id == 0:
            cie_enc[off] = _cie_fde_encoding(data, body + 4, end)
        else:
            cie_off = body - cie_id
            enc = cie_enc.get(cie_off, 0x1B)
            p = body + 4
            v = _read_enc(data, p, enc, addr + p)
            if v is not None and v:
                out.append(v)
        off = end
    return out


def _uleb(data: bytes, p: int) -> tuple[int, int]:
    v = shift = 0
    while p < len(data):
        b = data[p]
        p += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return v, p


def _cie_fde_encoding(data: bytes, p: int, end: int) -> int:
    p += 1  # version
    z = data.index(b"\0", p, end)
    aug = data[p:z].decode("ascii", "replace")
    p = z + 1
    _, p = _uleb(data, p)  # code alignment
    _, p = _uleb(data, p)  # data alignment (sleb, same length)
    p += 1  # return register (version 1: one byte)
    enc = 0
    if aug.startswith("z"):
        _, p = _uleb(data, p)
        for ch in aug[1:]:
            if ch == "R":
                enc = data[p]
                p += 1
            elif ch == "P":
                penc = data[p]
                p += 1
                p += {0x00: 8, 0x03: 4, 0x0B: 4, 0x04: 8, 0x0C: 8}.get(penc & 0x0F, 4)
            elif ch == "L":
                p += 1
    return enc


def _read_enc(data: bytes, p: int, enc: int, field_addr: int) -> int | None:
    fmt = enc & 0x0F
    if fmt == 0x0B:
        (v,) = struct.unpack_from("<i", data, p)
    elif fmt == 0x03:
        (v,) = struct.unpack_from("<I", data, p)
    elif fmt in (0x00, 0x04, 0x0C):
        (v,) = struct.unpack_from("<Q" if fmt != 0x0C else "<q", data, p)
    else:
        return None
    if enc & 0x70 == 0x10:
        v += field_addr
    return v & M64
