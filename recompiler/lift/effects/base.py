"""The vocabulary of the declared effects (``recompiler/lift/effects``): the ``Effects`` record
and the builder the per-group declarations write them with.

Registers are bits as in ``liveness``: X0-X30 bits 0-30, SP bit 31, V0-V31 bits 32-63.  A
register written in part (``wv(n, part=True)``) is read too: the rest of it is kept.  ``kills``
are the registers written in full that the instruction does not read first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from recompiler.decode import Insn
from recompiler.lift.liveness import SP_BIT, vbit, xbit
from recompiler.lift.result import Mem


@dataclass(frozen=True)
class Effects:
    """One instruction's declared effects (register bits as in ``liveness``)."""

    reads: int = 0  # registers whose value before the instruction it may use
    kills: int = 0  # registers it surely overwrites in full without using them first
    writes: int = 0  # registers it may write (the kills included)
    flags_read: bool = False  # may read NZCV
    flags_set: bool = False  # writes all four of NZCV
    memory: Mem = Mem.NONE


class E:
    """A builder of ``Effects``: ``r``/``w`` name general registers, ``rv``/``wv`` vector ones."""

    def __init__(self) -> None:
        self.reads = self.full = self.part = 0
        self.flags_read = self.flags_set = False
        self.mem = Mem.NONE

    @staticmethod
    def _x(n: int, sp: bool) -> int:
        if n == 31:
            return xbit(SP_BIT) if sp else 0
        return xbit(n)

    def r(self, *ns: int, sp: bool = False) -> E:
        for n in ns:
            self.reads |= self._x(n, sp)
        return self

    def w(self, n: int, sp: bool = False) -> E:
        self.full |= self._x(n, sp)
        return self

    def rw(self, n: int, sp: bool = False) -> E:
        """A register read and written back (a base register's write-back, MOVK)."""
        return self.r(n, sp=sp).w(n, sp=sp)

    def rv(self, *ns: int) -> E:
        for n in ns:
            self.reads |= vbit(n % 32)
        return self

    def wv(self, n: int, part: bool = False) -> E:
        """Vector register ``n`` written: in full, or only a part of it (which reads the rest)."""
        if part:
            self.reads |= vbit(n % 32)
        self.full |= vbit(n % 32)
        return self

    def flags(self, read: bool = False, set_: bool = False) -> E:
        self.flags_read |= read
        self.flags_set |= set_
        return self

    def load(self) -> E:
        self.mem |= Mem.LOAD
        return self

    def store(self) -> E:
        self.mem |= Mem.STORE
        return self

    def done(self) -> Effects:
        return Effects(self.reads, self.full & ~self.reads, self.full, self.flags_read, self.flags_set, self.mem)


NONE = Effects()
Declare = Callable[[Insn], Effects]
