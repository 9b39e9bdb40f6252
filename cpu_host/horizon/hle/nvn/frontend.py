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
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.compute import SERVED, ComputeFunctions
from cpu_host.horizon.hle.nvn.events import EventFunctions
from cpu_host.horizon.hle.nvn.handles import CommandHandles
from cpu_host.horizon.hle.nvn.objects import (
    CommandBuffer,
    Device,
    MemoryPool,
    Sampler,
    Texture,
)
from cpu_host.horizon.hle.registry import Binding, HostFunction
from gpu_host import packets as P
from nxrecomp.common import settings

from cpu_host.horizon.hle.nvn.tables import (  # noqa: F401 (also the names others import from here)
    _blend_packet,
    _extra_blend_packets,
    block_height_log2,
    MAX_TARGETS,
    DS_DEFAULTS,
    POLYGON_DEFAULTS,
    BLEND_DEFAULTS,
    HANDLE_SAMPLER_SHIFT,
)
from cpu_host.horizon.hle.nvn.commands import NvnCommands
from cpu_host.horizon.hle.nvn.fixed_state import NvnFixedState
from cpu_host.horizon.hle.nvn.queues import NvnQueues
from cpu_host.horizon.hle.nvn.resources import NvnResources

log = logging.getLogger("cpu_host.nvn")


@dataclass
class NvnService(NvnResources, NvnCommands, NvnFixedState, NvnQueues):
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
        rows += ComputeFunctions(self).rows()  # compute dispatches (nvn/compute.py)
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
                if impl(c) is SERVED:  # a call the C recorder leaves to Python (compute stage: nvn/compute.py)
                    return
                # impl named the object (a program pointer, a program without shaders)
                raise GuestError(f"{what}: the native recorder refused a call the Python path accepts")

        return retry

    def proc_names(self) -> list[str]:
        return [f.name for f in self.functions() if f.name != "nvnBootstrapLoader"]
