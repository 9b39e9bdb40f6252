"""IFUNC PLT stubs: the slot a stub jumps through and its resolver's possible answers.

A PLT stub (``ldr x17, [x16, #slot]; br x17``) whose slot an IRELATIVE relocation or an IFUNC
symbol fills gets the functions its resolver may answer: every entry the resolver builds with
``adrp``+``add``/``adr``, where the resolver is a plain leaf whose answer is no pointer read from
memory (glibc's pick a constant by CPU features).  The lifted stub checks the slot against
the list at run time (``lift/control.h_br``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompiler.analysis.backscan import const_before
from recompiler.analysis.transfer import ENDS
from recompiler.decode import Insn
from recompiler.lift.control import branch_target
from recompiler.lift.emitter import FunctionPlan
from recompiler.lift.integer import pcrel_value

if TYPE_CHECKING:
    from recompiler.analysis.bodies import Analyser

M64 = (1 << 64) - 1


def ifunc_slot(an: Analyser, br: Insn) -> int | None:
    """The slot a PLT stub's ``ldr xN, [xM, #off]; ...; br xN`` jumps through (xM an
    adrp constant), else None."""
    n = br.f["Rn"]
    a = br.addr - 4
    for _ in range(4):
        i = an.insn(a)
        if i is None or i.name in ENDS or branch_target(i) is not None or i.name in ("BL", "BLR"):
            return None
        f = i.f
        if i.group == "LDST_uimm" and not f["V"] and f["size"] == 3 and f["opc"] == 1 and f["Rt"] == n:
            base = const_before(an.insn, f["Rn"], i.addr)
            return None if base is None else (base + f["imm12"] * 8) & M64
        if n in (f.get("Rd"), f.get("Rt"), f.get("Rt2")):
            return None
        a -= 4
    return None


def ifunc_candidates(an: Analyser, resolver: int, funcs: dict[int, FunctionPlan]) -> list[int] | None:
    """The functions an IFUNC resolver may answer: every code address its body builds
    with adrp+add or adr that is a function entry.  None unless the resolver is a plain
    leaf whose branches stay inside it (glibc's are: they read the CPU features and pick
    a constant), since a call, a load of a pointer or an indirect branch could hand
    back anything; the lifted stub checks the slot against the list at run time."""
    plan = funcs.get(resolver)
    if plan is None:
        return None
    addrs = {i.addr for i in plan.insns}
    out: set[int] = set()
    for i in plan.insns:
        f = i.f
        if i.name in ("BL", "BLR", "BR", "SVC") or i.form is None:
            return None
        t = branch_target(i)
        if t is not None and t not in addrs:
            return None
        if i.name == "RET" and _loaded_x0(an, i.addr, addrs):
            return None  # answers a pointer read from memory: a table could hold anything
        v = None
        if i.name == "ADR":
            v = pcrel_value(i)
        elif i.group == "ADDSUB_imm" and not f["S"] and not f["op"] and f["Rd"] != 31:
            base = const_before(an.insn, f["Rn"], i.addr, 16)
            if base is not None:
                v = (base + (f["imm12"] << (12 if f["sh"] else 0))) & M64
        if v is not None and v in funcs:
            out.add(v)
    return sorted(out) or None


def _loaded_x0(an: Analyser, ret: int, addrs: set[int]) -> bool:
    """Whether X0 at the RET at ``ret`` may come from memory: walking back in address order,
    a load or store naming X0 comes before any instruction writing it as Rd (a store
    counts too: either way X0 is then no constant the resolver built)."""
    a = ret - 4
    while a in addrs:
        i = an.insn(a)
        f = i.f
        if 0 in (f.get("Rt"), f.get("Rt2")) and i.form is not None and i.form.cls.startswith("ldst") and not f.get("V"):
            return True
        if f.get("Rd") == 0:
            return False
        a -= 4
    return False
