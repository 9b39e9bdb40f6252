"""What the renderer's revision changes in the buffers (Ryujinx BehaviourContext / StateUpdater /
UpdateDataHeader): REV5+ answers with the renderer info (elapsed frames; its size in the response
header at 0x28), REV7+ mix sections carry a 0x20-byte header and only the mixes the client
changed (the others keep their last records), REV9+ effect results are 0x90 bytes."""

from __future__ import annotations

import struct

import numpy as np

from cpu_host.horizon.audio import client as C
from cpu_host.horizon.audio import layout as L
from tests.audio.helpers import Rig

EFFECTS_SIZE_AT = 4 + 4 * L.SECTIONS.index("effects")


def _submix_rig(rev: int):
    rig = Rig(voice_count=1, submix_count=1, mix_buffer_count=4, revision=L.revision_magic(rev))
    tone = (np.sin(np.arange(4800) * 0.07) * 8000).astype(np.int16)
    addr, size = rig.put(tone.tobytes())
    eye = np.zeros((24, 24), np.float32)
    eye[0, 0] = eye[1, 1] = 1.0
    v = C.Voice(0, mix_id=1, is_new=True, waves=[C.Wave(addr, size, 0, 4800, loop=True)])
    return rig, v, eye


def test_rev7_sends_only_changed_mixes() -> None:
    """A REV7 client that resends only the submix after changing its volume renders what a REV6
    client sending every mix renders."""
    outs = {}
    for rev in (6, 7):
        rig, v, eye = _submix_rig(rev)
        final, sub = C.Mix(0, 2), C.Mix(1, 2, dest_mix_id=0, volumes=eye)
        u = C.Update(rig.p, voices={0: v}, channels={0: [1.0, 1.0]}, mixes=[final, sub], sinks=[C.device_sink([0, 1])])
        assert rig.update(u)[0] == 0
        first = rig.run(4)
        v.is_new, v.waves[0].sent_to_server = False, True
        quiet = C.Mix(1, 2, volume=0.25, dest_mix_id=0, volumes=eye)
        u.mixes = [quiet] if rev == 7 else [final, quiet]
        assert rig.update(u)[0] == 0
        outs[rev] = np.concatenate([first, rig.run(8)])
    assert np.array_equal(outs[6], outs[7])
    late = outs[7][-240:].astype(np.float64)
    assert 0.2 < np.abs(late).max() / np.abs(outs[7][: 240 * 4]).max() < 0.3  # the new volume took


def test_rev7_mix_header_checked() -> None:
    rig, v, eye = _submix_rig(7)
    u = C.Update(
        rig.p,
        voices={0: v},
        channels={0: [1.0, 1.0]},
        mixes=[C.Mix(0, 2), C.Mix(1, 2, dest_mix_id=0)],
        sinks=[C.device_sink([0, 1])],
    )
    good = u.pack()
    mixes_at = L.HEADER_SIZE + sum(struct.unpack_from("<5I", good, 4)[i] for i in (0, 1, 2, 3, 4))
    too_many = bytearray(good)
    struct.pack_into("<I", too_many, mixes_at + 4, 3)  # 3 mixes sent, the renderer has 2
    res, resp = rig.r.update(bytes(too_many))
    assert (res, resp) == (L.RESULT_INVALID_UPDATE_INFO, b"")
    fewer = bytearray(good)
    struct.pack_into("<I", fewer, mixes_at + 4, 1)  # says 1, carries 2: section size wrong
    assert rig.r.update(bytes(fewer))[0] == L.RESULT_INVALID_UPDATE_INFO
    assert rig.r.update(good)[0] == 0


def test_rev5_answers_the_elapsed_frames() -> None:
    for rev, info in ((4, 0), (5, 0x10)):
        rig = Rig(voice_count=1, revision=L.revision_magic(rev))
        u = C.Update(rig.p, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])])
        assert rig.update(u)[0] == 0
        rig.run(3)
        res, resp = rig.update(u)
        assert res == 0 and struct.unpack_from("<I", resp, L.HEADER_RENDER_INFO)[0] == info
        assert struct.unpack_from("<I", resp, 0x3C)[0] == len(resp)
        if info:
            assert struct.unpack_from("<Q", resp, len(resp) - 0x10)[0] == 3


def test_rev9_effect_results_are_larger() -> None:
    for rev, size in ((8, 0x10), (9, 0x90)):
        rig = Rig(voice_count=1, effect_count=2, revision=L.revision_magic(rev))
        u = C.Update(
            rig.p,
            mixes=[C.Mix(0, 2)],
            sinks=[C.device_sink([0, 1])],
            effects=[C.effect(L.EFFECT_DELAY, 0, C.delay_params([0], 5, 0.5, 0.5, 0.5, 0.5))],
        )
        res, resp = rig.update(u)
        assert res == 0 and struct.unpack_from("<I", resp, EFFECTS_SIZE_AT)[0] == 2 * size


def test_rev8_loop_count_and_loop_points() -> None:
    """REV8 wave buffers (Ryujinx's WaveBuffer version 2): a loop count of 2 plays the buffer three
    times, passes after the first between the loop points; before REV8 the count is not read and
    the buffer loops for ever."""
    src = (np.arange(100) * 100).astype(np.int16)
    outs = {}
    for rev in (6, 8):
        rig = Rig(voice_count=1, revision=L.revision_magic(rev))
        addr, size = rig.put(src.tobytes())
        w = C.Wave(addr, size, 10, 60, loop=True, loop_count=2, loop_first=20, loop_last=30)
        v = C.Voice(0, is_new=True, waves=[w])
        rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 0.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]))
        outs[rev] = rig.run(1)[:, 0]
    # one sample of lag at a voice's start (renderer.py), then the passes
    want8 = np.concatenate(([0], src[10:60], src[20:30], src[20:30]))
    assert np.array_equal(outs[8][: want8.size], want8) and not outs[8][want8.size :].any()
    want6 = np.concatenate(([0], np.tile(src[10:60], 5)))[:240]
    assert np.array_equal(outs[6], want6)


def test_splitter_section_is_skipped_not_refused() -> None:
    """A request carrying a splitter section (its size in the header at 0x24, the section between
    effects and mixes) is accepted: the mixes after it are read where they are; splitters are not
    routed (a voice sent only through one is silent), a REV1 request with one is refused."""
    rig = Rig(voice_count=1, splitter_count=1)
    tone = (np.ones(4800) * 1000).astype(np.int16)
    addr, size = rig.put(tone.tobytes())
    v = C.Voice(0, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
    good = C.Update(rig.p, voices={0: v}, channels={0: [1.0, 1.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]).pack()
    mixes_at = L.HEADER_SIZE + sum(struct.unpack_from("<5I", good, 4))
    section = struct.pack("<4sII20x", b"SNDH", 0, 0)  # a header with no infos nor destinations
    data = bytearray(good[:mixes_at] + section + good[mixes_at:])
    struct.pack_into("<I", data, L.HEADER_SPLITTER, len(section))
    struct.pack_into("<I", data, 0x3C, len(data))
    assert rig.r.update(bytes(data))[0] == 0
    assert rig.run(2)[240:].min() == 1000  # the mix after the section was read right
    old = Rig(voice_count=1, revision=L.revision_magic(1))
    u = C.Update(old.p, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]).pack()
    at = L.HEADER_SIZE + sum(struct.unpack_from("<5I", u, 4))
    bad = bytearray(u[:at] + section + u[at:])
    struct.pack_into("<I", bad, L.HEADER_SPLITTER, len(section))
    struct.pack_into("<I", bad, 0x3C, len(bad))
    assert old.r.update(bytes(bad))[0] == L.RESULT_INVALID_UPDATE_INFO


def test_voice_through_a_splitter() -> None:
    """A voice sent through a splitter (mix id unused) reaches each destination of its channel with
    the destination's volumes: a mono voice to two destinations (left at 1.0, right at 0.5) renders
    what the same voice sent straight to the final mix with volumes [1.0, 0.5] renders; a splitter
    keeps its destinations in later updates that do not send it."""
    src = (np.sin(np.arange(4800) * 0.05) * 8000).astype(np.int16)
    outs = []
    for split in (False, True):
        rig = Rig(voice_count=1, splitter_count=1, splitter_destination_count=2)
        addr, size = rig.put(src.tobytes())
        if split:
            v = C.Voice(0, mix_id=L.UNUSED_MIX_ID, splitter_id=0, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
            sec = C.splitter_section([(0, 48000, [0, 1])], [(0, 0, [1.0, 0.0], True), (1, 0, [0.0, 0.5], True)])
            u = C.Update(
                rig.p, voices={0: v}, channels={0: [0.0, 0.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])], splitters=sec
            )
        else:
            v = C.Voice(0, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
            u = C.Update(rig.p, voices={0: v}, channels={0: [1.0, 0.5]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])])
        assert rig.update(u)[0] == 0
        first = rig.run(3)
        v.is_new, v.waves[0].sent_to_server, u.splitters = False, True, b""
        assert rig.update(u)[0] == 0
        outs.append(np.concatenate([first, rig.run(3)]))
    assert np.abs(outs[0]).max() > 7000 and np.array_equal(outs[0], outs[1])
    bad = C.splitter_section([(0, 48000, [0, 1, 0])], [])  # 3 destinations, the renderer has 2
    rig = Rig(voice_count=1, splitter_count=1, splitter_destination_count=2)
    u = C.Update(rig.p, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])], splitters=bad)
    assert rig.update(u)[0] == L.RESULT_INVALID_UPDATE_INFO


def test_rev5_decoding_flags() -> None:
    """REV5 voice decoding flags (Ryujinx DecodingBehaviour): 2 plays the samples as they are (no
    pitch, no sample-rate conversion), 1 restarts the played-sample count at each loop; a REV4
    renderer does not read them."""
    src = (np.arange(100) * 100).astype(np.int16)
    for rev in (4, 5):
        rig = Rig(voice_count=1, revision=L.revision_magic(rev))
        addr, size = rig.put(src.tobytes())
        v = C.Voice(0, sample_rate=24000, is_new=True, decoding_flags=3, waves=[C.Wave(addr, size, 0, 100, loop=True)])
        rig.update(C.Update(rig.p, voices={0: v}, channels={0: [1.0, 0.0]}, mixes=[C.Mix(0, 2)], sinks=[C.device_sink([0, 1])]))
        out = rig.run(1)[:, 0]
        played = rig.r.voices[0].played
        as_they_are = np.concatenate(([0], np.tile(src, 3)))[:240]
        if rev == 5:
            assert np.array_equal(out, as_they_are)  # no SRC though the voice is at 24 kHz
            assert 0 < played <= 100  # counted from the last loop start
        else:  # the flags not read: 24 -> 48 kHz
            assert not np.array_equal(out, as_they_are) and played > 100


def test_mix_through_a_splitter() -> None:
    """A submix sent through a splitter (destination mix unused): destination k takes the submix's
    buffer k % 2 into the final mix with the destination's volumes x the mix volume; the same as
    the submix routed straight with that volume matrix.  A splitter destination whose mix is not in
    use routes nothing (the command generator checks only that the id is in range)."""
    src = (np.sin(np.arange(4800) * 0.05) * 8000).astype(np.int16)
    outs = []
    for split in (False, True):
        rig = Rig(voice_count=1, submix_count=1, mix_buffer_count=4, splitter_count=1, splitter_destination_count=2)
        addr, size = rig.put(src.tobytes())
        v = C.Voice(0, mix_id=1, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
        if split:
            sub = C.Mix(1, 2, volume=0.8, dest_splitter_id=0)
            sec = C.splitter_section([(0, 48000, [0, 1])], [(0, 0, [1.0, 0.0], True), (1, 0, [0.0, 0.5], True)])
        else:
            vols = np.zeros((24, 24), np.float32)
            vols[0, 0], vols[1, 1] = 1.0, 0.5
            sub, sec = C.Mix(1, 2, volume=0.8, dest_mix_id=0, volumes=vols), b""
        u = C.Update(
            rig.p, voices={0: v}, channels={0: [1.0, 1.0]}, mixes=[C.Mix(0, 2), sub], sinks=[C.device_sink([0, 1])], splitters=sec
        )
        assert rig.update(u)[0] == 0
        outs.append(rig.run(4))
    assert np.abs(outs[0]).max() > 5000 and np.array_equal(outs[0], outs[1])
    rig = Rig(voice_count=1, submix_count=2, mix_buffer_count=6, splitter_count=1, splitter_destination_count=1)
    addr, size = rig.put(src.tobytes())
    v = C.Voice(0, mix_id=1, is_new=True, waves=[C.Wave(addr, size, 0, 4800)])
    sec = C.splitter_section([(0, 48000, [0])], [(0, 2, [1.0], True)])  # to mix 2, never used
    u = C.Update(
        rig.p,
        voices={0: v},
        channels={0: [1.0, 1.0]},
        mixes=[C.Mix(0, 2), C.Mix(1, 2, dest_splitter_id=0)],
        sinks=[C.device_sink([0, 1])],
        splitters=sec,
    )
    assert rig.update(u)[0] == 0 and not rig.run(2).any()
