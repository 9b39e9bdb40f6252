"""Direct jumps out of a function with its frame still live: SP not surely back at its entry
value at the jump (with the callee-saved registers, X19-X29 and D8-D15, it changed and has not
restored there).

A real tail call (``b f`` after the epilogue) leaves the frame as the function found it: the
callee returns to the jumper's caller with the caller's SP and callee-saved registers.  A jump
that leaves the frame live is none: the code it enters returns on the jumper's behalf, with the
jumper's working values, popping the jumper's frame (GCC's hot/cold splitting: ``foo.cold``, an
FDE of its own, is entered by a branch from ``foo`` with ``foo``'s frame live, and restores
``foo``'s saves itself or jumps back into ``foo``; shared epilogues; hand-written assembly; a
function that runs on into an address some word names).  A jump with SP back at its entry value
leaves no frame to restore anything from: registers it changed there are what it hands the code
it jumps to (as a fragment of glibc's vfprintf gets a table base in X20), no frame of its.

``live_jumps`` finds them in a function's body: SP and X29 as offsets from the entry's SP
(``frame_offsets``), and for each callee-saved register whether it surely holds its entry value
(``entry_values``); ``join_live_frames`` makes the code jumped to part of the jumper's body."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from recompiler.analysis.entries import _falls_through
from recompiler.lift import effects
from recompiler.lift import liveness as L
from recompiler.lift.control import branch_target
from recompiler.lift.edges import successors
from recompiler.lift.emitter import FunctionPlan

if TYPE_CHECKING:
    from recompiler.analysis.bodies import Analyser

# AAPCS64's callee-saved registers: X19-X29 (X29 too: a frame record's restore hands it back)
# and the low halves of V8-V15
CALLEE_SAVED = L._mask(xs=range(19, 30), vs=range(8, 16))
_SP = L.xbit(L.SP_BIT)
_X = L._mask(xs=range(31))
_JUMPS = frozenset({"B", "BCOND", "CBZ", "TBZ"})  # the direct jumps' groups (not BL)


@dataclass(frozen=True)
class LiveJump:
    """A direct jump (a fall, a table's case) out of a function's body into another entry with
    the frame live: ``sp`` is SP's offset from the entry's (None: not known; never 0),
    ``changed`` the callee-saved registers that do not surely hold their entry value there."""

    addr: int  # the jumping instruction (a fall: the last instruction before the other entry)
    target: int
    sp: int | None
    changed: int


def frame_graph(plan: FunctionPlan, noreturn: set[int] | None = None) -> tuple[dict[int, list[int]], dict[int, int], dict]:
    """Each instruction's successors inside the body (fall-through, but not past a call of a
    function that never returns, ``plan.noreturn_calls``; direct branches, its jump tables),
    its declared writes, and SP and X29 before it (``frame_offsets``).  ``noreturn``: the
    functions that never return, where ``plan.noreturn_calls`` is not filled yet."""
    addrs = {i.addr for i in plan.insns}
    if noreturn is None:
        noret = plan.noreturn_calls
    else:
        noret = {i.addr for i in plan.insns if i.name == "BL" and branch_target(i) in noreturn}
    succs: dict[int, list[int]] = {}
    writes: dict[int, int] = {}
    for i in plan.insns:
        t, falls = successors(i)
        out = [t] if t is not None and t in addrs else []
        if falls and i.addr not in noret:
            out.append(i.addr + 4)
        out += plan.jump_tables.get(i.addr, [])
        d = plan.direct_tables.get(i.addr)
        if d is not None:
            out += [a for a in d.targets if a is not None]
        succs[i.addr] = [a for a in out if a in addrs]
        try:
            writes[i.addr] = effects.declare(i).writes
        except Exception:  # an instruction the lifter does not declare: it may write anything
            writes[i.addr] = L.ALL
    return succs, writes, frame_offsets(plan.insns, succs, writes, plan.entry)


def frame_offsets(
    insns: list, succs: dict[int, list[int]], writes: dict[int, int], entry: int
) -> dict[int, tuple[int | None, int | None]]:
    """``liveness.frame_offsets`` (SP and X29 before each instruction as offsets from the
    entry's SP), also through a frame too large for an immediate: ``mov x12, #4144; sub sp, sp,
    x12`` (and its ``add`` back), with the constants ``movz``/``movn``/``movk`` put in registers
    followed along (a call forgets those of the caller-saved registers)."""
    by_addr = {i.addr: i for i in insns}
    state: dict[int, tuple[int | None, int | None, frozenset]] = {}
    if entry not in by_addr:
        return {}
    state[entry] = (0, None, frozenset())
    work = [entry]
    while work:
        a = work.pop()
        i = by_addr[a]
        sp, fp, consts = state[a]
        w = writes.get(a, L.ALL)
        f = i.f
        if (
            i.group == "ADDSUB_ereg"
            and f["sf"]
            and not f["S"]
            and f["Rd"] == 31
            and f["Rn"] == 31
            and f["option"] in (3, 7)
            and not f["imm3"]
        ):
            c = dict(consts).get(f["Rm"])
            sp = None if sp is None or c is None else sp + (-c if f["op"] else c)
        else:
            sp, fp = L._frame_step(i, (sp, fp), w)
        if i.name in ("BL", "BLR"):
            consts = frozenset(x for x in consts if 19 <= x[0] <= 28)
        elif w & _X:
            known = dict(consts)
            if i.group == "MOVW" and f["sf"]:
                sh = 16 * f["hw"]
                if i.name == "MOVZ":
                    known[f["Rd"]] = f["imm16"] << sh
                elif i.name == "MOVN":
                    known[f["Rd"]] = ~(f["imm16"] << sh) & L.ALL
                elif f["Rd"] in known:  # MOVK
                    known[f["Rd"]] = known[f["Rd"]] & ~(0xFFFF << sh) | f["imm16"] << sh
                w &= ~L.xbit(f["Rd"])
            consts = frozenset((r, v) for r, v in known.items() if not w & L.xbit(r))
        out = (sp, fp, consts)
        for t in succs.get(a, ()):
            if t not in by_addr:
                continue
            old = state.get(t)
            new = out if old is None else (old[0] if old[0] == sp else None, old[1] if old[1] == fp else None, old[2] & consts)
            if old != new:
                state[t] = new
                work.append(t)
    return {a: st[:2] for a, st in state.items()}


def entry_values(
    insns: list, succs: dict[int, list[int]], writes: dict[int, int], frame: dict, entry: int, regs: int = CALLEE_SAVED
) -> dict[int, int]:
    """Before each instruction (by address): the registers of ``regs`` that surely hold their
    value at the function's entry.  Forward over ``succs``, with the stack slots (offsets from
    the entry's SP, ``frame``) that surely hold a register's entry value: a save shape's store
    of a register holding it (``liveness.save_reads``' shapes, any register) puts it there, any
    other save shape's store at that offset removes it, and a restore shape's load of the
    register from such a slot gives the value back (an epilogue's ``ldp x19, x20, [sp, #16]``;
    shrink-wrapped saves on some paths only, as GCC places them, included).  Any other write
    makes a register unknown, and so does a join with a path where it is."""
    by_addr = {i.addr: i for i in insns}
    state: dict[int, tuple[int, frozenset]] = {}
    if entry not in by_addr:
        return {}
    state[entry] = (regs, frozenset())
    work = [entry]
    while work:
        a = work.pop()
        i = by_addr[a]
        w = writes.get(a, L.ALL)
        held, slots = state[a]
        sp_fp = frame.get(a, (None, None))
        restored = 0
        if w & regs and (loaded := L._slot_regs(i.word, L._RESTORE_PAIR, L._RESTORE_ONE, regs)):
            for bit, off in L.slot_offsets(i.word, *sp_fp, mask=loaded).items():
                if off is not None and (off, bit) in slots:
                    restored |= bit
        if saved := L._slot_regs(i.word, L._SAVE_PAIR, L._SAVE_ONE, L._ANY_SLOT):
            put = L.slot_offsets(i.word, *sp_fp, mask=saved)
            if any(off is None for off in put.values()):
                slots = frozenset()  # a save shape into an unknown slot: it may be any of them
            else:
                at = set(put.values())
                slots = frozenset(
                    {x for x in slots if x[0] not in at} | {(off, bit) for bit, off in put.items() if bit & held & regs}
                )
        out = (held & ~w | restored, slots)
        for t in succs.get(a, ()):
            if t not in by_addr:
                continue
            old = state.get(t)
            new = out if old is None else (old[0] & out[0], old[1] & out[1])
            if old != new:
                state[t] = new
                work.append(t)
    return {a: st[0] for a, st in state.items()}


def live_jumps(plan: FunctionPlan, is_entry, noreturn: set[int] | None = None, guessed: set[int] = frozenset()) -> list[LiveJump]:
    """The direct jumps, falls and jump-table cases of ``plan``'s body into another entry
    (``is_entry``) that leave with SP not surely the entry's (a call, ``BL``, is none).
    ``noreturn``: as ``frame_graph``'s; ``guessed``: the BRs whose table rests on a guessed base (``Analyser.inexact``), whose cases
    are no evidence of a jump (busybox's printf_positional has one, 18 cases in vfprintf's code,
    which no run takes)."""
    if not plan.insns:
        return []
    addrs = {i.addr for i in plan.insns}
    exits: list[tuple[int, int]] = []
    for i in plan.insns:
        g = i.group
        if g in _JUMPS:
            t = branch_target(i)
            if t not in addrs and is_entry(t):
                exits.append((i.addr, t))
        elif g == "BR" and i.addr not in guessed:
            d = plan.direct_tables.get(i.addr)
            cases = [*plan.jump_tables.get(i.addr, ()), *(d.targets if d is not None else ())]
            for t in dict.fromkeys(cases):
                if t is not None and t not in addrs and is_entry(t):
                    exits.append((i.addr, t))
        # (a fall past a last call, or the nops after one, runs only where its callee returns,
        # which the guest's compiler knew it does not: ``abort``; ``entries._falls_through``)
        if i.addr + 4 not in addrs and is_entry(i.addr + 4) and _falls_through(i):
            exits.append((i.addr, i.addr + 4))
    if not exits:
        return []
    succs, writes, frame = frame_graph(plan, noreturn)
    by_addr = {i.addr: i for i in plan.insns}
    # the jumping instruction itself writes neither SP nor a callee-saved register (B, B.cond,
    # CBZ, TBZ, BR); a fall's last instruction may: what holds after it counts
    live = []
    for a, t in exits:
        if a in frame:  # (else no path from the entry reaches it)
            sp = L._frame_step(by_addr[a], frame[a], writes.get(a, L.ALL))[0]
            if sp != 0:
                live.append((a, t, sp))
    if not live:
        return []
    held = entry_values(plan.insns, succs, writes, frame, plan.entry)
    return [LiveJump(a, t, sp, CALLEE_SAVED & ~(held.get(a, 0) & ~writes.get(a, L.ALL))) for a, t, sp in live]


def reg_names(mask: int) -> str:
    """``x19 x20 d8``: the registers of a mask of ``CALLEE_SAVED``."""
    names = [f"x{r}" for r in range(19, 30) if mask & L.xbit(r)]
    names += [f"d{r}" for r in range(8, 16) if mask & L.vbit(r)]
    return " ".join(names)


@dataclass
class Joined:
    """What ``join_live_frames`` did, for ``--stats``: the live-frame jumps of functions (not
    label functions) it found and how many of them leave callee-saved registers changed, the
    distinct (function, target) pairs it joined and the instructions that added to bodies, and
    the label functions' jumps with SP moved from their entry's, which it left as they are."""

    jumps: int = 0
    with_regs: int = 0
    joined: int = 0
    insns: int = 0
    label_jumps: int = 0
    where: list[tuple[int, int]] = field(default_factory=list)  # (jumping instruction, target)


def join_live_frames(an: Analyser, funcs: dict[int, FunctionPlan]) -> Joined:
    """Each function goes on into the entries it jumps to with its frame live (``live_jumps``):
    such code is no function of its own but this one's, which a symbol, an FDE, a data word or a
    rodata word that decodes as a ``BL`` names (``Analyser.joined``, walked by ``_walk``).  Taken
    for a tail call, the target's epilogue restored the jumper's callee-saved registers into its
    own C locals only: a return hands back only the callee-saved slots the function overwrote
    itself (``interproc.site_lists``), so the jumper's working values, stored into ``NxCpu`` for
    the jump, came back to its caller there.  Repeated on the grown bodies (the joined code may
    jump on with the frame live).  A label function (a weak entry: a computed goto's label
    inside another function) keeps its jumps, as it keeps its table targets: its SP and
    registers at its entry are its parent's working values, so its jumps are not judged."""
    out = Joined()
    todo = sorted(e for e in funcs if e not in an.weak)
    is_entry = an.entries.__contains__
    seen: dict[tuple[int, int], int] = {}
    while todo:
        grown = []
        for e in todo:
            jumps = live_jumps(funcs[e], is_entry, an.noreturn, an.inexact)
            seen.update(((j.addr, j.target), j.changed) for j in jumps)
            new = {j.target for j in jumps} - an.joined.get(e, set())
            if new:
                an.joined.setdefault(e, set()).update(new)
                out.joined += len(new)
                grown.append(e)
        for e in grown:
            before = len(funcs[e].insns)
            funcs[e] = an.function(e)
            out.insns += len(funcs[e].insns) - before
        todo = grown
    out.jumps, out.where = len(seen), sorted(seen)
    out.with_regs = sum(1 for m in seen.values() if m)
    for e in funcs:
        if e in an.weak:
            out.label_jumps += len(live_jumps(funcs[e], is_entry, an.noreturn, an.inexact))
    return out
