"""Comparing a translated program's drawing with the GLSL it replaces, drawn by the same Vulkan
driver with the same inputs: equal to the bit on lavapipe, within 1/255 elsewhere (FMA
contraction may differ), and both pictures must really show something."""

from __future__ import annotations

import numpy as np

# two triangles covering the screen, and their uv
QUAD = np.array([[-1, -1], [1, -1], [-1, 1], [1, -1], [1, 1], [-1, 1]], np.float32)
QUAD_UV = np.array([[0, 0], [1, 0], [0, 1], [1, 0], [1, 1], [0, 1]], np.float32)


def perspective_triangles(seed: int, attr_low: float = 0.0, attr_high: float = 1.0) -> np.ndarray:
    """Four random triangles (12 vertices: position, one vec4 attribute) under a real
    perspective, w from 0.5 to 3, attributes uniform in [attr_low, attr_high)."""
    rng = np.random.default_rng(seed)
    verts = np.zeros((12, 2, 4), np.float32)
    w = rng.uniform(0.5, 3.0, 12).astype(np.float32)
    verts[:, 0, :2] = rng.uniform(-1, 1, (12, 2)) * w[:, None]
    verts[:, 0, 2], verts[:, 0, 3] = 0.3 * w, w
    verts[:, 1] = rng.uniform(attr_low, attr_high, (12, 4))
    return verts


def tolerance(gpu) -> int:
    return 0 if "llvmpipe" in gpu.name() else 1


def assert_same(gpu, got: np.ndarray, want: np.ndarray, min_covered: int, min_colours: int, clear=(0, 0, 0, 0)):
    """``got`` (the machine code's) equals ``want`` (GLSL); both really drew something varied."""
    covered = (want != np.array(clear, np.uint8)).any(axis=2)
    assert covered.sum() >= min_covered, f"only {covered.sum()} pixels drawn: the case tests nothing"
    assert len(np.unique(want.reshape(-1, 4), axis=0)) >= min_colours
    diff = np.abs(got.astype(int) - want.astype(int))
    bad = np.argwhere(diff.max(axis=2) > tolerance(gpu))
    assert len(bad) == 0, (
        f"{len(bad)} pixels differ by more than {tolerance(gpu)}/255 "
        f"(exact on lavapipe); first (y, x): {bad[:5].tolist()}, "
        f"machine code {got[tuple(bad[0])].tolist()} vs GLSL {want[tuple(bad[0])].tolist()}"
    )
