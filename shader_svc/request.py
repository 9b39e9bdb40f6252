"""A translation request as the shader service receives and stores it: the program record
(architecture, stage, machine code, local size), its cache key and the checks of its fields.
Apart from translate.py so that the per-architecture front ends can name it without importing
the dispatcher that imports them."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from nxrecomp.common.errors import NxError

ARCHS = {86: "SM86", 53: "SM53"}
STAGES = {1: "compute", 2: "vertex", 3: "fragment"}
MAX_CODE = 1 << 20  # 64k instructions: larger is not a shader, it is a mistake


class ProgramError(NxError):
    pass


@dataclass(frozen=True)
class Program:
    arch: int  # 86, 53
    stage: int  # 1 compute, 2 vertex, 3 fragment
    code: bytes
    local_size: tuple[int, int, int] = (64, 1, 1)
    # what the device that runs the SPIR-V has (lower/graphics.py FEATURE_* bits; 0: a plain
    # Vulkan 1.3 device); graphics stages read it, and it is part of the key
    features: int = 0

    def key(self) -> str:
        """Hex sha256 of everything that decides the translation."""
        return hashlib.sha256(self.serialize()).hexdigest()

    def serialize(self) -> bytes:
        """``NXSP`` arch, stage, local size, code; with features ``NXSF``, the same and the
        features word before the code (a program without features keeps its old bytes and key)."""
        if self.features:
            head = struct.pack("<4sII4I", b"NXSF", self.arch, self.stage, *self.local_size, self.features)
            return head + self.code
        return struct.pack("<4sII3I", b"NXSP", self.arch, self.stage, *self.local_size) + self.code

    @classmethod
    def deserialize(cls, data: bytes, path: str = "<program>") -> "Program":
        if len(data) >= 28 and data[:4] == b"NXSF":
            _, arch, stage, x, y, z, features = struct.unpack_from("<4sII4I", data)
            return cls(arch, stage, data[28:], (x, y, z), features)
        if len(data) < 24 or data[:4] != b"NXSP":
            raise ProgramError("not a stored program (bad header)", path=path)
        _, arch, stage, x, y, z = struct.unpack_from("<4sII3I", data)
        return cls(arch, stage, data[24:], (x, y, z))


# Translation features by the names the GPU process reports (gpu.proto AttachReply.features) ->
# Program.features bits (shader.proto).  descriptor_indexing: non-uniform indexing of arrays of
# sampled images and samplers (lower/graphics.py: bindless instructions index the pools).
FEATURES = {"descriptor_indexing": 0x1}
KNOWN_FEATURES = 0x1


def feature_bits(names) -> int:
    """Program.features of a device's feature names; names this translator has no use for are
    left out (a newer GPU process may report more)."""
    return sum(bit for name, bit in FEATURES.items() if name in set(names))


def make_program(arch: int, stage: int, code: bytes, local_size: list[int] | tuple[int, ...] = (), features: int = 0) -> Program:
    """Validate request fields (not the code: the decoder judges that) into a Program."""
    if arch not in ARCHS:
        raise ProgramError(
            f"unknown architecture {arch} (known: {', '.join(f'{k}={v}' for k, v in ARCHS.items())})", field="arch"
        )
    if stage not in STAGES:
        raise ProgramError(f"unknown stage {stage}", field="stage")
    ls = tuple(local_size) or (64, 1, 1)
    if len(ls) != 3 or not all(1 <= v <= 1024 for v in ls) or ls[0] * ls[1] * ls[2] > 1024:
        raise ProgramError(f"local size {list(ls)} is not 3 values of 1..1024 with a product <= 1024", field="local_size")
    if not code:
        raise ProgramError("empty program", field="code")
    if len(code) > MAX_CODE:
        raise ProgramError(f"program of {len(code)} bytes is larger than {MAX_CODE}", field="code")
    if features & ~KNOWN_FEATURES:
        raise ProgramError(f"unknown feature bits {features & ~KNOWN_FEATURES:#x} (known: {KNOWN_FEATURES:#x})", field="features")
    return Program(arch, stage, bytes(code), ls, features)  # type: ignore[arg-type]
