"""Build the demo game: ``main`` (game/demo.c) and ``sdk`` NSOs + ``main.npdm`` (an ExeFS, as a
user would dump one) and its RomFS (textures and shaders made by ``assets`` and ``shaders``, sounds
by ``sound``).

``python -m examples.demo.build OUT_DIR [--shaders spirv|sm86|sm53] [--target switch1|switch2]``
writes ``OUT_DIR/exefs/`` and ``OUT_DIR/romfs.bin``.  ``--target`` names the console instead of the
shader code: switch1 = sm53 (Maxwell), switch2 = sm86 (Ampere)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from examples.demo import assets, sound
from examples.demo.shaders.build import romfs_shaders
from examples.horizon_hello.build_exefs import build_exefs
from gpu_host import blocklinear
from recompiler.formats.pack_npdm import NpdmSpec
from recompiler.formats.pack_romfs import pack_romfs

HERE = Path(__file__).resolve().parent
PROGRAM_ID = 0x0100DE0000000000
SHADER_KINDS = ("spirv", "sm86", "sm53")
TARGETS = {"switch1": "sm53", "switch2": "sm86"}  # --target: the console's GPU generation


def shaders_for(shaders: str | None, target: str | None) -> str:
    """The shader kind from ``--shaders`` or its friendlier alias ``--target`` (not both
    disagreeing)."""
    if target is not None and target not in TARGETS:
        raise ValueError(f"target {target!r} (known: {', '.join(TARGETS)})")
    if target is not None and shaders is not None and TARGETS[target] != shaders:
        raise ValueError(f"--target {target} means --shaders {TARGETS[target]}, not {shaders}")
    return TARGETS[target] if target is not None else (shaders or "sm86")


def shader_files(kind: str) -> dict[str, bytes]:
    """The demo's shader files (``/shaders/arch``, ``/shaders/scene.vs``/``.fs``) of one kind."""
    if kind not in SHADER_KINDS:
        raise ValueError(f"shader kind {kind!r} (known: {', '.join(SHADER_KINDS)})")
    return {k: v for k, v in romfs_shaders(kind).items() if "scene" in k or k.endswith("/arch")}


def gpu_for(shaders: str) -> str:
    """The console a build with these shaders is for: SM53 machine code runs on the Switch 1's
    Maxwell, everything else is built for the Switch 2 (its textures in Turing-style GOBs)."""
    return next((t for t, kind in TARGETS.items() if kind == shaders), "switch2")


def build(out_dir: str | os.PathLike, shaders: str = "sm86", gpu: str | None = None) -> tuple[Path, Path]:
    """ExeFS + RomFS of the demo for one console (``gpu``: switch1|switch2, default from the
    shaders); recompile it with ``recompile_exefs(..., gpu=gpu)`` so the GPU process reads the
    textures in the same layout."""
    gob = blocklinear.GENERATION_GOB[gpu or gpu_for(shaders)]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    exefs = build_exefs(
        HERE / "game" / "demo.c",
        out / "exefs",
        NpdmSpec(name="demo", program_id=PROGRAM_ID, main_thread_priority=44, main_thread_core=0),
        fp=True,
    )
    romfs = out / "romfs.bin"
    tmp = out / "romfs.bin.tmp"
    tmp.write_bytes(pack_romfs({**assets.romfs_files(shader_files(shaders), gob), **sound.romfs_files()}))
    os.replace(tmp, romfs)
    return exefs, romfs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--shaders", choices=SHADER_KINDS, help="shader code the game carries (default sm86)")
    ap.add_argument("--target", choices=tuple(TARGETS), help="switch1 = --shaders sm53, switch2 = --shaders sm86")
    a = ap.parse_args()
    try:
        kind = shaders_for(a.shaders, a.target)
    except ValueError as e:
        ap.error(str(e))
    print(*build(a.out_dir, kind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
