"""Cache control (CCTL and CCTLL, both ISAs): a no-op exactly where the operation has
no effect a program can observe, else refused by name.

Which PTX gives which operation (ptxas 12.9, seen in the corpus kernel ``cache_hints``,
``tests/shader_svc/cuda_corpus_ctl.py``): ``prefetch.global.L1`` -> ``CCTL.E.PF1``,
``prefetch.global.L2`` -> ``CCTL.E.PF2``, ``prefetch.global.L2::evict_last`` -> ``CCTL.E.PML2``,
``applypriority.global.L2::evict_normal`` -> ``CCTL.E.DML2``, ``discard.global.L2`` ->
``CCTL.E.RML2``.  The PTX ISA ("Data Movement and Conversion Instructions: prefetch,
applypriority, discard") gives their meaning:

- prefetches (PF1, PF1.5, PF2, PML2) and eviction priorities (DML2) are performance hints: no
  value any load or store sees changes, so nothing is emitted;
- ``discard`` is, in the PTX ISA (9.0), a weak write of an indeterminate value over the 128
  bytes (reads may see any bit pattern until the memory is written again): the memory keeping
  its old value is one of the outcomes allowed, so nothing is emitted either;
- CCTLL (PF1/PF2/WB... of local memory; SM53 from shader-assert): local memory is private to its thread, whose own
  accesses stay in program order whatever its cache holds: no other thread can see the
  difference, nothing is emitted;
- write-back and invalidation of the global caches (WB, IV, IVALL, RS, RSLB) change which
  writes other threads observe, and QRY1 reads the cache's state into the program: these are
  refused, naming the operation (a translation needs the memory model's availability and
  visibility operations, see ``lower/memory.py``'s MEMBAR note).
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import LowerBase, TranslateError

CACHE_RULES = {"CCTL": "op_cctl", "CCTLL": "op_cctl"}
FENCE_RULES53 = {"MEMBAR": "op_membar"}  # SM53 (SM86's MEMBAR: sm86/lower_mem.py, the same IR row)
NO_EFFECT = {"PF1", "PF1.5", "PF2", "PML2", "DML2", "RML2"}


def cctl_op(inst: Inst) -> str:
    """The operation a CCTL prints ('CCTL.E.PF1.5 [R2]' -> 'PF1.5', 'CCTL.QRY1[R0]' -> 'QRY1')."""
    text = inst.text()
    mnem = (text.split(" ", 1)[1] if text.startswith("@") else text).split(" ", 1)[0].split("[", 1)[0]
    parts = mnem.split(".")[1:]
    parts = [p for p in parts if p not in ("E", "U", "C", "I", "CRS")]
    return ".".join(parts)


class CacheControl(LowerBase):
    """Mixin of the compute lowerings: CCTL/CCTLL (module docstring); SM53's MEMBAR, the IR row
    ``MemoryFence`` (``lower/fence.py``: a barrier where the device has memory_barrier)."""

    def op_membar(self, inst: Inst) -> None:
        b = Block()
        b.emit("MemoryFence")
        ir_spirv.emit(self, b)

    def op_cctl(self, inst: Inst) -> None:
        op = cctl_op(inst)
        if inst.mnemonic == "CCTLL" or op in NO_EFFECT:
            return
        raise TranslateError(
            f"{inst.text()} (word {inst.word:#x}): cache operation {op} not translated (it changes which "
            f"writes other threads observe, or reads the cache's state)",
            offset=inst.addr,
        )
