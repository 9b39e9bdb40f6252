"""recompiler.link on Debian's arm64 lua5.4 + its libraries and on static busybox.

Oracles nobody here wrote: glibc's own dynamic loader, run under qemu-aarch64 with
LD_DEBUG=bindings and LD_BIND_NOW=1, says which module every symbol reference binds to;
pyelftools' symbol and relocation tables give the values.  The linker's written words must equal
base(defining module) + st_value + addend for every binding the real loader reports."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from nxrecomp.common import debian
from nxrecomp.common.errors import NxError
from recompiler.elf import load_elf, parse_elf
from recompiler.link import ADDRESS_LIMIT, link, link_program
from nxrecomp.bundle.image import LinkedImage

pytestmark = pytest.mark.network
LUA_PKGS = ["lua5.4", "liblua5.4-0", "libc6", "libreadline8", "libtinfo6"]


def _deb(pkg: str) -> Path:
    try:
        return debian.fetch(pkg, "arm64")
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch {pkg}:arm64: {e}")


@pytest.fixture(scope="module")
def roots() -> list[Path]:
    return [_deb(p) for p in LUA_PKGS]


@pytest.fixture(scope="module")
def lua_image(roots) -> LinkedImage:
    return link_program(roots[0] / "usr/bin/lua5.4", roots[1:])


def _read(image: LinkedImage, addr: int, size: int = 8) -> bytes:
    for s in image.segments:
        if s.vaddr <= addr and addr + size <= s.vaddr + s.memsz:
            b = s.data[addr - s.vaddr : addr - s.vaddr + size]
            return b + bytes(size - len(b))
    raise AssertionError(f"{addr:#x} not mapped")


def _u64(image: LinkedImage, addr: int) -> int:
    return struct.unpack("<Q", _read(image, addr))[0]


class _Ref:
    """pyelftools' view of one module: dynamic symbols with version names, relocations."""

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as f:
            ef = ELFFile(f)
            names = {}
            vd = ef.get_section_by_name(".gnu.version_d")
            if vd is not None:
                for v, aux in vd.iter_versions():
                    names[v["vd_ndx"]] = next(aux).name
            vn = ef.get_section_by_name(".gnu.version_r")
            if vn is not None:
                for _v, auxs in vn.iter_versions():
                    for a in auxs:
                        names[a["vna_other"]] = a.name
            vs = ef.get_section_by_name(".gnu.version")
            self.syms = []
            for i, s in enumerate(ef.get_section_by_name(".dynsym").iter_symbols()):
                ndx = vs.get_symbol(i).entry["ndx"] if vs is not None else 1
                ndx = ndx if isinstance(ndx, int) else 0
                self.syms.append(
                    (s.name, s["st_value"], s["st_info"]["type"], s["st_shndx"], names.get(ndx & 0x7FFF, ""), bool(ndx & 0x8000))
                )
            self.relocs = []
            for sec in ef.iter_sections():
                if isinstance(sec, RelocationSection) and sec["sh_flags"] & 2:
                    self.relocs += [
                        (r["r_offset"], r["r_info_type"], r["r_info_sym"], r["r_addend"]) for r in sec.iter_relocations()
                    ]

    def definition(self, name: str, version: str):
        hits = [s for s in self.syms if s[0] == name and s[3] != "SHN_UNDEF" and s[4] == version]
        hits.sort(key=lambda s: s[5])  # default version first
        return hits[0] if hits else None


def _loader_bindings(roots: list[Path], tmp: Path) -> list[tuple[str, str, str, str]]:
    """(referencing file, defining file, symbol, version) as glibc's ld.so reports them."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    lib = tmp / "sysroot/lib/aarch64-linux-gnu"
    lib.mkdir(parents=True)
    for r in roots[1:]:
        for f in r.rglob("*.so*"):
            if (r / "lib/aarch64-linux-gnu" in f.parents or r / "usr/lib/aarch64-linux-gnu" in f.parents) and not (
                lib / f.name
            ).exists():
                (lib / f.name).symlink_to(f)
    (tmp / "sysroot/lib/ld-linux-aarch64.so.1").symlink_to(lib / "ld-linux-aarch64.so.1")
    prog = roots[0] / "usr/bin/lua5.4"
    out = subprocess.run(
        ["qemu-aarch64", "-L", str(tmp / "sysroot"), "-E", "LD_DEBUG=bindings", "-E", "LD_BIND_NOW=1", str(prog), "-v"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rx = re.compile(r"binding file (\S+) \[0\] to (\S+) \[0\]: normal symbol `([^']+)'(?: \[([^\]]*)\])?")
    rows = [m.groups() for m in rx.finditer(out.stdout + out.stderr)]
    assert len(rows) > 1000
    return [(Path(a).name, Path(b).name, s, v or "") for a, b, s, v in rows]


def test_symbol_bindings_match_glibc_loader(roots, lua_image, tmp_path):
    bindings = _loader_bindings(roots, tmp_path)
    mods = {m.name: m for m in lua_image.modules}
    mods["lua5.4"] = lua_image.modules[0]
    refs = {name: _Ref(Path(m.path)) for name, m in mods.items()}
    irel = dict(lua_image.irelative)
    checked = 0
    for ref_file, def_file, sym, ver in bindings:
        if ref_file == def_file == "ld-linux-aarch64.so.1":
            continue  # the loader's own bootstrap relocations
        src, dst = mods[ref_file], mods[def_file]
        d = refs[def_file].definition(sym, ver)
        assert d is not None, (def_file, sym, ver)
        expect_base = dst.base + d[1]
        rsyms = refs[ref_file].syms
        for off, typ, si, addend in refs[ref_file].relocs:
            if not si or rsyms[si][0] != sym or typ not in (257, 1025, 1026):
                continue
            place = src.base + off
            if d[2] == "STT_LOOS":  # GNU_IFUNC: the runtime calls the resolver and fills the slot
                assert irel.get(place) == expect_base + addend, (ref_file, sym)
            else:
                assert _u64(lua_image, place) == expect_base + addend, (ref_file, sym, hex(off))
            checked += 1
    assert checked > 1000


def test_relative_tprel_and_layout(lua_image):
    assert [m.name for m in lua_image.modules] == [
        "lua5.4",
        "libreadline.so.8",
        "libm.so.6",
        "libc.so.6",
        "ld-linux-aarch64.so.1",
        "libtinfo.so.6",
    ]
    spans = []
    for m in lua_image.modules:
        ref = _Ref(Path(m.path))
        assert m.base % 0x10000 == 0
        for off, typ, si, addend in ref.relocs:
            if typ == 1027:  # RELATIVE
                assert _u64(lua_image, m.base + off) == m.base + addend
            elif typ == 1030:  # TLS_TPREL64: libc holds the only TLS block, first after the 16-byte TCB
                value = (
                    (ref.syms[si][1] if si else 0)
                    if not si or ref.syms[si][3] != "SHN_UNDEF"
                    else _Ref(Path(lua_image.modules[3].path)).definition(ref.syms[si][0], ref.syms[si][4])[1]
                )
                assert _u64(lua_image, m.base + off) == 16 + value + addend
        for e in load_elf(m.path).segments:
            spans.append((m.base + e.vaddr, m.base + e.vaddr + e.memsz))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert spans[-1][1] < ADDRESS_LIMIT
    assert lua_image.tls.blocks[0].module == "libc.so.6" and lua_image.tls.tp_offset == 16
    libc = lua_image.modules[3]
    assert libc.tls_modid == 1 and libc.tls_offset == 16
    assert lua_image.entry == lua_image.modules[0].base + load_elf(lua_image.modules[0].path).entry
    assert lua_image.phdr == lua_image.modules[0].base + 0x40 and lua_image.phnum == 9
    assert lua_image.brk_start % 4096 == 0 and not lua_image.static
    assert lua_image.unresolved == []


def test_ifunc_and_irelative_recorded(lua_image):
    libc = lua_image.modules[3]
    ref = _Ref(Path(libc.path))
    slots = dict(lua_image.irelative)
    # libc's own two IRELATIVE relocations
    for off, typ, _si, addend in ref.relocs:
        if typ == 1032:
            assert slots[libc.base + off] == libc.base + addend
    # memcpy is an IFUNC in libc: every slot bound to it waits for its resolver
    memcpy = libc.base + ref.definition("memcpy", "GLIBC_2.17")[1]
    assert memcpy in slots.values() and memcpy in lua_image.func_hints
    assert all(
        lo <= r < hi
        for r in slots.values()
        for lo, hi in [next((a, b) for m in lua_image.modules for a, b in m.text_ranges if a <= r < b)]
    )


def test_func_hints_and_init_arrays(lua_image):
    main = lua_image.modules[0]
    assert main.init_array and all(any(a <= f < b for a, b in main.text_ranges) for f in main.init_array)
    assert set(main.init_array) <= lua_image.func_hints
    libc = lua_image.modules[3]
    ref = _Ref(Path(libc.path))
    for name in ("printf", "malloc", "exit"):
        d = ref.definition(name, "GLIBC_2.17")
        assert libc.base + d[1] in lua_image.func_hints and lua_image.symbols[libc.base + d[1]]
    exec_ranges = [r for m in lua_image.modules for r in m.text_ranges]
    assert all(any(a <= h < b for a, b in exec_ranges) for h in lua_image.func_hints)
    assert main.eh_frame[0] == main.base + load_elf(main.path).eh_frame[0]


def test_static_busybox_untouched(roots, tmp_path):
    bb = _deb("busybox-static") / "bin/busybox"
    m = load_elf(bb)
    im = link([m])
    assert im.static and im.entry == 0x400580 and im.phdr == 0x400040 and im.phnum == 6
    assert [s.data for s in im.segments] == [s.data for s in m.segments]  # glibc relocates itself
    assert im.irelative == [] and {r.addend for r in m.relocs} <= im.func_hints
    assert im.tls.tp_offset == 16 and im.tls.memsz == 0x98 and im.tls.template == 0x5C9850
    assert im.brk_start == (0x5C9850 + 0xFDB8 + 0xFFF) & ~0xFFF
    assert [s.prot for s in im.segments] == ["r-x", "rw-"]
    with open(bb, "rb") as f:
        ia = ELFFile(f).get_section_by_name(".init_array")
        assert im.modules[0].init_array == list(struct.unpack(f"<{ia['sh_size'] // 8}Q", ia.data()))


@pytest.mark.parametrize("inline", [True, False])
def test_json_round_trip(lua_image, tmp_path, inline):
    d = lua_image.to_json(None if inline else tmp_path / "image.bin")
    text = json.dumps(d)
    back = LinkedImage.from_json(json.loads(text), tmp_path)
    assert back == lua_image
    if not inline:
        (tmp_path / "image.bin").write_bytes(b"x" + (tmp_path / "image.bin").read_bytes()[1:])
        with pytest.raises(NxError, match="blob_sha256"):
            LinkedImage.from_json(json.loads(text), tmp_path)


def test_unknown_relocation_names_module_offset_type(roots, tmp_path):
    prog = roots[0] / "usr/bin/lua5.4"
    data = bytearray(prog.read_bytes())
    m = load_elf(prog)
    rela = next(s for s in m.sections if s.name == ".rela.dyn")
    off = struct.unpack_from("<Q", data, rela.offset)[0]
    struct.pack_into("<Q", data, rela.offset + 8, 4242)  # r_info: symbol 0, type 4242
    bad = tmp_path / "lua5.4"
    bad.write_bytes(data)
    with pytest.raises(NxError) as ei:
        link_program(bad, roots[1:])
    msg = str(ei.value)
    assert "\n" not in msg and str(bad) in msg and "4242" in msg and f"{off:#x}" in msg, msg


def test_missing_needed_library(roots):
    with pytest.raises(NxError, match="libreadline.so.8 not found.*|DT_NEEDED"):
        link_program(roots[0] / "usr/bin/lua5.4", [roots[2]])


def test_unresolved_strong_symbol_is_an_error(roots, tmp_path):
    """Rename a GLOB_DAT symbol lua5.4 imports; the loader would fail, so must we."""
    prog = roots[0] / "usr/bin/lua5.4"
    m = load_elf(prog)
    r = next(r for r in m.relocs if r.type == 1025 and m.dynsyms[r.sym].bind == "GLOBAL")
    data = bytearray(prog.read_bytes())
    dynstr = next(s for s in m.sections if s.name == ".dynstr")
    i = data.index(r.sym_name.encode() + b"\0", dynstr.offset)
    data[i] = ord("Q")
    with pytest.raises(NxError, match="undefined symbol Q"):
        link([parse_elf(bytes(data), "lua-renamed")], search_paths=roots[1:])


def test_copy_relocation_copies_relocated_data_and_weak_undefined_is_zero(roots, lua_image):
    """Turn lua5.4's GLOB_DAT of `stdout` into a COPY: the 8 bytes copied must be libc's
    `stdout` after libc's own relocations, i.e. the address of _IO_2_1_stdout_."""
    prog = roots[0] / "usr/bin/lua5.4"
    m = load_elf(prog)
    r = next(r for r in m.relocs if r.type == 1025 and r.sym_name == "stdout")
    data = bytearray(prog.read_bytes())
    rela = next(s for s in m.sections if s.name == ".rela.dyn")
    for i in range(rela.size // 24):
        off, info = struct.unpack_from("<QQ", data, rela.offset + 24 * i)
        if off == r.offset:
            struct.pack_into("<Q", data, rela.offset + 24 * i + 8, (info >> 32) << 32 | 1024)
    im = link([parse_elf(bytes(data), "lua-copy")], search_paths=roots[1:])
    libc = next(x for x in im.modules if x.name == "libc.so.6")
    io_stdout = _Ref(Path(libc.path)).definition("_IO_2_1_stdout_", "GLIBC_2.17")[1]
    assert _u64(im, im.modules[0].base + r.offset) == libc.base + io_stdout
    gmon = next(r for r in m.relocs if r.sym_name == "__gmon_start__")
    assert m.dynsyms[gmon.sym].bind == "WEAK" and _u64(lua_image, lua_image.modules[0].base + gmon.offset) == 0
