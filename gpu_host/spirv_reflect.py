"""Just enough SPIR-V reflection to refuse a program whose resources do not match the GPU
process's fixed descriptor layout (a mismatch is undefined behaviour that can crash a driver).

Layout: set 0, bindings 0-3 uniform blocks, bindings 4-7 combined image samplers; no push
constants or storage buffers.  Also reports the vertex stage's input locations.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

SPIRV_MAGIC = 0x07230203
OP_DECORATE, OP_VARIABLE, OP_TYPE_POINTER, OP_ENTRY_POINT = 71, 59, 32, 15
DEC_BUILTIN, DEC_LOCATION, DEC_BINDING, DEC_SET = 11, 30, 33, 34
SC_UNIFORM_CONSTANT, SC_INPUT, SC_UNIFORM, SC_PUSH_CONSTANT, SC_STORAGE_BUFFER = 0, 1, 2, 9, 12
UBO_BINDINGS = range(0, 4)
SAMPLER_BINDINGS = range(4, 8)


class SpirvError(ValueError):
    pass


@dataclass(frozen=True)
class Reflection:
    execution_model: int
    input_locations: frozenset[int]
    bindings: frozenset[int]


def reflect(code: bytes, what: str) -> Reflection:
    if len(code) < 20 or len(code) % 4:
        raise SpirvError(f"{what}: {len(code)} bytes is not a SPIR-V module")
    words = struct.unpack(f"<{len(code) // 4}I", code)
    if words[0] != SPIRV_MAGIC:
        raise SpirvError(f"{what}: bad SPIR-V magic {words[0]:#x}")
    deco: dict[int, dict[int, int]] = {}
    ptr_sc: dict[int, int] = {}
    variables: list[tuple[int, int]] = []
    models = []
    i = 5
    while i < len(words):
        wc, op = words[i] >> 16, words[i] & 0xFFFF
        if wc == 0 or i + wc > len(words):
            raise SpirvError(f"{what}: instruction at word {i} has bad word count {wc}")
        ins = words[i:i + wc]
        if op == OP_DECORATE and wc >= 3:
            deco.setdefault(ins[1], {})[ins[2]] = ins[3] if wc >= 4 else 1
        elif op == OP_TYPE_POINTER and wc == 4:
            ptr_sc[ins[1]] = ins[2]
        elif op == OP_VARIABLE and wc >= 4:
            variables.append((ins[2], ins[3]))
        elif op == OP_ENTRY_POINT and wc >= 3:
            models.append(ins[1])
        i += wc
    if len(models) != 1:
        raise SpirvError(f"{what}: expected one entry point, found {len(models)}")
    inputs, bindings = set(), set()
    for vid, sc in variables:
        d = deco.get(vid, {})
        if sc in (SC_PUSH_CONSTANT, SC_STORAGE_BUFFER):
            raise SpirvError(f"{what}: variable %{vid} uses storage class {sc} (push constants / storage buffers are not supported)")
        if sc in (SC_UNIFORM, SC_UNIFORM_CONSTANT):
            if d.get(DEC_SET, 0) != 0 or DEC_BINDING not in d:
                raise SpirvError(f"{what}: resource %{vid} is not in descriptor set 0 with a binding")
            b = d[DEC_BINDING]
            want = UBO_BINDINGS if sc == SC_UNIFORM else SAMPLER_BINDINGS
            if b not in want:
                kind = "uniform block" if sc == SC_UNIFORM else "sampler"
                raise SpirvError(f"{what}: {kind} %{vid} at binding {b}, must be in {want.start}..{want.stop - 1}")
            bindings.add(b)
        elif sc == SC_INPUT and DEC_LOCATION in d and DEC_BUILTIN not in d:
            inputs.add(d[DEC_LOCATION])
    return Reflection(models[0], frozenset(inputs), frozenset(bindings))
