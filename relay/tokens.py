"""Join tokens: who may sit in which room until when, signed by the relay's secret (HMAC-SHA256).

Binary form (what JOIN carries), little-endian:

    version:u8 (=1)  flags:u8 (bit0 HOST: may open the room)  expires:u64 (unix seconds)
    room_len:u8  room:bytes  player_len:u8  player:bytes  mac:16 bytes

``mac`` is the first 16 bytes of HMAC-SHA256(secret, everything before it).  Text form (what
``nxrecomp relay token`` prints and players paste): ``nxr1.`` + base64url without padding.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
import time
from dataclasses import dataclass

from relay.protocol import MAX_NAME

VERSION = 1
MAC_LEN = 16
T_HOST = 0x01
PREFIX = "nxr1."


class TokenError(ValueError):
    """A token that is malformed, forged or expired; ``reason`` is a metric label."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Token:
    room: str
    player: str
    expires: int
    host: bool


def _check_name(what: str, name: str) -> bytes:
    b = name.encode()
    if not 1 <= len(b) <= MAX_NAME:
        raise ValueError(f"{what} name {name!r} must be 1..{MAX_NAME} UTF-8 bytes")
    return b


def mac(secret: bytes, body: bytes) -> bytes:
    return hmac.new(secret, body, hashlib.sha256).digest()[:MAC_LEN]


def issue(secret: bytes, room: str, player: str, ttl_s: int, host: bool = False, now: float | None = None) -> bytes:
    """Binary token for ``player`` in ``room``, valid ``ttl_s`` seconds from ``now``."""
    if not secret:
        raise ValueError("empty token secret")
    if ttl_s <= 0:
        raise ValueError(f"ttl {ttl_s} must be positive")
    r, p = _check_name("room", room), _check_name("player", player)
    expires = int((time.time() if now is None else now) + ttl_s)
    body = struct.pack("<BBQ", VERSION, T_HOST if host else 0, expires) + bytes((len(r),)) + r + bytes((len(p),)) + p
    return body + mac(secret, body)


def to_text(token: bytes) -> str:
    return PREFIX + base64.urlsafe_b64encode(token).rstrip(b"=").decode()


def from_text(text: str) -> bytes:
    text = text.strip()
    if not text.startswith(PREFIX):
        raise TokenError("bad_token", f"token does not start with {PREFIX!r}")
    body = text[len(PREFIX) :]
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (ValueError, TypeError) as e:
        raise TokenError("bad_token", f"token is not base64url: {e}") from None


def verify(secret: bytes, token: bytes, now: float | None = None) -> Token:
    """Check format, signature and expiry; raise ``TokenError`` naming what is wrong."""
    if len(token) < 12 + MAC_LEN:
        raise TokenError("bad_token", f"token of {len(token)} bytes is too short")
    body, tag = token[:-MAC_LEN], token[-MAC_LEN:]
    # Signature first: nothing in a forged token is looked at beyond its length.
    if not hmac.compare_digest(mac(secret, body), tag):
        raise TokenError("bad_token", "token signature does not match (forged, or signed with another secret)")
    ver, flags, expires = struct.unpack_from("<BBQ", body, 0)
    if ver != VERSION:
        raise TokenError("bad_token", f"token version {ver} (want {VERSION})")
    if flags & ~T_HOST:
        # a bit this relay does not know may mean a restriction it would not enforce
        raise TokenError("bad_token", f"token flags {flags:#04x} at offset 1 has undefined bits {flags & ~T_HOST:#04x}")
    off = 10
    names = []
    for what in ("room", "player"):
        if off >= len(body):
            raise TokenError("bad_token", f"token {what}_len at offset {off} is past its end")
        n = body[off]
        if not 1 <= n <= MAX_NAME or off + 1 + n > len(body):
            raise TokenError("bad_token", f"token {what}_len {n} at offset {off} is out of range")
        try:
            names.append(body[off + 1 : off + 1 + n].decode())
        except UnicodeDecodeError:
            raise TokenError("bad_token", f"token {what} name at offset {off + 1} is not UTF-8") from None
        off += 1 + n
    if off != len(body):
        raise TokenError("bad_token", f"token has {len(body) - off} stray bytes at offset {off}")
    if (time.time() if now is None else now) >= expires:
        raise TokenError("expired_token", f"token expired at {expires} (unix time)")
    return Token(names[0], names[1], expires, bool(flags & T_HOST))
