"""Function starts from ``.eh_frame``: the ``pc_begin`` of every FDE, its pointer encoding
read from its CIE's augmentation (the LSB's exception frame format: the System V ABI's
``.eh_frame`` section, DWARF's CFI with GNU's augmentation strings).  Static glibc has an FDE
for nearly every function.

C++ landing pads (``landing_pads``): an FDE whose CIE's augmentation has 'L' carries a pointer
to its function's LSDA (language-specific data area, in ``.gcc_except_table``; the Itanium C++
ABI's exception handling tables, as the LSB describes them).  Its call-site table lists ranges
of the function's code and, for each, the landing pad a throw out of a call there resumes at,
in the function's own frame: code no branch names, which the unwinder enters by loading every
register from its context and returning there (libunwind's ``jumpto``)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Iterator

from nxrecomp.common.errors import NxError

M64 = (1 << 64) - 1


def eh_frame_starts(addr: int, data: bytes) -> list[int]:
    """pc_begin of every FDE in an .eh_frame section (pointer encoding from each CIE)."""
    out: list[int] = []
    cie_enc: dict[int, int] = {}
    for off, body, end, cie_id in _records(data):
        if cie_id == 0:
            cie_enc[off] = _cie_fde_encoding(data, body + 4, end)
        else:
            enc = cie_enc.get(body - cie_id, 0x1B)
            p = body + 4
            v = _read_enc(data, p, enc, addr + p)
            if v is not None and v:
                out.append(v)
    return out


def _records(data: bytes) -> Iterator[tuple[int, int, int, int]]:
    """(offset, body, end, CIE id) of each CIE/FDE record of an ``.eh_frame`` section, up to its
    zero terminator or the first record that runs past the section (32- and 64-bit lengths)."""
    off = 0
    while off + 8 <= len(data):
        (length,) = struct.unpack_from("<I", data, off)
        if length == 0:
            return
        hdr = 4
        if length == 0xFFFFFFFF:
            (length,) = struct.unpack_from("<Q", data, off + 4)
            hdr = 12
        body = off + hdr
        end = body + length
        if end > len(data):
            return
        (cie_id,) = struct.unpack_from("<I", data, body)
        yield off, body, end, cie_id
        off = end


def _uleb(data: bytes, p: int) -> tuple[int, int]:
    v = shift = 0
    while p < len(data):
        b = data[p]
        p += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return v, p


def _cie_fde_encoding(data: bytes, p: int, end: int) -> int:
    p += 1  # version
    z = data.index(b"\0", p, end)
    aug = data[p:z].decode("ascii", "replace")
    p = z + 1
    _, p = _uleb(data, p)  # code alignment
    _, p = _uleb(data, p)  # data alignment (sleb, same length)
    p += 1  # return register (version 1: one byte)
    enc = 0
    if aug.startswith("z"):
        _, p = _uleb(data, p)
        for ch in aug[1:]:
            if ch == "R":
                enc = data[p]
                p += 1
            elif ch == "P":
                penc = data[p]
                p += 1
                p += {0x00: 8, 0x03: 4, 0x0B: 4, 0x04: 8, 0x0C: 8}.get(penc & 0x0F, 4)
            elif ch == "L":
                p += 1
    return enc


def _read_enc(data: bytes, p: int, enc: int, field_addr: int) -> int | None:
    fmt = enc & 0x0F
    if fmt == 0x0B:
        (v,) = struct.unpack_from("<i", data, p)
    elif fmt == 0x03:
        (v,) = struct.unpack_from("<I", data, p)
    elif fmt in (0x00, 0x04, 0x0C):
        (v,) = struct.unpack_from("<Q" if fmt != 0x0C else "<q", data, p)
    else:
        return None
    if enc & 0x70 == 0x10:
        v += field_addr
    return v & M64


# ---- C++ exception tables: FDE -> LSDA -> call sites and landing pads ----------------------------

OMIT = 0xFF  # DW_EH_PE_omit


class LsdaError(NxError):
    """A malformed FDE augmentation or ``.gcc_except_table`` entry (named by address)."""


@dataclass(frozen=True)
class Fde:
    """One FDE: the function's code range and its LSDA's address (None: no 'L' augmentation
    or a null pointer, i.e. nothing to unwind into)."""

    start: int
    size: int
    lsda: int | None


@dataclass(frozen=True)
class CallSite:
    """One record of an LSDA's call-site table, as absolute addresses: calls in
    [``start``, ``start + length``) unwind into ``landing_pad`` (0: none, the frame is only
    passed through), ``action`` is the 1-based offset into the action table (0: cleanup only)."""

    start: int
    length: int
    landing_pad: int
    action: int


def fdes(addr: int, data: bytes) -> list[Fde]:
    """Every FDE of an ``.eh_frame`` section at ``addr``: its range (pointer encoding from its
    CIE's 'R') and its LSDA pointer (the first field of the FDE's augmentation data where the CIE's
    augmentation string has 'L', in the encoding that follows the 'L' there)."""
    out: list[Fde] = []
    cies: dict[int, _Cie] = {}
    for off, body, end, cie_id in _records(data):
        if cie_id == 0:
            cies[off] = _parse_cie(data, body + 4, end, addr)
        else:
            cie = cies.get(body - cie_id)
            if cie is None:
                raise LsdaError(f".eh_frame FDE at {addr + off:#x}: its CIE pointer names no CIE ({addr + body - cie_id:#x})")
            p = body + 4
            start, p = _read_ptr(data, p, cie.fde_enc, addr, f"FDE at {addr + off:#x} pc_begin")
            size, p = _read_ptr(data, p, cie.fde_enc & 0x0F, addr, f"FDE at {addr + off:#x} pc_range")
            lsda = None
            if cie.aug.startswith("z"):
                aug_len, p = _uleb(data, p)
                if "L" in cie.aug and cie.lsda_enc != OMIT and aug_len:
                    v, _ = _read_ptr(data, p, cie.lsda_enc, addr, f"FDE at {addr + off:#x} LSDA pointer")
                    lsda = v or None
            if start:
                out.append(Fde(start, size, lsda))
    return out


@dataclass
class _Cie:
    aug: str
    fde_enc: int = 0
    lsda_enc: int = OMIT


def _parse_cie(data: bytes, p: int, end: int, base: int) -> _Cie:
    version = data[p]
    p += 1
    z = data.index(b"\0", p, end)
    cie = _Cie(data[p:z].decode("ascii", "replace"))
    p = z + 1
    if "eh" in cie.aug:  # (a pointer-sized eh_ptr: GCC 2.x only)
        p += 8
    _, p = _uleb(data, p)  # code alignment
    _, p = _uleb(data, p)  # data alignment (sleb, same length)
    if version == 1:
        p += 1
    else:
        _, p = _uleb(data, p)  # return register
    if not cie.aug.startswith("z"):
        return cie
    _, p = _uleb(data, p)
    for ch in cie.aug[1:]:
        if ch == "R":
            cie.fde_enc = data[p]
            p += 1
        elif ch == "L":
            cie.lsda_enc = data[p]
            p += 1
        elif ch == "P":
            penc = data[p]
            _, p = _read_ptr(data, p + 1, penc & 0x7F, base, f"CIE at {base + p:#x} personality")
        elif ch in "SB":  # signal frame, AArch64 B-key: no data
            continue
        else:
            break  # an unknown letter: the rest of the augmentation data cannot be read
    return cie


def _sleb(data: bytes, p: int) -> tuple[int, int]:
    """A signed LEB128 at ``p`` (``_uleb``'s bytes, the last one's bit 6 the sign); one that
    runs past the end of ``data`` is an ``IndexError``."""
    v, q = _uleb(data, p)
    if q == p or data[q - 1] & 0x80:
        raise IndexError("sleb128 past the end")
    bits = 7 * (q - p)
    if v >> (bits - 1) & 1:
        v -= 1 << bits
    return v, q


_FIXED = {0x00: "<Q", 0x02: "<H", 0x03: "<I", 0x04: "<Q", 0x0A: "<h", 0x0B: "<i", 0x0C: "<q"}


def _read_ptr(data: bytes, p: int, enc: int, base: int, what: str, func: int = 0) -> tuple[int, int]:
    """A DW_EH_PE-encoded value at ``data[p]`` (section address ``base``): (value, next
    offset).  Applications: absolute, pc-relative (``base + p``), function-relative
    (``func``); an indirect pointer or a data/text-relative one is an error naming ``what``."""
    fmt, app = enc & 0x0F, enc & 0x70
    field_addr = base + p
    try:
        if fmt == 0x01:
            v, q = _uleb(data, p)
        elif fmt == 0x09:
            v, q = _sleb(data, p)
        elif fmt in _FIXED:
            (v,) = struct.unpack_from(_FIXED[fmt], data, p)
            q = p + struct.calcsize(_FIXED[fmt])
        else:
            raise LsdaError(f"{what} at {field_addr:#x}: pointer encoding {enc:#04x} has no value format {fmt:#x}")
    except (struct.error, IndexError):
        raise LsdaError(f"{what} at {field_addr:#x}: the encoded value ({enc:#04x}) runs past the data") from None
    if enc & 0x80:
        raise LsdaError(f"{what} at {field_addr:#x}: indirect pointer encoding {enc:#04x} (not used for these fields)")
    if app == 0x10:
        v += field_addr
    elif app == 0x40:
        v += func
    elif app:
        raise LsdaError(f"{what} at {field_addr:#x}: pointer application {app:#04x} of encoding {enc:#04x} is not supported")
    return v & M64, q


LSDA_MAX = 1 << 20  # bytes read for one LSDA (its call-site table's end bounds it)


def read_lsda(read: Callable[[int, int], bytes | None], lsda: int, func: int) -> list[CallSite]:
    """The call-site table of the LSDA at ``lsda`` (``.gcc_except_table``) of the function
    starting at ``func``.  Header: the landing pads' base encoding (omit: the function's start)
    and value, the type table's encoding and (unless omitted) its offset, the call-site
    encoding and the table's length in bytes; then records of (start, length, landing pad:
    offsets from the function's start and the base; action: uleb128).  ``read(addr, n)`` reads
    the image (None outside it)."""
    if read(lsda, 1) is None:
        raise LsdaError(f"LSDA at {lsda:#x} (function {func:#x}): outside the image")
    # the header is at most 1 + 8 + 1 + 10 + 1 + 10 bytes; read a window, then the table
    data = _window(read, lsda, 64)
    p = 0
    what = f"LSDA at {lsda:#x} (function {func:#x})"
    lp_enc = data[p]
    p += 1
    lp_base = func
    if lp_enc != OMIT:
        lp_base, p = _read_ptr(data, p, lp_enc, lsda, what + " LPStart", func)
    tt_enc = data[p]
    p += 1
    if tt_enc != OMIT:
        _, p = _uleb(data, p)
    cs_enc = data[p]
    p += 1
    cs_len, p = _uleb(data, p)
    if cs_len > LSDA_MAX:
        raise LsdaError(f"{what}: call-site table of {cs_len} bytes")
    data = _window(read, lsda, p + cs_len)
    if len(data) < p + cs_len:
        raise LsdaError(f"{what}: call-site table of {cs_len} bytes runs past the image")
    end = p + cs_len
    out: list[CallSite] = []
    while p < end:
        start, p = _read_ptr(data, p, cs_enc, lsda, what + " call site", 0)
        length, p = _read_ptr(data, p, cs_enc, lsda, what + " call-site length", 0)
        lp, p = _read_ptr(data, p, cs_enc, lsda, what + " landing pad", 0)
        action, p = _uleb(data, p)
        if p > end:
            raise LsdaError(f"{what}: a call-site record runs past the table's end")
        out.append(CallSite((func + start) & M64, length, (lp_base + lp) & M64 if lp else 0, action))
    return out


def _window(read: Callable[[int, int], bytes | None], addr: int, n: int) -> bytes:
    """Up to ``n`` bytes at ``addr`` (fewer where the image ends first)."""
    while n > 0:
        b = read(addr, n)
        if b is not None:
            return b
        n = n // 2 if n > 64 else n - 1
    return b""


def landing_pads(eh_frames: list[tuple[int, bytes]], read: Callable[[int, int], bytes | None]) -> list[tuple[int, int, int]]:
    """Every call-site range with a landing pad in the program, as (start, end, landing pad),
    sorted: a call in [start, end) that throws resumes at the landing pad, in its own frame."""
    out: set[tuple[int, int, int]] = set()
    for addr, data in eh_frames:
        for f in fdes(addr, data):
            if f.lsda is None:
                continue
            for cs in read_lsda(read, f.lsda, f.start):
                if cs.landing_pad and cs.length:
                    out.add((cs.start, cs.start + cs.length, cs.landing_pad))
    return sorted(out)
