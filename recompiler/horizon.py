"""Horizon's loader and dynamic linker, done by the host: turn an ExeFS (``main``, ``sdk``,
``subsdk*`` NSO modules and ``main.npdm``) into a ``LinkedImage`` that
``recompiler.analyse.analyse`` and ``recompiler.build.build`` take as they take a Linux
program's, and write the bundle (``game.so``, ``manifest.json``, ``image.bin``).

Layout follows Horizon's loader (public facts: switchbrew "NSO", Atmosphère's loader): the
modules are placed one after the other in load order (rtld, main, subsdk0..9, sdk) from the
start of the code region of the address space the NPDM names (0x8000000 for the 36- and 39-bit
spaces, 0x200000 for the 32-bit ones), each taking its memory size rounded up to a page; no
ASLR.  rtld keeps its slot, so every other module sits where the console would put it, but it
is dropped: the host applies every module's relocations and binds imports across modules, as
rtld would have.

Symbol binding follows rtld's rule: one global scope, the modules in load order, the first
module that defines a name wins; an undefined weak reference is 0.  A function that no module
defines (a JUMP_SLOT; a GLOB_DAT/ABS64 of a symbol typed FUNC or called through a JUMP_SLOT
somewhere; an untyped one is taken for data) is bound to a slot of
the **host-import region**, 16 bytes per name right after the last module: the CPU host serves
the SDK there (``cpu_host/horizon/hle``) by binding host functions at those addresses, and the
manifest's ``host_imports`` maps each name to its slot.  An unbound data reference is an error
naming the module, field and offset.

Inputs and who relocates a module: ``recompiler/formats/program.py`` (``load_program``,
``self_relocating``).  A self-relocating module (homebrew) keeps its stored bytes: its crt0
relocates it; its relocations only seed the analysis and its initialisers are its crt0's.
"""

from __future__ import annotations

import logging
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common.errors import NxError
from recompiler.formats.elfdyn import Symbol
from recompiler.formats.exefs import ExeFs
from recompiler.formats.npdm import ADDRESS_SPACE_BITS, Npdm
from recompiler.formats.nro import NroModule
from recompiler.formats.nso import NsoModule
from recompiler.formats.program import Program, load_program, self_relocating
from nxrecomp.bundle.image import LinkedImage, ModuleInfo, Segment

log = logging.getLogger("recompiler.horizon")

PAGE = 0x1000
# Start of the code region per NPDM address-space type (no ASLR).
CODE_REGION_START = {0: 0x200000, 1: 0x8000000, 2: 0x200000, 3: 0x8000000}
R_NONE, R_ABS64, R_GLOB_DAT, R_JUMP_SLOT, R_RELATIVE = 0, 257, 1025, 1026, 1027
STT_FUNC, STT_TLS, STT_GNU_IFUNC = 2, 6, 10
HOST_SLOT = 16  # bytes per host-import slot (the address is what matters)
STB_LOCAL, STB_WEAK = 0, 2
SHN_ABS = 0xFFF1
_U64 = struct.Struct("<Q")


@dataclass
class PlacedModule:
    """One NSO at its base address, with a writable copy of its memory (image + .bss)."""

    name: str
    nso: NsoModule | NroModule
    base: int
    size: int  # page-rounded memory size
    mem: bytearray
    self_relocating: bool = False  # its crt0 applies its relocations (see the module docstring)

    @property
    def path(self) -> str:
        return self.nso.path

    def sym_addr(self, s: Symbol) -> int:
        return s.value if s.section == SHN_ABS else self.base + s.value


def _align(v: int, a: int) -> int:
    return (v + a - 1) // a * a


def layout(exefs: ExeFs, base: int | None = None) -> list[PlacedModule]:
    """Place every module of ``exefs`` (rtld included: it keeps its slot) at its base: from the
    code region's start, or from ``base`` (code a loader mapped there at run time)."""
    npdm = exefs.npdm
    if npdm is None:
        raise NxError("an ExeFS needs main.npdm (it names the address space and the main thread)", path=f"{exefs.path}/main.npdm")
    if not npdm.is_64bit:
        raise NxError(
            "32-bit programs are not supported (the recompiler lifts AArch64 only)",
            path=npdm.path,
            field="META.Flags.Is64BitInstruction",
            offset=0xC,
        )
    limit = 1 << ADDRESS_SPACE_BITS[npdm.address_space]
    addr = CODE_REGION_START[npdm.address_space] if base is None else base
    placed = []
    for name, nso in exefs.modules:
        size = _align(nso.module.memory_size, PAGE)
        if addr + size > limit:
            raise NxError(
                f"module {name} would end at {addr + size:#x}, past the {npdm.address_space_name} address space ({limit:#x})",
                path=nso.path,
                field="Size",
            )
        mem = bytearray(nso.module.memory_size)
        mem[: len(nso.image)] = nso.image
        placed.append(PlacedModule(name, nso, addr, size, mem, self_relocating(exefs, nso)))
        addr += size
    return placed


def _exports(placed: list[PlacedModule]) -> dict[str, tuple[PlacedModule, Symbol]]:
    """The global scope: first definition of each name in load order."""
    scope: dict[str, tuple[PlacedModule, Symbol]] = {}
    for p in placed:
        for s in p.nso.symbols:
            if s.defined and s.binding != STB_LOCAL and s.name and s.type not in (3, 4):
                scope.setdefault(s.name, (p, s))
    return scope


@dataclass
class HostImports:
    """The host-import region: one slot per function name no module defines."""

    base: int
    limit: int
    slots: dict[str, int]
    called: set[str]  # names some module calls through a JUMP_SLOT: surely functions

    def slot(self, name: str) -> int | None:
        a = self.slots.get(name)
        if a is None:
            a = self.base + HOST_SLOT * len(self.slots)
            if a + HOST_SLOT > self.limit:
                return None
            self.slots[name] = a
        return a

    @property
    def size(self) -> int:
        return _align(max(HOST_SLOT * len(self.slots), 1), PAGE)


def _relocate(p: PlacedModule, scope: dict[str, tuple[PlacedModule, Symbol]], host: HostImports) -> None:
    dyn = p.nso.dynamic
    if dyn is None:
        return
    syms = dyn.symbols
    for r in dyn.relocations:
        where = f"{r.table} relocation {r.type_name}"
        if r.type == R_NONE:
            continue
        if not 0 <= r.offset <= len(p.mem) - 8:
            raise NxError(
                f"{where}: place {r.offset:#x} is outside the module (size {len(p.mem):#x})",
                path=p.path,
                field="r_offset",
                offset=r.offset,
            )
        implicit = _U64.unpack_from(p.mem, r.offset)[0]
        addend = r.addend if r.addend is not None else implicit
        if r.type == R_RELATIVE:
            value = p.base + addend
        elif r.type in (R_ABS64, R_GLOB_DAT, R_JUMP_SLOT):
            if r.type != R_ABS64 and r.addend is None:
                addend = 0  # REL GLOB_DAT/JUMP_SLOT: the word is the lazy-binding stub, not an addend
            if not 0 < r.symbol < len(syms):
                raise NxError(
                    f"{where}: symbol index {r.symbol} is out of range ({len(syms)} symbols)",
                    path=p.path,
                    field="r_info",
                    offset=r.offset,
                )
            sym = syms[r.symbol]
            if sym.type in (STT_TLS, STT_GNU_IFUNC):
                raise NxError(
                    f"{where}: symbol {sym.name} of type {sym.type_name} is not supported",
                    path=p.path,
                    field="r_info",
                    offset=r.offset,
                )
            if sym.defined and sym.binding == STB_LOCAL:
                hit: tuple[PlacedModule, Symbol] | None = (p, sym)
            else:
                hit = scope.get(sym.name)
            if hit is None:
                if sym.binding == STB_WEAK:
                    value = 0
                elif r.type == R_JUMP_SLOT or sym.type == STT_FUNC or sym.name in host.called:
                    slot = host.slot(sym.name)
                    if slot is None:
                        raise NxError(
                            f"{where}: no room for host import {sym.name!r} past the last module "
                            f"(address space ends at {host.limit:#x})",
                            path=p.path,
                            field="r_info",
                            offset=r.offset,
                        )
                    value = slot + addend
                else:
                    raise NxError(
                        f"{where}: undefined data symbol {sym.name!r} (no module exports it, and the host serves only functions)",
                        path=p.path,
                        field="r_info",
                        offset=r.offset,
                    )
            else:
                value = hit[0].sym_addr(hit[1]) + addend
        else:
            raise NxError(f"{where}: unsupported relocation type {r.type}", path=p.path, field="r_info", offset=r.offset)
        _U64.pack_into(p.mem, r.offset, value & 0xFFFFFFFFFFFFFFFF)


def _relative_values(p: PlacedModule) -> list[int]:
    """The pointers a self-relocating module's crt0 will write (its RELATIVE relocations, RELA
    addends or REL/RELR implicit words, plus the base), computed without touching its bytes;
    relocations that name a symbol are the crt0's business and give no value here."""
    dyn = p.nso.dynamic
    if dyn is None:
        return []
    out = []
    for r in dyn.relocations:
        if r.type == R_RELATIVE and 0 <= r.offset <= len(p.mem) - 8:
            addend = r.addend if r.addend is not None else _U64.unpack_from(p.mem, r.offset)[0]
            out.append((p.base + addend) & 0xFFFFFFFFFFFFFFFF)
    return out


def _eh_frame(p: PlacedModule) -> tuple[int, bytes] | None:
    """.eh_frame found through MOD0's .eh_frame_hdr (its eh_frame_ptr, pc-relative sdata4 or
    absolute udata8); the bytes run to the end of the segment holding it."""
    m = p.nso.mod0
    if m is None or m.eh_frame_hdr_end - m.eh_frame_hdr_start < 8:
        return None
    h = m.eh_frame_hdr_start
    version, enc = p.mem[h], p.mem[h + 1]
    if version != 1:
        return None
    if enc == 0x1B:
        off = h + 4 + struct.unpack_from("<i", p.mem, h + 4)[0]
    elif enc == 0x03 or enc == 0x04:
        off = _U64.unpack_from(p.mem, h + 4)[0] - p.base if enc == 0x04 else struct.unpack_from("<I", p.mem, h + 4)[0]
    else:
        return None
    for s in p.nso.segments:
        if s.mem_offset <= off < s.mem_offset + s.size:
            return p.base + off, bytes(p.mem[off : s.mem_offset + s.size])
    return None


def link_exefs(exefs: ExeFs, base: int | None = None) -> tuple[LinkedImage, HostImports]:
    """Lay out (from ``base`` when given), relocate and bind the modules of ``exefs``; rtld is dropped."""
    placed = layout(exefs, base)
    live = [p for p in placed if p.name != "rtld"]
    if any(p.name == "rtld" for p in placed):
        log.info("rtld dropped: the host links the modules")
    scope = _exports(live)
    assert exefs.npdm is not None  # layout() checked it
    called = {
        p.nso.dynamic.symbols[r.symbol].name
        for p in live
        if p.nso.dynamic is not None
        for r in p.nso.dynamic.relocations
        if r.type == R_JUMP_SLOT and 0 < r.symbol < len(p.nso.dynamic.symbols)
    }
    host = HostImports(
        base=placed[-1].base + placed[-1].size, limit=1 << ADDRESS_SPACE_BITS[exefs.npdm.address_space], slots={}, called=called
    )
    for p in live:
        if p.self_relocating:
            log.info(
                "%s relocates itself (no rtld; %s): its bytes are kept as its crt0 expects",
                p.name,
                "NRO"
                if isinstance(p.nso, NroModule)
                else "libnx MOD0 mark"
                if p.nso.mod0 is not None and p.nso.mod0.homebrew
                else "its only module",
            )
        else:
            _relocate(p, scope, host)
    segments: list[Segment] = []
    modules: list[ModuleInfo] = []
    symbols: dict[int, str] = {}
    hints: set[int] = set()
    for p in live:
        text, ro, data = p.nso.segments
        text_range = (p.base + text.mem_offset, p.base + text.mem_offset + text.size)
        bss_tail = bytes(p.mem[data.mem_offset + data.size :]).rstrip(b"\0")
        for seg, prot, extra, blob in ((text, "r-x", 0, None), (ro, "r--", 0, None), (data, "rw-", p.nso.bss_size, bss_tail)):
            body = bytes(p.mem[seg.mem_offset : seg.mem_offset + seg.size]) + (blob or b"")
            if seg.size + extra:
                segments.append(Segment(p.base + seg.mem_offset, seg.size + extra, body, prot, p.name))
        info = ModuleInfo(p.name, p.base, p.path, text_ranges=[text_range])
        dyn = p.nso.dynamic
        if p.self_relocating:
            # the crt0 runs its own initialisers; what its relocations will write seeds the analysis
            hints.update(v for v in _relative_values(p) if any(q.base <= v < q.base + q.nso.segments[0].size for q in live))
        elif dyn is not None:
            for kind in ("INIT_ARRAY", "FINI_ARRAY"):
                arr = dyn.array(kind)
                if arr and arr[1]:
                    off, size = arr
                    if not 0 <= off <= off + size <= len(p.mem):
                        raise NxError(
                            f"DT_{kind} [{off:#x}, {off + size:#x}) is outside the module",
                            path=p.path,
                            field=f"DT_{kind}",
                            offset=off,
                        )
                    vals = [_U64.unpack_from(p.mem, off + 8 * i)[0] for i in range(size // 8)]
                    setattr(info, kind.lower(), [v for v in vals if v not in (0, 0xFFFFFFFFFFFFFFFF)])
            for kind in ("INIT", "FINI"):
                v = dyn.get(kind)
                if v:
                    setattr(info, kind.lower(), p.base + v)
            # pointers into code written by relocations: function pointers, vtables, jump tables
            for r in dyn.relocations:
                if 0 <= r.offset <= len(p.mem) - 8:
                    v = _U64.unpack_from(p.mem, r.offset)[0]
                    if any(q.base <= v < q.base + q.nso.segments[0].size for q in live):
                        hints.add(v)
        info.eh_frame = _eh_frame(p)
        hints.update(info.init_array + info.fini_array + [x for x in (info.init, info.fini) if x])
        for s in p.nso.symbols:
            if s.defined and s.value and s.type in (0, STT_FUNC):
                a = p.sym_addr(s)
                if text_range[0] <= a < text_range[1]:
                    hints.add(a)
                    if a not in symbols or symbols[a].startswith("_"):
                        symbols[a] = s.name
        modules.append(info)
    main = next(p for p in live if p.name == "main")
    entry = main.base
    hints.add(entry)
    symbols.setdefault(entry, "main:_start")
    for name, addr in host.slots.items():
        symbols[addr] = name
    return LinkedImage(
        segments=sorted(segments, key=lambda s: s.vaddr),
        entry=entry,
        modules=modules,
        symbols=symbols,
        func_hints=hints,
        tls=None,
        phdr=0,
        phent=0,
        phnum=0,
        brk_start=0,
        static=False,
        unresolved=sorted(host.slots),
    ), host


def process_info(npdm: Npdm) -> dict:
    """What the kernel needs from main.npdm, in manifest form."""
    caps = npdm.aci0.access.kernel
    return {
        "name": npdm.name,
        "program_id": npdm.aci0.program_id,
        "address_space": npdm.address_space,
        "address_space_bits": ADDRESS_SPACE_BITS[npdm.address_space],
        "main_thread_priority": npdm.main_thread_priority,
        "main_thread_core": npdm.main_thread_core,
        "main_thread_stack_size": npdm.main_thread_stack_size,
        "system_resource_size": npdm.system_resource_size,
        # ThreadInfo capability; a program without one may use only what its main thread uses
        "highest_priority": caps.highest_priority if caps.highest_priority is not None else npdm.main_thread_priority,
        "lowest_priority": caps.lowest_priority if caps.lowest_priority is not None else npdm.main_thread_priority,
        "min_core": caps.min_core if caps.min_core is not None else npdm.main_thread_core,
        "max_core": caps.max_core if caps.max_core is not None else npdm.main_thread_core,
    }


def _check_npdm(npdm: Npdm) -> None:
    info = process_info(npdm)
    if not info["highest_priority"] <= npdm.main_thread_priority <= info["lowest_priority"]:
        raise NxError(
            f"main thread priority {npdm.main_thread_priority} is outside the ThreadInfo capability "
            f"({info['highest_priority']}..{info['lowest_priority']})",
            path=npdm.path,
            field="META.MainThreadPriority",
            offset=0xE,
        )
    if not info["min_core"] <= npdm.main_thread_core <= info["max_core"]:
        raise NxError(
            f"main thread core {npdm.main_thread_core} is outside the ThreadInfo capability "
            f"({info['min_core']}..{info['max_core']})",
            path=npdm.path,
            field="META.MainThreadCoreNumber",
            offset=0xF,
        )
    if npdm.main_thread_stack_size == 0 or npdm.main_thread_stack_size % PAGE:
        raise NxError(
            f"main thread stack size {npdm.main_thread_stack_size:#x} is not a non-zero multiple of the page size",
            path=npdm.path,
            field="META.MainThreadStackSize",
            offset=0x1C,
        )


GPU_GENERATIONS = ("switch1", "switch2")


def recompile_exefs(exefs_path: str | Path, out_dir: str | Path, romfs: str | Path | None = None, gpu: str = "switch1") -> dict:
    """load → link → analyse → build a program (any input of ``load_program``) into a bundle
    folder; returns the manifest.  ``gpu`` names the console the game was built for (its
    texture layout; manifest ``gpu``).  An NRO's own RomFS is written to ``romfs.bin`` in the
    bundle unless ``romfs`` names another."""
    from recompiler.build import build
    from recompiler.pipeline import analyse_image, discovered_entries, note_discovered, write_manifest

    t0 = time.monotonic()
    src = Path(exefs_path)
    if gpu not in GPU_GENERATIONS:
        raise NxError(f"gpu {gpu!r} is not one of {', '.join(GPU_GENERATIONS)}")
    program = load_program(src)  # bad input fails here or in the link, before anything is written
    exefs = program.exefs
    image, host = link_exefs(exefs)
    assert exefs.npdm is not None  # link_exefs checked it
    _check_npdm(exefs.npdm)
    romfs_ref = None
    if romfs is not None:
        rp = Path(romfs)
        if not rp.is_file():
            raise NxError("RomFS is not a readable file", path=str(rp))
        romfs_ref = str(rp.resolve())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if romfs_ref is None and program.nro is not None and program.nro.assets and program.nro.assets.romfs.size:
        romfs_ref = str(_write_nro_romfs(program.nro, out).resolve())
    t_link = time.monotonic()
    extra = discovered_entries(out)  # lifted at run time before: lifted statically now
    analysed = analyse_image(image, extra)
    t_an = time.monotonic()
    stats = build(analysed, out, personality="horizon")
    note_discovered(analysed, extra, out, stats)
    if analysed.stats is not None:  # what analysis found (the manifest's stats.analysis)
        stats["analysis"] = analysed.stats.to_json()
    t_build = time.monotonic()
    return write_manifest(
        out,
        "horizon",
        image,
        analysed,
        stats,
        (t0, t_link, t_an, t_build),
        src,
        input=program.kind,
        homebrew=homebrew_info(program),
        exefs=str(src.resolve()),
        romfs=romfs_ref,
        gpu=gpu,
        process=process_info(exefs.npdm),
        modules=[
            {
                "name": m.name,
                "base": m.base,
                "size": _align(dict(exefs.modules)[m.name].module.memory_size, PAGE),
                "build_id": dict(exefs.modules)[m.name].build_id.hex(),
            }
            for m in image.modules
        ],
        host_imports={"base": host.base, "size": host.size, "slots": host.slots},
    )


def _write_nro_romfs(nro: NroModule, out: Path) -> Path:
    """The NRO's ASET RomFS as a file of the bundle (the fs layer reads a RomFS file)."""
    assert nro.assets is not None
    rng = nro.assets.romfs
    with open(nro.path, "rb") as f:
        f.seek(rng.offset)
        data = f.read(rng.size)
    if len(data) != rng.size:
        raise NxError(f"ASET RomFS {rng.offset:#x}+{rng.size:#x} runs past the file", path=nro.path, field="ASET.romfs")
    dst = out / "romfs.bin"
    tmp = out / "romfs.bin.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, dst)
    return dst


def homebrew_info(program: Program) -> dict:
    """Manifest ``homebrew``: how the main thread starts (``abi``: "nro", "nso" or null), which
    modules relocate themselves, whether main.npdm was the default, the NACP title."""
    nacp = program.nro.assets.nacp_info if program.nro is not None and program.nro.assets else None
    return {
        "abi": program.homebrew_abi,
        "self_relocating": [n for n, m in program.exefs.modules if self_relocating(program.exefs, m)],
        "npdm_default": program.npdm_default,
        "title": nacp.name if nacp is not None else None,
        "version": nacp.display_version if nacp is not None else None,
    }
