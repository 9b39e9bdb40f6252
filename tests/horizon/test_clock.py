"""cpu_host/horizon/hle/clock.py: a deterministic run's date is the fixed epoch plus the time
since the program started, whatever the host's uptime (the runtime's counter is CLOCK_MONOTONIC,
which counts from the host's boot: on a host up for a day the "fixed" date moved by one)."""

from __future__ import annotations

from cpu_host.horizon.hle.clock import FIXED_EPOCH, TICK_HZ, ClockService


class _Out:
    """Where nn::time::StandardUserSystemClock::GetCurrentTime writes its PosixTime."""

    def __init__(self) -> None:
        self.written: dict[int, int] = {}

    def arg(self, i: int) -> int:
        return 0x1000

    def u64(self, addr: int, value: int, what: str) -> None:
        self.written[addr] = value


def test_the_deterministic_date_does_not_depend_on_the_hosts_uptime() -> None:
    for uptime_days in (0, 1, 3, 40):
        now = [uptime_days * 86400 * TICK_HZ + 12345]
        clock = ClockService(True, lambda: now[0])
        out = _Out()
        clock.current_time(out)
        assert out.written[0x1000] == FIXED_EPOCH
        now[0] += 90 * TICK_HZ + 7  # the program ran for 90 s
        clock.current_time(out)
        assert out.written[0x1000] == FIXED_EPOCH + 90
