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
from shader_svc.isa.inst import Control, DecodeError  # noqa: F401  (this module's names)
from shader_svc.isa.text import fmt_f64
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
    sext,
)
from shader_svc.sm86.table import ROWS, SREGS

MASK105 = (1 << CONTROL_LO) - 1
SWZ = {0: "", 1: ".F32", 2: ".H0_H0", 3: ".H1_H1"}


def _known_mask(row: Row) -> int:
    m = 0
    for lo, w in row.field_bits():
        m |= ((1 << w) - 1) << lo
    return m


_BY_OPCODE: dict[int, list[tuple[Row, int]]] = {}
for _r in ROWS:
    _BY_OPCODE.setdefault(_r.opcode, []).append((_r, _known_mask(_r)))


@dataclass
class Inst(isa.Inst):
    """A decoded SM86 instruction (``row``: a ``fields.Row``), printed as nvdisasm 13 does."""

    def text(self) -> str:
        return render(self)


def _control(word: int) -> Control:
    return Control(
        get(word, 105, 4), get(word, 109, 1), get(word, 110, 3), get(word, 113, 3), get(word, 116, 6), get(word, 122, 4)
    )


def _operand(o, w: int, addr: int):
    if isinstance(o, Reg):
        return {
            "reg": get(w, o.lo, o.width),
            "neg": bool(o.neg is not None and get(w, o.neg, 1)),
            "abs": bool(o.abs is not None and get(w, o.abs, 1)),
            "file": o.file,
        }
    if isinstance(o, Pred):
        return {"pred": get(w, o.lo, 3) ^ o.xor, "not": bool(o.not_bit is not None and get(w, o.not_bit, 1))}
    if isinstance(o, Imm):
        v = get(w, o.lo, o.width)
        if o.hi_lo is not None:
            v |= get(w, o.hi_lo, o.hi_width) << o.width
        if o.kind in ("x4", "s4"):  # a signed offset in 4-byte units (BRX/JMX), RET.ABS's address
            return {"imm": 4 * sext(v, o.width)}
        if o.kind == "a4":  # an absolute address in 4-byte units (JMP)
            return {"imm": 4 * v}
        return {"imm": sext(v, o.width) if o.kind == "s" else v}
    if isinstance(o, CBuf):
        return {
            "bank": get(w, 54, 5),
            "off": sext(get(w, 40, 14), 14) * 4,
            "neg": bool(o.neg is not None and get(w, o.neg, 1)),
            "abs": bool(o.abs is not None and get(w, o.abs, 1)),
        }
    if isinstance(o, CBufR):
        return {"bank": get(w, 54, 5), "reg": get(w, 24, 8), "off": sext(get(w, 38, 16), 16)}
    if isinstance(o, Mem):
        scale = get(w, o.scale[0], o.scale[1]) if o.scale else 0
        wide = o.wide_bit == -1 or (o.wide_bit is not None and bool(get(w, o.wide_bit, 1)))
        off = get(w, *o.off) if o.off[1] else 0  # (width 0: no offset field, surfaces)
        return {
            "reg": get(w, o.reg_lo, 8),
            "off": sext(off, o.off[1]) if o.signed and o.off[1] else off,
            "wide": wide,
            "scale": scale,
            **({"ur": get(w, o.ur, 6)} if o.ur is not None else {}),
        }
    if isinstance(o, SReg):
        return {"sr": get(w, o.lo, 8)}
    if isinstance(o, Target):
        return {"target": addr + 16 + 4 * sext(get(w, o.lo, o.width), o.width)}
    if isinstance(o, Attr):
        v = {"attr": get(w, o.lo, o.width) * o.scale, **({"ur": get(w, o.ur, 6)} if o.ur is not None else {})}
        return {**v, "reg": v["attr"]} if o.reg else v  # (arch-gfx: a register, for Row.refuse)
    if isinstance(o, Sym):
        return {"sym": get(w, o.lo, o.width)}
    raise TypeError(o)


def _alias(row: Row, ops: dict, mods: dict) -> str:
    for al in row.aliases:
        ok = True
        for name, kind, val in al.when:
            v = ops.get(name)
            if kind == "mod":
                ok = ok and mods.get(name) == val
            elif v is None:
                ok = False
            elif kind == "reg":
                ok = ok and "reg" in v and v.get("file") == "R" and v["reg"] == val
            elif kind == "imm":
                ok = ok and "imm" in v and v["imm"] == val
            elif kind == "pow2":
                # nvdisasm 13.5 prints 0x10000 and 0x80000000 as plain IMAD, other powers as .SHL
                ok = (
                    ok
                    and "imm" in v
                    and v["imm"] > 1
                    and v["imm"] & (v["imm"] - 1) == 0
                    and v["imm"] not in (0x10000, 0x80000000)
                )
        if ok:
            return al.insert
    return ""


def _reuse_slots(row: Row, mods: dict[str, int]) -> int:
    """The control word's reuse flags (bits 122..125 as a 4-bit mask) some operand prints
    (one a modifier hides prints none: LEA's C without .HI)."""
    hidden = {op for op, mod, val in row.show_if if mods.get(mod) != val}
    m = 0
    for o in row.operands:
        if isinstance(o, Reg) and o.reuse and o.name not in hidden:
            m |= 1 << (REUSE_BIT[o.reuse] - 122)
    return m


def decode(lo: int, hi: int, addr: int = 0) -> Inst:
    word = lo | (hi << 64)
    cands = _BY_OPCODE.get(lo & 0xFFF)
    if not cands:
        raise DecodeError(f"unknown opcode {lo & 0xFFF:#05x}", offset=addr)
    why = ""
    for row, known in cands:
        diff = (word ^ row.base) & MASK105 & ~known
        if diff:
            why = f"{row.mnemonic}: unexpected bits {diff:#x}"
            continue
        mods = {}
        bad = None
        for m in row.mods_before + row.mods:
            v = get(word, m.lo, m.width)
            if m.lookup(v) is None:
                bad = f"{row.mnemonic}: modifier {m.name}={v} not supported"
                break
            mods[m.name] = v
        if not bad:
            bad = next(
                (
                    f"{row.mnemonic}: modifiers {dict(ex)} together not supported"
                    for ex in row.exclude
                    if all(mods.get(k) == v for k, v in ex)
                ),
                None,
            )
        if bad:
            why = bad
            continue
        ops = {o.name: _operand(o, word, addr) for o in row.operands}
        if any(isinstance(o, SReg) for o in row.operands) and ops["sr"]["sr"] not in SREGS:
            why = f"special register {ops['sr']['sr']:#x} not supported"
            continue
        bad_sym = next((o for o in row.operands if isinstance(o, Sym) and o.lookup(ops[o.name]["sym"]) is None), None)
        if bad_sym is not None:
            why = f"{row.mnemonic}: {bad_sym.name}={ops[bad_sym.name]['sym']} not supported"
            continue
        stray = get(word, 122, 4) & ~_reuse_slots(row, mods)
        if stray:  # nvdisasm refuses such a word, or prints nothing for the flag (no round trip)
            why = f"{row.mnemonic}: reuse flag {stray:#x} on a slot no register operand uses"
            continue
        if any(ops[n].get("reg", ops[n].get("imm")) == v for n, v in row.refuse):
            why = f"{row.mnemonic}: operand value nvdisasm cannot print"
            continue
        return Inst(addr, row, word, get(word, 12, 3), bool(get(word, 15, 1)), mods, ops, _control(word), _alias(row, ops, mods))
    raise DecodeError(f"word {hi:016x}{lo:016x} refused ({why})", offset=addr)


def decode_stream(code: bytes, base: int = 0) -> list[Inst]:
    if len(code) % 16:
        raise DecodeError(f"code size {len(code)} is not a multiple of 16")
    return [decode(*struct.unpack_from("<QQ", code, i), addr=base + i) for i in range(0, len(code), 16)]


# ------------------------------------------------------------------------------------------
# text in nvdisasm's syntax


def fmt_f32(bits: int) -> str:
    if bits == 0x80000000:
        return "-0.0"
    exp, frac, sign = (bits >> 23) & 0xFF, bits & 0x7FFFFF, "-" if bits >> 31 else "+"
    if exp == 0xFF:
        if frac == 0:
            return f"{sign}INF "
        return f"{sign}{'Q' if frac >> 22 else 'S'}NAN "
    v = struct.unpack("<f", struct.pack("<I", bits))[0]
    if v != 0 and abs(v) >= 1e9:
        return f"{v:.20e}"
    return f"{v:.20g}"


def f16_to_f64_bits(h: int) -> int:
    """The 64 bits of the double equal to the half with bits ``h``."""
    return struct.unpack("<Q", struct.pack("<d", struct.unpack("<e", struct.pack("<H", h))[0]))[0]


def _hex(v: int) -> str:
    return f"-{-v:#x}" if v < 0 else f"{v:#x}"


def _reg_name(n: int, file: str) -> str:
    if file == "R":
        return "RZ" if n == 255 else f"R{n}"
    if file == "B":
        return f"B{n}"
    return "URZ" if n == 63 else f"UR{n}"


def _pred_name(p: int, neg: bool, file: str = "P") -> str:
    return ("!" if neg else "") + (f"{file}T" if p == 7 else f"{file}{p}")


def _render_operand(o, v: dict, inst: Inst, neg_sym: str) -> str | None:
    w = inst.word
    if isinstance(o, Reg):
        if o.suffix == "@hiderz" and v["reg"] == (255 if o.file == "R" else 63):
            return None
        s = _reg_name(v["reg"], o.file)
        if v["abs"]:
            s = f"|{s}|"
        if v["neg"]:
            s = (neg_sym if o.neg_sym == "-" else o.neg_sym) + s
        if o.reuse and get(w, REUSE_BIT[o.reuse], 1):
            s += ".reuse"
        if o.suffix and not o.suffix.startswith("@"):  # after '.reuse': 'R8.reuse.ROW' (IMMA; shader-mma)
            s += o.suffix
        if o.suffix.startswith("@swz:"):  # after '.reuse', as nvdisasm prints 'R2.reuse.H0_H0'
            s += SWZ[get(w, int(o.suffix[5:]), 2)]
        return s
    if isinstance(o, Pred):
        if o.hide_pt and v["pred"] == 7 and not v["not"]:
            return None
        return _pred_name(v["pred"], v["not"], o.file)
    if isinstance(o, Imm):
        # nvdisasm follows an immediate -0.0 with a space, as its other special values
        # ('-0.0 , P0'; at the end of the line the space is trimmed with the rest)
        if o.kind == "f32":
            s = fmt_f32(v["imm"])
            return "-0.0 " if s == "-0.0" else s
        if o.kind == "f16d":  # a half (F2I.F16's immediate), printed as its double is
            s = fmt_f64(f16_to_f64_bits(v["imm"]))
            return "-0.0 " if s == "-0.0" else s
        if o.kind == "f16":  # one half of a packed pair (HADD2/HMUL2/HFMA2 immediates; shader-alu)
            s = fmt_f32(struct.unpack("<I", struct.pack("<f", struct.unpack("<e", struct.pack("<H", v["imm"]))[0]))[0])
            return "-0.0 " if s == "-0.0" else s
        if o.kind == "f64":  # the high word of a double (DADD/DMUL/DFMA immediates)
            s = fmt_f64(v["imm"] << 32)
            return "-0.0 " if s == "-0.0" else s
        if o.kind == "x4":  # printed after the register, left out while 0 ('R0 0x4')
            return _hex(v["imm"]) if v["imm"] else None
        return _hex(v["imm"])
    if isinstance(o, CBuf):
        s = f"c[{v['bank']:#x}]{o.sep}[{_hex(v['off'])}]"
        if v["abs"]:
            s = f"|{s}|"
        if v["neg"]:
            s = (neg_sym if o.neg_sym == "-" else o.neg_sym) + s
        return s
    if isinstance(o, CBufR):
        if v["reg"] == 255:
            return f"c[{v['bank']:#x}][{_hex(v['off'])}]"
        return f"c[{v['bank']:#x}][R{v['reg']}" + (f"+{_hex(v['off'])}]" if v["off"] else "]")
    if isinstance(o, Mem):
        if o.scale and v["reg"] == 255 and v["off"] and not v["wide"] and not v["scale"]:
            return f"[{_hex(v['off'])}]"  # shared memory at an absolute offset (nvdisasm 13.5)
        s = _reg_name(v["reg"], "R") + (".64" if v["wide"] else ".U32" if o.u32 else "")
        if o.scale:
            s += dict(o.scale[2])[v["scale"]]
        # nvdisasm 13.5 (shader-mma): LDGSTS's source leaves out '+URZ'; ARRIVES's address
        # leaves out an RZ register ('[URZ+0x100]')
        if o.ur is not None and not (o.u32 and v["ur"] == 63):
            s = _reg_name(v["ur"], "UR") if v["reg"] == 255 and not o.u32 else s + "+" + _reg_name(v["ur"], "UR")
        if v["off"]:
            s += "+" + _hex(v["off"])
        return f"[{s}]"
    if isinstance(o, SReg):
        return SREGS[v["sr"]]
    if isinstance(o, Target):
        return _hex(v["target"])
    if isinstance(o, Attr):
        if o.reg:  # arch-gfx: ALD.PHYS / AST.PHYS a[R2] (RZ: refused by the row)
            return f"a[R{v['attr']}]"
        if o.ur is not None:
            return f"a[{_reg_name(v['ur'], 'UR')}" + (f"+{v['attr']:#x}]" if v["attr"] else "]")
        return f"a[{v['attr']:#x}]"
    if isinstance(o, Sym):
        return None if v["sym"] == o.hide else o.lookup(v["sym"])
    raise TypeError(o)


def render(inst: Inst) -> str:
    row = inst.row
    guard = (
        ""
        if inst.pred == 7 and not inst.pred_not
        else "@" + _pred_name(inst.pred, inst.pred_not, "UP" if row.uniform else "P") + " "
    )
    name = row.mnemonic + inst.alias
    for m in row.mods_before + row.mods:
        name += m.lookup(inst.mods[m.name]) or ""
    neg_sym = "~" if inst.mods.get("X") == 1 else "-"
    hidden = {op for op, mod, val in row.show_if if inst.mods.get(mod) != val}
    parts = []
    for o in row.operands:
        if o.name in hidden:
            continue
        s = _render_operand(o, inst.ops[o.name], inst, neg_sym)
        if s is not None and o.name == "rt" and parts:  # RET's target follows its register: 'R8 0x0'
            parts[-1] += " " + s
        elif s is not None:
            parts.append(s)
    text = guard + name
    return f"{text} {', '.join(parts)}".rstrip() if parts else text
