"""Build renderer parameter blocks and update requests from records: the client side of
``request.py``'s layouts (what nn::audio / libnx's audrv write), for tests, the bench and the
HLE that serves nn::audio calls.  Unused records are zero bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from cpu_host.horizon.audio import layout as L
from cpu_host.horizon.audio.request import RendererParameter, expected_sizes


@dataclass
class Wave:
    address: int
    size: int
    start: int
    end: int
    loop: bool = False
    end_of_stream: bool = False
    sent_to_server: bool = False
    loop_count: int = 0
    context_address: int = 0
    context_size: int = 0
    loop_first: int = 0
    loop_last: int = 0

    def pack(self) -> bytes:
        return struct.pack(
            "<QQIIBBBxiQQII",
            self.address,
            self.size,
            self.start,
            self.end,
            self.loop,
            self.end_of_stream,
            self.sent_to_server,
            self.loop_count,
            self.context_address,
            self.context_size,
            self.loop_first,
            self.loop_last,
        )


@dataclass
class Voice:
    id: int
    mix_id: int = L.FINAL_MIX_ID
    channel_ids: list[int] = field(default_factory=lambda: [0])
    sample_format: int = L.FMT_PCM16
    sample_rate: int = 48000
    pitch: float = 1.0
    volume: float = 1.0
    play_state: int = L.PLAY_STARTED
    is_new: bool = False
    waves: list[Wave] = field(default_factory=list)
    wave_index: int = 0
    state_address: int = 0  # ADPCM coefficients
    biquads: list[tuple[bool, tuple[int, int, int], tuple[int, int]]] = field(default_factory=list)

    splitter_id: int = L.UNUSED_SPLITTER_ID
    decoding_flags: int = 0

    def pack(self) -> bytes:
        b = bytearray(L.VOICE_IN_SIZE)
        struct.pack_into("<H", b, 0x15C, self.decoding_flags)
        struct.pack_into(
            "<iiBBBBIIIIff",
            b,
            0,
            self.id,
            0,
            self.is_new,
            True,
            self.play_state,
            self.sample_format,
            self.sample_rate,
            0,
            0,
            len(self.channel_ids),
            self.pitch,
            self.volume,
        )
        for i, (en, num, den) in enumerate(self.biquads[:2]):
            struct.pack_into("<Bx3h2h", b, 0x24 + i * L.BIQUAD_SIZE, en, *num, *den)
        struct.pack_into(
            "<II4xQQiI",
            b,
            0x3C,
            len(self.waves),
            self.wave_index,
            self.state_address,
            32 if self.state_address else 0,
            self.mix_id,
            self.splitter_id,
        )
        for i, w in enumerate(self.waves[:4]):
            b[0x60 + i * L.WAVEBUF_SIZE : 0x60 + (i + 1) * L.WAVEBUF_SIZE] = w.pack()
        struct.pack_into("<6i", b, 0x140, *(self.channel_ids + [0] * 6)[:6])
        return bytes(b)


@dataclass
class Mix:
    mix_id: int
    buffer_count: int
    volume: float = 1.0
    dest_mix_id: int = L.UNUSED_MIX_ID
    volumes: np.ndarray | None = None  # [24][24]
    dest_splitter_id: int = L.UNUSED_SPLITTER_ID

    def pack(self, rate: int) -> bytes:
        vols = np.zeros((24, 24), np.float32) if self.volumes is None else np.asarray(self.volumes, np.float32)
        return (
            struct.pack("<fIIBBxxiIi8x", self.volume, rate, self.buffer_count, True, True, self.mix_id, 0, 0)
            + vols.tobytes()
            + struct.pack("<iI4x", self.dest_mix_id, self.dest_splitter_id)
        )


def device_sink(inputs: list[int], name: str = "MainAudioOut") -> bytes:
    b = bytearray(L.SINK_IN_SIZE)
    struct.pack_into("<BBxxi", b, 0, L.SINK_DEVICE, True, 0)
    nm = name.encode()[:254]
    b[0x20 : 0x20 + len(nm)] = nm
    struct.pack_into("<I", b, 0x120, len(inputs))
    b[0x124 : 0x124 + len(inputs)] = bytes(inputs)
    return bytes(b)


def circular_sink(address: int, size: int, inputs: list[int], samples: int) -> bytes:
    b = bytearray(L.SINK_IN_SIZE)
    struct.pack_into("<BBxxi", b, 0, L.SINK_CIRCULAR, True, 0)
    struct.pack_into("<QIIIIB", b, 0x20, address, size, len(inputs), samples, 0, L.FMT_PCM16)
    b[0x3C : 0x3C + len(inputs)] = bytes(inputs)
    return bytes(b)


def effect(kind: int, mix_id: int, specific: bytes, order: int = 0, enabled: bool = True, is_new: bool = False) -> bytes:
    return struct.pack("<BBBxiQQI4x", kind, is_new, enabled, mix_id, 0, 0, order) + specific.ljust(0xA0, b"\0")


def delay_params(
    io: list[int], time_ms: int, in_gain: float, feedback: float, out_gain: float, dry: float, max_ms: int = 1000
) -> bytes:
    q = lambda v: int(round(v * 32768))
    ch = len(io)
    return (
        bytes(io + [0] * (6 - ch))
        + bytes(io + [0] * (6 - ch))
        + struct.pack("<HHIIIIIIIIIB", ch, ch, max_ms, time_ms, 48 << 15, q(in_gain), q(feedback), q(out_gain), q(dry), 0, 0, 1)
    )


def biquad_params(io: list[int], num: tuple[int, int, int], den: tuple[int, int]) -> bytes:
    ch = len(io)
    return bytes(io + [0] * (6 - ch)) + bytes(io + [0] * (6 - ch)) + struct.pack("<3h2hBB", *num, *den, ch, 1)


def reverb_params(
    io: list[int], decay_s: float, late: float = 1.0, reverb: float = 1.0, out: float = 1.0, dry: float = 1.0
) -> bytes:
    q = lambda v: int(round(v * 32768))
    ch = len(io)
    return bytes(io + [0] * (6 - ch)) * 2 + struct.pack(
        "<HHiIiiIiiiiiiiB", ch, ch, 48 << 15, 0, 0, 0, 0, q(late), q(decay_s), q(1.0), 0, q(reverb), q(out), q(dry), 1
    )


def splitter_section(infos: list[tuple[int, int, list[int]]], destinations: list[tuple[int, int, list[float], bool]]) -> bytes:
    """A splitter section: infos (id, sample rate, destination ids), destinations (id, mix id,
    volumes, used); the layout request.parse_splitters reads, padded to 16 bytes."""
    out = struct.pack("<III20x", 0x48444E53, len(infos), len(destinations))
    for sid, rate, ids in infos:
        out += struct.pack(f"<IiIi{len(ids)}i12x", 0x49444E53, sid, rate, len(ids), *ids)
    for did, mix_id, vols, used in destinations:
        v = np.zeros(24, np.float32)
        v[: len(vols)] = vols
        out += struct.pack("<Ii", 0x44444E53, did) + v.tobytes() + struct.pack("<iB3x", mix_id, used)
    return out + bytes(-len(out) % 16)


@dataclass
class Update:
    """One update request for parameter block ``p``; fill voices, channels, mixes, sinks."""

    p: RendererParameter
    voices: dict[int, Voice] = field(default_factory=dict)
    channels: dict[int, np.ndarray] = field(default_factory=dict)  # id -> volumes[24]
    mixes: list[Mix] = field(default_factory=list)
    sinks: list[bytes] = field(default_factory=list)
    effects: list[bytes] = field(default_factory=list)
    pools: list[tuple[int, int, int]] = field(default_factory=list)  # address, size, state
    splitters: bytes = b""  # a splitter_section(), or none

    def pack(self) -> bytes:
        p = self.p
        sz = expected_sizes(p)
        beh = struct.pack("<I4xQ", p.revision, 0)
        pools = b"".join(struct.pack("<QQI12x", *t) for t in self.pools).ljust(sz["memory_pools"], b"\0")
        chans = bytearray(sz["channels"])
        for cid, vols in self.channels.items():
            if not 0 <= cid < p.voice_count:
                raise ValueError(f"channel resource {cid}: the renderer has {p.voice_count} (one per voice)")
            o = cid * L.CHANNEL_IN_SIZE
            v = np.zeros(24, np.float32)
            v[: len(vols)] = vols
            chans[o : o + L.CHANNEL_IN_SIZE] = struct.pack("<i", cid) + v.tobytes() + b"\1" + bytes(11)
        voices = bytearray(sz["voices"])
        for vid, v in self.voices.items():
            voices[vid * L.VOICE_IN_SIZE : (vid + 1) * L.VOICE_IN_SIZE] = v.pack()
        effs = b"".join(self.effects).ljust(sz["effects"], b"\0")
        if (L.revision_number(p.revision) or 1) >= L.REV_MIX_DIRTY_ONLY:  # REV7+: a header, the mixes sent
            mixes = struct.pack("<II24x", 0, len(self.mixes)) + b"".join(m.pack(p.sample_rate) for m in self.mixes)
            sz["mixes"] = len(mixes)
        else:
            mixes = b"".join(m.pack(p.sample_rate) for m in self.mixes).ljust(sz["mixes"], b"\0")
        sinks = b"".join(self.sinks).ljust(sz["sinks"], b"\0")
        perf = bytes(L.PERF_IN_SIZE)
        body = beh + pools + bytes(chans) + bytes(voices) + effs + self.splitters + mixes + sinks + perf
        sizes = [sz[k] for k in L.SECTIONS]
        head = bytearray(L.HEADER.pack(p.revision, *sizes, L.HEADER_SIZE + len(body)))
        struct.pack_into("<I", head, L.HEADER_SPLITTER, len(self.splitters))
        return bytes(head) + body
