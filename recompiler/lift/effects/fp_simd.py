"""Declared effects of the scalar floating-point, Advanced SIMD and cryptography forms: which
vector registers each reads, and whether its result writes Vd in full (a scalar result zeroes
the upper bits, as does a Q = 0 vector one) or only in part (an accumulation, a narrowing "2"
form, an insert, ORR/BIC immediate, TBX), which reads Vd too."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.effects.base import E, Effects
from recompiler.lift.effects.integer import cond_reads
from recompiler.lift.effects.memory import simd_regs


# ---- scalar floating point -------------------------------------------------------------------
def v1(i: Insn) -> Effects:
    """Vd = op(Vn)."""
    return E().rv(i.f["Rn"]).wv(i.f["Rd"]).done()


def v2(i: Insn) -> Effects:
    """Vd = op(Vn, Vm)."""
    return E().rv(i.f["Rn"], i.f["Rm"]).wv(i.f["Rd"]).done()


def v3(i: Insn) -> Effects:
    """Vd = op(Vn, Vm, Va)."""
    return E().rv(i.f["Rn"], i.f["Rm"], i.f["Ra"]).wv(i.f["Rd"]).done()


def v_acc(i: Insn) -> Effects:
    """Vd = op(Vd, Vn, Vm): an accumulation (dot products, SQRDMLAH, SHA)."""
    return E().rv(i.f["Rn"], i.f["Rm"], i.f["Rd"]).wv(i.f["Rd"]).done()


def fmov_imm(i: Insn) -> Effects:
    return E().wv(i.f["Rd"]).done()


def fp_cmp(i: Insn) -> Effects:
    f = i.f
    e = E().rv(f["Rn"]).flags(set_=True)
    if not f["opc"] & 8:  # FCMP Vn, #0.0 reads no Vm
        e.rv(f["Rm"])
    return e.done()


def fp_ccmp(i: Insn) -> Effects:
    return E().rv(i.f["Rn"], i.f["Rm"]).flags(read=cond_reads(i.f), set_=True).done()


def fcsel(i: Insn) -> Effects:
    return E().rv(i.f["Rn"], i.f["Rm"]).wv(i.f["Rd"]).flags(read=cond_reads(i.f)).done()


def fp_int(i: Insn) -> Effects:
    """FP_INT(_H): conversions and moves between a general and a vector register."""
    f = i.f
    op, rmode = f["opcode"], f["rmode"]
    if op in (2, 3) or op == 7:  # SCVTF/UCVTF, FMOV to the vector register
        top = op == 7 and rmode == 1  # FMOV Vd.D[1], Xn keeps D[0]
        return E().r(f["Rn"]).wv(f["Rd"], part=top).done()
    return E().rv(f["Rn"]).w(f["Rd"]).done()  # FCVT*, FMOV to the general register


def fp_fix(i: Insn) -> Effects:
    f = i.f
    if f["opcode"] in (2, 3):  # SCVTF/UCVTF (fixed point)
        return E().r(f["Rn"]).wv(f["Rd"]).done()
    return E().rv(f["Rn"]).w(f["Rd"]).done()


def fjcvtzs(i: Insn) -> Effects:
    return E().rv(i.f["Rn"]).w(i.f["Rd"]).flags(set_=True).done()


# ---- advanced SIMD ---------------------------------------------------------------------------
def vec(i: Insn, acc: bool, two: bool = False) -> Effects:
    """A vector result into Vd from Vn (and Vm where the form has it): ``acc`` where the
    operation reads Vd (an accumulation, a narrowing "2" form's kept low half, an insert)."""
    f = i.f
    e = E().rv(f["Rn"])
    if "Rm" in f and not two:
        e.rv(f["Rm"])
    return e.wv(f["Rd"], part=acc).done()


def three_same(i: Insn) -> Effects:
    f = i.f
    U, size, op = f["U"], f["size"], f["opcode"]
    acc = op in (0b10010, 0b01111) or (op == 0b00011 and U and size) or (op == 0b11001 and not U)
    return vec(i, bool(acc))


def three_same_fp16(i: Insn) -> Effects:
    f = i.f
    return vec(i, f["opcode"] == 1 and not f["U"])  # FMLA/FMLS (half precision)


def scalar_three_same(i: Insn) -> Effects:
    return vec(i, False)


def three_diff(i: Insn) -> Effects:
    f = i.f
    op = f["opcode"]
    acc = op in (0b0101, 0b1000, 0b1001, 0b1010, 0b1011) or (op in (0b0100, 0b0110) and f["Q"])
    return vec(i, acc)


def scalar_three_diff(i: Insn) -> Effects:
    return vec(i, i.f["opcode"] in (0b1001, 0b1011))  # SQDMLAL/SQDMLSL


def two_reg(i: Insn) -> Effects:
    f = i.f
    op = f["opcode"]
    acc = op in (0b00011, 0b00110) or (op in (0b10010, 0b10100) and f["Q"])  # S/USQADD, S/UADALP, XTN2...
    return vec(i, acc)


def scalar_two_reg(i: Insn) -> Effects:
    return vec(i, i.f["opcode"] == 0b00011)  # SUQADD/USQADD


def addlp(i: Insn) -> Effects:
    return vec(i, bool(i.f["op"]))  # SADALP/UADALP


def shift_imm(i: Insn) -> Effects:
    f = i.f
    op = f["opcode"]
    acc = op in (0b00010, 0b00110) or (f["U"] and op in (0b01000, 0b01010))  # S/USRA, S/URSRA, SRI, SLI
    if i.group == "SIMD_shift_imm" and 0b10000 <= op <= 0b10011 and f["Q"]:  # narrowing "2"
        acc = True
    return vec(i, bool(acc))


def shift_ins(i: Insn) -> Effects:
    return vec(i, True)  # SRI/SLI keep the bits they do not shift in


def fcvt_nl(i: Insn) -> Effects:
    f = i.f
    return vec(i, not f["o"] and bool(f["Q"]))  # FCVTN2/FCVTXN2 keep the low half


def copy(i: Insn) -> Effects:
    f = i.f
    imm4 = f["imm4"]
    if f["op"]:  # INS (element)
        return E().rv(f["Rn"]).wv(f["Rd"], part=True).done()
    if imm4 == 0:  # DUP (element)
        return E().rv(f["Rn"]).wv(f["Rd"]).done()
    if imm4 == 1:  # DUP (general)
        return E().r(f["Rn"]).wv(f["Rd"]).done()
    if imm4 == 3:  # INS (general)
        return E().r(f["Rn"]).wv(f["Rd"], part=True).done()
    return E().rv(f["Rn"]).w(f["Rd"]).done()  # SMOV/UMOV


def movi(i: Insn) -> Effects:
    """MOVI, MVNI, FMOV (vector, immediate): Vd written whole (Q = 0: the upper half zeroed)."""
    return E().wv(i.f["Rd"]).done()


def orr_bic_imm(i: Insn) -> Effects:
    """ORR/BIC (vector, immediate): the bits they do not set or clear are Vd's own."""
    return E().wv(i.f["Rd"], part=True).done()


def elem(i: Insn) -> Effects:
    f = i.f
    U, op = f["U"], f["opcode"]
    m = f["Rm"] | (f["M"] << 4) if f["size"] >= 2 else f["Rm"]  # 16-bit elements: V0-V15
    if U:
        acc = op in (0b0000, 0b0100, 0b0010, 0b0110, 0b1101, 0b1111)
    else:
        acc = op in (0b0001, 0b0101, 0b0010, 0b0011, 0b0110, 0b0111)
    if i.group == "SIMD_scalar_elem" and not U:
        acc = op in (0b0001, 0b0101, 0b0011, 0b0111)
    return E().rv(f["Rn"], m).wv(f["Rd"], part=bool(acc)).done()


def dot_elem(i: Insn) -> Effects:
    f = i.f
    return E().rv(f["Rn"], f["Rm"] | (f["M"] << 4), f["Rd"]).wv(f["Rd"]).done()


def tbl(i: Insn) -> Effects:
    f = i.f
    e = E().rv(f["Rm"], *simd_regs(f["Rn"], f["len"] + 1))
    return e.wv(f["Rd"], part=bool(f["op"])).done()  # TBX keeps the lanes out of range


def aes(i: Insn) -> Effects:
    return vec(i, i.f["op"] < 2)  # AESE/AESD: Vd ^ Vn


def sha_2reg(i: Insn) -> Effects:
    return vec(i, i.f["opcode"] != 0)  # SHA1SU1, SHA256SU0 (SHA1H reads only Vn)


def sha512_3reg(i: Insn) -> Effects:
    return vec(i, i.f["opcode"] != 3)  # SHA512H/H2/SU1 (RAX1: Vn, Vm)


def sha3_4reg(i: Insn) -> Effects:
    return v3(i)
