"""Operand kinds both ISAs' tables share: a predicate, a special register, a branch target, an
attribute address, a symbolic field, and the name lookup of fields printed as words or
modifiers.  Each ISA's ``fields.py`` adds its layout (default bit positions, extra flags) by
subclassing these, and its own kinds where the encodings differ (registers with their
modifier bits, immediates, constant banks, memory addresses, modifiers).

Every kind has a ``name`` (the key of its value in ``Inst.ops``), ``bits()``: the (lo, width)
ranges it covers, so the decoder can tell which bits of a word the row explains, and
``value(word, addr)``: its value in the shared vocabulary (``isa/inst.py``).  The shared kinds
also print themselves and give the inverse for the assemblers (``fields(text)``: the
(lo, width, value) fields that print as ``text``; ValueError where none do)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from shader_svc.isa.bits import get, sext
from shader_svc.isa.text import pred_name


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

    def value(self, w: int, addr: int = 0) -> dict:
        return {"pred": get(w, self.lo, 3) ^ self.xor, "not": bool(self.not_bit is not None and get(w, self.not_bit, 1))}

    def text(self, v: dict) -> str | None:
        if self.hide_pt and v["pred"] == 7 and not v["not"]:
            return None
        return pred_name(v["pred"], v["not"], self.file)

    def fields(self, text: str | None) -> list[tuple[int, int, int]]:
        """``None``: the operand left out of the text (a hidden carry-out: PT)."""
        p, neg = (7, False) if text is None else parse_pred(text, self.file)
        if neg and self.not_bit is None:
            raise ValueError(text)
        return [(self.lo, 3, p ^ self.xor)] + ([(self.not_bit, 1, int(neg))] if self.not_bit is not None else [])


def parse_pred(s: str, file: str = "P") -> tuple[int, bool]:
    """'!P3' -> (3, True), 'PT' -> (7, False); ValueError if it is no predicate of ``file``."""
    neg = s.startswith("!")
    t = s[1:] if neg else s
    if t == f"{file}T":
        return 7, neg
    m = re.fullmatch(rf"{file}([0-6])", t)
    if not m:
        raise ValueError(s)
    return int(m.group(1)), neg


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

    def value(self, w: int, addr: int = 0) -> dict:
        return {"sr": get(w, self.lo, 8)}

    def fields(self, text: str, numbers: dict[str, int]) -> list[tuple[int, int, int]]:
        """``numbers``: the ISA's special register names -> numbers."""
        if text not in numbers:
            raise ValueError(text)
        return [(self.lo, 8, numbers[text])]


@dataclass(frozen=True)
class Target:
    """Branch target: a signed offset field (``width`` bits at ``lo``) counted in ``unit``
    bytes from the next instruction (``step`` bytes on), printed as the absolute address."""

    name: str
    lo: int
    width: int
    step: int = 8
    unit: int = 1

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)]

    def value(self, w: int, addr: int = 0) -> dict:
        return {"target": addr + self.step + self.unit * sext(get(w, self.lo, self.width), self.width)}

    def fields(self, target: int, addr: int) -> list[tuple[int, int, int]]:
        """The offset field of a branch at ``addr`` to ``target``."""
        rel, rem = divmod(target - addr - self.step, self.unit)
        if rem or not -(1 << (self.width - 1)) <= rel < (1 << (self.width - 1)):
            raise ValueError(f"{target:#x}")
        return [(self.lo, self.width, rel & ((1 << self.width) - 1))]


@dataclass(frozen=True)
class Attr:
    """Attribute address a[0x80] of ALD/AST/IPA: ``width`` bits at ``lo``."""

    name: str
    lo: int
    width: int

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)]

    def value(self, w: int, addr: int = 0) -> dict:
        return {"attr": get(w, self.lo, self.width)}


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

    def value(self, w: int, addr: int = 0) -> dict:
        return {"sym": get(w, self.lo, self.width)}

    def number(self, text: str) -> int:
        """The first value printed as ``text``; ValueError if none is."""
        for v, s in self.names:
            if s == text:
                return v
        raise ValueError(text)


@dataclass(frozen=True)
class Alias:
    """nvdisasm prints some encodings under another name (SM86's IMAD with a zero product is
    IMAD.MOV).  ``when``: conditions, all must hold: (operand, kind, value) with kind 'reg' (a
    general register's number), 'imm' (immediate value), 'pow2' (an immediate power of two
    above 1) or 'mod' (a modifier's value, by its name); ``insert``: text put after the
    mnemonic, before the modifiers (``decoder.alias_of``)."""

    insert: str
    when: tuple[tuple[str, str, int], ...]
