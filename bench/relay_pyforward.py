"""The anchor of bench/relay_load.py: the relay with its C fast path swapped for the same
forwarding written in plain Python (one recvfrom and one sendto per datagram, dict lookups).
Run by `relay_load.py --impl python`; not used by the product.

    .venv/bin/python bench/relay_pyforward.py   (listens on 127.0.0.1:0, prints its port)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import select
import socket
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from relay import protocol as P  # noqa: E402
from relay.core import COUNTER_NAMES, SlowPacket  # noqa: E402

_SLOW = (P.JOIN, P.RESUME, P.LEAVE)


def raw(addr: tuple[str, int]) -> bytes:
    return struct.pack("<H", socket.AF_INET) + struct.pack(">H", addr[1]) + socket.inet_aton(addr[0]) + bytes(8)


def unraw(b: bytes) -> tuple[str, int]:
    return socket.inet_ntoa(b[4:8]), struct.unpack(">H", b[2:4])[0]


class PyFastPath:
    """Same interface and the same DATA/PING semantics as relay.core.FastPath, cookies included
    (HMAC here instead of SipHash; rate limits left out, which only flatters Python)."""

    def __init__(self, fd: int, **_limits: object) -> None:
        self.sock = socket.socket(fileno=os.dup(fd))
        self.sock.setblocking(False)
        self.sessions: dict[int, list] = {}  # idx -> [sid, addr tuple, room, slot, inc, seen]
        self.rooms: dict[int, dict[int, int]] = {}  # room -> slot -> idx
        self.epochs: dict[int, int] = {}
        self.c = dict.fromkeys(COUNTER_NAMES, 0)
        self.key = os.urandom(16)

    def _cookie(self, addr: tuple[str, int], back: int = 0) -> bytes:
        epoch = int(time.monotonic() // 20) - back
        return hmac.new(self.key, f"{addr}{epoch}".encode(), hashlib.sha256).digest()[:16]

    def poll(self, timeout_ms: int, max_batches: int = 32) -> list[SlowPacket]:
        if not select.select([self.sock], [], [], timeout_ms / 1000)[0]:
            return []
        out, sessions, rooms, sendto, c = [], self.sessions, self.rooms, self.sock.sendto, self.c
        for _ in range(max_batches * 64):
            try:
                pkt, addr = self.sock.recvfrom(2049)
            except BlockingIOError:
                break
            c["rx_packets"] += 1
            if len(pkt) < 4 or pkt[:2] != b"NR" or pkt[2] != 1:
                c["malformed"] += 1
                continue
            t = pkt[3]
            if t in (P.JOIN, P.RESUME) and pkt[8:24] not in (self._cookie(addr), self._cookie(addr, 1)):
                c["challenges"] += 1
                sendto(P.encode_challenge(self._cookie(addr)), addr)
                continue
            if t in _SLOW:
                out.append(SlowPacket(pkt, raw(addr)))
                continue
            sid = int.from_bytes(pkt[4:12], "little")
            s = sessions.get(sid & 0xFFFFFF)
            if s is None or s[0] != sid:
                c["unknown_session"] += 1
                continue
            if s[1] != addr:
                c["rebind_challenges"] += 1
                sendto(P.encode_challenge(self._cookie(addr)), addr)
                continue
            s[5] = time.monotonic()
            room = rooms[s[2]]
            if t == P.PING:
                sendto(P.header(P.PONG) + struct.pack("<BBH", 0, s[3], self.epochs.get(s[2], 0)) + pkt[12:20], addr)
                continue
            if len(pkt) < P.DATA_HEADER:
                c["malformed"] += 1
                continue
            dst = pkt[12]
            d = P.header(P.DELIVER) + struct.pack("<BBBBHH", s[3], dst, pkt[13], pkt[14], s[4], 0) + pkt[20:]
            for slot, j in room.items():
                if slot != s[3] and (dst == P.ALL or slot == dst):
                    sendto(d, sessions[j][1])
                    c["forwarded"] += 1
        return out

    def set_session(self, idx: int, sid: int, addr: bytes, room: int, slot: int, inc: int) -> None:
        self.sessions[idx] = [sid, unraw(addr), room, slot, inc, time.monotonic()]
        self.rooms.setdefault(room, {})[slot] = idx

    def set_room_epoch(self, room: int, epoch: int) -> None:
        self.epochs[room] = epoch

    def clear_session(self, idx: int) -> None:
        s = self.sessions.pop(idx, None)
        if s:
            self.rooms.get(s[2], {}).pop(s[3], None)

    def expired(self, timeout_s: float) -> list[int]:
        now = time.monotonic()
        return [i for i, s in self.sessions.items() if now - s[5] > timeout_s]

    def idle_s(self, idx: int) -> float:
        s = self.sessions.get(idx)
        return time.monotonic() - s[5] if s else -1.0

    def addr_is(self, idx: int, sid: int, addr: bytes) -> bool:
        s = self.sessions.get(idx)
        return bool(s and s[0] == sid and s[1] == unraw(addr))

    def send(self, addr: bytes, data: bytes) -> None:
        self.sock.sendto(data, unraw(addr))

    def counters(self) -> dict[str, int]:
        return dict(self.c)

    def latency_hist(self) -> list[int]:
        return [0] * 20


def main() -> int:
    import signal

    from relay.metrics import MetricsServer
    from relay.server import RelayConfig, RelayServer, load_secret

    server = RelayServer(RelayConfig.from_settings(listen="127.0.0.1:0"), load_secret(), fast_path=PyFastPath)
    metrics = MetricsServer("127.0.0.1:0", lambda: server.snapshot).start()
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    h, p = server.address
    print(f"relay listening on {h}:{p} metrics on {metrics.address[0]}:{metrics.address[1]}", flush=True)
    server.serve()
    metrics.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
