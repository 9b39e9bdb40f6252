"""Symbolic values of the value analysis (``recompiler.analysis.values``).

A value is a tuple: ``("const", v)``; ``("cslot", v)`` (a constant read back from a stack
slot: the same number, but a store through an escaped pointer could have changed it, so a
jump that skips the guest's own computation must not rely on it); ``("add", a, b)``,
``("shl", a, n)``, ``("lsr", a, n)``, ``("mask", a, m)`` (``a & m``), ``("ext", option, a)``
(the A64 extend option 0-7: UXTB..SXTX), ``("load", size, signed, addr)``; and opaque leaves:
``("in", r)`` (register r at the function's entry, ``r = 31`` the stack pointer),
``("phi", block, loc)`` (a location whose incoming values differ at a block's start),
``("def", addr, loc)`` (what the instruction at ``addr`` wrote to ``loc``, not modelled),
``("top",)`` (nothing known, never equal to anything).  The node kinds
``const/add/shl/mask/ext/load`` (plus ``("reg", n)``) are the ones ``FunctionEmitter._expr_c``
turns into C for a ``DirectTable``.

All arithmetic is modulo 2**64; a 32-bit result is ``("ext", 2, x)`` (zero-extended W value).
"""

from __future__ import annotations

from functools import lru_cache

from recompiler.lift.integer import sext

M64 = (1 << 64) - 1
TOP = ("top",)
MAX_SIZE = 32  # nodes: a bigger value becomes an opaque leaf (bounds the fixed point)
CONSTS = ("const", "cslot")
LEAVES = ("in", "phi", "def", "top", "reg")


def const(v: int, kind: str = "const") -> tuple:
    return (kind, v & M64)


def cval(e: tuple) -> int | None:
    return e[1] if e[0] in CONSTS else None


def _ck(*es: tuple) -> str:
    """The constant kind of a result computed from constants ``es``: ``cslot`` if any was."""
    return "cslot" if any(e[0] == "cslot" for e in es) else "const"


@lru_cache(maxsize=1 << 16)
def size(e: tuple) -> int:
    return 1 + sum(size(x) for x in e[1:] if isinstance(x, tuple))


@lru_cache(maxsize=1 << 16)
def leaves(e: tuple) -> frozenset:
    """The opaque leaves of ``e``."""
    if e[0] in LEAVES:
        return frozenset((e,))
    out = frozenset()
    for x in e[1:]:
        if isinstance(x, tuple):
            out |= leaves(x)
    return out


def width(e: tuple) -> int:
    """Bits that may be non-zero in ``e`` (64 when not known)."""
    k = e[0]
    if k in CONSTS:
        return max(e[1].bit_length(), 1)
    if k == "ext" and not e[1] & 4:
        return min((8, 16, 32, 64)[e[1] & 3], width(e[2]))
    if k == "mask":
        return min(e[2].bit_length(), width(e[1]))
    if k == "load" and not e[2]:
        return 8 * e[1]
    if k == "lsr":
        return max(width(e[1]) - e[2], 1)
    return 64


def add(a: tuple, b: tuple) -> tuple:
    x, y = cval(a), cval(b)
    if x is not None and y is not None:
        return const(x + y, _ck(a, b))
    if x == 0:
        return b
    if y == 0:
        return a
    if x is not None:  # constants on the right
        a, b = b, a
    if a[0] == "add" and cval(a[2]) is not None and cval(b) is not None:
        return add(a[1], add(a[2], b))
    return _cap(("add", a, b))


def shl(a: tuple, n: int) -> tuple:
    x = cval(a)
    if x is not None:
        return const(x << n, _ck(a))
    return a if n == 0 else _cap(("shl", a, n))


def lsr(a: tuple, n: int) -> tuple:
    x = cval(a)
    if x is not None:
        return const(x >> n, _ck(a))
    return a if n == 0 else _cap(("lsr", a, n))


def mask(a: tuple, m: int) -> tuple:
    x = cval(a)
    if x is not None:
        return const(x & m, _ck(a))
    if m == M64 or width(a) <= m.bit_length() and m & (m + 1) == 0:
        return a
    if m & (m + 1):
        return TOP  # not a low-bit mask: not modelled
    return _cap(("mask", a, m))


def ext(option: int, a: tuple) -> tuple:
    """The A64 extend ``option`` (0-3 UXTB..UXTX, 4-7 SXTB..SXTX) of ``a``."""
    bits = (8, 16, 32, 64)[option & 3]
    x = cval(a)
    if x is not None:
        x &= (1 << bits) - 1
        return const(sext(x, bits) if option & 4 and bits < 64 else x, _ck(a))
    if bits == 64 or (not option & 4 and width(a) <= bits) or (option & 4 and width(a) < bits):
        return a
    if a[0] == "ext" and a[1] == option:
        return a
    return _cap(("ext", option, a))


def load(size_: int, signed: bool, addr: tuple) -> tuple:
    return _cap(("load", size_, signed, addr))


def w32(a: tuple) -> tuple:
    """A 32-bit result written to a W register (the upper half cleared)."""
    return ext(2, a)


def _cap(e: tuple) -> tuple:
    # (each operand was capped when it was built: a TOP inside one is the operand itself)
    return e if TOP not in e and size(e) <= MAX_SIZE else TOP


def strip(e: tuple) -> tuple:
    """``e`` without the outer extends and masks (how a compare's operand and a table's index
    are matched: ``cmp w1, #90`` on ``and w1, w0, #0xff`` bounds ``sxtw w0``)."""
    while e[0] in ("ext", "mask"):
        e = e[2] if e[0] == "ext" else e[1]
    return e


def substitute(e: tuple, env: dict) -> tuple:
    """``e`` with each sub-value found in ``env`` replaced (rebuilt through the folding
    constructors, so a fully known value becomes a constant)."""
    if e in env:
        return env[e]
    k = e[0]
    if k == "add":
        return add(substitute(e[1], env), substitute(e[2], env))
    if k == "shl":
        return shl(substitute(e[1], env), e[2])
    if k == "lsr":
        return lsr(substitute(e[1], env), e[2])
    if k == "mask":
        return mask(substitute(e[1], env), e[2])
    if k == "ext":
        return ext(e[1], substitute(e[2], env))
    if k == "load":
        return ("load", e[1], e[2], substitute(e[3], env))
    return e


def evaluate(e: tuple, env: dict, read) -> int | None:
    """The number ``e`` stands for with ``env`` (sub-value -> int) and ``read(addr, size)``
    giving memory (None where unknown); None if some leaf is not known."""
    if e in env:
        return env[e] & M64
    k = e[0]
    if k in CONSTS:
        return e[1]
    if k == "add":
        a = evaluate(e[1], env, read)
        b = evaluate(e[2], env, read) if a is not None else None
        return None if b is None else (a + b) & M64
    if k in ("shl", "lsr", "mask", "ext"):
        a = evaluate(e[2] if k == "ext" else e[1], env, read)
        if a is None:
            return None
        if k == "shl":
            return (a << e[2]) & M64
        if k == "lsr":
            return a >> e[2]
        if k == "mask":
            return a & e[2]
        return cval(ext(e[1], const(a)))
    if k == "load":
        a = evaluate(e[3], env, read)
        if a is None:
            return None
        b = read(a, e[1])
        if b is None:
            return None
        return int.from_bytes(b, "little", signed=e[2]) & M64
    return None


def to_emitter(e: tuple, regs: dict) -> tuple | None:
    """``e`` in the node kinds ``FunctionEmitter._expr_c`` knows, each leaf of ``regs`` (leaf ->
    register number) as ``("reg", n)``; None if some part has no such form (a ``cslot``
    included: the direct path must not rely on a value read back from memory)."""
    if e in regs:
        return ("reg", regs[e])
    k = e[0]
    if k == "const":
        return e
    if k in ("shl", "mask"):
        a = to_emitter(e[1], regs)
        return None if a is None else (k, a, e[2])
    if k == "add":
        a, b = to_emitter(e[1], regs), to_emitter(e[2], regs)
        return None if a is None or b is None else ("add", a, b)
    if k == "ext":
        a = to_emitter(e[2], regs)
        return None if a is None else ("ext", e[1], a)
    if k == "load":
        a = to_emitter(e[3], regs)
        return None if a is None else ("load", e[1], e[2], a)
    return None
