"""Binary layouts and constants of the audio renderer's parameter and update buffers.

Sources of facts (read, not copied): libnx ``nx/include/switch/services/audren.h`` (section
order of the request and response, the header, memory pool, channel resource, voice, mix and
sink records, ``AUDREN_*`` constants), Ryujinx ``Ryujinx.Audio/Renderer/Parameter/*.cs`` (packed
sizes: voice 0x170, wave buffer 0x38, effect 0xC0 with 0xA0 bytes of type-specific data, mix
0x930, sink 0x140; the delay and biquad effect parameters; the effect type numbers),
Ryujinx ``Ryujinx.Audio/Renderer/Server/BehaviourContext.cs`` and ``StateUpdater.cs`` (what each
revision changes in the buffers, the response header's RenderInfoSize field),
Ryujinx ``Ryujinx.Audio/Renderer/ResultCode.cs`` and ``Ryujinx.HLE/.../Audio/ResultCode.cs`` (audio
result codes, module 153), switchbrew "Audio services" (PCM format numbers).
"""

from __future__ import annotations

import struct

MODULE = 153


def result(desc: int) -> int:
    return MODULE | (desc << 9)


# Horizon's audio results (module 153).
RESULT_SUCCESS = 0
RESULT_UNSUPPORTED_REVISION = result(2)  # service-level: open with an unknown REVn
RESULT_UNSUPPORTED_SAMPLE_RATE = result(3)
RESULT_WORK_BUFFER_TOO_SMALL = result(4)
RESULT_INVALID_UPDATE_INFO = result(41)
RESULT_INVALID_ADDRESS_INFO = result(42)
RESULT_INVALID_MIX_SORTING = result(43)
RESULT_UNSUPPORTED_OPERATION = result(513)

SAMPLE_RATES = {32000: 160, 48000: 240}  # AUDREN_SAMPLES_PER_FRAME_32KHZ / _48KHZ
MIX_BUFFER_COUNT_MAX = 24
CHANNEL_COUNT_MAX = 6
WAVE_BUFFER_COUNT = 4
FINAL_MIX_ID = 0
UNUSED_MIX_ID = 0x7FFFFFFF
UNUSED_SPLITTER_ID = 0xFFFFFFFF


def revision_magic(n: int) -> int:
    """'REV' + chr(0x30 + n), little-endian: REV1 = 0x31564552."""
    return int.from_bytes(b"REV" + bytes([0x30 + n]), "little")


def revision_number(magic: int) -> int | None:
    raw = magic.to_bytes(4, "little")
    if raw[:3] != b"REV" or not 1 <= raw[3] - 0x30 <= 15:
        return None
    return raw[3] - 0x30


# The parameter block given to OpenAudioRenderer (AudioRendererParameterInternal), 0x34 bytes.
PARAMETER = struct.Struct("<IIIIIIIIBBBBIIII")
PARAMETER_FIELDS = (
    "sample_rate",
    "sample_count",
    "mix_buffer_count",
    "submix_count",
    "voice_count",
    "sink_count",
    "effect_count",
    "performance_frame_count",
    "voice_drop_enabled",
    "_unk21",
    "rendering_device",
    "execution_mode",
    "splitter_count",
    "splitter_destination_count",
    "external_context_size",
    "revision",
)

# Update request / response header: revision, 8 section sizes, 6 reserved words, total size.
HEADER = struct.Struct("<I8I24xI")
HEADER_SIZE = 0x40
SECTIONS = ("behaviour", "memory_pools", "voices", "channels", "effects", "mixes", "sinks", "performance")

BEHAVIOUR_IN_SIZE = 0x10  # revision u32, pad, flags u64
BEHAVIOUR_OUT_SIZE = 0xB0
MEMPOOL_IN_SIZE = 0x20  # address u64, size u64, state u32, pad[3]
MEMPOOL_OUT_SIZE = 0x10
CHANNEL_IN_SIZE = 0x70  # id u32, mix volumes f32[24], is_used u8, pad[11]
VOICE_IN_SIZE = 0x170
VOICE_OUT_SIZE = 0x10  # played sample count u64, wave buffers consumed u32, voice drops u32
WAVEBUF_SIZE = 0x38
BIQUAD_SIZE = 0xC  # enable u8, pad, numerator s16[3], denominator s16[2] (Q14)
EFFECT_IN_SIZE = 0xC0
EFFECT_OUT_SIZE = 0x10
EFFECT_OUT_V2_SIZE = 0x90  # REV9+: state, reserved, 0x80 bytes of result state (Ryujinx EffectOutStatusVersion2)
MIX_DIRTY_HEADER_SIZE = 0x20  # REV7+: magic, mix count, 24 reserved, then only the mixes sent (MixInParameterDirtyOnlyUpdate)
RENDER_INFO_OUT_SIZE = 0x10  # REV5+: elapsed frame count u64, reserved (RendererInfoOutStatus), after the behaviour
HEADER_RENDER_INFO = 0x28  # where the response header gives its size (UpdateDataHeader.RenderInfoSize)
HEADER_SPLITTER = 0x24  # the request's splitter section size (yuzu: size.splitter; Ryujinx: Unknown24)

# Revisions that change the layouts (Ryujinx BehaviourContext: REV5 6.0.0, REV7 8.0.0, REV9 12.0.0).
REV_RENDER_INFO, REV_MIX_DIRTY_ONLY, REV_EFFECT_V2 = 5, 7, 9
MIX_IN_SIZE = 0x930
SINK_IN_SIZE = 0x140
SINK_OUT_SIZE = 0x20
PERF_IN_SIZE = 0x10
PERF_OUT_SIZE = 0x10

# Memory pool states.
POOL_INVALID, POOL_NEW, POOL_REQUEST_DETACH, POOL_DETACHED, POOL_REQUEST_ATTACH, POOL_ATTACHED, POOL_RELEASED = range(7)

# Voice play states and sample formats.
PLAY_STARTED, PLAY_STOPPED, PLAY_PAUSED = 0, 1, 2
FMT_PCM16, FMT_PCM_FLOAT, FMT_ADPCM = 2, 5, 6

# Effect types.
(
    EFFECT_INVALID,
    EFFECT_BUFFER_MIX,
    EFFECT_AUX,
    EFFECT_DELAY,
    EFFECT_REVERB,
    EFFECT_REVERB3D,
    EFFECT_BIQUAD,
    EFFECT_LIMITER,
    EFFECT_CAPTURE,
) = range(9)

# Sink types.
SINK_INVALID, SINK_DEVICE, SINK_CIRCULAR = 0, 1, 2

Q14 = 1.0 / 16384.0
Q15 = 1.0 / 32768.0


def adpcm_data_size(samples: int) -> int:
    """Bytes holding ``samples`` DSP-ADPCM samples: 8 per full 14-sample frame, then the header
    byte and one nibble per sample of a partial frame."""
    frames, rest = divmod(samples, 14)
    size = frames * 8
    if rest:
        size += 1 + (rest + 1) // 2
    return size
