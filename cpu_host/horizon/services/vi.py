"""vi:u / vi:s / vi:m (visual interface; switchbrew "Display services", libnx ``vi.c``): displays,
layers and the vsync event; the binder relay (IHOSBinderDriver) hands its transactions to the
buffer queue in ``binder.py`` (queued framebuffers, read from nvmap objects of ``nvdrv.py``).

Root: 0 (vi:u), 1 (vi:s), 2 (vi:m) GetDisplayService(u32 policy) -> IApplicationDisplayService.
IHOSBinderDriver: 0 TransactParcel, 1 AdjustRefcount, 2 GetNativeHandle(s32 binder, u32 id) -> copy
handle (id 0x0F: the buffer queue's "slot free" event, binder.py), 3 TransactParcelAuto.
IApplicationDisplayService: 100 GetRelayService, 103 GetIndirectDisplayTransactionService ->
IHOSBinderDriver; 101 GetSystemDisplayService; 102 GetManagerDisplayService; 1000 ListDisplays;
1010 OpenDisplay(name[0x40]) -> u64 id ("Default", "External", "Edid", "Internal", "Null";
another name: vi NotFound 0xE72); 1020 CloseDisplay(u64); 1102 GetDisplayResolution(u64) ->
s64 width, s64 height; 2020 OpenLayer(name[0x40], u64 layer, u64 aruid, PID; B 0: native window
parcel) -> u64 size; 2021 CloseLayer; 2030 CreateStrayLayer(u32 flags, pad, u64 display; B 0) ->
u64 layer, u64 size; 2031 DestroyStrayLayer; 2101 SetLayerScalingMode(u32, pad, u64);
5202 GetDisplayVsyncEvent(u64) -> copy handle, signalled at each tick of the display's 60 Hz clock
(``display.Vsync``: the ticks queued frames are shown at).
ISystemDisplayService: 1200/1202 GetZOrderCountMin/Max -> s64, 1203 GetDisplayLogicalResolution
-> s32 w, h; 2201/2203/2205 SetLayerPosition/Size/Z; 2312 CreateStrayLayer.
IManagerDisplayService: 2010 CreateManagedLayer(u32 flags, pad, u64 display, u64 aruid) -> u64,
2011 DestroyManagedLayer, 2012 CreateStrayLayer, 4201 SetDisplayAlpha, 4205 SetDisplayPowerState,
6000 AddToLayerStack, 7000 SetContentVisibility.

The native window parcel (libnx ``vi.c`` reads it; Android's Parcel): a 0x10-byte header (payload
size, payload offset, objects size, objects offset), then the payload whose third word is the
IGraphicBufferProducer binder id (the only word libnx reads; the flat-binder fields around it are
left zero), followed by the service name "dispdrv"."""

from __future__ import annotations

import struct
import threading

from cpu_host.horizon.hle.system import SystemService
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.results import IpcError, result
from cpu_host.horizon.services import binder
from cpu_host.horizon.services.display import Display
from cpu_host.horizon.services.nvdrv import NvState

VI_NOT_FOUND = result(114, 7)  # 0xE72 (Atmosphère vi results)
BUFFER_FREE_HANDLE = 0x0F  # GetNativeHandle's id of the buffer queue's event (libnx native_window.c)
DISPLAYS = ("Default", "External", "Edid", "Internal", "Null")
RESOLUTION = {True: (1920, 1080), False: (1280, 720)}


def native_window_parcel(binder_id: int) -> bytes:
    name = b"dispdrv\0"
    payload = struct.pack("<III", 0, 0, binder_id) + bytes(8) + name  # libnx reads word 2 only
    return struct.pack("<IIII", len(payload), 0x10, 0, 0x10 + len(payload)) + payload


class ViState:
    def __init__(self, system: SystemService, kernel_ref, nv: NvState, display: Display) -> None:
        self.system, self.kernel, self.display = system, kernel_ref, display
        self.queue = binder.BufferQueue(nv, display, lambda addr, n: kernel_ref().read(addr, n), lambda s: kernel_ref().wait(s))
        self.lock = threading.Lock()
        self.vsync = 0
        self.free_ev = 0
        self.next_layer = 1
        self.next_binder = 1

    def buffer_free_handle(self) -> int:
        """A handle to the buffer queue's "a slot is free" event (binder.BufferQueue.free_event)."""
        with self.lock:
            if not self.free_ev:
                k = self.kernel()
                self.free_ev = k.event()
                self.queue.free_event = lambda on: self.kernel().signal(self.free_ev, on)
                self.queue.free_event(self.queue.has_free())
        return self.kernel().event_handle(self.free_ev)

    def vsync_handle(self) -> int:
        """A handle to the display's vsync event, signalled at each of the display's ticks (the
        ones queued frames are shown at: display.Vsync)."""
        with self.lock:
            if not self.vsync:
                self.vsync = self.kernel().event()
                self.display.vsync.signal_each_tick(lambda: self.kernel().signal(self.vsync))
        return self.kernel().event_handle(self.vsync)

    def new_layer(self) -> tuple[int, int]:
        with self.lock:
            layer, binder = self.next_layer, self.next_binder
            self.next_layer += 1
            self.next_binder += 1
            return layer, binder


def display_name(ctx: Context) -> str:
    raw = ctx.take(0x40)
    name = raw.split(b"\0", 1)[0].decode("ascii", "replace")
    if name not in DISPLAYS:
        raise IpcError(VI_NOT_FOUND, f"display {name!r}")
    return name


class HosBinderDriver(Interface):
    name = "nns::hosbinder::IHOSBinderDriver"
    service = "vi:u"

    def __init__(self, vi: ViState) -> None:
        self.vi = vi

    def _transact(self, ctx: Context) -> None:
        binder.transact(self.vi.queue, ctx)

    transact_parcel = command(0)(_transact)
    transact_parcel_auto = command(3)(_transact)

    @command(1)
    def adjust_refcount(self, ctx: Context) -> None:
        ctx.i32(), ctx.i32(), ctx.i32()

    @command(2)
    def get_native_handle(self, ctx: Context) -> None:
        _binder, what = ctx.i32(), ctx.u32()
        if what == BUFFER_FREE_HANDLE:
            ctx.out_copy.append(self.vi.buffer_free_handle())
            return
        k = self.vi.kernel()
        ctx.out_copy.append(k.event_handle(k.event()))


class SystemDisplayService(Interface):
    name = "nn::visrv::sf::ISystemDisplayService"
    service = "vi:s"

    def __init__(self, vi: ViState) -> None:
        self.vi = vi

    @command(1200)
    def get_z_order_count_min(self, ctx: Context) -> None:
        ctx.push("q", 0)

    @command(1202)
    def get_z_order_count_max(self, ctx: Context) -> None:
        ctx.push("q", 255)

    @command(1203)
    def get_display_logical_resolution(self, ctx: Context) -> None:
        ctx.push("ii", *RESOLUTION[self.vi.system.docked])

    def _accept(self, ctx: Context) -> None:
        pass

    set_layer_position = command(2201)(_accept)
    set_layer_size = command(2203)(_accept)
    set_layer_z = command(2205)(_accept)

    @command(2312)
    def create_stray_layer(self, ctx: Context) -> None:
        _stray(self.vi, ctx)


class ManagerDisplayService(Interface):
    name = "nn::visrv::sf::IManagerDisplayService"
    service = "vi:m"

    def __init__(self, vi: ViState) -> None:
        self.vi = vi

    @command(2010)
    def create_managed_layer(self, ctx: Context) -> None:
        ctx.push("Q", self.vi.new_layer()[0])

    @command(2012)
    def create_stray_layer(self, ctx: Context) -> None:
        _stray(self.vi, ctx)

    def _accept(self, ctx: Context) -> None:
        pass

    destroy_managed_layer = command(2011)(_accept)
    set_display_alpha = command(4201)(_accept)
    set_display_power_state = command(4205)(_accept)
    add_to_layer_stack = command(6000)(_accept)
    set_content_visibility = command(7000)(_accept)


def _stray(vi: ViState, ctx: Context) -> None:
    ctx.u32()
    ctx.u32()
    ctx.u64()
    layer, binder = vi.new_layer()
    parcel = native_window_parcel(binder)
    ctx.write_b(0, parcel)
    ctx.push("QQ", layer, len(parcel))


class ApplicationDisplayService(Interface):
    name = "nn::visrv::sf::IApplicationDisplayService"
    service = "vi:u"

    def __init__(self, vi: ViState) -> None:
        self.vi = vi
        self.displays: dict[int, str] = {}

    def _relay(self, ctx: Context) -> None:
        ctx.out_objects.append(HosBinderDriver(self.vi))

    get_relay_service = command(100)(_relay)
    get_indirect_display_transaction_service = command(103)(_relay)

    @command(101)
    def get_system_display_service(self, ctx: Context) -> None:
        ctx.out_objects.append(SystemDisplayService(self.vi))

    @command(102)
    def get_manager_display_service(self, ctx: Context) -> None:
        ctx.out_objects.append(ManagerDisplayService(self.vi))

    @command(1010)
    def open_display(self, ctx: Context) -> None:
        name = display_name(ctx)
        did = DISPLAYS.index(name) + 1
        self.displays[did] = name
        ctx.push("Q", did)

    def _display(self, ctx: Context) -> int:
        did = ctx.u64()
        if did not in self.displays:
            raise IpcError(VI_NOT_FOUND, f"display id {did} is not open")
        return did

    @command(1020)
    def close_display(self, ctx: Context) -> None:
        self.displays.pop(self._display(ctx))

    @command(1102)
    def get_display_resolution(self, ctx: Context) -> None:
        self._display(ctx)
        ctx.push("qq", *RESOLUTION[self.vi.system.docked])

    @command(2020)
    def open_layer(self, ctx: Context) -> None:
        display_name(ctx)
        ctx.u64()
        ctx.u64()
        parcel = native_window_parcel(self.vi.new_layer()[1])
        ctx.write_b(0, parcel)
        ctx.push("Q", len(parcel))

    @command(2030)
    def create_stray_layer(self, ctx: Context) -> None:
        _stray(self.vi, ctx)

    def _accept(self, ctx: Context) -> None:
        pass

    close_layer = command(2021)(_accept)
    destroy_stray_layer = command(2031)(_accept)
    set_layer_scaling_mode = command(2101)(_accept)

    @command(5202)
    def get_display_vsync_event(self, ctx: Context) -> None:
        self._display(ctx)
        ctx.out_copy.append(self.vi.vsync_handle())


class ViRoot(Interface):
    name = "nn::visrv::sf::IApplicationRootService"
    service = "vi:u"

    def __init__(self, vi: ViState) -> None:
        self.vi = vi

    def _display_service(self, ctx: Context) -> None:
        ctx.u32()
        ctx.out_objects.append(ApplicationDisplayService(self.vi))

    get_display_service = command(0)(_display_service)
    get_display_service_system = command(1)(_display_service)
    get_display_service_manager = command(2)(_display_service)


def register(server: Server, system: SystemService, kernel_ref, nv: NvState, display: Display) -> None:
    state = ViState(system, kernel_ref, nv, display)
    for name in ("vi:u", "vi:s", "vi:m"):
        server.services[name] = lambda: ViRoot(state)
