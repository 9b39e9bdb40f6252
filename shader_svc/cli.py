"""Subcommands of the shader service: ``shader-svc --listen ADDR`` runs the gRPC server;
``shader-asm SRC -o OUT`` assembles an SM86 listing; ``shader-disasm BIN`` prints one."""

from __future__ import annotations

import argparse
from pathlib import Path

from nxrecomp.common.errors import NxError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("shader-svc", help="run the shader translation service (gRPC, disk cache)")
    p.add_argument("--listen", help="HOST:PORT to listen on (default: setting shader_svc.listen; port 0 = any)")
    p.add_argument("--cache-dir", help="translation cache folder (default: setting shader_svc.cache_dir)")
    p.set_defaults(func=_serve)
    p = sub.add_parser("shader-asm", help="assemble an SM86 listing (nvdisasm syntax, labels) into raw code")
    p.add_argument("source", help="listing file")
    p.add_argument("-o", "--output", required=True, help="raw code file (16 bytes an instruction)")
    p.set_defaults(func=_asm)
    p = sub.add_parser("shader-disasm", help="print raw SM86 code in nvdisasm syntax")
    p.add_argument("code", help="raw code file (16 bytes an instruction)")
    p.set_defaults(func=_disasm)


def _serve(a: argparse.Namespace) -> int:
    from nxrecomp.common import settings
    from shader_svc import service

    return service.serve(a.listen or settings.get("shader_svc", "listen"), Path(a.cache_dir) if a.cache_dir else None)


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise NxError(f"cannot read: {e.strerror}", path=path) from None


def _asm(a: argparse.Namespace) -> int:
    from shader_svc.disk_cache import write_atomic
    from shader_svc.sm86.assemble import AsmError, assemble_program

    try:
        code = assemble_program(_read(a.source).decode("utf-8", "replace"))
    except AsmError as e:
        raise NxError(str(e), path=a.source) from None
    write_atomic(Path(a.output), code)
    return 0


def _disasm(a: argparse.Namespace) -> int:
    from shader_svc.sm86 import decode as dec

    try:
        insts = dec.decode_stream(_read(a.code))
    except dec.DecodeError as e:
        raise NxError(str(e), path=a.code) from None
    for i in insts:
        print(f"/*{i.addr:04x}*/ {i.text()} ;")
    return 0
