"""Geometry programs (SM86 and SM53) written as nvdisasm prints them, translated to SPIR-V
geometry shaders (spirv-val clean) and drawn on lavapipe between a translated vertex and
fragment program: points become squares, triangles are drawn twice, each frame equal to a numpy
reference on every pixel whose centre is not on an edge.  Bad geometry programs are refused by
name (output topology, output vertex count, invocations, output components, stream, stage)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from geometry_programs import (
    INVOCATIONS86,
    PRIMID86,
    PRIMID_HDR,
    INVOCATIONS_GEO,
    FS_QUAD53,
    VS_PASS53,
    POINT_QUAD53,
    POINT_QUAD86,
    POINT_QUAD_GEO,
    POINT_QUAD_HDR,
    TRI_TWICE53,
    TRI_TWICE86,
    TRI_TWICE_GEO,
    TRI_TWICE_HDR,
    header,
    points_to_quads,
)
import isa_coverage
from listings import check_sm53, check_sm86
from quad_draw import VS_PASS, VS_PASS_HDR, spirv
from shader_svc import translate as tr
from shader_svc.request import ProgramError
from shader_svc.sm53.assemble import assemble_program as asm53
from shader_svc.sm86.assemble import assemble_program as asm86
from shader_svc.sph import HeaderError
from spirv_checks import spirv_val
from nxrecomp.common.errors import NxError

GS_POINTS, GS_LINES, GS_TRIANGLES = 4, 5, 6  # shader.proto Stage
# fragment: (r, g) of varying 0, v of varying 1, alpha 1
FS_QUAD = """IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R2, a[0x94]
MOV R3, 0x3f800000
EXIT
"""
FS_QUAD_HDR = dict(inputs={0x80: "perspective", 0x84: "perspective", 0x94: "perspective"}, targets=(0xF,))
FS_FLAT = """IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
IPA.PASS R2, a[0x88]
MOV R3, 0x3f800000
EXIT
"""
FS_FLAT_HDR = dict(inputs={0x80: "perspective", 0x84: "perspective", 0x88: "perspective"}, targets=(0xF,))


def geometry(arch: int, text: str, geo=POINT_QUAD_GEO, hdr=POINT_QUAD_HDR, stage: int = GS_POINTS) -> bytes:
    """The SPIR-V of a geometry program text of ``arch`` (its header: version 4 on SM86, 3 on SM53)."""
    h = header(geo, hdr, version=4 if arch == 86 else 3)
    code = h + (asm86(text, base=len(h)) if arch == 86 else asm53(text, base_addr=len(h)))
    return tr.translate(tr.make_program(arch, stage, code))


def unorm8(v: np.ndarray) -> np.ndarray:
    return np.round(np.clip(v, 0, 1) * 255).astype(int)


def test_geometry_programs_are_what_nvdisasm_reads():
    check_sm86([POINT_QUAD86, TRI_TWICE86, INVOCATIONS86, PRIMID86, FS_QUAD, FS_FLAT])
    check_sm53([POINT_QUAD53, TRI_TWICE53, VS_PASS53, FS_QUAD53])


@pytest.mark.parametrize("arch", [86, 53])
def test_points_become_squares(gpu, tmp_path, arch):
    gs = geometry(arch, POINT_QUAD86 if arch == 86 else POINT_QUAD53)
    spirv_val(gs, tmp_path, f"gs{arch}")
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    size, half = (32, 32), 0.25
    # centres on multiples of 1/16 clip: the squares' edges fall between pixel centres
    pts = np.array([[-0.5, -0.5], [0.5, -0.5], [0.0, 0.5], [0.625, 0.625], [-0.75, 0.25]])
    cols = np.random.default_rng(3).uniform(0.1, 0.9, (len(pts), 2))
    verts = np.zeros((len(pts), 4, 4), np.float32)
    verts[:, 0] = np.c_[pts, np.zeros(len(pts)), np.ones(len(pts))]
    verts[:, 1, :2] = cols
    img = gpu.draw(
        vs,
        fs,
        verts,
        size,
        uniforms={0: struct.pack("<f", half) + bytes(60)},
        topology=0,  # VK_PRIMITIVE_TOPOLOGY_POINT_LIST
        geometry_spirv=gs,
    ).astype(int)
    covered, ambiguous, ref = points_to_quads(pts, cols, half, size)
    sure = ~ambiguous
    progs = [(arch, POINT_QUAD86 if arch == 86 else POINT_QUAD53), (86, VS_PASS), (86, FS_QUAD)]
    with isa_coverage.exact_program(f"test_geometry::points_become_squares_{arch}", *progs):
        assert covered.sum() > 250 and (~covered & sure).sum() > 300  # both cases tested
        want = unorm8(ref)
        want[~covered] = 0
        diff = np.abs(img - want)[sure]
        assert diff.max() <= 1, (diff.max(), np.argwhere(np.abs(img - want).max(axis=2) > 1)[:5])


def test_invocations_each_draw_their_square(gpu, tmp_path):
    """Two invocations per point (header threads per input primitive 2: ``Invocations``), each
    moving its square by SR_INVOCATION_ID * c[0x0][0x4]."""
    gs = geometry(86, INVOCATIONS86, INVOCATIONS_GEO)
    spirv_val(gs, tmp_path, "gs")
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    size, half, shift = (32, 32), 0.25, 1.0
    pts = np.array([[-0.75, -0.5], [-0.5, 0.5]])
    cols = np.array([[0.3, 0.6], [0.8, 0.1]])
    verts = np.zeros((2, 4, 4), np.float32)
    verts[:, 0] = np.c_[pts, np.zeros(2), np.ones(2)]
    verts[:, 1, :2] = cols
    uni = struct.pack("<2f", half, shift) + bytes(56)
    img = gpu.draw(vs, fs, verts, size, uniforms={0: uni}, topology=0, geometry_spirv=gs).astype(int)
    both = np.concatenate([pts, pts + [shift, 0.0]])
    covered, ambiguous, ref = points_to_quads(both, np.concatenate([cols, cols]), half, size)
    sure = ~ambiguous
    with isa_coverage.exact_program("test_geometry::invocations", (86, INVOCATIONS86), (86, VS_PASS), (86, FS_QUAD)):
        assert covered.sum() == 4 * 64  # four 8x8 squares, none overlapping
        want = unorm8(ref)
        want[~covered] = 0
        diff = np.abs(img - want)[sure]
        assert diff.max() <= 1, (diff.max(), np.argwhere(np.abs(img - want).max(axis=2) > 1)[:5])


def test_primitive_id_read_in_the_geometry_stage(gpu, tmp_path):
    """a[0x60] (PrimitiveId): each point's square red = its number / 4."""
    gs = geometry(86, PRIMID86, POINT_QUAD_GEO, PRIMID_HDR)
    spirv_val(gs, tmp_path, "gs")
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_QUAD, FS_QUAD_HDR)
    size, half = (32, 32), 0.25
    pts = np.array([[-0.5, -0.5], [0.5, -0.5], [0.0, 0.5], [-0.75, 0.25]])
    cols = np.random.default_rng(9).uniform(0.1, 0.9, (4, 2))
    verts = np.zeros((4, 4, 4), np.float32)
    verts[:, 0] = np.c_[pts, np.zeros(4), np.ones(4)]
    verts[:, 1, :2] = cols
    img = gpu.draw(vs, fs, verts, size, uniforms={0: struct.pack("<f", half) + bytes(60)}, topology=0, geometry_spirv=gs)
    cols[:, 0] = np.arange(4) * 0.25  # what the program writes instead of the point's red
    covered, ambiguous, ref = points_to_quads(pts, cols, half, size)
    with isa_coverage.exact_program("test_geometry::primitive_id", (86, PRIMID86), (86, VS_PASS), (86, FS_QUAD)):
        want = unorm8(ref)
        want[~covered] = 0
        assert covered.sum() > 200
        assert np.abs(img.astype(int) - want)[~ambiguous].max() <= 1


def _rasterise(tris: np.ndarray, cols: np.ndarray, size: tuple[int, int]):
    """Covered / ambiguous / colour of flat-coloured triangles (clip x, y with w = 1)."""
    w, h = size
    ys, xs = np.mgrid[0:h, 0:w] + 0.5
    covered, ambiguous, out = np.zeros((h, w), bool), np.zeros((h, w), bool), np.zeros((h, w, 3))
    for t, c in zip(tris, cols):
        sx, sy = (t[:, 0] + 1) * w / 2, (t[:, 1] + 1) * h / 2
        area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0])
        lam = np.stack(
            [
                (
                    (sx[(i + 2) % 3] - sx[(i + 1) % 3]) * (ys - sy[(i + 1) % 3])
                    - (sy[(i + 2) % 3] - sy[(i + 1) % 3]) * (xs - sx[(i + 1) % 3])
                )
                / area
                for i in range(3)
            ]
        )
        inside = (lam > 1e-4).all(axis=0)
        ambiguous |= (np.abs(lam) <= 1e-4).any(axis=0) & (lam > -1e-4).all(axis=0)
        out[inside] = c
        covered |= inside
    return covered, ambiguous, out


@pytest.mark.parametrize("arch", [86, 53])
def test_triangles_drawn_twice(gpu, tmp_path, arch):
    """Every vertex of the input triangle read through ISBERD (indices 0, 1, 2), two strips."""
    text = TRI_TWICE86 if arch == 86 else TRI_TWICE53
    gs = geometry(arch, text, TRI_TWICE_GEO, TRI_TWICE_HDR, GS_TRIANGLES)
    spirv_val(gs, tmp_path, "gs")
    vs, fs = spirv("vertex", VS_PASS, VS_PASS_HDR), spirv("fragment", FS_FLAT, FS_FLAT_HDR)
    size, shift = (40, 24), 1.0
    tris = np.array([[[-0.95, -0.9], [-0.1, -0.7], [-0.6, 0.85]], [[-0.3, 0.9], [-0.05, -0.2], [-0.9, 0.3]]])
    cols = np.array([[0.8, 0.2, 0.4], [0.1, 0.7, 0.3]])
    verts = np.zeros((6, 4, 4), np.float32)
    verts[:, 0] = np.c_[tris.reshape(6, 2), np.zeros(6), np.ones(6)]
    verts[:, 1, :3] = np.repeat(cols, 3, axis=0)
    img = gpu.draw(vs, fs, verts, size, uniforms={0: struct.pack("<2f", 0.0, shift) + bytes(56)}, geometry_spirv=gs).astype(int)
    moved = tris + np.array([shift, 0.0])
    covered, ambiguous, ref = _rasterise(np.concatenate([tris, moved]), np.concatenate([cols, cols]), size)
    sure = ~ambiguous
    progs = [(arch, text), (86, VS_PASS), (86, FS_FLAT)]
    with isa_coverage.exact_program(f"test_geometry::triangles_drawn_twice_{arch}", *progs):
        assert covered[:, : size[0] // 2].sum() > 100 and covered[:, size[0] // 2 :].sum() > 100  # both copies
        want = np.concatenate([unorm8(ref), np.full(ref.shape[:2] + (1,), 255)], axis=2)
        want[~covered] = 0
        diff = np.abs(img - want)[sure]
        assert diff.max() <= 1, (diff.max(), np.argwhere(np.abs(img - want).max(axis=2) > 1)[:5])


def test_input_primitive_is_part_of_the_key_and_the_module():
    h = header(POINT_QUAD_GEO, POINT_QUAD_HDR)
    code = h + asm86(POINT_QUAD86, base=len(h))
    a, b = tr.make_program(86, GS_POINTS, code), tr.make_program(86, GS_LINES, code)
    assert a.key() != b.key()
    sa, sb = tr.translate(a), tr.translate(b)
    assert sa != sb  # InputPoints vs InputLines, and SR_INVOCATION_INFO's vertex count


BAD = [
    # (header geometry fields, header dict, text, stage, what the error names)
    ((3, 4, 1), POINT_QUAD_HDR, "EXIT", GS_POINTS, r"word 3 .*output topology 3 unknown"),
    ((7, 2000, 1), POINT_QUAD_HDR, "EXIT", GS_POINTS, r"word 4 .*max output vertex count 2000"),
    ((7, 0, 1), POINT_QUAD_HDR, "EXIT", GS_POINTS, r"max output vertex count 0"),
    ((7, 4, 64), POINT_QUAD_HDR, "EXIT", GS_POINTS, r"word 2 .*threads per input primitive 64"),
    # 12 output components (Position + 2 varyings) x 100 vertices > 1024
    ((7, 100, 1), POINT_QUAD_HDR, POINT_QUAD86, GS_POINTS, r"1200 is more than Vulkan's guaranteed 1024"),
    ((7, 4, 1), POINT_QUAD_HDR, "OUT.EMIT R1, R0, 0x1\nEXIT", GS_POINTS, r"OUT.EMIT R1, R0, 0x1: only stream 0"),
    ((7, 4, 1), POINT_QUAD_HDR, "ISBERD.O R1, [R0]\nEXIT", GS_POINTS, r"ISBERD.O R1, \[R0\]: only the plain"),
    (
        (7, 4, 1),
        POINT_QUAD_HDR,
        "ALD R0, a[0xa0], R1\nEXIT",
        GS_POINTS,
        r"ALD R0, a\[0xa0\], R1: reads a\[0xa0\], which the shader program header does not declare",
    ),
    ((7, 4, 1), POINT_QUAD_HDR, "S2R R0, SR_TID.X\nEXIT", GS_POINTS, r"S2R R0, SR_TID.X.*not translated"),
]


@pytest.mark.parametrize("geo, hdr, text, stage, want", BAD, ids=[b[4][:30] for b in BAD])
def test_bad_geometry_programs_refused_by_name(geo, hdr, text, stage, want):
    h = header(geo, hdr)
    with pytest.raises(NxError, match=want):
        tr.translate(tr.make_program(86, stage, h + asm86(text, base=len(h))))


def test_passthrough_geometry_header_refused_by_name():
    h = bytearray(header(POINT_QUAD_GEO, POINT_QUAD_HDR))
    h[3] |= 1  # word 0 bit 24: passthrough (Mesa NAK's sph.rs)
    with pytest.raises(HeaderError, match=r"offset 0x0: .*passthrough geometry program \(bit 24\)"):
        tr.translate(tr.make_program(86, GS_POINTS, bytes(h) + asm86("EXIT", base=len(h))))


def test_geometry_in_other_stages_refused_by_name():
    from quad_draw import program

    with pytest.raises(NxError, match=r"OUT.EMIT R1, R0, RZ: OUT exists in geometry programs only"):
        tr.translate(tr.make_program(86, 2, program("vertex", "OUT.EMIT R1, R0, RZ\nEXIT", VS_PASS_HDR)))
    with pytest.raises(NxError, match=r"ISBERD R1, \[R0\]: ISBERD exists in geometry programs only"):
        tr.translate(tr.make_program(86, 2, program("vertex", "ISBERD R1, [R0]\nEXIT", VS_PASS_HDR)))
    h = header(POINT_QUAD_GEO, POINT_QUAD_HDR)
    with pytest.raises(HeaderError, match=r"header is for a geometry program, the request says vertex"):
        tr.translate(tr.make_program(86, 2, h + asm86("EXIT", base=len(h))))
    with pytest.raises(ProgramError, match=r"unknown stage 9"):
        tr.make_program(86, 9, h)
    # SM53: OUT in a vertex program
    from shader_svc import sph

    vh = sph.build("vertex", version=3, **VS_PASS_HDR)
    with pytest.raises(NxError, match=r"OUT.EMIT R1, R0, RZ: not translated in a vertex program"):
        tr.translate(tr.make_program(53, 2, vh + asm53("OUT.EMIT R1, R0, RZ\nEXIT", base_addr=len(vh))))
