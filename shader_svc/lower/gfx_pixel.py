"""Fragment programs: the pixel's own values (``GfxPixel``, a mixin of
``graphics.GraphicsLowering``), both architectures.

PIXLD Rd (nvdisasm's modes: SM53 0 '', 1 .COVMASK, 2 .COVERED, 3 .OFFSET, 4 .CENTROID_OFFSET,
5 .MY_INDEX; SM86 0 '', 1 .COVMASK, 2 .CENTROID_OFFSET, 3 .MY_INDEX, 4 .INNER_COVERAGE) reads a
value of the fragment's pixel.  Translated: .COVMASK, the pixel's coverage mask, bit n set when
sample n is covered (nouveau's codegen and Mesa NAK read gl_SampleMaskIn with PIXLD.COVMASK):
Vulkan's SampleMask input, element 0 (one sample a pixel: 1).  The other modes (sample counts, offsets, the
sample's index, whose layouts no public source here gives), a predicate destination other than
PT, and SM53's address operand other than [RZ] are refused by name."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.lowering import Lowering

PIXLD_COVMASK = 1  # the mode value of .COVMASK, both architectures (nvdisasm)


class GfxPixel(Lowering):
    """Mixin of ``graphics.GraphicsLowering``: PIXLD (module docstring)."""

    def pixld_ir(self, inst: Inst, mode: int, dst: int, pred_dst: int) -> None:
        """PIXLD's value into ``dst`` (255: dropped); ``pred_dst`` its predicate destination
        (7: PT)."""
        if self.header.stage != "fragment":
            raise TranslateError(f"{inst.text()}: PIXLD outside a fragment program", offset=inst.addr)
        if mode != PIXLD_COVMASK:
            raise TranslateError(
                f"{inst.text()}: only PIXLD.COVMASK (the coverage mask) is translated; this mode's value is not established",
                offset=inst.addr,
            )
        if pred_dst != 7:
            raise TranslateError(f"{inst.text()}: PIXLD's predicate destination is not established", offset=inst.addr)
        b = Block()
        v = b.emit("LoadSampleMaskIn", var=self.sample_mask_in())
        if dst != 255:
            b.set_reg(dst, v)
        ir_spirv.emit(self, b)

    def sample_mask_in(self) -> int:
        """The SampleMask input (array of one i32), declared on first use; not Flat (a built-in:
        glslang's gl_SampleMaskIn has no interpolation decoration)."""
        if "SampleMaskIn" not in self.builtin_vars:
            E = self.m.E
            arr = self.m.type("OpTypeArray", self.i32, self.c(1))
            self.builtin_vars["SampleMaskIn"] = self._var(
                "Input", arr, [(E("Decoration", "BuiltIn"), E("BuiltIn", "SampleMask"))]
            )
        return self.builtin_vars["SampleMaskIn"]

    def load_sample_mask_in(self, var: int) -> int:
        """``LoadSampleMaskIn``."""
        ptr = self.m.type("OpTypePointer", self.m.E("StorageClass", "Input"), self.i32)
        return self.op("OpBitcast", self.u32, self.op("OpLoad", self.i32, self.op("OpAccessChain", ptr, var, self.c(0))))
