"""The renderer's effects on a mix's buffers: delay, reverb (simplified), biquad filter.

Parameters are the type-specific 0xA0 bytes of an effect record (layouts: Ryujinx
``Parameter/Effect/{Delay,Reverb,BiquadFilterEffect}Parameter.cs``; gains Q15, biquad Q14).
What differs from Horizon, on purpose and documented:
- Delay: one feedback delay line per channel (in gain, feedback, out gain, dry gain, delay time);
  the cross-channel spread and the low-pass in the feedback path are not applied.
- Reverb: a Schroeder reverberator per channel (4 parallel combs at 29.7/37.1/41.1/43.7 ms with
  feedback 10^(-3 d / T60) from the decay time, then all-passes at 5.0 and 1.7 ms, g = 0.7),
  scaled by late gain x reverb gain x out gain, plus dry gain.  Horizon's early reflections,
  pre-delay, coloration and high-frequency decay are not modelled.
Aux, buffer mix, limiter and capture effects are accepted and pass audio through unchanged.
"""

from __future__ import annotations

import struct

import numpy as np

from cpu_host.horizon.audio import dsp
from cpu_host.horizon.audio import layout as L

COMB_MS = (29.7, 37.1, 41.1, 43.7)
ALLPASS_MS = (5.0, 1.7)
ALLPASS_G = 0.7


def _line(samples: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(max(1, samples), np.float32), np.zeros(1, np.int32)


class Effect:
    """Processes a mix's buffers in place; ``buffers`` is the renderer's [count][frame] array."""

    def __init__(self, specific: bytes, sample_rate: int) -> None:
        self.rate = sample_rate
        self.inputs = list(specific[0:6])
        self.outputs = list(specific[6:12])

    def channels(self, specific: bytes) -> int:
        return 0

    def process(self, buffers: np.ndarray, base: int, specific: bytes) -> None:
        pass

    def _io(self, buffers: np.ndarray, base: int, n: int) -> list[tuple[int, int]]:
        """(input, output) absolute buffer indices, skipping any outside this renderer's buffers."""
        pairs = []
        for c in range(min(n, 6)):
            i, o = base + self.inputs[c], base + self.outputs[c]
            if i < buffers.shape[0] and o < buffers.shape[0]:
                pairs.append((i, o))
        return pairs


class Delay(Effect):
    def __init__(self, specific: bytes, sample_rate: int) -> None:
        super().__init__(specific, sample_rate)
        _chmax, _ch, tmax, _t = struct.unpack_from("<HHII", specific, 0xC)
        self.max_samples = max(1, min(int(tmax) * sample_rate // 1000, sample_rate * 10))
        self.lines = [_line(self.max_samples) for _ in range(6)]

    def process(self, buffers: np.ndarray, base: int, specific: bytes) -> None:
        ch, t = struct.unpack_from("<xxHxxxxI", specific, 0xC)
        in_g, fb, out_g, dry = (v * L.Q15 for v in struct.unpack_from("<4I", specific, 0x1C))
        want = max(1, min(int(t) * self.rate // 1000, self.max_samples))
        for c, (i, o) in enumerate(self._io(buffers, base, ch)):
            line, pos = self.lines[c]
            if line.size != want:  # delay time changed: a fresh line of the new length
                line, pos = _line(want)
                self.lines[c] = (line, pos)
            buf = buffers[i].copy()
            dsp.delay(buf, line, pos, in_g, fb, out_g, dry)
            buffers[o] = buf


class Reverb(Effect):
    def __init__(self, specific: bytes, sample_rate: int) -> None:
        super().__init__(specific, sample_rate)
        self.combs = [[_line(int(ms * sample_rate / 1000)) for ms in COMB_MS] for _ in range(6)]
        self.allpasses = [[_line(int(ms * sample_rate / 1000)) for ms in ALLPASS_MS] for _ in range(6)]

    def process(self, buffers: np.ndarray, base: int, specific: bytes) -> None:
        ch = struct.unpack_from("<H", specific, 0xE)[0]
        late_g, decay = (v * L.Q15 for v in struct.unpack_from("<ii", specific, 0x24))
        rev_g, out_g, dry = (v * L.Q15 for v in struct.unpack_from("<3i", specific, 0x34))
        decay = max(decay, 0.01)
        wet_g = late_g * rev_g * out_g / len(COMB_MS)
        for c, (i, o) in enumerate(self._io(buffers, base, ch)):
            x = buffers[i].copy()
            wet = np.zeros_like(x)
            for ms, (line, pos) in zip(COMB_MS, self.combs[c]):
                fb = 10.0 ** (-3.0 * (ms / 1000.0) / decay)
                y = x.copy()
                dsp.delay(y, line, pos, 1.0, fb, 1.0, 0.0)
                wet += y
            for line, pos in self.allpasses[c]:
                dsp.allpass(wet, line, pos, ALLPASS_G)
            buffers[o] = dry * x + wet_g * wet


class BiquadEffect(Effect):
    def __init__(self, specific: bytes, sample_rate: int) -> None:
        super().__init__(specific, sample_rate)
        self.states = [np.zeros(2, np.float32) for _ in range(6)]

    def process(self, buffers: np.ndarray, base: int, specific: bytes) -> None:
        num = np.array(struct.unpack_from("<3h", specific, 0xC), np.float32) * np.float32(L.Q14)
        den = np.array(struct.unpack_from("<2h", specific, 0x12), np.float32) * np.float32(L.Q14)
        ch = specific[0x16]
        for c, (i, o) in enumerate(self._io(buffers, base, ch)):
            buf = buffers[i].copy()
            dsp.biquad(buf, num, den, self.states[c])
            buffers[o] = buf


KINDS = {L.EFFECT_DELAY: Delay, L.EFFECT_REVERB: Reverb, L.EFFECT_BIQUAD: BiquadEffect}


def make(kind: int, specific: bytes, sample_rate: int) -> Effect:
    return KINDS.get(kind, Effect)(specific, sample_rate)
