"""The C kernels against independent references: DSP-ADPCM against the published algorithm
(tests/audio/reference.py), biquad against scipy.signal.lfilter, SRC against numpy.interp, ramps
against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter

from cpu_host.horizon.audio import dsp
from tests.audio import reference as ref


def _adpcm_stream(rng: np.random.Generator, frames: int) -> bytes:
    b = bytearray(rng.integers(0, 256, frames * 8, dtype=np.uint8).tobytes())
    for f in range(frames):
        b[f * 8] = int(rng.integers(0, 8)) << 4 | int(rng.integers(0, 12))
    return bytes(b)


@pytest.mark.parametrize("seed", range(4))
def test_adpcm_matches_published_algorithm(seed: int) -> None:
    rng = np.random.default_rng(seed)
    coefs = [int(v) for v in rng.integers(-4096, 4096, 16)]
    data = _adpcm_stream(rng, 200)
    samples = 200 * 14 - 5
    want = ref.adpcm_decode(data, samples, coefs)
    hist = np.zeros(2, np.int32)
    got = dsp.adpcm_decode(data, 0, samples, np.array(coefs, np.int16), hist)
    assert np.array_equal(got, want)  # sample-exact
    # decoding in pieces (resuming mid-frame with the returned history) gives the same samples
    hist = np.zeros(2, np.int32)
    parts, at = [], 0
    for k in (1, 13, 14, 15, 100, 777):
        parts.append(dsp.adpcm_decode(data, at, k, np.array(coefs, np.int16), hist))
        at += k
    joined = np.concatenate(parts)
    assert np.array_equal(joined, want[: joined.size])


def test_adpcm_saturates_and_stops_at_data_end() -> None:
    coefs = np.array([4096, 0] * 8, np.int16)  # s = 2 * h1 + n*scale: runs into the clamp
    data = bytes([0x0B, 0x77] + [0x77] * 6)
    out = dsp.adpcm_decode(data, 0, 100, coefs, np.zeros(2, np.int32))
    assert out.size == 14 and out.max() == 32767
    assert np.array_equal(out, ref.adpcm_decode(data, 100, [int(c) for c in coefs]))


@pytest.mark.parametrize(
    "num,den",
    [
        ((4096, 8192, 4096), (-10000, 4000)),  # Q14 low-pass-ish
        ((16384, 0, 0), (0, 0)),
        ((12000, -20000, 9000), (-26000, 11000)),
    ],
)
def test_biquad_matches_lfilter(num, den) -> None:
    x = np.random.default_rng(1).standard_normal(2400).astype(np.float32) * 1000
    b = np.array(num, np.float64) / 16384
    a = np.concatenate(([1.0], np.array(den, np.float64) / 16384))
    want = lfilter(b, a, x.astype(np.float64))
    got = np.empty_like(x)
    state = np.zeros(2, np.float32)
    for f in range(10):  # frame by frame, state carried
        buf = x[f * 240 : (f + 1) * 240].copy()
        dsp.biquad(buf, b.astype(np.float32), a[1:].astype(np.float32), state)
        got[f * 240 : (f + 1) * 240] = buf
    # float32 arithmetic against float64: within 1e-4 of the signal's scale
    assert np.max(np.abs(got - want)) < 1e-4 * np.max(np.abs(want)) + 1e-2


@pytest.mark.parametrize("ratio", [0.5, 0.9187, 1.0, 1.5, 2.75])
def test_resample_matches_numpy_interp(ratio: float) -> None:
    src = (np.sin(np.arange(6000) * 0.05) * 8000).astype(np.float32)
    n, frames = 240, 8
    want = ref.resample(src, ratio, frames, n)
    out, frac, pending, at = [], 0.0, np.zeros(1, np.float32), 0
    for _ in range(frames):
        length, used = dsp.resample_span(frac, ratio, n)
        more = max(0, length - pending.size)
        h = np.concatenate((pending, src[at : at + more])).astype(np.float32)
        at += more
        out.append(dsp.resample_linear(h, frac, ratio, n))
        pending, frac = h[used:], frac + n * ratio - used
        assert 0.0 <= frac < 1.0
    got = np.concatenate(out)
    # documented tolerance: float32 samples of a 16-bit-scale signal, within 0.01 LSB
    assert np.max(np.abs(got - want)) < 1e-2


def test_mix_ramp_matches_numpy() -> None:
    rng = np.random.default_rng(2)
    src = rng.standard_normal(240).astype(np.float32)
    dst = rng.standard_normal(240).astype(np.float32)
    want = dst.astype(np.float64) + src * ref.ramp(240, 0.25, 0.75)
    dsp.mix_ramp(dst, src, 0.25, 0.75)
    assert np.max(np.abs(dst - want)) < 1e-5


def test_to_pcm16_saturates() -> None:
    a = np.array([0.4, 40000.0, -50000.0, 1.6], np.float32)
    out = dsp.to_pcm16([a, -a])
    assert out[:, 0].tolist() == [0, 32767, -32768, 2] and out[:, 1].tolist() == [0, -32768, 32767, -2]
