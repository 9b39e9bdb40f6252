"""The C shape every lifted function shares: its signature, what a call passes, the names of a
function and of its resume twin, and the indirect jump out (cpu_host/runtime/core/nxrt.h, lifted.h)."""

from __future__ import annotations

CALLER_SAVED = set(range(19)) | {30}
# A lifted function's C signature (cpu_host/runtime/core/nxrt.h): guest X0, X1, the link register and
# SP come in as host arguments, the next pc and X0 go out as an NxRet.  ARGS is what a call or
# tail call passes.  SP as an argument: a frame's stores then have their addresses at once, not
# after a load of s->sp that waits on the caller's store of it.
SIG = "(NxCpu *s, u64 a0, u64 a1, u64 a30, u64 asp)"
ARGS = "(s, x0, x1, x30, sp)"
ARG_REGS = (0, 1, 30)
# control.py's BR to a register outside any table (``FunctionEmitter.jump_out``): the site's inline
# cache, else nx_jump.  An instruction's effects are read without it (the jump's reads are its leaves)
JUMP_OUT = (
    "STORE_INDIRECT; s->pc = _t; { static const NxEntry *_ic = &nx_ic_empty_jump; "
    f"const NxEntry *_e = NX_IC(&_ic, _t); if (_e) MUSTTAIL return _e->fn{ARGS}; "
    f"if (nx_ic_fill) s = nx_ic_fill(s, &_ic); }} MUSTTAIL return nx_jump{ARGS};"
)


def fname(addr: int) -> str:
    return f"F_{addr:x}"


def rname(addr: int) -> str:
    """The resume twin of ``fname(addr)`` (see FunctionEmitter.finish)."""
    return f"R_{addr:x}"
