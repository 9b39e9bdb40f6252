"""Graphics-stage instructions drawn on lavapipe and compared exactly with numpy (issue 31's
"executed exactly" column): KILL (SM86) and KIL (SM53) discarding the pixels a comparison picks,
SM53's ALD / AST in a pass-through vertex program, and PIXLD.COVMASK (the pixel's coverage mask:
one sample per pixel, so 1 in every covered pixel).  Every program is nvdisasm's text
(``test_listings_are_what_nvdisasm_reads``); each draw records its programs for
shader_svc/README.md's table (``isa_coverage.exact_program``) when it equals the reference."""

from __future__ import annotations

import numpy as np
import pytest

import listings
from isa_coverage import exact_program
from quad_draw import (
    BYTE_SCALES,
    BYTES_TO_RGBA53,
    BYTES_TO_RGBA86,
    FS53_HDR,
    FS_HDR,
    VS_PASS,
    VS_PASS_HDR,
    H,
    W,
    fragment53,
    quad,
    spirv,
)
from shader_svc import sph
from shader_svc import translate as tr
from shader_svc.sm53.assemble import assemble_program as asm53
from spirv_checks import spirv_val

# u > 0.5 (pixels x >= 16 of 32: no pixel centre on the edge) killed; the others magenta
FS86_KILL = """
IPA.PASS R0, a[0x80]
FSETP.GT.AND P0, PT, R0, 0.5, PT
@P0 KILL
MOV R0, 0x3f800000
MOV R1, RZ
MOV R2, 0x3f800000
MOV R3, 0x3f800000
EXIT
"""
# the same on SM53 (perspective-correct u from the compilers' 1/w idiom), killing v < 0.25 too
FS53_KIL = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
FSETP.GT.AND P0, PT, R0, 0.5, PT
@P0 KIL
FSETP.LT.AND P1, PT, R1, 0.25, PT
@P1 KIL
MOV32I R0, 0x3f800000
MOV R1, RZ
MOV32I R2, 0x3f800000
MOV32I R3, 0x3f800000
EXIT
"""
# SM53 pass-through vertex program: position and uv as they come (one ALD.128, two ALD.64 and
# their stores, so both sizes are read and written)
VS53_PASS = """
ALD.128 R0, a[0x80]
ALD.64 R4, a[0x90]
ALD.64 R6, a[0x98]
AST.128 a[0x70], R0
AST.64 a[0x80], R4
AST.64 a[0x88], R6
EXIT
"""
VS53_PASS_HDR = dict(inputs=set(range(0x80, 0xA0, 4)), outputs=set(range(0x70, 0x90, 4)))
# PIXLD.COVMASK's four bytes as R, G, B, A: byte k scaled by c[0x0][0x0] = 1/255 (bytes 0, 2)
# or c[0x0][0x4] = 1/(255 * 256) (bytes 1, 3, left in place), each exactly its unorm8
FS86_PIXLD = (
    """
PIXLD.COVMASK R4
LOP3.LUT R8, R4, 0xff, RZ, 0xc0, !PT
LOP3.LUT R9, R4, 0xff00, RZ, 0xc0, !PT
SHF.R.U32.HI R10, RZ, 0x10, R4
LOP3.LUT R10, R10, 0xff, RZ, 0xc0, !PT
SHF.R.U32.HI R11, RZ, 0x10, R4
LOP3.LUT R11, R11, 0xff00, RZ, 0xc0, !PT
"""
    + BYTES_TO_RGBA86
)
FS53_PIXLD = (
    """
PIXLD.COVMASK R4, [RZ]
LOP32I.AND R8, R4, 0xff
LOP32I.AND R9, R4, 0xff00
SHR.U32 R10, R4, 0x10
LOP32I.AND R10, R10, 0xff
SHR.U32 R11, R4, 0x10
LOP32I.AND R11, R11, 0xff00
"""
    + BYTES_TO_RGBA53
)
INV = {0: BYTE_SCALES + bytes(56)}
MAGENTA = (255, 0, 255, 255)
CLEAR = (0.0, 0.5, 0.0, 1.0)  # green (unorm 128): what a killed pixel keeps


def vertex53(text: str, hdr: dict) -> bytes:
    h = sph.build("vertex", version=3, **hdr)
    return tr.translate(tr.make_program(53, 2, h + asm53(text, base_addr=len(h))))


def _want(killed: np.ndarray) -> np.ndarray:
    want = np.broadcast_to(np.array(MAGENTA), (H, W, 4)).copy()
    want[killed] = (0, 128, 0, 255)
    return want


def test_sm86_kill_discards_the_pixels_its_predicate_picks(gpu, tmp_path):
    fs = spirv("fragment", FS86_KILL, dict(FS_HDR, kills_pixels=True))
    spirv_val(fs, tmp_path, "kill86")
    xs = np.arange(W)
    killed = np.broadcast_to((xs + 0.5) / W > 0.5, (H, W))
    with exact_program("test_gfx_exact::FS86_KILL", (86, FS86_KILL), (86, VS_PASS)):
        img = gpu.draw(spirv("vertex", VS_PASS, VS_PASS_HDR), fs, quad(), (W, H), clear=CLEAR).astype(int)
        assert killed.any() and not killed.all()
        assert (img == _want(killed)).all(), np.argwhere((img != _want(killed)).any(axis=2))[:4]


def test_sm53_ald_ast_and_kil_match_numpy(gpu, tmp_path):
    """SM53 end to end: the vertex program's ALD/AST place the quad and pass uv; KIL drops the
    pixels with u > 0.5 or v < 0.25 (v's rows y < 4 of 16: again no centre on an edge)."""
    vs = vertex53(VS53_PASS, VS53_PASS_HDR)
    fs = fragment53(FS53_KIL, dict(FS53_HDR, kills_pixels=True))
    spirv_val(vs, tmp_path, "vs53")
    spirv_val(fs, tmp_path, "kil53")
    u = (np.arange(W) + 0.5) / W
    v = (np.arange(H) + 0.5) / H
    killed = (u[None, :] > 0.5) | (v[:, None] < 0.25)
    with exact_program("test_gfx_exact::SM53_PASS_KIL", (53, VS53_PASS), (53, FS53_KIL)):
        img = gpu.draw(vs, fs, quad(), (W, H), clear=CLEAR).astype(int)
        assert (img == _want(killed)).all(), np.argwhere((img != _want(killed)).any(axis=2))[:4]


def test_pixld_covmask_reads_the_coverage_mask(gpu, tmp_path):
    """One sample a pixel (the harness's single-sampled target), every pixel of the quad covered:
    the mask is 1, bytes (1, 0, 0, 0) in every pixel, on both architectures."""
    fs86 = spirv("fragment", FS86_PIXLD, FS_HDR)
    fs53 = fragment53(FS53_PIXLD)
    spirv_val(fs86, tmp_path, "pixld86")
    spirv_val(fs53, tmp_path, "pixld53")
    vs = spirv("vertex", VS_PASS, VS_PASS_HDR)
    with exact_program("test_gfx_exact::FS_PIXLD", (86, FS86_PIXLD), (53, FS53_PIXLD), (86, VS_PASS)):
        for fs in (fs86, fs53):
            img = gpu.draw(vs, fs, quad(), (W, H), uniforms=INV).astype(int)
            assert (img == (1, 0, 0, 0)).all(), np.unique(img.reshape(-1, 4), axis=0)[:4]


@pytest.mark.parametrize(
    "isa, line, why",
    [
        (86, "PIXLD.CENTROID_OFFSET R4", "only PIXLD.COVMASK"),
        (86, "PIXLD.INNER_COVERAGE R4", "only PIXLD.COVMASK"),
        (86, "PIXLD R4", "only PIXLD.COVMASK"),
        (86, "PIXLD.COVMASK R4, P0", "predicate destination"),
        (53, "PIXLD.COVERED R4, [RZ]", "only PIXLD.COVMASK"),
        (53, "PIXLD.COVMASK R4, [R2]", "address other than [RZ]"),
        (53, "PIXLD.COVMASK R4, [0x4]", "address other than [RZ]"),
        (53, "PIXLD.COVMASK R4, P1, [RZ]", "predicate destination"),
    ],
)
def test_other_pixld_forms_are_refused_by_name(isa, line, why):
    from shader_svc.lower.base import TranslateError

    with pytest.raises(TranslateError, match=why.replace("[", r"\[").replace("]", r"\]")):
        if isa == 86:
            spirv("fragment", line + "\nEXIT\n", FS_HDR)
        else:
            fragment53(line + "\nEXIT\n")


def test_pixld_outside_a_fragment_program_is_refused():
    from shader_svc.lower.base import TranslateError

    with pytest.raises(TranslateError, match="PIXLD outside a fragment program"):
        spirv("vertex", "PIXLD.COVMASK R4\n" + VS_PASS, VS_PASS_HDR)


# --- AL2P and register-addressed attributes (SM53) ------------------------------------------------
# c[0x0][0x0] = k (0 or 0x10) picks the input (attribute 1 or 2: AL2P R9 = phys(a[k + 0x90])) and
# the varying it goes to (0 or 1: AL2P.O R10 = phys(a[k + 0x80])); both varyings are zeroed
# first, so the draw shows which word each register address reached.
VS53_AL2P = """
ALD.128 R0, a[0x80]
MOV R8, c[0x0][0x0]
AL2P R9, R8, 0x90
ALD.PHYS.128 R4, a[R9]
AL2P.O R10, R8, 0x80
AST.128 a[0x70], R0
AST.128 a[0x80], RZ
AST.128 a[0x90], RZ
AST.PHYS.64 a[R10], R4
IADD32I R11, R10, 0x8
AST.PHYS a[R11], R6
EXIT
"""
VS53_AL2P_HDR = dict(inputs=set(range(0x80, 0xB0, 4)), outputs=set(range(0x70, 0xA0, 4)))
FS53_FLAT2 = """
IPA.CONSTANT R0, a[0x80], RZ
IPA.CONSTANT R1, a[0x84], RZ
IPA.CONSTANT R2, a[0x98], RZ
IPA.CONSTANT R3, a[0x9c], RZ
EXIT
"""
FS53_FLAT2_HDR = dict(inputs={a: "constant" for a in (0x80, 0x84, 0x98, 0x9C)}, targets=(0xF,))


def _al2p_ref(k: int, inputs: dict[int, float]) -> tuple[int, ...]:
    """VS53_AL2P's varyings, word by word in the a[] address space (AL2P keeps the logical
    address: module docstring of lower/gfx_indexed.py), as FS53_FLAT2's unorm8 colour."""
    out = dict.fromkeys(range(0x80, 0xA0, 4), 0.0)
    r9, r10 = k + 0x90, k + 0x80
    r4_7 = [inputs[r9 + 4 * i] for i in range(4)]
    out[r10], out[r10 + 4] = r4_7[0], r4_7[1]
    out[r10 + 8] = r4_7[2]
    return tuple(round(out[a] * 255) for a in (0x80, 0x84, 0x98, 0x9C))


@pytest.mark.parametrize("k", [0, 0x10])
def test_sm53_al2p_addresses_attributes_by_register(gpu, tmp_path, k):
    """The input attribute and the varying picked by a run-time register (c[0x0][0x0]) through
    AL2P: attribute 1 -> varying 0 (k = 0), attribute 2 -> varying 1 (k = 0x10), words x, y by
    one AST.PHYS.64 and z by a single-word AST.PHYS at the address + 8."""
    import struct

    vs = vertex53(VS53_AL2P, VS53_AL2P_HDR)
    fs = fragment53(FS53_FLAT2, FS53_FLAT2_HDR)
    spirv_val(vs, tmp_path, "al2p53")
    verts = quad()
    verts[:, 1] = np.array([10, 200, 77, 150]) / 255
    verts[:, 2] = np.array([30, 60, 90, 120]) / 255
    inputs = {0x80 + 4 * i: float(verts[0].reshape(-1)[i]) for i in range(16)}
    want = _al2p_ref(k, inputs)
    assert want == ((10, 200, 0, 0) if k == 0 else (0, 0, 90, 0))  # (the two cases really differ)
    with exact_program(f"test_gfx_exact::VS53_AL2P[{k}]", (53, VS53_AL2P), (53, FS53_FLAT2)):
        img = gpu.draw(vs, fs, verts.astype(np.float32), (W, H), uniforms={0: struct.pack("<I", k) + bytes(60)}).astype(int)
        assert (img == want).all(), np.unique(img.reshape(-1, 4), axis=0)[:4]


# SM86: ALD.PHYS / AST.PHYS move one word each (nvdisasm prints no size with .PHYS)
VS86_AL2P = """
ALD.128 R0, a[0x80]
MOV R8, c[0x0][0x0]
AL2P R9, R8, 0x90
ALD.PHYS R4, a[R9]
IADD3 R12, R9, 0x4, RZ
ALD.PHYS R5, a[R12]
AL2P.O R10, R8, 0x80
MOV R12, RZ
MOV R13, RZ
MOV R14, RZ
MOV R15, RZ
AST.128 a[0x70], R0
AST.128 a[0x80], R12
AST.128 a[0x90], R12
AST.PHYS a[R10], R4
IADD3 R11, R10, 0x4, RZ
AST.PHYS a[R11], R5
EXIT
"""
FS86_FLAT2 = """
IPA.CONSTANT R0, a[0x80]
IPA.CONSTANT R1, a[0x84]
IPA.CONSTANT R2, a[0x90]
IPA.CONSTANT R3, a[0x94]
EXIT
"""
FS86_FLAT2_HDR = dict(inputs={a: "constant" for a in (0x80, 0x84, 0x90, 0x94)}, targets=(0xF,))


@pytest.mark.parametrize("k", [0, 0x10])
def test_sm86_al2p_addresses_attributes_by_register(gpu, tmp_path, k):
    """SM86's single-word forms: x, y of attribute 1 (k = 0) or 2 (k = 0x10) to varying 0 or 1."""
    import struct

    vs = spirv("vertex", VS86_AL2P, VS53_AL2P_HDR)
    fs = spirv("fragment", FS86_FLAT2, FS86_FLAT2_HDR)
    spirv_val(vs, tmp_path, "al2p86")
    verts = quad()
    verts[:, 1] = np.array([10, 200, 77, 150]) / 255
    verts[:, 2] = np.array([30, 60, 90, 120]) / 255
    inputs = {0x80 + 4 * i: float(verts[0].reshape(-1)[i]) for i in range(16)}
    out = dict.fromkeys(range(0x80, 0xA0, 4), 0.0)
    out[k + 0x80], out[k + 0x84] = inputs[k + 0x90], inputs[k + 0x94]
    want = tuple(round(out[a] * 255) for a in (0x80, 0x84, 0x90, 0x94))
    with exact_program(f"test_gfx_exact::VS86_AL2P[{k}]", (86, VS86_AL2P), (86, FS86_FLAT2)):
        img = gpu.draw(vs, fs, verts.astype(np.float32), (W, H), uniforms={0: struct.pack("<I", k) + bytes(60)}).astype(int)
        assert (img == want).all(), np.unique(img.reshape(-1, 4), axis=0)[:4]


@pytest.mark.parametrize(
    "line, why",
    [
        ("AL2P.64 R9, R8, 0x90", "only AL2P of one word"),
        ("AL2P P0, R9, R8, 0x90", "only AL2P of one word"),
        ("ALD.O.PHYS R4, a[R9]", "current vertex"),
        ("ALD.PHYS R4, a[R9], R2", "current vertex"),
        ((86, "AL2P.64 R9, R8, 0x90"), "only AL2P of one word"),
        ((86, "ALD.O.PHYS R4, a[R9]"), "current vertex"),
    ],
)
def test_other_al2p_forms_are_refused_by_name(line, why):
    from shader_svc.lower.base import TranslateError

    isa, line = line if isinstance(line, tuple) else (53, line)
    with pytest.raises(TranslateError, match=why):
        if isa == 86:
            spirv("vertex", line + "\n" + VS_PASS, VS_PASS_HDR)
        else:
            vertex53(line + "\n" + VS53_PASS, VS53_PASS_HDR)


def test_al2p_outside_a_vertex_program_is_refused():
    from shader_svc.lower.base import TranslateError

    with pytest.raises(TranslateError, match="vertex programs only"):
        fragment53("AL2P R9, R8, 0x90\nEXIT\n")


def test_listings_are_what_nvdisasm_reads(nv_tools):
    listings.check_sm86([FS86_KILL, VS_PASS, FS86_PIXLD, VS86_AL2P, FS86_FLAT2])
    listings.check_sm53([FS53_KIL, VS53_PASS, FS53_PIXLD, VS53_AL2P, FS53_FLAT2])
