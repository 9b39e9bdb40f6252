"""The docs name only what exists: README.md, the overview of docs/ARCHITECTURE.md (everything
before its detailed sections) and docs/coop.md, checked against the tree and the code.

- every repository path they name (in backticks, and in the overview's pictures) is a file or
  folder of the tree (a bare or partial name must be the tail of one);
- every ``NXRECOMP_*`` variable and every backticked ``section.key`` is a row of the settings
  table (``nxrecomp.common.settings.all_settings``), unless the name is a module;
- every ``nxrecomp`` command the README shows is a subcommand of ``nxrecomp.app.cli`` and each of
  its ``--flags`` is one of that subcommand's options;
- the README's shader coverage figures are shader_svc/README.md's totals (which
  tests/shader_svc/isa_coverage.py writes).

Placeholders in capitals (``BUNDLE/src/``), run outputs (``demo-out/``) and URL paths are not
repository paths; the exceptions are listed in ``NOT_PATHS``."""

from __future__ import annotations

import argparse
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from nxrecomp.common.settings import all_settings

ROOT = Path(__file__).resolve().parent.parent
OVERVIEW_END = "## The recompiler:"  # docs/ARCHITECTURE.md: the detailed sections start here
# names that are no path of this repository
NOT_PATHS = {
    "demo-out/": "what nxrecomp demo writes",
    "launch.txt": "a bundle's file (nxrecomp/bundle/launch.py)",
    "redis-server.service": "Debian's redis-server unit",
}
EXT = r"(?:py|c|h|md|proto|sh|toml|txt|service)"
SECTIONS = ("nxrecomp", "recompiler", "cpu_host", "gpu_host", "shader_svc", "relay")


def _text(doc: str) -> str:
    t = (ROOT / doc).read_text()
    if doc == "docs/ARCHITECTURE.md":
        t = t[: t.index(OVERVIEW_END)]
    return t


def _fences(text: str) -> tuple[str, str]:
    """(text outside ``` blocks, text inside them)."""
    parts = text.split("```")
    return "".join(parts[0::2]), "".join(parts[1::2])


@cache
def _tree() -> tuple[str, ...]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = out.split()
    dirs = {str(Path(f).parent) + "/" for f in files} | {
        "/".join(f.split("/")[:i]) + "/" for f in files for i in range(1, f.count("/"))
    }
    return tuple(files) + tuple(sorted(dirs))


def _expand(name: str) -> list[str]:
    """``a/{b,c}`` -> a/b, a/c; ``x.py/y.py`` and ``a|b`` -> each name."""
    m = re.search(r"\{([^}]*)\}", name)
    if m:
        return [x for alt in m.group(1).split(",") for x in _expand(name[: m.start()] + alt + name[m.end() :])]
    alts = name.split("|")
    if len(alts) > 1 and "/" in alts[-1]:  # sm53|sm86/reflect.py: the tail is both's
        tail = alts[-1][alts[-1].index("/") :]
        alts = [a if "/" in a else a + tail for a in alts]
    out = []
    for alt in alts:
        cur: list[str] = []
        for seg in alt.split("/"):
            cur.append(seg)
            if re.search(rf"\.{EXT}$", seg):  # a file name ends a path: what follows is another
                out.append("/".join(cur))
                cur = []
        if any(cur):
            out.append("/".join(cur))
    return [n for n in out if n]


def _exists(name: str) -> bool:
    name = name.strip().rstrip(".,;:")
    if (ROOT / name).exists():
        return True
    return any(p == name or p.endswith("/" + name) for p in _tree())


def _is_repo_path(tok: str) -> bool:
    if tok in NOT_PATHS or tok.startswith(("/", "~", ".venv", "http")) or " " in tok:
        return False
    if re.search(r"(^|/)[A-Z][A-Z_]+(/|$)", tok):  # BUNDLE/..., OUT/...: placeholders
        return False
    return bool(re.fullmatch(rf"[\w.{{}},|/-]*\w\.{EXT}|[\w.{{}},|/-]+/[\w{{}},|-]*", tok))


def _named_paths(doc: str) -> set[str]:
    prose, pictures = _fences(_text(doc))
    toks = set(re.findall(r"`([^`\n]+)`", prose))
    if doc == "docs/ARCHITECTURE.md":  # the overview's pictures name modules and folders
        toks |= set(re.findall(rf"[\w./{{}},|-]*\w\.{EXT}\b|\b[\w./-]*\w/(?=[\s,):]|$)", pictures, re.M))
    return {n for t in toks if _is_repo_path(t) for n in _expand(t)}


@pytest.mark.parametrize("doc", ["README.md", "docs/ARCHITECTURE.md", "docs/coop.md"])
def test_every_path_the_docs_name_exists(doc: str) -> None:
    missing = sorted(n for n in _named_paths(doc) if not _exists(n))
    assert not missing, f"{doc} names paths that are not in the tree: {missing}"


def test_the_path_check_finds_a_missing_path() -> None:
    assert _exists("scripts/nx.sh") and _exists("hz_sdk.h") and _exists("sdk/hz_sdk.h")
    assert not _exists("horizon_hello/hz_sdk.h")  # the folder map named it so before
    assert not _exists("gpu_host/no_such_module.py")
    assert _expand("runtime/{core,linux}") == ["runtime/core", "runtime/linux"]
    assert _expand("nxreplay.c/nxpkt.c") == ["nxreplay.c", "nxpkt.c"]
    assert _expand("sm53|sm86/reflect.py") == ["sm53/reflect.py", "sm86/reflect.py"]
    assert _is_repo_path("cpu_host/runtime/") and not _is_repo_path("BUNDLE/src/") and not _is_repo_path("/metrics")


def _settings() -> tuple[set[str], set[str]]:
    rows = all_settings()
    return {s.env_name for s in rows}, {f"{s.section}.{s.key}" for s in rows}


def _unknown_settings(text: str) -> list[str]:
    envs, keys = _settings()
    bad = [e for e in re.findall(r"NXRECOMP_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_<])", text) if e not in envs and e != "NXRECOMP_CONFIG"]
    prose, _ = _fences(text)
    for tok in re.findall(r"`([^`\n]+)`", prose):
        for sec, key in re.findall(rf"(?<![\w.-])({'|'.join(SECTIONS)})\.([a-z_][a-z0-9_]*)\b", tok):
            module = ROOT / sec / key
            if f"{sec}.{key}" in keys or module.with_suffix(".py").exists() or module.is_dir() or key == "ini":
                continue
            bad.append(f"{sec}.{key}")
    return sorted(set(bad))


@pytest.mark.parametrize("doc", ["README.md", "docs/ARCHITECTURE.md", "docs/coop.md"])
def test_every_setting_the_docs_name_is_in_the_table(doc: str) -> None:
    bad = _unknown_settings(_text(doc))
    assert not bad, f"{doc} names settings the table (nxrecomp settings) lacks: {bad}"


def test_the_settings_check_finds_an_unknown_setting() -> None:
    assert _unknown_settings("`NXRECOMP_RECOMPILER_MARCH=x86-64` and `recompiler.march`") == []
    assert _unknown_settings("`NXRECOMP_RELAY_<KEY>`, `relay.tokens.issue()`, `nxrecomp.ini`") == []
    assert _unknown_settings("NXRECOMP_RECOMPILER_NO_SUCH=1 and `gpu_host.no_such`") == [
        "NXRECOMP_RECOMPILER_NO_SUCH",
        "gpu_host.no_such",
    ]


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _options(p: argparse.ArgumentParser) -> set[str]:
    return {o for a in p._actions for o in a.option_strings}


def _bad_commands(lines: list[str]) -> list[str]:
    from nxrecomp.app.cli import build_parser

    top = build_parser()
    bad = []
    for line in lines:
        # a command's words end at a comment, a backtick, a shell operator or " / " (an alternative)
        for m in re.finditer(r"\bnxrecomp ([a-z][\w-]*)([^#`|&;]*)", line.replace(" / ", " | ")):
            sub = _subparsers(top)
            if m.group(1) not in sub:
                bad.append(f"nxrecomp {m.group(1)}")
                continue
            p, words = sub[m.group(1)], m.group(2).split()
            if words and words[0] in _subparsers(p):  # nxrecomp relay token ...
                p = _subparsers(p)[words[0]]
            for w in words:
                flag = w.split("=")[0].strip("[]")
                if flag.startswith("-") and flag != "--" and flag not in _options(p):
                    bad.append(f"nxrecomp {m.group(1)} {flag}")
    return sorted(set(bad))


def test_every_command_and_flag_the_readme_shows_exists() -> None:
    lines = [ln for ln in _text("README.md").splitlines() if "nxrecomp " in ln]
    assert len(lines) > 20  # the README shows the commands; the check reads them
    bad = _bad_commands(lines)
    assert not bad, f"README.md shows commands or flags nxrecomp does not have: {bad}"


def test_the_command_check_finds_an_unknown_command_and_flag() -> None:
    assert _bad_commands([".venv/bin/nxrecomp demo --frames 600 --input x.txt   # --nope in a comment"]) == []
    assert _bad_commands(["`nxrecomp relay token --room arena --player alice --host`"]) == []
    assert _bad_commands(["nxrecomp demo --no-such-flag", "nxrecomp frobnicate"]) == [
        "nxrecomp demo --no-such-flag",
        "nxrecomp frobnicate",
    ]


def test_the_readme_shader_coverage_is_the_coverage_tables_totals() -> None:
    readme = _text("README.md")
    tables = (ROOT / "shader_svc/README.md").read_text()
    for isa in ("SM86", "SM53"):
        doc = re.search(rf"{isa} translated (\d+) and executed\s+exactly\s+(\d+)\s+of\s+(\d+)", readme)
        tot = re.search(rf"{isa}: nvdisasm knows (\d+) mnemonics;.* translated (\d+), executed exactly (\d+)", tables)
        assert doc and tot, f"{isa}: figures not found in README.md or shader_svc/README.md"
        assert (doc[1], doc[2], doc[3]) == (tot[2], tot[3], tot[1]), (
            f"README.md's {isa} coverage {doc[0]!r} differs from shader_svc/README.md's totals {tot[0]!r}"
        )
