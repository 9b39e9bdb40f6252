"""SSA clean-up of a translated function body, before it is encoded.

The lowerings (``sm53``/``sm86`` ``to_spirv*``) keep every machine register in a function
variable and read it with ``OpLoad`` / write it with ``OpStore`` at each instruction: simple and
correct for any control flow.  This pass turns that into SSA values where dominance allows and
cleans up after it, in one forward and two backward sweeps over the control-flow graph:

1. **Promotion to SSA values** (forward, blocks in reverse post-order): a register variable's
   value is known at a point when the same SSA id reaches it on every path (available values:
   a store's object, or an earlier load's result).  A load of a known variable is replaced by
   that id.  Loop back edges are taken pessimistically (nothing is known at a loop header on
   the first sweep), so an id replaces a load only where its definition dominates the load.
2. **Constant folding** (same sweep): integer, bitwise, shift, comparison, logical, select and
   bit-cast/width conversions whose operands are constants become constants; identities
   (``x + 0``, ``x | 0``, ``x & ~0``, ``x * 1``, ``x << 0``, ``select(c, x, x)``) become ``x``.
   Floating-point arithmetic is never folded: the device's denormal and rounding behaviour is
   the device's.
3. **Dead stores** (backward liveness of the register variables): a store whose variable is
   read on no path before it is written again, or before the function returns, goes.
4. **Dead code**: instructions without side effects whose results nobody uses go, repeatedly.

Only variables used solely as the pointer of ``OpLoad``/``OpStore`` are touched (a local-memory
array reached through ``OpAccessChain`` is left alone).  Ids are told from literals by the SPIR-V
grammar's operand kinds, so no operand is misread.  A body with ``OpPhi`` or ``OpFunctionCall``
is returned as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from shader_svc.spirv.grammar import _grammar_path

if TYPE_CHECKING:  # the builder calls this module: a run-time import would be a loop
    from shader_svc.spirv.builder import Module

TERMINATORS = {
    "OpBranch",
    "OpBranchConditional",
    "OpSwitch",
    "OpReturn",
    "OpReturnValue",
    "OpKill",
    "OpUnreachable",
    "OpTerminateInvocation",
}
# Instructions without side effects: removable when their result is unused.
PURE = {
    "OpLoad",
    "OpAccessChain",
    "OpInBoundsAccessChain",
    "OpIAdd",
    "OpISub",
    "OpIMul",
    "OpUDiv",
    "OpSDiv",
    "OpUMod",
    "OpSRem",
    "OpSMod",
    "OpFAdd",
    "OpFSub",
    "OpFMul",
    "OpFDiv",
    "OpFRem",
    "OpFMod",
    "OpFNegate",
    "OpSNegate",
    "OpNot",
    "OpBitwiseAnd",
    "OpBitwiseOr",
    "OpBitwiseXor",
    "OpShiftLeftLogical",
    "OpShiftRightLogical",
    "OpShiftRightArithmetic",
    "OpBitFieldInsert",
    "OpBitFieldSExtract",
    "OpBitFieldUExtract",
    "OpBitReverse",
    "OpBitCount",
    "OpBitcast",
    "OpUConvert",
    "OpSConvert",
    "OpFConvert",
    "OpConvertFToU",
    "OpConvertFToS",
    "OpConvertUToF",
    "OpConvertSToF",
    "OpSelect",
    "OpIEqual",
    "OpINotEqual",
    "OpUGreaterThan",
    "OpSGreaterThan",
    "OpUGreaterThanEqual",
    "OpSGreaterThanEqual",
    "OpULessThan",
    "OpSLessThan",
    "OpULessThanEqual",
    "OpSLessThanEqual",
    "OpFOrdEqual",
    "OpFUnordEqual",
    "OpFOrdNotEqual",
    "OpFUnordNotEqual",
    "OpFOrdLessThan",
    "OpFUnordLessThan",
    "OpFOrdGreaterThan",
    "OpFUnordGreaterThan",
    "OpFOrdLessThanEqual",
    "OpFUnordLessThanEqual",
    "OpFOrdGreaterThanEqual",
    "OpFUnordGreaterThanEqual",
    "OpLogicalEqual",
    "OpLogicalNotEqual",
    "OpLogicalOr",
    "OpLogicalAnd",
    "OpLogicalNot",
    "OpIsNan",
    "OpIsInf",
    "OpCompositeConstruct",
    "OpCompositeExtract",
    "OpCompositeInsert",
    "OpVectorShuffle",
    "OpCopyObject",
    "OpExtInst",
    "OpSampledImage",
    "OpImage",
    "OpConvertUToPtr",
    "OpConvertPtrToU",
    "OpIAddCarry",
    "OpISubBorrow",
    "OpUMulExtended",
    "OpSMulExtended",
    "OpDot",
    "OpVectorExtractDynamic",
    "OpVectorInsertDynamic",
    "OpAny",
    "OpAll",
    "OpImageQuerySizeLod",
    "OpImageQuerySize",
    "OpImageQueryLevels",
}


FOLDABLE = {
    "OpSelect",
    "OpIAdd",
    "OpISub",
    "OpIMul",
    "OpUDiv",
    "OpUMod",
    "OpBitwiseAnd",
    "OpBitwiseOr",
    "OpBitwiseXor",
    "OpNot",
    "OpSNegate",
    "OpShiftLeftLogical",
    "OpShiftRightLogical",
    "OpShiftRightArithmetic",
    "OpIEqual",
    "OpINotEqual",
    "OpULessThan",
    "OpULessThanEqual",
    "OpUGreaterThan",
    "OpUGreaterThanEqual",
    "OpSLessThan",
    "OpSLessThanEqual",
    "OpSGreaterThan",
    "OpSGreaterThanEqual",
    "OpLogicalNot",
    "OpLogicalAnd",
    "OpLogicalOr",
    "OpLogicalEqual",
    "OpLogicalNotEqual",
    "OpBitcast",
    "OpUConvert",
    "OpSConvert",
}


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


def _id_positions(op: str, args: list[int]) -> list[int] | None:
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


@dataclass(slots=True)
class _Ins:
    op: str
    ty: int | None
    res: int | None
    args: list[int]
    ids: list[int]  # positions in args that are ids
    dead: bool = False

    def tuple(self) -> tuple:
        head = ((self.ty,) if self.ty is not None else ()) + ((self.res,) if self.res is not None else ())
        return (self.op, *head, *self.args)


@dataclass
class _Block:
    label: int | None
    ins: list[_Ins] = field(default_factory=list)
    succ: list[int | None] = field(default_factory=list)


@dataclass
class Stats:
    before: int = 0
    after: int = 0
    loads_forwarded: int = 0
    folded: int = 0
    stores_removed: int = 0
    removed_dead: int = 0
    removed_ids: set[int] = field(default_factory=set)  # results that no longer exist


def optimize(body: list[tuple], m: Module, variables: set[int]) -> tuple[list[tuple], Stats]:
    """The optimised body (same form: ``(op, [type], [result], *operands)`` tuples of ints) and
    what changed.  ``variables``: the Function-storage variables the body may promote."""
    st = Stats(before=len(body))
    parsed = _parse(body)
    if parsed is None:
        st.after = len(body)
        return body, st
    blocks = _blocks(parsed)
    if blocks is None:
        st.after = len(body)
        return body, st
    promotable = _promotable(parsed, variables)
    folder = _Folder(m)
    _forward(blocks, promotable, folder, st)
    _dead_stores(blocks, promotable, st)
    _dead_code(blocks, st)
    out = [i.tuple() if i.op != "OpLabel" else ("OpLabel", i.res) for b in blocks for i in b.ins if not i.dead]
    st.removed_ids = {i.res for b in blocks for i in b.ins if i.dead and i.res is not None}
    st.after = len(out)
    return out, st


_LAYOUT: dict[tuple[str, int], tuple | None] = {}


def _layout(op: str, n: int) -> tuple | None:
    """(operand start, has type, has result, tail-enum position or None, id positions) of an
    instruction ``op`` of ``n`` words after its name, cached; None where the body is left alone."""
    key = (op, n)
    if key not in _LAYOUT:
        shapes, _ = _grammar()
        shape = shapes.get(op)
        if shape is None or op in ("OpPhi", "OpFunctionCall"):
            _LAYOUT[key] = None
        else:
            k = 1 + shape.has_type + shape.has_result
            tail = _tail_enum(op)
            # value-independent positions only for the simple shapes; the others (image operand
            # masks, tail enums) are worked out per instruction
            ids = _id_positions(op, [0] * (n + 1 - k)) if tail is None and _simple(op) is not None else None
            if ids is None and tail is None and _simple(op) is not None:
                _LAYOUT[key] = None  # does not parse: the body is left alone
                return None
            _LAYOUT[key] = (k, shape.has_type, shape.has_result, tail, ids)
    return _LAYOUT[key]


def _parse(body: list[tuple]) -> list[_Ins] | None:
    out = []
    append = out.append
    for t in body:
        op = t[0]
        if op == "OpLabel":
            append(_Ins(op, None, t[1], [], []))
            continue
        lay = _LAYOUT.get((op, len(t) - 1), False)
        if lay is False:
            lay = _layout(op, len(t) - 1)
        if lay is None:
            return None
        k, has_type, has_result, tail, ids = lay
        rest = list(t[k:])
        if tail is not None:  # OpLoad/OpStore...: cached by the mask's value
            ids = _POSITIONS3.get((op, len(rest), rest[tail] if len(rest) > tail else None), 0)
            if ids == 0:
                ids = _id_positions(op, rest)
            if ids is None:
                return None
        elif ids is None:  # the positions depend on an operand's value
            ids = _id_positions(op, rest)
            if ids is None:
                return None
        append(_Ins(op, t[1] if has_type else None, t[k - 1] if has_result else None, rest, ids))
    return out


def _blocks(ins: list[_Ins]) -> list[_Block] | None:
    blocks = [_Block(None)]
    for i in ins:
        if i.op == "OpLabel":
            blocks.append(_Block(i.res, [i]))
            continue
        blocks[-1].ins.append(i)
    for b in blocks:
        term = b.ins[-1] if b.ins else None
        if term is None or term.op not in TERMINATORS:
            return None
        a = term.args
        if term.op == "OpBranch":
            b.succ = [a[0]]
        elif term.op == "OpBranchConditional":
            b.succ = [a[1], a[2]]
        elif term.op == "OpSwitch":
            b.succ = [a[1]] + a[3::2]
    return blocks


def _promotable(ins: list[_Ins], variables: set[int]) -> set[int]:
    bad = set()
    for i in ins:
        for p in i.ids:
            v = i.args[p]
            if v in variables and not ((i.op == "OpLoad" or i.op == "OpStore") and p == 0):
                bad.add(v)
    return variables - bad


def _rpo(blocks: list[_Block]) -> list[int]:
    index = {b.label: k for k, b in enumerate(blocks)}
    seen, order = set(), []

    def visit(k: int) -> None:
        stack = [(k, iter(blocks[k].succ))]
        seen.add(k)
        while stack:
            node, it = stack[-1]
            for s in it:
                j = index.get(s)
                if j is not None and j not in seen:
                    seen.add(j)
                    stack.append((j, iter(blocks[j].succ)))
                    break
            else:
                stack.pop()
                order.append(node)

    visit(0)
    order.reverse()
    return order + [k for k in range(len(blocks)) if k not in seen]


def _forward(blocks: list[_Block], promotable: set[int], folder: "_Folder", st: Stats) -> None:
    index = {b.label: k for k, b in enumerate(blocks)}
    preds: dict[int, list[int]] = {k: [] for k in range(len(blocks))}
    for k, b in enumerate(blocks):
        for s in b.succ:
            if s in index:
                preds[index[s]].append(k)
    repl: dict[int, int] = {}
    out: dict[int, dict[int, int]] = {}
    for k in _rpo(blocks):
        ps = preds[k]
        if k == 0 or not ps or any(p not in out for p in ps):
            avail: dict[int, int] = {}  # entry, unreachable, or a loop header
        else:
            first = out[ps[0]]
            avail = {v: x for v, x in first.items() if all(out[p].get(v) == x for p in ps[1:])}
        for i in blocks[k].ins:
            for p in i.ids:
                a = i.args[p]
                while a in repl:
                    a = repl[a]
                i.args[p] = a
            if i.res is not None and i.ty is not None:
                folder.type_of[i.res] = i.ty
            if i.op == "OpLoad" and i.args[0] in promotable:
                v = i.args[0]
                if v in avail:
                    repl[i.res] = avail[v]
                    i.dead = True
                    st.loads_forwarded += 1
                else:
                    avail[v] = i.res
            elif i.op == "OpStore" and i.args[0] in promotable:
                avail[i.args[0]] = i.args[1]
            elif i.res is not None:
                r = folder.fold(i)
                if r is not None:
                    repl[i.res] = r
                    i.dead = True
                    st.folded += 1
        out[k] = avail


def _dead_stores(blocks: list[_Block], promotable: set[int], st: Stats) -> None:
    index = {b.label: k for k, b in enumerate(blocks)}
    use_def = []
    for b in blocks:  # upward-exposed loads and killed variables per block
        gen, kill = set(), set()
        for i in b.ins:
            if i.dead:
                continue
            if i.op == "OpLoad" and i.args[0] in promotable and i.args[0] not in kill:
                gen.add(i.args[0])
            elif i.op == "OpStore" and i.args[0] in promotable:
                kill.add(i.args[0])
        use_def.append((gen, kill))
    live_in = [set() for _ in blocks]
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(blocks))):
            lo = set().union(*(live_in[index[s]] for s in blocks[k].succ if s in index)) if blocks[k].succ else set()
            gen, kill = use_def[k]
            li = gen | (lo - kill)
            if li != live_in[k]:
                live_in[k] = li
                changed = True
    for k, b in enumerate(blocks):
        live = set().union(*(live_in[index[s]] for s in b.succ if s in index)) if b.succ else set()
        for i in reversed(b.ins):
            if i.dead:
                continue
            if i.op == "OpStore" and i.args[0] in promotable:
                if i.args[0] not in live:
                    i.dead = True
                    st.stores_removed += 1
                else:
                    live.discard(i.args[0])
            elif i.op == "OpLoad" and i.args[0] in promotable:
                live.add(i.args[0])


def _dead_code(blocks: list[_Block], st: Stats) -> None:
    alive = [i for b in blocks for i in b.ins if not i.dead]
    defs = {i.res: i for i in alive if i.res is not None}
    uses: dict[int, int] = {}
    for i in alive:
        for p in i.ids:
            uses[i.args[p]] = uses.get(i.args[p], 0) + 1
    work = [i for i in alive if i.op in PURE and i.res is not None and not uses.get(i.res)]
    while work:
        i = work.pop()
        if i.dead:
            continue
        i.dead = True
        st.removed_dead += 1
        for p in i.ids:
            a = i.args[p]
            uses[a] -= 1
            if not uses[a]:
                d = defs.get(a)
                if d is not None and d.op in PURE and not d.dead:
                    work.append(d)


class _Folder:
    """Constant folding against the module's constants (new constants are added to it)."""

    def __init__(self, m: Module) -> None:
        self.m = m
        self.types = {tid: key for key, tid in m._types.items()}
        self.values: dict[int, tuple[int, int]] = {}  # constant id -> (type id, value)
        self.type_of: dict[int, int] = {}  # id -> its type (results seen, constants)
        self._widths: dict[int, tuple[str, int] | None] = {}
        for key, cid in m._consts.items():
            if key[0] == "c":
                _, ty, words = key
                self.values[cid] = (ty, sum(w << (32 * n) for n, w in enumerate(words)))
            elif key[0] == "b":
                self.values[cid] = (m.type("OpTypeBool"), int(key[1]))
        for cid, (ty, _) in self.values.items():
            self.type_of[cid] = ty

    def _width(self, ty: int) -> tuple[str, int] | None:
        w = self._widths.get(ty, False)
        if w is False:
            w = self._widths[ty] = self._width_of(ty)
        return w

    def _width_of(self, ty: int) -> tuple[str, int] | None:
        k = self.types.get(ty)
        if k is None:
            return None
        if k[0] == "OpTypeInt":
            return "int", k[1][0]
        if k[0] == "OpTypeFloat":
            return "float", k[1][0]
        if k[0] == "OpTypeBool":
            return "bool", 1
        return None

    def const(self, ty: int, v: int) -> int:
        kind, w = self._width(ty)
        if kind == "bool":
            cid = self.m.const_bool(bool(v))
        else:
            v &= (1 << w) - 1
            cid = self.m.const(ty, *([v] if w <= 32 else [v & 0xFFFFFFFF, v >> 32]))
        self.values[cid] = (ty, v if kind != "bool" else int(bool(v)))
        self.type_of[cid] = ty
        return cid

    def fold(self, i: _Ins) -> int | None:
        if i.op not in FOLDABLE:
            return None
        ops = [i.args[p] for p in i.ids]
        if i.op == "OpSelect" and len(ops) == 3:
            c = self.values.get(ops[0])
            if c is not None:
                return ops[1] if c[1] else ops[2]
            return ops[1] if ops[1] == ops[2] else None
        shape = self._width(i.ty) if i.ty is not None else None
        if shape is None or shape[0] == "float" and i.op != "OpBitcast":
            return None
        vals = [self.values.get(o) for o in ops]
        known = [v[1] if v else None for v in vals]
        w = shape[1]
        mask = (1 << w) - 1
        if None in known:
            r = self._identity(i, ops, known, mask)
            return r if r is not None and self.type_of.get(r) == i.ty else None
        try:
            r = self._eval(i.op, known, [self._width(v[0])[1] for v in vals], w)
        except (ZeroDivisionError, ValueError):
            return None
        return None if r is None else self.const(i.ty, r)

    def _identity(self, i: _Ins, ops: list[int], known: list, mask: int) -> int | None:
        if len(ops) != 2:
            return None
        a, b = known
        if i.op in ("OpIAdd", "OpBitwiseOr", "OpBitwiseXor"):
            if a == 0:
                return ops[1]
            if b == 0:
                return ops[0]
        elif i.op == "OpIMul":
            if a == 1:
                return ops[1]
            if b == 1:
                return ops[0]
        elif i.op == "OpBitwiseAnd":
            if a == mask:
                return ops[1]
            if b == mask:
                return ops[0]
        elif i.op in ("OpISub", "OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic") and b == 0:
            return ops[0]
        return None

    @staticmethod
    def _eval(op: str, v: list[int], widths: list[int], w: int) -> int | None:
        mask = (1 << w) - 1

        def s(x: int, bits: int) -> int:
            return x - (1 << bits) if x >> (bits - 1) & 1 else x

        if op == "OpIAdd":
            return v[0] + v[1]
        if op == "OpISub":
            return v[0] - v[1]
        if op == "OpIMul":
            return v[0] * v[1]
        if op == "OpUDiv":
            return v[0] // v[1]
        if op == "OpUMod":
            return v[0] % v[1]
        if op == "OpBitwiseAnd":
            return v[0] & v[1]
        if op == "OpBitwiseOr":
            return v[0] | v[1]
        if op == "OpBitwiseXor":
            return v[0] ^ v[1]
        if op == "OpNot":
            return ~v[0] & mask
        if op == "OpSNegate":
            return -v[0]
        if op in ("OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic"):
            if v[1] >= widths[0]:
                return None  # undefined in SPIR-V: leave it to the device
            if op == "OpShiftLeftLogical":
                return v[0] << v[1]
            if op == "OpShiftRightLogical":
                return v[0] >> v[1]
            return s(v[0], widths[0]) >> v[1]
        cmp = {
            "OpIEqual": lambda a, b: a == b,
            "OpINotEqual": lambda a, b: a != b,
            "OpULessThan": lambda a, b: a < b,
            "OpULessThanEqual": lambda a, b: a <= b,
            "OpUGreaterThan": lambda a, b: a > b,
            "OpUGreaterThanEqual": lambda a, b: a >= b,
        }
        if op in cmp:
            return int(cmp[op](v[0], v[1]))
        scmp = {
            "OpSLessThan": lambda a, b: a < b,
            "OpSLessThanEqual": lambda a, b: a <= b,
            "OpSGreaterThan": lambda a, b: a > b,
            "OpSGreaterThanEqual": lambda a, b: a >= b,
        }
        if op in scmp:
            return int(scmp[op](s(v[0], widths[0]), s(v[1], widths[1])))
        if op == "OpLogicalNot":
            return int(not v[0])
        if op == "OpLogicalAnd":
            return int(bool(v[0] and v[1]))
        if op == "OpLogicalOr":
            return int(bool(v[0] or v[1]))
        if op == "OpLogicalEqual":
            return int(bool(v[0]) == bool(v[1]))
        if op == "OpLogicalNotEqual":
            return int(bool(v[0]) != bool(v[1]))
        if op == "OpBitcast" and widths[0] == w:
            return v[0]
        if op == "OpUConvert":
            return v[0] & mask
        if op == "OpSConvert":
            return s(v[0], widths[0]) & mask
        return None
