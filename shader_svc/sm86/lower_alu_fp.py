"""SM86 FP64, MUFU, FSET and FSWZADD (a mixin of ``lower_alu.Alu86``): DADD/DMUL/DFMA (DFMA is
the exactly rounded emulation of ``lower/semantics.py``, no reliance on a fused device Fma; the
directed roundings through ``half_ir.directed_f64_ir``), DSETP incl. .MIN/.MAX, MUFU (the device's
GLSL functions; SIN/COS take turns), FSET.BF and FSWZADD (``lower/swizzle_add.py``).  Contract:
each ``op_*`` lowers one decoded instruction into IR rows and emits them; refused forms raise a
TranslateError naming the instruction.  Facts: the PTX ISA (add/mul/fma.f64, setp, sin/cos/ex2/
lg2/rcp/rsqrt/sqrt.approx, set), field layouts from sm86/table.py (checked against nvdisasm);
DSETP.MIN/.MAX read from how ptxas uses it (no public document)."""

from __future__ import annotations

import struct

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.half_ir import directed_f64_ir
from shader_svc.lower.swizzle_add import fswzadd_ir
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

# MUFU's function field -> IR: COS, SIN, EX2, LG2, RCP, RSQ, RCP64H, RSQ64H, SQRT
MUFU = {0: "Cos32", 1: "Sin32", 2: "Exp2_32", 3: "Log2_32", 4: "FDiv32", 5: "RSqrt32", 6: "Rcp64H", 7: "RSqrt64H", 8: "Sqrt32"}


def _f(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


# FSWZADD's field values as nvdisasm prints them (sm86/table.py SWIZZLE): sign of a, sign of b
FSWZ_LETTERS86 = ("PP", "PN", "NP", "ZP")


class AluFloat86(Lower86):
    """Mixin of ``lower_alu.Alu86`` (see the module's docstring)."""

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

    def op_mufu(self, inst: Inst) -> None:
        self._mufu86(inst)

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

    def op_fswzadd(self, inst: Inst) -> None:
        """FSWZADD d, a, b, swz: lane (id & 3) of the quad adds a and b with the signs its
        field of swz names (``lower/swizzle_add.py``); .FTZ flushes.  .NDV (the add runs in the
        lanes a quad region made active too: Mesa's nv50_ir sets it for its TXD quad loop, clears
        it for derivatives) leaves a lane's own arithmetic as it is (shader-ndv,
        ``lower/quad_tex.py``).  Refused: a rounding mode other than .RN (no public definition)."""
        self.require(inst, rnd=0)
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "a", True))
        y = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        sw = inst.ops["swz"]["sym"]
        self.put_ir(b, inst, fswzadd_ir(b, x, y, sw, FSWZ_LETTERS86, bool(inst.mods["FTZ"])))
        ir_spirv.emit(self, b)
