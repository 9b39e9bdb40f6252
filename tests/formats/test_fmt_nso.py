"""NSO0: files built field by field (segments compressed by the reference liblz4), round trips
through ``pack_nso``, and malformed headers that must name the field and offset."""

from __future__ import annotations

import hashlib
import struct

import pytest

from tests.formats import fmt_fieldwise as F
from nxrecomp.common.errors import NxError
from recompiler.formats.nso import parse_nso
from recompiler.formats.pack_nso import pack_nso


def _check_dynamic(m) -> None:
    d = m.dynamic
    assert d is not None and d.needed == ["libc.so"]
    assert [(s.name, s.value, s.size, s.type_name, s.binding_name, s.section) for s in d.symbols] == [
        ("", 0, 0, "NOTYPE", "LOCAL", 0),
        ("nnMain", 0x200, 0x40, "FUNC", "GLOBAL", 7),
        ("malloc", 0, 0, "FUNC", "GLOBAL", 0),
        ("g_counter", 0x2200, 8, "OBJECT", "WEAK", 20),
    ]
    assert [(r.offset, r.type, r.symbol, r.addend) for r in d.relocations] == F.RELA + F.JMPREL
    assert [r.type_name for r in d.relocations] == ["RELATIVE", "GLOB_DAT", "ABS64", "JUMP_SLOT"]
    assert [s.name for s in d.imports] == ["malloc"]
    assert {s.name for s in d.exports} == {"nnMain", "g_counter"}
    assert d.get("INIT") == 0x400 and d.get("FINI") == 0x480 and d.array("INIT_ARRAY") == (0x2120, 8)
    assert d.get("PLTREL") == 7 and d.get("GNU_HASH") is None


def test_compressed_while_flags_say_not() -> None:
    text, ro, data, bss = F.module_image()
    blob = F.nso_file(text, ro, data, bss, flags=0, compress=(True, True, True))
    m = parse_nso(blob, "main")
    assert [s.compressed for s in m.segments] == [True, True, True]
    assert [s.hash_checked for s in m.segments] == [False, False, False]
    assert m.image[:0x1000] == text and m.image[0x1000:0x2000] == ro and m.image[0x2000:] == data
    assert m.bss_size == bss and m.name == "fieldwise" and m.build_id == b"\xab" * 20 + bytes(12)
    assert m.mod0 is not None and m.mod0.offset == F.MOD0_AT and m.mod0.dynamic == F.DATA_OFF
    assert (m.mod0.bss_start, m.mod0.bss_end) == (0x2300, 0x2600)
    assert m.module.memory_size == 0x2600
    _check_dynamic(m)


def test_mixed_compression_with_hash_checks() -> None:
    text, ro, data, bss = F.module_image()
    blob = F.nso_file(text, ro, data, bss, flags=0b111_010, compress=(False, True, False))
    m = parse_nso(blob)
    assert [s.compressed for s in m.segments] == [False, True, False]
    assert all(s.hash_checked for s in m.segments)
    _check_dynamic(m)


def test_without_mod0_loads_and_uses_header_dynsym() -> None:
    text, ro, data, bss = F.module_image(with_mod0=False)
    blob = F.nso_file(
        text, ro, data, bss, flags=0x3F, compress=(True, True, True), dynsym=(0, 24 * len(F.SYMS)), dynstr=(0x100, len(F.STRTAB))
    )
    m = parse_nso(blob)
    assert m.mod0 is None and m.dynamic is None
    assert [s.name for s in m.symbols] == ["", "nnMain", "malloc", "g_counter"]
    assert m.dynsym == (0, 96) and m.dynstr == (0x100, len(F.STRTAB))


def test_hash_mismatch_is_refused_only_when_checked() -> None:
    text, ro, data, bss = F.module_image()
    wrong = (hashlib.sha256(text).digest(), bytes(32), hashlib.sha256(data).digest())
    blob = F.nso_file(text, ro, data, bss, flags=0b010_000, compress=(True, True, True), hashes=wrong)
    with pytest.raises(NxError, match="rodataHash.*offset 0xc0.*SHA-256") as e:
        parse_nso(blob, "main")
    assert str(e.value).startswith("main")
    parse_nso(F.nso_file(text, ro, data, bss, flags=0b101_000, compress=(True, True, True), hashes=wrong))


@pytest.mark.parametrize("compress", [True, False, (True, False, True)])
@pytest.mark.parametrize("hashed", [True, False])
def test_round_trip(compress, hashed) -> None:
    text, ro, data, bss = F.module_image()
    blob = pack_nso(text, ro, data, bss_size=bss, build_id=b"\x11" * 20, name="main", compress=compress, hash_check=hashed)
    m = parse_nso(blob)
    want = (compress,) * 3 if isinstance(compress, bool) else compress
    assert tuple(s.compressed for s in m.segments) == want
    assert all(s.hash_checked == hashed for s in m.segments)
    assert m.name == "main" and m.build_id[:20] == b"\x11" * 20
    assert [s.mem_offset for s in m.segments] == [0, 0x1000, 0x2000]
    _check_dynamic(m)


def test_round_trip_flags_override_and_layout() -> None:
    text, ro, data, bss = F.module_image()
    blob = pack_nso(text, ro, data, bss_size=bss, compress=True, flags=0)
    assert struct.unpack_from("<I", blob, 0xC)[0] == 0
    assert parse_nso(blob).image[: len(text)] == text


def test_incompressible_flagged_segment_of_equal_size() -> None:
    # A flagged segment whose stored size equals its size is taken raw when LZ4 does not fit.
    text, ro, data, bss = F.module_image()
    blob = F.nso_file(text, ro, data, bss, flags=0x3F, compress=(False, False, False))
    m = parse_nso(blob)
    assert [s.compressed for s in m.segments] == [False] * 3
    _check_dynamic(m)


def _patch(blob: bytes, at: int, fmt: str, *vals) -> bytes:
    b = bytearray(blob)
    struct.pack_into(fmt, b, at, *vals)
    return bytes(b)


@pytest.mark.parametrize(
    "at,fmt,val,msg",
    [
        (0x0, "<4s", b"NSO1", "field Magic, offset 0x0: bad magic"),
        (0xC, "<I", 0x40, "field Flags"),
        (0x10, "<I", 0x7FFFFFF0, "field text.FileOffset/FileSize"),
        (0x14, "<I", 0x10, "field header.text.MemoryOffset, offset 0x14"),
        (0x24, "<I", 0x800, "field header.rodata.MemoryOffset, offset 0x24.*overlaps .text"),
        (0x34, "<I", 0x7000000, "field header.data, offset 0x34.*module would span"),
        (0x60, "<I", 0x100000, "field text.FileOffset/FileSize"),
        (0x1C, "<I", 0x10000, "field ModuleName"),
        (0x98, "<II", (0x800, 0x1000), "field DynSymOffset.*runs past .rodata"),
    ],
)
def test_bad_headers_name_field_and_offset(at, fmt, val, msg) -> None:
    text, ro, data, bss = F.module_image()
    blob = F.nso_file(text, ro, data, bss, flags=0x3F, compress=(True, True, True))
    vals = val if isinstance(val, tuple) else (val,)
    with pytest.raises(NxError, match=msg) as e:
        parse_nso(_patch(blob, at, fmt, *vals), "main")
    assert str(e.value).startswith("main, field ")


def test_truncated_and_damaged_segments() -> None:
    text, ro, data, bss = F.module_image()
    blob = F.nso_file(text, ro, data, bss, flags=0x3F, compress=(True, True, True))
    with pytest.raises(NxError, match="header"):
        parse_nso(blob[:0x80], "main")
    with pytest.raises(NxError, match="run past the end"):
        parse_nso(blob[:-10], "main")
    text_off = struct.unpack_from("<I", blob, 0x10)[0]
    bad = bytearray(blob)
    bad[text_off] = 0x00  # token: no literals, match with offset from the next bytes
    with pytest.raises(NxError, match=r"text segment \(LZ4\)|SHA-256"):
        parse_nso(bytes(bad), "main")


def test_bad_dynamic_is_named() -> None:
    text, ro, data, bss = F.module_image()
    data = bytearray(data)
    struct.pack_into("<qQ", data, 16 * 7, 8, 0x5000)  # DT_RELASZ far past the image
    with pytest.raises(NxError, match="rela"):
        parse_nso(F.nso_file(text, ro, bytes(data), bss, flags=0, compress=(True, True, True)), "main")
    data2 = bytearray(F.module_image()[2])
    struct.pack_into("<qQ", data2, 16 * 16, 12, 1)  # overwrite DT_NULL: no terminator before image end
    for i in range(17, len(data2) // 16):
        struct.pack_into("<qQ", data2, 16 * i, 21, 0)
    with pytest.raises(NxError, match="no DT_NULL"):
        parse_nso(F.nso_file(text, ro, bytes(data2), bss, flags=0, compress=(True, True, True)), "main")


def test_damaged_tables_in_a_large_image_fail_fast() -> None:
    """16 MiB of compressible damage: a .dynamic with no DT_NULL, and a GNU hash table whose
    chains never end, must be refused at once (not read entry by entry to the image end)."""
    import time

    text, ro, _, _ = F.module_image()
    big = 16 << 20
    no_null = bytearray(struct.pack("<qQ", 21, 0) * (big // 16))  # DT_DEBUG forever
    gnu = bytearray(big)  # zeroes: chains never end
    dyn_at = big - 0x100
    struct.pack_into("<qQqQqQqQqQ", gnu, dyn_at, 0x6FFFFEF5, 0x2000, 6, 0x1000, 5, 0x1100, 10, 1, 0, 0)
    struct.pack_into("<IIII", gnu, 0, 1, 1, 1, 0)  # nbuckets 1, symoffset 1, bloom 1
    struct.pack_into("<I", gnu, 0x18, 1)  # bucket[0] -> symbol 1
    for data, msg in ((no_null, "more than 4096 entries"), (gnu, "DT_GNU_HASH|DT_SYMTAB.*run past the end")):
        mod0_text = bytearray(text)
        struct.pack_into("<i", mod0_text, F.MOD0_AT + 4, 0x2000 + (dyn_at if data is gnu else 0) - F.MOD0_AT)
        blob = pack_nso(bytes(mod0_text), ro, bytes(data), hash_check=False)
        assert len(blob) < big // 100
        t0 = time.monotonic()
        with pytest.raises(NxError, match=msg):
            parse_nso(blob, "big")
        assert time.monotonic() - t0 < 3.0


def test_gnu_hash_chain_without_end() -> None:
    from recompiler.formats.elfdyn import parse_dynamic

    img = bytearray(1 << 20)
    struct.pack_into("<IIII", img, 0x2000, 1, 1, 1, 0)  # nbuckets 1, symoffset 1, bloom size 1
    struct.pack_into("<I", img, 0x2018, 1)  # bucket 0 -> symbol 1; chains all zero
    struct.pack_into("<qQqQqQqQqQ", img, 0x100, 0x6FFFFEF5, 0x2000, 6, 0x1000, 5, 0x1100, 10, 2, 0, 0)
    with pytest.raises(NxError, match="DT_GNU_HASH.chains, offset 0x201c: the last hash chain never ends"):
        parse_dynamic(bytes(img), 0x100, "x")
