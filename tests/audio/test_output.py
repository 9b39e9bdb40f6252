"""Outputs: the WAV file (read back with Python's wave module: duration, RMS, spectrum peak of a
tone rendered through the renderer), written atomically; the audout queue; the process's audio clock
(wall, presented frames, paced by a device); the SDL3 stream with
SDL's dummy audio driver (bounded frames, dropped frames and underruns counted)."""

from __future__ import annotations

import os
import time
import wave

import numpy as np
import pytest
from cpu_host.horizon.audio import client as C
from cpu_host.horizon.audio import layout as L
from cpu_host.horizon.audio.output import AUDOUT_MAX_BUFFERS, AudioOut, NullSink, Sink, WavSink
from tests.audio.helpers import Rig


def test_wav_of_a_rendered_tone(tmp_path) -> None:
    path = tmp_path / "out.wav"
    sink = WavSink(path)
    rig = Rig(voice_count=1)
    rig.r.sink_out = lambda i, pcm: sink.write(pcm)
    rate, freq, amp = 32000, 1000.0, 10000
    t = np.arange(rate) / rate
    src = (np.sin(2 * np.pi * freq * t) * amp).astype(np.int16)  # 1 s at 32 kHz, resampled to 48 kHz
    addr, size = rig.put(src.tobytes())
    v = C.Voice(0, sample_rate=rate, volume=0.5, is_new=True, waves=[C.Wave(addr, size, 0, rate)])
    rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 1.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]))
    rig.run(200)  # 200 frames x 5 ms = 1 s
    assert not path.exists()  # nothing under the final name before close
    sink.close()
    with wave.open(str(path)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (2, 2, 48000)
        frames = w.getnframes()
        data = np.frombuffer(w.readframes(frames), "<i2").reshape(-1, 2).astype(np.float64)
    assert frames == 48000  # duration 1.000 s
    mid = data[2400:45600, 0]
    rms = np.sqrt(np.mean(mid**2))
    assert abs(rms - amp * 0.5 / np.sqrt(2)) < 0.01 * amp  # a sine's RMS, within 1%
    spec = np.abs(np.fft.rfft(mid * np.hanning(mid.size)))
    peak = np.argmax(spec) * 48000 / mid.size
    assert abs(peak - freq) < 2.0
    assert np.array_equal(data[:, 0], data[:, 1])
    assert not list(tmp_path.glob(".*.tmp"))


def test_wav_abandoned_leaves_nothing(tmp_path) -> None:
    sink = WavSink(tmp_path / "x.wav")
    sink.write(np.zeros((240, 2), np.int16))
    sink.abandon()
    assert list(tmp_path.iterdir()) == []


class Capture(Sink):
    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []

    def write(self, pcm: np.ndarray) -> None:
        self.chunks.append(pcm.copy())


def test_audout_append_release_in_order() -> None:
    cap = Capture()
    out = AudioOut(cap)
    a = np.arange(600, dtype=np.int16)  # 300 stereo frames
    b = -np.arange(200, dtype=np.int16)  # 100 frames
    assert out.append(0x1000, a.tobytes()) == 0 and out.append(0x2000, b) == 0
    out.pump(240)  # not started: silence, nothing released
    assert not cap.chunks[-1].any() and out.get_released(8) == []
    out.start()
    out.pump(240)
    assert out.get_released(8) == [] and not out.event
    out.pump(240)  # a done at frame 300, b at 400
    assert out.event and out.get_released(1) == [0x1000] and out.get_released(8) == [0x2000]
    played = np.concatenate(cap.chunks[1:]).reshape(-1)
    assert np.array_equal(played[:800], np.concatenate([a, b])) and not played[800:].any()
    for i in range(AUDOUT_MAX_BUFFERS):
        assert out.append(i, bytes(4)) == 0
    assert out.append(99, bytes(4)) == L.result(8)  # TooManyBuffersInUse


def _sdl_sink(latency_ms: int):
    from cpu_host.horizon.audio.output import SdlSink
    from tests.xdisplay import sdl3_or_skip

    sdl3_or_skip()  # built once (as the window tests do), or a loud skip
    os.environ["SDL_AUDIODRIVER"] = "dummy"
    return SdlSink(latency_ms=latency_ms, device="dummy")


def test_sdl_never_blocks_the_game() -> None:
    sink = _sdl_sink(20)
    try:
        frame = np.zeros((240, 2), np.int16)
        t0 = time.monotonic()
        for _ in range(400):  # 2 s of audio pushed at once
            sink.write(frame)
        took = time.monotonic() - t0
        assert sink.stats.frames_dropped > 300 * 240  # beyond 20 ms queued: dropped, counted
        assert took < 1.0
    finally:
        sink.close()


def test_null_sink_when_no_device(monkeypatch) -> None:
    from cpu_host.horizon.audio import output

    monkeypatch.setenv("NXRECOMP_CPU_HOST_AUDIO_DEVICE", "none")
    monkeypatch.delenv("NXRECOMP_CPU_HOST_AUDIO_OUT", raising=False)
    assert isinstance(output.open_output(), NullSink)


def test_adapt_channels() -> None:
    from cpu_host.horizon.audio.output import adapt_channels

    mono = np.array([[100], [-200]], np.int16)
    assert adapt_channels(mono, 2).tolist() == [[100, 100], [-200, -200]]
    six = np.array([[1000, 2000, 3000, 4000, 5000, 6000]], np.int16)
    l_, r_ = adapt_channels(six, 2)[0]
    assert (l_, r_) == (round(1000 + 0.7071 * 8000), round(2000 + 0.7071 * 9000))
    loud = np.full((1, 6), 30000, np.int16)
    assert adapt_channels(loud, 2).tolist() == [[32767, 32767]]


def _tone_renderer(host, freq: float = 440.0):
    """A renderer on ``host`` playing a looping mono tone into a mono device sink (started)."""
    from cpu_host.horizon.audio.renderer import BytesMemory
    from cpu_host.horizon.audio.request import RendererParameter

    p = RendererParameter(voice_count=1)
    mem = BytesMemory()
    src = (np.sin(np.arange(48000) * 2 * np.pi * freq / 48000) * 8000).astype(np.int16)
    mem.map(0x10000, src.tobytes())
    events = []
    r = host.open_renderer(p, mem, lambda: events.append(time.monotonic()))
    v = C.Voice(0, is_new=True, waves=[C.Wave(0x10000, src.nbytes, 0, 48000, loop=True)])
    res, _ = r.update(C.Update(p, voices={0: v}, channels={0: [1.0]}, mixes=[C.Mix(0, 1)], sinks=[C.device_sink([0])]).pack())
    assert res == 0
    r.start()
    return r, events


def check_paced(host, events: list[float], produced: int) -> None:
    """200 frames a second of the clock thread's own time (rendered plus skipped-as-late).

    Never ahead of the wall (a frame is made only once its 5 ms began): at most one frame past the
    time since the clock started, measured after ``close`` joined the thread - exact, whatever the
    load.  Not behind: by the clock thread's last frame event (the last moment it is known to have
    run; a wall-clock end would count the time a loaded machine kept the thread off the CPU before
    the close), it had caught up to within MAX_CATCH_UP frames, less what one frame's own work
    took: 15 % (30 % on a machine whose load exceeds its cores) and 5 frames of slack for that."""
    from cpu_host.horizon.audio.host import MAX_CATCH_UP

    end = time.monotonic() - host.clock_started
    assert produced <= end * 200 + 1, (host.frames, host.late_frames, end)
    assert events, "no frame event came"
    ran = events[-1] - host.clock_started
    tol = 0.3 if os.getloadavg()[0] > (os.cpu_count() or 1) else 0.15
    assert produced >= (1 - tol) * ran * 200 - MAX_CATCH_UP - 5, (host.frames, host.late_frames, ran)


def test_wall_clock_paces_frames_and_signals() -> None:
    from cpu_host.horizon.audio.host import AudioHost

    cap = Capture()
    host = AudioHost(lambda: cap, "wall")
    _r, events = _tone_renderer(host)
    time.sleep(0.5)
    host.close()
    produced = host.frames + host.late_frames
    check_paced(host, events, produced)
    # every frame is written; its event is signalled once the renderer is started (the clock runs
    # from the renderer's opening, a few frames before the test's Start)
    assert host.frames == len(cap.chunks) and 0 <= host.frames - len(events) <= 3


def test_frames_clock_writes_the_wav_named_by_the_setting(tmp_path, monkeypatch) -> None:
    """Settings -> WAV output clocked by presented frames: 800 samples a present, mono on both sides."""
    from cpu_host.horizon.audio.host import AudioHost

    path = tmp_path / "game.wav"
    monkeypatch.setenv("NXRECOMP_CPU_HOST_AUDIO_OUT", str(path))
    host = AudioHost()
    _r, events = _tone_renderer(host)
    assert host.mode == "frames"
    for _ in range(90):  # 1.5 s of a 60 Hz game, presented as fast as it likes
        host.present()
    host.close()
    with wave.open(str(path)) as w:
        n = w.getnframes()
        data = np.frombuffer(w.readframes(n), "<i2").reshape(-1, 2)
    assert abs(n - 90 * 800) <= 120 and n % 240 == 0 and len(events) == n // 240
    assert np.array_equal(data[:, 0], data[:, 1]) and np.abs(data).max() > 7000


def test_audio_outs_and_renderers_mix_into_one_output() -> None:
    from cpu_host.horizon.audio.host import AudioHost

    cap = Capture()
    host = AudioHost(lambda: cap, "frames")
    out = host.open_audio_out(2)
    released = []
    out.on_release = lambda: released.append(1)
    a = np.full(480 * 2, 1000, np.int16)
    out.append(7, a)
    out.start()
    host.tick()
    host.tick()
    assert out.get_released(4) == [7] and released == [1]
    loud = host.open_audio_out(2)
    loud.start()
    loud.append(8, np.full(240 * 2, 32000, np.int16))
    out.append(9, np.full(240 * 2, 32000, np.int16))
    host.tick()
    assert cap.chunks[0].min() == 1000 and cap.chunks[2].min() == 32767  # summed, saturated
    host.close()


def test_audout_flush_and_counts() -> None:
    out = AudioOut(Capture())
    out.start()
    out.append(1, np.ones(480, np.int16))
    out.append(2, np.ones(480, np.int16))
    out.pump(100)
    assert out.played_samples == 100 and out.buffer_count() == 2
    assert out.flush() and out.buffer_count() == 0 and out.get_released(8) == [1, 2]
    assert not out.flush()


def test_device_path_600_frames_without_underruns(capsys) -> None:
    """The whole device path as a game drives it: a renderer playing the demo's music loop, the
    process's audio clock (wall), the SDL3 stream on SDL's dummy driver (no sound card here;
    tests/xdisplay builds SDL3 as the window tests do), while a 60 Hz "game" presents 600 frames.
    Underruns (the device found its queue empty) and dropped frames are counted and reported."""
    from cpu_host.horizon.audio.host import AudioHost
    from cpu_host.horizon.audio.renderer import BytesMemory
    from cpu_host.horizon.audio.request import RendererParameter
    from examples.demo import sound

    sinks = []

    def device():
        sinks.append(_sdl_sink(60))
        return sinks[-1]

    host = AudioHost(device, "wall")
    p = RendererParameter(voice_count=1)
    mem = BytesMemory()
    music = sound.music()
    mem.map(0x10000, music.tobytes())
    r = host.open_renderer(p, mem)
    v = C.Voice(0, sample_rate=sound.MUSIC_RATE, is_new=True, waves=[C.Wave(0x10000, music.nbytes, 0, music.size, loop=True)])
    assert (
        r.update(C.Update(p, voices={0: v}, channels={0: [0.5, 0.5]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]).pack())[
            0
        ]
        == 0
    )
    r.start()
    t0 = time.monotonic()
    for i in range(600):  # the game: 600 frames at 60 Hz, never waiting on audio
        host.present()
        delay = t0 + (i + 1) / 60 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    took = time.monotonic() - t0
    host.close()
    s = sinks[0].stats
    with capsys.disabled():
        print(
            f"\ndevice path, 600 game frames ({took:.2f} s): {host.frames} audio frames, {s.frames_written} sample "
            f"frames written, {s.frames_dropped} dropped, {s.underruns} underruns, {host.late_frames} late frames, "
            f"{host.stalls} stalls"
        )
    assert sinks[0].driver == "dummy" and took < 11  # the game kept its 60 Hz
    # real time needs the CPU: on a machine whose load exceeds its cores (a shared development
    # box), the device's and our threads run late; the counts are then bounded, not zero
    busy = os.getloadavg()[0] > (os.cpu_count() or 1)
    assert host.frames + host.late_frames >= (0.9 if busy else 0.95) * took * 200
    if busy:
        # the device runs dry only after the clock thread was kept off the CPU (a stall, counted):
        # a fixed share of frames failed at load 17 (52 underruns > 2% of 1535 frames)
        # Drops come from the device's own thread starved (it stops pulling while the clock goes
        # on), which nothing here counts: bounded by a share (2.1% seen at load 18; 5% allowed).
        assert s.underruns <= host.stalls + 2 and s.frames_dropped <= 0.05 * host.frames * 240, (os.getloadavg(), host.stalls)
    else:
        assert s.underruns == 0 and s.frames_dropped == 0


class StuckDevice(Capture):
    """A device that stopped pulling: its queue stays full."""

    target_frames = 1440

    def queued_frames(self) -> int:
        return 10 * self.target_frames


def test_stuck_device_never_holds_up_the_renderer() -> None:
    """With the device's queue never draining, frames still come at the wall clock's 200 Hz
    (the renderer's events go on for a game waiting on them); the sink drops what it cannot take."""
    from cpu_host.horizon.audio.host import AudioHost

    dev = StuckDevice()
    host = AudioHost(lambda: dev, "wall")
    _r, events = _tone_renderer(host)
    time.sleep(0.5)
    host.close()
    check_paced(host, events, host.frames + host.late_frames)
    assert host.frames == len(dev.chunks) and 0 <= host.frames - len(events) <= 3


class DrainingDevice(Capture):
    """A device that plays in real time: its queue drains at 48000 sample frames a second."""

    target_frames = 1440

    def __init__(self) -> None:
        super().__init__()
        self.t0, self.written = time.monotonic(), 0

    def _played(self) -> int:
        return int((time.monotonic() - self.t0) * 48000)

    def queued_frames(self) -> int:
        return max(0, self.written - self._played())

    def write(self, pcm: np.ndarray) -> None:
        super().write(pcm)
        self.written = max(self.written, self._played()) + len(pcm)


def test_a_starved_clock_counts_the_frames_it_skips() -> None:
    """The clock thread starved of CPU for 0.5 s (held off here by the host's lock, as a loaded
    machine holds it off the CPU) while a device drains its queue: the frames it jumps over to
    catch up are counted as late, so rendered + late frames still match the wall clock (the
    count the device-path test relies on; before, the device-wants-more path skipped silently)."""
    from cpu_host.horizon.audio.host import AudioHost

    host = AudioHost(DrainingDevice, "wall")
    out = host.open_audio_out(2)
    out.start()
    time.sleep(0.3)
    with host.lock:
        time.sleep(0.5)
    time.sleep(0.3)
    took = time.monotonic() - host.clock_started
    host.close()
    produced = host.frames + host.late_frames
    assert host.late_frames >= 0.4 * 200 and abs(produced - took * 200) < 0.15 * took * 200 + 10, (
        host.frames,
        host.late_frames,
        took,
    )


def test_bad_settings_are_named(tmp_path, monkeypatch) -> None:
    from cpu_host.horizon.audio.host import AudioHost
    from nxrecomp.common.errors import NxError

    monkeypatch.setenv("NXRECOMP_CPU_HOST_AUDIO_CLOCK", "sundial")
    with pytest.raises(NxError, match="cpu_host.audio_clock is 'sundial'"):
        AudioHost()
    monkeypatch.setenv("NXRECOMP_CPU_HOST_AUDIO_CLOCK", "auto")
    monkeypatch.setenv("NXRECOMP_CPU_HOST_AUDIO_OUT", str(tmp_path / "no" / "such" / "dir" / "x.wav"))
    with pytest.raises(NxError, match="audio_out.*folder does not exist"):
        AudioHost()
