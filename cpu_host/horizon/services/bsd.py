"""bsd:u / bsd:s — BSD sockets (nn::socket::sf::IClient) over real host sockets.

Facts (switchbrew "Sockets services"; libnx ``bsd.c``, ``socket.c`` and its FreeBSD headers
``external/bsd/include``):

- Commands: 0 RegisterClient (LibraryConfigData 0x20 bytes, u64 PID placeholder, u64 transfer
  memory size, PID sent, copy handle of the transfer memory; out u64 PID), 1 StartMonitoring
  (u64 PID), 2 Socket, 3 SocketExempt ({s32 domain, type, protocol}), 4 Open, 5 Select, 6 Poll,
  7 Sysctl, 8 Recv, 9 RecvFrom, 10 Send, 11 SendTo, 12 Accept, 13 Bind, 14 Connect, 15
  GetPeerName, 16 GetSockName, 17 GetSockOpt, 18 Listen, 19 Ioctl, 20 Fcntl, 21 SetSockOpt, 22
  Shutdown, 23 ShutdownAllSockets, 24 Write, 25 Read, 26 Close, 27 DuplicateSocket.
- Every command but the first two answers ``{s32 ret, s32 errno}`` (errno meaningful when ret <
  0) and then its extra outputs; the errno values are Linux's ("Nintendo actually used the
  Linux errno definitions for their FreeBSD build"), so a host errno passes through unchanged.
- Buffers are auto-select (A or X in, B or C out; libnx ``cmifRequest{In,Out}AutoBuffer``),
  numbered in order among the inputs and among the outputs of each command.
- Constants are FreeBSD's: AF_INET 2, SOCK_STREAM 1 / DGRAM 2 / RAW 3 (| NONBLOCK 0x20000000,
  CLOEXEC 0x10000000), SOL_SOCKET 0xffff with SO_REUSEADDR 4, KEEPALIVE 8, BROADCAST 0x20,
  LINGER 0x80, OOBINLINE 0x100, REUSEPORT 0x200, SNDBUF 0x1001, RCVBUF 0x1002, SNDTIMEO 0x1005,
  RCVTIMEO 0x1006, ERROR 0x1007, TYPE 0x1008; MSG_OOB 1, PEEK 2, DONTROUTE 4, WAITALL 0x40,
  DONTWAIT 0x80, NOSIGNAL 0x20000; POLLIN 1, PRI 2, OUT 4, ERR 8, HUP 0x10, NVAL 0x20, RDNORM
  0x40, RDBAND 0x80, WRBAND 0x100; ``struct pollfd {s32 fd; s16 events, revents}``, nfds_t u32;
  ``sockaddr_in {u8 len, u8 family, u16 port (big-endian), u32 addr, 8 zero bytes}``.  Fcntl takes
  F_GETFL 3 / F_SETFL 4 with O_NONBLOCK as 0x800 (libnx ``socket.c``'s O_NONBLOCK_NX).

The guest's sockets are host sockets of this process (IPv4 only: AF_INET6 is EAFNOSUPPORT; raw
sockets are refused with EACCES).  ``cpu_host.bsd_network = loopback`` (the default) keeps them on
127.0.0.0/8: a bind to INADDR_ANY binds 127.0.0.1, a bind elsewhere is EADDRNOTAVAIL, a connect or
send elsewhere ENETUNREACH.  A guest call that blocks (recv, accept, connect, poll, select on a
blocking socket) blocks its guest thread only: its core is given back meanwhile
(``KernelBridge.unlocked``).  Every socket is closed when the last session of the client goes."""

from __future__ import annotations

import errno as E
import logging
import select
import socket
import struct
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command

log = logging.getLogger("cpu_host.ipc.bsd")

AF_INET, AF_INET6 = 2, 28
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW = 1, 2, 3
SOCK_NONBLOCK, SOCK_CLOEXEC = 0x20000000, 0x10000000
SOL_SOCKET, IPPROTO_IP, IPPROTO_TCP = 0xFFFF, 0, 6
TCP_NODELAY = 1
F_GETFL, F_SETFL, O_NONBLOCK_NX = 3, 4, 0x800
FIONREAD, FIONBIO = 0x4004667F, 0x8004667E  # _IOR('f', 127, int), _IOW('f', 126, int)
SOCKADDR_IN_SIZE = 16
RECV_MAX = 1 << 20  # one recv reads at most this much (a stream may return less anyway)

# FreeBSD SOL_SOCKET option -> (Linux option, value kind: "int" or a struct size)
SOCKOPT = {
    0x4: (socket.SO_REUSEADDR, "int"),
    0x8: (socket.SO_KEEPALIVE, "int"),
    0x20: (socket.SO_BROADCAST, "int"),
    0x80: (socket.SO_LINGER, 8),
    0x100: (socket.SO_OOBINLINE, "int"),
    0x200: (socket.SO_REUSEPORT, "int"),
    0x1001: (socket.SO_SNDBUF, "int"),
    0x1002: (socket.SO_RCVBUF, "int"),
    0x1005: (socket.SO_SNDTIMEO, 16),
    0x1006: (socket.SO_RCVTIMEO, 16),
    0x1007: (socket.SO_ERROR, "int"),
    0x1008: (socket.SO_TYPE, "int"),
}
# FreeBSD MSG_ flag -> Linux flag
MSG = {
    0x1: socket.MSG_OOB,
    0x2: socket.MSG_PEEK,
    0x4: socket.MSG_DONTROUTE,
    0x40: socket.MSG_WAITALL,
    0x80: socket.MSG_DONTWAIT,
    0x20000: socket.MSG_NOSIGNAL,
}
# FreeBSD poll bit -> Linux poll bit (the low six are the same on both)
POLL_TO_HOST = {
    0x1: select.POLLIN,
    0x2: select.POLLPRI,
    0x4: select.POLLOUT,
    0x8: select.POLLERR,
    0x10: select.POLLHUP,
    0x20: select.POLLNVAL,
    0x40: select.POLLRDNORM,
    0x80: select.POLLRDBAND,
    0x100: select.POLLWRBAND,
}
POLL_FROM_HOST = {v: k for k, v in POLL_TO_HOST.items()} | {select.POLLWRNORM: 0x4}


class BsdError(Exception):
    """A call that answers ret = -1 with this (Linux) errno."""

    def __init__(self, code: int, why: str = "") -> None:
        super().__init__(why or E.errorcode.get(code, str(code)))
        self.code = code


@dataclass
class Entry:
    sock: socket.socket
    kind: int  # SOCK_STREAM / SOCK_DGRAM
    nonblocking: bool = False


class SocketTable:
    """The guest's descriptors (small integers from 0) -> host sockets, one table per client."""

    def __init__(self, network: str = "loopback", max_sockets: int = 64) -> None:
        if network not in ("loopback", "host"):
            raise ValueError(f"cpu_host.bsd_network is {network!r}: use loopback or host")
        self.network, self.max_sockets = network, max_sockets
        self.entries: dict[int, Entry] = {}
        self.clients = 0
        self.lock = threading.Lock()

    def add(self, entry: Entry) -> int:
        with self.lock:
            if len(self.entries) >= self.max_sockets:
                entry.sock.close()
                raise BsdError(E.EMFILE, f"{self.max_sockets} sockets open (cpu_host.bsd_max_sockets)")
            fd = next(i for i in range(len(self.entries) + 1) if i not in self.entries)
            self.entries[fd] = entry
            return fd

    def get(self, fd: int) -> Entry:
        e = self.entries.get(fd)
        if e is None:
            raise BsdError(E.EBADF, f"descriptor {fd} is not open")
        return e

    def close(self, fd: int) -> None:
        with self.lock:
            e = self.entries.pop(fd, None)
        if e is None:
            raise BsdError(E.EBADF, f"descriptor {fd} is not open")
        e.sock.close()

    def close_all(self) -> None:
        with self.lock:
            entries, self.entries = list(self.entries.values()), {}
        for e in entries:
            e.sock.close()


# -- conversions ------------------------------------------------------------------------------
def parse_sockaddr(raw: bytes) -> tuple[str, int]:
    if len(raw) < 8:
        raise BsdError(E.EINVAL, f"a sockaddr of {len(raw)} bytes (sockaddr_in needs 8 or more)")
    family = raw[1]
    if family != AF_INET:
        raise BsdError(E.EAFNOSUPPORT, f"address family {family} (only AF_INET 2 is served)")
    return socket.inet_ntoa(raw[4:8]), struct.unpack(">H", raw[2:4])[0]


def pack_sockaddr(addr: tuple[str, int]) -> bytes:
    return bytes((SOCKADDR_IN_SIZE, AF_INET)) + struct.pack(">H", addr[1]) + socket.inet_aton(addr[0]) + bytes(8)


def host_flags(flags: int) -> int:
    out = socket.MSG_NOSIGNAL  # a closed peer is EPIPE for the guest, never a signal to the host
    for bsd, linux in MSG.items():
        if flags & bsd:
            out |= linux
    return out


def _refuse(code: int, why: str) -> Callable[[], tuple[int, bytes]]:
    def run() -> tuple[int, bytes]:
        raise BsdError(code, why)

    return run


def poll_events_to_host(ev: int) -> int:
    return sum(h for b, h in POLL_TO_HOST.items() if ev & b)


def poll_events_from_host(ev: int) -> int:
    out = 0
    for h, b in POLL_FROM_HOST.items():
        if ev & h:
            out |= b
    return out


class Client(Interface):
    """nn::socket::sf::IClient of bsd:u or bsd:s; every client of a process shares one table."""

    name = "nn::socket::sf::IClient"

    def __init__(self, service: str, table: SocketTable) -> None:
        self.service = service
        self.table = table
        self.pid = 0
        with table.lock:
            table.clients += 1

    def closed(self) -> None:
        """The sockets live while any client of the process does (libnx holds two: the
        service and its monitor session)."""
        with self.table.lock:
            self.table.clients -= 1
            last = self.table.clients <= 0
        if last:
            self.table.close_all()

    # -- plumbing --------------------------------------------------------------------------
    def _answer(self, ctx: Context, what: str, fn: Callable[[], tuple[int, bytes]]) -> None:
        """Run one call: ``{ret, errno}`` then its extra output (only on success, as libnx reads)."""
        try:
            ret, extra = fn()
            err = 0
        except BsdError as e:
            ret, extra, err = -1, b"", e.code
            log.info("%s %s: errno %d (%s)", self.service, what, e.code, e)
        except OSError as e:
            ret, extra, err = -1, b"", e.errno or E.EIO
            log.info("%s %s: errno %d (%s)", self.service, what, err, e.strerror)
        except (ValueError, OverflowError) as e:  # a parameter no host call takes (a timeout past years)
            ret, extra, err = -1, b"", E.EINVAL
            log.info("%s %s: errno %d (%s)", self.service, what, err, e)
        ctx.push("ii", ret, err)
        ctx.push_bytes(extra)

    @staticmethod
    def _unlocked(ctx: Context) -> Any:
        """Give the guest thread's core back while a host call may block."""
        f = getattr(ctx.kernel, "unlocked", None)
        return f() if f is not None else nullcontext()

    def _check_peer(self, addr: tuple[str, int]) -> None:
        if self.table.network == "loopback" and not addr[0].startswith("127."):
            raise BsdError(E.ENETUNREACH, f"{addr[0]} is outside the loopback network (cpu_host.bsd_network)")

    def _blocking_call(self, ctx: Context, e: Entry, flags: int, fn: Callable[[], Any]) -> Any:
        if e.nonblocking or flags & socket.MSG_DONTWAIT:
            return fn()
        with self._unlocked(ctx):
            return fn()

    # -- set-up ----------------------------------------------------------------------------
    @command(0)
    def register_client(self, ctx: Context) -> None:
        ctx.take(0x20)  # LibraryConfigData: buffer sizes the host's stack chooses itself
        ctx.u64()
        ctx.u64()  # transfer memory size: the host keeps its buffers in host memory
        self.pid = ctx.pid or 0
        ctx.push("Q", self.pid)

    @command(1)
    def start_monitoring(self, ctx: Context) -> None:
        ctx.u64()

    # -- sockets ---------------------------------------------------------------------------
    def _socket(self, domain: int, type_: int, proto: int) -> tuple[int, bytes]:
        kind = type_ & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)
        if domain != AF_INET:
            raise BsdError(E.EAFNOSUPPORT, f"domain {domain} (only AF_INET 2 is served)")
        if kind == SOCK_RAW:
            raise BsdError(E.EACCES, "raw sockets are not given to guests")
        if kind not in (SOCK_STREAM, SOCK_DGRAM):
            raise BsdError(E.EPROTOTYPE, f"socket type {type_:#x}")
        if proto not in (0, 6, 17):
            raise BsdError(E.EPROTONOSUPPORT, f"protocol {proto}")
        s = socket.socket(socket.AF_INET, kind, proto)
        nb = bool(type_ & SOCK_NONBLOCK)
        s.setblocking(not nb)
        return self.table.add(Entry(s, kind, nb)), b""

    @command(2)
    def socket_(self, ctx: Context) -> None:
        d, t, p = ctx.i32(), ctx.i32(), ctx.i32()
        self._answer(ctx, f"Socket({d}, {t:#x}, {p})", lambda: self._socket(d, t, p))

    @command(3)
    def socket_exempt(self, ctx: Context) -> None:
        d, t, p = ctx.i32(), ctx.i32(), ctx.i32()
        self._answer(ctx, f"SocketExempt({d}, {t:#x}, {p})", lambda: self._socket(d, t, p))

    @command(4)
    def open_(self, ctx: Context) -> None:
        ctx.u32()
        path = ctx.read_in_auto(0, 0).split(b"\0")[0].decode("ascii", "replace")
        self._answer(ctx, f"Open({path!r})", _refuse(E.ENOENT, f"no device {path!r} (the host serves sockets only)"))

    @command(5)
    def select_(self, ctx: Context) -> None:
        nfds = ctx.i32()
        sec, usec = ctx.i64(), ctx.i64()
        is_null = bool(ctx.u8())

        def run() -> tuple[int, bytes]:
            sets = [ctx.read_in_auto(i, i) for i in range(3)]
            want: list[list[int]] = [[], [], []]
            for k, bits in enumerate(sets):
                for fd in range(min(nfds, 8 * len(bits))):
                    if bits[fd // 8] >> (fd % 8) & 1:
                        self.table.get(fd)
                        want[k].append(fd)
            socks = {fd: self.table.get(fd).sock for fd in set(want[0] + want[1] + want[2])}
            timeout = None if is_null else max(0.0, sec + usec / 1e6)
            with self._unlocked(ctx) if timeout is None or timeout > 0 else nullcontext():
                r, w, x = select.select(*[[socks[fd] for fd in lst] for lst in want], timeout)
            ready = [{id(s) for s in r}, {id(s) for s in w}, {id(s) for s in x}]
            count = 0
            for k, bits in enumerate(sets):
                out = bytearray(len(bits))
                for fd in want[k]:
                    if id(socks[fd]) in ready[k]:
                        out[fd // 8] |= 1 << (fd % 8)
                        count += 1
                if len(bits):
                    ctx.write_out_auto(k, k, bytes(out))
            return count, b""

        self._answer(ctx, f"Select({nfds})", run)

    @command(6)
    def poll(self, ctx: Context) -> None:
        nfds, timeout = ctx.u32(), ctx.i32()

        def run() -> tuple[int, bytes]:
            raw = ctx.read_in_auto(0, 0)
            if len(raw) < 8 * nfds:
                raise BsdError(E.EFAULT, f"{nfds} pollfd entries need {8 * nfds} bytes, the buffer has {len(raw)}")
            entries = [list(struct.unpack_from("<ihh", raw, 8 * i)) for i in range(nfds)]
            p = select.poll()
            by_host: dict[int, list[int]] = {}
            ready = 0
            for i, (fd, ev, _) in enumerate(entries):
                entries[i][2] = 0
                if fd < 0:
                    continue
                e = self.table.entries.get(fd)
                if e is None:
                    entries[i][2] = 0x20  # POLLNVAL
                    ready += 1
                    continue
                p.register(e.sock.fileno(), poll_events_to_host(ev & 0xFFFF))
                by_host.setdefault(e.sock.fileno(), []).append(i)
            if not ready and by_host:
                with self._unlocked(ctx) if timeout != 0 else nullcontext():
                    got = p.poll(None if timeout < 0 else timeout)
            else:
                got = p.poll(0) if by_host else []
            for hfd, hev in got:
                for i in by_host.get(hfd, []):
                    entries[i][2] = poll_events_from_host(hev) & (entries[i][1] | 0x38)  # ERR/HUP/NVAL always
                    if entries[i][2]:
                        ready += 1
            ctx.write_out_auto(0, 0, b"".join(struct.pack("<ihh", *x) for x in entries))
            return ready, b""

        self._answer(ctx, f"Poll({nfds}, {timeout})", run)

    @command(7)
    def sysctl(self, ctx: Context) -> None:
        self._answer(ctx, "Sysctl", _refuse(E.ENOENT, "no sysctl is served"))

    def _recv(self, ctx: Context, fd: int, flags: int, with_addr: bool) -> tuple[int, bytes]:
        e = self.table.get(fd)
        size = min(ctx.out_auto_size(0, 0), RECV_MAX)
        data, addr = self._blocking_call(ctx, e, flags, lambda: e.sock.recvfrom(size, host_flags(flags)))
        ctx.write_out_auto(0, 0, data)
        if not with_addr:
            return len(data), b""
        if addr is None:
            return len(data), struct.pack("<I", 0)
        sa = pack_sockaddr(addr)
        if ctx.out_auto_size(1, 1):
            ctx.write_out_auto(1, 1, sa)
        return len(data), struct.pack("<I", len(sa))

    @command(8)
    def recv(self, ctx: Context) -> None:
        fd, flags = ctx.i32(), ctx.i32()
        self._answer(ctx, f"Recv({fd})", lambda: self._recv(ctx, fd, flags, False))

    @command(9)
    def recv_from(self, ctx: Context) -> None:
        fd, flags = ctx.i32(), ctx.i32()
        self._answer(ctx, f"RecvFrom({fd})", lambda: self._recv(ctx, fd, flags, True))

    def _send(self, ctx: Context, fd: int, flags: int, to: bool) -> tuple[int, bytes]:
        e = self.table.get(fd)
        data = ctx.read_in_auto(0, 0)
        if to:
            addr = parse_sockaddr(ctx.read_in_auto(1, 1))
            self._check_peer(addr)
            return self._blocking_call(ctx, e, flags, lambda: e.sock.sendto(data, host_flags(flags), addr)), b""
        return self._blocking_call(ctx, e, flags, lambda: e.sock.send(data, host_flags(flags))), b""

    @command(10)
    def send(self, ctx: Context) -> None:
        fd, flags = ctx.i32(), ctx.i32()
        self._answer(ctx, f"Send({fd})", lambda: self._send(ctx, fd, flags, False))

    @command(11)
    def send_to(self, ctx: Context) -> None:
        fd, flags = ctx.i32(), ctx.i32()
        self._answer(ctx, f"SendTo({fd})", lambda: self._send(ctx, fd, flags, True))

    def _out_addr(self, ctx: Context, addr: tuple[str, int]) -> bytes:
        sa = pack_sockaddr(addr)
        if ctx.out_auto_size(0, 0):
            ctx.write_out_auto(0, 0, sa)
        return struct.pack("<I", len(sa))

    @command(12)
    def accept(self, ctx: Context) -> None:
        fd = ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            s, addr = self._blocking_call(ctx, e, 0, e.sock.accept)
            s.setblocking(True)
            return self.table.add(Entry(s, SOCK_STREAM)), self._out_addr(ctx, addr)

        self._answer(ctx, f"Accept({fd})", run)

    @command(13)
    def bind(self, ctx: Context) -> None:
        fd = ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            host, port = parse_sockaddr(ctx.read_in_auto(0, 0))
            if self.table.network == "loopback":
                if host == "0.0.0.0":
                    host = "127.0.0.1"
                elif not host.startswith("127."):
                    raise BsdError(E.EADDRNOTAVAIL, f"{host} is outside the loopback network (cpu_host.bsd_network)")
            e.sock.bind((host, port))
            return 0, b""

        self._answer(ctx, f"Bind({fd})", run)

    @command(14)
    def connect(self, ctx: Context) -> None:
        fd = ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            addr = parse_sockaddr(ctx.read_in_auto(0, 0))
            self._check_peer(addr)
            err = self._blocking_call(ctx, e, 0, lambda: e.sock.connect_ex(addr))
            if err:
                raise BsdError(err, f"connect to {addr[0]}:{addr[1]}: {E.errorcode.get(err, err)}")
            return 0, b""

        self._answer(ctx, f"Connect({fd})", run)

    @command(15)
    def get_peer_name(self, ctx: Context) -> None:
        fd = ctx.i32()
        self._answer(ctx, f"GetPeerName({fd})", lambda: (0, self._out_addr(ctx, self.table.get(fd).sock.getpeername())))

    @command(16)
    def get_sock_name(self, ctx: Context) -> None:
        fd = ctx.i32()
        self._answer(ctx, f"GetSockName({fd})", lambda: (0, self._out_addr(ctx, self.table.get(fd).sock.getsockname())))

    def _option(self, level: int, name: int) -> tuple[int, int, str | int]:
        if level == SOL_SOCKET and name in SOCKOPT:
            opt, kind = SOCKOPT[name]
            return socket.SOL_SOCKET, opt, kind
        if level == IPPROTO_TCP and name == TCP_NODELAY:
            return socket.IPPROTO_TCP, socket.TCP_NODELAY, "int"
        raise BsdError(E.ENOPROTOOPT, f"socket option {name:#x} at level {level:#x} is not served")

    @command(17)
    def get_sock_opt(self, ctx: Context) -> None:
        fd, level, name = ctx.i32(), ctx.i32(), ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            lvl, opt, kind = self._option(level, name)
            val = struct.pack("<i", e.sock.getsockopt(lvl, opt)) if kind == "int" else e.sock.getsockopt(lvl, opt, kind)
            n = ctx.write_out_auto(0, 0, val)
            return 0, struct.pack("<I", n)

        self._answer(ctx, f"GetSockOpt({fd}, {level:#x}, {name:#x})", run)

    @command(18)
    def listen(self, ctx: Context) -> None:
        fd, backlog = ctx.i32(), ctx.i32()

        def run() -> tuple[int, bytes]:
            self.table.get(fd).sock.listen(max(0, backlog))
            return 0, b""

        self._answer(ctx, f"Listen({fd})", run)

    @command(19)
    def ioctl(self, ctx: Context) -> None:
        fd, request, _bufcount = ctx.i32(), ctx.u32(), ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            if request == FIONBIO:
                on = bool(struct.unpack("<i", ctx.read_in_auto(0, 0)[:4].ljust(4, b"\0"))[0])
                e.nonblocking = on
                e.sock.setblocking(not on)
                return 0, b""
            if request == FIONREAD:
                import fcntl
                import termios

                buf = fcntl.ioctl(e.sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
                ctx.write_out_auto(0, 0, buf)  # out1: the first output auto-buffer
                return 0, b""
            raise BsdError(E.ENOTTY, f"ioctl {request:#x} is not served (FIONBIO, FIONREAD are)")

        self._answer(ctx, f"Ioctl({fd}, {request:#x})", run)

    @command(20)
    def fcntl(self, ctx: Context) -> None:
        fd, cmd, flags = ctx.i32(), ctx.i32(), ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            if cmd == F_GETFL:
                return (O_NONBLOCK_NX if e.nonblocking else 0), b""
            if cmd == F_SETFL:
                e.nonblocking = bool(flags & O_NONBLOCK_NX)
                e.sock.setblocking(not e.nonblocking)
                return 0, b""
            raise BsdError(E.EINVAL, f"fcntl command {cmd} (F_GETFL 3 and F_SETFL 4 are served)")

        self._answer(ctx, f"Fcntl({fd}, {cmd})", run)

    @command(21)
    def set_sock_opt(self, ctx: Context) -> None:
        fd, level, name = ctx.i32(), ctx.i32(), ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            lvl, opt, kind = self._option(level, name)
            raw = ctx.read_in_auto(0, 0)
            if kind == "int":
                if len(raw) < 4:
                    raise BsdError(E.EINVAL, f"option value of {len(raw)} bytes (an int needs 4)")
                e.sock.setsockopt(lvl, opt, struct.unpack_from("<i", raw)[0])
            else:
                if len(raw) < kind:
                    raise BsdError(E.EINVAL, f"option value of {len(raw)} bytes (needs {kind})")
                e.sock.setsockopt(lvl, opt, raw[:kind])
            return 0, b""

        self._answer(ctx, f"SetSockOpt({fd}, {level:#x}, {name:#x})", run)

    @command(22)
    def shutdown(self, ctx: Context) -> None:
        fd, how = ctx.i32(), ctx.i32()

        def run() -> tuple[int, bytes]:
            if how not in (0, 1, 2):
                raise BsdError(E.EINVAL, f"shutdown how {how}")
            self.table.get(fd).sock.shutdown(how)  # SHUT_RD/WR/RDWR are 0/1/2 on both systems
            return 0, b""

        self._answer(ctx, f"Shutdown({fd}, {how})", run)

    @command(23)
    def shutdown_all_sockets(self, ctx: Context) -> None:
        how = ctx.i32()

        def run() -> tuple[int, bytes]:
            for e in list(self.table.entries.values()):
                try:
                    e.sock.shutdown(how)
                except OSError:
                    pass
            return 0, b""

        self._answer(ctx, "ShutdownAllSockets", run)

    @command(24)
    def write(self, ctx: Context) -> None:
        fd = ctx.i32()
        self._answer(ctx, f"Write({fd})", lambda: self._send(ctx, fd, 0, False))

    @command(25)
    def read(self, ctx: Context) -> None:
        fd = ctx.i32()
        self._answer(ctx, f"Read({fd})", lambda: self._recv(ctx, fd, 0, False))

    @command(26)
    def close(self, ctx: Context) -> None:
        fd = ctx.i32()

        def run() -> tuple[int, bytes]:
            self.table.close(fd)
            return 0, b""

        self._answer(ctx, f"Close({fd})", run)

    @command(27)
    def duplicate_socket(self, ctx: Context) -> None:
        fd = ctx.i32()

        def run() -> tuple[int, bytes]:
            e = self.table.get(fd)
            return self.table.add(Entry(e.sock.dup(), e.kind, e.nonblocking)), b""

        self._answer(ctx, f"DuplicateSocket({fd})", run)


def register(server: Server, network: str = "loopback", max_sockets: int = 64) -> SocketTable:
    table = SocketTable(network, max_sockets)
    server.services["bsd:u"] = lambda: Client("bsd:u", table)
    server.services["bsd:s"] = lambda: Client("bsd:s", table)
    return table
