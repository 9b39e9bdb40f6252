"""What NSO0 and NRO0 have in common once their segments are in memory: the module image
(.text, .rodata, .data at their memory offsets; .bss follows, zeroed, and is not stored), the
MOD0 header that image+4 points at, and the ``.dynamic`` that MOD0 points at."""

from __future__ import annotations

from dataclasses import dataclass

from recompiler.formats.binreader import BinReader
from recompiler.formats.elfdyn import DynamicInfo, parse_dynamic

PAGE = 0x1000
SEGMENT_NAMES = ("text", "rodata", "data")
# LZ4 expands at most ~255x; a module spanning more than this per byte of file is damaged.
SPAN_PER_FILE_BYTE = 256
MIN_SPAN_LIMIT = 64 << 20


@dataclass(frozen=True)
class Segment:
    name: str  # "text", "rodata" or "data"
    mem_offset: int  # from the module base
    size: int  # in memory (decompressed)
    file_offset: int
    file_size: int  # as stored (compressed size when compressed)
    compressed: bool = False
    sha256: bytes | None = None  # from the NSO header (None for NRO)
    hash_checked: bool = False  # the header asked for the hash to be checked, and it matched


@dataclass(frozen=True)
class Mod0:
    """MOD0 header; every field is resolved to an offset from the module base."""

    offset: int
    dynamic: int
    bss_start: int
    bss_end: int
    eh_frame_hdr_start: int
    eh_frame_hdr_end: int
    module_object: int
    # libnx's homebrew extensions right after the 0x1C bytes (its crt0's Mod0Header): "LNY0"
    # with the GOT's start/end, then "LNY1" with the RELRO start/end; None when absent
    got: tuple[int, int] | None = None
    relro: tuple[int, int] | None = None

    @property
    def homebrew(self) -> bool:
        """The module carries libnx's MOD0 extension: built by the homebrew toolchain, whose
        crt0 applies its own relocations."""
        return self.got is not None


@dataclass(frozen=True)
class ModuleImage:
    segments: tuple[Segment, Segment, Segment]
    bss_size: int
    image: bytes  # .text .. end of .data as in memory (gaps zeroed); .bss not stored
    mod0: Mod0 | None
    dynamic: DynamicInfo | None

    @property
    def memory_size(self) -> int:
        """Bytes the module spans in memory, .bss included (not page-rounded)."""
        return len(self.image) + self.bss_size

    def segment(self, name: str) -> Segment:
        for s in self.segments:
            if s.name == name:
                return s
        raise KeyError(name)


# (segment name, memory offset, size, file offset of its MemoryOffset field)
SegLayout = list[tuple[str, int, int, int]]


def check_layout(r: BinReader, segs: SegLayout, header_field: str) -> None:
    """Segments must start at 0 and follow each other without overlapping (a loader that
    accepted overlap would let .data silently overwrite code)."""
    name0, mem0, _, at0 = segs[0]
    if mem0 != 0:
        raise r.error(f"{header_field}.{name0}.MemoryOffset", at0, f".text must be at offset 0, not {mem0:#x}")
    for (na, ma, sa, _), (nb, mb, _, atb) in zip(segs, segs[1:]):
        if ma + sa > mb:
            raise r.error(f"{header_field}.{nb}.MemoryOffset", atb, f".{nb} at {mb:#x} overlaps .{na} ({ma:#x}..{ma + sa:#x})")


def read_mod0(image: bytes, memory_size: int, path: str) -> Mod0 | None:
    """MOD0 found through the word at image+4, or None for modules that have none.

    A module is not required to start with the ``b start; .word mod0`` pair: if the word does
    not point at a ``MOD0`` magic inside the image, the module simply has no MOD0.  Once the
    magic is found, its fields must be sane."""
    r = BinReader(image, f"{path} (module image)")
    if len(image) < 8:
        return None
    off = r.u32("MOD0 pointer", 4)
    if off == 0 or off + 0x1C > len(image) or image[off : off + 4] != b"MOD0":
        return None
    vals = [
        off + r.s32(f"MOD0.{n}", off + 4 + 4 * i)
        for i, n in enumerate(("dynamic", "bss_start", "bss_end", "eh_frame_hdr_start", "eh_frame_hdr_end", "module_object"))
    ]
    ext: dict[str, tuple[int, int]] = {}
    for at, magic, name in ((off + 0x1C, b"LNY0", "got"), (off + 0x28, b"LNY1", "relro")):
        if at + 12 > len(image) or image[at : at + 4] != magic:
            break
        lo, hi = (off + r.s32(f"MOD0.{magic.decode()}.{name}", at + 4 + 4 * i) for i in range(2))
        if not 0 <= lo <= hi <= memory_size:
            raise r.error(
                f"MOD0.{magic.decode()}",
                at,
                f"{name} range {lo:#x}..{hi:#x} is outside the module (size {memory_size:#x}) or reversed",
            )
        ext[name] = (lo, hi)
    m = Mod0(off, *vals, **ext)
    for name in ("dynamic", "bss_start", "bss_end", "eh_frame_hdr_start", "eh_frame_hdr_end", "module_object"):
        v = getattr(m, name)
        if not 0 <= v <= memory_size:
            raise r.error(f"MOD0.{name}", off, f"points at {v:#x}, outside the module (size {memory_size:#x})")
    if m.bss_start > m.bss_end:
        raise r.error("MOD0.bss_end", off + 12, f"bss end {m.bss_end:#x} is before bss start {m.bss_start:#x}")
    if m.eh_frame_hdr_start > m.eh_frame_hdr_end:
        raise r.error("MOD0.eh_frame_hdr_end", off + 20, "eh_frame_hdr end is before its start")
    return m


def check_span(r: BinReader, segs: SegLayout, header_field: str) -> None:
    """Refuse images far larger than the file could describe, before allocating them: a
    damaged offset must give an error, not a multi-gigabyte allocation."""
    name, mem, size, at = segs[-1]
    limit = max(MIN_SPAN_LIMIT, SPAN_PER_FILE_BYTE * len(r))
    if mem + size > limit:
        raise r.error(
            f"{header_field}.{name}",
            at,
            f"module would span {mem + size:#x} bytes, more than {limit:#x} for a file of {len(r):#x} bytes",
        )


def build_image(segments: list[Segment], datas: list[bytes]) -> bytes:
    """Lay segments out at their memory offsets (gaps are zero)."""
    data_seg = segments[2]
    img = bytearray(data_seg.mem_offset + data_seg.size)
    for s, d in zip(segments, datas):
        img[s.mem_offset : s.mem_offset + len(d)] = d
    return bytes(img)


def finish_module(segments: list[Segment], datas: list[bytes], bss_size: int, path: str) -> ModuleImage:
    image = build_image(segments, datas)
    mod0 = read_mod0(image, len(image) + bss_size, path)
    dyn = None
    if mod0 is not None and mod0.dynamic != mod0.offset:
        dyn = parse_dynamic(image, mod0.dynamic, path)
    return ModuleImage(tuple(segments), bss_size, image, mod0, dyn)  # type: ignore[arg-type]


class ModuleView:
    """What NSO and NRO records both expose of their loaded ``module`` (a ModuleImage)."""

    module: ModuleImage

    @property
    def segments(self):
        return self.module.segments

    @property
    def image(self) -> bytes:
        return self.module.image

    @property
    def bss_size(self) -> int:
        return self.module.bss_size

    @property
    def mod0(self):
        return self.module.mod0

    @property
    def dynamic(self):
        return self.module.dynamic
