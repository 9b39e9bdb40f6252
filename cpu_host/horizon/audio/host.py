"""The process's audio: every open renderer and audio out mixed into one host output.

Contract: ``AudioHost(sink_factory, clock)``; ``open_renderer(param, memory, on_frame)`` ->
``RendererSource`` (what ``audren:u``'s OpenAudioRenderer and nn::audio's OpenAudioRenderer
make: the same object whichever way the program asked), ``open_audio_out(channels,
on_release)`` -> ``AudioOutSource`` (``audout:u``'s OpenAudioOut); ``present()`` is called at each
frame the program presents; ``close()`` at exit finalises the output (a WAV file renamed into
place) and logs what it counted.

One 5 ms frame of the whole process (``tick``): each started renderer renders one frame (240
samples at 48 kHz: Horizon's renderer runs at 200 Hz; a 32 kHz renderer's 160 are resampled to
the output's 48 kHz), each started audio out plays 240 frames of its queue, the sum is
saturated to 16 bits and written to the sink once.  After a renderer's frame its system event is
signalled (``on_frame``), as the console's renderer does each frame.

Two clocks (setting ``cpu_host.audio_clock``):
- ``wall``: a host thread ticks every 5 ms of monotonic time (a device plays in real time); a
  thread more than 4 frames late skips ahead and counts the skipped frames (``late_frames``).
  With a device (a sink that reports its queue) the device's hunger paces it too: a frame is
  rendered whenever less than the sink's target is queued (the device's clock never drifts
  from ours: no underrun, no overflow), and at the latest one latency bound after its wall
  time, so a slow or stopped device only drops frames (counted by the sink) and the renderer's
  events go on at 200 Hz for the game.  A thread kept off the CPU for half the time the device's
  queue lasts or more (a loaded machine) may let the device, which pulls in chunks, run dry:
  each such stall is counted (``stalls``); the thread never waits that long by itself.
- ``frames``: the program's presented frames are the clock, 800 samples (1/60 s) per present,
  rendered in the present call: the WAV a headless run writes is the same on every run, and its
  length is the presented frames' (a headless game runs faster or slower than real time).  A
  program that has presented nothing one second after its first audio object was opened (a
  console program) is clocked by the wall instead, from then on.
``auto`` (the default) is ``frames`` when the output is a WAV file, else ``wall``.

Nothing here waits on the device: the sinks never block (output.py).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

from cpu_host.horizon.audio.output import AudioOut, NullSink, Sink, WavSink, adapt_channels, open_output
from cpu_host.horizon.audio.renderer import AudioRenderer, GuestMemory
from cpu_host.horizon.audio.request import RendererParameter
from nxrecomp.common import settings
from nxrecomp.common.errors import NxError

log = logging.getLogger("cpu_host.audio")
RATE = 48000
FRAME = 240  # samples per 5 ms frame at 48 kHz
PERIOD = FRAME / RATE
SAMPLES_PER_PRESENT = RATE // 60
FALLBACK_S = 1.0  # no present this long after the first audio object: wall clock
MAX_CATCH_UP = 4
CLOCKS = ("auto", "wall", "frames")


class RendererSource:
    """A renderer as one source of the process's output."""

    def __init__(self, host: "AudioHost", renderer: AudioRenderer, on_frame: Callable[[], None]) -> None:
        self.host, self.r, self.on_frame = host, renderer, on_frame
        self.started = False
        self.pcm: np.ndarray | None = None  # this frame's device-sink output
        self.device_index: int | None = None
        self.r.sink_out = self._device

    def _device(self, index: int, pcm: np.ndarray) -> None:
        if self.device_index is None:  # the first device sink is the console's output
            self.device_index = index
        if index == self.device_index:
            self.pcm = adapt_channels(pcm, 2)

    def update(self, request: bytes) -> tuple[int, bytes]:
        with self.host.lock:
            return self.r.update(request)

    def start(self) -> None:
        with self.host.lock:
            self.started = True

    def stop(self) -> None:
        with self.host.lock:
            self.started = False

    def close(self) -> None:
        self.host.remove(self)

    def frame(self) -> np.ndarray | None:
        if not self.started:
            return None
        self.pcm = None
        self.r.render_frame()
        out = self.pcm
        if out is not None and out.shape[0] != FRAME:  # 32 kHz: 160 samples -> 240
            x = np.linspace(0, out.shape[0] - 1, FRAME)
            out = np.stack([np.interp(x, np.arange(out.shape[0]), out[:, c]) for c in range(2)], 1)
            out = np.clip(np.rint(out), -32768, 32767).astype(np.int16)
        return out

    def after(self) -> None:
        if self.started:
            self.on_frame()


class AudioOutSource(AudioOut):
    """An audio out (audout:u's IAudioOut) as one source; ``on_release`` signals its buffer event."""

    def __init__(self, host: "AudioHost", channels: int, on_release: Callable[[], None]) -> None:
        super().__init__(None, channels)
        self.host, self.on_release = host, on_release
        self.volume = 1.0  # SetAudioOutVolume

    def frame(self) -> np.ndarray | None:
        if not self.started:
            return None
        before = len(self.released)
        pcm = adapt_channels(self.pump(FRAME), 2)
        if self.volume != 1.0:
            pcm = np.clip(np.rint(pcm * np.float32(self.volume)), -32768, 32767).astype(np.int16)
        if len(self.released) != before:
            self.on_release()
        return pcm

    def after(self) -> None:
        pass

    def close(self) -> None:
        self.host.remove(self)


class AudioHost:
    def __init__(self, sink_factory: Callable[[], Sink] | None = None, clock: str | None = None) -> None:
        self.sink_factory = sink_factory or (lambda: open_output(RATE, 2))
        self.clock = clock or str(settings.get("cpu_host", "audio_clock"))
        if self.clock not in CLOCKS:
            raise NxError(f"cpu_host.audio_clock is {self.clock!r}: use {', '.join(CLOCKS)}")
        wav = settings.get("cpu_host", "audio_out")
        if sink_factory is None and wav and not Path(wav).expanduser().resolve().parent.is_dir():
            raise NxError("cpu_host.audio_out (--audio-out): its folder does not exist", path=str(wav))
        self.lock = threading.RLock()
        self.sources: list[RendererSource | AudioOutSource] = []
        self.sink: Sink | None = None
        self.mode = "wall"
        self.frames = 0  # 5 ms frames written to the sink
        self.late_frames = 0
        self.stalls = 0  # resumed half a device queue's time late or more: the only way it runs dry
        self.presents = 0
        self.opened_at = 0.0
        self.clock_started = 0.0  # when the clock thread began (its frames count from there)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.closed = False

    # ---- sources ------------------------------------------------------------------------
    def _add(self, src: RendererSource | AudioOutSource) -> None:
        with self.lock:
            if self.sink is None:
                self.sink = self.sink_factory()
                wav = isinstance(self.sink, WavSink)
                self.mode = "frames" if self.clock == "frames" or (self.clock == "auto" and wav) else "wall"
                self.opened_at = time.monotonic()
                self._thread = threading.Thread(target=self._run, name="audio-clock", daemon=True)
                self._thread.start()
                log.info(
                    "audio: output %s, clocked by %s",
                    type(self.sink).__name__,
                    "the presented frames" if self.mode == "frames" else "the wall clock",
                )
            self.sources.append(src)

    def remove(self, src: RendererSource | AudioOutSource) -> None:
        with self.lock:
            if src in self.sources:
                self.sources.remove(src)

    def open_renderer(
        self, parameter: bytes | RendererParameter, memory: GuestMemory, on_frame: Callable[[], None] = lambda: None
    ) -> RendererSource:
        """A renderer (``AudioError`` with Horizon's result for a bad parameter block)."""
        src = RendererSource(self, AudioRenderer(parameter, memory), on_frame)
        self._add(src)
        return src

    def open_audio_out(self, channels: int = 2, on_release: Callable[[], None] = lambda: None) -> AudioOutSource:
        src = AudioOutSource(self, channels, on_release)
        self._add(src)
        return src

    # ---- the clock ----------------------------------------------------------------------
    def tick(self) -> None:
        """One 5 ms frame of every source, mixed and written."""
        with self.lock:
            if self.closed or self.sink is None:
                return
            mix = np.zeros((FRAME, 2), np.int32)
            done = []
            for src in list(self.sources):
                try:
                    pcm = src.frame()
                except Exception:  # a renderer bug must not take the game down: that source goes
                    log.exception("audio: a source failed; it is removed")
                    self.sources.remove(src)
                    continue
                if pcm is not None:
                    mix += pcm
                done.append(src)
            self.sink.write(np.clip(mix, -32768, 32767).astype(np.int16))
            self.frames += 1
        for src in done:
            src.after()

    def present(self) -> None:
        """The program presented a frame: in the frames clock, its 1/60 s of audio now."""
        with self.lock:
            if self.sink is None or self.closed:
                return
            self.presents += 1
            if self.mode != "frames":
                return
            due = self.presents * SAMPLES_PER_PRESENT
        while (self.frames + 1) * FRAME <= due + FRAME // 2 and not self.closed:
            self.tick()

    def _run(self) -> None:
        due = self.clock_started = time.monotonic()
        last = None
        while not self._stop.is_set():
            if self.mode == "frames":
                if self.presents or time.monotonic() - self.opened_at < FALLBACK_S:
                    if self._stop.wait(0.05):
                        return
                    if self.presents:
                        return  # the program presents: the frames are the clock
                    continue
                log.info("audio: no frame presented %.1f s after audio opened: the wall clock paces audio", FALLBACK_S)
                with self.lock:
                    self.mode = "wall"
                due = time.monotonic()
            now = time.monotonic()
            queued = self.sink.queued_frames() if self.sink is not None else None
            slack = 0.0
            if queued is not None:
                slack = self.sink.target_frames / RATE
                if last is not None and now - last > slack / 2:  # the device pulls in chunks
                    self.stalls += 1
                last = now
                if queued < self.sink.target_frames:  # the device wants more: now, whatever the wall says
                    self.tick()
                    # a thread that ran late (starved of CPU) jumps to the wall clock: the frames
                    # jumped over are skipped, and counted so, as in the wall-clock path below
                    late = (now - slack) - (due + PERIOD)
                    if late >= PERIOD:
                        skipped = int(late / PERIOD)
                        self.late_frames += skipped
                        due += skipped * PERIOD
                    due = max(due + PERIOD, now - slack)
                    continue
            if now - due > slack + MAX_CATCH_UP * PERIOD:
                skipped = int((now - due - slack) / PERIOD)
                self.late_frames += skipped
                due += skipped * PERIOD
            if now < due + slack:
                self._stop.wait(min(due + slack - now, 0.002 if queued is not None else 1.0))
                continue
            self.tick()
            due += PERIOD

    def close(self) -> None:
        """Stop the clock and finalise the output (idempotent); logs the counts."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        with self.lock:
            if self.closed:
                return
            self.closed = True
            sink = self.sink
        if sink is None:
            return
        sink.close()
        stats = getattr(sink, "stats", None)
        extra = (
            (
                f"; device: {stats.frames_written} sample frames written, {stats.frames_dropped} dropped, "
                f"{stats.underruns} underruns"
            )
            if stats is not None
            else ""
        )
        log.info(
            "audio: %d frames of 5 ms (%.2f s), %d late frames skipped, %d stalls, output %s%s",
            self.frames,
            self.frames * PERIOD,
            self.late_frames,
            self.stalls,
            type(sink).__name__,
            extra,
        )


def null_host() -> AudioHost:
    """A host whose output goes nowhere (tests of the services' bookkeeping)."""
    return AudioHost(NullSink, "wall")
