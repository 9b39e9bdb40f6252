"""Code a Horizon program maps at run time, lifted when it is first branched to.

A homebrew loader (nx-hbloader, inside every NRO forwarder) reads an NRO into its heap, maps it
as code with ``svcMapProcessCodeMemory`` at an address it picks at random, and jumps to it: code
no build saw.  The kernel (``cpu_host/runtime/horizon/horizon_kernel.c``) keeps the list of such
mappings; a branch into one misses the dispatch tables, and the runtime's lift on miss
(``cpu_host/runtime/core/lift_miss.c``) copies the mapping into a file and starts
``python -m cpu_host.lift_on_miss BUNDLE ADDR --loaded BASE FILE PIECES`` (PIECES: the
mapping's ``offset:size:perm`` words, perm as QueryMemory's bits).  This module answers it:

- **A whole module** when the mapping is an NRO (``NRO0`` at +0x10, switchbrew's NRO page) and
  the miss is its first: the copy is read as the NRO it was loaded from (the loader copies the
  file's bytes; the first branch is its entry, before its crt0 relocates anything), laid out at
  the mapping's address (``recompiler.horizon.link_exefs(base=...)``) and analysed and built as
  a build would (seeds: entry, ``.eh_frame`` FDEs, what its relocations will write), into one
  shared object exporting every function as run-time lift rows (``build(loaded=True)``).
- **One function** otherwise (a later miss into a module built before, or code that is no NRO):
  the function at ADDR in the executable pieces, as ``recompiler.runtime_lift`` lifts one.

Objects are cached under ``cache_dir/loaded_code/KEY`` (KEY: the mapping's address and the bytes
of its code and read-only pieces), so a loader that maps the same NRO at the same address again
(or a rerun with the same random seed) loads the object without lifting.  Nothing is noted in
the bundle's discovered entries: the address is not in its image.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError

log = logging.getLogger("cpu_host.horizon.loaded_code")

PERM_R, PERM_W, PERM_X = 1, 2, 4
NRO_MAGIC_AT = 0x10


@dataclass(frozen=True)
class Piece:
    """A part of the mapping in one state: offset from its base, size, QueryMemory permission."""

    offset: int
    size: int
    perm: int


@dataclass
class LoadedLift:
    """What the helper reports: the object, and the figures of the notice."""

    so_path: Path | None  # None: ADDR is not in an executable piece
    insns: int = 0
    guest_bytes: int = 0
    compile_s: float = 0.0
    cached: bool = False
    functions: int = 0


def parse_pieces(text: str) -> list[Piece]:
    """``offset:size:perm`` words (hex, hex, decimal) joined by ','."""
    out = []
    for word in filter(None, text.split(",")):
        try:
            off, size, perm = word.split(":")
            out.append(Piece(int(off, 16), int(size, 16), int(perm)))
        except ValueError:
            raise NxError(f"{word!r} is no offset:size:perm word", field="--loaded PIECES") from None
    return out


def _memory(base: int, data: bytes, pieces: list[Piece]):
    from recompiler.analyse import Memory

    segs = [(base + p.offset, p.size, data[p.offset : p.offset + p.size], bool(p.perm & PERM_X)) for p in pieces]
    return Memory(segs, [(base + p.offset, p.size) for p in pieces if not p.perm & PERM_W])


def _key(base: int, data: bytes, pieces: list[Piece]) -> str:
    h = hashlib.sha256(f"{base:#x}".encode())
    for p in pieces:
        if not p.perm & PERM_W:  # code and read-only data: what its crt0 does not rewrite
            h.update(f"{p.offset:#x}:{p.size:#x}:{p.perm}".encode())
            h.update(data[p.offset : p.offset + p.size])
    return h.hexdigest()[:32]


def _cache(key: str) -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "loaded_code" / key
    p.mkdir(parents=True, exist_ok=True)
    return p


def _prune(keep: Path) -> None:
    """Whole entries of ``loaded_code``, least recently used first, until it holds at most
    ``recompiler.cache_mb``: a loader that picks a new random address every run (no
    cpu_host.deterministic) leaves a new entry each time.  An entry being built (no
    ``functions.json`` yet) and ``keep`` stay."""
    root = keep.parent
    entries = []
    for d in root.iterdir():
        meta = d / "functions.json"
        if d == keep or not meta.exists():
            continue
        try:
            size = sum(f.stat().st_size for f in d.iterdir() if f.is_file())
            entries.append((meta.stat().st_mtime, size, d))
        except OSError:
            continue
    total = sum(e[1] for e in entries) + sum(f.stat().st_size for f in keep.iterdir() if f.is_file())
    cap = int(settings.get("recompiler", "cache_mb")) << 20
    for _t, size, d in sorted(entries, key=lambda e: e[0]):
        if total <= cap:
            break
        shutil.rmtree(d, ignore_errors=True)
        total -= size


def _is_nro(data: bytes) -> bool:
    return len(data) >= 0x80 and data[NRO_MAGIC_AT : NRO_MAGIC_AT + 4] == b"NRO0"


def _build_module(base: int, addr: int, data: bytes, out: Path) -> LoadedLift:
    """The NRO in ``data`` laid out at ``base``, analysed and built into ``out/loaded.so``."""
    from recompiler.build import build
    from recompiler.formats.exefs import ExeFs
    from recompiler.formats.npdm import parse_npdm
    from recompiler.formats.nro import parse_nro
    from recompiler.formats.pack_npdm import pack_npdm
    from recompiler.formats.program import DEFAULT_NPDM
    from recompiler.horizon import link_exefs
    from recompiler.pipeline import analyse_image

    t0 = time.monotonic()
    where = f"<code loaded at {base:#x}>"
    nro = parse_nro(data, where)
    npdm = parse_npdm(pack_npdm(DEFAULT_NPDM), f"{where}:<default main.npdm>")
    image, _host = link_exefs(ExeFs(where, npdm, [("main", nro)], []), base=base)  # type: ignore[list-item]
    program = analyse_image(image, {addr})
    build(program, out, loaded=True)
    shutil.rmtree(out / "src", ignore_errors=True)  # its objects are in the build's cache; the C is not needed
    secs = time.monotonic() - t0
    insns = sum(len(p.insns) for p in program.functions.values())
    text = nro.segments[0].size
    (out / "functions.json").write_text(
        json.dumps({"base": base, "functions": sorted(program.functions), "insns": insns, "text_bytes": text})
    )
    _prune(out)
    return LoadedLift(out / "loaded.so", insns, text, secs, False, len(program.functions))


def _lift_one(base: int, addr: int, data: bytes, pieces: list[Piece], known: set[int]) -> LoadedLift:
    from recompiler.analyse import Analyser
    from recompiler.build import SLP_MAX_INSNS
    from recompiler.runtime_lift import c_source, compile_object

    plan = Analyser(_memory(base, data, pieces), known | {addr}).function(addr)
    if not plan.insns:
        return LoadedLift(None)
    text = c_source(
        plan,
        bool(settings.get("recompiler", "trust_abi")),
        bool(settings.get("recompiler", "elide_saves")),
        bool(settings.get("recompiler", "comments")),
        bool(settings.get("recompiler", "trace")),
    )
    so, secs, cached = compile_object(text, addr, slp=len(plan.insns) <= SLP_MAX_INSNS)
    span = plan.insns[-1].addr + 4 - plan.insns[0].addr
    return LoadedLift(so, len(plan.insns), span, secs, cached, 1)


def lift_loaded(addr: int, base: int, snapshot: Path, pieces_text: str) -> LoadedLift:
    """Lift what a branch to ``addr`` needs from the copy of the mapping at ``base``."""
    pieces = parse_pieces(pieces_text)
    data = snapshot.read_bytes()
    off = addr - base
    if addr % 4 or not any(p.offset <= off < p.offset + p.size and p.perm & PERM_X for p in pieces):
        return LoadedLift(None)
    out = _cache(_key(base, data, pieces))
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two processes loading the same code build it once
        meta = out / "functions.json"
        if not meta.exists() and _is_nro(data):
            return _build_module(base, addr, data, out)
        known = set(json.loads(meta.read_text())["functions"]) if meta.exists() else set()
        if addr in known:
            meta.touch()  # recently used (_prune)
            m = json.loads(meta.read_text())
            return LoadedLift(out / "loaded.so", m["insns"], m["text_bytes"], 0.0, True, len(known))
        return _lift_one(base, addr, data, pieces, known)
