"""The AArch64 features the lifter implements, read from the one table in
``cpu_host/runtime/core/cpu_features.h`` (the runtime builds its ID registers from the same rows).

A program picks code paths by AT_HWCAP/AT_HWCAP2 (glibc's IFUNCs, libgcc's outline atomics,
musl's and zstd's feature checks) and by the ID registers: every bit we claim must be lifted
exactly, and every feature we lift exactly may be claimed so programs take their fast paths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "cpu_host" / "runtime" / "core" / "cpu_features.h"
_ROW = re.compile(r'F\((\w+),\s*(\d+),\s*(\d+),\s*(\w+),\s*(\d+),\s*(\d+),\s*"([^"]*)"\)')


@dataclass(frozen=True)
class Feature:
    name: str
    hwcap_word: int  # 1: AT_HWCAP, 2: AT_HWCAP2, 0: not an HWCAP bit
    bit: int
    id_reg: str  # ISAR0, ISAR1, PFR0 or NONE
    shift: int
    value: int
    classes: tuple[str, ...]  # Unicorn differential-test classes that prove it


@lru_cache(maxsize=1)
def features() -> tuple[Feature, ...]:
    text = TABLE.read_text()
    body = text[text.index("#define NX_CPU_FEATURES(F)") :]
    rows = tuple(
        Feature(m[1], int(m[2]), int(m[3]), m[4], int(m[5]), int(m[6]), tuple(m[7].split())) for m in _ROW.finditer(body)
    )
    if not rows:
        raise RuntimeError(f"{TABLE}: no F(...) rows in NX_CPU_FEATURES")
    return rows


def hwcap(word: int = 1) -> int:
    """AT_HWCAP (word 1) or AT_HWCAP2 (word 2): the Linux bits of what we lift."""
    return sum(1 << b for b in {f.bit for f in features() if f.hwcap_word == word})


def id_register(reg: str) -> int:
    """ID_AA64<reg>_EL1 as the runtime answers an MRS of it."""
    v = 0
    for f in features():
        if f.id_reg == reg:
            v |= f.value << f.shift
    return v
