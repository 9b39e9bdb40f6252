"""Binary-packet submissions on the client side (gpu_host/PROTOCOL.md "Binary packets", ring
tag 4): a submission's items — packet tuples the front end makes in Python and ``Block``s of
packets a native recorder made — as the part records the GPU process joins.

A part is ``u64 seq, u32 part, u32 flags (1: the last)`` then a whole blob (its 16-byte header,
whole packets), at most ``ring_layout.MAX_PACKET`` bytes in all; a ``Block``'s chunks are whole
packets of at most ``CHUNK`` bytes, so parts are filled chunk by chunk without walking packets."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Iterable

from gpu_host import binpackets
from gpu_host.ring_layout import (
    BLOB_LAST,
    BLOB_PART,
    BLOB_STAGED,
    MAX_PACKET,
    REF_RANGE,
    STAGED_RANGE,
    TAG_BLOB,
    TAG_BLOB_REF,
)

CHUNK = 128 << 10  # recorder.c's NXR_CHUNK: a chunk's bytes at most
PART_BODY = MAX_PACKET - BLOB_PART.size - binpackets.HEADER
# Parts of about this size: the client publishes each one as soon as it is written, so the GPU
# process copies part k out of the ring while the client writes part k + 1 (the copies overlap;
# only the last part's copy is left on the frame's path).
PART_TARGET = CHUNK
MAX_PARTS = 8  # a larger submission gets larger parts: each part costs a record and a doorbell
_POISON = struct.pack("<BBH", 0, 0, 4)  # op 0: refused by name by the GPU process's decoder


@dataclass(frozen=True)
class Block:
    """Packets recorded natively: chunks of ``(body, packet count)``, whole packets each; a body
    may be a view of memory ``owner`` keeps alive (the native recorder's buffer)."""

    chunks: tuple[tuple[bytes | memoryview, int], ...]
    owner: Any = None
    # (arena address, offset): the chunks lie back to back from this offset of a command arena
    # (the native recorder's buffer there); None: ordinary memory
    arena: tuple[int, int] | None = None
    # the stage serial of each chunk (0: not staged; recorder.c stages chunks as they fill, so the
    # GPU process copies them while recording goes on: PROTOCOL.md "Staged chunks"); None: none
    stages: tuple[int, ...] | None = None
    # (address of the recorder's chunk table, chunks, bytes) where the recorder made it: the C
    # submit (ringput.c) reads the chunks there instead of walking ``chunks`` in Python
    native: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class BlobRecord:
    """One part record's payload as pieces written back to back (ring tag 4): the part and blob
    headers, then the packet bodies (views into recorder buffers that ``keep`` holds)."""

    pieces: tuple[bytes | memoryview, ...]
    keep: tuple = ()
    tag: int = TAG_BLOB  # TAG_BLOB_REF: the pieces are the headers and arena ranges (REF_RANGE)


def packet_bytes(cmd: tuple) -> bytes:
    """One packet tuple's binary form; a value that has none (a negative count, a float beyond
    f32: guest garbage that the msgpack path sent for the GPU process to refuse) becomes a packet
    of op 0, which the GPU process refuses by name too (the submission is dropped)."""
    try:
        return binpackets.packet(cmd)
    except (struct.error, OverflowError, TypeError, KeyError):
        return _POISON


def _chunks(items: Iterable) -> Iterable[tuple[bytes | memoryview, int]]:
    small: list[bytes] = []
    for it in items:
        if isinstance(it, Block):
            if small:
                yield b"".join(small), len(small)
                small = []
            yield from it.chunks
        else:
            small.append(packet_bytes(tuple(it)))
    if small:
        yield b"".join(small), len(small)


def part_records(seq: int, items: list, target: int = PART_TARGET, arena: int | None = None) -> list[BlobRecord]:
    """The part records of submission ``seq`` (at least one: an empty submission is one empty
    part, the last), each of about ``target`` bytes of packets (whole chunks; at most PART_BODY).
    No packet bytes are copied here: the ring write copies each piece once.  ``arena``: the
    address of the client's command arena; a run of Blocks recorded in it becomes one reference
    part (ring tag 5: its ranges, no bytes copied into the ring)."""
    keep = tuple(x for x in items if isinstance(x, Block))
    runs: list[tuple[bool, list]] = []  # (by reference, items)
    for it in items:
        ref = arena is not None and isinstance(it, Block) and it.arena is not None and it.arena[0] == arena
        if runs and runs[-1][0] == ref:
            runs[-1][1].append(it)
        else:
            runs.append((ref, [it]))
    parts: list[tuple[int, tuple, int, int, int]] = []  # (tag, bodies or ranges, packets, bytes, flags)
    for ref, run in runs or [(False, [])]:
        if ref:
            staged = any(b.stages for b in run)
            parts.append(
                (
                    TAG_BLOB_REF,
                    tuple(r for b in run for r in (_staged_ranges(b) if staged else _ranges(b))),
                    sum(n for b in run for _, n in b.chunks),
                    sum(len(c) for b in run for c, _ in b.chunks),
                    BLOB_STAGED if staged else 0,
                )
            )
        else:
            parts += [(TAG_BLOB, *p, 0) for p in _inline_parts(run, target)]
    out = []
    for i, (tag, pieces, n, size, flags) in enumerate(parts):
        flags |= BLOB_LAST if i == len(parts) - 1 else 0
        hdr = BLOB_PART.pack(seq, i, flags) + binpackets.blob_header(n, size)
        out.append(BlobRecord((hdr, *pieces), keep, tag))
    return out


def _ranges(b: Block) -> list[bytes]:
    """A Block in the arena as one REF_RANGE (its chunks lie back to back)."""
    return [REF_RANGE.pack(b.arena[1], sum(len(c) for c, _ in b.chunks))]


def _staged_ranges(b: Block) -> list[bytes]:
    """A Block in the arena as STAGED_RANGEs: one per staged chunk (its serial), one per run of
    chunks not staged (serial 0)."""
    out: list[bytes] = []
    at, run_at, run = b.arena[1], b.arena[1], 0
    for (c, _), stage in zip(b.chunks, b.stages or (0,) * len(b.chunks)):
        if stage:
            if run:
                out.append(STAGED_RANGE.pack(run_at, run, 0))
            out.append(STAGED_RANGE.pack(at, len(c), stage))
            run, run_at = 0, at + len(c)
        else:
            run += len(c)
        at += len(c)
    if run or not out:
        out.append(STAGED_RANGE.pack(run_at, run, 0))
    return out


def _inline_parts(items: list, target: int) -> list[tuple[tuple, int, int]]:
    """(bodies, packets, bytes) of parts of about ``target`` bytes holding ``items``' packets."""
    chunks = list(_chunks(items))
    total = sum(len(b) for b, _ in chunks)
    target = min(max(target, 1, -(-total // MAX_PARTS)), PART_BODY)
    parts: list[tuple[list, int, int]] = [([], 0, 0)]  # (bodies, packets, bytes)
    for body, count in chunks:
        bodies, n, size = parts[-1]
        if size and size + len(body) > target:
            parts.append(([], 0, 0))
            bodies, n, size = parts[-1]
        bodies.append(body)
        parts[-1] = (bodies, n + count, size + len(body))
    return [(tuple(b), n, size) for b, n, size in parts]
