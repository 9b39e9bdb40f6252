"""The assembler machinery both ISAs share: the inverse of ``decoder.py``, read off the same
table rows.

An instruction's text is matched against every row whose mnemonic starts it: ``mod_splits``
gives every way the text after the mnemonic splits into the row's modifier texts,
``operand_texts`` every way the operand texts go to the row's operands (operands the line may
leave out, such as a PT carry-out, are tried both ways), the ISA packs each candidate, and
``first_exact`` keeps the first word the ISA's decoder prints back as exactly the input text,
so an assembler never writes a word that means something else.  ``read_listing`` reads a
program (``//`` comments, ``LABEL:`` definitions at the instruction addresses).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from nxrecomp.common.errors import NxError


class NoFit(Exception):
    """This candidate row does not fit the text (tried the next one)."""


class Hidden:
    """Marker of an operand a modifier hides (IMAD's carry-in without .X): its bits keep the
    row's reference values."""


HIDDEN = Hidden()
NOT_OPTIONAL = object()  # ``optional(o)`` of an operand every line shows


def mod_splits(mods: Sequence[Any], rest: str, key: Callable[[tuple[int, str]], Any] | None = None) -> Iterator[tuple[int, ...]]:
    """The values of ``mods`` (in print order) whose texts concatenate to ``rest``, every way
    there is; each modifier's (value, text) pairs tried in table order, or sorted by ``key``."""
    if not mods:
        if not rest:
            yield ()
        return
    m = mods[0]
    for v, s in sorted(m.names, key=key) if key else m.names:
        if rest.startswith(s):
            for tail in mod_splits(mods[1:], rest[len(s) :], key):
                yield (v, *tail)


def operand_texts(
    operands: Sequence[Any],
    toks: Sequence[str],
    optional: Callable[[Any], Any],
    take: Callable[[Any], int] = lambda o: 1,
    hidden: frozenset[str] = frozenset(),
    skip_first: bool = False,
) -> Iterator[list[Any]]:
    """Every way to give each operand its text: ``take(o)`` tokens joined (a register pair takes
    two), ``HIDDEN`` for an operand named in ``hidden``, and for an operand the line may leave
    out, ``optional(o)`` (the text standing for it, NOT_OPTIONAL where it cannot be left out),
    tried after the token (before it with ``skip_first``)."""

    def go(i: int, j: int) -> Iterator[list[Any]]:
        if i == len(operands):
            if j == len(toks):
                yield []
            return
        o = operands[i]
        if o.name in hidden:
            for rest in go(i + 1, j):
                yield [HIDDEN] + rest
            return
        stand_in = optional(o)
        tries = ("skip", "take") if skip_first else ("take", "skip")
        for t in tries:
            if t == "skip" and stand_in is not NOT_OPTIONAL:
                for rest in go(i + 1, j):
                    yield [stand_in] + rest
            elif t == "take":
                n = take(o)
                if j + n <= len(toks):
                    for rest in go(i + 1, j + n):
                        yield [", ".join(toks[j : j + n])] + rest

    return go(0, 0)


def same_text(ours: str, src: str) -> bool:
    """Texts equal up to the space nvdisasm leaves after special floats ('+INF ,')."""
    return ours.replace(" ,", ",") == src.replace(" ,", ",")


def first_exact(cands: Iterable[Any], text_of: Callable[[Any], str | None], want: str) -> Any:
    """The first candidate whose decoded text (``text_of``: None where the decoder refuses it)
    is ``want``; None if none is."""
    for c in cands:
        t = text_of(c)
        if t is not None and same_text(t, want):
            return c
    return None


def read_listing(
    source: str, label: str, addr_of: Callable[[int], int], twice: Callable[[int, str], NxError]
) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """A program's instruction lines (line number, text without comment and labels) and its
    labels (name -> the address ``addr_of(index)`` of the next instruction).  ``label``: the
    regular expression of a label definition at the start of a line (group 1: its name);
    ``twice(line, name)``: the error raised for a label defined twice."""
    lines: list[tuple[int, str]] = []
    labels: dict[str, int] = {}
    for n, raw in enumerate(source.splitlines(), 1):
        t = raw.split("//", 1)[0].strip()
        while t and (m := re.match(label, t)):
            if m.group(1) in labels:
                raise twice(n, m.group(1))
            labels[m.group(1)] = addr_of(len(lines))
            t = t[m.end() :].strip()
        if t:
            lines.append((n, t))
    return lines, labels
