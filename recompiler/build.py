"""Build: lift functions into C shards in worker processes, compile the shards in parallel
with an object cache keyed by content hash, and link them with the runtime into ``game.so``.

Shards are stable address buckets (``recompiler.shard_bytes`` of guest code each), so a change
to one function rebuilds one shard; every other object comes from the cache.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from nxrecomp import settings
from nxrecomp.progress import Progress
from recompiler import cc
from recompiler.analyse import Program
from recompiler.lift import lift_function

RUNTIME_DIR = Path(__file__).resolve().parent.parent / "cpu_host" / "runtime"
FLAGS = ["-fPIC", "-fno-strict-aliasing", "-fwrapv", "-mcx16", "-fno-sanitize=all", "-w",
         "-fno-stack-protector", "-fomit-frame-pointer"]
# Generated code (shards, the table) is hidden: calls between lifted functions are direct
# calls, not PLT jumps, and clang may inline within a shard.  The runtime keeps default
# visibility (the runners dlsym it); -Bsymbolic binds the shards' calls into it directly too.
SHARD_FLAGS = [*FLAGS, "-fvisibility=hidden"]
LINK_FLAGS = ["-Wl,-Bsymbolic"]


@dataclass
class ShardResult:
    index: int
    c_path: str
    entries: list[tuple[int, str, int]]   # (addr, C name, kind)
    defined: list[str]


def _shard_of(addr: int, shard_bytes: int) -> int:
    return addr // shard_bytes


def _lift_shard(args: tuple) -> ShardResult:
    index, plans, functions, out_dir, trust_abi, comments, trace = args
    from recompiler.lift.emitter import fname

    bodies, entries, defined, callees = [], [], [], set()
    for plan in plans:
        code, called = lift_function(plan, functions, trust_abi=trust_abi, comments=comments, trace=trace)
        bodies.append(code)
        name = fname(plan.entry)
        defined.append(name)
        entries.append((plan.entry, name, 1))
        entries.extend((r, name, 2) for r in plan.resume_points)
        callees |= called
    protos = "".join(f"void {fname(a)}(NxCpu *s);\n" for a in sorted(callees | {p.entry for p in plans}))
    text = '#include "lifted.h"\n' + protos + "\n".join(bodies)
    path = Path(out_dir) / f"shard_{index:05d}.c"
    _write_if_changed(path, text)
    return ShardResult(index, str(path), entries, defined)


def _write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _obj_cache() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "objects"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _compile_cached(args: tuple) -> tuple[str, bool]:
    """Compile one C file to an object in the cache; returns (object path, was cached)."""
    c_path, flags, cc_id, include_dirs, headers = args
    src = Path(c_path).read_bytes()
    h = hashlib.sha256()
    h.update(src)
    h.update("\0".join(flags).encode())
    h.update(cc_id.encode())
    for hdr in headers:   # the headers it includes are part of the key
        h.update(Path(hdr).read_bytes())
    obj = _obj_cache() / f"{h.hexdigest()}.o"
    if obj.exists():
        return str(obj), True
    fd, tmp = tempfile.mkstemp(suffix=".o", dir=obj.parent)
    os.close(fd)
    try:
        cc.run(["-c", c_path, "-o", tmp, *flags, *[f"-I{d}" for d in include_dirs]], c_path)
        os.replace(tmp, obj)    # atomic: a killed build never leaves a broken cache entry
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(obj), False


def build(program: Program, out_dir: Path, extra_c: list[Path] | None = None) -> dict:
    """Lift and compile ``program`` into ``out_dir/game.so``; returns build statistics."""
    out_dir.mkdir(parents=True, exist_ok=True)
    src_dir = out_dir / "src"
    src_dir.mkdir(exist_ok=True)
    jobs = max(1, int(settings.get("recompiler", "jobs")))
    shard_bytes = int(settings.get("recompiler", "shard_bytes"))
    trust = bool(settings.get("recompiler", "trust_abi"))
    comments = bool(settings.get("recompiler", "comments"))
    trace = bool(settings.get("recompiler", "trace"))
    functions = set(program.functions)
    buckets: dict[int, list] = {}
    for addr in sorted(program.functions):
        buckets.setdefault(_shard_of(addr, shard_bytes), []).append(program.functions[addr])
    work = [(k, plans, functions, str(src_dir), trust, comments, trace) for k, plans in sorted(buckets.items())]
    results: list[ShardResult] = []
    with Progress("lifting functions into C shards", len(work)) as prog, \
            ProcessPoolExecutor(max_workers=jobs) as ex:
        for r in ex.map(_lift_shard, work, chunksize=1):
            results.append(r)
            prog.advance()
    keep = {Path(r.c_path).name for r in results}
    for stale in src_dir.glob("shard_*.c"):
        if stale.name not in keep:
            stale.unlink()
    table = _table_source(results, program.entry)
    table_path = src_dir / "table.c"
    _write_if_changed(table_path, table)
    opt = settings.get("recompiler", "opt")
    flags = [opt, *SHARD_FLAGS]
    cc_id = cc.identity()
    runtime_c = sorted(RUNTIME_DIR.glob("*.c")) + list(extra_c or [])
    units = [(str(table_path), flags), *[(str(p), ["-O2", *FLAGS]) for p in runtime_c],
             *[(r.c_path, flags) for r in results]]
    objs: list[str] = []
    cached = 0
    with Progress("compiling shards", len(units)) as prog, ProcessPoolExecutor(max_workers=jobs) as ex:
        for obj, was in ex.map(_compile_cached, [(u, f, cc_id, [str(RUNTIME_DIR)], _headers_of(u)) for u, f in units]):
            objs.append(obj)
            cached += was
            prog.advance()
    so_tmp = out_dir / "game.so.tmp"
    cc.run(["-shared", "-o", str(so_tmp), *objs, "-lpthread", "-fno-sanitize=all", *LINK_FLAGS], "game.so (link)")
    os.replace(so_tmp, out_dir / "game.so")
    return {"functions": len(program.functions), "shards": len(results), "objects": len(objs),
            "objects_cached": cached, "unresolved_br": len(program.unresolved_br)}


def _headers_of(c_path: str) -> list[str]:
    """Headers whose bytes go into an object's cache key: generated shards include only the
    lifted-code headers; runtime sources may include any runtime header."""
    if Path(c_path).parent == RUNTIME_DIR:
        return [str(p) for p in sorted(RUNTIME_DIR.glob("*.h"))]
    return [str(p) for p in _included(RUNTIME_DIR / "lifted.h")]


def _included(header: Path, seen: set[Path] | None = None) -> list[Path]:
    """``header`` and the runtime headers it includes (``#include "x.h"``), recursively."""
    seen = set() if seen is None else seen
    if header in seen or not header.exists():
        return []
    seen.add(header)
    out = [header]
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', header.read_text(), re.M):
        out += _included(RUNTIME_DIR / m.group(1), seen)
    return out


def _table_source(results: list[ShardResult], entry: int) -> str:
    rows: dict[int, tuple[str, int]] = {}
    for r in results:
        for addr, name, kind in r.entries:
            old = rows.get(addr)
            if old is None or (kind == 1 and old[1] != 1):
                rows[addr] = (name, kind)
    names = sorted({n for n, _k in rows.values()})
    lines = ['#include "nxrt.h"']
    lines += [f"void {n}(NxCpu *s);" for n in names]
    lines.append("const NxEntry nx_entries[] = {")
    lines += [f"  {{{a:#x}ull, {n}, {k}, 0}}," for a, (n, k) in sorted(rows.items())]
    lines.append("};")
    lines.append(f"const uint64_t nx_entry_count = {len(rows)};")
    lines.append(f"const uint64_t nx_program_entry = {entry:#x}ull;")
    return "\n".join(lines) + "\n"
