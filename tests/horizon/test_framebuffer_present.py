"""Framebuffers queued through vi's binder relay reach the GPU process as presented frames (issue
30 part 6): the guest does libnx's framebuffer sequence as raw IPC (test_ipc_framebuffer's
FB_SETUP: a pitch-linear slot and a block-linear slot of 16-GOB blocks, the Tegra X1 layout),
draws a different pattern into each frame, waits on vi's vsync event and queues it; ``nxrecomp
run`` runs it beside the GPU process, which deswizzles the PRESENT_IMAGE packets and writes the
frames as PNG (``--frames-dir``).  Expected pixels are the guest's formulas, recomputed here.

- every frame 1..N comes out of the GPU process with the guest's pixels, in order;
- presents are paced by the display's 60 Hz ticks (frame times >= one period) and every vsync
  wait of the guest is answered;
- SIGKILLed GPU processes during play: the supervisor restarts them, the CPU host re-attaches and
  resubmits, and every frame still comes out with its pixels (as for NVN frames,
  test_horizon_nvn.py)."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gpu_host import png
from tests.horizon.hz_build import ROOT, bundle_from_c, nxrecomp
from tests.horizon.test_ipc_framebuffer import FB_SETUP

W, H = 64, 16

LOOP = r"""
int hz_main(void) {
    uint8_t *fb, *fb2;
    uint64_t disp;
    Handle ads;
    fb_setup(&fb, &fb2, &disp, &ads);
    Reply r;
    Msg m;
    Result rc;
    uint32_t w = 64, hgt = 16, pitch = 256;
    /* vi 5202 GetDisplayVsyncEvent(display) -> copy handle */
    m = (Msg){.type = 4};
    build(&m, 5202, &disp, 8, 0);
    rc = call(ads, &r, 0, 0);
    Handle vsync = r.copy[0];
    /* IHOSBinderDriver 2 GetNativeHandle(binder, 0x0F): the queue's "slot free" event, which
     * libnx's nwindowDequeueBuffer waits on (not cleared) before every DEQUEUE_BUFFER */
    struct { int32_t binder; uint32_t what; } nh = {binder_id, 0x0F};
    m = (Msg){.type = 4};
    build(&m, 2, &nh, sizeof nh, 0);
    call(relay, &r, 0, 0);
    Handle free_ev = r.copy[0];
    int waits_ok = 0, free_ok = 0;
    /* 60 s: bounds, not speed checks (a slot comes free once the GPU process presented, and the
     * tests kill that process while frames are queued: a restart takes seconds under load) */
    for (uint32_t k = 0; k < FRAMES; k++) {
        int32_t idx;
        if (svcWaitSynchronization(&idx, &vsync, 1, 60000000000LL) == 0 && svcResetSignal(vsync) == 0) waits_ok++;
        if (svcWaitSynchronization(&idx, &free_ev, 1, 60000000000LL) == 0) free_ok++;
        ptoken(); p32(0); p32(w); p32(hgt); p32(1); p32(0xB00);
        transact(3);
        int32_t slot = (int32_t)out32(0);
        for (uint32_t y = 0; y < hgt; y++)
            for (uint32_t x = 0; x < w; x++)
                for (uint32_t c = 0; c < 4; c++) {
                    uint8_t v = c == 0 ? (uint8_t)(x * 4 + k) : c == 1 ? (uint8_t)(y * 16 + 3 * k)
                              : c == 2 ? (uint8_t)(0x80 ^ k) : (uint8_t)(0xFF - slot);
                    if (slot == 0) fb[y * pitch + x * 4 + c] = v;
                    else fb2[bl_offset(x * 4 + c, y, pitch)] = v;
                }
        ptoken(); p32((uint32_t)slot); p32(0x54); p32(0);
        for (int i = 0; i < 0x54 / 4; i++) p32(i == 0x2C / 4 ? 1 : 0);     /* swap interval 1 */
        rc = transact(7);
        if (rc || (int32_t)out32(4)) hz_printf("frame %u: QUEUE_BUFFER %x status %d\n", k, rc, (int32_t)out32(4));
    }
    hz_printf("frames queued: %d, vsync waits answered: %d, slot-free waits answered: %d\n", FRAMES, waits_ok,
              free_ok);
    for (int i = 0; i < 2; i++) { ptoken(); p32(0); p32(w); p32(hgt); p32(1); p32(0xB00); transact(3); }
    int32_t idx;
    hz_printf("slot-free wait with every slot out: %x\n", svcWaitSynchronization(&idx, &free_ev, 1, 0));
    return 0;
}
"""


def expected(k: int) -> np.ndarray:
    """Frame k+1: the guest's pattern (slot k % 2: DEQUEUE hands the slots out in turn)."""
    y, x = np.mgrid[0:H, 0:W]
    return np.stack(
        [(x * 4 + k) & 0xFF, (y * 16 + 3 * k) & 0xFF, np.full_like(x, (0x80 ^ k) & 0xFF), np.full_like(x, 0xFF - k % 2)], -1
    ).astype(np.uint8)


def read_frame(path: Path) -> np.ndarray:
    w, h, rgba = png.decode(path.read_bytes())
    return np.asarray(rgba).reshape(h, w, 4)


def guest(frames: int) -> str:
    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    return src[: src.index("int hz_main(void)")] + FB_SETUP + f"#define FRAMES {frames}\n" + LOOP


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fbpresent")
    return tmp, {n: bundle_from_c(guest(n), {}, tmp / f"w{n}") for n in (8, 90)}


def cpu_lines(log: str) -> list[str]:
    return [line.split("| ", 1)[1] for line in log.splitlines() if line.startswith("cpu ")]


def test_queued_frames_presented_by_the_gpu_process(bundles) -> None:
    tmp, b = bundles
    run, frames = tmp / "run8", tmp / "frames8"
    times = tmp / "times8.txt"
    os.environ["NXRECOMP_CPU_HOST_FRAME_TIMES_FILE"] = str(times)
    try:
        r = nxrecomp("run", str(b[8]), "--run-dir", str(run), "--frames-dir", str(frames), timeout=240)
    finally:
        del os.environ["NXRECOMP_CPU_HOST_FRAME_TIMES_FILE"]
    log = (run / "run.log").read_text()
    assert r.returncode == 0, log[-3000:]
    lines = cpu_lines(log)
    assert "frames queued: 8, vsync waits answered: 8, slot-free waits answered: 8" in lines, log[-3000:]
    assert "slot-free wait with every slot out: ea01" in lines, log[-3000:]  # Timeout: cleared
    got = sorted(p.name for p in frames.glob("frame_*.png"))
    assert got == [f"frame_{f:06d}.png" for f in range(1, 9)], got
    for k in range(8):
        px = read_frame(frames / f"frame_{k + 1:06d}.png")
        bad = np.argwhere((px != expected(k)).any(-1))
        assert not len(bad), (
            f"frame {k + 1}: {len(bad)} pixels differ, first at (y, x) {tuple(bad[0])}: "
            f"{px[tuple(bad[0])]} != {expected(k)[tuple(bad[0])]}"
        )
    # paced by the display's ticks (swap interval 1): frames 2..8 are shown at 6 successive ticks
    # at least, 100 ms; a present waking late can only shorten the span by its own delay, so the
    # bound allows one period of that (a lower bound a loaded machine cannot break; unpaced, the
    # 64x16 frames follow each other within a few ms)
    gaps = [float(v) for v in times.read_text().split()]
    assert len(gaps) == 7 and sum(gaps[1:]) >= 5 * 1000 / 60, gaps


def test_gpu_process_killed_while_frames_are_queued(bundles) -> None:
    from nxrecomp.app.supervise_bundle import bundle_specs
    from nxrecomp.app.supervisor import Policy, Supervisor

    tmp, b = bundles
    run, frames = tmp / "runkill", tmp / "frameskill"
    run.mkdir()
    sup = Supervisor(bundle_specs(b[90], run, frames_dir=str(frames)), run / "run.log", Policy(max_crashes=1000))
    rc: list[int] = []
    th = threading.Thread(target=lambda: rc.append(sup.run()), daemon=True)
    th.start()
    # The kill moments come from a seeded generator, printed (shown with a failure's output):
    # NXRECOMP_TEST_SEED=<seed> replays the same schedule.
    seed = int(os.environ.get("NXRECOMP_TEST_SEED", "30"))
    print(f"GPU kill schedule seed {seed}")
    rng = random.Random(seed)
    kills = 0
    # a bound on the whole run (every restart may wait for a standby still starting: seconds each
    # on a loaded machine), not a speed check
    deadline = time.monotonic() + 400
    try:
        while not (frames / "frame_000001.png").exists() and time.monotonic() < deadline and th.is_alive():
            time.sleep(0.02)
        # (the first kill stays at a random moment here: a kill in the first frames once showed frame
        # 3 with frame 6's present slot (NXRECOMP_TEST_SEED=11, 12, 17 under xdist): a submit that
        # re-attached wrote its submission twice, the copy replayed after the slot was reused;
        # tests/gpu_host/test_gpu_resubmit.py checks it directly)
        for _ in range(4):
            time.sleep(rng.uniform(0.0, 0.2))
            shown = len(list(frames.glob("frame_*.png")))
            if not th.is_alive() or shown > 70:  # a kill while the run stops is no restart
                break
            pid = sup.pid("gpu")
            if pid:
                os.kill(pid, signal.SIGKILL)
                kills += 1
            while len(list(frames.glob("frame_*.png"))) <= shown and th.is_alive() and time.monotonic() < deadline:
                time.sleep(0.01)
        th.join(max(1.0, deadline - time.monotonic()))
    finally:
        if th.is_alive():
            sup.stop()
            th.join(30)
    log = (run / "run.log").read_text()
    assert rc == [0], f"seed {seed}: " + log[-3000:]
    assert kills >= 1
    assert "frames queued: 90, vsync waits answered: 90, slot-free waits answered: 90" in cpu_lines(log), log[-3000:]
    # A GPU process the supervisor killed itself (health checks unanswered on a loaded machine)
    # is a death the test did not cause: counted apart.
    sup_kills = log.count("gpu: failed ") + log.count("gpu: not healthy after")
    deaths = log.count("gpu: killed by SIGKILL; restarting")
    died = deaths - sup_kills
    assert 1 <= died <= kills and sup.restarts("gpu") == deaths, (
        f"seed {seed}: {kills} kills, {died} + {sup_kills} (supervisor) deaths"
    )
    assert 1 <= log.count("GPU process lost; reconnecting") <= kills + sup_kills, f"seed {seed}"
    for k in range(90):
        px = read_frame(frames / f"frame_{k + 1:06d}.png")
        assert (px == expected(k)).all(), f"frame {k + 1} differs after GPU restarts"
    print(f"{kills} SIGKILLs, {died} GPU process deaths, all 90 queued frames presented with their pixels")
