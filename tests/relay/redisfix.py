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
        import redis

        # A free port is only free until someone binds it: another test (xdist) or program may
        # take it between free_port() and redis-server's bind.  A server that exits at once is
        # started again on another port (3 tries).
        for attempt in range(3):
            self.port = free_port()
            self.proc = subprocess.Popen(
                [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            self.url = f"redis://127.0.0.1:{self.port}/0"
            r = redis.Redis.from_url(self.url)
            deadline = time.monotonic() + 30
            while True:
                try:
                    # ours, not a server that took the port first (INFO's process_id)
                    if r.info("server")["process_id"] == self.proc.pid:
                        return
                    self.proc.kill()
                    self.proc.wait()
                    break
                except redis.ConnectionError:
                    if self.proc.poll() is not None:
                        break  # it could not bind: another port
                    if time.monotonic() > deadline:
                        self.close()
                        raise AssertionError("redis-server did not answer within 30 s") from None
                    time.sleep(0.05)
        raise AssertionError(f"redis-server exited at start 3 times (last on port {self.port}, status {self.proc.returncode})")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
