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
(width, height, 1, the level count).  Refused by name (offset, word, form): other dimensions,
.LB, .DC, .AOFFI, .LC, a fault predicate, other TXQ queries.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import LowerBase, TranslateError
from shader_svc.lower.graphics import POOL_SET, TEXTURE_POOL, TXQ_KNOWN, GraphicsLowering
from shader_svc.lower.indirect import const_reg
from shader_svc.lower.texel_words import set_texel_words

# gfx-layers: the sampled-image pools of the other dimensions a kernel's TEX reads (set 1), and the
# TEX dimension codes (sm86/table.py TEX_DIM) that reach them
TEXTURE_POOL_2D_ARRAY, TEXTURE_POOL_3D = 7, 8
POOL_DIMS = {2: "3d", 5: "2d_array"}

TEXTURE_RULES = {
    "TEX": "op_tex_compute",
    "TEX.B": "op_tex_compute",
    "TXD": "op_tex_compute",
    "TXD.B": "op_tex_compute",
    "TXQ": "op_tex_compute",
    "TXQ.B": "op_tex_compute",
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
    bindless_query_dims = GraphicsLowering.bindless_query_dims
    texel_word = GraphicsLowering.texel_word

    def _tex_types(self) -> None:
        """The vector types the bindless lowering names (the graphics stages declare them at
        setup; a kernel when its first texture instruction is lowered)."""
        if "v4f" not in self.__dict__:
            self.v4f = self.m.type("OpTypeVector", self.f32, 4)
            self.v2f = self.m.type("OpTypeVector", self.f32, 2)

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

    def _txd_ir(self, blk: Block, inst: Inst, handle, a: int, b: int, first: int, val):
        """TXD of either ISA: the point at Ra + first, + 1, the gradients Rb..Rb+3, .AOFFI's
        offsets word at Ra + first + 2 (a constant: lower/indirect.const_reg); RZ reads 0."""

        def reg(r: int, k: int) -> int | None:
            return None if r == 255 else r + k

        point = [val(reg(a, first)), val(reg(a, first + 1))]
        grads = [val(reg(b, k)) for k in range(4)]
        if inst.mods.get("AOFFI"):
            off = reg(a, first + 2)
            known = const_reg(self.insts, self.insts.index(inst), off) if off is not None else 0
            return blk.emit("BindlessSampleGradOffset", handle, *point, *grads, val(off), word=known, inst=inst)
        return blk.emit("BindlessSampleGrad", handle, *point, *grads)

    def op_tex_compute(self, inst: Inst) -> None:
        """TEX / TXD / TXQ, bound or .B, of a kernel (module docstring)."""
        self._tex_types()
        ir, ops, mods = inst.row.ir, inst.ops, inst.mods
        bindless = ir.endswith(".B")
        kind = ir.split(".")[0]
        dim = POOL_DIMS.get(ops["dim"]["sym"]) if kind == "TEX" else None
        if kind != "TXQ" and ops["dim"]["sym"] != 1 and dim is None:
            self._tex_refuse(inst, "a texture other than 2D (TEX: 2D, 3D, 2D array)")
        if mods.get("DC") or mods.get("LC"):
            self._tex_refuse(inst, ".DC/.LC")
        if mods.get("AOFFI") and ir != "TXD.B":  # (shader-ctl: TXD.B's offsets word, Ra + 3)
            self._tex_refuse(inst, ".AOFFI other than TXD.B's")
        if ops.get("fault", {"pred": 7})["pred"] != 7:
            self._tex_refuse(inst, "a texture fault predicate")
        a, b = ops["a"]["reg"], ops["b"]["reg"] if "b" in ops else 255

        def reg(r: int, k: int) -> int | None:  # register r + k, None for RZ (reads 0)
            return None if r == 255 else r + k

        blk = Block()
        if bindless:
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
            if dim is not None:  # (gfx-layers) three coordinates: all in Ra.. (.B) or two in Ra, one in Rb
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
        elif kind == "TXD":
            vec = self._txd_ir(blk, inst, handle, a, b, first, val)
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

    # --- SPIR-V -----------------------------------------------------------------------------
    def bindless_sample_dim(self, dim: str, lod: int, handle: int, a: int, b: int, c: int, lv: int) -> int:
        """``BindlessSampleDim``: OpImageSampleExplicitLod on the pool of ``dim`` (a 2D array's
        layer converted to f32: Vulkan rounds and clamps it to the layers)."""
        m, E = self.m, self.m.E
        self.pool_vars()  # the 2D pool, the sampler pool and the ImageQuery capability first
        pools = getattr(self, "_dim_pools", None)
        if pools is None:
            pools = self._dim_pools = {}
        if dim not in pools:
            img = m.type(
                "OpTypeImage",
                self.f32,
                E("Dim", "3D" if dim == "3d" else "2D"),
                0,
                int(dim == "2d_array"),
                0,
                1,
                E("ImageFormat", "Unknown"),
            )
            arr = m.type("OpTypeArray", img, self.c(TEXTURE_POOL))
            binding = TEXTURE_POOL_3D if dim == "3d" else TEXTURE_POOL_2D_ARRAY
            var = self._var(
                "UniformConstant", arr, [(E("Decoration", "DescriptorSet"), POOL_SET), (E("Decoration", "Binding"), binding)]
            )
            pools[dim] = (var, img, m.type("OpTypeSampledImage", img))
        var, img_t, si_t = pools[dim]
        v3f = m.type("OpTypeVector", self.f32, 3)
        f = [self.op("OpBitcast", self.f32, x) for x in (a, b, c)]
        if dim == "2d_array":  # (layer, x, y) -> (x, y, layer)
            f = [f[1], f[2], self.op("OpConvertUToF", self.f32, a)]
        coord = self.op("OpCompositeConstruct", v3f, *f)
        level = self.op("OpBitcast", self.f32, lv) if lod == 3 else m.const(self.f32, 0)
        # the 2D pool's switch (GraphicsLowering.bindless) on this pool: its fields swapped in for
        # the call (it reads the texture pool and its types from them)
        saved = (self._pools, self.pool_img_t, self.pool_sampled_t)
        self._pools, self.pool_img_t, self.pool_sampled_t = (var, saved[0][1]), img_t, si_t
        try:
            return self.bindless(
                handle,
                True,
                self.v4f,
                lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Lod"), level),
            )
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


TEXTURE_RULES53 = {k: "op_tex_compute53" for k in ("TEX", "TEX.B", "TXD", "TXD.B", "TXQ", "TXQ.B")}
TEXTURE_RULES53["TEXS"] = "op_texs_compute53"
# TEXS's 2D targets in a kernel: target -> (TexSample's lod mode, Ra's roles, Rb's roles), as
# sm53/gfx_tex.py's TEXS_FORMS reads ptxas's packing (1 implicit, 2 .LZ, 3 .LL)
TEXS2D = {1: (0, ("x",), ("y",)), 2: (1, ("x",), ("y",)), 3: (3, ("x", "y"), ("lod",))}


class ComputeTextures53(ComputeTextures):
    """SM53's compute textures: the same rows and pools, SM53's fields.  Registers as ptxas 12.9
    packs them (the corpus group "texture"): TEX.B the point in Ra, Ra+1, the handle in Rb, the
    level (.LL) in Rb+1; TXD.B the handle in Ra, the point in Ra+1, Ra+2, the gradients in
    Rb..Rb+3 (dP/dx.x, dP/dy.x, dP/dx.y, dP/dy.y); TXQ.B the handle in Ra, the level in Ra+1;
    bound forms the handle at c[0x0][index * 4] and no handle register.  The enabled
    components go to d, d+1, ... in order.  (TEXS/TLDS in a kernel are not translated yet.)"""

    def lowered(self, ir: str) -> bool:
        return ir in TEXTURE_RULES53 or super().lowered(ir)

    def op_tex_compute53(self, inst: Inst) -> None:
        self._tex_types()
        ir, ops, mods = inst.row.ir, inst.ops, inst.mods
        bindless = ir.endswith(".B")
        kind = ir.split(".")[0]
        if kind != "TXQ" and ops["dim"]["sym"] != 2:
            self._tex_refuse(inst, "a texture other than 2D")
        if mods.get("DC") or mods.get("LC") or mods.get("NDV"):
            self._tex_refuse(inst, ".DC/.LC/.NDV")
        if mods.get("AOFFI") and ir != "TXD.B":  # (shader-ctl: TXD.B's offsets word, Ra + 3)
            self._tex_refuse(inst, ".AOFFI other than TXD.B's")
        if ops.get("pd", {"pred": 7})["pred"] != 7:
            self._tex_refuse(inst, "a texture predicate result")
        a, b = ops["a"]["reg"], ops["b"]["reg"] if "b" in ops else 255

        def reg(r: int, k: int) -> int | None:
            return None if r == 255 else r + k

        blk = Block()

        def val(r: int | None):
            return blk.const_u32(0) if r is None else blk.get_reg(r)

        if bindless:
            handle = blk.get_reg(b if kind == "TEX" else a) if (b if kind == "TEX" else a) != 255 else blk.const_u32(0)
            first = 0 if kind == "TEX" else 1
        else:
            handle = blk.emit("CBankU32", bank=0, offset=ops["tid"]["imm"] * 4, inst=inst)
            first = 0
        mask = ops["mask"]["imm"]
        if kind == "TEX":
            lod = mods["lod"]
            if lod not in (0, 1, 3):
                self._tex_refuse(inst, "this level-of-detail mode in a kernel")
            level = (reg(b, 1) if bindless else reg(b, 0)) if lod == 3 else None
            vec = blk.emit("BindlessSample", handle, val(reg(a, 0)), val(reg(a, 1)), val(level), lod=lod)
            fl = True
        elif kind == "TXD":
            vec = self._txd_ir(blk, inst, handle, a, b, first, val)
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

    def op_texs_compute53(self, inst: Inst) -> None:
        """TEXS (bound, 2D targets of ``TEXS2D``) in a kernel: the handle at c[0x0][index * 4];
        components to the pair d then the pair d2, as in the graphics stages."""
        self._tex_types()
        ops = inst.ops
        form = TEXS2D.get(inst.mods["target"])
        if form is None or inst.mods.get("f16"):
            self._tex_refuse(inst, "this TEXS target (or .F16) in a kernel")
        lod, ra_roles, rb_roles = form
        blk = Block()
        regs = {}
        for r, roles in ((ops["a"]["reg"], ra_roles), (ops["b"]["reg"], rb_roles)):
            for i, role in enumerate(roles):
                regs[role] = None if r == 255 else r + i
        val = {k: blk.const_u32(0) if regs.get(k) is None else blk.get_reg(regs[k]) for k in ("x", "y", "lod")}
        handle = blk.emit("CBankU32", bank=0, offset=ops["tid"]["imm"] * 4, inst=inst)
        vec = blk.emit("BindlessSample", handle, val["x"], val["y"], val["lod"], lod=lod)
        d, d2 = ops["d"]["reg"], ops["d2"]["reg"]
        dests = [d, d + 1 if d != 255 else 255, d2, d2 + 1 if d2 != 255 else 255]
        set_texel_words(blk, vec, ops["mask"]["mask"], dests, True)
        ir_spirv.emit(self, blk)
