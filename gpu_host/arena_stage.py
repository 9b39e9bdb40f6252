"""The stage queue of the command arena, GPU-process side (PROTOCOL.md "Staged chunks").

The native recorder (cpu_host/horizon/hle/nvn/recorder.c) publishes each chunk of a recording as
the chunk fills: an entry ``u64 serial, u64 offset, u64 length`` in the arena's first page
(``ring_layout.STAGE_*``) behind a u64 count of entries ever published, then rings the ring's
doorbell.  ``StageQueue.take`` reads the entries published since its last call, each read once
into local values; an entry that cannot be one (its range outside the arena or inside the queue
page, longer than a chunk can be, serial 0) comes back as a ``StageError`` naming the entry and
field, so the consumer logs it and counts it; nothing of it is used.  Entries the queue lost (the
client published more than ``STAGE_SLOTS`` between two reads, or a slot changed while it was
read) are skipped: staging is only an early copy, and a chunk not staged is copied from the arena
when its submission arrives, as before.

The arena is the client's memory: nothing read here is trusted beyond the checks above, and the
staged copies (``blob_assembly.Assembly.stage``) are the GPU process's own, checked by the
native decoder with the rest of their submission."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

from gpu_host.ring_layout import MAX_PACKET, STAGE_ENTRIES_AT, STAGE_ENTRY, STAGE_PAGE, STAGE_SLOTS

_COUNT = struct.Struct("<Q")


class Staged(NamedTuple):
    """One usable entry: chunk ``serial`` lies at ``offset`` of the arena, ``length`` bytes (a
    named tuple: made per staged chunk on the consumer's path, ~6x cheaper than a frozen
    dataclass)."""

    serial: int
    offset: int
    length: int


@dataclass(frozen=True)
class StageError:
    """An entry that cannot be used, and why (PROTOCOL.md's words)."""

    index: int
    message: str


class StageQueue:
    def __init__(self, arena: memoryview) -> None:
        self.arena = arena
        self.size = len(arena)
        # Entries published before this session (a restarted GPU process) are not read: their
        # chunks reach the submissions that name them by copy.
        self.read = self._count() if self.size >= STAGE_PAGE else 0

    def _count(self) -> int:
        return _COUNT.unpack_from(self.arena, 0)[0]

    def pending(self) -> bool:
        """Entries were published since the last ``take`` (a cheap poll: one u64 read)."""
        return self.size >= STAGE_PAGE and self._count() != self.read

    def take(self) -> list[Staged | StageError]:
        """The entries published since the last call (see the module's text)."""
        if self.size < STAGE_PAGE:
            return []
        end = self._count()
        if end < self.read:  # the count went back: a hostile or re-initialised queue
            bad = StageError(end, f"stage queue: count {end} is below the {self.read} entries already read")
            self.read = end
            return [bad]
        start = max(self.read, end - STAGE_SLOTS)
        entries = [
            STAGE_ENTRY.unpack_from(self.arena, STAGE_ENTRIES_AT + (i % STAGE_SLOTS) * STAGE_ENTRY.size)
            for i in range(start, end)
        ]
        # Slots the client may have overwritten while they were read (it published a lap more).
        lost = self._count() - STAGE_SLOTS
        self.read = end
        out: list[Staged | StageError] = []
        for i, (serial, off, length) in zip(range(start, end), entries):
            if i < lost:
                continue
            out.append(self._check(i, serial, off, length))
        return out

    def _check(self, i: int, serial: int, off: int, length: int) -> Staged | StageError:
        if serial and 0 < length <= MAX_PACKET and STAGE_PAGE <= off <= self.size and length <= self.size - off:
            return Staged(serial, off, length)  # the usual case: no message made
        where = f"stage entry {i} (serial {serial}, offset {off}, {length} bytes)"
        if serial == 0:
            return StageError(i, f"{where}: serial 0 names no chunk")
        if length == 0 or length > MAX_PACKET:
            return StageError(i, f"{where}: length is not 1..{MAX_PACKET} bytes")
        return StageError(
            i, f"{where}: range lies outside the {self.size}-byte command arena's buffers ({STAGE_PAGE}..{self.size})"
        )
