"""Pipelines made off the replay thread (gpu_host/pipelines.py: ``gpu_host.pipeline_threads``) and
the not-ready policy (``gpu_host.pipeline_not_ready``), on lavapipe, through in-process Engines.

- *wait* (the default): frames are the ones pipelines made in place give (SHA-256 equal to an
  Engine without workers), on both replay paths;
- *skip*: a draw whose pipeline a worker is still making is left out and counted; once made, the
  same frame is drawn as with *wait*.  The worker is held back (its ``_make`` waits for an event
  the test sets) so "not made yet" is certain, not a race.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from cpu_host.gpu_client.memory import Pool
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import COLOR_FS, COLOR_VS, rect_px, ubo
from gpu_host import packets as P
from gpu_host.engine import Engine
from gpu_host.objects import MappedPools
from gpu_host.vkdevice import Device

W = H = 64
VB, UB = 0, 4096
PROGRAMS = 6  # one fragment shader each: six pipelines for the workers at the first frame


def fragment(k: int) -> str:
    return COLOR_FS.replace("void main() {", f"const float K = {k + 1}.0 / {PROGRAMS}.0;\nvoid main() {{", 1).replace(
        "= c;", "= vec4(c.rg, K, 1.0);", 1
    )


def frame(n: int) -> list[tuple]:
    cmds = [(P.OP_TARGET, 7), (P.OP_CLEAR, 0, 0, 0, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]), (P.OP_VERTEX, 1, VB, 48)]
    for k in range(PROGRAMS):
        cmds += [(P.OP_PROGRAM, 1 + k), (P.OP_UNIFORM, 0, 1, UB + 256 * k, 48), (P.OP_DRAW, 6, 1, 0, 0)]
    return cmds + [(P.OP_PRESENT, n, 7)]


@pytest.fixture()
def engine(monkeypatch):
    made = []

    def make(threads: int, policy: str, native: str = "auto") -> Engine:
        monkeypatch.setenv("NXRECOMP_GPU_HOST_PIPELINE_THREADS", str(threads))
        monkeypatch.setenv("NXRECOMP_GPU_HOST_PIPELINE_NOT_READY", policy)
        monkeypatch.setenv("NXRECOMP_GPU_HOST_NATIVE_REPLAY", native)
        monkeypatch.setenv("NXRECOMP_GPU_HOST_PIPELINE_CACHE", "0")  # every run compiles
        pool = Pool(1, 1 << 16)
        pool.write(VB, rect_px(0, 0, 8, 8, W, H).tobytes())
        for k in range(PROGRAMS):
            pool.write(UB + 256 * k, ubo((1, k / PROGRAMS, 0, 1), (2 * k * 8 / W, 0)))
        mp = MappedPools()
        mp.add(1, pool.fd, pool.size)
        dev = Device()
        eng = Engine(dev, mp, keep_frames=8)
        for k in range(PROGRAMS):
            eng.register_program(1 + k, *GlslSource(COLOR_VS, fragment(k)).spirv())
        eng.register_texture(
            id=7,
            pool=0,
            offset=0,
            width=W,
            height=H,
            format="RGBA8",
            block_linear=False,
            block_height_log2=0,
            pitch=0,
            render_target=True,
        )
        made.append((eng, dev, pool))
        return eng

    yield make
    for eng, dev, pool in made:
        eng.close()
        dev.close()
        pool.close()


def image(eng: Engine) -> np.ndarray:
    f = eng.frames[-1]
    return np.frombuffer(f.rgba, np.uint8).reshape(f.height, f.width, 4)


@pytest.mark.parametrize("native", ["on", "off"])
def test_wait_policy_draws_as_pipelines_made_in_place(engine, native) -> None:
    ref = engine(0, "wait", native)
    ref.submit(1, frame(1))
    eng = engine(4, "wait", native)
    res = eng.submit(1, frame(1))
    assert res.draws == PROGRAMS and res.skipped == 0
    assert eng.replayer.pipes.workers is not None and eng.replayer.pipes.created == PROGRAMS
    assert eng.frames[-1].sha256 == ref.frames[-1].sha256
    # every program drew its square, each in its own colour
    img = image(eng)
    assert len({tuple(img[2, 8 * k + 2]) for k in range(PROGRAMS)}) == PROGRAMS


@pytest.mark.parametrize("native", ["on", "off"])
def test_skip_policy_leaves_out_draws_until_made(engine, native) -> None:
    eng = engine(2, "skip", native)
    pipes = eng.replayer.pipes
    go, real = threading.Event(), pipes._make
    pipes._make = lambda *a: (go.wait(30), real(*a))[1]  # the workers hold until the test lets them
    res = eng.submit(1, frame(1))
    assert res.draws == 0 and res.skipped == PROGRAMS and eng.skipped_draws == PROGRAMS
    assert (image(eng)[..., :3] == 0).all()  # nothing but the clear
    go.set()
    for fut in list(pipes.pending.values()):
        fut.result(timeout=60)
    res = eng.submit(2, frame(2))
    assert res.skipped == 0 and res.draws == PROGRAMS
    ref = engine(0, "wait", native)
    ref.submit(2, frame(2))
    assert eng.frames[-1].sha256 == ref.frames[-1].sha256


def test_policy_setting_is_checked(engine) -> None:
    with pytest.raises(ValueError, match="pipeline_not_ready = 'later' is not wait or skip"):
        engine(2, "later")
