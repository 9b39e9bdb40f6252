"""Independent references for the renderer tests, written from the published descriptions (not
from cpu_host/horizon/audio): DSP-ADPCM decoding, linear SRC, volume ramps."""

from __future__ import annotations

import numpy as np


def adpcm_decode(data: bytes, samples: int, coefs: list[int], h1: int = 0, h2: int = 0) -> np.ndarray:
    """Nintendo DSP-ADPCM: per 8-byte frame a header byte (predictor index << 4 | log2 scale) and
    14 two's-complement nibbles, high nibble first; s = (n*scale*2048 + 1024 + c1*h1 + c2*h2) // 2048
    (arithmetic shift), saturated to int16."""
    out = []
    for f in range(0, len(data), 8):
        hdr = data[f]
        scale = 2 ** (hdr & 15)
        c1, c2 = coefs[2 * (hdr >> 4 & 7)], coefs[2 * (hdr >> 4 & 7) + 1]
        for i in range(14):
            if len(out) == samples or f + 1 + i // 2 >= len(data):
                return np.array(out, np.float64)
            byte = data[f + 1 + i // 2]
            n = byte >> 4 if i % 2 == 0 else byte & 15
            n = n - 16 if n >= 8 else n
            s = (n * scale * 2048 + 1024 + c1 * h1 + c2 * h2) // 2048
            s = max(-32768, min(32767, s))
            h2, h1 = h1, s
            out.append(s)
    return np.array(out, np.float64)


def ramp(n: int, v0: float, v1: float) -> np.ndarray:
    return v0 + (v1 - v0) * np.arange(n) / n


def resample(signal: np.ndarray, ratio: float, frames: int, n: int) -> np.ndarray:
    """Linear interpolation of ``signal`` (preceded by one zero sample: the renderer's carried
    sample at start) at positions i * ratio, for ``frames`` frames of ``n`` outputs."""
    h = np.concatenate(([0.0], signal.astype(np.float64)))
    pos = np.arange(frames * n) * ratio
    return np.interp(pos, np.arange(h.size), h, right=0.0)


def render(voices: list[dict], frames: int, n: int = 240, buffers: int = 2) -> np.ndarray:
    """numpy model of voices mixed straight into a final mix of ``buffers`` buffers, as the
    renderer's documentation says: SRC (linear) -> voice volume ramp -> mix volume ramps.
    Each voice: ``src`` (channels x samples float), ``ratio``, and per frame ``volume[f]`` and
    ``mix[f]`` (channels x buffers).  Returns frames*n x buffers float64 (before saturation)."""
    out = np.zeros((frames * n, buffers))
    for v in voices:
        chans = [resample(v["src"][c], v["ratio"], frames, n) for c in range(v["src"].shape[0])]
        for f in range(frames):
            s = slice(f * n, (f + 1) * n)
            vp, vc = v["volume"][max(f - 1, 0)], v["volume"][f]
            mp, mc = np.asarray(v["mix"][max(f - 1, 0)]), np.asarray(v["mix"][f])
            for c, y in enumerate(chans):
                scaled = y[s] * ramp(n, vp, vc)
                for b in range(buffers):
                    out[s, b] += scaled * ramp(n, mp[c][b], mc[c][b])
    return out


def feedback_delay(x: np.ndarray, d: int, in_g: float, fb: float, out_g: float, dry: float) -> np.ndarray:
    """y[t] = dry x[t] + out_g w[t-d];  w[t] = in_g x[t] + fb w[t-d]  (w = 0 before t = 0)."""
    w = np.zeros(x.size)
    y = np.zeros(x.size)
    for t in range(x.size):
        past = w[t - d] if t >= d else 0.0
        w[t] = in_g * x[t] + fb * past
        y[t] = dry * x[t] + out_g * past
    return y


def render_numpy_frame(
    srcs: list[np.ndarray], ratios: list[float], pos: list[float], gains: list[float], n: int = 240
) -> np.ndarray:
    """The bench's numpy renderer (one frame, mono voices to one buffer): np.interp SRC and a gain."""
    acc = np.zeros(n, np.float32)
    for i, (s, r, g) in enumerate(zip(srcs, ratios, gains)):
        p = pos[i] + np.arange(n) * r
        acc += (np.interp(p, np.arange(s.size), s) * g).astype(np.float32)
        pos[i] = (pos[i] + n * r) % (s.size - 2)
    return acc
