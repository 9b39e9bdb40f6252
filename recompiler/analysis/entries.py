"""Entries beyond the program entry, symbols and FDEs: every ``BL`` target, every ``adrp``+``add``
pair and aligned data word that points at code (``sweep_calls``), and the removal of weak
entries another body falls into (``merge_fallen_into``).  Code addresses built in registers at
any distance are ``pointers.py``'s."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from recompiler.analysis.transfer import ENDS
from recompiler.decode import Insn
from recompiler.lift.control import branch_target
from recompiler.lift.emitter import FunctionPlan
from recompiler.lift.integer import sext

if TYPE_CHECKING:
    from recompiler.analysis.bodies import Analyser

M64 = (1 << 64) - 1


def sweep_calls(an: Analyser) -> None:
    """Seed entries from every BL target, every `adrp`+`add` pair that computes a code
    address (function pointers passed in registers), and every aligned 64-bit word of
    the image that points at code (function pointers in data and rodata).  Instructions are
    read in code only (``Memory.code_ranges``): a word of rodata or of an unwind table that a
    library maps in its executable segment is no ``BL``."""
    for va, _memsz, data, _x in an.mem.segments:
        off = -va % 8  # the first 8-aligned guest address in the segment
        if len(data) >= off + 8:
            for k, v in enumerate(struct.unpack_from(f"<{(len(data) - off) // 8}Q", data, off)):
                if v % 4 == 0 and an.mem.is_code(v) and v not in an.entries:
                    an.entries.add(v)
                    an.weak.add(v)
                    an.source.setdefault(v, "data")
    for va, data in an.mem.code_pieces():  # (not the rodata or unwind tables of a code segment)
        words = struct.unpack_from(f"<{len(data) // 4}I", data, 0)
        for k, w in enumerate(words):
            a = va + 4 * k
            if w >> 26 == 0x25:  # BL
                t = (a + sext(w & 0x3FFFFFF, 26) * 4) & M64
                if an.mem.is_code(t):
                    an.entries.add(t)
                    an.weak.discard(t)
                    an.source.setdefault(t, "bl")
            elif w & 0x9F000000 == 0x90000000:  # ADRP
                rd = w & 31
                page = ((a & ~0xFFF) + (sext(((w >> 5) & 0x7FFFF) << 2 | ((w >> 29) & 3), 21) << 12)) & M64
                for j in range(k + 1, min(k + 4, len(words))):
                    w2 = words[j]
                    # ADD Xd, Xn, #imm12 (no shift) with Xn == the ADRP's register
                    if w2 & 0xFFC00000 == 0x91000000 and (w2 >> 5) & 31 == rd:
                        t = page + ((w2 >> 10) & 0xFFF)
                        if t % 4 == 0 and an.mem.is_code(t) and t not in an.entries:
                            an.entries.add(t)
                            an.weak.add(t)
                            an.source.setdefault(t, "adrp+add")
                        break


def _falls_through(i: Insn | None) -> bool:
    """``i`` is code that runs on into the next instruction: not a branch, call, return, trap,
    system call (``exit``'s ends a function) or hint (``nop`` pads between functions)."""
    if i is None or i.form is None or i.name in ENDS or i.group in ("BL", "BLR", "HINT"):
        return False
    return i.form.cls != "exception" and not (i.group == "BCOND" and i.f["cond"] >> 1 == 7)


def merge_fallen_into(an: Analyser, funcs: dict[int, FunctionPlan]) -> None:
    """Drop the weak entries (a data word's or an ``adrp``+``add``'s target, which no call or
    unwind table names) that another function's code falls into: the instruction before one is
    in that function's body and runs on into it, which no compiler does at a function's
    start.  Such a word is something else that looks like a code address: zsh's rodata holds
    the string "LFD", read as a word 0x44464c, the address of the ``b.eq`` after a ``cmp`` in its
    lexer, which then fell into a function of its own at every token.  The functions that fell
    or branched into one are walked again, through it."""
    covered = {i.addr for p in funcs.values() for i in p.insns}
    fallen = {x for x in funcs if x in an.weak and x - 4 in covered and _falls_through(an.insn(x - 4))}
    if not fallen:
        return
    for x in fallen:
        an.entries.discard(x)
        an.weak.discard(x)
        an.source.pop(x, None)
        del funcs[x]
    an.entries_changed()
    touched = {e for e, p in funcs.items() if any(i.addr + 4 in fallen or branch_target(i) in fallen for i in p.insns)}
    for e in touched:
        plan = an.function(e)
        if plan.insns:
            funcs[e] = plan
