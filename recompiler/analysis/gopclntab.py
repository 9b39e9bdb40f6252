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
the last pair's entry is the end of the text.  Older layouts (Go 1.2-1.17: magic 0xFFFFFFFB,
0xFFFFFFFA) are not read (a warning): their functions are found by the other means only."""

from __future__ import annotations

import struct

from nxrecomp.common.errors import NxError
import logging

log = logging.getLogger("recompiler")


class PclntabError(NxError):
    """A .gopclntab section whose header or function table is malformed."""


MAGIC_118 = (0xFFFFFFF0, 0xFFFFFFF1)  # Go 1.18-1.19, 1.20+
MAGIC_116 = 0xFFFFFFFA  # Go 1.16-1.17
MAGIC_12 = 0xFFFFFFFB  # Go 1.2-1.15


def pclntab_entries(addr: int, data: bytes) -> list[int]:
    """Entry address of every function the table at ``addr`` (its bytes ``data``) lists, in
    table order; a header that is no pclntab raises ``PclntabError`` naming what is wrong."""
    return [e for e, _n in pclntab_functions(addr, data, names=False)]


def pclntab_functions(addr: int, data: bytes, names: bool = True) -> list[tuple[int, str]]:
    """(entry, name) of every function of the table (names empty unless ``names``): a
    function's ``_func`` record starts with its entry offset (32 bits) and the offset of its
    name in the function-name table (32 bits)."""
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
        need = pcoff + 8 * (nfunc + 1)
        if need > len(data):
            raise PclntabError(
                f".gopclntab at {addr:#x}: its function table ({nfunc} functions at offset {pcoff:#x}) runs past"
                f" the section's {len(data):#x} bytes"
            )
        out = []
        for e, f in struct.iter_unpack("<II", data[pcoff : pcoff + 8 * nfunc]):
            name = ""
            if names:
                rec = pcoff + f
                if rec + 8 > len(data):
                    raise PclntabError(f".gopclntab at {addr:#x}: the record of the function at {text + e:#x} is past its end")
                (nameoff,) = struct.unpack_from("<i", data, rec + 4)
                at = fnoff + nameoff
                end = data.find(b"\0", at)
                name = data[at:end].decode("utf-8", "replace") if 0 <= at < len(data) and end >= 0 else ""
            out.append((text + e, name))
        return out
    if magic in (MAGIC_116, MAGIC_12):
        log.warning(".gopclntab at %#x is of Go 1.17 or older (magic %#x): not read", addr, magic)
        return []
    raise PclntabError(f".gopclntab at {addr:#x}: magic {magic:#010x} is no Go pclntab magic")
