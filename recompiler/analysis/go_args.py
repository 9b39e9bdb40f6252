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

from recompiler.analysis.gopclntab import MAGIC_118, pclntab_entries, pclntab_functions

FUNC_FLAG_ASM = 4
# The runtime's assembly whose source documents a convention narrower than the registers it
# reads and writes: name -> (what it reads, what a call of it may change).  Go 1.19's
# runtime/asm_arm64.s: "gcWriteBarrier does NOT follow the Go ABI. It takes two arguments: R2 is
# the destination of the write, R3 is the value being written at R2. It clobbers condition
# codes. It does not clobber any general-purpose registers, but may clobber others (e.g.,
# floating point registers)"; it saves R0-R25 to its frame and restores them around its call of
# wbBufFlush, so it hands back each as it found it (its returns store every register, as the
# runtime's assembly does), and with SP: no stack moves under it (wbBufFlush runs on the
# system stack).  It also reads g, X29, X30 and SP; the call changes X30, and the assembler's
# temporaries X16, X17, X27 are counted as changed too.
CONVENTIONS = {
    "runtime.gcWriteBarrier": (
        sum(1 << r for r in (2, 3, 28, 29, 30, 31)),
        sum(1 << r for r in (16, 17, 27, 30)) | ((1 << 32) - 1) << 32,
    )
}
# The runtime's assembly whose Go declaration gives it at most one result, in R0 (a function of
# assembly has no stack check to spill its arguments and no type in the binary, so its results
# come from its declaration; compiled callers call it as any ABIInternal function, which keeps
# no register, and read after it only its result): Go 1.19's runtime/stubs.go
# "func memclrNoHeapPointers(ptr unsafe.Pointer, n uintptr)", "func memmove(to, from
# unsafe.Pointer, n uintptr)", "func memequal(a, b unsafe.Pointer, size uintptr) bool",
# runtime/alg.go "func memequal_varlen(a, b unsafe.Pointer) bool", internal/bytealg's
# "func IndexByte(b []byte, c byte) int", "func IndexByteString(s string, c byte) int",
# "func Count(b []byte, c byte) int", "func CountString(s string, c byte) int", "func Compare(a,
# b []byte) int", "func Index(a, b []byte) int", "func IndexString(a, b string) int".  Their
# returns hand back R0 and what is no result register (``interproc.GO_ASM_RESULTS`` left out):
# ``runtime.memmove`` stored X1-X17 and X27 at its returns and loaded them at its entry.
AT_MOST_R0 = frozenset(
    {
        "runtime.memclrNoHeapPointers",
        "runtime.memmove",
        "runtime.memequal",
        "runtime.memequal_varlen",
        "internal/bytealg.IndexByte",
        "internal/bytealg.IndexByteString",
        "internal/bytealg.Count",
        "internal/bytealg.CountString",
        "internal/bytealg.Compare",
        "internal/bytealg.Index",
        "internal/bytealg.IndexString",
    }
)
# what their returns hand back: every register but X1-X17, X19-X27 and the vector registers
R0_HANDED = ((1 << 64) - 1) & ~(sum(1 << r for r in [*range(1, 18), *range(19, 28)]) | ((1 << 32) - 1) << 32)
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


def arg_sizes(addr: int, data: bytes) -> dict[int, int]:
    """Entry -> ``_func.args`` (the argument area's size) of every function of a Go 1.18+ table."""
    entries = pclntab_functions(addr, data, names=False)
    (magic,) = struct.unpack_from("<I", data, 0)
    if magic not in MAGIC_118:
        return {}
    pcoff = struct.unpack_from("<Q", data, 8 + 7 * 8)[0]
    out = {}
    for k, (_e, f) in enumerate(struct.iter_unpack("<II", data[pcoff : pcoff + 8 * len(entries)])):
        out[entries[k][0]] = struct.unpack_from("<i", data, pcoff + f + 8)[0]
    return out


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


# Stores of the morestack stub's spills, by (mask, value) of the instruction word: STR/STRH/STRB
# (immediate, unsigned offset) of a general register, STR (SIMD&FP, unsigned offset) of a B, H,
# S, D or Q register; the base register must be SP
_SPILL_GP = ((0xFFC00000, 0xF9000000), (0xFFC00000, 0xB9000000), (0xFFC00000, 0x79000000), (0xFFC00000, 0x39000000))
_SPILL_FP = (
    (0xFFC00000, 0xFD000000),
    (0xFFC00000, 0xBD000000),
    (0xFFC00000, 0x7D000000),
    (0xFFC00000, 0x3D000000),
    (0xFFC00000, 0x3D800000),
)
_MOV_X3_LR = 0xAA1E03E3  # mov x3, x30 (orr x3, xzr, x30): morestack's "f's caller's pc"
_B = (0xFC000000, 0x14000000)
_RET_BR = (0xFFFFFC1F, 0xD65F0000)  # RET Xn
_BR = (0xFFFFFC1F, 0xD61F0000)  # BR Xn
_NOP = 0xD503201F


def stub_spills(insns: list, morestack: set[int]) -> int | None:
    """The argument registers a function compiled from Go is handed, from the call of
    ``runtime.morestack``/``morestack_noctxt`` its stack check branches to: the Go compiler
    spills every register argument to its slot before that call and reloads them after it
    (``cmd/internal/obj/arm64``'s ``stacksplit``: ``SpillRegisterArgs`` ... ``BL
    runtime.morestack`` ... ``UnspillRegisterArgs``, then a jump back to the entry), so the
    registers stored to ``[sp, #n]`` in the stub's block, between the instruction that ends the
    code before it and ``mov x3, x30`` (morestack's argument) or the call, are its arguments.
    A bit mask of them (X and V bits, ``liveness.xbit``/``vbit``); None where the function has no
    such call or the block holds anything else (no bound is taken from it then)."""
    from recompiler.lift.liveness import vbit, xbit

    by_addr = {i.addr: i for i in insns}
    calls = [i for i in insns if (i.word & 0xFC000000) == 0x94000000 and _bl_target(i) in morestack]
    if len(calls) != 1:
        return None
    call = calls[0]
    regs = 0
    a = call.addr - 4
    while a in by_addr:
        w = by_addr[a].word
        if w == _MOV_X3_LR:
            a -= 4
            continue
        if (w >> 5) & 31 != 31:
            break
        if any(w & m == v for m, v in _SPILL_GP):
            regs |= xbit(w & 31) if w & 31 != 31 else 0
        elif any(w & m == v for m, v in _SPILL_FP):
            regs |= vbit(w & 31)
        else:
            break
        a -= 4
    # what comes before the block must not run on into it: a branch away (the function's last
    # return or jump) or the padding after a call that does not return (``bl panicIndex; nop``),
    # so the block is entered only by the stack check's conditional branch
    before = by_addr.get(a)
    if before is None or not (before.word == _NOP or any(before.word & m == v for m, v in (_B, _RET_BR, _BR))):
        return None
    return regs


def _bl_target(i) -> int:
    imm = i.word & 0x3FFFFFF
    if imm >> 25:
        imm -= 1 << 26
    return i.addr + 4 * imm


def morestack_entries(addr: int, data: bytes) -> set[int]:
    """The entries of ``runtime.morestack`` and ``runtime.morestack_noctxt`` in the table."""
    names = ("runtime.morestack", "runtime.morestack_noctxt", "runtime.morestack.abi0", "runtime.morestack_noctxt.abi0")
    return {e for e, n in pclntab_functions(addr, data) if n in names}


# Go's type kinds (the Go source's ``runtime/typekind.go``) and the registers a value of each
# takes in ABIInternal (cmd/compile/abi-internal.md): (integer, floating point)
_KIND_REGS = {
    1: (1, 0), 2: (1, 0), 3: (1, 0), 4: (1, 0), 5: (1, 0), 6: (1, 0), 7: (1, 0), 8: (1, 0), 9: (1, 0),
    10: (1, 0), 11: (1, 0), 12: (1, 0), 13: (0, 1), 14: (0, 1), 15: (0, 2), 16: (0, 2), 18: (1, 0),
    19: (1, 0), 20: (2, 0), 21: (1, 0), 22: (1, 0), 23: (3, 0), 24: (2, 0), 26: (1, 0),
}  # fmt: skip
_KIND_ARRAY, _KIND_FUNC, _KIND_STRUCT = 17, 19, 25
_MODULEDATA_TYPES = 280  # moduledata.types, etypes (Go 1.16-1.19: after pcHeader .. gcbss)
_MODULEDATA_TEXT = 176  # moduledata.text


def _u(mem, addr: int, fmt: str):
    b = mem.read(addr, struct.calcsize(fmt))
    return None if b is None else struct.unpack(fmt, b)


def _kind(mem, t: int) -> int | None:
    b = mem.read(t + 23, 1)
    return None if b is None else b[0] & 31


def _type_regs(mem, t: int, types: tuple[int, int], depth: int = 0) -> tuple[int, int] | None:
    """(integer, FP) registers a value of the Go type at ``t`` takes when register-assigned
    (``runtime/type.go``: ``_type`` is 48 bytes, its kind the byte at 23; ``arrayType`` adds
    elem, slice, len; ``structType`` pkgPath and a fields slice of (name, typ, offsetAnon)); None
    where it goes on the stack (an array of more than one element) or cannot be read."""
    if depth > 8 or not types[0] <= t < types[1]:
        return None
    h = _u(mem, t, "<QQIBBBB")
    if h is None:
        return None
    kind = h[6] & 31
    if kind in _KIND_REGS:
        return _KIND_REGS[kind]
    if kind == _KIND_ARRAY:
        a = _u(mem, t + 48, "<QQQ")
        if a is None:
            return None
        elem, _slice, n = a
        return (0, 0) if n == 0 else _type_regs(mem, elem, types, depth + 1) if n == 1 else None
    if kind == _KIND_STRUCT:
        s = _u(mem, t + 56, "<QQ")
        if s is None or s[1] > 64:
            return None
        ni = nf = 0
        for k in range(s[1]):
            f = _u(mem, s[0] + 24 * k + 8, "<Q")
            r = None if f is None else _type_regs(mem, f[0], types, depth + 1)
            if r is None:
                return None
            ni, nf = ni + r[0], nf + r[1]
        return ni, nf
    return None


def _func_results(mem, t: int, types: tuple[int, int]) -> int | None:
    """The registers the results of a function of Go type ``t`` (a ``funcType``: inCount,
    outCount, an ``uncommontype`` where tflag bit 0 says so, then the in and out types' pointers)
    come back in: R0.. and F0.. in order (a result that does not fit goes on the stack and
    takes none); None where the type is no function type."""
    from recompiler.lift.liveness import vbit, xbit

    if not types[0] <= t < types[1]:
        return None
    h = _u(mem, t, "<QQIBBBBQQiiHH")
    if h is None or h[6] & 31 != _KIND_FUNC:
        return None
    tflag, n_in, n_out = h[3], h[11], h[12] & 0x7FFF
    at = t + 56 + (16 if tflag & 1 else 0) + 8 * n_in
    ni = nf = 0
    for k in range(n_out):
        p = _u(mem, at + 8 * k, "<Q")
        if p is None:
            return None
        r = _type_regs(mem, p[0], types)
        if r is not None and ni + r[0] <= 16 and nf + r[1] <= 16:
            ni, nf = ni + r[0], nf + r[1]
    return sum(xbit(i) for i in range(ni)) | sum(vbit(i) for i in range(nf))


def method_results(mem, addr: int, data: bytes, entries: set[int]) -> tuple[set[int], dict[int, int]]:
    """The entries Go's type data names by a 32-bit text offset (``textOff``, from ``textStart``:
    ``runtime/type.go``'s ``method{name nameOff; mtyp typeOff; ifn, tfn textOff}`` records of
    a type's method table, from which the runtime builds itabs at run time and ``reflect`` its
    method calls), outside the function table at ``addr``: (those named by a word no method
    record explains: any caller may read anything they return; for the others, the result
    registers of their methods' types, ``mtyp``, which any caller through an interface or
    ``reflect`` reads; a word that fits no record is data, not a text offset: the runtime reads
    text offsets only from method records, ``itab.init`` and ``reflect``'s ``resolveTextOff``).
    A record counts where its ``mtyp`` is a function type of the module's
    types (``moduledata.types``, found by its first word, the table's address), or -1 (no
    interface or reflect reaches the method: it hands back what its direct callers read), and
    its ``ifn`` and ``tfn`` are entries (or -1, a method the linker dropped).  Tables of Go before 1.18
    (no ``textStart``) name every such entry as opened."""
    import numpy as np

    (magic,) = struct.unpack_from("<I", data, 0)
    text = struct.unpack_from("<Q", data, 24)[0] if magic in MAGIC_118 else min(entries, default=0)
    offs = np.array(sorted(e - text for e in entries if 0 <= e - text < 1 << 32), dtype=np.int64)
    hits: list[tuple[int, int]] = []  # (word address, entry)
    md = None
    for va, _memsz, seg, x in mem.segments:
        if x or len(seg) < 8:
            continue
        off = -va % 4
        w = np.frombuffer(seg, dtype="<u4", count=(len(seg) - off) // 4, offset=off).astype(np.int64)
        where = np.int64(va + off) + 4 * np.arange(len(w), dtype=np.int64)
        hit = np.isin(w, offs) & ((where < addr) | (where >= addr + len(data)))
        hits += [(int(a), int(v) + text) for a, v in zip(where[hit], w[hit])]
        if md is None:  # moduledata: its first word is the function table's address
            o8 = -va % 8
            q = np.frombuffer(seg, dtype="<u8", count=(len(seg) - o8) // 8, offset=o8)
            for k in np.nonzero(q == addr)[0]:
                cand = va + o8 + 8 * int(k)
                t = _u(mem, cand + _MODULEDATA_TEXT, "<Q")
                ty = _u(mem, cand + _MODULEDATA_TYPES, "<QQ")
                if t and ty and t[0] == text and ty[0] < ty[1] and mem.read(ty[0], 1) is not None:
                    md = ty
                    break
    opened: set[int] = set()
    results: dict[int, int] = {}
    if magic not in MAGIC_118 or md is None:
        return {e for _a, e in hits}, {}
    text_off = {e - text for e in entries}
    for a, e in hits:
        sig = None
        record = False
        for start in (a - 8, a - 12):  # the word is the record's ifn, or its tfn
            rec = _u(mem, start, "<iiII")
            if rec is None or not all(f == 0xFFFFFFFF or f in text_off for f in rec[2:]):
                continue
            if rec[1] != -1 and not (0 <= rec[1] < md[1] - md[0] and _kind(mem, md[0] + rec[1]) == _KIND_FUNC):
                continue  # no function type of the module: no method record
            record = True
            # mtyp -1: the linker kept no type for the method (no interface or reflect can
            # reach it: itab.init matches a method by its type), only direct calls enter it
            sig = 0 if rec[1] == -1 else _func_results(mem, md[0] + rec[1], md)
            if sig is not None:
                break
        if sig is not None:
            results[e] = results.get(e, 0) | sig
        elif record:  # a record whose type this reader does not follow: any result
            opened.add(e)
        # else a word that is no method record (the runtime reads text offsets only from them)
    return opened, {e: m for e, m in results.items() if e not in opened}


def inner_labels(addr: int, data: bytes, functions) -> set[int]:
    """The lifted functions whose entry the table lists not but that lie inside a function
    compiled from Go (between its entry and the next): a jump table's cases (Go 1.19's switch
    tables, whose rodata words name them: analysis found them as code pointers), which only that
    function's dispatch enters, and whose returns are its returns."""
    import bisect

    _argless, go = kinds(addr, data)
    starts = sorted(pclntab_entries(addr, data))
    listed = set(starts)
    out = set()
    for e in functions:
        if e in listed:
            continue
        k = bisect.bisect_right(starts, e) - 1
        if 0 <= k < len(starts) - 1 and starts[k] in go:
            out.add(e)
    return out
