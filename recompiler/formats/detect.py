"""Pick a loader from a file's magic and load it."""

from __future__ import annotations

import logging
import mmap
import os
from typing import Union

from nxrecomp.common.errors import NxError
from recompiler.formats.npdm import Npdm, parse_npdm
from recompiler.formats.nro import NroModule, parse_nro
from recompiler.formats.nso import NsoModule, parse_nso
from recompiler.formats.pfs0 import Pfs0, parse_pfs0
from recompiler.formats.romfs import HEADER_SIZE as ROMFS_HEADER_SIZE
from recompiler.formats.romfs import Romfs, parse_romfs

log = logging.getLogger("formats")

Loaded = Union[NsoModule, NroModule, Npdm, Pfs0, Romfs]

LOADERS = {"nso": parse_nso, "nro": parse_nro, "npdm": parse_npdm, "pfs0": parse_pfs0, "romfs": parse_romfs}


def detect_format(data: bytes | bytearray | memoryview | mmap.mmap) -> str | None:
    head = bytes(data[:0x14])
    if head[:4] == b"NSO0":
        return "nso"
    if head[0x10:0x14] == b"NRO0":
        return "nro"
    if head[:4] == b"META":
        return "npdm"
    if head[:4] == b"PFS0":
        return "pfs0"
    if len(head) >= 8 and int.from_bytes(head[:8], "little") == ROMFS_HEADER_SIZE:
        return "romfs"
    return None


def load_bytes(data: bytes | bytearray | memoryview | mmap.mmap, path: str = "<data>", fmt: str | None = None) -> Loaded:
    fmt = fmt or detect_format(data)
    if fmt is None:
        raise NxError("not a Switch file this tool knows (NSO0, NRO0, NPDM, PFS0, RomFS)", path=path, offset=0)
    if fmt not in LOADERS:
        raise NxError(f"unknown format {fmt!r}; known: {', '.join(LOADERS)}", path=path)
    obj = LOADERS[fmt](data, path)
    log.debug("loaded %s as %s (%d bytes)", path, fmt, len(data))
    return obj


MAP_THRESHOLD = 64 << 20


def read_file(path: str | os.PathLike) -> bytes | mmap.mmap:
    """The file's bytes; large files (a game's RomFS runs to gigabytes) are mapped read-only
    instead of read, so only the pages a loader touches are paged in."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size >= MAP_THRESHOLD:
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            return f.read()
    except OSError as e:
        raise NxError(f"cannot read: {e.strerror or e}", path=str(path)) from None


def load(path: str | os.PathLike, fmt: str | None = None) -> Loaded:
    return load_bytes(read_file(path), str(path), fmt)
