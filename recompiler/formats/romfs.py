"""RomFS loader (the IVFC level-3 image: what a game's RomFS partition holds once the hash
levels are set aside).

Header (0x50): header size, then offset/size of the directory hash table, directory meta
table, file hash table, file meta table, and the file data offset.  Directory entries
(parent, sibling, first child dir, first child file, hash-chain next, name size, name) and
file entries (parent, sibling, data offset, data size, hash-chain next, name size, name) are
linked by offsets into their tables; 0xFFFFFFFF ends a list.  A path is found through the
hash tables; listing walks the tree.  Every walk is bounded (a cyclic table must give an
error, not a hang)."""

from __future__ import annotations

from dataclasses import dataclass

from recompiler.formats.binreader import BinReader

HEADER_SIZE = 0x50
EMPTY = 0xFFFFFFFF
DIR_ENTRY_SIZE, FILE_ENTRY_SIZE = 0x18, 0x20
TABLES = ("DirHashTable", "DirMetaTable", "FileHashTable", "FileMetaTable")


def path_hash(parent: int, name: bytes) -> int:
    """The RomFS name hash: seed with the parent's offset, then rotate right by 5 and xor
    in each byte of the name."""
    h = parent ^ 123456789
    for b in name:
        h = ((h >> 5) | (h << 27)) & 0xFFFFFFFF
        h ^= b
    return h


@dataclass(frozen=True)
class RomfsDir:
    offset: int
    parent: int
    sibling: int
    child_dir: int
    child_file: int
    hash_next: int
    name: str


@dataclass(frozen=True)
class RomfsFile:
    offset: int
    parent: int
    sibling: int
    data_offset: int  # relative to the header's file data offset
    size: int
    hash_next: int
    name: str


@dataclass(frozen=True)
class Romfs:
    path: str
    r: BinReader
    tables: dict[str, tuple[int, int]]  # name -> (offset, size) in the image
    data_offset: int

    # -- entries ---------------------------------------------------------------
    def _table(self, name: str) -> BinReader:
        off, size = self.tables[name]
        return self.r.sub(name, off, size)

    def dir_at(self, offset: int) -> RomfsDir:
        t = self._table("DirMetaTable")
        f = f"DirMetaTable[{offset:#x}]"
        name_size = t.u32(f + ".NameSize", offset + 0x14)
        name = t.bytes(f + ".Name", offset + DIR_ENTRY_SIZE, name_size)
        return RomfsDir(
            offset,
            t.u32(f + ".Parent", offset),
            t.u32(f + ".Sibling", offset + 4),
            t.u32(f + ".ChildDir", offset + 8),
            t.u32(f + ".ChildFile", offset + 12),
            t.u32(f + ".HashNext", offset + 16),
            name.decode("utf-8", "replace"),
        )

    def file_at(self, offset: int) -> RomfsFile:
        t = self._table("FileMetaTable")
        f = f"FileMetaTable[{offset:#x}]"
        name_size = t.u32(f + ".NameSize", offset + 0x1C)
        name = t.bytes(f + ".Name", offset + FILE_ENTRY_SIZE, name_size)
        e = RomfsFile(
            offset,
            t.u32(f + ".Parent", offset),
            t.u32(f + ".Sibling", offset + 4),
            t.u64(f + ".DataOffset", offset + 8),
            t.u64(f + ".DataSize", offset + 16),
            t.u32(f + ".HashNext", offset + 0x18),
            name.decode("utf-8", "replace"),
        )
        self.r.check(f + " data (DataOffset/DataSize)", self.data_offset + e.data_offset, e.size)
        return e

    def _limit(self, table: str, entry_size: int) -> int:
        # No list can be longer than the number of entries its table can hold.
        return self.tables[table][1] // entry_size + 1

    def _walk(self, first: int, at, table: str, entry_size: int, what: str) -> list:
        out, seen, cur = [], set(), first
        limit = self._limit(table, entry_size)
        while cur != EMPTY:
            if cur in seen or len(out) > limit:
                raise self.r.error(table, self.tables[table][0] + cur, f"{what} list loops back to entry {cur:#x}")
            seen.add(cur)
            e = at(cur)
            out.append(e)
            cur = e.sibling if what != "hash chain" else e.hash_next
        return out

    def root(self) -> RomfsDir:
        return self.dir_at(0)

    def children(self, d: RomfsDir) -> tuple[list[RomfsDir], list[RomfsFile]]:
        dirs = self._walk(d.child_dir, self.dir_at, "DirMetaTable", DIR_ENTRY_SIZE, "sibling")
        files = self._walk(d.child_file, self.file_at, "FileMetaTable", FILE_ENTRY_SIZE, "sibling")
        return dirs, files

    # -- listing ---------------------------------------------------------------
    def tree(self) -> tuple[list[str], list[tuple[str, RomfsFile]]]:
        """(every directory path, every file as ("/dir/name", entry)), depth first in table
        order.  An entry reachable twice (a cycle, or one shared by two directories) is an
        error, so the walk costs at most one visit per entry."""
        dirs_out: list[str] = []
        files_out: list[tuple[str, RomfsFile]] = []
        seen_dirs, seen_files = {0}, set()
        stack = [(self.root(), "")]
        while stack:
            d, prefix = stack.pop()
            dirs_out.append(prefix or "/")
            dirs, files = self.children(d)
            for c in dirs:
                if c.offset in seen_dirs:
                    raise self.r.error(
                        "DirMetaTable",
                        self.tables["DirMetaTable"][0] + c.offset,
                        f"directory {c.offset:#x} is reachable twice (the tree has a cycle)",
                    )
                seen_dirs.add(c.offset)
            names: set[str] = set()
            for e, table in [(c, "DirMetaTable") for c in dirs] + [(f, "FileMetaTable") for f in files]:
                if e.parent != d.offset:
                    raise self.r.error(
                        table,
                        self.tables[table][0] + e.offset,
                        f"{e.name!r} is listed by directory {d.offset:#x} but names {e.parent:#x} as its parent",
                    )
                if e.name in names or not e.name or "/" in e.name:
                    raise self.r.error(
                        table,
                        self.tables[table][0] + e.offset,
                        f"name {e.name!r} in {prefix or '/'} is empty, has a '/', or appears twice",
                    )
                names.add(e.name)
            for f in files:
                if f.offset in seen_files:
                    raise self.r.error(
                        "FileMetaTable",
                        self.tables["FileMetaTable"][0] + f.offset,
                        f"file entry {f.offset:#x} is listed by two directories",
                    )
                seen_files.add(f.offset)
                files_out.append((f"{prefix}/{f.name}", f))
            stack.extend((c, f"{prefix}/{c.name}") for c in reversed(dirs))
        self._check_hashed([d for d in seen_dirs if d != 0], [f for _, f in files_out])
        return dirs_out, files_out

    def _chains(self, hash_table: str, at, meta_table: str, entry_size: int) -> dict[int, int]:
        """entry offset -> bucket whose chain holds it; an entry in two chains is an error.
        One walk per bucket with a shared seen-set keeps this linear in the table size."""
        t = self._table(hash_table)
        where: dict[int, int] = {}
        for b in range(len(t) // 4):
            cur = t.u32(f"{hash_table} bucket", 4 * b)
            while cur != EMPTY:
                if cur in where:
                    raise self.r.error(
                        meta_table,
                        self.tables[meta_table][0] + cur,
                        f"entry {cur:#x} is reached twice through {hash_table} (a chain loops or merges)",
                    )
                where[cur] = b
                cur = at(cur).hash_next
        return where

    def _check_hashed(self, dir_offsets: list[int], files: list[RomfsFile]) -> None:
        """Every listed entry must be found where a lookup by name will search for it."""
        for table, meta, at, size, entries in (
            ("DirHashTable", "DirMetaTable", self.dir_at, DIR_ENTRY_SIZE, [self.dir_at(o) for o in dir_offsets]),
            ("FileHashTable", "FileMetaTable", self.file_at, FILE_ENTRY_SIZE, files),
        ):
            if not entries:
                continue
            n = self.tables[table][1] // 4
            if n == 0:
                raise self.r.error(f"{table}Size", 0, f"{table} is empty but {meta} has entries")
            where = self._chains(table, at, meta, size)
            for e in entries:
                if where.get(e.offset) != path_hash(e.parent, e.name.encode()) % n:
                    raise self.r.error(
                        table, self.tables[table][0], f"entry {e.name!r} at {e.offset:#x} of {meta} is not in its hash bucket"
                    )

    def list_files(self) -> list[tuple[str, RomfsFile]]:
        return self.tree()[1]

    def list_dirs(self) -> list[str]:
        return self.tree()[0]

    # -- lookup through the hash tables -----------------------------------------
    def _bucket(self, table: str, parent: int, name: str) -> int:
        t = self._table(table)
        n = len(t) // 4
        if n == 0:
            return EMPTY
        return t.u32(f"{table} bucket", 4 * (path_hash(parent, name.encode()) % n))

    def _find_dir(self, parent: int, name: str) -> RomfsDir | None:
        first = self._bucket("DirHashTable", parent, name)
        for e in self._walk(first, self.dir_at, "DirMetaTable", DIR_ENTRY_SIZE, "hash chain"):
            if e.parent == parent and e.name == name:
                return e
        return None

    def _find_file(self, parent: int, name: str) -> RomfsFile | None:
        first = self._bucket("FileHashTable", parent, name)
        for e in self._walk(first, self.file_at, "FileMetaTable", FILE_ENTRY_SIZE, "hash chain"):
            if e.parent == parent and e.name == name:
                return e
        return None

    def lookup(self, path: str) -> RomfsFile:
        """The file at ``path`` ("/a/b.bin"); KeyError when there is none."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            raise KeyError(path)
        d = 0
        for p in parts[:-1]:
            e = self._find_dir(d, p)
            if e is None:
                raise KeyError(path)
            d = e.offset
        f = self._find_file(d, parts[-1])
        if f is None:
            raise KeyError(path)
        return f

    def read(self, path: str) -> bytes:
        f = self.lookup(path)
        start = self.data_offset + f.data_offset
        return bytes(self.r.data[start : start + f.size])


def parse_romfs(data: bytes | bytearray | memoryview, path: str = "<romfs>") -> Romfs:
    r = BinReader(data, path)
    r.check("header", 0, HEADER_SIZE)
    hsize = r.u64("HeaderSize", 0)
    if hsize != HEADER_SIZE:
        raise r.error("HeaderSize", 0, f"header size {hsize:#x} is not {HEADER_SIZE:#x}")
    tables = {}
    for i, name in enumerate(TABLES):
        off, size = r.u64(f"{name}Offset", 8 + 16 * i), r.u64(f"{name}Size", 16 + 16 * i)
        r.check(f"{name}Offset/{name}Size", off, size)
        if size % 4:
            raise r.error(f"{name}Size", 16 + 16 * i, f"size {size:#x} is not a multiple of 4")
        tables[name] = (off, size)
    data_off = r.u64("FileDataOffset", 0x48)
    if data_off > len(r):
        raise r.error("FileDataOffset", 0x48, f"file data offset {data_off:#x} is past the end of the image")
    fs = Romfs(path, r, tables, data_off)
    root = fs.root()
    if root.name or root.parent != 0:
        raise r.error("DirMetaTable[0x0]", tables["DirMetaTable"][0], "the first directory entry is not the root")
    return fs
