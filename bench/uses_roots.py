"""Why a function's register summary reads a register: the chains of callees down to each
function whose own facts read it (``interproc.uses_roots``), for one program, with the ELF's
symbol names.  Static, no C compiler: the program is analysed and lifted as
``tests/recompiler/lifted_c_identity.py snap`` does (~10 s for Lua).

    .venv/bin/python bench/uses_roots.py ELF FUNCTION REGISTER [--limit N]

REGISTER is ``x0``..``x30`` or ``v0``..``v31``.  Each line is one root: ``UNK`` where that
function calls through a register (its own reads include an unknown callee's worst case),
``OPQ`` where it is opaque (a jump out, a trap, an SVC), then the chain, caller first.  Only
for an ELF whose symbols are its load addresses (a non-PIE executable); others print hex.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def lift_facts(elf: str) -> list:
    """Every function's ``interproc.FnLive`` of ``elf``, lifted as ``recompiler.build`` does."""
    from nxrecomp.common import settings
    from recompiler import build as B, pipeline

    image = pipeline.link_program(elf, [])
    program = pipeline.analyse_image(image, set())
    trust = bool(settings.get("recompiler", "trust_abi"))
    elide = bool(settings.get("recompiler", "elide_saves"))
    functions = set(program.functions)
    buckets: dict[int, list] = {}
    for addr in sorted(program.functions):
        buckets.setdefault(B._shard_of(addr, int(settings.get("recompiler", "shard_bytes"))), []).append(program.functions[addr])
    max_insns = int(settings.get("recompiler", "shard_insns"))
    facts = []
    for k, plans in sorted(buckets.items()):
        for i, part in enumerate(B.split_bucket(plans, max_insns)):
            facts += B._lift_fresh((k, i), Path(f"shard_{k:05d}_{i}.c"), part, functions, trust, False, False, elide).facts
    return facts


def register_bit(name: str) -> int:
    """The summary bit of ``x<n>`` or ``v<n>``."""
    from recompiler.lift import liveness as L

    kind, num = name[:1].lower(), name[1:]
    if kind not in "xv" or not num.isdigit() or int(num) > (30 if kind == "x" else 31):
        raise SystemExit(f"register {name!r}: expected x0..x30 or v0..v31")
    return L.xbit(int(num)) if kind == "x" else L.vbit(int(num))


def main() -> None:
    from recompiler import elf as E
    from recompiler.lift import interproc

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("elf")
    ap.add_argument("function")
    ap.add_argument("register")
    ap.add_argument("--limit", type=int, default=40)
    a = ap.parse_args()
    bit = register_bit(a.register)
    names: dict[int, str] = {}
    for s in E.load_elf(a.elf).symbols:
        if s.type == "FUNC" and s.defined:
            names.setdefault(s.value, s.name)
    by_name = {v: k for k, v in names.items()}
    entry = by_name.get(a.function) if not a.function.startswith("0x") else int(a.function, 16)
    if entry is None:
        raise SystemExit(f"{a.elf}: no function symbol {a.function!r}")
    facts = lift_facts(a.elf)
    by_entry = {f.entry: f for f in facts}
    if entry not in by_entry:
        raise SystemExit(f"{a.elf}: {a.function} ({entry:#x}) is no lifted function")
    summ = interproc.summarize(facts)
    if not summ[entry].uses & bit:
        print(f"{a.function}'s summary does not read {a.register}")
        return
    roots = interproc.uses_roots(facts, summ, entry, bit)
    for chain in roots[: a.limit]:
        f = by_entry[chain[-1]]
        tags = f"{'UNK' if f.calls_unknown else '   '} {'OPQ' if f.opaque else '   '}"
        print(tags, " -> ".join(names.get(e, hex(e)) for e in chain))
    print(f"{len(roots)} functions read {a.register} themselves on the way")


if __name__ == "__main__":
    main()
