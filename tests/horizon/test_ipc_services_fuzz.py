"""Thousands of malformed requests to the sockets, nifm and ns services (random command ids and
parameters; X/A/B/C descriptors inside, across the end of, or outside guest memory, of random
sizes; descriptors the command expects missing), as a guest could send them: the server answers
every one with a reply (a CMIF result, or for bsd ``{ret, errno}`` with a Linux errno), never
with an exception out of a handler; an unknown command id is the named ``Unserved`` error.

Bounded: a fixed seed, 3000 requests, 60 s.  Socket addresses come from a small set (a TCP
listener and a UDP socket this test owns on 127.0.0.1, an off-loopback documentation address,
malformed bytes), so nothing reaches another program's port; calls that could block run on
sockets the fuzz first makes non-blocking, with zero or millisecond timeouts."""

from __future__ import annotations

import errno
import random
import socket
import struct
import time

from cpu_host.horizon.ipc import cmif, hipc
from cpu_host.horizon.ipc.dispatcher import Server, Unserved
from cpu_host.horizon.services import bsd, nifm, ns
from tests.horizon.guest_memory import BytesMemory

COUNT, TIME_LIMIT = 3000, 60.0
MEM = 0x40000
BLOCKING = {5, 6, 8, 9, 10, 11, 12, 14, 24, 25}  # Select, Poll, Recv(From), Send(To), Accept, Connect, Write, Read


class EventMemory(BytesMemory):
    """Memory plus the kernel events nifm's IRequest hands out (numbered, never waited on here)."""

    def __init__(self) -> None:
        super().__init__(handles=(0xFFFF8001, 0x8001))
        self.events = 0

    def event(self) -> int:
        self.events += 1
        return self.events

    def event_handle(self, ev: int) -> int:
        return 0xA000 + ev

    def signal(self, ev: int, on: bool = True) -> None:
        pass


def test_services_fuzz() -> None:
    rng = random.Random(30)
    srv = Server()
    table = bsd.register(srv, "loopback", 16)
    nifm.register(srv)
    ns.register(srv)
    mem = EventMemory()
    mem.mem = bytearray(MEM)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    ports = [listener.getsockname()[1], udp.getsockname()[1]]
    sessions = {name: srv.open(srv.services[name]()) for name in ("bsd:u", "bsd:s", "nifm:u", "ns:am2")}
    objects = {name: srv.sessions[sid].obj for name, sid in sessions.items()}
    sessions["nifm-general"] = srv.open(nifm.GeneralService())
    sessions["nifm-request"] = srv.open(nifm.Request())
    sessions["ns-manager"] = srv.open(ns.ApplicationManagerInterface("ns:am2"))
    objects.update({k: srv.sessions[sessions[k]].obj for k in ("nifm-general", "nifm-request", "ns-manager")})

    def sockaddr() -> bytes:
        pick = rng.randrange(5)
        if pick < 2:
            return bytes((16, 2)) + struct.pack(">H", ports[pick]) + socket.inet_aton("127.0.0.1") + bytes(8)
        if pick == 2:
            return bytes((16, 2)) + struct.pack(">H", 80) + socket.inet_aton("192.0.2.1") + bytes(8)
        return rng.randbytes(rng.randrange(0, 20))

    def addr_size() -> tuple[int, int]:
        where = rng.randrange(6)
        size = rng.choice([0, 1, 8, 16, 64, 0x400, 0x9000])
        if where == 0:
            return rng.randrange(0, 1 << 39), size  # anywhere: mostly unmapped
        if where == 1:
            return MEM - rng.randrange(1, 64), size  # across the end
        return rng.randrange(0x1000, MEM - 0x9000), size

    def nonblocking_all() -> None:
        for fd in list(table.entries):
            e = table.entries.get(fd)
            if e is not None:
                e.sock.setblocking(False)
                e.nonblocking = True

    replies = errnos = unserved = 0
    t0 = time.monotonic()
    for _ in range(COUNT):
        if time.monotonic() - t0 > TIME_LIMIT:
            break
        name = rng.choice(list(sessions))
        obj = objects[name]
        ids = sorted(obj.commands)
        cmd = rng.choice(ids) if rng.random() < 0.9 else rng.randrange(0, 10000)
        fd = rng.choice([0, 1, 2, 3, -1, 99, 1 << 30])
        if name.startswith("bsd"):
            if cmd in (2, 3):
                params = struct.pack(
                    "<iii", rng.choice([2, 2, 28, 0, -5]), rng.choice([1, 2, 3, 0x20000002, 9]), rng.choice([0, 6, 17, 255])
                )
            elif cmd in (6,):
                params = struct.pack("<Ii", rng.choice([0, 1, 2, 1000, 0xFFFFFFFF]), rng.choice([0, 1, 2]))
            elif cmd == 5:
                params = struct.pack(
                    "<i4xqqB", rng.choice([0, 4, 64, 5000]), rng.choice([0, 0, 1 << 62]), rng.choice([0, 1000]), 0
                )  # 1 << 62 s: no host timeout holds it
            else:
                params = struct.pack(
                    "<iii",
                    fd,
                    rng.choice([0, 1, 2, 3, 4, 0x80, 0xFFFF, 0x1007, -1]),
                    rng.choice([0, 1, 4, 0x800, 0x1006, 0x4004667F]),
                )
            if cmd in BLOCKING:
                nonblocking_all()
        else:
            params = rng.randbytes(rng.randrange(0, 40))
        ins = [
            sockaddr() if rng.random() < 0.5 else rng.randbytes(rng.randrange(0, 64))
            for _ in range(3 if name.startswith("bsd") and cmd == 5 else rng.randrange(3))
        ]
        x, a, b, c = [], [], [], []
        for i, data in enumerate(ins):
            addr = rng.randrange(0x1000, MEM - 0x100)
            mem.write(addr, data)
            if rng.random() < 0.2:
                addr = addr_size()[0]
            (x.append(hipc.Static(i, addr, len(data))), a.append(hipc.Buffer(0, 0, 0))) if rng.random() < 0.5 else (
                x.append(hipc.Static(i, 0, 0)),
                a.append(hipc.Buffer(addr, len(data), 0)),
            )
        for i in range(rng.randrange(3)):
            addr, size = addr_size()
            if rng.random() < 0.5:
                c.append(hipc.Static(i, addr, min(size, 0xFFFF)))
                b.append(hipc.Buffer(0, 0, 0))
            else:
                c.append(hipc.Static(i, 0, 0))
                b.append(hipc.Buffer(addr, size, 0))
        raw = hipc.build_request(
            4, cmif.request_payload(cmd, params), x=x, a=a, b=b, c=c, pid=0x51 if rng.random() < 0.5 else None
        )
        if len(raw) > 0x100:
            continue
        try:
            rc, reply = srv.handle(mem, sessions[name], raw + bytes(0x100 - len(raw)))
        except Unserved as e:
            assert f"command {cmd}" in str(e) and cmd not in obj.commands
            unserved += 1
            continue
        assert rc in (0, 0xD401), (name, cmd, hex(rc))  # InvalidCurrentMemory: a buffer off the map
        if rc:
            continue
        body = cmif.payload(hipc.parse(reply + bytes(0x100 - len(reply))))
        assert struct.unpack_from("<I", body)[0] == cmif.SFCO
        replies += 1
        if name.startswith("bsd") and cmd >= 2 and struct.unpack_from("<I", body, 8)[0] == 0:
            ret, err = struct.unpack_from("<ii", body, 16)
            if ret < 0:
                assert err in errno.errorcode, (cmd, err)  # a Linux errno, named
                errnos += 1
    listener.close()
    udp.close()
    for sid in list(sessions.values()):
        srv.release(sid)
    assert table.entries == {}
    assert replies > 1000 and errnos > 200 and unserved > 50, (replies, errnos, unserved)
