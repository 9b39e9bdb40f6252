"""Declared effects of the data-processing, branch, exception and system forms (Arm ARM:
the A64 encoding index's data processing groups, branches, exception generation and system)."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.effects.base import NONE, E, Effects


# ---- data processing, immediate and register ---------------------------------------------------
def pcrel(i: Insn) -> Effects:
    return E().w(i.f["Rd"]).done()


def addsub_imm(i: Insn) -> Effects:
    f = i.f
    return E().r(f["Rn"], sp=True).w(f["Rd"], sp=not f["S"]).flags(set_=bool(f["S"])).done()


def logic_imm(i: Insn) -> Effects:
    f = i.f
    ands = f["opc"] == 3
    return E().r(f["Rn"]).w(f["Rd"], sp=not ands).flags(set_=ands).done()


def movw(i: Insn) -> Effects:
    f = i.f
    e = E().w(f["Rd"])
    return (e.r(f["Rd"]) if f["opc"] == 3 else e).done()  # MOVK keeps the other halfwords


def bitfield(i: Insn) -> Effects:
    f = i.f
    e = E().r(f["Rn"]).w(f["Rd"])
    return (e.r(f["Rd"]) if f["opc"] == 1 else e).done()  # BFM keeps Rd's other bits


def rn_rm_rd(i: Insn) -> Effects:
    f = i.f
    return E().r(f["Rn"], f["Rm"]).w(f["Rd"]).done()


def extr(i: Insn) -> Effects:
    f = i.f
    e = E().r(f["Rm"]).w(f["Rd"])
    return (e.r(f["Rn"]) if f["imms"] else e).done()  # (Rn:Rm) >> 0 is Rm


def logic_sreg(i: Insn) -> Effects:
    f = i.f
    return E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(set_=f["opc"] == 3).done()


def addsub_sreg(i: Insn) -> Effects:
    f = i.f
    return E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(set_=bool(f["S"])).done()


def addsub_ereg(i: Insn) -> Effects:
    f = i.f
    return E().r(f["Rn"], sp=True).r(f["Rm"]).w(f["Rd"], sp=not f["S"]).flags(set_=bool(f["S"])).done()


def adc(i: Insn) -> Effects:
    f = i.f
    return E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(read=True, set_=bool(f["S"])).done()


def cond_reads(f: dict) -> bool:
    """Whether a condition field reads NZCV: AL and NV (0b111x) hold always."""
    return f["cond"] >> 1 != 7


def flagm(i: Insn) -> Effects:
    """CFINV, XAFLAG, AXFLAG (FEAT_FlagM/FlagM2): every flag written from the old ones."""
    return E().flags(read=True, set_=True).done()


def ccmp_reg(i: Insn) -> Effects:
    return E().r(i.f["Rn"], i.f["Rm"]).flags(read=cond_reads(i.f), set_=True).done()


def ccmp_imm(i: Insn) -> Effects:
    return E().r(i.f["Rn"]).flags(read=cond_reads(i.f), set_=True).done()


def csel(i: Insn) -> Effects:
    f = i.f
    return E().r(f["Rn"], f["Rm"]).w(f["Rd"]).flags(read=cond_reads(f)).done()


def dp3(i: Insn) -> Effects:
    f = i.f
    e = E().r(f["Rn"], f["Rm"]).w(f["Rd"])
    if f["op31"] not in (2, 6):  # SMULH/UMULH have no addend
        e.r(f["Ra"])
    return e.done()


def dp1(i: Insn) -> Effects:
    return E().r(i.f["Rn"]).w(i.f["Rd"]).done()


# ---- branches, exceptions, system ------------------------------------------------------------
def bl(i: Insn) -> Effects:
    return E().w(30).done()


def cbz(i: Insn) -> Effects:
    return E().r(i.f["Rt"]).done()


def bcond(i: Insn) -> Effects:
    return E().flags(read=cond_reads(i.f)).done()


def br(i: Insn) -> Effects:
    return E().r(i.f["Rn"]).done()


def blr(i: Insn) -> Effects:
    return E().r(i.f["Rn"]).w(30).done()


def ret(i: Insn) -> Effects:
    # the lifted return hands X0 on in its C result (NxRet) as well as the target
    return E().r(i.f["Rn"], 0).done()


_SYSREG_NZCV = (1, 3, 4, 2, 0)  # (o0, op1, CRn, CRm, op2)


def sysreg(f: dict) -> tuple[int, int, int, int, int]:
    return (f["o0"], f["op1"], f["CRn"], f["CRm"], f["op2"])


def mrs(i: Insn) -> Effects:
    return E().w(i.f["Rt"]).flags(read=sysreg(i.f) == _SYSREG_NZCV).done()


def msr_reg(i: Insn) -> Effects:
    return E().r(i.f["Rt"]).flags(set_=sysreg(i.f) == _SYSREG_NZCV).done()


def sys(i: Insn) -> Effects:
    f = i.f
    if (f["op1"], f["CRn"], f["CRm"], f["op2"]) == (3, 7, 4, 1) and not f["L"]:  # DC ZVA
        return E().r(f["Rt"]).store().done()
    return NONE
