"""shader-assert's corpus kernels (issue 31): device ``assert`` through our ``__assertfail``
(``cuda_build_assert.py``), and kernels for the table rows that were translated but never
executed exactly (each names the CUDA/PTX that makes the compiler emit the row)."""

from __future__ import annotations

import numpy as np


def define(case, Inputs) -> None:
    """Group ``assert``: an assert that holds for every thread (runs exactly, the log stays
    empty) and one that fails for some threads (reported as cudaErrorAssert naming each thread
    and the line, the other threads' words exact)."""

    def holds_in(r):
        a = r.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32)
        a[a % 7 == 3] += 1  # no x % 7 == 3: the assertion holds everywhere
        return Inputs(a, np.zeros(1, np.uint32), 200, 200, np.zeros(200, np.uint32))

    case(
        name="assert_holds",
        style="assert",
        group="assert",
        src=r"""
#include <assert.h>
K(assert_holds) {
  int i = TID;
  if (i < n) { uint32_t x = a[i];
    assert(x % 7u != 3u);
    o[i] = x * 3u + 1u; }
}""",
        inputs=holds_in,
        ref=lambda x: (x.a.astype(np.uint64) * 3 + 1).astype(np.uint32),
    )

    def fails_in(r):
        a = r.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32)
        a[a % 5 == 2] += 1
        bad = np.array([3, 64, 65, 130, 199])  # in three blocks; the rest hold
        a[bad] = a[bad] - a[bad] % 5 + 2
        return Inputs(a, np.zeros(1, np.uint32), 200, 256, np.full(200, 0xDEADBEEF, np.uint32))

    case(
        name="assert_fails",
        style="assert",
        group="assert",
        src=r"""
#include <assert.h>
K(assert_fails) {
  int i = TID;
  if (i < n) { uint32_t x = a[i];
    assert(x % 5u != 2u);
    o[i] = x ^ 0x5a5a5a5au; }
}""",
        inputs=fails_in,
        ref=lambda x: x.a ^ np.uint32(0x5A5A5A5A),
        asserts=lambda x: set(np.nonzero(x.a[: x.n] % 5 == 2)[0].tolist()),
        assert_text="x % 5u != 2u",
    )


def define_rows(case, Inputs) -> None:
    """Group ``rows``: one kernel per row of the coverage table that was translated but never
    executed exactly, with the CUDA that makes the compiler emit it (read off nvdisasm's text of
    nvcc 13 -arch=sm_86 / ptxas 12.9 -arch=sm_53 at -O3): SM86 NANOSLEEP (``__nanosleep``, PTX
    sm_70+), VOTEU (an atomicAdd to one address: ptxas aggregates it per warp with VOTEU.ANY +
    POPC + one leader's atomic), CCTLL (``prefetch.local.L1`` of a local array), SM53 RRO
    (``__sinf``/``__cosf``: RRO.SINCOS then MUFU.SIN/COS) and HFMA2_32I (``__hfma2`` by a pair of
    constants into the addend's register)."""
    from cuda_corpus_more import _h2, _h2_inputs, _h2pack

    def plain(r, n=200, words=200):
        a = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), n, n, np.zeros(words, np.uint32))

    case(
        name="row_nanosleep",
        style="control",
        group="rows",
        min_sm=70,  # nanosleep is PTX sm_70+ (ptxas refuses it for sm_53)
        src=r"""
K(row_nanosleep) { int i = TID; if (i < n) { __nanosleep(a[i] & 255u); o[i] = a[i] * 5u + 1u; } }""",
        inputs=plain,
        ref=lambda x: (x.a.astype(np.uint64) * 5 + 1).astype(np.uint32),
    )

    def voteu_ref(x):
        out = np.zeros(len(x.out), np.uint32)
        out[0] = x.n
        out[1 : 1 + x.n] = x.a[: x.n]
        return out

    case(
        name="row_voteu",
        style="atomic",
        group="rows",
        src=r"""
K(row_voteu) { int i = TID; if (i < n) { atomicAdd(&o[0], 1u); o[1 + i] = a[i]; } }""",
        inputs=lambda r: plain(r, 200, 201),
        ref=voteu_ref,
    )

    def cctll_ref(x):
        a, n = x.a[: x.n].astype(np.int64), x.n
        i = np.arange(n)
        return x.a[(i + (a & 7)) % n]

    case(
        name="row_cctll",
        style="memory",
        group="rows",
        src=r"""
K(row_cctll) {
  int i = TID; uint32_t loc[8];
  for (int k = 0; k < 8; k++) loc[k] = a[(i + k) % n];
  asm volatile("prefetch.local.L1 [%0];" :: "l"(loc));
  if (i < n) o[i] = loc[a[i] & 7]; }""",
        inputs=plain,
        ref=cctll_ref,
    )

    def rro_in(r):
        x = r.uniform(0.2, 1.35, 200).astype(np.float32)  # sin and cos both >= 0.2: relative ulps
        return Inputs(x.view(np.uint32), np.zeros(1, np.uint32), 200, 200, np.zeros(400, np.uint32))

    def rro_ref(x):
        v = x.a[: x.n].view(np.float32).astype(np.float64)
        return np.stack([np.sin(v), np.cos(v)], 1).astype(np.float32).view(np.uint32).ravel()

    case(
        name="row_rro_sincos",
        style="float",
        group="rows",
        src=r"""
K(row_rro_sincos) { int i = TID; if (i < n) { float x = __uint_as_float(a[i]);
  o[2 * i] = __float_as_uint(__sinf(x)); o[2 * i + 1] = __float_as_uint(__cosf(x)); } }""",
        inputs=rro_in,
        ref=rro_ref,
        kind="f32",
        ulps=ROW_SINCOS_ULPS,
    )

    c_lo, c_hi = float(np.float16(0.1)), float(np.float16(0.3))

    def hfma_ref(x):
        lanes = []
        for (p, q), c in zip(zip(_h2(x.a[: x.n]), _h2(x.b[: x.n])), (c_lo, c_hi)):
            with np.errstate(all="ignore"):
                v = (p.astype(np.float64) * c + q.astype(np.float64)).astype(np.float16)
            lanes.append(np.where(np.isnan(v), 0x7FFF, v.view(np.uint16).astype(np.uint32)))
        return _h2pack(lanes[0], lanes[1])

    case(
        name="row_hfma2_imm32",
        style="half",
        group="rows",
        src=r"""
#include <cuda_fp16.h>
K(row_hfma2_imm32) { int i = TID; if (i < n) {
  __half2 r = __hfma2(*(const __half2 *)&a[i], __floats2half2_rn(0.1f, 0.3f), *(const __half2 *)&b[i]);
  o[i] = *(uint32_t *)&r; } }""",
        inputs=lambda r: Inputs(*_h2_inputs(r), 200, 200, np.zeros(200, np.uint32)),
        ref=hfma_ref,
    )


# __sinf/__cosf: the hardware's MUFU.SIN/COS (after RRO on SM53, an FMUL by 1/2pi on SM86) is an
# approximation; the bound is measured on lavapipe against float64 sin/cos on [0.2, 1.35]
ROW_SINCOS_ULPS = 64
