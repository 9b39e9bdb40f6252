"""What lifting one instruction produced: its C and its effects, as data for the later stages.

A handler (``recompiler/lift/forms.py`` says which lifts each encoding) writes the instruction's C
through the emitter's API (``out``, ``setx``, ``goto``, ``call``, ``leave``, ``jump_out``,
``goto_table``, ``system_call``, ``fp_env``); the emitter keeps, per instruction, a ``Lifted``
record that those calls fill as they happen: the labels it may branch to, its call site, its
return, its direct tail calls, its jump-table dispatches, an indirect jump out, a jump out that
writes every local back, a system call, an FPSR/FPCR access, a fatal trap.  The register, flag
and memory effects (``reads``, ``kills``, ``writes``, ``flags_read``, ``memory``) are declared:
each form's own from its decoded fields (``effects/``), what the emitter's exits read added
by ``FunctionFacts.exit_effects`` (an exit that writes every local back reads them all).  No stage
reads the C back.  Liveness (``liveness.py``), the facts for the interprocedural summaries
(``facts.py`` -> ``interproc.FnLive``), the write-through points and the save elision read
these records, never the C.

Registers are bits of an int as in ``liveness``: X0-X30 bits 0-30, SP bit 31, V0-V31 bits 32-63.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from recompiler.lift.vector import VecWrite


class Exit(enum.Enum):
    """How control leaves an instruction (the strongest of what it may do, in this order)."""

    TRAP = "trap"  # a fatal error: an instruction not lifted, BRK/UDF
    INDIRECT = "indirect"  # BR through a register: a jump table's dispatch or the jump out
    TAIL = "tail"  # a direct tail call (or a jump to an address outside the function)
    RETURN = "return"
    SVC = "svc"  # a system call (falls through after it)
    CALL = "call"  # BL/BLR (falls through to the return address)
    BRANCH = "branch"  # a direct branch inside the function (conditional ones also fall)
    FALL = "fall"


class Mem(enum.Flag):
    NONE = 0
    LOAD = enum.auto()
    STORE = enum.auto()


@dataclass
class Lifted:
    """One instruction's C (body lines ``start``..``stop`` of the emitter) and its effects."""

    addr: int
    start: int  # first body line of the instruction
    stop: int = -1  # one past its last line (set when the body is complete)
    falls: bool = True  # control may go on to the next address
    # filled by the emitter's API as the handler runs
    succs: list[int] = field(default_factory=list)  # labels of this function it may branch to
    call: int | None = None  # its call site's number (BL, BLR)
    call_marker: str = ""  # the store slot of that call site (what precedes it is the
    #                                  instruction's own part; the rest is the callee's)
    ret: int | None = None  # its return's number (RET)
    ret_marker: str = ""  # (the store slot of that return)
    tails: list[int] = field(default_factory=list)  # direct tail calls, before any call site
    tail_texts: list[str] = field(default_factory=list)  # (their C, which liveness does not read)
    tables: list[str] = field(default_factory=list)  # jump tables it dispatches through
    jump_out: bool = False  # an indirect jump to an unknown target (nx_jump)
    exit_all: bool = False  # a jump out of the function that writes every local back
    #                           (STORE_ALL: to an address that is no function, through nx_jump)
    svc: bool = False  # a system call (stores every local, reloads them after)
    fp_env: bool = False  # an FPSR/FPCR access (stores every local to order FP code)
    fatal: bool = False  # a fatal error (not lifted, BRK/UDF)
    flags_set: bool = False  # writes all of NZCV (FunctionEmitter.flags_touched)
    # the conditions its C tests (FunctionEmitter.cond) and the flags it sets as a compare
    # (FunctionEmitter.flag_op): tokens in its C until flag_fuse.apply
    conds: list[int] = field(default_factory=list)
    flag_op: object = None
    # its writes of V registers in a vector-typed form (vector.py: a scalar write that zeroes
    # the rest, a Q load), as the handler noted them
    vec_writes: list[VecWrite] = field(default_factory=list)
    # its stores of a whole 64-bit register (register bit, the store's C): a prologue's save
    # of a callee-saved register is one (FunctionEmitter.reg_store, facts._mark_saves)
    reg_stores: list[tuple[int, str]] = field(default_factory=list)
    # registers the lifter's own C reads besides the operands (a direct table's guards and
    # index: control.h_br)
    uses: int = 0
    # declared as the handler finishes (effects.declare, FunctionFacts.declare); an exit's
    # reads added before liveness (FunctionFacts.exit_effects)
    reads: int = 0  # registers whose value before the instruction it may use (gen)
    kills: int = 0  # registers it surely overwrites without using them first
    writes: int = 0  # registers it may write
    flags_read: bool = False  # may read NZCV (or writes every local back)
    memory: Mem = Mem.NONE
    # the registers its C names (read or written, as declared, before an exit's reads are
    # added): the function's locals (wrap.FunctionWrapper._locals)
    named: int = 0
    names_flags: bool = False  # (and whether it reads NZCV, as declared)

    @property
    def exit(self) -> Exit:
        if self.fatal:
            return Exit.TRAP
        if self.jump_out or self.tables:
            return Exit.INDIRECT
        if self.tails or (not self.falls and not self.succs and self.ret is None and self.call is None and not self.svc):
            return Exit.TAIL
        if self.ret is not None:
            return Exit.RETURN
        if self.svc:
            return Exit.SVC
        if self.call is not None:
            return Exit.CALL
        if self.succs:
            return Exit.BRANCH
        return Exit.FALL

    @property
    def overwrites_nxcpu(self) -> bool:
        """Whether it writes the function's own values into ``NxCpu`` on the way through (a
        call site's store list, an SVC's or an FPSR/FPCR access's write-back of every local;
        not an exit's): the C's ``_c`` (interproc.quiet_returns)."""
        return self.call is not None or self.svc or self.fp_env
