"""Surfaces (issue 31, ``shader_svc/lower/surface.py``): what the corpus kernels of
``cuda_corpus_surf.py`` do not show by running — the reflection names the surface pool, and
the forms outside the translated ones (.1D_BUFFER, element addressing, a fault predicate,
64-bit atomics) are refused naming offset, word and form.  Execution against numpy is in
``test_cuda_corpus.py`` (surf_* kernels)."""

from __future__ import annotations

import pytest

import cuda_build
import cuda_corpus as cc
from nxrecomp.common.errors import NxError


@pytest.fixture(scope="module")
def surf_code():
    cache = {}

    def get(isa: int, name: str) -> bytes:
        if isa not in cache:
            try:
                cache[isa] = cuda_build.build(cc.group_source("surface"), isa, "O3")
            except cuda_build.NoCompiler as e:  # no nvcc and PyPI unreachable
                pytest.skip(f"LOUD SKIP: {e}")
        return cache[isa][name].code

    return get


def _decode(isa: int, code: bytes):
    if isa == 86:
        from shader_svc.sm86 import decode as dec
    else:
        from shader_svc.sm53 import decode as dec
    return dec.decode_stream(code)


@pytest.mark.parametrize("isa", [86, 53])
def test_reflection_names_the_surface_pool(isa, surf_code):
    if isa == 86:
        from shader_svc.sm86.reflect import reflect
    else:
        from shader_svc.sm53.reflect import reflect
    from shader_svc.reflection import Reflection

    r = reflect(_decode(isa, surf_code(isa, "surf_rw")))
    assert r.surface_pool
    assert Reflection.from_dict(r.to_dict()).surface_pool  # kept in the cached JSON
    assert not reflect(_decode(isa, cuda_build.build(cc.group_source("base"), isa, "O3")["histogram"].code)).surface_pool


def _mutate(isa: int, code: bytes, ir: str, lo: int, width: int, value: int) -> tuple[bytes, int]:
    """``code`` with field (lo, width) of the first ``ir`` instruction set to ``value`` (bit
    numbers of the instruction word: 128 bits on SM86, 64 on SM53); and its offset."""
    inst = next(i for i in _decode(isa, code) if i.row.ir == ir)
    buf = bytearray(code)
    size = 16 if isa == 86 else 8
    w = int.from_bytes(buf[inst.addr : inst.addr + size], "little")
    w = (w & ~(((1 << width) - 1) << lo)) | value << lo
    buf[inst.addr : inst.addr + size] = w.to_bytes(size, "little")
    return bytes(buf), inst.addr


# (isa, instruction, field lo, width, value, words of the refusal): .1D_BUFFER, no .BA, a predicate,
# a 64-bit atomic
REFUSED = [
    (86, "SULD", 61, 3, 1, "dimension other than"),
    (86, "SULD", 72, 1, 0, "element addressing"),
    (86, "SULD", 81, 3, 0, "fault predicate"),
    (86, "SURED", 73, 3, 2, "atomic type other than"),
    (53, "SULD", 33, 3, 1, "dimension other than"),
    (53, "SUST", 23, 1, 0, "element addressing"),
    (53, "SURED", 20, 3, 2, "atomic type other than"),
]


@pytest.mark.parametrize("isa,ir,lo,width,value,why", REFUSED, ids=[f"sm{r[0]}-{r[1]}-{r[5]}" for r in REFUSED])
def test_untranslated_forms_are_refused_by_name(isa, ir, lo, width, value, why, surf_code):
    name = "surf_red" if ir == "SURED" else "surf_rw"
    code, at = _mutate(isa, surf_code(isa, name), ir, lo, width, value)
    with pytest.raises(NxError) as e:
        cc.translate(isa, code)
    msg = str(e.value)
    assert f"offset {at:#x}" in msg and "word 0x" in msg and why in msg and ir in msg, msg


@pytest.mark.parametrize("isa", [86, 53])
def test_unmutated_kernels_translate(isa, surf_code):
    """The refusals above come from the mutation: the same kernels translate as compiled."""
    for name in ("surf_rw", "surf_red"):
        spv, irs = cc.translate(isa, surf_code(isa, name))
        assert irs & {"SULD", "SURED"} and cc.spirv_val(spv) == "ok"


def test_surface_pool_binding_in_module(surf_code):
    """The module declares the pool at set 1 binding 2 as an array of R32ui storage images:
    read back from the binary with spirv-dis (not our writer)."""
    import subprocess
    import tempfile

    spv, _ = cc.translate(86, surf_code(86, "surf_rw"))
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spv)
        f.flush()
        dis = subprocess.run(["spirv-dis", "--raw-id", f.name], capture_output=True, text=True, check=True).stdout
    lines = dis.splitlines()
    img = next(ln.split("=")[0].strip() for ln in lines if "OpTypeImage" in ln and "R32ui" in ln)
    assert " 2D 0 0 0 2 R32ui" in next(ln for ln in lines if "OpTypeImage" in ln and "R32ui" in ln)
    arr = next(ln.split("=")[0].strip() for ln in lines if f"OpTypeArray {img}" in ln)
    ptr = next(ln.split("=")[0].strip() for ln in lines if f"OpTypePointer UniformConstant {arr}" in ln)
    var = next(ln.split("=")[0].strip() for ln in lines if f"OpVariable {ptr} UniformConstant" in ln)
    assert f"OpDecorate {var} DescriptorSet 1" in dis and f"OpDecorate {var} Binding 2" in dis


# per ISA: surf_rw's SULD as nvdisasm prints it, the instruction before it (a[i] loaded), the
# SUATOM that replaces it (SM53's form takes the handle as an immediate: entry 1, surf_rw's)
SUATOM_EDIT = {
    86: (
        "SULD.D.BA.2D.STRONG.SM.TRAP R11, [R8], R2",
        "LDG.E.CONSTANT R4, [R4.64]",
        "SUATOM.D.BA.2D.{op}.STRONG.SM.TRAP R11, [R8], R4, R2",
    ),
    53: ("SULD.D.BA.2D.TRAP R0, [R8], R2", "LDG.E.CI R5, [R4]", "SUATOM.D.BA.2D.{op}.TRAP R0, [R8], R5, 0x1"),
}


@pytest.mark.parametrize("isa", [86, 53])
@pytest.mark.parametrize("op,fn", [("ADD", lambda t, a: t + a), ("EXCH", lambda t, a: a), ("XOR", lambda t, a: t ^ a)])
def test_suatom_returns_the_old_texel(isa, op, fn, surf_code, compute_device):
    """SUATOM (ptxas emits it from no PTX instruction; built here from surf_rw's code by
    nvdisasm's text, reassembled): its SULD + SUST pair becomes one SUATOM.<op> of a[i] on the
    thread's own texel, whose destination is the register the kernel stores to o[i].  Expected:
    o = the texels before, the surface = op(texel, a) — the same inputs as surf_rw.  (Checked
    to fail with ADD expected as t - a.)"""
    import numpy as np

    if isa == 86:
        from shader_svc.sm86 import assemble as asm
    else:
        from shader_svc.sm53 import assemble as asm
    suld_text, before, suatom = SUATOM_EDIT[isa]
    texts = [t[2] for t in cc.decode_texts(isa, surf_code(isa, "surf_rw"))]
    suld = next(i for i, t in enumerate(texts) if t.startswith("SULD"))
    sust = next(i for i, t in enumerate(texts) if t.startswith("SUST"))
    assert texts[suld] == suld_text, texts[suld]  # the listing the edit assumes
    assert texts[suld - 1] == before, texts[suld - 1]  # a[i] in a register before the access
    texts[suld] = suatom.format(op=op)
    texts[sust] = "NOP"
    code = asm.assemble_program("\n".join(texts) + "\n")
    spv, irs = cc.translate(isa, code)
    assert "SUATOM" in irs and "SULD" not in irs and cc.spirv_val(spv) == "ok"
    case = next(c for c in cc.CASES if c.name == "surf_rw")
    kernel = cuda_build.build(cc.group_source("surface"), isa, "O3")["surf_rw"]
    x = case.inputs(np.random.default_rng(1))
    img = x.surfaces[1]
    want = np.concatenate([img.ravel(), np.zeros(4, np.uint32), fn(img.ravel(), x.a).astype(np.uint32)])
    case_op = type(case)(**{**vars(case), "ref": lambda _x: want})
    ok, why = cc.run(compute_device, isa, kernel, case_op, spv)
    assert ok, why
