"""Time from SIGKILL of the GPU process to the next presented frame, under the supervisor, with
and without the warm standby process.  Prints median / max and the ratio.

    .venv/bin/python bench/gpu_restart.py [--kills 10]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))

from cpu_host.gpu_client.client import GpuClient  # noqa: E402
from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from cpu_host.gpu_client.shaders import GlslSource  # noqa: E402
from gpu_guest import COLOR_FS, COLOR_VS, BoxGame  # noqa: E402
from nxrecomp.app.supervise_bundle import gpu_spec  # noqa: E402
from nxrecomp.app.supervisor import Policy, Supervisor  # noqa: E402


def measure(kills: int, standby: bool) -> list[float]:
    run_dir = Path(tempfile.mkdtemp(prefix="nxb"))
    spec = gpu_spec(run_dir)
    spec.env["NXRECOMP_NXRECOMP_LOG_LEVEL"] = "info"  # the standby says when it is ready
    if not standby:
        spec.standby_argv = None
    sup = Supervisor([spec], run_dir / "run.log", Policy(max_crashes=10**6))
    th = threading.Thread(target=sup.run, daemon=True)
    th.start()
    c = GpuClient(run_dir, ring_capacity=1 << 20)
    c.connect(timeout=30)
    pool = c.create_pool(1, 1 << 20)
    c.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
    c.register(TextureDesc(7, 0, 0, BoxGame.W, BoxGame.H, "RGBA8", render_target=True))
    g = BoxGame()
    out = []
    frame = 0
    try:
        for k in range(kills):
            for _ in range(5):  # a few frames between kills
                frame += 1
                g.step()
                c.wait(c.submit(g.commands(pool, frame, 7)))
            deadline = time.monotonic() + 30
            while standby and (run_dir / "run.log").read_text().count("standby: ready") <= k and time.monotonic() < deadline:
                time.sleep(0.05)  # measure a restart with its spare ready
            time.sleep(0.2)
            os.kill(sup.pid("gpu"), signal.SIGKILL)
            t = time.perf_counter()
            frame += 1
            g.step()
            c.wait(c.submit(g.commands(pool, frame, 7)), timeout=60)
            out.append(time.perf_counter() - t)
    finally:
        c.close()
        sup.stop()
        th.join(30)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=10)
    a = ap.parse_args()
    warm = measure(a.kills, True)
    cold = measure(a.kills, False)
    for name, v in (("warm standby", warm), ("cold restart", cold)):
        print(
            f"kill -> next presented frame, {name}: median {statistics.median(v) * 1000:6.0f} ms  "
            f"max {max(v) * 1000:6.0f} ms  ({len(v)} kills)"
        )
    print(f"cold / warm: {statistics.median(cold) / statistics.median(warm):.1f}x")


if __name__ == "__main__":
    main()
