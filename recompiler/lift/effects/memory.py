"""Declared effects of the load and store forms: the base register (and its write-back), the
offset register, the data registers loaded (written) or stored (read), LSE atomics and
compare-and-swap (read and written), store-exclusive status registers, SIMD structures."""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift.effects.base import NONE, E, Effects


# ---- loads and stores --------------------------------------------------------------------------
def ldr_lit(i: Insn) -> Effects:
    f = i.f
    if f["V"]:
        return E().wv(f["Rt"]).load().done()
    if f["opc"] == 3:  # PRFM
        return NONE
    return E().w(f["Rt"]).load().done()


def transfer(e: E, f: dict, load: bool, vector: bool, *regs: int) -> E:
    """The data registers of a load (written) or a store (read)."""
    for t in regs:
        if vector:
            e.wv(t) if load else e.rv(t)
        else:
            e.w(t) if load else e.r(t)
    return e.load() if load else e.store()


def single_kind(f: dict) -> str:
    """'load', 'store' or 'none' (PRFM) of the load/store-register group's size/opc/V."""
    if f["V"]:
        return "load" if f["opc"] & 1 else "store"
    if f["opc"] == 0:
        return "store"
    if f["size"] == 3 and f["opc"] == 2:
        return "none"
    return "load"


def ldst_single(f: dict, wb: bool = False, rm: bool = False) -> Effects:
    """One register loaded or stored at [Rn (+ Rm)], Rn written back with ``wb``."""
    kind = single_kind(f)
    e = E()
    if kind == "none" and not wb:  # PRFM: a hint, lifted as nothing
        return NONE
    e.r(f["Rn"], sp=True)
    if rm:
        e.r(f["Rm"])
    if kind != "none":
        transfer(e, f, kind == "load", bool(f["V"]), f["Rt"])
    if wb:
        e.w(f["Rn"], sp=True)
    return e.done()


def imm9(i: Insn) -> Effects:
    return ldst_single(i.f, wb=i.f["idx"] in (1, 3))


def uimm(i: Insn) -> Effects:
    return ldst_single(i.f)


def regoff(i: Insn) -> Effects:
    return ldst_single(i.f, rm=True)


def rcpc2(i: Insn) -> Effects:
    return ldst_single(dict(i.f, V=0))  # LDAPUR*/STLUR*: general registers only


def pair(i: Insn) -> Effects:
    f = i.f
    e = E().r(f["Rn"], sp=True)
    transfer(e, f, bool(f["L"]), bool(f["V"]), f["Rt"], f["Rt2"])
    if f["idx"] in (1, 3):
        e.w(f["Rn"], sp=True)
    return e.done()


def excl(i: Insn) -> Effects:
    f = i.f
    o2, L, o1, size = f["o2"], f["L"], f["o1"], f["size"]
    t, t2, rs = f["Rt"], f["Rt2"], f["Rs"]
    e = E().r(f["Rn"], sp=True)
    if o1 == 1 and (o2 == 1 or size < 2):  # CAS, CASP: compare Rs(+1), swap in Rt(+1)
        pair = o2 == 0
        e.r(rs, t, *((rs + 1, t + 1) if pair else ())).w(rs)
        if pair and rs != 31:
            e.w(rs + 1)
        return e.load().store().done()
    regs = (t, t2) if o1 == 1 else (t,)  # LDXP/STXP; LDXR/STXR, LDAR/STLR
    if L:
        return transfer(e, f, True, False, *regs).done()
    transfer(e, f, False, False, *regs)
    if o2 == 0:  # a store-exclusive's status
        e.w(rs)
    return e.done()


def atomic(i: Insn) -> Effects:
    f = i.f
    e = E().r(f["Rn"], sp=True).w(f["Rt"]).load()
    if f["o3"] == 1 and f["opc"] == 4:  # LDAPR
        return e.done()
    return e.r(f["Rs"]).store().done()


def simd_regs(t: int, n: int) -> list[int]:
    return [(t + k) % 32 for k in range(n)]


def ldst_multi(i: Insn) -> Effects:
    f = i.f
    n = {7: 1, 10: 2, 6: 3, 2: 4, 0: 4, 4: 3, 8: 2}.get(f["opcode"], 1)
    e = E().r(f["Rn"], sp=True)
    for r in simd_regs(f["Rt"], n):
        e.wv(r) if f["L"] else e.rv(r)
    e.load() if f["L"] else e.store()
    if i.group == "LDST_multi_post":
        e.r(f["Rm"]).w(f["Rn"], sp=True)
    return e.done()


def ldst_single_lane(i: Insn) -> Effects:
    f = i.f
    n = ((f["opcode"] & 1) << 1 | f["R"]) + 1
    e = E().r(f["Rn"], sp=True)
    replicate = f["opcode"] >> 1 == 3
    for r in simd_regs(f["Rt"], n):
        # a load of one lane keeps the others; LDnR writes every lane
        e.wv(r, part=not replicate) if f["L"] else e.rv(r)
    e.load() if f["L"] else e.store()
    if i.group == "LDST_single_post":
        e.r(f["Rm"]).w(f["Rn"], sp=True)
    return e.done()
