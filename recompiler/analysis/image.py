"""The image as analysis reads it: the initialised bytes of each segment by guest address,
which of them are code and which the program cannot write (``Memory``).

Code is where the program's sections say it is (``code``: the ``SHF_EXECINSTR`` sections, less
the unwind tables of a module without section headers), not every byte of an executable
segment: a shared library linked without separate code pages (Debian's libm, libmpfr, libjq)
maps its ``.rodata`` and ``.eh_frame`` in its ``R E`` segment, and their words decoded as
``BL``s and pointers named the middle of real functions as entries (libm's ``.eh_frame`` put
six false entries into libmpfr's ``mpfr_vasnprintf_aux``)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass
class Memory:
    """Read-only view of the image's initialised bytes, by guest address."""

    segments: list[tuple[int, int, bytes, bool]]  # (vaddr, memsz, data, executable)
    # (vaddr, memsz) of what the program cannot write at run time (segments without write
    # permission): tables read from there may be read once, here, instead of at each dispatch
    read_only: list[tuple[int, int]] = field(default_factory=list)
    # (start, end) of the code inside the executable segments (their sections of code); None:
    # every initialised byte of an executable segment
    code: list[tuple[int, int]] | None = None

    def is_read_only(self, addr: int, n: int) -> bool:
        return any(va <= addr and addr + n <= va + m for va, m in self.read_only)

    def read(self, addr: int, n: int) -> bytes | None:
        for va, memsz, data, _x in self.segments:
            if va <= addr and addr + n <= va + memsz:
                off = addr - va
                chunk = data[off : off + n]
                return chunk + b"\0" * (n - len(chunk))
        return None

    def code_ranges(self) -> list[tuple[int, int]]:
        """(start, end) of the code, sorted and disjoint, inside executable segments' bytes."""
        ranges = self.__dict__.get("_code")
        if ranges is None:  # (asked once per instruction and candidate: kept as plain ranges)
            segs = sorted((va, va + len(data)) for va, _m, data, x in self.segments if x)
            if self.code is None:
                ranges = segs
            else:
                ranges = []
                for lo, hi in sorted(self.code):
                    for slo, shi in segs:
                        a, b = max(lo, slo), min(hi, shi)
                        if a < b:
                            if ranges and ranges[-1][1] >= a:
                                ranges[-1] = (ranges[-1][0], max(ranges[-1][1], b))
                            else:
                                ranges.append((a, b))
            self.__dict__["_code"] = ranges
            self.__dict__["_starts"] = [lo for lo, _hi in ranges]
        return ranges

    def code_pieces(self) -> list[tuple[int, bytes]]:
        """(address, bytes) of each range of code (``code_ranges``)."""
        out = []
        for lo, hi in self.code_ranges():
            for va, _m, data, x in self.segments:
                if x and va <= lo and hi <= va + len(data):
                    lo += -lo % 4  # (instructions are aligned)
                    out.append((lo, data[lo - va : hi - va]))
                    break
        return out

    def is_code(self, addr: int) -> bool:
        ranges = self.code_ranges()
        k = bisect.bisect_right(self.__dict__["_starts"], addr) - 1
        return k >= 0 and addr < ranges[k][1]
