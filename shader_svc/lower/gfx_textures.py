"""Vertex and fragment programs: bound textures (``GfxTextures``, a mixin of
``graphics.GraphicsLowering``) and the texture rows of the IR (ir/ops.py's texture block).

- bound texture slot s -> combined image sampler at binding 4 + s (set 0; float images of the
  dimension the program reads the slot as; one slot read as two dimensions is refused);
- sampling, fetches, gathers (with .AOFFI / .PTP offsets), size queries, explicit gradients and
  the LOD query, each row checked in program order (``check_late``: its slot declared, a
  refusal raised) and lowered with the function;
- each ISA's lowering reads its TEX / TLD / TLD4 / TXQ / TXD / TMML (and SM53's short forms)
  into ``tex_ir`` and says which variable a row reads (``tex_var``).

Facts: ptxas's packing of texel offsets (signed 6-bit x at bits 0..5, y at 8..13 for TLD4, 4-bit
x, y, z at bits 0, 4, 8 for TLD), Mesa NAK's packing of textureGatherOffsets, nouveau's TXLQ
lowering (TMML's two 8.8 fixed-point words, the two swapped against GL's order)."""

from __future__ import annotations

import struct

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.lowering import Lowering
from shader_svc.lower.texel_words import set_texel_words

TEX_SLOTS = range(0, 4)

TEX_BINDING0 = 4


# TXQ TEX_HEADER_DIMENSION, both architectures: the components (mask bits x, y, z, w) translated per
# (SPIR-V Dim, arrayed).  Known: width x, height y, a 3D depth z (ptxas compiles PTX txq.width /
# .height / .depth to components 0x1 / 0x2 / 0x4), levels w and a 2D view's depth 1 as the 2D
# lowering had them; a 2D array's z is its layer count (shader-tex: Ryujinx's Maxwell TXQ reads it
# so, as Vulkan's size of an arrayed image); a 1D view's height, a cube's or a 1D array's layer
# component are not established here.
TXQ_KNOWN = {
    ("1D", 0): 0b1001,
    ("1D", 1): 0b1001,
    ("2D", 0): 0b1111,
    ("2D", 1): 0b1111,  # shader-tex: z the layer count (Ryujinx's TXQ; Vulkan's arrayed size)
    ("3D", 0): 0b1111,
    ("Cube", 0): 0b1011,
    ("Cube", 1): 0b1011,
}


GLSL_NCLAMP = 43  # GLSL.std.450 NClamp

GLSL_ROUND_EVEN = 2  # GLSL.std.450 RoundEven

# the texture rows' arguments by role (ir/ops.py's texture block; ``GraphicsLowering.tex_ir``)
TEX_ARGS = ("layer", "x", "y", "z", "lod", "dref")
TLD_ARGS = ("layer", "x", "y", "z", "lod", "off")
TLD4_ARGS = ("layer", "x", "y", "z", "off", "ptp0", "ptp1", "dref")
LOD_MODES = {"implicit": 0, "zero": 1, "bias": 2, "level": 3}  # TexSample's ``lod`` by name


class GfxTextures(Lowering):
    """Mixin of ``graphics.GraphicsLowering``: texture slots and the texture rows (module
    docstring)."""

    def slot_var(self, slot: int, dim: str = "2D", arrayed: int = 0, depth: int = 0) -> int:
        """The combined image sampler of texture slot ``slot`` (binding 4 + slot, float; 2D unless
        the lowering names another SPIR-V ``dim`` / ``arrayed``; ``depth`` 1 for a slot read with a
        depth comparison), declared on first use; ``img_t`` / ``sampled_t`` are left naming this
        slot's types.  One slot read as two dimensions (or with and without a comparison) is
        refused (the binding has one image view)."""
        m, E = self.m, self.m.E
        self.img_t = m.type("OpTypeImage", self.f32, E("Dim", dim), depth, arrayed, 0, 1, E("ImageFormat", "Unknown"))
        self.sampled_t = m.type("OpTypeSampledImage", self.img_t)
        dims = self.slot_dims
        want = (dim, arrayed) if not depth else (dim, arrayed, "depth")
        if slot not in self.images:
            dims[slot] = want
            self.images[slot] = self._var(
                "UniformConstant",
                self.sampled_t,
                [(E("Decoration", "DescriptorSet"), 0), (E("Decoration", "Binding"), TEX_BINDING0 + slot)],
            )
        elif dims.get(slot, ("2D", 0)) != want:
            raise TranslateError(
                f"texture slot {slot} is read as {dims.get(slot, ('2D', 0))} and as {want} (one binding has one dimension)"
            )
        return self.images[slot]

    def offsets(self, word: int, width: int, step: int, n: int) -> list[int]:
        """``n`` signed ``width``-bit texel offsets packed ``step`` bits apart from bit 0 of the
        u32 ``word`` (x first), each sign-extended."""
        out = []
        for k in range(n):
            top = self.op("OpShiftLeftLogical", self.u32, word, self.c(32 - width - step * k))
            out.append(self.op("OpShiftRightArithmetic", self.u32, top, self.c(32 - width)))
        return out

    def gather(
        self,
        si: int,
        coord: int,
        comp: int,
        offset_word: int | None = None,
        dref: int | None = None,
        ptp: tuple[int, int] | None = None,
    ) -> int:
        """OpImageGather (or OpImageDrefGather against ``dref``, a f32) of component ``comp``,
        with the per-instruction texel offsets of a TLD4 .AOFFI word (signed 6-bit x at bits
        0..5, y at 8..13, as ptxas packs them) when given: a run-time offset, which needs the
        ImageGatherExtended capability (Vulkan's shaderImageGatherExtended feature).  ``ptp``:
        .PTP's two words of per-texel offsets (texel k's x and y in bytes 2k, 2k + 1, signed, k
        in the gather's result order: Mesa NAK's packing of textureGatherOffsets), done as four
        gathers, each moved by its texel's offsets, of which component k is kept."""
        E = self.m.E

        def one(off) -> int:
            extra = [E("ImageOperands", "Offset"), off] if off is not None else []
            if dref is not None:
                return self.op("OpImageDrefGather", self.v4f, si, coord, dref, *extra)
            return self.op("OpImageGather", self.v4f, si, coord, self.c(comp), *extra)

        def ivec2(x: int, y: int) -> int:
            if not getattr(self, "_gather_ext", False):
                self._gather_ext = True
                self.m.emit("cap", "OpCapability", E("Capability", "ImageGatherExtended"))
            v2u = self.m.type("OpTypeVector", self.u32, 2)
            return self.op("OpBitcast", self.v2i, self.op("OpCompositeConstruct", v2u, x, y))

        if ptp is not None:
            bytes_ = self.offsets(ptp[0], 8, 8, 4) + self.offsets(ptp[1], 8, 8, 4)
            parts = [self.op("OpCompositeExtract", self.f32, one(ivec2(bytes_[2 * k], bytes_[2 * k + 1])), k) for k in range(4)]
            return self.op("OpCompositeConstruct", self.v4f, *parts)
        if offset_word is not None:
            return one(ivec2(*self.offsets(offset_word, 6, 8, 2)))
        return one(None)

    # --- textures --------------------------------------------------------------------------------
    def _sample_dref(self, inst: Inst, si: int, coord: int, lod: str, dref: int, lv: int | None) -> int:
        """A depth comparison against ``dref`` (the sampler's compare function), its result in
        R of the vec4 (G, B, A zero: never written, the caller allows only R)."""
        E = self.m.E
        if lod == "implicit" and self.header.stage == "fragment":
            r = self.op("OpImageSampleDrefImplicitLod", self.f32, si, coord, dref)
        else:
            r = self.op(
                "OpImageSampleDrefExplicitLod",
                self.f32,
                si,
                coord,
                dref,
                E("ImageOperands", "Lod"),
                lv if lv is not None else self.m.const(self.f32, 0),
            )
        z = self.m.const(self.f32, 0)
        return self.op("OpCompositeConstruct", self.v4f, r, z, z, z)

    # --- the texture rows of the IR (ir/ops.py's texture block) ----------------------------------
    AXES = {"1D": 1, "2D": 2, "3D": 3, "Cube": 3}

    def tex_var(self, at: dict, depth: int | None) -> int:
        """The combined image sampler variable a texture row reads (``at``: its attributes;
        ``depth``: read with a depth comparison, None for a query), checked and declared on
        first use, leaving ``img_t`` / ``sampled_t`` naming its types; each ISA's lowering says
        how (the same answer every time it is asked)."""
        raise NotImplementedError

    def tex_image(self, at: dict, depth: int | None) -> int:
        """The loaded combined image sampler of ``tex_var``."""
        var = self.tex_var(at, depth)
        return self.op("OpLoad", self.sampled_t, var)

    TEX_DEPTH = {"TexSample": "dc", "TexGather": "dc", "TexFetch": 0, "TexQueryDims": None, "TexSampleGrad": 0, "TexQueryLod": 0}

    def check_late(self, o) -> bool:
        """``ir_spirv.emit``: a texture row or a constant-bank read checked now (its slot or
        bank declared, a refusal raised in program order), so it is lowered with the function
        (no SPIR-V written while building)."""
        name, at = o.op.name, o.attrs
        if name == "CBankU32":
            self._cbank_check(at["offset"], at["bank"], at["inst"])
            return True
        if name not in self.TEX_DEPTH:
            return super().check_late(o)  # the compute rows' checks (lower/base.py)
        if name == "TexQueryLod" and self.header.stage != "fragment":
            inst = at["inst"]
            raise TranslateError(
                f"{inst.text()} (word {inst.word:#x}): TMML outside a fragment program (the level of detail comes from "
                f"the quad's implicit derivatives)",
                offset=inst.addr,
            )
        if name == "TexSample" and at["lod"] == 2 and self.header.stage != "fragment":
            inst = at["inst"]
            raise TranslateError(f"{inst.text()}: LOD bias outside a fragment program", offset=inst.addr)
        d = self.TEX_DEPTH[name]
        self.tex_var(at, at[d] if isinstance(d, str) else d)
        return True

    def tex_ir(
        self, inst: Inst, row: str, regs: dict[str, int], args: tuple[str, ...], fl: bool, mask: int, dests: list[int], **attrs
    ) -> None:
        """The IR of a bound texture instruction: its source registers by role (``args``, the
        row's argument order; a role it lacks or RZ reads 0), the row ``row`` (``ir/ops.py``'s
        texture block), and the components enabled in ``mask``, in order, into ``dests`` (255:
        dropped), as 32-bit words (``fl``: of f32 components)."""
        b = Block()
        vals = [b.get_reg(regs[k]) if regs.get(k, 255) != 255 else b.const_u32(0) for k in args]
        set_texel_words(b, b.emit(row, *vals, inst=inst, **attrs), mask, dests, fl)
        ir_spirv.emit(self, b)

    def tex_coord(
        self, dim: str, arrayed: int, xyz: tuple[int, int, int], layer: int, fetch: bool, off: int | None = None
    ) -> int:
        """The coordinate vector: float coordinates (bit patterns) and the layer converted to
        float last (sampling), or integer texels, moved by a TLD .AOFFI word's signed 4-bit x,
        y, z at bits 0, 4, 8 (ptxas's packing), and the layer (fetching)."""
        n = self.AXES[dim]
        if fetch:
            parts = list(xyz[:n])
            if off is not None:
                parts = [self.op("OpIAdd", self.u32, v, o) for v, o in zip(parts, self.offsets(off, 4, 4, n))]
            if arrayed:
                parts.append(layer)
            if len(parts) == 1:
                return self.op("OpBitcast", self.i32, parts[0])
            vu = self.m.type("OpTypeVector", self.u32, len(parts))
            return self.op(
                "OpBitcast", self.m.type("OpTypeVector", self.i32, len(parts)), self.op("OpCompositeConstruct", vu, *parts)
            )
        parts = [self.op("OpBitcast", self.f32, v) for v in xyz[:n]]
        if arrayed:
            parts.append(self.op("OpConvertUToF", self.f32, layer))
        if len(parts) == 1:
            return parts[0]
        return self.op("OpCompositeConstruct", self.m.type("OpTypeVector", self.f32, len(parts)), *parts)

    def tex_sample(self, at: dict, layer: int, x: int, y: int, z: int, lod: int, dref: int) -> int:
        """``TexSample``."""
        E, inst, mode = self.m.E, at["inst"], at["lod"]
        si = self.tex_image(at, at["dc"])
        coord = self.tex_coord(at["dim"], at["arrayed"], (x, y, z), layer, False)
        level = self.op("OpBitcast", self.f32, lod) if mode in (2, 3) else None
        if at["dc"]:
            ref = self.op("OpBitcast", self.f32, dref)
            return self._sample_dref(inst, si, coord, {0: "implicit", 1: "zero", 3: "level"}[mode], ref, level)
        if mode == 0 and self.header.stage == "fragment":
            return self.op("OpImageSampleImplicitLod", self.v4f, si, coord)
        if mode == 2 and self.header.stage == "fragment":
            return self.op("OpImageSampleImplicitLod", self.v4f, si, coord, E("ImageOperands", "Bias"), level)
        if mode in (0, 1, 3):
            lv = level if mode == 3 else self.m.const(self.f32, 0)
            return self.op("OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Lod"), lv)
        raise TranslateError(f"{inst.text()}: LOD bias outside a fragment program", offset=inst.addr)

    def tex_fetch(self, at: dict, layer: int, x: int, y: int, z: int, lod: int, off: int) -> int:
        """``TexFetch``."""
        si = self.tex_image(at, 0)
        img = self.op("OpImage", self.img_t, si)
        coord = self.tex_coord(at["dim"], at["arrayed"], (x, y, z), layer, True, off if at["aoffi"] else None)
        return self.op("OpImageFetch", self.v4f, img, coord, self.m.E("ImageOperands", "Lod"), lod)

    def tex_gather(self, at: dict, layer: int, x: int, y: int, z: int, off: int, p0: int, p1: int, dref: int) -> int:
        """``TexGather``."""
        si = self.tex_image(at, at["dc"])
        ref = self.op("OpBitcast", self.f32, dref) if at["dc"] else None
        coord = self.tex_coord(at["dim"], at["arrayed"], (x, y, z), layer, False)
        o = at["off"]
        return self.gather(si, coord, at["comp"], off if o == 1 else None, ref, (p0, p1) if o == 2 else None)

    def tex_query_dims(self, at: dict, level: int) -> int:
        """``TexQueryDims``."""
        si = self.tex_image(at, None)
        img = self.op("OpImage", self.img_t, si)
        k, arrayed = {"1D": 1, "2D": 2, "3D": 3, "Cube": 2}[at["dim"]], at["arrayed"]
        size_t = self.u32 if k + arrayed == 1 else self.m.type("OpTypeVector", self.u32, k + arrayed)
        size = self.op("OpImageQuerySizeLod", size_t, img, level)
        # a 2D array's z is its layer count (shader-tex; TXQ_KNOWN): the size's third component
        n = k + (arrayed and at["dim"] == "2D")
        comps = [size] if k + arrayed == 1 else [self.op("OpCompositeExtract", self.u32, size, i) for i in range(n)]
        xyz = (comps + [self.c(1)] * 3)[:3]
        levels = self.op("OpImageQueryLevels", self.u32, img)
        return self.op("OpCompositeConstruct", self.m.type("OpTypeVector", self.u32, 4), *xyz, levels)

    def tex_sample_grad(self, at: dict, x: int, y: int, dxx: int, dyx: int, dxy: int, dyy: int) -> int:
        """``TexSampleGrad``: OpImageSampleExplicitLod with the Grad operand (2D)."""
        si = self.tex_image(at, 0)
        coord = self.tex_coord(at["dim"], at["arrayed"], (x, y, 0), 0, False)
        dx, dy = self._coord2f(dxx, dxy), self._coord2f(dyx, dyy)
        return self.op("OpImageSampleExplicitLod", self.v4f, si, coord, self.m.E("ImageOperands", "Grad"), dx, dy)

    def tex_query_lod(self, at: dict, x: int, y: int) -> int:
        """``TexQueryLod``: OpImageQueryLod's (level read, lambda') as TMML's two 8.8 fixed-point
        words, lambda' first (nouveau's TXLQ lowering reads the hardware's first result as a
        signed 16-bit value times 1/256 and the second as an unsigned one, the two swapped
        against the GL/Vulkan order)."""
        si = self.tex_image(at, 0)
        coord = self.tex_coord(at["dim"], at["arrayed"], (x, y, 0), 0, False)
        lod = self.op("OpImageQueryLod", self.v2f, si, coord)

        def f(x: float) -> int:
            return self.m.const(self.f32, struct.unpack("<I", struct.pack("<f", x))[0])

        def fixed(comp: int, signed: bool) -> int:
            v = self.op("OpFMul", self.f32, self.op("OpCompositeExtract", self.f32, lod, comp), f(256.0))
            v = self.op("OpExtInst", self.f32, self.glsl, GLSL_ROUND_EVEN, v)
            if signed:  # saturated to the 16-bit range, sign-extended
                lo, hi = f(-32768.0), f(32767.0)
                v = self.op("OpExtInst", self.f32, self.glsl, GLSL_NCLAMP, v, lo, hi)
                return self.op("OpBitcast", self.u32, self.op("OpConvertFToS", self.i32, v))
            lo, hi = f(0.0), f(65535.0)
            return self.op("OpConvertFToU", self.u32, self.op("OpExtInst", self.f32, self.glsl, GLSL_NCLAMP, v, lo, hi))

        v4u = self.m.type("OpTypeVector", self.u32, 4)
        return self.op("OpCompositeConstruct", v4u, fixed(1, True), fixed(0, False), self.c(0), self.c(0))

    def texel_word(self, vec: int, comp: int, float_: bool) -> int:
        """``TexelWord``."""
        if not float_:
            return self.op("OpCompositeExtract", self.u32, vec, comp)
        return self.op("OpBitcast", self.u32, self.op("OpCompositeExtract", self.f32, vec, comp))
