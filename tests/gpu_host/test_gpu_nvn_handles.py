"""NVN command handles are freed on the lifecycle the guest follows (cpu_host/horizon/hle/nvn/
handles.py): a long run holds a bounded number of recordings however many frames it records.

The front end's host functions are called as a guest's calls reach them: a CPU record whose X
registers hold the arguments, guest structures in memory of this process (the guest-memory check
of the runtime answers yes for it: no guest kernel here).  The GPU process is left out: a queue
flush hands its submission to a sink that counts it.  Counts, not timing."""

from __future__ import annotations

import types

import cffi
import pytest

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.objects import MemoryPool
from gpu_host import packets as P

FRAMES = 1500


class Sink:
    """Where the queue's flushes go: counted."""

    def __init__(self) -> None:
        self.seq = 0

    def submit(self, pending: list) -> int:
        self.seq += 1
        return self.seq


class Guest:
    def __init__(self, monkeypatch, budget: int) -> None:
        from cpu_host.horizon.hle.nvn.frontend import NvnService

        monkeypatch.setenv("NXRECOMP_CPU_HOST_NVN_UNBACKED_COMMAND_BYTES", str(budget))
        monkeypatch.setenv("NXRECOMP_CPU_HOST_NVN_RECORDER", "python")
        self.ffi = ffi = cffi.FFI()
        self.cpu = types.SimpleNamespace(x=ffi.new("uint64_t[32]"))
        self.lib = types.SimpleNamespace(nx_hz_range_ok=lambda addr, size, perm: 1)
        self.mem = ffi.new("uint64_t[64]")  # the guest's NVN structures, 8 bytes each
        self.colour = ffi.new("float[4]", [0.25, 0.5, 0.75, 1.0])
        self.handle_arr = ffi.new("uint64_t[8]")
        self.sink = Sink()
        self.svc = NvnService(connect=lambda: self.sink, translate=lambda a, s, c, f: b"")
        self.cb, self.queue, self.pool = self.at(0), self.at(1), self.at(2)
        self.call(self.svc.cb_initialize, self.cb)
        self.call(self.svc.queue_initialize, self.queue)
        # a memory pool at guest address 1 MiB (its memfd and registration are not needed here)
        self.svc._new(self.c(self.pool), 0, lambda i: MemoryPool(i, 1 << 20, 1 << 20, False))

    def at(self, k: int) -> int:
        return int(self.ffi.cast("uintptr_t", self.mem)) + 8 * k

    def c(self, *args: int) -> Call:
        for i, a in enumerate(args):
            self.cpu.x[i] = a
        return Call(self.cpu, self.ffi, self.lib)

    def call(self, fn, *args: int):
        return fn(self.c(*args))

    def record(self, clears: int) -> int:
        s = self.svc
        self.call(s.cb_begin, self.cb)
        for _ in range(clears):
            self.call(s.cb_clear, self.cb, 0, int(self.ffi.cast("uintptr_t", self.colour)))
        return self.call(s.cb_end, self.cb)

    def submit(self, *handles: int) -> None:
        for i, h in enumerate(handles):
            self.handle_arr[i] = h
        self.call(self.svc.queue_submit, self.queue, len(handles), int(self.ffi.cast("uintptr_t", self.handle_arr)))
        self.svc._flush(next(q for q in self.svc.objects.values() if type(q).__name__ == "Queue"))


def test_recordings_without_command_memory_stay_within_the_budget(monkeypatch):
    """The demo's way: one command buffer, no command memory, a frame recorded and submitted every
    frame, plus a static list recorded once and submitted every frame."""
    g = Guest(monkeypatch, budget=16 << 10)
    static = g.record(4)
    one = len(P.encode_commands([(P.OP_CLEAR, 0.25, 0.5, 0.75, 1.0)] * 20).chunks[0][0])
    counts, first = [], None
    for frame in range(FRAMES):
        h = g.record(20)
        first = first or h
        g.submit(static, h)
        if frame in (200, FRAMES - 1):
            counts.append((len(g.svc.handles), g.svc.handles.unbacked))
    assert g.sink.seq == FRAMES
    assert counts[0] == counts[1], f"held handles / bytes grew: {counts}"  # flat
    assert counts[1][1] <= 16 << 10 and counts[1][0] <= (16 << 10) // one + 1
    g.submit(static)  # used every frame: never the least recently used
    with pytest.raises(GuestError, match=r"not a command handle \(freed: command buffer .* least recently used"):
        g.submit(first)


def test_handles_die_when_their_command_memory_is_given_again(monkeypatch):
    """A game's way: two halves of a pool given in turn as command memory (frame N records into
    half N % 2 once frame N - 2, which used it, is done): at most two recordings are held, and a
    handle of the half given again is refused naming the memory."""
    g = Guest(monkeypatch, budget=1 << 30)
    half = 64 << 10
    handles = []
    for frame in range(FRAMES):
        g.call(g.svc.cb_command_memory, g.cb, g.pool, (frame % 2) * half, half)
        g.call(g.svc.cb_control_memory, g.cb, g.at(32 + frame % 2), 8)
        handles.append(g.record(3))
        g.submit(handles[-1])
        assert len(g.svc.handles) <= 2
    assert g.svc.handles.unbacked == 0
    g.submit(handles[-2], handles[-1])  # both halves' last recordings still valid
    g.call(g.svc.cb_command_memory, g.cb, g.pool, 0, half)  # half 0 given again: frame FRAMES-2's dies
    msg = rf"{handles[-2]:#x} is not a command handle \(freed: its command memory {(1 << 20):#x}\.\."
    with pytest.raises(GuestError, match=msg):
        g.submit(handles[-2])
    g.submit(handles[-1])
    with pytest.raises(GuestError, match="past the pool's end"):
        g.call(g.svc.cb_command_memory, g.cb, g.pool, 1 << 20, 16)


def test_one_memory_range_recorded_across_additions(monkeypatch):
    """Memory added while a recording is open counts for it too: giving either range again frees it."""
    g = Guest(monkeypatch, budget=1 << 30)
    s = g.svc
    g.call(s.cb_command_memory, g.cb, g.pool, 0, 4096)
    g.call(s.cb_begin, g.cb)
    g.call(s.cb_command_memory, g.cb, g.pool, 8192, 4096)  # the first block ran out
    h = g.call(s.cb_end, g.cb)
    g.call(s.cb_command_memory, g.cb, g.pool, 0x10000, 4096)  # elsewhere: h lives
    g.submit(h)
    g.call(s.cb_command_memory, g.cb, g.pool, 8192 + 4000, 100)  # overlaps the second block
    with pytest.raises(GuestError, match="given to a command buffer again"):
        g.submit(h)
