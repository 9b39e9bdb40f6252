"""Our LZ4 block codec against the reference liblz4 (Debian's, via ctypes), both ways."""
from __future__ import annotations

import os
import random

import pytest
from hypothesis import given, settings, strategies as st

from fmt_fieldwise import ref_lz4_compress, ref_lz4_decompress
from nxrecomp.errors import NxError
from recompiler.formats.lz4 import compress_block, decompress_block


def _samples() -> list[bytes]:
    rnd = random.Random(5)
    text = b"".join(rnd.choice([b"MOV X0, X1\n", b"BL 0x1234\n", b"RET\n", b"\0\0\0\0"]) for _ in range(3000))
    return [b"", b"a", b"abc" * 5, bytes(13), bytes(65536 + 300), os.urandom(4096), text,
            bytes(rnd.choice(b"ab") for _ in range(7000)), b"x" * 17 + os.urandom(20) + b"x" * 300]


@pytest.mark.parametrize("data", _samples(), ids=lambda d: f"{len(d)}B")
def test_reference_blocks_decode(data: bytes) -> None:
    assert decompress_block(ref_lz4_compress(data), len(data)) == data


@pytest.mark.parametrize("data", _samples(), ids=lambda d: f"{len(d)}B")
def test_our_blocks_decode_with_reference(data: bytes) -> None:
    block = compress_block(data)
    assert ref_lz4_decompress(block, len(data)) == data
    if len(data) > 1000 and data.count(data[:1]) == len(data):
        assert len(block) < len(data) // 50     # runs must actually compress


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=3000), st.integers(0, 6))
def test_round_trip_against_reference(data: bytes, reps: int) -> None:
    data = data * reps if reps else data
    block = compress_block(data)
    assert ref_lz4_decompress(block, len(data)) == data
    assert decompress_block(ref_lz4_compress(data), len(data)) == data


@pytest.mark.parametrize("block,size,msg", [
    (b"", 0, "ends before its last sequence"),
    (b"\xf0", 20, "literal length runs past"),
    (b"\x50abc", 5, "literal run of 0x5 bytes"),
    (b"\x10a\x05\x00", 10, "points before the start"),
    (b"\x10a\x00\x00", 10, "offset 0x0"),
    (b"\x1fa\x01\x00", 100, "match length runs past"),
    (b"\x10a\x01", 10, "match offset runs past"),
    (b"\x10a\x01\x00\x00", 3, "expands past the declared size"),
    (b"\x30abc", 5, "expands to 0x3 bytes, expected 0x5"),
])
def test_bad_blocks_name_the_offset(block: bytes, size: int, msg: str) -> None:
    with pytest.raises(NxError, match=msg) as e:
        decompress_block(block, size, path="seg.bin", field="text segment", base=0x100)
    assert "seg.bin" in str(e.value) and "text segment" in str(e.value)
    assert e.value.offset is not None and e.value.offset >= 0x100


def test_bad_block_agrees_with_reference() -> None:
    # A stream the reference refuses must be refused here too.
    for block, size in ((b"\x10a\x05\x00", 10), (b"\x50abc", 5)):
        assert ref_lz4_decompress(block, size) is None
        with pytest.raises(NxError):
            decompress_block(block, size)
