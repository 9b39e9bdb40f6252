"""The GPU process's work, independent of transport: object registration and the replay of whole
submissions (decode -> validate -> snapshot -> Vulkan -> frames), with recording and headless
frame output.  Used by the server (ring + gRPC), by ``nxrecomp replay`` and by the benches."""

from __future__ import annotations

import collections
import logging
import threading
import time
from pathlib import Path
from typing import Callable

from gpu_host import event_parts
from gpu_host import packets as P
from gpu_host import png
from gpu_host.formats import FORMATS
from gpu_host.objects import SAMPLE_COUNTS, Memory, ObjectError, Objects
from gpu_host.record import Recorder
from gpu_host.replay import FrameOut, Replayer, Result
from gpu_host.snapshot import Snapshot
from gpu_host.validate import SubmissionError, plan
from gpu_host.vkdevice import Device

log = logging.getLogger("gpu_host.engine")


class Engine:
    def __init__(
        self,
        dev: Device,
        memory: Memory,
        frames_dir: str | Path | None = None,
        keep_frames: int = 32,
        recorder: Recorder | None = None,
    ) -> None:
        self.dev = dev
        self.objects = Objects(memory)
        from nxrecomp.common import settings
        from gpu_host import texdecode

        lib = settings.get("gpu_host", "pipeline_library")
        if lib not in ("auto", "off"):
            raise ValueError(f"gpu_host.pipeline_library = {lib!r} is not auto or off")
        self.replayer = Replayer(
            dev,
            self.objects,
            settings.get("gpu_host", "decode_compressed"),
            settings.get("nxrecomp", "cache_dir") if settings.get("gpu_host", "pipeline_cache") else None,
            lib == "auto",
            settings.get("gpu_host", "avoid_formats"),
            settings.get("gpu_host", "pipeline_threads"),
            settings.get("gpu_host", "pipeline_not_ready"),
        )
        texdecode.prepare()
        from gpu_host.native_replay import NativeReplay

        self.native = NativeReplay.create(self.replayer, settings.get("gpu_host", "native_replay"))
        self.replayer.native = self.native
        self.frames_dir = Path(frames_dir) if frames_dir else None
        if self.frames_dir:
            self.frames_dir.mkdir(parents=True, exist_ok=True)
        self.frames: collections.deque[FrameOut] = collections.deque(maxlen=max(1, keep_frames))
        self.recorder = recorder
        self.lock = threading.Lock()  # registrations vs. a running submission
        self.submissions = self.dropped = 0
        self.skipped_draws = 0  # draws left out because their pipeline was still being made (policy skip)
        self.last_replay_ms = 0.0
        # the same submission's thread CPU time (time.thread_time): issue 32's "GPU-process CPU
        # time" of a replay, the GPU's own run (the fence wait, asleep) left out
        self.last_replay_cpu_ms = 0.0
        self.on_frame: Callable[[FrameOut], None] | None = None

    def reset(self, memory: Memory) -> None:
        """Forget every object of the previous session (the client re-registers them)."""
        with self.lock:
            old = self.objects.memory
            self.objects = Objects(memory)
            self.replayer.reset(self.objects)
            self._changed()
            if old is not memory and hasattr(old, "close"):
                old.close()

    # -- registration (raises ObjectError) ----------------------------------------------
    def register_texture(self, **desc) -> None:
        with self.lock:
            fmt = FORMATS.get(desc.get("format"))
            if fmt is not None:
                try:
                    if fmt.depth:
                        self.replayer.depth_format(fmt)
                    elif desc.get("render_target"):
                        self.replayer.render_format(fmt)
                    else:
                        self.replayer.upload_format(fmt)
                except ObjectError as e:
                    raise ObjectError(f"texture {desc.get('id')}: {e}") from None
            samples = desc.get("samples") or 1
            if samples in SAMPLE_COUNTS and samples > 1 and fmt is not None:  # others: add_texture names them
                limit = (
                    self.dev.limits.framebufferDepthSampleCounts if fmt.depth else self.dev.limits.framebufferColorSampleCounts
                )
                if not limit & samples:  # VkSampleCountFlagBits: the bit of value n is n samples
                    name = "framebufferDepthSampleCounts" if fmt.depth else "framebufferColorSampleCounts"
                    raise ObjectError(
                        f"texture {desc.get('id')}: field samples {samples} is not in {self.dev.name}'s "
                        f"{name} ({[n for n in (1, 2, 4, 8, 16, 32, 64) if limit & n]})"
                    )
            if desc.get("cube") and (desc.get("layers") or 1) > 6 and "imageCubeArray" not in self.dev.image_features:
                raise ObjectError(f"texture {desc.get('id')}: a cube array needs imageCubeArray, which {self.dev.name} lacks")
            self.objects.add_texture(**desc)
            if self.recorder:
                self.recorder.texture(desc)
            self._changed()

    def register_sampler(self, id: int, linear: bool, repeat: bool, compare: int = 0) -> None:
        with self.lock:
            self.objects.add_sampler(id, linear, repeat, compare)
            if self.recorder:
                self.recorder.sampler(id, linear, repeat, compare)
            self._changed()

    def register_program(self, id: int, vertex: bytes, fragment: bytes, data: tuple[int, ...] = (), geometry=()) -> None:
        """``data``: placements whose addresses a compute program's code holds (PROTOCOL.md
        "Global data"); each must be placed now, so a program whose addresses lead nowhere (a
        recording's, a stale session's) is refused by name instead of running.  ``geometry``:
        ((input primitive, SPIR-V), ...) of a geometry stage (gfx-geom), which needs the device's
        geometryShader feature."""
        from gpu_host import compute

        geometry = tuple((int(i), bytes(g)) for i, g in geometry)
        with self.lock:
            if geometry and not self.dev.geometry_shader:
                raise ObjectError(f"program {id}: a geometry stage needs the geometryShader feature, which {self.dev.name} lacks")
            is_compute = not fragment and compute.is_compute(vertex)
            placed = self.replayer.compute.data.by_id
            for i, pid in enumerate(data):
                if not is_compute:
                    raise ObjectError(f"program {id}: field data names placements, but it is not a compute program")
                if pid not in placed:
                    raise ObjectError(
                        f"program {id}: field data[{i}] = {pid} names no placement of this session "
                        "(its code would address memory that is not there; PlaceData first)"
                    )
            if is_compute:  # a compute program (PROTOCOL.md "Compute")
                self.replayer.compute.register(self.objects, id, vertex)
            else:
                self.objects.add_program(id, vertex, fragment, geometry)
                self.objects.compute_programs.pop(id, None)
                if self.objects.programs[id].writes_viewport and not getattr(self.dev, "multi_viewport", False):
                    del self.objects.programs[id]  # shader-tex: MultiViewport needs the device feature
                    raise ObjectError(
                        f"program {id}: its geometry stage writes ViewportIndex, which needs the multiViewport "
                        f"feature, which {self.dev.name} lacks"
                    )
            if self.recorder:
                self.recorder.program(id, vertex, fragment, data, geometry)
            self._changed()

    def place_data(self, id: int, size: int, address: int, regions: list[tuple[int, bytes]]) -> int:
        """PlaceData (PROTOCOL.md "Global data", compute_data.py): the placement's device address."""
        from nxrecomp.common import settings

        with self.lock:  # never while a submission runs (its kernels may read the placement)
            return self.replayer.compute.data.place(id, size, address, regions, settings.get("gpu_host", "max_global_data"))

    def note_pool(self, id: int, size: int, flushed_writes: bool = False) -> None:
        with self.lock:
            if flushed_writes:
                self.objects.flushed_pools.add(id)
            else:
                self.objects.flushed_pools.discard(id)
            if self.recorder:
                self.recorder.pool(id, size, flushed_writes)
            self._changed()

    def _changed(self) -> None:
        """An object was (re-)registered: the native path's object tables are rebuilt."""
        if self.native is not None:
            self.native.changed()

    # -- submissions --------------------------------------------------------------------
    def submit(self, seq: int, packets: list, snapshot: Snapshot | None = None) -> Result | None:
        """Replay one submission (unpacked msgpack packets, checked here); a bad one is dropped
        with one warning naming what is wrong."""
        t0, c0 = time.perf_counter(), time.thread_time()
        with self.lock:
            try:
                nat = self.native.prepare(seq, packets, self.objects) if self.native is not None else None
                if nat is not None:  # decode, validation and recording in C (native_replay.py)
                    pl = nat.plan
                    t1 = time.perf_counter()
                else:
                    cmds = []
                    for i, p in enumerate(packets):
                        try:
                            cmds.append(P.check(p))
                        except P.PacketError as e:
                            raise SubmissionError(f"submission {seq}: packet {i}: {e}") from None
                    t1 = time.perf_counter()
                    pl = plan(seq, cmds, self.objects)
                t2 = time.perf_counter()
                if nat is not None:
                    reads = self.replayer.texture_reads(pl)
                    snap = snapshot or Snapshot.take(pl, self.objects.memory, reads)
                    res = self.replayer.run(pl, snap, reads, native=nat)
                elif pl.waits and snapshot is None:  # EVENT_WAIT: run in parts, waiting between them
                    res, snap = event_parts.run_parts(self, pl), None
                else:
                    reads = self.replayer.texture_reads(pl)
                    snap = snapshot or Snapshot.take(pl, self.objects.memory, reads)
                    res = self.replayer.run(pl, snap, reads)
            except SubmissionError as e:
                self.dropped += 1
                self.replayer.forget_uploads()  # its DIRTY ranges are lost with it
                log.warning("dropped %s", e)
                return None
            except Exception:  # our bug or a driver error: drop this one, keep serving
                self.dropped += 1
                self.replayer.forget_uploads()
                log.exception("dropped submission %d: replay failed", seq)
                return None
            self.submissions += 1
            self.last_replay_ms = (time.perf_counter() - t0) * 1000
            self.last_replay_cpu_ms = (time.thread_time() - c0) * 1000
            log.debug(
                "submission %d: %d packets %d draws in %.1f ms (check %.1f, plan %.1f, replay %.1f)",
                seq,
                len(packets),
                res.draws,
                self.last_replay_ms,
                (t1 - t0) * 1000,
                (t2 - t1) * 1000,
                (time.perf_counter() - t2) * 1000,
            )
            if self.recorder and snapshot is None and snap is not None:
                self.recorder.submit(seq, packets, snap.data)
        self._frames(res)
        return res

    def submit_blob(self, seq: int, blob: bytes, formatted: bool = False) -> Result | None:
        """Replay one submission that arrived as binary packets (ring tag 4): natively where
        every packet is one the C path replays, else decoded (in C) and replayed by the Python
        path; a blob the native decoder refuses is dropped with its named error.  ``formatted``:
        every packet's fields were format-checked already on these bytes (``nxpkt.format_body``
        as the ring consumer staged them): the native check leaves that pass out."""
        from gpu_host import nxpkt

        if self.native is not None:
            t0, c0 = time.perf_counter(), time.thread_time()
            with self.lock:
                try:
                    nat = self.native.prepare_blob(seq, blob, self.objects, formatted=formatted)
                    if nat is not None:
                        reads = self.replayer.texture_reads(nat.plan)
                        snap = Snapshot.take(nat.plan, self.objects.memory, reads)
                        res = self.replayer.run(nat.plan, snap, reads, native=nat)
                except SubmissionError as e:
                    self.dropped += 1
                    self.replayer.forget_uploads()
                    log.warning("dropped %s", e)
                    return None
                except Exception:
                    self.dropped += 1
                    self.replayer.forget_uploads()
                    log.exception("dropped submission %d: replay failed", seq)
                    return None
                if nat is not None:
                    self.submissions += 1
                    self.last_replay_ms = (time.perf_counter() - t0) * 1000
                    self.last_replay_cpu_ms = (time.thread_time() - c0) * 1000
                    if self.recorder:  # recordings hold msgpack packets (PROTOCOL.md "Recording")
                        self.recorder.submit(seq, nxpkt.decode(blob), snap.data)
            if nat is not None:
                self._frames(res)
                return res
        try:
            packets = nxpkt.decode(blob)
        except Exception as e:  # NativePacketError, or no native library at all
            with self.lock:
                self.dropped += 1
                self.replayer.forget_uploads()
            log.warning("dropped submission %d: %s", seq, e)
            return None
        return self.submit(seq, packets)

    def _frames(self, res: Result) -> None:
        if res.skipped:
            self.skipped_draws += res.skipped
            log.info(
                "submission %d: %d draws skipped, their pipelines still being made (%d so far)",
                res.seq,
                res.skipped,
                self.skipped_draws,
            )
        for fr in res.frames:
            self.frames.append(fr)
            if self.frames_dir:
                png.write(self.frames_dir / f"frame_{fr.frame:06d}.png", fr.rgba, fr.width, fr.height)
            if self.on_frame:
                self.on_frame(fr)

    def reject(self, seq: int, why: str) -> None:
        """A submission the transport could not even parse."""
        with self.lock:
            self.dropped += 1
        log.warning("dropped submission %d: %s", seq, why)

    def frame(self, n: int) -> FrameOut | None:
        for f in reversed(self.frames):
            if f.frame == n:
                return f
        return None

    def close(self) -> None:
        self.replayer.close()
        if self.recorder:
            self.recorder.close()
