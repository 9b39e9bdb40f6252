"""PFS0 (partition filesystem) loader: the container of an ExeFS (``main``, ``main.npdm``,
``sdk``, ``subsdk*``) and of NSP files.

Header: magic, file count, string table size, reserved; then one 0x18-byte entry per file
(data offset, size, name offset, reserved), then the NUL-terminated names.  Data offsets are
relative to the end of the string table."""

from __future__ import annotations

from dataclasses import dataclass

from recompiler.formats.binreader import BinReader

MAGIC = b"PFS0"
HEADER_SIZE, ENTRY_SIZE = 0x10, 0x18


@dataclass(frozen=True)
class PfsEntry:
    name: str
    offset: int  # absolute, in the file
    size: int


@dataclass(frozen=True)
class Pfs0:
    path: str
    data_offset: int
    entries: list[PfsEntry]
    blob: bytes | bytearray | memoryview

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def read(self, name: str) -> bytes:
        for e in self.entries:
            if e.name == name:
                return bytes(self.blob[e.offset : e.offset + e.size])
        raise KeyError(name)


def parse_pfs0(data: bytes | bytearray | memoryview, path: str = "<pfs0>") -> Pfs0:
    r = BinReader(data, path)
    r.check("header", 0, HEADER_SIZE)
    r.magic("Magic", 0, MAGIC)
    count, strsz = r.u32("FileCount", 4), r.u32("StringTableSize", 8)
    table = HEADER_SIZE + count * ENTRY_SIZE
    r.check("entries", HEADER_SIZE, count * ENTRY_SIZE)
    r.check("StringTable", table, strsz)
    strings = r.bytes("StringTable", table, strsz)
    data_off = table + strsz
    entries, seen = [], set()
    for i in range(count):
        at = HEADER_SIZE + i * ENTRY_SIZE
        off, size, name_off = (
            r.u64(f"entry[{i}].Offset", at),
            r.u64(f"entry[{i}].Size", at + 8),
            r.u32(f"entry[{i}].StringOffset", at + 16),
        )
        if name_off >= strsz:
            raise r.error(
                f"entry[{i}].StringOffset", at + 16, f"name offset {name_off:#x} is past the string table (size {strsz:#x})"
            )
        end = strings.find(b"\0", name_off)
        if end < 0:
            raise r.error(f"entry[{i}].StringOffset", at + 16, "name is not NUL-terminated inside the string table")
        name = strings[name_off:end].decode("utf-8", "replace")
        if name in seen:
            raise r.error(f"entry[{i}].StringOffset", at + 16, f"file name {name!r} appears twice")
        seen.add(name)
        r.check(f"entry[{i}] ({name}) Offset/Size", data_off + off, size)
        entries.append(PfsEntry(name, data_off + off, size))
    return Pfs0(path, data_off, entries, data)
