"""Reflection of what a decoded SM86 program uses, for the GPU process to bind: the byte ranges
of each constant bank it reads, and the 64-bit global-memory pointers it loads from constant
banks (kernel parameters) and dereferences, with how (read, written, atomic).

Pointers are found by a flow-insensitive pass over the registers: a register pair holds "the
pointer at c[b][o]" when it is loaded from there (MOV, IMAD.MOV, ULDC.64) or is such a pointer
plus an offset (the 64-bit addend of IMAD.WIDE, a carry chain IADD3 / IADD3.X, IADD3/LOP3/SEL
of pointer registers).  Index operands (IMAD's factors, IMAD.WIDE's a*b) never carry pointer-
ness, so a block size read from c[0][0] never looks like a pointer.  Flow-insensitive means
"may use": a register reused for two pointers reports both, which is what binding needs.
"""

from __future__ import annotations

from typing import Callable

from shader_svc.reflection import ConstRange, GlobalPointer, Interface, Reflection, merge_ranges  # noqa: F401  (this module's record)
from shader_svc.sm86.decode import Inst


Source = tuple[int, int]  # (bank, 8-aligned byte offset) of a pointer


def _cb(v: dict) -> Source | None:
    return (v["bank"], v["off"] & ~7) if "bank" in v else None


Taint = dict[tuple[str, int], set]


def _regs(v: dict) -> list[tuple[str, int]]:
    file = v.get("file", "R")
    if "reg" not in v or v["reg"] == (255 if file == "R" else 63):
        return []
    return [(file, v["reg"])]


def _of(st: Taint, v: dict, pair: bool = False, const: bool = True) -> set:
    s: set = set()
    if const and (c := _cb(v)) is not None:
        s.add(c)
    for f, r in _regs(v):
        s |= st.get((f, r), set())
        if pair:
            s |= st.get((f, r + 1), set())
    return s


# a global access -> how it uses the pointer in its address (read, written, atomic)
ACCESS = {
    "LDG": (True, False, False),
    "STG": (False, True, False),
    "ATOMG": (True, True, True),
    "ATOMG.CAS": (True, True, True),
    "RED": (True, True, True),
}


def _carry_ops(ins: Inst, st: Taint) -> set:
    """IADD3/LOP3/SEL: the pointers of any operand; a constant operand is half of a pointer
    only in a 64-bit carry chain (IADD3 with .X or a carry out)."""
    ops = ins.ops
    carry = ins.row.ir == "IADD3" and (ins.mods.get("X") == 1 or ops["co0"]["pred"] != 7)
    return set().union(*(_of(st, ops[n], const=carry) for n in ("a", "b", "c") if n in ops))


# a register-writing instruction that carries pointers -> (the pointers reaching its
# destination, how many registers of it they fill)
FLOW: dict[str, Callable[[Inst, Taint], tuple[set, int]]] = {
    "MOV": lambda ins, st: (_of(st, ins.ops["b"]), 1),
    "ULDC": lambda ins, st: (_of(st, ins.ops["cb"]), 2 if ins.mods.get("size") == 5 else 1),
    "IMAD": lambda ins, st: (_of(st, ins.ops["c"]), 1),  # only the addend: IMAD.MOV, pointer + a*b
    "IMAD.WIDE": lambda ins, st: (_of(st, ins.ops["c"], pair=True), 2),  # the 64-bit addend; a*b is the index
    "IADD3": lambda ins, st: (_carry_ops(ins, st), 1),
    "LOP3": lambda ins, st: (_carry_ops(ins, st), 1),
    "SEL": lambda ins, st: (_carry_ops(ins, st), 1),
}


def _step(ins: Inst, st: Taint, use: dict) -> None:
    """Apply one instruction to the pointer state; note the pointers its address may hold."""
    ir, ops = ins.row.ir, ins.ops
    how = ACCESS.get(ir)
    if how is not None:
        for src in _of(st, ops["addr"], pair=True):
            u = use.setdefault(src, [False, False, False])
            for k, x in enumerate(how):
                u[k] = u[k] or x
    d = ops.get("d")
    if d is None or not _regs(d):
        return
    dst = _regs(d)[0]
    flow = FLOW.get(ir)
    srcs, width = flow(ins, st) if flow is not None else (set(), 1)
    guarded = not (ins.pred == 7 and not ins.pred_not)
    for i in range(width):
        key = (dst[0], dst[1] + i)
        st[key] = (st.get(key, set()) | srcs) if guarded else set(srcs)


def _cfg(insts: list[Inst]) -> tuple[list[list[Inst]], list[list[int]]]:
    leaders = {insts[0].addr} if insts else set()
    for i, ins in enumerate(insts):
        if ins.row.ir in ("BRA", "EXIT") and i + 1 < len(insts):
            leaders.add(insts[i + 1].addr)
            if ins.row.ir == "BRA":
                leaders.add(ins.ops["target"]["target"])
    blocks: list[list[Inst]] = []
    for ins in insts:
        if ins.addr in leaders or not blocks:
            blocks.append([])
        blocks[-1].append(ins)
    index = {b[0].addr: i for i, b in enumerate(blocks)}
    succ: list[list[int]] = []
    for i, b in enumerate(blocks):
        last = b[-1]
        always = last.pred == 7 and not last.pred_not
        out = []
        if last.row.ir == "BRA" and last.ops["target"]["target"] in index:
            out.append(index[last.ops["target"]["target"]])
        if not (always and last.row.ir in ("BRA", "EXIT")) and i + 1 < len(blocks):
            out.append(i + 1)
        succ.append(out)
    return blocks, succ


# a bound texture instruction -> whether it names its dimension (TXQ does not)
TEXTURES = {"TEX": True, "TLD": True, "TLD4": True, "TXQ": False}
BINDLESS = {"TEX.B", "TLD.B", "TLD4.B", "TXQ.B"}


def _graphics(insts: list[Inst]) -> Interface:
    """Locations, textures and pools of a vertex/fragment program."""
    from shader_svc.sm86.table import TEX_DIM

    names = dict(TEX_DIM.names)
    use = Interface()
    for ins in insts:
        ir, ops = ins.row.ir, ins.ops
        if ir in ("ALD", "AST", "IPA"):
            use.attributes(ir == "AST", ops["attr"]["attr"], ins.mods.get("comps", 0) + 1)
        elif ir in TEXTURES:
            use.texture(ops["slot"]["imm"], names.get(ops["dim"]["sym"], "2D") if TEXTURES[ir] else None)
        elif ir in BINDLESS:
            use.pools = True
    return use


def reflect(insts: list[Inst], header=None) -> Reflection:
    """What ``insts`` use; ``header`` (``sph.Header``) for vertex/fragment programs."""
    reads: set[tuple[int, int, int]] = set()
    for ins in insts:
        wide = ins.row.ir in ("IMAD.WIDE",) or (ins.row.ir == "ULDC" and ins.mods.get("size") == 5)
        for name, v in ins.ops.items():
            if "bank" in v:
                big = wide and (ins.row.ir == "ULDC" or name == "c")
                reads.add((v["bank"], v["off"], 8 if big else 4))

    use: dict[Source, list[bool]] = {}
    blocks, succ = _cfg(insts)
    state_in: list[dict | None] = [None] * len(blocks)
    if blocks:
        state_in[0] = {}
    work = [0] if blocks else []
    while work:
        bi = work.pop()
        st = {k: set(v) for k, v in state_in[bi].items()}
        for ins in blocks[bi]:
            _step(ins, st, use)
        for nb in succ[bi]:
            old = state_in[nb]
            if old is None:
                state_in[nb] = {k: set(v) for k, v in st.items()}
                work.append(nb)
                continue
            grew = False
            for k, v in st.items():
                cur = old.setdefault(k, set())
                if not v <= cur:
                    cur |= v
                    grew = True
            if grew:
                work.append(nb)
    ptrs = tuple(GlobalPointer(b, o, *u) for (b, o), u in sorted(use.items()))
    irs = {i.row.ir for i in insts}
    ranges = merge_ranges(reads)
    gfx = _graphics(insts).fields(header, ranges) if header is not None else {}
    surfaces = bool(irs & {"SULD", "SUST", "SUATOM", "SURED", "SUQUERY"})
    shared = bool(irs & {"LDS", "STS", "ATOMS", "ATOMS.CAS", "ATOMS.POPC.INC"})
    return Reflection(ranges, ptrs, shared, "BAR" in irs, **gfx, surface_pool=surfaces)
