"""Reliable delivery under induced loss and reordering: every message arrives exactly once, in
order per (sender, receiver, channel), through lossy paths that also rebind mid-stream."""

from __future__ import annotations

import time

from relaytest import wait_for
from cpu_host.coop import ALL, CoopClient
from netem import LossyPath


def test_reliable_exactly_once_under_loss_and_reordering(relay):
    n, per = 3, 80
    paths = [LossyPath(relay.address, loss=0.15, jitter_s=0.02, seed=i) for i in range(n)]
    clients = [CoopClient(p.address, rto_s=0.03, handshake_timeout_s=10) for p in paths]
    try:
        clients[0].open(relay.token("lossy", "p0", host=True))
        for i in range(1, n):
            clients[i].join(relay.token("lossy", f"p{i}"))
        # lost PEER events are repaired through the roster epoch in PONG (heartbeat: 1 s)
        wait_for(lambda: all(len(c.roster) == n for c in clients), timeout=15, what="rosters complete")
        for k in range(per):
            for i, c in enumerate(clients):
                c.send(ALL, 7, b"all %d %d" % (i, k), reliable=True)
                c.send((i + 1) % n, 8, b"one %d %d" % (i, k), reliable=True)
            if k == per // 2:
                paths[1].rebind()  # the relay sees player 1 move to a new port mid-stream
        got: list[list] = [[] for _ in range(n)]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            any(len(g) < (n - 1) * per + per for g in got) or any(c.unacked() for c in clients)
        ):
            for i, c in enumerate(clients):
                m = c.recv(timeout=0.01)
                while m:
                    got[i].append(m)
                    m = c.recv(timeout=0)
        for i in range(n):
            streams: dict[tuple[int, int], list[int]] = {}
            for m in got[i]:
                kind, src, k = m.payload.split()
                assert int(src) == m.src and m.reliable
                streams.setdefault((m.src, m.channel), []).append(int(k))
            want = {(j, 7): list(range(per)) for j in range(n) if j != i}
            want[((i - 1) % n, 8)] = list(range(per))
            assert streams == want, f"player {i}: streams differ (exactly once, in order)"
        assert all(c.unacked() == 0 for c in clients)
        assert sum(p.dropped for p in paths) > 60, "the path lost too little to test anything"
        assert sum(p.overtaken for p in paths) > 60, "the path reordered too little to test anything"
        assert relay.server.rooms["lossy"].seats[1].player == "p1"
        assert relay.scrape()[("relay_handshakes_total", (("result", "resumed"),))] >= 1
    finally:
        for c in clients:
            c.close()
        for p in paths:
            p.close()
