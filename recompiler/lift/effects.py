"""The register effects of one instruction's C: the one place the lifter reads C back.

Handlers write C (``result.py``); once a function's body is complete the emitter hands each
instruction's own C (the parts its API recorded as structure taken off: the callee's part of a
call site, a return's and a tail call's slots, a table dispatch, the jump out) to ``scan``, which
fills the ``Lifted`` record's ``reads``/``kills``/``writes``, flags and memory effects.  Every
approximation is on the safe side: a register named anywhere in the C counts as read, except
where the C plainly overwrites it first (an unconditional ``xN = expr;`` whose ``expr`` does not
name it), and C that writes every register back (``STORE_ALL``: an exit, an SVC, a trap, an
indirect branch, a tail call) reads them all.  The text is what actually runs, so the record and
the C cannot disagree.
"""

from __future__ import annotations

import re

from recompiler.lift.liveness import ALL, SP_BIT, vbit, xbit
from recompiler.lift.result import Lifted, Mem

_TOKEN = re.compile(r"(?<![\w>.])(x(?:[12][0-9]|30|[0-9])|sp|v(?:[12][0-9]|3[01]|[0-9]))\b")
_CONTROL = re.compile(r"\b(?:if|else|for|while|switch|case|goto|return|do)\b|\?")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_WRITE = re.compile(
    r"(?<![\w>.])(x(?:[12][0-9]|30|[0-9])|sp|v(?:[12][0-9]|3[01]|[0-9]))"
    r"(?:\.\w+(?:\[[^\]]*\])?)?\s*(?:=|\+=|-=|\|=|&=|\^=)(?!=)|&(v(?:[12][0-9]|3[01]|[0-9]))\b"
)
# an instruction's C that reads NZCV (the flags' locals), and one that writes every local back
_FLAG_READ = re.compile(r"\b[NZCV]\b|FLAGS_STORE")
_FULL = re.compile(r"\b(?:STORE_ALL|RELOAD_ALL)\b")
# lifted.h's guest memory accesses (memory.py), DC ZVA's memset and the atomics
_LOAD = re.compile(r"\bL(?:8|16|32|64|V128|Q128)\(|__atomic_(?!thread_fence)\w+\(|__sync_\w+\(")
_STORE = re.compile(r"\bS(?:8|16|32|64|V128|Q128)\(|\bmemset\(|__atomic_(?!load|thread_fence)\w+\(|__sync_\w+\(")
# the vector registers handlers name ``s->v[N]`` (the emitter renames them to locals)
SV_RE = re.compile(r"s->v\[([0-9]|[12][0-9]|3[01])\]")


def token_bit(tok: str) -> int:
    if tok == "sp":
        return xbit(SP_BIT)
    return xbit(int(tok[1:])) if tok[0] == "x" else vbit(int(tok[1:]))


def _kills(text: str, m: re.Match) -> bool:
    """Whether the token at ``m`` is the target of an unconditional full assignment that does
    not read it: ``xN = expr;`` (``vN = ...;`` or ``vN.q = ...;`` for a vector register)."""
    tok = m.group(1)
    after = text[m.end() :]
    if tok[0] == "v" and after.startswith(".q"):
        after = after[2:]
    a = re.match(r"\s*=(?!=)", after)
    if not a:
        return False
    if _CONTROL.search(text, 0, m.start()) or "({" in text[: m.start()]:
        return False
    rhs = after[a.end() :].split(";", 1)[0]
    return "({" not in rhs and not re.search(rf"(?<![\w>.]){tok}\b", rhs)


def effects(text: str) -> tuple[int, int]:
    """(gen, kill) of one instruction's C text."""
    text = _COMMENT.sub("", text)
    if "STORE_ALL" in text or "RELOAD_ALL" in text or "STORE_INDIRECT" in text:
        return ALL, 0
    gen = kill = 0
    for m in _TOKEN.finditer(text):
        b = token_bit(m.group(1))
        if (gen | kill) & b:
            continue
        if _kills(text, m):
            kill |= b
        else:
            gen |= b
    return gen, kill


def writes(text: str) -> int:
    """Every register ``text`` may write: an assignment to it or to a lane of it, or a vector
    register's address taken."""
    m = 0
    for a, b in _WRITE.findall(_COMMENT.sub("", text)):
        m |= token_bit(a or b)
    return m


def own_text(rec: Lifted, lines: list[str], jump_out_text: str) -> str:
    """The instruction's own C: its lines, vector registers as locals, without what the record
    holds as structure (the callee's part of its call site, its return's slot, its direct tail
    calls, its table dispatches, the jump out)."""
    text = SV_RE.sub(r"v\1", "\n".join(lines))
    if rec.call is not None:
        text = text[: text.index(rec.call_marker)]
    if rec.ret is not None:
        text = text.replace(rec.ret_marker, "")
    text = text.replace(jump_out_text, "")
    for t in rec.tail_texts:
        text = text.replace(t, "", 1)
    for label in rec.tables:
        text = text.replace(f"goto {label};", "")
    return text


def scan(rec: Lifted, text: str) -> None:
    """Fill ``rec``'s register, flag and memory effects from its own C (``own_text``)."""
    rec.flags_read = bool(_FLAG_READ.search(text) or _FULL.search(text) and not (rec.svc or rec.fp_env or rec.fatal))
    rec.reads, rec.kills = effects(text)
    rec.writes = writes(text)
    mem = Mem.NONE
    if _LOAD.search(text):
        mem |= Mem.LOAD
    if _STORE.search(text):
        mem |= Mem.STORE
    rec.memory = mem
