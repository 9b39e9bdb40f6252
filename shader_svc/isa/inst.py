"""The decoded instruction, as both ISAs' decoders produce it and the lowerings read it.

An instruction is its table row plus the values of its fields: ``mods`` (modifier name ->
value) and ``ops`` (operand name -> a dict in the shared operand vocabulary below), the guard
predicate and the scheduling control bits.  The lowering reads only this record, so one
lowering machinery (``shader_svc/lower``) serves both ISAs.

Operand values (keys present depend on the kind; an ISA may add flags of its own):

- register: ``{"reg": n, "neg", "abs", ...}`` (255 = RZ; SM86 adds ``"file"``: "R" / "UR")
- predicate: ``{"pred": p, "not": bool}`` (7 = PT)
- immediate: ``{"imm": value}``
- constant bank: ``{"bank": b, "off": byte offset}`` (indexed: ``"reg"`` too)
- memory address: ``{"reg": n, "off": byte offset}``
- special register ``{"sr": n}``, branch target ``{"target": byte address}``, attribute
  ``{"attr": byte address}``, symbolic field ``{"sym": value}``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nxrecomp.common.errors import NxError
from shader_svc.isa.bits import get, put


class DecodeError(NxError):
    """A word the table does not explain exactly (names the offset, the word and the reason)."""


CONTROL_BITS = 21  # the width of one instruction's scheduling bits


@dataclass(frozen=True)
class Control:
    """Scheduling bits of one instruction: stall cycles, yield, write/read barrier, barriers
    waited on, operand reuse flags.  Maxwell and Ampere pack the same 21 bits in the same order
    (stall 4, yield 1, write barrier 3, read barrier 3, wait mask 6, reuse 4): SM53 in a slot
    of the control word before each group of three instructions, SM86 at bit 105 of every
    instruction; each ISA's decoder says where."""

    stall: int
    yield_: int
    wbar: int
    rbar: int
    wait: int
    reuse: int

    @classmethod
    def from_bits(cls, c: int) -> "Control":
        """The fields of a 21-bit scheduling value."""
        return cls(get(c, 0, 4), get(c, 4, 1), get(c, 5, 3), get(c, 8, 3), get(c, 11, 6), get(c, 17, 4))

    def bits(self) -> int:
        """The 21-bit scheduling value (fields truncated to their widths)."""
        w = 0
        for lo, width, v in (
            (0, 4, self.stall),
            (4, 1, self.yield_),
            (5, 3, self.wbar),
            (8, 3, self.rbar),
            (11, 6, self.wait),
            (17, 4, self.reuse),
        ):
            w = put(w, lo, width, v)
        return w


@dataclass
class Inst:
    """One decoded instruction at byte offset ``addr``; ``text()`` is nvdisasm's text of it
    (each ISA's subclass supplies its printer)."""

    addr: int
    row: Any  # the ISA's table row (``sm86.fields.Row`` / ``sm53.fields.Row``)
    word: int
    pred: int  # guard predicate 0..7 (7 = PT)
    pred_not: bool
    mods: dict[str, int]
    ops: dict[str, Any]  # operand name -> decoded value (module docstring)
    control: Control
    alias: str = ""  # nvdisasm's alias of this encoding (SM86's IMAD.MOV...), "" for none
    meta: dict = field(default_factory=dict)

    @property
    def mnemonic(self) -> str:
        return self.row.mnemonic

    def text(self) -> str:
        raise NotImplementedError
