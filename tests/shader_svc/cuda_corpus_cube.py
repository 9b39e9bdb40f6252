"""Cube map kernels of the issue-31 corpus (gpu-pools, group ``texture_cube``): CUDA's
``texCubemap`` and ``texCubemapLayered`` on texture objects read from memory (SM86 ``TEX.B.LL ...
CUBE`` / ``ARRAY_CUBE``, SM53 ``TEX.B``) and passed as kernel parameters (SM86 ``TEX.SCR.LL``
cube, ``TEX.LL`` cube array; SM53 ``TEXS ... CUBE``, ``TEX ... ARRAY_CUBE``), and
``texCubemapLayeredGrad`` on a kernel parameter (the bound TEX.NDV on a cube array: SM86
``TEX.SCR.NDV`` Ra = (layer, x), Rb = (y, z), SM53 ``TEX.NDV`` Ra = (layer, x, y, z)), which
the translation refused before the GPU process had a cube array pool.  ptxas divides each
direction by its largest magnitude (an approximate reciprocal) before the TEX; the translation
samples the cube pool (set 1 binding 9) or the cube array pool (binding 10,
``nxrecomp/common/kernel_pools.py``).

Inputs as ``cuda_corpus_tex.define_grad_cube``'s: the texture is entry 4 of the cube (array)
pool (entries 0..3 other textures of the 2D pool), 8 x 8 faces, one level; directions point at
texels of random faces, their (s, t) 0.1 texel or more from a texel edge and their major axis
clear of the others by 1/8, so the scaled direction reads the texel the exact one does.
Reference: ``texel_refs.cube_texel``, the Vulkan specification's "Cube Map Face Selection" (which
CUDA's cube maps follow).  The same kernels run through a real GPU process in
``tests/gpu_host/test_compute_pools.py``."""

from __future__ import annotations

import struct

import numpy as np

from cuda_corpus_tex import CUBE_N, HANDLE, N, _f, _pools

GROUP = "texture_cube"
CUBES = 3  # cubes of the cube array


def define(case, Inputs) -> None:
    from texel_refs import cube_directions, cube_texel

    def directions(r, n: int) -> np.ndarray:
        return cube_directions(r, n, CUBE_N)

    def inputs(r, array: bool = False, bound: bool = False):
        d = directions(r, N)
        layer = r.integers(0, CUBES, N).astype(np.uint32)
        g = (r.integers(-8, 9, (2, N)) / 64).astype(np.float32)  # the Grad kernel's dP/dx.x, dP/dy.y
        a = np.concatenate([_f(d[:, k]) for k in range(3)] + [layer, _f(g[0]), _f(g[1])])
        faces = (r.integers(-1000, 1000, (6 * (CUBES if array else 1), CUBE_N, CUBE_N, 4)) / 8).astype(np.float32)
        tex = _pools(r) + [("cube_array" if array else "cube", [faces])]
        x = Inputs(a, np.array([HANDLE + 1, 0, 0, 0], np.uint32), N, N, np.zeros(4 * N, np.uint32), textures=tex)
        if bound:
            x.extra = struct.pack("<IQ", 0, HANDLE + 1)  # n at 0x178, then t at 0x180
        return x

    def ref(x):
        d = np.stack([x.a[k * N : (k + 1) * N].view(np.float32) for k in range(3)], axis=1)
        faces = x.textures[4][1][0]
        first = 6 * x.a[3 * N : 4 * N].astype(int) if len(faces) > 6 else np.zeros(N, int)
        t = [cube_texel(faces[first[i] : first[i] + 6], tuple(float(v) for v in d[i])) for i in range(N)]
        return _f(np.stack(t).astype(np.float32).ravel())

    out = "  float *of = (float *)o;\n  of[4 * i] = v.x; of[4 * i + 1] = v.y; of[4 * i + 2] = v.z; of[4 * i + 3] = v.w;\n}"
    head = "  int i = TID; if (i >= n) return;\n  const float *f = (const float *)a;\n"
    loads = {
        "tex_cube": "  float4 v = texCubemap<float4>(t, f[i], f[i + n], f[i + 2 * n]);\n",
        "tex_cube_array": "  float4 v = texCubemapLayered<float4>(t, f[i], f[i + n], f[i + 2 * n], (int)a[i + 3 * n]);\n",
        "tex_grad_cube_array": "  float4 v = texCubemapLayeredGrad<float4>(t, f[i], f[i + n], f[i + 2 * n], (int)a[i + 3 * n],\n"
        "      make_float4(f[i + 4 * n], 0.f, 0.f, 0.f), make_float4(0.f, f[i + 5 * n], 0.f, 0.f));\n",
    }
    for stem, body in loads.items():
        array = "array" in stem
        for bound in (False, True):
            if stem == "tex_grad_cube_array" and not bound:
                continue  # (the bindless one is cuda_corpus_tex.define_grad_cube's)
            name = stem + ("_bound" if bound else "")
            if bound:
                sig = (
                    f'extern "C" __global__ void {name}(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,\n'
                    f"    uint32_t *__restrict__ o, int n, cudaTextureObject_t t) {{\n"
                    f"  // K({name}): K's parameters and a texture object after n (cuda_build.build's marker)\n"
                )
            else:
                sig = f"K({name}) {{\n  cudaTextureObject_t t = ((const unsigned long long *)b)[0];\n"
            case(
                name=name,
                style="texture",
                group=GROUP,
                src=sig + head + body + out,
                inputs=lambda r, array=array, bound=bound: inputs(r, array, bound),
                ref=ref,
            )
