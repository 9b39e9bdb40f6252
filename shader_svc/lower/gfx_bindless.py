"""Vertex and fragment programs: bindless textures (``GfxBindless``, a mixin of
``graphics.GraphicsLowering``) and the bindless rows of the IR (ir/ops.py's shader-ir-gfx block).

A handle register names entries of the guest's texture and sampler pools, which become two
descriptor arrays of their own set; without descriptor indexing the entry is picked by a switch
over constant indices, with it the arrays are indexed NonUniform (``bindless`` /
``bindless_indexed``)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.lower.lowering import Lowering
from shader_svc.lower.texel_words import set_texel_words
from nxrecomp.common import kernel_pools
from shader_svc.request import FEATURES

# Bindless textures: a handle register packs the texture (TIC) index in bits 0..19 and the sampler
# (TSC) index in bits 20..31 (public facts: Maxwell/NVN handles as nouveau and Ryujinx read them).
# The guest's pools become two descriptor arrays in a set of their own, which the GPU process
# fills from the guest's texture and sampler pools (index i of the array = pool entry i).
# (gpu-pools: the numbers are nxrecomp/common/kernel_pools.py's, shared with the GPU process)
POOL_SET = kernel_pools.POOL_SET

TEXTURE_POOL = kernel_pools.TEXTURE_POOL  # set 1, binding 0: sampled images (2D float), pool entries 0..15

SAMPLER_POOL = kernel_pools.SAMPLER_POOL  # set 1, binding 1: samplers, pool entries 0..3

HANDLE_TEXTURE_BITS = 20

# Translation features (``request.Program.features``, a bit mask the caller sets from what the
# GPU process's device has; 0 = none, the translation every Vulkan 1.3 device runs).
# Bit 0: the device indexes arrays of sampled images and samplers with non-uniform values
# (Vulkan 1.2 shaderSampledImageArrayNonUniformIndexing + shaderSampledImageArrayDynamicIndexing):
# a bindless instruction indexes the pools directly instead of switching over their entries.
FEATURE_DESCRIPTOR_INDEXING = FEATURES["descriptor_indexing"]

GLSL_EXP2 = 29


class GfxBindless(Lowering):
    """Mixin of ``graphics.GraphicsLowering``: the pools and the bindless rows (module
    docstring)."""

    # --- bindless textures: the pools ---------------------------------------------------------------
    def pool_vars(self) -> tuple[int, int]:
        """The texture pool (array of sampled images) and the sampler pool (array of samplers),
        set 1 bindings 0 and 1, declared on first use."""
        if getattr(self, "_pools", None) is None:
            m, E = self.m, self.m.E
            img = m.type("OpTypeImage", self.f32, E("Dim", "2D"), 0, 0, 0, 1, E("ImageFormat", "Unknown"))
            self.pool_img_t = img  # slot_var may retarget img_t to another dimension
            self.pool_sampled_t = m.type("OpTypeSampledImage", img)
            self.sampler_t = m.type("OpTypeSampler")
            vars_ = []
            for binding, (ty, n) in enumerate(((img, TEXTURE_POOL), (self.sampler_t, SAMPLER_POOL))):
                arr = m.type("OpTypeArray", ty, self.c(n))
                vars_.append(
                    self._var(
                        "UniformConstant",
                        arr,
                        [(E("Decoration", "DescriptorSet"), POOL_SET), (E("Decoration", "Binding"), binding)],
                    )
                )
            self._pools = tuple(vars_)
        return self._pools

    def bindless(self, handle: int, with_sampler: bool, result_ty: int, leaf) -> int:
        """``leaf(image, sampled_image)`` for the pool entries the handle names, as a value of
        ``result_ty``; a handle outside the pools reads zero.  With FEATURE_DESCRIPTOR_INDEXING
        the pools are indexed by the handle's fields (``bindless_indexed``); without it (lavapipe:
        shaderSampledImageArrayDynamicIndexing = false, no descriptor indexing) the entry is
        picked by a switch whose cases index the arrays with constants: valid whether or not the
        handle is the same in every invocation (no waterfall loop or subgroup operation needed,
        so vertex programs work too)."""
        if self.features & FEATURE_DESCRIPTOR_INDEXING:
            return self.bindless_indexed(handle, with_sampler, result_ty, leaf)
        m = self.m
        tex_pool, smp_pool = self.pool_vars()
        tid = self.op("OpBitwiseAnd", self.u32, handle, self.c((1 << HANDLE_TEXTURE_BITS) - 1))
        if with_sampler:
            sid = self.op("OpShiftRightLogical", self.u32, handle, self.c(HANDLE_TEXTURE_BITS))
            ok = self.op(
                "OpLogicalAnd",
                self.bool,
                self.op("OpULessThan", self.bool, tid, self.c(TEXTURE_POOL)),
                self.op("OpULessThan", self.bool, sid, self.c(SAMPLER_POOL)),
            )
            sel = self.op(
                "OpSelect",
                self.u32,
                ok,
                self.op("OpIAdd", self.u32, self.op("OpIMul", self.u32, tid, self.c(SAMPLER_POOL)), sid),
                self.c(0xFFFFFFFF),
            )
            cases = [(t, s) for t in range(TEXTURE_POOL) for s in range(SAMPLER_POOL)]
        else:
            sel = tid
            cases = [(t, None) for t in range(TEXTURE_POOL)]
        fn = m.E("StorageClass", "Function")
        res = self.var(f"tex{len(self.vars)}", m.type("OpTypePointer", fn, result_ty))
        self.do("OpStore", res, self._zero_of(result_ty))
        merge = self.label()
        labels = [self.label() for _ in cases]
        self.do("OpSelectionMerge", merge, 0)
        self.do("OpSwitch", sel, merge, *[x for k, lab in enumerate(labels) for x in (k, lab)])
        uc = m.E("StorageClass", "UniformConstant")
        for (t, s), lab in zip(cases, labels):
            self.put_label(lab)
            img = self.op(
                "OpLoad",
                self.pool_img_t,
                self.op("OpAccessChain", m.type("OpTypePointer", uc, self.pool_img_t), tex_pool, self.c(t)),
            )
            si = None
            if s is not None:
                smp = self.op(
                    "OpLoad",
                    self.sampler_t,
                    self.op("OpAccessChain", m.type("OpTypePointer", uc, self.sampler_t), smp_pool, self.c(s)),
                )
                si = self.op("OpSampledImage", self.pool_sampled_t, img, smp)
            self.do("OpStore", res, leaf(img, si))
            self.do("OpBranch", merge)
        self.put_label(merge)
        return self.op("OpLoad", result_ty, res)

    def _zero_of(self, ty: int) -> int:
        if ty == self.u32:
            return self.c(0)
        return self._zero_vec(ty, self.m.const(self.f32 if ty == self.v4f else self.u32, 0))

    def bindless_indexed(self, handle: int, with_sampler: bool, result_ty: int, leaf) -> int:
        """The pools indexed by the handle's texture and sampler fields (clamped to entry 0 when
        the handle is outside the pools, whose result is then replaced by zero: no branch, so
        the leaf runs in the same control flow as the instruction).  Every index, access chain,
        load and sampled image of the pools is decorated NonUniform (GLSL's nonuniformEXT): the
        handle is a register, which may differ between invocations (per-pixel handles); for a
        handle that is the same in all of them the decoration is allowed and costs the driver
        one pass of its loop over distinct values.  Needs the capabilities
        SampledImageArrayDynamicIndexing and SampledImageArrayNonUniformIndexing (ShaderNonUniform
        is core SPIR-V 1.5) and the device features of the same names."""
        m, E = self.m, self.m.E
        tex_pool, smp_pool = self.pool_vars()
        if not getattr(self, "_indexing_caps", False):
            for cap in ("ShaderNonUniform", "SampledImageArrayDynamicIndexing", "SampledImageArrayNonUniformIndexing"):
                m.emit("cap", "OpCapability", E("Capability", cap))
            self._indexing_caps = True
        nonuniform = E("Decoration", "NonUniform")

        def nu(v: int) -> int:
            m.emit("annot", "OpDecorate", v, nonuniform)
            return v

        tid = self.op("OpBitwiseAnd", self.u32, handle, self.c((1 << HANDLE_TEXTURE_BITS) - 1))
        ok = self.op("OpULessThan", self.bool, tid, self.c(TEXTURE_POOL))
        if with_sampler:
            sid = self.op("OpShiftRightLogical", self.u32, handle, self.c(HANDLE_TEXTURE_BITS))
            ok = self.op("OpLogicalAnd", self.bool, ok, self.op("OpULessThan", self.bool, sid, self.c(SAMPLER_POOL)))
        uc = m.E("StorageClass", "UniformConstant")
        t = nu(self.op("OpSelect", self.u32, ok, tid, self.c(0)))
        img_ptr = nu(self.op("OpAccessChain", m.type("OpTypePointer", uc, self.pool_img_t), tex_pool, t))
        img = nu(self.op("OpLoad", self.pool_img_t, img_ptr))
        si = None
        if with_sampler:
            s = nu(self.op("OpSelect", self.u32, ok, sid, self.c(0)))
            smp_ptr = nu(self.op("OpAccessChain", m.type("OpTypePointer", uc, self.sampler_t), smp_pool, s))
            smp = nu(self.op("OpLoad", self.sampler_t, smp_ptr))
            si = nu(self.op("OpSampledImage", self.pool_sampled_t, img, smp))
        return self.op("OpSelect", result_ty, ok, leaf(img, si), self._zero_of(result_ty))

    def _zero_vec(self, ty: int, z: int) -> int:
        key = ("z", ty)
        if key not in self.m._consts:
            cid = self.m.id()
            self.m._consts[key] = cid
            self.m.emit("types", "OpConstantComposite", ty, cid, z, z, z, z)
        return self.m._consts[key]

    # --- the bindless rows of the IR (ir/ops.py's shader-ir-gfx block) ----------------------------
    def bindless_ir(self, row: str, handle: int, args: tuple[int, ...], mask: int, dests: list[int], fl: bool, **attrs) -> None:
        """The IR of a bindless instruction: the row ``row`` on the registers ``handle`` and
        ``args`` (None: the constant 0; RZ reads 0), the components enabled in ``mask``, in
        order, into ``dests`` (255: dropped), as 32-bit words (``fl``: of f32 components)."""
        b = Block()
        vals = [b.get_reg(handle)] + [b.const_u32(0) if r is None else b.get_reg(r) for r in args]
        set_texel_words(b, b.emit(row, *vals, **attrs), mask, dests, fl)
        ir_spirv.emit(self, b)

    def _coord2f(self, x: int, y: int) -> int:
        return self.op("OpCompositeConstruct", self.v2f, self.op("OpBitcast", self.f32, x), self.op("OpBitcast", self.f32, y))

    def bindless_sample(self, lod: int, handle: int, x: int, y: int, lv: int) -> int:
        """``BindlessSample``: implicit-LOD sampling (fragment programs) uses the coordinates'
        derivatives taken before the pick (scaled by 2^bias for a bias)."""
        E = self.m.E
        coord = self._coord2f(x, y)
        if lod in (0, 2) and self.header.stage == "fragment":
            dx = self.op("OpDPdx", self.v2f, coord)
            dy = self.op("OpDPdy", self.v2f, coord)
            if lod == 2:  # bias: the LOD of gradients scaled by 2^bias is LOD + bias
                scale = self.op("OpExtInst", self.f32, self.glsl, GLSL_EXP2, self.op("OpBitcast", self.f32, lv))
                dx = self.op("OpVectorTimesScalar", self.v2f, dx, scale)
                dy = self.op("OpVectorTimesScalar", self.v2f, dy, scale)
            return self.bindless(
                handle,
                True,
                self.v4f,
                lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Grad"), dx, dy),
            )
        level = self.op("OpBitcast", self.f32, lv) if lod == 3 else self.m.const(self.f32, 0)
        return self.bindless(
            handle,
            True,
            self.v4f,
            lambda img, si: self.op("OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Lod"), level),
        )

    def bindless_fetch(self, handle: int, x: int, y: int, lv: int) -> int:
        """``BindlessFetch``."""
        v2u = self.m.type("OpTypeVector", self.u32, 2)
        coord = self.op("OpBitcast", self.v2i, self.op("OpCompositeConstruct", v2u, x, y))
        lod = self.m.E("ImageOperands", "Lod")
        return self.bindless(handle, False, self.v4f, lambda img, si: self.op("OpImageFetch", self.v4f, img, coord, lod, lv))

    def bindless_gather(self, comp: int, handle: int, x: int, y: int) -> int:
        """``BindlessGather``."""
        coord, c = self._coord2f(x, y), self.c(comp)
        return self.bindless(handle, True, self.v4f, lambda img, si: self.op("OpImageGather", self.v4f, si, coord, c))

    def bindless_query_dims(self, handle: int, level: int) -> int:
        """``BindlessQueryDims``."""
        v2u = self.m.type("OpTypeVector", self.u32, 2)
        v4u = self.m.type("OpTypeVector", self.u32, 4)

        def query(img: int, si) -> int:
            size = self.op("OpImageQuerySizeLod", v2u, img, level)
            w, h = (self.op("OpCompositeExtract", self.u32, size, i) for i in range(2))
            return self.op("OpCompositeConstruct", v4u, w, h, self.c(1), self.op("OpImageQueryLevels", self.u32, img))

        return self.bindless(handle, False, v4u, query)
