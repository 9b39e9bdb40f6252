"""ELF → NSO0 / NRO0: turn an AArch64 ELF linked the Switch way (three PT_LOAD segments:
R-X at 0, then R, then RW with .bss at its end; a MOD0 header placed by the module's own start
code) into a Switch module, for packaging the demo game and for tests.

Only the program headers and PT_NOTE are read here; the module's ``.dynamic`` is left as the
linker wrote it (the host's linker applies it at load time)."""

from __future__ import annotations

from dataclasses import dataclass

from nxrecomp.common.errors import NxError
from recompiler.formats.binreader import BinReader
from recompiler.formats.elfdyn import parse_dynamic
from recompiler.formats.module import MIN_SPAN_LIMIT, SPAN_PER_FILE_BYTE
from recompiler.formats.pack_nro import NroAssets, pack_nro
from recompiler.formats.pack_nso import pack_nso

EM_AARCH64 = 183
PT_LOAD, PT_DYNAMIC, PT_NOTE = 1, 2, 4
PF_X, PF_W, PF_R = 1, 2, 4
NT_GNU_BUILD_ID = 3


@dataclass(frozen=True)
class ElfSegments:
    text: bytes
    rodata: bytes
    data: bytes
    mem_offsets: tuple[int, int, int]
    bss_size: int
    build_id: bytes
    dynstr: tuple[int, int]  # from .rodata, as the NSO/NRO header wants them
    dynsym: tuple[int, int]


def _build_id(r: BinReader, off: int, size: int) -> bytes:
    pos, end = off, off + size
    while pos + 12 <= end:
        namesz, descsz, ntype = r.u32("note namesz", pos), r.u32("note descsz", pos + 4), r.u32("note type", pos + 8)
        name_at = pos + 12
        desc_at = name_at + ((namesz + 3) & ~3)
        if ntype == NT_GNU_BUILD_ID and r.bytes("note name", name_at, namesz) == b"GNU\0":
            return r.bytes("build id", desc_at, descsz)[:0x20]
        pos = desc_at + ((descsz + 3) & ~3)
    return b""


def split_elf(data: bytes | bytearray | memoryview, path: str = "<elf>") -> ElfSegments:
    r = BinReader(data, path)
    r.check("ELF header", 0, 64)
    r.magic("e_ident", 0, b"\x7fELF")
    if r.u8("EI_CLASS", 4) != 2 or r.u8("EI_DATA", 5) != 1:
        raise r.error("e_ident", 4, "not a little-endian ELF64 file")
    if r.u16("e_machine", 18) != EM_AARCH64:
        raise r.error("e_machine", 18, f"machine {r.u16('e_machine', 18)} is not AArch64 ({EM_AARCH64})")
    phoff, phentsize, phnum = r.u64("e_phoff", 32), r.u16("e_phentsize", 54), r.u16("e_phnum", 56)
    if phentsize != 56:
        raise r.error("e_phentsize", 54, f"program header size {phentsize} is not 56")
    loads, build_id = [], b""
    for i in range(phnum):
        at = phoff + 56 * i
        ptype, flags = r.u32(f"phdr[{i}].p_type", at), r.u32(f"phdr[{i}].p_flags", at + 4)
        off, vaddr = r.u64(f"phdr[{i}].p_offset", at + 8), r.u64(f"phdr[{i}].p_vaddr", at + 16)
        filesz, memsz = r.u64(f"phdr[{i}].p_filesz", at + 32), r.u64(f"phdr[{i}].p_memsz", at + 40)
        if ptype == PT_LOAD:
            r.check(f"phdr[{i}] p_offset/p_filesz", off, filesz)
            loads.append((i, flags, off, vaddr, filesz, memsz))
        elif ptype == PT_NOTE and not build_id:
            r.check(f"phdr[{i}] p_offset/p_filesz", off, filesz)
            build_id = _build_id(r, off, filesz)
    want = [PF_R | PF_X, PF_R, PF_R | PF_W]
    if [f & 7 for _, f, *_ in loads] != want:
        raise r.error(
            "program headers",
            phoff,
            f"need exactly three PT_LOAD segments, R-X, R, RW in that order (found flags {[f & 7 for _, f, *_ in loads]})",
        )
    if loads[0][3] != 0:
        raise r.error(f"phdr[{loads[0][0]}].p_vaddr", phoff + 56 * loads[0][0] + 16, "the R-X segment must be at 0")
    for (i, _, _, vaddr, filesz, memsz), (j, _, _, nvaddr, _, _) in zip(loads, loads[1:]):
        if memsz != filesz:
            raise r.error(f"phdr[{i}].p_memsz", phoff + 56 * i + 40, "only the RW segment may have memsz > filesz")
        if vaddr + memsz > nvaddr:
            raise r.error(f"phdr[{j}].p_vaddr", phoff + 56 * j + 16, "PT_LOAD segments overlap or are out of order")
    # Switch headers hold 32-bit offsets and sizes; and the image built below must stay a size
    # the file could describe (a damaged p_vaddr must not become a giant allocation).
    limit = max(MIN_SPAN_LIMIT, SPAN_PER_FILE_BYTE * len(r))
    i, _, _, vaddr, filesz, memsz = loads[2]
    if vaddr + filesz > limit:
        raise r.error(
            f"phdr[{i}].p_vaddr",
            phoff + 56 * i + 16,
            f"module would span {vaddr + filesz:#x} bytes, more than {limit:#x} for a file of {len(r):#x} bytes",
        )
    if memsz < filesz:
        raise r.error(f"phdr[{i}].p_memsz", phoff + 56 * i + 40, f"memsz {memsz:#x} is smaller than filesz {filesz:#x}")
    if memsz - filesz > 0xFFFFFFFF:
        raise r.error(
            f"phdr[{i}].p_memsz", phoff + 56 * i + 40, f".bss of {memsz - filesz:#x} bytes does not fit the 32-bit BssSize field"
        )
    segs = [r.bytes(f"phdr[{i}] contents", off, filesz) for i, _, off, _, filesz, _ in loads]
    mem = tuple(vaddr for _, _, _, vaddr, _, _ in loads)
    bss = loads[2][5] - loads[2][4]

    # .dynsym/.dynstr ranges for the header, from the module's own .dynamic.
    image = bytearray(mem[2] + len(segs[2]))
    for m, s in zip(mem, segs):
        image[m : m + len(s)] = s
    dynstr = dynsym = (0, 0)
    for i in range(phnum):
        at = phoff + 56 * i
        if r.u32(f"phdr[{i}].p_type", at) == PT_DYNAMIC:
            dyn = parse_dynamic(image, r.u64(f"phdr[{i}].p_vaddr", at + 16), path)
            symtab, strtab = dyn.get("SYMTAB"), dyn.get("STRTAB")
            ro_lo, ro_hi = mem[1], mem[1] + len(segs[1])
            if symtab is not None and ro_lo <= symtab < ro_hi and strtab is not None and ro_lo <= strtab < ro_hi:
                dynsym = (symtab - ro_lo, len(dyn.symbols) * 24)
                dynstr = (strtab - ro_lo, dyn.get("STRSZ") or 0)
    return ElfSegments(segs[0], segs[1], segs[2], mem, bss, build_id, dynstr, dynsym)  # type: ignore[arg-type]


def elf_to_nso(data: bytes | bytearray | memoryview, path: str = "<elf>", *, name: str = "", compress: bool = True) -> bytes:
    e = split_elf(data, path)
    return pack_nso(
        e.text,
        e.rodata,
        e.data,
        bss_size=e.bss_size,
        build_id=e.build_id,
        name=name,
        compress=compress,
        mem_offsets=e.mem_offsets,
        dynstr=e.dynstr,
        dynsym=e.dynsym,
    )


def elf_to_nro(data: bytes | bytearray | memoryview, path: str = "<elf>", *, assets: NroAssets | None = None) -> bytes:
    e = split_elf(data, path)
    if any(e.text[0x10:0x80]):
        raise NxError(
            "the start code must leave .text 0x10..0x80 zeroed for the NRO header", path=path, field=".text", offset=0x10
        )
    return pack_nro(
        e.text,
        e.rodata,
        e.data,
        bss_size=e.bss_size,
        build_id=e.build_id,
        assets=assets,
        mem_offsets=e.mem_offsets,
        dynstr=e.dynstr,
        dynsym=e.dynsym,
    )


__all__ = ["ElfSegments", "split_elf", "elf_to_nso", "elf_to_nro"]
