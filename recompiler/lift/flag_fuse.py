"""Conditions computed from a compare's operands: NZCV not materialised where the instructions
right after a compare are the only ones that read them.

A flag-setting compare (``CMP``/``CMN``/``SUBS``/``ADDS``/``TST``/``ANDS``, 32 and 64 bit, every
operand form, and ``CCMP``/``CCMN``) whose flags are read only by its consumers (``B.cond``,
``CSEL``/``CSINC``/``CSINV``/``CSNEG``, ``CCMP``/``CCMN``, ``FCSEL``/``FCCMP``: whatever reads
them through ``FunctionEmitter.cond``) and are dead after them computes each consumer's
condition straight from its operands into a C local, ``_cc``, ``_cc1``, ... (``cmp w20, #5;
b.gt L`` becomes ``_cc = (i32)_a > (i32)_b; ... if (_cc) goto L``), and the consumers read those.
Through ``N Z C V`` clang did not always fold the condition back into one compare: zstd's
double-fast match finder got ``cmp $5,%r13; setne; cmp $5,%r13d; setge; test; je`` (Z's compare
widened to 64 bits, N/V's kept at 32).  A compare whose flags nobody reads writes no flags.

The compare and its consumers must be straight-line code: every instruction from the compare
to the last consumer falls through, is entered by nothing else (no label, function entry or
resume point: a jump there would bring other flags), and those between have no exit and
neither read nor write the flags.  A consumer's other way out (a B.cond's target) must find the
flags dead, and so must the last consumer's every way out (one bit of liveness over the
records: a read is a declared read of a flag or an exit that may hand them on after the
instruction — a direct tail call, a table's dispatch, a jump out, a system call, an FPSR/FPCR
access, a trap, a return that writes them back for a test; a write is an instruction that sets
all four, or a call: AAPCS64 leaves them undefined after it, though not in Go code: ``_kills``); a consumer that sets them itself
(``CCMP``) ends the run.  Conditions with no plain C form (``VS``/``VC`` after an add or
subtract) keep the flags.

Handlers write tokens (``FunctionEmitter.flag_op``, ``cond``) and this pass, once every record
is known, replaces them: by the flags' macros where nothing is fused (then the C is as before),
by the direct form, or by the bare arithmetic.  It runs only with liveness on (trust_abi, no
trace build: lockstep compares NZCV at every function entry) and ``flags`` not in
``recompiler.no_opt``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FS = "\x01F\x01"  # a flag setter's token (one per instruction)


def ctok(k: int) -> str:
    """The token of the ``k``-th condition an instruction's handler asked for."""
    return f"\x01C{k}\x01"


_BASE = ["Z", "C", "N", "V", "(C && !Z)", "(N == V)", "(!Z && N == V)", "1"]


def cond_text(c: int) -> str:
    """A condition on the flags' C locals (Arm ARM ConditionHolds; 1111 is always too)."""
    if c >> 1 == 7:
        return "1"
    base = _BASE[c >> 1]
    return f"!{base}" if c & 1 else base


def holds(c: int, nzcv: int) -> bool:
    """Whether condition ``c`` holds for the flags ``nzcv`` (a CCMP's immediate)."""
    n, z, cf, v = (nzcv >> 3) & 1, (nzcv >> 2) & 1, (nzcv >> 1) & 1, nzcv & 1
    r = [z, cf, n, v, cf and not z, n == v, not z and n == v, True][c >> 1]
    return bool(not r if c & 1 and c >> 1 != 7 else r)


@dataclass
class FlagOp:
    """A flag-setting instruction as its handler described it: ``op`` ("sub", "add", "and") of
    ``a`` and ``b`` (C of ``size``-bit operands; "and": the result is already in ``_r``),
    ``k`` the value of ``b`` where it is an immediate, ``std`` the C that sets the flags as
    before, and for a CCMP/CCMN its condition's token and its immediate flags."""

    op: str
    size: int
    a: str
    b: str
    std: str
    k: int | None = None
    ccmp: tuple[str, int] | None = None


def direct(op: FlagOp, c: int) -> str | None:
    """C of condition ``c`` on the flags ``op`` sets, from ``_a`` and ``_b`` (the operands as
    ``u{size}``; "and": from ``_r``), or None where it needs the exact flags (VS, VC)."""
    n = op.size
    u, i = f"u{n}", f"i{n}"
    base = c >> 1
    if base == 7:
        return "1"
    mask = (1 << n) - 1
    if op.op == "and":  # N, Z of the result, C = V = 0
        e = ["_r == 0", "0", f"({i})_r < 0", "0", "0", f"({i})_r >= 0", f"({i})_r > 0"][base]
    elif op.op == "sub":
        e = [
            "_a == _b",
            "_a >= _b",  # C: no borrow
            f"({i})({u})(_a - _b) < 0",
            None,
            "_a > _b",
            f"({i})_a >= ({i})_b",  # N == V: the exact difference is not negative
            f"({i})_a > ({i})_b",
        ][base]
    else:  # add: C is the carry out, N == V the sign of the exact sum
        r = f"({u})(_a + _b)"
        k = op.k
        if k is not None and k & ~mask:
            k = None
        wide = "(i64)(i32)_a + (i64)(i32)_b" if n == 32 else "(__int128)(i64)_a + (__int128)(i64)_b"
        small = k is not None and k < 1 << (n - 1)
        e = [
            f"_a == {(-k) & mask:#x}" if k is not None else f"{r} == 0",
            ("0" if k == 0 else f"_a >= {(1 << n) - k:#x}") if k is not None else f"{r} < _a",
            f"({i}){r} < 0",
            None,
            ("0" if k == 0 else f"_a > {(1 << n) - k:#x}") if k is not None else f"({r} < _a && {r} != 0)",
            f"({i})_a >= -{k}" if small else f"{wide} >= 0",
            f"({i})_a > -{k}" if small else f"{wide} > 0",
        ][base]
    if e is None:
        return None
    if c & 1:
        return {"0": "1", "1": "0"}.get(e, f"!({e})")
    return e


def _ops(op: FlagOp) -> str:
    u = f"u{op.size}"
    return f"{u} _a = ({u})({op.a}), _b = ({u})({op.b});"


def ccvar(n: int) -> str:
    """The C local of a fused compare's ``n``-th consumer's condition."""
    return "_cc" if n == 0 else f"_cc{n}"


def fused_text(op: FlagOp, conds: list[int]) -> str:
    """The setter's C where its consumers' conditions are ``conds`` (each with a direct form):
    the ``n``-th into ``ccvar(n)``."""
    es = [direct(op, c) for c in conds]
    if op.ccmp is not None:  # (its own condition may be _cc, which the first assignment writes)
        cc, nzcv = op.ccmp
        sets = " ".join(f"{ccvar(n)} = _t ? ({e}) : {int(holds(c, nzcv))};" for n, (e, c) in enumerate(zip(es, conds)))
        return f"{{ {_ops(op)} u8 _t = {cc}; {sets} }}"
    sets = "; ".join(f"{ccvar(n)} = {e}" for n, e in enumerate(es))
    if op.op == "and":
        return sets
    sign = "-" if op.op == "sub" else "+"
    return f"{_ops(op)} _r = (u{op.size})(_a {sign} _b); {sets}"


def dead_text(op: FlagOp) -> str:
    """The setter's C where nothing reads its flags."""
    if op.ccmp is not None:
        return ";"
    if op.op == "and":
        return "(void)_r"
    u = f"u{op.size}"
    return f"_r = ({u})(({u})({op.a}) {'-' if op.op == 'sub' else '+'} ({u})({op.b}))"


def _exit_reads(rec, ret_flags: bool) -> bool:
    """Whether leaving through ``rec`` may hand the flags on (or write them back)."""
    return bool(
        rec.tails
        or rec.tables
        or rec.jump_out
        or rec.exit_all
        or rec.svc
        or rec.fp_env
        or rec.fatal
        or (rec.ret is not None and ret_flags)
    )


def _kills(em) -> list[bool]:
    """Whether each record surely ends what NZCV held before it: a setter, or a call in
    AAPCS64 code (it leaves them undefined).  In Go code a call keeps them where the callee
    does not write them: the Go compiler keeps flags live across its calls of ``duffcopy`` and
    ``duffzero`` (its arm64 ops for them declare no flag clobber; every other call does), and
    the C locals of the flags outlive the call (Go call sites neither store nor reload them:
    ``interproc.go_lists``).  shfmt's formatBytes compared an error's itab, called duffcopy
    three times, then branched on Z: the compare was fused into its first B.NE, and the last
    read Z that nothing had set (a ParseError printed as an empty LangError)."""
    go = bool(getattr(em, "go", False))
    return [r.flags_set or (r.call is not None and not go) for r in em.records]


def _live_in(em, exit_reads: list[bool]) -> tuple[list[bool], list[list[int]]]:
    """Whether NZCV are live before each record, and each record's successors in the function
    (-1: somewhere outside, which may read them)."""
    recs = em.records
    index = {r.addr: k for k, r in enumerate(recs)}
    succs: list[list[int]] = []
    for r in recs:
        s = [index.get(t, -1) for t in r.succs]
        for label in r.tables:
            s += [index.get(t, -1) for t in (em.shared_targets.get(label) or [])]
        f = em.falls.get(r.addr)
        if f is not None:
            s.append(index.get(f, -1))
        succs.append(s)
    # (an exit reads the flags after the instruction: one that sets them, then falls out of
    # the function, hands on its own)
    # (backwards from the reads, once: a record is live if it reads them, or does not set them
    # and one of its successors is live, or it leaves for somewhere outside)
    kill = _kills(em)
    preds: list[list[int]] = [[] for _ in recs]
    work = []
    for k, r in enumerate(recs):
        for t in succs[k]:
            if t >= 0:
                preds[t].append(k)
        if r.names_flags or (not kill[k] and (exit_reads[k] or -1 in succs[k])):
            work.append(k)
    live = [False] * len(recs)
    for k in work:
        live[k] = True
    while work:
        k = work.pop()
        for q in preds[k]:
            if not live[q] and not kill[q]:
                live[q] = True
                work.append(q)
    return live, succs


def carry_vars(m: int) -> str:
    """The C locals of the ``m``-th carried compare's operands (``_carried``)."""
    return f"_fa{m}, _fb{m}"


def carry_text(op: FlagOp, m: int) -> str:
    """The setter's C where its flags are read in other blocks (``_carried``): its operands
    (an AND: its result) kept in the function's locals ``_fa``/``_fb`` of number ``m``."""
    if op.op == "and":
        return f"_fa{m} = _r"
    sign = "-" if op.op == "sub" else "+"
    return f"{_ops(op)} _r = (u{op.size})(_a {sign} _b); _fa{m} = _a; _fb{m} = _b"


def carried_cond(op: FlagOp, c: int, m: int) -> str:
    """Condition ``c`` of the ``m``-th carried compare, from the locals ``carry_text`` kept."""
    u = f"u{op.size}"
    e = direct(op, c)
    assert e is not None
    names = {"_a": f"(({u})_fa{m})", "_b": f"(({u})_fb{m})", "_r": f"(({u})_fa{m})"}
    return "(" + re.sub(r"\b_[abr]\b", lambda mt: names[mt.group(0)], e) + ")"


def materialise(op: FlagOp, m: int) -> str:
    """C that sets the flags' locals as the ``m``-th carried compare would have, from the
    operands it kept: where its flags leave the function (a direct tail call whose callee may
    read them: its store list has ``FLAGS_STORE`` only then, else clang drops this), or an
    instruction reads them without a condition (ADC, SBC)."""
    if op.op == "and":
        return f"LOGICF{op.size}(_fa{m});"
    if op.op == "sub":
        return f"{{ u64 _r; SUBC{op.size}(_r, _fa{m}, _fb{m}); }}"
    return f"{{ u64 _r; ADDC{op.size}(_r, _fa{m}, _fb{m}, 0); }}"


def _carried(em, exit_reads: list[bool], succs: list[list[int]], done: set[int]) -> dict[int, tuple[list[int], list[int]]]:
    """The flag setters not fused in their block (``done``: fused or dead) every read of whose
    flags only they reach (a reaching-definitions pass over the records: ``cmp; b.ne L ...
    L: b.hi`` where L is entered only from the compare's block; ``cmp; b.eq L; ...; b f``, a
    direct tail call, which hands the flags on where its callee reads them): setter -> (the
    readers that take a condition with a direct form from its operands, kept in locals:
    ``carry_text``, ``carried_cond``; the readers before which the flags' locals are set from
    them: an exit that may hand them on, an instruction that reads them without a condition:
    ``materialise``).  A read where another setter, a call, or the flags at the entry may
    reach too makes every setter that reaches it keep its flags."""
    recs = em.records
    n = len(recs)
    UNK = -1
    cand = {k for k, r in enumerate(recs) if r.flag_op is not None and r.flag_op.ccmp is None and k not in done}
    if not cand:
        return {}
    index = {r.addr: k for k, r in enumerate(recs)}
    outside = {em.plan.entry} | (em.functions & em.addrs) | set(em.resume)
    preds: list[list[int]] = [[] for _ in recs]
    for k in range(n):
        for t in succs[k]:
            if t >= 0:
                preds[t].append(k)
    entered = [False] * n
    for a in outside:
        if a in index:
            entered[index[a]] = True
    kill = _kills(em)
    # reaching definitions of NZCV: each record's own (a setter's index, UNK for a call or a
    # setter not carried), at its entry the union of its predecessors' (UNK at an entry)
    r_in: list[frozenset] = [frozenset()] * n
    r_out: list[frozenset] = [frozenset([k if k in cand else UNK]) if kill[k] else frozenset() for k in range(n)]
    changed = True
    while changed:
        changed = False
        for k in range(n):
            i = frozenset([UNK]) if entered[k] or not preds[k] else frozenset()
            for p in preds[k]:
                i |= r_out[p]
            if i != r_in[k]:
                r_in[k] = i
                changed = True
            if not kill[k] and r_out[k] != i:
                r_out[k] = i
                changed = True
    conds: dict[int, list[int]] = {}
    mats: dict[int, list[int]] = {}
    bad: set[int] = set()
    for k, r in enumerate(recs):
        leaves = exit_reads[k] or -1 in succs[k]  # what leaves there reads them after it
        if leaves and kill[k]:
            bad |= r_out[k]
            leaves = False
        if not (r.names_flags or leaves):
            continue
        reach = r_in[k]
        if len(reach) != 1 or UNK in reach:
            bad |= reach
            continue
        (s,) = reach
        if r.names_flags and len(r.conds) == 1 and direct(recs[s].flag_op, r.conds[0]) is not None:
            conds.setdefault(s, []).append(k)
        elif r.names_flags:
            leaves = True
        if leaves:
            mats.setdefault(s, []).append(k)
    return {s: (conds.get(s, []), mats.get(s, [])) for s in sorted(set(conds) | set(mats)) if s not in bad}


def apply(em) -> int:
    """Replace the tokens in ``em``'s body (see the module's docstring); the most consumers
    of one fused compare (the ``_cc`` locals to declare)."""
    recs = em.records
    if not any(r.flag_op is not None or r.conds for r in recs):
        return 0
    pairs: dict[int, list[int]] = {}  # setter index -> its consumers' indexes
    dead: set[int] = set()
    if em.live and "flags" not in em.no_opt:
        exit_reads = [_exit_reads(r, em.ret_flags) for r in recs]
        live, succs = _live_in(em, exit_reads)

        def live_after(k: int) -> bool:
            return exit_reads[k] or any(s < 0 or live[s] for s in succs[k])

        entered = set(em.labels) | {em.plan.entry} | (em.functions & em.addrs) | set(em.resume)
        for s, rec in enumerate(recs):
            op = rec.flag_op
            if op is None:
                continue
            if not live_after(s):
                dead.add(s)
                continue
            cons: list[int] = []
            ok = False
            j = s + 1
            while j < len(recs):
                r, p = recs[j], recs[j - 1]
                if r.addr != p.addr + 4 or not p.falls or r.addr in entered:
                    break
                if r.names_flags:  # (as declared: exit_effects adds an exit's read)
                    if len(r.conds) != 1 or direct(op, r.conds[0]) is None or exit_reads[j]:
                        break
                    cons.append(j)
                    if r.flags_set or not live_after(j):  # (a CCMP sets its own)
                        ok = True
                        break
                    # read again further on: only on the way to the next instruction
                    if j + 1 not in succs[j] or any(t < 0 or (t != j + 1 and live[t]) for t in succs[j]):
                        break
                    j += 1
                    continue
                if r.flags_set or r.call is not None or exit_reads[j] or r.succs or r.ret is not None or not r.falls:
                    break
                j += 1
            if ok:
                pairs[s] = cons
        carried = _carried(em, exit_reads, succs, set(pairs) | dead)
    else:
        carried = {}
    consumer = {j: n for cons in pairs.values() for n, j in enumerate(cons)}
    carry_of: dict[int, int] = {}  # consumer -> its setter, for the carried ones
    em.flag_carries = sorted(carried)
    for m, s in enumerate(em.flag_carries):
        readers, mats = carried[s]
        for j in readers:
            carry_of[j] = s
        for j in mats:
            em.body[recs[j].start] = "  " + materialise(recs[s].flag_op, m) + " " + em.body[recs[j].start].lstrip()
    most = 0
    for k, rec in enumerate(recs):
        if rec.flag_op is None and not rec.conds:
            continue
        texts = []
        if rec.flag_op is not None:
            op = rec.flag_op
            if k in carried:
                text = carry_text(op, em.flag_carries.index(k))
            elif k in pairs:
                text = fused_text(op, [recs[j].conds[0] for j in pairs[k]])
                most = max(most, len(pairs[k]))
            elif k in dead:
                text = dead_text(op)
            else:
                text = op.std
            texts.append((FS, text))
        for n, c in enumerate(rec.conds):
            if k in carry_of:
                s = carry_of[k]
                text = carried_cond(recs[s].flag_op, c, em.flag_carries.index(s))
            else:
                text = ccvar(consumer[k]) if k in consumer else cond_text(c)
            texts.append((ctok(n), text))
        for j in range(rec.start, rec.stop):
            line = em.body[j]
            if "\x01" not in line:
                continue
            for tok, text in texts:
                line = line.replace(tok, text)
            em.body[j] = line
    return most
