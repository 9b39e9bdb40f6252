"""Which functions of a Go program take no arguments, from its ``.gopclntab``.

Each ``_func`` record of the function table (``analysis.gopclntab``; the Go source's
``runtime/runtime2.go``, ``type _func``) holds ``args``, the size of the function's argument
area: its stack-assigned parameters and results and the spill slots the caller reserves for its
register-assigned parameters (Go's cmd/compile/abi-internal.md: "The algorithm reserves spill
space for arguments in the caller's frame"), and ``flag``, whose bit ``funcFlag_ASM`` (4) marks
assembly.  A function compiled from Go whose argument area is empty has no parameter, so at its
entry no argument register (R0-R15, F0-F15) holds anything for it: a caller need not store one
for it, whatever the function's callees read (``interproc.summarize`` caps its USES to
``liveness.GO_NOARG_INPUTS``).  Assembly keeps its own register conventions (``morestack``
reads R3, ``gcWriteBarrier`` R2 and R3 and saves the others), so it is never capped.

Layout of the record from its start (Go 1.18-1.19, magic 0xFFFFFFF0): entryOff, nameOff, args,
deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset (4 bytes each), then funcID, flag, a pad
byte and nfuncdata; Go 1.20 and later (0xFFFFFFF1) put startLine (4 bytes) before funcID."""

from __future__ import annotations

import struct

from recompiler.analysis.gopclntab import MAGIC_118, pclntab_functions

FUNC_FLAG_ASM = 4
_FLAG_AT = {0xFFFFFFF0: 37, 0xFFFFFFF1: 41}  # the flag byte's offset in a _func record


def argless(addr: int, data: bytes) -> set[int]:
    """Entries of the functions compiled from Go whose argument area is empty (``args`` 0, no
    ``funcFlag_ASM``) in the table at ``addr`` (its bytes ``data``); empty for a table of
    another layout (``pclntab_functions`` raises on a malformed one)."""
    return kinds(addr, data)[0]


def compiled(addr: int, data: bytes) -> set[int]:
    """Entries of the functions compiled from Go (no ``funcFlag_ASM``): their returns hand a
    caller only results, g, X29 and SP (Go's ABIInternal); the runtime's assembly keeps its
    own conventions (``gcWriteBarrier`` restores every register it saved)."""
    return kinds(addr, data)[1]


def kinds(addr: int, data: bytes) -> tuple[set[int], set[int]]:
    """(``argless``, ``compiled``) of the table."""
    entries = pclntab_functions(addr, data, names=False)
    (magic,) = struct.unpack_from("<I", data, 0)
    if magic not in MAGIC_118 or not entries:
        return set(), set()
    flag_at = _FLAG_AT[magic]
    _nfunc, _nfiles, _text, _fnoff, _cu, _ft, _pct, pcoff = struct.unpack_from("<8Q", data, 8)
    out, go = set(), set()
    for k, (_e, f) in enumerate(struct.iter_unpack("<II", data[pcoff : pcoff + 8 * len(entries)])):
        rec = pcoff + f
        if rec + flag_at + 1 > len(data) or data[rec + flag_at] & FUNC_FLAG_ASM:
            continue
        go.add(entries[k][0])
        (args,) = struct.unpack_from("<i", data, rec + 8)
        if args == 0:
            out.add(entries[k][0])
    return out, go
