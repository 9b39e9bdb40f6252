"""Function starts from a Go program's ``.gopclntab``: the function table the Go linker writes
into every Go binary (stripped or not) for the runtime's own stack walks, tracebacks and
``runtime.FuncForPC``.  It lists the entry of every function, also of those reached only
through Go's own tables (closures' funcvals, itabs' method slots, ``reflect``'s method values,
the runtime's assembly entered by ``gogo``/``mcall``), which no call instruction names.

Format (the Go source's ``runtime/symtab.go``, ``pcHeader`` and ``functab``; Go 1.18 and later,
magic 0xFFFFFFF0, and Go 1.20 and later, 0xFFFFFFF1, share it): a header of a 4-byte magic, two
zero bytes, the instruction size quantum (4 on arm64) and the pointer size (8), then 8 words:
``nfunc``, ``nfiles``, ``textStart`` and the offsets from the header of the function-name, CU,
file, pc-value and function tables.  The function table (at the last offset) holds ``nfunc + 1``
pairs of 32-bit (entry offset from ``textStart``, offset of the function's ``_func`` record);
the last pair's entry is the end of the text.

Older layouts (the Go source's ``debug/gosym/pclntab.go`` reads all of them) hold addresses,
not offsets, in 64-bit (pointer-sized) pairs: Go 1.16-1.17 (magic 0xFFFFFFFA) has 7 words after
the same 8 header bytes, ``nfunc``, ``nfiles`` and the offsets of the function-name, CU, file,
pc-value and function tables (no ``textStart``), a ``_func`` record's offset counting from the
function table and its name's from the function-name table; Go 1.2-1.15 (0xFFFFFFFB) has only
``nfunc`` and the pairs right after it, with the end-of-text address and the file table's offset
after them, record and name offsets counting from the section's start.

A position-independent Go program (``-buildmode=pie``) keeps the table in ``.data.rel.ro.gopclntab``
(``elf.py`` takes either name), whose addresses (``textStart``, or every entry before Go 1.18)
its dynamic relocations fill in: ``pipeline.go_pclntabs`` hands over the bytes as placed and
relocated."""

from __future__ import annotations

import struct

from nxrecomp.common.errors import NxError


class PclntabError(NxError):
    """A .gopclntab section whose header or function table is malformed."""


MAGIC_118 = (0xFFFFFFF0, 0xFFFFFFF1)  # Go 1.18-1.19, 1.20+
MAGIC_116 = 0xFFFFFFFA  # Go 1.16-1.17
MAGIC_12 = 0xFFFFFFFB  # Go 1.2-1.15


# the function whose entry + one instruction is every goroutine's first return address (Go 1.17 and
# later name the assembly one with its ABI's suffix)
GOEXIT = ("runtime.goexit", "runtime.goexit.abi0")


def pclntab_entries(addr: int, data: bytes) -> list[int]:
    """Entry address of every function the table at ``addr`` (its bytes ``data``) lists, in
    table order; a header that is no pclntab raises ``PclntabError`` naming what is wrong."""
    return [e for e, _n in pclntab_functions(addr, data, names=False)]


def goroutine_returns(addr: int, data: bytes) -> list[int]:
    """The address one instruction into ``runtime.goexit``: the runtime's ``newproc1`` starts
    each goroutine with it as its return address (``funcPC(goexit) + sys.PCQuantum``, "so that
    previous instruction is in same function"), so a goroutine's function returns there, onto
    goexit's call of ``goexit1``, which no table, call or pointer names (fzf's reader goroutine,
    at the end of its input, was lifted at run time)."""
    return [e + data[6] for e, n in pclntab_functions(addr, data) if n in GOEXIT]


def pclntab_functions(addr: int, data: bytes, names: bool = True) -> list[tuple[int, str]]:
    """(entry, name) of every function of the table (names empty unless ``names``): a
    function's ``_func`` record starts with its entry (a 32-bit offset from ``textStart`` since
    Go 1.18, the address before) and the offset of its name in the function-name table (32
    bits).  Each layout is checked where it repeats itself: the record's entry is the table's."""
    if len(data) < 16:
        raise PclntabError(f".gopclntab at {addr:#x} has {len(data)} bytes, fewer than its 16-byte header")
    magic, pad1, pad2, quantum, ptrsize = struct.unpack_from("<IBBBB", data, 0)
    if pad1 or pad2 or ptrsize != 8 or quantum not in (1, 2, 4):
        raise PclntabError(
            f".gopclntab at {addr:#x}: header bytes 4..7 are {data[4:8].hex()}, expected 0000 then a"
            " pc quantum of 1/2/4 and pointer size 8"
        )
    if magic in MAGIC_118:
        if len(data) < 8 + 8 * 8:
            raise PclntabError(f".gopclntab at {addr:#x}: header truncated ({len(data)} bytes)")
        nfunc, _nfiles, text, fnoff, _cu, _ft, _pct, pcoff = struct.unpack_from("<8Q", data, 8)
        # (entry offset, _func offset) pairs of 32 bits, from the function table's start
        return _functions(addr, data, nfunc, pcoff, "<II", pcoff, fnoff, text, "<I", names)
    if magic == MAGIC_116:
        if len(data) < 8 + 7 * 8:
            raise PclntabError(f".gopclntab at {addr:#x}: header truncated ({len(data)} bytes)")
        nfunc, _nfiles, fnoff, _cu, _ft, _pct, pcoff = struct.unpack_from("<7Q", data, 8)
        # (entry address, _func offset from the function table) pairs of 64 bits
        return _functions(addr, data, nfunc, pcoff, "<QQ", pcoff, fnoff, 0, "<Q", names)
    if magic == MAGIC_12:
        (nfunc,) = struct.unpack_from("<Q", data, 8)
        # the pairs follow the count; record and name offsets are from the table's start
        return _functions(addr, data, nfunc, 16, "<QQ", 0, 0, 0, "<Q", names)
    raise PclntabError(f".gopclntab at {addr:#x}: magic {magic:#010x} is no Go pclntab magic")


def _functions(
    addr: int, data: bytes, nfunc: int, at: int, pair: str, recs: int, fnoff: int, text: int, rec_entry: str, names: bool
) -> list[tuple[int, str]]:
    """The ``nfunc`` (entry, ``_func`` offset) pairs of layout ``pair`` at offset ``at`` (plus
    the end-of-text entry after them): entries are ``text`` + the pair's first field, records at
    ``recs`` + its second, each starting with its entry (``rec_entry``: an offset from ``text`` or
    the address) and its name's offset (int32) in the names at ``fnoff``."""
    size = struct.calcsize(pair)
    need = at + size * nfunc + size // 2
    if nfunc > len(data) or need > len(data):
        raise PclntabError(
            f".gopclntab at {addr:#x}: its function table ({nfunc} functions at offset {at:#x}) runs past"
            f" the section's {len(data):#x} bytes"
        )
    out = []
    step = struct.calcsize(rec_entry)
    for e, f in struct.iter_unpack(pair, data[at : at + size * nfunc]):
        name = ""
        if names:
            rec = recs + f
            if rec + step + 4 > len(data):
                raise PclntabError(f".gopclntab at {addr:#x}: the record of the function at {text + e:#x} is past its end")
            (own,) = struct.unpack_from(rec_entry, data, rec)
            if own != e:
                raise PclntabError(
                    f".gopclntab at {addr:#x}: the record of the function at {text + e:#x} names entry {text + own:#x}"
                )
            (nameoff,) = struct.unpack_from("<i", data, rec + step)
            where = fnoff + nameoff
            end = data.find(b"\0", where)
            name = data[where:end].decode("utf-8", "replace") if 0 <= where < len(data) and end >= 0 else ""
        out.append((text + e, name))
    return out
