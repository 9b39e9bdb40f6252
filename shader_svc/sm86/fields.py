"""Building blocks of the SM86 (Ampere) instruction table: bit fields, operand kinds and
modifiers.  The table (``table.py``) is made of these records only; the decoder, the text
disassembler and the assembler all read the same records, so a fact about the encoding is
written once.

Bit numbers count from bit 0 of the 128-bit instruction (low 64-bit word first).  Layout facts
come from public sources (Mesa NAK's SM70+ encoder, CuAssembler) and from nvdisasm experiments
(flip one bit, see what the disassembler prints).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shader_svc.isa import operands
from shader_svc.isa.bits import get, put, sext  # noqa: F401  (the table's readers import them from here)
from shader_svc.isa.operands import Alias, Named, Pred

# Control bits (scheduling): present on every instruction, never part of an opcode.
CONTROL_LO = 105
REUSE_BIT = {"a": 122, "b": 123, "c": 124}


@dataclass(frozen=True)
class Reg:
    """A register operand.  ``file`` 'R' (8 bits, 255 = RZ) or 'UR' (6 bits, 63 = URZ).
    ``neg``/``abs``: bit numbers of its modifiers (None: not available); ``neg_sym`` '-' for
    arithmetic negation, '~' for bitwise not; ``reuse``: logical slot whose reuse flag it shows;
    ``suffix``: printed after the register (e.g. '.64')."""

    name: str
    lo: int
    file: str = "R"
    neg: int | None = None
    abs: int | None = None
    neg_sym: str = "-"
    reuse: str | None = None
    suffix: str = ""
    # decode-gaps: bit of a 2-bit byte select printed on the register ('R2.B1'; R2P/UR2UP's
    # source, bits 76..77 by nvdisasm 13.5 flips); the value is the register's byte n (bsel)
    bsel: int | None = None

    @property
    def width(self) -> int:
        return {"R": 8, "B": 4}.get(self.file, 6)

    def bits(self) -> list[tuple[int, int]]:
        out = [(self.lo, self.width)]
        out += [(b, 1) for b in (self.neg, self.abs) if b is not None]
        out += [(self.bsel, 2)] if self.bsel is not None else []
        return out

    def value(self, w: int, addr: int = 0) -> dict:
        v = {
            "reg": get(w, self.lo, self.width),
            "neg": bool(self.neg is not None and get(w, self.neg, 1)),
            "abs": bool(self.abs is not None and get(w, self.abs, 1)),
            "file": self.file,
        }
        if self.bsel is not None:
            v["bsel"] = get(w, self.bsel, 2)
        return v


@dataclass(frozen=True)
class Imm:
    """An immediate.  ``kind``: 's' signed hex, 'u' unsigned hex, 'f32' float, 'x4' a signed
    offset in 4-byte units printed after the previous operand and left out while 0 (BRX), 'a4'
    an absolute address in 4-byte units (JMP), 's4' a signed one (RET.ABS), 'f16' a half of a packed pair (printed as a float), 'f16d' a lone half (F2I.F16, printed as a double).  A value split
    in two places has its upper part at ``hi_lo`` (``hi_width`` bits)."""

    name: str
    lo: int
    width: int
    kind: str = "s"
    hi_lo: int | None = None
    hi_width: int = 0

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)] + ([(self.hi_lo, self.hi_width)] if self.hi_lo is not None else [])

    def value(self, w: int, addr: int = 0) -> dict:
        v = get(w, self.lo, self.width)
        if self.hi_lo is not None:
            v |= get(w, self.hi_lo, self.hi_width) << self.width
        if self.kind in ("x4", "s4"):  # a signed offset in 4-byte units (BRX/JMX), RET.ABS's address
            return {"imm": 4 * sext(v, self.width)}
        if self.kind == "a4":  # an absolute address in 4-byte units (JMP)
            return {"imm": 4 * v}
        return {"imm": sext(v, self.width) if self.kind == "s" else v}


@dataclass(frozen=True)
class CBuf:
    """Constant bank operand c[bank][offset]: bank bits 54..58, word offset bits 40..53
    (printed as a signed byte offset).  ``neg``/``abs`` as for Reg."""

    name: str
    neg: int | None = None
    abs: int | None = None
    neg_sym: str = "-"  # '~' for bitwise not (POPC/FLO)
    sep: str = ""  # between bank and offset: nvdisasm prints I2F's narrow reads 'c[0x0] [0x0]'

    def bits(self) -> list[tuple[int, int]]:
        return [(54, 5), (40, 14)] + [(b, 1) for b in (self.neg, self.abs) if b is not None]

    def value(self, w: int, addr: int = 0) -> dict:
        return {
            "bank": get(w, 54, 5),
            "off": sext(get(w, 40, 14), 14) * 4,
            "neg": bool(self.neg is not None and get(w, self.neg, 1)),
            "abs": bool(self.abs is not None and get(w, self.abs, 1)),
        }


@dataclass(frozen=True)
class CBufR:
    """Indexed constant bank operand c[bank][Ra+offset] (LDC): bank bits 54..58, register 24,
    signed byte offset 38..53; printed c[0x0][R2+0x160] (the register left out while RZ).
    ``file`` "UR" (ULDC's indexed form, shader-rest): a uniform register, 6 bits at 24, always
    printed ('c[0x2][UR4]', 'c[0x2][URZ+0x4]': nvdisasm 13.5)."""

    name: str
    file: str = "R"

    def bits(self) -> list[tuple[int, int]]:
        return [(54, 5), (24, 8 if self.file == "R" else 6), (38, 16)]

    def value(self, w: int, addr: int = 0) -> dict:
        r = get(w, 24, 8) if self.file == "R" else get(w, 24, 6)
        return {"bank": get(w, 54, 5), "reg": r, "off": sext(get(w, 38, 16), 16), "file": self.file}


@dataclass(frozen=True)
class Mem:
    """Memory address [Rn(.64)(.X4)+imm].  ``wide_bit``: bit that makes the address register a
    64-bit pair (None: never, -1: always); ``off``: (lo, width) of the signed byte offset (width 0: none); ``scale``:
    (lo, width, {value: suffix}) for shared-memory index scaling; ``ureg``: bit that adds a
    uniform register (not supported: must be clear)."""

    name: str
    reg_lo: int = 24
    wide_bit: int | None = None
    off: tuple[int, int] = (40, 24)
    scale: tuple[int, int, tuple[tuple[int, str], ...]] | None = None
    signed: bool = True  # the offset field is two's complement (ISBERD's is not)
    ur: int | None = None  # a uniform register (6 bits) added, printed '+URn' (LDGSTS, ARRIVES)
    u32: bool = False  # a 32-bit address register prints '.U32' (LDGSTS's global source)

    def bits(self) -> list[tuple[int, int]]:
        out = [(self.reg_lo, 8)] + ([self.off] if self.off[1] else []) + ([(self.ur, 6)] if self.ur is not None else [])
        if self.wide_bit is not None and self.wide_bit >= 0:
            out.append((self.wide_bit, 1))
        if self.scale:
            out.append(self.scale[:2])
        return out

    def value(self, w: int, addr: int = 0) -> dict:
        scale = get(w, self.scale[0], self.scale[1]) if self.scale else 0
        wide = self.wide_bit == -1 or (self.wide_bit is not None and bool(get(w, self.wide_bit, 1)))
        off = get(w, *self.off) if self.off[1] else 0  # (width 0: no offset field, surfaces)
        return {
            "reg": get(w, self.reg_lo, 8),
            "off": sext(off, self.off[1]) if self.signed and self.off[1] else off,
            "wide": wide,
            "scale": scale,
            **({"ur": get(w, self.ur, 6)} if self.ur is not None else {}),
        }


@dataclass(frozen=True)
class SReg(operands.SReg):
    """Special register of S2R (bits 72..79)."""

    lo: int = 72


@dataclass(frozen=True)
class Target(operands.Target):
    """Branch target: signed offset in 4-byte units relative to the next instruction."""

    lo: int = 34
    width: int = 48
    step: int = 16
    unit: int = 4


@dataclass(frozen=True)
class Attr(operands.Attr):
    """Attribute address a[0x80] (ALD/AST/IPA): ``width`` bits at ``lo``, in units of ``scale``
    bytes; ``ur``: a uniform register (6 bits) added, printed a[UR4+0x10] (LDTRAM)."""

    scale: int = 1
    ur: int | None = None
    reg: bool = False  # arch-gfx: the field is a register, printed a[R2] (ALD.PHYS / AST.PHYS)

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)] + ([(self.ur, 6)] if self.ur is not None else [])

    def value(self, w: int, addr: int = 0) -> dict:
        v = {"attr": get(w, self.lo, self.width) * self.scale, **({"ur": get(w, self.ur, 6)} if self.ur is not None else {})}
        return {**v, "reg": v["attr"]} if self.reg else v  # (arch-gfx: a register, for Row.refuse)


@dataclass(frozen=True)
class Sym(operands.Sym):
    """A field nvdisasm prints as an operand word rather than a '.MOD' (TEX's dimension '2D',
    TXQ's query, TEX's component mask '0x3').  ``names``: value -> text; a value missing is
    refused.  ``hide``: value printed as nothing (TEX's full mask 0xf)."""

    hide: int | None = None


@dataclass(frozen=True)
class Mod(Named):
    """A modifier field printed as '.NAME' after the mnemonic ('' prints nothing).  A value
    missing from ``names`` is not decoded (the decoder refuses the instruction)."""

    name: str
    lo: int
    width: int
    names: tuple[tuple[int, str], ...]

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, self.width)]

    def value(self, word: int) -> int:
        return get(word, self.lo, self.width)

    def encode(self, word: int, v: int) -> int:
        return put(word, self.lo, self.width, v)


Operand = Reg | Pred | Imm | CBuf | CBufR | Mem | SReg | Target | Attr | Sym


@dataclass(frozen=True)
class Row:
    """One encoding of one instruction: the 12-bit opcode (bits 0..11, incl. the operand-form
    bits 9..11), operands in print order, modifiers in print order, and ``base``: the 105
    non-control bits of a reference encoding.  Bits not covered by the opcode, operands,
    modifiers, the guard predicate or ``free`` must equal ``base`` or the word is refused."""

    mnemonic: str
    opcode: int
    operands: tuple[Operand, ...]
    mods_before: tuple[Mod, ...] = ()
    mods: tuple[Mod, ...] = ()
    base: int = 0
    free: tuple[tuple[int, int], ...] = ()
    aliases: tuple[Alias, ...] = ()
    # Operands printed only when a modifier has a value: {operand name: (mod name, value)}.
    show_if: tuple[tuple[str, str, int], ...] = ()
    ir: str = ""  # IR lowering key ('' = mnemonic)
    uniform: bool = False  # guard predicate is a uniform predicate (UP)
    cls: str = "alu"  # alu, mem, branch, ctrl, warp, conv, sfu, attr, tex
    # Operand values refused although the field could hold them: (operand, register number or
    # immediate value);
    # nvdisasm prints them as garbage ('???255'), so no text of ours could match.
    refuse: tuple[tuple[str, int], ...] = ()
    stages: tuple[str, ...] = ()  # graphics stages the instruction exists in ('' = any)
    # Modifier value combinations nvdisasm refuses although each field could hold them: each
    # entry ((mod, value), ...) refuses the word when all hold (LEA's .SX32 without .HI).
    exclude: tuple[tuple[tuple[str, int], ...], ...] = ()
    known_mask: int = field(default=0, compare=False)

    def field_bits(self) -> list[tuple[int, int]]:
        out = [(0, 12), (12, 4)]
        for o in self.operands:
            out += o.bits()
        for m in self.mods_before + self.mods:
            out += m.bits()
        out += list(self.free)
        return out
