"""SM53 lowering of issue 31's other gaps, in IR, for rows of the table's later sweep: FCHK.DIVIDE
(``half_ir.fchk_ir``, the division slow-path test both ISAs share), DMNMX (``FMinMax64``),
ISET / FSET / DSET (a comparison combined with pc by BOP, written as 0xffffffff or, with .BF,
1.0f; else 0; .CC: the result's Z and S flags), FADD32I / FMUL32I / FFMA32I (the FP32 operations with a 32-bit immediate, .FTZ
and .SAT as FADD/FMUL/FFMA; FFMA32I's addend is its destination register), and FADD/FMUL/FFMA
with .RM/.RP/.RZ (``half_ir.directed_f32_ir``, exact).  ISET.X compares the high words on the
condition code as ISETP.X.  Refused: a .CC destination (but ISET/FSET/DSET's: Z and S of the result), .FMZ.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower import half_ir
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53

EXTRA_RULES = {
    "FCHK": "op_fchk",
    "DMNMX": "op_dmnmx",
    "ISET": "op_set",
    "FSET": "op_set",
    "DSET": "op_set",
    "FADD32I": "op_f32i",
    "FMUL32I": "op_f32i",
    "FFMA32I": "op_f32i",
    # FADD/FMUL/FFMA with .RM/.RP/.RZ (round to nearest: Float53.op_fp32)
    "FFMA": "op_fp_rnd",
    "FADD": "op_fp_rnd",
    "FMUL": "op_fp_rnd",
}
F32I_OPS = {"FADD32I": "FAdd32", "FMUL32I": "FMul32", "FFMA32I": "FFma32"}


class Extra53(Lower53):
    """Mixin of ``to_spirv.Compute53`` (module docstring)."""

    def lowered(self, ir: str) -> bool:
        return ir in EXTRA_RULES or super().lowered(ir)

    def no_cc(self, inst: Inst) -> None:
        if inst.ops.get("d", {}).get("cc"):
            self.bad(inst, "condition code from this instruction not translated yet")

    def op_fchk(self, inst: Inst) -> None:
        self.need(inst, mode=0)
        b = Block()
        r = half_ir.fchk_ir(b, self.val_ir(b, inst, "a", True), self.val_ir(b, inst, "b", True))
        b.set_pred(inst.ops["pd"]["pred"], r)
        ir_spirv.emit(self, b)

    def op_dmnmx(self, inst: Inst) -> None:
        self.no_cc(inst)
        b = Block()
        x, y = self.dval_ir(b, inst, "a"), self.dval_ir(b, inst, "b")
        pc = inst.ops["pc"]
        r = b.op("FMinMax64", x, y, b.get_pred(pc["pred"], pc["not"]))
        self.put64_ir(b, inst.ops["d"]["reg"], b.op("BitcastU64", r))
        ir_spirv.emit(self, b)

    def op_set(self, inst: Inst) -> None:
        ir, mods = inst.row.ir, inst.mods
        b = Block()
        if ir == "ISET":  # .X: the high words' compare on the condition code, as ISETP.X
            x, y = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
            r = self._isetp_x(b, inst, x, y) if mods["X"] else b.emit("ICmp32", x, y, cmp=mods["cmp"], unsigned=mods["u32"] == 0)
        elif ir == "FSET":
            x = b.op("BitcastF32", self.val_ir(b, inst, "a", True))
            y = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
            if mods["FTZ"]:
                x, y = b.op("FFlushDenorm32", x), b.op("FFlushDenorm32", y)
            r = b.emit("FCmp32", x, y, cmp=mods["cmp"])
        else:
            r = b.emit("FCmp64", self.dval_ir(b, inst, "a"), self.dval_ir(b, inst, "b"), cmp=mods["cmp"])
        pc = inst.ops["pc"]
        r = b.op(("LAnd", "LOr", "LXor")[mods["bop"]], r, b.get_pred(pc["pred"], pc["not"]))
        true = b.const_u32(0x3F800000 if mods["BF"] else 0xFFFFFFFF)
        out = b.op("Select32", r, true, b.const_u32(0))
        self.put_ir(b, inst, out)
        if inst.ops["d"].get("cc"):  # Z and S of the result, C cleared (as LOP's; shader-alu)
            self.logic_cc_ir(b, out)
        ir_spirv.emit(self, b)

    def op_f32i(self, inst: Inst) -> None:
        self.no_cc(inst)
        ftz = inst.mods.get("ftz", inst.mods.get("FTZ", 0))
        if ftz == 2:
            self.bad(inst, ".FMZ not translated yet")
        b = Block()

        def operand(name: str) -> Value:
            x = b.op("BitcastF32", self.val_ir(b, inst, name, True))
            return b.op("FFlushDenorm32", x) if ftz else x

        args = [operand(n) for n in ("a", "b", "c")[: 3 if inst.row.ir == "FFMA32I" else 2]]
        r = b.op(F32I_OPS[inst.row.ir], *args)
        r = b.op("FFlushDenorm32", r) if ftz else r
        r = b.op("FSaturate32", r) if inst.mods.get("SAT", 0) else r
        self.put_ir(b, inst, b.op("BitcastU32", r))
        ir_spirv.emit(self, b)

    def op_fp_rnd(self, inst: Inst) -> None:
        if not inst.mods.get("rnd"):
            self.op_fp32(inst)
            return
        self.no_cc(inst)
        self.need(inst, scale=0)
        ftz = inst.mods.get("ftz", inst.mods.get("FTZ", 0))
        if ftz == 2:
            self.bad(inst, ".FMZ not translated yet")
        b = Block()

        def operand(name: str) -> Value:
            x = b.op("BitcastF32", self.val_ir(b, inst, name, True))
            return b.op("FFlushDenorm32", x) if ftz else x

        x, y = operand("a"), operand("b")
        z = operand("c") if inst.row.ir == "FFMA" else None
        r = half_ir.directed_f32_ir(b, inst.row.ir, inst.mods["rnd"], x, y, z)
        r = b.op("FFlushDenorm32", r) if ftz else r
        r = b.op("FSaturate32", r) if inst.mods.get("SAT", 0) else r
        self.put_ir(b, inst, b.op("BitcastU32", r))
        ir_spirv.emit(self, b)
