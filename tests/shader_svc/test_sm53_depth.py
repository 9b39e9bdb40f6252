"""SM53 fragment programs that write depth (header bit 609): the register after the sample
mask's, which follows the colours' (R4 after one RGBA target: mask R4, depth R5), becomes
FragDepth (DepthReplacing), drawn on lavapipe with a D32 depth buffer and compared with numpy;
a sample-mask output (header bit 608, the register after the colours') keeps exactly the pixels
whose mask has bit 0.  The programs are what nvdisasm 11.8 reads."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import listings
from quad_draw import H, W, draw_quad_depth, uv
from shader_svc import sph
from shader_svc import translate as tr
from spirv_checks import spirv_val

# colour = (u, v, 0, 1); depth = u * v * 0.5 + 0.125 (R5; R4 is the unwritten sample mask's register)
FS_DEPTH = """
IPA.PASS R6, a[0x7c], RZ
MUFU.RCP R6, R6
IPA R0, a[0x80], R6
IPA R1, a[0x84], R6
MOV R2, RZ
MOV32I R3, 0x3f800000
FMUL R5, R0, R1
FMUL R5, R5, 0.5
FADD R5, R5, 0.125
EXIT
"""
HDR = dict(inputs={0x7C: "perspective", 0x80: "perspective", 0x84: "perspective"}, targets=(0xF,))


def program(text: str, depth: bool = True, sample_mask: bool = False) -> bytes:
    from shader_svc.sm53.assemble import assemble_program

    h = bytearray(sph.build("fragment", version=3, **HDR))
    word = struct.unpack_from("<I", h, 4 * 19)[0] | depth << 1 | sample_mask  # bits 608, 609
    struct.pack_into("<I", h, 4 * 19, word)
    return bytes(h) + assemble_program(text, base_addr=len(h))


def test_depth_output_reaches_the_depth_buffer(gpu, tmp_path):
    code = program(FS_DEPTH)
    assert sph.parse(code, "fragment").writes_depth
    fs = tr.translate(tr.make_program(53, 3, code))
    spirv_val(fs, tmp_path, "depth")
    colour, depth = draw_quad_depth(gpu, fs)
    for y in range(H):
        for x in range(W):
            u, v = uv(x, y)
            want = np.float32(u) * np.float32(v) * np.float32(0.5) + np.float32(0.125)
            assert abs(depth[y, x] - want) < 1e-5, (x, y, depth[y, x], want)
            assert abs(colour[y, x, 0] - u * 255) <= 1 and colour[y, x, 3] == 255, (x, y)
    # without the header bit the depth buffer holds the rasterised z (0 here), not R5
    _, flat = draw_quad_depth(gpu, tr.translate(tr.make_program(53, 3, program(FS_DEPTH, depth=False))))
    assert np.abs(flat).max() < 1e-6


# FS_DEPTH with the sample mask (R4) = x & 1: even pixels dropped (one sample per pixel)
FS_MASK = FS_DEPTH.replace(
    "EXIT",
    """FMUL R7, R0, 32
F2I.S32.F32.FLOOR R7, R7
LOP32I.AND R4, R7, 0x1
EXIT""",
)


@pytest.mark.parametrize("depth", [False, True])
def test_sample_mask_output_keeps_the_samples_it_names(gpu, tmp_path, depth):
    """Header bit 608: R4 (the first register after the colours) is SampleMask[0]; with the depth
    bit too, depth still comes from R5."""
    code = program(FS_MASK, depth=depth, sample_mask=True)
    fs = tr.translate(tr.make_program(53, 3, code))
    spirv_val(fs, tmp_path, "mask")
    colour, zbuf = draw_quad_depth(gpu, fs)
    for y in range(H):
        for x in range(W):
            u, v = uv(x, y)
            if x & 1:
                assert abs(colour[y, x, 0] - u * 255) <= 1 and colour[y, x, 3] == 255, (x, y)
                want = np.float32(u) * np.float32(v) * np.float32(0.5) + np.float32(0.125) if depth else 0.0
                assert abs(zbuf[y, x] - want) < 1e-5, (x, y)
            else:
                assert (colour[y, x] == 0).all() and zbuf[y, x] == 1.0, (x, y)
    assert W == 32  # the program's FMUL by 32 turns u back into x


def test_depth_program_is_what_nvdisasm_reads():
    listings.check_sm53((FS_DEPTH, FS_MASK))
