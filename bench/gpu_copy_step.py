"""The split's copy step alone (issue 32): one frame's staged chunks through the GPU process's real
path, ``StageQueue.take`` -> ``Assembly.stage`` -> ``Assembly.take_ref`` of its tag-5 staged
reference part, on this host's CPU (no GPU, no client process).  A frame is DRAWS DRAW packets
(20 bytes each) cut into recorder chunks of at most 128 KiB (recorder.c NXR_CHUNK), published in
the arena's stage queue as the recorder publishes them.  Prints the thread CPU time of the step
(median and 10th percentile over ITERS frames) and the first frame's blob SHA-256; each frame's
bytes are asserted equal to the recording and format-checked (``Part.checked``).

    python bench/gpu_copy_step.py [DRAWS=10000] [ITERS=300] [--split] [--tail]

``--split``: the copy and the format pass as two steps (slice copy, then ``nxpkt.format_body``)
instead of one C call (``nxpkt.copy_format_body``): the same results, the old way.  For
``--tail``: the part of the step on a split frame's path (issue 32's transport share): every chunk but
the last staged beforehand (while the client records), then, timed, what the GPU process does after
the recording ends: the stage queue read, the last chunk's stage (copy + format pass), the ring
drain of the tag-5 record (``RingReader.records`` -> ``Assembly.take_ref``) and the join of the
submission's blob (``binpackets.part_count``, ``Assembly.blob``).  For
instruction counts run it under ``valgrind --tool=callgrind`` with ITERS 0 and 40 and take the
difference over 40 (docs/PERFORMANCE.md)."""

from __future__ import annotations

import hashlib
import statistics
import struct
import sys
import time
from pathlib import Path

from gpu_host import binpackets as B
from gpu_host import nxpkt
from gpu_host import packets as P
from gpu_host.arena_stage import StageQueue
from gpu_host.blob_assembly import Assembly
from gpu_host.ring_layout import (
    BLOB_LAST,
    BLOB_PART,
    BLOB_STAGED,
    STAGE_ENTRIES_AT,
    STAGE_ENTRY,
    STAGE_PAGE,
    STAGE_SLOTS,
    STAGED_RANGE,
)

CHUNK = 128 << 10  # recorder.c NXR_CHUNK


def _arena(chunks: list[bytes], size: int) -> tuple[memoryview, list[int]]:
    """An arena for ``size`` bytes of chunks (the stage page first, a page spare) holding
    ``chunks`` one after another, and their offsets in it."""
    view = memoryview(bytearray(STAGE_PAGE + size + 4096))
    offs, off = [], STAGE_PAGE
    for c in chunks:
        view[off : off + len(c)] = c
        offs.append(off)
        off += len(c)
    return view, offs


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    draws = int(args[0]) if args else 10000
    iters = int(args[1]) if len(args) > 1 else 300
    body = B.convert([(P.OP_DRAW, 3, 1, k, 0) for k in range(draws)])[B.HEADER :]
    psz = len(body) // draws
    per = CHUNK // psz
    chunks = [body[i * psz : (i + per) * psz] for i in range(0, draws, per)]
    view, offs = _arena(chunks, len(body))
    if "--split" in sys.argv:
        a = Assembly(4 * len(body) + (1 << 20), check=nxpkt.format_body)
    else:
        a = Assembly(4 * len(body) + (1 << 20), check=nxpkt.format_body, copy_check=nxpkt.copy_format_body)
    q = StageQueue(view)
    state = {"serial": 0, "count": 0}
    hdr = B.blob_header(draws, len(body))

    def frame(seq: int):
        ranges = []
        for o, c in zip(offs, chunks):  # the recorder publishes each chunk
            state["serial"] += 1
            at = STAGE_ENTRIES_AT + (state["count"] % STAGE_SLOTS) * STAGE_ENTRY.size
            STAGE_ENTRY.pack_into(view, at, state["serial"], o, len(c))
            state["count"] += 1
            ranges.append((o, len(c), state["serial"]))
        struct.pack_into("<Q", view, 0, state["count"])
        rec = memoryview(BLOB_PART.pack(seq, 0, BLOB_LAST | BLOB_STAGED) + hdr + b"".join(STAGED_RANGE.pack(*r) for r in ranges))
        t0 = time.thread_time_ns()
        a.start_drain()
        for e in q.take():
            a.stage(e.serial, e.offset, e.length, view)
        p = a.take_ref(rec, view)
        t1 = time.thread_time_ns()
        assert p.checked and bytes(a.body(p)) == body, p
        return p, t1 - t0

    p, _ = frame(1)
    sha = hashlib.sha256(bytes(a.blob([p], draws))).hexdigest()
    print(f"{draws} draws, {len(chunks)} chunks, {len(body)} bytes; blob sha256 {sha[:16]}")
    if iters:
        ts = sorted(frame(s)[1] / 1e3 for s in range(2, iters + 2))
        print(f"copy step thread CPU: median {statistics.median(ts):.1f} us, p10 {ts[len(ts) // 10]:.1f} us")


def tail(draws: int, iters: int) -> None:
    """``--tail`` (see the module's text): issue 32's realistic frame (a uniform range before
    every draw, a texture every 5, a program every 50), cut as the recorder cuts it."""
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))
    from gpu_packets import realistic_frame

    from cpu_host.gpu_client.ring_writer import RingWriter
    from gpu_host.ring_layout import TAG_BLOB_REF, init_ring, open_ring
    from gpu_host.ring_reader import RingReader

    cmds = realistic_frame(draws, 1, target=7, programs=(1, 2), textures=(10, 11), sampler=1, ubo_at=4096, ubos=64)
    chunks, cur = [], b""
    for c in cmds:  # whole packets, at most CHUNK bytes a chunk
        pk = B.convert([c])[B.HEADER :]
        if len(cur) + len(pk) > CHUNK:
            chunks.append(cur)
            cur = b""
        cur += pk
    chunks.append(cur)
    body = b"".join(chunks)
    view, offs = _arena(chunks, len(body))
    ring_fd, bell = os.memfd_create("tail-ring"), os.eventfd(0, os.EFD_NONBLOCK)
    w = RingWriter(init_ring(ring_fd, 8 << 20), bell)
    rd = RingReader(open_ring(ring_fd), bell, view.toreadonly())
    a = Assembly(2 * (8 << 20) + (1 << 20), check=nxpkt.format_body, copy_check=nxpkt.copy_format_body)
    q = StageQueue(view)
    state = {"serial": 0, "count": 0}
    hdr = B.blob_header(len(cmds), len(body))

    def publish(k: int, ranges: list) -> None:
        state["serial"] += 1
        at = STAGE_ENTRIES_AT + (state["count"] % STAGE_SLOTS) * STAGE_ENTRY.size
        STAGE_ENTRY.pack_into(view, at, state["serial"], offs[k], len(chunks[k]))
        state["count"] += 1
        struct.pack_into("<Q", view, 0, state["count"])
        ranges.append((offs[k], len(chunks[k]), state["serial"]))

    def frame(seq: int):
        ranges: list = []
        for k in range(len(chunks) - 1):  # staged one by one while the client records
            publish(k, ranges)
            a.start_drain()
            for e in q.take():
                a.stage(e.serial, e.offset, e.length, rd.arena)
            assert not rd.records()
        publish(len(chunks) - 1, ranges)  # the recording ends: its last chunk staged, then submitted
        w.write(
            BLOB_PART.pack(seq, 0, BLOB_LAST | BLOB_STAGED) + hdr + b"".join(STAGED_RANGE.pack(*r) for r in ranges),
            tag=TAG_BLOB_REF,
        )
        w.publish()
        t0 = time.thread_time_ns()
        a.start_drain()
        for e in q.take():
            a.stage(e.serial, e.offset, e.length, rd.arena)
        ((tag, p),) = rd.records(blob_sink=a.take, ref_sink=a.take_ref)
        count = B.part_count(p.head[BLOB_PART.size :], p.size, 0)
        blob = a.blob([p], count)
        t1 = time.thread_time_ns()
        assert p.checked and bytes(a.body(p)) == body and blob is not None, p
        return blob, t1 - t0

    blob, _ = frame(1)
    print(
        f"{draws} draws, {len(chunks)} chunks ({len(chunks[-1])} bytes last), {len(body)} bytes; blob sha256 "
        f"{hashlib.sha256(bytes(blob)).hexdigest()[:16]}; staged copies used in place so far: {a.staged_used}"
    )
    if iters:
        ts = sorted(frame(s)[1] / 1e3 for s in range(2, iters + 2))
        print(
            f"frame-path tail of the copy step, thread CPU: median {statistics.median(ts):.1f} us, p10 {ts[len(ts) // 10]:.1f} us"
        )


if __name__ == "__main__":
    if "--tail" in sys.argv:
        a = [int(x) for x in sys.argv[1:] if not x.startswith("--")]
        tail(a[0] if a else 10000, a[1] if len(a) > 1 else 300)
    else:
        main()
