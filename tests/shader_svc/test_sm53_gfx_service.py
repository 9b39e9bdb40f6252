"""SM53 (Maxwell) vertex/fragment programs through the real gRPC service on loopback: a good pair
is translated with its graphics reflection (bindings, locations) and served from the cache the
second time; bad headers, code of the wrong stage, undeclared attributes, resources without a
binding, forms not translated and refused words each get INVALID_ARGUMENT naming the problem
(offsets count from the header's start), and the service keeps serving."""

from __future__ import annotations


from proto import shader_pb2 as P
from service_checks import assert_invalid_and_serving
from shader_svc import sph
from shader_svc.sm53.assemble import assemble_program
from spirv_checks import spirv_val

VS_HDR = dict(inputs={0x80, 0x84, 0x88, 0x8C}, outputs={0x70, 0x74, 0x78, 0x7C, 0x80, 0x84}, version=3)
VS = "ALD.128 R0, a[0x80]\nAST.128 a[0x70], R0\nAST.64 a[0x80], R0\nEXIT\n"
FS_HDR = dict(inputs={0x7C: "perspective", 0x80: "perspective", 0x84: "perspective"}, targets=(0xF,), version=3)
FS = """IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
TEXS R2, R0, R0, R1, 0x2, 2D, RGBA
FMUL R0, R0, c[0x1][0x10]
EXIT
"""


def prog(stage: str, text: str, hdr: dict) -> bytes:
    h = sph.build(stage, **hdr)
    return h + assemble_program(text, base_addr=len(h))


def _req(code: bytes, stage: int) -> P.Program:
    return P.Program(arch=53, stage=stage, code=code)


def test_good_pair_translates_with_graphics_reflection(server, tmp_path):
    stub, _ = server
    v = stub.Translate(_req(prog("vertex", VS, VS_HDR), P.VERTEX), timeout=60)
    r = v.reflection
    assert (r.stage, list(r.inputs), list(r.outputs), r.writes_position) == ("vertex", [0], [0], True)
    f = stub.Translate(_req(prog("fragment", FS, FS_HDR), P.FRAGMENT), timeout=60)
    r = f.reflection
    assert (r.stage, list(r.inputs), list(r.outputs), list(r.uniform_bindings), list(r.textures)) == (
        "fragment",
        [0],
        [0],
        [1],
        [2],
    )
    assert [(c.bank, c.offset, c.size) for c in r.const_ranges] == [(1, 0x10, 4)]
    again = stub.Translate(_req(prog("fragment", FS, FS_HDR), P.FRAGMENT), timeout=60)
    assert again.cached and again.reflection == f.reflection and again.spirv == f.spirv
    for name, spv in (("vs", v.spirv), ("fs", f.spirv)):
        spirv_val(spv, tmp_path, name, required=False)


def test_bad_sm53_graphics_programs_are_invalid_argument_and_service_keeps_serving(server):
    stub, ch = server
    vh = sph.build("vertex", **VS_HDR)
    exit_ = assemble_program("EXIT")
    cases = [
        (_req(bytes([0x1F]) + bytes(0x7F), P.VERTEX), r"field code, offset 0x0: SM53 vertex program: .*SPH type 31"),
        (_req(vh[:0x30], P.VERTEX), r"offset 0x30: SM53 vertex program: header truncated: version 3 needs 80 bytes"),
        (_req(prog("fragment", FS, FS_HDR), P.VERTEX), r"field stage: SM53 vertex program: header is for a fragment"),
        (_req(vh, P.VERTEX), r"offset 0x50: no instructions after the 80-byte header"),
        (_req(vh + exit_[:-4], P.VERTEX), r"offset 0x68: program truncated: .* multiple of 8"),
        (
            _req(prog("vertex", "IPA.PASS R0, a[0x80], RZ\nEXIT", VS_HDR), P.VERTEX),
            r"offset 0x58: IPA.PASS R0, a\[0x80\], RZ: IPA does not exist in a vertex program",
        ),
        (
            _req(prog("fragment", "ALD R0, a[0x80]\nEXIT", FS_HDR), P.FRAGMENT),
            r"offset 0x58: ALD R0, a\[0x80\]: ALD does not exist in a fragment program",
        ),
        (_req(prog("vertex", "KIL\nEXIT", VS_HDR), P.VERTEX), r"offset 0x58: KIL: KIL does not exist in a vertex"),
        (
            _req(prog("vertex", "ALD R0, a[0xa0]\nEXIT", VS_HDR), P.VERTEX),
            r"offset 0x58: .*reads a\[0xa0\], which the shader program header does not declare",
        ),
        (_req(prog("vertex", "AST a[0x90], R0\nEXIT", VS_HDR), P.VERTEX), r"writes a\[0x90\].*does not declare"),
        (_req(prog("fragment", "IPA.PASS R0, a[0x90], RZ\nEXIT", FS_HDR), P.FRAGMENT), r"interpolates a\[0x90\]"),
        (
            _req(prog("fragment", "MOV R0, c[0x5][0x0]\nEXIT", FS_HDR), P.FRAGMENT),
            r"offset 0x58: .*constant bank c\[0x5\] has no binding",
        ),
        (
            _req(prog("fragment", "TEXS R2, R0, R0, R1, 0x9, 2D, RGBA\nEXIT", FS_HDR), P.FRAGMENT),
            r"offset 0x58: .*texture 0x9 has no binding",
        ),
        (
            _req(prog("fragment", "TLD.LZ R0, R0, 0x0, CUBE, 0xf\nEXIT", FS_HDR), P.FRAGMENT),
            r"fetches from cubes \(TLD\) are not translated",
        ),
        (
            _req(prog("fragment", "S2R R0, SR_TID.X\nEXIT", FS_HDR), P.FRAGMENT),
            r"offset 0x58: S2R R0, SR_TID.X: not "
            r"translated in a fragment program",
        ),
        (_req(prog("fragment", "IPA.SC R0, a[0x80], RZ\nEXIT", FS_HDR), P.FRAGMENT), r"only IPA.PASS, IPA"),
        (_req(prog("vertex", "OUT.EMIT R0, R0, RZ\nEXIT", VS_HDR), P.VERTEX), r"OUT.EMIT .*not translated"),
        (_req(prog("vertex", "IADD R0.CC, R0, R1\nEXIT", VS_HDR), P.VERTEX), r"64-bit integer arithmetic"),
        (
            _req(vh + bytes(8) + (0xE003FF880FF7FF01 | 3 << 52).to_bytes(8, "little") + bytes(16), P.VERTEX),
            r"offset 0x58: word 0xe033ff880ff7ff01 refused",
        ),
    ]
    assert_invalid_and_serving(stub, ch, cases)
    assert stub.GetStats(P.StatsRequest()).errors == len(cases)
    assert stub.Translate(_req(prog("vertex", VS, VS_HDR), P.VERTEX), timeout=60).spirv
