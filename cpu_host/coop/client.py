"""The CPU host's co-op client: one host thread with one UDP socket, talking to the relay.

The thread never holds a virtual core: it is a plain host thread that only moves datagrams,
heartbeats and resends.  Guest-facing calls (``send``, ``recv``, ``poll_event``) only touch
queues and a lock and never wait on the network, except ``open``/``join``, which wait for the
handshake; the nn:: shim calls those after giving its virtual core back (like any blocking
host work).  Every call takes and returns plain ints/bytes, and failures are ``CoopError`` with
a numeric ``code``, so a guest-facing shim maps them 1:1 onto result codes.

Delivery (see docs/coop.md):
- unreliable: at most once, stale ones (older than the newest seen on that channel) dropped;
- reliable: exactly once and in order per (sender, receiver, channel), resent until acked;
  a reliable message to ``ALL`` is one copy per peer, each in that peer's own stream.
"""

from __future__ import annotations

import logging
import queue
import select
import socket
import threading
import time
from dataclasses import dataclass, field

from relay import protocol as P
from relay import tokens

log = logging.getLogger("coop")

ALL = P.ALL
MAX_PAYLOAD = 1200 - P.DATA_HEADER  # the relay's default relay.max_packet less the DATA header
RX_WINDOW = 4096  # reliable messages buffered ahead of a gap, per stream

# CoopError codes (stable: the guest shim turns them into result codes)
E_TIMEOUT, E_NOT_JOINED, E_TOO_LARGE, E_BAD_DESTINATION, E_CLOSED, E_BAD_TOKEN, E_BUSY = 1, 2, 3, 4, 5, 6, 7
E_REFUSED_BASE = 100  # + REFUSED reason (protocol.R_*)


class CoopError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Message:
    src: int
    channel: int
    payload: bytes
    reliable: bool


@dataclass(frozen=True)
class PeerEvent:
    kind: str  # "joined", "left", "closed" (slot is ours, name the BYE reason)
    slot: int
    name: str


@dataclass
class _Pending:
    packet: bytes
    next_s: float
    rto_s: float


@dataclass
class _RxStream:
    expected: int = 0  # reliable: next seq to deliver
    newest: int = -1  # unreliable: newest seq delivered
    ahead: dict[int, bytes] = field(default_factory=dict)


def _seq_after(a: int, b: int) -> int:
    """How far ``a`` is after ``b`` on the 32-bit circle (negative: before)."""
    d = (a - b) & 0xFFFFFFFF
    return d - (1 << 32) if d & 0x80000000 else d


class CoopClient:
    def __init__(
        self,
        server: tuple[str, int],
        *,
        rto_s: float = 0.05,
        max_rto_s: float = 0.5,
        handshake_timeout_s: float = 5.0,
        bind_host: str = "",
    ) -> None:
        try:
            infos = socket.getaddrinfo(server[0], int(server[1]), type=socket.SOCK_DGRAM)
        except socket.gaierror as e:
            raise CoopError(E_TIMEOUT, f"relay address {server[0]!r}: {e}") from None
        # IPv4 first when a name has both: the relay listens on 0.0.0.0 unless told otherwise
        info = min(infos, key=lambda i: i[0] != socket.AF_INET)
        self._family, self.server = info[0], info[4][:2]
        self.bind_host = bind_host  # local address to send from ("": any)
        self.rto_s, self.max_rto_s, self.handshake_timeout_s = rto_s, max_rto_s, handshake_timeout_s
        self._sock = self._new_socket()
        self._lock = threading.Lock()
        self._messages: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self._events: queue.SimpleQueue[PeerEvent] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        self._bye = threading.Event()
        self._rebind_wanted = False
        # session state (guarded by _lock)
        self.slot = -1
        self._seats: dict[int, P.Seat] = {}
        self._epoch = -1
        self.max_players = 0
        self._session = 0
        self._resume_key = b""
        self._heartbeat_s = 1.0
        self._timeout_s = 10.0
        self._state = "idle"  # idle -> handshake -> joined (-> leaving) -> closed
        self._join_packet: tuple[bytes, bytes, int] | None = None  # token, password, flags
        self._wait_for_room = False  # this handshake outlasts no_room (join(wait_for_room=True))
        self._handshake_done = threading.Event()
        self._handshake_error: CoopError | None = None
        self._next_handshake_s = 0.0
        self._next_ping_s = 0.0
        self._last_rx_s = 0.0
        # Streams are keyed by the peer's (slot, incarnation) so a seat that changes hands starts afresh.
        self._tx_seq: dict[tuple[int, int, int, bool], int] = {}  # (dst, inc, channel, reliable)
        self._pending: dict[tuple[int, int, int, int], _Pending] = {}  # (dst, inc, channel, seq)
        self._rx: dict[tuple[int, int, int, bool, bool], _RxStream] = {}  # (src, inc, channel, reliable, to ALL)

    # ---- guest-facing API -------------------------------------------------------------

    @property
    def roster(self) -> dict[int, str]:
        """Players in the room by slot (ours included), as this client knows it now."""
        with self._lock:
            return {s: seat.name for s, seat in self._seats.items()}

    def open(self, token: str | bytes, password: str = "") -> int:
        """Create the token's room (token must be a host token) and sit in it; returns our slot."""
        return self._handshake(token, password, P.J_OPEN)

    def join(self, token: str | bytes, password: str = "", wait_for_room: bool = False) -> int:
        """Sit in the token's existing room; returns our slot.  ``wait_for_room``: a room not
        open yet (the relay's ``no_room``) is asked for again (every 0.25 s) until the host opens
        it or the handshake deadline passes, so players started together need no start order."""
        return self._handshake(token, password, 0, wait_for_room)

    def send(self, dst: int, channel: int, payload: bytes, reliable: bool = False) -> None:
        """Queue ``payload`` for player ``dst`` (or ``ALL``) on ``channel`` (0..255)."""
        if len(payload) > MAX_PAYLOAD:
            raise CoopError(E_TOO_LARGE, f"payload of {len(payload)} bytes is over {MAX_PAYLOAD}")
        if not 0 <= channel <= 255:
            raise CoopError(E_BAD_DESTINATION, f"channel {channel} outside 0..255")
        with self._lock:
            if self._state != "joined":
                raise CoopError(E_NOT_JOINED if self._state != "closed" else E_CLOSED, f"not in a room ({self._state})")
            if dst != ALL and (dst == self.slot or dst not in self._seats):
                raise CoopError(E_BAD_DESTINATION, f"destination {dst} is not another player's slot or ALL")
            if not reliable:
                out = [self._data(dst, channel, 0, payload)]
            else:
                targets = [dst] if dst != ALL else [s for s in self._seats if s != self.slot]
                out = [self._data(t, channel, P.F_RELIABLE, payload) for t in targets]
                now = time.monotonic()
                for pkt, t in zip(out, targets):
                    seq = int.from_bytes(pkt[20:24], "little")
                    self._pending[(t, self._seats[t].inc, channel, seq)] = _Pending(pkt, now + self.rto_s, self.rto_s)
            sock = self._sock
        for pkt in out:
            self._sendto(sock, pkt)

    def recv(self, timeout: float | None = None) -> Message | None:
        """Next message for us, or None after ``timeout`` seconds (0: don't wait)."""
        try:
            return self._messages.get(timeout=timeout) if timeout != 0 else self._messages.get_nowait()
        except queue.Empty:
            return None

    def poll_event(self, timeout: float | None = 0) -> PeerEvent | None:
        try:
            return self._events.get(timeout=timeout) if timeout != 0 else self._events.get_nowait()
        except queue.Empty:
            return None

    def unacked(self) -> int:
        """Reliable messages sent and not yet acknowledged."""
        with self._lock:
            return len(self._pending)

    def leave(self) -> None:
        """Give our seat back (the relay answers BYE)."""
        with self._lock:
            if self._state != "joined":
                return
            pkt = P.encode_leave(self._session)
            self._bye.clear()
            self._state = "leaving"
        for _ in range(3):  # until the relay's BYE: a lost LEAVE would hold the seat until timeout
            with self._lock:
                sock = self._sock
            self._sendto(sock, pkt)
            if self._bye.wait(0.2):
                break
        with self._lock:
            if self._state == "leaving":
                self._close_locked("left")

    def rebind(self) -> None:
        """Move to a new local socket (a new source port, as after a network change); the relay
        keeps our seat once it has checked the new address."""
        with self._lock:
            self._rebind_wanted = True

    def close(self) -> None:
        self.leave()
        self._closing.set()
        if self._thread:
            self._thread.join(timeout=2)
        self._sock.close()

    def __enter__(self) -> "CoopClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- internals --------------------------------------------------------------------

    def _new_socket(self) -> socket.socket:
        s = socket.socket(self._family, socket.SOCK_DGRAM)
        s.bind((self.bind_host, 0))
        s.setblocking(False)  # the thread waits in select; a guest's send never blocks
        return s

    def _data(self, dst: int, channel: int, flags: int, payload: bytes) -> bytes:
        inc = self._seats[dst].inc if dst != ALL else 0
        key = (dst, inc, channel, bool(flags & P.F_RELIABLE))
        seq = self._tx_seq.get(key, 0)
        self._tx_seq[key] = (seq + 1) & 0xFFFFFFFF
        return P.encode_data(self._session, dst, channel, flags, seq, payload, inc)

    def _sendto(self, sock: socket.socket, pkt: bytes) -> None:
        try:
            sock.sendto(pkt, self.server)
        except OSError as e:  # a full buffer or a closed socket loses a datagram, like the network
            log.debug("send failed: %s", e)

    def _handshake(self, token: str | bytes, password: str, flags: int, wait_for_room: bool = False) -> int:
        try:
            tok = tokens.from_text(token) if isinstance(token, str) else token
        except tokens.TokenError as e:
            raise CoopError(E_BAD_TOKEN, str(e)) from None
        with self._lock:
            if self._state in ("handshake", "joined"):
                raise CoopError(E_BUSY, f"already {self._state}: leave first")
            self._state = "handshake"
            # a new seat: nothing from an earlier one carries over
            self._seats, self._epoch = {}, -1
            self._tx_seq.clear(), self._pending.clear(), self._rx.clear()
            self._join_packet = (tok, password.encode(), flags)
            self._wait_for_room = wait_for_room
            self._handshake_done.clear()
            self._handshake_error = None
            self._next_handshake_s = 0.0
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="coop-client", daemon=True)
            self._thread.start()
        if not self._handshake_done.wait(self.handshake_timeout_s):
            with self._lock:
                self._state = "idle"
            what = "the room did not open" if self._wait_for_room else "no answer from relay"
            raise CoopError(E_TIMEOUT, f"{what} at {self.server[0]}:{self.server[1]} in {self.handshake_timeout_s}s")
        if self._handshake_error:
            raise self._handshake_error
        return self.slot

    def _run(self) -> None:
        while not self._closing.is_set():
            with self._lock:
                if self._rebind_wanted:
                    old, self._sock = self._sock, self._new_socket()
                    self._rebind_wanted = False
                    old.close()
                sock = self._sock
                wait = self._until_next_timer()
            try:
                ready, _, _ = select.select([sock], [], [], wait)
                while ready:
                    try:
                        data, addr = sock.recvfrom(4096)
                    except BlockingIOError:
                        break
                    if addr[:2] == self.server:  # anyone else's datagrams are not the relay's
                        self._on_packet(data)
                    ready, _, _ = select.select([sock], [], [], 0)
            except (OSError, ValueError):
                continue
            self._timers(sock)

    def _until_next_timer(self) -> float:
        """Seconds the thread may sleep (capped so rebind() and close() act within 50 ms)."""
        now = time.monotonic()
        due = now + 0.05
        if self._state == "handshake":
            due = min(due, self._next_handshake_s)
        elif self._state == "joined":
            due = min(due, self._next_ping_s, *(p.next_s for p in self._pending.values()))
        return max(0.0, due - now)

    def _timers(self, sock: socket.socket) -> None:
        now = time.monotonic()
        out: list[bytes] = []
        with self._lock:
            if self._state == "handshake" and now >= self._next_handshake_s:
                tok, pw, flags = self._join_packet  # type: ignore[misc]
                out.append(P.encode_join(tok, pw, flags=flags))
                self._next_handshake_s = now + 0.25
            elif self._state == "joined":
                if now >= self._next_ping_s:
                    out.append(P.encode_ping(self._session, time.monotonic_ns()))
                    self._next_ping_s = now + self._heartbeat_s
                for p in self._pending.values():
                    if now >= p.next_s:
                        out.append(p.packet)
                        p.rto_s = min(p.rto_s * 2, self.max_rto_s)
                        p.next_s = now + p.rto_s
                if now - self._last_rx_s > self._timeout_s:
                    self._close_locked("timeout")
        for pkt in out:
            self._sendto(sock, pkt)

    def _close_locked(self, why: str) -> None:
        self._state = "closed"
        self._pending.clear()
        self._events.put(PeerEvent("closed", self.slot, why))

    def _on_packet(self, data: bytes) -> None:
        try:
            t = P.packet_type(data)
            with self._lock:
                self._last_rx_s = time.monotonic()
                reply = self._dispatch(t, data)
        except P.ProtocolError as e:
            log.debug("bad packet from relay dropped: %s", e)
            return
        for pkt in reply:
            self._sendto(self._sock, pkt)

    def _dispatch(self, t: int, data: bytes) -> list[bytes]:
        if t == P.DELIVER and self._state == "joined":
            return self._on_deliver(P.decode_deliver(data))
        if t == P.CHALLENGE:
            cookie = P.decode_challenge(data)
            if self._state == "handshake":
                tok, pw, flags = self._join_packet  # type: ignore[misc]
                return [P.encode_join(tok, pw, cookie, flags)]
            if self._state == "joined":  # our address changed: prove the new one
                return [P.encode_resume(self._session, self._resume_key, cookie)]
        elif t == P.WELCOME and self._state in ("handshake", "joined"):
            w = P.decode_welcome(data)
            if self._state == "joined" and w.session != self._session:
                return []
            self._session, self._resume_key, self.slot = w.session, w.resume_key, w.slot
            self.max_players = w.max_players
            self._heartbeat_s, self._timeout_s = w.heartbeat_ms / 1000, w.timeout_ms / 1000
            self._set_roster(w.roster, w.epoch, announce=self._state == "joined")
            if self._state == "handshake":
                self._state = "joined"
                self._next_ping_s = time.monotonic() + self._heartbeat_s
                self._handshake_done.set()
        elif t == P.REFUSED and self._state == "handshake":
            reason = data[4] if len(data) > 4 else 0
            if reason == P.R_NO_ROOM and self._wait_for_room:
                return []  # the JOIN timer asks again until the deadline
            self._handshake_error = CoopError(E_REFUSED_BASE + reason, f"relay refused: {P.REFUSED_NAMES.get(reason, reason)}")
            self._state = "idle"
            self._handshake_done.set()
        elif t == P.PEER and self._state == "joined":
            ev = P.decode_peer(data)
            seats = dict(self._seats)
            if ev.event == P.P_JOINED:
                seats[ev.slot] = P.Seat(ev.inc, ev.name)
            elif ev.slot in seats and seats[ev.slot].inc == ev.inc:
                del seats[ev.slot]
            # Only the next epoch in line proves nothing was missed; otherwise keep the old
            # epoch so the next PONG shows a mismatch and we fetch the whole roster.
            self._set_roster(seats, ev.epoch if ev.epoch == (self._epoch + 1) & 0xFFFF else self._epoch)
        elif t == P.PONG and self._state == "joined":
            _mask, _slot, epoch, _echo = P.decode_pong(data)
            if epoch != self._epoch:  # missed a PEER event: a RESUME brings the roster
                return [P.encode_resume(self._session, self._resume_key)]
        elif t == P.BYE and self._state in ("joined", "leaving"):
            self._close_locked(P.BYE_NAMES.get(data[4] if len(data) > 4 else -1, "bye"))
            self._bye.set()
        return []

    def _set_roster(self, seats: dict[int, P.Seat], epoch: int, announce: bool = True) -> None:
        """Take a new roster; a seat that changed hands drops the streams of its old occupant."""
        old, self._seats, self._epoch = self._seats, dict(seats), epoch
        for slot in sorted(old.keys() | seats.keys()):
            if old.get(slot) == seats.get(slot) or slot == self.slot:
                continue
            if slot in old:
                inc = old[slot].inc
                for table in (self._pending, self._rx, self._tx_seq):
                    for k in [k for k in table if k[0] == slot and k[1] == inc]:
                        del table[k]
                if announce:
                    self._events.put(PeerEvent("left", slot, old[slot].name))
            if slot in seats and announce:
                self._events.put(PeerEvent("joined", slot, seats[slot].name))

    def _on_deliver(self, d: P.Deliver) -> list[bytes]:
        if d.flags & P.F_ACK:
            self._pending.pop((d.src, d.src_inc, d.channel, d.seq), None)
            return []
        reliable = bool(d.flags & P.F_RELIABLE)
        # the sender numbers its ALL stream and its stream to us separately: keep them apart
        st = self._rx.setdefault((d.src, d.src_inc, d.channel, reliable, d.dst == ALL), _RxStream())
        if not reliable:
            if st.newest < 0 or _seq_after(d.seq, st.newest) > 0:
                st.newest = d.seq
                self._messages.put(Message(d.src, d.channel, d.payload, False))
            return []
        ahead = _seq_after(d.seq, st.expected)
        if ahead == 0:
            self._messages.put(Message(d.src, d.channel, d.payload, True))
            st.expected = (st.expected + 1) & 0xFFFFFFFF
            while st.expected in st.ahead:
                self._messages.put(Message(d.src, d.channel, st.ahead.pop(st.expected), True))
                st.expected = (st.expected + 1) & 0xFFFFFFFF
        elif 0 < ahead < RX_WINDOW:
            st.ahead[d.seq] = d.payload
        elif ahead >= RX_WINDOW:
            return []  # too far ahead to buffer: no ack, the sender resends later
        # ack duplicates too: the sender's earlier ack may have been lost
        return [P.encode_data(self._session, d.src, d.channel, P.F_ACK, d.seq, b"", d.src_inc)]
