"""End a process whose guest threads are all parked in an endless branch-to-self.

Some runtimes' start-up code ends in ``b .`` once ``main`` returns (instead of
svcExitProcess).  Lifted, that is a host jump to itself: the thread can never do anything
again, and the process would spin forever.  A watchdog thread samples the process every
``PERIOD`` seconds (``/proc/self/task``): every thread that is running is probed with a signal
(``cpu_host/runtime/horizon/horizon_spin.c`` reads the interrupted host pc: a jump to itself inside
lifted code?).  When, for ``SAMPLES`` samples in a row, at least one thread spins there, no
running thread is anywhere else, and no other thread used any CPU time (threads blocked in
the kernel with nothing to wake them), the process ends with a notice naming the guest
function(s) and status 0: the program's own work is over.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("cpu_host.horizon")

PERIOD = 0.5
SAMPLES = 6  # 3 s of nothing but spinning
PROBE_TIMEOUT_MS = 200
SIGNO = signal.SIGRTMIN + 7  # no other part of the project uses the real-time signals
CDEF = """
int nx_spin_install(int signo);
int nx_spin_probe(int tid, int timeout_ms, uint64_t *guest);
"""


def _stat(tid: str) -> tuple[str, int] | None:
    """(state letter, utime + stime in ticks) of a thread of this process, None when gone."""
    try:
        with open(f"/proc/self/task/{tid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2 :].split()
    return rest[0], int(rest[11]) + int(rest[12])


class SpinWatch(threading.Thread):
    """The watchdog; ``on_parked(guest_functions)`` is called once, from its thread."""

    def __init__(self, ffi: Any, lib: Any, on_parked: Callable[[list[int]], None]) -> None:
        super().__init__(name="nx-spin-watch", daemon=True)
        self.ffi, self.lib, self.on_parked = ffi, lib, on_parked
        self.stop = threading.Event()

    def start(self) -> None:
        if self.lib.nx_spin_install(int(SIGNO)) != 0:
            log.warning("spin watchdog not started: cannot install its signal handler")
            return
        super().start()

    def sample(self, me: int) -> tuple[list[int], bool, dict[str, int]]:
        """(guest functions of spinning threads, whether a running thread is elsewhere, CPU
        time of every thread that is not spinning)."""
        guest = self.ffi.new("uint64_t *")
        spinning: list[int] = []
        busy = False
        cpu: dict[str, int] = {}
        for tid in os.listdir("/proc/self/task"):
            if int(tid) == me:
                continue
            st = _stat(tid)
            if st is None:
                continue
            if st[0] == "R":
                r = self.lib.nx_spin_probe(int(tid), PROBE_TIMEOUT_MS, guest)
                if r == 1:
                    spinning.append(int(guest[0]))
                    continue
                busy = busy or r != -1
            cpu[tid] = st[1]
        return spinning, busy, cpu

    def run(self) -> None:
        me = threading.get_native_id()
        streak, last_cpu = 0, None
        while not self.stop.wait(PERIOD):
            spinning, busy, cpu = self.sample(me)
            quiet = last_cpu is not None and all(last_cpu.get(t) == c for t, c in cpu.items())
            streak = streak + 1 if spinning and not busy and quiet else 0
            last_cpu = cpu
            if streak >= SAMPLES:
                self.on_parked(sorted(set(spinning)))
                return


def end_parked(name: str, functions: list[int], before_exit: Callable[[], None]) -> None:
    """What the runner does once every guest thread is parked: a notice, then status 0."""
    where = ", ".join(f"{a:#x}" for a in functions)
    from nxrecomp.common import log as nxlog

    try:
        before_exit()
    finally:
        nxlog.flush()
        sys.stdout.flush()
        print(
            f"notice: {name}: every guest thread is parked in an endless branch-to-self (lifted guest "
            f"function {where}), as a start-up that spins after main returns leaves it: the process ends here",
            file=sys.stderr,
            flush=True,
        )
        os._exit(0)
