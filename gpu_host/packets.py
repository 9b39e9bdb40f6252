"""Packet format of the command ring: each packet is one msgpack array ``[op, field, ...]``.

``decode`` checks the shape and the type/range of every field (it knows nothing of which
objects exist: ``replay.validate`` checks handles and pool ranges).  ``encode`` is used by the
CPU-host client; both sides share the one ``OPS`` table so the format is written down once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgpack

U32 = "u32"
U64 = "u64"
I32 = "i32"
F32 = "f32"
ATTRS = "attrs"    # list of [location u32, vertex format u32, offset u32]
BOOL = "bool"


@dataclass(frozen=True)
class Op:
    code: int
    name: str
    fields: tuple[tuple[str, str], ...]


_OPS = [
    Op(1, "BEGIN", (("seq", U64),)),
    Op(2, "END", (("seq", U64),)),
    Op(3, "TARGET", (("texture", U32),)),
    Op(4, "CLEAR", (("r", F32), ("g", F32), ("b", F32), ("a", F32))),
    Op(5, "PROGRAM", (("program", U32),)),
    Op(6, "VERTEX_LAYOUT", (("stride", U32), ("topology", U32), ("attrs", ATTRS))),
    Op(7, "VERTEX", (("pool", U32), ("offset", U64), ("size", U64))),
    Op(8, "INDEX", (("pool", U32), ("offset", U64), ("size", U64), ("index_size", U32))),
    Op(9, "UNIFORM", (("slot", U32), ("pool", U32), ("offset", U64), ("size", U64))),
    Op(10, "TEXTURE", (("slot", U32), ("texture", U32), ("sampler", U32))),
    Op(11, "VIEWPORT", (("x", F32), ("y", F32), ("width", F32), ("height", F32))),
    Op(12, "DRAW", (("vertex_count", U32), ("instance_count", U32), ("first_vertex", U32), ("first_instance", U32))),
    Op(13, "DRAW_INDEXED", (("index_count", U32), ("instance_count", U32), ("first_index", U32),
                            ("vertex_offset", I32), ("first_instance", U32))),
    Op(14, "SIGNAL", (("fence", U32), ("value", U64))),
    Op(15, "PRESENT", (("frame", U64), ("texture", U32))),
    Op(16, "BLEND", (("enable", BOOL),)),
    Op(17, "WRITEBACK", (("texture", U32),)),
    Op(18, "DIRTY", (("pool", U32), ("offset", U64), ("size", U64))),
]
OPS: dict[int, Op] = {o.code: o for o in _OPS}
BY_NAME: dict[str, Op] = {o.name: o for o in _OPS}
OP_BEGIN, OP_END, OP_TARGET, OP_CLEAR = 1, 2, 3, 4
OP_PROGRAM, OP_VERTEX_LAYOUT, OP_VERTEX, OP_INDEX, OP_UNIFORM, OP_TEXTURE = 5, 6, 7, 8, 9, 10
OP_VIEWPORT, OP_DRAW, OP_DRAW_INDEXED, OP_SIGNAL, OP_PRESENT, OP_BLEND = 11, 12, 13, 14, 15, 16
OP_WRITEBACK, OP_DIRTY = 17, 18

# Vertex attribute formats: code -> (Vulkan format name, bytes)
VERTEX_FORMATS = {1: ("VK_FORMAT_R32_SFLOAT", 4), 2: ("VK_FORMAT_R32G32_SFLOAT", 8),
                  3: ("VK_FORMAT_R32G32B32_SFLOAT", 12), 4: ("VK_FORMAT_R32G32B32A32_SFLOAT", 16),
                  5: ("VK_FORMAT_R8G8B8A8_UNORM", 4)}
TOPOLOGIES = {0: "VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST", 1: "VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP",
              2: "VK_PRIMITIVE_TOPOLOGY_LINE_LIST", 3: "VK_PRIMITIVE_TOPOLOGY_POINT_LIST"}
UNIFORM_SLOTS = 4
TEXTURE_SLOTS = 4
MAX_ATTRS = 8
MAX_DRAW_COUNT = 1 << 24


class PacketError(ValueError):
    """A packet that is not well formed; the message names the op and the field."""


def encode(op: int, *fields: Any) -> bytes:
    return msgpack.packb([op, *fields], use_bin_type=True)


def _check(op: Op, fname: str, kind: str, v: Any) -> Any:
    def bad(why: str) -> PacketError:
        return PacketError(f"{op.name}: field {fname} = {v!r:.60} {why}")

    if kind in (U32, U64, I32):
        if not isinstance(v, int) or isinstance(v, bool):
            raise bad("is not an integer")
        lo, hi = {U32: (0, 1 << 32), U64: (0, 1 << 64), I32: (-(1 << 31), 1 << 31)}[kind]
        if not lo <= v < hi:
            raise bad(f"is out of range for {kind}")
        return v
    if kind == F32:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise bad("is not a finite number")
        return float(v)
    if kind == BOOL:
        if not isinstance(v, bool):
            raise bad("is not a boolean")
        return v
    if kind == ATTRS:
        if not isinstance(v, list) or not 1 <= len(v) <= MAX_ATTRS:
            raise bad(f"is not a list of 1..{MAX_ATTRS} attributes")
        out = []
        for i, a in enumerate(v):
            if (not isinstance(a, list) or len(a) != 3
                    or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 16 for x in a)):
                raise PacketError(f"{op.name}: field attrs[{i}] = {a!r:.60} is not [location, format, offset]")
            if a[1] not in VERTEX_FORMATS:
                raise PacketError(f"{op.name}: field attrs[{i}] has unknown vertex format {a[1]}")
            if a[0] >= 16:
                raise PacketError(f"{op.name}: field attrs[{i}] location {a[0]} is not below 16")
            out.append(tuple(a))
        return tuple(out)
    raise AssertionError(kind)


_LIMITS = dict(raw=False, strict_map_key=True, max_bin_len=0, max_str_len=0, max_ext_len=0,
               max_array_len=MAX_ATTRS + 8, max_map_len=0)


def decode(payload: bytes) -> tuple:
    """Parse one packet into ``(op, field, ...)`` with every field checked; raise PacketError."""
    try:
        obj = msgpack.unpackb(payload, **_LIMITS)
    except Exception as e:
        raise PacketError(f"not a msgpack packet ({type(e).__name__}: {e})") from None
    return check(obj)


GROUP = 4096   # packets per record from encode_records; a packet is < 256 bytes, so < 1 MiB


def encode_records(commands: list) -> list[bytes]:
    """Ring records holding ``commands`` (sequences ``(op, field, ...)``) as whole packets back to
    back.  msgpack encodes a group as one array in C; the array's header is then cut off, which
    leaves exactly the concatenated packets."""
    out = []
    for i in range(0, len(commands), GROUP):
        group = commands[i:i + GROUP]
        blob = msgpack.packb(group, use_bin_type=True)
        n = len(group)
        out.append(blob[1 if n < 16 else 3 if n < 65536 else 5:])
    return out


def unpack_record(record: bytes) -> tuple[list, PacketError | None]:
    """The packets (plain msgpack objects, unchecked) of one ring record, and the error that cut
    the record short, if any (the objects before it are still returned)."""
    up = msgpack.Unpacker(max_buffer_size=max(len(record), 1), **_LIMITS)
    up.feed(record)
    objs: list = []
    end = 0
    try:
        for obj in up:
            objs.append(obj)
            end = up.tell()
    except Exception as e:
        return objs, PacketError(f"not a msgpack packet ({type(e).__name__}: {e})")
    if end != len(record):
        return objs, PacketError(f"not a msgpack packet (the record ends inside a packet at byte {end})")
    return objs, None


def check(obj: Any) -> tuple:
    """Check one unpacked packet: ``(op, field, ...)`` with every field's type and range checked."""
    if not isinstance(obj, list) or not obj:
        raise PacketError(f"packet is {type(obj).__name__}, not a non-empty array")
    code = obj[0]
    op = OPS.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
    if op is None:
        raise PacketError(f"unknown op {code!r:.40}")
    if len(obj) != 1 + len(op.fields):
        raise PacketError(f"{op.name}: has {len(obj) - 1} fields, expected {len(op.fields)}")
    vals = [_check(op, fname, kind, v) for (fname, kind), v in zip(op.fields, obj[1:])]
    if op.code == OP_VERTEX_LAYOUT:
        if vals[1] not in TOPOLOGIES:
            raise PacketError(f"VERTEX_LAYOUT: field topology = {vals[1]} is not one of {sorted(TOPOLOGIES)}")
        if not 0 < vals[0] <= 2048:
            raise PacketError(f"VERTEX_LAYOUT: field stride = {vals[0]} is not in 1..2048")
        for i, (loc, fmt, off) in enumerate(vals[2]):
            if off + VERTEX_FORMATS[fmt][1] > vals[0]:
                raise PacketError(f"VERTEX_LAYOUT: field attrs[{i}] offset {off} runs past stride {vals[0]}")
    elif op.code == OP_INDEX and vals[3] not in (2, 4):
        raise PacketError(f"INDEX: field index_size = {vals[3]} is not 2 or 4")
    elif op.code == OP_UNIFORM and vals[0] >= UNIFORM_SLOTS:
        raise PacketError(f"UNIFORM: field slot = {vals[0]} is not below {UNIFORM_SLOTS}")
    elif op.code == OP_TEXTURE and vals[0] >= TEXTURE_SLOTS:
        raise PacketError(f"TEXTURE: field slot = {vals[0]} is not below {TEXTURE_SLOTS}")
    elif op.code in (OP_DRAW, OP_DRAW_INDEXED) and (vals[0] > MAX_DRAW_COUNT or vals[1] > MAX_DRAW_COUNT):
        raise PacketError(f"{op.name}: counts {vals[0]}x{vals[1]} exceed {MAX_DRAW_COUNT}")
    elif op.code == OP_VIEWPORT and not (0 < vals[2] <= 16384 and 0 < vals[3] <= 16384):
        raise PacketError(f"VIEWPORT: size {vals[2]}x{vals[3]} is not in 1..16384")
    return (op.code, *vals)
