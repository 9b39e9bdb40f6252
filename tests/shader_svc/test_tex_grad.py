"""TXD (explicit gradients) and TMML.LOD (level-of-detail query) in fragment programs, SM86 and
SM53 (issue 31; shader-tex): programs written with our assemblers, translated, validated, and
drawn on lavapipe against numpy.

Rules relied on (Vulkan spec, "Texel Filtering" / "Scale Factor Operation, Level-of-Detail
Operation"): with uv = (x + 0.5) / W across a W x H screen and a tw x th texture, the
implicit derivatives are du/dx = 1/W, dv/dy = 1/H, so lambda = log2(max(tw / W, th / H)); tw,
th are W, H times a power of two, so lambda is an integer (exact in any log2 approximation a
driver may use within the spec's bounds, rounding to the 8.8 fixed point of TMML's words).
``OpImageQueryLod``'s first component (the level read) is 0 with the harness's one-level
textures (sampler maxLod 0).  TXD's result with a nearest, one-level texture is the texel
containing the point whatever the gradients; its gradients' register order (dP/dx.x,
dP/dy.x, dP/dx.y, dP/dy.y from Rb) is read off nvcc's tex2DGrad code
(``test_txd_gradient_order_is_nvccs``)."""

from __future__ import annotations

import numpy as np
import pytest

import listings
from isa_coverage import exact_program
from quad_draw import BYTE_SCALES, BYTES_TO_RGBA53, BYTES_TO_RGBA86, FS_HDR, VS_PASS, H, W, draw_quad, fragment53, spirv
from shader_svc.ir.block import Block  # noqa: F401  (the IR the handlers build)
from shader_svc.lower.base import TranslateError
from spirv_checks import spirv_val

# TMML at uv, the two words' low bytes and second bytes as R, G (lambda') and B, A (level)
FS_TMML = (
    """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
TMML.LOD RZ, R4, R0, 0x0, 0x0, 2D, 0x3
LOP3.LUT R8, R4, 0xff, RZ, 0xc0, !PT
LOP3.LUT R9, R4, 0xff00, RZ, 0xc0, !PT
LOP3.LUT R10, R5, 0xff, RZ, 0xc0, !PT
LOP3.LUT R11, R5, 0xff00, RZ, 0xc0, !PT
"""
    + BYTES_TO_RGBA86
)

# TXD at uv with gradients from c[0x0] (dP/dx.x, dP/dy.x, dP/dx.y, dP/dy.y in Rb..Rb+3)
FS_TXD = """
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
MOV R4, c[0x0][0x0]
MOV R5, c[0x0][0x4]
MOV R6, c[0x0][0x8]
MOV R7, c[0x0][0xc]
TXD R2, R0, R0, R4, 0x0, 0x1, 2D
EXIT
"""


def _bytes16(v: int) -> tuple[int, int]:
    v &= 0xFFFF
    return v & 0xFF, v >> 8


@pytest.mark.parametrize("scale", [-2, -1, 0, 1, 2])
def test_tmml_sm86_reads_the_level_of_detail(gpu, tmp_path, scale):
    from vk_graphics import Texture

    fs = spirv("fragment", FS_TMML, FS_HDR)
    spirv_val(fs, tmp_path, "tmml")
    tw, th = int(W * 2.0**scale), int(H * 2.0**scale)
    tex = np.zeros((th, tw, 4), np.uint8)
    # c[0x0]: 1/255 and 1/(255 * 256), a byte (or a byte times 256) to its unorm8 exactly
    inv = BYTE_SCALES
    with exact_program(f"test_tex_grad::FS_TMML[{scale}]", (86, FS_TMML), (86, VS_PASS)):
        img = draw_quad(gpu, fs, textures={0: Texture(tex)}, uniforms={0: inv + bytes(56)})
        want = np.array([*_bytes16(256 * scale), 0, 0])
        assert (img == want).all(), (scale, np.unique(img.reshape(-1, 4), axis=0)[:4])


def test_txd_sm86_samples_the_texel_at_the_point(gpu, tmp_path):
    from vk_graphics import Texture

    fs = spirv("fragment", FS_TXD, FS_HDR)
    spirv_val(fs, tmp_path, "txd")
    tex = np.random.default_rng(5).integers(0, 256, (H, W, 4), dtype=np.uint8)
    grads = np.array([4 / W, 0, 0, 4 / H], np.float32).tobytes()  # 4 texels a pixel: minification
    img = draw_quad(gpu, fs, textures={1: Texture(tex)}, uniforms={0: grads + bytes(48)})
    assert np.abs(img - tex.astype(int)).max() == 0  # the point is a texel centre


# --- SM53 -----------------------------------------------------------------------------------
FS53_UV = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
"""
# TMML's words to bytes as FS_TMML does (c[0x0][0x0] = 1/255, c[0x0][0x4] = 1/(255 * 256))
FS53_TMML = (
    FS53_UV
    + """TMML.LOD R4, R0, 0x0, 2D, 0x3
LOP32I.AND R8, R4, 0xff
LOP32I.AND R9, R4, 0xff00
LOP32I.AND R10, R5, 0xff
LOP32I.AND R11, R5, 0xff00
"""
    + BYTES_TO_RGBA53
)
FS53_TXD = (
    FS53_UV
    + """MOV R4, c[0x0][0x0]
MOV R5, c[0x0][0x4]
MOV R6, c[0x0][0x8]
MOV R7, c[0x0][0xc]
TXD R0, R0, R4, 0x0, 2D, 0xf
EXIT
"""
)


@pytest.mark.parametrize("scale", [-1, 0, 2])
def test_tmml_sm53_reads_the_level_of_detail(gpu, tmp_path, scale):
    from vk_graphics import Texture

    fs = fragment53(FS53_TMML)
    spirv_val(fs, tmp_path, "tmml53")
    tex = np.zeros((int(H * 2.0**scale), int(W * 2.0**scale), 4), np.uint8)
    inv = BYTE_SCALES
    with exact_program(f"test_tex_grad::FS53_TMML[{scale}]", (53, FS53_TMML), (86, VS_PASS)):
        img = draw_quad(gpu, fs, textures={0: Texture(tex)}, uniforms={0: inv + bytes(56)})
        assert (img == np.array([*_bytes16(256 * scale), 0, 0])).all(), (scale, np.unique(img.reshape(-1, 4), axis=0)[:4])


def test_txd_sm53_samples_the_texel_at_the_point(gpu, tmp_path):
    from vk_graphics import Texture

    fs = fragment53(FS53_TXD)
    spirv_val(fs, tmp_path, "txd53")
    tex = np.random.default_rng(6).integers(0, 256, (H, W, 4), dtype=np.uint8)
    grads = np.array([0.5 / W, 0, 0, 0.5 / H], np.float32).tobytes()  # magnification
    img = draw_quad(gpu, fs, textures={0: Texture(tex)}, uniforms={0: grads + bytes(48)})
    assert np.abs(img - tex.astype(int)).max() == 0


@pytest.mark.parametrize(
    "isa, text, why",
    [
        (86, "TXD R2, R0, R0, R4, 0x0, 0x1, ARRAY_2D", "other than 2D"),
        (86, "TMML.LOD RZ, R4, R0, 0x0, 0x0, 3D, 0x3", "other than 2D"),
        (53, "TXD R0, R0, R4, 0x0, 1D, 0xf", "other than 2D"),
        (53, "TMML.LOD R4, R0, 0x0, ARRAY_2D, 0x3", "other than 2D"),
    ],
)
def test_other_forms_are_refused_by_name(isa, text, why):
    prog = FS53_UV + text + "\nEXIT\n"
    with pytest.raises(TranslateError, match=why) as e:
        fragment53(prog) if isa == 53 else spirv(
            "fragment", "IPA.PASS R0, a[0x80]\nIPA.PASS R1, a[0x84]\n" + text + "\nEXIT\n", FS_HDR
        )
    assert "offset" in str(e.value) and "word" in str(e.value)


def test_tmml_outside_a_fragment_program_is_refused():
    from quad_draw import VS_PASS_HDR

    with pytest.raises(TranslateError, match="TMML outside a fragment program"):
        spirv("vertex", "ALD.64 R0, a[0x80]\nTMML.LOD RZ, R4, R0, 0x0, 0x0, 2D, 0x3\nAST.64 a[0x70], R4\nEXIT\n", VS_PASS_HDR)


TXD_CUDA = r"""
extern "C" __global__ void kb(cudaTextureObject_t t, float *o, const float *f) {
  int i = threadIdx.x;
  float4 v = tex2DGrad<float4>(t, f[i], f[i + 32], make_float2(f[i + 64], f[i + 96]), make_float2(f[i + 128], f[i + 160]));
  o[i] = v.x + v.y * 3 + v.z * 5 + v.w * 7;
}
"""


@pytest.mark.parametrize("isa", [86, 53])
def test_txd_gradient_order_is_nvccs(nv_tools, isa):
    """tex2DGrad(t, x, y, dPdx, dPdy) compiled by nvcc (sm_86) / ptxas (sm_53): nvdisasm's TXD
    reads the point from Ra, Ra+1 and the gradients from Rb.. in the order dPdx.x, dPdy.x,
    dPdx.y, dPdy.y: each register is loaded from f[i + 64 k] for the k this order names (the
    LDGs before it, in nvdisasm's text), which is what the handlers read."""
    import re

    import cuda_build
    import cubin
    import nvtools

    try:
        cub = cuda_build.compile_cubin(TXD_CUDA, isa, "O3")
    except cuda_build.NoCompiler as e:
        pytest.skip(f"LOUD SKIP: no CUDA compiler: {e}")
    code = cubin.kernels(cub)["kb"].code
    if isa == 86:
        lines = [ln.text for ln in nvtools.nvdisasm_raw(*_words86(code))]
    else:  # nvdisasm 11.8's text of each instruction (the third of decode_texts' triples)
        import cuda_corpus

        lines = [t[2] for t in cuda_corpus.decode_texts(53, code)]
    loaded = {}  # register -> word index k of f[i + 32 k]
    txd = None
    for t in lines:
        m = re.search(r"LDG\.E (R\d+), \[R\d+(?:\.64)?(?:\+(0x[0-9a-f]+))?\]", t)
        if m:
            loaded[int(m.group(1)[1:])] = int(m.group(2) or "0", 16) // 0x80
        m = re.search(r"TXD\S* (?:RZ|R\d+), (?:(?:RZ|R\d+), )?R(\d+), R(\d+), ", t)
        if m and txd is None:
            txd = int(m.group(1)), int(m.group(2))
    assert txd is not None, lines
    a, b = txd
    # f[i], f[i+32] the point; f[i+64], f[i+96] dPdx; f[i+128], f[i+160] dPdy
    assert [loaded[a], loaded[a + 1]] == [0, 1]
    assert [loaded[b + k] for k in range(4)] == [2, 4, 3, 5]


def _words86(code: bytes):
    import listings

    return (list(listings.sm86_words(code)), "SM86")


def test_tmml_listings_are_what_nvdisasm_reads(nv_tools):
    """The TMML programs (and the pass-through vertex program every quad draws with) are
    nvdisasm's text: their exact draws count in shader_svc/README.md's coverage table."""
    listings.check_sm86([FS_TMML, VS_PASS])
    listings.check_sm53([FS53_TMML])
