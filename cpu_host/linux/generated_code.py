"""Code a Linux program generates at run time, lifted when it is first branched to.

A JIT compiler writes AArch64 code into memory it mapped executable and calls it: pcre2's sljit
(``grep -P``: one anonymous ``mmap`` of 64 KiB with PROT_READ|PROT_WRITE|PROT_EXEC, traced under
``qemu-aarch64 -strace``), libffi closures, trampolines.  No build saw that code.  The Linux
personality records such memory (``cpu_host/runtime/linux/linux_syscalls.c``, "code generated at
run time"); a branch into it misses the dispatch tables and lift on miss
(``cpu_host/runtime/core/lift_miss.c``) copies the memory around the target into a file and starts
``python -m cpu_host.lift_on_miss BUNDLE ADDR --generated BASE FILE``.  This module answers it:
the function at ADDR in the copy, analysed, lifted and compiled as ``recompiler.runtime_lift``
lifts one of the program's functions, with two differences:

- every register goes through NxCpu across calls (``trust_abi`` off): a JIT's code calls its own
  helpers with conventions of its own (sljit's fast calls keep values in any register), so
  nothing the AAPCS64 promises may be assumed of its callees;
- the object checks at each entry that the guest's bytes of the function are still the ones it
  was lifted from (``runtime_lift.c_source(generated=...)``): a JIT reuses its memory for the
  next pattern, and qemu runs whatever is there at the branch.

Nothing is noted in the bundle's discovered entries (the code is not the program's), and
nothing is cached but the compiled object (``cache_dir/runtime_lifts``, keyed by its C, which
holds the bytes and the address).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class GeneratedLift:
    """What the helper reports: the object, and the figures of the notice."""

    so_path: Path | None  # None: nothing the lifter can follow starts at ADDR
    insns: int = 0
    guest_bytes: int = 0
    compile_s: float = 0.0
    cached: bool = False
    why: str = ""


def lift_generated(addr: int, base: int, snapshot: Path) -> GeneratedLift:
    """Lift the function at ``addr`` from the copy of generated-code memory at ``base``."""
    from recompiler.analyse import Analyser
    from recompiler.analysis.image import Memory
    from recompiler.runtime_lift import compile_plan

    data = snapshot.read_bytes()
    if addr % 4:
        return GeneratedLift(None, why="a misaligned target is no instruction")
    if not base <= addr < base + len(data):
        return GeneratedLift(None, why=f"the target is outside the copy [{base:#x}, {base + len(data):#x})")
    mem = Memory([(base, len(data), data, True)], [])  # all writable: nothing read once here
    plan = Analyser(mem, {addr}).function(addr)
    if not plan.insns:
        word = int.from_bytes(data[addr - base : addr - base + 4], "little")
        return GeneratedLift(None, why=f"the word there ({word:#010x}) starts no code the lifter can follow")
    lo = min(i.addr for i in plan.insns)
    hi = max(i.addr for i in plan.insns) + 4
    # trust_abi and elide_saves off: a JIT's own helpers keep values in any register
    so, secs, cached = compile_plan(plan, addr, False, False, generated=(lo, data[lo - base : hi - base]))
    return GeneratedLift(so, len(plan.insns), hi - lo, secs, cached)
