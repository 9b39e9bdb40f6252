"""What a translated program uses, for the GPU process to bind: the record both ISAs' reflection
passes (``sm86/reflect.py``, ``sm53/reflect.py``) fill and the service sends
(``Translation.reflection``, stored as JSON beside each cached translation).  The meaning of
the graphics fields: shader_svc/README.md "Graphics-stage interface"."""

from __future__ import annotations

from dataclasses import dataclass, field

from shader_svc.sph import GENERIC, POSITION


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


# --- what both ISAs' reflection passes share (``sm53/reflect.py``, ``sm86/reflect.py``) --------
def merge_ranges(reads: set[tuple[int, int, int]]) -> tuple[ConstRange, ...]:
    """The (bank, byte offset, size) words a program reads as ranges, touching ones merged."""
    out: list[ConstRange] = []
    for bank, off, size in sorted(reads):
        if out and out[-1].bank == bank and off <= out[-1].offset + out[-1].size:
            last = out[-1]
            out[-1] = ConstRange(bank, last.offset, max(last.offset + last.size, off + size) - last.offset)
        else:
            out.append(ConstRange(bank, off, size))
    return tuple(out)


@dataclass
class Interface:
    """A graphics program's interface, gathered instruction by instruction (the lowering's
    conventions: shader_svc/README.md "Graphics-stage interface"): the generic attribute
    locations read and written, whether Position is written, the bound texture slots and their
    dimensions, whether a bindless pool is used."""

    inputs: set[int] = field(default_factory=set)
    outputs: set[int] = field(default_factory=set)
    textures: set[int] = field(default_factory=set)
    dims: dict[int, str] = field(default_factory=dict)  # slot -> dimension (the first named)
    position: bool = False
    pools: bool = False

    def attributes(self, store: bool, first: int, words: int) -> None:
        """ALD/IPA (``store`` False) or AST of ``words`` attribute words from byte ``first``."""
        for a in range(first, first + 4 * words, 4):
            if GENERIC <= a < GENERIC + 0x200:
                (self.outputs if store else self.inputs).add((a - GENERIC) // 16)
            elif store and POSITION <= a < POSITION + 16:
                self.position = True

    def texture(self, slot: int, dim: str | None) -> None:
        """A bound texture access to ``slot``; ``dim`` its dimension where the instruction
        names one (TXQ does not; a slot never named is 2D)."""
        self.textures.add(slot)
        if dim is not None:
            self.dims.setdefault(slot, dim)

    def fields(self, header, ranges: tuple[ConstRange, ...]) -> dict:
        """The ``Reflection`` fields of the program with shader program header ``header``
        (``sph.Header``; a fragment program's outputs are its header's colour targets)."""
        outputs = {t for t, m in enumerate(header.targets) if m} if header.stage == "fragment" else self.outputs
        return {
            "stage": header.stage,
            "uniform_bindings": tuple(sorted({r.bank for r in ranges})),
            "textures": tuple(sorted(self.textures)),
            "inputs": tuple(sorted(self.inputs)),
            "outputs": tuple(sorted(outputs)),
            "writes_position": self.position,
            "texture_pools": self.pools,
            "texture_dims": tuple(self.dims.get(t, "2D") for t in sorted(self.textures)),
        }
