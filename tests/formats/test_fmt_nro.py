"""NRO0 with and without ASET: field-by-field files and round trips through ``pack_nro``."""

from __future__ import annotations

import struct

import pytest

from tests.formats import fmt_fieldwise as F
from nxrecomp.common.errors import NxError
from recompiler.formats.nro import parse_nro
from recompiler.formats.pack_nacp import pack_nacp
from recompiler.formats.pack_nro import NroAssets, pack_nro
from recompiler.formats.pack_romfs import pack_romfs
from recompiler.formats.romfs import parse_romfs


def _module():
    text, ro, data, bss = F.module_image()
    return text, ro, data, bss


def test_without_aset() -> None:
    text, ro, data, bss = _module()
    m = parse_nro(F.nro_file(text, ro, data, bss, assets=None), "hb.nro")
    assert m.assets is None and m.size == 0x2000 + len(data)
    assert m.image[0x80:0x1000] == text[0x80:] and m.image[0x1000:0x2000] == ro
    assert m.mod0 is not None and m.mod0.dynamic == 0x2000
    assert [s.name for s in m.dynamic.symbols] == ["", "nnMain", "malloc", "g_counter"]
    assert len(m.dynamic.relocations) == 4 and m.bss_size == bss
    assert m.build_id == b"\xcd" * 20 + bytes(12)


def test_with_aset() -> None:
    text, ro, data, bss = _module()
    icon = b"\xff\xd8\xff\xe0" + bytes(100)
    nacp = F.nacp_blob("Demo Game", "nxrecomp", "1.2.3")
    romfs = F.small_romfs()
    blob = F.nro_file(text, ro, data, bss, assets=(icon, nacp, romfs))
    m = parse_nro(blob, "hb.nro")
    a = m.assets
    assert a is not None and a.offset == m.size
    assert blob[a.icon.offset : a.icon.offset + a.icon.size] == icon
    assert a.nacp_info is not None and a.nacp_info.name == "Demo Game"
    assert a.nacp_info.titles["Japanese"] == ("Demo Game", "nxrecomp") and a.nacp_info.display_version == "1.2.3"
    fs = parse_romfs(blob[a.romfs.offset : a.romfs.offset + a.romfs.size])
    assert {p: fs.read(p) for p, _ in fs.list_files()} == F.SMALL_ROMFS_FILES


def test_round_trip_with_and_without_assets() -> None:
    text, ro, data, bss = _module()
    for assets in (None, NroAssets(b"icon", pack_nacp("T", "P", "9.9"), pack_romfs({"/a/b": b"c"}))):
        blob = pack_nro(text, ro, data, bss_size=bss, build_id=b"\x42" * 20, assets=assets)
        m = parse_nro(blob)
        assert m.image[:0x10] == text[:0x10] and m.image[0x2000:] == data
        assert len(m.dynamic.relocations) == 4
        if assets is None:
            assert m.assets is None
        else:
            assert m.assets.nacp_info.titles["AmericanEnglish"] == ("T", "P")
            r = m.assets.romfs
            assert parse_romfs(blob[r.offset : r.offset + r.size]).read("/a/b") == b"c"


@pytest.mark.parametrize(
    "at,val,msg",
    [
        (0x18, 0x10, "field Size"),
        (0x18, 0x100000, "field Size"),
        (0x34, 0x100000, "field data.Size"),
        (0x28, 0x800, "field header.rodata.MemoryOffset, offset 0x28"),
        (0x24, 0x40, "field text.Size, offset 0x24: .text is 0x40 bytes"),
    ],
)
def test_bad_headers(at, val, msg) -> None:
    text, ro, data, bss = _module()
    blob = bytearray(F.nro_file(text, ro, data, bss, assets=None))
    struct.pack_into("<I", blob, at, val)
    with pytest.raises(NxError, match=msg):
        parse_nro(bytes(blob), "hb.nro")


def test_bad_aset() -> None:
    text, ro, data, bss = _module()
    blob = bytearray(F.nro_file(text, ro, data, bss, assets=(b"i", F.nacp_blob("a", "b", "c"), b"")))
    size = struct.unpack_from("<I", blob, 0x18)[0]
    struct.pack_into("<Q", blob, size + 0x20, 0x8000)  # nacp size past the end
    with pytest.raises(NxError, match="ASET.nacp"):
        parse_nro(bytes(blob), "hb.nro")
    struct.pack_into("<Q", blob, size + 0x20, 0x10)  # a NACP must be 0x4000 bytes
    with pytest.raises(NxError, match="NACP"):
        parse_nro(bytes(blob), "hb.nro")
