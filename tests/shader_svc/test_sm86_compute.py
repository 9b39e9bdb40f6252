"""ptxas-built SM86 kernels translated to SPIR-V: valid under spirv-val, and run on lavapipe
through the ``vulkan`` binding they write exactly what numpy computes, for several grid sizes."""

from __future__ import annotations

import numpy as np
import pytest

import compute_cases as cc
from compute_dispatch import KernelRunner
from shader_svc.sm86 import decode as dec
from shader_svc.sm86.to_spirv import ComputeSpec
from shader_svc.sm86.to_spirv import translate_compute
from spirv_checks import spirv_val

BS = 64
RUN = ["add_i32", "saxpy", "loop_sum", "branch", "int_ops", "fp_ops"]


def _spirv(code: bytes) -> bytes:
    return translate_compute(dec.decode_stream(code), ComputeSpec((BS, 1, 1)))


@pytest.fixture(scope="module")
def k86(compute_device, corpus_sm86) -> KernelRunner:
    import vk_compute

    return KernelRunner(compute_device, corpus_sm86, vk_compute.cbank0, _spirv, BS)


@pytest.mark.parametrize("name", RUN)
def test_spirv_is_valid(name, corpus_sm86, tmp_path):
    spirv_val(_spirv(corpus_sm86[name].code), tmp_path, name)


@pytest.mark.parametrize("n", [1, 100, 1000])
def test_add_i32(k86, n):
    cc.check_add_i32(k86, n)


@pytest.mark.parametrize("n", [7, 640])
def test_saxpy(k86, n):
    cc.check_saxpy(k86, n)


def test_saxpy_single_rounding_where_double_rounding_fails(k86):
    """1.5 * (1 + k*2^-23) is a tie at f32 precision; a y far below the product's f64 ulp
    decides the direction.  Rounding the f64 sum to f32 (two roundings) gets these wrong."""
    k = np.arange(1, 65, 2)
    x = (1.0 + k * 2.0**-23).astype(np.float32)
    x = np.concatenate([x, -x, x, -x])
    y = np.concatenate([np.full(64, 2.0**-60), np.full(64, -(2.0**-60))]).astype(np.float32)
    alpha = np.float32(1.5)
    exact = cc.fma_f32_exact(np.full(len(x), alpha), x, y)
    twice = (np.float64(alpha) * x.astype(np.float64) + y).astype(np.float32)
    assert (exact != twice).sum() >= 32  # the inputs really are the hard cases
    assert np.array_equal(cc.saxpy(k86, alpha, x, y), exact)


# m covers every path ptxas made: no iteration, the 1/2/3-remainder tails and the 4x-unrolled
# body (m > 4), whose bound lives in a uniform register (UIADD3 UR4 = m - 3)
@pytest.mark.parametrize("n,m", [(5, 0), (9, 1), (64, 3), (65, 4), (300, 9), (77, 14), (40, 33)])
def test_loop_sum(k86, n, m):
    cc.check_loop_sum(k86, n, m)


@pytest.mark.parametrize("groups", [1, 5])
def test_branch(k86, groups):
    cc.check_branch(k86, groups)


@pytest.mark.parametrize("groups", [1, 3])
def test_int_ops(k86, groups):
    cc.check_int_ops(k86, groups)


@pytest.mark.parametrize("groups", [1, 3])
def test_fp_ops(k86, groups):
    """FADD/FMUL/FFMA with |x| and -x, FMNMX (NaN-suppressing min/max), FSETP.GEU + SEL,
    F2I.TRUNC.NTZ (saturating, NaN -> 0), I2FP.F32.S32: equal to numpy bit for bit (NaN as NaN)."""
    n = groups * BS
    rng = np.random.default_rng(40 + groups)
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 40, n)).astype(np.float32)
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 40, n)).astype(np.float32)
    special = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 1e-40, 2147483520.0, -2147483648.0], np.float32)
    x[: len(special)] = special
    y[len(special) : 2 * len(special)] = special
    y[2 * len(special)] = np.nan
    x[2 * len(special) + 1] = np.nan
    got = cc.run_fp_ops(k86, x, y)
    with np.errstate(all="ignore"):
        s = x + y
        i = cc.f2i_s32(x)
        ref = [s, None, np.fmin(x, y), np.where(x < y, x * y, x - y), i.astype(np.float32) + np.fmax(x, y), i.view(np.float32)]
    finite = np.isfinite(x) & np.isfinite(y) & np.isfinite(s)
    ref[1] = np.full(n, np.nan, np.float32)
    ref[1][finite] = cc.fma_f32_exact(np.abs(y[finite]), -x[finite], s[finite])
    for k, r in enumerate(ref):
        g = got[:, k].view(np.float32)
        check = finite if k == 1 else np.ones(n, bool)
        both_nan = np.isnan(g) & np.isnan(r)
        bad = check & ~both_nan & (g.view(np.uint32) != r.astype(np.float32).view(np.uint32))
        assert not bad.any(), (k, x[bad][:4], y[bad][:4], g[bad][:4], r[bad][:4])


def test_untranslated_instruction_is_a_clear_error(corpus_sm86):
    from shader_svc.sm86.to_spirv import TranslateError

    with pytest.raises(TranslateError, match=r"offset 0x[0-9a-f]+.*(not translated|not supported)"):
        # MUFU.TANH (no lowering yet) in an otherwise translatable program
        from shader_svc.sm86 import assemble as asm

        translate_compute(dec.decode_stream(asm.assemble_program("S2R R0, SR_TID.X\nMUFU.TANH R1, R0\nEXIT\n")))
