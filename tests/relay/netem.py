"""A lossy, reordering UDP path between one client and the relay (real sockets on loopback).

The client talks to ``address``; each datagram, in either direction, is dropped with
probability ``loss`` or else held for a random 0..``jitter_s`` (so later ones overtake it)
before being sent on.  ``rebind()`` moves the relay-side socket to a new port, which is what a
NAT rebinding or a change of network looks like to the relay.
"""

from __future__ import annotations

import heapq
import random
import select
import socket
import threading
import time


class LossyPath:
    def __init__(self, relay: tuple[str, int], loss: float, jitter_s: float, seed: int) -> None:
        self.relay, self.loss, self.jitter_s = relay, loss, jitter_s
        self.rng = random.Random(seed)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.client: tuple[str, int] | None = None
        self.dropped = self.passed = self.overtaken = 0
        self._latest_due = 0.0
        self._queue: list[tuple[float, int, socket.socket, bytes, tuple]] = []
        self._n = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        return self.front.getsockname()

    def rebind(self) -> None:
        with self._lock:
            old, self.back = self.back, socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        old.close()

    def _schedule(self, sock: socket.socket, data: bytes, to: tuple) -> None:
        if self.rng.random() < self.loss:
            self.dropped += 1
            return
        self.passed += 1
        self._n += 1
        due = time.monotonic() + self.rng.random() * self.jitter_s
        if due < self._latest_due:
            self.overtaken += 1  # leaves before one that came in earlier: reordered
        self._latest_due = max(self._latest_due, due)
        heapq.heappush(self._queue, (due, self._n, sock, data, to))

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                back = self.back
            wait = 0.005
            if self._queue:
                wait = max(0.0, min(wait, self._queue[0][0] - time.monotonic()))
            try:
                ready, _, _ = select.select([self.front, back], [], [], wait)
                for s in ready:
                    data, addr = s.recvfrom(65536)
                    if s is self.front:
                        self.client = addr
                        self._schedule(None, data, self.relay)  # type: ignore[arg-type]
                    elif self.client:
                        self._schedule(self.front, data, self.client)
                now = time.monotonic()
                while self._queue and self._queue[0][0] <= now:
                    _, _, sock, data, to = heapq.heappop(self._queue)
                    (sock or back).sendto(data, to)
            except OSError:
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.front.close()
        self.back.close()
