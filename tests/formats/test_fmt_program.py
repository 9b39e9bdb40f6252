"""The inputs ``nxrecomp build`` takes (issue 30 part 1), on small modules made here with the
format packers: a lone NSO, an NRO, a PFS0; the default main.npdm; dynamic tables that point
outside the image ("no symbols", fatal only where a relocation needs a symbol); libnx's MOD0
extension (LNY0/LNY1, facts from libnx's Mod0Header); who relocates a module (its own crt0
when nothing else would: the bytes stay as stored, the relocations only seed the analysis)."""

from __future__ import annotations

import logging
import struct

import pytest

from nxrecomp.common.errors import NxError
from recompiler.formats.elfdyn import parse_dynamic
from recompiler.formats.module import read_mod0
from recompiler.formats.pack_nso import pack_nso
from recompiler.formats.pack_pfs0 import pack_pfs0
from recompiler.formats.program import load_program
from recompiler.horizon import link_exefs

R_ABS64, R_RELATIVE = 257, 1027
DT_NULL, DT_RELA, DT_RELASZ, DT_RELAENT, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT = 0, 7, 8, 9, 5, 6, 10, 11
B_PLUS_8 = 0x14000002  # b .+8


def _module(
    *, lny: bool = False, relocs: list[tuple[int, int, int]] | None = None, extra_dyn: list[tuple[int, int]] | None = None
) -> bytes:
    """An NSO: .text 0x1000 (a branch, the MOD0 offset), .rodata with MOD0 (+ libnx's LNY0/LNY1
    when ``lny``) and the RELA table, .data with .dynamic and a pointer word at data+0x100."""
    text = bytearray(0x1000)
    struct.pack_into("<II", text, 0, B_PLUS_8, 0x1000)
    text[8:12] = struct.pack("<I", 0xD65F03C0)  # ret
    ro = bytearray(0x200)
    mod0 = 0x1000
    ro[0:4] = b"MOD0"
    # dynamic at 0x2000, bss at the end of data (0x2200), eh_frame_hdr empty, no module object
    struct.pack_into("<iiiiii", ro, 4, 0x2000 - mod0, 0x2200 - mod0, 0x2200 - mod0, 0, 0, 0)
    if lny:
        ro[0x1C:0x20] = b"LNY0"
        struct.pack_into("<ii", ro, 0x20, 0x2180 - mod0, 0x21C0 - mod0)  # GOT
        ro[0x28:0x2C] = b"LNY1"
        struct.pack_into("<ii", ro, 0x2C, 0x2100 - mod0, 0x2200 - mod0)  # RELRO
    relocs = relocs if relocs is not None else [(0x2100, R_RELATIVE, 0, 0x8)]
    for i, (off, typ, sym, add) in enumerate(relocs):
        struct.pack_into("<QQq", ro, 0x100 + 24 * i, off, sym << 32 | typ, add)
    data = bytearray(0x200)
    dyn = [(DT_RELA, 0x1100), (DT_RELASZ, 24 * len(relocs)), (DT_RELAENT, 24)] + (extra_dyn or []) + [(DT_NULL, 0)]
    for i, (tag, val) in enumerate(dyn):
        struct.pack_into("<qQ", data, 16 * i, tag, val)
    return pack_nso(bytes(text), bytes(ro), bytes(data), compress=False)


def test_lone_nso_gets_the_default_npdm_and_keeps_its_bytes(tmp_path, capsys) -> None:
    f = tmp_path / "prog.nso"
    f.write_bytes(_module())
    prog = load_program(f)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "no main.npdm: using the default" in out
    npdm = prog.exefs.npdm
    assert (prog.kind, prog.npdm_default, prog.homebrew_abi) == ("nso", True, "nso")
    assert (
        npdm.address_space,
        npdm.main_thread_priority,
        npdm.main_thread_core,
        npdm.main_thread_stack_size,
        [s.name for s in npdm.aci0.access.services],
    ) == (3, 44, 0, 0x100000, ["*"])
    image, _host = link_exefs(prog.exefs)
    data = next(s for s in image.segments if "w" in s.prot)
    base = data.vaddr - 0x2000
    # the crt0 relocates: the word is still what the file stored; its target seeds the analysis
    assert struct.unpack_from("<Q", data.data, 0x100)[0] == 0
    assert base + 0x8 in image.func_hints


def test_two_modules_without_the_mark_are_linked_by_the_host(tmp_path) -> None:
    """Our own SDK's layout (main + sdk, no rtld, no LNY0): the host plays rtld."""
    d = tmp_path / "exefs"
    d.mkdir()
    (d / "main").write_bytes(_module())
    (d / "sdk").write_bytes(_module())
    prog = load_program(d)
    assert prog.homebrew_abi is None
    image, _host = link_exefs(prog.exefs)
    for seg in (s for s in image.segments if "w" in s.prot):
        base = seg.vaddr - 0x2000
        assert struct.unpack_from("<Q", seg.data, 0x100)[0] == base + 0x8


def test_libnx_mark_makes_each_module_relocate_itself(tmp_path) -> None:
    d = tmp_path / "exefs"
    d.mkdir()
    (d / "main").write_bytes(_module(lny=True))
    (d / "subsdk0").write_bytes(_module(lny=True))
    prog = load_program(tmp_path / "exefs")
    main = dict(prog.exefs.modules)["main"]
    assert (main.mod0.got, main.mod0.relro, main.mod0.homebrew) == ((0x2180, 0x21C0), (0x2100, 0x2200), True)
    assert prog.homebrew_abi == "nso"
    image, _ = link_exefs(prog.exefs)
    assert all(struct.unpack_from("<Q", s.data, 0x100)[0] == 0 for s in image.segments if "w" in s.prot)


def test_pfs0_input(tmp_path) -> None:
    f = tmp_path / "exefs.nsp"
    f.write_bytes(pack_pfs0({"main": _module(), "sdk": _module()}))
    prog = load_program(f)
    assert prog.kind == "pfs0" and [n for n, _ in prog.exefs.modules] == ["main", "sdk"]


def test_lny_range_outside_the_module_is_named() -> None:
    img = bytearray(0x100)
    struct.pack_into("<I", img, 4, 0x40)
    img[0x40:0x44] = b"MOD0"
    img[0x5C:0x60] = b"LNY0"
    struct.pack_into("<ii", img, 0x60, 0, 0x10000)
    with pytest.raises(NxError) as e:
        read_mod0(bytes(img), len(img), "m.nso")
    assert e.value.field == "MOD0.LNY0"


def test_symbol_table_outside_the_image_means_no_symbols(caplog) -> None:
    img = bytearray(0x400)
    dyn = [
        (DT_SYMTAB, 0x10000),
        (DT_STRTAB, 0x10100),
        (DT_STRSZ, 1),
        (DT_SYMENT, 24),
        (DT_RELA, 0x200),
        (DT_RELASZ, 24),
        (DT_RELAENT, 24),
        (DT_NULL, 0),
    ]
    for i, (t, v) in enumerate(dyn):
        struct.pack_into("<qQ", img, 0x100 + 16 * i, t, v)
    struct.pack_into("<QQq", img, 0x200, 0x300, R_RELATIVE, 0x10)
    with caplog.at_level(logging.WARNING, logger="formats"):
        d = parse_dynamic(bytes(img), 0x100, "lt.nso")
    assert d.symbols == [] and "DT_SYMTAB 0x10000 points outside the image" in d.symbols_missing
    assert any("no symbols" in r.getMessage() for r in caplog.records)
    assert [(r.offset, r.type) for r in d.relocations] == [(0x300, R_RELATIVE)]


def test_a_relocation_that_needs_a_missing_symbol_is_fatal_where_applied(tmp_path) -> None:
    """A lone module whose symbol table lies outside it relocates itself when its relocations
    name no symbol (libtransistor's case); one that names a symbol needs a linker, which fails
    naming the relocation."""
    outside = [(DT_SYMTAB, 0x90000), (DT_STRTAB, 0x90100), (DT_STRSZ, 1)]
    ok = tmp_path / "ok.nso"
    ok.write_bytes(_module(extra_dyn=outside))
    assert load_program(ok).homebrew_abi == "nso"
    bad = tmp_path / "bad.nso"
    bad.write_bytes(_module(relocs=[(0x2100, R_ABS64, 1, 0)], extra_dyn=outside))
    prog = load_program(bad)
    assert prog.homebrew_abi is None
    with pytest.raises(NxError) as e:
        link_exefs(prog.exefs)
    assert "symbol index 1" in str(e.value) and e.value.field == "r_info"


def test_not_a_program(tmp_path) -> None:
    f = tmp_path / "x.bin"
    f.write_bytes(b"\0" * 64)
    with pytest.raises(NxError) as e:
        load_program(f)
    assert "not a program nxrecomp build takes" in str(e.value)
