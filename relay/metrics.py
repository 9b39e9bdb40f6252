"""Prometheus text exposition of a relay ``Snapshot`` (through the official client library,
``prometheus-client``), and the HTTP endpoint serving it
(``/metrics``, ``/healthz``) on its own thread."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from typing import Callable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from nxrecomp.common.errors import NxError
from relay.core import DROP_REASONS
from relay.netaddr import parse_hostport
from relay.server import Snapshot

STALE_S = 3.0  # /healthz fails when the loop has not published for this long

# control-plane events that are drops (packets thrown away), with the reason label they get
PY_DROPS = {"malformed": "malformed", "leave_ignored": "leave_ignored", "internal_error": "internal_error"}
# handshake outcomes counted by the control plane (the rest by the fast path)
PY_HANDSHAKES = ("joined", "rejoined", "resumed")


class _SnapshotCollector:
    """A prometheus-client collector over one ``Snapshot``: the official client writes the
    exposition (escaping, number formats, the ``_total`` suffix of counters), we only name the
    families and their samples."""

    def __init__(self, s: Snapshot) -> None:
        self.s = s

    def collect(self):
        s = self.s
        c, ev = s.counters, s.events

        def gauge(name: str, help_: str, value: float) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, help_, value=value)

        def counter(
            name: str, help_: str, value: float | None = None, label: str | None = None, samples: list[tuple[str, float]] = ()
        ) -> CounterMetricFamily:
            fam = CounterMetricFamily(name, help_, value=value, labels=[label] if label else None)
            for lv, v in samples:
                fam.add_metric([lv], v)
            return fam

        yield gauge("relay_rooms", "Rooms open now.", s.rooms)
        yield gauge("relay_players", "Players seated now.", s.players)
        yield gauge("relay_draining", "1 while shutting down.", int(s.draining))
        yield counter("relay_received_packets", "Datagrams received.", c["rx_packets"])
        yield counter("relay_received_bytes", "Bytes received.", c["rx_bytes"])
        yield counter("relay_sent_packets", "Datagrams sent (forwarded, pongs, control).", c["tx_packets"])
        yield counter("relay_sent_bytes", "Bytes sent.", c["tx_bytes"])
        yield counter("relay_forwarded_packets", "DATA copies delivered to players.", c["forwarded"])
        yield counter("relay_pongs", "PING answered.", c["pongs"])
        yield counter("relay_address_changes", "Packets of a live session from a new address.", c["addr_changed"])
        drops = {r: c[r] for r in DROP_REASONS}
        for k, label in PY_DROPS.items():
            drops[label] = drops.get(label, 0) + ev.get(k, 0)
        drops["send_error"] = c["send_error"]
        yield counter("relay_dropped_packets", "Packets thrown away, by reason.", label="reason", samples=sorted(drops.items()))
        yield counter(
            "relay_kernel_dropped_packets",
            "Datagrams the kernel dropped at the relay's socket (receive buffer full: the relay lacks CPU), from SO_RXQ_OVFL.",
            c["kernel_drops"],
        )
        yield counter(
            "relay_refused",
            "Handshakes refused, by reason.",
            label="reason",
            samples=sorted((k[len("refused_") :], v) for k, v in ev.items() if k.startswith("refused_")),
        )
        sess = [(k, ev.get(k, 0)) for k in PY_HANDSHAKES] + [(k, c[k]) for k in ("challenges", "rebind_challenges")]
        yield counter("relay_handshakes", "Handshake outcomes.", label="result", samples=sess)
        yield counter(
            "relay_players_removed",
            "Players removed, by reason.",
            label="reason",
            samples=sorted((k[len("removed_") :], v) for k, v in ev.items() if k.startswith("removed_")),
        )
        # Added latency: kernel receive timestamp of a DATA to the return of the sendmmsg carrying it.
        hist, cum, buckets = s.latency_hist, 0, []
        for i, n in enumerate(hist[:-1]):
            cum += n
            buckets.append((f"{(1 << i) * 1e-6:.6g}", cum))
        cum += hist[-1]
        buckets.append(("+Inf", cum))
        yield HistogramMetricFamily(
            "relay_forward_latency_seconds",
            "Time a forwarded packet spent in the relay.",
            buckets=buckets,
            sum_value=c["latency_ns_sum"] / 1e9,
        )


def render(s: Snapshot) -> str:
    """The Prometheus text exposition of ``s`` (written by the official client library)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_SnapshotCollector(s))
    return generate_latest(registry).decode()


def healthy(s: Snapshot) -> bool:
    return not s.draining and time.time() - s.time < STALE_S


class MetricsServer:
    """``/metrics`` and ``/healthz`` over HTTP for ``get_snapshot()`` (a plain attribute read)."""

    def __init__(self, listen: str, get_snapshot: Callable[[], Snapshot], sock: socket.socket | None = None) -> None:
        """Serves on ``listen``, or on ``sock``, a listening TCP socket made by a supervisor
        (``relay.workers``), so that a restarted worker never has to bind its port again."""
        _, host, port = parse_hostport(listen, "relay.metrics_listen")

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                snap = get_snapshot()
                if self.path == "/metrics":
                    code, body, ctype = 200, render(snap), "text/plain; version=0.0.4"
                elif self.path == "/healthz":
                    ok = healthy(snap)
                    code, body, ctype = (200 if ok else 503), ("ok\n" if ok else "unhealthy\n"), "text/plain"
                else:
                    code, body, ctype = 404, "not found\n", "text/plain"
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass  # quiet: scrapes are not news

        try:
            self.httpd = http.server.ThreadingHTTPServer((host, port), Handler, bind_and_activate=sock is None)
        except OSError as e:
            raise NxError(f"relay.metrics_listen {listen}: {e.strerror}") from None
        if sock is not None:
            self.httpd.socket.close()
            self.httpd.socket, self.httpd.server_address = sock, sock.getsockname()
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="relay-metrics", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        return self.httpd.server_address[:2]

    def start(self) -> "MetricsServer":
        self.thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
