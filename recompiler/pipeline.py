"""load → link → analyse → lift → build, for a Linux AArch64 ELF program: the bundle is
``game.so`` + ``manifest.json`` (+ the image blob) + the native launcher ``nxrun`` and its
``launch.txt`` in one folder."""
from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from nxrecomp import settings
from recompiler.analyse import Memory, Program, analyse
from recompiler.build import build
from recompiler.link import LinkedImage, link_program

log = logging.getLogger("recompiler")


def image_memory(image: LinkedImage) -> Memory:
    return Memory([(s.vaddr, s.memsz, bytes(s.data), "x" in s.prot) for s in image.segments],
                  [(s.vaddr, s.memsz) for s in image.segments if "w" not in s.prot])


def ifunc_slots(image: LinkedImage) -> dict[int, int]:
    """The IFUNC slots analysis may resolve PLT stubs through (``recompiler.ifunc_stubs``)."""
    return image.ifunc_slots if settings.get("recompiler", "ifunc_stubs") else {}


def eh_frames(image: LinkedImage) -> list[tuple[int, bytes]]:
    return [m.eh_frame for m in image.modules if m.eh_frame]


def analyse_image(image: LinkedImage) -> Program:
    """Analysis of a linked image with the settings that steer it (``recompiler.ifunc_stubs``,
    ``recompiler.noreturn_calls``)."""
    return analyse(image_memory(image), image.entry, image.func_hints, eh_frames(image), ifunc_slots(image),
                   bool(settings.get("recompiler", "noreturn_calls")))


def recompile_elf(path: str | Path, out_dir: str | Path, search_paths: list[str | Path] = ()) -> dict:
    t0 = time.monotonic()
    out = Path(out_dir)
    image = link_program(path, search_paths)   # bad input fails here, before anything is written
    from cpu_host import launcher
    why = launcher.not_runnable(image.static, str(path))
    if why:   # said before the build, not after minutes of it
        log.warning("%s (the bundle is still built, for inspection; it refuses to start)", why)
    out.mkdir(parents=True, exist_ok=True)
    t_link = time.monotonic()
    program = analyse_image(image)
    t_an = time.monotonic()
    stats = build(program, out)
    if program.stats is not None:   # what analysis found (recompile --stats prints it)
        stats["analysis"] = program.stats.to_json()
    t_build = time.monotonic()
    manifest = write_manifest(out, "linux-aarch64", image, program, stats, (t0, t_link, t_an, t_build),
                              program_path=path, program=str(Path(path).resolve()))
    # the bundle's native launcher (BUNDLE/nxrun ARGV...): starts the program without Python
    from cpu_host.runner import HWCAP
    launcher.install(out, manifest, HWCAP)
    return manifest


def write_manifest(out: Path, kind: str, image: LinkedImage, analysed, stats: dict,
                   times: tuple[float, float, float, float], program_path: str | Path, **fields) -> dict:
    """Write ``out/manifest.json`` (atomically) for a built bundle; ``times`` are the monotonic
    clock at start, after link, after analyse, after build."""
    t0, t_link, t_an, t_build = times
    manifest = {
        "format": 1,
        "kind": kind,
        **fields,
        "image": image.to_json(out / "image.bin"),
        "functions": sorted(analysed.functions),
        "stats": {**stats, "seconds": {"link": round(t_link - t0, 2), "analyse": round(t_an - t_link, 2),
                                       "build": round(t_build - t_an, 2)}},
    }
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, out / "manifest.json")
    log.info("recompiled %s: %s", program_path, manifest["stats"])
    return manifest
