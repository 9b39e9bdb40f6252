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


class DecodeError(NxError):
    """A word the table does not explain exactly (names the offset, the word and the reason)."""


@dataclass(frozen=True)
class Control:
    """Scheduling bits of one instruction: stall cycles, yield, write/read barrier, barriers
    waited on, operand reuse flags (the same six fields on Maxwell and Ampere, packed
    differently: each ISA's decoder unpacks them)."""

    stall: int
    yield_: int
    wbar: int
    rbar: int
    wait: int
    reuse: int


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
