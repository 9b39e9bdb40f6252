"""Frame time with 1,000, 10,000 and 50,000 draws per frame: split (CPU-host client -> shared-memory
ring -> GPU process) against the same replay in one process (Engine.submit on the same packets).
Prints medians and the ratio split / in-process.  Target: split costs < 5 %.

**Split overhead** (issue 32's "< 5 %") is defined as split / in-process - 1 of the same frames in
one run: the median end-to-end time of a split frame (client submit to the client woken by its
completion) against the median time of the same submission replayed by an Engine in a process of
its own (no ring, no second process), frames interleaved.  It is printed as "split overhead" beside
the **transport share**, (split - the GPU process's own replay) / split: the part of a split frame
spent outside ``Engine.submit_blob`` (ring write, doorbell, wake-up, copy, hand-over, completion).
The two differ: the in-process side checks every packet's format at the submission, while the
split's GPU process did that pass as the chunks were staged (while the client recorded), so the
split can be faster than in-process (negative overhead) while its transport share is > 0.  The
GPU process's replay is also given as thread CPU time (``Engine.last_replay_cpu_ms``: the replay
without the wait for the GPU), issue 32's "GPU-process CPU time".

The frames are issue 32's "realistic" ones: a pipeline change every 50 draws (two programs
alternating), a texture bind every 5 draws (four textures in turn), a uniform range update before
every draw (64 ranges in turn).  Besides wall-clock frame times it prints two CPU figures per
draw, each measured on its own as thread CPU time (other processes' load does not enter):
- the GPU process's replay (``Engine.submit``: checks, validation, snapshot, command recording,
  submit and wait) in the in-process worker, the same code the GPU process runs;
- the CPU side's recording: building the draw's packets (what the NVN front end appends per
  guest call) and encoding them at the end of the recording (``GpuClient.encode``).

Two views of a frame: latency (one frame submitted, waited for, then the next: the whole
transport is on the frame's path) and the frame interval of a running game (frames submitted
with two in flight, as the demo and games do — the client encodes frame N+1 while the GPU
process replays frame N; the in-process replay cannot overlap anything, its interval is its
replay time).

    .venv/bin/python bench/gpu_split.py [--frames 9] [--draws 1000,10000,50000] [--native off,on]

With native replay on, each frame is also sent as binary packets (ring tag 4, the transport a
native recorder of the NVN front end will use) and timed the same way.  ``--rerecord``: each way of
a native frame (copied / referenced with the C or the Python submit) submits a recording of its
own, as a game does, instead of one recording three times (a staged copy is used once, so the ways
after the first would find none); the copied way's staged chunks are never used and fill the GPU
process's assembly buffer, which this variant exercises too.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))

from cpu_host.gpu_client.client import GpuClient  # noqa: E402
from cpu_host.gpu_client.memory import Pool  # noqa: E402
from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from cpu_host.gpu_client.shaders import GlslSource  # noqa: E402
from cpu_host.gpu_client.registry import SamplerDesc  # noqa: E402
from gpu_guest import P, gpu_log, start_gpu, stop_gpu, ubo  # noqa: E402
from gpu_packets import SizedPools, from_desc, realistic_frame  # noqa: E402
from cpu_host.gpu_client.ring_writer import RingWriter  # noqa: E402
from gpu_host.engine import Engine  # noqa: E402
from gpu_host import binpackets  # noqa: E402
from gpu_host.ring_layout import BLOB_LAST, BLOB_PART, TAG_ARRAY, TAG_BLOB, init_ring, open_ring  # noqa: E402
from gpu_host.ring_reader import RingReader  # noqa: E402
from gpu_host.server import GpuServer, gc_paused  # noqa: E402
from gpu_host.objects import MappedPools  # noqa: E402
from gpu_host.vkdevice import Device  # noqa: E402

W = H = 128


DRAWS = (1000, 10000, 50000)
# The steps of one binary submission's round trip (Split.breakdown): the client's submit call
# (ring write + doorbell), the doorbell to the consumer running, the copy of the records out of
# the ring, the join of parts / hand-over to the replay, the replay (Engine.submit_blob), the
# completion published (header, fences, reply eventfd), the client running again; and the total.
STEPS = ("submit", "wake", "copy", "prepare", "replay", "complete", "client_wake", "total")
UBOS, TEXS, TEX_W = 64, 4, 8
UBO_AT, TEX_AT = 4096, 65536  # pool offsets of the uniform ranges and of the textures
TARGET, SAMPLER = 7, 1
PART = 16384  # packets per binary part record (< 1 MiB)
# Two programs (a pipeline each) that tint a textured quad by a uniform colour; the second swaps
# channels so a missed PROGRAM packet would show in the frame's hash.
BENCH_VS = """#version 450
layout(location=0) in vec2 pos;
layout(location=1) in vec2 uv;
layout(set=0, binding=0) uniform U { vec4 color; vec4 offset; vec4 step; } u;
layout(location=0) out vec4 c;
layout(location=1) out vec2 t;
void main() { gl_Position = vec4(pos + u.offset.xy, 0.0, 1.0); c = u.color; t = uv; }"""
BENCH_FS = [
    """#version 450
layout(location=0) in vec4 c;
layout(location=1) in vec2 t;
layout(set=0, binding=4) uniform sampler2D tex;
layout(location=0) out vec4 o;
void main() { o = c * texture(tex, t)%s; }"""
    % sw
    for sw in ("", ".bgra")
]


def quad() -> bytes:
    """One 4x4-pixel quad at the top-left corner (vec2 pos, vec2 uv; the uniform moves it)."""
    a, b = -1.0, -1.0 + 8 / W
    p = [[a, a, 0, 0], [b, a, 1, 0], [b, b, 1, 1], [a, a, 0, 0], [b, b, 1, 1], [a, b, 0, 1]]
    return np.array(p, np.float32).tobytes()


def frame_commands(draws: int, frame: int) -> list[tuple]:
    return realistic_frame(
        draws,
        frame,
        target=TARGET,
        programs=(1, 2),
        textures=tuple(10 + k for k in range(TEXS)),
        sampler=SAMPLER,
        ubo_at=UBO_AT,
        ubos=UBOS,
    )


def fill(pool) -> None:
    pool.write(0, quad())
    for k in range(UBOS):
        pool.write(
            UBO_AT + 256 * k, ubo(((k % 4 + 1) / 4, (k // 4 % 4 + 1) / 4, 0.5, 1), (2 * (k % 8) * 8 / W, 2 * (k // 8) * 8 / H))
        )
    for k in range(TEXS):
        rgba = np.zeros((TEX_W, TEX_W, 4), np.uint8)
        rgba[..., k % 3] = 255
        rgba[::2, ::2] = 128
        rgba[..., 3] = 255
        pool.write(TEX_AT + k * TEX_W * TEX_W * 4, rgba.tobytes())


def textures() -> list[TextureDesc]:
    return [TextureDesc(TARGET, 0, 0, W, H, "RGBA8", render_target=True)] + [
        TextureDesc(10 + k, 1, TEX_AT + k * TEX_W * TEX_W * 4, TEX_W, TEX_W, "RGBA8", block_linear=False, pitch=TEX_W * 4)
        for k in range(TEXS)
    ]


def recording_cpu(draws: int, reps: int = 5) -> tuple[float, float]:
    """Median thread CPU time (us per draw) of building a frame's packets and of encoding them at
    the end of the recording, each on its own."""
    build, enc = [], []
    for r in range(reps):
        t0 = time.thread_time()
        cmds = frame_commands(draws, r)
        t1 = time.thread_time()
        GpuClient.encode(cmds)
        t2 = time.thread_time()
        build.append((t1 - t0) / draws * 1e6)
        enc.append((t2 - t1) / draws * 1e6)
    return statistics.median(build), statistics.median(enc)


class NativeFrames:
    """The same frames recorded by the NVN front end's C recorder (cpu_host/horizon/hle/nvn/
    recorder.c) through its host functions, called as a guest's calls reach them (a CPU record of
    our own, no guest kernel: no scheduling point after a call): the CPU-side recording cost on
    its own, and the ``Block`` of binary packets the client submits as ring tag 4."""

    CB, BASE = 7777, 0x10_0000_0000  # a command buffer id, the pool's (fake) guest address

    def __init__(self) -> None:
        from cpu_host.horizon.hle.nvn.native import NativeRecorder

        self.r = r = NativeRecorder()
        ffi = r.ffi
        r.L.nxr_bench_init()
        r.pool(1, self.BASE, 1 << 20)
        for k in range(len(BENCH_FS)):
            r.program(1 + k, False)
        for k in range(TEXS):
            r.texture_slot(k, 10 + k)
        r.sampler_slot(0, SAMPLER)
        self.cpu = ffi.new("uint64_t[64]")  # NxCpu's x0..x30, sp, pc (all the recorder reads)
        self.progs = ffi.new("uint64_t[]", [1 + k for k in range(len(BENCH_FS))])  # the guest's NVNprogram structs
        self.prog_ptrs = ffi.new("uint64_t[]", [self.addr(self.progs) + 8 * k for k in range(len(BENCH_FS))])
        self.cb = ffi.new("uint64_t *", self.CB)  # the guest's NVNcommandBuffer struct: its id
        self.handles = ffi.new("uint64_t[]", list(range(TEXS)))  # texture id k, sampler id 0

    def addr(self, p) -> int:
        return int(self.r.ffi.cast("uintptr_t", p))

    def frame(self, draws: int, frame: int, present: int | None = None):
        """(Block, thread CPU us per draw of the per-draw calls) of frame_commands(draws, frame),
        presented as frame ``present`` (default ``frame``)."""
        r, cb = self.r, self.addr(self.cb)
        cmds = r.begin(self.CB, cb)
        cmds.append((P.OP_TARGET, TARGET))
        cmds.append((P.OP_CLEAR, 0, 0, 0, 1))
        r.stride(self.CB, 16)
        r.attribs(self.CB, [[0, 2, 0], [1, 2, 8]])
        self.cpu[0:5] = [cb, 0, self.BASE, 96, 0]
        assert r.try_call(r.names().index("nvnCommandBufferBindVertexBuffer"), self.addr(self.cpu)) is None
        t = time.thread_time()
        r.L.nxr_bench_frame(
            self.addr(self.cpu),
            cb,
            self.addr(self.prog_ptrs),
            draws,
            self.BASE + UBO_AT,
            UBOS,
            frame,
            self.addr(self.handles),
            TEXS,
        )
        dt = time.thread_time() - t
        cmds.append((P.OP_PRESENT, frame if present is None else present, TARGET))
        return r.end(self.CB), dt / draws * 1e6


class Split:
    """Client -> ring -> GPU process."""

    def __init__(self, native: str = "auto", spin: tuple[int, int] | None = None) -> None:
        """``spin``: (gpu_host.ring_spin_us, client_spin_us); None: the settings as they are."""
        import tempfile

        self.native = native
        self.timing = Path(tempfile.mkdtemp(prefix="nxsplit")) / "timing.log"
        env = {"NXRECOMP_GPU_HOST_NATIVE_REPLAY": native, "NXRECOMP_GPU_HOST_TIMING_LOG": str(self.timing)}
        if spin is not None:
            env["NXRECOMP_GPU_HOST_RING_SPIN_US"] = str(spin[0])
            os.environ["NXRECOMP_GPU_HOST_CLIENT_SPIN_US"] = str(spin[1])  # read by GpuClient below
        self.proc, d = start_gpu(env)
        self.dir = d
        # the ring of gpu_host.ring_size (8 MiB by default), as a game gets: its size decides whether
        # a frame's bytes are still in the caches when the next frame is written over them
        self.c = GpuClient(d)
        self.client_stamps: dict[int, tuple[float, float, float]] = {}  # seq -> submit, published, woken
        self.c.connect(timeout=30)
        pool = self.c.create_pool(1, 1 << 20)
        fill(pool)
        for k, fs in enumerate(BENCH_FS):
            self.c.register_program(1 + k, GlslSource(BENCH_VS, fs))
        for t in textures():
            self.c.register(t)
        self.c.register(SamplerDesc(SAMPLER))
        self.replay_ms: list[float] = []
        self.encode_s: list[float] = []  # encoding at the end of recording (the game's CPU time)
        self.submit_s: list[float] = []  # the client's submit call: copy into the ring, doorbell

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

    def frame_blob(self, cmds: list[tuple], n: int) -> tuple[float, str]:
        """The frame as a binary-packet submission (ring tag 4, parts of at most PART packets),
        bypassing the client's msgpack path: the transport the native recorder will use.  The
        conversion (a stand-in for that recorder) is timed apart, like the encode above."""
        t = time.perf_counter()
        parts = [binpackets.convert(cmds[i : i + PART]) for i in range(0, len(cmds), PART)]
        self.encode_s.append(time.perf_counter() - t)
        c = self.c
        t = time.perf_counter()
        c.seq += 1
        c.pending[c.seq] = []
        for i, part in enumerate(parts):
            c.writer.write(BLOB_PART.pack(c.seq, i, BLOB_LAST if i == len(parts) - 1 else 0) + part, wait=c._check, tag=TAG_BLOB)
        c.writer.publish()
        c.wait(c.seq, timeout=300)
        dt = time.perf_counter() - t
        self.replay_ms.append(c.status().last_replay_ms)
        return dt, c.frame(n).sha256

    def frame_block(self, block, n: int) -> tuple[float, str]:
        """The frame as the native recorder made it (a Block: binary packets, ring tag 4 parts),
        submitted through the client as the NVN front end does."""
        c = self.c
        t = time.perf_counter()
        seq = c.submit([block])
        tp = time.perf_counter()
        c.wait(seq, timeout=300)
        tw = time.perf_counter()
        dt = tw - t
        self.client_stamps[seq] = (t, tp, tw)
        self.replay_ms.append(c.status().last_replay_ms)
        try:
            return dt, c.frame(n).sha256
        except Exception:  # the GPU process's reason for dropping the submission is in its log
            print("GPU process log (tail):\n" + "\n".join(gpu_log(self.dir).splitlines()[-20:]), file=sys.stderr)
            raise

    def breakdown(self, seqs: list[int]) -> dict[str, float]:
        """Median milliseconds of each step of these binary submissions' round trips, from the
        client's clock readings and the GPU process's (gpu_host.timing_log; both perf_counter,
        i.e. CLOCK_MONOTONIC, one clock on one machine)."""
        gpu = {}
        for line in self.timing.read_text().splitlines():
            f = line.split()
            gpu[int(f[0])] = list(map(float, f[1:]))
        steps: dict[str, list[float]] = {k: [] for k in STEPS}
        cpu: list[float] = []
        for seq in seqs:
            if seq not in gpu or seq not in self.client_stamps:
                continue
            t0, tp, tw = self.client_stamps[seq]
            wake, drained, start, end, done = gpu[seq][:5]
            if len(gpu[seq]) > 5:  # the replay's thread CPU ms (gpu_host.timing_log's last field)
                cpu.append(gpu[seq][5])
            for k, v in zip(
                STEPS, (tp - t0, wake - tp, drained - wake, start - drained, end - start, done - end, tw - done, tw - t0)
            ):
                steps[k].append(v * 1000)
        out = {k: statistics.median(v) for k, v in steps.items() if v}
        if cpu:
            out["replay_cpu"] = statistics.median(cpu)
        return out

    def interval_native(self, rec: "NativeFrames", draws: int, frames: list[int], in_flight: int = 2) -> float:
        """Seconds per frame of a running game on the native path: each frame recorded by the C
        recorder (inside the interval) and submitted with ``in_flight`` frames ahead."""
        t = time.perf_counter()
        seqs: list[int] = []
        for n in frames:
            block, _ = rec.frame(draws, n)
            if len(seqs) >= in_flight:
                self.c.wait(seqs.pop(0), timeout=300)
            seqs.append(self.c.submit([block]))
        for s in seqs:
            self.c.wait(s, timeout=300)
        return (time.perf_counter() - t) / len(frames)

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
        for k, fs in enumerate(BENCH_FS):
            v, f = GlslSource(BENCH_VS, fs).spirv()
            self.eng.register_program(id=1 + k, vertex=v, fragment=f)
        for t in textures():
            self.eng.register_texture(**from_desc(t))
        self.eng.register_sampler(SAMPLER, False, False)

    def frame(self, cmds: list[tuple], n: int) -> tuple[float, float, str]:
        """(wall seconds, thread CPU seconds, frame SHA-256) of one submission's replay."""
        packets = list(cmds)  # the recorded tuples as they are
        t, c = time.perf_counter(), time.thread_time()
        with gc_paused():  # as the GPU process replays (gpu_host.server)
            self.eng.submit(n, packets)  # no serialisation: one process needs none
        dt, dc = time.perf_counter() - t, time.thread_time() - c
        return dt, dc, self.eng.frames[-1].sha256

    def frame_blob(self, blob: bytes, n: int) -> tuple[float, float, str]:
        """``frame`` for a binary-packet submission (Engine.submit_blob)."""
        t, c = time.perf_counter(), time.thread_time()
        with gc_paused():
            self.eng.submit_blob(n, blob)
        dt, dc = time.perf_counter() - t, time.thread_time() - c
        return dt, dc, self.eng.frames[-1].sha256

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
    recv, sess = Receiver(), types.SimpleNamespace(packets=0, blob=None)
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
            marks = [
                i
                for i, o in enumerate(objs)
                if type(o) is list and o and type(o[0]) is int and (o[0] == P.OP_BEGIN or o[0] == P.OP_END)
            ]
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


def native_check_cpu(draws: int, reps: int = 5) -> tuple[float, float]:
    """Median thread CPU time (us per draw) of converting a frame's packet tuples to the binary
    format (binpackets.convert: Python per packet, a stand-in for a native recorder) and of the
    native decoder's format + validation passes over the blob (one C call, gpu_host/nxpkt.c)."""
    from gpu_host import binpackets, nxpkt
    from gpu_host.objects import Objects

    objs = Objects(SizedPools({1: 1 << 20}))
    for k, fs in enumerate(BENCH_FS):
        objs.add_program(1 + k, *GlslSource(BENCH_VS, fs).spirv())
    for t in textures():
        objs.add_texture(**from_desc(t))
    objs.add_sampler(SAMPLER, False, False)
    tabs = nxpkt.tables(objs, {1: 1 << 20})
    conv, chk = [], []
    for r in range(reps):
        cmds = frame_commands(draws, r)
        t0 = time.thread_time()
        data = binpackets.convert(cmds)
        t1 = time.thread_time()
        got = nxpkt.check(data, tabs)
        t2 = time.thread_time()
        assert got.draws == draws and not got.fallback_op
        conv.append((t1 - t0) / draws * 1e6)
        chk.append((t2 - t1) / draws * 1e6)
    return statistics.median(conv), statistics.median(chk)


def local_worker() -> None:
    """The in-process side, in a clean process of its own (no client, no gRPC threads): reads
    ``DRAWS FRAME [PRESENT]`` lines, answers ``seconds cpu-seconds sha256`` lines; with PRESENT the
    frame is replayed from its binary packets (Engine.submit_blob, as the GPU process replays a
    tag-4 submission; converted beforehand, outside the timing) and presented as frame PRESENT."""
    side = Local()
    gc.freeze()  # as the GPU process does after its start-up (gpu_host.server.main)
    try:
        for line in sys.stdin:
            draws, n, *present = map(int, line.split())
            if present:
                cmds = frame_commands(draws, n)[:-1] + [(P.OP_PRESENT, present[0], TARGET)]
                dt, dc, sha = side.frame_blob(binpackets.convert(cmds), present[0])
            else:
                dt, dc, sha = side.frame(frame_commands(draws, n), n)
            print(dt, dc, sha, flush=True)
    finally:
        side.close()


class LocalProc:
    def __init__(self, native: str = "auto") -> None:
        import subprocess

        self.p = subprocess.Popen(
            [sys.executable, __file__, "--local-worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "NXRECOMP_GPU_HOST_NATIVE_REPLAY": native},
        )

    def frame(self, draws: int, n: int, present: int | None = None) -> tuple[float, float, str]:
        self.p.stdin.write(f"{draws} {n}{'' if present is None else f' {present}'}\n")
        self.p.stdin.flush()
        dt, dc, sha = self.p.stdout.readline().split()
        return float(dt), float(dc), sha

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait()


def profile(draws: int, frames: int = 5) -> None:
    """Where the GPU process's replay of a binary frame (Engine.submit_blob, native replay) spends
    its time: cProfile's top functions by own time, in this process."""
    import cProfile
    import pstats

    side = Local()
    blobs = [binpackets.convert(frame_commands(draws, n)) for n in range(frames + 2)]
    for n in range(2):  # pipelines compiled, caches warm
        side.eng.submit_blob(n, blobs[n])
    pr = cProfile.Profile()
    t = time.thread_time()
    with gc_paused():
        pr.enable()
        for n in range(2, frames + 2):
            side.eng.submit_blob(n, blobs[n])
        pr.disable()
    print(f"Engine.submit_blob, {draws} draws: {(time.thread_time() - t) / frames * 1000:.2f} ms a frame (profiled)")
    pstats.Stats(pr).sort_stats("tottime").print_stats(22)
    side.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", type=int, default=0, help="profile the native replay of frames of this many draws")
    ap.add_argument("--frames", type=int, default=9)
    ap.add_argument("--draws", default=",".join(map(str, DRAWS)), help="draws per frame, comma-separated")
    ap.add_argument("--native", default="off,on", help="gpu_host.native_replay settings to run, in order")
    ap.add_argument("--local-worker", action="store_true")
    ap.add_argument(
        "--arena",
        type=int,
        default=1,
        help="1: the native recorder's frames also through the command arena (ring tag 5), interleaved with copies",
    )
    ap.add_argument(
        "--rerecord",
        action="store_true",
        help="each way of a native frame (copy / arena / arena_py) submits a recording of its own, not one recording "
        "three times (a staged copy is used once: the ways after the first find none)",
    )
    ap.add_argument(
        "--spin",
        default="",
        help="comma-separated RING/CLIENT[/PART] settings (gpu_host.ring_spin_us / client_spin_us in "
        "microseconds, ring_part_bytes): the native-recorder frames again through a GPU process "
        "with each, transport broken down",
    )
    a = ap.parse_args()
    if a.local_worker:
        return local_worker()
    if a.profile:
        return profile(a.profile)
    shas: dict[int, str] = {}  # frame -> SHA-256, equal across the native_replay settings
    for mode in a.native.split(","):
        print(f"gpu_host.native_replay = {mode}")
        split, local = Split(mode), LocalProc(mode)
        print(f"(client polls completions {split.c.spin * 1e6:.0f} us before sleeping: gpu_host.client_spin_us)")
        try:
            run_mode(a, split, local, shas, first=mode == a.native.split(",")[0])
        finally:
            split.close()
            local.close()
    if a.spin:
        spin_ab(a)


def spin_ab(a: argparse.Namespace) -> None:
    """The native recorder's frames through GPU processes polling the ring / clients polling
    completions (gpu_host.ring_spin_us / client_spin_us), alternating between the settings frame by
    frame (every setting its own GPU process, all started first): where the transport goes."""
    pairs = [(tuple(map(int, p.split("/"))) + (0,))[:3] for p in a.spin.split(",")]
    splits = []
    try:
        for ring, client, part in pairs:
            splits.append(Split("on", (ring, client)))
            if part:
                splits[-1].c.part_bytes = part
        os.environ.pop("NXRECOMP_GPU_HOST_CLIENT_SPIN_US", None)
        rec = NativeFrames()
        for draws in map(int, a.draws.split(",")):
            seqs: list[list[int]] = [[] for _ in pairs]
            tot: list[list[float]] = [[] for _ in pairs]
            for rep in range(a.frames + 1):
                for k in range(len(pairs)) if rep % 2 else reversed(range(len(pairs))):
                    sp = splits[k]
                    sp.c.spin = pairs[k][1] / 1e6
                    block, _ = rec.frame(draws, rep, 2 * 10**6 + rep)
                    dt, _ = sp.frame_block(block, 2 * 10**6 + rep)
                    if rep:  # the first frame compiles pipelines
                        seqs[k].append(sp.c.seq)
                        tot[k].append(dt)
            for k, (ring, client, part) in enumerate(pairs):
                b = splits[k].breakdown(seqs[k])
                rp = b.get("replay", 0.0)
                tm = statistics.median(tot[k]) * 1000
                print(
                    f"{draws:6d} draws, ring spin {ring:6d} us, client spin {client:6d} us, parts "
                    f"{(part or splits[k].c.part_bytes) >> 10:4d} KiB: end to end "
                    f"{tm:6.2f} ms, replay {rp:6.2f} ms -> transport {tm - rp:5.2f} ms = "
                    f"{(tm - rp) / tm * 100:4.1f}% | " + "  ".join(f"{s} {b[s]:.3f}" for s in STEPS if s in b)
                )
    finally:
        for sp in splits:
            sp.close()


def run_mode(a: argparse.Namespace, split: Split, local: LocalProc, shas: dict[int, str], first: bool) -> None:
    n = 0
    for draws in map(int, a.draws.split(",")):
        st, lt, reps, lc, ns = [], [], [], [], []
        for rep in range(a.frames + 1):
            n += 1
            ns.append(n)
            # Interleaved, alternating who goes first: the machine's background load hits both.
            if rep % 2:
                ldt, ldc, lsha = local.frame(draws, n)
                sdt, ssha = split.frame(frame_commands(draws, n), n)
            else:
                sdt, ssha = split.frame(frame_commands(draws, n), n)
                ldt, ldc, lsha = local.frame(draws, n)
            assert ssha == lsha, "split and in-process frames differ"
            assert shas.setdefault(n, ssha) == ssha, f"frame {n} differs between native_replay settings"
            if rep:  # the first frame compiles pipelines
                st.append(sdt)
                lt.append(ldt)
                reps.append(split.replay_ms[-1] / 1000)
                lc.append(ldc)
        lm, sm, rep = statistics.median(lt), statistics.median(st), statistics.median(reps)
        print(
            f"{draws:6d} draws/frame: in-process {lm * 1000:7.1f} ms  split {sm * 1000:7.1f} ms  "
            f"split/in-process {sm / lm:.3f} = split overhead {(sm / lm - 1) * 100:+.1f}%  (medians of {len(st)} "
            "interleaved frames; frames identical)"
        )
        enc, sub = statistics.median(split.encode_s[-len(st) :]), statistics.median(split.submit_s[-len(st) :])
        print(
            f"{'':20}GPU process's own replay {rep * 1000:7.1f} ms -> transport (ring copy, doorbell, "
            f"wake-up, unpack) {(sm - rep) * 1000:5.1f} ms = transport share {(sm - rep) / sm * 100:.1f}% of the split frame"
        )
        print(
            f"{'':20}encode at record time {enc * 1000:5.1f} ms (the game's CPU time, before the submit; "
            f"transport + encode {(sm - rep + enc) * 1000:5.1f} ms = {(sm - rep + enc) / (sm + enc) * 100:.1f}%)"
            f"  client submit call {sub * 1000:5.2f} ms"
        )
        print(
            f"{'':20}per draw, thread CPU: GPU-process replay {statistics.median(lc) / draws * 1e6:6.2f} us "
            f"(Engine.submit; {statistics.median(lc) * 1000:.1f} ms a frame)"
        )
        if first:
            build, enc_us = recording_cpu(draws)
            conv, chk = native_check_cpu(draws)
            print(
                f"{'':20}CPU-side recording {build + enc_us:5.2f} us/draw (packets built {build:.2f} + encoded "
                f"{enc_us:.2f}; target 0.2) | binary packets: native decode + validation {chk:.3f} us/draw "
                f"(nxpkt.c, one call a frame), tuples -> binary converter {conv:.2f} us/draw (Python)"
            )
        if split.native != "off":
            rec = NativeFrames()
            arena = split.c.lend_arena() if a.arena else None
            if arena is not None and not rec.r.use_arena(*arena):
                arena = None  # another client's arena is the recorder's (an earlier mode's)
            # "arena": the client's submit in C (ringput.c, gpu_host.client_native_submit on);
            # "arena_py": the same submission written by the Python path (A/B in one run)
            put = split.c._put
            ways = ["copy", "arena"] + (["arena_py"] if put is not None else []) if arena is not None else ["copy"]
            bt: dict[str, list[float]] = {w: [] for w in ways}
            br: dict[str, list[float]] = {w: [] for w in ways}
            bseq: dict[str, list[int]] = {w: [] for w in ways}
            ru, blt, blc = [], [], []
            staged0, chunks = split.c.status().staged_chunks, 0
            for rep, m in enumerate(ns):  # the same frames again, presented as m + 10**6
                block, us = rec.frame(draws, m, m + 10**6)
                if not a.rerecord:
                    chunks += len(block.chunks)
                order = ways if rep % 2 else ways[::-1]
                if rep % 2:  # interleaved with the in-process replay of the same blob
                    ldt, ldc, lsha = local.frame(draws, m, m + 10**6)
                got = {}
                for k, w in enumerate(order):  # the same recording copied into the ring (tag 4) / referenced (tag 5)
                    if a.rerecord and k:  # recorded again: each way's chunks staged afresh (a staged copy is used once)
                        block, _ = rec.frame(draws, m, m + 10**6)
                    if a.rerecord and w.startswith("arena"):
                        chunks += len(block.chunks)
                    split.c.arena = arena[0] if w.startswith("arena") else None
                    split.c._put = None if w == "arena_py" else put
                    got[w] = split.frame_block(block, m + 10**6)
                    split.c._put = put
                    if rep:
                        bt[w].append(got[w][0])
                        br[w].append(split.replay_ms[-1] / 1000)
                        bseq[w].append(split.c.seq)
                split.c.arena = arena[0] if arena is not None else None
                if not rep % 2:
                    ldt, ldc, lsha = local.frame(draws, m, m + 10**6)
                assert all(shas[m] == g[1] == lsha for g in got.values()), (
                    f"frame {m} differs through the native recorder and the binary ring"
                )
                ru.append(us)
                if rep:
                    blt.append(ldt)
                    blc.append(ldc)
            blm = statistics.median(blt)
            staged = split.c.status().staged_chunks - staged0
            for w in ways:
                bm, brp = statistics.median(bt[w]), statistics.median(br[w])
                how = {
                    "copy": "copied into the ring (tag 4)",
                    "arena": "in the command arena (tag 5)" + (", C submit" if put is not None else ""),
                    "arena_py": "in the command arena (tag 5), Python submit",
                }[w]
                b = split.breakdown(bseq[w])
                cpu = f" (thread CPU {b['replay_cpu']:.2f} ms)" if "replay_cpu" in b else ""
                print(
                    f"{'':20}native recorder -> binary packets {how}: split {bm * 1000:7.1f} ms, GPU process's "
                    f"replay {brp * 1000:7.1f} ms{cpu} -> transport share {(bm - brp) * 1000:5.2f} ms = "
                    f"{(bm - brp) / bm * 100:.1f}% of the split frame | split overhead (split / in-process - 1, "
                    f"this run) {(bm / blm - 1) * 100:+.1f}%"
                )
                print(f"{'':24}steps (medians, ms): " + "  ".join(f"{k} {b[k]:.3f}" for k in STEPS if k in b))
                if w == "arena":
                    print(f"{'':24}staged chunks copied while recording, used in place: {staged} of {chunks} chunks")
            print(
                f"{'':20}the same blobs in-process (Engine.submit_blob): {blm * 1000:7.1f} ms "
                f"(thread CPU {statistics.median(blc) * 1000:.1f} ms) | CPU-side recording (C, per draw) "
                f"{statistics.median(ru):.3f} us"
            )
            si = split.interval_native(rec, draws, [n + 1 + k for k in range(a.frames)])
            n += a.frames
            print(
                f"{'':20}running game, native recorder (2 frames in flight): {si * 1000:7.1f} ms/frame "
                f"= {1 / si:.1f} fps  split/in-process {si / lm:.3f}"
            )
        batch = []
        for _ in range(a.frames):
            n += 1
            batch.append((n, frame_commands(draws, n)))
        si = split.interval(batch)
        print(f"{'':20}running game (2 frames in flight): split {si * 1000:7.1f} ms/frame  split/in-process {si / lm:.3f}")
        if first:
            cpu = transport_cpu(draws)
            print(
                f"{'':20}transport CPU per frame (thread CPU time, same code, one process): encode "
                f"{cpu['encode']:.2f} ms | submit {cpu['submit']:.2f} ms | GPU-process receive {cpu['receive']:.2f} ms"
                f"  (previous path: submit {cpu['old_submit']:.2f} ms, receive {cpu['old_receive']:.2f} ms)"
            )


if __name__ == "__main__":
    main()
