"""NVN events in the front end (nvn.h's NVNevent): a 32-bit value in memory-pool storage.

The CPU reads and writes it in place (nvnEventGetValue / nvnEventSignal: the pool's pages are the
memfd the GPU process maps, so a CPU write needs no flush and no message); command buffers record
EVENT_SIGNAL / EVENT_WAIT packets (gpu_host/PROTOCOL.md) that the GPU process serves.  A flush of
a command buffer that waits never blocks the guest: the GPU process waits, the guest goes on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.objects import MemoryPool
from gpu_host import packets as P

MASK = 0xFFFFFFFF
SIGNAL_MODES = len(P.EVENT_SIGNAL_MODES)  # nvn.h NVN_EVENT_SIGNAL_MODE_WRITE 0, _ADD 1
WAIT_MODES = len(P.EVENT_WAIT_MODES)  # nvn.h NVN_EVENT_WAIT_MODE_EQUAL 0, _GEQUAL_WRAP 1


@dataclass
class Event:
    id: int
    pool: MemoryPool
    offset: int

    @property
    def addr(self) -> int:
        return self.pool.addr + self.offset


class EventFunctions:
    """The event entry points of one ``NvnService`` (its objects, builders and lock)."""

    def __init__(self, svc: Any) -> None:
        self.svc = svc

    def initialize(self, c: Call) -> int:
        svc = self.svc
        with svc.lock:
            b = svc.builders.get(c.arg(1), {})
            pool = svc.objects.get(c.read_u64(b["pool"], "event storage pool")) if b.get("pool") else None
            if not isinstance(pool, MemoryPool):
                raise GuestError("nvnEventInitialize: the builder's storage is no initialised memory pool")
            off = b.get("offset", 0)
            if off % 4 or off + 4 > pool.size:
                raise GuestError(
                    f"nvnEventInitialize: storage offset {off:#x} is not 4-byte aligned inside the pool of {pool.size:#x} bytes"
                )
            svc._new(c, 0, lambda i: Event(i, pool, off))
        return 1

    def _event(self, c: Call, arg: int, what: str) -> Event:
        with self.svc.lock:
            return self.svc._obj(c, arg, Event, what)

    def get_value(self, c: Call) -> int:
        ev = self._event(c, 0, "nvnEventGetValue")
        return c.read_u32(ev.addr, "nvnEventGetValue storage")

    def signal(self, c: Call) -> None:
        """The CPU's signal: WRITE the value, or ADD it (modulo 2^32; not atomic against a GPU ADD
        of the same event at the same moment)."""
        ev = self._event(c, 0, "nvnEventSignal")
        mode, value = c.arg32(1), c.arg32(2)
        if mode >= SIGNAL_MODES:
            raise GuestError(f"nvnEventSignal: mode {mode} is not WRITE (0) or ADD (1)")
        if mode == 1:
            value = (c.read_u32(ev.addr, "nvnEventSignal storage") + value) & MASK
        c.u32(ev.addr, value, "nvnEventSignal storage")

    def cb_signal(self, c: Call) -> None:
        """nvnCommandBufferSignalEvent(cb, event, mode, location, flags, value): the GPU writes or adds
        the value once the commands before it completed (location and flags: every signal is made
        at the end of the pipeline, after all earlier work)."""
        self._record(c, "nvnCommandBufferSignalEvent", P.OP_EVENT_SIGNAL, SIGNAL_MODES, "WRITE (0) or ADD (1)", 5)

    def cb_wait(self, c: Call) -> None:
        """nvnCommandBufferWaitEvent(cb, event, mode, value): the commands after it run once the
        event's value is EQUAL to / GEQUAL_WRAP (signed 32-bit difference >= 0) the value."""
        self._record(c, "nvnCommandBufferWaitEvent", P.OP_EVENT_WAIT, WAIT_MODES, "EQUAL (0) or GEQUAL_WRAP (1)", 3)

    def _record(self, c: Call, what: str, op: int, modes: int, mode_names: str, value_arg: int) -> None:
        """The command buffer's packet ``op`` (pool, offset, mode, value) for the event in argument 1,
        its mode (argument 2) below ``modes``, its value in argument ``value_arg``."""
        with self.svc.lock:
            rec = self.svc._rec(c, what)
            ev = self.svc._obj(c, 1, Event, what)
            mode = c.arg32(2)
            if mode >= modes:
                raise GuestError(f"{what}: mode {mode} is not {mode_names}")
            rec.commands.append((op, ev.pool.id, ev.offset, mode, c.arg32(value_arg)))

    def rows(self) -> list[tuple[str, Callable[[Call], Any], bool]]:
        svc = self.svc
        return [
            ("nvnEventBuilderSetDefaults", svc.set_defaults, False),
            ("nvnEventBuilderSetStorage", svc.builder_set("pool", "offset"), False),
            ("nvnEventInitialize", self.initialize, False),
            ("nvnEventFinalize", svc.no_op, False),
            ("nvnEventGetValue", self.get_value, False),
            ("nvnEventSignal", self.signal, False),
            ("nvnCommandBufferSignalEvent", self.cb_signal, False),
            ("nvnCommandBufferWaitEvent", self.cb_wait, False),
        ]
