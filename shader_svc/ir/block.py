"""A block of IR: the operations one machine instruction (or more) became, in order, each
result a typed ``Value``.  ``Block.emit`` checks the operation against its row in ``ops.OPS``
(argument count and types, attributes), so an ISA part cannot build an ill-typed program."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from shader_svc.ir.ops import OPS, OpDef
from shader_svc.ir.types import Type


class IRError(TypeError):
    """An operation used against its row in ``ops.OPS`` (a bug of the ISA part that built it)."""


class Value(NamedTuple):
    """The result of operation ``index`` of its block."""

    index: int
    type: Type


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
        if attrs.keys() != d.attr_set:
            raise IRError(f"{name}: attributes {sorted(attrs)}, wants {sorted(d.attrs)}")
        res = Value(len(self.ops), d.result) if d.result is not None else None
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
