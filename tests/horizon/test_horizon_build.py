"""Step 1 of the Horizon slice: ``nxrecomp build`` of an ExeFS made at test time from our own
guest program (zig cc → ELF → pack_elf → NSO ``main`` + ``sdk``, pack_npdm → ``main.npdm``).

Oracles: pyelftools reads the ELF files the modules were made from (a path that shares nothing
with our NSO loader and linker): every relocated slot must hold what the ELF's relocation and
the defining module's symbol say, at the base Horizon's loader gives each module."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from examples.horizon_hello.build_exefs import build_exefs
from recompiler.formats.pack_npdm import NpdmSpec, default_kernel_caps
from nxrecomp.bundle.image import LinkedImage
from tests.horizon.hz_build import nxrecomp

PAGE = 0x1000


@pytest.fixture(scope="module")
def hello(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("hzbuild")
    exefs = build_exefs("hello", tmp / "exefs")
    out = tmp / "bundle"
    r = nxrecomp("build", str(exefs), "-o", str(out))
    assert r.returncode == 0, r.stderr
    return exefs, out


def _elf_info(path: Path):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        end = max(s["p_vaddr"] + s["p_memsz"] for s in elf.iter_segments() if s["p_type"] == "PT_LOAD")
        dynsym = elf.get_section_by_name(".dynsym")
        syms = {s.name: s for s in dynsym.iter_symbols()}
        exports = {n: s["st_value"] for n, s in syms.items() if s["st_shndx"] != "SHN_UNDEF" and n}
        relocs = []
        for sec in elf.iter_sections():
            if isinstance(sec, RelocationSection):
                symtab = elf.get_section(sec["sh_link"])
                for r in sec.iter_relocations():
                    relocs.append((r["r_offset"], r["r_info_type"], symtab.get_symbol(r["r_info_sym"]).name, r["r_addend"]))
    return end, exports, relocs


def _read64(image: LinkedImage, addr: int) -> int:
    for s in image.segments:
        if s.vaddr <= addr < s.vaddr + s.memsz:
            chunk = s.data[addr - s.vaddr : addr - s.vaddr + 8]
            return struct.unpack("<Q", chunk + bytes(8 - len(chunk)))[0]
    raise AssertionError(f"{addr:#x} not in the image")


def test_layout_and_relocations_match_the_elf_files(hello) -> None:
    exefs, bundle = hello
    m = json.loads((bundle / "manifest.json").read_text())
    assert m["kind"] == "horizon" and (bundle / "game.so").is_file()
    main_end, main_exports, main_relocs = _elf_info(exefs.parent / "exefs.build" / "main.elf")
    sdk_end, sdk_exports, sdk_relocs = _elf_info(exefs.parent / "exefs.build" / "sdk.elf")
    # Horizon's loader: modules one after the other from 0x8000000, each page-rounded
    main_base = 0x8000000
    sdk_base = main_base + (main_end + PAGE - 1) // PAGE * PAGE
    assert [(x["name"], x["base"]) for x in m["modules"]] == [("main", main_base), ("sdk", sdk_base)]
    assert m["process"]["main_thread_priority"] == 44 and m["process"]["program_id"] == 0x0100000000010000
    image = LinkedImage.from_json(m["image"], bundle)
    assert image.entry == main_base and image.unresolved == []
    scope = {**{n: sdk_base + v for n, v in sdk_exports.items()}, **{n: main_base + v for n, v in main_exports.items()}}
    scope.update({n: main_base + v for n, v in main_exports.items()})  # main comes first in load order
    checked = {"R_AARCH64_RELATIVE": 0, "R_AARCH64_JUMP_SLOT": 0, "R_AARCH64_GLOB_DAT": 0, "R_AARCH64_ABS64": 0}
    for base, relocs in ((main_base, main_relocs), (sdk_base, sdk_relocs)):
        for off, rtype, name, addend in relocs:
            got = _read64(image, base + off)
            kind = {1027: "R_AARCH64_RELATIVE", 1026: "R_AARCH64_JUMP_SLOT", 1025: "R_AARCH64_GLOB_DAT", 257: "R_AARCH64_ABS64"}[
                rtype
            ]
            want = base + addend if rtype == 1027 else scope[name] + addend
            assert got == want, (kind, hex(off), name, hex(got), hex(want))
            checked[kind] += 1
    # main calls into sdk (JUMP_SLOT), sdk calls back into main (hz_main), data pointers bound by name
    assert checked["R_AARCH64_JUMP_SLOT"] >= 5 and checked["R_AARCH64_ABS64"] >= 1
    assert image.symbols[scope["hz_main"]] == "hz_main"


def test_rtld_keeps_its_slot_and_is_dropped(hello, tmp_path) -> None:
    exefs, _ = hello
    folder = tmp_path / "exefs"
    shutil.copytree(exefs, folder)
    shutil.copy(folder / "sdk", folder / "rtld")  # any module stands in for rtld's slot
    out = tmp_path / "b"
    r = nxrecomp("build", str(folder), "-o", str(out))
    assert r.returncode == 0, r.stderr
    m = json.loads((out / "manifest.json").read_text())
    sdk_size = next(x for x in json.loads((hello[1] / "manifest.json").read_text())["modules"] if x["name"] == "sdk")["size"]
    assert [x["name"] for x in m["modules"]] == ["main", "sdk"]
    assert m["modules"][0]["base"] == 0x8000000 + sdk_size
    assert m["image"]["entry"] == m["modules"][0]["base"]


@pytest.mark.parametrize("space,base", [(1, 0x8000000), (0, 0x200000), (2, 0x200000)])
def test_address_space_types_place_main(hello, tmp_path, space, base) -> None:
    exefs, _ = hello
    folder = tmp_path / "exefs"
    shutil.copytree(exefs, folder)
    from recompiler.formats.pack_npdm import pack_npdm

    (folder / "main.npdm").write_bytes(pack_npdm(NpdmSpec(address_space=space)))
    from recompiler.formats.exefs import load_exefs
    from recompiler.horizon import link_exefs

    image, _host = link_exefs(load_exefs(folder))
    assert image.entry == base


def _one_line_error(r) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_missing_npdm(hello, tmp_path) -> None:
    folder = tmp_path / "exefs"
    shutil.copytree(hello[0], folder)
    (folder / "main.npdm").unlink()
    r = nxrecomp("build", str(folder), "-o", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    notice = [ln for ln in r.stdout.splitlines() if "main.npdm" in ln]
    assert len(notice) == 1 and "using the default" in notice[0]
    # the documented default (issue 30): application, 39-bit space, priority 44 on core 0, 1 MiB stack
    p = json.loads((tmp_path / "b" / "manifest.json").read_text())["process"]
    assert (p["address_space_bits"], p["main_thread_priority"], p["main_thread_core"], p["main_thread_stack_size"]) == (
        39,
        44,
        0,
        0x100000,
    )


def test_bad_nso_names_file_field_offset(hello, tmp_path) -> None:
    folder = tmp_path / "exefs"
    shutil.copytree(hello[0], folder)
    data = bytearray((folder / "sdk").read_bytes())
    struct.pack_into("<I", data, 0x20, 0x7FFFF000)  # .rodata FileOffset, far past the end of the file
    (folder / "sdk").write_bytes(data)
    line = _one_line_error(nxrecomp("build", str(folder), "-o", str(tmp_path / "b")))
    assert "exefs/sdk" in line and "field rodata.FileOffset" in line and "offset 0x7ffff000" in line


def test_truncated_npdm(hello, tmp_path) -> None:
    folder = tmp_path / "exefs"
    shutil.copytree(hello[0], folder)
    (folder / "main.npdm").write_bytes((folder / "main.npdm").read_bytes()[:0x40])
    line = _one_line_error(nxrecomp("build", str(folder), "-o", str(tmp_path / "b")))
    assert "main.npdm" in line and "field" in line


def test_priority_outside_capability(hello, tmp_path) -> None:
    from recompiler.formats.pack_npdm import pack_npdm

    folder = tmp_path / "exefs"
    shutil.copytree(hello[0], folder)
    (folder / "main.npdm").write_bytes(pack_npdm(NpdmSpec(main_thread_priority=20, kernel_caps=default_kernel_caps())))
    line = _one_line_error(nxrecomp("build", str(folder), "-o", str(tmp_path / "b")))
    assert "META.MainThreadPriority" in line and "offset 0xe" in line


def test_unbound_calls_become_host_imports(hello, tmp_path) -> None:
    """Without sdk, main's calls into it bind to host-import slots past the last module: one
    slot per name, listed in the manifest with its address, and every PLT slot of main that
    names it holds that address."""
    folder = tmp_path / "exefs"
    shutil.copytree(hello[0], folder)
    (folder / "sdk").unlink()
    r = nxrecomp("build", str(folder), "-o", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "b" / "manifest.json").read_text())
    host = m["host_imports"]
    main = m["modules"][-1]
    assert host["base"] == main["base"] + main["size"] and host["size"] % 0x1000 == 0
    slots = host["slots"]
    assert {"hz_printf", "svcGetSystemTick"} <= set(slots)
    assert sorted(slots.values()) == [host["base"] + 16 * i for i in range(len(slots))]
    assert m["image"]["unresolved"] == sorted(slots)
    # the relocated GOT/PLT words of main hold the slots (read back from the bundle's image)
    from nxrecomp.bundle.image import LinkedImage

    image = LinkedImage.from_json(m["image"], tmp_path / "b")
    words = set()
    for seg in image.segments:
        if seg.module == "main" and "w" in seg.prot:
            words |= {int.from_bytes(seg.data[i : i + 8], "little") for i in range(0, len(seg.data) - 7, 8)}
    assert set(slots.values()) <= words


def test_undefined_data_symbol(tmp_path) -> None:
    src = tmp_path / "undef.c"
    src.write_text("extern int defined_nowhere;\nint hz_main(void) { return defined_nowhere; }\n")
    exefs = build_exefs(src, tmp_path / "exefs")
    line = _one_line_error(nxrecomp("build", str(exefs), "-o", str(tmp_path / "b")))
    assert "exefs/main" in line and "undefined data symbol 'defined_nowhere'" in line and "field r_info" in line


def test_romfs_is_referenced(hello, tmp_path) -> None:
    from recompiler.formats.pack_romfs import pack_romfs

    romfs = tmp_path / "game.romfs"
    romfs.write_bytes(pack_romfs({"/data/hello.txt": b"hi"}))
    r = nxrecomp("build", str(hello[0]), "-o", str(tmp_path / "b"), "--romfs", str(romfs))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["romfs"] == str(romfs.resolve())
    line = _one_line_error(
        nxrecomp("build", str(hello[0]), "-o", str(tmp_path / "c"), "--romfs", str(tmp_path / "missing.romfs"))
    )
    assert "missing.romfs" in line


def test_not_an_exefs(tmp_path) -> None:
    line = _one_line_error(nxrecomp("build", str(tmp_path / "nothing"), "-o", str(tmp_path / "b")))
    assert "nothing" in line
