"""``nxrecomp gpu-host``: the GPU process's entry point (gRPC control + command ring + Vulkan).
The GPU side's other commands (``run``, ``replay``, ``build-sdl3``) are the application's:
nxrecomp/app/."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gpu-host", help="run the GPU process (gRPC control + command ring + Vulkan)")
    p.add_argument("--socket-dir", required=True, help="folder for the gpu.grpc and gpu.fds sockets")
    p.add_argument("--frames-dir", help="write presented frames as PNG here")
    p.add_argument("--record", help="record the command stream to this file")
    p.set_defaults(func=_gpu_host)


def _gpu_host(a: argparse.Namespace) -> int:
    from gpu_host import server

    argv = ["--socket-dir", a.socket_dir]
    if a.frames_dir:
        argv += ["--frames-dir", a.frames_dir]
    if a.record:
        argv += ["--record", a.record]
    return server.main(argv)
