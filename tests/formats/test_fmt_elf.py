"""ELF → NSO/NRO and the dynamic-section parser against pyelftools.

A small AArch64 module (imports, exports, weak and TLS symbols, data pointers, a PLT) is
compiled and linked the Switch way by clang/lld from the ``ziglang`` wheel, with SysV and GNU
hash tables and with packed relative relocations; it is converted with ``pack_elf`` and loaded
back by our NSO/NRO loaders, whose symbols and relocations must equal what pyelftools reads
from the ELF's own section headers (a path that shares nothing with ours)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection, RelrRelocationSection

from nxrecomp.common.errors import NxError
from recompiler.formats.nro import parse_nro
from recompiler.formats.nso import parse_nso
from recompiler.formats.pack_elf import elf_to_nro, elf_to_nso, split_elf

CRT0 = r"""
.section .text.crt0, "ax"
.global _start
_start:
    b 1f
    .word __nx_mod0 - _start
    .space 0x78          // room for the NRO header (0x10..0x80)
1:  ret
.section .rodata.mod0, "a"
.align 2
.hidden __nx_mod0
.hidden __bss_start__
.hidden __bss_end__
.hidden __eh_frame_hdr_start
.hidden __eh_frame_hdr_end
.hidden _DYNAMIC
__nx_mod0:
    .ascii "MOD0"
    .word _DYNAMIC - __nx_mod0
    .word __bss_start__ - __nx_mod0
    .word __bss_end__ - __nx_mod0
    .word __eh_frame_hdr_start - __nx_mod0
    .word __eh_frame_hdr_end - __nx_mod0
    .word 0
"""

LIB = r"""
extern void *malloc(unsigned long);
extern int printf(const char *, ...);
extern int imported_counter;
int exported_value = 42;
int *ptr_to_value = &exported_value;
static int local_array[64];
int *ptr_local = &local_array[3];
int *ptr_more[8] = { &local_array[1], &local_array[2], &local_array[5], &local_array[9] };
int *ptr_imported = &imported_counter;
const char *greeting = "hello";
__attribute__((weak)) int weak_fn(int x) { return x + 1; }
void *make(unsigned long n) { printf("%d\n", (int)n); return malloc(n); }
int (*fn_table[])(int) = { weak_fn, 0, weak_fn };
__thread int tls_var = 5;
int get_tls(void) { return tls_var; }
"""

LINKER_SCRIPT = """
PHDRS { text PT_LOAD FLAGS(5); rodata PT_LOAD FLAGS(4); data PT_LOAD FLAGS(6); dyn PT_DYNAMIC; note PT_NOTE; tls PT_TLS; }
SECTIONS {
  . = 0;
  .text : { KEEP(*(.text.crt0)) *(.text .text.*) } :text
  .plt : { *(.plt .plt.*) } :text
  . = ALIGN(0x1000);
  .rodata : { KEEP(*(.rodata.mod0)) *(.rodata .rodata.*) } :rodata
  .note.gnu.build-id : { *(.note.gnu.build-id) } :rodata :note
  .dynsym : { *(.dynsym) } :rodata
  .dynstr : { *(.dynstr) } :rodata
  .hash : { *(.hash) } :rodata
  .gnu.hash : { *(.gnu.hash) } :rodata
  .rela.dyn : { *(.rela.dyn) } :rodata
  .relr.dyn : { *(.relr.dyn) } :rodata
  .rela.plt : { *(.rela.plt) } :rodata
  .eh_frame_hdr : { __eh_frame_hdr_start = .; *(.eh_frame_hdr) __eh_frame_hdr_end = .; } :rodata
  .eh_frame : { *(.eh_frame) } :rodata
  . = ALIGN(0x1000);
  .tdata : { *(.tdata .tdata.*) } :data :tls
  .tbss : { *(.tbss .tbss.*) } :data :tls
  .data : { *(.data .data.*) } :data
  .data.rel.ro : { *(.data.rel.ro .data.rel.ro.*) } :data
  .dynamic : { *(.dynamic) } :data :dyn
  .got : { *(.got) } :data
  .got.plt : { *(.got.plt) } :data
  __bss_start__ = .;
  .bss : { *(.bss .bss.*) *(COMMON) } :data
  __bss_end__ = .;
  /DISCARD/ : { *(.comment) *(.note.GNU-stack) }
}
"""

VARIANTS = {  # ld.lld flags
    "sysv+gnu-hash": ["--hash-style=both"],
    "gnu-hash": ["--hash-style=gnu"],
    "sysv-hash": ["--hash-style=sysv"],
    "relr": ["--hash-style=gnu", "-z", "pack-relative-relocs"],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("elfmod")
    (d / "crt0.s").write_text(CRT0)
    (d / "lib.c").write_text(LIB)
    (d / "module.ld").write_text(LINKER_SCRIPT)
    zig = [sys.executable, "-m", "ziglang"]
    cc = [*zig, "cc", "-target", "aarch64-linux-musl", "-fPIC", "-O1", "-c"]
    # Linked by ld.lld directly: zig's cc driver filters some lld options (-z pack-relative-relocs).
    for cmd in ([*cc, "crt0.s", "-o", "crt0.o"], [*cc, "lib.c", "-o", "lib.o"]):
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    out = {}
    for name, flags in VARIANTS.items():
        so = d / f"{name}.so"
        cmd = [*zig, "ld.lld", "-shared", "-T", "module.ld", "--build-id=sha1", *flags, "crt0.o", "lib.o", "-o", so.name]
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out[name] = so
    return out


def _oracle(path: Path):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        dynsym = elf.get_section_by_name(".dynsym")
        syms = [
            (s.name, s["st_value"], s["st_size"], s["st_info"]["type"], s["st_info"]["bind"], s["st_shndx"])
            for s in dynsym.iter_symbols()
        ]
        relocs = []
        for sec in elf.iter_sections():
            if isinstance(sec, RelrRelocationSection):
                relocs += [(r["r_offset"], 1027, 0, None) for r in sec.iter_relocations()]
            elif isinstance(sec, RelocationSection):
                relocs += [(r["r_offset"], r["r_info_type"], r["r_info_sym"], r["r_addend"]) for r in sec.iter_relocations()]
        sections = {s.name: (s["sh_addr"], s["sh_size"]) for s in elf.iter_sections()}
        build_id = next(n["n_desc"] for n in elf.get_section_by_name(".note.gnu.build-id").iter_notes())
        loads = [(seg["p_vaddr"], seg["p_filesz"], seg["p_memsz"]) for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
    return syms, relocs, sections, bytes.fromhex(build_id), loads


_TYPES = {0: "STT_NOTYPE", 1: "STT_OBJECT", 2: "STT_FUNC", 3: "STT_SECTION", 6: "STT_TLS"}
_BINDS = {0: "STB_LOCAL", 1: "STB_GLOBAL", 2: "STB_WEAK"}


def _ours(m):
    syms = [
        (
            s.name,
            s.value,
            s.size,
            _TYPES.get(s.type, s.type),
            _BINDS.get(s.binding, s.binding),
            "SHN_UNDEF" if s.section == 0 else s.section,
        )
        for s in m.dynamic.symbols
    ]
    relocs = [(r.offset, r.type, r.symbol, r.addend) for r in m.dynamic.relocations]
    return syms, relocs


def _sort_relocs(relocs):
    return sorted(relocs, key=lambda r: (r[0], r[1]))


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("container", ["nso", "nso-raw", "nro"])
def test_module_matches_pyelftools(built, variant, container) -> None:
    so = built[variant]
    blob = so.read_bytes()
    if container == "nro":
        m = parse_nro(elf_to_nro(blob, str(so)))
    else:
        m = parse_nso(elf_to_nso(blob, str(so), name="lib", compress=container == "nso"))
        assert m.name == "lib" and all(s.compressed == (container == "nso") for s in m.segments)
    syms, relocs, sections, build_id, loads = _oracle(so)
    ours_syms, ours_relocs = _ours(m)
    assert ours_syms == syms
    assert _sort_relocs(ours_relocs) == _sort_relocs(relocs)
    kinds = {r[1] for r in relocs}
    assert {1026, 257, 1031} <= kinds  # JUMP_SLOT, ABS64, TLSDESC are all exercised
    assert (variant == "relr") == any(r.table == "relr" for r in m.dynamic.relocations)
    # MOD0 fields the linker resolved, against the section headers.
    assert m.mod0.offset == sections[".rodata"][0]
    assert m.mod0.dynamic == m.dynamic.offset == sections[".dynamic"][0]
    assert m.mod0.bss_start == sections[".bss"][0] and m.mod0.bss_end == sum(sections[".bss"])
    assert m.mod0.eh_frame_hdr_start == sections[".eh_frame_hdr"][0]
    assert m.mod0.eh_frame_hdr_end == sum(sections[".eh_frame_hdr"])
    assert [(s.mem_offset, s.size) for s in m.segments] == [(v, f) for v, f, _ in loads]
    assert m.bss_size == loads[2][2] - loads[2][1]
    assert m.build_id.rstrip(b"\0") == build_id[:0x20].rstrip(b"\0") and len(build_id) == 20
    for s, (v, f, _) in zip(m.segments, loads):
        want = bytearray(_segment_bytes(so, v, f))
        if container == "nro" and v == 0:
            want[0x10:0x80] = m.image[0x10:0x80]  # the NRO header lives there
            assert m.image[0x10:0x14] == b"NRO0"
        assert m.image[v : v + f] == want
    # The header's .dynsym/.dynstr ranges point at the same tables.
    ro = m.segments[1].mem_offset
    assert (ro + m.dynsym[0], m.dynsym[1]) == sections[".dynsym"]
    assert (ro + m.dynstr[0], m.dynstr[1]) == sections[".dynstr"]


def _segment_bytes(so: Path, vaddr: int, size: int) -> bytes:
    with open(so, "rb") as f:
        for seg in ELFFile(f).iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_vaddr"] == vaddr:
                return seg.data()[:size]
    raise AssertionError(vaddr)


def test_elf_layout_errors(built, tmp_path) -> None:
    blob = built["sysv+gnu-hash"].read_bytes()
    with pytest.raises(NxError, match="e_ident"):
        split_elf(b"\x7fELF\x01" + blob[5:], "x.so")
    bad = bytearray(blob)
    bad[18] = 62  # x86-64
    with pytest.raises(NxError, match="e_machine"):
        split_elf(bytes(bad), "x.so")
    host = Path(sys.executable).resolve().read_bytes()  # a real x86-64 ELF
    with pytest.raises(NxError, match="not AArch64"):
        split_elf(host, "python")
    with pytest.raises(NxError, match="run past the end"):
        split_elf(blob[:0x200], "x.so")
    # Code where the NRO header goes: converting to NRO would overwrite it.
    text_off = next(off for i, flags, off, vaddr, *_ in _loads(blob) if flags & 1)
    clobber = bytearray(blob)
    clobber[text_off + 0x20] = 0xAA
    assert elf_to_nso(bytes(clobber), "x.so")
    with pytest.raises(NxError, match="0x10..0x80 zeroed"):
        elf_to_nro(bytes(clobber), "x.so")


def _loads(blob: bytes):
    import struct

    (phoff,) = struct.unpack_from("<Q", blob, 32)
    (phnum,) = struct.unpack_from("<H", blob, 56)
    for i in range(phnum):
        ptype, flags, off, vaddr = struct.unpack_from("<IIQQ", blob, phoff + 56 * i)
        if ptype == 1:
            yield i, flags, off, vaddr


def _fuzz_elf(so_bytes: bytes, examples: int) -> None:
    import time

    from hypothesis import HealthCheck, given, settings, strategies as st

    from tests.formats.test_fmt_fuzz import mutate, mutation

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(mutation, min_size=1, max_size=6))
    def case(muts) -> None:
        blob = mutate(so_bytes, muts)
        t0 = time.monotonic()
        try:
            parse_nso(elf_to_nso(blob, "fuzz.so", compress=False), "fuzz.nso")
        except NxError as e:
            assert "fuzz" in str(e)
        assert time.monotonic() - t0 < 5.0

    case()


def test_fuzz_elf_conversion(built) -> None:
    _fuzz_elf(built["sysv+gnu-hash"].read_bytes(), 80)


@pytest.mark.heavy
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_fuzz_elf_conversion_heavy(built, variant) -> None:
    _fuzz_elf(built[variant].read_bytes(), 2000)
