"""bsd:u/bsd:s over real host sockets on the loopback, nifm:u and ns:am2, driven with requests laid
out as libnx lays them (``bsd.c``: ``{s32 fd, ...}`` parameters, auto-select buffers that are X/C
when they fit the server's pointer buffer and A/B otherwise; replies ``{s32 ret, s32 errno}``).

Expected values are documented facts, not the host's: errno numbers are Linux's (switchbrew
"Sockets services": Nintendo's FreeBSD stack uses the Linux errno definitions; asm-generic
errno.h: EBADF 9, EAGAIN 11, EMFILE 24, EAFNOSUPPORT 97, ENETUNREACH 101, ECONNREFUSED 111),
constants FreeBSD's (libnx ``external/bsd``: AF_INET 2, SOCK_STREAM 1, SOCK_DGRAM 2, POLLIN 1,
POLLNVAL 0x20, sockaddr_in {len, family, port BE, addr}), F_SETFL 4 with O_NONBLOCK 0x800 (libnx
``socket.c``).  Every socket is on 127.0.0.1; each wait is bounded."""

from __future__ import annotations

import socket
import struct

import pytest

from cpu_host.horizon.ipc import cmif, hipc
from cpu_host.horizon.ipc.dispatcher import Server
from cpu_host.horizon.services import bsd, nifm, ns
from tests.horizon.test_ipc_codec import memory

POINTER = 0x8000  # the dispatcher's QueryPointerBufferSize answer: what fits goes as X/C


class Guest:
    """One bsd client session as libnx drives it; buffers live in ``Memory`` from 0x2000 on."""

    def __init__(self, srv: Server, service: str = "bsd:u") -> None:
        self.srv, self.mem = srv, memory()
        self.mem.mem = bytearray(0x40000)  # room for a 40 KiB A/B buffer pair
        self.sid = srv.open(srv.services[service]())
        self.next = 0x2000

    def buf(self, data: bytes | int) -> tuple[int, int]:
        size = data if isinstance(data, int) else len(data)
        addr = self.next
        self.next += (size + 0xF) & ~0xF or 0x10
        if not isinstance(data, int):
            self.mem.write(addr, data)
        return addr, size

    def call(
        self,
        cmd: int,
        params: bytes,
        ins: list[bytes] = (),
        outs: list[int] = (),
        pid: int | None = None,
        copy: list[int] = (),
        force_ab: bool = False,
    ) -> tuple[int, bytes, list[tuple[int, int]]]:
        x, a, b, c = [], [], [], []
        self.next = 0x2000  # buffers live for one request
        for i, d in enumerate(ins):
            addr, size = self.buf(d)
            if size <= POINTER and not force_ab:
                x.append(hipc.Static(i, addr, size))
                a.append(hipc.Buffer(0, 0, 0))
            else:
                x.append(hipc.Static(i, 0, 0))
                a.append(hipc.Buffer(addr, size, 0))
        out_bufs = []
        for i, size in enumerate(outs):
            addr, _ = self.buf(size)
            out_bufs.append((addr, size))
            if size <= POINTER and not force_ab:
                c.append(hipc.Static(i, addr, size))
                b.append(hipc.Buffer(0, 0, 0))
            else:
                c.append(hipc.Static(i, 0, 0))
                b.append(hipc.Buffer(addr, size, 0))
        raw = hipc.build_request(4, cmif.request_payload(cmd, params), pid=pid, copy_handles=copy, x=x, a=a, b=b, c=c)
        rc, reply = self.srv.handle(self.mem, self.sid, raw + bytes(0x100 - len(raw)))
        assert rc == 0
        body = cmif.payload(hipc.parse(reply + bytes(0x100 - len(reply))))
        assert struct.unpack_from("<I", body)[0] == cmif.SFCO
        return struct.unpack_from("<I", body, 8)[0], body[16:], out_bufs

    def bsd(
        self, cmd: int, params: bytes, ins: list[bytes] = (), outs: list[int] = (), force_ab: bool = False
    ) -> tuple[int, int, bytes, list[bytes]]:
        """(ret, errno, extra output, out buffers' bytes)"""
        result, data, out_bufs = self.call(cmd, params, ins, outs, force_ab=force_ab)
        assert result == 0
        ret, err = struct.unpack_from("<ii", data)
        return ret, err, data[8:], [self.mem.read(a, s) for a, s in out_bufs]


def sockaddr(host: str, port: int) -> bytes:
    return bytes((16, 2)) + struct.pack(">H", port) + socket.inet_aton(host) + bytes(8)


def i32s(*v: int) -> bytes:
    return struct.pack(f"<{len(v)}i", *v)


@pytest.fixture
def guest():
    srv = Server()
    table = bsd.register(srv, "loopback", 8)
    g = Guest(srv)
    result, data, _ = g.call(0, bytes(0x20) + struct.pack("<QQ", 0, 0x1000), pid=0x51, copy=[0x8001])
    assert (result, struct.unpack_from("<Q", data)[0]) == (0, 0x51)  # RegisterClient: the PID back
    yield g
    srv.release(g.sid)
    assert table.entries == {}  # the last client gone: every host socket closed


def test_tcp_over_loopback(guest: Guest) -> None:
    ls, err, _, _ = guest.bsd(2, i32s(2, 1, 0))  # Socket(AF_INET, STREAM)
    assert (ls, err) == (0, 0)
    assert guest.bsd(13, i32s(ls), [sockaddr("0.0.0.0", 0)])[:2] == (0, 0)  # Bind: 127.0.0.1 (loopback)
    assert guest.bsd(18, i32s(ls, 4))[:2] == (0, 0)  # Listen
    ret, err, extra, (name,) = guest.bsd(16, i32s(ls), outs=[16])  # GetSockName
    assert (ret, err, struct.unpack("<I", extra)[0], name[:2]) == (0, 0, 16, bytes((16, 2)))
    port = struct.unpack(">H", name[2:4])[0]
    assert socket.inet_ntoa(name[4:8]) == "127.0.0.1" and port

    cs = guest.bsd(2, i32s(2, 1, 0))[0]
    assert guest.bsd(14, i32s(cs), [sockaddr("127.0.0.1", port)], force_ab=True)[:2] == (0, 0)  # Connect (A)
    conn, err, extra, (peer,) = guest.bsd(12, i32s(ls), outs=[16])  # Accept
    assert err == 0 and conn not in (ls, cs) and peer[1] == 2 and socket.inet_ntoa(peer[4:8]) == "127.0.0.1"

    assert guest.bsd(10, i32s(cs, 0), [b"hello over loopback"])[:2] == (19, 0)  # Send (X)
    ret, err, _, (got,) = guest.bsd(8, i32s(conn, 0), outs=[64])  # Recv (C)
    assert (ret, err, got[:ret]) == (19, 0, b"hello over loopback")
    big = bytes(range(256)) * 160  # 40 KiB: A in, B out
    assert guest.bsd(10, i32s(cs, 0), [big], force_ab=True)[:2] == (len(big), 0)
    got = b""
    for _ in range(64):
        if len(got) == len(big):
            break
        ret, err, _, (part,) = guest.bsd(8, i32s(conn, 0), outs=[len(big) - len(got)], force_ab=True)
        assert err == 0 and ret > 0
        got += part[:ret]
    assert got == big

    # Poll: the accepted socket readable after a send (POLLIN 1); a descriptor not open: POLLNVAL 0x20
    guest.bsd(10, i32s(cs, 0), [b"x"])
    fds = struct.pack("<ihh", conn, 1, 0) + struct.pack("<ihh", 7, 1, 0)
    ret, err, _, (out,) = guest.bsd(6, struct.pack("<Ii", 2, 1000), [fds], outs=[16])
    assert (ret, err) == (2, 0)
    assert [struct.unpack_from("<ihh", out, 8 * i)[2] for i in range(2)] == [1, 0x20]

    # non-blocking (Fcntl F_SETFL O_NONBLOCK 0x800): a recv with nothing queued is EAGAIN 11
    guest.bsd(8, i32s(conn, 0), outs=[8])
    assert guest.bsd(20, i32s(conn, 4, 0x800))[:2] == (0, 0)
    assert guest.bsd(20, i32s(conn, 3, 0))[:2] == (0x800, 0)  # F_GETFL
    assert guest.bsd(8, i32s(conn, 0), outs=[8])[:2] == (-1, 11)

    # the peer closes: a recv reads 0 (end of stream)
    assert guest.bsd(26, i32s(cs))[:2] == (0, 0)
    assert guest.bsd(20, i32s(conn, 4, 0))[:2] == (0, 0)
    assert guest.bsd(8, i32s(conn, 0), outs=[8])[:2] == (0, 0)
    assert guest.bsd(26, i32s(cs))[:2] == (-1, 9)  # closed twice: EBADF


def test_udp_sendto_recvfrom(guest: Guest) -> None:
    a = guest.bsd(2, i32s(2, 2, 0))[0]
    b = guest.bsd(2, i32s(2, 2, 0))[0]
    guest.bsd(13, i32s(a), [sockaddr("127.0.0.1", 0)])
    guest.bsd(13, i32s(b), [sockaddr("127.0.0.1", 0)])
    port_a = struct.unpack(">H", guest.bsd(16, i32s(a), outs=[16])[3][0][2:4])[0]
    port_b = struct.unpack(">H", guest.bsd(16, i32s(b), outs=[16])[3][0][2:4])[0]
    assert guest.bsd(11, i32s(b, 0), [b"datagram", sockaddr("127.0.0.1", port_a)])[:2] == (8, 0)
    ret, err, extra, (data, src) = guest.bsd(9, i32s(a, 0), outs=[32, 16])
    assert (ret, err, data[:8], struct.unpack("<I", extra)[0]) == (8, 0, b"datagram", 16)
    assert struct.unpack(">H", src[2:4])[0] == port_b and socket.inet_ntoa(src[4:8]) == "127.0.0.1"


def test_errors(guest: Guest) -> None:
    assert guest.bsd(8, i32s(42, 0), outs=[8])[:2] == (-1, 9)  # EBADF
    assert guest.bsd(2, i32s(28, 1, 0))[:2] == (-1, 97)  # AF_INET6: EAFNOSUPPORT
    s = guest.bsd(2, i32s(2, 1, 0))[0]
    assert guest.bsd(14, i32s(s), [sockaddr("192.0.2.1", 80)])[:2] == (-1, 101)  # off loopback: ENETUNREACH
    with socket.socket() as probe:  # bound, never listening: refused, and nobody else can take the port meanwhile
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
        assert guest.bsd(14, i32s(s), [sockaddr("127.0.0.1", closed_port)])[:2] == (-1, 111)  # ECONNREFUSED
    opened = [guest.bsd(2, i32s(2, 2, 0)) for _ in range(8)]
    assert sum(1 for r in opened if r[:2] == (-1, 24)) == 1  # the 9th: EMFILE (limit 8)


def test_nifm_and_ns() -> None:
    """nifm:u CreateGeneralService (5) -> IGeneralService: GetInternetConnectionStatus (18: type 2
    Ethernet, status 4 Connected) and GetCurrentIpAddress (12); ns:am2 GetApplicationManagerInterface
    (7996) -> GetApplicationControlData (400): the count of bytes written to the B buffer."""
    srv = Server()
    nifm.register(srv)
    ns.register(srv)
    mem = memory()

    def call(sid: int, cmd: int, params: bytes = b"", **kw) -> tuple[int, bytes, list[int]]:
        raw = hipc.build_request(4, cmif.request_payload(cmd, params), **kw)
        rc, reply = srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))
        m = hipc.parse(reply + bytes(0x100 - len(reply)))
        body = cmif.payload(m)
        return struct.unpack_from("<I", body, 8)[0], body[16:], m.move_handles

    sid = srv.open(srv.services["nifm:u"]())
    result, _, moved = call(sid, 5, bytes(8), pid=0x51)
    assert result == 0 and len(moved) == 1
    general = moved[0] - 0x9000  # Memory.session_handle: 0x9000 + session id
    assert isinstance(srv.sessions[general].obj, nifm.GeneralService)
    result, data, _ = call(general, 18)
    assert (result, data[:3]) == (0, bytes((2, 0, 4)))
    assert call(general, 12)[1][:4] == bytes((127, 0, 0, 1))

    sid = srv.open(srv.services["ns:am2"]())
    result, _, moved = call(sid, 7996)
    assert result == 0 and len(moved) == 1
    manager = moved[0] - 0x9000
    assert isinstance(srv.sessions[manager].obj, ns.ApplicationManagerInterface)
    result, data, _ = call(manager, 400, struct.pack("<B7xQ", 1, 0x0100000000001000), b=[hipc.Buffer(0x4000 - 0x3000, 0x3000, 0)])
    assert (result, struct.unpack_from("<I", data)[0]) == (0, 0x3000)  # a buffer smaller than a NACP
