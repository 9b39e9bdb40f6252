"""The runtime ABI as cffi sees it, generated from its one source: ``cpu_host/runtime/core/nxrt.h``.

``NxCpu`` is shared by the lifted code, the C runtime and the Python hosts.  It used to be
declared by hand in three cdefs, which drifted (a vector type without its 16-byte alignment put
``v`` at 344 where C has it at 352).  Now the header is the only declaration: this module reads
the ``NxCpu`` struct out of it and writes the cffi form.  cffi's parser knows neither
``__attribute__((aligned))`` nor ``__int128``, so ``NxVec`` becomes a 16-byte union of the
members cffi can declare, and the generator inserts explicit padding wherever C's alignment
rule (16 for ``NxVec``, the natural size for scalars) moves a field; ``tests/cpu_host/
test_abi_layout.py`` compiles the header and compares every field's offset and the size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

HEADER = Path(__file__).parent / "runtime" / "core" / "nxrt.h"

# C type -> (size, alignment) on x86-64 for the types NxCpu may hold
_SCALARS = {
    "uint64_t": (8, 8),
    "int64_t": (8, 8),
    "uint32_t": (4, 4),
    "int32_t": (4, 4),
    "uint16_t": (2, 2),
    "uint8_t": (1, 1),
    "void *": (8, 8),
    "NxVec": (16, 16),
}

# cffi's NxVec: the same 16 bytes, the members cffi can declare (no __int128, no attribute)
NXVEC_CDEF = (
    "typedef union NxVec { uint8_t b[16]; uint16_t h[8]; uint32_t s[4]; uint64_t d[2]; float f[4]; double fd[2]; } NxVec;"
)


@dataclass(frozen=True)
class Field:
    name: str
    ctype: str
    count: int  # array length, 1 for a scalar
    offset: int  # by C's layout rules

    @property
    def size(self) -> int:
        return _SCALARS[self.ctype][0] * self.count


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


@lru_cache(maxsize=1)
def nxcpu_fields() -> tuple[tuple[Field, ...], int]:
    """NxCpu's fields with their C offsets, and the struct's size, read from nxrt.h."""
    text = _strip_comments(HEADER.read_text())
    m = re.search(r"typedef\s+struct\s+NxCpu\s*\{(.*?)\}\s*NxCpu\s*;", text, re.S)
    if not m:
        raise RuntimeError(f"{HEADER}: no 'typedef struct NxCpu {{...}} NxCpu;'")
    fields: list[Field] = []
    off, align_max = 0, 1
    for decl in filter(None, (d.strip() for d in m.group(1).split(";"))):
        dm = re.fullmatch(r"(uint64_t|int64_t|uint32_t|int32_t|uint16_t|uint8_t|void\s*\*|NxVec)\s*(.*)", decl, re.S)
        if not dm:
            raise RuntimeError(f"{HEADER}: NxCpu field {decl!r} has a type this generator does not know")
        ctype = "void *" if dm.group(1).startswith("void") else dm.group(1)
        size, align = _SCALARS[ctype]
        for name in (n.strip() for n in dm.group(2).split(",")):
            am = re.fullmatch(r"(\w+)(?:\[(\d+)\])?", name)
            if not am:
                raise RuntimeError(f"{HEADER}: NxCpu declarator {name!r} not understood")
            count = int(am.group(2) or 1)
            off = (off + align - 1) // align * align
            fields.append(Field(am.group(1), ctype, count, off))
            off += size * count
            align_max = max(align_max, align)
    return tuple(fields), (off + align_max - 1) // align_max * align_max


@lru_cache(maxsize=1)
def nxcpu_cdef() -> str:
    """cffi declarations of NxVec and NxCpu with the header's offsets (explicit padding)."""
    fields, size = nxcpu_fields()
    lines, at, pad = [], 0, 0
    for f in fields:
        if f.offset > at:
            lines.append(f"    uint8_t _pad{pad}[{f.offset - at}];")
            pad += 1
        lines.append(f"    {f.ctype} {f.name}{f'[{f.count}]' if f.count > 1 else ''};".replace("* ", "*"))
        at = f.offset + f.size
    if size > at:
        lines.append(f"    uint8_t _pad{pad}[{size - at}];")
    return NXVEC_CDEF + "\ntypedef struct NxCpu {\n" + "\n".join(lines) + "\n} NxCpu;\n"
