"""SM86 conversions and rounding (a mixin of ``lower_alu.Alu86``): I2F and F2I between every
width with directed rounding (incl. F2I to 8/16 bits), I2I/I2IP (cvt.sat / cvt.pack.sat), F2IP
(cvt.rni.sat.u8.f32), FRND (to an integral value, F32/F64) and F2F between F32 and F64.
Contract: each ``op_*`` lowers one decoded instruction into IR rows and emits them; the 32-bit
forms without rounding go to ``Lower86``'s shared subset (``super()``); refused forms raise a
TranslateError naming the instruction.  Facts: the PTX ISA's cvt (rounding modifiers, .sat,
.pack) and Vulkan's correctly rounded OpFConvert; ptxas's own forms (nvdisasm listings) for the
narrow results' extension."""

from __future__ import annotations


from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86
from shader_svc.sm86.lower_uniform import refuse


class AluConv86(Lower86):
    """Mixin of ``lower_alu.Alu86`` (see the module's docstring)."""

    def _int_src(self, b: Block, inst: Inst, signed: bool, size: int) -> tuple[Value, bool]:
        """The integer source of I2F as (value, is64): 8/16-bit sources are extended."""
        if size == 3:
            v = inst.ops["b"]
            lo = self.plain_ir(b, inst, "b")
            hi = b.get_reg(v["reg"] + 1) if "reg" in v and v["reg"] != 255 else b.const_u32(0)
            return b.op("Pack64", lo, hi), True
        x = self.src_ir(b, inst, "b")
        if size in (0, 1):
            z = b.const_u32(0)
            x = b.op("SBitExtract32" if signed else "UBitExtract32", x, z, b.const_u32(8 if size == 0 else 16))
        return x, False

    def _i2f(self, inst: Inst, d: int) -> None:
        mods = inst.mods
        size = (inst.row.base >> 84) & 3
        signed = bool((inst.row.base >> 74) & 1)
        if mods["dst"] == 1:
            raise TranslateError(f"{inst.text()}: F16 results not translated yet", offset=inst.addr)
        b = Block()
        x, is64 = self._int_src(b, inst, signed, size)
        rnd = mods["rnd"]
        if mods["dst"] == 3:  # F64
            if rnd and is64:
                raise TranslateError(
                    f"{inst.text()}: directed rounding of a 64-bit integer to F64 not translated", offset=inst.addr
                )
            f64 = b.emit("I2F64From64" if is64 else "I2F64", x, signed=signed)
            self.put64_ir(b, d, b.op("BitcastU64", f64))
            ir_spirv.emit(self, b)
            return
        f = b.emit("I2F32From64" if is64 else "I2F32", x, signed=signed)
        if rnd:
            f = b.emit("RoundDirectedF32From64" if is64 else "RoundDirectedF32", f, x, rnd=rnd, signed=signed, inst=inst)
        b.set_reg(d, b.op("BitcastU32", f))
        ir_spirv.emit(self, b)

    def _f2i64(self, inst: Inst, d: int) -> None:
        """F2I from F32 or F64 to 32- or 64-bit integers: rounded as the modifier says, saturated,
        NaN -> 0."""
        mods = inst.mods
        self.require(inst, FTZ=0)
        signed = bool((inst.row.base >> 72) & 1)
        b = Block()
        if mods["src"] == 3:
            self.f64t  # declared before the operand is read, where this lowering always did (ids kept)
            x = b.emit("RoundF64", self.f64src_ir(b, inst, "b"), rnd=mods["rnd"])
        else:
            x = b.emit("RoundF32", b.op("BitcastF32", self.src_ir(b, inst, "b", True)), rnd=mods["rnd"])
            x = b.op("CvtF64", x)
        if mods["size"] == 3:
            self.put64_ir(b, d, b.emit("F2ISatF64To64", x, signed=signed))
        else:
            b.set_reg(d, b.emit("F2ISatF64To32", x, signed=signed))
        ir_spirv.emit(self, b)

    def _frnd(self, inst: Inst, d: int) -> None:
        """FRND: to an integral value, nearest-even / floor / ceil / trunc, F32 or F64."""
        rnd = inst.mods["rnd"]
        if "f64" in inst.mods:
            self.require(inst, FTZ=0)
            self.u64, self.f64t  # declared before the operand is read, as this lowering always did (ids kept)
            b = Block()
            self.put64_ir(b, d, b.op("BitcastU64", b.emit("RoundF64", self.f64src_ir(b, inst, "b"), rnd=rnd)))
            ir_spirv.emit(self, b)
            return
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        if inst.mods["FTZ"]:
            x = b.op("FFlushDenorm32", x)
        b.set_reg(d, b.op("BitcastU32", b.emit("RoundF32", x, rnd=rnd)))
        ir_spirv.emit(self, b)

    def _f2f86(self, inst: Inst, d: int) -> None:
        """F2F between F32 and F64: widening is exact; narrowing rounds to nearest even (OpFConvert
        is correctly rounded in Vulkan); directed narrowing is refused."""
        self.require(inst, FTZ=0)
        b = Block()
        if inst.row.base >> 84 & 1:  # .F32.F64
            self.require(inst, rnd=0)
            b.set_reg(d, b.op("BitcastU32", b.op("CvtF32", self.f64src_ir(b, inst, "b"))))
        else:
            x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
            self.put64_ir(b, d, b.op("BitcastU64", b.op("CvtF64", x)))
        ir_spirv.emit(self, b)

    def op_i2f(self, inst: Inst) -> None:
        ops = inst.ops
        if inst.row.opcode & 0x1FF in (0x106, 0x112):
            d = ops.get("d", {}).get("reg", 255)
            self._i2f(inst, d)
        else:
            super().op_i2f(inst)

    def op_f2i(self, inst: Inst) -> None:
        ops = inst.ops
        if inst.row.opcode & 0x1FF == 0x111:
            d = ops.get("d", {}).get("reg", 255)
            self._f2i64(inst, d)
        elif inst.row.opcode & 0x1FF == 0x105 and inst.mods["size"] in (0, 1):
            self._f2i_narrow(inst)
        else:
            super().op_f2i(inst)

    def op_frnd(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        self._frnd(inst, d)

    def op_f2f(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        self._f2f86(inst, d)

    def _sat_s32_ir(self, b: Block, x: Value, lo: int, hi: int) -> Value:
        """The signed word x clamped to [lo, hi] (two's complement in 32 bits)."""
        return b.op("SMax32", b.op("SMin32", x, b.const_u32(hi)), b.const_u32(lo))

    def op_i2i(self, inst: Inst) -> None:
        """I2I.{U8,S8,U16,S16}.S32.SAT: the signed word saturated to the narrow type's range
        (PTX cvt.sat), written as that type's bits, zero-extended: ptxas sign-extends an S8/S16
        result itself afterwards (PRMT 0x8880 / 0x9910 after I2I.S8/.S16 for cvt.sat.s8.s32 into
        a 32-bit register), which it would not if the upper bits were the sign already."""
        dt = inst.mods["dt"]
        lo, hi = ((0, 255), (-128, 127), (0, 65535), (-32768, 32767))[dt]
        b = Block()
        r = self._sat_s32_ir(b, self.src_ir(b, inst, "b"), lo, hi)
        self.put_ir(b, inst, b.op("IAnd32", r, b.const_u32(0xFF if dt < 2 else 0xFFFF)))
        ir_spirv.emit(self, b)

    def op_i2ip(self, inst: Inst) -> None:
        """I2IP.{U8,S8,U16,S16}.S32.SAT d, a, b, c: PTX cvt.pack.sat: a and b saturated to the
        type (.SATRELU: negative values to 0 first) packed with a above b; 8-bit results fill
        bits 0..15 and c's low half fills bits 16..31, 16-bit ones the whole word.  Without
        saturation ('') the form is refused (PTX has no such cvt.pack)."""
        if inst.mods["sat"] == 1:
            refuse(inst, "I2IP without .SAT not translated")
        dt = inst.mods["dt"]
        lo, hi = ((0, 255), (-128, 127), (0, 65535), (-32768, 32767))[dt]
        if inst.mods["sat"] == 2:
            lo = max(lo, 0)
        b = Block()
        x = self._sat_s32_ir(b, self.src_ir(b, inst, "a"), lo, hi)
        y = self._sat_s32_ir(b, self.src_ir(b, inst, "b"), lo, hi)
        bits = 8 if dt < 2 else 16
        m = b.const_u32((1 << bits) - 1)
        r = b.op("IOr32", b.op("IShl32", b.op("IAnd32", x, m), b.const_u32(bits)), b.op("IAnd32", y, m))
        if bits == 8:
            r = b.op("IOr32", r, b.op("IShl32", self.src_ir(b, inst, "c"), b.const_u32(16)))
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)

    def _f2i_narrow(self, inst: Inst) -> None:
        """F2I.{U8,S8,U16,S16} (shader-u2): PTX cvt.{rni,rmi,rpi,rzi}.sat to the narrow type:
        rounded as the modifier says, saturated to the type's range, NaN 0, written as a 32-bit
        integer (sign-extended for .S8/.S16: ptxas stores an F2I.S8 result as the s32 of
        cvt.s32.s16 without extending it); .FTZ flushes a denormal operand first."""
        signed = bool(inst.word >> 72 & 1)
        bits = (8, 16)[inst.mods["size"]]
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        if inst.mods["FTZ"]:
            x = b.op("FFlushDenorm32", x)
        v = b.emit("F2ISat32", x, rnd=inst.mods["rnd"], signed=signed)
        if signed:
            v = self._sat_s32_ir(b, v, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        else:
            v = b.op("UMin32", v, b.const_u32((1 << bits) - 1))
        self.put_ir(b, inst, v)
        ir_spirv.emit(self, b)

    def op_f2ip(self, inst: Inst) -> None:
        """F2IP.U8.F32 d, RZ, b, RZ: PTX cvt.rni.sat.u8.f32 (ptxas 12.9 writes exactly this
        form for it, with or without .NTZ): b rounded to the nearest integer (ties to even),
        saturated to 0..255, NaN 0, in bits 0..7; bits 8..31 are 0 (I2IP's packing with a and
        c RZ; ptxas masks them itself, so no program here depends on them).  Refused: .S8 and
        .RELU (ptxas writes F2I.S8 for cvt.rni.sat.s8.f32: no compiler here writes them), a or
        c other than RZ (their packing is not established)."""
        ops = inst.ops
        if inst.mods["dt"] != 0 or inst.mods["RELU"]:
            refuse(inst, "F2IP.S8 / .RELU not translated (no compiler here writes them; no public definition)")
        if ops["a"].get("reg") != 255 or ops["c"].get("reg") != 255:
            refuse(inst, "F2IP with a or c other than RZ not translated (the packing is not established)")
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        r = self._sat_s32_ir(b, b.emit("F2ISat32", x, rnd=0, signed=True), 0, 255)
        self.put_ir(b, inst, r)
        ir_spirv.emit(self, b)
