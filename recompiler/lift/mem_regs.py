"""Callee-saved registers a loop does not touch, kept in ``NxCpu`` instead of C locals.

AArch64 code keeps up to ten values in X19-X28 across calls; x86-64 has six callee-saved
registers, and in a lifted interpreter loop (QuickJS's ``JS_CallInternal``: ~12 guest registers
live across its dispatch) clang's allocator splits the live ranges of the many values it cannot
keep in them, so that each handler that makes a call stores and reloads them on its fast path
too, and every dispatch reloads the values its targets expect in registers.  Native x86 code
keeps such values in its frame and loads them where it uses them.  Here a register of X19-X28
that no instruction on a *call-free cycle* of the function reads or writes (the cycles a loop's
hot path runs without a call: an interpreter's fast handlers and dispatch, a plain loop's body)
lives in its ``NxCpu`` slot for the whole function: the C names it as ``s->x[N]`` (a
``#define`` of the local's name, ``wrap.py``), so each use is a load and each write a store,
and nothing of it is live in a register across the loop.

Why the slot may hold it: AAPCS64 callees preserve X19-X28, and a lifted callee hands back the
slot of one it changes where its own call sites overwrote that slot (``interproc.place``), so
the slot keeps its value across any call.  The function itself must then save and restore the
register as its guest code does: its save is never dropped (``facts._fn_live``), so its
epilogue's restore writes the caller's value back into the slot.
"""

from __future__ import annotations

from recompiler.decode import Insn
from recompiler.lift import effects
from recompiler.lift.edges import SHARED_TABLE, successors
from recompiler.lift.frame_facts import FRAME_SAVES_MAX_INSNS

CANDIDATES = range(19, 29)  # X19-X28
MAX_HOT = 8
# QuickJS's bench/callgrind_ir.py workload / Lua spectral-norm's instructions by RARE: 25 (six
# registers of JS_CallInternal) 2,721.2 M / -; 50 (four; luaV_execute's five) 2,691.8 / 299.7 M;
# 100 (one; luaV_execute's three) 2,696.8 / 311.0 M; main 2,722.3 / 322.2 M
RARE = 50
_CALLS = frozenset({"BL", "BLR", "SVC"})


def call_free_cycles(insns: list[Insn], succs: dict[int, list[int]]) -> set[int]:
    """The instructions on a cycle of the graph without its calls (Tarjan's strongly connected
    components, iterative: an interpreter's function has ~10,000 instructions)."""
    nodes = [i.addr for i in insns if i.name not in _CALLS]
    alive = set(nodes)
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    out: set[int] = set()
    n = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succs.get(root, ())))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in alive:
                    continue
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succs.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succs.get(v, ()):
                    out.update(comp)
    return out


def cold_saved(insns: list[Insn], addrs: set[int], jump_tables: dict, direct_tables: dict) -> list[int]:
    """The registers of X19-X28 to keep in ``NxCpu``: in an interpreter's function (a computed
    goto of ``SHARED_TABLE`` targets or more) whose call-free cycles use more of X19-X28 than
    ``MAX_HOT`` (more than x86-64 can keep in registers across its calls), those that at most
    ``1 / RARE`` of the instructions on those cycles read or write (none where they use few:
    elsewhere a register used only outside the loops is used at each call of the function,
    and a load and a store of NxCpu at each use cost more than clang's own spills: QuickJS's
    workload +158 M instructions with every such register of every function with a cycle).

    Functions over ``FRAME_SAVES_MAX_INSNS`` instructions keep their registers in locals, as they
    keep the old save rule: clang's allocation of such a giant moves by tens of millions of
    instructions with any change of what is live across its loop.  QuickJS's JS_CallInternal
    (10,424 instructions) gained 30 M from this rule on its own, then lost 48 M with it once the
    returns stopped storing SP and X29 (bench/callgrind_ir.py's workload, merged tree of session
    30: 2,584.0 M with, 2,535.8 M without); Lua's luaV_execute (3,811) keeps it: spectral-norm
    300.5 M with, 323.0 M without (-7.0 %)."""
    if len(insns) > FRAME_SAVES_MAX_INSNS:
        return []
    if not any(len(set(t)) >= SHARED_TABLE for t in jump_tables.values()) and not any(
        len({a for a in d.targets if a is not None}) >= SHARED_TABLE for d in direct_tables.values()
    ):
        return []
    succs: dict[int, list[int]] = {}
    uses: dict[int, int] = {}
    for i in insns:
        t, falls = successors(i)
        out = [t] if t is not None and t in addrs else []
        if falls:
            out.append(i.addr + 4)
        out += jump_tables.get(i.addr, [])
        d = direct_tables.get(i.addr)
        if d is not None:
            out += [a for a in d.targets if a is not None]
        succs[i.addr] = [a for a in out if a in addrs]
        try:
            e = effects.declare(i)
            uses[i.addr] = e.reads | e.writes
        except Exception:  # a lifter bug, reported where the lift declares it
            return []
    hot = call_free_cycles(insns, succs)
    if not hot:
        return []
    n_hot = [0] * 32
    for a in hot:
        m = uses[a]
        for r in CANDIDATES:
            n_hot[r] += m >> r & 1
    if sum(1 for r in CANDIDATES if n_hot[r]) <= MAX_HOT:
        return []
    used = 0
    for m in uses.values():
        used |= m
    return [r for r in CANDIDATES if used >> r & 1 and n_hot[r] * RARE <= len(hot)]
