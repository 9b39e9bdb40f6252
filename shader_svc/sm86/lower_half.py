"""SM86 half precision (issue 31): HADD2, HMUL2, HFMA2 (f16x2 results or .F32), HMNMX2, HSETP2
and F2F.F16.F32, in IR; what each lane means is ``lower/half_ir.py``'s, shared with SM53.

HSETP2 follows PTX's setp.f16x2: P = (lane 0's comparison) BOP pp, Q = (lane 1's) BOP pp.
F2F.F16.F32 writes the half rounded as its .RM/.RP/.RZ says, zero-extended.  Refused: an
operand's .F32 swizzle, HSETP2.H_AND, HMNMX2's .NAN/.XORSIGN/.F32.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.bits import get
from shader_svc.lower import half_ir
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

HALF_RULES = {
    "HADD2": "op_half2",
    "HMUL2": "op_half2",
    "HFMA2": "op_half2",
    "HMNMX2": "op_hmnmx2",
    "HSETP2": "op_hsetp2",
    "F2F.F16": "op_f2f_f16",
}


class Half86(Lower86):
    """Mixin of ``to_spirv.Compute86``: the half-precision handlers (module docstring)."""

    def halves_ir(self, b: Block, inst: Inst, name: str, ftz: bool) -> tuple[Value, Value]:
        """Operand ``name`` as the two f32 values result lanes 0 and 1 read."""
        o = next(x for x in inst.row.operands if x.name == name)
        swz = get(inst.word, int(o.suffix[5:]), 2)
        if swz not in half_ir.SWZ_LANES:
            raise TranslateError(f"{inst.text()}: .F32 operand of a half instruction not translated", offset=inst.addr)
        v = inst.ops[name]
        return half_ir.halves_ir(b, self.plain_ir(b, inst, name), swz, bool(v.get("neg")), bool(v.get("abs")), ftz)

    def op_half2(self, inst: Inst) -> None:
        ftz, ir = bool(inst.mods["FTZ"]), inst.row.ir
        b = Block()
        srcs = [self.halves_ir(b, inst, n, ftz) for n in ("a", "b", "c")[: 3 if ir == "HFMA2" else 2]]
        self.put_ir(b, inst, half_ir.arith2_ir(b, ir, srcs, bool(inst.mods["F32"]), ftz, bool(inst.mods["SAT"])))
        ir_spirv.emit(self, b)

    def op_hmnmx2(self, inst: Inst) -> None:
        self.require(inst, F32=0, NAN=0, XORSIGN=0)
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pp = inst.ops["pp"]
        self.put_ir(b, inst, half_ir.minmax2_ir(b, x, y, b.get_pred(pp["pred"], pp["not"])))
        ir_spirv.emit(self, b)

    def op_hsetp2(self, inst: Inst) -> None:
        self.require(inst, H_AND=0)
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pp = inst.ops["pp"]
        c = b.get_pred(pp["pred"], pp["not"])
        half_ir.setp2_ir(b, x, y, c, inst.mods["bop"], inst.mods["cmp"], (inst.ops["p"]["pred"], inst.ops["q"]["pred"]))
        ir_spirv.emit(self, b)

    def op_f2f_f16(self, inst: Inst) -> None:
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        if inst.mods["FTZ"]:
            x = b.op("FFlushDenorm32", x)
        self.put_ir(b, inst, b.emit("F16FromF32", x, rnd=inst.mods["rnd"]))
        ir_spirv.emit(self, b)
