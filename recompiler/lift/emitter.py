"""Emit one C function for one guest function.

Registers the function uses live in C locals (``x0``..``x30``, ``sp``, ``v0``..``v31`` as
``NxVec``, flags ``N Z C V``); they are loaded from ``NxCpu`` at entry and written back before
calls, SVCs and exits.  Handlers name a vector register ``s->v[N]``; the emitter renames it to
its local, so scalar FP stays in host registers instead of going through memory that every
guest store may alias.  With ``trust_abi`` (AAPCS64) each call site gets its own lists from a
liveness pass over the function's C (``recompiler/lift/liveness.py``) and the callee's register
summary (``recompiler/lift/interproc.py``, which also writes the lists: the emitter leaves
``@@SC/RC/SR:<entry>:<k>@@`` placeholders and the facts in ``self.facts``): it stores what the
callee may read and what is live after it that the callee may change, and reloads the latter;
a return stores the caller-saved registers it changed (X19-X29 and SP only where its own call
sites overwrote their ``NxCpu`` slots).  ``trust_abi=False`` stores every written register and reloads every one it
uses; trace builds store and reload as without liveness (lockstep compares every register at
every function entry) and keep the flags.  Otherwise the flags are neither written back before
a call nor reloaded after it (AAPCS64: they are no argument and not preserved).  A computed
goto's table becomes a dense array of host label addresses (``shared_table``); every other
indirect branch or call keeps an inline cache of its first target (lifted.h ``NX_IC``).  See
docs/ARCHITECTURE.md, "Returns to somewhere else", for how a call site handles a return to an
unexpected address.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from nxrecomp import settings
from recompiler.lift import effects, interproc, liveness
from recompiler.decode import Insn, disasm
from recompiler.lift.result import Lifted

CALLER_SAVED = set(range(19)) | {30}
# A lifted function's C signature (cpu_host/runtime/nxrt.h): guest X0, X1, the link register and
# SP come in as host arguments, the next pc and X0 go out as an NxRet.  ARGS is what a call or
# tail call passes.  SP as an argument: a frame's stores then have their addresses at once, not
# after a load of s->sp that waits on the caller's store of it.
SIG = "(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp)"
ARGS = "(s, x0, x1, x30, sp)"
ARG_REGS = (0, 1, 30)
# control.py's BR to a register outside any table (``FunctionEmitter.jump_out``): the site's inline
# cache, else nx_jump.  An instruction's effects are read without it (the jump's reads are its leaves)
JUMP_OUT = ("STORE_INDIRECT; s->pc = _t; { static const NxEntry *_ic = &nx_ic_empty_jump; "
            f"const NxEntry *_e = NX_IC(&_ic, _t); if (_e) MUSTTAIL return _e->fn{ARGS}; "
            f"if (nx_ic_fill) s = nx_ic_fill(s, &_ic); }} MUSTTAIL return nx_jump{ARGS};")
# X0 after a call is the callee's NxRet.x0, X30 the return address it came back to: the locals
# hold them, NxCpu may not, so a call never reloads them
_NOT_RELOADED = (0, 30)
_DENSE_SLOTS = 1 << 14   # most slots (guest words) of a computed goto's label array (128 KiB)
_REG_RE = re.compile(r"\bx([0-9]|[12][0-9]|30)\b")
_SP_RE = re.compile(r"\bsp\b")
_ASSIGN_RE = re.compile(r"\b(x(?:[0-9]|[12][0-9]|30)|sp) (?:=|\+=|-=|\|=|&=|\^=)(?!=)")
# vector registers: handlers write ``s->v[N]`` (N a literal); the emitter renames them to locals
_SV_RE = re.compile(r"s->v\[([0-9]|[12][0-9]|3[01])\]")
# A scalar write of a V register's low lane that zeroes the rest, as a vector: through the
# union's u128 clang keeps the zero upper half in a general register of its own (a V local live
# across a loop took two general registers, or a spill store of 0 at every FP instruction).
_VW_FP = re.compile(r"\b(v\d+)\.q = 0; \1\.(fd|f)\[0\] = ([^;]+);")
# (every ``.q = (u128)X`` the lifter writes widens an X of at most 64 bits)
_VW_INT = re.compile(r"\b(v\d+)\.q = (?:\(u128\)(?!L128)([^;]+)|(0));")
_VR_LOW = re.compile(r"\(u64\)(v\d+)\.q\b")
# A Q register's load and store (memory.py: LV128/SV128) as a vector access of the local: the
# union returned or passed by value travels as a u128, so clang gave the local an integer type
# and moved each Q register in two general registers (zstd's match copy: 8-byte loads of what
# two 8-byte stores had just written, ~18 % of its decompression stalled on them)
_VQ_LOAD = re.compile(r"\b(v\d+) = LV128\(")
_VQ_STORE = re.compile(r"\bSV128\(([^;]*?), (v\d+)\);")

# a 64-bit store of a general register or of a D register's bits (memory.py's forms)
_SAVE_STORE_RE = re.compile(r"S64\([^;@]*?, (?:\(u64\)(?P<x>x\d+)|NX_SPLIT\((?P<x2>x\d+)\)|\(u64\)(?P<v>s->v\[\d+\])\.q)\);")
_V_RE = re.compile(r"\bv([0-9]|[12][0-9]|3[01])\b")
# a write to a vector local: an assignment to it or to one of its lanes, or its address taken
_V_ASSIGN_RE = re.compile(r"\bv([0-9]|[12][0-9]|3[01])(?:\.\w+(?:\[[^\]]*\])?)?\s*(?:=|\+=|-=|\|=|&=|\^=)(?!=)"
                          r"|&v([0-9]|[12][0-9]|3[01])\b")


def _vector_writes(body: str) -> str:
    """``body`` with its scalar low-lane writes of V locals (``_VW_FP``, ``_VW_INT``), reads
    of their low 64 bits (``_VR_LOW``) and Q loads and stores (``_VQ_LOAD``, ``_VQ_STORE``) as
    vector-typed accesses of the ``NxVec`` local."""
    body = _VW_FP.sub(lambda m: f"NXV(NxV2f64, {m[1]}) = (NxV2f64){{ {m[3]}, 0.0 }};" if m[2] == "fd"
                      else f"NXV(NxV4f32, {m[1]}) = (NxV4f32){{ {m[3]}, 0.0f, 0.0f, 0.0f }};", body)
    body = _VW_INT.sub(lambda m: f"NXV(NxV2u64, {m[1]}) = (NxV2u64){{ (u64)({m[2] or m[3]}), 0 }};", body)
    body = _VQ_LOAD.sub(lambda m: f"NXV(NxV2u64, {m[1]}) = LQ128(", body)
    body = _VQ_STORE.sub(lambda m: f"SQ128({m[1]}, NXV(NxV2u64, {m[2]}));", body)
    return _VR_LOW.sub(lambda m: f"(NXV(NxV2u64, {m[1]})[0])", body)


def fname(addr: int) -> str:
    return f"F_{addr:x}"


def rname(addr: int) -> str:
    """The resume twin of ``fname(addr)`` (see FunctionEmitter.finish)."""
    return f"R_{addr:x}"


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


NO_OPT_NAMES = {"liveness", "flags", "twins", "inline"}


@dataclass(frozen=True)
class DirectTable:
    """A computed goto whose table analysis read from memory the program cannot write
    (``analyse.Analyser._direct``): the target of the BR is ``targets[x[reg] & mask]`` while
    each ``guards`` register holds its value, so the lifted BR jumps through a host label array
    indexed by the masked register, without the guest's load and the guest-address lookup."""
    reg: int
    mask: int
    guards: tuple[tuple[int, int], ...]   # (register, value) a table base was assumed to hold
    # the guest's target of each index 0..mask, None where that is not code: a target
    # outside the function takes the general dispatch, a None a fatal error
    targets: tuple[int | None, ...]
    expr: tuple = ()                      # the target as analysis evaluated it (for those paths)


@dataclass
class FunctionPlan:
    """What analysis knows of one function: its body and the addresses it needs."""
    entry: int
    insns: list[Insn]                          # body in address order
    tail_targets: set[int] = field(default_factory=set)
    jump_tables: dict[int, list[int]] = field(default_factory=dict)  # BR address -> targets
    direct_tables: dict[int, DirectTable] = field(default_factory=dict)   # BR address -> its index
    # BR address -> the functions an IFUNC's PLT stub may branch to (analyse.ifunc_candidates)
    ifunc_targets: dict[int, list[int]] = field(default_factory=dict)
    noreturn_calls: set[int] = field(default_factory=set)            # BLs of analyse.noreturn_functions
    resume_points: list[int] = field(default_factory=list)           # filled by the emitter
    resume_twin: bool = False                  # filled by the emitter: resume points enter rname(entry)


class FunctionEmitter:
    def __init__(self, plan: FunctionPlan, functions: set[int], trust_abi: bool = True,
                 comments: bool = False, trace: bool = False, ret_flags: bool = False,
                 elide_saves: bool = True) -> None:
        self.trace = trace
        self.no_opt = no_opt(plan.entry)
        # a return writes the flags back too: AAPCS64 does not, but a differential test that
        # reads the architectural state after a RET does (tests/recompiler/unicorn_harness.py)
        self.ret_flags = ret_flags
        self.plan = plan
        self.functions = functions          # every function entry of the program
        self.trust_abi = trust_abi
        self.elide_saves = elide_saves and trust_abi
        # recompiler.signal_polls: a backward branch first reads the pending-signal flag
        # (NX_SIGPOLL, defined per function in _wrap)
        self.signal_polls = bool(settings.get("recompiler", "signal_polls"))
        self.comments = comments
        self.body: list[str] = []
        self.addrs = {i.addr for i in plan.insns}
        self.labels: set[int] = set()
        self.resume: list[int] = []
        self.flags_written = False
        self.flag_writers: set[int] = set()          # instructions that write NZCV (flags_touched)
        self.insn: Insn | None = None
        self.callees: set[int] = set()
        self.internal_errors: list[str] = []
        self.shared: dict[tuple[int, ...], str] = {}   # jump table -> label of its shared dispatch
        self.shared_blocks: list[str] = []
        self.dense_tabs: dict[str, str] = {}          # JT label -> its label array's declaration
        self.dense_gotos: dict[str, str] = {}         # JT label -> the dispatch a BR site repeats
        self.direct_tabs: dict[tuple, str] = {}       # (JT label, DirectTable) -> its array's name
        # liveness at call sites and returns (AAPCS64 trust; trace builds store and reload all,
        # lockstep compares every register at every function entry)
        self.live = trust_abi and not trace and "liveness" not in self.no_opt
        self.call_rets: list[int] = []               # call site k's return address
        self.call_targets: list[int | None] = []     # call site k's lifted callee, else None
        self.facts: interproc.FnLive | None = None   # what placing the call sites' lists needs
        self.falls: dict[int, int] = {}              # address -> the address it falls through to
        self.n_rets = 0
        self.events: set[int] = set()                # instructions that set _c (result.Lifted.overwrites_nxcpu)
        self.shared_targets: dict[str, list[int] | None] = {}   # JT label -> its targets
        self.in_shared = False                       # writing a table's shared block (goto)
        self.saves: dict[int, int] = {}              # save instruction -> registers (_elided_saves)
        # write-through points (interproc.write_through): instruction -> the caller-saved
        # registers it writes, and those some instruction writes on its way out (a branch)
        self.wt_sites: dict[int, int] = {}
        self.wt_unsafe = 0
        self.records: list[Lifted] = []              # each instruction's C and effects (result.py)
        self.cur: Lifted | None = None               # the instruction being lifted
        # some exit stores every local (a jump out through a register, a table's miss, a jump
        # to an address outside, a tail call liveness did not number): every register goes back
        self.full_exit = False

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
        base = ["Z", "C", "N", "V", "(C && !Z)", "(N == V)", "(!Z && N == V)", "1"][c >> 1]
        if c >> 1 == 7:
            return "1"
        return f"!{base}" if c & 1 else base

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
            if target <= self.pc:      # a loop's back edge: guest memory is read again (lifted.h)
                poll = f"NX_SIGPOLL({target:#x}ull); " if self.signal_polls else ""
                return f"{{ {poll}NX_LOOP_EDGE; goto L_{target:x}; }}"
            return f"goto L_{target:x};"
        if target in self.functions:
            self.callees.add(target)
            # a direct tail call stores what its callee reads and what a return here would
            # (@@ST@@, numbered by _liveness, filled by interproc.place); in a table's shared
            # block, which liveness does not read, everything
            store = "@@ST@@" if self.live and not self.in_shared else "STORE_ALL"
            text = f"{{ {store}; MUSTTAIL return {fname(target)}{ARGS}; }}"
            if (c := self._here()) is not None:
                c.tails.append(target)
                c.tail_texts.append(text)
            if store == "STORE_ALL":
                self.full_exit = True
            return text
        self.full_exit = True
        return f"{{ STORE_ALL; s->pc = {target:#x}ull; MUSTTAIL return nx_jump{ARGS}; }}"

    def jump_out(self) -> str:
        """C of an indirect jump to the unknown target in ``_t`` (BR): the site's inline cache,
        else nx_jump."""
        if (c := self._here()) is not None:
            c.jump_out = True
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
        self.out(f"{f'@@SJ{k}@@' if self.live else ''}x30 = {ret:#x}ull; {f'@@SC{k}@@' if self.live else 'STORE_CALL'};")
        if (c := self._here()) is not None:
            c.call, c.call_marker = k, f"@@SC{k}@@" if self.live else "STORE_CALL"
        if target is not None and target in self.functions:
            self.callees.add(target)
            self.out(f"_r = {fname(target)}{ARGS};")
        else:
            # the site's inline cache (lifted.h NX_IC), else the runtime's lookup
            self.out(f"s->pc = {target_expr if target_expr else f'{target:#x}ull'}; "
                     "{ static const NxEntry *_ic = &nx_ic_empty_call; const NxEntry *_e = NX_IC(&_ic, s->pc); "
                     f"if (_e) _r = _e->fn{ARGS}; else {{ if (nx_ic_fill) s = nx_ic_fill(s, &_ic); _r = nx_call_ind{ARGS}; }} }}")
        # a return to somewhere else goes up as it came (nx_run stores it); X0 is the result
        self.out(f"if (UNLIKELY(_r.pc != {ret:#x}ull)) NX_CATCH;")
        self.out(f"x0 = _r.x0; {f'@@RC{k}@@' if self.live else 'RELOAD_CALL'};")

    def leave(self, target_expr: str) -> None:
        """RET: stores what a caller may read after it (``@@SR@@``, see _wrap)."""
        self.out(f"{f'@@SR{self.n_rets}@@' if self.live else 'STORE_ALL'}; return (NxRet){{ {target_expr}, x0 }};")
        if (c := self._here()) is not None:
            c.ret = self.n_rets
        self.n_rets += 1

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
            self.shared_targets[label] = [a for a in targets if a in self.addrs] \
                if all(a in self.addrs for a in targets) else None
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
            lines.append(f"  {{ STORE_INDIRECT; s->pc = _jt; MUSTTAIL return nx_jump{ARGS}; }}")
            self.full_exit = True
            if not lines[0].startswith(f" {label}:"):
                lines[0] = f" {label}:" + lines[0][1:]
            self.shared_blocks.append("\n".join(lines))
        return self.shared[key]

    def direct_goto(self, label: str, d: DirectTable) -> str:
        """The C of a BR through ``d``: where its guards hold, one indirect jump through a
        label array indexed by the masked register (the guest's load of the target and the
        lookup of that address are left to the miss path, ``label``, which the array's empty
        entries also reach); ``_jt`` holds the guest's target for that path."""
        key = (label, d)
        if key not in self.direct_tabs:
            n = len(self.direct_tabs)
            name = f"_dtab{n}"
            self.direct_tabs[key] = name
            # an entry outside the function: the guest's own target, computed again from the
            # registers the array was indexed with (they hold the same values there), then the
            # general path (which stores every register: they all stay live at each dispatch);
            # an entry that is not code: a fatal error, which keeps nothing live
            inits = ", ".join(f"[{k}] = &&L_{a:x}" if a in self.addrs else
                              f"[{k}] = &&JF_{n}" if a is None else f"[{k}] = &&JD_{n}"
                              for k, a in enumerate(d.targets))
            for a in d.targets:
                if a in self.addrs:
                    self.labels.add(a)
            self.dense_tabs[name] = f"  static void *const {name}[{d.mask + 1}] = {{ {inits} }};"
            if any(a is not None and a not in self.addrs for a in d.targets):
                self.shared_blocks.append(f" JD_{n}: _jt = {self._expr_c(d.expr)}; goto {label};")
            if None in d.targets:
                self.shared_blocks.append(f" JF_{n}: nx_bad_table_entry(s, {self.x(d.reg)} & {d.mask:#x}ull, "
                                          f"{self._expr_c(d.expr)});")
        name = self.direct_tabs[key]
        cond = " && ".join(f"{self.x(r)} == {v:#x}ull" for r, v in d.guards) or "1"
        return f"if (LIKELY({cond})) goto *{name}[{self.x(d.reg)} & {d.mask:#x}ull]; "

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

    # ---- emission -------------------------------------------------------------------
    def emit(self, handlers: dict, defer: bool = False) -> str:
        """The function's C.  With ``defer`` (whole-program builds) the call sites' and returns'
        store and reload lists stay placeholders for ``interproc.place`` to fill once every
        function's summary is known (``self.facts``); otherwise they assume unknown callees."""
        body_start = len(self.body)
        self.saves = self._elided_saves() if self.live else {}
        prev_falls = False
        prev_addr = None
        chunks: list[tuple[int, int]] = []
        for insn in self.plan.insns:
            if prev_falls and prev_addr is not None and insn.addr != prev_addr + 4:
                self._fall_out(prev_addr, chunks)
            self.insn = insn
            chunks.append((insn.addr, len(self.body)))
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
            prev_falls, prev_addr = falls, insn.addr
            if insn.addr in self.saves:
                self._mark_saves(chunks[-1][1], self.saves[insn.addr])
            if self.live:
                self._mark_write_through(chunks[-1][1], falls)
            if falls:
                self.falls[insn.addr] = insn.addr + 4
                if self.live and self.cur.overwrites_nxcpu:
                    self.out("_c = 1;")
                    self.events.add(insn.addr)
        if prev_falls and prev_addr is not None:
            self._fall_out(prev_addr, chunks)
        for j, rec in enumerate(self.records):
            rec.stop = self.records[j + 1].start if j + 1 < len(self.records) else len(self.body)
        self.cur = None
        if self.live:
            self._liveness()
        # labels go before the instruction lines that start at their address
        lines = self.body[body_start:]
        starts = dict(chunks)
        out_lines: list[str] = []
        idx_to_label = {v: k for k, v in starts.items() if k in self.labels or k == self.plan.entry}
        for i, line in enumerate(lines):
            if i + body_start in idx_to_label:
                out_lines.append(f" L_{idx_to_label[i + body_start]:x}:;")
            out_lines.append(line)
        if self.dense_gotos:     # each BR site its own indirect jump (see shared_table)
            site = re.compile(r"\bgoto (JT_\d+);")
            out_lines = [site.sub(lambda m: self.dense_gotos.get(m.group(1), m.group(0)), line)
                         if "goto JT_" in line else line for line in out_lines]
        if self.shared_blocks:   # C allows a goto past this declaration (no initialiser runs)
            out_lines = ["  u64 _jt;", *self.dense_tabs.values(), *out_lines, *self.shared_blocks]
        body = "\n".join(out_lines)
        text = self._wrap(body)
        if self.facts is not None and not defer:
            text = interproc.place(text, [self.facts], {})
        return text

    def _number_tails(self, start: int, stop: int, first: int, count: int) -> None:
        """Number the first ``count`` direct tail calls' store placeholders in body lines
        [start, stop) from ``first``, in the order liveness met them (``FnLive.tail_target``);
        one it did not read (after a call in the same instruction: the fall past a noreturn
        callee) stores everything."""
        k = first
        for j in range(start, stop):
            while "@@ST@@" in self.body[j]:
                tag = f"@@ST{k}@@" if k < first + count else "STORE_ALL"
                self.full_exit |= tag == "STORE_ALL"
                self.body[j] = self.body[j].replace("@@ST@@", tag, 1)
                k += 1

    def _mark_saves(self, start: int, mask: int) -> None:
        """Each store of a saved callee-saved register in the lines from ``start`` (one save
        instruction) between ``@@SV:entry:bit@@`` and ``@@ES@@``: ``interproc.place`` drops it
        where nothing reads the slot back (``FnLive.save_drop``) and no return hands the
        register back, so the store and the load of the caller's stale ``NxCpu`` value feeding it
        go away (``recompiler.elide_saves``: the caller keeps its value in its own local)."""
        def wrap(m: re.Match) -> str:
            reg = m.group("x") or m.group("x2") or m.group("v")
            bit = liveness.xbit(int(reg[1:])) if reg.startswith("x") else \
                liveness.vbit(int(re.search(r"\d+", reg).group()))
            if not bit & mask:
                return m.group(0)
            return f"@@SV:{self.plan.entry:x}:{bit.bit_length() - 1}@@{m.group(0)}@@ES@@"
        for j in range(start, len(self.body)):
            self.body[j] = _SAVE_STORE_RE.sub(wrap, self.body[j])

    def _mark_write_through(self, start: int, falls: bool) -> None:
        """A placeholder after the instruction whose lines begin at ``start`` where it writes
        caller-saved registers (``@@WT:entry:addr@@``): ``interproc.place`` stores there those of
        them the function keeps current in ``NxCpu`` (``interproc.write_through``), whose call
        sites then store nothing of them.  Only after straight-line code: a register written on
        the way out of an instruction that branches is never written through."""
        w = effects.writes(effects.SV_RE.sub(r"v\1", "\n".join(self.body[start:]))) & liveness.WT_CANDIDATES
        if not w:
            return
        c = self.cur
        if not falls or c.succs or c.tails or c.tables or c.jump_out or c.call is not None \
                or c.ret is not None or c.fatal or c.svc:
            self.wt_unsafe |= w
            return
        self.wt_sites[self.insn.addr] = w
        # on the instruction's last line: inline_leaves counts a leaf's lines
        self.body[-1] += f" @@WT:{self.plan.entry:x}:{self.insn.addr:x}@@"

    def _fall_out(self, addr: int, chunks: list[tuple[int, int]]) -> None:
        """The fall from ``addr`` to code outside this function: a jump there, in the text of
        the instruction at ``addr``, which liveness reads (a direct tail call reads its callee's
        summary) instead of taking the fall as reading everything.  The fall after a call stays
        (the callee's part of the text is not read: liveness takes it as a noreturn callee's)."""
        start = chunks[-1][1]
        self.out(self.goto(addr + 4))
        if not any("@@SC" in line for line in self.body[start:]):
            self.falls.pop(addr, None)

    def _liveness(self) -> None:
        """What placing the call sites' and returns' lists needs (``self.facts``), from each
        instruction's record (``self.records``): live registers after each call site, the
        registers live at the entry if direct callees read nothing, and those not surely
        written before each call."""
        L = liveness
        cs: list[liveness.Chunk] = []
        ret_of: dict[int, int] = {}
        tails: list[tuple[int, int]] = []     # (chunk address, lifted callee) of direct tail calls
        base_leaves: list[int] = []
        # a call through a register is not opaque (interproc.FnLive.calls_unknown): its site
        # stores what an unknown callee reads, its returns what its own call sites overwrote
        opaque = False
        # where an indirect jump may land inside this function besides its tables: a false
        # entry (a label that analysis also took for a function).  A resume point reached so
        # is a return to somewhere else, which reads what a return hands on (EXIT_USES, in
        # every indirect jump's ``leaves``).
        inner = sorted(a for a in self.addrs if a != self.plan.entry and a in self.functions)
        saves = self.saves
        lr_jumps = {i.addr for i in self.plan.insns if i.name == "BR" and i.f["Rn"] == 30}
        flag_reads: set[int] = set()    # chunks that may read NZCV (_flags_at_entry)
        for rec in self.records:
            addr = rec.addr
            effects.scan(rec, effects.own_text(rec, self.body[rec.start:rec.stop], JUMP_OUT))
            k = rec.call
            if rec.ret is not None:
                ret_of[addr] = rec.ret
            indirect = rec.jump_out
            # ``leaves``: what leaving here reads, for the liveness of this function's own call
            # sites; ``summary_leaves``: the same without what a return or a direct tail call
            # hands on (their callers reload only what we may write; a tail callee's reads come
            # from its summary, ``tails``), for the registers live at the entry
            summary_leaves = self._elide(L.INDIRECT_USES) if indirect else 0
            if indirect and addr in lr_jumps:
                # a jump through the link register is a return (a tail call keeps LR for its
                # callee, so its target is never in X30): longjmp's ``br x30`` lands on a resume
                # point, which reads what any return to somewhere else reads.  As a tail call it
                # would make every caller of a function that may throw (Lua: nearly all) keep
                # X2-X8 and V0-V7 live across its calls.
                summary_leaves = self._elide(L.EXIT_USES)
            table = self.plan.jump_tables.get(addr)
            if indirect and table and all(a in self.addrs for a in table):
                # the fallback of a small table of this function's own labels: a miss, as below
                summary_leaves = self._elide(L.EXIT_USES)
            leaves = (L.RET_LIVE if rec.ret is not None else 0) | summary_leaves
            self._number_tails(rec.start, rec.stop, len(tails), len(rec.tails))
            for t in rec.tails:
                tails.append((addr, t))
                leaves |= self._elide(L.CALL_USES) | L.RET_LIVE
            succs = list(rec.succs)
            for label in rec.tables:
                targets = self.shared_targets[label]
                succs += targets or []
                miss = self._elide(L.EXIT_USES) if targets is not None else L.ALL
                leaves |= miss
                summary_leaves |= miss
                indirect = True
            if indirect:
                succs += inner
                opaque = True
            if rec.flags_read:
                flag_reads.add(addr)
            gen, kill = rec.reads, rec.kills
            gen &= ~saves.get(addr, 0)
            if rec.fatal:
                # a fatal error (an instruction we do not lift, BRK/UDF) reads nothing a caller
                # must provide: glibc's SVE variants of memcpy and friends, never picked here,
                # otherwise made every memcpy call store every register
                gen = kill = 0
            elif gen == L.ALL:    # an exit that writes everything back: SVC, trap, tail call
                opaque = True
                if self.elide_saves and rec.svc:
                    gen = L.SVC_USES
                elif self.elide_saves and rec.fp_env:
                    # an FPSR/FPCR access stores every local only to order the FP arithmetic
                    # before it (fp_fpsr.py); a callee-saved register it has not written goes
                    # back as it came, so that is no read of the caller's value: as a read it
                    # made every function whose calls may reach __feraiseexcept (strtod,
                    # printf's float formatting) read D8-D15, and their callers store them
                    gen = L.ALL & ~L.ELIDED_SAVES
            cs.append(L.Chunk(addr, gen, kill, succs, call=k, leaves=leaves, writes=rec.writes,
                              call_gen=self._elide(L.CALL_USES)))
            base_leaves.append(summary_leaves)
        # past the end after a call: the guest compiler put nothing there because the callee
        # does not return.  Were it to return, what runs there could rely only on what a return
        # hands on (results, callee-saved registers), as at any return point: not the argument
        # registers (every caller of Lua's luaD_throw kept X2-X8 live across its calls for them)
        past_end = self._elide(L.EXIT_USES)
        _live_in, live_out = L.solve(cs, self.falls, past_end)
        for c, b in zip(cs, base_leaves):   # a direct callee's reads come from its summary
            if c.call is not None and self.call_targets[c.call] is not None:
                c.call_gen = 0
            c.leaves = b
        base_in, _ = L.solve(cs, self.falls, past_end)
        must = L.must_written(cs, self.falls, self.plan.entry)
        index = {c.addr: i for i, c in enumerate(cs)}
        n_sites = len(self.call_rets)
        # a function that saves a callee-saved register owns it: by AAPCS64 its own reads of
        # the entry value mean nothing (they lie on paths the guest compiler knew do not
        # happen, as verror_msg's read of X23 where its flag was clear), so they are no input
        # (a callee's read on a path that leaves it untouched, as setjmp's, still is: site_open)
        owned = self._owned()
        f = interproc.FnLive(self.plan.entry, base_in.get(self.plan.entry, L.ALL) & ~owned,
                             0, opaque, sorted(self.callees))
        f.site_target = list(self.call_targets)
        f.calls_unknown = any(t is None for t in self.call_targets)
        f.unknown_uses = self._elide(L.CALL_USES)
        f.wt_sites, f.wt_unsafe = dict(self.wt_sites), self.wt_unsafe
        f.save_drop = self._save_drop(cs, saves, live_out)
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
        for a, t in tails:
            f.tail_chunk.append(index[a])
            f.tail_target.append(t)
            f.tail_open.append(L.ALL & ~must[a])
        f.flags_in, f.tail_flags_open = self._flags_at_entry(cs, flag_reads, tails)
        self.facts = f

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
        fcs = [L.Chunk(c.addr, 1 if c.addr in flag_reads else 0,
                       1 if c.addr in self.flag_writers or c.call is not None else 0, c.succs) for c in cs]
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
            return 0    # an exit that stores every local hands every register back
        written = liveness.may_written_before(cs, self.falls)
        drop = self._owned()
        for a, m in saves.items():
            drop &= ~(m & written.get(a, liveness.ALL))
        words = {i.addr: i.word for i in self.plan.insns}
        for c in cs:
            r = liveness.restore_writes(words.get(c.addr, 0))
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
        AAPCS64).  None for a function that saves every one of X19-X28 and D8-D15: that is
        ``__builtin_unwind_init``'s prologue, whose function (an unwinder) reads its own save
        slots to find its callers' registers."""
        if not self.elide_saves:
            return {}
        saves = {i.addr: m for i in self.plan.insns if (m := liveness.save_reads(i.word))}
        every = liveness.ELIDED_SAVES
        return {} if self._owned(saves) & every == every else saves

    def _owned(self, saves: dict[int, int] | None = None) -> int:
        """Every callee-saved register the function saves (``self.saves`` by default)."""
        out = 0
        for m in (self.saves if saves is None else saves).values():
            out |= m
        return out

    def _tag_sites(self, body: str, regs: list[int], v_used: list[int],
                   w_regs: list[int], w_sp: bool, v_written: list[int], uses_flags: bool) -> str:
        """The call sites' and returns' placeholders, named by this function for
        ``interproc.place``; what writing their lists needs goes in ``self.facts``."""
        f = self.facts
        f.regs = [r for r in regs if r in CALLER_SAVED]
        f.v_used, f.w_regs, f.w_sp, f.v_written = list(v_used), list(w_regs), w_sp, list(v_written)
        f.ret_extra = "FLAGS_STORE;" if self.ret_flags and self.flags_written else ""
        f.flags_local = uses_flags
        return re.sub(r"@@(SC|RC|SR|RZ|ST|SJ)(\d+)@@", lambda m: f"@@{m.group(1)}:{self.plan.entry:x}:{m.group(2)}@@", body)

    def _wrap(self, body: str) -> str:
        body = _SV_RE.sub(r"v\1", body)
        v_used = sorted({int(m) for m in _V_RE.findall(body)})
        v_written = sorted({int(a or b) for a, b in _V_ASSIGN_RE.findall(body)})
        # X0, X1 and X30 arrive as arguments, not in NxCpu (SP too, where it is used): every
        # function has them and writes them back where it writes back what it changed
        used = {int(m) for m in _REG_RE.findall(body)} | set(ARG_REGS)
        uses_sp = bool(_SP_RE.search(body))
        written = {m for m in _ASSIGN_RE.findall(body)}
        w_regs = sorted({int(r[1:]) for r in written if r != "sp"} | set(ARG_REGS))
        w_sp = "sp" in written
        uses_flags = self.flags_written or bool(re.search(r"\b[NZCV]\b", body))
        regs = sorted(used)
        decl = []
        if regs:
            decl.append("u64 " + ", ".join(f"x{r} = a{r}" if r in ARG_REGS else f"x{r} = s->x[{r}]"
                                           for r in regs) + ";")
        if uses_sp:
            decl.append("u64 sp = asp;")
        if v_used:
            decl.append("NxVec " + ", ".join(f"v{r}" for r in v_used) + "; " + " ".join(interproc.vcopy(f"v{r}", f"s->v[{r}]") for r in v_used))
        decl.append("FLAGS_DECL;" if uses_flags else "")
        if uses_flags:
            decl.append("FLAGS_LOAD;")
        if self.events:   # set once the function wrote its own values into NxCpu (result.Lifted.overwrites_nxcpu)
            decl.append("u8 _c = 0;")
        if self.call_rets:
            decl.append("NxRet _r;")
        store = [f"s->x[{r}] = x{r};" for r in w_regs]
        if w_sp:
            store.append("s->sp = sp;")
        store += [interproc.vcopy(f"s->v[{r}]", f"v{r}") for r in v_written]
        if uses_flags and self.flags_written:
            store.append("FLAGS_STORE;")
        # An indirect jump out (BR to a register, a computed goto's miss) reaches a function
        # entry or a call's return address, where AAPCS64 leaves the flags undefined, so with
        # trust_abi it does not write them back: else every flag an interpreter loop computes
        # stays live across its dispatch (Lua n-body 10-25 % faster).  Trace builds keep them.
        store_indirect = [x for x in store if x != "FLAGS_STORE;" or not self.live]
        reload_regs = [r for r in regs if (r in CALLER_SAVED or not self.trust_abi) and r not in _NOT_RELOADED]
        reload = [f"x{r} = s->x[{r}];" for r in reload_regs]
        # AAPCS64: a callee may change V0-V7 and V16-V31, and the upper halves of V8-V15
        reload_v_all = [interproc.vcopy(f"v{r}", f"s->v[{r}]") for r in v_used]
        reload += reload_v_all if not self.trust_abi else \
            [interproc.reload_v(r) for r in v_used]
        reload_all = [f"x{r} = s->x[{r}];" for r in regs] + (["sp = s->sp;"] if uses_sp else []) + reload_v_all
        if uses_flags:
            reload_all.append("FLAGS_LOAD;")
        if uses_sp and not self.trust_abi:
            reload.append("sp = s->sp;")
        # AAPCS64: NZCV are neither arguments nor preserved by a call, so with trust_abi a call
        # neither writes the flags back nor reloads them (~12 instructions a call).  Trace
        # builds keep them: lockstep compares NZCV at every function entry.
        flags_at_calls = uses_flags and (not self.trust_abi or self.trace or "flags" in self.no_opt)
        if flags_at_calls:
            reload.append("FLAGS_LOAD;")
        store_call = [x for x in store if x != "FLAGS_STORE;" or flags_at_calls]
        # the frame's catch (below) also knows the SP of its last setjmp call (_sjsp: a VLA or
        # alloca may move SP between it and the call a longjmp comes back through)
        self.resume = [a for a in self.resume if a in self.addrs]
        # A function with resume points gets a twin that holds them (see below), and with an SP
        # a catch (C_x) that also knows the SP of its last setjmp call (_sjsp: a VLA or alloca
        # may move SP between it and the call a longjmp comes back through)
        twin = bool(self.resume) and not self.trace and "twins" not in self.no_opt
        catches = twin and uses_sp
        if catches:
            decl.append("u64 _sjsp = 0;")
        else:
            body = re.sub(r"@@SJ\d+@@", "", body)
        if self.live:   # AAPCS64: a return hands no flags back
            body = self._tag_sites(body, regs, v_used, w_regs, w_sp, v_written, uses_flags)
        resume = ""
        if self.resume:
            # a resume point at a call site that did not store the callee-saved registers live
            # after it is a fatal error (@@RZ@@, filled by interproc.place: elide_saves)
            site = {a: k for k, a in enumerate(self.call_rets)}
            cases = " ".join(f"case {a:#x}ull: {f'@@RZ:{self.plan.entry:x}:{site[a]}@@' if self.live and a in site else ''}goto L_{a:x};"
                             for a in sorted(set(self.resume)))
            c_set = "_c = 1; " if self.events else ""   # a resumed frame may have stored anything
            # s->resume 2: a frame's own try (NX_CATCH); a pc that is not its own goes on up
            resume = (f"  if (UNLIKELY(s->resume)) {{ u64 _m = s->resume; s->resume = 0; {c_set}switch (s->pc) {{ {cases} "
                      f"default: if (_m == 2) NX_BACK; nx_bad_resume(s); NX_BACK; }} }}\n")
        # the body is in address order; the entry may lie above code it branches back to
        first_jump = "" if self.plan.insns and self.plan.insns[0].addr == self.plan.entry \
            else f"  goto L_{self.plan.entry:x};\n"
        name = fname(self.plan.entry)
        self.plan.resume_points = sorted(set(self.resume))
        # A function with resume points gets a twin that holds them: where every return
        # address can also be entered from the start, each value live there merges with one
        # loaded from NxCpu, so clang can keep nothing in a constant or a register it would not
        # spill (Lua's luaV_execute: ~20 % of its time; busybox sort's key compare, which calls
        # get_key twice: 8 %).  The function itself then has no resume switch.  A twin runs
        # only in a frame re-entered after a return to somewhere else (a longjmp below it), and
        # there only until that frame returns, except in a loop that dispatches through a jump
        # table (an interpreter after a caught error runs on in its twin): the twins of other
        # functions are compiled as cold code (smaller, ~half the compile time of a copy).
        self.plan.resume_twin = twin

        # A return to somewhere else that comes up to a call site of a function with a twin
        # tries that frame first (C_x): if the guest SP is this frame's, the pc may be one of
        # its resume points (a longjmp to the setjmp of this frame), and the twin runs on from
        # NxCpu in this frame's place, so the C frames of its callers, which hold registers in
        # their locals only (elide_saves), stay as they are.  Else it goes on up, to nx_run.
        catch = "return _r"
        prelude = ""
        if catches:
            cname = f"C_{self.plan.entry:x}"
            catch = f"MUSTTAIL return {cname}(s, _r.x0, _r.pc, s->sp == _sjsp ? _sjsp : sp, sp)"
            prelude = (f"NxRet {rname(self.plan.entry)}{SIG};\n"
                       f"static __attribute__((noinline, cold)) NxRet {cname}{SIG} {{\n"
                       "  if (s->sp != a30) return (NxRet){ a1, a0 };   /* a0: X0, a1: the pc, a30: the frame's SP */\n"
                       "  s->x[0] = a0; s->pc = a1; s->resume = 2;\n"
                       f"  MUSTTAIL return {rname(self.plan.entry)}(s, a0, s->x[1], s->x[30], s->sp);\n}}\n")

        body = _vector_writes(body)   # after every reading of the body's register writes

        # a signal delivered at a backward branch (recompiler.signal_polls): runs its handler
        # nested on NxCpu and puts everything back, so the locals are reloaded unchanged;
        # liveness does not see it (no register is read or written in effect)
        sigpoll = ("#define NX_SIGPOLL(t) do { if (UNLIKELY(nx_signal_flag)) { s->pc = (t); "
                   f"(s->sp) = {'sp' if uses_sp else 'asp'}; STORE_ALL; nx_signal_poll(s); RELOAD_ALL; }} }} while (0)\n"
                   if self.signal_polls else "")
        # recompiler.entry_log: the arguments logged at the entry, NxCpu left as it was (its
        # slots of X0, X1, X30 and SP may be stale here by design: a log that kept them would
        # hide a read of a stale slot)
        entry_log = ("  if (!s->resume) { u64 _o[4] = { s->x[0], s->x[1], s->x[30], s->sp }; s->x[0] = a0; "
                     f"s->x[1] = a1; s->x[30] = a30; s->sp = asp; nx_trace_entry(s, {self.plan.entry:#x}ull); "
                     "s->x[0] = _o[0]; s->x[1] = _o[1]; s->x[30] = _o[2]; s->sp = _o[3]; }"
                     if settings.get("recompiler", "entry_log") else "")

        def function(fn: str, entry_check: str, attrs: str = "") -> str:
            return (f"{attrs}NxRet {fn}{SIG} {{\n"
                    f"#define NX_CATCH {catch}\n"
                    f"#define STORE_ALL do {{ {' '.join(store)} }} while (0)\n"
                    f"#define STORE_CALL do {{ {' '.join(store_call)} }} while (0)\n"
                    f"#define RELOAD_CALL do {{ {' '.join(reload)} }} while (0)\n"
                    f"#define RELOAD_ALL do {{ {' '.join(reload_all)} }} while (0)\n"
                    f"#define RELOAD_V do {{ {' '.join(reload_v_all)} }} while (0)\n"
                    f"{sigpoll}"
                    f"#define STORE_INDIRECT do {{ {' '.join(store_indirect)} }} while (0)\n"
                    f"  {' '.join(d for d in decl if d)}\n"
                    f"{'  s->x[0] = a0; s->x[1] = a1; s->x[30] = a30; s->sp = asp; if (!s->resume) nx_trace_entry(s, %#xull);' % self.plan.entry if self.trace else entry_log}\n{entry_check}"
                    f"{first_jump}{body}\n"
                    f"#undef STORE_ALL\n#undef STORE_CALL\n#undef RELOAD_CALL\n#undef RELOAD_ALL\n#undef RELOAD_V\n#undef STORE_INDIRECT\n#undef NX_CATCH\n"
                    f"{'#undef NX_SIGPOLL' + chr(10) if self.signal_polls else ''}}}\n")

        if not twin:
            return function(name, resume)
        # The function itself has no check of s->resume: the entry table holds it for its own
        # address only (kind 1, build._table_source), and every way in (nx_run, nx_call_ind,
        # nx_jump, an inline cache, a direct call from lifted code, whose frame consumed any
        # resume in its own twin's switch) enters it with s->resume 0.  Two instructions at
        # each call, in each inlined copy too (sort's key compare: three a comparison).
        return (prelude + function(name, "")
                + function(rname(self.plan.entry), resume,
                           "" if self.plan.jump_tables else "__attribute__((cold)) "))
