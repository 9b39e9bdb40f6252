"""One guest program in, SPIR-V out: the request record, its cache key, and the dispatch to the
decoder/lowering of its architecture and stage.  Every refusal is an ``NxError`` naming the
field or the instruction offset, so the service can answer it as INVALID_ARGUMENT."""

from __future__ import annotations

from shader_svc.request import ARCHS, MAX_CODE, STAGES, Program, ProgramError, make_program  # noqa: F401 (the service's names)


def translate(p: Program) -> bytes:
    """SPIR-V binary of a program; raises NxError (DecodeError, TranslateError, ProgramError,
    HeaderError)."""
    if p.arch == 53:
        return translate_full(p)[0]
    if p.stage != 1 and p.arch == 86:
        from shader_svc.sm86.to_spirv_gfx import translate_graphics

        return translate_graphics(*_decode_graphics(p), p.features)
    from shader_svc.sm86.to_spirv import ComputeSpec
    from shader_svc.sm86.to_spirv import translate_compute

    return translate_compute(_decode(p), ComputeSpec(p.local_size, p.banks, p.features))


def reflect(p: Program):
    """What a program uses (``sm86.reflect.Reflection``); decoding errors as for ``translate``."""
    if p.arch == 53:
        return translate_full(p)[1]
    from shader_svc.sm86 import reflect as rf

    if p.stage != 1 and p.arch == 86:
        return rf.reflect(*_decode_graphics(p))
    return rf.reflect(_decode(p))


def translate_full(p: Program):
    """(SPIR-V, Reflection) of a program."""
    if p.arch == 53:  # Maxwell (Switch 1): shader_svc/sm53
        from shader_svc.sm53.program import translate_full as translate_full53

        return translate_full53(p)
    from shader_svc.sm86 import reflect as rf

    if p.stage != 1 and p.arch == 86:
        from shader_svc.sm86.to_spirv_gfx import translate_graphics

        insts, header = _decode_graphics(p)
        return translate_graphics(insts, header, p.features), rf.reflect(insts, header)
    from shader_svc.sm86.to_spirv import ComputeSpec
    from shader_svc.sm86.to_spirv import translate_compute

    insts = _decode(p)
    return translate_compute(insts, ComputeSpec(p.local_size, p.banks, p.features)), rf.reflect(insts)


def translate_worker(serialized: bytes) -> tuple[str, bytes, bytes, float]:
    """Entry of a worker process: ("ok", SPIR-V, reflection JSON, seconds) or ("error",
    b"", message, seconds).  Plain values only, so nothing but bytes crosses the process pipe."""
    import json
    import time

    t0 = time.perf_counter()
    try:
        spv, refl = translate_full(Program.deserialize(serialized))
    except Exception as e:  # reported by the caller; the worker stays alive
        return "error", b"", f"{type(e).__name__}: {e}".encode(), time.perf_counter() - t0
    return "ok", spv, json.dumps(refl.to_dict()).encode(), time.perf_counter() - t0


def _decode_graphics(p: Program):
    """(instructions, header) of a vertex/fragment program: the shader program header, then
    the code (instruction offsets count from the start of the header)."""
    from shader_svc import sph
    from shader_svc.sm86 import decode as dec

    header = sph.parse(p.code, STAGES[p.stage])
    body = p.code[header.size :]
    if not body:
        raise ProgramError(f"no instructions after the {header.size}-byte header", field="code", offset=header.size)
    if len(body) % 16:
        raise dec.DecodeError(
            f"program truncated: {len(body)} bytes after the header is not a multiple of 16 (SM86 instructions are 16 bytes)",
            field="code",
            offset=header.size + (len(body) & ~15),
        )
    return dec.decode_stream(body, base=header.size), header


def _decode(p: Program) -> list:
    if p.arch != 86:
        raise ProgramError(f"architecture {ARCHS.get(p.arch, p.arch)} is not translated yet", field="arch")
    if p.stage != 1:
        raise ProgramError(f"stage {STAGES.get(p.stage, p.stage)} is not translated yet", field="stage")
    from shader_svc.sm86 import decode as dec

    if len(p.code) % 16:
        raise dec.DecodeError(
            f"program truncated: {len(p.code)} bytes is not a multiple of 16 (SM86 instructions are 16 bytes)",
            field="code",
            offset=len(p.code) & ~15,
        )
    return dec.decode_stream(p.code)
