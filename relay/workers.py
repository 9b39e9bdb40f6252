"""``nxrecomp relay --workers N``: N relay processes on one host, one per core.

A relay process forwards on one core (the C fast path is single-threaded and its tables have
no locks), so a host scales by running one per core.  Each worker is a plain ``nxrecomp relay``
process with its own /metrics (metrics port + i; port 0: each its own free port), the same
secret and directory, pinned to core i mod cores.  The supervisor binds each worker's /metrics
listener and keeps it, as it keeps the UDP sockets: a restarted worker serves on the same
socket instead of binding its port again (a port freed by a dead worker, even for a second,
may be taken by any other program's connection meanwhile).  A room lives on exactly one worker; two ways to get its players there
(``relay.worker_ports``):

- ``shared`` (default): one UDP port for the host.  The supervisor binds N sockets to it with
  SO_REUSEPORT, attaches the steering program of ``relay.steer`` (JOIN by room name, the rest
  by the worker index inside the session id) and hands socket i to worker i, keeping its own
  copy so that a worker's restart never reorders the group.  One address per host: one
  firewall rule, one directory entry.
- ``each``: worker i on port + i (port 0: each its own free port); the directory (or whoever
  hands out addresses) names the worker's HOST:PORT.  For kernels or platforms without
  SO_ATTACH_REUSEPORT_CBPF.

The supervisor prints each worker's first line (``relay listening on ...``) to stdout, forwards
SIGTERM/SIGINT (each worker then says BYE to its players and gives its rooms back to the
directory), restarts a worker that dies on the port it had, and exits 0 once all have stopped.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

from nxrecomp.common import settings
from nxrecomp.common.errors import NxError
from nxrecomp.common.log import kv
from relay.netaddr import parse_hostport

log = logging.getLogger("relay.workers")
LINE = re.compile(r"relay listening on (\S+):(\d+)(?: metrics on (\S+):(\d+))?")


def _with_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Worker:
    def __init__(
        self, i: int, listen: str, metrics: str, advertise: str, extra: list[str], sock: socket.socket | None = None
    ) -> None:
        self.i, self.listen, self.advertise, self.extra = i, listen, advertise, extra
        self.sock = sock
        self.msock = metrics_socket(metrics) if metrics else None
        self.metrics = _with_port(*self.msock.getsockname()[:2]) if self.msock else ""
        self.proc: subprocess.Popen | None = None
        self.line = ""

    def start(self) -> str:
        cmd = [
            sys.executable,
            "-m",
            "nxrecomp",
            "relay",
            "--workers",
            "1",
            "--listen",
            self.listen,
            "--metrics",
            self.metrics,
            *self.extra,
        ]
        if self.advertise:
            cmd += ["--advertise", self.advertise]
        fds: tuple[int, ...] = ()
        if self.sock is not None:
            cmd += ["--inherit-fd", str(self.sock.fileno()), "--worker-index", str(self.i)]
            fds = (self.sock.fileno(),)
        if self.msock is not None:
            cmd += ["--inherit-metrics-fd", str(self.msock.fileno())]
            fds += (self.msock.fileno(),)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, pass_fds=fds)
        cores = sorted(os.sched_getaffinity(0))
        try:
            os.sched_setaffinity(self.proc.pid, {cores[self.i % len(cores)]})
        except OSError:
            pass  # a container may forbid it: run unpinned
        self.line = self.proc.stdout.readline().strip()
        m = LINE.fullmatch(self.line)
        if not m:
            self.proc.kill()
            raise NxError(f"relay worker {self.i} ({self.listen}) did not start: {self.line!r}")
        # a restart takes the same UDP port again, even when the first start asked for port 0
        self.listen = _with_port(m[1], int(m[2]))
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # keep its pipe drained
        return self.line


def metrics_socket(listen: str) -> socket.socket:
    """A worker's /metrics listener, bound by the supervisor (port 0: a free one)."""
    family, host, port = parse_hostport(listen, "relay.metrics_listen")
    try:
        return socket.create_server((host, port), family=family)
    except OSError as e:
        raise NxError(f"relay.metrics_listen {listen}: {e.strerror}") from None


def shared_sockets(listen: str, n: int) -> list[socket.socket]:
    """N sockets bound to one port with SO_REUSEPORT, steered by ``relay.steer``."""
    from relay import steer

    family, host, port = parse_hostport(listen, "relay.listen")
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.socket(family, socket.SOCK_DGRAM)
            socks.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind((host, port))
            port = s.getsockname()[1]  # port 0: the others join the first one's port
        steer.attach(socks[0], n)
    except OSError as e:
        for s in socks:
            s.close()
        raise NxError(
            f"relay.listen {listen} with {n} SO_REUSEPORT workers: {e.strerror} "
            "(relay.worker_ports=each gives each worker its own port)"
        ) from None
    return socks


def supervise(n: int, args: argparse.Namespace) -> int:
    if not 1 <= n <= 256:
        raise NxError(f"relay.workers {n} must be 1..256")
    listen = args.listen or settings.get("relay", "listen")
    _, host, port = parse_hostport(listen, "relay.listen")
    mode = settings.get("relay", "worker_ports")
    if mode not in ("shared", "each"):
        raise NxError(f"relay.worker_ports {mode!r} must be shared or each")
    socks = shared_sockets(listen, n) if mode == "shared" else None
    metrics_at = settings.get("relay", "metrics_listen") if args.metrics is None else args.metrics
    mhost, mport = parse_hostport(metrics_at, "relay.metrics_listen")[1:] if metrics_at else ("", 0)
    adv = args.advertise or settings.get("relay", "advertise")
    ahost, aport = parse_hostport(adv, "relay.advertise")[1:] if adv else ("", 0)
    extra = ["--directory", args.directory] if args.directory is not None else []
    workers = []
    for i in range(n):
        if socks:
            bound = socks[i].getsockname()
            w = Worker(
                i,
                _with_port(bound[0], bound[1]),
                _with_port(mhost, mport + i if mport else 0) if metrics_at else "",
                adv,
                extra,
                socks[i],
            )
        else:
            w = Worker(
                i,
                _with_port(host, port + i if port else 0),
                _with_port(mhost, mport + i if mport else 0) if metrics_at else "",
                _with_port(ahost, aport + i) if adv else "",
                extra,
            )
        workers.append(w)
    stopping = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    try:
        for w in workers:
            print(w.start(), flush=True)
        while not stopping.wait(0.2):
            for w in workers:
                if w.proc.poll() is not None:
                    kv(log, logging.WARNING, "relay worker died; restarting", worker=w.i, listen=w.listen, rc=w.proc.returncode)
                    time.sleep(1.0)  # a worker that dies at once must not spin
                    w.start()
    finally:
        for w in workers:
            if w.proc and w.proc.poll() is None:
                w.proc.send_signal(signal.SIGTERM)
        for w in workers:
            if w.proc:
                try:
                    w.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    w.proc.kill()
                    w.proc.wait()
    return 0
