"""SM53 integer comparisons and selections (a mixin of ``lower_int.Int53``): ISETP (incl. .X, the
high words of a 64-bit comparison that defer to the low words' C/Z flags), ICMP, PSETP, PSET,
IMNMX (incl. the 64-bit .XLO/.XHI pairs) and SEL.  Contract: each ``op_*`` lowers one decoded
instruction into IR rows and emits them, predicates through ``Lower53.setp_ir``.  Facts: the PTX
ISA's setp/selp/min/max, the comparison codes of sm53/table.py (checked against nvdisasm); the
64-bit chains (ISETP.X after the low words' subtraction with .CC, IMNMX.XHI then .XLO) read
from ptxas's own code in the CUDA corpus; .XMED is refused."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53


class IntCmp53(Lower53):
    """Mixin of ``lower_int.Int53`` (see the module's docstring)."""

    @staticmethod
    def _isetp_x(b: Block, inst: Inst, x: Value, y: Value) -> Value:
        """ISETP.X: the high words of a 64-bit comparison whose low words were subtracted with
        .CC just before (carry = no borrow = low a >= low b; zero = low words equal): the high
        words decide, equal high words defer to the low flags."""
        cmp = inst.mods["cmp"]
        c_lo = b.emit("GetFlag", flag="CC")
        z_lo = b.emit("GetFlag", flag="CCZ")
        eq_hi = b.op("IEq32", x, y)
        gt_hi = b.emit("ICmp32", x, y, cmp=4, unsigned=inst.mods["u32"] == 0)
        eq = b.op("LAnd", eq_hi, z_lo)
        ge = b.op("LOr", gt_hi, b.op("LAnd", eq_hi, c_lo))
        gt = b.op("LAnd", ge, b.op("LNot", eq))
        table = {
            1: lambda: b.op("LNot", ge),
            2: lambda: eq,
            3: lambda: b.op("LNot", gt),
            4: lambda: gt,
            5: lambda: b.op("LNot", eq),
            6: lambda: ge,
        }
        if cmp in table:
            return table[cmp]()
        return b.const_bool(cmp == 7)

    @staticmethod
    def _icmp(b: Block, inst: Inst, x: Value, y: Value) -> Value:
        return b.emit("ICmp32", x, y, cmp=inst.mods["cmp"], unsigned=inst.mods["u32"] == 0)

    def op_isetp(self, inst: Inst) -> None:
        b = Block()
        x, y = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        self.setp_ir(b, inst, self._isetp_x(b, inst, x, y) if inst.mods.get("X") else self._icmp(b, inst, x, y))
        ir_spirv.emit(self, b)

    def op_icmp(self, inst: Inst) -> None:
        b = Block()
        z = self._icmp(b, inst, self.val_ir(b, inst, "c"), b.const_u32(0))
        x = self.val_ir(b, inst, "a")
        self.put_ir(b, inst, b.op("Select32", z, x, self.val_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_psetp(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        bop = ("LAnd", "LOr", "LXor")
        b = Block()
        pa, pb = (b.get_pred(ops[n]["pred"], ops[n]["not"]) for n in ("pa", "pb"))
        ab = b.op(bop[mods["bop1"]], pa, pb)
        pc = b.get_pred(ops["pc"]["pred"], ops["pc"]["not"])
        b.set_pred(ops["pd"]["pred"], b.op(bop[mods["bop2"]], ab, pc))
        if ops["qd"]["pred"] != 7:
            b.set_pred(ops["qd"]["pred"], b.op(bop[mods["bop2"]], b.op("LNot", ab), pc))
        ir_spirv.emit(self, b)

    def op_imnmx(self, inst: Inst) -> None:
        xm = inst.mods["xm"]
        if xm == 2:  # .XMED: the middle words of a wider compare (ptxas's 64-bit code has none)
            self.bad(inst, "IMNMX.XMED not translated yet")
        u = inst.mods["u32"] == 0
        cc = bool(inst.ops["d"].get("cc"))
        if cc and xm != 3:
            self.bad(inst, "IMNMX with the condition code not translated yet")
        b = Block()
        x, y = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        lo = b.op("UMin32" if u else "SMin32", x, y)
        hi = b.op("UMax32" if u else "SMax32", x, y)
        pc = inst.ops["pc"]
        want_min = b.get_pred(pc["pred"], pc["not"])
        r = b.op("Select32", want_min, lo, hi)
        if xm == 3 and cc:
            # .XHI: the high words of a 64-bit min/max decide; the condition code keeps for
            # .XLO whether they were equal (CCZ) and whether a's was the smaller (CC)
            b.emit("SetFlag", b.op("IEq32", x, y), flag="CCZ")
            b.emit("SetFlag", b.emit("ICmp32", x, y, cmp=1, unsigned=u), flag="CC")
        elif xm == 1:
            # .XLO: equal high words -> the low words' unsigned min/max; otherwise the low
            # word of the side the high words chose (a's when 'a smaller' equals 'minimum')
            a_lt = b.emit("GetFlag", flag="CC")
            take_a = b.op("LNot", b.op("LXor", a_lt, want_min))
            r = b.op("Select32", b.emit("GetFlag", flag="CCZ"), r, b.op("Select32", take_a, x, y))
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def op_sel(self, inst: Inst) -> None:
        pc = inst.ops["pc"]
        b = Block()
        p = b.get_pred(pc["pred"], pc["not"])
        self.put_ir(b, inst, b.op("Select32", p, self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_pset(self, inst: Inst) -> None:
        """PSET: (pa BOP1 pb) BOP2 pc as a word: 1.0 with .BF, else 0xffffffff; 0 where false."""
        ops, mods = inst.ops, inst.mods
        if ops["d"].get("cc"):
            self.bad(inst, "PSET with the condition code not translated yet")
        bop = ("LAnd", "LOr", "LXor")
        b = Block()
        pa, pb = (b.get_pred(ops[n]["pred"], ops[n]["not"]) for n in ("pa", "pb"))
        pc = b.get_pred(ops["pc"]["pred"], ops["pc"]["not"])
        r = b.op(bop[mods["bop2"]], b.op(bop[mods["bop1"]], pa, pb), pc)
        true = 0x3F800000 if mods["BF"] else 0xFFFFFFFF
        self.put_ir(b, inst, b.op("Select32", r, b.const_u32(true), b.const_u32(0)))
        ir_spirv.emit(self, b)
