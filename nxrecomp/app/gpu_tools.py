"""``nxrecomp replay FILE --out DIR`` (render a recorded GPU command stream alone and dump its
frames) and ``nxrecomp build-sdl3`` (the window's SDL3, from Debian's source package)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="render a recorded GPU command stream and dump its frames")
    p.add_argument("file", help="recording made with gpu_host.record / --record")
    p.add_argument("--out", required=True, help="folder for frame_NNNNNN.png and frames.txt (sha256 per frame)")
    p.set_defaults(func=_replay)

    p = sub.add_parser("build-sdl3", help="build SDL3 for the GPU process's window (from Debian trixie's source)")
    p.set_defaults(func=_build_sdl3)


def _replay(a: argparse.Namespace) -> int:
    from gpu_host.replay_file import replay_file

    frames = replay_file(Path(a.file), Path(a.out))
    print(f"replayed {len(frames)} frames into {a.out}")
    return 0


def _build_sdl3(a: argparse.Namespace) -> int:
    from gpu_host import sdl3_build

    print(sdl3_build.lib_dir())
    return 0
