"""Textures in compute kernels (issue 31; shader-tex): SM86 TEX / TXD / TXQ on CUDA texture
objects, bindless (.B: the handle in a register) and bound (the handle in a constant-bank word),
into the bindless IR rows of the graphics stages (``BindlessSample``, ``BindlessQueryDims``) and
``BindlessSampleGrad`` (``ir/ops.py``'s shader-tex block), on the same texture and sampler pools.

Meaning (the convention of this translation; shader_svc/README.md "Textures in compute"):

- A texture object's low word is a handle as the graphics stages' bindless handles are
  (``lower/graphics.py``): the texture pool entry in bits 0..19, the sampler pool entry in bits
  20..31; the pools are set 1, bindings 0 (``TEXTURE_POOL`` sampled 2D float images) and 1
  (``SAMPLER_POOL`` samplers), beside the surface pools (bindings 2..6, ``lower/surface.py``).
  A handle outside the pools reads 0.  Coordinates are normalised (the sampler's
  ``unnormalizedCoordinates`` false: CUDA's ``cudaTextureDesc.normalizedCoords = 1``); the
  filtering and addressing are the sampler's.
- Register packing, read off nvcc 13 sm_86 code (``tests/shader_svc/test_tex_grad.py``):
  ``TEX.B`` the point in Ra, Ra+1, the handle in Rb, the level (.LL) in Rb+1; ``TXD.B`` the
  handle in Ra, the point in Ra+1, Ra+2, the gradients in Rb..Rb+3 as dP/dx.x, dP/dy.x,
  dP/dx.y, dP/dy.y; ``TXQ.B`` the handle in Ra, the level in Ra+1.  Bound forms (a texture
  object passed as a kernel parameter): the handle is the word at ``slot * 4`` of constant bank
  ``bank`` (nvcc's ``TXD R8, R6, R6, R8, 0x0, 0x58, 2D`` for a parameter at c[0x0][0x160]),
  the point in Ra, Ra+1 (TXD's gradients in Rb..Rb+3, TEX's level in Rb, TXQ's level in Ra).
- Results: the enabled components in order, two into the pair d, two into the pair d2.

Translated: 2D; TEX .LZ/.LL (and implicit, which has no derivatives in a kernel: level 0),
also on 3D and 2D array textures (gfx-layers; SM86, TEX only): those are entries of their own
pools, set 1 binding 7 (``TEXTURE_POOL_2D_ARRAY``: sampled 2D array images) and 8
(``TEXTURE_POOL_3D``: sampled 3D images), the same entry numbers as the 2D pool's (the GPU
process puts a texture in the pool of its dimension and a dummy in the others), the sampler pool
shared.  Packing read off ptxas 13 sm_86 code (tex.3d / tex.a2d / tex.level.3d): ``TEX.B`` the
coordinates in Ra.. (3D: x, y, z; 2D array: the layer (u32), x, y), the handle in Rb, the level
in Rb+1; bound: 3D Ra = (x, y), Rb = (z, level); 2D array Ra = (layer, x), Rb = (y, level).
.SCR (ptxas writes it for tex.level; the result is tex.level's); TXD; TXQ TEX_HEADER_DIMENSION
(width, height, depth or layers else 1, the level count).  Refused by name (offset, word, form):
other dimensions, .LB, .DC, .AOFFI, .LC, a fault predicate, other TXQ queries.  The checks both
ISAs share are one helper on the ISA's constants (``TexIsa``, ``_tex_check``).

tex-kernels, both ISAs, on the 3D / 2D array pools (packing read off ptxas 13 sm_86 and ptxas
12.9 sm_53 code, nvdisasm 13.5 / 11.8):
- SM53 TEX: the coordinates in Ra.. (3D x, y, z; 2D array the layer (I2I.U16.SAT), x, y), .B the
  handle in Rb, the level in Rb+1; bound the level in Rb.  TEXS targets 10/11 (3D: x, y in Ra, z
  in Rb) and 7/8 (2D array: layer, x in Ra, y in Rb), implicit / .LZ.
- TLD.B.LZ (integer tex.3d / tex.a2d): SM86 ``TLD.SCR.B.LZ`` Ra = the first two coordinates, Rb =
  the third, Rb+1 the handle; SM53 the three in Ra.., the handle in Rb (``BindlessFetchDim``).
  Bound (the object a kernel parameter): SM86 ``TLD.SCR.LZ`` Ra = the first two, Rb the third;
  SM53 TLDS targets 7 (3D: x, y in Ra, z in Rb) and 8 (2D array: the layer in Ra, x, y in Rb).
- TXD on a 2D array (tex2DLayeredGrad): Ra the handle, Ra+1, +2 the point, Ra+3 the layer (last,
  unlike TEX), Rb..Rb+3 the gradients (``BindlessSampleGradArray``).
- TXQ: no dimension in the instruction, so the entry is queried in all three pools and combined
  by unsigned max (``bindless_query_dims``); a 2D array's z is its layer count (shader-tex; the
  GPU process's 2D array dummy has one layer).

shader-tex: TLD with a level, on 2D, 3D and 2D array textures, bound and .B, both ISAs.  PTX
``tex.level`` with .s32 coordinates (an integer level) compiles to TLD(.SCR)(.B).LL.CL (ptxas 13
sm_86, 12.9 sm_53; .CL decoded: SM86 bit 77, SM53 bit 54), ``tex.2d`` .s32 to TLD(.SCR)(.B).LZ
(SM53 bound: TLDS.LZ 2D).  Packing (``_tld_ir``): SM86 .SCR splits the list (coordinates, handle,
level) as ``SCR_RA`` says (1D x | handle, 2D x, y | handle, level, 3D x, y | z, handle; bound
2D x | y, x, y | level); without .SCR (3D / 2D array .LL) Ra the coordinates, Rb the handle then
the level; SM53 Ra the coordinates, Rb the handle (.B) then the level.  A level outside the
texture's levels reads 0 (IR row ``BindlessFetchClamp``; read on an H100, shader-nv: .CL does
not clamp the level); TLD .LL without .CL is refused.  Refused by name: TXD .AOFFI on an array.

shader-ndv: 1D and 1D array textures are entries of the 2D and 2D array pools one texel high
(``ONE_DIM_POOL``; ptxas samples 1D textures with 2D instructions itself): TLD 1D fetches (x, 0),
TLD ARRAY_1D (x, 0, layer), TEX ARRAY_1D samples (x, 0.5, layer) (Ra = (layer, x), Rb the handle
then the level), TXD ARRAY_1D with gradients (dx, 0), (dy, 0) (Ra = handle, x, layer; Rb = dx,
dy), SM53 TLDS 1D (target 0) (x, 0).  tex3DGrad (no 3D TXD in either ISA: ptxas's quad loop of
TEX.NDV) is ``lower/quad_tex.py``'s; its samples are ``bindless_sample_grad3`` here.
"""

from __future__ import annotations

from dataclasses import dataclass

from nxrecomp.common import kernel_pools
from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import GLSL, LowerBase, TranslateError
from shader_svc.lower.graphics import POOL_SET, TEXTURE_POOL, TXQ_KNOWN, GraphicsLowering
from shader_svc.lower.indirect import const_reg
from shader_svc.lower.texel_words import set_texel_words

# gfx-layers: the sampled-image pools of the other dimensions a kernel's TEX reads (set 1), and the
# TEX dimension codes (sm86/table.py TEX_DIM) that reach them
# (gpu-pools: the numbers are nxrecomp/common/kernel_pools.py's TEXTURE_BINDINGS, one table with
# the GPU process)
TEXTURE_POOL_2D_ARRAY, TEXTURE_POOL_3D = kernel_pools.TEXTURE_BINDINGS["2d_array"], kernel_pools.TEXTURE_BINDINGS["3d"]
# shader-ndv: the cube pool (set 1 binding 9: sampled cube images; texCubemapGrad's quad loop)
TEXTURE_POOL_CUBE = kernel_pools.TEXTURE_BINDINGS["cube"]
TEXTURE_POOL_CUBE_ARRAY = kernel_pools.TEXTURE_BINDINGS["cube_array"]  # (texCubemapLayeredGrad)
DIM_BINDINGS = {k: b for k, b in kernel_pools.TEXTURE_BINDINGS.items() if k != "2d"}
POOL_DIMS = {2: "3d", 5: "2d_array"}


@dataclass(frozen=True)
class TexIsa:
    """What the compute texture checks and TLD's packing read per ISA (shader-tex: one helper,
    ``ComputeTextures._tex_check``, for both): the dimension codes with a pool of their own
    (``POOL_DIMS``), 2D's and the 2D array's codes (TXD on arrays), TLD's .LZ / .LL values,
    the predicate-result operand and its wording."""

    pool_dims: dict
    dim_2d: int
    dim_array: int
    tld_lz: int
    tld_ll: int
    pred: str
    pred_what: str
    # shader-ndv: the 1D and 1D array codes (-> "1d", "1d_array"): textures of the 2D and 2D array
    # pools one texel high (ONE_DIM_POOL)
    one_dims: dict = None
    # gpu-pools: TEX's cube and cube array codes (-> "cube", "cube_array": the pools at set 1
    # bindings 9, 10)
    cube_dims: dict = None


TEX86 = TexIsa(
    POOL_DIMS, 1, 5, 1, 3, "fault", "a texture fault predicate", {0: "1d", 4: "1d_array"}, {3: "cube", 7: "cube_array"}
)
TEX53 = TexIsa(
    {4: "3d", 3: "2d_array"},
    2,
    3,
    0,
    1,
    "pd",
    "a texture predicate result",
    {0: "1d", 1: "1d_array"},
    {6: "cube", 7: "cube_array"},
)
# TLD's coordinates per dimension (dim -> the coordinate count; shader-ndv: 1D x, 1D array the
# layer then x)
TLD_COORDS = {"2d": 2, "3d": 3, "2d_array": 3, "1d": 1, "1d_array": 2}
# shader-ndv: a 1D texture is an entry of the 2D pool one texel high, a 1D array one of the 2D
# array pool (ptxas itself samples a 1D texture with 2D instructions: tex1D / tex1DLod / tex1DGrad
# compile to TEX / TXD ... 2D with y = 0); the coordinates the 2D forms lack are y = 0 (fetches)
# and y = 0.5, the row's centre (samples: row 0 under every filter and addressing mode)
ONE_DIM_POOL = kernel_pools.TEXTURE_VIEW_POOL
Y_CENTRE = 0x3F000000  # 0.5f
# SM86 .SCR (bit 60) splits the source list (coordinates, the handle (.B), the level (.LL)) over
# Ra and Rb: Ra takes this many of its first values, Rb the rest (read off ptxas 13: 1D .LZ
# ``TLD.SCR.B.LZ RZ, R6, R0, R3, 1D`` x | handle; 1D .LL x, handle | level; 2D .LZ x, y | handle,
# bound x | y; 2D .LL x, y | handle, level; 3D .LZ x, y | z, handle); five or more values are not
# split so (ptxas writes TLD.B without .SCR: Ra the coordinates, Rb the handle then the level)
SCR_RA = {1: 1, 2: 1, 3: 2, 4: 2}

TEXTURE_RULES = {
    "TEX": "op_tex_compute",
    "TEX.B": "op_tex_compute",
    "TXD": "op_tex_compute",
    "TXD.B": "op_tex_compute",
    "TXQ": "op_tex_compute",
    "TXQ.B": "op_tex_compute",
    "TLD.B": "op_tex_compute",  # (tex-kernels) 2D (shader-tex), 3D and 2D array textures
    "TLD": "op_tex_compute",
}


class _ComputeStage:
    stage = "compute"


class ComputeTextures(LowerBase):
    """Mixin of SM86's compute lowering: the handlers of ``TEXTURE_RULES`` and the SPIR-V of the
    bindless rows (the graphics lowering's, on this module's pools)."""

    header = _ComputeStage()  # what the graphics stages' bindless lowering asks
    features = 0  # no descriptor indexing: the switch over the pools (valid on every device)

    # the graphics stages' pools and bindless lowering, unchanged
    _var = GraphicsLowering._var
    _pool_vars = GraphicsLowering.pool_vars
    bindless = GraphicsLowering.bindless
    bindless_indexed = GraphicsLowering.bindless_indexed
    _zero_of = GraphicsLowering._zero_of
    _zero_vec = GraphicsLowering._zero_vec
    bindless_ir = GraphicsLowering.bindless_ir
    _coord2f = GraphicsLowering._coord2f
    bindless_sample = GraphicsLowering.bindless_sample
    bindless_fetch = GraphicsLowering.bindless_fetch  # shader-tex: TLD .LZ on a 2D texture
    texel_word = GraphicsLowering.texel_word

    def _tex_types(self) -> None:
        """The vector types the bindless lowering names (the graphics stages declare them at
        setup; a kernel when its first texture instruction is lowered)."""
        if "v4f" not in self.__dict__:
            self.v4f = self.m.type("OpTypeVector", self.f32, 4)
            self.v2f = self.m.type("OpTypeVector", self.f32, 2)
            self.v2i = self.m.type("OpTypeVector", self.m.type("OpTypeInt", 32, 1), 2)  # BindlessFetch

    def pool_vars(self) -> tuple[int, int]:
        """The pools (``GraphicsLowering.pool_vars``), with the ImageQuery capability TXQ needs."""
        if not getattr(self, "_image_query_cap", False):
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "ImageQuery"))
            self._image_query_cap = True
        return self._pool_vars()

    def lowered(self, ir: str) -> bool:
        return ir in TEXTURE_RULES or super().lowered(ir)

    # --- the instructions -------------------------------------------------------------------
    def _tex_refuse(self, inst: Inst, what: str) -> None:
        raise TranslateError(f"{inst.text()} (word {inst.word:#x}): {what} not translated", offset=inst.addr)

    def _txd_ir(self, blk: Block, inst: Inst, handle, a: int, b: int, first: int, val, array: bool = False):
        """TXD of either ISA: the point at Ra + first, + 1, the gradients Rb..Rb+3, .AOFFI's
        offsets word at Ra + first + 2 (a constant: lower/indirect.const_reg); RZ reads 0.
        ``array`` (tex-kernels): a 2D array texture, the layer (a u32) at Ra + first + 2 (ptxas
        13 sm_86 ``TXD.B RZ, R4, R4, R8, ARRAY_2D``: R4 the handle, R5, R6 the point, R7 the layer
        clamped to 0xffff; ptxas 12.9 sm_53 ``TXD.B.P R4, R4, R12, 0x0, ARRAY_2D`` likewise)."""

        def reg(r: int, k: int) -> int | None:
            return None if r == 255 else r + k

        if array == "1d_array":  # (shader-ndv) Ra+first x, then the layer; Rb dP/dx, dP/dy (both ISAs)
            if inst.mods.get("AOFFI"):
                self._tex_refuse(inst, "TXD .AOFFI on a 1D array texture")
            zero = blk.const_u32(0)
            x, layer = val(reg(a, first)), val(reg(a, first + 1))
            dx, dy = val(reg(b, 0)), val(reg(b, 1))
            return blk.emit("BindlessSampleGradArray", handle, x, blk.const_u32(Y_CENTRE), layer, dx, dy, zero, zero)
        point = [val(reg(a, first)), val(reg(a, first + 1))]
        grads = [val(reg(b, k)) for k in range(4)]
        if array:
            if inst.mods.get("AOFFI"):
                self._tex_refuse(inst, "TXD .AOFFI on a 2D array texture")
            return blk.emit("BindlessSampleGradArray", handle, *point, val(reg(a, first + 2)), *grads)
        if inst.mods.get("AOFFI"):
            off = reg(a, first + 2)
            known = const_reg(self.insts, self.insts.index(inst), off) if off is not None else 0
            return blk.emit("BindlessSampleGradOffset", handle, *point, *grads, val(off), word=known, inst=inst)
        return blk.emit("BindlessSampleGrad", handle, *point, *grads)

    def _tex_check(self, inst: Inst, isa: TexIsa) -> str | None:
        """The refusals both ISAs' TEX / TLD / TXD / TXQ share (shader-tex: one helper on the
        ISA's constants); the pool the instruction reads ("3d", "2d_array", "2d" for TLD on a 2D
        texture, None for the other 2D forms and TXQ)."""
        ir, ops, mods = inst.row.ir, inst.ops, inst.mods
        kind = ir.split(".")[0]
        dim = isa.pool_dims.get(ops["dim"]["sym"]) if kind in ("TEX", "TLD") else None
        if kind == "TXD" and ops["dim"]["sym"] == isa.dim_array:  # (tex-kernels) TXD on a 2D array texture
            dim = "2d_array"
        one = isa.one_dims.get(ops["dim"]["sym"]) if kind != "TXQ" else None
        if one == "1d_array" or (one == "1d" and kind == "TLD"):  # (shader-ndv) ptxas's 1D forms
            dim = one
        if kind == "TEX" and ops["dim"]["sym"] in isa.cube_dims:  # (gpu-pools) the cube / cube array pools
            dim = isa.cube_dims[ops["dim"]["sym"]]
        if kind != "TXQ" and ops["dim"]["sym"] != isa.dim_2d and dim is None:
            self._tex_refuse(inst, "a texture other than 1D (TLD), 1D array, 2D, 3D, 2D array, cube (TEX) or cube array (TEX)")
        if kind == "TLD":
            dim = dim or "2d"
            if mods["lod"] not in (isa.tld_lz, isa.tld_ll) or mods.get("MS"):
                self._tex_refuse(inst, "TLD other than .LZ / .LL(.CL)")
        if mods.get("DC") or mods.get("LC") or mods.get("NDV"):
            self._tex_refuse(inst, ".DC/.LC/.NDV")
        if mods.get("AOFFI") and ir != "TXD.B":  # (shader-ctl: TXD.B's offsets word, Ra + 3)
            self._tex_refuse(inst, ".AOFFI other than TXD.B's")
        if ops.get(isa.pred, {"pred": 7})["pred"] != 7:
            self._tex_refuse(inst, isa.pred_what)
        return dim

    def _tld_ir(self, blk: Block, inst: Inst, isa: TexIsa, dim: str, handle, val):
        """TLD (.B) of either ISA in a kernel (shader-tex): the integer coordinates, the handle
        (.B) and the level (.LL) as ptxas packs them (``SCR_RA`` for SM86's .SCR, else Ra the
        coordinates and Rb the handle then the level), ``BindlessFetchDim`` (.LZ: level 0) or
        ``BindlessFetchClamp`` (.LL(.CL): the level clamped to the texture's levels).  ``handle``
        None: .B, the handle read from its register."""
        ops, mods = inst.ops, inst.mods
        a, b = ops["a"]["reg"], ops["b"]["reg"] if "b" in ops else 255
        ll = mods["lod"] == isa.tld_ll
        n = TLD_COORDS[dim]
        roles = [f"c{k}" for k in range(n)] + ["handle"] * (handle is None) + ["level"] * ll
        if mods.get("SCR"):
            if len(roles) not in SCR_RA:
                self._tex_refuse(inst, f"TLD .SCR with {len(roles)} source values")
            split = SCR_RA[len(roles)]
        else:
            split = n
        regs = {}
        for k, role in enumerate(roles):
            r, i = (a, k) if k < split else (b, k - split)
            regs[role] = None if r == 255 else r + i
        if handle is None:
            if regs["handle"] is None:
                self._tex_refuse(inst, "a bindless handle of RZ")
            handle = blk.get_reg(regs["handle"])
        coords = [val(regs[f"c{k}"]) for k in range(n)] + [blk.const_u32(0)] * (3 - n)
        dim = ONE_DIM_POOL.get(dim, dim)  # (shader-ndv) 1D: (x, 0) in the 2D pool; 1D array (layer, x, 0)
        if ll:
            if not mods.get("CL"):
                self._tex_refuse(inst, "TLD .LL without .CL (an unclamped level: not established)")
            return blk.emit("BindlessFetchClamp", handle, *coords, val(regs["level"]), dim=dim)
        if dim == "2d":
            return blk.emit("BindlessFetch", handle, coords[0], coords[1], blk.const_u32(0))
        return blk.emit("BindlessFetchDim", handle, *coords, blk.const_u32(0), dim=dim)

    def op_tex_compute(self, inst: Inst) -> None:
        """TEX / TXD / TXQ / TLD, bound or .B, of a kernel (module docstring)."""
        self._tex_types()
        ir, ops, mods = inst.row.ir, inst.ops, inst.mods
        bindless = ir.endswith(".B")
        kind = ir.split(".")[0]
        dim = self._tex_check(inst, TEX86)
        a, b = ops["a"]["reg"], ops["b"]["reg"] if "b" in ops else 255

        def reg(r: int, k: int) -> int | None:  # register r + k, None for RZ (reads 0)
            return None if r == 255 else r + k

        blk = Block()
        if kind == "TLD" and bindless:  # the handle where _tld_ir's packing puts it
            handle = None
        elif bindless:
            handle_reg = b if kind == "TEX" else a
            handle = blk.get_reg(handle_reg)
            first = 0 if kind == "TEX" else 1  # the point after the handle in Ra's tuple
        else:
            bank, slot = ops["bank"]["imm"], ops["slot"]["imm"]
            handle = blk.emit("CBankU32", bank=bank, offset=slot * 4, inst=inst)
            first = 0
        d, d2 = ops["d"]["reg"], ops["d2"]["reg"]
        dests = [r + i if r != 255 else 255 for r in (d, d2) for i in (0, 1)]
        mask = ops["mask"]["sym"]

        def val(r: int | None):
            return blk.const_u32(0) if r is None else blk.get_reg(r)

        if kind == "TEX":
            lod = mods["lod"]
            if lod == 2:
                self._tex_refuse(inst, "a LOD bias in a kernel (no implicit derivatives)")
            level = None
            if lod == 3:
                level = reg(b, 1) if bindless else reg(b, 0)
            if dim == "1d_array":  # (shader-ndv) Ra = (layer, x); the 2D array pool at y = 0.5
                y = blk.const_u32(Y_CENTRE)
                vec = blk.emit(
                    "BindlessSampleDim", handle, val(reg(a, 0)), val(reg(a, 1)), y, val(level), lod=lod, dim="2d_array"
                )
            elif dim in ("cube", "cube_array"):  # (gpu-pools) CUDA texCubemap / texCubemapLayered
                vec = self._tex_cube86(blk, inst, dim, handle, bindless, lod, val)
            elif dim is not None:  # (gfx-layers) three coordinates: all in Ra.. (.B) or two in Ra, one in Rb
                if bindless:
                    coords = [reg(a, 0), reg(a, 1), reg(a, 2)]
                else:
                    coords = [reg(a, 0), reg(a, 1), reg(b, 0)]
                    level = reg(b, 1) if lod == 3 else None
                vec = blk.emit("BindlessSampleDim", handle, *map(val, coords), val(level), lod=lod, dim=dim)
            else:
                args = (val(reg(a, 0)), val(reg(a, 1)), val(level))
                vec = blk.emit("BindlessSample", handle, *args, lod=lod)
            fl = True
        elif kind == "TLD":
            vec = self._tld_ir(blk, inst, TEX86, dim, handle, val)
            fl = True
        elif kind == "TXD":
            vec = self._txd_ir(blk, inst, handle, a, b, first, val, dim if dim in ("2d_array", "1d_array") else False)
            fl = True
        else:
            if ops["query"]["sym"] != 0:
                self._tex_refuse(inst, "a TXQ query other than TEX_HEADER_DIMENSION")
            if mask & ~TXQ_KNOWN["2D", 0]:
                self._tex_refuse(inst, f"TXQ components {mask & ~TXQ_KNOWN['2D', 0]:#x}")
            vec = blk.emit("BindlessQueryDims", handle, val(reg(a, first)))
            fl = False
        set_texel_words(blk, vec, mask, dests, fl)
        ir_spirv.emit(self, blk)

    def _tex_cube86(self, blk: Block, inst: Inst, dim: str, handle, bindless: bool, lod: int, val):
        """SM86 TEX on a cube / cube array texture in a kernel (gpu-pools), registers as ptxas 13
        packs CUDA's texCubemap / texCubemapLayered (read off its sm_86 code; ptxas divides the
        direction by its largest magnitude first and writes .LL with level -32.0, i.e. level 0):
        cube .B ``TEX.B.LL RZ, R6, R12, R6, CUBE``: Ra = (x, y, z), Rb = (handle, level); cube
        bound ``TEX.SCR.LL ... CUBE``: Ra = (x, y), Rb = (z, level); cube array .B: Ra = (layer,
        x, y, z), Rb = (handle, level); cube array bound ``TEX.LL`` (no .SCR): Ra = (layer, x, y,
        z), Rb = the level."""
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]

        def reg(r: int, k: int) -> int | None:
            return None if r == 255 else r + k

        n_level = 1 if lod == 3 else 0
        if dim == "cube":
            if bindless:
                xyz, level = [reg(a, k) for k in range(3)], reg(b, 1)
            elif inst.mods.get("SCR"):
                xyz, level = [reg(a, 0), reg(a, 1), reg(b, 0)], reg(b, 1)
            else:
                xyz, level = [reg(a, k) for k in range(3)], reg(b, 0)
            layer = None
        else:
            if not bindless and inst.mods.get("SCR"):
                self._tex_refuse(inst, "a bound cube array TEX with .SCR (not seen from ptxas)")
            layer, xyz = reg(a, 0), [reg(a, k) for k in (1, 2, 3)]
            level = reg(b, 1) if bindless else reg(b, 0)
        lv = val(level) if n_level else blk.const_u32(0)
        zero = blk.const_u32(0)
        return blk.emit(
            "BindlessSampleCube",
            handle,
            *map(val, xyz),
            zero if layer is None else val(layer),
            lv,
            lod=lod,
            array=int(dim == "cube_array"),
        )

    # --- SPIR-V -----------------------------------------------------------------------------
    def bindless_sample_cube(self, array: int, lod: int, handle: int, x: int, y: int, z: int, layer: int, lv: int) -> int:
        """``BindlessSampleCube`` (gpu-pools): OpImageSampleExplicitLod on the cube pool with the
        direction (x, y, z), or on the cube array pool with (x, y, z, layer), the layer converted
        to f32 (Vulkan rounds and clamps it to the cubes; capability SampledCubeArray).  The face
        and its (s, t) are the sampler's: Vulkan's "Cube Map Face Selection", which CUDA's
        texCubemap follows."""
        m, E = self.m, self.m.E
        f = [self.op("OpBitcast", self.f32, v) for v in (x, y, z)]
        if array:
            if not getattr(self, "_cube_array_cap", False):
                m.emit("cap", "OpCapability", E("Capability", "SampledCubeArray"))
                self._cube_array_cap = True
            coord = self.op("OpCompositeConstruct", self.v4f, *f, self.op("OpConvertUToF", self.f32, layer))
        else:
            coord = self.op("OpCompositeConstruct", m.type("OpTypeVector", self.f32, 3), *f)
        level = self.op("OpBitcast", self.f32, lv) if lod == 3 else m.const(self.f32, 0)
        return self._on_dim_pool(
            "cube_array" if array else "cube",
            handle,
            True,
            lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Lod"), level),
        )

    # --- SPIR-V -----------------------------------------------------------------------------
    def bindless_sample_dim(self, dim: str, lod: int, handle: int, a: int, b: int, c: int, lv: int) -> int:
        """``BindlessSampleDim``: OpImageSampleExplicitLod on the pool of ``dim`` (a 2D array's
        layer converted to f32: Vulkan rounds and clamps it to the layers)."""
        m, E = self.m, self.m.E
        v3f = m.type("OpTypeVector", self.f32, 3)
        f = [self.op("OpBitcast", self.f32, x) for x in (a, b, c)]
        if dim == "2d_array":  # (layer, x, y) -> (x, y, layer)
            f = [f[1], f[2], self.op("OpConvertUToF", self.f32, a)]
        coord = self.op("OpCompositeConstruct", v3f, *f)
        level = self.op("OpBitcast", self.f32, lv) if lod == 3 else m.const(self.f32, 0)
        return self._on_dim_pool(
            dim,
            handle,
            True,
            lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Lod"), level),
        )

    def bindless_fetch_dim(self, dim: str, handle: int, a: int, b: int, c: int, lv: int) -> int:
        """``BindlessFetchDim`` (tex-kernels): OpImageFetch of the integer texel on the pool of
        ``dim`` (a 2D array's (layer, x, y) reordered to (x, y, layer)); outside the image Vulkan
        leaves the result undefined (robustImageAccess gives 0), as CUDA's border is not modelled."""
        m = self.m
        v3u, v3i = m.type("OpTypeVector", self.u32, 3), m.type("OpTypeVector", m.type("OpTypeInt", 32, 1), 3)
        xyz = (b, c, a) if dim == "2d_array" else (a, b, c)
        coord = self.op("OpBitcast", v3i, self.op("OpCompositeConstruct", v3u, *xyz))
        lod = m.E("ImageOperands", "Lod")
        return self._on_dim_pool(dim, handle, False, lambda img, si: self.op("OpImageFetch", self.v4f, img, coord, lod, lv))

    def bindless_fetch_clamp(self, dim: str, handle: int, a: int, b: int, c: int, lv: int) -> int:
        """``BindlessFetchClamp`` (shader-tex): TLD .LL.CL, OpImageFetch at a level of each pool
        entry on the pool of ``dim`` ("2d": the 2D pool, x, y).  shader-nv, read on an H100
        (sm_90 TLD.LL.CL, bench/nvidia_corpus.py's TLD probe, levels -8..40 on a 5-level
        texture, under descriptor level clamps 0..4 and 0..16): a level inside [0, levels - 1]
        reads that level, one outside reads 0 (no clamping); the fetch itself is made at the
        level clamped into range (Vulkan leaves an out-of-range level undefined) and replaced
        by zeros where the level is outside."""
        m = self.m
        i32 = m.type("OpTypeInt", 32, 1)
        n = 2 if dim == "2d" else 3
        vu, vi = m.type("OpTypeVector", self.u32, n), m.type("OpTypeVector", i32, n)
        xyz = (a, b) if dim == "2d" else (b, c, a) if dim == "2d_array" else (a, b, c)
        coord = self.op("OpBitcast", vi, self.op("OpCompositeConstruct", vu, *xyz))
        level = self.op("OpBitcast", i32, lv)

        def leaf(img: int, si) -> int:
            top = self.op("OpISub", i32, self.op("OpBitcast", i32, self.op("OpImageQueryLevels", self.u32, img)), m.const(i32, 1))
            lvc = self.op(
                "OpExtInst",
                i32,
                self.glsl,
                GLSL["SMax"],
                self.op("OpExtInst", i32, self.glsl, GLSL["SMin"], level, top),
                m.const(i32, 0),
            )
            got = self.op("OpImageFetch", self.v4f, img, coord, m.E("ImageOperands", "Lod"), lvc)
            inside = self.op("OpIEqual", self.bool, lvc, level)
            return self.op("OpSelect", self.v4f, inside, got, self.op("OpCompositeConstruct", self.v4f, *[zero] * 4))

        zero = m.const(self.f32, 0)
        if dim == "2d":
            self.pool_vars()  # the ImageQuery capability
            return self.bindless(handle, False, self.v4f, leaf)
        return self._on_dim_pool(dim, handle, False, leaf)

    def bindless_sample_grad_array(self, handle: int, x: int, y: int, layer: int, dxx: int, dyx: int, dxy: int, dyy: int) -> int:
        """``BindlessSampleGradArray`` (tex-kernels): OpImageSampleExplicitLod with the Grad
        operand on the 2D array pool, the layer converted to f32 (Vulkan rounds and clamps it)."""
        v3f = self.m.type("OpTypeVector", self.f32, 3)
        f = [self.op("OpBitcast", self.f32, v) for v in (x, y)]
        coord = self.op("OpCompositeConstruct", v3f, *f, self.op("OpConvertUToF", self.f32, layer))
        dx, dy = self._coord2f(dxx, dxy), self._coord2f(dyx, dyy)
        grad = self.m.E("ImageOperands", "Grad")
        return self._on_dim_pool(
            "2d_array",
            handle,
            True,
            lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, grad, dx, dy),
        )

    def bindless_sample_grad3(self, dim: str, handle: int, x: int, y: int, z: int, layer: int, *grads: int) -> int:
        """``BindlessSampleGrad3`` (shader-ndv): OpImageSampleExplicitLod with the Grad operand
        (dP/dx, dP/dy as 3-vectors) on the pool of ``dim`` ("3d"; "cube": the direction)."""
        v3f = self.m.type("OpTypeVector", self.f32, 3)

        def vec(*w: int) -> int:
            return self.op("OpCompositeConstruct", v3f, *[self.op("OpBitcast", self.f32, v) for v in w])

        coord, dx, dy = vec(x, y, z), vec(*grads[:3]), vec(*grads[3:])
        if dim == "cube_array":  # (x, y, z, layer): the layer converted to f32 (Vulkan rounds it)
            if not getattr(self, "_cube_array_cap", False):
                self.m.emit("cap", "OpCapability", self.m.E("Capability", "SampledCubeArray"))
                self._cube_array_cap = True
            v4 = [self.op("OpBitcast", self.f32, v) for v in (x, y, z)] + [self.op("OpConvertUToF", self.f32, layer)]
            coord = self.op("OpCompositeConstruct", self.v4f, *v4)
        grad = self.m.E("ImageOperands", "Grad")
        return self._on_dim_pool(
            dim, handle, True, lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, grad, dx, dy)
        )

    def bindless_query_dims(self, handle: int, level: int) -> int:
        """``BindlessQueryDims`` in a kernel (tex-kernels): TXQ TEX_HEADER_DIMENSION carries no
        dimension, so the handle's entry is queried in the three pools (2D, 3D, 2D array) and
        the components combined by unsigned max: the GPU process puts the texture in the pool of
        its kind and a one-texel, one-level dummy in the others, so the max is the texture's
        (width, height, a 3D texture's depth or a 2D array's layer count else 1, level count;
        shader-tex: TXQ's z on an array is its layer count, as Ryujinx's Maxwell TXQ reads it,
        Vulkan's OpImageQuerySizeLod on an arrayed image).  The level is clamped to each entry's
        levels - 1 (querying past an image's levels is undefined in Vulkan); a handle outside
        the pools reads 0."""
        m, u32 = self.m, self.u32
        v4u = m.type("OpTypeVector", u32, 4)
        glsl = lambda name, ty, *a: self.op("OpExtInst", ty, self.glsl, GLSL[name], *a)  # noqa: E731

        def query(n: int, depth: bool):
            def leaf(img: int, si) -> int:
                levels = self.op("OpImageQueryLevels", u32, img)
                lv = glsl("UMin", u32, level, self.op("OpISub", u32, levels, self.c(1)))
                size = self.op("OpImageQuerySizeLod", m.type("OpTypeVector", u32, n), img, lv)
                parts = [self.op("OpCompositeExtract", u32, size, i) for i in range(2)]
                z = self.op("OpCompositeExtract", u32, size, 2) if depth else self.c(1)
                return self.op("OpCompositeConstruct", v4u, *parts, z, levels)

            return leaf

        self.pool_vars()
        q2d = self.bindless(handle, False, v4u, query(2, False))
        q3d = self._on_dim_pool("3d", handle, False, query(3, True), v4u)
        qar = self._on_dim_pool("2d_array", handle, False, query(3, True), v4u)
        return glsl("UMax", v4u, glsl("UMax", v4u, q2d, q3d), qar)

    def _on_dim_pool(self, dim: str, handle: int, with_sampler: bool, leaf, result_ty: int | None = None) -> int:
        """The 2D pool's switch over the entries (``GraphicsLowering.bindless``) on the pool of
        ``dim`` (set 1 binding 7 or 8, declared at first use)."""
        m, E = self.m, self.m.E
        self.pool_vars()  # the 2D pool, the sampler pool and the ImageQuery capability first
        pools = getattr(self, "_dim_pools", None)
        if pools is None:
            pools = self._dim_pools = {}
        if dim not in pools:
            img = m.type(
                "OpTypeImage",
                self.f32,
                E("Dim", {"3d": "3D", "cube": "Cube", "cube_array": "Cube"}.get(dim, "2D")),
                0,
                int(dim in ("2d_array", "cube_array")),
                0,
                1,
                E("ImageFormat", "Unknown"),
            )
            arr = m.type("OpTypeArray", img, self.c(TEXTURE_POOL))
            binding = DIM_BINDINGS[dim]
            var = self._var(
                "UniformConstant", arr, [(E("Decoration", "DescriptorSet"), POOL_SET), (E("Decoration", "Binding"), binding)]
            )
            pools[dim] = (var, img, m.type("OpTypeSampledImage", img))
        var, img_t, si_t = pools[dim]
        # the 2D pool's switch (GraphicsLowering.bindless) on this pool: its fields swapped in for
        # the call (it reads the texture pool and its types from them)
        saved = (self._pools, self.pool_img_t, self.pool_sampled_t)
        self._pools, self.pool_img_t, self.pool_sampled_t = (var, saved[0][1]), img_t, si_t
        try:
            return self.bindless(handle, with_sampler, result_ty or self.v4f, leaf)
        finally:
            self._pools, self.pool_img_t, self.pool_sampled_t = saved

    def bindless_sample_grad(
        self,
        handle: int,
        x: int,
        y: int,
        dxx: int,
        dyx: int,
        dxy: int,
        dyy: int,
        off: int | None = None,
        word: int | None = None,
        inst=None,
    ) -> int:
        """``BindlessSampleGrad``: OpImageSampleExplicitLod with the Grad operand.
        ``BindlessSampleGradOffset`` (``off`` given; shader-ctl): TXD .AOFFI's texel offsets,
        signed 4-bit x at bits 16..19 and y at 20..23 of the word (ptxas's packing, read off
        ``tex.grad`` with an offset vector: ``{-3, 2}`` gives ``MOV R19, 0xf2d0000``), as the
        ConstOffset operand: Vulkan takes a non-constant Offset on gathers only, so the word must
        be a constant (GLSL's textureGradOffset requires constant offsets): ``word``, the value a
        move of an immediate gave the register on the straight line to the TXD
        (``indirect.const_reg``), or a value the IR folded; a run-time one is refused, naming
        the instruction."""
        coord = self._coord2f(x, y)
        dx, dy = self._coord2f(dxx, dxy), self._coord2f(dyx, dyy)
        E, m = self.m.E, self.m
        mask, extra = E("ImageOperands", "Grad"), []
        if off is not None:
            if word is None and off in m.const_values:
                word = m.const_values[off][1]
            if word is None:
                raise TranslateError(
                    f"{inst.text()} (word {inst.word:#x}): .AOFFI offsets computed at run time not translated "
                    f"(Vulkan allows a non-constant Offset on gathers only)",
                    offset=inst.addr,
                )
            i32 = m.type("OpTypeInt", 32, 1)
            v2i = m.type("OpTypeVector", i32, 2)
            xy = [m.const(i32, (((word >> s) & 15) ^ 8) - 8 & 0xFFFFFFFF) for s in (16, 20)]
            co = m.id()
            m.emit("types", "OpConstantComposite", v2i, co, *xy)
            mask |= E("ImageOperands", "ConstOffset")
            extra = [co]
        return self.bindless(
            handle,
            True,
            self.v4f,
            lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, mask, dx, dy, *extra),
        )


TEXTURE_RULES53 = {k: "op_tex_compute53" for k in ("TEX", "TEX.B", "TXD", "TXD.B", "TXQ", "TXQ.B", "TLD.B", "TLD")}
TEXTURE_RULES53["TEXS"] = "op_texs_compute53"
TEXTURE_RULES53["TLDS"] = "op_tlds_compute53"
# tex-kernels: TLDS's 3D and 2D array targets in a kernel (sm53/gfx_tex.py TLDS_FORMS' rows 7, 8:
# .LZ): target -> (dimension, Ra's roles, Rb's roles); ptxas 12.9 writes ``TLDS.LZ.P RZ, R6, R6,
# R0, 0x52, 3D, RA`` for an integer tex.3d on a kernel parameter
TLDS_DIMS = {7: ("3d", ("x", "y"), ("z",)), 8: ("2d_array", ("layer",), ("x", "y"))}
# shader-tex: TLDS 2D .LZ (target 2: x in Ra, y in Rb), ptxas 12.9's ``TLDS.LZ.P RZ, R4, R5, R0,
# 0x52, 2D, RA`` for an integer tex.2d on a kernel parameter
TLDS_DIMS[2] = ("2d", ("x",), ("y",))
# shader-ndv: TLDS 1D .LZ (target 0: x in Ra), ptxas 12.9's ``TLDS.LZ.P RZ, R9, R11, 0x58, 1D, B``
# for tex1Dfetch on a kernel parameter: (x, 0) of the 2D pool (lower/texture.py ONE_DIM_POOL)
TLDS_DIMS[0] = ("1d", ("x",), ())
# TEXS's 2D targets in a kernel: target -> (TexSample's lod mode, Ra's roles, Rb's roles), as
# sm53/gfx_tex.py's TEXS_FORMS reads ptxas's packing (1 implicit, 2 .LZ, 3 .LL)
TEXS2D = {1: (0, ("x",), ("y",)), 2: (1, ("x",), ("y",)), 3: (3, ("x", "y"), ("lod",))}
# tex-kernels: TEXS's 3D and 2D array targets in a kernel (TEXS_FORMS' rows 10, 11, 7, 8):
# target -> (lod mode, dimension, Ra's roles, Rb's roles); ptxas 12.9 writes ``TEXS.P RZ, R4, R4,
# R10, 0x50, 3D, RA`` for a bound tex3D<float4> (x, y in R4, R5, z in R10)
TEXS_DIMS = {
    10: (0, "3d", ("x", "y"), ("z",)),
    11: (1, "3d", ("x", "y"), ("z",)),
    # gpu-pools: the cube targets (sm53/gfx_tex.py TEXS_FORMS 12, 13): ptxas 12.9 writes ``TEXS.P RZ,
    # R6, R10, R9, 0x52, CUBE, RA`` for a bound texCubemap (x, y in R10, R11, z in R9)
    12: (0, "cube", ("x", "y"), ("z",)),
    13: (3, "cube", ("x", "y"), ("z", "lod")),
    7: (0, "2d_array", ("layer", "x"), ("y",)),
    8: (1, "2d_array", ("layer", "x"), ("y",)),
}


class ComputeTextures53(ComputeTextures):
    """SM53's compute textures: the same rows and pools, SM53's fields.  Registers as ptxas 12.9
    packs them (the corpus group "texture"): TEX.B the point in Ra, Ra+1, the handle in Rb, the
    level (.LL) in Rb+1; TXD.B the handle in Ra, the point in Ra+1, Ra+2, the gradients in
    Rb..Rb+3 (dP/dx.x, dP/dy.x, dP/dx.y, dP/dy.y); TXQ.B the handle in Ra, the level in Ra+1;
    bound forms the handle at c[0x0][index * 4] and no handle register.  The enabled
    components go to d, d+1, ... in order.  3D / 2D array forms: the module docstring
    (tex-kernels).  (TLDS in a kernel: the 3D and 2D array targets only.)"""

    def lowered(self, ir: str) -> bool:
        return ir in TEXTURE_RULES53 or super().lowered(ir)

    def op_tex_compute53(self, inst: Inst) -> None:
        self._tex_types()
        ir, ops, mods = inst.row.ir, inst.ops, inst.mods
        bindless = ir.endswith(".B")
        kind = ir.split(".")[0]
        dim = self._tex_check(inst, TEX53)
        a, b = ops["a"]["reg"], ops["b"]["reg"] if "b" in ops else 255

        def reg(r: int, k: int) -> int | None:
            return None if r == 255 else r + k

        blk = Block()

        def val(r: int | None):
            return blk.const_u32(0) if r is None else blk.get_reg(r)

        if kind == "TLD":  # the handle where _tld_ir's packing puts it (.B), or the bank's word
            handle = None if bindless else blk.emit("CBankU32", bank=0, offset=ops["tid"]["imm"] * 4, inst=inst)
        elif bindless:
            hreg = b if kind == "TEX" else a
            handle = blk.get_reg(hreg) if hreg != 255 else blk.const_u32(0)
            first = 0 if kind in ("TEX", "TLD") else 1
        else:
            handle = blk.emit("CBankU32", bank=0, offset=ops["tid"]["imm"] * 4, inst=inst)
            first = 0
        mask = ops["mask"]["imm"]
        if kind == "TEX":
            lod = mods["lod"]
            if lod not in (0, 1, 3):
                self._tex_refuse(inst, "this level-of-detail mode in a kernel")
            level = (reg(b, 1) if bindless else reg(b, 0)) if lod == 3 else None
            if dim == "1d_array":  # (shader-ndv) Ra = (layer, x); the 2D array pool at y = 0.5
                y = blk.const_u32(Y_CENTRE)
                vec = blk.emit(
                    "BindlessSampleDim", handle, val(reg(a, 0)), val(reg(a, 1)), y, val(level), lod=lod, dim="2d_array"
                )
            elif dim == "cube_array":  # (gpu-pools) Ra = (layer, x, y, z), bound or .B (ptxas 12.9)
                layer, *xyz = (val(reg(a, k)) for k in range(4))
                vec = blk.emit("BindlessSampleCube", handle, *xyz, layer, val(level), lod=lod, array=1)
            elif dim == "cube":  # (gpu-pools) Ra = (x, y, z), bound or .B
                coords = [val(reg(a, k)) for k in range(3)]
                vec = blk.emit("BindlessSampleCube", handle, *coords, blk.const_u32(0), val(level), lod=lod, array=0)
            elif dim is not None:  # (tex-kernels) the three coordinates in Ra.., bound or .B
                coords = [val(reg(a, k)) for k in range(3)]
                vec = blk.emit("BindlessSampleDim", handle, *coords, val(level), lod=lod, dim=dim)
            else:
                vec = blk.emit("BindlessSample", handle, val(reg(a, 0)), val(reg(a, 1)), val(level), lod=lod)
            fl = True
        elif kind == "TLD":  # (tex-kernels, shader-tex) the coordinates in Ra.., the handle (.B) then the level in Rb..
            vec = self._tld_ir(blk, inst, TEX53, dim, handle, val)
            fl = True
        elif kind == "TXD":
            vec = self._txd_ir(blk, inst, handle, a, b, first, val, dim if dim in ("2d_array", "1d_array") else False)
            fl = True
        else:
            if ops["query"]["sym"] != 1:  # SM53's TEX_HEADER_DIMENSION
                self._tex_refuse(inst, "a TXQ query other than TEX_HEADER_DIMENSION")
            if mask & ~TXQ_KNOWN["2D", 0]:
                self._tex_refuse(inst, f"TXQ components {mask & ~TXQ_KNOWN['2D', 0]:#x}")
            vec = blk.emit("BindlessQueryDims", handle, val(reg(a, first)))
            fl = False
        # Not set_texel_words: d + k reaching RZ still emits the TexelWord (kept as it was).
        d, k = ops["d"]["reg"], 0
        for c in range(4):
            if mask >> c & 1:
                if d != 255:
                    blk.set_reg(d + k, blk.emit("TexelWord", vec, comp=c, float=fl))
                k += 1
        ir_spirv.emit(self, blk)

    def _short_form53(self, inst: Inst, ra_roles: tuple, rb_roles: tuple, build) -> None:
        """TEXS / TLDS (bound) in a kernel: Ra's and Rb's registers by role (a role absent or RZ
        reads 0), the handle at c[0x0][index * 4], the texel ``build(blk, handle, val)`` makes,
        components to the pair d then the pair d2 (as in the graphics stages)."""
        self._tex_types()
        ops = inst.ops
        blk = Block()
        regs = {}
        for r, roles in ((ops["a"]["reg"], ra_roles), (ops["b"]["reg"], rb_roles)):
            for i, role in enumerate(roles):
                regs[role] = None if r == 255 else r + i
        val = {k: blk.const_u32(0) if regs.get(k) is None else blk.get_reg(regs[k]) for k in ("x", "y", "z", "layer", "lod")}
        handle = blk.emit("CBankU32", bank=0, offset=ops["tid"]["imm"] * 4, inst=inst)
        vec = build(blk, handle, val)
        d, d2 = ops["d"]["reg"], ops["d2"]["reg"]
        dests = [d, d + 1 if d != 255 else 255, d2, d2 + 1 if d2 != 255 else 255]
        set_texel_words(blk, vec, ops["mask"]["mask"], dests, True)
        ir_spirv.emit(self, blk)

    def op_texs_compute53(self, inst: Inst) -> None:
        """TEXS (bound, the targets of ``TEXS2D`` / ``TEXS_DIMS``) in a kernel."""
        target = inst.mods["target"]
        form = TEXS2D.get(target) or TEXS_DIMS.get(target)
        if form is None or inst.mods.get("f16"):
            self._tex_refuse(inst, "this TEXS target (or .F16) in a kernel")
        dim = None
        if target in TEXS_DIMS:
            lod, dim, ra_roles, rb_roles = form
        else:
            lod, ra_roles, rb_roles = form

        def build(blk: Block, handle, val: dict):
            if dim == "cube":  # (gpu-pools)
                zero = blk.const_u32(0)
                return blk.emit("BindlessSampleCube", handle, val["x"], val["y"], val["z"], zero, val["lod"], lod=lod, array=0)
            if dim == "3d":
                return blk.emit("BindlessSampleDim", handle, val["x"], val["y"], val["z"], val["lod"], lod=lod, dim=dim)
            if dim == "2d_array":
                return blk.emit("BindlessSampleDim", handle, val["layer"], val["x"], val["y"], val["lod"], lod=lod, dim=dim)
            return blk.emit("BindlessSample", handle, val["x"], val["y"], val["lod"], lod=lod)

        self._short_form53(inst, ra_roles, rb_roles, build)

    def op_tlds_compute53(self, inst: Inst) -> None:
        """TLDS (bound) in a kernel, the 2D, 3D and 2D array .LZ targets of ``TLDS_DIMS``: the
        integer coordinates as Ra / Rb's roles, level 0."""
        form = TLDS_DIMS.get(inst.mods["target"])
        if form is None or inst.mods.get("f16"):
            self._tex_refuse(inst, "this TLDS target (or .F16) in a kernel (2D, 3D and 2D array .LZ only)")
        dim, ra_roles, rb_roles = form

        def build(blk: Block, handle, val: dict):
            if dim in ("2d", "1d"):  # (1d: y reads 0, no role gives it)
                return blk.emit("BindlessFetch", handle, val["x"], val["y"], blk.const_u32(0))
            order = ("x", "y", "z") if dim == "3d" else ("layer", "x", "y")
            return blk.emit("BindlessFetchDim", handle, *(val[k] for k in order), blk.const_u32(0), dim=dim)

        self._short_form53(inst, ra_roles, rb_roles, build)
