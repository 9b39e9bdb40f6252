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
submission before it drains again.  A record that does not fit the buffer comes back as a
``bytes`` copy (the caller joins those as before)."""

from __future__ import annotations

from dataclasses import dataclass

from gpu_host import binpackets
from gpu_host.ring_layout import BLOB_LAST, BLOB_PART, REF_RANGE

HEAD = BLOB_PART.size + binpackets.HEADER  # the bytes of a part record before its packet bodies


@dataclass(frozen=True)
class Part:
    """One part record as copied: its header bytes and where its bodies lie in the buffer."""

    head: bytes  # the part header and the blob header (fewer bytes for a short record)
    at: int  # offset of the bodies in Assembly.buf
    size: int  # bytes of bodies
    contiguous: bool  # right behind the previous part's bodies of the same submission


@dataclass(frozen=True)
class RefError:
    """A reference part that cannot be followed: its submission (``seq``, None where even that
    is unreadable) is dropped with this message."""

    seq: int | None
    message: str


class Assembly:
    def __init__(self, size: int) -> None:
        self.buf = bytearray(size)
        self.view = memoryview(self.buf)
        for i in range(0, size, 4096):  # fault the pages in now, not during a frame
            self.buf[i] = 0
        self.end = 0
        self.open: tuple[int, int] | None = None  # (seq, part) of the last part taken, not the last

    def start_drain(self) -> None:
        """A new drain of the ring: with no submission open, the buffer is free again."""
        if self.open is None:
            self.end = 0

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
        self.open = None if flags & BLOB_LAST else (seq, part)
        return Part(head, at, size, follows)

    def take_ref(self, record: memoryview, arena: memoryview | None) -> "Part | bytes | RefError":
        """Copy one reference part (ring tag 5) out of the ring and the command arena: its header
        bytes from the record, the packet bodies from the arena ranges it lists (each checked to
        lie inside the arena before a byte is read), into the buffer as ``take`` puts a part's;
        a record that cannot be followed comes back as a ``RefError`` naming what is wrong."""
        n = len(record)
        if n < HEAD or (n - HEAD) % REF_RANGE.size:
            self.open = None
            seq, part = BLOB_PART.unpack_from(record)[:2] if n >= BLOB_PART.size else (None, 0)
            return RefError(seq, f"reference part {part}: {n} bytes is not the headers and whole 16-byte ranges")
        head = bytes(record[:HEAD])
        seq, part, flags = BLOB_PART.unpack_from(head)
        ranges = [REF_RANGE.unpack_from(record, HEAD + i) for i in range(0, n - HEAD, REF_RANGE.size)]
        if arena is None:
            self.open = None
            return RefError(seq, f"reference part {part}: no command arena was sent with the ring")
        for k, (off, size) in enumerate(ranges):
            if off > len(arena) or size > len(arena) - off:
                self.open = None
                return RefError(
                    seq,
                    f"reference part {part}: range {k} (offset {off}, {size} bytes) lies outside the {len(arena)}-byte command arena",
                )
        follows = self.open is not None and part > 0 and self.open == (seq, part - 1)
        at = self.end if follows else self.end + binpackets.HEADER
        total = sum(size for _, size in ranges)
        if at + total > len(self.buf):
            self.open = None
            return head + b"".join(bytes(arena[o : o + z]) for o, z in ranges)  # as a tag-4 record's bytes
        end = at
        for off, size in ranges:
            self.view[end : end + size] = arena[off : off + size]
            end += size
        self.end = end
        self.open = None if flags & BLOB_LAST else (seq, part)
        return Part(head, at, total, follows)

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
