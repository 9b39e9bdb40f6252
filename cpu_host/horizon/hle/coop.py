"""Co-op for guests: the relay client (``cpu_host.coop``) behind a few host functions.  The
relay, the player's join token and the room password are the player's settings
(``cpu_host.relay``, ``cpu_host.relay_token``, ``cpu_host.relay_password``; ``nxrecomp demo
--relay``), not the game's: the game only asks to connect, sends and polls.  A token issued
with ``--host`` opens the room, any other joins it.  The client's UDP socket lives on a host
thread of its own, never on a virtual core; receiving never blocks the game.

Our own API (C names, examples/horizon_hello/sdk/nn.h), not a Nintendo one: results are 0 or
the client's error code (cpu_host/coop/client.py: 1 timeout ... 100 + the relay's refusal
reason)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from cpu_host.coop.client import ALL, MAX_PAYLOAD, CoopClient, CoopError
from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.registry import HostFunction
from nxrecomp.common.errors import NxError

E_OFFLINE = 50  # no relay configured
E_NOT_CONNECTED = 51


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise NxError(f"relay address {text!r} is not HOST:PORT", field="cpu_host.relay")
    return host.strip("[]") or "127.0.0.1", int(port)


@dataclass
class CoopService:
    relay: str = ""
    token: str = ""
    password: str = ""
    join_timeout_s: float = 15.0  # cpu_host.relay_join_timeout_s
    client: CoopClient | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def status(self, c: Call) -> int:
        return 0 if not self.relay else (2 if self.client is not None else 1)

    def connect(self, c: Call) -> int:
        from relay import tokens

        if not self.relay:
            return E_OFFLINE
        with self.lock:
            if self.client is None:
                try:
                    token = tokens.from_text(self.token)
                    is_host = _is_host_token(token)
                    address = parse_address(self.relay)
                except (ValueError, NxError) as e:
                    raise GuestError(f"co-op settings: {e}") from None
                try:
                    client = CoopClient(address, handshake_timeout_s=self.join_timeout_s)
                except CoopError as e:
                    return e.code
                try:
                    # a joiner waits for the room (players start in any order), within the deadline
                    slot = client.open(token, self.password) if is_host else client.join(token, self.password, wait_for_room=True)
                except CoopError as e:
                    client.close()
                    return e.code
                self.client = client
            else:
                slot = self.client.slot
        c.u32(c.arg(0), slot, "slot out")
        return 0

    def send(self, c: Call) -> int:
        cl = self.client
        if cl is None:
            return E_NOT_CONNECTED
        dst, channel, data, size, reliable = c.sarg32(0), c.arg32(1), c.arg(2), c.arg(3), c.arg32(4)
        if size > MAX_PAYLOAD:
            return 3
        payload = c.read(data, size, "nxcoopSend payload")
        try:
            cl.send(ALL if dst < 0 else dst, channel & 0xFF, payload, bool(reliable))
        except CoopError as e:
            return e.code
        return 0

    def receive(self, c: Call) -> int:
        """-> payload size (copied into the buffer, cut to its capacity), or -1 when nothing waits."""
        cl = self.client
        if cl is None:
            return -1 & 0xFFFFFFFFFFFFFFFF
        m = cl.recv(timeout=0)
        if m is None:
            return -1 & 0xFFFFFFFFFFFFFFFF
        c.u32(c.arg(0), m.src, "source slot out")
        c.u32(c.arg(1), m.channel, "channel out")
        cap = c.arg(3)
        c.write(c.arg(2), m.payload[:cap], "nxcoopReceive buffer")
        return len(m.payload)

    def roster(self, c: Call) -> int:
        cl = self.client
        mask = 0
        if cl is not None:
            for slot in cl.roster:
                mask |= 1 << slot
        c.u32(c.arg(0), mask, "roster out")
        return 0 if cl is not None else E_NOT_CONNECTED

    def leave(self, c: Call) -> None:
        with self.lock:
            if self.client is not None:
                self.client.leave()
                self.client.close()
                self.client = None

    def functions(self) -> list[HostFunction]:
        F = HostFunction
        return [
            F("nxcoopStatus", "nxcoopStatus()", self.status),
            F("nxcoopConnect", "nxcoopConnect(int32_t *slot)", self.connect, blocking=True),
            F("nxcoopSend", "nxcoopSend(int dst, unsigned channel, const void *data, size_t size, int reliable)", self.send),
            F("nxcoopReceive", "nxcoopReceive(int32_t *src, uint32_t *channel, void *buf, size_t cap)", self.receive),
            F("nxcoopRoster", "nxcoopRoster(uint32_t *mask)", self.roster),
            F("nxcoopLeave", "nxcoopLeave()", self.leave, blocking=True),
        ]


def _is_host_token(token: bytes) -> bool:
    """Whether a token lets its player open the room: bit 0 of its flags byte (offset 1, see
    relay/tokens.py).  The relay checks the signature; the client only reads the flag."""
    from relay import tokens

    if len(token) < 2:
        raise ValueError(f"token of {len(token)} bytes is too short")
    return bool(token[1] & tokens.T_HOST)
