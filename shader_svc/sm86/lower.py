"""SM86 (Ampere) to SPIR-V, the shared subset: the ISA part on the shared lowering
(``shader_svc/lower``): operand reading (registers of both files, constant bank words, neg/abs
as integer or float), and the table ``RULES`` from each row's lowering key to its handler.

Machine registers become function-local variables; constant bank 0 is a read-only storage
buffer laid out as the NVIDIA driver lays it out (``sm86/cbank.py``); global memory is reached
through 64-bit physical storage buffer pointers built from the register pairs, exactly as the
machine code computes its addresses.

``Lower86`` holds the ALU subset listed in ``LOWERED`` with predication, BRA/EXIT, LDG/STG: the
part the graphics lowering (``to_spirv_gfx.py``) shares; ``to_spirv.Compute86`` adds the
rest of what compute kernels use.  Anything else raises ``TranslateError`` naming the
instruction and its address.
"""

from __future__ import annotations

from typing import Callable

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.ir.spaces import Layout
from shader_svc.isa.operands import SREG_BUILTINS
from shader_svc.lower.base import ICMP_NAMES, TranslateError
from shader_svc.lower.lowering import Lowering
from shader_svc.lower import refused
from shader_svc.lower.memory import ldc_ir
from shader_svc.lower.quad_tex import mask_lanes_ir
from shader_svc.sm86 import cbank
from shader_svc.sm86.decode import Inst

LOWERED = {
    "MOV",
    "S2R",
    "NOP",
    "IMAD",
    "IMAD.WIDE",
    "IADD3",
    "ISETP",
    "LOP3",
    "PLOP3",
    "SHF",
    "FFMA",
    "FMUL",
    "FADD",
    "IMNMX",
    "SEL",
    "ULDC",
    "LDG",
    "STG",
    "BRA",
    "EXIT",
    "F2I",
    "I2F",
    "FSETP",
    "FMNMX",
}

FP32_OPS = {"FADD": "FAdd32", "FMUL": "FMul32"}  # FFMA: the lowering's choice (fp32_ir)


class Lower86(Lowering):
    # constant bank 0's windows for ir/spaces.py (sm86/cbank.py: the shared window's 64-bit base
    # at 0x18, the local window's at 0x20, the stack top at 0x28)
    GENERIC_LAYOUT = Layout(
        {0x18: "s", 0x1C: "s", 0x20: "lw", 0x24: "lw"}, 0x28, cbank.PARAMS, (cbank.LOCAL_WINDOW, cbank.SHARED_WINDOW + (1 << 24))
    )
    # lowering key (the row's ``ir``) -> handler method
    RULES = {
        "NOP": "op_nop",
        "MOV": "op_mov",
        "S2R": "op_s2r",
        "IMAD": "op_imad",
        "IMAD.WIDE": "op_imad_wide",
        "IADD3": "op_iadd3",
        "ISETP": "op_isetp",
        "LOP3": "op_lop3",
        "PLOP3": "op_plop3",
        "SHF": "op_shf",
        "FFMA": "op_fp32",
        "FMUL": "op_fp32",
        "FADD": "op_fp32",
        "F2I": "op_f2i",
        "I2F": "op_i2f",
        "FSETP": "op_fsetp",
        "FMNMX": "op_fmnmx",
        "IMNMX": "op_imnmx",
        "SEL": "op_sel",
        "ULDC": "op_uldc",
        "LDG": "op_ldg",
        "STG": "op_stg",
    }

    def lowered(self, ir: str) -> bool:
        return ir in LOWERED

    def untranslated_why(self, inst: Inst) -> str:
        """Why a row without a rule is refused (``lower/refused.py``)."""
        return refused.why(86, inst.row.mnemonic)

    def lower(self, inst: Inst) -> None:
        """Lower one (unguarded part of an) instruction through ``RULES``."""
        name = self.RULES.get(inst.row.ir)
        if name is None:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): {refused.why(86, inst.row.mnemonic)}", offset=inst.addr)
        getattr(self, name)(inst)

    def dest(self, inst: Inst) -> Callable[[int], None]:
        """The writer of the instruction's destination ``d`` (uniform instructions write UR
        registers; RZ/URZ discard)."""
        dv = inst.ops.get("d", {})
        d, dfile = dv.get("reg", 255), dv.get("file", "R")
        return lambda val: self.set_reg(d, val, dfile)

    def put_ir(self, b: Block, inst: Inst, v: Value) -> None:
        """Write ``v`` to the instruction's destination ``d`` (its register file), in IR."""
        dv = inst.ops.get("d", {})
        b.set_reg(dv.get("reg", 255), v, dv.get("file", "R"))

    # --- operands ----------------------------------------------------------------------------
    def src(self, inst: Inst, name: str, fp: bool = False) -> int:
        """Value of a source operand as u32 (neg/abs applied, as integer or float): ``src_ir``
        lowered at once (the operand read is written once, in IR)."""
        b = Block()
        return ir_spirv.emit_value(self, b, self.src_ir(b, inst, name, fp))

    def src_ir(self, b: Block, inst: Inst, name: str, fp: bool = False) -> Value:
        """A source operand as a u32 IR value: register (either file), constant bank word or
        immediate, with its neg/abs as float operations (``fp``) or as integer ones (neg is
        ``~x`` with .X or where the row prints '~', else ``-x``; integer |x| is refused)."""
        o = next(x for x in inst.row.operands if x.name == name)
        v = inst.ops[name]
        val = self.plain_ir(b, inst, name)
        if "imm" in v:
            return val
        if v.get("abs") or v.get("neg"):
            if fp:
                f = b.op("BitcastF32", val)
                if v.get("abs"):
                    f = b.op("FAbs32", f)
                if v.get("neg"):
                    f = b.op("FNeg32", f)
                val = b.op("BitcastU32", f)
            else:
                if v.get("abs"):
                    raise TranslateError("integer |x| not supported", offset=inst.addr)
                val = b.op("INot32" if inst.mods.get("X") == 1 or o.neg_sym == "~" else "INeg32", val)
        return val

    def plain_ir(self, b: Block, inst: Inst, name: str) -> Value:
        """A source operand's 32 bits as they are (its neg/abs not applied)."""
        v = inst.ops[name]
        if "imm" in v:
            return b.const_u32(v["imm"])
        if "bank" in v:
            return b.cbank_u32(v["bank"], v["off"], inst)
        if v.get("bsel"):  # 'R2.B1': the register's byte n moved to bits 0..7 (decode-gaps)
            return b.op("IShr32", b.get_reg(v["reg"], v.get("file", "R")), b.const_u32(8 * v["bsel"]))
        return b.get_reg(v["reg"], v.get("file", "R"))

    def src64_ir(self, b: Block, inst: Inst, name: str) -> Value:
        """A 64-bit source operand: a register pair, two constant bank words, or an immediate."""
        v = inst.ops[name]
        if "bank" in v:
            lo, hi = b.cbank_u32(v["bank"], v["off"], inst), b.cbank_u32(v["bank"], v["off"] + 4, inst)
        elif "imm" in v:
            return b.const_u64(v["imm"])
        elif v["reg"] == 255:
            return b.const_u64(0)
        else:
            lo, hi = b.get_reg(v["reg"]), b.get_reg(v["reg"] + 1)
        if v.get("neg"):
            raise TranslateError("negated 64-bit operand not supported", offset=inst.addr)
        return b.op("Pack64", lo, hi)

    @staticmethod
    def put64_ir(b: Block, d: int, v: Value) -> None:
        """Write the u64 ``v`` to the register pair d, d+1 (RZ discards both)."""
        b.set_reg(d, b.op("Trunc32", v))
        if d != 255:
            b.set_reg(d + 1, b.op("Trunc32", b.op("Shr64", v, b.const_u64(32))))

    def base64_ir(self, b: Block, inst: Inst) -> Value:
        """A memory operand's 64-bit base: its register pair (RZ: 0)."""
        a = inst.ops["addr"]
        return b.op("Pack64", b.get_reg(a["reg"]), b.get_reg(a["reg"] + 1)) if a["reg"] != 255 else b.const_u64(0)

    def addr_ir(self, b: Block, inst: Inst) -> Value:
        """The global address of LDG/STG: the register pair plus the offset."""
        return b.op("GlobalPtr", b.op("IAdd64", self.base64_ir(b, inst), b.const_u64(inst.ops["addr"]["off"])))

    @staticmethod
    def set_bop_ir(b: Block, inst: Inst, r: Value) -> None:
        """A comparison's predicates: p = r BOP pp, q = !r BOP pp (BOP: .AND, .OR, .XOR)."""
        pp = inst.ops["pp"]
        c = b.get_pred(pp["pred"], pp["not"])
        bop = ("LAnd", "LOr", "LXor")[inst.mods["bop"]]
        b.set_pred(inst.ops["p"]["pred"], b.op(bop, r, c))
        if inst.ops["q"]["pred"] != 7:
            b.set_pred(inst.ops["q"]["pred"], b.op(bop, b.op("LNot", r), c))

    def _shf(self, inst: Inst, d: int) -> None:
        """SHF of the pair (c:a) by b, 64-bit types (.U64/.S64 from the shared subset): the low
        or (.HI) high word of the shift; the count wraps (.W) modulo 32 or clamps to 32."""
        mods = inst.mods
        wide = {1: False, 2: True, 3: True}[mods["type"]]  # .U64 uses 64-bit shifts; S32/U32 32-bit ones
        if not wide:
            raise TranslateError(f"{inst.text()}: 64-bit funnel shift not supported", offset=inst.addr)
        b = Block()
        v = b.op("Pack64", self.src_ir(b, inst, "a"), self.src_ir(b, inst, "c"))
        s = self.src_ir(b, inst, "b")
        s = b.op("IAnd32", s, b.const_u32(31)) if mods["W"] else b.op("UMin32", s, b.const_u32(32))
        s64 = b.op("ZExt64", s)
        if mods["dir"] == 0:
            r = b.op("Shl64", v, s64)
        else:
            r = b.op("Sar64" if mods["type"] == 2 else "Shr64", v, s64)
        if mods["HI"]:
            r = b.op("Shr64", r, b.const_u64(32))
        b.set_reg(d, b.op("Trunc32", r))
        ir_spirv.emit(self, b)

    # --- instructions (RULES) ------------------------------------------------------------------
    def op_nop(self, inst: Inst) -> None:
        return

    def op_mov(self, inst: Inst) -> None:
        """MOV d, b (, mask): shader-ndv: with a quad-lane mask other than 0xf only the lanes
        whose bit (lane id & 3) is set write d (``mask_lanes_ir``)."""
        b = Block()
        self.put_ir(b, inst, mask_lanes_ir(self, b, inst, self.src_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_s2r(self, inst: Inst) -> None:
        sr = inst.ops["sr"]["sr"]
        if sr not in SREG_BUILTINS:
            raise TranslateError(f"{inst.text()}: special register not supported", offset=inst.addr)
        b = Block()
        self.put_ir(b, inst, b.emit("BuiltinU32", builtin=SREG_BUILTINS[sr][0], comp=SREG_BUILTINS[sr][1]))
        ir_spirv.emit(self, b)

    def op_imad(self, inst: Inst) -> None:
        self.require(inst, X=0)
        b = Block()
        x, y, z = (self.src_ir(b, inst, n) for n in ("a", "b", "c"))
        self.put_ir(b, inst, b.op("IAdd32", b.op("IMul32", x, y), z))
        ir_spirv.emit(self, b)

    def op_imad_wide(self, inst: Inst) -> None:
        ops = inst.ops
        self.require(inst, X=0)
        if ops["co"]["pred"] != 7:
            raise TranslateError(f"{inst.text()}: carry out not supported", offset=inst.addr)
        self.u64  # declared before the operands are read, where this lowering always did (ids kept)
        b = Block()
        p = self.wide_product_ir(b, inst)
        self.put64_ir(b, ops.get("d", {}).get("reg", 255), b.op("IAdd64", p, self.src64_ir(b, inst, "c")))
        ir_spirv.emit(self, b)

    def wide_product_ir(self, b: Block, inst: Inst) -> Value:
        """IMAD.WIDE's product: a * b of the two 32-bit sources widened (.U32 with zeros, else
        with their signs)."""
        conv = "ZExt64" if inst.mods["U32"] == 0 else "SExt64"
        x = b.op(conv, self.src_ir(b, inst, "a"))
        return b.op("IMul64", x, b.op(conv, self.src_ir(b, inst, "b")))

    def op_iadd3(self, inst: Inst) -> None:
        self.require(inst, X=0)
        if inst.ops["co0"]["pred"] != 7 or inst.ops["co1"]["pred"] != 7:
            raise TranslateError(f"{inst.text()}: carry out not supported", offset=inst.addr)
        b = Block()
        s = b.op("IAdd32", self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b"))
        self.put_ir(b, inst, b.op("IAdd32", s, self.src_ir(b, inst, "c")))
        ir_spirv.emit(self, b)

    def op_isetp(self, inst: Inst) -> None:
        self.require(inst, EX=0)
        b = Block()
        x, y = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")
        if inst.mods["cmp"] not in ICMP_NAMES:
            raise TranslateError(f"{inst.text()}: comparison not supported", offset=inst.addr)
        self.set_bop_ir(b, inst, b.emit("ICmp32", x, y, cmp=inst.mods["cmp"], unsigned=inst.mods["U32"] == 0))
        ir_spirv.emit(self, b)

    def op_lop3(self, inst: Inst) -> None:
        ops = inst.ops
        self.require(inst, PAND=0)
        b = Block()
        x, y, z = (self.src_ir(b, inst, n) for n in ("a", "b", "c"))
        r = b.emit("Lut3", x, y, z, lut=ops["lut"]["imm"])
        self.put_ir(b, inst, r)
        if ops["pd"]["pred"] != 7:
            pp = ops["pp"]
            if not (pp["pred"] == 7 and pp["not"]):
                raise TranslateError(f"{inst.text()}: predicate combine not supported", offset=inst.addr)
            b.set_pred(ops["pd"]["pred"], b.op("INe32", r, b.const_u32(0)))
        ir_spirv.emit(self, b)

    def op_plop3(self, inst: Inst) -> None:
        ops = inst.ops
        b = Block()
        x, y, z = (b.get_pred(ops[n]["pred"], ops[n]["not"]) for n in ("a", "b", "c"))
        b.set_pred(ops["p"]["pred"], b.emit("Lut3Bool", x, y, z, lut=ops["lut"]["imm"]))
        b.set_pred(ops["q"]["pred"], b.emit("Lut3Bool", x, y, z, lut=ops["lut2"]["imm"]))
        ir_spirv.emit(self, b)

    def op_shf(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        self._shf(inst, d)

    def op_fp32(self, inst: Inst) -> None:
        self.require(inst, FMZ=0, rnd=0, scale=4)
        self.fp32_ir(inst, "FFma32")

    def fp32_ir(self, inst: Inst, fma: str) -> None:
        """FADD / FMUL / FFMA (``fma``: the IR operation FFMA becomes) with .FTZ on the operands
        and the result, then .SAT, in IR."""
        ftz = inst.mods.get("FTZ", 0)
        b = Block()

        def operand(name: str) -> Value:
            x = b.op("BitcastF32", self.src_ir(b, inst, name, True))
            return b.op("FFlushDenorm32", x) if ftz else x

        x, y = operand("a"), operand("b")
        r = b.op(fma, x, y, operand("c")) if inst.row.ir == "FFMA" else b.op(FP32_OPS[inst.row.ir], x, y)
        if ftz:
            r = b.op("FFlushDenorm32", r)
        if inst.mods.get("SAT", 0):
            r = b.op("FSaturate32", r)
        dv = inst.ops["d"]
        b.set_reg(dv["reg"], b.op("BitcastU32", r), dv.get("file", "R"))
        ir_spirv.emit(self, b)

    def op_f2i(self, inst: Inst) -> None:
        """F2I to 32 bits: round as the modifier says, then saturate to the integer range; NaN
        gives 0 (SPIR-V leaves out-of-range conversions undefined, NVIDIA saturates)."""
        self.require(inst, size=2)
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        self.put_ir(b, inst, b.emit("F2ISat32", x, rnd=inst.mods["rnd"], signed=inst.mods["sign"] == 1))
        ir_spirv.emit(self, b)

    def op_i2f(self, inst: Inst) -> None:
        self.require(inst, dst=2)
        signed = inst.mods["sign"] == 1
        b = Block()
        x = self.src_ir(b, inst, "b")
        f = b.emit("I2F32", x, signed=signed)
        if inst.mods["rnd"]:
            f = b.emit("RoundDirectedF32", f, x, rnd=inst.mods["rnd"], signed=signed, inst=inst)
        self.put_ir(b, inst, b.op("BitcastU32", f))
        ir_spirv.emit(self, b)

    def op_fsetp(self, inst: Inst) -> None:
        ftz = inst.mods.get("FTZ", 0)
        b = Block()

        def operand(name: str) -> Value:
            x = b.op("BitcastF32", self.src_ir(b, inst, name, True))
            return b.op("FFlushDenorm32", x) if ftz else x

        x = operand("a")
        self.set_bop_ir(b, inst, b.emit("FCmp32", x, operand("b"), cmp=inst.mods["cmp"]))
        ir_spirv.emit(self, b)

    def op_fmnmx(self, inst: Inst) -> None:
        self.require(inst, FTZ=0, NAN=0, XORSIGN=0)
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "a", True))
        y = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        pp = inst.ops["pp"]
        self.put_ir(b, inst, b.op("BitcastU32", b.op("FMinMax32", x, y, b.get_pred(pp["pred"], pp["not"]))))
        ir_spirv.emit(self, b)

    def op_imnmx(self, inst: Inst) -> None:
        pp = inst.ops["pp"]
        if pp["pred"] != 7:
            raise TranslateError(f"{inst.text()}: predicate-selected min/max not supported", offset=inst.addr)
        u = inst.mods["U32"] == 0
        fn = ("UMax32" if u else "SMax32") if pp["not"] else ("UMin32" if u else "SMin32")
        b = Block()
        self.put_ir(b, inst, b.op(fn, self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_sel(self, inst: Inst) -> None:
        pp = inst.ops["pp"]
        b = Block()
        p = b.get_pred(pp["pred"], pp["not"])
        fp = inst.row.mnemonic == "FSEL"  # FSEL's -x / |x| are float sign operations, not INeg32
        self.put_ir(b, inst, b.op("Select32", p, self.src_ir(b, inst, "a", fp), self.src_ir(b, inst, "b", fp)))
        ir_spirv.emit(self, b)

    def op_uldc(self, inst: Inst) -> None:
        ops = inst.ops
        d = ops.get("d", {}).get("reg", 255)
        cb = ops["cb"]
        b = Block()
        n = 2 if inst.mods["size"] == 5 else 1
        if "reg" in cb:  # the indexed form c[bank][URa+off] (shader-rest): as LDC's, on uniform registers
            ldc_ir(b, inst, cb["reg"], cb["off"], cb["bank"], n, d, file="UR")
            ir_spirv.emit(self, b)
            return
        for i in range(n):
            b.set_reg(d + i if d != 63 else 63, b.cbank_u32(cb["bank"], cb["off"] + 4 * i, inst), "UR")
        ir_spirv.emit(self, b)

    def op_ldg(self, inst: Inst) -> None:
        self.require(inst, size=4, order=0, cache=1)
        if inst.ops["d"]["reg"] != 255:
            b = Block()
            self.put_ir(b, inst, b.op("LoadGlobal32", self.addr_ir(b, inst)))
            ir_spirv.emit(self, b)

    def op_stg(self, inst: Inst) -> None:
        self.require(inst, size=4, order=0, cache=1)
        b = Block()
        ptr = self.addr_ir(b, inst)
        b.emit("StoreGlobal32", ptr, self.src_ir(b, inst, "b"))
        ir_spirv.emit(self, b)
