"""Frame time with 1,000 and 10,000 draws per frame: split (CPU-host client -> shared-memory
ring -> GPU process) against the same replay in one process (Engine.submit on the same packets).
Prints medians and the ratio split / in-process.  Target: split costs < 5 %.

Two views of a frame: latency (one frame submitted, waited for, then the next: the whole
transport is on the frame's path) and the frame interval of a running game (frames submitted
with two in flight, as the demo and games do — the client encodes frame N+1 while the GPU
process replays frame N; the in-process replay cannot overlap anything, its interval is its
replay time).

    .venv/bin/python bench/gpu_split.py [--frames 9]
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))

from cpu_host.gpu_client.client import GpuClient  # noqa: E402
from cpu_host.gpu_client.memory import Pool  # noqa: E402
from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from cpu_host.gpu_client.shaders import GlslSource  # noqa: E402
from gpu_guest import COLOR_FS, COLOR_VS, P, rect_px, start_gpu, stop_gpu, ubo  # noqa: E402
from cpu_host.gpu_client.ring_writer import RingWriter  # noqa: E402
from gpu_host.engine import Engine  # noqa: E402
from gpu_host.ring_layout import TAG_ARRAY, init_ring, open_ring  # noqa: E402
from gpu_host.ring_reader import RingReader  # noqa: E402
from gpu_host.server import GpuServer, gc_paused  # noqa: E402
from gpu_host.objects import MappedPools  # noqa: E402
from gpu_host.vkdevice import Device  # noqa: E402

W = H = 128


def frame_commands(draws: int, frame: int) -> list[tuple]:
    # Many small draws with a uniform range change every 10 draws, as a game's sprite batch would.
    cmds = [(P.OP_TARGET, 7), (P.OP_CLEAR, 0, 0, 0, 1), (P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
            (P.OP_VERTEX, 1, 0, 48)]
    for i in range(draws):
        if i % 10 == 0:
            cmds.append((P.OP_UNIFORM, 0, 1, 4096 + 256 * ((i // 10) % 64), 48))
        cmds.append((P.OP_DRAW, 6, 1, 0, 0))
    return cmds + [(P.OP_PRESENT, frame, 7)]


def fill(pool) -> None:
    pool.write(0, rect_px(0, 0, 4, 4, W, H).tobytes())
    for k in range(64):
        pool.write(4096 + 256 * k, ubo((k / 64, 0.5, 0.2, 1), (2 * (k % 8) * 8 / W, 2 * (k // 8) * 8 / H)))


class Split:
    """Client -> ring -> GPU process."""

    def __init__(self) -> None:
        self.proc, d = start_gpu()
        self.c = GpuClient(d, ring_capacity=32 << 20)
        self.c.connect(timeout=30)
        pool = self.c.create_pool(1, 1 << 20)
        fill(pool)
        self.c.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
        self.c.register(TextureDesc(7, 0, 0, W, H, "RGBA8", render_target=True))
        self.replay_ms: list[float] = []
        self.encode_s: list[float] = []     # encoding at the end of recording (the game's CPU time)
        self.submit_s: list[float] = []     # the client's submit call: copy into the ring, doorbell

    def frame(self, cmds: list[tuple], n: int) -> tuple[float, str]:
        # The game's recording ends: its command buffer is encoded then (its own CPU time, before
        # the submit), timed apart from the frame.
        t = time.perf_counter()
        enc = self.c.encode(cmds)
        self.encode_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        seq = self.c.submit(enc)
        self.submit_s.append(time.perf_counter() - t)
        self.c.wait(seq, timeout=300)
        dt = time.perf_counter() - t
        self.replay_ms.append(self.c.status().last_replay_ms)
        return dt, self.c.frame(n).sha256

    def interval(self, frames: list[tuple[int, list[tuple]]], in_flight: int = 2) -> float:
        """Seconds per frame with ``in_flight`` frames submitted ahead (commands built before; each
        frame's encoding, at its recording's end, is inside the interval)."""
        t = time.perf_counter()
        seqs: list[int] = []
        for _, cmds in frames:
            enc = self.c.encode(cmds)
            if len(seqs) >= in_flight:
                self.c.wait(seqs.pop(0), timeout=300)
            seqs.append(self.c.submit(enc))
        for s in seqs:
            self.c.wait(s, timeout=300)
        return (time.perf_counter() - t) / len(frames)

    def close(self) -> None:
        self.c.close()
        stop_gpu(self.proc)


class Local:
    """The same commands replayed by an Engine in this process: checks, validation, snapshot,
    Vulkan — everything but the transport (no encoding, ring or second process)."""

    def __init__(self) -> None:
        self.pool = Pool(1, 1 << 20)
        fill(self.pool)
        mp = MappedPools()
        mp.add(1, self.pool.fd, self.pool.size)
        self.dev = Device()
        self.eng = Engine(self.dev, mp, keep_frames=2)
        v, f = GlslSource(COLOR_VS, COLOR_FS).spirv()
        self.eng.register_program(id=1, vertex=v, fragment=f)
        self.eng.register_texture(id=7, pool=0, offset=0, width=W, height=H, format="RGBA8", block_linear=False,
                                  block_height_log2=0, pitch=0, render_target=True)

    def frame(self, cmds: list[tuple], n: int) -> tuple[float, str]:
        packets = list(cmds)                       # the recorded tuples as they are
        t = time.perf_counter()
        with gc_paused():                          # as the GPU process replays (gpu_host.server)
            self.eng.submit(n, packets)            # no serialisation: one process needs none
        dt = time.perf_counter() - t
        return dt, self.eng.frames[-1].sha256

    def close(self) -> None:
        self.eng.close()
        self.dev.close()


class Receiver:
    """The GPU process's receiving code (``GpuServer._record``/``_packet``, the real functions)
    with the replay left out: it only counts the packets each submission would replay."""
    _record = GpuServer._record
    _packet = GpuServer._packet

    def __init__(self) -> None:
        self.engine = self
        self.replayed: list[int] = []

    def submit(self, seq: int, packets: list) -> None:
        self.replayed.append(len(packets))

    def reject(self, seq: int, why: str) -> None:
        raise AssertionError(why)

    def _done(self, s, seq: int, res) -> None:
        pass


def transport_cpu(draws: int, reps: int = 15) -> dict[str, float]:
    """Median thread CPU time (ms) per frame of each transport step, run in this one process
    through a ring of its own with nothing waiting: unlike wall-clock figures, other processes'
    load does not enter.  ``old_*``: the path before commands were encoded at record time into
    array records (encode in the submit, records of packets back to back, a Python loop for the
    markers), rebuilt from the functions that still read and write that record format."""
    fd, bell = os.memfd_create("bench-ring"), os.eventfd(0, os.EFD_NONBLOCK)
    w = RingWriter(init_ring(fd, 32 << 20), bell)
    rd = RingReader(open_ring(fd), bell)
    recv, sess = Receiver(), types.SimpleNamespace(packets=0)
    cmds = frame_commands(draws, 1)
    out: dict[str, list[float]] = {k: [] for k in ("encode", "submit", "receive", "old_submit", "old_receive")}
    clock = time.thread_time
    for seq in range(1, reps + 1):
        t0 = clock()
        enc = P.encode_commands(cmds)
        t1 = clock()
        for rec in P.submission_records(seq, [enc]):
            w.write(rec, tag=TAG_ARRAY)
        w.publish()
        t2 = clock()
        cur = None
        with gc_paused():
            for tag, rec in rd.records():
                cur = recv._record(sess, tag, rec, cur)
        t3 = clock()
        assert recv.replayed[-1] == len(cmds) and cur is None
        for rec in P.encode_records([(P.OP_BEGIN, seq), *cmds, (P.OP_END, seq)]):
            w.write(rec)
        w.publish()
        t4 = clock()
        n = 0
        for rec in rd.drain():
            objs, err = P.unpack_record(rec)
            marks = [i for i, o in enumerate(objs) if type(o) is list and o and type(o[0]) is int
                     and (o[0] == P.OP_BEGIN or o[0] == P.OP_END)]
            n += len(objs) - len(marks)
        t5 = clock()
        assert n == len(cmds)
        for k, v in zip(out, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            out[k].append(v * 1000)
    w.view.release()
    rd.view.release()
    os.close(fd)
    os.close(bell)
    return {k: statistics.median(v) for k, v in out.items()}


def local_worker() -> None:
    """The in-process side, in a clean process of its own (no client, no gRPC threads): reads
    ``DRAWS FRAME`` lines, answers ``seconds sha256`` lines."""
    side = Local()
    gc.freeze()       # as the GPU process does after its start-up (gpu_host.server.main)
    try:
        for line in sys.stdin:
            draws, n = map(int, line.split())
            dt, sha = side.frame(frame_commands(draws, n), n)
            print(dt, sha, flush=True)
    finally:
        side.close()


class LocalProc:
    def __init__(self) -> None:
        import subprocess
        self.p = subprocess.Popen([sys.executable, __file__, "--local-worker"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def frame(self, draws: int, n: int) -> tuple[float, str]:
        self.p.stdin.write(f"{draws} {n}\n")
        self.p.stdin.flush()
        dt, sha = self.p.stdout.readline().split()
        return float(dt), sha

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=9)
    ap.add_argument("--local-worker", action="store_true")
    a = ap.parse_args()
    if a.local_worker:
        return local_worker()
    split, local = Split(), LocalProc()
    n = 0
    try:
        for draws in (1000, 10000):
            st, lt, reps = [], [], []
            for rep in range(a.frames + 1):
                n += 1
                # Interleaved, alternating who goes first: the machine's background load hits both.
                if rep % 2:
                    ldt, lsha = local.frame(draws, n)
                    sdt, ssha = split.frame(frame_commands(draws, n), n)
                else:
                    sdt, ssha = split.frame(frame_commands(draws, n), n)
                    ldt, lsha = local.frame(draws, n)
                assert ssha == lsha, "split and in-process frames differ"
                if rep:                              # the first frame compiles pipelines
                    st.append(sdt)
                    lt.append(ldt)
                    reps.append(split.replay_ms[-1] / 1000)
            lm, sm, rep = statistics.median(lt), statistics.median(st), statistics.median(reps)
            print(f"{draws:6d} draws/frame: in-process {lm * 1000:7.1f} ms  split {sm * 1000:7.1f} ms  "
                  f"split/in-process {sm / lm:.3f}  (medians of {len(st)} interleaved frames; frames identical)")
            enc, sub = statistics.median(split.encode_s[-len(st):]), statistics.median(split.submit_s[-len(st):])
            print(f"{'':20}GPU process's own replay {rep * 1000:7.1f} ms -> transport (ring copy, doorbell, "
                  f"wake-up, unpack) {(sm - rep) * 1000:5.1f} ms = {(sm - rep) / sm * 100:.1f}% of the split frame")
            print(f"{'':20}encode at record time {enc * 1000:5.1f} ms (the game's CPU time, before the submit; "
                  f"transport + encode {(sm - rep + enc) * 1000:5.1f} ms = {(sm - rep + enc) / (sm + enc) * 100:.1f}%)"
                  f"  client submit call {sub * 1000:5.2f} ms")
            batch = []
            for _ in range(a.frames):
                n += 1
                batch.append((n, frame_commands(draws, n)))
            si = split.interval(batch)
            print(f"{'':20}running game (2 frames in flight): split {si * 1000:7.1f} ms/frame  "
                  f"split/in-process {si / lm:.3f}")
            cpu = transport_cpu(draws)
            print(f"{'':20}transport CPU per frame (thread CPU time, same code, one process): encode "
                  f"{cpu['encode']:.2f} ms | submit {cpu['submit']:.2f} ms | GPU-process receive {cpu['receive']:.2f} ms"
                  f"  (previous path: submit {cpu['old_submit']:.2f} ms, receive {cpu['old_receive']:.2f} ms)")
    finally:
        split.close()
        local.close()


if __name__ == "__main__":
    main()
