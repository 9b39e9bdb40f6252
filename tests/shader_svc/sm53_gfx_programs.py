"""SM53 graphics programs for the tests, written as text with a version-3 header and translated
by the service's translator, and the GLSL they are drawn against; the interpolation-mode pair
(a pass-through vertex program feeding three varyings) in both languages."""

from __future__ import annotations

from shader_svc import sph
from shader_svc import translate as tr
from shader_svc.sm53.assemble import assemble_program

STAGE = {"vertex": 2, "fragment": 3}


def program(stage: str, text: str, **header) -> bytes:
    """A test program: version-3 header + our assembler's words."""
    h = sph.build(stage, version=3, **header)
    return h + assemble_program(text, base_addr=len(h))


def translate(stage: str, code: bytes) -> bytes:
    return tr.translate(tr.make_program(53, STAGE[stage], code))


def glsl(src: str, stage: str) -> bytes:
    from cpu_host.gpu_client.shaders import compile_glsl

    return compile_glsl(src, "vert" if stage == "vertex" else "frag")


VS_MODES = """#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec4 uv;
layout(location=0) out vec4 t;
layout(location=1) out vec4 u;
layout(location=2) out vec4 v;
void main() { gl_Position = pos; t = uv; u = uv; v = uv; }
"""
VS_MODES53 = program(
    "vertex",
    """
ALD.128 R0, a[0x80]
ALD.128 R4, a[0x90]
AST.128 a[0x70], R0
AST.128 a[0x80], R4
AST.128 a[0x90], R4
AST.128 a[0xa0], R4
EXIT
""",
    inputs=set(range(0x80, 0xA0, 4)),
    outputs=set(range(0x70, 0xB0, 4)),
)
