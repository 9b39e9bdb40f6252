"""Prometheus text exposition of a relay ``Snapshot``, and the HTTP endpoint serving it
(``/metrics``, ``/healthz``) on its own thread."""
from __future__ import annotations

import http.server
import threading
import time
from typing import Callable

from nxrecomp.errors import NxError
from relay.core import DROP_REASONS
from relay.netaddr import parse_hostport
from relay.server import Snapshot

STALE_S = 3.0          # /healthz fails when the loop has not published for this long

# control-plane events that are drops (packets thrown away), with the reason label they get
PY_DROPS = {"malformed": "malformed", "leave_ignored": "leave_ignored", "internal_error": "internal_error"}
# handshake outcomes counted by the control plane (the rest by the fast path)
PY_HANDSHAKES = ("joined", "rejoined", "resumed")


def render(s: Snapshot) -> str:
    c, ev = s.counters, s.events
    out: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[str, float]]) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(f"{name}{labels} {value}" for labels, value in samples)

    metric("relay_rooms", "gauge", "Rooms open now.", [("", s.rooms)])
    metric("relay_players", "gauge", "Players seated now.", [("", s.players)])
    metric("relay_draining", "gauge", "1 while shutting down.", [("", int(s.draining))])
    metric("relay_received_packets_total", "counter", "Datagrams received.", [("", c["rx_packets"])])
    metric("relay_received_bytes_total", "counter", "Bytes received.", [("", c["rx_bytes"])])
    metric("relay_sent_packets_total", "counter", "Datagrams sent (forwarded, pongs, control).", [("", c["tx_packets"])])
    metric("relay_sent_bytes_total", "counter", "Bytes sent.", [("", c["tx_bytes"])])
    metric("relay_forwarded_packets_total", "counter", "DATA copies delivered to players.", [("", c["forwarded"])])
    metric("relay_pongs_total", "counter", "PING answered.", [("", c["pongs"])])
    metric("relay_address_changes_total", "counter", "Packets of a live session from a new address.", [("", c["addr_changed"])])
    drops = {r: c[r] for r in DROP_REASONS}
    for k, label in PY_DROPS.items():
        drops[label] = drops.get(label, 0) + ev.get(k, 0)
    drops["send_error"] = c["send_error"]
    metric("relay_dropped_packets_total", "counter", "Packets thrown away, by reason.",
           [(f'{{reason="{r}"}}', v) for r, v in sorted(drops.items())])
    metric("relay_kernel_dropped_packets_total", "counter",
           "Datagrams the kernel dropped at the relay's socket (receive buffer full: the relay lacks CPU), from SO_RXQ_OVFL.",
           [("", c["kernel_drops"])])
    refused = sorted((k[len("refused_"):], v) for k, v in ev.items() if k.startswith("refused_"))
    metric("relay_refused_total", "counter", "Handshakes refused, by reason.",
           [(f'{{reason="{r}"}}', v) for r, v in refused])
    sess = [(k, ev.get(k, 0)) for k in PY_HANDSHAKES] + [(k, c[k]) for k in ("challenges", "rebind_challenges")]
    metric("relay_handshakes_total", "counter", "Handshake outcomes.", [(f'{{result="{k}"}}', v) for k, v in sess])
    removed = sorted((k[len("removed_"):], v) for k, v in ev.items() if k.startswith("removed_"))
    metric("relay_players_removed_total", "counter", "Players removed, by reason.",
           [(f'{{reason="{r}"}}', v) for r, v in removed])
    # Added latency: kernel receive timestamp of a DATA to the return of the sendmmsg carrying it.
    hist, cum, samples = s.latency_hist, 0, []
    for i, n in enumerate(hist[:-1]):
        cum += n
        samples.append((f'_bucket{{le="{(1 << i) * 1e-6:.6g}"}}', cum))
    cum += hist[-1]
    samples += [('_bucket{le="+Inf"}', cum), ("_sum", c["latency_ns_sum"] / 1e9), ("_count", cum)]
    out.append("# HELP relay_forward_latency_seconds Time a forwarded packet spent in the relay.")
    out.append("# TYPE relay_forward_latency_seconds histogram")
    out.extend(f"relay_forward_latency_seconds{suffix} {v}" for suffix, v in samples)
    return "\n".join(out) + "\n"


def healthy(s: Snapshot) -> bool:
    return not s.draining and time.time() - s.time < STALE_S


class MetricsServer:
    """``/metrics`` and ``/healthz`` over HTTP for ``get_snapshot()`` (a plain attribute read)."""

    def __init__(self, listen: str, get_snapshot: Callable[[], Snapshot]) -> None:
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
                pass                     # quiet: scrapes are not news

        try:
            self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        except OSError as e:
            raise NxError(f"relay.metrics_listen {listen}: {e.strerror}") from None
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
