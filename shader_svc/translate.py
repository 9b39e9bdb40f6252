"""One guest program in, SPIR-V out: the request record, its cache key, and the dispatch to the
decoder/lowering of its architecture and stage.  Every refusal is an ``NxError`` naming the
field or the instruction offset, so the service can answer it as INVALID_ARGUMENT."""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from nxrecomp.errors import NxError

ARCHS = {86: "SM86", 53: "SM53"}
STAGES = {1: "compute", 2: "vertex", 3: "fragment"}
MAX_CODE = 1 << 20          # 64k instructions: larger is not a shader, it is a mistake


class ProgramError(NxError):
    pass


@dataclass(frozen=True)
class Program:
    arch: int                               # 86, 53
    stage: int                              # 1 compute, 2 vertex, 3 fragment
    code: bytes
    local_size: tuple[int, int, int] = (64, 1, 1)

    def key(self) -> str:
        """Hex sha256 of everything that decides the translation."""
        return hashlib.sha256(self.serialize()).hexdigest()

    def serialize(self) -> bytes:
        return struct.pack("<4sII3I", b"NXSP", self.arch, self.stage, *self.local_size) + self.code

    @classmethod
    def deserialize(cls, data: bytes, path: str = "<program>") -> "Program":
        if len(data) < 24 or data[:4] != b"NXSP":
            raise ProgramError("not a stored program (bad header)", path=path)
        _, arch, stage, x, y, z = struct.unpack_from("<4sII3I", data)
        return cls(arch, stage, data[24:], (x, y, z))


def make_program(arch: int, stage: int, code: bytes, local_size: list[int] | tuple[int, ...] = ()) -> Program:
    """Validate request fields (not the code: the decoder judges that) into a Program."""
    if arch not in ARCHS:
        raise ProgramError(f"unknown architecture {arch} (known: {', '.join(f'{k}={v}' for k, v in ARCHS.items())})",
                           field="arch")
    if stage not in STAGES:
        raise ProgramError(f"unknown stage {stage}", field="stage")
    ls = tuple(local_size) or (64, 1, 1)
    if len(ls) != 3 or not all(1 <= v <= 1024 for v in ls) or ls[0] * ls[1] * ls[2] > 1024:
        raise ProgramError(f"local size {list(ls)} is not 3 values of 1..1024 with a product <= 1024",
                           field="local_size")
    if not code:
        raise ProgramError("empty program", field="code")
    if len(code) > MAX_CODE:
        raise ProgramError(f"program of {len(code)} bytes is larger than {MAX_CODE}", field="code")
    return Program(arch, stage, bytes(code), ls)  # type: ignore[arg-type]


def translate(p: Program) -> bytes:
    """SPIR-V binary of a program; raises NxError (DecodeError, TranslateError, ProgramError,
    HeaderError)."""
    if p.arch == 53:
        return translate_full(p)[0]
    if p.stage != 1 and p.arch == 86:
        from shader_svc.sm86.to_spirv_gfx import translate_graphics

        return translate_graphics(*_decode_graphics(p))
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    return translate_compute(_decode(p), ComputeSpec(p.local_size))


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
    if p.arch == 53:        # Maxwell (Switch 1): shader_svc/sm53
        from shader_svc.sm53.program import translate_full as translate_full53

        return translate_full53(p)
    from shader_svc.sm86 import reflect as rf

    if p.stage != 1 and p.arch == 86:
        from shader_svc.sm86.to_spirv_gfx import translate_graphics

        insts, header = _decode_graphics(p)
        return translate_graphics(insts, header), rf.reflect(insts, header)
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

    insts = _decode(p)
    return translate_compute(insts, ComputeSpec(p.local_size)), rf.reflect(insts)


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
    body = p.code[header.size:]
    if not body:
        raise ProgramError(f"no instructions after the {header.size}-byte header", field="code", offset=header.size)
    if len(body) % 16:
        raise dec.DecodeError(f"program truncated: {len(body)} bytes after the header is not a multiple of 16 "
                              f"(SM86 instructions are 16 bytes)", field="code",
                              offset=header.size + (len(body) & ~15))
    return dec.decode_stream(body, base=header.size), header


def _decode(p: Program) -> list:
    if p.arch != 86:
        raise ProgramError(f"architecture {ARCHS.get(p.arch, p.arch)} is not translated yet", field="arch")
    if p.stage != 1:
        raise ProgramError(f"stage {STAGES.get(p.stage, p.stage)} is not translated yet", field="stage")
    from shader_svc.sm86 import decode as dec

    if len(p.code) % 16:
        raise dec.DecodeError(f"program truncated: {len(p.code)} bytes is not a multiple of 16 "
                              f"(SM86 instructions are 16 bytes)", field="code", offset=len(p.code) & ~15)
    return dec.decode_stream(p.code)
