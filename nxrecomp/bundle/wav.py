"""A run's audio files: the WAV writer, what the report says of a WAV file, and the audio stream
of a GPU recording (used by the CPU host, the GPU process's replay and the application layer).

- ``WavFile``: a PCM16 WAV written atomically (temporary name, renamed at ``close``).
- ``summary(path)``: duration, RMS (of the two channels' samples, full scale 32768) and the
  strongest spectral peaks (of a Hann-windowed FFT of the whole file, peaks 3 % apart) of a
  PCM16 WAV, for ``report.json``.
- ``append_to_recording(recording, wav)``: the WAV's samples as ``["audio", rate, channels,
  pcm16 bytes]`` events (1 s each) at the end of a GPU recording (``gpu_host/record.py``'s
  msgpack stream), written once every process of the run has exited (the file has one writer
  at a time); ``nxrecomp replay`` writes them back out as ``audio.wav`` (``write_events``).
"""

from __future__ import annotations

import os
import struct
import wave
from pathlib import Path

import msgpack
import numpy as np

from nxrecomp.common.errors import NxError

CHUNK_S = 1


class WavFile:
    """A RIFF/WAVE PCM16 file written to a temporary name and renamed at ``close``: the named file
    is either absent or complete, never half-written."""

    def __init__(self, path: str | os.PathLike, rate: int = 48000, channels: int = 2) -> None:
        self.path = Path(path)
        self.rate, self.channels = rate, channels
        self.tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self.f = open(self.tmp, "wb")
        self.f.write(self._header(0))
        self.frames = 0

    def _header(self, frames: int) -> bytes:
        data = frames * self.channels * 2
        return (
            b"RIFF"
            + struct.pack("<I", 36 + data)
            + b"WAVE"
            + b"fmt "
            + struct.pack("<IHHIIHH", 16, 1, self.channels, self.rate, self.rate * self.channels * 2, self.channels * 2, 16)
            + b"data"
            + struct.pack("<I", data)
        )

    def write(self, pcm: np.ndarray) -> None:
        if pcm.ndim != 2 or pcm.shape[1] != self.channels:
            raise ValueError(f"WAV {self.path}: frames of {self.channels} channels, got shape {pcm.shape}")
        self.f.write(np.ascontiguousarray(pcm, "<i2").tobytes())
        self.frames += pcm.shape[0]

    def close(self) -> None:
        if self.f.closed:
            return
        self.f.seek(0)
        self.f.write(self._header(self.frames))
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        os.replace(self.tmp, self.path)

    def abandon(self) -> None:
        """Drop the partial file (an error mid-run): the target name is never created."""
        if not self.f.closed:
            self.f.close()
        self.tmp.unlink(missing_ok=True)


def read(path: str | Path) -> tuple[int, np.ndarray]:
    """(sample rate, frames x channels int16) of a PCM16 WAV; a file that is not one is named."""
    try:
        with wave.open(str(path)) as w:
            if w.getsampwidth() != 2:
                raise NxError(f"{8 * w.getsampwidth()}-bit samples, want 16", path=str(path))
            rate, ch = w.getframerate(), w.getnchannels()
            data = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, ch)
    except (OSError, EOFError, wave.Error) as e:
        raise NxError(f"not a readable WAV file: {e}", path=str(path)) from None
    return rate, data


def summary(path: str | Path, peaks: int = 5) -> dict:
    rate, data = read(path)
    x = data.astype(np.float64)
    out = {
        "file": str(path),
        "rate": rate,
        "channels": data.shape[1],
        "frames": data.shape[0],
        "duration_s": round(data.shape[0] / rate, 3) if rate else 0.0,
        "rms": round(float(np.sqrt((x**2).mean())), 1) if x.size else 0.0,
        "peaks_hz": [],
    }
    if data.shape[0] >= 1024:
        mono = x.mean(axis=1)
        spec = np.abs(np.fft.rfft(mono * np.hanning(mono.size)))
        freqs = np.fft.rfftfreq(mono.size, 1 / rate)
        local = np.flatnonzero((spec[1:-1] > spec[:-2]) & (spec[1:-1] >= spec[2:])) + 1
        best: list[int] = []
        for i in local[np.argsort(spec[local])[::-1]]:  # strongest first, 3 % apart (one line, one peak)
            if all(abs(freqs[i] - freqs[j]) > 0.03 * freqs[j] for j in best):
                best.append(int(i))
            if len(best) == peaks:
                break
        out["peaks_hz"] = [round(float(freqs[i]), 1) for i in sorted(best)]
    return out


def append_to_recording(recording: str | Path, wav: str | Path) -> int:
    """Append the WAV's samples to the recording as audio events; returns how many."""
    rate, data = read(wav)
    step = rate * CHUNK_S
    packer = msgpack.Packer(use_bin_type=True)
    n = 0
    with open(recording, "ab") as f:
        for at in range(0, data.shape[0], step):
            f.write(packer.pack(["audio", rate, data.shape[1], np.ascontiguousarray(data[at : at + step]).tobytes()]))
            n += 1
    return n


def write_events(events: list[list], path: str | Path) -> None:
    """The audio events' samples (``[rate, channels, bytes]`` each) as one WAV file, atomically."""
    rate, ch = int(events[0][0]), int(events[0][1])
    sink = WavFile(path, rate, ch)
    try:
        for i, (r, c, pcm) in enumerate(events):
            if (int(r), int(c)) != (rate, ch) or not isinstance(pcm, bytes) or len(pcm) % (2 * ch):
                raise NxError(
                    f"audio event {i}: {r} Hz x {c} channels of {len(pcm)} bytes does not continue {rate} Hz x {ch}",
                    path=str(path),
                )
            sink.write(np.frombuffer(pcm, "<i2").reshape(-1, ch))
    except Exception:
        sink.abandon()
        raise
    sink.close()
