"""SM53 IPA.SAT: the interpolated value (after IPA's multiply) clamped to [0, 1], for each
interpolation mode, drawn on lavapipe against GLSL's clamp of the same varyings; the program is
what nvdisasm 11.8 reads."""

from __future__ import annotations

import listings
from glsl_compare import assert_same, perspective_triangles
from sm53_gfx_programs import VS_MODES, VS_MODES53, glsl, program, translate

FS_SAT = """
IPA.PASS.SAT R0, a[0x80], RZ
MOV32I R5, 0x3fc00000
IPA.SAT R1, a[0x84], R5
IPA.CONSTANT.SAT R2, a[0x90], RZ
IPA.PASS.SAT R3, a[0xa0], RZ
FMUL R0, R0, 0.5
FMUL R1, R1, 0.5
FMUL R2, R2, 0.5
FMUL R3, R3, 0.5
EXIT
"""
FS_SAT_GLSL = """#version 450
layout(location=0) in vec4 t;
layout(location=1) flat in vec4 u;
layout(location=2) noperspective in vec4 v;
layout(location=0) out vec4 o;
void main() { o = 0.5 * vec4(clamp(t.x * gl_FragCoord.w, 0.0, 1.0), clamp(t.y * gl_FragCoord.w * 1.5, 0.0, 1.0),
                             clamp(u.x, 0.0, 1.0), clamp(v.x, 0.0, 1.0)); }
"""
HDR = dict(inputs={0x80: "perspective", 0x84: "perspective", 0x90: "constant", 0xA0: "linear"}, targets=(0xF,))


def test_ipa_sat_clamps_every_mode_like_glsl(gpu):
    """Varyings from -1 to 2 under a perspective (w 0.5..3): halved after the clamp, so a
    missing .SAT shows (0.5 * 1.7 is not 0.5 * 1).  Exact on lavapipe."""
    verts = perspective_triangles(7, -1, 2)
    a = gpu.draw(translate("vertex", VS_MODES53), translate("fragment", program("fragment", FS_SAT, **HDR)), verts, (48, 40))
    b = gpu.draw(glsl(VS_MODES, "vertex"), glsl(FS_SAT_GLSL, "fragment"), verts, (48, 40))
    assert_same(gpu, a, b, min_covered=150, min_colours=50)
    # the clamp is visible: some pixels sit exactly at 0.5 (saturated at 1) and at 0
    assert (a[..., 3] == 128).sum() > 20 and ((a[..., 3] == 0) & a[..., :3].any(axis=2)).sum() > 20


def test_ipa_sat_program_is_what_nvdisasm_reads():
    listings.check_sm53([FS_SAT])
