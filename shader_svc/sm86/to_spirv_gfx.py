"""Vertex and fragment programs (SM86) to SPIR-V, on the compute lowering's register model and
dispatcher loop (``to_spirv._Lower``), with the graphics stages' inputs, outputs and resources.

Interface (the GPU process's fixed layout: set 0, bindings 0-3 uniform blocks, 4-7 combined
image samplers; see shader_svc/README.md "Graphics-stage interface"):

- constant bank c[b] (b = 0..3) -> uniform block at binding b: ``struct { uvec4 d[4096]; }``
  (64 KiB, std140-compatible, the bank's bytes as they are);
- bound texture slot s (the second index of TEX/TLD/TLD4/TXQ, first index 0, s = 0..3) -> combined
  image sampler at binding 4 + s (2D float images);
- vertex attribute N (ALD a[0x80 + 16N + 4c]) -> ``Location N`` vec4 float input;
  varying N (AST in the vertex program, IPA in the fragment program, same addresses) ->
  ``Location N`` vec4 float output/input; the fragment input's interpolation comes from IPA's
  mode (.CONSTANT = Flat) and the header's input map (perspective = default, screen linear =
  NoPerspective), .CENTROID = Centroid;
- a[0x70..0x7c]: Position (vertex output), FragCoord (fragment input); a[0x2f8]/a[0x2fc]:
  InstanceIndex/VertexIndex;
- colour target t -> ``Location t`` vec4 output, its components taken from registers at EXIT in
  the order the header's output map lists them (R0 upwards, enabled components only).

Float math in these stages is what the driver does (FFMA is GLSL's Fma): the GPU process's
device enables neither Float64 nor Int64, which compute's exact FFMA needs.
"""
from __future__ import annotations

from shader_svc.sm86.decode import Inst
from shader_svc.sm86.to_spirv import LOWERED, TranslateError, _Lower
from shader_svc.sph import GENERIC, POSITION, Header

UBO_WORDS = 4096                       # uvec4 elements: 64 KiB, Vulkan's guaranteed minimum range
BANKS = range(0, 4)
TEX_SLOTS = range(0, 4)
TEX_BINDING0 = 4
VERTEX_ID, INSTANCE_ID = 0x2FC, 0x2F8
GFX_LOWERED = (LOWERED - {"S2R", "LDG", "STG"}) | {"ALD", "AST", "IPA", "KILL", "TEX", "TLD", "TLD4", "TXQ",
                                                 "TEX.B", "TLD.B", "TLD4.B", "TXQ.B"}
# Bindless textures: a handle register packs the texture (TIC) index in bits 0..19 and the sampler
# (TSC) index in bits 20..31 (public facts: Maxwell/NVN handles as nouveau and Ryujinx read them).
# The guest's pools become two descriptor arrays in a set of their own, which the GPU process
# fills from the guest's texture and sampler pools (index i of the array = pool entry i).
POOL_SET = 1
TEXTURE_POOL = 16          # set 1, binding 0: sampled images (2D float), pool entries 0..15
SAMPLER_POOL = 4           # set 1, binding 1: samplers, pool entries 0..3
HANDLE_TEXTURE_BITS = 20
# TXQ TEX_HEADER_DIMENSION, both architectures: the components (mask bits x, y, z, w) translated per
# (SPIR-V Dim, arrayed).  Known: width x, height y, a 3D depth z (ptxas compiles PTX txq.width /
# .height / .depth to components 0x1 / 0x2 / 0x4), levels w and a 2D view's depth 1 as the 2D
# lowering had them; a 1D view's height, a cube's or an array's z (the layer count: ptxas reads it
# from a descriptor in memory, not TXQ) are not established here.
TXQ_KNOWN = {("1D", 0): 0b1001, ("1D", 1): 0b1001, ("2D", 0): 0b1111, ("2D", 1): 0b1011, ("3D", 0): 0b1111,
             ("Cube", 0): 0b1011, ("Cube", 1): 0b1011}
# TEX/TLD/TLD4 dimension field -> (SPIR-V Dim, arrayed, coordinate count)
# (1D declares the Sampled1D capability, cube arrays SampledCubeArray: Vulkan's imageCubeArray feature)
DIMS86 = {0: ("1D", 0, 1), 1: ("2D", 0, 2), 2: ("3D", 0, 3), 3: ("Cube", 0, 3), 4: ("1D", 1, 1), 5: ("2D", 1, 2),
          7: ("Cube", 1, 3)}


class _GfxLower(_Lower):
    def __init__(self, insts: list[Inst], header: Header) -> None:
        self.header = header
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
        self.slot_dims: dict[int, tuple[str, int]] = {}     # slot -> (SPIR-V Dim, arrayed)
        self.inputs: dict[int, int] = {}        # location -> variable
        self.outputs: dict[int, int] = {}
        self.interp: dict[int, set[str]] = {}    # fragment input location -> decorations wanted
        self.builtin_vars: dict[str, int] = {}
        self.colour_vars: dict[int, int] = {}
        self.uses_position_out = False

    def lowered(self, ir: str) -> bool:
        return ir in GFX_LOWERED

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
            raise TranslateError(f"{inst.text()}: constant bank c[{bank:#x}] has no binding (banks 0..3 are "
                                 f"uniform blocks at bindings 0..3)", offset=inst.addr)
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
            self.ubos[bank] = self._var("Uniform", st, [(E("Decoration", "DescriptorSet"), 0),
                                                         (E("Decoration", "Binding"), bank)])
        return self.ubos[bank]

    def image(self, inst: Inst) -> int:
        """The combined image sampler of a bound instruction's slot, declared with the dimension
        the instruction names (TXQ, which names none, the one the program samples the slot as)."""
        ops = inst.ops
        if ops["bank"]["imm"] != 0 or ops["slot"]["imm"] not in TEX_SLOTS:
            raise TranslateError(f"{inst.text()}: texture {ops['bank']['imm']:#x}, {ops['slot']['imm']:#x} has no "
                                 f"binding (slots 0..3 of index 0 are bindings 4..7)", offset=inst.addr)
        dim, arrayed, _ = self.target(inst)
        if dim == "1D" and not getattr(self, "_sampled1d", False):
            self._sampled1d = True
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "Sampled1D"))
        if dim == "Cube" and arrayed and not getattr(self, "_cube_array", False):
            self._cube_array = True
            self.m.emit("cap", "OpCapability", self.m.E("Capability", "SampledCubeArray"))
        depth = inst.mods.get("DC", 0) if "dim" in ops else self._slot_depth86.get(ops["slot"]["imm"], 0)
        try:
            return self.slot_var(ops["slot"]["imm"], dim, arrayed, depth)
        except TranslateError as e:
            raise TranslateError(f"{inst.text()}: {e}", offset=inst.addr) from None

    def target(self, inst: Inst) -> tuple[str, int, int]:
        """(SPIR-V Dim, arrayed, coordinate count) of a bound texture instruction; TXQ's is the
        slot's as the program's other texture instructions read it (2D when none does)."""
        if "dim" in inst.ops:
            if inst.ops["dim"]["sym"] not in DIMS86:
                raise TranslateError(f"{inst.text()}: this texture dimension is not translated", offset=inst.addr)
            return DIMS86[inst.ops["dim"]["sym"]]
        return self._slot_dims86.get(inst.ops["slot"]["imm"], ("2D", 0, 2))

    @property
    def _slot_dims86(self) -> dict[int, tuple[str, int, int]]:
        """Slot -> target as the program's TEX/TLD/TLD4 read it (for TXQ)."""
        if getattr(self, "_dims86", None) is None:
            self._dims86, self._depth86 = {}, {}
            for ins in self.insts:
                if ins.row.ir in ("TEX", "TLD", "TLD4") and ins.ops["dim"]["sym"] in DIMS86:
                    self._dims86.setdefault(ins.ops["slot"]["imm"], DIMS86[ins.ops["dim"]["sym"]])
                    self._depth86.setdefault(ins.ops["slot"]["imm"], ins.mods.get("DC", 0))
        return self._dims86

    @property
    def _slot_depth86(self) -> dict[int, int]:
        """Slot -> 1 where the program's TLD4 compares depths (a TXQ declares the same view)."""
        self._slot_dims86
        return self._depth86

    def sources(self, inst: Inst, roles: list[str]) -> dict[str, int]:
        """Register of each source value (``roles`` in order: the layer, the coordinates, the
        level or bias, offsets, reference).  Ampere splits them over Ra's and Rb's tuples as
        ptxas (12.9, sm_86) packs them (``source_split``).  Two values
        are ambiguous in ptxas's code (it always puts Rb at Ra+1, which reads the same as one
        pair in Ra), so only those two readings' common case is translated: Rb = RZ or Ra+1.
        A register of RZ reads 0."""
        a, b = inst.ops["a"]["reg"], inst.ops["b"]["reg"]
        n = len(roles)
        split = source_split(n, sum(r in ("layer", "x", "y", "z") for r in roles))
        if n == 2:
            if b not in (255, a + 1 if a != 255 else 255):
                raise TranslateError(f"{inst.text()}: two source values with Rb other than RZ or Ra+1 are not "
                                     f"translated (which tuple holds the second is not established)", offset=inst.addr)
        regs = [a + i if a != 255 else 255 for i in range(split)] + \
               [b + i if b != 255 else 255 for i in range(n - split)]
        return dict(zip(roles, regs))

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
            self.images[slot] = self._var("UniformConstant", self.sampled_t,
                                          [(E("Decoration", "DescriptorSet"), 0),
                                           (E("Decoration", "Binding"), TEX_BINDING0 + slot)])
        elif dims.get(slot, ("2D", 0)) != want:
            raise TranslateError(f"texture slot {slot} is read as {dims.get(slot, ('2D', 0))} and as "
                                 f"{want} (one binding has one dimension)")
        return self.images[slot]

    def offsets(self, word: int, width: int, step: int, n: int) -> list[int]:
        """``n`` signed ``width``-bit texel offsets packed ``step`` bits apart from bit 0 of the
        u32 ``word`` (x first), each sign-extended."""
        out = []
        for k in range(n):
            top = self.op("OpShiftLeftLogical", self.u32, word, self.c(32 - width - step * k))
            out.append(self.op("OpShiftRightArithmetic", self.u32, top, self.c(32 - width)))
        return out

    def gather(self, si: int, coord: int, comp: int, offset_word: int | None = None,
               dref: int | None = None, ptp: tuple[int, int] | None = None) -> int:
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
            parts = [self.op("OpCompositeExtract", self.f32, one(ivec2(bytes_[2 * k], bytes_[2 * k + 1])), k)
                     for k in range(4)]
            return self.op("OpCompositeConstruct", self.v4f, *parts)
        if offset_word is not None:
            return one(ivec2(*self.offsets(offset_word, 6, 8, 2)))
        return one(None)

    def sampled(self, inst: Inst) -> int:
        var = self.image(inst)
        return self.op("OpLoad", self.sampled_t, var)

    def cbank_word(self, off: int, bank: int, inst: Inst) -> int:
        if off % 4 or not 0 <= off < 16 * UBO_WORDS:
            raise TranslateError(f"{inst.text()}: constant offset {off:#x} outside a 64 KiB bank", offset=inst.addr)
        E = self.m.E
        ptr = self.m.type("OpTypePointer", E("StorageClass", "Uniform"), self.u32)
        p = self.op("OpAccessChain", ptr, self.ubo(bank, inst), self.c(0), self.c(off // 16), self.c(off // 4 % 4))
        return self.op("OpLoad", self.u32, p)

    # --- attributes ----------------------------------------------------------------------------
    def _attr_ptr(self, var: int, comp: int, sc: str) -> int:
        ptr = self.m.type("OpTypePointer", self.m.E("StorageClass", sc), self.f32)
        return self.op("OpAccessChain", ptr, var, self.c(comp))

    def _need(self, addrs: frozenset[int], a: int, what: str, inst: Inst) -> None:
        if a not in addrs:
            raise TranslateError(f"{inst.text()}: {what} a[{a:#x}], which the shader program header does not "
                                 f"declare", offset=inst.addr)

    # attribute words, shared with the SM53 lowering (whose ALD/AST/IPA encode them otherwise)
    def vertex_input(self, a: int, inst: Inst) -> int:
        """The u32 value of vertex input word a[a]: a generic attribute component (declared in
        the header) or the vertex / instance index."""
        if a in (VERTEX_ID, INSTANCE_ID):
            var = self.builtin("VertexIndex" if a == VERTEX_ID else "InstanceIndex", "Input", self.i32)
            return self.op("OpBitcast", self.u32, self.op("OpLoad", self.i32, var))
        if GENERIC <= a < GENERIC + 0x200:
            self._need(self.header.inputs, a, "reads", inst)
            var = self.location(self.inputs, "Input", (a - GENERIC) // 16)
            return self.op("OpBitcast", self.u32, self.op("OpLoad", self.f32, self._attr_ptr(var, a % 16 // 4, "Input")))
        raise TranslateError(f"{inst.text()}: vertex input a[{a:#x}] not translated yet", offset=inst.addr)

    def vertex_output(self, a: int, val: int, inst: Inst) -> None:
        """Store the u32 ``val`` to vertex output word a[a] (position or a declared varying)."""
        if POSITION <= a < POSITION + 16:
            var = self.builtin("Position", "Output", self.v4f)
        elif GENERIC <= a < GENERIC + 0x200:
            var = self.location(self.outputs, "Output", (a - GENERIC) // 16)
        else:
            raise TranslateError(f"{inst.text()}: vertex output a[{a:#x}] not translated yet", offset=inst.addr)
        self._need(self.header.outputs, a, "writes", inst)
        self.do("OpStore", self._attr_ptr(var, a % 16 // 4, "Output"), self.op("OpBitcast", self.f32, val))

    def fragment_input(self, a: int, constant: bool, centroid: bool, inst: Inst) -> tuple[int, str]:
        """The f32 of fragment input word a[a] as the driver interpolates it, and how:
        'position' (FragCoord), 'flat' (the instruction's constant mode or the header's),
        'linear' (header screen linear: NoPerspective), 'perspective' (Smooth)."""
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
                raise TranslateError(f"{inst.text()}: input {loc} is read with two interpolations "
                                     f"({', '.join(sorted(want))})", offset=inst.addr)
            var = self.location(self.inputs, "Input", loc)
        else:
            raise TranslateError(f"{inst.text()}: fragment input a[{a:#x}] not translated yet", offset=inst.addr)
        return self.op("OpLoad", self.f32, self._attr_ptr(var, a % 16 // 4, "Input")), how

    def ald(self, inst: Inst) -> None:
        ops = inst.ops
        if ops["vtx"]["reg"] != 255 or inst.mods["O"]:
            raise TranslateError(f"{inst.text()}: only vertex inputs of the current vertex are translated",
                                 offset=inst.addr)
        d = ops["d"]["reg"]
        for i in range(inst.mods["comps"] + 1):
            val = self.vertex_input(ops["attr"]["attr"] + 4 * i, inst)
            if d != 255:
                self.set_reg(d + i, val)

    def ast(self, inst: Inst) -> None:
        ops = inst.ops
        if ops["vtx"]["reg"] != 255 or inst.mods["P"]:
            raise TranslateError(f"{inst.text()}: only outputs of the current vertex are translated",
                                 offset=inst.addr)
        b = ops["b"]["reg"]
        for i in range(inst.mods["comps"] + 1):
            self.vertex_output(ops["attr"]["attr"] + 4 * i, self.reg(b + i) if b != 255 else self.c(0), inst)

    def ipa(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        if ops["pd"]["pred"] != 7 or mods["loc"] == 2 or mods["mode"] == 2:
            raise TranslateError(f"{inst.text()}: only IPA.PASS/.CONSTANT (optionally .CENTROID) are translated",
                                 offset=inst.addr)
        f, _ = self.fragment_input(ops["attr"]["attr"], mods["mode"] == 1, mods["loc"] == 1, inst)
        self.set_reg(ops["d"]["reg"], self.op("OpBitcast", self.u32, f))

    def kill(self, ins: Inst) -> None:
        if self.header.stage != "fragment":
            super().kill(ins)
        dead, after = self.label(), self.label()
        # killed when both the guard and the operand predicate hold
        pp = ins.ops["pp"]
        p = self.op("OpLogicalAnd", self.bool, self.pred(ins.pred, ins.pred_not), self.pred(pp["pred"], pp["not"]))
        self.do("OpSelectionMerge", after, 0)
        self.do("OpBranchConditional", p, dead, after)
        self.put_label(dead)
        self.do("OpKill")
        self.put_label(after)

    # --- bindless textures: the pools ---------------------------------------------------------------
    def pool_vars(self) -> tuple[int, int]:
        """The texture pool (array of sampled images) and the sampler pool (array of samplers),
        set 1 bindings 0 and 1, declared on first use."""
        if getattr(self, "_pools", None) is None:
            m, E = self.m, self.m.E
            img = m.type("OpTypeImage", self.f32, E("Dim", "2D"), 0, 0, 0, 1, E("ImageFormat", "Unknown"))
            self.pool_img_t = img          # slot_var may retarget img_t to another dimension
            self.pool_sampled_t = m.type("OpTypeSampledImage", img)
            self.sampler_t = m.type("OpTypeSampler")
            vars_ = []
            for binding, (ty, n) in enumerate(((img, TEXTURE_POOL), (self.sampler_t, SAMPLER_POOL))):
                arr = m.type("OpTypeArray", ty, self.c(n))
                vars_.append(self._var("UniformConstant", arr, [(E("Decoration", "DescriptorSet"), POOL_SET),
                                                                (E("Decoration", "Binding"), binding)]))
            self._pools = tuple(vars_)
        return self._pools

    def bindless(self, handle: int, with_sampler: bool, result_ty: int, leaf) -> int:
        """``leaf(image, sampled_image)`` for the pool entries the handle names, as a value of
        ``result_ty``.  The device has no dynamic indexing of image arrays (lavapipe:
        shaderSampledImageArrayDynamicIndexing = false, no descriptor indexing), so the entry is
        picked by a switch whose cases index the arrays with constants: valid whether or not the
        handle is the same in every invocation (no waterfall loop or subgroup operation needed,
        so vertex programs work too).  A handle outside the pools reads zero."""
        m = self.m
        tex_pool, smp_pool = self.pool_vars()
        tid = self.op("OpBitwiseAnd", self.u32, handle, self.c((1 << HANDLE_TEXTURE_BITS) - 1))
        if with_sampler:
            sid = self.op("OpShiftRightLogical", self.u32, handle, self.c(HANDLE_TEXTURE_BITS))
            ok = self.op("OpLogicalAnd", self.bool, self.op("OpULessThan", self.bool, tid, self.c(TEXTURE_POOL)),
                         self.op("OpULessThan", self.bool, sid, self.c(SAMPLER_POOL)))
            sel = self.op("OpSelect", self.u32, ok, self.op("OpIAdd", self.u32, self.op(
                "OpIMul", self.u32, tid, self.c(SAMPLER_POOL)), sid), self.c(0xFFFFFFFF))
            cases = [(t, s) for t in range(TEXTURE_POOL) for s in range(SAMPLER_POOL)]
        else:
            sel = tid
            cases = [(t, None) for t in range(TEXTURE_POOL)]
        fn = m.E("StorageClass", "Function")
        res = self.var(f"tex{len(self.vars)}", m.type("OpTypePointer", fn, result_ty))
        zero = self.c(0) if result_ty in (self.u32,) else None
        if zero is None:
            comp = self.f32 if result_ty == self.v4f else self.u32
            z = m.const(comp, 0)
            zero = self._zero_vec(result_ty, z)
        self.do("OpStore", res, zero)
        merge = self.label()
        labels = [self.label() for _ in cases]
        self.do("OpSelectionMerge", merge, 0)
        self.do("OpSwitch", sel, merge, *[x for k, lab in enumerate(labels) for x in (k, lab)])
        uc = m.E("StorageClass", "UniformConstant")
        for (t, s), lab in zip(cases, labels):
            self.put_label(lab)
            img = self.op("OpLoad", self.pool_img_t, self.op(
                "OpAccessChain", m.type("OpTypePointer", uc, self.pool_img_t), tex_pool, self.c(t)))
            si = None
            if s is not None:
                smp = self.op("OpLoad", self.sampler_t, self.op(
                    "OpAccessChain", m.type("OpTypePointer", uc, self.sampler_t), smp_pool, self.c(s)))
                si = self.op("OpSampledImage", self.pool_sampled_t, img, smp)
            self.do("OpStore", res, leaf(img, si))
            self.do("OpBranch", merge)
        self.put_label(merge)
        return self.op("OpLoad", result_ty, res)

    def _zero_vec(self, ty: int, z: int) -> int:
        key = ("z", ty)
        if key not in self.m._consts:
            cid = self.m.id()
            self.m._consts[key] = cid
            self.m.emit("types", "OpConstantComposite", ty, cid, z, z, z, z)
        return self.m._consts[key]

    def _bindless_check(self, inst: Inst) -> int:
        """The handle register's value (2D only).  Source packing as Ryujinx documents it for
        Maxwell's bindless forms, assumed for Ampere's: the handle is the first register of the
        second source tuple (Rb), an LOD or bias follows it (Rb+1)."""
        ops = inst.ops
        if ops["dim"]["sym"] != 1:
            raise TranslateError(f"{inst.text()}: only 2D textures are translated yet", offset=inst.addr)
        return self.reg(ops["b"]["reg"])

    def tex_bindless(self, inst: Inst) -> None:
        """TEX.B / TLD.B / TLD4.B: the handle in Rb picks the pool entries; coordinates in Ra, Ra+1,
        the LOD (.LL) or bias (.LB) in Rb+1.  Implicit-LOD sampling (fragment programs) uses the
        coordinates' derivatives taken before the switch (scaled by 2^bias for .LB), so
        invocations of a quad with different handles still get the LOD of the whole quad."""
        E = self.m.E
        ir = inst.row.ir
        handle = self._bindless_check(inst)
        b = inst.ops["b"]["reg"]
        lod = inst.mods.get("lod")
        a = inst.ops["a"]["reg"]
        if ir == "TLD.B":
            v2u = self.m.type("OpTypeVector", self.u32, 2)
            coord = self.op("OpBitcast", self.v2i, self.op("OpCompositeConstruct", v2u, self.reg(a),
                                                           self.reg(a + 1) if a != 255 else self.c(0)))
            lv = self.reg(b + 1) if lod == 3 else self.c(0)
            vec = self.bindless(handle, False, self.v4f, lambda img, si: self.op(
                "OpImageFetch", self.v4f, img, coord, E("ImageOperands", "Lod"), lv))
        else:
            coord = self.op("OpCompositeConstruct", self.v2f, *self._fregs(a, 2))
            if ir == "TLD4.B":
                comp = self.c(inst.mods["comp"])
                vec = self.bindless(handle, True, self.v4f, lambda img, si: self.op(
                    "OpImageGather", self.v4f, si, coord, comp))
            elif lod in (0, 2) and self.header.stage == "fragment":
                dx = self.op("OpDPdx", self.v2f, coord)
                dy = self.op("OpDPdy", self.v2f, coord)
                if lod == 2:       # bias: the LOD of gradients scaled by 2^bias is LOD + bias
                    scale = self.op("OpExtInst", self.f32, self.glsl, GLSL_EXP2, self._fregs(b + 1, 1)[0])
                    dx = self.op("OpVectorTimesScalar", self.v2f, dx, scale)
                    dy = self.op("OpVectorTimesScalar", self.v2f, dy, scale)
                vec = self.bindless(handle, True, self.v4f, lambda img, si: self.op(
                    "OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Grad"), dx, dy))
            elif lod in (0, 1, 3):
                lv = self._fregs(b + 1, 1)[0] if lod == 3 else self.m.const(self.f32, 0)
                vec = self.bindless(handle, True, self.v4f, lambda img, si: self.op(
                    "OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Lod"), lv))
            else:
                raise TranslateError(f"{inst.text()}: level-of-detail mode not translated here", offset=inst.addr)
        self._write_texel(inst, vec, self.f32)

    def txq_bindless(self, inst: Inst) -> None:
        """TXQ.B TEX_HEADER_DIMENSION: the handle in Ra, the level in Ra+1 (Ryujinx's Maxwell
        packing); width, height, depth 1 and the level count of the pool entry."""
        if inst.ops["query"]["sym"] != 0:
            raise TranslateError(f"{inst.text()}: only TEX_HEADER_DIMENSION is translated", offset=inst.addr)
        a = inst.ops["a"]["reg"]
        handle = self.reg(a)
        level = self.reg(a + 1) if a != 255 else self.c(0)
        v2u = self.m.type("OpTypeVector", self.u32, 2)
        v4u = self.m.type("OpTypeVector", self.u32, 4)

        def query(img: int, si) -> int:
            size = self.op("OpImageQuerySizeLod", v2u, img, level)
            w, h = (self.op("OpCompositeExtract", self.u32, size, i) for i in range(2))
            return self.op("OpCompositeConstruct", v4u, w, h, self.c(1), self.op("OpImageQueryLevels", self.u32, img))
        self._write_texel(inst, self.bindless(handle, False, v4u, query), self.u32)

    # --- textures --------------------------------------------------------------------------------
    def _fregs(self, r: int, n: int) -> list[int]:
        return [self.op("OpBitcast", self.f32, self.reg(r + i) if r != 255 else self.c(0)) for i in range(n)]

    def _write_texel(self, inst: Inst, vec: int, comp_ty: int) -> None:
        """Enabled components of the mask, in order: two into the first pair, two into the second."""
        ops = inst.ops
        mask = ops["mask"]["sym"]
        dst = [(ops["d"]["reg"], 0), (ops["d"]["reg"], 1), (ops["d2"]["reg"], 0), (ops["d2"]["reg"], 1)]
        k = 0
        for c in range(4):
            if not mask >> c & 1:
                continue
            r, i = dst[k]
            k += 1
            v = self.op("OpCompositeExtract", comp_ty, vec, c)
            if r != 255:
                self.set_reg(r + i, v if comp_ty == self.u32 else self.op("OpBitcast", self.u32, v))

    def _coord(self, regs: dict[str, int], n: int, arrayed: int, fetch: bool) -> int:
        """The coordinate vector from the source registers: float coordinates and the layer
        converted to float last (sampling), or integer texels (plus a TLD .AOFFI word's signed
        4-bit x, y, z at bits 0, 4, 8: ptxas's packing) and the layer (fetching)."""
        axes = ("x", "y", "z")[:n]
        if fetch:
            parts = [self.reg(regs[k]) if regs[k] != 255 else self.c(0) for k in axes]
            if "off" in regs:
                word = self.reg(regs["off"]) if regs["off"] != 255 else self.c(0)
                parts = [self.op("OpIAdd", self.u32, v, o) for v, o in zip(parts, self.offsets(word, 4, 4, n))]
            if arrayed:
                parts.append(self.reg(regs["layer"]) if regs["layer"] != 255 else self.c(0))
            if len(parts) == 1:
                return self.op("OpBitcast", self.i32, parts[0])
            vu = self.m.type("OpTypeVector", self.u32, len(parts))
            return self.op("OpBitcast", self.m.type("OpTypeVector", self.i32, len(parts)),
                           self.op("OpCompositeConstruct", vu, *parts))
        parts = [self._fregs(regs[k], 1)[0] for k in axes]
        if arrayed:
            layer = self.reg(regs["layer"]) if regs["layer"] != 255 else self.c(0)
            parts.append(self.op("OpConvertUToF", self.f32, layer))
        if len(parts) == 1:
            return parts[0]
        return self.op("OpCompositeConstruct", self.m.type("OpTypeVector", self.f32, len(parts)), *parts)

    @staticmethod
    def _roles(arrayed: int, n: int, lod: bool) -> list[str]:
        return (["layer"] if arrayed else []) + ["x", "y", "z"][:n] + (["lod"] if lod else [])

    def _sample_dref(self, inst: Inst, si: int, coord: int, lod: str, dref: int, lv: int | None) -> int:
        """A depth comparison against ``dref`` (the sampler's compare function), its result in
        R of the vec4 (G, B, A zero: never written, the caller allows only R)."""
        E = self.m.E
        if lod == "implicit" and self.header.stage == "fragment":
            r = self.op("OpImageSampleDrefImplicitLod", self.f32, si, coord, dref)
        else:
            r = self.op("OpImageSampleDrefExplicitLod", self.f32, si, coord, dref, E("ImageOperands", "Lod"),
                        lv if lv is not None else self.m.const(self.f32, 0))
        z = self.m.const(self.f32, 0)
        return self.op("OpCompositeConstruct", self.v4f, r, z, z, z)

    def tex(self, inst: Inst) -> None:
        E = self.m.E
        dim, arrayed, n = self.target(inst)
        lod, dc = inst.mods["lod"], inst.mods.get("DC", 0)
        if lod not in (0, 1, 2, 3):
            raise TranslateError(f"{inst.text()}: level-of-detail mode not translated here", offset=inst.addr)
        if dc and (dim in ("1D", "3D") or inst.ops["mask"]["sym"] != 0x1 or lod == 2):
            raise TranslateError(f"{inst.text()}: a depth comparison is translated on 2D (array) and cube (array) "
                                 f"textures, without .LB, with the mask 0x1 (its other components depend on the "
                                 f"texture header's swizzle)", offset=inst.addr)
        si = self.sampled(inst)
        regs = self.sources(inst, self._roles(arrayed, n, lod in (2, 3)) + ["dref"] * dc)
        coord = self._coord(regs, n, arrayed, False)
        level = self._fregs(regs["lod"], 1)[0] if lod in (2, 3) else None
        if dc:           # the reference after the level (ptxas's packing)
            vec = self._sample_dref(inst, si, coord, {0: "implicit", 1: "zero", 3: "level"}[lod],
                                    self._fregs(regs["dref"], 1)[0], level)
        elif lod == 0 and self.header.stage == "fragment":
            vec = self.op("OpImageSampleImplicitLod", self.v4f, si, coord)
        elif lod == 2 and self.header.stage == "fragment":
            vec = self.op("OpImageSampleImplicitLod", self.v4f, si, coord, E("ImageOperands", "Bias"), level)
        elif lod in (0, 1, 3):
            lv = level if lod == 3 else self.m.const(self.f32, 0)
            vec = self.op("OpImageSampleExplicitLod", self.v4f, si, coord, E("ImageOperands", "Lod"), lv)
        else:
            raise TranslateError(f"{inst.text()}: LOD bias outside a fragment program", offset=inst.addr)
        self._write_texel(inst, vec, self.f32)

    def tld(self, inst: Inst) -> None:
        E = self.m.E
        dim, arrayed, n = self.target(inst)
        si = self.sampled(inst)          # declares the image type on first use
        img = self.op("OpImage", self.img_t, si)
        ll = inst.mods["lod"] == 3
        regs = self.sources(inst, self._roles(arrayed, n, ll) + ["off"] * inst.mods.get("AOFFI", 0))
        lv = self.reg(regs["lod"]) if ll and regs["lod"] != 255 else self.c(0)
        vec = self.op("OpImageFetch", self.v4f, img, self._coord(regs, n, arrayed, True), E("ImageOperands", "Lod"), lv)
        self._write_texel(inst, vec, self.f32)

    def tld4(self, inst: Inst) -> None:
        """TLD4.R/G/B/A: one component of the four texels around the point, in the order
        Vulkan's OpImageGather gives them (the same as NVIDIA's); .AOFFI's offsets word (or
        .PTP's two words) and .DC's reference follow the coordinates in the source list
        (ptxas's packing; .PTP's two words where Mesa NAK puts them)."""
        dim, arrayed, n = self.target(inst)
        off, dc = inst.mods.get("off", 0), inst.mods.get("DC", 0)
        if off and dim == "Cube":
            raise TranslateError(f"{inst.text()}: offsets on a cube texture (Vulkan has no gather offsets for cubes)",
                                 offset=inst.addr)
        si = self.sampled(inst)
        offs = {1: ["off"], 2: ["ptp0", "ptp1"]}.get(off, [])
        regs = self.sources(inst, self._roles(arrayed, n, False) + offs + ["dref"] * dc)
        val = {k: (self.reg(regs[k]) if regs[k] != 255 else self.c(0)) for k in offs}
        dref = self._fregs(regs["dref"], 1)[0] if dc else None
        vec = self.gather(si, self._coord(regs, n, arrayed, False), inst.mods["comp"], val.get("off"), dref,
                          (val["ptp0"], val["ptp1"]) if off == 2 else None)
        self._write_texel(inst, vec, self.f32)

    def txq(self, inst: Inst) -> None:
        """TXQ TEX_HEADER_DIMENSION of the slot's view: width, height, depth and the level count
        in x, y, z, w (the components in TXQ_KNOWN; others refused)."""
        if inst.ops["query"]["sym"] != 0:
            raise TranslateError(f"{inst.text()}: only TEX_HEADER_DIMENSION is translated", offset=inst.addr)
        dim, arrayed, n = self.target(inst)
        mask = inst.ops["mask"]["sym"]
        if mask & ~TXQ_KNOWN[dim, arrayed]:
            raise TranslateError(f"{inst.text()}: TXQ components {mask & ~TXQ_KNOWN[dim, arrayed]:#x} of a "
                                 f"{'array ' if arrayed else ''}{dim} texture are not translated (their meaning on "
                                 f"NVIDIA is not established here)", offset=inst.addr)
        si = self.sampled(inst)          # declares the image type on first use
        img = self.op("OpImage", self.img_t, si)
        k = {"1D": 1, "2D": 2, "3D": 3, "Cube": 2}[dim]
        size_t = self.u32 if k + arrayed == 1 else self.m.type("OpTypeVector", self.u32, k + arrayed)
        size = self.op("OpImageQuerySizeLod", size_t, img, self.reg(inst.ops["a"]["reg"]))
        comps = [size] if k + arrayed == 1 else [self.op("OpCompositeExtract", self.u32, size, i) for i in range(k)]
        xyz = (comps + [self.c(1)] * 3)[:3]
        levels = self.op("OpImageQueryLevels", self.u32, img)
        v4u = self.m.type("OpTypeVector", self.u32, 4)
        vec = self.op("OpCompositeConstruct", v4u, *xyz, levels)
        self._write_texel(inst, vec, self.u32)

    # --- instructions ----------------------------------------------------------------------------
    def lower(self, inst: Inst) -> None:
        ir = inst.row.ir
        stages = inst.row.stages
        if stages and self.header.stage not in stages:
            raise TranslateError(f"{inst.text()}: {inst.mnemonic} does not exist in a {self.header.stage} program",
                                 offset=inst.addr)
        if ir == "ALD":
            self.ald(inst)
        elif ir == "AST":
            self.ast(inst)
        elif ir == "IPA":
            self.ipa(inst)
        elif ir == "TEX":
            self.tex(inst)
        elif ir == "TLD":
            self.tld(inst)
        elif ir == "TLD4":
            self.tld4(inst)
        elif ir == "TXQ":
            self.txq(inst)
        elif ir in ("TEX.B", "TLD.B", "TLD4.B"):
            self.tex_bindless(inst)
        elif ir == "TXQ.B":
            self.txq_bindless(inst)
        elif ir == "FFMA":
            self.require(inst, FTZ=0, FMZ=0, rnd=0, SAT=0)
            a, b, c = (self.op("OpBitcast", self.f32, self.src(inst, n, True)) for n in ("a", "b", "c"))
            r = self.op("OpExtInst", self.f32, self.glsl, GLSL_FMA, a, b, c)
            self.set_reg(inst.ops["d"]["reg"], self.op("OpBitcast", self.u32, r))
        else:
            super().lower(inst)

    # --- entry point and outputs -------------------------------------------------------------------
    def _epilogue(self) -> None:
        if self.header.stage != "fragment":
            return
        E = self.m.E
        reg = 0
        for t, mask in enumerate(self.header.targets):
            if not mask:
                continue
            comps = []
            for c in range(4):
                if mask >> c & 1:
                    comps.append(self.op("OpBitcast", self.f32, self.reg(reg)))
                    reg += 1
                else:
                    comps.append(self.m.const(self.f32, 0 if c < 3 else 0x3F800000))
            if t not in self.colour_vars:    # one variable per target: the epilogue runs at every EXIT
                self.colour_vars[t] = self._var("Output", self.v4f, [(E("Decoration", "Location"), t)])
            self.do("OpStore", self.colour_vars[t], self.op("OpCompositeConstruct", self.v4f, *comps))
        if self.header.writes_depth or self.header.writes_sample_mask:
            self._depth_outputs(reg)

    # the header's depth / sample-mask outputs (fragment header bits 609, 608), both architectures
    def _depth_outputs(self, reg: int) -> None:
        """The sample mask from ``reg``, the first register after the colours', FragDepth from the
        next; the mask's register is kept whether or not the header declares the mask (Ryujinx's
        reading of Maxwell's pixel outputs; Mesa NAK's fragment outputs, SM50 up: colours, then
        the mask or 0, then depth, "these always come together").  The mask becomes
        SampleMask[0]: bit n keeps the fragment's sample n (one sample per pixel: bit 0 keeps or
        drops the pixel)."""
        if self.header.writes_sample_mask:
            arr = self.m.type("OpTypeArray", self.i32, self.c(1))
            var = self.builtin("SampleMask", "Output", arr)
            ptr = self.m.type("OpTypePointer", self.m.E("StorageClass", "Output"), self.i32)
            self.do("OpStore", self.op("OpAccessChain", ptr, var, self.c(0)), self.op("OpBitcast", self.i32, self.reg(reg)))
        if self.header.writes_depth:
            var = self.builtin("FragDepth", "Output", self.f32)
            self.do("OpStore", var, self.op("OpBitcast", self.f32, self.reg(reg + 1)))

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


GLSL_FMA = 50
GLSL_EXP2 = 29


def source_split(n: int, ncoord: int) -> int:
    """How many of a bound texture instruction's ``n`` source values Ra's tuple holds (Rb's
    holds the rest), as ptxas packs them for sm_86 (tests/shader_svc/test_tex_short_dims.py and
    test_tld4_offsets.py read it back): up to four values by count — one in Ra, three or four
    2 + the rest —; more than four: the ``ncoord`` layer and coordinate values in Ra, the level,
    offsets and reference in Rb (a cube array's layer, x, y, z + level is 4 + 1, a 3D fetch's
    x, y, z + level, offsets 3 + 2: Mesa NAK's two source vectors).  Two values: read as Ra's
    pair (``sources`` admits only Rb = RZ or Ra+1, where that and 1 + 1 agree)."""
    return {1: 1, 2: 2, 3: 2, 4: 2}[n] if n <= 4 else ncoord


def translate_graphics(insts: list[Inst], header: Header) -> bytes:
    """SPIR-V binary of a vertex or fragment program (instructions after its header)."""
    return _GfxLower(insts, header).build()
