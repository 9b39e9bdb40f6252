"""R2UR's predicate output: nvcc -G's loop that makes a per-thread value uniform (shader-ctl2,
issue 31).

What the machine does (nvdisasm 13 of nvcc 13 -G code for ``cp.async.mbarrier.arrive``, the
corpus kernel ``mbar_cp_async``)::

    PLOP3.LUT P1, PT, PT, PT, PT, 0x80, 0x0      ; P1 = true
  L: @P1 R2UR P0, UR4, R3                        ; UR4 = one lane's R3, P0 per lane
    @P1 PLOP3.LUT P1, PT, P0, PT, PT, 0x80, 0x0  ; P1 = P0
    @!P0 ARRIVES.LDGSTSBAR.64 [UR4]              ; the lanes with P0 clear use UR4
    @P0 BRA L                                    ; the others go round again

The lanes whose P0 is clear run the operation with UR4 and leave; the others loop: so
``R2UR Pd, URd, Ra`` writes into URd the Ra of one lane and sets Pd in the lanes whose Ra is
not that value (the lanes it did not serve).  A uniform register here is each invocation's own
(``UR<n>`` function variables, ``sm86/lower_uniform.py``): the invocation's UR gets its own
Ra, which no lane's differs from, so Pd is false — every lane is served in the first round,
each running the operation once with its own value, as the machine's rounds do.  Where the
program guards a workgroup-wide operation (ARRIVES: its barrier needs every invocation) with
``!Pd`` of such an R2UR, the guard holds in every invocation (``served_guard``)."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.isa.inst import Inst


# operand names of predicate destinations (the table's rows: ISETP/PLOP3/R2UR p and q, the
# carries co0/co1 of IADD3 and friends)
PRED_DESTS = ("p", "q", "co0", "co1")


def served_guard(insts: list[Inst], at: int) -> bool:
    """Whether ``insts[at]``'s guard is ``!Pd`` of an R2UR with a predicate output Pd that last
    wrote Pd on the straight line of code leading to it (no branch, no branch target and no
    other write of Pd between)."""
    ins = insts[at]
    if ins.pred == 7 or not ins.pred_not:
        return False
    entered = {t["target"] for i in insts for t in i.ops.values() if isinstance(t, dict) and "target" in t}
    if ins.addr in entered:
        return False
    for k in range(at - 1, -1, -1):
        prev = insts[k]
        writes = {prev.ops[n].get("pred") for n in PRED_DESTS if isinstance(prev.ops.get(n), dict)}
        if ins.pred in writes:
            return prev.row.ir == "R2UR" and prev.ops["p"].get("pred") == ins.pred
        if prev.row.cls == "branch" or prev.addr in entered:
            return False
    return False


class Waterfall86:
    """Mixin of the SM86 compute lowering: R2UR with its predicate output (module docstring)."""

    def op_r2ur(self, inst: Inst) -> None:
        p = inst.ops["p"]["pred"]
        if p == 7:
            return super().op_r2ur(inst)  # type: ignore[misc]
        d = inst.ops.get("d", {}).get("reg", 255)
        b = Block()
        b.set_reg(d, self.src_ir(b, inst, "a"), "UR")  # type: ignore[attr-defined]
        b.set_pred(p, b.const_bool(False))
        ir_spirv.emit(self, b)
