"""Our AES/SHA program over the Armv8 crypto intrinsics (AESE/AESD/AESMC/AESIMC, SHA1*, SHA256*,
PMULL), built for aarch64 and recompiled: the FIPS-197 and FIPS-180 known-answer vectors, the
same output as qemu-aarch64, SHA of a file equal to Python's hashlib, and PMULL equal to a
carry-less product computed here bit by bit."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from tests.realprogs.conftest import bundle, run_both

pytestmark = pytest.mark.network

FIPS = [
    # FIPS-197 appendix C.1 / C.3 (AES-128 / AES-256 example vectors), both directions
    (["aes128", "000102030405060708090a0b0c0d0e0f00112233445566778899aabbccddeeff"], "69c4e0d86a7b0430d8cdb78070b4c55a"),
    (["aes128dec", "000102030405060708090a0b0c0d0e0f69c4e0d86a7b0430d8cdb78070b4c55a"], "00112233445566778899aabbccddeeff"),
    (
        ["aes256", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f00112233445566778899aabbccddeeff"],
        "8ea2b7ca516745bfeafc49904b496089",
    ),
    (
        ["aes256dec", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f8ea2b7ca516745bfeafc49904b496089"],
        "00112233445566778899aabbccddeeff",
    ),
    # FIPS-197 appendix B (the cipher example)
    (["aes128", "2b7e151628aed2a6abf7158809cf4f3c3243f6a8885a308d313198a2e0370734"], "3925841d02dc09fbdc118597196a0b32"),
    # FIPS-180 examples (one block, two blocks)
    (["sha256", "abc"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
        ["sha256", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"],
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ),
    (["sha1", "abc"], "a9993e364706816aba3e25717850c26c9cd0d89d"),
    (["sha1", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"], "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
]


@pytest.fixture(scope="module")
def crypto(tmp_path_factory) -> Path:
    return bundle("crypto", tmp_path_factory)


@pytest.mark.parametrize("argv,want", FIPS, ids=[f"{a[0]}-{k}" for k, (a, _w) in enumerate(FIPS)])
def test_known_answer(crypto, tmp_path, argv, want):
    r = run_both("crypto", crypto, ["crypto", *argv], tmp_path)
    assert r.stdout.decode().strip() == want


def test_sha_of_file_equals_hashlib(crypto, tmp_path):
    data = random.Random(3).randbytes(300_007)
    (tmp_path / "f.bin").write_bytes(data)
    for mode, h in (("sha256-file", hashlib.sha256), ("sha1-file", hashlib.sha1)):
        r = run_both("crypto", crypto, ["crypto", mode, "f.bin"], tmp_path)
        assert r.stdout.decode().strip() == h(data).hexdigest()


def _clmul(a: int, b: int) -> int:
    r = 0
    for i in range(b.bit_length()):
        if b >> i & 1:
            r ^= a << i
    return r


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pmull_equals_carry_less_product(crypto, tmp_path, seed):
    rng = random.Random(seed)
    raw = rng.randbytes(16)
    lo, hi = int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")
    r = run_both("crypto", crypto, ["crypto", "pmull", raw.hex()], tmp_path)
    l128, l8 = r.stdout.decode().split()
    assert bytes.fromhex(l128) == _clmul(lo, hi).to_bytes(16, "little") + _clmul(hi, hi).to_bytes(16, "little")
    want8 = b"".join(_clmul(raw[i], raw[8 + i]).to_bytes(2, "little") for i in range(8))
    assert bytes.fromhex(l8) == want8
