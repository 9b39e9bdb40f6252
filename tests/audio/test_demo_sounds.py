"""The demo's sounds (examples/demo/sound.py): our DSP-ADPCM encoder's output decodes, by the
format's published algorithm (tests/audio/reference.py, written apart from the encoder and from
dsp.c), back to the synthesised music within 40 dB; the RomFS files carry the documented headers."""

from __future__ import annotations

import struct

import numpy as np

from examples.demo import sound
from tests.audio.reference import adpcm_decode


def test_adpcm_encoder_round_trip() -> None:
    x = sound.music()[:7000]  # two notes and the change between them
    coefs = sound.coefficients(x)
    data = sound.adpcm_encode(x, coefs)
    assert len(data) == 8 * -(-x.size // 14)  # 8 bytes a 14-sample frame
    y = adpcm_decode(data, x.size, [int(c) for c in coefs])
    snr = 10 * np.log10((x.astype(np.float64) ** 2).mean() / ((y - x) ** 2).mean())
    assert snr > 40, snr


def test_romfs_sound_files() -> None:
    files = sound.romfs_files()
    magic, fmt, rate, n = struct.unpack_from("<4I", files["/sound/music.adpcm"])
    assert (magic, fmt, rate, n) == (
        sound.SOUND_MAGIC,
        sound.FMT_ADPCM,
        sound.MUSIC_RATE,
        int(sound.MUSIC_RATE * sound.MUSIC_SECONDS),
    )
    assert len(files["/sound/music.adpcm"]) == 16 + 32 + 8 * -(-n // 14)
    magic, fmt, rate, n = struct.unpack_from("<4I", files["/sound/pickup.pcm"])
    assert (fmt, rate) == (sound.FMT_PCM16, sound.PICKUP_RATE)
    pcm = np.frombuffer(files["/sound/pickup.pcm"], "<i2", offset=16)
    assert pcm.size == n and np.array_equal(pcm, sound.pickup())
