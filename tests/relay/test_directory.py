"""Scale-out on real components: relay processes on 127.0.0.1 and 127.0.0.2 as two "hosts"
sharing a room directory in a real redis-server; one relay is killed (SIGKILL) with a room in
play, and its players, timed out, find the room's new relay through the directory and rejoin
with the tokens they hold.  And ``--workers 2``: two processes on one host, rooms spread by
the directory, a killed worker restarted by its supervisor."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redisfix import RedisServer
from relaytest import report

from cpu_host.coop import CoopClient, CoopError
from relay import tokens
from relay.directory import Directory

ROOT = Path(__file__).resolve().parents[2]
SECRET = "directory-test-secret-0123456789"
TTL_MS = 600


@pytest.fixture
def redis_url(tmp_path):
    r = RedisServer(tmp_path)
    yield r.url
    r.close()


def relay_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NXRECOMP_RELAY_")}
    env.update(NXRECOMP_RELAY_SECRET=SECRET, NXRECOMP_RELAY_HEARTBEAT_MS="200", NXRECOMP_RELAY_TIMEOUT_MS="1500",
               NXRECOMP_RELAY_SEAT_TAKEOVER_MS="600", NXRECOMP_RELAY_DIRECTORY_TTL_MS=str(TTL_MS), PYTHONPATH=str(ROOT))
    return env


def start(args: list[str], lines: int = 1) -> tuple[subprocess.Popen, list[tuple[str, int]]]:
    proc = subprocess.Popen([sys.executable, "-m", "nxrecomp", "relay", *args], cwd=ROOT, env=relay_env(),
                            stdout=subprocess.PIPE, text=True)
    addrs = []
    for _ in range(lines):
        m = re.match(r"relay listening on ([\d.]+):(\d+)", proc.stdout.readline())
        assert m, "relay did not start"
        addrs.append((m[1], int(m[2])))
    return proc, addrs


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def hostport(addr: str) -> tuple[str, int]:
    h, p = addr.rsplit(":", 1)
    return h, int(p)


def wait_until(cond, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def closed(c: CoopClient, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ev = c.poll_event(timeout=0.1)
        if ev and ev.kind == "closed":
            return ev.name
    raise AssertionError("client never saw its relay go")


def join_room(d: Directory, room: str, player: str, host: bool) -> tuple[CoopClient, str]:
    """What a game does: ask the directory where the room is, join there (retrying while the
    host has not reopened it yet)."""
    tok = tokens.issue(SECRET.encode(), room, player, 60, host=host)
    deadline = time.monotonic() + 10
    while True:
        addr = d.assign(room)
        c = CoopClient(hostport(addr), handshake_timeout_s=2)
        try:
            c.open(tok) if host else c.join(tok)
            return c, addr
        except CoopError:
            c.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def exchange(a: CoopClient, b: CoopClient, tag: bytes) -> None:
    wait_until(lambda: len(a.roster) == 2 and len(b.roster) == 2, 5, "roster")
    a.send(b.slot, 1, tag, reliable=True)
    m = b.recv(timeout=5)
    assert m and m.payload == tag


def test_room_moves_when_its_relay_dies(redis_url):
    d = Directory(redis_url, TTL_MS)
    pa, [addr_a] = start(["--listen", "127.0.0.1:0", "--metrics", "", "--directory", redis_url])
    pb, [addr_b] = start(["--listen", "127.0.0.2:0", "--metrics", "", "--directory", redis_url])
    clients = []
    try:
        live = wait_until(lambda: len(d.relays()) == 2 and d.relays(), 5, "both relays in the directory")
        assert set(live) == {f"{h}:{p}" for h, p in (addr_a, addr_b)}
        # two rooms: the directory spreads them over the two relays
        a, where = join_room(d, "doomed", "a", host=True)
        b, where_b = join_room(d, "doomed", "b", host=False)
        x, other = join_room(d, "safe", "x", host=True)
        y, _ = join_room(d, "safe", "y", host=False)
        clients += [a, b, x, y]
        assert where == where_b and other != where
        exchange(a, b, b"before")
        victim, survivor = (pa, pb) if where == "{}:{}".format(*addr_a) else (pb, pa)
        t0 = time.monotonic()
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        # the players' clients time out (no PONG), the directory entry expires (no refresh)
        assert closed(a, 5) == "timeout" and closed(b, 5) == "timeout"
        wait_until(lambda: d.lookup("doomed") != where, 5, "room entry to expire")
        a2, new = join_room(d, "doomed", "a", host=True)
        b2, new_b = join_room(d, "doomed", "b", host=False)
        clients += [a2, b2]
        moved_s = time.monotonic() - t0
        assert new == new_b == other and d.lookup("doomed") == other
        exchange(a2, b2, b"after")
        exchange(x, y, b"untouched")                # the survivor's own room never noticed
        assert survivor.poll() is None and set(d.relays()) == {other}
        report("room_moved", ttl_ms=TTL_MS, client_timeout_ms=1500, kill_to_rejoined_s=f"{moved_s:.2f}")
    finally:
        for c in clients:
            c.close()
        stop(pa), stop(pb)
    # a graceful stop gives the rooms back at once (no TTL wait)
    assert d.lookup("safe") is None and d.relays() == {}


def udp_owner(supervisor: int, port: int) -> int:
    """The child of ``supervisor`` whose socket is bound to UDP ``port`` (via /proc inodes)."""
    inodes = set()
    with open("/proc/net/udp") as f:
        next(f)
        for line in f:
            cols = line.split()
            if int(cols[1].split(":")[1], 16) == port:
                inodes.add(cols[9])
    kids = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    for pid in map(int, kids):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in {f"socket:[{i}]" for i in inodes}:
                    return pid
            except OSError:
                pass
    raise AssertionError(f"no worker owns UDP port {port}")


def test_two_workers_share_rooms_and_a_dead_worker_restarts(redis_url):
    d = Directory(redis_url, TTL_MS)
    proc, addrs = start(["--workers", "2", "--listen", "127.0.0.1:0", "--metrics", "", "--directory", redis_url], lines=2)
    clients = []
    try:
        assert len(set(addrs)) == 2
        wait_until(lambda: len(d.relays()) == 2, 5, "both workers in the directory")
        placed = {}
        for room in ("w0", "w1"):
            h, where = join_room(d, room, "h", host=True)
            g, _ = join_room(d, room, "g", host=False)
            clients += [h, g]
            exchange(h, g, room.encode())
            placed[room] = where
        assert set(placed.values()) == {f"{h}:{p}" for h, p in addrs}        # one room per worker
        # kill the worker of w0: the supervisor restarts it on the same port; its players rejoin
        os.kill(udp_owner(proc.pid, hostport(placed["w0"])[1]), signal.SIGKILL)
        h, g = clients[:2]
        assert closed(h, 5) == "timeout" and closed(g, 5) == "timeout"
        wait_until(lambda: len(d.relays()) == 2 and d.lookup("w0") != placed["w0"], 10, "worker restarted, room expired")
        h2, where = join_room(d, "w0", "h", host=True)
        g2, _ = join_room(d, "w0", "g", host=False)
        clients += [h2, g2]
        exchange(h2, g2, b"w0-again")
        exchange(clients[2], clients[3], b"w1-untouched")
    finally:
        for c in clients:
            c.close()
        stop(proc)
    assert proc.returncode == 0 and d.relays() == {}
