"""CMIF: the request/reply inside a HIPC message's data words (and TIPC, its newer, headerless
form that sm: speaks too).

Facts (switchbrew IPC_Marshalling; libnx ``sf/cmif.h``, ``sf/tipc.h``):

- HIPC type: 2 Close, 4 Request, 5 Control, 6 RequestWithContext, 7 ControlWithContext (1 and 3
  are the legacy forms); TIPC: 15 Close, 16 + command id a request.
- The CMIF payload starts at the first 16-byte aligned offset of the message inside the data
  words.  Request header ``SFCI`` (0x49434653), version, command id, token, then the raw
  parameters; reply header ``SFCO`` (0x4F434653), version, result, token, then the output.
- Domain request: a 16-byte header before it: type u8 (1 SendMessage, 2 Close), number of
  input objects u8, payload size u16, object id u32, padding u32, token u32; the payload
  (SFCI header + parameters) is followed by the input object ids.  Domain reply: a 16-byte
  header (number of output objects u32, padding), the SFCO payload, then the output object ids.
- Control commands: 0 ConvertCurrentObjectToDomain (-> object id u32), 1 CopyFromCurrentDomain
  (object id -> move handle), 2 CloneCurrentObject (-> move handle), 3 QueryPointerBufferSize
  (-> u16), 4 CloneCurrentObjectEx (tag u32 -> move handle).
- TIPC: parameters right after the descriptors (no alignment, no header); the reply's first data
  word is the result.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from cpu_host.horizon.ipc.hipc import Message, align16
from cpu_host.horizon.ipc.results import CMIF_INVALID_HEADER_SIZE, CMIF_INVALID_IN_HEADER, IpcError

SFCI = 0x49434653
SFCO = 0x4F434653

TYPE_CLOSE, TYPE_REQUEST, TYPE_CONTROL, TYPE_REQUEST_CTX, TYPE_CONTROL_CTX = 2, 4, 5, 6, 7
LEGACY_REQUEST, LEGACY_CONTROL = 1, 3
TIPC_CLOSE, TIPC_FIRST = 15, 16
DOMAIN_SEND, DOMAIN_CLOSE = 1, 2


@dataclass
class Request:
    command: int
    params: bytes
    token: int = 0
    domain_type: int = 0  # 0: not a domain request
    object_id: int = 0
    in_objects: list[int] = field(default_factory=list)


def payload(msg: Message) -> bytes:
    """The data words from the first 16-byte aligned offset of the message on."""
    start = align16(msg.data_offset) - msg.data_offset
    return msg.data[start:] if start <= len(msg.data) else b""


def parse_request(msg: Message, domain: bool) -> Request:
    """The CMIF request of a Request/Control message; for a domain session, its domain header."""
    body = payload(msg)
    if domain and msg.type in (TYPE_REQUEST, TYPE_REQUEST_CTX):
        if len(body) < 16:
            raise IpcError(CMIF_INVALID_HEADER_SIZE, f"domain header needs 16 bytes, the message has {len(body)}")
        dtype, nobj, size, oid, _pad, token = struct.unpack_from("<BBHIII", body, 0)
        if dtype == DOMAIN_CLOSE:
            return Request(0, b"", token, DOMAIN_CLOSE, oid)
        if 16 + size + 4 * nobj > len(body):
            raise IpcError(
                CMIF_INVALID_HEADER_SIZE,
                f"domain payload of {size:#x} bytes and {nobj} objects overruns the {len(body):#x} data bytes",
            )
        objs = list(struct.unpack_from(f"<{nobj}I", body, 16 + size))
        inner = _plain(body[16 : 16 + size])
        inner.domain_type, inner.object_id, inner.in_objects = dtype, oid, objs
        return inner
    return _plain(body)


def _plain(body: bytes) -> Request:
    if len(body) < 16:
        raise IpcError(CMIF_INVALID_HEADER_SIZE, f"CMIF header needs 16 bytes, the message has {len(body)}")
    magic, _version, command, token = struct.unpack_from("<IIII", body, 0)
    if magic != SFCI:
        raise IpcError(CMIF_INVALID_IN_HEADER, f"CMIF magic {magic:#010x} is not SFCI")
    return Request(command, body[16:], token)


def reply_payload(result: int, data: bytes = b"", domain: bool = False, out_objects: list[int] = ()) -> bytes:
    """An SFCO reply (with its domain header and output object ids on a domain session)."""
    out = struct.pack("<IIII", SFCO, 0, result & 0xFFFFFFFF, 0) + data
    if domain:
        out = struct.pack("<IIII", len(out_objects), 0, 0, 0) + out + struct.pack(f"<{len(out_objects)}I", *out_objects)
    return out


def request_payload(
    command: int,
    params: bytes = b"",
    *,
    domain_object: int = 0,
    in_objects: list[int] = (),
    domain_type: int = DOMAIN_SEND,
    token: int = 0,
) -> bytes:
    """A request's payload (tests and tools): SFCI header + params, in a domain header when
    ``domain_object`` is set."""
    inner = struct.pack("<IIII", SFCI, 0, command, 0) + params
    if not domain_object:
        return inner
    if domain_type == DOMAIN_CLOSE:
        return struct.pack("<BBHIII", DOMAIN_CLOSE, 0, 0, domain_object, 0, 0)
    return (
        struct.pack("<BBHIII", domain_type, len(in_objects), len(inner), domain_object, 0, token)
        + inner
        + struct.pack(f"<{len(in_objects)}I", *in_objects)
    )
