"""SM53 scalar video ops in a fragment program (issue 31, shader-video2): the lowering keeps its
64-bit intermediates as pairs of 32-bit words (sm53/wide32.py), so graphics stages translate
VADD, VABSDIFF, VMNMX, VSHL, VSHR, VSET and VMAD without the Int64 capability the GPU process's
device lacks (they were refused: "64-bit integer arithmetic ... is not translated in graphics
stages").  Each line below is one ptxas 12.9 wrote for the PTX instruction beside it (corpus
group ``video``, registers renamed, .reuse left out); each result register's bytes are drawn as a
pixel's colour on lavapipe (test_half_gfx.py's fragment harness: operands R4, R5, R6 hashed from
the pixel index) and compared with the PTX ISA's definition (cuda_corpus_video.ref_one)."""

from __future__ import annotations

import numpy as np
import pytest

import isa_coverage
import test_half_gfx as hg
from cuda_corpus_video import _S, ref_one

M32 = 0xFFFFFFFF
# result register: (SASS, the PTX instruction's spec)
RESULTS = {
    "R10": ("VADD.UD.U8.U16.SAT R10, R4.B1, R5.H1, RZ", _S("vadd", dt="u32", asel="b1", bsel="h1", sat=True)),
    "R11": (
        "VADD.S8.S8.SAT.ACC R11, R4.B2, R5.B3, R6",
        _S("vadd", dt="s32", at="s32", bt="s32", asel="b2", bsel="b3", sat=True, op2="add"),
    ),
    "R12": ("VADD.UD.U16.U8.MRG_8B2 R12, R4.H1, R5.B3, R6", _S("vadd", dt="u32", asel="h1", bsel="b3", dsel="b2")),
    "R13": ("VADD.U32.S32.SAT R13, R4, -R5, RZ", _S("vsub", dt="s32", bt="s32", sat=True)),
    "R14": (
        "VABSDIFF.S16.S16.SAT.ACC R14, R4.H1, R5, R6",
        _S("vabsdiff", dt="u32", at="s32", bt="s32", asel="h1", bsel="h0", sat=True, op2="add"),
    ),
    "R15": (
        "VMNMX.S8.U16.MX.MIN R15, R4.B2, R5.H1, R6",
        _S("vmax", dt="s32", at="s32", asel="b2", bsel="h1", op2="min"),
    ),
    "R16": (
        "VSHL.S16.U8.SAT R16, R4.H1, R5, RZ",
        _S("vshl", dt="s32", at="s32", asel="h1", bsel="b0", sat=True, mode="clamp"),
    ),
    "R17": ("VSHR.S16.U32.MIN R17, R4.H1, R5, R6", _S("vshr", dt="s32", at="s32", asel="h1", mode="clamp", op2="min")),
    "R18": ("VSHL.UD.U32.U32.W R18, R4, R5, RZ", _S("vshl", dt="u32", mode="wrap")),
    "R19": ("VSHL.S32.U8.SAT R19, R4, R5, RZ", _S("vshl", dt="s32", at="s32", bsel="b0", sat=True, mode="clamp")),
    "R21": (
        "VSET.NE.S8.S8.ACC R21, R4.B1, R5.B2, R6",
        _S("vset", at="s32", bt="s32", cmp="ne", asel="b1", bsel="b2", op2="add"),
    ),
    "R22": ("VSET.LT.U32.U32 R22, R4, R5, RZ", _S("vset", cmp="lt")),
    "R23": ("VMAD.U32.U32 R23, R4, R5, R6", _S("vmad", dt="u32")),
    "R24": ("VMAD.SAT R24, R4, R5, R6", _S("vmad", dt="s32", at="s32", bt="s32", sat=True)),
    "R25": (
        "VMAD.S32.S16.SAT R25, -R4, R5, R6",
        _S("vmad", dt="s32", at="s32", bt="s32", na=True, bsel="h0", sat=True),
    ),
    "R26": (
        "VMAD.U16.S16.SHR_15.SAT R26, R4, R5.H1, R6",
        _S("vmad", dt="s32", bt="s32", asel="h0", bsel="h1", sat=True, scale="shr15"),
    ),
}
BODY = "".join(t + "\n" for t, _ in RESULTS.values())
# operand sets (test_half_gfx's layout): random words; shift-sized bytes in b with a's halves
# near the signed/unsigned edges (saturation); a and b alike but for their low bytes (equal
# bytes and halves: VSET's ties, VABSDIFF's zeros)
SETS = {
    "random": hg.SETS["random"],
    "edges": (0x2545F491, (0x80FF80FF, 0x7F007F00), (0x1F1F1F1F, 0), (M32, 0)),
    "close": (0x0F1E2D3C, (0x0000001F, 0x7FFF8000), (0x0000001F, 0x7FFF8000), (M32, 0)),
}


def _ref(res: str, s: tuple, p: int) -> int:
    a, b, c = hg._operands(s, p)
    return ref_one(RESULTS[res][1], a, b, c)


def _fragment(res: str) -> bytes:
    from quad_draw import program53
    from shader_svc import translate as tr

    return tr.translate(tr.make_program(53, 3, program53(hg.FRAG53.format(body=BODY, res=res), hg.HDR)))


def test_operand_sets_reach_saturation_and_ties():
    """Not vacuous: across the sets the saturating results clamp (and some do not), and VSET's
    ne / lt see both answers (checked on the reference alone)."""
    from quad_draw import H, W

    def unsat(res: str, s: tuple, p: int) -> int:
        spec = {k: v for k, v in RESULTS[res][1].items() if k != "sat"}
        a, b, c = hg._operands(s, p)
        return ref_one(spec, a, b, c)

    for res in ("R13", "R16", "R19", "R24", "R25"):
        same = {_ref(res, s, p) == unsat(res, s, p) for s in SETS.values() for p in range(W * H)}
        assert same == {True, False}, res
    for res in ("R21", "R22"):
        assert len({_ref(res, s, p) for s in SETS.values() for p in range(W * H)}) > 1, res


def test_video_ops_in_a_fragment_program_are_exact(gpu, tmp_path):
    """Translated (the old lowering refused them, needing Int64), valid SPIR-V without the Int64
    capability, and every pixel's result the PTX definition's for every operand set."""
    from quad_draw import H, W, draw_quad
    from spirv_checks import spirv_val

    bad = []
    for res in RESULTS:
        fs = _fragment(res)
        spirv_val(fs, tmp_path, "fs")
        words = np.frombuffer(fs, np.uint32)
        assert not any(words[i] == (2 << 16 | 17) and words[i + 1] == 11 for i in range(5, len(words) - 1)), (
            "OpCapability Int64 in a graphics module"
        )
        for name, s in SETS.items():
            img = draw_quad(gpu, fs, uniforms={0: hg._uniforms(s)})
            got = (img[..., 0] | img[..., 1] << 8 | img[..., 2] << 16 | img[..., 3] << 24).astype(np.int64)
            for y in range(H):
                for x in range(W):
                    want = _ref(res, s, x + 32 * y)
                    if int(got[y, x]) != want:
                        ops = [hex(v) for v in hg._operands(s, x + 32 * y)]
                        bad.append((res, name, ops, hex(int(got[y, x])), hex(want)))
    text = hg.FRAG53.format(body=BODY, res="R10").splitlines()
    isa_coverage.record_exact_program(53, "test_sm53_video_gfx::FRAG53", text, not bad)
    assert not bad, f"{len(bad)} pixels differ, first: {bad[:4]}"


def test_sm53_video_fragment_text_decodes_back():
    from quad_draw import program53  # noqa: F401  (the harness's module, as the draws use it)
    from shader_svc.sm53 import assemble as asm
    from shader_svc.sm53 import decode as dec

    text = hg.FRAG53.format(body=BODY, res="R10")
    insts = dec.decode_stream(asm.assemble_program(text))
    lines = [ln.strip() for ln in text.strip().splitlines()]
    assert [i.text() for i in insts[: len(lines)]] == lines


@pytest.mark.heavy
def test_sm53_video_fragment_text_is_nvdisasms():
    import listings

    listings.check_sm53([hg.FRAG53.format(body=BODY, res="R10")])
