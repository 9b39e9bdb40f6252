"""The relay's control plane: rooms, seats, handshakes, timeouts, shutdown.

One thread runs ``serve()``: the C fast path (``relay.core``) forwards DATA and answers PING
between polls; what it hands up (JOIN, RESUME, LEAVE, a known session from a new address) is
handled here, and the forwarding table is updated here only.  Nothing else touches the
socket or the tables, so there are no locks; the metrics thread reads only ``snapshot``,
an immutable object replaced a few times a second.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import logging
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError
from nxrecomp.common.log import kv
from relay import protocol as P
from relay import tokens
from relay.core import FastPath, SlowPacket
from relay.netaddr import parse_hostport, sockaddr_text

log = logging.getLogger("relay")

TICK_S = 0.1  # timers (timeouts, snapshot) run at least this often
SNAPSHOT_S = 0.25

_REFUSE_CODE = {"bad_token": P.R_BAD_TOKEN, "expired_token": P.R_EXPIRED}


@dataclass(frozen=True)
class RelayConfig:
    listen: str = "127.0.0.1:0"
    max_rooms: int = 4096
    max_players: int = 8
    max_sessions: int = 32768
    max_packet: int = 1200
    heartbeat_ms: int = 1000
    timeout_ms: int = 10000
    player_rate: float = 2000.0
    player_burst: float = 4000.0
    addr_rate: float = 20.0
    addr_burst: float = 40.0
    seat_takeover_ms: int = 3000
    rcvbuf: int = 4 << 20

    @classmethod
    def from_settings(cls, **override: object) -> "RelayConfig":
        vals = {f: settings.get("relay", f) for f in cls.__dataclass_fields__}
        vals.update({k: v for k, v in override.items() if v is not None})
        return cls(**vals)  # type: ignore[arg-type]

    def check(self) -> None:
        if not 1 <= self.max_players <= P.MAX_SLOTS:
            raise NxError(f"relay.max_players {self.max_players} must be 1..{P.MAX_SLOTS}")
        if not P.MIN_HANDSHAKE <= self.max_packet <= 2048:
            raise NxError(f"relay.max_packet {self.max_packet} must be {P.MIN_HANDSHAKE}..2048")
        for k in ("max_rooms", "max_sessions", "heartbeat_ms", "timeout_ms"):
            if getattr(self, k) <= 0:
                raise NxError(f"relay.{k} must be positive")
        if not self.heartbeat_ms < self.seat_takeover_ms:
            # a live client pings every heartbeat: a shorter window would hand its seat away
            raise NxError(f"relay.seat_takeover_ms {self.seat_takeover_ms} must exceed relay.heartbeat_ms {self.heartbeat_ms}")


def load_secret() -> bytes:
    """The token-signing key from ``relay.secret_file`` or ``relay.secret``."""
    path = settings.get("relay", "secret_file")
    if path:
        try:
            text = open(path, encoding="utf-8").readline().strip()
        except OSError as e:
            raise NxError(f"relay.secret_file {path}: {e.strerror}") from None
        origin = f"relay.secret_file {path}"
    else:
        text, origin = settings.get("relay", "secret"), "relay.secret"
    if not text:
        raise NxError("no token secret: set relay.secret_file (see `nxrecomp relay keygen`) or NXRECOMP_RELAY_SECRET")
    if len(text) < 16:
        raise NxError(f"{origin} is {len(text)} characters: use at least 16 (32 random hex bytes from `nxrecomp relay keygen`)")
    return text.encode()


@dataclass
class Room:
    idx: int
    name: str
    password_mac: bytes
    epoch: int = 0  # roster version: +1 on every join and leave (wraps at 16 bits)
    incs: int = 0  # seatings so far: the next incarnation number
    seats: dict[int, "Session"] = field(default_factory=dict)
    by_player: dict[str, "Session"] = field(default_factory=dict)


@dataclass
class Session:
    idx: int
    sid: int
    room: Room
    slot: int
    inc: int
    player: str
    resume_key: bytes
    addr: bytes


@dataclass(frozen=True)
class Snapshot:
    """What the metrics endpoint shows: copied from the loop, never shared with it."""

    time: float
    rooms: int
    players: int
    counters: Mapping[str, int]
    events: Mapping[str, int]  # control-plane counts: joins, challenges, refused_<reason>, ...
    latency_hist: tuple[int, ...]
    draining: bool
    room_names: tuple[str, ...] = ()


class RelayServer:
    def __init__(
        self, config: RelayConfig, secret: bytes, fast_path: type = FastPath, sock: socket.socket | None = None, worker: int = 0
    ) -> None:
        """``fast_path``: the forwarding engine; only benchmarks pass another (a pure-Python
        one, to measure what the C one buys).  ``sock``: a socket bound already (a worker
        handed one of its host's SO_REUSEPORT group, ``relay.workers``), whose ``worker``
        index goes into bits 24..31 of every session id so that the kernel steers the
        session's packets here (``relay.steer``)."""
        config.check()
        if not 0 <= worker <= 255:
            raise NxError(f"relay worker index {worker} must be 0..255")
        self.config, self.secret, self.worker = config, secret, worker
        if sock is not None:
            self.sock = sock
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, config.rcvbuf)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, config.rcvbuf)
        else:
            family, host, port = parse_hostport(config.listen, "relay.listen")
            self.sock = socket.socket(family, socket.SOCK_DGRAM)
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, config.rcvbuf)
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, config.rcvbuf)
                self.sock.bind((host, port))
            except OSError as e:
                self.sock.close()
                raise NxError(f"relay.listen {config.listen}: {e.strerror}") from None
        self.sock.setblocking(False)
        self.fast = fast_path(
            self.sock.fileno(),
            max_sessions=config.max_sessions,
            max_rooms=config.max_rooms,
            max_packet=config.max_packet,
            player_rate=config.player_rate,
            player_burst=config.player_burst,
            addr_rate=config.addr_rate,
            addr_burst=config.addr_burst,
        )
        self.rooms: dict[str, Room] = {}
        self.sessions: dict[int, Session] = {}
        self._free_rooms = list(range(config.max_rooms - 1, -1, -1))
        self._free_sessions = list(range(config.max_sessions - 1, -1, -1))
        self.events: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()
        self.stopped = threading.Event()
        self.draining = False
        self.snapshot = self._make_snapshot()
        self._next_tick = 0.0
        self._next_snapshot = 0.0

    @property
    def address(self) -> tuple[str, int]:
        return self.sock.getsockname()[:2]

    # ---- loop ---------------------------------------------------------------------------

    def serve(self) -> None:
        """Run until ``stop()``; then tell every player and close the socket."""
        kv(log, logging.INFO, "listening", address=self.config.listen, bound=f"{self.address[0]}:{self.address[1]}")
        try:
            while not self._stop.is_set():
                self.step(int(TICK_S * 1000))
        finally:
            self._shutdown()

    def stop(self) -> None:
        """Ask ``serve()`` to finish (thread- and signal-safe)."""
        self._stop.set()

    def step(self, timeout_ms: int) -> None:
        for pkt in self.fast.poll(timeout_ms):
            try:
                self._handle(pkt)
            except P.ProtocolError as e:
                self.events["malformed"] += 1
                kv(log, logging.DEBUG, "malformed packet dropped", source=sockaddr_text(pkt.addr), error=str(e))
            except Exception:  # noqa: BLE001 - one packet must never take every room down
                self.events["internal_error"] += 1
                log.exception("packet from %s dropped: internal error", sockaddr_text(pkt.addr))
        now = time.monotonic()
        if now >= self._next_tick:
            self._next_tick = now + TICK_S
            self._expire()
        if now >= self._next_snapshot:
            self._next_snapshot = now + SNAPSHOT_S
            self.snapshot = self._make_snapshot()

    def _make_snapshot(self) -> Snapshot:
        return Snapshot(
            time.time(),
            len(self.rooms),
            len(self.sessions),
            MappingProxyType(self.fast.counters()),
            MappingProxyType(dict(self.events)),
            tuple(self.fast.latency_hist()),
            self.draining,
            tuple(self.rooms),
        )

    # ---- packets handed up by the fast path ---------------------------------------------

    def _handle(self, pkt: SlowPacket) -> None:
        t = P.packet_type(pkt.data)
        if t == P.JOIN:
            self._join(P.decode_join(pkt.data), pkt)
        elif t == P.RESUME:
            self._resume(P.decode_resume(pkt.data), pkt)
        elif t == P.LEAVE:
            self._leave(P.session_of(pkt.data), pkt.addr)
        else:
            # The fast path answers DATA/PING itself (a new address gets a CHALLENGE there).
            raise P.ProtocolError(f"packet type {t:#x} at offset 3 is not one the control plane takes")

    def _refuse(self, addr: bytes, code: int) -> None:
        self.events[f"refused_{P.REFUSED_NAMES[code]}"] += 1
        self.fast.send(addr, P.encode_refused(code))

    def _password_mac(self, room: str, password: bytes) -> bytes:
        return hmac.new(self.secret, b"room-password\0" + room.encode() + b"\0" + password, hashlib.sha256).digest()

    def _join(self, j: P.Join, pkt: SlowPacket) -> None:
        # The fast path hands up only JOINs whose cookie proves the source address (it answers
        # the others with a CHALLENGE), each verified source within its own rate budget.
        addr = pkt.addr
        if self.draining:
            return self._refuse(addr, P.R_SHUTTING_DOWN)
        try:
            tok = tokens.verify(self.secret, j.token)
        except tokens.TokenError as e:
            kv(log, logging.INFO, "join refused", source=sockaddr_text(addr), reason=e.reason, error=str(e))
            return self._refuse(addr, _REFUSE_CODE[e.reason])
        room = self.rooms.get(tok.room)
        pw = self._password_mac(tok.room, j.password)
        if room is not None and not hmac.compare_digest(room.password_mac, pw):
            return self._refuse(addr, P.R_WRONG_PASSWORD)
        took_over = False
        if room is not None and tok.player in room.by_player:
            s = room.by_player[tok.player]
            if s.addr == addr:
                # the same client again (its WELCOME was lost): the same seat, WELCOME again
                return self._bind(s, addr, "rejoined")
            # A token is a bearer credential that may leak; the seat belongs to whoever holds its
            # resume key.  A live seat (heard from within seat_takeover_ms) is never handed to
            # a token from another address; a silent one (its client crashed, lost the key) is
            # ended and the newcomer seated afresh: new session, resume key and incarnation.
            if self.fast.idle_s(s.idx) * 1000 < self.config.seat_takeover_ms:
                kv(
                    log,
                    logging.INFO,
                    "join refused: seat taken",
                    room=tok.room,
                    player=tok.player,
                    source=sockaddr_text(addr),
                    seat_source=sockaddr_text(s.addr),
                )
                return self._refuse(addr, P.R_SEAT_TAKEN)
            self._remove(s, P.B_REPLACED)
            room = self.rooms.get(tok.room)  # None if that was its last seat
            took_over = room is not None
        if j.flags & P.J_OPEN and not took_over:  # a host back in its own open room just sits
            if not tok.host:
                return self._refuse(addr, P.R_NOT_HOST)
            if room is not None:
                return self._refuse(addr, P.R_ROOM_EXISTS)
            if not self._free_rooms or not self._free_sessions:
                return self._refuse(addr, P.R_SERVER_FULL)
            room = Room(self._free_rooms.pop(), tok.room, pw)
            self.rooms[tok.room] = room
            kv(log, logging.INFO, "room opened", room=tok.room, by=tok.player)
        elif room is None:
            return self._refuse(addr, P.R_NO_ROOM)
        if len(room.seats) >= self.config.max_players:
            return self._refuse(addr, P.R_ROOM_FULL)
        if not self._free_sessions:
            return self._refuse(addr, P.R_SERVER_FULL)
        slot = min(set(range(self.config.max_players)) - room.seats.keys())
        idx = self._free_sessions.pop()
        room.incs = room.incs % 0xFFFF + 1
        # session id: 32 random bits, the worker index (steering, relay.steer), the table index
        sid = (secrets.randbits(31) + 1) << 32 | self.worker << 24 | idx
        s = Session(idx, sid, room, slot, room.incs, tok.player, secrets.token_bytes(P.RESUME_KEY_LEN), addr)
        room.seats[slot], room.by_player[tok.player] = s, s
        self.sessions[idx] = s
        self._roster_changed(room, P.P_JOINED, s)
        self._bind(s, addr, "joined")

    def _roster_changed(self, room: Room, event: int, s: Session) -> None:
        room.epoch = (room.epoch + 1) & 0xFFFF
        self.fast.set_room_epoch(room.idx, room.epoch)
        pkt = P.encode_peer(event, s.slot, s.inc, room.epoch, s.player)
        for other in room.seats.values():
            if other is not s:
                self.fast.send(other.addr, pkt)

    def _bind(self, s: Session, addr: bytes, what: str) -> None:
        moved = s.addr != addr
        s.addr = addr
        self.fast.set_session(s.idx, s.sid, addr, s.room.idx, s.slot, s.inc)
        self.events[what] += 1
        kv(
            log,
            logging.INFO,
            f"player {what}",
            room=s.room.name,
            player=s.player,
            slot=s.slot,
            source=sockaddr_text(addr),
            moved=moved,
        )
        roster = {o.slot: P.Seat(o.inc, o.player) for o in s.room.seats.values()}
        self.fast.send(
            addr,
            P.encode_welcome(
                P.Welcome(
                    s.sid,
                    s.resume_key,
                    s.slot,
                    self.config.max_players,
                    min(self.config.heartbeat_ms, 65535),
                    self.config.timeout_ms,
                    s.room.epoch,
                    roster,
                )
            ),
        )

    def _resume(self, r: P.Resume, pkt: SlowPacket) -> None:
        s = self.sessions.get(r.session & 0xFFFFFF)
        if s is None or s.sid != r.session or not hmac.compare_digest(s.resume_key, r.resume_key):
            return self._refuse(pkt.addr, P.R_NO_SESSION)
        self._bind(s, pkt.addr, "resumed")

    def _leave(self, sid: int, addr: bytes) -> None:
        s = self.sessions.get(sid & 0xFFFFFF)
        if s is None or not self.fast.addr_is(s.idx, sid, addr):
            # Only the seat's own address may end it; anything else could be spoofed.
            self.events["leave_ignored"] += 1
            return
        self._remove(s, P.B_LEFT)

    def _remove(self, s: Session, reason: int) -> None:
        self.fast.send(s.addr, P.encode_bye(reason))
        self.fast.clear_session(s.idx)
        del self.sessions[s.idx]
        self._free_sessions.append(s.idx)
        room = s.room
        del room.seats[s.slot], room.by_player[s.player]
        self.events[f"removed_{P.BYE_NAMES[reason]}"] += 1
        kv(log, logging.INFO, "player removed", room=room.name, player=s.player, slot=s.slot, reason=P.BYE_NAMES[reason])
        self._roster_changed(room, P.P_LEFT, s)
        if not room.seats:
            del self.rooms[room.name]
            self._free_rooms.append(room.idx)
            kv(log, logging.INFO, "room closed", room=room.name)

    def _expire(self) -> None:
        # scanned in C: a Python loop over 30k sessions every tick would cost more than the traffic
        for idx in self.fast.expired(self.config.timeout_ms / 1000):
            s = self.sessions.get(idx)
            if s is not None:
                self._remove(s, P.B_TIMEOUT)

    def _shutdown(self) -> None:
        self.draining = True
        kv(log, logging.INFO, "shutting down", players=len(self.sessions), rooms=len(self.rooms))
        bye = P.encode_bye(P.B_SHUTDOWN)
        for _ in range(2):  # twice: one lost datagram should not leave a client waiting for its timeout
            for s in self.sessions.values():
                self.fast.send(s.addr, bye)
        self.snapshot = self._make_snapshot()
        self.sock.close()
        self.stopped.set()
