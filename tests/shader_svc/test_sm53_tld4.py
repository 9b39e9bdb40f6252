"""SM53 TLD4 on a bound texture: the row prints as nvdisasm 11.8 prints it (a listing and 400
mutated words), and the gather draws on lavapipe numpy's four texels around each sample point."""

from __future__ import annotations

import numpy as np
import pytest

import listings
from quad_draw import FS53_HDR, H, W, draw_quad, program53, uv
from shader_svc import translate as tr
from spirv_checks import spirv_val
from texel_refs import gather

FS_TLD4 = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
TLD4.{comp} R0, R0, 0x1, 2D, 0xf
EXIT
"""


@pytest.mark.parametrize("comp,index", [("R", 0), ("B", 2)])
def test_tld4_gathers_the_bound_texture(gpu, tmp_path, comp, index):
    from vk_graphics import Texture

    tex = np.random.default_rng(11).integers(0, 256, (4, 4, 4), dtype=np.uint8)
    prog = tr.make_program(53, 3, program53(FS_TLD4.format(comp=comp), FS53_HDR))
    fs = tr.translate(prog)
    spirv_val(fs, tmp_path, "tld4")
    assert tr.reflect(prog).textures == (1,)
    img = draw_quad(gpu, fs, textures={1: Texture(tex)})
    want = np.array([[gather(tex, *uv(x, y), index) for x in range(W)] for y in range(H)])
    assert np.abs(img - want).max() <= 1


def test_tld4_row_agrees_with_nvdisasm(nv_tools):
    listings.check_sm53([FS_TLD4.format(comp="G") + "TLD4.A.NDV.NODEP R0, R2, 0x3, 2D, 0x3\nTLD4.B R8, R2, R4, 0x0, 2D, 0x5\n"])
    agree = listings.sm53_mutations_agree({"TLD4"}, 400, seed=5388)["TLD4"]
    assert agree > 40, agree
