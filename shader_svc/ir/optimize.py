"""The optimiser of a program's IR function (``ir/block.py``), run once before its one lowering
to SPIR-V (``ir/to_spirv.emit_function``).

The lowering keeps every machine register, predicate, SM53's condition code and its own scalar
temporaries in function variables, read and written by IR operations (``GetReg``/``SetReg``,
``GetPred``/``SetPred``, ``GetFlag``/``SetFlag``, ``LoadVar*``/``StoreVar*``): simple and correct
for any control flow.  This pass turns that into SSA values where dominance allows and cleans up
after it, over the basic blocks and their explicit terminators:

1. **Promotion to SSA values** (forward, blocks in reverse post-order): a variable's value is
   known at a point when the same IR value reaches it on every path (a write's operand, or an
   earlier read's result); a read of a known variable is replaced by that value.  A loop header
   starts with nothing known (back edges are taken pessimistically), so a value replaces a read
   only where its definition dominates the read.  RZ reads 0 and PT true; writes to them go.
2. **Constant folding** (same sweep): integer, bitwise, shift, comparison, logic, select and
   width operations whose operands are constants become constants; identities (``x + 0``,
   ``x | 0``, ``x & ~0``, ``x * 1``, ``x << 0``, ``select(c, x, x)``) become ``x``.  Floating point
   is never folded: the device's denormal and rounding behaviour is the device's.
3. **Dead stores** (backward liveness of the variables): a write that no path reads before the
   variable is written again or the function ends goes.
4. **Dead code**: operations without effects whose results nobody uses go, repeatedly.  An
   operation naming its instruction (``inst``: it may refuse it when lowered) stays, so does one
   this module does not list as pure (rows added later are kept until listed).

The driver reaches IR values only through placeholder ids (a terminator's condition or
selector, a value it stores: kept alive by step 4, followed through step 1's replacements).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from shader_svc.ir.block import Function, Op, Value
from shader_svc.ir.ops import OPS
from shader_svc.ir.types import Type

READS = {"GetReg", "GetPred", "GetFlag", "LoadVarU32", "LoadVarBool"}
WRITES = {"SetReg", "SetPred", "SetFlag", "StoreVarU32", "StoreVarBool"}
CONSTS = {"ConstU32", "ConstU64", "ConstBool"}
# removable when unused (no effect, no refusal at lowering)
PURE = READS | set(
    (
        "BitcastF32 BitcastU32 INot32 INeg32 IShr32 FAbs32 FNeg32 FAdd32 FMul32 FFma32 FFmaDevice32 "
        "FFlushDenorm32 FSaturate32 LNot IAdd32 IMul32 IAnd32 IOr32 IXor32 Lut3 UMin32 SMin32 "
        "UMax32 SMax32 BitCount32 IEq32 INe32 Select32 LAnd LOr LXor Lut3Bool FMinMax32 IShl32 "
        "ISar32 UGe32 SBitExtract32 UBitExtract32 SAbs32 BitReverse32 FindMsb32 Permute32 "
        "BitFieldExtractPacked BitFieldInsertPacked ZExt64 SExt64 Trunc32 Pack64 IAdd64 IMul64 "
        "Shl64 Shr64 Sar64 UGe64 ULt64 INe64 Select64 ICmp32 FCmp32 ConstF64 PackF64 BitcastU64 "
        "FAbs64 FNeg64 FAdd64 FMul64 FFma64 FCmp64 RoundF32 RoundF64 F2ISat32 F2ISatF64To32 "
        "F2ISatF64To64 I2F32 I2F32From64 I2F64 I2F64From64 CvtF64 CvtF32 GlobalPtr LoadGlobal32 "
        "SharedPtr LoadShared32 ConstF32 Cos32 Sin32 Exp2_32 Log2_32 RSqrt32 Sqrt32 FDiv32 Rcp64H "
        "RSqrt64H BuiltinU32 LocalIndex ISub32"
    ).split()
)
M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF
ZERO = -1  # the variable key of RZ/PT (reads are constants, writes are dropped)


@dataclass
class Stats:
    before: int = 0  # IR operations before and after
    after: int = 0
    reads_forwarded: int = 0
    folded: int = 0
    stores_removed: int = 0
    removed_dead: int = 0


def _s32(x: int) -> int:
    return x - (1 << 32) if x >> 31 else x


def _s64(x: int) -> int:
    return x - (1 << 64) if x >> 63 else x


def _lut(lut: int, a: int, b: int, c: int, mask: int) -> int:
    r = 0
    for i in range(8):
        if lut >> i & 1:
            r |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return r & mask


_ICMP = {
    0: lambda a, b: False,
    1: lambda a, b: a < b,
    2: lambda a, b: a == b,
    3: lambda a, b: a <= b,
    4: lambda a, b: a > b,
    5: lambda a, b: a != b,
    6: lambda a, b: a >= b,
    7: lambda a, b: True,
}

# constant evaluation: name -> f(values, attrs) -> int (the result's bits), or None (not folded)
_EVAL: dict[str, Callable] = {
    "IAdd32": lambda v, at: (v[0] + v[1]) & M32,
    "ISub32": lambda v, at: (v[0] - v[1]) & M32,
    "IMul32": lambda v, at: (v[0] * v[1]) & M32,
    "IAnd32": lambda v, at: v[0] & v[1],
    "IOr32": lambda v, at: v[0] | v[1],
    "IXor32": lambda v, at: v[0] ^ v[1],
    "INot32": lambda v, at: ~v[0] & M32,
    "INeg32": lambda v, at: -v[0] & M32,
    # a shift by the width or more is undefined in SPIR-V: left to the device
    "IShl32": lambda v, at: (v[0] << v[1]) & M32 if v[1] < 32 else None,
    "IShr32": lambda v, at: v[0] >> v[1] if v[1] < 32 else None,
    "ISar32": lambda v, at: (_s32(v[0]) >> v[1]) & M32 if v[1] < 32 else None,
    "IEq32": lambda v, at: int(v[0] == v[1]),
    "INe32": lambda v, at: int(v[0] != v[1]),
    "UGe32": lambda v, at: int(v[0] >= v[1]),
    "LNot": lambda v, at: int(not v[0]),
    "LAnd": lambda v, at: int(bool(v[0] and v[1])),
    "LOr": lambda v, at: int(bool(v[0] or v[1])),
    "LXor": lambda v, at: int(bool(v[0]) != bool(v[1])),
    "Lut3": lambda v, at: _lut(at["lut"], *v, M32),
    "Lut3Bool": lambda v, at: _lut(at["lut"], *v, 1),
    "UMin32": lambda v, at: min(v),
    "UMax32": lambda v, at: max(v),
    "SMin32": lambda v, at: min(v, key=_s32),
    "SMax32": lambda v, at: max(v, key=_s32),
    "ICmp32": lambda v, at: int(_ICMP[at["cmp"]](*(v if at["unsigned"] else map(_s32, v)))),
    "ZExt64": lambda v, at: v[0],
    "SExt64": lambda v, at: _s32(v[0]) & M64,
    "Trunc32": lambda v, at: v[0] & M32,
    "Pack64": lambda v, at: v[0] | v[1] << 32,
    "IAdd64": lambda v, at: (v[0] + v[1]) & M64,
    "IMul64": lambda v, at: (v[0] * v[1]) & M64,
    "Shl64": lambda v, at: (v[0] << v[1]) & M64 if v[1] < 64 else None,
    "Shr64": lambda v, at: v[0] >> v[1] if v[1] < 64 else None,
    "Sar64": lambda v, at: (_s64(v[0]) >> v[1]) & M64 if v[1] < 64 else None,
    "UGe64": lambda v, at: int(v[0] >= v[1]),
    "ULt64": lambda v, at: int(v[0] < v[1]),
    "INe64": lambda v, at: int(v[0] != v[1]),
}
# x op 0 = x (either side for the commutative ones, the right for the others)
_ZERO_BOTH = {"IAdd32", "IOr32", "IXor32", "IAdd64"}
_ZERO_RIGHT = {"ISub32", "IShl32", "IShr32", "ISar32", "Shl64", "Shr64", "Sar64"}


class _Folder:
    def __init__(self, consts: dict[int, tuple[Type, int]]) -> None:
        self.consts = consts

    def const(self, ty: Type, x: int) -> Value:
        v = Function.new_value(ty)
        self.consts[v.index] = (ty, x)
        return v

    def fold(self, o: Op, args: tuple[Value, ...], defs: dict[int, Op] | None = None) -> Value | None:
        name = o.op.name
        cs = self.consts
        if defs is not None and name in _PAIRS:
            r = self._pair(name, args, defs)
            if r is not None:
                return r
        if name in ("Select32", "Select64"):
            c = cs.get(args[0].index)
            if c is not None:
                return args[1] if c[1] else args[2]
            return args[1] if args[1] == args[2] else None
        f = _EVAL.get(name)
        if f is None:
            return None
        known = [cs.get(a.index) for a in args]
        if None not in known:
            r = f([k[1] for k in known], o.attrs)
            return None if r is None else self.const(o.result.type, r)
        if len(args) == 2:
            a, b = known
            if name in _ZERO_BOTH and a is not None and a[1] == 0:
                return args[1]
            if (name in _ZERO_BOTH or name in _ZERO_RIGHT) and b is not None and b[1] == 0:
                return args[0]
            if name == "IMul32":
                if a is not None and a[1] == 1:
                    return args[1]
                if b is not None and b[1] == 1:
                    return args[0]
            if name == "IAnd32":
                if a is not None and a[1] == M32:
                    return args[1]
                if b is not None and b[1] == M32:
                    return args[0]
            if name in ("LAnd", "LOr"):  # x and true, x or false: x
                unit = int(name == "LAnd")
                if a is not None and a[1] == unit:
                    return args[1]
                if b is not None and b[1] == unit:
                    return args[0]
        return None

    def _pair(self, name: str, args: tuple[Value, ...], defs: dict[int, Op]) -> Value | None:
        """Identities of 64-bit values built from and taken apart into 32-bit halves (SM53's
        carry chains and 64-bit addresses): the low half of ZExt64/SExt64/Pack64 is its low
        word, the high half of a Pack64 its high word, a zero-extended word shifted right by 32
        or more is 0, a pair rebuilt from the halves of one value is that value."""
        d = defs.get(args[0].index)
        if name == "Trunc32" and d is not None:
            dn = d.op.name
            if dn in ("ZExt64", "SExt64", "Pack64"):
                return d.args[0]
            if dn == "Shr64":
                c = self.consts.get(d.args[1].index)
                p = defs.get(d.args[0].index)
                if c is not None and c[1] == 32 and p is not None and p.op.name == "Pack64":
                    return p.args[1]
        elif name == "Shr64" and d is not None and d.op.name == "ZExt64":
            c = self.consts.get(args[1].index)
            if c is not None and 32 <= c[1] < 64:
                return self.const(Type.U64, 0)
        elif name == "Pack64" and d is not None and d.op.name == "Trunc32":
            h = defs.get(args[1].index)
            if h is not None and h.op.name == "Trunc32":
                s = defs.get(h.args[0].index)
                c = self.consts.get(s.args[1].index) if s is not None and s.op.name == "Shr64" else None
                if c is not None and c[1] == 32 and s.args[0] == d.args[0]:
                    return d.args[0]
        return None


_PAIRS = {"Trunc32", "Shr64", "Pack64"}
# pure arithmetic: the same operation of the same values in one block is computed once
_CSE = set(_EVAL) | {"Select32", "Select64", "BitcastF32", "BitcastU32"}


def optimize(fn: Function, key: Callable[[Op], int]) -> tuple[dict[int, tuple[Type, int]], Stats]:
    """Optimise ``fn`` in place; the constants it folded (value index -> (type, bits): the
    lowering names them as module constants) and what changed.  ``key``: the variable a read or
    write op touches (its SPIR-V variable id, or ``ZERO`` for RZ/PT)."""
    st = Stats()
    consts: dict[int, tuple[Type, int]] = {}
    blocks = fn.blocks
    _split_negated_reads(fn)
    st.before = sum(len(b.items) for b in blocks)
    index = {b.label: k for k, b in enumerate(blocks)}
    succ = [[index[s] for s in b.term.successors() if s in index] for b in blocks]
    keys: dict[int, int] = {}  # id(op) of a read/write -> its variable (promotable ones only)
    repl = _forward(blocks, succ, key, consts, keys, st)
    _dead_stores(blocks, succ, keys, st)
    roots = set()
    for pid, v in fn.placeholders.items():
        while v.index in repl:
            v = repl[v.index]
        fn.placeholders[pid] = v
        roots.add(v.index)
    _dead_code(blocks, roots, st)
    st.after = sum(len(b.items) for b in blocks)
    return consts, st


def _split_negated_reads(fn: Function) -> None:
    """``GetPred`` with ``not`` becomes the plain read and an ``LNot``, so the read can be
    forwarded like any other."""
    get, lnot = OPS["GetPred"], OPS["LNot"]
    for b in fn.blocks:
        if not any(it.op is get and it.attrs["not"] for it in b.items):
            continue
        items = []
        for it in b.items:
            if it.op is get and it.attrs["not"]:
                u = fn.new_value(Type.BOOL)
                items.append(Op(get, (), {**it.attrs, "not": False}, u))
                items.append(Op(lnot, (u,), {}, it.result))
            else:
                items.append(it)
        b.items = items


def _rpo(succ: list[list[int]]) -> list[int]:
    seen, order = {0}, []
    stack = [(0, iter(succ[0]))] if succ else []
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succ[s])))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order + [k for k in range(len(succ)) if k not in seen]


def _forward(blocks, succ, key, consts, keys, st) -> dict[int, Value]:
    repl: dict[int, Value] = {}
    preds: list[list[int]] = [[] for _ in blocks]
    for k, ss in enumerate(succ):
        for s in ss:
            preds[s].append(k)
    folder = _Folder(consts)
    defs: dict[int, Op] = {}  # value index -> the operation that computes it (kept ones)
    out: dict[int, dict[int, Value]] = {}
    for k in _rpo(succ):
        ps = preds[k]
        if k == 0 or not ps or any(p not in out for p in ps):
            avail: dict[int, Value] = {}  # entry, unreachable, or a loop header
        else:
            first = out[ps[0]]
            avail = {v: x for v, x in first.items() if all(out[p].get(v) == x for p in ps[1:])}
        items = []
        seen: dict[tuple, Value] = {}  # _CSE operations of this block by (name, args, attrs)
        for it in blocks[k].items:
            args = it.args
            for a in args:
                if a.index in repl:
                    args = tuple([_resolve(repl, a) for a in args])
                    it = it._replace(args=args)
                    break
            name = it.op.name
            if name in READS:
                var = key(it)
                if var == ZERO:  # RZ, PT
                    repl[it.result.index] = folder.const(it.result.type, int(it.result.type == Type.BOOL))
                    st.folded += 1
                    continue
                known = avail.get(var)
                if known is not None:
                    repl[it.result.index] = known
                    st.reads_forwarded += 1
                    continue
                avail[var] = it.result
                keys[id(it)] = var
            elif name in WRITES:
                var = key(it)
                if var == ZERO:
                    continue
                avail[var] = args[0]
                keys[id(it)] = var
            elif name in CONSTS:
                consts[it.result.index] = (it.result.type, int(it.attrs["value"]))
                continue
            elif it.result is not None:
                r = folder.fold(it, args, defs)
                if r is not None:
                    repl[it.result.index] = r
                    st.folded += 1
                    continue
                if name in _CSE and "inst" not in it.attrs:
                    try:
                        sig = (name, tuple([a.index for a in args]), tuple(sorted(it.attrs.items())))
                        hash(sig)
                    except TypeError:
                        sig = None
                    if sig is not None:
                        got = seen.get(sig)
                        if got is not None:
                            repl[it.result.index] = got
                            st.folded += 1
                            continue
                        seen[sig] = it.result
                defs[it.result.index] = it
            items.append(it)
        blocks[k].items = items
        out[k] = avail
    return repl


def _resolve(repl: dict[int, Value], v: Value) -> Value:
    while v.index in repl:
        v = repl[v.index]
    return v


def _dead_stores(blocks, succ, keys: dict[int, int], st: Stats) -> None:
    use_def = []
    for b in blocks:  # upward-exposed reads and written variables per block
        gen, kill = set(), set()
        for it in b.items:
            var = keys.get(id(it))
            if var is None:
                continue
            if it.op.name in READS:
                if var not in kill:
                    gen.add(var)
            else:
                kill.add(var)
        use_def.append((gen, kill))
    live_in: list[set[int]] = [set() for _ in blocks]
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(blocks))):
            lo = set().union(*(live_in[s] for s in succ[k]))
            gen, kill = use_def[k]
            li = gen | (lo - kill)
            if li != live_in[k]:
                live_in[k] = li
                changed = True
    for k, b in enumerate(blocks):
        live = set().union(*(live_in[s] for s in succ[k]))
        drop = set()
        for it in reversed(b.items):
            var = keys.get(id(it))
            if var is None:
                continue
            if it.op.name in READS:
                live.add(var)
            elif var in live:
                live.discard(var)
            else:
                drop.add(id(it))
        if drop:
            st.stores_removed += len(drop)
            b.items = [it for it in b.items if id(it) not in drop]


def _dead_code(blocks, roots: set[int], st: Stats) -> None:
    uses: dict[int, int] = dict.fromkeys(roots, 1)
    defs: dict[int, Op] = {}
    for b in blocks:
        for it in b.items:
            if it.result is not None:
                defs[it.result.index] = it
            for a in it.args:
                uses[a.index] = uses.get(a.index, 0) + 1
    dead: set[int] = set()
    work = [o for o in defs.values() if not uses.get(o.result.index) and _pure(o)]
    while work:
        o = work.pop()
        if id(o) in dead:
            continue
        dead.add(id(o))
        for a in o.args:
            uses[a.index] -= 1
            if not uses[a.index]:
                d = defs.get(a.index)
                if d is not None and id(d) not in dead and _pure(d):
                    work.append(d)
    if dead:
        st.removed_dead += len(dead)
        for b in blocks:
            b.items = [it for it in b.items if id(it) not in dead]


def _pure(o: Op) -> bool:
    return o.op.name in PURE and "inst" not in o.attrs


# shader-tex: rows whose lowering has no effect (checked): ``LocalPtr`` an access chain into the
# local array (declared on first use), ``LoadLocal32``/``Word`` loads of function variables,
# ``TexelWord`` a component of a texel already computed
PURE |= {"LocalPtr", "LoadLocal32", "Word", "TexelWord"}

# shader-ir-gfx: loads of the graphics stages' input variables (declared and checked when built)
PURE |= {"LoadInputF32", "LoadInputIndex", "FClampDevice01"}
# gfx-geom: a geometry program's per-vertex input loads (inputs never change while it runs)
PURE |= {"LoadVertexInputF32"}
# shader-ndv: the virtual quad's explicit-gradient samples (lower/quad_tex.py: four lanes' and the
# invocation's own per TEX.NDV, most unread): an image read, no effect
PURE |= {"BindlessSampleGrad3"}
