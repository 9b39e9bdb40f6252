"""Scale-out on real components: relay processes on 127.0.0.1 and 127.0.0.2 as two "hosts"
sharing a room directory in a real redis-server; one relay is killed (SIGKILL) with a room in
play, and its players, timed out, find the room's new relay through the directory and rejoin
with the tokens they hold.  And ``--workers 2``: two processes on one host, rooms spread by
the directory, a killed worker restarted by its supervisor."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from redisfix import RedisServer
from relaytest import report

from cpu_host.coop import CoopClient, CoopError
from relay import tokens
from relay.directory import Directory
from relay.steer import room_worker

ROOT = Path(__file__).resolve().parents[2]
SECRET = "directory-test-secret-0123456789"
TTL_MS = 600
METRICS: dict = {}  # (relay address, worker index) -> its /metrics URL


@pytest.fixture
def redis_url(tmp_path):
    r = RedisServer(tmp_path)
    yield r.url
    r.close()


def relay_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NXRECOMP_RELAY_")}
    env.update(
        NXRECOMP_RELAY_SECRET=SECRET,
        NXRECOMP_RELAY_HEARTBEAT_MS="200",
        NXRECOMP_RELAY_TIMEOUT_MS="1500",
        NXRECOMP_RELAY_SEAT_TAKEOVER_MS="600",
        NXRECOMP_RELAY_DIRECTORY_TTL_MS=str(TTL_MS),
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def start(args: list[str], lines: int = 1, **env: str) -> tuple[subprocess.Popen, list[tuple[str, int]]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "nxrecomp", "relay", *args], cwd=ROOT, env=relay_env(**env), stdout=subprocess.PIPE, text=True
    )
    addrs = []
    for _ in range(lines):
        m = re.match(r"relay listening on ([\d.]+):(\d+)(?: metrics on ([\d.]+):(\d+))?", proc.stdout.readline())
        assert m, "relay did not start"
        addrs.append((m[1], int(m[2])))
        if m[3]:
            METRICS[addrs[-1], len(addrs) - 1] = f"http://{m[3]}:{m[4]}/metrics"
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
    wait_until(lambda: b.slot in a.roster and a.slot in b.roster, 5, "roster")
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
        # matchmaking from the command line names the relay the room is put on.  Its claim must
        # outlast the players' arrival, which no relay refreshes until the room opens: with the
        # relays' 600 ms TTL it expired under load (-n 2) before the next line looked it up, so
        # matchmaking gets a TTL of its own; the relay's claim when the room opens replaces it.
        loc = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "relay", "locate", "doomed", "--directory", redis_url],
            cwd=ROOT,
            env=relay_env(NXRECOMP_RELAY_DIRECTORY_TTL_MS="120000"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert loc.returncode == 0 and loc.stdout.strip() in live and d.lookup("doomed") == loc.stdout.strip()
        # two rooms: the directory spreads them over the two relays
        a, where = join_room(d, "doomed", "a", host=True)
        b, where_b = join_room(d, "doomed", "b", host=False)
        x, other = join_room(d, "safe", "x", host=True)
        y, _ = join_room(d, "safe", "y", host=False)
        clients += [a, b, x, y]
        assert where == where_b == loc.stdout.strip() and other != where
        exchange(a, b, b"before")
        # the room's relay has made matchmaking's claim its own (its TTL, refreshed while it lives)
        wait_until(lambda: 0 < d.r.pttl(d._room("doomed")) <= TTL_MS, 5, "the relay's claim on the room")
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
        exchange(x, y, b"untouched")  # the survivor's own room never noticed
        assert survivor.poll() is None and set(d.relays()) == {other}
        report("room_moved", ttl_ms=TTL_MS, client_timeout_ms=1500, kill_to_rejoined_s=f"{moved_s:.2f}")
    finally:
        for c in clients:
            c.close()
        stop(pa), stop(pb)
    # a graceful stop gives the rooms back at once (no TTL wait)
    assert d.lookup("safe") is None and d.relays() == {}


def udp_owner(supervisor: int, port: int, worker: int | None = None) -> int:
    """The child of ``supervisor`` whose socket is bound to UDP ``port`` (via /proc inodes);
    with a shared port, the one started with ``--worker-index worker``."""
    inodes = set()
    with open("/proc/net/udp") as f:
        next(f)
        for line in f:
            cols = line.split()
            if int(cols[1].split(":")[1], 16) == port:
                inodes.add(cols[9])
    kids = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    for pid in map(int, kids):
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if worker is not None and argv[argv.index(b"--worker-index") + 1] != str(worker).encode():
            continue
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in {f"socket:[{i}]" for i in inodes}:
                    return pid
            except OSError:
                pass
    raise AssertionError(f"no worker owns UDP port {port}")


@pytest.mark.heavy  # the default (shared port) is in CI; this mode is the fallback
def test_two_workers_share_rooms_and_a_dead_worker_restarts(redis_url):
    """relay.worker_ports=each: a port per worker, the directory names each."""
    d = Directory(redis_url, TTL_MS)
    proc, addrs = start(
        ["--workers", "2", "--listen", "127.0.0.1:0", "--metrics", "", "--directory", redis_url],
        lines=2,
        NXRECOMP_RELAY_WORKER_PORTS="each",
    )
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
        assert set(placed.values()) == {f"{h}:{p}" for h, p in addrs}  # one room per worker
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


def rooms_of(url: str) -> int:
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    return int(float(re.search(r"^relay_rooms (\S+)", text, re.M)[1]))


def test_shared_port_workers_steer_each_room_to_one_worker(redis_url):
    """relay.worker_ports=shared (default): two workers on one port, SO_REUSEPORT steered by
    relay.steer's cBPF program.  Every player of a room, each from its own address (so the
    kernel's own 4-tuple hash would scatter them), lands on the room's worker: rooms work, each
    worker holds exactly the rooms room_worker() names, a moved player follows its session,
    and a killed worker's restart (same socket) leaves the other worker's rooms alone."""
    proc, addrs = start(
        ["--workers", "2", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--directory", redis_url], lines=2
    )
    d = Directory(redis_url, TTL_MS)
    clients: list[CoopClient] = []
    try:
        assert addrs[0] == addrs[1]
        relay = addrs[0]
        names = [f"room{i}" for i in range(12)]
        want = [sum(room_worker(r, 2) == w for r in names) for w in (0, 1)]
        assert min(want) >= 3  # both workers have rooms to hold
        rooms = {}
        for k, r in enumerate(names):
            members = []
            for p in range(3):
                c = CoopClient(relay, bind_host=f"127.4.{k}.{p + 1}")
                (c.open if p == 0 else c.join)(tokens.issue(SECRET.encode(), r, f"p{p}", 60, host=p == 0))
                members.append(c)
            clients += members
            rooms[r] = members
            wait_until(lambda m=members: all(len(c.roster) == 3 for c in m), 5, f"roster of {r}")
            exchange(members[0], members[2], r.encode())
        # (the metrics lag the loop by up to 0.25 s)
        held = wait_until(
            lambda: (h := [rooms_of(METRICS[relay, w]) for w in (0, 1)]) == want and h, 3, f"rooms per worker to be {want}"
        )
        # one address in the directory, its two workers' loads added up, every room on it
        wait_until(lambda: d.relays().get("{}:{}".format(*relay), {}).get("rooms") == len(names), 3, "directory load")
        assert d.relays()["{}:{}".format(*relay)]["workers"] == 2 and {d.lookup(r) for r in names} == {"{}:{}".format(*relay)}
        mover = rooms[names[0]][1]
        old = mover._sock.getsockname()
        mover.rebind()
        wait_until(lambda: mover._sock.getsockname() != old, 5, "rebind")
        exchange(mover, rooms[names[0]][0], b"moved")
        # kill worker 1: its rooms' players time out; worker 0's rooms play on; worker 1 comes back
        victim = udp_owner(proc.pid, relay[1], worker=1)
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: _exited(victim), 5, "worker 1 to exit")
        # its /metrics port stays bound (the supervisor's socket) while it is down: no other
        # program's connection can take it before the restart (a worker that bound the port
        # itself could not come back then: the shared-port flake under -n 2)
        with socket.socket() as s, pytest.raises(OSError):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT: only a listener refuses
            s.bind(("127.0.0.1", int(METRICS[relay, 1].rsplit(":", 1)[1].split("/")[0])))
        r1 = next(r for r in names if room_worker(r, 2) == 1)
        r0 = next(r for r in names if room_worker(r, 2) == 0)
        assert closed(rooms[r1][0], 5) == "timeout"
        exchange(rooms[r0][0], rooms[r0][1], b"worker0-untouched")
        a, b = CoopClient(relay), CoopClient(relay)
        clients += [a, b]
        # back: its loop answers a JOIN of r1 (steered to it) with a CHALLENGE.  Its /metrics
        # answered before its loop first read the socket: the JOIN below then timed out (5 s) at
        # load 28 (stress run 14 of 15)
        wait_until(lambda: rooms_of(METRICS[relay, 1]) == 0 if _up(METRICS[relay, 1]) else False, 30, "worker 1's metrics")
        wait_until(lambda: _challenged(relay, tokens.issue(SECRET.encode(), r1, "probe", 60)), 60, "worker 1's loop")
        a.open(tokens.issue(SECRET.encode(), r1, "p0", 60, host=True))
        b.join(tokens.issue(SECRET.encode(), r1, "p1", 60))
        exchange(a, b, b"worker1-again")
        report("shared_port_workers", rooms=len(names), per_worker=held, steered_ok=True)
    finally:
        for c in clients:
            c.close()
        stop(proc)
    assert proc.returncode == 0


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited (gone, or a zombie its parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _challenged(relay: tuple[str, int], token: bytes) -> bool:
    """Whether a cookie-less JOIN with ``token`` gets its CHALLENGE within 0.5 s (the C fast path
    of the worker the JOIN is steered to answers it: that worker's loop runs)."""
    from relay import protocol as P

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(0.5)
        s.sendto(P.encode_join(token), relay)
        try:
            return P.packet_type(s.recv(2048)) == P.CHALLENGE
        except (TimeoutError, socket.timeout):
            return False


def _up(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1).read()
        return True
    except OSError:
        return False
