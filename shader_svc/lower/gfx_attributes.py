"""Vertex and fragment programs: attributes and varyings (``GfxAttributes``, a mixin of
``graphics.GraphicsLowering``).

- vertex attribute N (a[0x80 + 16N + 4c]) -> ``Location N`` vec4 float input; varying N ->
  ``Location N`` vec4 float output/input, the fragment input's interpolation from the
  instruction's mode and the header's input map (``sph.Header.interpolation``);
- a[0x70..0x7c]: Position (vertex output), FragCoord (fragment input); a[0x2f8]/a[0x2fc]:
  InstanceIndex/VertexIndex (the attribute addresses as nouveau's and Ryujinx's documentation of
  the Maxwell attribute space give them);
- every word an instruction reads or writes must be declared by the shader program header's
  input/output maps, or the instruction is refused by name.

Each ISA's graphics lowering reads ALD / AST / IPA and calls ``attr_ir`` / ``vertex_input_ir`` /
``fragment_input_ref``; the ``LoadInputF32`` / ``LoadInputIndex`` / ``StoreOutputF32`` rows of the
IR (ir/ops.py's shader-ir-gfx block) are lowered here."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.gfx_geometry import LAYER, VIEWPORT_INDEX
from shader_svc.lower.lowering import Lowering
from shader_svc.sph import GENERIC, POSITION

VERTEX_ID, INSTANCE_ID = 0x2FC, 0x2F8


class GfxAttributes(Lowering):
    """Mixin of ``graphics.GraphicsLowering``: attribute and varying words (module docstring)."""

    # --- attribute words ----------------------------------------------------------------------------
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
            elif a + 4 * i in (LAYER, VIEWPORT_INDEX):  # gfx-layers: lower/gfx_geometry.py
                self.system_output_ir(b, a + 4 * i, b.get_reg(reg + i) if reg != 255 else b.const_u32(0), inst)
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
