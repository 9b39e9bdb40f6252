"""A cubin's ``__device__`` globals placed in a kernel's emulated global memory (shader-ctl2).

What nvcc 13 (sm_86) and ptxas 12.9 (sm_53) put in a cubin for ``__device__`` data (read off
``readelf -S -r -s`` of the corpus's own cubins and nvdisasm's listings; the section names are
the ones ``cuobjdump -elf`` prints):

- ``.nv.global.init`` (PROGBITS, flags WA): initialised ``__device__`` data, vtables
  (``_ZTV...``) included; ``.nv.global`` (NOBITS, WA): the zero-initialised ones.  Symbols of
  type OBJECT in those sections name each variable (``st_value``: its offset in the section).
- ``.nv.constant4`` (constant bank 4) with ``.rel.nv.constant4``: one 64-bit slot per global the
  code reaches at -O3, relocation type 2 (the 64-bit address S + A); the code reads the
  address as ``c[0x4][off]`` (``ULDC.64 UR, c[0x4][0x10]``, ``IADD3 R, P, R, c[0x4][0x28]``).
- at -G (either ISA) the code makes a global's address with two linker-patched MOV immediates
  (the types ``cuda_build.link`` handles: SM86 56/57, SM53 43/44) against the data symbol.
- ``.rela.nv.global.init``, type 4 (the 64-bit S + A, with addend): a pointer to another global
  held in global data (``__device__ const T *p = &x[4]``).
- ``.rel.nv.global.init``: data that holds code addresses — -G's vtables and tables of function
  pointers: type 2 (SM86, 64-bit) / type 1 (SM53, 32-bit) against the function's symbol; the
  code calls them with CALL.ABS Rn / JMX Rn.  At -O3 a function pointer is instead the byte
  offset of a slot of the kernel's ``.nv.constant2.<kernel>`` that holds the function's code
  offset (``LDC.64 R, c[0x2][Rp]`` then ``CALL.REL.NOINC R``: the jump-table form of
  ``shader_svc/lower/indirect.py``); no relocation, and the functions are copies inside the
  kernel's own text section (``$<kernel>$<function>`` symbols).

A function the cubin does not define (``__assertfail``: ``assert``'s call, through a bank-4
slot at -O3, a relocated CALL.ABS / JCAL at -G) is the driver's: ours comes from
``cuda_build_assert`` (shader-assert), linked after the program's functions, its diagnostic log
placed after the program's globals (``Placed.log_offset``).  Any other undefined symbol gets no
address: its bank-4 slot holds ``UNRESOLVED`` (the translation refuses the call by name), and a
relocated call to it is refused naming it at link time.

The driver's part, done here as a loader would: one region of global memory holding
``.nv.global.init`` then ``.nv.global`` (zeroed), each at its alignment; the relocations
applied with the region's device address for data symbols and the linked code's offsets for
functions (the code's start is address 0, as for CALL.ABS: ``cuda_build.link``); bank 4 = the
relocated ``.nv.constant4``.  The shader service gets bank 4 as a program bank
(``ComputeSpec.banks``: its words are constants of the module, the addresses of this
placement) and the relocated image as ``ComputeSpec.data`` (where indirect calls look for the
code addresses a program stores in memory)."""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

GLOBAL_SECTIONS = (".nv.global.init", ".nv.global")
# the value a slot of a symbol the cubin does not define gets (-O3's bank-4 slot of
# __assertfail, the function ``assert`` calls): an address neither the code (from 0) nor the
# global region has, so a call through it is refused by name at translation
UNRESOLVED = 0xFFFF_FFFF_FFFF_FF00
# relocation types of data slots: 2 = the 64-bit S + A (sm_86 and the bank-4 slots of sm_53),
# 1 = the 32-bit S + A (sm_53 -G's function pointers in .nv.global.init, 8-byte slots whose
# high word stays 0), 4 = the 64-bit S + A with an addend (``.rela.nv.global.init``: a pointer
# to another global, ``__device__ T *p = &x[k]``)
DATA_RELOC_BYTES = {2: 8, 1: 4, 4: 8}


@dataclass(frozen=True)
class Placed:
    """The globals of one kernel placed at ``base``: the code linked against them, the bank-4
    image, the region's bytes (init data relocated, zeros after) and each section's offset."""

    code: bytes
    bank4: bytes
    image: bytes
    offsets: dict[str, int]
    # shader-assert: the assert runtime's log in the region (cuda_build_assert), None where the
    # program does not call the runtime
    log_offset: int | None = None


def has_globals(cubin: bytes) -> bool:
    elf = ELFFile(io.BytesIO(cubin))
    return any(elf.get_section_by_name(n) is not None for n in (*GLOBAL_SECTIONS, ".nv.constant4"))


def layout(elf: ELFFile, libs: tuple[ELFFile, ...] = ()) -> tuple[dict[str, int], int]:
    """Each global section's offset in the region (the program's in section order, then each
    library's (``cuda_build.lib_key``), each at its alignment, at least 16) and the region's size."""
    import cuda_build

    offs, size = {}, 0
    for j, e in enumerate((elf, *libs)):
        for name in GLOBAL_SECTIONS:
            s = e.get_section_by_name(name)
            if s is None:
                continue
            al = max(16, s["sh_addralign"] or 1)
            size = -(-size // al) * al
            offs[cuda_build.lib_key(j, name)] = size
            size += s["sh_size"]
    return offs, max(size, 16)


def runtime_libs(cubin: bytes, isa: int) -> tuple[bytes, ...]:
    """The runtime cubins a program needs: the assert runtime where the cubin leaves one of its
    functions undefined (shader-assert)."""
    import cuda_build_assert

    symtab = ELFFile(io.BytesIO(cubin)).get_section_by_name(".symtab")
    undefined = {s.name for s in symtab.iter_symbols() if s["st_shndx"] == "SHN_UNDEF" and s.name}
    return (cuda_build_assert.runtime_cubin(isa),) if undefined & set(cuda_build_assert.FUNCTIONS) else ()


def region_size(cubin: bytes, isa: int = 86) -> int:
    libs = tuple(ELFFile(io.BytesIO(b)) for b in runtime_libs(cubin, isa))
    return layout(ELFFile(io.BytesIO(cubin)), libs)[1]


def _apply(buf: bytearray, where: str, off: int, typ: int, value: int) -> None:
    n = DATA_RELOC_BYTES.get(typ)
    if n is None:
        raise RuntimeError(f"relocation type {typ} at {where}+{off:#x} not handled (data slot)")
    if not 0 <= off <= len(buf) - n:
        raise RuntimeError(f"relocation at {where}+{off:#x} outside the section ({len(buf)} bytes)")
    struct.pack_into("<Q" if n == 8 else "<I", buf, off, value & ((1 << (8 * n)) - 1))


def _relocs(elf: ELFFile, section: str) -> list:
    """The relocations of ``section`` from its ``.rel`` and ``.rela`` sections."""
    out = []
    for name in (".rel" + section, ".rela" + section):
        rs = elf.get_section_by_name(name)
        if isinstance(rs, RelocationSection):
            out += list(rs.iter_relocations())
    return out


def place(cubin: bytes, kernel: str, isa: int, base: int) -> Placed:
    """Link ``kernel`` (``cuda_build.link``: the kernel, the functions it reaches and those the
    global data points at) with its globals at device address ``base``."""
    import cuda_build
    import cuda_build_assert

    elf = ELFFile(io.BytesIO(cubin))
    lib_bytes = runtime_libs(cubin, isa)
    libs = tuple(ELFFile(io.BytesIO(b)) for b in lib_bytes)
    offs, size = layout(elf, libs)
    symtab = elf.get_section_by_name(".symtab")
    exports = cuda_build.lib_exports(lib_bytes)

    def data_addr(sym) -> int | None:
        name = elf.get_section(sym["st_shndx"]).name if isinstance(sym["st_shndx"], int) else ""
        return base + offs[name] + sym["st_value"] if name in offs else None

    def lib_data_addr(j: int, sym) -> int | None:
        e = libs[j - 1]
        name = e.get_section(sym["st_shndx"]).name if isinstance(sym["st_shndx"], int) else ""
        key = cuda_build.lib_key(j, name)
        return base + offs[key] + sym["st_value"] if key in offs else None

    # the code addresses the global data holds: their functions join the linked blob; so do
    # the runtime's functions a bank-4 slot holds (-O3's __assertfail)
    init_rel = _relocs(elf, ".nv.global.init")
    roots = []
    for r in init_rel:
        sym = symtab.get_symbol(r["r_info_sym"])
        if data_addr(sym) is None:
            roots.append(elf.get_section(sym["st_shndx"]).name)
    for r in _relocs(elf, ".nv.constant4"):
        sym = symtab.get_symbol(r["r_info_sym"])
        if not isinstance(sym["st_shndx"], int) and sym.name in exports:
            roots.append(exports[sym.name][0])
    code, at = cuda_build.link(
        cubin, kernel, isa, data_addr=data_addr, roots=roots, with_offsets=True, libs=lib_bytes, lib_data_addr=lib_data_addr
    )

    def addr(sym, where: str) -> int:
        a = data_addr(sym)
        if a is not None:
            return a
        if not isinstance(sym["st_shndx"], int):  # undefined here: the runtime's, else no address
            if sym.name in exports and exports[sym.name][0] in at:
                return at[exports[sym.name][0]] + exports[sym.name][1]
            return UNRESOLVED
        sec = elf.get_section(sym["st_shndx"]).name
        if sec not in at:
            raise RuntimeError(f"relocation in {where} against {sym.name!r} in {sec}, not in the linked code")
        return at[sec] + sym["st_value"]

    image = bytearray(size)
    init = elf.get_section_by_name(".nv.global.init")
    if init is not None:
        data = bytearray(init.data())
        for r in init_rel:
            sym = symtab.get_symbol(r["r_info_sym"])
            _apply(
                data,
                ".nv.global.init",
                r["r_offset"],
                r["r_info_type"],
                addr(sym, ".nv.global.init") + r.entry.get("r_addend", 0),
            )
        image[offs[".nv.global.init"] : offs[".nv.global.init"] + len(data)] = data
    bank4 = b""
    c4 = elf.get_section_by_name(".nv.constant4")
    if c4 is not None:
        b4 = bytearray(c4.data())
        for r in _relocs(elf, ".nv.constant4"):
            sym = symtab.get_symbol(r["r_info_sym"])
            _apply(b4, ".nv.constant4", r["r_offset"], r["r_info_type"], addr(sym, ".nv.constant4") + r.entry.get("r_addend", 0))
        bank4 = bytes(b4)
    log = None
    for j, e in enumerate(libs, 1):  # the assert runtime's log symbol
        for sym in e.get_section_by_name(".symtab").iter_symbols():
            if sym.name == cuda_build_assert.LOG_SYMBOL:
                log = lib_data_addr(j, sym) - base
    return Placed(code, bank4, bytes(image), offs, log)
