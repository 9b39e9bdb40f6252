"""The audio renderer: state kept between updates, one frame rendered per call.

Contract: ``AudioRenderer(param_bytes, memory, sinks)``; ``update(request) -> (result, response)``
answers a RequestUpdate (the response layout: libnx audren.h 'Output buffer layout');
The layouts follow the renderer's revision (the parameter block's REVn): REV5+ adds the
renderer info to the response (elapsed frames), REV7+ mix sections carry only the changed mixes
behind a 0x20-byte header, REV9+ effect results are 0x90 bytes (Ryujinx BehaviourContext /
StateUpdater).  ``render_frame()`` renders ``sample_count`` samples at ``sample_rate`` (240 at 48 kHz: 5 ms, as
Horizon's renderer ticks at 200 Hz) and hands each device sink's interleaved PCM16 to the
``sinks`` callable.  ``memory`` reads (and, for circular-buffer sinks, writes) guest memory.

The pipeline per voice: wave buffers (PCM16 interleaved, PCM float, DSP-ADPCM) -> decode (C) ->
sample-rate conversion to the renderer rate with pitch (C, linear interpolation: Horizon uses a
4-tap polyphase filter; ours is within the tolerance documented in tests/audio) -> the two
biquads (Q14) -> voice volume ramp -> per channel, mix-volume ramps into the destination mix's
buffers (or, for a voice sent through a splitter, into each of its channel's destinations).
Mixes are processed deepest first (submix -> ... -> final mix), effects of a mix run in
processing order before it is routed on.  Volumes ramp linearly from last frame's value to this
frame's across the frame; a mix may feed its destination mix or a splitter's.  Performance
metrics are not implemented (the performance section is answered with 0 bytes written).
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from cpu_host.horizon.audio import dsp, effects
from cpu_host.horizon.audio import layout as L
from cpu_host.horizon.audio.request import (
    AudioError,
    MixIn,
    RendererParameter,
    UpdateRequest,
    VoiceIn,
    WaveBuffer,
    parse_parameter,
    parse_update,
)

log = logging.getLogger("cpu_host.audio")
DECODE_RESET_PLAYED_ON_LOOP, DECODE_SKIP_SRC = 1, 2  # REV5 voice decoding flags (Ryujinx DecodingBehaviour)


class GuestMemory(Protocol):
    def read(self, address: int, size: int) -> bytes: ...
    def write(self, address: int, data: bytes) -> None: ...


class BytesMemory:
    """Guest memory as a set of byte regions (tests, and callers without a mapped guest)."""

    def __init__(self) -> None:
        self.regions: dict[int, bytearray] = {}

    def map(self, address: int, data: bytes) -> None:
        self.regions[address] = bytearray(data)

    def _find(self, address: int, size: int) -> tuple[bytearray, int]:
        for base, buf in self.regions.items():
            if base <= address and address + size <= base + len(buf):
                return buf, address - base
        raise KeyError(f"guest address {address:#x}+{size:#x} is not mapped")

    def read(self, address: int, size: int) -> bytes:
        buf, o = self._find(address, size)
        return bytes(buf[o : o + size])

    def write(self, address: int, data: bytes) -> None:
        buf, o = self._find(address, len(data))
        buf[o : o + len(data)] = data


@dataclass
class Slot:
    wb: WaveBuffer
    data: bytes
    offset: int
    loops: int = 0
    coefs: np.ndarray | None = None  # ADPCM coefficient pairs, read once


@dataclass
class VoiceState:
    slots: list[Slot | None] = field(default_factory=lambda: [None] * L.WAVE_BUFFER_COUNT)
    index: int = 0
    played: int = 0
    consumed: int = 0
    errors: int = 0
    hist: np.ndarray = field(default_factory=lambda: np.zeros(2, np.int32))
    frac: float = 0.0
    # decoded samples not consumed yet (channels x k), h[0] at integer position 0; starts with
    # one zero sample, so a voice's output lags its source by one sample
    pending: np.ndarray = field(default_factory=lambda: np.zeros((L.CHANNEL_COUNT_MAX, 1), np.float32))
    volume: float | None = None  # last frame's volume (ramp start)
    mix_volumes: dict[int, np.ndarray] = field(default_factory=dict)
    biquad_states: np.ndarray = field(default_factory=lambda: np.zeros((L.CHANNEL_COUNT_MAX, 4), np.float32))
    plan: tuple | None = None  # (records it was made from, coefficient/row/volume arrays and C pointers)
    bq_p: object = None  # C pointer to biquad_states
    split_prev: dict = field(default_factory=dict)  # (channel, destination index) -> last frame's volumes


class AudioRenderer:
    def __init__(
        self, parameter: bytes | RendererParameter, memory: GuestMemory, sinks: Callable[[int, np.ndarray], None] | None = None
    ) -> None:
        self.p = parameter if isinstance(parameter, RendererParameter) else parse_parameter(parameter)
        self.memory = memory
        self.sink_out = sinks or (lambda index, pcm: None)
        self.n = self.p.sample_count
        self.buffers = np.zeros((self.p.mix_buffer_count, self.n), np.float32)
        self.tmp = np.zeros(self.n, np.float32)
        self.buffers_p, self.tmp_p = dsp.ptr("float *", self.buffers), dsp.ptr("float *", self.tmp)
        self.voices = [VoiceState() for _ in range(self.p.voice_count)]
        self.pool_states = [L.POOL_NEW] * self.p.mempool_count
        self.pools: list[tuple[int, int]] = []
        self.req: UpdateRequest | None = None
        self.last: tuple[bytes, UpdateRequest] | None = None  # the last accepted request: records reused
        self.mix_records: dict = {}  # mix id -> its last record (REV7+ updates send only changed mixes)
        self.split_infos: dict[int, list[int]] = {}  # splitter id -> destination ids
        self.split_dests: dict = {}  # destination id -> DestinationIn
        self.revision = L.revision_number(self.p.revision) or 1
        self.ffi, self.lib = dsp.lib()
        self.effects: dict[int, effects.Effect] = {}
        self.mix_prev: dict[int, np.ndarray] = {}
        self.sink_written = [0] * self.p.sink_count
        self.frames = 0

    # ---- update -------------------------------------------------------------------------
    def update(self, request: bytes) -> tuple[int, bytes]:
        """(result, response): result 0 and the response buffer, or Horizon's result code and
        an empty response for a request the renderer refuses (nothing is applied then)."""
        try:
            req = parse_update(request, self.p, self.last)
            # splitters keep their state until sent again
            infos, dests = {**self.split_infos, **req.splitters}, {**self.split_dests, **req.destinations}
            order = self._mix_order(req, infos, dests)
        except AudioError as e:
            log.warning("%s", e)
            return e.result, b""
        self._apply(req)
        self.req, self.order = req, order
        self.last = (bytes(request), req)
        self.mix_records = self.merged
        self.split_infos, self.split_dests = infos, dests
        return L.RESULT_SUCCESS, self._response(req)

    def _mix_targets(self, m, used: dict, infos: dict, dests: dict) -> list[int]:
        """The mixes mix ``m`` feeds: its destination mix, or its splitter's configured destinations."""
        if m.dest_mix_id != L.UNUSED_MIX_ID:
            return [m.dest_mix_id]
        ids = infos.get(m.dest_splitter_id, [])
        return [d.mix_id for d in (dests.get(i) for i in ids) if d is not None and d.used and d.mix_id in used]

    def _mix_order(self, req: UpdateRequest, infos: dict, dests: dict) -> list[int]:
        """Used mix ids, deepest first (each before every mix it feeds, directly or through a
        splitter); a cycle, or a destination that is an unused mix, refuses the request, as does a
        set of mixes whose buffers overflow the renderer's.  A mix that feeds nothing is a leaf."""
        # REV7+ sends only the mixes the client changed: the others keep their last records
        merged = {**self.mix_records, **{m.mix_id: m for m in req.mixes}}
        used = {mid: m for mid, m in merged.items() if m.used}
        if L.FINAL_MIX_ID not in used:
            used = {}
        depth: dict[int, int] = {}

        def walk(mid: int, path: tuple[int, ...]) -> int:
            if mid in depth:
                return depth[mid]
            if mid in path:
                raise AudioError(L.RESULT_INVALID_MIX_SORTING, f"mixes {' -> '.join(map(str, path + (mid,)))} loop")
            targets = [] if mid == L.FINAL_MIX_ID else self._mix_targets(used[mid], used, infos, dests)
            for t in targets:
                if t not in used:
                    raise AudioError(L.RESULT_INVALID_MIX_SORTING, f"mix {mid} feeds mix {t}, which is not in use")
            depth[mid] = 1 + max((walk(t, path + (mid,)) for t in targets), default=-1)
            return depth[mid]

        for mid in used:
            walk(mid, ())
        total = sum(m.buffer_count for m in used.values())
        if total > self.p.mix_buffer_count:
            raise AudioError(
                L.RESULT_INVALID_UPDATE_INFO, f"mixes use {total} buffers, the renderer has {self.p.mix_buffer_count}"
            )
        self.mixes, self.merged = used, merged
        self.layout = tuple(merged[k] for k in sorted(merged))  # plans made for these records hold while reused
        self.base, o = {}, 0
        for mid in sorted(used):
            self.base[mid] = o
            o += used[mid].buffer_count
        return sorted(used, key=lambda m: (-depth[m], m))

    def _apply(self, req: UpdateRequest) -> None:
        for i, mp in enumerate(req.memory_pools):
            if mp.state == L.POOL_REQUEST_ATTACH:
                self.pool_states[i] = L.POOL_ATTACHED
            elif mp.state == L.POOL_REQUEST_DETACH:
                self.pool_states[i] = L.POOL_DETACHED
            elif mp.state in (L.POOL_NEW, L.POOL_RELEASED):
                self.pool_states[i] = mp.state
        self.pools = [(mp.address, mp.size) for i, mp in enumerate(req.memory_pools) if self.pool_states[i] == L.POOL_ATTACHED]
        for v in req.voices:
            if not v.used:
                continue
            st = self.voices[v.id]
            if v.is_new:
                self.voices[v.id] = st = VoiceState()
            for w, wb in enumerate(v.wave_buffers[: L.WAVE_BUFFER_COUNT]):
                if not wb.sent_to_server:  # a buffer the client appended since the last update
                    st.slots[w] = self._load(st, v, wb)
            for _ in range(min(v.flush_count, L.WAVE_BUFFER_COUNT)):
                if st.slots[st.index] is not None:
                    self._finish(st)
        live = {}
        for i, e in enumerate(req.effects):
            if e.type == L.EFFECT_INVALID:
                continue
            old = self.effects.get(i)
            live[i] = (
                old
                if old is not None and not e.is_new and type(old) is effects.KINDS.get(e.type, effects.Effect)
                else effects.make(e.type, e.specific, self.p.sample_rate)
            )
        self.effects = live

    def _in_pool(self, address: int, size: int) -> bool:
        return any(a <= address and address + size <= a + s for a, s in self.pools)

    def _load(self, st: VoiceState, v: VoiceIn, wb: WaveBuffer) -> Slot | None:
        if wb.size == 0 or wb.end <= wb.start:
            return None
        if self.pools and not self._in_pool(wb.address, wb.size):
            st.errors += 1  # Horizon reports an address error for the voice
            return None
        try:
            data = self.memory.read(wb.address, wb.size)
        except (KeyError, OSError, ValueError) as e:
            log.warning("voice %d: wave buffer %#x+%#x unreadable: %s", v.id, wb.address, wb.size, e)
            st.errors += 1
            return None
        return Slot(wb, data, wb.start)

    def _response(self, req: UpdateRequest) -> bytes:
        p = self.p
        pools = b"".join(struct.pack("<I12x", s) for s in self.pool_states)
        voices = b"".join(struct.pack("<QII", self.voices[i].played, self.voices[i].consumed, 0) for i in range(p.voice_count))
        effect_out = L.EFFECT_OUT_V2_SIZE if self.revision >= L.REV_EFFECT_V2 else L.EFFECT_OUT_SIZE
        effs = b"".join(
            struct.pack("<B", 3 if (e.type != L.EFFECT_INVALID and e.enabled) else 4).ljust(effect_out, b"\0")
            for e in req.effects
        )
        sinks = b"".join(struct.pack("<I28x", w) for w in self.sink_written)
        perf = struct.pack("<I12x", 0)
        behaviour = bytes(L.BEHAVIOUR_OUT_SIZE)
        info = struct.pack("<Q8x", self.frames) if self.revision >= L.REV_RENDER_INFO else b""
        sizes = [len(behaviour), len(pools), len(voices), 0, len(effs), 0, len(sinks), len(perf)]
        total = L.HEADER_SIZE + sum(sizes) + len(info)
        head = bytearray(L.HEADER.pack(req.revision, *sizes, total))
        struct.pack_into("<I", head, L.HEADER_RENDER_INFO, len(info))
        return bytes(head) + pools + voices + effs + sinks + perf + behaviour + info

    # ---- render -------------------------------------------------------------------------
    def render_frame(self) -> None:
        self.buffers[:] = 0.0
        req = self.req
        if req is not None and self.mixes:
            for v in req.voices:
                if v.used and v.play_state == L.PLAY_STARTED and (v.mix_id in self.mixes or v.splitter_id in self.split_infos):
                    self._voice(v, req)
            for mid in self.order:
                self._mix(mid, req)
            for i, s in enumerate(req.sinks):
                if s.used:
                    self._sink(i, s)
        self.frames += 1

    def _source(self, st: VoiceState, v: VoiceIn, need: int) -> np.ndarray:
        """``need`` decoded source frames (channels x need), zero-padded when the voice runs dry."""
        out = np.zeros((v.channel_count, need), np.float32)
        got, guard, reset_at = 0, 0, None
        reset_on_loop = self.revision >= 5 and v.decoding_flags & DECODE_RESET_PLAYED_ON_LOOP
        while got < need and guard < 64:
            guard += 1
            slot = st.slots[st.index]
            if slot is None:
                break
            wb = slot.wb
            end = wb.loop_last if slot.loops and self.revision >= 8 and wb.loop_first < wb.loop_last else wb.end
            take = max(0, min(need - got, end - slot.offset))
            chunk = self._decode(st, v, slot, take)
            k = chunk.shape[1]
            out[:, got : got + k] = chunk
            got += k
            slot.offset += k
            if k < take or slot.offset >= end:
                # before REV8 a looping buffer loops for ever; from REV8 its loop count says how many
                # passes follow the first (-1: for ever), and later passes may have their own bounds
                again = wb.loop and k > 0 and (self.revision < 8 or wb.loop_count < 0 or slot.loops < wb.loop_count)
                if again:
                    slot.loops += 1
                    if reset_on_loop:
                        reset_at = got
                    slot.offset = wb.loop_first if self.revision >= 8 and wb.loop_first < wb.loop_last else wb.start
                    self._adpcm_context(st, v, slot)
                else:
                    self._finish(st)
        st.played = st.played + got if reset_at is None else got - reset_at
        return out

    def _finish(self, st: VoiceState) -> None:
        st.slots[st.index] = None
        st.consumed += 1
        st.index = (st.index + 1) % L.WAVE_BUFFER_COUNT

    def _adpcm_context(self, st: VoiceState, v: VoiceIn, slot: Slot) -> None:
        if v.sample_format != L.FMT_ADPCM:
            return
        st.hist[:] = 0
        if slot.wb.context_address and slot.wb.context_size >= 6:
            try:
                _ps, h1, h2 = struct.unpack("<Hhh", self.memory.read(slot.wb.context_address, 6))
                st.hist[:] = (h1, h2)
            except (KeyError, OSError, ValueError):
                st.errors += 1

    def _decode(self, st: VoiceState, v: VoiceIn, slot: Slot, count: int) -> np.ndarray:
        ch = v.channel_count
        if v.sample_format == L.FMT_PCM16:
            raw = np.frombuffer(slot.data, np.int16, len(slot.data) // 2)
            part = raw[slot.offset * ch : (slot.offset + count) * ch]
            k = part.size // ch
            return part[: k * ch].reshape(k, ch).T.astype(np.float32)
        if v.sample_format == L.FMT_PCM_FLOAT:
            raw = np.frombuffer(slot.data, np.float32, len(slot.data) // 4)
            part = raw[slot.offset * ch : (slot.offset + count) * ch]
            k = part.size // ch
            return (part[: k * ch].reshape(k, ch).T * np.float32(32767.0)).astype(np.float32)
        if v.sample_format == L.FMT_ADPCM and ch == 1:
            if slot.coefs is None:
                try:
                    slot.coefs = np.frombuffer(self.memory.read(v.state_address, 32), np.int16).copy()
                except (KeyError, OSError, ValueError):
                    st.errors += 1
                    slot.coefs = np.zeros(16, np.int16)
                if slot.offset == slot.wb.start and slot.wb.context_address:
                    self._adpcm_context(st, v, slot)
            return dsp.adpcm_decode(slot.data, slot.offset, count, slot.coefs, st.hist)[None, :]
        return np.zeros((ch, 0), np.float32)  # unsupported format: the voice stays silent

    def _voice(self, v: VoiceIn, req: UpdateRequest) -> None:
        st = self.voices[v.id]
        flags = v.decoding_flags if self.revision >= 5 else 0
        ratio = 1.0 if flags & DECODE_SKIP_SRC else (v.sample_rate or self.p.sample_rate) * v.pitch / self.p.sample_rate
        n = self.n
        if ratio <= 0:
            return
        length, used = dsp.resample_span(st.frac, ratio, n)
        have = st.pending.shape[1]
        src = self._source(st, v, max(0, length - have))
        ch = v.channel_count
        if st.pending.shape[0] < ch:  # the voice's channel count grew: no history for the new ones
            st.pending = np.zeros((L.CHANNEL_COUNT_MAX, st.pending.shape[1]), np.float32)
        hist = np.concatenate((st.pending[:ch], src), axis=1)
        width = hist.shape[1]
        vol0 = v.volume if st.volume is None else st.volume
        # the plan holds for as long as the records it was made from (reused while unchanged)
        key = (v, *self.layout, *(req.channels[v.channel_ids[c]] for c in range(ch)))
        if st.plan is None or len(st.plan[0]) != len(key) or any(a is not b for a, b in zip(st.plan[0], key)):
            st.plan = (key, *self._plan(v, req))
        _, nbq, coefs_p, rows_p, ndst, curs = st.plan
        if st.bq_p is None:
            st.bq_p = self.ffi.from_buffer("float[]", st.biquad_states)
        hist_p = self.ffi.from_buffer("float[]", hist)
        routes = self._splitter_routes(v) if ndst == 0 else None
        for c in range(ch):
            cur, cur_p = curs[c]
            prev_p = st.mix_volumes.get(c, (cur, cur_p))[1]
            self.lib.nx_voice_channel(
                hist_p + c * width,
                width,
                st.frac,
                ratio,
                n,
                nbq,
                coefs_p,
                st.bq_p + 4 * c,
                vol0,
                v.volume,
                self.buffers_p,
                ndst,
                rows_p,
                prev_p,
                cur_p,
                self.tmp_p,
            )
            st.mix_volumes[c] = curs[c]
            if routes:  # through a splitter: tmp holds the channel, mixed into each destination
                self._split(st, c, routes[c])
        st.pending = hist[:, used:]
        st.frac = st.frac + n * ratio - used
        st.volume = v.volume

    def _splitter_routes(self, v: VoiceIn) -> list[list[tuple[int, object]]] | None:
        """Per channel of a voice sent through a splitter: (destination index, record) of its
        destinations — channel c takes the splitter's destinations c, c + channels, ... (Ryujinx
        CommandGenerator), the used ones whose mix is in use."""
        ids = self.split_infos.get(v.splitter_id)
        if v.mix_id != L.UNUSED_MIX_ID or ids is None:
            return None
        out = []
        for c in range(v.channel_count):
            dests = [(k, self.split_dests.get(ids[k])) for k in range(c, len(ids), v.channel_count)]
            out.append([(k, d) for k, d in dests if d is not None and d.used and d.mix_id in self.mixes])
        return out

    def _split(self, st: VoiceState, c: int, dests: list) -> None:
        for k, d in dests:
            m, base = self.mixes[d.mix_id], self.base[d.mix_id]
            prev = st.split_prev.get((c, k), d.volumes)
            for b in range(m.buffer_count):
                if prev[b] != 0.0 or d.volumes[b] != 0.0:
                    dsp.mix_ramp(self.buffers[base + b], self.tmp, float(prev[b]), float(d.volumes[b]))
            st.split_prev[(c, k)] = d.volumes

    def _plan(self, v: VoiceIn, req: UpdateRequest) -> tuple:
        """What a voice's frames need from this request, as arrays with C pointers made once (no
        destination rows for a voice sent through a splitter)."""
        if v.mix_id not in self.mixes:
            dest, base = MixIn(1.0, 0, 0, True, v.mix_id, 0, np.zeros((24, 24), np.float32), 0, 0), 0
        else:
            dest, base = self.mixes[v.mix_id], self.base[v.mix_id]
        bqs = [bq for bq in v.biquads if bq.enabled]
        coefs = (
            np.array([[*bq.num, *bq.den] for bq in bqs], np.float32).reshape(-1) * np.float32(L.Q14)
            if bqs
            else np.zeros(1, np.float32)
        )
        rows = np.arange(base, base + dest.buffer_count, dtype=np.int32)
        curs = []
        for c in range(v.channel_count):
            cur = np.ascontiguousarray(req.channels[v.channel_ids[c]].volumes[: dest.buffer_count], np.float32)
            curs.append((cur, dsp.ptr("float *", cur)))
        # cffi's from_buffer keeps each array alive as long as its pointer
        return (len(bqs), dsp.ptr("float *", coefs), dsp.ptr("int *", rows), len(rows), curs)

    def _mix(self, mid: int, req: UpdateRequest) -> None:
        m = self.mixes[mid]
        base = self.base[mid]
        for i in sorted(self.effects, key=lambda i: req.effects[i].order):
            e = req.effects[i]
            if e.enabled and e.mix_id == mid:
                self.effects[i].process(self.buffers, base, e.specific)
        if mid == L.FINAL_MIX_ID:
            return
        if m.dest_mix_id == L.UNUSED_MIX_ID:
            self._mix_split(m, base)
            return
        if m.dest_mix_id not in self.mixes:
            return
        dest, dbase = self.mixes[m.dest_mix_id], self.base[m.dest_mix_id]
        cur = m.volumes[: m.buffer_count, : dest.buffer_count] * np.float32(m.volume)
        prev = self.mix_prev.get(mid, cur)
        for s in range(m.buffer_count):
            for d in range(dest.buffer_count):
                if prev[s, d] != 0.0 or cur[s, d] != 0.0:
                    dsp.mix_ramp(self.buffers[dbase + d], self.buffers[base + s], float(prev[s, d]), float(cur[s, d]))
        self.mix_prev[mid] = cur.copy()

    def _mix_split(self, m, base: int) -> None:
        """A mix sent through a splitter (Ryujinx CommandGenerator): its destination k takes the
        mix's buffer k % buffer count into each buffer b of the destination's mix at mix volume x
        the destination's volume b (no ramp)."""
        for k, did in enumerate(self.split_infos.get(m.dest_splitter_id, [])):
            d = self.split_dests.get(did)
            if d is None or not d.used or d.mix_id not in self.mixes:
                continue
            dest, dbase = self.mixes[d.mix_id], self.base[d.mix_id]
            src = self.buffers[base + k % m.buffer_count]
            for b in range(dest.buffer_count):
                vol = float(np.float32(m.volume) * d.volumes[b])
                if vol != 0.0:
                    dsp.mix_ramp(self.buffers[dbase + b], src, vol, vol)

    def _sink(self, index: int, s) -> None:
        final = self.mixes[L.FINAL_MIX_ID]
        chans = [(self.buffers[b] * np.float32(final.volume)).astype(np.float32) for b in s.inputs]
        pcm = dsp.to_pcm16(chans)
        if s.type == L.SINK_DEVICE:
            self.sink_out(index, pcm)
        elif s.type == L.SINK_CIRCULAR and s.buffer_size:
            data = pcm.tobytes()
            off = self.sink_written[index] % s.buffer_size
            try:
                first = data[: s.buffer_size - off]
                self.memory.write(s.buffer_address + off, first)
                if len(first) < len(data):
                    self.memory.write(s.buffer_address, data[len(first) :][: s.buffer_size])
            except (KeyError, OSError, ValueError) as e:
                log.warning("circular buffer sink %d: %s", index, e)
                return
            self.sink_written[index] = (off + len(data)) % s.buffer_size
