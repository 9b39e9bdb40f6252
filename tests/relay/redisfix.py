"""A real redis-server (Debian's package) on a free loopback port, for the directory tests."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, tmp: Path) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server not installed (Debian package redis-server; scripts/nx.sh installs it)")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"
        import redis

        r = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while True:
            try:
                r.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise AssertionError("redis-server did not start") from None
                time.sleep(0.05)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
