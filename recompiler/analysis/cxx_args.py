"""The argument registers of functions whose symbol names say their parameters (AAPCS64).

A function's register summary (``lift.interproc.summarize``) reads what its body and its
callees may read before writing it.  Deep inside a C++ program's runtime an indirect call
(``std::terminate``'s handler, ``operator new``'s new-handler, the unwinder's personality) reads
every argument register an unknown callee may read (X0-X7, V0-V7: ``liveness.CALL_USES``), and
so, up the call graph, do ``std::terminate()``, ``operator new(unsigned long)``,
``_Unwind_Resume`` and every function that may reach them: their callers keep X1-X7 and V0-V7
live on every path to such a call, stored before their calls and handed back by their callees'
returns (``interproc.result_uses``: a result a caller reads after a call).  By AAPCS64 a
function reads no argument register beyond its parameters: what the others hold at its entry
is undefined, and its body's reads of them (passing them on to a callee of its own) hand that
callee nothing its parameters need.

Two kinds of names say the parameters:
- an Itanium C++ ABI mangled name (``_Z...``) encodes the parameter types of a function (not
  its return type, which may be returned through X8: X8 is kept); it is demangled by the C++
  runtime's own ``__cxa_demangle`` (the host's libstdc++) and the parameter list is classed:
  pointers, references and integral types take one general register (a pointer to member
  two), floating-point types one
  FP/SIMD register, ``__int128`` two (an even pair), any other type (a class or an enum by value,
  whose size the name does not tell) is counted as the most AAPCS64 may give it (two general
  and four FP/SIMD registers: a composite of at most 16 bytes, an HFA of four members); a
  name inside a scope (``_ZN...``) counts an implicit ``this`` first (a static member function
  has none; counting one is only more); a variadic one (``...``) is left as it is;
- the Itanium C++ ABI's and the unwinding ABI's C entry points (``__cxa_throw``,
  ``_Unwind_Resume``, ...), their parameters from those documents.

The result is ``FunctionPlan.input_regs`` (``interproc.FnLive.uses_cap``): everything but the
argument registers X0-X7 and V0-V7 that the parameters do not take.  Only for AAPCS64 code
(Go functions have their own conventions: ``analysis.go_args``), and only where the symbol
names the function's entry.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import re
from functools import lru_cache

from recompiler.lift import liveness as L

log = logging.getLogger(__name__)

# Itanium C++ ABI (exception handling, guards, atexit) and the Level I unwinding ABI: general
# register parameters of each (all integers or pointers)
C_ENTRIES = {
    "__cxa_throw": 3,
    "__cxa_rethrow": 0,
    "__cxa_allocate_exception": 1,
    "__cxa_free_exception": 1,
    "__cxa_begin_catch": 1,
    "__cxa_end_catch": 0,
    "__cxa_get_exception_ptr": 1,
    "__cxa_call_unexpected": 1,
    "__cxa_bad_cast": 0,
    "__cxa_bad_typeid": 0,
    "__cxa_pure_virtual": 0,
    "__cxa_deleted_virtual": 0,
    "__cxa_guard_acquire": 1,
    "__cxa_guard_release": 1,
    "__cxa_guard_abort": 1,
    "__cxa_atexit": 3,
    "__cxa_finalize": 1,
    "__clang_call_terminate": 1,
    "_Unwind_RaiseException": 1,
    "_Unwind_Resume": 1,
    "_Unwind_Resume_or_Rethrow": 1,
    "_Unwind_ForcedUnwind": 3,
    "_Unwind_DeleteException": 1,
}

_ARGS_X = range(8)
_ARGS_V = range(8)
# what the most a by-value parameter of unknown type may take (AAPCS64 B.3/C: a composite of at
# most 16 bytes: two general registers; an HFA/HVA: four FP/SIMD registers; larger: a pointer)
_UNKNOWN = (2, 4)
_INTEGRAL = {
    "bool",
    "char",
    "signed char",
    "unsigned char",
    "wchar_t",
    "char8_t",
    "char16_t",
    "char32_t",
    "short",
    "unsigned short",
    "int",
    "unsigned int",
    "long",
    "unsigned long",
    "long long",
    "unsigned long long",
    "std::nullptr_t",
    "decltype(nullptr)",
}
_FLOATING = {"float", "double", "long double", "__float128", "_Float16", "__fp16", "half", "__bf16"}
_INT128 = {"__int128", "unsigned __int128"}
_CV = re.compile(r"\s*\b(const|volatile)\b\s*")


@lru_cache(maxsize=1)
def _demangler():
    """The host C++ runtime's ``__cxa_demangle`` (and ``free``), or None."""
    for name in ("libstdc++.so.6", ctypes.util.find_library("stdc++"), "libc++.so.1", "libc++abi.so.1"):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            fn = lib.__cxa_demangle
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        libc = ctypes.CDLL(None)
        libc.free.argtypes = [ctypes.c_void_p]
        return fn, libc.free
    log.info("no C++ runtime with __cxa_demangle on the host: C++ functions keep their worst-case inputs")
    return None


def demangle(name: str) -> str | None:
    """``name`` demangled, or None (not a mangled name, or no demangler)."""
    d = _demangler()
    if d is None or not name.startswith("_Z"):
        return None
    fn, free = d
    status = ctypes.c_int(0)
    p = fn(name.encode(), None, None, ctypes.byref(status))
    if not p or status.value != 0:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        free(p)


_OPEN = {")": "(", "]": "[", ">": "<"}


def _split_params(text: str) -> list[str] | None:
    """The top-level parameter list of a demangled function name, or None where it has none
    or its brackets do not pair up as types' do (an expression among template arguments,
    ``(sizeof(T)>4)``: a miscounted list could be shorter than the real one)."""
    t = text.rstrip()
    # trailing qualifiers of a member function and its ref-qualifier
    while True:
        for q in (" const", " volatile", " &&", " &", " noexcept"):
            if t.endswith(q):
                t = t[: -len(q)].rstrip()
                break
        else:
            break
    if not t.endswith(")"):
        return None
    stack: list[str] = []
    start = -1
    for i in range(len(t) - 1, -1, -1):
        c = t[i]
        if c in ")]>":
            stack.append(c)
        elif c in "([<":
            if not stack or _OPEN[stack.pop()] != c:
                return None
            if not stack:
                start = i
                break
    if start < 0 or t[start] != "(":
        return None
    inner = t[start + 1 : -1]
    params, cur = [], []
    stack = []
    for c in inner:
        if c in "([<":
            stack.append(c)
        elif c in ")]>":
            if not stack or stack.pop() != _OPEN[c]:
                return None
        if c == "," and not stack:
            params.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if stack:
        return None
    last = "".join(cur).strip()
    if last:
        params.append(last)
    if params == ["void"]:
        return []
    return params


def _regs_of(param: str) -> tuple[int, int] | None:
    """(general, FP/SIMD) registers a parameter of this type may take; None: variadic."""
    p = param.strip()
    if p == "...":
        return None
    if "::*" in p:  # a pointer to member (to a member function: 16 bytes, two registers)
        return (2, 0)
    if p.endswith(("*", "&")) or "(*)" in p or "(&)" in p:
        return (1, 0)
    base = _CV.sub(" ", p).strip()
    base = " ".join(base.split())
    if base in _INTEGRAL:
        return (1, 0)
    if base in _FLOATING:
        return (0, 1)
    if base in _INT128:
        return (3, 0)  # an even-numbered pair: at most one register skipped
    return _UNKNOWN


def input_regs_of(name: str) -> int | None:
    """The registers a function named ``name`` may read at its entry (``FunctionPlan.input_regs``):
    every register but the argument registers its parameters do not take; None where the name
    does not say them."""
    n_x = n_v = None
    if name in C_ENTRIES:
        n_x, n_v = C_ENTRIES[name], 0
    elif name.startswith("_Z") and not name.startswith(("_ZT", "_ZG")):
        text = demangle(name)
        if text is None:
            return None
        params = _split_params(text)
        if params is None:
            return None
        n_x = 1 if name.startswith(("_ZN", "_ZZ")) else 0  # an implicit this (only more where none)
        n_v = 0
        for p in params:
            r = _regs_of(p)
            if r is None:
                return None
            n_x += r[0]
            n_v += r[1]
    if n_x is None:
        return None
    drop = 0
    for k in _ARGS_X:
        if k >= n_x:
            drop |= L.xbit(k)
    for k in _ARGS_V:
        if k >= n_v:
            drop |= L.vbit(k)
    return L.ALL & ~drop


def input_caps(symbols: dict[int, str], entries) -> dict[int, int]:
    """Entry -> ``input_regs`` for each of ``entries`` a symbol of ``symbols`` names (the
    tightest where several names share an entry is not taken: an alias may be any of them, so
    the union of what they allow)."""
    out: dict[int, int] = {}
    names: dict[int, list[str]] = {}
    for addr, name in symbols.items():
        if addr in entries:
            names.setdefault(addr, []).append(name)
    for addr, ns in names.items():
        caps = [input_regs_of(n) for n in ns]
        if any(c is None for c in caps):
            continue
        m = 0
        for c in caps:
            m |= c
        out[addr] = m
    return out
