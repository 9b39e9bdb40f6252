"""numpy's answers for what Vulkan's samplers read (the specification's texel selection, clamp to
edge): one texel, a nearest or bilinear sample, a four-texel gather, and a cube map lookup."""

from __future__ import annotations

import numpy as np


def texel(tex: np.ndarray, j: int, i: int) -> np.ndarray:
    """Texel (row j, column i) of ``tex``, the coordinates clamped to its edge."""
    th, tw = tex.shape[:2]
    return tex[min(max(j, 0), th - 1), min(max(i, 0), tw - 1)].astype(float)


def sample(tex: np.ndarray, u: float, v: float, linear: bool) -> np.ndarray:
    """Vulkan's nearest / bilinear sample of ``tex`` at normalised (u, v), clamped."""
    th, tw = tex.shape[:2]
    x, y = u * tw, v * th
    if not linear:
        return texel(tex, int(np.floor(y)), int(np.floor(x)))
    x, y = x - 0.5, y - 0.5
    i, j = int(np.floor(x)), int(np.floor(y))
    fx, fy = x - i, y - j
    return (1 - fy) * ((1 - fx) * texel(tex, j, i) + fx * texel(tex, j, i + 1)) + fy * (
        (1 - fx) * texel(tex, j + 1, i) + fx * texel(tex, j + 1, i + 1)
    )


def gather(tex: np.ndarray, u: float, v: float, comp: int) -> np.ndarray:
    """Vulkan's gather of component ``comp`` around (u, v), clamped to the edge: texels
    (i0, j1), (i1, j1), (i1, j0), (i0, j0)."""
    th, tw = tex.shape[:2]
    i0, j0 = int(np.floor(u * tw - 0.5)), int(np.floor(v * th - 0.5))
    return np.array([int(texel(tex, j, i)[comp]) for i, j in ((i0, j0 + 1), (i0 + 1, j0 + 1), (i0 + 1, j0), (i0, j0))])


def cube_face_st(d) -> tuple[int, float, float]:
    """Vulkan's cube map face and (s, t) in [0, 1] of direction d (specification, "Cube Map Face
    Selection"), computed in d's own precision."""
    rx, ry, rz = d
    ax = np.abs(d)
    if ax[0] >= ax[1] and ax[0] >= ax[2]:
        face, sc, tc, ma = (0, -rz, -ry, rx) if rx > 0 else (1, rz, -ry, rx)
    elif ax[1] >= ax[2]:
        face, sc, tc, ma = (2, rx, rz, ry) if ry > 0 else (3, rx, -rz, ry)
    else:
        face, sc, tc, ma = (4, rx, -ry, rz) if rz > 0 else (5, -rx, -ry, rz)
    return face, 0.5 * (sc / abs(ma) + 1), 0.5 * (tc / abs(ma) + 1)


def cube_directions(r, n: int, side: int) -> np.ndarray:
    """``n`` random directions that each point at a texel of a cube of ``side``-texel faces, their
    (s, t) 0.1 texel or more from a texel edge and their major axis clear of the others by 1/8,
    so an approximate reciprocal of the major axis still reads the texel the exact one does."""
    out = []
    while len(out) < n:
        d = r.integers(-32, 33, 3) / 16.0
        ax = np.sort(np.abs(d))
        if ax[2] < 0.5 or ax[2] - ax[1] < 0.125:
            continue
        _, s, t = cube_face_st(tuple(float(v) for v in d))
        fs, ft = (s * side) % 1, (t * side) % 1
        if min(fs, 1 - fs, ft, 1 - ft) < 0.1:
            continue
        out.append(d)
    return np.array(out, np.float32)


def cube_texel(faces: np.ndarray, d: tuple[float, float, float]) -> np.ndarray:
    """Vulkan's cube map face selection and (s, t) (specification, "Cube Map Face Selection")."""
    face, s, t = cube_face_st(d)
    n = faces.shape[1]
    return faces[face, min(int(t * n), n - 1), min(int(s * n), n - 1)]
