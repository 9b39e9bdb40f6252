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
from shader_svc.ir.spaces import Layout
from shader_svc.lower import refused
from shader_svc.lower.base import TranslateError
from shader_svc.lower.lowering import Lowering
from shader_svc.sm53 import cbank
from shader_svc.sm53.decode import Inst

BRANCHES = {"BRA", "SSY", "PBK", "CAL", "JCAL", "SYNC", "BRK", "RET", "EXIT", "BPT"}
LOWERED = {
    "MOV",
    "S2R",
    "NOP",
    "IADD",
    "IADD3",
    "ISCADD",
    "XMAD",
    "SHL",
    "SHR",
    "SHF",
    "LOP",
    "LOP3",
    "ISETP",
    "ICMP",
    "PSETP",
    "IMNMX",
    "SEL",
    "BFE",
    "BFI",
    "PRMT",
    "POPC",
    "FLO",
    "FADD",
    "FMUL",
    "FFMA",
    "FMNMX",
    "FSETP",
    "I2F",
    "F2I",
    "F2F",
    "MUFU",
    "RRO",
    "LDG",
    "STG",
    "LDS",
    "STS",
    "ATOMS",
    "ATOM",
    "ATOM_CAS",
    "RED",
    "BAR",
    "VOTE",
    "SHFL",
    "LDL",
    "STL",
    "LDC",
    "LEA",
    "LEA_HI",
    "I2I",
    "IMUL",
    "DADD",
    "DMUL",
    "DFMA",
    "DSETP",
    "LD",
    "ST",
    "BPT",
    "IMAD",
} | BRANCHES


class Lower53(Lowering):
    """Operands and the table dispatch of SM53's lowering; the handlers are in the topic mixins
    (``lower_int``, ``lower_float``, ``lower_mem``, ``lower_control``)."""

    # constant bank 0's windows for ir/spaces.py (sm53/cbank.py: 32-bit bases of the shared
    # window at 0x0 and the local window at 0x4, the stack top at 0x20)
    GENERIC_LAYOUT = Layout({0x0: "s", 0x4: "lw"}, 0x20, cbank.PARAMS, (cbank.LOCAL_WINDOW, cbank.SHARED_WINDOW + (1 << 24)))
    RULES: dict[str, str] = {}  # lowering key (the row's ``ir``) -> handler method

    def lower(self, inst: Inst) -> None:
        """Lower one (unguarded part of an) instruction through ``RULES``."""
        name = self.RULES.get(inst.row.ir)
        if name is None:
            self.bad(inst, refused.why(53, inst.row.mnemonic))
        getattr(self, name)(inst)

    def dest(self, inst: Inst) -> Callable[[int], None]:
        """The writer of the instruction's destination register ``d`` (RZ discards)."""
        d = inst.ops.get("d", {}).get("reg", 255)
        return lambda val: self.set_reg(d, val)

    def lowered(self, ir: str) -> bool:
        return ir in LOWERED

    def untranslated_why(self, inst: Inst) -> str:
        """Why a row without a rule is refused (``lower/refused.py``)."""
        return refused.why(53, inst.row.mnemonic)

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

    @staticmethod
    def _int_field(b: Block, x: Value, v: dict, w: int, signed: bool) -> Value:
        """An 8/16/32-bit integer operand's value: its byte select (.B1..B3) shifted down, then
        the field of ``w`` bits extended by its sign (``signed``) or zeros."""
        if v.get("bsel"):
            x = b.op("IShr32", x, b.const_u32(8 * v["bsel"]))
        if w < 32:
            z = b.const_u32(0)
            x = b.op("SBitExtract32" if signed else "UBitExtract32", x, z, b.const_u32(w))
        return x

    def fval(self, inst: Inst, name: str) -> int:
        return self.op("OpBitcast", self.f32, self.val(inst, name, True))

    def pv(self, v: dict) -> int:
        return self.pred(v["pred"], v["not"])

    def raw_ir(self, b: Block, inst: Inst, name: str) -> Value:
        """A source operand's 32 bits as they are (no half select, inv, neg or abs)."""
        v = inst.ops[name]
        if "reg" in v:
            return b.get_reg(v["reg"])
        return b.cbank_u32(v["bank"], v["off"], inst) if "bank" in v else b.const_u32(v["imm"])

    @staticmethod
    def add_cc_ir(b: Block, terms: list[Value], x: bool, cc: bool) -> Value:
        """Sum of 32-bit terms (+ the carry flag with .X), the carry and zero flags written with
        .CC: the carry is the high word of the u64 sum."""
        if not cc:
            s, rest = terms[0], terms[1:]
            if x:
                rest.append(b.op("Select32", b.emit("GetFlag", flag="CC"), b.const_u32(1), b.const_u32(0)))
            for t in rest:
                s = b.op("IAdd32", s, t)
            return s
        s, rest = b.op("ZExt64", terms[0]), terms[1:]
        if x:
            rest.append(b.op("Select32", b.emit("GetFlag", flag="CC"), b.const_u32(1), b.const_u32(0)))
        for t in rest:
            s = b.op("IAdd64", s, b.op("ZExt64", t))
        Lower53.set_carry_ir(b, s)
        r = b.op("Trunc32", s)
        Lower53.set_zero_ir(b, r, x)
        # the overflow flag (CCO, shader-u): the terms' sum as signed integers out of the 32-bit
        # range (two terms: both of one sign, the result of the other); the carry-in (the last
        # of ``rest`` with .X, read before this write) counts as +1
        o = b.op("SExt64", terms[0])
        for t in rest:
            o = b.op("IAdd64", o, b.op("SExt64", t))
        b.emit("SetFlag", b.op("INe64", o, b.op("SExt64", b.op("Trunc32", o))), flag="CCO")
        return r

    @staticmethod
    def set_carry_ir(b: Block, s: Value) -> None:
        """.CC's carry flag from the u64 sum ``s``: its high word is not 0."""
        b.emit("SetFlag", b.op("INe64", b.op("Shr64", s, b.const_u64(32)), b.const_u64(0)), flag="CC")

    @staticmethod
    def set_zero_ir(b: Block, r: Value, x: bool) -> None:
        """.CC's zero flag: the result ``r`` is 0 (with .X: and the flag was already set, so a
        64-bit chain's flag says the whole value is 0); and its sign flag (CCS): r's bit 31."""
        z = b.op("IEq32", r, b.const_u32(0))
        if x:
            z = b.op("LAnd", z, b.emit("GetFlag", flag="CCZ"))
        b.emit("SetFlag", z, flag="CCZ")
        b.emit("SetFlag", b.op("INe32", b.op("IShr32", r, b.const_u32(31)), b.const_u32(0)), flag="CCS")

    def need(self, inst: Inst, **mods: int) -> None:
        for k, want in mods.items():
            if inst.mods.get(k, want) != want:
                raise TranslateError(f"{inst.text()}: modifier {k} not translated yet", offset=inst.addr)

    def bad(self, inst: Inst, why: str = "not translated yet"):
        raise TranslateError(f"{inst.text()} (word {inst.word:#x}): {why}", offset=inst.addr)

    @staticmethod
    def setp_ir(b: Block, inst: Inst, r: Value) -> None:
        """A comparison's predicates: pd = r BOP pc, qd = !r BOP pc (BOP: .AND, .OR, .XOR)."""
        ops = inst.ops
        pc = b.get_pred(ops["pc"]["pred"], ops["pc"]["not"])
        bop = ("LAnd", "LOr", "LXor")[inst.mods["bop"]]
        b.set_pred(ops["pd"]["pred"], b.op(bop, r, pc))
        if ops["qd"]["pred"] != 7:
            b.set_pred(ops["qd"]["pred"], b.op(bop, b.op("LNot", r), pc))

    @staticmethod
    def put64_ir(b: Block, d: int, v: Value) -> None:
        """Write the u64 ``v`` to the register pair d, d+1 (RZ discards both)."""
        b.set_reg(d, b.op("Trunc32", v))
        if d != 255:
            b.set_reg(d + 1, b.op("Trunc32", b.op("Shr64", v, b.const_u64(32))))
