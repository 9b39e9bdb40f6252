"""recompiler.elf against pyelftools and binutils' readelf on Debian's arm64 binaries (fetched
at test time), plus malformed files that must give one-line NxErrors naming file and field."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from nxrecomp.common import debian
from nxrecomp.common.errors import NxError
from recompiler.elf import PT_LOAD, load_elf, parse_elf

pytestmark = pytest.mark.network


def _deb(pkg: str) -> Path:
    try:
        return debian.fetch(pkg, "arm64")
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch {pkg}:arm64: {e}")


def _binaries() -> dict[str, Path]:
    gnu = "lib/aarch64-linux-gnu"
    return {
        "busybox": _deb("busybox-static") / "bin/busybox",
        "lua5.4": _deb("lua5.4") / "usr/bin/lua5.4",
        "liblua": _deb("liblua5.4-0") / "usr/lib/aarch64-linux-gnu/liblua5.4.so.0",
        "libc": _deb("libc6") / gnu / "libc.so.6",
        "libm": _deb("libc6") / gnu / "libm.so.6",
        "ld.so": _deb("libc6") / gnu / "ld-linux-aarch64.so.1",
    }


@pytest.fixture(scope="module")
def binaries() -> dict[str, Path]:
    return _binaries()


_PYELF_ALIAS = {"STT_GNU_IFUNC": "STT_LOOS", "STB_GNU_UNIQUE": "STB_LOOS"}
NAMES = ["busybox", "lua5.4", "liblua", "libc", "libm", "ld.so"]


@pytest.mark.parametrize("name", NAMES)
def test_headers_segments_tls_match_pyelftools(binaries, name):
    path = binaries[name]
    m = load_elf(path)
    with open(path, "rb") as f:
        ef = ELFFile(f)
        assert m.type == ef["e_type"][3:]
        assert m.entry == ef["e_entry"]
        assert (m.phoff, m.phent, m.phnum) == (ef["e_phoff"], ef["e_phentsize"], ef["e_phnum"])
        loads = [s for s in ef.iter_segments() if s["p_type"] == "PT_LOAD"]
        assert len(loads) == len(m.segments)
        for ours, ref in zip(m.segments, sorted(loads, key=lambda s: s["p_vaddr"])):
            assert (ours.vaddr, ours.memsz, ours.filesz, ours.flags, ours.offset) == (
                ref["p_vaddr"],
                ref["p_memsz"],
                ref["p_filesz"],
                ref["p_flags"],
                ref["p_offset"],
            )
            assert ours.data == ref.data()
        tls = [s for s in ef.iter_segments() if s["p_type"] == "PT_TLS"]
        if tls:
            assert (m.tls.vaddr, m.tls.filesz, m.tls.memsz, m.tls.align) == (
                tls[0]["p_vaddr"],
                tls[0]["p_filesz"],
                tls[0]["p_memsz"],
                tls[0]["p_align"],
            )
            assert m.tls.data == tls[0].data()
        else:
            assert m.tls is None
        phdr = [s for s in ef.iter_segments() if s["p_type"] == "PT_PHDR"]
        if phdr:
            assert m.phdr_vaddr == phdr[0]["p_vaddr"]
        else:  # static: headers sit in the first PT_LOAD, which maps file offset 0
            assert m.phdr_vaddr == loads[0]["p_vaddr"] + ef["e_phoff"]
        interp = [s for s in ef.iter_segments() if s["p_type"] == "PT_INTERP"]
        assert m.interp == (interp[0].get_interp_name() if interp else None)
        assert m.gnu_stack_flags == next(s["p_flags"] for s in ef.iter_segments() if s["p_type"] == "PT_GNU_STACK")
        secs = [(s.name, s["sh_addr"], s["sh_size"]) for s in ef.iter_sections()]
        assert [(s.name, s.addr, s.size) for s in m.sections] == secs
        for nm, attr in ((".eh_frame", "eh_frame"), (".eh_frame_hdr", "eh_frame_hdr"), (".gcc_except_table", "gcc_except_table")):
            s = ef.get_section_by_name(nm)
            if s is None:
                assert getattr(m, attr) is None
            else:
                assert getattr(m, attr) == (s["sh_addr"], s.data())
        text = ef.get_section_by_name(".text")
        assert any(a <= text["sh_addr"] and text["sh_addr"] + text["sh_size"] <= b for a, b in m.text_ranges)


@pytest.mark.parametrize("name", NAMES)
def test_dynamic_symbols_relocs_match_pyelftools(binaries, name):
    path = binaries[name]
    m = load_elf(path)
    with open(path, "rb") as f:
        ef = ELFFile(f)
        dsec = ef.get_section_by_name(".dynamic")
        if dsec is None:
            assert m.dynamic is None and m.dynsyms == []
        else:
            needed = [t.needed for t in dsec.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
            soname = [t.soname for t in dsec.iter_tags() if t.entry.d_tag == "DT_SONAME"]
            assert m.dynamic.needed == needed
            assert m.dynamic.soname == (soname[0] if soname else "")
            ref = list(ef.get_section_by_name(".dynsym").iter_symbols())
            assert len(ref) == len(m.dynsyms) > 10
            for ours, r in zip(m.dynsyms, ref):
                assert (ours.name, ours.value, ours.size) == (r.name, r["st_value"], r["st_size"])
                # pyelftools names the OS-specific values 10 by their range start (LOOS)
                assert _PYELF_ALIAS.get("STT_" + ours.type, "STT_" + ours.type) == r["st_info"]["type"]
                assert _PYELF_ALIAS.get("STB_" + ours.bind, "STB_" + ours.bind) == r["st_info"]["bind"]
                assert ours.shndx == (
                    0 if r["st_shndx"] == "SHN_UNDEF" else 0xFFF1 if r["st_shndx"] == "SHN_ABS" else r["st_shndx"]
                )
        ref_rel = []
        for s in ef.iter_sections():
            if isinstance(s, RelocationSection) and s["sh_flags"] & 2:
                ref_rel += [(r["r_offset"], r["r_info_type"], r["r_info_sym"], r["r_addend"]) for r in s.iter_relocations()]
        assert sorted((r.offset, r.type, r.sym, r.addend) for r in m.relocs) == sorted(ref_rel)
        assert len(m.relocs) > 0


def test_symbol_versions_match_readelf(binaries):
    """Default (name@@VER) vs hidden (name@VER) versions, as binutils prints them."""
    if not shutil.which("readelf"):
        pytest.skip("LOUD SKIP: binutils readelf not installed")
    path = binaries["libc"]
    m = load_elf(path)
    out = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[0].rstrip(":").isdigit():
            rows[int(parts[0].rstrip(":"))] = parts[7]
    checked = 0
    for i, s in enumerate(m.dynsyms):
        full = rows.get(i, "")
        if "@" not in full or not s.defined:
            continue
        hidden = "@@" not in full
        ver = full.split("@")[-1].split(" ")[0]
        assert (s.hidden_version, s.version) == (hidden, ver), (i, full)
        checked += 1
    assert checked > 2000
    assert any(s.hidden_version for s in m.dynsyms)


def test_without_section_headers_gnu_hash_and_eh_frame_hdr(binaries):
    """A file whose section headers are gone (e_shoff = e_shnum = 0) still yields every dynamic
    symbol (counted through DT_GNU_HASH) and .eh_frame (through PT_GNU_EH_FRAME)."""
    path = binaries["libc"]
    full = load_elf(path)
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, 0x28, 0)
    struct.pack_into("<HHH", data, 0x3A, 64, 0, 0)
    m = parse_elf(bytes(data), "stripped-libc")
    assert m.sections == []
    assert [(s.name, s.value) for s in m.dynsyms] == [(s.name, s.value) for s in full.dynsyms]
    assert m.eh_frame[0] == full.eh_frame[0]
    # the section may carry alignment padding past the terminator; our walk stops at the terminator
    assert full.eh_frame[1].startswith(m.eh_frame[1]) and len(m.eh_frame[1]) > 100000
    assert m.relocs == full.relocs


def test_static_busybox_irelative_and_layout(binaries):
    m = load_elf(binaries["busybox"])
    assert m.type == "EXEC" and m.dynamic is None and m.interp is None
    assert m.segments[0].vaddr == 0x400000
    assert {r.type for r in m.relocs} == {1032}  # R_AARCH64_IRELATIVE only
    for r in m.relocs:  # resolvers point into code, slots into writable data
        assert any(a <= r.addend < b for a, b in m.text_ranges)
        assert any(s.vaddr <= r.offset < s.vaddr + s.memsz and s.flags & 2 for s in m.segments)


# ---- malformed input -------------------------------------------------------------------------


def _one_line_error(data: bytes, tmp_path: Path, field: str) -> str:
    p = tmp_path / "bad.elf"
    p.write_bytes(data)
    with pytest.raises(NxError) as ei:
        load_elf(p)
    msg = str(ei.value)
    assert "\n" not in msg and str(p) in msg and field in msg, msg
    return msg


def test_not_an_elf(tmp_path):
    _one_line_error(b"#!/bin/sh\necho hi\n", tmp_path, "e_ident")


def test_empty_and_truncated_header(tmp_path, binaries):
    _one_line_error(b"", tmp_path, "e_ident")
    _one_line_error(binaries["busybox"].read_bytes()[:40], tmp_path, "e_ident")


def test_wrong_class_and_machine(tmp_path, binaries):
    data = bytearray(binaries["busybox"].read_bytes()[:4096])
    data[4] = 1
    _one_line_error(bytes(data), tmp_path, "EI_CLASS")
    data = bytearray(binaries["busybox"].read_bytes()[:4096])
    struct.pack_into("<H", data, 0x12, 62)  # EM_X86_64
    assert "not AArch64" in _one_line_error(bytes(data), tmp_path, "e_machine")


def test_amd64_busybox_is_rejected_by_machine(tmp_path):
    try:
        path = debian.busybox("amd64")
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable: {e}")
    with pytest.raises(NxError, match="e_machine"):
        load_elf(path)


def test_phdr_table_past_end(tmp_path, binaries):
    data = bytearray(binaries["busybox"].read_bytes()[:4096])
    struct.pack_into("<Q", data, 0x20, 4000)
    _one_line_error(bytes(data), tmp_path, "e_phoff")


def test_truncated_file_segment_past_end(tmp_path, binaries):
    data = binaries["busybox"].read_bytes()
    msg = _one_line_error(data[: len(data) // 2], tmp_path, "phdr[0].p_offset/p_filesz")
    assert "past the end" in msg


def test_segment_filesz_over_memsz(tmp_path, binaries):
    data = bytearray(binaries["busybox"].read_bytes())
    # phdr[0] is the first PT_LOAD: set its memsz below its filesz
    assert struct.unpack_from("<I", data, 0x40)[0] == PT_LOAD
    struct.pack_into("<Q", data, 0x40 + 40, 16)
    _one_line_error(bytes(data), tmp_path, "phdr[0].p_filesz")


def test_bad_section_name_index(tmp_path, binaries):
    data = bytearray(binaries["lua5.4"].read_bytes())
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<I", data, shoff + 64 * 3, 0x7FFFFFF)  # shdr[3].sh_name
    _one_line_error(bytes(data), tmp_path, "shdr[3].sh_name")


def test_dynamic_table_pointing_outside_file(tmp_path, binaries):
    data = bytearray(binaries["lua5.4"].read_bytes())
    m = load_elf(binaries["lua5.4"])
    dyn = next(s for s in m.sections if s.name == ".dynamic")
    for i in range(dyn.size // 16):  # move DT_JMPREL far away
        tag = struct.unpack_from("<q", data, dyn.offset + 16 * i)[0]
        if tag == 23:
            struct.pack_into("<Q", data, dyn.offset + 16 * i + 8, 0x7000000)
    _one_line_error(bytes(data), tmp_path, "DT_JMPREL")


def test_unreadable_path(tmp_path):
    with pytest.raises(NxError, match="cannot read"):
        load_elf(tmp_path / "missing")


def test_mutated_files_give_only_nxerror(binaries):
    """Random corruption of the headers and dynamic tables, and random truncation: the loader
    (and the linker, for the static program) either succeeds or raises a one-line NxError."""
    import random

    from recompiler.link import link

    rng = random.Random(20261129)
    for name in ("lua5.4", "busybox"):
        data = binaries[name].read_bytes()
        m0 = parse_elf(data, name)
        hot = [(0, 0x300)] + [
            (s.offset, min(s.size, 0x400))
            for s in m0.sections
            if s.name
            in (".dynamic", ".dynsym", ".gnu.version", ".gnu.version_d", ".gnu.version_r", ".gnu.hash", ".rela.dyn", ".rela.plt")
            and s.size
        ]
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        hot.append((shoff, 64 * len(m0.sections)))
        for it in range(300):
            d = bytearray(data)
            if it % 10 == 0:
                d = d[: rng.randrange(len(d))]
            else:
                for _ in range(rng.randint(1, 4)):
                    a, n = rng.choice(hot)
                    i = a + rng.randrange(n)
                    d[i] = rng.choice([0, 0xFF, rng.randrange(256), d[i] ^ (1 << rng.randrange(8))])
            try:
                m = parse_elf(bytes(d), "mutant")
                if m.dynamic is None:
                    link([m])
            except NxError as e:
                assert "\n" not in str(e) and "mutant" in str(e) or "nothing" in str(e), str(e)


def test_relr_decoding():
    """DT_RELR (gABI): an address word, then bitmaps each covering the next 63 words."""
    from recompiler.elf import decode_relr

    assert decode_relr([0x1000]) == [0x1000]
    # address 0x1000, then bitmap with bits for words 0 and 2 after 0x1008, then for word 62
    # of the following run (which starts 63 words later)
    words = [0x1000, (0b101 << 1) | 1, (1 << 63) | 1]
    assert decode_relr(words) == [0x1000, 0x1008, 0x1018, 0x1008 + 63 * 8 + 62 * 8]
