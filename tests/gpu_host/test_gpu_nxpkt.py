"""The binary packet format and its native decoder/validator (gpu_host/nxpkt.c).

- Round trip: packet tuples of every op -> ``binpackets.convert`` -> decoded in C -> the same
  tuples ``packets.check`` gives (floats as their f32 values).
- The C format pass against the Python one (``packets.check_full``, written before the C and
  independently of it): random packets, many at the boundaries of their fields, must be accepted
  or refused alike.
- The C validation pass against ``validate.plan`` on random submissions of the native ops with
  bogus ids, ranges and missing state: both refuse at the same packet, or both accept.
- Fuzz: every truncation of a blob, oversized and undersized size fields, bogus counts, random
  byte flips — each refused with a NativePacketError naming the packet index, op and field, and
  the decoder keeps answering correctly afterwards (a crash would take the test process down).
"""

from __future__ import annotations

import math
import random
import struct

import pytest

from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import COLOR_FS, COLOR_VS, TEX_FS, TEX_VS
from gpu_packets import SizedPools, realistic_frame, texture
from gpu_host import binpackets as B
from gpu_host import nxpkt
from gpu_host import packets as P
from gpu_host.objects import Objects
from gpu_host.validate import SubmissionError, plan

E = P.EMPTY


def every_op() -> list[tuple]:
    return [
        (P.OP_TARGET, 7),
        (P.OP_CLEAR, 0.25, 0.5, 1.0, 1),
        (P.OP_PROGRAM, 1),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 5, 8], [2, 1, 12]]),
        (P.OP_VERTEX, 1, 0, 96),
        (P.OP_INDEX, 1, 4096, 64, 2),
        (P.OP_UNIFORM, 3, 1, 1 << 40, 65536),
        (P.OP_TEXTURE, 2, 10, 1),
        (P.OP_VIEWPORT, 0.0, -1.5, 128.0, 16384),
        (P.OP_DRAW, 6, 1, 0, 0),
        (P.OP_DRAW_INDEXED, 3, 2, 1, -(1 << 31), 7),
        (P.OP_SIGNAL, 63, (1 << 64) - 1),
        (P.OP_PRESENT, 9, 7),
        (P.OP_BLEND, True),
        (P.OP_WRITEBACK, 7),
        (P.OP_DIRTY, 1, 8, 16),
        (P.OP_POOLS, [1] * 15 + [E], [2, E, 3, 4]),
        (P.OP_DEPTH_TARGET, E, 8),
        (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 255, 3),
        (P.OP_DEPTH_STENCIL, True, False, 7, True, *(1, 2, 3, 4, 5, 6, 7), *(7, 6, 5, 4, 255, 0, 9)),
        (P.OP_RASTER, 3, 1, 1, True),
        (P.OP_DEPTH_BIAS, 1.5, -2.0, 0.0),
        (P.OP_SCISSOR, 0, 16384, 16384, 1),
        (P.OP_BLEND_STATE, 7, True, 14, 0, 4, 6, 7, 3, 15),
        (P.OP_BLEND_CONSTANT, 0.1, 0.2, 0.3, 0.4),
        (P.OP_MULTISAMPLE, 4, True),
        (P.OP_EVENT_SIGNAL, 1, 4, 1, 0xFFFFFFFF),
        (P.OP_EVENT_WAIT, 1, 8, 0, 5),
        (P.OP_RENDER_TARGETS, [1, 2, E], 3),
        (P.OP_CLEAR_TARGET, 7, 1, 0, 0, 1),
        (P.OP_RESOLVE, 1, 2),
        (P.OP_BEGIN, 5),
        (P.OP_END, 5),
        (P.OP_PRESENT_IMAGE, 12, 3, 1 << 33, 1280, 720, 1, 5120, 4, 2),
        (P.OP_COMPUTE_BUFFER, 15, 1, 1 << 33, 4096, 0x160, True),  # gpu-compute: PROTOCOL.md "Compute"
        (P.OP_COMPUTE_CONST, 0xFFFC, 0xDEADBEEF),
        (P.OP_COMPUTE_SURFACE, 7, E),
        (P.OP_DISPATCH, 9, 65535, 2, 3, 65536, 0xFFFF, E, 0, 0, 0),
        (P.OP_VIEWPORT_INDEXED, 15, 16.0, 0.5, 16384.0, 1.0),  # shader-tex: a geometry stage's ViewportIndex
    ]


def f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


def normal(t: tuple) -> tuple:
    """A checked packet with floats rounded to f32 and lists as tuples (what the blob holds)."""
    out = []
    for (_, kind), v in zip(P.OPS[t[0]].fields, t[1:]):
        if kind == P.F32:
            out.append(f32(v))
        elif kind == P.ATTRS:
            out.append(tuple(tuple(a) for a in v))
        elif isinstance(v, (list, tuple)):
            out.append(tuple(v))
        else:
            out.append(v)
    return (t[0], *out)


def test_every_op_round_trips():
    cmds = every_op()
    assert {c[0] for c in cmds} == set(P.OPS), "every op of packets.OPS is covered"
    got = nxpkt.decode(B.convert(cmds))
    assert got == [normal(P.check(c)) for c in cmds]
    assert nxpkt.check(B.convert(cmds)).packets == len(cmds)


def test_convert_names_bad_packets():
    with pytest.raises(B.ConvertError, match=r"packet 1: UNIFORM: field slot = 4"):
        B.convert([(P.OP_TARGET, 7), (P.OP_UNIFORM, 4, 1, 0, 16)])
    with pytest.raises(B.ConvertError, match=r"packet 0: CLEAR: field g has no f32 form"):
        B.convert([(P.OP_CLEAR, 0.0, 1e300, 0.0, 1.0)])


# -- the C format pass against packets.check_full ----------------------------------------
EDGE = [
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    15,
    16,
    17,
    255,
    256,
    2048,
    2049,
    16384,
    16385,
    65535,
    65536,
    1 << 24,
    (1 << 24) + 1,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
]
FLOATS = [0.0, -0.0, 1.0, 0.5, -1.0, 1.0000001, 16384.0, 16385.0, 3e38, float("inf"), float("-inf"), float("nan")]


def raw_field(rng: random.Random, kind: str) -> tuple[list[int], object]:
    """(u32 words of one field, the value the Python path would have unpacked from msgpack)."""
    if kind == P.U64:
        v = rng.choice([0, 1, 1 << 40, (1 << 64) - 1, rng.getrandbits(64)])
        return [v & 0xFFFFFFFF, v >> 32], v
    if kind == P.F32:
        v = rng.choice(FLOATS) if rng.random() < 0.7 else f32(rng.uniform(-3e4, 3e4))
        w = struct.unpack("<I", struct.pack("<f", v))[0]
        return [w], struct.unpack("<f", struct.pack("<I", w))[0]
    if kind == P.BOOL:
        w = rng.choice([0, 1, 1, 0, 2, 0xFFFFFFFF])
        return [w], (bool(w) if w < 2 else w)
    if kind == P.I32:
        w = rng.choice(EDGE)
        return [w], w - (1 << 32) if w >= 1 << 31 else w
    if kind == P.U32:
        w = rng.choice(EDGE) if rng.random() < 0.8 else rng.getrandbits(32)
        return [w], w
    if kind == P.ATTRS:
        n = rng.choice([1, 2, 3, 8])
        items = [
            [rng.choice([0, 1, 15, 16, 0x10000]), rng.choice([1, 2, 4, 5, 0, 6]), rng.choice([0, 4, 8, 12, 2040])]
            for _ in range(n)
        ]
        return [n, *(x for a in items for x in a)], items
    if kind == P.COLOR_IDS:
        n = rng.choice([1, 2, 8])
        ids = [rng.choice([1, 2, E]) for _ in range(n)]
        return [n, *ids], ids
    n = P.POOL_TEXTURES if kind == P.TEX_IDS else P.POOL_SAMPLERS
    ids = [rng.choice([1, E, 0x7FFFFFFF]) for _ in range(n)]
    return ids, ids


def python_accepts(obj: list) -> bool:
    try:
        P.check_full(obj)
        return True
    except P.PacketError:
        return False


def test_format_pass_agrees_with_python():
    rng = random.Random(3201)
    refused = accepted = 0
    for _ in range(6000):
        op = P.OPS[rng.choice(sorted(P.OPS))]
        words, obj = [], [op.code]
        for _, kind in op.fields:
            w, v = raw_field(rng, kind)
            words += w
            obj.append(v)
        data = B.blob([B.pack_raw(op.code, words)])
        py = python_accepts(obj)
        try:
            nxpkt.check(data)
            c = True
        except nxpkt.NativePacketError as e:
            c = False
            assert e.index == 0 and e.op == op.code and e.field, e
        assert c == py, (obj, c, py)
        refused += not c
        accepted += c
    assert refused > 1000 and accepted > 1000, (refused, accepted)  # both sides exercised


# -- the C validation pass against validate.plan ------------------------------------------
@pytest.fixture(scope="module")
def objects():
    objs = Objects(SizedPools({1: 1 << 20, 2: 4096}))
    objs.add_program(1, *GlslSource(COLOR_VS, COLOR_FS).spirv())
    objs.add_program(2, *GlslSource(TEX_VS, TEX_FS).spirv())
    objs.add_texture(**texture(7, 32, 32, render_target=True))
    objs.add_texture(**texture(8, 32, 32, "D32F", render_target=True))
    objs.add_texture(**texture(10, 8, 8, pool=1, pitch=32))
    objs.add_texture(**texture(12, 16, 32, "D24S8", render_target=True))
    objs.add_texture(**texture(13, 32, 32, render_target=True, samples=4))
    objs.add_sampler(1, False, False)
    objs.add_sampler(2, False, False, compare=2)
    return objs


def random_submission(rng: random.Random) -> list[tuple]:
    def pick(good, bad):
        return rng.choice(bad) if rng.random() < 0.04 else rng.choice(good)

    cmds = []
    for _ in range(rng.randint(1, 30)):
        k = rng.random()
        if k < 0.04:
            cmds.append((P.OP_TARGET, pick([7], [8, 10, 99])))
        elif k < 0.06:  # colour + depth, depth alone; a wrong kind, size or id (the Python path names those)
            cmds.append(
                (
                    P.OP_DEPTH_TARGET,
                    *pick([(7, 8), (P.EMPTY, 8), (7, P.EMPTY)], [(8, 8), (7, 7), (7, 12), (P.EMPTY, P.EMPTY), (99, 8), (7, 10)]),
                )
            )
        elif k < 0.1:
            cmds.append((P.OP_CLEAR, 0.0, 0.0, 0.0, 1.0))
        elif k < 0.16:
            cmds.append((P.OP_PROGRAM, pick([1, 2], [3, 0])))
        elif k < 0.22:
            cmds.append(
                (P.OP_VERTEX_LAYOUT, *rng.choice([(8, 0, [[0, 2, 0]]), (16, 0, [[0, 2, 0], [1, 2, 8]]), (16, 0, [[1, 2, 8]])]))
            )
        elif k < 0.3:
            cmds.append(
                (
                    P.OP_VERTEX,
                    pick([1, 2], [3]),
                    pick([0, 64, 4000], [(1 << 20) - 8, 1 << 20, (1 << 64) - 8]),
                    pick([96, 48], [0, 1 << 17, (1 << 64) - 1]),
                )
            )
        elif k < 0.36:
            cmds.append((P.OP_INDEX, pick([1], [5]), pick([0, 128], [1 << 20]), pick([12, 64], [0]), rng.choice([2, 4])))
        elif k < 0.5:
            cmds.append(
                (
                    P.OP_UNIFORM,
                    rng.randrange(4),
                    pick([1], [2, 9]),
                    pick([0, 256], [(1 << 20) - 8]),
                    pick([48, 256], [0, 65536 + 16]),
                )
            )
        elif k < 0.58:
            cmds.append((P.OP_TEXTURE, rng.randrange(4), pick([10], [7, 8, 11]), pick([1], [2, 3])))
        elif k < 0.62:
            cmds.append(
                rng.choice(
                    [
                        (P.OP_VIEWPORT, 0.0, 0.0, 32.0, 32.0),
                        (P.OP_SCISSOR, 0, 0, 8, 8),
                        (P.OP_BLEND_CONSTANT, 1.0, 0.0, 0.0, 1.0),
                        (P.OP_DEPTH_BIAS, 0.0, 0.0, 0.0),
                        (P.OP_SIGNAL, pick([0, 63], [64, 1000]), 5),
                        (P.OP_PRESENT, 1, pick([7], [8, 10])),
                        (P.OP_CLEAR_DEPTH_STENCIL, 1.0, 0, 3),
                        P.DS_DEFAULT,
                        P.BLEND_OVER,
                        (P.OP_RASTER, 1, 1, 0, True),
                        (P.OP_DIRTY, pick([1, 2], [3]), pick([0, 64], [1 << 20]), pick([64], [0, 1 << 21])),
                        (P.OP_WRITEBACK, pick([7], [10, 99])),
                        (
                            P.OP_RENDER_TARGETS,
                            *pick(
                                [((7,), 8), ((7, P.EMPTY), P.EMPTY)],
                                [((7, 7), 8), ((P.EMPTY, 7), 8), ((8,), P.EMPTY), ((10,), P.EMPTY), ((7,), 12)],
                            ),
                        ),
                        (P.OP_CLEAR_TARGET, pick([0], [1, 7]), 0.0, 0.0, 0.0, 1.0),
                        (P.OP_BLEND_STATE, 3, True, 1, 1, 0, 1, 1, 0, 15),
                        (P.OP_TARGET, 13),
                        (P.OP_MULTISAMPLE, rng.choice([1, 2, 4]), rng.random() < 0.5),
                        (P.OP_RESOLVE, *pick([(13, 7)], [(7, 13), (13, 8), (13, 10), (13, 99)])),
                        (P.OP_EVENT_SIGNAL, *pick([(1, 64), (2, 4092)], [(2, 4094), (2, 4096), (3, 0)]), rng.randrange(2), 7),
                    ]
                )
            )
        elif k < 0.97:
            if rng.random() < 0.7:
                cmds.append((P.OP_DRAW, pick([6, 3, 0], [7, 100]), 1, pick([0, 1], [4, 50]), 0))
            else:
                cmds.append((P.OP_DRAW_INDEXED, pick([3, 6], [40]), 1, pick([0, 2], [30]), 0, 0))
        else:
            # (BEGIN: refused; the rest only the Python path replays: line fill, a bias clamp, MULTISAMPLE)
            cmds.append(
                rng.choice(
                    [
                        (P.OP_RASTER, 0, 0, 1, False),
                        (P.OP_DEPTH_BIAS, 0.0, 0.0, 0.5),
                        (P.OP_MULTISAMPLE, 1, False),
                        (P.OP_BEGIN, 3),
                    ]
                )
            )
    return cmds


def python_verdict(cmds: list[tuple], objs: Objects) -> int | None:
    """The packet index validate.plan refuses at, or None."""
    try:
        plan(1, [P.check(c) for c in cmds], objs)
        return None
    except SubmissionError as e:
        return int(str(e).split("packet ")[1].split()[0])


def test_validation_agrees_with_python(objects):
    tabs = nxpkt.tables(objects, {1: 1 << 20, 2: 4096})
    rng = random.Random(3202)
    seen = {"ok": 0, "bad": 0, "fallback": 0}
    for _ in range(3000):
        cmds = random_submission(rng)
        py = python_verdict(cmds, objects)
        try:
            got = nxpkt.check(B.convert(cmds), tabs)
        except nxpkt.NativePacketError as e:
            assert py == e.index, (cmds, str(e), py)
            assert e.op == cmds[e.index][0] and e.field
            seen["bad"] += 1
            continue
        if got.fallback_op:  # the Python path replays (and validates) it whole
            seen["fallback"] += 1
            first = next(i for i, c in enumerate(cmds) if c[0] == got.fallback_op)
            assert py is None or py >= first, (cmds, py)
            continue
        assert py is None, (cmds, py)
        assert got.draws == sum(c[0] in (P.OP_DRAW, P.OP_DRAW_INDEXED) for c in cmds)
        seen["ok"] += 1
    assert min(seen.values()) > 50, seen


def test_validation_names_packet_op_and_field(objects):
    tabs = nxpkt.tables(objects, {1: 1 << 20, 2: 4096})
    base = [(P.OP_TARGET, 7), (P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]), (P.OP_VERTEX, 1, 0, 48)]
    cases = [
        ((P.OP_TEXTURE, 0, 99, 1), 4, "texture", "not a registered texture"),
        ((P.OP_UNIFORM, 0, 2, 4000, 200), 4, "size", "runs past pool 2's end"),
        ((P.OP_VERTEX, 1, (1 << 64) - 8, 16), 4, "size", "runs past pool 1's end"),
        ((P.OP_DRAW, 7, 1, 0, 0), 4, "first_vertex", "run past the 48-byte vertex buffer"),
        ((P.OP_DRAW_INDEXED, 3, 1, 0, 0, 0), 4, "state", "no index buffer set"),
        ((P.OP_SIGNAL, 64, 1), 4, "fence", "not below 64"),
    ]
    for bad, index, field, text in cases:
        with pytest.raises(nxpkt.NativePacketError, match=text) as ei:
            nxpkt.check(B.convert(base + [bad]), tabs)
        assert (ei.value.index, ei.value.op, ei.value.field) == (index, bad[0], field)
        assert f"packet {index} {P.OPS[bad[0]].name}" in str(ei.value)


# -- fuzz ----------------------------------------------------------------------------------
def frame(draws: int) -> list[tuple]:
    return realistic_frame(draws, 0, target=7, programs=(2,), textures=(10,), sampler=1, ubo_at=0, ubos=64, present=1)


def expect_refused(data: bytes, tabs=None) -> nxpkt.NativePacketError:
    with pytest.raises(nxpkt.NativePacketError) as ei:
        nxpkt.check(data, tabs)
    e = ei.value
    assert e.field and (e.index == -1 or e.op in P.OPS or "op" in e.field), e
    return e


def test_fuzz_truncated_oversized_bogus(objects):
    tabs = nxpkt.tables(objects, {1: 1 << 20, 2: 4096})
    good = B.convert(frame(40))
    assert nxpkt.check(good, tabs).draws == 40
    for n in range(len(good)):  # every truncation
        e = expect_refused(good[:n], tabs)
        assert e.index == -1 if n < B.HEADER else True
    hdr = struct.unpack_from("<IHHII", good)
    for fields in (
        (0x4247584F, *hdr[1:]),
        (hdr[0], 2, *hdr[2:]),
        (*hdr[:2], 32, *hdr[3:]),
        (*hdr[:3], hdr[3] + 1, hdr[4]),
        (*hdr[:3], hdr[3] - 1, hdr[4]),
        (*hdr[:4], hdr[4] + 4),
        (*hdr[:3], 0xFFFFFFFF, hdr[4]),
    ):
        expect_refused(struct.pack("<IHHII", *fields) + good[16:], tabs)
    expect_refused(good + b"\0" * 4, tabs)  # bytes after the last packet
    # every packet's size field too large, too small, unaligned, zero
    at, i = B.HEADER, 0
    while at < len(good):
        size = struct.unpack_from("<H", good, at + 2)[0]
        for bad in (size + 4, size - 4, size + 1, 0, 0xFFFC):
            d = bytearray(good)
            struct.pack_into("<H", d, at + 2, bad)
            e = expect_refused(bytes(d), tabs)
            assert e.index == i, (i, bad, e)
        at += size
        i += 1
    # bogus ids and ranges anywhere: each word of each packet set to hostile values
    rng = random.Random(3203)
    refused = 0
    for _ in range(4000):
        d = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(B.HEADER, len(d) - 3) & ~3
            struct.pack_into("<I", d, pos, rng.choice([0, 1, 5, 99, 0x7FFF, 0xFFFF, 0x10000, 0xFFFFFFFF, rng.getrandbits(32)]))
        try:
            nxpkt.check(bytes(d), tabs)
        except nxpkt.NativePacketError as e:
            refused += 1
            assert e.field and (e.index >= 0 or e.index == -1), e
    assert refused > 1000, refused
    # random bytes, random lengths
    for _ in range(2000):
        blob = struct.pack("<IHHII", B.MAGIC, B.VERSION, B.HEADER, rng.randint(0, 8), 0)
        body = rng.randbytes(rng.randrange(0, 200))
        blob = blob[:12] + struct.pack("<I", len(body)) + body
        try:
            nxpkt.check(blob, tabs)
        except nxpkt.NativePacketError:
            pass
    # still serving: the good blob checks and decodes as before
    assert nxpkt.check(good, tabs).draws == 40
    assert nxpkt.decode(good) == [normal(P.check(c)) for c in frame(40)]


def test_big_frame_one_call(objects):
    tabs = nxpkt.tables(objects, {1: 1 << 20, 2: 4096})
    cmds = frame(50000)
    got = nxpkt.check(B.convert(cmds), tabs)
    assert (got.packets, got.draws, got.fallback_op) == (len(cmds), 50000, 0)
    assert not math.isnan(f32(1.0))


# -- msgpack -> blob in C against binpackets.convert -----------------------------------------
def mutate(rng: random.Random, v):
    """A value of another msgpack type or an edge of its range (bool for int, int for bool, ...)."""
    return rng.choice(
        [
            True,
            False,
            0,
            1,
            -1,
            1 << 32,
            (1 << 32) - 1,
            1 << 64 - 1,
            -(1 << 31),
            1 << 31,
            1.5,
            0.0,
            float("inf"),
            float("nan"),
            3.5e38,
            1 << 24,
            (1 << 24) + 1,
            [],
            [1, 2, 3],
            [v],
        ]
    )


def test_msgpack_conversion_agrees_with_python():
    import msgpack

    rng = random.Random(3204)
    seen = {"same": 0, "fallback": 0, "range": 0}
    for _ in range(4000):
        cmds = [list(c) for c in rng.sample(every_op(), rng.randint(1, 6))]
        for c in cmds:
            if rng.random() < 0.3:
                k = rng.randrange(len(c))
                c[k] = mutate(rng, c[k])
        try:
            raw = msgpack.packb(cmds, use_bin_type=True)
        except (OverflowError, ValueError, TypeError):
            continue
        got = nxpkt.from_msgpack(raw)
        try:
            want = B.convert(msgpack.unpackb(raw, use_list=False))
        except B.ConvertError:
            want = None
        if got is None:
            seen["fallback"] += 1  # Python converts (or names the bad value)
        elif want is None:  # a range Python refuses: the C format pass must refuse it too
            with pytest.raises(nxpkt.NativePacketError):
                nxpkt.check(got)
            seen["range"] += 1
        else:
            assert got == want, cmds  # the same bytes when both accept
            seen["same"] += 1
    assert seen["same"] > 500 and seen["fallback"] > 500 and seen["range"] > 30, seen


# -- the format pass on staged chunks (nx_pkt_format_body) and its flag ----------------------
def test_format_body_agrees_with_the_blob_check(objects):
    """nx_pkt_format_body on bare packet bodies (a recorder chunk, as the GPU process stages it)
    accepts exactly the bodies whose blob the check's format pass accepts, counting their
    packets; fuzzed with the same hostile words, truncations and bogus sizes as the blob fuzz.
    With the flag (pass 1 done), validation gives the same verdict, draws and named error."""
    tabs = nxpkt.tables(objects, {1: 1 << 20, 2: 4096})
    good = B.convert(frame(40))
    body = good[B.HEADER :]
    assert nxpkt.format_body(body) == len(frame(40)) and nxpkt.format_body(b"") == 0
    rng = random.Random(3204)
    agree = {"ok": 0, "bad": 0}
    for k in range(3000):
        d = bytearray(body)
        if k % 3 == 0:
            d = d[: rng.randrange(0, len(d))]  # a cut anywhere (a packet's middle: refused)
        for _ in range(rng.randint(0, 3)):
            if not d:
                break
            pos = rng.randrange(0, max(1, len(d) - 3)) & ~3
            struct.pack_into("<I", d, pos, rng.choice([0, 1, 5, 99, 0x7FFF, 0xFFFF, 0x10000, 0xFFFFFFFF, rng.getrandbits(32)]))
        n = nxpkt.format_body(bytes(d))
        try:
            whole = nxpkt.check(B.blob_header(max(n, 0), len(d)) + bytes(d))  # pass 1 only
        except nxpkt.NativePacketError:
            whole = None
        assert (n >= 0) == (whole is not None), (k, n)
        if whole is None:
            agree["bad"] += 1
            continue
        agree["ok"] += 1
        assert whole.packets == n
        blob = B.blob_header(n, len(d)) + bytes(d)
        try:
            full = nxpkt.check(blob, tabs)
        except nxpkt.NativePacketError as e:
            with pytest.raises(nxpkt.NativePacketError) as ei:
                nxpkt.check(blob, tabs, formatted=True)
            assert str(ei.value) == str(e)
            continue
        assert nxpkt.check(blob, tabs, formatted=True) == full
    assert min(agree.values()) > 300, agree
    # the flag leaves out only the field checks: the structure is walked again (a wrong count,
    # a bad size) and named as before
    bad = bytearray(good)
    struct.pack_into("<H", bad, B.HEADER + 2, 6)
    for blob in (bytes(bad), good[:-4], good[:8] + struct.pack("<I", 41) + good[12:]):
        with pytest.raises(nxpkt.NativePacketError) as a:
            nxpkt.check(blob, tabs)
        with pytest.raises(nxpkt.NativePacketError) as b:
            nxpkt.check(blob, tabs, formatted=True)
        assert str(a.value) == str(b.value)


def test_format_body_fast_loop_agrees_at_the_limits():
    """nx_pkt_format_body's fast loop (fixed-size ops whose fields only meet the op rules: DRAW,
    UNIFORM, TEXTURE, PROGRAM...) accepts exactly the packets the blob check's format pass
    accepts: every op byte 0..47, every size 4..72, the reserved byte set or not, fields 0 and 1
    at the rules' limits (a slot of 3 / 4, counts of MAX_DRAW_COUNT / + 1) and random words, whole
    or cut short."""
    rng = random.Random(3205)
    edge = [0, 1, 3, 4, 5, P.MAX_DRAW_COUNT, P.MAX_DRAW_COUNT + 1, 0x7FFFFFFF, 0xFFFFFFFF]
    seen: dict[int, set[bool]] = {}
    for op in range(48):
        for size in range(4, 76, 4):
            for k in range(40):
                words = [rng.choice(edge) if i < 2 or k % 2 else rng.getrandbits(32) for i in range((size - 4) // 4)]
                if k % 10 in (3, 4):  # zero fields (every rule met), the reserved byte 0 / 1
                    words = [0] * len(words)
                pk = struct.pack("<BBH", op, k % 10 == 4, size) + struct.pack(f"<{len(words)}I", *words)
                if k % 8 == 7 and size > 4:
                    pk = pk[:-4]  # the body ends inside the packet
                n = nxpkt.format_body(pk)
                try:
                    nxpkt.check(B.blob_header(1, len(pk)) + pk)  # pass 1 only (no objects)
                    whole = True
                except nxpkt.NativePacketError:
                    whole = False
                assert (n == 1) == whole and n in (1, -1), (op, size, k, pk.hex())
                seen.setdefault(op, set()).add(whole)
    for op in (P.OP_DRAW, P.OP_DRAW_INDEXED, P.OP_UNIFORM, P.OP_TEXTURE, P.OP_PROGRAM):
        assert seen[op] == {True, False}, (op, seen[op])
