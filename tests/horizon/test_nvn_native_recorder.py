"""The NVN front end's native recorder (cpu_host/horizon/hle/nvn/recorder.c, native.py).

The C host functions are driven the way a guest's calls reach them (a CPU record whose X0..X7
hold the call's arguments; no guest kernel: ``nxr_bench_init``) and what they record is decoded
by the GPU process's own native decoder (gpu_host/nxpkt.c) and compared with the packets
PROTOCOL.md's table prescribes for those NVN calls (written out here by hand).  Errors come back
in frontend.py's words; a guest program's misuse through the bound host functions ends in the
same named crash report with either recorder."""

from __future__ import annotations

import struct

import pytest

from cpu_host.gpu_client import blob
from gpu_host import binpackets, nxpkt
from gpu_host import packets as P
from gpu_host.ring_layout import BLOB_PART, MAX_PACKET
from tests.horizon.hz_build import bundle_from_c, nxrecomp

BASE = 0x20_0000_0000  # pool 3's guest address (the recorder only compares numbers)
CB = 41


@pytest.fixture()
def rec():
    from cpu_host.horizon.hle.nvn.native import NativeRecorder

    r = NativeRecorder()
    r.L.nxr_bench_init()
    r.pool(3, BASE, 1 << 20)
    r.program(5, False)
    r.program(6, True)  # reads the bindless pools
    r.texture_slot(0, 100)
    r.texture_slot(2, 102)
    r.sampler_slot(1, 200)
    ffi = r.ffi
    cpu = ffi.new("uint64_t[64]")
    progs = ffi.new("uint64_t[]", [5, 6, 77])  # guest NVNprogram structs: their ids (77: none)
    cb = ffi.new("uint64_t *", CB)  # the guest's NVNcommandBuffer struct
    addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
    names = r.names()

    def call(name: str, *args: int, struct_at: int | None = None) -> str | None:
        cpu[0] = struct_at if struct_at is not None else addr(cb)
        for i, a in enumerate(args, 1):
            cpu[i] = a & (1 << 64) - 1
        return r.try_call(names.index(name), addr(cpu))

    yield r, call, addr(progs), addr(cb)
    r.L.nxr_reset()


def decode(block: blob.Block) -> list[tuple]:
    body = b"".join(bytes(b) for b, _ in block.chunks)
    return nxpkt.decode(binpackets.blob_header(sum(n for _, n in block.chunks), len(body)) + body)


def test_recorded_packets_are_the_protocols(rec) -> None:
    r, call, progs, cb = rec
    cmds = r.begin(CB, cb)
    cmds.append((P.OP_TARGET, 9))  # a call frontend.py serves in Python
    ffi = r.ffi
    # the guest's NVNvertexAttribState[2] (format, offset, stream, location), NVNvertexStreamState
    # (stride, divisor) and NVNpolygonState (cull back, clockwise, fill, offset enables: fill)
    attrs = ffi.new("uint32_t[]", [2, 0, 0, 0, 5, 8, 0, 1])
    stream = ffi.new("uint32_t[]", [16, 0])
    poly = ffi.new("uint32_t[]", [2, 1, 0, 4])
    # NVNdepthStencilState: depth test on, writes on, LEQUAL, stencil on; front REPLACE/KEEP/INCR_WRAP
    # func EQUAL, back ZERO/INVERT/DECR func NEVER (words 12..15 unused)
    ds = ffi.new("uint32_t[]", [1, 1, 3, 1, 2, 0, 6, 2, 1, 5, 4, 0, 0, 0, 0, 0])
    at = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
    for name, args in [
        ("nvnCommandBufferBindVertexAttribState", (2, at(attrs))),
        ("nvnCommandBufferBindVertexStreamState", (1, at(stream))),
        ("nvnCommandBufferBindPolygonState", (at(poly),)),
        ("nvnCommandBufferSetStencilRef", (2, 0x1AB)),  # back face, 8 bits kept
        ("nvnCommandBufferBindDepthStencilState", (at(ds),)),  # ref and masks stay
        ("nvnCommandBufferSetStencilMask", (3, 0x0F)),
        ("nvnCommandBufferBindVertexBuffer", (0, BASE + 0x100, 0x60)),
        ("nvnCommandBufferBindProgram", (progs,)),
        ("nvnCommandBufferBindUniformBuffer", (3, 1, BASE + 0x1000, 48)),  # stage, slot, address, size
        ("nvnCommandBufferBindTexture", (3, 2, 2 | 1 << 20)),  # slot 2: texture id 2, sampler 1
        ("nvnCommandBufferSetViewport", (0, 0, 64, 32)),
        ("nvnCommandBufferSetScissor", (1, 2, 20000, 3)),  # clamped to 16384
        ("nvnCommandBufferDrawArrays", (0, 3, 6)),  # mode, first, count
        ("nvnCommandBufferDrawArrays", (0, 0, 3)),  # same layout: none again
        ("nvnCommandBufferDrawElements", (1, 2, 4, BASE + 0x200)),  # strip: a new layout
        ("nvnCommandBufferBindProgram", (progs + 8,)),  # reads the pools
        ("nvnCommandBufferDrawArraysInstanced", (1, 0, 4, 7, 2)),  # mode, first, count, base, count
        ("nvnCommandBufferDrawElementsInstanced", (1, 4, 3, BASE + 0x300, -2, 5, 9)),
    ]:
        assert call(name, *args) is None, name
    r.texture_slot(1, 101)  # the pools changed: POOLS again
    assert call("nvnCommandBufferDrawArrays", 1, 0, 4) is None
    cmds.append((P.OP_PRESENT, 1, 9))
    got = decode(r.end(CB))
    layout = [(0, 2, 0), (1, 5, 8)]
    E = P.EMPTY
    pools = (100, E, 102, *[E] * 13), (E, 200, E, E)
    assert got == [
        (P.OP_TARGET, 9),
        (P.OP_RASTER, 2, 1, 0, True),
        (P.OP_DEPTH_STENCIL, False, False, 1, False, 0, 0, 0, 7, 0, 255, 255, 0, 0, 0, 7, 0xAB, 255, 255),
        (P.OP_DEPTH_STENCIL, True, True, 3, True, 2, 0, 6, 2, 0, 255, 255, 1, 5, 4, 0, 0xAB, 255, 255),
        (P.OP_DEPTH_STENCIL, True, True, 3, True, 2, 0, 6, 2, 0, 255, 0x0F, 1, 5, 4, 0, 0xAB, 255, 0x0F),
        (P.OP_VERTEX, 3, 0x100, 0x60),
        (P.OP_PROGRAM, 5),
        (P.OP_UNIFORM, 1, 3, 0x1000, 48),
        (P.OP_TEXTURE, 2, 102, 200),
        (P.OP_VIEWPORT, 0.0, 0.0, 64.0, 32.0),
        (P.OP_SCISSOR, 1, 2, 16384, 3),
        (P.OP_VERTEX_LAYOUT, 16, 0, tuple(layout)),
        (P.OP_DRAW, 6, 1, 3, 0),
        (P.OP_DRAW, 3, 1, 0, 0),
        (P.OP_VERTEX_LAYOUT, 16, 1, tuple(layout)),
        (P.OP_INDEX, 3, 0x200, 8, 2),
        (P.OP_DRAW_INDEXED, 4, 1, 0, 0, 0),
        (P.OP_PROGRAM, 6),
        (P.OP_POOLS, *pools),
        (P.OP_DRAW, 4, 2, 0, 7),
        (P.OP_INDEX, 3, 0x300, 12, 4),
        (P.OP_DRAW_INDEXED, 3, 9, 0, -2, 5),
        (P.OP_POOLS, (100, 101, 102, *[E] * 13), pools[1]),
        (P.OP_DRAW, 4, 1, 0, 0),
        (P.OP_PRESENT, 1, 9),
    ]


def test_errors_in_the_front_ends_words(rec) -> None:
    r, call, progs, cb = rec
    r.begin(CB, cb)
    assert call("nvnCommandBufferDrawArrays", 9, 0, 3) == "draw mode 9"
    assert call("nvnCommandBufferDrawElements", 0, 3, 4, BASE) == "index type 3 (2: u16, 4: u32)"
    assert call("nvnCommandBufferBindUniformBuffer", 3, 4, BASE, 16) == "uniform buffer index 4 (0..3)"
    assert (
        call("nvnCommandBufferBindUniformBuffer", 3, 0, BASE + (1 << 20) - 8, 16)
        == f"uniform buffer: GPU address range {BASE + (1 << 20) - 8:#x}+0x10 lies in no memory pool"
    )
    assert call("nvnCommandBufferBindVertexBuffer", 1, BASE, 16) == "vertex buffer index 1 (index 0 is served)"
    assert (
        call("nvnCommandBufferBindTexture", 3, 0, 1 | 1 << 20)
        == "texture handle 0x100001: texture id 1 or sampler id 1 is not registered"
    )
    assert call("nvnCommandBufferBindTexture", 3, 5, 0) == "texture binding 5 (0..3)"
    assert (
        call("nvnCommandBufferSetScissor", 0, -1, 4, 4) == "nvnCommandBufferSetScissor: rectangle 0, -1, 4x4 has a negative field"
    )
    assert call("nvnCommandBufferBindVertexAttribState", 9, 0) == "9 vertex attributes (at most 8)"
    bad = r.ffi.new("uint32_t[]", [2, 0, 1, 0])
    assert (
        call("nvnCommandBufferBindVertexAttribState", 1, int(r.ffi.cast("uintptr_t", bad)))
        == "vertex attribute 0: stream 1 (one vertex stream is served)"
    )
    assert call("nvnCommandBufferBindVertexStreamState", 2, 0) == "2 vertex streams (one is served)"
    assert (
        call("nvnCommandBufferSetStencilRef", 4, 1)
        == "nvnCommandBufferSetStencilRef: faces 4 is not front (1), back (2) or both (3)"
    )
    ds = r.ffi.new("uint32_t[]", [0, 0, 1, 0, 0, 0, 0, 7, 0, 9, 0, 7, 0, 0, 0, 0])
    assert (
        call("nvnCommandBufferBindDepthStencilState", int(r.ffi.cast("uintptr_t", ds)))
        == "nvnCommandBufferBindDepthStencilState: back depth_fail 9 is not in 0..7"
    )
    poly = r.ffi.new("uint32_t[]", [0, 0, 2, 0])
    assert (
        call("nvnCommandBufferBindPolygonState", int(r.ffi.cast("uintptr_t", poly)))
        == "nvnCommandBufferBindPolygonState: polygon_mode 2 is not in 0..1"
    )
    # The Python function's turn ("" = it names the problem): an unknown struct, an unknown program
    other = r.ffi.new("uint64_t *", CB)
    assert call("nvnCommandBufferSetViewport", 0, 0, 1, 1, struct_at=int(r.ffi.cast("uintptr_t", other))) == ""
    assert call("nvnCommandBufferBindProgram", progs + 16) == ""
    r.alias(CB, int(r.ffi.cast("uintptr_t", other)))  # frontend.py found the recording through it
    assert call("nvnCommandBufferSetViewport", 0, 0, 1, 1, struct_at=int(r.ffi.cast("uintptr_t", other))) is None
    assert decode(r.end(CB)) == [(P.OP_VIEWPORT, 0.0, 0.0, 1.0, 1.0)]  # nothing of the refused calls
    assert call("nvnCommandBufferSetViewport", 0, 0, 1, 1) == ""  # not recording any more


def test_large_recording_in_chunks_and_ring_parts(rec) -> None:
    """50,000 draws: chunks of whole packets (at most 512 KiB), ring part records of at most
    1 MiB, each a whole blob the decoder accepts; all together the recorded stream."""
    r, call, progs, cb = rec
    r.begin(CB, cb)
    r.stride(CB, 8)
    r.attribs(CB, [[0, 2, 0]])
    for i in range(50000):
        assert call("nvnCommandBufferBindUniformBuffer", 3, 0, BASE + 256 * (i % 64), 48) is None
        assert call("nvnCommandBufferDrawArrays", 0, 0, 6) is None
    block = r.end(CB)
    assert len(block.chunks) > 2 and all(len(b) <= blob.CHUNK for b, _ in block.chunks)
    got = decode(block)
    assert len(got) == 100001 and got[:2] == [(P.OP_UNIFORM, 0, 3, 0, 48), (P.OP_VERTEX_LAYOUT, 8, 0, ((0, 2, 0),))]
    assert got[-1] == (P.OP_DRAW, 6, 1, 0, 0)
    recs = blob.part_records(7, [(P.OP_TARGET, 9), block, (P.OP_PRESENT, 1, 9)])
    assert len(recs) > 1
    joined = []
    for i, br in enumerate(recs):
        raw = b"".join(bytes(p) for p in br.pieces)
        assert len(raw) <= MAX_PACKET
        assert BLOB_PART.unpack_from(raw) == (7, i, 1 if i == len(recs) - 1 else 0)
        joined += nxpkt.decode(raw[BLOB_PART.size :])
    assert joined == [(P.OP_TARGET, 9), *got, (P.OP_PRESENT, 1, 9)]


def test_tuples_without_a_binary_form_are_refused_packets() -> None:
    """A value the guest made that has no binary form (the msgpack path sent it for the GPU process
    to refuse) still reaches the GPU process as a packet it refuses by name."""
    data = blob.packet_bytes((P.OP_DRAW, -1, 1, 0, 0))
    with pytest.raises(nxpkt.NativePacketError, match="op 0"):
        nxpkt.check(binpackets.blob([data]))
    assert blob.packet_bytes((P.OP_DRAW, 3, 1, 0, 0)) == struct.pack("<BBH4I", P.OP_DRAW, 0, 20, 3, 1, 0, 0)


MISUSE_C = r"""
#include "hz_sdk.h"
#include "nvn.h"
static NvnProcs nvn;
int hz_main(void) {
    nvn_load_procs(&nvn);
    NVNcommandBuffer cb, copy;
    nvn.nvnCommandBufferInitialize(&cb, 0);
    nvn.nvnCommandBufferBeginRecording(&cb);
    nvn.nvnCommandBufferSetViewport(&cb, 0, 0, 64, 64);
    hz_printf("viewport\n");
    copy = cb;                                   /* the same command buffer through another struct */
    nvn.nvnCommandBufferSetViewport(&copy, 0, 0, 32, 32);
    hz_printf("viewport through a copy\n");
    nvn.nvnCommandBufferDrawArrays(&copy, 9, 0, 3);
    hz_printf("not reached\n");
    return 0;
}
"""


@pytest.mark.parametrize("recorder", ["native", "python"])
def test_guest_misuse_is_named_with_either_recorder(tmp_path, monkeypatch, recorder) -> None:
    """Through the bound host functions: calls the C recorder answers, a struct it had not seen
    (the Python function finds the recording, the C recorder takes it from there), and a bad
    draw mode ending the guest with the report the Python front end always gave."""
    monkeypatch.setenv("NXRECOMP_CPU_HOST_NVN_RECORDER", recorder)
    bundle = bundle_from_c(MISUSE_C, {}, tmp_path / recorder)
    r = nxrecomp("hz-run", str(bundle), timeout=120)
    assert r.returncode == 134, (r.returncode, r.stdout, r.stderr[-2000:])
    assert r.stdout == "viewport\nviewport through a copy\n", r.stdout
    first = r.stderr.strip().splitlines()[0]
    assert "host function nvnCommandBufferDrawArrays" in first and "draw mode 9" in first, r.stderr[-2000:]


def test_fuzzed_calls_are_recorded_or_named(rec) -> None:
    """2,000 hot calls with random arguments (bounded; pointers to real buffers): each is recorded
    or refused with a message, the recorder never crashes, and its stream is whole packets the GPU
    process's decoder accepts or refuses by name."""
    import random

    r, call, progs, cb = rec
    rng = random.Random(32)
    ffi = r.ffi
    attrs = ffi.new(
        "uint32_t[]",
        [rng.choice([1, 2, 5, 9]) if i % 4 == 0 else rng.randrange(3) if i % 4 == 2 else rng.randrange(64) for i in range(64)],
    )  # room for 8 from offset 32
    words = ffi.new("uint32_t[]", [rng.randrange(9) for _ in range(16)])
    at = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
    r.begin(CB, cb)
    r.stride(CB, 8)
    r.attribs(CB, [[0, 2, 0]])
    num = lambda: rng.choice([0, 1, 2, 3, 4, 6, 9, -1, -7, 1 << 31, (1 << 32) - 1, rng.randrange(1 << 32)])  # noqa: E731
    addr = lambda: rng.choice([BASE, BASE + rng.randrange(1 << 20), BASE - 8, BASE + (1 << 20), 0, 1 << 63])  # noqa: E731
    calls = [
        ("nvnCommandBufferDrawArrays", lambda: (num(), num(), num())),
        ("nvnCommandBufferDrawArraysInstanced", lambda: (num(), num(), num(), num(), num())),
        ("nvnCommandBufferDrawElements", lambda: (num(), rng.choice([2, 4, 3]), num(), addr())),
        ("nvnCommandBufferDrawElementsInstanced", lambda: (num(), rng.choice([2, 4]), num(), addr(), num(), num(), num())),
        ("nvnCommandBufferBindVertexBuffer", lambda: (rng.choice([0, 0, 1]), addr(), rng.choice([16, 1 << 21, -1]))),
        ("nvnCommandBufferBindUniformBuffer", lambda: (3, num(), addr(), rng.choice([48, 1 << 40]))),
        ("nvnCommandBufferBindTexture", lambda: (3, num(), rng.randrange(1 << 64))),
        ("nvnCommandBufferBindProgram", lambda: (progs + 8 * rng.randrange(2),)),
        ("nvnCommandBufferSetViewport", lambda: (num(), num(), num(), num())),
        ("nvnCommandBufferSetScissor", lambda: (num(), num(), num(), num())),
        ("nvnCommandBufferBindVertexAttribState", lambda: (rng.randrange(-1, 10), at(attrs) + 16 * rng.randrange(3))),
        ("nvnCommandBufferBindVertexStreamState", lambda: (rng.choice([1, 1, 2]), at(words))),
        ("nvnCommandBufferBindPolygonState", lambda: (at(words) + 4 * rng.randrange(12),)),
        ("nvnCommandBufferBindDepthStencilState", lambda: (at(words),)),
        ("nvnCommandBufferSetStencilRef", lambda: (rng.randrange(5), num())),
    ]
    ok = bad = 0
    for _ in range(2000):
        for i in range(16):  # the state structures change between calls
            words[i] = rng.randrange(9)
        name, args = rng.choice(calls)
        got = call(name, *args())
        assert got is None or got, (name, got)  # recorded, or a message ("" = SLOW: never here)
        ok, bad = ok + (got is None), bad + (got is not None)
    block = r.end(CB)
    assert ok > 300 and bad > 300, (ok, bad)
    for body, count in block.chunks:  # whole packets in every chunk
        at_, n = 0, 0
        while at_ < len(body):
            at_ += body[at_ + 2] | body[at_ + 3] << 8
            n += 1
        assert at_ == len(body) and n == count and len(body) <= blob.CHUNK
    body = b"".join(bytes(b) for b, _ in block.chunks)
    data = binpackets.blob_header(sum(n for _, n in block.chunks), len(body)) + body
    try:
        nxpkt.check(data)
    except nxpkt.NativePacketError as e:  # guest garbage recorded as it came: refused by name
        assert str(e).startswith("packet ")


def test_colour_blend_and_mask_state_as_the_python_front_end(rec) -> None:
    """Random colour / blend / channel-mask / multisample binds: the C recorder's packets equal
    what frontend.py's own packet functions (_blend_packet, _extra_blend_packets over a Recording,
    updated as its cb_* functions update it) make of the same binds."""
    import random

    from cpu_host.horizon.hle.nvn import frontend as F
    from cpu_host.horizon.hle.nvn.objects import Recording

    r, call, progs, cb = rec
    ffi, rng = r.ffi, random.Random(7)
    at = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
    r.begin(CB, cb)
    py = Recording()
    want: list[tuple] = []
    for _ in range(400):
        kind = rng.randrange(4)
        if kind == 0:  # NVNcolorState: enable bits
            bits = rng.choice([0, 1, 3, 0x81, rng.randrange(256)])
            assert call("nvnCommandBufferBindColorState", at(ffi.new("uint32_t[]", [bits]))) is None
            py.color_blend = bits
            want.append((P.OP_BLEND, bool(bits & 1)) if py.blend is None and py.channel_mask is None else F._blend_packet(py))
            want += F._extra_blend_packets(py)
        elif kind == 1:  # NVNblendState: target, factors, equations
            w = [rng.choice([0, 0, 1, 3, 7]), *(rng.randrange(15) for _ in range(4)), rng.randrange(5), rng.randrange(5), 0]
            assert call("nvnCommandBufferBindBlendState", at(ffi.new("uint32_t[]", w))) is None
            t, sc, dc, sa, da, ce, ae, _ = w
            if t == 0:
                py.blend = (sc, dc, sa, da, ce, ae)
                want.append(F._blend_packet(py))
            else:
                py.blends[t] = (sc, dc, sa, da, ce, ae)
                want += F._extra_blend_packets(py)
        elif kind == 2:  # NVNchannelMaskState
            m = rng.choice([0xFFFFFFFF, 0x7, rng.randrange(1 << 32)])
            assert call("nvnCommandBufferBindChannelMaskState", at(ffi.new("uint32_t[]", [m]))) is None
            py.channel_mask = m
            want.append(F._blend_packet(py))
            want += F._extra_blend_packets(py)
        else:  # NVNmultisampleState
            n, a2c = rng.choice([0, 1, 4, 8]), rng.randrange(2)
            assert call("nvnCommandBufferBindMultisampleState", at(ffi.new("uint32_t[]", [n, a2c]))) is None
            want.append((P.OP_MULTISAMPLE, max(n, 1), a2c != 0))
    assert decode(r.end(CB)) == [P.check(list(w)) for w in want]
    r.begin(CB, cb)
    bad = ffi.new("uint32_t[]", [0, 1, 15, 1, 0, 0, 0, 0])
    assert call("nvnCommandBufferBindBlendState", at(bad)) == "nvnCommandBufferBindBlendState: dst_color 15 is not in 0..14"
    assert (
        call("nvnCommandBufferBindMultisampleState", at(ffi.new("uint32_t[]", [3, 0])))
        == "nvnCommandBufferBindMultisampleState: samples 3 is not 0 or one of (1, 2, 4, 8, 16)"
    )
