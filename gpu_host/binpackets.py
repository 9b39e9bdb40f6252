"""The binary packet format (version 1; gpu_host/PROTOCOL.md, "Binary packets"): a submission's
commands as one blob of fixed-width little-endian packets, which the native decoder
(``gpu_host/nxpkt.c`` through ``gpu_host.nxpkt``) checks and validates without Python per packet.

The layout of every packet follows ``packets.OPS`` (one table for both formats): a 4-byte packet
header ``u8 op, u8 0, u16 size`` (bytes, header included, a multiple of 4), then the fields in
order — u32, i32, f32 and bool (0 or 1) in 4 bytes, u64 in 8; ``attrs`` as a u32 count (1..8)
then count x (location, format, offset) u32s; ``colors`` as a u32 count (1..8) then the ids;
the bindless pools' ``textures`` (16) and ``samplers`` (4) as that many u32s.  The blob's 16-byte
header: magic ``NXGB`` (u32 0x4247584E), version u16, header size u16 (16), packet count u32,
body size u32 (bytes after the header).

``convert`` turns today's packets (tuples ``(op, field, ...)``, as recorded and as the msgpack
ring carries them) into a blob, checking each with ``packets.check`` first, so a packet that
cannot be converted is refused with the same named error the Python path gives.  ``pack_raw``
packs values as they are, for tests of the native decoder's own checks.
"""

from __future__ import annotations

import struct
from typing import Any, Iterable

from gpu_host import packets as P

VERSION = 1
MAGIC = 0x4247584E  # b"NXGB" read as a little-endian u32
HEADER = 16
MAX_PACKETS = 1 << 24  # packets one blob may hold
MAX_PACKET_BYTES = 0xFFFC  # a packet's size field is a u16, a multiple of 4
_HDR = struct.Struct("<IHHII")
_PKT = struct.Struct("<BBH")
_WIDTH = {P.U32: "I", P.I32: "i", P.F32: "f", P.BOOL: "I", P.U64: "Q"}


class ConvertError(P.PacketError):
    """A packet that has no binary form; names the packet index, op and field."""


def _pack_fields(op: P.Op, vals: Iterable[Any]) -> bytes:
    fmt, args = ["<"], []
    for (name, kind), v in zip(op.fields, vals):
        w = _WIDTH.get(kind)
        if w is not None:
            fmt.append(w)
            args.append(int(v) if kind == P.BOOL else v)
        elif kind == P.ATTRS or kind == P.COLOR_IDS:
            items = [x for a in v for x in a] if kind == P.ATTRS else list(v)
            fmt.append(f"I{len(items)}I")
            args += [len(v), *items]
        else:  # TEX_IDS / SMP_IDS: fixed length, no count
            fmt.append(f"{len(v)}I")
            args += list(v)
    return struct.pack("".join(fmt), *args)


def _fixed_struct(op: P.Op) -> struct.Struct | None:
    """The whole packet (header included) of an op without list fields as one Struct."""
    if any(k not in _WIDTH for _, k in op.fields):
        return None
    return struct.Struct("<BBH" + "".join(_WIDTH[k] for _, k in op.fields))


_FIXED = {code: st for code, st in ((o.code, _fixed_struct(o)) for o in P.OPS.values()) if st is not None}


def packet(cmd: tuple) -> bytes:
    """One packet's bytes from a packet tuple whose values fit their wire widths (not checked
    beyond that: ``convert`` checks first)."""
    st = _FIXED.get(cmd[0])
    if st is not None:  # the per-draw ops: one precompiled pack
        return st.pack(cmd[0], 0, st.size, *cmd[1:])
    op = P.OPS[cmd[0]]
    body = _pack_fields(op, cmd[1:])
    return _PKT.pack(op.code, 0, 4 + len(body)) + body


def blob(packets: list[bytes]) -> bytes:
    body = b"".join(packets)
    return _HDR.pack(MAGIC, VERSION, HEADER, len(packets), len(body)) + body


def part_count(header: bytes | memoryview, body_size: int, i: int) -> int:
    """The packet count of part ``i``'s blob header (its first 16 bytes), checked against the
    format and the ``body_size`` bytes that follow it; ValueError names the field."""
    magic, version, hsize, n, size = _HDR.unpack_from(header)
    if magic == MAGIC and version == VERSION and hsize == HEADER and size == body_size:
        return n  # the usual case, on the consumer's path per part: no tuple of checks made
    for name, v, want in (("magic", magic, MAGIC), ("version", version, VERSION), ("header_size", hsize, HEADER)):
        if v != want:
            raise ValueError(f"part {i}: blob header: field {name} = {v:#x} is not {want:#x}")
    if size != body_size:
        raise ValueError(f"part {i}: blob header: field body_size = {size} but {body_size} bytes follow the header")
    return n


def header_into(buf: memoryview | bytearray, at: int, count: int, body_size: int) -> None:
    """Write the header of a blob of ``count`` packets in ``body_size`` bytes at ``buf[at:]``."""
    _HDR.pack_into(buf, at, MAGIC, VERSION, HEADER, count & 0xFFFFFFFF, body_size)


def join(parts: list) -> bytes:
    """One blob of the packets of several blobs (a binary submission's ring parts); raises
    ValueError naming the part whose header is not a blob header (the packets are checked later,
    by the native decoder, on the joined blob)."""
    count, bodies = 0, []
    for i, b in enumerate(parts):
        if len(b) < HEADER:
            raise ValueError(f"part {i}: {len(b)} bytes, shorter than a blob header")
        count += part_count(b, len(b) - HEADER, i)
        bodies.append(b[HEADER:])
    if len(parts) == 1:  # one part is the blob itself: no copy (a view of the ring record)
        return parts[0]
    size = sum(map(len, bodies))  # one copy: the header and the bodies joined at once
    return b"".join([_HDR.pack(MAGIC, VERSION, HEADER, count & 0xFFFFFFFF, size), *bodies])


def convert(commands: Iterable[Any]) -> bytes:
    """The blob of ``commands`` (packet tuples or lists, as decoded from msgpack); raises
    ConvertError naming the packet index, op and field of the first one that is not well formed
    (``packets.check``) or has no binary form (a float beyond f32)."""
    out = []
    check, fixed = P.check, _FIXED
    for i, c in enumerate(commands):
        try:
            t = check(c)
        except P.PacketError as e:
            raise ConvertError(f"packet {i}: {e}") from None
        try:
            st = fixed.get(t[0])
            out.append(st.pack(t[0], 0, st.size, *t[1:]) if st is not None else packet(t))
        except (struct.error, OverflowError) as e:
            op = P.OPS[t[0]]
            bad = next((n for (n, k), v in zip(op.fields, t[1:]) if k == P.F32 and abs(v) > 3.4028234663852886e38), "?")
            raise ConvertError(f"packet {i}: {op.name}: field {bad} has no f32 form ({e})") from None
    if len(out) > MAX_PACKETS:
        raise ConvertError(f"{len(out)} packets exceed the {MAX_PACKETS} of one blob")
    return blob(out)


def pack_raw(op: int, words: list[int]) -> bytes:
    """A packet of op ``op`` whose body is ``words`` u32s as given (tests of the decoder)."""
    body = struct.pack(f"<{len(words)}I", *(w & 0xFFFFFFFF for w in words))
    return _PKT.pack(op, 0, (4 + len(body)) & 0xFFFF) + body


def from_words(words: list[int]) -> list[tuple]:
    """Packet tuples from the native decoder's word stream (``nxpkt.decode``): the inverse of
    ``convert`` for well-formed blobs (f32 values as Python floats of their f32 bits)."""
    out, i = [], 0
    while i < len(words):
        code, n = words[i], words[i + 1]
        w = words[i + 2 : i + 2 + n]
        i += 2 + n
        op, vals, j = P.OPS[code], [], 0
        for _, kind in op.fields:
            if kind == P.F32:
                vals.append(struct.unpack("<f", struct.pack("<I", w[j]))[0])
            elif kind == P.I32:
                vals.append(w[j] - (1 << 32) if w[j] >= 1 << 31 else w[j])
            elif kind == P.BOOL:
                vals.append(bool(w[j]))
            elif kind == P.ATTRS:
                k = w[j]
                vals.append(tuple(tuple(w[j + 1 + 3 * a : j + 4 + 3 * a]) for a in range(k)))
                j += 3 * k
            elif kind == P.COLOR_IDS:
                k = w[j]
                vals.append(tuple(w[j + 1 : j + 1 + k]))
                j += k
            elif kind in (P.TEX_IDS, P.SMP_IDS):
                k = P.POOL_TEXTURES if kind == P.TEX_IDS else P.POOL_SAMPLERS
                vals.append(tuple(w[j : j + k]))
                j += k - 1
            else:
                vals.append(w[j])
            j += 1
        out.append((code, *vals))
    return out


def _format_codes() -> dict[str, int]:
    from gpu_host.formats import FORMATS

    return {name: i + 1 for i, name in enumerate(sorted(FORMATS))}


FORMAT_CODES = _format_codes()  # nx_tex.format (nxpkt.c): a number per texture format name, 1..n


def c_header() -> str:
    """``nxpkt_ops.h``: the op table and limits for nxpkt.c, generated from packets.py so the
    format is written down once."""
    from gpu_host.ring_layout import NUM_FENCES
    from gpu_host.validate import MAX_UNIFORM

    kinds = {P.U32: 1, P.U64: 2, P.I32: 3, P.F32: 4, P.BOOL: 5, P.ATTRS: 6, P.TEX_IDS: 7, P.SMP_IDS: 8, P.COLOR_IDS: 9}
    nmax = max(len(o.fields) for o in P.OPS.values())
    lines = [
        "/* generated by gpu_host/binpackets.py c_header(): do not edit */",
        f"#define NX_VERSION {VERSION}",
        "enum { K_U32 = 1, K_U64, K_I32, K_F32, K_BOOL, K_ATTRS, K_TEX_IDS, K_SMP_IDS, K_COLOR_IDS };",
        f"typedef struct {{ const char *name; int nfields; uint8_t kinds[{nmax}]; uint32_t maxes[{nmax}]; "
        f"const char *fields[{nmax}]; }} nx_op;",
        f"#define NX_NOPS {max(P.OPS) + 1}",
    ]
    for name, v in (
        ("MAX_ATTRS", P.MAX_ATTRS),
        ("MAX_COLOR_TARGETS", P.MAX_COLOR_TARGETS),
        ("POOL_TEXTURES", P.POOL_TEXTURES),
        ("POOL_SAMPLERS", P.POOL_SAMPLERS),
        ("UNIFORM_SLOTS", P.UNIFORM_SLOTS),
        ("TEXTURE_SLOTS", P.TEXTURE_SLOTS),
        ("MAX_DRAW_COUNT", P.MAX_DRAW_COUNT),
        ("MAX_UNIFORM", MAX_UNIFORM),
        ("NUM_FENCES", NUM_FENCES),
        ("MAX_PACKETS", MAX_PACKETS),
    ):
        lines.append(f"#define {name} {v}")
    for o in P.OPS.values():
        lines.append(f"#define OP_{o.name} {o.code}")
    names = ", ".join(f'"{n}"' for n in ("", *sorted(FORMAT_CODES, key=FORMAT_CODES.get)))
    lines.append(f"#define NX_NFORMATS {len(FORMAT_CODES) + 1}")
    lines.append(f"static const char *const NX_FORMAT_NAMES[NX_NFORMATS] = {{{names}}};   /* by nx_tex.format */")
    lines.append("static const nx_op NX_OPS[NX_NOPS] = {")
    for o in P.OPS.values():
        ks = ", ".join(str(kinds[k]) for _, k in o.fields)
        ms = ", ".join(f"{P.FIELD_MAX.get((o.code, n), 0xFFFFFFFF)}u" for n, _ in o.fields)
        ns = ", ".join(f'"{n}"' for n, _ in o.fields)
        lines.append(f'    [{o.code}] = {{"{o.name}", {len(o.fields)}, {{{ks}}}, {{{ms}}}, {{{ns}}}}},')
    lines.append("};")
    return "\n".join(lines) + "\n"


# -- the native recorder's submissions (cpu_host/gpu_client/blob.py) -------------------------
def blob_header(count: int, body_size: int) -> bytes:
    """The 16-byte header of a blob of ``count`` packets in ``body_size`` bytes."""
    return _HDR.pack(MAGIC, VERSION, HEADER, count, body_size)
