"""SM53 scalar video instructions (a mixin of ``lower_int.Int53``): VADD (PTX vadd/vsub: B or A
negated), VABSDIFF, VMNMX, VSHL, VSHR, VSET, VSETP and VMAD, as ptxas 12.9 writes them for the PTX
instructions of the same names (tests/shader_svc/cuda_corpus_video.py holds one kernel per form).

Contract: each ``op_*`` lowers one decoded instruction into IR rows and emits them.  Semantics
are the PTX ISA's "Scalar Video Instructions" (vadd/vsub/vabsdiff/vmin/vmax, vshl/vshr, vset,
vmad), computed exactly in 64-bit integers held as pairs of 32-bit words (``wide32``: explicit
carries and comparisons, no Int64, so the same lowering serves compute and graphics stages):
- each source is the byte (sel 0..3), half (4, 5) or word (6) its type selects, extended by its
  sign (the type's bit 3) or zeros (``partSelectSignExtend``);
- the primary result: ta +/- tb (negation bits 57 A, 56 B), |ta - tb|, min/max (.MX), ta << tb /
  ta >> tb (arithmetic: ta is extended; tb unsigned, .W: tb & 31, else min(tb, 32)), a
  comparison's 0/1 (VSET), or ta*tb (+/-) c (+1) (VMAD, below);
- the result is PTX's 34-bit intermediate (bits 0..33 sign-extended: it shows only for VSHL,
  whose exact value may need 65 bits - ptxas's sm_86 emulation of vshl keeps the same 34 bits);
- .SAT clamps it to the destination's range (.UD/.SD signedness; with a merge step the merged
  field's: 8 or 16 bits);
- the step with C (51..53): .ACC adds C, .MIN/.MAX compare with C (both as integers of the
  destination's signedness: C extended by it), .MRG_16H/.MRG_16L/.MRG_8B0/.MRG_8B2 write the
  result's low half/byte into that field of C, none: the result alone; the low 32 bits are the
  destination;
- VSET's result and C are unsigned (PTX vset); VSETP writes pd = cmp BOP pc, qd = !cmp BOP pc
  (ISETP's predicate pair: VSETP has no PTX counterpart, its fields are ISETP's);
- VMAD (PTX vmad): the product is negated when exactly one of A/B is (-x = ~x + 1), C when it is,
  .PO adds 1; signed when a type is signed or anything is negated; .SHR_7/.SHR_15 shift the sum
  right (arithmetically when signed), .SAT clamps to s32/u32.
IMADSP (no PTX instruction known here compiles to it: ptxas 12.9 writes BFE + XMAD for
mul24/mad24 at -O3 and -G) is read from its operand-type names alone: the low 32 bits of A * B +
C, each the field its type names (U24/S24 bits 0..23, U16H0/S16H0 bits 0..15, U16H1/S16H1 bits
16..31, 32 the word), extended by its sign or zeros; C signed when A or B is (as nvdisasm prints
it).  Refused by name: a .CC destination, and VMAD.SAT with two 32-bit operands not both signed (its
sum needs 66 bits)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.sm53 import wide32 as w64
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import Lower53
from shader_svc.sm53.wide32 import W

VIDEO_RULES = {
    "VADD": "op_vop",
    "VABSDIFF": "op_vop",
    "VMNMX": "op_vop",
    "VSHL": "op_vop",
    "VSHR": "op_vop",
    "VSET": "op_vop",
    "VSETP": "op_vsetp",
    "VMAD": "op_vmad",
    "IMADSP": "op_imadsp",
}
# IMADSP's operand types (nvdisasm 11.8's names, sm53/table.py): A U32 S32 U24 S24 U16H0 S16H0
# U16H1 S16H1, B U24 S24 U16H0 S16H0, C 32 24 16H0: (shift, width) of each field, sign = bit 0
SP_A = ((0, 32), (0, 32), (0, 24), (0, 24), (0, 16), (0, 16), (16, 16), (16, 16))
SP_B = ((0, 24), (0, 24), (0, 16), (0, 16))
SP_C = ((0, 32), (0, 24), (0, 16))
# the merge steps: (shift of the result's field, its width)
MERGES = {0: (16, 16), 1: (0, 16), 2: (0, 8), 3: (16, 8)}
CMP_EQ_LT_GT = {1: (0, 1, 0), 2: (1, 0, 0), 3: (1, 1, 0), 4: (0, 0, 1), 5: (0, 1, 1), 6: (1, 0, 1)}


class Video53(Lower53):
    """Mixin of ``lower_int.Int53`` (module docstring)."""

    def lowered(self, ir: str) -> bool:
        return ir in VIDEO_RULES or super().lowered(ir)

    # --- helpers ----------------------------------------------------------------------------
    def _vtypes(self, inst: Inst) -> tuple[int, int]:
        t = inst.mods["types"]
        ta, tb = t & 15, t >> 4
        if inst.row.ir in ("VSHL", "VSHR"):
            tb &= 7  # the shift amount is unsigned
        return ta, tb

    def _vsrc(self, b: Block, inst: Inst, name: str, t: int) -> W:
        """A source as a 64-bit integer: its byte/half/word, extended by its sign or zeros."""
        sel, signed = t & 7, bool(t >> 3)
        x = self.raw_ir(b, inst, name)
        if sel < 6:
            off, w = (8 * sel, 8) if sel < 4 else (16 * (sel - 4), 16)
            x = b.op("SBitExtract32" if signed else "UBitExtract32", x, b.const_u32(off), b.const_u32(w))
        return w64.ext(b, x, signed)

    def _no_cc(self, inst: Inst) -> None:
        if inst.ops.get("d", {}).get("cc"):
            self.bad(inst, "video op with the condition code (.CC) not translated")

    def _cmp(self, b: Block, inst: Inst, x: W, y: W) -> Value:
        cmp = inst.mods["cmp"]
        if cmp in (0, 7):
            return b.const_bool(cmp == 7)
        eq, lt, gt = CMP_EQ_LT_GT[cmp]
        terms = []
        if eq:
            terms.append(w64.eq(b, x, y))
        if lt:
            terms.append(w64.slt(b, x, y))
        if gt:
            terms.append(w64.slt(b, y, x))
        r = terms[0]
        for t in terms[1:]:
            r = b.op("LOr", r, t)
        return r

    # --- instructions ------------------------------------------------------------------------
    def op_vop(self, inst: Inst) -> None:
        """VADD, VABSDIFF, VMNMX, VSHL, VSHR, VSET (module docstring)."""
        self._no_cc(inst)
        ir, mods = inst.row.ir, inst.mods
        ta, tb = self._vtypes(inst)
        b = Block()
        x, y = self._vsrc(b, inst, "a", ta), self._vsrc(b, inst, "b", tb)
        step = mods["step"]
        signed = {"VABSDIFF": bool(mods.get("SD")), "VSET": False}.get(ir, mods.get("UD") == 1)
        if ir == "VADD":
            if inst.ops["a"].get("neg"):
                x = w64.neg(b, x)
            if inst.ops["b"].get("neg"):
                y = w64.neg(b, y)
            r = w64.add(b, x, y)
        elif ir == "VABSDIFF":
            r = w64.select(b, w64.slt(b, x, y), w64.sub(b, y, x), w64.sub(b, x, y))
        elif ir == "VMNMX":
            r = w64.select(b, b.op("LXor", w64.slt(b, x, y), b.const_bool(bool(mods["MX"]))), x, y)
        elif ir == "VSET":
            r = w64.select(b, self._cmp(b, inst, x, y), w64.const(b, 1), w64.const(b, 0))
        else:
            n = y.lo
            if mods["W"]:
                n = b.op("IAnd32", n, b.const_u32(31))
            else:
                n = b.op("UMin32", n, b.const_u32(32))
            if ir == "VSHR":
                r = w64.sar(b, x, n)
            else:
                # PTX's 34-bit intermediate: x << n's bits 0..33, sign-extended (what ptxas's
                # own sm_86 emulation computes: SHF.L.U64 then the two bits above the word)
                r = w64.sext34(b, w64.shl(b, x, n))
        if mods.get("SAT"):
            w = MERGES[step][1] if step in MERGES else 32
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
            r = w64.clamp(b, r, lo, hi)
        c = self.raw_ir(b, inst, "c")
        if step == 4:
            out = b.op("IAdd32", r.lo, c)
        elif step in (5, 6):
            lt = w64.slt(b, r, w64.ext(b, c, signed))
            out = b.op("Select32", lt if step == 5 else b.op("LNot", lt), r.lo, c)
        elif step in MERGES:
            sh, w = MERGES[step]
            keep = 0xFFFFFFFF & ~(((1 << w) - 1) << sh)
            field = b.op("IShl32", b.op("IAnd32", r.lo, b.const_u32((1 << w) - 1)), b.const_u32(sh))
            out = b.op("IOr32", b.op("IAnd32", c, b.const_u32(keep)), field)
        else:
            out = r.lo
        self.put_ir(b, inst, out)
        ir_spirv.emit(self, b)

    def op_vsetp(self, inst: Inst) -> None:
        """VSETP: the comparison of the selected operands, into two predicates as ISETP."""
        ta, tb = self._vtypes(inst)
        b = Block()
        x, y = self._vsrc(b, inst, "a", ta), self._vsrc(b, inst, "b", tb)
        self.setp_ir(b, inst, self._cmp(b, inst, x, y))
        ir_spirv.emit(self, b)

    def op_vmad(self, inst: Inst) -> None:
        """VMAD (module docstring)."""
        self._no_cc(inst)
        mods, ops = inst.mods, inst.ops
        ta, tb = self._vtypes(inst)
        po = "PO" in mods
        neg_p = bool(ops["a"].get("neg")) != bool(ops["b"].get("neg")) if not po else False
        neg_c = bool(ops["c"].get("neg")) and not po
        signed = bool(ta >> 3 or tb >> 3 or neg_p or neg_c)
        if mods.get("SAT") and ta & 7 == 6 and tb & 7 == 6 and not (ta >> 3 and tb >> 3):
            self.bad(inst, "VMAD.SAT of two 32-bit operands not both signed (a 66-bit sum) not translated")
        b = Block()
        p = w64.mul(b, self._vsrc(b, inst, "a", ta), self._vsrc(b, inst, "b", tb))
        c = w64.ext(b, self.raw_ir(b, inst, "c"), signed)
        if neg_p:
            p = w64.neg(b, p)
        if neg_c:
            c = w64.neg(b, c)
        s = w64.add(b, p, c)
        if po:
            s = w64.add(b, s, w64.const(b, 1))
        shr = {0: 0, 1: 7, 2: 15}[mods["shr"]]
        if shr:
            s = w64.shift_right_const(b, s, shr, signed)
        if mods.get("SAT"):
            s = w64.clamp(b, s, -(2**31), 2**31 - 1) if signed else w64.clamp(b, s, 0, 2**32 - 1)
        self.put_ir(b, inst, s.lo)
        ir_spirv.emit(self, b)

    def op_imadsp(self, inst: Inst) -> None:
        """IMADSP (module docstring): A's, B's and C's typed fields, A * B + C modulo 2^32."""
        self._no_cc(inst)
        t = inst.mods["types"]
        ta, tc, tb = t & 7, t >> 3 & 3, t >> 5 & 3
        signed_c = bool((ta | tb) & 1)
        b = Block()

        def field(name: str, at: tuple[int, int], signed: bool) -> Value:
            x = self.val_ir(b, inst, name)
            if at == (0, 32):
                return x
            op = "SBitExtract32" if signed else "UBitExtract32"
            return b.op(op, x, b.const_u32(at[0]), b.const_u32(at[1]))

        p = b.op("IMul32", field("a", SP_A[ta], bool(ta & 1)), field("b", SP_B[tb], bool(tb & 1)))
        self.put_ir(b, inst, b.op("IAdd32", p, field("c", SP_C[tc], signed_c)))
        ir_spirv.emit(self, b)
