"""``recompiler.call_abi = auto``: a host calling convention per lifted function.

Every lifted function's entry that anything reaches indirectly (the dispatch table's rows,
inline caches, nx_call_ind / nx_jump, resume twins, a tail call) keeps ``preserve_none``
(nxrt.h NX_CC, as with ``call_abi = preserve_none``): ``F_x``.  A function of ``sysv_set``
gets its body as ``Fs_x``, a SysV function, and ``F_x`` becomes a preserve_none thunk that
calls it (a plain call: clang refuses a musttail across conventions).  Direct calls of a SysV
function (``_r = F_x(...)`` anywhere, in either convention) call ``Fs_x`` itself, so a
dispatch loop (SysV) keeps its values in the callee-saved registers across the calls of its
direct callees (SysV), where under preserve_none it spills them around each call
(Lua's luaV_execute: +3-4 % instructions).

Which functions (``sysv_set``, from the plans alone: one answer for every shard, so every
shard's prototype of ``Fs_x`` and every caller agree): a function with a dispatch loop
(``build._dispatch_loop``: a jump table of many targets) that makes direct calls, and the
functions it calls directly (all of them: ``MAX_SITES``, leaving library routines that
everything else calls, memcpy, malloc, to preserve_none, lost: one preserve_none call site in a
dispatch loop's function, even a cold one, has clang spill the loop's values across it; Lua
spectral-norm 1,318.7 M against SysV's 1,193.8 M).  A SysV function's tail exits to a named preserve_none function
(``MUSTTAIL return F_y/nx_jump/R_x/C_x(...)``) become musttails of a SysV trampoline of the
shard (``Ts_y``: cold, it calls the function and returns; so the body's code keeps SysV's
shape, a jump at each exit), one through a pointer (an inline cache's ``_e->fn``) a call and a
return: so each keeps one host frame until its callee returns; so that no guest loop of direct tail calls
can pile such frames up, a function whose direct tail calls leave the set is left out of it
(until none does).  Everything else takes preserve_none."""

from __future__ import annotations

import re
from collections import Counter

from recompiler.lift.signature import PARAMS

SIG = PARAMS + " NX_CC"  # (signature.SIG under call_abi = auto)

# (the definition of a lifted function's entry, as wrap.py writes it; attributes before it)
_DEF = re.compile(r"^(?P<attrs>[^\n]*?)NxRet F_(?P<a>[0-9a-f]+)" + re.escape(SIG) + r" \{\n(?P<body>.*?)^\}\n", re.M | re.S)
# a call of a lifted function's entry (not its declaration or definition)
_CALL = re.compile(r"(?<!NxRet )(?P<tail>MUSTTAIL return )?\bF_(?P<a>[0-9a-f]+)\(")
# a tail exit of a SysV body to a named preserve_none function, and any other (through a pointer)
_TAIL_NAMED = re.compile(r"MUSTTAIL return (?!Fs_)([A-Za-z_]\w*)\(")
_TAIL = re.compile(r"MUSTTAIL return (?!Fs_|Ts_)")


# a dispatch loop's callee with more direct call sites than this in the program (a library
# routine) stays preserve_none; None: none does (measured: 16 lost, see the module's doc)
MAX_SITES: int | None = None


def sysv_name(addr: int) -> str:
    return f"Fs_{addr:x}"


def _bl_sites(plan) -> list[int]:
    """The target of each of the plan's BL instructions."""
    out = []
    for i in plan.insns:
        if i.word & 0xFC000000 == 0x94000000:
            imm = i.word & 0x3FFFFFF
            out.append(i.addr + ((imm - (1 << 26) if imm & (1 << 25) else imm) << 2))
    return out


def _bl_targets(plan) -> set[int]:
    return set(_bl_sites(plan))


def sysv_set(plans: dict, dispatch_loop, max_sites: int | None = MAX_SITES) -> frozenset[int]:
    """The entries that take SysV (see the module's doc); ``plans``: entry -> FunctionPlan,
    ``dispatch_loop(plan)``: build._dispatch_loop; a callee with more than ``max_sites``
    direct call sites in the whole program (a library routine: memcpy, malloc) stays
    preserve_none (None: every callee SysV)."""
    sites: Counter = Counter()
    if max_sites is not None:
        for p in plans.values():
            sites.update(t for t in _bl_sites(p) if t in plans)
    chosen: set[int] = set()
    for a, p in plans.items():
        if dispatch_loop(p):
            calls = {t for t in _bl_targets(p) & plans.keys() if max_sites is None or sites[t] <= max_sites}
            if calls:
                chosen |= {a} | calls
    while True:
        out = {a for a in chosen if plans[a].tail_targets - chosen}
        if not out:
            return frozenset(chosen)
        chosen -= out


def apply(text: str, sysv: frozenset[int]) -> str:
    """A shard's C with ``sysv``'s functions made SysV (see the module's doc)."""
    if not sysv:
        return text
    used: set[int] = set()
    tramps: set[str] = set()  # Ts_<name> defined in this shard so far

    def call(m: re.Match, in_sysv: bool) -> str:
        a = int(m["a"], 16)
        if a not in sysv:
            return m[0]
        if m["tail"] and not in_sysv:  # (a preserve_none tail call: the thunk)
            return m[0]
        used.add(a)
        return f"{m['tail'] or ''}{sysv_name(a)}("

    def define(m: re.Match) -> str:
        a = int(m["a"], 16)
        if a not in sysv:
            return _CALL.sub(lambda c: call(c, False), m[0])
        used.add(a)
        body = _CALL.sub(lambda c: call(c, True), m["body"])
        # a tail exit to a named preserve_none function: a musttail of a SysV trampoline that
        # calls it (the body's code is then the shape SysV's build has: a jump at each exit)
        new = sorted(set(_TAIL_NAMED.findall(body)) - tramps)
        tramps.update(new)
        body = _TAIL.sub("return ", _TAIL_NAMED.sub(r"MUSTTAIL return Ts_\1(", body))
        pre = "".join(
            f"static __attribute__((noinline, cold)) NxRet Ts_{n}{PARAMS} {{ return {n}(s, a0, a1, a30, asp, a29); }}\n"
            for n in new
        )
        static = "static " if "static" in m["attrs"] else ""
        return (
            f"{pre}{m['attrs']}__attribute__((noinline)) NxRet {sysv_name(a)}{PARAMS} {{\n{body}}}\n"
            f"{static}NxRet F_{m['a']}{SIG} {{ return {sysv_name(a)}(s, a0, a1, a30, asp, a29); }}\n"
        )

    # definitions first (their bodies as SysV), then every other function's direct calls
    parts, k = [], 0
    for m in _DEF.finditer(text):
        parts.append(_CALL.sub(lambda c: call(c, False), text[k : m.start()]))
        parts.append(define(m))
        k = m.end()
    parts.append(_CALL.sub(lambda c: call(c, False), text[k:]))
    out = "".join(parts)
    if not used:
        return text
    protos = "".join(f"NxRet {sysv_name(a)}{PARAMS};\n" for a in sorted(used))
    head = '#include "lifted.h"\n'
    assert out.startswith(head), out[:80]
    return head + protos + out[len(head) :]
