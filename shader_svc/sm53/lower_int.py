"""SM53 integer instructions: ``Int53``, the integer mixin of ``to_spirv.Compute53``, composed of
one mixin per topic, each in a module of its own with its contract and sources:
lower_int_arith (IADD/IADD3/ISCADD with the carry chain, XMAD, IMUL/IMAD, LEA), lower_int_bits
(shifts, SHF, LOP/LOP3, BFE/BFI, PRMT, POPC, FLO), lower_int_cmp (ISETP incl. .X, ICMP, PSETP,
PSET, IMNMX, SEL), lower_int_conv (I2I, VABSDIFF4), lower_video (the scalar video ops) and lower_int_cc (the condition code as
a value: its tests, CSETP/CSET, P2R/R2P CC).  Here: MOV, S2R/CS2R (special registers, public
numbering in isa/operands.SREG_BUILTINS), NOP, and ``INT_RULES`` (the later integer rows merged
into ``Compute53.RULES``)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.operands import SREG_BUILTINS
from shader_svc.lower.quad_tex import mask_lanes_ir
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower_int_arith import IntArith53
from shader_svc.sm53.lower_int_bits import IntBits53
from shader_svc.sm53.lower_int_cmp import IntCmp53
from shader_svc.sm53.lower_int_conv import IntConv53
from shader_svc.sm53.lower_int_cc import CC_FLAGS, CC_TESTS_IR, IntCC53  # noqa: F401 (CC_*: their home was here)
from shader_svc.sm53.lower_video import VIDEO_RULES, Video53


# issue 31's later integer rows (shader-alu): lowering key -> handler, merged into
# ``to_spirv.Compute53.RULES``
INT_RULES = {
    "XMAD.RC": "op_xmad",
    "CSETP": "op_csetp",
    "CSET": "op_cset",
    "P2R": "op_p2r",
    "R2P": "op_r2p",
    "ISCADD32I": "op_iscadd",
    # shader-u
    "IMAD32I": "op_imad32i",
    "PSET": "op_pset",
    "CS2R": "op_cs2r",
    "VABSDIFF4": "op_vabsdiff4",
    # shader-video: every scalar video op (VABSDIFF/VMNMX move to its lowering)
    **VIDEO_RULES,
}


class Int53(IntArith53, IntBits53, IntCmp53, IntConv53, IntCC53, Video53):
    """Mixin of ``to_spirv.Compute53``: the integer handlers and their helpers."""

    def lowered(self, ir: str) -> bool:
        return ir in INT_RULES or super().lowered(ir)

    # --- instructions (to_spirv.Compute53.RULES) ---------------------------------------------
    def op_nop(self, inst: Inst) -> None:
        """NOP: nothing to do."""

    def op_mov(self, inst: Inst) -> None:
        """MOV / MOV32I d, b (, mask): the quad-lane mask as SM86's (shader-ndv, ``mask_lanes_ir``)."""
        b = Block()
        self.put_ir(b, inst, mask_lanes_ir(self, b, inst, self.val_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_s2r(self, inst: Inst) -> None:
        sr = inst.ops["sr"]["sr"]
        b = Block()
        if sr in (0x00, 0x39):  # lane id / lanes below this one, in the emulated warp
            lane = b.op("IAnd32", b.emit("LocalIndex"), b.const_u32(31))
            if sr == 0x39:
                lane = b.op("ISub32", b.op("IShl32", b.const_u32(1), lane), b.const_u32(1))
            self.put_ir(b, inst, lane)
        elif sr == 0x37:
            # the local window's low end: 0 (local addresses wrap in the per-invocation
            # array), so -G code's stack check (R1 >= SR_LMEMHIOFF, unsigned) passes
            self.put_ir(b, inst, b.const_u32(0))
        elif sr in SREG_BUILTINS:
            self.put_ir(b, inst, b.emit("BuiltinU32", builtin=SREG_BUILTINS[sr][0], comp=SREG_BUILTINS[sr][1]))
        else:
            self.bad(inst, "special register not translated yet")
        ir_spirv.emit(self, b)

    def op_cs2r(self, inst: Inst) -> None:
        """CS2R: S2R's read of the same special registers (nvdisasm 11.8 decodes the same set:
        the lane id, thread and block ids, SR_LMEMHIOFF, SR_LTMASK), so S2R's lowering."""
        self.op_s2r(inst)
