"""Lift one function of a built bundle into a small shared object, for lift on miss.

``lift_at(bundle, addr)`` does for the function starting at ``addr`` what a build does for
every function, with the same parts: the analysis (``Analyser.function``, its entries the
bundle's functions and its discovered entries, so the function ends where the build's would),
the lifter (``lift_function``, call sites' lists for unknown callees, as no whole-program
summary is at hand) and the compiler (``recompiler.cc`` with the shards' flags).  The object
exports its rows of the dispatch table as ``nx_lift_entries``/``nx_lift_entry_count``; the
runtime (``cpu_host/runtime/core/lift_miss.c``) enters them into its overlay table.

Calls from the new function to other guest functions go through the runtime's dispatch (with
inline caches): the shards' symbols in ``game.so`` are hidden, and a call through the lookup
needs no symbol.  Objects are cached under ``cache_dir/runtime_lifts`` by the hash of their C,
flags, compiler and runtime headers.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common import settings
from nxrecomp.bundle import manifest as bundle_manifest
from nxrecomp.bundle.image import LinkedImage
from recompiler import cc, discovered
from recompiler.analyse import Analyser, abi_settings
from recompiler.build import LINK_FLAGS, RUNTIME_DIR, SHARD_FLAGS, SLP_MAX_INSNS, _included, cheap_flags
from recompiler.lift import lift_function
from recompiler.lift.emitter import SIG, fname, rname


@dataclass
class RuntimeLift:
    """One function lifted at run time: its object and what the notice says of it."""

    entry: int
    so_path: Path | None  # None: addr is not code of the program
    insns: int = 0
    guest_bytes: int = 0
    compile_s: float = 0.0
    cached: bool = False


def _manifest_image(bundle: Path, manifest: dict):
    from recompiler.pipeline import image_memory

    return image_memory(LinkedImage.from_json(manifest["image"], bundle))


def c_source(
    plan,
    trust_abi: bool,
    elide_saves: bool,
    comments: bool,
    trace: bool,
    abi: str = "aapcs64",
    generated: tuple[int, bytes] | None = None,
) -> str:
    """The C of ``plan``'s function and its table rows (exported for the runtime).

    ``generated``: (address, bytes) of the guest code the function was lifted from, when that is
    code the program generated at run time (``cpu_host/linux/generated_code.py``): every row then
    enters through a check that the guest's bytes there are still those; where they are not (the
    program wrote other code there), the runtime drops the rows (``nx_generated_stale``) and the
    branch goes to the address again, through the dispatch, which lifts what is there now."""
    code, called, _live = lift_function(
        plan, {plan.entry}, trust_abi=trust_abi, comments=comments, trace=trace, defer=False, elide_saves=elide_saves, abi=abi
    )
    rows = [(plan.entry, fname(plan.entry), 1)]
    resume_fn = rname(plan.entry) if plan.resume_twin else fname(plan.entry)
    rows += [(r, resume_fn, 2) for r in plan.resume_points if r != plan.entry]
    protos = "".join(f"NxRet {fname(a)}{SIG};\n" for a in sorted(called | {plan.entry}))
    checks = ""
    if generated is not None:
        checks, rows = _generated_checks(plan.entry, generated, rows)
    table = ",\n".join(f"  {{{a:#x}ull, {n}, {k}, 0}}" for a, n, k in rows)
    return (
        '#include "lifted.h"\n' + protos + code + "\n" + checks + ""
        f'__attribute__((visibility("default"))) const NxEntry nx_lift_entries[] = {{\n{table}\n}};\n'
        f'__attribute__((visibility("default"))) const uint64_t nx_lift_entry_count = {len(rows)};\n'
    )


def _generated_checks(entry: int, generated: tuple[int, bytes], rows: list) -> tuple[str, list]:
    """The entry checks of code generated at run time (``c_source``) and the rows through them.

    The function's own entry stores its address in s->pc (an inline cache's hit left it
    unwritten); a resume point's entry comes from nx_run, which stored it there already."""
    lo, data = generated
    hi = lo + len(data)
    words = ",".join(str(b) for b in data)
    out = [
        "void nx_generated_stale(NxCpu *s, u64 lo, u64 hi);\n",
        # (exported: the runtime enters the rows again, with no lift, where these bytes are back)
        f'__attribute__((visibility("default"))) const unsigned char nx_gen_bytes[{len(data)}] = {{{words}}};\n',
        f'__attribute__((visibility("default"))) const uint64_t nx_gen_span[2] = {{{lo:#x}ull, {len(data)}}};\n',
        "NXI int nx_gen_changed(void) {\n"
        f"    return UNLIKELY(__builtin_memcmp((const void *)(uintptr_t){lo:#x}ull, nx_gen_bytes, {len(data)}) != 0);\n}}\n",
    ]
    for fn, kind in dict.fromkeys((n, k) for _a, n, k in rows):
        store = f"s->pc = {entry:#x}ull; " if kind == 1 else ""
        out.append(
            f"static NxRet G{kind}{fn}{SIG} {{\n"
            f"    if (nx_gen_changed()) {{ nx_generated_stale(s, {lo:#x}ull, {hi:#x}ull); {store}"
            "MUSTTAIL return nx_jump(s, a0, a1, a30, asp, a29); }\n"
            f"    MUSTTAIL return {fn}(s, a0, a1, a30, asp, a29);\n}}\n"
        )
    return "".join(out), [(a, f"G{k}{n}", k) for a, n, k in rows]


def _cache() -> Path:
    p = Path(settings.get("nxrecomp", "cache_dir")) / "runtime_lifts"
    p.mkdir(parents=True, exist_ok=True)
    return p


def compile_object(text: str, entry: int, slp: bool = True) -> tuple[Path, float, bool]:
    """``text`` compiled and linked into a shared object (from the cache when it is there);
    returns its path, the compile's wall time and whether it came from the cache."""
    flags = [settings.get("recompiler", "opt"), *SHARD_FLAGS, *cc.arch_flags()]
    if not slp:
        flags.append("-fno-slp-vectorize")
    # a running program waits on this compile: the build's budget holds here too
    budget = float(settings.get("recompiler", "cc_budget_s"))
    if budget > 0 and sum(f.seconds for f in cc.function_costs(text)) > budget:
        flags = cheap_flags(flags)
    h = hashlib.sha256(text.encode())
    h.update("\0".join(flags + LINK_FLAGS).encode())
    h.update(cc.identity().encode())
    for hdr in _included(RUNTIME_DIR / "lifted.h"):
        h.update(hdr.read_bytes())
    out = _cache() / f"{h.hexdigest()[:32]}.so"
    if out.exists():
        return out, 0.0, True
    fd, c_tmp = tempfile.mkstemp(prefix=f"fn_{entry:x}-", suffix=".c", dir=out.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    so_tmp = c_tmp[:-2] + ".so.tmp"
    t0 = time.monotonic()
    try:
        cc.run(
            ["-shared", "-o", so_tmp, c_tmp, *flags, f"-I{RUNTIME_DIR}", "-fno-sanitize=all", *LINK_FLAGS],
            f"the function at {entry:#x} lifted at run time ({c_tmp})",
        )
        os.replace(so_tmp, out)  # atomic: two processes lifting it at once both get a whole file
    finally:
        for p in (so_tmp, c_tmp):
            if os.path.exists(p):
                os.unlink(p)
    return out, time.monotonic() - t0, False


def compile_plan(
    plan, addr: int, trust_abi: bool, elide_saves: bool, abi: str = "aapcs64", generated: tuple[int, bytes] | None = None
) -> tuple[Path, float, bool]:
    """``plan``'s function (entered at ``addr``) lifted with the settings' comments and trace and
    compiled into a loadable object: ``compile_object``'s (path, seconds, cached)."""
    text = c_source(
        plan,
        trust_abi,
        elide_saves,
        bool(settings.get("recompiler", "comments")),
        bool(settings.get("recompiler", "trace")),
        abi,
        generated=generated,
    )
    return compile_object(text, addr, slp=len(plan.insns) <= SLP_MAX_INSNS)


def lift_at(bundle: str | Path, addr: int, manifest: dict | None = None) -> RuntimeLift:
    """Analyse, lift and compile the function starting at ``addr`` of ``bundle``'s program."""
    bundle = Path(bundle)
    if manifest is None:
        manifest = bundle_manifest.read(bundle)
    mem = _manifest_image(bundle, manifest)
    if addr % 4 or not mem.is_code(addr):
        return RuntimeLift(addr, None)
    entries = set(manifest.get("functions", [])) | discovered.read(bundle) | {addr}
    plan = Analyser(mem, entries).function(addr)
    if not plan.insns:
        return RuntimeLift(addr, None)
    abi = manifest.get("abi", "aapcs64")
    trust, elide = abi_settings(
        abi,
        bool(settings.get("recompiler", "trust_abi")),
        bool(settings.get("recompiler", "elide_saves")),
    )
    so, secs, cached = compile_plan(plan, addr, trust, elide, abi)
    span = plan.insns[-1].addr + 4 - plan.insns[0].addr
    return RuntimeLift(addr, so, len(plan.insns), span, secs, cached)
