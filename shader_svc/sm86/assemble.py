"""Assemble SM86 text (nvdisasm's syntax) into 128-bit instruction words, from the same table
the decoder reads (``table.py``).

``assemble_line`` tries every row whose mnemonic starts the text, parses the modifiers and
operands by the row's field records and packs them; the candidate is accepted only if the
decoder prints it back as exactly the input text, so the assembler can never produce a word
that means something else than what was written.  Bits the text does not show (the row's
``free`` bits, reserved bits) take the row's reference values.

``assemble_program`` takes a listing: one instruction a line, ``LABEL:`` lines, ``//``
comments, branch targets given as labels or absolute addresses, and an optional control
prefix ``{S4 Y W0 R1 B01}`` (stall cycles, yield, write/read barrier set, barriers waited
on).  Without a prefix an instruction gets a conservative schedule: variable-latency
instructions (memory, S2R, MUFU, warp ops) set barrier 0 (1 for the sources of stores), every
instruction waits on both and stalls 4 cycles.  Meant to be safe rather than fast; it has not
been run on an Ampere GPU (only our translator and nvdisasm have read it).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from nxrecomp.common.errors import NxError
from shader_svc.isa.assembler import HIDDEN, NOT_OPTIONAL, first_exact, mod_splits, operand_texts, read_listing
from shader_svc.isa.operands import parse_pred
from shader_svc.isa.text import f64_text_to_f16, parse_f32, parse_f64
from shader_svc.sm86.decode import MASK105, SWZ, Control, DecodeError, Inst, decode
from shader_svc.sm86.fields import CONTROL_LO, REUSE_BIT, Attr, CBuf, CBufR, Imm, Mem, Pred, Reg, Row, SReg, Sym, Target, get, put
from shader_svc.sm86.table import ROWS, SREGS

SREG_NUM = {v: k for k, v in SREGS.items()}
SWZ_NUM = {v: k for k, v in SWZ.items() if v}
DEFAULT_CONTROL = Control(stall=1, yield_=1, wbar=7, rbar=7, wait=0, reuse=0)
VARIABLE_LATENCY = {"mem", "sfu", "warp", "attr", "tex"}


class AsmError(NxError):
    pass


class _NoMatch(Exception):
    pass


def _rows_by_prefix() -> list[Row]:
    # longest mnemonic first: 'IMAD.WIDE' before 'IMAD'
    return sorted(ROWS, key=lambda r: -len(r.mnemonic))


_ROWS = _rows_by_prefix()


def _control_bits(c: Control) -> int:
    return c.bits() << CONTROL_LO


# --- operand parsers: text -> list of (lo, width, value) -----------------------------------


def _int(s: str) -> int:
    try:
        return int(s, 0)
    except ValueError:
        raise _NoMatch(s) from None


def _regnum(s: str, file: str) -> int:
    if file == "B":  # convergence barrier registers (BSSY/BSYNC)
        m = re.fullmatch(r"B(\d+)", s)
        if m and int(m.group(1)) < 16:
            return int(m.group(1))
    elif file == "R":
        if s == "RZ":
            return 255
        m = re.fullmatch(r"R(\d+)", s)
        if m and int(m.group(1)) < 255:
            return int(m.group(1))
    else:
        if s == "URZ":
            return 63
        m = re.fullmatch(r"UR(\d+)", s)
        if m and int(m.group(1)) < 63:
            return int(m.group(1))
    raise _NoMatch(s)


def _fit(f, *args):
    """A shared inverse (``isa/operands.py``, ``isa/text.py``): its ValueError is no match."""
    try:
        return f(*args)
    except ValueError:
        raise _NoMatch(str(args[0])) from None


def _pred(s: str, file: str) -> tuple[int, bool]:
    return _fit(parse_pred, s, file)


def _f32(s: str) -> int:
    return _fit(parse_f32, s)


def _fields(o, text: str | None, addr: int) -> tuple[list[tuple[int, int, int]], int]:
    """Bit fields of one operand, and reuse bits; ``text`` None = the operand is not shown."""
    f: list[tuple[int, int, int]] = []
    reuse = 0
    if isinstance(o, Reg):
        if text is None:
            return [(o.lo, o.width, 255 if o.file == "R" else 63)], 0
        s = text
        if o.bsel is not None:  # 'R2.B1', 'R3.reuse.B1' (decode-gaps); no select writes 0
            m = re.search(r"\.B([1-3])$", s)
            f.append((o.bsel, 2, int(m.group(1)) if m else 0))
            s = s[: m.start()] if m else s
        if o.suffix.startswith("@swz:") and ".reuse." in s:  # nvdisasm: 'R2.reuse.H0_H0'
            s = s.replace(".reuse.", ".", 1) + ".reuse"
        if o.suffix and not o.suffix.startswith("@") and s.endswith(".reuse" + o.suffix):  # 'R8.reuse.ROW'
            s = s[: -len(".reuse" + o.suffix)] + o.suffix + ".reuse"
        if s.endswith(".reuse"):
            if not o.reuse:
                raise _NoMatch(s)
            reuse = 1 << (REUSE_BIT[o.reuse] - 122)
            s = s[:-6]
        # every modifier bit the operand has is written, set or clear: the reference encoding
        # may hold either (IMAD's hidden carry-in is !PT)
        neg = s[:1] in ("-", "~")
        if neg and o.neg is None:
            raise _NoMatch(text)
        if o.neg is not None:
            f.append((o.neg, 1, int(neg)))
        s = s[1:] if neg else s
        if o.suffix.startswith("@swz:"):
            lo = int(o.suffix[5:])
            f.append((lo, 2, 0))
            for name, v in SWZ_NUM.items():
                if s.endswith(name):
                    f.append((lo, 2, v))
                    s = s[: -len(name)]
                    break
        absv = s.startswith("|") and s.endswith("|")
        if absv and o.abs is None:
            raise _NoMatch(text)
        if o.abs is not None:
            f.append((o.abs, 1, int(absv)))
        s = s[1:-1] if absv else s
        if o.suffix and not o.suffix.startswith("@"):
            if not s.endswith(o.suffix):
                raise _NoMatch(text)
            s = s[: -len(o.suffix)]
        f.append((o.lo, o.width, _regnum(s, o.file)))
        return f, reuse
    if isinstance(o, Pred):
        return _fit(o.fields, text), 0  # a left-out carry-out (None) is PT
    if isinstance(o, Sym) and text is None:
        if o.hide is None:
            raise _NoMatch(o.name)
        return [(o.lo, o.width, o.hide)], 0
    if text is None and isinstance(o, Imm) and o.kind == "x4":
        return [(o.lo, o.width, 0)], 0
    if text is None:
        raise _NoMatch(o.name)
    if isinstance(o, Sym):
        return [(o.lo, o.width, _fit(o.number, text))], 0
    if isinstance(o, Attr) and o.ur is not None:  # a[UR4+0x10]
        m = re.fullmatch(r"a\[(URZ|UR\d+)(?:\+(0x[0-9a-f]+))?\]", text)
        v = _int(m.group(2)) if m and m.group(2) else 0
        if not m or v % o.scale or v // o.scale >= 1 << o.width:
            raise _NoMatch(text)
        return [(o.ur, 6, _regnum(m.group(1), "UR")), (o.lo, o.width, v // o.scale)], 0
    if isinstance(o, Attr) and o.reg:  # arch-gfx: a[R2] (ALD.PHYS / AST.PHYS)
        m = re.fullmatch(r"a\[R(\d+)\]", text)
        if not m or int(m.group(1)) > 254:
            raise _NoMatch(text)
        return [(o.lo, o.width, int(m.group(1)))], 0
    if isinstance(o, Attr):
        m = re.fullmatch(r"a\[(0x[0-9a-f]+)\]", text)
        if not m or _int(m.group(1)) % o.scale or _int(m.group(1)) // o.scale >= 1 << o.width:
            raise _NoMatch(text)
        return [(o.lo, o.width, _int(m.group(1)) // o.scale)], 0
    if isinstance(o, Imm):
        if o.kind == "f64":  # the high word of a double (DADD/DMUL/DFMA/DSETP)
            try:
                bits = parse_f64(text)
            except Exception:
                raise _NoMatch(text) from None
            if bits & 0xFFFFFFFF:
                raise _NoMatch(text)
            v = bits >> 32
        elif o.kind == "f16d":  # F2I.F16's half immediate
            v = _fit(f64_text_to_f16, text)
        elif o.kind == "f16":  # one half of a packed pair, exactly (shader-alu)
            fv = struct.unpack("<f", struct.pack("<I", _f32(text)))[0]
            try:
                v = struct.unpack("<H", struct.pack("<e", fv))[0]
            except (OverflowError, struct.error):
                raise _NoMatch(text) from None
            if struct.unpack("<e", struct.pack("<H", v))[0] != fv and fv == fv:
                raise _NoMatch(text)
        else:
            v = _f32(text) if o.kind == "f32" else _int(text)
        if o.kind in ("x4", "a4", "s4"):  # BRX/JMX's offset, JMP's/RET.ABS's address, in 4-byte units
            if v % 4:
                raise _NoMatch(text)
            v //= 4
        f.append((o.lo, o.width, v))
        if o.hi_lo is not None:
            f.append((o.hi_lo, o.hi_width, v >> o.width))
        elif not -(1 << o.width) <= v < (1 << o.width):
            raise _NoMatch(text)
        return f, 0
    if isinstance(o, CBuf):
        s = text
        neg = s[:1] in ("-", "~")  # IADD3.X and POPC print ~c[..]; the decoded text decides
        s = s[1:] if neg else s
        absv = s.startswith("|") and s.endswith("|")
        s = s[1:-1] if absv else s
        for bit, on in ((o.neg, neg), (o.abs, absv)):
            if on and bit is None:
                raise _NoMatch(text)
            if bit is not None:
                f.append((bit, 1, int(on)))
        m = re.fullmatch(r"c\[(0x[0-9a-f]+)\]" + re.escape(o.sep) + r"\[(-?0x[0-9a-f]+)\]", s)
        if not m or _int(m.group(2)) % 4:
            raise _NoMatch(text)
        f += [(54, 5, _int(m.group(1))), (40, 14, _int(m.group(2)) // 4)]
        return f, 0
    if isinstance(o, CBufR) and o.file == "UR":  # c[0x2][UR4], c[0x2][URZ+0x4] (ULDC's indexed form)
        m = re.fullmatch(r"c\[(0x[0-9a-f]+)\]\[(URZ|UR\d+)(?:\+(-?0x[0-9a-f]+))?\]", text)
        if not m:
            raise _NoMatch(text)
        return [(54, 5, _int(m.group(1))), (24, 6, _regnum(m.group(2), "UR")), (38, 16, _int(m.group(3) or "0"))], 0
    if isinstance(o, CBufR):  # c[0x0][R2+0x10], c[0x0][R2], c[0x0][0x10] (register RZ)
        m = re.fullmatch(r"c\[(0x[0-9a-f]+)\]\[(?:(R\d+)(?:\+(-?0x[0-9a-f]+))?|(-?0x[0-9a-f]+))\]", text)
        if not m:
            raise _NoMatch(text)
        reg = _regnum(m.group(2), "R") if m.group(2) else 255
        off = _int(m.group(3) or m.group(4) or "0")
        return [(54, 5, _int(m.group(1))), (24, 8, reg), (38, 16, off)], 0
    if isinstance(o, Mem):
        if o.scale and re.fullmatch(r"\[-?0x[0-9a-f]+\]", text):  # shared memory at RZ + offset
            text = "[RZ+" + text[1:]
        if o.ur is not None:  # '[R0.U32+UR4+0x10]': the uniform register read off first
            mu = re.fullmatch(r"(\[[^+\]]*)\+(URZ|UR\d+)(.*)", text)
            mz = re.fullmatch(r"\[(URZ|UR\d+)(.*)", text)  # ARRIVES: an RZ register left out
            if mz and not o.u32:
                f.append((o.ur, 6, _regnum(mz.group(1), "UR")))
                text = "[RZ" + mz.group(2)
            elif not mu and o.u32 and ".U32" in text:  # LDGSTS's '+URZ' left out ('.64' without a
                f.append((o.ur, 6, 63))  # UR is the form with bit 76, which ptxas emits)
            elif not mu:
                raise _NoMatch(text)
            else:
                f.append((o.ur, 6, _regnum(mu.group(2), "UR")))
                text = mu.group(1) + mu.group(3)
            if o.u32 and ".U32" in text:
                text = text.replace(".U32", "", 1)
            elif o.u32 and ".64" not in text:
                raise _NoMatch(text)
        m = re.fullmatch(r"\[(U?RZ|R\d+)(\.64)?(\.X4|\.X8|\.X16)?(?:\+(-?0x[0-9a-f]+))?\]", text)
        if not m:
            raise _NoMatch(text)
        f.append((o.reg_lo, 8, _regnum(m.group(1), "R")))
        if o.wide_bit is not None and o.wide_bit >= 0:
            f.append((o.wide_bit, 1, 1 if m.group(2) else 0))
        if o.scale:
            f.append((o.scale[0], o.scale[1], {s: v for v, s in o.scale[2]}[m.group(3) or ""]))
        if not o.off[1] and m.group(4):  # no offset field (surfaces)
            raise _NoMatch(text)
        if o.off[1]:
            f.append((o.off[0], o.off[1], _int(m.group(4)) if m.group(4) else 0))
        return f, 0
    if isinstance(o, SReg):
        return _fit(o.fields, text, SREG_NUM), 0
    if isinstance(o, Target):
        return _fit(o.fields, _int(text), addr), 0
    raise TypeError(o)


def _mods(row: Row, rest: str) -> list[dict[str, int]]:
    """Every way the suffix text after the mnemonic (alias included) splits into the row's
    modifiers, in print order."""
    mods = row.mods_before + row.mods
    starts = [rest] + [rest[len(a.insert) :] for a in row.aliases if rest.startswith(a.insert)]
    return [{m.name: v for m, v in zip(mods, values)} for s in dict.fromkeys(starts) for values in mod_splits(mods, s)]


def _operand_splits(row: Row, mods: dict[str, int], texts: list[str]):
    """Assign the operand texts to the row's operands; operands the text may leave out
    (PT carry-outs, RZ shown as nothing, operands hidden by a modifier) are tried both ways."""
    hidden = frozenset(op for op, mod, val in row.show_if if mods.get(mod) != val)
    for texts_of in operand_texts(row.operands, texts, _optional, hidden=hidden):
        yield list(zip(row.operands, texts_of))


def _optional(o) -> None | object:
    """None (the operand not shown) for an operand the line may leave out."""
    optional = (
        (isinstance(o, Pred) and o.hide_pt)
        or (isinstance(o, Reg) and o.suffix == "@hiderz")
        or (isinstance(o, Sym) and o.hide is not None)
        or (isinstance(o, Imm) and o.kind == "x4")
    )
    return None if optional else NOT_OPTIONAL


def _split_operands(s: str) -> list[str]:
    """Operands at the commas outside braces (DEPBAR's set '{3,2,1}' is one operand)."""
    return [t.strip() for t in re.split(r",(?![^{]*\})", s)] if s.strip() else []


def _space_split(ops: list[str]) -> list[str]:
    """RET prints its register and target without a comma ('R8 0x0'): two operands."""
    out = []
    for t in ops:
        m = re.fullmatch(r"(U?R\d+|U?RZ) (-?0x[0-9a-f]+)", t)
        out += [m.group(1), m.group(2)] if m else [t]
    return out


@dataclass(frozen=True)
class _Parsed:
    guard: str
    name: str
    operands: list[str]


def _parse(text: str) -> _Parsed:
    s = " ".join(text.strip().rstrip(";").split())
    guard = ""
    if s.startswith("@"):
        guard, _, s = s.partition(" ")
    name, _, rest = s.partition(" ")
    return _Parsed(guard, name, _split_operands(rest))


def _canonical(p: _Parsed) -> str:
    s = f"{p.guard} {p.name}".strip()
    return f"{s} {', '.join(p.operands)}" if p.operands else s


def unshown(inst: Inst) -> dict[tuple[int, int], int]:
    """The bits of a decoded word its text does not show: the row's ``free`` fields (LDG/STG's
    memory-descriptor uniform register, BRA's unused bits, HADD2's swizzles...)."""
    row = inst.row
    fields = list(row.free)
    hidden = {op for op, mod, val in row.show_if if inst.mods.get(mod) != val}
    for o in row.operands:  # operands a modifier hides (IMAD's carry-in without .X)
        if o.name in hidden:
            fields += o.bits()
    fields += _ambiguous_preds(row)
    return {(lo, w): get(inst.word, lo, w) for lo, w in fields}


def _ambiguous_preds(row: Row) -> list[tuple[int, int]]:
    """Bits of optional predicates whose text is ambiguous: with two carry-outs left out while
    PT (IADD3), 'P6' alone names either slot (nvdisasm prints both words the same)."""
    opt = [o for o in row.operands if isinstance(o, Pred) and o.hide_pt]
    return [b for o in opt for b in o.bits()] if len(opt) > 1 else []


def assemble_line(
    text: str, addr: int = 0, control: Control | None = None, free: dict[tuple[int, int], int] | None = None
) -> int:
    """One instruction (nvdisasm syntax) -> its 128-bit word.  ``control`` gives the scheduling
    bits (reuse flags come from the text's ``.reuse``); ``free`` the values of bits the text
    cannot show (see ``unshown``; default: the row's reference values)."""
    p = _parse(text)
    want = _canonical(p)
    control = control or DEFAULT_CONTROL
    tried = False
    for row in _ROWS:
        if not p.name.startswith(row.mnemonic):
            continue
        tried = True
        gfile = "UP" if row.uniform else "P"
        try:
            g, gneg = _pred(p.guard[1:], gfile) if p.guard else (7, False)
        except _NoMatch:
            continue
        for mods in _mods(row, p.name[len(row.mnemonic) :]):
            hidden = {op for op, mod, val in row.show_if if mods.get(mod) != val}
            free_ok = set(row.free) | {b for o in row.operands if o.name in hidden for b in o.bits()}
            free_ok |= set(_ambiguous_preds(row))
            for split in _operand_splits(row, mods, _space_split(p.operands)):
                word = (row.base & MASK105) | row.opcode | g << 12 | int(gneg) << 15
                reuse = 0
                try:
                    for o, t in split:
                        if t is HIDDEN:  # value of the reference encoding (IMAD's ci is !PT)
                            fs, r = [(lo, w, get(row.base, lo, w)) for lo, w in o.bits()], 0
                        else:
                            fs, r = _fields(o, t, addr)
                        reuse |= r
                        for lo, w, v in fs:
                            word = put(word, lo, w, v)
                except _NoMatch:
                    continue
                for m in row.mods_before + row.mods:
                    word = put(word, m.lo, m.width, mods[m.name])
                for (lo, w), v in (free or {}).items():
                    if (lo, w) in free_ok:
                        word = put(word, lo, w, v)
                word |= _control_bits(Control(control.stall, control.yield_, control.wbar, control.rbar, control.wait, reuse))
                if first_exact([word], _text_of(addr), want) is not None:  # '-0.0 ,' as parsed
                    return word
    if not tried:
        raise AsmError(f"unknown instruction {p.name!r}", offset=addr)
    raise AsmError(f"cannot encode {want!r}: no form of {p.name.split('.')[0]} matches these operands/modifiers", offset=addr)


def _text_of(addr: int):
    def text_of(word: int) -> str | None:
        try:
            return decode(word & (2**64 - 1), word >> 64, addr).text()
        except DecodeError:
            return None

    return text_of


# --- programs ------------------------------------------------------------------------------

_CTRL = re.compile(r"^\{([^}]*)\}\s*")


def _parse_control(s: str, addr: int) -> Control:
    stall, yld, wbar, rbar, wait = 1, 0, 7, 7, 0
    for tok in s.split():
        m = re.fullmatch(r"([SWRB])([0-9]+)|Y", tok)
        if not m:
            raise AsmError(f"bad control field {tok!r} (want S<n> Y W<n> R<n> B<digits>)", offset=addr)
        if tok == "Y":
            yld = 1
            continue
        k, v = m.group(1), m.group(2)
        if k == "S":
            stall = int(v)
        elif k == "W":
            wbar = int(v)
        elif k == "R":
            rbar = int(v)
        else:
            wait = sum(1 << int(d) for d in v)
        if (k == "S" and stall > 15) or (k in "WR" and int(v) > 5) or (k == "B" and any(d > "5" for d in v)):
            raise AsmError(f"control field {tok!r} out of range", offset=addr)
    return Control(stall, yld, wbar, rbar, wait, 0)


def _default_control(text: str) -> Control:
    name = _parse(text).name
    row = next((r for r in _ROWS if name.startswith(r.mnemonic)), None)
    variable = row is not None and (row.cls in VARIABLE_LATENCY or row.mnemonic == "S2R")
    stores = row is not None and row.mnemonic in ("STG", "STS", "RED", "AST")
    return Control(stall=4, yield_=1, wbar=0 if variable and not stores else 7, rbar=1 if stores else 7, wait=0b11, reuse=0)


def _twice(n: int, name: str) -> AsmError:
    return AsmError(f"line {n}: label {name} defined twice")


def assemble_program(source: str, base: int = 0) -> bytes:
    """A listing (see the module text) -> code bytes; errors name the line."""
    text_lines, labels = read_listing(source, r"([A-Za-z_][A-Za-z0-9_]*):\s*", lambda i: base + 16 * i, _twice)
    lines: list[tuple[int, str, Control | None]] = []
    for i, (n, s) in enumerate(text_lines):
        ctrl = None
        if m := _CTRL.match(s):
            ctrl = _parse_control(m.group(1), base + 16 * i)
            s = s[m.end() :]
        lines.append((n, s, ctrl))
    out = bytearray()
    for i, (n, s, ctrl) in enumerate(lines):
        addr = base + 16 * i
        p = _parse(s)
        ops = [f"{labels[t]:#x}" if t in labels else t for t in p.operands]
        if p.name.startswith("BRA") and ops and not re.fullmatch(r"0x[0-9a-f]+", ops[-1]):
            raise AsmError(f"line {n}: undefined label {ops[-1]}")
        text = _canonical(_Parsed(p.guard, p.name, ops))
        try:
            w = assemble_line(text, addr, ctrl or _default_control(text))
        except AsmError as e:
            raise AsmError(f"line {n}: {e}") from None
        out += struct.pack("<QQ", w & (2**64 - 1), w >> 64)
    return bytes(out)
