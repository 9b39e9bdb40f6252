"""Churn: players join, leave, vanish and move while two steady players exchange reliable
messages; afterwards the relay's tables and every client's view agree, and the steady pair got
each message exactly once, in order."""

from __future__ import annotations

import random
import time

import pytest

from cpu_host.coop import CoopClient, CoopError
from relaytest import wait_for


@pytest.mark.parametrize("seconds", [3, pytest.param(60, marks=pytest.mark.heavy)])
def test_churn_keeps_tables_consistent(make_relay, seconds):
    relay = make_relay(timeout_ms=600, heartbeat_ms=100)
    a, b = CoopClient(relay.address), CoopClient(relay.address)
    a.open(relay.token("churn", "a", host=True))
    b.join(relay.token("churn", "b"))
    wait_for(lambda: 1 in a.roster and 0 in b.roster, what="steady pair")
    rng = random.Random(seconds)
    others: dict[str, CoopClient] = {}
    vanished: list[CoopClient] = []
    sent = 0
    got: list[bytes] = []
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        a.send(1, 3, b"%d" % sent, reliable=True)
        sent += 1
        m = b.recv(timeout=0)
        while m:
            if m.channel == 3:
                got.append(m.payload)
            m = b.recv(timeout=0)
        action = rng.random()
        if action < 0.3 and len(others) < 6:
            name = f"x{n}"
            n += 1
            c = CoopClient(relay.address)
            try:
                c.join(relay.token("churn", name))
                others[name] = c
            except CoopError:
                c.close()
        elif action < 0.45 and others:
            others.pop(rng.choice(sorted(others))).close()  # leaves properly
        elif action < 0.55 and others:
            c = others.pop(rng.choice(sorted(others)))  # vanishes: the relay times it out
            c._closing.set()
            vanished.append(c)
        elif action < 0.7 and others:
            others[rng.choice(sorted(others))].rebind()  # moves
        elif action < 0.8 and others:
            c = others[rng.choice(sorted(others))]
            try:
                c.send(0, 9, b"noise", reliable=rng.random() < 0.5)
            except CoopError:
                pass
        time.sleep(0.01)
    wait_for(lambda: a.unacked() == 0, timeout=10, what="steady pair acked")
    deadline = time.monotonic() + 5
    while len(got) < sent and time.monotonic() < deadline:
        m = b.recv(timeout=0.1)
        if m and m.channel == 3:
            got.append(m.payload)
    assert got == [b"%d" % k for k in range(sent)]
    # after timeouts have run, the relay holds exactly the live players, and everyone agrees
    live = {"a", "b", *others}
    wait_for(lambda: set(relay.server.rooms["churn"].by_player) == live, timeout=5, what="relay drops the vanished")
    room = relay.server.rooms["churn"]
    want = {s.slot: s.player for s in room.seats.values()}
    assert len(relay.server.sessions) == len(live) and len(want) == len(live)
    for c in (a, b, *others.values()):
        wait_for(lambda c=c: c.roster == want, timeout=5, what="client rosters converge")
    snap = relay.scrape()
    assert snap[("relay_players", ())] == len(live)
    for c in (a, b, *others.values(), *vanished):
        c.close()
    wait_for(lambda: not relay.server.rooms and not relay.server.sessions, timeout=5, what="all gone")
    assert sorted(relay.server._free_sessions) == list(range(relay.server.config.max_sessions))
