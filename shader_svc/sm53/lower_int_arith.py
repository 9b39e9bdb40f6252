"""SM53 integer arithmetic with carries (a mixin of ``lower_int.Int53``): IADD (a negated operand
and the carry chain of 64-bit sums and differences), IADD3, ISCADD/ISCADD32I, XMAD (the 16x16-bit
multiply-add ptxas builds 32-bit multiplies from, incl. .CSFU/.PSL/.MRG), IMUL/IMAD/IMAD32I and
LEA/LEA.HI.  Contract: each ``op_*`` lowers one decoded instruction into IR rows and emits them;
``.CC`` forms write the condition code's C/Z/S/O flags (``Lower53.add_cc_ir``) that the next
``.X`` form reads.  Facts: XMAD's modes from public descriptions (Ryujinx InstEmitIntegerArithmetic,
Mesa NAK); the carry/overflow rules from the PTX ISA's add.cc/addc/sub.cc (the overflow flag
as yuzu's flow tests define it); checked by the CUDA corpus (ptxas's own code against its
reference, tests/shader_svc/test_cuda_corpus.py) and tests/shader_svc/test_alu_forms.py."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53


class IntArith53(Lower53):
    """Mixin of ``lower_int.Int53`` (see the module's docstring)."""

    def _iadd_neg_carry(self, b: Block, inst: Inst, cc: bool) -> Value:
        """IADD with a negated operand and a carry: -x is ~x + 1 (its +1 reaches the carry, so
        0 - 0 carries out, as a subtraction without borrow does); with .X, -x is ~x and the
        carry-in completes the subtraction (borrow chains of 64-bit subtractions)."""
        x_mode = bool(inst.mods.get("X"))
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        s = b.const_u64(0)
        raws = []
        for n in ("a", "b"):
            neg = inst.ops[n].get("neg")
            raw = b.op("INot32", self.raw_ir(b, inst, n)) if neg else self.val_ir(b, inst, n)
            raws.append(raw)
            t = b.op("ZExt64", raw)
            if neg and not x_mode:
                t = b.op("IAdd64", t, b.const_u64(1))
            s = b.op("IAdd64", s, t)
        if x_mode:
            s = b.op("IAdd64", s, b.op("Select64", b.emit("GetFlag", flag="CC"), b.const_u64(1), b.const_u64(0)))
        r = b.op("Trunc32", s)
        if cc:
            self.set_carry_ir(b, s)
            self.set_zero_ir(b, r, x_mode)
            # the adder's inputs (~x for -x) of one sign and the result of the other (shader-u)
            o = b.op("IAnd32", b.op("IXor32", raws[0], r), b.op("IXor32", raws[1], r))
            b.emit("SetFlag", b.op("INe32", b.op("IShr32", o, b.const_u32(31)), b.const_u32(0)), flag="CCO")
        return r

    def _lea53(self, inst: Inst, cc: bool) -> None:
        """LEA: (a << s) + b; LEA.HI: the high word of (c:a) << s, plus b; .X adds the carry,
        .CC writes it (the 64-bit address pairs ptxas builds)."""
        ops, mods = inst.ops, inst.mods
        sh = ops["s"]["imm"]
        b = Block()
        a = self.val_ir(b, inst, "a")
        if inst.row.ir == "LEA_HI":
            v = b.op("Pack64", a, self.val_ir(b, inst, "c"))
            t = b.op("Trunc32", b.op("Shr64", b.op("Shl64", v, b.const_u64(sh)), b.const_u64(32)))
        else:
            t = b.op("IShl32", a, b.const_u32(sh))
        r = self.add_cc_ir(b, [t, self.val_ir(b, inst, "b")], bool(mods["X"]), cc)
        if ops["pd"]["pred"] != 7:
            # LEA.HI's predicate: the 64-bit generic address (the shifted low word, r above it)
            # is global, i.e. outside the shared window (ptxas builds a shared variable's generic
            # address as c[0x0][0x0] + offset, high word 0; 16 MiB, as LD/ST's window test).
            # Read from ptxas's own use: a generic atomic branches on it (@!P ATOMS on the low
            # word, otherwise ATOM.E); LD/ST take it as an operand and here go by the address
            # itself.  shader-nv: not "high word != 0": a Vulkan buffer's device address may lie
            # below 4 GiB (NVIDIA's do), and a global atomic went to shared memory there.
            if inst.row.ir != "LEA_HI":
                self.bad(inst, "LEA predicate output not translated yet")
            lo = b.op("Trunc32", b.op("Shl64", v, b.const_u64(sh)))
            rel = b.op("IAdd32", lo, b.op("INeg32", b.cbank_u32(0, 0x0, inst)))
            shared = b.op("LAnd", b.op("IEq32", r, b.const_u32(0)), b.op("LNot", b.op("UGe32", rel, b.const_u32(1 << 24))))
            b.set_pred(ops["pd"]["pred"], b.op("LNot", shared))
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    @staticmethod
    def _half(b: Block, full: Value, h1: bool, signed: bool) -> Value:
        sh = b.op("IShr32", full, b.const_u32(16)) if h1 else full
        if signed:
            return b.op("SBitExtract32", sh, b.const_u32(0), b.const_u32(16))
        return b.op("IAnd32", sh, b.const_u32(0xFFFF))

    def _xmad(self, inst: Inst, cc: bool) -> None:
        """XMAD: 16x16-bit product (+ shift by 16 with PSL) + C adjusted by the mode, then MRG
        puts B's low half on top (public descriptions: Ryujinx InstEmitIntegerArithmetic, NAK).
        .CSFU (C sign fix-up, ptxas's signed high products): C less 0x10000 for each of the two
        selected halves that is negative as a signed 16-bit value; the RC form (B a register at
        39, C a constant) has no PSL/MRG."""
        ops, mods = inst.ops, inst.mods
        b = Block()
        a_raw = b.get_reg(ops["a"]["reg"])
        b_raw = self.raw_ir(b, inst, "b")
        a16 = self._half(b, a_raw, ops["a"]["h1"], mods["sign"] in (1, 3))
        b16 = self._half(b, b_raw, inst.ops["b"].get("h1", False), mods["sign"] in (2, 3))
        p = b.op("IMul32", a16, b16)
        if mods.get("PSL"):
            p = b.op("IShl32", p, b.const_u32(16))
        cval = self.val_ir(b, inst, "c")
        mode = mods["mode"]
        if mode == 1:
            cval = b.op("IAnd32", cval, b.const_u32(0xFFFF))
        elif mode == 2:
            cval = b.op("IShr32", cval, b.const_u32(16))
        elif mode == 3:  # .CSFU: C less 0x10000 for each negative signed half (a16, b16 < 0)
            for h in (a16, b16):
                fix = b.op("IShl32", b.op("IShr32", h, b.const_u32(31)), b.const_u32(16))
                cval = b.op("ISub32", cval, fix)
        elif mode == 4:
            cval = b.op("IAdd32", cval, b.op("IShl32", b_raw, b.const_u32(16)))
        r = self.add_cc_ir(b, [p, cval], bool(mods["X"]), cc)
        if mods.get("MRG"):
            lo = b.op("IAnd32", r, b.const_u32(0xFFFF))
            r = b.op("IOr32", lo, b.op("IShl32", b_raw, b.const_u32(16)))
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def op_iadd(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        cc = bool(ops.get("d", {}).get("cc"))
        self.need(inst, SAT=0)
        b = Block()
        if (ops["a"].get("neg") or ops["b"].get("neg")) and (cc or mods.get("X")):
            r = self._iadd_neg_carry(b, inst, cc)
        else:
            x, y = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
            r = self.add_cc_ir(b, [x, y], bool(mods.get("X")), cc)
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def op_iadd3(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        cc = bool(ops.get("d", {}).get("cc"))
        b = Block()
        t = [self.val_ir(b, inst, n) for n in ("a", "b", "c")]
        if any(ops[n].get("neg") for n in ("a", "b", "c")) and (cc or mods.get("X")):
            self.bad(inst, "negated operand with carry not translated yet")
        if mods.get("mode", 0):  # .RS / .LS: the 33-bit a + b shifted by 16, then + c
            if cc or mods.get("X"):
                self.bad(inst, "IADD3 shift mode with carry not translated yet")
            x = b.op("ZExt64", t[0])
            ab = b.op("IAdd64", x, b.op("ZExt64", t[1]))
            r = b.op("Trunc32", b.op("Shr64" if mods["mode"] == 1 else "Shl64", ab, b.const_u64(16)))
            r = b.op("IAdd32", r, t[2])
        else:
            r = self.add_cc_ir(b, t, bool(mods.get("X")), cc)
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def op_iscadd(self, inst: Inst) -> None:
        ops = inst.ops
        cc = bool(ops.get("d", {}).get("cc"))
        b = Block()
        a = b.op("IShl32", self.val_ir(b, inst, "a"), b.const_u32(ops["s"]["imm"]))
        if ops["a"].get("neg") and cc:
            self.bad(inst, "negated operand with carry not translated yet")
        self.put_ir(b, inst, self.add_cc_ir(b, [a, self.val_ir(b, inst, "b")], False, cc))
        ir_spirv.emit(self, b)

    def op_xmad(self, inst: Inst) -> None:
        self._xmad(inst, bool(inst.ops.get("d", {}).get("cc")))

    def _product_ir(self, b: Block, inst: Inst) -> Value:
        """IMUL/IMAD's product: the two 32-bit sources widened by their signedness, multiplied
        to 64 bits, its high word with .HI (still as u64)."""
        mods = inst.mods
        sa, sb = mods["sign"] & 1, mods["sign"] >> 1
        x = b.op("SExt64" if sa else "ZExt64", self.val_ir(b, inst, "a"))
        p = b.op("IMul64", x, b.op("SExt64" if sb else "ZExt64", self.val_ir(b, inst, "b")))
        if mods["HI"]:
            p = b.op("Shr64", p, b.const_u64(32))
        return p

    def op_imul(self, inst: Inst) -> None:
        if inst.ops.get("d", {}).get("cc"):
            self.bad(inst, "IMUL with the condition code not translated yet")
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        b = Block()
        self.put_ir(b, inst, b.op("Trunc32", self._product_ir(b, inst)))
        ir_spirv.emit(self, b)

    def op_imad(self, inst: Inst) -> None:
        ops, mods = inst.ops, inst.mods
        cc = bool(ops.get("d", {}).get("cc"))
        # the low (or .HI high) word of the 64-bit product, plus c (+ the carry with .X);
        # .CC takes the carry out of that 32-bit sum, as -G's 64-bit multiply chains need
        self.need(inst, SAT=0)
        if ops["a"].get("neg") or ops["c"].get("neg"):
            self.bad(inst, "IMAD with a negated operand not translated yet")
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        b = Block()
        p = b.op("Trunc32", self._product_ir(b, inst))
        self.put_ir(b, inst, self.add_cc_ir(b, [p, self.val_ir(b, inst, "c")], bool(mods["X"]), cc))
        ir_spirv.emit(self, b)

    def op_lea(self, inst: Inst) -> None:
        self._lea53(inst, bool(inst.ops.get("d", {}).get("cc")))

    # --- shader-u (issue 31): the last integer and predicate rows --------------------------------
    def op_imad32i(self, inst: Inst) -> None:
        """IMAD32I d, a, imm, c (c is d's register): IMAD with a 32-bit immediate B; the types
        as IMAD's (.S32.U32: a signed; '' both), .HI the product's high word, .CC the carry and
        zero flags of the add.  Negated operands are refused, as IMAD's."""
        ops, mods = inst.ops, inst.mods
        if ops["a"].get("neg") or ops["c"].get("neg"):
            self.bad(inst, "IMAD32I with a negated operand not translated yet")
        sa, sb = mods["types"] & 1, mods["types"] >> 1
        b = Block()
        if mods["HI"]:
            self.u64
            x = b.op("SExt64" if sa else "ZExt64", self.val_ir(b, inst, "a"))
            p = b.op("IMul64", x, b.op("SExt64" if sb else "ZExt64", self.val_ir(b, inst, "b")))
            lo = b.op("Trunc32", b.op("Shr64", p, b.const_u64(32)))
        else:  # the low word is the same for every type: 32-bit words (graphics stages have no Int64)
            lo = b.op("IMul32", self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b"))
        terms = [lo, self.val_ir(b, inst, "c")]
        self.put_ir(b, inst, self.add_cc_ir(b, terms, False, bool(ops["d"].get("cc"))))
        ir_spirv.emit(self, b)
