"""Fixtures for the relay suites (helpers live in relaytest.py)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

import pytest

# The helpers beside this file (relaytest, netem) are imported by name, whatever pytest's
# --import-mode: with importlib, test folders are not on sys.path by themselves.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from relay.server import RelayConfig  # noqa: E402
from relaytest import Relay  # noqa: E402


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
