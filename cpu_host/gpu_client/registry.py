"""Everything the CPU host has told the GPU process, kept so it can all be told again to a
restarted GPU process: pools, placed data, textures, samplers, programs, in registration order
(placements first: programs may hold their addresses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from cpu_host.gpu_client.memory import Pool


@dataclass(frozen=True)
class TextureDesc:
    id: int
    pool: int
    offset: int
    width: int
    height: int
    format: str
    block_linear: bool = True
    block_height_log2: int = 0
    pitch: int = 0
    render_target: bool = False
    gob: str = "fermi"  # GOB kind: "fermi" (Switch 1) or "turing" (Switch 2)
    layers: int = 1  # array layers (6 per cube)
    cube: bool = False
    samples: int = 1  # a multisampled render target: 2, 4 or 8 (resolved with RESOLVE)
    volume: bool = False  # a 3D render target: layers are its depth slices (a compute surface)
    one_dim: bool = False  # a 1D render target (height 1; layers > 1: a 1D array): the 1D surface pools
    block_depth_log2: int = 0  # a block-linear volume: block depth in slices (log2)


@dataclass(frozen=True)
class SamplerDesc:
    id: int
    linear: bool = False
    repeat: bool = False
    compare: int = 0  # depth compare: 0 none, else 1 + compare op (gpu_host/PROTOCOL.md)


@dataclass(frozen=True)
class ProgramDesc:
    id: int
    vertex_spirv: bytes
    fragment_spirv: bytes
    # a compute program whose code holds the addresses of placements (DataDesc ids): ``rebuild``
    # gives its SPIR-V for the addresses the attached GPU process placed them at (GpuClient.placed)
    data: tuple[int, ...] = ()
    rebuild: Callable[[dict[int, int]], bytes] | None = field(default=None, compare=False, repr=False)
    # gfx-geom: ((input primitive: shader.proto Stage 4..8, SPIR-V), ...); () without a geometry stage
    geometry: tuple[tuple[int, bytes], ...] = ()


@dataclass(frozen=True)
class DataDesc:
    """Global data placed in the GPU process's device memory (PROTOCOL.md "Global data"):
    ``size`` bytes; ``regions(address)`` the (offset, bytes) written once its address is known
    (relocated for that address)."""

    id: int
    size: int
    regions: Callable[[int], Sequence[tuple[int, bytes]]] = field(compare=False, repr=False)


@dataclass
class Registry:
    pools: dict[int, Pool] = field(default_factory=dict)
    objects: dict[tuple[str, int], TextureDesc | SamplerDesc | ProgramDesc | DataDesc] = field(default_factory=dict)

    def add(self, obj: TextureDesc | SamplerDesc | ProgramDesc | DataDesc) -> None:
        key = (type(obj).__name__, obj.id)
        self.objects.pop(key, None)  # re-registration moves it last: later objects may depend on it
        self.objects[key] = obj
