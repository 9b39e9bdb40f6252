"""NRO0 builder: segments stored uncompressed at their memory offsets, the header written
into .text at 0x10 (the first 0x10 bytes of .text, branch and MOD0 offset, are kept), and an
optional ASET section (icon, NACP, RomFS) after the module."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from nxrecomp.common.errors import NxError
from recompiler.formats import nro
from recompiler.formats.pack_nso import check_u32, default_layout


@dataclass(frozen=True)
class NroAssets:
    icon: bytes = b""
    nacp: bytes = b""
    romfs: bytes = b""


def pack_aset(assets: NroAssets) -> bytes:
    header = bytearray(nro.ASET_HEADER_SIZE)
    header[0:4] = nro.ASET_MAGIC
    pos = nro.ASET_HEADER_SIZE
    for i, part in enumerate((assets.icon, assets.nacp, assets.romfs)):
        struct.pack_into("<QQ", header, 8 + 16 * i, pos if part else 0, len(part))
        pos += len(part)
    return bytes(header) + assets.icon + assets.nacp + assets.romfs


def pack_nro(
    text: bytes,
    rodata: bytes,
    data: bytes,
    *,
    bss_size: int = 0,
    build_id: bytes = b"",
    assets: NroAssets | None = None,
    mem_offsets: tuple[int, int, int] | None = None,
    flags: int = 0,
    version: int = 0,
    dso_handle_offset: int = 0,
    embedded: tuple[int, int] = (0, 0),
    dynstr: tuple[int, int] = (0, 0),
    dynsym: tuple[int, int] = (0, 0),
) -> bytes:
    if len(text) < nro.HEADER_END:
        raise NxError(f"pack_nro: .text is {len(text):#x} bytes; it must hold the {nro.HEADER_END:#x}-byte header")
    if len(build_id) > 0x20:
        raise NxError(f"pack_nro: build id is {len(build_id)} bytes, at most 32")
    mem = mem_offsets or default_layout((len(text), len(rodata), len(data)))
    for what, vals in (
        ("memory offset", mem),
        ("bss size", (bss_size,)),
        ("embedded", embedded),
        ("dynstr", dynstr),
        ("dynsym", dynsym),
    ):
        for v in vals:
            check_u32(what, v)
    size = mem[2] + len(data)
    out = bytearray(size)
    for off, seg in zip(mem, (text, rodata, data)):
        out[off : off + len(seg)] = seg
    h = bytearray(nro.HEADER_END - 0x10)
    h[0:4] = nro.MAGIC
    struct.pack_into("<III", h, 4, version, size, flags)
    for i, seg in enumerate((text, rodata, data)):
        struct.pack_into("<II", h, nro.SEG_HEADER[i] - 0x10, mem[i], len(seg))
    struct.pack_into("<II", h, nro.BSS_SIZE - 0x10, bss_size, 0)
    h[nro.MODULE_ID - 0x10 : nro.MODULE_ID - 0x10 + len(build_id)] = build_id
    struct.pack_into("<II", h, nro.DSO_HANDLE - 0x10, dso_handle_offset, 0)
    for at, (off, sz) in ((nro.EMBEDDED, embedded), (nro.DYNSTR, dynstr), (nro.DYNSYM, dynsym)):
        struct.pack_into("<II", h, at - 0x10, off, sz)
    out[0x10 : nro.HEADER_END] = h
    return bytes(out) + (pack_aset(assets) if assets is not None else b"")
