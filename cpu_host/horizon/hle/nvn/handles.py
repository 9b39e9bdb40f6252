"""How long an NVN command handle lives in the front end (the recording it names is freed after).

The model is NVN's as publicly described, and deko3d's (devkitPro's open NVN-like API:
``dkCmdBufAddMemory``, ``dkCmdBufFinishList``, ``dkCmdBufClear``): a command buffer records into
memory the application gives it (``nvnCommandBufferAddCommandMemory`` / ``AddControlMemory``), a
command handle names commands in that memory, and it stays valid, submitted as often as the game
likes, until the game hands that memory to a command buffer again — then it will be written over.
So a handle is freed here when a range it was recorded into is added again (to any command buffer).

Our guest SDK (examples/horizon_hello/sdk/nvn.h) also lets a command buffer record with no memory
given at all (the demo records a frame into one that way every frame): then the recording lives in
host memory only, and nothing tells when its handle is dead.  Those recordings are kept within a
byte budget (``cpu_host.nvn_unbacked_command_bytes``), least recently used (recorded or submitted)
freed first, so a static command list submitted every frame stays while per-frame ones go.
A freed handle submitted later is a guest error that says why it died.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

from cpu_host.horizon.hle.nvn.objects import RecordedCommands

_REASONS = 4096  # freed handles whose cause of death is remembered for the error


@dataclass(frozen=True)
class Held:
    commands: RecordedCommands
    cb: int  # the command buffer that recorded it
    ranges: frozenset[tuple[int, int]]  # guest ranges [start, end) it was recorded into; empty: host only
    nbytes: int


def nbytes(rc: RecordedCommands) -> int:
    enc = rc.encoded
    return enc.nbytes if hasattr(enc, "nbytes") else sum(len(b) for b, _ in enc.chunks)


class CommandHandles:
    def __init__(self, unbacked_budget: int) -> None:
        self.budget = unbacked_budget
        self.held: collections.OrderedDict[int, Held] = collections.OrderedDict()  # least recently used first
        self.unbacked = 0  # bytes of the held recordings with no guest memory
        self.why: collections.OrderedDict[int, str] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self.held)

    def add(self, handle: int, h: Held) -> None:
        self.held[handle] = h
        if not h.ranges:
            self.unbacked += h.nbytes
            self._trim(handle)

    def use(self, handle: int) -> RecordedCommands | str:
        """The recording of ``handle`` (now the most recently used), or why there is none."""
        h = self.held.get(handle)
        if h is None:
            return self.why.get(handle, "not a command handle")
        self.held.move_to_end(handle)
        return h.commands

    def memory_reused(self, start: int, end: int, what: str) -> int:
        """The game gave guest memory [start, end) to a command buffer: the handles recorded into it
        are freed (it will be written over).  Returns how many."""
        dead = [k for k, h in self.held.items() if any(s < end and start < e for s, e in h.ranges)]
        for k in dead:
            s, e = next(r for r in self.held[k].ranges if r[0] < end and start < r[1])
            self._free(k, f"its command memory {s:#x}..{e:#x} was given to a command buffer again ({what})")
        return len(dead)

    def _trim(self, keep: int) -> None:
        if self.unbacked <= self.budget:
            return
        for k in [k for k, h in self.held.items() if not h.ranges and k != keep]:
            if self.unbacked <= self.budget:
                break
            self._free(
                k,
                f"command buffer {self.held[k].cb} recorded it with no command memory and it was the "
                f"least recently used of such recordings past cpu_host.nvn_unbacked_command_bytes "
                f"({self.budget} bytes)",
            )

    def _free(self, handle: int, why: str) -> None:
        h = self.held.pop(handle)
        if not h.ranges:
            self.unbacked -= h.nbytes
        self.why[handle] = f"freed: {why}"
        while len(self.why) > _REASONS:
            self.why.popitem(last=False)
