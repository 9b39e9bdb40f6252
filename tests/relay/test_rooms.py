"""Rooms with real clients on loopback: 8 players, a refused 9th, seats kept across address
changes, leave/timeout/empty-room removal, passwords and host tokens."""

from __future__ import annotations

import socket
import time

import pytest

from relaytest import wait_for
from cpu_host.coop import ALL, CoopClient, CoopError
from cpu_host.coop.client import E_REFUSED_BASE, E_TIMEOUT
from relay import protocol as P


def full_room(relay, n: int = 8, room: str = "room") -> list[CoopClient]:
    clients = [CoopClient(relay.address) for _ in range(n)]
    assert clients[0].open(relay.token(room, "p0", host=True)) == 0
    for i, c in enumerate(clients[1:], 1):
        assert c.join(relay.token(room, f"p{i}")) == i
    # a reliable message to ALL goes to the peers a client knows of: wait until all know all
    wait_for(lambda: all(len(c.roster) == n for c in clients), what="rosters complete")
    return clients


def drain(c: CoopClient, n: int, timeout: float = 10.0) -> list:
    out, deadline = [], time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        m = c.recv(timeout=0.1)
        if m:
            out.append(m)
    return out


def next_event(c: CoopClient, kind: str, timeout: float = 10.0):
    """The next event of ``kind`` (earlier events of other kinds are skipped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ev = c.poll_event(timeout=0.1)
        if ev and ev.kind == kind:
            return ev
    raise AssertionError(f"no {kind!r} event in {timeout}s")


def test_eight_players_exchange_in_order(relay):
    clients = full_room(relay)
    try:
        per = 40
        for k in range(per):
            for i, c in enumerate(clients):
                c.send(ALL, 3, f"{i}:{k}".encode(), reliable=True)
        for i, c in enumerate(clients):
            got = drain(c, 7 * per)
            assert len(got) == 7 * per, f"player {i} got {len(got)} of {7 * per}"
            by_src: dict[int, list[int]] = {}
            for m in got:
                src, k = m.payload.decode().split(":")
                assert int(src) == m.src != i and m.channel == 3 and m.reliable
                by_src.setdefault(m.src, []).append(int(k))
            assert by_src == {j: list(range(per)) for j in range(8) if j != i}
        # unicast reaches only its target
        clients[2].send(5, 9, b"only-five")
        assert clients[5].recv(timeout=2).payload == b"only-five"
        time.sleep(0.2)
        assert all(c.recv(timeout=0) is None for j, c in enumerate(clients) if j != 5)
        assert relay.scrape()[("relay_players", ())] == 8
    finally:
        for c in clients:
            c.close()


def test_unreliable_is_sequenced_per_stream(relay):
    a, b, c = full_room(relay, 3)
    try:
        for k in range(5):
            a.send(ALL, 1, b"all%d" % k)
        a.send(1, 1, b"just-b")  # its own stream: not "older" than all4
        got = drain(b, 6, timeout=3)
        assert [m.payload for m in got] == [b"all0", b"all1", b"all2", b"all3", b"all4", b"just-b"]
        # a stale datagram (seq behind the newest delivered) is dropped, a newer one delivered
        stale = P.encode_data(a._session, ALL, 1, 0, 2, b"stale")
        fresh = P.encode_data(a._session, ALL, 1, 0, 9, b"fresh")
        a._sock.sendto(stale, relay.address)
        a._sock.sendto(fresh, relay.address)
        assert [m.payload for m in drain(c, 6, timeout=3)] == [b"all%d" % k for k in range(5)] + [b"fresh"]
        assert c.recv(timeout=0.3) is None
        assert b.recv(timeout=1).payload == b"fresh" and b.recv(timeout=0.3) is None
    finally:
        for x in (a, b, c):
            x.close()


def test_seat_changing_hands_starts_fresh(relay):
    a, b = full_room(relay, 2)
    c = CoopClient(relay.address)
    try:
        for k in range(5):
            a.send(1, 2, b"to-b-%d" % k, reliable=True)
        assert [m.payload for m in drain(b, 5)] == [b"to-b-%d" % k for k in range(5)]
        old_inc = a._seats[1].inc
        b.close()
        assert c.join(relay.token("room", "c")) == 1  # same slot, another player
        wait_for(lambda: a.roster.get(1) == "c", what="a sees c in slot 1")
        assert a._seats[1].inc != old_inc
        a.send(1, 2, b"to-c", reliable=True)  # c's stream starts at 0
        assert c.recv(timeout=3).payload == b"to-c"
        # a datagram still addressed to b's incarnation never reaches c (counted from here: a
        # resend of a's to b, whose ack b's LEAVE overtook, may have met c's seat already)
        stale0 = relay.drops("stale_peer")
        a._sock.sendto(P.encode_data(a._session, 1, 2, 0, 99, b"for-b", old_inc), relay.address)
        wait_for(lambda: relay.drops("stale_peer") >= stale0 + 1, what="stale_peer drop")
        assert c.recv(timeout=0.3) is None
    finally:
        for x in (a, b, c):
            x.close()


def test_ninth_player_refused(relay):
    clients = full_room(relay)
    ninth = CoopClient(relay.address)
    try:
        with pytest.raises(CoopError) as e:
            ninth.join(relay.token("room", "p8"))
        assert e.value.code == E_REFUSED_BASE + P.R_ROOM_FULL
        assert relay.scrape()[("relay_refused_total", (("reason", "room_full"),))] == 1
        clients[3].close()  # a seat frees up: the 9th now gets slot 3
        wait_for(lambda: len(relay.server.rooms["room"].seats) == 7, what="seat 3 freed")
        assert ninth.join(relay.token("room", "p8")) == 3
    finally:
        for c in clients + [ninth]:
            c.close()


def test_address_change_keeps_seat(relay):
    a, b = full_room(relay, 2)
    try:
        old = a._sock.getsockname()
        a.rebind()
        wait_for(lambda: a._sock.getsockname() != old, what="rebind")
        for k in range(20):
            a.send(1, 0, b"%d" % k, reliable=True)
        got = drain(b, 20)
        assert [m.payload for m in got] == [b"%d" % k for k in range(20)] and {m.src for m in got} == {0}
        b.send(0, 0, b"back", reliable=True)  # and the relay sends to the new address
        m = a.recv(timeout=3)
        assert m and m.payload == b"back" and a.slot == 0
        snap = relay.scrape()
        assert snap[("relay_handshakes_total", (("result", "resumed"),))] >= 1
        assert snap[("relay_players", ())] == 2
    finally:
        a.close(), b.close()


def test_token_from_new_client_refused_while_seat_is_live(relay):
    """A token is a bearer credential: from another address it cannot take a live seat (the
    seat's holder moves with RESUME and its resume key; see test_hostile_control for the rest)."""
    a, b = full_room(relay, 2)
    a2 = CoopClient(relay.address)
    try:
        with pytest.raises(CoopError) as e:
            a2.join(relay.token("room", "p0"))
        assert e.value.code == E_REFUSED_BASE + P.R_SEAT_TAKEN
        b.send(0, 1, b"still-a", reliable=True)
        m = a.recv(timeout=3)
        assert m and m.payload == b"still-a"
    finally:
        for c in (a, b, a2):
            c.close()


def test_leave_notifies_and_empty_room_removed(relay):
    a, b, c = full_room(relay, 3)
    try:
        b.close()
        for x in (a, c):
            ev = next_event(x, "left")
            assert (ev.slot, ev.name) == (1, "p1")
        a.close(), c.close()
        wait_for(lambda: not relay.server.rooms, what="room removed")
        snap = relay.scrape()
        assert snap[("relay_rooms", ())] == 0 and snap[("relay_players", ())] == 0
    finally:
        for x in (a, b, c):
            x.close()


def test_silent_player_times_out(make_relay):
    relay = make_relay(timeout_ms=800, heartbeat_ms=100)
    a = CoopClient(relay.address)
    try:
        a.open(relay.token("r", "alive", host=True))
        # a raw player that joins and then never sends again
        raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        raw.settimeout(2)
        tok = relay.token("r", "silent")
        raw.sendto(P.encode_join(tok), relay.address)
        cookie = P.decode_challenge(raw.recv(2048))
        raw.sendto(P.encode_join(tok, cookie=cookie), relay.address)
        assert P.packet_type(raw.recv(2048)) == P.WELCOME
        assert next_event(a, "joined").name == "silent"
        ev = next_event(a, "left")
        assert (ev.slot, ev.name) == (1, "silent")
        bye = raw.recv(2048)
        assert P.packet_type(bye) == P.BYE and bye[4] == P.B_TIMEOUT
        time.sleep(1.0)  # the heartbeating client is still seated
        assert 0 in relay.server.rooms["r"].seats
        raw.close()
    finally:
        a.close()


def test_password_and_host_rules(relay):
    host, guest, stranger = CoopClient(relay.address), CoopClient(relay.address), CoopClient(relay.address)
    try:
        with pytest.raises(CoopError) as e:
            stranger.open(relay.token("locked", "x"))  # not a host token
        assert e.value.code == E_REFUSED_BASE + P.R_NOT_HOST
        with pytest.raises(CoopError) as e:
            stranger.join(relay.token("nowhere", "x"))
        assert e.value.code == E_REFUSED_BASE + P.R_NO_ROOM
        host.open(relay.token("locked", "h", host=True), password="s3cret")
        with pytest.raises(CoopError) as e:
            guest.join(relay.token("locked", "g"), password="guess")
        assert e.value.code == E_REFUSED_BASE + P.R_WRONG_PASSWORD
        with pytest.raises(CoopError) as e:
            stranger.open(relay.token("locked", "h2", host=True), password="s3cret")
        assert e.value.code == E_REFUSED_BASE + P.R_ROOM_EXISTS
        assert guest.join(relay.token("locked", "g"), password="s3cret") == 1
        snap = relay.scrape()
        for reason in ("not_host", "no_room", "wrong_password", "room_exists"):
            assert snap[("relay_refused_total", (("reason", reason),))] == 1, reason
    finally:
        for c in (host, guest, stranger):
            c.close()


def test_join_waits_for_the_room_to_open(relay):
    """A joiner started before its host: join(wait_for_room=True) asks again through the
    relay's no_room refusals and sits down once the host opens the room; a plain join fails at
    once with no_room, and a waiting join of a room that never opens fails at its deadline."""
    import threading

    host, early, plain, never = (CoopClient(relay.address, handshake_timeout_s=t) for t in (5, 30, 5, 0.6))
    try:
        got: list = []
        t = threading.Thread(target=lambda: got.append(early.join(relay.token("later", "g"), wait_for_room=True)))
        t.start()
        wait_for(lambda: relay.server.events["refused_no_room"] >= 2, what="the joiner asking twice")
        assert t.is_alive() and not got  # refused, still waiting
        with pytest.raises(CoopError) as e:
            plain.join(relay.token("later", "p"))
        assert e.value.code == E_REFUSED_BASE + P.R_NO_ROOM
        assert host.open(relay.token("later", "h", host=True)) == 0
        t.join(timeout=5)
        assert got == [1]
        wait_for(lambda: len(host.roster) == 2 and len(early.roster) == 2, what="both rosters")
        with pytest.raises(CoopError) as e:
            never.join(relay.token("never-opened", "n"), wait_for_room=True)
        assert e.value.code == E_TIMEOUT and "did not open" in str(e.value)
    finally:
        for c in (host, early, plain, never):
            c.close()


def test_ipv6_relay(make_relay):
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        relay = make_relay(listen="[::1]:0")
    except Exception as e:  # e.g. IPv6 disabled in the kernel
        pytest.skip(f"cannot listen on [::1]: {e}")
    a, b = CoopClient(("::1", relay.address[1])), CoopClient(("::1", relay.address[1]))
    try:
        assert a.open(relay.token("v6", "a", host=True)) == 0 and b.join(relay.token("v6", "b")) == 1
        wait_for(lambda: 1 in a.roster, what="roster")
        a.send(1, 0, b"over v6", reliable=True)
        assert b.recv(timeout=3).payload == b"over v6"
        old = b._sock.getsockname()
        b.rebind()  # address change over IPv6 too
        wait_for(lambda: b._sock.getsockname() != old, what="rebind")
        b.send(0, 0, b"moved", reliable=True)
        assert a.recv(timeout=3).payload == b"moved"
    finally:
        a.close(), b.close()
