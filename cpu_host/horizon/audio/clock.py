"""Run a renderer on its own 200 Hz clock, as Horizon's audio renderer does: a host thread
renders one frame every ``sample_count / sample_rate`` seconds (5 ms at 48 kHz) of monotonic
time and calls ``on_frame`` (the service signals the renderer's system event there).  The game
is never waited on: updates (from the service thread) and frames are serialised by one lock,
and output sinks never block (output.py).  A thread that falls more than ``max_catch_up``
frames behind skips ahead and counts the skipped frames (``late_frames``) instead of bursting.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from cpu_host.horizon.audio.renderer import AudioRenderer

log = logging.getLogger("cpu_host.audio")


class RenderClock:
    def __init__(self, renderer: AudioRenderer, on_frame: Callable[[], None] | None = None,
                 max_catch_up: int = 4) -> None:
        self.r = renderer
        self.on_frame = on_frame or (lambda: None)
        self.period = renderer.p.sample_count / renderer.p.sample_rate
        self.max_catch_up = max_catch_up
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.frames = 0
        self.late_frames = 0
        self.thread: threading.Thread | None = None

    def update(self, request: bytes) -> tuple[int, bytes]:
        with self.lock:
            return self.r.update(request)

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="audio-render", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join(timeout=2.0)

    def _run(self) -> None:
        due = time.monotonic()
        while not self.stop_event.is_set():
            now = time.monotonic()
            if now - due > self.max_catch_up * self.period:
                skipped = int((now - due) / self.period)
                self.late_frames += skipped
                due += skipped * self.period
            if now < due:
                self.stop_event.wait(due - now)
                continue
            try:
                with self.lock:
                    self.r.render_frame()
            except Exception:        # a renderer bug must not take the game down: log, go silent
                log.exception("audio renderer frame failed; audio stops")
                return
            self.frames += 1
            self.on_frame()
            due += self.period
