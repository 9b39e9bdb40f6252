"""What NVN events cost in the GPU process (real process, real ring, lavapipe).

  plain     one submission of N small draws, no events: time from submit to `completed`
  split     the same draws with K EVENT_WAITs on an event already true, evenly spread: the
            submission runs as K+1 parts (a Vulkan submit-and-wait each, state carried across)
  signals   the plain submission with an EVENT_SIGNAL (ADD) after every draw
  release   a submission waiting on an event: time from the CPU's write of the event to
            `completed` (the GPU process's polling latency plus one small part's replay)

Prints the best of the runs for each, and split/signals as ratios to plain.

    .venv/bin/python bench/gpu_events.py [--draws 2000] [--waits 8] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "gpu_host")]

from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from gpu_guest import P, Gpu, Scene, rect_px, ubo  # noqa: E402

EV = 7 << 20


def timed(g: Gpu, cmds: list) -> float:
    t0 = time.perf_counter()
    g.client.wait(g.client.submit(cmds))
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--waits", type=int, default=8)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    g = Gpu()
    try:
        t = g.id()
        g.client.register(TextureDesc(t, 0, 0, 64, 64, "RGBA8", render_target=True))
        sc = Scene(g.pool, 0)
        vb, ub = sc.put(rect_px(0, 0, 4, 4, 64, 64).tobytes()), sc.put(ubo((1, 0, 0, 1)))
        head = [
            (P.OP_TARGET, t),
            (P.OP_CLEAR, 0.0, 0.0, 0.0, 1.0),
            (P.OP_PROGRAM, 1),
            (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
            (P.OP_VERTEX, *vb),
            (P.OP_UNIFORM, 0, *ub),
        ]
        draw = (P.OP_DRAW, 6, 1, 0, 0)
        g.pool.write(EV, (1).to_bytes(4, "little"))
        plain = head + [draw] * a.draws
        every = max(1, a.draws // (a.waits + 1))
        split = list(head)
        for i in range(a.draws):
            if i and i % every == 0 and sum(c[0] == P.OP_EVENT_WAIT for c in split) < a.waits:
                split.append((P.OP_EVENT_WAIT, 1, EV, 0, 1))
            split.append(draw)
        signals = list(head)
        for _ in range(a.draws):
            signals += [draw, (P.OP_EVENT_SIGNAL, 1, EV + 4, 1, 1)]
        for cmds in (plain, split, signals):
            timed(g, cmds)  # pipelines built, arena sized
        best = {
            name: min(timed(g, cmds) for _ in range(a.runs))
            for name, cmds in (("plain", plain), ("split", split), ("signals", signals))
        }
        lat = []
        for i in range(a.runs):
            g.pool.write(EV + 8, (0).to_bytes(4, "little"))
            seq = g.client.submit(head + [(P.OP_EVENT_WAIT, 1, EV + 8, 0, 1), draw])
            time.sleep(0.15)  # the GPU process is polling by now (backed off)
            t0 = time.perf_counter()
            g.pool.write(EV + 8, (1).to_bytes(4, "little"))
            g.client.wait(seq)
            lat.append((time.perf_counter() - t0) * 1000)
        waits = sum(c[0] == P.OP_EVENT_WAIT for c in split)
        print(f"draws {a.draws}, runs {a.runs}, device {g.client.device}")
        print(f"plain    {best['plain']:8.1f} ms")
        print(f"split    {best['split']:8.1f} ms  ({waits} waits, {waits + 1} parts)  ratio {best['split'] / best['plain']:.2f}")
        print(f"signals  {best['signals']:8.1f} ms  ({a.draws} EVENT_SIGNAL ADD)  ratio {best['signals'] / best['plain']:.2f}")
        print(f"release  median {statistics.median(lat):6.1f} ms, max {max(lat):6.1f} ms (CPU write of the event -> completed)")
    finally:
        g.close()


if __name__ == "__main__":
    main()
