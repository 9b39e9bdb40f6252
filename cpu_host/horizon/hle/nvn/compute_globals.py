"""A compute program's ``__device__`` globals in the NVN front end (issue 31; the loader's part of
shader_svc/README.md "`__device__` globals", done against the GPU process's placement,
gpu_host/PROTOCOL.md "Global data").

The guest's view (examples/horizon_hello/sdk/nvn.h, this project's own model of the API):
``NVNcomputeControl.flags`` bit 0 (``NVN_COMPUTE_GLOBALS``) says a ``const NVNcomputeGlobals *``
follows the control (at its byte 32): ``{uint32_t size; uint32_t init_size; NVNbufferAddress
init; uint32_t reloc_count; uint32_t reserved; const NVNglobalReloc *relocs;}`` -- the kernel's
global region (``size`` bytes: ``init_size`` initialised bytes in a memory pool, then zeros) and
its relocations, each ``{uint32_t where; uint32_t kind; uint32_t bank; uint32_t reserved;
uint64_t offset; int64_t addend;}``: the value ``region address + addend`` written at ``offset``
of ``where`` -- 0 the region's initialised bytes, 1 the code, 2 program bank ``bank`` (bank 4: the
slots -O3 code reads global addresses from) -- as ``kind`` 0 (a 64-bit little-endian slot; data
and banks) or 1 / 2 (the low / high 32 bits into a MOV immediate: SM86 bits 32..63 of the 128-bit
instruction, SM53 bits 20..51 of the 64-bit one; code).  Code addresses held in the data (-G's
vtables, function-pointer tables) are offsets in the linked code, fixed before the program runs,
so they are already in ``init``.

At nvnProgramSetShaders the front end asks the GPU process to place ``size`` bytes
(``GpuClient.place_data``), applies the relocations with the address it answers, writes the
relocated bytes there, and translates the relocated code with the relocated banks and the
region as ``Program.data`` (where the service finds the callees of calls through loaded
pointers).  A restarted GPU process places the region again, possibly at another address: the
client then calls ``rebuild`` with the new address, which relocates and translates again before
the program is registered (``ProgramDesc.rebuild``).  Each SetShaders with globals is a placement
of its own (ids from the front end's object ids), kept for the GPU session.

Every bad table is a GuestError naming the entry and field."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Callable

from cpu_host.horizon.hle.abi import Call, GuestError

FLAG_GLOBALS = 1  # NVNcomputeControl.flags: an NVNcomputeGlobals pointer follows the control
WHERE_DATA, WHERE_CODE, WHERE_BANK = 0, 1, 2
KIND_U64, KIND_LO32, KIND_HI32 = 0, 1, 2
MAX_RELOCS = 1 << 16
MAX_INIT = 2 << 20  # the shader service reads every word of Program.data (request.MAX_DATA)
RELOC_SIZE = 32


@dataclass(frozen=True)
class Reloc:
    where: int
    kind: int
    bank: int
    offset: int
    addend: int


@dataclass(frozen=True)
class Globals:
    """What the guest's NVNcomputeGlobals says."""

    size: int
    init: bytes
    relocs: tuple[Reloc, ...]


def read(c: Call, ptr: int, svc: Any, what: str = "nvnProgramSetShaders") -> Globals:
    """The NVNcomputeGlobals at guest pointer ``ptr`` and the tables it points at."""
    size, init_size, init_at, count, _, table = struct.unpack("<IIQIIQ", c.read(ptr, 32, "NVNcomputeGlobals"))
    if size == 0 or size % 4:
        raise GuestError(f"{what}: NVNcomputeGlobals size {size} is not a positive multiple of 4")
    if init_size > size or init_size % 4 or init_size > MAX_INIT:
        raise GuestError(f"{what}: NVNcomputeGlobals init_size {init_size} (a multiple of 4, at most size {size} and {MAX_INIT})")
    if count > MAX_RELOCS:
        raise GuestError(f"{what}: NVNcomputeGlobals reloc_count {count} is more than {MAX_RELOCS}")
    init = b""
    if init_size:
        svc._pool_at(init_at, init_size, "compute globals init")
        init = c.read(init_at, init_size, "compute globals init")
    raw = c.read(table, RELOC_SIZE * count, "NVNglobalReloc table") if count else b""
    relocs = []
    for i in range(count):
        where, kind, bank, _, off, add = struct.unpack_from("<IIIIQq", raw, RELOC_SIZE * i)
        if where not in (WHERE_DATA, WHERE_CODE, WHERE_BANK):
            raise GuestError(f"{what}: NVNglobalReloc {i}: where {where} (0 data, 1 code, 2 bank)")
        if (kind == KIND_U64) == (where == WHERE_CODE) or kind > KIND_HI32:
            raise GuestError(
                f"{what}: NVNglobalReloc {i}: kind {kind} for where {where} (data and banks: 0, a 64-bit slot; "
                "code: 1 or 2, a MOV immediate's low or high half)"
            )
        if not 0 <= add <= size:
            raise GuestError(f"{what}: NVNglobalReloc {i}: addend {add} lies outside the {size}-byte region")
        if where == WHERE_DATA and not (off % 4 == 0 and off + 8 <= init_size):
            raise GuestError(
                f"{what}: NVNglobalReloc {i}: data offset {off:#x} is not an aligned slot inside init ({init_size} bytes)"
            )
        relocs.append(Reloc(where, kind, bank, off, add))
    return Globals(size, init, tuple(relocs))


def _patch_imm(code: bytearray, arch: int, off: int, value: int, i: int, what: str) -> None:
    """The 32-bit immediate of the MOV at ``off`` (module docstring: the ISA's field)."""
    if arch == 86:
        if off % 16 or off + 16 > len(code):
            raise GuestError(f"{what}: NVNglobalReloc {i}: code offset {off:#x} is not an SM86 instruction of the code")
        struct.pack_into("<I", code, off + 4, value)
        return
    if off % 8 or off % 32 == 0 or off + 8 > len(code):  # every 32-byte group opens with a control word
        raise GuestError(f"{what}: NVNglobalReloc {i}: code offset {off:#x} is not an SM53 instruction of the code")
    (w,) = struct.unpack_from("<Q", code, off)
    struct.pack_into("<Q", code, off, (w & ~(0xFFFFFFFF << 20)) | value << 20)


def relocate(
    g: Globals, arch: int, code: bytes, banks: tuple[tuple[int, bytes], ...], base: int, what: str = "nvnProgramSetShaders"
) -> tuple[bytes, tuple[tuple[int, bytes], ...], bytes]:
    """(code, banks, initialised region bytes) with every relocation applied for region address ``base``."""
    out_code, image = bytearray(code), bytearray(g.init)
    out_banks = {n: bytearray(d) for n, d in banks}
    for i, r in enumerate(g.relocs):
        v = (base + r.addend) & 0xFFFF_FFFF_FFFF_FFFF
        if r.where == WHERE_DATA:
            struct.pack_into("<Q", image, r.offset, v)
        elif r.where == WHERE_BANK:
            b = out_banks.get(r.bank)
            if b is None or r.offset % 4 or r.offset + 8 > len(b):
                raise GuestError(
                    f"{what}: NVNglobalReloc {i}: bank c[{r.bank:#x}] offset {r.offset:#x} is not an aligned slot of "
                    "a bank of the program's NVNconstantBank table"
                )
            struct.pack_into("<Q", b, r.offset, v)
        else:
            _patch_imm(out_code, arch, r.offset, (v >> 32 if r.kind == KIND_HI32 else v) & 0xFFFFFFFF, i, what)
    return bytes(out_code), tuple((n, bytes(out_banks[n])) for n, _ in banks), bytes(image)


@dataclass
class PlacedProgram:
    """A compute program whose code holds its placement's address: relocated and translated for
    the address the GPU process gave (again after a restart, when that address changed)."""

    placement: int
    globals: Globals
    arch: int
    code: bytes
    banks: tuple[tuple[int, bytes], ...]
    translate: Callable[[bytes, tuple, tuple], bytes]  # (code, banks, data) -> SPIR-V
    built: dict[int, bytes] = field(default_factory=dict)  # address -> SPIR-V

    def regions(self, base: int) -> list[tuple[int, bytes]]:
        """What PlaceData writes: the initialised bytes relocated for ``base`` (the rest stays zero)."""
        image = relocate(self.globals, self.arch, self.code, self.banks, base)[2]
        return [(0, image)] if image else []

    def rebuild(self, placed: dict[int, int]) -> bytes:
        """The SPIR-V for the placement's address in ``placed`` (GpuClient.placed)."""
        base = placed[self.placement]
        spv = self.built.get(base)
        if spv is None:
            code, banks, image = relocate(self.globals, self.arch, self.code, self.banks, base)
            spv = self.translate(code, banks, ((base, image),) if image else ())
            self.built.clear()  # one address at a time
            self.built[base] = spv
        return spv
