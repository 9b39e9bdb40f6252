"""Where an instruction may go next, from its encoding alone: its direct branch target and
whether it falls through.  A leaf module (it imports only the decoder) so that analysis and
the lifter's per-function passes (``facts._frame_saves``) share one definition without an
import loop between them."""

from __future__ import annotations

from recompiler.decode import Insn

M64 = (1 << 64) - 1
ENDS = frozenset({"B", "BR", "RET", "BRK", "UDF"})  # never fall into the next instruction
SHARED_TABLE = 16  # a BR of this many distinct targets or more dispatches through a label array (control.py)


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def branch_target(i: Insn) -> int | None:
    """Direct branch target of ``i`` (B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ), else None."""
    f = i.f
    n = i.group  # CBZ/CBNZ, TBZ/TBNZ: their groups
    if n in ("B", "BL"):
        return (i.addr + _sext(f["imm26"], 26) * 4) & M64
    if n in ("CBZ", "BCOND"):
        return (i.addr + _sext(f["imm19"], 19) * 4) & M64
    if n == "TBZ":
        return (i.addr + _sext(f["imm14"], 14) * 4) & M64
    return None


def successors(i: Insn) -> tuple[int | None, bool]:
    """(the direct branch target of ``i`` or None, whether ``i`` may fall through)."""
    n = i.name
    t = branch_target(i) if n != "BL" else None
    ends = n in ENDS or i.form is None or (i.group == "BCOND" and i.f["cond"] >> 1 == 7)
    return t, not ends
