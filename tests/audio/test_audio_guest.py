"""Sound from a recompiled guest three ways (``examples/horizon_hello/programs/audio.c``): audout:u
and audren:u over raw IPC written from the public layouts (libnx audout.c / audren.c / audren.h,
switchbrew "Audio services"), and nn::audio by name; each plays its own square-wave tone, the run
writes a WAV (``cpu_host.audio_out``) and the test reads it back with numpy.

Every expected line follows from a documented value (named beside it) or from the program's own
inputs: result codes of the audio module 153 (Ryujinx's audio ResultCode tables: 3
UnsupportedSampleRate 0x699, 4 BufferSizeTooSmall 0x899, 10 InvalidChannelCount 0x1499, 41
InvalidUpdateInfo 0x5299), the PCM16 format number 2 and the Stopped state 1 (libnx audout.h)."""

from __future__ import annotations

import os
import subprocess
import sys
import wave

import numpy as np
import pytest

from examples.horizon_hello.build_exefs import PROGRAMS, build_exefs
from recompiler.horizon import recompile_exefs
from tests.horizon.hz_build import ROOT

AMP = 8000  # the program's square waves
WINDOW = 480  # 10 ms: 100 Hz bins, so 500, 1000 and 2000 Hz fall on bins


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hzaudio")
    exefs = build_exefs(PROGRAMS / "audio.c", tmp / "exefs", fp=True)
    recompile_exefs(exefs, tmp / "bundle")
    wav = tmp / "out.wav"
    env = {
        **os.environ,
        "NXRECOMP_CPU_HOST_AUDIO_OUT": str(wav),
        "NXRECOMP_CPU_HOST_SD_DIR": str(tmp / "sd"),
        "NXRECOMP_CPU_HOST_SAVE_DIR": str(tmp / "saves"),
        "NXRECOMP_CPU_HOST_DETERMINISTIC": "1",
    }
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(tmp / "bundle")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    return r, wav


def test_observations(run) -> None:
    r, _wav = run
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if x]
    assert lines == [
        "ListAudioOuts: 0 0 count=1 DeviceOut",
        "OpenAudioOut(44100 Hz): 699",  # UnsupportedSampleRate (153, 3): only 48000
        "OpenAudioOut(3 channels): 1499",  # InvalidChannelCount (153, 10)
        "OpenAudioOut: 0 0 rate=48000 channels=2 format=2 state=1 name=DeviceOut",  # PCM16, Stopped
        "RegisterBufferEvent: 0 copies=1",
        "ContainsAudioOutBuffer(first): 0 1",
        "GetAudioOutBufferCount: 0 3",
        "Start: 0",
        "released: 3 in order=1",  # every tag back, in the order appended
        "GetAudioOutPlayedSampleCount: 0 14400",  # 3 x 4800 frames
        "GetAudioOutState after Stop: 0 1",
        "AppendAudioOutBuffer(8-byte record): 899",  # BufferSizeTooSmall (153, 4): the record is 0x28
        "AppendAudioOutBufferAuto: 0",
        "FlushAudioOutBuffers: 0 1",  # one buffer was queued: released unplayed
        "GetReleasedAudioOutBuffersAuto: 0 count=1 first=1",
        "GetWorkBufferSize: 0 page-aligned=1",
        "GetWorkBufferSize(44100 Hz): 699",  # UnsupportedSampleRate: 32000 or 48000
        "CreateTransferMemory: 0 0",
        "OpenAudioRenderer: 0 0",
        "rate=48000 samples=240 mix buffers=2",  # 240 samples a frame at 48 kHz (libnx AUDREN_*)
        "QuerySystemEvent: 0 copies=1",
        "RequestUpdate: 0 0 response total=1c0",  # 0x40 header + 8 pools x 0x10 + 2 voices x 0x10 + 1 sink
        # x 0x20 + perf 0x10 + behaviour 0xB0
        "Start: state=0",
        "RequestUpdateAuto: 0 0 response total=1c0",  # the same update, buffers auto-selected (X in, C out)
        "after 80 frames: voice 0 played=9600 consumed=1",  # the 0.2 s wave buffer played whole
        "RequestUpdate(bad total size): 5299",  # InvalidUpdateInfo (153, 41)
        "RequestUpdate(99 mix buffers): 5299",
        "fuzz: 300 requests, accepted=1 refused=1 other=0",  # flipped bytes: success or a refusal, no other answer
        "Stop: state=1",
        "nn::audio: open 0 mix 1 sink 0 voice 1 update 0",
        "nn::audio: released 2 in order=1 played=9600",
        "audio: done",
    ]
    # the refused requests are named in the log: field and offset
    assert "header.total_size" in r.stderr and "mixes[0].buffer_count 99" in r.stderr


def test_wav_holds_the_three_tones(run) -> None:
    r, wav = run
    assert r.returncode == 0, r.stderr
    with wave.open(str(wav)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (2, 2, 48000)
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, 2).astype(np.float64)
    assert np.array_equal(data[:, 0], data[:, 1])  # every source was sent to both sides
    x = data[: data.shape[0] // WINDOW * WINDOW, 0].reshape(-1, WINDOW)
    rms = np.sqrt((x**2).mean(axis=1))
    loud = rms > AMP / 2
    peaks = np.fft.rfftfreq(WINDOW, 1 / 48000)[np.abs(np.fft.rfft(x[loud], axis=1)).argmax(axis=1)]
    order = [int(f) for i, f in enumerate(peaks) if i == 0 or f != peaks[i - 1]]
    assert order == [1000, 500, 2000], order  # audout, then audren:u, then nn::audio
    counts = {f: int((peaks == f).sum()) for f in (1000, 500, 2000)}
    # 0.3 s, 0.2 s, 0.2 s: whole windows of each, within two windows (a tone's edges fall inside windows)
    assert abs(counts[1000] - 30) <= 2 and abs(counts[500] - 20) <= 2 and abs(counts[2000] - 20) <= 2, counts
    full = rms[loud][np.abs(rms[loud] - AMP) < 0.05 * AMP]
    assert len(full) >= 60 and abs(full.mean() - AMP) < 0.01 * AMP  # a square wave's RMS is its amplitude
