"""ptxas-built SM86 kernels translated to SPIR-V: valid under spirv-val, and run on lavapipe
through the ``vulkan`` binding they write exactly what numpy computes, for several grid sizes."""
from __future__ import annotations

import shutil
import struct
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from shader_svc.sm86 import decode as dec
from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute

BS = 64
RUN = ["add_i32", "saxpy", "loop_sum", "branch", "int_ops", "fp_ops"]


@pytest.fixture(scope="module")
def device():
    from shader_svc import vk_compute

    try:
        dev = vk_compute.ComputeDevice()
    except Exception as e:  # no Vulkan loader/driver on this machine
        pytest.skip(f"LOUD SKIP: no Vulkan device: {e}")
    yield dev
    dev.close()


def _spirv(kernel) -> bytes:
    return translate_compute(dec.decode_stream(kernel.code), ComputeSpec((BS, 1, 1)))


@pytest.mark.parametrize("name", RUN)
def test_spirv_is_valid(name, corpus_sm86, tmp_path):
    if not shutil.which("spirv-val"):
        pytest.skip("LOUD SKIP: spirv-val not installed (apt spirv-tools)")
    p = tmp_path / f"{name}.spv"
    p.write_bytes(_spirv(corpus_sm86[name]))
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _run(dev, kernel, n_threads, params, bufs):
    from shader_svc import vk_compute

    grid = (n_threads + BS - 1) // BS
    cb = dev.buffer(max(kernel.cbank0_size, 0x160 + len(params)))
    dev.write(cb, vk_compute.cbank0(kernel.cbank0_size, (BS, 1, 1), (grid, 1, 1), params))
    dev.dispatch(_spirv(kernel), cb, (grid, 1, 1))
    return [np.frombuffer(dev.read(b), dtype=np.uint32) for b in bufs]


def _buf(dev, arr):
    b = dev.buffer(arr.nbytes)
    dev.write(b, arr.tobytes())
    return b


@pytest.mark.parametrize("n", [1, 100, 1000])
def test_add_i32(device, corpus_sm86, n):
    rng = np.random.default_rng(n)
    a, b = rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)
    ba, bb, bc = _buf(device, a), _buf(device, b), _buf(device, np.full(n + 64, 0xDEADBEEF, np.uint32))
    (c,) = _run(device, corpus_sm86["add_i32"], n, struct.pack("<QQQI", ba.address, bb.address, bc.address, n), [bc])
    assert np.array_equal(c[:n], a + b)
    assert (c[n:n + 64] == 0xDEADBEEF).all()   # threads past n wrote nothing


def _fma_f32_exact(a: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """a*x+y rounded once to float32 (ties to even), from exact rationals: the oracle of FFMA.RN.
    float(Fraction) is within one f32 ulp of the answer; the nearest of it and its two
    neighbours is the answer."""
    out = np.empty(len(x), np.float32)
    for i, (ai, xi, yi) in enumerate(zip(a, x, y)):
        q = Fraction(float(ai)) * Fraction(float(xi)) + Fraction(float(yi))
        f = np.float32(float(q))
        cands = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
        out[i] = min(cands, key=lambda c: (abs(Fraction(float(c)) - q), int(c.view(np.uint32)) & 1))
    return out


def _saxpy(device, kernel, alpha, x, y):
    bx, by = _buf(device, x), _buf(device, y)
    (out,) = _run(device, kernel, len(x), struct.pack("<QQfI", bx.address, by.address, alpha, len(x)), [by])
    return out[:len(x)].view(np.float32)


@pytest.mark.parametrize("n", [7, 640])
def test_saxpy(device, corpus_sm86, n):
    rng = np.random.default_rng(n)
    # wide exponent spread: y often only contributes a sticky bit to alpha*x
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    alpha = np.float32(1.75)
    out = _saxpy(device, corpus_sm86["saxpy"], alpha, x, y)
    assert np.array_equal(out, _fma_f32_exact(np.full(n, alpha), x, y))


def test_saxpy_single_rounding_where_double_rounding_fails(device, corpus_sm86):
    """1.5 * (1 + k*2^-23) is a tie at f32 precision; a y far below the product's f64 ulp
    decides the direction.  Rounding the f64 sum to f32 (two roundings) gets these wrong."""
    k = np.arange(1, 65, 2)
    x = (1.0 + k * 2.0 ** -23).astype(np.float32)
    x = np.concatenate([x, -x, x, -x])
    y = np.concatenate([np.full(64, 2.0 ** -60), np.full(64, -2.0 ** -60)]).astype(np.float32)
    alpha = np.float32(1.5)
    exact = _fma_f32_exact(np.full(len(x), alpha), x, y)
    twice = (np.float64(alpha) * x.astype(np.float64) + y).astype(np.float32)
    assert (exact != twice).sum() >= 32          # the inputs really are the hard cases
    out = _saxpy(device, corpus_sm86["saxpy"], alpha, x, y)
    assert np.array_equal(out, exact)


# m covers every path ptxas made: no iteration, the 1/2/3-remainder tails and the 4x-unrolled
# body (m > 4), whose bound lives in a uniform register (UIADD3 UR4 = m - 3)
@pytest.mark.parametrize("n,m", [(5, 0), (9, 1), (64, 3), (65, 4), (300, 9), (77, 14), (40, 33)])
def test_loop_sum(device, corpus_sm86, n, m):
    rng = np.random.default_rng(n + m)
    a = rng.integers(0, 2**32, max(n * m, 1), dtype=np.uint32)
    ba, bo = _buf(device, a), _buf(device, np.zeros(n, np.uint32))
    (out,) = _run(device, corpus_sm86["loop_sum"], n, struct.pack("<QQII", ba.address, bo.address, m, n), [bo])
    w = np.arange(1, m + 1, dtype=np.uint64)
    ref = ((a[:n * m].reshape(n, m).astype(np.uint64) * w).sum(axis=1) % 2**32).astype(np.uint32) if m else \
        np.zeros(n, np.uint32)
    assert np.array_equal(out[:n], ref)


@pytest.mark.parametrize("groups", [1, 5])
def test_branch(device, corpus_sm86, groups):
    n = groups * BS
    a = np.random.default_rng(groups).integers(0, 2**32, n, dtype=np.uint32)
    ba, bo = _buf(device, a), _buf(device, np.zeros(n, np.uint32))
    (out,) = _run(device, corpus_sm86["branch"], n, struct.pack("<QQ", ba.address, bo.address), [bo])
    ref = np.where(a & 1, a * np.uint32(3) + np.uint32(1), a >> 1).astype(np.uint32)
    assert np.array_equal(out[:n], ref)


@pytest.mark.parametrize("groups", [1, 3])
def test_int_ops(device, corpus_sm86, groups):
    n = groups * BS
    rng = np.random.default_rng(groups)
    a, b = rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)
    ba, bb, bo = _buf(device, a), _buf(device, b), _buf(device, np.zeros(8 * n, np.uint32))
    (out,) = _run(device, corpus_sm86["int_ops"], n, struct.pack("<QQQ", ba.address, bb.address, bo.address), [bo])
    s = (b & 31)
    sa = a.view(np.int32)
    ref = np.stack([a * b, (a & b) | (a ^ b), a << s, a >> s, (sa >> s.astype(np.int32)).view(np.uint32), a - b,
                    np.minimum(a, b) + np.maximum(sa, b.view(np.int32)).view(np.uint32),
                    ~((a & b) | (a ^ b)) + ((a.astype(np.uint64) * b) >> 32).astype(np.uint32)], axis=1)
    assert np.array_equal(out[:8 * n].reshape(n, 8), ref)


def _f2i_s32(x: np.ndarray) -> np.ndarray:
    """cvt.rzi.s32.f32 as PTX defines it: truncate, saturate, NaN -> 0."""
    t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=2.0**31, neginf=-2.0**31))
    return np.clip(t, -2.0**31, 2.0**31 - 1).astype(np.int64).astype(np.int32)


@pytest.mark.parametrize("groups", [1, 3])
def test_fp_ops(device, corpus_sm86, groups):
    """FADD/FMUL/FFMA with |x| and -x, FMNMX (NaN-suppressing min/max), FSETP.GEU + SEL,
    F2I.TRUNC.NTZ (saturating, NaN -> 0), I2FP.F32.S32: equal to numpy bit for bit (NaN as NaN)."""
    n = groups * BS
    rng = np.random.default_rng(40 + groups)
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 40, n)).astype(np.float32)
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 40, n)).astype(np.float32)
    special = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 1e-40, 2147483520.0, -2147483648.0],
                       np.float32)
    x[:len(special)] = special
    y[len(special):2 * len(special)] = special
    y[2 * len(special)] = np.nan
    x[2 * len(special) + 1] = np.nan
    bx, by, bo = _buf(device, x), _buf(device, y), _buf(device, np.zeros(6 * n, np.uint32))
    (out,) = _run(device, corpus_sm86["fp_ops"], n, struct.pack("<QQQ", bx.address, by.address, bo.address), [bo])
    got = out[:6 * n].reshape(n, 6)
    with np.errstate(all="ignore"):
        s = x + y
        i = _f2i_s32(x)
        ref = [s, None, np.fmin(x, y), np.where(x < y, x * y, x - y), i.astype(np.float32) + np.fmax(x, y),
               i.view(np.float32)]
    finite = np.isfinite(x) & np.isfinite(y) & np.isfinite(s)
    ref[1] = np.full(n, np.nan, np.float32)
    ref[1][finite] = _fma_f32_exact(np.abs(y[finite]), -x[finite], s[finite])
    for k, r in enumerate(ref):
        g = got[:, k].view(np.float32)
        check = finite if k == 1 else np.ones(n, bool)
        both_nan = np.isnan(g) & np.isnan(r)
        bad = check & ~both_nan & (g.view(np.uint32) != r.astype(np.float32).view(np.uint32))
        assert not bad.any(), (k, x[bad][:4], y[bad][:4], g[bad][:4], r[bad][:4])


def test_untranslated_instruction_is_a_clear_error(corpus_sm86):
    from shader_svc.sm86.to_spirv import TranslateError

    with pytest.raises(TranslateError, match=r"offset 0x[0-9a-f]+.*(not translated|not supported)"):
        translate_compute(dec.decode_stream(corpus_sm86["warp_ops"].code))
