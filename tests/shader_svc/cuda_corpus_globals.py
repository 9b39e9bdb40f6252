"""``__device__`` globals and virtual calls (shader-ctl2, issue 31): kernels that read initialised
``__device__`` arrays, write zero-initialised ones, follow a pointer stored in global data, call
virtual functions of objects they construct, and call through a ``__device__`` table of
function pointers.  nvcc places the data in ``.nv.global.init`` / ``.nv.global``, reached through
constant bank 4 at -O3 and linker-patched immediates at -G (``cuda_globals.py`` places them as
a loader would).  References: plain numpy of the C++ (uint32 wrap-around)."""

from __future__ import annotations

import numpy as np

GROUP = "ctl2_globals"
N = 200
TAB = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
MIX = [0x9E3779B9, 0x85EBCA6B, 0xC2B2AE35, 0x27D4EB2F]

PRELUDE = r"""
__device__ uint32_t g2_tab[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
__device__ const uint32_t g2_mix[4] = {0x9E3779B9u, 0x85EBCA6Bu, 0xC2B2AE35u, 0x27D4EB2Fu};
__device__ const uint32_t *g2_ptr = &g2_tab[4];
__device__ uint32_t g2_scratch[256];
struct G2Base { uint32_t k; __device__ G2Base(uint32_t k) : k(k) {}
  __device__ virtual uint32_t f(uint32_t x) const { return x + k; }
  __device__ virtual uint32_t g(uint32_t x) const { return x ^ k; } };
struct G2Mul : G2Base { __device__ G2Mul(uint32_t k) : G2Base(k) {}
  __device__ uint32_t f(uint32_t x) const override { return x * k; } };
struct G2Rot : G2Base { __device__ G2Rot(uint32_t k) : G2Base(k) {}
  __device__ uint32_t f(uint32_t x) const override { return (x << 7 | x >> 25) + k; }
  __device__ uint32_t g(uint32_t x) const override { return x - k * 3; } };
struct G2Sq : G2Mul { __device__ G2Sq(uint32_t k) : G2Mul(k) {}
  __device__ uint32_t g(uint32_t x) const override { return x * x + k; } };
__device__ __noinline__ uint32_t g2_fa(uint32_t x) { return x ^ 0x55u; }
__device__ __noinline__ uint32_t g2_fb(uint32_t x) { return x * 3u + 1u; }
__device__ __noinline__ uint32_t g2_fc(uint32_t x) { return (x >> 3) | (x << 29); }
__device__ __noinline__ uint32_t g2_fd(uint32_t x) { return ~x + 17u; }
typedef uint32_t (*g2_fn)(uint32_t);
__device__ g2_fn g2_fns[4] = {g2_fa, g2_fb, g2_fc, g2_fd};
"""


def _u(x) -> np.ndarray:
    return (np.asarray(x, np.uint64) & 0xFFFFFFFF).astype(np.uint64)


def _gdata_ref(x) -> np.ndarray:
    a = x.a[: x.n].astype(np.uint64)
    tab, mix = np.array(TAB, np.uint64), np.array(MIX, np.uint64)
    i = np.arange(x.n, dtype=np.uint64)
    s = _u(a * 3 + i)  # written to g2_scratch[i], read back
    v = _u(s + tab[(a & 15).astype(int)] * mix[(a >> 4 & 3).astype(int)])
    v = _u(v + tab[4 + (a >> 8 & 3).astype(int)])  # through g2_ptr = &g2_tab[4]
    return np.concatenate([v, np.zeros(len(x.out) - x.n, np.uint64)]).astype(np.uint32)


def _virt_ref(x) -> np.ndarray:
    a, b = x.a[: x.n].astype(np.uint64), x.b[: x.n].astype(np.uint64)
    k = _u(a >> 8)
    sel = (a % 4).astype(int)
    rot = _u((b << 7) | (b >> 25))
    f = [_u(b + k), _u(b * k), _u(rot + k), _u(b * k)]  # Base, Mul, Rot, Sq (Sq inherits Mul::f)
    g = [_u(b ^ k), _u(b ^ k), _u(b - k * 3), _u(b * b + k)]
    fv = np.choose(sel, f)
    gv = np.choose(sel, g)
    v = _u(fv + _u(gv * 5))
    return np.concatenate([v, np.zeros(len(x.out) - x.n, np.uint64)]).astype(np.uint32)


def _fptab_ref(x) -> np.ndarray:
    a, b = x.a[: x.n].astype(np.uint64), x.b[: x.n].astype(np.uint64)
    fs = [_u(b ^ 0x55), _u(b * 3 + 1), _u((b >> 3) | (b << 29)), _u((~b & 0xFFFFFFFF) + 17)]
    v = np.choose((a & 3).astype(int), fs)
    w = np.choose((a >> 2 & 3).astype(int), [_u(v ^ 0x55), _u(v * 3 + 1), _u((v >> 3) | (v << 29)), _u((~v & 0xFFFFFFFF) + 17)])
    return np.concatenate([w, np.zeros(len(x.out) - x.n, np.uint64)]).astype(np.uint32)


def define(case, Inputs) -> None:
    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        b = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, b, N, 256, np.zeros(256, np.uint32))

    # initialised and zero-initialised __device__ arrays, a pointer held in global data
    case(
        name="g2_device_data",
        style="globals",
        group=GROUP,
        src=PRELUDE
        + r"""
K(g2_device_data) { int i = TID; if (i >= n) return; uint32_t x = a[i];
  g2_scratch[i] = x * 3u + (uint32_t)i;
  uint32_t v = g2_scratch[i] + g2_tab[x & 15] * g2_mix[(x >> 4) & 3];
  o[i] = v + g2_ptr[(x >> 8) & 3]; }""",
        inputs=ins,
        ref=_gdata_ref,
    )
    # virtual calls on objects the kernel constructs (vtables in .nv.global.init)
    case(
        name="g2_virtual",
        style="globals",
        group=GROUP,
        src=r"""
K(g2_virtual) { int i = TID; if (i >= n) return; uint32_t x = a[i], k = x >> 8;
  G2Base o0(k); G2Mul o1(k); G2Rot o2(k); G2Sq o3(k); const G2Base *p[4] = {&o0, &o1, &o2, &o3};
  const G2Base *q = p[x % 4];
  o[i] = q->f(b[i]) + q->g(b[i]) * 5u; }""",
        inputs=ins,
        ref=_virt_ref,
    )
    # a __device__ table of function pointers, called twice (the second through the first's result)
    case(
        name="g2_fn_table",
        style="globals",
        group=GROUP,
        src=r"""
K(g2_fn_table) { int i = TID; if (i >= n) return; uint32_t x = a[i];
  uint32_t v = g2_fns[x & 3](b[i]); o[i] = g2_fns[(x >> 2) & 3](v); }""",
        inputs=ins,
        ref=_fptab_ref,
    )


def define_clock(case, Inputs) -> None:
    """The clocks (lower/clock.py): only properties a real clock has are checked — within an
    invocation a later %globaltimer read is never less than an earlier one (64 bits), and the
    SM clock's difference over a short loop (clock64(), clock()) is small and non-negative
    modulo 2^32 (lavapipe's subgroup clock counts in 32 bits: its high word stays 0, so only
    the low word's difference is a property here) — never a value."""

    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), N, 256, np.zeros(4 * 256, np.uint32))

    def ref(x):
        out = np.zeros(4 * 256, np.uint64)
        a = x.a[: x.n].astype(np.uint64)
        v = a.copy()
        for k in range(15):  # x = x * 3 + 1 repeated (x & 15) times
            v = np.where(k < (a & 15), (v * 3 + 1) & 0xFFFFFFFF, v)
        out[0 : 4 * x.n : 4] = 1
        out[1 : 4 * x.n : 4] = 1
        out[2 : 4 * x.n : 4] = v
        out[3 : 4 * x.n : 4] = 1
        return out.astype(np.uint32)

    case(
        name="g2_clock",
        style="clock",
        group="ctl2_clock",
        src=r"""
__device__ __forceinline__ uint64_t g2_gtimer() { uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
K(g2_clock) { int i = TID; if (i >= n) return;
  long long t0 = clock64(); uint64_t g0 = g2_gtimer(); uint32_t c0 = (uint32_t)clock();
  uint32_t x = a[i]; for (uint32_t k = 0; k < (a[i] & 15u); k++) x = x * 3u + 1u;
  long long t1 = clock64(); uint64_t g1 = g2_gtimer(); uint32_t c1 = (uint32_t)clock();
  o[4 * i] = (uint32_t)(t1 - t0) < 0x80000000u; o[4 * i + 1] = (int64_t)(g1 - g0) >= 0; o[4 * i + 2] = x;
  o[4 * i + 3] = (c1 - c0) < 0x80000000u; }""",
        inputs=ins,
        ref=ref,
    )


def define_cuda_barrier(case, Inputs) -> None:
    """libcu++'s ``cuda::barrier<thread_scope_block>``: arrive_and_wait three times over one
    barrier (its phases), each thread reading words others wrote before arriving (needs nvcc's
    libcu++ headers: heavy)."""

    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), 256, 256, np.zeros(256, np.uint32))

    def ref(x):
        v = x.a.reshape(-1, 64).astype(np.uint64)
        r1 = v[:, ::-1]
        r2 = (r1 * 3) & 0xFFFFFFFF
        return ((r1 + np.roll(r2, -1, axis=1)) & 0xFFFFFFFF).astype(np.uint32).ravel()

    case(
        name="g2_cuda_barrier",
        style="barrier",
        group="ctl2_cbar",
        heavy=True,
        src=r"""
#include <cuda/barrier>
K(g2_cuda_barrier) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar; __shared__ uint32_t s[64];
  int t = threadIdx.x;
  if (t == 0) init(&bar, blockDim.x);
  __syncthreads();
  s[t] = a[TID]; bar.arrive_and_wait();
  uint32_t r1 = s[63 - t]; bar.arrive_and_wait();
  s[t] = r1 * 3u; bar.arrive_and_wait();
  o[TID] = r1 + s[(t + 1) & 63]; }""",
        inputs=ins,
        ref=ref,
    )
