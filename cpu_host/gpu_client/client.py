"""The CPU host's handle on the GPU process.

``GpuClient`` owns the memfds (pools, ring, doorbell), registers objects over gRPC and writes
submissions into the ring.  It keeps every registered object and every submission the GPU has
not finished, so when the GPU process dies (noticed by the fd socket hanging up) it waits for
the supervisor's restart, re-attaches, re-registers everything and resubmits; the caller only
sees a delay.
"""

from __future__ import annotations

import collections
import ctypes
import logging
import mmap
import os
import select
import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cpu_host.gpu_client.blob import Block, BlobRecord, part_records
from cpu_host.gpu_client.memory import Pool
from cpu_host.gpu_client.registry import DataDesc, ProgramDesc, Registry, SamplerDesc, TextureDesc
from cpu_host.gpu_client.ring_writer import RingWriter
from cpu_host.gpu_client.ringput import RingPut
from cpu_host.gpu_client.shaders import ShaderSource
from gpu_host import fdpass
from gpu_host import packets as P
from gpu_host.ring_layout import TAG_ARRAY, init_ring
from gpu_host.addresses import SERVICE, fd_socket_path, grpc_address
from nxrecomp.common.errors import NxError
from proto import gpu_pb2, gpu_pb2_grpc

log = logging.getLogger("cpu_host.gpu_client")
PLACE_CHUNK = 1 << 20  # region bytes per PlaceData message (gRPC's default limit is 4 MiB)


@dataclass(frozen=True)
class _Deferred:
    """A pending submission the C submit wrote: its items, from which the Python path makes its
    records again if it must be resubmitted (after a GPU process restart)."""

    items: tuple


class GpuLost(ConnectionError):
    """The GPU process went away (the client recovers from this internally)."""


class GpuUnavailable(NxError):
    """No GPU process came back within the reconnect timeout."""


class GpuClient:
    def __init__(
        self,
        socket_dir: str | Path,
        ring_capacity: int | None = None,
        name: str = "cpu_host",
        reconnect_timeout: float | None = None,
    ) -> None:
        from nxrecomp.common import settings

        self.dir = Path(socket_dir)
        self.name = name
        # Bounds, not speed checks (gpu_host.client_reconnect_s, client_rpc_timeout_s): on a loaded
        # machine a GPU process start or a registration takes seconds; one that died is noticed at
        # once by its fd socket hanging up, so a generous bound costs nothing when all is well.
        self.reconnect_timeout = (
            settings.get("gpu_host", "client_reconnect_s") if reconnect_timeout is None else reconnect_timeout
        )
        self.rpc_timeout = settings.get("gpu_host", "client_rpc_timeout_s")
        cap = ring_capacity or settings.get("gpu_host", "ring_size")
        spin = settings.get("gpu_host", "client_spin_us")
        if spin < 0:  # auto: poll where a core to spare is likely (the GPU process has its own)
            spin = 20000 if (os.cpu_count() or 1) >= 8 else 0
        self.spin = spin / 1e6
        self.part_bytes = settings.get("gpu_host", "ring_part_bytes")
        self.ring_fd = os.memfd_create("nx-ring", os.MFD_CLOEXEC)
        self.view = init_ring(self.ring_fd, cap)
        # The command arena: shared memory the native recorder records into (NativeRecorder.
        # use_arena), sent with the ring; a submission references its recordings there (ring tag
        # 5) instead of copying them into the ring (PROTOCOL.md "Command arena").
        self.arena_size = settings.get("gpu_host", "command_arena_bytes")
        self.arena_fd, self.arena_mm, self.arena = -1, None, None
        self.arena_lent = False
        if self.arena_size > 0:
            self.arena_fd = os.memfd_create("nx-arena", os.MFD_CLOEXEC)
            os.ftruncate(self.arena_fd, self.arena_size)
            # not populated: only the pages the recorder's (reused) buffers touch ever get memory
            self.arena_mm = mmap.mmap(self.arena_fd, self.arena_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            self._arena_ref = ctypes.c_char.from_buffer(self.arena_mm)
            self.arena = ctypes.addressof(self._arena_ref)  # its address in this process
        self.bell = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
        self.reply = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)  # rung by the GPU per completion
        self.writer = RingWriter(self.view, self.bell)
        # gpu_host.client_native_submit: native recordings' submissions written in C (ringput.c)
        self._put = RingPut(self.view, self.bell) if settings.get("gpu_host", "client_native_submit") == "on" else None
        self.registry = Registry()
        self.pending: collections.OrderedDict[int, list[bytes | tuple[bytes, ...]]] = collections.OrderedDict()
        self.seq = 0
        self.session = 0
        self.token = ""
        self.sock: socket.socket | None = None
        self.channel: grpc.Channel | None = None
        self.stub: gpu_pb2_grpc.GpuControlStub | None = None
        self.reconnects = 0
        self.device = ""
        self.features: frozenset[str] = frozenset()  # AttachReply.features: what translations may use
        self.placed: dict[int, int] = {}  # placement id -> its device address in the attached process

    # -- connection ---------------------------------------------------------------------
    def connect(self, timeout: float | None = None) -> None:
        """Attach to the GPU process (waiting for it to be healthy) and re-send everything."""
        deadline = time.monotonic() + (self.reconnect_timeout if timeout is None else timeout)
        last = "not started"
        while time.monotonic() < deadline:
            try:
                self._attach()
                self._replay_state()
                return
            except (grpc.RpcError, OSError, GpuLost) as e:
                last = e.details() if isinstance(e, grpc.RpcError) else str(e)
                self._drop_connection()
                time.sleep(0.02)
        raise GpuUnavailable(f"GPU process at {self.dir} not reachable: {last}")

    def _attach(self) -> None:
        self._drop_connection()
        self.channel = grpc.insecure_channel(grpc_address(self.dir))
        hs = health_pb2_grpc.HealthStub(self.channel)
        # not listening yet fails at once (no wait_for_ready); a listening one may answer late under load
        r = hs.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5.0, wait_for_ready=False)
        if r.status != health_pb2.HealthCheckResponse.SERVING:
            raise GpuLost("GPU process not serving yet")
        self.stub = gpu_pb2_grpc.GpuControlStub(self.channel)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(fd_socket_path(self.dir))
        self.token = uuid.uuid4().hex
        self.writer.reset()  # a fresh consumer starts at position 0
        fds = [self.ring_fd, self.bell, self.reply] + ([self.arena_fd] if self.arena_fd >= 0 else [])
        fdpass.send(self.sock, {"token": self.token, "kind": "ring", "id": 0}, fds)
        rep = self.stub.Attach(gpu_pb2.AttachRequest(token=self.token, client=self.name), timeout=self.rpc_timeout)
        self.session, self.device = rep.session, rep.device
        self.features = frozenset(rep.features)
        log.info("attached session=%d device=%s", self.session, self.device)

    def _replay_state(self) -> None:
        self.placed.clear()
        for pool in self.registry.pools.values():
            self._send_pool(pool)
        objs = self.registry.objects.values()
        for obj in [o for o in objs if isinstance(o, DataDesc)] + [o for o in objs if not isinstance(o, DataDesc)]:
            self._send_object(obj)  # placements first: programs are rebuilt for their addresses
        for seq, payloads in self.pending.items():
            if isinstance(payloads, _Deferred):  # written by the C submit: its records made now
                payloads = part_records(seq, list(payloads.items), self.part_bytes, self.arena)
            self._write(payloads)
        if self.pending:
            self.writer.publish()

    def _drop_connection(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        self.stub = None

    def alive(self) -> bool:
        """False once the GPU process has gone (its end of the fd socket hung up)."""
        if self.sock is None:
            return False
        p = select.poll()
        p.register(self.sock, select.POLLIN | select.POLLHUP | select.POLLERR)
        return not p.poll(0)

    def _check(self) -> None:
        if not self.alive():
            raise GpuLost("GPU process hung up")

    def _recover(self) -> None:
        self.reconnects += 1
        log.warning("GPU process lost; reconnecting (pending submissions: %d)", len(self.pending))
        self._drop_connection()
        self.connect()

    def _retrying(self, fn):
        while True:
            try:
                self._check()
                return fn()
            except (GpuLost, grpc.RpcError) as e:
                if isinstance(e, grpc.RpcError) and e.code() not in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.CANCELLED,
                ):
                    raise
                self._recover()

    # -- objects ------------------------------------------------------------------------
    def create_pool(self, id: int, size: int, fd: int = -1, flushed_writes: bool = False) -> Pool:
        """A pool of ``size`` bytes: a fresh memfd, or ``fd`` (sealed against shrinking).  With
        ``flushed_writes`` the caller reports its CPU writes as DIRTY packets in its submissions
        (the GPU process then re-reads textures of the pool only there)."""
        pool = Pool(id, size, fd, flushed_writes)
        self.registry.pools[id] = pool
        self._retrying(lambda: self._send_pool(pool))
        return pool

    def _send_pool(self, pool: Pool) -> None:
        fdpass.send(self.sock, {"token": self.token, "kind": "pool", "id": pool.id}, [pool.fd])
        self.stub.RegisterPool(
            gpu_pb2.PoolDesc(session=self.session, id=pool.id, size=pool.size, flushed_writes=pool.flushed_writes),
            timeout=self.rpc_timeout,
        )

    def register(self, obj: TextureDesc | SamplerDesc | ProgramDesc) -> None:
        """Register (or replace) an object; a bad descriptor raises NxError with the GPU's reason."""
        try:
            self._retrying(lambda: self._send_object(obj))
        except grpc.RpcError as e:
            raise NxError(f"GPU process rejected {type(obj).__name__} {obj.id}: {e.details()}") from None
        self.registry.add(obj)

    def place_data(self, desc: DataDesc) -> int:
        """Place global data (PROTOCOL.md "Global data"): its device address in the GPU process;
        kept and placed again (maybe elsewhere) after a restart.  A refusal raises NxError with
        the GPU process's reason."""
        try:
            self._retrying(lambda: self._send_object(desc))
        except grpc.RpcError as e:
            raise NxError(f"GPU process rejected placement {desc.id}: {e.details()}") from None
        self.registry.add(desc)
        return self.placed[desc.id]

    def _send_data(self, desc: DataDesc) -> None:
        """PlaceData with no regions (the address), then the regions relocated for it, in
        messages of at most PLACE_CHUNK bytes (gRPC's default message limit is 4 MiB)."""
        s, stub = self.session, self.stub
        addr = stub.PlaceData(gpu_pb2.DataDesc(session=s, id=desc.id, size=desc.size), timeout=self.rpc_timeout).address
        batch: list = []
        n = 0
        for off, data in desc.regions(addr):
            for k in range(0, len(data), PLACE_CHUNK):
                piece = bytes(data[k : k + PLACE_CHUNK])
                if batch and n + len(piece) > PLACE_CHUNK:
                    stub.PlaceData(
                        gpu_pb2.DataDesc(session=s, id=desc.id, size=desc.size, address=addr, regions=batch),
                        timeout=self.rpc_timeout,
                    )
                    batch, n = [], 0
                batch.append(gpu_pb2.DataRegion(offset=off + k, data=piece))
                n += len(piece)
        if batch:
            stub.PlaceData(
                gpu_pb2.DataDesc(session=s, id=desc.id, size=desc.size, address=addr, regions=batch), timeout=self.rpc_timeout
            )
        self.placed[desc.id] = addr

    def register_program(self, id: int, source: ShaderSource) -> None:
        v, f = source.spirv()
        self.register(ProgramDesc(id, v, f))

    def _send_object(self, obj) -> None:
        s = self.session
        if isinstance(obj, TextureDesc):
            self.stub.RegisterTexture(gpu_pb2.TextureDesc(session=s, **obj.__dict__), timeout=self.rpc_timeout)
        elif isinstance(obj, SamplerDesc):
            self.stub.RegisterSampler(gpu_pb2.SamplerDesc(session=s, **obj.__dict__), timeout=self.rpc_timeout)
        elif isinstance(obj, DataDesc):
            self._send_data(obj)
        else:
            # a program holding placements' addresses: its SPIR-V for where they are now
            vs = obj.rebuild(self.placed) if obj.rebuild is not None else obj.vertex_spirv
            self.stub.RegisterProgram(
                gpu_pb2.ProgramDesc(
                    session=s,
                    id=obj.id,
                    vertex_spirv=vs,
                    fragment_spirv=obj.fragment_spirv,
                    data=obj.data,
                    geometry=[gpu_pb2.GeometryModule(input=i, spirv=g) for i, g in obj.geometry],
                ),
                timeout=self.rpc_timeout,
            )

    def lend_arena(self) -> tuple[int, int, int] | None:
        """(address, size, doorbell fd) of the command arena for a recorder to record into, or
        None (off); the recorder rings the doorbell as it stages chunks (PROTOCOL.md "Staged
        chunks").  Once lent it stays mapped for the rest of the process (the recorder may still
        write there)."""
        if self.arena is None:
            return None
        self.arena_lent = True
        return self.arena, self.arena_size, self.bell

    # -- submissions --------------------------------------------------------------------
    @staticmethod
    def encode(commands: list[tuple]) -> P.Encoded:
        """Encode commands once (when a command buffer's recording ends: the game's own CPU time,
        overlapping the previous frame's replay); submitting the result only copies bytes."""
        return P.encode_commands(commands)

    def submit(self, commands: list[tuple | P.Encoded] | P.Encoded) -> int:
        """Queue one submission; returns its seq.  ``commands`` are ``(op, field, ...)`` tuples and
        ``Encoded`` blocks (from ``encode``) in order, or one ``Encoded`` block; or tuples and
        ``blob.Block``s of binary packets (a native recorder's), written as ring tag 4 parts."""
        self.seq += 1
        items = [commands] if isinstance(commands, (P.Encoded, Block)) else commands
        if self._put is not None and len(items) == 1 and self.sock is not None:
            b = items[0]
            # One native recording in the command arena (what the NVN front end submits): its
            # reference part written in C.  No liveness poll here: a GPU process that died is
            # noticed by ``wait`` (or by the Python path once the ring is full), and the
            # submission stays pending until it completed, so a restart resubmits it.
            if type(b) is Block and b.native is not None and b.arena is not None and b.arena[0] == self.arena:
                if self._put.put(self.writer, self.seq, *b.native, b.arena[1]):
                    self.pending[self.seq] = _Deferred(tuple(items))
                    return self.seq
        if any(isinstance(x, Block) for x in items):
            records: list = part_records(self.seq, items, self.part_bytes, self.arena)
        else:
            # Array records of whole packets: one ring write per record (not per packet), already
            # encoded blocks copied as they are.
            records = P.submission_records(self.seq, items)
        self.pending[self.seq] = records
        attaches = self.reconnects

        def go() -> None:
            # After a re-attach (``_retrying`` noticed a dead GPU process, here or while this
            # was written), ``_replay_state`` already wrote this submission with the other
            # pending ones: writing it again would replay it twice in the new process, the
            # second time after its first completion let the caller reuse what it reads (a
            # present slot the guest's next frame is being copied into: a torn frame).
            if self.reconnects != attaches:
                return
            self._write(records)
            self.writer.publish()

        self._retrying(go)
        return self.seq

    def _write(self, records: list[bytes | tuple[bytes, ...]]) -> None:
        """Write a submission's records: parts of array records, binary part records, or (a raw
        writer's) single packet records as bytes."""
        for r in records:
            if isinstance(r, BlobRecord):
                self.writer.write(r.pieces, wait=self._check, tag=r.tag)
                if r is not records[-1]:
                    self.writer.publish()  # the GPU process copies this part while the next is written
            elif isinstance(r, tuple):
                self.writer.write(r, wait=self._check, tag=TAG_ARRAY)
            else:
                self.writer.write(r, wait=self._check)

    def completed(self) -> int:
        done = self.view.completed.value
        while self.pending and next(iter(self.pending)) <= done:
            self.pending.popitem(last=False)
        return done

    def dropped(self) -> int:
        return self.view.dropped.value

    def wait(self, seq: int, timeout: float = 30.0) -> None:
        """Block until submission ``seq`` was replayed (or dropped), riding out GPU restarts:
        ``timeout`` bounds the time one GPU process had it, so it starts again after a restart
        (the restart and the resubmission are the client's delay, not the GPU's)."""
        if self.spin and self.view.completed.value < seq:
            # gpu_host.client_spin_us: poll before sleeping (no eventfd wake-up when it comes soon)
            end = time.perf_counter() + self.spin
            while self.view.completed.value < seq and time.perf_counter() < end:
                os.sched_yield()
        deadline = time.monotonic() + timeout
        probe = time.monotonic() + 0.5
        while self.completed() < seq:
            now = time.monotonic()
            if now > deadline:
                raise TimeoutError(f"submission {seq} not completed after {timeout}s")
            if not self.alive():
                self._recover()
                deadline = time.monotonic() + timeout
                continue
            if now > probe:
                # A process that is alive but dropped our session (it found the ring corrupt).
                probe = now + 0.5
                try:
                    if self.stub.GetStatus(gpu_pb2.StatusRequest(), timeout=2.0).session != self.session:
                        self._recover()
                        deadline = time.monotonic() + timeout
                        continue
                except grpc.RpcError:
                    pass
            # Sleep until a completion, or the fd socket hanging up (the GPU process died).
            ready = select.select([self.reply, self.sock], [], [], min(0.05, max(0.0, deadline - now)))[0]
            if self.reply in ready:
                try:
                    os.eventfd_read(self.reply)
                except BlockingIOError:
                    pass

    def fence(self, fence: int) -> int:
        return self.view.fences[fence]

    def frame(self, n: int) -> gpu_pb2.Frame:
        return self._retrying(lambda: self.stub.GetFrame(gpu_pb2.FrameRequest(frame=n), timeout=self.rpc_timeout))

    def status(self) -> gpu_pb2.Status:
        return self._retrying(lambda: self.stub.GetStatus(gpu_pb2.StatusRequest(), timeout=self.rpc_timeout))

    def close(self) -> None:
        self._drop_connection()
        if self._put is not None:
            self._put.release()
            self._put = None
        for p in self.registry.pools.values():
            p.close()
        self.view.release()
        os.close(self.ring_fd)
        if self.arena_mm is not None and not self.arena_lent:  # a lent arena stays mapped: the recorder writes there
            del self._arena_ref
            self.arena_mm.close()
            os.close(self.arena_fd)
        os.close(self.bell)
        os.close(self.reply)
