"""The checks both ISAs' compute tests make of the kernels ptxas built from the same PTX
(tests/shader_svc/ptx and ptx/sm53): inputs, one run through a KernelRunner, and numpy's
answer; plus the exact floating-point references they share."""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np

from compute_dispatch import KernelRunner


def fma_f32_exact(a: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
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


def f2i_s32(x: np.ndarray) -> np.ndarray:
    """cvt.rzi.s32.f32 as PTX defines it: truncate, saturate, NaN -> 0."""
    t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=2.0**31, neginf=-(2.0**31)))
    return np.clip(t, -(2.0**31), 2.0**31 - 1).astype(np.int64).astype(np.int32)


def check_add_i32(k: KernelRunner, n: int) -> None:
    rng = np.random.default_rng(n)
    a, b = rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)
    ba, bb, bc = k.upload(a), k.upload(b), k.upload(np.full(n + 64, 0xDEADBEEF, np.uint32))
    (c,) = k.run("add_i32", n, struct.pack("<QQQI", ba.address, bb.address, bc.address, n), [bc])
    assert np.array_equal(c[:n], a + b)
    assert (c[n : n + 64] == 0xDEADBEEF).all()  # threads past n wrote nothing


def saxpy(k: KernelRunner, alpha: np.float32, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y = alpha*x + y by the saxpy kernel: the new y."""
    bx, by = k.upload(x), k.upload(y)
    (out,) = k.run("saxpy", len(x), struct.pack("<QQfI", bx.address, by.address, alpha, len(x)), [by])
    return out[: len(x)].view(np.float32)


def check_saxpy(k: KernelRunner, n: int) -> None:
    rng = np.random.default_rng(n)
    # wide exponent spread: y often only contributes a sticky bit to alpha*x
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    alpha = np.float32(1.75)
    assert np.array_equal(saxpy(k, alpha, x, y), fma_f32_exact(np.full(n, alpha), x, y))


def check_loop_sum(k: KernelRunner, n: int, m: int) -> None:
    rng = np.random.default_rng(n + m)
    a = rng.integers(0, 2**32, max(n * m, 1), dtype=np.uint32)
    ba, bo = k.upload(a), k.upload(np.zeros(n, np.uint32))
    (out,) = k.run("loop_sum", n, struct.pack("<QQII", ba.address, bo.address, m, n), [bo])
    w = np.arange(1, m + 1, dtype=np.uint64)
    ref = (
        ((a[: n * m].reshape(n, m).astype(np.uint64) * w).sum(axis=1) % 2**32).astype(np.uint32) if m else np.zeros(n, np.uint32)
    )
    assert np.array_equal(out[:n], ref)


def check_branch(k: KernelRunner, groups: int) -> None:
    n = groups * k.block
    a = np.random.default_rng(groups).integers(0, 2**32, n, dtype=np.uint32)
    ba, bo = k.upload(a), k.upload(np.zeros(n, np.uint32))
    (out,) = k.run("branch", n, struct.pack("<QQ", ba.address, bo.address), [bo])
    assert np.array_equal(out[:n], np.where(a & 1, a * np.uint32(3) + np.uint32(1), a >> 1).astype(np.uint32))


def check_int_ops(k: KernelRunner, groups: int) -> None:
    n = groups * k.block
    rng = np.random.default_rng(groups)
    a, b = rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)
    ba, bb, bo = k.upload(a), k.upload(b), k.upload(np.zeros(8 * n, np.uint32))
    (out,) = k.run("int_ops", n, struct.pack("<QQQ", ba.address, bb.address, bo.address), [bo])
    s = b & 31
    sa = a.view(np.int32)
    ref = np.stack(
        [
            a * b,
            (a & b) | (a ^ b),
            a << s,
            a >> s,
            (sa >> s.astype(np.int32)).view(np.uint32),
            a - b,
            np.minimum(a, b) + np.maximum(sa, b.view(np.int32)).view(np.uint32),
            ~((a & b) | (a ^ b)) + ((a.astype(np.uint64) * b) >> 32).astype(np.uint32),
        ],
        axis=1,
    )
    assert np.array_equal(out[: 8 * n].reshape(n, 8), ref)


def run_fp_ops(k: KernelRunner, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The fp_ops kernel over x, y: its six output words per thread, (n, 6)."""
    n = len(x)
    bx, by, bo = k.upload(x), k.upload(y), k.upload(np.zeros(6 * n, np.uint32))
    (out,) = k.run("fp_ops", n, struct.pack("<QQQ", bx.address, by.address, bo.address), [bo])
    return out[: 6 * n].reshape(n, 6)
