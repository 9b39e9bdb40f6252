"""Hostile input against a live relay while a room is in play: fuzzed packets, forged and
expired tokens, floods, oversized datagrams.  The room must keep working, the relay must not
die, replies to unverified senders must never be larger than what provoked them, and every
drop must show in /metrics under its reason (read back with prometheus_client's parser)."""

from __future__ import annotations

import random
import socket
import struct
import time

import pytest

from relaytest import SECRET, report, wait_for, wait_read
from cpu_host.coop import ALL, CoopClient, CoopError
from cpu_host.coop.client import E_REFUSED_BASE
from relay import protocol as P
from relay import tokens


def room_of_two(relay, room: str = "r") -> tuple[CoopClient, CoopClient]:
    a, b = CoopClient(relay.address), CoopClient(relay.address)
    a.open(relay.token(room, "a", host=True))
    b.join(relay.token(room, "b"))
    wait_for(lambda: len(a.roster) == 2 and len(b.roster) == 2, what="roster")
    return a, b


def assert_room_works(a: CoopClient, b: CoopClient, tag: bytes, channel: int = 4) -> None:
    """Ten reliable messages a -> b arrive, in order, on ``channel`` (b's messages on other
    channels, e.g. a LegitProbe's stragglers, are not this check's)."""
    for k in range(10):
        a.send(1, channel, tag + b"%d" % k, reliable=True)
    got, deadline = [], time.monotonic() + 10
    while len(got) < 10 and time.monotonic() < deadline:
        m = b.recv(timeout=0.1)
        if m and m.channel == channel:
            got.append(m.payload)
    assert got == [tag + b"%d" % k for k in range(10)]


def raw_socket(host: str = "127.0.0.1") -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, 0))
    s.setblocking(False)
    return s


def replies(s: socket.socket, settle: float = 0.3) -> list[bytes]:
    out, deadline = [], time.monotonic() + settle
    while time.monotonic() < deadline:
        try:
            out.append(s.recv(65536))
        except BlockingIOError:
            time.sleep(0.01)
    return out


def first_replies(s: socket.socket, timeout: float = 5.0, settle: float = 0.2) -> list[bytes]:
    """The reply to what was just sent, however late a loaded relay sends it (up to ``timeout``),
    plus whatever else arrives within ``settle`` after it (a second reply would be a bug)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            first = s.recv(65536)
            break
        except BlockingIOError:
            time.sleep(0.005)
    else:
        return []
    return [first, *replies(s, settle)]


def fuzz_packets(rng: random.Random, live_sid: int, n: int) -> list[bytes]:
    """Random bytes, right headers with wrong bodies, live session ids from a stranger, and
    bit-flipped/truncated valid packets (the cases a parser gets wrong)."""
    valid = [
        P.encode_join(tokens.issue(b"other-secret-xxxxxxxx", "r", "x", 60, True)),
        P.encode_resume(live_sid, bytes(16)),
        P.encode_leave(live_sid),
        P.encode_ping(live_sid, 1),
        P.encode_data(live_sid, ALL, 1, 0, 5, b"spoofed"),
        P.encode_data(live_sid, 0, 1, 1, 5, b"x", 3),
    ]
    out = []
    for _ in range(n):
        k = rng.randrange(6)
        if k == 0:
            pkt = rng.randbytes(rng.randrange(0, 1200))
        elif k == 1:
            pkt = P.header(rng.choice(list(P.TYPE_NAMES) + [0, 0x7F, 0xFF])) + rng.randbytes(rng.randrange(0, 200))
        elif k == 2:
            pkt = (
                P.header(P.DATA)
                + struct.pack("<Q", rng.choice([live_sid, rng.getrandbits(64)]))
                + rng.randbytes(rng.randrange(0, 64))
            )
        elif k == 3:
            pkt = rng.choice(valid)[: rng.randrange(0, 80)]
        elif k == 4:
            b = bytearray(rng.choice(valid))
            for _ in range(rng.randrange(1, 6)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            pkt = bytes(b)
        else:
            pkt = (
                P.header(P.JOIN)
                + struct.pack("<BBH", rng.randrange(256), rng.randrange(256), rng.randrange(65536))
                + rng.randbytes(rng.randrange(0, 300))
            )
        out.append(pkt)
    return out


@pytest.mark.parametrize("count", [3000, pytest.param(100_000, marks=pytest.mark.heavy)])
def test_fuzzed_packets_leave_room_and_relay_intact(relay, count):
    a, b = room_of_two(relay)
    try:
        seat_addr = relay.server.rooms["r"].seats[0].addr
        s = raw_socket()
        rng = random.Random(count)
        pkts = fuzz_packets(rng, a._session, count)
        sent = 0
        for i, pkt in enumerate(pkts):
            s.sendto(pkt, relay.address)
            sent += len(pkt)
            if i % 100 == 0:
                time.sleep(0.002)  # let the loop breathe; this is fuzz, not a flood
        got = replies(s)
        assert relay.alive()
        # no amplification: a stranger only ever gets CHALLENGEs, each smaller than its trigger
        assert all(P.packet_type(r) == P.CHALLENGE and len(r) == 20 for r in got)
        assert len(got) <= sum(1 for p in pkts if len(p) >= 20) and sum(map(len, got)) < sent
        # the seat did not move to the stranger, nothing left the room
        assert relay.server.rooms["r"].seats[0].addr == seat_addr and len(relay.server.rooms["r"].seats) == 2
        assert_room_works(a, b, b"after-fuzz")
        m = relay.scrape()
        for reason in ("malformed", "unknown_session", "leave_ignored"):
            assert m[("relay_dropped_packets_total", (("reason", reason),))] > 0, reason
        assert m[("relay_address_changes_total", ())] > 0
        report(
            "fuzz",
            packets=count,
            replies=len(got),
            reply_bytes_over_sent=f"{sum(map(len, got)) / sent:.3f}",
            got_through=0,
            **{
                r: m[("relay_dropped_packets_total", (("reason", r),))]
                for r in ("malformed", "oversize", "unknown_session", "leave_ignored")
            },
        )
        s.close()
    finally:
        a.close(), b.close()


def test_forged_and_expired_tokens_refused(relay):
    a, b = room_of_two(relay)
    c = CoopClient(relay.address)
    try:
        good = relay.token("r", "mallory")
        forged = [
            tokens.issue(b"not-the-relay-secret!!", "r", "mallory", 60),  # other key
            good[:12] + b"x" + good[13:],  # edited name
            good[:-1] + bytes([good[-1] ^ 1]),  # edited MAC
            good[:20],
        ]  # truncated
        for t in forged:
            with pytest.raises(CoopError) as e:
                c.join(t)
            assert e.value.code == E_REFUSED_BASE + P.R_BAD_TOKEN
        with pytest.raises(CoopError) as e:
            c.join(tokens.issue(SECRET, "r", "late", 1, now=time.time() - 10))
        assert e.value.code == E_REFUSED_BASE + P.R_EXPIRED
        m = relay.scrape()
        assert m[("relay_refused_total", (("reason", "bad_token"),))] == len(forged)
        assert m[("relay_refused_total", (("reason", "expired_token"),))] == 1
        assert len(relay.server.rooms["r"].seats) == 2
        assert_room_works(a, b, b"tok")
    finally:
        for x in (a, b, c):
            x.close()


def test_flood_of_unverified_joins_costs_the_control_plane_nothing(make_relay):
    """Cookie-less JOINs are answered from C with a stateless 20-byte CHALLENGE: none reaches the
    control plane, nothing larger than the trigger goes back, and the room plays on."""
    relay = make_relay(addr_rate=50, addr_burst=50)
    a, b = room_of_two(relay)
    try:
        flood = raw_socket("127.0.0.9")  # its own IP (all of 127/8 is loopback)
        join = P.encode_join(relay.token("r", "flooder"))
        slow0, chal0 = (relay.server.fast.counters().get(k, 0) for k in ("slow_path", "challenges"))
        n = 5000
        for i in range(n):
            try:
                flood.sendto(join, relay.address)
            except BlockingIOError:
                time.sleep(0.001)
            if i % 500 == 499:  # a flood the relay reads, not one the kernel drops for a starved relay
                wait_read(relay)
            if i == n // 2:
                a.send(1, 2, b"during-flood", reliable=True)
        wait_read(relay)  # every JOIN read (and so answered) before the counters are looked at
        challenges = replies(flood, 0.5)
        assert relay.alive()
        m = b.recv(timeout=5)
        assert m and m.payload == b"during-flood"
        assert all(len(c) == 20 and P.packet_type(c) == P.CHALLENGE for c in challenges)
        assert relay.server.fast.counters()["slow_path"] == slow0
        # (the flooder reads its replies only at the end: its own buffer keeps a few hundred)
        assert relay.server.fast.counters()["challenges"] - chal0 > n * 0.5 and challenges
        # a newcomer from another address still gets in
        c = CoopClient(relay.address, bind_host="127.0.0.10")
        assert c.join(relay.token("r", "c")) == 2
        c.close()
        assert_room_works(a, b, b"flood")
    finally:
        a.close(), b.close()


def test_player_flood_is_limited(make_relay):
    relay = make_relay(player_rate=200, player_burst=200)
    a, b = room_of_two(relay)
    try:
        for i in range(3000):
            try:
                a.send(1, 9, b"spam")
            except CoopError:
                pass
            if i % 500 == 499:  # the relay reads the spam (a starved relay's kernel would drop it)
                wait_read(relay)
        wait_for(lambda: relay.drops("rate_player") > 1000, what="player rate drops")
        time.sleep(1.2)  # the bucket refills; the player is back to normal
        while b.recv(timeout=0.2):
            pass
        assert_room_works(a, b, b"calm")
        assert relay.alive()
    finally:
        a.close(), b.close()


def test_oversized_packets_dropped(make_relay):
    relay = make_relay(max_packet=512)
    a, b = room_of_two(relay)
    try:
        s = raw_socket()
        for size in (513, 1400, 9000, 60000):
            s.sendto(P.encode_data(a._session, 1, 0, 0, 0, bytes(size - P.DATA_HEADER)), relay.address)
        # the same from the seated player's own socket: still dropped, never forwarded
        a._sock.sendto(P.encode_data(a._session, 1, 0, 0, 99, bytes(600)), relay.address)
        wait_for(lambda: relay.drops("oversize") == 5, what="5 oversize drops")
        assert replies(s) == []
        assert_room_works(a, b, b"big")
    finally:
        a.close(), b.close()


def test_handshake_replies_never_larger_than_request(relay):
    """Before an address is verified every reply is a 20-byte CHALLENGE to a >= 64-byte JOIN/
    RESUME, or to a >= 20-byte packet of a live session from a new address."""
    a, b = room_of_two(relay)
    try:
        s = raw_socket()
        for pkt in (
            P.encode_join(relay.token("r", "x")),
            P.encode_resume(a._session, a._resume_key),
            P.encode_ping(a._session, 0),
            P.encode_data(a._session, ALL, 0, 0, 0, b""),
        ):
            s.sendto(pkt, relay.address)
            got = first_replies(s)
            assert len(got) == 1 and len(got[0]) <= len(pkt) and P.packet_type(got[0]) == P.CHALLENGE
        # a JOIN shorter than the minimum gets nothing at all
        s.sendto(P.encode_join(relay.token("r", "x"))[: P.MIN_HANDSHAKE - 1], relay.address)
        assert replies(s, 0.2) == []
    finally:
        a.close(), b.close()
