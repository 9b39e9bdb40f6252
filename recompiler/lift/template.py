"""Lifted C whose call sites' lists are not written yet: text and ``Slot`` records.

A call site's store and reload lists, a return's store list, a direct tail call's stores, a
setjmp site's note of SP, a resume point's check, a write-through store and a droppable save
depend on the register summaries of the whole program (``interproc.summarize``), which exist
only once every function is lifted.  The emitter leaves a ``Slot`` for each (kind, function,
number), and ``interproc.place`` fills each slot from the facts (``FnLive``) and summaries;
nothing reads the C back to find them.

While the emitter builds a function's C as strings, a slot stands in it as a private anchor
(``Slots.anchor``: a NUL, the slot's index, a NUL; NUL appears in no C the lifter writes);
``Slots.template`` cuts the finished text at its anchors into a ``CText``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# the kinds of slot (what interproc.place writes there)
STORE_CALL = "SC"  # a call site's stores: what the callee may read, what is live after it
RELOAD_CALL = "RC"  # a call site's reloads: what is live after it that the callee may change
STORE_RET = "SR"  # a return's stores
STORE_TAIL = "ST"  # a direct tail call's stores (its callee's reads, a return's stores)
NOTE_SP = "SJ"  # at a setjmp-like call site: the frame notes its SP (_sjsp)
RESUME_CHECK = "RZ"  # a resume point whose call site did not store its live callee-saved registers
WRITE_THROUGH = "WT"  # after an instruction: the stores of the registers written through
SAVE = "SV"  # a prologue's save store of a callee-saved register (``text``): kept or dropped
RET_CHECK = "RK"  # after a call: the check of the pc it came back to (none where the callee surely returns)
COLD_EXIT = "CX"  # a cold path's entry in F_x (lift/cold.py): what is live there and NxCpu may lack
KINDS = (STORE_CALL, RELOAD_CALL, STORE_RET, STORE_TAIL, NOTE_SP, RESUME_CHECK, WRITE_THROUGH, SAVE, RET_CHECK, COLD_EXIT)


@dataclass
class Slot:
    kind: str
    entry: int  # the function's entry
    k: int  # call site, return or tail call number; WT: instruction address; SV: register bit; CX: chunk
    text: str = ""  # SV: the save store

    def marker(self) -> str:
        """The slot as text (``CText.render``, for reading unplaced C)."""
        if self.kind == WRITE_THROUGH:
            return f"@@WT:{self.entry:x}:{self.k:x}@@"
        if self.kind == SAVE:
            return f"@@SV:{self.entry:x}:{self.k}@@{self.text}@@ES@@"
        return f"@@{self.kind}:{self.entry:x}:{self.k}@@"


@dataclass
class CText:
    """C text with slots: ``parts`` alternate strings and ``Slot`` records."""

    parts: list = field(default_factory=list)

    @staticmethod
    def join(pieces: list, sep: str = "") -> "CText":
        out: list = []
        for n, p in enumerate(pieces):
            if n and sep:
                out.append(sep)
            out.extend(p.parts if isinstance(p, CText) else [p])
        return CText(out)

    def render(self) -> str:
        return "".join(p if isinstance(p, str) else p.marker() for p in self.parts)

    def __len__(self) -> int:
        return len(self.render())

    def slots(self) -> list[Slot]:
        return [p for p in self.parts if isinstance(p, Slot)]

    def fill(self, write) -> str:
        """The C with each slot replaced by ``write(slot)``."""
        return "".join(p if isinstance(p, str) else write(p) for p in self.parts)


_ANCHOR = re.compile(r"\x00(\d+)(e?)\x00")
ANCHOR = re.compile(r"\x00\d+\x00")  # a slot's anchor (not a bracket's end)


class Slots:
    """The slots of one function as it is emitted."""

    def __init__(self) -> None:
        self.all: list[Slot] = []

    def anchor(self, slot: Slot) -> str:
        """The anchor of a new slot in the C being built."""
        self.all.append(slot)
        return f"\x00{len(self.all) - 1}\x00"

    def bracket(self, slot: Slot) -> tuple[str, str]:
        """Anchors around text that becomes the slot's ``text`` (a save store)."""
        self.all.append(slot)
        n = len(self.all) - 1
        return f"\x00{n}\x00", f"\x00{n}e\x00"

    def of(self, anchor: str) -> Slot:
        return self.all[int(anchor.strip("\x00"))]

    def template(self, text: str) -> CText:
        """``text`` cut at its anchors."""
        parts: list = []
        pos = 0
        open_: Slot | None = None
        for m in _ANCHOR.finditer(text):
            chunk = text[pos : m.start()]
            pos = m.end()
            n = int(m.group(1))
            if m.group(2):  # the end of a bracketed slot: the text between is its own
                open_.text = chunk
                open_ = None
                continue
            if open_ is None:
                parts.append(chunk)
            slot = self.all[n]
            parts.append(slot)
            if slot.kind == SAVE:
                open_ = slot
        parts.append(text[pos:])
        return CText([p for p in parts if not isinstance(p, str) or p])
