"""Paths that are cold by analysis, out of the lifted function's C (``F_x``) into its resume twin.

A path is *cold* where every way on from it ends in a call of a function that never returns
(``FunctionPlan.noreturn_calls``: ``analysis.noreturn`` finds ``__cxa_throw``, ``abort``,
``__assert_fail``, ``__stack_chk_fail``, ``_Unwind_Resume`` and the program's own error
reporters) or in a fatal trap: a C++ throw path (build the message, ``__cxa_throw``, its cleanup
pad's ``_Unwind_Resume``), an assertion's report.  Such code stays in the guest function's body
and so in its C, where its calls make clang keep values in the host's callee-saved registers
and push them in the prologue that every call of the hot path pays: JsonCpp's
``CZString::operator<`` pushed six of them and ``rax`` at each of its 3.64 M calls for a throw
path it never takes, its hot path (``memcmp`` inlined) making no call at all.

So ``F_x`` keeps only the hot paths: each branch (or fall) into a cold path becomes a cold exit
that stores the registers live there that ``NxCpu`` may lack (a ``COLD_EXIT`` slot:
``interproc.place``, from the callees' summaries, as a call site's list) and tail-calls the
function's resume twin ``R_x`` (``wrap.py``) with ``s->resume`` set and ``s->pc`` the cold
path's first address; the twin's resume switch goes there, and the cold path runs in the twin
with every register loaded from ``NxCpu``, as a frame re-entered after a return to somewhere
else does (docs/ARCHITECTURE.md).  No cold path leads back to a hot one (a landing pad counts
as a way on from its call), so the twin never returns normally from one: it ends in the
callee's unwinding, which comes up the host stack as a return to somewhere else, or in a fatal
error.  Where NZCV are live into a cold path (a compare's reader on it: a fused or carried
flag lives in a C local the twin does not have) the path is kept in ``F_x`` from there.

Least fixed point: an instruction is cold where it ends so, or has no exit (return, tail call,
table, jump out) and every successor (branch target, fall, landing pad) is cold; a loop with no
way out but cold ones is not cold (a path may stay in it).  ``recompiler.no_opt = cold`` keeps
every path in ``F_x``; so does a function whose cold paths make no call (a trap alone: its
runtime call never returns, and needs no callee-saved host register).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompiler.lift import liveness
from recompiler.lift import template as T
from recompiler.lift.signature import rname
from recompiler.lift.wrap import COLD_RESUME

if TYPE_CHECKING:
    from recompiler.lift.emitter import FunctionEmitter


def cold_records(em: FunctionEmitter) -> set[int]:
    """The indices (into ``em.records``) of the instructions on cold paths, none where the
    function's entry is one (then every path is cold: nothing to keep apart)."""
    recs = em.records
    index = {r.addr: j for j, r in enumerate(recs)}
    nr, pads = em.plan.noreturn_calls, em.plan.landing_pads
    succ: list[list[int]] = []
    ends: list[bool] = []
    leaves: list[bool] = []
    for r in recs:
        s = [index.get(t, -1) for t in r.succs]
        if r.falls:
            s.append(index.get(r.addr + 4, -1))
        if r.call is not None and r.addr in pads:
            s.append(index.get(pads[r.addr], -1))
        succ.append(s)
        ends.append(r.fatal or (r.call is not None and r.addr in nr))
        leaves.append(
            r.ret is not None or bool(r.tails or r.tables) or r.jump_out or r.exit_all or -1 in s or (not s and not ends[-1])
        )
    cold: set[int] = set()
    changed = True
    while changed:
        changed = False
        for j in range(len(recs) - 1, -1, -1):
            if j in cold or leaves[j]:
                continue
            if (ends[j] or succ[j]) and all(t in cold for t in succ[j]):
                cold.add(j)
                changed = True
    if not cold or index.get(em.plan.entry) in cold:
        return set()
    cold -= _flags_live(em, succ)
    # only where a call leaves F_x: a trap alone calls a noreturn runtime function, which needs
    # no callee-saved host register, and a function without calls would get a twin for nothing
    # (and stop being a leaf that inline_leaves copies)
    return cold if any(recs[j].call is not None for j in cold) else set()


def _flags_live(em: FunctionEmitter, succ: list[list[int]]) -> set[int]:
    """The instructions where NZCV may be read before they are written (a read: a declared
    read of a flag; a write: an instruction that sets all four, or a call)."""
    recs = em.records
    chunks = [
        liveness.Chunk(
            r.addr,
            1 if r.flags_read else 0,
            1 if r.addr in em.flag_writers or r.call is not None else 0,
            [recs[t].addr for t in s if t >= 0],
        )
        for r, s in zip(recs, succ)
    ]
    live_in, _ = liveness.solve(chunks, {}, 0)
    return {j for j, r in enumerate(recs) if live_in[r.addr] & 1}


def entries(em: FunctionEmitter, cold: set[int]) -> list[int]:
    """The cold instructions ``F_x`` may reach (each a cold exit there and a case of the twin's
    resume switch): every labelled one, and each that a hot instruction falls into."""
    recs = em.records
    out = []
    for j in sorted(cold):
        r = recs[j]
        fallen = j > 0 and j - 1 not in cold and recs[j - 1].falls and recs[j - 1].addr + 4 == r.addr
        if r.addr in em.labels or fallen:
            out.append(j)
    return out


def hot_lines(em: FunctionEmitter, label_at: dict[int, int]) -> list[str]:
    """``F_x``'s body lines: the hot instructions' lines with their labels, each cold entry a
    cold exit under its label, the other cold instructions left out."""
    entry_set = set(em.cold_entries)
    sp = "sp" if em._locals("").uses_sp else "asp"
    lines: list[str] = []
    for j, r in enumerate(em.records):
        if j in em.cold:
            if j in entry_set:
                lines.append(f" L_{r.addr:x}:;")
                lines.append(
                    f"  {{ {em.slot(T.COLD_EXIT, j)}; s->pc = {r.addr:#x}ull; s->resume = {COLD_RESUME}; "
                    f"MUSTTAIL return {rname(em.plan.entry)}(s, x0, x1, x30, {sp}, x29); }}"
                )
            continue
        for k in range(r.start, r.stop):
            if k in label_at:
                lines.append(f" L_{label_at[k]:x}:;")
            lines.append(em.body[k])
    return lines
