"""The descriptor interface of a translated kernel (issue 31): which (set, binding) holds which
pool.  One table, read by the translator (shader_svc/lower/surface.py, lower/texture.py), the
GPU process (gpu_host/compute.py, compute_spirv.py) and the test harness
(tests/shader_svc/vk_compute.py, compute_textures.py), so the numbering cannot drift between
them (gpu-pools).

- set 0 binding 0: constant bank 0, a storage buffer.
- set 1 (``POOL_SET``): the pools.  Texture pools hold sampled images, one binding per view
  kind (``TEXTURE_BINDINGS``), entry k of each the texture at the handle's texture index k where
  it has that kind and a one-texel dummy of the kind elsewhere; the sampler pool (binding 1);
  surface pools hold R32ui storage images, one binding per dimension (``SURFACE_BINDINGS``),
  entry k the surface bound at slot k where it has that dimension.
- 1D textures have no pool of their own: ptxas samples ``tex1D`` with 2D instructions (TEX / TXD
  ... 2D, y = 0), so a 1D texture is an entry of the 2D pool one texel high and a 1D array one of
  the 2D array pool (``TEXTURE_VIEW_POOL``); a 1D *surface* (SULD/SUST .1D) has its own pools.

``IMAGE_TYPES``: the (Dim, Arrayed, Sampled) operands of OpTypeImage each binding's images have
(SPIR-V 1.6: Dim 0 1D, 1 2D, 2 3D, 3 Cube; Sampled 1 with a sampler, 2 a storage image)."""

from __future__ import annotations

BANK = (0, 0)
POOL_SET = 1
TEXTURE_POOL = 16  # entries of each texture pool (the handle's texture index 0..15)
SAMPLER_POOL = 4  # entries of the sampler pool
SURFACE_POOL = 8  # entries of each surface pool (surface slots 0..7)

SAMPLER_BINDING = 1
# view kind -> set 1 binding of its sampled-image pool
TEXTURE_BINDINGS = {"2d": 0, "2d_array": 7, "3d": 8, "cube": 9, "cube_array": 10}
# surface dimension -> set 1 binding of its storage-image pool
SURFACE_BINDINGS = {"2d": 2, "1d": 3, "1d_array": 4, "2d_array": 5, "3d": 6}
# 1D textures are entries of the 2D pools, one texel high (module docstring)
TEXTURE_VIEW_POOL = {"1d": "2d", "1d_array": "2d_array"}

DIM_1D, DIM_2D, DIM_3D, DIM_CUBE = 0, 1, 2, 3
_DIMS = {
    "1d": (DIM_1D, 0),
    "1d_array": (DIM_1D, 1),
    "2d": (DIM_2D, 0),
    "2d_array": (DIM_2D, 1),
    "3d": (DIM_3D, 0),
    "cube": (DIM_CUBE, 0),
    "cube_array": (DIM_CUBE, 1),
}
# set 1 binding -> (Dim, Arrayed, Sampled) of its images
IMAGE_TYPES = {
    **{b: (*_DIMS[k], 1) for k, b in TEXTURE_BINDINGS.items()},
    **{b: (*_DIMS[k], 2) for k, b in SURFACE_BINDINGS.items()},
}


def pool_name(binding: int) -> str:
    """What an error calls set 1 ``binding`` ("the CUBE ARRAY texture pool", "the sampler pool")."""
    if binding == SAMPLER_BINDING:
        return "the sampler pool"
    for k, b in TEXTURE_BINDINGS.items():
        if b == binding:
            return f"the {k.replace('_', ' ').upper()} texture pool"
    for k, b in SURFACE_BINDINGS.items():
        if b == binding:  # (as the GPU process has always worded them: "the 1D array surface pool")
            return f"the {k.split('_')[0].upper()}{' array' if k.endswith('_array') else ''} surface pool"
    return f"no pool (set {POOL_SET} binding {binding})"
