"""One guest program in, SPIR-V out: the request record, its cache key, and the dispatch to the
program part of its architecture (``PARTS``: ``sm53/program.py``, ``sm86/program.py``, the same
entries each: ``translate``, ``reflect_program``, ``translate_full``), which decodes it for its
stage and lowers it.  Every refusal is an ``NxError`` naming the field or the instruction
offset, so the service can answer it as INVALID_ARGUMENT."""

from __future__ import annotations

import json
import time
from types import ModuleType

from shader_svc.reflection import Reflection
from shader_svc.request import ARCHS, MAX_CODE, STAGES, Program, ProgramError, make_program  # noqa: F401 (the service's names)
from shader_svc.sm53 import program as sm53
from shader_svc.sm86 import program as sm86

PARTS: dict[int, ModuleType] = {53: sm53, 86: sm86}  # Maxwell (Switch 1), Ampere (Switch 2)


def _part(p: Program) -> ModuleType:
    part = PARTS.get(p.arch)
    if part is None:
        raise ProgramError(f"architecture {ARCHS.get(p.arch, p.arch)} is not translated yet", field="arch")
    return part


def translate(p: Program) -> bytes:
    """SPIR-V binary of a program; raises NxError (DecodeError, TranslateError, ProgramError,
    HeaderError)."""
    return _part(p).translate(p)


def reflect(p: Program) -> Reflection:
    """What a program uses (``reflection.Reflection``); decoding errors as for ``translate``."""
    return _part(p).reflect_program(p)


def translate_full(p: Program) -> tuple[bytes, Reflection]:
    """(SPIR-V, Reflection) of a program."""
    return _part(p).translate_full(p)


def translate_worker(serialized: bytes) -> tuple[str, bytes, bytes, float]:
    """Entry of a worker process: ("ok", SPIR-V, reflection JSON, seconds) or ("error",
    b"", message, seconds).  Plain values only, so nothing but bytes crosses the process pipe."""
    t0 = time.perf_counter()
    try:
        spv, refl = translate_full(Program.deserialize(serialized))
    except Exception as e:  # reported by the caller; the worker stays alive
        return "error", b"", f"{type(e).__name__}: {e}".encode(), time.perf_counter() - t0
    return "ok", spv, json.dumps(refl.to_dict()).encode(), time.perf_counter() - t0
