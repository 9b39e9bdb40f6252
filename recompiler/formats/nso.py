"""NSO0 loader: the executable format of Switch ExeFS modules (``main``, ``sdk``, ``subsdk*``).

Header (0x100 bytes): three segment headers (file offset, memory offset, size), their stored
sizes, compression/hash flags, the module name, the build id, .rodata-relative ranges of the
API info, .dynstr and .dynsym, and the SHA-256 of each decompressed segment.  Segments are
raw LZ4 blocks when compressed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from nxrecomp.common.errors import NxError
from recompiler.formats.binreader import BinReader
from recompiler.formats.elfdyn import Symbol, read_symbols
from recompiler.formats.lz4 import decompress_block
from recompiler.formats.module import SEGMENT_NAMES, ModuleImage, ModuleView, Segment, check_layout, check_span, finish_module

MAGIC = b"NSO0"
HEADER_SIZE = 0x100
FLAG_COMPRESSED = (1 << 0, 1 << 1, 1 << 2)  # text, rodata, data
FLAG_HASH_CHECK = (1 << 3, 1 << 4, 1 << 5)

# Offsets of the header fields, per segment where they repeat.
SEG_HEADER = (0x10, 0x20, 0x30)  # FileOffset, MemoryOffset, Size
FILE_SIZE = (0x60, 0x64, 0x68)
HASH = (0xA0, 0xC0, 0xE0)
MODULE_NAME_OFFSET, MODULE_NAME_SIZE, BSS_SIZE, MODULE_ID = 0x1C, 0x2C, 0x3C, 0x40
EMBEDDED, DYNSTR, DYNSYM = 0x88, 0x90, 0x98


@dataclass(frozen=True)
class NsoModule(ModuleView):
    path: str
    version: int
    flags: int
    name: str
    build_id: bytes  # 0x20 bytes (GNU build id, zero-padded)
    embedded: tuple[int, int]  # (offset, size) from .rodata: the API info
    dynstr: tuple[int, int]  # (offset, size) from .rodata
    dynsym: tuple[int, int]  # (offset, size) from .rodata
    module: ModuleImage
    header_symbols: list[Symbol]  # from the header's .dynsym/.dynstr (used when there is no MOD0)

    @property
    def symbols(self) -> list[Symbol]:
        return self.module.dynamic.symbols if self.module.dynamic else self.header_symbols


def _segment_bytes(
    r: BinReader, i: int, flags: int, file_off: int, file_size: int, size: int, want_hash: bytes
) -> tuple[bytes, bool]:
    """Decompressed bytes of segment ``i`` and whether they were stored compressed.

    Stored smaller than in memory means compressed, whatever the flag says (some tools clear
    it).  Flag set with equal sizes is ambiguous: LZ4 is tried and kept only if it decodes to
    exactly ``size`` bytes (and matches the hash when one is to be checked)."""
    name = SEGMENT_NAMES[i]
    stored = r.bytes(f"{name}.FileOffset/FileSize", file_off, file_size)
    flagged = bool(flags & FLAG_COMPRESSED[i])
    if file_size < size or (flagged and file_size != size):
        return decompress_block(stored, size, path=r.path, field=f"{name} segment (LZ4)", base=file_off), True
    if flagged:
        try:
            out = decompress_block(stored, size, path=r.path)
        except NxError:
            return stored, False
        if not (flags & FLAG_HASH_CHECK[i]) or hashlib.sha256(out).digest() == want_hash:
            return out, True
    return stored, False


def _range(r: BinReader, field: str, at: int, limit: int, limit_name: str) -> tuple[int, int]:
    off, size = r.u32(f"{field}.Offset", at), r.u32(f"{field}.Size", at + 4)
    if size and off + size > limit:
        raise r.error(field, at, f"range {off:#x}+{size:#x} runs past {limit_name} (size {limit:#x})")
    return off, size


def parse_nso(data: bytes | bytearray | memoryview, path: str = "<nso>") -> NsoModule:
    r = BinReader(data, path)
    r.check("header", 0, HEADER_SIZE)
    r.magic("Magic", 0, MAGIC)
    version = r.u32("Version", 4)
    flags = r.u32("Flags", 0xC)
    if flags & ~0x3F:
        raise r.error("Flags", 0xC, f"unknown flag bits {flags & ~0x3F:#x}")
    heads = []
    for i, (nm, at) in enumerate(zip(SEGMENT_NAMES, SEG_HEADER)):
        heads.append(
            (
                r.u32(f"{nm}.FileOffset", at),
                r.u32(f"{nm}.MemoryOffset", at + 4),
                r.u32(f"{nm}.Size", at + 8),
                r.u32(f"{nm}.FileSize", FILE_SIZE[i]),
            )
        )
    lay = [(SEGMENT_NAMES[i], h[1], h[2], SEG_HEADER[i] + 4) for i, h in enumerate(heads)]
    check_layout(r, lay, "header")
    check_span(r, lay, "header")
    for i, (foff, _, size, fsize) in enumerate(heads):
        nm = SEGMENT_NAMES[i]
        r.check(f"{nm}.FileOffset/FileSize", foff, fsize)
        if foff < HEADER_SIZE and fsize:
            raise r.error(f"{nm}.FileOffset", SEG_HEADER[i], f"segment data at {foff:#x} overlaps the header")
        if fsize > size and not flags & FLAG_COMPRESSED[i]:
            raise r.error(
                f"{nm}.FileSize",
                FILE_SIZE[i],
                f"stored size {fsize:#x} is larger than the memory size {size:#x} and the segment is not marked compressed",
            )
    bss = r.u32("BssSize", BSS_SIZE)
    name_off, name_size = r.u32("ModuleNameOffset", MODULE_NAME_OFFSET), r.u32("ModuleNameSize", MODULE_NAME_SIZE)
    name = r.cstr("ModuleName", name_off, name_size) if name_size else ""
    build_id = r.bytes("ModuleId", MODULE_ID, 0x20)
    ro_size = heads[1][2]
    embedded = _range(r, "EmbeddedOffset", EMBEDDED, ro_size, ".rodata")
    dynstr = _range(r, "DynStrOffset", DYNSTR, ro_size, ".rodata")
    dynsym = _range(r, "DynSymOffset", DYNSYM, ro_size, ".rodata")

    segments, datas = [], []
    for i, (foff, moff, size, fsize) in enumerate(heads):
        want = r.bytes(f"{SEGMENT_NAMES[i]}Hash", HASH[i], 0x20)
        seg, compressed = _segment_bytes(r, i, flags, foff, fsize, size, want)
        checked = bool(flags & FLAG_HASH_CHECK[i])
        if checked and hashlib.sha256(seg).digest() != want:
            raise r.error(
                f"{SEGMENT_NAMES[i]}Hash", HASH[i], f"SHA-256 of the decompressed .{SEGMENT_NAMES[i]} does not match the header"
            )
        segments.append(Segment(SEGMENT_NAMES[i], moff, size, foff, fsize, compressed, want, checked))
        datas.append(seg)
    module = finish_module(segments, datas, bss, path)

    header_symbols: list[Symbol] = []
    if module.dynamic is None and dynsym[1]:
        ro = heads[1][1]
        img = BinReader(module.image, f"{path} (module image)")
        header_symbols = read_symbols(img, ro + dynsym[0], dynsym[1] // 24, ro + dynstr[0], dynstr[1])
    return NsoModule(path, version, flags, name, build_id, embedded, dynstr, dynsym, module, header_symbols)
