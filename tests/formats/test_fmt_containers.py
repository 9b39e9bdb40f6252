"""PFS0 / ExeFS and RomFS: field-by-field files, round trips, lookups through the hash tables,
and cyclic or out-of-range tables refused with named fields."""

from __future__ import annotations

import random
import struct

import pytest

from tests.formats import fmt_fieldwise as F
from nxrecomp.common.errors import NxError
from recompiler.formats.pack_pfs0 import pack_pfs0
from recompiler.formats.pack_romfs import hash_table_count, pack_romfs
from recompiler.formats.pfs0 import parse_pfs0
from recompiler.formats.romfs import parse_romfs


# ---------------------------------------------------------------- PFS0
def test_pfs0_fieldwise() -> None:
    files = [("main", b"\x01" * 33), ("main.npdm", b"META"), ("sdk", b""), ("subsdk0", b"xyz")]
    p = parse_pfs0(F.pfs0_file(files), "exefs.nsp")
    assert p.names() == [n for n, _ in files]
    assert {n: p.read(n) for n in p.names()} == dict(files)


def test_pfs0_round_trip_aligns_data() -> None:
    files = {"main": bytes(range(200)), "main.npdm": b"npdm", "rtld": b"r" * 7}
    blob = pack_pfs0(files)
    p = parse_pfs0(blob)
    assert p.data_offset % 0x20 == 0
    assert {n: p.read(n) for n in p.names()} == files


def test_pfs0_errors() -> None:
    good = F.pfs0_file([("main", b"1234"), ("sdk", b"56")])
    cases = [
        (b"PFS1" + good[4:], "field Magic"),
        (good[:0x10], "field entries"),
        (good[:4] + struct.pack("<I", 1000) + good[8:], "field entries"),
        (good[:8] + struct.pack("<I", 0x1000) + good[12:], "field StringTable"),
        (bytearray(good), None),
    ]
    bad_size = bytearray(good)
    struct.pack_into("<Q", bad_size, 0x10 + 8, 0x100)
    cases[-1] = (bytes(bad_size), r"entry\[0\] \(main\) Offset/Size")
    bad_name = bytearray(good)
    struct.pack_into("<I", bad_name, 0x10 + 0x18 + 16, 0x40)
    cases.append((bytes(bad_name), r"entry\[1\].StringOffset"))
    dup = F.pfs0_file([("main", b"1"), ("main", b"2")])
    cases.append((dup, "appears twice"))
    for blob, msg in cases:
        with pytest.raises(NxError, match=msg):
            parse_pfs0(blob, "exefs.nsp")


# ---------------------------------------------------------------- RomFS
def test_romfs_fieldwise() -> None:
    fs = parse_romfs(F.small_romfs(), "game.romfs")
    dirs, files = fs.tree()
    assert dirs == ["/", "/data"]
    assert [p for p, _ in files] == ["/hello.txt", "/data/blob.bin"]
    for p, want in F.SMALL_ROMFS_FILES.items():
        assert fs.read(p) == want
    with pytest.raises(KeyError):
        fs.read("/data/nothing")
    with pytest.raises(KeyError):
        fs.read("/nodir/blob.bin")


def test_romfs_round_trip_many_files() -> None:
    rnd = random.Random(7)
    files = {}
    for i in range(300):
        depth = rnd.randint(0, 3)
        parts = [f"d{rnd.randint(0, 5)}" for _ in range(depth)] + [f"file_{i}.{rnd.choice(['bin', 'txt', 'dat'])}"]
        files["/" + "/".join(parts)] = rnd.randbytes(rnd.randint(0, 300))
    files["/ユニコード/名前.txt"] = "utf-8 names".encode()
    blob = pack_romfs(files, directories=["/empty/dir"])
    fs = parse_romfs(blob, "game.romfs")
    dirs, listed = fs.tree()
    assert {p for p, _ in listed} == set(files)
    assert "/empty/dir" in dirs
    for p, want in files.items():
        assert fs.read(p) == want
    # The builder's hash tables are what a reader that only hashes must find.
    assert hash_table_count(len(listed)) == fs.tables["FileHashTable"][1] // 4


def test_hash_table_counts() -> None:
    assert [hash_table_count(n) for n in (0, 2, 3, 4, 18, 19, 20)] == [3, 3, 3, 5, 19, 19, 23]
    assert hash_table_count(300) == 307  # first count >= 300 with no prime factor up to 17


def _romfs_tables(blob: bytes) -> dict[str, tuple[int, int]]:
    names = ("dh", "dm", "fh", "fm")
    return {n: struct.unpack_from("<QQ", blob, 8 + 16 * i) for i, n in enumerate(names)}


def test_romfs_cycles_and_ranges_are_refused() -> None:
    good = F.small_romfs()
    t = _romfs_tables(good)
    dm, fm = t["dm"][0], t["fm"][0]
    cases = []
    b = bytearray(good)  # "data" lists root as its child directory: a cycle
    struct.pack_into("<I", b, dm + 0x18 + 8, 0)
    cases.append((b, "reachable twice"))
    b = bytearray(good)  # root's sibling list loops on itself through "data"
    struct.pack_into("<I", b, dm + 0x18 + 4, 0x18)
    cases.append((b, "loops back"))
    b = bytearray(good)  # a file whose sibling is itself
    struct.pack_into("<I", b, fm + 4, 0)
    cases.append((b, "loops back"))
    b = bytearray(good)  # file data past the end of the image
    struct.pack_into("<Q", b, fm + 16, 0x100000)
    cases.append((b, r"FileMetaTable\[0x0\] data"))
    b = bytearray(good)  # name size past its table
    struct.pack_into("<I", b, dm + 0x18 + 0x14, 0x400)
    cases.append((b, r"DirMetaTable\[0x18\].Name"))
    b = bytearray(good)
    struct.pack_into("<Q", b, 0x10, 0x10000)
    cases.append((b, "DirHashTableSize"))
    b = bytearray(good)
    struct.pack_into("<Q", b, 0, 0x40)
    cases.append((b, "field HeaderSize"))
    for blob, msg in cases:
        with pytest.raises(NxError, match=msg) as e:
            fs = parse_romfs(bytes(blob), "game.romfs")
            fs.tree()
        assert str(e.value).startswith("game.romfs")


def test_romfs_hash_chain_cycle_is_refused() -> None:
    good = F.small_romfs()
    fm = _romfs_tables(good)["fm"][0]
    b = bytearray(good)
    struct.pack_into("<I", b, fm + 0x18, 0)  # hello.txt's hash-next is itself
    fs = parse_romfs(bytes(b), "game.romfs")
    bucket = F.romfs_hash(0, b"hello.txt") % 3
    other = next(f"x{i}" for i in range(100) if F.romfs_hash(0, f"x{i}".encode()) % 3 == bucket)
    with pytest.raises(NxError, match="loops back"):
        fs.read("/" + other)
