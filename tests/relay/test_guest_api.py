"""The handle/result-code API the nn:: shim will wrap: two "guests" meet in a room."""

from __future__ import annotations

from cpu_host.coop import ALL
from cpu_host.coop.client import E_REFUSED_BASE
from cpu_host.coop.handles import E_BAD_HANDLE, OK, CoopHandles
from relay import protocol as P
from relaytest import wait_for


def test_two_guests_meet_through_handles(relay):
    host, port = relay.address
    g1, g2 = CoopHandles(), CoopHandles()  # one per guest process
    rc, h1, s1 = g1.connect(host, port, relay.token("meet", "g1", host=True), b"pw", create=True)
    assert (rc, s1) == (OK, 0)
    assert g2.connect(host, port, relay.token("meet", "g2"), b"wrong", create=False)[0] == E_REFUSED_BASE + P.R_WRONG_PASSWORD
    rc, h2, s2 = g2.connect(host, port, relay.token("meet", "g2"), b"pw", create=False)
    assert (rc, s2) == (OK, 1)
    wait_for(lambda: g1.roster(h1) == (OK, {0: "g1", 1: "g2"}), what="g1 sees g2")
    assert g1.send(h1, ALL, 5, b"hello g2", True) == OK
    rc, src, ch, payload = g2.receive(h2, timeout_s=3)
    assert (rc, src, ch, payload) == (OK, 0, 5, b"hello g2")
    assert g2.send(h2, 0, 5, b"hi g1", False) == OK
    assert g1.receive(h1, timeout_s=3) == (OK, 1, 5, b"hi g1")
    assert g1.receive(h1) == (OK, -1, 0, b"")  # nothing waiting: no block
    assert g1.send(h1, 7, 0, b"x", False) != OK  # empty seat
    assert g1.send(12345, 0, 0, b"x", False) == E_BAD_HANDLE
    assert g2.close(h2) == OK and g2.close(h2) == E_BAD_HANDLE
    wait_for(lambda: g1.roster(h1) == (OK, {0: "g1"}), what="g2 gone")
    assert g1.close(h1) == OK
    wait_for(lambda: not relay.server.rooms, what="room removed")
