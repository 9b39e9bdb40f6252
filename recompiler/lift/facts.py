"""The function's facts, from its instructions' records (``result.Lifted``): each record's
declared effects (``declare``: the form's own, ``effects/``; ``exit_effects``: what its exits
read), liveness at call sites and returns, the registers live at the entry, the callee-saved saves that may be dropped
(``recompiler.elide_saves``), the write-through points, the flags at the entry, and the
``interproc.FnLive`` that ``interproc.place`` fills the call sites' lists from.  A mixin of
``FunctionEmitter`` (``emitter.py``): it reads the emitter's records and plan, and marks the
save stores, write-through points and tail calls in the emitter's body for placement.
"""

from __future__ import annotations


from recompiler.decode import Insn
from recompiler.lift import effects, interproc, liveness
from recompiler.lift import template as T
from recompiler.lift.frame_facts import FrameFacts
from recompiler.lift.result import Lifted, Mem
from recompiler.lift.signature import CALLER_SAVED


class FunctionFacts(FrameFacts):
    """Liveness and the facts of one function (mixed into ``FunctionEmitter``)."""

    # restore instruction -> registers (``_frame_saves``); set with ``FunctionEmitter.saves``
    restores: dict[int, int] = {}
    firm_saves = 0  # the registers whose saves may be dropped at all (``_frame_saves``)
    # jumps out through a register that are tail calls (``_tail_jumps``)
    tail_jumps: frozenset[int] = frozenset()

    def declare(self, insn: Insn) -> None:
        """The instruction just lifted (``self.cur``) takes its form's declared effects
        (``effects.declare``) and the registers the lifter's own C reads for it
        (``Lifted.uses``).  A fatal trap (not lifted, BRK/UDF) has none: it never comes back."""
        rec = self.cur
        if rec.fatal:
            return
        try:
            e = effects.declare(insn)
        except Exception as err:  # a lifter bug: on the safe side, reported in the stats
            self.internal_errors.append(f"{insn.addr:#x} {insn.word:#010x} {insn.name}: declaring effects: {err!r}")
            e = effects.Effects(liveness.ALL, 0, liveness.ALL, True, False, Mem.LOAD | Mem.STORE)
        rec.reads = e.reads | rec.uses
        rec.kills = e.kills & ~rec.uses
        rec.writes = e.writes
        rec.flags_read = e.flags_read
        rec.memory = e.memory
        rec.named, rec.names_flags = rec.reads | rec.writes, rec.flags_read

    @staticmethod
    def exit_effects(rec: Lifted) -> None:
        """What ``rec``'s exits add to its declared effects, on the safe side: a system call, an
        FPSR/FPCR access, a trap or a jump out that writes every local back (``STORE_ALL``)
        reads every register and kills none; such a jump out also hands NZCV on.  (Returns,
        calls, direct tail calls and table dispatches are the liveness chunk's ``leaves`` and
        successors: ``_chunk``.)"""
        if rec.svc or rec.fp_env or rec.fatal or rec.exit_all:
            rec.reads, rec.kills = liveness.ALL, 0
        if rec.exit_all:
            rec.flags_read = True

    def _number_tails(self, start: int, stop: int, first: int, count: int) -> None:
        """Number the first ``count`` direct tail calls' store slots in body lines
        [start, stop) from ``first``, in the order liveness met them (``FnLive.tail_target``);
        one it did not read (after a call in the same instruction: the fall past a noreturn
        callee) stores everything."""
        k = first
        for j in range(start, stop):
            for anchor in T.ANCHOR.findall(self.body[j]):
                slot = self.slots.of(anchor)
                if slot.kind != T.STORE_TAIL or slot.k >= 0:
                    continue
                if k < first + count:
                    slot.k = k
                else:
                    self.full_exit = True
                    self.body[j] = self.body[j].replace(anchor, "STORE_ALL", 1)
                k += 1

    def _mark_saves(self, start: int, mask: int) -> None:
        """Each store of a saved callee-saved register in the lines from ``start`` (one save
        instruction) in a SAVE slot (template.py): ``interproc.place`` drops it
        where nothing reads the slot back (``FnLive.save_drop``) and no return hands the
        register back, so the store and the load of the caller's stale ``NxCpu`` value feeding it
        go away (``recompiler.elide_saves``: the caller keeps its value in its own local)."""
        for bit, text in self.cur.reg_stores:
            if not bit & mask:
                continue
            a, b = self.slots.bracket(T.Slot(T.SAVE, self.plan.entry, bit.bit_length() - 1))
            for j in range(start, len(self.body)):
                if text in self.body[j]:
                    self.body[j] = self.body[j].replace(text, f"{a}{text}{b}", 1)
                    break

    def _mark_write_through(self, start: int, falls: bool) -> None:
        """A slot after the instruction whose lines begin at ``start`` where it writes
        caller-saved registers (a WRITE_THROUGH slot): ``interproc.place`` stores there those of
        them the function keeps current in ``NxCpu`` (``interproc.write_through``), whose call
        sites then store nothing of them.  Only after straight-line code: a register written on
        the way out of an instruction that branches is never written through."""
        w = self.cur.writes & liveness.WT_CANDIDATES
        if not w:
            return
        c = self.cur
        if (
            not falls
            or c.succs
            or c.tails
            or c.tables
            or c.jump_out
            or c.call is not None
            or c.ret is not None
            or c.fatal
            or c.svc
        ):
            self.wt_unsafe |= w
            return
        self.wt_sites[self.insn.addr] = w
        # on the instruction's last line: inline_leaves counts a leaf's lines
        self.body[-1] += " " + self.slots.anchor(T.Slot(T.WRITE_THROUGH, self.plan.entry, self.insn.addr))

    def _liveness(self) -> None:
        """What placing the call sites' and returns' lists needs (``self.facts``), from each
        instruction's record (``self.records``): live registers after each call site, the
        registers live at the entry if direct callees read nothing, and those not surely
        written before each call."""
        L = liveness
        self.tail_jumps = self._tail_jumps()
        if any(r.jump_out and r.addr not in self.tail_jumps for r in self.records):
            self.full_exit = True  # (STORE_INDIRECT writes every local back there)
        cs, base_leaves, tails, opaque, own_leaves = self._chunks()
        # past the end after a call: the guest compiler put nothing there because the callee
        # does not return.  Were it to return, what runs there could rely only on what a return
        # hands on (results, callee-saved registers), as at any return point: not the argument
        # registers (every caller of Lua's luaD_throw kept X2-X8 live across its calls for them)
        past_end = self._elide(self.abi_sets.exit_uses)
        _live_in, live_out = L.solve(cs, self.falls, past_end)
        for c, b in zip(cs, base_leaves):  # a direct callee's reads come from its summary
            if c.call is not None and self.call_targets[c.call] is not None:
                c.call_gen = 0
            c.leaves = b
        base_in, _ = L.solve(cs, self.falls, past_end)
        self.facts = self._fn_live(cs, live_out, base_in, tails, opaque)
        self._site_chunks(cs, own_leaves, past_end)

    def _tail_jumps(self) -> frozenset[int]:
        """The jumps out through a register (``Lifted.jump_out``) that are tail calls: they leave
        with the entry's SP and X30 (``_exit_states``), so what they reach is a function entered
        as the caller's callee, which returns to the caller with the callee-saved registers the
        caller keeps in its locals (AAPCS64, ``recompiler.elide_saves``).  Such a jump reads
        what a call of an unknown callee reads and what a return hands on, and stores no
        callee-saved register (``STORE_INDIRECT``), as a call through a register: the function
        stays out of ``opaque`` (whose returns store every callee-saved register and whose
        saves stay, the entry loading them from NxCpu).  Only where every way out of the
        function through ``STORE_INDIRECT`` is such a jump (no jump table, no write-back of
        everything, not Go code): musl's ``__fwritex`` ends in
        ``f->write(f, s, l)`` as a ``br x3``, 176.7 M instructions of jsontestrunner's 2,215.8 M
        (native 97.6 M)."""
        if not (self.elide_saves and self.trust_abi) or self.abi_sets.go or self.trace:
            return frozenset()
        recs = self.records
        if any(r.tables or r.exit_all for r in recs) or self.plan.jump_tables or self.plan.direct_tables:
            return frozenset()
        lr_jumps = {i.addr for i in self.plan.insns if i.name == "BR" and i.f["Rn"] == 30}
        jumps = [r.addr for r in recs if r.jump_out]
        if not jumps or any(a in lr_jumps for a in jumps):
            return frozenset()
        if not all(sp_ok and lr_ok for sp_ok, lr_ok in self._exit_states(jumps)):
            return frozenset()
        # and with X19-X28/D8-D15 as they came: a function hands its callee-saved registers back
        # before a tail call, while a jump that leaves one changed is a computed goto between
        # pieces of one function whose frame is live (a false entry at a ``&&label`` of
        # oniguruma's matcher advances its bytecode pointer X24, then ``br x2`` to the next
        # opcode's piece, which reads X24 from NxCpu: as a tail call it stored no X24)
        succs, writes, frame = self._frame_graph()
        # (no path past a call of a noreturn function: glibc's __assert_fail before the code
        # of a path that never saved X23, in busybox's 0x469280)
        nr = self.plan.noreturn_calls
        succs = {a: [t for t in ts if not (a in nr and t == a + 4)] for a, ts in succs.items()}
        changed = liveness.saves_changed(self.plan.insns, succs, writes, frame, self.plan.entry)
        if any(changed.get(a, liveness.ELIDED_SAVES) for a in jumps):
            return frozenset()
        return frozenset(jumps)

    def _chunks(self) -> tuple[list[liveness.Chunk], list[int], list[tuple[int, int]], bool, list[int]]:
        """Each instruction's liveness ``Chunk`` (its record's effects; what leaving the function
        there reads, ``leaves``), the same leaves without what a return or a direct tail call
        hands on, the direct tail calls (chunk address, lifted callee), whether the function
        is opaque (it jumps through a register or writes every register back), and each chunk's
        leaves without its direct tail calls' (``_site_chunks``)."""
        cs: list[liveness.Chunk] = []
        base_leaves: list[int] = []
        own_leaves: list[int] = []
        tails: list[tuple[int, int]] = []
        # a call through a register is not opaque (interproc.FnLive.calls_unknown): its site
        # stores what an unknown callee reads, its returns what its own call sites overwrote
        opaque = False
        # where an indirect jump may land inside this function besides its tables: a false
        # entry (a label that analysis also took for a function).  A resume point reached so
        # is a return to somewhere else, which reads what a return hands on (EXIT_USES, in
        # every indirect jump's ``leaves``).
        inner = sorted(a for a in self.addrs if a != self.plan.entry and a in self.functions)
        lr_jumps = {i.addr for i in self.plan.insns if i.name == "BR" and i.f["Rn"] == 30}
        # a table's cases in other functions: tail calls for the summaries, after the numbered
        # ones (their shared block stores everything, so no slot of theirs is numbered)
        self._table_tails: list[tuple[int, int]] = []
        for rec in self.records:
            self.exit_effects(rec)
            self._number_tails(rec.start, rec.stop, len(tails), len(rec.tails))
            tails += [(rec.addr, t) for t in rec.tails]
            c, summary_leaves, opaque_here, own = self._chunk(rec, inner, rec.addr in lr_jumps)
            cs.append(c)
            own_leaves.append(own)
            base_leaves.append(summary_leaves)
            opaque |= opaque_here
        return cs, base_leaves, tails + self._table_tails, opaque, own_leaves

    def _table_cases(self, label: str) -> tuple[list[int], list[int]] | None:
        """The targets of the table dispatched at ``label`` (``emitter.shared_table``) that are
        labels of this function, and those that are lifted functions (its shared block
        tail-calls them: ``emitter.goto``); None where a target is neither (the block jumps
        there through nx_jump, which may read anything)."""
        raw = next(k for k, v in self.shared.items() if v == label)
        local = [a for a in raw if a in self.addrs]
        other = [a for a in raw if a not in self.addrs]
        if any(a not in self.functions for a in other):
            return None
        return local, other

    def _chunk(self, rec: Lifted, inner: list[int], lr_jump: bool) -> tuple[liveness.Chunk, int, bool, int]:
        """``rec``'s liveness chunk, what leaving there reads without what a return or a direct
        tail call hands on, whether it makes the function opaque, and its leaves without its
        direct tail calls'."""
        L = liveness
        addr = rec.addr
        opaque = False
        indirect = rec.jump_out
        # ``leaves``: what leaving here reads, for the liveness of this function's own call
        # sites; ``summary_leaves``: the same without what a return or a direct tail call
        # hands on (their callers reload only what we may write; a tail callee's reads come
        # from its summary, ``tails``), for the registers live at the entry
        summary_leaves = self._elide(self.abi_sets.indirect_uses) if indirect else 0
        tail_jump = addr in self.tail_jumps
        if tail_jump:  # a tail call through a register (_tail_jumps): an unknown callee's reads
            summary_leaves = self._elide(self.abi_sets.call_uses)
        if indirect and lr_jump:
            # a jump through the link register is a return (a tail call keeps LR for its
            # callee, so its target is never in X30): longjmp's ``br x30`` lands on a resume
            # point, which reads what any return to somewhere else reads.  As a tail call it
            # would make every caller of a function that may throw (Lua: nearly all) keep
            # X2-X8 and V0-V7 live across its calls.
            summary_leaves = self._elide(self.abi_sets.exit_uses)
        table = self.plan.jump_tables.get(addr)
        if indirect and table and all(a in self.addrs for a in table):
            # the fallback of a small table of this function's own labels: a miss, as below
            summary_leaves = self._elide(self.abi_sets.exit_uses)
        ret_live = self.ret_live
        leaves = (ret_live if rec.ret is not None or tail_jump else 0) | summary_leaves
        own = leaves
        for _t in rec.tails:
            leaves |= self._elide(self.abi_sets.call_uses) | ret_live
        succs = list(rec.succs)
        for label in rec.tables:
            targets = self.shared_targets[label]
            succs += targets or []
            if targets is not None and not self.falls_back.get(label, True):
                continue  # a complete table of this function's labels: no exit (its miss is fatal)
            miss = self._elide(self.abi_sets.exit_uses) if targets is not None else L.ALL
            cases = self._table_cases(label) if targets is None else None
            if cases is not None:
                # cases in other functions (a tail call through the table, or an entry the
                # analysis found inside a table's range: busybox's memcpy for ThunderX lists
                # its table's own address as the unused case 0) read what their callees read
                # and what a return hands on, as direct tail calls do, not everything: as
                # everything, every caller of memcpy read X19-X28 and D8-D15 through its
                # summary, and sort's key compare stored six of them at each key extraction
                succs += cases[0]
                miss = self._elide(self.abi_sets.exit_uses)
                leaves |= self._elide(self.abi_sets.call_uses) | ret_live
                self._table_tails += [(addr, t) for t in cases[1]]
            leaves |= miss
            own |= miss
            summary_leaves |= miss
            indirect = True
        if indirect:
            succs += inner
            opaque = not tail_jump
        gen, kill = rec.reads, rec.kills
        gen &= ~self.saves.get(addr, 0)
        if rec.fatal:
            # a fatal error (an instruction we do not lift, BRK/UDF) reads nothing a caller
            # must provide: glibc's SVE variants of memcpy and friends, never picked here,
            # otherwise made every memcpy call store every register
            gen = kill = 0
        elif gen == L.ALL:  # an exit that writes everything back: SVC, trap, tail call
            opaque = True
            if self.elide_saves and rec.svc:
                gen = L.SVC_USES
            elif self.abi_sets.go and rec.svc:
                # Go: a system call reads its number and arguments and SP; its write-back of the
                # registers the function writes stores the values a leaf's locals hold (what it
                # loaded, or wrote: every one valid).  Go makes system calls in leaves (the
                # runtime's assembly: write1, futex, ...); after a call of its own a function's
                # local may be stale where its callee changed the register and nothing here
                # reads it, so there it also reads what a return hands on (GO_RET_HANDED).
                # As everything (ALL) it made every caller of the runtime's system calls read
                # X9-X27 through its summary, and store and reload them around its calls.
                gen = L.SVC_USES | (self.ret_live if self.call_rets else 0)
            elif self.elide_saves and rec.fp_env:
                # an FPSR/FPCR access stores every local only to order the FP arithmetic
                # before it (fp_fpsr.py); a callee-saved register it has not written goes
                # back as it came, so that is no read of the caller's value: as a read it
                # made every function whose calls may reach __feraiseexcept (strtod,
                # printf's float formatting) read D8-D15, and their callers store them
                gen = L.ALL & ~L.ELIDED_SAVES
        chunk = L.Chunk(
            addr, gen, kill, succs, call=rec.call, leaves=leaves, writes=rec.writes, call_gen=self._elide(self.abi_sets.call_uses)
        )
        return chunk, summary_leaves, opaque, own

    def _site_chunks(self, cs: list, own_leaves: list[int], past_end: int) -> None:
        """What solving the call sites' liveness again at placement needs (``FnLive.gen`` and
        the rest, ``interproc.site_liveness``): each chunk's own reads and kills, what leaving
        there reads besides its direct tail calls and its successors in the function (a branch
        to an address outside: everything; the fall past the end after a call: ``past_end``),
        and what its call site's callee reads where that callee is unknown."""
        L = liveness
        f = self.facts
        index = {c.addr: i for i, c in enumerate(cs)}
        for i, (c, own) in enumerate(zip(cs, own_leaves)):
            out = own
            for t in c.succs:
                if t not in index:
                    out = L.ALL
            fall = self.falls.get(c.addr)
            if fall is not None and fall not in index:
                out |= past_end if c.call is not None else L.ALL
            f.gen.append(c.gen)
            f.kill.append(c.kill)
            f.out_fixed.append(out)
            # the same without a return's results (c.leaves: its leaves without them, _liveness)
            ret = f.ret[i] >= 0 and out != L.ALL
            rl = self.ret_live
            f.out_noret.append(out & ~rl | c.leaves & rl if ret else out)

    def _fn_live(
        self, cs: list, live_out: dict[int, int], base_in: dict[int, int], tails: list[tuple[int, int]], opaque: bool
    ) -> interproc.FnLive:
        """The function's ``interproc.FnLive`` from its chunks and their liveness."""
        L = liveness
        must = L.must_written(cs, self.falls, self.plan.entry)
        index = {c.addr: i for i, c in enumerate(cs)}
        ret_of = {r.addr: r.ret for r in self.records if r.ret is not None}
        n_sites = len(self.call_rets)
        # a function that saves a callee-saved register owns it: by AAPCS64 its own reads of
        # the entry value mean nothing (they lie on paths the guest compiler knew do not
        # happen, as verror_msg's read of X23 where its flag was clear), so they are no input
        # (a callee's read on a path that leaves it untouched, as setjmp's, still is: site_open)
        owned = self._owned()
        f = interproc.FnLive(self.plan.entry, base_in.get(self.plan.entry, L.ALL) & ~owned, 0, opaque, sorted(self.callees))
        if self.plan.input_regs is not None:  # (a Go function with no arguments: analysis.go_args)
            f.uses_cap = self.plan.input_regs
            f.base_uses &= f.uses_cap
        if self.plan.mods_cap is not None:
            f.mods_cap = self.plan.mods_cap
        f.site_target = list(self.call_targets)
        f.calls_unknown = any(t is None for t in self.call_targets) or bool(self.tail_jumps)
        f.unknown_uses = self._elide(self.abi_sets.call_uses)
        f.go = self.abi_sets.go
        f.hands = self.ret_live if f.go else L.ALL
        f.go_compiled = f.go and self.ret_live == L.GO_RET_HANDED
        f.wt_sites, f.wt_unsafe = dict(self.wt_sites), self.wt_unsafe
        # a register kept in its NxCpu slot (mem_regs.py) is handed back by its restore
        f.save_drop = self._save_drop(cs, self.saves, live_out) & ~sum(1 << r for r in self.mem_regs)
        f.site_live, f.site_open = [L.ALL] * n_sites, [L.ALL] * n_sites
        f.entry_index = index.get(self.plan.entry, -1)
        for c in cs:
            f.event.append(c.addr in self.events)
            f.writes.append(c.writes)
            f.writes_all |= c.writes
            nxt = [*c.succs, *([self.falls[c.addr]] if c.addr in self.falls else [])]
            f.succs.append(sorted({index[t] for t in nxt if t in index}))
            f.site.append(-1 if c.call is None else c.call)
            f.ret.append(ret_of.get(c.addr, -1))
            if c.call is not None:
                f.site_live[c.call] = live_out[c.addr]
                f.site_open[c.call] = L.ALL & ~must[c.addr]
        f.site_alt = list(self.call_alt)
        for j, k in enumerate(f.site_alt):  # a guessed direct call: its BLR's chunk, as the site
            if k >= 0:
                f.site_live[j], f.site_open[j] = f.site_live[k], f.site_open[k]
        f.tail_guess = [(a, t) in self.guessed_tails for a, t in tails]
        for a, t in tails:
            f.tail_chunk.append(index[a])
            f.tail_target.append(t)
            f.tail_open.append(L.ALL & ~must[a])
        flag_reads = {r.addr for r in self.records if r.flags_read}
        f.flags_in, f.tail_flags_open = self._flags_at_entry(cs, flag_reads, tails)
        # the returns and direct tail calls that surely go back to the caller with its SP and
        # X29 (a table's tail calls, from its shared block, are not followed)
        rets = sorted(ret_of.items(), key=lambda kv: kv[1])
        numbered = len(tails) - len(self._table_tails)
        # (a BR X30 goes where a return would: to a resume point, which nx_jump hands straight
        # back up, no function entered on the way)
        lr_jumps = {i.addr for i in self.plan.insns if i.name == "BR" and i.f["Rn"] == 30}
        jumps = [r.addr for r in self.records if (r.jump_out or r.exit_all) and r.addr not in lr_jumps]
        tables = [r.addr for r in self.records if r.tables]
        ex = self._exit_states([a for a, _k in rets] + [a for a, _t in tails] + jumps + tables)
        f.ret_normal = [False] * (max(ret_of.values(), default=-1) + 1)
        for (_a, k), (sp_ok, lr_ok) in zip(rets, ex):
            f.ret_normal[k] = sp_ok and lr_ok
        ex_tails = ex[len(rets) : len(rets) + len(tails)]
        f.tail_normal = [sp_ok and lr_ok for sp_ok, lr_ok in ex_tails[:numbered]] + [False] * (len(tails) - numbered)
        f.tail_lr = [lr_ok for _sp, lr_ok in ex_tails]
        ex_jumps = ex[len(rets) + len(tails) :]
        f.jumps_out = bool(jumps)
        f.site_ret = list(self.call_rets)
        f.other_exit = any(r.fatal or r.svc or r.jump_out or r.exit_all or r.tables for r in self.records)
        f.dispatch = bool(self.plan.jump_tables)
        f.jump_abnormal = not all(lr_ok for _sp, lr_ok in ex_jumps[: len(jumps)])
        # a table's miss goes through nx_jump to a label of the function: a false entry there
        # returns to the X30 of the dispatch
        if not all(lr_ok for _sp, lr_ok in ex_jumps[len(jumps) :]):
            f.lr_roots = [a for a in self.addrs if a != self.plan.entry and a in self.functions]
        return f

    def _flags_at_entry(self, cs: list, flag_reads: set[int], tails: list[tuple[int, int]]) -> tuple[bool, list[bool]]:
        """Whether the function may read NZCV before writing them (a false entry: analysis took
        a label for a function, and code falls or branches into it with the flags set, as
        zsh's lexer did between a ``cmp`` and the ``b.ne`` after it), and for each direct tail
        call whether NZCV may still hold what they held at the entry.  A direct tail call hands
        the flags on where its callee reads them (``interproc.place``); AAPCS64 leaves them
        undefined at a true entry, so no other call does.  One bit of liveness over the
        instructions: a read is any mention of a flag or a write-back of every local, a write
        one that sets all four (``flags_touched``) or a call (after it they are the callee's)."""
        L = liveness
        fcs = [
            L.Chunk(
                c.addr, 1 if c.addr in flag_reads else 0, 1 if c.addr in self.flag_writers or c.call is not None else 0, c.succs
            )
            for c in cs
        ]
        live_in, _ = L.solve(fcs, self.falls, 0)
        must = L.must_written(fcs, self.falls, self.plan.entry)
        return bool(live_in.get(self.plan.entry, 1) & 1), [not must[a] & 1 for a, _t in tails]

    def _save_drop(self, cs: list, saves: dict[int, int], live_out: dict[int, int]) -> int:
        """The callee-saved registers whose saves may be dropped unless a return hands them
        back (``interproc.place``): every save of one stores its value at the entry (no path
        writes it before: else it is a spill of the function's own value, which is read back),
        and no restore of one is read before the function leaves (the restored entry value goes
        only to a return or a tail call, which elide_saves does not count as reading it)."""
        if not saves or self.full_exit:
            return 0  # an exit that stores every local hands every register back
        written = liveness.may_written_before(cs, self.falls)
        drop = self._owned() & self.firm_saves
        for a, m in saves.items():
            drop &= ~(m & written.get(a, liveness.ALL))
        for c in cs:
            r = self.restores.get(c.addr, 0)
            drop &= ~(r & live_out.get(c.addr, liveness.ALL))
        return drop

    def _elide(self, uses: int) -> int:
        """``uses`` without the callee-saved registers with ``recompiler.elide_saves``: what an
        exit whose reader is not this program's own code reads of them (an unknown callee, a
        jump out, a table's miss, the fall past a noreturn call).  AAPCS64 code reads them only
        to save them; a frame that a return to somewhere else re-enters finds them where
        whatever captured them (setjmp) put them, and one resumed at a call site that did not
        store them is a fatal error naming the setting (docs/ARCHITECTURE.md)."""
        return uses & ~liveness.ELIDED_SAVES if self.elide_saves else uses

    def _elided_saves(self) -> dict[int, int]:
        """Address -> the callee-saved registers the instruction there saves into a stack slot,
        reads that do not count as reads of the function (``recompiler.elide_saves``): a caller
        then keeps such a register in its C local only, and this function saves whatever its
        ``NxCpu`` slot holds (its epilogue's reload of the slot goes nowhere: the caller trusts
        AAPCS64).  None for an unwinder: a function that saves every one of X19-X28 and D8-D15
        (``__builtin_unwind_init``'s prologue) and leaves one of them unwritten besides its
        restores, which it saved only to read its callers' value back from its own slot (libgcc's
        unwinder writes no D register).  A function that writes them all saves them to use
        them: SQLite's printf (``sqlite3_str_vappendf``) and date functions, whose reads made
        1,326 of SQLite's 2,341 functions read X19-X28/D8-D15 through their summaries, and every
        call of them (its interpreter's error paths) store all eighteen."""
        self.restores = {}
        if not self.elide_saves:
            return {}
        saves = {i.addr: m for i in self.plan.insns if (m := liveness.save_reads(i.word))}
        every = liveness.ELIDED_SAVES
        if self._owned(saves) & every == every:
            written = 0  # what the function writes of them other than by restoring them
            for i in self.plan.insns:
                written |= effects.declare(i).writes & ~liveness.restore_writes(i.word)
            if every & ~written:
                return {}
        saves, self.restores, self.firm_saves = self._frame_saves(saves)
        return saves

    def _owned(self, saves: dict[int, int] | None = None) -> int:
        """Every callee-saved register the function saves (``self.saves`` by default)."""
        out = 0
        for m in (self.saves if saves is None else saves).values():
            out |= m
        return out

    def _tag_sites(
        self, regs: list[int], v_used: list[int], w_regs: list[int], w_sp: bool, v_written: list[int], uses_flags: bool
    ) -> None:
        """What writing the call sites' and returns' lists (``interproc.place``) needs of the
        function's locals goes in ``self.facts``."""
        f = self.facts
        # (Go: a callee may change any register, SP and X29 included: every local may be reloaded)
        f.regs = list(regs) if self.abi_sets.go else [r for r in regs if r in CALLER_SAVED]
        f.v_used, f.w_regs, f.w_sp, f.v_written = list(v_used), list(w_regs), w_sp, list(v_written)
        f.ret_extra = "FLAGS_STORE;" if self.ret_flags and self.flags_written else ""
        f.flags_local = uses_flags
