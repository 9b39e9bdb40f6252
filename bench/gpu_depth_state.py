"""What depth/stencil and raster state cost per draw in the GPU process (real process, real ring,
lavapipe).  One submission of N small draws, replayed several times, in four forms:

  plain      colour target only, no state packets (what every submission was before depth state)
  depth      a D24S8 depth target, depth test on (state sent once)
  per_draw   the same, with a DEPTH_STENCIL and a RASTER packet before every draw (dynamic state set
             at every draw; no new pipelines)
  blend      a BLEND_STATE packet alternating between two blend states before every draw (a pipeline
             bind per draw, two pipelines in all)

Prints the GPU process's replay time per submission (Status.last_replay_ms, best of the runs) and
each form's ratio to plain.

    .venv/bin/python bench/gpu_depth_state.py [--draws 4000] [--runs 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "gpu_host")]

from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from gpu_guest import P, Gpu, Scene, rect_px, ubo  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    g = Gpu()
    try:
        c, d = g.id(), g.id()
        g.client.register(TextureDesc(c, 0, 0, 64, 64, "RGBA8", render_target=True))
        g.client.register(TextureDesc(d, 0, 0, 64, 64, "D24S8", render_target=True))
        sc = Scene(g.pool, 0)
        vb, ub = sc.put(rect_px(0, 0, 4, 4, 64, 64).tobytes()), sc.put(ubo((1, 0, 0, 1)))
        body = [(P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]), (P.OP_VERTEX, *vb), (P.OP_UNIFORM, 0, *ub)]
        ds_on = (*P.DS_DEFAULT[:1], True, True, 3, *P.DS_DEFAULT[4:])
        draw = (P.OP_DRAW, 6, 1, 0, 0)
        add = (P.OP_BLEND_STATE, 0, True, 1, 1, 0, 1, 1, 0, 15)
        forms = {
            "plain": [(P.OP_TARGET, c), (P.OP_CLEAR, 0, 0, 0, 1)] + body + [draw] * a.draws,
            "depth": [(P.OP_DEPTH_TARGET, c, d), (P.OP_CLEAR, 0, 0, 0, 1), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3), ds_on]
            + body
            + [draw] * a.draws,
            "per_draw": [(P.OP_DEPTH_TARGET, c, d), (P.OP_CLEAR, 0, 0, 0, 1), (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3)]
            + body
            + [x for i in range(a.draws) for x in (ds_on, (P.OP_RASTER, i % 3, 0, 0, False), draw)],
            "blend": [(P.OP_TARGET, c), (P.OP_CLEAR, 0, 0, 0, 1)]
            + body
            + [x for i in range(a.draws) for x in (add if i % 2 else P.BLEND_OVER, draw)],
        }
        best = {}
        for name, cmds in forms.items():
            enc = g.client.encode(cmds)
            times = []
            for _ in range(a.runs):
                g.client.wait(g.client.submit(enc), timeout=300)
                times.append(g.client.status().last_replay_ms)
            assert g.client.dropped() == 0, g.log()[-2000:]
            best[name] = min(times)
        for name, ms in best.items():
            print(
                f"{name:9} {ms:8.1f} ms per submission of {a.draws} draws  {ms * 1000 / a.draws:6.2f} us/draw  "
                f"x{ms / best['plain']:.2f} of plain"
            )
    finally:
        g.close()


if __name__ == "__main__":
    main()
