"""Decode SM86 instruction words with the table, and print them as nvdisasm does.

``decode(lo, hi, addr)`` gives an ``Inst`` (row, modifier values, operand values, control
bits) or raises ``DecodeError`` naming the word and what is wrong with it.  Decoding is strict:
a bit the table does not explain must hold the reference value, so a word we cannot print
exactly is refused instead of being printed wrong.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from shader_svc.isa import inst as isa
from shader_svc.isa import text as txt
from shader_svc.isa.decoder import RowIndex, alias_of, RowRefused, add_operand, field_mask, line, match, mod_values, mods_text
from shader_svc.isa.inst import CONTROL_BITS, Control, DecodeError  # noqa: F401  (this module's names)
from shader_svc.isa.text import hex_signed, pred_name, reg_name
from shader_svc.sm86.fields import (
    CONTROL_LO,
    REUSE_BIT,
    Attr,
    CBuf,
    CBufR,
    Imm,
    Mem,
    Pred,
    Reg,
    Row,
    SReg,
    Sym,
    Target,
    get,
)
from shader_svc.sm86.table import ROWS, SREGS

MASK105 = (1 << CONTROL_LO) - 1
SWZ = {0: "", 1: ".F32", 2: ".H0_H0", 3: ".H1_H1"}


def _known_mask(row: Row) -> int:
    return field_mask(row.field_bits())


_INDEX = RowIndex(ROWS, lambda r: (0xFFF, r.opcode), (0, 12))  # the 12-bit opcode (form bits 9..11 included)


@dataclass
class Inst(isa.Inst):
    """A decoded SM86 instruction (``row``: a ``fields.Row``), printed as nvdisasm 13 does."""

    def text(self) -> str:
        return render(self)


def _control(word: int) -> Control:
    return Control.from_bits(get(word, CONTROL_LO, CONTROL_BITS))


# nvdisasm 13.5 prints IMAD by 0x10000 and 0x80000000 as plain IMAD, other powers of two as IMAD.SHL
_PLAIN_POW2 = frozenset((0x10000, 0x80000000))


def _alias(row: Row, ops: dict, mods: dict) -> str:
    return alias_of(row.aliases, ops, mods, _PLAIN_POW2)


def _reuse_slots(row: Row, mods: dict[str, int]) -> int:
    """The control word's reuse flags (bits 122..125 as a 4-bit mask) some operand prints
    (one a modifier hides prints none: LEA's C without .HI)."""
    hidden = {op for op, mod, val in row.show_if if mods.get(mod) != val}
    m = 0
    for o in row.operands:
        if isinstance(o, Reg) and o.reuse and o.name not in hidden:
            m |= 1 << (REUSE_BIT[o.reuse] - 122)
    return m


def _unexplained(row: Row, bits: int) -> str:
    return f"{row.mnemonic}: unexpected bits {bits:#x}"


def decode(lo: int, hi: int, addr: int = 0) -> Inst:
    word = lo | (hi << 64)
    cands = _INDEX.candidates(lo)
    if not cands:
        raise DecodeError(f"unknown opcode {lo & 0xFFF:#05x}", offset=addr)

    def attempt(row: Row) -> Inst:
        mods, bad = mod_values(row.mods_before + row.mods, word)
        if bad:
            raise RowRefused(f"{row.mnemonic}: modifier {bad[0][0]}={bad[0][1]} not supported")
        for ex in row.exclude:
            if all(mods.get(k) == v for k, v in ex):
                raise RowRefused(f"{row.mnemonic}: modifiers {dict(ex)} together not supported")
        ops = {o.name: o.value(word, addr) for o in row.operands}
        if any(isinstance(o, SReg) for o in row.operands) and ops["sr"]["sr"] not in SREGS:
            raise RowRefused(f"special register {ops['sr']['sr']:#x} not supported")
        bad_sym = next((o for o in row.operands if isinstance(o, Sym) and o.lookup(ops[o.name]["sym"]) is None), None)
        if bad_sym is not None:
            raise RowRefused(f"{row.mnemonic}: {bad_sym.name}={ops[bad_sym.name]['sym']} not supported")
        stray = get(word, 122, 4) & ~_reuse_slots(row, mods)
        if stray:  # nvdisasm refuses such a word, or prints nothing for the flag (no round trip)
            raise RowRefused(f"{row.mnemonic}: reuse flag {stray:#x} on a slot no register operand uses")
        if any(ops[n].get("reg", ops[n].get("imm")) == v for n, v in row.refuse):
            raise RowRefused(f"{row.mnemonic}: operand value nvdisasm cannot print")
        return Inst(addr, row, word, get(word, 12, 3), bool(get(word, 15, 1)), mods, ops, _control(word), _alias(row, ops, mods))

    inst, reasons = match(word, cands, MASK105, attempt, _unexplained)
    if inst is None:
        raise DecodeError(f"word {hi:016x}{lo:016x} refused ({reasons[-1]})", offset=addr)
    return inst


def decode_stream(code: bytes, base: int = 0) -> list[Inst]:
    if len(code) % 16:
        raise DecodeError(f"code size {len(code)} is not a multiple of 16")
    return [decode(*struct.unpack_from("<QQ", code, i), addr=base + i) for i in range(0, len(code), 16)]


# ------------------------------------------------------------------------------------------
# text in nvdisasm's syntax


def fmt_f32(bits: int) -> str:
    return txt.fmt_f32(bits)


def _render_operand(o, v: dict, inst: Inst, neg_sym: str) -> str | None:
    w = inst.word
    if isinstance(o, Reg):
        if o.suffix == "@hiderz" and v["reg"] == (255 if o.file == "R" else 63):
            return None
        s = reg_name(v["reg"], o.file)
        if v["abs"]:
            s = f"|{s}|"
        if v["neg"]:
            s = (neg_sym if o.neg_sym == "-" else o.neg_sym) + s
        if o.reuse and get(w, REUSE_BIT[o.reuse], 1):
            s += ".reuse"
        if v.get("bsel"):  # a byte select, after '.reuse' ('R2P PR, R3.reuse.B1, 0x3'; decode-gaps)
            s += f".B{v['bsel']}"
        if o.suffix and not o.suffix.startswith("@"):  # after '.reuse': 'R8.reuse.ROW' (IMMA; shader-mma)
            s += o.suffix
        if o.suffix.startswith("@swz:"):  # after '.reuse', as nvdisasm prints 'R2.reuse.H0_H0'
            s += SWZ[get(w, int(o.suffix[5:]), 2)]
        return s
    if isinstance(o, Pred):
        return o.text(v)
    if isinstance(o, Imm):
        # nvdisasm follows an immediate -0.0 with a space, as its other special values
        # ('-0.0 , P0'; at the end of the line the space is trimmed with the rest)
        if o.kind == "f32":
            return txt.fmt_f32(v["imm"])
        if o.kind == "f16d":  # a half (F2I.F16's immediate), printed as its double is
            return txt.spaced(txt.fmt_f64(txt.f16_to_f64_bits(v["imm"])))
        if o.kind == "f16":  # one half of a packed pair (HADD2/HMUL2/HFMA2 immediates; shader-alu)
            return txt.fmt_f32(txt.f16_to_f32_bits(v["imm"]))
        if o.kind == "f64":  # the high word of a double (DADD/DMUL/DFMA immediates)
            return txt.spaced(txt.fmt_f64(v["imm"] << 32))
        if o.kind == "x4":  # printed after the register, left out while 0 ('R0 0x4')
            return hex_signed(v["imm"]) if v["imm"] else None
        return hex_signed(v["imm"])
    if isinstance(o, CBuf):
        s = f"c[{v['bank']:#x}]{o.sep}[{hex_signed(v['off'])}]"
        if v["abs"]:
            s = f"|{s}|"
        if v["neg"]:
            s = (neg_sym if o.neg_sym == "-" else o.neg_sym) + s
        return s
    if isinstance(o, CBufR):
        if o.file == "UR":  # the uniform index always printed (URZ too)
            return f"c[{v['bank']:#x}][{reg_name(v['reg'], 'UR')}" + (f"+{hex_signed(v['off'])}]" if v["off"] else "]")
        if v["reg"] == 255:
            return f"c[{v['bank']:#x}][{hex_signed(v['off'])}]"
        return f"c[{v['bank']:#x}][R{v['reg']}" + (f"+{hex_signed(v['off'])}]" if v["off"] else "]")
    if isinstance(o, Mem):
        if o.scale and v["reg"] == 255 and v["off"] and not v["wide"] and not v["scale"]:
            return f"[{hex_signed(v['off'])}]"  # shared memory at an absolute offset (nvdisasm 13.5)
        s = reg_name(v["reg"], "R") + (".64" if v["wide"] else ".U32" if o.u32 else "")
        if o.scale:
            s += dict(o.scale[2])[v["scale"]]
        # nvdisasm 13.5 (shader-mma): LDGSTS's source leaves out '+URZ'; ARRIVES's address
        # leaves out an RZ register ('[URZ+0x100]')
        if o.ur is not None and not (o.u32 and v["ur"] == 63):
            s = reg_name(v["ur"], "UR") if v["reg"] == 255 and not o.u32 else s + "+" + reg_name(v["ur"], "UR")
        if v["off"]:
            s += "+" + hex_signed(v["off"])
        return f"[{s}]"
    if isinstance(o, SReg):
        return SREGS[v["sr"]]
    if isinstance(o, Target):
        return hex_signed(v["target"])
    if isinstance(o, Attr):
        if o.reg:  # arch-gfx: ALD.PHYS / AST.PHYS a[R2] (RZ: refused by the row)
            return f"a[R{v['attr']}]"
        if o.ur is not None:
            return f"a[{reg_name(v['ur'], 'UR')}" + (f"+{v['attr']:#x}]" if v["attr"] else "]")
        return f"a[{v['attr']:#x}]"
    if isinstance(o, Sym):
        return None if v["sym"] == o.hide else o.lookup(v["sym"])
    raise TypeError(o)


def render(inst: Inst) -> str:
    row = inst.row
    guard = (
        ""
        if inst.pred == 7 and not inst.pred_not
        else "@" + pred_name(inst.pred, inst.pred_not, "UP" if row.uniform else "P") + " "
    )
    name = row.mnemonic + inst.alias + mods_text(row.mods_before + row.mods, inst.mods)
    neg_sym = "~" if inst.mods.get("X") == 1 else "-"
    hidden = {op for op, mod, val in row.show_if if inst.mods.get(mod) != val}
    parts = []
    for o in row.operands:
        if o.name in hidden:
            continue
        # RET's target follows its register: 'R8 0x0'
        add_operand(parts, _render_operand(o, inst.ops[o.name], inst, neg_sym), o.name == "rt")
    return line(guard, name, parts)
