"""SM53 integer instructions: IADD/IADD3/ISCADD with the condition code, XMAD (the 16x16-bit
multiply-add ptxas builds 32-bit multiplies from), IMUL/IMAD, LEA, shifts (SHL/SHR/SHF), LOP/LOP3,
comparisons (ISETP incl. .X, ICMP, PSETP), IMNMX, SEL, BFE/BFI, PRMT, POPC, FLO, I2I, MOV, S2R."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.operands import SREG_BUILTINS
from shader_svc.lower.base import TranslateError
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53


# issue 31's later integer rows (shader-alu): lowering key -> handler, merged into
# ``to_spirv.Compute53.RULES``
INT_RULES = {
    "XMAD.RC": "op_xmad",
    "VABSDIFF": "op_video",
    "VMNMX": "op_video",
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
}
# The condition code as this lowering keeps it: Z (CCZ), S (CCS, the result's sign), C (CC, the
# carry) and O (CCO, the signed overflow: the sum of the adder's inputs, sign-extended, out of
# the 32-bit range; logic results clear it).  Tests (Maxwell's 5-bit field, sm53/table.CC_TESTS)
# as formulas of the flags (public: yuzu's shader_recompiler flow-test evaluation, envytools' cc
# table); the CSM_* tests (24..29) are refused.
CC_TESTS_IR = {
    0: lambda z, s, c, o, b: b.const_bool(False),  # F
    1: lambda z, s, c, o, b: b.op("LXor", b.op("LAnd", s, b.op("LNot", z)), o),  # LT
    2: lambda z, s, c, o, b: b.op("LAnd", b.op("LNot", s), z),  # EQ
    3: lambda z, s, c, o, b: b.op("LXor", s, b.op("LOr", z, o)),  # LE
    4: lambda z, s, c, o, b: b.op("LAnd", b.op("LXor", b.op("LNot", s), o), b.op("LNot", z)),  # GT
    5: lambda z, s, c, o, b: b.op("LNot", z),  # NE
    6: lambda z, s, c, o, b: b.op("LNot", b.op("LXor", s, o)),  # GE
    7: lambda z, s, c, o, b: b.op("LOr", b.op("LNot", s), b.op("LNot", z)),  # NUM
    8: lambda z, s, c, o, b: b.op("LAnd", s, z),  # NAN
    9: lambda z, s, c, o, b: b.op("LXor", s, o),  # LTU
    10: lambda z, s, c, o, b: z,  # EQU
    11: lambda z, s, c, o, b: b.op("LOr", b.op("LXor", s, o), z),  # LEU
    12: lambda z, s, c, o, b: b.op("LXor", b.op("LNot", s), b.op("LOr", z, o)),  # GTU
    13: lambda z, s, c, o, b: b.op("LOr", s, b.op("LNot", z)),  # NEU
    14: lambda z, s, c, o, b: b.op("LXor", b.op("LOr", b.op("LNot", s), z), o),  # GEU
    15: lambda z, s, c, o, b: b.const_bool(True),  # T
    16: lambda z, s, c, o, b: b.op("LNot", o),  # OFF
    17: lambda z, s, c, o, b: b.op("LNot", c),  # LO
    18: lambda z, s, c, o, b: b.op("LNot", s),  # SFF
    19: lambda z, s, c, o, b: b.op("LOr", z, b.op("LNot", c)),  # LS
    20: lambda z, s, c, o, b: b.op("LAnd", c, b.op("LNot", z)),  # HI
    21: lambda z, s, c, o, b: s,  # SFT
    22: lambda z, s, c, o, b: c,  # HS
    23: lambda z, s, c, o, b: o,  # OFT
    30: lambda z, s, c, o, b: b.op("LOr", s, z),  # RLE
    31: lambda z, s, c, o, b: b.op("LAnd", b.op("LNot", s), b.op("LNot", z)),  # RGT
}
CC_FLAGS = ("CCZ", "CCS", "CC", "CCO")  # P2R/R2P CC: bits 0, 1, 2, 3


class Int53(Lower53):
    """Mixin of ``to_spirv.Compute53``: the integer handlers and their helpers."""

    def lowered(self, ir: str) -> bool:
        return ir in INT_RULES or super().lowered(ir)

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
            # LEA.HI's predicate: the high word of a 64-bit generic address is not 0, i.e. the
            # address is global (shared and local windows lie below 4 GiB: ptxas builds a
            # shared variable's generic address as c[0x0][0x0] + offset, high word 0).  Read from
            # ptxas's own use: a generic atomic branches on it (@!P ATOMS on the low word,
            # otherwise ATOM.E); LD/ST take it as an operand and here go by the address itself.
            if inst.row.ir != "LEA_HI":
                self.bad(inst, "LEA predicate output not translated yet")
            b.set_pred(ops["pd"]["pred"], b.op("INe32", r, b.const_u32(0)))
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def _i2i(self, inst: Inst) -> None:
        """I2I between 8/16/32-bit integer types: the source field (byte select .B1..B3) extended
        by its sign, |x| / -x, then the destination width, saturated with .SAT."""
        mods, v = inst.mods, inst.ops["b"]
        widths = {0: 8, 1: 16, 2: 32, 4: 8, 5: 16, 6: 32}
        if mods["src"] not in widths or mods["dst"] not in widths:
            self.bad(inst, "64-bit I2I not translated yet")
        sw, ssig = widths[mods["src"]], mods["src"] >= 4
        dw, dsig = widths[mods["dst"]], mods["dst"] >= 4
        b = Block()
        raw = b.get_reg(v["reg"]) if "reg" in v else b.cbank_u32(v["bank"], v["off"], inst)
        x = self._int_field(b, raw, v, sw, ssig)
        if v.get("abs") and ssig:
            x = b.op("SAbs32", x)
        if v.get("neg"):
            x = b.op("INeg32", x)
        signed_val = ssig or bool(v.get("neg"))
        if mods["SAT"]:
            lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dsig else (0, (1 << dw) - 1)
            if signed_val:
                x = b.op("SMax32", x, b.const_u32(lo))
                if not (dsig and dw == 32) and hi < 2**31:
                    x = b.op("SMin32", x, b.const_u32(hi))
            else:
                x = b.op("UMin32", x, b.const_u32(hi))
        if dw < 32:
            z = b.const_u32(0)
            x = b.op("SBitExtract32" if dsig else "UBitExtract32", x, z, b.const_u32(dw))
        self.put_ir(b, inst, x)
        if inst.ops["d"].get("cc"):
            self.logic_cc_ir(b, x)
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

    @staticmethod
    def _icmp(b: Block, inst: Inst, x: Value, y: Value) -> Value:
        return b.emit("ICmp32", x, y, cmp=inst.mods["cmp"], unsigned=inst.mods["u32"] == 0)

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

    # --- instructions (to_spirv.Compute53.RULES) ---------------------------------------------
    def op_nop(self, inst: Inst) -> None:
        """NOP: nothing to do."""

    def op_mov(self, inst: Inst) -> None:
        b = Block()
        self.put_ir(b, inst, self.val_ir(b, inst, "b"))
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

    def op_i2i(self, inst: Inst) -> None:
        self._i2i(inst)

    # --- video ops (VABSDIFF, VMNMX) ------------------------------------------------------
    def _vsrc64(self, b: Block, inst: Inst, name: str, t: int) -> Value:
        """A video op's source as a 64-bit integer: the byte (sel 0..3), half (4, 5) or word (6)
        the type ``t`` selects (sel | sign << 3), extended by its sign or zeros."""
        sel, signed = t & 7, bool(t >> 3)
        x = self.raw_ir(b, inst, name)
        if sel < 6:
            off, w = (8 * sel, 8) if sel < 4 else (16 * (sel - 4), 16)
            x = b.op("SBitExtract32" if signed else "UBitExtract32", x, b.const_u32(off), b.const_u32(w))
        return b.op("SExt64" if signed else "ZExt64", x)

    @staticmethod
    def _lt64(b: Block, x: Value, y: Value) -> Value:
        """x < y for 64-bit values that are 33-bit integers (extended bytes/halves/words): the
        difference's sign."""
        d = b.op("IAdd64", x, b.op("IMul64", y, b.const_u64(2**64 - 1)))
        return b.op("INe64", b.op("Shr64", d, b.const_u64(63)), b.const_u64(0))

    def op_video(self, inst: Inst) -> None:
        """VABSDIFF (|a - b|) and VMNMX (min, or max with .MX, of a and b), each operand a
        byte/half/word of its type (PTX ISA: vabsdiff / vmin / vmax, scalar forms), then the
        second step with C: .ACC adds it, .MIN/.MAX compare with it (unsigned with .UD, or
        without VABSDIFF's .SD), .MRG_16H/.MRG_16L write the result's low half into C's high or
        low half; no step: the result alone.  Refused: .SAT and the .CC destination."""
        mods = inst.mods
        self.need(inst, SAT=0)
        if inst.ops["d"].get("cc"):
            self.bad(inst, "video op with the condition code not translated yet")
        b = Block()
        x, y = self._vsrc64(b, inst, "a", mods["ta"]), self._vsrc64(b, inst, "b", mods["tb"])
        lt = self._lt64(b, x, y)
        if inst.row.ir == "VABSDIFF":
            neg1 = b.const_u64(2**64 - 1)
            d = b.op("Select64", lt, b.op("IAdd64", y, b.op("IMul64", x, neg1)), b.op("IAdd64", x, b.op("IMul64", y, neg1)))
            signed_d = bool(mods["SD"])
        else:
            d = b.op("Select64", b.op("LXor", lt, b.const_bool(bool(mods["MX"]))), x, y)
            signed_d = mods["UD"] == 1
        r = b.op("Trunc32", d)
        step = mods["step"]
        c = self.val_ir(b, inst, "c")
        if step == 4:
            r = b.op("IAdd32", r, c)
        elif step in (5, 6):
            kind = ("S" if signed_d else "U") + ("Min32" if step == 5 else "Max32")
            r = b.op(kind, r, c)
        elif step == 0:
            r = b.op("IOr32", b.op("IAnd32", c, b.const_u32(0xFFFF)), b.op("IShl32", r, b.const_u32(16)))
        elif step == 1:
            r = b.op("IOr32", b.op("IAnd32", c, b.const_u32(0xFFFF0000)), b.op("IAnd32", r, b.const_u32(0xFFFF)))
        elif step != 7:
            self.bad(inst, "video op step not translated yet")
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    # --- the condition code as a value: CSETP, CSET, P2R/R2P CC, and its logic writers --------
    def cc_test_ir(self, b: Block, inst: Inst, test: int) -> Value:
        """A condition-code test (``CC_TESTS_IR``) as a boolean; the CSM_* tests are refused."""
        f = CC_TESTS_IR.get(test)
        if f is None:
            self.bad(inst, "condition-code test CSM_* not translated")
        z, s, c, o = (b.emit("GetFlag", flag=n) for n in CC_FLAGS)
        return f(z, s, c, o, b)

    @staticmethod
    def logic_cc_ir(b: Block, r: Value) -> None:
        """.CC of a logic/conversion result (LOP, LOP3, I2I, ISET): Z and S of ``r``, C and O
        cleared."""
        b.emit("SetFlag", b.op("IEq32", r, b.const_u32(0)), flag="CCZ")
        b.emit("SetFlag", b.op("INe32", b.op("IShr32", r, b.const_u32(31)), b.const_u32(0)), flag="CCS")
        b.emit("SetFlag", b.const_bool(False), flag="CC")
        b.emit("SetFlag", b.const_bool(False), flag="CCO")

    def op_csetp(self, inst: Inst) -> None:
        b = Block()
        self.setp_ir(b, inst, self.cc_test_ir(b, inst, inst.mods["test"]))
        ir_spirv.emit(self, b)

    def op_cset(self, inst: Inst) -> None:
        if inst.ops["d"].get("cc"):
            self.bad(inst, "CSET with the condition code not translated yet")
        b = Block()
        pc = inst.ops["pc"]
        r = b.op(
            ("LAnd", "LOr", "LXor")[inst.mods["bop"]],
            self.cc_test_ir(b, inst, inst.mods["test"]),
            b.get_pred(pc["pred"], pc["not"]),
        )
        true = b.const_u32(0x3F800000 if inst.mods["BF"] else 0xFFFFFFFF)
        self.put_ir(b, inst, b.op("Select32", r, true, b.const_u32(0)))
        ir_spirv.emit(self, b)

    def op_p2r(self, inst: Inst) -> None:
        """P2R Rd, CC, Ra, mask: Ra with the bits of ``mask << 8*bsel`` replaced by the flags
        (Z 1, S 2, C 4, O 8) masked and shifted alike.  The PR form is refused."""
        if inst.ops["pr"]["sym"] != 1:
            self.bad(inst, "P2R PR not translated yet")
        b = Block()
        bits = b.const_u32(0)
        for i, n in enumerate(CC_FLAGS):
            bits = b.op("IOr32", bits, b.op("Select32", b.emit("GetFlag", flag=n), b.const_u32(1 << i), b.const_u32(0)))
        sh = b.const_u32(8 * inst.mods["bsel"])
        mask = b.op("IShl32", self.val_ir(b, inst, "b"), sh)
        keep = b.op("IAnd32", self.val_ir(b, inst, "a"), b.op("INot32", mask))
        self.put_ir(b, inst, b.op("IOr32", keep, b.op("IAnd32", b.op("IShl32", bits, sh), mask)))
        ir_spirv.emit(self, b)

    def op_r2p(self, inst: Inst) -> None:
        """R2P CC, Ra, mask: each flag whose mask bit is set (Z 1, S 2, C 4, O 8) takes Ra's
        bit.  The PR form is refused."""
        if inst.ops["pr"]["sym"] != 1:
            self.bad(inst, "R2P PR not translated yet")
        b = Block()
        a, mask = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b")
        for i, n in enumerate(CC_FLAGS):
            bit = b.const_u32(1 << i)
            on = b.op("INe32", b.op("IAnd32", mask, bit), b.const_u32(0))
            v = b.op("INe32", b.op("IAnd32", a, bit), b.const_u32(0))
            b.emit("SetFlag", b.op("LOr", b.op("LAnd", on, v), b.op("LAnd", b.op("LNot", on), b.emit("GetFlag", flag=n))), flag=n)
        ir_spirv.emit(self, b)

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

    def op_cs2r(self, inst: Inst) -> None:
        """CS2R: S2R's read of the same special registers (nvdisasm 11.8 decodes the same set:
        the lane id, thread and block ids, SR_LMEMHIOFF, SR_LTMASK), so S2R's lowering."""
        self.op_s2r(inst)

    def op_vabsdiff4(self, inst: Inst) -> None:
        """VABSDIFF4 (PTX vabsdiff4): per byte |Va - Vb| of the bytes a's and b's selectors pick
        from the eight bytes of {b, a} (a's bytes 0..3, b's 4..7; a selector's digits name the
        source of result bytes 3..0, defaults .3210 and .7654), each extended by its operand's
        sign (.U8/.S8); .ACC adds the bytes the mask (.X = byte 0 ... .W = byte 3) selects to c,
        without it those bytes are written and the others come from c (PTX's SIMD merge).
        Refused: .SAT and the .CC destination."""
        mods, ops = inst.mods, inst.ops
        self.need(inst, SAT=0)
        if ops["d"].get("cc"):
            self.bad(inst, "VABSDIFF4 with the condition code not translated yet")
        row = {o.name: o for o in inst.row.operands}
        b = Block()
        x, y, c = self.val_ir(b, inst, "a"), self.val_ir(b, inst, "b"), self.val_ir(b, inst, "c")

        def picked(name: str, signed: bool) -> list[Value]:
            text = dict(row[name].sel4[1])[ops[name]["sel4"]] or (".3210" if name == "a" else ".7654")
            src = [int(ch) for ch in text[1:]][::-1]  # result byte 0 first
            op = "SBitExtract32" if signed else "UBitExtract32"
            return [b.op(op, x if k < 4 else y, b.const_u32(8 * (k & 3)), b.const_u32(8)) for k in src]

        va, vb = picked("a", bool(mods["signs"] & 1)), picked("b", bool(mods["signs"] & 2))
        diffs = [b.op("SAbs32", b.op("ISub32", p, q)) for p, q in zip(va, vb)]
        mask = mods["mask"]
        if mods["red"]:
            r = c
            for k, dk in enumerate(diffs):
                if mask >> k & 1:
                    r = b.op("IAdd32", r, dk)
        else:
            keep = sum(0xFF << (8 * k) for k in range(4) if not mask >> k & 1)
            r = b.op("IAnd32", c, b.const_u32(keep))
            for k, dk in enumerate(diffs):
                if mask >> k & 1:
                    r = b.op("IOr32", r, b.op("IShl32", b.op("IAnd32", dk, b.const_u32(0xFF)), b.const_u32(8 * k)))
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)
