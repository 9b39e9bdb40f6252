"""Load test of the co-op relay on loopback: rooms of 8 players, every player sending
unreliable DATA to ALL at a game-like rate; the relay runs as its own process (`nxrecomp relay`)
pinned to one core, the load generator (C, relay/loadgen.c) on another.

    .venv/bin/python bench/relay_load.py [--rooms 8,16,32,...] [--rate 60] [--seconds 5]

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

import cffi  # noqa: E402

from relay import protocol as P  # noqa: E402
from relay import tokens  # noqa: E402
from relay.build import build  # noqa: E402

NHIST = 200_000           # 1 us buckets up to 200 ms
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
        except socket.timeout:
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


def relay_hist_p99(metrics_url: str) -> float:
    text = urllib.request.urlopen(metrics_url, timeout=5).read().decode()
    buckets = [(float(m[1]) if m[1] != "+Inf" else float("inf"), float(m[2]))
               for m in re.finditer(r'relay_forward_latency_seconds_bucket\{le="([^"]+)"\} (\S+)', text)]
    total = buckets[-1][1]
    for le, cum in buckets:
        if cum >= 0.99 * total:
            return le
    return float("inf")


def round_(rooms: int, rate: float, seconds: float, payload: int, lg, ffi, impl: str) -> dict:
    secret = secrets.token_hex(16)
    env = dict(os.environ, NXRECOMP_RELAY_SECRET=secret, NXRECOMP_RELAY_MAX_ROOMS=str(max(64, rooms)))
    cmd = ([sys.executable, "-m", "nxrecomp", "relay", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]
           if impl == "c" else [sys.executable, str(ROOT / "bench" / "relay_pyforward.py")])
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    socks: list[socket.socket] = []
    try:
        line = proc.stdout.readline()
        m = re.match(r"relay listening on ([\d.]+):(\d+) metrics on ([\d.]+):(\d+)", line)
        if not m:
            raise SystemExit(f"relay did not start: {line!r}")
        relay, metrics = (m[1], int(m[2])), f"http://{m[3]}:{m[4]}/metrics"
        os.sched_setaffinity(proc.pid, {0})
        sids = []
        for r in range(rooms):
            for p in range(8):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind((f"127.1.{r}.{p + 1}", 0))       # every player its own address, as on the internet
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
                s.settimeout(1)
                tok = tokens.issue(secret.encode(), f"room{r}", f"p{p}", 600, host=p == 0)
                w = handshake(s, relay, tok, P.J_OPEN if p == 0 else 0)
                s.connect(relay)
                s.setblocking(False)
                socks.append(s)
                sids.append(w.session)
        time.sleep(0.2)
        for s in socks:                                 # PEER events from the joins
            try:
                while s.recv(2048):
                    pass
            except BlockingIOError:
                pass
        fds = ffi.new("int[]", [s.fileno() for s in socks])
        sid_arr = ffi.new("uint64_t[]", sids)
        hist = ffi.new("uint32_t[]", NHIST)
        res = ffi.new("lg_result *")
        cpu0 = cpu_seconds(proc.pid)
        rc = lg.lg_run(fds, sid_arr, len(socks), rate, seconds, payload, hist, NHIST, res)
        cpu = cpu_seconds(proc.pid) - cpu0
        if rc != 0:
            raise SystemExit(f"lg_run failed: {rc}")
        relay_p99 = relay_hist_p99(metrics) if impl == "c" else float("nan")
        expected = res.sent * 7
        got = res.received
        return dict(rooms=rooms, players=len(socks), offered=expected / res.elapsed, forwarded=got / res.elapsed,
                    loss=1 - got / expected if expected else 0.0, cpu=cpu / (res.elapsed + 0.3),
                    per_cpu_s=got / cpu if cpu else float("inf"),
                    p50=percentile(hist, got, 0.50), p99=percentile(hist, got, 0.99), relay_p99_le=relay_p99)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for s in socks:
            s.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooms", default="8,16,32,48,64", help="comma-separated room counts to try")
    ap.add_argument("--rate", type=float, default=60.0, help="packets/s each player sends (default 60: one per frame)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--payload", type=int, default=64, help="DATA payload bytes (>= 8)")
    ap.add_argument("--impl", choices=("c", "python"), default="c",
                    help="relay fast path: c (the product) or python (the anchor, bench/relay_pyforward.py)")
    args = ap.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        print("warning: fewer than 2 CPUs: relay and load generator share one", file=sys.stderr)
    os.sched_setaffinity(0, {1} if 1 in os.sched_getaffinity(0) else os.sched_getaffinity(0))
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lg = ffi.dlopen(str(build("loadgen", ["loadgen.c"])))
    print(f"relay load test ({args.impl} fast path): rooms of 8, each player {args.rate:g} pkt/s to ALL, payload {args.payload} B, "
          f"{args.seconds:g} s per round; relay pinned to CPU 0, generator to CPU 1")
    print(f"{'rooms':>5} {'players':>7} {'offered/s':>10} {'fwd/s':>10} {'x target':>8} {'relay CPU':>9} "
          f"{'fwd/CPU-s':>10} {'loss':>7} {'p50 us':>7} {'p99 us':>7} {'relay p99 <=':>12}")
    for rooms in (int(x) for x in args.rooms.split(",")):
        r = round_(rooms, args.rate, args.seconds, args.payload, lg, ffi, args.impl)
        print(f"{r['rooms']:>5} {r['players']:>7} {r['offered']:>10.0f} {r['forwarded']:>10.0f} "
              f"{r['forwarded'] / TARGET_PPS:>8.2f} {r['cpu'] * 100:>8.0f}% {r['per_cpu_s']:>10.0f} "
              f"{r['loss'] * 100:>6.2f}% {r['p50']:>7} {r['p99']:>7} {r['relay_p99_le'] * 1e6:>10.0f}us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
