"""nn::audio served at the function level: the renderer API a game calls by name, on the same
renderers as ``audren:u`` (one ``AudioHost`` for both; the update request is built by
``client.py`` and answered by the same ``AudioRenderer.update`` that serves IPC).

What is ours, not the SDK's: no public document gives the SDK's structures, so the guest types
are opaque storage whose first word holds a host id (``AudioRendererConfig``: 8 bytes; each
``VoiceType``, ``FinalMixType``, ``DeviceSinkType``, ``MemoryPoolType``: 4, 0 = not acquired),
and ``AudioRendererParameter`` and ``WaveBuffer`` have the layouts below (declared for guest C
in ``examples/horizon_hello/sdk/nn.h``).  The names are the Itanium manglings of the signatures
written beside them (produced by clang from those declarations).  Sample formats and play
states are the renderer's numbers (switchbrew's PCM format table: PcmInt16 2, Adpcm 6; Started
0, Stopped 1, Paused 2).

- AudioRendererParameter (0x34): sample rate, sample count, mix buffer count, submix count,
  voice count (channel resources: a stereo voice takes two), sink count, effect count,
  performance frame count (s32 each), voice drop u8 @0x20, splitter count @0x24, splitter send
  channel count @0x28, rendering device @0x2C, execution mode @0x30 (s32 each).
- WaveBuffer (0x30): buffer u64, size u64, start sample s32 @0x10, end sample s32 @0x14, loop u8
  @0x18, end of stream u8 @0x19, context (ADPCM loop context) u64 @0x20, context size u64 @0x28.
- The ADPCM parameter given to AcquireVoiceSlot: 16 s16 coefficients (8 pairs), read by the
  renderer where it lies (it must stay valid while the voice plays).

Flow: AcquireVoiceSlot / SetVoice* / AppendWaveBuffer change the host's model of the config;
RequestUpdateAudioRenderer sends it (wave buffers appended since the last update go with
``sent_to_server`` false) and reads the response: the wave buffers the renderer finished are
released in order (GetReleasedWaveBuffer), played sample counts updated.  At most 4 wave
buffers are queued per voice (AppendWaveBuffer answers false).  A bad guest pointer or a value
out of range ends the program with a report naming the function (``GuestError``); a request the
renderer refuses is answered with its result code.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from cpu_host.horizon.audio import client as C
from cpu_host.horizon.audio import layout as L
from cpu_host.horizon.audio.guestmem import GuestMemory
from cpu_host.horizon.audio.host import AudioHost, RendererSource
from cpu_host.horizon.audio.request import AudioError, RendererParameter, parse_parameter, work_buffer_size
from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.registry import HostFunction

log = logging.getLogger("cpu_host.hle.audio")
PARAM = struct.Struct("<8iB3xiiii")
WAVE = struct.Struct("<QQiiBB6xQQ")
CONFIG_SIZE = 0x1000  # what GetAudioRendererConfigWorkBufferSize asks for (unused)
MAX_QUEUED = L.WAVE_BUFFER_COUNT
STATES = (L.PLAY_STARTED, L.PLAY_STOPPED, L.PLAY_PAUSED)


@dataclass
class VoiceModel:
    vid: int
    channels: list[int]  # channel resource ids
    fmt: int
    rate: int
    state_address: int
    mix: int = L.UNUSED_MIX_ID
    volume: float = 1.0
    pitch: float = 1.0
    play_state: int = L.PLAY_STOPPED
    is_new: bool = True
    mix_volumes: np.ndarray = field(default_factory=lambda: np.zeros((L.CHANNEL_COUNT_MAX, 24), np.float32))
    ring: list[C.Wave | None] = field(default_factory=lambda: [None] * MAX_QUEUED)
    appended: int = 0
    queued: deque = field(default_factory=deque)  # guest WaveBuffer addresses not yet finished
    released: deque = field(default_factory=deque)
    consumed_seen: int = 0
    played: int = 0


@dataclass
class ConfigModel:
    p: RendererParameter
    voices: dict[int, VoiceModel] = field(default_factory=dict)
    free_channels: list[int] = field(default_factory=list)
    final_buffers: int = 0
    final_volume: float = 1.0
    sinks: list[bytes] = field(default_factory=list)
    pools: list[list[int]] = field(default_factory=list)  # [address, size, state]


class NnAudio:
    def __init__(self, host: AudioHost) -> None:
        self.host = host
        self.lock = threading.RLock()
        self.renderers: dict[int, RendererSource] = {}
        self.configs: dict[int, ConfigModel] = {}
        self.voice_at: dict[int, tuple[ConfigModel, VoiceModel]] = {}  # VoiceType address -> model
        self.mix_at: dict[int, ConfigModel] = {}
        self.pool_at: dict[int, list[int]] = {}
        self._next = 1

    # ---- helpers ------------------------------------------------------------------------
    def _id(self) -> int:
        self._next += 1
        return self._next - 1

    @staticmethod
    def _param(c: Call, addr: int, what: str) -> RendererParameter:
        vals = PARAM.unpack(c.read(addr, PARAM.size, what))
        p = RendererParameter(
            *vals[:8],
            voice_drop_enabled=vals[8],
            splitter_count=vals[9],
            splitter_destination_count=vals[10],
            rendering_device=vals[11],
            execution_mode=vals[12],
        )
        try:
            return parse_parameter(p.pack())
        except AudioError as e:
            raise GuestError(f"{what}: {e}") from None

    def _config(self, c: Call, addr: int, what: str) -> ConfigModel:
        cid = c.read_u64(addr, what) if addr else 0
        if cid not in self.configs:
            raise GuestError(
                f"{what}: AudioRendererConfig at {addr:#x} was not initialised (nn::audio::InitializeAudioRendererConfig)"
            )
        return self.configs[cid]

    def _voice(self, c: Call, addr: int, what: str) -> tuple[ConfigModel, VoiceModel]:
        c.check(addr, 4, 1, what)
        if addr not in self.voice_at:
            raise GuestError(f"{what}: VoiceType at {addr:#x} holds no acquired voice (nn::audio::AcquireVoiceSlot)")
        return self.voice_at[addr]

    def _renderer(self, handle: int, what: str) -> RendererSource:
        if handle not in self.renderers:
            raise GuestError(f"{what}: AudioRendererHandle {handle:#x} is not an open renderer")
        return self.renderers[handle]

    @staticmethod
    def _f(c: Call, i: int) -> float:
        return float(c.cpu.v[i].f[0])

    # ---- renderer -----------------------------------------------------------------------
    def init_parameter(self, c: Call) -> None:
        c.write(c.arg(0), PARAM.pack(48000, 240, 2, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0), "InitializeAudioRendererParameter out")

    def work_buffer_size(self, c: Call) -> int:
        return work_buffer_size(self._param(c, c.arg(0), "GetAudioRendererWorkBufferSize"))

    def open_renderer(self, c: Call) -> int:
        what = "nn::audio::OpenAudioRenderer"
        out = c.arg(0)
        c.check(out, 8, 2, what)
        p = self._param(c, c.arg(1), what)
        with self.lock:
            src = self.host.open_renderer(p, GuestMemory(c.ffi, c.lib))
            h = self._id()
            self.renderers[h] = src
        c.u64(out, h, what)
        return 0

    def start(self, c: Call) -> int:
        self._renderer(c.arg(0), "nn::audio::StartAudioRenderer").start()
        return 0

    def stop(self, c: Call) -> None:
        self._renderer(c.arg(0), "nn::audio::StopAudioRenderer").stop()

    def close(self, c: Call) -> None:
        with self.lock:
            src = self.renderers.pop(c.arg(0), None)
        if src is not None:
            src.close()

    def config_size(self, c: Call) -> int:
        self._param(c, c.arg(0), "GetAudioRendererConfigWorkBufferSize")
        return CONFIG_SIZE

    def init_config(self, c: Call) -> None:
        what = "nn::audio::InitializeAudioRendererConfig"
        p = self._param(c, c.arg(1), what)
        with self.lock:
            cid = self._id()
            self.configs[cid] = ConfigModel(p, free_channels=list(range(p.voice_count)))
        c.u64(c.arg(0), cid, what)

    # ---- mixes, sinks, pools ------------------------------------------------------------
    def acquire_final_mix(self, c: Call) -> int:
        what = "nn::audio::AcquireFinalMix"
        with self.lock:
            cfg = self._config(c, c.arg(0), what)
            n = c.sarg32(2)
            if cfg.final_buffers or not 1 <= n <= min(24, cfg.p.mix_buffer_count):
                return 0
            cfg.final_buffers = n
            c.u32(c.arg(1), 1, what)
            self.mix_at[c.arg(1)] = cfg
        return 1

    def _mix(self, c: Call, addr: int, what: str) -> ConfigModel:
        c.check(addr, 4, 1, what)
        if addr not in self.mix_at:
            raise GuestError(f"{what}: FinalMixType at {addr:#x} was not acquired (nn::audio::AcquireFinalMix)")
        return self.mix_at[addr]

    def final_mix_volume(self, c: Call) -> None:
        with self.lock:
            self._mix(c, c.arg(0), "nn::audio::SetFinalMixVolume").final_volume = self._f(c, 0)

    def add_device_sink(self, c: Call) -> int:
        what = "nn::audio::AddDeviceSink"
        with self.lock:
            cfg = self._config(c, c.arg(0), what)
            self._mix(c, c.arg(2), what)
            count = c.sarg32(4)
            if not 1 <= count <= L.CHANNEL_COUNT_MAX:
                raise GuestError(f"{what}: {count} inputs (1..6)")
            inputs = list(c.read(c.arg(3), count, what))
            if any(i >= cfg.final_buffers for i in inputs):
                raise GuestError(f"{what}: inputs {inputs} beyond the final mix's {cfg.final_buffers} buffers")
            if len(cfg.sinks) >= cfg.p.sink_count:
                return L.RESULT_INVALID_UPDATE_INFO
            name = c.cstr(c.arg(5), what, 0x100) if c.arg(5) else "MainAudioOut"
            cfg.sinks.append(C.device_sink(inputs, name))
            c.u32(c.arg(1), len(cfg.sinks), what)
        return 0

    def acquire_pool(self, c: Call) -> int:
        what = "nn::audio::AcquireMemoryPool"
        with self.lock:
            cfg = self._config(c, c.arg(0), what)
            if len(cfg.pools) >= cfg.p.mempool_count:
                return 0
            pool = [c.arg(2), c.arg(3), L.POOL_NEW]
            cfg.pools.append(pool)
            c.u32(c.arg(1), len(cfg.pools), what)
            self.pool_at[c.arg(1)] = pool
        return 1

    def attach_pool(self, c: Call) -> int:
        with self.lock:
            pool = self.pool_at.get(c.arg(0))
            if pool is None:
                raise GuestError(f"nn::audio::RequestAttachMemoryPool: MemoryPoolType at {c.arg(0):#x} was not acquired")
            if pool[2] != L.POOL_NEW:
                return 0
            pool[2] = L.POOL_REQUEST_ATTACH
        return 1

    # ---- voices -------------------------------------------------------------------------
    def acquire_voice(self, c: Call) -> int:
        what = "nn::audio::AcquireVoiceSlot"
        with self.lock:
            cfg = self._config(c, c.arg(0), what)
            addr, rate, chans, fmt = c.arg(1), c.sarg32(2), c.sarg32(3), c.sarg32(4)
            c.check(addr, 4, 2, what)
            if (
                fmt not in (L.FMT_PCM16, L.FMT_PCM_FLOAT, L.FMT_ADPCM)
                or not 1 <= chans <= L.CHANNEL_COUNT_MAX
                or not 0 < rate <= 192000
                or (fmt == L.FMT_ADPCM and chans != 1)
            ):
                raise GuestError(
                    f"{what}: format {fmt}, {chans} channels at {rate} Hz (PCM16 2, float 5, ADPCM 6 mono; 1..6 channels)"
                )
            state = 0
            if fmt == L.FMT_ADPCM:
                if c.arg(7) < 32:
                    raise GuestError(f"{what}: an ADPCM voice needs its parameter (16 coefficients, 32 bytes)")
                c.check(c.arg(6), 32, 1, what)
                state = c.arg(6)
            if len(cfg.free_channels) < chans or addr in self.voice_at:
                return 0
            ids = [cfg.free_channels.pop(0) for _ in range(chans)]
            v = VoiceModel(ids[0], ids, fmt, rate, state)
            cfg.voices[v.vid] = v
            self.voice_at[addr] = (cfg, v)
            c.u32(addr, v.vid + 1, what)
        return 1

    def release_voice(self, c: Call) -> None:
        with self.lock:
            cfg, v = self._voice(c, c.arg(1), "nn::audio::ReleaseVoiceSlot")
            del self.voice_at[c.arg(1)]
            del cfg.voices[v.vid]
            cfg.free_channels = sorted(cfg.free_channels + v.channels)
            c.u32(c.arg(1), 0, "nn::audio::ReleaseVoiceSlot")

    def destination(self, c: Call) -> None:
        what = "nn::audio::SetVoiceDestination"
        with self.lock:
            _cfg, v = self._voice(c, c.arg(1), what)
            self._mix(c, c.arg(2), what)
            v.mix = L.FINAL_MIX_ID

    def mix_volume(self, c: Call) -> None:
        what = "nn::audio::SetVoiceMixVolume"
        with self.lock:
            _cfg, v = self._voice(c, c.arg(0), what)
            cfg = self._mix(c, c.arg(1), what)
            src, dst, vol = c.sarg32(2), c.sarg32(3), self._f(c, 0)
            if not (0 <= src < len(v.channels) and 0 <= dst < cfg.final_buffers and abs(vol) <= 128.0):
                raise GuestError(f"{what}: channel {src} -> buffer {dst} at volume {vol} is out of range")
            v.mix_volumes[src, dst] = vol

    def voice_volume(self, c: Call) -> None:
        with self.lock:
            vol = self._f(c, 0)
            if not 0.0 <= vol <= 128.0:
                raise GuestError(f"nn::audio::SetVoiceVolume: volume {vol} (0..128)")
            self._voice(c, c.arg(0), "nn::audio::SetVoiceVolume")[1].volume = vol

    def voice_pitch(self, c: Call) -> None:
        with self.lock:
            pitch = self._f(c, 0)
            if not 0.0 < pitch <= 16.0:
                raise GuestError(f"nn::audio::SetVoicePitch: pitch {pitch} (0..16)")
            self._voice(c, c.arg(0), "nn::audio::SetVoicePitch")[1].pitch = pitch

    def play_state(self, c: Call) -> None:
        with self.lock:
            st = c.sarg32(1)
            if st not in STATES:
                raise GuestError(f"nn::audio::SetVoicePlayState: state {st} (0 started, 1 stopped, 2 paused)")
            self._voice(c, c.arg(0), "nn::audio::SetVoicePlayState")[1].play_state = st

    def get_play_state(self, c: Call) -> int:
        with self.lock:
            return self._voice(c, c.arg(0), "nn::audio::GetVoicePlayState")[1].play_state

    def append(self, c: Call) -> int:
        what = "nn::audio::AppendWaveBuffer"
        with self.lock:
            _cfg, v = self._voice(c, c.arg(0), what)
            wb = c.arg(1)
            buf, size, start, end, loop, eos, ctx, ctx_size = WAVE.unpack(c.read(wb, WAVE.size, what))
            if len(v.queued) >= MAX_QUEUED:
                return 0
            if size:
                c.check(buf, size, 1, what + " (sample buffer)")
            if start < 0 or end < start:
                raise GuestError(f"{what}: samples {start}..{end}")
            v.ring[v.appended % MAX_QUEUED] = C.Wave(buf, size, start, end, bool(loop), bool(eos), False, 0, ctx, ctx_size)
            v.appended += 1
            v.queued.append(wb)
        return 1

    def get_released(self, c: Call) -> int:
        with self.lock:
            v = self._voice(c, c.arg(0), "nn::audio::GetReleasedWaveBuffer")[1]
            return v.released.popleft() if v.released else 0

    def played(self, c: Call) -> int:
        with self.lock:
            return self._voice(c, c.arg(0), "nn::audio::GetVoicePlayedSampleCount")[1].played

    # ---- update -------------------------------------------------------------------------
    def request_update(self, c: Call) -> int:
        what = "nn::audio::RequestUpdateAudioRenderer"
        src = self._renderer(c.arg(0), what)
        with self.lock:
            cfg = self._config(c, c.arg(1), what)
            data = self._request(cfg)
            res, resp = src.update(data)
            if res:
                return res
            self._response(cfg, resp)
            for v in cfg.voices.values():
                v.is_new = False
                for w in v.ring:
                    if w is not None:
                        w.sent_to_server = True
            for pool in cfg.pools:
                if pool[2] == L.POOL_REQUEST_ATTACH:
                    pool[2] = L.POOL_ATTACHED
        return 0

    def _request(self, cfg: ConfigModel) -> bytes:
        u = C.Update(cfg.p, sinks=list(cfg.sinks), pools=[tuple(p) for p in cfg.pools])
        if cfg.final_buffers:
            u.mixes.append(C.Mix(L.FINAL_MIX_ID, cfg.final_buffers, cfg.final_volume))
        for v in cfg.voices.values():
            for i, ch in enumerate(v.channels):
                u.channels[ch] = v.mix_volumes[i]
            u.voices[v.vid] = C.Voice(
                v.vid,
                v.mix,
                v.channels,
                v.fmt,
                v.rate,
                v.pitch,
                v.volume,
                v.play_state,
                v.is_new,
                [w if w is not None else C.Wave(0, 0, 0, 0, sent_to_server=True) for w in v.ring],
                v.appended % MAX_QUEUED,
                v.state_address,
            )
        return u.pack()

    def _response(self, cfg: ConfigModel, resp: bytes) -> None:
        at = L.HEADER_SIZE + cfg.p.mempool_count * L.MEMPOOL_OUT_SIZE
        for v in cfg.voices.values():
            played, consumed, _drops = struct.unpack_from("<QII", resp, at + v.vid * L.VOICE_OUT_SIZE)
            v.played = played
            for _ in range(max(0, consumed - v.consumed_seen)):
                if v.queued:
                    v.released.append(v.queued.popleft())
            v.consumed_seen = consumed

    def functions(self) -> list[HostFunction]:
        F = HostFunction
        P, H, CF = "NS0_22AudioRendererParameterE", "NS0_19AudioRendererHandleE", "NS0_19AudioRendererConfigE"
        V, M = "NS0_9VoiceTypeE", "NS0_12FinalMixTypeE"
        return [
            F(
                f"_ZN2nn5audio32InitializeAudioRendererParameterEP{P}",
                "nn::audio::InitializeAudioRendererParameter(AudioRendererParameter*)",
                self.init_parameter,
            ),
            F(
                f"_ZN2nn5audio30GetAudioRendererWorkBufferSizeERK{P}",
                "nn::audio::GetAudioRendererWorkBufferSize(const AudioRendererParameter&)",
                self.work_buffer_size,
            ),
            F(
                f"_ZN2nn5audio17OpenAudioRendererEP{H}RK{P}Pvm",
                "nn::audio::OpenAudioRenderer(AudioRendererHandle*, const AudioRendererParameter&, void*, size_t)",
                self.open_renderer,
            ),
            F(f"_ZN2nn5audio18StartAudioRendererE{H}", "nn::audio::StartAudioRenderer(AudioRendererHandle)", self.start),
            F(f"_ZN2nn5audio17StopAudioRendererE{H}", "nn::audio::StopAudioRenderer(AudioRendererHandle)", self.stop),
            F(f"_ZN2nn5audio18CloseAudioRendererE{H}", "nn::audio::CloseAudioRenderer(AudioRendererHandle)", self.close),
            F(
                f"_ZN2nn5audio36GetAudioRendererConfigWorkBufferSizeERK{P}",
                "nn::audio::GetAudioRendererConfigWorkBufferSize(const AudioRendererParameter&)",
                self.config_size,
            ),
            F(
                f"_ZN2nn5audio29InitializeAudioRendererConfigEP{CF}RK{P}Pvm",
                "nn::audio::InitializeAudioRendererConfig(AudioRendererConfig*, const AudioRendererParameter&, void*, size_t)",
                self.init_config,
            ),
            F(
                f"_ZN2nn5audio26RequestUpdateAudioRendererE{H}PK{CF}",
                "nn::audio::RequestUpdateAudioRenderer(AudioRendererHandle, const AudioRendererConfig*)",
                self.request_update,
            ),
            F(
                f"_ZN2nn5audio15AcquireFinalMixEP{CF}P{M}i",
                "nn::audio::AcquireFinalMix(AudioRendererConfig*, FinalMixType*, int)",
                self.acquire_final_mix,
            ),
            F(
                f"_ZN2nn5audio17SetFinalMixVolumeEP{M}f",
                "nn::audio::SetFinalMixVolume(FinalMixType*, float)",
                self.final_mix_volume,
            ),
            F(
                f"_ZN2nn5audio13AddDeviceSinkEP{CF}PNS0_14DeviceSinkTypeEP{M}PKaiPKc",
                "nn::audio::AddDeviceSink(AudioRendererConfig*, DeviceSinkType*, FinalMixType*, const int8_t*, int, const char*)",
                self.add_device_sink,
            ),
            F(
                f"_ZN2nn5audio17AcquireMemoryPoolEP{CF}PNS0_14MemoryPoolTypeEPvm",
                "nn::audio::AcquireMemoryPool(AudioRendererConfig*, MemoryPoolType*, void*, size_t)",
                self.acquire_pool,
            ),
            F(
                "_ZN2nn5audio23RequestAttachMemoryPoolEPNS0_14MemoryPoolTypeE",
                "nn::audio::RequestAttachMemoryPool(MemoryPoolType*)",
                self.attach_pool,
            ),
            F(
                f"_ZN2nn5audio16AcquireVoiceSlotEP{CF}P{V}iiNS0_12SampleFormatEiPKvm",
                "nn::audio::AcquireVoiceSlot(AudioRendererConfig*, VoiceType*, int, int, SampleFormat, int, const void*, size_t)",
                self.acquire_voice,
            ),
            F(
                f"_ZN2nn5audio16ReleaseVoiceSlotEP{CF}P{V}",
                "nn::audio::ReleaseVoiceSlot(AudioRendererConfig*, VoiceType*)",
                self.release_voice,
            ),
            F(
                f"_ZN2nn5audio19SetVoiceDestinationEP{CF}P{V}P{M}",
                "nn::audio::SetVoiceDestination(AudioRendererConfig*, VoiceType*, FinalMixType*)",
                self.destination,
            ),
            F(
                f"_ZN2nn5audio17SetVoiceMixVolumeEP{V}P{M}fii",
                "nn::audio::SetVoiceMixVolume(VoiceType*, FinalMixType*, float, int, int)",
                self.mix_volume,
            ),
            F(f"_ZN2nn5audio14SetVoiceVolumeEP{V}f", "nn::audio::SetVoiceVolume(VoiceType*, float)", self.voice_volume),
            F(f"_ZN2nn5audio13SetVoicePitchEP{V}f", "nn::audio::SetVoicePitch(VoiceType*, float)", self.voice_pitch),
            F(
                f"_ZN2nn5audio17SetVoicePlayStateEP{V}NS1_9PlayStateE",
                "nn::audio::SetVoicePlayState(VoiceType*, VoiceType::PlayState)",
                self.play_state,
            ),
            F(f"_ZN2nn5audio17GetVoicePlayStateEPK{V}", "nn::audio::GetVoicePlayState(const VoiceType*)", self.get_play_state),
            F(
                f"_ZN2nn5audio16AppendWaveBufferEP{V}PKNS0_10WaveBufferE",
                "nn::audio::AppendWaveBuffer(VoiceType*, const WaveBuffer*)",
                self.append,
            ),
            F(f"_ZN2nn5audio21GetReleasedWaveBufferEP{V}", "nn::audio::GetReleasedWaveBuffer(VoiceType*)", self.get_released),
            F(
                f"_ZN2nn5audio25GetVoicePlayedSampleCountEPK{V}",
                "nn::audio::GetVoicePlayedSampleCount(const VoiceType*)",
                self.played,
            ),
        ]
