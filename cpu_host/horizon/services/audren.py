"""audren:u — the audio renderer over IPC (switchbrew "Audio services"; libnx ``audren.c``).

IAudioRendererManager: 0 OpenAudioRenderer (AudioRendererParameterInternal 0x34 bytes, pad,
u64 work buffer size, u64 ARUID; PID; copy handles: the work buffer's transfer memory and the
process -> IAudioRenderer), 1 GetWorkBufferSize (parameter -> u64), 2 GetAudioDeviceService
(u64 ARUID -> IAudioDevice), 4 GetAudioDeviceServiceWithRevisionInfo (u32 revision, u64 ARUID ->
IAudioDevice).

IAudioRenderer: 0 GetSampleRate, 1 GetSampleCount, 2 GetMixBufferCount (-> u32), 3 GetState (->
u32: 0 started, 1 stopped), 4 RequestUpdate (buffers in libnx's order: B output, B performance,
A input), 5 Start, 6 Stop, 7 QuerySystemEvent (-> copy handle, signalled every rendered frame),
8 SetRenderingTimeLimit (u32 percent), 9 GetRenderingTimeLimit (-> u32), 10 RequestUpdateAuto
(the same buffers auto-selected: B/C output and performance, A/X input).

A malformed parameter block or update request is answered with Horizon's audio result (module
153: InvalidUpdateInfo 41, InvalidMixSorting 43, UnsupportedSampleRate 3, UnsupportedRevision 2,
names from Ryujinx's audio ResultCode tables) and changes nothing; an output buffer too small for
the response is BufferSizeTooSmall (4).  The renderer is the one ``audio.host.AudioHost`` runs
for the nn::audio functions too (``audio/nn_audio.py``).

IAudioDevice: 0 ListAudioDeviceName (B: names of 0x100 bytes -> u32 count), 1
SetAudioDeviceOutputVolume (A name, f32), 2 GetAudioDeviceOutputVolume (A name -> f32), 3
GetActiveAudioDeviceName (B), 4 QueryAudioDeviceSystemEvent, 5 GetActiveChannelCount (-> u32),
6/7/8/10 the Auto forms of 0/1/2/3, 11 QueryAudioDeviceInputEvent, 12
QueryAudioDeviceOutputEvent (copy handles).  Device names as the console's: AudioTvOutput
(docked), AudioBuiltInSpeakerOutput, AudioStereoJackOutput.
"""

from __future__ import annotations

import logging
import struct
from typing import Callable

from cpu_host.horizon.audio import layout as L
from cpu_host.horizon.audio.guestmem import GuestMemory
from cpu_host.horizon.audio.host import AudioHost, RendererSource
from cpu_host.horizon.audio.request import AudioError, parse_parameter, work_buffer_size
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.kernel import KernelBridge
from cpu_host.horizon.ipc.results import IpcError

log = logging.getLogger("cpu_host.ipc.audren")
RESULT_BUFFER_SIZE_TOO_SMALL = L.result(4)
DEVICE_NAME_SIZE = 0x100
DEVICES = ("AudioTvOutput", "AudioBuiltInSpeakerOutput", "AudioStereoJackOutput")
KernelRef = Callable[[], KernelBridge]


def _parameter(ctx: Context):
    try:
        return parse_parameter(ctx.take(L.PARAMETER.size, 4))
    except AudioError as e:
        raise IpcError(e.result, str(e)) from None


class AudioRenderer(Interface):
    name = "nn::audio::detail::IAudioRenderer"
    service = "audren:u"

    def __init__(self, source: RendererSource, kernel: KernelRef) -> None:
        self.src, self.kernel = source, kernel
        self.event = 0
        self.time_limit = 100

    def _signal(self) -> None:
        if self.event:
            self.kernel().signal(self.event)

    @command(0)
    def get_sample_rate(self, ctx: Context) -> None:
        ctx.push("I", self.src.r.p.sample_rate)

    @command(1)
    def get_sample_count(self, ctx: Context) -> None:
        ctx.push("I", self.src.r.p.sample_count)

    @command(2)
    def get_mix_buffer_count(self, ctx: Context) -> None:
        ctx.push("I", self.src.r.p.mix_buffer_count)

    @command(3)
    def get_state(self, ctx: Context) -> None:
        ctx.push("I", 0 if self.src.started else 1)

    def _update(self, data: bytes, out_size: int) -> bytes:
        res, resp = self.src.update(data)
        if res:
            raise IpcError(res, "RequestUpdate refused (the log names section, record, field and offset)")
        if len(resp) > out_size:
            raise IpcError(
                RESULT_BUFFER_SIZE_TOO_SMALL,
                f"RequestUpdate: the response needs {len(resp):#x} bytes, the output buffer has {out_size:#x}",
            )
        return resp

    @command(4)
    def request_update(self, ctx: Context) -> None:
        ctx.write_b(0, self._update(ctx.read_a(0), ctx.b_size(0)))

    @command(10)
    def request_update_auto(self, ctx: Context) -> None:
        ctx.write_out_auto(0, 0, self._update(ctx.read_in_auto(0, 0), ctx.out_auto_size(0, 0)))

    @command(5)
    def start(self, ctx: Context) -> None:
        self.src.start()

    @command(6)
    def stop(self, ctx: Context) -> None:
        self.src.stop()

    @command(7)
    def query_system_event(self, ctx: Context) -> None:
        k = self.kernel()
        if not self.event:
            self.event = k.event()
            self.src.on_frame = self._signal
        ctx.out_copy.append(k.event_handle(self.event))

    @command(8)
    def set_rendering_time_limit(self, ctx: Context) -> None:
        self.time_limit = ctx.u32()

    @command(9)
    def get_rendering_time_limit(self, ctx: Context) -> None:
        ctx.push("I", self.time_limit)

    def closed(self) -> None:
        self.src.close()


class AudioDevice(Interface):
    name = "nn::audio::detail::IAudioDevice"
    service = "audren:u"

    def __init__(self, kernel: KernelRef, docked: bool) -> None:
        self.kernel = kernel
        self.active = DEVICES[0] if docked else DEVICES[1]
        self.volumes = {d: 1.0 for d in DEVICES}
        self.events: dict[int, int] = {}

    @staticmethod
    def _names(names: tuple[str, ...], size: int) -> tuple[bytes, int]:
        n = min(len(names), size // DEVICE_NAME_SIZE)
        return b"".join(x.encode().ljust(DEVICE_NAME_SIZE, b"\0") for x in names[:n]), n

    @staticmethod
    def _name(raw: bytes) -> str:
        return raw.split(b"\0", 1)[0].decode("ascii", "replace")

    @command(0)
    def list_names(self, ctx: Context) -> None:
        data, n = self._names(DEVICES, ctx.b_size(0))
        ctx.write_b(0, data)
        ctx.push("I", n)

    @command(6)
    def list_names_auto(self, ctx: Context) -> None:
        data, n = self._names(DEVICES, ctx.out_auto_size(0, 0))
        ctx.write_out_auto(0, 0, data)
        ctx.push("I", n)

    @command(1)
    def set_volume(self, ctx: Context) -> None:
        self._set(self._name(ctx.read_a(0)), struct.unpack("<f", ctx.take(4, 4))[0])

    @command(7)
    def set_volume_auto(self, ctx: Context) -> None:
        self._set(self._name(ctx.read_in_auto(0, 0)), struct.unpack("<f", ctx.take(4, 4))[0])

    def _set(self, name: str, volume: float) -> None:
        if name in self.volumes and 0.0 <= volume <= 1.0:
            self.volumes[name] = volume

    @command(2)
    def get_volume(self, ctx: Context) -> None:
        ctx.push("f", self.volumes.get(self._name(ctx.read_a(0)), 0.0))

    @command(8)
    def get_volume_auto(self, ctx: Context) -> None:
        ctx.push("f", self.volumes.get(self._name(ctx.read_in_auto(0, 0)), 0.0))

    @command(3)
    def get_active_name(self, ctx: Context) -> None:
        ctx.write_b(0, self.active.encode().ljust(DEVICE_NAME_SIZE, b"\0"))

    @command(10)
    def get_active_name_auto(self, ctx: Context) -> None:
        ctx.write_out_auto(0, 0, self.active.encode().ljust(DEVICE_NAME_SIZE, b"\0"))

    def _event(self, ctx: Context, which: int) -> None:
        k = self.kernel()
        if which not in self.events:
            self.events[which] = k.event()
        ctx.out_copy.append(k.event_handle(self.events[which]))

    @command(4)
    def query_system_event(self, ctx: Context) -> None:
        self._event(ctx, 4)

    @command(5)
    def get_active_channel_count(self, ctx: Context) -> None:
        ctx.push("I", 2)

    @command(11)
    def query_input_event(self, ctx: Context) -> None:
        self._event(ctx, 11)

    @command(12)
    def query_output_event(self, ctx: Context) -> None:
        self._event(ctx, 12)


class AudioRendererManager(Interface):
    name = "nn::audio::detail::IAudioRendererManager"
    service = "audren:u"

    def __init__(self, host: AudioHost, kernel: KernelRef, docked: bool) -> None:
        self.host, self.kernel, self.docked = host, kernel, docked

    @command(0)
    def open_audio_renderer(self, ctx: Context) -> None:
        param = _parameter(ctx)
        ctx.u64()  # the work buffer's size: the renderer's state lives in the host
        ctx.u64()  # ARUID
        k = self.kernel()
        src = self.host.open_renderer(param, GuestMemory(k.ffi, k.lib))
        log.info(
            "audren:u: OpenAudioRenderer(%d Hz, %d voices, %d mix buffers, %d submixes, %d effects, %d sinks, REV%d)",
            param.sample_rate,
            param.voice_count,
            param.mix_buffer_count,
            param.submix_count,
            param.effect_count,
            param.sink_count,
            L.revision_number(param.revision),
        )
        ctx.out_objects.append(AudioRenderer(src, self.kernel))

    @command(1)
    def get_work_buffer_size(self, ctx: Context) -> None:
        ctx.push("Q", work_buffer_size(_parameter(ctx)))

    @command(2)
    def get_audio_device_service(self, ctx: Context) -> None:
        ctx.out_objects.append(AudioDevice(self.kernel, self.docked))

    @command(4)
    def get_audio_device_service_with_revision(self, ctx: Context) -> None:
        ctx.out_objects.append(AudioDevice(self.kernel, self.docked))


def register(server: Server, host: AudioHost, kernel: KernelRef, docked: bool = True) -> None:
    server.services["audren:u"] = lambda: AudioRendererManager(host, kernel, docked)
