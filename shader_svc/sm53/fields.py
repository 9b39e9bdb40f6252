"""Building blocks of the SM53 (Maxwell) instruction table: operand kinds, modifiers and the
row record.  The table (``table.py``) is made of these records only; the decoder, the printer
and the assembler read the same records, so a fact about the encoding is written once.

Maxwell instructions are 64-bit words; every fourth word of the stream (byte offset % 32 == 0)
is a control word holding the scheduling of the next three: per instruction 21 bits = stall
(4), yield (1), write barrier (3), read barrier (3), wait mask (6), operand reuse (4).
Common slots (Ryujinx InstTable / Mesa NAK sm50 / envytools, confirmed by flipping bits under
nvdisasm 11.8): Rd 0..7, Ra 8..15, guard predicate 16..18 (+ not 19), Rb 20..27,
c[bank 34..38][word offset 20..33], 19-bit immediate 20..38 with its sign (or the float's
sign) at 56, Rc 39..46, set-condition-code 47.
"""

from __future__ import annotations

from dataclasses import dataclass

from shader_svc.isa import operands
from shader_svc.isa.inst import CONTROL_BITS
from shader_svc.isa.bits import get, put, sext  # noqa: F401  (the table's readers import them from here)
from shader_svc.isa.operands import Named, Pred, Sym

CTRL_BITS = CONTROL_BITS  # one instruction's scheduling bits in the control word
# the half instructions' operand swizzle: which half each result lane reads ('' = H1_H0)
SWZ = {0: "", 1: ".F32", 2: ".H0_H0", 3: ".H1_H1"}
# ``Sym`` (isa/operands.py) here: several values may share a text (TEXS's target field gives both the
# LOD modifiers and the dimension); the assembler keeps the value a modifier already put there
# when its text matches.
RZ, PT = 255, 7


def _flag(bit: int | None) -> list[tuple[int, int]]:
    return [] if bit is None else [(bit, 1)]


@dataclass(frozen=True)
class Reg:
    """A general register (8 bits, 255 = RZ).  Optional bits: ``neg`` ('-'), ``abs`` ('|R|'),
    ``inv`` ('~'), ``cc`` ('.CC' after a destination), ``h1`` ('.H1' half select),
    ``hsel`` (2-bit .H0/.H1 field), ``bsel`` (2-bit byte select .B1-.B3).  ``reuse``: which
    of the control word's reuse flags (0 = A, 1 = B, 2 = C) it prints as '.reuse'.  ``pair``:
    printed as 'Rn, Rn+1' (CAS operands; 2: 'Rn, Rn+2', the 64-bit CAS's two pairs)."""

    name: str
    lo: int
    neg: int | None = None
    abs: int | None = None
    inv: int | None = None
    cc: int | None = None
    h1: int | None = None
    hsel: int | None = None
    bsel: int | None = None
    swz: int | None = None  # half instructions' 2-bit swizzle (SWZ), printed inside |x|
    reuse: int | None = None
    pair: bool | int = False
    hide_rz: bool = False  # left out of the text while RZ (ALD's vertex, TEX's second source)
    # the video ops' 3-bit selector (0..3 byte 0..3, 4/5 half 0/1, 6 the word): printed '.B1'..
    # '.B3' / '.H1' after the register (its size is the mnemonic's, a modifier on the same bits)
    vsel: int | None = None
    # a 4-bit byte selector printed as a pattern after the register (VABSDIFF4's '.3201'):
    # (lo, ((value, text), ...)); a value missing is refused
    sel4: tuple[int, tuple[tuple[int, str], ...]] | None = None

    def bits(self) -> list[tuple[int, int]]:
        out = [(self.lo, 8)] + ([(self.swz, 2)] if self.swz is not None else [])
        if self.sel4 is not None:
            out.append((self.sel4[0], 4))
        for b in (self.neg, self.abs, self.inv, self.cc, self.h1):
            out += _flag(b)
        for b in (self.hsel, self.bsel):
            if b is not None:
                out.append((b, 2))
        if self.vsel is not None:
            out.append((self.vsel, 3))
        return out

    def value(self, w: int, addr: int = 0) -> dict:
        d = {"reg": get(w, self.lo, 8), "swz": get(w, self.swz, 2) if self.swz is not None else 0}
        for k in ("neg", "abs", "inv", "cc", "h1"):
            b = getattr(self, k)
            d[k] = bool(b is not None and get(w, b, 1))
        d["hsel"] = get(w, self.hsel, 2) if self.hsel is not None else 0
        d["bsel"] = get(w, self.bsel, 2) if self.bsel is not None else 0
        d["vsel"] = get(w, self.vsel, 3) if self.vsel is not None else 6
        if self.sel4 is not None:
            d["sel4"] = get(w, self.sel4[0], 4)
        return d


@dataclass(frozen=True)
class Imm:
    """An immediate at ``lo`` (``width`` bits).  ``kind``: 's' signed hex (``sign``: a separate
            sign bit extends it, as the 19-bit ALU immediates at 56), 'u' unsigned hex, 'f20' (the top
            19 bits of an f32 after its sign, sign at ``sign``), 'f32', 'dec' (plain decimal), 'x16'
            (XMAD's 16-bit immediate: signed when bit 49, B's sign, is set), 'sa' (signed, printed after
            the previous operand with a space: BRX's offset; 'ua' unsigned: JMX's address), 'su' (signed
        with ``sign``, printed as the unsigned 20-bit field: IADD3's, as nvdisasm 11.8 prints it), 'h16'
    (a half, printed as its double: the *2_32I immediates), 'h10' (a half's bits 6..14, its sign
    at ``sign``, the low 6 bits zero: HADD2/HMUL2/HFMA2's immediate forms).  Flags:
            ``neg`` ('.NEG' after a float), ``abs`` ('.ABS'), ``inv`` ('.INV')."""

    name: str
    lo: int
    width: int
    kind: str = "s"
    sign: int | None = None
    neg: int | None = None
    abs: int | None = None
    inv: int | None = None
    hide_zero: bool = False  # left out of the text while 0 (LEA's shift)

    def bits(self) -> list[tuple[int, int]]:
        out = [(self.lo, self.width)]
        for b in (self.sign, self.neg, self.abs, self.inv):
            out += _flag(b)
        return out

    def value(self, w: int, addr: int = 0) -> dict:
        v = get(w, self.lo, self.width)
        if self.kind in ("s", "sa", "su"):
            v = sext(v | (get(w, self.sign, 1) << self.width), self.width + 1) if self.sign is not None else sext(v, self.width)
        elif self.kind == "f20":
            v = (get(w, self.sign, 1) << 31) | (v << 12)
        elif self.kind == "h10":  # a half's bits 6..14 (its low 6 bits zero), sign at ``sign``
            v = (get(w, self.sign, 1) << 15) | (v << 6)
        elif self.kind == "d20":  # the top 20 bits of a double (DADD/DMUL/DFMA/DSETP immediates)
            v = (get(w, self.sign, 1) << 63) | (v << 44)
        elif self.kind == "x16" and get(w, 49, 1):  # XMAD's 16-bit immediate is signed with .U16.S16
            v = sext(v, 16)
        return {
            "imm": v,
            "neg": bool(self.neg is not None and get(w, self.neg, 1)),
            "abs": bool(self.abs is not None and get(w, self.abs, 1)),
            "inv": bool(self.inv is not None and get(w, self.inv, 1)),
        }


@dataclass(frozen=True)
class CBuf:
    """c[bank][byte offset]: bank 34..38, word offset 20..33 (printed as a signed byte
    offset).  ``space``: XMAD prints 'c[0x0] [0x8]'; ``h1``: '.H1' half select."""

    name: str
    neg: int | None = None
    abs: int | None = None
    inv: int | None = None
    h1: int | None = None
    space: bool = False

    def bits(self) -> list[tuple[int, int]]:
        out = [(34, 5), (20, 14)]
        for b in (self.neg, self.abs, self.inv, self.h1):
            out += _flag(b)
        return out

    def value(self, w: int, addr: int = 0) -> dict:
        d = {"bank": get(w, 34, 5), "off": sext(get(w, 20, 14), 14) * 4}
        for k in ("neg", "abs", "inv", "h1"):
            b = getattr(self, k)
            d[k] = bool(b is not None and get(w, b, 1))
        return d


@dataclass(frozen=True)
class CIdx:
    """Indexed constant c[bank][Ra+offset] of LDC: bank 36..40, Ra 8..15, signed 16-bit byte
    offset 20..35."""

    name: str

    def bits(self) -> list[tuple[int, int]]:
        return [(36, 5), (8, 8), (20, 16)]

    def value(self, w: int, addr: int = 0) -> dict:
        return {"bank": get(w, 36, 5), "reg": get(w, 8, 8), "off": sext(get(w, 20, 16), 16), "indexed": True}


@dataclass(frozen=True)
class Mem:
    """[Ra+offset]: address register at ``reg_lo`` (RZ is left out unless the offset is 0),
    byte offset = field (``off_lo``, ``off_w``, ``signed``) * ``scale``, printed '+0x10' / '+-0x10'."""

    name: str
    reg_lo: int = 8
    off_lo: int = 20
    off_w: int = 24
    scale: int = 1
    signed: bool = True
    glue: bool = False  # printed right after the mnemonic, without a space (CCTL.QRY1[R0])

    def bits(self) -> list[tuple[int, int]]:  # (``off_w`` 0: no offset field, surfaces)
        return [(self.reg_lo, 8)] + ([(self.off_lo, self.off_w)] if self.off_w else [])

    def value(self, w: int, addr: int = 0) -> dict:
        off = get(w, self.off_lo, self.off_w) if self.off_w else 0  # (width 0: no offset, surfaces)
        reg = get(w, self.reg_lo, 8)
        # an absolute address (RZ base) is printed unsigned
        return {"reg": reg, "off": (sext(off, self.off_w) if self.signed and self.off_w and reg != RZ else off) * self.scale}


@dataclass(frozen=True)
class SReg(operands.SReg):
    """Special register of S2R (bits 20..27)."""

    lo: int = 20


@dataclass(frozen=True)
class Target(operands.Target):
    """Branch target: signed byte offset (bits 20..43) from the next instruction, printed as
    the absolute address."""

    lo: int = 20
    width: int = 24
    step: int = 8
    unit: int = 1


@dataclass(frozen=True)
class Mod(Named):
    """A modifier printed after the mnemonic.  ``pieces``: (lo, width) bit ranges, the first
    holding the low bits of the value; ``names``: value -> printed text ('' = nothing).  A
    value not listed is refused by the decoder, never guessed."""

    name: str
    pieces: tuple[tuple[int, int], ...]
    names: tuple[tuple[int, str], ...]

    def bits(self) -> list[tuple[int, int]]:
        return list(self.pieces)

    def value(self, word: int) -> int:
        v, shift = 0, 0
        for lo, w in self.pieces:
            v |= get(word, lo, w) << shift
            shift += w
        return v

    def encode(self, word: int, v: int) -> int:
        for lo, w in self.pieces:
            word = put(word, lo, w, v)
            v >>= w
        return word


@dataclass(frozen=True)
class Attr(operands.Attr):
    """Attribute byte address a[0x80] of ALD/AST/IPA: ``width`` bits at ``lo``.  ``zero``: the
    text of address 0 (ALD/AST print 'a[RZ]', IPA 'a[0x0]')."""

    zero: str = "0x0"
    reg: bool = False  # arch-gfx: the field is a register, printed a[R2] (ALD.PHYS / AST.PHYS)


# TEXS/TLDS component masks: the 3-bit field's meaning depends on whether the second
# destination pair is RZ (one pair: up to two components) or not (three or four components)
TEXS_MASKS_ONE = {0: 0x1, 1: 0x2, 2: 0x4, 3: 0x8, 4: 0x3, 5: 0x9, 6: 0xA, 7: 0xC}
TEXS_MASKS_TWO = {0: 0x7, 1: 0xB, 2: 0xD, 3: 0xE, 4: 0xF}


def channels(mask: int) -> str:
    return "".join(c for i, c in enumerate("RGBA") if mask >> i & 1)


@dataclass(frozen=True)
class TexsMask:
    """The component mask of TEXS/TLDS (bits ``lo``..+2), printed as channels ('RGBA'); its
    meaning depends on the second destination register at ``d2_lo`` (see TEXS_MASKS_*)."""

    name: str
    lo: int = 50
    d2_lo: int = 28

    def bits(self) -> list[tuple[int, int]]:
        return [(self.lo, 3)]

    def mask(self, word: int) -> int | None:
        table = TEXS_MASKS_ONE if get(word, self.d2_lo, 8) == RZ else TEXS_MASKS_TWO
        return table.get(get(word, self.lo, 3))

    def value(self, w: int, addr: int = 0) -> dict:
        return {"sym": get(w, self.lo, 3), "mask": self.mask(w)}


Operand = Reg | Pred | Imm | CBuf | CIdx | Mem | SReg | Target | Attr | Sym | TexsMask


@dataclass(frozen=True)
class Row:
    """One encoding of one instruction.  ``mask``/``value``: the opcode bits (may include fixed
    form bits anywhere in the word).  ``operands`` and ``mods`` in print order.  ``base``: a
    reference word; every bit not covered by the opcode, an operand, a modifier or the guard
    predicate must equal it, or the word is refused.  ``ir``: lowering key, ``cls``: class."""

    mnemonic: str
    mask: int
    value: int
    operands: tuple[Operand, ...] = ()
    mods: tuple[Mod, ...] = ()
    base: int = 0
    ir: str = ""
    cls: str = "alu"
    guard: bool = True  # bits 16..19 are a guard predicate (not for SSY/CAL/PBK)
    # bit masks whose bits may not all be set (IADD with both negations is IADD.PO, another
    # instruction as far as the text goes): such words are refused
    exclusive: tuple[int, ...] = ()

    def field_bits(self) -> list[tuple[int, int]]:
        out = [(16, 4)] if self.guard else []
        for o in self.operands:
            out += o.bits()
        for m in self.mods:
            out += m.bits()
        return out

    def known_mask(self) -> int:
        m = self.mask
        for lo, w in self.field_bits():
            m |= ((1 << w) - 1) << lo
        return m
