"""The split's copy step alone (issue 32): one frame's staged chunks through the GPU process's real
path, ``StageQueue.take`` -> ``Assembly.stage`` -> ``Assembly.take_ref`` of its tag-5 staged
reference part, on this host's CPU (no GPU, no client process).  A frame is DRAWS DRAW packets
(20 bytes each) cut into recorder chunks of at most 128 KiB (recorder.c NXR_CHUNK), published in
the arena's stage queue as the recorder publishes them.  Prints the thread CPU time of the step
(median and 10th percentile over ITERS frames) and the first frame's blob SHA-256; each frame's
bytes are asserted equal to the recording and format-checked (``Part.checked``).

    python bench/gpu_copy_step.py [DRAWS=10000] [ITERS=300] [--split]

``--split``: the copy and the format pass as two steps (slice copy, then ``nxpkt.format_body``)
instead of one C call (``nxpkt.copy_format_body``): the same results, the old way.  For
instruction counts run it under ``valgrind --tool=callgrind`` with ITERS 0 and 40 and take the
difference over 40 (docs/PERFORMANCE.md)."""

from __future__ import annotations

import hashlib
import statistics
import struct
import sys
import time

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


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    draws = int(args[0]) if args else 10000
    iters = int(args[1]) if len(args) > 1 else 300
    body = B.convert([(P.OP_DRAW, 3, 1, k, 0) for k in range(draws)])[B.HEADER :]
    psz = len(body) // draws
    per = CHUNK // psz
    chunks = [body[i * psz : (i + per) * psz] for i in range(0, draws, per)]
    arena = bytearray(STAGE_PAGE + len(body) + 4096)
    view = memoryview(arena)
    offs, off = [], STAGE_PAGE
    for c in chunks:
        view[off : off + len(c)] = c
        offs.append(off)
        off += len(c)
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


if __name__ == "__main__":
    main()
