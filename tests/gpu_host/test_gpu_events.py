"""NVN events through the real client, ring and GPU process on lavapipe: EVENT_SIGNAL (the GPU
writes or adds a u32 in pool memory, in packet order with WRITEBACK, before fences publish) and
EVENT_WAIT (the GPU process runs what came before, polls the event until the CPU's write makes
the condition true, then draws the rest with the state current at the wait).

Expected values are plain arithmetic here (u32 wrap with Python's ints, signed differences with
ctypes' c_int32); expected pixels are numpy slices of rectangles whose edges lie on pixel
boundaries."""

from __future__ import annotations

import ctypes
import fcntl
import os
import time

import numpy as np
import pytest

from cpu_host.gpu_client.registry import TextureDesc
from gpu_guest import P, Gpu, Scene, frame_image, rect_px, replayed_frames, to8, ubo
from gpu_host import events
from gpu_host import fdpass
from proto import gpu_pb2

W, H = 32, 24
TIMEOUT_S = 2.0
EV = 7 << 20  # event words live here in pool 1; scenes below it
MARK = EV + 80  # a word the part before a wait signals: proof that it ran (its snapshot taken)
RED, GREEN, BLUE, BLACK = (1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1), (0, 0, 0, 1)
LAYOUT = (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]])


@pytest.fixture(scope="module")
def gpu():
    g = Gpu({"NXRECOMP_GPU_HOST_EVENT_WAIT_TIMEOUT_S": str(TIMEOUT_S)})
    yield g
    g.close()


def u32(gpu, off: int) -> int:
    return int.from_bytes(gpu.pool.mm[off : off + 4], "little")


def put32(gpu, off: int, v: int) -> None:
    gpu.pool.write(off, v.to_bytes(4, "little"))


def target(gpu, pool: int = 0, offset: int = 0) -> int:
    t = gpu.id()
    gpu.client.register(TextureDesc(t, pool, offset, W, H, "RGBA8", block_linear=False, pitch=W * 4, render_target=True))
    return t


def draw(sc: Scene, rect, color=None) -> list:
    out = [(P.OP_VERTEX, *sc.put(rect_px(*rect, W, H).tobytes()))]
    if color is not None:
        out.append((P.OP_UNIFORM, 0, *sc.put(ubo(color))))
    return out + [(P.OP_DRAW, 6, 1, 0, 0)]


def paint(bg, rects) -> np.ndarray:
    img = np.empty((H, W, 4), np.uint8)
    img[:] = to8(bg)
    for (x0, y0, x1, y1), col in rects:
        img[y0:y1, x0:x1] = to8(col)
    return img


def logged(gpu, text: str, timeout: float = 10.0) -> bool:
    """Whether the GPU process's log shows ``text`` (its log is written by a writer thread: a line
    may land a moment after the submission completed)."""
    deadline = time.monotonic() + timeout
    while text not in gpu.log():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def reached(gpu, value: int, timeout: float = 60.0) -> None:
    """Until the GPU process has signalled ``value`` into MARK: the part of a submission before
    its EVENT_WAIT has run, so the CPU's writes from now on are seen only by the part after it
    (a fixed pause here raced with a GPU process slowed by a loaded machine)."""
    deadline = time.monotonic() + timeout
    while u32(gpu, MARK) != value:
        assert time.monotonic() < deadline, f"the part before the wait never ran: {gpu.log()[-1500:]}"
        time.sleep(0.005)


def submit_ok(gpu, cmds, timeout=30.0) -> int:
    before = gpu.client.dropped()
    seq = gpu.client.submit(cmds)
    gpu.client.wait(seq, timeout)
    assert gpu.client.dropped() == before, gpu.log()[-1500:]
    return seq


def test_wrap_condition_is_the_signed_difference():
    for seen, want in [
        (0, 0),
        (5, 4),
        (4, 5),
        (0xFFFFFFF8, 4),
        (4, 0xFFFFFFF8),
        (0x7FFFFFFF, 0),
        (0x80000000, 0),
        (0, 0x80000001),
        (123, 0xFFFFFFFF),
    ]:
        assert events.satisfied(events.WAIT_GEQUAL_WRAP, seen, want) == (ctypes.c_int32(seen - want).value >= 0)
        assert events.satisfied(events.WAIT_EQUAL, seen, want) == (seen == want)


def test_signal_write_and_add_in_packet_order_with_writeback(gpu):
    base = 6 << 20  # the render target's bytes in pool 1
    gpu.pool.write(base, bytes([0xEE]) * (W * H * 4))
    t = target(gpu, 1, base)
    for off, v in ((EV, 0), (EV + 4, 3), (EV + 8, 0xFFFFFFF0)):
        put32(gpu, off, v)
    row1 = base + W * 4  # first texel of row 1
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0.0, 1.0, 0.0, 1.0),
        (P.OP_EVENT_SIGNAL, 1, base, 0, 0x11111111),  # before the WRITEBACK: overwritten by it
        (P.OP_EVENT_SIGNAL, 1, EV, 0, 7),
        (P.OP_EVENT_SIGNAL, 1, EV, 1, 5),
        (P.OP_WRITEBACK, t),
        (P.OP_EVENT_SIGNAL, 1, row1, 0, 0xCAFEBABE),  # after it: stays
        (P.OP_EVENT_SIGNAL, 1, EV + 4, 1, 0xFFFFFFFF),  # 3 + (2^32 - 1) wraps to 2
        (P.OP_EVENT_SIGNAL, 1, EV + 8, 1, 0x20),  # 0xFFFFFFF0 + 0x20 wraps to 0x10
        (P.OP_SIGNAL, 3, 77),
    ]
    submit_ok(gpu, cmds)
    assert gpu.client.fence(3) == 77
    assert (u32(gpu, EV), u32(gpu, EV + 4), u32(gpu, EV + 8)) == (12, 2, 0x10)
    green = bytes(to8(GREEN))
    assert bytes(gpu.pool.mm[base : base + 4]) == green
    assert u32(gpu, row1) == 0xCAFEBABE
    assert bytes(gpu.pool.mm[row1 + 4 : row1 + 8]) == green


def test_wait_released_by_a_cpu_write_carries_state_across_the_split(gpu):
    sc = Scene(gpu.pool, 0)
    t = target(gpu)
    put32(gpu, EV, 0)
    color = sc.put(ubo(RED))
    n = next(gpu.frames)
    # Everything the draw after the wait needs is set before it: target, program, layout, the
    # uniform binding and a scissor (x < 28).  Only its vertices come after the wait.
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, *BLACK),
        (P.OP_PROGRAM, 1),
        LAYOUT,
        (P.OP_UNIFORM, 0, *color),
        (P.OP_SCISSOR, 0, 0, 28, H),
        *draw(sc, (2, 2, 10, 10)),
        (P.OP_EVENT_SIGNAL, 1, MARK, 0, n),
        (P.OP_EVENT_WAIT, 1, EV, 0, 1),
        *draw(sc, (16, 12, W, 20)),
        (P.OP_SIGNAL, 4, 5),
        (P.OP_PRESENT, n, t),
    ]
    put32(gpu, MARK, 0)
    before = gpu.client.dropped()
    seq = gpu.client.submit(cmds)
    reached(gpu, n)
    time.sleep(0.1)  # the GPU process polls the event meanwhile
    assert gpu.client.completed() < seq  # it waits for the CPU
    gpu.pool.write(color[1], ubo(BLUE))  # the game writes the frame's data, then signals the event
    put32(gpu, EV, 1)
    gpu.client.wait(seq, 30)
    assert gpu.client.dropped() == before, gpu.log()[-1500:]
    assert gpu.client.fence(4) == 5
    # The draw before the wait ran with the uniform as it was then (red); the one after it reads
    # the uniform the CPU wrote before signalling (blue), clipped by the scissor set before.
    want = paint(BLACK, [((2, 2, 10, 10), RED), ((16, 12, 28, 20), BLUE)])
    np.testing.assert_array_equal(frame_image(gpu.client, n), want)


def test_gequal_wrap_waits_across_two_to_the_32(gpu):
    sc = Scene(gpu.pool, 1 << 20)
    t = target(gpu)
    put32(gpu, EV + 16, 0xFFFFFFF0)
    n = next(gpu.frames)
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, *BLACK),
        (P.OP_PROGRAM, 1),
        LAYOUT,
        (P.OP_EVENT_WAIT, 1, EV + 16, 1, 0xFFFFFFF8),
        *draw(sc, (4, 4, 12, 12), GREEN),
        (P.OP_PRESENT, n, t),
    ]
    before = gpu.client.dropped()
    seq = gpu.client.submit(cmds)
    time.sleep(0.2)
    assert gpu.client.completed() < seq  # 0xFFFFFFF0 is behind 0xFFFFFFF8
    put32(gpu, EV + 16, 0xFFFFFFF4)
    time.sleep(0.2)
    assert gpu.client.completed() < seq  # still behind
    put32(gpu, EV + 16, 4)  # past it, across the wrap
    gpu.client.wait(seq)
    assert gpu.client.dropped() == before, gpu.log()[-1500:]
    np.testing.assert_array_equal(frame_image(gpu.client, n), paint(BLACK, [((4, 4, 12, 12), GREEN)]))


def test_wait_that_times_out_drops_the_rest_and_serving_goes_on(gpu):
    sc = Scene(gpu.pool, 2 << 20)
    t = target(gpu)
    put32(gpu, EV + 32, 0)
    n1, n2, n3 = next(gpu.frames), next(gpu.frames), next(gpu.frames)
    cmds = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, *BLACK),
        (P.OP_PROGRAM, 1),
        LAYOUT,
        *draw(sc, (0, 0, 8, 8), RED),
        (P.OP_PRESENT, n1, t),
        (P.OP_SIGNAL, 5, 1),
        (P.OP_EVENT_WAIT, 1, EV + 32, 0, 99),
        *draw(sc, (8, 8, 16, 16), BLUE),
        (P.OP_PRESENT, n2, t),
        (P.OP_SIGNAL, 5, 2),
    ]
    t0 = time.monotonic()
    before = gpu.client.dropped()
    seq = gpu.client.submit(cmds)
    gpu.client.wait(seq)
    assert time.monotonic() - t0 >= TIMEOUT_S
    assert gpu.client.dropped() == before + 1  # the ring header counts the dropped rest
    assert logged(
        gpu,
        f"dropped the rest of submission {seq}: packet 9 EVENT_WAIT: event pool 1 offset "
        f"{EV + 32:#x} holds 0, waited {TIMEOUT_S:g} s for equal 99",
    ), gpu.log()[-1500:]
    assert gpu.client.fence(5) == 1  # the part before the wait completed
    np.testing.assert_array_equal(frame_image(gpu.client, n1), paint(BLACK, [((0, 0, 8, 8), RED)]))
    with pytest.raises(Exception):
        frame_image(gpu.client, n2)
    submit_ok(gpu, [(P.OP_TARGET, t), (P.OP_CLEAR, *GREEN), (P.OP_PRESENT, n3, t)])
    np.testing.assert_array_equal(frame_image(gpu.client, n3), paint(GREEN, []))


def readonly_pool(gpu, pid: int, size: int) -> None:
    """A pool whose memfd reaches the GPU process read-only (F_SEAL_WRITE): it maps it read-only."""
    fd = os.memfd_create("nx-ro", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_WRITE)
    c = gpu.client
    fdpass.send(c.sock, {"token": c.token, "kind": "pool", "id": pid}, [fd])
    c.stub.RegisterPool(gpu_pb2.PoolDesc(session=c.session, id=pid, size=size), timeout=5.0)
    os.close(fd)


@pytest.mark.parametrize(
    "pkt,why",
    [
        ((P.OP_EVENT_SIGNAL, 1, 8 << 20, 0, 1), "event bytes 0x800000+4 run past pool 1's end 0x800000"),
        ((P.OP_EVENT_WAIT, 1, (8 << 20) - 2, 0, 1), "field offset 0x7ffffe is not 4-byte aligned"),
        ((P.OP_EVENT_SIGNAL, 1, EV + 2, 1, 1), "field offset"),
        ((P.OP_EVENT_WAIT, 1, EV, 2, 1), "EVENT_WAIT: field mode = 2 is not in 0..1"),
        ((P.OP_EVENT_SIGNAL, 1, EV, 7, 1), "EVENT_SIGNAL: field mode = 7 is not in 0..1"),
        ((P.OP_EVENT_WAIT, 42, 0, 0, 1), "field pool 42 is not a registered pool"),
        ((P.OP_EVENT_SIGNAL, 9, 0, 0, 1), "pool 9 was mapped read-only"),
    ],
)
def test_hostile_event_packets_drop_the_submission(gpu, pkt, why):
    if pkt[1] == 9:
        readonly_pool(gpu, 9, 4096)
    t = target(gpu)
    put32(gpu, EV + 48, 5)
    before = gpu.client.dropped()
    seq_mark = 1000 + before
    seq = gpu.client.submit([(P.OP_TARGET, t), (P.OP_EVENT_SIGNAL, 1, EV + 48, 0, 6), pkt, (P.OP_SIGNAL, 6, seq_mark)])
    gpu.client.wait(seq)
    assert gpu.client.dropped() == before + 1
    assert logged(gpu, f"dropped submission {seq}: packet 2") and logged(gpu, why), gpu.log()[-1500:]
    assert u32(gpu, EV + 48) == 5  # nothing of a dropped submission ran
    assert gpu.client.fence(6) != seq_mark
    submit_ok(gpu, [(P.OP_TARGET, t), (P.OP_EVENT_SIGNAL, 1, EV + 48, 0, 6)])
    assert u32(gpu, EV + 48) == 6


def test_registrations_are_served_while_a_submission_waits(gpu):
    """The guest goes on after flushing a command buffer that waits: its registrations must not
    queue behind the wait (they would stall it until the wait timed out)."""
    t = target(gpu)
    put32(gpu, EV + 64, 0)
    put32(gpu, MARK, 0)
    seq = gpu.client.submit(
        [
            (P.OP_TARGET, t),
            (P.OP_EVENT_SIGNAL, 1, MARK, 0, 1),
            (P.OP_EVENT_WAIT, 1, EV + 64, 0, 1),
            (P.OP_EVENT_SIGNAL, 1, EV + 68, 0, 0xAB),
        ]
    )
    reached(gpu, 1)  # the GPU process is in the wait now
    t0 = time.monotonic()
    other = target(gpu)  # a gRPC registration while the GPU process polls
    took = time.monotonic() - t0
    assert gpu.client.completed() < seq  # still waiting
    put32(gpu, EV + 64, 1)
    gpu.client.wait(seq)
    assert took < TIMEOUT_S / 2, took
    assert u32(gpu, EV + 68) == 0xAB  # the part after the wait ran
    n = next(gpu.frames)
    submit_ok(gpu, [(P.OP_TARGET, other), (P.OP_CLEAR, *BLUE), (P.OP_PRESENT, n, other)])
    np.testing.assert_array_equal(frame_image(gpu.client, n), paint(BLUE, []))


def test_a_waiting_submission_records_and_replays_to_the_same_frame(tmp_path):
    """Recorded as its parts, each with the bytes it read: ``nxrecomp replay`` renders the frame
    the live run presented (the draw after the wait in the colour the CPU wrote during it)."""

    from cpu_host.gpu_client.client import GpuClient
    from cpu_host.gpu_client.shaders import GlslSource
    from gpu_guest import COLOR_FS, COLOR_VS, start_gpu, attach, stop_gpu

    rec = tmp_path / "run.nxgpu"
    proc, d = start_gpu(args=["--record", str(rec)])
    try:
        c = GpuClient(d, ring_capacity=1 << 20)
        attach(c, proc)
        pool = c.create_pool(1, 1 << 20)
        c.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
        c.register(TextureDesc(5, 0, 0, W, H, "RGBA8", render_target=True))
        sc = Scene(pool, 0)
        pool.write(0xF000, (0).to_bytes(4, "little"))
        color = sc.put(ubo(RED))
        cmds = [
            (P.OP_TARGET, 5),
            (P.OP_CLEAR, *BLACK),
            (P.OP_PROGRAM, 1),
            LAYOUT,
            (P.OP_UNIFORM, 0, *color),
            *draw(sc, (0, 0, 8, 8)),
            (P.OP_EVENT_SIGNAL, 1, 0xF004, 0, 1),  # the part before the wait ran (its snapshot: red)
            (P.OP_EVENT_WAIT, 1, 0xF000, 1, 1),
            *draw(sc, (8, 8, 24, 16)),
            (P.OP_PRESENT, 1, 5),
        ]
        pool.write(0xF004, (0).to_bytes(4, "little"))
        seq = c.submit(cmds)
        deadline = time.monotonic() + 60  # a fixed pause here raced with a slowed GPU process
        while int.from_bytes(pool.mm[0xF004:0xF008], "little") != 1:
            assert time.monotonic() < deadline, "the part before the wait never ran"
            time.sleep(0.005)
        pool.write(color[1], ubo(GREEN))
        pool.write(0xF000, (1).to_bytes(4, "little"))
        c.wait(seq)
        live = c.frame(1)
        img = np.frombuffer(live.rgba, np.uint8).reshape(H, W, 4)
        np.testing.assert_array_equal(img, paint(BLACK, [((0, 0, 8, 8), RED), ((8, 8, 24, 16), GREEN)]))
        c.close()
    finally:
        stop_gpu(proc)
    frames = replayed_frames(rec, tmp_path / "out", timeout=120)
    assert frames == [["1", live.sha256]], frames
