"""Hostile input: every bad packet, handle, range or descriptor is rejected with a log line that
names it, the submission is dropped, and the GPU process keeps serving correct frames."""

from __future__ import annotations

import os
import socket
import time

import msgpack
import numpy as np
import pytest

from cpu_host.gpu_client.registry import ProgramDesc, SamplerDesc, TextureDesc
from gpu_guest import P, Scene, frame_image, rect_px, to8, ubo
from gpu_host import fdpass
from gpu_host.addresses import fd_socket_path
from nxrecomp.common.errors import NxError
from proto import gpu_pb2

W, H = 32, 32


@pytest.fixture(scope="module")
def env(gpu):
    t = gpu.id()
    gpu.client.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 4 << 20)
    vb = sc.put(rect_px(0, 0, 16, 16, W, H).tobytes())
    ub = sc.put(ubo((1, 0, 0, 1)))
    return gpu, t, vb, ub


def good(t, vb, ub):
    return [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 1, 1),
        (P.OP_PROGRAM, 1),
        (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]),
        (P.OP_VERTEX, *vb),
        (P.OP_UNIFORM, 0, *ub),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]


def check_still_serving(gpu, t, vb, ub):
    n = 900000 + gpu.id()
    seq = gpu.client.submit(good(t, vb, ub) + [(P.OP_PRESENT, n, t)])
    gpu.client.wait(seq, timeout=20)
    img = frame_image(gpu.client, n)
    want = np.empty((H, W, 4), np.uint8)
    want[:] = to8((0, 0, 1, 1))
    want[:16, :16] = to8((1, 0, 0, 1))
    assert np.array_equal(img, want)


def submit_raw(gpu, payloads: list[bytes]) -> int:
    """Write packets as given (bypassing the client's encoder) inside BEGIN/END."""
    c = gpu.client
    c.seq += 1
    c.pending[c.seq] = [P.encode(P.OP_BEGIN, c.seq), *payloads, P.encode(P.OP_END, c.seq)]
    for p in c.pending[c.seq]:
        c.writer.write(p)
    c.writer.publish()
    return c.seq


def expect_dropped(gpu, seq: int, message: str, before: int) -> None:
    gpu.client.wait(seq, timeout=20)
    assert gpu.client.dropped() == before + 1
    deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
    while message not in gpu.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert message in gpu.log(), gpu.log()[-2000:]


BAD_PACKETS = [
    (b"\xc1\x00", "not a msgpack packet"),
    (P.encode(P.OP_VERTEX, 1, 0, 64)[:-2], "not a msgpack packet"),  # truncated
    (msgpack.packb({"op": 1}), "not a msgpack packet"),
    (msgpack.packb(5), "packet is int, not a non-empty array"),
    (msgpack.packb([250, 1]), "unknown op 250"),
    (P.encode(P.OP_DRAW, 6, 1, 0), "DRAW: has 3 fields, expected 4"),
    (P.encode(P.OP_DRAW, -6, 1, 0, 0), "DRAW: field vertex_count = -6 is out of range"),
    (P.encode(P.OP_DRAW, 1 << 30, 1, 0, 0), "DRAW: counts 1073741824x1 exceed"),
    (P.encode(P.OP_UNIFORM, 7, 1, 0, 16), "UNIFORM: field slot = 7"),
    (P.encode(P.OP_VERTEX_LAYOUT, 8, 9, [[0, 2, 0]]), "VERTEX_LAYOUT: field topology = 9"),
    (P.encode(P.OP_VERTEX_LAYOUT, 8, 0, [[0, 99, 0]]), "VERTEX_LAYOUT: field attrs[0] has unknown vertex format 99"),
    (P.encode(P.OP_CLEAR, 0, None, 0, 1), "CLEAR: field g = None is not a finite number"),
    (P.encode(P.OP_POOLS, [0] * 15, [0] * 4), "POOLS: field textures = [0, 0"),
    (P.encode(P.OP_POOLS, [0] * 16, [0] * 5), "POOLS: field samplers = [0, 0, 0, 0, 0] is not a list of 4 ids"),
    (P.encode(P.OP_POOLS, [0] * 16, [0, 0, 1.5, 0]), "POOLS: field samplers[2] = 1.5 is not a u32 id"),
    (P.encode(P.OP_POOLS, [0] * 16), "POOLS: has 1 fields, expected 2"),
]


@pytest.mark.parametrize("payload,message", BAD_PACKETS, ids=[m for _, m in BAD_PACKETS])
def test_malformed_packets(env, payload, message):
    gpu, t, vb, ub = env
    cmds = [P.encode(*c) for c in good(t, vb, ub)]
    before = gpu.client.dropped()
    seq = submit_raw(gpu, cmds[:3] + [payload] + cmds[3:])
    expect_dropped(gpu, seq, f"dropped submission {seq}: packet 3: {message}", before)
    check_still_serving(gpu, t, vb, ub)


def semantic_cases(t, vb, ub, pool_size):
    g = good(t, vb, ub)
    return [
        ([(P.OP_TARGET, 4242)] + g[1:], "packet 0 TARGET: field texture 4242 is not a registered texture"),
        (g[:2] + [(P.OP_PROGRAM, 77)] + g[3:], "packet 2 PROGRAM: field program 77 is not a registered program"),
        (g[:4] + [(P.OP_VERTEX, 9, 0, 48)] + g[5:], "packet 4 VERTEX: field pool 9 is not a registered pool"),
        (
            g[:4] + [(P.OP_VERTEX, 1, pool_size - 16, 48)] + g[5:],
            f"packet 4 VERTEX: range {pool_size - 16:#x}+0x30 is empty or runs past pool 1's end {pool_size:#x}",
        ),
        (
            g[:5] + [(P.OP_UNIFORM, 0, 1, pool_size, 16)] + g[6:],
            f"packet 5 UNIFORM: range {pool_size:#x}+0x10 is empty or runs past pool 1's end",
        ),
        (g[:6] + [(P.OP_DRAW, 7, 1, 0, 0)], "packet 6 DRAW: vertices 0..6 run past the 48-byte vertex buffer (stride 8)"),
        (g[:6] + [(P.OP_DRAW_INDEXED, 3, 1, 0, 0, 0)], "packet 6 DRAW_INDEXED: no index buffer set"),
        (g[:6] + [(P.OP_TEXTURE, 0, t, 12345)] + g[6:], "packet 6 TEXTURE: field sampler 12345 is not a registered sampler"),
        (g[:1] + [(P.OP_SIGNAL, 64, 1)], "packet 1 SIGNAL: field fence 64 is not below 64"),
        (
            g[:6] + [(P.OP_POOLS, [P.EMPTY] * 3 + [4243] + [P.EMPTY] * 12, [P.EMPTY] * 4)] + g[6:],
            "packet 6 POOLS: field textures[3] = 4243 is not a registered texture",
        ),
        (
            g[:6] + [(P.OP_POOLS, [P.EMPTY] * 16, [P.EMPTY, 12346, P.EMPTY, P.EMPTY])] + g[6:],
            "packet 6 POOLS: field samplers[1] = 12346 is not a registered sampler",
        ),
        ([(P.OP_CLEAR, 1, 1, 1, 1)], "packet 0 CLEAR: no render target set"),
        (g[:2] + [(P.OP_DRAW, 3, 1, 0, 0)], "packet 2 DRAW: no program set"),
    ]


def test_bad_handles_and_ranges(env):
    gpu, t, vb, ub = env
    for cmds, message in semantic_cases(t, vb, ub, gpu.pool.size):
        before = gpu.client.dropped()
        seq = gpu.client.submit(cmds)
        expect_dropped(gpu, seq, f"dropped submission {seq}: {message}", before)
    check_still_serving(gpu, t, vb, ub)


def test_indices_out_of_range_checked_on_snapshot(env):
    gpu, t, vb, ub = env
    sc = Scene(gpu.pool, 5 << 20)
    ib = sc.put(np.array([0, 1, 1000], np.uint16).tobytes())
    before = gpu.client.dropped()
    seq = gpu.client.submit(good(t, vb, ub)[:6] + [(P.OP_INDEX, *ib, 2), (P.OP_DRAW_INDEXED, 3, 1, 0, 0, 0)])
    expect_dropped(gpu, seq, "vertex indices 0..1000 run outside the 48-byte vertex buffer", before)
    check_still_serving(gpu, t, vb, ub)


def test_sampling_the_current_target(env):
    gpu, t, vb, ub = env
    smp = gpu.id()
    gpu.client.register(SamplerDesc(smp))
    before = gpu.client.dropped()
    seq = gpu.client.submit(good(t, vb, ub)[:6] + [(P.OP_TEXTURE, 0, t, smp), (P.OP_DRAW, 6, 1, 0, 0)])
    expect_dropped(gpu, seq, f"texture {t} in slot 0 is the current render target", before)


def test_bad_descriptors_rejected_by_name(env):
    gpu, t, vb, ub = env
    c = gpu.client
    with pytest.raises(NxError, match="run past pool 1's end"):
        c.register(TextureDesc(gpu.id(), 1, c.registry.pools[1].size - 100, 64, 64, "RGBA8"))
    with pytest.raises(NxError, match="format 'ASTC99' is not one of"):
        c.register(TextureDesc(gpu.id(), 1, 0, 4, 4, "ASTC99"))
    with pytest.raises(NxError, match="pool 5 is not a registered pool"):
        c.register(TextureDesc(gpu.id(), 5, 0, 4, 4, "RGBA8"))
    with pytest.raises(NxError, match="size 0x4 is not in"):
        c.register(TextureDesc(gpu.id(), 1, 0, 0, 4, "RGBA8"))
    with pytest.raises(NxError, match="field gob 'kepler' is not one of fermi, turing"):
        c.register(TextureDesc(gpu.id(), 1, 0, 4, 4, "RGBA8", gob="kepler"))
    with pytest.raises(NxError, match="not a SPIR-V module|bad SPIR-V magic"):
        c.register(ProgramDesc(gpu.id(), b"\x01\x02\x03\x04" * 8, b"junk"))
    v, f = c.registry.objects[("ProgramDesc", 1)].vertex_spirv, c.registry.objects[("ProgramDesc", 1)].fragment_spirv
    with pytest.raises(NxError, match="expected vertex"):
        c.register(ProgramDesc(gpu.id(), f, v))  # stages swapped
    broken = bytearray(v)
    broken[40:44] = b"\xff\xff\x00\x00"  # an impossible word count
    with pytest.raises(NxError, match="program .* vertex"):
        c.register(ProgramDesc(gpu.id(), bytes(broken), f))
    check_still_serving(gpu, t, vb, ub)


def test_unsealed_or_short_pool_fd_rejected(env):
    gpu, t, vb, ub = env
    c = gpu.client
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(fd_socket_path(gpu.dir))
    fd = os.memfd_create("unsealed")
    os.ftruncate(fd, 4096)
    fdpass.send(s, {"token": c.token, "kind": "pool", "id": 55}, [fd])
    with pytest.raises(Exception, match="lacks F_SEAL_SHRINK"):
        c.stub.RegisterPool(gpu_pb2.PoolDesc(session=c.session, id=55, size=4096), timeout=60)
    fdpass.send(s, {"token": c.token, "kind": "weird", "id": 1}, [fd])  # unknown label kind
    with pytest.raises(Exception, match="no memfd arrived"):
        c.stub.RegisterPool(gpu_pb2.PoolDesc(session=c.session, id=56, size=4096), timeout=60)
    s.send(b"garbage label")  # label not msgpack map
    with pytest.raises(Exception, match="not attached"):
        c.stub.RegisterTexture(gpu_pb2.TextureDesc(session=12345, id=1), timeout=60)
    s.close()
    os.close(fd)
    check_still_serving(gpu, t, vb, ub)


def test_corrupt_ring_detaches_and_client_recovers(env):
    gpu, t, vb, ub = env
    c = gpu.client
    sid = c.session
    seq = submit_raw(gpu, [P.encode(*x) for x in good(t, vb, ub)])
    c.wait(seq)
    # Scribble over the next record's header as a buggy producer would, then publish it.
    from gpu_host.ring_layout import HEADER_SIZE, REC_HDR

    c.writer.write(b"\x91\x01")
    off = (c.writer.wpos - 16) % c.writer.cap
    REC_HDR.pack_into(c.view.mm, HEADER_SIZE + off, 1 << 30, 1)
    c.writer.publish()
    deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
    while "session detached" not in gpu.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "runs past the ring; session detached" in gpu.log()
    c.pending.clear()
    check_still_serving(gpu, t, vb, ub)  # the client noticed, re-attached and re-registered
    assert c.session != sid


def test_dropped_submission_does_not_poison_the_texture_cache(env):
    """A submission dropped at replay time (bad index values found on the snapshot) after it
    staged a texture upload must not leave that texture marked as uploaded."""
    gpu, t, vb, ub = env
    from gpu_guest import rect_uv_px

    rng = np.random.default_rng(9)
    texels = rng.integers(0, 256, (4, 4, 4), dtype=np.uint8)
    sc = Scene(gpu.pool, 6 << 20)
    tr = sc.put(texels.tobytes())
    tex, smp = gpu.id(), gpu.id()
    gpu.client.register(TextureDesc(tex, 1, tr[1], 4, 4, "RGBA8", block_linear=False, pitch=16))
    gpu.client.register(SamplerDesc(smp))
    quad = sc.put(rect_uv_px(0, 0, 4, 4, W, H).tobytes())
    draw = [
        (P.OP_TARGET, t),
        (P.OP_CLEAR, 0, 0, 0, 0),
        (P.OP_PROGRAM, 2),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, *quad),
        (P.OP_TEXTURE, 0, tex, smp),
        (P.OP_DRAW, 6, 1, 0, 0),
    ]
    bad_idx = sc.put(np.array([0, 1, 500], np.uint16).tobytes())
    before = gpu.client.dropped()
    seq = gpu.client.submit(draw + [(P.OP_INDEX, *bad_idx, 2), (P.OP_DRAW_INDEXED, 3, 1, 0, 0, 0)])
    expect_dropped(gpu, seq, "vertex indices 0..500 run outside", before)
    n = 800000 + gpu.id()
    gpu.client.wait(gpu.client.submit(draw + [(P.OP_PRESENT, n, t)]))
    assert np.array_equal(frame_image(gpu.client, n)[:4, :4], texels)
