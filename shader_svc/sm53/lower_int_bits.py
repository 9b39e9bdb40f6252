"""SM53 shifts, logic and bit fields (a mixin of ``lower_int.Int53``): SHL/SHR (clamped or .W
wrapped counts), SHF.L/SHF.R funnel shifts (.U64/.S64 limits), LOP/LOP3 with their predicate
result (.T/.Z/.NZ), BFE (.BREV), BFI, PRMT, POPC and FLO.  Contract: each ``op_*`` lowers one
decoded instruction into IR rows and emits them; logic ``.CC`` forms set Z/S and clear C/O
(``IntCC53.logic_cc_ir``).  Facts: the PTX ISA (shl/shr/shf/lop3/bfe/bfi/prmt/popc/bfind), field
layouts from sm53/table.py (checked against nvdisasm); forms refused with a TranslateError naming
the instruction."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53


class IntBits53(Lower53):
    """Mixin of ``lower_int.Int53`` (see the module's docstring)."""

    def _shift(self, inst: Inst) -> None:
        mods = inst.mods
        if mods.get("BREV"):
            raise TranslateError(f"{inst.text()}: SHR.BREV not translated", offset=inst.addr)
        if mods.get("X") or mods.get("x"):
            raise TranslateError(f"{inst.text()}: shift with carry not translated", offset=inst.addr)
        b = Block()
        a, s = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        big = b.op("UGe32", s, b.const_u32(32))
        if mods["W"]:
            s = b.op("IAnd32", s, b.const_u32(31))
            big = b.const_bool(False)
        else:
            s = b.op("UMin32", s, b.const_u32(31))
        if inst.row.ir == "SHL":
            zero = b.const_u32(0)
            r = b.op("Select32", big, zero, b.op("IShl32", a, s))
        elif mods["u32"] == 0:
            zero = b.const_u32(0)
            r = b.op("Select32", big, zero, b.op("IShr32", a, s))
        else:  # arithmetic: shifting by >= 32 leaves the sign everywhere, which a shift by 31 gives
            r = b.op("ISar32", a, s)
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def _shf53(self, inst: Inst) -> None:
        """Funnel shift of the pair C:A (C high): SHF.L gives the high word of (C:A) << s,
        SHF.R the low word of (C:A) >> s; .W wraps s to 0..31, otherwise s is clamped to 32
        (to 64 with .U64), as PTX's shf.wrap / shf.clamp and 64-bit shifts need."""
        mods = inst.mods
        if mods["xhi"] or mods["maxshift"] not in (0, 2, 3) or inst.ops["d"].get("cc"):
            raise TranslateError(f"{inst.text()}: SHF form not translated yet", offset=inst.addr)
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        b = Block()
        v = b.op("Pack64", self.val_ir(b, inst, "a"), self.val_ir(b, inst, "c"))
        sh = self.val_ir(b, inst, "b")
        limit = 64 if mods["maxshift"] in (2, 3) else 32
        if mods["maxshift"] == 3 and inst.row.mnemonic == "SHF.R":  # .S64: arithmetic, sign-filled
            s = b.op("UMin32", sh, b.const_u32(63)) if not mods["W"] else b.op("IAnd32", sh, b.const_u32(31))
            self.put_ir(b, inst, b.op("Trunc32", b.op("Sar64", v, b.op("ZExt64", s))))
            ir_spirv.emit(self, b)
            return
        sh = b.op("IAnd32", sh, b.const_u32(31)) if mods["W"] else b.op("UMin32", sh, b.const_u32(limit))
        big = b.op("UGe32", sh, b.const_u32(64))
        s64 = b.op("ZExt64", b.op("IAnd32", sh, b.const_u32(63)))
        if inst.row.mnemonic == "SHF.L":
            r = b.op("Shr64", b.op("Shl64", v, s64), b.const_u64(32))
        else:
            r = b.op("Shr64", v, s64)
        zero = b.const_u32(0)
        self.put_ir(b, inst, b.op("Select32", big, zero, b.op("Trunc32", r)))
        ir_spirv.emit(self, b)

    def op_shl(self, inst: Inst) -> None:
        self._shift(inst)

    def op_shf(self, inst: Inst) -> None:
        self._shf53(inst)

    def op_lop(self, inst: Inst) -> None:
        self.need(inst, X=0)
        b = Block()
        x, y = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        op = inst.mods["op"]
        r = y if op == 3 else b.op(("IAnd32", "IOr32", "IXor32")[op], x, y)
        self.put_ir(b, inst, r)
        if inst.ops["d"].get("cc"):
            self.logic_cc_ir(b, r)
        self._pop_pred_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def op_lop3(self, inst: Inst) -> None:
        self.need(inst, X=0)
        b = Block()
        x, y, z = (self.val_ir(b, inst, n) for n in ("a", "b", "c"))
        r = b.emit("Lut3", x, y, z, lut=inst.ops["lut"]["imm"])
        self.put_ir(b, inst, r)
        if inst.ops["d"].get("cc"):
            self.logic_cc_ir(b, r)
        self._pop_pred_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def _pop_pred_ir(self, b: Block, inst: Inst, r: Value) -> None:
        """LOP/LOP3's predicate result: .T (true), .Z (the result is 0), .NZ; .F is refused.
        (The three candidates are built whichever is kept, as this lowering always has, so the
        module's ids stay where they were; the SSA clean-up drops the unused ones.)"""
        pr = inst.ops.get("pr", {}).get("pred", 7)
        if pr == 7:
            return
        z = b.op("IEq32", r, b.const_u32(0))
        v = {1: b.const_bool(True), 2: z, 3: b.op("LNot", z)}.get(inst.mods.get("pop", 0))
        if v is None:
            raise TranslateError(f"{inst.text()}: predicate result .F not translated", offset=inst.addr)
        b.set_pred(pr, v)

    def op_bfe(self, inst: Inst) -> None:
        b = Block()
        a = self.val_ir(b, inst, "a")
        if inst.mods["BREV"]:  # the source bit-reversed before the extraction (__brev)
            a = b.op("BitReverse32", a)
        self.put_ir(b, inst, b.emit("BitFieldExtractPacked", a, self.val_ir(b, inst, "b"), signed=inst.mods["u32"] == 1))
        ir_spirv.emit(self, b)

    def op_bfi(self, inst: Inst) -> None:
        b = Block()
        x, y = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        self.put_ir(b, inst, b.op("BitFieldInsertPacked", x, y, self.val_ir(b, inst, "c")))
        ir_spirv.emit(self, b)

    def op_prmt(self, inst: Inst) -> None:
        self.need(inst, mode=0)
        b = Block()
        x, y = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        self.put_ir(b, inst, b.op("Permute32", x, y, self.val_ir(b, inst, "c")))
        ir_spirv.emit(self, b)

    def op_popc(self, inst: Inst) -> None:
        b = Block()
        self.put_ir(b, inst, b.op("BitCount32", self.val_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_flo(self, inst: Inst) -> None:
        b = Block()
        x = self.val_ir(b, inst, "b")
        self.put_ir(b, inst, b.emit("FindMsb32", x, signed=inst.mods["u32"] != 0, sh=bool(inst.mods["SH"])))
        ir_spirv.emit(self, b)
