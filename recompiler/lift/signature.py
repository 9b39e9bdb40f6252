"""The C shape every lifted function shares: its signature, what a call passes, the names of a
function and of its resume twin, and the indirect jump out (cpu_host/runtime/core/nxrt.h, lifted.h)."""

from __future__ import annotations

from nxrecomp.common import settings

CALLER_SAVED = set(range(19)) | {30}
# A lifted function's C signature (cpu_host/runtime/core/nxrt.h): guest X0, X1, the link register,
# SP and the frame pointer X29 come in as host arguments (six: every one in a SysV x86-64
# argument register, a29 in r9), the next pc and X0 go out as an NxRet.  ARGS is what a call or
# tail call passes.  SP as an argument: a frame's stores then have their addresses at once, not
# after a load of s->sp that waits on the caller's store of it.  X29 as one: a callee's frame
# record (``stp x29, x30, [sp, #-N]!``) reads it, so each call site stored it to s->x[29] and
# the callee loaded it back (SQLite: 10,269 call sites stored X29).  Their NxCpu slots may be
# stale at the entry; the runtime's ways in from lifted code (nx_jump, nx_call_ind) store them.
PARAMS = "(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp, u64 a29)"
# recompiler.call_abi = preserve_none: every lifted function, and the runtime's functions of its
# form (nxrt.h NX_CC: nx_call_ind, nx_jump), take clang's preserve_none convention (the define
# comes with cc.arch_flags); the default's C is the same text as before the setting.
# (call_abi = auto: the same; lift/call_abi.py then gives some functions a SysV body behind it)
SIG = PARAMS + (" NX_CC" if settings.get("recompiler", "call_abi") in ("preserve_none", "auto") else "")
ARGS = "(s, x0, x1, x30, sp, x29)"
ARG_REGS = (0, 1, 29, 30)  # the X registers among them: every function has their locals
# control.py's BR to a register outside any table (``FunctionEmitter.jump_out``): the site's inline
# cache, else nx_jump.  An instruction's effects are read without it (the jump's reads are its leaves).
# s->pc only on the miss path: a hit enters a lifted function's own entry, which does not read it.
JUMP_OUT = (
    "STORE_INDIRECT; { static const NxEntry *_ic = &nx_ic_empty_jump; "
    f"const NxEntry *_e = NX_IC(&_ic, _t); if (_e) MUSTTAIL return _e->fn{ARGS}; s->pc = _t; "
    f"if (nx_ic_fill) s = nx_ic_fill(s, &_ic); }} MUSTTAIL return nx_jump{ARGS};"
)


def fname(addr: int) -> str:
    return f"F_{addr:x}"


def rname(addr: int) -> str:
    """The resume twin of ``fname(addr)`` (see FunctionEmitter.finish)."""
    return f"R_{addr:x}"
