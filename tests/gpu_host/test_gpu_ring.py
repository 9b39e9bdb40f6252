"""The command ring, the packet format and fd passing, on real memfds/eventfds/UNIX sockets."""

from __future__ import annotations

import hashlib
import os
import random
import socket
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st

from cpu_host.gpu_client.memory import Pool
from cpu_host.gpu_client.ring_writer import RingFull, RingWriter
from gpu_host import fdpass
from gpu_host import packets as P
from gpu_host.ring_layout import HEADER_SIZE, REC_HDR, RingFormatError, init_ring, open_ring
from gpu_host.ring_reader import RingReader


def make_ring(cap: int):
    fd = os.memfd_create("t-ring")
    bell = os.eventfd(0, os.EFD_NONBLOCK)
    w = RingWriter(init_ring(fd, cap), bell)
    r = RingReader(open_ring(fd), bell)
    return fd, bell, w, r


def test_roundtrip_in_order_across_many_wraps():
    fd, bell, w, r = make_ring(4096)
    rng = random.Random(1)
    sent, got = [], []
    for _ in range(3000):
        p = rng.randbytes(rng.randrange(0, 900))
        sent.append(p)
        w.write(p, wait=lambda: got.extend(r.drain()), timeout=1.0)
        if rng.random() < 0.3:
            w.publish()
            got.extend(r.drain())
    w.publish()
    got.extend(r.drain())
    assert got == sent
    assert w.view.write.value > 100 * 4096  # really wrapped many times


def test_full_ring_times_out_instead_of_overwriting():
    fd, bell, w, r = make_ring(1024)
    for _ in range(7):
        w.write(b"x" * 120)
    with pytest.raises(RingFull):
        w.write(b"y" * 200, timeout=0.05)
    w.publish()
    assert r.drain() == [b"x" * 120] * 7


def test_reader_rejects_corrupt_records():
    fd, bell, w, r = make_ring(4096)
    w.write(b"hello")
    w.publish()
    REC_HDR.pack_into(w.view.mm, HEADER_SIZE, 1 << 24, 1)  # length past the ring
    with pytest.raises(RingFormatError, match="runs past the ring"):
        r.drain()
    REC_HDR.pack_into(w.view.mm, HEADER_SIZE, 5, 77)  # unknown tag
    with pytest.raises(RingFormatError, match="unknown tag 77"):
        r.drain()
    w.view.write.value = 10**9  # write far beyond read + capacity
    with pytest.raises(RingFormatError, match="inconsistent"):
        r.drain()


def test_open_ring_checks_header():
    fd = os.memfd_create("t-bad")
    os.ftruncate(fd, HEADER_SIZE + 64)
    with pytest.raises(RingFormatError, match="magic"):
        open_ring(fd)


CHILD = textwrap.dedent("""
    import hashlib, mmap, os, socket, sys
    from gpu_host import fdpass
    from gpu_host.ring_layout import open_ring
    from gpu_host.ring_reader import RingReader
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    label, fds = fdpass.recv(s)
    ring_fd, bell, pool_fd = fds
    r = RingReader(open_ring(ring_fd), bell)
    h = hashlib.sha256()
    n = 0
    while n < label["count"]:
        r.wait(1.0)
        for p in r.drain():
            h.update(p); n += 1
    pool = mmap.mmap(pool_fd, label["pool_size"], mmap.MAP_SHARED, mmap.PROT_READ)
    print(h.hexdigest(), hashlib.sha256(pool[:]).hexdigest(), n)
""")


def test_ring_and_pool_shared_with_another_process(tmp_path):
    path = str(tmp_path / "s")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(path)
    ls.listen(1)
    child = subprocess.Popen([sys.executable, "-c", CHILD, path], stdout=subprocess.PIPE, text=True)
    conn, _ = ls.accept()
    ring_fd = os.memfd_create("t-ring")
    bell = os.eventfd(0, os.EFD_NONBLOCK)
    w = RingWriter(init_ring(ring_fd, 1 << 16), bell)
    pool = Pool(3, 1 << 20)
    pool.write(12345, b"pool bytes seen by both")
    packets = [P.encode(P.OP_DRAW, i, 1, 0, 0) for i in range(20000)]
    fdpass.send(conn, {"count": len(packets), "pool_size": pool.size}, [ring_fd, bell, pool.fd])
    for p in packets:
        w.write(p, timeout=10)
        if len(p) and random.random() < 0.01:
            w.publish()
    w.publish()
    out, _ = child.communicate(timeout=60)
    ring_hash, pool_hash, n = out.split()
    assert int(n) == len(packets)
    assert ring_hash == hashlib.sha256(b"".join(packets)).hexdigest()
    assert pool_hash == hashlib.sha256(pool.mm[:]).hexdigest()


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64))
def test_decode_never_raises_anything_but_packet_error(data):
    try:
        P.decode(data)
    except P.PacketError:
        pass


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(-(2**63), 2**64 - 1),
            st.floats(allow_nan=True),
            st.booleans(),
            st.none(),
            st.text(max_size=3),
            st.lists(st.integers(-5, 70000), max_size=4),
        ),
        max_size=8,
    )
)
def test_decode_structured_garbage(fields):
    import msgpack

    for op in list(P.OPS)[:16]:
        try:
            P.decode(msgpack.packb([op, *fields]))
        except P.PacketError:
            pass


def test_decode_names_op_and_field():
    with pytest.raises(P.PacketError, match=r"UNIFORM: field slot = 9 is not below 4"):
        P.decode(P.encode(P.OP_UNIFORM, 9, 1, 0, 16))
    with pytest.raises(P.PacketError, match=r"CLEAR: field g = nan is not a finite number"):
        P.decode(P.encode(P.OP_CLEAR, 0.0, float("nan"), 0.0, 1.0))
    with pytest.raises(P.PacketError, match=r"INDEX: field index_size = 3"):
        P.decode(P.encode(P.OP_INDEX, 1, 0, 64, 3))


def test_fd_label_must_be_a_map():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fd = os.memfd_create("x")
    socket.send_fds(a, [b"\x93\x01\x02\x03"], [fd])
    with pytest.raises(ValueError, match="not a msgpack map"):
        fdpass.recv(b)
