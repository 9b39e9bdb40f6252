"""SM53 control flow: the reconvergence stack.  SSY/PBK push a target, SYNC/BRK pop and jump
there, CAL/JCAL push the return point and RET pops it.  Each invocation runs alone in SPIR-V, so
a per-invocation stack (64 entries, typed: SYNC/BRK/RET unwind to their own kind) gives exactly
the single-thread semantics; the structuriser sees the stack as a static state
(``spirv/expand.py``), the dispatcher loop keeps it at run time.  A branch to a group's control
word resumes at the group's first instruction."""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import DONE, TranslateError
from shader_svc.lower.barrier_red import BARRIER_RED_RULES, BarrierReduce
from shader_svc.lower.cache import CACHE_RULES, CacheControl
from shader_svc.lower.indirect import INDIRECT, IndirectBranch
from shader_svc.lower.memory import ldc_ir
from shader_svc.sm53.decode import Inst
from shader_svc.sm53.lower import BRANCHES, Lower53
from shader_svc.spirv.structure import RET, Unstructured

STACK = 64  # entries of the emulated reconvergence stack (the machine spills its own to memory)
ENTRY_KIND = {"SSY": 1, "SYNC": 1, "PBK": 2, "BRK": 2, "CAL": 3, "JCAL": 3, "RET": 3}  # run-time stack entries' kinds
# shader-ctl: PCNT pushes a continue entry, CONT unwinds to the innermost one and goes there (as
# PBK/BRK; Ryujinx's decoder treats PCNT as a push op with PBK/SSY and CONT as a branch)
ENTRY_KIND.update({"PCNT": 4, "CONT": 4})
# shader-ctl: PRET pushes a return entry (RET's kind) without jumping: ptxas 12.9's indirect call
# is ``PRET ret`` + ``BRX Rn`` (printed with the comment INDIRECT_CALL), the callee's RET unwinding
# to it (function pointers and virtual functions, -O3; ``lower/indirect.py`` bounds the BRX)
ENTRY_KIND["PRET"] = 3
PUSHES = ("SSY", "PBK", "PCNT", "PRET")  # push their target
POPS = ("SYNC", "BRK", "CONT", "RET")  # unwind to their kind's innermost entry
WARP = {"VOTE", "SHFL"}
STRUCT_ENDS = ("BRA", "EXIT", "SYNC", "BRK", "RET", "BPT", "CONT")


def _entry_addr(t: int, base: int = 0) -> int:
    """A branch to a group's control word resumes at the group's first instruction (groups
    count from the code's start ``base``: graphics code starts after its header)."""
    return t + 8 if (t - base) % 32 == 0 else t


def _code_base(insts: list[Inst]) -> int:
    return insts[0].addr - 8 if insts else 0


def _target(ins: Inst, base: int) -> int:
    """Where a branch goes: relative targets are decoded as addresses; JCAL's is an offset from
    the code's start (the linked program's first byte)."""
    if ins.row.ir == "JCAL":
        return _entry_addr(base + ins.ops["t"]["imm"], base)
    return _entry_addr(ins.ops["t"]["target"], base)


def _blocks(insts: list[Inst], extra: set[int] = frozenset()) -> list[list[Inst]]:
    """Basic blocks; ``extra``: more leaders (an indirect branch's bounded targets)."""
    leaders = ({insts[0].addr} if insts else set()) | set(extra)
    base = _code_base(insts)
    for i, ins in enumerate(insts):
        ir = ins.row.ir
        if ir in ("BRA", "EXIT", *POPS, "CAL", "JCAL", "KIL", "BPT", *INDIRECT) and i + 1 < len(insts):
            leaders.add(insts[i + 1].addr)
        if ir in ("BRA", *PUSHES, "CAL", "JCAL"):
            leaders.add(_target(ins, base))
    blocks, cur = [], []
    for ins in insts:
        if ins.addr in leaders and cur:
            blocks.append(cur)
            cur = []
        cur.append(ins)
    if cur:
        blocks.append(cur)
    return blocks


class Control53(IndirectBranch, CacheControl, BarrierReduce, Lower53):
    """Mixin of ``to_spirv.Compute53``: blocks, the reconvergence stack, branches."""

    # --- control flow: the run-time stack in IR (``StackLoad`` / ``StackStore``, ir/ops.py) ---
    def _push(self, entry: int) -> None:
        """Push the constant ``entry`` (its kind in bits 28.., its block number below)."""
        b = Block()
        sp_var = self.var("sp", self.fn_u32)
        sp = b.emit("LoadVarU32", var=sp_var)
        b.op("StackStore", sp, b.const_u32(entry))
        b.emit("StoreVarU32", b.op("IAdd32", sp, b.const_u32(1)), var=sp_var)
        ir_spirv.emit(self, b)

    def var_array(self) -> int:
        if "stack" not in self.vars:
            arr = self.m.type("OpTypeArray", self.u32, self.c(STACK))
            self.vars["stack"] = (self.m.id(), self.m.type("OpTypePointer", self.m.E("StorageClass", "Function"), arr))
        return self.vars["stack"][0]

    def stack_load(self, index: int) -> int:
        """``StackLoad``: the entry at ``index`` mod STACK."""
        p = self.op("OpAccessChain", self.fn_u32, self.var_array(), self.op("OpBitwiseAnd", self.u32, index, self.c(STACK - 1)))
        return self.op("OpLoad", self.u32, p)

    def stack_store(self, index: int, value: int) -> None:
        """``StackStore``: ``value`` to the entry at ``index`` mod STACK."""
        p = self.op("OpAccessChain", self.fn_u32, self.var_array(), self.op("OpBitwiseAnd", self.u32, index, self.c(STACK - 1)))
        self.do("OpStore", p, value)

    def _stack_unwind(self, kind: int) -> int:
        """SYNC/BRK/RET at run time: pop entries until one of ``kind`` (its block number in the
        low 28 bits), as the machine unwinds its typed stack (a BRK out of an if inside a loop
        drops the if's SSY entry).  A loop in SPIR-V: pop, test the kind, repeat."""
        res = self.var("unwound", self.fn_u32)
        sp_var = self.var("sp", self.fn_u32)
        head, body, cont, merge = (self.label() for _ in range(4))
        self.end("OpBranch", head)
        self.put_label(head)
        self.merge("OpLoopMerge", merge, cont, 0)
        self.end("OpBranch", body)
        self.put_label(body)
        b = Block()
        v = self._stack_pop(b)
        b.emit("StoreVarU32", v, var=res)
        hit = b.op("IEq32", b.op("IShr32", v, b.const_u32(28)), b.const_u32(kind))
        empty = b.op("IEq32", b.emit("LoadVarU32", var=sp_var), b.const_u32(0))  # nothing left: stop (a bad program)
        self.end("OpBranchConditional", ir_spirv.emit_value(self, b, b.op("LOr", hit, empty)), merge, cont)
        self.put_label(cont)
        self.end("OpBranch", head)
        self.put_label(merge)
        b = Block()
        return ir_spirv.emit_value(self, b, b.op("IAnd32", b.emit("LoadVarU32", var=res), b.const_u32((1 << 28) - 1)))

    def _stack_pop(self, b: Block) -> Value:
        """The top entry, popped (built in ``b``)."""
        sp_var = self.var("sp", self.fn_u32)
        sp = b.op("ISub32", b.emit("LoadVarU32", var=sp_var), b.const_u32(1))
        b.emit("StoreVarU32", sp, var=sp_var)
        return b.op("StackLoad", sp)

    # --- control flow through the shared lowering (lower/control.py: ControlFlow.build) -------
    def build(self) -> bytes:
        for ins in self.insts:
            if ins.row.ir == "JCAL":
                self.need(ins, inc=1)
            if ins.row.ir == "BPT":
                self.need(ins, mode=3)  # a trap ends the kernel; here it ends the invocation
            if ins.row.ir == "PRET":
                self.need(ins, inc=1)  # PRET.NOINC: not emitted by ptxas, meaning not public
            if ins.row.ir == "JMX":
                self.need(ins, LMT=0)  # .LMT: not emitted by ptxas, meaning not public
            if ins.row.ir in WARP and (ins.pred != 7 or ins.pred_not):
                raise TranslateError(
                    f"{ins.text()}: predicated warp-wide operation not translated (the 32-lane "
                    f"warp is emulated with workgroup barriers, which every invocation must "
                    f"reach)",
                    offset=ins.addr,
                )
        return super().build()

    INST_BYTES = 8  # BRX's base: the next 8-byte slot
    # rows the control flow lowers (block ends, the stack, ``_control``) rather than a RULES
    # handler: the coverage table counts them translated (tests/shader_svc/isa_coverage.py)
    CONTROL_KEYS = tuple(sorted(BRANCHES | {"PCNT", "CONT", "PRET"}))

    def lowered(self, ir: str) -> bool:
        return (
            ir in INDIRECT
            or ir in ("PCNT", "CONT", "PRET")
            or ir in CACHE_RULES
            or ir in BARRIER_RED_RULES
            or ir == "MEMBAR"
            or super().lowered(ir)
        )

    def block_list(self) -> list[list[Inst]]:
        base = _code_base(self.insts)
        addrs = {ins.addr for ins in self.insts}

        def entry(raw: int) -> int | None:
            a = _entry_addr(raw, base)
            return a if a in addrs else None

        self._indirect = {}  # BRX address -> its bounded targets (lower/indirect.py)
        for i, ins in enumerate(self.insts):
            if ins.row.ir in INDIRECT:
                self._indirect[ins.addr] = self.jump_targets(self.insts, i, entry)
        blocks = _blocks(self.insts, {a for ts in self._indirect.values() for _, a in ts})
        self._starts = [b[0].addr for b in blocks]
        return blocks

    def op_ldc(self, inst: Inst) -> None:
        """An indexed LDC of a constant bank that is part of the program (the jump table of a
        BRX, ``lower/indirect.py``); other banks: the memory lowering's."""
        cv = inst.ops["c"]
        n = {4: 1, 5: 2}.get(inst.mods["size"])
        if cv["bank"] == 0 or self._program_bank(cv["bank"]) is None or inst.mods["mode"] or n is None:
            return super().op_ldc(inst)
        b = Block()
        ldc_ir(b, inst, cv["reg"], cv["off"], cv["bank"], n, inst.ops.get("d", {}).get("reg", 255))
        ir_spirv.emit(self, b)

    STRUCT_BRANCH = ("BRA", "EXIT", "SYNC", "BRK", "CAL", "JCAL", "RET", "BPT", "CONT")

    STRUCT_SKIP = PUSHES

    def _step(self, blocks: list[list[Inst]], target):
        """The reconvergence stack as the state ``spirv.expand`` walks, its entries typed as on
        the machine: SSY pushes (S, target), PBK (B, target), CAL/JCAL (C, return block) and go
        to the callee; SYNC unwinds to the innermost S entry, BRK to the innermost B, RET to the
        innermost C, dropping what was pushed above it (a BRK out of an if inside a loop leaves
        the if's SSY entry behind) and going to its block.  A block entered with two different
        stacks becomes two nodes (a function called from two places is inlined twice); an
        unwind that finds no entry of its kind on the path, or a stack deeper than STACK
        entries (recursion), is refused: the dispatcher loop's run-time stack runs it."""
        n = len(blocks)
        kinds = {"SSY": "S", "PBK": "B", "PCNT": "N", "PRET": "C", "CAL": "C", "JCAL": "C"}
        pops = {"SYNC": "S", "BRK": "B", "CONT": "N", "RET": "C"}

        def step(i: int, stack: tuple) -> list:
            nxt = i + 1 if i + 1 < n else RET
            for ins in blocks[i]:
                if ins.row.ir in PUSHES:
                    stack = stack + ((kinds[ins.row.ir], target(ins)),)
            last = blocks[i][-1]
            ir = last.row.ir
            if ir in INDIRECT:
                self.indirect_step(last)
            guarded = not self._unconditional(last)
            if ir in ("CAL", "JCAL"):
                if nxt == RET:
                    raise Unstructured(f"offset {last.addr:#x}: a call with no code after it")
                taken = (target(last), stack + (("C", nxt),))
            elif ir in ("BRA", "EXIT", "BPT"):
                taken = (target(last) if ir == "BRA" else RET, stack)
            elif ir in pops:
                j = next((k for k in range(len(stack) - 1, -1, -1) if stack[k][0] == pops[ir]), None)
                if j is None:
                    raise Unstructured(f"offset {last.addr:#x}: {ir} with nothing of its kind pushed on this path")
                taken = (stack[j][1], stack[:j])
            else:
                return [(nxt, stack)]
            if len(taken[1]) > STACK:
                raise Unstructured(f"reconvergence stack deeper than its {STACK} entries")
            return [taken, (nxt, stack)] if guarded and ir in STRUCT_ENDS else [taken]

        return step

    # a BRA may test the condition code besides its guard ('@P0 BRA CC.NEU, t'): taken when
    # both hold (the test: lower_int.cc_test_ir)
    @staticmethod
    def _cc_tested(ins: Inst) -> bool:
        return ins.ops.get("cc", {}).get("sym", 15) != 15

    def _unconditional(self, ins: Inst) -> bool:
        return super()._unconditional(ins) and not self._cc_tested(ins)

    def _branch_guard(self, ins: Inst) -> int:
        g = self._guard(ins) if not (ins.pred == 7 and not ins.pred_not) else self.m.const_bool(True)
        if self._cc_tested(ins):
            b = Block()
            t = ir_spirv.emit_value(self, b, self.cc_test_ir(b, ins, ins.ops["cc"]["sym"]))
            g = self.and_ids(g, t)
        return g

    def branch_target(self, ins: Inst) -> int:
        return _target(ins, _code_base(self.insts))

    def _prologue(self) -> None:
        self.do("OpStore", self.var("sp", self.fn_u32), self.c(0))
        self.do("OpStore", self.var("CC", self.fn_bool), self.m.const_bool(False))
        self.do("OpStore", self.var("CCZ", self.fn_bool), self.m.const_bool(False))
        self.do("OpStore", self.var("CCS", self.fn_bool), self.m.const_bool(False))

    def _control(self, ins: Inst, i: int, nxt: int, target) -> int | None:
        """SSY/PBK push their target; BRA/CAL/EXIT/SYNC/BRK/RET pick the next block (CAL pushes
        its return block; SYNC/BRK/RET pop, only when taken, hence a selection, not OpSelect)."""
        ir = ins.row.ir
        if ir in PUSHES:
            self._push(target(ins) | ENTRY_KIND[ir] << 28)
            return nxt
        if ir in INDIRECT:
            tgt = self.indirect_next(ins, self._indirect[ins.addr], lambda a: self._starts.index(a))
            return tgt if self._unconditional(ins) else self.select_ids(self._branch_guard(ins), tgt, nxt)
        if ir not in BRANCHES and ir != "CONT":
            return None
        if ir in ("CAL", "JCAL"):
            self._push(i + 1 | ENTRY_KIND["CAL"] << 28)
        if self._unconditional(ins):
            return self._branch_value(ins, target)
        p = self._branch_guard(ins)
        then, after = self.label(), self.label()
        res = self.var(f"t{ins.addr}", self.fn_u32)
        self.do("OpStore", res, nxt)
        self.do("OpSelectionMerge", after, 0)
        self.do("OpBranchConditional", p, then, after)
        self.put_label(then)
        self.do("OpStore", res, self._branch_value(ins, target))
        self.do("OpBranch", after)
        self.put_label(after)
        return self.op("OpLoad", self.u32, res)

    def _branch_value(self, ins: Inst, target) -> int:
        ir = ins.row.ir
        if ir in ("EXIT", "BPT"):
            return self.c(DONE)
        if ir in ("BRA", "CAL", "JCAL"):
            return self.c(target(ins))
        return self._stack_unwind(ENTRY_KIND[ir])  # SYNC, BRK, CONT, RET
