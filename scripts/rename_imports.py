"""Rewrite the old module paths of issue 33's package moves to the new ones, in place.

    python scripts/rename_imports.py [PATH ...]      (default: the whole repository)

Idempotent: run it again after merging a branch that still uses the old paths.  It rewrites
``from OLD import ...`` (splitting a statement whose names now live in different modules),
``from PARENT import OLD_LEAF`` (``from nxrecomp import settings``), ``import OLD``, dotted
names in strings, comments and docs (``"nxrecomp.demo_job"``, ``-m nxrecomp.cli``) and file
paths (``nxrecomp/settings.py``, ``cpu_host/runtime/dispatch.c``).  It prints the files it
changed.  What it cannot know (a path computed from ``__file__`` in a moved module) is left to
the person running it: the layer test (tests/test_structure.py) and the tests name it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# old module -> new module
MODULES = {
    **{f"nxrecomp.{m}": f"nxrecomp.common.{m}" for m in ("settings", "log", "errors", "progress", "clib", "debian")},
    **{
        f"nxrecomp.{m}": f"nxrecomp.app.{m}"
        for m in (
            "cli",
            "supervisor",
            "supervise_bundle",
            "demo_job",
            "main_job",
            "report",
            "doctor",
            "plot",
            "frame_stats",
            "run_watch",
        )
    },
    "cpu_host.linux.memory": "nxrecomp.bundle.memory_map",
}
# (old module, name) -> the module that defines it now
SYMBOLS = {
    **{
        ("recompiler.link", n): "nxrecomp.bundle.image" for n in ("LinkedImage", "ModuleInfo", "Segment", "TlsBlock", "TlsLayout")
    },
    **{
        ("cpu_host.launcher", n): "nxrecomp.bundle.launch"
        for n in ("not_runnable", "launch_file", "lift_env", "REPO_ROOT", "LAUNCH_FILE")
    },
}
# file paths named in text: old -> new
_RUNTIME = {
    "core": (
        "dispatch.c",
        "host_isa.c",
        "lift_miss.c",
        "lift_miss.h",
        "nxrt.h",
        "lifted.h",
        "lifted_fp.h",
        "host_calls.h",
        "cpu_features.h",
        "id_regs.h",
    ),
    "linux": ("linux_syscalls.c", "linux_syscalls.h", "linux_threads.c", "linux_threads.h"),
    "horizon": ("horizon_kernel.c", "horizon_kernel.h", "horizon_os.c", "horizon_spin.c"),
}
PATHS = {
    **{old.replace(".", "/") + ".py": new.replace(".", "/") + ".py" for old, new in MODULES.items()},
    **{f"cpu_host/runtime/{f}": f"cpu_host/runtime/{d}/{f}" for d, fs in _RUNTIME.items() for f in fs},
}

SUFFIXES = {".py", ".md", ".sh", ".toml", ".c", ".h", ".txt", ".cfg", ".ini", ""}
SKIP_DIRS = {".git", ".venv", "node_modules", "build", "out", "demo-out", "__pycache__"}
# this script and its test hold the old paths as data
SKIP_FILES = {Path(__file__).resolve(), ROOT / "tests" / "test_rename_imports.py"}

_FROM = re.compile(
    r"^(?P<indent>[ \t]*)from[ \t]+(?P<mod>[\w.]+)[ \t]+import[ \t]+"
    r"(?P<names>\([^)]*\)|[^\n#]*?)(?P<tail>[ \t]*(?:#[^\n]*)?)$",
    re.M,
)


def _new_module(mod: str) -> str | None:
    """The new path of ``mod`` or of a module inside it (``OLD.sub`` -> ``NEW.sub``)."""
    for old, new in MODULES.items():
        if mod == old or mod.startswith(old + "."):
            return new + mod[len(old) :]
    return None


def _rewrite_from(m: re.Match) -> str:
    indent, mod, names, tail = m["indent"], m["mod"], m["names"], m["tail"]
    whole = _new_module(mod)
    if whole is not None:  # the module itself moved
        return m.group(0).replace(f"from {mod} ", f"from {whole} ", 1)
    items = [n.strip() for n in names.strip("()").replace("\n", " ").split(",") if n.strip()]
    targets: list[tuple[str, str]] = []  # (module, "name [as alias]")
    for item in items:
        name, _, alias = (p.strip() for p in item.partition(" as "))
        if (mod, name) in SYMBOLS:
            targets.append((SYMBOLS[mod, name], item))
            continue
        sub = _new_module(f"{mod}.{name}")
        if sub is not None:  # ``from nxrecomp import settings``
            parent, _, leaf = sub.rpartition(".")
            targets.append((parent, leaf if leaf == (alias or name) else f"{leaf} as {alias or name}"))
            continue
        targets.append((mod, item))
    if all(t == mod for t, _ in targets):
        return m.group(0)
    groups: dict[str, list[str]] = {}
    for t, item in targets:
        groups.setdefault(t, []).append(item)
    if len(groups) == 1 and all(a == b for a, (_, b) in zip(items, targets)):
        (t,) = groups
        return m.group(0).replace(f"from {mod} ", f"from {t} ", 1)
    lines = [f"{indent}from {t} import {', '.join(ns)}" for t, ns in groups.items()]
    return "\n".join(lines) + tail


def _alternation(table: dict[str, str], before: str) -> re.Pattern:
    """One pattern for every key of ``table`` (longest first), not preceded by ``before``."""
    keys = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
    return re.compile(rf"(?<!{before})(?:{keys})(?!\w)")


_DOTTED = _alternation(MODULES, r"[\w.]")
_PATH = _alternation(PATHS, r"[\w/]")


def rewrite(text: str) -> str:
    text = _FROM.sub(_rewrite_from, text)
    text = _DOTTED.sub(lambda m: MODULES[m.group(0)], text)
    return _PATH.sub(lambda m: PATHS[m.group(0)], text)


def files(paths: list[Path]):
    for p in paths:
        if p.is_file():
            if p.resolve() not in SKIP_FILES:
                yield p
            continue
        for f in sorted(p.rglob("*")):
            if (
                f.is_file()
                and f.suffix in SUFFIXES
                and not SKIP_DIRS & set(f.relative_to(p).parts)
                # hidden folders (.git, a helper's carried copy of the tree) are not the tree
                and not any(part.startswith(".") and part != ".ci" for part in f.relative_to(p).parts[:-1])
                and f.resolve() not in SKIP_FILES
                and (f.suffix or f.parent.name in (".ci", "scripts"))
            ):
                yield f


def main(argv: list[str]) -> int:
    changed = 0
    for f in files([Path(a) for a in argv] or [ROOT]):
        try:
            old = f.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        new = rewrite(old)
        if new != old:
            f.write_text(new)
            print(f)
            changed += 1
    print(f"{changed} files rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
