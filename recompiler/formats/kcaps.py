"""Kernel capability descriptors (the u32 list in NPDM's ACI0/ACID KernelAccessControl).

A descriptor's kind is the number of trailing one bits of its low end; the bits above the
first zero carry the fields.  Memory maps take two consecutive descriptors."""

from __future__ import annotations

from dataclasses import dataclass, field

from recompiler.formats.binreader import BinReader

KIND_THREAD_INFO = 3
KIND_SYSCALLS = 4
KIND_MEMORY_MAP = 6
KIND_IO_MAP = 7
KIND_MAP_REGION = 10
KIND_INTERRUPTS = 11
KIND_PROGRAM_TYPE = 13
KIND_KERNEL_VERSION = 14
KIND_HANDLE_TABLE = 15
KIND_DEBUG_FLAGS = 16
KIND_PADDING = 32

PAGE_SHIFT = 12
UNUSED_INTERRUPT = 0x3FF
PROGRAM_TYPES = {0: "system", 1: "application", 2: "applet"}
REGION_TYPES = {0: "none", 1: "kernel trace buffer", 2: "on-memory boot image", 3: "DTB"}


@dataclass(frozen=True)
class MemoryMap:
    address: int
    size: int
    read_only: bool
    io: bool  # device (IO) memory rather than normal memory


@dataclass(frozen=True)
class KernelCaps:
    raw: list[int]
    lowest_priority: int | None = None  # ThreadInfo: numerically highest allowed priority
    highest_priority: int | None = None
    min_core: int | None = None
    max_core: int | None = None
    syscalls: frozenset[int] = frozenset()
    memory_maps: list[MemoryMap] = field(default_factory=list)
    io_pages: list[int] = field(default_factory=list)  # addresses
    map_regions: list[tuple[int, bool]] = field(default_factory=list)  # (region type, read only)
    interrupts: list[int] = field(default_factory=list)
    program_type: int | None = None
    kernel_version: tuple[int, int] | None = None  # (major, minor)
    handle_table_size: int | None = None
    debug_flags: dict[str, bool] = field(default_factory=dict)


def _kind(word: int) -> int:
    n = 0
    while n < 32 and (word >> n) & 1:
        n += 1
    return n


def _bits(word: int, lo: int, count: int) -> int:
    return (word >> lo) & ((1 << count) - 1)


def parse_kernel_caps(r: BinReader, field_name: str) -> KernelCaps:
    """``r`` covers the descriptor list exactly (its size must be a multiple of 4)."""
    if len(r) % 4:
        raise r.error(field_name, 0, f"size {len(r):#x} is not a multiple of 4")
    words = [r.u32(field_name, i) for i in range(0, len(r), 4)]
    out: dict = {"syscalls": set(), "memory_maps": [], "io_pages": [], "map_regions": [], "interrupts": [], "debug_flags": {}}
    seen: set[int] = set()
    i = 0
    while i < len(words):
        w, at = words[i], 4 * i
        k = _kind(w)
        if k in (KIND_THREAD_INFO, KIND_PROGRAM_TYPE, KIND_KERNEL_VERSION, KIND_HANDLE_TABLE, KIND_DEBUG_FLAGS):
            if k in seen:
                raise r.error(field_name, at, f"descriptor kind {k} appears twice (word {w:#010x})")
            seen.add(k)
        if k == KIND_THREAD_INFO:
            out.update(
                lowest_priority=_bits(w, 4, 6),
                highest_priority=_bits(w, 10, 6),
                min_core=_bits(w, 16, 8),
                max_core=_bits(w, 24, 8),
            )
            if out["highest_priority"] > out["lowest_priority"] or out["min_core"] > out["max_core"]:
                raise r.error(
                    field_name,
                    at,
                    f"thread info {w:#010x}: priority range {out['highest_priority']}.."
                    f"{out['lowest_priority']} or core range {out['min_core']}.."
                    f"{out['max_core']} is reversed",
                )
        elif k == KIND_SYSCALLS:
            index = _bits(w, 29, 3)
            mask = _bits(w, 5, 24)
            out["syscalls"].update(index * 24 + b for b in range(24) if mask >> b & 1)
        elif k == KIND_MEMORY_MAP:
            if i + 1 >= len(words) or _kind(words[i + 1]) != KIND_MEMORY_MAP:
                raise r.error(field_name, at, f"memory map {w:#010x} is not followed by its size descriptor")
            w2 = words[i + 1]
            out["memory_maps"].append(
                MemoryMap(_bits(w, 7, 24) << PAGE_SHIFT, _bits(w2, 7, 20) << PAGE_SHIFT, bool(w >> 31), not (w2 >> 31))
            )
            i += 1
        elif k == KIND_IO_MAP:
            out["io_pages"].append(_bits(w, 8, 24) << PAGE_SHIFT)
        elif k == KIND_MAP_REGION:
            for j in range(3):
                rtype = _bits(w, 11 + 7 * j, 6)
                if rtype:
                    out["map_regions"].append((rtype, bool(_bits(w, 17 + 7 * j, 1))))
        elif k == KIND_INTERRUPTS:
            for j in range(2):
                irq = _bits(w, 12 + 10 * j, 10)
                if irq != UNUSED_INTERRUPT:
                    out["interrupts"].append(irq)
        elif k == KIND_PROGRAM_TYPE:
            out["program_type"] = _bits(w, 14, 3)
        elif k == KIND_KERNEL_VERSION:
            out["kernel_version"] = (_bits(w, 19, 13), _bits(w, 15, 4))
        elif k == KIND_HANDLE_TABLE:
            out["handle_table_size"] = _bits(w, 16, 10)
        elif k == KIND_DEBUG_FLAGS:
            out["debug_flags"] = {
                "allow_debug": bool(_bits(w, 17, 1)),
                "force_debug_prod": bool(_bits(w, 18, 1)),
                "force_debug": bool(_bits(w, 19, 1)),
            }
        elif k != KIND_PADDING:
            raise r.error(field_name, at, f"descriptor {w:#010x} has unknown kind {k} (trailing one bits)")
        i += 1
    out["syscalls"] = frozenset(out["syscalls"])
    return KernelCaps(raw=words, **out)
