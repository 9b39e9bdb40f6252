"""The client's submit in C (cpu_host/gpu_client/ringput.c, setting gpu_host.client_native_submit):
a native recording in the command arena goes into the ring as its reference part (ring tag 5,
PROTOCOL.md "Command arena", "Staged chunks") in one C call.

- Against the Python writer (blob.part_records + RingWriter, the path everything else takes) over
  random chunk tables, staged and not, many laps of a small ring: the consumer (gpu_host's
  RingReader, which checks every position and length) reads the same records from both rings.
- A full ring, and a read position the peer corrupted, write nothing (the caller takes the Python
  path, which waits and names the error).
- Through a real GPU process: the frame equals the expected one and the ring holds the bytes the
  Python path writes; a GPU process killed before it read the submission is restarted and the
  client's re-attach resubmits it (made again by the Python path): the same frame."""

from __future__ import annotations

import ctypes
import os
import random
import signal
import subprocess
import sys

import numpy as np

from cpu_host.gpu_client.blob import Block, part_records
from cpu_host.gpu_client.ring_writer import RingWriter
from cpu_host.gpu_client.ringput import RingPut
from gpu_guest import frame_image
from gpu_host import binpackets as B
from gpu_host.ring_layout import TAG_BLOB_REF, init_ring
from gpu_host.ring_reader import RingReader

from test_gpu_blob_ring import env, expected, scene  # noqa: F401 (env: the module fixture)


class Chunk(ctypes.Structure):  # recorder.c's Chunk
    _fields_ = [("offset", ctypes.c_uint64), ("count", ctypes.c_uint32), ("stage", ctypes.c_uint32)]


def native_block(arena: int, at: int, sizes: list[int], counts: list[int], stages: list[int], data=None) -> Block:
    """A Block as NativeRecorder.end makes it: chunks back to back from arena offset ``at``, with
    its chunk table in C memory (``native``)."""
    table = (Chunk * max(1, len(sizes)))()
    off = 0
    chunks = []
    for i, (n, k, s) in enumerate(zip(sizes, counts, stages)):
        table[i] = Chunk(off, k, s)
        chunks.append((data[at + off : at + off + n] if data is not None else memoryview(bytes(n)), k))
        off += n
    return Block(
        tuple(chunks), table, (arena, at), tuple(stages) if any(stages) else None, (ctypes.addressof(table), len(sizes), off)
    )


def _ring(cap: int):
    fd = os.memfd_create("t-ring", os.MFD_CLOEXEC)
    view = init_ring(fd, cap)
    bell = os.eventfd(0, os.EFD_NONBLOCK)
    return fd, view, bell


def test_c_submit_writes_what_the_python_writer_writes():
    rnd = random.Random(32)
    arena = 1 << 40  # an address: only compared, never read
    rings = [_ring(2048), _ring(2048)]
    (_, va, ba), (_, vb, bb) = rings
    wa, wb = RingWriter(va, ba), RingWriter(vb, bb)
    put = RingPut(vb, bb)
    ra, rb = RingReader(va, ba), RingReader(vb, bb)
    try:
        for seq in range(1, 400):
            nch = rnd.randrange(0, 7)
            sizes = [rnd.randrange(4, 4000) & ~3 for _ in range(nch)]
            counts = [rnd.randrange(1, 50) for _ in range(nch)]
            stages = [rnd.choice((0, 0, rnd.randrange(1, 1 << 32))) for _ in range(nch)] if rnd.random() < 0.7 else [0] * nch
            block = native_block(arena, rnd.randrange(0, 1 << 30) & ~7, sizes, counts, stages)
            for r in part_records(seq, [block], arena=arena):
                assert r.tag == TAG_BLOB_REF
                wa.write(r.pieces, tag=r.tag)
            wa.publish()
            assert put.put(wb, seq, *block.native, block.arena[1])
            assert os.eventfd_read(bb) == 1  # the doorbell was rung
            got_a, got_b = ra.records(), rb.records()
            assert [(t, bytes(p)) for t, p in got_a] == [(t, bytes(p)) for t, p in got_b], f"submission {seq}"
            assert len(got_b) == 1
        assert vb.write.value == wb.wpos > 2048 * 10  # many laps of the ring
    finally:
        put.release()
        for fd, v, bell in rings:
            v.release()
            os.close(fd)
            os.close(bell)


def test_c_submit_refuses_a_full_ring_and_a_corrupt_read_position():
    fd, view, bell = _ring(1024)
    w = RingWriter(view, bell)
    put = RingPut(view, bell)
    try:
        block = native_block(0, 0, [64] * 4, [1] * 4, [1, 0, 2, 0])
        n = 0
        while put.put(w, n + 1, *block.native, 0):
            n += 1
        assert 0 < n < 1024 // 32 and w.wpos == view.write.value  # full: nothing more written
        before = w.wpos
        view.read.value = before + 8  # the peer wrote a read position ahead of the write position
        assert not put.put(w, 99, *block.native, 0) and w.wpos == before == view.write.value
        view.read.value = before
        RingReader(view, bell).records()  # all consumed: room again
        assert put.put(w, 100, *block.native, 0)
        bad = Chunk * 2
        t = bad(Chunk(0, 1, 0), Chunk(100, 1, 0))  # chunk 1 starts past the recording's end
        assert not put.put(w, 101, ctypes.addressof(t), 2, 50, 0)
    finally:
        put.release()
        view.release()
        os.close(fd)
        os.close(bell)


def _arena_block(gpu, at: int, parts: list[list[tuple]], stages: list[int]) -> Block:
    c = gpu.client
    pos, sizes = at, []
    for cmds in parts:
        body = B.convert(cmds)[B.HEADER :]
        c.arena_mm[pos : pos + len(body)] = body
        sizes.append(len(body))
        pos += len(body)
    return native_block(c.arena, at, sizes, [len(p) for p in parts], stages, memoryview(c.arena_mm))


def test_c_submit_through_a_gpu_process_and_its_restart(env):  # noqa: F811
    gpu = env[0]
    c = gpu.client
    assert c._put is not None, "gpu_host.client_native_submit is on by default"
    n = next(gpu.frames)
    cmds = scene(env, n)
    block = _arena_block(gpu, 7 << 20, [cmds[:5], cmds[5:]], [0, 0])
    before = c.writer.wpos
    seq = c.submit([block])
    assert seq in c.pending and type(c.pending[seq]).__name__ == "_Deferred"  # the C path took it
    written = c.writer.wpos - before
    # the Python path's record: 8-byte record header + part header + blob header + one range
    assert written == 8 + sum(len(p) for p in part_records(seq, [block], arena=c.arena)[0].pieces)
    c.wait(seq, timeout=30)
    assert np.array_equal(frame_image(c, n), expected())

    # Kill the GPU process before it reads the next submission; a new one on the same sockets.
    n = next(gpu.frames)
    cmds = scene(env, n)
    block = _arena_block(gpu, 8 << 20, [cmds[:3], cmds[3:8], cmds[8:]], [0, 0, 0])
    os.kill(gpu.proc.pid, signal.SIGSTOP)
    seq = c.submit([block])
    os.kill(gpu.proc.pid, signal.SIGKILL)
    gpu.proc.wait()
    env_vars = {**os.environ, "NXRECOMP_GPU_HOST_WINDOW": "off", "NXRECOMP_GPU_HOST_FRAMES_DIR": str(gpu.frames_dir)}
    with open(os.path.join(gpu.dir, "gpu.log"), "a") as logf:
        gpu.proc = subprocess.Popen([sys.executable, "-m", "gpu_host.server", "--socket-dir", gpu.dir], env=env_vars, stderr=logf)
    reconnects = c.reconnects
    c.wait(seq, timeout=60)
    assert c.reconnects == reconnects + 1
    assert np.array_equal(frame_image(c, n), expected())
