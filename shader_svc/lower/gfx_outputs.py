"""Vertex and fragment programs: the fragment outputs and the entry point (``GfxOutputs``, a
mixin of ``graphics.GraphicsLowering``).

- colour target t -> ``Location t`` vec4 output, its components taken from registers at EXIT
  in the order the header's output map lists them (R0 upwards, enabled components only);
  the sample mask and depth from the registers after them (Ryujinx's reading of Maxwell's pixel
  outputs, Mesa NAK's fragment outputs);
- the entry point with the interface, the fragment's execution modes, the inputs'
  interpolation decorations;
- the ``StoreColour`` / ``StoreSampleMask`` / ``StoreFragDepth`` / ``FClampDevice01`` rows of the
  IR (ir/ops.py's shader-ir-gfx block)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.lower.gfx_textures import GLSL_NCLAMP
from shader_svc.lower.lowering import Lowering


class GfxOutputs(Lowering):
    """Mixin of ``graphics.GraphicsLowering``: fragment outputs and the entry point (module
    docstring)."""

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
        if self.header.stage == "geometry":  # gfx-geom: lower/gfx_geometry.py
            self.geometry_entry(main)
            return
        model = "Vertex" if self.header.stage == "vertex" else "Fragment"
        m.emit("entry", "OpEntryPoint", E("ExecutionModel", model), main, "main", *self.interface)
        if model == "Fragment":
            m.emit("execmode", "OpExecutionMode", main, E("ExecutionMode", "OriginUpperLeft"))
            if self.header.writes_depth:
                m.emit("execmode", "OpExecutionMode", main, E("ExecutionMode", "DepthReplacing"))
