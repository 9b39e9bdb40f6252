"""Drawing one W x H screen quad on lavapipe with programs written for the tests: SM86 or SM53
(Maxwell) text with its shader program header, translated by the service's translator, behind a
pass-through SM86 vertex program; the 8-bit colours come back as ints."""

from __future__ import annotations

import numpy as np

from shader_svc import sph
from shader_svc import translate as tr

W, H = 32, 16
TS = 4  # textures of TS x TS: no pixel centre of the quad falls on a texel edge
# the pass-through vertex program: position and three varyings as they come
VS_PASS = """
ALD.128 R0, a[0x80]
ALD.128 R4, a[0x90]
ALD.128 R8, a[0xa0]
ALD.128 R12, a[0xb0]
AST.128 a[0x70], R0
AST.128 a[0x80], R4
AST.128 a[0x90], R8
AST.128 a[0xa0], R12
EXIT
"""
VS_PASS_HDR = dict(inputs={0x80 + 4 * i for i in range(16)}, outputs={0x70, 0x74, 0x78, 0x7C} | {0x80 + 4 * i for i in range(12)})
# SM86 fragment programs: uv (varying 0) and the pixel position (0x70, 0x74) interpolated
FS_HDR = dict(inputs={0x80: "perspective", 0x84: "perspective", 0x70: "perspective", 0x74: "perspective"}, targets=(0xF,))
# SM53 fragment programs: the same and 1/w (0x7c), for the compilers' perspective idiom
FS53_HDR = dict(
    inputs={0x70: "perspective", 0x74: "perspective", 0x7C: "perspective", 0x80: "perspective", 0x84: "perspective"},
    targets=(0xF,),
)


def program(stage: str, text: str, hdr: dict) -> bytes:
    """An SM86 program: its header, then our assembler's words."""
    from shader_svc.sm86.assemble import assemble_program

    header = sph.build(stage, **hdr)
    return header + assemble_program(text, base=len(header))


def spirv(stage: str, text: str, hdr: dict) -> bytes:
    """An SM86 program text translated to SPIR-V."""
    return tr.translate(tr.make_program(86, 2 if stage == "vertex" else 3, program(stage, text, hdr)))


def program53(text: str, hdr: dict) -> bytes:
    """An SM53 fragment program: a version-3 header, then our assembler's words."""
    from shader_svc.sm53.assemble import assemble_program as asm53

    h = sph.build("fragment", version=3, **hdr)
    return h + asm53(text, base_addr=len(h))


def fragment53(text: str, hdr: dict = FS53_HDR) -> bytes:
    """An SM53 fragment program text translated to SPIR-V."""
    return tr.translate(tr.make_program(53, 3, program53(text, hdr)))


def quad() -> np.ndarray:
    """Two triangles covering the screen: position (w = 1), then uv 0..1 in varying 0."""
    v = np.zeros((6, 4, 4), np.float32)
    v[:, 0] = [[-1, -1, 0, 1], [1, -1, 0, 1], [-1, 1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1], [-1, 1, 0, 1]]
    v[:, 1, :2] = [[0, 0], [1, 0], [0, 1], [1, 0], [1, 1], [0, 1]]
    return v


def uv(x: int, y: int) -> tuple[float, float]:
    """The uv the quad interpolates at pixel (x, y)'s centre."""
    return (x + 0.5) / W, (y + 0.5) / H


def draw_quad(gpu, fs: bytes, **kw) -> np.ndarray:
    """The quad drawn with VS_PASS and the fragment module ``fs``; ``kw`` as GraphicsDevice.draw
    takes them (textures, uniforms, pools)."""
    return gpu.draw(spirv("vertex", VS_PASS, VS_PASS_HDR), fs, quad(), (W, H), **kw).astype(int)


def draw_quad_depth(gpu, fs: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The quad drawn with VS_PASS and ``fs`` into a colour and a D32 depth buffer: (colour, depth)."""
    return gpu.draw(spirv("vertex", VS_PASS, VS_PASS_HDR), fs, quad(), (W, H), depth=True)


def draw53(gpu, text: str, tex, uniforms: dict | None = None) -> tuple[bytes, np.ndarray]:
    """An SM53 fragment program text drawn with ``tex`` bound at slot 0: (its SPIR-V, the pixels)."""
    fs = fragment53(text)
    return fs, draw_quad(gpu, fs, textures={0: tex}, uniforms=uniforms)


def draw86(gpu, text: str, tex, uniforms: dict | None = None) -> tuple[bytes, np.ndarray]:
    """An SM86 fragment program text drawn with ``tex`` bound at slot 0: (its SPIR-V, the pixels)."""
    fs = spirv("fragment", text, FS_HDR)
    return fs, draw_quad(gpu, fs, textures={0: tex}, uniforms=uniforms)


# The tail of fragment programs that show four bytes as a pixel (test_gfx_exact, test_tex_grad):
# R8, R10 hold a byte at bits 0..7, R9, R11 one at bits 8..15 (masked, not shifted); R, B = R8,
# R10 * c[0x0][0x0] and G, A = R9, R11 * c[0x0][0x4], with BYTE_SCALES at c[0x0][0x0] (1/255 and
# 1/(255 * 256)): each colour exactly its unorm8 byte.
BYTE_SCALES = np.array([1 / 255, 1 / (255 * 256)], np.float32).tobytes()
BYTES_TO_RGBA86 = """I2FP.F32.U32 R8, R8
I2FP.F32.U32 R9, R9
I2FP.F32.U32 R10, R10
I2FP.F32.U32 R11, R11
FMUL R0, R8, c[0x0][0x0]
FMUL R1, R9, c[0x0][0x4]
FMUL R2, R10, c[0x0][0x0]
FMUL R3, R11, c[0x0][0x4]
EXIT
"""
BYTES_TO_RGBA53 = BYTES_TO_RGBA86.replace("I2FP.F32.U32", "I2F.F32.U32")
