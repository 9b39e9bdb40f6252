"""Texture kernels of the issue-31 corpus (shader-tex): CUDA texture objects sampled with
tex2DGrad (TXD.B), tex2DLod (TEX.SCR.B.LL) and PTX ``txq.width``/``.height`` (TXQ.B), the object
read from memory (bindless) or passed as a kernel parameter (the bound forms, the handle in
constant bank 0).

How the harness binds them (``shader_svc/lower/texture.py``, ``compute_textures.py``):
``Inputs.textures[k]`` is pool entry k, a list of float32 RGBA mip levels (level 0 first); every
sampler of the pool is nearest / nearest-mipmap, clamp to edge, normalised coordinates.  A
handle is ``sampler << 20 | texture``.

Reference (Vulkan spec, "Texel Filtering", "Scale Factor Operation, Level-of-Detail Operation
and Image Level(s) Selection", "Texel Coordinate Systems"): with axis-aligned gradients
dP/dx = (gx, 0), dP/dy = (0, gy), rho = max(gx * W, gy * H) (exact for both the formula and the
approximations the spec allows), lambda = log2(rho); the level is d = ceil(lambda + 0.5) - 1
clamped to [0, levels - 1] (nearest mipmap: lambda <= 0 is magnification, level 0, the same
nearest filter); an explicit level l gives d = ceil(l + 0.5) - 1 clamped alike.  The texel at
level d is (floor(u * W_d), floor(v * H_d)) clamped to the edge.  The points are texel centres
of level 0, (i + 0.5) / W, never on a texel edge of any level; lambda is an integer or an
integer + log2(1.5) (0.085 from a rounding edge), tex2DLod's levels are 0.1 or more from one.
"""

from __future__ import annotations

import struct

import numpy as np

GROUP = "texture"
W0 = H0 = 16
LEVELS = 5  # 16, 8, 4, 2, 1
HANDLE = 2 << 20 | 3  # sampler 2, texture 3


def _levels(r, w: int = W0, h: int = H0, n: int = LEVELS) -> list[np.ndarray]:
    """Mip levels of random float texels (multiples of 1/8: exact in float32)."""
    out = []
    for k in range(n):
        out.append((r.integers(-1000, 1000, (max(1, h >> k), max(1, w >> k), 4)) / 8).astype(np.float32))
    return out


def _pools(r) -> list:
    # entries 0..2 other textures (a wrong pick shows), entry 3 the one the handle names
    return [_levels(r, 4, 4, 1), _levels(r, 8, 8, 2), _levels(r, 2, 2, 1), _levels(r)]


def _texel(levels: list[np.ndarray], u: np.ndarray, v: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Nearest texel of level d at (u, v), clamped to the edge: (n, 4) float32."""
    out = np.zeros((len(u), 4), np.float32)
    for i in range(len(u)):
        lv = levels[int(d[i])]
        h, w = lv.shape[:2]
        out[i] = lv[min(max(int(np.floor(v[i] * h)), 0), h - 1), min(max(int(np.floor(u[i] * w)), 0), w - 1)]
    return out


def _level(lam: np.ndarray) -> np.ndarray:
    return np.clip(np.ceil(lam + 0.5) - 1, 0, LEVELS - 1).astype(int)


def _points(r, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Texel centres of level 0, a quarter of them outside the texture (clamped)."""
    i, j = r.integers(-4, W0 + 4, n), r.integers(-4, H0 + 4, n)
    return ((i + 0.5) / W0).astype(np.float32), ((j + 0.5) / H0).astype(np.float32)


def _f(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


def _handles() -> np.ndarray:
    b = np.zeros(4, np.uint32)
    b[0] = HANDLE
    return b


N = 128


def define(case, Inputs) -> None:
    def kernel(name: str, src: str, inputs, ref) -> None:
        case(name=name, style="texture", group=GROUP, src=src, inputs=inputs, ref=ref)

    # --- tex2DGrad: gradients of powers of two (and 1.5 times them) along each axis -----------
    def grad_inputs(r):
        u, v = _points(r, N)
        k = r.integers(-3, 7, (2, N)).astype(np.float64)
        frac = r.integers(0, 2, (2, N)) * np.log2(1.5)
        g = (2.0 ** (k + frac) / W0).astype(np.float32)
        a = np.concatenate([_f(u), _f(v), _f(g[0]), _f(g[1])])
        return Inputs(a, _handles(), N, N, np.zeros(4 * N, np.uint32), textures=_pools(r))

    def grad_ref(x):
        u, v, gx, gy = (x.a[k * N : (k + 1) * N].view(np.float32) for k in range(4))
        lam = np.log2(np.maximum(gx.astype(np.float64) * W0, gy.astype(np.float64) * H0))
        return _f(_texel(x.textures[3], u, v, _level(lam)).ravel())

    kernel(
        "tex_grad",
        r"""
K(tex_grad) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  const float *f = (const float *)a;
  float4 v = tex2DGrad<float4>(t, f[i], f[i + n], make_float2(f[i + 2 * n], 0.0f), make_float2(0.0f, f[i + 3 * n]));
  float *of = (float *)o;
  of[4 * i] = v.x; of[4 * i + 1] = v.y; of[4 * i + 2] = v.z; of[4 * i + 3] = v.w;
}""",
        grad_inputs,
        grad_ref,
    )

    # --- tex2DLod: levels around the rounding points and beyond the chain ---------------------
    LODS = np.array([-1, 0, 0.25, 0.4, 1, 1.4, 1.6, 2, 2.75, 3, 3.4, 4, 6], np.float32)

    def lod_inputs(r):
        u, v = _points(r, N)
        lv = LODS[r.integers(0, len(LODS), N)]
        return Inputs(np.concatenate([_f(u), _f(v), _f(lv)]), _handles(), N, N, np.zeros(2 * N, np.uint32), textures=_pools(r))

    def lod_ref(x):
        u, v, lv = (x.a[k * N : (k + 1) * N].view(np.float32) for k in range(3))
        t = _texel(x.textures[3], u, v, _level(lv.astype(np.float64)))
        return _f(np.stack([t[:, 0], t[:, 3]], axis=1).ravel())

    kernel(
        "tex_lod",
        r"""
K(tex_lod) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  const float *f = (const float *)a;
  float4 v = tex2DLod<float4>(t, f[i], f[i + n], f[i + 2 * n]);
  float *of = (float *)o;
  of[2 * i] = v.x; of[2 * i + 1] = v.w;
}""",
        lod_inputs,
        lod_ref,
    )

    # --- txq.width / .height of the handle's texture and of another (entry 1) ------------------
    def txq_inputs(r):
        b = np.array([HANDLE, 0, 1, 0], np.uint32)
        return Inputs(np.zeros(4, np.uint32), b, 64, 64, np.zeros(4 * 64, np.uint32), textures=_pools(r))

    def txq_ref(x):
        return np.tile(np.array([W0, H0, 8, 8], np.uint32), 64)

    kernel(
        "tex_query",
        r"""
K(tex_query) {
  int i = TID; if (i >= n) return;
  const unsigned long long *h = (const unsigned long long *)b;
  unsigned long long t = h[0], t1 = h[1];
  int w, hh, w1, h1;
  asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
  asm("txq.height.b32 %0, [%1];" : "=r"(hh) : "l"(t));
  asm("txq.width.b32 %0, [%1];" : "=r"(w1) : "l"(t1));
  asm("txq.height.b32 %0, [%1];" : "=r"(h1) : "l"(t1));
  o[4 * i] = w; o[4 * i + 1] = hh; o[4 * i + 2] = w1; o[4 * i + 3] = h1;
}""",
        txq_inputs,
        txq_ref,
    )

    # --- the bound forms: the texture object a kernel parameter (c[0x0][0x180]) ----------------
    def bound_inputs(r):
        x = grad_inputs(r)
        lv = LODS[r.integers(0, len(LODS), N)]
        x.a = np.concatenate([x.a, _f(lv)])
        x.out = np.zeros(6 * N, np.uint32)
        x.extra = struct.pack("<IQ", 0, HANDLE)  # n at 0x178, then t at 0x180
        return x

    def bound_ref(x):
        u, v, gx, gy, lv = (x.a[k * N : (k + 1) * N].view(np.float32) for k in range(5))
        lam = np.log2(np.maximum(gx.astype(np.float64) * W0, gy.astype(np.float64) * H0))
        g = _texel(x.textures[3], u, v, _level(lam))
        t = _texel(x.textures[3], u, v, _level(lv.astype(np.float64)))
        return _f(np.concatenate([g, t[:, :1], np.full((N, 1), W0, np.float32)], axis=1).ravel())

    kernel(
        "tex_bound",
        r"""
// K(tex_bound)'s parameters and one more: a texture object after n (cuda_build.build finds
// kernels by that marker)
extern "C" __global__ void tex_bound(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                     uint32_t *__restrict__ o, int n, cudaTextureObject_t t) {
  int i = TID; if (i >= n) return;
  const float *f = (const float *)a;
  float4 v = tex2DGrad<float4>(t, f[i], f[i + n], make_float2(f[i + 2 * n], 0.0f), make_float2(0.0f, f[i + 3 * n]));
  float l = tex2DLod<float>(t, f[i], f[i + n], f[i + 4 * n]);
  int w; asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
  float *of = (float *)o;
  of[6 * i] = v.x; of[6 * i + 1] = v.y; of[6 * i + 2] = v.z; of[6 * i + 3] = v.w; of[6 * i + 4] = l;
  of[6 * i + 5] = (float)w;
}""",
        bound_inputs,
        bound_ref,
    )


def define_fetch(case, Inputs) -> None:
    """Integer fetches with and without a level (shader-tex, group ``texture_fetch``): PTX
    ``tex.2d`` / ``tex.level.2d`` with .s32 coordinates (an integer level), which ptxas compiles
    to TLD(.SCR)(.B).LZ and TLD(.SCR)(.B).LL.CL (SM86; SM53 TLD.B.LZ / TLD.B.LL.CL, bound TLDS.LZ
    2D and TLD.LL.CL), on the texture object loaded from memory (``tex_fetch``) or passed as a
    kernel parameter (``tex_fetch_bound``).  Levels -2..6 on a 5-level chain: one outside the
    chain reads 0 (as an H100 does, shader-nv's TLD probe in bench/nvidia_corpus.py, whatever the
    descriptor's level clamp); the texel coordinates lie inside the level clamped into the chain
    (outside, a fetch is undefined in Vulkan)."""
    src_body = r"""
  float4 z, l; int x = a[i], y = a[i + n], lv = a[i + 2 * n];
  asm volatile("tex.2d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5,%6}];"
               : "=f"(z.x), "=f"(z.y), "=f"(z.z), "=f"(z.w) : "l"(t), "r"(x), "r"(y));
  asm volatile("tex.level.2d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5,%6}], %7;"
               : "=f"(l.x), "=f"(l.y), "=f"(l.z), "=f"(l.w) : "l"(t), "r"(x), "r"(y), "r"(lv));
  float *of = (float *)o;
  of[4 * i] = z.x; of[4 * i + 1] = z.w; of[4 * i + 2] = l.y; of[4 * i + 3] = l.z;
}"""

    def inputs(r):
        lv = r.integers(-2, 7, N)
        d = np.clip(lv, 0, LEVELS - 1)
        side = np.maximum(W0 >> d, 1)
        x, y = (r.integers(0, 2**16, N) % side, r.integers(0, 2**16, N) % side)
        a = np.concatenate([x, y, lv]).astype(np.int64).astype(np.uint32)
        return Inputs(a, _handles(), N, N, np.zeros(4 * N, np.uint32), textures=_pools(r))

    def ref(x):
        px, py, lv = (x.a[k * N : (k + 1) * N].view(np.int32) for k in range(3))
        t = x.textures[3]
        z = np.stack([t[0][py[i], px[i]] for i in range(N)])
        d = np.clip(lv, 0, LEVELS - 1)
        lvl = np.stack([t[d[i]][py[i], px[i]] if d[i] == lv[i] else np.zeros(4, np.float32) for i in range(N)])
        return _f(np.stack([z[:, 0], z[:, 3], lvl[:, 1], lvl[:, 2]], axis=1).ravel())

    def bound_inputs(r):
        x = inputs(r)
        x.extra = struct.pack("<IQ", 0, HANDLE)  # n at 0x178, then t at 0x180
        return x

    case(
        name="tex_fetch",
        style="texture",
        group="texture_fetch",
        src="""
K(tex_fetch) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];"""
        + src_body,
        inputs=inputs,
        ref=ref,
    )
    case(
        name="tex_fetch_bound",
        style="texture",
        group="texture_fetch",
        src="""
extern "C" __global__ void tex_fetch_bound(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                           uint32_t *__restrict__ o, int n, cudaTextureObject_t t) {
  // K(tex_fetch_bound): K's parameters and a texture object after n (cuda_build.build's marker)
  int i = TID; if (i >= n) return;"""
        + src_body,
        inputs=bound_inputs,
        ref=ref,
    )


def define_match(case, Inputs) -> None:
    """MATCH (shader-tex): __match_any_sync / __match_all_sync on 32- and 64-bit values (PTX
    match.sync, sm_70 and up: SM86's MATCH.ANY / MATCH.ALL / .U64).  PTX for sm_53 has no
    match.sync: ptxas refuses the group there (cuda_gaps.txt)."""
    n = 256

    def inputs(r):
        return Inputs(
            r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
            r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
            n,
            n,
            np.zeros(4 * n, np.uint32),
        )

    def ref(x):
        i = np.arange(n)
        v = x.a & 7
        u = np.where(i & 32, v, (x.a[i & ~31]) & 7)
        hi = x.b & 1
        out = np.zeros((n, 4), np.uint32)
        for w in range(n // 32):
            s = slice(32 * w, 32 * w + 32)
            vv, uu, hh = v[s], u[s], hi[s]
            bits = (1 << np.arange(32, dtype=np.uint64)).astype(np.uint64)
            anym = [(bits * (vv == vv[k])).sum() for k in range(32)]
            any64 = [(bits * ((vv == vv[k]) & (hh == hh[k]))).sum() for k in range(32)]
            same = bool((uu == uu[0]).all())
            out[s, 0] = np.array(anym, np.uint64).astype(np.uint32)
            out[s, 1] = 0xFFFFFFFF if same else 0
            out[s, 2] = int(same)
            out[s, 3] = np.array(any64, np.uint64).astype(np.uint32)
        return out.ravel()

    case(
        name="warp_match",
        style="warp",
        group="match",
        src=r"""
K(warp_match) {
  int i = TID;  // no early return: every lane of the warp reaches the match
  uint32_t v = a[i] & 7;
  uint32_t u = (i & 32) ? v : (a[i & ~31] & 7);  // even warps: one value
  unsigned long long w = ((unsigned long long)(b[i] & 1) << 32) | v;
  uint32_t any, all, any64;
  int pred;
  any = __match_any_sync(0xffffffffu, v);
  all = __match_all_sync(0xffffffffu, u, &pred);
  any64 = __match_any_sync(0xffffffffu, w);
  o[4 * i] = any; o[4 * i + 1] = all; o[4 * i + 2] = pred; o[4 * i + 3] = any64;
}""",
        inputs=inputs,
        ref=ref,
    )


def _volume_levels(r, side: int = W0, n: int = LEVELS) -> list[np.ndarray]:
    """Mip levels of a cubic volume of random float texels (d, h, w, 4), multiples of 1/8."""
    return [(r.integers(-1000, 1000, (max(1, side >> k),) * 3 + (4,)) / 8).astype(np.float32) for k in range(n)]


def _voxel(levels: list[np.ndarray], p: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Nearest texel of level d at the normalised points p (n, 3: x, y, z), clamped to the edge."""
    out = np.zeros((len(p), 4), np.float32)
    for i in range(len(p)):
        lv = levels[int(d[i])]
        size = np.array(lv.shape[2::-1][:3])  # (w, h, d)
        j = np.clip(np.floor(p[i] * size).astype(int), 0, size - 1)
        out[i] = lv[j[2], j[1], j[0]]
    return out


def define_grad3(case, Inputs) -> None:
    """tex3DGrad (shader-ndv, group ``texture_grad3``): no TXD takes a 3D texture, so nvcc 13
    (sm_86) and ptxas 12.9 (sm_53) run a quad loop (lower/quad_tex.py: SHFL of lane q's point
    and gradients, FSWZADD.NDV building lane 0 P, lane 1 P + dP/dx, lane 2 P + dP/dy, TEX.NDV with
    the quad's derivatives, MOV under a quad-lane mask).  The texture is entry 4 of the 3D pool (a
    16^3 volume, 5 levels; handle sampler 2, texture 4), the 2D pool's entries 0..3 other
    textures and its entry 4 a dummy (a wrong pool shows).

    Reference (Vulkan spec, as ``define``'s): dP/dx lies along one axis, dP/dy along another
    (chosen per thread), so rho = max(|dP/dx| * 16, |dP/dy| * 16) for the exact formula and every
    approximation the spec allows; the gradients are powers of two (and 1.5 times them) / 16 and
    the points texel centres of level 0, so P + dP and (P + dP) - P are exact in f32 (the quad's
    differences are the gradients) and lambda is 0.085 or more from a rounding edge.  Lanes whose
    flag is clear end at once, as do the last 3 threads (past n): their quads run the loop
    partial.  (Skipping the fetch in a branch instead would put the loop's VOTE.ANY in divergent
    code, which the emulated warp's workgroup barriers do not support: lower/warp.py.)"""
    n_thr, n = N, N - 3

    def inputs(r):
        i, j, k = (r.integers(-4, W0 + 4, n_thr) for _ in range(3))
        p = [((v + 0.5) / W0).astype(np.float32) for v in (i, j, k)]
        e = r.integers(-3, 7, (2, n_thr)).astype(np.float64) + r.integers(0, 2, (2, n_thr)) * np.log2(1.5)
        g = (2.0**e / W0).astype(np.float32)
        ax = np.stack([r.permutation(3)[:2] for _ in range(n_thr)])  # dP/dx's axis, dP/dy's
        dx, dy = np.zeros((3, n_thr), np.float32), np.zeros((3, n_thr), np.float32)
        dx[ax[:, 0], np.arange(n_thr)] = g[0]
        dy[ax[:, 1], np.arange(n_thr)] = g[1]
        flag = (r.integers(0, 4, n_thr) != 0).astype(np.uint32)
        a = np.concatenate([_f(v) for v in p] + [_f(v) for v in dx] + [_f(v) for v in dy] + [flag])
        tex = _pools(r) + [("3d", _volume_levels(r))]  # 2D entries 0..3; the volume is entry 4 of the 3D pool
        return Inputs(a, np.array([HANDLE + 1, 0, 0, 0], np.uint32), n, n_thr, np.zeros(4 * n_thr, np.uint32), textures=tex)

    def ref(x):
        col = [x.a[k * n_thr : (k + 1) * n_thr] for k in range(10)]
        p = np.stack([c.view(np.float32) for c in col[:3]], axis=1)
        dx = np.stack([c.view(np.float32) for c in col[3:6]], axis=1).astype(np.float64)
        dy = np.stack([c.view(np.float32) for c in col[6:9]], axis=1).astype(np.float64)
        rho = np.maximum(np.abs(dx).max(axis=1), np.abs(dy).max(axis=1)) * W0
        t = _voxel(x.textures[4][1], p, _level(np.log2(rho)))
        t[(col[9] == 0) | (np.arange(n_thr) >= n)] = 0
        return _f(t.ravel())

    body = r"""
  int i = TID; if (i >= n || !a[i + 9 * N]) return;  // (ended lanes: the quad is partial)
  const float *f = (const float *)a;
  float4 dx = make_float4(f[i + 3 * N], f[i + 4 * N], f[i + 5 * N], 0.f);
  float4 dy = make_float4(f[i + 6 * N], f[i + 7 * N], f[i + 8 * N], 0.f);
  float4 v = tex3DGrad<float4>(t, f[i], f[i + N], f[i + 2 * N], dx, dy);
  float *of = (float *)o;
  of[4 * i] = v.x; of[4 * i + 1] = v.y; of[4 * i + 2] = v.z; of[4 * i + 3] = v.w;
}""".replace("N]", f"{n_thr}]")

    def bound_inputs(r):
        x = inputs(r)
        x.extra = struct.pack("<IQ", 0, HANDLE + 1)  # n at 0x178, then t at 0x180
        return x

    case(
        name="tex_grad3d",
        style="texture",
        group="texture_grad3",
        src="""
K(tex_grad3d) {
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];"""
        + body,
        inputs=inputs,
        ref=ref,
    )
    case(
        name="tex_grad3d_bound",
        style="texture",
        group="texture_grad3",
        src="""
extern "C" __global__ void tex_grad3d_bound(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                            uint32_t *__restrict__ o, int n, cudaTextureObject_t t) {
  // K(tex_grad3d_bound): K's parameters and a texture object after n (cuda_build.build's marker)"""
        + body,
        inputs=bound_inputs,
        ref=ref,
    )


LAYERS = 3


def define_one_dim(case, Inputs) -> None:
    """1D and 1D array textures in kernels (shader-ndv, group ``texture_1d``), every form nvcc 13
    (sm_86) and ptxas 12.9 (sm_53) write for them: tex1D / tex1DLod / tex1DGrad (TEX / TXD on
    2D: ptxas samples a 1D texture with 2D instructions, y = 0), tex1Dfetch and PTX tex.1d .s32
    (TLD 1D .LZ; SM53 bound TLDS 1D), tex.level.1d (TLD 1D .LL.CL), tex1DLayered(Lod) (TEX
    ARRAY_1D), tex.a1d (TLD ARRAY_1D), tex1DLayeredGrad (TXD ARRAY_1D) and txq.width.  The 1D
    texture is entry 3 of the 2D pool, 16 x 1 texels, 5 levels (lower/texture.py ONE_DIM_POOL);
    the 1D array entry 4 of the 2D array pool, 16 x 1 x 3 layers, 5 levels (the 2D pool's entry 4
    a dummy).  References as ``define``'s (nearest, clamp to edge, normalised coordinates):
    points are texel centres of level 0 (some outside), levels from ``LODS`` and clamped integer
    levels, gradients powers of two (and 1.5 times them) / 16, layers inside the array."""
    w = W0
    h1d, harr = HANDLE, 2 << 20 | 4  # sampler 2: texture 3 (2D pool), texture 4 (2D array pool)
    lods = np.array([-1, 0, 0.25, 0.4, 1, 1.4, 1.6, 2, 2.75, 3, 3.4, 4, 6], np.float32)
    cols = 8  # x, lod, i, ilevel, layer, dx, dy (f32 / s32 words), one spare

    def tex_levels(r, layers: int = 0) -> list[np.ndarray]:
        shape = (layers,) if layers else ()
        return [(r.integers(-1000, 1000, shape + (1, max(1, w >> k), 4)) / 8).astype(np.float32) for k in range(LEVELS)]

    def inputs(r):
        x = ((r.integers(-4, w + 4, N) + 0.5) / w).astype(np.float32)
        lv = lods[r.integers(0, len(lods), N)]
        ilv = r.integers(-2, 7, N)
        side = np.maximum(w >> np.clip(ilv, 0, LEVELS - 1), 1)
        i = r.integers(0, 2**16, N) % side
        layer = r.integers(0, LAYERS, N)
        e = r.integers(-3, 7, (2, N)) + r.integers(0, 2, (2, N)) * np.log2(1.5)
        g = (2.0**e / w).astype(np.float32)
        a = np.concatenate([_f(x), _f(lv), i.astype(np.uint32), ilv.astype(np.int64).astype(np.uint32), layer.astype(np.uint32)])
        a = np.concatenate([a, _f(g[0]), _f(g[1]), np.zeros(N, np.uint32)])
        tex = _pools(r)[:3] + [tex_levels(r), ("2d_array", tex_levels(r, LAYERS))]
        return Inputs(a, np.array([h1d, 0, harr, 0], np.uint32), N, N, np.zeros(12 * N, np.uint32), textures=tex)

    def texel(levels, x, d, layer=None):
        lv = levels[d] if layer is None else levels[d][layer]
        n = lv.shape[1]
        return lv[0, min(max(int(np.floor(x * n)), 0), n - 1)]

    def ref(x):
        c = [x.a[k * N : (k + 1) * N] for k in range(cols)]
        px, lv, gx, gy = c[0].view(np.float32), c[1].view(np.float32), c[5].view(np.float32), c[6].view(np.float32)
        i, ilv, layer = c[2].view(np.int32), c[3].view(np.int32), c[4].astype(int)
        one, arr = x.textures[3], x.textures[4][1]
        out = np.zeros((N, 12), np.float32)
        lam = np.log2(np.maximum(gx.astype(np.float64), gy.astype(np.float64)) * w)
        dg, dl = _level(lam), _level(lv.astype(np.float64))
        for t in range(N):
            dc = min(max(int(ilv[t]), 0), LEVELS - 1)
            out[t, 0] = texel(one, px[t], 0)[0]  # tex1D
            out[t, 1] = texel(one, px[t], dl[t])[1]  # tex1DLod
            out[t, 2] = one[0][0, i[t] % w][2] if i[t] < w else 0  # tex1Dfetch / tex.1d (i < level 0's width)
            out[t, 3] = one[dc][0, i[t]][3] if dc == ilv[t] else 0  # tex.level.1d (outside the chain: 0, shader-nv)
            out[t, 4] = texel(arr, px[t], 0, layer[t])[0]  # tex1DLayered
            out[t, 5] = texel(arr, px[t], dl[t], layer[t])[1]  # tex1DLayeredLod
            out[t, 6] = arr[dc][layer[t], 0, i[t]][2]  # tex.a1d at the clamped level's texel (see the kernel)
            out[t, 7] = texel(one, px[t], dg[t])[3]  # tex1DGrad
            out[t, 8] = texel(arr, px[t], dg[t], layer[t])[0]  # tex1DLayeredGrad
            out[t, 9] = w  # txq.width
        return _f(out.ravel())

    body = r"""
  int i = TID; if (i >= n) return;
  const float *f = (const float *)a;
  const int *s = (const int *)a;
  float x = f[i], lod = f[i + N], gx = f[i + 5 * N], gy = f[i + 6 * N];
  int ix = s[i + 2 * N], ilv = s[i + 3 * N], layer = s[i + 4 * N];
  float4 z, l, q;
  int lc = ilv < 0 ? 0 : ilv > 4 ? 4 : ilv;
  asm volatile("tex.1d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5}];" : "=f"(z.x), "=f"(z.y), "=f"(z.z), "=f"(z.w) : "l"(t), "r"(ix));
  asm volatile("tex.level.1d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5}], %6;"
               : "=f"(l.x), "=f"(l.y), "=f"(l.z), "=f"(l.w) : "l"(t), "r"(ix), "r"(ilv));
  asm volatile("tex.level.a1d.v4.f32.s32 {%0,%1,%2,%3}, [%4, {%5,%6}], %7;"
               : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w) : "l"(t2), "r"(layer), "r"(ix), "r"(lc));
  float *of = (float *)o;
  of[12 * i] = tex1D<float4>(t, x).x;
  of[12 * i + 1] = tex1DLod<float4>(t, x, lod).y;
  of[12 * i + 2] = ix < 16 ? z.z : 0.f;
  of[12 * i + 3] = l.w;
  of[12 * i + 4] = tex1DLayered<float4>(t2, x, layer).x;
  of[12 * i + 5] = tex1DLayeredLod<float4>(t2, x, layer, lod).y;
  of[12 * i + 6] = q.z;
  of[12 * i + 7] = tex1DGrad<float4>(t, x, gx, gy).w;
  of[12 * i + 8] = tex1DLayeredGrad<float4>(t2, x, layer, gx, gy).x;
  int wd; asm("txq.width.b32 %0, [%1];" : "=r"(wd) : "l"(t));
  of[12 * i + 9] = (float)wd;
}""".replace("N]", f"{N}]")

    def bound_inputs(r):
        x = inputs(r)
        x.extra = struct.pack("<IQQ", 0, h1d, harr)  # n at 0x178, then t at 0x180, t2 at 0x188
        return x

    case(
        name="tex_1d",
        style="texture",
        group="texture_1d",
        src="""
K(tex_1d) {
  cudaTextureObject_t t = ((const unsigned long long *)b)[0], t2 = ((const unsigned long long *)b)[1];"""
        + body,
        inputs=inputs,
        ref=ref,
    )
    case(
        name="tex_1d_bound",
        style="texture",
        group="texture_1d",
        src="""
extern "C" __global__ void tex_1d_bound(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                        uint32_t *__restrict__ o, int n, cudaTextureObject_t t, cudaTextureObject_t t2) {
  // K(tex_1d_bound): K's parameters and two texture objects after n (cuda_build.build's marker)"""
        + body,
        inputs=bound_inputs,
        ref=ref,
    )


CUBE_N = 8  # face side


def define_grad_cube(case, Inputs) -> None:
    """texCubemapGrad and texCubemapLayeredGrad (shader-ndv, group ``texture_grad3``): the same quad loop as
    tex3DGrad on a cube texture, ptxas scaling each lane's direction by 1 / max |component|
    (FMNMX, MUFU.RCP, FMUL: replayed per lane by lower/quad_tex.py) before TEX.NDV.  The texture
    is entry 4 of the cube pool (set 1 binding 9; the array: of the cube array pool, binding 10,
    three cubes, the layer per thread), 8 x 8 faces, one level (the level of detail
    does not pick a texel: the gradients are random).  Directions point at texels of a random
    face, their (s, t) 0.1 texel or more from a texel edge and their major axis clear of the
    others by 1/8, so the scaled direction (an approximate reciprocal) reads the texel the
    exact one does (texel_refs.cube_texel: Vulkan's face selection)."""
    from texel_refs import cube_directions, cube_texel

    def directions(r, n: int) -> np.ndarray:
        return cube_directions(r, n, CUBE_N)

    def inputs(r):
        d = directions(r, N)
        g = (r.integers(-8, 9, (6, N)) / 64).astype(np.float32)
        a = np.concatenate([_f(d[:, k]) for k in range(3)] + [_f(g[k]) for k in range(6)])
        faces = (r.integers(-1000, 1000, (6, CUBE_N, CUBE_N, 4)) / 8).astype(np.float32)
        tex = _pools(r) + [("cube", [faces])]
        return Inputs(a, np.array([HANDLE + 1, 0, 0, 0], np.uint32), N, N, np.zeros(4 * N, np.uint32), textures=tex)

    def ref(x):
        d = np.stack([x.a[k * N : (k + 1) * N].view(np.float32) for k in range(3)], axis=1)
        faces = x.textures[4][1][0]
        return _f(np.stack([cube_texel(faces, tuple(float(v) for v in d[i])) for i in range(N)]).astype(np.float32).ravel())

    def array_inputs(r):
        x = inputs(r)
        layer = r.integers(0, 3, N).astype(np.uint32)
        x.a = np.concatenate([x.a, layer])
        faces = (r.integers(-1000, 1000, (18, CUBE_N, CUBE_N, 4)) / 8).astype(np.float32)  # 3 cubes
        x.textures = x.textures[:4] + [("cube_array", [faces])]
        return x

    def array_ref(x):
        d = np.stack([x.a[k * N : (k + 1) * N].view(np.float32) for k in range(3)], axis=1)
        layer = x.a[9 * N : 10 * N].astype(int)
        faces = x.textures[4][1][0]
        t = [cube_texel(faces[6 * layer[i] : 6 * layer[i] + 6], tuple(float(v) for v in d[i])) for i in range(N)]
        return _f(np.stack(t).astype(np.float32).ravel())

    case(
        name="tex_grad_cube_array",
        style="texture",
        group="texture_grad3",
        src=r"""
K(tex_grad_cube_array) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  const float *f = (const float *)a;
  float4 dx = make_float4(f[i + 3 * n], f[i + 4 * n], f[i + 5 * n], 0.f);
  float4 dy = make_float4(f[i + 6 * n], f[i + 7 * n], f[i + 8 * n], 0.f);
  float4 v = texCubemapLayeredGrad<float4>(t, f[i], f[i + n], f[i + 2 * n], (int)a[i + 9 * n], dx, dy);
  float *of = (float *)o;
  of[4 * i] = v.x; of[4 * i + 1] = v.y; of[4 * i + 2] = v.z; of[4 * i + 3] = v.w;
}""",
        inputs=array_inputs,
        ref=array_ref,
    )
    case(
        name="tex_grad_cube",
        style="texture",
        group="texture_grad3",
        src=r"""
K(tex_grad_cube) {
  int i = TID; if (i >= n) return;
  cudaTextureObject_t t = ((const unsigned long long *)b)[0];
  const float *f = (const float *)a;
  float4 dx = make_float4(f[i + 3 * n], f[i + 4 * n], f[i + 5 * n], 0.f);
  float4 dy = make_float4(f[i + 6 * n], f[i + 7 * n], f[i + 8 * n], 0.f);
  float4 v = texCubemapGrad<float4>(t, f[i], f[i + n], f[i + 2 * n], dx, dy);
  float *of = (float *)o;
  of[4 * i] = v.x; of[4 * i + 1] = v.y; of[4 * i + 2] = v.z; of[4 * i + 3] = v.w;
}""",
        inputs=inputs,
        ref=ref,
    )
