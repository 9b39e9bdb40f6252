"""SM53 (Maxwell) bindless TLD4.B and TXQ.B: each form prints back as nvdisasm 11.8 prints it
(listings and 400 mutated words), and each lowering draws on lavapipe what numpy computes from
the pool entries the per-pixel handles name (handle = sampler << 20 | texture)."""

from __future__ import annotations

import numpy as np
import pytest

import listings
from quad_draw import FS53_HDR, H, W, draw_quad, program53, uv
from shader_svc import translate as tr
from spirv_checks import spirv_val
from texel_refs import gather

# texture x & 15 (sampler 0) per pixel; its component .comp gathered at the interpolated uv
FS53_GATHER = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
IPA.PASS R8, a[0x70], RZ
F2I.S32.F32.FLOOR R8, R8
LOP32I.AND R12, R8, 0xf
TLD4.{comp}.B R0, R0, R12, 0x0, 2D, 0xf
EXIT
"""
# width / 32 and height / 64 of texture x & 15, level 0 (Ra = handle, Ra+1 = level)
FS53_SIZE = """
IPA.PASS R8, a[0x70], RZ
F2I.S32.F32.FLOOR R8, R8
LOP32I.AND R12, R8, 0xf
MOV R13, RZ
TXQ.B R4, R12, TEX_HEADER_DIMENSION, 0x0, 0x3
I2F.F32.U32 R0, R4
I2F.F32.U32 R1, R5
FMUL R0, R0, 0.03125
FMUL R1, R1, 0.015625
MOV R2, RZ
MOV R3, RZ
EXIT
"""
COMPS = {"R": 0, "G": 1, "B": 2, "A": 3}


@pytest.mark.parametrize("comp", ["G", "A"])
def test_tld4_b_gathers_through_per_pixel_handles(gpu, pool_textures, tmp_path, comp):
    from vk_graphics import Pools

    prog = tr.make_program(53, 3, program53(FS53_GATHER.format(comp=comp), FS53_HDR))
    fs = tr.translate(prog)
    spirv_val(fs, tmp_path, f"gather_{comp}")
    assert tr.reflect(prog).texture_pools
    img = draw_quad(gpu, fs, pools=Pools(pool_textures, [False]))
    want = np.array([[gather(pool_textures[x & 15], *uv(x, y), COMPS[comp]) for x in range(W)] for y in range(H)])
    assert np.abs(img - want).max() <= 1


def test_txq_b_reports_each_pool_entrys_size(gpu, tmp_path):
    from vk_graphics import Pools

    sizes = [(t + 1, 2 * t + 1) for t in range(16)]  # (width, height) of texture t
    texs = [np.zeros((h, w, 4), np.uint8) for w, h in sizes]
    prog = tr.make_program(53, 3, program53(FS53_SIZE, dict(inputs={0x70: "perspective"}, targets=(0xF,))))
    fs = tr.translate(prog)
    spirv_val(fs, tmp_path, "size")
    img = draw_quad(gpu, fs, pools=Pools(texs, [False]))
    for x in range(W):
        w, h = sizes[x & 15]
        assert abs(img[0, x, 0] - round(w / 32 * 255)) <= 1 and abs(img[0, x, 1] - round(h / 64 * 255)) <= 1, x


def test_sm53_tld4_b_txq_b_agree_with_nvdisasm(nv_tools):
    """The listings print back as their lines; 400 mutated TLD4.B/TXQ.B words decode to
    nvdisasm's text or are refused (and many agree)."""
    extra = "TLD4.A.B.NDV.NODEP R0, R2, 0x0, 2D, 0x3\nTXQ.B.NODEP R4, R6, TEX_HEADER_SAMPLER_POS, 0x0, 0xf\n"
    listings.check_sm53([FS53_GATHER.format(comp="R"), FS53_GATHER.format(comp="B"), FS53_SIZE, extra])
    agree = listings.sm53_mutations_agree({"TLD4.B", "TXQ.B"}, 400, seed=5387)
    assert agree["TLD4.B"] > 40 and agree["TXQ.B"] > 15, agree
