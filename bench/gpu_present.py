"""What presenting into a window costs: the same frames (a clear and 100 rectangles, then
PRESENT) through the split (client -> ring -> GPU process), once headless and once with an SDL3
window on a private Xvfb (swapchain on lavapipe).  Prints frame times and the ratio.

    .venv/bin/python bench/gpu_present.py [--frames 40] [--size 1280x720]

Needs Xvfb and SDL3 (built by gpu_host.sdl3_build on first use).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu_host"))

from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from gpu_guest import Gpu, P, Scene, rect_px, ubo  # noqa: E402


def frames(g: Gpu, w: int, h: int, n: int) -> list[float]:
    t = g.id()
    g.client.register(TextureDesc(t, 0, 0, w, h, "RGBA8", render_target=True))
    rng = np.random.default_rng(3)
    sc = Scene(g.pool, 0)
    cmds = [(P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]])]
    for _ in range(100):
        x0, y0 = int(rng.integers(0, w - 64)), int(rng.integers(0, h - 64))
        cmds += [
            (P.OP_VERTEX, *sc.put(rect_px(x0, y0, x0 + 64, y0 + 64, w, h).tobytes())),
            (P.OP_UNIFORM, 0, *sc.put(ubo(rng.random(4)))),
            (P.OP_DRAW, 6, 1, 0, 0),
        ]
    out = []
    for i in range(n):
        f = next(g.frames)
        t0 = time.perf_counter()
        g.client.wait(g.client.submit([(P.OP_TARGET, t), (P.OP_CLEAR, 0, 0, 0, 1), *cmds, (P.OP_PRESENT, f, t)]))
        out.append(time.perf_counter() - t0)
    return out[2:]  # the first frames build pipelines and the swapchain's images


def present_alone(display: str, w: int, h: int, n: int) -> float:
    """Median milliseconds of one Presenter.present of a w x h frame (window in this process)."""
    import vulkan as vk

    from gpu_host.swapchain import Presenter
    from gpu_host.vkdevice import Device
    from gpu_host.window import InputHub, WindowSystem

    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = display
    ws = WindowSystem("nxbench", w, h)
    ws.start(build=True)
    dev = Device("", ws.instance_extensions, ["VK_KHR_swapchain"])
    pres = Presenter(dev, vk.ffi.cast("VkSurfaceKHR", ws.open(dev.instance)), w, h)
    rgba = np.random.default_rng(0).integers(0, 256, w * h * 4, dtype=np.uint8).tobytes()
    hub = InputHub()
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        pres.present(rgba, w, h)
        t.append(time.perf_counter() - t0)
        ws.pump(hub)
    pres.close()
    ws.close()
    if old is None:
        del os.environ["DISPLAY"]
    else:
        os.environ["DISPLAY"] = old
    return float(np.median(t[2:])) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--size", default="1280x720")
    a = ap.parse_args()
    w, h = map(int, a.size.split("x"))
    from gpu_host import sdl3_build

    sdl3_build.lib_dir()
    n = 70
    while Path(f"/tmp/.X11-unix/X{n}").exists() or Path(f"/tmp/.X{n}-lock").exists():
        n += 1
    xvfb = subprocess.Popen(
        ["Xvfb", f":{n}", "-screen", "0", f"{w}x{h}x24", "-nolisten", "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while not Path(f"/tmp/.X11-unix/X{n}").exists():
            time.sleep(0.05)
        res = {}
        for mode in ("off", "on", "off", "on"):  # interleaved, against drifting load
            g = Gpu(
                {
                    "DISPLAY": f":{n}",
                    "NXRECOMP_GPU_HOST_WINDOW": mode,
                    "NXRECOMP_GPU_HOST_WINDOW_SIZE": f"{w}x{h}",
                    "NXRECOMP_GPU_HOST_FRAMES_DIR": "",
                }
            )
            try:
                res.setdefault(mode, []).extend(frames(g, w, h, a.frames))
            finally:
                g.close()
        present_ms = present_alone(f":{n}", w, h, a.frames)
        med = {m: float(np.median(v)) * 1000 for m, v in res.items()}
        print(f"{w}x{h}, 100 draws + present per frame, median of {len(res['off'])} frames")
        print(f"headless      {med['off']:7.1f} ms")
        print(f"window (Xvfb) {med['on']:7.1f} ms")
        print(f"window / headless: {med['on'] / med['off']:.2f}  (present adds {med['on'] - med['off']:.1f} ms)")
        print(
            f"Presenter.present alone (copy + blit + queue present, in this process): {present_ms:.2f} ms "
            f"= {present_ms / med['off'] * 100:.1f} % of a headless frame"
        )
    finally:
        xvfb.terminate()
        xvfb.wait()


if __name__ == "__main__":
    main()
