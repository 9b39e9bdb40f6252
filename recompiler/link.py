"""The host linker: lay out a program and its DT_NEEDED shared objects at fixed guest addresses,
resolve symbols across them and apply their relocations, as the program's dynamic loader would
have.  The result is what analysis reads.  A dynamically linked program's own ld.so does run
(``recompiler/dynamic.py``): it maps the libraries at these same bases and relocates them itself,
on the files' bytes, so at run time memory holds what this linker predicted (less lazy JUMP_SLOTs
until their first call, whose file value, the PLT's first entry, is a function hint here).

Layout (all below 2^39, so every guest code address is a small host address):
- a non-PIE executable stays where it was linked (Debian's busybox-static: 0x400000);
- a PIE main program goes at ``base_for_pie`` (default 0x5500000000, the first address
  qemu-aarch64 itself uses for PIEs, which keeps addresses in logs comparable);
- shared objects follow from ``dso_base`` (default 0x7000000000) upwards, each at its own
  base aligned to its largest p_align, a 64 KiB guard gap between them.  The gap between the
  main program and ``dso_base`` is where ``brk`` grows.

Symbol lookup follows the ELF rules: the global scope is the main program, then its needed
objects in breadth-first order; the first module that defines a name wins (glibc does not
prefer a strong definition over an earlier weak one); an undefined weak reference is 0.
Symbol versioning is approximated by name: a reference that names a version binds to the
definition with that version in the first defining module, else to its default (``@@``)
definition; non-default (``@``) definitions are never chosen otherwise.

TLS: the static layout of AArch64 (variant 1): TP points to a 16-byte TCB, followed by the
TLS block of each module that has PT_TLS, in load order, each aligned to its p_align.
glibc keeps its ``struct pthread`` just *below* TP; the runtime must leave room there.
TLS descriptors (R_AARCH64_TLSDESC) are left to glibc's ld.so in a dynamically linked program
(it fills each descriptor when it relocates the module: libselinux's, in sed's closure); a static
executable with one is reported like any unknown relocation.

IRELATIVE / IFUNC: for a dynamically linked program, every IRELATIVE relocation and every
GLOB_DAT/JUMP_SLOT/ABS64 bound to an STT_GNU_IFUNC symbol is *recorded* in
``LinkedImage.ifunc_slots`` as slot -> resolver, and ``LinkedImage.irelative`` lists those a
runtime would resolve before the program starts (resolver(hwcap, &arg) stored in the slot: ld.so
does it, running in the program).  A
static executable (no PT_INTERP) applies its own IRELATIVE relocations at startup, so its
``irelative`` is empty; its slots are still recorded, for the analysis of PLT stubs.
"""

from __future__ import annotations

import bisect
import struct
from collections import deque
from pathlib import Path

# the linker's output is the bundle's record (also imported from here by the recompiler's modules)
from nxrecomp.bundle.image import LinkedImage, ModuleInfo, Segment, TlsBlock, TlsLayout
from nxrecomp.common.errors import NxError
from recompiler.elf import ElfModule, Symbol, load_elf

R_AARCH64_NONE = 0
R_AARCH64_ABS64 = 257
R_AARCH64_COPY = 1024
R_AARCH64_GLOB_DAT = 1025
R_AARCH64_JUMP_SLOT = 1026
R_AARCH64_RELATIVE = 1027
R_AARCH64_TLS_DTPMOD64 = 1028
R_AARCH64_TLS_DTPREL64 = 1029
R_AARCH64_TLS_TPREL64 = 1030
R_AARCH64_TLSDESC = 1031
R_AARCH64_IRELATIVE = 1032
RELOC_NAMES = {
    R_AARCH64_NONE: "NONE",
    R_AARCH64_ABS64: "ABS64",
    R_AARCH64_COPY: "COPY",
    R_AARCH64_GLOB_DAT: "GLOB_DAT",
    R_AARCH64_JUMP_SLOT: "JUMP_SLOT",
    R_AARCH64_RELATIVE: "RELATIVE",
    R_AARCH64_TLS_DTPMOD64: "TLS_DTPMOD64",
    R_AARCH64_TLS_DTPREL64: "TLS_DTPREL64",
    R_AARCH64_TLS_TPREL64: "TLS_TPREL64",
    R_AARCH64_TLSDESC: "TLSDESC",
    R_AARCH64_IRELATIVE: "IRELATIVE",
}

PAGE = 0x1000
GUARD = 0x10000
TCB_SIZE = 16
ADDRESS_LIMIT = 1 << 39
DEFAULT_PIE_BASE = 0x55_0000_0000
DEFAULT_DSO_BASE = 0x70_0000_0000
_LIBDIRS = ("lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib", "usr/lib", "lib64", "usr/lib64", ".")
_U64 = struct.Struct("<Q")


def _align(v: int, a: int) -> int:
    return (v + a - 1) // a * a if a > 1 else v


# ---- loading the needed objects -------------------------------------------------------------


def find_library(name: str, search_paths: list[str | Path]) -> Path | None:
    """``name`` (a DT_NEEDED soname) in the library folders of each unpacked root."""
    for root in search_paths:
        for sub in _LIBDIRS:
            p = Path(root) / sub / name
            if p.is_file():
                return p
    return None


def load_closure(modules: list[ElfModule], search_paths: list[str | Path]) -> list[ElfModule]:
    """The main program (modules[0]) and every object it needs, breadth-first (the ELF global
    lookup order).  Modules already in ``modules`` are used as given."""
    by_name = {m.name: m for m in modules}
    for m in modules:
        by_name.setdefault(Path(m.path).name, m)
    order: list[ElfModule] = []
    seen: set[int] = set()
    queue = deque([modules[0]])
    while queue:
        m = queue.popleft()
        if id(m) in seen:
            continue
        seen.add(id(m))
        order.append(m)
        for need in m.dynamic.needed if m.dynamic else []:
            dep = by_name.get(need)
            if dep is None:
                p = find_library(need, search_paths)
                if p is None:
                    raise NxError(
                        f"needed library {need} not found in {[str(s) for s in search_paths]}", path=m.path, field="DT_NEEDED"
                    )
                dep = load_elf(p)
                by_name[need] = by_name.setdefault(dep.name, dep)
            queue.append(dep)
    return order


# ---- the link -------------------------------------------------------------------------------


class _Placed:
    """One module at its base: relocatable copies of its segments and its export table."""

    def __init__(self, mod: ElfModule, base: int) -> None:
        self.mod, self.base = mod, base
        self.segs = [(base + s.vaddr, base + s.vaddr + s.memsz, bytearray(s.data), s) for s in mod.segments]
        self.exports: dict[str, list[Symbol]] = {}
        for s in mod.dynsyms:
            if (
                s.defined
                and s.bind in ("GLOBAL", "WEAK", "GNU_UNIQUE")
                and s.visibility in (0, 3)
                and s.type not in ("SECTION", "FILE")
            ):
                self.exports.setdefault(s.name, []).append(s)
        self.tls_modid = 0
        self.tls_offset = 0

    def sym_addr(self, s: Symbol) -> int:
        return s.value if s.shndx == 0xFFF1 or s.type == "TLS" else self.base + s.value

    def write64(self, addr: int, value: int, what: str) -> None:
        self.write_bytes(addr, _U64.pack(value & 0xFFFFFFFFFFFFFFFF), what)

    def write_bytes(self, addr: int, data: bytes, what: str) -> None:
        for lo, hi, buf, _s in self.segs:
            if lo <= addr and addr + len(data) <= hi:
                off = addr - lo
                if off + len(data) > len(buf):  # a place in .bss: the data grows past filesz
                    buf.extend(bytes(off + len(data) - len(buf)))
                buf[off : off + len(data)] = data
                return
        raise NxError(
            f"{what}: place {addr - self.base:#x} is outside every PT_LOAD segment",
            path=self.mod.path,
            field="r_offset",
            offset=addr - self.base,
        )

    def read64(self, addr: int) -> int:
        for lo, hi, buf, _s in self.segs:
            if lo <= addr and addr + 8 <= hi:
                off = addr - lo
                chunk = bytes(buf[off : off + 8])
                return _U64.unpack(chunk + bytes(8 - len(chunk)))[0]
        raise NxError(f"address {addr - self.base:#x} is outside every PT_LOAD segment", path=self.mod.path)

    def read(self, addr: int, size: int) -> bytes:
        for lo, hi, buf, _s in self.segs:
            if lo <= addr and addr + size <= hi:
                chunk = bytes(buf[addr - lo : addr - lo + size])
                return chunk + bytes(size - len(chunk))
        raise NxError(f"range {addr - self.base:#x}+{size:#x} is outside every PT_LOAD segment", path=self.mod.path)


# Shared objects laid out first, in this order, whatever the program: glibc's, which nearly
# every program needs, then sit at the same bases in every bundle, so their lifted C is the same
# and the shard cache serves it to the next program (a second coreutils program compiles 5 of
# its ~145 objects).  The lookup order (``mods``) is unchanged.
_FIRST = ("libc.so.6", "ld-linux-aarch64.so.1", "libm.so.6")


def _layout(mods: list[ElfModule], base_for_pie: int, dso_base: int) -> list[int]:
    bases = [0] * len(mods)
    taken: list[tuple[int, int, str]] = []
    nxt = dso_base
    rank = {n: k for k, n in enumerate(_FIRST)}
    order = [0, *sorted(range(1, len(mods)), key=lambda k: rank.get(mods[k].name, len(_FIRST)))]
    for i in order:
        m = mods[i]
        lo = min(s.vaddr for s in m.segments) // PAGE * PAGE
        hi = max(s.vaddr + s.memsz for s in m.segments)
        align = max([PAGE] + [s.align for s in m.segments])
        if not m.is_pic:
            base = 0
        elif i == 0:
            base = _align(base_for_pie, align)
        else:
            base = _align(nxt, align)
        nxt = max(nxt, _align(base + hi, PAGE) + GUARD) if i else nxt
        if base + hi > ADDRESS_LIMIT:
            raise NxError(f"module would end at {base + hi:#x}, above the 2^39 guest limit", path=m.path)
        for a, b, other in taken:
            if base + lo < b and a < base + hi:
                raise NxError(f"module [{base + lo:#x}, {base + hi:#x}) overlaps {other} [{a:#x}, {b:#x})", path=m.path)
        taken.append((base + lo, base + hi, m.name))
        bases[i] = base
    return bases


def _tls_layout(placed: list[_Placed]) -> TlsLayout | None:
    blocks = []
    offset = TCB_SIZE
    modid = 0
    for p in placed:
        t = p.mod.tls
        if t is None or t.memsz == 0:
            continue
        modid += 1
        # an image whose address is not aligned keeps its misalignment inside the block
        first = (-t.vaddr) & (t.align - 1)
        off = _align(offset, t.align)
        if off - offset < first:
            off += t.align
        p.tls_modid, p.tls_offset = modid, off - first
        offset = off + t.memsz - first
        blocks.append(TlsBlock(p.mod.name, p.base + t.vaddr, t.filesz, t.memsz, t.align, p.tls_offset))
    if not blocks:
        return None
    b = blocks[0]
    return TlsLayout(b.template, b.filesz, b.memsz, max(x.align for x in blocks), b.tp_offset, blocks, offset)


def link(
    modules: list[ElfModule],
    *,
    base_for_pie: int = DEFAULT_PIE_BASE,
    dso_base: int = DEFAULT_DSO_BASE,
    search_paths: list[str | Path] = (),
) -> LinkedImage:
    """Link ``modules[0]`` (the program) with every object it needs (taken from ``modules`` or
    found by soname under ``search_paths``); see the module docstring for the rules."""
    if not modules:
        raise NxError("nothing to link")
    mods = load_closure(modules, list(search_paths))
    main = mods[0]
    if main.interp and (main.dynamic and main.dynamic.needed):
        # the interpreter (glibc's ld.so) runs first and is lifted with the rest; libc.so needs it,
        # so it is nearly always in the closure already
        iname = Path(main.interp).name
        if not any(m.name == iname or Path(m.path).name == iname for m in mods):
            found = find_library(iname, list(search_paths))
            if found is None:
                raise NxError(
                    f"the program's interpreter {main.interp} not found in {[str(s) for s in search_paths]}",
                    path=main.path,
                    field="PT_INTERP",
                )
            mods.append(load_elf(found))
    if main.type == "DYN" and main.dynamic and main.dynamic.soname and main.entry == 0:
        raise NxError("the first module is a shared library, not a program", path=main.path)
    bases = _layout(mods, base_for_pie, dso_base)
    placed = [_Placed(m, b) for m, b in zip(mods, bases)]
    tls = _tls_layout(placed)
    static = main.interp is None and not (main.dynamic and main.dynamic.needed)
    exec_ranges = sorted((p.base + a, p.base + b) for p in placed for a, b in p.mod.text_ranges)
    starts = [a for a, _ in exec_ranges]

    def in_text(v: int) -> bool:
        i = bisect.bisect_right(starts, v) - 1
        return i >= 0 and v < exec_ranges[i][1]

    func_hints: set[int] = set()
    symbols: dict[int, str] = {}
    ifunc_slots: dict[int, int] = {}
    unresolved: list[str] = []
    copies: list[tuple[_Placed, int, _Placed, Symbol]] = []

    def lookup(name: str, version: str) -> tuple[_Placed, Symbol] | None:
        for p in placed:
            defs = p.exports.get(name)
            if not defs:
                continue
            if version:
                for s in defs:
                    if s.version == version:
                        return p, s
            for s in defs:
                if not s.hidden_version:
                    return p, s
        return None

    for p in placed:
        m = p.mod
        for r in m.relocs:
            t = r.type
            place = p.base + r.offset
            what = f"{m.name} {RELOC_NAMES.get(t, t)} at {r.offset:#x}"
            if t == R_AARCH64_NONE:
                continue
            if t == R_AARCH64_RELATIVE:
                v = p.base + r.addend
                p.write64(place, v, what)
                if in_text(v):
                    func_hints.add(v)
                continue
            if t == R_AARCH64_IRELATIVE:
                ifunc_slots[place] = p.base + r.addend  # a static program's startup applies it itself
                func_hints.add(p.base + r.addend)
                continue
            if t == R_AARCH64_TLSDESC and not static:
                # glibc's ld.so, which runs in the program, fills the descriptor (its resolver,
                # its argument) when it relocates the module: nothing to write here
                # (libselinux's, in sed's closure)
                continue
            if t not in RELOC_NAMES or t == R_AARCH64_TLSDESC:
                raise NxError(
                    f"unsupported relocation type {t} ({RELOC_NAMES.get(t, 'unknown')})",
                    path=m.path,
                    field="r_info",
                    offset=r.offset,
                )
            if t == R_AARCH64_JUMP_SLOT and not static:
                # lazy binding: until ld.so binds it, the slot holds the file's value (the PLT's
                # first entry, which calls ld.so's resolver) plus the load address
                lazy = p.base + p.read64(place)
                if in_text(lazy):
                    func_hints.add(lazy)
            # symbol-based relocations
            if r.sym:
                sym = m.dynsyms[r.sym] if r.sym < len(m.dynsyms) else None
                if sym is None:
                    raise NxError(f"{what}: symbol index {r.sym} out of range", path=m.path, field="r_info")
                if sym.bind == "LOCAL" and sym.defined:
                    hit = (p, sym)
                else:
                    hit = lookup(sym.name, sym.version)
                    if t == R_AARCH64_COPY:
                        hit = next(((q, s) for q, s in _all_defs(placed, sym) if q is not p), None)
                if hit is None:
                    if sym.bind == "WEAK":
                        dp, dsym = None, None
                    elif t == R_AARCH64_JUMP_SLOT:
                        unresolved.append(f"{m.name}:{sym.name}")
                        p.write64(place, 0, what)
                        continue
                    else:
                        raise NxError(f"{what}: undefined symbol {sym.name}", path=m.path, field="r_info", offset=r.offset)
                else:
                    dp, dsym = hit
            else:
                dp, dsym = p, None
            if t == R_AARCH64_COPY:
                copies.append((p, place, dp, dsym))
                continue
            if t in (R_AARCH64_ABS64, R_AARCH64_GLOB_DAT, R_AARCH64_JUMP_SLOT):
                if dsym is None:
                    v = r.addend if r.sym else p.base + r.addend
                else:
                    v = dp.sym_addr(dsym) + r.addend
                    if dsym.type == "GNU_IFUNC":
                        ifunc_slots[place] = v
                        func_hints.add(v)
                        p.write64(place, 0, what)  # the runtime stores the resolver's answer
                        continue
                p.write64(place, v, what)
                if in_text(v):
                    func_hints.add(v)
            elif t == R_AARCH64_TLS_TPREL64:
                owner = dp if dsym is not None else p
                if owner.tls_modid == 0:
                    raise NxError(
                        f"{what}: TLS relocation against {owner.mod.name}, which has no PT_TLS",
                        path=m.path,
                        field="r_info",
                        offset=r.offset,
                    )
                p.write64(place, owner.tls_offset + (dsym.value if dsym else 0) + r.addend, what)
            elif t == R_AARCH64_TLS_DTPMOD64:
                p.write64(place, (dp if dsym is not None else p).tls_modid, what)
            elif t == R_AARCH64_TLS_DTPREL64:
                p.write64(place, (dsym.value if dsym else 0) + r.addend, what)
    for p, place, dp, dsym in copies:  # after every other relocation: copy relocated data
        if dsym is not None and dsym.size:
            p.write_bytes(place, dp.read(dp.sym_addr(dsym), dsym.size), f"{p.mod.name} COPY of {dsym.name}")

    infos = []
    segments = []
    for p in placed:
        m = p.mod
        info = ModuleInfo(m.name, p.base, m.path, tls_modid=p.tls_modid, tls_offset=p.tls_offset)
        info.init_array, info.fini_array, info.preinit_array, info.init, info.fini = _init_fini(p)
        for attr in ("eh_frame", "eh_frame_hdr", "gcc_except_table", "go_pclntab"):
            v = getattr(m, attr)
            if v is not None:
                setattr(info, attr, (p.base + v[0], v[1]))
        info.text_ranges = [(p.base + a, p.base + b) for a, b in m.text_ranges]
        for f in info.init_array + info.fini_array + info.preinit_array + [info.init, info.fini]:
            if f and f != 0xFFFFFFFFFFFFFFFF:
                func_hints.add(f)
        for s in m.symbols + m.dynsyms:
            if s.defined and s.type in ("FUNC", "GNU_IFUNC") and s.value:
                a = p.sym_addr(s)
                func_hints.add(a)
                if a not in symbols or (s.bind != "LOCAL" and symbols[a].startswith("_")):
                    symbols[a] = s.name
        infos.append(info)
        for lo, hi, buf, s in p.segs:
            segments.append(Segment(lo, s.memsz, bytes(buf), s.prot, m.name))
    entry = placed[0].base + main.entry
    func_hints.add(entry)
    if main.phdr_vaddr is None:
        raise NxError("program headers are not inside a loaded segment (no AT_PHDR)", path=main.path, field="e_phoff")
    end = max(s.vaddr + s.memsz for s in main.segments) + placed[0].base
    return LinkedImage(
        segments=sorted(segments, key=lambda s: s.vaddr),
        entry=entry,
        modules=infos,
        symbols=symbols,
        func_hints=func_hints,
        ifunc_slots=ifunc_slots,
        tls=tls,
        phdr=placed[0].base + main.phdr_vaddr,
        phent=main.phent,
        phnum=main.phnum,
        brk_start=_align(end, PAGE),
        static=static,
        unresolved=unresolved,
    )


def _all_defs(placed: list[_Placed], sym: Symbol):
    for q in placed:
        for s in q.exports.get(sym.name, []):
            if not s.hidden_version or s.version == sym.version:
                yield q, s
                break


def _init_fini(p: _Placed) -> tuple[list[int], list[int], list[int], int, int]:
    """Constructor/destructor addresses (relocated): from DT_* tags, or for a static program
    from its .init_array/.fini_array/.preinit_array/.init/.fini sections."""
    m = p.mod
    d = m.dynamic
    arrays = {}
    if d is not None:
        spec = {
            "init": (d.init_array, d.init_arraysz),
            "fini": (d.fini_array, d.fini_arraysz),
            "preinit": (d.preinit_array, d.preinit_arraysz),
        }
        init, fini = (p.base + d.init if d.init else 0), (p.base + d.fini if d.fini else 0)
    else:
        secs = {s.name: s for s in m.sections}
        spec = {
            k: ((secs[n].addr, secs[n].size) if n in secs else (0, 0))
            for k, n in (("init", ".init_array"), ("fini", ".fini_array"), ("preinit", ".preinit_array"))
        }
        init = secs[".init"].addr if ".init" in secs else 0
        fini = secs[".fini"].addr if ".fini" in secs else 0
        init, fini = (p.base + init if init else 0), (p.base + fini if fini else 0)
    for k, (addr, size) in spec.items():
        arrays[k] = [p.read64(p.base + addr + 8 * i) for i in range(size // 8)] if addr else []
    return arrays["init"], arrays["fini"], arrays["preinit"], init, fini


def link_program(path: str | Path, search_paths: list[str | Path] = (), **kw) -> LinkedImage:
    """Load ``path`` and link it with the libraries it needs from ``search_paths``."""
    return link([load_elf(path)], search_paths=list(search_paths), **kw)
