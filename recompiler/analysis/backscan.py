"""Constants found by walking back from an instruction in address order: a register's value
where its last write is an ``adrp`` (+ ``add``) pair, a stack slot's where its last store
stored one.  How compilers hoist a stub's slot address out of its pair: the IFUNC stubs
(``ifunc.py``) use it; jump tables come from the data flow (``tables.py``).
``insn`` is the analyser's decoder (``Analyser.insn``: None where there is no code)."""

from __future__ import annotations

from typing import Callable

from recompiler.decode import Insn
from recompiler.lift.integer import pcrel_value

M64 = (1 << 64) - 1


def loads(i: Insn) -> bool:
    """A load/store instruction that writes its Rt (a load, an atomic's old value), not a store."""
    f = i.f
    if "L" in f:
        return bool(f["L"])
    return i.group in ("LDR_lit", "LDST_atomic") or f.get("opc", 1) != 0


def const_before(insn: Callable[[int], Insn | None], reg: int, addr: int, limit: int = 256) -> int | None:
    """Value of ``reg`` if its last write before ``addr`` (walking back in address order)
    is an `adrp`(+`add`) pair: how compilers hoist a jump table's base out of a loop."""
    a = addr - 4
    for _ in range(limit):
        i = insn(a)
        if i is None:
            return None
        f = i.f
        if f.get("Rd") == reg and i.group in (
            "ADRP",
            "ADR",
            "ADDSUB_imm",
            "ADDSUB_sreg",
            "ADDSUB_ereg",
            "LOGIC_imm",
            "LOGIC_sreg",
            "MOVW",
            "BITFIELD",
            "CSEL",
            "DP1",
            "DP2",
            "DP3",
            "EXTR",
            "ADC",
        ):
            if i.name in ("ADRP", "ADR"):
                return pcrel_value(i)
            if i.group == "ADDSUB_imm" and not f["S"] and not f["op"] and f["Rn"] == reg:
                base = const_before(insn, reg, i.addr, 16)
                return None if base is None else (base + (f["imm12"] << (12 if f["sh"] else 0))) & M64
            return None
        if (
            reg in (f.get("Rt"), f.get("Rt2"))
            and i.form is not None
            and i.form.cls.startswith("ldst")
            and not f.get("V")
            and loads(i)
        ):
            return None  # (a store of the register leaves it as it was)
        if i.name in ("BL", "BLR") and (reg < 19 or reg == 30):
            return None  # x0-x18 and x30 do not survive a call; x19-x28 do
        a -= 4
    return None
