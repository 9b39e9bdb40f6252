"""Helpers of the relay suites: a real relay on loopback (its own thread), tokens, metrics.
(A module of its own name: every test folder has a conftest.py, so ``import conftest`` is ambiguous.)"""

from __future__ import annotations

import socket
import struct
import threading
import time
import urllib.request
from typing import Callable, Self

from prometheus_client.parser import text_string_to_metric_families

from relay import tokens
from relay.metrics import MetricsServer
from relay.server import RelayConfig, RelayServer

SECRET = b"test-secret-0123456789abcdef"


class Relay:
    def __init__(self, config: RelayConfig) -> None:
        self.server = RelayServer(config, SECRET)
        self.metrics = MetricsServer("127.0.0.1:0", lambda: self.server.snapshot).start()
        self.thread = threading.Thread(target=self.server.serve, name="relay", daemon=True)
        self.thread.start()

    @property
    def address(self) -> tuple[str, int]:
        return self.server.address

    def token(self, room: str, player: str, host: bool = False, ttl: int = 60) -> bytes:
        return tokens.issue(SECRET, room, player, ttl, host)

    def scrape(self) -> dict[tuple[str, tuple], float]:
        """Samples of /metrics as parsed by prometheus_client (an independent parser), after
        the loop has published a fresh snapshot."""
        t = time.time()
        deadline = time.monotonic() + 5
        while self.server.snapshot.time <= t and time.monotonic() < deadline:
            time.sleep(0.02)
        host, port = self.metrics.address
        text = urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5).read().decode()
        out = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    def drops(self, reason: str) -> float:
        return self.scrape()[("relay_dropped_packets_total", (("reason", reason),))]

    def alive(self) -> bool:
        return self.thread.is_alive()

    def close(self) -> None:
        self.server.stop()
        self.thread.join(timeout=5)
        self.metrics.close()


def wait_for(cond: Callable[[], object], timeout: float = 5.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def udp_rx_queue(addr: tuple[str, int]) -> int:
    """Bytes waiting in the receive queue of the IPv4 UDP socket bound to ``addr`` (the kernel's
    rx_queue column of /proc/net/udp, man 5 proc).  0 means whoever owns the socket has read every
    datagram sent to it so far (or the kernel dropped it, which /metrics counts)."""
    local = "%08X:%04X" % (int.from_bytes(socket.inet_aton(addr[0]), "little"), addr[1])
    with open("/proc/net/udp") as f:
        next(f)
        for line in f:
            cols = line.split()
            if cols[1] == local:
                return int(cols[4].split(":")[1], 16)
    raise AssertionError(f"no /proc/net/udp entry for {addr[0]}:{addr[1]}")


def wait_read(relay: "Relay", what: str = "the relay to read what was sent", timeout: float = 10.0) -> None:
    """Until the relay's socket queue is empty: a burst is paced by what the relay has read, not
    by a guess at how fast it reads (a relay thread starved of CPU on a loaded machine would
    otherwise see its queue overflow, and the test count kernel drops as the relay's doing)."""
    wait_for(lambda: udp_rx_queue(relay.address) == 0, timeout=timeout, what=what)


class LegitProbe:
    """Legitimate traffic during an attack: ``a`` sends numbered, time-stamped unreliable DATA to
    ``b``'s slot at ``rate`` per second on one thread, another drains ``b``; ``result()`` gives
    loss and latency p99 (one host: both ends read the same monotonic clock).  Bounded: at most
    ``rate * 60`` messages."""

    def __init__(self, a, b, rate: float = 200.0, channel: int = 7) -> None:
        self.a, self.b, self.rate, self.channel = a, b, rate, channel
        self.sent = 0
        self.latency: dict[int, float] = {}
        self._stop_send, self._stop_recv = threading.Event(), threading.Event()
        self._sender = threading.Thread(target=self._send, daemon=True)
        self._receiver = threading.Thread(target=self._recv, daemon=True)

    def _send(self) -> None:
        nxt = time.monotonic()
        while not self._stop_send.is_set() and self.sent < self.rate * 60:
            self.a.send(self.b.slot, self.channel, struct.pack("<Id", self.sent, time.monotonic()))
            self.sent += 1
            nxt += 1.0 / self.rate
            time.sleep(max(0.0, nxt - time.monotonic()))

    def _recv(self) -> None:
        while not self._stop_recv.is_set():
            m = self.b.recv(timeout=0.05)
            if m and m.channel == self.channel and len(m.payload) == 12:
                k, t0 = struct.unpack("<Id", m.payload)
                self.latency[k] = time.monotonic() - t0

    def __enter__(self) -> Self:
        self._sender.start()
        self._receiver.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # Stop sending, then receive until the last message sent has arrived (what was in flight
        # with it has too: one path, in order), for at most 5 s in case that one was lost.  A
        # fixed pause here left late messages (a loaded machine) in b's queue for the next reader
        # and counted them lost.
        self._stop_send.set()
        self._sender.join(timeout=5)
        deadline = time.monotonic() + 5
        while self.sent and self.sent - 1 not in self.latency and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # a message overtaken by the last one (rare on loopback) still counts
        self._stop_recv.set()
        self._receiver.join(timeout=5)

    def result(self) -> tuple[float, float]:
        """(loss fraction, latency p99 in ms) over what was sent."""
        lat = sorted(self.latency.values())
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("inf")
        return 1 - len(lat) / max(1, self.sent), p99


def report(test: str, **figures: object) -> None:
    """One line of figures per hostile test (shown with ``pytest -s``; the lead copies them)."""
    print(f"\nFIGURES {test}: " + " ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
