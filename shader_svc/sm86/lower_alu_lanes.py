"""SM86 packed-lane rows (a mixin of ``lower_alu.Alu86``): half pairs beyond lower_half.py
(HSET2, HMNMX2.NAN, F2FP.PACK_AB, HADD2/HMUL2/HFMA2 with a pair of half immediates; the lanes'
arithmetic is ``lower/half_ir.py``'s), byte lanes (IDP.4A/.2A: dp4a/dp2a; VABSDIFF4:
vabsdiff4) and the predicate file packed in a register (P2R/R2P and their uniform forms).
Contract: each ``op_*`` lowers one decoded instruction into IR rows and emits them; refused forms
raise a TranslateError naming the instruction.  Facts: the PTX ISA (set/min/max/cvt.rn.f16x2,
dp4a, dp2a, vabsdiff4, the SIMD merge mask), field layouts from sm86/table.py (checked against
nvdisasm)."""

from __future__ import annotations


from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower import half_ir
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86
from shader_svc.sm86.lower_uniform import refuse, set_pred_file


class AluLanes86(Lower86):
    """Mixin of ``lower_alu.Alu86`` (see the module's docstring)."""

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
