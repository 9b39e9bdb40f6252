"""The demo's sounds, synthesised at build time (nothing recorded, nothing copied): a music loop
(an A-minor arpeggio of sines with a soft attack and release, 2 s at 24 kHz) stored as
DSP-ADPCM, and a pickup effect (a rising chirp, 0.15 s at 48 kHz) stored as PCM16.

The DSP-ADPCM encoder is ours, written from the format's published decoding rule (the one
``cpu_host/horizon/audio/dsp.c`` and ``tests/audio/reference.py`` implement): 8-byte frames of
14 samples, a header byte (coefficient pair index << 4 | scale exponent) then 14 signed nibbles,
high nibble first; sample = clamp16((nibble * 2^scale * 2048 + 1024 + c1 * h1 + c2 * h2) >> 11).
Per frame it tries every coefficient pair and scale against the decoded history (closed loop)
and keeps the one with the least squared error.  The pairs (Q11): no prediction, hold, linear
extrapolation, three damped extrapolations, half hold, and the least-squares second-order
predictor of the whole signal.

RomFS files (read by ``game/demo.c``): a 16-byte header — magic "NXSN", sample format (2 PCM16,
6 DSP-ADPCM: switchbrew's PCM format numbers), sample rate, sample count — then for ADPCM 16 s16
coefficients, then the data.
"""

from __future__ import annotations

import struct

import numpy as np

SOUND_MAGIC = 0x4E53584E  # "NXSN"
FMT_PCM16, FMT_ADPCM = 2, 6
MUSIC_RATE, MUSIC_SECONDS = 24000, 2.0
NOTES_HZ = (220.0, 261.63, 329.63, 440.0, 329.63, 261.63, 220.0, 164.81)  # A3 C4 E4 A4 E4 C4 A3 E3
MUSIC_AMP = 9000.0
PICKUP_RATE, PICKUP_SECONDS = 48000, 0.15
PICKUP_AMP = 12000.0
FIXED_PAIRS = ((0, 0), (2048, 0), (4096, -2048), (3840, -1792), (3584, -1536), (1024, 0), (3072, -1024))


def music() -> np.ndarray:
    """The loop as int16 at MUSIC_RATE: eight notes of 0.25 s, each faded in and out over 10 ms
    so the loop point and the note changes do not click."""
    n = int(MUSIC_RATE * MUSIC_SECONDS) // len(NOTES_HZ)
    t = np.arange(n) / MUSIC_RATE
    env = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.01)
    notes = [env * (np.sin(2 * np.pi * f * t) + 0.25 * np.sin(4 * np.pi * f * t)) for f in NOTES_HZ]
    return np.rint(np.concatenate(notes) * MUSIC_AMP / 1.25).astype(np.int16)


def pickup() -> np.ndarray:
    """The pickup chirp as int16 at PICKUP_RATE: 880 Hz rising to 1760 Hz, decaying."""
    t = np.arange(int(PICKUP_RATE * PICKUP_SECONDS)) / PICKUP_RATE
    f0, f1 = 880.0, 1760.0
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * PICKUP_SECONDS))
    env = np.exp(-t / 0.05) * np.minimum(1.0, t / 0.002)
    return np.rint(np.sin(phase) * env * PICKUP_AMP).astype(np.int16)


def coefficients(x: np.ndarray) -> np.ndarray:
    """8 coefficient pairs (16 s16, Q11): the fixed ones and the signal's least-squares pair."""
    y = x.astype(np.float64)
    a = np.stack([y[1:-1], y[:-2]], 1)
    sol, *_ = np.linalg.lstsq(a, y[2:], rcond=None)
    ls = tuple(int(np.clip(round(c * 2048), -32768, 32767)) for c in sol)
    return np.array([c for pair in (*FIXED_PAIRS, ls) for c in pair], np.int16)


def adpcm_encode(x: np.ndarray, coefs: np.ndarray) -> bytes:
    """DSP-ADPCM bytes of int16 samples ``x`` (a partial last frame is padded with silence)."""
    pairs = coefs.astype(np.int64).reshape(8, 2)
    c1 = np.repeat(pairs[:, 0], 13)  # candidates: 8 pairs x 13 scale exponents
    c2 = np.repeat(pairs[:, 1], 13)
    exps = np.tile(np.arange(13), 8)
    scale = (1 << exps).astype(np.int64)
    frames = -(-len(x) // 14)
    src = np.zeros(frames * 14, np.int64)
    src[: len(x)] = x
    out = bytearray()
    h1 = h2 = 0
    for f in range(frames):
        target = src[f * 14 : (f + 1) * 14]
        a1 = np.full(c1.size, h1, np.int64)
        a2 = np.full(c1.size, h2, np.int64)
        err = np.zeros(c1.size, np.float64)
        nib = np.zeros((c1.size, 14), np.int64)
        for i in range(14):
            pred = c1 * a1 + c2 * a2 + 1024
            n = np.clip(np.rint((target[i] * 2048 - pred) / (scale * 2048.0)), -8, 7).astype(np.int64)
            s = np.clip((n * scale * 2048 + pred) >> 11, -32768, 32767)
            err += (s - target[i]) ** 2
            nib[:, i] = n
            a2, a1 = a1, s
        k = int(np.argmin(err))
        out.append((k // 13) << 4 | int(exps[k]))
        q = nib[k] & 0xF
        out += bytes((q[0::2] << 4 | q[1::2]).astype(np.uint8))
        h1, h2 = int(a1[k]), int(a2[k])
    return bytes(out)


def sound_file(fmt: int, rate: int, samples: np.ndarray, coefs: np.ndarray | None = None) -> bytes:
    head = struct.pack("<4I", SOUND_MAGIC, fmt, rate, len(samples))
    if fmt == FMT_ADPCM:
        assert coefs is not None
        return head + coefs.astype("<i2").tobytes() + adpcm_encode(samples, coefs)
    return head + samples.astype("<i2").tobytes()


def romfs_files() -> dict[str, bytes]:
    m = music()
    return {
        "/sound/music.adpcm": sound_file(FMT_ADPCM, MUSIC_RATE, m, coefficients(m)),
        "/sound/pickup.pcm": sound_file(FMT_PCM16, PICKUP_RATE, pickup()),
    }
