"""Decode A64 words against the declarative table in ``recompiler/isa.py``.

Capstone is used beside it (``disasm``) for the text of each instruction in generated C
comments and by the tests that check our table against capstone's decoding of real programs.
The lifter works from our table's fields because capstone's alias forms (``mov``, ``cmp``,
``ubfx``...) would make each semantic rule depend on which alias capstone picked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from recompiler.isa import FORMS, Form


@dataclass(frozen=True, slots=True)
class Insn:
    addr: int
    word: int
    form: Form | None  # None: not in our table (lifted as a fatal "unimplemented")
    f: dict  # field values

    @property
    def name(self) -> str:
        return self.form.name if self.form else "UNKNOWN"

    @property
    def group(self) -> str:
        """The class row of ``isa.py`` the form was split from (``Form.group``)."""
        return self.form.group if self.form else "UNKNOWN"


def _buckets() -> list[list[Form]]:
    # Bucket by bits 28:25 (the top-level op0 of the A64 encoding index): a form belongs to
    # every bucket its fixed bits at 28:25 allow.
    out: list[list[Form]] = [[] for _ in range(16)]
    for op0 in range(16):
        w = op0 << 25
        for f in FORMS:
            m = f.mask & (0xF << 25)
            if (w & m) == (f.value & m):
                out[op0].append(f)
    return out


_BUCKETS = _buckets()


@lru_cache(maxsize=1 << 16)
def match(word: int) -> Form | None:
    for f in _BUCKETS[(word >> 25) & 0xF]:
        if word & f.mask == f.value and f.matches(word):
            return f
    return None


def decode(word: int, addr: int) -> Insn:
    form = match(word)
    return Insn(addr, word, form, form.extract(word) if form else {})


_cs = None


def disasm(word: int, addr: int) -> str:
    """Capstone's text of one instruction (for comments and reports)."""
    global _cs
    if _cs is None:
        import capstone

        _cs = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    for _a, _s, mn, ops in _cs.disasm_lite(word.to_bytes(4, "little"), addr):
        return f"{mn} {ops}".strip()
    return f".word {word:#010x}"
