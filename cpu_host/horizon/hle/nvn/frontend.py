"""NVN served by host functions (see examples/horizon_hello/sdk/nvn.h for the guest's view).

Objects become GPU-process registrations (``cpu_host.gpu_client``): a memory pool's guest
pages get a memfd behind them (``guest_memory``) that the GPU process maps, so CPU writes need
no upload; textures in pools are read by the GPU process in their block-linear layout;
render targets and window textures are GPU-owned.  Command buffers are recorded here, at the
API level, into the ring's packets; a queue sends what was submitted at Flush, Finish, a
present, or a sync wait, as one ring submission.  GPU addresses are guest addresses: a buffer
at pool storage + offset has that address, so an address maps back to (pool, offset).

Fixed-function state (depth/stencil, polygon, blend, colour, channel-mask, multisample) lives in
plain structures of the guest's (nvn.h's layouts, ours) that the state functions fill; a bind
reads the structure and records the protocol's state packet (DEPTH_STENCIL, RASTER, BLEND_STATE,
MULTISAMPLE); stencil reference and masks are command-buffer state folded into DEPTH_STENCIL.
A texture made with nvnTextureBuilderSetSamples is a multisampled render target; the game resolves
it with nvnCommandBufferDownsample (RESOLVE).

With ``cpu_host.nvn_recorder = native`` (the default) the per-draw calls (draws; vertex/index/
uniform/texture/program binds; vertex, polygon, depth-stencil, colour, blend, channel-mask and
multisample state binds; stencil values; viewport, scissor, depth bias, blend colour) are host functions in C (``recorder.c`` through
``native.py``) that record binary packets with no Python on the call path; this file mirrors the
objects they need into the recorder, appends the packets of the calls it still serves into the same
stream, and answers for the hot calls only where the C code cannot (a named guest error, a command
buffer struct it has not seen).  A recording then ends as a ``blob.Block`` and a queue's submission
goes through the ring as binary packets (tag 4).  With ``python`` everything is recorded here as
packet tuples and sent as msgpack, as before.

A command handle (``nvnCommandBufferEndRecording``) keeps its recording until the command or
control memory it was recorded into is given to a command buffer again; recordings made with no
command memory are kept within ``cpu_host.nvn_unbacked_command_bytes``, least recently used
freed first (``handles.py``).

Guest mistakes (a bad handle, an address outside every pool, a texture used as a target that
was not made one) end the process with a report naming the function and the value: the GPU
process would reject the submission anyway, and a game that does this is broken."""

from __future__ import annotations

import logging
import math
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.events import EventFunctions
from cpu_host.horizon.hle.nvn.guest_memory import back_with_memfd
from cpu_host.horizon.hle.nvn.handles import CommandHandles, Held, nbytes
from cpu_host.horizon.hle.nvn.objects import (
    Buffer,
    CommandBuffer,
    DescriptorPool,
    Device,
    MemoryPool,
    Program,
    Queue,
    RecordedCommands,
    Recording,
    Sampler,
    Sync,
    Texture,
    Window,
)
from cpu_host.horizon.hle.registry import Binding, HostFunction
from gpu_host import blocklinear
from gpu_host import packets as P
from gpu_host.spirv_reflect import SpirvError, reflect
from nxrecomp.common import settings
from shader_svc.request import feature_bits

log = logging.getLogger("cpu_host.nvn")

FORMATS = {
    1: ("RGBA8", 4, 1),
    2: ("BGRA8", 4, 1),
    3: ("R8", 1, 1),
    4: ("RG8", 2, 1),
    5: ("RGB565", 2, 1),
    6: ("RGBA16F", 8, 1),
    7: ("RGBA32F", 16, 1),
    8: ("BC1", 8, 4),
    9: ("BC3", 16, 4),
    10: ("BC7", 16, 4),
    11: ("ASTC_4x4", 16, 4),
    12: ("ASTC_8x8", 16, 8),  # code -> (name, bytes per element, block size)
    13: ("D16", 2, 1),
    14: ("D24S8", 4, 1),
    15: ("D32F", 4, 1),
    16: ("D32F_S8", 8, 1),
}
DEPTH_FORMATS = {"D16", "D24S8", "D32F", "D32F_S8"}
FACE_FRONT, FACE_BACK = 1, 2
POLYGON_OFFSET_LINE, POLYGON_OFFSET_FILL = 2, 4
MAX_TARGETS = 8  # colour targets a colour/blend/channel-mask state may name (RENDER_TARGETS draws up to 8)
# Defaults of our state structures (nvn.h), as words: depth test off, depth writes on, LESS,
# stencil off, KEEP ops and ALWAYS on both faces; no culling, CCW front, fill; blending ONE/ZERO/ADD.
DS_DEFAULTS = (0, 1, 1, 0, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 0)
POLYGON_DEFAULTS = (0, 0, 0, 0)
BLEND_DEFAULTS = (0, 1, 0, 1, 0, 0, 0, 0)
FLAG_DISPLAY, FLAG_RENDER_TARGET, FLAG_LINEAR = 1, 2, 4
POOL_CPU_CACHED = 4  # nvn.h NVN_MEMORY_POOL_FLAGS_CPU_CACHED: writes reach the GPU by flushes
SHADER_MAGIC = 0x4853584E
STAGE_VERTEX, STAGE_FRAGMENT = 2, 3
ARCH_SPIRV = 0
SYNC_ALREADY, SYNC_SATISFIED, SYNC_TIMEOUT = 0, 1, 2
HANDLE_SAMPLER_SHIFT = 20
MAX_SLOTS = 4


def block_height_log2(height_elements: int) -> int:
    """The block height (in GOBs, log2) a 2D surface gets: the smallest power of two of GOBs
    that covers its height, at most 16 GOBs (the usual choice of Maxwell-era drivers)."""
    gobs = -(-height_elements // blocklinear.GOB_H)
    log2 = 0
    while (1 << log2) < gobs and log2 < 4:
        log2 += 1
    return log2


def _enum(what: str, name: str, v: int, limit: int) -> None:
    if not 0 <= v <= limit:
        raise GuestError(f"{what}: {name} {v} is not in 0..{limit}")


def _faces(what: str, faces: int) -> tuple[int, ...]:
    """NVN_FACE_FRONT (1), NVN_FACE_BACK (2) or both (3) as the faces 1 and 2 it names."""
    if faces not in (1, 2, 3):
        raise GuestError(f"{what}: faces {faces} is not front (1), back (2) or both (3)")
    return tuple(f for f in (FACE_FRONT, FACE_BACK) if faces & f)


def _blend_packet(rec: Recording, k: int = 0) -> tuple:
    """BLEND_STATE of colour target ``k`` from what the recording bound: the colour state's enable
    bit, the blend state's factors (ONE/ZERO/ADD without one), the channel mask (all without one)."""
    sc, dc, sa, da, ce, ae = (rec.blend if k == 0 else rec.blends.get(k)) or (1, 0, 1, 0, 0, 0)
    if k and rec.blend is None and rec.channel_mask is None and k not in rec.blends:
        sc, dc, ce, sa, da, ae = P.BLEND_OVER[3:9]  # the older meaning of a bare colour state
    mask = 0xF if rec.channel_mask is None else rec.channel_mask >> 4 * k & 0xF
    return (P.OP_BLEND_STATE, k, bool(rec.color_blend >> k & 1), sc, dc, ce, sa, da, ae, mask)


def _extra_blend_packets(rec: Recording) -> list[tuple]:
    """BLEND_STATE of colour targets 1..7 where it is not the default or was recorded before (so
    a return to the default is recorded too); a single-target game records none of them, so its
    command stream is what it was before MRT."""
    out = []
    for k in range(1, MAX_TARGETS):
        pkt = _blend_packet(rec, k)
        if k in rec.extra_sent or pkt != (P.OP_BLEND_STATE, k, *P.BLEND_OFF[2:]):
            rec.extra_sent.add(k)
            out.append(pkt)
    return out


def _targets(cmds: list) -> list[int]:
    """Texture ids the commands render into (TARGET, both of DEPTH_TARGET's)."""
    out = []
    for c in cmds:
        if c[0] == P.OP_TARGET:
            out.append(c[1])
        elif c[0] == P.OP_DEPTH_TARGET:
            out += [t for t in c[1:3] if t != P.EMPTY]
        elif c[0] == P.OP_RENDER_TARGETS:
            out += [t for t in (*c[1], c[2]) if t != P.EMPTY]
    return out


@dataclass
class NvnService:
    """One process's NVN state; ``connect`` makes the GPU client on first use."""

    connect: Callable[[], Any]  # -> GpuClient (connected)
    # (arch, stage, code, features) -> SPIR-V; features: shader.proto Program.features, the bits
    # of what the GPU process's device has (GpuClient.features, shader_svc.request.feature_bits)
    translate: Callable[[int, int, bytes, int], bytes]
    on_present: Callable[[], None] = lambda: None
    gob: str = "fermi"  # the console's GOB kind for block-linear surfaces (manifest "gpu")
    gpu: Any = None
    lock: threading.RLock = field(default_factory=threading.RLock)
    objects: dict[int, Any] = field(default_factory=dict)
    builders: dict[int, dict] = field(default_factory=dict)
    next_id: int = 1
    texture_slots: dict[int, Texture] = field(default_factory=dict)
    sampler_slots: dict[int, Sampler] = field(default_factory=dict)
    handles: CommandHandles = field(
        default_factory=lambda: CommandHandles(settings.get("cpu_host", "nvn_unbacked_command_bytes"))
    )  # command handle -> recording, while alive
    frame: int = 0
    proc_addresses: dict[str, int] = field(default_factory=dict)
    present_times: list[float] = field(default_factory=list)  # time.monotonic() of each present
    flushed: list[tuple[int, int, int]] = field(default_factory=list)  # (pool, offset, size) since the last submit
    native: Any = None  # native.NativeRecorder once install_native bound the hot calls in C

    # -- helpers --------------------------------------------------------------------------
    def _new(self, c: Call, arg: int, obj_factory: Callable[[int], Any]) -> Any:
        obj = obj_factory(self.next_id)
        self.next_id += 1
        self.objects[obj.id] = obj
        c.u64(c.arg(arg), obj.id, "NVN object")
        return obj

    def _obj(self, c: Call, arg: int, kind: type, what: str) -> Any:
        addr = c.arg(arg)
        if addr == 0:
            raise GuestError(f"{what}: null {kind.__name__} pointer")
        oid = c.read_u64(addr, what)
        obj = self.objects.get(oid)
        if not isinstance(obj, kind):
            raise GuestError(f"{what}: {addr:#x} is not an initialised {kind.__name__} (holds {oid:#x})")
        return obj

    def _builder(self, c: Call, arg: int = 0) -> dict:
        return self.builders.setdefault(c.arg(arg), {})

    def _pool_at(self, addr: int, size: int, what: str) -> tuple[MemoryPool, int]:
        for o in self.objects.values():
            if isinstance(o, MemoryPool) and o.addr <= addr and addr + size <= o.addr + o.size:
                return o, addr - o.addr
        raise GuestError(f"{what}: GPU address range {addr:#x}+{size:#x} lies in no memory pool")

    def _gpu(self) -> Any:
        if self.gpu is None:
            self.gpu = self.connect()
            # the native recorder records into the client's command arena: submissions reference
            # its recordings instead of copying them into the ring (PROTOCOL.md "Command arena")
            self._lend_arena()
        return self.gpu

    # -- device ---------------------------------------------------------------------------
    def set_defaults(self, c: Call) -> None:
        self.builders[c.arg(0)] = {}

    def builder_set(self, *args: str) -> Callable[[Call], None]:
        """A builder setter: its arguments after the builder, stored under these names."""

        def setter(c: Call) -> None:
            with self.lock:
                b = self._builder(c)
                for i, name in enumerate(args, 1):
                    b[name] = c.arg(i)

        return setter

    def device_initialize(self, c: Call) -> int:
        with self.lock:
            self._gpu()
            self._new(c, 0, lambda i: Device(i))
        return 1

    def no_op(self, c: Call) -> None:
        """Finalize calls: the host keeps nothing a finalize would free that matters."""
        return None

    def get_proc_address(self, c: Call) -> int:
        name = c.cstr(c.arg(1), "proc name", 128)
        return self.proc_addresses.get(name, 0)

    def bootstrap_loader(self, c: Call) -> int:
        name = c.cstr(c.arg(0), "proc name", 128)
        return self.proc_addresses.get(name, 0)

    def texture_handle(self, c: Call) -> int:
        tex, smp = c.sarg32(1), c.sarg32(2)
        if not (0 <= tex < 1 << HANDLE_SAMPLER_SHIFT and 0 <= smp < 1 << 12):
            raise GuestError(f"texture id {tex} / sampler id {smp} out of range")
        return tex | smp << HANDLE_SAMPLER_SHIFT

    # -- memory pools, buffers -------------------------------------------------------------
    def pool_initialize(self, c: Call) -> int:
        with self.lock:
            b = self.builders.get(c.arg(1), {})
            addr, size = b.get("memory", 0), b.get("size", 0)
            if not addr or not size or addr % 4096 or size % 4096:
                raise GuestError(f"memory pool storage {addr:#x}+{size:#x} must be non-empty and 4096-aligned")
            c.check(addr, size, 3, "memory pool storage")
            pool = self._new(c, 0, lambda i: MemoryPool(i, addr, size, bool(b.get("flags", 0) & POOL_CPU_CACHED)))
            fd = back_with_memfd(addr, size, f"nx-nvn-pool-{pool.id}")
            self._gpu().create_pool(pool.id, size, fd, flushed_writes=pool.cpu_cached)
            if self.native:
                self.native.pool(pool.id, addr, size)
        return 1

    def pool_address(self, c: Call) -> int:
        with self.lock:
            return self._obj(c, 0, MemoryPool, "nvnMemoryPoolGetBufferAddress").addr

    def pool_flush(self, c: Call) -> None:
        """The game's flush of CPU writes: for a CPU-cached pool, the range goes to the GPU
        process as a DIRTY packet at the next submission (it re-reads only textures there);
        other pools share their pages coherently and need nothing."""
        with self.lock:
            pool = self._obj(c, 0, MemoryPool, "nvnMemoryPoolFlushMappedRange")
            off, size = c.arg(1), c.arg(2)
            if off > pool.size or size > pool.size - off:
                raise GuestError(f"nvnMemoryPoolFlushMappedRange: {off:#x}+{size:#x} past the pool's end {pool.size:#x}")
            if pool.cpu_cached and size:
                self.flushed.append((pool.id, off, size))

    def buffer_initialize(self, c: Call) -> int:
        with self.lock:
            b = self.builders.get(c.arg(1), {})
            pool = self.objects.get(c.read_u64(b.get("pool", 0), "buffer pool")) if b.get("pool") else None
            if not isinstance(pool, MemoryPool):
                raise GuestError("nvnBufferInitialize: the builder names no initialised memory pool")
            off, size = b.get("offset", 0), b.get("size", 0)
            if off + size > pool.size:
                raise GuestError(f"nvnBufferInitialize: {off:#x}+{size:#x} past the pool's end {pool.size:#x}")
            self._new(c, 0, lambda i: Buffer(i, pool, off, size))
        return 1

    def buffer_address(self, c: Call) -> int:
        with self.lock:
            buf = self._obj(c, 0, Buffer, "nvnBufferGetAddress")
            return buf.pool.addr + buf.offset

    # -- textures, samplers, pools of descriptors -------------------------------------------
    def _texture_layout(self, b: dict) -> tuple[str, int, int, int, int]:
        """(format name, width, height, block height log2, storage bytes: every layer)."""
        code = b.get("format", 0)
        if code not in FORMATS:
            raise GuestError(f"texture format {code} is not one nvn.h defines")
        name, bpe, blk = FORMATS[code]
        w, h = b.get("width", 0), b.get("height", 0)
        if not (0 < w <= 16384 and 0 < h <= 16384):
            raise GuestError(f"texture size {w}x{h} out of range")
        ew, eh = -(-w // blk), -(-h // blk)
        bhl = block_height_log2(eh)
        size = ew * bpe * eh if b.get("flags", 0) & FLAG_LINEAR else blocklinear.size_bytes(ew * bpe, eh, bhl)
        return name, w, h, bhl, size * self._layers(b)[0]

    @staticmethod
    def _layers(b: dict) -> tuple[int, bool]:
        """(layers, cube) of a builder: SetTarget's kind, SetDepth's layer count (a cube: 6)."""
        target = b.get("target", 0) & 0xFFFFFFFF
        if target > 3:
            raise GuestError(f"nvnTextureBuilderSetTarget: target {target} is not one nvn.h defines (0..3)")
        cube = target in (2, 3)
        layers = b.get("layers", 0) & 0xFFFFFFFF or (6 if cube else 1)
        if target == 0:
            layers = 1
        if not 1 <= layers <= 2048 or (cube and layers % 6):
            raise GuestError(f"texture layers {layers} (1..2048; a multiple of 6 for cubes)")
        return layers, cube

    def texture_storage_size(self, c: Call) -> int:
        with self.lock:
            return self._texture_layout(self.builders.get(c.arg(0), {}))[4]

    def texture_block_height(self, c: Call) -> int:
        with self.lock:
            return self._texture_layout(self.builders.get(c.arg(0), {}))[3]

    def texture_initialize(self, c: Call) -> int:
        from cpu_host.gpu_client.registry import TextureDesc

        with self.lock:
            b = self.builders.get(c.arg(1), {})
            name, w, h, bhl, size = self._texture_layout(b)
            flags = b.get("flags", 0)
            target = bool(flags & (FLAG_DISPLAY | FLAG_RENDER_TARGET))
            if name in DEPTH_FORMATS and not (flags & FLAG_RENDER_TARGET and not flags & FLAG_DISPLAY):
                raise GuestError(
                    f"nvnTextureInitialize: a {name} texture must be made with the render-target "
                    f"flag (and not the display flag); flags are {flags:#x}"
                )
            pool, off = None, 0
            if b.get("pool"):
                pool = self.objects.get(c.read_u64(b["pool"], "texture pool"))
                if not isinstance(pool, MemoryPool):
                    raise GuestError("nvnTextureInitialize: the builder's storage is no initialised memory pool")
                off = b.get("offset", 0)
                if off + size > pool.size:
                    raise GuestError(
                        f"nvnTextureInitialize: {name} {w}x{h} needs {size:#x} bytes at {off:#x}, "
                        f"past the pool's end {pool.size:#x}"
                    )
            elif not target:
                raise GuestError("nvnTextureInitialize: a sampled texture needs storage in a memory pool")
            layers, cube = self._layers(b)
            if target and (layers > 1 or cube):
                raise GuestError(f"nvnTextureInitialize: a render target has one 2D layer ({layers} layers asked)")
            if cube and w != h:
                raise GuestError(f"nvnTextureInitialize: cube faces must be square, not {w}x{h}")
            samples = b.get("samples", 0) & 0xFFFFFFFF or 1
            if samples not in (1, 2, 4, 8):
                raise GuestError(f"nvnTextureInitialize: samples {samples} is not 0, 1, 2, 4 or 8")
            if samples > 1 and not (flags & FLAG_RENDER_TARGET and not flags & FLAG_DISPLAY):
                raise GuestError(
                    f"nvnTextureInitialize: a {samples}-sample texture must be made with the "
                    f"render-target flag (and not the display flag); flags are {flags:#x}"
                )
            tex = self._new(c, 0, lambda i: Texture(i, w, h, name, flags, pool, off, bhl, samples))
            linear = bool(flags & FLAG_LINEAR)
            bpe = FORMATS[b["format"]][1]
            self._gpu().register(
                TextureDesc(
                    tex.id,
                    pool.id if pool else 0,
                    off,
                    w,
                    h,
                    name,
                    block_linear=not linear,
                    block_height_log2=bhl,
                    pitch=w * bpe if linear else 0,
                    render_target=target,
                    gob=self.gob,
                    layers=layers,
                    cube=cube,
                    samples=samples,
                )
            )
        return 1

    def sampler_initialize(self, c: Call) -> int:
        from cpu_host.gpu_client.registry import SamplerDesc

        with self.lock:
            b = self.builders.get(c.arg(1), {})
            linear = b.get("mag", 0) == 1 or b.get("min", 0) == 1
            repeat = b.get("wrap_s", 0) == 1
            compare = 0
            mode = b.get("compare_mode", 0) & 0xFFFFFFFF
            # NVN_COMPARE_MODE_NONE (0) or COMPARE_R_TO_TEXTURE (1): any other value is a guest bug
            _enum("nvnSamplerInitialize", "compare mode", mode, 1)
            if mode:
                func = b.get("compare_func", 0) & 0xFFFFFFFF
                _enum("nvnSamplerInitialize", "compare func", func, len(P.COMPARE_OPS) - 1)
                compare = 1 + func
            s = self._new(c, 0, lambda i: Sampler(i, linear, repeat))
            self._gpu().register(SamplerDesc(s.id, linear, repeat, compare))
        return 1

    def descriptor_pool_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: DescriptorPool(i))
        return 1

    def register_texture(self, c: Call) -> None:
        with self.lock:
            slot = c.sarg32(1)
            if not 0 <= slot < 1 << HANDLE_SAMPLER_SHIFT:
                raise GuestError(f"texture id {slot} out of range")
            self.texture_slots[slot] = self._obj(c, 2, Texture, "nvnTexturePoolRegisterTexture")
            if self.native:
                self.native.texture_slot(slot, self.texture_slots[slot].id)

    def register_sampler(self, c: Call) -> None:
        with self.lock:
            slot = c.sarg32(1)
            if not 0 <= slot < 1 << 12:
                raise GuestError(f"sampler id {slot} out of range")
            self.sampler_slots[slot] = self._obj(c, 2, Sampler, "nvnSamplerPoolRegisterSampler")
            if self.native:
                self.native.sampler_slot(slot, self.sampler_slots[slot].id)

    # -- programs ---------------------------------------------------------------------------
    def program_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: Program(i))
        return 1

    def program_set_shaders(self, c: Call) -> int:
        from cpu_host.gpu_client.registry import ProgramDesc

        with self.lock:
            prog = self._obj(c, 0, Program, "nvnProgramSetShaders")
            count, stages = c.sarg32(1), c.arg(2)
            if not 1 <= count <= 5:
                raise GuestError(f"nvnProgramSetShaders: stage count {count}")
            spirv: dict[int, bytes] = {}
            features = feature_bits(getattr(self._gpu(), "features", ()))
            for i in range(count):
                data, control = struct.unpack("<QQ", c.read(stages + 16 * i, 16, "NVNshaderData"))
                magic, stage, arch, size = struct.unpack("<IIII", c.read(control, 16, "NVNshaderControl"))
                if magic != SHADER_MAGIC:
                    raise GuestError(f"shader {i}: control magic {magic:#x} is not 'NXSH'")
                if stage not in (STAGE_VERTEX, STAGE_FRAGMENT):
                    raise GuestError(f"shader {i}: stage {stage} (vertex 2 and fragment 3 are served)")
                pool, off = self._pool_at(data, size, f"shader {i} code")
                code = c.read(data, size, f"shader {i} code")
                spirv[stage] = code if arch == ARCH_SPIRV else self.translate(arch, stage, code, features)
            if set(spirv) != {STAGE_VERTEX, STAGE_FRAGMENT}:
                return 0
            try:
                prog.pools = any(reflect(code, f"stage {st}").pools for st, code in spirv.items())
            except SpirvError as e:
                raise GuestError(f"nvnProgramSetShaders: {e}") from None
            self._gpu().register(ProgramDesc(prog.id, spirv[STAGE_VERTEX], spirv[STAGE_FRAGMENT]))
            prog.registered = True
            if self.native:
                self.native.program(prog.id, prog.pools)
        return 1

    # -- command buffers --------------------------------------------------------------------
    def cb_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: CommandBuffer(i))
        return 1

    def cb_command_memory(self, c: Call) -> None:
        """nvnCommandBufferAddCommandMemory(cb, pool, offset, size): commands are recorded host-side,
        but the range says which handles die: those recorded into it before (handles.py)."""
        with self.lock:
            what = "nvnCommandBufferAddCommandMemory"
            cb = self._obj(c, 0, CommandBuffer, what)
            pool = self._obj(c, 1, MemoryPool, what)
            off, size = c.arg(2), c.arg(3)
            if off > pool.size or size > pool.size - off:
                raise GuestError(f"{what}: {off:#x}+{size:#x} past the pool's end {pool.size:#x}")
            self._cb_memory(cb, "command", pool.addr + off, size, what)

    def cb_control_memory(self, c: Call) -> None:
        """nvnCommandBufferAddControlMemory(cb, memory, size): as command memory, in CPU memory."""
        with self.lock:
            what = "nvnCommandBufferAddControlMemory"
            cb = self._obj(c, 0, CommandBuffer, what)
            addr, size = c.arg(1), c.arg(2)
            c.check(addr, size, 3, f"{what} memory")
            self._cb_memory(cb, "control", addr, size, what)

    def _cb_memory(self, cb: CommandBuffer, kind: str, start: int, size: int, what: str) -> None:
        if not size:
            return
        self.handles.memory_reused(start, start + size, what)
        cb.memory[kind] = (start, start + size)
        if cb.recording is not None:
            cb.recording.ranges.add(cb.memory[kind])

    def cb_begin(self, c: Call) -> None:
        with self.lock:
            cb = self._obj(c, 0, CommandBuffer, "nvnCommandBufferBeginRecording")
            cb.recording = Recording(ranges=set(cb.memory.values()))
            if self.native:  # the C recorder's stream (the struct's address checked just now)
                cb.recording.commands = self.native.begin(cb.id, c.arg(0))

    def cb_end(self, c: Call) -> int:
        with self.lock:
            cb = self._obj(c, 0, CommandBuffer, "nvnCommandBufferEndRecording")
            if cb.recording is None:
                raise GuestError("nvnCommandBufferEndRecording without BeginRecording")
            handle = self.next_id
            self.next_id += 1
            # Encoded now, once: the game's own CPU time, while the GPU replays the previous frame;
            # a submit then only copies bytes into the ring.
            cmds = cb.recording.commands
            if isinstance(cmds, list):
                rc = RecordedCommands(P.encode_commands(cmds), frozenset(_targets(cmds)))
            else:  # native: the packets as the C recorder holds them
                rc = RecordedCommands(self.native.end(cb.id), frozenset(cmds.targets))
            self.handles.add(handle, Held(rc, cb.id, frozenset(cb.recording.ranges), nbytes(rc)))
            cb.recording = None
            return handle

    def _rec(self, c: Call, what: str) -> Recording:
        cb = self._obj(c, 0, CommandBuffer, what)
        if cb.recording is None:
            raise GuestError(f"{what}: the command buffer is not recording")
        return cb.recording

    def cb_targets(self, c: Call) -> None:
        """One colour target (or none) and an optional depth target: TARGET, or DEPTH_TARGET
        when a depth texture is given; two or more colour targets: RENDER_TARGETS."""
        with self.lock:
            what = "nvnCommandBufferSetRenderTargets"
            rec = self._rec(c, what)
            n = c.sarg32(1)
            depth = None
            if c.arg(4):
                depth = self.objects.get(c.read_u64(c.arg(4), "depth target"))
                if not isinstance(depth, Texture) or depth.format not in DEPTH_FORMATS:
                    raise GuestError(f"{what}: {c.arg(4):#x} is not a texture of a depth format")
            if not 0 <= n <= MAX_TARGETS or (n == 0 and depth is None):
                raise GuestError(f"{what}: {n} colour targets (1..{MAX_TARGETS}, or none beside a depth target)")
            if n > 1:
                rec.commands.append(
                    (P.OP_RENDER_TARGETS, self._colour_targets(c, what, n, depth), depth.id if depth else P.EMPTY)
                )
                return
            tex = None
            if n == 1:
                ptr = c.read_u64(c.arg(2), "colour target array")
                tex = self.objects.get(c.read_u64(ptr, "colour target"))
                if (
                    not isinstance(tex, Texture)
                    or not tex.flags & (FLAG_DISPLAY | FLAG_RENDER_TARGET)
                    or tex.format in DEPTH_FORMATS
                ):
                    raise GuestError(f"{what}: {ptr:#x} is not a colour render-target texture")
                if depth is not None and (tex.width, tex.height) != (depth.width, depth.height):
                    raise GuestError(
                        f"{what}: the depth target is {depth.width}x{depth.height}, the colour target {tex.width}x{tex.height}"
                    )
            if depth is None:
                rec.commands.append((P.OP_TARGET, tex.id))
            else:
                rec.commands.append((P.OP_DEPTH_TARGET, tex.id if tex else P.EMPTY, depth.id))

    def _colour_targets(self, c: Call, what: str, n: int, depth: Texture | None) -> tuple[int, ...]:
        """The ids of ``n`` colour render targets from the guest's array, checked: each a colour
        render-target texture, none twice, all (and the depth target) of one size."""
        ptr = c.arg(2)
        texs: list[Texture] = []
        for k in range(n):
            tptr = c.read_u64(ptr + 8 * k, "colour target array")
            tex = self.objects.get(c.read_u64(tptr, "colour target"))
            if not isinstance(tex, Texture) or not tex.flags & (FLAG_DISPLAY | FLAG_RENDER_TARGET) or tex.format in DEPTH_FORMATS:
                raise GuestError(f"{what}: colors[{k}] = {tptr:#x} is not a colour render-target texture")
            if any(t is tex for t in texs):
                raise GuestError(f"{what}: colors[{k}] is the same texture as an earlier colour target")
            first = texs[0] if texs else tex
            if (tex.width, tex.height) != (first.width, first.height):
                raise GuestError(f"{what}: colors[{k}] is {tex.width}x{tex.height}, colors[0] {first.width}x{first.height}")
            texs.append(tex)
        if depth is not None and (depth.width, depth.height) != (texs[0].width, texs[0].height):
            raise GuestError(
                f"{what}: the depth target is {depth.width}x{depth.height}, the colour targets {texs[0].width}x{texs[0].height}"
            )
        return tuple(t.id for t in texs)

    def cb_clear(self, c: Call) -> None:
        """Colour target ``index``: CLEAR for target 0 (as before MRT), CLEAR_TARGET for the others."""
        with self.lock:
            what = "nvnCommandBufferClearColor"
            rec = self._rec(c, what)
            index = c.sarg32(1)
            _enum(what, "index", index, MAX_TARGETS - 1)
            r, g, b, a = struct.unpack("<4f", c.read(c.arg(2), 16, "clear colour"))
            if index == 0:
                rec.commands.append((P.OP_CLEAR, r, g, b, a))
            else:
                rec.commands.append((P.OP_CLEAR_TARGET, index, r, g, b, a))

    def cb_program(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindProgram")
            prog = self._obj(c, 1, Program, "nvnCommandBufferBindProgram")
            if not prog.registered:
                raise GuestError("nvnCommandBufferBindProgram: the program has no vertex and fragment shaders")
            rec.commands.append((P.OP_PROGRAM, prog.id))
            rec.program = prog

    def cb_attribs(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindVertexAttribState")
            n = c.sarg32(1)
            if not 0 <= n <= P.MAX_ATTRS:
                raise GuestError(f"{n} vertex attributes (at most {P.MAX_ATTRS})")
            raw = c.read(c.arg(2), 16 * n, "vertex attribute states")
            rec.attribs = []
            for i in range(n):
                fmt, off, stream, loc = struct.unpack_from("<IIII", raw, 16 * i)
                if stream != 0:
                    raise GuestError(f"vertex attribute {i}: stream {stream} (one vertex stream is served)")
                rec.attribs.append([loc, fmt, off])
            if self.native:
                self.native.attribs(self._obj(c, 0, CommandBuffer, "").id, rec.attribs)

    def cb_streams(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindVertexStreamState")
            n = c.sarg32(1)
            if n != 1:
                raise GuestError(f"{n} vertex streams (one is served)")
            rec.stride = struct.unpack("<II", c.read(c.arg(2), 8, "vertex stream state"))[0]
            if self.native:
                self.native.stride(self._obj(c, 0, CommandBuffer, "").id, rec.stride)

    def cb_vertex_buffer(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindVertexBuffer")
            if c.sarg32(1) != 0:
                raise GuestError(f"vertex buffer index {c.sarg32(1)} (index 0 is served)")
            pool, off = self._pool_at(c.arg(2), c.arg(3), "vertex buffer")
            rec.commands.append((P.OP_VERTEX, pool.id, off, c.arg(3)))

    def cb_uniform(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindUniformBuffer")
            slot = c.sarg32(2)
            if not 0 <= slot < MAX_SLOTS:
                raise GuestError(f"uniform buffer index {slot} (0..{MAX_SLOTS - 1})")
            pool, off = self._pool_at(c.arg(3), c.arg(4), "uniform buffer")
            rec.commands.append((P.OP_UNIFORM, slot, pool.id, off, c.arg(4)))

    def cb_texture(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindTexture")
            slot, handle = c.sarg32(2), c.arg(3)
            if not 0 <= slot < MAX_SLOTS:
                raise GuestError(f"texture binding {slot} (0..{MAX_SLOTS - 1})")
            tid, sid = handle & ((1 << HANDLE_SAMPLER_SHIFT) - 1), handle >> HANDLE_SAMPLER_SHIFT
            tex, smp = self.texture_slots.get(tid), self.sampler_slots.get(sid)
            if tex is None or smp is None:
                raise GuestError(f"texture handle {handle:#x}: texture id {tid} or sampler id {sid} is not registered")
            rec.commands.append((P.OP_TEXTURE, slot, tex.id, smp.id))

    def cb_color_state(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindColorState")
            rec.color_blend = c.read_u32(c.arg(1), "colour state")
            if rec.blend is None and rec.channel_mask is None:  # the older meaning: source-alpha over
                rec.commands.append((P.OP_BLEND, bool(rec.color_blend & 1)))
            else:
                rec.commands.append(_blend_packet(rec))
            rec.commands += _extra_blend_packets(rec)

    def cb_viewport(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferSetViewport")
            rec.commands.append((P.OP_VIEWPORT, float(c.sarg32(1)), float(c.sarg32(2)), float(c.sarg32(3)), float(c.sarg32(4))))

    def _layout(self, rec: Recording, mode: int) -> None:
        if mode not in P.TOPOLOGIES:
            raise GuestError(f"draw mode {mode}")
        layout = (P.OP_VERTEX_LAYOUT, rec.stride, mode, [list(a) for a in rec.attribs])
        if layout != rec.layout:
            rec.commands.append(layout)
            rec.layout = layout

    def _pools(self, rec: Recording) -> None:
        """Before a draw whose program reads the bindless pools: a POOLS packet with the pools'
        entries as registered now (record time), when they differ from the last one recorded, so
        a recording replays the same and the GPU process keeps no pool state of its own."""
        if rec.program is None or not rec.program.pools:
            return
        ts, ss = self.texture_slots, self.sampler_slots
        pools = (
            P.OP_POOLS,
            [ts[i].id if i in ts else P.EMPTY for i in range(P.POOL_TEXTURES)],
            [ss[i].id if i in ss else P.EMPTY for i in range(P.POOL_SAMPLERS)],
        )
        if pools != rec.pools:
            rec.commands.append(pools)
            rec.pools = pools

    def cb_draw(self, c: Call, instanced: bool = False) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferDrawArrays")
            mode, first, count = c.sarg32(1), c.sarg32(2), c.sarg32(3)
            base, inst = (c.sarg32(4), c.sarg32(5)) if instanced else (0, 1)
            self._layout(rec, mode)
            self._pools(rec)
            rec.commands.append((P.OP_DRAW, count, inst, first, base))

    def cb_draw_elements(self, c: Call, instanced: bool = False) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferDrawElements")
            mode, itype, count, addr = c.sarg32(1), c.sarg32(2), c.sarg32(3), c.arg(4)
            if itype not in (2, 4):
                raise GuestError(f"index type {itype} (2: u16, 4: u32)")
            base_vertex, base, inst = (c.sarg32(5), c.sarg32(6), c.sarg32(7)) if instanced else (0, 0, 1)
            pool, off = self._pool_at(addr, count * itype, "index buffer")
            self._layout(rec, mode)
            self._pools(rec)
            rec.commands.append((P.OP_INDEX, pool.id, off, count * itype, itype))
            rec.commands.append((P.OP_DRAW_INDEXED, count, inst, 0, base_vertex, base))

    # -- fixed-function state: our structures (nvn.h), filled here, read at bind -----------------
    @staticmethod
    def _state_at(c: Call, what: str, arg: int = 0) -> int:
        addr = c.arg(arg)
        if addr == 0:
            raise GuestError(f"{what}: null state pointer")
        return addr

    def _words(self, c: Call, what: str, n: int, arg: int = 0) -> list[int]:
        return list(struct.unpack(f"<{n}I", c.read(self._state_at(c, what, arg), 4 * n, what)))

    def _put(self, c: Call, what: str, offset: int, *values: int) -> None:
        c.write(self._state_at(c, what) + offset, struct.pack(f"<{len(values)}I", *values), what)

    def state_defaults(self, what: str, words: tuple) -> Callable[[Call], None]:
        return lambda c: self._put(c, what, 0, *words)

    def state_field(self, what: str, offset: int, limit: int | None = None) -> Callable[[Call], None]:
        """A setter of one u32 field (argument 1); ``limit``: the largest value allowed (None:
        a boolean, stored as 0/1)."""

        def setter(c: Call) -> None:
            v = c.sarg32(1)
            if limit is None:
                v = int(v != 0)
            else:
                _enum(what, "value", v, limit)
            self._put(c, what, offset, v)

        return setter

    def ds_stencil_func(self, c: Call) -> None:
        what = "nvnDepthStencilStateSetStencilFunc"
        faces, func = _faces(what, c.sarg32(1)), c.sarg32(2)
        _enum(what, "func", func, len(P.COMPARE_OPS) - 1)
        for face in faces:
            self._put(c, what, 16 * face + 12, func)  # front at 16, back at 32: words 0..2 ops, 3 func

    def ds_stencil_op(self, c: Call) -> None:
        what = "nvnDepthStencilStateSetStencilOp"
        faces = _faces(what, c.sarg32(1))
        ops = [c.sarg32(i) for i in (2, 3, 4)]
        for name, v in zip(("fail", "depth_fail", "depth_pass"), ops):
            _enum(what, name, v, len(P.STENCIL_OPS) - 1)
        for face in faces:
            self._put(c, what, 16 * face, *ops)

    def blend_func(self, c: Call) -> None:
        what = "nvnBlendStateSetBlendFunc"
        vals = [c.sarg32(i) for i in (1, 2, 3, 4)]
        for name, v in zip(("src_color", "dst_color", "src_alpha", "dst_alpha"), vals):
            _enum(what, name, v, len(P.BLEND_FACTORS) - 1)
        self._put(c, what, 4, *vals)

    def blend_equation(self, c: Call) -> None:
        what = "nvnBlendStateSetBlendEquation"
        vals = [c.sarg32(1), c.sarg32(2)]
        for name, v in zip(("color", "alpha"), vals):
            _enum(what, name, v, len(P.BLEND_OPS) - 1)
        self._put(c, what, 20, *vals)

    def color_blend_enable(self, c: Call) -> None:
        what = "nvnColorStateSetBlendEnable"
        target = c.sarg32(1)
        _enum(what, "target", target, MAX_TARGETS - 1)
        mask = self._words(c, what, 1)[0] & ~(1 << target) | (c.arg32(2) != 0) << target
        self._put(c, what, 0, mask)

    def channel_mask(self, c: Call) -> None:
        what = "nvnChannelMaskStateSetChannelMask"
        target = c.sarg32(1)
        _enum(what, "target", target, MAX_TARGETS - 1)
        bits = sum((c.arg32(2 + i) != 0) << i for i in range(4))
        mask = self._words(c, what, 1)[0] & ~(0xF << 4 * target) | bits << 4 * target
        self._put(c, what, 0, mask)

    def ms_samples(self, c: Call) -> None:
        what = "nvnMultisampleStateSetSamples"
        n = c.sarg32(1)
        if n not in (0, *P.SAMPLE_COUNTS):
            raise GuestError(f"{what}: samples {n} is not 0 or one of {P.SAMPLE_COUNTS}")
        self._put(c, what, 0, n)

    def cb_depth_stencil_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindDepthStencilState"
            rec = self._rec(c, what)
            w = self._words(c, what, 16, 1)
            _enum(what, "depth_func", w[2], len(P.COMPARE_OPS) - 1)
            for i, face in ((4, "front"), (8, "back")):
                for j, name in enumerate(("fail", "depth_fail", "depth_pass")):
                    _enum(what, f"{face} {name}", w[i + j], len(P.STENCIL_OPS) - 1)
                _enum(what, f"{face} func", w[i + 3], len(P.COMPARE_OPS) - 1)
            rec.ds[0:4] = [w[0] != 0, w[1] != 0, w[2], w[3] != 0]
            rec.ds[4:8] = w[4:8]  # front fail, depth fail, pass, func (ref and masks stay)
            rec.ds[11:15] = w[8:12]
            rec.commands.append((P.OP_DEPTH_STENCIL, *rec.ds))

    def cb_stencil_value(self, index: int, what: str) -> Callable[[Call], None]:
        """SetStencilRef / ValueMask / Mask: field ``index`` of each face (ref, read mask, write
        mask), 8 bits."""

        def setter(c: Call) -> None:
            with self.lock:
                rec = self._rec(c, what)
                for face in _faces(what, c.sarg32(1)):
                    rec.ds[8 + 7 * (face - 1) + index] = c.arg32(2) & 0xFF
                rec.commands.append((P.OP_DEPTH_STENCIL, *rec.ds))

        return setter

    def cb_polygon_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindPolygonState"
            rec = self._rec(c, what)
            cull, front, mode, offsets = self._words(c, what, 4, 1)
            _enum(what, "cull_face", cull, len(P.CULL_MODES) - 1)
            _enum(what, "front_face", front, len(P.FRONT_FACES) - 1)
            _enum(what, "polygon_mode", mode, len(P.POLYGON_MODES) - 1)
            bias = bool(offsets & (POLYGON_OFFSET_FILL if mode == 0 else POLYGON_OFFSET_LINE))
            rec.commands.append((P.OP_RASTER, cull, front, mode, bias))

    def cb_blend_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindBlendState"
            rec = self._rec(c, what)
            target, sc, dc, sa, da, ce, ae, _ = self._words(c, what, 8, 1)
            _enum(what, "target", target, MAX_TARGETS - 1)
            for name, v in (("src_color", sc), ("dst_color", dc), ("src_alpha", sa), ("dst_alpha", da)):
                _enum(what, name, v, len(P.BLEND_FACTORS) - 1)
            for name, v in (("color_equation", ce), ("alpha_equation", ae)):
                _enum(what, name, v, len(P.BLEND_OPS) - 1)
            if target == 0:
                rec.blend = (sc, dc, sa, da, ce, ae)
                rec.commands.append(_blend_packet(rec))
            else:
                rec.blends[target] = (sc, dc, sa, da, ce, ae)
                rec.commands += _extra_blend_packets(rec)

    def cb_channel_mask_state(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindChannelMaskState")
            rec.channel_mask = self._words(c, "nvnCommandBufferBindChannelMaskState", 1, 1)[0]
            rec.commands.append(_blend_packet(rec))
            rec.commands += _extra_blend_packets(rec)

    def cb_multisample_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindMultisampleState"
            rec = self._rec(c, what)
            samples, a2c = self._words(c, what, 2, 1)
            if samples not in (0, *P.SAMPLE_COUNTS):
                raise GuestError(f"{what}: samples {samples} is not 0 or one of {P.SAMPLE_COUNTS}")
            rec.commands.append((P.OP_MULTISAMPLE, max(samples, 1), a2c != 0))

    def cb_downsample(self, c: Call) -> None:
        """nvnCommandBufferDownsample(cb, src, dst): a multisampled colour texture resolved into a
        one-sample one of the same size and format (RESOLVE; the GPU process checks the rest)."""
        with self.lock:
            what = "nvnCommandBufferDownsample"
            rec = self._rec(c, what)
            src = self._obj(c, 1, Texture, f"{what} src")
            dst = self._obj(c, 2, Texture, f"{what} dst")
            if src.samples == 1:
                raise GuestError(f"{what}: the source texture has one sample (nothing to downsample)")
            if dst.samples != 1:
                raise GuestError(f"{what}: the destination texture has {dst.samples} samples; it must have one")
            if (src.width, src.height, src.format) != (dst.width, dst.height, dst.format):
                raise GuestError(
                    f"{what}: source {src.format} {src.width}x{src.height} and destination "
                    f"{dst.format} {dst.width}x{dst.height} differ"
                )
            rec.commands.append((P.OP_RESOLVE, src.id, dst.id))

    def cb_scissor(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferSetScissor"
            rec = self._rec(c, what)
            x, y, w, h = (c.sarg32(i) for i in (1, 2, 3, 4))
            if min(x, y, w, h) < 0:
                raise GuestError(f"{what}: rectangle {x}, {y}, {w}x{h} has a negative field")
            rec.commands.append((P.OP_SCISSOR, *(min(v, 16384) for v in (x, y, w, h))))

    def _floats(self, c: Call, arg: int, n: int, what: str) -> tuple[float, ...]:
        vals = struct.unpack(f"<{n}f", c.read(c.arg(arg), 4 * n, what))
        if not all(math.isfinite(v) for v in vals):
            raise GuestError(f"{what}: {vals} are not all finite")
        return vals

    def cb_depth_bias(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferSetDepthBias"
            rec = self._rec(c, what)
            rec.commands.append((P.OP_DEPTH_BIAS, *self._floats(c, 1, 3, what)))

    def cb_blend_color(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferSetBlendColor"
            rec = self._rec(c, what)
            rec.commands.append((P.OP_BLEND_CONSTANT, *self._floats(c, 1, 4, what)))

    def cb_clear_depth_stencil(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferClearDepthStencil"
            rec = self._rec(c, what)
            (depth,) = self._floats(c, 1, 1, what)
            if not 0.0 <= depth <= 1.0:
                raise GuestError(f"{what}: depth {depth} is not in 0..1")
            aspects = (1 if c.arg32(2) else 0) | (2 if c.arg32(4) & 0xFF else 0)
            if aspects:
                rec.commands.append((P.OP_CLEAR_DEPTH_STENCIL, depth, c.arg32(3) & 0xFF, aspects))

    # -- queues, syncs, windows ---------------------------------------------------------------
    def queue_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: Queue(i))
        return 1

    def queue_submit(self, c: Call) -> None:
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueueSubmitCommands")
            n = c.sarg32(1)
            if not 0 <= n <= 4096:
                raise GuestError(f"nvnQueueSubmitCommands: count {n}")
            for h in struct.unpack(f"<{n}Q", c.read(c.arg(2), 8 * n, "command handles")):
                rec = self.handles.use(h)
                if isinstance(rec, str):
                    raise GuestError(f"nvnQueueSubmitCommands: {h:#x} is not a command handle ({rec})")
                q.pending.append(rec.encoded)
                q.targets |= rec.targets

    def _flush(self, q: Queue) -> int:
        if not q.pending and not q.syncs:
            return 0
        if self.flushed:  # what the CPU wrote before these commands, ahead of them
            q.pending[:0] = [(P.OP_DIRTY, *r) for r in self.flushed]
            self.flushed = []
        # Render targets with storage in a memory pool are the game's to read: their pixels are
        # written back into the pool before this submission's fences signal.
        targets = q.targets | set(_targets([c for c in q.pending if type(c) is tuple]))
        for tid in sorted(targets):
            tex = self.objects.get(tid)
            if isinstance(tex, Texture) and tex.pool is not None:
                q.pending.append((P.OP_WRITEBACK, tid))
        seq = self._gpu().submit(q.pending)
        for s in q.syncs:
            s.seq = seq
        q.pending, q.syncs, q.targets = [], [], set()
        q.last_seq = seq
        return seq

    def queue_flush(self, c: Call) -> None:
        with self.lock:
            self._flush(self._obj(c, 0, Queue, "nvnQueueFlush"))

    def queue_finish(self, c: Call) -> None:
        """Flush, then wait until everything the queue ever sent has been done (not only what
        this call flushed: a present sent earlier must be on screen before Finish returns)."""
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueueFinish")
            self._flush(q)
            seq = q.last_seq
        if seq:
            self._gpu().wait(seq)

    def queue_fence(self, c: Call) -> None:
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueueFenceSync")
            s = self._obj(c, 1, Sync, "nvnQueueFenceSync")
            s.seq = 0
            q.syncs.append(s)

    def sync_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: Sync(i))
        return 1

    def sync_wait(self, c: Call) -> int:
        with self.lock:
            s = self._obj(c, 0, Sync, "nvnSyncWait")
            for q in self.objects.values():  # a fence not flushed yet is flushed by the wait
                if isinstance(q, Queue) and s in q.syncs:
                    self._flush(q)
            seq = s.seq
        if seq == 0:
            return SYNC_ALREADY
        gpu = self._gpu()
        if gpu.completed() >= seq:
            return SYNC_ALREADY
        timeout = c.arg(1)
        try:
            gpu.wait(seq, timeout=min(timeout / 1e9, 3600.0))
        except TimeoutError:
            return SYNC_TIMEOUT
        return SYNC_SATISFIED

    def window_initialize(self, c: Call) -> int:
        with self.lock:
            b = self.builders.get(c.arg(1), {})
            n, arr = b.get("count", 0), b.get("textures", 0)
            if not 1 <= n <= 4:
                raise GuestError(f"nvnWindowInitialize: {n} textures (1..4)")
            texs = []
            for i in range(n):
                oid = c.read_u64(c.read_u64(arr + 8 * i, "window texture array"), "window texture")
                t = self.objects.get(oid)
                if not isinstance(t, Texture) or not t.flags & (FLAG_DISPLAY | FLAG_RENDER_TARGET):
                    raise GuestError(f"nvnWindowInitialize: texture {i} is not a display texture")
                texs.append(t)
            self._new(c, 0, lambda i: Window(i, texs))
        return 1

    def window_acquire(self, c: Call) -> int:
        with self.lock:
            w = self._obj(c, 0, Window, "nvnWindowAcquireTexture")
            c.u32(c.arg(2), w.next, "acquired index")
            w.next = (w.next + 1) % len(w.textures)
        return 0

    def queue_present(self, c: Call) -> None:
        with self.lock:
            q = self._obj(c, 0, Queue, "nvnQueuePresentTexture")
            w = self._obj(c, 1, Window, "nvnQueuePresentTexture")
            i = c.sarg32(2)
            if not 0 <= i < len(w.textures):
                raise GuestError(f"nvnQueuePresentTexture: index {i} of {len(w.textures)} textures")
            self.frame += 1
            self.present_times.append(time.monotonic())
            q.pending.append((P.OP_PRESENT, self.frame, w.textures[i].id))
            self._flush(q)
        self.on_present()

    # -- the table ------------------------------------------------------------------------------
    def functions(self) -> list[HostFunction]:
        S = self.builder_set
        rows: list[tuple[str, Callable[[Call], Any], bool]] = [
            ("nvnBootstrapLoader", self.bootstrap_loader, False),
            ("nvnDeviceGetProcAddress", self.get_proc_address, False),
            ("nvnDeviceBuilderSetDefaults", self.set_defaults, False),
            ("nvnDeviceInitialize", self.device_initialize, True),
            ("nvnDeviceFinalize", self.no_op, False),
            ("nvnDeviceGetTextureHandle", self.texture_handle, False),
            ("nvnMemoryPoolBuilderSetDefaults", self.set_defaults, False),
            ("nvnMemoryPoolBuilderSetDevice", S("device"), False),
            ("nvnMemoryPoolBuilderSetStorage", S("memory", "size"), False),
            ("nvnMemoryPoolBuilderSetFlags", S("flags"), False),
            ("nvnMemoryPoolInitialize", self.pool_initialize, True),
            ("nvnMemoryPoolFinalize", self.no_op, False),
            ("nvnMemoryPoolGetBufferAddress", self.pool_address, False),
            ("nvnMemoryPoolMap", self.pool_address, False),  # CPU address = GPU address
            ("nvnMemoryPoolFlushMappedRange", self.pool_flush, False),
            ("nvnBufferBuilderSetDefaults", self.set_defaults, False),
            ("nvnBufferBuilderSetDevice", S("device"), False),
            ("nvnBufferBuilderSetStorage", S("pool", "offset", "size"), False),
            ("nvnBufferInitialize", self.buffer_initialize, False),
            ("nvnBufferFinalize", self.no_op, False),
            ("nvnBufferGetAddress", self.buffer_address, False),
            ("nvnBufferMap", self.buffer_address, False),
            ("nvnTextureBuilderSetDefaults", self.set_defaults, False),
            ("nvnTextureBuilderSetDevice", S("device"), False),
            ("nvnTextureBuilderSetFlags", S("flags"), False),
            ("nvnTextureBuilderSetFormat", S("format"), False),
            ("nvnTextureBuilderSetSize2D", S("width", "height"), False),
            ("nvnTextureBuilderSetStorage", S("pool", "offset"), False),
            ("nvnTextureBuilderGetStorageSize", self.texture_storage_size, False),
            ("nvnTextureBuilderGetBlockHeightLog2", self.texture_block_height, False),
            ("nvnTextureInitialize", self.texture_initialize, True),
            ("nvnTextureFinalize", self.no_op, False),
            ("nvnSamplerBuilderSetDefaults", self.set_defaults, False),
            ("nvnSamplerBuilderSetDevice", S("device"), False),
            ("nvnSamplerBuilderSetMinMagFilter", S("min", "mag"), False),
            ("nvnSamplerBuilderSetWrapMode", S("wrap_s", "wrap_t", "wrap_r"), False),
            ("nvnSamplerInitialize", self.sampler_initialize, True),
            ("nvnTexturePoolInitialize", self.descriptor_pool_initialize, False),
            ("nvnTexturePoolRegisterTexture", self.register_texture, False),
            ("nvnSamplerPoolInitialize", self.descriptor_pool_initialize, False),
            ("nvnSamplerPoolRegisterSampler", self.register_sampler, False),
            ("nvnProgramInitialize", self.program_initialize, False),
            ("nvnProgramSetShaders", self.program_set_shaders, True),
            ("nvnQueueBuilderSetDefaults", self.set_defaults, False),
            ("nvnQueueBuilderSetDevice", S("device"), False),
            ("nvnQueueInitialize", self.queue_initialize, False),
            ("nvnQueueSubmitCommands", self.queue_submit, False),
            ("nvnQueueFlush", self.queue_flush, True),
            ("nvnQueueFinish", self.queue_finish, True),
            ("nvnQueueFenceSync", self.queue_fence, False),
            ("nvnQueuePresentTexture", self.queue_present, True),
            ("nvnSyncInitialize", self.sync_initialize, False),
            ("nvnSyncWait", self.sync_wait, True),
            ("nvnWindowBuilderSetDefaults", self.set_defaults, False),
            ("nvnWindowBuilderSetDevice", S("device"), False),
            ("nvnWindowBuilderSetTextures", S("count", "textures"), False),
            ("nvnWindowInitialize", self.window_initialize, False),
            ("nvnWindowAcquireTexture", self.window_acquire, False),
            ("nvnCommandBufferInitialize", self.cb_initialize, False),
            ("nvnCommandBufferAddCommandMemory", self.cb_command_memory, False),
            ("nvnCommandBufferAddControlMemory", self.cb_control_memory, False),
            ("nvnCommandBufferBeginRecording", self.cb_begin, False),
            ("nvnCommandBufferEndRecording", self.cb_end, False),
            ("nvnCommandBufferSetRenderTargets", self.cb_targets, False),
            ("nvnCommandBufferClearColor", self.cb_clear, False),
            ("nvnCommandBufferBindProgram", self.cb_program, False),
            ("nvnCommandBufferBindVertexAttribState", self.cb_attribs, False),
            ("nvnCommandBufferBindVertexStreamState", self.cb_streams, False),
            ("nvnCommandBufferBindVertexBuffer", self.cb_vertex_buffer, False),
            ("nvnCommandBufferBindUniformBuffer", self.cb_uniform, False),
            ("nvnCommandBufferBindTexture", self.cb_texture, False),
            ("nvnCommandBufferBindColorState", self.cb_color_state, False),
            ("nvnCommandBufferSetViewport", self.cb_viewport, False),
            ("nvnCommandBufferDrawArrays", self.cb_draw, False),
            ("nvnCommandBufferDrawArraysInstanced", lambda c: self.cb_draw(c, True), False),
            ("nvnCommandBufferDrawElements", self.cb_draw_elements, False),
            ("nvnCommandBufferDrawElementsInstanced", lambda c: self.cb_draw_elements(c, True), False),
            ("nvnDepthStencilStateSetDefaults", self.state_defaults("nvnDepthStencilStateSetDefaults", DS_DEFAULTS), False),
            ("nvnDepthStencilStateSetDepthTestEnable", self.state_field("nvnDepthStencilStateSetDepthTestEnable", 0), False),
            ("nvnDepthStencilStateSetDepthWriteEnable", self.state_field("nvnDepthStencilStateSetDepthWriteEnable", 4), False),
            (
                "nvnDepthStencilStateSetDepthFunc",
                self.state_field("nvnDepthStencilStateSetDepthFunc", 8, len(P.COMPARE_OPS) - 1),
                False,
            ),
            ("nvnDepthStencilStateSetStencilTestEnable", self.state_field("nvnDepthStencilStateSetStencilTestEnable", 12), False),
            ("nvnDepthStencilStateSetStencilFunc", self.ds_stencil_func, False),
            ("nvnDepthStencilStateSetStencilOp", self.ds_stencil_op, False),
            ("nvnPolygonStateSetDefaults", self.state_defaults("nvnPolygonStateSetDefaults", POLYGON_DEFAULTS), False),
            ("nvnPolygonStateSetCullFace", self.state_field("nvnPolygonStateSetCullFace", 0, len(P.CULL_MODES) - 1), False),
            ("nvnPolygonStateSetFrontFace", self.state_field("nvnPolygonStateSetFrontFace", 4, len(P.FRONT_FACES) - 1), False),
            (
                "nvnPolygonStateSetPolygonMode",
                self.state_field("nvnPolygonStateSetPolygonMode", 8, len(P.POLYGON_MODES) - 1),
                False,
            ),
            ("nvnPolygonStateSetPolygonOffsetEnables", self.state_field("nvnPolygonStateSetPolygonOffsetEnables", 12, 7), False),
            ("nvnBlendStateSetDefaults", self.state_defaults("nvnBlendStateSetDefaults", BLEND_DEFAULTS), False),
            ("nvnBlendStateSetBlendTarget", self.state_field("nvnBlendStateSetBlendTarget", 0, MAX_TARGETS - 1), False),
            ("nvnBlendStateSetBlendFunc", self.blend_func, False),
            ("nvnBlendStateSetBlendEquation", self.blend_equation, False),
            ("nvnColorStateSetDefaults", self.state_defaults("nvnColorStateSetDefaults", (0,)), False),
            ("nvnColorStateSetBlendEnable", self.color_blend_enable, False),
            ("nvnChannelMaskStateSetDefaults", self.state_defaults("nvnChannelMaskStateSetDefaults", (0xFFFFFFFF,)), False),
            ("nvnChannelMaskStateSetChannelMask", self.channel_mask, False),
            ("nvnMultisampleStateSetDefaults", self.state_defaults("nvnMultisampleStateSetDefaults", (1, 0)), False),
            ("nvnMultisampleStateSetSamples", self.ms_samples, False),
            (
                "nvnMultisampleStateSetAlphaToCoverageEnable",
                self.state_field("nvnMultisampleStateSetAlphaToCoverageEnable", 4),
                False,
            ),
            ("nvnCommandBufferBindDepthStencilState", self.cb_depth_stencil_state, False),
            ("nvnCommandBufferBindPolygonState", self.cb_polygon_state, False),
            ("nvnCommandBufferBindBlendState", self.cb_blend_state, False),
            ("nvnCommandBufferBindChannelMaskState", self.cb_channel_mask_state, False),
            ("nvnCommandBufferBindMultisampleState", self.cb_multisample_state, False),
            ("nvnCommandBufferSetStencilRef", self.cb_stencil_value(0, "nvnCommandBufferSetStencilRef"), False),
            ("nvnCommandBufferSetStencilValueMask", self.cb_stencil_value(1, "nvnCommandBufferSetStencilValueMask"), False),
            ("nvnCommandBufferSetStencilMask", self.cb_stencil_value(2, "nvnCommandBufferSetStencilMask"), False),
            ("nvnCommandBufferSetScissor", self.cb_scissor, False),
            ("nvnCommandBufferSetDepthBias", self.cb_depth_bias, False),
            ("nvnCommandBufferSetBlendColor", self.cb_blend_color, False),
            ("nvnCommandBufferClearDepthStencil", self.cb_clear_depth_stencil, False),
            ("nvnSamplerBuilderSetCompare", S("compare_mode", "compare_func"), False),
            ("nvnTextureBuilderSetTarget", S("target"), False),
            ("nvnTextureBuilderSetDepth", S("layers"), False),
            ("nvnTextureBuilderSetSamples", S("samples"), False),
            ("nvnCommandBufferDownsample", self.cb_downsample, False),
        ]
        rows += EventFunctions(self).rows()  # NVNevent (nvn/events.py)
        return [HostFunction(n, n, fn, blocking) for n, fn, blocking in rows]

    # -- the native recorder ----------------------------------------------------------------------
    def install_native(self, ffi: Any, lib: Any, registry: Any) -> None:
        """A registry binder: with ``cpu_host.nvn_recorder = native``, bind the hot calls to the C
        recorder at every guest address the registry bound their Python functions, each keeping a
        Python fallback (``_native_retry``)."""
        from nxrecomp.common import settings

        if settings.get("cpu_host", "nvn_recorder") != "native":
            return
        from cpu_host.horizon.hle.nvn.native import NativeRecorder

        with self.lock:
            self.native = NativeRecorder()
            impls = {f.name: f for f in self.functions()}
            names = self.native.names()

            def wrap(index: int, b: Binding) -> Any:
                f = impls[b.name]
                retry = HostFunction(f.name, f.signature, self._native_retry(names.index(b.name), f.impl))
                return registry._wrap(ffi, lib, index, Binding(retry, b.name, b.address))

            n = self.native.install(ffi, lib, registry.bindings, wrap)
            if self.gpu is not None:
                self._lend_arena()
        log.info("NVN: %d per-draw entry points recorded natively", n)

    def _lend_arena(self) -> None:
        """The native recorder records into the GPU client's command arena: submissions then
        reference its recordings instead of copying them into the ring (PROTOCOL.md "Command
        arena").  One arena a process: a second client's submissions are copied."""
        lend = getattr(self.gpu, "lend_arena", None)
        arena = lend() if self.native is not None and lend is not None else None
        if arena is not None and not self.native.use_arena(*arena):
            log.warning("NVN: another command arena is in use in this process; submissions are copied")

    def _native_retry(self, index: int, impl: Callable[[Call], Any]) -> Callable[[Call], None]:
        """The Python side of hot call ``index``: where the C recorder could not answer, find the
        command buffer as the Python path does (naming a bad pointer or a buffer not recording),
        let the C recorder know its struct's address, and try again; an error it still finds is
        the call's GuestError, an object it does not know is the Python function's to name."""

        def retry(c: Call) -> None:
            with self.lock:
                what = self.native.names()[index]
                cb = self._obj(c, 0, CommandBuffer, what)
                if cb.recording is None:
                    raise GuestError(f"{what}: the command buffer is not recording")
                self.native.alias(cb.id, c.arg(0))
                err = self.native.try_call(index, int(c.ffi.cast("uintptr_t", c.cpu)))
                if err is None:
                    return
                if err:
                    raise GuestError(err)
                impl(c)  # names the object (a program pointer, a program without shaders)
                raise GuestError(f"{what}: the native recorder refused a call the Python path accepts")

        return retry

    def proc_names(self) -> list[str]:
        return [f.name for f in self.functions() if f.name != "nvnBootstrapLoader"]
