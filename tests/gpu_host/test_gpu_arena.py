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

import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from cpu_host.gpu_client.blob import Block, part_records
from gpu_guest import P, frame_image
from gpu_host import binpackets as B
from gpu_host.blob_assembly import Assembly, Part, RefError
from gpu_host.ring_layout import BLOB_LAST, BLOB_PART, REF_RANGE, TAG_BLOB, TAG_BLOB_REF

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
    mm = mmap.mmap(-1, 256 << 10)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    assert r.use_arena(base, 256 << 10) and r.use_arena(base, 256 << 10) and not r.use_arena(base + 4096, 4096)
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


if __name__ == "__main__":
    pytest.main([__file__])
