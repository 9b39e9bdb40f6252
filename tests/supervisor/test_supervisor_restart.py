"""The supervisor restarts a SIGKILLed GPU process; the client re-attaches, re-registers and
resubmits; the game's own state and every frame equal an uninterrupted run's."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "gpu_host"))

from cpu_host.gpu_client.client import GpuClient  # noqa: E402
from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from cpu_host.gpu_client.shaders import GlslSource  # noqa: E402
from gpu_guest import COLOR_FS, COLOR_VS, BoxGame  # noqa: E402
from nxrecomp.app.supervise_bundle import gpu_spec  # noqa: E402
from nxrecomp.app.supervisor import Policy, Supervisor  # noqa: E402


def play(frames: int, kills: int, seed: int) -> dict:
    run_dir = Path(tempfile.mkdtemp(prefix="nxs"))
    frames_dir = run_dir / "frames"
    spec = gpu_spec(run_dir, str(frames_dir))
    spec.env["NXRECOMP_NXRECOMP_LOG_LEVEL"] = "info"
    sup = Supervisor([spec], run_dir / "run.log", Policy(max_crashes=1000))
    th = threading.Thread(target=sup.run, daemon=True)
    th.start()
    client = GpuClient(run_dir, ring_capacity=1 << 20)
    client.connect(timeout=30)
    pool = client.create_pool(1, 1 << 20)
    client.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
    client.register(TextureDesc(7, 0, 0, BoxGame.W, BoxGame.H, "RGBA8", render_target=True))
    game = BoxGame()
    rng = random.Random(seed)
    kill_at = set(rng.sample(range(3, frames - 2), kills))
    checksums, resume, seqs = [], [], {}
    killed_at = None
    try:
        for frame in range(1, frames + 1):
            checksums.append(game.step())
            if frame - 2 in seqs:
                client.wait(seqs[frame - 2], timeout=60)  # at most two frames in flight
            seqs[frame] = client.submit(game.commands(pool, frame, 7))
            if killed_at is not None:
                client.wait(seqs[frame], timeout=60)  # the first frame after the kill
                resume.append(time.monotonic() - killed_at)
                killed_at = None
            if frame in kill_at:
                os.kill(sup.pid("gpu"), signal.SIGKILL)
                killed_at = time.monotonic()
        client.wait(seqs[frames], timeout=60)
        pngs = {p.name: p.read_bytes() for p in frames_dir.glob("frame_*.png")}
        restarts = sup.restarts("gpu")
    finally:
        client.close()
        sup.stop()
        th.join(30)
    log = (run_dir / "run.log").read_text()
    shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "checksums": checksums,
        "pngs": pngs,
        "resume": resume,
        "restarts": restarts,
        "reconnects": client.reconnects,
        "log": log,
    }


def test_kill_gpu_process_many_times():
    frames, kills = 40, 6
    calm = play(frames, 0, 1)
    hurt = play(frames, kills, 1)
    assert hurt["restarts"] == kills and hurt["reconnects"] == kills
    assert hurt["checksums"] == calm["checksums"]
    assert len(calm["pngs"]) == frames
    assert hurt["pngs"] == calm["pngs"]  # every frame, re-rendered after restarts, is identical
    # how fast frames resume is a benchmark figure (bench/, docs/PERFORMANCE.md), not a test
    print("resume times", sorted(round(r, 3) for r in hurt["resume"]))
    assert "killed by SIGKILL; restarting in 0s" in hurt["log"]
    assert "gpu      | " in hurt["log"] and "gpu gpu_host.server: attached" in hurt["log"]  # gathered, named
    assert hurt["log"].count("promoted") >= 1  # warm spares took over


@pytest.mark.heavy
def test_kill_gpu_process_thirty_times():
    frames, kills = 150, 30
    calm = play(frames, 0, 2)
    hurt = play(frames, kills, 2)
    assert hurt["restarts"] == kills
    assert hurt["checksums"] == calm["checksums"] and hurt["pngs"] == calm["pngs"]
    # Kills every few frames outrun the standby's start-up (~0.5 s), so some restarts are cold.
    print("resume times", sorted(round(r, 3) for r in hurt["resume"]))
