"""Compute dispatches in the NVN front end (issue 31): a compute program's shader, the storage
buffers, kernel parameters and images bound for the compute stage, and
``nvnCommandBufferDispatchCompute`` recorded as the packets of gpu_host/PROTOCOL.md "Compute"
(COMPUTE_BUFFER, COMPUTE_CONST, COMPUTE_SURFACE, DISPATCH), which the GPU process replays
(gpu_host/compute.py).

The guest's view (examples/horizon_hello/sdk/nvn.h is this project's own model of the API; the
calls' names are NVN's public entry-point names, their arguments ours):

- ``nvnProgramSetShaders`` with one stage of ``NVN_STAGE_COMPUTE`` (1, the shader service's
  numbering): the stage's ``NVNshaderControl`` is followed by an ``NVNcomputeControl``
  (``uint32_t local_size[3]; uint32_t bank_size; uint32_t bank_count; uint32_t reserved;
  const NVNconstantBank *banks;``): the workgroup size the kernel was launched with, the size of
  its constant bank 0 (the cubin's ``.nv.constant0`` section) and the constant banks that are part
  of the program (``{uint32_t bank; uint32_t size; NVNbufferAddress data;}`` each, the bytes in a
  memory pool: ptxas's SM5x literal pool, the cubin's ``.nv.constant2.<kernel>``, is bank 2).  The
  code (SM86 or SM53 machine code of a CUDA-style kernel) is translated by the shader service with
  that local size and those banks (shader.proto ``Program.banks``: the service reads them as
  constants of the module and judges their numbers and sizes), and registered with the GPU
  process as a compute program.  With ``flags`` bit 0 (``reserved`` before) an
  ``NVNcomputeGlobals`` pointer follows: the kernel's ``__device__`` globals, placed in the GPU
  process's device memory and relocated for their address (compute_globals.py).
- ``nvnCommandBufferBindProgram`` of a compute program makes it the compute stage's program.
- ``nvnCommandBufferBindUniformBuffer(cb, NVN_STAGE_COMPUTE, 0, address, size)``: the kernel's
  parameters (the bytes the CUDA driver copies into bank 0 at the ISA's parameter offset).
- ``nvnCommandBufferBindStorageBuffer(cb, NVN_STAGE_COMPUTE, index, address, size)``, index
  0..15: storage buffer ``index``; its address is the kernel's ``index``-th 8-byte parameter
  (pointer parameters first: the convention of the translated kernels).  The GPU process writes
  the buffer's device address there and writes the range back into guest memory after the
  dispatch.
- ``nvnDeviceGetImageHandle(device, id)`` and ``nvnCommandBufferBindImage(cb,
  NVN_STAGE_COMPUTE, index, handle)``, index 0..7: entry ``index`` of the 2D surface pool is the
  texture registered under ``id`` in the texture pool (a render target of a 4-byte texel
  format: the GPU process owns its texels, as for targets).
- ``nvnCommandBufferDispatchCompute(cb, x, y, z)``: the driver's words of bank 0 (block and grid
  dimensions and the windows of the ISA's layout, shader_svc/sm86/cbank.py and
  shader_svc/sm53/cbank.py, written as COMPUTE_CONST words) and DISPATCH.  The bindings
  (COMPUTE_BUFFER, COMPUTE_SURFACE, COMPUTE_CONST) are recorded where they differ from what this
  recording sent before (the GPU process keeps them to the end of the submission, across
  EVENT_WAITs).  A program that samples texture objects (its SPIR-V declares the texture or
  sampler pool: TEX.B and kin, handles ``sampler << 20 | texture``) gets a POOLS packet before its
  dispatch with the texture and sampler pools' entries as registered now, as a bindless draw does.

Other stages' storage buffers and images are refused by name (not served)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn import compute_globals
from cpu_host.horizon.hle.nvn.objects import Program
from gpu_host import packets as P
from gpu_host.compute_spirv import reads_pools
from gpu_host.objects import ObjectError

STAGE_COMPUTE = 1  # the shader service's stage numbering, as nvn.h's NVN_STAGE_* are
MAX_PROGRAM_BANKS = 31  # banks 1..31 (bank 0 is the parameter bank, built at each dispatch)
SERVED = object()  # returned by a call the C recorder left to Python and Python served
EMPTY = P.EMPTY


@dataclass(frozen=True)
class ComputeInfo:
    """What a dispatch of a compute program needs: its ISA's bank layout and its launch shape."""

    arch: int  # 86 or 53
    local_size: tuple[int, int, int]
    bank_size: int  # constant bank 0, rounded up to 16 bytes
    pools: bool = False  # samples the texture/sampler pools (TEX.B and kin: a POOLS packet before its dispatches)


@dataclass
class ComputeBinds:
    """The compute stage's bindings in one recording."""

    program: Program | None = None
    params: tuple[int, int, int] | None = None  # (pool, offset, size) of the kernel parameters
    buffers: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # index -> (pool, offset, size)
    images: dict[int, int] = field(default_factory=dict)  # index -> texture object id
    # (op, slot or bank offset) -> the COMPUTE_* packet this recording last recorded for it
    sent: dict[tuple[int, int], tuple] = field(default_factory=dict)


def bank_layout(arch: int) -> tuple[int, Any]:
    """(parameter offset, cbank0 function) of an ISA's constant bank 0 (the shader service's)."""
    if arch == 86:
        from shader_svc.sm86.cbank import PARAMS, cbank0
    elif arch == 53:
        from shader_svc.sm53.cbank import PARAMS, cbank0
    else:
        raise GuestError(f"compute program: architecture {arch} (SM86 and SM53 are served)")
    return PARAMS, cbank0


def driver_words(info: ComputeInfo, groups: tuple[int, int, int]) -> list[tuple[int, int]]:
    """(offset, value) of every non-zero word the driver writes into bank 0 outside the
    parameters: the ISA layout's block and grid dimensions and windows."""
    params_at, cbank0 = bank_layout(info.arch)
    img = cbank0(info.bank_size, info.local_size, groups, b"")
    words = struct.unpack(f"<{params_at // 4}I", img[:params_at])
    return [(4 * i, w) for i, w in enumerate(words) if w]


class ComputeFunctions:
    """The compute entry points of one ``NvnService`` (its objects, lock and GPU client)."""

    def __init__(self, svc: Any) -> None:
        self.svc = svc

    def rows(self) -> list[tuple[str, Any, bool]]:
        return [
            ("nvnCommandBufferBindStorageBuffer", self.bind_storage, False),
            ("nvnCommandBufferBindImage", self.bind_image, False),
            ("nvnDeviceGetImageHandle", self.image_handle, False),
            ("nvnCommandBufferDispatchCompute", self.dispatch, False),
        ]

    # -- programs (nvnProgramSetShaders with a compute stage) ---------------------------------------
    def set_shaders(self, c: Call, prog: Program, control: int, data: int, arch: int, size: int, features: int) -> int:
        """A compute stage's program: its control's NVNcomputeControl read, the code translated
        with its local size and registered with the GPU process as a compute program."""
        from cpu_host.gpu_client.registry import ProgramDesc

        svc = self.svc
        x, y, z, bank, nbanks, flags, table = struct.unpack("<6IQ", c.read(control + 16, 32, "NVNcomputeControl"))
        if flags & ~compute_globals.FLAG_GLOBALS:
            raise GuestError(f"nvnProgramSetShaders: NVNcomputeControl flags {flags:#x} (bit 0: globals; no others)")
        if not (1 <= x and 1 <= y and 1 <= z and x * y * z <= 1024):
            raise GuestError(f"nvnProgramSetShaders: compute local size {[x, y, z]} is not 1..1024 invocations")
        if not 16 <= bank <= P.MAX_COMPUTE_BANK:
            raise GuestError(f"nvnProgramSetShaders: compute bank_size {bank} is not 16..{P.MAX_COMPUTE_BANK}")
        params_at, _ = bank_layout(arch)  # names an architecture with no bank layout
        if bank <= params_at:
            raise GuestError(
                f"nvnProgramSetShaders: compute bank_size {bank} ends before the SM{arch} parameters at {params_at:#x}"
            )
        svc._pool_at(data, size, "compute shader code")
        code = c.read(data, size, "compute shader code")
        banks = self._program_banks(c, nbanks, table)
        if flags & compute_globals.FLAG_GLOBALS:
            (ptr,) = struct.unpack("<Q", c.read(control + 48, 8, "NVNcomputeControl globals"))
            spirv = self._placed(c, prog, ptr, arch, code, banks, features, (x, y, z))
        else:
            spirv = svc.translate(arch, STAGE_COMPUTE, code, features, local_size=(x, y, z), banks=banks)
            svc._gpu().register(ProgramDesc(prog.id, spirv, b""))
        prog.registered = False  # not a graphics program: BindProgram makes it the compute stage's
        try:
            pools = reads_pools(spirv)
        except ObjectError as e:
            raise GuestError(f"nvnProgramSetShaders: {e}") from None
        prog.compute = ComputeInfo(arch, (x, y, z), (bank + 15) & ~15, pools)  # type: ignore[attr-defined]
        return 1

    def _placed(
        self,
        c: Call,
        prog: Program,
        ptr: int,
        arch: int,
        code: bytes,
        banks: tuple[tuple[int, bytes], ...],
        features: int,
        local: tuple[int, int, int],
    ) -> bytes:
        """A program with ``__device__`` globals (compute_globals.py): its region placed by the GPU
        process, relocated for the address given, translated with the region as Program.data
        and registered so that a restarted GPU process gets it rebuilt for its new address."""
        from cpu_host.gpu_client.registry import DataDesc, ProgramDesc

        svc = self.svc
        g = compute_globals.read(c, ptr, svc)
        compute_globals.relocate(g, arch, code, banks, 0)  # a bad table is refused before anything is placed
        placement = svc.next_id  # a placement of its own per SetShaders (kept for the GPU session)
        svc.next_id += 1

        def translate(code: bytes, banks: tuple, data: tuple) -> bytes:
            return svc.translate(arch, STAGE_COMPUTE, code, features, local_size=local, banks=banks, data=data)

        pp = compute_globals.PlacedProgram(placement, g, arch, code, banks, translate)
        gpu = svc._gpu()
        gpu.place_data(DataDesc(placement, g.size, pp.regions))
        spirv = pp.rebuild(gpu.placed)
        gpu.register(ProgramDesc(prog.id, spirv, b"", data=(placement,), rebuild=pp.rebuild))
        prog.placement = placement  # type: ignore[attr-defined]
        return spirv

    def _program_banks(self, c: Call, count: int, table: int) -> tuple[tuple[int, bytes], ...]:
        """The NVNcomputeControl's ``bank_count`` NVNconstantBank entries at ``table``, each one's
        bytes read from its memory pool.  Bank numbers and sizes are judged by the shader service
        (request.check_banks, refusals named ``banks[i]``); here only what reading them needs."""
        if count > MAX_PROGRAM_BANKS:
            raise GuestError(f"nvnProgramSetShaders: compute bank_count {count} is more than {MAX_PROGRAM_BANKS} (banks 1..31)")
        out = []
        for i in range(count):
            num, size, addr = struct.unpack("<IIQ", c.read(table + 16 * i, 16, f"NVNconstantBank {i}"))
            if not 0 < size <= P.MAX_COMPUTE_BANK:
                raise GuestError(
                    f"nvnProgramSetShaders: compute constant bank {i} (c[{num:#x}]) of {size} bytes (1..{P.MAX_COMPUTE_BANK})"
                )
            self.svc._pool_at(addr, size, f"compute constant bank {i} (c[{num:#x}])")
            out.append((num, c.read(addr, size, f"compute constant bank {i}")))
        return tuple(out)

    # -- bindings -----------------------------------------------------------------------------------
    def _binds(self, c: Call, what: str) -> ComputeBinds:
        rec = self.svc._rec(c, what)
        b = rec.__dict__.get("compute")
        if b is None:
            b = rec.__dict__["compute"] = ComputeBinds()
        return b

    def _stage(self, c: Call, what: str) -> None:
        if c.sarg32(1) != STAGE_COMPUTE:
            raise GuestError(f"{what}: stage {c.sarg32(1)} (storage buffers and images are served for the compute stage, 1)")

    def bind_program(self, c: Call, prog: Program) -> Any:
        """nvnCommandBufferBindProgram of a compute program (nothing is recorded until a dispatch)."""
        with self.svc.lock:
            self._binds(c, "nvnCommandBufferBindProgram").program = prog
        return SERVED

    def bind_params(self, c: Call) -> Any:
        """nvnCommandBufferBindUniformBuffer(cb, NVN_STAGE_COMPUTE, 0, address, size): the parameters."""
        what = "nvnCommandBufferBindUniformBuffer"
        with self.svc.lock:
            binds = self._binds(c, what)
            if c.sarg32(2) != 0:
                raise GuestError(f"{what}: compute uniform buffer index {c.sarg32(2)} (index 0, the parameters, is served)")
            size = c.arg(4)
            if not 0 < size <= P.MAX_COMPUTE_BANK:
                raise GuestError(f"{what}: compute parameters of {size} bytes (1..{P.MAX_COMPUTE_BANK})")
            pool, off = self.svc._pool_at(c.arg(3), size, "compute parameters")
            binds.params = (pool.id, off, size)
        return SERVED

    def _slot(self, c: Call, what: str, slots: int, noun: str) -> tuple[Any, int]:
        """The compute bindings ``c``'s command buffer records (its stage checked as compute) and
        the slot index in argument 2, checked to lie in 0..slots-1; call with the lock held."""
        self._stage(c, what)
        binds = self._binds(c, what)
        index = c.sarg32(2)
        if not 0 <= index < slots:
            raise GuestError(f"{what}: {noun} index {index} (0..{slots - 1})")
        return binds, index

    def bind_storage(self, c: Call) -> None:
        what = "nvnCommandBufferBindStorageBuffer"
        with self.svc.lock:
            binds, index = self._slot(c, what, P.COMPUTE_BUFFER_SLOTS, "storage buffer")
            size = c.arg(4)
            if size == 0:
                raise GuestError(f"{what}: storage buffer {index} of 0 bytes")
            pool, off = self.svc._pool_at(c.arg(3), size, f"storage buffer {index}")
            binds.buffers[index] = (pool.id, off, size)

    def image_handle(self, c: Call) -> int:
        tid = c.sarg32(1)
        if tid not in self.svc.texture_slots:
            raise GuestError(f"nvnDeviceGetImageHandle: texture id {tid} is not registered in the texture pool")
        return tid

    def bind_image(self, c: Call) -> None:
        what = "nvnCommandBufferBindImage"
        with self.svc.lock:
            binds, index = self._slot(c, what, P.COMPUTE_SURFACE_SLOTS, "image")
            handle = c.arg(3)
            tex = self.svc.texture_slots.get(handle)
            if tex is None:
                raise GuestError(f"{what}: image handle {handle:#x} names no texture of the texture pool")
            binds.images[index] = tex.id

    def _pools(self, rec: Any) -> list[tuple]:
        """A POOLS packet with the texture and sampler pools' entries as registered now (record
        time), as before a draw of a program that reads them (commands.py ``_pools``): with the
        Python recorder when they differ from the last one recorded; into the C recorder's stream
        always (its own last POOLS is forgotten when Python appends one: recorder.c nxr_append)."""
        ts, ss = self.svc.texture_slots, self.svc.sampler_slots
        pools = (
            P.OP_POOLS,
            [ts[i].id if i in ts else EMPTY for i in range(P.POOL_TEXTURES)],
            [ss[i].id if i in ss else EMPTY for i in range(P.POOL_SAMPLERS)],
        )
        if isinstance(rec.commands, list):
            if pools == rec.pools:
                return []
            rec.pools = pools
        return [pools]

    # -- the dispatch ---------------------------------------------------------------------------------
    def dispatch(self, c: Call) -> None:
        what = "nvnCommandBufferDispatchCompute"
        with self.svc.lock:
            binds = self._binds(c, what)
            rec = self.svc._rec(c, what)
            prog = binds.program
            info = getattr(prog, "compute", None)
            if info is None:
                raise GuestError(f"{what}: no compute program bound")
            groups = (c.arg32(1), c.arg32(2), c.arg32(3))
            params_at, _ = bank_layout(info.arch)
            out: list[tuple] = []
            if info.pools:
                out += self._pools(rec)
            mask = 0
            state: list[tuple] = []  # the bindings this dispatch needs; recorded where they changed
            for k, (pool, off, size) in sorted(binds.buffers.items()):
                at = params_at + 8 * k
                state.append((P.OP_COMPUTE_BUFFER, k, pool, off, size, at if at + 8 <= info.bank_size else EMPTY, True))
                mask |= 1 << k
            for k in range(P.COMPUTE_SURFACE_SLOTS):
                state.append((P.OP_COMPUTE_SURFACE, k, binds.images.get(k, EMPTY)))
            words = dict(driver_words(info, groups))
            for (op, at), _ in binds.sent.items():  # a word an earlier dispatch set and this one does not
                if op == P.OP_COMPUTE_CONST and at not in words:
                    words[at] = 0
            state += [(P.OP_COMPUTE_CONST, at, v) for at, v in sorted(words.items())]
            for p in state:
                # the GPU process keeps them to the end of the submission, across EVENT_WAITs
                # (events.carried_state): what this recording sent before holds
                if binds.sent.get((p[0], p[1])) != p:
                    binds.sent[(p[0], p[1])] = p
                    out.append(p)
            if binds.params is not None:
                pool, off, size = binds.params
                size = min(size, info.bank_size - params_at)  # the bank holds no more
            else:
                pool, off, size = EMPTY, 0, 0
            out.append((P.OP_DISPATCH, prog.id, *groups, info.bank_size, mask, pool, off, size, params_at))
            for p in out:
                rec.commands.append(p)
            targets = getattr(rec.commands, "targets", None)  # the C recorder's stream keeps its own set
            if targets is not None:  # surfaces it writes are written back like render targets (queues.py)
                targets.update(t for t in binds.images.values())
