"""The demo in a real window: under a private Xvfb the GPU process opens an SDL3 window (SDL3
built from Debian's source), presents through a Vulkan swapchain, and the X server's own
screenshot (xwd) of the window shows a frame the game presented; keys typed into the window
(xdotool, through XTEST) reach the game as npad input and move the player."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.demo.test_demo import ROOT, read
from tests.xdisplay import capture, missing_tools, sdl3_or_skip, window_id, xdotool, xvfb

if missing_tools():
    pytest.skip(f"{', '.join(missing_tools())} not installed (scripts/nx.sh installs them)", allow_module_level=True)


@pytest.fixture(scope="module")
def sdl_lib():
    return sdl3_or_skip()


def test_window_shows_the_game_and_takes_keys(tmp_path, sdl_lib) -> None:
    idle = tmp_path / "idle.txt"
    idle.write_text("0 -\n")  # no scripted input: only the keys move the player
    title = f"nxdemo{os.getpid()}"
    out = tmp_path / "out"
    with xvfb() as display:
        env = {
            **os.environ,
            "DISPLAY": display,
            "NXRECOMP_GPU_HOST_WINDOW": "on",
            "NXRECOMP_GPU_HOST_WINDOW_TITLE": title,
            "NXRECOMP_GPU_HOST_WINDOW_SIZE": "320x180",
            "NXRECOMP_CPU_HOST_SAVE_DIR": str(tmp_path / "saves"),
        }
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nxrecomp",
                "demo",
                "--frames",
                "360",
                "--out",
                str(out),
                "--input",
                str(idle),
                "--screenshot-every",
                "0",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        shot = None
        try:
            frames = out / "frames"

            def presented() -> int:
                return len(list(frames.glob("frame_*.png"))) if frames.exists() else 0

            deadline = time.monotonic() + 300
            while p.poll() is None and time.monotonic() < deadline and presented() < 60:
                time.sleep(0.1)
            wid = window_id(display, title)
            assert wid, "the GPU process opened no window"
            shot = capture(display, wid)
            xdotool(display, "windowfocus", "--sync", wid, "keydown", "Right")
            # held for 1.5 s and at least 30 presented frames (0.15 a frame: x > 100 hundredths
            # takes 7): a game slowed by a loaded machine gets as many frames to move in
            held, n0 = time.monotonic(), presented()
            while p.poll() is None and time.monotonic() - held < 120 and (presented() < n0 + 30 or time.monotonic() - held < 1.5):
                time.sleep(0.05)
            xdotool(display, "windowfocus", "--sync", wid, "keyup", "Right")
            text = p.communicate(timeout=300)[0]
        finally:
            if p.poll() is None:
                p.kill()
    assert p.returncode == 0, text[-3000:]
    report = json.loads((out / "report.json").read_text())
    # the screenshot is one of the presented frames (the window shows each as it is presented)
    pngs = sorted((out / "frames").glob("frame_*.png"))
    best = min((np.abs(read(f)[..., :3].astype(int) - shot.astype(int)).max(-1) > 8).sum() for f in pngs)
    assert shot.shape == (180, 320, 3) and best <= 0.005 * 320 * 180, best
    # the player held Right: x grew from 0 (a window key beats the idle script)
    said = "\n".join(report["game_said"])
    x = int(re.search(r"player at x (-?\d+)", said).group(1))
    assert x > 100, said
