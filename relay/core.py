"""Python face of the C fast path (``core.c``): one ``FastPath`` per listening socket.

cffi ABI mode (``dlopen``) on a library built by ``relay.build``: no Python headers needed, and
cffi releases the GIL during ``poll`` so clients in the same process (tests) run meanwhile.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import cffi

from relay.build import HERE, build

COUNTER_NAMES = (
    "rx_packets",
    "rx_bytes",
    "tx_packets",
    "tx_bytes",
    "forwarded",
    "pongs",
    "slow_path",
    "addr_changed",
    "malformed",
    "oversize",
    "unknown_session",
    "rate_player",
    "rate_addr",
    "bad_dst",
    "no_peer",
    "stale_peer",
    "slow_full",
    "leave_ignored",
    "send_error",
    "challenges",
    "rebind_challenges",
    "kernel_drops",
    "latency_ns_sum",
)
# Counters above that are drops (the rest are traffic); their names are the metric's reason label.
DROP_REASONS = COUNTER_NAMES[8:18]
SLOW_BUFFER = 256


def _cdef() -> str:
    text = (HERE / "core.h").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return text


def siphash128(key: bytes, data: bytes) -> bytes:
    """SipHash-2-4 with a 16-byte tag, as the C core computes cookies (exposed for its test)."""
    ffi, lib = _lib()
    if len(key) != 16:
        raise ValueError(f"SipHash key of {len(key)} bytes (want 16)")
    out = ffi.new("uint8_t[16]")
    lib.rl_siphash128(key, data, len(data), out)
    return bytes(out)


@functools.cache
def _lib() -> tuple[cffi.FFI, object]:
    ffi = cffi.FFI()
    ffi.cdef(_cdef())
    lib = ffi.dlopen(str(build("relaycore", ["core.c"])))
    if len(COUNTER_NAMES) != lib.RL_NCOUNTERS:
        raise RuntimeError(f"core.h has {lib.RL_NCOUNTERS} counters, core.py names {len(COUNTER_NAMES)}")
    return ffi, lib


@dataclass(frozen=True)
class SlowPacket:
    data: bytes
    addr: bytes  # raw sockaddr, as the kernel gave it


class FastPath:
    """The forwarding table and the batch loop for one socket ``fd``."""

    def __init__(
        self,
        fd: int,
        *,
        max_sessions: int,
        max_rooms: int,
        max_packet: int,
        player_rate: float,
        player_burst: float,
        addr_rate: float,
        addr_burst: float,
    ) -> None:
        self.ffi, self.lib = _lib()
        if not 20 <= max_packet <= self.lib.RL_MAX_PACKET:
            raise ValueError(f"max_packet {max_packet} outside 20..{self.lib.RL_MAX_PACKET}")
        if max_sessions > self.lib.RL_INDEX_MASK + 1:
            raise ValueError(f"max_sessions {max_sessions} above {self.lib.RL_INDEX_MASK + 1}")
        core = self.lib.rl_new(fd, max_sessions, max_rooms, max_packet, player_rate, player_burst, addr_rate, addr_burst)
        if core == self.ffi.NULL:
            raise MemoryError("rl_new failed")
        self.core = self.ffi.gc(core, self.lib.rl_free)
        self.slow = self.ffi.new("rl_slow[]", SLOW_BUFFER)
        self._counters = self.ffi.new("uint64_t[]", self.lib.RL_NCOUNTERS)
        self._hist = self.ffi.new("uint64_t[]", self.lib.RL_NHIST)
        self._expired = self.ffi.new("uint32_t[]", 1024)

    def poll(self, timeout_ms: int, max_batches: int = 32) -> list[SlowPacket]:
        n = self.lib.rl_poll(self.core, timeout_ms, self.slow, SLOW_BUFFER, max_batches)
        out = []
        for i in range(n):
            s = self.slow[i]
            out.append(SlowPacket(bytes(self.ffi.buffer(s.data, s.len)), bytes(self.ffi.buffer(s.addr, s.addrlen))))
        return out

    def set_session(self, idx: int, sid: int, addr: bytes, room: int, slot: int, inc: int) -> None:
        if self.lib.rl_session_set(self.core, idx, sid, addr, len(addr), room, slot, inc) != 0:
            raise ValueError(f"session {idx} room {room} slot {slot} outside the table")

    def set_room_epoch(self, room: int, epoch: int) -> None:
        self.lib.rl_room_epoch(self.core, room, epoch)

    def clear_session(self, idx: int) -> None:
        self.lib.rl_session_clear(self.core, idx)

    def expired(self, timeout_s: float) -> list[int]:
        """Indexes of sessions silent for more than ``timeout_s`` (at most 1024 per call)."""
        n = self.lib.rl_expired(self.core, int(timeout_s * 1e9), self._expired, len(self._expired))
        return list(self._expired[0:n])

    def idle_s(self, idx: int) -> float:
        """Seconds since session ``idx`` last sent a valid DATA/PING (or was bound); -1 if free."""
        ns = self.lib.rl_session_idle_ns(self.core, idx)
        return ns / 1e9 if ns >= 0 else -1.0

    def addr_is(self, idx: int, sid: int, addr: bytes) -> bool:
        return bool(self.lib.rl_session_addr_is(self.core, idx, sid, addr, len(addr)))

    def send(self, addr: bytes, data: bytes) -> None:
        self.lib.rl_send(self.core, addr, len(addr), data, len(data))

    def counters(self) -> dict[str, int]:
        self.lib.rl_read_counters(self.core, self._counters)
        return dict(zip(COUNTER_NAMES, self._counters))

    def latency_hist(self) -> list[int]:
        """Counts of forwarded packets by added latency: bucket i is < 2**i us, the last is the rest."""
        self.lib.rl_read_hist(self.core, self._hist)
        return list(self._hist)
