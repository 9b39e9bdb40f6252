"""Malformed renderer input is answered with Horizon's audio result codes (module 153:
InvalidUpdateInfo 41, InvalidMixSorting 43, UnsupportedSampleRate 3, UnsupportedRevision 2 —
Ryujinx's ResultCode tables), never a host exception; a fuzz of the request parser."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from cpu_host.horizon.audio import client as C
from cpu_host.horizon.audio import layout as L
from cpu_host.horizon.audio.request import AudioError, RendererParameter, parse_parameter
from tests.audio.helpers import Rig


def _valid(rig: Rig) -> bytes:
    addr, size = rig.put(np.arange(480, dtype=np.int16).tobytes())
    v = C.Voice(0, is_new=True, waves=[C.Wave(addr, size, 0, 480)])
    return C.Update(
        rig.p,
        voices={0: v},
        channels={0: [1.0, 1.0]},
        mixes=[C.Mix(0, 2)],
        sinks=[C.device_sink([0, 1])],
        effects=[C.effect(L.EFFECT_DELAY, 0, C.delay_params([0], 5, 0.5, 0.5, 0.5, 0.5))],
    ).pack()


def test_result_codes_are_horizons() -> None:
    assert L.RESULT_INVALID_UPDATE_INFO == 0x5299  # 2153-0041
    assert L.RESULT_INVALID_MIX_SORTING == 0x5699  # 2153-0043
    assert L.RESULT_UNSUPPORTED_SAMPLE_RATE == 0x699


@pytest.mark.parametrize(
    "field,value,code",
    [
        ("sample_rate", 44100, L.RESULT_UNSUPPORTED_SAMPLE_RATE),
        ("revision", 0x12345678, L.RESULT_UNSUPPORTED_REVISION),
        ("sample_count", 256, L.RESULT_INVALID_UPDATE_INFO),
        ("voice_count", 1 << 30, L.RESULT_INVALID_UPDATE_INFO),
    ],
)
def test_bad_parameter_block(field: str, value: int, code: int) -> None:
    p = RendererParameter(**{field: value})
    with pytest.raises(AudioError) as e:
        parse_parameter(p.pack())
    assert e.value.result == code and field in str(e.value)


def _patch(data: bytes, off: int, fmt: str, *vals) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, off, *vals)
    return bytes(b)


def test_named_errors() -> None:
    rig = Rig(voice_count=2, effect_count=1)
    good = _valid(rig)
    assert rig.r.update(good)[0] == 0
    p = rig.p
    voices_at = L.HEADER_SIZE + L.BEHAVIOUR_IN_SIZE + p.mempool_count * L.MEMPOOL_IN_SIZE + p.voice_count * L.CHANNEL_IN_SIZE
    mixes_at = voices_at + p.voice_count * L.VOICE_IN_SIZE + p.effect_count * L.EFFECT_IN_SIZE
    cases = [
        (good[:0x20], L.RESULT_INVALID_UPDATE_INFO, "shorter than its"),
        (_patch(good, 0, "<I", 0x41414141), L.RESULT_INVALID_UPDATE_INFO, "header.revision"),
        (_patch(good, 12, "<I", 5), L.RESULT_INVALID_UPDATE_INFO, "header.voices_size"),
        (good[:-4], L.RESULT_INVALID_UPDATE_INFO, "total_size"),
        (_patch(good, voices_at + 0x18, "<I", 7), L.RESULT_INVALID_UPDATE_INFO, "voices[0].channel_count"),
        (_patch(good, voices_at + 0x1C, "<f", float("nan")), L.RESULT_INVALID_UPDATE_INFO, "voices[0]: pitch"),
        (_patch(good, voices_at + 0x58, "<i", 9), L.RESULT_INVALID_UPDATE_INFO, "voices[0].mix_id"),
        (_patch(good, mixes_at + 8, "<I", 99), L.RESULT_INVALID_UPDATE_INFO, "mixes[0].buffer_count"),
    ]
    for data, code, words in cases:
        res, resp = rig.r.update(data)
        assert (res, resp) == (code, b""), words
    # a submix that routes to itself: the mix graph cannot be sorted
    rig2 = Rig(voice_count=1, submix_count=1, mix_buffer_count=4)
    u = C.Update(rig2.p, mixes=[C.Mix(0, 2), C.Mix(1, 2, dest_mix_id=1)], sinks=[C.device_sink([0, 1])])
    assert rig2.r.update(u.pack())[0] == L.RESULT_INVALID_MIX_SORTING
    # a refused request changes nothing: the good one still renders the same
    rig.r.update(good)
    rig.run(1)


def test_request_without_effect_records_is_accepted() -> None:
    """libnx's audrv sends effects_sz 0 whatever its effect count (audren.h: 'todo: effects')."""
    rig = Rig(voice_count=1, effect_count=2)
    good = bytearray(C.Update(rig.p, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]).pack())
    p = rig.p
    eff_at = (
        L.HEADER_SIZE
        + L.BEHAVIOUR_IN_SIZE
        + p.mempool_count * L.MEMPOOL_IN_SIZE
        + p.voice_count * (L.CHANNEL_IN_SIZE + L.VOICE_IN_SIZE)
    )
    del good[eff_at : eff_at + 2 * L.EFFECT_IN_SIZE]
    struct.pack_into("<I", good, 0x14, 0)
    struct.pack_into("<I", good, 0x3C, len(good))
    res, resp = rig.r.update(bytes(good))
    assert res == 0 and struct.unpack_from("<I", resp, 0x14)[0] == 0  # no effect statuses back
    struct.pack_into("<I", good, 0x14, L.EFFECT_IN_SIZE)  # one of two: refused
    assert rig.r.update(bytes(good))[0] == L.RESULT_INVALID_UPDATE_INFO


def test_unmapped_wave_buffer_is_silence_not_a_crash() -> None:
    rig = Rig(voice_count=1)
    v = C.Voice(0, is_new=True, waves=[C.Wave(0xDEAD0000, 4096, 0, 2048)])
    res, _ = rig.update(
        C.Update(rig.p, voices={0: v}, channels={0: [1.0, 1.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])])
    )
    assert res == 0
    assert not rig.run(2).any() and rig.r.voices[0].errors == 1


def _fuzz(count: int, seed: int) -> dict[int, int]:
    rng = random.Random(seed)
    rig = Rig(voice_count=2, effect_count=1, submix_count=1, mix_buffer_count=4, sink_count=2)
    good = _valid(rig)
    codes: dict[int, int] = {}
    allowed = {0, L.RESULT_INVALID_UPDATE_INFO, L.RESULT_INVALID_MIX_SORTING}
    for i in range(count):
        b = bytearray(good)
        kind = rng.randrange(5)
        if kind == 0:  # random bytes flipped anywhere
            for _ in range(rng.randrange(1, 16)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 1:  # truncated or extended
            b = b[: rng.randrange(len(b))] if rng.random() < 0.7 else b + bytes(rng.randrange(1, 512))
        elif kind == 2:  # a header word replaced
            struct.pack_into("<I", b, 4 * rng.randrange(16), rng.choice([0, 1, 0xFFFFFFFF, rng.getrandbits(32)]))
        elif kind == 3:  # a 32-bit field inside a record set to an edge value
            off = rng.randrange(L.HEADER_SIZE, len(b) - 4) & ~3
            struct.pack_into("<I", b, off, rng.choice([0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 24, 25, 6, 7]))
        else:  # pure noise of a plausible length
            b = bytearray(rng.randbytes(rng.choice([0x40, len(good), rng.randrange(4096)])))
        res, resp = rig.r.update(bytes(b))
        assert res in allowed, (i, hex(res))
        assert (res == 0) == bool(resp)
        if res == 0 and i % 7 == 0:
            rig.r.render_frame()  # whatever was accepted renders
        codes[res] = codes.get(res, 0) + 1
    return codes


def test_fuzz_request_parser() -> None:
    codes = _fuzz(3000, 1)
    # both outcomes occur: the mutations are not all caught by one check, nor all accepted
    assert codes.get(L.RESULT_INVALID_UPDATE_INFO, 0) > 300 and codes.get(0, 0) > 100, codes


@pytest.mark.heavy
def test_fuzz_request_parser_long() -> None:
    _fuzz(50000, 2)
