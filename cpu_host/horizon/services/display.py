"""The process's one display: where framebuffers queued through vi's binder relay go, sharing the
frame numbering, the GPU client, the present times and the presented-frame clock with the NVN
front end (``hle/nvn``), so a program that draws both ways shows one sequence of frames.

- **Vsync** (``Vsync``): the display's 60 Hz clock, tick *n* at ``t0 + n/60``.  vi's vsync event
  (IApplicationDisplayService 5202) is signalled at every tick by one host thread, and a queued
  buffer is shown at a tick: ``QUEUE_BUFFER`` returns once the tick the frame is due at has come
  (the previous frame's tick plus the swap interval, or the next tick when the program is late),
  waiting without a core.  So a program is paced by the same ticks it can wait on.
- **Presentation through the split**: with a GPU process (``cpu_host.gpu_socket_dir``, set by
  ``nxrecomp run``), the buffer's bytes — as the guest wrote them, pitch-linear or block-linear —
  are copied into a *present pool* (a memfd of ``SLOTS`` image slots registered with the GPU
  process like any pool) and a submission of one PRESENT_IMAGE packet (gpu_host/PROTOCOL.md
  "Presented images") names that slot: the GPU process deswizzles it and shows it in its window
  or writes it as ``frame_NNNNNN.png`` headless, like every other frame.  A slot is rewritten
  only once the submission that showed it completed, so a frame is never torn; the GPU client
  keeps the pool and the pending submissions, so a killed GPU process's successor gets both.
- **PNG without a GPU process** (``cpu_host.framebuffer_dir``): each frame is also written as
  ``frame_NNNNNN.png`` there by the CPU host, converted by the same code the GPU process uses
  (``gpu_host.present_image``).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from gpu_host import packets as P
from gpu_host import present_image

log = logging.getLogger("cpu_host.ipc.display")
HZ = 60
SLOTS = 3  # image slots of the present pool (a frame in flight, one queued, one written)


class Vsync:
    """The display's refresh ticks: tick ``n`` at ``t0 + n / HZ`` (monotonic clock)."""

    def __init__(self, hz: int = HZ) -> None:
        self.t0 = time.monotonic()
        self.period = 1.0 / hz
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def tick_now(self) -> int:
        return int((time.monotonic() - self.t0) / self.period)

    def time_of(self, tick: int) -> float:
        return self.t0 + tick * self.period

    def signal_each_tick(self, signal: Callable[[], None]) -> None:
        """Call ``signal`` at every tick from now on (one host thread; the vsync event)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, args=(signal,), name="vi-vsync", daemon=True)
            self._thread.start()

    def _run(self, signal: Callable[[], None]) -> None:
        tick = self.tick_now() + 1
        while True:
            delay = self.time_of(tick) - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            signal()
            tick = max(tick + 1, self.tick_now() + 1)  # a late wake-up skips ticks, never bunches them


@dataclass(frozen=True)
class Image:
    """A queued buffer's bytes as the guest laid them out (present_image's fields)."""

    data: bytes
    width: int
    height: int
    layout: int  # present_image.LAYOUT_*
    pitch: int
    block_height_log2: int
    format: int  # present_image.FORMAT_*

    def packet(self, frame: int, pool: int, offset: int) -> tuple:
        return (
            P.OP_PRESENT_IMAGE,
            frame,
            pool,
            offset,
            self.width,
            self.height,
            self.layout,
            self.pitch,
            self.block_height_log2,
            self.format,
        )


@dataclass
class Display:
    """Frames queued through vi: paced by ``vsync``, numbered and sent with the NVN front end's
    state (``nvn``: its lock, frame counter, present times, GPU client and ``on_present``)."""

    nvn: Any  # hle.nvn.frontend.NvnService
    folder: Path | None = None  # cpu_host.framebuffer_dir
    gpu_wanted: Callable[[], bool] = lambda: False
    vsync: Vsync = field(default_factory=Vsync)
    last_tick: int = -1
    pool: Any = None  # gpu_client.memory.Pool
    slot_size: int = 0
    slot_seq: list[int] = field(default_factory=lambda: [0] * SLOTS)
    frames: int = 0  # frames presented through vi

    def pace(self, swap_interval: int, wait: Callable[[float], None]) -> None:
        """Return at the tick the next frame is shown at (``wait`` blocks without a core)."""
        due = max(self.last_tick + max(swap_interval, 1), self.vsync.tick_now() + 1)
        delay = self.vsync.time_of(due) - time.monotonic()
        if delay > 0:
            wait(delay)
        self.last_tick = due

    def present(self, img: Image) -> int:
        """Show one frame; returns its number (shared with NVN presents)."""
        nvn = self.nvn
        with nvn.lock:
            nvn.frame += 1
            frame = nvn.frame
            nvn.present_times.append(time.monotonic())
            self.frames += 1
            if self.gpu_wanted():
                self._to_gpu(frame, img)
        if self.folder is not None:
            from gpu_host import png

            cmd = img.packet(frame, 0, 0)
            self.folder.mkdir(parents=True, exist_ok=True)
            png.write(self.folder / f"frame_{frame:06d}.png", present_image.rgba(cmd, img.data), img.width, img.height)
        nvn.on_present()
        return frame

    def _to_gpu(self, frame: int, img: Image) -> None:
        gpu = self.nvn._gpu()
        size = len(img.data)
        if self.pool is None or size > self.slot_size:
            self.slot_size = (size + 0xFFF) & ~0xFFF
            pid = self.nvn.next_id  # one id space with the NVN front end's pools
            self.nvn.next_id += 1
            self.pool = gpu.create_pool(pid, self.slot_size * SLOTS)
            self.slot_seq = [0] * SLOTS
            log.info("present pool %d: %d slots of %#x bytes", pid, SLOTS, self.slot_size)
        k = frame % SLOTS
        if self.slot_seq[k]:
            gpu.wait(self.slot_seq[k])  # the frame shown from this slot before has been read
        self.pool.write(k * self.slot_size, img.data)
        self.slot_seq[k] = gpu.submit([img.packet(frame, self.pool.id, k * self.slot_size)])
