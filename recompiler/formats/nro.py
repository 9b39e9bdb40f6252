"""NRO0 loader: homebrew executables (and Nintendo's relocatable objects).

The file *is* the module image for .text/.rodata/.data (stored uncompressed, file offset ==
memory offset); the first 0x10 bytes belong to .text (a branch and the MOD0 offset), the NRO
header follows at 0x10.  Homebrew appends an ASET section after ``Size`` bytes: icon, NACP
and RomFS ranges relative to the ASET start."""

from __future__ import annotations

from dataclasses import dataclass

from recompiler.formats.binreader import BinReader
from recompiler.formats.elfdyn import Symbol
from recompiler.formats.module import SEGMENT_NAMES, ModuleImage, ModuleView, Segment, check_layout, check_span, finish_module
from recompiler.formats.nacp import Nacp, parse_nacp

MAGIC = b"NRO0"
ASET_MAGIC = b"ASET"
HEADER_END = 0x80
SEG_HEADER = (0x20, 0x28, 0x30)  # MemoryOffset, Size per segment
SIZE, FLAGS, BSS_SIZE, MODULE_ID, DSO_HANDLE = 0x18, 0x1C, 0x38, 0x40, 0x60
EMBEDDED, DYNSTR, DYNSYM = 0x68, 0x70, 0x78
ASET_HEADER_SIZE = 0x38
ASET_PARTS = ("icon", "nacp", "romfs")


@dataclass(frozen=True)
class AssetRange:
    offset: int  # from the start of the file
    size: int


@dataclass(frozen=True)
class Assets:
    offset: int  # of the ASET header in the file
    version: int
    icon: AssetRange
    nacp: AssetRange
    romfs: AssetRange
    nacp_info: Nacp | None


@dataclass(frozen=True)
class NroModule(ModuleView):
    path: str
    version: int
    size: int
    flags: int
    build_id: bytes
    dso_handle_offset: int
    embedded: tuple[int, int]
    dynstr: tuple[int, int]
    dynsym: tuple[int, int]
    module: ModuleImage
    assets: Assets | None

    @property
    def symbols(self) -> list[Symbol]:
        return self.module.dynamic.symbols if self.module.dynamic else []


def _assets(r: BinReader, at: int) -> Assets:
    a = r.sub("ASET", at, len(r) - at)
    a.check("ASET header", 0, ASET_HEADER_SIZE)
    a.magic("ASET.Magic", 0, ASET_MAGIC)
    parts = []
    for i, name in enumerate(ASET_PARTS):
        off, size = a.u64(f"ASET.{name}.Offset", 8 + 16 * i), a.u64(f"ASET.{name}.Size", 16 + 16 * i)
        if size:
            a.check(f"ASET.{name}", off, size)
        parts.append(AssetRange(at + off, size))
    nacp = None
    if parts[1].size:
        nacp = parse_nacp(r.sub("ASET.nacp", parts[1].offset, parts[1].size))
    return Assets(at, a.u32("ASET.Version", 4), parts[0], parts[1], parts[2], nacp)


def _range(r: BinReader, field: str, at: int, limit: int) -> tuple[int, int]:
    off, size = r.u32(f"{field}.Offset", at), r.u32(f"{field}.Size", at + 4)
    if size and off + size > limit:
        raise r.error(field, at, f"range {off:#x}+{size:#x} runs past .rodata (size {limit:#x})")
    return off, size


def parse_nro(data: bytes | bytearray | memoryview, path: str = "<nro>") -> NroModule:
    r = BinReader(data, path)
    r.check("header", 0, HEADER_END)
    r.magic("Magic", 0x10, MAGIC)
    size = r.u32("Size", SIZE)
    if size < HEADER_END or size > len(r):
        raise r.error("Size", SIZE, f"NRO size {size:#x} is outside {HEADER_END:#x}..{len(r):#x} (file size)")
    lay = [(n, r.u32(f"{n}.MemoryOffset", at), r.u32(f"{n}.Size", at + 4), at) for n, at in zip(SEGMENT_NAMES, SEG_HEADER)]
    check_layout(r, lay, "header")
    check_span(r, lay, "header")
    if lay[0][2] < HEADER_END:
        raise r.error(
            "text.Size",
            SEG_HEADER[0] + 4,
            f".text is {lay[0][2]:#x} bytes; it must hold the {HEADER_END:#x}-byte header it starts with",
        )
    segments, datas = [], []
    for i, (name, off, sz, _) in enumerate(lay):
        if off + sz > size:
            raise r.error(f"{name}.Size", SEG_HEADER[i] + 4, f".{name} {off:#x}+{sz:#x} runs past the NRO size {size:#x}")
        datas.append(r.bytes(name, off, sz))
        segments.append(Segment(name, off, sz, off, sz))
    bss = r.u32("BssSize", BSS_SIZE)
    ro_size = lay[1][2]
    module = finish_module(segments, datas, bss, path)
    assets = _assets(r, size) if len(r) >= size + 4 and bytes(r.data[size : size + 4]) == ASET_MAGIC else None
    dso = r.u32("DsoHandleOffset", DSO_HANDLE)
    if dso > module.memory_size:
        raise r.error("DsoHandleOffset", DSO_HANDLE, f"{dso:#x} is outside the module (size {module.memory_size:#x})")
    return NroModule(
        path,
        r.u32("Version", 0x14),
        size,
        r.u32("Flags", FLAGS),
        r.bytes("ModuleId", MODULE_ID, 0x20),
        dso,
        _range(r, "EmbeddedOffset", EMBEDDED, ro_size),
        _range(r, "DynStrOffset", DYNSTR, ro_size),
        _range(r, "DynSymOffset", DYNSYM, ro_size),
        module,
        assets,
    )
