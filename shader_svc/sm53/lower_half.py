"""SM53 half precision (issue 31): HADD2, HMUL2, HFMA2 (f16x2 results or .F32) and HSETP2, in
IR; what each lane means is ``lower/half_ir.py``'s, shared with SM86.

HSETP2 follows PTX's setp.f16x2: P = (lane 0's comparison) BOP pc, Q = (lane 1's) BOP pc.
Refused: an operand's .F32 swizzle, .FMZ, HSETP2.H_AND.  The .MRG_H0/.MRG_H1 result modes
(shader-u, ``lower_float.merge_half_ir``) write one half of the destination.
The immediate forms (a pair of halves as B) and the *2_32I rows: ``op_half2_imm``.
The constant-bank forms read the c[][] operand (HFMA2's addend C or multiplier B, HADD2's and
HMUL2's B) as one f32 used in both lanes (no swizzle field; ptxas's literal pool holds
__float2half2_rn(0.25f) as 0x3E800000 and __float2half2_rn(0.1f) as 0x3DCCC000 for HFMA2, and
yuzu's HFMA2_rc/_cr, HADD2_cbuf and HMUL2_cbuf read it with their F32 swizzle): the exact sum /
value is rounded once to half; .FTZ flushes that operand's f32 denormals.  HADD2's B and HFMA2's
addend C are done in f32 alone (``half_ir.arith2_ir``, shader-video), as are the register and
immediate forms (shader-halfgfx), and an f32 multiplier (HMUL2's or HFMA2's B: a split exact
product; with .F32, FFMA's single rounding by ``half_ir.f32_fma_ir``, shader-video2), so every
form translates in graphics stages.  HFMA2.F32 of halves is the exact product plus C rounded once.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower import half_ir
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53
from shader_svc.sm53.lower_float import merge_half_ir

HALF_RULES = {
    "HADD2": "op_half2",
    "HMUL2": "op_half2",
    "HFMA2": "op_half2",
    "HSETP2": "op_hsetp2",
    # a pair of half immediates (shader-gaps2): the immediate forms and the *2_32I rows
    "HADD2.I": "op_half2_imm",
    "HMUL2.I": "op_half2_imm",
    "HFMA2.I": "op_half2_imm",
    "HADD2_32I": "op_half2_imm",
    "HMUL2_32I": "op_half2_imm",
    "HFMA2_32I": "op_half2_imm",
}


class Half53(Lower53):
    """Mixin of ``to_spirv.Compute53``: the half-precision handlers (module docstring)."""

    def lowered(self, ir: str) -> bool:
        return ir in HALF_RULES or super().lowered(ir)

    def halves_ir(self, b: Block, inst: Inst, name: str, ftz: bool) -> tuple[Value, Value]:
        """Operand ``name`` as the two f32 values result lanes 0 and 1 read."""
        v = inst.ops[name]
        if "bank" in v:  # HFMA2's constant operand: an f32 in both lanes (module docstring)
            x = b.op("BitcastF32", self.raw_ir(b, inst, name))
            x = b.op("FAbs32", x) if v["abs"] else x
            x = b.op("FNeg32", x) if v["neg"] else x
            x = b.op("FFlushDenorm32", x) if ftz else x
            return x, x
        swz = v.get("swz", 0)
        if swz not in half_ir.SWZ_LANES:
            self.bad(inst, ".F32 operand of a half instruction not translated")
        return half_ir.halves_ir(b, self.raw_ir(b, inst, name), swz, v["neg"], v.get("abs", False), ftz)

    def op_half2(self, inst: Inst) -> None:
        self.need(inst, FMZ=0)
        ftz, ir = bool(inst.mods["FTZ"]), inst.row.ir
        b = Block()
        names = ("a", "b", "c")[: 3 if ir == "HFMA2" else 2]
        srcs = [self.halves_ir(b, inst, n, ftz) for n in names]
        f32_at = next((k for k, n in enumerate(names) if "bank" in inst.ops[n]), None)  # module docstring
        r = half_ir.arith2_ir(b, ir, srcs, inst.mods["mode"] == 1, ftz, bool(inst.mods["SAT"]), f32_operand=f32_at)
        self.put_ir(b, inst, merge_half_ir(b, inst, r))
        ir_spirv.emit(self, b)

    def op_hsetp2(self, inst: Inst) -> None:
        self.need(inst, H_AND=0)
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pc = inst.ops["pc"]
        c = b.get_pred(pc["pred"], pc["not"])
        half_ir.setp2_ir(b, x, y, c, inst.mods["bop"], inst.mods["cmp"], (inst.ops["p"]["pred"], inst.ops["q"]["pred"]))
        ir_spirv.emit(self, b)

    def op_half2_imm(self, inst: Inst) -> None:
        """HADD2/HMUL2/HFMA2 with a pair of half immediates as B (lane 0 the low half 'bl', lane 1
        'bh'; .FTZ flushes them as it flushes a register's), HFMA2's C a register (the *2_32I
        form's C is the destination register); the lanes' arithmetic is half_ir's, as SM86's
        ``op_half2_imm``.  .FMZ is refused."""
        self.need(inst, FMZ=0)
        mode = inst.mods.get("mode", 0)
        ftz, sat = bool(inst.mods["FTZ"]), bool(inst.mods.get("SAT", 0))
        ir = inst.row.ir.split(".")[0].split("_")[0]
        b = Block()
        pair = []
        for n in ("bl", "bh"):
            x = b.emit("UnpackF16", b.const_u32(inst.ops[n]["imm"]), lane=0)
            pair.append(b.op("FFlushDenormF16", x) if ftz else x)
        srcs = [self.halves_ir(b, inst, "a", ftz), (pair[0], pair[1])]
        if ir == "HFMA2":
            srcs.append(self.halves_ir(b, inst, "c", ftz))
        self.put_ir(b, inst, merge_half_ir(b, inst, half_ir.arith2_ir(b, ir, srcs, mode == 1, ftz, sat)))
        ir_spirv.emit(self, b)
