"""Audio renderer throughput: frames (240 samples, 5 ms at 48 kHz) rendered per second for N
voices, our renderer (cpu_host/horizon/audio: Python control, C DSP) against a numpy reference
renderer (np.interp SRC + gain per voice, tests/audio/reference.py) in the same run.

    .venv/bin/python bench/audio_render.py [--voices 1 8 32 96] [--frames 400]

Each voice: PCM16 mono, its own sample rate (22.05..48 kHz) and pitch, looping, mixed into a
stereo final mix.  Real time needs 200 frames/s; the ratio column is ours / numpy.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cpu_host.horizon.audio import client as C  # noqa: E402
from cpu_host.horizon.audio.renderer import AudioRenderer, BytesMemory  # noqa: E402
from cpu_host.horizon.audio.request import RendererParameter  # noqa: E402
from tests.audio.reference import render_numpy_frame  # noqa: E402


def ours(n_voices: int, frames: int) -> float:
    p = RendererParameter(voice_count=n_voices, mix_buffer_count=2)
    mem = BytesMemory()
    rng = np.random.default_rng(0)
    voices, chans = {}, {}
    for v in range(n_voices):
        rate = int(rng.choice([22050, 32000, 44100, 48000]))
        src = (np.sin(np.arange(rate) * 2 * np.pi * 440 / rate) * 3000).astype(np.int16)
        addr = 0x100000 * (v + 1)
        mem.map(addr, src.tobytes())
        voices[v] = C.Voice(
            v,
            channel_ids=[v],
            sample_rate=rate,
            pitch=float(rng.uniform(0.8, 1.2)),
            volume=0.3,
            is_new=True,
            waves=[C.Wave(addr, src.nbytes, 0, rate, loop=True)],
        )
        chans[v] = [0.7, 0.5]
    r = AudioRenderer(p, mem)
    r.update(C.Update(p, voices=voices, channels=chans, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]).pack())
    r.render_frame()
    t0 = time.perf_counter()
    for _ in range(frames):
        r.render_frame()
    return frames / (time.perf_counter() - t0)


def reference(n_voices: int, frames: int) -> float:
    rng = np.random.default_rng(0)
    srcs, ratios = [], []
    for _ in range(n_voices):
        rate = int(rng.choice([22050, 32000, 44100, 48000]))
        srcs.append((np.sin(np.arange(rate) * 2 * np.pi * 440 / rate) * 3000).astype(np.float64))
        ratios.append(rate * float(rng.uniform(0.8, 1.2)) / 48000)
    pos, gains = [0.0] * n_voices, [0.3] * n_voices
    t0 = time.perf_counter()
    for _ in range(frames):
        acc = render_numpy_frame(srcs, ratios, pos, gains)
        np.clip(np.rint(np.stack([acc * 0.7, acc * 0.5], 1)), -32768, 32767).astype(np.int16)
    return frames / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--voices", type=int, nargs="+", default=[1, 8, 32, 96])
    ap.add_argument("--frames", type=int, default=400)
    a = ap.parse_args()
    print(f"{'voices':>6} {'ours frames/s':>14} {'numpy frames/s':>15} {'ratio':>6} {'x real time':>11}")
    for n in a.voices:
        o, r = ours(n, a.frames), reference(n, a.frames)
        print(f"{n:6d} {o:14.0f} {r:15.0f} {o / r:6.2f} {o / 200:11.1f}")


if __name__ == "__main__":
    main()
