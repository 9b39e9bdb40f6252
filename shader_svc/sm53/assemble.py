"""SM53 assembler: nvdisasm's text -> 64-bit instruction words, from the same table.

Every row whose mnemonic starts the text is tried: the modifier text is split over the row's
modifier fields, the operands are parsed by their records, and the candidate word is accepted
only if the decoder prints it back as exactly the input text, so the assembler never writes a
word that means something else.  Bits the text does not show come from the row's reference
encoding.  ``assemble_program`` takes a listing (labels 'NAME:', '//' comments, labels as branch
targets) and writes the control word before each group of three: reuse flags from '.reuse',
and a conservative schedule (variable-latency instructions set barrier 0 for their result and
barrier 1 for their sources, every instruction waits on both).
"""

from __future__ import annotations

import re
import struct

from nxrecomp.common.errors import NxError
from shader_svc.isa.assembler import NOT_OPTIONAL, first_exact, mod_splits, operand_texts, read_listing
from shader_svc.isa.operands import parse_pred
from shader_svc.isa.text import f64_text_to_f16, parse_f32, parse_f64
from shader_svc.sm53 import decode as dec
from shader_svc.sm53.fields import (
    CTRL_BITS,
    PT,
    RZ,
    TEXS_MASKS_ONE,
    TEXS_MASKS_TWO,
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
    put,
)
from shader_svc.sm53.table import ROWS, SREGS

NOP_WORD = 0x50B0000000070F00


class AsmError(NxError):
    pass


_REG = re.compile(r"^(~)?(-)?(\|)?(RZ|R\d+)(\|)?(\.H1)?(\.B[123])?(\.CC)?(\.reuse)?$")
_CB = re.compile(r"^(~)?(-)?(\|)?c\[(0x[0-9a-f]+)\] ?\[(-?0x[0-9a-f]+)\](\.H1)?(\|)?$")
_CIDX = re.compile(r"^c\[(0x[0-9a-f]+)\]\[(R\d+)(?:\+(-?0x[0-9a-f]+))?\]$")
_MEM = re.compile(r"^\[(RZ|R\d+)?(?:\+?(-?0x[0-9a-f]+))?\]$")
_SWZ = re.compile(r"(RZ|R\d+)(\.H0_H0|\.H1_H1|\.F32)")
_SWZ_NUM = {v: k for k, v in dec.SWZ.items() if v}
_SREG = {v: k for k, v in SREGS.items()}


class _Miss(Exception):
    """This candidate row does not fit the text."""


def _regnum(s: str) -> int:
    n = RZ if s == "RZ" else int(s[1:])
    if not 0 <= n <= RZ:
        raise _Miss(s)
    return n


def _int(s: str) -> int:
    try:
        return int(s, 16) if s.lstrip("-").startswith("0x") else int(s)
    except ValueError:
        raise _Miss(s) from None


def _f32_bits(s: str) -> int:
    try:
        return parse_f32(s)
    except ValueError:
        raise _Miss(s) from None


def _f64_bits(s: str) -> int:
    try:
        return parse_f64(s)
    except ValueError:
        raise _Miss(s) from None


def _put(w: int, fields) -> int:
    """``w`` with the operand's (lo, width, value) fields written."""
    for lo, width, v in fields:
        w = put(w, lo, width, v)
    return w


def _fit(f, *args):
    """A shared operand kind's inverse (``isa/operands.py``): its ValueError is a miss."""
    try:
        return f(*args)
    except ValueError:
        raise _Miss(str(args[0])) from None


def _reuse(inst_reuse: list[int], o, flag: bool) -> None:
    if flag:
        if o.reuse is None:
            raise _Miss(".reuse")
        inst_reuse[0] |= 1 << o.reuse


def _enc_operand(o, tok: str, w: int, addr: int, reuse: list[int]) -> int:
    if isinstance(o, Reg):
        if o.pair:
            parts = [p.strip() for p in tok.split(",")]
            m = _REG.match(parts[0]) if len(parts) == 2 else None
            if not m or any(m.group(i) for i in (1, 2, 3, 5, 6, 7, 8)) or parts[1] != dec._reg(_regnum(m.group(4)) + int(o.pair)):
                raise _Miss(tok)
            _reuse(reuse, o, bool(m.group(9)))
            return put(w, o.lo, 8, _regnum(m.group(4)))
        if o.sel4 is not None:  # a byte-selector pattern after the name ('R0.3201'); none: the
            # value printed as nothing
            names = sorted(o.sel4[1], key=lambda x: -len(x[1]))
            hit = next((v for v, t in names if t and re.search(r"(RZ|R\d+)" + re.escape(t) + r"(?![0-9])", tok)), None)
            if hit is None:
                hit = next((v for v, t in names if not t), None)
                if hit is None:
                    raise _Miss(tok)
            else:
                tok = re.sub(r"(RZ|R\d+)" + re.escape(dict(o.sel4[1])[hit]) + r"(?![0-9])", r"\1", tok, count=1)
            w = put(w, o.sel4[0], 4, hit)
        if o.swz is not None:  # the half swizzle sits after the name, inside |x|
            ms = _SWZ.search(tok)
            w = put(w, o.swz, 2, _SWZ_NUM[ms.group(2)] if ms else 0)
            tok = tok[: ms.start(2)] + tok[ms.end(2) :] if ms else tok
        if o.bsel is not None:  # the byte/half select prints inside |x|: read it as after
            tok = re.sub(r"(RZ|R\d+)(\.B[123]|\.H1)\|", r"\1|\2", tok)
        m = _REG.match(tok)
        if not m or bool(m.group(3)) != bool(m.group(5)):
            raise _Miss(tok)
        inv, neg, ab, name, _, h1, bsel, cc, ru = m.groups()
        if o.bsel is not None and h1:  # a 16-bit source's upper half: select 2
            h1, bsel = None, ".B2"
        w = put(w, o.lo, 8, _regnum(name))
        for bit, on in ((o.inv, inv), (o.neg, neg), (o.abs, ab), (o.h1, None if o.vsel is not None else h1), (o.cc, cc)):
            if on and bit is None:
                raise _Miss(tok)
            if bit is not None:
                w = put(w, bit, 1, 1 if on else 0)
        if o.vsel is not None:  # a byte/half select; no suffix: the size modifier's value stays
            if bsel:
                w = put(w, o.vsel, 3, int(bsel[2]))
            elif h1:
                w = put(w, o.vsel, 3, 5)
        elif bsel:
            if o.bsel is None:
                raise _Miss(tok)
            w = put(w, o.bsel, 2, int(bsel[2]))
        elif o.bsel is not None:
            w = put(w, o.bsel, 2, 0)
        _reuse(reuse, o, bool(ru))
        return w
    if isinstance(o, Pred):
        return _put(w, _fit(o.fields, tok))
    if isinstance(o, Imm):
        t = tok
        flags = {}
        for suf in (".INV", ".ABS", ".NEG"):
            flags[suf] = t.endswith(suf)
            if flags[suf]:
                t = t[: -len(suf)]
        for bit, suf in ((o.neg, ".NEG"), (o.abs, ".ABS"), (o.inv, ".INV")):
            if flags[suf] and bit is None:
                raise _Miss(tok)
            if bit is not None:
                w = put(w, bit, 1, 1 if flags[suf] else 0)
        if o.kind == "d20":  # a double's top 20 bits
            bits = _f64_bits(t)
            if bits & ((1 << 44) - 1):
                raise _Miss(tok)
            w = put(w, o.lo, o.width, (bits >> 44) & 0x7FFFF)
            return put(w, o.sign, 1, bits >> 63)
        if o.kind in ("h16", "h10"):  # a half immediate, written as the double it equals
            try:
                h = f64_text_to_f16(t)
            except ValueError:
                raise _Miss(tok) from None
            if o.kind == "h10":  # bits 6..14 and the sign: the low 6 bits must be zero
                if h & 0x3F:
                    raise _Miss(tok)
                return put(put(w, o.lo, o.width, (h >> 6) & 0x1FF), o.sign, 1, h >> 15)
            return put(w, o.lo, o.width, h)
        if o.kind in ("f20", "f32"):
            bits = _f32_bits(t)
            if o.kind == "f20":
                if bits & 0xFFF:
                    raise _Miss(tok)
                w = put(w, o.lo, o.width, (bits >> 12) & 0x7FFFF)
                return put(w, o.sign, 1, bits >> 31)
            return put(w, o.lo, o.width, bits)
        if o.kind == "sb":
            if not re.fullmatch(r"SB[0-5]", t):
                raise _Miss(tok)
            return put(w, o.lo, o.width, int(t[2]))
        if o.kind == "set":
            m = re.fullmatch(r"\{([0-5](?:,[0-5])*)\}", t)
            if not m:
                raise _Miss(tok)
            return put(w, o.lo, o.width, sum(1 << int(x) for x in m.group(1).split(",")))
        v = _int(t)
        if o.kind == "x16":  # signed or not by XMAD's sign field: the decoder's text decides
            if not -(1 << 15) <= v < (1 << 16):
                raise _Miss(tok)
            return put(w, o.lo, o.width, v & 0xFFFF)
        if o.kind == "su":  # the unsigned field of a sign-extended immediate (IADD3's)
            if not 0 <= v < (1 << (o.width + 1)):
                raise _Miss(tok)
            return put(put(w, o.lo, o.width, v & ((1 << o.width) - 1)), o.sign, 1, v >> o.width)
        if o.kind in ("s", "sa"):
            lim = o.width + (1 if o.sign is not None else 0)
            if not -(1 << (lim - 1)) <= v < (1 << (lim - 1)):
                raise _Miss(tok)
            w = put(w, o.lo, o.width, v & ((1 << o.width) - 1))
            return put(w, o.sign, 1, 1 if v < 0 else 0) if o.sign is not None else w
        if not 0 <= v < (1 << o.width):
            raise _Miss(tok)
        return put(w, o.lo, o.width, v)
    if isinstance(o, CBuf):
        m = _CB.match(tok)
        if not m or bool(m.group(3)) != bool(m.group(7)):
            raise _Miss(tok)
        inv, neg, ab, bank, off, h1, _ = m.groups()
        off_v = _int(off)
        if off_v % 4:
            raise _Miss(tok)
        w = put(put(w, 34, 5, _int(bank)), 20, 14, (off_v // 4) & 0x3FFF)
        for bit, on in ((o.inv, inv), (o.neg, neg), (o.abs, ab), (o.h1, h1)):
            if on and bit is None:
                raise _Miss(tok)
            if bit is not None:
                w = put(w, bit, 1, 1 if on else 0)
        return w
    if isinstance(o, CIdx):
        m = _CIDX.match(tok)
        if not m:
            raise _Miss(tok)
        off = _int(m.group(3)) if m.group(3) else 0
        if not -0x8000 <= off < 0x8000:
            raise _Miss(tok)
        return put(put(put(w, 36, 5, _int(m.group(1))), 8, 8, _regnum(m.group(2))), 20, 16, off & 0xFFFF)
    if isinstance(o, Mem):
        m = _MEM.match(tok)
        if not m:
            raise _Miss(tok)
        reg = _regnum(m.group(1)) if m.group(1) else RZ
        off = _int(m.group(2)) if m.group(2) else 0
        if off % o.scale or (off and not o.off_w):
            raise _Miss(tok)
        return put(put(w, o.reg_lo, 8, reg), o.off_lo, o.off_w, (off // o.scale) & ((1 << o.off_w) - 1))
    if isinstance(o, SReg):
        return _put(w, _fit(o.fields, tok, _SREG))
    if isinstance(o, Target):
        return _put(w, _fit(o.fields, _int(tok), addr))
    if isinstance(o, Attr) and o.reg:  # arch-gfx: a[R2] (ALD.PHYS / AST.PHYS)
        m = re.fullmatch(r"a\[R(\d+)\]", tok)
        if not m or int(m.group(1)) > 254:
            raise _Miss(tok)
        return put(w, o.lo, o.width, int(m.group(1)))
    if isinstance(o, Attr):
        m = re.fullmatch(r"a\[(0x[0-9a-f]+|RZ)\]", tok)
        if not m:
            raise _Miss(tok)
        v = 0 if m.group(1) == "RZ" else _int(m.group(1))
        if not 0 <= v < (1 << o.width):
            raise _Miss(tok)
        return put(w, o.lo, o.width, v)
    if isinstance(o, Sym):
        if o.lookup(get(w, o.lo, o.width)) == tok:  # a modifier sharing the bits chose already
            return w
        return _put(w, [(o.lo, o.width, _fit(o.number, tok))])
    if isinstance(o, TexsMask):
        table = TEXS_MASKS_ONE if get(w, o.d2_lo, 8) == RZ else TEXS_MASKS_TWO
        for v, mask in table.items():
            if channels(mask) == tok:
                return put(w, o.lo, 3, v)
        raise _Miss(tok)
    raise TypeError(o)


def _split_operands(text: str) -> list[str]:
    """Operands at the commas outside braces ('DEPBAR {5,2}' has one)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out = out + [cur.strip()] if text.strip() else []
    # BRX/JMX print their offset after the register: 'R0 0x10' is two operands
    return [p for t in out for p in (t.split(" ") if re.fullmatch(r"(RZ|R\d+) -?0x[0-9a-f]+", t) else [t])]


def _optional(o) -> str | object:
    """The text standing for an operand the line may leave out (``operand_texts``)."""
    if isinstance(o, Pred) and o.hide_pt:
        return "PT"
    if isinstance(o, Imm) and o.hide_zero:
        return "0x0"
    if isinstance(o, Reg) and o.hide_rz:
        return "RZ"
    if isinstance(o, Sym) and any(s == "" for _, s in o.names):  # a value printed as nothing
        return ""
    return NOT_OPTIONAL


def _fit_operands(row: Row, toks: list[str]) -> list[list[str]]:
    """Ways to give each operand its token(s): CAS pairs take two, hidden-PT predicates none."""
    take = lambda o: 2 if isinstance(o, Reg) and o.pair else 1  # noqa: E731
    return list(operand_texts(row.operands, toks, _optional, take, skip_first=True))


# a texture instruction's phase (shader-tex): nvdisasm 11.8 prints the control word's reuse
# bits 0..1 of a texture row as a suffix after its modifiers (``decode.TEX_PHASE``)
_PHASES = {".T": 1, ".P": 2}


def assemble(text: str, addr: int = 0) -> tuple[int, int]:
    """One instruction's text (as nvdisasm prints it) -> (word, reuse flags); a texture
    instruction's phase suffix (.T/.P) goes to the reuse flags."""
    try:
        return _assemble(text, addr, 0)
    except AsmError:
        src = " ".join(text.replace(";", " ").split())
        guard, _, body = src.partition(" ") if src.startswith("@") else ("", "", src)
        mnem, _, ops = body.partition(" ")
        phase = next((v for k, v in _PHASES.items() if mnem.endswith(k)), None)
        if phase is None:
            raise
        w, _ = _assemble(" ".join(x for x in (guard, mnem[:-2], ops) if x), addr, phase, src)
        return w, phase


def _assemble(text: str, addr: int, phase: int, shown: str | None = None) -> tuple[int, int]:
    src = " ".join((shown or text).replace(";", " ").split())
    text = " ".join(text.replace(";", " ").split())
    body, guard, gnot = src, PT, 0
    if body.startswith("@"):
        g, _, body = body.partition(" ")
        try:
            guard, neg = parse_pred(g[1:])
        except ValueError:
            raise AsmError(f"bad guard predicate {g!r}") from None
        gnot = 1 if neg else 0
    body = " ".join(text.split())
    if body.startswith("@"):
        body = body.partition(" ")[2]
    mnem, _, ops_text = body.partition(" ")
    if "[" in mnem:  # an address printed against the mnemonic ('CCTL.QRY1[R0]')
        i = mnem.index("[")
        mnem, ops_text = mnem[:i], (mnem[i:] + " " + ops_text).strip()
    toks = _split_operands(ops_text)
    tried = False
    for row in ROWS:
        if not (mnem == row.mnemonic or mnem.startswith(row.mnemonic + ".")):
            continue
        tried = True
        w0 = (row.base & ~row.mask) | row.value
        if row.guard:
            w0 = put(put(w0, 16, 3, guard), 19, 1, gnot)
        elif guard != PT or gnot:
            continue
        hit = first_exact(_candidates(row, w0, mnem[len(row.mnemonic) :], toks, addr, phase), _text_of(addr), src)
        if hit is not None:
            return hit
    if not tried:
        raise AsmError(f"unknown mnemonic {mnem.split('.')[0]!r} in {text!r}")
    raise AsmError(f"no encoding of {text!r} (operands or modifiers do not match any form)")


def _candidates(row: Row, w0: int, mods: str, toks: list[str], addr: int, phase: int):
    """(word, reuse flags) of every way the modifier and operand texts fit ``row``."""
    for values in mod_splits(row.mods, mods, key=lambda kv: -len(kv[1])):
        wm = w0
        for m, v in zip(row.mods, values):
            wm = m.encode(wm, v)
        for fit in _fit_operands(row, toks):
            reuse = [phase]
            try:
                w = wm
                for o, tok in zip(row.operands, fit):
                    w = _enc_operand(o, tok, w, addr, reuse)
            except _Miss:
                continue
            yield w, reuse[0]


def _text_of(addr: int):
    def text_of(cand: tuple[int, int]) -> str | None:
        try:
            return dec.decode(cand[0], dec.Control(0, 0, 7, 7, 0, cand[1]), addr).text()
        except dec.DecodeError:
            return None

    return text_of


def control_for(row: Row, reuse: int) -> int:
    """Conservative schedule bits for one instruction."""
    var = row.cls in ("mem", "sfu", "conv", "warp", "tex", "attr", "mad") or row.mnemonic == "S2R"
    c = dec.Control(stall=6, yield_=0, wbar=0 if var else 7, rbar=1 if var else 7, wait=0b11, reuse=reuse)
    return c.bits()


def assemble_program(source: str, base_addr: int = 0) -> bytes:
    """A listing -> the code stream (control word before each group of three).  Errors name the
    line and what did not match."""
    lines, labels = read_listing(source, r"([A-Za-z_.$][\w.$]*):", lambda i: base_addr + _addr_of(i), _twice)
    words: list[int] = []
    ctrls: list[int] = []
    for i, (n, t) in enumerate(lines):
        addr = base_addr + _addr_of(i)
        t = re.sub(
            r"(?<![\w.$])([A-Za-z_][\w$]*)(?=\s*$)", lambda m: hex(labels[m.group(1)]) if m.group(1) in labels else m.group(1), t
        )
        try:
            w, reuse = assemble(t, addr)
        except AsmError as e:
            raise AsmError(f"line {n} (offset {addr:#x}): {e}") from None
        if re.search(r"(BRA|SSY|PBK|CAL)\s+[A-Za-z_]", t):
            raise AsmError(f"line {n}: undefined label in {t!r}")
        words.append(w)
        ctrls.append(control_for(dec.decode(w).row, reuse))
    while len(words) % 3:
        words.append(NOP_WORD)
        ctrls.append(control_for(dec.decode(NOP_WORD).row, 0))
    out = []
    for g in range(0, len(words), 3):
        out.append(ctrls[g] | ctrls[g + 1] << CTRL_BITS | ctrls[g + 2] << (2 * CTRL_BITS))
        out += words[g : g + 3]
    return struct.pack(f"<{len(out)}Q", *out)


def _twice(n: int, name: str) -> AsmError:
    return AsmError(f"line {n}: label {name!r} defined twice")


def _addr_of(i: int) -> int:
    return (i // 3 * 4 + i % 3 + 1) * 8
