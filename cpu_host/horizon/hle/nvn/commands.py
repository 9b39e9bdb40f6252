"""The NVN front end's command buffers: recording the per-draw calls into packets (render targets,
program, vertex streams, uniforms, textures, draws). ``NvnCommands`` is mixed into
``frontend.NvnService``, whose state and helpers (``_obj``, ``_new``, ``_gpu``, the lock) its
methods use."""

from __future__ import annotations

import logging
import struct

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.compute import STAGE_COMPUTE, ComputeFunctions
from cpu_host.horizon.hle.nvn.handles import Held, nbytes
from cpu_host.horizon.hle.nvn.objects import (
    CommandBuffer,
    MemoryPool,
    Program,
    RecordedCommands,
    Recording,
    Texture,
)
from gpu_host import packets as P

from cpu_host.horizon.hle.nvn.tables import (
    DEPTH_FORMATS,
    MAX_TARGETS,
    FLAG_DISPLAY,
    FLAG_RENDER_TARGET,
    HANDLE_SAMPLER_SHIFT,
    MAX_SLOTS,
    _enum,
    _blend_packet,
    _extra_blend_packets,
    _targets,
)

log = logging.getLogger("cpu_host.nvn")


class NvnCommands:
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
            if getattr(prog, "compute", None) is not None:  # the compute stage's program (nvn/compute.py)
                return ComputeFunctions(self).bind_program(c, prog)
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
            if c.sarg32(1) == STAGE_COMPUTE:  # a compute kernel's parameters (nvn/compute.py)
                return ComputeFunctions(self).bind_params(c)
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
