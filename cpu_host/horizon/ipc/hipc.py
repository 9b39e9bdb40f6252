"""The HIPC envelope: parse a request's bytes, build a reply's.

Layout (switchbrew IPC_Marshalling; libnx ``sf/hipc.h``), little-endian 32-bit words:

- word 0: type [15:0], X (send static) count [19:16], A (send buffer) count [23:20],
  B (receive buffer) count [27:24], W (exchange buffer) count [31:28];
- word 1: data-word count [9:0], C (receive static) mode [13:10] (0 none, 1 reserved, 2 one
  entry whose buffer the server picks from ("auto"), 2 + n: n entries), receive-list offset
  [30:20] (unused), special header present [31];
- special header: send PID [0], copy-handle count [4:1], move-handle count [8:5]; then the
  8-byte PID when sent, the copy handles, the move handles;
- X descriptors, 2 words: index [5:0], address bits 36..41 in [11:6], bits 32..35 in
  [15:12], size [31:16]; address bits 0..31;
- A/B/W descriptors, 3 words: size bits 0..31; address bits 0..31; mode [1:0], address bits
  36.. in [23:2], size bits 32..35 in [27:24], address bits 32..35 in [31:28];
- the data words; then the C descriptors (receive list), 2 words each: address bits 0..31;
  address bits 32..47 [15:0], size [31:16].

A message must fit its buffer (0x100 bytes of TLS, or the user buffer of
SendSyncRequestWithUserBuffer): otherwise the kernel answers InvalidCombination (0xE801), as
Atmosphère's kernel does when the size the header implies exceeds the client's buffer.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass, field
from typing import NamedTuple
from pathlib import Path

from cpu_host.horizon.ipc.results import INVALID_COMBINATION, IpcError
from nxrecomp.common import clib

TLS_MESSAGE_SIZE = 0x100


class Static(NamedTuple):
    """An X descriptor (pointer sent) or a C descriptor (receive list entry).  (Named tuples:
    made per request, a frozen dataclass costs several times more to build.)"""

    index: int
    address: int
    size: int


class Buffer(NamedTuple):
    """An A, B or W descriptor (memory mapped into the server)."""

    address: int
    size: int
    mode: int


@dataclass
class Message:
    type: int
    pid: int | None = None
    copy_handles: list[int] = field(default_factory=list)
    move_handles: list[int] = field(default_factory=list)
    x: list[Static] = field(default_factory=list)
    a: list[Buffer] = field(default_factory=list)
    b: list[Buffer] = field(default_factory=list)
    w: list[Buffer] = field(default_factory=list)
    c: list[Static] = field(default_factory=list)
    c_mode: int = 0
    data_offset: int = 0  # byte offset of the data words in the message
    data: bytes = b""  # the data words


def _words(buf: bytes, off: int, n: int, limit: int) -> tuple[int, ...]:
    if off + 4 * n > limit:
        raise IpcError(INVALID_COMBINATION, f"message needs {off + 4 * n:#x} bytes, its buffer holds {limit:#x}")
    return struct.unpack_from(f"<{n}I", buf, off)


_NATIVE_CDEF = "int64_t nx_hipc_parse(const char *buf, uint32_t limit, uint64_t *out);"
_native = clib.Loaded(
    _NATIVE_CDEF,
    lambda: clib.build_shared(
        "hipc_parse", [Path(__file__).with_name("hipc_parse.c")], ["-O2", *clib.SHARED_FLAGS, "-Wall"], "ipc"
    ),
)
_out = threading.local()


def parse(buf: bytes) -> Message:
    """Read a request (in C: ``hipc_parse.c``, the same layout as ``parse_py``);
    IpcError(InvalidCombination) when its parts overrun the buffer."""
    if not isinstance(buf, bytes):  # a bytearray or view: the C call takes bytes
        buf = bytes(buf)
    ffi, lib = _native()
    out = getattr(_out, "buf", None)
    if out is None:
        out = _out.buf = ffi.new("uint64_t[272]")
    n = lib.nx_hipc_parse(buf, len(buf), out)
    if n < 0:
        raise IpcError(INVALID_COMBINATION, f"message needs {-n:#x} bytes, its buffer holds {len(buf):#x}")
    v = ffi.unpack(out, n)
    i = 13 + v[3] + v[4]
    copy, move = v[13 : 13 + v[3]], v[13 + v[3] : i]
    lists: list[list] = []
    for cnt, kind in ((v[5], Static), (v[6], Buffer), (v[7], Buffer), (v[8], Buffer), (v[9], Static)):
        if cnt:  # most requests carry none: no comprehension then
            lists.append([kind(v[k], v[k + 1], v[k + 2]) for k in range(i, i + 3 * cnt, 3)])
            i += 3 * cnt
        else:
            lists.append([])
    off = v[11]
    return Message(
        v[0],
        v[2] if v[1] else None,
        copy,
        move,
        lists[0],
        lists[1],
        lists[2],
        lists[3],
        lists[4],
        v[10],
        off,
        buf[off : off + 4 * v[12]],
    )


def parse_py(buf: bytes) -> Message:
    """The same reading in Python (the reference the C parser is checked against)."""
    limit = len(buf)
    w0, w1 = _words(buf, 0, 2, limit)
    m = Message(type=w0 & 0xFFFF)
    nx, na, nb, nw = (w0 >> 16) & 0xF, (w0 >> 20) & 0xF, (w0 >> 24) & 0xF, (w0 >> 28) & 0xF
    ndata, m.c_mode, special = w1 & 0x3FF, (w1 >> 10) & 0xF, w1 >> 31
    off = 8
    if special:
        (sp,) = _words(buf, off, 1, limit)
        off += 4
        send_pid, ncopy, nmove = sp & 1, (sp >> 1) & 0xF, (sp >> 5) & 0xF
        if send_pid:
            lo, hi = _words(buf, off, 2, limit)
            m.pid = lo | hi << 32
            off += 8
        m.copy_handles = list(_words(buf, off, ncopy, limit))
        off += 4 * ncopy
        m.move_handles = list(_words(buf, off, nmove, limit))
        off += 4 * nmove
    for _ in range(nx):
        d0, d1 = _words(buf, off, 2, limit)
        off += 8
        addr = d1 | ((d0 >> 12) & 0xF) << 32 | ((d0 >> 6) & 0x3F) << 36
        m.x.append(Static(d0 & 0x3F, addr, d0 >> 16))
    for lst, n in ((m.a, na), (m.b, nb), (m.w, nw)):
        for _ in range(n):
            size_lo, addr_lo, d2 = _words(buf, off, 3, limit)
            off += 12
            addr = addr_lo | ((d2 >> 28) & 0xF) << 32 | ((d2 >> 2) & 0x3FFFFF) << 36
            lst.append(Buffer(addr, size_lo | ((d2 >> 24) & 0xF) << 32, d2 & 3))
    m.data_offset = off
    _words(buf, off, ndata, limit)
    m.data = bytes(buf[off : off + 4 * ndata])
    off += 4 * ndata
    nc = 1 if m.c_mode == 2 else m.c_mode - 2 if m.c_mode > 2 else 0
    for i in range(nc):
        c0, c1 = _words(buf, off, 2, limit)
        off += 8
        m.c.append(Static(i, c0 | (c1 & 0xFFFF) << 32, c1 >> 16))
    return m


def align16(n: int) -> int:
    return (n + 15) & ~15


def _special(pid: int | None, copy_handles: list[int], move_handles: list[int]) -> bytes:
    """The special header and what follows it (empty when the message needs none)."""
    if pid is None and not copy_handles and not move_handles:
        return b""
    out = struct.pack("<I", (1 if pid is not None else 0) | len(copy_handles) << 1 | len(move_handles) << 5)
    if pid is not None:
        out += struct.pack("<Q", pid)
    return out + struct.pack(f"<{len(copy_handles)}I", *copy_handles) + struct.pack(f"<{len(move_handles)}I", *move_handles)


def _static(s: Static) -> bytes:
    """An X (or C-indexed static) descriptor: index, address bits 36-41 and 32-35, size, low address."""
    return struct.pack(
        "<II",
        (s.index & 0x3F) | ((s.address >> 36) & 0x3F) << 6 | ((s.address >> 32) & 0xF) << 12 | (s.size & 0xFFFF) << 16,
        s.address & 0xFFFFFFFF,
    )


def build(
    type_: int,
    payload: bytes,
    copy_handles: list[int] = (),
    move_handles: list[int] = (),
    pid: int | None = None,
    statics: list[Static] = (),
    align: bool = True,
) -> bytes:
    """A message whose data words hold ``payload`` at the first 16-byte aligned offset (as CMIF
    wants; ``align=False`` puts it right after the descriptors, as TIPC does)."""
    special = pid is not None or bool(copy_handles) or bool(move_handles)
    out = bytearray(8) + _special(pid, copy_handles, move_handles)
    for s in statics:
        out += _static(s)
    start = len(out)
    pad = align16(start) - start if align else 0
    body = bytes(pad) + payload
    body += bytes(-len(body) % 4)
    out += body
    ndata = len(body) // 4
    struct.pack_into("<II", out, 0, (type_ & 0xFFFF) | len(statics) << 16, ndata | (1 << 31 if special else 0))
    return bytes(out)


def build_request(
    type_: int,
    payload: bytes,
    *,
    pid: int | None = None,
    copy_handles: list[int] = (),
    move_handles: list[int] = (),
    x: list[Static] = (),
    a: list[Buffer] = (),
    b: list[Buffer] = (),
    w: list[Buffer] = (),
    c: list[Static] = (),
    c_mode: int | None = None,
    align: bool = True,
) -> bytes:
    """A request in the layout above (tests and tools build guest messages with it)."""
    special = pid is not None or bool(copy_handles) or bool(move_handles)
    out = bytearray(8) + _special(pid, copy_handles, move_handles)
    for s in x:
        out += _static(s)
    for d in list(a) + list(b) + list(w):
        out += struct.pack(
            "<III",
            d.size & 0xFFFFFFFF,
            d.address & 0xFFFFFFFF,
            (d.mode & 3) | ((d.address >> 36) & 0x3FFFFF) << 2 | ((d.size >> 32) & 0xF) << 24 | ((d.address >> 32) & 0xF) << 28,
        )
    start = len(out)
    pad = align16(start) - start if align else 0
    body = bytes(pad) + payload
    body += bytes(-len(body) % 4)
    out += body
    for e in c:
        out += struct.pack("<II", e.address & 0xFFFFFFFF, ((e.address >> 32) & 0xFFFF) | (e.size & 0xFFFF) << 16)
    mode = c_mode if c_mode is not None else (2 + len(c) if c else 0)
    struct.pack_into(
        "<II",
        out,
        0,
        (type_ & 0xFFFF) | len(x) << 16 | len(a) << 20 | len(b) << 24 | len(w) << 28,
        len(body) // 4 | (mode & 0xF) << 10 | (1 << 31 if special else 0),
    )
    return bytes(out)
