"""Parse the audio renderer's parameter block and update requests into records.

Contract: ``parse_parameter(bytes)`` -> ``RendererParameter``; ``parse_update(bytes, param)`` ->
``UpdateRequest``.  Anything malformed raises ``AudioError`` carrying Horizon's result code
(``InvalidUpdateInfo`` for a bad header, section size or field; ``UnsupportedSampleRate``,
``UnsupportedRevision`` for the parameter block) and a message naming the section, record index,
field and byte offset.  Nothing else escapes: a fuzzed buffer never raises another exception.
Layouts and sources: ``layout.py``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from cpu_host.horizon.audio import layout as L
from nxrecomp.common.errors import NxError


class AudioError(NxError):
    """A request the renderer refuses; ``result`` is the Horizon result code to answer with."""

    def __init__(self, result: int, message: str, *, offset: int | None = None) -> None:
        super().__init__(f"audren: {message} (result {result:#x})", offset=offset)
        self.result = result


def _bad(msg: str, off: int | None = None) -> AudioError:
    return AudioError(L.RESULT_INVALID_UPDATE_INFO, msg, offset=off)


@dataclass(frozen=True)
class RendererParameter:
    sample_rate: int = 48000
    sample_count: int = 240
    mix_buffer_count: int = 2
    submix_count: int = 0
    voice_count: int = 4
    sink_count: int = 1
    effect_count: int = 0
    performance_frame_count: int = 0
    voice_drop_enabled: int = 0
    rendering_device: int = 0
    execution_mode: int = 0
    splitter_count: int = 0
    splitter_destination_count: int = 0
    external_context_size: int = 0
    revision: int = L.revision_magic(6)

    @property
    def mix_count(self) -> int:
        return self.submix_count + 1

    @property
    def mempool_count(self) -> int:  # audrenGetMemPoolCount: effects + 4 per voice
        return self.effect_count + 4 * self.voice_count

    def pack(self) -> bytes:
        return L.PARAMETER.pack(
            self.sample_rate,
            self.sample_count,
            self.mix_buffer_count,
            self.submix_count,
            self.voice_count,
            self.sink_count,
            self.effect_count,
            self.performance_frame_count,
            self.voice_drop_enabled,
            0,
            self.rendering_device,
            self.execution_mode,
            self.splitter_count,
            self.splitter_destination_count,
            self.external_context_size,
            self.revision,
        )


def work_buffer_size(p: RendererParameter) -> int:
    """What GetWorkBufferSize answers.  Ours, not Horizon's formula: the renderer's state lives
    in the host, so the guest's work buffer only has to exist; this over-estimates Horizon's
    per-object costs (mix buffers of samples, voice and effect state) and rounds to 0x1000."""
    size = (p.mix_buffer_count + 6) * p.sample_count * 4 * 2
    size += p.voice_count * 0x400 + p.effect_count * 0x800 + p.mix_count * 0x940 + p.sink_count * 0x200
    size += p.splitter_count * 0x100 + p.splitter_destination_count * 0x100 + 0x10000
    return (size + 0xFFF) & ~0xFFF


# Upper bounds we accept (a request beyond them is refused, not allocated).
LIMITS = {"voice_count": 1024, "sink_count": 16, "effect_count": 256, "submix_count": 256, "mix_buffer_count": 24 * 257}


def parse_parameter(data: bytes) -> RendererParameter:
    if len(data) < L.PARAMETER.size:
        raise AudioError(L.RESULT_INVALID_UPDATE_INFO, f"parameter block is {len(data)} bytes, want {L.PARAMETER.size:#x}")
    vals = dict(zip(L.PARAMETER_FIELDS, L.PARAMETER.unpack_from(data)))
    vals.pop("_unk21")
    p = RendererParameter(**vals)
    if L.revision_number(p.revision) is None:
        raise AudioError(L.RESULT_UNSUPPORTED_REVISION, f"parameter.revision {p.revision:#x} is not a REVn magic")
    if L.SAMPLE_RATES.get(p.sample_rate) is None:
        raise AudioError(L.RESULT_UNSUPPORTED_SAMPLE_RATE, f"parameter.sample_rate {p.sample_rate} (want 32000 or 48000)")
    if p.sample_count != L.SAMPLE_RATES[p.sample_rate]:
        raise AudioError(
            L.RESULT_INVALID_UPDATE_INFO,
            f"parameter.sample_count {p.sample_count}, want {L.SAMPLE_RATES[p.sample_rate]} at {p.sample_rate} Hz",
        )
    for k, hi in LIMITS.items():
        if not 0 <= getattr(p, k) <= hi:
            raise AudioError(L.RESULT_INVALID_UPDATE_INFO, f"parameter.{k} {getattr(p, k)} out of range 0..{hi}")
    if p.mix_buffer_count < 1 or p.sink_count < 1:
        raise AudioError(L.RESULT_INVALID_UPDATE_INFO, "parameter: need at least one mix buffer and one sink")
    return p


@dataclass
class MemPoolIn:
    address: int
    size: int
    state: int


@dataclass
class ChannelIn:
    id: int
    volumes: np.ndarray  # float32[24]: to the destination mix's buffers
    used: bool


@dataclass
class Biquad:
    enabled: bool
    num: tuple[int, int, int]  # Q14
    den: tuple[int, int]  # Q14, a0 = 1


@dataclass
class WaveBuffer:
    address: int
    size: int
    start: int
    end: int
    loop: bool
    end_of_stream: bool
    sent_to_server: bool
    loop_count: int
    context_address: int
    context_size: int
    loop_first: int = 0  # REV8+: where later passes start and end (0: the buffer's own)
    loop_last: int = 0


@dataclass
class VoiceIn:
    id: int
    node_id: int
    is_new: bool
    used: bool
    play_state: int
    sample_format: int
    sample_rate: int
    priority: int
    sorting_order: int
    channel_count: int
    pitch: float
    volume: float
    biquads: list[Biquad]
    wave_buffer_count: int
    wave_buffer_index: int
    state_address: int  # ADPCM coefficients
    state_size: int
    mix_id: int
    splitter_id: int
    wave_buffers: list[WaveBuffer]
    channel_ids: list[int]
    flush_count: int
    decoding_flags: int = 0  # REV5+: 1 played count restarts at each loop, 2 no pitch nor SRC


@dataclass
class EffectIn:
    type: int
    is_new: bool
    enabled: bool
    mix_id: int
    buffer_address: int
    buffer_size: int
    order: int
    specific: bytes


@dataclass
class MixIn:
    volume: float
    sample_rate: int
    buffer_count: int
    used: bool
    mix_id: int
    node_id: int
    volumes: np.ndarray  # float32[24][24]: [source buffer][destination buffer]
    dest_mix_id: int
    dest_splitter_id: int


@dataclass
class SinkIn:
    type: int
    used: bool
    node_id: int
    name: str = ""
    inputs: list[int] = field(default_factory=list)
    buffer_address: int = 0
    buffer_size: int = 0
    sample_count: int = 0
    last_read_offset: int = 0
    sample_format: int = 0


@dataclass
class UpdateRequest:
    revision: int
    behaviour_revision: int
    behaviour_flags: int
    memory_pools: list[MemPoolIn]
    channels: list[ChannelIn]
    voices: list[VoiceIn]
    effects: list[EffectIn]
    mixes: list[MixIn]
    sinks: list[SinkIn]
    performance_target: int
    splitters: dict[int, list[int]] = field(default_factory=dict)  # id -> destination ids, in order
    destinations: dict[int, "DestinationIn"] = field(default_factory=dict)


@dataclass
class DestinationIn:
    """A splitter destination (REV2..11 layout, 0x70 bytes): where a voice channel goes."""

    mix_id: int
    volumes: np.ndarray  # float32[24]: to the destination mix's buffers
    used: bool


SPLITTER_HEADER, SPLITTER_INFO, SPLITTER_DEST = 0x48444E53, 0x49444E53, 0x44444E53  # "SNDH" "SNDI" "SNDD"


def parse_splitters(d: bytes, off: int, size: int, p: RendererParameter) -> tuple[dict, dict]:
    """The splitter section (Ryujinx SplitterContext.Update / SplitterState.Update): a header
    (magic "SNDH", info count, destination count, 20 reserved bytes), then each info (magic "SNDI",
    id, sample rate, destination count, that many destination ids, 12 unused bytes), then each
    destination (magic "SNDD", id, 24 f32 volumes, mix id, used u8, 3 reserved).  A record with
    another magic ends its list, as on the console; ids out of range are skipped; the walk never
    leaves the section (a list that would is InvalidUpdateInfo)."""
    end = off + size
    infos: dict[int, list[int]] = {}
    dests: dict[int, DestinationIn] = {}
    if size == 0:
        return infos, dests

    def need(at: int, n: int, what: str) -> None:
        if at + n > end:
            raise _bad(f"splitter section: {what} at {at:#x} runs past the section's end {end:#x}", at)

    need(off, 0x20, "the header")
    magic, ninfo, ndest = struct.unpack_from("<III", d, off)
    if magic != SPLITTER_HEADER:
        raise _bad(f"splitter section: header magic {magic:#010x} is not SNDH", off)
    at = off + 0x20
    for _ in range(ninfo):
        need(at, 0x10, "an info record")
        magic, sid, _rate, count = struct.unpack_from("<IiIi", d, at)
        if magic != SPLITTER_INFO:
            break
        if not 0 <= count <= max(p.splitter_destination_count, 0):
            raise _bad(f"splitter {sid}: {count} destinations, the renderer has {p.splitter_destination_count}", at + 12)
        need(at, 0x10 + 4 * count + 0xC, "an info record's destination ids")
        ids = list(struct.unpack_from(f"<{count}i", d, at + 0x10))
        if 0 <= sid < p.splitter_count:
            infos[sid] = ids
        at += 0x10 + 4 * count + 0xC
    for _ in range(ndest):
        need(at, 0x70, "a destination record")
        magic, did = struct.unpack_from("<Ii", d, at)
        if magic != SPLITTER_DEST:
            break
        vols = np.frombuffer(d, np.float32, 24, at + 8).copy()
        mix_id, used = struct.unpack_from("<iB", d, at + 0x68)
        if 0 <= did < p.splitter_destination_count and np.isfinite(vols).all():
            dests[did] = DestinationIn(mix_id, vols, bool(used))
        at += 0x70
    return infos, dests


def expected_sizes(p: RendererParameter) -> dict[str, int]:
    """Section sizes a request for parameter block ``p`` carries (no splitters; before REV7, when every
    mix is sent)."""
    return {
        "behaviour": L.BEHAVIOUR_IN_SIZE,
        "memory_pools": p.mempool_count * L.MEMPOOL_IN_SIZE,
        "voices": p.voice_count * L.VOICE_IN_SIZE,
        "channels": p.voice_count * L.CHANNEL_IN_SIZE,
        "effects": p.effect_count * L.EFFECT_IN_SIZE,
        "mixes": p.mix_count * L.MIX_IN_SIZE,
        "sinks": p.sink_count * L.SINK_IN_SIZE,
        "performance": L.PERF_IN_SIZE,
    }


_WAVEBUF = struct.Struct("<QQIIBBBxiQQII")
_VOICE_HEAD = struct.Struct("<iiBBBBIIIIff")
_VOICE_MID = struct.Struct("<II4xQQiI")
_EFFECT_HEAD = struct.Struct("<BBBxiQQI4x")
_MIX_HEAD = struct.Struct("<fIIBBxxiIi8x")
_SINK_HEAD = struct.Struct("<BBxxi24x")


def _channel(d: bytes, o: int, p: RendererParameter, i: int) -> ChannelIn:
    cid = struct.unpack_from("<i", d, o)[0]
    vols = np.frombuffer(d, np.float32, 24, o + 4).copy()
    ch = ChannelIn(cid, vols, bool(d[o + 0x64]))
    if ch.used and (not 0 <= cid < p.voice_count or not np.isfinite(vols).all()):
        raise _bad(f"channels[{i}]: id {cid} out of range or volume not finite", o)
    return ch


def _voice(d: bytes, off: int, p: RendererParameter, i: int) -> VoiceIn:
    (vid, node, is_new, used, state, fmt, rate, prio, order, chans, pitch, vol) = _VOICE_HEAD.unpack_from(d, off)
    biquads = []
    for b in range(2):
        en, n0, n1, n2, d0, d1 = struct.unpack_from("<Bx3h2h", d, off + 0x24 + b * L.BIQUAD_SIZE)
        biquads.append(Biquad(bool(en), (n0, n1, n2), (d0, d1)))
    wb_count, wb_index, st_addr, st_size, mix_id, splitter = _VOICE_MID.unpack_from(d, off + 0x3C)
    wbs = [
        WaveBuffer(*(vals[:4]), *(bool(v) for v in vals[4:7]), *vals[7:12])
        for vals in (_WAVEBUF.unpack_from(d, off + 0x60 + w * L.WAVEBUF_SIZE) for w in range(4))
    ]
    ids = list(struct.unpack_from("<6i", d, off + 0x140))
    flush = d[off + 0x159]
    decoding = struct.unpack_from("<H", d, off + 0x15C)[0]  # REV5+ (Ryujinx VoiceInParameter)
    v = VoiceIn(
        vid,
        node,
        bool(is_new),
        bool(used),
        state,
        fmt,
        rate,
        prio,
        order,
        chans,
        pitch,
        vol,
        biquads,
        wb_count,
        wb_index,
        st_addr,
        st_size,
        mix_id,
        splitter,
        wbs,
        ids,
        flush,
        decoding,
    )
    if not v.used:
        return v
    where = f"voices[{i}]"
    if not 0 <= vid < p.voice_count:
        raise _bad(f"{where}.id {vid} out of range 0..{p.voice_count - 1}", off)
    if state not in (L.PLAY_STARTED, L.PLAY_STOPPED, L.PLAY_PAUSED):
        raise _bad(f"{where}.play_state {state}", off + 0xA)
    if not 1 <= chans <= L.CHANNEL_COUNT_MAX:
        raise _bad(f"{where}.channel_count {chans} (want 1..6)", off + 0x18)
    for c in range(chans):
        if not 0 <= ids[c] < p.voice_count:
            raise _bad(f"{where}.channel_ids[{c}] {ids[c]} out of range", off + 0x140 + 4 * c)
    if not (pitch == pitch and 0.0 <= pitch <= 16.0 and vol == vol and abs(vol) <= 128.0):
        raise _bad(f"{where}: pitch {pitch} / volume {vol} not finite or out of range", off + 0x1C)
    if rate > 192000:
        raise _bad(f"{where}.sample_rate {rate}", off + 0xC)
    if wb_index >= L.WAVE_BUFFER_COUNT:
        raise _bad(f"{where}.wave_buffer_index {wb_index}", off + 0x40)
    if mix_id != L.UNUSED_MIX_ID and not 0 <= mix_id < p.mix_count:
        raise _bad(f"{where}.mix_id {mix_id} out of range", off + 0x58)
    for w, wb in enumerate(wbs):
        if wb.end < wb.start and wb.sent_to_server:
            raise _bad(
                f"{where}.wave_buffers[{w}]: end sample {wb.end} before start {wb.start}", off + 0x60 + w * L.WAVEBUF_SIZE + 0x10
            )
    return v


def _effect(d: bytes, off: int, p: RendererParameter, i: int) -> EffectIn:
    etype, is_new, enabled, mix_id, base, size, order = _EFFECT_HEAD.unpack_from(d, off)
    e = EffectIn(etype, bool(is_new), bool(enabled), mix_id, base, size, order, bytes(d[off + 0x20 : off + 0xC0]))
    if etype == L.EFFECT_INVALID:
        return e
    if etype > L.EFFECT_CAPTURE:
        raise _bad(f"effects[{i}].type {etype}", off)
    if not 0 <= mix_id < p.mix_count:
        raise _bad(f"effects[{i}].mix_id {mix_id} out of range", off + 4)
    return e


def _mix(d: bytes, off: int, p: RendererParameter, i: int, index_id: int | None = None) -> MixIn:
    vol, rate, bufs, used, _dirty, mix_id, _effects, node = _MIX_HEAD.unpack_from(d, off)
    if index_id is not None:
        mix_id = index_id
    vols = np.frombuffer(d, np.float32, 24 * 24, off + 0x24).reshape(24, 24).copy()
    dest, splitter = struct.unpack_from("<iI", d, off + 0x924)
    m = MixIn(vol, rate, bufs, bool(used), mix_id, node, vols, dest, splitter)
    if not m.used:
        return m
    if not 0 <= mix_id < p.mix_count:
        raise _bad(f"mixes[{i}].mix_id {mix_id} out of range", off + 0x10)
    if not 1 <= bufs <= L.MIX_BUFFER_COUNT_MAX:
        raise _bad(f"mixes[{i}].buffer_count {bufs} (want 1..24)", off + 8)
    if dest != L.UNUSED_MIX_ID and not 0 <= dest < p.mix_count:
        raise _bad(f"mixes[{i}].dest_mix_id {dest} out of range", off + 0x924)
    if not (np.isfinite(vol) and np.isfinite(vols).all()):
        raise _bad(f"mixes[{i}]: volume not finite", off)
    return m


def _mix_by_index(d: bytes, off: int, p: RendererParameter, i: int) -> MixIn:
    m = _mix(d, off, p, i, i)
    m.mix_id = i
    return m


def _sink(d: bytes, off: int, p: RendererParameter, i: int) -> SinkIn:
    stype, used, node = _SINK_HEAD.unpack_from(d, off)
    s = SinkIn(stype, bool(used), node)
    if not s.used:
        return s
    sp = off + 0x20
    if stype == L.SINK_DEVICE:
        s.name = bytes(d[sp : sp + 255]).split(b"\0")[0].decode("ascii", "replace")
        count = struct.unpack_from("<I", d, sp + 0x100)[0]
        if not 1 <= count <= L.CHANNEL_COUNT_MAX:
            raise _bad(f"sinks[{i}] (device).input_count {count} (want 1..6)", sp + 0x100)
        s.inputs = list(d[sp + 0x104 : sp + 0x104 + count])
    elif stype == L.SINK_CIRCULAR:
        addr, size, count, samples, last, fmt = struct.unpack_from("<QIIIIB", d, sp)
        if not 1 <= count <= L.CHANNEL_COUNT_MAX:
            raise _bad(f"sinks[{i}] (circular buffer).input_count {count} (want 1..6)", sp + 0xC)
        if fmt != L.FMT_PCM16:
            raise _bad(f"sinks[{i}] (circular buffer).sample_format {fmt}: only PCM16", sp + 0x18)
        s.buffer_address, s.buffer_size, s.sample_count, s.last_read_offset, s.sample_format = addr, size, samples, last, fmt
        s.inputs = list(d[sp + 0x1C : sp + 0x1C + count])
    else:
        raise _bad(f"sinks[{i}].type {stype}", off)
    for c, b in enumerate(s.inputs):
        if b >= p.mix_buffer_count:
            raise _bad(f"sinks[{i}].inputs[{c}] {b}: only {p.mix_buffer_count} mix buffers", sp)
    return s


def _records(
    d: bytes, off: int, size: int, count: int, parse, p: RendererParameter, prev_d: bytes | None, prev: list | None
) -> list:
    """``count`` records of ``size`` bytes from ``off``: a record whose bytes equal the previous
    request's at the same place is that request's record object (already parsed and checked: a
    game resends most records unchanged every frame)."""
    out = []
    for i in range(count):
        o = off + i * size
        if prev is not None and i < len(prev) and prev_d[o : o + size] == d[o : o + size]:
            out.append(prev[i])
        else:
            out.append(parse(d, o, p, i))
    return out


def parse_update(data: bytes, p: RendererParameter, prev: tuple[bytes, UpdateRequest] | None = None) -> UpdateRequest:
    """Records of one RequestUpdate input buffer (layout: libnx audren.h, 'Input buffer layout');
    ``prev`` (the previous accepted request's bytes and records) lets unchanged records be reused
    when the section layout is the same."""
    d = bytes(data)
    if len(d) < L.HEADER_SIZE:
        raise _bad(f"update request is {len(d)} bytes, shorter than its {L.HEADER_SIZE:#x}-byte header")
    rev, *sizes, total = L.HEADER.unpack_from(d)
    if L.revision_number(rev) is None:
        raise _bad(f"header.revision {rev:#x} is not a REVn magic", 0)
    want = expected_sizes(p)
    got = dict(zip(L.SECTIONS, sizes))
    # libnx's audrv writes no effect records (effects_sz 0) even when its config counts effects
    if got["effects"] == 0:
        want["effects"] = 0
    dirty_only = (L.revision_number(p.revision) or 1) >= L.REV_MIX_DIRTY_ONLY
    # splitters (REV2+): their section lies between effects and mixes, its size in the header at
    # 0x24 (yuzu's InfoUpdater: size.splitter; Ryujinx's Unknown24); accepted and skipped
    splitter_size = struct.unpack_from("<I", d, L.HEADER_SPLITTER)[0]
    if splitter_size and (L.revision_number(p.revision) or 1) < 2:
        raise _bad(f"header.splitter_size {splitter_size:#x}: splitters need REV2 or later", L.HEADER_SPLITTER)
    if splitter_size % 4 or splitter_size > len(d):
        raise _bad(f"header.splitter_size {splitter_size:#x} is not a whole number of words in the buffer", L.HEADER_SPLITTER)
    mixes_at = L.HEADER_SIZE + sum(got[k] for k in ("behaviour", "memory_pools", "channels", "voices", "effects"))
    mixes_at += splitter_size
    sent_mixes = p.mix_count
    if dirty_only:  # REV7+: a header, then only the mixes the client changed
        if len(d) < mixes_at + L.MIX_DIRTY_HEADER_SIZE:
            raise _bad(f"update request is {len(d):#x} bytes: the REV7+ mix header at {mixes_at:#x} is cut off")
        sent_mixes = struct.unpack_from("<I", d, mixes_at + 4)[0]
        if sent_mixes > p.mix_count:
            raise _bad(f"mix header: {sent_mixes} mixes sent, the renderer has {p.mix_count}", mixes_at + 4)
        want["mixes"] = L.MIX_DIRTY_HEADER_SIZE + sent_mixes * L.MIX_IN_SIZE
    for k, n in got.items():
        if n != want[k]:
            raise _bad(
                f"header.{k}_size {n:#x}, want {want[k]:#x} for this renderer's parameter block", 4 + 4 * L.SECTIONS.index(k)
            )
    need = L.HEADER_SIZE + sum(sizes) + splitter_size
    if total != need or len(d) < need:
        raise _bad(f"header.total_size {total:#x} (sections add to {need:#x}, buffer {len(d):#x})", 0x3C)
    prev_d, prev_r = prev if prev is not None and prev[0][: L.HEADER_SIZE] == d[: L.HEADER_SIZE] else (None, None)
    off = L.HEADER_SIZE
    brev, bflags = struct.unpack_from("<I4xQ", d, off)
    off += L.BEHAVIOUR_IN_SIZE
    pools = [MemPoolIn(*struct.unpack_from("<QQI", d, off + i * L.MEMPOOL_IN_SIZE)) for i in range(p.mempool_count)]
    for i, mp in enumerate(pools):
        if mp.state > L.POOL_RELEASED:
            raise _bad(f"memory_pools[{i}].state {mp.state}", off + i * L.MEMPOOL_IN_SIZE + 0x10)
    off += want["memory_pools"]
    chans = _records(d, off, L.CHANNEL_IN_SIZE, p.voice_count, _channel, p, prev_d, prev_r and prev_r.channels)
    off += want["channels"]
    voices = _records(d, off, L.VOICE_IN_SIZE, p.voice_count, _voice, p, prev_d, prev_r and prev_r.voices)
    off += want["voices"]
    effects = [_effect(d, off + i * L.EFFECT_IN_SIZE, p, i) for i in range(want["effects"] // L.EFFECT_IN_SIZE)]
    splitter_at = off + want["effects"]
    off += want["effects"] + splitter_size
    if dirty_only:
        mixes = _records(d, off + L.MIX_DIRTY_HEADER_SIZE, L.MIX_IN_SIZE, sent_mixes, _mix, p, prev_d, prev_r and prev_r.mixes)
    else:  # before REV7 every mix is sent, its id is its index
        mixes = _records(d, off, L.MIX_IN_SIZE, p.mix_count, _mix_by_index, p, prev_d, prev_r and prev_r.mixes)
    off += want["mixes"]
    sinks = [_sink(d, off + i * L.SINK_IN_SIZE, p, i) for i in range(p.sink_count)]
    off += want["sinks"]
    perf = struct.unpack_from("<I", d, off)[0]
    splitters, destinations = (
        ({}, {}) if (L.revision_number(p.revision) or 1) >= 12 else parse_splitters(d, splitter_at, splitter_size, p)
    )  # REV12's destination layout is not read
    return UpdateRequest(rev, brev, bflags, pools, chans, voices, effects, mixes, sinks, perf, splitters, destinations)
