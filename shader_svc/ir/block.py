"""The IR's containers.  ``Block``: the operations one machine instruction became, in order, each
result a typed ``Value``; ``Block.emit`` checks the operation against its row in ``ops.OPS``
(argument count and types, attributes), so an ISA part cannot build an ill-typed program.
``Function``: the whole program as ``BasicBlock``s, each a run of operations (many machine
instructions' blocks, appended by the lowering driver) ended by one explicit ``Term``inator
(branch, conditional branch, switch, return, kill, unreachable) and, at a structured construct's
header, its merge (``Merge``: a selection's merge block, a loop's merge and continue blocks).
A basic block holds nothing but typed operations: every instruction of both ISAs, graphics and
compute, is lowered through them (the lowering refuses SPIR-V written while the function is
built, ``lower/base.py``), so the optimiser (``ir/optimize.py``) sees the whole program.

Values are numbered across the process (``Value.index``), so a value of one machine instruction's
block can be used by a later one of the same function."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from shader_svc.ir.ops import OPS, OpDef
from shader_svc.ir.types import Type


class IRError(TypeError):
    """An operation used against its row in ``ops.OPS`` (a bug of the ISA part that built it)."""


class Value(NamedTuple):
    """An operation's result: ``index`` is unique in the process (``_numbers``)."""

    index: int
    type: Type


_numbers = itertools.count()  # value numbers: unique, so blocks can be joined into a function


class Op(NamedTuple):
    op: OpDef
    args: tuple[Value, ...]
    attrs: dict[str, Any]
    result: Value | None


@dataclass
class Block:
    ops: list[Op] = field(default_factory=list)

    def emit(self, name: str, *args: Value, **attrs: Any) -> Value | None:
        d = OPS.get(name)
        if d is None:
            raise IRError(f"unknown IR operation {name}")
        got = tuple([a.type for a in args])
        if got != d.args:
            raise IRError(f"{name}: arguments {[t.value for t in got]}, wants {[t.value for t in d.args]}")
        if (attrs or d.attrs) and attrs.keys() != d.attr_set:
            raise IRError(f"{name}: attributes {sorted(attrs)}, wants {sorted(d.attrs)}")
        res = Value(next(_numbers), d.result) if d.result is not None else None
        self.ops.append(Op(d, args, attrs, res))
        return res

    # the operations, by name (one line each; the row in ops.OPS is the contract)
    def get_reg(self, reg: int, file: str = "R") -> Value:
        return self.emit("GetReg", reg=reg, file=file)

    def set_reg(self, reg: int, v: Value, file: str = "R") -> None:
        self.emit("SetReg", v, reg=reg, file=file)

    def const_u32(self, value: int) -> Value:
        return self.emit("ConstU32", value=value & 0xFFFFFFFF)

    def const_u64(self, value: int) -> Value:
        return self.emit("ConstU64", value=value & 0xFFFFFFFFFFFFFFFF)

    def cbank_u32(self, bank: int, offset: int, inst: Any) -> Value:
        return self.emit("CBankU32", bank=bank, offset=offset, inst=inst)

    def get_pred(self, pred: int, negate: bool = False, file: str = "P") -> Value:
        return self.emit("GetPred", pred=pred, file=file, **{"not": bool(negate)})

    def set_pred(self, pred: int, v: Value) -> None:
        self.emit("SetPred", v, pred=pred)

    def const_bool(self, value: bool) -> Value:
        return self.emit("ConstBool", value=bool(value))

    def op(self, name: str, *args: Value) -> Value:
        """An operation without attributes (``FAdd32``, ``BitcastF32``...)."""
        return self.emit(name, *args)


def global_words_ir(b: Block, base: Value, off: int, n: int, reg: int, load: bool) -> None:
    """``n`` consecutive words at the global address ``base`` + ``off`` loaded into (``load``)
    or stored from registers reg, reg+1...; RZ (255) discards loads and stores zeros."""
    for i in range(n):
        ptr = b.op("GlobalPtr", b.op("IAdd64", base, b.const_u64(off + 4 * i)))
        if load:
            if reg != 255:
                b.set_reg(reg + i, b.op("LoadGlobal32", ptr))
        else:
            b.emit("StoreGlobal32", ptr, b.get_reg(reg + i) if reg != 255 else b.const_u32(0))


class Term(NamedTuple):
    """A basic block's terminator, named by its SPIR-V instruction: ``OpBranch`` (args: target
    label), ``OpBranchConditional`` (condition, true label, false label), ``OpSwitch``
    (selector, default label, then literal/label pairs), ``OpReturn``, ``OpKill``,
    ``OpTerminateInvocation``, ``OpUnreachable``.  A condition or selector is a SPIR-V id (a
    placeholder where it is an IR value)."""

    kind: str
    args: tuple = ()

    def successors(self) -> list[int]:
        if self.kind == "OpBranch":
            return [self.args[0]]
        if self.kind == "OpBranchConditional":
            return [self.args[1], self.args[2]]
        if self.kind == "OpSwitch":
            return [self.args[1], *self.args[3::2]]
        return []


class Merge(NamedTuple):
    """A structured construct's header annotation: ``OpSelectionMerge`` (args: merge label,
    control) or ``OpLoopMerge`` (merge label, continue label, control)."""

    kind: str
    args: tuple


@dataclass
class BasicBlock:
    label: int  # its SPIR-V label id
    items: list[Op] = field(default_factory=list)
    merge: Merge | None = None
    term: Term | None = None


@dataclass
class Function:
    """The program: its basic blocks in emission order (the first is the entry); ``fixed``:
    values that stand for a module-level id (a constant the driver stores, e.g. the dispatcher's
    first block number); ``placeholders``: the ids handed to the driver for IR values (id ->
    value: a terminator's condition, a value the driver stores), resolved when lowered."""

    blocks: list[BasicBlock] = field(default_factory=list)
    fixed: dict[int, int] = field(default_factory=dict)
    placeholders: dict[int, Value] = field(default_factory=dict)

    @property
    def current(self) -> BasicBlock:
        b = self.blocks[-1] if self.blocks else None
        if b is None or b.term is not None:
            raise IRError("an operation after a terminator without a label (a lowering bug)")
        return b

    def start(self, label: int) -> BasicBlock:
        if self.blocks and self.blocks[-1].term is None:
            raise IRError(f"label {label}: the previous block has no terminator (a lowering bug)")
        b = BasicBlock(label)
        self.blocks.append(b)
        return b

    @staticmethod
    def new_value(ty: Type) -> Value:
        return Value(next(_numbers), ty)

    def fixed_value(self, spv_id: int, ty: Type) -> Value:
        """The IR value of a module-level id (or a placeholder's own value)."""
        v = self.placeholders.get(spv_id)
        if v is not None:
            return v
        v = Value(next(_numbers), ty)
        self.fixed[v.index] = spv_id
        return v
