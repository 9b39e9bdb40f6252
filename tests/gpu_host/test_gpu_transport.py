"""The client's transport: commands encoded once into array records (ring tag 3), written as parts,
read back and unpacked in C; checked against msgpack's own decoding, and through a real GPU
process for frames and for hostile array records."""

from __future__ import annotations

import os
import random
import time

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cpu_host.gpu_client.registry import TextureDesc
from cpu_host.gpu_client.ring_writer import RingWriter
from gpu_guest import P, Scene, frame_image, rect_px, to8, ubo
from gpu_host.ring_layout import MAX_PACKET, TAG_ARRAY, TAG_PACKET, init_ring, open_ring
from gpu_host.ring_reader import RingReader


def plain(objs) -> list:
    """Nested tuples/lists as lists (to compare with msgpack's default decoding)."""
    return [plain(o) if isinstance(o, (list, tuple)) else o for o in objs]


def test_submission_records_hold_begin_commands_end_in_order():
    rng = random.Random(3)
    cmds = [(P.OP_DRAW, rng.randrange(1 << 32), 1, rng.randrange(100), 0) for _ in range(9000)]
    head = [(P.OP_TARGET, 7), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0], [1, 5, 4]]), (P.OP_CLEAR, 0.25, 0, 1, 1)]
    enc = P.encode_commands(cmds)
    recs = P.submission_records(41, [*head, enc, (P.OP_PRESENT, 3, 7)])
    got = []
    for rec in recs:
        # msgpack's own decoder is the oracle: every record is exactly one array of packets.
        got += msgpack.unpackb(b"".join(rec))
    want = plain([(P.OP_BEGIN, 41), *head, *cmds, (P.OP_PRESENT, 3, 7), (P.OP_END, 41)])
    assert got == want
    objs, err = P.unpack_array_record(b"".join(recs[0]))
    assert err is None and type(objs) is tuple and type(objs[1]) is tuple
    # The same Encoded block submitted again is referenced, not re-encoded.
    again = P.submission_records(42, [enc])
    assert any(part is enc.chunks[0][0] for part in again[0])


def test_records_split_by_packet_count_and_bytes():
    many = [(P.OP_DRAW, 1, 1, 0, 0)] * (P.RECORD_PACKETS + 5000)
    wide = [(P.OP_DRAW, (1 << 64) - 1 - i, (1 << 64) - 1, (1 << 64) - 1, (1 << 64) - 1) for i in range(40000)]
    for cmds in (many, wide):
        recs = P.submission_records(1, [P.encode_commands(cmds)])
        assert len(recs) >= 2
        out = []
        for rec in recs:
            payload = b"".join(rec)
            assert len(payload) <= MAX_PACKET
            objs = msgpack.unpackb(payload, max_array_len=P.RECORD_PACKETS)
            assert len(objs) <= P.RECORD_PACKETS
            out += objs
        assert out == plain([(P.OP_BEGIN, 1), *cmds, (P.OP_END, 1)])


def test_writer_parts_and_reader_tags_roundtrip_across_wraps():
    fd = os.memfd_create("t-ring")
    bell = os.eventfd(0, os.EFD_NONBLOCK)
    w, r = RingWriter(init_ring(fd, 8192), bell), RingReader(open_ring(fd), bell)
    rng = random.Random(7)
    sent, got = [], []
    for _ in range(2000):
        parts = tuple(rng.randbytes(rng.randrange(0, 300)) for _ in range(rng.randrange(1, 5)))
        tag = rng.choice((TAG_PACKET, TAG_ARRAY))
        sent.append((tag, b"".join(parts)))
        w.write(parts if tag == TAG_ARRAY else b"".join(parts), wait=lambda: got.extend(r.records()), timeout=1.0, tag=tag)
        if rng.random() < 0.2:
            w.publish()
            got.extend(r.records())
    w.publish()
    got.extend(r.records())
    assert got == sent
    assert w.view.write.value > 50 * 8192


ARRAY_ERRORS = [
    (P.array_header(3) + P.encode(P.OP_BEGIN, 1) + P.encode(P.OP_DRAW, 6, 1, 0, 0), 2, "not a msgpack packet"),
    (P.array_header(2) + P.encode(P.OP_BEGIN, 1) + b"\xc1" + P.encode(P.OP_END, 1), 1, "not a msgpack packet"),
    (P.array_header(1) + P.encode(P.OP_BEGIN, 1) + b"\x00\x00", 1, "2 bytes after its 1 packets"),
    (b"\xc1", 0, "not a packet array record"),
    (b"", 0, "not a packet array record"),
    (msgpack.packb(5), 0, "not a packet array record"),
]


@pytest.mark.parametrize("record,n_ok,message", ARRAY_ERRORS, ids=[m + str(i) for i, (_, _, m) in enumerate(ARRAY_ERRORS)])
def test_unpack_array_record_errors_keep_what_came_before(record, n_ok, message):
    objs, err = P.unpack_array_record(record)
    assert len(objs) == n_ok
    assert isinstance(err, P.PacketError) and message in str(err)


# -- through a real GPU process -----------------------------------------------------------------
W, H = 32, 32


@pytest.fixture(scope="module")
def env(gpu):
    t = gpu.id()
    gpu.client.register(TextureDesc(t, 0, 0, W, H, "RGBA8", render_target=True))
    sc = Scene(gpu.pool, 5 << 20)
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


def expected() -> np.ndarray:
    want = np.empty((H, W, 4), np.uint8)
    want[:] = to8((0, 0, 1, 1))
    want[:16, :16] = to8((1, 0, 0, 1))
    return want


def present_and_check(gpu, t, items) -> None:
    n = 700000 + gpu.id()
    seq = gpu.client.submit([*items, (P.OP_PRESENT, n, t)])
    gpu.client.wait(seq, timeout=20)
    assert np.array_equal(frame_image(gpu.client, n), expected())


def submit_array(gpu, packets: list[bytes]) -> int:
    """One array record with BEGIN seq, ``packets`` as given (bytes), END seq."""
    c = gpu.client
    c.seq += 1
    body = [P.encode(P.OP_BEGIN, c.seq), *packets, P.encode(P.OP_END, c.seq)]
    rec = (P.array_header(len(body)), *body)
    c.pending[c.seq] = [rec]
    c.writer.write(rec, tag=TAG_ARRAY)
    c.writer.publish()
    return c.seq


def wait_log(gpu, message: str) -> None:
    deadline = time.monotonic() + 60  # a bound, not a speed check (a loaded machine is slow)
    while message not in gpu.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert message in gpu.log(), gpu.log()[-2000:]


def test_encoded_blocks_draw_the_same_frames(env):
    gpu, t, vb, ub = env
    enc = gpu.client.encode(good(t, vb, ub))
    for _ in range(2):  # a recorded command buffer submitted twice
        n = 710000 + gpu.id()
        seq = gpu.client.submit([enc, (P.OP_PRESENT, n, t)])
        gpu.client.wait(seq, timeout=20)
        assert np.array_equal(frame_image(gpu.client, n), expected())


def test_markers_inside_an_array_record_drop_the_submission(env):
    """In an array record BEGIN may only come first and END last; one anywhere else is not a
    boundary: its submission is dropped with a log line, and the process keeps serving."""
    gpu, t, vb, ub = env
    c = gpu.client
    g = [P.encode(*x) for x in good(t, vb, ub)]
    before = c.dropped()
    seq = submit_array(gpu, g[:3] + [P.encode(P.OP_BEGIN, 5)] + g[3:])
    c.wait(seq, timeout=20)
    wait_log(gpu, f"dropped submission {seq}: packet 3 BEGIN: nested submission marker")
    # Two submissions in one record: the first never sees its END as one, the second never begins.
    n = 720000 + gpu.id()
    a, b = c.seq + 1, c.seq + 2
    c.seq += 2
    body = [
        P.encode(P.OP_BEGIN, a),
        *g,
        P.encode(P.OP_END, a),
        P.encode(P.OP_BEGIN, b),
        *g,
        P.encode(P.OP_PRESENT, n, t),
        P.encode(P.OP_END, b),
    ]
    rec = (P.array_header(len(body)), *body)
    c.writer.write(rec, tag=TAG_ARRAY)
    c.writer.publish()
    c.wait(a, timeout=20)
    wait_log(gpu, f"dropped submission {a}: END {b} ends submission {a}")
    assert c.dropped() == before + 2
    present_and_check(gpu, t, good(t, vb, ub))


HOSTILE = [
    (lambda g: g[:3] + [b"\xc1"] + g[3:], "not a msgpack packet"),
    (lambda g: g[:3] + [msgpack.packb(5)] + g[3:], "packet 3: packet is int, not a non-empty array"),
    (lambda g: g[:3] + [msgpack.packb([1.0, 3])] + g[3:], "packet 3: unknown op 1.0"),
    (lambda g: g[:3] + [msgpack.packb([True, 3])] + g[3:], "packet 3: unknown op True"),
    (lambda g: g[:3] + [msgpack.packb([P.OP_DRAW, 6, 1, 0])] + g[3:], "packet 3: DRAW: has 3 fields, expected 4"),
    (
        lambda g: g[:3] + [msgpack.packb([P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2]]])] + g[4:],
        "packet 3: VERTEX_LAYOUT: field attrs[0] = (0, 2) is not [location, format, offset]",
    ),
    (lambda g: g[:3] + [msgpack.packb(list(range(40)))] + g[3:], "packet 3: unknown op 0"),
    (lambda g: g[:3] + [msgpack.packb([P.OP_BEGIN, -1])] + g[3:], "packet 3: BEGIN: field seq = -1 is out of range"),
]


@pytest.mark.parametrize("mutate,message", HOSTILE, ids=[m for _, m in HOSTILE])
def test_hostile_array_records_drop_the_submission(env, mutate, message):
    gpu, t, vb, ub = env
    before = gpu.client.dropped()
    seq = submit_array(gpu, mutate([P.encode(*x) for x in good(t, vb, ub)]))
    gpu.client.wait(seq, timeout=20)
    assert gpu.client.dropped() == before + 1
    wait_log(gpu, f"dropped submission {seq}: ")
    wait_log(gpu, message)
    present_and_check(gpu, t, good(t, vb, ub))


def test_truncated_array_record_drops_its_submission(env):
    gpu, t, vb, ub = env
    c = gpu.client
    before = c.dropped()
    c.seq += 1
    seq = c.seq
    body = [P.encode(P.OP_BEGIN, seq)] + [P.encode(*x) for x in good(t, vb, ub)]
    rec = (P.array_header(len(body) + 1), *body)  # claims its END, which never comes
    c.pending[seq] = [rec]
    c.writer.write(rec, tag=TAG_ARRAY)
    c.writer.publish()
    c.wait(seq, timeout=20)
    assert c.dropped() == before + 1
    wait_log(gpu, f"dropped submission {seq}: packet {len(body) - 1}: not a msgpack packet")
    present_and_check(gpu, t, good(t, vb, ub))


EDGE_VALUES = [
    0,
    1,
    2,
    3,
    4,
    5,
    63,
    64,
    (1 << 24),
    (1 << 24) + 1,
    (1 << 31) - 1,
    1 << 31,
    -(1 << 31),
    -(1 << 31) - 1,
    (1 << 32) - 1,
    1 << 32,
    (1 << 64) - 1,
    -1,
    0.0,
    1.5,
    -2.0,
    16384.0,
    16385.0,
    float("inf"),
    float("nan"),
    True,
    False,
    None,
    [0, 2, 0],
    [[0, 2, 0]],
]


VALID = {
    P.OP_BEGIN: (5,),
    P.OP_END: (5,),
    P.OP_TARGET: (7,),
    P.OP_CLEAR: (0.0, 0.5, 1.0, 1.0),
    P.OP_PROGRAM: (1,),
    P.OP_VERTEX_LAYOUT: (8, 0, [[0, 2, 0]]),
    P.OP_VERTEX: (1, 0, 48),
    P.OP_INDEX: (1, 0, 64, 2),
    P.OP_UNIFORM: (3, 1, 256, 64),
    P.OP_TEXTURE: (3, 9, 10),
    P.OP_VIEWPORT: (0.0, 0.0, 64.0, 32.0),
    P.OP_DRAW: (6, 1, 0, 0),
    P.OP_DRAW_INDEXED: (3, 1, 0, -5, 0),
    P.OP_SIGNAL: (63, 9),
    P.OP_PRESENT: (4, 7),
    P.OP_BLEND: (True,),
    P.OP_WRITEBACK: (7,),
    P.OP_DIRTY: (1, 8, 16),
    P.OP_POOLS: ((5,) * P.POOL_TEXTURES, (P.EMPTY,) * P.POOL_SAMPLERS),
    P.OP_DEPTH_TARGET: (7, P.EMPTY),
    P.OP_CLEAR_DEPTH_STENCIL: (1.0, 3, 3),
    P.OP_DEPTH_STENCIL: P.DS_DEFAULT[1:],
    P.OP_RASTER: (2, 1, 1, True),
    P.OP_DEPTH_BIAS: (1.0, -2.0, 0.0),
    P.OP_SCISSOR: (0, 5, 64, 16384),
    P.OP_BLEND_STATE: P.BLEND_OVER[1:],
    P.OP_BLEND_CONSTANT: (0.0, 0.5, 1.0, 1.0),
    P.OP_MULTISAMPLE: (4, False),
    P.OP_EVENT_SIGNAL: (1, 8, 1, 0xFFFFFFFF),
    P.OP_EVENT_WAIT: (1, 4, 1, 7),
    P.OP_RENDER_TARGETS: ((7, 8, P.EMPTY), 9),
    P.OP_CLEAR_TARGET: (3, 0.0, 0.5, 1.0, 1.0),
    P.OP_RESOLVE: (7, 8),
    P.OP_PRESENT_IMAGE: (1, 3, 0, 32, 16, 0, 128, 0, 0),
    P.OP_COMPUTE_BUFFER: (15, 1, 1 << 40, 4096, 0x160, True),  # gpu-compute: PROTOCOL.md "Compute"
    P.OP_COMPUTE_CONST: (0xFFFC, 7),
    P.OP_COMPUTE_SURFACE: (7, P.EMPTY),
    P.OP_DISPATCH: (9, 65535, 2, 3, 65536, 0xFFFF, P.EMPTY, 0, 0, 0),
    P.OP_VIEWPORT_INDEXED: (3, 16.0, 0.0, 16.0, 16.0),  # shader-tex
}


def agree(pkt) -> None:
    """``check`` takes a fast path for well-typed packets; whatever it returns, the field-by-field
    check must return too, and both must reject the same packets with the same message."""
    try:
        want = P.check_full(pkt)
    except P.PacketError as e:
        with pytest.raises(P.PacketError) as got:
            P.check(pkt)
        assert str(got.value) == str(e)
        return
    got = P.check(pkt)
    assert got == want and type(got) is tuple


def test_fast_check_agrees_with_the_full_check_on_every_edge():
    assert sorted(VALID) == sorted(P.OPS)
    for op, fields in VALID.items():
        for pkt in ((op, *fields), [op, *fields]):
            agree(pkt)
            assert plain(P.check(pkt)) == plain((op, *fields))
        for i in range(len(fields)):
            for v in EDGE_VALUES:
                agree((op, *fields[:i], v, *fields[i + 1 :]))
        agree((op, *fields, 0))
        agree((op, *fields[:-1]))
    for code in (1.0, True, -1, 99, None):
        agree((code, 5))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(P.OPS)), st.lists(st.sampled_from(EDGE_VALUES), max_size=6), st.booleans())
def test_fast_check_agrees_with_the_full_check(op, fields, as_tuple):
    agree((op, *fields) if as_tuple else [op, *fields])
