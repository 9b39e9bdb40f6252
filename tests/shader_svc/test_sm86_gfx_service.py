"""Vertex/fragment programs through the real gRPC service on loopback: a good pair is translated
with its reflection (bindings, locations); garbage or short headers, a header of another stage,
instructions of the wrong stage, undeclared attributes and resources without a binding each get
INVALID_ARGUMENT naming the problem, and the service keeps serving."""

from __future__ import annotations


import numpy as np

from proto import shader_pb2 as P
from service_checks import assert_invalid_and_serving
from shader_svc import sph
from shader_svc.sm86.assemble import assemble_program

VS_HDR = dict(inputs={0x80, 0x84, 0x88, 0x8C}, outputs={0x70, 0x74, 0x78, 0x7C, 0x80})
VS = "ALD.128 R0, a[0x80]\nAST.128 a[0x70], R0\nAST a[0x80], R0\nEXIT\n"
FS_HDR = dict(inputs={0x80: "perspective"}, targets=(0x1,))
FS = "IPA.PASS R0, a[0x80]\nFMUL R0, R0, c[0x2][0x10]\nEXIT\n"


def prog(stage: str, text: str, hdr: dict) -> bytes:
    h = sph.build(stage, **hdr)
    return h + assemble_program(text, base=len(h))


def _req(code: bytes, stage: int) -> P.Program:
    return P.Program(arch=P.SM86, stage=stage, code=code)


def test_good_pair_translates_with_graphics_reflection(server):
    stub, _ = server
    v = stub.Translate(_req(prog("vertex", VS, VS_HDR), P.VERTEX), timeout=60)
    r = v.reflection
    assert (r.stage, list(r.inputs), list(r.outputs), r.writes_position) == ("vertex", [0], [0], True)
    f = stub.Translate(_req(prog("fragment", FS, FS_HDR), P.FRAGMENT), timeout=60)
    r = f.reflection
    assert (r.stage, list(r.inputs), list(r.outputs), list(r.uniform_bindings)) == ("fragment", [0], [0], [2])
    assert [(c.bank, c.offset, c.size) for c in r.const_ranges] == [(2, 0x10, 4)]
    again = stub.Translate(_req(prog("fragment", FS, FS_HDR), P.FRAGMENT), timeout=60)
    assert again.cached and again.reflection == f.reflection


def test_bad_graphics_programs_are_invalid_argument_and_service_keeps_serving(server):
    stub, ch = server
    vh = sph.build("vertex", **VS_HDR)
    garbage = np.random.default_rng(3).integers(0, 256, 0x200, dtype=np.uint8).tobytes()
    garbage = bytes([0x1F]) + garbage[1:]  # SPH type 31: never a header
    geometry = bytearray(vh)
    geometry[1] = (geometry[1] & ~0x3C) | (4 << 2)  # shader type 4 = geometry
    cases = [
        (_req(garbage, P.VERTEX), r"field code, offset 0x0: .*SPH type 31"),
        (_req(b"\x41\x04", P.VERTEX), r"shorter than a shader program header"),
        (_req(vh[:0x30], P.VERTEX), r"offset 0x30: header truncated: version 4 needs 128 bytes"),
        # gfx-geom: a geometry header asked for as a vertex program; a geometry program whose header
        # has no output topology (0), through the service
        (
            _req(bytes(geometry) + assemble_program("EXIT"), P.VERTEX),
            r"header is for a geometry program, the request says vertex",
        ),
        (
            _req(bytes(geometry) + assemble_program("EXIT"), P.GEOMETRY_POINTS),
            r"offset 0xc: .*geometry output topology 0 unknown",
        ),
        (_req(prog("fragment", FS, FS_HDR), P.VERTEX), r"field stage: header is for a fragment program"),
        (_req(vh, P.VERTEX), r"no instructions after the 128-byte header"),
        (_req(vh + assemble_program("EXIT")[:-3], P.VERTEX), r"offset 0x80: program truncated"),
        (
            _req(prog("vertex", "IPA.PASS R0, a[0x80]\nEXIT", VS_HDR), P.VERTEX),
            r"offset 0x80: IPA.PASS R0, a\[0x80\]: IPA does not exist in a vertex program",
        ),
        (
            _req(prog("fragment", "ALD R0, a[0x80]\nEXIT", FS_HDR), P.FRAGMENT),
            r"offset 0x80: .*ALD does not exist in a fragment program",
        ),
        (_req(prog("vertex", "KILL\nEXIT", VS_HDR), P.VERTEX), r"offset 0x80: KILL: KILL outside a fragment"),
        (
            _req(prog("vertex", "ALD R0, a[0xa0]\nEXIT", VS_HDR), P.VERTEX),
            r"offset 0x80: .*reads a\[0xa0\], which the shader program header does not declare",
        ),
        (_req(prog("vertex", "AST a[0x90], R0\nEXIT", VS_HDR), P.VERTEX), r"writes a\[0x90\].*does not declare"),
        (_req(prog("fragment", "IPA.PASS R0, a[0x90]\nEXIT", FS_HDR), P.FRAGMENT), r"interpolates a\[0x90\]"),
        (
            _req(prog("fragment", "MOV R0, c[0x5][0x0]\nEXIT", FS_HDR), P.FRAGMENT),
            r"offset 0x80: .*constant bank c\[0x5\] has no binding",
        ),
        (
            _req(prog("fragment", "TEX RZ, R0, R0, 0x0, 0x9, 2D\nEXIT", FS_HDR), P.FRAGMENT),
            r"offset 0x80: .*texture 0x0, 0x9 has no binding",
        ),
        (_req(prog("fragment", "S2R R0, SR_TID.X\nEXIT", FS_HDR), P.FRAGMENT), r"offset 0x80: .*not translated yet"),
        (_req(vh + bytes.fromhex("21730000ff800000" + "00" * 8), P.VERTEX), r"offset 0x80: word [0-9a-f]{32} refused"),
    ]
    assert_invalid_and_serving(stub, ch, cases)
    assert stub.GetStats(P.StatsRequest()).errors == len(cases)
    assert stub.Translate(_req(prog("vertex", VS, VS_HDR), P.VERTEX), timeout=60).spirv
