"""The HIPC envelope parser in C (``hipc_parse.c``, what ``hipc.parse`` runs) reads every message
as the Python reference ``hipc.parse_py`` does — the same fields, or the same InvalidCombination
(0xE801) with the same size named — over random headers, counts and words (fixed seed, bounded);
the hand-laid message of ``test_ipc_codec`` checks both against switchbrew's bit positions."""

from __future__ import annotations

import random
import struct

import pytest

from cpu_host.horizon.ipc import hipc
from cpu_host.horizon.ipc.results import IpcError
from tests.horizon.test_ipc_codec import hand_made_request


def outcome(parse, buf: bytes):
    try:
        return parse(buf)
    except IpcError as e:
        return ("error", e.code, str(e))


def test_hand_made_both() -> None:
    raw = hand_made_request()
    raw += bytes(0x100 - len(raw))
    assert hipc.parse(raw) == hipc.parse_py(raw) == hipc.parse(bytearray(raw)) == hipc.parse(memoryview(raw))
    assert hipc.parse(raw).x == [hipc.Static(1, 0x1234567890, 0x301)]


@pytest.mark.parametrize("seed", range(4))
def test_random_messages_agree(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2500):
        size = rng.choice([0, 4, 8, 0x40, 0x100, 0x1000])
        words = [rng.getrandbits(32) for _ in range(size // 4)]
        if words and rng.random() < 0.7:  # plausible headers: small counts, often a special header
            words[0] = (words[0] & 0xFFFF0000 if rng.random() < 0.3 else rng.randrange(16)) | (
                rng.randrange(4) << 16 | rng.randrange(3) << 20 | rng.randrange(3) << 24 | rng.randrange(2) << 28
            )
            if len(words) > 1:
                words[1] = rng.randrange(0x40) | rng.randrange(16) << 10 | rng.randrange(2) << 31
            if len(words) > 2:
                words[2] = rng.getrandbits(9)
        buf = struct.pack(f"<{len(words)}I", *words)
        a, b = outcome(hipc.parse, buf), outcome(hipc.parse_py, buf)
        assert a == b, (buf[:32].hex(), a, b)
