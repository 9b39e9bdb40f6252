"""An SM53 program as the shader service sees it: decode (with the request's checks), translate
(compute kernels, and vertex/fragment programs: shader program header + code), and reflect what
it uses (``sm53/reflect.py``), in the service's ``Reflection`` record.
"""

from __future__ import annotations

from shader_svc import sph
from shader_svc.request import STAGES, Program, ProgramError
from shader_svc.sm53 import decode as dec
from shader_svc.sm53.reflect import reflect, reflect_graphics
from shader_svc.sm53.to_spirv import ComputeSpec, translate_compute
from shader_svc.sm53.to_spirv_gfx import translate_graphics


def decode_graphics(p: Program) -> tuple[list[dec.Inst], sph.Header]:
    """(instructions, header) of a vertex/fragment program: the shader program header, then the
    code, whose groups of four (control word + three) count from the code's start; offsets in
    errors count from the header's start, as the program sits in guest memory."""
    try:
        header = sph.parse(p.code, STAGES[p.stage])
    except sph.HeaderError as e:  # say which translator judged it: SM53 programs carry a v3/v4 header
        msg = str(e.args[0]).split(": ", 1)[-1] if (e.field or e.offset is not None) else str(e)
        raise sph.HeaderError(f"SM53 {STAGES[p.stage]} program: {msg}", field=e.field, offset=e.offset) from None
    body = p.code[header.size :]
    if not body:
        raise ProgramError(f"no instructions after the {header.size}-byte header", field="code", offset=header.size)
    if len(body) % 8:
        raise dec.DecodeError(
            f"program truncated: {len(body)} bytes after the header is not a multiple of 8 (SM53 instructions are 8 bytes)",
            field="code",
            offset=header.size + (len(body) & ~7),
        )
    return dec.decode_stream(body, base_addr=header.size), header


def decode_program(p: Program) -> list[dec.Inst]:
    if p.stage != 1:
        raise ProgramError(f"stage {STAGES.get(p.stage, p.stage)} is a graphics stage: use decode_graphics", field="stage")
    if len(p.code) % 8:
        raise dec.DecodeError(
            f"program truncated: {len(p.code)} bytes is not a multiple of 8 (SM53 instructions are 8 bytes)",
            field="code",
            offset=len(p.code) & ~7,
        )
    return dec.decode_stream(p.code)


def translate_full(p: Program):
    """(SPIR-V, Reflection) of an SM53 program."""
    if p.stage != 1:
        insts, header = decode_graphics(p)
        return translate_graphics(insts, header, p.features), reflect_graphics(insts, header)
    insts = decode_program(p)
    return translate_compute(insts, ComputeSpec(p.local_size, p.banks, p.features, p.data)), reflect(insts)


def translate(p: Program) -> bytes:
    """The SPIR-V of an SM53 program (its reflection is made and dropped: it is cheap)."""
    return translate_full(p)[0]


def reflect_program(p: Program):
    """What an SM53 program uses."""
    return translate_full(p)[1]
