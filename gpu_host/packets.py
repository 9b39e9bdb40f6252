"""Packet format of the command ring: each packet is one msgpack array ``[op, field, ...]``.

``check``/``decode`` check the shape and the type/range of every field (they know nothing of
which objects exist: ``replay.validate`` checks handles and pool ranges).  The CPU-host client
encodes commands once (``encode_commands``, at the end of a recording) and writes submissions as
array records (``submission_records``); the GPU process unpacks each record in one call
(``unpack_array_record``).  Both sides share the one ``OPS`` table so the format is written down
once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgpack

# The bindless pools a program reads through set 1 (spirv_reflect's layout, shader_svc's sizes).
from gpu_host.spirv_reflect import POOL_SAMPLERS, POOL_TEXTURES

U32 = "u32"
U64 = "u64"
I32 = "i32"
F32 = "f32"
ATTRS = "attrs"  # list of [location u32, vertex format u32, offset u32]
TEX_IDS = "tex_ids"  # list of exactly POOL_TEXTURES u32 texture ids (EMPTY: no texture)
SMP_IDS = "smp_ids"  # list of exactly POOL_SAMPLERS u32 sampler ids (EMPTY: no sampler)
COLOR_IDS = "color_ids"  # list of 1..MAX_COLOR_TARGETS u32 texture ids (EMPTY: no target at that index)
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
    Op(
        13,
        "DRAW_INDEXED",
        (("index_count", U32), ("instance_count", U32), ("first_index", U32), ("vertex_offset", I32), ("first_instance", U32)),
    ),
    Op(14, "SIGNAL", (("fence", U32), ("value", U64))),
    Op(15, "PRESENT", (("frame", U64), ("texture", U32))),
    Op(16, "BLEND", (("enable", BOOL),)),
    Op(17, "WRITEBACK", (("texture", U32),)),
    Op(18, "DIRTY", (("pool", U32), ("offset", U64), ("size", U64))),
    Op(19, "POOLS", (("textures", TEX_IDS), ("samplers", SMP_IDS))),
    # Depth/stencil, raster and full blend state (gpu_host/PROTOCOL.md).  Each state packet sets
    # its state for the draws after it in the submission; a submission starts from the defaults.
    Op(20, "DEPTH_TARGET", (("color", U32), ("depth", U32))),
    Op(21, "CLEAR_DEPTH_STENCIL", (("depth", F32), ("stencil", U32), ("aspects", U32))),
    Op(
        22,
        "DEPTH_STENCIL",
        (
            ("depth_test", BOOL),
            ("depth_write", BOOL),
            ("depth_func", U32),
            ("stencil_test", BOOL),
            *(
                (f"{face}_{f}", U32)
                for face in ("front", "back")
                for f in ("fail", "depth_fail", "pass", "func", "ref", "read_mask", "write_mask")
            ),
        ),
    ),
    Op(23, "RASTER", (("cull", U32), ("front_face", U32), ("polygon_mode", U32), ("depth_bias", BOOL))),
    Op(24, "DEPTH_BIAS", (("constant", F32), ("slope", F32), ("clamp", F32))),
    Op(25, "SCISSOR", (("x", U32), ("y", U32), ("width", U32), ("height", U32))),
    Op(
        26,
        "BLEND_STATE",
        (
            ("target", U32),
            ("enable", BOOL),
            ("src_color", U32),
            ("dst_color", U32),
            ("color_op", U32),
            ("src_alpha", U32),
            ("dst_alpha", U32),
            ("alpha_op", U32),
            ("write_mask", U32),
        ),
    ),
    Op(27, "BLEND_CONSTANT", (("r", F32), ("g", F32), ("b", F32), ("a", F32))),
    Op(28, "MULTISAMPLE", (("samples", U32), ("alpha_to_coverage", BOOL))),
    # NVN events (gpu_host/events.py): a u32 in pool memory the GPU writes/adds or waits on.
    Op(29, "EVENT_SIGNAL", (("pool", U32), ("offset", U64), ("mode", U32), ("value", U32))),
    Op(30, "EVENT_WAIT", (("pool", U32), ("offset", U64), ("mode", U32), ("value", U32))),
    # Multiple colour render targets (MRT, PROTOCOL.md): all the colour targets and the depth
    # target at once, and a clear of one colour target by its index.
    Op(31, "RENDER_TARGETS", (("colors", COLOR_IDS), ("depth", U32))),
    Op(32, "CLEAR_TARGET", (("index", U32), ("r", F32), ("g", F32), ("b", F32), ("a", F32))),
    # Multisampling (PROTOCOL.md): a multisampled colour target resolved into a one-sample one.
    Op(33, "RESOLVE", (("src", U32), ("dst", U32))),
    # Presented images (PROTOCOL.md "Presented images", gpu_host/present_image.py): a framebuffer
    # in pool memory shown as a frame (a Horizon program's buffer queued through vi's binder).
    Op(
        40,
        "PRESENT_IMAGE",
        (
            ("frame", U64),
            ("pool", U32),
            ("offset", U64),
            ("width", U32),
            ("height", U32),
            ("layout", U32),
            ("pitch", U32),
            ("block_height_log2", U32),
            ("format", U32),
        ),
    ),
    # Compute dispatches (PROTOCOL.md "Compute", gpu_host/compute.py): storage buffers, words of
    # constant bank 0, surface pool entries, and the dispatch of a registered compute program.
    Op(41, "COMPUTE_BUFFER", (("slot", U32), ("pool", U32), ("offset", U64), ("size", U64), ("at", U32), ("write", BOOL))),
    Op(42, "COMPUTE_CONST", (("at", U32), ("value", U32))),
    Op(43, "COMPUTE_SURFACE", (("slot", U32), ("texture", U32))),
    Op(
        44,
        "DISPATCH",
        (
            ("program", U32),
            ("x", U32),
            ("y", U32),
            ("z", U32),
            ("bank_size", U32),
            ("buffer_mask", U32),
            ("params_pool", U32),
            ("params_offset", U64),
            ("params_size", U32),
            ("params_at", U32),
        ),
    ),
    # shader-tex: viewport ``index`` (0..15; 0 is VIEWPORT's) for a geometry stage writing
    # ViewportIndex (PROTOCOL.md "Viewports"); reset by a target, as VIEWPORT is
    Op(45, "VIEWPORT_INDEXED", (("index", U32), ("x", F32), ("y", F32), ("width", F32), ("height", F32))),
]
OPS: dict[int, Op] = {o.code: o for o in _OPS}
BY_NAME: dict[str, Op] = {o.name: o for o in _OPS}
OP_BEGIN, OP_END, OP_TARGET, OP_CLEAR = 1, 2, 3, 4
OP_PROGRAM, OP_VERTEX_LAYOUT, OP_VERTEX, OP_INDEX, OP_UNIFORM, OP_TEXTURE = 5, 6, 7, 8, 9, 10
OP_VIEWPORT, OP_DRAW, OP_DRAW_INDEXED, OP_SIGNAL, OP_PRESENT, OP_BLEND = 11, 12, 13, 14, 15, 16
OP_WRITEBACK, OP_DIRTY, OP_POOLS = 17, 18, 19
OP_DEPTH_TARGET, OP_CLEAR_DEPTH_STENCIL, OP_DEPTH_STENCIL, OP_RASTER, OP_DEPTH_BIAS = 20, 21, 22, 23, 24
OP_SCISSOR, OP_BLEND_STATE, OP_BLEND_CONSTANT, OP_MULTISAMPLE = 25, 26, 27, 28
OP_EVENT_SIGNAL, OP_EVENT_WAIT = 29, 30
OP_RENDER_TARGETS, OP_CLEAR_TARGET = 31, 32
OP_VIEWPORT_INDEXED = 45  # shader-tex
OP_RESOLVE = 33
OP_PRESENT_IMAGE = 40
OP_COMPUTE_BUFFER, OP_COMPUTE_CONST, OP_COMPUTE_SURFACE, OP_DISPATCH = 41, 42, 43, 44
COMPUTE_BUFFER_SLOTS = 16  # COMPUTE_BUFFER's slot 0..15 (DISPATCH's buffer_mask: one bit a slot)
COMPUTE_SURFACE_SLOTS = 8  # the 2D surface pool's entries (shader_svc/lower/surface.py SURFACE_POOL)
MAX_COMPUTE_BANK = 65536  # DISPATCH's bank_size: constant bank 0 of a compute program, at most 64 KiB
EVENT_SIGNAL_MODES = ("write", "add")
EVENT_WAIT_MODES = ("equal", "gequal_wrap")

# Enumerations of the state packets: Vulkan's own numbering, so replay passes them straight on.
COMPARE_OPS = ("never", "less", "equal", "less_or_equal", "greater", "not_equal", "greater_or_equal", "always")
STENCIL_OPS = (
    "keep",
    "zero",
    "replace",
    "increment_and_clamp",
    "decrement_and_clamp",
    "invert",
    "increment_and_wrap",
    "decrement_and_wrap",
)
CULL_MODES = ("none", "front", "back", "front_and_back")
FRONT_FACES = ("counter_clockwise", "clockwise")
POLYGON_MODES = ("fill", "line")
BLEND_FACTORS = (
    "zero",
    "one",
    "src_color",
    "one_minus_src_color",
    "dst_color",
    "one_minus_dst_color",
    "src_alpha",
    "one_minus_src_alpha",
    "dst_alpha",
    "one_minus_dst_alpha",
    "constant_color",
    "one_minus_constant_color",
    "constant_alpha",
    "one_minus_constant_alpha",
    "src_alpha_saturate",
)
BLEND_OPS = ("add", "subtract", "reverse_subtract", "min", "max")
MAX_COLOR_TARGETS = 8  # colour attachments a submission may name (RENDER_TARGETS, BLEND_STATE, CLEAR_TARGET)
SAMPLE_COUNTS = (1, 2, 4, 8, 16)
DS_DEFAULT = (OP_DEPTH_STENCIL, False, False, 1, False, *(0, 0, 0, 7, 0, 255, 255) * 2)
RASTER_DEFAULT = (OP_RASTER, 0, 0, 0, False)
BLEND_OFF = (OP_BLEND_STATE, 0, False, 1, 0, 0, 1, 0, 0, 15)
# The old BLEND packet's "on": source-alpha over (alpha: one, one minus source alpha).
BLEND_OVER = (OP_BLEND_STATE, 0, True, 6, 7, 0, 1, 7, 0, 15)


def _enum_limits() -> dict[tuple[int, str], int]:
    """Largest value of each enumerated or bounded u32 field, by (op, field name)."""
    lim: dict[tuple[int, str], int] = {
        (OP_CLEAR_DEPTH_STENCIL, "stencil"): 255,
        (OP_CLEAR_DEPTH_STENCIL, "aspects"): 3,
        (OP_DEPTH_STENCIL, "depth_func"): len(COMPARE_OPS) - 1,
        (OP_RASTER, "cull"): len(CULL_MODES) - 1,
        (OP_RASTER, "front_face"): len(FRONT_FACES) - 1,
        (OP_RASTER, "polygon_mode"): len(POLYGON_MODES) - 1,
        (OP_BLEND_STATE, "target"): MAX_COLOR_TARGETS - 1,
        (OP_BLEND_STATE, "write_mask"): 15,
        (OP_BLEND_STATE, "color_op"): len(BLEND_OPS) - 1,
        (OP_BLEND_STATE, "alpha_op"): len(BLEND_OPS) - 1,
        (OP_VIEWPORT_INDEXED, "index"): 15,
        (OP_SCISSOR, "x"): 16384,
        (OP_SCISSOR, "y"): 16384,
        (OP_SCISSOR, "width"): 16384,
        (OP_SCISSOR, "height"): 16384,
        (OP_MULTISAMPLE, "samples"): 16,
        (OP_CLEAR_TARGET, "index"): MAX_COLOR_TARGETS - 1,
        (OP_EVENT_SIGNAL, "mode"): len(EVENT_SIGNAL_MODES) - 1,
        (OP_EVENT_WAIT, "mode"): len(EVENT_WAIT_MODES) - 1,
    }
    lim.update(
        {
            (OP_PRESENT_IMAGE, "width"): 16384,
            (OP_PRESENT_IMAGE, "height"): 16384,
            (OP_PRESENT_IMAGE, "layout"): 1,
            (OP_PRESENT_IMAGE, "block_height_log2"): 5,
            (OP_PRESENT_IMAGE, "format"): 3,
            (OP_COMPUTE_BUFFER, "slot"): COMPUTE_BUFFER_SLOTS - 1,
            (OP_COMPUTE_CONST, "at"): MAX_COMPUTE_BANK - 4,
            (OP_COMPUTE_SURFACE, "slot"): COMPUTE_SURFACE_SLOTS - 1,
            (OP_DISPATCH, "bank_size"): MAX_COMPUTE_BANK,
            (OP_DISPATCH, "buffer_mask"): (1 << COMPUTE_BUFFER_SLOTS) - 1,
            (OP_DISPATCH, "params_size"): MAX_COMPUTE_BANK,
        }
    )
    for face in ("front", "back"):
        for f in ("fail", "depth_fail", "pass"):
            lim[(OP_DEPTH_STENCIL, f"{face}_{f}")] = len(STENCIL_OPS) - 1
        lim[(OP_DEPTH_STENCIL, f"{face}_func")] = len(COMPARE_OPS) - 1
        for f in ("ref", "read_mask", "write_mask"):
            lim[(OP_DEPTH_STENCIL, f"{face}_{f}")] = 255
    for f in ("src_color", "dst_color", "src_alpha", "dst_alpha"):
        lim[(OP_BLEND_STATE, f)] = len(BLEND_FACTORS) - 1
    return lim


FIELD_MAX = _enum_limits()

# Vertex attribute formats: code -> (Vulkan format name, bytes)
VERTEX_FORMATS = {
    1: ("VK_FORMAT_R32_SFLOAT", 4),
    2: ("VK_FORMAT_R32G32_SFLOAT", 8),
    3: ("VK_FORMAT_R32G32B32_SFLOAT", 12),
    4: ("VK_FORMAT_R32G32B32A32_SFLOAT", 16),
    5: ("VK_FORMAT_R8G8B8A8_UNORM", 4),
}
TOPOLOGIES = {
    0: "VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST",
    1: "VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP",
    2: "VK_PRIMITIVE_TOPOLOGY_LINE_LIST",
    3: "VK_PRIMITIVE_TOPOLOGY_POINT_LIST",
}
UNIFORM_SLOTS = 4
TEXTURE_SLOTS = 4
MAX_ATTRS = 8
EMPTY = 0xFFFFFFFF  # a pool entry with nothing registered in it
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
        if type(v) is not list and type(v) is not tuple or not 1 <= len(v) <= MAX_ATTRS:
            raise bad(f"is not a list of 1..{MAX_ATTRS} attributes")
        out = []
        for i, a in enumerate(v):
            if (
                type(a) is not list
                and type(a) is not tuple
                or len(a) != 3
                or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 16 for x in a)
            ):
                raise PacketError(f"{op.name}: field attrs[{i}] = {a!r:.60} is not [location, format, offset]")
            if a[1] not in VERTEX_FORMATS:
                raise PacketError(f"{op.name}: field attrs[{i}] has unknown vertex format {a[1]}")
            if a[0] >= 16:
                raise PacketError(f"{op.name}: field attrs[{i}] location {a[0]} is not below 16")
            out.append(tuple(a))
        return tuple(out)
    if kind in (TEX_IDS, SMP_IDS):
        n = POOL_TEXTURES if kind == TEX_IDS else POOL_SAMPLERS
        if type(v) is not list and type(v) is not tuple or len(v) != n:
            raise bad(f"is not a list of {n} ids")
        for i, x in enumerate(v):
            if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < 1 << 32:
                raise PacketError(f"{op.name}: field {fname}[{i}] = {x!r:.40} is not a u32 id")
        return tuple(v)
    if kind == COLOR_IDS:
        if type(v) is not list and type(v) is not tuple or not 1 <= len(v) <= MAX_COLOR_TARGETS:
            raise bad(f"is not a list of 1..{MAX_COLOR_TARGETS} ids")
        for i, x in enumerate(v):
            if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < 1 << 32:
                raise PacketError(f"{op.name}: field {fname}[{i}] = {x!r:.40} is not a u32 id")
        return tuple(v)
    raise AssertionError(kind)


_LIMITS = dict(
    raw=False,
    strict_map_key=True,
    max_bin_len=0,
    max_str_len=0,
    max_ext_len=0,
    max_array_len=max(MAX_ATTRS + 8, POOL_TEXTURES, 1 + max(len(o.fields) for o in _OPS)),
    max_map_len=0,
)


def decode(payload: bytes) -> tuple:
    """Parse one packet into ``(op, field, ...)`` with every field checked; raise PacketError."""
    try:
        obj = msgpack.unpackb(payload, **_LIMITS)
    except Exception as e:
        raise PacketError(f"not a msgpack packet ({type(e).__name__}: {e})") from None
    return check(obj)


GROUP = 4096  # packets per record from encode_records; a packet is < 256 bytes, so < 1 MiB
RECORD_PACKETS = 1 << 16  # most packets one array record may hold (the reader's array limit)
RECORD_BYTES = (1 << 20) - 8  # an array record's payload, header included, stays under MAX_PACKET


def encode_records(commands: list) -> list[bytes]:
    """Ring records holding ``commands`` (sequences ``(op, field, ...)``) as whole packets back to
    back.  msgpack encodes a group as one array in C; the array's header is then cut off, which
    leaves exactly the concatenated packets."""
    out = []
    for i in range(0, len(commands), GROUP):
        group = commands[i : i + GROUP]
        blob = msgpack.packb(group, use_bin_type=True)
        n = len(group)
        out.append(blob[1 if n < 16 else 3 if n < 65536 else 5 :])
    return out


def array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` items (what ``encode_records`` cuts off)."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 65536:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


@dataclass(frozen=True)
class Encoded:
    """Commands encoded once, when their recording ended: ``chunks`` of whole msgpack packets back
    to back with their packet counts, each small enough for one ring record.  A submit then only
    copies these bytes into the ring (behind an array header), however often it is submitted."""

    chunks: tuple[tuple[bytes, int], ...]
    count: int

    @property
    def nbytes(self) -> int:
        return sum(len(b) for b, _ in self.chunks)


def encode_commands(commands: list) -> Encoded:
    """Encode ``commands`` (sequences ``(op, field, ...)``) for ``Encoded`` (no checks: the GPU
    process checks every field).  One C-level msgpack call per ``GROUP`` commands."""
    chunks: list[tuple[bytes, int]] = []
    todo = [(i, min(i + GROUP, len(commands))) for i in range(0, len(commands), GROUP)]
    while todo:
        a, b = todo.pop(0)
        blob = msgpack.packb(commands[a:b], use_bin_type=True)
        body = blob[len(array_header(b - a)) :]
        if len(body) + 5 > RECORD_BYTES:  # huge packets: split the group until it fits
            if b - a == 1:
                raise ValueError(f"command {commands[a][0]!r} encodes to {len(body)} bytes, over a ring record")
            m = (a + b) // 2
            todo[:0] = [(a, m), (m, b)]
            continue
        chunks.append((body, b - a))
    return Encoded(tuple(chunks), len(commands))


def submission_records(seq: int, items: list) -> list[tuple[bytes, ...]]:
    """The ring records (array records, as parts to write back to back) of submission ``seq``:
    BEGIN, ``items`` (commands ``(op, ...)`` and ``Encoded`` blocks, in order), END.  Runs of
    plain commands are encoded here; ``Encoded`` blocks are only referenced (no copy, no
    re-encoding)."""
    parts: list[tuple[bytes, int]] = [(encode(OP_BEGIN, seq), 1)]
    run: list = []
    for it in items:
        if isinstance(it, Encoded):
            if run:
                parts.extend(encode_commands(run).chunks)
                run = []
            parts.extend(it.chunks)
        else:
            run.append(it)
    if run:
        parts.extend(encode_commands(run).chunks)
    parts.append((encode(OP_END, seq), 1))
    records: list[tuple[bytes, ...]] = []
    cur: list[bytes] = []
    n = size = 0
    for body, k in parts:
        if cur and (size + len(body) + 5 > RECORD_BYTES or n + k > RECORD_PACKETS):
            records.append((array_header(n), *cur))
            cur, n, size = [], 0, 0
        cur.append(body)
        n += k
        size += len(body)
    records.append((array_header(n), *cur))
    return records


# Tuples, not lists: a tuple of numbers is untracked by the garbage collector at its first pass,
# so 10,000 unpacked draws per frame stop costing collections for the rest of their life.
_ARRAY_LIMITS = {**_LIMITS, "max_array_len": RECORD_PACKETS, "use_list": False}


def unpack_array_record(record: bytes) -> tuple[tuple | list, PacketError | None]:
    """The packets (plain msgpack objects with arrays as tuples, unchecked) of one array record (ring tag 3: one msgpack
    array of packets), and the error that cut it short, if any (the objects before it are still
    returned).  The whole array is built by msgpack in C; only a bad record takes the slow path
    that finds where it breaks."""
    try:
        objs = msgpack.unpackb(record, **_ARRAY_LIMITS)
    except Exception:
        objs = None
    if type(objs) is tuple:
        return objs, None
    up = msgpack.Unpacker(max_buffer_size=max(len(record), 1), **_ARRAY_LIMITS)
    up.feed(record)
    try:
        n = up.read_array_header()
    except Exception as e:
        return [], PacketError(f"not a packet array record ({type(e).__name__}: {e})")
    objs = []
    try:
        for _ in range(n):
            objs.append(up.unpack())
    except Exception as e:
        return objs, PacketError(f"not a msgpack packet ({type(e).__name__}: {e})")
    return objs, PacketError(f"not a msgpack packet (the record has {len(record) - up.tell()} bytes after its {n} packets)")


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


_INT_RANGES = {U32: (0, 1 << 32), U64: (0, 1 << 64), I32: (-(1 << 31), 1 << 31)}
# Rules beyond each field's own type and range, on the packet tuple (op at index 0); the full
# check below applies the same rules and names the field that breaks one.
_RULES = {
    OP_INDEX: lambda t: t[4] == 2 or t[4] == 4,
    OP_UNIFORM: lambda t: t[1] < UNIFORM_SLOTS,
    OP_TEXTURE: lambda t: t[1] < TEXTURE_SLOTS,
    OP_DRAW: lambda t: t[1] <= MAX_DRAW_COUNT and t[2] <= MAX_DRAW_COUNT,
    OP_DRAW_INDEXED: lambda t: t[1] <= MAX_DRAW_COUNT and t[2] <= MAX_DRAW_COUNT,
    OP_VIEWPORT: lambda t: 0 < t[3] <= 16384 and 0 < t[4] <= 16384,
    OP_VIEWPORT_INDEXED: lambda t: 0 < t[4] <= 16384 and 0 < t[5] <= 16384,
    OP_CLEAR_DEPTH_STENCIL: lambda t: 0.0 <= t[1] <= 1.0 and 0 < t[3],
    OP_MULTISAMPLE: lambda t: t[1] in SAMPLE_COUNTS,
    OP_PRESENT_IMAGE: lambda t: _image_problem(t) is None,
}


def _bounded(code: int, rule):
    """``rule`` plus every FIELD_MAX bound of op ``code`` (fields at their packet positions)."""
    op = OPS[code]
    bounds = tuple((1 + i, FIELD_MAX[(code, name)]) for i, (name, _) in enumerate(op.fields) if (code, name) in FIELD_MAX)
    if not bounds:
        return rule

    def check_bounds(t) -> bool:
        for i, hi in bounds:
            if t[i] > hi:
                return False
        return rule is None or rule(t)

    return check_bounds


_RULES = {code: r for code, r in ((code, _bounded(code, _RULES.get(code))) for code in OPS) if r is not None}


def _fast_check(op: Op):
    """The common case of ``check`` for one op, without a function call per field: a packet whose
    fields already have their exact types (ints in range, finite floats, bools) and that keeps the
    op's rules is returned as a tuple as it is; anything else (``None``) goes to the full check,
    which converts (an int where a float goes) or names what is wrong.  Ops with nested fields
    (VERTEX_LAYOUT's attributes: rare) always take the full check."""
    kinds = [k for _, k in op.fields]
    if ATTRS in kinds or TEX_IDS in kinds or COLOR_IDS in kinds:
        return None
    spec = tuple((0, *_INT_RANGES[k]) if k in _INT_RANGES else (1 if k == F32 else 2, 0, 0) for k in kinds)
    n = len(spec) + 1
    rule = _RULES.get(op.code)
    isfinite = math.isfinite

    def fast(obj):
        if len(obj) != n:
            return None
        i = 1
        for kind, lo, hi in spec:
            v = obj[i]
            if kind == 0:
                if type(v) is not int or v < lo or v >= hi:
                    return None
            elif kind == 1:
                if type(v) is not float or not isfinite(v):
                    return None
            elif type(v) is not bool:
                return None
            i += 1
        t = obj if type(obj) is tuple else tuple(obj)
        return t if rule is None or rule(t) else None

    return fast


_FAST = {code: f for code, f in ((o.code, _fast_check(o)) for o in _OPS) if f is not None}


def check(obj: Any) -> tuple:
    """Check one unpacked packet (an array: list or tuple): ``(op, field, ...)`` with every field's
    type and range checked."""
    # Per draw this runs once per packet: the fast path first, the full check for the rest.
    if (type(obj) is tuple or type(obj) is list) and obj and type(obj[0]) is int:
        fast = _FAST.get(obj[0])
        if fast is not None:
            t = fast(obj)
            if t is not None:
                return t
    return check_full(obj)


def check_full(obj: Any) -> tuple:
    """``check`` field by field: converts ints where floats go, and raises PacketError naming the
    op and the field that is wrong."""
    if type(obj) is not list and type(obj) is not tuple or not obj:
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
    elif op.code == OP_VIEWPORT_INDEXED and not (0 < vals[3] <= 16384 and 0 < vals[4] <= 16384):
        raise PacketError(f"VIEWPORT_INDEXED: size {vals[3]}x{vals[4]} is not in 1..16384")
    for (fname, _), v in zip(op.fields, vals):
        hi = FIELD_MAX.get((op.code, fname))
        if hi is not None and v > hi:
            raise PacketError(f"{op.name}: field {fname} = {v} is not in 0..{hi}")
    if op.code == OP_CLEAR_DEPTH_STENCIL:
        if not 0.0 <= vals[0] <= 1.0:
            raise PacketError(f"CLEAR_DEPTH_STENCIL: field depth = {vals[0]} is not in 0..1")
        if vals[2] == 0:
            raise PacketError("CLEAR_DEPTH_STENCIL: field aspects = 0 clears nothing (1 depth, 2 stencil, 3 both)")
    elif op.code == OP_MULTISAMPLE and vals[0] not in SAMPLE_COUNTS:
        raise PacketError(f"MULTISAMPLE: field samples = {vals[0]} is not one of {SAMPLE_COUNTS}")
    elif op.code == OP_PRESENT_IMAGE and _image_problem((op.code, *vals)):
        raise PacketError(f"PRESENT_IMAGE: {_image_problem((op.code, *vals))}")
    return (op.code, *vals)


def _image_problem(t: tuple) -> str | None:
    from gpu_host import present_image  # its rules between fields, written once there

    return present_image.problem(t)
