"""Where the kernel puts the regions of a process, per NPDM address-space type.  Public
facts: the code (ASLR) region starts at 0x8000000 in the 36- and 39-bit spaces and at 0x200000
in the 32-bit ones; heap, alias and stack regions lie inside the space; every address is
below 2^39, so a guest address is a host address the CPU host can map."""

from __future__ import annotations

from dataclasses import dataclass

from nxrecomp.common.errors import NxError


@dataclass(frozen=True)
class AddressSpace:
    bits: int
    code_base: int
    code_size: int
    heap_base: int
    heap_size: int
    alias_base: int
    alias_size: int
    stack_base: int
    stack_size: int
    tls_base: int  # thread-local pages (0x200 bytes per thread)
    tls_size: int

    @property
    def end(self) -> int:
        return 1 << self.bits

    def regions(self) -> list[tuple[str, int, int]]:
        return [
            ("heap", self.heap_base, self.heap_size),
            ("alias", self.alias_base, self.alias_size),
            ("stack", self.stack_base, self.stack_size),
            ("tls", self.tls_base, self.tls_size),
        ]


GIB = 1 << 30
_SPACES = {
    39: AddressSpace(
        39,
        0x8000000,
        (1 << 39) - 0x8000000,
        0x10_0000_0000,
        6 * GIB,
        0x20_0000_0000,
        64 * GIB,
        0x40_0000_0000,
        2 * GIB,
        0x48_0000_0000,
        1 << 20,
    ),
    36: AddressSpace(
        36,
        0x8000000,
        (1 << 36) - 0x8000000,
        0x2_0000_0000,
        6 * GIB,
        0x4_0000_0000,
        16 * GIB,
        0x8_0000_0000,
        2 * GIB,
        0x9_0000_0000,
        1 << 20,
    ),
    32: AddressSpace(
        32, 0x200000, (1 << 32) - 0x200000, 0x4000_0000, GIB, 0xA000_0000, GIB, 0x8000_0000, 256 << 20, 0x9000_0000, 1 << 20
    ),
}


def address_space(bits: int) -> AddressSpace:
    try:
        return _SPACES[bits]
    except KeyError:
        raise NxError(f"no layout for a {bits}-bit address space", field="process.address_space_bits") from None


def check_modules_fit(space: AddressSpace, modules: list[dict]) -> None:
    """Modules must lie below every other region (the loader places them from code_base)."""
    first = min(base for _n, base, _s in space.regions())
    for m in modules:
        if m["base"] < space.code_base or m["base"] + m["size"] > first:
            raise NxError(
                f"module {m['name']} [{m['base']:#x}, {m['base'] + m['size']:#x}) does not fit below "
                f"the heap and stack regions ({first:#x})",
                field="modules",
            )
