"""What analysis found in one program, for ``nxrecomp recompile --stats`` and the manifest:
functions and how their entries were found, jump tables by how their targets were found,
and the indirect branches left to the run-time dispatch (their addresses)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field


# how an entry found as a code pointer was found: a data word (``entries.sweep_calls``), an
# address built in a register (``pointers.built_addresses``; the sweep's ``adrp``+``add`` too)
POINTER_SOURCES = frozenset({"data", "adrp+add", "adr", "literal", "rodata", "movz/movk"})


@dataclass
class AnalysisStats:
    functions: int = 0
    instructions: int = 0
    entries_by_source: dict[str, int] = field(default_factory=dict)  # eh_frame, bl, data, adrp+add, ...
    # functions whose entry was first found as a code pointer (``POINTER_SOURCES``: a data word,
    # or an address the code builds in a register at any distance, ``analysis.pointers``)
    code_pointers: int = 0
    tables: int = 0
    table_entries: int = 0  # distinct targets, summed over tables
    tables_by_kind: dict[str, int] = field(default_factory=dict)  # bounded, masked, open, window, ...
    direct_tables: int = 0
    ifunc_stubs: int = 0
    unresolved_br: list[int] = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        d["unresolved_br"] = [hex(a) for a in self.unresolved_br]
        return d

    def text(self) -> str:
        """The table ``--stats`` prints."""
        src = ", ".join(f"{k} {v}" for k, v in sorted(self.entries_by_source.items(), key=lambda kv: -kv[1]))
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.tables_by_kind.items(), key=lambda kv: -kv[1]))
        ptrs = sorted((kv for kv in self.entries_by_source.items() if kv[0] in POINTER_SOURCES), key=lambda kv: (-kv[1], kv[0]))
        ptr = ", ".join(f"{k} {v}" for k, v in ptrs) or "none"
        un = " ".join(hex(a) for a in self.unresolved_br[:40]) + (" ..." if len(self.unresolved_br) > 40 else "")
        return "\n".join(
            [
                f"functions        {self.functions} ({self.instructions} instructions)",
                f"entries found by {src}",
                f"code pointers    {self.code_pointers} entries first found as a code pointer ({ptr})",
                f"jump tables      {self.tables} ({self.table_entries} targets; {kinds}); direct {self.direct_tables}",
                f"IFUNC stubs      {self.ifunc_stubs}",
                f"unresolved BR    {len(self.unresolved_br)}: {un}",
            ]
        )


def collect(funcs: dict, sources: dict[int, str], kinds: dict[int, dict[int, str]], unresolved: list[int]) -> AnalysisStats:
    s = AnalysisStats()
    s.functions = len(funcs)
    s.instructions = sum(len(p.insns) for p in funcs.values())
    s.entries_by_source = dict(Counter(sources.get(e, "other") for e in funcs))
    s.code_pointers = sum(v for k, v in s.entries_by_source.items() if k in POINTER_SOURCES)
    by_kind: Counter = Counter()
    for e, plan in funcs.items():
        s.tables += len(plan.jump_tables)
        s.table_entries += sum(len(set(t)) for t in plan.jump_tables.values())
        s.direct_tables += len(plan.direct_tables)
        s.ifunc_stubs += len(plan.ifunc_targets)
        for a in plan.jump_tables:
            by_kind[kinds.get(e, {}).get(a, "other")] += 1
    s.tables_by_kind = dict(by_kind)
    s.unresolved_br = sorted(unresolved)
    return s
