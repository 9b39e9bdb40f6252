"""Emit one C function for one guest function.

Registers the function uses live in C locals (``x0``..``x30``, ``sp``, ``v0``..``v31`` as
``NxVec``, flags ``N Z C V``); they are loaded from ``NxCpu`` at entry and written back before
calls, SVCs and exits.  Handlers name a vector register's local ``vN`` and write it through
``lift/vector.py``, so scalar FP stays in host registers instead of going through memory that every
guest store may alias.  Each instruction's C and effects are a record (``result.Lifted``) that
the API below fills as the handler (``forms.py``) runs.  With ``trust_abi`` (AAPCS64) each call
site gets its own lists from a liveness pass over those records (``facts.py``, ``liveness.py``)
and the callee's register summary (``interproc.py``, which also writes the lists: the emitter
leaves slots (``template.py``) and the facts in ``self.facts``): it stores what the
callee may read and what is live after it that the callee may change, and reloads the latter;
a return stores the caller-saved registers it changed (X19-X29 and SP only where its own call
sites overwrote their ``NxCpu`` slots; SP and X29 not at all where it surely returns to its
caller: ``interproc.frame_stores``).  ``trust_abi=False`` stores every written register and reloads every one it
uses; trace builds store and reload as without liveness (lockstep compares every register at
every function entry) and keep the flags.  Otherwise the flags are neither written back before
a call nor reloaded after it (AAPCS64: they are no argument and not preserved).  A computed
goto's table becomes a dense array of host label addresses (``shared_table``); every other
indirect branch or call keeps an inline cache of its first target (lifted.h ``NX_IC``).  See
docs/ARCHITECTURE.md, "Returns to somewhere else", for how a call site handles a return to an
unexpected address.  The C function around the body (declarations, the lists as macros, the
resume twin and catch) is ``wrap.py``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nxrecomp.common import settings
from recompiler.decode import Insn, disasm
from recompiler.lift import cold, effects, flag_fuse, interproc, liveness, loop_edges, mem_regs
from recompiler.lift.facts import FunctionFacts
from recompiler.lift.result import Lifted
from recompiler.lift import template as T
from recompiler.lift.signature import ARGS, ARG_REGS, CALLER_SAVED, JUMP_OUT, SIG, fname, rname
from recompiler.lift.wrap import FunctionWrapper

# (re-exported: handlers and the build name them from here)
__all__ = [
    "ARGS",
    "ARG_REGS",
    "CALLER_SAVED",
    "JUMP_OUT",
    "SIG",
    "fname",
    "rname",
    "DirectTable",
    "FunctionEmitter",
    "FunctionPlan",
    "LiftError",
    "no_opt",
]

_DENSE_SLOTS = 1 << 14  # most slots (guest words) of a computed goto's label array (128 KiB)


def ret_check(ret: int) -> str:
    """After a call: a return to somewhere else than ``ret`` goes up (NX_CATCH)."""
    return f"if (UNLIKELY(_r.pc != {ret:#x}ull)) NX_CATCH;"


# (declared where it is used: lifted.h is part of every object's cache key)
_TABLE_MISS = "void nx_table_miss(NxCpu *, u64, u64) __attribute__((noreturn, cold));"


class LiftError(Exception):
    pass


def no_opt(entry: int) -> set[str]:
    """The optimisations ``recompiler.no_opt`` turns off in the function at ``entry`` (those of
    ``recompiler.no_opt_at``, or every function where that is empty): for bisecting a wrong
    result that a trace build does not show, first by optimisation, then by function."""
    off = {w.strip() for w in str(settings.get("recompiler", "no_opt")).split(",") if w.strip()}
    unknown = off - NO_OPT_NAMES
    if unknown:
        raise ValueError(f"recompiler.no_opt: unknown optimisation(s) {sorted(unknown)} (known: {sorted(NO_OPT_NAMES)})")
    at = str(settings.get("recompiler", "no_opt_at")).strip()
    if not off or not at:
        return off
    for part in at.split(","):
        lo, _, hi = part.strip().partition("-")
        if int(lo, 16) <= entry <= int(hi or lo, 16):
            return off
    return set()


NO_OPT_NAMES = {"liveness", "flags", "twins", "inline", "mem_regs", "results", "frames", "devirt", "args", "cold"}


@dataclass(frozen=True)
class DirectTable:
    """A computed goto whose table analysis read from memory the program cannot write
    (``analyse.Analyser._direct``): the target of the BR is ``targets[x[reg] & mask]`` while
    each ``guards`` register holds its value, so the lifted BR jumps through a host label array
    indexed by the masked register, without the guest's load and the guest-address lookup."""

    reg: int
    mask: int
    guards: tuple[tuple[int, int], ...]  # (register, value) a table base was assumed to hold
    # the guest's target of each index 0..mask, None where that is not code: a target
    # outside the function takes the general dispatch, a None a fatal error
    targets: tuple[int | None, ...]
    expr: tuple = ()  # the target as analysis evaluated it (for those paths)
    # the index is a byte or halfword the guest loaded (an interpreter's opcode, QuickJS's
    # ``ldrb w24, [x23]``), not masked: at most ``mask``, which the lifted BR checks, and the
    # BR's own straight-line code must load the entry with that register (``_entry_load``)
    loaded: bool = False


@dataclass
class FunctionPlan:
    """What analysis knows of one function: its body and the addresses it needs."""

    entry: int
    insns: list[Insn]  # body in address order
    tail_targets: set[int] = field(default_factory=set)
    jump_tables: dict[int, list[int]] = field(default_factory=dict)  # BR address -> targets
    direct_tables: dict[int, DirectTable] = field(default_factory=dict)  # BR address -> its index
    # BRs whose table holds every target they may take (analysis.tables.Recovered.complete):
    # their fallback is a fatal error instead of the general jump, which would keep every
    # register live at every dispatch of an interpreter's loop (and so in memory)
    complete_tables: set[int] = field(default_factory=set)
    # BR address -> the functions an IFUNC's PLT stub may branch to (analyse.ifunc_candidates)
    ifunc_targets: dict[int, list[int]] = field(default_factory=dict)
    noreturn_calls: set[int] = field(default_factory=set)  # BLs of analyse.noreturn_functions
    # call address -> the C++ landing pad (a label of this body) a throw out of it resumes at
    # (analysis.eh_frame.landing_pads): the call site goes there on a return to that pad
    landing_pads: dict[int, int] = field(default_factory=dict)
    resume_points: list[int] = field(default_factory=list)  # filled by the emitter
    resume_twin: bool = False  # filled by the emitter: resume points enter rname(entry)
    # BLR/BR address -> the lifted functions analysis guessed its register holds
    # (analysis.call_targets): tried first as direct calls / tail calls behind a compare
    call_guesses: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # the registers a caller may hand it as inputs, where known (a Go function with no
    # arguments: analysis.go_args); None: any
    input_regs: int | None = None
    # what its returns hand a caller, where known (a function compiled from Go: its results,
    # g, X29 and SP; analysis.go_args); None: what its calling convention says (Go: every register)
    hands_back: int | None = None
    # what a call of it may change, where its source documents less than the registers it
    # writes (``runtime.gcWriteBarrier`` saves and restores every general register it uses:
    # analysis.go_args.CONVENTIONS); None: whatever it writes
    mods_cap: int | None = None


class TableDispatch:
    """Jump tables' dispatch, a mixin of ``FunctionEmitter``: shared tables whose cases are in
    other functions, label arrays entered by a computed goto, and the C of a table's base and
    loaded index."""

    def shared_table(self, targets: list[int]) -> str:
        """Label of the dispatch of this table: a host label per guest address in a dense array
        indexed by (target - lowest) / 4, so a computed goto is one bounds check and one
        indirect jump as in native code (a switch over sparse guest addresses becomes a tree of
        compares, ~7 mispredictable branches per dispatch of Lua's interpreter).  Each BR site
        repeats that jump (``dense_gotos``, put in place of ``goto JT_n;`` after liveness): an
        interpreter's handlers each end in their own indirect jump, predicted from the handler
        it leaves, as native threaded code does; one shared jump predicted every opcode from
        one site.  The site's out-of-range index goes to the ``_miss`` entry, branch-free.
        Targets outside this function, or tables spread too thin, use a switch; anything else
        goes to nx_jump."""
        key = tuple(targets)
        if key not in self.shared:
            n = len(self.shared)
            label = f"JT_{n}"
            self.shared[key] = label
            # None: a target in another function (a tail call, which may read anything)
            self.shared_targets[label] = (
                [a for a in targets if a in self.addrs] if all(a in self.addrs for a in targets) else None
            )
            local = [a for a in targets if a in self.addrs and a % 4 == 0]
            other = [a for a in targets if a not in local]
            lines = []
            if local and (max(local) - min(local)) // 4 < _DENSE_SLOTS:
                lo = min(local)
                slots = (max(local) - lo) // 4 + 1
                for a in local:
                    self.labels.add(a)
                inits = ", ".join(f"[{(a - lo) // 4}] = &&L_{a:x}" for a in local)
                # one null slot past the end: the rotate puts a misaligned offset's low bits on
                # top, so every bad target indexes past the last slot
                self.dense_tabs[label] = f"  static void *const _tab{n}[{slots + 1}] = {{ {inits} }};"
                self.dense_gotos[label] = f"NX_JT_GO(_tab{n}, {lo:#x}ull, {slots}u, {label}_miss);"
                lines.append(f" {label}: {self.dense_gotos[label]}")
                lines.append(f" {label}_miss:;")
            else:
                other = targets
            if other:
                self.in_shared = True
                cases = " ".join(f"case {a:#x}ull: {self.goto(a)}" for a in other)
                self.in_shared = False
                lines.append(f"  switch (_jt) {{ {cases} default: break; }}")
                self.other_cases[label] = lines[-1]
            lines.append(f"  {{ STORE_INDIRECT; s->pc = _jt; MUSTTAIL return nx_jump{ARGS}; }}")
            # (full_exit: only where that fallback can run, ``table_falls_back``, known once
            # every site of the table is lifted)
            if not lines[0].startswith(f" {label}:"):
                lines[0] = f" {label}:" + lines[0][1:]
            self.shared_blocks.append("\n".join(lines))
        return self.shared[key]

    def direct_goto(self, label: str, d: DirectTable) -> str:
        """The C of a BR through ``d``: where its guards hold, one indirect jump through a
        label array indexed by the masked register (the guest's load of the target and the
        lookup of that address are left to the miss path, ``label``, which the array's empty
        entries also reach); ``_jt`` holds the guest's target for that path.

        In game.so (position-independent) each jump is ``jmp *(%reg,%idx,8)`` after a
        ``lea _dtabN(%rip), %reg`` that clang rematerialises at the site when no register is
        free to hold the base across the loop (Lua's luaV_execute; QuickJS's JS_CallInternal
        keeps it in r15 at most sites); native Lua, a static non-PIE executable, jumps through
        the table's absolute address.  Measured against it (callgrind, Lua n-body): the base
        in a variable made opaque by an empty asm is spilled, so the lea becomes a reload of
        the spill (lea -11.0 M, ``(%rsp)`` loads +12.8 M); int32 offsets from a label need
        two rip-relative anchors and an add; a switch is lea, movslq, add and an indirect
        jump; ``-fno-pic`` is refused by zig's clang and would need text relocations."""
        key = (label, d)
        if key not in self.direct_tabs:
            n = len(self.direct_tabs)
            name = f"_dtab{n}"
            self.direct_tabs[key] = name
            # an entry outside the function: the guest's own target, computed again from the
            # registers the array was indexed with (they hold the same values there), then the
            # general path (which stores every register: they all stay live at each dispatch);
            # an entry that is not code: a fatal error, which keeps nothing live
            inits = ", ".join(
                f"[{k}] = &&L_{a:x}" if a in self.addrs else f"[{k}] = &&JF_{n}" if a is None else f"[{k}] = &&JD_{n}"
                for k, a in enumerate(d.targets)
            )
            for a in d.targets:
                if a in self.addrs:
                    self.labels.add(a)
            self.dense_tabs[name] = f"  static void *const {name}[{d.mask + 1}] = {{ {inits} }};"
            if any(a is not None and a not in self.addrs for a in d.targets):
                self.shared_blocks.append(f" JD_{n}: _jt = {self._expr_c(d.expr)}; goto {label};")
            if None in d.targets:
                self.shared_blocks.append(
                    f" JF_{n}: nx_bad_table_entry(s, {self.x(d.reg)} & {d.mask:#x}ull, {self._expr_c(d.expr)});"
                )
        name = self.direct_tabs[key]
        conds = [f"{self.x(r)} == {v:#x}ull" for r, v in d.guards]
        if d.loaded:
            # the BR's register is the entry an LDR of its block read from base + index * 8
            # (_entry_load, once the labels are known: "_TBASE_" names that LDR's base): with
            # the base the table's and the index in range, it is that slot
            base = self._table_base(d)
            if base is None or not self.live:
                return ""
            conds += [f"_TBASE_ == {self._expr_c(base)}", f"{self.x(d.reg)} <= {d.mask:#x}ull"]
            text = f"if (LIKELY({' && '.join(conds)})) goto *{name}[{self.x(d.reg)}]; "
            self.loaded_sites.append((len(self.records) - 1, text, d))
            return text
        cond = " && ".join(conds) or "1"
        return f"if (LIKELY({cond})) goto *{name}[{self.x(d.reg)} & {d.mask:#x}ull]; "

    @staticmethod
    def _table_base(d: DirectTable) -> tuple | None:
        """The base of a loaded-index table: ``d.expr`` is the 8-byte load of base + index * 8
        (the index zero-extended from 32 bits or not), the base a constant or a register."""
        e = d.expr
        if not e or e[0] != "load" or e[1] != 8 or e[3][0] != "add":
            return None
        for base, scaled in ((e[3][1], e[3][2]), (e[3][2], e[3][1])):
            if scaled[0] != "shl" or scaled[2] != 3 or base[0] not in ("const", "reg"):
                continue
            idx = scaled[1]
            if idx[0] == "ext" and idx[1] in (2, 3):  # UXTW, UXTX
                idx = idx[2]
            if idx == ("reg", d.reg):
                return base
        return None

    def _entry_load(self, k: int, d: DirectTable) -> int | None:
        """Where the BR at instruction ``k`` takes its target from an ``LDR Xt, [Xn, Wm/Xm,
        UXTW/LSL #3]`` with ``d.reg`` as Xm, in straight-line code no label enters after that
        load and in which nothing writes Xt or Xm (register effects from ``effects.scan``):
        then its target is the entry that index selects (memory the program cannot write),
        whichever value analysis named it.  The LDR's base register, else None."""
        rn = self.plan.insns[k].f["Rn"]
        between = 0  # registers written after the load, up to the BR
        for j in range(k - 1, max(-1, k - 64), -1):
            rec, nxt, ins = self.records[j], self.records[j + 1], self.plan.insns[j]
            if nxt.addr in self.labels or nxt.addr == self.plan.entry or nxt.addr != rec.addr + 4 or not rec.falls:
                return None
            if rec.call is not None or rec.svc or rec.jump_out or rec.tables or rec.fatal:
                return None
            if rec.writes >> rn & 1:
                f = ins.f
                ok = (
                    ins.group == "LDST_regoff"
                    and (f["size"], f["V"], f["opc"], f["S"]) == (3, 0, 1, 1)
                    and f["option"] in (2, 3)
                    and f["Rt"] == rn
                    and f["Rm"] == d.reg
                    and f["Rn"] != 31
                    and rn not in (f["Rn"], f["Rm"])
                    and rec.writes == 1 << rn
                    and not between & (1 << f["Rn"] | 1 << f["Rm"])
                )
                return f["Rn"] if ok else None
            between |= rec.writes
        return None

    def _expr_c(self, e: tuple) -> str:
        """C of one of analysis's symbolic values (``analyse.Analyser.jump_table``)."""
        k = e[0]
        if k == "const":
            return f"{e[1]:#x}ull"
        if k == "reg":
            return f"(u64){self.x(e[1])}"
        if k == "add":
            return f"({self._expr_c(e[1])} + {self._expr_c(e[2])})"
        if k == "shl":
            return f"({self._expr_c(e[1])} << {e[2]})"
        if k == "mask":
            return f"({self._expr_c(e[1])} & {e[2]:#x}ull)"
        if k == "ext":
            bits = (8, 16, 32, 64)[e[1] & 3]
            v = self._expr_c(e[2])
            if bits == 64:
                return v
            return f"(u64)(i64)(i{bits})(u{bits}){v}" if e[1] & 4 else f"(u64)(u{bits}){v}"
        if k == "load":
            size, signed, addr = e[1], e[2], self._expr_c(e[3])
            v = f"L{size * 8}({addr})"
            return f"(u64)(i64)(i{size * 8}){v}" if signed and size < 8 else f"(u64){v}"
        raise ValueError(f"no C for symbolic value {e!r}")


class FunctionEmitter(FunctionFacts, FunctionWrapper, TableDispatch):
    """Emitting: the registers, control flow and jump tables handlers write through, and the
    loop over the function's instructions (``emit``); the facts (``facts.py``) and the C
    function around the body (``wrap.py``) and the tables' dispatch (``TableDispatch``) are its
    mixins."""

    def __init__(
        self,
        plan: FunctionPlan,
        functions: set[int],
        trust_abi: bool = True,
        comments: bool = False,
        trace: bool = False,
        ret_flags: bool = False,
        elide_saves: bool = True,
        abi: str = "aapcs64",
    ) -> None:
        self.trace = trace
        self.no_opt = no_opt(plan.entry)
        # a return writes the flags back too: AAPCS64 does not, but a differential test that
        # reads the architectural state after a RET does (tests/recompiler/unicorn_harness.py)
        self.ret_flags = ret_flags
        self.plan = plan
        self.functions = functions  # every function entry of the program
        self.trust_abi = trust_abi
        self.elide_saves = elide_saves and trust_abi
        # the register sets of the code's calling convention (``Program.abi``): Go's keeps no
        # register across a call and its stack moves, so trust_abi and elide_saves are off for
        # it, but its call sites still get lists from liveness and the callees' summaries
        if abi not in ("aapcs64", "go"):
            raise ValueError(f"calling convention {abi!r} is none the lifter knows (aapcs64, go)")
        self.go = abi == "go" and bool(settings.get("recompiler", "go_liveness"))
        self.abi_sets = liveness.GO if self.go else liveness.AAPCS64
        # what a return reads for liveness (Go: what it may hand on, every register for the
        # runtime's assembly and for code whose kind is not known)
        self.ret_live = self.abi_sets.ret_live
        if self.go:
            self.ret_live = liveness.ALL if plan.hands_back is None else plan.hands_back
        # recompiler.signal_polls: a backward branch first reads the pending-signal flag
        # (NX_SIGPOLL, defined per function in _wrap)
        self.signal_polls = bool(settings.get("recompiler", "signal_polls"))
        self.comments = comments
        self.body: list[str] = []
        self.addrs = {i.addr for i in plan.insns}
        self.labels: set[int] = set()
        self.resume: list[int] = []
        self.flags_written = False
        self.flag_carries: list[int] = []  # compares whose operands are kept for readers in other blocks (flag_fuse.py)
        self.fused_flags = 0  # the most consumers of a compare that computes their conditions (flag_fuse.py)
        self.flag_writers: set[int] = set()  # instructions that write NZCV (flags_touched)
        self.insn: Insn | None = None
        self.callees: set[int] = set()
        self.internal_errors: list[str] = []
        self.shared: dict[tuple[int, ...], str] = {}  # jump table -> label of its shared dispatch
        self.shared_blocks: list[str] = []
        self.dense_tabs: dict[str, str] = {}  # JT label -> its label array's declaration
        self.dense_gotos: dict[str, str] = {}  # JT label -> the dispatch a BR site repeats
        self.other_cases: dict[str, str] = {}  # JT label -> the switch of its targets not in the array
        self.bad_blocks: set[str] = set()  # JT labels whose complete sites' miss block exists
        self.direct_tabs: dict[tuple, str] = {}  # (JT label, DirectTable) -> its array's name
        # loaded-index sites: (instruction index, the direct path's C, its DirectTable), kept
        # only where the entry's own load is found once the labels are known (_entry_load)
        self.loaded_sites: list[tuple[int, str, DirectTable]] = []
        # liveness at call sites and returns (AAPCS64 trust; trace builds store and reload all,
        # lockstep compares every register at every function entry)
        self.live = (trust_abi or self.go) and not trace and "liveness" not in self.no_opt
        self.call_rets: list[int] = []  # call site k's return address
        self.call_targets: list[int | None] = []  # call site k's lifted callee, else None
        # call site k -> the site whose guarded alternative it is (a BLR tried as a direct call
        # of a target analysis guessed: FunctionPlan.call_guesses), else -1
        self.call_alt: list[int] = []
        # (BR address, target) of the direct tail calls a BR's guessed targets made (jump_guesses)
        self.guessed_tails: set[tuple[int, int]] = set()
        self.facts: interproc.FnLive | None = None  # what placing the call sites' lists needs
        self.falls: dict[int, int] = {}  # address -> the address it falls through to
        self.n_rets = 0
        self.events: set[int] = set()  # instructions that set _c (result.Lifted.overwrites_nxcpu)
        self.shared_targets: dict[str, list[int] | None] = {}  # JT label -> its targets
        self.in_shared = False  # writing a table's shared block (goto)
        self.falls_back: dict[str, bool] = {}  # JT label -> table_falls_back (once all is lifted)
        self.saves: dict[int, int] = {}  # save instruction -> registers (_elided_saves)
        self.mem_regs: list[int] = []  # X19-X28 kept in NxCpu, not in C locals (mem_regs.py)
        # write-through points (interproc.write_through): instruction -> the caller-saved
        # registers it writes, and those some instruction writes on its way out (a branch)
        self.wt_sites: dict[int, int] = {}
        self.wt_unsafe = 0
        self.slots = T.Slots()  # the places interproc.place fills (template.py)
        self.records: list[Lifted] = []  # each instruction's C and effects (result.py)
        self.cur: Lifted | None = None  # the instruction being lifted
        # some exit stores every local (a jump out through a register, a table's miss, a jump
        # to an address outside, a tail call liveness did not number): every register goes back
        self.full_exit = False
        # the instructions on cold paths (record indices), and those F_x may reach: cold.py
        self.cold: set[int] = set()
        self.cold_entries: list[int] = []

    # ---- registers ------------------------------------------------------------------
    def x(self, n: int, sf: int = 1, sp: bool = False) -> str:
        if n == 31:
            if sp:
                return "sp" if sf else "(u32)sp"
            return "0ull" if sf else "0u"  # typed: shifts of the zero register stay defined
        return f"x{n}" if sf else f"(u32)x{n}"

    def setx(self, n: int, expr: str, sf: int = 1, sp: bool = False) -> None:
        if n == 31 and not sp:
            self.out(f"(void)({expr});")
            return
        name = "sp" if n == 31 else f"x{n}"
        self.out(f"{name} = {expr};" if sf else f"{name} = (u32)({expr});")

    def out(self, line: str) -> None:
        self.body.append("  " + line)

    @property
    def pc(self) -> int:
        assert self.insn is not None
        return self.insn.addr

    def cond(self, c: int) -> str:
        """C of condition ``c``: in an instruction's own part a token that ``flag_fuse.apply``
        replaces by the test of the flags' locals, or by ``_cc`` where the compare before it
        computed the condition from its operands."""
        rec = self._here()
        if rec is None:
            return flag_fuse.cond_text(c)
        rec.conds.append(c)
        return flag_fuse.ctok(len(rec.conds) - 1)

    def flag_op(
        self, op: str, size: int, a: str, b: str, std: str, k: int | None = None, ccmp: tuple[str, int] | None = None
    ) -> str:
        """C (a token) of a flag-setting ``op`` ("sub", "add", "and") of ``a`` and ``b``, whose
        C through the flags' macros is ``std``: ``flag_fuse.apply`` keeps that, or computes its
        one consumer's condition from the operands, or drops the flags (``flag_fuse.FlagOp``)."""
        rec = self._here()
        if rec is None:
            return std
        rec.flag_op = flag_fuse.FlagOp(op, size, a, b, std, k, ccmp)
        return flag_fuse.FS

    # ---- control flow ---------------------------------------------------------------
    def flags_touched(self) -> None:
        self.flags_written = True
        if self.insn is not None:
            self.flag_writers.add(self.insn.addr)
        if self.cur is not None:
            self.cur.flags_set = True

    def _here(self) -> Lifted | None:
        """The record an API call adds to: the instruction's own part (not the callee's part
        after its call site, not a table's shared block)."""
        c = self.cur
        return c if c is not None and c.call is None and not self.in_shared else None

    def goto(self, target: int) -> str:
        """C statement that transfers control to ``target`` (jump, tail call, or exit)."""
        if target in self.addrs:
            self.labels.add(target)
            if (c := self._here()) is not None:
                c.succs.append(target)
            if target <= self.pc:  # a loop's back edge
                poll = f"NX_SIGPOLL({target:#x}ull); " if self.signal_polls else ""
                # guest memory is read again (lifted.h) where nothing else in a round of the
                # loop makes clang reload it (loop_edges.py; the emitter keeps its decisions)
                if "_loop_edges" not in self.__dict__:
                    self._loop_edges = loop_edges.LoopEdges(self)
                if self.in_shared or settings.get("recompiler", "loop_edges") == "all":
                    barrier = True
                else:
                    barrier = self._loop_edges.needs_barrier(self.pc, target)
                if barrier:
                    return f"{{ {poll}NX_LOOP_EDGE; goto L_{target:x}; }}"
                return f"{{ {poll}goto L_{target:x}; }}" if poll else f"goto L_{target:x};"
            return f"goto L_{target:x};"
        if target in self.functions:
            self.callees.add(target)
            # a direct tail call stores what its callee reads and what a return here would
            # (a STORE_TAIL slot, numbered by _liveness, filled by interproc.place); in a table's
            # shared block, which liveness does not read, everything
            store = self.slot(T.STORE_TAIL, -1) if self.live and not self.in_shared else "STORE_ALL"
            text = f"{{ {store}; MUSTTAIL return {fname(target)}{ARGS}; }}"
            if (c := self._here()) is not None:
                c.tails.append(target)
                c.tail_texts.append(text)
            if store == "STORE_ALL":
                self.full_exit = True
            return text
        self.full_exit = True
        if (c := self._here()) is not None:
            c.exit_all = True
        return f"{{ STORE_ALL; s->pc = {target:#x}ull; MUSTTAIL return nx_jump{ARGS}; }}"

    def slot(self, kind: str, k: int) -> str:
        """The anchor of a new slot of this function in the C being built (template.py)."""
        return self.slots.anchor(T.Slot(kind, self.plan.entry, k))

    def reg_store(self, bit: int, text: str) -> str:
        """``text``, the C of a 64-bit store of the register ``bit`` (liveness bit) to guest
        memory, noted in the instruction's record: a prologue's save store of a callee-saved
        register may be dropped at placement (``facts._mark_saves``)."""
        if self.cur is not None:
            self.cur.reg_stores.append((bit, text))
        return text

    def jump_out(self) -> str:
        """C of an indirect jump to the unknown target in ``_t`` (BR): the site's inline cache,
        else nx_jump; after a complete table's cases (``FunctionPlan.complete_tables``), which
        cannot miss, a fatal error that reads no register but the target."""
        if self.insn is not None and self.insn.addr in self.plan.complete_tables and not self.in_shared:
            return f"{{ {_TABLE_MISS} nx_table_miss(s, {self.insn.addr:#x}ull, _t); }}"
        if (c := self._here()) is not None:
            c.jump_out = True  # (full_exit unless it is a tail call: facts._liveness)
        else:
            self.full_exit = True
        return JUMP_OUT

    def goto_table(self, label: str) -> str:
        """C of a dispatch through the jump table ``label`` (``shared_table``; ``_jt`` holds the
        target)."""
        if (c := self._here()) is not None:
            c.tables.append(label)
        return f"goto {label};"

    def system_call(self) -> None:
        """The instruction is a system call: its C stores every local, calls nx_svc and
        reloads them (control.h_svc)."""
        if self.cur is not None:
            self.cur.svc = True

    def fp_env(self) -> None:
        """The instruction reads or writes FPSR/FPCR (fp_fpsr.py): its C stores every local
        only to order the FP arithmetic before it."""
        if self.cur is not None:
            self.cur.fp_env = True

    def trap(self, text: str) -> None:
        """A fatal error (an instruction not lifted, BRK/UDF): ``text`` stores every local and
        calls the runtime, which does not come back."""
        if self.cur is not None:
            self.cur.fatal = True
        self.out(text)

    def call(self, target: int | None, target_expr: str | None = None) -> None:
        ret = self.pc + 4
        self.resume.append(ret)
        self.labels.add(ret)
        k = len(self.call_rets)
        self.call_rets.append(ret)
        self.call_targets.append(target if target is not None and target in self.functions else None)
        self.call_alt.append(-1)
        guesses = self._guesses(target)
        store = self.slot(T.STORE_CALL, k) if self.live else "STORE_CALL"
        if guesses:
            # the targets analysis guessed (analysis.call_targets), each a direct call behind a
            # compare with its own site's lists (stores for what that callee reads, its
            # reloads, no pc check where it surely returns), as a BL of it would be; any other
            # value takes the inline cache below with the unknown callee's lists
            self.out(f"{self.slot(T.NOTE_SP, k)}x30 = {ret:#x}ull;")
            for g in guesses:
                j = len(self.call_rets)
                self.call_rets.append(ret)
                self.call_targets.append(g)
                self.call_alt.append(k)
                self.callees.add(g)
                # (the call on a line of its own, as a BL's: inline_leaves copies a small leaf there)
                self.out(f"if (NX_GUESS({target_expr}, {g:#x}ull)) {{ {self.slot(T.NOTE_SP, j)}{self.slot(T.STORE_CALL, j)};")
                self.out(f"_r = {fname(g)}{ARGS};")
                self.out(f"{self.slot(T.RET_CHECK, j)} x0 = _r.x0; {self.slot(T.RELOAD_CALL, j)}; }} else")
            self.out(f"{{ {store};")
        else:
            self.out(f"{self.slot(T.NOTE_SP, k) if self.live else ''}x30 = {ret:#x}ull; {store};")
        if (c := self._here()) is not None:
            c.call, c.call_marker = k, store
        if target is not None and target in self.functions:
            self.callees.add(target)
            self.out(f"_r = {fname(target)}{ARGS};")
        else:
            # the site's inline cache (lifted.h NX_IC), else the runtime's lookup.  s->pc is
            # the runtime's input (nx_ic_fill, nx_call_ind): a hit enters a lifted function's
            # own entry, which does not read it, so only a miss stores it (one store a call)
            t = target_expr if target_expr else f"{target:#x}ull"
            self.out(
                f"{{ static const NxEntry *_ic = &nx_ic_empty_call; const NxEntry *_e = NX_IC(&_ic, {t}); "
                f"if (_e) _r = _e->fn{ARGS}; else {{ s->pc = {t}; if (nx_ic_fill) s = nx_ic_fill(s, &_ic); "
                f"_r = nx_call_ind{ARGS}; }} }}"
            )
        lp = self.plan.landing_pads.get(self.pc)
        if lp is not None and lp in self.addrs:
            # a C++ throw out of the callee that this frame catches (or cleans up after): the
            # unwinder's jump to the landing pad comes up the host stack as a return to
            # somewhere else; in this frame (its SP is the guest SP the unwinder installed) it
            # goes on at the pad, with X0/X1 (exception, selector) and the other caller-saved
            # registers from NxCpu and the callee-saved ones as this frame holds them: the
            # values at the call, which the unwinder restores from the frames' save slots (those
            # a lifted callee may not have written: recompiler.elide_saves)
            # The pad is no successor of the call for liveness (the frame offsets follow the
            # edge: frame_facts.py): its caller-saved registers come from NxCpu and its
            # callee-saved ones from the locals, which the C keeps across the call whatever
            # liveness says.  As a successor (tried in session 33), the pad's code made the
            # lists longer: a cleanup's _Unwind_Resume, whose summary reads every register it
            # captures, kept X19-X28 live across the calls of its range and their saves in the
            # frame, and a pad's reads of X1 and X8 stored them at calls (jsontestrunner: 35
            # of 46 shard files changed, each change a store or a reload more)
            self.labels.add(lp)
            self.out(
                f"if (UNLIKELY(_r.pc == {lp:#x}ull) && s->sp == sp) {{ x0 = _r.x0; x30 = _r.pc; RELOAD_LP; goto L_{lp:x}; }}"
            )
        # a return to somewhere else goes up as it came (nx_run stores it); X0 is the result.
        # (A RET_CHECK slot: no check where the callee surely comes back here, interproc.place)
        self.out(self.slot(T.RET_CHECK, k) if self.live else ret_check(ret))
        self.out(f"x0 = _r.x0; {self.slot(T.RELOAD_CALL, k) if self.live else 'RELOAD_CALL'};")
        if guesses:
            self.out("}")

    def jump_guesses(self, addr: int) -> tuple[int, ...]:
        """The lifted functions analysis guessed the ``BR`` at ``addr`` jumps to
        (``FunctionPlan.call_guesses``), for direct tail calls tried first; none where its C
        is the generic jump anyway (no liveness, a table's shared block, Go code,
        ``recompiler.no_opt=devirt``)."""
        if not self.live or self.go or self.in_shared or "devirt" in self.no_opt:
            return ()
        return tuple(g for g in self.plan.call_guesses.get(addr, ()) if g in self.functions)

    def _guesses(self, target: int | None) -> tuple[int, ...]:
        """The lifted functions analysis guessed the ``BLR`` here may call
        (``FunctionPlan.call_guesses``), where its site can try them as direct calls: a
        whole-program build with liveness (each guess's lists placed from its summary), no C++
        landing pad at the call, AAPCS64 code; none with ``recompiler.no_opt=devirt``."""
        if target is not None or not self.live or self.go or "devirt" in self.no_opt:
            return ()
        if self.pc in self.plan.landing_pads or self.in_shared:
            return ()
        return tuple(g for g in self.plan.call_guesses.get(self.pc, ()) if g in self.functions)

    def leave(self, target_expr: str) -> None:
        """RET: stores what a caller may read after it (a STORE_RET slot, see _wrap)."""
        store = self.slot(T.STORE_RET, self.n_rets) if self.live else "STORE_ALL"
        self.out(f"{store}; return (NxRet){{ {target_expr}, x0 }};")
        if (c := self._here()) is not None:
            c.ret, c.ret_marker = self.n_rets, store
        self.n_rets += 1

    # ---- emission -------------------------------------------------------------------
    def emit(self, handlers: dict, defer: bool = False) -> T.CText | str:
        """The function's C.  With ``defer`` (whole-program builds) the call sites' and returns'
        store and reload lists stay slots (a ``CText``) for ``interproc.place`` to fill once every
        function's summary is known (``self.facts``); otherwise they assume unknown callees."""
        body_start = len(self.body)
        self.saves = self._elided_saves() if self.live else {}
        # X19-X28 that no call-free cycle uses live in NxCpu (mem_regs.py); only where the
        # saves are tracked (their saves are then kept: facts._fn_live)
        self.mem_regs = (
            mem_regs.cold_saved(self.plan.insns, self.addrs, self.plan.jump_tables, self.plan.direct_tables)
            if self.live and self.elide_saves and "mem_regs" not in self.no_opt and not self.plan.landing_pads
            else []
        )
        if self.mem_regs:  # one the function writes must be one it saves (and restores)
            owned = self._owned()
            written = 0
            for i in self.plan.insns:
                written |= effects.declare(i).writes
            self.mem_regs = [r for r in self.mem_regs if owned >> r & 1 or not written >> r & 1]
        prev_falls = False
        prev_addr = None
        for insn in self.plan.insns:
            if prev_falls and prev_addr is not None and insn.addr != prev_addr + 4:
                self._fall_out(prev_addr)
            self.insn = insn
            self.cur = Lifted(insn.addr, len(self.body))
            self.records.append(self.cur)
            if self.comments:
                self.out(f"/* {insn.addr:x}: {disasm(insn.word, insn.addr)} */")
            h = handlers.get(insn.name)
            falls = True
            try:
                if h is None:
                    raise LiftError("no handler")
                r = h(self, insn)
                falls = r is not False
            except LiftError:
                self.trap(f"STORE_ALL; nx_unimplemented(s, {insn.addr:#x}ull, {insn.word:#x}u); NX_BACK;")
                falls = False
            except Exception as e:  # a lifter bug: keep building, report it in the stats
                self.internal_errors.append(f"{insn.addr:#x} {insn.word:#010x} {insn.name}: {e!r}")
                self.trap(f"STORE_ALL; nx_unimplemented(s, {insn.addr:#x}ull, {insn.word:#x}u); NX_BACK;")
                falls = False
            self.cur.falls = falls
            self.declare(insn)
            prev_falls, prev_addr = falls, insn.addr
            if insn.addr in self.saves:
                self._mark_saves(self.cur.start, self.saves[insn.addr])
            if self.live:
                self._mark_write_through(self.cur.start, falls)
            if falls:
                self.falls[insn.addr] = insn.addr + 4
                if self.live and self.cur.overwrites_nxcpu:
                    self.out("_c = 1;")
                    self.events.add(insn.addr)
        if prev_falls and prev_addr is not None:
            self._fall_out(prev_addr)
        for j, rec in enumerate(self.records):
            rec.stop = self.records[j + 1].start if j + 1 < len(self.records) else len(self.body)
        self.cur = None
        self.falls_back = {label: table_falls_back(self, label) for label in self.shared_targets}
        if any(self.falls_back.values()):
            self.full_exit = True
        if self.live:
            self._liveness()
        # paths that end only in noreturn calls or traps, out of F_x into its twin (cold.py);
        # their entries are labels before flag_fuse reads the labels (NZCV are dead there)
        self.cold = cold.cold_records(self) if self._splits_cold(defer) else set()
        self.cold_entries = cold.entries(self, self.cold)
        for j in self.cold_entries:
            self.labels.add(self.records[j].addr)
        if self.facts is not None and self.cold_entries:
            self.facts.cold_exits = list(self.cold_entries)
            pads = set(self.plan.landing_pads.values())
            self.facts.cold_pads = {j for j in self.cold_entries if self.records[j].addr in pads}
            sites = {self.records[j].call for j in self.cold if self.records[j].call is not None}
            self.facts.cold_sites = sites | {j for j, k in enumerate(self.call_alt) if k in sites}
            self.facts.cold_addrs = {self.records[j].addr for j in self.cold}
        self.fused_flags = flag_fuse.apply(self)
        for k, text, d in self.loaded_sites:  # keep a loaded-index path only where it holds
            base = self._entry_load(k, d)
            rec = self.records[k]
            for j in range(rec.start, rec.stop):
                self.body[j] = self.body[j].replace(text, "" if base is None else text.replace("_TBASE_", self.x(base)))
        for rec in self.records:  # each BR site its own indirect jump (see shared_table)
            for label in rec.tables:
                if label in self.dense_gotos:
                    go = self.dense_gotos[label]
                    if rec.addr in self.plan.complete_tables:  # its miss: the targets not in the array, else fatal
                        go = go.replace(f"{label}_miss", f"{label}_bad")
                        if label not in self.bad_blocks:
                            self.bad_blocks.add(label)
                            self.shared_blocks.append(
                                f" {label}_bad:{self.other_cases.get(label, '')} {{ {_TABLE_MISS} nx_table_miss(s, 0, _jt); }}"
                            )
                    for j in range(rec.start, rec.stop):
                        self.body[j] = self.body[j].replace(f"goto {label};", go)
        # labels go before the instruction lines that start at their address
        label_at = {r.start: r.addr for r in self.records if r.addr in self.labels or r.addr == self.plan.entry}
        out_lines: list[str] = []
        for j in range(body_start, len(self.body)):
            if j in label_at:
                out_lines.append(f" L_{label_at[j]:x}:;")
            out_lines.append(self.body[j])
        # F_x's body without the cold paths (each entry a cold exit), the twin's with them
        hot = self._framed(cold.hot_lines(self, label_at)) if self.cold_entries else None
        body = self._framed(out_lines)
        self.whole_program = defer
        text = self.slots.template(self._wrap(body, hot))
        if not defer:
            return interproc.place(text, [self.facts] if self.facts is not None else [], {})
        return text

    def _framed(self, lines: list[str]) -> str:
        """The body's C from its lines: the tables' blocks and the flags' locals around them."""
        if self.shared_blocks:  # C allows a goto past this declaration (no initialiser runs)
            lines = ["  u64 _jt;", *self.dense_tabs.values(), *lines, *self.shared_blocks]
        if self.fused_flags:  # (the condition a fused compare computed: flag_fuse.py)
            lines.insert(0, f"  u8 {', '.join(flag_fuse.ccvar(n) for n in range(self.fused_flags))};")
        if self.flag_carries:  # (a compare's operands, for its readers in other blocks: flag_fuse.py)
            lines.insert(0, f"  u64 {', '.join(flag_fuse.carry_vars(m) for m in range(len(self.flag_carries)))};")
        return "\n".join(lines)

    def _splits_cold(self, defer: bool) -> bool:
        """Whether cold paths go to the twin (cold.py): a whole-program build of AAPCS64 code with
        liveness (the cold exits' lists come from the callees' summaries) and twins; not a
        function that dispatches through a jump table (an interpreter's loop, whose twin is not
        cold code: QuickJS's JS_CallInternal, split at its abort paths, ran 923.1 -> 970.8 M
        instructions, clang's host-stack accesses 98.1 -> 137.3 M)."""
        if not (defer and self.live and self.trust_abi and not self.go and not self.trace):
            return False
        if self.plan.jump_tables or self.plan.direct_tables:
            return False
        return not {"twins", "cold"} & self.no_opt

    def _fall_out(self, addr: int) -> None:
        """The fall from ``addr`` to code outside this function: a jump there, in the text of
        the instruction at ``addr``, which liveness reads (a direct tail call reads its callee's
        summary) instead of taking the fall as reading everything.  The fall after a call stays
        (the callee's part of the text is not read: liveness takes it as a noreturn callee's)."""
        self.out(self.goto(addr + 4))
        if not (self.live and self.cur.call is not None):
            self.falls.pop(addr, None)


def table_falls_back(em: "FunctionEmitter", label: str) -> bool:
    """Whether the general fallback of ``em``'s table ``label`` (its shared block's
    ``STORE_INDIRECT`` and ``nx_jump``: a target in no slot of its label array) may run.  It may
    not where the table has a label array, every BR site of it is complete
    (``FunctionPlan.complete_tables``: each site's miss is ``nx_table_miss``, a fatal error that
    reads no register) and no direct table entry of it leads out of the function (a ``JD_``
    entry jumps to the shared block).  Such a table is then no exit of the function
    (``facts._chunk``): as one, it made the function opaque, so that every return stored
    X19-X29 back and every save of them stayed (QuickJS's JS_CallInternal, whose opcode
    dispatch is complete, saved, restored and stored back ten registers at each call)."""
    if label not in em.dense_gotos:
        return True
    for rec in em.records:
        if label in rec.tables and rec.addr not in em.plan.complete_tables:
            return True
    for (lab, d), _name in em.direct_tabs.items():
        if lab == label and any(a is not None and a not in em.addrs for a in d.targets):
            return True
    return False
