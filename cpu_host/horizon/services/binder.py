"""The binder relay's IGraphicBufferProducer (vi's IHOSBinderDriver; switchbrew "Nvnflinger
services"; libnx ``display/parcel.c``, ``buffer_producer.c``, ``nvidia/graphic_buffer.h``): the
buffer queue a framebuffer program dequeues from and queues to.

Parcel (Android's): a 0x10-byte header (payload size, payload offset, objects size, objects
offset), the payload of 32-bit words: an interface token (int32 0x100, then String16
"android.gui.IGraphicBufferProducer": int32 length, UTF-16 with a NUL, padded to 4), then the
arguments; a flattened object is int32 length, int32 fd count (0), the bytes padded to 4.
Transactions (codes): 1 REQUEST_BUFFER(slot) -> int32 non-null, [flattened buffer], status;
2 SET_BUFFER_COUNT; 3 DEQUEUE_BUFFER(async, width, height, format, usage) -> int32 slot, int32
1, flattened NvMultiFence (0x24 bytes: count 0), status; 7 QUEUE_BUFFER(slot, flattened
BqBufferInput 0x54 bytes, swap interval at 0x2C) -> BqBufferOutput (width, height, transform hint, pending) and status;
8 CANCEL_BUFFER(slot, fence); 9 QUERY(what: 0 width, 1 height, 2 format) -> value, status;
10 CONNECT(listener, api, controlled by app) -> BqBufferOutput, status; 11 DISCONNECT(api);
14 SET_PREALLOCATED_BUFFER(slot, has input, flattened GBFR: magic 0x47424652, width, height,
stride, format, usage, pid, refcount, fd count, int count, then the NvGraphicBuffer after its
native-handle header).  A status is 0 or a negative errno (-11 WouldBlock when no slot is free,
-22 BadValue for a parcel that cannot be read).

NvGraphicBuffer offsets (from libnx's header, compiled): nvmap id at 0x10, stride (pixels) 0x30,
planes at 0x40 of 0x58 bytes each: width 0, height 4, layout 0x10 (1 pitch, 3 block linear),
pitch 0x14, offset 0x1C, block height log2 0x24; the ints of the GBFR object start at the
handle's +0xC.  A queued frame's bytes are read from the nvmap object's guest memory as they lie
(pitch-linear, or block-linear: whole blocks) and handed to the process's ``display.Display``
(paced by the vsync ticks, presented through the GPU process, counted as a presented frame:
the scripted input's clock).  Pixel formats (libnx PixelFormat): 1 RGBA_8888, 2 RGBX_8888, 4
RGB_565 (libnx's console), 5 BGRA_8888 (nx.js's canvas); another is a named unserved request."""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass, field
from typing import Callable

from cpu_host.horizon.ipc.dispatcher import Context, Unserved
from cpu_host.horizon.services.display import Display, Image
from cpu_host.horizon.services.nvdrv import NvState
from gpu_host import present_image

log = logging.getLogger("cpu_host.ipc.binder")
TOKEN = "android.gui.IGraphicBufferProducer"
GBFR = 0x47424652
HANDLE_HEADER = 0xC  # the NvGraphicBuffer's native-handle header
NV_NVMAP_ID, NV_STRIDE, NV_PLANES = 0x10, 0x30, 0x40
P_WIDTH, P_HEIGHT, P_LAYOUT, P_PITCH, P_OFFSET, P_BLOCK = 0x00, 0x04, 0x10, 0x14, 0x1C, 0x24
LAYOUT_PITCH, LAYOUT_BLOCK_LINEAR = 1, 3
PIXEL_FORMAT_RGBA_8888, PIXEL_FORMAT_RGBX_8888, PIXEL_FORMAT_RGB_565, PIXEL_FORMAT_BGRA_8888 = 1, 2, 4, 5  # libnx
FORMATS = {
    PIXEL_FORMAT_RGBA_8888: present_image.FORMAT_RGBA8,
    PIXEL_FORMAT_RGBX_8888: present_image.FORMAT_RGBX8,
    PIXEL_FORMAT_BGRA_8888: present_image.FORMAT_BGRA8,
    PIXEL_FORMAT_RGB_565: present_image.FORMAT_RGB565,
}
LAYOUTS = {LAYOUT_PITCH: present_image.LAYOUT_PITCH, LAYOUT_BLOCK_LINEAR: present_image.LAYOUT_BLOCK_LINEAR}
WOULD_BLOCK, BAD_VALUE = -11, -22  # Android status codes (libnx binderConvertErrorCode)
FENCE_SIZE = 0x24


class ParcelError(Exception):
    """A parcel the queue cannot read: answered with status BadValue (-22)."""


class NotServed(ParcelError):
    """A transaction the host does not serve: a named error (the dispatcher's Unserved)."""


@dataclass
class ParcelReader:
    data: bytes
    pos: int = 0

    def i32(self) -> int:
        if self.pos + 4 > len(self.data):
            raise ParcelError(f"parcel ends at {len(self.data)} bytes, an int32 was wanted at {self.pos}")
        v = struct.unpack_from("<i", self.data, self.pos)[0]
        self.pos += 4
        return v

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ParcelError(f"parcel of {len(self.data)} bytes has no {n} bytes at {self.pos}")
        b = self.data[self.pos : self.pos + n]
        self.pos += (n + 3) & ~3
        return b

    def token(self) -> str:
        self.i32()  # strict-mode policy word (0x100)
        n = self.i32()
        return self.raw((n + 1) * 2)[: n * 2].decode("utf-16-le", "replace")

    def flattened(self) -> bytes:
        n, fds = self.i32(), self.i32()
        if fds:
            raise ParcelError("flattened object with file descriptors")
        return self.raw(n)


def read_parcel(blob: bytes) -> ParcelReader:
    if len(blob) < 0x10:
        raise ParcelError(f"parcel of {len(blob)} bytes has no header")
    size, off = struct.unpack_from("<II", blob)
    if off + size > len(blob):
        raise ParcelError(f"parcel payload {off:#x}+{size:#x} overruns its {len(blob):#x} bytes")
    return ParcelReader(blob[off : off + size])


def write_parcel(payload: bytes) -> bytes:
    return struct.pack("<IIII", len(payload), 0x10, 0, 0x10 + len(payload)) + payload


def flat(data: bytes) -> bytes:
    return struct.pack("<ii", len(data), 0) + data + bytes(-len(data) % 4)


@dataclass
class GraphicBuffer:
    raw: bytes  # the GBFR object as the program sent it
    width: int
    height: int
    format: int
    nvmap_id: int
    layout: int
    pitch: int
    offset: int
    block_height_log2: int


def parse_gbfr(obj: bytes) -> GraphicBuffer:
    if len(obj) < 0x28 or struct.unpack_from("<I", obj)[0] != GBFR:
        raise ParcelError("SET_PREALLOCATED_BUFFER: the buffer is not a GBFR object")
    _m, width, height, _stride, fmt, _usage, _pid, _ref, nfds, nints = struct.unpack_from("<10I", obj)
    ints = obj[0x28 : 0x28 + 4 * nints]
    nv = bytes(HANDLE_HEADER) + ints  # NvGraphicBuffer offsets count from its header
    if nfds or len(nv) < NV_PLANES + 0x28:
        raise ParcelError(f"GBFR object with {nfds} fds and {nints} ints is not an NvGraphicBuffer")
    p = NV_PLANES
    return GraphicBuffer(
        obj,
        width,
        height,
        fmt,
        struct.unpack_from("<i", nv, NV_NVMAP_ID)[0],
        struct.unpack_from("<I", nv, p + P_LAYOUT)[0],
        struct.unpack_from("<I", nv, p + P_PITCH)[0],
        struct.unpack_from("<I", nv, p + P_OFFSET)[0],
        struct.unpack_from("<I", nv, p + P_BLOCK)[0],
    )


@dataclass
class BufferQueue:
    nv: NvState
    display: Display
    read_guest: Callable[[int, int], bytes]
    wait: Callable[[float], None] = lambda s: None
    slots: dict[int, GraphicBuffer] = field(default_factory=dict)
    dequeued: set[int] = field(default_factory=set)
    next_slot: int = 0
    width: int = 0
    height: int = 0
    format: int = PIXEL_FORMAT_RGBA_8888
    free_event: Callable[[bool], None] | None = None  # the native handle 0x0F event's level (vi.py)

    def has_free(self) -> bool:
        """A slot can be dequeued (or none is configured yet)."""
        return not self.slots or any(s not in self.dequeued for s in self.slots)

    def transact(self, binder: int, code: int, parcel: bytes) -> bytes:
        try:
            return self._transact(binder, code, parcel)
        except NotServed as e:
            raise Unserved(f"service 'vi:u', IGraphicBufferProducer transaction {code} on binder {binder}: {e}") from None
        except ParcelError as e:
            log.info("binder %d transaction %d: %s: BadValue", binder, code, e)
            return write_parcel(struct.pack("<i", BAD_VALUE))
        finally:
            if self.free_event is not None:
                self.free_event(self.has_free())

    def _transact(self, binder: int, code: int, parcel: bytes) -> bytes:
        r = read_parcel(parcel)
        token = r.token()
        if token != TOKEN:
            raise ParcelError(f"interface token {token!r} is not {TOKEN}")
        out = b""
        if code == 1:  # REQUEST_BUFFER
            slot = r.i32()
            gb = self.slots.get(slot)
            out = (struct.pack("<i", 1) + flat(gb.raw) if gb else struct.pack("<i", 0)) + struct.pack("<i", 0)
        elif code == 2:  # SET_BUFFER_COUNT
            out = struct.pack("<i", 0)
        elif code == 3:  # DEQUEUE_BUFFER
            free = [s for s in sorted(self.slots) if s not in self.dequeued]
            if not free:
                return write_parcel(struct.pack("<ii", -1, 0) + struct.pack("<i", WOULD_BLOCK))
            order = sorted(free, key=lambda s: (s - self.next_slot) % 64)
            slot = order[0]
            self.next_slot = slot + 1
            self.dequeued.add(slot)
            out = struct.pack("<ii", slot, 1) + flat(bytes(FENCE_SIZE)) + struct.pack("<i", 0)
        elif code == 7:  # QUEUE_BUFFER
            slot = r.i32()
            inp = r.flattened()
            swap = struct.unpack_from("<I", inp, 0x2C)[0] if len(inp) >= 0x30 else 1  # BqBufferInput.swapInterval
            self.dequeued.discard(slot)
            if slot in self.slots:
                self.display.pace(swap, self.wait)
                self._present(self.slots[slot])
            out = struct.pack("<IIII", self.width, self.height, 0, 0) + struct.pack("<i", 0)
        elif code == 8:  # CANCEL_BUFFER
            self.dequeued.discard(r.i32())
        elif code == 9:  # QUERY
            what = r.i32()
            value = {0: self.width, 1: self.height, 2: self.format}.get(what, 0)
            out = struct.pack("<ii", value, 0)
        elif code == 10:  # CONNECT
            out = struct.pack("<IIII", self.width, self.height, 0, 0) + struct.pack("<i", 0)
        elif code == 11:  # DISCONNECT
            out = struct.pack("<i", 0)
        elif code == 14:  # SET_PREALLOCATED_BUFFER
            slot, has = r.i32(), r.i32()
            if has:
                gb = parse_gbfr(r.flattened())
                self.slots[slot] = gb
                self.width, self.height, self.format = gb.width, gb.height, gb.format
            else:
                self.slots.pop(slot, None)
        else:
            raise NotServed(f"transaction code {code} is not served by the host")
        return write_parcel(out)

    def _present(self, gb: GraphicBuffer) -> None:
        obj = next((o for o in self.nv.objects.values() if o.id == gb.nvmap_id), None)
        if obj is None or not obj.address:
            raise ParcelError(f"queued buffer names nvmap id {gb.nvmap_id}, which has no memory")
        fmt = FORMATS.get(gb.format)
        if fmt is None:
            raise NotServed(f"queued buffer of pixel format {gb.format} (RGBA_8888, RGBX_8888, RGB_565 and BGRA_8888 are served)")
        layout = LAYOUTS.get(gb.layout)
        if layout is None:
            raise NotServed(f"queued buffer of layout {gb.layout} (1 pitch, 3 block linear are served)")
        img = Image(b"", gb.width, gb.height, layout, gb.pitch, gb.block_height_log2 if layout else 0, fmt)
        why = present_image.problem(img.packet(0, 0, 0))
        if why or gb.block_height_log2 > 5:
            raise ParcelError(f"queued buffer {gb.width}x{gb.height}: {why or 'block height above 32 GOBs'}")
        size = present_image.byte_size(img.packet(0, 0, 0))
        data = self.read_guest(obj.address + gb.offset, size)
        self.display.present(Image(data, img.width, img.height, layout, img.pitch, img.block_height_log2, fmt))


def transact(queue: BufferQueue, ctx: Context) -> None:
    """IHOSBinderDriver 0/3 TransactParcel(s32 binder, u32 code, u32 flags; in A/X 0, out B/C 0)."""
    binder, code, _flags = ctx.i32(), ctx.u32(), ctx.u32()
    reply = queue.transact(binder, code, ctx.read_in_auto(0, 0))
    ctx.write_out_auto(0, 0, reply)
