"""The ELF dynamic information of a loaded module image: ``.dynamic`` entries, dynamic
symbols and relocations, extracted as records (the linker applies them; nothing here writes
to the image).

Addresses in a Switch module's ``.dynamic`` are offsets from the module's base, so the image
(text + rodata + data + zeroed bss, laid out as in memory) is all that is needed.  Constants
are the ELF64 / AArch64 ELF ABI values."""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass, field

import numpy as np

from recompiler.formats.binreader import BinReader

log = logging.getLogger("formats")

# d_tag values (ELF gABI + GNU extensions).
DT_NAMES = {
    0: "NULL",
    1: "NEEDED",
    2: "PLTRELSZ",
    3: "PLTGOT",
    4: "HASH",
    5: "STRTAB",
    6: "SYMTAB",
    7: "RELA",
    8: "RELASZ",
    9: "RELAENT",
    10: "STRSZ",
    11: "SYMENT",
    12: "INIT",
    13: "FINI",
    14: "SONAME",
    15: "RPATH",
    16: "SYMBOLIC",
    17: "REL",
    18: "RELSZ",
    19: "RELENT",
    20: "PLTREL",
    21: "DEBUG",
    22: "TEXTREL",
    23: "JMPREL",
    24: "BIND_NOW",
    25: "INIT_ARRAY",
    26: "FINI_ARRAY",
    27: "INIT_ARRAYSZ",
    28: "FINI_ARRAYSZ",
    29: "RUNPATH",
    30: "FLAGS",
    32: "PREINIT_ARRAY",
    33: "PREINIT_ARRAYSZ",
    35: "RELRSZ",
    36: "RELR",
    37: "RELRENT",
    0x6FFFFEF5: "GNU_HASH",
    0x6FFFFFF0: "VERSYM",
    0x6FFFFFF9: "RELACOUNT",
    0x6FFFFFFA: "RELCOUNT",
    0x6FFFFFFB: "FLAGS_1",
    0x6FFFFFFC: "VERDEF",
    0x6FFFFFFD: "VERDEFNUM",
    0x6FFFFFFE: "VERNEED",
    0x6FFFFFFF: "VERNEEDNUM",
}
DT = {name: tag for tag, name in DT_NAMES.items()}

# Relocation types of the AArch64 ELF ABI that dynamic modules carry.
R_AARCH64_NAMES = {
    0: "NONE",
    257: "ABS64",
    258: "ABS32",
    259: "ABS16",
    260: "PREL64",
    261: "PREL32",
    1024: "COPY",
    1025: "GLOB_DAT",
    1026: "JUMP_SLOT",
    1027: "RELATIVE",
    1028: "TLS_DTPMOD64",
    1029: "TLS_DTPREL64",
    1030: "TLS_TPREL64",
    1031: "TLSDESC",
    1032: "IRELATIVE",
}
R_AARCH64_RELATIVE = 1027

STT_NAMES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE", 5: "COMMON", 6: "TLS", 10: "GNU_IFUNC"}
STB_NAMES = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "GNU_UNIQUE"}
SHN_UNDEF = 0

# Real modules have a few dozen entries; a damaged one must not be read to the end of a large image.
MAX_DYNAMIC_ENTRIES = 4096
SYM_SIZE = 24
RELA_SIZE = 24
REL_SIZE = 16


@dataclass(frozen=True)
class Symbol:
    index: int
    name: str
    value: int
    size: int
    type: int  # STT_*
    binding: int  # STB_*
    other: int  # st_other (low 2 bits: visibility)
    section: int  # st_shndx; 0 = undefined (an import)

    @property
    def type_name(self) -> str:
        return STT_NAMES.get(self.type, str(self.type))

    @property
    def binding_name(self) -> str:
        return STB_NAMES.get(self.binding, str(self.binding))

    @property
    def defined(self) -> bool:
        return self.section != SHN_UNDEF


@dataclass(frozen=True)
class Relocation:
    offset: int  # where it applies, from the module base
    type: int  # R_AARCH64_*
    symbol: int  # index into the dynamic symbol table (0: none)
    addend: int | None  # None: implicit (REL/RELR), read from the word at ``offset``
    table: str  # "rela", "jmprel", "rel" or "relr"

    @property
    def type_name(self) -> str:
        return R_AARCH64_NAMES.get(self.type, str(self.type))


@dataclass(frozen=True)
class DynamicInfo:
    offset: int  # of .dynamic in the image
    entries: list[tuple[int, int]]  # (d_tag, d_val) up to, not including, DT_NULL
    needed: list[str] = field(default_factory=list)
    soname: str | None = None
    symbols: list[Symbol] = field(default_factory=list)
    relocations: list[Relocation] = field(default_factory=list)
    # why the symbol table was not read (it points outside the image, as libtransistor's NSOs'
    # does: their crt0 needs only the relocations), else None; a relocation that names a
    # symbol is then an error where something applies it, not here
    symbols_missing: str | None = None

    def get(self, name: str) -> int | None:
        """Value of the first entry with tag ``DT_<name>`` (None when absent)."""
        tag = DT[name]
        for t, v in self.entries:
            if t == tag:
                return v
        return None

    def array(self, name: str) -> tuple[int, int] | None:
        """(offset, size in bytes) of INIT_ARRAY / FINI_ARRAY / PREINIT_ARRAY."""
        off, size = self.get(name), self.get(name + "SZ")
        return None if off is None else (off, size or 0)

    @property
    def imports(self) -> list[Symbol]:
        return [s for s in self.symbols if s.index and not s.defined]

    @property
    def exports(self) -> list[Symbol]:
        return [s for s in self.symbols if s.defined and s.binding != 0]


def _strz(r: BinReader, field_name: str, strtab: int, strsz: int, index: int) -> str:
    if index >= strsz:
        raise r.error(field_name, strtab, f"string index {index:#x} is past the string table (size {strsz:#x})")
    return r.strz(field_name, strtab + index, strtab + strsz)


def read_dynamic_entries(r: BinReader, offset: int) -> list[tuple[int, int]]:
    """``.dynamic`` entries from ``offset`` up to DT_NULL; bounded by the image."""
    entries: list[tuple[int, int]] = []
    pos = offset
    while True:
        if pos + 16 > len(r):
            raise r.error(".dynamic", pos, "no DT_NULL before the end of the image")
        if len(entries) >= MAX_DYNAMIC_ENTRIES:
            raise r.error(".dynamic", offset, f"more than {MAX_DYNAMIC_ENTRIES} entries without DT_NULL")
        tag = r.s64(".dynamic.d_tag", pos)
        val = r.u64(".dynamic.d_val", pos + 8)
        if tag == 0:
            return entries
        entries.append((tag, val))
        pos += 16


def _symbol_count(r: BinReader, tags: dict[int, int]) -> int | None:
    """How many entries DT_SYMTAB has: ELF has no count tag, so take it from DT_HASH's
    nchain, else from DT_GNU_HASH's chains, else from the gap between SYMTAB and STRTAB
    (linkers place .dynstr right after .dynsym)."""
    if DT["HASH"] in tags:
        h = tags[DT["HASH"]]
        return r.u32("DT_HASH.nchain", h + 4)
    if DT["GNU_HASH"] in tags:
        g = tags[DT["GNU_HASH"]]
        nbuckets = r.u32("DT_GNU_HASH.nbuckets", g)
        symoffset = r.u32("DT_GNU_HASH.symoffset", g + 4)
        bloom_size = r.u32("DT_GNU_HASH.bloom_size", g + 8)
        buckets = g + 16 + 8 * bloom_size
        r.check("DT_GNU_HASH.buckets", buckets, 4 * nbuckets)
        top = 0
        for b in range(nbuckets):
            top = max(top, r.u32("DT_GNU_HASH.buckets", buckets + 4 * b))
        if top == 0:
            return symoffset
        if top < symoffset:
            raise r.error("DT_GNU_HASH.buckets", buckets, f"bucket symbol {top} is below symoffset {symoffset}")
        chains = buckets + 4 * nbuckets
        # The last chain ends at the first entry with bit 0 set at or after the top bucket's
        # symbol; search the rest of the image at once (a loop of reads would crawl on a
        # damaged table of zeroes).
        start = chains + 4 * (top - symoffset)
        r.check("DT_GNU_HASH.chains", start, 4)
        words = np.frombuffer(r.data, dtype="<u4", count=(len(r) - start) // 4, offset=start)
        ends = np.flatnonzero(words & 1)
        if not len(ends):
            raise r.error("DT_GNU_HASH.chains", start, "the last hash chain never ends")
        return top + int(ends[0]) + 1
    symtab, strtab = tags.get(DT["SYMTAB"]), tags.get(DT["STRTAB"])
    if symtab is not None and strtab is not None and strtab > symtab:
        return (strtab - symtab) // tags.get(DT["SYMENT"], SYM_SIZE)
    return None


_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_REL = struct.Struct("<QQ")


def read_symbols(r: BinReader, symtab: int, count: int, strtab: int, strsz: int) -> list[Symbol]:
    r.check("DT_SYMTAB", symtab, count * SYM_SIZE)
    r.check("DT_STRTAB", strtab, strsz)
    out = []
    # Names repeat across modules' tables rarely, but often within one (weak aliases): cache them.
    names: dict[int, str] = {}
    d = r.data
    searchable = not isinstance(d, memoryview)  # bytes/mmap have find(); the slow path checks itself
    end = strtab + strsz
    for i, (st_name, info, other, shndx, value, size) in enumerate(_SYM.iter_unpack(d[symtab : symtab + count * SYM_SIZE])):
        name = names.get(st_name)
        if name is None:
            nul = d.find(b"\0", strtab + st_name, end) if searchable and st_name < strsz else -1
            if nul >= 0:
                name = bytes(d[strtab + st_name : nul]).decode("utf-8", "replace")
            else:
                name = _strz(r, f"dynsym[{i}].st_name", strtab, strsz, st_name)  # names the problem
            names[st_name] = name
        out.append(Symbol(i, name, value, size, info & 0xF, info >> 4, other, shndx))
    return out


def _read_relocs(r: BinReader, table: str, start: int, size: int, entsize: int, nsyms: int | None) -> list[Relocation]:
    """``nsyms`` None: the symbol table is unknown, so symbol indices are not checked here."""
    if size % entsize:
        raise r.error(f"{table} size", start, f"size {size:#x} is not a multiple of the entry size {entsize}")
    r.check(table, start, size)
    out = []
    limit = len(r) - 8
    top = max(nsyms, 1) if nsyms is not None else 1 << 32
    rela = entsize == RELA_SIZE
    for k, ent in enumerate((_RELA if rela else _REL).iter_unpack(r.data[start : start + size])):
        off, info = ent[0], ent[1]
        sym = info >> 32
        if sym >= top:
            raise r.error(
                f"{table}.r_info", start + k * entsize + 8, f"symbol index {sym} is past the symbol table ({nsyms} entries)"
            )
        if off > limit:
            raise r.error(
                f"{table}.r_offset", start + k * entsize, f"relocation target {off:#x} is outside the image (size {len(r):#x})"
            )
        out.append(Relocation(off, info & 0xFFFFFFFF, sym, ent[2] if rela else None, table))
    return out


def _read_relr(r: BinReader, start: int, size: int) -> list[Relocation]:
    """Packed relative relocations: an even word is an address, an odd word a bitmap of the
    next 63 words after the last address."""
    if size % 8:
        raise r.error("DT_RELRSZ", start, f"size {size:#x} is not a multiple of 8")
    r.check("DT_RELR", start, size)
    out: list[Relocation] = []
    where = None
    for p in range(start, start + size, 8):
        w = r.u64("relr entry", p)
        if not w & 1:
            where = w
            targets = [w]
            where += 8
        else:
            if where is None:
                raise r.error("relr entry", p, "bitmap entry before any address entry")
            targets = [where + 8 * k for k in range(63) if (w >> (k + 1)) & 1]
            where += 63 * 8
        for t in targets:
            if t + 8 > len(r):
                raise r.error("relr entry", p, f"relocation target {t:#x} is outside the image (size {len(r):#x})")
            out.append(Relocation(t, R_AARCH64_RELATIVE, 0, None, "relr"))
    return out


def _symbols_outside(size: int, tags: dict[int, int]) -> str | None:
    """Why DT_SYMTAB/DT_STRTAB/DT_HASH cannot be read, when they start outside the image (a
    runtime that relocates itself and never looks symbols up need not keep them inside: the
    libtransistor NSOs' tables point past their image); None when they start inside it (a
    damaged table inside the image is still an error that names it)."""
    for name in ("SYMTAB", "STRTAB", "HASH", "GNU_HASH"):
        v = tags.get(DT[name])
        if v is not None and not 0 <= v < size:
            return f"DT_{name} {v:#x} points outside the image (size {size:#x})"
    strtab, strsz = tags.get(DT["STRTAB"]), tags.get(DT["STRSZ"], 0)
    if strtab is not None and strtab + strsz > size:
        return f"DT_STRTAB {strtab:#x}+DT_STRSZ {strsz:#x} runs past the image (size {size:#x})"
    return None


def parse_dynamic(image: bytes | bytearray | memoryview, offset: int, path: str) -> DynamicInfo:
    """Parse the ``.dynamic`` at image ``offset`` and everything it points at."""
    r = BinReader(image, f"{path} (module image)")
    entries = read_dynamic_entries(r, offset)
    tags: dict[int, int] = {}
    for t, v in entries:
        tags.setdefault(t, v)
    strtab, strsz = tags.get(DT["STRTAB"]), tags.get(DT["STRSZ"], 0)

    def string(tag_name: str, index: int) -> str:
        if strtab is None:
            raise r.error(f"DT_{tag_name}", offset, "string tag without DT_STRTAB")
        return _strz(r, f"DT_{tag_name}", strtab, strsz, index)

    needed = [string("NEEDED", v) for t, v in entries if t == DT["NEEDED"]]
    soname = string("SONAME", tags[DT["SONAME"]]) if DT["SONAME"] in tags else None

    symbols: list[Symbol] = []
    missing = _symbols_outside(len(r), tags)
    if missing:
        log.warning("%s: no symbols: %s", path, missing)
    elif DT["SYMTAB"] in tags:
        if strtab is None:
            raise r.error("DT_SYMTAB", offset, "symbol table without DT_STRTAB")
        syment = tags.get(DT["SYMENT"], SYM_SIZE)
        if syment != SYM_SIZE:
            raise r.error("DT_SYMENT", offset, f"symbol entry size {syment} is not {SYM_SIZE}")
        count = _symbol_count(r, tags)
        if count is None:
            raise r.error(
                "DT_SYMTAB",
                offset,
                "cannot tell the symbol count: no DT_HASH, no DT_GNU_HASH, and DT_STRTAB does not follow DT_SYMTAB",
            )
        symbols = read_symbols(r, tags[DT["SYMTAB"]], count, strtab, strsz)
    nsyms = None if missing else len(symbols)

    relocs: list[Relocation] = []
    if DT["RELA"] in tags:
        ent = tags.get(DT["RELAENT"], RELA_SIZE)
        if ent != RELA_SIZE:
            raise r.error("DT_RELAENT", offset, f"entry size {ent} is not {RELA_SIZE}")
        relocs += _read_relocs(r, "rela", tags[DT["RELA"]], tags.get(DT["RELASZ"], 0), RELA_SIZE, nsyms)
    if DT["REL"] in tags:
        relocs += _read_relocs(r, "rel", tags[DT["REL"]], tags.get(DT["RELSZ"], 0), REL_SIZE, nsyms)
    if DT["JMPREL"] in tags:
        kind = tags.get(DT["PLTREL"], DT["RELA"])
        if kind not in (DT["RELA"], DT["REL"]):
            raise r.error("DT_PLTREL", offset, f"PLT relocation kind {kind} is neither DT_RELA nor DT_REL")
        relocs += _read_relocs(
            r, "jmprel", tags[DT["JMPREL"]], tags.get(DT["PLTRELSZ"], 0), RELA_SIZE if kind == DT["RELA"] else REL_SIZE, nsyms
        )
    if DT["RELR"] in tags:
        relocs += _read_relr(r, tags[DT["RELR"]], tags.get(DT["RELRSZ"], 0))
    return DynamicInfo(offset, entries, needed, soname, symbols, relocs, missing)
