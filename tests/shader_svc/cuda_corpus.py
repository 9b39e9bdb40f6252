"""A corpus of ordinary CUDA kernels, each with a numpy reference, and the four checks every
kernel goes through on both ISAs (SM86 by nvcc, SM53 by nvcc's PTX + ptxas 12.9; -O3 and -G):

1. decode: every instruction prints as nvdisasm prints it (raw mode, so branch targets are
   addresses on both sides);
2. translate: the lowering makes a module (a refusal is a ``TranslateError``/``DecodeError``
   naming offset and form: recorded, never hidden);
3. spirv-val accepts it (Vulkan 1.2);
4. run on lavapipe: the output buffer equals the numpy reference — exactly for integers, and
   for floats exactly where every operation is correctly rounded (FADD/FMUL/FFMA, DADD/DMUL/
   DFMA, conversions; the kernels use __fmaf_rn/__dmul_rn... where contraction would change the
   result), within ``Case.ulps`` where the kernel uses an approximate unit (MUFU).

Every kernel has the signature ``K(name)`` = ``(const uint32_t *a, const uint32_t *b,
uint32_t *o, int n)``, runs in 64-wide blocks, and is compiled together with the others of
its file (one nvcc run per style, ISA and optimisation level).

Run as a script (``python tests/shader_svc/cuda_corpus.py [--isa 86] [--opt O3] [-k name]``)
it prints one line per kernel and the coverage table (``coverage.py``)."""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

HEADER = r"""
#include <stdint.h>
#define K(name) extern "C" __global__ void name(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b, \
                                                 uint32_t *__restrict__ o, int n)
#define TID ((int)(blockIdx.x * blockDim.x + threadIdx.x))
"""
BLOCK = 64


@dataclass
class Inputs:
    a: np.ndarray  # uint32 words
    b: np.ndarray
    n: int  # the kernel's n parameter
    threads: int  # threads launched (rounded up to blocks of 64)
    out: np.ndarray  # the output buffer's initial words
    # surface pool entries 0, 1...: uint32 arrays (2D: rows = y) or (kind, array) with kind 1D,
    # 1D_ARRAY, 2D_ARRAY, 3D (``vk_compute.ComputeDevice.image``), bound as storage images; the
    # kernel's result is the output words followed by every surface's words after the run
    surfaces: list = field(default_factory=list)
    # shader-tex: texture pool entries 0, 1...: lists of float32 (h, w, 4) mip levels
    # (``compute_textures.py``), and parameter bytes after n (from c[0x0][0x17c])
    textures: list = field(default_factory=list)
    extra: bytes = b""


@dataclass
class Case:
    name: str
    style: str
    src: str  # the kernel's CUDA text (uses K(name))
    inputs: Callable[[np.random.Generator], Inputs]
    ref: Callable[[Inputs], np.ndarray]  # the expected output words
    kind: str = "u32"  # how outputs compare: u32 (exact), f32, f64
    ulps: int = 0  # allowed distance for f32/f64 outputs
    heavy: bool = False  # left out of CI's slice
    group: str = "base"  # compiled together (one nvcc/ptxas run per group)
    # shader-assert: the lowest sm_XX the kernel is for (as CUDA code guards with __CUDA_ARCH__):
    # below it the ISA pair is not built, and the summary says "not applicable" with ptxas's
    # refusal (which the test checks)
    min_sm: int = 0
    # shader-assert: the global thread indices whose assert(...) fails (None: none may), and
    # the assertion's text as nvcc passes it
    asserts: Callable[[Inputs], set] | None = None
    assert_text: str = ""
    # shader-video: the SM86 reference where it differs from ``ref`` (PTX's video instructions,
    # which SM86 lacks: ptxas's emulation, as an H100 computes it; cuda_corpus_video.py)
    ref86: Callable[[Inputs], np.ndarray] | None = None

    def reference(self, isa: int) -> Callable[[Inputs], np.ndarray]:
        return self.ref86 if isa == 86 and self.ref86 is not None else self.ref


CASES: list[Case] = []


def case(**kw) -> Case:
    c = Case(**kw)
    CASES.append(c)
    return c


def u32(rng: np.random.Generator, n: int, lo: int = 0, hi: int = 2**32) -> np.ndarray:
    return rng.integers(lo, hi, n, dtype=np.uint64).astype(np.uint32)


def plain(n: int, a: np.ndarray, b: np.ndarray | None = None, out_words: int | None = None, threads: int | None = None) -> Inputs:
    b = np.zeros(1, np.uint32) if b is None else b
    return Inputs(a, b, n, threads if threads is not None else n, np.zeros(out_words or n, np.uint32))


# ---------------------------------------------------------------------------------------------
# The eight (step 1): reduction, scan, histogram with atomics, matrix product with
# shared memory, stencil, warp-shuffle reduction, 64-bit integer math, double math.
case(
    name="reduce_sum",
    style="reduction",
    src=r"""
K(reduce_sum) {
  __shared__ uint32_t s[64]; int t = threadIdx.x, i = TID;
  s[t] = i < n ? a[i] : 0; __syncthreads();
  for (int w = 32; w > 0; w >>= 1) { if (t < w) s[t] += s[t + w]; __syncthreads(); }
  if (t == 0) o[blockIdx.x] = s[0];
}""",
    inputs=lambda r: plain(250, u32(r, 256), out_words=4, threads=256),
    ref=lambda x: np.add.reduceat(np.where(np.arange(256) < x.n, x.a, 0).astype(np.uint64), np.arange(0, 256, 64)).astype(
        np.uint32
    ),
)

case(
    name="scan_incl",
    style="scan",
    src=r"""
K(scan_incl) {
  __shared__ uint32_t s[64]; int t = threadIdx.x, i = TID;
  s[t] = i < n ? a[i] : 0; __syncthreads();
  for (int d = 1; d < 64; d <<= 1) { uint32_t v = t >= d ? s[t - d] : 0; __syncthreads(); s[t] += v; __syncthreads(); }
  if (i < n) o[i] = s[t];
}""",
    inputs=lambda r: plain(200, u32(r, 256), out_words=256, threads=256),
    ref=lambda x: (
        np.concatenate(
            [np.cumsum(x.a[:200].reshape(-1)[k : k + 64].astype(np.uint64)) for k in range(0, 200, 64)] + [np.zeros(56)]
        )
        .astype(np.uint64)
        .astype(np.uint32)
    ),
)

case(
    name="histogram",
    style="histogram",
    src=r"""
K(histogram) { int i = TID; if (i < n) atomicAdd(&o[a[i] & 15], 1u); }""",
    inputs=lambda r: plain(300, u32(r, 320), out_words=16),
    ref=lambda x: np.bincount(x.a[: x.n] & 15, minlength=16).astype(np.uint32),
)

case(
    name="matmul_sh",
    style="matmul",
    src=r"""
K(matmul_sh) {
  // an n x n float matrix product (n a multiple of 8) in 8x8 shared-memory tiles, one thread per element
  __shared__ float ta[8][8], tb[8][8];
  const float *A = (const float *)a, *B = (const float *)b; float *C = (float *)o;
  int tx = threadIdx.x & 7, ty = threadIdx.x >> 3, bx = blockIdx.x % (n / 8), by = blockIdx.x / (n / 8);
  int r = by * 8 + ty, c = bx * 8 + tx; float acc = 0.f;
  for (int k = 0; k < n; k += 8) {
    ta[ty][tx] = A[r * n + k + tx]; tb[ty][tx] = B[(k + ty) * n + c]; __syncthreads();
    for (int j = 0; j < 8; j++) acc = __fmaf_rn(ta[ty][j], tb[j][tx], acc);
    __syncthreads();
  }
  C[r * n + c] = acc;
}""",
    inputs=lambda r: Inputs(
        r.integers(-8, 9, 256).astype(np.float32).view(np.uint32),
        r.integers(-8, 9, 256).astype(np.float32).view(np.uint32),
        16,
        256,
        np.zeros(256, np.uint32),
    ),
    ref=lambda x: (
        (x.a.view(np.float32).reshape(16, 16).astype(np.float64) @ x.b.view(np.float32).reshape(16, 16))
        .astype(np.float32)
        .view(np.uint32)
        .ravel()
    ),
    kind="f32",
)

case(
    name="stencil3",
    style="stencil",
    src=r"""
K(stencil3) {
  int i = TID;
  if (i < n) { int l = i > 0 ? a[i - 1] : 0, r = i < n - 1 ? a[i + 1] : 0; o[i] = (uint32_t)(l + 2 * (int)a[i] - r); }
}""",
    inputs=lambda r: plain(300, u32(r, 320)),
    ref=lambda x: _stencil3(x),
)


def _stencil3(x: Inputs) -> np.ndarray:
    a = x.a[: x.n].astype(np.int64)
    l_, r_ = np.concatenate([[0], a[:-1]]), np.concatenate([a[1:], [0]])
    out = np.zeros(len(x.out), np.uint32)
    out[: x.n] = ((l_ + 2 * a - r_) % 2**32).astype(np.uint32)
    return out


case(
    name="warp_reduce",
    style="warp",
    src=r"""
K(warp_reduce) {
  int i = TID; uint32_t v = i < n ? a[i] : 0;
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  if ((threadIdx.x & 31) == 0) o[i >> 5] = v;
}""",
    inputs=lambda r: plain(250, u32(r, 256), out_words=8, threads=256),
    ref=lambda x: np.where(np.arange(256) < x.n, x.a, 0).astype(np.uint64).reshape(8, 32).sum(1).astype(np.uint32),
)


def _i64(x: Inputs) -> np.ndarray:
    A, B = x.a.view(np.uint64)[: x.n], x.b.view(np.uint64)[: x.n]
    sa = A.view(np.int64)
    s = B & np.uint64(63)
    d = B | np.uint64(1)
    m = ((B | np.uint64(1)) & np.uint64(0xFFFF)).astype(np.int64)
    with np.errstate(over="ignore"):
        cols = [
            A * B + (A >> np.uint64(13)),
            (sa >> s.astype(np.int64)).view(np.uint64) ^ (A << s),
            A // d,
            np.fmod(sa, m).view(np.uint64),
        ]
    return np.stack(cols, 1).ravel().view(np.uint32)


case(
    name="int64_math",
    style="int64",
    src=r"""
K(int64_math) {
  int i = TID;
  if (i < n) {
    const uint64_t *A = (const uint64_t *)a, *B = (const uint64_t *)b; uint64_t *O = (uint64_t *)o;
    uint64_t x = A[i], y = B[i]; int64_t sx = (int64_t)x;
    O[4 * i] = x * y + (x >> 13);
    O[4 * i + 1] = (uint64_t)(sx >> (y & 63)) ^ (x << (y & 63));
    O[4 * i + 2] = x / (y | 1);
    O[4 * i + 3] = (uint64_t)(sx % (int64_t)((y | 1) & 0xffff));
  }
}""",
    inputs=lambda r: Inputs(u32(r, 256), u32(r, 256), 100, 100, np.zeros(800, np.uint32)),
    ref=lambda x: _i64(x),
)


def _dbl(x: Inputs) -> np.ndarray:
    from fractions import Fraction

    X, Y = x.a.view(np.float64)[: x.n], x.b.view(np.float64)[: x.n]
    fma = np.array([float(Fraction(float(p)) * Fraction(float(q)) - Fraction(float(p))) for p, q in zip(X, Y)])
    with np.errstate(all="ignore"):
        third = np.where(X < Y, X - Y, np.trunc(X * 0.5).astype(np.int64).astype(np.int32).astype(np.float64))
        return np.stack([X * Y + X, fma, third], 1).ravel().view(np.uint32)


case(
    name="double_math",
    style="double",
    src=r"""
K(double_math) {
  int i = TID;
  if (i < n) {
    const double *A = (const double *)a, *B = (const double *)b; double *O = (double *)o;
    double x = A[i], y = B[i];
    O[3 * i] = __dadd_rn(__dmul_rn(x, y), x);
    O[3 * i + 1] = __fma_rn(x, y, -x);
    O[3 * i + 2] = x < y ? x - y : (double)(int)(x * 0.5);
  }
}""",
    inputs=lambda r: Inputs(
        (r.standard_normal(128) * 1e3).view(np.uint32),
        (r.standard_normal(128) * 1e3).view(np.uint32),
        100,
        100,
        np.zeros(600, np.uint32),
    ),
    ref=lambda x: _dbl(x),
    kind="f64",
)


# ---------------------------------------------------------------------------------------------
# Generated styles (toward the 200): each template x operator x type is one kernel with
# its numpy reference.  heavy=True: left to the heavy run.

_RED_OPS = {
    "add": ("v + w", lambda x, y: x + y),
    "xor": ("v ^ w", lambda x, y: x ^ y),
    "or": ("v | w", lambda x, y: x | y),
    "and": ("v & w", lambda x, y: x & y),
    "min": ("min(v, w)", np.minimum),
    "max": ("max(v, w)", np.maximum),
}
_TYPES = {"u32": ("uint32_t", np.uint32), "s32": ("int32_t", np.int32)}


def _block_reduce_ref(op, dt):
    def ref(x: Inputs) -> np.ndarray:
        a = x.a[:256].view(dt).reshape(4, 64)
        out = a[:, 0].copy()
        for j in range(1, 64):
            out = op(out, a[:, j]).astype(dt)
        return out.view(np.uint32)

    return ref


def _warp_reduce_ref(op, dt):
    def ref(x: Inputs) -> np.ndarray:
        a = x.a[:256].view(dt).reshape(8, 32)
        out = a[:, 0].copy()
        for j in range(1, 32):
            out = op(out, a[:, j]).astype(dt)
        return out.view(np.uint32)

    return ref


def _red_inputs(op_name: str, words: int, out_words: int):
    """Inputs whose reduction is not a constant: AND over words with one bit cleared each, OR
    over words with one bit set each (random words would AND to 0 and OR to ~0)."""

    def make(r: np.random.Generator) -> Inputs:
        if op_name == "and":
            a = (~(np.uint32(1) << r.integers(0, 32, words).astype(np.uint32))).astype(np.uint32)
        elif op_name == "or":
            a = (np.uint32(1) << r.integers(0, 32, words).astype(np.uint32)).astype(np.uint32)
        else:
            a = u32(r, words)
        return plain(words, a, out_words=out_words, threads=words)

    return make


for _on, (_expr, _op) in _RED_OPS.items():
    for _tn, (_ct, _dt) in _TYPES.items():
        case(
            name=f"gen_reduce_{_on}_{_tn}",
            style="reduction",
            heavy=True,
            src=f"""
K(gen_reduce_{_on}_{_tn}) {{
  __shared__ {_ct} s[64]; int t = threadIdx.x;
  s[t] = (({_ct} *)a)[TID]; __syncthreads();
  for (int k = 32; k > 0; k >>= 1) {{ if (t < k) {{ {_ct} v = s[t], w = s[t + k]; s[t] = {_expr}; }} __syncthreads(); }}
  if (t == 0) (({_ct} *)o)[blockIdx.x] = s[0];
}}""",
            inputs=_red_inputs(_on, 256, 4),
            ref=_block_reduce_ref(_op, _dt),
        )
        case(
            name=f"gen_warp_{_on}_{_tn}",
            style="warp",
            heavy=True,
            src=f"""
K(gen_warp_{_on}_{_tn}) {{
  {_ct} v = (({_ct} *)a)[TID];
  for (int k = 16; k > 0; k >>= 1) {{ {_ct} w = __shfl_xor_sync(0xffffffffu, v, k); v = {_expr}; }}
  if ((threadIdx.x & 31) == 0) (({_ct} *)o)[TID >> 5] = v;
}}""",
            inputs=_red_inputs(_on, 256, 8),
            ref=_warp_reduce_ref(_op, _dt),
        )

# element-wise integer expressions (C semantics on uint32/int32; shifts masked to the width)
_ELEM = {
    "mulhi": ("__umulhi(x, y)", lambda x, y: ((x.astype(np.uint64) * y) >> 32).astype(np.uint32)),
    "mad": ("x * y + (x >> 3)", lambda x, y: x * y + (x >> 3)),
    "rotl": ("(x << (y & 31)) | (x >> ((32 - (y & 31)) & 31))", lambda x, y: (x << (y & 31)) | (x >> ((32 - (y & 31)) & 31))),
    "popc": (
        "__popc(x) + __clz(y) * 64u",
        lambda x, y: (
            np.array([bin(int(v)).count("1") for v in x], np.uint32)
            + np.array([32 - int(v).bit_length() for v in y], np.uint32) * 64
        ),
    ),
    "brev": ("__brev(x) ^ y", lambda x, y: np.array([int(f"{int(v):032b}"[::-1], 2) for v in x], np.uint32) ^ y),
    "select": ("x > y ? x - y : y - x", lambda x, y: np.where(x > y, x - y, y - x)),
    "sdiv": (
        "(uint32_t)((int)x / (int)(y | 1))",
        lambda x, y: (np.trunc(x.view(np.int32).astype(np.float64) / (y | 1).view(np.int32))).astype(np.int64).astype(np.uint32),
    ),
    "udiv": ("x / (y | 1u) + x % (y | 1u)", lambda x, y: x // (y | 1) + x % (y | 1)),
    "bytes": ("__byte_perm(x, y, 0x5140)", lambda x, y: _byte_perm(x, y, 0x5140)),
    "sat": ("(uint32_t)min(max((int)x, -1000), 1000)", lambda x, y: np.clip(x.view(np.int32), -1000, 1000).view(np.uint32)),
}


def _byte_perm(x, y, sel):
    both = x.astype(np.uint64) | (y.astype(np.uint64) << 32)
    out = np.zeros_like(x)
    for i in range(4):
        b = (sel >> (4 * i)) & 7
        out |= ((both >> np.uint64(8 * b)) & np.uint64(0xFF)).astype(np.uint32) << (8 * i)
    return out


def _elem_ref(fn):
    def ref(x: Inputs) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.a[: x.n], x.b[: x.n]), np.uint32)

    return ref


for _en, (_expr, _fn) in _ELEM.items():
    case(
        name=f"gen_elem_{_en}",
        style="integer",
        heavy=True,
        src=f"""
K(gen_elem_{_en}) {{ int i = TID; if (i < n) {{ uint32_t x = a[i], y = b[i]; o[i] = {_expr}; }} }}""",
        inputs=lambda r: Inputs(u32(r, 200), u32(r, 200), 200, 200, np.zeros(200, np.uint32)),
        ref=_elem_ref(_fn),
    )


import cuda_corpus_more  # noqa: E402  (the rest of the corpus, registered through ``case``)
import cuda_corpus_surf  # noqa: E402  (surfaces: storage images of the surface pool)

cuda_corpus_more.define(case, Inputs)
cuda_corpus_more.define_mem(case, Inputs)  # shader-mem: the atomic_mem group
cuda_corpus_more.define_shader_alu(case, Inputs)  # shader-alu's kernels (half comparisons, NaN min/max, f32 pairs to halves)
cuda_corpus_more.define_shader_alu_directed(case, Inputs)  # shader-alu: directed rounding at the edges
cuda_corpus_surf.define(case, Inputs)
cuda_corpus_more.define_shader_gaps2(case, Inputs)  # shader-gaps2: half constants beyond the 9-bit forms
import cuda_corpus_tex  # noqa: E402  (shader-tex: texture objects, the texture pools)

cuda_corpus_tex.define(case, Inputs)
cuda_corpus_tex.define_match(case, Inputs)  # shader-tex: MATCH on the emulated warp
cuda_corpus_tex.define_fetch(case, Inputs)  # shader-tex: TLD .LZ / .LL.CL (integer fetches)
cuda_corpus_tex.define_grad3(case, Inputs)  # shader-ndv: tex3DGrad (ptxas's quad loop: TEX.NDV, BMOV, MOV lane masks)
cuda_corpus_tex.define_one_dim(case, Inputs)  # shader-ndv: 1D and 1D array textures (TLD 1D, TEX/TLD/TXD ARRAY_1D)
cuda_corpus_tex.define_grad_cube(case, Inputs)  # shader-ndv: texCubemapGrad (the quad loop on the cube pool)
import cuda_corpus_cube  # noqa: E402  (gpu-pools: texCubemap(Layered), bound texCubemapLayeredGrad)

cuda_corpus_cube.define(case, Inputs)
cuda_corpus_more.define_shader_u(case, Inputs)  # shader-u: SM86's uniform datapath, the last vector ALU rows
cuda_corpus_more.define_shader_u_wide(case, Inputs)  # shader-u: uniform carries, ULEA.HI.X.SX32
import cuda_corpus_mma  # noqa: E402  (shader-mma: cp.async, ldmatrix, movmatrix, mma.sync)

cuda_corpus_mma.define(case, Inputs)  # shader-mma
cuda_corpus_mma.define_mma(case, Inputs)  # shader-mma
cuda_corpus_mma.define_pipeline(case, Inputs)  # shader-mma (heavy: nvcc's cuda_pipeline.h)
import cuda_corpus_ctl  # noqa: E402  (shader-ctl: indirect branches, dense switches)

cuda_corpus_ctl.define(case, Inputs)
cuda_corpus_ctl.define_cache(case, Inputs)  # shader-ctl: cache control (CCTL)
cuda_corpus_ctl.define_tex(case, Inputs)  # shader-ctl: TXD .AOFFI (constant offsets)
cuda_corpus_more.define_shader_u2(case, Inputs)  # shader-u2: F2IP (cvt.rni.sat.u8.f32)
cuda_corpus_more.define_shader_u2_idp(case, Inputs)  # shader-u2: IDP.2A (dp2a)
cuda_corpus_ctl.define_bar(case, Inputs)  # shader-ctl: __syncthreads_count/_and/_or, bar.red (BAR.RED + B2R.RESULT)
cuda_corpus_ctl.define_calls(case, Inputs)  # shader-ctl: calls through function pointers (CALL.REL Rn, PRET + BRX)
cuda_corpus_ctl.define_mbarrier(case, Inputs)  # shader-ctl: mbarriers (ATOMS.ARRIVE.64, ARRIVES)
import cuda_corpus_video  # noqa: E402  (shader-video: PTX scalar video instructions)

cuda_corpus_video.define(case, Inputs)  # shader-video
import cuda_corpus_globals  # noqa: E402  (shader-ctl2: __device__ globals, virtual calls)

cuda_corpus_globals.define(case, Inputs)  # shader-ctl2: .nv.global(.init) through bank 4 (cuda_globals.py)
cuda_corpus_globals.define_clock(case, Inputs)  # shader-ctl2: SR_CLOCK / SR_GLOBALTIMER (lower/clock.py)
cuda_corpus_globals.define_cuda_barrier(case, Inputs)  # shader-ctl2: cuda::barrier arrive_and_wait (heavy)
import cuda_corpus_assert  # noqa: E402  (shader-assert: device asserts, the rows never executed)

cuda_corpus_assert.define(case, Inputs)  # shader-assert: assert that holds / fails (the assert runtime)
cuda_corpus_assert.define_rows(case, Inputs)  # shader-assert: kernels for rows translated but never run
import cuda_corpus_rest  # noqa: E402  (shader-rest: the last mnemonics some PTX makes ptxas emit)

cuda_corpus_rest.define(case, Inputs)  # shader-rest: BRXU (uniform jump tables), PMTRIG (pmevent)
cuda_corpus_rest.define_alloca(case, Inputs)  # shader-rest: alloca / stacksave / stackrestore (a moving R1)
# shader-assert: the kernels' minimum architectures (what CUDA code guards with __CUDA_ARCH__):
# ptxas refuses their PTX below (match.sync needs sm_70, and nvcc 13's libcu++ barrier uses
# match and scoped atomics, sm_70 / sm_60), so those ISA pairs are "not applicable", not gaps
for _c in CASES:
    _c.min_sm = {"warp_match": 70, "g2_cuda_barrier": 70}.get(_c.name, _c.min_sm)
GROUPS = sorted({c.group for c in CASES})


def group_source(group: str, isa: int = 86) -> str:
    """The group's CUDA text for sm_``isa``: its kernels whose ``min_sm`` the ISA meets."""
    return source([c for c in CASES if c.group == group and isa >= c.min_sm])


def not_applicable(c: Case, isa: int, opt: str) -> str:
    """Why ``c`` is not built for sm_``isa`` (shader-assert): the compiler's own refusal of the
    kernel alone (ptxas's message, e.g. "match.sync requires sm_70"), "" where the ISA meets
    ``min_sm``.  A kernel under its ``min_sm`` that the compiler accepts is a wrong ``min_sm``:
    an error."""
    import cuda_build

    if isa >= c.min_sm:
        return ""
    try:
        cuda_build.compile_cubin(source([c]), isa, opt)
    except RuntimeError as e:
        msgs = [ln.split("error   :", 1)[1].strip() for ln in str(e).splitlines() if "error   :" in ln]
        return msgs[0] if msgs else str(e).strip().splitlines()[-1]
    raise RuntimeError(f"{c.name}: min_sm {c.min_sm}, but the compiler builds it for sm_{isa}")


# ---------------------------------------------------------------------------------------------
# checking one kernel


@dataclass
class Result:
    name: str
    isa: int
    opt: str
    decode: str = "-"  # ok / N mismatches / error
    translate: str = "-"
    valid: str = "-"
    run: str = "-"
    detail: str = ""
    irs: set = field(default_factory=set)
    ops: list = field(default_factory=list)  # (nvdisasm's opcode, printed equal, assembles back)

    @property
    def ok(self) -> bool:
        return all(s == "ok" for s in (self.decode, self.translate, self.valid, self.run))

    def line(self) -> str:
        return (
            f"sm{self.isa} {self.opt:2} {self.name:18} decode={self.decode:10} translate={self.translate:5} "
            f"spirv-val={self.valid:5} run={self.run:5} {self.detail[:160]}"
        )


def source(cases: list[Case]) -> str:
    return HEADER + "\n".join(c.src for c in cases) + "\n"


def decode_texts(isa: int, code: bytes) -> list[tuple[int, str, str]]:
    """(address, our text, nvdisasm's text) for every instruction; ours is the error message
    where the decoder refuses the word."""
    out = []
    if isa == 86:
        import listings
        import nvtools
        from shader_svc.sm86 import decode as dec

        words = listings.sm86_words(code)
        ref = nvtools.nvdisasm_raw(words, "SM86")
        for i, (w, r) in enumerate(zip(words, ref)):
            try:  # nvdisasm's '-QNAN ' ends the line: the oracle's parse strips the space
                ours = dec.decode(*w, addr=i * 16).text().rstrip()
            except dec.DecodeError as e:
                ours = f"!{e}"
            out.append((i * 16, ours, r.text if r else "REFUSED"))
        return out
    import listings
    from shader_svc.sm53 import decode as dec
    import sm53_tools as tools
    from sm53_corpus import Kernel53

    ref = tools.nvdisasm53_code(code)
    for addr, word, ctrl in Kernel53("k", code, 0).slots():
        try:
            ours = dec.decode(word, ctrl, addr).text()
        except dec.DecodeError as e:
            ours = f"!{e}"
        r = ref.get(addr)
        rt = r.text if r else "REFUSED"
        same = not ours.startswith("!") and r is not None and listings.fields(ours) == listings.fields(rt)
        out.append((addr, rt if same else ours, rt))
    return out


def round_trips(isa: int, code: bytes, texts: list[tuple[int, str, str]]) -> list[bool]:
    """Per instruction: nvdisasm's text assembles back to the same word (SM86: with the
    instruction's control bits and the bits the text cannot show; SM53: the instruction word)."""
    out = []
    if isa == 86:
        import listings
        from shader_svc.sm86 import assemble as asm
        from shader_svc.sm86 import decode as dec

        for (lo, hi), (addr, ours, ref) in zip(listings.sm86_words(code), texts):
            try:
                inst = dec.decode(lo, hi, addr)
                out.append(asm.assemble_line(ref, addr, inst.control, asm.unshown(inst)) == lo | hi << 64)
            except Exception:
                out.append(False)
        return out
    from shader_svc.sm53 import assemble as asm
    from sm53_corpus import Kernel53

    words = {a: w for a, w, _ in Kernel53("k", code, 0).slots()}
    for addr, ours, ref in texts:
        try:
            out.append(asm.assemble(ref, addr)[0] == words[addr])
        except Exception:
            out.append(False)
    return out


def translate(
    isa: int, code: bytes, cbank2: bytes = b"", banks: tuple = (), data: tuple = (), features: int = 0
) -> tuple[bytes, set]:
    if isa == 86:
        from shader_svc.sm86 import decode as dec
        from shader_svc.sm86.to_spirv import ComputeSpec
        from shader_svc.sm86.to_spirv import translate_compute
    else:
        from shader_svc.sm53 import decode as dec
        from shader_svc.sm53.to_spirv import ComputeSpec, translate_compute
    insts = dec.decode_stream(code)
    banks = (((2, cbank2),) if cbank2 else ()) + tuple(banks)  # SM5x literal pool: part of the program
    # shader-ctl2: bank 4 (the globals' addresses) and the global data (cuda_globals.py)
    return translate_compute(insts, ComputeSpec((BLOCK, 1, 1), banks, features=features, data=data)), {i.row.ir for i in insts}


def spirv_val(spv: bytes) -> str:
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spv)
        f.flush()
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", f.name], capture_output=True, text=True)
    return "ok" if r.returncode == 0 else (r.stdout + r.stderr).strip().splitlines()[0][:200]


def ulp_distance(got: np.ndarray, want: np.ndarray, kind: str) -> np.ndarray:
    """Distance in units in the last place (NaN = NaN is 0; a NaN against a number is huge)."""
    it, ft = (np.int32, np.float32) if kind == "f32" else (np.int64, np.float64)
    g, w = got.view(it).astype(np.int64), want.view(it).astype(np.int64)
    # map sign-magnitude to a monotone integer line
    big = np.int64(2**31) if kind == "f32" else np.int64(-(2**63))
    g = np.where(g < 0, big - g, g) if kind == "f32" else np.where(g < 0, -(g & (2**63 - 1)), g)
    w = np.where(w < 0, big - w, w) if kind == "f32" else np.where(w < 0, -(w & (2**63 - 1)), w)
    d = np.abs(g - w)
    gn, wn = np.isnan(got.view(ft)), np.isnan(want.view(ft))
    return np.where(gn & wn, 0, np.where(gn | wn, 2**40, d))


def run(dev, isa: int, k, c: Case, spv: bytes, seed: int = 1, keep=(), log=None) -> tuple[bool, str]:
    """Dispatch and compare with the reference.  ``log`` = (global region buffer, its device
    address, the assert log's offset in it) where the program calls the assert runtime
    (shader-assert): a failed assertion is reported as ``cuda_build_assert.DeviceAssert``
    (cudaErrorAssert), which a case expecting it (``Case.asserts``) checks instead."""
    try:
        ok, why = _run(dev, isa, k, c, spv, seed, log)
        if c.asserts is not None and c.asserts(c.inputs(np.random.default_rng(seed))):
            return False, "no cudaErrorAssert, though the assertion fails for some threads" + (" (no log)" if log is None else "")
        return ok, why
    except Exception as e:
        import cuda_build_assert

        if not isinstance(e, cuda_build_assert.DeviceAssert) or c.asserts is None:
            raise
        return _check_asserts(c, e, isa, seed)


def _check_asserts(c: Case, e, isa: int, seed: int) -> tuple[bool, str]:
    """A case whose assertion fails for some threads (shader-assert): the named error's records
    must be exactly those threads (block and thread index), at the ``assert(`` line of the
    kernel's source as compiled, with the expression's text and the file read back from the
    program's global data; every other thread's output words as numpy's."""
    x = c.inputs(np.random.default_rng(seed))
    want = sorted(c.asserts(x))  # global thread indices whose assertion fails
    src = group_source(c.group, isa).splitlines()
    first = next(i for i, ln in enumerate(src) if f"K({c.name})" in ln)
    line = next(i + 1 for i in range(first, len(src)) if "assert(" in src[i])
    got = [(r.block[0] * BLOCK + r.thread[0], r.line) for r in e.records]
    if e.count != len(want) or got != [(t, line) for t in want[: len(got)]] or len(got) != min(len(want), 32):
        return False, f"asserts {got[:6]} (count {e.count}) != threads {want[:6]} at line {line}: {e}"
    bad_text = [r for r in e.records if r.message != c.assert_text or not (r.file or "").endswith("k.cu")]
    if bad_text:
        return False, f"assert record text {bad_text[0]} (want {c.assert_text!r} in k.cu)"
    ref, got = np.asarray(c.ref(x), np.uint32), e.outputs
    keep = np.ones(len(ref), bool)
    keep[[t for t in want if t < len(ref)]] = False  # a failing thread's word is undefined (the kernel stops)
    bad = np.nonzero((got != ref) & keep)[0]
    if len(bad):
        return False, f"{len(bad)} words of passing threads differ, first at {bad[0]}: {got[bad[0]]:#x} != {ref[bad[0]]:#x}"
    return True, ""


def _run(dev, isa: int, k, c: Case, spv: bytes, seed: int, log) -> tuple[bool, str]:
    from compute_dispatch import run_spirv, upload
    import vk_compute
    from shader_svc.sm53.to_spirv import cbank0 as cbank53

    x = c.inputs(np.random.default_rng(seed))
    ba, bb, bo = upload(dev, x.a), upload(dev, x.b), upload(dev, x.out)
    params = struct.pack("<QQQi", ba.address, bb.address, bo.address, x.n) + x.extra
    layout = vk_compute.cbank0 if isa == 86 else cbank53
    images = [dev.image(*(sf if isinstance(sf, tuple) else ("2D", sf))) for sf in x.surfaces]
    tex = None
    if x.textures:  # shader-tex: the texture and sampler pools
        from compute_textures import TexturePools, make_texture

        # an entry is a list of levels (2D) or (kind, levels) (shader-ndv: "3d" volumes)
        tex = TexturePools(dev, [make_texture(dev, *((lv[1], lv[0]) if isinstance(lv, tuple) else (lv,))) for lv in x.textures])
    outs = [bo] if log is None else [bo, log[0]]
    got, *region = run_spirv(dev, spv, layout, k.cbank0_size, x.threads, params, outs, BLOCK, images if x.surfaces else None, tex)
    got = got[: len(x.out)]
    if log is not None:  # shader-assert: the assert runtime's log (cudaErrorAssert where it counts any)
        import cuda_build_assert

        count, recs = cuda_build_assert.read_log(region[0].tobytes(), log[2], log[1])
        if count:
            raise cuda_build_assert.DeviceAssert(c.name, count, recs, got)
    if images:
        got = np.concatenate([got] + [np.frombuffer(dev.read_image(im), np.uint32) for im in images])
    if c.kind == "perm":  # the words are a permutation of 0..len-1 (atomic exchanges' old values)
        ok = sorted(got.tolist()) == list(range(len(got)))
        return ok, "" if ok else f"not a permutation of 0..{len(got) - 1}: {sorted(got.tolist())[:8]}..."
    want = np.asarray(c.reference(isa)(x), np.uint32)
    if c.kind == "u32":
        bad = np.nonzero(got != want)[0]
        return (not len(bad)), (
            f"{len(bad)} words differ, first at {bad[0]}: {got[bad[0]]:#x} != {want[bad[0]]:#x}" if len(bad) else ""
        )
    d = ulp_distance(got, want, c.kind)
    worst = int(d.max()) if len(d) else 0
    return worst <= c.ulps, (f"{c.kind} max {worst} ulp (bound {c.ulps})" if worst > c.ulps else "")


def unfinished_gaps() -> dict[tuple[int, str, str], str]:
    """(isa, level, kernel) -> reason for the cuda_gaps.txt lines whose reason starts "run: not
    finished": programs known not to finish a lavapipe run in bounded time (cpa_pipeline_prims
    -G: 18,952 instructions linked; lavapipe's LLVM does not finish compiling them).  A run
    decodes, translates and validates them but does not dispatch them (a whole run would hang on
    them); each is reported as not run, naming the listed reason."""
    out = {}
    for line in (Path(__file__).parent / "cuda_gaps.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            isa, opt, name, *why = line.split()
            if " ".join(why).startswith("run: not finished"):
                out[int(isa[2:]), opt, name] = " ".join(why)
    return out


def check(dev, isa: int, opt: str, c: Case, k) -> Result:
    from nxrecomp.common.errors import NxError

    res = Result(c.name, isa, opt)
    why = unfinished_gaps().get((isa, opt, c.name))
    if why is not None:  # shader-size: decoded, translated and validated; not run on the device
        dev = None
    try:
        texts = decode_texts(isa, k.code)
        back = round_trips(isa, k.code, texts)
        res.ops = [(opcode_of(t[2]), t[1] == t[2], ok) for t, ok in zip(texts, back)]
        bad = [t for t in texts if t[1] != t[2]]
        res.decode = "ok" if not bad else f"{len(bad)}/{len(texts)}"
        if bad:
            res.detail = f"@{bad[0][0]:#x} ours {bad[0][1]!r} nvdisasm {bad[0][2]!r}"
    except Exception as e:  # the oracle itself failed
        res.decode, res.detail = "error", str(e)[:200]
    gbuf, code, banks, data = None, k.code, (), ()
    if getattr(k, "globals_cubin", b""):  # shader-ctl2: __device__ globals placed (cuda_globals.py)
        import cuda_globals

        base = 0
        if dev is not None:
            gbuf = dev.buffer(cuda_globals.region_size(k.globals_cubin, isa))
            base = gbuf.address
        placed = cuda_globals.place(k.globals_cubin, k.name, isa, base)
        if gbuf is not None:
            dev.write(gbuf, placed.image)
        code, data = placed.code, ((base, placed.image),)
        banks = ((4, placed.bank4),) if placed.bank4 else ()
    try:
        # shader-ctl2: the device's clocks (lower/clock.py) where it has them (no device: assumed)
        from shader_svc.request import FEATURES

        clock = FEATURES["shader_clock"] if dev is None or getattr(dev, "shader_clock", False) else 0
        # shader-nv: f32 denormals kept where the device can (NVIDIA's driver flushes them otherwise)
        clock |= FEATURES["denorm_preserve32"] if getattr(dev, "denorm_preserve32", False) else 0
        spv, res.irs = translate(isa, code, getattr(k, "cbank2", b""), banks, data, clock)
        res.translate = "ok"
    except NxError as e:
        res.translate, res.detail = "no", str(e)
        return res
    res.valid = spirv_val(spv)
    if res.valid != "ok":
        res.detail, res.valid = res.valid, "no"
        return res
    if why is not None:  # listed as not finishing on the device in bounded time: not passed
        res.run, res.detail = "not run", f"cuda_gaps.txt: {why}"
    elif dev is not None:
        try:
            lg = (gbuf, gbuf.address, placed.log_offset) if gbuf is not None and placed.log_offset is not None else None
            ok, why = run(dev, isa, k, c, spv, keep=(gbuf,), log=lg)
        except Exception as e:  # the reference or the dispatch failed: a failure, with its reason
            ok, why = False, f"run error: {type(e).__name__}: {e}"
        res.run = "ok" if ok else "no"
        if why:
            res.detail = why
    return res


def opcode_of(text: str) -> str:
    """The opcode of an nvdisasm line, without guard and modifiers ('@P0 LDG.E.64 ...' -> 'LDG')."""
    body = text.split(" ", 1)[1] if text.startswith("@") else text
    return body.split(" ", 1)[0].split(".", 1)[0]


def isa_set(isa: int) -> set[str]:
    """The mnemonics nvdisasm knows for an ISA, by enumeration: every 12-bit SM86 opcode (with
    and without bit 91, the uniform-operand form bit) and every top-16-bit SM53 opcode, the
    other bits 0 and the guard PT; cached in ``<cache>/shader_corpus/isa_set_<isa>.json`` (SM53
    takes minutes: 65,536 words through nvdisasm 11.8)."""
    import json

    import cuda_build

    path = cuda_build._cache_dir() / f"isa_set_{isa}.json"
    if path.is_file():
        return set(json.loads(path.read_text()))
    if isa == 86:
        import nvtools

        ref = nvtools.nvdisasm_raw([(op | 0x7000, 0x000FC00000000000 | u << 27) for u in (0, 1) for op in range(4096)])
    else:
        import sm53_tools as tools

        ref = tools.nvdisasm53_raw([(top << 48) | (0x7 << 16) for top in range(65536)])
    names = sorted({r.opcode.split(".")[0] for r in ref if r and not r.opcode.startswith("__")})
    path.write_text(json.dumps(names))
    return set(names)


def table_set(isa: int) -> set[str]:
    """The mnemonics our table decodes (first word of a row's mnemonic)."""
    if isa == 86:
        from shader_svc.sm86.table import ROWS
    else:
        from shader_svc.sm53.table import ROWS
    return {r.mnemonic.split(".")[0] for r in ROWS}


def isa_coverage(isa: int) -> str:
    known, ours = isa_set(isa), table_set(isa)
    return (
        f"SM{isa}: nvdisasm knows {len(known)} mnemonics (enumerated opcodes); our table decodes "
        f"{len(known & ours)} of them; not in the table: {' '.join(sorted(known - ours))}"
    )


def coverage(results: list[Result]) -> str:
    """The coverage table: per ISA, the opcodes nvcc/ptxas emitted for the corpus (as nvdisasm
    names them) and how many of them are decoded and printed equal everywhere, appear only in
    kernels that translate, and only in kernels that run exactly."""
    lines = [
        "| ISA | opcodes emitted | printed equal | assembled back | in translated kernels only | "
        "in exact kernels only | kernels exact |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for isa, opt in sorted({(r.isa, r.opt) for r in results}, reverse=True):
        rs = [r for r in results if (r.isa, r.opt) == (isa, opt)]
        emitted = {o for r in rs for o, _, _ in r.ops}
        equal = {o for o in emitted if all(eq for r in rs for oo, eq, _ in r.ops if oo == o)}
        back = {o for o in emitted if all(bk for r in rs for oo, _, bk in r.ops if oo == o)}
        trans = {o for o in emitted if all(r.translate == "ok" for r in rs if any(x[0] == o for x in r.ops))}
        exact = {o for o in emitted if all(r.ok for r in rs if any(x[0] == o for x in r.ops))}
        lines.append(
            f"| SM{isa} {opt} | {len(emitted)} | {len(equal)} | {len(back)} | {len(trans)} | {len(exact)} | "
            f"{sum(r.ok for r in rs)}/{len(rs)} |"
        )
        lines.append(f"| SM{isa} {opt} not printed equal | {' '.join(sorted(emitted - equal)) or '-'} | | | | | |")
        lines.append(f"| SM{isa} {opt} not assembled back | {' '.join(sorted(emitted - back)) or '-'} | | | | | |")
        lines.append(f"| SM{isa} {opt} in a failing kernel | {' '.join(sorted(emitted - exact)) or '-'} | | | | | |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    import argparse

    import cuda_build
    from compute_dispatch import open_device

    ap = argparse.ArgumentParser()
    ap.add_argument("--isa", type=int, action="append")
    ap.add_argument("--opt", action="append")
    ap.add_argument("-k", default="")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--group", default="")
    a = ap.parse_args(argv)
    cases = [c for c in CASES if a.k in c.name and a.group in c.group]
    results, na = [], []
    ctx = open_device() if not a.no_run else None
    dev = ctx.__enter__() if ctx else None
    try:
        for isa in a.isa or [86, 53]:
            for opt in a.opt or ["O3", "G"]:
                for g in sorted({c.group for c in cases}):
                    gc = [c for c in cases if c.group == g and isa >= c.min_sm]
                    for c in (c for c in cases if c.group == g and isa < c.min_sm):  # shader-assert
                        na.append((isa, opt, c.name))
                        print(f"sm{isa} {opt} {c.name:18} not applicable: {not_applicable(c, isa, opt)}", flush=True)
                    if not gc:
                        continue
                    try:
                        ks = cuda_build.build(group_source(g, isa), isa, opt)
                    except Exception as e:  # the compiler refused the group: say so, go on
                        print(f"sm{isa} {opt} group {g}: build failed: {str(e)[-600:]}", flush=True)
                        continue
                    for c in gc:
                        r = check(dev, isa, opt, c, ks[c.name])
                        results.append(r)
                        print(r.line(), flush=True)
    finally:
        if ctx:
            ctx.__exit__(None, None, None)
    print(coverage(results))
    if not (a.k or a.group or a.no_run):  # a whole run: the coverage table's "executed exactly"
        import isa_coverage as isa_table  # (this module has an isa_coverage function)

        isa_table.record_exact_ops(results)
    for isa in a.isa or [86, 53]:
        print(isa_coverage(isa))
    for isa in a.isa or [86, 53]:
        for opt in a.opt or ["O3", "G"]:
            rs = [r for r in results if r.isa == isa and r.opt == opt]
            print(
                f"sm{isa} {opt}: {sum(r.ok for r in rs)}/{len(rs)} pass all four checks; "
                f"{sum(r.translate == 'ok' for r in rs)} translate; "
                f"{sum(1 for n in na if n[:2] == (isa, opt))} not applicable (below the kernel's min_sm)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
