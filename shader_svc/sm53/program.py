"""An SM53 program as the shader service sees it: decode (with the request's checks), translate
(compute only), and reflect what it uses, in the service's ``Reflection`` record.

Reflection: the constant-bank byte ranges read (merged), 64-bit global pointers loaded from a
constant bank and dereferenced (read / written / atomic), shared memory, barriers.  Maxwell
builds a pointer as a carry chain: ``IADD Rlo.CC, x, c[b][o]`` + ``IADD.X Rhi, y, c[b][o+4]``
(or ISCADD for the low half, MOV/MOV for a plain copy); a pass over the code (flow-insensitive:
"may use") follows those pairs to the LDG/STG/ATOM/RED that use them as addresses.
"""
from __future__ import annotations

from shader_svc.sm53 import decode as dec
from shader_svc.sm53.to_spirv import ComputeSpec, translate_compute
from shader_svc.sm86.reflect import ConstRange, GlobalPointer, Reflection
from shader_svc.translate import STAGES, Program, ProgramError


def decode_program(p: Program) -> list[dec.Inst]:
    if p.stage != 1:
        raise ProgramError(f"stage {STAGES.get(p.stage, p.stage)} is not translated yet for SM53", field="stage")
    if len(p.code) % 8:
        raise dec.DecodeError(f"program truncated: {len(p.code)} bytes is not a multiple of 8 "
                              f"(SM53 instructions are 8 bytes)", field="code", offset=len(p.code) & ~7)
    return dec.decode_stream(p.code)


def reflect(insts: list[dec.Inst]) -> Reflection:
    reads: set[tuple[int, int]] = set()            # (bank, word offset) read
    lo: dict[int, set[tuple[int, int]]] = {}       # register -> pointers whose low word it may hold
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
    ranges: list[ConstRange] = []
    for bank, off in sorted(reads):
        if ranges and ranges[-1].bank == bank and ranges[-1].offset + ranges[-1].size >= off:
            last = ranges[-1]
            ranges[-1] = ConstRange(bank, last.offset, max(last.size, off + 4 - last.offset))
        else:
            ranges.append(ConstRange(bank, off, 4))
    ptrs = tuple(GlobalPointer(b, o, "read" in k, "written" in k, "atomic" in k) for (b, o), k in sorted(use.items()))
    irs = {i.row.ir for i in insts}
    return Reflection(tuple(ranges), ptrs, bool(irs & {"LDS", "STS", "ATOMS"}), "BAR" in irs)


def translate_full(p: Program):
    """(SPIR-V, Reflection) of an SM53 program."""
    insts = decode_program(p)
    return translate_compute(insts, ComputeSpec(p.local_size)), reflect(insts)
