"""SM86 integer arithmetic (a mixin of ``lower_alu.Alu86``): IADD3 with carry-out and .X
carry-in, the LEA family, IMAD/IMAD.WIDE/IMAD.HI (.X), ISETP (incl. .EX), 64-bit funnel shifts
(SHF), IABS, POPC, BREV, FLO, PRMT, SGXT, BMSK, R2UR and CS2R.  Forms without a carry or a
64-bit part go to ``Lower86``'s shared subset (``super()``).

Carries: IADD3's total carry t = (sum >> 32) splits as CO0 = t >= 1, CO1 = t >= 2 so that
IADD3.X with both carry-ins adds t back; a negated operand without .X is ~x + 1 (its +1 reaches
the carry), with .X it is ~x (nvdisasm prints '~').  Contract: each ``op_*`` lowers one decoded
instruction into IR rows and emits them; refused forms raise a TranslateError naming the
instruction.  Facts: the PTX ISA (add.cc/addc, mad.wide/mad.hi, shf, bmsk, sext (SGXT), prmt,
popc, brev, bfind), field layouts from sm86/table.py (checked against nvdisasm)."""

from __future__ import annotations


from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86
from shader_svc.sm86.lower_uniform import pred_in, pred_out


class AluInt86(Lower86):
    """Mixin of ``lower_alu.Alu86`` (see the module's docstring)."""

    def _term64(self, b: Block, inst: Inst, name: str, x_mode: bool) -> Value:
        """An IADD3/LEA operand as u64 for a carry-exact sum: -x is ~x + 1 (without .X) or ~x."""
        neg = inst.ops[name].get("neg")
        val = self.plain_ir(b, inst, name)
        if neg:
            val = b.op("INot32", val)
        t = b.op("ZExt64", val)
        if neg and not x_mode:
            t = b.op("IAdd64", t, b.const_u64(1))
        return t

    @staticmethod
    def _carry_in(b: Block, inst: Inst, name: str) -> Value:
        # from the predicate's own file: UIADD3.X / ULEA.X read uniform predicates
        return b.op("Select64", pred_in(b, inst, name), b.const_u64(1), b.const_u64(0))

    def _iadd3_carry(self, inst: Inst) -> None:
        x = bool(inst.mods["X"])
        b = Block()
        s = self._term64(b, inst, "a", x)
        for n in ("b", "c"):
            s = b.op("IAdd64", s, self._term64(b, inst, n, x))
        if x:
            s = b.op("IAdd64", s, self._carry_in(b, inst, "ci0"))
            s = b.op("IAdd64", s, self._carry_in(b, inst, "ci1"))
        self._carry_out(b, inst, s, ("co0", "co1"))
        self.put_ir(b, inst, b.op("Trunc32", s))
        ir_spirv.emit(self, b)

    def _carry_out(self, b: Block, inst: Inst, s: Value, names: tuple[str, ...]) -> None:
        t = b.op("Shr64", s, b.const_u64(32))
        for k, n in enumerate(names):
            if inst.ops[n]["pred"] != 7:  # (UIADD3 / ULEA: a uniform predicate)
                pred_out(self, b, inst, n, b.op("UGe64", t, b.const_u64(k + 1)))

    def _lea(self, inst: Inst) -> None:
        """LEA: (a << s) + b; LEA.HI: high word of (hi:a) << s, plus b; .X adds the carry-in."""
        ops, mods = inst.ops, inst.mods
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        x = bool(mods["X"])
        sh = ops["s"]["imm"]
        b = Block()
        a = self.src_ir(b, inst, "a")  # -a / ~a applied
        if mods["HI"]:
            hi = b.op("ISar32", a, b.const_u32(31)) if mods["SX32"] else self.src_ir(b, inst, "c")
            v = b.op("Pack64", a, hi)
            wide = b.op("Shl64", v, b.const_u64(sh))
            shifted = b.op("Trunc32", b.op("Shr64", wide, b.const_u64(32)))
        else:
            shifted = b.op("IShl32", a, b.const_u32(sh))
        s = b.op("ZExt64", shifted)
        s = b.op("IAdd64", s, self._term64(b, inst, "b", x))
        if x:
            s = b.op("IAdd64", s, self._carry_in(b, inst, "ci"))
        self._carry_out(b, inst, s, ("co",))
        self.put_ir(b, inst, b.op("Trunc32", s))  # (ULEA: a uniform register)
        ir_spirv.emit(self, b)

    def _shf_any(self, inst: Inst, d: int) -> None:
        """SHF of the pair (c:a) (c high) by b: .L keeps the low or (.HI) high word of the left
        shift, .R of the right shift (arithmetic for .S32/.S64).  The count wraps (.W: modulo 32
        for 32-bit types, 64 for 64-bit ones) or clamps (32 / 64)."""
        mods = inst.mods
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        t = mods["type"]  # 0 S64, 1 U64, 2 S32, 3 U32
        wide = t in (0, 1)
        b = Block()
        v = b.op("Pack64", self.src_ir(b, inst, "a"), self.src_ir(b, inst, "c"))
        s = self.src_ir(b, inst, "b")
        lim = 64 if wide else 32
        s = b.op("IAnd32", s, b.const_u32(lim - 1)) if mods["W"] else b.op("UMin32", s, b.const_u32(lim))
        big = b.op("UGe32", s, b.const_u32(64))
        s64 = b.op("ZExt64", b.op("UMin32", s, b.const_u32(63)))
        signed = t in (0, 2)
        if mods["dir"] == 0:
            r = b.op("Shl64", v, s64)
            r = b.op("Select64", big, b.const_u64(0), r)
        elif signed:  # a shift by 64 leaves the sign, as a shift by 63 does
            r = b.op("Sar64", v, s64)
        else:
            zero = b.const_u64(0)
            r = b.op("Select64", big, zero, b.op("Shr64", v, s64))
        if mods["HI"]:
            r = b.op("Shr64", r, b.const_u64(32))
        b.set_reg(d, b.op("Trunc32", r), inst.ops.get("d", {}).get("file", "R"))  # (USHF: UR)
        ir_spirv.emit(self, b)

    def op_iadd3(self, inst: Inst) -> None:
        mods, ops = inst.mods, inst.ops
        if mods["X"] or ops["co0"]["pred"] != 7 or ops["co1"]["pred"] != 7:
            self._iadd3_carry(inst)
        else:
            super().op_iadd3(inst)

    def op_lea(self, inst: Inst) -> None:
        self._lea(inst)

    def op_imad_wide(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        if mods["X"] or ops["co"]["pred"] != 7:
            self.u64  # declared before the operands are read, where this lowering always did (ids kept)
            b = Block()
            p = self.wide_product_ir(b, inst)
            cc = self.src64_ir(b, inst, "c")
            s = b.op("IAdd64", p, cc)
            out = b.op("ULt64", s, cc)
            if mods["X"]:
                s2 = b.op("IAdd64", s, self._carry_in(b, inst, "ci"))
                out = b.op("LOr", out, b.op("ULt64", s2, s))
                s = s2
            if ops["co"]["pred"] != 7:
                b.set_pred(ops["co"]["pred"], out)
            self.put64_ir(b, ops.get("d", {}).get("reg", 255), s)
            ir_spirv.emit(self, b)
        else:
            super().op_imad_wide(inst)

    def op_imad(self, inst: Inst) -> None:
        if inst.mods["X"]:
            b = Block()
            p = b.op("IMul32", self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b"))
            s = b.op("IAdd32", p, self.src_ir(b, inst, "c"))
            self.put_ir(b, inst, b.op("IAdd32", s, b.op("Trunc32", self._carry_in(b, inst, "ci"))))
            ir_spirv.emit(self, b)
        else:
            super().op_imad(inst)

    def op_imad_hi(self, inst: Inst) -> None:
        ops = inst.ops
        # the high half of IMAD.WIDE: (a * b + the pair c+1:c) >> 32, as the 32-bit division
        # sequence shows (IMAD.HI.U32 q, q, e, r with q = r+1's copy: q + hi(q * e)); the
        # 64-bit add's carry goes out, .X adds the carry-in
        self.require(inst, X=0)
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        b = Block()
        p = self.wide_product_ir(b, inst)
        cc = self.src64_ir(b, inst, "c")
        s = b.op("IAdd64", p, cc)
        if ops["co"]["pred"] != 7:
            b.set_pred(ops["co"]["pred"], b.op("ULt64", s, cc))
        self.put_ir(b, inst, b.op("Trunc32", b.op("Shr64", s, b.const_u64(32))))
        ir_spirv.emit(self, b)

    def op_isetp(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        if not mods["EX"]:
            super().op_isetp(inst)
            return
        # the high words of a 64-bit comparison: where they are equal the low words' result
        # (the ex predicate) decides (EQ: both equal; NE: either differs)
        b = Block()
        x, y = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")
        cmp, uns = mods["cmp"], mods["U32"] == 0
        ex = b.get_pred(ops["ex"]["pred"], ops["ex"]["not"])
        eq = b.op("IEq32", x, y)
        if cmp in (1, 3, 4, 6):
            strict = b.emit("ICmp32", x, y, cmp=1 if cmp in (1, 3) else 4, unsigned=uns)
            r = b.op("LOr", strict, b.op("LAnd", eq, ex))
        elif cmp == 2:
            r = b.op("LAnd", eq, ex)
        elif cmp == 5:
            r = b.op("LOr", b.op("LNot", eq), ex)
        else:
            r = b.const_bool(cmp == 7)
        self.set_bop_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def op_r2ur(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        if ops["p"]["pred"] != 7:
            raise TranslateError(f"{inst.text()}: predicate out not translated", offset=inst.addr)
        b = Block()
        b.set_reg(d, self.src_ir(b, inst, "a"), "UR")
        ir_spirv.emit(self, b)

    def op_prmt(self, inst: Inst) -> None:
        self.require(inst, mode=0)
        b = Block()
        x, y = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")
        self.put_ir(b, inst, b.op("Permute32", x, y, self.src_ir(b, inst, "c")))
        ir_spirv.emit(self, b)

    def op_sgxt(self, inst: Inst) -> None:
        # extend the low b bits (b clamped to 32; .W: b modulo 32, PTX szext.wrap) with the sign
        # or zeros (0 bits: 0)
        b = Block()
        n = self.src_ir(b, inst, "b")
        n = b.op("IAnd32", n, b.const_u32(31)) if inst.mods["W"] else b.op("UMin32", n, b.const_u32(32))
        x = self.src_ir(b, inst, "a")
        z = b.const_u32(0)
        self.put_ir(b, inst, b.op("UBitExtract32" if inst.mods["U32"] == 0 else "SBitExtract32", x, z, n))
        ir_spirv.emit(self, b)

    def _unary_ir(self, inst: Inst, name: str) -> None:
        b = Block()
        self.put_ir(b, inst, b.op(name, self.src_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_iabs(self, inst: Inst) -> None:
        self._unary_ir(inst, "SAbs32")

    def op_popc(self, inst: Inst) -> None:
        self._unary_ir(inst, "BitCount32")

    def op_brev(self, inst: Inst) -> None:
        self._unary_ir(inst, "BitReverse32")

    def op_flo(self, inst: Inst) -> None:
        if inst.ops["pd"]["pred"] != 7:
            raise TranslateError(f"{inst.text()}: predicate out not supported", offset=inst.addr)
        b = Block()
        x = self.src_ir(b, inst, "b")
        self.put_ir(b, inst, b.emit("FindMsb32", x, signed=inst.mods["U32"] != 0, sh=bool(inst.mods["SH"])))
        ir_spirv.emit(self, b)

    def op_shf(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        self._shf_any(inst, d)

    def op_cs2r(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        # one invocation is one thread: only the zero register pair has a meaning here
        if inst.ops["sr"]["sr"] != 0xFF:
            raise TranslateError(f"{inst.text()}: special register pair not translated", offset=inst.addr)
        b = Block()
        for k in range(2 if inst.mods["w32"] else 1):
            if d != 255:
                b.set_reg(d + k, b.const_u32(0))
        ir_spirv.emit(self, b)

    def op_bmsk(self, inst: Inst) -> None:
        """BMSK / UBMSK a, b: PTX bmsk.clamp (.W: bmsk.wrap): the mask of b bits from bit a,
        as the PTX ISA's pseudo-code says (a1 = a & 31, b1 = b & 31; mask0 = ~0 << a1, 0 where
        .clamp and a >= 32; mask1 = 0 where a1 + b1 >= 32 or, .clamp, a >= 32 or b >= 32, else
        ~0 where b1 = 0, else ~0 << (a1 + b1); the result mask0 & ~mask1)."""
        b = Block()
        a, w = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")
        ones, k31, k32 = b.const_u32(0xFFFFFFFF), b.const_u32(31), b.const_u32(32)
        a1, b1 = b.op("IAnd32", a, k31), b.op("IAnd32", w, k31)
        s = b.op("IAdd32", a1, b1)
        mask0 = b.op("IShl32", ones, a1)
        over = b.op("UGe32", s, k32)
        if not inst.mods["W"]:
            a_big = b.op("UGe32", a, k32)
            mask0 = b.op("Select32", a_big, b.const_u32(0), mask0)
            over = b.op("LOr", over, b.op("LOr", a_big, b.op("UGe32", w, k32)))
        shl = b.op("IShl32", ones, b.op("UMin32", s, k31))  # (s < 32 where it is used)
        mask1 = b.op("Select32", b.op("IEq32", b1, b.const_u32(0)), ones, shl)
        mask1 = b.op("Select32", over, b.const_u32(0), mask1)
        self.put_ir(b, inst, b.op("IAnd32", mask0, b.op("INot32", mask1)))
        ir_spirv.emit(self, b)
