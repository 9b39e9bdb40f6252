"""Layout of the shared-memory command ring (one producer: the CPU host; one consumer: the GPU
process).  Both sides import this module so the byte layout is written down exactly once;
PROTOCOL.md describes the same layout in words.

The ring is one memfd: a 4 KiB header page, then ``capacity`` data bytes.  Positions are
monotonic 64-bit byte counters (offset = pos % capacity), so full/empty never get confused.
Every record is ``u32 length | u32 tag`` followed by ``length`` payload bytes, padded to 8.
Tag 1 payloads are packets back to back, tag 3 payloads one msgpack array of packets.
"""

from __future__ import annotations

import ctypes
import mmap
import struct
from dataclasses import dataclass

MAGIC = 0x3130474E49525858  # b"XXRING01" little-endian
HEADER_SIZE = 4096
REC_HDR = struct.Struct("<II")
TAG_PACKET = 1
TAG_PAD = 2  # filler up to the end of the data area; the reader skips to offset 0
TAG_ARRAY = 3  # one msgpack array of packets (the client's records: one C-level unpack each)
TAG_BLOB = 4  # a part of a binary-packet submission: u64 seq, u32 part, u32 flags, a blob (PROTOCOL.md)
# a part of a binary-packet submission whose packet bodies lie in the client's command arena (shared
# memory sent with the ring): the part and blob headers as in tag 4, then u64 offset, u64 length
# ranges of the arena, back to back (PROTOCOL.md "Command arena")
TAG_BLOB_REF = 5
REF_RANGE = struct.Struct("<QQ")
BLOB_PART = struct.Struct("<QII")
BLOB_LAST = 1  # flags: the submission's last part
# flags of a tag-5 part: its ranges are STAGED_RANGE (u64 offset, u64 length, u64 stage serial; 0:
# not staged) instead of REF_RANGE (PROTOCOL.md "Staged chunks")
BLOB_STAGED = 2
STAGED_RANGE = struct.Struct("<QQQ")
# The command arena's first page is the stage queue the native recorder publishes filled chunks in
# (PROTOCOL.md "Staged chunks"): u64 entries ever published at 0, then STAGE_SLOTS entries of
# STAGE_ENTRY (u64 serial, u64 offset, u64 length) from byte 64, entry i at 64 + (i % STAGE_SLOTS) * 24;
# recorder.c's STAGE_PAGE / STAGE_SLOTS.
STAGE_PAGE = 4096
STAGE_ENTRIES_AT = 64
STAGE_ENTRY = struct.Struct("<QQQ")
STAGE_SLOTS = (STAGE_PAGE - STAGE_ENTRIES_AT) // STAGE_ENTRY.size
MAX_PACKET = 1 << 20  # a larger record is corruption, never a packet

# Header fields (byte offsets).  Producer- and consumer-written words sit on separate cache lines.
OFF_MAGIC = 0
OFF_CAPACITY = 8
OFF_WRITE = 64  # producer: bytes published
OFF_READ = 128  # consumer: bytes consumed
OFF_COMPLETED = 192  # consumer: seq of the last submission replayed (or dropped)
OFF_PRESENTED = 200  # consumer: number of the last frame presented
OFF_DROPPED = 208  # consumer: submissions dropped for bad input
OFF_FENCES = 256  # consumer: NUM_FENCES u64 fence values signalled by the GPU
NUM_FENCES = 64


# Both sides map the ring with its pages faulted in at once (MAP_POPULATE): the first lap of a
# running game writes and reads no page for the first time (page faults are dear under gVisor).
MAP_FLAGS = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)


def align8(n: int) -> int:
    return (n + 7) & ~7


@dataclass
class RingView:
    """Typed access to a mapped ring.  Counter words are ctypes views so each load/store is a
    single aligned 8-byte access (x86-64 keeps stores in order, which the protocol relies on)."""

    mm: mmap.mmap
    capacity: int

    def __post_init__(self) -> None:
        u64 = ctypes.c_uint64
        self.write = u64.from_buffer(self.mm, OFF_WRITE)
        self.read = u64.from_buffer(self.mm, OFF_READ)
        self.completed = u64.from_buffer(self.mm, OFF_COMPLETED)
        self.presented = u64.from_buffer(self.mm, OFF_PRESENTED)
        self.dropped = u64.from_buffer(self.mm, OFF_DROPPED)
        self.fences = (u64 * NUM_FENCES).from_buffer(self.mm, OFF_FENCES)

    def release(self) -> None:
        """Drop the ctypes views (they pin the mapping) and unmap."""
        del self.write, self.read, self.completed, self.presented, self.dropped, self.fences
        self.mm.close()


def init_ring(fd: int, capacity: int) -> RingView:
    """Size and initialise a fresh ring in memfd ``fd`` (producer side)."""
    import os

    if capacity <= 0 or capacity % 8 or capacity > (1 << 30):
        raise ValueError(f"ring capacity {capacity} must be a positive multiple of 8 up to 1 GiB")
    os.ftruncate(fd, HEADER_SIZE + capacity)
    mm = mmap.mmap(fd, HEADER_SIZE + capacity, MAP_FLAGS, mmap.PROT_READ | mmap.PROT_WRITE)
    struct.pack_into("<QQ", mm, 0, MAGIC, capacity)
    return RingView(mm, capacity)


class RingFormatError(ValueError):
    """The ring memory does not hold a valid ring (wrong magic, size, or a corrupt record)."""


def open_ring(fd: int) -> RingView:
    """Map a ring created by the peer, checking its header against the memfd's real size."""
    import os

    size = os.fstat(fd).st_size
    if size < HEADER_SIZE + 8:
        raise RingFormatError(f"ring memfd is {size} bytes, smaller than a header")
    mm = mmap.mmap(fd, size, MAP_FLAGS, mmap.PROT_READ | mmap.PROT_WRITE)
    magic, capacity = struct.unpack_from("<QQ", mm, 0)
    if magic != MAGIC:
        mm.close()
        raise RingFormatError(f"ring header: field magic is {magic:#x}, expected {MAGIC:#x}")
    if capacity % 8 or HEADER_SIZE + capacity != size:
        mm.close()
        raise RingFormatError(f"ring header: field capacity {capacity} does not match memfd size {size}")
    return RingView(mm, capacity)
