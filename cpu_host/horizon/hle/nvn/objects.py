"""Host-side records of the NVN objects a guest created.  The guest's object struct holds the
record's id in its first word; builders are plain settings kept by the builder's address."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpu_host import packets as P
from cpu_host.gpu_client.blob import Block
from gpu_host.packets import Encoded


@dataclass
class Device:
    id: int


@dataclass
class DescriptorPool:
    """A texture or sampler pool: registrations go to the device-wide slot tables."""

    id: int


@dataclass
class MemoryPool:
    id: int
    addr: int  # guest address of the storage = its GPU address
    size: int
    cpu_cached: bool = False  # NVN_MEMORY_POOL_FLAGS_CPU_CACHED: writes reach the GPU by flushes


@dataclass
class Buffer:
    id: int
    pool: MemoryPool
    offset: int
    size: int


@dataclass
class Texture:
    id: int
    width: int
    height: int
    format: str
    flags: int
    pool: MemoryPool | None
    offset: int
    block_height_log2: int
    samples: int = 1  # nvnTextureBuilderSetSamples: a multisampled render target (2, 4, 8)
    layers: int = 1  # nvnTextureBuilderSetDepth of an array or cube target (a layered surface: >1)
    volume: bool = False  # NVN_TEXTURE_TARGET_3D: ``layers`` are depth slices (a 3D compute surface)
    one_dim: bool = False  # NVN_TEXTURE_TARGET_1D / _1D_ARRAY: one row (a 1D compute surface)


@dataclass
class Sampler:
    id: int
    linear: bool
    repeat: bool


@dataclass
class Program:
    id: int
    registered: bool = False
    pools: bool = False  # a stage reads the bindless texture/sampler pools (TEX.B and kin)


@dataclass
class Sync:
    id: int
    seq: int = 0  # submission whose completion signals it; 0 = not fenced yet


@dataclass
class Window:
    id: int
    textures: list[Texture]
    next: int = 0


@dataclass
class Recording:
    """One command buffer's recording: GPU packets plus the state a draw needs."""

    commands: Any = field(default_factory=list)  # packet tuples, or the native recorder's native.Commands
    attribs: list[list[int]] = field(default_factory=list)  # [location, format, offset]
    stride: int = 0
    layout: tuple | None = None  # last VERTEX_LAYOUT emitted
    program: Program | None = None  # last program bound
    pools: tuple | None = None  # last POOLS emitted
    # Fixed-function state as bound so far; a bind or a stencil setter re-sends the whole packet.
    ds: list = field(default_factory=lambda: list(P.DS_DEFAULT[1:]))  # DEPTH_STENCIL's fields
    color_blend: int = 0  # NVNcolorState.blend_enable mask
    blend: tuple | None = None  # target 0's (src_c, dst_c, src_a, dst_a, eq_c, eq_a); None: no blend state bound
    channel_mask: int | None = None  # NVNchannelMaskState.masks; None: none bound
    blends: dict = field(default_factory=dict)  # targets 1..7: (src_c, dst_c, src_a, dst_a, eq_c, eq_a) bound
    extra_sent: set = field(default_factory=set)  # targets 1..7 whose BLEND_STATE was recorded (not the default)
    ranges: set = field(default_factory=set)  # guest memory [start, end) the recording went into (handles.py)


@dataclass(frozen=True)
class RecordedCommands:
    """A finished recording, as a command handle refers to it: its packets encoded once when the
    recording ended (a submit copies the bytes; msgpack, or the native recorder's binary
    packets), and the render targets it draws into."""

    encoded: Encoded | Block
    targets: frozenset[int]


@dataclass
class CommandBuffer:
    id: int
    recording: Recording | None = None
    memory: dict = field(default_factory=dict)  # "command" / "control": the guest range [start, end) given last


@dataclass
class Queue:
    id: int
    pending: list = field(default_factory=list)  # submitted, not flushed: packets, Encoded blocks
    targets: set[int] = field(default_factory=set)  # render targets of the Encoded blocks in `pending`
    syncs: list[Sync] = field(default_factory=list)  # fenced in `pending`
    last_seq: int = 0  # the last submission sent
