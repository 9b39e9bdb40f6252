"""The GPU process with a window, under a real X server (Xvfb): SDL3 built from Debian's source
(gpu_host/sdl3_build.py), a Vulkan surface from SDL, a swapchain on lavapipe.  The window's
pixels are read back by the X server's own tools (``xwd``) and compared with the frame; a key
typed into the window through XTEST (``xdotool``) arrives on the ``GpuInput.Events`` stream."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import grpc
import numpy as np
import pytest

from cpu_host.gpu_client.registry import TextureDesc
from gpu_guest import Gpu, P, Scene, rect_px, to8, ubo
from tests.xdisplay import parse_xwd, sdl3_or_skip, xvfb

W, H = 64, 48

for tool in ("Xvfb", "xwd", "xwininfo", "xdotool"):
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed (scripts/nx.sh installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def display():
    """A private Xvfb on a free display number (tests/xdisplay.py: the server picks it)."""
    with xvfb("320x240x24") as d:
        yield d


@pytest.fixture(scope="module")
def sdl_lib():
    return sdl3_or_skip()


@pytest.fixture(scope="module")
def wgpu(display, sdl_lib):
    title = f"nxwin{os.getpid()}"
    g = Gpu(
        {
            "DISPLAY": display,
            "NXRECOMP_GPU_HOST_WINDOW": "on",
            "NXRECOMP_GPU_HOST_WINDOW_SIZE": f"{W}x{H}",
            "NXRECOMP_GPU_HOST_WINDOW_TITLE": title,
        }
    )
    g.display, g.title = display, title
    yield g
    g.close()


def window_id(g) -> str:
    out = subprocess.run(["xwininfo", "-display", g.display, "-name", g.title], capture_output=True, text=True)
    m = re.search(r"Window id: (0x[0-9a-f]+)", out.stdout)
    assert m, f"no window named {g.title}: {out.stderr}"
    return m.group(1)


def capture(g) -> np.ndarray:
    r = subprocess.run(["xwd", "-display", g.display, "-id", window_id(g), "-silent"], capture_output=True)
    assert r.returncode == 0, r.stderr
    return parse_xwd(r.stdout)


def draw_frame(g, rects, bg) -> None:
    t = g.id()
    g.client.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(g.pool, 0)
    cmds = [(P.OP_TARGET, t), (P.OP_CLEAR, *bg), (P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]])]
    for x0, y0, x1, y1, col in rects:
        cmds += [
            (P.OP_VERTEX, *sc.put(rect_px(x0, y0, x1, y1, W, H).tobytes())),
            (P.OP_UNIFORM, 0, *sc.put(ubo(col))),
            (P.OP_DRAW, 6, 1, 0, 0),
        ]
    seq = g.client.submit(cmds + [(P.OP_PRESENT, next(g.frames), t)])
    g.client.wait(seq)
    assert g.client.dropped() == 0, g.log()[-2000:]


def test_window_shows_the_presented_frames(wgpu):
    for i, (bg, rects) in enumerate(
        [
            ((0.2, 0.4, 0.6, 1.0), [(4, 4, 20, 30, (1, 0, 0, 1))]),
            ((0.0, 0.0, 0.0, 1.0), [(30, 10, 64, 48, (0, 1, 0.5, 1)), (0, 40, 8, 48, (1, 1, 1, 1))]),
        ]
    ):
        draw_frame(wgpu, rects, bg)
        want = np.empty((H, W, 3), np.uint8)
        want[:] = to8(bg)[:3]
        for x0, y0, x1, y1, col in rects:
            want[y0:y1, x0:x1] = to8(col)[:3]
        deadline = time.monotonic() + 5  # the X server shows it a moment after the present
        while True:
            got = capture(wgpu)
            if np.array_equal(got, want) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert got.shape == want.shape
        assert np.array_equal(got, want), f"frame {i}: {(got != want).any(-1).sum()} pixels differ"


def test_keys_typed_into_the_window_reach_the_input_stream(wgpu):
    from proto import gpu_input_pb2, gpu_input_pb2_grpc
    from gpu_host.addresses import grpc_socket_path

    ch = grpc.insecure_channel(f"unix://{grpc_socket_path(Path(wgpu.dir))}")
    stream = gpu_input_pb2_grpc.GpuInputStub(ch).Events(gpu_input_pb2.EventsRequest(client="test"))
    events: list = []

    def read() -> None:
        try:
            for ev in stream:
                events.append(ev)
        except grpc.RpcError:
            pass

    threading.Thread(target=read, daemon=True).start()
    wid = window_id(wgpu)
    env = {**os.environ, "DISPLAY": wgpu.display}

    def xdotool(*args: str) -> None:
        r = subprocess.run(["xdotool", "windowfocus", "--sync", wid, *args], env=env, capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, r.stderr

    # Probe with a modifier until the stream is surely registered (it starts asynchronously).
    deadline = time.monotonic() + 15
    while not events and time.monotonic() < deadline:
        xdotool("key", "shift")
        time.sleep(0.2)
    assert events, "no input event arrived on the stream"
    first = len(events)
    xdotool("key", "a", "Return")
    K = gpu_input_pb2.InputEvent

    def typed() -> list:
        # the last shift probe's events may still come in (late on a loaded machine): what was
        # typed holds no shift, so shift keys are not part of it
        return [e for e in events[first:] if "shift" not in e.key.lower()]

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sum(e.kind == K.KEY_UP for e in typed()) < 2:
        time.sleep(0.05)
    stream.cancel()
    ch.close()
    events = typed()
    keys = [(e.kind, e.key) for e in events if e.kind in (K.KEY_DOWN, K.KEY_UP)]
    assert keys == [(K.KEY_DOWN, "A"), (K.KEY_UP, "A"), (K.KEY_DOWN, "Return"), (K.KEY_UP, "Return")], keys
    assert [e.scancode for e in events if e.kind == K.KEY_DOWN] == [4, 40]  # USB HID usages of A, Return
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_window_survives_a_gpu_process_restart(display, sdl_lib, tmp_path):
    """Under the supervisor, a SIGKILLed GPU process is replaced by its warm standby, which
    opens its own window when promoted: later frames appear in the (new) window."""
    import signal
    import tempfile

    from cpu_host.gpu_client.client import GpuClient
    from cpu_host.gpu_client.shaders import GlslSource
    from gpu_guest import COLOR_FS, COLOR_VS, BoxGame, frame_image
    from nxrecomp.app.supervise_bundle import gpu_spec
    from nxrecomp.app.supervisor import Policy, Supervisor

    run_dir = Path(tempfile.mkdtemp(prefix="nxw"))
    title = f"nxsup{os.getpid()}"
    spec = gpu_spec(run_dir)
    spec.env.update(
        {
            "DISPLAY": display,
            "NXRECOMP_GPU_HOST_WINDOW": "on",
            "NXRECOMP_GPU_HOST_WINDOW_TITLE": title,
            "NXRECOMP_GPU_HOST_WINDOW_SIZE": f"{BoxGame.W}x{BoxGame.H}",
        }
    )
    sup = Supervisor([spec], tmp_path / "run.log", Policy(max_crashes=10))
    th = threading.Thread(target=sup.run, daemon=True)
    th.start()
    client = GpuClient(run_dir, ring_capacity=1 << 20)
    try:
        client.connect(timeout=60)
        pool = client.create_pool(1, 1 << 20)
        client.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
        client.register(TextureDesc(7, 0, 0, BoxGame.W, BoxGame.H, "RGBA8", render_target=True))
        game = BoxGame()
        g = type("G", (), {"display": display, "title": title})
        for frame in range(1, 9):
            game.step()
            client.wait(client.submit(game.commands(pool, frame, 7)), timeout=60)
            if frame == 4:
                os.kill(sup.pid("gpu"), signal.SIGKILL)
        assert sup.restarts("gpu") == 1
        want = frame_image(client, 8)[..., :3]
        deadline = time.monotonic() + 10
        while True:
            try:
                got = capture(g)
            except AssertionError:  # the old window gone, the new one not yet there
                got = None
            if (got is not None and np.array_equal(got, want)) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert got is not None and np.array_equal(got, want)
    finally:
        client.close()
        sup.stop()
        th.join(30)
        shutil.rmtree(run_dir, ignore_errors=True)
