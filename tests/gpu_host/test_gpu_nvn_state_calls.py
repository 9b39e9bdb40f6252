"""nvnCommandBufferSetDepthBias / SetBlendColor recorded by the NVN front end's C recorder
(cpu_host/horizon/hle/nvn/recorder.c), called as a guest's calls reach it (a CPU record whose X
registers hold the arguments; no guest kernel: ``nxr_bench_init``).  What it records is decoded by
the GPU process's native decoder (gpu_host/nxpkt.c) and compared with PROTOCOL.md's packets for
those calls: DEPTH_BIAS (constant, slope, clamp) and BLEND_CONSTANT (r, g, b, a), each float as the
guest stored it.  A value that is not finite is left to the Python function (which names it)."""

from __future__ import annotations

import math

import pytest

from cpu_host.gpu_client import blob
from gpu_host import binpackets, nxpkt
from gpu_host import packets as P

CB = 43


@pytest.fixture()
def rec():
    from cpu_host.horizon.hle.nvn.native import NativeRecorder

    r = NativeRecorder()
    r.L.nxr_bench_init()
    ffi = r.ffi
    cpu = ffi.new("uint64_t[64]")
    cb = ffi.new("uint64_t *", CB)  # the guest's NVNcommandBuffer struct: its id
    addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731

    def call(name: str, *args: int) -> str | None:
        cpu[0] = addr(cb)
        for i, a in enumerate(args, 1):
            cpu[i] = a
        return r.try_call(r.names().index(name), addr(cpu))

    r.begin(CB, addr(cb))
    yield r, call, addr
    r.L.nxr_reset()


def decode(block: blob.Block) -> list[tuple]:
    body = b"".join(bytes(b) for b, _ in block.chunks)
    return nxpkt.decode(binpackets.blob_header(sum(n for _, n in block.chunks), len(body)) + body)


def test_depth_bias_and_blend_colour_in_c(rec):
    r, call, addr = rec
    bias = r.ffi.new("float[3]", [0.25, 1.5, 0.0])  # constant, slope, clamp
    colour = r.ffi.new("float[4]", [0.125, 0.5, 0.75, 1.0])
    assert call("nvnCommandBufferSetDepthBias", addr(bias)) is None  # recorded in C
    assert call("nvnCommandBufferSetBlendColor", addr(colour)) is None
    bias[2] = -2.5
    assert call("nvnCommandBufferSetDepthBias", addr(bias)) is None
    assert decode(r.end(CB)) == [
        (P.OP_DEPTH_BIAS, 0.25, 1.5, 0.0),
        (P.OP_BLEND_CONSTANT, 0.125, 0.5, 0.75, 1.0),
        (P.OP_DEPTH_BIAS, 0.25, 1.5, -2.5),
    ]


def test_not_finite_or_unreadable_is_pythons_to_name(rec):
    r, call, addr = rec
    colour = r.ffi.new("float[4]", [0.0, math.inf, 0.0, 1.0])
    assert call("nvnCommandBufferSetBlendColor", addr(colour)) == ""  # "": the Python function's turn
    bias = r.ffi.new("float[3]", [math.nan, 0.0, 0.0])
    assert call("nvnCommandBufferSetDepthBias", addr(bias)) == ""
    assert call("nvnCommandBufferSetDepthBias", 0) == ""  # a null pointer: Python names it
    assert decode(r.end(CB)) == []
