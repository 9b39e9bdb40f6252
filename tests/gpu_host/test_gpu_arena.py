"""The command arena (PROTOCOL.md "Command arena", issue 32): recordings in shared memory that a
submission references (ring tag 5: offset and length) instead of copying them into the ring.

Through a real GPU process: a frame referenced in the arena equals the same frame copied into the
ring (and the msgpack path's), with a few dozen ring bytes instead of the blob's; a submission
mixing packets made in Python with a referenced recording keeps its order; hostile references
(outside the arena, a torn range list) drop their submission naming what is wrong, and the
process keeps serving.  The C recorder's arena allocator (recorder.c) in a process of its own:
recordings land in the arena, grow in it, fall back to malloc when it is full, and hold the same
packets either way."""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from cpu_host.gpu_client.blob import Block, part_records
from gpu_guest import P, frame_image
from gpu_host import binpackets as B
from gpu_host.arena_stage import Staged, StageError, StageQueue
from gpu_host.blob_assembly import Assembly, Part, RefError
from gpu_host.ring_layout import (
    BLOB_LAST,
    BLOB_PART,
    BLOB_STAGED,
    REF_RANGE,
    STAGE_ENTRIES_AT,
    STAGE_ENTRY,
    STAGE_PAGE,
    STAGE_SLOTS,
    STAGED_RANGE,
    TAG_BLOB,
    TAG_BLOB_REF,
)

from test_gpu_blob_ring import env, expected, scene  # noqa: F401 (env: the module fixture)


def put_in_arena(gpu, at: int, cmds: list[tuple]) -> Block:
    """The packets of ``cmds`` written into the client's arena at ``at`` as a Block that says so
    (what the native recorder hands over when it records there)."""
    c = gpu.client
    body = B.convert(cmds)[B.HEADER :]
    c.arena_mm[at : at + len(body)] = body
    return Block(((memoryview(c.arena_mm)[at : at + len(body)], len(cmds)),), None, (c.arena, at))


def ring_bytes(gpu, fn) -> tuple[int, int]:
    """(seq, bytes written into the ring) of the submission ``fn`` makes."""
    before = gpu.client.writer.wpos
    seq = fn()
    return seq, gpu.client.writer.wpos - before


def test_referenced_frame_equals_copied_frame(env):  # noqa: F811
    gpu = env[0]
    c = gpu.client
    assert c.arena is not None and c.arena_size == 32 << 20  # the default gpu_host.command_arena_bytes
    n1, n2, n3 = (next(gpu.frames) for _ in range(3))
    c.wait(c.submit(scene(env, n1)), timeout=30)
    a = frame_image(c, n1)
    block = put_in_arena(gpu, 4096, scene(env, n2))
    parts = c.status().arena_parts
    seq, ref_bytes = ring_bytes(gpu, lambda: c.submit([block]))
    c.wait(seq, timeout=30)
    assert c.status().arena_parts == parts + 1
    b = frame_image(c, n2)
    arena, c.arena = c.arena, None  # the same Block copied into the ring (tag 4)
    try:
        block3 = put_in_arena(gpu, 1 << 20, scene(env, n3))
        seq, copy_bytes = ring_bytes(gpu, lambda: c.submit([block3]))
    finally:
        c.arena = arena
    c.wait(seq, timeout=30)
    assert np.array_equal(a, expected()) and np.array_equal(b, a) and np.array_equal(frame_image(c, n3), a)
    body = sum(len(x) for x, _ in block.chunks)
    # a reference: record header, part and blob headers, one range; a copy: the bodies too
    assert ref_bytes == 8 + BLOB_PART.size + B.HEADER + REF_RANGE.size and copy_bytes >= body > 4 * ref_bytes
    recs = part_records(9, [block], arena=c.arena)
    assert [r.tag for r in recs] == [TAG_BLOB_REF] and recs[0].pieces[1] == REF_RANGE.pack(4096, body)


def test_python_packets_around_a_referenced_recording(env):  # noqa: F811
    """TARGET and CLEAR made in Python, the draws referenced in the arena, PRESENT in Python:
    three parts (tag 4, tag 5, tag 4) joined in order."""
    gpu = env[0]
    c = gpu.client
    n = next(gpu.frames)
    cmds = scene(env, n)
    block = put_in_arena(gpu, 2 << 20, cmds[2:-1])
    recs = part_records(1, [*cmds[:2], block, cmds[-1]], arena=c.arena)
    assert [r.tag for r in recs] == [TAG_BLOB, TAG_BLOB_REF, TAG_BLOB]
    c.wait(c.submit([*cmds[:2], block, cmds[-1]]), timeout=30)
    assert np.array_equal(frame_image(c, n), expected())


def raw_ref(gpu, payload: bytes) -> int:
    c = gpu.client
    c.seq += 1
    c.pending[c.seq] = []
    c.writer.write(BLOB_PART.pack(c.seq, 0, BLOB_LAST) + payload, tag=TAG_BLOB_REF)
    c.writer.publish()
    return c.seq


def test_hostile_references_are_named_and_dropped(env):  # noqa: F811
    gpu = env[0]
    c = gpu.client
    good = B.convert(scene(env, 1)[:-1])
    hdr = good[: B.HEADER]
    cases = [
        (
            hdr + REF_RANGE.pack((32 << 20) - 8, 244),
            "range 0 (offset 33554424, 244 bytes) lies outside the 33554432-byte command arena",
        ),
        (hdr + REF_RANGE.pack(0, 1 << 63), "range 0 (offset 0, 9223372036854775808 bytes) lies outside"),
        (hdr + REF_RANGE.pack(0, 244)[:12], "reference part 0: 44 bytes is not the headers and whole 16-byte ranges"),
    ]
    for payload, message in cases:
        before = c.dropped()
        seq = raw_ref(gpu, payload)
        c.wait(seq, timeout=20)
        assert c.dropped() == before + 1, message
        deadline = time.monotonic() + 5
        while message not in gpu.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert message in gpu.log(), (message, gpu.log()[-2000:])
    # a range whose bytes do not make a blob: the decoder's named error, as for a copied part
    before = c.dropped()
    c.arena_mm[0:16] = bytes(16)
    c.wait(raw_ref(gpu, hdr + REF_RANGE.pack(0, 16)), timeout=20)
    assert c.dropped() == before + 1
    n = next(gpu.frames)
    c.wait(c.submit([put_in_arena(gpu, 4096, scene(env, n))]), timeout=30)
    assert np.array_equal(frame_image(c, n), expected())


def test_assembly_follows_references():
    """Assembly.take_ref: bodies copied from the listed arena ranges back to back (one part or
    several of one submission), the joined blob as a copied part's; no arena, a range past its
    end, a torn list: RefError naming it; too big for the buffer: the part's bytes."""
    cmds = [(P.OP_DRAW, 3, 1, k, 0) for k in range(30)]
    blob = B.convert(cmds)
    arena = bytearray(8192)
    arena[100 : 100 + 160] = blob[B.HEADER : B.HEADER + 160]
    arena[5000 : 5000 + len(blob) - B.HEADER - 160] = blob[B.HEADER + 160 :]
    head = BLOB_PART.pack(3, 0, BLOB_LAST) + B.blob_header(30, len(blob) - B.HEADER)
    rec = memoryview(head + REF_RANGE.pack(100, 160) + REF_RANGE.pack(5000, len(blob) - B.HEADER - 160))
    a = Assembly(4096)
    a.start_drain()
    p = a.take_ref(rec, memoryview(arena))
    assert isinstance(p, Part) and bytes(a.blob([p], 30)) == blob
    assert a.take_ref(rec, None) == RefError(3, "reference part 0: no command arena was sent with the ring")
    far = memoryview(head + REF_RANGE.pack(8000, 200))
    assert (
        "range 0 (offset 8000, 200 bytes) lies outside the 8192-byte command arena" in a.take_ref(far, memoryview(arena)).message
    )
    assert isinstance(a.take_ref(rec[:-3], memoryview(arena)), RefError)
    small = Assembly(64)
    small.start_drain()
    assert small.take_ref(rec, memoryview(arena)) == head + blob[B.HEADER :]


RECORDER_SCRIPT = textwrap.dedent(
    """
    import mmap, ctypes
    from cpu_host.horizon.hle.nvn.native import NativeRecorder
    from gpu_host import packets as P

    r = NativeRecorder()
    cmds = [(P.OP_DRAW, 3, 1, k, 0) for k in range(4000)]  # 96 KB: grows from 4 KiB in place

    def record(cb):
        c = r.begin(cb, 0x1000 + cb)
        c += cmds
        b = r.end(cb)
        return b, b"".join(bytes(x) for x, _ in b.chunks)

    plain, want = record(1)
    assert plain.arena is None
    size = (256 + 4) << 10  # the stage queue's page, then room for one recording's growth
    mm = mmap.mmap(-1, size)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    assert r.use_arena(base, size) and r.use_arena(base, size) and not r.use_arena(base + 4096, 4096)
    one, got = record(2)
    assert one.arena is not None and one.arena[0] == base and got == want
    at = one.arena[1]
    assert mm[at : at + len(want)] == want and at % 64 == 0
    two, got2 = record(3)  # the first still held: another buffer; full arena: malloc, same bytes
    assert got2 == want and (two.arena is None or two.arena[1] != at)
    del one, two  # freed: back to the arena's free lists
    three, got3 = record(4)
    assert three.arena is not None and got3 == want
    print("arena ok", at, three.arena[1])
    """
)


def test_recorder_records_into_the_arena(tmp_path):
    """A process of its own (the recorder's arena is set once a process)."""
    r = subprocess.run([sys.executable, "-c", RECORDER_SCRIPT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "arena ok" in r.stdout, r.stdout + r.stderr


def publish_stage(mm, entries: list[tuple[int, int, int]]) -> None:
    """Append stage queue entries (serial, offset, length) as recorder.c does: the entries, then
    the count (PROTOCOL.md "Staged chunks")."""
    (n,) = struct.unpack_from("<Q", mm, 0)
    for i, e in enumerate(entries):
        STAGE_ENTRY.pack_into(mm, STAGE_ENTRIES_AT + ((n + i) % STAGE_SLOTS) * STAGE_ENTRY.size, *e)
    struct.pack_into("<Q", mm, 0, n + len(entries))


def chunked_block(gpu, at: int, chunks: list[list[tuple]], stages: tuple[int, ...]) -> Block:
    """``chunks`` of packets written back to back into the arena at ``at`` as one Block whose
    chunks carry ``stages`` (what the native recorder hands over)."""
    c = gpu.client
    out, pos = [], at
    for cmds in chunks:
        body = B.convert(cmds)[B.HEADER :]
        c.arena_mm[pos : pos + len(body)] = body
        out.append((memoryview(c.arena_mm)[pos : pos + len(body)], len(cmds)))
        pos += len(body)
    return Block(tuple(out), None, (c.arena, at), stages)


def test_staged_chunks_are_used_in_place(env):  # noqa: F811
    """Two chunks staged while "recording" (entries in the arena's stage queue, the doorbell rung),
    the third not: the submission's staged ranges use the GPU process's early copies in place
    (GetStatus.staged_chunks), the frame equals the copied one; serials it never staged, or staged
    at another place, are read from the arena (the same frame)."""
    gpu = env[0]
    c = gpu.client
    serial = 1000
    for attempt in range(5):  # the consumer may read the queue just before the entries land
        n = next(gpu.frames)
        cmds = scene(env, n)
        parts = [cmds[:4], cmds[4:9], cmds[9:]]
        at = 5 << 20
        block = chunked_block(gpu, at, parts, (serial + 1, serial + 2, 0))
        sizes = [len(x) for x, _ in block.chunks]
        publish_stage(c.arena_mm, [(serial + 1, at, sizes[0]), (serial + 2, at + sizes[0], sizes[1])])
        os.eventfd_write(c.bell, 1)
        # (the consumer's read of the queue is not observable from here: a longer pause each
        # attempt, so that a GPU process slowed by a loaded machine gets there too)
        time.sleep(0.1 * 2**attempt)
        used = c.status().staged_chunks
        recs = part_records(c.seq + 1, [block], arena=c.arena)
        assert [r.tag for r in recs] == [TAG_BLOB_REF]
        assert BLOB_PART.unpack_from(recs[0].pieces[0])[2] == BLOB_LAST | BLOB_STAGED
        assert recs[0].pieces[1:] == (
            STAGED_RANGE.pack(at, sizes[0], serial + 1),
            STAGED_RANGE.pack(at + sizes[0], sizes[1], serial + 2),
            STAGED_RANGE.pack(at + sizes[0] + sizes[1], sizes[2], 0),
        )
        c.wait(c.submit([block]), timeout=30)
        assert np.array_equal(frame_image(c, n), expected())
        serial += 10
        if c.status().staged_chunks == used + 2:
            break
    else:
        raise AssertionError(f"no staged chunk used in place in {attempt + 1} frames")
    # serials never staged, and a serial staged for another place: read from the arena
    publish_stage(c.arena_mm, [(serial + 1, at + 64, sizes[0])])
    os.eventfd_write(c.bell, 1)
    n = next(gpu.frames)
    block = chunked_block(gpu, at, [scene(env, n)[:4], scene(env, n)[4:9], scene(env, n)[9:]], (serial + 1, 77, 0))
    c.wait(c.submit([block]), timeout=30)
    assert np.array_equal(frame_image(c, n), expected())


def test_staged_chunks_after_a_new_session(env):  # noqa: F811
    """Staged copies live in one session of the GPU process: after a re-attach (what a restarted
    GPU process sees) a submission naming serials staged before is read from the arena, and the
    frame is the same; entries published before the attach are not read."""
    gpu = env[0]
    c = gpu.client
    n = next(gpu.frames)
    cmds = scene(env, n)
    at = 6 << 20
    block = chunked_block(gpu, at, [cmds[:4], cmds[4:9], cmds[9:]], (5001, 5002, 5003))
    sizes = [len(x) for x, _ in block.chunks]
    publish_stage(c.arena_mm, [(5001 + k, at + sum(sizes[:k]), sizes[k]) for k in range(3)])
    os.eventfd_write(c.bell, 1)
    time.sleep(0.1)
    session = c.session
    c.connect()
    assert c.session != session and c.status().staged_chunks == 0
    c.wait(c.submit([block]), timeout=30)
    assert np.array_equal(frame_image(c, n), expected())
    assert c.status().staged_chunks == 0 and c.status().stage_rejected == 0


def test_hostile_stage_entries_are_named_and_ignored(env):  # noqa: F811
    """Stage queue entries that cannot be chunks (outside the arena, in the queue's page, no
    length, serial 0, a count that goes back) are counted and named in the log, nothing of them
    used; staged ranges outside the arena or torn drop their submission by name; the process
    keeps serving."""
    gpu = env[0]
    c = gpu.client
    before = c.status().stage_rejected
    bad = [(5, (32 << 20) - 8, 244), (6, 64, 100), (7, 8192, 0), (0, 8192, 100), (8, 8192, 2 << 20)]
    publish_stage(c.arena_mm, bad)
    os.eventfd_write(c.bell, 1)
    deadline = time.monotonic() + 10
    while c.status().stage_rejected < before + len(bad) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert c.status().stage_rejected == before + len(bad)
    want = ("stage entry", "lies outside the 33554432-byte command arena's buffers")
    deadline = time.monotonic() + 10  # counted, then logged by the log's writer thread
    while not all(w in gpu.log() for w in want) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(w in gpu.log() for w in want), gpu.log()[-2000:]
    hdr = B.convert(scene(env, 1)[:-1])[: B.HEADER]
    for payload, message in [
        (hdr + STAGED_RANGE.pack((32 << 20) - 8, 244, 5), "range 0 (offset 33554424, 244 bytes) lies outside"),
        (hdr + STAGED_RANGE.pack(4096, 244, 5)[:20], "reference part 0: 52 bytes is not the headers and whole 24-byte ranges"),
    ]:
        dropped = c.dropped()
        c.seq += 1
        c.pending[c.seq] = []
        c.writer.write(BLOB_PART.pack(c.seq, 0, BLOB_LAST | BLOB_STAGED) + payload, tag=TAG_BLOB_REF)
        c.writer.publish()
        c.wait(c.seq, timeout=20)
        assert c.dropped() == dropped + 1
        deadline = time.monotonic() + 5
        while message not in gpu.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert message in gpu.log(), (message, gpu.log()[-2000:])
    n = next(gpu.frames)
    c.wait(c.submit([put_in_arena(gpu, 4096, scene(env, n))]), timeout=30)
    assert np.array_equal(frame_image(c, n), expected())


def test_assembly_stages_in_place_and_falls_back():
    """Assembly.stage / take_ref: one recording's chunks staged back to back and its last chunk
    copied behind them make the blob with no copy of the staged ones; a staged copy in the way
    of another part's layout is left alone (that part is copied whole); a full buffer evicts."""
    cmds = [(P.OP_DRAW, 3, 1, k, 0) for k in range(30)]
    blob = B.convert(cmds)
    body = blob[B.HEADER :]
    arena = bytearray(STAGE_PAGE + 8192)
    at = STAGE_PAGE + 128
    arena[at : at + len(body)] = body
    cut = [0, 240, 480, len(body)]  # three chunks of whole 24-byte packets
    a = Assembly(4096)
    a.start_drain()
    for i in range(2):
        assert a.stage(10 + i, at + cut[i], cut[i + 1] - cut[i], memoryview(arena))
    ranges = [STAGED_RANGE.pack(at + cut[i], cut[i + 1] - cut[i], (10, 11, 0)[i]) for i in range(3)]
    rec = memoryview(BLOB_PART.pack(3, 0, BLOB_LAST | BLOB_STAGED) + B.blob_header(30, len(body)) + b"".join(ranges))
    p = a.take_ref(rec, memoryview(arena))
    assert isinstance(p, Part) and a.staged_used == 2 and not a.staged
    assert bytes(a.blob([p], 30)) == blob
    # staged out of order: the second chunk first, then the first elsewhere: copied whole
    a.start_drain()
    assert a.stage(21, at + cut[1], cut[2] - cut[1], memoryview(arena))
    assert a.stage(20, at + cut[0], cut[1] - cut[0], memoryview(arena))
    rec2 = bytes(rec).replace(struct.pack("<Q", 10), struct.pack("<Q", 20)).replace(struct.pack("<Q", 11), struct.pack("<Q", 21))
    p2 = a.take_ref(memoryview(rec2), memoryview(arena))
    assert isinstance(p2, Part) and a.staged_used == 2 and bytes(a.blob([p2], 30)) == blob
    # full: evicted, the submission copies from the arena
    small = Assembly(600)
    small.start_drain()
    assert small.stage(30, at, 240, memoryview(arena)) and small.stage(31, at + 240, 240, memoryview(arena))
    assert small.stage(32, at + 480, 240, memoryview(arena)) and set(small.staged) == {32}


def test_staged_chunks_are_format_checked_as_staged():
    """With a format check (the native decoder's, nxpkt.format_body), each staged copy is
    checked as it is staged; a part laid out from checked copies (and from arena ranges checked
    as they are copied) says so, and its replay leaves that pass out.  A chunk that fails (its
    first packet's reserved byte set) makes its part unchecked: the submission's own check then
    names the error.  The client changing the arena after staging changes nothing: the copy was
    checked."""
    from gpu_host import nxpkt

    cmds = [(P.OP_DRAW, 3, 1, k, 0) for k in range(30)]
    body = B.convert(cmds)[B.HEADER :]
    cut = [0, 240, 480, len(body)]
    for bad in (None, 1):
        arena = bytearray(STAGE_PAGE + 8192)
        at = STAGE_PAGE + 128
        arena[at : at + len(body)] = body
        if bad is not None:
            arena[at + cut[bad] + 1] = 7  # the reserved byte of chunk 1's first packet
        a = Assembly(4096, check=nxpkt.format_body)
        a.start_drain()
        for i in range(2):
            assert a.stage(10 + i, at + cut[i], cut[i + 1] - cut[i], memoryview(arena))
        arena[at : at + 4] = b"\xff\xff\xff\xff"  # changed after staging: the staged copy is used
        ranges = [STAGED_RANGE.pack(at + cut[i], cut[i + 1] - cut[i], (10, 11, 0)[i]) for i in range(3)]
        rec = memoryview(BLOB_PART.pack(3, 0, BLOB_LAST | BLOB_STAGED) + B.blob_header(30, len(body)) + b"".join(ranges))
        p = a.take_ref(rec, memoryview(arena))
        assert isinstance(p, Part) and a.staged_used == 2
        assert p.checked is (bad is None)
        blob = bytes(a.blob([p], 30))
        if bad is None:
            assert blob == B.convert(cmds)
            assert nxpkt.check(blob, None).packets == 30
        else:
            with pytest.raises(nxpkt.NativePacketError, match="reserved"):
                nxpkt.check(blob)
    # the tail range copied from the arena is checked as it is copied: a bad one unchecks the part
    arena = bytearray(STAGE_PAGE + 8192)
    at = STAGE_PAGE + 128
    arena[at : at + len(body)] = body
    arena[at + cut[2] + 1] = 7
    a = Assembly(4096, check=nxpkt.format_body)
    a.start_drain()
    for i in range(2):
        assert a.stage(10 + i, at + cut[i], cut[i + 1] - cut[i], memoryview(arena))
    ranges = [STAGED_RANGE.pack(at + cut[i], cut[i + 1] - cut[i], (10, 11, 0)[i]) for i in range(3)]
    rec = memoryview(BLOB_PART.pack(3, 0, BLOB_LAST | BLOB_STAGED) + B.blob_header(30, len(body)) + b"".join(ranges))
    p = a.take_ref(rec, memoryview(arena))
    assert isinstance(p, Part) and not p.checked
    # no check given: nothing is said to be checked
    plain = Assembly(4096)
    plain.start_drain()
    assert plain.stage(10, at, 240, memoryview(arena))
    one = memoryview(BLOB_PART.pack(4, 0, BLOB_LAST | BLOB_STAGED) + B.blob_header(10, 240) + STAGED_RANGE.pack(at, 240, 10))
    q = plain.take_ref(one, memoryview(arena))
    assert isinstance(q, Part) and not q.checked


def test_fuzz_stage_queue_and_staged_references():
    """Random stage queue entries and reference parts (good, staged, torn, outside the arena,
    bogus serials), several submissions a drain: nothing raises; every bad one comes back named;
    every part taken holds exactly the arena bytes its ranges name, still intact at the end of
    its drain (no staged copy or later part overwrote it)."""
    rnd = random.Random(32)
    size = STAGE_PAGE + (64 << 10)
    arena = bytearray(rnd.randbytes(size))
    view = memoryview(arena)
    q = StageQueue(view)
    a = Assembly(48 << 10)
    serial, parts_taken, errors = 0, 0, 0
    for drain in range(300):
        a.start_drain()
        entries = []
        for _ in range(rnd.randrange(0, 6)):
            serial += 1
            kind = rnd.random()
            off, n = rnd.randrange(STAGE_PAGE, size - 4096), rnd.randrange(1, 4096)
            if kind < 0.1:
                off = rnd.choice([0, 100, size - 10, size + 5, 1 << 63])
            elif kind < 0.15:
                n = rnd.choice([0, 1 << 40])
            entries.append((serial if kind > 0.05 else 0, off, n))
        publish_stage(arena, entries)
        staged = {}
        for e in q.take():
            if isinstance(e, StageError):
                errors += 1
                assert e.message.startswith("stage entry")
            else:
                assert isinstance(e, Staged)
                a.stage(e.serial, e.offset, e.length, view)
                staged[e.serial] = (e.offset, e.length)
        taken = []
        for _ in range(rnd.randrange(1, 4)):
            ranges = []
            pick = list(staged.items())
            for _ in range(rnd.randrange(1, 5)):
                if pick and rnd.random() < 0.6:
                    s, (o, n) = pick.pop(rnd.randrange(len(pick)))
                    ranges.append((o, n, s))
                else:
                    o = rnd.randrange(STAGE_PAGE, size - 2048)
                    ranges.append((o, rnd.randrange(0, 2048), rnd.choice([0, 0, serial + 99])))
            if rnd.random() < 0.1:
                ranges.append((size - 3, 10, 0))
            rec = BLOB_PART.pack(drain, 0, BLOB_LAST | BLOB_STAGED) + B.blob_header(1, 0)
            rec += b"".join(STAGED_RANGE.pack(*r) for r in ranges)
            if rnd.random() < 0.05:
                rec = rec[: -rnd.randrange(1, 24)]
            got = a.take_ref(memoryview(rec), view)
            if isinstance(got, RefError):
                errors += 1
                assert got.message.startswith("reference part 0: ")
                continue
            want = b"".join(bytes(arena[o : o + n]) for o, n, _ in ranges)
            if isinstance(got, Part):
                assert bytes(a.body(got)) == want
                taken.append((got, want))
                parts_taken += 1
            else:
                assert got[len(rec) - len(ranges) * STAGED_RANGE.size :] == want or got.endswith(want)
        for p, _ in taken:  # each blob's header written in front of its bodies, as at its replay
            assert a.blob([p], 1) is not None
        for p, want in taken:  # still intact at the end of the drain
            assert bytes(a.body(p)) == want
    assert parts_taken > 200 and errors > 20 and a.staged_used > 50


RECORDER_STAGE_SCRIPT = textwrap.dedent(
    """
    import mmap, ctypes, os, struct
    from cpu_host.horizon.hle.nvn.native import NativeRecorder
    from gpu_host import packets as P
    from gpu_host.ring_layout import STAGE_ENTRIES_AT, STAGE_ENTRY, STAGE_SLOTS

    r = NativeRecorder()
    size = 8 << 20
    mm = mmap.mmap(-1, size)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    bell = os.eventfd(0, os.EFD_NONBLOCK)
    assert r.use_arena(base, size, bell)
    cmds = [(P.OP_DRAW, 3, 1, k, 0) for k in range(15000)]  # 360 KB: three chunks of 128 KiB

    def record(cb):
        c = r.begin(cb, 0x1000 + cb)
        c += cmds
        return r.end(cb)

    def entries():
        (n,) = struct.unpack_from("<Q", mm, 0)
        return {e[0]: e[1:] for e in (STAGE_ENTRY.unpack_from(mm, STAGE_ENTRIES_AT + (i % STAGE_SLOTS) * 24) for i in range(n))}

    def check(b):
        q, at = entries(), b.arena[1]
        stages = b.stages or (0,) * len(b.chunks)
        assert len(stages) == 3 and stages[-1], stages  # the last chunk (94 KiB) staged as the recording ended
        for (chunk, _), stage in zip(b.chunks, stages):
            if stage:
                off, n = q[stage]
                assert (off, n) == (at, len(chunk)) and mm[off : off + n] == bytes(chunk)
            at += len(chunk)
        return stages

    # Growing buffers move: a stage made before a move is taken back (its entry names the old place).
    grown = check(record(1))
    b = record(2)
    check(b)
    del b  # freed: kept as a spare of its full size
    again = check(record(3))  # no growth, no move: every chunk staged
    assert all(again), (grown, again)
    assert os.eventfd_read(bell) >= 4
    c = r.begin(9, 0x1009)
    c += cmds[:500]  # 12 KB: under recorder.c's NXR_STAGE_MIN, not worth a wake-up
    assert r.end(9).stages is None
    print("stage ok")
    """
)


def test_recorder_stages_filled_chunks():
    """recorder.c stages each chunk as it fills (an entry naming where it lies, the doorbell rung)
    and the last as the recording ends, and takes the stages of a buffer that moved back (a
    process of its own)."""
    r = subprocess.run([sys.executable, "-c", RECORDER_STAGE_SCRIPT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "stage ok" in r.stdout, r.stdout + r.stderr


if __name__ == "__main__":
    pytest.main([__file__])


def test_fused_copy_check_equals_copy_then_check():
    """Assembly's ``copy_check`` (nxpkt.copy_format_body: the copy of a staged chunk or an arena
    range and its format pass in one C call) against the slice copy then ``check``
    (nxpkt.format_body): on the same random stage entries and staged reference parts over an
    arena of good draw packets with random bytes broken, both give the same result for every
    call (kept or not, Part fields, RefError messages, ``checked``), the same buffer bytes for
    each part and the same staged/formed state; the check runs on the copy, not the arena (the
    arena changed after staging changes nothing); a range that does not fit raises, copying
    nothing."""
    from gpu_host import nxpkt

    rnd = random.Random(26)
    body = B.convert([(P.OP_DRAW, 3, 1, k, 0) for k in range(3000)])[B.HEADER :]  # 20-byte packets
    arena = bytearray(STAGE_PAGE) + bytearray(body)
    view = memoryview(arena)
    old = Assembly(32 << 10, check=nxpkt.format_body)
    new = Assembly(32 << 10, check=nxpkt.format_body, copy_check=nxpkt.copy_format_body)
    serial, checked = 0, [0, 0]
    for drain in range(200):
        for k in range(rnd.randrange(3)):  # break a byte (reserved, op or field) or mend one
            at = STAGE_PAGE + rnd.randrange(len(body))
            arena[at] = rnd.choice((arena[at], 7, 0, body[at - STAGE_PAGE]))
        old.start_drain()
        new.start_drain()
        ranges = []
        for _ in range(rnd.randrange(1, 4)):
            off = STAGE_PAGE + 20 * rnd.randrange(len(body) // 20 - 60)
            size = 20 * rnd.randrange(1, 60) + rnd.choice((0, 0, 0, 4))  # now and then a torn packet
            serial += 1
            if rnd.random() < 0.8:
                assert old.stage(serial, off, size, view) == new.stage(serial, off, size, view)
            ranges.append((off, size, serial if rnd.random() < 0.9 else 0))
        arena[STAGE_PAGE + 1] ^= 0xFF  # the client changes the arena after staging
        if rnd.random() < 0.1:
            ranges.append((len(arena) - 10, 20, 0))  # outside the arena
        rec = memoryview(
            BLOB_PART.pack(drain, 0, BLOB_LAST | BLOB_STAGED)
            + B.blob_header(1, sum(n for _, n, _ in ranges))
            + b"".join(STAGED_RANGE.pack(*r) for r in ranges)
        )
        a, b = old.take_ref(rec, view), new.take_ref(rec, view)
        assert a == b
        if isinstance(a, Part):
            assert bytes(old.body(a)) == bytes(new.body(b))
            checked[a.checked] += 1
        assert old.staged == new.staged and old.formed == new.formed and old.staged_used == new.staged_used
    assert checked[0] > 10 and checked[1] > 10  # both outcomes were compared
    dst = bytearray(64)
    with pytest.raises(ValueError, match="does not fit"):
        nxpkt.copy_format_body(dst, 60, view, STAGE_PAGE, 20)
    assert dst == bytearray(64)
    assert nxpkt.copy_format_body(dst, 4, body, 0, 40) == 2 and dst[4:44] == body[:40]


def test_stage_queue_polled_while_the_consumer_spins():
    """The consumer's poll after staging (ring_consumer.STAGED_SPIN_S): ``StageQueue.pending``
    says whether entries came since the last ``take`` (a count that went back too), and
    ``RingReader.wait`` returns from its spin as soon as ``more`` says so, before its spin ends and
    without the doorbell (no record in the ring)."""
    from gpu_host.ring_layout import init_ring, open_ring
    from gpu_host.ring_reader import RingReader

    arena = bytearray(STAGE_PAGE + 8192)
    q = StageQueue(memoryview(arena))
    assert not q.pending()
    publish_stage(arena, [(1, STAGE_PAGE, 64)])
    assert q.pending()
    assert q.take() == [Staged(1, STAGE_PAGE, 64)] and not q.pending()
    struct.pack_into("<Q", arena, 0, 0)  # a hostile count that went back: pending, then named
    assert q.pending() and isinstance(q.take()[0], StageError) and not q.pending()
    fd, bell = os.memfd_create("t-ring"), os.eventfd(0, os.EFD_NONBLOCK)
    try:
        init_ring(fd, 1 << 16)
        rd = RingReader(open_ring(fd), bell)
        polls = []

        def more() -> bool:
            polls.append(time.perf_counter())
            return len(polls) == 3

        t = time.perf_counter()
        rd.wait(5.0, t + 5.0, more)  # returns at the third poll, not after 5 s
        assert len(polls) == 3 and time.perf_counter() - t < 2.5
        t = time.perf_counter()
        rd.wait(0.2, t + 0.01, lambda: False)  # nothing came: the spin ends, then the doorbell's timeout
        assert time.perf_counter() - t >= 0.2
        rd.view.release()
    finally:
        os.close(fd)
        os.close(bell)
