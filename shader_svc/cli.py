"""Subcommand of the shader service: ``shader-svc --listen ADDR`` runs the gRPC server."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("shader-svc", help="run the shader translation service (gRPC, disk cache)")
    p.add_argument("--listen", help="HOST:PORT to listen on (default: setting shader_svc.listen; port 0 = any)")
    p.add_argument("--cache-dir", help="translation cache folder (default: setting shader_svc.cache_dir)")
    p.set_defaults(func=_serve)


def _serve(a: argparse.Namespace) -> int:
    from nxrecomp import settings
    from shader_svc import service

    return service.serve(a.listen or settings.get("shader_svc", "listen"),
                         Path(a.cache_dir) if a.cache_dir else None)
