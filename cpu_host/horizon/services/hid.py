"""hid (IHidServer) and its shared memory, fed by the same ``HidService`` state the nn:: HLE
serves (scripted input for headless runs, the window's gamepads when there is one).

IHidServer (switchbrew HID_services; libnx ``hid.c``): 0 CreateAppletResource(aruid u64, PID
sent) -> IAppletResource (0 GetSharedMemoryHandle: copy handle to 0x40000 bytes, mapped R);
the Activate*/Set* commands libnx's hidInitialize and padConfigureInput send (1 ActivateDebugPad,
11 ActivateTouchScreen, 21 ActivateMouse, 31 ActivateKeyboard, 100 SetSupportedNpadStyleSet,
101 GetSupportedNpadStyleSet, 102 SetSupportedNpadIdType, 103 ActivateNpad, 104 DeactivateNpad,
106 AcquireNpadStyleSetUpdateEventHandle, 109 ActivateNpadWithRevision, 120 SetNpadJoyHoldType,
121 GetNpadJoyHoldType, 122-124 SetNpadJoyAssignmentMode*, 66/67/68 six-axis sensor start/stop,
82 IsSixAxisSensorAtRest) are accepted.

Shared memory layout (libnx ``hid.h`` HidSharedMemory; switchbrew HID_Shared_Memory): the npad
area at 0x9A00, ten 0x5000-byte entries (players 1-8, Handheld (id 0x20) at index 8, Other at
9); in an entry: style set u32 @0, joy assignment mode u32 @4 (0 dual), full-key colour @8
(0xC bytes), joy colour @0x14 (0x14), then the lifos: full key @0x28, handheld @0x378 (each a
0x20-byte header — unused, buffer count, tail (index of the newest entry), count — and 17
entries of (sampling number u64, state: sampling number u64, buttons u64, left stick s32 x/y,
right stick s32 x/y, attributes u32, reserved u32)); libnx's pad reads the style set and these
lifos.  Player 1 is a Pro Controller (full key),
the handheld entry the console's Joy-Con; both show the same state.  The memory is updated
60 times a second by a host thread; while no frame is presented (console programs), that tick
also advances the scripted input's frame counter."""

from __future__ import annotations

import logging
import mmap
import os
import struct
import threading

from cpu_host.horizon.hle.hid import HidService
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command

log = logging.getLogger("cpu_host.ipc.hid")
SHMEM_SIZE = 0x40000
NPAD_BASE, NPAD_ENTRY = 0x9A00, 0x5000
LIFO_FULL_KEY, LIFO_HANDHELD = 0x28, 0x378
LIFO_HEADER, LIFO_ENTRY, LIFO_COUNT = 0x20, 0x30, 17
STYLE_FULL_KEY, STYLE_HANDHELD = 1 << 0, 1 << 1
ATTR_CONNECTED, ATTR_WIRED, ATTR_LEFT, ATTR_RIGHT = 1 << 0, 1 << 1, 1 << 2, 1 << 4
INDEX_HANDHELD = 8
HANDHELD_ATTRS = ATTR_CONNECTED | ATTR_WIRED | ATTR_LEFT | ATTR_RIGHT  # both Joy-Con on the console
COLORS = struct.pack("<III", 0, 0xFF323232, 0xFFFFFFFF)  # attribute Ok, body, buttons (RGBA)
PERM_R = 1
TICK_S = 1 / 60


class HidSharedMemory:
    """The 0x40000-byte memfd the guest maps, and the thread that writes input into it."""

    def __init__(self, hid: HidService) -> None:
        self.hid = hid
        self.fd = os.memfd_create("nxrecomp-hid", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, SHMEM_SIZE)
        self.mem = mmap.mmap(self.fd, SHMEM_SIZE)
        self.sampling = 0
        for index, style, attrs in ((0, STYLE_FULL_KEY, ATTR_CONNECTED), (INDEX_HANDHELD, STYLE_HANDHELD, HANDHELD_ATTRS)):
            base = NPAD_BASE + index * NPAD_ENTRY
            struct.pack_into("<II", self.mem, base, style, 0)
            self.mem[base + 8 : base + 0x14] = COLORS
        self.update()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hid-shmem", daemon=True)
        self._thread.start()

    def update(self) -> None:
        """One sample: the newest lifo entry of player 1 (full key) and handheld."""
        with self.hid.lock:
            s = self.hid.state_now()
        self.sampling += 1
        n = self.sampling
        for index, lifo, attrs in ((0, LIFO_FULL_KEY, ATTR_CONNECTED), (INDEX_HANDHELD, LIFO_HANDHELD, HANDHELD_ATTRS)):
            base = NPAD_BASE + index * NPAD_ENTRY + lifo
            slot = n % LIFO_COUNT
            entry = base + LIFO_HEADER + slot * LIFO_ENTRY
            struct.pack_into("<Q", self.mem, entry, 0)  # torn-read guard: readers retry
            struct.pack_into("<QQiiiiII", self.mem, entry + 8, n, s.buttons, s.lx, s.ly, s.rx, s.ry, attrs, 0)
            struct.pack_into("<Q", self.mem, entry, n)
            struct.pack_into("<QQQQ", self.mem, base, 0, LIFO_COUNT, slot, min(n, LIFO_COUNT))

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            if not self.hid.presented:
                self.hid.advance_frame()
            self.update()

    def close(self) -> None:
        self._stop.set()


class AppletResource(Interface):
    name = "nn::hid::IAppletResource"
    service = "hid"

    def __init__(self, host: "HidHost") -> None:
        self.host = host

    @command(0)
    def get_shared_memory_handle(self, ctx: Context) -> None:
        shm = self.host.shared_memory()
        ctx.out_copy.append(self.host.kernel().shared_memory_handle(shm.fd, SHMEM_SIZE, PERM_R))


class HidServer(Interface):
    name = "nn::hid::IHidServer"
    service = "hid"

    def __init__(self, host: "HidHost") -> None:
        self.host = host
        self.style_set = STYLE_FULL_KEY | STYLE_HANDHELD
        self.hold_type = 0

    @command(0)
    def create_applet_resource(self, ctx: Context) -> None:
        ctx.u64()
        ctx.out_objects.append(AppletResource(self.host))

    def _accept(self, ctx: Context) -> None:
        pass

    activate_debug_pad = command(1)(_accept)
    activate_touch_screen = command(11)(_accept)
    activate_mouse = command(21)(_accept)
    activate_keyboard = command(31)(_accept)
    start_six_axis = command(66)(_accept)
    stop_six_axis = command(67)(_accept)
    set_supported_npad_id_type = command(102)(_accept)
    activate_npad = command(103)(_accept)
    deactivate_npad = command(104)(_accept)
    activate_npad_with_revision = command(109)(_accept)
    set_assignment_single_default = command(122)(_accept)
    set_assignment_single = command(123)(_accept)
    set_assignment_dual = command(124)(_accept)

    @command(100)
    def set_supported_npad_style_set(self, ctx: Context) -> None:
        self.style_set = ctx.u32()

    @command(101)
    def get_supported_npad_style_set(self, ctx: Context) -> None:
        ctx.push("I", self.style_set)

    @command(106)
    def acquire_style_set_update_event(self, ctx: Context) -> None:
        k = self.host.kernel()
        ctx.out_copy.append(k.event_handle(k.event()))

    @command(120)
    def set_npad_joy_hold_type(self, ctx: Context) -> None:
        ctx.u64()
        self.hold_type = ctx.u64()

    @command(121)
    def get_npad_joy_hold_type(self, ctx: Context) -> None:
        ctx.push("Q", self.hold_type)

    @command(82)
    def is_six_axis_at_rest(self, ctx: Context) -> None:
        ctx.push("B", 1)


class HidHost:
    def __init__(self, hid: HidService, kernel_ref) -> None:
        self.hid, self.kernel = hid, kernel_ref
        self._shm: HidSharedMemory | None = None

    def shared_memory(self) -> HidSharedMemory:
        if self._shm is None:
            self._shm = HidSharedMemory(self.hid)
        return self._shm


def register(server: Server, hid: HidService, kernel_ref) -> HidHost:
    host = HidHost(hid, kernel_ref)
    server.services["hid"] = lambda: HidServer(host)
    return host
