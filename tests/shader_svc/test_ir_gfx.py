"""The graphics stages' interface and SM53's run-time stack as IR rows (``ir/ops.py``'s
shader-ir-gfx block): programs made only of those instructions and of instructions already in
IR build their IR function of those rows (a handler writing SPIR-V while the function is built
is refused, ``IRError``), and the rows reach the optimised function.  Covered: ALD/AST (vertex
inputs, VertexIndex/InstanceIndex, Position, varyings), IPA in its modes (pass, multiply,
constant, centroid, .SAT, FragCoord, SM53's 1/w idiom), KIL/KILL, the colour, sample-mask and
depth outputs at EXIT, and SM53's run-time reconvergence stack (SSY/SYNC, PBK/BRK, CAL/RET
through the dispatcher loop).  The stack kernels also run on lavapipe through the dispatcher
loop and write what numpy computes (the structured tests of the same kernels are in
``test_sm53_compute.py``); what the interface rows compute is checked against GLSL by the
graphics tests (``test_sm53_gfx.py``, ``test_sm53_ipa_sat.py``, ``test_sm86_draw.py``,
``test_guest_shaders.py``)."""

from __future__ import annotations

import collections
import struct

import numpy as np
import pytest

import quad_draw
import sm53_gfx_programs as p53
from compute_dispatch import KernelRunner
from test_sm53_compute import loop_break_ref
from shader_svc import sph
from shader_svc import translate as tr
from shader_svc.lower import base
from shader_svc.lower.control import ControlFlow
from shader_svc.sm53 import decode as dec53
from shader_svc.sm53.to_spirv import ComputeSpec, cbank0, translate_compute
from shader_svc.sm53.assemble import assemble_program as asm53
from shader_svc.sm86.assemble import assemble_program as asm86
from spirv_checks import spirv_val


@pytest.fixture()
def ir_rows(monkeypatch):
    """The IR operations (name -> count) of every function built while it is used, after the
    optimiser; ``ir_rows.stacks``: how many of the functions kept SM53's run-time stack."""
    seen = _Seen()
    real = base.LowerBase._emit_function

    def spy(self, entry, body):
        seen.update(it.op.name for b in self.fn.blocks for it in b.items)
        seen.stacks += "stack" in self.vars
        return real(self, entry, body)

    monkeypatch.setattr(base.LowerBase, "_emit_function", spy)
    return seen


class _Seen(collections.Counter):
    stacks = 0


FS53_HDR = dict(
    inputs={0x70: "perspective", 0x7C: "perspective", 0x80: "perspective", 0x90: "linear", 0xA0: "constant"},
    targets=(0xF, 0x3),
)
FS53 = """
IPA.PASS R0, a[0x7c], RZ
MUFU.RCP R1, R0
IPA R2, a[0x80], R1
IPA.SAT R3, a[0x80], R0
IPA.PASS.CENTROID R4, a[0x90], RZ
IPA.CONSTANT R5, a[0xa0], RZ
IPA.PASS R6, a[0x70], RZ
FADD R0, R2, R3
@P0 KIL
FADD R1, R4, R5
MOV R2, R6
EXIT
"""
VS = """
ALD.64 R4, a[0x80]
ALD R6, a[0x2fc]
ALD R7, a[0x2f8]
IADD R6, R6, R7
AST.128 a[0x70], R4
AST.64 a[0x80], R6
AST a[0x88], RZ
EXIT
"""
VS86 = VS.replace("IADD R6, R6, R7", "IADD3 R6, R6, R7, RZ")
VS_HDR = dict(inputs={0x80, 0x84}, outputs={0x70, 0x74, 0x78, 0x7C, 0x80, 0x84, 0x88})
FS86 = """
IPA.PASS R0, a[0x80]
IPA.CONSTANT.CENTROID R1, a[0x90]
IPA.PASS R2, a[0x70]
@P0 KILL !P1
MOV R3, R2
MOV R4, R1
MOV R5, R0
EXIT
"""


def test_sm53_interface_programs_build_ir_rows(ir_rows, tmp_path):
    fs = p53.translate("fragment", p53.program("fragment", FS53, **FS53_HDR))
    spirv_val(fs, tmp_path, "fs53")
    vs = p53.translate("vertex", p53.program("vertex", VS, **VS_HDR))
    spirv_val(vs, tmp_path, "vs53")
    assert {"LoadInputF32", "LoadInputIndex", "StoreOutputF32", "StoreColour"} <= ir_rows.keys()


def test_sm86_interface_programs_build_ir_rows(ir_rows, tmp_path):
    hdr = bytearray(sph.build("fragment", inputs={0x80: "perspective", 0x90: "constant", 0x70: "perspective"}, targets=(0x7,)))
    struct.pack_into("<I", hdr, 4 * 19, struct.unpack_from("<I", hdr, 4 * 19)[0] | 0b11)  # sample mask and depth
    fs = tr.translate(tr.make_program(86, 3, bytes(hdr) + asm86(FS86, base=len(hdr))))
    spirv_val(fs, tmp_path, "fs86")
    vs = quad_draw.spirv("vertex", VS86, VS_HDR)
    spirv_val(vs, tmp_path, "vs86")
    assert {"LoadInputF32", "StoreOutputF32", "StoreColour", "StoreSampleMask", "StoreFragDepth"} <= ir_rows.keys()


def test_graphics_programs_through_the_dispatcher_build_ir_rows(ir_rows, tmp_path, monkeypatch):
    """The same programs with the structuriser refused: the dispatcher loop (its block switch
    and exit test) builds IR rows too."""
    monkeypatch.setattr(ControlFlow, "structure_ok", lambda self: False)
    spirv_val(p53.translate("fragment", p53.program("fragment", FS53, **FS53_HDR)), tmp_path, "fs53d")
    spirv_val(quad_draw.spirv("vertex", VS86, VS_HDR), tmp_path, "vs86d")
    assert {"LoadInputF32", "StoreOutputF32", "StoreColour"} <= ir_rows.keys()


BS = 64


@pytest.fixture()
def dispatcher53(compute_device, corpus_sm53, monkeypatch, ir_rows) -> KernelRunner:
    """SM53 kernels translated with the structuriser refused: the dispatcher loop and the
    run-time reconvergence stack."""
    monkeypatch.setattr(ControlFlow, "structure_ok", lambda self: False)

    def spirv(code: bytes) -> bytes:
        return translate_compute(dec53.decode_stream(code), ComputeSpec((BS, 1, 1)))

    return KernelRunner(compute_device, corpus_sm53, cbank0, spirv, BS)


def test_sm53_run_time_stack_builds_no_ir_rows_and_runs(dispatcher53, ir_rows):
    n = 2 * BS
    rng = np.random.default_rng(7)
    a = rng.integers(0, 21, n, dtype=np.uint32)  # SSY / SYNC around a divergent if
    out = dispatcher53.in_out("diverge", a, n)
    assert np.array_equal(out[:n], (np.where(a > 10, a * 2, a + 7) + np.arange(n, dtype=np.uint32)).astype(np.uint32))
    a = rng.integers(0, 40, n, dtype=np.uint32)  # a loop left early by '@P0 SYNC'
    out = dispatcher53.in_out("loop_break", a, n)
    assert np.array_equal(out[:n], loop_break_ref(a))
    a = rng.integers(0, 2**31, n, dtype=np.uint32)  # CAL / RET
    out = dispatcher53.in_out("call_func", a, n)
    assert np.array_equal(out[:n], (a * np.uint32(2) + np.uint32(5)).astype(np.uint32))
    assert ir_rows.stacks >= 2  # kernels kept their stack at run time (SYNC, RET) ...
    assert {"StackLoad", "StackStore"} <= ir_rows.keys()  # ... in IR rows


TEX53 = """
MOV R0, c[0x1][0x10]
TEX.LZ R8, R4, 0x1, 2D, 0xf
TEXS.LZ.NODEP R6, R2, R0, R1, 0x1, 2D, RGBA
TLD4.G R12, R4, 0x1, 2D, 0xf
TXQ R2, RZ, TEX_HEADER_DIMENSION, 0x1, 0x3
TLD.LZ R16, R4, 0x2, 2D, 0xf
EXIT
"""
TEX86 = """
MOV R0, c[0x1][0x10]
TEX.LZ R10, R8, R4, 0x0, 0x1, 2D
TLD4.G R2, R0, R4, 0x0, 0x1, 2D
TXQ R2, R0, RZ, TEX_HEADER_DIMENSION, 0x0, 0x1, 0x3
TLD.LZ R6, R4, R0, 0x0, 0x2, 2D
EXIT
"""


def test_bound_textures_and_uniforms_build_ir_rows(ir_rows, tmp_path):
    """Bound TEX/TEXS/TLD/TLD4/TXQ and constant-bank reads: their rows are checked when built
    (slot and bank declared, refusals in program order) and lowered with the function."""
    spirv_val(quad_draw.fragment53(TEX53), tmp_path, "tex53")
    spirv_val(quad_draw.spirv("fragment", TEX86, quad_draw.FS_HDR), tmp_path, "tex86")
    assert {"TexSample", "TexFetch", "TexGather", "TexQueryDims", "CBankU32"} <= ir_rows.keys()


BINDLESS53 = """
TEX.B.LZ R8, R4, R12, 0x0, 2D, 0xf
TLD.B.LL R0, R4, R12, 0x0, 2D, 0x3
TLD4.G.B R0, R0, R12, 0x0, 2D, 0xf
TXQ.B R4, R12, TEX_HEADER_DIMENSION, 0x0, 0x3
EXIT
"""
BINDLESS86 = """
TEX.B R6, R4, R0, R12, 2D
TLD.B.LZ R6, R4, R10, R12, 2D
TLD4.G.B R16, R14, R0, R13, 2D
TXQ.B RZ, R4, R12, TEX_HEADER_DIMENSION, 0x3
EXIT
"""


@pytest.mark.parametrize("features", [0, 1])
def test_bindless_textures_build_ir_rows(ir_rows, tmp_path, features):
    """TEX.B/TLD.B/TLD4.B/TXQ.B of both ISAs: rows with the handle as an argument, the pool
    lookup (a switch over the entries, or descriptor indexing) written when they are lowered."""
    hdr53 = sph.build("fragment", version=3, **quad_draw.FS53_HDR)
    fs53 = tr.translate(tr.make_program(53, 3, hdr53 + asm53(BINDLESS53, base_addr=len(hdr53)), features=features))
    spirv_val(fs53, tmp_path, "bindless53")
    hdr86 = sph.build("fragment", **quad_draw.FS_HDR)
    fs86 = tr.translate(tr.make_program(86, 3, hdr86 + asm86(BINDLESS86, base=len(hdr86)), features=features))
    spirv_val(fs86, tmp_path, "bindless86")
    assert {"BindlessSample", "BindlessFetch", "BindlessGather", "BindlessQueryDims"} <= ir_rows.keys()
