"""An SM86 program as the shader service sees it: decode (with the request's checks), translate
(compute kernels, and vertex/fragment programs: shader program header + code), and reflect what
it uses (``sm86/reflect.py``), in the service's ``Reflection`` record.  The same four entries as
``sm53/program.py``; ``shader_svc/translate.py`` picks one of the two by the request's arch."""

from __future__ import annotations

from shader_svc import sph
from shader_svc.reflection import Reflection
from shader_svc.request import STAGES, Program, ProgramError
from shader_svc.sm86 import decode as dec
from shader_svc.sm86 import reflect as rf
from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute
from shader_svc.sm86.to_spirv_gfx import translate_graphics


def decode_graphics(p: Program) -> tuple[list[dec.Inst], sph.Header]:
    """(instructions, header) of a vertex/fragment program: the shader program header, then
    the code (instruction offsets count from the start of the header)."""
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


def decode_program(p: Program) -> list[dec.Inst]:
    if p.stage != 1:
        raise ProgramError(f"stage {STAGES.get(p.stage, p.stage)} is a graphics stage: use decode_graphics", field="stage")
    if len(p.code) % 16:
        raise dec.DecodeError(
            f"program truncated: {len(p.code)} bytes is not a multiple of 16 (SM86 instructions are 16 bytes)",
            field="code",
            offset=len(p.code) & ~15,
        )
    return dec.decode_stream(p.code)


def translate(p: Program) -> bytes:
    """The SPIR-V of an SM86 program (no reflection)."""
    if p.stage != 1:
        return translate_graphics(*decode_graphics(p), p.features)
    return translate_compute(decode_program(p), ComputeSpec(p.local_size, p.banks, p.features, p.data))


def reflect_program(p: Program) -> Reflection:
    """What an SM86 program uses."""
    if p.stage != 1:
        return rf.reflect(*decode_graphics(p))
    return rf.reflect(decode_program(p))


def translate_full(p: Program) -> tuple[bytes, Reflection]:
    """(SPIR-V, Reflection) of an SM86 program."""
    if p.stage != 1:
        insts, header = decode_graphics(p)
        return translate_graphics(insts, header, p.features), rf.reflect(insts, header)
    insts = decode_program(p)
    return translate_compute(insts, ComputeSpec(p.local_size, p.banks, p.features, p.data)), rf.reflect(insts)
