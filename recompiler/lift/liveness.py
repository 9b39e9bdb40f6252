"""Register liveness over one lifted function: data-flow over its instructions' records.

The emitter's facts (``recompiler/lift/facts.py``) ask which guest registers are live after
each call site, which are live at the function's entry and which are surely written before
each call, for the call sites' store and reload lists that ``recompiler/lift/interproc.py``
writes (AAPCS64, with ``recompiler.trust_abi``).  Each instruction is a ``Chunk`` built from
its ``result.Lifted`` record (what it reads before writing, what it surely overwrites, the
labels it may branch to, its call site, what leaving the function there reads); this module
reads no C.  It also holds the AAPCS64 register sets the lifter's lists are made of, and the
save/restore shapes of prologues and epilogues (read from the instruction words).

Registers are bits of an int: X0-X30 are bits 0-30, SP bit 31, V0-V31 bits 32-63.
"""

from __future__ import annotations

from dataclasses import dataclass

SP_BIT = 31
ALL = (1 << 64) - 1


def xbit(n: int) -> int:
    return 1 << n


def vbit(n: int) -> int:
    return 1 << (32 + n)


def _mask(xs=(), vs=(), sp: bool = False) -> int:
    m = 0
    for n in xs:
        m |= xbit(n)
    for n in vs:
        m |= vbit(n)
    return m | (xbit(SP_BIT) if sp else 0)


# What a lifted call hands its callee (AAPCS64): arguments X0-X7, the indirect result X8, the
# veneer/PLT scratch X16-X17, the platform register X18, the callee-saved X19-X29 and SP (a
# callee that saves them, or setjmp, reads them), FP/SIMD arguments V0-V7 and the callee-saved
# V8-V15 (setjmp saves D8-D15).  X9-X15 and V16-V31 matter to a call only when they are live
# after it (a callee the guest compiler knew not to clobber them, -fipa-ra: stored before and
# reloaded after, the callee leaves them as they were).
CALL_USES = _mask(xs=[*range(9), 16, 17, 18, *range(19, 30)], vs=range(16), sp=True)
# What a return to somewhere else (reached through nx_jump, the frame re-entered from NxCpu)
# may read: the results X0-X1 and V0-V3 (AAPCS64 returns an HFA/HVA of at most four members
# there; V4-V7 never carry a result), what a callee preserves (X19-X29, SP, the low halves of
# V8-V15), the link register and the platform register X18.  (A return to its own C caller
# hands on less: RET_LIVE.)
EXIT_USES = _mask(xs=[0, 1, *range(18, 31)], vs=[*range(4), *range(8, 16)], sp=True)
# What an indirect jump out of a function may hand on (BR to a register): through nx_jump it
# reaches a function entry (a tail call: CALL_USES) or a resume point (a return to somewhere
# else: EXIT_USES).  Entries and resume points inside the function itself are added as
# successors by the emitter (a false entry reads whatever that label reads).  A jump table's
# miss (an address the table does not list) can only be such a label of the function itself
# (C's computed gotos and switches stay inside their function), so it reads EXIT_USES.
INDIRECT_USES = CALL_USES | EXIT_USES
# What a callee may change: the emitter reloads only these after a call (V8-V15: upper halves).
CALL_CLOBBERS = _mask(xs=[*range(19), 30], vs=range(32))
# What a return hands a caller that trusts AAPCS64 (the normal case): the results X0-X1 and
# V0-V3 (a result goes where an argument of its type would: an HFA/HVA has at most four
# members) and the platform register X18.  Such a caller keeps X19-X29, SP and
# the low halves of V8-V15 in its own locals across the call, so a return need not store them
# and their epilogue reloads become dead code.  (A return still stores every other caller-saved
# register it changed: a helper with its own convention, like a TLS descriptor resolver that
# restores X1-X18 before returning, keeps working.)
RET_LIVE = _mask(xs=[0, 1, 18], vs=range(4))
V_PRESERVED_LOW = range(8, 16)  # AAPCS64: a callee keeps only the low 64 bits of V8-V15
V_PRESERVED_LOW_MASK = _mask(vs=V_PRESERVED_LOW)
# What a function may keep current in NxCpu as it writes it (interproc.write_through): the
# caller-saved registers that are not C arguments (X0, X1, X30 travel as such), and of the
# vector registers those a callee keeps no half of
WT_CANDIDATES = _mask(xs=range(2, 19), vs=[*range(8), *range(16, 32)])


@dataclass(frozen=True)
class AbiSets:
    """The register sets the liveness of one calling convention's code is made of (see the
    AAPCS64 constants above, and ``GO`` below)."""

    call_uses: int  # what an unknown callee may read (CALL_USES)
    exit_uses: int  # what a return to somewhere else, a table's miss, the fall past a noreturn call read
    indirect_uses: int  # what an indirect jump out may hand on (INDIRECT_USES)
    ret_live: int  # what a return reads for the liveness of the function's own call sites (RET_LIVE)
    call_clobbers: int  # what a callee that is not summarised may change (CALL_CLOBBERS)
    # what a return may hand a caller that reads it after the call (Go only: its call sites
    # store what may reach a return unwritten, but reload only what their own code reads)
    ret_handed: int = 0
    go: bool = False


AAPCS64 = AbiSets(CALL_USES, EXIT_USES, INDIRECT_USES, RET_LIVE, CALL_CLOBBERS)
# Go's ABIInternal (the Go source's cmd/compile/abi-internal.md, arm64): arguments and results in
# R0-R15 and F0-F15, R26 the closure context, R28 the goroutine (g), R29 the frame pointer, SP;
# no register is callee-saved (a callee may change any, and stack growth moves SP and X29), so
# what a call changes comes from the callee's summary (interproc: MODS), ALL where unknown.
# An unknown callee (a closure, an interface method, the runtime's fn of systemstack/mcall)
# reads the arguments, R26, R28, SP, X29 and X30 (ABI0 code takes its arguments on the stack).
# A return hands the results on, and g, X29 and SP (``ret_handed``); its own liveness reads
# only X0, the C result: a register a return may hand on is stored before a call where the
# callee may change it, not reloaded after it unless this function's own code reads it
# (interproc.site_lists).  A return to somewhere else (gogo resuming a goroutine at a call's
# return address: it sets SP, X29, X30, X0, X26 and X28), a table's miss (a label of the
# function) and the fall past a noreturn call read that and what a return hands on
# (``GO_EXIT_USES``); an indirect jump out may reach anything (asyncPreempt's jump back to the
# instruction it interrupted, with every register restored): ALL.
GO_CALL_USES = _mask(xs=[*range(16), 26, 28, 29, 30], vs=range(16), sp=True)
GO_RET_HANDED = _mask(xs=[*range(16), 28, 29], vs=range(16), sp=True)
GO_EXIT_USES = GO_RET_HANDED | _mask(xs=[26, 30])
GO = AbiSets(GO_CALL_USES, GO_EXIT_USES, ALL, xbit(0), ALL, GO_RET_HANDED, True)
# What a Go function with no arguments (analysis.go_args) may be handed: its closure context
# (R26), the goroutine, the frame pointer, the link register and SP
GO_NOARG_INPUTS = _mask(xs=[26, 28, 29, 30], sp=True)


@dataclass
class Chunk:
    """One instruction's C: what it reads before writing (gen), what it surely overwrites
    (kill), the labels it may branch to and whether it falls through to the next address."""

    addr: int
    gen: int
    kill: int
    succs: list[int]
    call: int | None = None  # the call site's number (result.Lifted.call) if any
    leaves: int = 0  # what leaving the function here reads (EXIT_USES for a return...)
    writes: int = 0  # every register it may write (before its call, for a call)
    call_gen: int = CALL_USES  # what the callee of its call may read


# What a system call reads: its number and arguments (X8, X0-X7; Horizon's SVCs take X0-X7) and
# SP.  It stores every local of its own function (STORE_ALL) and reloads them after it; a
# caller's callee-saved registers it does not read (see ``recompiler.elide_saves``).
SVC_USES = _mask(xs=range(9), sp=True)
# The callee-saved registers (AAPCS64) that ``recompiler.elide_saves`` keeps in their owners'
# C locals: X19-X28 and the low halves of V8-V15.  Not X29: a frame record (X29, X30) saved in
# each frame keeps the guest's frame-pointer chain true, which crash reports walk.
ELIDED_SAVES = _mask(xs=range(19, 29), vs=range(8, 16))
_SAVE_PAIR = {
    0xA8800000: False,
    0xA9000000: False,
    0xA9800000: False,  # STP Xt (post, offset, pre)
    0x6C800000: True,
    0x6D000000: True,
    0x6D800000: True,
}  # STP Dt
_SAVE_ONE = {
    0xF9000000: (0xFFC00000, False),
    0xF8000C00: (0xFFE00C00, False),  # STR Xt (offset, pre)
    0xF8000400: (0xFFE00C00, False),
    0xFD000000: (0xFFC00000, True),  # (post); STR Dt
    0xFC000C00: (0xFFE00C00, True),
    0xFC000400: (0xFFE00C00, True),
}


def save_reads(word: int) -> int:
    """The callee-saved registers an instruction stores into a stack slot (base SP or the frame
    pointer X29): a prologue's save of its caller's values.  Such a read does not make the
    register an input of the function (see ``recompiler.elide_saves``): an AAPCS64 function
    only ever reloads the slot to hand the value back."""
    return _slot_regs(word, _SAVE_PAIR, _SAVE_ONE)


def _slot_regs(word: int, pairs: dict, singles: dict, of: int = ELIDED_SAVES) -> int:
    rn = (word >> 5) & 31
    if rn not in (31, 29):
        return 0
    regs: list[tuple[int, bool]] = []
    fp = pairs.get(word & 0xFFC00000)
    if fp is not None:
        regs = [(word & 31, fp), ((word >> 10) & 31, fp)]
    else:
        for value, (mask, is_fp) in singles.items():
            if word & mask == value:
                regs = [(word & 31, is_fp)]
                break
    out = 0
    for r, is_fp in regs:
        out |= vbit(r) if is_fp else (xbit(r) if r != 31 else 0)
    return out & of


def solve(chunks: list[Chunk], falls: dict[int, int], past_end: int = INDIRECT_USES) -> tuple[dict[int, int], dict[int, int]]:
    """(live-in, live-out) of every chunk (by address), iterated to a fixed point.  ``falls``
    maps a chunk's address to the address it falls through to; ``past_end`` is what falling
    past the function's end after a call reads."""
    by_addr = {c.addr: c for c in chunks}
    live_in = {c.addr: 0 for c in chunks}
    live_out = {c.addr: 0 for c in chunks}
    changed = True
    while changed:
        changed = False
        for c in reversed(chunks):
            out = 0
            for s in c.succs:
                out |= live_in.get(s, ALL) if s in by_addr else ALL
            f = falls.get(c.addr)
            if f is not None:
                if f in by_addr:
                    out |= live_in[f]
                else:  # past the function's end: after a call only a noreturn callee's
                    # (the compiler ends a function with a call only then); else anything
                    out |= past_end if c.call is not None else ALL
            out |= c.leaves
            if c.call is not None:
                out_through = out | c.call_gen
            else:
                out_through = out
            new_in = c.gen | (out_through & ~c.kill)
            if out != live_out[c.addr] or new_in != live_in[c.addr]:
                live_out[c.addr], live_in[c.addr] = out, new_in
                changed = True
    return live_in, live_out


def may_written_before(chunks: list[Chunk], falls: dict[int, int]) -> dict[int, int]:
    """Registers written on some path from the function's entry to the start of each chunk (by
    address): where a register is outside this set, it still holds its value at the entry."""
    preds = _preds(chunks, falls)
    by_addr = {c.addr: c for c in chunks}
    m_in = {c.addr: 0 for c in chunks}
    changed = True
    while changed:
        changed = False
        for c in chunks:
            i = 0
            for p in preds[c.addr]:
                i |= m_in[p] | by_addr[p].writes
            if i != m_in[c.addr]:
                m_in[c.addr] = i
                changed = True
    return m_in


_RESTORE_PAIR = {
    0xA8C00000: False,
    0xA9400000: False,
    0xA9C00000: False,  # LDP Xt (post, offset, pre)
    0x6CC00000: True,
    0x6D400000: True,
    0x6DC00000: True,
}  # LDP Dt
_RESTORE_ONE = {
    0xF9400000: (0xFFC00000, False),
    0xF8400C00: (0xFFE00C00, False),
    0xF8400400: (0xFFE00C00, False),
    0xFD400000: (0xFFC00000, True),
    0xFC400C00: (0xFFE00C00, True),
    0xFC400400: (0xFFE00C00, True),
}


def restore_writes(word: int) -> int:
    """The callee-saved registers an instruction loads from a stack slot (base SP or X29): an
    epilogue's restore of what the prologue saved (see ``save_reads``), or a reload of a spill
    (``frame_saves`` tells them apart)."""
    return _slot_regs(word, _RESTORE_PAIR, _RESTORE_ONE)


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def slot_offsets(word: int, sp: int | None, fp: int | None, mask: int = ELIDED_SAVES) -> dict[int, int | None]:
    """For a save or restore shape (``save_reads``, ``restore_writes``): each callee-saved
    register (of ``mask``) it stores or loads -> the slot's offset from the entry's SP, given SP
    and X29 before it as such offsets (None: unknown; then the slot is too)."""
    regs = _slot_regs(word, _SAVE_PAIR, _SAVE_ONE, mask) | _slot_regs(word, _RESTORE_PAIR, _RESTORE_ONE, mask)
    if not regs:
        return {}
    base = sp if (word >> 5) & 31 == 31 else fp
    rt, rt2 = word & 31, (word >> 10) & 31
    fp_reg = bool(word >> 26 & 1)
    if (word >> 27) & 7 == 5:  # a pair: Rt at the address, Rt2 8 bytes above
        idx = (word >> 23) & 3
        off = 0 if idx == 1 else _sext((word >> 15) & 0x7F, 7) << 3
        places = [(rt, off), (rt2, off + 8)]
    elif (word >> 24) & 1:  # unsigned offset
        places = [(rt, ((word >> 10) & 0xFFF) << 3)]
    else:  # pre-index (the address moved) or post-index (the address as it was)
        places = [(rt, _sext((word >> 12) & 0x1FF, 9) if (word >> 10) & 3 == 3 else 0)]
    out: dict[int, int | None] = {}
    for r, off in places:
        bit = vbit(r) if fp_reg else xbit(r)
        if bit & regs:
            out[bit] = None if base is None else base + off
    return out


def frame_offsets(
    insns: list, succs: dict[int, list[int]], writes: dict[int, int], entry: int
) -> dict[int, tuple[int | None, int | None]]:
    """SP and X29 before each instruction (by address), as offsets from SP at the function's
    entry (None: unknown), forward over ``succs`` (every successor of each instruction inside
    the function).  Modelled: ``add``/``sub`` of an immediate to SP or X29 from SP or X29
    (``sub sp, sp, #n``, ``mov x29, sp``), the base write-back of pre- and post-indexed loads
    and stores; calls and SVCs keep both (AAPCS64); any other write of either (``writes``:
    declared effects) makes it unknown, and so does a join of different values.  An
    instruction no path from the entry reaches has no entry."""
    by_addr = {i.addr: i for i in insns}
    state: dict[int, tuple[int | None, int | None]] = {}
    work = []
    if entry in by_addr:
        state[entry] = (0, None)
        work.append(entry)
    while work:
        a = work.pop()
        out = _frame_step(by_addr[a], state[a], writes.get(a, ALL))
        for t in succs.get(a, ()):
            if t not in by_addr:
                continue
            new = out if t not in state else _join_frame(state[t], out)
            if state.get(t) != new:
                state[t] = new
                work.append(t)
    return state


def _join_frame(a: tuple, b: tuple) -> tuple:
    return tuple(x if x == y else None for x, y in zip(a, b))


def _frame_step(i, st: tuple[int | None, int | None], writes: int) -> tuple[int | None, int | None]:
    """(SP, X29) after instruction ``i`` (``frame_offsets``)."""
    sp, fp = st
    w = writes & (xbit(SP_BIT) | xbit(29))
    if i.name in ("BL", "BLR", "SVC") or not w:
        return st
    f = i.f
    val = {31: sp, 29: fp}
    new: dict[int, int | None] = {}
    if i.group == "ADDSUB_imm" and not f["S"] and f["sf"] and f["Rd"] in (29, 31):
        b = val.get(f["Rn"])
        imm = f["imm12"] << (12 if f["sh"] else 0)
        new[f["Rd"]] = None if b is None else b + (-imm if f["op"] else imm)
    elif i.group in ("LDST_imm9", "LDST_pair") and f["idx"] in (1, 3) and f["Rn"] in (29, 31):
        b = val[f["Rn"]]
        if i.group == "LDST_pair":
            delta = _sext(f["imm7"], 7) << (2 + (f["opc"] if f["V"] else f["opc"] >> 1))
        else:
            delta = _sext(f["imm9"], 9)
        new[f["Rn"]] = None if b is None else b + delta
        # a load into the other of SP/X29 (``ldp x29, x30, [sp], #16``): unknown, below
    for r, bit in ((31, xbit(SP_BIT)), (29, xbit(29))):
        if bit & w and r not in new:
            new[r] = None
    return new.get(31, sp), new.get(29, fp)


_LR = xbit(30)
_ANY_SLOT = _mask(xs=range(31), vs=range(32))  # every register a save or restore shape may name


def lr_entry(insns: list, succs: dict[int, list[int]], writes: dict[int, int], frame: dict, entry: int) -> dict[int, bool]:
    """Before each instruction (by address): whether X30 surely holds its value at the entry,
    where a load of X30 from the slot its entry value was saved to gives that value back
    (AAPCS64, as the epilogue's ``ldp x29, x30, [sp], #16`` does).  ``frame``: SP and X29 as
    ``frame_offsets`` gives them.  A save slot counts only at a known offset from the entry's SP
    that no other save or restore shape stores to; any other write of X30 (a call, a move, a
    load from elsewhere) makes it unknown, and so does a join with an unknown path."""
    by_addr = {i.addr: i for i in insns}

    def solve(slots: set[int]) -> dict[int, bool]:
        state: dict[int, bool] = {}
        work = []
        if entry in by_addr:
            state[entry] = True
            work.append(entry)
        while work:
            a = work.pop()
            i = by_addr[a]
            out = state[a]
            if writes.get(a, ALL) & _LR:
                out = False
                if slots and (w := _slot_regs(i.word, _RESTORE_PAIR, _RESTORE_ONE, _LR)):
                    off = slot_offsets(i.word, *frame.get(a, (None, None)), mask=w).get(_LR)
                    out = off is not None and off in slots
            for t in succs.get(a, ()):
                if t not in by_addr:
                    continue
                new = out and state.get(t, True)
                if state.get(t) != new:
                    state[t] = new
                    work.append(t)
        return state

    first = solve(set())  # loads give nothing back: where X30 is surely the entry value
    slots: set[int] = set()
    other: set[int] = set()
    for i in insns:
        sp_fp = frame.get(i.addr, (None, None))
        stored = _slot_regs(i.word, _SAVE_PAIR, _SAVE_ONE, _ANY_SLOT)
        if not stored:
            continue
        for bit, off in slot_offsets(i.word, *sp_fp, mask=_ANY_SLOT).items():
            if off is None:
                continue
            if bit == _LR and first.get(i.addr, False):
                slots.add(off)
            else:
                other.add(off)
    slots -= other
    return solve(slots) if slots else first


def saves_changed(insns: list, succs: dict[int, list[int]], writes: dict[int, int], frame: dict, entry: int) -> dict[int, int]:
    """Before each instruction (by address): the callee-saved registers (``ELIDED_SAVES``) that
    may no longer hold their value at the entry.  A write makes one changed; a load of it from a
    slot its entry value was surely stored to on every path before (a save: a store of it while
    unchanged into a known offset below the entry's SP, in the frame the function made, that no
    other register's save or restore shape names) gives the value back, as an epilogue's ``ldp
    x19, x20, [sp], #32`` does; a join takes the union.  The slots are found from the most
    (every such store's) down: a slot that some store fills with a changed value is dropped and
    the graph solved again, so GCC's shrink-wrapped save after a loop that reloads the register
    from it (glibc's btowc: ``str x21, [sp, #128]`` on each pass) still counts.  An instruction
    no path from the entry reaches is left out (unknown).  ``frame``: SP and X29 as
    ``frame_offsets`` gives them."""
    by_addr = {i.addr: i for i in insns}
    stores: dict[int, dict[int, int | None]] = {}  # save shapes: address -> register -> slot
    loads: dict[int, dict[int, int | None]] = {}
    slots: set[tuple[int, int]] = set()
    other: set[int] = set()
    for i in insns:
        sp_fp = frame.get(i.addr, (None, None))
        if _slot_regs(i.word, _SAVE_PAIR, _SAVE_ONE, _ANY_SLOT):
            stores[i.addr] = st = slot_offsets(i.word, *sp_fp, mask=_ANY_SLOT)
            for bit, off in st.items():
                if off is not None and bit & ELIDED_SAVES and off < 0:
                    slots.add((bit, off))
                elif off is not None:
                    other.add(off)
        if w := restore_writes(i.word):
            loads[i.addr] = slot_offsets(i.word, *sp_fp, mask=w)
    slots = {(b, o) for b, o in slots if o not in other and not any(o == o2 and b != b2 for b2, o2 in slots)}

    def solve(slots: set[tuple[int, int]]) -> tuple[dict[int, tuple[int, frozenset]], set[tuple[int, int]]]:
        """(changed, slots surely holding the entry value) before each instruction, and the
        slots some store fills with a changed value."""
        state: dict[int, tuple[int, frozenset]] = {}
        bad: set[tuple[int, int]] = set()
        work = []
        if entry in by_addr:
            state[entry] = (0, frozenset())
            work.append(entry)
        while work:
            a = work.pop()
            changed, held = state[a]
            if any(off is None for off in stores.get(a, {}).values()):
                held = frozenset()  # (a store into an unknown slot may overwrite any)
            for bit, off in stores.get(a, {}).items():
                if (bit, off) in slots:
                    if bit & changed:
                        bad.add((bit, off))
                    else:
                        held = held | {(bit, off)}
            changed |= writes.get(a, ALL) & ELIDED_SAVES
            for bit, off in loads.get(a, {}).items():
                if (bit, off) in held:
                    changed &= ~bit
            for t in succs.get(a, ()):
                if t not in by_addr:
                    continue
                old = state.get(t)
                new = (changed, held) if old is None else (old[0] | changed, old[1] & held)
                if new != old:
                    state[t] = new
                    work.append(t)
        return state, bad

    while True:
        state, bad = solve(slots)
        if not bad:
            return {a: c for a, (c, _h) in state.items()}
        slots -= bad


def must_written(chunks: list[Chunk], falls: dict[int, int], entry: int) -> dict[int, int]:
    """Registers surely written on every path from the function's entry to the end of each
    chunk (by address; for a call, up to the call): a callee's reads at a call site reach the
    function's own entry only through the registers outside this set."""
    preds = _preds(chunks, falls)
    m_out = {c.addr: ALL for c in chunks}
    changed = True
    while changed:
        changed = False
        for c in chunks:
            i = ALL
            for p in preds[c.addr]:
                i &= m_out[p]
            if c.addr == entry:
                i = 0
            o = i | c.kill
            if o != m_out[c.addr]:
                m_out[c.addr] = o
                changed = True
    return m_out


def _preds(chunks: list[Chunk], falls: dict[int, int]) -> dict[int, list[int]]:
    preds: dict[int, list[int]] = {c.addr: [] for c in chunks}
    for c in chunks:
        for t in [*c.succs, *([falls[c.addr]] if c.addr in falls else [])]:
            if t in preds:
                preds[t].append(c.addr)
    return preds
