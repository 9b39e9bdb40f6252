"""time:u / time:a / time:s (IStaticService; switchbrew PSC services, libnx ``time.c``), on the
same clock as the nn::time HLE (``hle/clock.py``: the host's wall clock, or a fixed epoch in
deterministic runs).

IStaticService: 0 GetStandardUserSystemClock, 1 GetStandardNetworkSystemClock,
4 GetStandardLocalSystemClock, 5 GetEphemeralNetworkSystemClock -> ISystemClock
(0 GetCurrentTime -> u64 POSIX seconds, 2 GetSystemClockContext -> 0x20 bytes);
2 GetStandardSteadyClock -> ISteadyClock (0 GetCurrentTimePoint -> 0x18 bytes);
3 GetTimeZoneService -> ITimeZoneService (0 GetDeviceLocationName -> 0x24 bytes,
101 ToCalendarTimeWithMyRule(u64) -> CalendarTime (year u16, month, day, hour, minute,
second u8, pad) + CalendarAdditionalInfo (wday u32, yday u32, name[8], DST u32, offset s32);
201 ToPosixTime (rule: A buffer) / 202 ToPosixTimeWithMyRule (CalendarTime -> s32 count; C buffer 0:
the s64 POSIX times; libnx ``time.c``));
20 GetSharedMemoryNativeHandle -> copy handle, 0x1000 bytes mapped R.

Shared memory (libnx ``_timeReadSharedmemObj``): at 0x00 the steady clock point type (base
time s64 ns, source id 16 bytes), at 0x38 the user clock context, at 0x80 the network clock
context (offset s64, time point s64, source id); each as a u32 counter, then at +8 two copies,
the one at index counter & 1 current.  Steady time = (base + ticks in ns) / 1e9 seconds; a
clock's time = its offset + steady time.  The time zone is UTC."""

from __future__ import annotations

import calendar
import mmap
import os
import struct
import time as pytime

from cpu_host.horizon.hle.clock import TICK_HZ, ClockService
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.results import IpcError, result

SHMEM_SIZE = 0x1000
SOURCE_ID = bytes(range(0x10, 0x20))  # the steady clock's identity (any fixed UUID)
OFF_STEADY, OFF_USER, OFF_NETWORK = 0x00, 0x38, 0x80
PERM_R = 1
TIME_OVERFLOWED = result(116, 201)  # 0x19274 (Atmosphère time results: Overflowed)


class TimeHost:
    def __init__(self, clock: ClockService, kernel_ref) -> None:
        self.clock, self.kernel = clock, kernel_ref
        self._fd = -1

    def steady_seconds(self) -> int:
        return self.clock.ticks() // TICK_HZ

    def offset(self) -> int:
        return self.clock.posix_now() - self.steady_seconds()

    def context(self) -> bytes:
        return struct.pack("<qq", self.offset(), self.steady_seconds()) + SOURCE_ID

    def shared_memory_fd(self) -> int:
        if self._fd < 0:
            fd = os.memfd_create("nxrecomp-time", os.MFD_CLOEXEC)
            os.ftruncate(fd, SHMEM_SIZE)
            with mmap.mmap(fd, SHMEM_SIZE) as m:
                struct.pack_into("<I", m, OFF_STEADY, 0)
                m[OFF_STEADY + 8 : OFF_STEADY + 8 + 0x18] = struct.pack("<q", 0) + SOURCE_ID
                for off in (OFF_USER, OFF_NETWORK):
                    struct.pack_into("<I", m, off, 0)
                    m[off + 8 : off + 8 + 0x20] = struct.pack("<q", self.offset()) + struct.pack("<q", 0) + SOURCE_ID
            self._fd = fd
        return self._fd


class SystemClock(Interface):
    name = "nn::timesrv::detail::service::ISystemClock"
    service = "time:u"

    def __init__(self, host: TimeHost) -> None:
        self.host = host

    @command(0)
    def get_current_time(self, ctx: Context) -> None:
        ctx.push("Q", self.host.clock.posix_now())

    @command(2)
    def get_system_clock_context(self, ctx: Context) -> None:
        ctx.push_bytes(self.host.context())


class SteadyClock(Interface):
    name = "nn::timesrv::detail::service::ISteadyClock"
    service = "time:u"

    def __init__(self, host: TimeHost) -> None:
        self.host = host

    @command(0)
    def get_current_time_point(self, ctx: Context) -> None:
        ctx.push_bytes(struct.pack("<q", self.host.steady_seconds()) + SOURCE_ID)


class TimeZoneService(Interface):
    name = "nn::timesrv::detail::service::ITimeZoneService"
    service = "time:u"

    @command(0)
    def get_device_location_name(self, ctx: Context) -> None:
        ctx.push_bytes(b"UTC".ljust(0x24, b"\0"))

    @command(101)
    def to_calendar_time_with_my_rule(self, ctx: Context) -> None:
        posix = ctx.i64()
        try:
            t = pytime.gmtime(posix)
        except (OverflowError, OSError, ValueError):
            raise IpcError(TIME_OVERFLOWED, f"POSIX time {posix} has no calendar date") from None
        ctx.push_bytes(struct.pack("<HBBBBBB", t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, 0))
        ctx.push_bytes(struct.pack("<II8sIi", (t.tm_wday + 1) % 7, t.tm_yday - 1, b"UTC", 0, 0))

    def _to_posix(self, ctx: Context) -> None:
        y, mo, d, h, mi, s, _ = struct.unpack("<HBBBBBB", ctx.take(8))
        try:
            posix = calendar.timegm((y, mo, d, h, mi, s))
        except (OverflowError, ValueError):
            raise IpcError(TIME_OVERFLOWED, f"calendar time {y}-{mo}-{d} {h}:{mi}:{s}") from None
        ctx.push("i", 1)
        ctx.push_bytes(bytes(4))
        ctx.write_c(0, struct.pack("<q", posix))

    # libnx time.c: 201 ToPosixTime (the rule in an A buffer: every rule is UTC here), 202
    # ToPosixTimeWithMyRule; both CalendarTime -> s32 count, the s64 times in C buffer 0
    to_posix_time = command(201)(_to_posix)
    to_posix_time_with_my_rule = command(202)(_to_posix)


class StaticService(Interface):
    name = "nn::timesrv::detail::service::IStaticService"
    service = "time:u"

    def __init__(self, host: TimeHost) -> None:
        self.host = host

    def _system_clock(self, ctx: Context) -> None:
        ctx.out_objects.append(SystemClock(self.host))

    get_standard_user_system_clock = command(0)(_system_clock)
    get_standard_network_system_clock = command(1)(_system_clock)
    get_standard_local_system_clock = command(4)(_system_clock)
    get_ephemeral_network_system_clock = command(5)(_system_clock)

    @command(2)
    def get_standard_steady_clock(self, ctx: Context) -> None:
        ctx.out_objects.append(SteadyClock(self.host))

    @command(3)
    def get_time_zone_service(self, ctx: Context) -> None:
        ctx.out_objects.append(TimeZoneService())

    @command(20)
    def get_shared_memory_native_handle(self, ctx: Context) -> None:
        ctx.out_copy.append(self.host.kernel().shared_memory_handle(self.host.shared_memory_fd(), SHMEM_SIZE, PERM_R))


def register(server: Server, clock: ClockService, kernel_ref) -> None:
    host = TimeHost(clock, kernel_ref)
    for name in ("time:u", "time:a", "time:s"):
        server.services[name] = lambda: StaticService(host)
