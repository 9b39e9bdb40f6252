"""The image as analysis reads it: the initialised bytes of each segment by guest address,
which of them are code and which the program cannot write (``Memory``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Memory:
    """Read-only view of the image's initialised bytes, by guest address."""

    segments: list[tuple[int, int, bytes, bool]]  # (vaddr, memsz, data, executable)
    # (vaddr, memsz) of what the program cannot write at run time (segments without write
    # permission): tables read from there may be read once, here, instead of at each dispatch
    read_only: list[tuple[int, int]] = field(default_factory=list)

    def is_read_only(self, addr: int, n: int) -> bool:
        return any(va <= addr and addr + n <= va + m for va, m in self.read_only)

    def read(self, addr: int, n: int) -> bytes | None:
        for va, memsz, data, _x in self.segments:
            if va <= addr and addr + n <= va + memsz:
                off = addr - va
                chunk = data[off : off + n]
                return chunk + b"\0" * (n - len(chunk))
        return None

    def is_code(self, addr: int) -> bool:
        ranges = self.__dict__.get("_code")
        if ranges is None:  # (asked once per instruction and candidate: kept as plain ranges)
            ranges = self.__dict__["_code"] = [(va, va + len(data)) for va, _m, data, x in self.segments if x]
        for lo, hi in ranges:
            if lo <= addr < hi:
                return True
        return False
