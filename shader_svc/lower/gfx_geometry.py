"""Geometry programs (``GfxGeometry``, a mixin of ``graphics.GraphicsLowering``): the reads of
the input primitive's vertices, the emitted vertices and strips, the execution modes.

How Maxwell and Ampere run a geometry program (public facts: Mesa NAK's NIR lowering and
encoders, nouveau's codegen, Ryujinx's shader translator):

- an input vertex's attribute is read with ``ALD Rd, a[addr], Rv``, where ``Rv`` is the result
  of ``ISBERD Rv, [Ri]`` and ``Ri`` = (byte 0 of ``SR_INVOCATION_INFO``) * (byte 2) + vertex
  index (NAK's ``nak_nir_isberd``).  Byte 2 is the number of vertices per input primitive,
  byte 0 the primitive's slot, which the hardware leaves to the driver: Ryujinx reads
  ``SR_INVOCATION_INFO`` as vertices << 16 and ISBERD as passing its address through, because
  its result only ever feeds ALD's vertex operand.  The translation does the same: one SPIR-V
  invocation is one primitive, ``SR_INVOCATION_INFO`` = N << 16, ISBERD Rd = Ra, and ALD's
  vertex register indexes the per-vertex input arrays (``vec4 in[N]``, Position an array too),
  clamped to the last vertex (an index out of the primitive has no defined value: the clamp
  keeps the access in bounds); a[0x60] is the primitive's number (``PrimitiveId``: Ryujinx's
  attribute map, one value per primitive, so the vertex register is not read);
- ``OUT.EMIT Rd, Ra, Rb``: the outputs written so far (``AST``) become a vertex of stream
  ``Rb``; ``Ra`` is the output vertex handle and ``Rd`` the next one (NAK, nouveau: opaque
  values only fed back into the next OUT and AST's vertex operand).  ``OUT.CUT`` ends the strip,
  ``OUT.EMIT_THEN_CUT`` does both.  SPIR-V writes outputs of the current vertex only, so AST's
  vertex register is not read and ``Rd`` = ``Ra`` (the handle is kept as it is); stream 0 only
  (Vulkan's geometry streams need transform feedback: other streams are refused);
- ``SR_INVOCATION_ID``: the invocation of the primitive (``InvocationId``), with the header's
  threads per input primitive as ``Invocations``;
- ``AST a[0x64]`` (the render target array index; Ryujinx's attribute map, NAK's
  ``NAK_ATTR_RT_ARRAY_INDEX``) in a geometry program whose header declares it: the value is kept
  in a Private variable (0 until written) and at each ``OUT.EMIT`` copied to the ``Layer``
  output, so a value written once holds for the vertices after it (SPIR-V leaves outputs
  undefined after OpEmitVertex).  A Layer at or beyond the framebuffer's layer count is what
  Vulkan leaves undefined ("the framebuffer values for all layers are undefined"): such a vertex
  is not emitted (the strip goes on without it), so only primitives whose every vertex names an
  existing layer are drawn.  The layer count is the specialisation constant ``SpecId``
  ``LAYER_COUNT_SPEC_ID`` (default 1), which the GPU process sets to the bound target's layers
  (gpu_host/pipelines.py).  A vertex program's a[0x64] is refused by name (it needs Vulkan's
  shaderOutputLayer, which the GPU process does not enable) (gfx-layers, issue 31/32);
- ``AST a[0x68]`` (the viewport index; Ryujinx's attribute map, NAK's NAK_ATTR_VIEWPORT_INDEX)
  in a geometry program whose header declares it (shader-tex): as Layer, a Private variable
  copied to the ``ViewportIndex`` output at each ``OUT.EMIT`` (capability MultiViewport); a
  vertex whose index is at or beyond the viewport count (``SpecId`` ``VIEWPORT_COUNT_SPEC_ID``,
  default 1: the number of viewports the GPU process sets, gpu_host/pipelines.py) is not
  emitted, Vulkan leaving such an index undefined.  A vertex program's a[0x68] is refused by
  name (shaderOutputViewportIndex is not enabled);
- execution modes from the shader program header (sph.py): output topology, max output
  vertices, invocations; the input primitive from the request's stage.  Vulkan limits the
  output components of all emitted vertices (maxGeometryTotalOutputComponents, at least 1024):
  a program beyond it is refused by name.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.lowering import Lowering
from shader_svc.sph import GENERIC, IN_PRIMS, POSITION

SR_INVOCATION_ID = 0x11  # nvdisasm's names for S2R's operand (sm_86 and sm_53)
SR_INVOCATION_INFO = 0x1D
GEOMETRY_SREGS = {SR_INVOCATION_ID: "SR_INVOCATION_ID", SR_INVOCATION_INFO: "SR_INVOCATION_INFO"}
OUT_KINDS = {1: "EMIT", 2: "CUT", 3: "EMIT_THEN_CUT"}
MAX_TOTAL_OUTPUT_COMPONENTS = 1024  # Vulkan's minimum maxGeometryTotalOutputComponents
GLSL_UMIN = 38  # GLSL.std.450 UMin
PRIMITIVE_ID = 0x60  # attribute address of the primitive id (Ryujinx's AttributeConsts)
LAYER, VIEWPORT_INDEX = 0x64, 0x68  # the render target array index and viewport index outputs
# gfx-layers: the SpecId of the framebuffer's layer count in a geometry module that writes Layer
# (gpu_host/pipelines.py LAYER_COUNT_SPEC_ID must equal it: tests/gpu_host/test_gpu_layered.py)
LAYER_COUNT_SPEC_ID = 0x4C41
# shader-tex: the SpecId of the number of viewports the GPU process sets for a geometry module that
# writes ViewportIndex (gpu_host/objects.py VIEWPORT_COUNT_SPEC_ID must equal it)
VIEWPORT_COUNT_SPEC_ID = 0x5650


class GfxGeometry(Lowering):
    """Mixin of ``graphics.GraphicsLowering``: the geometry stage (module docstring)."""

    @property
    def in_vertices(self) -> int:
        return IN_PRIMS[self.header.in_prim][1]

    def geometry_only(self, inst: Inst, what: str) -> None:
        if self.header.stage != "geometry":
            raise TranslateError(f"{inst.text()}: {what} exists in geometry programs only", offset=inst.addr)

    # --- instructions ------------------------------------------------------------------------------
    def geom_attr_ir(self, inst: Inst, a: int, n: int, reg: int, vtx: int) -> None:
        """ALD in a geometry program: ``n`` words from a[a] of the input vertex whose ISBERD
        result is in register ``vtx`` (RZ: vertex 0) into reg, reg+1... (RZ: dropped)."""
        b = Block()
        v = b.get_reg(vtx) if vtx != 255 else b.const_u32(0)
        for i in range(n):
            if a + 4 * i == PRIMITIVE_ID:
                self._need(self.header.inputs, PRIMITIVE_ID, "reads", inst)
                val = b.emit("LoadInputIndex", var=self.builtin("PrimitiveId", "Input", self.i32))
                if reg != 255:
                    b.set_reg(reg + i, val)
                continue
            var, comp = self.geom_input_ref(a + 4 * i, inst)
            val = b.op("BitcastU32", b.emit("LoadVertexInputF32", v, var=var, comp=comp, count=self.in_vertices))
            if reg != 255:
                b.set_reg(reg + i, val)
        ir_spirv.emit(self, b)

    def isberd_ir(self, inst: Inst, dst: int, src: int) -> None:
        """ISBERD Rd, [Ra] (plain form): Rd = Ra (module docstring)."""
        self.geometry_only(inst, "ISBERD")
        b = Block()
        if dst != 255:
            b.set_reg(dst, b.get_reg(src) if src != 255 else b.const_u32(0))
        ir_spirv.emit(self, b)

    def out_ir(self, inst: Inst, kind: int, dst: int, handle: int, stream_zero: bool) -> None:
        """OUT.EMIT / .CUT / .EMIT_THEN_CUT (``kind`` 1/2/3) of stream 0; Rd = the handle."""
        self.geometry_only(inst, "OUT")
        if kind not in OUT_KINDS:
            raise TranslateError(f"{inst.text()}: OUT of kind {kind} is not translated", offset=inst.addr)
        if not stream_zero:
            raise TranslateError(
                f"{inst.text()}: only stream 0 is translated (other vertex streams need transform feedback)", offset=inst.addr
            )
        b = Block()
        if kind & 1:
            b.emit("EmitVertex")
        if kind & 2:
            b.emit("EndPrimitive")
        if dst != 255:
            b.set_reg(dst, b.get_reg(handle) if handle != 255 else b.const_u32(0))
        ir_spirv.emit(self, b)

    def geometry_sreg_ir(self, inst: Inst, sr: int, dst: int) -> None:
        """S2R of SR_INVOCATION_INFO (vertices per primitive << 16, primitive slot 0) or
        SR_INVOCATION_ID in a geometry program."""
        self.geometry_only(inst, GEOMETRY_SREGS.get(sr, f"special register {sr:#x}"))
        b = Block()
        if sr == SR_INVOCATION_INFO:
            v = b.const_u32(self.in_vertices << 16)
        elif sr == SR_INVOCATION_ID:
            v = b.emit("LoadInputIndex", var=self.builtin("InvocationId", "Input", self.i32))
        else:
            raise TranslateError(f"{inst.text()}: special register not translated in geometry programs", offset=inst.addr)
        if dst != 255:
            b.set_reg(dst, v)
        ir_spirv.emit(self, b)

    # --- the render target layer (gfx-layers) -------------------------------------------------------
    def system_output_ir(self, b: Block, a: int, val, inst: Inst) -> None:
        """AST of a[0x64] (Layer) in a geometry program: ``StoreLayer``; a[0x68] and a vertex
        program's a[0x64] refused by name (module docstring)."""
        name = "ViewportIndex" if a == VIEWPORT_INDEX else "Layer"
        if self.header.stage != "geometry":
            raise TranslateError(
                f"{inst.text()}: a[{a:#x}] ({name}) is translated in geometry programs only (a {self.header.stage} "
                f"program's {name} needs Vulkan's shaderOutput{'ViewportIndex' if a == VIEWPORT_INDEX else 'Layer'}, "
                "which the GPU process does not enable)",
                offset=inst.addr,
            )
        self._need(self.header.outputs, a, "writes", inst)
        b.emit("StoreViewport" if a == VIEWPORT_INDEX else "StoreLayer", val)

    @property
    def writes_layer(self) -> bool:
        return self.header.stage == "geometry" and LAYER in self.header.outputs

    def _shadowed_output(self, attr: str, builtin: str, spec_id: int, cap: str | None = None) -> tuple[int, int, int]:
        """(a Private u32 holding the last value written, the ``builtin`` output, a count
        specialisation constant with ``spec_id``, default 1), declared on first use and kept in
        ``attr``: the value is copied to the output at each emitted vertex."""
        st = getattr(self, attr, None)
        if st is None:
            m, E = self.m, self.m.E
            if cap:
                m.emit("cap", "OpCapability", E("Capability", cap))
            priv = E("StorageClass", "Private")
            shadow = m.id()
            m.emit("types", "OpVariable", m.type("OpTypePointer", priv, self.u32), shadow, priv, self.c(0))
            self.interface.append(shadow)
            count = m.id()
            m.emit("types", "OpSpecConstant", self.u32, count, 1)
            m.emit("annot", "OpDecorate", count, E("Decoration", "SpecId"), spec_id)
            st = (shadow, self.builtin(builtin, "Output", self.i32), count)
            setattr(self, attr, st)
        return st

    def _layer_state(self) -> tuple[int, int, int]:
        """(the Private u32 holding the last Layer written, the ``Layer`` output, the layer
        count specialisation constant)."""
        return self._shadowed_output("_layer", "Layer", LAYER_COUNT_SPEC_ID)

    def store_layer(self, val: int) -> None:
        """``StoreLayer``."""
        self.do("OpStore", self._layer_state()[0], val)

    # --- the viewport index (shader-tex) ------------------------------------------------------------
    @property
    def writes_viewport(self) -> bool:
        return self.header.stage == "geometry" and VIEWPORT_INDEX in self.header.outputs

    def _viewport_state(self) -> tuple[int, int, int]:
        """(the Private u32 holding the last ViewportIndex written, the ``ViewportIndex`` output,
        the viewport count specialisation constant), with the MultiViewport capability."""
        return self._shadowed_output("_viewport", "ViewportIndex", VIEWPORT_COUNT_SPEC_ID, "MultiViewport")

    def store_viewport(self, val: int) -> None:
        """``StoreViewport``."""
        self.do("OpStore", self._viewport_state()[0], val)

    # --- the per-vertex inputs ----------------------------------------------------------------------
    def geom_input_ref(self, a: int, inst: Inst) -> tuple[int, int]:
        """The per-vertex input array and component of input word a[a]: Position (0x70..0x7c)
        or a generic attribute, each declared by the header."""
        if POSITION <= a < POSITION + 16:
            key = "position"
        elif GENERIC <= a < GENERIC + 0x200:
            key = (a - GENERIC) // 16
        else:
            raise TranslateError(f"{inst.text()}: geometry input a[{a:#x}] not translated yet", offset=inst.addr)
        self._need(self.header.inputs, a, "reads", inst)
        if key not in self.vertex_arrays:
            E = self.m.E
            arr = self.m.type("OpTypeArray", self.v4f, self.c(self.in_vertices))
            deco = (
                [(E("Decoration", "BuiltIn"), E("BuiltIn", "Position"))]
                if key == "position"
                else [(E("Decoration", "Location"), key)]
            )
            self.vertex_arrays[key] = self._var("Input", arr, deco)
        return self.vertex_arrays[key], a % 16 // 4

    # --- the rows of the IR (ir/ops.py's gfx-geom block) ----------------------------------------------
    def load_vertex_input(self, var: int, comp: int, count: int, vertex: int) -> int:
        """``LoadVertexInputF32``."""
        idx = self.op("OpExtInst", self.u32, self.glsl, GLSL_UMIN, vertex, self.c(count - 1))
        ptr = self.m.type("OpTypePointer", self.m.E("StorageClass", "Input"), self.f32)
        return self.op("OpLoad", self.f32, self.op("OpAccessChain", ptr, var, idx, self.c(comp)))

    def emit_vertex(self) -> None:
        """``EmitVertex``; where the program writes Layer (ViewportIndex), the vertex gets the
        last value written and is emitted only if it is below the layer (viewport) count (module
        docstring)."""
        kept = [st() for w, st in ((self.writes_layer, self._layer_state), (self.writes_viewport, self._viewport_state)) if w]
        if not kept:
            self.do("OpEmitVertex")
            return
        ok = None
        for shadow, out, count in kept:
            v = self.op("OpLoad", self.u32, shadow)
            self.do("OpStore", out, self.op("OpBitcast", self.i32, v))
            below = self.op("OpULessThan", self.bool, v, count)
            ok = below if ok is None else self.op("OpLogicalAnd", self.bool, ok, below)
        # written as SPIR-V (rows are lowered after the IR's blocks are made): the block goes on
        # in ``after``, which takes its merge and terminator (a block with operations never heads
        # a loop here: loop headers are empty, lower/control.py)
        then, after = self.label(), self.label()
        self.do("OpSelectionMerge", after, 0)
        self.do("OpBranchConditional", ok, then, after)
        self.put_label(then)
        self.do("OpEmitVertex")
        self.do("OpBranch", after)
        self.put_label(after)

    def end_primitive(self) -> None:
        """``EndPrimitive``."""
        self.do("OpEndPrimitive")

    # --- the entry point --------------------------------------------------------------------------
    def geometry_entry(self, main: int) -> None:
        """OpEntryPoint Geometry with the header's execution modes (module docstring)."""
        m, E, h = self.m, self.m.E, self.header
        comps = 4 * (len(self.outputs) + ("Position" in self.builtin_vars)) + ("Layer" in self.builtin_vars)
        comps += "ViewportIndex" in self.builtin_vars
        if comps * h.max_vertices > MAX_TOTAL_OUTPUT_COMPONENTS:
            raise TranslateError(
                f"geometry program writes {comps} output components for each of up to {h.max_vertices} "
                f"vertices: {comps * h.max_vertices} is more than Vulkan's guaranteed {MAX_TOTAL_OUTPUT_COMPONENTS}",
                field="code",
                offset=16,
            )
        m.emit("cap", "OpCapability", E("Capability", "Geometry"))
        m.emit("entry", "OpEntryPoint", E("ExecutionModel", "Geometry"), main, "main", *self.interface)
        for mode, *args in (
            (IN_PRIMS[h.in_prim][0],),
            ("Invocations", h.invocations),
            (h.out_topology,),
            ("OutputVertices", h.max_vertices),
        ):
            m.emit("execmode", "OpExecutionMode", main, E("ExecutionMode", mode), *args)
