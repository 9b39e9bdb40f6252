"""nn::os ticks and sleeps, nn::time's user clock.  In a deterministic run (settings
``cpu_host.deterministic``) the wall clock is a fixed epoch plus the time since the program
started, so two runs of one program see the same dates.  (The runtime's counter is the host's
monotonic clock, which counts from the host's boot: a host up for more than a day moved the
"fixed" date.)"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from cpu_host.horizon.hle.abi import Call
from cpu_host.horizon.hle.registry import HostFunction

TICK_HZ = 19_200_000  # Horizon's system counter
FIXED_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z, the deterministic runs' "now"


@dataclass
class ClockService:
    deterministic: bool
    counter: object  # the runtime's nx_counter (ticks since boot, 19.2 MHz)
    start: int = field(init=False)  # the counter when the service was made (the program's start)

    def __post_init__(self) -> None:
        self.start = self.ticks()

    def ticks(self) -> int:
        return int(self.counter())  # type: ignore[operator]

    def get_tick(self, c: Call) -> int:
        return self.ticks()

    def tick_frequency(self, c: Call) -> int:
        return TICK_HZ

    def to_timespan(self, c: Call) -> int:
        t = c.sarg(0)
        return t * 1_000_000_000 // TICK_HZ if t >= 0 else -((-t) * 1_000_000_000 // TICK_HZ)

    def sleep(self, c: Call) -> None:
        ns = c.sarg(0)
        if ns > 0:
            time.sleep(ns / 1e9)  # without a core: others run meanwhile (blocking host call)

    def time_init(self, c: Call) -> int:
        return 0

    def posix_now(self) -> int:
        """The user clock in seconds (shared with the time: service)."""
        return FIXED_EPOCH + (self.ticks() - self.start) // TICK_HZ if self.deterministic else int(time.time())

    def current_time(self, c: Call) -> int:
        c.u64(c.arg(0), self.posix_now(), "GetCurrentTime out")
        return 0

    def functions(self) -> list[HostFunction]:
        F = HostFunction
        return [
            F("_ZN2nn2os13GetSystemTickEv", "nn::os::GetSystemTick()", self.get_tick),
            F("_ZN2nn2os22GetSystemTickFrequencyEv", "nn::os::GetSystemTickFrequency()", self.tick_frequency),
            F("_ZN2nn2os17ConvertToTimeSpanENS0_4TickE", "nn::os::ConvertToTimeSpan(nn::os::Tick)", self.to_timespan),
            F("_ZN2nn2os11SleepThreadENS_8TimeSpanE", "nn::os::SleepThread(nn::TimeSpan)", self.sleep, blocking=True),
            F("_ZN2nn4time10InitializeEv", "nn::time::Initialize()", self.time_init),
            F(
                "_ZN2nn4time23StandardUserSystemClock14GetCurrentTimeEPNS0_9PosixTimeE",
                "nn::time::StandardUserSystemClock::GetCurrentTime(nn::time::PosixTime*)",
                self.current_time,
            ),
        ]
