"""Fixtures for the relay suites (helpers live in relaytest.py)."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator

import pytest

from relay.server import RelayConfig
from relaytest import Relay


@pytest.fixture
def make_relay() -> Iterator[Callable[..., Relay]]:
    made: list[Relay] = []

    def make(**overrides: object) -> Relay:
        r = Relay(replace(RelayConfig(listen="127.0.0.1:0"), **overrides))
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


@pytest.fixture
def relay(make_relay: Callable[..., Relay]) -> Relay:
    return make_relay()
