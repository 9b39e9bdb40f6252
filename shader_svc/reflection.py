"""What a translated program uses, for the GPU process to bind: the record both ISAs' reflection
passes (``sm86/reflect.py``, ``sm53/reflect.py``) fill and the service sends
(``Translation.reflection``, stored as JSON beside each cached translation).  The meaning of
the graphics fields: shader_svc/README.md "Graphics-stage interface"."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConstRange:
    bank: int
    offset: int  # bytes
    size: int


@dataclass(frozen=True)
class GlobalPointer:
    bank: int
    offset: int  # byte offset of the 64-bit pointer in the bank
    read: bool
    written: bool
    atomic: bool


@dataclass(frozen=True)
class Reflection:
    const_ranges: tuple[ConstRange, ...]
    global_pointers: tuple[GlobalPointer, ...]
    shared_memory: bool  # LDS/STS/ATOMS present
    barriers: bool  # BAR present
    # graphics stages (empty for compute): see shader_svc/README.md "Graphics-stage interface"
    stage: str = "compute"
    uniform_bindings: tuple[int, ...] = ()  # constant banks read = uniform block bindings
    textures: tuple[int, ...] = ()  # bound texture slots s (binding 4 + s)
    inputs: tuple[int, ...] = ()  # vertex attribute / varying locations read
    outputs: tuple[int, ...] = ()  # varying locations written (vertex), colour targets (fragment)
    writes_position: bool = False
    # bindless textures: the texture pool (set 1 binding 0, sampled images) and the sampler pool
    # (set 1 binding 1, samplers) are read; sizes in shader_svc/README.md "Bindless textures"
    texture_pools: bool = False
    # the dimension of each bound slot, in the order of ``textures`` ("2D", "1D", "ARRAY_1D",
    # "ARRAY_2D", "3D", "CUBE"); empty = every slot 2D (SM86 and older cached reflections)
    texture_dims: tuple[str, ...] = ()
    # surfaces (SULD/SUST/SUATOM/SURED): the surface pool, set 1 binding 2, 2D R32ui storage
    # images (shader_svc/lower/surface.py)
    surface_pool: bool = False

    def to_dict(self) -> dict:
        return {
            "const_ranges": [vars(c) for c in self.const_ranges],
            "global_pointers": [vars(g) for g in self.global_pointers],
            "shared_memory": self.shared_memory,
            "barriers": self.barriers,
            "stage": self.stage,
            "uniform_bindings": list(self.uniform_bindings),
            "textures": list(self.textures),
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "writes_position": self.writes_position,
            "texture_pools": self.texture_pools,
            "texture_dims": list(self.texture_dims),
            "surface_pool": self.surface_pool,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Reflection":
        return cls(
            tuple(ConstRange(**c) for c in d["const_ranges"]),
            tuple(GlobalPointer(**g) for g in d["global_pointers"]),
            d["shared_memory"],
            d["barriers"],
            d.get("stage", "compute"),
            tuple(d.get("uniform_bindings", ())),
            tuple(d.get("textures", ())),
            tuple(d.get("inputs", ())),
            tuple(d.get("outputs", ())),
            d.get("writes_position", False),
            d.get("texture_pools", False),
            tuple(d.get("texture_dims", ())),
            d.get("surface_pool", False),
        )
