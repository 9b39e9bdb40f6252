"""A translation request as the shader service receives and stores it: the program record
(architecture, stage, machine code, local size, features, the program's own constant banks),
its cache key and the checks of its fields.

Program-owned constant banks: a compiler may place data the code reads in a constant bank it
ships with the code rather than one the application binds at run time -- ptxas for SM5x puts
float literals in c[0x2] (the cubin's ``.nv.constant2.<kernel>`` section; CUDA binary utilities
and the cubin's section table).  Bank 0 (kernel parameters, driver data) is always bound at run
time, so it is never part of a program.  Sources of the limits: a constant bank address on
Maxwell/Ampere is a 5-bit bank number and a 16-bit byte offset (nvdisasm prints ``c[0x1f][0xfffc]``
at most), so a bank is at most 64 KiB of 32-bit words.

Program-owned global data (shader-data, issue 31): a CUDA loader places a module's ``__device__``
globals (the cubin's ``.nv.global.init`` with its relocations applied, ``.nv.global`` zeros) at a
device address and fills bank 4 with their addresses; -G code then calls through function
pointers it loads from that memory (vtables, tables of function pointers).  The request carries
those placed bytes, ((device address, bytes), ...), so the translation can find the callees
(``ComputeSpec.data``, lower/indirect.py); they are part of the key.  A region is 4-aligned, a
multiple of 4 bytes (the words the call analysis reads), regions do not overlap, and all of them
together are at most ``MAX_DATA`` bytes (the analysis reads every word: a bound on its work).
Apart from translate.py so that the per-architecture front ends can name it without importing
the dispatcher that imports them."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from nxrecomp.common.errors import NxError

ARCHS = {86: "SM86", 53: "SM53"}
STAGES = {1: "compute", 2: "vertex", 3: "fragment"}
# gfx-geom: a geometry program is translated for one input primitive (sph.py IN_PRIMS: SPIR-V
# declares it, the guest's header does not), so each is a stage of its own (shader.proto Stage)
GEOMETRY_STAGES = {4: "points", 5: "lines", 6: "triangles", 7: "lines_adjacency", 8: "triangles_adjacency"}
STAGES.update({k: f"geometry_{v}" for k, v in GEOMETRY_STAGES.items()})
MAX_CODE = 1 << 20  # 64k instructions: larger is not a shader, it is a mistake
MAX_BANK = 31  # the bank field of a c[bank][offset] operand is 5 bits
MAX_BANK_BYTES = 1 << 16  # ... and the byte offset 16 bits
MAX_DATA = 1 << 21  # global data, all regions together: 2 MiB (every word is read by lower/indirect.py;
# half of gRPC's default 4 MiB message limit, so the whole request still arrives)
MAX_DATA_REGIONS = 64


class ProgramError(NxError):
    pass


@dataclass(frozen=True)
class Program:
    arch: int  # 86, 53
    stage: int  # 1 compute, 2 vertex, 3 fragment, 4..8 geometry (GEOMETRY_STAGES)
    code: bytes
    local_size: tuple[int, int, int] = (64, 1, 1)
    # what the device that runs the SPIR-V has (lower/graphics.py FEATURE_* bits; 0: a plain
    # Vulkan 1.3 device); graphics stages read it, and it is part of the key
    features: int = 0
    # constant banks that are part of the program, ((bank, contents), ...) sorted by bank
    # (compute programs; see the module docstring); part of the key
    banks: tuple[tuple[int, bytes], ...] = ()
    # the program's placed global data, ((device address, bytes), ...) sorted by address
    # (compute programs; see the module docstring); part of the key
    data: tuple[tuple[int, bytes], ...] = ()

    def key(self) -> str:
        """Hex sha256 of everything that decides the translation."""
        return hashlib.sha256(self.serialize()).hexdigest()

    def serialize(self) -> bytes:
        """``NXSP`` arch, stage, local size, code; with features ``NXSF``, the same and the
        features word before the code; with program banks ``NXSB``, as ``NXSF`` then the bank
        count and per bank its number, byte size and bytes, then the code; with global data
        ``NXSD``, as ``NXSB`` then the region count and per region its address (64 bits), byte
        size and bytes, then the code.  A program without features, banks or data keeps its old
        bytes and key (caches and program stores stay valid)."""
        if self.data:
            head = struct.pack("<4sII4II", b"NXSD", self.arch, self.stage, *self.local_size, self.features, len(self.banks))
            table = b"".join(struct.pack("<II", n, len(d)) + d for n, d in self.banks)
            table += struct.pack("<I", len(self.data)) + b"".join(struct.pack("<QI", a, len(d)) + d for a, d in self.data)
            return head + table + self.code
        if self.banks:
            head = struct.pack("<4sII4II", b"NXSB", self.arch, self.stage, *self.local_size, self.features, len(self.banks))
            table = b"".join(struct.pack("<II", n, len(d)) + d for n, d in self.banks)
            return head + table + self.code
        if self.features:
            head = struct.pack("<4sII4I", b"NXSF", self.arch, self.stage, *self.local_size, self.features)
            return head + self.code
        return struct.pack("<4sII3I", b"NXSP", self.arch, self.stage, *self.local_size) + self.code

    @classmethod
    def deserialize(cls, data: bytes, path: str = "<program>") -> "Program":
        if len(data) >= 32 and data[:4] in (b"NXSB", b"NXSD"):
            _, arch, stage, x, y, z, features, n = struct.unpack_from("<4sII4II", data)
            pos, banks = 32, []
            for i in range(n):
                if pos + 8 > len(data):
                    raise ProgramError(f"stored program truncated in bank table entry {i}", path=path, offset=pos)
                num, size = struct.unpack_from("<II", data, pos)
                if pos + 8 + size > len(data):
                    raise ProgramError(f"stored program truncated in bank c[{num:#x}] ({size} bytes)", path=path, offset=pos)
                banks.append((num, data[pos + 8 : pos + 8 + size]))
                pos += 8 + size
            regions = []
            if data[:4] == b"NXSD":
                if pos + 4 > len(data):
                    raise ProgramError("stored program truncated before its data table", path=path, offset=pos)
                (m,), pos = struct.unpack_from("<I", data, pos), pos + 4
                for i in range(m):
                    if pos + 12 > len(data):
                        raise ProgramError(f"stored program truncated in data table entry {i}", path=path, offset=pos)
                    addr, size = struct.unpack_from("<QI", data, pos)
                    if pos + 12 + size > len(data):
                        raise ProgramError(f"stored program truncated in data at {addr:#x} ({size} bytes)", path=path, offset=pos)
                    regions.append((addr, data[pos + 12 : pos + 12 + size]))
                    pos += 12 + size
            return cls(arch, stage, data[pos:], (x, y, z), features, tuple(banks), tuple(regions))
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
# memory_barrier: OpMemoryBarrier runs correctly (MEMBAR / __threadfence translated as one,
# lower/fence.py; lavapipe 22.3 stalls on it, so its GPU process leaves the bit out)
FEATURES["memory_barrier"] = 0x2
# shader_clock (shader-ctl2): the device has VK_KHR_shader_clock's subgroup and device clocks
# (SR_CLOCK / SR_GLOBALTIMER read as OpReadClockKHR, lower/clock.py; without it refused by name)
FEATURES["shader_clock"] = 0x4
# denorm_preserve32 (shader-nv): the device can keep f32 denormals (Vulkan 1.2
# shaderDenormPreserveFloat32): compute modules declare DenormPreserve 32, as CUDA's f32
# arithmetic without .FTZ keeps them; without it a driver may flush them (NVIDIA's does)
FEATURES["denorm_preserve32"] = 0x8
KNOWN_FEATURES = 0x1 | 0x2 | 0x4 | 0x8


def feature_bits(names) -> int:
    """Program.features of a device's feature names; names this translator has no use for are
    left out (a newer GPU process may report more)."""
    return sum(bit for name, bit in FEATURES.items() if name in set(names))


def check_banks(stage: int, banks) -> tuple[tuple[int, bytes], ...]:
    """The program's constant banks ((bank, bytes) pairs, any order) checked and sorted by bank;
    each refusal names the field ``banks[i]``."""
    out: dict[int, bytes] = {}
    for i, (num, data) in enumerate(banks):
        where = f"banks[{i}]"
        if not 1 <= num <= MAX_BANK:
            why = "bank 0 (kernel parameters) is bound at run time, never part of a program" if num == 0 else "not 1..31"
            raise ProgramError(f"constant bank number {num}: {why}", field=f"{where}.bank")
        if num in out:
            raise ProgramError(f"constant bank c[{num:#x}] given twice", field=f"{where}.bank")
        if not data:
            raise ProgramError(f"constant bank c[{num:#x}] is empty", field=f"{where}.data")
        if len(data) % 4:
            raise ProgramError(
                f"constant bank c[{num:#x}]: {len(data)} bytes is not a multiple of 4 (32-bit words)", field=f"{where}.data"
            )
        if len(data) > MAX_BANK_BYTES:
            raise ProgramError(
                f"constant bank c[{num:#x}]: {len(data)} bytes is larger than {MAX_BANK_BYTES}", field=f"{where}.data"
            )
        out[num] = bytes(data)
    if out and stage != 1:
        raise ProgramError(
            f"constant banks {sorted(out)} given for a {STAGES.get(stage, stage)} program: graphics stages read banks 0..3 "
            "from uniform blocks bound at draw time (program banks are for compute programs)",
            field="banks",
        )
    return tuple(sorted(out.items()))


def check_data(stage: int, data) -> tuple[tuple[int, bytes], ...]:
    """The program's placed global data ((device address, bytes) pairs, any order) checked and
    sorted by address; each refusal names the field ``data[i]``."""
    out: list[tuple[int, bytes, int]] = []
    total = 0
    for i, (addr, blob) in enumerate(data):
        where = f"data[{i}]"
        if i >= MAX_DATA_REGIONS:
            raise ProgramError(f"more than {MAX_DATA_REGIONS} global data regions", field=where)
        if not blob:
            raise ProgramError(f"global data at {addr:#x} is empty", field=f"{where}.data")
        if addr % 4 or len(blob) % 4:
            raise ProgramError(
                f"global data at {addr:#x}, {len(blob)} bytes: address and size must be multiples of 4 (32-bit words)",
                field=where,
            )
        if addr <= 0 or addr + len(blob) > 1 << 64:
            raise ProgramError(
                f"global data at {addr:#x}, {len(blob)} bytes: not a placed region (address 0, or past the 64-bit address space)",
                field=f"{where}.address",
            )
        total += len(blob)
        if total > MAX_DATA:
            raise ProgramError(f"global data of {total} bytes in all is larger than {MAX_DATA}", field=f"{where}.data")
        out.append((addr, bytes(blob), i))
    out.sort()
    for (a, d, _), (b, _, j) in zip(out, out[1:]):
        if b < a + len(d):
            raise ProgramError(
                f"global data at {b:#x} overlaps the region at {a:#x} ({len(d)} bytes)", field=f"data[{j}].address"
            )
    if out and stage != 1:
        raise ProgramError(
            f"global data given for a {STAGES.get(stage, stage)} program: only compute programs carry their placed "
            "__device__ globals (graphics stages read memory through bound resources)",
            field="data",
        )
    return tuple((a, d) for a, d, _ in out)


def make_program(
    arch: int,
    stage: int,
    code: bytes,
    local_size: list[int] | tuple[int, ...] = (),
    features: int = 0,
    banks=(),
    data=(),
) -> Program:
    """Validate request fields (not the code: the decoder judges that) into a Program.  ``banks``:
    (bank number, bytes) pairs, the program's own constant banks (``check_banks``); ``data``:
    (device address, bytes) pairs, its placed global data (``check_data``)."""
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
    return Program(arch, stage, bytes(code), ls, features, check_banks(stage, banks), check_data(stage, data))  # type: ignore[arg-type]
