"""What sound costs a game per frame on the host: one nn::audio RequestUpdateAudioRenderer (the
host's model of the config -> an update request -> the renderer's parse and apply -> the response
read back: ``cpu_host/horizon/audio/nn_audio.py``) and one present's audio in the frames clock
(800 samples: 3.3 renderer frames, mixed and written), for N voices playing.

    .venv/bin/python bench/audio_update.py [--voices 2 8 32] [--frames 300]

A 60 Hz game has 16.7 ms a frame; the columns say how much of it sound takes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cpu_host.horizon.audio import client as C  # noqa: E402
from cpu_host.horizon.audio import layout as L  # noqa: E402
from cpu_host.horizon.audio.host import AudioHost  # noqa: E402
from cpu_host.horizon.audio.nn_audio import ConfigModel, NnAudio, VoiceModel  # noqa: E402
from cpu_host.horizon.audio.output import NullSink  # noqa: E402
from cpu_host.horizon.audio.renderer import BytesMemory  # noqa: E402
from cpu_host.horizon.audio.request import RendererParameter  # noqa: E402


def run(n: int, frames: int) -> tuple[float, float]:
    host = AudioHost(NullSink, "frames")
    p = RendererParameter(voice_count=n, mix_buffer_count=2)
    mem = BytesMemory()
    tone = (np.sin(np.arange(48000) * 0.05) * 8000).astype(np.int16)
    mem.map(0x10000, tone.tobytes())
    src = host.open_renderer(p, mem)
    src.start()
    hle = NnAudio(host)
    cfg = ConfigModel(p, final_buffers=2, sinks=[C.device_sink([0, 1])])
    for i in range(n):
        v = VoiceModel(i, [i], L.FMT_PCM16, 32000 + 100 * i, 0, mix=L.FINAL_MIX_ID, play_state=L.PLAY_STARTED)
        v.mix_volumes[0, :2] = 0.5
        v.ring[0] = C.Wave(0x10000, tone.nbytes, 0, tone.size, loop=True)
        v.appended, v.queued = 1, __import__("collections").deque([0x1000])
        cfg.voices[i] = v
    update = present = 0.0
    for _ in range(frames):
        t0 = time.perf_counter()
        res, resp = src.update(hle._request(cfg))
        assert res == 0
        hle._response(cfg, resp)
        for v in cfg.voices.values():
            v.is_new = False
            v.ring[0].sent_to_server = True
        t1 = time.perf_counter()
        host.present()
        t2 = time.perf_counter()
        update += t1 - t0
        present += t2 - t1
    host.close()
    return update / frames * 1e3, present / frames * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--voices", type=int, nargs="+", default=[2, 8, 32])
    ap.add_argument("--frames", type=int, default=300)
    a = ap.parse_args()
    print(f"{'voices':>6} {'update ms':>10} {'present ms':>11} {'% of 16.7 ms':>13}")
    for n in a.voices:
        u, p = run(n, a.frames)
        print(f"{n:>6} {u:>10.3f} {p:>11.3f} {100 * (u + p) / 16.667:>12.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
