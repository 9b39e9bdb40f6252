"""The relay's wire format: packet types, field offsets, encoders and decoders.

Every multi-byte integer is little-endian.  ``docs/coop.md`` describes each packet field by
field; this module is the one place in Python that knows the byte layout (the C fast path in
``relay/core.c`` repeats the few offsets it needs, with the same names).

Decoders raise ``ProtocolError`` naming the packet and field that is wrong; they never trust a
length field.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAGIC = b"NR"
VERSION = 1
HEADER = 4  # magic(2) version(1) type(1)
MAX_SLOTS = 8
ALL = 0xFF  # destination "every other player in the room"
COOKIE_LEN = 16
RESUME_KEY_LEN = 16
MIN_HANDSHAKE = 64  # JOIN/RESUME are padded to this: every pre-verification reply is smaller
MAX_NAME = 32  # room and player names, UTF-8 bytes

# client -> relay
JOIN, RESUME, DATA, PING, LEAVE = 0x01, 0x02, 0x10, 0x11, 0x12
# relay -> client
CHALLENGE, WELCOME, REFUSED, PEER, BYE, DELIVER, PONG = 0x81, 0x82, 0x83, 0x84, 0x85, 0x90, 0x91

TYPE_NAMES = {
    JOIN: "JOIN",
    RESUME: "RESUME",
    DATA: "DATA",
    PING: "PING",
    LEAVE: "LEAVE",
    CHALLENGE: "CHALLENGE",
    WELCOME: "WELCOME",
    REFUSED: "REFUSED",
    PEER: "PEER",
    BYE: "BYE",
    DELIVER: "DELIVER",
    PONG: "PONG",
}

# DATA / DELIVER flags.  Reliable streams are per (sender, receiver, channel): a reliable
# message "to all" is sent by the client as one copy per peer (see docs/coop.md).
F_RELIABLE, F_ACK = 0x01, 0x02
F_KNOWN = F_RELIABLE | F_ACK

# JOIN flags
J_OPEN = 0x01  # create the room (token must allow it); else the room must exist

DATA_HEADER = 24  # hdr(4) session(8) dst(1) channel(1) flags(1) 0(1) dst_inc(2) 0(2) seq(4)
DELIVER_HEADER = 16  # hdr(4) src(1) dst(1) channel(1) flags(1) src_inc(2) 0(2) seq(4)

# REFUSED reasons
(
    R_BAD_TOKEN,
    R_EXPIRED,
    R_WRONG_PASSWORD,
    R_ROOM_FULL,
    R_NO_ROOM,
    R_ROOM_EXISTS,
    R_NOT_HOST,
    R_NO_SESSION,
    R_SERVER_FULL,
    R_SHUTTING_DOWN,
    R_SEAT_TAKEN,
) = range(1, 12)
REFUSED_NAMES = {
    R_BAD_TOKEN: "bad_token",
    R_EXPIRED: "expired_token",
    R_WRONG_PASSWORD: "wrong_password",
    R_ROOM_FULL: "room_full",
    R_NO_ROOM: "no_room",
    R_ROOM_EXISTS: "room_exists",
    R_NOT_HOST: "not_host",
    R_NO_SESSION: "no_session",
    R_SERVER_FULL: "server_full",
    R_SHUTTING_DOWN: "shutting_down",
    R_SEAT_TAKEN: "seat_taken",
}

# BYE reasons
B_LEFT, B_SHUTDOWN, B_TIMEOUT, B_REPLACED = range(0, 4)
BYE_NAMES = {B_LEFT: "left", B_SHUTDOWN: "shutdown", B_TIMEOUT: "timeout", B_REPLACED: "replaced"}

# PEER events
P_JOINED, P_LEFT = 0, 1


class ProtocolError(ValueError):
    """A packet that does not follow the format; the message names packet, field and offset."""


def header(ptype: int) -> bytes:
    return MAGIC + bytes((VERSION, ptype))


def packet_type(pkt: bytes) -> int:
    if len(pkt) < HEADER:
        raise ProtocolError(f"packet of {len(pkt)} bytes is shorter than the {HEADER}-byte header")
    if pkt[:2] != MAGIC:
        raise ProtocolError(f"bad magic {pkt[:2].hex()} at offset 0 (want {MAGIC.hex()})")
    if pkt[2] != VERSION:
        raise ProtocolError(f"unsupported version {pkt[2]} at offset 2 (want {VERSION})")
    return pkt[3]


def _need(pkt: bytes, n: int, what: str) -> None:
    if len(pkt) < n:
        raise ProtocolError(f"{what} packet of {len(pkt)} bytes: needs at least {n}")


def _pad(body: bytes) -> bytes:
    return body + bytes(max(0, MIN_HANDSHAKE - len(body)))


# ---- handshake -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Join:
    flags: int
    cookie: bytes
    token: bytes
    password: bytes


def encode_join(token: bytes, password: bytes = b"", cookie: bytes = bytes(COOKIE_LEN), flags: int = 0) -> bytes:
    if len(password) > 255:
        raise ProtocolError("JOIN password longer than 255 bytes")
    return _pad(header(JOIN) + struct.pack("<BBH", flags, len(password), len(token)) + cookie + token + password)


def decode_join(pkt: bytes) -> Join:
    _need(pkt, MIN_HANDSHAKE, "JOIN")
    flags, pw_len, tok_len = struct.unpack_from("<BBH", pkt, 4)
    if flags & ~J_OPEN:
        raise ProtocolError(f"JOIN flags {flags:#x} at offset 4 has unknown bits")
    end = 24 + tok_len + pw_len
    if end > len(pkt):
        raise ProtocolError(
            f"JOIN token_len {tok_len} + password_len {pw_len} at offset 5..7 run past the packet end ({len(pkt)})"
        )
    return Join(flags, pkt[8:24], pkt[24 : 24 + tok_len], pkt[24 + tok_len : end])


@dataclass(frozen=True)
class Resume:
    cookie: bytes
    session: int
    resume_key: bytes


def encode_resume(session: int, resume_key: bytes, cookie: bytes = bytes(COOKIE_LEN)) -> bytes:
    return _pad(header(RESUME) + bytes(4) + cookie + struct.pack("<Q", session) + resume_key)


def decode_resume(pkt: bytes) -> Resume:
    _need(pkt, MIN_HANDSHAKE, "RESUME")
    return Resume(pkt[8:24], struct.unpack_from("<Q", pkt, 24)[0], pkt[32:48])


def encode_challenge(cookie: bytes) -> bytes:
    return header(CHALLENGE) + cookie


def decode_challenge(pkt: bytes) -> bytes:
    _need(pkt, HEADER + COOKIE_LEN, "CHALLENGE")
    return pkt[4:20]


@dataclass(frozen=True)
class Seat:
    inc: int  # incarnation: differs for each player that has sat in this slot
    name: str


@dataclass(frozen=True)
class Welcome:
    session: int
    resume_key: bytes
    slot: int
    max_players: int
    heartbeat_ms: int
    timeout_ms: int
    epoch: int  # the room's roster version (PONG carries the current one)
    roster: dict[int, Seat]  # every seat, ours included


def encode_welcome(w: Welcome) -> bytes:
    out = bytearray(
        header(WELCOME)
        + struct.pack("<Q", w.session)
        + w.resume_key
        + struct.pack("<BBHIHB", w.slot, w.max_players, w.heartbeat_ms, w.timeout_ms, w.epoch, len(w.roster))
    )
    for slot, seat in sorted(w.roster.items()):
        nb = seat.name.encode()
        out += struct.pack("<BHB", slot, seat.inc, len(nb)) + nb
    return bytes(out)


def decode_welcome(pkt: bytes) -> Welcome:
    _need(pkt, 39, "WELCOME")
    session = struct.unpack_from("<Q", pkt, 4)[0]
    key = pkt[12:28]
    slot, maxp, hb, to, epoch, count = struct.unpack_from("<BBHIHB", pkt, 28)
    roster, off = {}, 39
    for i in range(count):
        _need(pkt, off + 4, f"WELCOME roster entry {i}")
        s, inc, n = struct.unpack_from("<BHB", pkt, off)
        _need(pkt, off + 4 + n, f"WELCOME roster entry {i} name")
        roster[s] = Seat(inc, pkt[off + 4 : off + 4 + n].decode(errors="replace"))
        off += 4 + n
    return Welcome(session, key, slot, maxp, hb, to, epoch, roster)


def encode_refused(reason: int) -> bytes:
    return header(REFUSED) + bytes((reason, 0))


@dataclass(frozen=True)
class Peer:
    event: int
    slot: int
    inc: int
    epoch: int
    name: str


def encode_peer(event: int, slot: int, inc: int, epoch: int, name: str) -> bytes:
    nb = name.encode()
    return header(PEER) + struct.pack("<BBHHB", event, slot, inc, epoch, len(nb)) + nb


def decode_peer(pkt: bytes) -> Peer:
    _need(pkt, 11, "PEER")
    event, slot, inc, epoch, n = struct.unpack_from("<BBHHB", pkt, 4)
    _need(pkt, 11 + n, "PEER name")
    return Peer(event, slot, inc, epoch, pkt[11 : 11 + n].decode(errors="replace"))


def encode_bye(reason: int) -> bytes:
    return header(BYE) + bytes((reason, 0))


# ---- data path -----------------------------------------------------------------------------


def encode_data(session: int, dst: int, channel: int, flags: int, seq: int, payload: bytes, dst_inc: int = 0) -> bytes:
    """``dst_inc``: incarnation of the seat ``dst`` as the sender knows it (0: any; used for ALL);
    the relay drops a unicast whose seat has since changed hands."""
    return header(DATA) + struct.pack("<QBBBBHHI", session, dst, channel, flags, 0, dst_inc, 0, seq) + payload


@dataclass(frozen=True)
class Deliver:
    src: int
    dst: int
    channel: int
    flags: int
    src_inc: int
    seq: int
    payload: bytes


def decode_deliver(pkt: bytes) -> Deliver:
    _need(pkt, DELIVER_HEADER, "DELIVER")
    src, dst, ch, fl, inc, _r, seq = struct.unpack_from("<BBBBHHI", pkt, 4)
    return Deliver(src, dst, ch, fl, inc, seq, pkt[DELIVER_HEADER:])


def encode_ping(session: int, echo: int) -> bytes:
    return header(PING) + struct.pack("<QQ", session, echo)


def decode_pong(pkt: bytes) -> tuple[int, int, int, int]:
    """-> (occupied slot mask, own slot, room roster epoch, echo)."""
    _need(pkt, 16, "PONG")
    return struct.unpack_from("<BBHQ", pkt, 4)


def encode_leave(session: int) -> bytes:
    return header(LEAVE) + struct.pack("<Q", session)


def session_of(pkt: bytes) -> int:
    """Session id of a DATA/PING/LEAVE packet."""
    _need(pkt, 12, TYPE_NAMES.get(pkt[3] if len(pkt) > 3 else -1, "session"))
    return struct.unpack_from("<Q", pkt, 4)[0]
