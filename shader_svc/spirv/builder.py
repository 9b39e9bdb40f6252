"""A small SPIR-V module builder: ids, de-duplicated types and constants, logical sections in
the order the specification requires, and the binary encoding.  Opcode and enumerant numbers
come from the grammar (``grammar.py``)."""

from __future__ import annotations

import struct

from shader_svc.spirv.grammar import grammar

GENERATOR = 0  # no registered generator id


def _words(args) -> list[int]:
    out: list[int] = []
    for a in args:
        if isinstance(a, str):
            b = a.encode() + b"\0"
            b += b"\0" * (-len(b) % 4)
            out += list(struct.unpack(f"<{len(b) // 4}I", b))
        elif isinstance(a, (list, tuple)):
            out += _words(a)
        else:
            out.append(a & 0xFFFFFFFF)
    return out


class Module:
    SECTIONS = ("cap", "ext", "import", "memmodel", "entry", "execmode", "debug", "annot", "types", "funcs")

    def __init__(self, version: tuple[int, int] = (1, 5)) -> None:
        self.g = grammar()
        self.version = version
        self.next_id = 1
        self.sec: dict[str, list[list[int]]] = {s: [] for s in self.SECTIONS}
        self._types: dict[tuple, int] = {}
        self._consts: dict[tuple, int] = {}
        self.const_values: dict[int, tuple[int, int]] = {}  # constant id -> (type id, value)
        self._widths: dict[int, int | None] = {}
        # the one function as instruction tuples (name, *int operands), kept out of the "funcs"
        # section until binary(), then encoded once
        self.function: list[tuple] | None = None

    def id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def emit(self, section: str, op: str, *args) -> None:
        w = _words(args)
        self.sec[section].append([((len(w) + 1) << 16) | self.g.op(op)] + w)

    def E(self, kind: str, name: str) -> int:
        return self.g.enum(kind, name)

    # -- types and constants (de-duplicated) --
    def type(self, op: str, *args) -> int:
        key = (op, args)
        if key not in self._types:
            tid = self.id()
            self._types[key] = tid
            self.emit("types", op, tid, *args)
        return self._types[key]

    def const(self, ty: int, *words: int) -> int:
        key = ("c", ty, words)
        if key not in self._consts:
            cid = self.id()
            self._consts[key] = cid
            self.const_values[cid] = (ty, sum(w << (32 * n) for n, w in enumerate(words)))
            self.emit("types", "OpConstant", ty, cid, *words)
        return self._consts[key]

    def const_bool(self, value: bool) -> int:
        key = ("b", value)
        if key not in self._consts:
            cid = self.id()
            self._consts[key] = cid
            self.const_values[cid] = (self.type("OpTypeBool"), int(bool(value)))
            self.emit("types", "OpConstantTrue" if value else "OpConstantFalse", self.type("OpTypeBool"), cid)
        return self._consts[key]

    def int_width(self, ty: int) -> int | None:
        """Bits of an integer type (1 for bool); None for any other type."""
        w = self._widths.get(ty, 0)
        if w == 0:
            w = None
            for (op, args), tid in self._types.items():
                if tid == ty:
                    w = args[0] if op == "OpTypeInt" else 1 if op == "OpTypeBool" else None
                    break
            self._widths[ty] = w
        return w

    def _encode_function(self, general: bool = False) -> None:
        """The function's tuples into the "funcs" section: each operand one word as it is
        (what the lowerings write); ``general``: through ``emit`` (strings, lists, negative
        literals), used when the plain words did not pack."""
        ops = self.g.opcodes
        if general:
            self.sec["funcs"] = []
            for t in self.function:
                self.emit("funcs", t[0], *t[1:])
        else:
            self.sec["funcs"] = [[(len(t) << 16) | ops[t[0]], *t[1:]] for t in self.function]

    def binary(self) -> bytes:
        if self.function is not None and not self.sec["funcs"]:
            self._encode_function()  # once: binary() may be called again
        try:
            return self._pack()
        except struct.error:
            if self.function is None:
                raise
            self._encode_function(general=True)
            return self._pack()

    def _pack(self) -> bytes:
        words = [self.g.magic, (self.version[0] << 16) | (self.version[1] << 8), GENERATOR, self.next_id, 0]
        for s in self.SECTIONS:
            for ins in self.sec[s]:
                words += ins
        return struct.pack(f"<{len(words)}I", *words)
