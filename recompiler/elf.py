"""Load a 64-bit little-endian AArch64 ELF (static executable, PIE, shared object) into records.

Written with ``struct`` rather than a library so that every field is checked and a bad file
gets one ``NxError`` line naming the file, the field and its offset.  Nothing is relocated here
(see ``recompiler/link.py``); addresses are the file's own (unrelocated) virtual addresses.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from nxrecomp.common.errors import NxError

EM_AARCH64 = 183
ET_EXEC, ET_DYN = 2, 3
PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_NOTE, PT_PHDR, PT_TLS = 1, 2, 3, 4, 6, 7
PT_GNU_EH_FRAME, PT_GNU_STACK, PT_GNU_RELRO = 0x6474E550, 0x6474E551, 0x6474E552
PF_X, PF_W, PF_R = 1, 2, 4
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_DYNSYM = 2, 3, 4, 8, 11
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4
STT_NAMES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE", 5: "COMMON", 6: "TLS", 10: "GNU_IFUNC"}
STB_NAMES = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "GNU_UNIQUE"}
SHN_UNDEF, SHN_ABS = 0, 0xFFF1

# Dynamic tags we interpret (the rest are kept raw in DynamicInfo.tags).
DT_NULL, DT_NEEDED, DT_PLTRELSZ, DT_PLTGOT, DT_HASH, DT_STRTAB, DT_SYMTAB = 0, 1, 2, 3, 4, 5, 6
DT_RELA, DT_RELASZ, DT_RELAENT, DT_STRSZ, DT_SYMENT, DT_INIT, DT_FINI, DT_SONAME = 7, 8, 9, 10, 11, 12, 13, 14
DT_RPATH, DT_SYMBOLIC, DT_REL, DT_PLTREL, DT_TEXTREL, DT_JMPREL = 15, 16, 17, 20, 22, 23
DT_INIT_ARRAY, DT_FINI_ARRAY, DT_INIT_ARRAYSZ, DT_FINI_ARRAYSZ, DT_RUNPATH, DT_FLAGS = 25, 26, 27, 28, 29, 30
DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ = 32, 33
DT_RELRSZ, DT_RELR, DT_RELRENT = 35, 36, 37
R_AARCH64_RELATIVE = 1027
DT_GNU_HASH, DT_VERSYM, DT_VERDEF, DT_VERDEFNUM, DT_VERNEED, DT_VERNEEDNUM = (
    0x6FFFFEF5,
    0x6FFFFFF0,
    0x6FFFFFFC,
    0x6FFFFFFD,
    0x6FFFFFFE,
    0x6FFFFFFF,
)
DT_FLAGS_1 = 0x6FFFFFFB

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_DYN = struct.Struct("<qQ")


@dataclass
class LoadSegment:
    """One PT_LOAD: ``data`` is the file's ``filesz`` bytes; the rest up to ``memsz`` is zero."""

    vaddr: int
    memsz: int
    filesz: int
    offset: int
    flags: int  # PF_R | PF_W | PF_X
    align: int
    data: bytes = field(repr=False)

    @property
    def prot(self) -> str:
        return ("r" if self.flags & PF_R else "-") + ("w" if self.flags & PF_W else "-") + ("x" if self.flags & PF_X else "-")


@dataclass
class TlsTemplate:
    vaddr: int
    filesz: int
    memsz: int
    align: int
    data: bytes = field(repr=False)


@dataclass
class Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    entsize: int
    link: int
    info: int


@dataclass
class Symbol:
    name: str
    value: int
    size: int
    type: str  # STT_* name: FUNC, OBJECT, TLS, GNU_IFUNC, NOTYPE, ...
    bind: str  # LOCAL, GLOBAL, WEAK, GNU_UNIQUE
    shndx: int  # 0 = undefined, 0xfff1 = absolute
    visibility: int = 0
    version: str = ""  # dynamic symbols: version name ("GLIBC_2.17"), "" if unversioned
    hidden_version: bool = False  # a non-default version (name@VER, not name@@VER)

    @property
    def defined(self) -> bool:
        return self.shndx != SHN_UNDEF


@dataclass
class Reloc:
    offset: int  # address of the place (unrelocated)
    type: int  # R_AARCH64_*
    sym: int  # index into the symbol table the relocation section names (0: none)
    sym_name: str
    addend: int
    table: str  # where it came from: "rela", "jmprel", or a section name


@dataclass
class DynamicInfo:
    tags: list[tuple[int, int]] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)
    soname: str = ""
    runpath: str = ""
    rela: int = 0
    relasz: int = 0
    relaent: int = 24
    jmprel: int = 0
    pltrelsz: int = 0
    pltrel: int = DT_RELA
    init: int = 0
    fini: int = 0
    init_array: int = 0
    init_arraysz: int = 0
    fini_array: int = 0
    fini_arraysz: int = 0
    preinit_array: int = 0
    preinit_arraysz: int = 0
    symtab: int = 0
    strtab: int = 0
    strsz: int = 0
    flags: int = 0
    flags_1: int = 0

    def get(self, tag: int) -> int | None:
        for t, v in self.tags:
            if t == tag:
                return v
        return None


@dataclass
class ElfModule:
    path: str
    type: str  # "EXEC" or "DYN"
    entry: int
    phoff: int
    phent: int
    phnum: int
    phdr_vaddr: int | None  # where the program headers are in memory (AT_PHDR, unrelocated)
    segments: list[LoadSegment]
    tls: TlsTemplate | None
    dynamic_vaddr: int | None
    interp: str | None
    gnu_stack_flags: int | None  # PF_* of PT_GNU_STACK (None: no such header)
    relro: tuple[int, int] | None  # (vaddr, memsz) of PT_GNU_RELRO
    sections: list[Section]
    symbols: list[Symbol]  # .symtab (empty when stripped)
    dynsyms: list[Symbol]  # the dynamic symbol table (index = relocation sym index)
    dynamic: DynamicInfo | None
    relocs: list[Reloc]
    eh_frame: tuple[int, bytes] | None = field(default=None, repr=False)
    eh_frame_hdr: tuple[int, bytes] | None = field(default=None, repr=False)
    gcc_except_table: tuple[int, bytes] | None = field(default=None, repr=False)
    go_pclntab: tuple[int, bytes] | None = field(default=None, repr=False)  # Go's function table
    text_ranges: list[tuple[int, int]] = field(default_factory=list)  # (start, end) executable code

    @property
    def name(self) -> str:
        return self.dynamic.soname if self.dynamic and self.dynamic.soname else Path(self.path).name

    @property
    def is_pic(self) -> bool:
        return self.type == "DYN"

    def read(self, vaddr: int, size: int) -> bytes:
        """Bytes at unrelocated ``vaddr`` (zeros past a segment's filesz); NxError if unmapped."""
        for s in self.segments:
            if s.vaddr <= vaddr and vaddr + size <= s.vaddr + s.memsz:
                off = vaddr - s.vaddr
                chunk = s.data[off : off + size]
                return chunk + bytes(size - len(chunk))
        raise NxError(f"address {vaddr:#x}+{size:#x} is not inside a PT_LOAD segment", path=self.path)


class _Reader:
    """Bounds-checked access to the file's bytes; every failure names the field."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data

    def fail(self, fld: str, msg: str, off: int | None = None) -> NxError:
        return NxError(msg, path=self.path, field=fld, offset=off)

    def check(self, off: int, size: int, fld: str) -> None:
        if off < 0 or size < 0 or off + size > len(self.data):
            raise self.fail(fld, f"range {off:#x}+{size:#x} runs past the end of the file (size {len(self.data):#x})", off)

    def unpack(self, st: struct.Struct, off: int, fld: str) -> tuple:
        self.check(off, st.size, fld)
        return st.unpack_from(self.data, off)

    def bytes(self, off: int, size: int, fld: str) -> bytes:
        self.check(off, size, fld)
        return self.data[off : off + size]

    def cstr(self, table: bytes, idx: int, fld: str) -> str:
        if idx >= len(table) and idx:
            raise self.fail(fld, f"string index {idx:#x} is past the string table (size {len(table):#x})")
        end = table.find(b"\0", idx)
        if end < 0:
            raise self.fail(fld, f"string at index {idx:#x} is not NUL-terminated")
        return table[idx:end].decode("utf-8", "replace")


def load_elf(path: str | Path) -> ElfModule:
    """Parse ``path``; raise NxError (one line naming file and field) on any malformed part."""
    path = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise NxError(f"cannot read: {e.strerror}", path=path) from None
    return parse_elf(data, path)


def parse_elf(data: bytes, path: str = "<memory>") -> ElfModule:
    r = _Reader(path, data)
    if len(data) < 4 or data[:4] != b"\x7fELF":
        raise r.fail("e_ident", "not an ELF file (no \\x7fELF magic)", 0)
    if len(data) < _EHDR.size:
        raise r.fail("e_ident", f"truncated ELF header ({len(data)} bytes, need {_EHDR.size})", 0)
    (
        ident,
        e_type,
        e_machine,
        e_version,
        e_entry,
        e_phoff,
        e_shoff,
        _flags,
        e_ehsize,
        e_phentsize,
        e_phnum,
        e_shentsize,
        e_shnum,
        e_shstrndx,
    ) = _EHDR.unpack_from(data, 0)
    if ident[4] != 2:
        raise r.fail("e_ident[EI_CLASS]", f"class {ident[4]} is not ELFCLASS64", 4)
    if ident[5] != 1:
        raise r.fail("e_ident[EI_DATA]", f"data encoding {ident[5]} is not little-endian", 5)
    if e_machine != EM_AARCH64:
        raise r.fail("e_machine", f"machine {e_machine} is not AArch64 ({EM_AARCH64})", 0x12)
    if e_type not in (ET_EXEC, ET_DYN):
        raise r.fail("e_type", f"type {e_type} is not EXEC (2) or DYN (3)", 0x10)
    if e_phnum and e_phentsize != _PHDR.size:
        raise r.fail("e_phentsize", f"program header size {e_phentsize} is not {_PHDR.size}", 0x36)
    if e_phnum == 0:
        raise r.fail("e_phnum", "no program headers", 0x38)
    r.check(e_phoff, e_phnum * _PHDR.size, "e_phoff")

    segments: list[LoadSegment] = []
    tls = dyn_v = interp = stack = relro = phdr_v = ehf = None
    for i in range(e_phnum):
        off = e_phoff + i * _PHDR.size
        p_type, p_flags, p_offset, p_vaddr, _pa, p_filesz, p_memsz, p_align = _PHDR.unpack_from(data, off)
        fld = f"phdr[{i}]"
        if p_type in (PT_LOAD, PT_TLS, PT_DYNAMIC, PT_INTERP, PT_GNU_EH_FRAME):
            r.check(p_offset, p_filesz, f"{fld}.p_offset/p_filesz")
        if p_type in (PT_LOAD, PT_TLS) and p_filesz > p_memsz:
            raise r.fail(f"{fld}.p_filesz", f"filesz {p_filesz:#x} exceeds memsz {p_memsz:#x}", off)
        if p_type == PT_LOAD:
            if p_vaddr + p_memsz >= 1 << 48:
                raise r.fail(f"{fld}.p_vaddr", f"segment {p_vaddr:#x}+{p_memsz:#x} is above 2^48", off)
            if p_align > 1 and (p_vaddr - p_offset) % p_align:
                raise r.fail(
                    f"{fld}.p_align", f"vaddr {p_vaddr:#x} and offset {p_offset:#x} disagree modulo align {p_align:#x}", off
                )
            segments.append(
                LoadSegment(p_vaddr, p_memsz, p_filesz, p_offset, p_flags, p_align, data[p_offset : p_offset + p_filesz])
            )
        elif p_type == PT_TLS:
            tls = TlsTemplate(p_vaddr, p_filesz, p_memsz, max(p_align, 1), data[p_offset : p_offset + p_filesz])
        elif p_type == PT_DYNAMIC:
            dyn_v = (p_vaddr, p_offset, p_filesz)
        elif p_type == PT_INTERP:
            interp = data[p_offset : p_offset + p_filesz].split(b"\0")[0].decode("utf-8", "replace")
        elif p_type == PT_GNU_STACK:
            stack = p_flags
        elif p_type == PT_GNU_RELRO:
            relro = (p_vaddr, p_memsz)
        elif p_type == PT_PHDR:
            phdr_v = p_vaddr
        elif p_type == PT_GNU_EH_FRAME:
            ehf = (p_vaddr, p_offset, p_filesz)
    if not segments:
        raise r.fail("e_phnum", "no PT_LOAD segment")
    segments.sort(key=lambda s: s.vaddr)
    for a, b in zip(segments, segments[1:]):
        if a.vaddr + a.memsz > b.vaddr:
            raise r.fail("phdr.p_vaddr", f"PT_LOAD segments {a.vaddr:#x}+{a.memsz:#x} and {b.vaddr:#x} overlap")
    if phdr_v is None:
        # No PT_PHDR (static executables): the kernel reports the headers' address inside the
        # PT_LOAD that maps file offset e_phoff, as AT_PHDR.
        for s in segments:
            if s.offset <= e_phoff and e_phoff + e_phnum * _PHDR.size <= s.offset + s.filesz:
                phdr_v = s.vaddr + (e_phoff - s.offset)
                break

    mod = ElfModule(
        path=path,
        type="EXEC" if e_type == ET_EXEC else "DYN",
        entry=e_entry,
        phoff=e_phoff,
        phent=e_phentsize,
        phnum=e_phnum,
        phdr_vaddr=phdr_v,
        segments=segments,
        tls=tls,
        dynamic_vaddr=dyn_v[0] if dyn_v else None,
        interp=interp,
        gnu_stack_flags=stack,
        relro=relro,
        sections=[],
        symbols=[],
        dynsyms=[],
        dynamic=None,
        relocs=[],
    )
    _read_sections(r, mod, e_shoff, e_shnum, e_shentsize, e_shstrndx)
    if dyn_v:
        _read_dynamic(r, mod, dyn_v)
    _read_static_relocs(r, mod)
    _find_unwind(r, mod, ehf)
    return mod


def _vaddr_to_off(r: _Reader, mod: ElfModule, vaddr: int, size: int, fld: str) -> int:
    """File offset of ``size`` bytes at unrelocated ``vaddr``, which must lie in a segment's file part."""
    for s in mod.segments:
        if s.vaddr <= vaddr and vaddr + size <= s.vaddr + s.filesz:
            return s.offset + (vaddr - s.vaddr)
    raise r.fail(fld, f"address {vaddr:#x}+{size:#x} is not inside the file part of a PT_LOAD segment")


def _read_sections(r: _Reader, mod: ElfModule, shoff: int, shnum: int, shentsize: int, shstrndx: int) -> None:
    if shoff == 0 or shnum == 0:
        return
    if shentsize != _SHDR.size:
        raise r.fail("e_shentsize", f"section header size {shentsize} is not {_SHDR.size}", 0x3A)
    r.check(shoff, shnum * _SHDR.size, "e_shoff")
    raw = [_SHDR.unpack_from(r.data, shoff + i * _SHDR.size) for i in range(shnum)]
    if shstrndx >= shnum:
        raise r.fail("e_shstrndx", f"index {shstrndx} is not below e_shnum {shnum}", 0x3E)
    names = r.bytes(raw[shstrndx][4], raw[shstrndx][5], "shdr[e_shstrndx].sh_offset")
    for i, (nm, typ, flg, addr, off, size, link, info, _al, ent) in enumerate(raw):
        if typ != SHT_NOBITS and typ != 0:
            r.check(off, size, f"shdr[{i}].sh_offset/sh_size")
        mod.sections.append(Section(r.cstr(names, nm, f"shdr[{i}].sh_name"), typ, flg, addr, off, size, ent, link, info))
    for i, s in enumerate(mod.sections):
        if s.type == SHT_SYMTAB:
            mod.symbols = _symbols(r, mod, i, f"section {s.name}")
    byname = {s.name: s for s in mod.sections}
    for nm, attr in (
        (".eh_frame", "eh_frame"),
        (".eh_frame_hdr", "eh_frame_hdr"),
        (".gcc_except_table", "gcc_except_table"),
        (".gopclntab", "go_pclntab"),
    ):
        # (a position-independent Go program keeps its function table in RELRO, relocated)
        s = byname.get(nm) or (byname.get(".data.rel.ro.gopclntab") if nm == ".gopclntab" else None)
        if s and s.flags & SHF_ALLOC and s.type != SHT_NOBITS:
            setattr(mod, attr, (s.addr, r.data[s.offset : s.offset + s.size]))
    mod.text_ranges = sorted(
        (s.addr, s.addr + s.size) for s in mod.sections if s.flags & SHF_ALLOC and s.flags & SHF_EXECINSTR and s.size
    )


def _symbols(r: _Reader, mod: ElfModule, idx: int, fld: str) -> list[Symbol]:
    s = mod.sections[idx]
    if s.entsize != _SYM.size:
        raise r.fail(f"{fld}.sh_entsize", f"symbol size {s.entsize} is not {_SYM.size}")
    if s.link >= len(mod.sections):
        raise r.fail(f"{fld}.sh_link", f"string table index {s.link} out of range")
    st = mod.sections[s.link]
    strtab = r.data[st.offset : st.offset + st.size]
    return _parse_syms(r, r.data[s.offset : s.offset + s.size - s.size % _SYM.size], strtab, fld)


def _parse_syms(r: _Reader, raw: bytes, strtab: bytes, fld: str) -> list[Symbol]:
    out = []
    for i, (nm, info, other, shndx, value, size) in enumerate(_SYM.iter_unpack(raw)):
        out.append(
            Symbol(
                r.cstr(strtab, nm, f"{fld}[{i}].st_name"),
                value,
                size,
                STT_NAMES.get(info & 15, str(info & 15)),
                STB_NAMES.get(info >> 4, str(info >> 4)),
                shndx,
                other & 3,
            )
        )
    return out


def _read_dynamic(r: _Reader, mod: ElfModule, dyn_v: tuple[int, int, int]) -> None:
    _v, off, size = dyn_v
    d = DynamicInfo()
    for i, (tag, val) in enumerate(_DYN.iter_unpack(r.data[off : off + size - size % 16])):
        if tag == DT_NULL:
            break
        d.tags.append((tag, val))
    simple = {
        DT_RELA: "rela",
        DT_RELASZ: "relasz",
        DT_RELAENT: "relaent",
        DT_JMPREL: "jmprel",
        DT_PLTRELSZ: "pltrelsz",
        DT_PLTREL: "pltrel",
        DT_INIT: "init",
        DT_FINI: "fini",
        DT_INIT_ARRAY: "init_array",
        DT_INIT_ARRAYSZ: "init_arraysz",
        DT_FINI_ARRAY: "fini_array",
        DT_FINI_ARRAYSZ: "fini_arraysz",
        DT_PREINIT_ARRAY: "preinit_array",
        DT_PREINIT_ARRAYSZ: "preinit_arraysz",
        DT_SYMTAB: "symtab",
        DT_STRTAB: "strtab",
        DT_STRSZ: "strsz",
        DT_FLAGS: "flags",
        DT_FLAGS_1: "flags_1",
    }
    for tag, val in d.tags:
        if tag in simple:
            setattr(d, simple[tag], val)
    if d.tags and d.get(DT_REL) is not None:
        raise r.fail("DT_REL", "REL (not RELA) relocations are not used on AArch64")
    mod.dynamic = d
    strtab = b""
    if d.strtab:
        if not d.strsz:
            raise r.fail("DT_STRSZ", "DT_STRTAB without DT_STRSZ")
        strtab = r.data[(o := _vaddr_to_off(r, mod, d.strtab, d.strsz, "DT_STRTAB")) : o + d.strsz]
    for tag, val in d.tags:
        if tag == DT_NEEDED:
            d.needed.append(r.cstr(strtab, val, "DT_NEEDED"))
        elif tag == DT_SONAME:
            d.soname = r.cstr(strtab, val, "DT_SONAME")
        elif tag in (DT_RUNPATH, DT_RPATH):
            d.runpath = r.cstr(strtab, val, "DT_RUNPATH")
    if d.symtab:
        n = _dynsym_count(r, mod, d)
        off = _vaddr_to_off(r, mod, d.symtab, n * _SYM.size, "DT_SYMTAB")
        mod.dynsyms = _parse_syms(r, r.data[off : off + n * _SYM.size], strtab, "DT_SYMTAB")
        _read_versions(r, mod, d, strtab)
    for tag_addr, sz, name in ((d.rela, d.relasz, "rela"), (d.jmprel, d.pltrelsz, "jmprel")):
        if not tag_addr or not sz:
            continue
        if name == "jmprel" and d.pltrel != DT_RELA:
            raise r.fail("DT_PLTREL", f"PLT relocation kind {d.pltrel} is not DT_RELA")
        if name == "rela" and d.relaent != _RELA.size:
            raise r.fail("DT_RELAENT", f"relocation entry size {d.relaent} is not {_RELA.size}")
        if sz % _RELA.size:
            raise r.fail("DT_RELASZ" if name == "rela" else "DT_PLTRELSZ", f"size {sz:#x} is not a multiple of {_RELA.size}")
        off = _vaddr_to_off(r, mod, tag_addr, sz, "DT_RELA" if name == "rela" else "DT_JMPREL")
        mod.relocs.extend(_parse_relocs(r, r.data[off : off + sz], mod.dynsyms, name))
    relr, relrsz = d.get(DT_RELR), d.get(DT_RELRSZ) or 0
    if relr and relrsz:
        if relrsz % 8:
            raise r.fail("DT_RELRSZ", f"size {relrsz:#x} is not a multiple of 8")
        off = _vaddr_to_off(r, mod, relr, relrsz, "DT_RELR")
        words = struct.unpack_from(f"<{relrsz // 8}Q", r.data, off)
        for place in decode_relr(words):
            # RELR addends are implicit: the word already at the place
            addend = struct.unpack("<q", mod.read(place, 8))[0]
            mod.relocs.append(Reloc(place, R_AARCH64_RELATIVE, 0, "", addend, "relr"))


def decode_relr(words: tuple[int, ...] | list[int]) -> list[int]:
    """Places of a DT_RELR table: an even word is an address (relocated, and the start of the
    next run); an odd word is a bitmap of the 63 words after the current run start."""
    places: list[int] = []
    where = 0
    for w in words:
        if w & 1 == 0:
            places.append(w)
            where = w + 8
        else:
            bits = w >> 1
            for i in range(63):
                if bits >> i & 1:
                    places.append(where + 8 * i)
            where += 63 * 8
    return places


def _dynsym_count(r: _Reader, mod: ElfModule, d: DynamicInfo) -> int:
    """Number of dynamic symbols: from the .dynsym section, else DT_HASH's nchain, else by
    walking DT_GNU_HASH's chains (the only way when section headers are stripped)."""
    for s in mod.sections:
        if s.type == SHT_DYNSYM and s.addr == d.symtab:
            return s.size // _SYM.size
    h = d.get(DT_HASH)
    if h:
        off = _vaddr_to_off(r, mod, h, 8, "DT_HASH")
        return struct.unpack_from("<II", r.data, off)[1]
    g = d.get(DT_GNU_HASH)
    if not g:
        return 0
    off = _vaddr_to_off(r, mod, g, 16, "DT_GNU_HASH")
    nbuckets, symoffset, bloom_size, _shift = struct.unpack_from("<IIII", r.data, off)
    boff = off + 16 + bloom_size * 8
    r.check(boff, nbuckets * 4, "DT_GNU_HASH.buckets")
    buckets = struct.unpack_from(f"<{nbuckets}I", r.data, boff)
    last = max(buckets, default=0)
    if last < symoffset:
        return symoffset
    coff = boff + nbuckets * 4
    i = last
    while True:
        r.check(coff + (i - symoffset) * 4, 4, "DT_GNU_HASH.chains")
        if struct.unpack_from("<I", r.data, coff + (i - symoffset) * 4)[0] & 1:
            return i + 1
        i += 1


def _read_versions(r: _Reader, mod: ElfModule, d: DynamicInfo, strtab: bytes) -> None:
    """Attach version names and the hidden (non-default) bit to dynamic symbols."""
    vs = d.get(DT_VERSYM)
    if not vs:
        return
    n = len(mod.dynsyms)
    off = _vaddr_to_off(r, mod, vs, n * 2, "DT_VERSYM")
    versym = struct.unpack_from(f"<{n}H", r.data, off)
    names: dict[int, str] = {}
    vd, vdn = d.get(DT_VERDEF), d.get(DT_VERDEFNUM) or 0
    if vd:
        off = _vaddr_to_off(r, mod, vd, 20, "DT_VERDEF")
        for _ in range(vdn):
            _ver, _fl, ndx, cnt, _hash, aux, nxt = struct.unpack_from("<HHHHIII", r.data, off)
            if cnt:
                r.check(off + aux, 8, "DT_VERDEF.vd_aux")
                names[ndx] = r.cstr(strtab, struct.unpack_from("<I", r.data, off + aux)[0], "DT_VERDEF.vda_name")
            if not nxt:
                break
            off += nxt
            r.check(off, 20, "DT_VERDEF.vd_next")
    vn, vnn = d.get(DT_VERNEED), d.get(DT_VERNEEDNUM) or 0
    if vn:
        off = _vaddr_to_off(r, mod, vn, 16, "DT_VERNEED")
        for _ in range(vnn):
            _ver, cnt, _file, aux, nxt = struct.unpack_from("<HHIII", r.data, off)
            a = off + aux
            for _j in range(cnt):
                r.check(a, 16, "DT_VERNEED.vn_aux")
                _h, _f, other, name, anext = struct.unpack_from("<IHHII", r.data, a)
                names[other] = r.cstr(strtab, name, "DT_VERNEED.vna_name")
                if not anext:
                    break
                a += anext
            if not nxt:
                break
            off += nxt
            r.check(off, 16, "DT_VERNEED.vn_next")
    for sym, v in zip(mod.dynsyms, versym):
        idx = v & 0x7FFF
        if idx >= 2:
            sym.version = names.get(idx, "")
        sym.hidden_version = bool(v & 0x8000)


def _parse_relocs(r: _Reader, raw: bytes, syms: list[Symbol], table: str) -> list[Reloc]:
    out = []
    for i, (off, info, addend) in enumerate(_RELA.iter_unpack(raw)):
        si, typ = info >> 32, info & 0xFFFFFFFF
        if si >= max(len(syms), 1):
            raise r.fail(f"{table}[{i}].r_info", f"symbol index {si} is past the symbol table ({len(syms)})")
        out.append(Reloc(off, typ, si, syms[si].name if si else "", addend, table))
    return out


def _read_static_relocs(r: _Reader, mod: ElfModule) -> None:
    """Static executables have no PT_DYNAMIC, but glibc's IRELATIVE relocations (between
    __rela_iplt_start/end) sit in an allocated RELA section (.rela.plt): record them."""
    if mod.dynamic is not None:
        return
    for i, s in enumerate(mod.sections):
        if s.type == SHT_RELA and s.flags & SHF_ALLOC and s.size:
            if s.entsize not in (0, _RELA.size) or s.size % _RELA.size:
                raise r.fail(f"section {s.name}.sh_size", f"size {s.size:#x} is not a multiple of {_RELA.size}")
            syms = mod.dynsyms
            if s.link and s.link < len(mod.sections) and mod.sections[s.link].type in (SHT_SYMTAB, SHT_DYNSYM):
                syms = _symbols(r, mod, s.link, f"section {mod.sections[s.link].name}")
            mod.relocs.extend(_parse_relocs(r, r.data[s.offset : s.offset + s.size], syms, s.name))


def _find_unwind(r: _Reader, mod: ElfModule, ehf: tuple[int, int, int] | None) -> None:
    """Without section headers, find .eh_frame through PT_GNU_EH_FRAME's eh_frame_ptr and
    walk its records to the zero terminator to learn its size; default text = X segments."""
    if not mod.text_ranges:
        mod.text_ranges = [(s.vaddr, s.vaddr + s.memsz) for s in mod.segments if s.flags & PF_X]
    if ehf is None or mod.eh_frame is not None:
        return
    vaddr, off, size = ehf
    mod.eh_frame_hdr = (vaddr, r.data[off : off + size])
    if size < 8 or r.data[off] != 1:
        return
    enc = r.data[off + 1]
    if enc != 0x1B:  # DW_EH_PE_pcrel|sdata4: the only encoding linkers emit for eh_frame_ptr
        return
    target = vaddr + 4 + struct.unpack_from("<i", r.data, off + 4)[0]
    for s in mod.segments:
        if s.vaddr <= target < s.vaddr + s.filesz:
            pos = target - s.vaddr
            end = pos
            while end + 4 <= len(s.data):
                ln = struct.unpack_from("<I", s.data, end)[0]
                if ln == 0 or ln == 0xFFFFFFFF:
                    break
                end += 4 + ln
            mod.eh_frame = (target, s.data[pos : min(end, len(s.data))])
            return
