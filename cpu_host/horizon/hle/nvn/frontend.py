"""NVN served by host functions (see examples/horizon_hello/sdk/nvn.h for the guest's view).

Objects become GPU-process registrations (``cpu_host.gpu_client``): a memory pool's guest
pages get a memfd behind them (``guest_memory``) that the GPU process maps, so CPU writes need
no upload; textures in pools are read by the GPU process in their block-linear layout;
render targets and window textures are GPU-owned.  Command buffers are recorded here, at the
API level, into the ring's packets; a queue sends what was submitted at Flush, Finish, a
present, or a sync wait, as one ring submission.  GPU addresses are guest addresses: a buffer
at pool storage + offset has that address, so an address maps back to (pool, offset).

Guest mistakes (a bad handle, an address outside every pool, a texture used as a target that
was not made one) end the process with a report naming the function and the value: the GPU
process would reject the submission anyway, and a game that does this is broken."""
from __future__ import annotations

import logging
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.guest_memory import back_with_memfd
from cpu_host.horizon.hle.nvn.objects import (Buffer, CommandBuffer, DescriptorPool, Device, MemoryPool, Program,
                                              Queue, RecordedCommands, Recording, Sampler, Sync, Texture, Window)
from cpu_host.horizon.hle.registry import HostFunction
from gpu_host import blocklinear
from gpu_host import packets as P
from gpu_host.spirv_reflect import SpirvError, reflect

log = logging.getLogger("cpu_host.nvn")

FORMATS = {1: ("RGBA8", 4, 1), 2: ("BGRA8", 4, 1), 3: ("R8", 1, 1), 4: ("RG8", 2, 1), 5: ("RGB565", 2, 1),
           6: ("RGBA16F", 8, 1), 7: ("RGBA32F", 16, 1), 8: ("BC1", 8, 4), 9: ("BC3", 16, 4), 10: ("BC7", 16, 4),
           11: ("ASTC_4x4", 16, 4), 12: ("ASTC_8x8", 16, 8)}     # code -> (name, bytes per element, block size)
FLAG_DISPLAY, FLAG_RENDER_TARGET, FLAG_LINEAR = 1, 2, 4
POOL_CPU_CACHED = 4       # nvn.h NVN_MEMORY_POOL_FLAGS_CPU_CACHED: writes reach the GPU by flushes
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


@dataclass
class NvnService:
    """One process's NVN state; ``connect`` makes the GPU client on first use."""
    connect: Callable[[], Any]                 # -> GpuClient (connected)
    translate: Callable[[int, int, bytes], bytes]   # (arch, stage, code) -> SPIR-V
    on_present: Callable[[], None] = lambda: None
    gob: str = "fermi"        # the console's GOB kind for block-linear surfaces (manifest "gpu")
    gpu: Any = None
    lock: threading.RLock = field(default_factory=threading.RLock)
    objects: dict[int, Any] = field(default_factory=dict)
    builders: dict[int, dict] = field(default_factory=dict)
    next_id: int = 1
    texture_slots: dict[int, Texture] = field(default_factory=dict)
    sampler_slots: dict[int, Sampler] = field(default_factory=dict)
    commands: dict[int, RecordedCommands] = field(default_factory=dict)   # command handle -> recording
    frame: int = 0
    proc_addresses: dict[str, int] = field(default_factory=dict)
    present_times: list[float] = field(default_factory=list)   # time.monotonic() of each present
    flushed: list[tuple[int, int, int]] = field(default_factory=list)   # (pool, offset, size) since the last submit

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
        return name, w, h, bhl, size

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
            pool, off = None, 0
            if b.get("pool"):
                pool = self.objects.get(c.read_u64(b["pool"], "texture pool"))
                if not isinstance(pool, MemoryPool):
                    raise GuestError("nvnTextureInitialize: the builder's storage is no initialised memory pool")
                off = b.get("offset", 0)
                if off + size > pool.size:
                    raise GuestError(f"nvnTextureInitialize: {name} {w}x{h} needs {size:#x} bytes at {off:#x}, "
                                     f"past the pool's end {pool.size:#x}")
            elif not target:
                raise GuestError("nvnTextureInitialize: a sampled texture needs storage in a memory pool")
            tex = self._new(c, 0, lambda i: Texture(i, w, h, name, flags, pool, off, bhl))
            linear = bool(flags & FLAG_LINEAR)
            bpe = FORMATS[b["format"]][1]
            self._gpu().register(TextureDesc(tex.id, pool.id if pool else 0, off, w, h, name,
                                             block_linear=not linear, block_height_log2=bhl,
                                             pitch=w * bpe if linear else 0, render_target=target,
                                             gob=self.gob))
        return 1

    def sampler_initialize(self, c: Call) -> int:
        from cpu_host.gpu_client.registry import SamplerDesc

        with self.lock:
            b = self.builders.get(c.arg(1), {})
            linear = b.get("mag", 0) == 1 or b.get("min", 0) == 1
            repeat = b.get("wrap_s", 0) == 1
            s = self._new(c, 0, lambda i: Sampler(i, linear, repeat))
            self._gpu().register(SamplerDesc(s.id, linear, repeat))
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

    def register_sampler(self, c: Call) -> None:
        with self.lock:
            slot = c.sarg32(1)
            if not 0 <= slot < 1 << 12:
                raise GuestError(f"sampler id {slot} out of range")
            self.sampler_slots[slot] = self._obj(c, 2, Sampler, "nvnSamplerPoolRegisterSampler")

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
            for i in range(count):
                data, control = struct.unpack("<QQ", c.read(stages + 16 * i, 16, "NVNshaderData"))
                magic, stage, arch, size = struct.unpack("<IIII", c.read(control, 16, "NVNshaderControl"))
                if magic != SHADER_MAGIC:
                    raise GuestError(f"shader {i}: control magic {magic:#x} is not 'NXSH'")
                if stage not in (STAGE_VERTEX, STAGE_FRAGMENT):
                    raise GuestError(f"shader {i}: stage {stage} (vertex 2 and fragment 3 are served)")
                pool, off = self._pool_at(data, size, f"shader {i} code")
                code = c.read(data, size, f"shader {i} code")
                spirv[stage] = code if arch == ARCH_SPIRV else self.translate(arch, stage, code)
            if set(spirv) != {STAGE_VERTEX, STAGE_FRAGMENT}:
                return 0
            try:
                prog.pools = any(reflect(code, f"stage {st}").pools for st, code in spirv.items())
            except SpirvError as e:
                raise GuestError(f"nvnProgramSetShaders: {e}") from None
            self._gpu().register(ProgramDesc(prog.id, spirv[STAGE_VERTEX], spirv[STAGE_FRAGMENT]))
            prog.registered = True
        return 1

    # -- command buffers --------------------------------------------------------------------
    def cb_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: CommandBuffer(i))
        return 1

    def cb_memory(self, c: Call) -> None:
        with self.lock:
            self._obj(c, 0, CommandBuffer, "nvnCommandBufferAdd*Memory")   # recorded host-side instead

    def cb_begin(self, c: Call) -> None:
        with self.lock:
            self._obj(c, 0, CommandBuffer, "nvnCommandBufferBeginRecording").recording = Recording()

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
            self.commands[handle] = RecordedCommands(P.encode_commands(cmds),
                                                     frozenset(c[1] for c in cmds if c[0] == P.OP_TARGET))
            cb.recording = None
            return handle

    def _rec(self, c: Call, what: str) -> Recording:
        cb = self._obj(c, 0, CommandBuffer, what)
        if cb.recording is None:
            raise GuestError(f"{what}: the command buffer is not recording")
        return cb.recording

    def cb_targets(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferSetRenderTargets")
            n = c.sarg32(1)
            if n != 1:
                raise GuestError(f"nvnCommandBufferSetRenderTargets: {n} colour targets (one is served)")
            ptr = c.read_u64(c.arg(2), "colour target array")
            oid = c.read_u64(ptr, "colour target")
            tex = self.objects.get(oid)
            if not isinstance(tex, Texture) or not tex.flags & (FLAG_DISPLAY | FLAG_RENDER_TARGET):
                raise GuestError(f"nvnCommandBufferSetRenderTargets: {ptr:#x} is not a render-target texture")
            rec.commands.append((P.OP_TARGET, tex.id))

    def cb_clear(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferClearColor")
            r, g, b, a = struct.unpack("<4f", c.read(c.arg(2), 16, "clear colour"))
            rec.commands.append((P.OP_CLEAR, r, g, b, a))

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

    def cb_streams(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindVertexStreamState")
            n = c.sarg32(1)
            if n != 1:
                raise GuestError(f"{n} vertex streams (one is served)")
            rec.stride = struct.unpack("<II", c.read(c.arg(2), 8, "vertex stream state"))[0]

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
            rec.commands.append((P.OP_BLEND, bool(c.read_u32(c.arg(1), "colour state") & 1)))

    def cb_viewport(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferSetViewport")
            rec.commands.append((P.OP_VIEWPORT, float(c.sarg32(1)), float(c.sarg32(2)), float(c.sarg32(3)),
                                 float(c.sarg32(4))))

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
        pools = (P.OP_POOLS, [ts[i].id if i in ts else P.EMPTY for i in range(P.POOL_TEXTURES)],
                 [ss[i].id if i in ss else P.EMPTY for i in range(P.POOL_SAMPLERS)])
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
                rec = self.commands.get(h)
                if rec is None:
                    raise GuestError(f"nvnQueueSubmitCommands: {h:#x} is not a command handle")
                q.pending.append(rec.encoded)
                q.targets |= rec.targets

    def _flush(self, q: Queue) -> int:
        if not q.pending and not q.syncs:
            return 0
        if self.flushed:      # what the CPU wrote before these commands, ahead of them
            q.pending[:0] = [(P.OP_DIRTY, *r) for r in self.flushed]
            self.flushed = []
        # Render targets with storage in a memory pool are the game's to read: their pixels are
        # written back into the pool before this submission's fences signal.
        targets = q.targets | {c[1] for c in q.pending if type(c) is tuple and c[0] == P.OP_TARGET}
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
            for q in self.objects.values():     # a fence not flushed yet is flushed by the wait
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
            ("nvnMemoryPoolMap", self.pool_address, False),   # CPU address = GPU address
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
            ("nvnCommandBufferAddCommandMemory", self.cb_memory, False),
            ("nvnCommandBufferAddControlMemory", self.cb_memory, False),
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
        ]
        return [HostFunction(n, n, fn, blocking) for n, fn, blocking in rows]

    def proc_names(self) -> list[str]:
        return [f.name for f in self.functions() if f.name != "nvnBootstrapLoader"]
