"""Geometry programs for the tests, in SM86 and SM53 text as nvdisasm prints it, with their
shader program headers, and a numpy reference of what they draw.

The programs read their input vertices the way NAK's code does (Mesa ``nak_nir_isberd``):
``S2R SR_INVOCATION_INFO``, (byte 0) * (byte 2) + vertex, ``ISBERD``, then ``ALD`` with that
vertex register; they write every output before each ``OUT.EMIT`` through the handle register
OUT returns.

- ``POINT_QUAD``: each input point becomes a square of half-size c[0x0][0x0] (clip units): a
  four-vertex triangle strip with the point's colour (varying 0) and the corner's (u, v) in
  varying 1 — u = 0 left, 1 right; v = 0 at the lower y, 1 at the higher.
- ``TRI_TWICE``: each input triangle is emitted twice, once as it is and once moved by
  (c[0x0][0x4], 0), varying 0 passed on per vertex; two strips, cut after three vertices.
"""

from __future__ import annotations

import numpy as np

from shader_svc import sph

POS = {0x70, 0x74, 0x78, 0x7C}
GENERIC0 = {0x80, 0x84, 0x88, 0x8C}
GENERIC1 = {0x90, 0x94, 0x98, 0x9C}
# header geometry fields: (output topology code, max output vertices, threads per input primitive)
POINT_QUAD_GEO = (7, 4, 1)  # triangle strip (Mesa NAK: 7), 4 vertices
TRI_TWICE_GEO = (7, 6, 1)
POINT_QUAD_HDR = dict(inputs=POS | GENERIC0, outputs=POS | GENERIC0 | GENERIC1)
TRI_TWICE_HDR = dict(inputs=POS | GENERIC0, outputs=POS | GENERIC0)


def _corner86(dx: str, dy: str, u: str, v: str, last: bool) -> str:
    return f"""FADD R16, R8, {dx}c[0x0][0x0]
FADD R17, R9, {dy}c[0x0][0x0]
MOV R20, {u}
MOV R21, {v}
AST.128 a[0x70], R16, R5
AST.128 a[0x80], R12, R5
AST.128 a[0x90], R20, R5
OUT.{"EMIT_THEN_CUT" if last else "EMIT"} R5, R5, RZ
"""


ONE = "0x3f800000"
POINT_QUAD86 = (
    """S2R R0, SR_INVOCATION_INFO
SHF.R.U32.HI R1, RZ, 0x10, R0
LOP3.LUT R1, R1, 0xff, RZ, 0xc0, !PT
LOP3.LUT R0, R0, 0xff, RZ, 0xc0, !PT
IMAD R3, R0, R1, RZ
ISBERD R4, [R3]
ALD.128 R8, a[0x70], R4
ALD.128 R12, a[0x80], R4
MOV R5, RZ
MOV R18, R10
MOV R19, R11
MOV R22, RZ
MOV R23, 0x3f800000
"""
    + _corner86("-", "-", "RZ", "RZ", False)
    + _corner86("", "-", ONE, "RZ", False)
    + _corner86("-", "", "RZ", ONE, False)
    + _corner86("", "", ONE, ONE, True)
    + "EXIT\n"
)


# POINT_QUAD86 run twice per point (threads per input primitive 2): invocation i's square moved by
# i * c[0x0][0x4] in x (SR_INVOCATION_ID, the Invocations mode)
INVOCATIONS_GEO = (7, 4, 2)
INVOCATIONS86 = POINT_QUAD86.replace(
    "ALD.128 R12, a[0x80], R4\n",
    "ALD.128 R12, a[0x80], R4\nS2R R6, SR_INVOCATION_ID\nI2FP.F32.U32 R6, R6\nFFMA R8, R6, c[0x0][0x4], R8\n",
)


# POINT_QUAD86 with red = the primitive's number (a[0x60], PrimitiveId) / 4
PRIMID_HDR = dict(inputs=POS | GENERIC0 | {0x60}, outputs=POS | GENERIC0 | GENERIC1)
PRIMID86 = POINT_QUAD86.replace(
    "ALD.128 R12, a[0x80], R4\n",
    "ALD.128 R12, a[0x80], R4\nALD R6, a[0x60]\nI2FP.F32.U32 R6, R6\nFMUL R12, R6, 0.25\n",
)


def _copy86(k: int, moved: bool) -> str:
    return f"""IADD3 R7, R3, {k:#x}, RZ
ISBERD R4, [R7]
ALD.128 R8, a[0x70], R4
ALD.128 R12, a[0x80], R4
{"FADD R8, R8, c[0x0][0x4]" if moved else "MOV R8, R8"}
AST.128 a[0x70], R8, R5
AST.128 a[0x80], R12, R5
OUT.EMIT R5, R5, RZ
"""


# vertex k of the primitive (k = 0, 1, 2: the index NAK's code computes, then ISBERD), twice
TRI_TWICE86 = (
    """S2R R0, SR_INVOCATION_INFO
SHF.R.U32.HI R1, RZ, 0x10, R0
LOP3.LUT R1, R1, 0xff, RZ, 0xc0, !PT
LOP3.LUT R0, R0, 0xff, RZ, 0xc0, !PT
IMAD R3, R0, R1, RZ
MOV R5, RZ
"""
    + "".join(_copy86(k, False) for k in range(3))
    + "OUT.CUT R5, R5, RZ\n"
    + "".join(_copy86(k, True) for k in range(3))
    + "OUT.CUT R5, R5, RZ\nEXIT\n"
)


def _copy53(k: int, moved: bool) -> str:
    return f"""IADD R7, R3, {k:#x}
ISBERD R4, [R7]
ALD.128 R8, a[0x70], R4
ALD.128 R12, a[0x80], R4
{"FADD R8, R8, c[0x0][0x4]" if moved else "MOV R8, R8"}
AST.128 a[0x70], R8, R5
AST.128 a[0x80], R12, R5
OUT.EMIT R5, R5, RZ
"""


TRI_TWICE53 = (
    """S2R R0, SR_INVOCATION_INFO
SHR.U32 R1, R0, 0x10
LOP.AND R1, R1, 0xff
LOP.AND R0, R0, 0xff
XMAD R3, R0, R1, RZ
MOV R5, RZ
"""
    + "".join(_copy53(k, False) for k in range(3))
    + "OUT.CUT R5, R5, RZ\n"
    + "".join(_copy53(k, True) for k in range(3))
    + "OUT.CUT R5, R5, RZ\nEXIT\n"
)


def _corner53(dx: str, dy: str, u: str, v: str, last: bool) -> str:
    return f"""FADD R16, R8, {dx}c[0x0][0x0]
FADD R17, R9, {dy}c[0x0][0x0]
MOV32I R20, {u}
MOV32I R21, {v}
AST a[0x70], R16, R5
AST a[0x74], R17, R5
AST a[0x78], R18, R5
AST a[0x7c], R19, R5
AST.128 a[0x80], R12, R5
AST.128 a[0x90], R20, R5
OUT.{"EMIT_THEN_CUT" if last else "EMIT"} R5, R5, RZ
"""


POINT_QUAD53 = (
    """S2R R0, SR_INVOCATION_INFO
SHR.U32 R1, R0, 0x10
LOP.AND R1, R1, 0xff
LOP.AND R0, R0, 0xff
XMAD R3, R0, R1, RZ
ISBERD R4, [R3]
ALD.128 R8, a[0x70], R4
ALD.128 R12, a[0x80], R4
MOV R5, RZ
MOV R18, R10
MOV R19, R11
MOV R22, RZ
MOV32I R23, 0x3f800000
"""
    + _corner53("-", "-", "0x0", "0x0", False)
    + _corner53("", "-", ONE, "0x0", False)
    + _corner53("-", "", "0x0", ONE, False)
    + _corner53("", "", ONE, ONE, True)
    + "EXIT\n"
)


# SM53 vertex and fragment programs around POINT_QUAD53 (the NVN front end's test): position and
# varying 0 passed on; (r, g) of varying 0 flat, v of varying 1 screen-linear, alpha 1
VS_PASS53 = "ALD.128 R0, a[0x80]\nALD.128 R4, a[0x90]\nAST.128 a[0x70], R0\nAST.128 a[0x80], R4\nEXIT\n"
FS_QUAD53 = "IPA.CONSTANT R0, a[0x80], RZ\nIPA.CONSTANT R1, a[0x84], RZ\nIPA.PASS R2, a[0x94], RZ\nMOV32I R3, 0x3f800000\nEXIT\n"
FS_QUAD53_HDR = dict(inputs={0x80: "constant", 0x84: "constant", 0x94: "linear"}, targets=(0xF,))


def header(geo: tuple[int, int, int], hdr: dict, version: int = 4) -> bytes:
    return sph.build("geometry", version=version, geometry=geo, **hdr)


def points_to_quads(points: np.ndarray, colours: np.ndarray, half: float, size: tuple[int, int]):
    """What POINT_QUAD draws with a fragment program writing (r, g of varying 0, v of varying 1,
    1): (covered, ambiguous, rgba floats) per pixel; later points over earlier ones (Vulkan's
    primitive order), pixel centres within 1e-4 of a square's edge ambiguous."""
    w, h = size
    ys, xs = np.mgrid[0:h, 0:w] + 0.5
    cx, cy = xs / w * 2 - 1, ys / h * 2 - 1  # the pixel centre in clip units (w = 1)
    covered = np.zeros((h, w), bool)
    ambiguous = np.zeros((h, w), bool)
    out = np.zeros((h, w, 4))
    for p, c in zip(points, colours):
        x0, x1, y0, y1 = p[0] - half, p[0] + half, p[1] - half, p[1] + half
        inside = (cx > x0 + 1e-4) & (cx < x1 - 1e-4) & (cy > y0 + 1e-4) & (cy < y1 - 1e-4)
        edge = (cx > x0 - 1e-4) & (cx < x1 + 1e-4) & (cy > y0 - 1e-4) & (cy < y1 + 1e-4) & ~inside
        ambiguous |= edge
        v = (cy - y0) / (y1 - y0)
        val = np.stack([np.full_like(v, c[0]), np.full_like(v, c[1]), v, np.ones_like(v)], axis=-1)
        out[inside] = val[inside]
        covered |= inside
    return covered, ambiguous, out
