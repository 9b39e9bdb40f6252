"""Human-readable summaries of loaded files (what ``nxrecomp inspect`` prints)."""

from __future__ import annotations

from collections import Counter

from recompiler.formats.detect import Loaded, detect_format, load_bytes
from recompiler.formats.elfdyn import DT_NAMES
from recompiler.formats.kcaps import PROGRAM_TYPES, KernelCaps
from recompiler.formats.npdm import ADDRESS_SPACES, MEMORY_REGIONS, AccessControl, Npdm
from recompiler.formats.nro import NroModule
from recompiler.formats.nso import NsoModule
from recompiler.formats.pfs0 import Pfs0
from recompiler.formats.romfs import Romfs


def _ranges(ids: frozenset[int]) -> str:
    out, ids_sorted = [], sorted(ids)
    i = 0
    while i < len(ids_sorted):
        j = i
        while j + 1 < len(ids_sorted) and ids_sorted[j + 1] == ids_sorted[j] + 1:
            j += 1
        out.append(f"{ids_sorted[i]:#x}" if i == j else f"{ids_sorted[i]:#x}-{ids_sorted[j]:#x}")
        i = j + 1
    return ",".join(out) or "none"


def _module(m: NsoModule | NroModule, symbols: bool, relocs: bool) -> list[str]:
    lines = []
    for s in m.segments:
        extra = ""
        if isinstance(m, NsoModule):
            extra = (
                f" stored {s.file_size:#x} at {s.file_offset:#x}{' lz4' if s.compressed else ''}"
                f"{' sha256 ok' if s.hash_checked else ''}"
            )
        lines.append(f"  .{s.name:7} {s.mem_offset:#010x} size {s.size:#x}{extra}")
    lines.append(f"  .bss     {len(m.image):#010x} size {m.bss_size:#x}")
    lines.append(f"  build id {m.build_id.rstrip(bytes(1)).hex() or '(none)'}")
    if m.mod0 is None:
        lines.append("  MOD0     none")
    else:
        o = m.mod0
        lines.append(
            f"  MOD0     at {o.offset:#x}: dynamic {o.dynamic:#x} bss {o.bss_start:#x}..{o.bss_end:#x} "
            f"eh_frame_hdr {o.eh_frame_hdr_start:#x}..{o.eh_frame_hdr_end:#x} module object {o.module_object:#x}"
        )
        if o.homebrew:
            relro = f", RELRO {o.relro[0]:#x}..{o.relro[1]:#x} (LNY1)" if o.relro else ""
            lines.append(f"  homebrew libnx MOD0 mark: GOT {o.got[0]:#x}..{o.got[1]:#x} (LNY0){relro}")
    d = m.dynamic
    if d is not None:
        tags = " ".join(f"{DT_NAMES.get(t, hex(t))}={v:#x}" for t, v in d.entries if t != 1)
        lines.append(f"  .dynamic {len(d.entries)} entries: {tags}")
        if d.needed:
            lines.append(f"  needed   {', '.join(d.needed)}")
        kinds = Counter(r.type_name for r in d.relocations)
        if d.symbols_missing:
            lines.append(f"  symbols  none: {d.symbols_missing}")
        lines.append(
            f"  symbols  {len(d.symbols)} ({len(d.imports)} imports, {len(d.exports)} exports); "
            f"relocations {len(d.relocations)} ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})"
        )
    syms = m.symbols
    if symbols:
        for s in syms:
            if s.index:
                where = "UND" if not s.defined else f"{s.section:#x}"
                lines.append(
                    f"    sym {s.index:5} {s.value:#012x} {s.size:#8x} {s.type_name:9} {s.binding_name:6} {where:6} {s.name}"
                )
    if relocs and d is not None:
        for r in d.relocations:
            name = d.symbols[r.symbol].name if r.symbol and r.symbol < len(d.symbols) else ""
            add = "implicit" if r.addend is None else f"{r.addend:+#x}"
            lines.append(f"    rel {r.offset:#012x} {r.type_name:12} {add:>12} {name} [{r.table}]")
    return lines


def _caps(k: KernelCaps) -> list[str]:
    lines = []
    if k.lowest_priority is not None:
        lines.append(f"      thread priority {k.highest_priority}..{k.lowest_priority}, cores {k.min_core}..{k.max_core}")
    lines.append(f"      syscalls {_ranges(k.syscalls)}")
    for mm in k.memory_maps:
        lines.append(f"      map {mm.address:#x}+{mm.size:#x} {'ro' if mm.read_only else 'rw'} {'io' if mm.io else 'normal'}")
    for a in k.io_pages:
        lines.append(f"      io page {a:#x}")
    for rt, ro in k.map_regions:
        lines.append(f"      region type {rt} {'ro' if ro else 'rw'}")
    if k.interrupts:
        lines.append(f"      interrupts {', '.join(map(str, k.interrupts))}")
    if k.program_type is not None:
        lines.append(f"      program type {PROGRAM_TYPES.get(k.program_type, k.program_type)}")
    if k.kernel_version is not None:
        lines.append(f"      kernel version {k.kernel_version[0]}.{k.kernel_version[1]}")
    if k.handle_table_size is not None:
        lines.append(f"      handle table {k.handle_table_size}")
    if k.debug_flags:
        lines.append(f"      debug flags {', '.join(n for n, v in k.debug_flags.items() if v) or 'none'}")
    return lines


def _access(a: AccessControl) -> list[str]:
    svc = ", ".join(("host " if s.server else "") + s.name for s in a.services) or "none"
    return [
        f"    fs permissions {a.fs_permissions:#018x} (version {a.fs_version})",
        f"    services {svc}",
        "    kernel capabilities:",
        *_caps(a.kernel),
    ]


def _npdm(n: Npdm) -> list[str]:
    return [
        f"  name {n.name!r} product code {n.product_code!r} version {n.version}",
        f"  {'64' if n.is_64bit else '32'}-bit, {ADDRESS_SPACES[n.address_space]}",
        f"  main thread: priority {n.main_thread_priority}, core {n.main_thread_core}, "
        f"stack {n.main_thread_stack_size:#x}; system resource size {n.system_resource_size:#x}",
        f"  ACI0 at {n.aci0.offset:#x}: program id {n.aci0.program_id:#018x}",
        *_access(n.aci0.access),
        f"  ACID at {n.acid.offset:#x}: program ids {n.acid.program_id_min:#018x}..{n.acid.program_id_max:#018x}, "
        f"{'production' if n.acid.production else 'development'}, memory region "
        f"{MEMORY_REGIONS.get(n.acid.memory_region, n.acid.memory_region)}",
        *_access(n.acid.access),
    ]


def describe(obj: Loaded, *, symbols: bool = False, relocs: bool = False, deep: bool = True) -> list[str]:
    if isinstance(obj, NsoModule):
        return [
            f"{obj.path}: NSO0 module {obj.name!r} (version {obj.version}, flags {obj.flags:#x})",
            *_module(obj, symbols, relocs),
        ]
    if isinstance(obj, NroModule):
        lines = [f"{obj.path}: NRO0 module, {obj.size:#x} bytes", *_module(obj, symbols, relocs)]
        a = obj.assets
        if a is None:
            lines.append("  assets   none")
        else:
            lines.append(
                f"  ASET     at {a.offset:#x}: icon {a.icon.size:#x} bytes, NACP {a.nacp.size:#x} bytes, "
                f"RomFS {a.romfs.size:#x} bytes at {a.romfs.offset:#x}"
            )
            if a.nacp_info:
                lines.append(f"  title    {a.nacp_info.name!r} version {a.nacp_info.display_version!r}")
        return lines
    if isinstance(obj, Npdm):
        return [f"{obj.path}: NPDM", *_npdm(obj)]
    if isinstance(obj, Pfs0):
        lines = [f"{obj.path}: PFS0 with {len(obj.entries)} files"]
        for e in obj.entries:
            blob = obj.read(e.name)
            fmt = detect_format(blob)
            lines.append(f"  {e.name:20} {e.size:#10x} bytes at {e.offset:#x}{' (' + fmt + ')' if fmt else ''}")
            if deep and fmt in ("nso", "nro", "npdm"):
                sub = load_bytes(blob, f"{obj.path}:{e.name}", fmt)
                lines.extend("  " + line for line in describe(sub, symbols=symbols, relocs=relocs)[1:])
        return lines
    if isinstance(obj, Romfs):
        dirs, files = obj.tree()
        lines = [f"{obj.path}: RomFS, {len(dirs)} directories, {len(files)} files"]
        lines.extend(f"  {f.size:#10x}  {p}" for p, f in files)
        return lines
    raise TypeError(type(obj))
