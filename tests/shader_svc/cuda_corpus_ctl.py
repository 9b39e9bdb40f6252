"""Control-flow kernels of the issue-31 corpus (shader-ctl): indirect branches and dense switches.

nvcc 13 lowers a C ``switch`` to a tree of compares and branches at -O3 and -G alike (seen for
9 and 24 dense cases), so the jump-table form comes from PTX ``brx.idx`` in inline assembly:
ptxas puts the table in constant bank 2 and emits ``LDC Rt, c[0x2][Ri]`` + ``BRX Rt off``
on sm_86 and sm_53 (``shader_svc/lower/indirect.py``).  The PTX labels live in the asm block, so
each kernel holds one copy of it (``#pragma unroll 1`` keeps a loop from duplicating it).

References: plain numpy of what each case computes (uint32 wrap-around).
"""

from __future__ import annotations

import numpy as np

GROUP = "ctl_switch"
N = 200
_C1 = [(0x9E3779B9 * (k + 1)) & 0xFFFFFFFF for k in range(8)]  # per-case constants (no multiply:
# ptxas -O0 turns mad with an immediate into an SM53 IMAD form the decoder does not know yet)


def _brx_asm(n: int, idx: str, pre: str = "SW") -> str:
    """A PTX block: ``%0 = case[idx](%1)`` with case k = (x ^ C1[k]) + k * k + 1, through
    ``brx.idx`` over ``n`` labels (``idx`` a PTX expression computing ix from %1 / %2)."""
    body = "".join(f"{pre}_L{k}: xor.b32 %0, %1, {_C1[k]}; add.u32 %0, %0, {k * k + 1}; bra.uni {pre}_END;\\n" for k in range(n))
    return (
        "{\\n .reg .u32 ix;\\n "
        + f"{pre}_T: .branchtargets "
        + ", ".join(f"{pre}_L{k}" for k in range(n))
        + f";\\n {idx}\\n brx.idx ix, {pre}_T;\\n"
        + body
        + f"{pre}_END:\\n}}"
    )


def _case_ref(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    x, k = x.astype(np.uint64), k.astype(np.uint64)
    c1 = np.array(_C1, np.uint64)[k.astype(int)]
    return (((x ^ c1) + k * k + 1) & 0xFFFFFFFF).astype(np.uint32)


def _switch_ref(x: np.ndarray) -> np.ndarray:
    """The C switch of ``sw_dense``."""
    x = x.astype(np.uint64)
    k = x % 9
    out = np.full(len(x), 42, np.uint64)
    forms = [x * 3, x ^ 0x55, x + 7, x >> 3, x * x, ~x, x - 100, x << 5]
    for j, f in enumerate(forms):
        out = np.where(k == j, f, out)
    return (out & 0xFFFFFFFF).astype(np.uint32)


def define(case, Inputs) -> None:
    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), N, 256, np.zeros(256, np.uint32))

    # an 8-way jump table, the index divergent across the warp
    case(
        name="brx_dense",
        style="switch",
        group=GROUP,
        src=r"""
K(brx_dense) { int i = TID; if (i < n) { uint32_t x = a[i], r;
  asm volatile("""
        + '"'
        + _brx_asm(8, "and.b32 ix, %1, 7;", "BD")
        + '"'
        + r""" : "=r"(r) : "r"(x));
  o[i] = r; } }""",
        inputs=ins,
        ref=lambda x: np.concatenate([_case_ref(x.a[: x.n], x.a[: x.n] & 7), np.zeros(256 - x.n, np.uint32)]),
    )

    # a jump table inside a loop: four dispatches per thread, a 5-way table (index x % 5 of
    # the running value), the result fed back
    case(
        name="brx_loop",
        style="switch",
        group=GROUP,
        src=r"""
K(brx_loop) { int i = TID; if (i < n) { uint32_t x = a[i], r;
  #pragma unroll 1
  for (int j = 0; j < 4; j++) {
    asm volatile("""
        + '"'
        + _brx_asm(5, "shr.u32 ix, %1, 7; and.b32 ix, ix, 3; add.u32 ix, ix, 1; min.u32 ix, ix, 4;", "BL")
        + '"'
        + r""" : "=r"(r) : "r"(x));
    x = r ^ (x >> 11);
  }
  o[i] = x; } }""",
        inputs=ins,
        ref=lambda x: np.concatenate([_loop_ref(x.a[: x.n]), np.zeros(256 - x.n, np.uint32)]),
    )

    # a dense C switch (a compare tree from nvcc at -O3 and -G)
    case(
        name="sw_dense",
        style="switch",
        group=GROUP,
        src=r"""
K(sw_dense) { int i = TID; if (i < n) { uint32_t x = a[i], r;
  switch (x % 9u) { case 0: r = x * 3u; break; case 1: r = x ^ 0x55u; break; case 2: r = x + 7u; break;
  case 3: r = x >> 3; break; case 4: r = x * x; break; case 5: r = ~x; break; case 6: r = x - 100u; break;
  case 7: r = x << 5; break; default: r = 42u; }
  o[i] = r; } }""",
        inputs=ins,
        ref=lambda x: np.concatenate([_switch_ref(x.a[: x.n]), np.zeros(256 - x.n, np.uint32)]),
    )


def _loop_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint32)
    for _ in range(4):
        k = np.minimum(((x >> 7) & 3) + 1, 4)
        x = _case_ref(x, k) ^ (x >> 11)
    return x


# --- cache control (shader-ctl, lower/cache.py): prefetches, an eviction priority and a discard
# (sm_80 PTX: compiled for sm_86 only; sm_53's PTX comes from compute_75) around ordinary loads
# and stores; each thread discards its own 128-byte line before writing all of it
def define_cache(case, Inputs) -> None:
    threads = 64

    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), threads, threads, np.zeros(32 * threads, np.uint32))

    def ref(x):
        k = np.arange(32, dtype=np.uint64)
        v = (x.a[:threads, None].astype(np.uint64) ^ ((k * 0x9E3779B9) & 0xFFFFFFFF)) + k
        return (v & 0xFFFFFFFF).astype(np.uint32).ravel()

    case(
        name="cache_hints",
        style="cache",
        group="ctl_cache",
        src=r"""
K(cache_hints) { int i = TID; if (i < n) {
  asm volatile("prefetch.global.L1 [%0];" :: "l"(a + i + 64));
  asm volatile("prefetch.global.L2 [%0];" :: "l"(a + i + 128));
  uint32_t x = a[i];
#if __CUDA_ARCH__ >= 800
  asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(a + i + 32));
  asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(a + (i & ~31)));
  asm volatile("discard.global.L2 [%0], 128;" :: "l"(o + 32 * i));
#endif
  for (int k = 0; k < 32; k++) o[32 * i + k] = (x ^ ((uint32_t)k * 0x9E3779B9u)) + (uint32_t)k;
} }""",
        inputs=ins,
        ref=ref,
    )


# --- TXD .AOFFI (shader-ctl, lower/texture.py): PTX tex.grad with constant texel offsets (as
# GLSL's textureGradOffset requires), the texture object read from memory (TXD.B.AOFFI on sm_86
# and sm_53); cuda_corpus_tex.py's pools, points, gradients and LOD model, the nearest texel of the
# level moved by the offsets (Vulkan "Texel Coordinate Systems": the offset is added to the
# unnormalised coordinates before the floor), clamped to the edge
AOFFI = ((-3, 2), (7, -8))


def define_tex(case, Inputs) -> None:
    import cuda_corpus_tex as ct

    n = ct.N

    def inputs(r):
        u, v = ct._points(r, n)
        k = r.integers(-3, 7, (2, n)).astype(np.float64)
        frac = r.integers(0, 2, (2, n)) * np.log2(1.5)
        g = (2.0 ** (k + frac) / ct.W0).astype(np.float32)
        a = np.concatenate([ct._f(u), ct._f(v), ct._f(g[0]), ct._f(g[1])])
        return Inputs(a, ct._handles(), n, n, np.zeros(8 * n, np.uint32), textures=ct._pools(r))

    def ref(x):
        u, v, gx, gy = (x.a[k * n : (k + 1) * n].view(np.float32) for k in range(4))
        lam = np.log2(np.maximum(gx.astype(np.float64) * ct.W0, gy.astype(np.float64) * ct.H0))
        d = ct._level(lam)
        out = np.zeros((n, 2, 4), np.float32)
        for i in range(n):
            lv = x.textures[3][int(d[i])]
            h, w = lv.shape[:2]
            for j, (ox, oy) in enumerate(AOFFI):
                tx = min(max(int(np.floor(u[i] * w)) + ox, 0), w - 1)
                ty = min(max(int(np.floor(v[i] * h)) + oy, 0), h - 1)
                out[i, j] = lv[ty, tx]
        return ct._f(out.ravel())

    tex = (
        'asm volatile("tex.grad.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}], {%7, %8}, {%9, %10}, {OX, OY};"\n'
        '    : "=f"(x0), "=f"(x1), "=f"(x2), "=f"(x3) : "l"(t), "f"(f[i]), "f"(f[i + n]), "f"(f[i + 2 * n]), "f"(0.0f),\n'
        '      "f"(0.0f), "f"(f[i + 3 * n]));\n'
        "  of[8 * i + J] = x0; of[8 * i + J + 1] = x1; of[8 * i + J + 2] = x2; of[8 * i + J + 3] = x3;\n"
    )
    body = "".join(tex.replace("OX", str(ox)).replace("OY", str(oy)).replace("J", str(4 * j)) for j, (ox, oy) in enumerate(AOFFI))
    case(
        name="tex_grad_aoffi",
        style="texture",
        group="ctl_tex",
        src=r"""
K(tex_grad_aoffi) {
  int i = TID; if (i >= n) return;
  unsigned long long t = ((const unsigned long long *)b)[0];
  const float *f = (const float *)a; float *of = (float *)o;
  float x0, x1, x2, x3;
  """
        + body
        + "}",
        inputs=inputs,
        ref=ref,
    )


# --- shader-ctl: barrier reductions (BAR.RED + B2R.RESULT, both ISAs) ---------------------------
def _syncthreads_ref(x) -> np.ndarray:
    """``sync_reduce``: per 64-thread block, count / and / or of the predicates (numpy)."""
    v = x.a.reshape(-1, 64)
    p1, p2, p3 = (v & 1) != 0, (v & 2) != 0, (v % 7) == 3
    c = p1.sum(axis=1, keepdims=True) + 0 * v
    an = np.broadcast_to(p2.all(axis=1, keepdims=True), v.shape)
    orr = np.broadcast_to(p3.any(axis=1, keepdims=True), v.shape)
    return (c.astype(np.uint64) * 4 + an * 2 + orr).astype(np.uint32).ravel()


def define_bar(case, Inputs) -> None:
    """CUDA's __syncthreads_count/_and/_or (BAR.RED.POPC/.AND/.OR + B2R.RESULT) and PTX bar.red
    with a barrier number and a thread count (the workgroup's 64): the inputs make some blocks'
    AND true (bit 1 set everywhere) and some ORs false, so each reduction is tested both ways."""

    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        a[64:128] |= 2  # block 1: every predicate of the AND holds
        a[128:192] = (a[128:192] // 7) * 7  # block 2: no x % 7 == 3 (OR false), unless wrapped
        a[128:192] = np.where(a[128:192] % 7 == 3, a[128:192] + 1, a[128:192])
        return Inputs(a, np.zeros(1, np.uint32), 256, 256, np.zeros(256, np.uint32))

    case(
        name="sync_reduce",
        style="barrier",
        group="ctl_bar",
        src=r"""
K(sync_reduce) { uint32_t v = a[TID];
  int c = __syncthreads_count(v & 1); int an = __syncthreads_and(v & 2); int orr = __syncthreads_or(v % 7 == 3);
  o[TID] = c * 4 + an * 2 + orr; }""",
        inputs=ins,
        ref=_syncthreads_ref,
    )

    def ref_red(x) -> np.ndarray:
        v = x.a.reshape(-1, 64)
        return np.broadcast_to(((v & 4) != 0).sum(axis=1, keepdims=True), v.shape).astype(np.uint32).ravel() + (x.a & 0xFF)

    # bar.red.popc with barrier 1 and an explicit count of 64 threads, twice in a loop (the
    # counter is zeroed and reused: the second round must not see the first's count)
    case(
        name="bar_red_count",
        style="barrier",
        group="ctl_bar",
        src=r"""
K(bar_red_count) { uint32_t v = a[TID], c = 0, s = 0;
  #pragma unroll 1
  for (int k = 0; k < 2; k++) {
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; bar.red.popc.u32 %0, 1, 64, p; }" : "=r"(c) : "r"((v & 4) * (1 - k)));
    s += c; }
  o[TID] = s + (v & 0xff); }""",
        inputs=lambda r: Inputs(
            r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32),
            np.zeros(1, np.uint32),
            256,
            256,
            np.zeros(256, np.uint32),
        ),
        ref=ref_red,
    )


# --- shader-ctl: calls through function pointers (SM86 CALL.REL Rn, SM53 PRET + BRX) -----------
# The group holds no __device__ variable (the corpus passes no global data segment): the tables
# of function pointers are built in the kernel (local memory), which is how nvcc keeps them when
# they are not globals.  Each function pointer's value is a byte offset into the kernel's
# .nv.constant2, whose words are the callees' offsets from the program start.
_CALL_SRC = r"""
__device__ __noinline__ uint32_t cf0(uint32_t x) { return x * 3u + 1u; }
__device__ __noinline__ uint32_t cf1(uint32_t x) { return x ^ 0x5a5a5a5au; }
__device__ __noinline__ uint32_t cf2(uint32_t x) { return (x >> 3) | (x << 29); }
__device__ __noinline__ uint32_t cf3(uint32_t x) { return x + 0x9e3779b9u; }
typedef uint32_t (*cfn_t)(uint32_t);
typedef uint32_t (*rfn_t)(const void *, uint32_t, int);
__device__ __noinline__ uint32_t cwalk(const void *t, uint32_t x, int d);
__device__ __noinline__ uint32_t cstep_a(const void *t, uint32_t x, int d) { return d ? cwalk(t, x + 1u, d - 1) : x; }
__device__ __noinline__ uint32_t cstep_b(const void *t, uint32_t x, int d) { return d ? cwalk(t, x * 5u, d - 1) ^ d : x; }
__device__ __noinline__ uint32_t cwalk(const void *t, uint32_t x, int d) { return ((const rfn_t *)t)[x & 1](t, x, d); }
"""


def _cf(k: int, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    r = [x * 3 + 1, x ^ 0x5A5A5A5A, (x >> 3) | (x << 29), x + 0x9E3779B9][k]
    return (r & 0xFFFFFFFF).astype(np.uint32)


def _walk(x: int, d: int) -> int:
    """``cwalk`` in Python (uint32 wrap-around)."""
    if x & 1 == 0:
        return _walk((x + 1) & 0xFFFFFFFF, d - 1) if d else x
    return (_walk((x * 5) & 0xFFFFFFFF, d - 1) ^ d) if d else x


def define_calls(case, Inputs) -> None:
    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), 200, 256, np.zeros(256, np.uint32))

    def ref_table(x):
        a = x.a[: x.n]
        out = np.zeros(256, np.uint32)
        for k in range(4):
            out[: x.n] = np.where((a & 3) == k, _cf(k, a), out[: x.n])
        return out

    # a table of four function pointers in local memory, the callee chosen by the data
    case(
        name="call_fnptr",
        style="calls",
        group="ctl_call",
        src=_CALL_SRC
        + r"""
K(call_fnptr) { int i = TID; cfn_t t[4] = {cf0, cf1, cf2, cf3};
  if (i < n) o[i] = t[a[i] & 3](a[i]); }""",
        inputs=ins,
        ref=ref_table,
    )

    def ref_chain(x):
        v = x.a[: x.n].copy()
        for _ in range(3):
            k = v & 3
            nv = np.zeros_like(v)
            for j in range(4):
                nv = np.where(k == j, _cf(j, v), nv)
            v = nv
        return np.concatenate([v, np.zeros(256 - x.n, np.uint32)])

    # three indirect calls in a loop, each result choosing the next callee
    case(
        name="call_chain",
        style="calls",
        group="ctl_call",
        src=r"""
K(call_chain) { int i = TID; cfn_t t[4] = {cf0, cf1, cf2, cf3};
  if (i < n) { uint32_t v = a[i];
    #pragma unroll 1
    for (int k = 0; k < 3; k++) v = t[v & 3](v);
    o[i] = v; } }""",
        inputs=ins,
        ref=ref_chain,
    )

    # recursion through function pointers: cwalk calls cstep_a / cstep_b through the table,
    # which call cwalk again (depth 4: return addresses saved on the local-memory stack)
    case(
        name="call_recursive",
        style="calls",
        group="ctl_call",
        src=r"""
K(call_recursive) { int i = TID; rfn_t t[2] = {cstep_a, cstep_b};
  if (i < n) o[i] = cwalk(t, a[i], 4); }""",
        inputs=ins,
        ref=lambda x: np.array([_walk(int(v), 4) for v in x.a[: x.n]] + [0] * (256 - x.n), np.uint32),
    )


# --- shader-ctl: mbarriers (SM86: ATOMS.ARRIVE.64, ARRIVES.LDGSTSBAR.64; PTX for sm_80+) --------
_MBAR_INIT = r"""
  __shared__ uint64_t mb;
  __shared__ uint32_t s[64];
  unsigned mba = (unsigned)__cvta_generic_to_shared(&mb);
#if __CUDA_ARCH__ >= 800
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(mba), "r"(64));
  __syncthreads();
#endif
  unsigned sa = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
"""


def define_mbarrier(case, Inputs) -> None:
    """(sm_80+ PTX; SM53, whose PTX is for an older target, runs a plain shared-memory path with
    the same result.)  cp.async into shared memory completed through an mbarrier (the default arrive, which
    raises the pending count first, then the thread's own arrive and a test_wait loop), and a
    second phase of the same mbarrier waited on by parity: each thread reads another thread's
    copied word, so a wait that does not wait for every arrival reads a stale word."""

    def ins(r):
        a = r.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
        return Inputs(a, np.zeros(1, np.uint32), 256, 256, np.zeros(256, np.uint32))

    def rev(x):
        return x.a.reshape(-1, 64)[:, ::-1].ravel().copy()

    case(
        name="mbar_cp_async",
        style="mbarrier",
        group="ctl_mbar",
        src=r"""
K(mbar_cp_async) {"""
        + _MBAR_INIT
        + r"""
#if __CUDA_ARCH__ < 800
  s[threadIdx.x] = a[TID]; __syncthreads(); o[TID] = s[63 - threadIdx.x] + 0 * sa + 0 * mba; }
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(sa), "l"(&a[TID]));
  asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" :: "r"(mba));
  uint64_t st;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(st) : "r"(mba));
  uint32_t done = 0;
  while (!done) asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(mba), "l"(st));
  o[TID] = s[63 - threadIdx.x]; }
#endif
""",
        inputs=ins,
        ref=rev,
    )

    # two phases of one mbarrier (the second after the pending count's reload), plain
    # mbarrier.arrive + test_wait for the first, test_wait.parity for the second: each thread
    # reads words other threads wrote before arriving
    def ref_phases(x):
        v = x.a.reshape(-1, 64)
        t = np.arange(64, dtype=np.uint64)
        w = (v[:, ::-1].astype(np.uint64) * 3 + t) & 0xFFFFFFFF
        return np.roll(w, -1, axis=1).astype(np.uint32).ravel()

    case(
        name="mbar_phases",
        style="mbarrier",
        group="ctl_mbar",
        src=r"""
K(mbar_phases) {"""
        + _MBAR_INIT
        + r"""
  __shared__ uint32_t s2[64];
  int t = threadIdx.x;
  s[t] = a[TID];
#if __CUDA_ARCH__ < 800
  __syncthreads(); s2[t] = s[63 - t] * 3u + t; __syncthreads(); o[TID] = s2[(t + 1) & 63] + 0 * sa + 0 * mba; }
#else
  uint64_t st;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(st) : "r"(mba) : "memory");
  uint32_t done = 0;
  while (!done) asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(mba), "l"(st) : "memory");
  s2[t] = s[63 - t] * 3u + t;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(st) : "r"(mba) : "memory");
  done = 0;
  while (!done) asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(mba), "r"(1) : "memory");
  o[TID] = s2[(t + 1) & 63] + 0 * sa; }
#endif
""",
        inputs=ins,
        ref=ref_phases,
    )
