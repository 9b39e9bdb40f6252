"""A forwarder built by others running an NRO built by others through the real nx-hbloader path:
nton's forwarder (PyPI, nx-hbloader 2.4.5) with a RomFS naming ``sdmc:/switch/nx.js.nro``, and nx.js
0.0.69's NRO (npm ``@nx.js/nro``) there.  hbloader reads it, maps it with svcMapProcessCodeMemory
at a random address and jumps to it; the host lifts the whole NRO when first branched to
(``cpu_host/horizon/loaded_code.py``; tens of minutes on a loaded 2-core machine the first time,
then from ``~/.cache/nxrecomp/loaded_code``: ``NXRECOMP_CPU_HOST_DETERMINISTIC=1`` fixes the random
entropy, so the address and the cached object are the same each run).

Two scripts of ours, each run until nx.js has returned to hbloader (its pages unmapped: the
kernel's notice), then the run is stopped (hbloader would load its target again, at a new random
address: a fresh lift):

- the console: ``console.log`` text in the framebuffers nx.js queued (written as PNG by the CPU
  host: ``cpu_host.framebuffer_dir``), in exactly the 16x16 cells of the text (libnx console
  facts: ``test_homebrew_console.py``), then nx.js returns on the scripted PLUS;
- issue 35's homebrew sound: nx.js's ``Audio`` (its runtime decodes the file and plays it on an
  audio renderer voice through libnx's audren) plays a 440 Hz tone from the SD card; the WAV the
  host writes (``cpu_host.audio_out``) holds it: strongest frequency 440 Hz (numpy FFT, 1 Hz
  bins), at least 2 s of the 3 s tone, well above silence.

Heavy (the first lift takes long) and needs npm and PyPI."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from gpu_host import png
from recompiler.formats.pack_romfs import pack_romfs
from tests.horizon.hb_corpus import CORPUS, CorpusUnavailable, fetch
from tests.horizon.hz_build import ROOT
from tests.horizon.test_homebrew_console import CELL, COLS, ROWS, ink

pytestmark = [pytest.mark.heavy, pytest.mark.network]

RUN_LIMIT_S = 7200  # the first run lifts 4.5 MB of code
TEXT = "Hello from nx.js, loaded by hbloader!"
UNMAPPED = re.compile(r"the code mapped at (0x[0-9a-f]+) \(0x[0-9a-f]+ bytes\) was unmapped")
LOADED = re.compile(r"lifted at run time: code loaded at (0x[0-9a-f]+)")
TONE_HZ, TONE_RATE, TONE_S = 440.0, 48000, 3.0
AUDIO_SCRIPT = """const a = new Audio('sdmc:/switch/tone.wav');
a.addEventListener('canplaythrough', () => { a.play(); console.log('playing'); });
a.addEventListener('error', (e) => console.log('audio error: ' + e.error));
"""


def _get(name: str) -> Path:
    hb = next(h for h in CORPUS if h.name == name)
    try:
        return fetch(hb)
    except CorpusUnavailable as e:
        pytest.skip(f"HOMEBREW CORPUS UNAVAILABLE: {name} ({hb.registry} {hb.package}=={hb.version}): {e}")


@pytest.fixture(scope="module")
def forwarder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from recompiler.horizon import recompile_exefs

    work = tmp_path_factory.mktemp("fwd")
    rom = work / "rom.bin"
    rom.write_bytes(pack_romfs({"nextNroPath": b"sdmc:/switch/nx.js.nro", "nextArgv": b"sdmc:/switch/nx.js.nro"}))
    recompile_exefs(_get("nton-3.0.1-forwarder"), work / "bundle", romfs=rom)
    return work / "bundle"


def _run_until_returned(bundle: Path, sd: Path, work: Path, extra_env: dict[str, str], plus_at: int) -> str:
    """hz-run until the NRO's pages are unmapped (it returned to hbloader); its stderr."""
    pad = work / "pad.txt"
    pad.write_text(f"0 -\n{plus_at} Plus\n")
    env = {
        **os.environ,
        "NXRECOMP_CPU_HOST_SD_DIR": str(sd),
        "NXRECOMP_CPU_HOST_INPUT_SCRIPT": str(pad),
        "NXRECOMP_CPU_HOST_DETERMINISTIC": "1",
        **extra_env,
    }
    err_path = work / "stderr.txt"
    with open(err_path, "w") as err, open(work / "stdout.txt", "w") as out:
        p = subprocess.Popen(
            [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)],
            cwd=ROOT,
            stdout=out,
            stderr=err,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + RUN_LIMIT_S
        try:
            while p.poll() is None and time.monotonic() < deadline and not UNMAPPED.search(err_path.read_text()):
                time.sleep(1)
        finally:
            if p.poll() is None:  # stopped as a user would: the run finalises its WAV (stop.py)
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(p.pid, signal.SIGKILL)  # whatever is left: a lifter helper of the next load
            except ProcessLookupError:
                pass
            p.wait()
    text = err_path.read_text()
    assert UNMAPPED.search(text), f"nx.js did not return to hbloader (status {p.returncode}): " + text[-4000:]
    assert p.returncode == 128 + signal.SIGTERM and "notice: stopped by SIGTERM" in text, (p.returncode, text[-3000:])
    loaded = LOADED.findall(text)
    assert loaded and UNMAPPED.search(text).group(1) == loaded[0], text[-3000:]
    return text


def test_forwarder_runs_nxjs_console(forwarder: Path, tmp_path: Path) -> None:
    sd, fb = tmp_path / "sd", tmp_path / "fb"
    (sd / "switch").mkdir(parents=True)
    (sd / "switch" / "nx.js.nro").write_bytes(_get("nxjs-0.0.69-nro").read_bytes())
    (sd / "switch" / "nx.js.js").write_text(f'console.log("{TEXT}");\n')
    _run_until_returned(forwarder, sd, tmp_path, {"NXRECOMP_CPU_HOST_FRAMEBUFFER_DIR": str(fb)}, plus_at=90)
    shown = sorted(fb.glob("*.png"))
    assert shown, "no framebuffer was queued"
    want = [i for i, ch in enumerate(TEXT) if ch != " "]
    w, h, rgba = png.decode(shown[-1].read_bytes())
    assert (w, h) == (COLS * CELL, ROWS * CELL), (w, h)
    cells = ink(np.asarray(rgba).reshape(h, w, 4))
    rows = [y for y in range(ROWS) if cells[y].any()]
    assert len(rows) == 1, f"ink in console rows {rows}, the text is one line"
    assert [x for x in range(COLS) if cells[rows[0], x]] == want


def _tone_wav() -> bytes:
    """A 440 Hz sine, 3 s, 48 kHz mono PCM16 at half scale (ours)."""
    t = np.arange(int(TONE_RATE * TONE_S)) / TONE_RATE
    pcm = (np.sin(2 * np.pi * TONE_HZ * t) * 16384).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wv:
        wv.setnchannels(1)
        wv.setsampwidth(2)
        wv.setframerate(TONE_RATE)
        wv.writeframes(pcm.tobytes())
    return buf.getvalue()


def test_forwarder_runs_nxjs_audio_into_the_wav(forwarder: Path, tmp_path: Path) -> None:
    sd, out = tmp_path / "sd", tmp_path / "sound.wav"
    (sd / "switch").mkdir(parents=True)
    (sd / "switch" / "nx.js.nro").write_bytes(_get("nxjs-0.0.69-nro").read_bytes())
    (sd / "switch" / "nx.js.js").write_text(AUDIO_SCRIPT)
    (sd / "switch" / "tone.wav").write_bytes(_tone_wav())
    err = _run_until_returned(forwarder, sd, tmp_path, {"NXRECOMP_CPU_HOST_AUDIO_OUT": str(out)}, plus_at=360)
    with wave.open(str(out)) as wv:
        rate, ch, frames = wv.getframerate(), wv.getnchannels(), wv.readframes(wv.getnframes())
    assert rate == 48000, rate
    x = np.frombuffer(frames, "<i2").astype(np.float64).reshape(-1, ch).mean(axis=1)
    loud = np.abs(x) > 1000
    assert loud.any(), f"the WAV is silent ({len(x)} samples): " + err[-2000:]
    first, last = int(np.argmax(loud)), len(loud) - 1 - int(np.argmax(loud[::-1]))
    sound = x[first : last + 1]
    assert len(sound) >= 2 * rate, f"{len(sound) / rate:.2f} s of sound"
    spec = np.abs(np.fft.rfft(sound[: 2 * rate]))
    peak = np.argmax(spec) / 2.0  # bins of rate / (2 * rate) Hz
    assert abs(peak - TONE_HZ) <= 1.0, f"strongest frequency {peak:.1f} Hz, not {TONE_HZ}"
    rms = float(np.sqrt(np.mean(sound[: 2 * rate] ** 2)))
    assert rms > 1000, f"RMS {rms:.0f} (a half-scale sine at unit volume: 11585)"
