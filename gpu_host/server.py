"""The GPU process: gRPC control (``nxgpu.GpuControl`` + standard gRPC health) on a UNIX socket,
an fd socket (SCM_RIGHTS) for the client's memfds/eventfds, and one consumer thread that drains
the command ring and replays submissions.  Run: ``python -m gpu_host.server --socket-dir DIR``.

One client session at a time; a new Attach replaces the old session and all its objects (the
process holds nothing that the client cannot re-send).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import logging
import mmap
import os
import signal
import socket
import sys
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Callable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from gpu_host import fdpass
from gpu_host.addresses import SERVICE, fd_socket_path, grpc_socket_path
from gpu_host.arena_stage import StageQueue
from gpu_host.blob_assembly import Assembly
from gpu_host.engine import Engine
from gpu_host.objects import MappedPools, ObjectError
from gpu_host.record import Recorder
from gpu_host.ring_layout import RingFormatError, open_ring
from gpu_host.ring_reader import RingReader
from gpu_host.ring_consumer import OPEN_PART_SPIN_S, RingConsumer, Session, gc_paused  # noqa: F401 (gc_paused: the benches' name)
from gpu_host.swapchain import Presenter
from gpu_host.vkdevice import Device, VulkanUnavailable
from gpu_host.window import InputHub, WindowSystem, WindowUnavailable
from proto import gpu_input_pb2_grpc, gpu_pb2, gpu_pb2_grpc

log = logging.getLogger("gpu_host.server")


class FdInbox:
    """fds that arrived on the fd socket, keyed by (token, kind, id), until an RPC claims them."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.items: dict[tuple, list[int]] = {}

    def put(self, key: tuple, fds: list[int]) -> None:
        with self.cond:
            for fd in self.items.pop(key, []):
                os.close(fd)
            self.items[key] = fds
            self.cond.notify_all()

    def take(self, key: tuple, timeout: float) -> list[int] | None:
        with self.cond:
            self.cond.wait_for(lambda: key in self.items, timeout)
            return self.items.pop(key, None)


class GpuServer(RingConsumer, gpu_pb2_grpc.GpuControlServicer):
    def __init__(
        self,
        socket_dir: str | Path,
        frames_dir: str = "",
        keep_frames: int = 32,
        record: str = "",
        device: str = "",
        attach_timeout: float = 2.0,
        window: str = "off",
        window_size: tuple[int, int] = (1280, 720),
        window_title: str = "nxrecomp",
        ring_spin_us: int = 0,
        timing_log: str = "",
    ) -> None:
        self.dir = Path(socket_dir)
        self.ring_spin = max(0, ring_spin_us) / 1e6
        # gpu_host.timing_log: one line per submission with the consumer's clock readings
        # (bench/gpu_split.py splits the transport with them); None: not kept.
        self.timing = open(timing_log, "a", buffering=1) if timing_log else None
        self.stamps: list[float] = []
        self.frames_dir, self.keep_frames = frames_dir, keep_frames
        self.record_path = record
        self.attach_timeout = attach_timeout
        self.hub = InputHub()
        self.window_mode = window
        self.winsys: WindowSystem | None = None
        self.presenter: Presenter | None = None
        if window not in ("off", "auto", "on"):
            raise VulkanUnavailable(f"gpu_host.window = {window!r} is not off, auto or on")
        if window != "off":
            ws = WindowSystem(window_title, *window_size)
            try:
                ws.start(build=window == "on")
                self.winsys = ws
            except WindowUnavailable as e:
                if window == "on":
                    raise VulkanUnavailable(f"gpu_host.window = on, but no window: {e}") from None
                log.info("headless (no window: %s)", e)
        from nxrecomp.common import settings

        indexing = settings.get("gpu_host", "descriptor_indexing")
        if indexing not in ("auto", "off"):
            raise VulkanUnavailable(f"gpu_host.descriptor_indexing = {indexing!r} is not auto or off")
        geometry = settings.get("gpu_host", "geometry_shader")  # gfx-geom
        if geometry not in ("auto", "off"):
            raise VulkanUnavailable(f"gpu_host.geometry_shader = {geometry!r} is not auto or off")
        denorm = settings.get("gpu_host", "denorm_preserve")
        if denorm not in ("auto", "on", "off"):
            raise VulkanUnavailable(f"gpu_host.denorm_preserve = {denorm!r} is not auto, on or off")
        self.dev = Device(
            device,
            self.winsys.instance_extensions if self.winsys else [],
            ["VK_KHR_swapchain"] if self.winsys else [],
            descriptor_indexing=indexing == "auto",
            geometry_shader=geometry == "auto",
            denorm_preserve=denorm,
        )
        self.inbox = FdInbox()
        self.session: Session | None = None
        self.lock = threading.Lock()
        self.fence_cond = threading.Condition()
        self.ids = itertools.count(int(time.time() * 1000) & 0xFFFFFFFF)
        self.stop = threading.Event()
        self.recorder: Recorder | None = Recorder(Path(record)) if record else None
        self.engine = Engine(self.dev, MappedPools(), frames_dir, keep_frames, self.recorder)

    # -- fd socket ----------------------------------------------------------------------
    def _fd_listener(self, lsock: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            threading.Thread(target=self._fd_conn, args=(conn,), daemon=True, name="gpu-fds").start()

    def _fd_conn(self, conn: socket.socket) -> None:
        with conn:
            while not self.stop.is_set():
                try:
                    label, fds = fdpass.recv(conn)
                except ValueError as e:
                    log.warning("fd socket: %s", e)
                    continue
                except OSError:
                    return
                if label is None:
                    return
                key = (label.get("token"), label.get("kind"), label.get("id"))
                if not isinstance(key[0], str) or key[1] not in ("ring", "pool") or not isinstance(key[2], int):
                    log.warning("fd socket: label %r is not {token, kind: ring|pool, id}", label)
                    for fd in fds:
                        os.close(fd)
                    continue
                self.inbox.put(key, fds)

    # -- gRPC ---------------------------------------------------------------------------
    def _format_check(self) -> tuple[Callable | None, Callable | None]:
        """The format pass the assembly runs on staged chunks, and that pass fused with the copy
        (``Assembly``'s ``check`` and ``copy_check``): the native decoder's, where the native
        replay (which checks the blobs) is on."""
        if self.engine.native is None:
            return None, None
        from gpu_host import nxpkt

        return nxpkt.format_body, nxpkt.copy_format_body

    def _session(self, sid: int, context) -> Session:
        s = self.session
        if s is None or s.id != sid:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"session {sid} is not attached (re-attach)")
        return s

    def Attach(self, request, context):
        fds = self.inbox.take((request.token, "ring", 0), self.attach_timeout)
        if fds is None or len(fds) not in (3, 4):
            for fd in fds or []:
                os.close(fd)
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"attach: no ring + doorbell + reply (+ command arena) fds arrived with token {request.token!r}",
            )
        ring_fd, bell_fd, reply_fd = fds[:3]
        arena = None
        try:
            view = open_ring(ring_fd)
            if len(fds) == 4:  # the command arena: read here only, copied before anything is checked
                arena = memoryview(mmap.mmap(fds[3], 0, mmap.MAP_SHARED, mmap.PROT_READ))
        except (RingFormatError, OSError, ValueError) as e:
            os.close(bell_fd)
            os.close(reply_fd)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"attach: {e}")
        finally:
            os.close(ring_fd)
            if len(fds) == 4:
                os.close(fds[3])
        os.set_blocking(bell_fd, False)
        os.set_blocking(reply_fd, False)
        with self.lock:
            old = self.session
            pools = MappedPools()
            self.engine.reset(pools)
            sid = next(self.ids)
            # Binary parts are copied out of the ring into this buffer: one drain's records (at
            # most the ring's capacity) and a submission left open by the drain before.
            self.session = Session(
                sid,
                request.token,
                view,
                RingReader(view, bell_fd, arena),
                pools,
                reply_fd,
                # staged chunks format-checked as they are staged, where the native replay checks
                # the blobs (the check's first pass is then left out at the submission)
                assembly=Assembly(2 * view.capacity + (1 << 20), *self._format_check()),
                stages=StageQueue(arena) if arena is not None else None,
            )
            if old is not None:
                old.closed = True
        log.info("attached client=%s session=%d ring=%d", request.client, sid, view.capacity)
        return gpu_pb2.AttachReply(session=sid, ring_capacity=view.capacity, device=self.dev.name, features=self.dev.features())

    def RegisterPool(self, request, context):
        s = self._session(request.session, context)
        fds = self.inbox.take((s.token, "pool", request.id), self.attach_timeout)
        if not fds:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"pool {request.id}: no memfd arrived on the fd socket")
        try:
            with self.engine.lock:
                if s.closed:
                    context.abort(grpc.StatusCode.FAILED_PRECONDITION, "session replaced during RegisterPool")
                s.pools.add(request.id, fds[0], request.size)
            self.engine.note_pool(request.id, request.size, request.flushed_writes)
        except ObjectError as e:
            log.warning("rejected %s", e)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        finally:
            for fd in fds:
                os.close(fd)
        return gpu_pb2.Ack()

    def _register(self, context, fn, **kw):
        try:
            fn(**kw)
        except ObjectError as e:
            log.warning("rejected %s", e)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        except Exception as e:  # a bug of ours must not take the process down either
            log.exception("registration failed")
            context.abort(grpc.StatusCode.INTERNAL, f"{type(e).__name__}: {e}")
        return gpu_pb2.Ack()

    def RegisterTexture(self, r, context):
        self._session(r.session, context)
        return self._register(
            context,
            self.engine.register_texture,
            id=r.id,
            pool=r.pool,
            offset=r.offset,
            width=r.width,
            height=r.height,
            format=r.format,
            block_linear=r.block_linear,
            block_height_log2=r.block_height_log2,
            pitch=r.pitch,
            render_target=r.render_target,
            gob=r.gob or "fermi",
            layers=r.layers or 1,
            cube=r.cube,
            samples=r.samples or 1,
            volume=r.volume,
            one_dim=r.one_dim,
            block_depth_log2=r.block_depth_log2,
        )

    def RegisterSampler(self, r, context):
        self._session(r.session, context)
        return self._register(context, self.engine.register_sampler, id=r.id, linear=r.linear, repeat=r.repeat, compare=r.compare)

    def RegisterProgram(self, r, context):
        self._session(r.session, context)
        geometry = tuple((g.input, g.spirv) for g in r.geometry)  # gfx-geom
        return self._register(
            context,
            self.engine.register_program,
            id=r.id,
            vertex=r.vertex_spirv,
            fragment=r.fragment_spirv,
            data=tuple(r.data),
            geometry=geometry,
        )

    def WaitFence(self, r, context):
        s = self._session(r.session, context)
        if r.fence >= len(s.view.fences):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"fence {r.fence} is out of range")
        with self.fence_cond:
            self.fence_cond.wait_for(lambda: s.closed or s.view.fences[r.fence] >= r.value, max(0.0, min(r.timeout_s, 60)))
            v = s.view.fences[r.fence]
        return gpu_pb2.FenceState(value=v, reached=v >= r.value)

    def GetFrame(self, r, context):
        f = self.engine.frame(r.frame)
        if f is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"frame {r.frame} is not held")
        return gpu_pb2.Frame(frame=f.frame, width=f.width, height=f.height, rgba=f.rgba, sha256=f.sha256)

    def PlaceData(self, r, context):
        """A compute program's global data placed in device memory (PROTOCOL.md "Global data")."""
        self._session(r.session, context)
        try:
            addr = self.engine.place_data(r.id, r.size, r.address, [(g.offset, g.data) for g in r.regions])
        except ObjectError as e:
            log.warning("rejected %s", e)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        except Exception as e:  # a bug of ours must not take the process down either
            log.exception("placement failed")
            context.abort(grpc.StatusCode.INTERNAL, f"{type(e).__name__}: {e}")
        return gpu_pb2.DataPlace(address=addr)

    def GetStatus(self, r, context):
        s = self.session
        if s is None:
            return gpu_pb2.Status()
        last = self.engine.frames[-1] if self.engine.frames else None
        return gpu_pb2.Status(
            session=s.id,
            submissions=self.engine.submissions,
            dropped=self.engine.dropped,
            last_frame=last.frame if last else 0,
            last_sha256=last.sha256 if last else "",
            packets=s.packets,
            last_replay_ms=self.engine.last_replay_ms,
            arena_parts=s.arena_parts,
            staged_chunks=s.assembly.staged_used if s.assembly is not None else 0,
            stage_rejected=s.stage_rejected,
        )

    # -- window ---------------------------------------------------------------------------
    def _open_window(self) -> None:
        """Open the window and its swapchain (main thread, once serving is certain: a standby
        opens it only when promoted)."""
        if self.winsys is None:
            return
        import vulkan as vk

        try:
            surface = self.winsys.open(self.dev.instance)
            self.presenter = Presenter(self.dev, vk.ffi.cast("VkSurfaceKHR", surface), self.winsys.width, self.winsys.height)
        except Exception as e:
            if self.window_mode == "on":
                raise
            log.warning("headless (window failed: %s)", e)
            self.winsys.close()
            self.winsys = None
            return
        self.engine.on_frame = self._present

    def _present(self, fr) -> None:
        p = self.presenter
        if p is None:
            return
        try:
            p.present(fr.rgba, fr.width, fr.height)
        except Exception:
            log.exception("present into the window failed; headless from now on")
            self.presenter = None

    # -- lifetime -----------------------------------------------------------------------
    def serve(self, promotion: Callable[[], bool] | None = None) -> None:
        """Listen and serve until stopped.  Both sockets are bound under names of this process
        first and renamed into place only when it is ready to serve (atomic hand-over: a client
        never reaches a half-started process).  A standby passes ``promotion``, which blocks
        until it should take over (True) or quit (False); everything slow happens before."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fpath, gpath = fd_socket_path(self.dir), grpc_socket_path(self.dir)
        tag = f".{os.getpid()}"
        for p in (fpath + tag, gpath + tag):
            if os.path.exists(p):
                os.unlink(p)
        lsock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        lsock.bind(fpath + tag)
        lsock.listen(8)
        threading.Thread(target=self._fd_listener, args=(lsock,), daemon=True, name="gpu-fd-listen").start()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        gpu_pb2_grpc.add_GpuControlServicer_to_server(self, server)
        gpu_input_pb2_grpc.add_GpuInputServicer_to_server(self.hub, server)
        hs = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(hs, server)
        server.add_insecure_port(f"unix://{gpath}{tag}")
        server.start()
        consumer = threading.Thread(target=self.consume, name="gpu-ring", daemon=True)
        try:
            if promotion is not None:
                log.info("standby: ready, waiting for SIGUSR1")
                if not promotion():
                    return
            self._open_window()
            for name in ("", SERVICE):
                hs.set(name, health_pb2.HealthCheckResponse.SERVING)
            os.replace(gpath + tag, gpath)
            os.replace(fpath + tag, fpath)
            log.info("serving on %s device=%s", self.dir, self.dev.name)
            consumer.start()
            while not self.stop.is_set():
                if self.presenter is not None:
                    # SDL wants its events read on the thread that made the window: this one.
                    if not self.winsys.pump(self.hub):
                        log.info("window closed (QUIT sent to input streams)")
                    self.stop.wait(0.005)
                else:
                    self.stop.wait(0.2)
        finally:
            self.hub.close()
            for name in ("", SERVICE):
                hs.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
            server.stop(0.5).wait()
            lsock.close()
            for p in (fpath + tag, gpath + tag):
                if os.path.exists(p):
                    os.unlink(p)
            if consumer.is_alive():
                consumer.join(5)
            self.engine.close()
            if self.presenter is not None:
                self.presenter.close()
            if self.winsys is not None:
                self.winsys.close()
            log.info("stopped")


def _make_server(a: argparse.Namespace) -> GpuServer:
    from nxrecomp.common import settings

    return GpuServer(
        a.socket_dir,
        frames_dir=a.frames_dir if a.frames_dir is not None else settings.get("gpu_host", "frames_dir"),
        keep_frames=settings.get("gpu_host", "keep_frames"),
        record=a.record if a.record is not None else settings.get("gpu_host", "record"),
        device=settings.get("gpu_host", "device"),
        attach_timeout=settings.get("gpu_host", "attach_timeout"),
        window=settings.get("gpu_host", "window"),
        window_size=settings.get("gpu_host", "window_size"),
        window_title=settings.get("gpu_host", "window_title"),
        ring_spin_us=settings.get("gpu_host", "ring_spin_us"),
        timing_log=settings.get("gpu_host", "timing_log"),
    )


def main(argv: list[str] | None = None) -> int:
    from nxrecomp.common import log as nxlog

    ap = argparse.ArgumentParser(prog="gpu_host.server")
    ap.add_argument("--socket-dir", required=True)
    ap.add_argument("--frames-dir", default=None)
    ap.add_argument("--record", default=None)
    ap.add_argument(
        "--standby", action="store_true", help="initialise, then wait for SIGUSR1 before serving (a supervisor's warm spare)"
    )
    a = ap.parse_args(argv)
    stops = {signal.SIGUSR1, signal.SIGTERM, signal.SIGINT}
    if a.standby:
        signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    nxlog.setup("gpu")
    try:
        srv = _make_server(a)
    except VulkanUnavailable as e:
        log.error("cannot start: %s", e)
        nxlog.flush()
        return 1
    # Everything made so far (imports: the vulkan/cffi modules, the device) lives as long as the
    # process: keep it out of the collector's full passes, which the packets of every frame trigger.
    gc.freeze()

    def promoted() -> bool:
        got = signal.sigwait(stops)
        signal.signal(signal.SIGTERM, lambda *_: srv.stop.set())
        signal.signal(signal.SIGINT, lambda *_: srv.stop.set())
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        return got == signal.SIGUSR1

    if not a.standby:
        signal.signal(signal.SIGTERM, lambda *_: srv.stop.set())
        signal.signal(signal.SIGINT, lambda *_: srv.stop.set())
    srv.serve(promoted if a.standby else None)
    nxlog.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
