"""The guest memory map of a linked Linux program: which page ranges the runner maps, with
which protection, where the stack and the program break go.  Pure layout, part of the bundle
because its launch file records it (``launch.py``); mapping is the runner's job
(``cpu_host.linux.process``: libc mmap through cffi, MAP_FIXED_NOREPLACE; the Horizon runner
uses the same region helpers)."""

from __future__ import annotations

from dataclasses import dataclass

PAGE = 4096
STACK_TOP = 0x7F_FFFF_0000  # just below 2^39: every guest address stays under it
STACK_SIZE = 8 << 20  # Linux's default RLIMIT_STACK
BRK_RESERVE = 1 << 30  # room the program break may grow into


@dataclass(frozen=True)
class Region:
    start: int
    end: int
    prot: str  # "rwx" letters or "-"

    @property
    def size(self) -> int:
        return self.end - self.start


def _union(a: str, b: str) -> str:
    return "".join(x if x != "-" else y for x, y in zip(a, b))


def segment_regions(segments: list) -> list[Region]:
    """Page-rounded regions for segments (objects with vaddr, memsz, prot).  Two segments that
    share a page get the union of their protections on it (as the kernel's overlapping
    mappings would leave it readable/writable for both)."""
    pages: dict[int, str] = {}
    for s in segments:
        if s.memsz == 0:
            continue
        for p in range(s.vaddr // PAGE, (s.vaddr + s.memsz + PAGE - 1) // PAGE):
            pages[p] = _union(pages[p], s.prot) if p in pages else s.prot
    out: list[Region] = []
    for p in sorted(pages):
        prot = pages[p]
        if out and out[-1].end == p * PAGE and out[-1].prot == prot:
            out[-1] = Region(out[-1].start, (p + 1) * PAGE, prot)
        else:
            out.append(Region(p * PAGE, (p + 1) * PAGE, prot))
    return out


def stack_region(top: int = STACK_TOP, size: int = STACK_SIZE) -> Region:
    return Region(top - size, top, "rw-")


def brk_region(brk_start: int, reserve: int = BRK_RESERVE) -> Region:
    start = (brk_start + PAGE - 1) // PAGE * PAGE
    return Region(start, start + reserve, "rw-")


def check_disjoint(regions: list[Region]) -> None:
    """ValueError naming the first two regions that overlap."""
    rs = sorted(regions, key=lambda r: r.start)
    for a, b in zip(rs, rs[1:]):
        if a.end > b.start:
            raise ValueError(f"guest regions [{a.start:#x}, {a.end:#x}) and [{b.start:#x}, {b.end:#x}) overlap")
