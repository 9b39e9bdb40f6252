"""Load test of the co-op relay on loopback: rooms of 8 players, every player sending
unreliable DATA to ALL at a game-like rate; the relay runs as its own process(es)
(`nxrecomp relay`), the load generator (C, relay/loadgen.c) on the last core.

    .venv/bin/python bench/relay_load.py [--rooms 8,16,32,...] [--rate 60] [--seconds 5]
                                         [--topology w1,w2,dir2] [--impl c|python]

Topologies, in one run: ``w1`` one relay process pinned to core 0; ``w2`` ``--workers 2`` (two
processes, ports side by side, rooms alternating between them, cores 0 and 1); ``dir2`` two
relay processes as two "hosts" on 127.0.0.1 and 127.0.0.2 sharing a room directory in a real
redis-server (started here on a free loopback port), every room placed by ``Directory.assign``
and joined at the address it names.  On a 2-core machine the second worker shares its core
with the generator: the 2-worker rows are then a lower bound.

For each room count it prints: packets forwarded per second (counted by the receivers), the
ratio to the 100k pps target, the relay's CPU use (from /proc), forwarded packets per CPU-second
of the relay, loss, and the added latency p50/p99 (send stamp -> kernel receive stamp at the
receiving player, so it includes two loopback hops), plus the relay's own p99 from /metrics.
Every round runs a fresh relay process so one round's backlog can't spill into the next.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cffi

from relay import protocol as P
from relay import tokens
from relay.build import build

ALL_CPUS = sorted(os.sched_getaffinity(0))  # before main() pins this process to the last one
NHIST = 200_000  # 1 us buckets up to 200 ms
TARGET_PPS = 100_000
CDEF = """
typedef struct { uint64_t sent, received, bad; double elapsed; } lg_result;
int lg_run(const int *fds, const uint64_t *sids, int n, double rate, double seconds, int payload,
           uint32_t *hist, uint32_t nhist, lg_result *r);
"""


def cpu_seconds(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def handshake(sock: socket.socket, relay: tuple[str, int], token: bytes, flags: int) -> P.Welcome:
    for _ in range(20):
        sock.sendto(P.encode_join(token, flags=flags), relay)
        try:
            cookie = P.decode_challenge(sock.recv(2048))
            sock.sendto(P.encode_join(token, cookie=cookie, flags=flags), relay)
            reply = sock.recv(2048)
        except TimeoutError:
            continue
        if P.packet_type(reply) == P.WELCOME:
            return P.decode_welcome(reply)
        raise SystemExit(f"relay refused a bench player: {reply.hex()}")
    raise SystemExit("relay did not answer the handshake")


def percentile(hist, total: int, q: float) -> int:
    want, cum = q * total, 0
    for us, n in enumerate(hist):
        cum += n
        if cum >= want:
            return us
    return len(hist)


def relay_stats(metrics_urls: list[str]) -> tuple[float, int]:
    """(the relays' own forward-latency p99 bucket bound, summed over relays; kernel drops)."""
    total: dict[float, float] = {}
    kdrops = 0
    for url in metrics_urls:
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        for m in re.finditer(r'relay_forward_latency_seconds_bucket\{le="([^"]+)"\} (\S+)', text):
            le = float(m[1]) if m[1] != "+Inf" else float("inf")
            total[le] = total.get(le, 0.0) + float(m[2])
        k = re.search(r"^relay_kernel_dropped_packets_total (\S+)", text, re.MULTILINE)
        kdrops += int(float(k[1])) if k else 0
    buckets = sorted(total.items())
    for le, cum in buckets:
        if cum >= 0.99 * buckets[-1][1]:
            return le, kdrops
    return float("inf"), kdrops


def start_relay(cmd: list[str], env: dict, lines: int) -> tuple[subprocess.Popen, list[tuple[str, int]], list[str]]:
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, ALL_CPUS)  # the relay (a --workers supervisor) inherits every core
    try:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    finally:
        os.sched_setaffinity(0, mine)
    addrs, metrics = [], []
    for _ in range(lines):
        line = proc.stdout.readline()
        m = re.match(r"relay listening on ([\d.]+):(\d+) metrics on ([\d.]+):(\d+)", line)
        if not m:
            proc.kill()
            raise SystemExit(f"relay did not start: {line!r}")
        addrs.append((m[1], int(m[2])))
        metrics.append(f"http://{m[3]}:{m[4]}/metrics")
    return proc, addrs, metrics


def relay_pids(proc: subprocess.Popen, workers: bool) -> list[int]:
    if not workers:
        return [proc.pid]
    return [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]


class Redis:
    """A throwaway redis-server on a free loopback port (Debian's package)."""

    def __init__(self) -> None:
        import shutil
        import tempfile

        exe = shutil.which("redis-server")
        if not exe:
            raise SystemExit("topology dir2 needs redis-server (apt-get install redis-server)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.dir = tempfile.TemporaryDirectory()
        self.proc = subprocess.Popen(
            [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", self.dir.name],
            stdout=subprocess.DEVNULL,
        )
        self.url = f"redis://127.0.0.1:{port}/0"
        import redis

        for _ in range(100):
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()
        self.dir.cleanup()


def round_(rooms: int, rate: float, seconds: float, payload: int, lg, ffi, impl: str, topology: str = "w1") -> dict:
    secret = secrets.token_hex(16)
    env = dict(os.environ, NXRECOMP_RELAY_SECRET=secret, NXRECOMP_RELAY_MAX_ROOMS=str(max(64, rooms)))
    relay_cmd = [sys.executable, "-m", "nxrecomp", "relay", "--metrics", "127.0.0.1:0"]
    procs: list[tuple[subprocess.Popen, bool]] = []
    redis_srv = None
    socks: list[socket.socket] = []
    try:
        if impl == "python":
            p, relays, metrics = start_relay([sys.executable, str(ROOT / "bench" / "relay_pyforward.py")], env, 1)
            procs.append((p, False))
        elif topology in ("w1", "w2"):
            n = int(topology[1:])
            p, relays, metrics = start_relay(relay_cmd + ["--listen", "127.0.0.1:0", "--workers", str(n)], env, n)
            procs.append((p, n > 1))
        elif topology == "dir2":
            from relay.directory import Directory

            redis_srv = Redis()
            relays, metrics = [], []
            for host in ("127.0.0.1", "127.0.0.2"):
                p, a, m = start_relay(relay_cmd + ["--listen", f"{host}:0", "--directory", redis_srv.url], env, 1)
                procs.append((p, False))
                relays += a
                metrics += m
            directory = Directory(redis_srv.url)
            deadline = time.monotonic() + 5
            while len(directory.relays()) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        else:
            raise SystemExit(f"unknown topology {topology!r}")
        pids = [pid for p, w in procs for pid in relay_pids(p, w)]
        for k, pid in enumerate(pids):  # relay k on core k (the generator has the last one)
            os.sched_setaffinity(pid, {ALL_CPUS[k % len(ALL_CPUS)]})
        sids = []
        for r in range(rooms):
            if topology == "dir2" and impl == "c":
                h, port = directory.assign(f"room{r}").rsplit(":", 1)
                relay = (h, int(port))
            else:
                relay = relays[r % len(relays)]
            for p in range(8):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind((f"127.1.{r}.{p + 1}", 0))  # every player its own address, as on the internet
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
                s.settimeout(1)
                tok = tokens.issue(secret.encode(), f"room{r}", f"p{p}", 600, host=p == 0)
                w = handshake(s, relay, tok, P.J_OPEN if p == 0 else 0)
                s.connect(relay)
                s.setblocking(False)
                socks.append(s)
                sids.append(w.session)
        time.sleep(0.2)
        for s in socks:  # PEER events from the joins
            try:
                while s.recv(2048):
                    pass
            except BlockingIOError:
                pass
        fds = ffi.new("int[]", [s.fileno() for s in socks])
        sid_arr = ffi.new("uint64_t[]", sids)
        hist = ffi.new("uint32_t[]", NHIST)
        res = ffi.new("lg_result *")
        cpu0 = sum(cpu_seconds(p) for p in pids)
        rc = lg.lg_run(fds, sid_arr, len(socks), rate, seconds, payload, hist, NHIST, res)
        cpu = sum(cpu_seconds(p) for p in pids) - cpu0
        if rc != 0:
            raise SystemExit(f"lg_run failed: {rc}")
        relay_p99, kdrops = relay_stats(metrics) if impl == "c" else (float("nan"), 0)
        expected = res.sent * 7
        got = res.received
        return dict(
            topology=topology if impl == "c" else "py",
            rooms=rooms,
            players=len(socks),
            offered=expected / res.elapsed,
            forwarded=got / res.elapsed,
            loss=1 - got / expected if expected else 0.0,
            cpu=cpu / (res.elapsed + 0.3),
            per_cpu_s=got / cpu if cpu else float("inf"),
            p50=percentile(hist, got, 0.50),
            p99=percentile(hist, got, 0.99),
            relay_p99_le=relay_p99,
            kdrops=kdrops,
            relays=len(pids),
        )
    finally:
        for p, _ in procs:
            p.terminate()
        for p, _ in procs:
            p.wait(timeout=15)
        if redis_srv:
            redis_srv.close()
        for s in socks:
            s.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooms", default="8,16,32,48,64", help="comma-separated room counts to try")
    ap.add_argument("--rate", type=float, default=60.0, help="packets/s each player sends (default 60: one per frame)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--payload", type=int, default=64, help="DATA payload bytes (>= 8)")
    ap.add_argument(
        "--impl",
        choices=("c", "python"),
        default="c",
        help="relay fast path: c (the product) or python (the anchor, bench/relay_pyforward.py)",
    )
    ap.add_argument(
        "--topology",
        default="w1,w2,dir2",
        help="comma-separated: w1 (one relay), w2 (--workers 2), dir2 (two relays + Redis directory)",
    )
    args = ap.parse_args()
    if len(ALL_CPUS) < 2:
        print("warning: fewer than 2 CPUs: relay and load generator share one", file=sys.stderr)
    elif len(ALL_CPUS) < 3:
        print("warning: 2 CPUs: a second relay shares its core with the load generator", file=sys.stderr)
    os.sched_setaffinity(0, {ALL_CPUS[-1]})
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lg = ffi.dlopen(str(build("loadgen", ["loadgen.c"])))
    print(
        f"relay load test ({args.impl} fast path): rooms of 8, each player {args.rate:g} pkt/s to ALL, payload {args.payload} B, "
        f"{args.seconds:g} s per round; relay k pinned to CPU k, generator to CPU {ALL_CPUS[-1]}"
    )
    print(
        f"{'topo':>4} {'rooms':>5} {'players':>7} {'offered/s':>10} {'fwd/s':>10} {'x target':>8} {'relay CPU':>9} "
        f"{'fwd/CPU-s':>10} {'loss':>7} {'p50 us':>7} {'p99 us':>7} {'relay p99 <=':>12} {'kdrops':>7}"
    )
    for topology in args.topology.split(",") if args.impl == "c" else ["w1"]:
        for rooms in (int(x) for x in args.rooms.split(",")):
            r = round_(rooms, args.rate, args.seconds, args.payload, lg, ffi, args.impl, topology)
            print(
                f"{r['topology']:>4} {r['rooms']:>5} {r['players']:>7} {r['offered']:>10.0f} {r['forwarded']:>10.0f} "
                f"{r['forwarded'] / TARGET_PPS:>8.2f} {r['cpu'] * 100:>8.0f}% {r['per_cpu_s']:>10.0f} "
                f"{r['loss'] * 100:>6.2f}% {r['p50']:>7} {r['p99']:>7} {r['relay_p99_le'] * 1e6:>10.0f}us "
                f"{r['kdrops']:>7}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
