"""Operand kinds both ISAs' tables share: a predicate, a special register, a branch target, an
attribute address, a symbolic field, and the name lookup of fields printed as words or
modifiers.  Each ISA's ``fields.py`` adds its layout (default bit positions, extra flags) by
subclassing these, and its own kinds where the encodings differ (registers with their
modifier bits, immediates, constant banks, memory addresses, modifiers).

Every kind has a ``name`` (the key of its value in ``Inst.ops``) and ``bits()``: the (lo,
width) ranges it covers, so the decoder can tell which bits of a word the row explains."""

from __future__ import annotations

from dataclasses import dataclass


class Named:
    """A field whose values have printed names: ``names`` = ((value, text), ...); a value not
    listed has none (the decoder refuses it, never guesses)."""

    names: tuple[tuple[int, str], ...]

    def lookup(self, v: int) -> str | None:
        for k, s in self.names:
            if k == v:
                return s
        return None


@dataclass(frozen=True)
class Pred:
    """A predicate operand (3 bits, 7 = PT/UPT) with an optional 'not' bit.  ``hide_pt``: left
    out of the text while it is PT (optional carry-outs, LOP's predicate result); ``file``:
    'P' or SM86's uniform 'UP'; ``xor``: the field holds the number xor this."""

    name: str
    lo: int
    not_bit: int | None = None
    file: str = "P"
    hide_pt: bool = False
    xor: int = 0  # stored as the predicate number xor this (SM86 MMA's UP: 0 is UPT)

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, 3)] + ([(self.not_bit, 1)] if self.not_bit is not None else [])


# S2R's special registers that are compute builtins (the same numbers on SM53 and SM86, as
# nvdisasm prints them: SR_TID.X/Y/Z 0x21-0x23, SR_CTAID.X/Y/Z 0x25-0x27) -> builtin, component
SREG_BUILTINS = {
    0x21: ("LocalInvocationId", 0),
    0x22: ("LocalInvocationId", 1),
    0x23: ("LocalInvocationId", 2),
    0x25: ("WorkgroupId", 0),
    0x26: ("WorkgroupId", 1),
    0x27: ("WorkgroupId", 2),
}


@dataclass(frozen=True)
class SReg:
    """Special register of S2R (8 bits at ``lo``)."""

    name: str
    lo: int

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, 8)]


@dataclass(frozen=True)
class Target:
    """Branch target: a signed offset field (``width`` bits at ``lo``); each ISA's decoder says
    from where and in which unit it counts."""

    name: str
    lo: int
    width: int

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)]


@dataclass(frozen=True)
class Attr:
    """Attribute address a[0x80] of ALD/AST/IPA: ``width`` bits at ``lo``."""

    name: str
    lo: int
    width: int

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)]


@dataclass(frozen=True)
class Sym(Named):
    """A field nvdisasm prints as an operand word rather than a '.MOD' (a texture's dimension
    '2D', TXQ's query, a component mask); ``names``: value -> text."""

    name: str
    lo: int
    width: int
    names: tuple[tuple[int, str], ...]

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)]
