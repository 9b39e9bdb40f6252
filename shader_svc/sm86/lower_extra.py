"""SM86 lowering of issue 31's other gaps, in IR: FADD/FMUL/FFMA with directed rounding (.RM/.RP/.RZ:
``FFmaDirected32``, exact; ``lower/half.py`` gives the method), FCHK (``half_ir.fchk_ir``: a
conservative test for ptxas's division slow path) and BMOV (the convergence barrier registers
saved around calls: B registers are plain 32-bit variables here, as BSSY/BSYNC are no-ops for
one invocation, so BMOV moves values and .CLEAR zeroes the source), VABSDIFF (|a - b| + c,
unsigned with .U32, else signed, modulo 2^32: PTX's vabsdiff with its add, as ptxas builds
__usad/__sad from it; its predicate result is refused unless PT, its meaning not being
documented)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower import half_ir
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

EXTRA_RULES = {
    # FADD/FMUL/FFMA with .RM/.RP/.RZ (round to nearest: Lower86.op_fp32)
    "FFMA": "op_fp_rnd",
    "FADD": "op_fp_rnd",
    "FMUL": "op_fp_rnd",
    "FCHK": "op_fchk",
    "BMOV": "op_bmov",
    "VABSDIFF": "op_vabsdiff",
}


class Extra86(Lower86):
    """Mixin of ``to_spirv.Compute86`` (module docstring)."""

    def op_fp_rnd(self, inst: Inst) -> None:
        """FADD / FMUL / FFMA: to nearest as ``Lower86.fp32_ir``; .RM/.RP/.RZ rounded exactly
        that way (``half_ir.directed_f32_ir``), .FTZ on the operands and the result, then .SAT."""
        if not inst.mods["rnd"]:
            self.op_fp32(inst)
            return
        self.require(inst, FMZ=0, scale=4)
        ftz = inst.mods["FTZ"]
        b = Block()

        def operand(name: str) -> Value:
            x = b.op("BitcastF32", self.src_ir(b, inst, name, True))
            return b.op("FFlushDenorm32", x) if ftz else x

        x, y = operand("a"), operand("b")
        z = operand("c") if inst.row.ir == "FFMA" else None
        r = half_ir.directed_f32_ir(b, inst.row.ir, inst.mods["rnd"], x, y, z)
        r = b.op("FFlushDenorm32", r) if ftz else r
        r = b.op("FSaturate32", r) if inst.mods["SAT"] else r
        self.put_ir(b, inst, b.op("BitcastU32", r))
        ir_spirv.emit(self, b)

    def op_fchk(self, inst: Inst) -> None:
        """FCHK P, a, b: ``half_ir.fchk_ir`` (the division's slow-path test)."""
        b = Block()
        r = half_ir.fchk_ir(b, self.src_ir(b, inst, "a", True), self.src_ir(b, inst, "b", True))
        b.set_pred(inst.ops["p"]["pred"], r)
        ir_spirv.emit(self, b)

    def op_bmov(self, inst: Inst) -> None:
        """BMOV.32 Rd, Bn (.CLEAR: Bn = 0 after) and BMOV.32 Bd, b: a move between files."""
        b = Block()
        d = inst.ops["d"]
        v = b.get_reg(inst.ops["b"]["reg"], "B") if inst.ops["b"].get("file") == "B" else self.src_ir(b, inst, "b")
        b.set_reg(d["reg"], v, d.get("file", "R"))
        if inst.mods.get("CLEAR"):
            b.set_reg(inst.ops["b"]["reg"], b.const_u32(0), "B")
        ir_spirv.emit(self, b)

    def op_vabsdiff(self, inst: Inst) -> None:
        if inst.ops["p"]["pred"] != 7:
            raise TranslateError(f"{inst.text()}: VABSDIFF's predicate result not translated", offset=inst.addr)
        unsigned = inst.mods["U32"] == 0
        b = Block()
        x, y = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")
        hi = b.op("UMax32" if unsigned else "SMax32", x, y)
        lo = b.op("UMin32" if unsigned else "SMin32", x, y)
        self.put_ir(b, inst, b.op("IAdd32", b.op("ISub32", hi, lo), self.src_ir(b, inst, "c")))
        ir_spirv.emit(self, b)
