"""audout:u — audio output by buffers (switchbrew "Audio services"; libnx ``audout.c``/``audout.h``).

IAudioOutManager: 0 ListAudioOuts (B: names of 0x100 bytes -> u32 count), 1 OpenAudioOut (A device
name in, B device name out, u32 sample rate, u32 channel count, u64 client PID; PID; copy handle:
the process -> IAudioOut and u32 sample rate, u32 channel count, u32 PCM format, u32 state), 2/3
their Auto forms.  The one device is "DeviceOut" (an empty name opens it; another name is
DeviceNotFound 153-1).  Sample rate 0 means 48000, any other but 48000 is UnsupportedSampleRate
(153-3).  Channel count: switchbrew says the upper u16 is used (libnx sends 2 << 16); a value with
an empty upper half is read from the lower one, 0 means 2; 1, 2 and 6 are accepted, others are
InvalidChannelCount (153-10).  The format is PCM16 (2), the state Stopped (1).

IAudioOut: 0 GetAudioOutState (-> u32: 0 started, 1 stopped), 1 Start, 2 Stop, 3
AppendAudioOutBuffer (u64 tag, A: the AudioOutBuffer record: next u64, sample buffer u64,
buffer size u64, data size u64, data offset u64), 4 RegisterBufferEvent (-> copy handle,
signalled when a buffer is released), 5 GetReleasedAudioOutBuffers (B: u64 tags -> u32 count), 6
ContainsAudioOutBuffer (u64 tag -> u8), 7/8 the Auto forms of 3/5, 9 GetAudioOutBufferCount (->
u32), 10 GetAudioOutPlayedSampleCount (-> u64), 11 FlushAudioOutBuffers (-> u8), 12
SetAudioOutVolume (f32), 13 GetAudioOutVolume (-> f32).  At most 32 buffers queued
(TooManyBuffersInUse 153-8).  The samples are copied when the buffer is appended, ``data size``
bytes from the sample buffer (the data offset is not applied: libnx's header marks it unused);
a sample buffer that is not readable guest memory is InvalidCurrentMemory; a record shorter
than 0x28 bytes or more than 10 s of samples is BufferSizeTooSmall (153-4).
"""

from __future__ import annotations

import logging
import struct
from typing import Callable

import numpy as np

from cpu_host.horizon.audio import layout as L
from cpu_host.horizon.audio.host import AudioHost, AudioOutSource
from cpu_host.horizon.audio.output import AUDOUT_MAX_BUFFERS
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.kernel import KernelBridge
from cpu_host.horizon.ipc.results import IpcError

log = logging.getLogger("cpu_host.ipc.audout")
DEVICE = "DeviceOut"
NAME_SIZE = 0x100
RESULT_DEVICE_NOT_FOUND = L.result(1)
RESULT_INVALID_CHANNEL_COUNT = L.result(10)
RESULT_BUFFER_SIZE_TOO_SMALL = L.result(4)
OUT_BUFFER = struct.Struct("<QQQQQ")
PCM16, STARTED, STOPPED = 2, 0, 1
MAX_SAMPLES = 48000 * 6 * 10  # 10 s of 5.1 in one buffer: more is refused, not allocated
KernelRef = Callable[[], KernelBridge]


class AudioOut(Interface):
    name = "nn::audio::detail::IAudioOut"
    service = "audout:u"

    def __init__(self, host: AudioHost, src: AudioOutSource, kernel: KernelRef) -> None:
        self.host, self.src, self.kernel = host, src, kernel
        self.event = 0
        src.on_release = self._signal

    def _signal(self) -> None:
        if self.event:
            self.kernel().signal(self.event)

    @command(0)
    def get_state(self, ctx: Context) -> None:
        ctx.push("I", STARTED if self.src.started else STOPPED)

    @command(1)
    def start(self, ctx: Context) -> None:
        with self.host.lock:
            self.src.start()

    @command(2)
    def stop(self, ctx: Context) -> None:
        with self.host.lock:
            self.src.stop()

    def _append(self, ctx: Context, record: bytes) -> None:
        tag = ctx.u64()
        if len(record) < OUT_BUFFER.size:
            raise IpcError(
                RESULT_BUFFER_SIZE_TOO_SMALL,
                f"AppendAudioOutBuffer: the record is {len(record)} bytes, want {OUT_BUFFER.size:#x}",
            )
        _next, buf, _cap, size, _offset = OUT_BUFFER.unpack_from(record)
        if size > MAX_SAMPLES * 2:
            raise IpcError(RESULT_BUFFER_SIZE_TOO_SMALL, f"AppendAudioOutBuffer: data size {size:#x} is more than 10 s of audio")
        pcm = self.kernel().read(buf, size) if size else b""
        with self.host.lock:
            res = self.src.append(tag, np.frombuffer(pcm, "<i2", len(pcm) // 2))
        if res:
            raise IpcError(res, f"AppendAudioOutBuffer: {AUDOUT_MAX_BUFFERS} buffers are queued already")

    @command(3)
    def append(self, ctx: Context) -> None:
        self._append(ctx, ctx.read_a(0))

    @command(7)
    def append_auto(self, ctx: Context) -> None:
        self._append(ctx, ctx.read_in_auto(0, 0))

    @command(4)
    def register_buffer_event(self, ctx: Context) -> None:
        k = self.kernel()
        if not self.event:
            self.event = k.event()
            with self.host.lock:
                pending = bool(self.src.released)
            if pending:
                k.signal(self.event)
        ctx.out_copy.append(k.event_handle(self.event))

    def _released(self, ctx: Context, size: int, write: Callable[[bytes], int]) -> None:
        with self.host.lock:
            tags = self.src.get_released(size // 8)
        write(struct.pack(f"<{len(tags)}Q", *tags))
        ctx.push("I", len(tags))

    @command(5)
    def get_released(self, ctx: Context) -> None:
        self._released(ctx, ctx.b_size(0), lambda d: ctx.write_b(0, d))

    @command(8)
    def get_released_auto(self, ctx: Context) -> None:
        self._released(ctx, ctx.out_auto_size(0, 0), lambda d: ctx.write_out_auto(0, 0, d))

    @command(6)
    def contains(self, ctx: Context) -> None:
        tag = ctx.u64()
        with self.host.lock:
            ctx.push("B", int(self.src.contains(tag)))

    @command(9)
    def buffer_count(self, ctx: Context) -> None:
        with self.host.lock:
            ctx.push("I", self.src.buffer_count())

    @command(10)
    def played_sample_count(self, ctx: Context) -> None:
        ctx.push("Q", self.src.played_samples)

    @command(11)
    def flush(self, ctx: Context) -> None:
        with self.host.lock:
            had = self.src.flush()
        if had:
            self._signal()
        ctx.push("B", int(had))

    @command(12)
    def set_volume(self, ctx: Context) -> None:
        v = struct.unpack("<f", ctx.take(4, 4))[0]
        if v == v and 0.0 <= v <= 128.0:
            self.src.volume = v

    @command(13)
    def get_volume(self, ctx: Context) -> None:
        ctx.push("f", self.src.volume)

    def closed(self) -> None:
        self.src.close()


class AudioOutManager(Interface):
    name = "nn::audio::detail::IAudioOutManager"
    service = "audout:u"

    def __init__(self, host: AudioHost, kernel: KernelRef) -> None:
        self.host, self.kernel = host, kernel

    def _list(self, ctx: Context, size: int, write: Callable[[bytes], int]) -> None:
        n = min(1, size // NAME_SIZE)
        write(DEVICE.encode().ljust(NAME_SIZE, b"\0") * n)
        ctx.push("I", n)

    @command(0)
    def list_audio_outs(self, ctx: Context) -> None:
        self._list(ctx, ctx.b_size(0), lambda d: ctx.write_b(0, d))

    @command(2)
    def list_audio_outs_auto(self, ctx: Context) -> None:
        self._list(ctx, ctx.out_auto_size(0, 0), lambda d: ctx.write_out_auto(0, 0, d))

    def _open(self, ctx: Context, name_in: bytes, write: Callable[[bytes], int]) -> None:
        rate, chans = ctx.u32(), ctx.u32()
        ctx.u64()  # client PID
        name = name_in.split(b"\0", 1)[0].decode("ascii", "replace")
        if name not in ("", DEVICE):
            raise IpcError(RESULT_DEVICE_NOT_FOUND, f"OpenAudioOut: no device {name!r} (the one device is {DEVICE})")
        if rate not in (0, 48000):
            raise IpcError(L.RESULT_UNSUPPORTED_SAMPLE_RATE, f"OpenAudioOut: sample rate {rate} (only 48000)")
        count = (chans >> 16) or (chans & 0xFFFF) or 2
        if count not in (1, 2, 6):
            raise IpcError(RESULT_INVALID_CHANNEL_COUNT, f"OpenAudioOut: channel count {chans:#x} (1, 2 or 6)")
        src = self.host.open_audio_out(count)
        write(DEVICE.encode().ljust(NAME_SIZE, b"\0"))
        log.info("audout:u: OpenAudioOut(%s, 48000 Hz, %d channels)", DEVICE, count)
        ctx.push("IIII", 48000, count, PCM16, STOPPED)
        ctx.out_objects.append(AudioOut(self.host, src, self.kernel))

    @command(1)
    def open_audio_out(self, ctx: Context) -> None:
        self._open(ctx, ctx.read_a(0), lambda d: ctx.write_b(0, d))

    @command(3)
    def open_audio_out_auto(self, ctx: Context) -> None:
        self._open(ctx, ctx.read_in_auto(0, 0), lambda d: ctx.write_out_auto(0, 0, d))


def register(server: Server, host: AudioHost, kernel: KernelRef) -> None:
    server.services["audout:u"] = lambda: AudioOutManager(host, kernel)
