"""RomFS (IVFC level 3) builder.

Layout as the usual builders write it: the 0x50-byte header, file data from 0x200 (each file
on a 0x10 boundary), then the directory hash table, directory meta table, file hash table
and file meta table.  Directories and files are sorted by name; the root is the first
directory entry (offset 0, empty name, its own parent)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from nxrecomp.common.errors import NxError
from recompiler.formats import romfs as R
from recompiler.formats.binreader import align_up

DATA_START = 0x200
FILE_ALIGN = 0x10


def hash_table_count(entries: int) -> int:
    """Bucket count: small tables get an odd count, larger ones a count with no prime factor
    up to 17 (spreads the hashes)."""
    if entries < 3:
        return 3
    if entries < 19:
        return entries | 1
    n = entries
    while any(n % p == 0 for p in (2, 3, 5, 7, 11, 13, 17)):
        n += 1
    return n


@dataclass
class _Dir:
    name: str
    parent: "_Dir | None"
    dirs: dict[str, "_Dir"] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    offset: int = 0


def _tree(files: dict[str, bytes]) -> _Dir:
    root = _Dir("", None)
    for path, blob in files.items():
        parts = [p for p in path.split("/") if p]
        if not parts:
            raise NxError(f"pack_romfs: empty file path {path!r}")
        d = root
        for p in parts[:-1]:
            if p in d.files:
                raise NxError(f"pack_romfs: {path!r}: {p!r} is both a file and a directory")
            d = d.dirs.setdefault(p, _Dir(p, d))
        if parts[-1] in d.dirs or parts[-1] in d.files:
            raise NxError(f"pack_romfs: {path!r} is given twice or is also a directory")
        d.files[parts[-1]] = bytes(blob)
    return root


def _entry_size(base: int, name: str) -> int:
    return base + align_up(len(name.encode()), 4)


def pack_romfs(files: dict[str, bytes], directories: list[str] = ()) -> bytes:  # type: ignore[assignment]
    """``files`` maps "/dir/name" to contents; ``directories`` adds (possibly empty) dirs."""
    root = _tree(files)
    for path in directories:
        d = root
        for p in (p for p in path.split("/") if p):
            d = d.dirs.setdefault(p, _Dir(p, d))

    # Directory order: depth first, children sorted by name.
    dirs: list[_Dir] = []
    stack = [root]
    while stack:
        d = stack.pop()
        dirs.append(d)
        stack.extend(d.dirs[k] for k in sorted(d.dirs, reverse=True))
    pos = 0
    for d in dirs:
        d.offset = pos
        pos += _entry_size(R.DIR_ENTRY_SIZE, d.name)
    file_list: list[tuple[_Dir, str, bytes]] = [(d, n, d.files[n]) for d in dirs for n in sorted(d.files)]
    file_offsets, pos = [], 0
    for _, n, _ in file_list:
        file_offsets.append(pos)
        pos += _entry_size(R.FILE_ENTRY_SIZE, n)
    first_file = {}
    for (d, _, _), off in zip(file_list, file_offsets):
        first_file.setdefault(id(d), off)

    # File data.
    data = bytearray()
    data_offsets = []
    for _, _, blob in file_list:
        data += b"\0" * (align_up(len(data), FILE_ALIGN) - len(data))
        data_offsets.append(len(data))
        data += blob

    # Hash tables: bucket heads, chained through each entry's hash-next.
    dcount, fcount = hash_table_count(len(dirs)), hash_table_count(len(file_list))
    dbuckets, fbuckets = [R.EMPTY] * dcount, [R.EMPTY] * fcount
    dnext, fnext = {}, {}
    for d in dirs:
        parent = d.parent.offset if d.parent else 0
        b = R.path_hash(parent, d.name.encode()) % dcount
        dnext[d.offset], dbuckets[b] = dbuckets[b], d.offset
    for (d, n, _), off in zip(file_list, file_offsets):
        b = R.path_hash(d.offset, n.encode()) % fcount
        fnext[off], fbuckets[b] = fbuckets[b], off

    dmeta = bytearray()
    for d in dirs:
        sib = R.EMPTY
        if d.parent is not None:
            names = sorted(d.parent.dirs)
            i = names.index(d.name)
            sib = d.parent.dirs[names[i + 1]].offset if i + 1 < len(names) else R.EMPTY
        child = d.dirs[min(d.dirs)].offset if d.dirs else R.EMPTY
        name = d.name.encode()
        dmeta += struct.pack(
            "<IIIIII", d.parent.offset if d.parent else 0, sib, child, first_file.get(id(d), R.EMPTY), dnext[d.offset], len(name)
        )
        dmeta += name + b"\0" * (align_up(len(name), 4) - len(name))
    fmeta = bytearray()
    for i, ((d, n, blob), off) in enumerate(zip(file_list, file_offsets)):
        sib = file_offsets[i + 1] if i + 1 < len(file_list) and file_list[i + 1][0] is d else R.EMPTY
        name = n.encode()
        fmeta += struct.pack("<IIQQII", d.offset, sib, data_offsets[i], len(blob), fnext[off], len(name))
        fmeta += name + b"\0" * (align_up(len(name), 4) - len(name))

    dhash = struct.pack(f"<{dcount}I", *dbuckets)
    fhash = struct.pack(f"<{fcount}I", *fbuckets)
    pos = align_up(DATA_START + len(data), 4)
    tables = []
    for blob in (dhash, dmeta, fhash, fmeta):
        tables.append((pos, len(blob)))
        pos += len(blob)
    header = (
        struct.pack("<Q", R.HEADER_SIZE) + b"".join(struct.pack("<QQ", o, s) for o, s in tables) + struct.pack("<Q", DATA_START)
    )
    out = bytearray(header) + b"\0" * (DATA_START - len(header)) + data
    out += b"\0" * (tables[0][0] - len(out))
    return bytes(out + dhash + dmeta + fhash + fmeta)
