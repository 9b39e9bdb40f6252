"""PFS0 builder (ExeFS / NSP container): header, entries, names, then the files one after
another.  The string table is padded so the file data starts on a 0x20 boundary, as Switch
tools do."""

from __future__ import annotations

import struct

from nxrecomp.common.errors import NxError
from recompiler.formats import pfs0 as P
from recompiler.formats.binreader import align_up

DATA_ALIGN = 0x20


def pack_pfs0(files: list[tuple[str, bytes]] | dict[str, bytes]) -> bytes:
    items = list(files.items()) if isinstance(files, dict) else list(files)
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise NxError("pack_pfs0: a file name appears twice")
    strings = bytearray()
    name_offsets = []
    for n in names:
        if not n or "\0" in n:
            raise NxError(f"pack_pfs0: bad file name {n!r}")
        name_offsets.append(len(strings))
        strings += n.encode() + b"\0"
    table_end = P.HEADER_SIZE + P.ENTRY_SIZE * len(items)
    strings += b"\0" * (align_up(table_end + len(strings), DATA_ALIGN) - table_end - len(strings))
    out = bytearray(P.MAGIC + struct.pack("<III", len(items), len(strings), 0))
    pos = 0
    for (_, blob), noff in zip(items, name_offsets):
        out += struct.pack("<QQII", pos, len(blob), noff, 0)
        pos += len(blob)
    out += strings
    for _, blob in items:
        out += blob
    return bytes(out)
