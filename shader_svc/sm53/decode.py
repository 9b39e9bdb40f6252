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
from shader_svc.isa import text as txt
from shader_svc.isa.decoder import RowIndex, RowRefused, add_operand, line, match, mod_values, mods_text
from shader_svc.isa.inst import Control, DecodeError
from shader_svc.isa.text import hex_signed, pred_name, reg_name
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
)
from shader_svc.sm53.table import ROWS, SREGS


# scheduling bits: from the control word before each group of three (``isa.inst.Control``)
NO_CONTROL = Control(0, 0, 7, 7, 0, 0)


@dataclass
class Inst(isa.Inst):
    """A decoded SM53 instruction (``row``: a ``fields.Row``), printed as nvdisasm 11.8 does."""

    control: Control = NO_CONTROL

    def text(self) -> str:
        return render(self)


# rows by opcode, indexed by the word's top byte (Maxwell opcodes have no fixed width: a word is
# looked up under every mask that can match)
_INDEX = RowIndex(ROWS, lambda r: (r.mask, r.value), (56, 8))


def candidates(word: int) -> list[tuple[Row, int]]:
    return _INDEX.candidates(word)


def _unexplained(row: Row, bits: int) -> str:
    return f"{row.mnemonic}: bits {bits:#x} differ from the reference encoding"


def decode(word: int, ctrl: Control = NO_CONTROL, addr: int = 0) -> Inst:
    cands = candidates(word)
    if not cands:
        raise DecodeError(f"unknown opcode in word {word:#018x}", offset=addr)

    def attempt(r: Row) -> Inst:
        both = next((m for m in r.exclusive if word & m == m), None)
        if both is not None:
            raise RowRefused(f"{r.mnemonic}: bits {both:#x} together not supported")
        mods, bad = mod_values(r.mods, word)
        if bad:
            raise RowRefused(f"{r.mnemonic}: unsupported modifier value {', '.join(f'{n}={v}' for n, v in bad)}")
        ops = {o.name: o.value(word, addr) for o in r.operands}
        pred, pnot = (get(word, 16, 3), bool(get(word, 19, 1))) if r.guard else (PT, False)
        inst = Inst(addr, r, word, pred, pnot, mods, ops, ctrl)
        try:
            render(inst)
        except DecodeError as e:
            raise RowRefused(f"{r.mnemonic}: {e.args[0] if e.args else e}") from None
        return inst

    inst, reasons = match(word, cands, (1 << 64) - 1, attempt, _unexplained)
    if inst is None:
        raise DecodeError(f"word {word:#018x} refused ({'; '.join(reasons)})", offset=addr)
    return inst


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
def fmt_f32(bits: int) -> str:
    """An f32 as nvdisasm 11.8 prints it (``isa.text.fmt_f32``; every NaN is a QNAN there)."""
    v = struct.unpack("<f", struct.pack("<I", bits))[0]
    if 5e8 <= abs(v) < 1e9:  # nvdisasm switches to exponent form somewhere in [5e8, 1e9): not known exactly
        raise DecodeError(f"float immediate {v!r}: text form not known")
    return txt.fmt_f32(bits, snan=False)


def _reg(n: int) -> str:
    return reg_name(n)


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
        return o.text(v)
    if isinstance(o, Imm):
        x = v["imm"]
        if o.hide_zero and x == 0:
            return None
        if o.kind in ("f20", "f32"):
            s = fmt_f32(x)
        elif o.kind == "d20":
            s = txt.spaced(txt.fmt_f64(x))
        elif o.kind in ("h16", "h10"):  # a half, printed as the double it equals (the *2_32I immediates)
            s = txt.spaced(txt.fmt_f64(txt.f16_to_f64_bits(x)))
        elif o.kind == "sb":
            s = f"SB{x}" if x < 6 else _bad(f"scoreboard {x}")
        elif o.kind == "set":
            if not x:
                _bad("empty scoreboard set")
            s = "{" + ",".join(str(i) for i in range(5, -1, -1) if x >> i & 1) + "}"
        elif o.kind in ("sa", "ua"):  # after the previous operand, with a space ('R0 0x10')
            return "\x00" + hex_signed(x)
        elif o.kind == "su":  # sign-extended, but printed as its unsigned field (IADD3's)
            s = hex_signed(x & ((1 << (o.width + 1)) - 1))
        else:
            s = hex_signed(x)
        if v["neg"]:
            s += ".NEG"
        if v["abs"]:
            s += ".ABS"
        if v["inv"]:
            s += ".INV"
        return s
    if isinstance(o, CBuf):
        sep = " " if o.space else ""
        s = f"c[{v['bank']:#x}]{sep}[{hex_signed(v['off'])}]"
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
        return f"c[{v['bank']:#x}][{_reg(v['reg'])}" + (f"+{hex_signed(v['off'])}" if v["off"] else "") + "]"
    if isinstance(o, Mem):
        parts = [] if v["reg"] == RZ and v["off"] else [_reg(v["reg"])]
        if v["off"]:
            parts.append(hex_signed(v["off"]))
        return "[" + "+".join(parts) + "]"
    if isinstance(o, SReg):
        name = SREGS.get(v["sr"])
        return name if name else _bad(f"special register {v['sr']:#x}")
    if isinstance(o, Target):
        return hex_signed(v["target"])
    if isinstance(o, Attr):
        if o.reg:  # arch-gfx: ALD.PHYS / AST.PHYS a[R2] (RZ: the row's exclusive bits)
            return f"a[R{v['attr']}]"
        return f"a[{hex_signed(v['attr']) if v['attr'] else o.zero}]"
    if isinstance(o, Sym):
        name = o.lookup(v["sym"])  # '' = left out of the text (JMP's condition CC.T)
        return (name or None) if name is not None else _bad(f"{o.name} value {v['sym']}")
    if isinstance(o, TexsMask):
        return channels(v["mask"]) if v["mask"] else _bad(f"component mask value {v['sym']}")
    raise TypeError(o)


def _bad(msg: str):
    raise DecodeError(msg)


def mnemonic_text(inst: Inst) -> str:
    return inst.row.mnemonic + mods_text(inst.row.mods, inst.mods)


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
        glued = t is not None and t.startswith("\x00")  # BRX/JMX: 'R0 0x10'
        add_operand(ops, t[1:] if glued else t, glued)
    s = mnemonic_text(inst) + phase
    first = inst.row.operands[0] if inst.row.operands else None
    if ops and isinstance(first, Mem) and first.glue:  # nvdisasm's 'CCTL.QRY1[R0]'
        s, ops = s + ops[0], ops[1:]
    guard = f"@{pred_name(inst.pred, inst.pred_not)} " if inst.pred != PT or inst.pred_not else ""
    return line(guard, s, ops)
