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
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))

from cpu_host.gpu_client.client import GpuClient  # noqa: E402
from cpu_host.gpu_client.memory import Pool  # noqa: E402
from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from cpu_host.gpu_client.shaders import GlslSource  # noqa: E402
from gpu_guest import COLOR_FS, COLOR_VS, P, rect_px, start_gpu, stop_gpu, ubo  # noqa: E402
from gpu_host.engine import Engine  # noqa: E402
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

    def frame(self, cmds: list[tuple], n: int) -> tuple[float, str]:
        t = time.perf_counter()
        self.c.wait(self.c.submit(cmds), timeout=300)
        dt = time.perf_counter() - t
        self.replay_ms.append(self.c.status().last_replay_ms)
        return dt, self.c.frame(n).sha256

    def interval(self, frames: list[tuple[int, list[tuple]]], in_flight: int = 2) -> float:
        """Seconds per frame with ``in_flight`` frames submitted ahead (commands built before)."""
        t = time.perf_counter()
        seqs: list[int] = []
        for _, cmds in frames:
            if len(seqs) >= in_flight:
                self.c.wait(seqs.pop(0), timeout=300)
            seqs.append(self.c.submit(cmds))
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
        packets = [list(c) for c in cmds]
        t = time.perf_counter()
        self.eng.submit(n, packets)                # no serialisation: one process needs none
        dt = time.perf_counter() - t
        return dt, self.eng.frames[-1].sha256

    def close(self) -> None:
        self.eng.close()
        self.dev.close()


def local_worker() -> None:
    """The in-process side, in a clean process of its own (no client, no gRPC threads): reads
    ``DRAWS FRAME`` lines, answers ``seconds sha256`` lines."""
    side = Local()
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
            print(f"{'':20}GPU process's own replay {rep * 1000:7.1f} ms -> transport (encode, ring, doorbell, "
                  f"wake-up, unpack) {(sm - rep) * 1000:5.1f} ms = {(sm - rep) / sm * 100:.1f}% of the split frame")
            batch = []
            for _ in range(a.frames):
                n += 1
                batch.append((n, frame_commands(draws, n)))
            si = split.interval(batch)
            print(f"{'':20}running game (2 frames in flight): split {si * 1000:7.1f} ms/frame  "
                  f"split/in-process {si / lm:.3f}")
    finally:
        split.close()
        local.close()


if __name__ == "__main__":
    main()
