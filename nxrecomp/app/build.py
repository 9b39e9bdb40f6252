"""``nxrecomp recompile PROGRAM -o BUNDLE`` (a Linux AArch64 ELF program) and ``nxrecomp build
PROGRAM -o BUNDLE`` (a Switch program: an ExeFS folder, a PFS0, a single NSO or a homebrew NRO).
The recompiler writes the bundle (``game.so``, ``manifest.json``, ``image.bin``); a Linux bundle
also gets the Linux host's native launcher (``BUNDLE/nxrun``, ``launch.txt``), so that it starts
without Python — composed here, the one place that knows both the recompiler and the host."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register_recompile(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recompile", help="recompile an AArch64 Linux ELF program into a bundle (game.so + manifest)")
    p.add_argument("program", help="AArch64 ELF executable")
    p.add_argument("-o", "--out", required=True, help="bundle folder to write")
    p.add_argument(
        "-L",
        "--lib-root",
        action="append",
        default=[],
        help="folder holding lib/aarch64-linux-gnu (unpacked Debian packages) for shared libraries",
    )
    p.add_argument(
        "--stats", action="store_true", help="print what analysis found: entries by source, jump tables by kind, unresolved BRs"
    )
    _profile_args(p)
    p.set_defaults(func=_recompile)


def _profile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        metavar="FILE",
        help="compile with this block profile (recompiler.profile: what a --profile-gen bundle wrote at exit)",
    )
    p.add_argument(
        "--profile-gen",
        action="store_true",
        help="a training build: the bundle counts its guest blocks and writes a block profile at exit (recompiler.profile_gen)",
    )


def _profile_settings(a: argparse.Namespace) -> None:
    """The profile options as the settings the build reads (an option overrides the environment)."""
    import os

    if a.profile:
        os.environ["NXRECOMP_RECOMPILER_PROFILE"] = str(Path(a.profile).resolve())
    if a.profile_gen:
        os.environ["NXRECOMP_RECOMPILER_PROFILE_GEN"] = "1"


def register_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="recompile a Switch program (ExeFS folder, PFS0, NSO or homebrew NRO) into a bundle")
    p.add_argument(
        "exefs",
        metavar="PROGRAM",
        help="ExeFS folder (main, sdk, subsdk*, main.npdm), PFS0 file (.nsp/.pfs0), a single .nso, or "
        "a homebrew .nro (its RomFS goes into the bundle); without main.npdm a documented default "
        "is used",
    )
    p.add_argument("-o", "--out", required=True, help="bundle folder to write")
    p.add_argument(
        "--romfs", help="the user's RomFS file (referenced by the bundle, not copied; for an NRO it replaces the NRO's own)"
    )
    p.add_argument(
        "--gpu",
        choices=("switch1", "switch2"),
        default="switch1",
        help="the console the game was built for: its GPU's texture layout (switch1: Maxwell "
        "GOBs, switch2: Ampere/Turing GOBs); default switch1",
    )
    _profile_args(p)
    p.set_defaults(func=_build)


def recompile_linux(program: str | Path, out: str | Path, search_paths: list[str | Path] = ()) -> dict:
    """A Linux AArch64 program recompiled into the bundle ``out``, with the native launcher
    (``BUNDLE/nxrun ARGV...`` starts the program without Python); returns the manifest."""
    from cpu_host import launcher
    from cpu_host.runner import HWCAP
    from recompiler.pipeline import recompile_elf

    manifest = recompile_elf(program, out, search_paths)
    launcher.install(out, manifest, HWCAP)
    return manifest


def _recompile(a: argparse.Namespace) -> int:
    _profile_settings(a)
    m = recompile_linux(a.program, a.out, a.lib_root)
    stats = dict(m["stats"])
    analysis = stats.pop("analysis", None)
    print(json.dumps(stats))
    if a.stats and analysis is not None:
        from recompiler.analysis.stats import AnalysisStats

        print(AnalysisStats.from_json(analysis).text())
    return 0


def _build(a: argparse.Namespace) -> int:
    _profile_settings(a)
    from recompiler.horizon import recompile_exefs

    m = recompile_exefs(a.exefs, a.out, a.romfs, gpu=a.gpu)
    hb = m.get("homebrew") or {}
    start = {"nro": "homebrew, NRO start-up (hbloader's)", "nso": "homebrew, NSO start-up"}.get(hb.get("abi"), "SDK start-up")
    title = f" '{hb['title']}'" if hb.get("title") else ""
    print(
        f"{a.out}:{title} {m['stats']['functions']} functions, modules "
        + ", ".join(f"{x['name']}@{x['base']:#x}" for x in m["modules"])
        + f"; {start}"
    )
    return 0
