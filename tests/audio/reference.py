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
