"""LZ4 *block* format (no frame header), as NSO0 segments store it.

A block is a list of sequences: a token byte (high nibble: literal count, low nibble: match
length - 4; 15 means "more length bytes follow", each 255 adding and continuing), the
literals, then a 2-byte little-endian back-reference offset and the match.  The last
sequence has literals only.  Written from the public format description.

``engine="auto"`` uses the reference C liblz4 through its maintained binding (PyPI ``lz4``,
see lz4_native.py) when it is installed (hundreds of times faster: a game's ``main`` is tens
of MB) and this Python codec otherwise; a block liblz4 refuses is decoded again here so the
error names where the stream goes wrong (the binding's own error names no position).  Tests hold the two to
the same results, with one known difference: a match offset of 0 is corrupt by the format
and refused by the Python engine, while liblz4 1.9.4's safe decoder accepts it (it copies
from the output position itself, never outside the buffer); the NSO loader's SHA-256 check
catches such a segment either way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from nxrecomp.common.errors import NxError
from recompiler.formats import lz4_native

Engine = Literal["auto", "python", "liblz4"]

# Format rules for the end of a block: the last 5 bytes are literals and the last match
# starts at least 12 bytes before the end (decoders rely on it for fast copies).
_LAST_LITERALS = 5
_MF_LIMIT = 12
_MAX_OFFSET = 0xFFFF


def decompress_block(
    src: bytes | bytearray | memoryview,
    size: int,
    *,
    path: str = "<lz4>",
    field: str = "lz4 block",
    base: int = 0,
    engine: Engine = "auto",
) -> bytes:
    """Decode an LZ4 block that must expand to exactly ``size`` bytes.

    Any malformed stream (truncated, offset 0 or before the start, output longer or shorter
    than ``size``) raises ``NxError`` naming ``path``/``field`` and the file offset
    (``base`` + position in ``src``) where decoding stopped."""
    src = bytes(src)
    if engine != "python":
        fast = lz4_native.decompress(src, size)
        if fast is not None:
            return fast
        if engine == "liblz4" and lz4_native.library() is None:
            raise NxError("the lz4 Python package (liblz4 binding) is not installed: pip install lz4", path=path, field=field)
    return _decompress_py(src, size, path, field, base)


def _more_length(src: bytes, i: int, length: int, what: str, bad: Callable[[str, int], NxError]) -> tuple[int, int]:
    """A length nibble of 15 goes on in the bytes at ``i``: each adds itself, 255 continues.
    Returns the length and the position after its last byte."""
    n = len(src)
    while True:
        if i >= n:
            raise bad(f"LZ4 {what} length runs past the end of the stream", i)
        b = src[i]
        i += 1
        length += b
        if b != 255:
            return length, i


def _decompress_py(src: bytes, size: int, path: str, field: str, base: int) -> bytes:
    n = len(src)
    out = bytearray()
    olen = 0
    i = 0

    def bad(msg: str, at: int) -> NxError:
        return NxError(msg, path=path, field=field, offset=base + at)

    while True:
        if i >= n:
            raise bad("LZ4 stream ends before its last sequence", i)
        token = src[i]
        i += 1
        lit = token >> 4
        if lit:
            if lit == 15:
                lit, i = _more_length(src, i, lit, "literal", bad)
            j = i + lit
            if j > n:
                raise bad(f"LZ4 literal run of {lit:#x} bytes runs past the end of the stream", i)
            olen += lit
            if olen > size:
                raise bad(f"LZ4 data expands past the declared size {size:#x}", i)
            out += src[i:j]
            i = j
        if i >= n - 1:
            if i == n:
                break  # the last sequence carries literals only
            raise bad("LZ4 match offset runs past the end of the stream", i)
        off = src[i] | (src[i + 1] << 8)
        if not 0 < off <= olen:
            raise bad(f"LZ4 match offset {off:#x} points before the start of the output (output so far {olen:#x})", i)
        i += 2
        ml = token & 15
        if ml == 15:
            ml, i = _more_length(src, i, ml, "match", bad)
        ml += 4
        if olen + ml > size:
            raise bad(f"LZ4 data expands past the declared size {size:#x}", i)
        start = olen - off
        if ml <= off:
            out += out[start : start + ml]
        else:
            # Overlapping copy: the match repeats the last ``off`` bytes.
            pat = out[start:]
            reps, rem = divmod(ml, off)
            out += pat * reps + pat[:rem]
        olen += ml
    if olen != size:
        raise bad(f"LZ4 data expands to {olen:#x} bytes, expected {size:#x}", i)
    return bytes(out)


def _put_length(out: bytearray, value: int) -> None:
    while value >= 255:
        out.append(255)
        value -= 255
    out.append(value)


def _emit(out: bytearray, literals: bytes, offset: int = 0, match_len: int = 0) -> None:
    nlit = len(literals)
    mcode = match_len - 4 if offset else 0
    out.append((min(nlit, 15) << 4) | min(mcode, 15))
    if nlit >= 15:
        _put_length(out, nlit - 15)
    out += literals
    if offset:
        out += offset.to_bytes(2, "little")
        if mcode >= 15:
            _put_length(out, mcode - 15)


def compress_block(data: bytes | bytearray | memoryview, *, engine: Engine = "auto") -> bytes:
    """Encode ``data`` as one LZ4 block.  The Python encoder (greedy matching through a 4-byte
    hash table) is small and simple rather than fast; ``auto`` prefers liblz4."""
    data = bytes(data)
    if engine != "python":
        fast = lz4_native.compress(data)
        if fast is not None:
            return fast
        if engine == "liblz4":
            raise NxError("the lz4 Python package (liblz4 binding) is not installed, or the data is over 2 GB")
    n = len(data)
    out = bytearray()
    table: dict[bytes, int] = {}
    anchor = 0
    i = 0
    last_match_start = n - _MF_LIMIT
    match_end_limit = n - _LAST_LITERALS
    while i <= last_match_start:
        key = data[i : i + 4]
        cand = table.get(key)
        table[key] = i
        if cand is None or i - cand > _MAX_OFFSET:
            i += 1
            continue
        ml = 4
        # Extend 8 bytes at a time, then byte by byte.
        while i + ml + 8 <= match_end_limit and data[cand + ml : cand + ml + 8] == data[i + ml : i + ml + 8]:
            ml += 8
        while i + ml < match_end_limit and data[cand + ml] == data[i + ml]:
            ml += 1
        _emit(out, data[anchor:i], i - cand, ml)
        # Index a couple of positions inside the match so later repeats are found.
        if ml > 2:
            table[data[i + ml - 2 : i + ml + 2]] = i + ml - 2
        i += ml
        anchor = i
    _emit(out, data[anchor:])
    return bytes(out)
