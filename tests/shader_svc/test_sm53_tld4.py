"""SM53 TLD4 on a bound texture: the row prints as nvdisasm 11.8 prints it (a listing and 400
mutated words), and the gather draws on lavapipe numpy's four texels around each sample point."""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from shader_svc import translate as tr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_bindless import FS53_HDR, H, W, gpu, program53, quad, uv  # noqa: E402,F401
from test_sm53_bindless import gather  # noqa: E402
from test_sm86_draw import VS_PASS, VS_PASS_HDR, spirv, spirv_val  # noqa: E402

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
    from shader_svc.vk_graphics import Texture

    tex = np.random.default_rng(11).integers(0, 256, (4, 4, 4), dtype=np.uint8)
    prog = tr.make_program(53, 3, program53(FS_TLD4.format(comp=comp), FS53_HDR))
    fs = tr.translate(prog)
    spirv_val(fs, tmp_path, "tld4")
    assert tr.reflect(prog).textures == (1,)
    vs = spirv("vertex", VS_PASS, VS_PASS_HDR)
    img = gpu.draw(vs, fs, quad(), (W, H), textures={1: Texture(tex)}).astype(int)
    want = np.array([[gather(tex, *uv(x, y), index) for x in range(W)] for y in range(H)])
    assert np.abs(img - want).max() <= 1


def test_tld4_row_agrees_with_nvdisasm(nv_tools):
    from shader_svc.sm53 import corpus, tools
    from shader_svc.sm53 import decode as dec53
    from shader_svc.sm53.assemble import assemble_program as asm53
    from shader_svc.sm53.table import ROWS

    try:
        tools.nvdisasm53_path()
    except tools.ToolUnavailable as e:
        pytest.skip(f"LOUD SKIP: nvdisasm 11.8 unavailable (Debian unreachable): {e}")
    text = FS_TLD4.format(comp="G") + "TLD4.A.NDV.NODEP R0, R2, 0x3, 2D, 0x3\nTLD4.B R8, R2, R4, 0x0, 2D, 0x5\n"
    code = asm53(text)
    q = struct.unpack(f"<{len(code) // 8}Q", code)
    lines = [ln.strip() for ln in text.strip().splitlines()]
    got = [r.text if r else None for r in tools.nvdisasm53_raw([w for i, w in enumerate(q) if i % 4])]
    assert got[:len(lines)] == lines
    seeds = sorted(r.base for r in ROWS if r.ir == "TLD4")
    words, ctl = corpus.mutations(seeds, 400, seed=5388)
    ref = tools.nvdisasm53_raw(words, ctl)
    agree = 0
    for i, (w, r) in enumerate(zip(words, ref)):
        c = dec53.Control.from_bits((ctl[i // 3] >> (i % 3 * 21)) & ((1 << 21) - 1))
        try:
            inst = dec53.decode(w, c, tools.raw_addr(i))
        except dec53.DecodeError:
            continue
        assert r is not None, f"{w:#018x}: we print {inst.text()!r}, nvdisasm refuses it"
        assert " ".join(inst.text().split()) == " ".join(r.text.split()), f"{w:#018x}"
        agree += inst.row.ir == "TLD4"
    assert agree > 40, agree
