"""SM53 floating-point instructions: FADD/FMUL/FFMA (exactly rounded FFMA, .FTZ, .SAT), FMNMX,
FSETP, I2F/F2I/F2F of every width with directed rounding, RRO + MUFU, and FP64 (DADD/DMUL/DFMA
with the exact DFMA of ``lower/semantics.py``, DSETP; double immediates are the top 20 bits)."""

from __future__ import annotations

import struct

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower import half_ir
from shader_svc.lower.half_ir import directed_f64_ir
from shader_svc.lower.swizzle_add import fswzadd_ir
from shader_svc.lower.base import TranslateError
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53


def _f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


FP32_OPS = {"FADD": "FAdd32", "FMUL": "FMul32"}  # FFMA: the lowering's choice (fp32_ir)
# MUFU's function field (both ISAs) -> IR: COS, SIN, EX2, LG2, RCP, RSQ, RCP64H, RSQ64H, SQRT
MUFU = {0: "Cos32", 1: "Sin32", 2: "Exp2_32", 3: "Log2_32", 4: "FDiv32", 5: "RSqrt32", 6: "Rcp64H", 7: "RSqrt64H", 8: "Sqrt32"}


# issue 31's later float rows (shader-alu): lowering key -> handler, merged into Compute53.RULES
FLOAT_RULES = {"HSET2": "op_hset2", "FCMP": "op_fcmp", "FSWZADD": "op_fswzadd"}  # FCMP: shader-u; FSWZADD: shader-u2
# FSWZADD's field values as nvdisasm prints them (sm53/table.py _SWZ_PAIR): sign of a, sign of b
FSWZ_LETTERS53 = ("PP", "NP", "PN", "ZP")


class Float53(Lower53):
    """Mixin of ``to_spirv.Compute53``: the floating-point handlers and their helpers."""

    def lowered(self, ir: str) -> bool:
        return ir in FLOAT_RULES or super().lowered(ir)

    def dval(self, inst: Inst, name: str) -> int:
        """A double operand: ``dval_ir`` lowered at once."""
        b = Block()
        return ir_spirv.emit_value(self, b, self.dval_ir(b, inst, name))

    def dval_ir(self, b: Block, inst: Inst, name: str) -> Value:
        """A double operand as an f64 IR value: a register pair, a bank's two words, or a 20-bit
        immediate (the double's top bits), with its neg/abs.  (The f64 type is declared now,
        before the block is lowered, where this lowering always declared it: the module's ids
        stay where they were.)"""
        v = inst.ops[name]
        self.f64t
        if "imm" in v:
            x = b.emit("ConstF64", bits=v["imm"])
        elif "bank" in v:
            x = b.op("PackF64", b.cbank_u32(v["bank"], v["off"], inst), b.cbank_u32(v["bank"], v["off"] + 4, inst))
        elif v["reg"] == 255:
            x = b.emit("ConstF64", bits=0)
        else:
            x = b.op("PackF64", b.get_reg(v["reg"]), b.get_reg(v["reg"] + 1))
        if v.get("abs"):
            x = b.op("FAbs64", x)
        if v.get("neg"):
            x = b.op("FNeg64", x)
        return x

    def _i2f53(self, inst: Inst, d: int) -> None:
        """I2F from 8/16/32/64-bit integers (byte select, |x|, -x) to F32 or F64, rounded to
        nearest or directed (.RM/.RP/.RZ: ptxas's division estimates use .RP); to F16 from up to
        32 bits (exact in f64, then rounded once)."""
        mods = inst.mods
        widths = {0: 8, 1: 16, 2: 32, 3: 64, 4: 8, 5: 16, 6: 32, 7: 64}
        w, signed = widths[mods["src"]], mods["src"] >= 4
        if mods["dst"] not in (1, 2, 3) or (mods["dst"] == 1 and w == 64):
            self.bad(inst, "F16 result of a 64-bit integer not translated yet")
        v = inst.ops["b"]
        b = Block()
        raw = b.get_reg(v["reg"]) if "reg" in v else b.cbank_u32(v["bank"], v["off"], inst)
        if w == 64:
            if v.get("abs") or v.get("neg") or "reg" not in v:
                self.bad(inst, "64-bit source form not translated yet")
            x = b.op("Pack64", raw, b.get_reg(v["reg"] + 1) if v["reg"] != 255 else b.const_u32(0))
        else:
            x = self._int_field(b, raw, v, w, signed)
            if v.get("abs") and signed:
                x = b.op("SAbs32", x)
            if v.get("neg"):
                x = b.op("INeg32", x)
        wide = w == 64
        if mods["dst"] == 1:  # F16: the integer is exact in f64, rounded once to a half (zero-extended)
            b.set_reg(d, b.emit("F16FromF64", b.emit("I2F64", x, signed=signed), rnd=mods["rnd"]))
            ir_spirv.emit(self, b)
            return
        if mods["dst"] == 3:
            if mods["rnd"] and wide:
                self.bad(inst, "directed rounding of a 64-bit integer to F64 not translated yet")
            self.put64_ir(b, d, b.op("BitcastU64", b.emit("I2F64From64" if wide else "I2F64", x, signed=signed)))
            ir_spirv.emit(self, b)
            return
        f = b.emit("I2F32From64" if wide else "I2F32", x, signed=signed)
        if mods["rnd"]:
            f = b.emit("RoundDirectedF32From64" if wide else "RoundDirectedF32", f, x, rnd=mods["rnd"], signed=signed, inst=inst)
        b.set_reg(d, b.op("BitcastU32", f))
        ir_spirv.emit(self, b)

    def _f2i53(self, inst: Inst) -> None:
        """F2I with FLOOR/CEIL/TRUNC from F32 or F64: round, saturate to the range, NaN -> 0 (as
        NVIDIA).  .FTZ flushes a denormal source to a zero of its sign first."""
        mods = inst.mods
        rnd, d = mods["rnd"], inst.ops.get("d", {}).get("reg", 255)
        b = Block()
        if mods["src"] == 2:
            x = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
            if mods["FTZ"]:
                x = b.op("FFlushDenorm32", x)
            if mods["dst"] in (2, 6):
                self.put_ir(b, inst, b.emit("F2ISat32", x, rnd=rnd, signed=mods["dst"] == 6))
                ir_spirv.emit(self, b)
                return
            if mods["dst"] in (1, 5):  # .U16/.S16 (shader-u2): saturated to the type, as a 32-bit integer
                v = b.emit("F2ISat32", x, rnd=rnd, signed=mods["dst"] == 5)
                if mods["dst"] == 5:
                    v = b.op("SMax32", b.op("SMin32", v, b.const_u32(32767)), b.const_u32(-32768 & 0xFFFFFFFF))
                else:
                    v = b.op("UMin32", v, b.const_u32(65535))
                self.put_ir(b, inst, v)
                ir_spirv.emit(self, b)
                return
            # (the 64-bit results read the operand again, unflushed, as this lowering always has)
            ir_spirv.emit(self, b)
            b = Block()
        # F64 source or 64-bit result: round, then saturate in double (the bounds are exact there)
        self.f64t
        signed = mods["dst"] in (6, 7)
        if mods["src"] == 2:
            x = b.op("CvtF64", b.emit("RoundF32", b.op("BitcastF32", self.val_ir(b, inst, "b", True)), rnd=rnd))
        else:
            x = b.emit("RoundF64", self.dval_ir(b, inst, "b"), rnd=rnd)
        if mods["dst"] in (3, 7):
            self.put64_ir(b, d, b.emit("F2ISatF64To64", x, signed=signed))
        else:
            self.put_ir(b, inst, b.emit("F2ISatF64To32", x, signed=signed))
        ir_spirv.emit(self, b)

    def _f2f(self, inst: Inst) -> None:
        """F2F: F32 <-> F64 (``_f2f_wide``); F32 -> F16 rounded as .RM/.RP/.RZ say (.FTZ flushes
        the source, .SAT clamps it to [0, 1] first: the same half), written zero-extended;
        F16 (.H1: the high half) -> F32, exact (.FTZ flushes a half denormal, then -x/|x|,
        .SAT).  In integer arithmetic (``lower/half.py``): no device conversion relied on."""
        mods = inst.mods
        pair = (mods["dst"], mods["src"])
        if pair in ((2, 2), (3, 3), (2, 3), (3, 2)):
            self._f2f_wide(inst, pair)
            return
        b = Block()
        if pair == (1, 2):
            if mods["rnd"] > 3:
                self.bad(inst, "F2F.F16 rounding to an integral value not translated")
            x = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
            x = b.op("FFlushDenorm32", x) if mods["FTZ"] else x
            x = b.op("FSaturate32", x) if mods["SAT"] else x
            self.put_ir(b, inst, b.emit("F16FromF32", x, rnd=mods["rnd"]))
        elif pair == (2, 1):
            self.need(inst, rnd=0)
            v = inst.ops["b"]
            x = b.emit("UnpackF16", self.raw_ir(b, inst, "b"), lane=1 if v.get("h1") else 0)
            x = b.op("FFlushDenormF16", x) if mods["FTZ"] else x
            x = b.op("FAbs32", x) if v.get("abs") else x
            x = b.op("FNeg32", x) if v.get("neg") else x
            x = b.op("FSaturate32", x) if mods["SAT"] else x
            self.put_ir(b, inst, b.op("BitcastU32", x))
        else:
            raise TranslateError(f"{inst.text()}: conversion not translated yet", offset=inst.addr)
        ir_spirv.emit(self, b)

    def _f2f_wide(self, inst: Inst, pair: tuple[int, int]) -> None:
        """F2F between F32/F64: .ROUND/.FLOOR/.CEIL/.TRUNC (rnd 4..7) round to an integral value
        in the same type; F32 -> F64 is exact, F64 -> F32 rounds to nearest even (OpFConvert is
        correctly rounded in Vulkan); .FTZ flushes an F32 source; directed narrowing, .SAT and
        a denormal-flushing F64 are refused."""
        mods = inst.mods
        self.need(inst, SAT=0)
        b = Block()
        if pair[1] == 2:
            x = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
            if mods["FTZ"]:
                x = b.op("FFlushDenorm32", x)
        else:
            self.need(inst, FTZ=0)
            x = self.dval_ir(b, inst, "b")
        if pair[0] == pair[1]:
            if mods["rnd"] < 4:
                self.bad(inst, "F2F to the same type other than rounding to an integral value")
            r = b.emit("RoundF32" if pair[0] == 2 else "RoundF64", x, rnd=mods["rnd"] - 4)
        else:
            if mods["rnd"]:
                self.bad(inst, "F2F with a directed rounding between F32 and F64 not translated yet")
            r = b.op("CvtF32" if pair[0] == 2 else "CvtF64", x)
        if pair[0] == 2:
            self.put_ir(b, inst, b.op("BitcastU32", r))
        else:
            v = b.op("BitcastU64", r)
            if inst.ops["d"]["reg"] != 255:
                self.put64_ir(b, inst.ops["d"]["reg"], v)
        ir_spirv.emit(self, b)

    # --- instructions (to_spirv.Compute53.RULES) ---------------------------------------------
    def op_fp32(self, inst: Inst) -> None:
        self.need(inst, rnd=0, scale=0)
        if inst.ops["d"].get("cc"):
            self.bad(inst, "condition code from FP not translated yet")
        ftz = inst.mods.get("ftz", inst.mods.get("FTZ", 0))
        self.fp32_ir(inst, "FFma32", ftz)  # (2: .FMZ, see fp32_ir)

    def fp32_ir(self, inst: Inst, fma: str, ftz: int) -> None:
        """FADD / FMUL / FFMA (``fma``: the IR operation FFMA becomes) with .FTZ on the operands
        and the result, then .SAT, in IR."""
        b = Block()

        def operand(name: str) -> Value:
            x = b.op("BitcastF32", self.val_ir(b, inst, name, True))
            return b.op("FFlushDenorm32", x) if ftz else x

        x, y = operand("a"), operand("b")
        r = b.op(fma, x, y, operand("c")) if inst.row.ir == "FFMA" else b.op(FP32_OPS[inst.row.ir], x, y)
        if ftz == 2 and inst.row.ir in ("FMUL", "FFMA"):
            # .FMZ (shader-u): .FTZ, and a product with a zero factor is +0 whatever the other
            # (infinity, NaN): FMUL gives +0, FFMA 0 + c (the D3D9 'legacy' multiply; Mesa's
            # nv50_ir 'dnz' flag, the field value beside .FTZ)
            zero = b.emit("ConstF32", bits=0)
            z = b.op("LOr", b.emit("FCmp32", x, zero, cmp=2), b.emit("FCmp32", y, zero, cmp=2))
            alt = b.const_u32(0)
            if inst.row.ir == "FFMA":  # 0 + c: c, or +0 for a zero c (not an FAdd: a device may
                c = operand("c")  # fold x + 0.0 to x, losing -0 + +0 = +0)
                alt = b.op("Select32", b.emit("FCmp32", c, zero, cmp=2), alt, b.op("BitcastU32", c))
            r = b.op("BitcastF32", b.op("Select32", z, alt, b.op("BitcastU32", r)))
        if ftz:
            r = b.op("FFlushDenorm32", r)
        if inst.mods.get("SAT", 0):
            r = b.op("FSaturate32", r)
        self.put_ir(b, inst, b.op("BitcastU32", r))
        ir_spirv.emit(self, b)

    def op_fmnmx(self, inst: Inst) -> None:
        self.need(inst, FTZ=0)
        b = Block()
        x = b.op("BitcastF32", self.val_ir(b, inst, "a", True))
        y = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
        pc = inst.ops["pc"]
        self.put_ir(b, inst, b.op("BitcastU32", b.op("FMinMax32", x, y, b.get_pred(pc["pred"], pc["not"]))))
        ir_spirv.emit(self, b)

    def op_fsetp(self, inst: Inst) -> None:
        """FSETP; .FTZ compares the operands with their denormals flushed (as SM86's FSETP)."""
        ftz = inst.mods["FTZ"]
        b = Block()
        x = b.op("BitcastF32", self.val_ir(b, inst, "a", True))
        y = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
        if ftz:
            x, y = b.op("FFlushDenorm32", x), b.op("FFlushDenorm32", y)
        self.setp_ir(b, inst, b.emit("FCmp32", x, y, cmp=inst.mods["cmp"]))
        ir_spirv.emit(self, b)

    def op_i2f(self, inst: Inst) -> None:
        ops = inst.ops
        dv = ops.get("d", {})
        d = dv.get("reg", 255)
        self._i2f53(inst, d)

    def op_dadd(self, inst: Inst) -> None:
        b = Block()
        x, y = self.dval_ir(b, inst, "a"), self.dval_ir(b, inst, "b")
        if inst.mods.get("rnd"):  # .RM/.RP/.RZ: exactly, through the directed DFMA
            z = self.dval_ir(b, inst, "c") if inst.row.ir == "DFMA" else None
            r = directed_f64_ir(b, inst.row.ir, inst.mods["rnd"], x, y, z)
        elif inst.row.ir == "DFMA":
            r = b.op("FFma64", x, y, self.dval_ir(b, inst, "c"))
        else:
            r = b.op("FAdd64" if inst.row.ir == "DADD" else "FMul64", x, y)
        self.put64_ir(b, inst.ops.get("d", {}).get("reg", 255), b.op("BitcastU64", r))
        ir_spirv.emit(self, b)

    def op_dsetp(self, inst: Inst) -> None:
        b = Block()
        x, y = self.dval_ir(b, inst, "a"), self.dval_ir(b, inst, "b")
        self.setp_ir(b, inst, b.emit("FCmp64", x, y, cmp=inst.mods["cmp"]))
        ir_spirv.emit(self, b)

    def op_f2i(self, inst: Inst) -> None:
        mods = inst.mods
        if mods["src"] not in (2, 3):
            self.bad(inst, "F16 source not translated yet")
        if mods["dst"] not in (2, 3, 6, 7) and not (mods["dst"] in (1, 5) and mods["src"] == 2):
            self.bad(inst, "integer result type not translated yet")
        self._f2i53(inst)

    def op_f2f(self, inst: Inst) -> None:
        self._f2f(inst)

    def op_rro(self, inst: Inst) -> None:
        # range reduction is folded into MUFU: RRO.SINCOS scales by 1/(2 pi), MUFU.SIN/COS undo it
        b = Block()
        x = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
        if inst.mods["mode"] == 0:
            x = b.op("FMul32", x, b.emit("ConstF32", bits=_f32(0.15915494309189535)))
        self.put_ir(b, inst, b.op("BitcastU32", x))
        ir_spirv.emit(self, b)

    def op_mufu(self, inst: Inst) -> None:
        """MUFU: the device's functions; SIN/COS take the operand RRO divided by 2 pi."""
        self.need(inst, SAT=0)
        o = inst.mods["op"]
        b = Block()
        x = b.op("BitcastF32", self.val_ir(b, inst, "a", True))
        two_pi = b.emit("ConstF32", bits=_f32(6.283185307179586))  # built first, as this lowering always has
        if o in (0, 1):
            r = b.op(MUFU[o], b.op("FMul32", x, two_pi))
        elif o == 4:
            r = b.op("FDiv32", b.emit("ConstF32", bits=_f32(1.0)), x)
        elif o in (6, 7):
            r = b.op("BitcastF32", b.op(MUFU[o], b.op("BitcastU32", x)))
        elif o in MUFU and o != 8:
            r = b.op(MUFU[o], x)
        else:
            raise TranslateError(f"{inst.text()}: MUFU function not translated", offset=inst.addr)
        self.put_ir(b, inst, b.op("BitcastU32", r))
        ir_spirv.emit(self, b)

    def op_hset2(self, inst: Inst) -> None:
        """HSET2: per lane 1.0 (.BF) or 0xffff where the comparison BOP pc holds (``half_ir``);
        the operands as HSETP2's (``Half53.halves_ir``)."""
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pc = inst.ops["pc"]
        c = b.get_pred(pc["pred"], pc["not"])
        self.put_ir(b, inst, half_ir.set2_ir(b, x, y, c, inst.mods["bop"], inst.mods["cmp"], bool(inst.mods["BF"])))
        ir_spirv.emit(self, b)

    # --- shader-u (issue 31) ----------------------------------------------------------------------
    def op_fcmp(self, inst: Inst) -> None:
        """FCMP d, a, b, c: a where (c cmp 0.0) holds, else b (the comparison's 16 tests as
        FSETP's; .FTZ flushes c first)."""
        b = Block()
        c = b.op("BitcastF32", self.val_ir(b, inst, "c", True))
        if inst.mods["FTZ"]:
            c = b.op("FFlushDenorm32", c)
        z = b.emit("FCmp32", c, b.emit("ConstF32", bits=0), cmp=inst.mods["cmp"])
        x = self.val_ir(b, inst, "a")
        self.put_ir(b, inst, b.op("Select32", z, x, self.val_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_fswzadd(self, inst: Inst) -> None:
        """FSWZADD d, a, b, swz: lane (id & 3) of the quad adds a and b with the signs its field
        of swz names (``lower/swizzle_add.py``); .FTZ flushes; .NDV leaves a lane's own
        arithmetic as it is (shader-ndv: SM86's op_fswzadd, ``lower/quad_tex.py``).  Refused: a
        rounding mode other than .RN and a .CC destination (no public definition)."""
        self.need(inst, rnd=0)
        if inst.ops["d"].get("cc"):
            self.bad(inst, "FSWZADD writing the condition code not translated")
        b = Block()
        x = b.op("BitcastF32", self.val_ir(b, inst, "a", True))
        y = b.op("BitcastF32", self.val_ir(b, inst, "b", True))
        self.put_ir(b, inst, fswzadd_ir(b, x, y, inst.ops["swz"]["sym"], FSWZ_LETTERS53, bool(inst.mods["FTZ"])))
        ir_spirv.emit(self, b)


def merge_half_ir(b: Block, inst: Inst, r: Value) -> Value:
    """A half instruction's packed result ``r`` (lane 0 low) under its result mode: .MRG_H0 puts
    lane 0 into the destination's low half, .MRG_H1 lane 1 into its high half, the other half
    keeping the destination's value (yuzu's shader recompiler, MergeResult: the lane of the
    mode's half inserted into the unpacked destination); other modes write ``r`` whole."""
    mode = inst.mods.get("mode", 0)
    if mode < 2:
        return r
    old = b.get_reg(inst.ops["d"]["reg"])
    keep, take = (0xFFFF0000, 0xFFFF) if mode == 2 else (0xFFFF, 0xFFFF0000)
    return b.op("IOr32", b.op("IAnd32", old, b.const_u32(keep)), b.op("IAnd32", r, b.const_u32(take)))
