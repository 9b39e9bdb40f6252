"""Reflection of what a decoded SM53 program uses, in the service's ``Reflection`` record: the
constant-bank byte ranges read (merged), 64-bit global pointers loaded from a constant bank and
dereferenced (read / written / atomic), shared memory, barriers; for graphics stages the banks,
texture slots and their dimensions, attribute locations.

Maxwell builds a pointer as a carry chain: ``IADD Rlo.CC, x, c[b][o]`` + ``IADD.X Rhi, y,
c[b][o+4]`` (or ISCADD for the low half, MOV/MOV for a plain copy); a pass over the code
(flow-insensitive: "may use") follows those pairs to the LDG/STG/ATOM/RED that use them as
addresses.
"""

from __future__ import annotations

import dataclasses

from shader_svc import sph
from shader_svc.reflection import GlobalPointer, Interface, Reflection, merge_ranges
from shader_svc.sm53 import decode as dec
from shader_svc.sm53.table import TEX_DIM as TEX_DIM_PAIRS
from shader_svc.sm53.table import TEXS_DIM, TLDS_DIM


def reflect(insts: list[dec.Inst]) -> Reflection:
    reads: set[tuple[int, int]] = set()  # (bank, word offset) read
    lo: dict[int, set[tuple[int, int]]] = {}  # register -> pointers whose low word it may hold
    hi: dict[int, set[tuple[int, int]]] = {}
    use: dict[tuple[int, int], set[str]] = {}
    for ins in insts:
        for name, v in ins.ops.items():
            if "bank" in v:
                reads.add((v["bank"], v["off"]))
        ir, ops = ins.row.ir, ins.ops
        d = ops.get("d", {}).get("reg", 255)
        cb = next((v for v in ops.values() if "bank" in v), None)
        srcs = [ops[n]["reg"] for n in ("a", "b") if n in ops and "reg" in ops[n] and ops[n]["reg"] != 255]
        if ir in ("IADD", "ISCADD", "MOV") and d != 255:
            if ins.mods.get("X"):
                new = {(cb["bank"], cb["off"] - 4)} if cb else set()
                for s in srcs:
                    new |= hi.get(s, set())
                hi.setdefault(d, set()).update(new)
            else:
                new = {(cb["bank"], cb["off"])} if cb else set()
                for s in srcs:
                    new |= lo.get(s, set())
                lo.setdefault(d, set()).update(new)
                if ir == "MOV" and cb:
                    hi.setdefault(d, set()).add((cb["bank"], cb["off"] - 4))
        if ir in ("LDG", "STG", "ATOM", "ATOM_CAS", "RED") and ins.mods.get("E"):
            r = ops["addr"]["reg"]
            kind = {"LDG": "read", "STG": "written"}.get(ir, "atomic")
            for ptr in lo.get(r, set()) & hi.get(r + 1, set()):
                use.setdefault(ptr, set()).add(kind)
    ranges = merge_ranges({(bank, off, 4) for bank, off in reads})
    ptrs = tuple(GlobalPointer(b, o, "read" in k, "written" in k, "atomic" in k) for (b, o), k in sorted(use.items()))
    irs = {i.row.ir for i in insts}
    surfaces = bool(irs & {"SULD", "SUST", "SUATOM", "SURED"})
    return Reflection(ranges, ptrs, bool(irs & {"LDS", "STS", "ATOMS"}), "BAR" in irs, surface_pool=surfaces)


# a bound texture instruction -> the names of its dimension field (None: it names none, 2D)
TEXTURES = {
    "TEXS": TEXS_DIM,
    "TLDS": TLDS_DIM,
    "TEX": dict(TEX_DIM_PAIRS),
    "TLD": dict(TEX_DIM_PAIRS),
    "TLD4": dict(TEX_DIM_PAIRS),
    "TLD4S": None,
    "TXQ": None,
}
BINDLESS = {"TEX.B", "TLD.B", "TLD4.B", "TXQ.B"}


def reflect_graphics(insts: list[dec.Inst], header: sph.Header) -> Reflection:
    """Banks, texture slots, attribute locations of a vertex/fragment program (the lowering's
    conventions: shader_svc/README.md "Graphics-stage interface")."""
    base = reflect(insts)
    use = Interface()
    for ins in insts:
        ir, ops = ins.row.ir, ins.ops
        if ir in ("ALD", "AST", "IPA"):
            use.attributes(ir == "AST", ops["attr"]["attr"], ins.mods.get("size", 0) + 1)
        elif ir in TEXTURES:
            names = TEXTURES[ir]
            use.texture(ops["tid"]["imm"], None if names is None else names.get(ops["dim"]["sym"], "2D"))
        elif ir in BINDLESS:
            use.pools = True
    return dataclasses.replace(base, global_pointers=(), **use.fields(header, base.const_ranges))
