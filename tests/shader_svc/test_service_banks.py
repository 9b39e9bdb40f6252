"""A program's own constant banks through the shader service (issue 31: every constant bank
mapped).  ptxas for SM5x puts float literals in c[0x2] (the cubin's ``.nv.constant2.<kernel>``);
a corpus kernel built at test time (NVRTC + ptxas from PyPI, a loud skip where unreachable)
that reads c[0x2] is translated over real gRPC on loopback with its bank in ``Program.banks``:
the SPIR-V equals the in-process translation and lavapipe's output equals numpy's.  The key
includes the banks' bytes (two programs differing only in bank 2 never share a translation),
a program without banks keeps the key it always had, the stored program round-trips through
Prepare, and malformed banks get INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import hashlib
import re
import struct

import grpc
import pytest

import cuda_build
import cuda_corpus as cc
from proto import shader_pb2 as P
from service_checks import assert_invalid_and_serving
from shader_svc import request as rq

KERNEL = "flt_div"  # -O3 SM53: the division's refinement constants come from c[0x2]


@pytest.fixture(scope="module")
def float53():
    """The 'float' corpus group built for SM53 at -O3, and the case and kernel of KERNEL."""
    try:
        built = cuda_build.build(cc.group_source("float"), 53, "O3")
    except cuda_build.NoCompiler as e:  # no nvcc and PyPI unreachable
        pytest.skip(f"LOUD SKIP: {e}")
    case = next(c for c in cc.CASES if c.name == KERNEL)
    return case, built[KERNEL]


def _prog(code: bytes, banks=(), stage: int = P.COMPUTE) -> P.Program:
    return P.Program(
        arch=53,
        stage=stage,
        code=code,
        local_size=[cc.BLOCK, 1, 1],
        banks=[P.ConstBank(bank=n, data=d) for n, d in banks],
    )


def _reads_bank2(code: bytes) -> bool:
    from shader_svc.sm53 import decode as dec

    return any("c[0x2]" in i.text() for i in dec.decode_stream(code))


def test_bank2_kernel_through_service(server, float53, compute_device):
    stub, ch = server
    case, k = float53
    assert k.cbank2 and _reads_bank2(k.code), "the kernel no longer reads ptxas's literal pool: pick another"
    assert k.banks == ((2, k.cbank2),)  # every bank the cubin ships with the kernel but 0
    # without its bank the program cannot be translated: the refusal names the bank
    with pytest.raises(grpc.RpcError) as ei:
        stub.Translate(_prog(k.code), timeout=60)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "c[0x2]" in ei.value.details(), ei.value.details()
    a = stub.Translate(_prog(k.code, k.banks), timeout=60)
    local, _ = cc.translate(53, k.code, k.cbank2)
    assert not a.cached and a.spirv == local
    assert any(r.bank == 2 for r in a.reflection.const_ranges)
    ok, why = cc.run(compute_device, 53, k, case, a.spirv)
    assert ok, why
    b = stub.Translate(_prog(k.code, [(2, k.cbank2)]), timeout=60)
    assert b.cached and b.key == a.key and b.spirv == a.spirv


def test_bank2_is_part_of_the_key(server, float53):
    stub, ch = server
    _, k = float53
    other = bytearray(k.cbank2)
    other[0] ^= 0x01  # one bit of one literal
    a = stub.Translate(_prog(k.code, [(2, k.cbank2)]), timeout=60)
    b = stub.Translate(_prog(k.code, [(2, bytes(other))]), timeout=60)
    assert a.key != b.key and not b.cached and a.spirv != b.spirv
    # the key is the sha256 of the stored program; with banks the NXSB layout (arch, stage,
    # local size, features, bank count, per bank number/size/bytes, then the code)
    head = struct.pack("<4sII4II", b"NXSB", 53, 1, cc.BLOCK, 1, 1, 0, 1)
    want = hashlib.sha256(head + struct.pack("<II", 2, len(k.cbank2)) + k.cbank2 + k.code).hexdigest()
    assert a.key == want
    # a program without banks keeps its old key (caches of older clients stay valid)
    plain = rq.make_program(53, 1, k.code, (cc.BLOCK, 1, 1))
    assert plain.key() == hashlib.sha256(struct.pack("<4sII3I", b"NXSP", 53, 1, cc.BLOCK, 1, 1) + k.code).hexdigest()
    # the order banks are given in does not change the key
    two = [(3, b"\x00" * 4), (2, k.cbank2)]
    assert (
        rq.make_program(53, 1, k.code, (cc.BLOCK, 1, 1), 0, two).key()
        == rq.make_program(53, 1, k.code, (cc.BLOCK, 1, 1), 0, two[::-1]).key()
    )
    # the program store keeps the banks: preparing by key translates the same program again
    (ev,) = list(stub.Prepare(P.KeyList(keys=[b.key]), timeout=60))
    assert ev.error_code == 0, ev.error
    assert ev.translation.key == b.key and ev.translation.spirv == b.spirv
    stored = rq.Program.deserialize(rq.make_program(53, 1, k.code, (cc.BLOCK, 1, 1), 0, two).serialize())
    assert stored.banks == tuple(sorted(two)) and stored.code == k.code


def test_bad_banks_are_invalid_argument(server, float53):
    stub, ch = server
    _, k = float53
    c2 = k.cbank2
    cases = [
        (_prog(k.code, [(0, c2)]), r"field banks\[0\]\.bank: constant bank number 0: bank 0 .* bound at run time"),
        (_prog(k.code, [(2, c2), (32, c2)]), r"field banks\[1\]\.bank: constant bank number 32: not 1\.\.31"),
        (_prog(k.code, [(2, c2), (2, c2)]), r"field banks\[1\]\.bank: constant bank c\[0x2\] given twice"),
        (_prog(k.code, [(2, c2[:6])]), r"field banks\[0\]\.data: constant bank c\[0x2\]: 6 bytes is not a multiple of 4"),
        (_prog(k.code, [(2, b"")]), r"field banks\[0\]\.data: constant bank c\[0x2\] is empty"),
        (_prog(k.code, [(2, bytes(65540))]), r"field banks\[0\]\.data: .*65540 bytes is larger than 65536"),
        (_prog(k.code, [(2, c2)], stage=P.VERTEX), r"field banks: constant banks \[2\] given for a vertex program"),
    ]
    assert_invalid_and_serving(stub, ch, cases, timeout=60)
    assert stub.Translate(_prog(k.code, [(2, c2)]), timeout=60).spirv  # still translating


def test_damaged_stored_program_names_the_bank():
    p = rq.make_program(53, 1, b"\x00" * 32, (64, 1, 1), 0, [(2, b"\x01\x02\x03\x04")])
    data = p.serialize()
    with pytest.raises(rq.ProgramError, match=re.escape("truncated in bank c[0x2] (4 bytes)")):
        rq.Program.deserialize(data[:42], "stored")
