"""``nxrecomp relay``: run the relay; ``relay token``: issue a join token; ``relay keygen``: make a secret."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import signal
import socket
from pathlib import Path

from nxrecomp.common.errors import NxError
from nxrecomp.common.log import kv

log = logging.getLogger("relay")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "relay",
        help="run the co-op UDP relay (or issue tokens: relay token -h)",
        description="Run the co-op relay until SIGTERM/SIGINT; players are told when it stops.",
    )
    p.add_argument("--listen", help="UDP HOST:PORT (default: setting relay.listen)")
    p.add_argument("--metrics", help="HTTP HOST:PORT for /metrics and /healthz, '' for none (default: relay.metrics_listen)")
    p.add_argument("--workers", type=int, help="relay processes, one per core, on consecutive ports (default: relay.workers)")
    p.add_argument("--directory", help="room directory redis://HOST:PORT/DB, '' for none (default: relay.directory)")
    p.add_argument("--inherit-fd", type=int, help=argparse.SUPPRESS)  # a worker's socket, from relay.workers
    p.add_argument("--inherit-metrics-fd", type=int, help=argparse.SUPPRESS)  # its /metrics listener, likewise
    p.add_argument("--worker-index", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument(
        "--advertise",
        help="HOST:PORT players reach this relay at, for the directory (default: relay.advertise or the bound address)",
    )
    p.set_defaults(func=_serve)
    rs = p.add_subparsers(dest="relay_command", metavar="SUBCOMMAND")
    t = rs.add_parser("token", help="print a join token signed with the relay's secret")
    t.add_argument("--room", required=True, help="room name (1..32 UTF-8 bytes)")
    t.add_argument("--player", required=True, help="player name (1..32 UTF-8 bytes), unique in the room")
    t.add_argument("--ttl", type=int, default=3600, help="seconds the token stays valid (default 3600)")
    t.add_argument("--host", action="store_true", help="the player may open (create) the room")
    t.set_defaults(func=_token)
    loc = rs.add_parser("locate", help="print the relay (HOST:PORT) holding ROOM in the directory, assigning one if none")
    loc.add_argument("room")
    loc.add_argument("--directory", help="redis://HOST:PORT/DB (default: relay.directory)")
    loc.set_defaults(func=_locate)
    k = rs.add_parser("keygen", help="write a new random secret to FILE (mode 600) for relay.secret_file")
    k.add_argument("file")
    k.set_defaults(func=_keygen)


def _token(args: argparse.Namespace) -> int:
    from relay import tokens
    from relay.server import load_secret

    try:
        tok = tokens.issue(load_secret(), args.room, args.player, args.ttl, args.host)
    except ValueError as e:
        raise NxError(str(e)) from None
    print(tokens.to_text(tok))
    return 0


def _keygen(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if path.exists():
        raise NxError(f"{path}: exists; not overwriting a secret that issued tokens")
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    os.replace(tmp, path)
    print(path)
    return 0


def _directory(url: str | None):
    from nxrecomp.common import settings
    from relay.directory import Directory

    url = settings.get("relay", "directory") if url is None else url
    return Directory(url, settings.get("relay", "directory_ttl_ms")) if url else None


def _locate(args: argparse.Namespace) -> int:
    d = _directory(args.directory)
    if d is None:
        raise NxError("no room directory: set relay.directory or pass --directory redis://HOST:PORT/DB")
    try:
        print(d.assign(args.room))
    except NxError:
        raise
    except Exception as e:  # noqa: BLE001 - redis's errors, named
        raise NxError(f"room directory {d.url}: {e}") from None
    return 0


def _serve(args: argparse.Namespace) -> int:
    from nxrecomp.common import settings
    from relay.metrics import MetricsServer
    from relay.server import RelayConfig, RelayServer, load_secret

    workers = settings.get("relay", "workers") if args.workers is None else args.workers
    if workers != 1:
        from relay.workers import supervise

        return supervise(workers, args)
    sock = socket.socket(fileno=args.inherit_fd) if args.inherit_fd is not None else None
    server = RelayServer(RelayConfig.from_settings(listen=args.listen), load_secret(), sock=sock, worker=args.worker_index)
    metrics_at = settings.get("relay", "metrics_listen") if args.metrics is None else args.metrics
    msock = socket.socket(fileno=args.inherit_metrics_fd) if args.inherit_metrics_fd is not None else None
    metrics = MetricsServer(metrics_at, lambda: server.snapshot, msock).start() if metrics_at else None
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop())
    host, port = server.address
    advertise = args.advertise or settings.get("relay", "advertise") or f"{host}:{port}"
    directory = _directory(args.directory)
    agent = None
    if directory is not None:
        from relay.directory import DirectoryAgent

        agent = DirectoryAgent(directory, advertise, lambda: server.snapshot, args.worker_index).start()
    # One line on stdout so a supervisor (or a test) learns the bound port when asked for port 0.
    print(
        f"relay listening on {host}:{port}" + (f" metrics on {metrics.address[0]}:{metrics.address[1]}" if metrics else ""),
        flush=True,
    )
    try:
        server.serve()
    finally:
        if agent:
            agent.stop()  # gives its rooms back now rather than after the TTL
        if metrics:
            metrics.close()
    kv(log, logging.INFO, "stopped")
    return 0
