"""Asynchronous copies and warp-level matrix instructions of the issue-31 corpus (shader-mma):
``cp.async`` (LDGSTS, LDGDEPBAR, DEPBAR.LE SB0) and ``ldmatrix`` / ``movmatrix`` / ``mma.sync``
(LDSM, MOVM, HMMA, IMMA), written as inline PTX the way CUDA's own headers and hand-tuned
kernels write them.

These are sm_80 instructions: under ``__CUDA_ARCH__ < 800`` (the SM53 build, whose PTX comes
from compute_75 or compute_53) every kernel compiles a plain path of the same meaning (a copy
loop, the product written as loops), so both ISAs check the same reference.

References, each from the PTX ISA's definitions (never from the translator): cp.async copies
``cp-size`` bytes, the first ``src-size`` of them from global memory and zeros for the rest,
and only zeros where its ``ignore-src`` predicate holds; ldmatrix / movmatrix / mma fragments
as the PTX ISA's "Matrix Fragments" sections lay them out (the kernels store D through that
layout into a row-major matrix, so a wrong layout in the translation shows as wrong entries).
Float cases are exact: inputs are small multiples of 1/4 so that every product and partial sum
is exact in f32 (the summation order of the tensor unit is not documented; see
``shader_svc/sm86/lower_mma.py`` for the bound otherwise).
"""

from __future__ import annotations

import numpy as np

GROUP_ASYNC = "mma_async"
GROUP_MMA = "mma_tensor"

ASYNC_HELPERS = r"""
#define SHA(p) ((unsigned)__cvta_generic_to_shared(p))
#if __CUDA_ARCH__ < 800
// the plain path: N bytes, the first SZ copied and zeros for the rest, a word at a time
__device__ __forceinline__ void cpa_plain(void *d, const void *s, int sz, int N) {
  for (int k = 0; k < N / 4; k++) {
    int kb = sz - 4 * k;
    uint32_t m = kb >= 4 ? 0xffffffffu : kb <= 0 ? 0u : (1u << (8 * kb)) - 1u;
    ((uint32_t *)d)[k] = ((const uint32_t *)s)[k] & m;
  }
}
#endif
// cp.async of N bytes (4, 8, 16), the first SZ from global memory, zeros for the rest (.ca)
__device__ __forceinline__ void cpa_ca(void *d, const void *s, int sz, const int N) {
#if __CUDA_ARCH__ >= 800
  if (N == 4) asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(SHA(d)), "l"(s), "r"(sz) : "memory");
  else if (N == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" :: "r"(SHA(d)), "l"(s), "r"(sz) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" :: "r"(SHA(d)), "l"(s), "r"(sz) : "memory");
#else
  cpa_plain(d, s, sz, N);
#endif
}
// 16 bytes through L2 only (.cg), with a source size
__device__ __forceinline__ void cpa_cg(void *d, const void *s, int sz) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(SHA(d)), "l"(s), "r"(sz) : "memory");
#else
  cpa_plain(d, s, sz, 16);
#endif
}
// 16 bytes, zeros where IGN (PTX's ignore-src predicate)
__device__ __forceinline__ void cpa_ign(void *d, const void *s, int ign) {
#if __CUDA_ARCH__ >= 800
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %2, 0;\n cp.async.ca.shared.global [%0], [%1], 16, p; }\n"
               :: "r"(SHA(d)), "l"(s), "r"(ign) : "memory");
#else
  for (int k = 0; k < 4; k++) ((uint32_t *)d)[k] = ign ? 0u : ((const uint32_t *)s)[k];
#endif
}
// plain 4 / 16-byte copies
__device__ __forceinline__ void cpa4(void *d, const void *s) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(SHA(d)), "l"(s) : "memory");
#else
  *(uint32_t *)d = *(const uint32_t *)s;
#endif
}
__device__ __forceinline__ void cpa16(void *d, const void *s) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(SHA(d)), "l"(s) : "memory");
#else
  for (int k = 0; k < 4; k++) ((uint32_t *)d)[k] = ((const uint32_t *)s)[k];
#endif
}
#if __CUDA_ARCH__ >= 800
#define CPA_COMMIT() asm volatile("cp.async.commit_group;\n" ::: "memory")
#define CPA_WAIT(n) asm volatile("cp.async.wait_group %0;\n" :: "n"(n) : "memory")
#define CPA_WAIT_ALL() asm volatile("cp.async.wait_all;\n" ::: "memory")
#else
#define CPA_COMMIT()
#define CPA_WAIT(n)
#define CPA_WAIT_ALL()
#endif
"""


def _u32(r, n, lo=0, hi=2**32):
    return r.integers(lo, hi, n, dtype=np.uint64).astype(np.uint32)


def _bytes_fill(words: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Rows of words (uint32) with bytes at index >= keep (per row) set to zero."""
    by = words.view(np.uint8).reshape(len(words), -1).copy()
    by[np.arange(by.shape[1])[None, :] >= keep[:, None]] = 0
    return by.view(np.uint32).reshape(len(words), -1)


def define(case, Inputs) -> None:
    # --- cp.async every size: 4 bytes plain, 8 with a source size, 16 (.cg) with a source size,
    # 16 with the ignore-src predicate; two commit groups, wait_group 1 then wait_all; each
    # thread reads back its mirror thread's (63 - t) slots after the barrier
    t_n = 128

    def sizes_inputs(r):
        return Inputs(_u32(r, 4 * t_n), _u32(r, 4 * t_n), t_n, t_n, np.zeros(11 * t_n, np.uint32))

    def sizes_ref(x):
        i = np.arange(t_n)
        m = (i // 64) * 64 + 63 - (i % 64)  # the mirror thread's global index
        a4 = x.a.reshape(-1, 4)
        w4 = x.a[m]
        w8 = _bytes_fill(x.a.reshape(-1, 2)[m], m % 9)
        w16 = _bytes_fill(x.b.reshape(-1, 4)[m], (m * 7) % 17)
        wi = np.where((m % 3 == 0)[:, None], 0, a4[m]).astype(np.uint32)
        return np.concatenate([w4[:, None], w8, w16, wi], axis=1).ravel()

    case(
        name="cpa_sizes",
        style="async_copy",
        group=GROUP_ASYNC,
        src=ASYNC_HELPERS
        + r"""
K(cpa_sizes) {
  __shared__ __align__(16) uint32_t s[704]; int t = threadIdx.x, i = TID;
  cpa4(&s[t], &a[i]);
  cpa_ca(&s[64 + 2 * t], &a[2 * i], i % 9, 8);
  CPA_COMMIT();
  cpa_cg(&s[192 + 4 * t], &b[4 * i], (i * 7) % 17);
  cpa_ign(&s[448 + 4 * t], &a[4 * i], i % 3 == 0);
  CPA_COMMIT();
  CPA_WAIT(1);
  CPA_WAIT_ALL();
  __syncthreads();
  int u = 63 - t; uint32_t *q = o + 11 * i;
  q[0] = s[u]; q[1] = s[64 + 2 * u]; q[2] = s[65 + 2 * u];
  for (int k = 0; k < 4; k++) { q[3 + k] = s[192 + 4 * u + k]; q[7 + k] = s[448 + 4 * u + k]; }
}""",
        inputs=sizes_inputs,
        ref=sizes_ref,
    )

    # --- a double-buffered pipeline (the style of tiled kernels): tile k+1 is fetched while
    # tile k is summed; wait_group 1 inside the loop, wait_group 0 for the last tile
    tiles = 6

    def pipe_inputs(r):
        return Inputs(_u32(r, 128 * tiles), np.zeros(1, np.uint32), tiles, 128, np.zeros(128, np.uint32))

    def pipe_ref(x):
        a = x.a.reshape(tiles, 2, 64).astype(np.uint64)  # tile, block, thread
        t = np.arange(64)
        s = np.zeros((2, 64), np.uint64)
        for k in range(tiles):
            s += a[k][:, (t + k) % 64] * (k + 1)
        return s.astype(np.uint32).ravel()

    case(
        name="cpa_pipeline",
        style="async_copy",
        group=GROUP_ASYNC,
        src=r"""
K(cpa_pipeline) {
  __shared__ __align__(16) uint32_t buf[2][64]; int t = threadIdx.x, base = (TID >> 6) << 6;
  uint32_t acc = 0;
  if (t < 16) cpa16(&buf[0][4 * t], &a[base + 4 * t]);
  CPA_COMMIT();
  for (int k = 0; k < n; k++) {
    if (k + 1 < n && t < 16) cpa16(&buf[(k + 1) & 1][4 * t], &a[(k + 1) * 128 + base + 4 * t]);
    CPA_COMMIT();
    CPA_WAIT(1);
    __syncthreads();
    acc += buf[k & 1][(t + k) & 63] * (uint32_t)(k + 1);
    __syncthreads();
  }
  CPA_WAIT(0);
  o[base + t] = acc;
}""",
        inputs=pipe_inputs,
        ref=pipe_ref,
    )


MMA_HELPERS = r"""
#define LANE ((int)(threadIdx.x & 31))
#define WARP (TID >> 5)
#define SHM(p) ((unsigned)__cvta_generic_to_shared(p))
// element idx of an array of halves / bf16s / bytes held in 32-bit words
// (conversions through PTX's cvt: NVRTC has no cuda_fp16.h)
__device__ __forceinline__ float hf(const uint32_t *p, int idx) {
  unsigned short h = (unsigned short)(p[idx >> 1] >> (16 * (idx & 1))); float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float bf(const uint32_t *p, int idx) { return __uint_as_float((p[idx >> 1] >> (16 * (idx & 1))) << 16); }
__device__ __forceinline__ int s8(const uint32_t *p, int idx) { return (int)(signed char)(p[idx >> 2] >> (8 * (idx & 3))); }
__device__ __forceinline__ int u8(const uint32_t *p, int idx) { return (int)(unsigned char)(p[idx >> 2] >> (8 * (idx & 3))); }
__device__ __forceinline__ int u4(const uint32_t *p, int idx) { return (int)(p[idx >> 3] >> (4 * (idx & 7)) & 15); }
__device__ __forceinline__ int s4(const uint32_t *p, int idx) { return (u4(p, idx) ^ 8) - 8; }
"""


def _halves(r, n, scale, lo, hi, dtype=np.float16):
    """n values k * scale, k in [lo, hi], as f16 (or bf16 via f32) bits packed two a word."""
    v = r.integers(lo, hi + 1, n) * scale
    if dtype == np.float16:
        bits = v.astype(np.float16).view(np.uint16)
    else:
        bits = (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits.view(np.uint32) if n % 2 == 0 else None


def _unhalves(w, dtype=np.float16):
    u = w.view(np.uint16)
    return (
        u.view(np.float16).astype(np.float64)
        if dtype == np.float16
        else (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    )


WARPS = 4  # 128 threads, 2 blocks of 64


def define_mma(case, Inputs) -> None:
    first = [True]

    def mma_case(name, body, inputs, ref, **kw):
        src = (MMA_HELPERS if first[0] else "") + f"\nK({name}) {{\n  int l = LANE, g = l >> 2, q = l & 3, w = WARP;{body}}}"
        first[0] = False
        case(name=name, style="mma", group=GROUP_MMA, src=src, inputs=inputs, ref=ref, **kw)

    # --- HMMA.16816.F32 / .F32.BF16 and HMMA.1688.F32: fragments loaded from global memory by
    # the PTX layout, C = (row - col) / 2, D stored row-major (16 x 8 f32 a warp)
    def f32_case(name, ptx, k_dim, dtype, get, vals=(0.25, -16, 16), ulps=0):
        kw = k_dim // 2  # words a row of A / a column of B

        def inputs(r):
            a = _halves(r, WARPS * 16 * k_dim, *vals, dtype)
            bt = _halves(r, WARPS * 8 * k_dim, *vals, dtype)
            return Inputs(a, bt, 0, 32 * WARPS, np.zeros(WARPS * 128, np.uint32))

        def ref(x):
            out = []
            for w in range(WARPS):
                am = _unhalves(x.a[w * 8 * k_dim : (w + 1) * 8 * k_dim], dtype).reshape(16, k_dim)
                bm = _unhalves(x.b[w * 4 * k_dim : (w + 1) * 4 * k_dim], dtype).reshape(8, k_dim).T
                c = (np.arange(16)[:, None] - np.arange(8)[None, :]) * 0.5
                out.append((am @ bm + c + (0 if not ulps else 64)).astype(np.float32).view(np.uint32).ravel())
            return np.concatenate(out)

        na = 4 if k_dim == 16 else 2
        nb = na // 2
        a_regs = ", ".join(f"%{4 + i}" for i in range(na))
        b_regs = ", ".join(f"%{4 + na + i}" for i in range(nb))
        body = rf"""
  const uint32_t *A = a + w * {8 * k_dim}, *Bt = b + w * {4 * k_dim};
  float c[4]; for (int r = 0; r < 4; r++) c[r] = (float)((g + 8 * (r >> 1)) - (2 * q + (r & 1))) * 0.5f;
#if __CUDA_ARCH__ >= 800
  uint32_t x[4], y[2];
  for (int r = 0; r < {na}; r++) x[r] = A[(g + 8 * (r & 1)) * {kw} + q + 4 * (r >> 1)];
  for (int r = 0; r < {nb}; r++) y[r] = Bt[g * {kw} + q + 4 * r];
  asm volatile("{ptx} {{%0,%1,%2,%3}}, {{{a_regs}}}, {{{b_regs}}}, {{%0,%1,%2,%3}};\n"
    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : {", ".join(f'"r"(x[{i}])' for i in range(na))}, {", ".join(f'"r"(y[{i}])' for i in range(nb))});
#else
  for (int r = 0; r < 4; r++) {{
    int row = g + 8 * (r >> 1), col = 2 * q + (r & 1);
    for (int k = 0; k < {k_dim}; k++) c[r] += {get}(A, row * {k_dim} + k) * {get}(Bt, col * {k_dim} + k);
  }}
#endif
  for (int r = 0; r < 4; r++) o[w * 128 + (g + 8 * (r >> 1)) * 8 + 2 * q + (r & 1)] = __float_as_uint(c[r]);
"""
        if ulps:  # C + 64: every term positive, no cancellation
            body = body.replace("* 0.5f;", "* 0.5f + 64.0f;", 1)
        mma_case(name, body, inputs, ref, kind="f32" if ulps else "u32", ulps=ulps)

    f32_case("hmma_f16_k16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, np.float16, "hf")
    f32_case("hmma_f16_k8", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 8, np.float16, "hf")
    f32_case("hmma_bf16_k16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, "bf16", "bf")
    # random halves in [1/2, 1] (multiples of 2^-10), C >= 64: not exact in f32 at every partial
    # sum; within 16 ulp of the exact result (a 17-term sum of positive terms: our order's
    # error is at most 16 roundings of half an ulp of the total; the tensor unit's order is
    # not documented, so this case checks the bound, not NVIDIA's bits)
    f32_case(
        "hmma_f16_rand", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, np.float16, "hf", (2.0**-10, 512, 1024), 16
    )

    # --- HMMA.1688.F32.TF32 / HMMA.1684.F32.TF32 (m16n8k8 / m16n8k4 tf32): one element a
    # register (k8 A: (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4); B: (t, g), (t + 4, g); k4
    # the first two / the first); values multiples of 1/4 in [-4, 4] (tf32 exactly: low 13 bits
    # zero), C = (row - col) / 2, every partial sum exact
    def tf32_case(name: str, k_dim: int) -> None:
        na, nb = k_dim // 2, k_dim // 4

        def inputs(r):
            v = lambda n: (r.integers(-16, 17, n) * 0.25).astype(np.float32).view(np.uint32)  # noqa: E731
            return Inputs(v(WARPS * 16 * k_dim), v(WARPS * 8 * k_dim), 0, 32 * WARPS, np.zeros(WARPS * 128, np.uint32))

        def ref(x):
            out = []
            for w in range(WARPS):
                am = x.a.view(np.float32)[w * 16 * k_dim : (w + 1) * 16 * k_dim].reshape(16, k_dim).astype(np.float64)
                bm = x.b.view(np.float32)[w * 8 * k_dim : (w + 1) * 8 * k_dim].reshape(8, k_dim).T.astype(np.float64)
                c = (np.arange(16)[:, None] - np.arange(8)[None, :]) * 0.5
                out.append((am @ bm + c).astype(np.float32).view(np.uint32).ravel())
            return np.concatenate(out)

        a_regs = ",".join(f"%{4 + i}" for i in range(na))
        b_regs = ",".join(f"%{4 + na + i}" for i in range(nb))
        body = rf"""
  const float *A = (const float *)a + w * {16 * k_dim}, *Bt = (const float *)b + w * {8 * k_dim};
  float c[4]; for (int r = 0; r < 4; r++) c[r] = (float)((g + 8 * (r >> 1)) - (2 * q + (r & 1))) * 0.5f;
#if __CUDA_ARCH__ >= 800
  uint32_t x[4], y[2];
  for (int r = 0; r < {na}; r++) x[r] = __float_as_uint(A[(g + 8 * (r & 1)) * {k_dim} + q + 4 * (r >> 1)]);
  for (int r = 0; r < {nb}; r++) y[r] = __float_as_uint(Bt[g * {k_dim} + q + 4 * r]);
  asm volatile("mma.sync.aligned.m16n8k{k_dim}.row.col.f32.tf32.tf32.f32 {{%0,%1,%2,%3}}, {{{a_regs}}}, {{{b_regs}}}, {{%0,%1,%2,%3}};\n"
    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : {", ".join(f'"r"(x[{i}])' for i in range(na))}, {", ".join(f'"r"(y[{i}])' for i in range(nb))});
#else
  for (int r = 0; r < 4; r++) {{
    int row = g + 8 * (r >> 1), col = 2 * q + (r & 1);
    for (int k = 0; k < {k_dim}; k++) c[r] += A[row * {k_dim} + k] * Bt[col * {k_dim} + k];
  }}
#endif
  for (int r = 0; r < 4; r++) o[w * 128 + (g + 8 * (r >> 1)) * 8 + 2 * q + (r & 1)] = __float_as_uint(c[r]);
"""
        mma_case(name, body, inputs, ref)

    tf32_case("hmma_tf32_k8", 8)
    tf32_case("hmma_tf32_k4", 4)

    # --- HMMA.16816.F16: f16 accumulators (two registers a lane), C from global; values kept
    # exact in f16 at every partial sum (A: halves in [-2, 2], B: integers in [-2, 2])
    def h16_inputs(r):
        a = _halves(r, WARPS * 256, 0.5, -4, 4)
        bt = _halves(r, WARPS * 128, 1.0, -2, 2)
        cm = _halves(r, WARPS * 128, 0.5, -8, 8)
        return Inputs(a, np.concatenate([bt, cm]), 0, 32 * WARPS, np.zeros(WARPS * 64, np.uint32))

    def h16_ref(x):
        out = []
        for w in range(WARPS):
            am = _unhalves(x.a[w * 128 : (w + 1) * 128]).reshape(16, 16)
            bm = _unhalves(x.b[w * 64 : (w + 1) * 64]).reshape(8, 16).T
            cm = _unhalves(x.b[WARPS * 64 + w * 64 : WARPS * 64 + (w + 1) * 64]).reshape(16, 8)
            out.append((am @ bm + cm).astype(np.float16).view(np.uint32).ravel())
        return np.concatenate(out)

    mma_case(
        "hmma_f16_acc",
        rf"""
  const uint32_t *A = a + w * 128, *Bt = b + w * 64, *C = b + {WARPS * 64} + w * 64;
  uint32_t d[2] = {{C[g * 4 + q], C[(g + 8) * 4 + q]}};
#if __CUDA_ARCH__ >= 800
  uint32_t x[4], y[2];
  for (int r = 0; r < 4; r++) x[r] = A[(g + 8 * (r & 1)) * 8 + q + 4 * (r >> 1)];
  for (int r = 0; r < 2; r++) y[r] = Bt[g * 8 + q + 4 * r];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {{%0,%1}}, {{%2,%3,%4,%5}}, {{%6,%7}}, {{%0,%1}};\n"
    : "+r"(d[0]), "+r"(d[1]) : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]));
#else
  for (int h = 0; h < 2; h++) {{
    unsigned short p[2];
    for (int j = 0; j < 2; j++) {{
      int row = g + 8 * h, col = 2 * q + j; float acc = hf(C, row * 8 + col);
      for (int k = 0; k < 16; k++) acc += hf(A, row * 16 + k) * hf(Bt, col * 16 + k);
      p[j] = f2h(acc);
    }}
    d[h] = p[0] | (uint32_t)p[1] << 16;
  }}
#endif
  o[w * 64 + g * 4 + q] = d[0]; o[w * 64 + (g + 8) * 4 + q] = d[1];
""",
        h16_inputs,
        h16_ref,
    )

    # --- IMMA: m8n8k16 s8 x s8 (IMMA.8816) and m16n8k32 u8 x s8 (IMMA.16832), random bytes,
    # C = 1000 row - col; exact 32-bit sums
    def imma_case(name, ptx, m, k_dim, ga, gb):
        per = 8 if ga in ("s4", "u4") else 4  # elements a 32-bit word
        kw, nb = k_dim // per, k_dim // (4 * per)
        na, nc = (m // 8) * nb, m // 4

        def elems(words, kind):
            if per == 4:
                return words.view(np.int8 if kind == "s8" else np.uint8).astype(np.int64)
            by = words.view(np.uint8).astype(np.int64)
            v = np.stack([by & 15, by >> 4], axis=-1).ravel()  # element 2j in the low nibble
            return (v ^ 8) - 8 if kind == "s4" else v

        def inputs(r):
            return Inputs(_u32(r, WARPS * m * kw), _u32(r, WARPS * 8 * kw), 0, 32 * WARPS, np.zeros(WARPS * m * 8, np.uint32))

        def ref(x):
            out = []
            for w in range(WARPS):
                ab = elems(x.a[w * m * kw : (w + 1) * m * kw], ga)
                bb = elems(x.b[w * 8 * kw : (w + 1) * 8 * kw], gb)
                c = np.arange(m)[:, None] * 1000 - np.arange(8)[None, :]
                out.append((ab.reshape(m, k_dim) @ bb.reshape(8, k_dim).T + c).astype(np.int64).astype(np.uint32).ravel())
            return np.concatenate(out)

        a_regs = ", ".join(f"%{nc + i}" for i in range(na))
        b_regs = ", ".join(f"%{nc + na + i}" for i in range(nb))
        d_regs = ", ".join(f"%{i}" for i in range(nc))
        body = rf"""
  const uint32_t *A = a + w * {m * kw}, *Bt = b + w * {8 * kw};
  int c[4]; for (int r = 0; r < {nc}; r++) c[r] = (g + 8 * (r >> 1)) * 1000 - (2 * q + (r & 1));
#if __CUDA_ARCH__ >= 800
  uint32_t x[4], y[2];
  for (int r = 0; r < {na}; r++) x[r] = A[(g + 8 * (r & 1)) * {kw} + q + 4 * (r >> 1)];
  for (int r = 0; r < {nb}; r++) y[r] = Bt[g * {kw} + q + 4 * r];
  asm volatile("{ptx} {{{d_regs}}}, {{{a_regs}}}, {{{b_regs}}}, {{{d_regs}}};\n"
    : {", ".join(f'"+r"(c[{i}])' for i in range(nc))} : {", ".join(f'"r"(x[{i}])' for i in range(na))}, {", ".join(f'"r"(y[{i}])' for i in range(nb))});
#else
  for (int r = 0; r < {nc}; r++) {{
    int row = g + 8 * (r >> 1), col = 2 * q + (r & 1);
    // (mad.lo in PTX: nvcc would otherwise build dp4a / dp2a, which sm_53 lacks)
    for (int k = 0; k < {k_dim}; k++)
      asm("mad.lo.s32 %0, %1, %2, %0;" : "+r"(c[r]) : "r"({ga}(A, row * {k_dim} + k)), "r"({gb}(Bt, col * {k_dim} + k)));
  }}
#endif
  for (int r = 0; r < {nc}; r++) o[w * {m * 8} + (g + 8 * (r >> 1)) * 8 + 2 * q + (r & 1)] = (uint32_t)c[r];
"""
        mma_case(name, body, inputs, ref)

    imma_case("imma_s8_8816", "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 8, 16, "s8", "s8")
    imma_case("imma_u8s8_16832", "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32", 16, 32, "u8", "s8")
    imma_case("imma_s8u8_16816", "mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32", 16, 16, "s8", "u8")
    imma_case("imma_s4u4_8832", "mma.sync.aligned.m8n8k32.row.col.s32.s4.u4.s32", 8, 32, "s4", "u4")
    imma_case("imma_u4s4_16832", "mma.sync.aligned.m16n8k32.row.col.s32.u4.s4.s32", 16, 32, "u4", "s4")
    imma_case("imma_s4_16864", "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 16, 64, "s4", "s4")

    # --- BMMA: .b1 m8n8k128 .xor, m16n8k128 .and, m16n8k256 .xor (with .popc), random bits,
    # C = 1000 row - col; d = C + popcount(row AND / XOR column) over K bits
    def bmma_case(name, ptx, m, kw, op):
        na, nb, nc = (m // 8) * (kw // 4), kw // 4, m // 4

        def inputs(r):
            return Inputs(_u32(r, WARPS * m * kw), _u32(r, WARPS * 8 * kw), 0, 32 * WARPS, np.zeros(WARPS * m * 8, np.uint32))

        def ref(x):
            out = []
            for w in range(WARPS):
                am = x.a[w * m * kw : (w + 1) * m * kw].reshape(m, 1, kw)
                bm = x.b[w * 8 * kw : (w + 1) * 8 * kw].reshape(1, 8, kw)
                v = (am & bm) if op == "&" else (am ^ bm)
                pop = np.unpackbits(v.view(np.uint8), axis=-1).reshape(m, 8, -1).sum(axis=-1)
                c = np.arange(m)[:, None] * 1000 - np.arange(8)[None, :]
                out.append((pop + c).astype(np.int64).astype(np.uint32).ravel())
            return np.concatenate(out)

        d_regs = ", ".join(f"%{i}" for i in range(nc))
        a_regs = ", ".join(f"%{nc + i}" for i in range(na))
        b_regs = ", ".join(f"%{nc + na + i}" for i in range(nb))
        body = rf"""
  const uint32_t *A = a + w * {m * kw}, *Bt = b + w * {8 * kw};
  int c[4]; for (int r = 0; r < {nc}; r++) c[r] = (g + 8 * (r >> 1)) * 1000 - (2 * q + (r & 1));
#if __CUDA_ARCH__ >= 800
  uint32_t x[4], y[2];
  for (int r = 0; r < {na}; r++) x[r] = A[(g + 8 * (r & 1)) * {kw} + q + 4 * (r >> 1)];
  for (int r = 0; r < {nb}; r++) y[r] = Bt[g * {kw} + q + 4 * r];
  asm volatile("{ptx} {{{d_regs}}}, {{{a_regs}}}, {{{b_regs}}}, {{{d_regs}}};\n"
    : {", ".join(f'"+r"(c[{i}])' for i in range(nc))} : {", ".join(f'"r"(x[{i}])' for i in range(na))}, {", ".join(f'"r"(y[{i}])' for i in range(nb))});
#else
  for (int r = 0; r < {nc}; r++) {{
    int row = g + 8 * (r >> 1), col = 2 * q + (r & 1);
    for (int k = 0; k < {kw}; k++) c[r] += __popc(A[row * {kw} + k] {op} Bt[col * {kw} + k]);
  }}
#endif
  for (int r = 0; r < {nc}; r++) o[w * {m * 8} + (g + 8 * (r >> 1)) * 8 + 2 * q + (r & 1)] = (uint32_t)c[r];
"""
        mma_case(name, body, inputs, ref)

    bmma_case("bmma_xor_88128", "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", 8, 4, "^")
    bmma_case("bmma_and_168128", "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc", 16, 4, "&")
    bmma_case("bmma_xor_168256", "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc", 16, 8, "^")

    # --- DMMA.884 (m8n8k4 f64): A 8 x 4 row-major, B stored column-major, C = (row - col) / 4;
    # values multiples of 1/4 in [-8, 8]: every fused step exact
    def dmma_inputs(r):
        v = lambda n: (r.integers(-32, 33, n) * 0.25).view(np.uint32)  # noqa: E731
        return Inputs(v(WARPS * 32), v(WARPS * 32), 0, 32 * WARPS, np.zeros(WARPS * 128, np.uint32))

    def dmma_ref(x):
        out = []
        for w in range(WARPS):
            am = x.a.view(np.float64)[w * 32 : (w + 1) * 32].reshape(8, 4)
            bm = x.b.view(np.float64)[w * 32 : (w + 1) * 32].reshape(8, 4).T
            c = (np.arange(8)[:, None] - np.arange(8)[None, :]) * 0.25
            out.append((am @ bm + c).view(np.uint32).ravel())
        return np.concatenate(out)

    mma_case(
        "dmma_884",
        r"""
  const double *A = (const double *)a + w * 32, *Bt = (const double *)b + w * 32;
  double c[2] = {(g - 2 * q) * 0.25, (g - 2 * q - 1) * 0.25};
#if __CUDA_ARCH__ >= 800
  double x = A[g * 4 + q], y = Bt[g * 4 + q];
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n" : "+d"(c[0]), "+d"(c[1]) : "d"(x), "d"(y));
#else
  for (int j = 0; j < 2; j++)
    for (int k = 0; k < 4; k++) c[j] = __fma_rn(A[g * 4 + k], Bt[(2 * q + j) * 4 + k], c[j]);
#endif
  for (int j = 0; j < 2; j++) ((double *)o)[w * 64 + g * 8 + 2 * q + j] = c[j];
""",
        dmma_inputs,
        dmma_ref,
    )

    # --- ldmatrix .x4 (A's fragment of a 16 x 16 b16 tile), .x2.trans (B's fragment of a 16 x 8
    # tile stored k-major), movmatrix .trans of the first register, .x1 (B's first 8 rows) and
    # .x4.trans of the 16 x 16 tile; the registers stored raw, 12 words a lane
    def ldsm_inputs(r):
        return Inputs(_u32(r, WARPS * 192), np.zeros(1, np.uint32), 0, 32 * WARPS, np.zeros(WARPS * 32 * 12, np.uint32))

    def ldsm_ref(x):
        out = np.zeros((WARPS, 32, 12), np.uint32)
        for w in range(WARPS):
            h = x.a[w * 192 : (w + 1) * 192].view(np.uint16)
            mt, bm = h[:256].reshape(16, 16), h[256:].reshape(16, 8)
            for lane in range(32):
                g, q = lane >> 2, lane & 3
                for j in range(4):  # matrix j: rows 8 (j & 1).., columns 8 (j >> 1)..
                    r0, c0 = 8 * (j & 1) + g, 8 * (j >> 1) + 2 * q
                    out[w, lane, j] = int(mt[r0, c0]) | int(mt[r0, c0 + 1]) << 16
                for j in range(2):
                    out[w, lane, 4 + j] = int(bm[8 * j + 2 * q, g]) | int(bm[8 * j + 2 * q + 1, g]) << 16
                out[w, lane, 6] = int(mt[2 * q, g]) | int(mt[2 * q + 1, g]) << 16  # matrix 0 transposed
                out[w, lane, 7] = int(bm[g, 2 * q]) | int(bm[g, 2 * q + 1]) << 16  # .x1: B's rows 0..7
                for j in range(4):  # .x4.trans of the 16 x 16 tile
                    r0, c0 = 8 * (j & 1) + 2 * q, 8 * (j >> 1) + g
                    out[w, lane, 8 + j] = int(mt[r0, c0]) | int(mt[r0 + 1, c0]) << 16
        return out.ravel()

    mma_case(
        "ldsm_movm",
        r"""
  __shared__ __align__(16) uint32_t sm[2][192]; int v = (threadIdx.x >> 5) & 1;
  for (int k = l; k < 192; k += 32) sm[v][k] = a[w * 192 + k];
  __syncthreads();  // (not __syncwarp: Maxwell's warps need none, so the emulated warp gets none)
  const unsigned short *H = (const unsigned short *)sm[v];
  uint32_t r[12];
#if __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
    : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SHM(&H[(l & 15) * 16 + (l >> 4) * 8])));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
    : "=r"(r[4]), "=r"(r[5]) : "r"(SHM(&H[256 + (l & 15) * 8])));
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(r[6]) : "r"(r[0]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[7]) : "r"(SHM(&H[256 + (l & 7) * 8])));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
    : "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]) : "r"(SHM(&H[(l & 15) * 16 + (l >> 4) * 8])));
#else
  for (int j = 0; j < 4; j++) { int r0 = 8 * (j & 1) + g, c0 = 8 * (j >> 1) + 2 * q;
    r[j] = H[r0 * 16 + c0] | (uint32_t)H[r0 * 16 + c0 + 1] << 16; }
  for (int j = 0; j < 2; j++) r[4 + j] = H[256 + (8 * j + 2 * q) * 8 + g] | (uint32_t)H[256 + (8 * j + 2 * q + 1) * 8 + g] << 16;
  r[6] = H[2 * q * 16 + g] | (uint32_t)H[(2 * q + 1) * 16 + g] << 16;
  r[7] = H[256 + g * 8 + 2 * q] | (uint32_t)H[256 + g * 8 + 2 * q + 1] << 16;
  for (int j = 0; j < 4; j++) { int r0 = 8 * (j & 1) + 2 * q, c0 = 8 * (j >> 1) + g;
    r[8 + j] = H[r0 * 16 + c0] | (uint32_t)H[(r0 + 1) * 16 + c0] << 16; }
#endif
  for (int k = 0; k < 12; k++) o[(w * 32 + l) * 12 + k] = r[k];
""",
        ldsm_inputs,
        ldsm_ref,
    )


def define_pipeline(case, Inputs) -> None:
    """``__pipeline_memcpy_async`` / ``__pipeline_commit`` / ``__pipeline_wait_prior`` of CUDA's
    ``cuda_pipeline.h`` (nvcc's header: NVRTC has none, so the kernel is heavy): the header's
    own cp.async sequence, a 16-byte and an 8-byte copy with zero fill."""

    def inputs(r):
        return Inputs(_u32(r, 4 * 128), _u32(r, 2 * 128), 128, 128, np.zeros(6 * 128, np.uint32))

    def ref(x):
        i = np.arange(128)
        m = (i // 64) * 64 + 63 - (i % 64)
        w16 = x.a.reshape(-1, 4)[m]
        w8 = _bytes_fill(x.b.reshape(-1, 2)[m], np.full(128, 4))
        return np.concatenate([w16, w8], axis=1).ravel()

    case(
        name="cpa_pipeline_prims",
        style="async_copy",
        group="mma_pipeline",
        heavy=True,
        src=r"""
#include <cuda_pipeline.h>
K(cpa_pipeline_prims) {
  __shared__ __align__(16) uint32_t s[64 * 6]; int t = threadIdx.x, i = TID;
  __pipeline_memcpy_async(&s[4 * t], &a[4 * i], 16);
  __pipeline_commit();
  __pipeline_memcpy_async(&s[256 + 2 * t], &b[2 * i], 8, 4);
  __pipeline_commit();
  __pipeline_wait_prior(1);
  __pipeline_wait_prior(0);
  __syncthreads();
  int u = 63 - t;
  for (int k = 0; k < 4; k++) o[6 * i + k] = s[4 * u + k];
  o[6 * i + 4] = s[256 + 2 * u]; o[6 * i + 5] = s[257 + 2 * u];
}""",
        inputs=inputs,
        ref=ref,
    )
