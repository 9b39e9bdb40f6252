"""Decoders and token checks on arbitrary bytes (hypothesis): they either decode or raise their
own error naming what is wrong, never anything else; encoders round-trip."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay import protocol as P
from relay import tokens

SECRET = b"k" * 32
DECODERS = [
    P.packet_type,
    P.decode_join,
    P.decode_resume,
    P.decode_challenge,
    P.decode_welcome,
    P.decode_peer,
    P.decode_deliver,
    P.decode_pong,
    P.session_of,
]


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(DECODERS))
def test_decoders_only_raise_protocol_error(data, decode):
    try:
        decode(data)
    except P.ProtocolError as e:
        assert str(e)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_token_verify_only_raises_token_error(data):
    with pytest.raises(tokens.TokenError):
        tokens.verify(SECRET, data)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8), st.booleans(), st.integers(min_value=1, max_value=10**6))
def test_token_roundtrip_and_any_flipped_bit_fails(room, player, host, ttl):
    tok = tokens.issue(SECRET, room, player, ttl, host)
    assert tokens.verify(SECRET, tokens.from_text(tokens.to_text(tok))) == tokens.Token(room, player, tok_exp(tok), host)
    for i in range(len(tok) * 8):
        bad = bytearray(tok)
        bad[i // 8] ^= 1 << (i % 8)
        with pytest.raises(tokens.TokenError):
            tokens.verify(SECRET, bytes(bad))
    with pytest.raises(tokens.TokenError) as e:
        tokens.verify(SECRET, tok, now=time.time() + ttl + 1)
    assert e.value.reason == "expired_token"


def tok_exp(tok: bytes) -> int:
    return int.from_bytes(tok[2:10], "little")


@given(
    st.dictionaries(st.integers(0, 7), st.tuples(st.integers(1, 65535), st.text(min_size=1, max_size=8)), max_size=8),
    st.integers(0, 7),
    st.integers(0, 65535),
)
def test_welcome_roundtrip(roster, slot, epoch):
    w = P.Welcome(2**40 + 5, bytes(range(16)), slot, 8, 1000, 10000, epoch, {s: P.Seat(i, n) for s, (i, n) in roster.items()})
    assert P.decode_welcome(P.encode_welcome(w)) == w


def test_join_lengths_checked():
    pkt = bytearray(P.encode_join(b"t" * 30, b"pw"))
    pkt[6:8] = (1000).to_bytes(2, "little")  # token_len past the end
    with pytest.raises(P.ProtocolError, match="token_len 1000"):
        P.decode_join(bytes(pkt))
    assert len(P.encode_join(b"")) == P.MIN_HANDSHAKE
