"""A copy of a bundle whose game.so has some shards compiled from edited C: hand experiments on
the generated code of one function (a store list removed, a call routed elsewhere, a clang flag
on one shard) without a lifter change or a rebuild of the program.

    .venv/bin/python bench/shard_relink.py BUNDLE OUT [--sub EDITED.c=shard_00522_2.c ...]
                                           [--sub-dir DIR] [--cflags "-mllvm ..."] [-j 2]

Every object of BUNDLE's game.so is taken from the object cache (``recompiler.build``'s keys:
the C, the flags, the compiler's identity, the headers), trying the flag sets a shard may have
been compiled with (ordinary, dispatch loop, huge) until one is there; an edited shard is
compiled with the flags its original was found under, plus ``--cflags``, and everything is
linked as the build links it.  With no edits the result is byte-identical to BUNDLE's game.so
(checked: QuickJS, 92 objects).  ``--sub-dir`` takes every ``shard_*.c`` of DIR as an edit of
the shard of the same name.  OUT gets nxrun, image.bin, launch.txt, manifest.json and src/ (the
edited C in place of the original), so ``bench/callgrind_ir.py --bundle OUT`` and
``bench/spill_lines.py OUT ...`` measure it.  A shard whose object is not in the cache (pruned,
or BUNDLE built by another lifter or compiler) is an error naming it: rebuild BUNDLE with
``nxrecomp recompile`` first."""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def flag_sets() -> list[list[str]]:
    """The flag sets ``recompiler.build.build`` compiles a shard with (see its ``units``)."""
    from recompiler import build as B, cc
    from nxrecomp.common import settings

    flags = [settings.get("recompiler", "opt"), *B.SHARD_FLAGS, *cc.arch_flags(), B.GAME_SO_FLAG]
    if settings.get("recompiler", "debug_info"):  # (a bundle built with line tables: as build adds them)
        flags += B.DEBUG_FLAGS
    k = flags.index(B.TAIL_DUP_FLAGS[1])
    huge = [*flags[: k - 1], *flags[k - 1 + len(B.TAIL_DUP_FLAGS) :]]
    noslp, huge_noslp = [*flags, "-fno-slp-vectorize"], [*huge, "-fno-slp-vectorize"]
    # a dispatch loop's shard (build.DISPATCH_RA_FLAGS) before the same C without them: both
    # objects are cached where a bundle of an older lifter had the same shard
    ra = B.DISPATCH_RA_FLAGS
    return [flags, [*noslp, *ra], noslp, [*huge_noslp, *ra], huge_noslp, huge]


def cached_object(c: Path, flags: list[str], cc_id: str, headers: list[str]) -> Path:
    """Where ``recompiler.build._compile_cached`` keeps the object of ``c`` under ``flags``."""
    from recompiler import build as B

    h = hashlib.sha256()
    h.update(c.read_bytes())
    h.update("\0".join(flags).encode())
    h.update(cc_id.encode())
    for hdr in headers:
        h.update(Path(hdr).read_bytes())
    return B._obj_cache() / f"{h.hexdigest()}.o"


def main() -> None:
    from recompiler import build as B, cc

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--sub", action="append", default=[], metavar="EDITED.c=SHARD.c")
    ap.add_argument("--sub-dir", type=Path, help="every shard_*.c here replaces the shard of its name")
    ap.add_argument("--cflags", default="", help="more compiler flags for the edited shards")
    ap.add_argument(
        "--profile-dir",
        type=Path,
        help="compile every shard that has DIR/<shard>.prof (bench/sample_profile.py) again with "
        "-fprofile-sample-use=that file (plus --cflags)",
    )
    ap.add_argument(
        "--reuse", action="store_true", help="keep an edited shard's object OUT/objs/<shard>.o made by an earlier run"
    )
    ap.add_argument("-j", type=int, default=2, help="compiles at a time")
    a = ap.parse_args()
    src = a.bundle / "src"
    if not (a.bundle / "game.so").exists() or not src.is_dir():
        raise SystemExit(f"{a.bundle}: not a bundle with its C (game.so and src/ of nxrecomp recompile)")
    subs: dict[str, Path] = {}
    for s in a.sub:
        edited, _, name = s.partition("=")
        if not name or not Path(edited).is_file():
            raise SystemExit(f"--sub {s!r}: expected EDITED.c=SHARD.c with EDITED.c a file")
        subs[name] = Path(edited)
    if a.sub_dir:
        subs.update({p.name: p for p in sorted(a.sub_dir.glob("shard_*.c"))})
    profiles: dict[str, Path] = {}
    if a.profile_dir:
        profiles = {p.stem + ".c": p.resolve() for p in sorted(a.profile_dir.glob("shard_*.prof"))}
        subs.update({n: src / n for n in profiles if n not in subs})
    for name in subs:
        if not (src / name).exists():
            raise SystemExit(f"{a.bundle} has no shard {name}")
    cc_id = cc.identity()
    sets = flag_sets()
    objs: list[str] = []
    jobs: list[tuple[list[str], str]] = []
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "objs").mkdir(exist_ok=True)
    table = src / "table.c"
    o = cached_object(table, sets[0], cc_id, B._headers_of(str(table)))
    if not o.exists():
        raise SystemExit(f"{table}: its object is not in the cache; rebuild {a.bundle} with nxrecomp recompile")
    objs.append(str(o))
    personality = "linux"
    if (a.bundle / "manifest.json").exists():
        kind = json.loads((a.bundle / "manifest.json").read_text()).get("kind", "")
        personality = "linux" if kind.startswith("linux") else "horizon"
    for p in B.runtime_sources(personality):
        fl = ["-O2", *B.FLAGS, *cc.arch_flags()]
        o = cached_object(p, fl, cc_id, B._headers_of(str(p)))
        if not o.exists():
            jobs.append((["-c", str(p), "-o", str(o), *fl, *[f"-I{d}" for d in B._include_dirs(str(p))]], str(p)))
        objs.append(str(o))
    for p in sorted(src.glob("shard_*.c")):
        hdrs = B._headers_of(str(p))
        found = next((fl for fl in sets if cached_object(p, fl, cc_id, hdrs).exists()), None)
        if found is None:
            raise SystemExit(f"{p}: its object is not in the cache; rebuild {a.bundle} with nxrecomp recompile")
        if p.name in subs:
            o = a.out / "objs" / (p.stem + ".o")
            prof = [f"-fprofile-sample-use={profiles[p.name]}"] if p.name in profiles else []
            cmd = ["-c", str(subs[p.name]), "-o", str(o), *found, *a.cflags.split(), *prof, f"-I{B.RUNTIME_DIR}"]
            if not (a.reuse and o.exists()):
                jobs.append((cmd, p.name))
            objs.append(str(o))
        else:
            objs.append(str(cached_object(p, found, cc_id, hdrs)))
    with ThreadPoolExecutor(max(1, a.j)) as ex:
        list(ex.map(lambda j: cc.run(*j), jobs))
    for f in ("nxrun", "image.bin", "launch.txt", "manifest.json"):
        if (a.bundle / f).exists():
            shutil.copy2(a.bundle / f, a.out / f)
    if (a.out / "src").exists():
        shutil.rmtree(a.out / "src")
    shutil.copytree(src, a.out / "src")
    for name, edited in subs.items():
        if edited.resolve() != (a.out / "src" / name).resolve():
            shutil.copy(edited, a.out / "src" / name)
    cc.run(["-shared", "-o", str(a.out / "game.so"), *objs, "-lpthread", "-ldl", "-fno-sanitize=all", *B.LINK_FLAGS], "game.so")
    print(f"{a.out / 'game.so'}: {len(objs)} objects, {len(subs)} shards from edited C")


if __name__ == "__main__":
    main()
