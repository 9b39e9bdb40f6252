"""Packets per second through the shared-memory command ring, writer here and reader in another
process (real memfd + eventfd passed with SCM_RIGHTS), against unary gRPC calls on a UNIX
socket carrying the same packets (what per-draw RPCs would cost).  Prints both and the ratio.

    .venv/bin/python bench/gpu_ring.py [--packets 500000]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent import futures

import grpc

from cpu_host.gpu_client.ring_writer import RingWriter
from gpu_host import fdpass
from gpu_host import packets as P
from gpu_host.ring_layout import TAG_ARRAY, init_ring

READER = textwrap.dedent("""
    import socket, sys, time
    from gpu_host import fdpass
    from gpu_host.ring_layout import open_ring
    from gpu_host.ring_reader import RingReader
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1])
    label, (ring_fd, bell) = fdpass.recv(s)
    r = RingReader(open_ring(ring_fd), bell)
    n = 0; nbytes = 0
    from gpu_host.packets import unpack_array_record, unpack_record
    from gpu_host.server import gc_paused
    while n < label["count"]:
        r.wait(1.0)
        with gc_paused():
            for tag, rec in r.records(1 << 16):
                if tag == 3:
                    objs, err = unpack_array_record(rec)
                    n += len(objs) - 2; nbytes += len(rec)      # less BEGIN and END
                elif label["batched"]:
                    objs, err = unpack_record(rec)
                    n += len(objs); nbytes += len(rec)
                else:
                    n += 1; nbytes += len(rec)
    s.send(str(nbytes).encode())
""")


def ring_rate(packets: list[bytes], batch: int, commands: list | None = None, path: str = "") -> float:
    """Packets/s from the writer's first byte to the reader's last packet.  With ``commands``:
    ``path="records"``, packets back to back (encode_records, 4096 per record) unpacked one by
    one; ``"submit"``, the client's path: submissions of ``batch`` commands as array records
    (encoded at the submit), ``"encoded"`` the same encoded beforehand (at record time, not
    timed), the reader unpacking each record in one call."""
    d = tempfile.mkdtemp(prefix="nxb")
    path = os.path.join(d, "s")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(path)
    ls.listen(1)
    child = subprocess.Popen([sys.executable, "-c", READER, path])
    conn, _ = ls.accept()
    fd = os.memfd_create("bench-ring")
    bell = os.eventfd(0, os.EFD_NONBLOCK)
    w = RingWriter(init_ring(fd, 8 << 20), bell)
    fdpass.send(conn, {"count": len(packets), "batched": commands is not None}, [fd, bell])
    groups = [commands[i : i + batch] for i in range(0, len(commands), batch)] if commands else []
    if path == "encoded":
        groups = [P.encode_commands(g) for g in groups]
    t = time.perf_counter()
    if path in ("submit", "encoded"):
        for seq, g in enumerate(groups, 1):
            for rec in P.submission_records(seq, g if path == "submit" else [g]):
                w.write(rec, timeout=30, tag=TAG_ARRAY)
            w.publish()
    elif commands is None:
        for i, p in enumerate(packets):
            w.write(p, timeout=30)
            if i % batch == batch - 1:
                w.publish()
    else:
        for i in range(0, len(commands), batch):
            for rec in P.encode_records(commands[i : i + batch]):
                w.write(rec, timeout=30)
            w.publish()
    w.publish()
    got = int(conn.recv(64))  # the reader has consumed every packet
    dt = time.perf_counter() - t
    child.wait()
    assert path or got == sum(map(len, packets))
    return len(packets) / dt


def grpc_rate(packets: list[bytes]) -> float:
    d = tempfile.mkdtemp(prefix="nxb")
    addr = f"unix://{d}/g.sock"
    ident = lambda x: x  # noqa: E731
    handler = grpc.method_handlers_generic_handler(
        "bench.Sink", {"Put": grpc.unary_unary_rpc_method_handler(lambda req, ctx: b"", ident, ident)}
    )
    srv = grpc.server(futures.ThreadPoolExecutor(4))
    srv.add_generic_rpc_handlers((handler,))
    srv.add_insecure_port(addr)
    srv.start()
    with grpc.insecure_channel(addr) as ch:
        put = ch.unary_unary("/bench.Sink/Put", request_serializer=ident, response_deserializer=ident)
        put(b"warm")
        t = time.perf_counter()
        for p in packets:
            put(p)
        dt = time.perf_counter() - t
    srv.stop(0)
    return len(packets) / dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--packets", type=int, default=500000)
    a = ap.parse_args()
    cmds = [(P.OP_DRAW, 6, 1, i & 0xFFFF, 0) if i % 4 else (P.OP_UNIFORM, 0, 1, 4096 * (i & 63), 256) for i in range(a.packets)]
    pk = [P.encode(*c) for c in cmds]
    r1 = ring_rate(pk, 1000)
    rb = ring_rate(pk, 10000, cmds, "records")
    rs = ring_rate(pk, 10000, cmds, "submit")
    re = ring_rate(pk, 10000, cmds, "encoded")
    g = grpc_rate(pk[: min(len(pk), 20000)])
    print(f"ring, one record per packet (pre-encoded), doorbell every 1000: {r1:12,.0f} packets/s")
    print(f"ring, packets back to back (encode_records + unpack one by one): {rb:12,.0f} packets/s")
    print(f"ring, client submit: array records encoded at submit, 10000/sub: {rs:12,.0f} packets/s")
    print(f"ring, client submit of blocks encoded at record time:            {re:12,.0f} packets/s")
    print(f"gRPC unary on a UNIX socket, one call per packet:                {g:12,.0f} calls/s")
    print(f"ring (client path, encoded at record time) / gRPC: {re / g:.0f}x")


if __name__ == "__main__":
    main()
