"""Decode SM53 instruction words with the table, and print them as nvdisasm 11.8 does.

``decode(word, ctrl, addr)`` gives an ``Inst`` or raises ``DecodeError`` naming the offset,
the word and what is wrong with it.  Decoding is strict: a bit the table does not explain must
hold the row's reference value, and a value the printer cannot write exactly (an unlisted
modifier value, a float whose text form we do not know) refuses the word instead of guessing.
``decode_stream(code)`` walks a program: a control word at every 32-byte boundary, then three
instructions.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from shader_svc.isa import inst as isa
from shader_svc.isa.inst import DecodeError
from shader_svc.isa.text import fmt_f64
from shader_svc.sm53.fields import (
    CTRL_BITS,
    PT,
    RZ,
    SWZ,
    Attr,
    CBuf,
    CIdx,
    Imm,
    Mem,
    Pred,
    Reg,
    Row,
    SReg,
    Sym,
    Target,
    TexsMask,
    channels,
    get,
    sext,
)
from shader_svc.sm53.table import ROWS, SREGS


@dataclass(frozen=True)
class Control(isa.Control):
    """Scheduling bits of one instruction, from the control word before its group (21 bits per
    instruction: stall 4, yield 1, write barrier 3, read barrier 3, wait mask 6, reuse 4)."""

    @classmethod
    def from_bits(cls, c: int) -> "Control":
        return cls(get(c, 0, 4), get(c, 4, 1), get(c, 5, 3), get(c, 8, 3), get(c, 11, 6), get(c, 17, 4))

    def bits(self) -> int:
        return self.stall | self.yield_ << 4 | self.wbar << 5 | self.rbar << 8 | self.wait << 11 | self.reuse << 17


NO_CONTROL = Control(0, 0, 7, 7, 0, 0)


@dataclass
class Inst(isa.Inst):
    """A decoded SM53 instruction (``row``: a ``fields.Row``), printed as nvdisasm 11.8 does."""

    control: Control = NO_CONTROL

    def text(self) -> str:
        return render(self)


# rows grouped by opcode mask, most specific masks first, and indexed by the word's top byte
# (Maxwell opcodes have no fixed width, so a word is looked up under every mask that can match)
_BY_TOP: list[list[tuple[int, dict[int, list[tuple[Row, int]]]]]] = [[] for _ in range(256)]


def _build() -> None:
    by_mask: dict[int, dict[int, list[tuple[Row, int]]]] = {}
    for r in ROWS:
        by_mask.setdefault(r.mask, {}).setdefault(r.value, []).append((r, r.known_mask()))
    for m in sorted(by_mask, key=lambda m: -bin(m).count("1")):
        mtop = m >> 56
        tops = {v >> 56 for v in by_mask[m]}
        for b in range(256):
            if any((b & mtop) == (t & mtop) for t in tops):
                _BY_TOP[b].append((m, by_mask[m]))


_build()


def candidates(word: int) -> list[tuple[Row, int]]:
    out = []
    for m, vals in _BY_TOP[word >> 56]:
        out += vals.get(word & m, [])
    return out


def _operand(o, w: int, addr: int) -> dict:
    if isinstance(o, Reg):
        d = {"reg": get(w, o.lo, 8), "swz": get(w, o.swz, 2) if o.swz is not None else 0}
        for k in ("neg", "abs", "inv", "cc", "h1"):
            b = getattr(o, k)
            d[k] = bool(b is not None and get(w, b, 1))
        d["hsel"] = get(w, o.hsel, 2) if o.hsel is not None else 0
        d["bsel"] = get(w, o.bsel, 2) if o.bsel is not None else 0
        d["vsel"] = get(w, o.vsel, 3) if o.vsel is not None else 6
        if o.sel4 is not None:
            d["sel4"] = get(w, o.sel4[0], 4)
        return d
    if isinstance(o, Pred):
        return {"pred": get(w, o.lo, 3) ^ o.xor, "not": bool(o.not_bit is not None and get(w, o.not_bit, 1))}
    if isinstance(o, Imm):
        v = get(w, o.lo, o.width)
        if o.kind in ("s", "sa", "su"):
            v = sext(v | (get(w, o.sign, 1) << o.width), o.width + 1) if o.sign is not None else sext(v, o.width)
        elif o.kind == "f20":
            v = (get(w, o.sign, 1) << 31) | (v << 12)
        elif o.kind == "h10":  # a half's bits 6..14 (its low 6 bits zero), sign at ``sign``
            v = (get(w, o.sign, 1) << 15) | (v << 6)
        elif o.kind == "d20":  # the top 20 bits of a double (DADD/DMUL/DFMA/DSETP immediates)
            v = (get(w, o.sign, 1) << 63) | (v << 44)
        elif o.kind == "x16" and get(w, 49, 1):  # XMAD's 16-bit immediate is signed with .U16.S16
            v = sext(v, 16)
        return {
            "imm": v,
            "neg": bool(o.neg is not None and get(w, o.neg, 1)),
            "abs": bool(o.abs is not None and get(w, o.abs, 1)),
            "inv": bool(o.inv is not None and get(w, o.inv, 1)),
        }
    if isinstance(o, CBuf):
        d = {"bank": get(w, 34, 5), "off": sext(get(w, 20, 14), 14) * 4}
        for k in ("neg", "abs", "inv", "h1"):
            b = getattr(o, k)
            d[k] = bool(b is not None and get(w, b, 1))
        return d
    if isinstance(o, CIdx):
        return {"bank": get(w, 36, 5), "reg": get(w, 8, 8), "off": sext(get(w, 20, 16), 16), "indexed": True}
    if isinstance(o, Mem):
        off = get(w, o.off_lo, o.off_w) if o.off_w else 0  # (width 0: no offset, surfaces)
        reg = get(w, o.reg_lo, 8)
        # an absolute address (RZ base) is printed unsigned
        return {"reg": reg, "off": (sext(off, o.off_w) if o.signed and o.off_w and reg != RZ else off) * o.scale}
    if isinstance(o, SReg):
        return {"sr": get(w, o.lo, 8)}
    if isinstance(o, Target):
        return {"target": addr + 8 + sext(get(w, o.lo, o.width), o.width)}
    if isinstance(o, Attr):
        return {"attr": get(w, o.lo, o.width)}
    if isinstance(o, Sym):
        return {"sym": get(w, o.lo, o.width)}
    if isinstance(o, TexsMask):
        return {"sym": get(w, o.lo, 3), "mask": o.mask(w)}
    raise TypeError(o)


def decode(word: int, ctrl: Control = NO_CONTROL, addr: int = 0) -> Inst:
    cands = candidates(word)
    if not cands:
        raise DecodeError(f"unknown opcode in word {word:#018x}", offset=addr)
    reasons = []
    for r, known in cands:
        diff = (word ^ r.base) & ~known & ((1 << 64) - 1)
        if diff:
            reasons.append(f"{r.mnemonic}: bits {diff:#x} differ from the reference encoding")
            continue
        if any(word & m == m for m in r.exclusive):
            reasons.append(f"{r.mnemonic}: bits {next(m for m in r.exclusive if word & m == m):#x} together not supported")
            continue
        mods = {m.name: m.value(word) for m in r.mods}
        bad = [f"{m.name}={mods[m.name]}" for m in r.mods if m.lookup(mods[m.name]) is None]
        if bad:
            reasons.append(f"{r.mnemonic}: unsupported modifier value {', '.join(bad)}")
            continue
        ops = {o.name: _operand(o, word, addr) for o in r.operands}
        pred, pnot = (get(word, 16, 3), bool(get(word, 19, 1))) if r.guard else (PT, False)
        inst = Inst(addr, r, word, pred, pnot, mods, ops, ctrl)
        try:
            render(inst)
        except DecodeError as e:
            reasons.append(f"{r.mnemonic}: {e.args[0] if e.args else e}")
            continue
        return inst
    raise DecodeError(f"word {word:#018x} refused ({'; '.join(reasons)})", offset=addr)


def decode_stream(code: bytes, base_addr: int = 0) -> list[Inst]:
    """Every instruction of a program (control words read, not returned)."""
    if len(code) % 8:
        raise DecodeError(
            f"program truncated: {len(code)} bytes is not a multiple of 8 (SM53 instructions are 8 bytes)",
            field="code",
            offset=len(code) & ~7,
        )
    words = struct.unpack(f"<{len(code) // 8}Q", code)
    out: list[Inst] = []
    ctrl_word = 0
    for i, w in enumerate(words):
        addr = base_addr + i * 8
        if i % 4 == 0:
            ctrl_word = w
            if w >> 63:
                raise DecodeError(f"control word {w:#018x} has bit 63 set", offset=addr)
            continue
        c = Control.from_bits(get(ctrl_word, (i % 4 - 1) * CTRL_BITS, CTRL_BITS))
        out.append(decode(w, c, addr))
    return out


# --- text -----------------------------------------------------------------------------------
def _hex(v: int) -> str:
    return f"-{-v:#x}" if v < 0 else f"{v:#x}"


def fmt_f32(bits: int) -> str:
    """An f32 as nvdisasm prints it ('%.20g', '%.20e' from 1e9 up, '+INF ', '+QNAN ', '-0.0 ')."""
    sign = "-" if bits >> 31 else ""
    e, m = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    # nvdisasm follows its special values with a space ('+INF , P0'): kept, so texts match exactly
    if e == 0xFF:
        return f"{sign or '+'}{'QNAN' if m else 'INF'} "
    v = struct.unpack("<f", struct.pack("<I", bits))[0]
    if v == 0:
        return "-0.0 " if sign else "0"
    a = abs(v)
    if a >= 1e9:
        return f"{v:.20e}"
    if a >= 5e8:  # nvdisasm switches to exponent form somewhere in [5e8, 1e9): not known exactly
        raise DecodeError(f"float immediate {v!r}: text form not known")
    return f"{v:.20g}"


def _reg(n: int) -> str:
    return "RZ" if n == RZ else f"R{n}"


def _pred(n: int, neg: bool) -> str:
    return ("!" if neg else "") + ("PT" if n == PT else f"P{n}")


def _op_text(o, v: dict, inst: Inst) -> str | None:
    if isinstance(o, Reg):
        reuse = o.reuse is not None and (inst.control.reuse >> o.reuse) & 1
        if inst.row.cls == "tex" and o.reuse is not None and o.reuse < 2:  # bits 0..1: the texture phase
            reuse = False
        if o.hide_rz and v["reg"] == RZ:
            return None
        if o.pair:
            if v["reg"] >= RZ - 1:
                raise DecodeError("register pair at RZ")
            return f"{_reg(v['reg'])}{'.reuse' if reuse else ''}, {_reg(v['reg'] + int(o.pair))}"  # pair=2: Rn, Rn+2
        s = _reg(v["reg"])
        if o.sel4 is not None:
            t = dict(o.sel4[1]).get(v["sel4"])
            s += t if t is not None else _bad(f"byte selector {v['sel4']}")
        if o.swz is not None:  # inside |x|: '-|R2.H1_H1|'
            s += SWZ[v["swz"]]
        if v["bsel"]:  # inside |x| too ('|R0.B2|'); of a 16-bit source the half: 2 is '.H1'
            if inst.mods.get("src", 0) & 3 == 1:
                s += ".H1" if v["bsel"] == 2 else _bad(f"half select {v['bsel']} of a 16-bit source")
            else:
                s += f".B{v['bsel']}"
        if v["abs"]:
            s = f"|{s}|"
        if v["neg"]:
            s = "-" + s
        if v["inv"]:
            s = "~" + s
        if v["h1"]:
            s += ".H1"
        if o.hsel is not None and v["hsel"]:
            s += {1: ".H0", 2: ".H1"}.get(v["hsel"]) or _bad(f"half select {v['hsel']}")
        if v["vsel"] != 6:
            sel = {0: "", 1: ".B1", 2: ".B2", 3: ".B3", 4: "", 5: ".H1"}.get(v["vsel"])
            s += sel if sel is not None else _bad(f"selector {v['vsel']}")
        if v["cc"]:
            s += ".CC"
        if reuse:
            s += ".reuse"
        return s
    if isinstance(o, Pred):
        if o.hide_pt and v["pred"] == PT and not v["not"]:
            return None
        return _pred(v["pred"], v["not"])
    if isinstance(o, Imm):
        x = v["imm"]
        if o.hide_zero and x == 0:
            return None
        if o.kind in ("f20", "f32"):
            s = fmt_f32(x)
        elif o.kind == "d20":
            s = fmt_f64(x)
            if s == "-0.0":  # with nvdisasm's space, as the f32 special values ('-0.0 , P0')
                s = "-0.0 "
        elif o.kind in ("h16", "h10"):  # a half, printed as the double it equals (the *2_32I immediates)
            s = fmt_f64(struct.unpack("<Q", struct.pack("<d", struct.unpack("<e", struct.pack("<H", x))[0]))[0])
            if s == "-0.0":
                s = "-0.0 "
        elif o.kind == "sb":
            s = f"SB{x}" if x < 6 else _bad(f"scoreboard {x}")
        elif o.kind == "set":
            if not x:
                _bad("empty scoreboard set")
            s = "{" + ",".join(str(i) for i in range(5, -1, -1) if x >> i & 1) + "}"
        elif o.kind in ("sa", "ua"):  # after the previous operand, with a space ('R0 0x10')
            return "\x00" + _hex(x)
        elif o.kind == "su":  # sign-extended, but printed as its unsigned field (IADD3's)
            s = _hex(x & ((1 << (o.width + 1)) - 1))
        else:
            s = _hex(x)
        if v["neg"]:
            s += ".NEG"
        if v["abs"]:
            s += ".ABS"
        if v["inv"]:
            s += ".INV"
        return s
    if isinstance(o, CBuf):
        sep = " " if o.space else ""
        s = f"c[{v['bank']:#x}]{sep}[{_hex(v['off'])}]"
        if v["h1"]:
            s += ".H1"
        if v["abs"]:
            s = f"|{s}|"
        if v["neg"]:
            s = "-" + s
        if v["inv"]:
            s = "~" + s
        return s
    if isinstance(o, CIdx):
        if v["reg"] == RZ:
            raise DecodeError("indexed constant with RZ")
        return f"c[{v['bank']:#x}][{_reg(v['reg'])}" + (f"+{_hex(v['off'])}" if v["off"] else "") + "]"
    if isinstance(o, Mem):
        parts = [] if v["reg"] == RZ and v["off"] else [_reg(v["reg"])]
        if v["off"]:
            parts.append(_hex(v["off"]))
        return "[" + "+".join(parts) + "]"
    if isinstance(o, SReg):
        name = SREGS.get(v["sr"])
        return name if name else _bad(f"special register {v['sr']:#x}")
    if isinstance(o, Target):
        return _hex(v["target"])
    if isinstance(o, Attr):
        if o.reg:  # arch-gfx: ALD.PHYS / AST.PHYS a[R2] (RZ: the row's exclusive bits)
            return f"a[R{v['attr']}]"
        return f"a[{_hex(v['attr']) if v['attr'] else o.zero}]"
    if isinstance(o, Sym):
        name = o.lookup(v["sym"])  # '' = left out of the text (JMP's condition CC.T)
        return (name or None) if name is not None else _bad(f"{o.name} value {v['sym']}")
    if isinstance(o, TexsMask):
        return channels(v["mask"]) if v["mask"] else _bad(f"component mask value {v['sym']}")
    raise TypeError(o)


def _bad(msg: str):
    raise DecodeError(msg)


def mnemonic_text(inst: Inst) -> str:
    s = inst.row.mnemonic
    for m in inst.row.mods:
        s += m.lookup(inst.mods[m.name]) or ""
    return s


# A texture instruction's phase: nvdisasm 11.8 reads the control word's reuse bits 0..1 of a
# texture row (TEX/TLD/TLD4/TXQ/TXD/TMML and the short forms) as a suffix after the modifiers:
# 0 nothing, 1 .T, 2 .P (3 prints .INVALIDPHASE3: refused); bits 2..3 print nothing there
# (refused as stray reuse flags).  ptxas 12.9 sets it on compute kernels' texture instructions
# (read off nvdisasm 11.8's text of ptxas's code; shader-tex).  No effect on the result.
TEX_PHASE = {0: "", 1: ".T", 2: ".P"}


def render(inst: Inst) -> str:
    # Only ALU rows print reuse flags; memory, conversion, SFU, warp and control rows ignore them
    # (nvdisasm accepts them silently), so a set flag there is refused rather than dropped.
    slots = {o.reuse for o in inst.row.operands if isinstance(o, Reg) and o.reuse is not None} if inst.row.cls == "alu" else set()
    reuse, phase = inst.control.reuse, ""
    if inst.row.cls == "tex":  # the texture phase (shader-tex): reuse bits 0..1, after the modifiers
        phase = TEX_PHASE.get(reuse & 3)
        if phase is None:
            raise DecodeError("texture phase 3 (nvdisasm prints .INVALIDPHASE3)")
        reuse &= ~3
    stray = [k for k in range(4) if reuse >> k & 1 and k not in slots]
    if stray:
        raise DecodeError(f"reuse flag {stray[0]} set on an operand slot without a register")
    ops: list[str] = []
    for o in inst.row.operands:
        t = _op_text(o, inst.ops[o.name], inst)
        if t is not None and t.startswith("\x00") and ops:  # BRX/JMX: 'R0 0x10'
            ops[-1] += " " + t[1:]
        elif t is not None:
            ops.append(t)
    s = mnemonic_text(inst) + phase
    first = inst.row.operands[0] if inst.row.operands else None
    if ops and isinstance(first, Mem) and first.glue:  # nvdisasm's 'CCTL.QRY1[R0]'
        s, ops = s + ops[0], ops[1:]
    if ops:
        s = (s + " " + ", ".join(ops)).rstrip()  # a special float last: its space goes with ';'
    if inst.pred != PT or inst.pred_not:
        s = f"@{_pred(inst.pred, inst.pred_not)} {s}"
    return s
