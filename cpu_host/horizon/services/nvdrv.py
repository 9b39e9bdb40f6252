"""nvdrv / nvdrv:a / nvdrv:s / nvdrv:t (INvDrvServices; switchbrew "NV services", libnx ``nv.c`` and
``nvidia/ioctl/*.c``): the device files a framebuffer program opens, as far as framebuffers need
them — nvmap (buffer objects over guest memory) and nvhost-ctrl (syncpoints).  The GPU channel
devices open, but their ioctls are not served (named as such): GPU work goes through the NVN front end.

INvDrvServices: 0 Open(A 0: path) -> u32 fd, u32 error; 1 Ioctl(u32 fd, u32 request; in: A 0 / X 0
auto-select, out: B 0 / C 0) -> u32 error; 2 Close(u32 fd) -> u32 error; 3 Initialize(u32 transfer
memory size; copy handles: process, transfer memory) -> u32 error; 4 QueryEvent(u32 fd, u32 event)
-> copy handle, u32 error; 8 SetClientPID(u64 aruid, PID) -> u32 error.  Errors are NvError codes
(libnx nvConvertError: 3 NotInitialized (Open before Initialize), 4 BadParameter, 5 Timeout,
11 BadValue).

An ioctl request is _NV_IOC(dir, type, nr, size): nr [7:0], type [15:8], size [29:16], dir [31:30]
(1 write = in, 2 read = out).  nvmap (type 1): 0x01 CREATE(size -> handle), 0x03 FROM_ID(id ->
handle), 0x04 ALLOC(handle, heap mask, flags, align, kind u8, pad, address u64), 0x05 FREE(handle,
pad -> refcount u64, size, flags), 0x09 PARAM(handle, param 1 size / 2 alignment / 3 base / 4 heap
/ 5 kind -> value), 0x0E GET_ID(-> id, handle).  nvhost-ctrl (type 0): 0x14 SYNCPT_READ(id ->
value), 0x16 SYNCPT_WAIT(id, threshold, timeout: Timeout unless reached), 0x1D EVENT_WAIT, 0x1F /
0x20 EVENT_REGISTER / UNREGISTER.  Syncpoints only move when the GPU works; none does here, so
they stay 0 and a wait for more times out."""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, Unserved, command
from cpu_host.horizon.ipc.results import INVALID_HANDLE, IpcError

NV_OK, NV_NOT_INITIALIZED, NV_BAD_PARAMETER, NV_TIMEOUT, NV_BAD_VALUE = 0, 3, 4, 5, 11
DEVICES = (
    "/dev/nvmap",
    "/dev/nvhost-ctrl",
    "/dev/nvhost-ctrl-gpu",
    "/dev/nvhost-as-gpu",
    "/dev/nvhost-gpu",
    "/dev/nvhost-nvdec",
    "/dev/nvhost-vic",
    "/dev/nvdisp-disp0",
    "/dev/nvhost-dbg-gpu",
    "/dev/nvhost-prof-gpu",
    "/dev/nvsched-ctrl",
    "/dev/nvhost-nvjpg",
)
H_TMEM = 6  # horizon_kernel.c's handle kind of transfer memory


def ioc(request: int) -> tuple[int, int, int, int]:
    """(dir, type, nr, size) of an ioctl request."""
    return request >> 30, (request >> 8) & 0xFF, request & 0xFF, (request >> 16) & 0x3FFF


@dataclass
class NvMapObject:
    id: int
    size: int
    align: int = 0
    kind: int = 0
    heap: int = 0
    flags: int = 0
    address: int = 0


class NvState:
    """nvmap's objects and the open files, one per process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.objects: dict[int, NvMapObject] = {}  # handle -> object
        self.next_handle = 1
        self.next_fd = 1
        self.files: dict[int, str] = {}


class NvDrvServices(Interface):
    name = "nn::nvdrv::detail::INvDrvServices"
    service = "nvdrv"

    def __init__(self, nv: NvState, kernel_ref) -> None:
        self.nv, self.kernel = nv, kernel_ref
        self.initialized = False

    @command(3)
    def initialize(self, ctx: Context) -> None:
        ctx.u32()
        handles = ctx.message.copy_handles
        if len(handles) < 2 or self.kernel().handle_kind(handles[1]) != H_TMEM:
            raise IpcError(INVALID_HANDLE, "Initialize needs the process and a transfer memory handle")
        self.initialized = True
        ctx.push("I", NV_OK)

    @command(8)
    def set_client_pid(self, ctx: Context) -> None:
        ctx.u64()
        ctx.push("I", NV_OK)

    @command(0)
    def open(self, ctx: Context) -> None:
        path = ctx.read_in_auto(0, 0).split(b"\0", 1)[0].decode("ascii", "replace")
        if not self.initialized:
            ctx.push("II", 0, NV_NOT_INITIALIZED)
            return
        if path not in DEVICES:
            raise Unserved(f"service 'nvdrv': device {path!r} is not served by the host")
        with self.nv.lock:
            fd = self.nv.next_fd
            self.nv.next_fd += 1
            self.nv.files[fd] = path
        ctx.push("II", fd, NV_OK)

    @command(2)
    def close(self, ctx: Context) -> None:
        fd = ctx.u32()
        with self.nv.lock:
            ok = self.nv.files.pop(fd, None) is not None
        ctx.push("I", NV_OK if ok else NV_BAD_PARAMETER)

    @command(4)
    def query_event(self, ctx: Context) -> None:
        fd, _event = ctx.u32(), ctx.u32()
        if fd not in self.nv.files:
            ctx.push("I", NV_BAD_PARAMETER)
            return
        k = self.kernel()
        ctx.out_copy.append(k.event_handle(k.event()))
        ctx.push("I", NV_OK)

    @command(1)
    def ioctl(self, ctx: Context) -> None:
        fd, request = ctx.u32(), ctx.u32()
        device = self.nv.files.get(fd)
        if device is None:
            ctx.push("I", NV_BAD_PARAMETER)
            return
        direction, _type, nr, size = ioc(request)
        data = ctx.read_in_auto(0, 0) if direction & 1 else b""
        data = (data + bytes(size))[:size]
        handler = {"/dev/nvmap": self._nvmap, "/dev/nvhost-ctrl": self._ctrl}.get(device)
        out = handler(request, nr, data) if handler else None
        if out is None:
            raise Unserved(f"service 'nvdrv': ioctl {request:#010x} on {device} is not served by the host")
        err, payload = out
        if direction & 2 and err == NV_OK:
            ctx.write_out_auto(0, 0, payload[:size])
        ctx.push("I", err)

    # -- nvmap ---------------------------------------------------------------------------
    def _nvmap(self, request: int, nr: int, data: bytes) -> tuple[int, bytes] | None:
        nv = self.nv
        with nv.lock:
            if request == 0xC0080101:  # CREATE
                size = struct.unpack_from("<I", data)[0]
                if size == 0:
                    return NV_BAD_VALUE, data
                h = nv.next_handle
                nv.next_handle += 1
                nv.objects[h] = NvMapObject(id=h, size=size)
                return NV_OK, struct.pack("<II", size, h)
            if request == 0xC0080103:  # FROM_ID
                oid = struct.unpack_from("<I", data)[0]
                h = next((h for h, o in nv.objects.items() if o.id == oid), 0)
                return (NV_OK, struct.pack("<II", oid, h)) if h else (NV_BAD_VALUE, data)
            if request == 0xC0200104:  # ALLOC
                h, heap, flags, align, kind, addr = struct.unpack_from("<IIIIB7xQ", data)
                o = nv.objects.get(h)
                if o is None:
                    return NV_BAD_VALUE, data
                if addr and not self.kernel().mapped(addr, o.size, 1):
                    return NV_BAD_PARAMETER, data
                o.heap, o.flags, o.align, o.kind, o.address = heap, flags, align, kind, addr
                return NV_OK, data
            if request == 0xC0180105:  # FREE
                h = struct.unpack_from("<I", data)[0]
                o = nv.objects.pop(h, None)
                if o is None:
                    return NV_BAD_VALUE, data
                return NV_OK, struct.pack("<IIQII", h, 0, 0, o.size, 0)
            if request == 0xC00C0109:  # PARAM
                h, param = struct.unpack_from("<II", data)
                o = nv.objects.get(h)
                values = {1: o.size, 2: o.align, 3: o.address, 4: o.heap, 5: o.kind} if o else {}
                if param not in values:
                    return NV_BAD_VALUE, data
                return NV_OK, struct.pack("<III", h, param, values[param] & 0xFFFFFFFF)
            if request == 0xC008010E:  # GET_ID
                h = struct.unpack_from("<I", data, 4)[0]
                o = nv.objects.get(h)
                return (NV_OK, struct.pack("<II", o.id, h)) if o else (NV_BAD_VALUE, data)
        return None

    # -- nvhost-ctrl ---------------------------------------------------------------------
    def _ctrl(self, request: int, nr: int, data: bytes) -> tuple[int, bytes] | None:
        if request == 0xC0080014:  # SYNCPT_READ: no GPU work, so 0
            return NV_OK, struct.pack("<II", struct.unpack_from("<I", data)[0], 0)
        if request == 0xC00C0016:  # SYNCPT_WAIT(id, threshold, timeout)
            _sid, threshold, _timeout = struct.unpack_from("<III", data)
            return (NV_OK if threshold == 0 else NV_TIMEOUT), data
        if nr in (0x1F, 0x20):  # EVENT_REGISTER / UNREGISTER
            return NV_OK, data
        return None


def register(server: Server, kernel_ref, state: NvState) -> None:
    for name in ("nvdrv", "nvdrv:a", "nvdrv:s", "nvdrv:t"):
        server.services[name] = lambda: NvDrvServices(state, kernel_ref)
