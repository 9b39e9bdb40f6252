"""Compute programs in IR (issue 33 part 4): kernels ptxas compiled (the CUDA corpus, NVRTC +
ptxas from PyPI) build an IR function of typed rows only (SPIR-V written while it is built is
an ``IRError``): constant-bank words (``CBankU32``, ``CBankDynU32``), directed-rounding
conversions, generic memory and surfaces (checked when built by ``LowerBase.check_late`` and
lowered with the function), SM86's RET through the block table and the dispatcher's next-block
selects; the rows reach the optimised function.  The SPIR-V passes spirv-val and the kernels
run on lavapipe against their NumPy references."""

from __future__ import annotations

import collections

import cuda_build
import cuda_corpus as cc
import pytest
from shader_svc.lower import base
from shader_svc.lower.control import ControlFlow

# -O3 kernels of the CI part of the corpus (test_cuda_corpus.ISSUE_EIGHT)
# -G: generic memory (the local stack, pointers of any space), run-time constant-bank addresses
G = ("warp_reduce", "histogram", "int64_math")
O3 = ("reduce_sum", "scan_incl", "histogram", "matmul_sh", "stencil3", "warp_reduce", "int64_math", "double_math")
CASES = {c.name: c for c in cc.CASES}


@pytest.fixture(scope="module")
def built():
    cache = {}

    def get(isa: int, opt: str):
        if (isa, opt) not in cache:
            try:
                cache[isa, opt] = cuda_build.build(cc.group_source("base"), isa, opt)
            except cuda_build.NoCompiler as e:  # no nvcc and PyPI unreachable
                pytest.skip(f"LOUD SKIP: {e}")
        return cache[isa, opt]

    return get


@pytest.fixture()
def ir_rows(monkeypatch):
    """The IR operations (name -> count) of every function built while it is used, after the
    optimiser."""
    seen: collections.Counter = collections.Counter()
    real = base.LowerBase._emit_function

    def spy(self, entry, body):
        seen.update(it.op.name for b in self.fn.blocks for it in b.items)
        return real(self, entry, body)

    monkeypatch.setattr(base.LowerBase, "_emit_function", spy)
    return seen


def _check(dev, isa: int, opt: str, name: str, built) -> cc.Result:
    r = cc.check(dev, isa, opt, CASES[name], built(isa, opt)[name])
    assert r.translate == "ok" and r.valid == "ok", r.line()
    return r


@pytest.mark.parametrize("isa", (86, 53))
def test_corpus_kernels_build_ir_rows(isa, built, ir_rows, nv_tools, request):
    if isa == 53:
        request.getfixturevalue("nvdisasm53")
    for name in O3:
        _check(None, isa, "O3", name, built)
    assert {"CBankU32", "LoadGlobal32", "StoreGlobal32", "LoadShared32", "ShflWarp"} <= ir_rows.keys()


@pytest.mark.parametrize("isa", (86, 53))
def test_return_through_the_block_table_builds_ir_rows_and_runs(isa, built, ir_rows, compute_device, nv_tools, request):
    """int64_math's 64-bit division is a subroutine ptxas calls and leaves with RET: the
    dispatcher loop picks the next block from the return address through the block table, in IR
    rows (SM53: its run-time stack); the kernel runs against its reference."""
    if isa == 53:
        request.getfixturevalue("nvdisasm53")
    k = built(isa, "O3")["int64_math"]
    assert any(t[2].startswith("RET") for t in cc.decode_texts(isa, k.code))  # a real return
    r = _check(compute_device, isa, "O3", "int64_math", built)
    assert r.ok, r.line()
    assert {"IEq32", "Select32"} <= ir_rows.keys()


@pytest.mark.parametrize("isa", (86, 53))
def test_debug_kernels_build_ir_rows_and_run(isa, built, ir_rows, compute_device, nv_tools, request):
    """-G kernels (test_cuda_corpus.CI_G) keep locals on the stack and reach memory through
    generic addresses: their accesses, lowered with the function, run against the references."""
    if isa == 53:
        request.getfixturevalue("nvdisasm53")
    for name in G:
        r = _check(compute_device, isa, "G", name, built)
        assert r.ok, r.line()
    assert {"IEq32", "Select32"} <= ir_rows.keys()


def test_guarded_branches_through_the_dispatcher_build_ir_rows(built, ir_rows, monkeypatch, nv_tools):
    """Every -O3 kernel above with the structuriser refused: the dispatcher's guarded next-block
    selects are IR rows too."""
    monkeypatch.setattr(ControlFlow, "structure_ok", lambda self: False)
    for name in O3:
        _check(None, 86, "O3", name, built)
    assert {"Select32", "LAnd"} <= ir_rows.keys()
