"""Vertex and fragment programs, the architecture-neutral part: the graphics stages' interface
on top of the compute lowering's register model and control flow.

Interface (the GPU process's fixed layout: set 0, bindings 0-3 uniform blocks, 4-7 combined
image samplers; see shader_svc/README.md "Graphics-stage interface"):

- constant bank c[b] (b = 0..3) -> uniform block at binding b: ``struct { uvec4 d[4096]; }``
  (64 KiB, std140-compatible, the bank's bytes as they are): here;
- attributes and varyings, Position / FragCoord / the vertex and instance index:
  ``gfx_attributes.GfxAttributes``;
- bound texture slot s -> combined image sampler at binding 4 + s, and the texture rows of the
  IR: ``gfx_textures.GfxTextures``;
- bindless handles pick entries of the texture and sampler pools (set 1, bindings 0 and 1):
  ``gfx_bindless.GfxBindless``;
- the colour targets, sample mask and depth at EXIT, and the entry point:
  ``gfx_outputs.GfxOutputs``;
- the pixel's own values (PIXLD): ``gfx_pixel.GfxPixel``;
- attribute words addressed by a register (AL2P, ALD.PHYS / AST.PHYS): ``gfx_indexed.GfxIndexed``;
- geometry programs (input vertices through ISBERD + ALD, OUT emit/cut, the execution modes):
  ``gfx_geometry.GfxGeometry``.

``GraphicsLowering`` is their sum with the module setup, the interface variables and the uniform
blocks.  Float math in these stages is what the driver does (FFMA is GLSL's Fma): the GPU
process's device enables neither Float64 nor Int64, which compute's exact FFMA needs.  Each ISA's
graphics lowering (``sm86/to_spirv_gfx.py``, ``sm53/to_spirv_gfx.py``) reads its attribute,
texture and kill instructions and calls these.  The constants below are re-exported from the
topic modules (their users import them from here).
"""

from __future__ import annotations

from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.gfx_attributes import INSTANCE_ID, VERTEX_ID, GfxAttributes
from shader_svc.lower.gfx_bindless import (
    FEATURE_DESCRIPTOR_INDEXING,
    GLSL_EXP2,
    HANDLE_TEXTURE_BITS,
    POOL_SET,
    SAMPLER_POOL,
    TEXTURE_POOL,
    GfxBindless,
)
from shader_svc.lower.gfx_geometry import GfxGeometry
from shader_svc.lower.gfx_indexed import GfxIndexed
from shader_svc.lower.gfx_outputs import GfxOutputs
from shader_svc.lower.gfx_pixel import GfxPixel
from shader_svc.lower.gfx_textures import (
    GLSL_NCLAMP,
    GLSL_ROUND_EVEN,
    LOD_MODES,
    TEX_ARGS,
    TEX_BINDING0,
    TEX_SLOTS,
    TLD4_ARGS,
    TLD_ARGS,
    TXQ_KNOWN,
    GfxTextures,
)
from shader_svc.sph import Header

__all__ = [
    "BANKS",
    "FEATURE_DESCRIPTOR_INDEXING",
    "GLSL_EXP2",
    "GLSL_NCLAMP",
    "GLSL_ROUND_EVEN",
    "HANDLE_TEXTURE_BITS",
    "INSTANCE_ID",
    "LOD_MODES",
    "POOL_SET",
    "SAMPLER_POOL",
    "TEX_ARGS",
    "TEX_BINDING0",
    "TEX_SLOTS",
    "TEXTURE_POOL",
    "TLD4_ARGS",
    "TLD_ARGS",
    "TXQ_KNOWN",
    "UBO_WORDS",
    "VERTEX_ID",
    "GraphicsLowering",
]

UBO_WORDS = 4096  # uvec4 elements: 64 KiB, Vulkan's guaranteed minimum range

BANKS = range(0, 4)


class GraphicsLowering(GfxAttributes, GfxTextures, GfxBindless, GfxOutputs, GfxPixel, GfxIndexed, GfxGeometry):
    """The graphics stages' module setup, interface variables and uniform blocks, with the
    attribute, texture, bindless, output, pixel and indexed-attribute mixins (module docstring); mixed in before an ISA's
    lowering."""

    # no address-space proofs (ir/spaces.py): constant bank 0 of a graphics stage holds no
    # compute windows, stack top or parameters at the compute offsets
    GENERIC_LAYOUT = None

    def __init__(self, insts: list[Inst], header: Header, features: int = 0) -> None:
        self.header = header
        self.features = features
        super().__init__(insts, None)

    # --- module setup ------------------------------------------------------------------------
    def _setup(self) -> None:
        m, E = self.m, self.m.E
        m.emit("cap", "OpCapability", E("Capability", "Shader"))
        m.emit("cap", "OpCapability", E("Capability", "ImageQuery"))
        m.emit("memmodel", "OpMemoryModel", E("AddressingModel", "Logical"), E("MemoryModel", "GLSL450"))
        self.v4f = m.type("OpTypeVector", self.f32, 4)
        self.v2f = m.type("OpTypeVector", self.f32, 2)
        self.i32 = m.type("OpTypeInt", 32, 1)
        self.v2i = m.type("OpTypeVector", self.i32, 2)
        self.ubos: dict[int, int] = {}
        self.images: dict[int, int] = {}
        self.slot_dims: dict[int, tuple[str, int]] = {}  # slot -> (SPIR-V Dim, arrayed)
        self.inputs: dict[int, int] = {}  # location -> variable
        self.outputs: dict[int, int] = {}
        self.interp: dict[int, set[str]] = {}  # fragment input location -> decorations wanted
        self.builtin_vars: dict[str, int] = {}
        self.colour_vars: dict[int, int] = {}
        self.uses_position_out = False
        self.vertex_arrays: dict[int | str, int] = {}  # geometry: location / 'position' -> input array

    def _var(self, sc: str, ty: int, deco: list[tuple]) -> int:
        m, E = self.m, self.m.E
        v = m.id()
        scv = E("StorageClass", sc)
        m.emit("types", "OpVariable", m.type("OpTypePointer", scv, ty), v, scv)
        for d in deco:
            m.emit("annot", "OpDecorate", v, *d)
        self.interface.append(v)
        return v

    def builtin(self, name: str, sc: str, ty: int) -> int:
        if name not in self.builtin_vars:
            E = self.m.E
            deco = [(E("Decoration", "BuiltIn"), E("BuiltIn", name))]
            if sc == "Input" and self.header.stage == "fragment" and ty != self.v4f:
                deco.append((E("Decoration", "Flat"),))
            self.builtin_vars[name] = self._var(sc, ty, deco)
        return self.builtin_vars[name]

    def location(self, table: dict[int, int], sc: str, loc: int) -> int:
        if loc not in table:
            E = self.m.E
            table[loc] = self._var(sc, self.v4f, [(E("Decoration", "Location"), loc)])
        return table[loc]

    def ubo(self, bank: int, inst: Inst) -> int:
        if bank not in BANKS:
            raise TranslateError(
                f"{inst.text()}: constant bank c[{bank:#x}] has no binding (banks 0..3 are uniform blocks at bindings 0..3)",
                offset=inst.addr,
            )
        if bank not in self.ubos:
            m, E = self.m, self.m.E
            v4u = m.type("OpTypeVector", self.u32, 4)
            arr = m.id()
            m.emit("types", "OpTypeArray", arr, v4u, self.c(UBO_WORDS))
            m.emit("annot", "OpDecorate", arr, E("Decoration", "ArrayStride"), 16)
            st = m.id()
            m.emit("types", "OpTypeStruct", st, arr)
            m.emit("annot", "OpDecorate", st, E("Decoration", "Block"))
            m.emit("annot", "OpMemberDecorate", st, 0, E("Decoration", "Offset"), 0)
            self.ubos[bank] = self._var(
                "Uniform", st, [(E("Decoration", "DescriptorSet"), 0), (E("Decoration", "Binding"), bank)]
            )
        return self.ubos[bank]

    def _cbank_check(self, off: int, bank: int, inst: Inst) -> int:
        """The uniform block of c[bank][off], checked and declared on first use."""
        if off % 4 or not 0 <= off < 16 * UBO_WORDS:
            raise TranslateError(f"{inst.text()}: constant offset {off:#x} outside a 64 KiB bank", offset=inst.addr)
        return self.ubo(bank, inst)

    def cbank_word(self, off: int, bank: int, inst: Inst) -> int:
        ubo = self._cbank_check(off, bank, inst)
        E = self.m.E
        ptr = self.m.type("OpTypePointer", E("StorageClass", "Uniform"), self.u32)
        p = self.op("OpAccessChain", ptr, ubo, self.c(0), self.c(off // 16), self.c(off // 4 % 4))
        return self.op("OpLoad", self.u32, p)
