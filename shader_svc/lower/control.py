"""The lowering driver and control flow: the program's machine basic blocks, then the IR
function (``ir/block.py``) of the whole program, structured from ``spirv/structure.py``'s plan
(calls inlined by ``spirv/expand.py``) where the graph allows, otherwise a dispatcher loop
(``loop { switch (block) { case N: ... } }``), structured for any CFG; then the optimiser
(``ir/optimize.py``) and the one lowering to SPIR-V (``ir/to_spirv.emit_function``).  IR basic
blocks span many instructions: a block of the plan is one, split only where a guarded
instruction needs its selection (``if (guard) { instruction }``); their terminators and
structured merges are the IR's (``Term``, ``Merge``).  An ISA supplies its blocks, where a
branch goes, and how its control-flow instructions pick the next block (the hook methods
below)."""

from __future__ import annotations

import gc
import logging

from shader_svc.ir import optimize as ir_opt
from shader_svc.ir import spaces as ir_spaces
from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Op
from shader_svc.ir.types import Type
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import DONE, LowerBase, TranslateError
from shader_svc.spirv import structure
from shader_svc.spirv.expand import Step, expand

log = logging.getLogger(__name__)


def _blocks(insts: list[Inst]) -> list[list[Inst]]:
    leaders = {insts[0].addr} if insts else set()
    for i, ins in enumerate(insts):
        if ins.row.ir in ("BRA", "EXIT"):
            if i + 1 < len(insts):
                leaders.add(insts[i + 1].addr)
            if ins.row.ir == "BRA":
                leaders.add(ins.ops["target"]["target"])
    blocks, cur = [], []
    for ins in insts:
        if ins.addr in leaders and cur:
            blocks.append(cur)
            cur = []
        cur.append(ins)
    if cur:
        blocks.append(cur)
    return blocks


class ControlFlow(LowerBase):
    """Mixin: blocks, the structured emission and the dispatcher loop (module docstring)."""

    # --- whole function ----------------------------------------------------------------------
    # The dispatcher loop is shared with the SM53 lowering; an architecture supplies its basic
    # blocks, where a branch goes, and how its control-flow instructions pick the next block.
    def block_list(self) -> list[list[Inst]]:
        return _blocks(self.insts)

    def branch_target(self, ins: Inst) -> int:
        """Address a branch instruction goes to."""
        return ins.ops["target"]["target"]

    def _prologue(self) -> None:
        """Stores at the function's start (SM53: its reconvergence stack pointer, carry flag)."""

    def _lanes(self, alive: bool) -> None:
        """The emulated warp's record of running lanes (``lower/warp.py``, shader-assert): set
        at the entry, cleared at every return (an EXIT, or a trap that ends the invocation)."""
        live = getattr(self, "warp_live", None)
        if live is not None:
            live(alive)

    def _block_start(self, block: list[Inst]) -> None:
        """Called at the start of every basic block (its instructions), in block order."""

    # A branch (BRA, EXIT, CALL, RET on SM86) may carry a second predicate operand besides its
    # guard (``@P0 BRA P1, target``): it is taken when both hold.
    @staticmethod
    def _unconditional(ins: Inst) -> bool:
        pp = ins.ops.get("pp")
        return ins.pred == 7 and not ins.pred_not and (pp is None or (pp["pred"] == 7 and not pp["not"]))

    def _branch_guard(self, ins: Inst) -> int:
        g = self._guard(ins)
        pp = ins.ops.get("pp")
        if pp is not None and not (pp["pred"] == 7 and not pp["not"]):
            b = Block()
            g = ir_spirv.emit_value(self, b, b.op("LAnd", self.fn.fixed_value(g, Type.BOOL), b.get_pred(pp["pred"], pp["not"])))
        return g

    # the dispatcher's next-block values are ids: a constant (``self.c``) or an IR value's
    # placeholder; these helpers join them in IR rows (no SPIR-V written while building)
    def and_ids(self, a: int, b: int) -> int:
        """``a && b`` of two boolean ids."""
        blk, fv = Block(), self.fn.fixed_value
        return ir_spirv.emit_value(self, blk, blk.op("LAnd", fv(a, Type.BOOL), fv(b, Type.BOOL)))

    def select_ids(self, cond: int, a: int, b: int) -> int:
        """``cond ? a : b`` of a boolean id and two u32 ids."""
        blk, fv = Block(), self.fn.fixed_value
        return ir_spirv.emit_value(self, blk, blk.op("Select32", fv(cond, Type.BOOL), fv(a, Type.U32), fv(b, Type.U32)))

    def _control(self, ins: Inst, i: int, nxt: int, target) -> int | None:
        """A control-flow instruction of block ``i``: the next block's number (an id) after it,
        given the one so far (``nxt``); None when ``ins`` is not control flow.  ``target(ins)``
        is the block number its branch target starts."""
        ir = ins.row.ir
        if ir not in ("BRA", "EXIT"):
            return None
        tgt = self.c(DONE if ir == "EXIT" else target(ins))
        if self._unconditional(ins):
            return tgt
        return self.select_ids(self._branch_guard(ins), tgt, nxt)

    # structured lowering: instructions that end a block with its (guarded) branch, and those
    # that only feed the static successors (SM53's SSY/PBK) and emit nothing
    STRUCT_BRANCH = ("BRA", "EXIT")

    STRUCT_SKIP: tuple[str, ...] = ()

    # instructions the structuriser never duplicates (``structure.plan``'s tail duplication):
    # every invocation of the workgroup must meet the same instance of a barrier, and the
    # emulated warp's exchanges are barriers
    PINNED = ("BAR", "BAR.RED", "SHFL", "VOTE", "MATCH", "REDUX")

    def structure_ok(self) -> bool:
        """Whether the structuriser may try this program (SM53: not with CAL/RET, whose return
        targets are run-time values)."""
        return True

    def _block_end(self, block: list[Inst]) -> None:
        """Called after the instructions of every basic block."""

    def build(self) -> bytes:
        # the cyclic garbage collector off while the program is built: a large one holds millions
        # of IR and SPIR-V tuples, none in a cycle, which each full collection walks again (the
        # corpus's largest program, 18,952 instructions: a third of its translation time)
        was = gc.isenabled()
        gc.disable()
        try:
            return self._build()
        finally:
            if was:
                gc.enable()

    def _build(self) -> bytes:
        for ins in self.insts:
            if not self.lowered(ins.row.ir):
                why = self.untranslated_why(ins) if hasattr(self, "untranslated_why") else "not translated yet"
                raise TranslateError(f"{ins.text()} (word {ins.word:#x}): {why}", offset=ins.addr)
        blocks = self.block_list()
        index = {b[0].addr: i for i, b in enumerate(blocks)}

        def target(ins: Inst) -> int:
            t = index.get(self.branch_target(ins))
            if t is None:
                raise TranslateError(f"{ins.text()}: branch target outside the kernel", offset=ins.addr)
            return t

        self.structured = False
        steps = None
        if self.structure_ok():
            try:
                nodes, succ = expand(len(blocks), self._step(blocks, target))
                steps = structure.plan(
                    succ,
                    [len(blocks[n]) for n in nodes],
                    frozenset(k for k, n in enumerate(nodes) if any(i.row.ir in self.PINNED for i in blocks[n])),
                )
            except structure.Unstructured as e:
                log.debug("dispatcher loop: %s", e)
        entry = self.label()
        self.put_label(entry)
        self._prologue()
        self._lanes(True)
        if steps is not None:
            self.structured = True
            self._cond: dict[int, int | None] = {}
            self._emit_plan(steps, [blocks[n] for n in nodes], {})
        else:
            self._build_dispatcher(blocks, target)
        return self._emit_function(entry, self._lower_ir())

    def _lower_ir(self) -> list[tuple]:
        """The IR function optimised, then lowered: the SPIR-V body (its entry label first)."""
        if not self.OPTIMIZE:
            return ir_spirv.emit_function(self, self.fn, {})
        consts, self.opt_stats = ir_opt.optimize(self.fn, self._var_of)
        layout = getattr(self, "GENERIC_LAYOUT", None)
        if layout is not None:  # the generic accesses' spaces, where provable (one path each)
            self.space_stats = ir_spaces.annotate(self.fn, consts, layout)
        return ir_spirv.emit_function(self, self.fn, consts)

    def _var_of(self, o: Op) -> int:
        """The function variable a read/write operation touches (``ir_opt.ZERO``: RZ, URZ, PT)."""
        n, a = o.op.name, o.attrs
        if n in ("GetReg", "SetReg"):
            if (a["file"] == "R" and a["reg"] == 255) or (a["file"] == "UR" and a["reg"] == 63):
                return ir_opt.ZERO
            return self.var(f"{a['file']}{a['reg']}", self.fn_u32)
        if n in ("GetPred", "SetPred"):
            if a["pred"] == 7:
                return ir_opt.ZERO
            return self.var(f"{a.get('file', 'P')}{a['pred']}", self.fn_bool)
        if n in ("GetFlag", "SetFlag"):
            return self.var(a["flag"], self.fn_bool)
        return a["var"]

    # --- structured control flow (spirv/structure.py's plan) -------------------------------------
    def _step(self, blocks: list[list[Inst]], target) -> Step:
        """The transfer function ``spirv.expand`` walks: here the state never changes (an
        architecture with calls or a reconvergence stack keeps them in it)."""
        succ = self._successors(blocks, target)
        return lambda i, st: [(t, st) for t in succ[i]]

    def _successors(self, blocks: list[list[Inst]], target) -> list[list[int]]:
        """Per block: [next] or [taken, fallthrough] for its guarded branch; structure.RET = leaves
        the program (EXIT, or the end of the code)."""
        out = []
        for i, b in enumerate(blocks):
            nxt = i + 1 if i + 1 < len(blocks) else structure.RET
            last = b[-1]
            ir = last.row.ir
            if ir in ("BRA", "EXIT"):
                t = structure.RET if ir == "EXIT" else target(last)
                out.append([t] if self._unconditional(last) else [t, nxt])
            else:
                out.append([nxt])
        return out

    def _lower_guarded(self, ins: Inst) -> None:
        if not (ins.pred == 7 and not ins.pred_not):
            then, after = self.label(), self.label()
            p = self._guard(ins)
            self.merge("OpSelectionMerge", after, 0)
            self.end("OpBranchConditional", p, then, after)
            self.put_label(then)
            self.lower(ins)
            self.end("OpBranch", after)
            self.put_label(after)
        else:
            self.lower(ins)

    def _emit_block(self, i: int, b: list[Inst]) -> None:
        self._block_start(b)
        cond = None
        for ins in b:
            if ins.row.ir in ("KILL", "KIL"):
                self.kill(ins)
            elif ins.row.ir in self.STRUCT_BRANCH:
                if not self._unconditional(ins):
                    cond = self._branch_guard(ins)
            elif ins.row.ir in self.STRUCT_SKIP:
                continue
            else:
                self._lower_guarded(ins)
        self._block_end(b)
        self._cond[i] = cond

    def _emit_plan(self, steps: list, blocks: list[list[Inst]], ctx: dict) -> None:
        """Emit a plan (see spirv/structure.py) into the open block; ``ctx``: the labels of the
        innermost selection merge ('stop'), loop continue ('cont') and loop merge ('break')."""
        for st in steps:
            kind = st[0]
            if kind == "block":
                self._emit_block(st[1], blocks[st[1]])
            elif kind == "if":
                merge, then, other = self.label(), self.label(), self.label()
                self.merge("OpSelectionMerge", merge, 0)
                self.end("OpBranchConditional", self._cond[st[1]], then, other)
                for lab, arm in ((then, st[2]), (other, st[3])):
                    self.put_label(lab)
                    self._emit_plan(arm, blocks, {**ctx, "stop": merge})
                self.put_label(merge)
            elif kind == "loop":
                head, body, cont, merge = (self.label() for _ in range(4))
                self.end("OpBranch", head)
                self.put_label(head)
                self.merge("OpLoopMerge", merge, cont, 0)
                self.end("OpBranch", body)
                self.put_label(body)
                self._emit_plan(st[2], blocks, {"cont": cont, "break": merge})
                self.put_label(cont)
                self.end("OpBranch", head)
                self.put_label(merge)
            elif kind in ("stop", "cont", "break"):
                self.end("OpBranch", ctx[kind])
            elif kind == "ret":
                self._lanes(False)
                self._epilogue()
                self.end("OpReturn")
            else:
                self.end("OpUnreachable")

    # --- the dispatcher loop: any CFG ------------------------------------------------------------
    def _build_dispatcher(self, blocks: list[list[Inst]], target) -> None:
        blk = self.var("block", self.fn_u32)
        header, sw, swmerge, cont, merge = (self.label() for _ in range(5))
        self.do("OpStore", blk, self.c(0))
        self.end("OpBranch", header)
        self.put_label(header)
        self.merge("OpLoopMerge", merge, cont, 0)
        self.end("OpBranch", sw)
        self.put_label(sw)
        cur = self.op("OpLoad", self.u32, blk)
        case_labels = [self.label() for _ in blocks]
        self.merge("OpSelectionMerge", swmerge, 0)
        self.end("OpSwitch", cur, swmerge, *[x for i, lab in enumerate(case_labels) for x in (i, lab)])
        for i, (b, lab) in enumerate(zip(blocks, case_labels)):
            self.put_label(lab)
            self._block_start(b)
            nxt = self.c(i + 1 if i + 1 < len(blocks) else DONE)
            for ins in b:
                if ins.row.ir in ("KILL", "KIL"):  # a terminator: always in its own conditional block
                    self.kill(ins)
                    continue
                after_ctl = self._control(ins, i, nxt, target)
                if after_ctl is not None:
                    nxt = after_ctl
                    continue
                self._lower_guarded(ins)
            self._block_end(b)
            self.do("OpStore", blk, nxt)
            self.end("OpBranch", swmerge)
        self.put_label(swmerge)
        self.end("OpBranch", cont)
        self.put_label(cont)
        b = Block()
        again = ir_spirv.emit_value(self, b, b.op("INe32", b.emit("LoadVarU32", var=blk), b.const_u32(DONE)))
        self.end("OpBranchConditional", again, header, merge)
        self.put_label(merge)
        self._lanes(False)
        self._epilogue()
        self.end("OpReturn")
