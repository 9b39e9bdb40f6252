"""Barrier reductions, both ISAs (issue 31; shader-ctl): ``BAR.RED.{POPC,AND,OR}`` and
``B2R.RESULT``, what nvcc 13 (sm_86) and ptxas 12.9 (sm_53) emit for CUDA's
``__syncthreads_count`` / ``__syncthreads_and`` / ``__syncthreads_or`` and PTX ``bar.red``.

Contract: ``BAR.RED`` is a workgroup barrier at which each invocation contributes its predicate;
the IR row ``BarrierReduce`` (``ir/ops.py``, lowered in ``lower/warp.py``) gives the CTA-wide
result, kept per invocation in a function variable of the lowering ("the barrier's result").
``B2R.RESULT d, pd`` reads it: d the result (POPC: the count; AND/OR: 1 or 0), pd whether it
is not 0 (ptxas reads AND/OR results only through pd and POPC's only through d).

Facts: PTX ISA "bar.red" (popc.u32 counts the threads whose predicate is true; and.pred / or.pred
combine the predicates of all threads; the thread count b, where given, is the number of threads
taking part, a multiple of the warp size; bar.red has bar.sync's memory ordering); the encodings
are nvdisasm's (``sm86/table.py``, ``sm53/table.py``, last blocks).  Refused by name: a thread
count other than the workgroup's size (a barrier over part of the CTA, which Vulkan's workgroup
barrier cannot express), a guarded BAR.RED (its barriers need every invocation)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import LowerBase, TranslateError

BARRIER_RED_RULES = {"BAR.RED": "op_bar_red", "B2R.RESULT": "op_b2r_result"}


class BarrierReduce(LowerBase):
    """Mixin: the two rows above, for either ISA's compute lowering."""

    def _bar_result_var(self) -> int:
        return self.var("bar_result", self.fn_u32)

    def op_bar_red(self, inst: Inst) -> None:
        if inst.pred != 7 or inst.pred_not:  # its workgroup barriers need every invocation
            raise TranslateError(f"{inst.text()}: guarded barrier reduction not translated", offset=inst.addr)
        x, y, z = self.spec.local_size
        count = inst.ops.get("count", {}).get("imm", 0)
        if count not in (0, x * y * z):
            raise TranslateError(
                f"{inst.text()}: a barrier of {count} threads in a workgroup of {x * y * z} not translated "
                "(only the whole CTA takes part in a Vulkan workgroup barrier)",
                offset=inst.addr,
            )
        b = Block()
        pp = inst.ops["pp"]
        v = b.emit("BarrierReduce", b.get_pred(pp["pred"], pp["not"]), op=inst.mods["op"])
        b.emit("StoreVarU32", v, var=self._bar_result_var())
        ir_spirv.emit(self, b)

    def op_b2r_result(self, inst: Inst) -> None:
        b = Block()
        v = b.emit("LoadVarU32", var=self._bar_result_var())
        b.set_reg(inst.ops["d"]["reg"], v)
        b.set_pred(inst.ops["pd"]["pred"], b.op("INe32", v, b.const_u32(0)))
        ir_spirv.emit(self, b)
