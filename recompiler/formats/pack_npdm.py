"""NPDM builder (META + ACID + ACI0) and encoders for kernel capability descriptors.

Layout as Switch tools write it: META at 0, ACID at 0x80, ACI0 after it; inside ACID/ACI0 the
filesystem, service and kernel parts follow the header, each on a 0x10 boundary.  The ACID
signature and key are left zero (nothing here signs)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from nxrecomp.common.errors import NxError
from recompiler.formats import kcaps as K
from recompiler.formats import npdm as N
from recompiler.formats.binreader import align_up


# -- kernel capability encoders ------------------------------------------------------------
def _kind_bits(kind: int) -> int:
    return (1 << kind) - 1


def _field(value: int, lo: int, bits: int, what: str) -> int:
    if not 0 <= value < (1 << bits):
        raise NxError(f"kernel capability: {what} {value:#x} does not fit in {bits} bits")
    return value << lo


def kc_thread_info(lowest_priority: int, highest_priority: int, min_core: int, max_core: int) -> list[int]:
    return [
        _kind_bits(K.KIND_THREAD_INFO)
        | _field(lowest_priority, 4, 6, "lowest priority")
        | _field(highest_priority, 10, 6, "highest priority")
        | _field(min_core, 16, 8, "min core")
        | _field(max_core, 24, 8, "max core")
    ]


def kc_syscalls(ids: set[int] | list[int] | range) -> list[int]:
    masks: dict[int, int] = {}
    for s in ids:
        if not 0 <= s < 8 * 24:
            raise NxError(f"kernel capability: syscall id {s:#x} is outside 0..0xbf")
        masks[s // 24] = masks.get(s // 24, 0) | (1 << (s % 24))
    return [_kind_bits(K.KIND_SYSCALLS) | (m << 5) | (i << 29) for i, m in sorted(masks.items())]


def kc_memory_map(address: int, size: int, read_only: bool = False, io: bool = True) -> list[int]:
    if address % 0x1000 or size % 0x1000:
        raise NxError(f"kernel capability: memory map {address:#x}+{size:#x} is not page aligned")
    return [
        _kind_bits(K.KIND_MEMORY_MAP) | _field(address >> 12, 7, 24, "map address") | (int(read_only) << 31),
        _kind_bits(K.KIND_MEMORY_MAP) | _field(size >> 12, 7, 20, "map size") | (int(not io) << 31),
    ]


def kc_io_map(address: int) -> list[int]:
    return [_kind_bits(K.KIND_IO_MAP) | _field(address >> 12, 8, 24, "io page")]


def kc_map_region(regions: list[tuple[int, bool]]) -> list[int]:
    if len(regions) > 3:
        raise NxError("kernel capability: at most 3 regions per map-region descriptor")
    w = _kind_bits(K.KIND_MAP_REGION)
    for j, (rtype, ro) in enumerate(regions):
        w |= _field(rtype, 11 + 7 * j, 6, "region type") | (int(ro) << (17 + 7 * j))
    return [w]


def kc_interrupts(a: int = K.UNUSED_INTERRUPT, b: int = K.UNUSED_INTERRUPT) -> list[int]:
    return [_kind_bits(K.KIND_INTERRUPTS) | _field(a, 12, 10, "interrupt") | _field(b, 22, 10, "interrupt")]


def kc_program_type(ptype: int) -> list[int]:
    return [_kind_bits(K.KIND_PROGRAM_TYPE) | _field(ptype, 14, 3, "program type")]


def kc_kernel_version(major: int, minor: int) -> list[int]:
    return [_kind_bits(K.KIND_KERNEL_VERSION) | _field(minor, 15, 4, "minor") | _field(major, 19, 13, "major")]


def kc_handle_table(size: int) -> list[int]:
    return [_kind_bits(K.KIND_HANDLE_TABLE) | _field(size, 16, 10, "handle table size")]


def kc_debug_flags(allow_debug: bool = False, force_debug_prod: bool = False, force_debug: bool = False) -> list[int]:
    return [_kind_bits(K.KIND_DEBUG_FLAGS) | (int(allow_debug) << 17) | (int(force_debug_prod) << 18) | (int(force_debug) << 19)]


def default_kernel_caps() -> list[int]:
    """What a plain application asks for: priorities 28..59 on cores 0..2, every syscall,
    kernel 3.0, 512 handles."""
    return (
        kc_thread_info(59, 28, 0, 2)
        + kc_syscalls(range(0xC0))
        + kc_program_type(1)
        + kc_kernel_version(3, 0)
        + kc_handle_table(512)
    )


# -- NPDM -------------------------------------------------------------------------------
@dataclass(frozen=True)
class NpdmSpec:
    name: str = "Application"
    product_code: str = ""
    is_64bit: bool = True
    address_space: int = 3
    optimize_memory_allocation: bool = False
    main_thread_priority: int = 44
    main_thread_core: int = 0
    main_thread_stack_size: int = 0x100000
    system_resource_size: int = 0
    version: int = 0
    signature_key_generation: int = 0
    program_id: int = 0x0100000000010000
    program_id_range: tuple[int, int] | None = None  # ACID limits; default: exactly program_id
    fs_permissions: int = 0xFFFFFFFFFFFFFFFF
    services: list[tuple[str, bool]] = field(default_factory=lambda: [("*", False)])
    kernel_caps: list[int] = field(default_factory=default_kernel_caps)
    acid_kernel_caps: list[int] | None = None  # default: the same as ACI0's
    production: bool = True
    unqualified_approval: bool = False
    memory_region: int = 0


def _services(services: list[tuple[str, bool]]) -> bytes:
    out = bytearray()
    for name, server in services:
        raw = name.encode("ascii")
        if not 1 <= len(raw) <= 8:
            raise NxError(f"pack_npdm: service name {name!r} must be 1..8 characters")
        out.append((len(raw) - 1) | (0x80 if server else 0))
        out += raw
    return bytes(out)


def _caps(words: list[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def _parts(header: bytearray, first_field: int, parts: list[bytes]) -> bytes:
    """Append ``parts`` after ``header`` on 0x10 boundaries and write (offset, size) pairs."""
    out = bytearray(header)
    for i, p in enumerate(parts):
        off = align_up(len(out), 0x10)
        out += b"\0" * (off - len(out)) + p
        struct.pack_into("<II", out, first_field + 8 * i, off, len(p))
    return bytes(out)


def pack_npdm(spec: NpdmSpec = NpdmSpec()) -> bytes:
    if spec.address_space not in N.ADDRESS_SPACES:
        raise NxError(f"pack_npdm: unknown address space type {spec.address_space}")
    services = _services(spec.services)
    lo, hi = spec.program_id_range or (spec.program_id, spec.program_id)

    acid_fs = struct.pack("<BBBBQQQQQ", 1, 0, 0, 0, spec.fs_permissions, 0, 0, 0, 0)
    acid_h = bytearray(N.ACID_HEADER_SIZE)
    acid_h[0x200:0x204] = N.ACID_MAGIC
    acid_flags = int(spec.production) | (int(spec.unqualified_approval) << 1) | (spec.memory_region << 2)
    struct.pack_into("<I", acid_h, 0x20C, acid_flags)
    struct.pack_into("<QQ", acid_h, 0x210, lo, hi)
    acid = _parts(acid_h, 0x220, [acid_fs, services, _caps(spec.acid_kernel_caps or spec.kernel_caps)])
    acid = bytearray(acid)
    struct.pack_into("<I", acid, 0x204, len(acid) - 0x100)  # signed region: from the key to the end

    aci_fs = struct.pack("<BBBBQIIII", 1, 0, 0, 0, spec.fs_permissions, 0x1C, 0, 0x1C, 0)
    aci_h = bytearray(N.ACI0_HEADER_SIZE)
    aci_h[0:4] = N.ACI0_MAGIC
    struct.pack_into("<Q", aci_h, 0x10, spec.program_id)
    aci = _parts(aci_h, 0x20, [aci_fs, services, _caps(spec.kernel_caps)])

    meta = bytearray(N.META_SIZE)
    meta[0:4] = N.META_MAGIC
    struct.pack_into("<I", meta, 4, spec.signature_key_generation)
    meta[0xC] = int(spec.is_64bit) | (spec.address_space << 1) | (int(spec.optimize_memory_allocation) << 4)
    meta[0xE], meta[0xF] = spec.main_thread_priority, spec.main_thread_core
    struct.pack_into("<III", meta, 0x14, spec.system_resource_size, spec.version, spec.main_thread_stack_size)
    for at, text in ((0x20, spec.name), (0x30, spec.product_code)):
        raw = text.encode()
        if len(raw) > 0x10:
            raise NxError(f"pack_npdm: {text!r} is longer than 16 bytes")
        meta[at : at + len(raw)] = raw
    acid_off = N.META_SIZE
    aci_off = align_up(acid_off + len(acid), 0x10)
    struct.pack_into("<IIII", meta, 0x70, aci_off, len(aci), acid_off, len(acid))
    out = bytearray(meta) + acid
    out += b"\0" * (aci_off - len(out)) + aci
    return bytes(out)
