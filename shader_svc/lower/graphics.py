"""Vertex and fragment programs, the architecture-neutral part: the graphics stages' interface
on top of the compute lowering's register model and control flow.

Interface (the GPU process's fixed layout: set 0, bindings 0-3 uniform blocks, 4-7 combined
image samplers; see shader_svc/README.md "Graphics-stage interface"):

- constant bank c[b] (b = 0..3) -> uniform block at binding b: ``struct { uvec4 d[4096]; }``
  (64 KiB, std140-compatible, the bank's bytes as they are);
- bound texture slot s -> combined image sampler at binding 4 + s (float images of the
  dimension the program reads the slot as);
- vertex attribute N (a[0x80 + 16N + 4c]) -> ``Location N`` vec4 float input; varying N ->
  ``Location N`` vec4 float output/input, the fragment input's interpolation from the
  instruction's mode and the header's input map;
- a[0x70..0x7c]: Position (vertex output), FragCoord (fragment input); a[0x2f8]/a[0x2fc]:
  InstanceIndex/VertexIndex;
- colour target t -> ``Location t`` vec4 output, its components taken from registers at EXIT
  in the order the header's output map lists them (R0 upwards, enabled components only);
  the sample mask and depth from the registers after them;
- bindless handles pick entries of the texture and sampler pools (set 1, bindings 0 and 1).

Float math in these stages is what the driver does (FFMA is GLSL's Fma): the GPU process's
device enables neither Float64 nor Int64, which compute's exact FFMA needs.  Each ISA's
graphics lowering (``sm86/to_spirv_gfx.py``, ``sm53/to_spirv_gfx.py``) reads its attribute,
texture and kill instructions and calls these.
"""

from __future__ import annotations

import struct

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.lowering import Lowering
from shader_svc.request import FEATURES
from shader_svc.sph import GENERIC, POSITION, Header

UBO_WORDS = 4096  # uvec4 elements: 64 KiB, Vulkan's guaranteed minimum range

BANKS = range(0, 4)

TEX_SLOTS = range(0, 4)

TEX_BINDING0 = 4

VERTEX_ID, INSTANCE_ID = 0x2FC, 0x2F8

# Bindless textures: a handle register packs the texture (TIC) index in bits 0..19 and the sampler
# (TSC) index in bits 20..31 (public facts: Maxwell/NVN handles as nouveau and Ryujinx read them).
# The guest's pools become two descriptor arrays in a set of their own, which the GPU process
# fills from the guest's texture and sampler pools (index i of the array = pool entry i).
POOL_SET = 1

TEXTURE_POOL = 16  # set 1, binding 0: sampled images (2D float), pool entries 0..15

SAMPLER_POOL = 4  # set 1, binding 1: samplers, pool entries 0..3

HANDLE_TEXTURE_BITS = 20

# Translation features (``request.Program.features``, a bit mask the caller sets from what the
# GPU process's device has; 0 = none, the translation every Vulkan 1.3 device runs).
# Bit 0: the device indexes arrays of sampled images and samplers with non-uniform values
# (Vulkan 1.2 shaderSampledImageArrayNonUniformIndexing + shaderSampledImageArrayDynamicIndexing):
# a bindless instruction indexes the pools directly instead of switching over their entries.
FEATURE_DESCRIPTOR_INDEXING = FEATURES["descriptor_indexing"]

# TXQ TEX_HEADER_DIMENSION, both architectures: the components (mask bits x, y, z, w) translated per
# (SPIR-V Dim, arrayed).  Known: width x, height y, a 3D depth z (ptxas compiles PTX txq.width /
# .height / .depth to components 0x1 / 0x2 / 0x4), levels w and a 2D view's depth 1 as the 2D
# lowering had them; a 1D view's height, a cube's or an array's z (the layer count: ptxas reads it
# from a descriptor in memory, not TXQ) are not established here.
TXQ_KNOWN = {
    ("1D", 0): 0b1001,
    ("1D", 1): 0b1001,
    ("2D", 0): 0b1111,
    ("2D", 1): 0b1011,
    ("3D", 0): 0b1111,
    ("Cube", 0): 0b1011,
    ("Cube", 1): 0b1011,
}


GLSL_EXP2 = 29

GLSL_NCLAMP = 43  # GLSL.std.450 NClamp

GLSL_ROUND_EVEN = 2  # GLSL.std.450 RoundEven

# the texture rows' arguments by role (ir/ops.py's texture block; ``GraphicsLowering.tex_ir``)
TEX_ARGS = ("layer", "x", "y", "z", "lod", "dref")
TLD_ARGS = ("layer", "x", "y", "z", "lod", "off")
TLD4_ARGS = ("layer", "x", "y", "z", "off", "ptp0", "ptp1", "dref")
LOD_MODES = {"implicit": 0, "zero": 1, "bias": 2, "level": 3}  # TexSample's ``lod`` by name


class GraphicsLowering(Lowering):
    """The graphics stages' module setup, interface variables, uniform blocks, texture slots and
    pools, and the fragment outputs (module docstring); mixed in before an ISA's lowering."""

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

    # --- attributes ----------------------------------------------------------------------------
    def _attr_ptr(self, var: int, comp: int, sc: str) -> int:
        ptr = self.m.type("OpTypePointer", self.m.E("StorageClass", sc), self.f32)
        return self.op("OpAccessChain", ptr, var, self.c(comp))

    def _need(self, addrs: frozenset[int], a: int, what: str, inst: Inst) -> None:
        if a not in addrs:
            raise TranslateError(
                f"{inst.text()}: {what} a[{a:#x}], which the shader program header does not declare", offset=inst.addr
            )

    # attribute words, shared with the SM53 lowering (whose ALD/AST/IPA encode them otherwise)
    def attr_ir(self, inst: Inst, a: int, n: int, reg: int, load: bool) -> None:
        """ALD / AST: ``n`` words from a[a] on into registers reg, reg+1... (``load``; RZ: read
        and dropped) or from them to the outputs (RZ: zeros), one ``LoadInputF32`` /
        ``LoadInputIndex`` / ``StoreOutputF32`` row per word (the word checked and its variable
        declared now, so the rows never refuse)."""
        b = Block()
        for i in range(n):
            if load:
                v = self.vertex_input_ir(b, a + 4 * i, inst)
                if reg != 255:
                    b.set_reg(reg + i, v)
            else:
                var, comp = self.vertex_output_ref(a + 4 * i, inst)
                val = b.get_reg(reg + i) if reg != 255 else b.const_u32(0)
                b.emit("StoreOutputF32", b.op("BitcastF32", val), var=var, comp=comp)
        ir_spirv.emit(self, b)

    def vertex_input_ir(self, b: Block, a: int, inst: Inst) -> Value:
        """The u32 value of vertex input word a[a] built in ``b``: a generic attribute component
        (declared in the header) or the vertex / instance index."""
        if a in (VERTEX_ID, INSTANCE_ID):
            var = self.builtin("VertexIndex" if a == VERTEX_ID else "InstanceIndex", "Input", self.i32)
            return b.emit("LoadInputIndex", var=var)
        if GENERIC <= a < GENERIC + 0x200:
            self._need(self.header.inputs, a, "reads", inst)
            var = self.location(self.inputs, "Input", (a - GENERIC) // 16)
            return b.op("BitcastU32", b.emit("LoadInputF32", var=var, comp=a % 16 // 4))
        raise TranslateError(f"{inst.text()}: vertex input a[{a:#x}] not translated yet", offset=inst.addr)

    def vertex_output_ref(self, a: int, inst: Inst) -> tuple[int, int]:
        """The output variable and component of vertex output word a[a] (position or a declared
        varying), declared on first use."""
        if POSITION <= a < POSITION + 16:
            var = self.builtin("Position", "Output", self.v4f)
        elif GENERIC <= a < GENERIC + 0x200:
            var = self.location(self.outputs, "Output", (a - GENERIC) // 16)
        else:
            raise TranslateError(f"{inst.text()}: vertex output a[{a:#x}] not translated yet", offset=inst.addr)
        self._need(self.header.outputs, a, "writes", inst)
        return var, a % 16 // 4

    def fragment_input_ref(self, a: int, constant: bool, centroid: bool, inst: Inst) -> tuple[int, int, str]:
        """The input variable and component of fragment input word a[a] (declared on first
        use, with the decorations the driver's interpolation needs), and how the driver
        interpolates it: 'position' (FragCoord), 'flat' (the instruction's constant mode or
        the header's), 'linear' (header screen linear: NoPerspective), 'perspective' (Smooth)."""
        if POSITION <= a < POSITION + 16:
            var, how = self.builtin("FragCoord", "Input", self.v4f), "position"
        elif GENERIC <= a < GENERIC + 0x200:
            mode = self.header.interpolation(a)
            if mode == "unused":
                self._need(frozenset(), a, "interpolates", inst)
            loc = (a - GENERIC) // 16
            want = self.interp.setdefault(loc, set())
            how = "flat" if constant or mode == "constant" else mode
            want.add({"flat": "Flat", "linear": "NoPerspective"}.get(how, "Smooth"))
            if centroid:
                want.add("Centroid")
            if len(want - {"Centroid"}) > 1:
                raise TranslateError(
                    f"{inst.text()}: input {loc} is read with two interpolations ({', '.join(sorted(want))})", offset=inst.addr
                )
            var = self.location(self.inputs, "Input", loc)
        else:
            raise TranslateError(f"{inst.text()}: fragment input a[{a:#x}] not translated yet", offset=inst.addr)
        return var, a % 16 // 4, how

    # --- the interface rows of the IR (ir/ops.py's shader-ir-gfx block) --------------------------
    def load_input(self, var: int, comp: int) -> int:
        """``LoadInputF32``."""
        return self.op("OpLoad", self.f32, self._attr_ptr(var, comp, "Input"))

    def load_input_index(self, var: int) -> int:
        """``LoadInputIndex``."""
        return self.op("OpBitcast", self.u32, self.op("OpLoad", self.i32, var))

    def store_output(self, var: int, comp: int, val: int) -> None:
        """``StoreOutputF32``."""
        self.do("OpStore", self._attr_ptr(var, comp, "Output"), val)

    def store_colour(self, var: int, mask: int, vals: list[int]) -> None:
        """``StoreColour``."""
        comps = [
            self.op("OpBitcast", self.f32, vals[c]) if mask >> c & 1 else self.m.const(self.f32, 0 if c < 3 else 0x3F800000)
            for c in range(4)
        ]
        self.do("OpStore", var, self.op("OpCompositeConstruct", self.v4f, *comps))

    def store_sample_mask(self, var: int, val: int) -> None:
        """``StoreSampleMask``."""
        ptr = self.m.type("OpTypePointer", self.m.E("StorageClass", "Output"), self.i32)
        self.do("OpStore", self.op("OpAccessChain", ptr, var, self.c(0)), self.op("OpBitcast", self.i32, val))

    def store_frag_depth(self, var: int, val: int) -> None:
        """``StoreFragDepth``."""
        self.do("OpStore", var, self.op("OpBitcast", self.f32, val))

    def clamp01(self, val: int) -> int:
        """``FClampDevice01``."""
        zero, one = self.m.const(self.f32, 0), self.m.const(self.f32, 0x3F800000)
        return self.op("OpExtInst", self.f32, self.glsl, GLSL_NCLAMP, val, zero, one)

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
        vec = b.emit(row, *vals, **attrs)
        k = 0
        for c in range(4):
            if mask >> c & 1:
                r = dests[k]
                k += 1
                if r != 255:
                    b.set_reg(r, b.emit("TexelWord", vec, comp=c, float=fl))
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
        vec = b.emit(row, *vals, inst=inst, **attrs)
        k = 0
        for c in range(4):
            if mask >> c & 1:
                r = dests[k]
                k += 1
                if r != 255:
                    b.set_reg(r, b.emit("TexelWord", vec, comp=c, float=fl))
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
        comps = [size] if k + arrayed == 1 else [self.op("OpCompositeExtract", self.u32, size, i) for i in range(k)]
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

    # --- entry point and outputs -------------------------------------------------------------------
    def _epilogue(self) -> None:
        """The fragment outputs at an EXIT, as ``StoreColour`` / ``StoreSampleMask`` /
        ``StoreFragDepth`` rows (the output variables declared once)."""
        if self.header.stage != "fragment":
            return
        E = self.m.E
        b = Block()
        reg = 0
        for t, mask in enumerate(self.header.targets):
            if not mask:
                continue
            vals = []
            for c in range(4):
                if mask >> c & 1:
                    vals.append(b.get_reg(reg))
                    reg += 1
                else:
                    vals.append(b.const_u32(0))  # not read: the row stores the constant 0 / 1
            if t not in self.colour_vars:  # one variable per target: the epilogue runs at every EXIT
                self.colour_vars[t] = self._var("Output", self.v4f, [(E("Decoration", "Location"), t)])
            b.emit("StoreColour", *vals, var=self.colour_vars[t], mask=mask)
        if self.header.writes_depth or self.header.writes_sample_mask:
            self._depth_outputs(b, reg)
        ir_spirv.emit(self, b)

    # the header's depth / sample-mask outputs (fragment header bits 609, 608), both architectures
    def _depth_outputs(self, b: Block, reg: int) -> None:
        """The sample mask from ``reg``, the first register after the colours', FragDepth from the
        next; the mask's register is kept whether or not the header declares the mask (Ryujinx's
        reading of Maxwell's pixel outputs; Mesa NAK's fragment outputs, SM50 up: colours, then
        the mask or 0, then depth, "these always come together").  The mask becomes
        SampleMask[0]: bit n keeps the fragment's sample n (one sample per pixel: bit 0 keeps or
        drops the pixel)."""
        if self.header.writes_sample_mask:
            arr = self.m.type("OpTypeArray", self.i32, self.c(1))
            b.emit("StoreSampleMask", b.get_reg(reg), var=self.builtin("SampleMask", "Output", arr))
        if self.header.writes_depth:
            b.emit("StoreFragDepth", b.get_reg(reg + 1), var=self.builtin("FragDepth", "Output", self.f32))

    def _entry(self, main: int) -> None:
        m, E = self.m, self.m.E
        for loc, want in self.interp.items():
            for d in sorted(want - {"Smooth"}):
                m.emit("annot", "OpDecorate", self.inputs[loc], E("Decoration", d))
        model = "Vertex" if self.header.stage == "vertex" else "Fragment"
        m.emit("entry", "OpEntryPoint", E("ExecutionModel", model), main, "main", *self.interface)
        if model == "Fragment":
            m.emit("execmode", "OpExecutionMode", main, E("ExecutionMode", "OriginUpperLeft"))
            if self.header.writes_depth:
                m.emit("execmode", "OpExecutionMode", main, E("ExecutionMode", "DepthReplacing"))
