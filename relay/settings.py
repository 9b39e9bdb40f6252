"""Settings of the relay (section ``relay`` of the one settings table)."""

from __future__ import annotations

from nxrecomp.common.settings import Setting

SETTINGS = [
    Setting("relay", "listen", "0.0.0.0:7788", "UDP address the relay listens on (HOST:PORT; [v6]:PORT for IPv6)"),
    Setting("relay", "secret", "", "HMAC key that signs join tokens (prefer relay.secret_file; one of the two is required)"),
    Setting("relay", "secret_file", "", "file holding the token-signing key (first line, surrounding spaces ignored)"),
    Setting("relay", "metrics_listen", "127.0.0.1:9788", "HTTP address of /metrics (Prometheus) and /healthz; empty: off"),
    Setting("relay", "max_rooms", 4096, "rooms open at once", int),
    Setting("relay", "max_players", 8, "seats per room (1..8)", int),
    Setting("relay", "max_sessions", 32768, "players connected at once, over all rooms", int),
    Setting("relay", "max_packet", 1200, "largest datagram accepted, bytes (64..2048); larger ones are dropped", int),
    Setting("relay", "heartbeat_ms", 1000, "how often clients are told to PING", int),
    Setting("relay", "timeout_ms", 10000, "a player silent this long is removed from its room", int),
    Setting("relay", "player_rate", 2000.0, "packets per second one player may send (token bucket rate)", float),
    Setting("relay", "player_burst", 4000.0, "token bucket depth of one player, packets", float),
    Setting("relay", "addr_rate", 20.0, "handshake packets per second from one cookie-verified source (IP and port)", float),
    Setting("relay", "addr_burst", 40.0, "token bucket depth of one cookie-verified source, packets", float),
    Setting(
        "relay",
        "seat_takeover_ms",
        3000,
        "a token from a new address may take its player's seat only after the seat was silent this long (> heartbeat_ms)",
        int,
    ),
    Setting("relay", "rcvbuf", 4 << 20, "socket receive buffer, bytes (capped by net.core.rmem_max)", int),
    Setting("relay", "workers", 1, "relay processes on this host, one per core (metrics on consecutive ports)", int),
    Setting(
        "relay",
        "worker_ports",
        "shared",
        "shared: all workers on relay.listen's port (SO_REUSEPORT, steered by room and session); each: consecutive ports",
    ),
    Setting("relay", "directory", "", "room directory in Redis (redis://HOST:PORT/DB) shared by several relays; empty: none"),
    Setting(
        "relay",
        "directory_ttl_ms",
        3000,
        "a relay's directory entries expire this long after it stops refreshing them (its rooms go elsewhere)",
        int,
    ),
    Setting(
        "relay",
        "advertise",
        "",
        "HOST:PORT players reach this relay at, as published in the directory (empty: the bound address)",
    ),
    Setting("relay", "cc", "", "C compiler command for the fast path (empty: clang from the ziglang wheel)"),
]
