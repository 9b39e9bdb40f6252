"""Build: lift functions into C shards in worker processes, compile the shards in parallel
with an object cache keyed by content hash, and link them with the runtime into ``game.so``.

Shards are stable address buckets (``recompiler.shard_bytes`` of guest code each), split
further so that no shard holds more than ``recompiler.shard_insns`` instructions and every big
function (over a quarter of that) is a shard of its own: a change to one function rebuilds one
shard, and a small function never shares a shard, and its compile time, with a huge one (clang
is superlinear in a function's size).  Every other object comes from the cache, and every
other shard's C from the lift cache (``cache_dir/lifted``, keyed by the shard's functions and
the recompiler's own code).

Lifting and compiling share one pool of ``recompiler.jobs`` workers.  Compiling starts once
every shard is lifted: the call sites' store and reload lists come from whole-program register
summaries (``recompiler/lift/interproc.py``, ~2 s for busybox in this process), so each shard's C is
written only then.  The compile estimated longest goes first, so no core waits on one long
shard at the end.  Each unit's compiler CPU time goes to the log and the manifest's stats
(``cpu_seconds``, ``slowest``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import logging
import os
import pickle
import re
import resource
import tempfile
import time
import zlib
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError
from nxrecomp.common.progress import Progress
from recompiler import cc, inline_leaves, profile
from recompiler.lift import call_abi, interproc
from recompiler.analyse import Program, abi_settings
from recompiler.lift import lift_function
from recompiler.lift.edges import SHARED_TABLE
from recompiler.lift.emitter import SIG, no_opt
from recompiler.lift.template import CText

log = logging.getLogger("recompiler.build")

# The C runtime linked into game.so: ``core/`` (the ABI header nxrt.h and the lifted-code
# headers, dispatch, lift on miss) and one personality's folder, so a Linux program carries no
# Horizon kernel and a game no Linux system calls.
RUNTIME_ROOT = Path(__file__).resolve().parent.parent / "cpu_host" / "runtime"
RUNTIME_DIR = RUNTIME_ROOT / "core"  # the shared headers (lifted code includes lifted.h from here)
PERSONALITIES = ("linux", "horizon")
# -g0: zig's clang emits DWARF unless told not to; nothing reads it (crash reports name guest
# addresses by the guest's own symbols), and it is ~20 % of a shard's compile time and ~80 %
# of its object's bytes.
FLAGS = [
    "-fPIC",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-mcx16",
    "-fno-sanitize=all",
    "-w",
    "-fno-stack-protector",
    "-fomit-frame-pointer",
    "-g0",
]
# A computed goto's dispatch is repeated at each BR site of an interpreter's handlers
# (lift/emitter.py shared_table), but clang first merges every ``goto *`` into one indirectbr
# block and its tail duplicator copies it back into the predecessors only where the block has
# at most 16 predecessors or 16 successors (an LLVM limit on compile time): Lua's 83 handlers
# kept one shared indirect jump, mispredicted far more often than native's per-handler ones.
# The limits only concern blocks with both many predecessors and many successors.
TAIL_DUP_FLAGS = ["-mllvm", "-tail-dup-pred-size=512", "-mllvm", "-tail-dup-succ-size=512"]
# Generated code (shards, the table) is hidden: calls between lifted functions are direct
# calls, not PLT jumps, and clang may inline within a shard.  The runtime keeps default
# visibility (the runners dlsym it); -Bsymbolic binds the shards' calls into it directly too.
SHARD_FLAGS = [*FLAGS, "-fvisibility=hidden", *TAIL_DUP_FLAGS]
# Shards of a game.so (not those of code lifted at run time, loaded.so): the runtime is in the
# same object, so lifted.h reads its flags by hidden names (one rip-relative operand each).
GAME_SO_FLAG = "-DNX_GAME_SO"
# ... but not in a shard of a function over SLP_MAX_INSNS instructions (QuickJS's JS_CallInternal,
# 10,000, with 430 dispatch sites; SQLite's sqlite3VdbeExec): copying the dispatch into every
# handler there made each of them reconcile the register allocation of every other at its
# indirect jump (stack-to-stack copies at each handler's end), 10-25 % slower on QuickJS's
# loops (bench/corpus.py); Lua's 3,000-instruction luaV_execute kept the same speed either way.
# A function of more instructions than this is compiled without the SLP vectorizer: its time
# grows faster than the function (busybox's two ~8,000-instruction functions: 59 and 43 s of
# CPU with it, 13 and 12 s without, half the cold build), while in ordinary functions it is
# what turns the NEON handlers' unrolled lane loops back into SSE (zstd decompress 0.49x ->
# 0.81x native with it).
SLP_MAX_INSNS = 4096
# A shard holding an interpreter's dispatch loop (``_dispatch_loop``): clang's greedy register
# allocator gives up evicting from a register once 10 live ranges interfere with the one it
# places there (an LLVM bound on compile time, -regalloc-eviction-max-interference-cutoff), and
# in a dispatch loop of hundreds of handlers nearly every register has more, so a value it could
# have moved out of a cold handler's way is split and spilled instead.  Unbounded: QuickJS's
# JS_CallInternal 934.7 -> 923.1 M instructions (host-stack traffic 102.5 -> 98.1 M), its shard's
# compile time unchanged; Lua's luaV_execute and zstd's switch shards compile to the same code,
# SQLite's workload takes the same CPU time; ordinary shards gain nothing (docs/PERFORMANCE.md).
DISPATCH_RA_FLAGS = ["-mllvm", "-regalloc-eviction-max-interference-cutoff=100000"]
# A shard whose estimated -O2 compile time (cc.function_costs) is over ``recompiler.cc_budget_s``
# is compiled with these instead of the optimisation level.  libpcre2-8's match function, lifted
# with a 12,442-entry jump table (every instruction a block, 12,768 labels in each of F_ and R_;
# estimated 401 s): -O2 spent 294 s in early tail duplication alone and was unfinished after
# PHI elimination and minutes of register coalescing; -O1 without early tail duplication ran
# 9.4 min of CPU unfinished, -O2 with no IR passes (allocas kept) 34 s unfinished; -O0: 1.4 s.
# -O0 code is slow (every value in its own stack slot: a 113 KB frame for that function), so the
# budget sits far above every corpus program's costliest shard (14 s estimated, 11.8 s measured:
# QuickJS's JS_CallInternal, SQLite's sqlite3VdbeExec, Lua's luaV_execute keep their flags).
CHEAP_FLAGS = ["-O0"]
LINK_FLAGS = ["-Wl,-Bsymbolic"]
DEBUG_FLAGS = ["-gdwarf-4", "-g2"]  # recompiler.debug_info
# A shard compiled with a block profile (recompiler.profile): clang's sample profile loader reads
# the C lines of the code from its line tables (which leave the instructions as they are).
PROFILE_LINE_FLAGS = ["-gline-tables-only"]


@dataclass
class ShardResult:
    index: tuple[int, int]  # (address bucket, part)
    c_path: str
    entries: list[tuple[int, str, int]]  # (addr, C name, kind)
    defined: list[str]
    cpu_s: float = 0.0  # Python CPU time spent lifting it
    cost: float = 0.0  # estimated compile time (compile_cost)
    cached: bool = False  # its C came from the lift cache
    text: CText | str = ""  # its C, call sites' lists still slots (lift/template.py)
    facts: list = field(default_factory=list)  # interproc.FnLive of each function (deferred lists)


@dataclass
class Compiled:
    """One compile unit's object: from the cache, or built now in ``cpu_s`` compiler CPU time."""

    c_path: str
    obj: str
    cached: bool
    cpu_s: float


def _shard_of(addr: int, shard_bytes: int) -> int:
    return addr // shard_bytes


def split_bucket(plans: list, max_insns: int) -> list[list]:
    """``plans`` (one address bucket, in address order) in consecutive parts of at most
    ``max_insns`` instructions (a longer function alone), every function over a quarter of
    ``max_insns`` in a part of its own.  Parts depend only on this bucket's functions."""
    parts: list[list] = []
    cur: list = []
    n, cur_big = 0, False
    big = max(1, max_insns // 4)
    for p in plans:
        k = len(p.insns)
        if cur and (k > big or cur_big or n + k > max_insns):
            parts.append(cur)
            cur, n = [], 0
        cur.append(p)
        n, cur_big = n + k, k > big
    if cur:
        parts.append(cur)
    return parts


def _dispatch_loop(plan) -> bool:
    """An interpreter-like function: a computed goto of many targets (a BR with a jump table
    of at least ``SHARED_TABLE`` labels).  The SLP vectorizer packs pairs of its registers into
    vectors that travel around the dispatch loop (two packs and extracts a handler), and the
    dispatch block grows past what clang's tail duplicator copies into each handler
    (lift/emitter.py shared_table): Lua's luaV_execute kept 2 indirect jumps instead of 88."""
    return any(len(set(t)) >= SHARED_TABLE for t in plan.jump_tables.values())


def compile_cost(function_sizes: list[int]) -> float:
    """Estimated compile time of a shard (in units of one byte of plain C) from the sizes of
    its functions' C: clang's optimiser is superlinear in a function's size, so one 400 KB
    function costs more than a whole shard of small ones.  Fitted to busybox's 52 shards
    (bytes + sum of squares / 30000: correlation 0.99 with the measured CPU time; bytes
    alone: 0.50)."""
    return float(sum(n + n * n / 30000 for n in function_sizes))


def lifter_fingerprint(
    trust_abi: bool, comments: bool, trace: bool, functions: set[int], elide_saves: bool = True, abi: str = "aapcs64"
) -> str:
    """What a shard's C depends on besides its own functions: the recompiler's code (every
    module of the package, so no dependency of the lifter is missed), the lifting settings and
    the set of function entries (a call to an entry is a direct call)."""
    h = hashlib.sha256(
        repr(
            (
                trust_abi,
                comments,
                trace,
                elide_saves,
                abi,
                bool(settings.get("recompiler", "signal_polls")),
                settings.get("recompiler", "loop_edges"),
                bool(settings.get("recompiler", "go_liveness")),
                settings.get("recompiler", "no_opt"),
                settings.get("recompiler", "no_opt_at"),
                bool(settings.get("recompiler", "entry_log")),
                # (signature.SIG; auto's lifted C is preserve_none's, call_abi.apply comes after)
                settings.get("recompiler", "call_abi").replace("auto", "preserve_none"),
            )
        ).encode()
    )
    h.update(_PACKAGE_SOURCE)
    h.update(b"".join(a.to_bytes(8, "little") for a in sorted(functions)))
    return h.hexdigest()


def _package_source() -> bytes:
    pkg = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(pkg.rglob("*.py")):
        h.update(str(p.relative_to(pkg)).encode() + b"\0" + p.read_bytes())
    return h.digest()


# Read when this module is imported, with the lifter it imports (the workers fork from this
# process and run that code): a source edited while a build runs then cannot put the old
# lifter's output under the new source's key.
_PACKAGE_SOURCE = _package_source()


def _canon(v):
    """A value with a stable repr (sets and dicts sorted)."""
    if isinstance(v, dict):
        return sorted((k, _canon(x)) for k, x in v.items())
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    return v


def _lift_key(fingerprint: str, plans: list) -> str:
    """Key of a shard's lifted C in the lift cache: the fingerprint and every field of its
    plans (instructions as address and word; not ``resume_points``/``resume_twin``, which lifting
    fills)."""
    h = hashlib.sha256(fingerprint.encode())
    for p in plans:
        for f in dataclasses.fields(p):
            v = getattr(p, f.name)
            if f.name == "insns":
                h.update(b"".join(i.addr.to_bytes(8, "little") + i.word.to_bytes(4, "little") for i in v))
            elif f.name not in ("resume_points", "resume_twin"):
                h.update(f"{f.name}={_canon(v)!r};".encode())
    return h.hexdigest()


def _lift_cache() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "lifted"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _lift_paths(args: tuple) -> tuple[Path, Path]:
    """A lift job's C file (``out_dir/shard_B_P.c``) and its entry in the lift cache."""
    index, plans, _functions, out_dir, _trust, _elide, _comments, _trace, fingerprint, _abi = args
    return (Path(out_dir) / f"shard_{index[0]:05d}_{index[1]}.c", _lift_cache() / f"{_lift_key(fingerprint, plans)}.pickle.z")


def _from_lift_cache(args: tuple) -> ShardResult | None:
    """A shard's lifted C (call sites' lists still slots) and facts from the lift cache,
    or None.  Called in the main process: a hit needs no worker, and its plans are never
    pickled."""
    path, cached = _lift_paths(args)
    if not cached.exists():
        return None
    _touch(cached)
    try:
        d = pickle.loads(zlib.decompress(cached.read_bytes()))
        facts = d["facts"]
        result = ShardResult(args[0], str(path), d["entries"], d["defined"], 0.0, d["cost"], True, d["c"], facts)
    except Exception as e:  # unreadable: lift it again (and overwrite the entry)
        log.warning("lift cache entry %s unreadable (%s); lifting the shard again", cached.name, e)
        return None
    # An entry written by a build whose workers ran other code than its key says (the
    # recompiler's source edited while that build ran) holds records of another shape.
    if any(not isinstance(f, interproc.FnLive) or set(vars(f)) != _FNLIVE_FIELDS for f in facts):
        log.warning("lift cache entry %s is of another lifter; lifting the shard again", cached.name)
        return None
    return result


_FNLIVE_FIELDS = {f.name for f in dataclasses.fields(interproc.FnLive)}


def _lift_shard(args: tuple) -> ShardResult:
    """Lift one shard (its C with slots, its functions' facts) and store that in the
    lift cache (a rebuild after one function changed then lifts one shard, not all)."""
    index, plans, functions, out_dir, trust_abi, elide_saves, comments, trace, fingerprint, abi = args
    t0 = time.process_time()
    path, cached = _lift_paths(args)
    r = _lift_fresh(index, path, plans, functions, trust_abi, comments, trace, elide_saves, abi)
    tmp = cached.with_name(f"{cached.stem}.{os.getpid()}.tmp")
    # zlib: lifted C compresses ~8x (a busybox build is 35 MB of it).  pickle: the entry is
    # this machine's own cache, written only by this code
    data = pickle.dumps(
        {"c": r.text, "facts": r.facts, "entries": r.entries, "defined": r.defined, "cost": r.cost},
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    tmp.write_bytes(zlib.compress(data, 1))
    os.replace(tmp, cached)  # atomic: a killed build never leaves a broken entry
    r.cpu_s = time.process_time() - t0
    return r


def _lift_fresh(
    index: tuple[int, int],
    path: Path,
    plans: list,
    functions: set[int],
    trust_abi: bool,
    comments: bool,
    trace: bool,
    elide_saves: bool = True,
    abi: str = "aapcs64",
) -> ShardResult:
    from recompiler.lift.emitter import fname, rname

    bodies, entries, defined, callees, facts = [], [], [], set(), []
    for plan in plans:
        code, called, live = lift_function(
            plan, functions, trust_abi=trust_abi, comments=comments, trace=trace, defer=True, elide_saves=elide_saves, abi=abi
        )
        bodies.append(code)
        if live is not None:
            facts.append(live)
        name = fname(plan.entry)
        defined.append(name)
        entries.append((plan.entry, name, 1))
        resume_fn = rname(plan.entry) if plan.resume_twin else name
        entries.extend((r, resume_fn, 2) for r in plan.resume_points)
        callees |= called
    protos = "".join(f"NxRet {fname(a)}{SIG};\n" for a in sorted(callees | {p.entry for p in plans}))
    text = CText.join(['#include "lifted.h"\n' + protos, CText.join(bodies, "\n")])
    return ShardResult(index, str(path), entries, defined, 0.0, compile_cost([len(b) for b in bodies]), text=text, facts=facts)


def _touch(path: Path) -> None:
    """Mark a cache entry as used now (``prune`` keeps the most recently used)."""
    try:
        os.utime(path)
    except OSError:
        pass  # removed meanwhile by another build's prune: this build has already read it


def prune(cache: Path, max_bytes: int) -> int:
    """Remove the least recently used entries of ``cache`` (by modification time, which a hit
    refreshes) until it holds at most ``max_bytes``; returns how many were removed.  Each entry
    was written whole (temp file + rename), so removing one never leaves a half entry; a
    temp file of a build still running is not an entry and is left alone."""
    entries = []
    for p in cache.iterdir():
        if ".tmp" in p.name or not p.is_file():
            continue
        try:
            st = p.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, p))
    total = sum(e[1] for e in entries)
    removed = 0
    for _mtime, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        try:
            p.unlink()
        except OSError:
            continue
        total -= size
        removed += 1
    return removed


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


def _compile_cached(args: tuple) -> Compiled:
    """Compile one C file to an object in the cache (or take it from there)."""
    c_path, flags, cc_id, include_dirs, headers = args
    src = Path(c_path).read_bytes()
    h = hashlib.sha256()
    h.update(src)
    h.update("\0".join(flags).encode())
    h.update(cc_id.encode())
    for hdr in headers:  # the headers it includes are part of the key
        h.update(Path(hdr).read_bytes())
    obj = _obj_cache() / f"{h.hexdigest()}.o"
    if obj.exists():
        _touch(obj)
        return Compiled(c_path, str(obj), True, 0.0)
    fd, tmp = tempfile.mkstemp(suffix=".o.tmp", dir=obj.parent)  # ".tmp": prune passes it by
    os.close(fd)
    # this worker runs one compiler at a time, so its children's CPU time is this unit's
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        cc.run(["-c", c_path, "-o", tmp, *flags, *[f"-I{d}" for d in include_dirs]], c_path)
        os.replace(tmp, obj)  # atomic: a killed build never leaves a broken cache entry
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Compiled(c_path, str(obj), False, cpu)


@dataclass(order=True)
class _Unit:
    """A compile unit waiting for a worker; the costliest goes first."""

    neg_cost: float
    c_path: str = field(compare=True)
    flags: list[str] = field(compare=False, default_factory=list)


def _schedule(
    ex: ProcessPoolExecutor, jobs: int, lifts: list[tuple], units: list[_Unit], cc_id: str, finish_lift, prog: Progress
) -> list[Compiled]:
    """Run ``lifts`` (in order) and compile ``units`` plus every unit ``finish_lift`` returns
    for a finished lift (a list of units; called once more with None after the last lift),
    keeping at most ``jobs`` tasks in flight.  Lifts go first (a lift is short, and once all
    are done every compile's cost is known), then the costliest ready compile: longest first is
    what keeps the last minutes from running one compile on one core (``compile_cost``)."""
    ready = list(units) + ([] if lifts else finish_lift(None))
    heapq.heapify(ready)
    lifts = list(reversed(lifts))  # pop() takes the next in order
    running: dict[Future, str] = {}
    done: list[Compiled] = []
    lifting = 0

    def lifted(r: ShardResult) -> None:
        prog.advance()
        new = finish_lift(r)
        if not lifts and not lifting:
            new += finish_lift(None)
        for u in new:
            heapq.heappush(ready, u)

    while lifts or ready or running:
        while len(running) < jobs and (ready or lifts):
            if lifts:
                args = lifts.pop()
                hit = _from_lift_cache(args)
                if hit is not None:
                    lifted(hit)
                    continue
                running[ex.submit(_lift_shard, args)] = "lift"
                lifting += 1
            else:
                u = heapq.heappop(ready)
                args = (u.c_path, u.flags, cc_id, [str(d) for d in _include_dirs(u.c_path)], _headers_of(u.c_path))
                running[ex.submit(_compile_cached, args)] = "compile"
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for f in finished:
            kind = running.pop(f)
            r = f.result()  # a worker's NxError (compiler failure) ends the build here
            if kind == "lift":
                lifting -= 1
                lifted(r)
            else:
                prog.advance()
                done.append(r)
                if not r.cached:
                    log.debug("compiled %s in %.1f s CPU", Path(r.c_path).name, r.cpu_s)
    return done


def runtime_sources(personality: str) -> list[Path]:
    """The runtime's C files a game.so of ``personality`` (``linux``, ``horizon``) links: the
    core's, then the personality's.  A C file left in the runtime's top folder (a branch from
    before the split) is an error that says where it goes, not a silent omission."""
    if personality not in PERSONALITIES:
        raise NxError(f"unknown personality {personality!r} (one of {', '.join(PERSONALITIES)})")
    stray = sorted(RUNTIME_ROOT.glob("*.[ch]"))
    if stray:
        raise NxError(
            "runtime sources live in core/ (both personalities), linux/ or horizon/ of cpu_host/runtime", path=str(stray[0])
        )
    return [p for d in (RUNTIME_DIR, RUNTIME_ROOT / personality) for p in sorted(d.glob("*.c"))]


def build(
    program: Program, out_dir: Path, extra_c: list[Path] | None = None, personality: str = "linux", loaded: bool = False
) -> dict:
    """Lift and compile ``program`` into ``out_dir/game.so`` with the runtime of ``personality``;
    returns build statistics.  ``loaded``: code a program maps at run time
    (``cpu_host/horizon/loaded_code.py``): no runtime in it, its rows exported as a run-time lift's
    (``nx_lift_entries``), into ``out_dir/loaded.so``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    src_dir = out_dir / "src"
    src_dir.mkdir(exist_ok=True)
    jobs = max(1, int(settings.get("recompiler", "jobs")))
    shard_bytes = int(settings.get("recompiler", "shard_bytes"))
    abi = getattr(program, "abi", "aapcs64")
    trust, elide = abi_settings(
        abi,
        bool(settings.get("recompiler", "trust_abi")),
        bool(settings.get("recompiler", "elide_saves")),
    )
    comments = bool(settings.get("recompiler", "comments"))
    trace = bool(settings.get("recompiler", "trace"))
    functions = set(program.functions)
    buckets: dict[int, list] = {}
    for addr in sorted(program.functions):
        buckets.setdefault(_shard_of(addr, shard_bytes), []).append(program.functions[addr])
    max_insns = int(settings.get("recompiler", "shard_insns"))
    fingerprint = lifter_fingerprint(trust, comments, trace, functions, elide, abi)
    lifts = [
        ((k, i), part, functions, str(src_dir), trust, elide, comments, trace, fingerprint, abi)
        for k, plans in sorted(buckets.items())
        for i, part in enumerate(split_bucket(plans, max_insns))
    ]
    arch = cc.arch_flags()
    flags = [settings.get("recompiler", "opt"), *SHARD_FLAGS, *arch]
    if not loaded:  # linked with the runtime: hidden names of its data (lifted.h, NX_PREEMPT_FLAG)
        flags.append(GAME_SO_FLAG)
    if settings.get("recompiler", "debug_info"):
        # after SHARD_FLAGS' -g0, which it overrides (with a plain -g, addr2line found no
        # line numbers in what zig's clang wrote here; DWARF 4 every tool reads)
        flags += DEBUG_FLAGS
    # (code a program maps at run time, loaded.so: not counted; its runtime is game.so's)
    prof_gen = bool(settings.get("recompiler", "profile_gen")) and not loaded
    code_id = getattr(program, "code_id", "")
    prof_path = settings.get("recompiler", "profile")
    prof_blocks = profile.read(prof_path, program=code_id or None) if prof_path else None
    prof_stats = {"functions": 0, "blocks": 0, "shards": 0, "counters": 0}
    giants = {lift[0] for lift in lifts if any(len(p.insns) > SLP_MAX_INSNS or _dispatch_loop(p) for p in lift[1])}
    dispatch = {lift[0] for lift in lifts if any(_dispatch_loop(p) for p in lift[1])}
    runtime_c = ([] if loaded else runtime_sources(personality)) + list(extra_c or [])
    units = [_Unit(-compile_cost([p.stat().st_size]), str(p), ["-O2", *FLAGS, *arch]) for p in runtime_c]
    results: list[ShardResult] = []
    place_s = 0.0
    narrowed = framed = 0
    cheap: list[list] = []  # shards over the compile budget: [C file, estimated s, costliest function]

    def finish_lift(r: ShardResult | None) -> list[_Unit]:
        nonlocal place_s, narrowed, framed
        if r is not None:
            results.append(r)
            return []
        # every shard is lifted: each function's register summary from the whole program's
        # (interproc), then each shard's call sites' lists, the entry table, and no stale shard
        # left in src/
        results.sort(key=lambda x: x.index)
        t = time.process_time()
        fns = [f for x in results for f in x.facts]
        summ = interproc.summarize(fns)
        if not loaded and not trace:  # (loaded code: its callers are the program's, unseen here)
            closed = frozenset(e for e in program.closed if "results" not in no_opt(e))
            narrowed = interproc.result_uses(fns, summ, closed)
            if abi == "go":  # (Go's returns hand back what FnLive.hands says, not ret_uses)
                narrowed = interproc.go_result_uses(fns, summ, closed, getattr(program, "go_results", {}))
                interproc.go_hands(fns, summ)
            if "frames" not in no_opt(-1):  # (-1: only where no_opt_at names no function)
                framed = interproc.narrow_frames(fns, summ, closed)
        shards = [inline_leaves.Shard(interproc.place(x.text, x.facts, summ, results_only=True), x.facts) for x in results]
        if trace or "inline" in no_opt(-1):  # (-1: only where no_opt_at names no function)
            texts = [sh.text for sh in shards]
        else:
            texts = inline_leaves.single_callers(shards, inline_leaves.copy_into_callers(shards))
        if settings.get("recompiler", "call_abi") == "auto":  # (one set for every shard: lift/call_abi.py)
            sysv = call_abi.sysv_set(program.functions, _dispatch_loop)
            texts = [call_abi.apply(str(t), sysv) for t in texts]
        if prof_gen:  # (the training build: block counters; its C is not the lift cache's)
            counted = [profile.instrument(t, f"{x.index[0]}_{x.index[1]}", code_id) for x, t in zip(results, texts)]
            texts = [t for t, _ in counted]
            prof_stats["counters"] = sum(n for _, n in counted)
        for x, text in zip(results, texts):
            _write_if_changed(Path(x.c_path), text)
        place_s = time.process_time() - t
        huge = {lift[0] for lift in lifts if any(len(p.insns) > SLP_MAX_INSNS for p in lift[1])}
        k = flags.index(TAIL_DUP_FLAGS[1])  # (the same flags, the tail duplication limits left out)
        huge_flags = [*flags[: k - 1], *flags[k - 1 + len(TAIL_DUP_FLAGS) :]]
        budget = float(settings.get("recompiler", "cc_budget_s"))
        units = []
        for x, text in zip(results, texts):
            unit_flags = [
                *(huge_flags if x.index in huge else flags),
                *(["-fno-slp-vectorize"] if x.index in giants else []),
                *(DISPATCH_RA_FLAGS if x.index in dispatch else []),
            ]
            if prof_blocks is not None:
                sample, nf, nb = profile.sample_profile(str(text), prof_blocks)
                if sample:  # (a shard none of whose blocks ran: its flags, and object, unchanged)
                    pf = profile.cached_sample_profile(sample, settings.get("nxrecomp", "cache_dir"))
                    line_tables = [] if settings.get("recompiler", "debug_info") else PROFILE_LINE_FLAGS
                    unit_flags = [*unit_flags, *line_tables, f"-fprofile-sample-use={pf}"]
                    prof_stats["functions"] += nf
                    prof_stats["blocks"] += nb
                    prof_stats["shards"] += 1
            if budget > 0:
                costs = cc.function_costs(str(text))
                estimate = sum(f.seconds for f in costs)
                if estimate > budget:
                    unit_flags = cheap_flags(unit_flags)
                    top = max(costs, key=lambda f: f.seconds)
                    log.warning(
                        "%s: estimated %.0f s of compile CPU at %s (over recompiler.cc_budget_s = %g; costliest %s, "
                        "%d bytes of C, %d labels): compiled with %s instead",
                        Path(x.c_path).name,
                        estimate,
                        flags[0],
                        budget,
                        top.name,
                        top.nbytes,
                        top.labels,
                        " ".join(CHEAP_FLAGS),
                    )
                    cheap.append([Path(x.c_path).name, round(estimate), top.name])
            units.append(_Unit(-x.cost, x.c_path, unit_flags))
        keep = {Path(x.c_path).name for x in results}
        for stale in src_dir.glob("shard_*.c"):
            if stale.name not in keep:
                stale.unlink()
        table_path = src_dir / "table.c"
        _write_if_changed(table_path, _table_source(results, program.entry, loaded, frames_returned=not trust))
        # the table is data: ~0.6 s of CPU per MB, a fifth of a shard's rate
        return [*units, _Unit(-table_path.stat().st_size / 5, str(table_path), flags)]

    t0 = time.monotonic()
    with (
        Progress("lifting and compiling shards", 2 * len(lifts) + len(units) + 1) as prog,
        ProcessPoolExecutor(max_workers=jobs) as ex,
    ):
        compiled = _schedule(ex, jobs, lifts, units, cc.identity(), finish_lift, prog)
    t_compile = time.monotonic()
    # link order: table, runtime, shards (as before), whatever order the compiles finished in
    rank = {str(src_dir / "table.c"): (0, ""), **{str(p): (1, str(p)) for p in runtime_c}}
    compiled.sort(key=lambda c: rank.get(c.c_path, (2, c.c_path)))
    objs = [c.obj for c in compiled]
    so_name = "loaded.so" if loaded else "game.so"
    so_tmp = out_dir / f"{so_name}.tmp"
    cc.run(
        ["-shared", "-o", str(so_tmp), *objs, "-lpthread", "-ldl", "-fno-sanitize=all", *LINK_FLAGS], f"{so_name} (link)"
    )  # -ldl: lift on miss dlopens (glibc before 2.34 has it there)
    os.replace(so_tmp, out_dir / so_name)
    cap = int(settings.get("recompiler", "cache_mb")) << 20
    pruned = prune(_lift_cache(), cap) + prune(_obj_cache(), cap)
    if pruned:
        log.info("caches pruned to %d MB each: %d least recently used entries removed", cap >> 20, pruned)
    built = [c for c in compiled if not c.cached]
    slowest = sorted(built, key=lambda c: -c.cpu_s)[:5]
    stats = {
        "functions": len(program.functions),
        "march": cc.march(),
        "shards": len(results),
        "objects": len(objs),
        "objects_cached": len(compiled) - len(built),
        "unresolved_br": len(program.unresolved_br),
        # functions entered only by direct calls whose returns hand back fewer results
        "closed_functions": len(program.closed),
        "results_narrowed": narrowed,
        "frames_narrowed": framed,
        "shards_lift_cached": sum(r.cached for r in results),
        "cpu_seconds": {
            "lift": round(sum(r.cpu_s for r in results), 1),
            "place": round(place_s, 1),
            "compile": round(sum(c.cpu_s for c in built), 1),
        },
        "wall_seconds": {"lift_and_compile": round(t_compile - t0, 1), "link": round(time.monotonic() - t_compile, 1)},
        "slowest": [[Path(c.c_path).name, round(c.cpu_s, 1)] for c in slowest],
        "over_cc_budget": cheap,
    }
    if prof_gen or prof_blocks is not None:
        # profile_gen: counters (per C copy and block segment); profile: functions, blocks, shards with samples
        stats["profile"] = {k: v for k, v in prof_stats.items() if v or k != "counters"}
    log.info("build: %s", stats)
    return stats


def cheap_flags(flags: list[str]) -> list[str]:
    """``flags`` with the optimisation level replaced by ``CHEAP_FLAGS`` (and the flags that
    only tune optimisation passes left out)."""
    out, k = [], 0
    while k < len(flags):
        tuned = next((t for t in (TAIL_DUP_FLAGS, DISPATCH_RA_FLAGS) if flags[k : k + len(t)] == t), None)
        if tuned:
            k += len(tuned)
            continue
        if not re.fullmatch(r"-O[0-3sz]?", flags[k]) and flags[k] != "-fno-slp-vectorize":
            out.append(flags[k])
        k += 1
    return [*CHEAP_FLAGS, *out]


def _include_dirs(c_path: str) -> list[Path]:
    """Where a unit's ``#include "x.h"`` may look: the core, and a runtime source's own folder."""
    parent = Path(c_path).parent
    return [RUNTIME_DIR, parent] if parent.parent == RUNTIME_ROOT and parent != RUNTIME_DIR else [RUNTIME_DIR]


def _headers_of(c_path: str) -> list[str]:
    """Headers whose bytes go into an object's cache key: generated shards include only the
    lifted-code headers; runtime sources may include any header of the core and of their own
    folder."""
    if Path(c_path).parent.parent == RUNTIME_ROOT:
        return [str(p) for d in _include_dirs(c_path) for p in sorted(d.glob("*.h"))]
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


def _table_source(results: list[ShardResult], entry: int, loaded: bool = False, frames_returned: bool = False) -> str:
    """The entry table (``nx_entries``), or a run-time lift's rows (``loaded``).  ``frames_returned``
    (``trust_abi`` off: every call reloads SP and X29 from ``NxCpu``, every return stores them):
    ``nx_returns_store_frame`` tells the runtime not to write back the SP and X29 it passed where
    a function came back to the X30 it passed (nxrt.h ``nx_enter``): with goroutine switches that
    return may be another goroutine's, or come from a stack that has since moved."""
    rows: dict[int, tuple[str, int]] = {}
    for r in results:
        for addr, name, kind in r.entries:
            old = rows.get(addr)
            if old is None or (kind == 1 and old[1] != 1):
                rows[addr] = (name, kind)
    names = sorted({n for n, _k in rows.values()})
    lines = ['#include "nxrt.h"']
    sig = SIG.replace("u64", "uint64_t")  # the table includes nxrt.h only
    lines += [f"NxRet {n}{sig};" for n in names]
    if loaded:  # the rows of a run-time lift (lift_miss.c reads them from the object it loads)
        lines.append('__attribute__((visibility("default"))) const NxEntry nx_lift_entries[] = {')
        lines += [f"  {{{a:#x}ull, {n}, {k}, 0}}," for a, (n, k) in sorted(rows.items())]
        lines.append("};")
        lines.append(f'__attribute__((visibility("default"))) const uint64_t nx_lift_entry_count = {len(rows)};')
        return "\n".join(lines) + "\n"
    lines.append("const NxEntry nx_entries[] = {")
    lines += [f"  {{{a:#x}ull, {n}, {k}, 0}}," for a, (n, k) in sorted(rows.items())]
    lines.append("};")
    lines.append(f"const uint64_t nx_entry_count = {len(rows)};")
    lines.append(f"const uint64_t nx_program_entry = {entry:#x}ull;")
    if frames_returned:
        lines.append("const uint64_t nx_returns_store_frame = 1;")
    return "\n".join(lines) + "\n"
