"""SM53 (Maxwell) to SPIR-V, the ISA's ground floor on the shared lowering (``shader_svc/lower``):
operand reading (registers with neg/abs/inv and half/byte selects, constant bank words,
immediates, double operands), the condition code (``.CC`` writes a carry and a zero flag,
``.X`` reads them: 64-bit arithmetic split in two), predicate results, and the dispatch of an
instruction through the ``RULES`` table of ``to_spirv.Compute53``.
"""
from __future__ import annotations

from typing import Callable

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.lower.lowering import Lowering
from shader_svc.sm53.decode import Inst

BRANCHES = {"BRA", "SSY", "PBK", "CAL", "JCAL", "SYNC", "BRK", "RET", "EXIT", "BPT"}
LOWERED = {"MOV", "S2R", "NOP", "IADD", "IADD3", "ISCADD", "XMAD", "SHL", "SHR", "SHF", "LOP", "LOP3", "ISETP",
           "ICMP", "PSETP", "IMNMX", "SEL", "BFE", "BFI", "PRMT", "POPC", "FLO", "FADD", "FMUL", "FFMA", "FMNMX",
           "FSETP", "I2F", "F2I", "F2F", "MUFU", "RRO", "LDG", "STG", "LDS", "STS", "ATOMS", "ATOM", "ATOM_CAS",
           "RED", "BAR", "VOTE", "SHFL", "LDL", "STL", "LDC", "LEA", "LEA_HI", "I2I", "IMUL", "DADD", "DMUL", "DFMA",
           "DSETP", "LD", "ST", "BPT", "IMAD"} | BRANCHES


class Lower53(Lowering):
    """Operands and the table dispatch of SM53's lowering; the handlers are in the topic mixins
    (``lower_int``, ``lower_float``, ``lower_mem``, ``lower_control``)."""
    RULES: dict[str, str] = {}      # lowering key (the row's ``ir``) -> handler method

    def lower(self, inst: Inst) -> None:
        """Lower one (unguarded part of an) instruction through ``RULES``."""
        name = self.RULES.get(inst.row.ir)
        if name is None:
            self.bad(inst)
        getattr(self, name)(inst)

    def dest(self, inst: Inst) -> Callable[[int], None]:
        """The writer of the instruction's destination register ``d`` (RZ discards)."""
        d = inst.ops.get("d", {}).get("reg", 255)
        return lambda val: self.set_reg(d, val)

    def lowered(self, ir: str) -> bool:
        return ir in LOWERED

    # --- operands ---------------------------------------------------------------------------
    def put_ir(self, b: Block, inst: Inst, v: Value) -> None:
        """Write ``v`` to the instruction's destination register ``d`` (RZ discards), in IR."""
        b.set_reg(inst.ops.get("d", {}).get("reg", 255), v)

    def val(self, inst: Inst, name: str, fp: bool = False) -> int:
        """A source operand as u32 with its neg/abs/inv applied: ``val_ir`` lowered at once (the
        operand read is written once, in IR)."""
        b = Block()
        return ir_spirv.emit_value(self, b, self.val_ir(b, inst, name, fp))

    def val_ir(self, b: Block, inst: Inst, name: str, fp: bool = False) -> Value:
        """A source operand as a u32 IR value: immediate (float neg/abs or .INV folded in),
        constant bank word or register, its .H1 half (integer reads), .INV, then neg/abs as
        float operations (``fp``) or integer negation (integer |x| is refused)."""
        v = inst.ops[name]
        if "imm" in v:
            x = v["imm"]
            if fp and (v.get("neg") or v.get("abs")):
                x = (x & 0x7FFFFFFF if v.get("abs") else x) ^ (0x80000000 if v.get("neg") else 0)
            elif v.get("inv"):
                x = ~x
            return b.const_u32(x)
        r = b.cbank_u32(v["bank"], v["off"], inst) if "bank" in v else b.get_reg(v["reg"])
        if v.get("h1") and not fp:
            r = b.op("IShr32", r, b.const_u32(16))
        if v.get("inv"):
            r = b.op("INot32", r)
        if fp and (v.get("abs") or v.get("neg")):
            f = b.op("BitcastF32", r)
            if v.get("abs"):
                f = b.op("FAbs32", f)
            if v.get("neg"):
                f = b.op("FNeg32", f)
            r = b.op("BitcastU32", f)
        elif v.get("neg"):
            r = b.op("INeg32", r)
        elif v.get("abs"):
            raise TranslateError(f"{inst.text()}: integer |x| not supported", offset=inst.addr)
        return r

    def fval(self, inst: Inst, name: str) -> int:
        return self.op("OpBitcast", self.f32, self.val(inst, name, True))

    def pv(self, v: dict) -> int:
        return self.pred(v["pred"], v["not"])

    def carry(self) -> int:
        return self.op("OpLoad", self.bool, self.var("CC", self.fn_bool))

    def set_carry(self, v: int) -> None:
        self.do("OpStore", self.var("CC", self.fn_bool), v)

    def add_cc(self, inst: Inst, terms: list[int], x: bool, cc: bool) -> int:
        """Sum of 32-bit terms (+ carry-in with .X) with the carry-out written when .CC."""
        if not cc:
            s = terms[0]
            for t in terms[1:] + ([self.op("OpSelect", self.u32, self.carry(), self.c(1), self.c(0))] if x else []):
                s = self.op("OpIAdd", self.u32, s, t)
            return s
        s = self.op("OpUConvert", self.u64, terms[0])
        for t in terms[1:] + ([self.op("OpSelect", self.u32, self.carry(), self.c(1), self.c(0))] if x else []):
            s = self.op("OpIAdd", self.u64, s, self.op("OpUConvert", self.u64, t))
        self.set_carry(self.op("OpINotEqual", self.bool, self.op("OpShiftRightLogical", self.u64, s, self.c64(32)),
                               self.c64(0)))
        r = self.op("OpUConvert", self.u32, s)
        self.set_zero(r, x)
        return r

    def set_zero(self, r: int, x: bool) -> None:
        """The condition code's zero flag: the result is 0 (with .X: and the flag was already
        set, so a 64-bit chain's flag says the whole value is 0)."""
        z = self.op("OpIEqual", self.bool, r, self.c(0))
        if x:
            z = self.op("OpLogicalAnd", self.bool, z, self.op("OpLoad", self.bool, self.var("CCZ", self.fn_bool)))
        self.do("OpStore", self.var("CCZ", self.fn_bool), z)

    def need(self, inst: Inst, **mods: int) -> None:
        for k, want in mods.items():
            if inst.mods.get(k, want) != want:
                raise TranslateError(f"{inst.text()}: modifier {k} not translated yet", offset=inst.addr)

    def bad(self, inst: Inst, why: str = "not translated yet"):
        raise TranslateError(f"{inst.text()}: {why}", offset=inst.addr)

    def _setp(self, inst: Inst, r: int) -> None:
        ops = inst.ops
        pc = self.pv(ops["pc"])
        bop = {0: "OpLogicalAnd", 1: "OpLogicalOr", 2: "OpLogicalNotEqual"}[inst.mods["bop"]]
        self.set_pred(ops["pd"]["pred"], self.op(bop, self.bool, r, pc))
        if ops["qd"]["pred"] != 7:
            self.set_pred(ops["qd"]["pred"], self.op(bop, self.bool, self.op("OpLogicalNot", self.bool, r), pc))
