"""The functions every caller of which is lifted code that calls it directly (``closed``).

A lifted function's return stores the results (X1, V0-V3) back into ``NxCpu`` for its caller
to reload; where every caller is known, it need store only those some caller reads after the
call (``interproc.result_uses``).  A function is taken as closed unless something else may
enter it:
- its address appears as a value: an aligned 64-bit word of any segment (function pointers in
  data, relocated or not: vtables, init arrays, callback structs, the GOT), or an address the
  code builds in a register (``pointers.built_addresses`` over every lifted function: ``adr``,
  ``adrp``+``add`` at any distance, literal pools, ``movz``/``movk``; and the sweep's
  ``adrp``+``add`` pairs over all executable words, for code no function covers): an indirect
  call, a dispatch through ``nx_jump`` or the runtime (thread starts, signal handlers) may
  enter it;
- a branch word (``BL``, ``B``, ``B.cond``, ``CB(N)Z``, ``TB(N)Z``) of the executable segments
  outside every lifted body names it: code that only a lift on miss would run calls it (that
  copy's call sites have no summaries);
- it is the program entry, an IFUNC resolver (the runtime calls it), an entry the bundle's
  discovered list holds (a run-time lift found it through a miss), or ``extra_open`` (a
  dynamic module's exported symbols, which code loaded at run time binds to).
Every other transfer into a function from lifted code is a direct call or tail call that its
caller's facts list (``interproc.FnLive.site_target``, ``tail_target``: a fall into the next
function and a jump table's case in another function are tail calls).  An indirect branch the
analysis left unresolved lands on a label of its own function or on an address some code
built (a pointer, above): compiled code does not compute a function's entry otherwise.
"""

from __future__ import annotations

import numpy as np

from recompiler.analysis.image import Memory
from recompiler.analysis.pointers import built_addresses


def closed_entries(mem: Memory, functions: dict, extra_open: set[int]) -> frozenset[int]:
    """The entries of ``functions`` (entry -> ``FunctionPlan``) no code but their direct
    callers among ``functions`` enters (see the module's text)."""
    entries = np.fromiter(sorted(functions), dtype=np.uint64, count=len(functions))
    opened: set[int] = set(extra_open)
    covered = np.fromiter(sorted({i.addr for p in functions.values() for i in p.insns}), dtype=np.uint64)
    for va, _memsz, data, _x in mem.segments:
        off = -va % 8
        n8 = (len(data) - off) // 8
        if n8 > 0:
            words = np.frombuffer(data, dtype="<u8", count=n8, offset=off)
            opened.update(int(v) for v in np.unique(words[np.isin(words, entries)]))
    for va, data in mem.code_pieces():  # (instructions: in code only, as ``sweep_calls`` reads them)
        if len(data) < 4:
            continue
        w = np.frombuffer(data, dtype="<u4", count=len(data) // 4).astype(np.int64)
        addr = np.int64(va) + 4 * np.arange(len(w), dtype=np.int64)
        opened.update(_uncovered_branch_targets(w, addr, entries, covered))
        opened.update(_adrp_add_targets(w, addr, entries))
    for p in functions.values():
        opened.update(built_addresses(mem, p))
    return frozenset(e for e in functions if e not in opened)


def _sext(v: np.ndarray, bits: int) -> np.ndarray:
    return (v ^ (1 << (bits - 1))) - (1 << (bits - 1))


def _uncovered_branch_targets(w: np.ndarray, addr: np.ndarray, entries: np.ndarray, covered: np.ndarray) -> set[int]:
    """Entries a direct branch word outside every lifted body names."""
    imm26 = (w >> 26 == 0x25) | (w >> 26 == 0x05)  # BL, B
    imm19 = ((w & 0xFF000010) == 0x54000000) | ((w & 0x7E000000) == 0x34000000)  # B.cond, CB(N)Z
    imm14 = (w & 0x7E000000) == 0x36000000  # TB(N)Z
    tgt = np.zeros_like(w)
    tgt = np.where(imm26, addr + 4 * _sext(w & 0x3FFFFFF, 26), tgt)
    tgt = np.where(imm19, addr + 4 * _sext((w >> 5) & 0x7FFFF, 19), tgt)
    tgt = np.where(imm14, addr + 4 * _sext((w >> 5) & 0x3FFF, 14), tgt)
    branch = imm26 | imm19 | imm14
    hit = branch & np.isin(tgt.astype(np.uint64), entries) & ~np.isin(addr.astype(np.uint64), covered)
    return {int(t) for t in np.unique(tgt[hit])}


def _adrp_add_targets(w: np.ndarray, addr: np.ndarray, entries: np.ndarray) -> set[int]:
    """Entries an ``adrp`` and an ``add`` of its register within the next three words build
    (``entries.sweep_calls``' window, over code no function covers as well)."""
    out: set[int] = set()
    adrp = np.nonzero((w & 0x9F000000) == 0x90000000)[0]
    if not len(adrp):
        return out
    a = w[adrp]
    rd = a & 31
    imm = _sext(((a >> 5) & 0x7FFFF) << 2 | ((a >> 29) & 3), 21)
    page = (addr[adrp] & ~0xFFF) + (imm << 12)
    for d in (1, 2, 3):
        j = adrp + d
        ok = j < len(w)
        j = np.where(ok, j, 0)
        w2 = w[j]
        add = ok & ((w2 & 0xFFC00000) == 0x91000000) & (((w2 >> 5) & 31) == rd)
        t = page + ((w2 >> 10) & 0xFFF)
        hit = add & np.isin(t.astype(np.uint64), entries)
        out.update(int(v) for v in np.unique(t[hit]))
    return out
