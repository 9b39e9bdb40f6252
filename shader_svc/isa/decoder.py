"""The table-driven decoder and printer both ISAs run: strict row matching, field extraction,
the instruction line.

A table row names its opcode bits, its operands and modifiers (each knowing the bit ranges it
covers: ``bits()``) and ``base``, a reference word.  ``match`` tries the candidate rows of a
word in table order: a row explains the word only when every bit it does not cover (within the
ISA's ``region``: SM86's scheduling bits are never part of a row) equals ``base``, and the ISA's
``attempt`` accepts it (modifier values listed, operand values printable...); otherwise the
row's reason is kept, and the word is refused with all of them.  Nothing is guessed: a word no
row explains exactly is refused rather than printed wrong.

``mod_values``/``mods_text`` read and print the modifiers (``value(word)`` / ``lookup(v)`` of
each ISA's ``Mod``), ``line`` writes nvdisasm's instruction line.  The ISA-specific parts
(which rows are candidates, the control-word layout, the operand kinds whose encodings differ)
stay in ``sm53/`` and ``sm86/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


class RowRefused(Exception):
    """This candidate row does not explain the word (``args[0]``: why, for the refusal)."""


def field_mask(ranges: Iterable[tuple[int, int]], mask: int = 0) -> int:
    """``mask`` with every (lo, width) range set: the bits a row explains."""
    for lo, w in ranges:
        mask |= ((1 << w) - 1) << lo
    return mask


class RowIndex:
    """A table's rows by opcode: ``opcode(row)`` = (mask, value) of its opcode bits.  A word's
    candidates are the rows whose opcode bits it holds, rows of more specific masks first, in
    table order within a mask.  Opcodes of no fixed width (Maxwell's) are looked up under every
    mask; ``cut`` = (lo, width) of bits every mask reads in part, a first cut that keeps only
    the masks a word can match.  Each candidate comes with its explained-bits mask."""

    def __init__(self, rows: Iterable[Any], opcode: Callable[[Any], tuple[int, int]], cut: tuple[int, int]) -> None:
        by_mask: dict[int, dict[int, list[tuple[Any, int]]]] = {}
        for r in rows:
            mask, value = opcode(r)
            by_mask.setdefault(mask, {}).setdefault(value, []).append((r, field_mask(r.field_bits(), mask)))
        lo, width = cut
        self._cut = cut
        self._buckets: list[list[tuple[int, dict[int, list[tuple[Any, int]]]]]] = [[] for _ in range(1 << width)]
        full = (1 << width) - 1
        for m in sorted(by_mask, key=lambda m: -bin(m).count("1")):
            mcut = (m >> lo) & full
            free = full & ~mcut  # cut bits this mask does not read: every value of them matches
            hit: set[int] = set()
            for t in {(v >> lo) & mcut for v in by_mask[m]}:
                sub = free
                while True:
                    hit.add(t | sub)
                    if not sub:
                        break
                    sub = (sub - 1) & free
            for b in sorted(hit):
                self._buckets[b].append((m, by_mask[m]))

    def candidates(self, word: int) -> list[tuple[Any, int]]:
        lo, width = self._cut
        bucket = self._buckets[(word >> lo) & ((1 << width) - 1)]
        if len(bucket) == 1:  # one opcode mask (every SM86 word): the table's own list, read only
            m, vals = bucket[0]
            return vals.get(word & m, [])
        out: list[tuple[Any, int]] = []
        for m, vals in bucket:
            out += vals.get(word & m, [])
        return out


def match(
    word: int,
    cands: Iterable[tuple[Any, int]],
    region: int,
    attempt: Callable[[Any], Any],
    unexplained: Callable[[Any, int], str],
) -> tuple[Any, list[str]]:
    """The first candidate (row, explained-bits mask) that explains ``word``: bits outside the
    mask (within ``region``) equal the row's ``base``, and ``attempt(row)`` gives the decoded
    instruction instead of raising ``RowRefused``.  Returns (instruction or None, the reasons
    of the rows refused; ``unexplained(row, bits)`` words the first check's)."""
    reasons: list[str] = []
    for row, known in cands:
        diff = (word ^ row.base) & region & ~known
        if diff:
            reasons.append(unexplained(row, diff))
            continue
        try:
            return attempt(row), reasons
        except RowRefused as e:
            reasons.append(e.args[0])
    return None, reasons


def mod_values(mods: Iterable[Any], word: int) -> tuple[dict[str, int], list[tuple[str, int]]]:
    """Each modifier's value in ``word`` (name -> value), and the (name, value) of those whose
    value has no text (the decoder refuses them: never guessed)."""
    values: dict[str, int] = {}
    bad: list[tuple[str, int]] = []
    for m in mods:
        v = values[m.name] = m.value(word)
        if m.lookup(v) is None:
            bad.append((m.name, v))
    return values, bad


def mods_text(mods: Iterable[Any], values: dict[str, int]) -> str:
    """The modifiers' texts in print order ('.F32.FTZ'; a value printed as nothing adds '')."""
    return "".join(m.lookup(values[m.name]) or "" for m in mods)


def add_operand(parts: list[str], text: str | None, glued: bool = False) -> None:
    """Append an operand's text (None: left out of the line); ``glued``: written after the
    previous operand with a space instead of a comma (BRX's offset 'R0 0x10', RET's target)."""
    if text is None:
        return
    if glued and parts:
        parts[-1] += " " + text
    else:
        parts.append(text)


def line(guard: str, name: str, parts: list[str]) -> str:
    """nvdisasm's line: guard ('@!P0 ' or ''), mnemonic with modifiers, operands; a special
    float last keeps no trailing space (its space goes with the ';')."""
    s = guard + name
    return f"{s} {', '.join(parts)}".rstrip() if parts else s


def alias_of(aliases: Iterable[Any], ops: dict[str, Any], mods: dict[str, int], plain: frozenset[int] = frozenset()) -> str:
    """The text of the first alias (``operands.Alias``) whose conditions the decoded values
    meet, '' for none.  ``plain``: powers of two the disassembler prints without the 'pow2'
    alias."""
    for al in aliases:
        ok = True
        for name, kind, val in al.when:
            v = ops.get(name)
            if kind == "mod":
                ok = ok and mods.get(name) == val
            elif v is None:
                ok = False
            elif kind == "reg":
                ok = ok and "reg" in v and v.get("file") == "R" and v["reg"] == val
            elif kind == "imm":
                ok = ok and "imm" in v and v["imm"] == val
            elif kind == "pow2":
                ok = ok and "imm" in v and v["imm"] > 1 and v["imm"] & (v["imm"] - 1) == 0 and v["imm"] not in plain
        if ok:
            return al.insert
    return ""
