"""Surface kernels of the issue-31 corpus (shader-surf): CUDA surface objects read and written
with surf2Dread/surf2Dwrite in the three boundary modes (cudaBoundaryModeTrap / Zero / Clamp:
SULD/SUST .TRAP / .IGN / the unprinted clamp mode) and PTX ``sured`` reductions (SURED), on
both ISAs.

How the harness binds them (``shader_svc/lower/surface.py``): each ``Inputs.surfaces`` entry is
a 2D R32_UINT storage image of the surface pool, entry k answering to handle k; the kernel
reads its surface object from ``b`` (64-bit words: the handle the CUDA driver would have
written).  The expected result is the output words followed by every surface's words after the
run.  References per PTX ISA "Surface Instructions": x is a byte coordinate (texel x / 4 for
32-bit data); .zero reads 0 and drops stores out of range, .clamp uses the nearest texel.
"""

from __future__ import annotations

import numpy as np

GROUP = "surface"


def _u32(r, n, lo=0, hi=2**32):
    return r.integers(lo, hi, n, dtype=np.uint64).astype(np.uint32)


def _handles(*hs: int, n: int = 8) -> np.ndarray:
    """``b``: the surface objects as 64-bit words (handle k = pool entry k)."""
    b = np.zeros(n, np.uint32)
    for i, h in enumerate(hs):
        b[2 * i] = h
    return b


def define(case, Inputs) -> None:
    def kernel(name: str, body: str, inputs, ref) -> None:
        """A surface-style case: kernel ``name`` whose every thread i < n runs ``body``."""
        src = f"\nK({name}) {{\n  int i = TID; if (i >= n) return;{body}}}"
        case(name=name, style="surface", group=GROUP, src=src, inputs=inputs, ref=ref)

    # --- surf2Dread / surf2Dwrite, trap mode: a read-modify-write of every texel of entry 1 ----
    def rw_inputs(r):
        img = _u32(r, 16 * 12).reshape(12, 16)
        return Inputs(_u32(r, 192), _handles(1), 192, 192, np.zeros(192, np.uint32), [np.zeros((2, 2), np.uint32), img])

    def rw_ref(x):
        img = x.surfaces[1]
        return np.concatenate([img.ravel(), np.zeros(4, np.uint32), (img.ravel() + x.a).astype(np.uint32)])

    kernel(
        "surf_rw",
        r"""
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  uint32_t v = surf2Dread<uint32_t>(s, (i & 15) * 4, i >> 4);
  surf2Dwrite(v + a[i], s, (i & 15) * 4, i >> 4);
  o[i] = v;
""",
        rw_inputs,
        rw_ref,
    )

    # --- two surfaces: a transpose from entry 0 into entry 2 (8 x 8), xor a --------------------
    def tr_inputs(r):
        src = _u32(r, 64).reshape(8, 8)
        return Inputs(
            _u32(r, 64),
            _handles(0, 2),
            64,
            64,
            np.zeros(64, np.uint32),
            [src, np.zeros((1, 1), np.uint32), np.zeros((8, 8), np.uint32)],
        )

    def tr_ref(x):
        src = x.surfaces[0]
        i = np.arange(64)
        dst = np.zeros((8, 8), np.uint32)
        dst[i & 7, i >> 3] = src[i >> 3, i & 7] ^ x.a
        return np.concatenate([np.full(64, 7, np.uint32), src.ravel(), np.zeros(1, np.uint32), dst.ravel()])

    kernel(
        "surf_transpose",
        r"""
  const unsigned long long *h = (const unsigned long long *)b;
  cudaSurfaceObject_t s = h[0], d = h[1];
  int x = i & 7, y = i >> 3;
  surf2Dwrite(surf2Dread<uint32_t>(s, x * 4, y) ^ a[i], d, y * 4, x);
  o[i] = 7;
""",
        tr_inputs,
        tr_ref,
    )

    # --- boundary modes: zero and clamp reads around a 10 x 6 surface, zero-mode stores ---------
    def bd_inputs(r):
        img = _u32(r, 60).reshape(6, 10)
        return Inputs(_u32(r, 128), _handles(0, 1), 128, 128, np.zeros(256, np.uint32), [img, np.zeros((6, 10), np.uint32)])

    def bd_ref(x):
        img = x.surfaces[0]
        i = np.arange(128)
        tx, ty = (i % 16) - 3, (i // 16) - 1
        inside = (tx >= 0) & (tx < 10) & (ty >= 0) & (ty < 6)
        zero = np.where(inside, img[np.clip(ty, 0, 5), np.clip(tx, 0, 9)], 0)
        clamp = img[np.clip(ty, 0, 5), np.clip(tx, 0, 9)]
        out = np.zeros(256, np.uint32)
        out[0::2], out[1::2] = zero, clamp
        dst = np.zeros((6, 10), np.uint32)
        dst[ty[inside], tx[inside]] = x.a[inside]
        return np.concatenate([out, img.ravel(), dst.ravel()])

    kernel(
        "surf_bounds",
        r"""
  const unsigned long long *h = (const unsigned long long *)b;
  int x = (i % 16) - 3, y = (i / 16) - 1;
  o[2 * i] = surf2Dread<uint32_t>(h[0], x * 4, y, cudaBoundaryModeZero);
  o[2 * i + 1] = surf2Dread<uint32_t>(h[0], x * 4, y, cudaBoundaryModeClamp);
  surf2Dwrite(a[i], h[1], x * 4, y, cudaBoundaryModeZero);
""",
        bd_inputs,
        bd_ref,
    )

    # --- sured (PTX surface reductions): a histogram, a maximum and a signed minimum per bin ----
    def red_inputs(r):
        img = np.zeros((3, 16), np.uint32)
        img[2, :] = 0x7FFFFFFF
        return Inputs(_u32(r, 300), _handles(0), 300, 320, np.zeros(4, np.uint32), [img])

    def red_ref(x):
        a = x.a[: x.n]
        img = x.surfaces[0].copy()
        for k in range(16):
            sel = a[(a & 15) == k]
            img[0, k] = len(sel)
            img[1, k] = sel.max() if len(sel) else 0
            img[2, k] = np.uint32(
                min(int(np.int32(0x7FFFFFFF)), int(sel.view(np.int32).min()) if len(sel) else 2**31 - 1) & 0xFFFFFFFF
            )
        return np.concatenate([np.zeros(4, np.uint32), img.ravel()])

    kernel(
        "surf_red",
        r"""
  cudaSurfaceObject_t s = ((const unsigned long long *)b)[0];
  uint32_t v = a[i]; int x = (v & 15) * 4;
  asm volatile("sured.b.add.2d.u32.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"(x), "r"(0), "r"(1u) : "memory");
  asm volatile("sured.b.max.2d.u32.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"(x), "r"(1), "r"(v) : "memory");
  asm volatile("sured.b.min.2d.s32.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"(x), "r"(2), "r"(v) : "memory");
""",
        red_inputs,
        red_ref,
    )

    # --- the other dimensions: 1D, 1D layered, 2D layered, 3D (entries 0..3 of their pools) ----
    # thread i reads texel i of each (x fastest, the layer / z slowest), writes the xor of the
    # four back into each at the same place; trap mode inside, zero mode for one reading past
    # the end of each (what the bounds of a layer / depth / row mean)
    def dims_inputs(r):
        s = [
            ("1D", _u32(r, 96)),
            ("1D_ARRAY", _u32(r, 96).reshape(3, 32)),
            ("2D_ARRAY", _u32(r, 96).reshape(3, 4, 8)),
            ("3D", _u32(r, 96).reshape(3, 4, 8)),
        ]
        return Inputs(_u32(r, 96), _handles(0, 1, 2, 3), 96, 96, np.zeros(192, np.uint32), s)

    def dims_ref(x):
        flat = [sf[1].ravel() for sf in x.surfaces]
        acc = flat[0] ^ flat[1] ^ flat[2] ^ flat[3] ^ x.a
        out = np.zeros(192, np.uint32)
        out[0::2] = acc  # the odd words: zero-mode reads past the end of x, the layers, y, z: 0
        return np.concatenate([out] + [acc for _ in flat])

    kernel(
        "surf_dims",
        r"""
  const unsigned long long *h = (const unsigned long long *)b;
  uint32_t v = surf1Dread<uint32_t>(h[0], i * 4);
  v ^= surf1DLayeredread<uint32_t>(h[1], (i & 31) * 4, i >> 5);
  v ^= surf2DLayeredread<uint32_t>(h[2], (i & 7) * 4, (i >> 3) & 3, i >> 5);
  v ^= surf3Dread<uint32_t>(h[3], (i & 7) * 4, (i >> 3) & 3, i >> 5);
  v ^= a[i];
  uint32_t z = surf1Dread<uint32_t>(h[0], (i + 96) * 4, cudaBoundaryModeZero)
             | surf1DLayeredread<uint32_t>(h[1], (i & 31) * 4, (i >> 5) + 3, cudaBoundaryModeZero)
             | surf2DLayeredread<uint32_t>(h[2], (i & 7) * 4, ((i >> 3) & 3) + 4, i >> 5, cudaBoundaryModeZero)
             | surf3Dread<uint32_t>(h[3], (i & 7) * 4, (i >> 3) & 3, (i >> 5) + 3, cudaBoundaryModeZero);
  surf1Dwrite(v, h[0], i * 4);
  surf1DLayeredwrite(v, h[1], (i & 31) * 4, i >> 5);
  surf2DLayeredwrite(v, h[2], (i & 7) * 4, (i >> 3) & 3, i >> 5);
  surf3Dwrite(v, h[3], (i & 7) * 4, (i >> 3) & 3, i >> 5);
  o[2 * i] = v; o[2 * i + 1] = z;
""",
        dims_inputs,
        dims_ref,
    )

    # --- access sizes: uchar, short, uint2, uint4 surfaces (SULD/SUST .U8 .U16 .64 .128) ---------
    # each surface is bound as 32-bit texels of its rows' bytes (64 elements a row); thread i
    # reads element i of row 0 and writes a function of it to element i of row 1
    def sz_inputs(r):
        imgs = [_u32(r, 2 * w).reshape(2, w) for w in (16, 32, 128, 256)]
        return Inputs(_u32(r, 64), _handles(0, 1, 2, 3), 64, 64, np.zeros(64, np.uint32), imgs)

    def sz_ref(x):
        i0, i1, i2, i3 = (s.copy() for s in x.surfaces)
        c = i0.view(np.uint8).reshape(2, 64)
        s = i1.view(np.int16).reshape(2, 64)
        u = i2.reshape(2, 64, 2)
        q = i3.reshape(2, 64, 4)
        out = (c[0].astype(np.int64) + s[0].astype(np.int64) + u[0, :, 0] + q[0, :, 2]) % 2**32
        c[1] = c[0] + np.uint8(1)
        s[1] = s[0] - np.int16(1)
        u[1] = u[0, :, ::-1]
        q[1] = q[0, :, ::-1]
        return np.concatenate([out.astype(np.uint32), i0.ravel(), i1.ravel(), i2.ravel(), i3.ravel()])

    kernel(
        "surf_sizes",
        r"""
  const unsigned long long *h = (const unsigned long long *)b;
  unsigned char c = surf2Dread<unsigned char>(h[0], i, 0);
  short s = surf2Dread<short>(h[1], i * 2, 0);
  uint2 u = surf2Dread<uint2>(h[2], i * 8, 0);
  uint4 q = surf2Dread<uint4>(h[3], i * 16, 0);
  surf2Dwrite((unsigned char)(c + 1), h[0], i, 1);
  surf2Dwrite((short)(s - 1), h[1], i * 2, 1);
  surf2Dwrite(make_uint2(u.y, u.x), h[2], i * 8, 1);
  surf2Dwrite(make_uint4(q.w, q.z, q.y, q.x), h[3], i * 16, 1);
  o[i] = c + s + u.x + q.z;
""",
        sz_inputs,
        sz_ref,
    )
