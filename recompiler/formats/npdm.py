"""NPDM loader (``main.npdm``): the META header (process flags, address space, main thread
priority/core/stack), ACI0 (the program's access control: program id, filesystem and service
access, kernel capabilities) and ACID (the signed limits ACI0 must stay within)."""

from __future__ import annotations

from dataclasses import dataclass

from recompiler.formats.binreader import BinReader
from recompiler.formats.kcaps import KernelCaps, parse_kernel_caps

META_MAGIC, ACI0_MAGIC, ACID_MAGIC = b"META", b"ACI0", b"ACID"
META_SIZE, ACI0_HEADER_SIZE, ACID_HEADER_SIZE = 0x80, 0x40, 0x240

# META.Flags bits 1..3.
ADDRESS_SPACES = {0: "AddressSpace32Bit", 1: "AddressSpace64BitOld", 2: "AddressSpace32BitNoReserved", 3: "AddressSpace64Bit"}
# Usable address-space width in bits, for the loader that places modules.
ADDRESS_SPACE_BITS = {0: 32, 1: 36, 2: 32, 3: 39}
MEMORY_REGIONS = {0: "Application", 1: "Applet", 2: "SecureSystem", 3: "NonSecureSystem"}
MAX_PRIORITY = 63


@dataclass(frozen=True)
class Service:
    name: str
    server: bool  # may host (register) the service rather than connect to it


@dataclass(frozen=True)
class AccessControl:
    """What ACI0 and ACID share: filesystem permissions, services, kernel capabilities."""

    fs_version: int
    fs_permissions: int
    services: list[Service]
    kernel: KernelCaps


@dataclass(frozen=True)
class Aci0:
    offset: int
    program_id: int
    access: AccessControl


@dataclass(frozen=True)
class Acid:
    offset: int
    signature: bytes  # RSA-2048 PSS over the ACID from its magic (not verified here)
    public_key: bytes  # the key that signs the NCA header
    signed_size: int
    version: int
    flags: int
    production: bool
    unqualified_approval: bool
    memory_region: int
    program_id_min: int
    program_id_max: int
    access: AccessControl


@dataclass(frozen=True)
class Npdm:
    path: str
    signature_key_generation: int
    is_64bit: bool
    address_space: int
    optimize_memory_allocation: bool
    disable_device_address_space_merge: bool
    main_thread_priority: int
    main_thread_core: int
    system_resource_size: int
    version: int
    main_thread_stack_size: int
    name: str
    product_code: str
    aci0: Aci0
    acid: Acid

    @property
    def address_space_name(self) -> str:
        return ADDRESS_SPACES[self.address_space]


def _services(r: BinReader, field: str) -> list[Service]:
    out, pos = [], 0
    while pos < len(r):
        ctrl = r.u8(f"{field} control byte", pos)
        n = (ctrl & 7) + 1
        name = r.bytes(f"{field} name", pos + 1, n)
        out.append(Service(name.decode("ascii", "replace"), bool(ctrl & 0x80)))
        pos += 1 + n
    return out


def _part(r: BinReader, owner: str, base: int, size_limit: int, at: int, name: str) -> BinReader:
    off, size = r.u32(f"{owner}.{name}Offset", base + at), r.u32(f"{owner}.{name}Size", base + at + 4)
    if off + size > size_limit:
        raise r.error(
            f"{owner}.{name}Offset", base + at, f"{name} {off:#x}+{size:#x} runs past the end of {owner} (size {size_limit:#x})"
        )
    return r.sub(f"{owner}.{name}", base + off, size)


def _access(r: BinReader, owner: str, base: int, size: int, first: int) -> AccessControl:
    fs = _part(r, owner, base, size, first, "FsAccessControl")
    fs_version = fs.u8(f"{owner}.FsAccessControl.Version", 0) if len(fs) else 0
    fs_perm = fs.u64(f"{owner}.FsAccessControl.Permissions", 4) if len(fs) else 0
    services = _services(_part(r, owner, base, size, first + 8, "ServiceAccessControl"), f"{owner}.ServiceAccessControl")
    kernel = parse_kernel_caps(_part(r, owner, base, size, first + 16, "KernelAccessControl"), f"{owner}.KernelAccessControl")
    return AccessControl(fs_version, fs_perm, services, kernel)


def _region(r: BinReader, name: str, at: int, minimum: int) -> tuple[int, int]:
    off, size = r.u32(f"META.{name}Offset", at), r.u32(f"META.{name}Size", at + 4)
    if size < minimum:
        raise r.error(f"META.{name}Size", at + 4, f"{name} size {size:#x} is smaller than its header ({minimum:#x})")
    r.check(f"META.{name}Offset/Size", off, size)
    return off, size


def parse_npdm(data: bytes | bytearray | memoryview, path: str = "<npdm>") -> Npdm:
    r = BinReader(data, path)
    r.check("META", 0, META_SIZE)
    r.magic("META.Magic", 0, META_MAGIC)
    flags = r.u8("META.Flags", 0xC)
    space = (flags >> 1) & 7
    if space not in ADDRESS_SPACES:
        raise r.error("META.Flags", 0xC, f"unknown address space type {space}")
    if space in (1, 3) and not flags & 1:
        raise r.error("META.Flags", 0xC, f"{ADDRESS_SPACES[space]} needs the 64-bit instruction flag")
    prio = r.u8("META.MainThreadPriority", 0xE)
    if prio > MAX_PRIORITY:
        raise r.error("META.MainThreadPriority", 0xE, f"priority {prio} is above {MAX_PRIORITY}")
    core = r.u8("META.MainThreadCoreNumber", 0xF)

    aci_off, aci_size = _region(r, "Aci", 0x70, ACI0_HEADER_SIZE)
    r.magic("ACI0.Magic", aci_off, ACI0_MAGIC)
    aci = Aci0(aci_off, r.u64("ACI0.ProgramId", aci_off + 0x10), _access(r, "ACI0", aci_off, aci_size, 0x20))

    acid_off, acid_size = _region(r, "Acid", 0x78, ACID_HEADER_SIZE)
    r.magic("ACID.Magic", acid_off + 0x200, ACID_MAGIC)
    aflags = r.u32("ACID.Flags", acid_off + 0x20C)
    acid = Acid(
        acid_off,
        r.bytes("ACID.Signature", acid_off, 0x100),
        r.bytes("ACID.PublicKey", acid_off + 0x100, 0x100),
        r.u32("ACID.Size", acid_off + 0x204),
        r.u8("ACID.Version", acid_off + 0x208),
        aflags,
        bool(aflags & 1),
        bool(aflags & 2),
        (aflags >> 2) & 0xF,
        r.u64("ACID.ProgramIdMin", acid_off + 0x210),
        r.u64("ACID.ProgramIdMax", acid_off + 0x218),
        _access(r, "ACID", acid_off, acid_size, 0x220),
    )
    if acid.program_id_min > acid.program_id_max:
        raise r.error("ACID.ProgramIdMax", acid_off + 0x218, "program id range is reversed")

    kern = aci.access.kernel
    if kern.lowest_priority is not None and not kern.highest_priority <= prio <= kern.lowest_priority:
        raise r.error(
            "META.MainThreadPriority",
            0xE,
            f"priority {prio} is outside the ACI0 thread info range {kern.highest_priority}..{kern.lowest_priority}",
        )
    if kern.min_core is not None and not kern.min_core <= core <= kern.max_core:
        raise r.error(
            "META.MainThreadCoreNumber",
            0xF,
            f"core {core} is outside the ACI0 thread info range {kern.min_core}..{kern.max_core}",
        )
    return Npdm(
        path,
        r.u32("META.SignatureKeyGeneration", 4),
        bool(flags & 1),
        space,
        bool(flags & 0x10),
        bool(flags & 0x20),
        prio,
        core,
        r.u32("META.SystemResourceSize", 0x14),
        r.u32("META.Version", 0x18),
        r.u32("META.MainThreadStackSize", 0x1C),
        r.cstr("META.Name", 0x20, 0x10),
        r.cstr("META.ProductCode", 0x30, 0x10),
        aci,
        acid,
    )
