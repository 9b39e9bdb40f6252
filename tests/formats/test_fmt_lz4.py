"""Our LZ4 block codec against the reference liblz4 (Debian's, via ctypes), both ways."""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import given, settings, strategies as st

from tests.formats.fmt_fieldwise import ref_lz4_compress, ref_lz4_decompress
from nxrecomp.common.errors import NxError
from recompiler.formats.lz4 import compress_block, decompress_block


def _samples() -> list[bytes]:
    rnd = random.Random(5)
    text = b"".join(rnd.choice([b"MOV X0, X1\n", b"BL 0x1234\n", b"RET\n", b"\0\0\0\0"]) for _ in range(3000))
    return [
        b"",
        b"a",
        b"abc" * 5,
        bytes(13),
        bytes(65536 + 300),
        os.urandom(4096),
        text,
        bytes(rnd.choice(b"ab") for _ in range(7000)),
        b"x" * 17 + os.urandom(20) + b"x" * 300,
    ]


@pytest.mark.parametrize("data", _samples(), ids=lambda d: f"{len(d)}B")
def test_reference_blocks_decode(data: bytes) -> None:
    for engine in ("python", "auto"):
        assert decompress_block(ref_lz4_compress(data), len(data), engine=engine) == data


@pytest.mark.parametrize("data", _samples(), ids=lambda d: f"{len(d)}B")
def test_our_blocks_decode_with_reference(data: bytes) -> None:
    block = compress_block(data, engine="python")
    assert ref_lz4_decompress(block, len(data)) == data
    if len(data) > 1000 and data.count(data[:1]) == len(data):
        assert len(block) < len(data) // 50  # runs must actually compress


@settings(max_examples=150, deadline=None, database=None)
@given(st.binary(max_size=3000), st.integers(0, 6))
def test_round_trip_against_reference(data: bytes, reps: int) -> None:
    data = data * reps if reps else data
    block = compress_block(data, engine="python")
    assert ref_lz4_decompress(block, len(data)) == data
    for engine in ("python", "auto"):
        assert decompress_block(ref_lz4_compress(data), len(data), engine=engine) == data


@pytest.mark.parametrize(
    "block,size,msg",
    [
        (b"", 0, "ends before its last sequence"),
        (b"\xf0", 20, "literal length runs past"),
        (b"\x50abc", 5, "literal run of 0x5 bytes"),
        (b"\x10a\x05\x00", 10, "points before the start"),
        (b"\x10a\x00\x00", 10, "offset 0x0"),
        (b"\x1fa\x01\x00", 100, "match length runs past"),
        (b"\x10a\x01", 10, "match offset runs past"),
        (b"\x10a\x01\x00\x00", 3, "expands past the declared size"),
        (b"\x30abc", 5, "expands to 0x3 bytes, expected 0x5"),
    ],
)
@pytest.mark.parametrize("engine", ["python", "auto"])
def test_bad_blocks_name_the_offset(block: bytes, size: int, msg: str, engine: str) -> None:
    with pytest.raises(NxError, match=msg) as e:
        decompress_block(block, size, path="seg.bin", field="text segment", base=0x100, engine=engine)
    assert "seg.bin" in str(e.value) and "text segment" in str(e.value)
    assert e.value.offset is not None and e.value.offset >= 0x100


def test_bad_block_agrees_with_reference() -> None:
    # A stream the reference refuses must be refused here too.
    for block, size in ((b"\x10a\x05\x00", 10), (b"\x50abc", 5)):
        assert ref_lz4_decompress(block, size) is None
        with pytest.raises(NxError):
            decompress_block(block, size)


# ---------------------------------------------------------------- the two engines agree
def _both(block: bytes, size: int):
    res = []
    for engine in ("python", "liblz4"):
        try:
            res.append(decompress_block(block, size, engine=engine))
        except NxError as e:
            res.append(str(e))
    return res


damaged = (
    st.binary(min_size=0, max_size=400),
    st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4),
    st.integers(-3, 3),
    st.booleans(),
)


@settings(max_examples=300, deadline=None, database=None)
@given(*damaged)
def test_engines_agree_on_damaged_blocks(data: bytes, flips, size_delta: int, truncate: bool) -> None:
    _agree(data, flips, size_delta, truncate)


@pytest.mark.heavy
@settings(max_examples=20000, deadline=None, database=None)
@given(*damaged)
def test_engines_agree_on_damaged_blocks_heavy(data: bytes, flips, size_delta: int, truncate: bool) -> None:
    _agree(data, flips, size_delta, truncate)


def _agree(data: bytes, flips, size_delta: int, truncate: bool) -> None:
    block = bytearray(compress_block(data * 3, engine="python"))
    for pos, val in flips:
        if block:
            block[pos % len(block)] = val
    if truncate and block:
        del block[len(block) // 2 :]
    size = max(0, len(data) * 3 + size_delta)
    py, ref = _both(bytes(block), size)
    if isinstance(py, str) and "match offset 0x0 " in py:
        # The format calls offset 0 corrupt; liblz4 1.9.4's safe decoder copies from the
        # output position itself instead.  Only the strict Python engine refuses it.
        return
    if isinstance(py, bytes) or isinstance(ref, bytes):
        assert py == ref
    try:
        auto = decompress_block(bytes(block), size)
    except NxError as e:
        auto = str(e)
    assert auto == py  # same bytes, or (after liblz4 refused) the Python engine's message


def test_python_encoder_and_decoder_alone() -> None:
    data = b"".join(bytes([i % 7]) * (i % 13) for i in range(5000))
    block = compress_block(data, engine="python")
    assert decompress_block(block, len(data), engine="python") == data
    assert ref_lz4_decompress(block, len(data)) == data
