"""The renderer end to end (update request in, PCM16 out) against tests/audio/reference.py's
numpy model: PCM16 and DSP-ADPCM voices, SRC with pitch, volume and mix-volume ramps across a
frame, submix routing, the delay effect, circular-buffer sinks, wave buffer bookkeeping."""

from __future__ import annotations

import struct

import numpy as np

from cpu_host.horizon.audio import client as C
from cpu_host.horizon.audio import layout as L
from tests.audio import reference as ref
from tests.audio.helpers import Rig


def _tone(freq: float, rate: int, samples: int, amp: float, channels: int = 1) -> np.ndarray:
    t = np.arange(samples) / rate
    return np.stack([np.sin(2 * np.pi * freq * (c + 1) * t) * amp for c in range(channels)]).round().astype(np.int16)


def test_mixing_and_ramps_match_numpy() -> None:
    rig = Rig(voice_count=4, mix_buffer_count=2)  # 4 channel resources: the stereo voice takes 2
    specs = [  # rate, pitch, channels, freq
        (48000, 1.0, 1, 440.0),
        (32000, 1.0, 2, 300.0),
        (44100, 1.25, 1, 1000.0),
    ]
    voices, model = {}, []
    vols = [(0.8, 0.3), (0.5, 0.5), (1.0, 0.25)]
    mixes = [([[1.0, 0.0]], [[0.2, 0.9]]), ([[0.5, 0.0], [0.0, 0.7]], [[0.5, 0.0], [0.0, 0.7]]), ([[0.3, 0.3]], [[0.6, 0.1]])]
    ch_id = 0
    for vid, (rate, pitch, chans, freq) in enumerate(specs):
        src = _tone(freq, rate, rate, 6000, chans)
        addr, size = rig.put(np.ascontiguousarray(src.T).tobytes())
        ids = list(range(ch_id, ch_id + chans))
        ch_id += chans
        voices[vid] = C.Voice(
            vid,
            channel_ids=ids,
            sample_rate=rate,
            pitch=pitch,
            volume=vols[vid][0],
            is_new=True,
            waves=[C.Wave(addr, size, 0, rate)],
        )
        model.append(
            {
                "src": src.astype(np.float64),
                "ratio": rate * pitch / 48000,
                "volume": [vols[vid][0]] * 4 + [vols[vid][1]] * 4,
                "mix": [mixes[vid][0]] * 4 + [mixes[vid][1]] * 4,
            }
        )

    def channels(which: int) -> dict[int, list[float]]:
        out, cid = {}, 0
        for vid, (_, _, chans, _) in enumerate(specs):
            for c in range(chans):
                out[cid] = mixes[vid][which][c]
                cid += 1
        return out

    u = C.Update(rig.p, voices=voices, channels=channels(0), mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])])
    assert rig.update(u)[0] == 0
    a = rig.run(4)
    for vid, v in voices.items():
        v.is_new = False
        v.volume = vols[vid][1]
        for w in v.waves:
            w.sent_to_server = True
    u.channels = channels(1)
    assert rig.update(u)[0] == 0
    b = rig.run(4)
    got = np.concatenate([a, b]).astype(np.float64)
    want = np.clip(np.rint(ref.render(model, 8)), -32768, 32767)
    assert got.shape == want.shape == (8 * 240, 2)
    assert np.max(np.abs(got - want)) <= 1.0, np.max(np.abs(got - want))
    assert np.abs(want).max() > 3000  # the comparison is about real signal, not silence


def test_adpcm_voice_plays_the_decoded_stream() -> None:
    rig = Rig(voice_count=1)
    rng = np.random.default_rng(5)
    coefs = [int(c) for c in rng.integers(-3000, 3000, 16)]
    frames = 100
    data = bytearray(rng.integers(0, 256, frames * 8, dtype=np.uint8).tobytes())
    for f in range(frames):
        data[f * 8] = int(rng.integers(0, 8)) << 4 | int(rng.integers(0, 8))
    addr, size = rig.put(bytes(data))
    caddr, _ = rig.put(struct.pack("<16h", *coefs))
    samples = frames * 14
    v = C.Voice(0, sample_format=L.FMT_ADPCM, state_address=caddr, is_new=True, waves=[C.Wave(addr, size, 0, samples)])
    assert (
        rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 1.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]))[
            0
        ]
        == 0
    )
    out = rig.run(6)
    want = ref.adpcm_decode(bytes(data), samples, coefs)
    want = np.concatenate(([0.0], want, np.zeros(out.shape[0])))[: out.shape[0]]  # silence once it ran out
    assert np.array_equal(out[:, 0], want.astype(np.int16)) and np.array_equal(out[:, 1], out[:, 0])
    # the voice ran out (1400 samples < 1440): it reports its one wave buffer consumed
    res, resp = rig.update(
        C.Update(
            rig.p,
            voices={0: C.Voice(0, sample_format=L.FMT_ADPCM, state_address=caddr)},
            channels={0: [1.0, 1.0]},
            mixes=[C.Mix(0, 2)],
            sinks=[C.device_sink([0, 1])],
        )
    )
    played, consumed, _ = struct.unpack_from("<QII", resp, L.HEADER_SIZE + rig.p.mempool_count * L.MEMPOOL_OUT_SIZE)
    assert (res, played, consumed) == (0, samples, 1)


def test_submix_routes_into_final_mix() -> None:
    rig = Rig(voice_count=1, mix_buffer_count=4, submix_count=1)
    src = _tone(500, 48000, 4800, 8000)
    addr, size = rig.put(src.tobytes())
    route = np.zeros((24, 24), np.float32)
    route[0, 0], route[0, 1], route[1, 1] = 1.0, 0.5, 1.0
    mixes = [C.Mix(0, 2), C.Mix(1, 2, volume=0.5, dest_mix_id=0, volumes=route)]
    v = C.Voice(0, mix_id=1, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
    assert (
        rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 0.0]}, mixes=mixes, sinks=[C.device_sink([0, 1])]))[0] == 0
    )
    out = rig.run(3).astype(np.float64)
    x = np.concatenate(([0.0], src[0].astype(np.float64)))[:720]
    assert np.max(np.abs(out[:, 0] - np.rint(x * 0.5))) <= 1
    assert np.max(np.abs(out[:, 1] - np.rint(x * 0.25))) <= 1


def test_delay_effect_matches_feedback_comb() -> None:
    rig = Rig(voice_count=1, effect_count=1)
    src = np.zeros(4800, np.int16)
    src[0], src[100] = 20000, -12000
    addr, size = rig.put(src.tobytes())
    eff = C.effect(L.EFFECT_DELAY, 0, C.delay_params([0], 2, 0.9, 0.5, 0.8, 0.3), is_new=True)
    v = C.Voice(0, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
    pool = (addr & ~0xFFF, 0x10000, L.POOL_REQUEST_ATTACH)
    res, resp = rig.update(
        C.Update(
            rig.p,
            voices={0: v},
            channels={0: [1.0, 0.0]},
            mixes=[C.Mix(0, 2)],
            sinks=[C.device_sink([0, 1])],
            effects=[eff],
            pools=[pool],
        )
    )
    assert res == 0 and struct.unpack_from("<I", resp, L.HEADER_SIZE)[0] == L.POOL_ATTACHED
    out = rig.run(4).astype(np.float64)
    x = np.concatenate(([0.0], src.astype(np.float64)))[:960]
    want = ref.feedback_delay(x, 2 * 48, 0.9, 0.5, 0.8, 0.3)
    assert np.max(np.abs(out[:, 0] - np.rint(want))) <= 1
    assert np.count_nonzero(out[:, 0]) > 6  # echoes beyond the two impulses
    assert not out[:, 1].any()  # the effect touched only its own buffer


def test_reverb_tail_decays_and_dry_path_is_exact() -> None:
    rig = Rig(voice_count=1, effect_count=1)
    src = np.zeros(48000, np.int16)
    src[0] = 30000
    addr, size = rig.put(src.tobytes())
    eff = C.effect(L.EFFECT_REVERB, 0, C.reverb_params([0], decay_s=0.5, dry=1.0), is_new=True)
    v = C.Voice(0, is_new=True, waves=[C.Wave(addr, size, 0, 48000)])
    rig.update(
        C.Update(
            rig.p, voices={0: v}, channels={0: [1.0, 0.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])], effects=[eff]
        )
    )
    out = rig.run(200)[:, 0].astype(np.float64)
    assert out[1] == 30000  # dry gain 1
    early, late = np.sqrt(np.mean(out[2:12000] ** 2)), np.sqrt(np.mean(out[24000:36000] ** 2))
    assert early > 20 and late < early / 10  # a tail, decaying (T60 = 0.5 s)


def test_circular_buffer_sink_matches_device_sink() -> None:
    rig = Rig(voice_count=1, sink_count=2)
    src = _tone(700, 48000, 4800, 9000)
    addr, size = rig.put(src.tobytes())
    ring, ring_size = rig.put(bytes(240 * 2 * 2 * 4))
    v = C.Voice(0, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
    rig.update(
        C.Update(
            rig.p,
            voices={0: v},
            channels={0: [1.0, 0.5]},
            mixes=[C.Mix(0, 2)],
            sinks=[C.device_sink([0, 1]), C.circular_sink(ring, ring_size, [0, 1], 240)],
        )
    )
    dev = rig.run(4)
    assert rig.mem.read(ring, ring_size) == dev.tobytes()


def test_looping_wave_buffer_repeats() -> None:
    rig = Rig(voice_count=1)
    src = (np.arange(100) * 100).astype(np.int16)
    addr, size = rig.put(src.tobytes())
    v = C.Voice(0, is_new=True, waves=[C.Wave(addr, size, 10, 60, loop=True)])
    rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 0.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]))
    out = rig.run(1)[:, 0]
    want = np.concatenate(([0], np.tile(src[10:60], 5)))[:240]
    assert np.array_equal(out, want)


def test_voice_biquads_match_lfilter() -> None:
    from scipy.signal import lfilter

    rig = Rig(voice_count=1)
    src = (np.random.default_rng(9).standard_normal(4800) * 4000).astype(np.int16)
    addr, size = rig.put(src.tobytes())
    bq1 = (True, (2000, 4000, 2000), (-20000, 8000))  # Q14: a low-pass
    bq2 = (True, (16000, -15000, 3000), (-5000, 2000))
    v = C.Voice(0, is_new=True, biquads=[bq1, bq2], volume=0.7, waves=[C.Wave(addr, size, 0, 4800)])
    rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 0.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]))
    out = rig.run(10)[:, 0].astype(np.float64)
    x = np.concatenate(([0.0], src.astype(np.float64)))[:2400]
    for _, num, den in (bq1, bq2):
        x = lfilter(np.array(num) / 16384, np.concatenate(([1.0], np.array(den) / 16384)), x)
    want = np.clip(np.rint(x * 0.7), -32768, 32767)
    assert np.max(np.abs(out - want)) <= 1.0 and np.abs(want).max() > 1000


def test_adpcm_loop_restarts_from_context() -> None:
    """A looping ADPCM buffer: each pass decodes from the loop start with the history in its
    context (here the stream's own history at sample 28, as a client would store it)."""
    rig = Rig(voice_count=1)
    rng = np.random.default_rng(11)
    coefs = [int(c) for c in rng.integers(-2000, 2000, 16)]
    data = bytearray(rng.integers(0, 256, 10 * 8, dtype=np.uint8).tobytes())
    for f in range(10):
        data[f * 8] = int(rng.integers(0, 8)) << 4 | int(rng.integers(0, 6))
    full = ref.adpcm_decode(bytes(data), 140, coefs)
    addr, size = rig.put(bytes(data))
    caddr, _ = rig.put(struct.pack("<16h", *coefs))
    ctx, _ = rig.put(struct.pack("<Hhh", data[32], int(full[27]), int(full[26])))
    v = C.Voice(
        0,
        sample_format=L.FMT_ADPCM,
        state_address=caddr,
        is_new=True,
        waves=[C.Wave(addr, size, 28, 140, loop=True, context_address=ctx, context_size=6)],
    )
    rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 0.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]))
    out = rig.run(2)[:, 0]
    want = np.concatenate(([0.0], np.tile(full[28:140], 5)))[:480]
    assert np.array_equal(out, want.astype(np.int16))


def test_work_buffer_size_is_page_aligned_and_grows() -> None:
    from cpu_host.horizon.audio.request import RendererParameter, work_buffer_size

    small, big = work_buffer_size(RendererParameter()), work_buffer_size(RendererParameter(voice_count=96))
    assert small % 0x1000 == 0 and big % 0x1000 == 0 and big > small
