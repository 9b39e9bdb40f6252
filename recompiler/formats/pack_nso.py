"""NSO0 builder: writes the header field by field, the module name right after it, then the
three segments (LZ4 blocks where asked)."""

from __future__ import annotations

import hashlib
import struct

from nxrecomp.common.errors import NxError
from recompiler.formats import nso
from recompiler.formats.binreader import align_up
from recompiler.formats.lz4 import compress_block
from recompiler.formats.module import PAGE

Triple = tuple[bool, bool, bool]


def _triple(v: bool | Triple) -> Triple:
    return (v, v, v) if isinstance(v, bool) else tuple(v)  # type: ignore[return-value]


def check_u32(what: str, value: int) -> None:
    if not 0 <= value <= 0xFFFFFFFF:
        raise NxError(f"pack: {what} {value:#x} does not fit a 32-bit header field")


def default_layout(sizes: tuple[int, int, int]) -> tuple[int, int, int]:
    """Memory offsets as Switch tools lay them out: each segment on the next page."""
    ro = align_up(sizes[0], PAGE)
    return 0, ro, align_up(ro + sizes[1], PAGE)


def pack_nso(
    text: bytes,
    rodata: bytes,
    data: bytes,
    *,
    bss_size: int = 0,
    build_id: bytes = b"",
    name: str = "",
    compress: bool | Triple = True,
    hash_check: bool | Triple = True,
    flags: int | None = None,
    mem_offsets: tuple[int, int, int] | None = None,
    embedded: tuple[int, int] = (0, 0),
    dynstr: tuple[int, int] = (0, 0),
    dynsym: tuple[int, int] = (0, 0),
    version: int = 0,
) -> bytes:
    """An NSO0 file.  ``flags`` overrides the flag word written (to build files whose flags
    disagree with their contents); ``compress``/``hash_check`` choose what is done."""
    if len(build_id) > 0x20:
        raise NxError(f"pack_nso: build id is {len(build_id)} bytes, at most 32")
    segs = (bytes(text), bytes(rodata), bytes(data))
    check_u32("bss size", bss_size)
    for what, v in (("memory offset", mem_offsets or (0,)), ("embedded", embedded), ("dynstr", dynstr), ("dynsym", dynsym)):
        for x in v:
            check_u32(what, x)
    comp, hashed = _triple(compress), _triple(hash_check)
    mem = mem_offsets or default_layout(tuple(len(s) for s in segs))  # type: ignore[arg-type]
    stored = [compress_block(s) if c else s for s, c in zip(segs, comp)]
    if flags is None:
        flags = sum(b for b, c in zip(nso.FLAG_COMPRESSED, comp) if c) + sum(b for b, h in zip(nso.FLAG_HASH_CHECK, hashed) if h)
    name_bytes = name.encode() + b"\0"
    header = bytearray(nso.HEADER_SIZE)
    header[0:4] = nso.MAGIC
    struct.pack_into("<II", header, 4, version, 0)
    struct.pack_into("<I", header, 0xC, flags)
    pos = nso.HEADER_SIZE + len(name_bytes)
    for i, (seg, st) in enumerate(zip(segs, stored)):
        struct.pack_into("<III", header, nso.SEG_HEADER[i], pos, mem[i], len(seg))
        struct.pack_into("<I", header, nso.FILE_SIZE[i], len(st))
        header[nso.HASH[i] : nso.HASH[i] + 0x20] = hashlib.sha256(seg).digest()
        pos += len(st)
    struct.pack_into("<I", header, nso.MODULE_NAME_OFFSET, nso.HEADER_SIZE)
    struct.pack_into("<I", header, nso.MODULE_NAME_SIZE, len(name_bytes))
    struct.pack_into("<I", header, nso.BSS_SIZE, bss_size)
    header[nso.MODULE_ID : nso.MODULE_ID + len(build_id)] = build_id
    for at, (off, size) in ((nso.EMBEDDED, embedded), (nso.DYNSTR, dynstr), (nso.DYNSYM, dynsym)):
        struct.pack_into("<II", header, at, off, size)
    return bytes(header) + name_bytes + b"".join(stored)
