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
    # direct jumps (falls, table cases) out of a function with its frame live (analysis.live_frames):
    # found, those with callee-saved registers not restored, (function, target) pairs joined into
    # the jumper's body and the instructions that added, and those of label functions (left as
    # tail calls); the jumps' (address, target)
    live_frame_jumps: int = 0
    live_frame_regs: int = 0
    live_frame_joined: int = 0
    live_frame_insns: int = 0
    label_live_jumps: int = 0
    live_frame_where: list[tuple[int, int]] = field(default_factory=list)
    unresolved_br: list[int] = field(default_factory=list)
    # C++ exception tables (analysis.eh_frame.landing_pads): distinct landing pads the LSDAs
    # name, those that became labels of a lifted body, and the calls that go on at one
    landing_pads: int = 0
    landing_pads_lifted: int = 0
    landing_pad_calls: int = 0
    # indirect calls and jumps tried first as direct ones (analysis.call_targets): those looked
    # at, those given guesses (BLR / BR), the guesses, the sites nothing else was seen to reach,
    # and those left with more candidates than a site tries
    devirt_considered: int = 0
    devirt_calls: int = 0
    devirt_jumps: int = 0
    devirt_targets: int = 0
    devirt_exact: int = 0
    devirt_too_many: int = 0

    def to_json(self) -> dict:
        d = asdict(self)
        d["unresolved_br"] = [hex(a) for a in self.unresolved_br]
        d["live_frame_where"] = [f"{a:#x}->{t:#x}" for a, t in self.live_frame_where]
        return d

    @classmethod
    def from_json(cls, d: dict) -> AnalysisStats:
        """The stats ``to_json`` wrote (the manifest's), back."""
        where = [tuple(int(x, 16) for x in w.split("->")) for w in d.get("live_frame_where", [])]
        d = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}  # (an older manifest's)
        return cls(**{**d, "unresolved_br": [int(x, 16) for x in d["unresolved_br"]], "live_frame_where": where})

    def text(self) -> str:
        """The table ``--stats`` prints."""
        src = ", ".join(f"{k} {v}" for k, v in sorted(self.entries_by_source.items(), key=lambda kv: -kv[1]))
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.tables_by_kind.items(), key=lambda kv: -kv[1]))
        ptrs = sorted((kv for kv in self.entries_by_source.items() if kv[0] in POINTER_SOURCES), key=lambda kv: (-kv[1], kv[0]))
        ptr = ", ".join(f"{k} {v}" for k, v in ptrs) or "none"
        lf = " ".join(f"{a:#x}->{t:#x}" for a, t in self.live_frame_where[:12]) + (
            " ..." if len(self.live_frame_where) > 12 else ""
        )
        un = " ".join(hex(a) for a in self.unresolved_br[:40]) + (" ..." if len(self.unresolved_br) > 40 else "")
        return "\n".join(
            [
                f"functions        {self.functions} ({self.instructions} instructions)",
                f"entries found by {src}",
                f"code pointers    {self.code_pointers} entries first found as a code pointer ({ptr})",
                f"jump tables      {self.tables} ({self.table_entries} targets; {kinds}); direct {self.direct_tables}",
                f"IFUNC stubs      {self.ifunc_stubs}",
                f"live-frame jumps {self.live_frame_jumps} ({self.live_frame_regs} with callee-saved registers not restored; "
                f"joined {self.live_frame_joined} targets, +{self.live_frame_insns} instructions{': ' if lf else ''}{lf}); "
                f"label functions' {self.label_live_jumps} kept",
                f"landing pads     {self.landing_pads_lifted} of {self.landing_pads} in lifted bodies "
                f"({self.landing_pad_calls} calls go on at one)",
                f"unresolved BR    {len(self.unresolved_br)}: {un}",
                f"guessed targets  {self.devirt_calls} BLR + {self.devirt_jumps} BR of {self.devirt_considered} "
                f"({self.devirt_targets} targets, {self.devirt_exact} sites nothing else seen to reach; "
                f"{self.devirt_too_many} with more candidates)",
            ]
        )


def collect(
    funcs: dict,
    sources: dict[int, str],
    kinds: dict[int, dict[int, str]],
    unresolved: list[int],
    joined=None,
    pads: set[int] = frozenset(),
) -> AnalysisStats:
    """``joined``: what ``live_frames.join_live_frames`` did; ``pads``: every landing pad the
    program's LSDAs name."""
    s = AnalysisStats()
    if joined is not None:
        s.live_frame_jumps, s.live_frame_joined, s.live_frame_insns = joined.jumps, joined.joined, joined.insns
        s.live_frame_regs = joined.with_regs
        s.label_live_jumps, s.live_frame_where = joined.label_jumps, list(joined.where)
    s.landing_pads = len(pads)
    s.landing_pads_lifted = len({lp for p in funcs.values() for lp in p.landing_pads.values()})
    s.landing_pad_calls = sum(len(p.landing_pads) for p in funcs.values())
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
