"""Binary submission parts (ring tag 4) copied out of the ring once, straight into where their
replay reads them (PROTOCOL.md "Binary packets").

The ring's pages are shared with the client, so a record is copied into the GPU process's own
memory before anything of it is checked (a hostile client could change bytes between a check and
their use).  ``Assembly.take`` is that copy for part records: the part's 32 header bytes (part
header + blob header) into a small ``bytes``, its packet bodies into one buffer that is kept and
reused (its pages are faulted in once, not per frame), each part's bodies right behind the
previous part's of the same submission and the first part's behind 16 bytes left free.  At the
last part the joined blob header goes into those 16 bytes (``blob``): the blob the replay reads is
a view of the buffer, with no join copy.  Everything ``take`` returns is only valid until the
next drain that starts with no submission open (``start_drain``); the consumer replays each
submission before it drains again, and says at each drain whether it still holds parts of an
open submission (``start_drain(holding=...)``): a record that does not fit the buffer comes back
as a ``bytes`` copy (the caller joins those as before), and the parts taken before it must stay
where they are until their submission's last part.

Staged chunks (PROTOCOL.md "Staged chunks"): ``stage`` copies a chunk the recorder published while
it recorded into the buffer at once, where the submission that names it (a tag-5 part whose
ranges carry stage serials) will want it: right behind the chunk staged before it when that one
is its predecessor in the arena (one recording's chunks back to back), else behind 16 free bytes
for a blob header.  ``take_ref`` then uses a staged copy in place when the part's ranges can be
laid out from it without touching any other staged copy, copying only the ranges not staged
(a last chunk too small to stage) behind it; otherwise it copies the part as before (staged ranges
from their copies, the rest from the arena).  A staged copy is used once; copies never named
stay until the buffer is needed (``stage`` evicts them all when it is full)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from gpu_host import binpackets
from gpu_host.ring_layout import BLOB_LAST, BLOB_PART, BLOB_STAGED, REF_RANGE, STAGED_RANGE

HEAD = BLOB_PART.size + binpackets.HEADER  # the bytes of a part record before its packet bodies


class Part(NamedTuple):
    """One part record as copied: its header bytes and where its bodies lie in the buffer (a
    named tuple: made per part on the consumer's path, ~6x cheaper than a frozen dataclass)."""

    head: bytes  # the part header and the blob header (fewer bytes for a short record)
    at: int  # offset of the bodies in Assembly.buf
    size: int  # bytes of bodies
    contiguous: bool  # right behind the previous part's bodies of the same submission
    checked: bool = False  # every body byte format-checked where it lies now (Assembly's ``check``)


@dataclass(frozen=True)
class RefError:
    """A reference part that cannot be followed: its submission (``seq``, None where even that
    is unreadable) is dropped with this message."""

    seq: int | None
    message: str


class Assembly:
    def __init__(
        self,
        size: int,
        check: Callable[[Any], int] | None = None,
        copy_check: Callable[[bytearray, int, Any, int, int], int] | None = None,
    ) -> None:
        """``check``: the format pass over bare packet bodies (``nxpkt.format_body``: packets, or
        -1), run on each staged copy as it is staged (while the client is still recording) and
        on what a reference part copies from the arena; a part all of whose bytes passed it says
        so (``Part.checked``) and its replay leaves that pass out.  None: nothing checked here.
        ``copy_check``: the copy and that pass in one call (``nxpkt.copy_format_body(buf, at,
        arena, off, size)``, checking the copy), used instead of a slice copy then ``check``
        where given with ``check``: the same bytes copied, the same result."""
        self.check = check
        self.copy_check = copy_check if check is not None else None
        self.buf = bytearray(size)
        self.view = memoryview(self.buf)
        for i in range(0, size, 4096):  # fault the pages in now, not during a frame
            self.buf[i] = 0
        self.end = 0
        self.open: tuple[int, int] | None = None  # (seq, part) of the last part taken, not the last
        self.staged: dict[int, tuple[int, int, int]] = {}  # serial -> (arena offset, length, at)
        self.formed: set[int] = set()  # serials of the staged copies that passed ``check``
        self.last_stage: tuple[int, int, int] | None = None  # the copy staged last, while it is at the end
        self.staged_used = 0  # staged copies a submission used in place (GetStatus.staged_chunks)
        self.live: list[tuple[int, int]] = []  # spans of the parts taken since the buffer was freed (blob header room included)
        self.holding = False  # a submission's parts lie in the buffer (set by start_drain): nothing is evicted

    def start_drain(self, holding: bool = False) -> None:
        """A new drain of the ring: with no submission open, the buffer is free again (but for
        the staged copies not yet used).  ``holding``: the caller still holds parts of an open
        submission (the consumer's own state: a part that did not fit came back as bytes and
        left ``open`` unset, but the parts before it still lie in the buffer)."""
        self.holding = holding or self.open is not None
        if not self.holding:
            self.live = []
            self.end = max((at + n for _, n, at in self.staged.values()), default=0)
            if self.end == 0:
                self.last_stage = None

    def stage(self, serial: int, off: int, size: int, arena: memoryview) -> bool:
        """Copy chunk ``serial`` (``size`` bytes at ``off`` of the arena, checked by the caller)
        into the buffer now; False where it was not kept (a submission open and no room)."""
        prev = self.last_stage
        at = (
            prev[2] + prev[1]
            if prev is not None and prev[0] + prev[1] == off and prev[2] + prev[1] == self.end
            else self.end + binpackets.HEADER
        )
        if at + size > len(self.buf):
            if self.holding or self.open is not None:
                return False
            self.staged.clear()  # evicted: their submissions copy them from the arena
            self.formed.clear()
            at = binpackets.HEADER
            if at + size > len(self.buf):
                self.end, self.last_stage = 0, None
                return False
        if self.copy_check is not None:
            ok = self.copy_check(self.buf, at, arena, off, size) >= 0
        else:
            self.view[at : at + size] = arena[off : off + size]
            ok = self.check is not None and self.check(self.view[at : at + size]) >= 0
        self.staged[serial] = (off, size, at)
        if ok:
            self.formed.add(serial)  # checked on our copy: the client can no longer change it
        else:
            self.formed.discard(serial)
        self.end, self.last_stage = at + size, (off, size, at)
        return True

    def take(self, record: memoryview) -> Part | bytes:
        """Copy one part record out of the ring (``record`` is a view of the ring's pages, read
        here once)."""
        n = len(record)
        if n < HEAD:
            self.open = None
            return bytes(record)  # too short: the caller names what is missing
        head = bytes(record[:HEAD])
        seq, part, flags = BLOB_PART.unpack_from(head)
        follows = self.open is not None and part > 0 and self.open == (seq, part - 1)
        at = self.end if follows else self.end + binpackets.HEADER
        size = n - HEAD
        if at + size > len(self.buf):
            self.open = None
            return bytes(record)
        self.view[at : at + size] = record[HEAD:]
        self.end = at + size
        self.live.append((at - binpackets.HEADER, at + size))
        self.open = None if flags & BLOB_LAST else (seq, part)
        return Part(head, at, size, follows)

    def take_ref(self, record: memoryview, arena: memoryview | None) -> "Part | bytes | RefError":
        """Copy one reference part (ring tag 5) out of the ring and the command arena: its header
        bytes from the record, the packet bodies from the arena ranges it lists (each checked to
        lie inside the arena before a byte is read; ranges with stage serials from their staged
        copies where those are at hand), into the buffer as ``take`` puts a part's; a record that
        cannot be followed comes back as a ``RefError`` naming what is wrong."""
        n = len(record)
        flags = BLOB_PART.unpack_from(record)[2] if n >= BLOB_PART.size else 0
        rng = STAGED_RANGE if flags & BLOB_STAGED else REF_RANGE
        if n < HEAD or (n - HEAD) % rng.size:
            self.open = None
            seq, part = BLOB_PART.unpack_from(record)[:2] if n >= BLOB_PART.size else (None, 0)
            return RefError(seq, f"reference part {part}: {n} bytes is not the headers and whole {rng.size}-byte ranges")
        head = bytes(record[:HEAD])
        seq, part, flags = BLOB_PART.unpack_from(head)
        if rng is REF_RANGE:
            ranges = [(off, size, 0) for off, size in REF_RANGE.iter_unpack(record[HEAD:])]
        else:
            ranges = list(STAGED_RANGE.iter_unpack(record[HEAD:]))
        if arena is None:
            self.open = None
            return RefError(seq, f"reference part {part}: no command arena was sent with the ring")
        for k, (off, size, _) in enumerate(ranges):
            if off > len(arena) or size > len(arena) - off:
                self.open = None
                return RefError(
                    seq,
                    f"reference part {part}: range {k} (offset {off}, {size} bytes) lies outside the {len(arena)}-byte command arena",
                )
        follows = self.open is not None and part > 0 and self.open == (seq, part - 1)
        total = sum(size for _, size, _ in ranges)
        staged = list(map(self._staged, ranges))
        at = None if follows else self._in_place(ranges, staged)
        if at is None:
            at = self.end if follows else self.end + binpackets.HEADER
        if at + total > len(self.buf):
            self.open = None
            return head + b"".join(self._bytes(r, st, arena) for r, st in zip(ranges, staged))  # as a tag-4 record's bytes
        end, checked = at, self.check is not None
        for (off, size, serial), st in zip(ranges, staged):
            if st is not None:
                del self.staged[serial]
                if serial not in self.formed:
                    checked = False
                self.formed.discard(serial)
                if st == end:
                    self.staged_used += 1
                else:
                    self.view[end : end + size] = self.view[st : st + size]
            elif checked and self.copy_check is not None:
                if self.copy_check(self.buf, end, arena, off, size) < 0:
                    checked = False  # the submission's check names what is wrong
            else:
                self.view[end : end + size] = arena[off : off + size]
                if checked and self.check(self.view[end : end + size]) < 0:
                    checked = False  # the submission's check names what is wrong
            end += size
        self.end = max(self.end, end)
        self.live.append((at - binpackets.HEADER, end))
        if self.end == end:
            self.last_stage = None
        self.open = None if flags & BLOB_LAST else (seq, part)
        return Part(head, at, total, follows, checked)

    def _staged(self, r: tuple[int, int, int]) -> int | None:
        """Where range ``r``'s staged copy lies in the buffer, or None (not staged, or the copy
        is of another place or length: the arena is read instead)."""
        off, size, serial = r
        e = self.staged.get(serial) if serial else None
        return e[2] if e is not None and e[0] == off and e[1] == size else None

    def _in_place(self, ranges: list, staged: list) -> int | None:
        """The buffer offset at which the part's bodies lie when its staged ranges stay where they
        were staged (no copy of them), or None: every staged range must then be where the one
        before it ends, and the ranges not staged, copied behind them, and the 16 bytes of blob
        header in front must touch no other staged copy and no part taken since the buffer was
        freed."""
        if not ranges or staged[0] is None or staged[0] < binpackets.HEADER:
            return None
        at = end = staged[0]
        mine = {st for st in staged if st is not None}
        others = [(a, a + n) for _, n, a in self.staged.values() if a not in mine] + self.live
        spans = [(at - binpackets.HEADER, at)]
        for (_, size, _), st in zip(ranges, staged):
            if st is None:
                spans.append((end, end + size))
            elif st != end:
                return None
            end += size
        if end > len(self.buf) or any(a < y and b > x for a, b in others for x, y in spans):
            return None
        return at

    def _bytes(self, r: tuple[int, int, int], st: int | None, arena: memoryview) -> bytes:
        off, size, serial = r
        if st is not None:
            del self.staged[serial]
            self.formed.discard(serial)
            return bytes(self.view[st : st + size])
        return bytes(arena[off : off + size])

    def blob(self, parts: list[Part], count: int) -> memoryview | None:
        """The joined blob of a submission's parts (each checked by the caller) as a view of the
        buffer, its header written in front of the first part's bodies; None where the parts do not
        lie back to back (the caller joins them by copying)."""
        if not parts or any(not p.contiguous for p in parts[1:]) or parts[0].at < binpackets.HEADER:
            return None
        start, size = parts[0].at - binpackets.HEADER, sum(p.size for p in parts)
        if parts[-1].at + parts[-1].size != parts[0].at + size:
            return None
        binpackets.header_into(self.view, start, count, size)
        return self.view[start : parts[0].at + size]

    def body(self, p: Part) -> memoryview:
        return self.view[p.at : p.at + p.size]
