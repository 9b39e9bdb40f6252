"""Vertex programs: attributes addressed by a register (``GfxIndexed``, a mixin of
``graphics.GraphicsLowering``): AL2P and ALD.PHYS / AST.PHYS.

AL2P Rd, Ra, imm ("attribute logical to physical") gives the address ALD.PHYS / AST.PHYS
a[Rx] read and write through, of the attribute word at logical byte address Ra + imm (ALD/AST's
a[...] space: 0x70 Position, 0x80 + 16N generic attribute N); nouveau's codegen lowers an
indirect attribute access to AL2P and then ALD/AST with the register address, and nvdisasm
prints that form ALD.PHYS / AST.PHYS (a register, no offset).  The physical layout is the
hardware's own and only these instructions see it, so the translation keeps the logical
address as the physical one (as Ryujinx's documentation of AL2P reads it: the sum):
Rd = Ra + imm.  ALD.PHYS reads, word k of its vector, the declared input word whose address is
Rx + 4k (a select over the shader program header's input words: a word it does not declare
reads 0); AST.PHYS writes the declared output word at Rx + 4k, every other output keeping its
value (each declared output is rewritten with itself where the address differs: an output not
yet written stays undefined, as on the hardware)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.lowering import Lowering
from shader_svc.sph import GENERIC


class GfxIndexed(Lowering):
    """Mixin of ``graphics.GraphicsLowering``: AL2P and the register-addressed attribute words
    (module docstring)."""

    def _vertex_only(self, inst: Inst) -> None:
        if self.header.stage != "vertex":
            raise TranslateError(f"{inst.text()}: attribute addresses are translated in vertex programs only", offset=inst.addr)

    def al2p_ir(self, inst: Inst, dst: int, ra: int, imm: int) -> None:
        """AL2P: ``dst`` (255: dropped) = register ``ra`` + ``imm`` (module docstring)."""
        self._vertex_only(inst)
        b = Block()
        v = b.op("IAdd32", b.get_reg(ra) if ra != 255 else b.const_u32(0), b.const_u32(imm & 0xFFFFFFFF))
        if dst != 255:
            b.set_reg(dst, v)
        ir_spirv.emit(self, b)

    def attr_phys_ir(self, inst: Inst, addr_reg: int, n: int, reg: int, load: bool) -> None:
        """ALD.PHYS (``load``: ``n`` words into reg, reg+1... ; RZ: dropped) or AST.PHYS (from
        them; RZ: zeros) at the address in ``addr_reg`` (module docstring)."""
        self._vertex_only(inst)
        b = Block()
        base = b.get_reg(addr_reg)
        addrs = [b.op("IAdd32", base, b.const_u32(4 * k)) if k else base for k in range(n)]
        if load:
            words = sorted(a for a in self.header.inputs if GENERIC <= a < GENERIC + 0x200)
            vals = [(a, self.vertex_input_ir(b, a, inst)) for a in words]
            out = []
            for at in addrs:
                v = b.const_u32(0)
                for a, val in vals:
                    v = b.op("Select32", b.op("IEq32", at, b.const_u32(a)), val, v)
                out.append(v)
            if reg != 255:
                for k, v in enumerate(out):
                    b.set_reg(reg + k, v)
        else:
            srcs = [b.get_reg(reg + k) if reg != 255 else b.const_u32(0) for k in range(n)]
            for a in sorted(self.header.outputs):
                var, comp = self.vertex_output_ref(a, inst)
                v = b.op("BitcastU32", b.emit("LoadOutputF32", var=var, comp=comp))
                for at, src in zip(addrs, srcs):
                    v = b.op("Select32", b.op("IEq32", at, b.const_u32(a)), src, v)
                b.emit("StoreOutputF32", b.op("BitcastF32", v), var=var, comp=comp)
        ir_spirv.emit(self, b)

    def load_output(self, var: int, comp: int) -> int:
        """``LoadOutputF32``."""
        return self.op("OpLoad", self.f32, self._attr_ptr(var, comp, "Output"))
