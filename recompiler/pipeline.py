"""load → link → analyse → lift → build, for a Linux AArch64 ELF program: ``game.so``,
``manifest.json`` and ``image.bin`` of the bundle (``nxrecomp/bundle``).  The Linux host's
native launcher (``nxrun`` and its ``launch.txt``) is added by ``nxrecomp recompile``
(``nxrecomp/app/build.py``): the recompiler does not depend on the hosts."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from nxrecomp.common import settings
from nxrecomp.bundle import launch, manifest as bundle_manifest
from nxrecomp.bundle.image import IMAGE_FILE, LinkedImage
from nxrecomp.common.errors import NxError
from recompiler import discovered, dynamic, profile
from recompiler.analysis import cxx_args
from recompiler.analysis.call_targets import guess_targets
from recompiler.analysis.callers import closed_entries
from recompiler.analysis import go_args
from recompiler.analyse import Memory, Program, analyse
from recompiler.build import build
from recompiler.link import link_program

log = logging.getLogger("recompiler")


def image_memory(image: LinkedImage) -> Memory:
    return Memory(
        [(s.vaddr, s.memsz, bytes(s.data), "x" in s.prot) for s in image.segments],
        [(s.vaddr, s.memsz) for s in image.segments if "w" not in s.prot],
        code_ranges(image),
    )


def code_ranges(image: LinkedImage) -> list[tuple[int, int]]:
    """Where each module's code is (``Memory.code``): its sections of code (``text_ranges``:
    ``SHF_EXECINSTR``), or without section headers its executable segments less its unwind
    tables (``.eh_frame``, found through ``PT_GNU_EH_FRAME``); a module that names none keeps
    every executable segment of its own."""
    out: list[tuple[int, int]] = []
    for m in image.modules:
        ranges = list(m.text_ranges)
        if not ranges:
            ranges = [(s.vaddr, s.vaddr + s.memsz) for s in image.segments if "x" in s.prot and s.module == m.name]
        for t in (m.eh_frame, m.eh_frame_hdr, m.gcc_except_table):
            if t is not None:
                ranges = _minus(ranges, t[0], t[0] + len(t[1]))
        out += ranges
    named = {m.name for m in image.modules}
    for s in image.segments:  # an executable segment of no module described (a test's image): all code
        if "x" in s.prot and s.module not in named:
            out.append((s.vaddr, s.vaddr + s.memsz))
    return sorted(out)


def _minus(ranges: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    out = []
    for a, b in ranges:
        if b <= lo or hi <= a:
            out.append((a, b))
            continue
        if a < lo:
            out.append((a, lo))
        if hi < b:
            out.append((hi, b))
    return out


def ifunc_slots(image: LinkedImage) -> dict[int, int]:
    """The IFUNC slots analysis may resolve PLT stubs through (``recompiler.ifunc_stubs``).  None
    for a dynamically linked program: there ld.so binds JUMP_SLOTs lazily, so until the first
    call a slot holds the address of the PLT's first entry (the way to ld.so's resolver), not
    one of the resolver's answers; its stubs stay indirect branches."""
    if not image.static:
        return {}
    return image.ifunc_slots if settings.get("recompiler", "ifunc_stubs") else {}


def eh_frames(image: LinkedImage) -> list[tuple[int, bytes]]:
    return [m.eh_frame for m in image.modules if m.eh_frame]


def go_pclntabs(image: LinkedImage) -> list[tuple[int, bytes]]:
    """Each module's Go function table as placed and relocated: a position-independent Go
    program's table holds addresses its dynamic relocations fill in (``textStart`` since Go 1.18,
    every function's entry before), which the file holds as linked (at 0x10000, not where the
    program is placed)."""
    mem = image_memory(image)
    out = []
    for m in image.modules:
        if m.go_pclntab:
            addr, data = m.go_pclntab
            out.append((addr, mem.read(addr, len(data)) or data))
    return out


def hidden_entries(image: LinkedImage) -> set[int]:
    """The entries ``recompiler.hide_entries`` leaves out of the build (hex addresses or symbol
    names): tests of lift on miss make the run-time lifter find them."""
    text = str(settings.get("recompiler", "hide_entries")).strip()
    if not text:
        return set()
    by_name = {n: a for a, n in image.symbols.items()}
    out: set[int] = set()
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        if word in by_name:
            out.add(by_name[word])
            continue
        try:
            out.add(int(word, 16))
        except ValueError:
            raise NxError(
                f"{word!r} is neither a hex address nor a symbol of the program",
                field="recompiler.hide_entries (NXRECOMP_RECOMPILER_HIDE_ENTRIES)",
            ) from None
    return out


def analyse_image(image: LinkedImage, extra_entries: set[int] | frozenset[int] = frozenset()) -> Program:
    """Analysis of a linked image with the settings that steer it (``recompiler.ifunc_stubs``,
    ``recompiler.noreturn_calls``, ``recompiler.hide_entries``); ``extra_entries`` are more
    function entries to start from (the bundle's discovered entries).  A hidden entry still
    ends the functions that run into it (as any entry does), but is not lifted: a branch to it
    is a miss at run time."""
    program = analyse(
        image_memory(image),
        image.entry,
        set(image.func_hints) | set(extra_entries),
        eh_frames(image),
        ifunc_slots(image),
        bool(settings.get("recompiler", "noreturn_calls")),
        go_pclntabs(image),
    )
    hidden = hidden_entries(image) - set(extra_entries)  # the bundle's list is the remedy of a miss
    for a in hidden:
        if program.functions.pop(a, None) is not None:
            log.warning("recompiler.hide_entries: the function at %#x is left out of the build", a)
    # entered only by direct calls from lifted code (after hiding: a hidden function's calls
    # are code no body covers); the program entry, IFUNC resolvers and the discovered entries
    # are entered otherwise, and so, in a program of dynamic modules, is any symbol (code
    # loaded at run time binds to exports)
    opened = {image.entry, *image.ifunc_slots.values(), *extra_entries}
    if not image.static:
        opened |= set(image.func_hints)
    # Go: the methods its type data names (analysis.go_args.method_results) are entered through
    # interfaces and reflect too, whose callers read the results their types say; a jump
    # table's cases inside a Go function (data words name them) only by its own dispatch
    mem = image_memory(image)
    methods: dict[int, int] = {}
    labels: set[int] = set()
    for addr, data in go_pclntabs(image):
        named, results = go_args.method_results(mem, addr, data, set(program.functions))
        opened |= named
        methods.update(results)
        labels |= go_args.inner_labels(addr, data, program.functions)
    closed = closed_entries(mem, program.functions, opened)
    program.closed = closed - methods.keys()
    program.go_results = {e: m for e, m in methods.items() if e in closed} | {e: 0 for e in labels}
    if program.abi == "aapcs64" and "args" not in no_opt_names():
        # the argument registers a C++ name's parameters (or an Itanium ABI entry) leave
        # unread are no input (analysis.cxx_args): std::terminate's handler call no longer
        # keeps X1-X7 and V0-V7 live up through every caller of code that may throw
        for e, cap in cxx_args.input_caps(image.symbols, program.functions).items():
            if program.functions[e].input_regs is None:
                program.functions[e].input_regs = cap
    most = int(settings.get("recompiler", "devirt_targets"))
    if program.abi == "aapcs64" and most > 0 and "devirt" not in no_opt_names():
        note_guesses(program, guess_targets(mem, program.functions, program.closed, most))
    return program


def no_opt_names() -> set[str]:
    """``recompiler.no_opt``'s names, where it applies to every function (no ``no_opt_at``)."""
    if str(settings.get("recompiler", "no_opt_at")).strip():
        return set()
    return {w.strip() for w in str(settings.get("recompiler", "no_opt")).split(",") if w.strip()}


def note_guesses(program: Program, found) -> None:
    """The indirect sites' guessed targets (``analysis.call_targets``) into their plans and the
    program's stats (``--stats``)."""
    by_addr = {i.addr: e for e, p in program.functions.items() for i in p.insns if i.name in ("BLR", "BR")}
    names = {}
    for a, g in found.sites.items():
        e = by_addr.get(a)
        if e is None:
            continue
        p = program.functions[e]
        p.call_guesses[a] = g.targets
        names[a] = next(i.name for i in p.insns if i.addr == a)
    s = program.stats
    if s is not None:
        s.devirt_considered = found.considered
        s.devirt_calls = sum(1 for n in names.values() if n == "BLR")
        s.devirt_jumps = sum(1 for n in names.values() if n == "BR")
        s.devirt_targets = sum(len(found.sites[a].targets) for a in names)
        s.devirt_exact = sum(1 for a in names if found.sites[a].exact)
        s.devirt_too_many = found.too_many


def discovered_entries(out: Path) -> set[int]:
    """The entries the run-time lifter noted in the bundle at ``out`` (``recompiler.discovered``)."""
    return discovered.read(out) if out.is_dir() else set()


def note_discovered(program: Program, extra: set[int], out: Path, stats: dict) -> None:
    """Say how many of the bundle's discovered entries this build took (functions it would
    not have found by itself are lifted statically from now on)."""
    taken = len(extra & set(program.functions))
    stats["discovered_entries"] = taken
    if extra:
        log.warning(
            "took %d of %d entries from %s (functions lifted at run time before)", taken, len(extra), out / discovered.FILE
        )


def recompile_elf(path: str | Path, out_dir: str | Path, search_paths: list[str | Path] = ()) -> dict:
    t0 = time.monotonic()
    out = Path(out_dir)
    image = link_program(path, search_paths)  # bad input fails here, before anything is written
    dyn = dynamic.plan(image, path, list(search_paths))  # ld.so's start: interpreter, libraries
    why = launch.not_runnable(image.static, str(path), dyn)
    if why:  # said before the build, not after minutes of it
        log.warning("%s (the bundle is still built, for inspection; it refuses to start)", why)
    out.mkdir(parents=True, exist_ok=True)
    t_link = time.monotonic()
    extra = discovered_entries(out)
    program = analyse_image(image, extra)
    if program.abi != "aapcs64":
        log.warning(
            "%s follows the %s calling convention: calls keep no register (trust_abi, elide_saves off; %s)",
            path,
            program.abi,
            "call sites' lists from liveness with its register sets, recompiler.go_liveness"
            if settings.get("recompiler", "go_liveness")
            else "every register stored and reloaded around every call",
        )
    t_an = time.monotonic()
    # a block profile names the program it was recorded on (recompiler/profile.py): the ELF's bytes
    program.code_id = profile.program_id(Path(path).read_bytes())
    stats = build(program, out)
    note_discovered(program, extra, out, stats)
    if program.stats is not None:  # what analysis found (recompile --stats prints it)
        stats["analysis"] = program.stats.to_json()
    t_build = time.monotonic()
    if dyn is not None:
        dynamic.write_bundle_files(out, dyn, image)
    return write_manifest(
        out,
        bundle_manifest.LINUX,
        image,
        program,
        stats,
        (t0, t_link, t_an, t_build),
        program_path=path,
        program=str(Path(path).resolve()),
        abi=program.abi,  # the run-time lifter lifts with the build's assumptions
        **({"dynamic": dyn} if dyn is not None else {}),
    )


def write_manifest(
    out: Path,
    kind: str,
    image: LinkedImage,
    analysed,
    stats: dict,
    times: tuple[float, float, float, float],
    program_path: str | Path,
    **fields,
) -> dict:
    """Write ``out/manifest.json`` (atomically) for a built bundle; ``times`` are the monotonic
    clock at start, after link, after analyse, after build."""
    t0, t_link, t_an, t_build = times
    manifest = {
        "format": bundle_manifest.FORMAT,
        "kind": kind,
        **fields,
        "image": image.to_json(out / IMAGE_FILE),
        "functions": sorted(analysed.functions),
        "stats": {
            **stats,
            "seconds": {"link": round(t_link - t0, 2), "analyse": round(t_an - t_link, 2), "build": round(t_build - t_an, 2)},
        },
    }
    bundle_manifest.write(out, manifest)
    log.info("recompiled %s: %s", program_path, manifest["stats"])
    return manifest
