"""Helpers of the relay suites: a real relay on loopback (its own thread), tokens, metrics.
(A module of its own name: every test folder has a conftest.py, so ``import conftest`` is ambiguous.)"""
from __future__ import annotations

import threading
import time
import urllib.request
from typing import Callable

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
