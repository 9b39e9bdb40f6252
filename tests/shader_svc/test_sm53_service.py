"""SM53 programs through the shader service over real gRPC on loopback: a ptxas-built Maxwell
kernel translates (SPIR-V valid, reflection naming its pointers), runs on lavapipe equal to
numpy, and comes from the disk cache the second time; bad SM53 programs get INVALID_ARGUMENT
naming the problem (offset and instruction) while the server keeps serving."""

from __future__ import annotations

import struct

import numpy as np

from compute_dispatch import open_device, run_spirv, upload
from proto import shader_pb2 as P
from service_checks import assert_invalid_and_serving
from shader_svc.sm53.to_spirv import cbank0
from spirv_checks import spirv_val

BS = 64


def _prog(code: bytes) -> P.Program:
    return P.Program(arch=53, stage=P.COMPUTE, code=code, local_size=[BS, 1, 1])


def test_sm53_translate_run_and_cache(server, corpus_sm53, tmp_path):
    stub, ch = server
    k = corpus_sm53["saxpy"]
    a = stub.Translate(_prog(k.code), timeout=60)
    assert not a.cached and a.spirv[:4] == struct.pack("<I", 0x07230203)
    ptrs = {(g.offset, g.read, g.written) for g in a.reflection.global_pointers}
    assert ptrs == {(0x140, True, False), (0x148, True, True)}  # x read, y read and written
    b = stub.Translate(_prog(k.code), timeout=60)
    assert b.cached and b.spirv == a.spirv
    spirv_val(a.spirv, tmp_path, "saxpy", required=False)
    with open_device() as dev:
        n = 200
        x = np.arange(n, dtype=np.float32) * 0.5
        y = np.full(n, 3.0, np.float32)
        bx, by = upload(dev, x), upload(dev, y)
        params = struct.pack("<QQfI", bx.address, by.address, 2.0, n)
        (out,) = run_spirv(dev, b.spirv, cbank0, k.cbank0_size, n, params, [by], BS)
        assert np.array_equal(out.view(np.float32)[:n], 2.0 * x + 3.0)


def test_sm53_bad_programs_are_invalid_argument(server, corpus_sm53):
    stub, ch = server
    good = corpus_sm53["add_i32"].code
    cases = [
        (_prog(good[:-4]), r"truncated: \d+ bytes is not a multiple of 8"),
        (_prog(good[:8] + b"\xff" * 8 + good[16:]), r"offset 0x8: unknown opcode in word 0xffffffffffffffff"),
        (_prog(good[:8] + (0x4C98078000870001 | 1 << 44).to_bytes(8, "little") + good[16:]), r"offset 0x8: word .* refused"),
        (_prog(corpus_sm53["misc_ops"].code), r"offset 0x[0-9a-f]+: \S+ .*(not translated yet|not supported)"),
        (P.Program(arch=53, stage=P.VERTEX, code=good, local_size=[BS, 1, 1]), "SM53"),
    ]
    assert_invalid_and_serving(stub, ch, cases, timeout=60)
    assert stub.Translate(_prog(good), timeout=60).spirv  # still translating
