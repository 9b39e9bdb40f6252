"""Where rendered audio goes: ``audout:u``-style buffer queues and the host outputs.

- ``AudioOut``: the queue ``audout:u``'s IAudioOut serves: AppendAudioOutBuffer (a tag and its
  PCM16 samples), GetReleasedAudioOutBuffers (tags fully played, in order), Start/Stop, and a
  released flag standing for the buffer event.  ``pump(frames)`` plays ``frames`` sample frames
  into a sink (silence when the queue is empty).  Facts: switchbrew "Audio services" (audout:u,
  48000 Hz, PCM format numbers); at most 32 buffers queued (TooManyBuffersInUse, result 153-8:
  Ryujinx's audio ResultCode).
- ``WavSink``: a RIFF/WAVE PCM16 file (``nxrecomp.bundle.wav.WavFile``: written to a temporary
  name and renamed at ``close``, never half-written).
- ``SdlSink``: an SDL3 audio stream (pysdl3 over the SDL3 gpu_host/sdl3_build.py builds).  A
  write never blocks: when more than ``latency_ms`` of audio is already queued the frame is
  dropped and counted, so a slow or missing device never holds up the game's timing; a write
  that finds the device's queue empty after playback started counts an underrun.  Its queue
  level (``queued_frames``) paces the process's audio clock (host.py): it keeps half the
  latency queued, room for the device's pulls and our jitter.
- ``open_output(settings)``: the sink the settings ask for (``cpu_host.audio_out`` WAV file,
  ``cpu_host.audio_device``, ``cpu_host.audio_latency_ms``).
``host.py`` mixes every renderer and audio out of the process into one of these sinks.
"""

from __future__ import annotations

import ctypes
import logging
import os
from collections import deque
from dataclasses import dataclass

import numpy as np

from cpu_host.horizon.audio import layout as L
from nxrecomp.bundle.wav import WavFile
from nxrecomp.common import settings
from nxrecomp.common.errors import NxError

log = logging.getLogger("cpu_host.audio")
AUDOUT_MAX_BUFFERS = 32
RESULT_TOO_MANY_BUFFERS = L.result(8)


class Sink:
    """Takes interleaved int16 frames (frames x channels)."""

    rate = 48000
    channels = 2

    def write(self, pcm: np.ndarray) -> None:
        raise NotImplementedError

    def queued_frames(self) -> int | None:
        """Sample frames waiting for a device (None: no device, nothing to pace by)."""
        return None

    def close(self) -> None:
        pass


class NullSink(Sink):
    def write(self, pcm: np.ndarray) -> None:
        pass


class WavSink(WavFile, Sink):
    """The WAV file writer (``nxrecomp/bundle/wav.py``) as an audio sink."""


@dataclass
class SdlStats:
    frames_written: int = 0
    frames_dropped: int = 0
    underruns: int = 0


class SdlSink(Sink):
    def __init__(self, rate: int = 48000, channels: int = 2, latency_ms: int = 60, device: str = "", build: bool = False) -> None:
        from gpu_host import sdl3_build

        lib = sdl3_build.lib_dir(build)
        os.environ.update(sdl3_build.pysdl3_env(lib))
        if device:
            os.environ["SDL_AUDIODRIVER"] = device
        import sdl3

        self.sdl = sdl3
        self.rate, self.channels = rate, channels
        self.max_bytes = rate * channels * 2 * max(1, latency_ms) // 1000
        self.stats = SdlStats()
        self.started = False
        if not sdl3.SDL_InitSubSystem(sdl3.SDL_INIT_AUDIO):
            raise NxError(
                f"SDL audio: SDL_InitSubSystem: {sdl3.SDL_GetError().decode(errors='replace')} (setting cpu_host.audio_device)"
            )
        spec = sdl3.SDL_AudioSpec(sdl3.SDL_AUDIO_S16LE, channels, rate)
        # no callback: we push (a NULL SDL_AudioStreamCallback)
        self.stream = sdl3.SDL_OpenAudioDeviceStream(
            sdl3.SDL_AUDIO_DEVICE_DEFAULT_PLAYBACK, ctypes.byref(spec), sdl3.SDL_AudioStreamCallback(), None
        )
        if not self.stream:
            err = sdl3.SDL_GetError().decode(errors="replace")
            sdl3.SDL_QuitSubSystem(sdl3.SDL_INIT_AUDIO)
            raise NxError(f"SDL audio: no playback device: {err} (setting cpu_host.audio_device)")
        sdl3.SDL_ResumeAudioStreamDevice(self.stream)
        self.driver = (sdl3.SDL_GetCurrentAudioDriver() or b"?").decode()

    def queued_bytes(self) -> int:
        return int(self.sdl.SDL_GetAudioStreamQueued(self.stream))

    def queued_frames(self) -> int | None:
        return self.queued_bytes() // (2 * self.channels)

    @property
    def target_frames(self) -> int:
        """What the clock keeps queued: half the latency bound (room for the device's pulls and
        our jitter, and the other half before frames are dropped)."""
        return self.max_bytes // 2 // (2 * self.channels)

    def write(self, pcm: np.ndarray) -> None:
        data = np.ascontiguousarray(pcm, "<i2").tobytes()
        queued = self.queued_bytes()
        if self.started and queued == 0:
            self.stats.underruns += 1
        if queued + len(data) > self.max_bytes:
            self.stats.frames_dropped += pcm.shape[0]
            return
        if not self.sdl.SDL_PutAudioStreamData(self.stream, data, len(data)):
            self.stats.frames_dropped += pcm.shape[0]
            return
        self.started = True
        self.stats.frames_written += pcm.shape[0]

    def close(self) -> None:
        if self.stream:
            self.sdl.SDL_DestroyAudioStream(self.stream)
            self.stream = None
            self.sdl.SDL_QuitSubSystem(self.sdl.SDL_INIT_AUDIO)


def adapt_channels(pcm: np.ndarray, channels: int) -> np.ndarray:
    """Frames of any of Horizon's channel counts (1, 2, 4, 6) as ``channels`` (1 or 2): mono is
    copied to both sides; 4.0 and 5.1 (FL FR FC LFE BL BR order, libnx/Ryujinx) are folded down
    with the ITU gains (centre and surrounds at -3 dB, LFE dropped), saturated."""
    have = pcm.shape[1]
    if have == channels:
        return pcm
    x = pcm.astype(np.float32)
    if have == 1:
        st = np.repeat(x, 2, axis=1)
    elif have == 2:
        st = x
    elif have == 4:
        st = np.stack([x[:, 0] + 0.7071 * x[:, 2], x[:, 1] + 0.7071 * x[:, 3]], 1)
    elif have == 6:
        st = np.stack([x[:, 0] + 0.7071 * (x[:, 2] + x[:, 4]), x[:, 1] + 0.7071 * (x[:, 2] + x[:, 5])], 1)
    else:
        raise ValueError(f"{have} channels: Horizon's sinks have 1, 2, 4 or 6")
    if channels == 1:
        st = st.mean(axis=1, keepdims=True)
    return np.clip(np.rint(st), -32768, 32767).astype(np.int16)


def open_output(rate: int = 48000, channels: int = 2) -> Sink:
    """The sink the settings ask for: a WAV file when ``cpu_host.audio_out`` names one, else SDL3
    unless ``cpu_host.audio_device`` is ``none``; no SDL3 or no device -> silence (logged)."""
    wav = settings.get("cpu_host", "audio_out")
    if wav:
        return WavSink(wav, rate, channels)
    device = settings.get("cpu_host", "audio_device")
    if device == "none":
        return NullSink()
    try:
        return SdlSink(rate, channels, settings.get("cpu_host", "audio_latency_ms"), device)
    except Exception as e:  # no SDL3 build, no device: the game runs silent
        log.warning("no audio output: %s", e)
        return NullSink()


@dataclass
class OutBuffer:
    tag: int
    samples: np.ndarray  # frames x channels int16
    played: int = 0


class AudioOut:
    """One IAudioOut: a queue of appended buffers played in order into ``sink``."""

    def __init__(self, sink: Sink | None, channels: int = 2, rate: int = 48000) -> None:
        self.sink, self.channels, self.rate = sink, channels, rate
        self.queue: deque[OutBuffer] = deque()
        self.released: deque[int] = deque()
        self.started = False
        self.event = False  # stands for the buffer event's signalled state
        self.played_samples = 0  # GetAudioOutPlayedSampleCount (frames)

    def start(self) -> int:
        self.started = True
        return L.RESULT_SUCCESS

    def stop(self) -> int:
        self.started = False
        return L.RESULT_SUCCESS

    def append(self, tag: int, pcm: bytes | np.ndarray) -> int:
        if len(self.queue) >= AUDOUT_MAX_BUFFERS:
            return RESULT_TOO_MANY_BUFFERS
        a = np.frombuffer(pcm, "<i2") if not isinstance(pcm, np.ndarray) else pcm.astype("<i2", copy=False)
        frames = a.size // self.channels
        self.queue.append(OutBuffer(tag, a[: frames * self.channels].reshape(frames, self.channels)))
        return L.RESULT_SUCCESS

    def buffer_count(self) -> int:
        return len(self.queue)

    def flush(self) -> bool:
        """FlushAudioOutBuffers: every queued buffer released unplayed; True if any was queued."""
        had = bool(self.queue)
        while self.queue:
            self.released.append(self.queue.popleft().tag)
        self.event = self.event or had
        return had

    def contains(self, tag: int) -> bool:
        return any(b.tag == tag for b in self.queue)

    def get_released(self, max_count: int) -> list[int]:
        out = []
        while self.released and len(out) < max_count:
            out.append(self.released.popleft())
        if not self.released:
            self.event = False
        return out

    def pump(self, frames: int) -> np.ndarray:
        """Play ``frames`` sample frames: queued buffers in order, silence after them; the
        frames go to the sink (if any) and are returned."""
        out = np.zeros((frames, self.channels), np.int16)
        at = 0
        while self.started and self.queue and at < frames:
            b = self.queue[0]
            k = min(frames - at, b.samples.shape[0] - b.played)
            out[at : at + k] = b.samples[b.played : b.played + k]
            at += k
            b.played += k
            self.played_samples += k
            if b.played >= b.samples.shape[0]:
                self.queue.popleft()
                self.released.append(b.tag)
                self.event = True
        if self.sink is not None:
            self.sink.write(out)
        return out
