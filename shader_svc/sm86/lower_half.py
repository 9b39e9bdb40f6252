"""SM86 half precision (issue 31): HADD2, HMUL2, HFMA2 (f16x2 results or .F32), HMNMX2, HSETP2
and F2F.F16.F32, in IR.

An operand's swizzle picks the half each result lane reads: H1_H0 (printed as nothing) lane i
reads half i, .H0_H0 / .H1_H1 both lanes read that half (``SWZ_LANES``); its -x / |x| act on
each half.  Each lane's result is exact or once-rounded in a wider type and then rounded once to
a half (``lower/half.py`` says why that is exact): HADD2 sums in f64, HMUL2 multiplies in f32
(exact), HFMA2 adds the exact f32 product to c in f64.  .FTZ flushes half denormals of the
operands and the result; .SAT clamps the result to [0, 1] (NaN -> +0, as FSaturate32).  With
.F32 the instruction writes one f32: lane 0's operation rounded once to f32.  HSETP2 follows PTX's
setp.f16x2: P = (lane 0's comparison) BOP pp, Q = (lane 1's) BOP pp.  HMNMX2 is FMNMX per lane
(NaN-suppressing; two NaNs give the canonical half NaN).  F2F.F16.F32 writes the half, rounded
as its .RM/.RP/.RZ says, zero-extended.  Refused: an operand's .F32 swizzle, HSETP2.H_AND,
HMNMX2's .NAN/.XORSIGN/.F32, F2F.F16.F32 from a constant or immediate (not in the table).
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.bits import get
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

SWZ_LANES = {0: (0, 1), 2: (0, 0), 3: (1, 1)}
HALF_RULES = {
    "HADD2": "op_half2",
    "HMUL2": "op_half2",
    "HFMA2": "op_half2",
    "HMNMX2": "op_hmnmx2",
    "HSETP2": "op_hsetp2",
    "F2F.F16": "op_f2f_f16",
}


class Half86(Lower86):
    """Mixin of ``to_spirv.Compute86``: the half-precision handlers (module docstring)."""

    def halves_ir(self, b: Block, inst: Inst, name: str, ftz: bool) -> tuple[Value, Value]:
        """Operand ``name`` as the two f32 values result lanes 0 and 1 read."""
        o = next(x for x in inst.row.operands if x.name == name)
        swz = get(inst.word, int(o.suffix[5:]), 2)
        if swz not in SWZ_LANES:
            raise TranslateError(f"{inst.text()}: .F32 operand of a half instruction not translated", offset=inst.addr)
        v = inst.ops[name]
        raw = self.plain_ir(b, inst, name)
        out = []
        for lane in SWZ_LANES[swz]:
            x = b.emit("UnpackF16", raw, lane=lane)
            if v.get("abs"):
                x = b.op("FAbs32", x)
            if v.get("neg"):
                x = b.op("FNeg32", x)
            out.append(b.op("FFlushDenormF16", x) if ftz else x)
        return out[0], out[1]

    @staticmethod
    def to_half_ir(b: Block, x: Value, ftz: bool, sat: bool) -> Value:
        """An f64 rounded to a half (u32 < 0x10000), then .SAT and .FTZ on the half."""
        h = b.emit("F16FromF64", x, rnd=0)
        if sat or ftz:
            f = b.emit("UnpackF16", h, lane=0)
            f = b.op("FSaturate32", f) if sat else f
            f = b.op("FFlushDenormF16", f) if ftz else f
            h = b.emit("F16FromF64", b.op("CvtF64", f), rnd=0)  # exact
        return h

    def op_half2(self, inst: Inst) -> None:
        ftz, sat, ir = bool(inst.mods["FTZ"]), bool(inst.mods["SAT"]), inst.row.ir
        b = Block()
        srcs = [self.halves_ir(b, inst, n, ftz) for n in ("a", "b", "c")[: 3 if ir == "HFMA2" else 2]]
        if inst.mods["F32"]:  # one f32: lane 0's operation, rounded once to f32
            x = [s[0] for s in srcs]
            r = {"HADD2": lambda: b.op("FAdd32", *x), "HMUL2": lambda: b.op("FMul32", *x), "HFMA2": lambda: b.op("FFma32", *x)}[ir]()
            r = b.op("FFlushDenorm32", r) if ftz else r
            r = b.op("FSaturate32", r) if sat else r
            self.put_ir(b, inst, b.op("BitcastU32", r))
            ir_spirv.emit(self, b)
            return
        lanes = []
        for i in (0, 1):
            x = [s[i] for s in srcs]
            if ir == "HADD2":
                r = b.op("FAdd64", b.op("CvtF64", x[0]), b.op("CvtF64", x[1]))
            else:
                r = b.op("CvtF64", b.op("FMul32", x[0], x[1]))  # exact: 22 significant bits
                if ir == "HFMA2":
                    r = b.op("FAdd64", r, b.op("CvtF64", x[2]))
            lanes.append(self.to_half_ir(b, r, ftz, sat))
        self.put_ir(b, inst, b.op("IOr32", lanes[0], b.op("IShl32", lanes[1], b.const_u32(16))))
        ir_spirv.emit(self, b)

    def op_hmnmx2(self, inst: Inst) -> None:
        self.require(inst, F32=0, NAN=0, XORSIGN=0)
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pp = inst.ops["pp"]
        p = b.get_pred(pp["pred"], pp["not"])
        h = [b.emit("F16FromF64", b.op("CvtF64", b.op("FMinMax32", x[i], y[i], p)), rnd=0) for i in (0, 1)]
        self.put_ir(b, inst, b.op("IOr32", h[0], b.op("IShl32", h[1], b.const_u32(16))))
        ir_spirv.emit(self, b)

    def op_hsetp2(self, inst: Inst) -> None:
        self.require(inst, H_AND=0)
        ftz = bool(inst.mods["FTZ"])
        b = Block()
        x, y = self.halves_ir(b, inst, "a", ftz), self.halves_ir(b, inst, "b", ftz)
        pp = inst.ops["pp"]
        c = b.get_pred(pp["pred"], pp["not"])
        bop = ("LAnd", "LOr", "LXor")[inst.mods["bop"]]
        for i, dst in enumerate(("p", "q")):
            r = b.emit("FCmp32", x[i], y[i], cmp=inst.mods["cmp"])
            if inst.ops[dst]["pred"] != 7:
                b.set_pred(inst.ops[dst]["pred"], b.op(bop, r, c))
        ir_spirv.emit(self, b)

    def op_f2f_f16(self, inst: Inst) -> None:
        b = Block()
        x = b.op("BitcastF32", self.src_ir(b, inst, "b", True))
        if inst.mods["FTZ"]:
            x = b.op("FFlushDenorm32", x)
        self.put_ir(b, inst, b.emit("F16FromF64", b.op("CvtF64", x), rnd=inst.mods["rnd"]))
        ir_spirv.emit(self, b)
