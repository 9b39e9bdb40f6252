"""The function's frame facts (a mixin of ``facts.FunctionFacts``): SP and X29 followed as
offsets from the entry's SP over the function's own graph (``liveness.frame_offsets``), which
exits surely leave with the caller's SP and X30 (``_exit_states``), and which stores of
callee-saved registers are saves rather than spills (``_frame_saves``)."""

from __future__ import annotations

from recompiler.lift import effects, liveness
from recompiler.lift.edges import successors

# Above this many instructions a function's spills and reloads of X19-X28/D8-D15 still count as
# saves and restores (``_frame_saves``): there the saves they keep cost a few instructions a
# call of a function whose time is its loop, and dropping them moved clang's register
# allocation of that loop.  QuickJS's JS_CallInternal (10,424 instructions, its bytecode
# dispatch loop): with its six kept saves dropped too, its instructions in bench/callgrind_ir.py's
# workload rose 953.6 -> 1,037.8 M (the 12 NxCpu loads and guest-stack stores a call gone,
# -13.6 M; host-stack stores +34.2 M, register moves +50.9 M), the whole program 2,710.9 ->
# 2,779.9 M.  (build.SLP_MAX_INSNS's bound: the functions clang compiles as giants.)
FRAME_SAVES_MAX_INSNS = 4096


class FrameFacts:
    """The frame part of ``FunctionFacts`` (reads the emitter's ``plan`` and ``addrs``)."""

    def _frame_graph(self) -> tuple[dict[int, list[int]], dict[int, int], dict]:
        """Each instruction's successors inside the function, its declared writes, and SP and
        X29 before it as offsets from the entry's SP (``liveness.frame_offsets``); computed once."""
        got = getattr(self, "_frame_graph_memo", None)
        if got is not None:
            return got
        L = liveness
        succs: dict[int, list[int]] = {}
        writes: dict[int, int] = {}
        for i in self.plan.insns:
            t, falls = successors(i)
            out = [t] if t is not None and t in self.addrs else []
            if falls:
                out.append(i.addr + 4)
            out += self.plan.jump_tables.get(i.addr, [])
            if i.addr in self.plan.landing_pads:  # a throw out of the call: SP and X29 as after it
                out.append(self.plan.landing_pads[i.addr])
            d = self.plan.direct_tables.get(i.addr)
            if d is not None:
                out += [a for a in d.targets if a is not None]
            succs[i.addr] = [a for a in out if a in self.addrs]
            try:
                writes[i.addr] = effects.declare(i).writes
            except Exception:  # a lifter bug, reported where the lift declares it
                writes[i.addr] = L.ALL
        frame = L.frame_offsets(self.plan.insns, succs, writes, self.plan.entry)
        self._frame_graph_memo = (succs, writes, frame)
        return self._frame_graph_memo

    def _exit_states(self, addrs: list[int]) -> list[tuple[bool, bool]]:
        """For each exit (a return's, a direct tail call's or a jump's instruction, by address):
        whether it surely leaves with the entry's SP, and whether with the entry's X30 (the
        return address the caller gave).  SP is followed as an offset from the entry's
        (``liveness.frame_offsets``), X30 as unwritten or loaded back from its save slot
        (``liveness.lr_entry``); the instruction itself may write neither (a RET, a B, a BR, a
        fall past the end), and a RET must go through X30.  An exit with both comes back to the
        function's caller with the caller's SP and X29 (AAPCS64): it need not write them back
        to ``NxCpu`` (``interproc.frame_stores``)."""
        if not addrs:
            return []
        L = liveness
        succs, writes, frame = self._frame_graph()
        lr = L.lr_entry(self.plan.insns, succs, writes, frame, self.plan.entry)
        by_addr = {i.addr: i for i in self.plan.insns}
        out = []
        for a in addrs:
            i = by_addr.get(a)
            if i is None or writes.get(a, L.ALL) & (L.xbit(L.SP_BIT) | L.xbit(30)) or (i.name == "RET" and i.f["Rn"] != 30):
                out.append((False, False))
                continue
            out.append((frame.get(a, (None, None))[0] == 0, lr.get(a, False)))
        return out

    def _frame_saves(self, saves: dict[int, int]) -> tuple[dict[int, int], dict[int, int], int]:
        """``saves`` (every store of a callee-saved register into a stack slot) without the
        spills, the restores (address -> registers), and the registers whose saves may be
        dropped at all (``_save_drop``).  A register's *save slots* are the slots its entry
        value is stored to (no path writes it before the store); a store of it into another slot
        is a spill of the function's own value, and a load of it from another slot the spill's
        reload, neither a save nor a restore.  Slots are offsets from the entry's SP
        (``liveness.frame_offsets``: SP and X29 followed through the prologue and the body's own
        branches; the C function is entered only there and at resume points, which have the
        frame of their call).  Where a save slot is unknown, every store and load of that
        register counts, as it did for all of them before; a load from an unknown slot is a
        restore (it may read the save slot), a store of the function's own value into one a spill
        (the save stays in its slot or not, it is never read back where the restores are dead:
        a ``str x22, [sp]`` of a stack argument below QuickJS's ``alloca``).  QuickJS's
        interpreter (``JS_CallInternal``) reloads its own locals from its frame (``ldp x26, x21,
        [x29, #-0x48]``), which as restores whose values it reads kept six of its ten saves, and
        the load of each caller's value from ``NxCpu`` feeding them, at each of its 1.1 M calls
        in bench/callgrind_ir.py's workload.

        A save may be dropped only where every save slot of the register is known and below the
        entry's SP (in the frame the function made): a real prologue saves there, while a false
        entry (a label inside another function that analysis took for one) finds that function's
        frame above its SP, and its first spill of a register looks like a save of its entry
        value, whose reload may lie in another such fragment that it tail-calls."""
        L = liveness
        insns = self.plan.insns
        loads = {i.addr: m for i in insns if (m := L.restore_writes(i.word))}
        if not saves:
            return saves, loads, 0
        succs, writes, frame = self._frame_graph()
        cs = [L.Chunk(i.addr, 0, 0, succs[i.addr], writes=writes[i.addr]) for i in insns]
        written = L.may_written_before(cs, {})
        words = {i.addr: i.word for i in insns}
        slot = {a: L.slot_offsets(words[a], *frame.get(a, (None, None))) for a in {*saves, *loads}}
        own: dict[int, set[int]] = {}
        unknown = 0
        # stores into a known slot at or above the entry's SP: the frame of whoever called, or,
        # at a false entry, of the function the label lies in (``_foreign_stores``)
        foreign = self._foreign_stores(saves, slot, written, words)
        for a, m in saves.items():
            for bit, off in slot[a].items():
                if bit & foreign.get(a, 0):
                    continue
                if bit & m & ~written.get(a, L.ALL):  # the entry value: a save
                    if off is None:
                        unknown |= bit
                    else:
                        own.setdefault(bit, set()).add(off)
        firm = 0
        for bit, offs in own.items():
            if not bit & unknown and max(offs) < 0:
                firm |= bit

        huge = len(insns) > FRAME_SAVES_MAX_INSNS

        def counted(a: int, m: int, load: bool) -> int:
            out = 0
            for bit, off in slot[a].items():
                if not bit & m:
                    continue
                if huge:  # every store and load of them counts, as before (but _foreign_stores)
                    out |= bit
                elif bit & unknown or bit not in own or (off in own[bit] if off is not None else load):
                    out |= bit
            return out

        kept = {a: r for a, m in saves.items() if (r := counted(a, m & ~foreign.get(a, 0), False))}
        return kept, {a: r for a, m in loads.items() if (r := counted(a, m, True))}, firm

    @staticmethod
    def _foreign_stores(
        saves: dict[int, int], slot: dict[int, dict[int, int | None]], written: dict[int, int], words: dict[int, int]
    ) -> dict[int, int]:
        """Store address -> the registers of ``saves`` it stores outside the frame the function
        makes: into a known slot at or above the entry's SP, or through an X29 that still holds
        its entry value.  A prologue saves into the frame it made, below the entry's SP; above
        it lies the frame of the caller, or, where the entry is a false one (a label inside
        another function that analysis took for a function: a word of data names it), the
        frame of the function it lies in, where such a store is that function's spill of a
        working value.  Such a store is no save: the register stays an input (its read at the
        store counts, and the function does not own it: ``facts._fn_live``).  Debian's libjq:
        words of data in its executable segment decode as calls into ``yyparse``'s loop, which
        became 11 lifted functions; they took ``stp x23, x5, [sp, #56]`` and ``str x26, [sp,
        #168]`` (spills of values computed in the loop) for saves, left X23 (bison's yyn) and
        X26 out of their summaries, and their tail calls into each other stored neither
        (tests/recompiler/test_false_entry_spills.py).  (Where a register has no save of its
        entry value at all, every store of it still counts, as before: GCC's shrink-wrapped
        saves in glibc, where a loop makes the register written before its save on some path,
        would otherwise become inputs: pthread_cond_signal read X25-X28, and 1,453 summaries of
        jq's closure grew.)"""
        L = liveness
        out: dict[int, int] = {}
        for a, m in saves.items():
            fp_entry = (words[a] >> 5) & 31 == 29 and not written.get(a, L.ALL) & L.xbit(29)
            for bit, off in slot[a].items():
                if bit & m and (fp_entry or (off is not None and off >= 0)):
                    out[a] = out.get(a, 0) | bit
        return out
