"""SM86's uniform datapath (issue 31, shader-u): UIMAD (.WIDE), UISETP (.EX), ULEA, ULOP3,
UPLOP3, USEL, USHF, UPRMT, UPOPC, UBREV, UBMSK, USGXT, UFLO, UP2UR, UR2UP, UF2FP.

A uniform register (UR0..UR62, URZ) or predicate (UP0..UP6, UPT) holds one value for the whole
warp; one SPIR-V invocation is one thread, so here it is an ordinary value of each invocation
(function variables ``UR<n>`` / ``UP<n>``, as R2UR, ULDC and UIADD3 already use).  A uniform
instruction then means what its vector counterpart means on those operands (nvdisasm prints
the same modifiers; Mesa NAK's SM70+ encoder shares the vector and uniform forms of each ALU
operation): the handlers here are the vector ones of ``lower_alu``/``lower`` with the operands'
files taken from the row (``Pred.file``, ``Reg.file``).  A write to a uniform predicate is a
``StoreVarBool`` of the variable ``UP<n>`` (``SetPred`` names the 'P' file only), the variable
``GetPred(file='UP')`` reads, so the optimiser sees both.

Forms whose meaning no public document gives are refused by name: UF2FP.MERGE_C, ULOP3 with a
predicate combined by .PAND or with another predicate than !UPT, UCLEA (a constant bank address).
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

UNIFORM_RULES = {
    "UIMAD": "op_imad",
    "UIMAD.WIDE": "op_uimad_wide",
    "UISETP": "op_uisetp",
    "ULEA": "op_lea",
    "ULOP3": "op_ulop3",
    "UPLOP3": "op_uplop3",
    "USEL": "op_usel",
    "USHF": "op_shf",
    "UPRMT": "op_prmt",
    "UPOPC": "op_popc",
    "UBREV": "op_brev",
    "UBMSK": "op_bmsk",
    "USGXT": "op_sgxt",
    "UP2UR": "op_p2r",
    "UR2UP": "op_r2p",
    "UF2FP": "op_uf2fp",
}


def refuse(inst: Inst, what: str) -> None:
    """Refuse the instruction by name: its text, word and what is not translated."""
    raise TranslateError(f"{inst.text()} (word {inst.word:#x}): {what}", offset=inst.addr)


def pred_file(inst: Inst, name: str) -> str:
    """The register file ('P' or 'UP') of the instruction's predicate operand ``name``."""
    return next(o.file for o in inst.row.operands if o.name == name)


def pred_in(b: Block, inst: Inst, name: str) -> Value:
    """A predicate source operand (negated where the instruction says), from its own file."""
    p = inst.ops[name]
    return b.get_pred(p["pred"], p["not"], pred_file(inst, name))


def pred_out(lw, b: Block, inst: Inst, name: str, v: Value, file: str | None = None) -> None:
    """Write ``v`` to the predicate operand ``name`` (PT/UPT drops it) in its file."""
    p = inst.ops[name]["pred"]
    set_pred_file(lw, b, p, v, file or pred_file(inst, name))


def set_pred_file(lw, b: Block, p: int, v: Value, file: str) -> None:
    """Predicate ``p`` of ``file`` := ``v``: ``SetPred`` for P, the variable ``UP<p>`` for UP."""
    if p == 7:
        return
    if file == "P":
        b.set_pred(p, v)
    else:
        b.emit("StoreVarBool", v, var=lw.var(f"{file}{p}", lw.fn_bool))


def pair_ir(lw: Lower86, b: Block, inst: Inst, name: str) -> Value:
    """A 64-bit source: a register pair of its file (R or UR; RZ/URZ: 0) or ``src64_ir``'s forms."""
    v = inst.ops[name]
    if "reg" not in v or v.get("file", "R") == "R":
        return lw.src64_ir(b, inst, name)
    f = v["file"]
    if v["reg"] == 63:
        return b.const_u64(0)
    return b.op("Pack64", b.get_reg(v["reg"], f), b.get_reg(v["reg"] + 1, f))


def put_pair_ir(b: Block, inst: Inst, v: Value) -> None:
    """Write the u64 ``v`` to the destination pair d, d+1 of its file (RZ/URZ discards both)."""
    dv = inst.ops.get("d", {})
    d, f = dv.get("reg", 255), dv.get("file", "R")
    b.set_reg(d, b.op("Trunc32", v), f)
    if d != (255 if f == "R" else 63):
        b.set_reg(d + 1, b.op("Trunc32", b.op("Shr64", v, b.const_u64(32))), f)


def bop_ir(lw, b: Block, inst: Inst, r: Value) -> None:
    """A comparison's predicates in their files: p = r BOP pp, q = !r BOP pp."""
    c = pred_in(b, inst, "pp")
    bop = ("LAnd", "LOr", "LXor")[inst.mods["bop"]]
    pred_out(lw, b, inst, "p", b.op(bop, r, c))
    if inst.ops["q"]["pred"] != 7:
        pred_out(lw, b, inst, "q", b.op(bop, b.op("LNot", r), c))


def icmp_ex_ir(b: Block, inst: Inst, x: Value, y: Value, ex: Value) -> Value:
    """ISETP.EX's comparison: the high words of a 64-bit comparison, the low words' result ``ex``
    deciding where they are equal (EQ: both equal; NE: either differs)."""
    cmp, uns = inst.mods["cmp"], inst.mods["U32"] == 0
    eq = b.op("IEq32", x, y)
    if cmp in (1, 3, 4, 6):
        strict = b.emit("ICmp32", x, y, cmp=1 if cmp in (1, 3) else 4, unsigned=uns)
        return b.op("LOr", strict, b.op("LAnd", eq, ex))
    if cmp == 2:
        return b.op("LAnd", eq, ex)
    if cmp == 5:
        return b.op("LOr", b.op("LNot", eq), ex)
    return b.const_bool(cmp == 7)


class Uniform86(Lower86):
    """Mixin of ``to_spirv.Compute86``: the uniform handlers without a vector one to share."""

    def op_uimad_wide(self, inst: Inst) -> None:
        """UIMAD.WIDE(.U32): the pair d = a * b (64-bit product of the widened words) + the pair
        c; the carry out of that add to the uniform predicate co."""
        self.require(inst, X=0)
        b = Block()
        p = self.wide_product_ir(b, inst)
        cc = pair_ir(self, b, inst, "c")
        s = b.op("IAdd64", p, cc)
        if inst.ops["co"]["pred"] != 7:
            pred_out(self, b, inst, "co", b.op("ULt64", s, cc))
        put_pair_ir(b, inst, s)
        ir_spirv.emit(self, b)

    def op_uisetp(self, inst: Inst) -> None:
        """UISETP: ISETP (with .EX) on uniform registers, writing uniform predicates."""
        b = Block()
        x, y = self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")
        if inst.mods["EX"]:
            r = icmp_ex_ir(b, inst, x, y, pred_in(b, inst, "ex"))
        else:
            r = b.emit("ICmp32", x, y, cmp=inst.mods["cmp"], unsigned=inst.mods["U32"] == 0)
        bop_ir(self, b, inst, r)
        ir_spirv.emit(self, b)

    def op_ulop3(self, inst: Inst) -> None:
        """ULOP3.LUT: LOP3's truth table; the uniform predicate p = (result != 0) where it is
        combined with !UPT and no .PAND (what nvcc writes); other combinations are refused."""
        ops = inst.ops
        self.require(inst, PAND=0)
        b = Block()
        x, y, z = (self.src_ir(b, inst, n) for n in ("a", "b", "c"))
        r = b.emit("Lut3", x, y, z, lut=ops["lut"]["imm"])
        self.put_ir(b, inst, r)
        if ops["p"]["pred"] != 7:
            if not (ops["pp"]["pred"] == 7 and ops["pp"]["not"]):
                refuse(inst, "predicate combine not translated")
            pred_out(self, b, inst, "p", b.op("INe32", r, b.const_u32(0)))
        ir_spirv.emit(self, b)

    def op_uplop3(self, inst: Inst) -> None:
        """UPLOP3.LUT: PLOP3's two truth tables on uniform predicates."""
        ops = inst.ops
        b = Block()
        x, y, z = (pred_in(b, inst, n) for n in ("a", "b", "c"))
        pred_out(self, b, inst, "p", b.emit("Lut3Bool", x, y, z, lut=ops["lut"]["imm"]))
        pred_out(self, b, inst, "q", b.emit("Lut3Bool", x, y, z, lut=ops["lut2"]["imm"]))
        ir_spirv.emit(self, b)

    def op_usel(self, inst: Inst) -> None:
        """USEL: a where the uniform predicate pp holds, else b."""
        b = Block()
        p = pred_in(b, inst, "pp")
        self.put_ir(b, inst, b.op("Select32", p, self.src_ir(b, inst, "a"), self.src_ir(b, inst, "b")))
        ir_spirv.emit(self, b)

    def op_uf2fp(self, inst: Inst) -> None:
        """UF2FP.PACK_AB: F2FP's pack of two f32 as halves; .MERGE_C is refused (no document)."""
        self.require(inst, mode=0)
        self.op_f2fp(inst)
