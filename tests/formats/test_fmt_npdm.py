"""NPDM: field-by-field files of every address-space type, kernel capabilities decoded, round
trips through ``pack_npdm``, and bad fields named."""

from __future__ import annotations

import struct

import pytest

from tests.formats import fmt_fieldwise as F
from nxrecomp.common.errors import NxError
from recompiler.formats.kcaps import MemoryMap
from recompiler.formats.npdm import parse_npdm
from recompiler.formats.pack_npdm import (
    NpdmSpec,
    kc_debug_flags,
    kc_handle_table,
    kc_interrupts,
    kc_io_map,
    kc_kernel_version,
    kc_map_region,
    kc_memory_map,
    kc_program_type,
    kc_syscalls,
    kc_thread_info,
    pack_npdm,
)

SPACES = [
    (0b0000, False, 0, "AddressSpace32Bit"),
    (0b0001, True, 0, "AddressSpace32Bit"),
    (0b0011, True, 1, "AddressSpace64BitOld"),
    (0b0100, False, 2, "AddressSpace32BitNoReserved"),
    (0b0111, True, 3, "AddressSpace64Bit"),
]


@pytest.mark.parametrize("flags,is64,space,name", SPACES)
def test_every_address_space(flags, is64, space, name) -> None:
    n = parse_npdm(F.npdm_file(flags=flags), "main.npdm")
    assert (n.is_64bit, n.address_space, n.address_space_name) == (is64, space, name)
    assert n.name == "TestProg" and n.main_thread_priority == 44 and n.main_thread_core == 0
    assert n.main_thread_stack_size == 0x40000


def test_access_control_decoded() -> None:
    n = parse_npdm(F.npdm_file(flags=0b0111), "main.npdm")
    assert n.aci0.program_id == 0x0100000000002345
    assert (n.acid.program_id_min, n.acid.program_id_max) == (0x0100000000002000, 0x0100000000002FFF)
    assert n.acid.production and not n.acid.unqualified_approval and n.acid.memory_region == 0
    for a in (n.aci0.access, n.acid.access):
        assert a.fs_permissions == 3 and a.fs_version == 1
        assert [(s.name, s.server) for s in a.services] == [("fsp", False), ("sm:", False), ("*", True)]
        k = a.kernel
        assert (k.highest_priority, k.lowest_priority, k.min_core, k.max_core) == (28, 59, 0, 3)
        assert k.syscalls == frozenset(range(26))
        assert k.memory_maps == [MemoryMap(0x70000000, 0x10000, True, True)]
        assert k.io_pages == [0x50041000]
        assert k.map_regions == [(2, True), (3, False)]
        assert k.interrupts == [42]
        assert k.program_type == 1 and k.kernel_version == (9, 0) and k.handle_table_size == 256
        assert k.debug_flags == {"allow_debug": True, "force_debug_prod": False, "force_debug": False}


def test_round_trip_every_capability() -> None:
    caps = (
        kc_thread_info(63, 24, 0, 3)
        + kc_syscalls({1, 2, 0x7F, 0xBF})
        + kc_memory_map(0x12340000, 0x3000, False, False)
        + kc_io_map(0x700E3000)
        + kc_map_region([(1, False), (3, True)])
        + kc_interrupts(7, 1000)
        + kc_program_type(2)
        + kc_kernel_version(15, 3)
        + kc_handle_table(1023)
        + kc_debug_flags(force_debug_prod=True)
    )
    for space, is64 in ((0, False), (1, True), (2, False), (3, True)):
        spec = NpdmSpec(
            name="RoundTrip",
            product_code="HAC-X",
            is_64bit=is64,
            address_space=space,
            main_thread_priority=30,
            main_thread_core=3,
            main_thread_stack_size=0x8000,
            system_resource_size=0x1000,
            version=7,
            program_id=0x0100AAAA00000000,
            program_id_range=(0x0100AAAA00000000, 0x0100AAAA0000FFFF),
            fs_permissions=0x8000000000000801,
            services=[("hid", False), ("my:svc", True)],
            kernel_caps=caps,
            production=False,
            memory_region=2,
        )
        n = parse_npdm(pack_npdm(spec))
        assert (n.name, n.product_code, n.is_64bit, n.address_space) == ("RoundTrip", "HAC-X", is64, space)
        assert (n.main_thread_priority, n.main_thread_core, n.main_thread_stack_size) == (30, 3, 0x8000)
        assert (n.system_resource_size, n.version) == (0x1000, 7)
        assert n.aci0.program_id == 0x0100AAAA00000000 and n.acid.program_id_max == 0x0100AAAA0000FFFF
        assert not n.acid.production and n.acid.memory_region == 2
        k = n.aci0.access.kernel
        assert k.raw == caps
        assert (k.highest_priority, k.lowest_priority, k.min_core, k.max_core) == (24, 63, 0, 3)
        assert k.syscalls == {1, 2, 0x7F, 0xBF}
        assert k.memory_maps == [MemoryMap(0x12340000, 0x3000, False, False)]
        assert k.io_pages == [0x700E3000] and k.map_regions == [(1, False), (3, True)]
        assert k.interrupts == [7, 1000] and k.program_type == 2 and k.kernel_version == (15, 3)
        assert k.handle_table_size == 1023 and k.debug_flags["force_debug_prod"]
        assert [(s.name, s.server) for s in n.acid.access.services] == [("hid", False), ("my:svc", True)]
        assert n.aci0.access.fs_permissions == 0x8000000000000801


def _patch(blob: bytes, at: int, fmt: str, *vals) -> bytes:
    b = bytearray(blob)
    struct.pack_into(fmt, b, at, *vals)
    return bytes(b)


def test_bad_fields_are_named() -> None:
    good = F.npdm_file(flags=0b0111)
    aci_off = struct.unpack_from("<I", good, 0x70)[0]
    cases = [
        (_patch(good, 0, "<4s", b"ATEM"), "field META.Magic, offset 0x0"),
        (_patch(good, 0xC, "<B", 0b1001), "field META.Flags, offset 0xc: unknown address space type 4"),
        (_patch(good, 0xC, "<B", 0b0110), "needs the 64-bit instruction flag"),
        (_patch(good, 0xE, "<B", 64), "field META.MainThreadPriority"),
        (_patch(good, 0xE, "<B", 20), "outside the ACI0 thread info range"),
        (_patch(good, 0xF, "<B", 5), "field META.MainThreadCoreNumber"),
        (_patch(good, 0x74, "<I", 0x10), "field META.AciSize"),
        (_patch(good, 0x70, "<I", 0x10000), "field META.AciOffset/Size"),
        (_patch(good, aci_off, "<4s", b"ACIX"), "field ACI0.Magic"),
        (_patch(good, aci_off + 0x30, "<I", 0x1000), "field ACI0.KernelAccessControlOffset"),
        (_patch(good, aci_off + 0x34, "<I", 0x33), "not a multiple of 4"),
        (_patch(good, 0x80 + 0x200, "<4s", b"DICA"), "field ACID.Magic, offset 0x280"),
    ]
    for blob, msg in cases:
        with pytest.raises(NxError, match=msg) as e:
            parse_npdm(blob, "main.npdm")
        assert str(e.value).startswith("main.npdm, field ")


def test_bad_kernel_capabilities() -> None:
    for caps, msg in (
        ([0x0000001F], "unknown kind 5"),  # 5 trailing ones: no such kind
        ([0x3F | (1 << 7)], "not followed by its size"),  # half a memory map
        ([0x7 | (10 << 4) | (30 << 10)], "reversed"),  # priority range upside down
        ([0x7 | (59 << 4) | (28 << 10) | (3 << 24)] * 2, "appears twice"),
    ):
        with pytest.raises(NxError, match=msg):
            parse_npdm(F.npdm_file(flags=0b0111, caps=caps), "main.npdm")
