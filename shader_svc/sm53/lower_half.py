"""SM53 half precision (issue 31): HADD2, HMUL2, HFMA2 (f16x2 results or .F32) and HSETP2, in
IR; what each lane means is ``lower/half_ir.py``'s, shared with SM86.

HSETP2 follows PTX's setp.f16x2: P = (lane 0's comparison) BOP pc, Q = (lane 1's) BOP pc.
Refused: an operand's .F32 swizzle, the .MRG_H0/.MRG_H1 result modes, HSETP2.H_AND.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower import half_ir
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53

HALF_RULES = {"HADD2": "op_half2", "HMUL2": "op_half2", "HFMA2": "op_half2", "HSETP2": "op_hsetp2"}


class Half53(Lower53):
    """Mixin of ``to_spirv.Compute53``: the half-precision handlers (module docstring)."""

    def lowered(self, ir: str) -> bool:
        return ir in HALF_RULES or super().lowered(ir)

    def halves_ir(self, b: Block, inst: Inst, name: str, ftz: bool) -> tuple[Value, Value]:
        """Operand ``name`` as the two f32 values result lanes 0 and 1 read."""
        v = inst.ops[name]
        if v["swz"] not in half_ir.SWZ_LANES:
            self.bad(inst, ".F32 operand of a half instruction not translated")
        return half_ir.halves_ir(b, self.raw_ir(b, inst, name), v["swz"], v["neg"], v["abs"], ftz)

    def op_half2(self, inst: Inst) -> None:
        if inst.mods["mode"] > 1:
            self.bad(inst, "result merge (.MRG_H0/.MRG_H1) not translated")
        ftz, ir = bool(inst.mods["FTZ"]), inst.row.ir
        b = Block()
        srcs = [self.halves_ir(b, inst, n, ftz) for n in ("a", "b", "c")[: 3 if ir == "HFMA2" else 2]]
        self.put_ir(b, inst, half_ir.arith2_ir(b, ir, srcs, inst.mods["mode"] == 1, ftz, bool(inst.mods["SAT"])))
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
