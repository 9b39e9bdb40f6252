"""SM86 compute control flow beyond BRA/EXIT: calls (CALL.REL/CALL.ABS, RET.REL/RET.ABS) inlined
for the structuriser or followed through the dispatcher loop, BPT.TRAP, and the convergence
barriers (BSSY/BSYNC/BREAK: no-ops, one invocation is one thread).

CALL.REL jumps (the caller has put the return address in a register pair with MOV, as nvcc
does), RET.REL jumps to that register + its target field (the code start), resolved against
the block table in the dispatcher loop."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block
from shader_svc.lower.base import DONE, TranslateError
from shader_svc.lower.barrier_red import BarrierReduce
from shader_svc.lower.cache import CacheControl
from shader_svc.lower.indirect import INDIRECT, IndirectBranch
from shader_svc.lower.mbarrier import MBarrier
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86
from shader_svc.spirv.structure import RET, Unstructured

WARP = {"SHFL", "VOTE"}


class Control86(IndirectBranch, CacheControl, BarrierReduce, MBarrier, Lower86):
    """Mixin of ``to_spirv.Compute86``: the blocks and control instructions of compute kernels."""

    # rows the control flow lowers (block ends, ``_control``) rather than a RULES handler: the
    # coverage table counts them translated (tests/shader_svc/isa_coverage.py)
    CONTROL_KEYS = ("BRA", "EXIT", "CALL", "CALL.ABS", "RET", "RET.ABS", "BPT", "BREAK")

    # --- calls inlined for the structuriser (spirv/expand.py) ----------------------------------
    STRUCT_BRANCH = ("BRA", "EXIT", "BPT", "CALL", "CALL.ABS", "CALL.ABS.R", "RET", "RET.ABS")

    def _step(self, blocks: list[list[Inst]], target):
        """States are the calls in progress (a tuple of (call block, return block)): CALL goes
        to the callee with its return block pushed, RET to the innermost return block.  RET
        jumps to a register (+ its field): it is taken to return to the block after the call
        only when the caller's block put exactly that address in that register with a MOV (as
        nvcc and ptxas do; the callee keeps it, saving it on its stack where it calls on);
        anything else — a guarded CALL/RET, another return address, a RET with no call in
        progress — is refused here and runs in the dispatcher loop, which follows the register."""
        base = super()._step(blocks, target)
        at = {ins.addr: k for k, ins in enumerate(self.insts)}

        def ret_addr(call_block: int, ra: int) -> int | None:
            # every write of the return register reaching the call moves one immediate (the
            # MOV may sit in an earlier block: a spurious leader, an over-approximated
            # indirect target, splits the caller's straight line)
            vals = self.known_values(self.insts, at[blocks[call_block][-1].addr], ra)
            return vals.pop() if vals is not None and len(vals) == 1 else None

        def callee(last: Inst) -> int | None:
            """The one address a call through a register (CALL.ABS Rn) can go to, else None."""
            vals = self.known_values(self.insts, at[last.addr], last.ops["a"]["reg"])
            return vals.pop() if vals is not None and len(vals) == 1 else None

        def step(i: int, st: tuple) -> list:
            last = blocks[i][-1]
            ir = last.row.ir
            dest = None
            if ir == "CALL.ABS.R" and self._unconditional(last):
                dest = callee(last)  # a function pointer with one value: a direct call
            if ir in INDIRECT and dest is None:
                self.indirect_step(last)
            if ir not in ("CALL", "CALL.ABS", "CALL.ABS.R", "RET", "RET.ABS", "BPT"):
                return base(i, st)
            if not self._unconditional(last):
                raise Unstructured(f"offset {last.addr:#x}: guarded {ir}")
            if ir == "BPT":
                return [(RET, st)]
            if ir in ("CALL", "CALL.ABS", "CALL.ABS.R"):
                if i + 1 >= len(blocks):
                    raise Unstructured(f"offset {last.addr:#x}: a call with no code after it")
                if dest is None:
                    dest = last.ops["target"]["target"] if ir == "CALL" else last.ops["target"]["imm"]
                return [(self._block_at(dest, last), st + ((i, i + 1),))]
            if not st:
                raise Unstructured(f"offset {last.addr:#x}: {ir} with no call in progress")
            call_block, back = st[-1]
            rt = last.ops["rt"]["target"] if ir == "RET" else last.ops["rt"]["imm"]
            ra = ret_addr(call_block, last.ops["ra"]["reg"])
            if ra is None or (ra + rt) & 0xFFFFFFFF != blocks[back][0].addr:
                raise Unstructured(f"offset {last.addr:#x}: {ir} to an address the caller did not set")
            return [(back, st[:-1])]

        return step

    def _block_at(self, addr: int, ins: Inst) -> int:
        t = next((k for k, a in enumerate(self._starts) if a == addr), None)
        if t is None:
            raise TranslateError(f"{ins.text()}: call target outside the program (an unlinked call?)", offset=ins.addr)
        return t

    def build(self) -> bytes:
        for ins in self.insts:
            if ins.row.ir in WARP and (ins.pred != 7 or ins.pred_not):
                raise TranslateError(
                    f"{ins.text()}: predicated warp-wide operation not translated (the 32-lane "
                    f"warp is emulated with workgroup barriers, which every invocation must "
                    f"reach)",
                    offset=ins.addr,
                )
        return super().build()

    # --- control flow -------------------------------------------------------------------------
    STRUCT_SKIP = ("BSSY", "BSYNC", "BREAK")

    def block_list(self) -> list[list[Inst]]:
        leaders = {self.insts[0].addr} if self.insts else set()
        addrs = {ins.addr for ins in self.insts}
        self._indirect = {}  # BRX address -> its bounded targets (lower/indirect.py)
        for i, ins in enumerate(self.insts):
            if ins.row.ir in INDIRECT:
                self._indirect[ins.addr] = self.jump_targets(self.insts, i, lambda a: a if a in addrs else None)
                leaders.update(a for _, a in self._indirect[ins.addr])
            if ins.row.ir in ("BRA", "EXIT", "CALL", "RET", "CALL.ABS", "RET.ABS", "BPT", *INDIRECT):
                if i + 1 < len(self.insts):
                    leaders.add(self.insts[i + 1].addr)
                if ins.row.ir in ("BRA", "CALL"):
                    leaders.add(ins.ops["target"]["target"])
                if ins.row.ir == "CALL.ABS":
                    leaders.add(ins.ops["target"]["imm"])
        blocks, cur = [], []
        for ins in self.insts:
            if ins.addr in leaders and cur:
                blocks.append(cur)
                cur = []
            cur.append(ins)
        if cur:
            blocks.append(cur)
        self._starts = [b[0].addr for b in blocks]
        return blocks

    def _control(self, ins: Inst, i: int, nxt: int, target) -> int | None:
        ir = ins.row.ir
        if ir in ("BSSY", "BSYNC", "BREAK"):
            return nxt
        if ir in INDIRECT:
            tgt = self.indirect_next(ins, self._indirect[ins.addr], lambda a: self._starts.index(a))
            return tgt if self._unconditional(ins) else self.select_ids(self._branch_guard(ins), tgt, nxt)
        if ir == "CALL":
            tgt = self.c(target(ins))
        elif ir == "CALL.ABS":
            tgt = self.c(self._block_at(ins.ops["target"]["imm"], ins))
        elif ir == "BPT":
            # a trap ends the kernel on the machine; here it ends the invocation
            tgt = self.c(DONE)
        elif ir in ("RET", "RET.ABS"):
            # the return address (a byte offset from the code start) + the target field
            rt = ins.ops["rt"]["target"] if ir == "RET" else ins.ops["rt"]["imm"]
            b = Block()
            ra = b.op("IAdd32", b.get_reg(ins.ops["ra"]["reg"]), b.const_u32(rt))  # RZ: GetReg lowers to 0
            t = b.const_u32(DONE)
            for k, start in enumerate(self._starts):  # the block table: the block starting there
                t = b.op("Select32", b.op("IEq32", ra, b.const_u32(start)), b.const_u32(k), t)
            tgt = ir_spirv.emit_value(self, b, t)
        else:
            return super()._control(ins, i, nxt, target)
        if self._unconditional(ins):
            return tgt
        return self.select_ids(self._branch_guard(ins), tgt, nxt)
