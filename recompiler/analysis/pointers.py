"""Code addresses a program builds in registers: function pointers at any distance.

Each function's instructions are read in address order (one pass, no joins: a register keeps
the last constant written above it, any other write forgets it), so an
``adrp`` and the ``add`` that completes it are paired however far apart they are (a sort
comparator passed to ``qsort``), and so are ``adr``, literal-pool loads (``ldr x0, =f``),
loads of a pointer from read-only data at a constant address and ``movz``/``movk`` chains.
Data words (relocated or not) are scanned by ``Analyser.sweep_calls``.

The rule for taking such an address ``v`` as a (weak) entry, and why a wrong one is harmless:
- ``v`` is 4-aligned, in an executable segment, and its word decodes to a form of our table
  (not a zero word, not UDF);
- ``v`` is not in the body of the function that builds it (that is a label of its own: a
  computed goto's or a relative table's base, which the function's jump tables handle);
- ``v`` is not in the middle of another known body: inside one it is taken only where the
  instruction before ``v`` does not fall into it (``v`` may start a function placed after one
  that ends in a call that does not return); a ``v`` that code falls into is a mid-block
  address, most likely a constant that happens to look like one.
A false entry is still harmless: the bodies are recomputed with it, a branch to it becomes a
tail call into a function that is lifted like any other, and the lifted code of every path is
what the guest executes; the cost is a split body (a slower tail call instead of a goto).
"""

from __future__ import annotations

from recompiler.analysis.transfer import successors
from recompiler.lift.emitter import FunctionPlan
from recompiler.lift.integer import pcrel_value, sext

M64 = (1 << 64) - 1

_CALL_CLOBBERS = tuple(range(19)) + (30,)


def built_addresses(mem, plan: FunctionPlan) -> dict[int, str]:
    """Code addresses ``plan``'s instructions compute in registers -> how: ``adr``,
    ``adrp+add``, ``literal``, ``rodata`` (a pointer loaded from read-only data at a constant
    address), ``movz/movk``.  One pass in address order over the constants of the value
    analysis's address forms (any other write of a register forgets it: a pass over every
    instruction of the program, so kept to what pointers are built from)."""
    regs: dict[int, int] = {}
    out: dict[int, str] = {}
    insns = plan.insns

    def found(v: int, how: str) -> None:
        if v % 4 == 0 and mem.is_code(v):
            out.setdefault(v, how)

    for k, i in enumerate(insns):
        n, g = i.name, i.group  # g: the isa.py group, for the split class rows
        f = i.f
        if n in ("ADRP", "ADR"):
            v = pcrel_value(i)
            regs[f["Rd"]] = v
            if n == "ADR":
                found(v, "adr")
        elif g == "ADDSUB_imm" and not f["S"] and f["sf"] and f["Rn"] in regs and f["Rn"] != 31:
            imm = f["imm12"] << (12 if f["sh"] else 0)
            v = (regs[f["Rn"]] + (-imm if f["op"] else imm)) & M64
            regs[f["Rd"]] = v
            found(v, "adrp+add")
        elif g == "LDR_lit" and not f["V"] and f["opc"] == 1:
            b = mem.read((i.addr + sext(f["imm19"], 19) * 4) & M64, 8)
            if b is not None:
                regs[f["Rt"]] = v = int.from_bytes(b, "little")
                found(v, "literal")
        elif g == "LDST_uimm" and not f["V"] and f["size"] == 3 and f["opc"] == 1 and f["Rn"] in regs and f["Rn"] != 31:
            a = regs[f["Rn"]] + f["imm12"] * 8
            b = mem.read(a, 8) if mem.is_read_only(a, 8) else None
            regs.pop(f["Rt"], None)
            if b is not None:
                regs[f["Rt"]] = v = int.from_bytes(b, "little")
                found(v, "rodata")
        elif i.group == "MOVW" and f["sf"] and (f["opc"] == 2 or (f["opc"] == 3 and f["Rd"] in regs)):
            sh = 16 * f["hw"]
            old = regs.get(f["Rd"], 0) if f["opc"] == 3 else 0
            regs[f["Rd"]] = v = (old & ~(0xFFFF << sh)) | (f["imm16"] << sh)
            nxt = insns[k + 1] if k + 1 < len(insns) else None
            if not (nxt is not None and nxt.group == "MOVW" and nxt.f["opc"] == 3 and nxt.f["Rd"] == f["Rd"]):
                found(v, "movz/movk")  # (a chain is complete at its last movk)
        elif g == "LOGIC_sreg" and f["opc"] == 1 and f["Rn"] == 31 and not f["N"] and f["imm6"] == 0 and f["sf"]:
            if f["Rm"] in regs:
                regs[f["Rd"]] = regs[f["Rm"]]
            else:
                regs.pop(f["Rd"], None)
        elif n in ("BL", "BLR", "SVC"):
            for r in _CALL_CLOBBERS:
                regs.pop(r, None)
        else:
            for key in ("Rd", "Rt", "Rt2", "Rs", "Rn"):
                # (Rn: a writeback; forgetting a base that was not written only loses a pair)
                if key in f and (key != "Rn" or f.get("idx") in (1, 3) or n.endswith("_post")):
                    regs.pop(f[key], None)
    return out


def accept(
    an, v: int, owner: FunctionPlan | None, body_of: dict[int, int], funcs: dict[int, FunctionPlan], own: set[int] = frozenset()
) -> bool:
    """Whether the address ``v`` built by ``owner`` (whose instructions' addresses are ``own``)
    becomes an entry (the rule above).  ``body_of`` names one body per address, the first
    found; bodies overlap (a weak entry inside another function has a body of its own), so the
    owner's own body is asked, not whichever ``body_of`` names: busybox's scanf builds its
    relative tables' base labels (``adr x20, L; add x0, x20, w0, sxth #2; br x0``) in a body
    that overlaps a weak entry's, and the labels became entries that cut its body, leaving
    the table at 0x40d4d8 to a fragment that could not bound it (cpio's run-time lift)."""
    if v in an.entries or v % 4:
        return False
    i = an.insn(v)
    if i is None or i.form is None or i.word == 0 or i.name == "UDF":
        return False
    if v in own:
        return False
    f = body_of.get(v)
    if f is None:
        return True
    if owner is not None and f == owner.entry:
        return False
    prev = an.insn(v - 4)
    if prev is None or body_of.get(v - 4) != f:
        return True  # nothing of that body falls into v
    return not successors(prev)[1]


def scan(an, funcs: dict[int, FunctionPlan], which: list[int]) -> dict[int, str]:
    """New entries from the addresses the functions ``which`` build -> how each was built."""
    body_of: dict[int, int] = {}
    for e, plan in funcs.items():
        for i in plan.insns:
            body_of.setdefault(i.addr, e)
    out: dict[int, str] = {}
    for e in which:
        plan = funcs[e]
        own = {i.addr for i in plan.insns}
        for v, src in built_addresses(an.mem, plan).items():
            if v not in out and accept(an, v, plan, body_of, funcs, own):
                out[v] = src
    return out
