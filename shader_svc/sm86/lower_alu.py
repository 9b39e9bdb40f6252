"""SM86 compute arithmetic beyond the shared subset (issue 31): carries (IADD3/LEA carry-out and
.X carry-in), the LEA family, IMAD.HI/.X, IABS, 64-bit funnel shifts, FP64 (DADD/DMUL/DFMA/
DSETP), I2F/F2I between every width with directed rounding, MUFU, FRND/F2F, PRMT, SGXT, the
uniform datapath (R2UR).

Carries: IADD3's total carry t = (sum >> 32) splits as CO0 = t >= 1, CO1 = t >= 2 so that
IADD3.X with both carry-ins adds t back; a negated operand without .X is ~x + 1 (its +1 reaches
the carry), with .X it is ~x (nvdisasm prints '~').  DFMA is the exactly rounded emulation of
``lower/semantics.py`` (no reliance on a fused device Fma).
"""

from __future__ import annotations

import struct

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower import half_ir
from shader_svc.lower.half_ir import directed_f64_ir
from shader_svc.lower.swizzle_add import fswzadd_ir
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86
from shader_svc.sm86.lower_half import HALF_RULES, Half86
from shader_svc.sm86.lower_uniform import UNIFORM_RULES, Uniform86, pred_in, pred_out, refuse, set_pred_file


# MUFU's function field -> IR: COS, SIN, EX2, LG2, RCP, RSQ, RCP64H, RSQ64H, SQRT
MUFU = {0: "Cos32", 1: "Sin32", 2: "Exp2_32", 3: "Log2_32", 4: "FDiv32", 5: "RSqrt32", 6: "Rcp64H", 7: "RSqrt64H", 8: "Sqrt32"}


def _f(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


# issue 31's later rows (shader-alu): lowering key -> handler, merged into Compute86.RULES
ALU_RULES = {
    "HSET2": "op_hset2",
    "HMNMX2": "op_hmnmx2_nan",
    "F2FP": "op_f2fp",
    "HADD2.I": "op_half2_imm",
    "HMUL2.I": "op_half2_imm",
    "HFMA2.I": "op_half2_imm",
    # shader-u
    "BMSK": "op_bmsk",
    "I2I": "op_i2i",
    "I2IP": "op_i2ip",
    "FSET": "op_fset",
    "IDP": "op_idp",
    "VABSDIFF4": "op_vabsdiff4",
    "P2R": "op_p2r",
    "R2P": "op_r2p",
    # shader-u2
    "FSWZADD": "op_fswzadd",
    "F2IP": "op_f2ip",
}
# FSWZADD's field values as nvdisasm prints them (sm86/table.py SWIZZLE): sign of a, sign of b
FSWZ_LETTERS86 = ("PP", "PN", "NP", "ZP")


class Alu86(Lower86):
    """Mixin of ``to_spirv.Compute86``: the arithmetic handlers and their helpers."""

    # --- integer ------------------------------------------------------------------------------
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

    # --- FP64 and conversions -----------------------------------------------------------------
    def f64src(self, inst: Inst, name: str) -> int:
        """A double operand: ``f64src_ir`` lowered at once."""
        b = Block()
        return ir_spirv.emit_value(self, b, self.f64src_ir(b, inst, name))

    def f64src_ir(self, b: Block, inst: Inst, name: str) -> Value:
        """A double operand as an f64 IR value: a register pair, two constant bank words, or a
        32-bit immediate (the double's high word), with its abs and neg."""
        v = inst.ops[name]
        if "imm" in v:
            val = b.emit("ConstF64", bits=v["imm"] << 32)
        else:
            if "bank" in v:
                lo, hi = b.cbank_u32(v["bank"], v["off"], inst), b.cbank_u32(v["bank"], v["off"] + 4, inst)
            elif v["reg"] == 255:
                lo = hi = b.const_u32(0)
            else:
                lo, hi = b.get_reg(v["reg"]), b.get_reg(v["reg"] + 1)
            val = b.op("PackF64", lo, hi)
        if v.get("abs"):
            val = b.op("FAbs64", val)
        if v.get("neg"):
            val = b.op("FNeg64", val)
        return val

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

    def _mufu86(self, inst: Inst) -> None:
        """MUFU: the approximate unit, as the device's GLSL functions (accuracy is the device's:
        the corpus compares these within an ulp bound).  SIN/COS take turns (x * 2 pi), as on
        Volta+, where the compiler scales by 1/(2 pi) first."""
        o = inst.mods["op"]
        b = Block()
        if o in (6, 7):
            self.put_ir(b, inst, b.op(MUFU[o], self.src_ir(b, inst, "b", True)))
            ir_spirv.emit(self, b)
            return
        x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        if o in (0, 1):
            r = b.op(MUFU[o], b.op("FMul32", x, b.emit("ConstF32", bits=_f(6.283185307179586))))
        elif o == 4:
            r = b.op("FDiv32", b.emit("ConstF32", bits=_f(1.0)), x)
        elif o in MUFU:
            r = b.op(MUFU[o], x)
        else:
            raise TranslateError(f"{inst.text()}: MUFU function not translated", offset=inst.addr)
        self.put_ir(b, inst, b.op("BitcastU32", r))
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

    # --- instructions (Compute86.RULES) -------------------------------------------------------
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

    def op_dadd(self, inst: Inst) -> None:
        ops = inst.ops
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        b = Block()
        x, y = self.f64src_ir(b, inst, "a"), self.f64src_ir(b, inst, "b")
        if inst.mods.get("rnd"):  # .RM/.RP/.RZ: exactly, through the directed DFMA
            z = self.f64src_ir(b, inst, "c") if inst.row.ir == "DFMA" else None
            r = directed_f64_ir(b, inst.row.ir, inst.mods["rnd"], x, y, z)
        elif inst.row.ir == "DFMA":
            r = b.op("FFma64", x, y, self.f64src_ir(b, inst, "c"))
        else:
            r = b.op("FAdd64" if inst.row.ir == "DADD" else "FMul64", x, y)
        self.put64_ir(b, ops.get("d", {}).get("reg", 255), b.op("BitcastU64", r))
        ir_spirv.emit(self, b)

    def op_dsetp(self, inst: Inst) -> None:
        mods = inst.mods
        b = Block()
        x = self.f64src_ir(b, inst, "a")
        if mods["cmp"] in (0, 15):
            self._dsetp_minmax(b, inst, x, self.f64src_ir(b, inst, "b"))
        else:
            self.set_bop_ir(b, inst, b.emit("FCmp64", x, self.f64src_ir(b, inst, "b"), cmp=mods["cmp"]))
        ir_spirv.emit(self, b)

    @staticmethod
    def _dsetp_minmax(b: Block, inst: Inst, x: Value, y: Value) -> None:
        """DSETP.MIN/.MAX, ptxas's fmin/fmax on doubles: P = pick a (a < b, or a > b for MAX, or
        b alone is NaN), Q = both are NaN (the result is b made quiet).  Not in NVIDIA's
        documents: read from how ptxas uses it (FSEL/SEL on P, then on Q the quiet bit ORed into
        b's high word, which is only right when both are NaN, as PTX's min/max.f64 say: a NaN
        operand gives the other one).  Equal operands (+0/-0) give b.  Each combined with pp by
        the instruction's BOP."""
        nan = 8  # FCmp64's NAN: unordered
        a_nan, b_nan = b.emit("FCmp64", x, x, cmp=nan), b.emit("FCmp64", y, y, cmp=nan)
        less = b.emit("FCmp64", x, y, cmp=1 if inst.mods["cmp"] == 0 else 4)
        pick_a = b.op("LOr", less, b.op("LAnd", b_nan, b.op("LNot", a_nan)))
        pp = inst.ops["pp"]
        c = b.get_pred(pp["pred"], pp["not"])
        bop = ("LAnd", "LOr", "LXor")[inst.mods["bop"]]
        b.set_pred(inst.ops["p"]["pred"], b.op(bop, pick_a, c))
        if inst.ops["q"]["pred"] != 7:
            b.set_pred(inst.ops["q"]["pred"], b.op(bop, b.op("LAnd", a_nan, b_nan), c))

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

    def op_mufu(self, inst: Inst) -> None:
        self._mufu86(inst)

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

    def op_frnd(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        self._frnd(inst, d)

    def op_f2f(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        self._f2f86(inst, d)

    # --- half precision beyond lower_half (shader-alu) ----------------------------------------
    def op_hset2(self, inst: Inst) -> None:
        """HSET2: per lane 1.0 (.BF) or 0xffff where the comparison BOP pp holds (``half_ir``)."""
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pp = inst.ops["pp"]
        c = b.get_pred(pp["pred"], pp["not"])
        self.put_ir(b, inst, half_ir.set2_ir(b, x, y, c, inst.mods["bop"], inst.mods["cmp"], bool(inst.mods["BF"])))
        ir_spirv.emit(self, b)

    def op_hmnmx2_nan(self, inst: Inst) -> None:
        """HMNMX2: .NAN here (a NaN lane gives the canonical NaN); the rest is lower_half's."""
        if not inst.mods["NAN"]:
            self.op_hmnmx2(inst)
            return
        self.require(inst, F32=0, XORSIGN=0)
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pp = inst.ops["pp"]
        self.put_ir(b, inst, half_ir.minmax2_nan_ir(b, x, y, b.get_pred(pp["pred"], pp["not"])))
        ir_spirv.emit(self, b)

    def op_f2fp(self, inst: Inst) -> None:
        """F2FP.PACK_AB: A's half (round to nearest even) on top of B's."""
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "a", True))
        y = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        self.put_ir(b, inst, half_ir.pack_ab_ir(b, x, y))
        ir_spirv.emit(self, b)

    def op_half2_imm(self, inst: Inst) -> None:
        """HADD2/HMUL2/HFMA2 with a pair of half immediates (lane 0 the low half 'bl', lane 1
        'bh'), the other operands as lower_half reads them; the lanes' arithmetic is half_ir's."""
        ftz, ir = bool(inst.mods["FTZ"]), inst.row.ir.split(".")[0]
        b = Block()
        pair = []
        for n in ("bl", "bh"):
            x = b.emit("UnpackF16", b.const_u32(inst.ops[n]["imm"]), lane=0)
            pair.append(b.op("FFlushDenormF16", x) if ftz else x)
        names = [n for n in ("a", "b", "c") if n in inst.ops]
        srcs = [self.halves_ir(b, inst, n, ftz) for n in names]
        srcs.insert(1 if ir != "HFMA2" or "b" not in inst.ops else 2, (pair[0], pair[1]))
        self.put_ir(b, inst, half_ir.arith2_ir(b, ir, srcs, False, ftz, bool(inst.mods["SAT"])))
        ir_spirv.emit(self, b)

    # --- shader-u (issue 31): the vector ALU rows decoded before but not translated ------------
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

    def op_fset(self, inst: Inst) -> None:
        """FSET.BF: 1.0 where (a cmp b) BOP pp holds, else +0.0 (.FTZ flushes the operands)."""
        ftz = inst.mods.get("FTZ", 0)
        b = Block()

        def operand(name: str) -> Value:
            x = b.op("BitcastF32", self.src_ir(b, inst, name, True))
            return b.op("FFlushDenorm32", x) if ftz else x

        x = operand("a")
        r = b.emit("FCmp32", x, operand("b"), cmp=inst.mods["cmp"])
        pp = inst.ops["pp"]
        r = b.op(("LAnd", "LOr", "LXor")[inst.mods["bop"]], r, b.get_pred(pp["pred"], pp["not"]))
        self.put_ir(b, inst, b.op("Select32", r, b.const_u32(0x3F800000), b.const_u32(0)))
        ir_spirv.emit(self, b)

    def _bytes_ir(self, b: Block, x: Value, signed: bool) -> list[Value]:
        op, z = ("SBitExtract32" if signed else "UBitExtract32"), b.const_u32(8)
        return [b.op(op, x, b.const_u32(8 * k), z) for k in range(4)]

    def op_idp(self, inst: Inst) -> None:
        """IDP.4A: PTX dp4a: c + the sum of the four byte products of a and b (modulo 2^32),
        a's bytes signed for .S8.x, b's for .x.S8.  IDP.2A.LO/.HI (shader-u2): PTX dp2a: c +
        a's two 16-bit halves times b's bytes 0, 1 (.LO) or 2, 3 (.HI), in order; a's halves
        signed for .S16.x, b's bytes for .x.S8."""
        signs = inst.mods["signs"]
        b = Block()
        if "part" in inst.mods:  # IDP.2A (shader-u2): PTX dp2a.lo/.hi
            ha = inst.mods
            x = self.src_ir(b, inst, "a")
            op = "SBitExtract32" if signs & 1 else "UBitExtract32"
            xa = [b.op(op, x, b.const_u32(16 * k), b.const_u32(16)) for k in range(2)]
            xb = self._bytes_ir(b, self.src_ir(b, inst, "b"), bool(signs & 2))[2 * ha["part"] : 2 * ha["part"] + 2]
        else:
            xa = self._bytes_ir(b, self.src_ir(b, inst, "a"), bool(signs & 1))
            xb = self._bytes_ir(b, self.src_ir(b, inst, "b"), bool(signs & 2))
        s = self.src_ir(b, inst, "c")
        for p, q in zip(xa, xb):
            s = b.op("IAdd32", s, b.op("IMul32", p, q))
        self.put_ir(b, inst, s)
        ir_spirv.emit(self, b)

    def op_vabsdiff4(self, inst: Inst) -> None:
        """VABSDIFF4 (PTX vabsdiff4, __vsadu4 / __vsads4): per byte |a - b| (.U8 unsigned bytes,
        else signed); .ACC (vabsdiff4.add) sums the four into c; without it the four land in
        their bytes: PTX's SIMD merge with its default mask .b3210 takes every byte from the
        result, none from c (the SASS form has no mask field).  A predicate out is refused."""
        acc = inst.mods["ACC"]
        if inst.ops["p"]["pred"] != 7:
            refuse(inst, "VABSDIFF4 with a predicate out not translated")
        signed = inst.mods["U8"] == 1
        b = Block()
        xa = self._bytes_ir(b, self.src_ir(b, inst, "a"), signed)
        xb = self._bytes_ir(b, self.src_ir(b, inst, "b"), signed)
        s = self.src_ir(b, inst, "c") if acc else b.const_u32(0)
        for k, (p, q) in enumerate(zip(xa, xb)):
            d = b.op("SAbs32", b.op("ISub32", p, q))
            s = b.op("IAdd32", s, d if acc else b.op("IShl32", d, b.const_u32(8 * k)))
        self.put_ir(b, inst, s)
        ir_spirv.emit(self, b)

    def op_p2r(self, inst: Inst) -> None:
        """P2R / UP2UR d, PR, a, mask: a with the bits of ``mask << 8*bsel`` replaced by the
        predicates (P0..P6 / UP0..UP6 as bits 0..6, bit 7 reads 0) masked and shifted alike."""
        file = "UP" if "upr" in inst.ops else "P"
        b = Block()
        bits = b.const_u32(0)
        for i in range(7):
            on = b.get_pred(i, False, file)
            bits = b.op("IOr32", bits, b.op("Select32", on, b.const_u32(1 << i), b.const_u32(0)))
        sh = b.const_u32(8 * inst.mods["bsel"])
        mask = b.op("IShl32", self.src_ir(b, inst, "b"), sh)
        keep = b.op("IAnd32", self.src_ir(b, inst, "a"), b.op("INot32", mask))
        self.put_ir(b, inst, b.op("IOr32", keep, b.op("IAnd32", b.op("IShl32", bits, sh), mask)))
        ir_spirv.emit(self, b)

    def op_r2p(self, inst: Inst) -> None:
        """R2P / UR2UP PR, a, mask: each predicate P0..P6 (UP0..UP6) whose mask bit is set
        takes a's bit of the same number; the others keep their value."""
        file = "UP" if "upr" in inst.ops else "P"
        b = Block()
        a, mask = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")
        for i in range(7):
            bit = b.const_u32(1 << i)
            on = b.op("INe32", b.op("IAnd32", mask, bit), b.const_u32(0))
            v = b.op("INe32", b.op("IAnd32", a, bit), b.const_u32(0))
            old = b.get_pred(i, False, file)
            set_pred_file(self, b, i, b.op("LOr", b.op("LAnd", on, v), b.op("LAnd", b.op("LNot", on), old)), file)
        ir_spirv.emit(self, b)

    # --- shader-u2 ----------------------------------------------------------------------------
    def op_fswzadd(self, inst: Inst) -> None:
        """FSWZADD d, a, b, swz: lane (id & 3) of the quad adds a and b with the signs its
        field of swz names (``lower/swizzle_add.py``); .FTZ flushes.  Refused: a rounding mode
        other than .RN and .NDV (no public definition of either on this instruction)."""
        self.require(inst, rnd=0, NDV=0)
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "a", True))
        y = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        sw = inst.ops["swz"]["sym"]
        self.put_ir(b, inst, fswzadd_ir(b, x, y, sw, FSWZ_LETTERS86, bool(inst.mods["FTZ"])))
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


# --- every stage (issue 31, shader-u2) ------------------------------------------------------------
# The arithmetic rows that read and write only registers (R, UR), predicates (P, UP) and constant
# banks: one registration that the compute lowering (``to_spirv.Compute86``, whose RULES spread
# it) and the graphics lowering
# (``to_spirv_gfx.Gfx86``) both read, so a vertex or fragment program translates the uniform
# datapath and the ALU rows with the compute handlers.
STAGE_ALU_RULES = {
    "IADD3": "op_iadd3",
    "LEA": "op_lea",
    "IMAD.WIDE": "op_imad_wide",
    "IMAD": "op_imad",
    "IMAD.HI": "op_imad_hi",
    "ISETP": "op_isetp",
    "R2UR": "op_r2ur",
    "PRMT": "op_prmt",
    "SGXT": "op_sgxt",
    "IABS": "op_iabs",
    "POPC": "op_popc",
    "BREV": "op_brev",
    "FLO": "op_flo",
    "SHF": "op_shf",
    "DADD": "op_dadd",
    "DMUL": "op_dadd",
    "DFMA": "op_dadd",
    "DSETP": "op_dsetp",
    "I2F": "op_i2f",
    "F2I": "op_f2i",
    "MUFU": "op_mufu",
    "CS2R": "op_cs2r",
    "FRND": "op_frnd",
    "F2F": "op_f2f",
    **HALF_RULES,
    **ALU_RULES,
    **UNIFORM_RULES,
}


class StageAlu86(Alu86, Half86, Uniform86):
    """The handlers of ``STAGE_ALU_RULES`` on top of the shared subset (``RULES``: Lower86's
    table with them merged), for a lowering of any stage."""

    RULES = {**Lower86.RULES, **STAGE_ALU_RULES}

    def lowered(self, ir: str) -> bool:
        return ir in STAGE_ALU_RULES or super().lowered(ir)


class GraphicsAlu86(StageAlu86):
    """``StageAlu86`` for vertex and fragment programs: the GPU process's device enables neither
    Int64 nor Float64 (lower/graphics.py), so a row whose handler needs a 64-bit type (carry
    chains, LEA, 64-bit funnel shifts and conversions, IMAD.WIDE/.HI, FP64, UIMAD.WIDE) is
    refused by name instead of declaring a type the module may not use."""

    @property
    def u64(self) -> int:
        raise TranslateError(
            "64-bit integer arithmetic (carries, LEA, IMAD.WIDE/.HI, 64-bit shifts and "
            "conversions) is not translated in graphics stages (the GPU process's device has no Int64)",
            field="code",
        )

    @property
    def f64t(self) -> int:
        raise TranslateError(
            "FP64 arithmetic is not translated in graphics stages (the GPU process's device has no Float64)",
            field="code",
        )

    def op_fswzadd(self, inst: Inst) -> None:
        refuse(inst, "FSWZADD in a graphics stage (the quad's lane order is not established here)")

    # 32-bit forms of the shifts the compute handlers write with 64-bit types (shader-u2)
    @staticmethod
    def _shl(b: Block, x: Value, n: Value) -> Value:
        """x << n for n in 0..32 (32: 0), without a shift by 32 (undefined in SPIR-V)."""
        return b.op(
            "Select32", b.op("UGe32", n, b.const_u32(32)), b.const_u32(0), b.op("IShl32", x, b.op("UMin32", n, b.const_u32(31)))
        )

    @staticmethod
    def _shr(b: Block, x: Value, n: Value) -> Value:
        """x >> n (logical) for n in 0..32 (32: 0)."""
        return b.op(
            "Select32", b.op("UGe32", n, b.const_u32(32)), b.const_u32(0), b.op("IShr32", x, b.op("UMin32", n, b.const_u32(31)))
        )

    def _shf_any(self, inst: Inst, d: int) -> None:
        """SHF of a 32-bit type (.U32/.S32) in 32-bit words: the count wraps (.W) or clamps to
        32; the words of (c:a) shifted left are c << s | a >> (32 - s) (.HI) and a << s, shifted
        right a >> s | c << (32 - s) and c >> s (arithmetic for .S32, a count of 32 giving the
        sign).  64-bit types are refused (no Int64)."""
        mods = inst.mods
        if mods["type"] in (0, 1):
            super()._shf_any(inst, d)
            return
        b = Block()
        a, c = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "c")
        s = self.src_ir(b, inst, "b")
        s = b.op("IAnd32", s, b.const_u32(31)) if mods["W"] else b.op("UMin32", s, b.const_u32(32))
        rest = b.op("ISub32", b.const_u32(32), s)
        if mods["dir"] == 0:
            r = b.op("IOr32", self._shl(b, c, s), self._shr(b, a, rest)) if mods["HI"] else self._shl(b, a, s)
        elif mods["HI"]:
            r = b.op("ISar32", c, b.op("UMin32", s, b.const_u32(31))) if mods["type"] == 2 else self._shr(b, c, s)
        else:
            r = b.op("IOr32", self._shr(b, a, s), self._shl(b, c, rest))
        b.set_reg(d, r, inst.ops.get("d", {}).get("file", "R"))  # (USHF: UR)
        ir_spirv.emit(self, b)

    def _lea(self, inst: Inst) -> None:
        """LEA / LEA.HI without a carry in or out, in 32-bit words: (a << s) + b, or the high
        word of (hi:a) << s (hi = c, or a's sign with .SX32) plus b; -b is ~b + 1.  The carry
        forms are refused (no Int64)."""
        ops, mods = inst.ops, inst.mods
        if mods["X"] or ops.get("co", {}).get("pred", 7) != 7:
            super()._lea(inst)
            return
        sh = ops["s"]["imm"]
        b = Block()
        a = self.src_ir(b, inst, "a")  # -a / ~a applied
        if mods["HI"]:
            hi = b.op("ISar32", a, b.const_u32(31)) if mods["SX32"] else self.src_ir(b, inst, "c")
            shifted = b.op("IOr32", self._shl(b, hi, b.const_u32(sh)), self._shr(b, a, b.const_u32(32 - sh)))
        else:
            shifted = b.op("IShl32", a, b.const_u32(sh))
        y = self.plain_ir(b, inst, "b")
        if ops["b"].get("neg"):
            y = b.op("IAdd32", b.op("INot32", y), b.const_u32(1))
        self.put_ir(b, inst, b.op("IAdd32", shifted, y))  # (ULEA: a uniform register)
        ir_spirv.emit(self, b)
