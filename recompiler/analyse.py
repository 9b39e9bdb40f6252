"""Find the functions of a linked image and the body and jump tables of each: the driver of
``recompiler/analysis/`` (its ``__init__`` lists the parts).

Entries come from the program entry, the linker's hints (symbols, relocation targets, init
arrays), `.eh_frame` FDEs (``analysis.eh_frame``), a Go program's function table
(``analysis.gopclntab``) and every `BL` target, code pointer in data
and ``adrp``+``add`` pair of a linear sweep over the executable segments (``analysis.entries``),
then the code addresses functions build in registers (``analysis.pointers``); a function
entered by a jump from another starts from what that code holds (``analysis.entry_states``).  A false entry
is harmless: a branch into it becomes a tail call.  A body is what its entry reaches by
fall-through, direct branches and its jump tables, stopping at other entries
(``analysis.bodies``), and going on into the code it jumps to with its frame still live
(``analysis.live_frames``).  Then the IFUNC stubs (``analysis.ifunc``) and the functions that never
return (``analysis.noreturn``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recompiler.analysis import pointers, stats
from recompiler.analysis.live_frames import join_live_frames
from recompiler.analysis.entry_states import pass_entry_states
from recompiler.analysis.bodies import Analyser
from recompiler.analysis.eh_frame import eh_frame_starts, landing_pads
from recompiler.analysis import go_args
from recompiler.analysis.gopclntab import goroutine_returns, pclntab_entries, pclntab_functions
from recompiler.analysis.entries import merge_fallen_into, sweep_calls
from recompiler.analysis.ifunc import ifunc_candidates, ifunc_slot
from recompiler.analysis.image import Memory
from recompiler.analysis.noreturn import noreturn_functions
from recompiler.analysis.stats import AnalysisStats
from recompiler.lift.control import branch_target
from recompiler.lift.emitter import FunctionPlan
from recompiler.lift.liveness import GO_NOARG_INPUTS, GO_RET_HANDED

__all__ = ["Analyser", "Memory", "Program", "abi_settings", "analyse", "eh_frame_starts", "noreturn_functions"]

POINTER_ROUNDS = 8  # rounds of pointer discovery (each lifts what the last one found)


@dataclass
class Program:
    functions: dict[int, FunctionPlan]
    entry: int
    unresolved_br: list[int] = field(default_factory=list)
    stats: AnalysisStats | None = None  # what analysis found (recompile --stats)
    # entries only direct calls from lifted code enter (analysis.callers): their returns hand
    # back only the results some caller reads (interproc.result_uses); empty: none known
    closed: frozenset[int] = frozenset()
    # the calling convention the code follows: "aapcs64", or "go" where the image carries a Go
    # function table (Go's ABI keeps no register across a call, and a call may move the stack:
    # the lifter then assumes neither, ``abi_settings``)
    abi: str = "aapcs64"
    # Go: the methods only direct calls, interfaces and reflect enter (named by its types'
    # method tables) -> the result registers of their types, what callers through an interface
    # or reflect read (analysis.go_args.method_results, interproc.go_result_uses)
    go_results: dict[int, int] = field(default_factory=dict)
    # what a block profile of this program names it by (recompiler/profile.program_id); "": unknown
    code_id: str = ""


def abi_settings(abi: str, trust_abi: bool, elide_saves: bool) -> tuple[bool, bool]:
    """(``trust_abi``, ``elide_saves``) for code of calling convention ``abi`` (``Program.abi``):
    both as set for AAPCS64 code, both off for Go's (its ABIInternal keeps no X19-X28 across a
    call and reads X28, the goroutine, and X26, a closure's context, as inputs of every
    function; its stack growth copies a goroutine's stack elsewhere, so SP and X29 after a call
    are not those before it: every call stores and reloads every register, SP included)."""
    if abi == "go":
        return False, False
    return trust_abi, elide_saves


def analyse(
    mem: Memory,
    entry: int,
    hints: set[int],
    eh_frames: list[tuple[int, bytes]],
    ifunc_slots: dict[int, int] | None = None,
    noreturn: bool = True,
    go_pclntabs: list[tuple[int, bytes]] = (),
) -> Program:
    """``ifunc_slots``: IFUNC slot -> resolver (``LinkedImage.ifunc_slots``), for PLT stubs;
    ``noreturn``: mark the calls of functions that never return (``recompiler.noreturn_calls``);
    ``go_pclntabs``: a Go program's function tables (``analysis.gopclntab``)."""
    an = Analyser(mem, set())
    an.source[entry] = "entry"
    seeds = {entry} | set(hints)
    for h in hints:
        an.source.setdefault(h, "hint")
    for addr, data in eh_frames:
        for e in eh_frame_starts(addr, data):
            seeds.add(e)
            an.source.setdefault(e, "eh_frame")
    for addr, data in go_pclntabs:
        for e in [*pclntab_entries(addr, data), *goroutine_returns(addr, data)]:
            seeds.add(e)
            an.source.setdefault(e, "pclntab")
    an.entries = {e for e in seeds if e % 4 == 0 and mem.is_code(e)}
    an.call_sites = landing_pads(eh_frames, mem.read)
    sweep_calls(an)
    funcs: dict[int, FunctionPlan] = {}
    unresolved: list[int] = []
    for e in sorted(an.entries):
        plan = an.function(e)
        if not plan.insns:
            continue
        funcs[e] = plan
    # function pointers the code builds at any distance (analysis.pointers): new weak entries,
    # then the bodies they fall in are recomputed (they stop there) and the new ones lifted
    which = sorted(funcs)
    for _round in range(POINTER_ROUNDS):
        new = pointers.scan(an, funcs, which)
        if not new:
            break
        for v, src in new.items():
            an.entries.add(v)
            an.weak.add(v)
            an.source.setdefault(v, src)
        an.entries_changed()
        touched = {e for e, plan in funcs.items() if any(i.addr in new for i in plan.insns[1:])}
        which = sorted(touched | set(new))
        for e in which:
            plan = an.function(e)
            if plan.insns:
                funcs[e] = plan
            else:
                funcs.pop(e, None)
        which = [e for e in which if e in funcs]
    merge_fallen_into(an, funcs)
    # start values along jumps between functions, for the BRs still without a table
    pass_entry_states(an, funcs)
    if noreturn:
        _after_noreturn(an, funcs, mem)
    # code jumped to with the jumper's frame live is the jumper's (analysis.live_frames)
    joined = join_live_frames(an, funcs)
    for plan in funcs.values():
        for i in plan.insns:
            if i.name == "BR" and i.addr not in plan.jump_tables:
                resolver = ifunc_slots.get(ifunc_slot(an, i)) if ifunc_slots else None
                cands = ifunc_candidates(an, resolver, funcs) if resolver is not None else None
                if cands:
                    plan.ifunc_targets[i.addr] = cands
                else:
                    unresolved.append(i.addr)
    noret = noreturn_functions(funcs, mem, an.inexact, an.weak) if noreturn else set()
    for plan in funcs.values():
        plan.noreturn_calls = {i.addr for i in plan.insns if i.name == "BL" and branch_target(i) in noret}
    for addr, data in go_pclntabs:  # what Go functions are handed and hand back (analysis.go_args)
        argless, compiled = go_args.kinds(addr, data)
        morestack = go_args.morestack_entries(addr, data)
        for e in compiled & funcs.keys():
            funcs[e].hands_back = GO_RET_HANDED
            # its register arguments, as its stack check's morestack stub spills them
            spilled = go_args.stub_spills(funcs[e].insns, morestack)
            if spilled is not None:
                funcs[e].input_regs = GO_NOARG_INPUTS | spilled
        for e in argless & funcs.keys():
            funcs[e].input_regs = GO_NOARG_INPUTS
        for e in go_args.inner_labels(addr, data, funcs):  # (its returns are a Go function's)
            funcs[e].hands_back = GO_RET_HANDED
        for e, n in pclntab_functions(addr, data):  # documented conventions of the runtime's assembly
            if n in go_args.CONVENTIONS and e in funcs:
                funcs[e].input_regs, funcs[e].mods_cap = go_args.CONVENTIONS[n]
            if n in go_args.AT_MOST_R0 and e in funcs and funcs[e].hands_back is None:
                funcs[e].hands_back = go_args.R0_HANDED
    program = Program(funcs, entry, sorted(set(unresolved)), abi="go" if go_pclntabs else "aapcs64")
    pads = {lp for _s, _e, lp in an.call_sites}
    program.stats = stats.collect(funcs, an.source, an.table_kinds, program.unresolved_br, joined, pads)
    return program


def _after_noreturn(an: Analyser, funcs: dict[int, FunctionPlan], mem: Memory) -> None:
    """The functions with a ``BR`` still without a table and a call of a function that never
    returns, analysed again with no path going on after such a call (``Analyser.noreturn``,
    ``FunctionValues``' ``noreturn_calls``): which functions never return is known only once
    every body is, and a path through the code after such a call joins values no real path
    brings (gpgv's format parser lost its step table's base that way: run-time lifts of its
    cases)."""
    an.noreturn = noreturn_functions(funcs, mem, an.inexact, an.weak)
    for e, plan in list(funcs.items()):
        if any(i.name == "BR" and i.addr not in plan.jump_tables for i in plan.insns) and any(
            i.name == "BL" and branch_target(i) in an.noreturn for i in plan.insns
        ):
            again = an.function(e)
            if again.insns and len(again.jump_tables) > len(plan.jump_tables):
                funcs[e] = again
