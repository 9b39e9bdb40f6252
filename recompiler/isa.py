"""The one declarative table of the A64 encodings the lifter implements.

Each row names an instruction form, the class it belongs to (the unit the Unicorn differential
test counts), and its bit pattern, most significant bit first: ``0``/``1`` are fixed bits,
``x`` a don't-care bit, ``name:width`` a field, ``name=bits`` a field whose value the form fixes
(decoded like a field, so a handler shared by sibling forms reads it, but matched like fixed bits
and never drawn by the fuzzers); ``name=1x`` fixes some of a field's bits only (the FP forms of
an Advanced SIMD group fix ``size<1>``, the Arm ARM's ``a`` bit, and leave ``sz``): decoded
whole, its ``x`` bits drawn.  A trailing ``!f=v,g=w`` names field values for which the form's
instruction page says "reserved" or "UNDEFINED" (``!size=11``, ``!size=11,Q=0``): such a word
is not the form's, it decodes to a later row (its group's ``_unlifted`` row: refused).
``name~bits`` is a field the instruction page marks "should be" (``(1)``/``(0)``: Rs and Rt2 of
LDXR, CRm of SB): decoded and drawn like a free field, since another value is CONSTRAINED
UNPREDICTABLE, not UNDEFINED (Unicorn executes it as the canonical word, capstone prints
``.word``), and ``Form.canonical`` gives the word with the field's "should be" value.

One row per form, as the Arm ARM's instruction pages name them (dynarmic's table is the model): decoding yields the form itself, so the lifter's rows
(``lift/forms.py``), the effects declarations (``lift/effects/``) and the fuzzers
(``tests/recompiler/unicorn_harness.py``, ``effects_oracle.py``), which draw each form's free
fields, all read the same row.  No row covers several instruction pages: the last two
(B.cond/BC.cond, and MOVI/MVNI/ORR/BIC/FMOV (vector, immediate): one row per encoding of each
page) were split in session 26; a row that is one page's several encodings of one operation
(FCVT Sd/Dd, Hn; ADD_imm's sf) decodes the selecting field for its handler; the
load/store groups are split by instruction page and addressing mode (STRB_uimm, LDURSW, LDP_pre,
LDADDB, LD1R_post...).  The forms split from one class row keep its name as their ``group`` (the
analysis, the emitter and the tests match some patterns by group: ``Insn.group``), and the row itself stays last as ``<group>_unlifted`` where its forms leave encodings
(unallocated, reserved values, or an extension's instruction the lifter does not implement):
they decode, so the analysis, which reads what decodes, is unchanged, and the lifter refuses
each one (``lift/forms.h_unallocated``).  A form is added in one place.  Rows are
matched in order: put a specific form before a general one that overlaps it.
``tests/recompiler/lift_snapshot.py`` checks that a change to the table keeps the lifted C.

Sources of the facts.  Every pattern, "should be" field and reserved value comes from the Arm
Architecture Reference Manual's A64 encoding index and the instruction pages it links (the
field names are the manual's: o0/o1 of the conditional branches, op/cmode/o2 of the modified
immediates).  Each is checked against two decoders we did not write:
``tests/recompiler/test_isa_rows.py`` (capstone 5.0 names every random word of each split form
as that form, and none of an ``_unlifted`` row's words as one of its group's forms),
``test_isa_bits.py`` (each fixed bit of each form flipped: capstone names the form the table
decodes it to, or leaves it undecoded and then the lifter refuses the word or Unicorn runs it
as the lifted C does; each "should be" bit flipped: the same form, undecoded by capstone and
run by Unicorn), ``test_unallocated.py`` (the named reserved encodings: ``.word`` to capstone,
UNDEFINED to Unicorn, refused by the lifter) and ``test_unicorn.py``/``test_modimm_bcond_forms.py``
(the lifted C of each class, and of each modified-immediate form and B.cond, against Unicorn
2.1.4).  Where the two decoders part from the manual, the manual rules and the test records it:
capstone decodes STXR/STLXR whatever Rt2 holds and LDXP/LDAXP whatever Rs holds (the other
"should be" fields it holds); Unicorn 2.1.4 runs op = 1, o2 = 1, cmode = 1111 of the modified
immediates as FMOV (half precision) (unallocated to the manual and capstone: refused) and has no
BC.cond (FEAT_HBC, Armv8.8: lifted as B.cond, the manual's "consistent" hint dropped).  Every
reserved or UNDEFINED field value is a ``!`` clause here, none a handler's refusal (dynarmic's
model: a handler never sees an unallocated encoding): FP ftype 10 of the scalar FP groups, FCVT
to its own precision, FMOV (general) with sf and ftype apart, the fixed-point conversions' sf 0
with scale<5> 0 and DecodeBitMasks' UNDEFINED imms/N included (session 27).  ``test_unallocated``
checks every clause's words (``.word`` to capstone, UNDEFINED to Unicorn), ``test_isa_bits`` that
no word of a form is UNDEFINED to Unicorn.  The forms also say which handler lifts a word:
``lift/forms.py`` maps each form to one handler, with no predicate over the decoded instruction
(session 28: the ``takes_*`` routing of the Advanced SIMD groups became the rows' names), and a
form the lifter does not implement (SYSL) has a refusing row.  What a handler still refuses is
no field value: LDP with Rt = Rt2 and a writeback load into its base register (CONSTRAINED
UNPREDICTABLE, a relation between register fields; Unicorn runs them).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Form:
    name: str  # e.g. "ADD_imm"
    cls: str  # differential-test class, e.g. "addsub_imm"
    pattern: str
    mask: int = 0
    value: int = 0
    fields: tuple[tuple[str, int, int], ...] = ()  # (name, lsb, width): the free fields
    fixed: tuple[tuple[str, int, int], ...] = ()  # fields whose value the form fixes (``name=bits``)
    group: str = ""  # the class row this form was split from (its own name where not split)
    layout: tuple[tuple[str, int, int], ...] = ()  # every field, free or fixed, in pattern order
    reserved: tuple[tuple[int, int], ...] = ()  # (mask, value): encodings the form leaves (``!``)
    should: tuple[tuple[int, int], ...] = ()  # (mask, value): "should be" fields (``~``)

    def matches(self, word: int) -> bool:
        """``word`` is one of this form's encodings: its fixed bits, and none of its reserved
        field values (the Arm ARM's "size:Q == '110' then UNDEFINED")."""
        return word & self.mask == self.value and not any(word & m == v for m, v in self.reserved)

    @property
    def unlifted(self) -> bool:
        """A split group's last row, for the encodings no form of it takes (``_split``): the
        lifter refuses every one of them, so the fuzzers draw none."""
        return self.name.endswith("_unlifted")

    def canonical(self, word: int) -> int:
        """``word`` with the "should be" fields (``~``) at the values the Arm ARM names."""
        for m, v in self.should:
            word = (word & ~m) | v
        return word

    def extract(self, word: int) -> dict[str, int]:
        return {n: (word >> lsb) & ((1 << w) - 1) for n, lsb, w in self.layout}

    def encode(self, **vals: int) -> int:
        """Word with this form's fixed bits and the given values of its free fields (tests,
        fuzzers: a value given for a fixed field is ignored, so every word drawn is the form's)."""
        w = self.value
        for n, lsb, wid in self.fields:
            w |= ((vals.get(n, 0) & ((1 << wid) - 1)) << lsb) & ~self.mask
        return w


def _compile(name: str, cls: str, pattern: str, group: str = "") -> Form:
    bits = 32
    mask = value = 0
    fields = []
    fixed = []
    layout = []
    toks = pattern.split()
    clauses = [t[1:] for t in toks if t.startswith("!")]
    should = []
    for tok in (t for t in toks if not t.startswith("!")):
        if "~" in tok:  # a "should be" field: free, with its canonical value
            fname, v = tok.split("~")
            width = len(v)
            bits -= width
            if set(v) - {"0", "1"}:
                raise ValueError(f"bad should-be field {tok!r} in {name}")
            should.append((((1 << width) - 1) << bits, int(v, 2) << bits))
            fields.append((fname, bits, width))
            layout.append(fields[-1])
        elif "=" in tok:
            fname, v = tok.split("=")
            width = len(v)
            bits -= width
            if width == 0 or set(v) - {"0", "1", "x"}:
                raise ValueError(f"bad fixed field {tok!r} in {name}")
            for k, ch in enumerate(reversed(v)):
                if ch != "x":
                    mask |= 1 << (bits + k)
                    value |= int(ch) << (bits + k)
            # a field with bits left free is drawn (``fields``; ``encode`` keeps the fixed ones)
            (fields if "x" in v else fixed).append((fname, bits, width))
            layout.append((fname, bits, width))
        elif ":" in tok:
            fname, w = tok.split(":")
            width = int(w)
            bits -= width
            fields.append((fname, bits, width))
            layout.append(fields[-1])
        else:
            for ch in tok:
                bits -= 1
                if ch in "01":
                    mask |= 1 << bits
                    value |= int(ch) << bits
                elif ch != "x":
                    raise ValueError(f"bad pattern char {ch!r} in {name}")
    if bits != 0:
        raise ValueError(f"pattern of {name} has {32 - bits} bits, not 32")
    where = {n: (lsb, w) for n, lsb, w in layout}
    reserved = []
    for clause in clauses:  # "!size=11,Q=0": the form's encodings with these field values
        rm = rv = 0
        for cond in clause.split(","):
            fname, v = cond.split("=")
            lsb, w = where[fname]
            if len(v) != w or set(v) - {"0", "1", "x"}:
                raise ValueError(f"bad reserved clause {clause!r} in {name}")
            for k, ch in enumerate(reversed(v)):
                if ch != "x":
                    rm |= 1 << (lsb + k)
                    rv |= int(ch) << (lsb + k)
        reserved.append((rm, rv))
    return Form(
        name, cls, pattern, mask, value, tuple(fields), tuple(fixed), group or name, tuple(layout), tuple(reserved), tuple(should)
    )


def _split(group: str, cls: str, rows: list[tuple[str, ...]], rest: str = "") -> list[tuple[str, str, str, str]]:
    """The forms of one former class row: (form, pattern) each, the group named once (a third
    element: the form's own test class, where it differs from the group's).  ``rest``:
    the class row's own pattern, a last row ``<group>_unlifted`` for the encodings no form
    takes (unallocated, or a later extension's instruction the lifter does not implement:
    SUBP, PACGA, CSSC's SMAX...), so that they decode, and are refused, as they were before
    the split (the analysis reads what decodes: where a function ends, which words are code).
    The lifter refuses every encoding of the row (``lift/forms.h_unallocated``): among them
    FP_CMP with opc<2:0> != 0, FMOV Wd/Vn.D[1] with sf = 0 and INS (general) with Q = 0, which
    the group's handler lifted before (``.word`` to capstone, UNDEFINED to Unicorn)."""
    out = [(r[0], r[2] if len(r) > 2 else cls, r[1], group) for r in rows]
    return out + [(f"{group}_unlifted", cls, rest, group)] if rest else out


# ---- per-form rows of the load/store and integer groups (issue 33, arch-lift) ----


def _ldst_reg_rows(mode: str, tail: str, names: dict, reserved: str = "") -> list[tuple[str, str]]:
    """The forms of one addressing mode of the load/store-register group (``size:2 111 V:1 ...
    opc:2``): each instruction page of the Arm ARM (STRB, LDRSB, STR (SIMD&FP)...) with its
    size/V/opc values, ``names`` giving the mode's mnemonic of each page (STURB for STRB in the
    unscaled mode; None: unallocated in this mode, left to the group's last row)."""
    out = []
    for page, size, v, opc, own in _LDST_REG_PAGES:
        name = names.get(page, page)
        if name is None:
            continue
        out.append((f"{name}{mode}", f"size{size} 111 V={v} {tail.format(opc=f'opc={opc}')} {own} {reserved}".strip()))
    return out


# (page, size, V, opc, reserved clauses): Arm ARM, "Load/store register (unsigned immediate)"
# and its siblings; size = 1x with opc = 11 (GPR) and size != 00 with opc = 1x (SIMD&FP) are
# unallocated; LDRSB/LDRSH's opc<0> picks the 32-bit form, STR/LDR's size<0> the 64-bit one
_LDST_REG_PAGES = (
    ("STRB", "=00", 0, "00", ""),
    ("LDRB", "=00", 0, "01", ""),
    ("LDRSB", "=00", 0, "1x", ""),
    ("STRH", "=01", 0, "00", ""),
    ("LDRH", "=01", 0, "01", ""),
    ("LDRSH", "=01", 0, "1x", ""),
    ("STR", "=1x", 0, "00", ""),
    ("LDR", "=1x", 0, "01", ""),
    ("LDRSW", "=10", 0, "10", ""),
    ("PRFM", "=11", 0, "10", ""),
    ("STR_simd", ":2", 1, "x0", "!size=01,opc=10 !size=1x,opc=10"),
    ("LDR_simd", ":2", 1, "x1", "!size=01,opc=11 !size=1x,opc=11"),
)
_UNSCALED = {"STRB": "STURB", "LDRB": "LDURB", "LDRSB": "LDURSB", "STRH": "STURH", "LDRH": "LDURH", "LDRSH": "LDURSH"}
_UNSCALED |= {"STR": "STUR", "LDR": "LDUR", "LDRSW": "LDURSW", "PRFM": "PRFUM", "STR_simd": "STUR_simd", "LDR_simd": "LDUR_simd"}
_UNPRIV = {"STRB": "STTRB", "LDRB": "LDTRB", "LDRSB": "LDTRSB", "STRH": "STTRH", "LDRH": "LDTRH", "LDRSH": "LDTRSH"}
_UNPRIV |= {"STR": "STTR", "LDR": "LDTR", "LDRSW": "LDTRSW", "PRFM": None, "STR_simd": None, "LDR_simd": None}


def _ldst_imm9_rows() -> list[tuple[str, str]]:
    """Load/store register (unscaled immediate, immediate post-indexed, unprivileged, immediate
    pre-indexed): idx (bits 11:10) 00, 01, 10, 11; PRFM has only the unscaled form (PRFUM), the
    unprivileged forms no SIMD&FP one."""
    rows = []
    for idx, mode, names in (
        ("00", "", _UNSCALED),
        ("01", "_post", {"PRFM": None}),
        ("10", "", _UNPRIV),
        ("11", "_pre", {"PRFM": None}),
    ):
        rows += _ldst_reg_rows(mode, "00 {opc} 0 imm9:9 idx=" + idx + " Rn:5 Rt:5", names)
    return rows


def _pair_rows() -> list[tuple[str, str]]:
    """Load/store pair (no-allocate offset, post-indexed, signed offset, pre-indexed: idx 00, 01,
    10, 11): STP/LDP of W (opc 00) or X (opc 10) registers, LDPSW (opc 01, L = 1; not in the
    no-allocate mode), S/D/Q registers (opc 00/01/10); opc = 11 and STGP (opc 01, L = 0: MTE)
    are left to the group's last row."""
    rows = []
    for idx, mode, st, ld in (
        ("00", "", "STNP", "LDNP"),
        ("01", "_post", "STP", "LDP"),
        ("10", "", "STP", "LDP"),
        ("11", "_pre", "STP", "LDP"),
    ):
        rows += [
            (f"{st}{mode}", f"opc=x0 101 V=0 0 idx={idx} L=0 imm7:7 Rt2:5 Rn:5 Rt:5"),
            (f"{ld}{mode}", f"opc=x0 101 V=0 0 idx={idx} L=1 imm7:7 Rt2:5 Rn:5 Rt:5"),
            *([] if idx == "00" else [(f"LDPSW{mode}", f"opc=01 101 V=0 0 idx={idx} L=1 imm7:7 Rt2:5 Rn:5 Rt:5")]),
            (f"{st}_simd{mode}", f"opc:2 101 V=1 0 idx={idx} L=0 imm7:7 Rt2:5 Rn:5 Rt:5 !opc=11"),
            (f"{ld}_simd{mode}", f"opc:2 101 V=1 0 idx={idx} L=1 imm7:7 Rt2:5 Rn:5 Rt:5 !opc=11"),
        ]
    return rows


_SIZES = (("B", "=00"), ("H", "=01"), ("", "=1x"))


def _excl_rows() -> list[tuple[str, str]]:
    """Load/store exclusive and ordered (``size 001000 o2 L o1 Rs o0 Rt2 Rn Rt``), one row per
    instruction page: the exclusive registers (o2:o1 = 00), pairs (01, size 1x) and CASP (01,
    size 0x), load-acquire/store-release and LORegions (10), compare-and-swap (11).  Rs and Rt2
    of the forms that do not use them are "should be one" bits (CONSTRAINED UNPREDICTABLE): drawn
    free (``~``), as Unicorn executes them, but CAS's and CASP's Rt2, which Unicorn refuses
    (UNDEFINED, one of the permitted behaviours) as the lifter now does (the group's last row)."""
    rows = []
    for sfx, size in _SIZES:
        for name, o2, L, o1, o0, rs in (
            ("STXR", 0, 0, 0, 0, "Rs:5"),
            ("STLXR", 0, 0, 0, 1, "Rs:5"),
            ("LDXR", 0, 1, 0, 0, "Rs~11111"),
            ("LDAXR", 0, 1, 0, 1, "Rs~11111"),
            ("STLLR", 1, 0, 0, 0, "Rs~11111"),
            ("STLR", 1, 0, 0, 1, "Rs~11111"),
            ("LDLAR", 1, 1, 0, 0, "Rs~11111"),
            ("LDAR", 1, 1, 0, 1, "Rs~11111"),
        ):
            rows.append((f"{name}{sfx}", f"size{size} 001000 o2={o2} L={L} o1={o1} {rs} o0={o0} Rt2~11111 Rn:5 Rt:5"))
        rows.append((f"CAS{sfx}", f"size{size} 001000 o2=1 L:1 o1=1 Rs:5 o0:1 Rt2=11111 Rn:5 Rt:5"))
    for name, L, o0, rs in (
        ("STXP", 0, 0, "Rs:5"),
        ("STLXP", 0, 1, "Rs:5"),
        ("LDXP", 1, 0, "Rs~11111"),
        ("LDAXP", 1, 1, "Rs~11111"),
    ):
        rows.append((name, f"size=1x 001000 o2=0 L={L} o1=1 {rs} o0={o0} Rt2:5 Rn:5 Rt:5"))
    # CASP: an odd Rs or Rt is UNDEFINED (a register pair starts even)
    rows.append(("CASP", "size=0x 001000 o2=0 L:1 o1=1 Rs:5 o0:1 Rt2=11111 Rn:5 Rt:5 !Rs=xxxx1 !Rt=xxxx1"))
    return rows


def _atomic_rows() -> list[tuple[str, str]]:
    """Atomic memory operations (FEAT_LSE): LDADD ... LDUMIN (o3 = 0), SWP (o3 = 1, opc = 000),
    LDAPR (o3 = 1, opc = 100, A = 1, R = 0, Rs = 11111: FEAT_LRCPC), each of byte, halfword and
    word/doubleword size; A and R (acquire, release) free; the other o3 = 1 encodings and V = 1
    are left to the group's last row."""
    rows = []
    for sfx, size in _SIZES:
        for k, op in enumerate(("LDADD", "LDCLR", "LDEOR", "LDSET", "LDSMAX", "LDSMIN", "LDUMAX", "LDUMIN")):
            rows.append((f"{op}{sfx}", f"size{size} 111 V=0 00 A:1 R:1 1 Rs:5 o3=0 opc={k:03b} 00 Rn:5 Rt:5"))
        rows.append((f"SWP{sfx}", f"size{size} 111 V=0 00 A:1 R:1 1 Rs:5 o3=1 opc=000 00 Rn:5 Rt:5"))
        rows.append((f"LDAPR{sfx}", f"size{size} 111 V=0 00 A=1 R=0 1 Rs=11111 o3=1 opc=100 00 Rn:5 Rt:5"))
    return rows


def _rcpc2_rows() -> list[tuple[str, str]]:
    """LDAPUR*/STLUR* (FEAT_LRCPC2, ``size 011001 opc 0 imm9 00``); size 10 with opc 11 and
    size 11 with opc 1x are unallocated."""
    return [
        (name, f"size{size} 011001 opc={opc} 0 imm9:9 00 Rn:5 Rt:5")
        for name, size, opc in (
            ("STLURB", "=00", "00"),
            ("LDAPURB", "=00", "01"),
            ("LDAPURSB", "=00", "1x"),
            ("STLURH", "=01", "00"),
            ("LDAPURH", "=01", "01"),
            ("LDAPURSH", "=01", "1x"),
            ("STLUR", "=1x", "00"),
            ("LDAPUR", "=1x", "01"),
            ("LDAPURSW", "=10", "10"),
        )
    ]


def _simd_multi_rows(mode: str, head: str) -> list[tuple[str, str]]:
    """LD1-LD4/ST1-ST4 (multiple structures): opcode 0000 LD4, 0100 LD3, 1000 LD2 (size:Q = 110
    reserved), 0010/0110/0111/1010 LD1 (four, three, one, two registers)."""
    rows = []
    for L, op in ((0, "ST"), (1, "LD")):
        rows += [
            (f"{op}4_multi{mode}", f"0 Q:1 {head.format(L=L)} opcode=0000 size:2 Rn:5 Rt:5 !size=11,Q=0"),
            (
                f"{op}1_multi{mode}",
                f"0 Q:1 {head.format(L=L)} opcode=xx1x size:2 Rn:5 Rt:5 !opcode=0011 !opcode=1011 !opcode=111x",
            ),
            (f"{op}3_multi{mode}", f"0 Q:1 {head.format(L=L)} opcode=0100 size:2 Rn:5 Rt:5 !size=11,Q=0"),
            (f"{op}2_multi{mode}", f"0 Q:1 {head.format(L=L)} opcode=1000 size:2 Rn:5 Rt:5 !size=11,Q=0"),
        ]
    return rows


# an element size's reserved size/S values (LD1 (single structure): 16-bit with size<0> = 1,
# 32-bit with size<1> = 1, 64-bit with S = 1)
_SINGLE_RESERVED = "!opcode=01x,size=x1 !opcode=10x,size=1x !opcode=10x,size=01,S=1"


def _simd_single_rows(mode: str, head: str) -> list[tuple[str, str]]:
    """LD1-LD4/ST1-ST4 (single structure) and LD1R-LD4R: opcode<0>:R is the number of registers
    less one, opcode<2:1> the element size (11: replicate, loads only, S = 0)."""
    rows = []
    for L, op in ((0, "ST"), (1, "LD")):
        for R, (n1, n2) in ((0, (1, 3)), (1, (2, 4))):
            h = head.format(L=L, R=R)
            if L:  # (before LDn, whose opcode 11x they are)
                rows += [
                    (f"LD{n1}R{mode}", f"0 Q:1 {h} opcode=110 S=0 size:2 Rn:5 Rt:5"),
                    (f"LD{n2}R{mode}", f"0 Q:1 {h} opcode=111 S=0 size:2 Rn:5 Rt:5"),
                ]
            rows += [
                (f"{op}{n1}_single{mode}", f"0 Q:1 {h} opcode=xx0 S:1 size:2 Rn:5 Rt:5 !opcode=110 {_SINGLE_RESERVED}"),
                (f"{op}{n2}_single{mode}", f"0 Q:1 {h} opcode=xx1 S:1 size:2 Rn:5 Rt:5 !opcode=111 {_SINGLE_RESERVED}"),
            ]
    return rows


# Advanced SIMD modified immediate: op, cmode and o2 select the instruction page and its
# encoding (Arm ARM, the group's table in the A64 encoding index, and each page's encodings)
_MODIMM = "0 {Q} {op} 0111100000 a:1 b:1 c:1 {cmode} {o2} 1 d:1 e:1 f:1 g:1 h:1 Rd:5"


def _modimm_rows() -> list[tuple[str, str]]:
    """MOVI, MVNI, ORR (vector, immediate), BIC (vector, immediate) and FMOV (vector, immediate),
    one row per encoding of each page: 32-bit shifted immediate (cmode 0xx0; ORR/BIC 0xx1),
    16-bit shifted immediate (10x0; ORR/BIC 10x1), 32-bit shifting ones (110x), 8-bit (1110,
    op 0), 64-bit scalar and vector (1110, op 1, Q 0 and 1), FMOV single (1111, op 0),
    half precision (1111, op 0, o2 1: FEAT_FP16) and double (1111, op 1, Q 1).  Left to the
    group's last row: o2 = 1 but FMOV half precision, and op 1 with cmode 1111 and Q 0."""
    return [
        (name, _MODIMM.format(Q=q, op=f"op={op}", cmode=f"cmode={cmode}", o2=f"o2={o2}"))
        for name, q, op, cmode, o2 in (
            ("MOVI_32", "Q:1", 0, "0xx0", 0),
            ("ORR_imm_vec_32", "Q:1", 0, "0xx1", 0),
            ("MOVI_16", "Q:1", 0, "10x0", 0),
            ("ORR_imm_vec_16", "Q:1", 0, "10x1", 0),
            ("MOVI_ones", "Q:1", 0, "110x", 0),
            ("MOVI_8", "Q:1", 0, "1110", 0),
            ("FMOV_vec_imm_s", "Q:1", 0, "1111", 0),
            ("FMOV_vec_imm_h", "Q:1", 0, "1111", 1),
            ("MVNI_32", "Q:1", 1, "0xx0", 0),
            ("BIC_imm_vec_32", "Q:1", 1, "0xx1", 0),
            ("MVNI_16", "Q:1", 1, "10x0", 0),
            ("BIC_imm_vec_16", "Q:1", 1, "10x1", 0),
            ("MVNI_ones", "Q:1", 1, "110x", 0),
            ("MOVI_64_scalar", "Q=0", 1, "1110", 0),
            ("MOVI_64", "Q=1", 1, "1110", 0),
            ("FMOV_vec_imm_d", "Q=1", 1, "1111", 0),
        )
    ]


# DecodeBitMasks (Arm ARM, shared pseudocode): len = HighestSetBit(N:NOT(imms)) < 1, or the
# element's imms<len-1:0> all ones (S = 2^len - 1), is UNDEFINED: N = 0 with imms 111111/111110
# (len < 1) or 011111, 101111, 110111, 111011, 111101 (ones up to the element), N = 1 with 111111
_LOGIC_IMM_RESERVED = (
    "!N=0,imms=11111x !N=0,imms=011111 !N=0,imms=101111 !N=0,imms=110111 !N=0,imms=111011 !N=0,imms=111101 !N=1,imms=111111"
)
_BITFIELD_RESERVED = "!sf=0,N=1 !sf=1,N=0 !sf=0,immr=1xxxxx !sf=0,imms=1xxxxx"

_ROWS: list[tuple[str, ...]] = [
    # ---- data processing, immediate ----
    ("ADR", "pcrel", "0 immlo:2 10000 immhi:19 Rd:5"),
    ("ADRP", "pcrel", "1 immlo:2 10000 immhi:19 Rd:5"),
    *_split(
        "ADDSUB_imm",
        "addsub_imm",
        [
            (name, f"sf:1 op={op} S={S} 100010 sh:1 imm12:12 Rn:5 Rd:5")
            for name, op, S in (("ADD_imm", 0, 0), ("ADDS_imm", 0, 1), ("SUB_imm", 1, 0), ("SUBS_imm", 1, 1))
        ],
    ),
    *_split(
        "LOGIC_imm",
        "logic_imm",
        [
            (name, f"sf:1 opc={opc} 100100 N:1 immr:6 imms:6 Rn:5 Rd:5 !sf=0,N=1 {_LOGIC_IMM_RESERVED}")
            for name, opc in (("AND_imm", "00"), ("ORR_imm", "01"), ("EOR_imm", "10"), ("ANDS_imm", "11"))
        ],
        rest="sf:1 opc:2 100100 N:1 immr:6 imms:6 Rn:5 Rd:5",
    ),
    *_split(
        "MOVW",
        "movewide",
        [
            ("MOVN", "sf:1 opc=00 100101 hw:2 imm16:16 Rd:5 !sf=0,hw=1x"),
            ("MOVZ", "sf:1 opc=10 100101 hw:2 imm16:16 Rd:5 !sf=0,hw=1x"),
            ("MOVK", "sf:1 opc=11 100101 hw:2 imm16:16 Rd:5 !sf=0,hw=1x"),
        ],
        rest="sf:1 opc:2 100101 hw:2 imm16:16 Rd:5",
    ),
    *_split(
        "BITFIELD",
        "bitfield",
        [  # N must equal sf; a 32-bit form's immr and imms are below 32 (else UNDEFINED)
            (name, f"sf:1 opc={opc} 100110 N:1 immr:6 imms:6 Rn:5 Rd:5 {_BITFIELD_RESERVED}")
            for name, opc in (("SBFM", "00"), ("BFM", "01"), ("UBFM", "10"))
        ],
        rest="sf:1 opc:2 100110 N:1 immr:6 imms:6 Rn:5 Rd:5",
    ),
    *_split(
        "EXTR",
        "extr",
        [("EXTR", "sf:1 00 100111 N:1 0 Rm:5 imms:6 Rn:5 Rd:5 !sf=0,N=1 !sf=1,N=0 !sf=0,imms=1xxxxx")],
        rest="sf:1 00 100111 N:1 0 Rm:5 imms:6 Rn:5 Rd:5",
    ),
    # ---- branches, exceptions, system ----
    ("B", "branch", "0 00101 imm26:26"),
    ("BL", "branch", "1 00101 imm26:26"),
    *_split("CBZ", "branch", [("CBZ", "sf:1 011010 op=0 imm19:19 Rt:5"), ("CBNZ", "sf:1 011010 op=1 imm19:19 Rt:5")]),
    *_split("TBZ", "branch", [("TBZ", "b5:1 011011 op=0 b40:5 imm14:14 Rt:5"), ("TBNZ", "b5:1 011011 op=1 b40:5 imm14:14 Rt:5")]),
    # B.cond and BC.cond (FEAT_HBC, Armv8.8: bit 4, a hint that the branch behaves consistently;
    # the same branch otherwise): two instruction pages of "Conditional branch (immediate)"
    *_split(
        "BCOND",
        "branch",
        [("B_cond", "0101010 o1=0 imm19:19 o0=0 cond:4"), ("BC_cond", "0101010 o1=0 imm19:19 o0=1 cond:4")],
    ),
    ("SVC", "exception", "11010100 000 imm16:16 00001"),
    ("BRK", "exception", "11010100 001 imm16:16 00000"),
    ("UDF", "exception", "0000000000000000 imm16:16"),
    *_split(
        "HINT",
        "system",
        [
            ("NOP", "11010101000000110010 CRm=0000 op2=000 11111"),
            ("YIELD", "11010101000000110010 CRm=0000 op2=001 11111"),
            ("WFE", "11010101000000110010 CRm=0000 op2=010 11111"),
            ("WFI", "11010101000000110010 CRm=0000 op2=011 11111"),
            ("SEV", "11010101000000110010 CRm=0000 op2=100 11111"),
            ("SEVL", "11010101000000110010 CRm=0000 op2=101 11111"),
            ("DGH", "11010101000000110010 CRm=0000 op2=110 11111"),
            ("XPACLRI", "11010101000000110010 CRm=0000 op2=111 11111"),
            ("PACIA1716", "11010101000000110010 CRm=0001 op2=000 11111"),
            ("PACIB1716", "11010101000000110010 CRm=0001 op2=010 11111"),
            ("AUTIA1716", "11010101000000110010 CRm=0001 op2=100 11111"),
            ("AUTIB1716", "11010101000000110010 CRm=0001 op2=110 11111"),
            ("ESB", "11010101000000110010 CRm=0010 op2=000 11111"),
            ("PSB", "11010101000000110010 CRm=0010 op2=001 11111"),
            ("TSB", "11010101000000110010 CRm=0010 op2=010 11111"),
            ("CSDB", "11010101000000110010 CRm=0010 op2=100 11111"),
            ("PACIAZ", "11010101000000110010 CRm=0011 op2=000 11111"),
            ("PACIASP", "11010101000000110010 CRm=0011 op2=001 11111"),
            ("PACIBZ", "11010101000000110010 CRm=0011 op2=010 11111"),
            ("PACIBSP", "11010101000000110010 CRm=0011 op2=011 11111"),
            ("AUTIAZ", "11010101000000110010 CRm=0011 op2=100 11111"),
            ("AUTIASP", "11010101000000110010 CRm=0011 op2=101 11111"),
            ("AUTIBZ", "11010101000000110010 CRm=0011 op2=110 11111"),
            ("AUTIBSP", "11010101000000110010 CRm=0011 op2=111 11111"),
            ("BTI", "11010101000000110010 CRm=0100 op2=xx0 11111"),
            # HINT #imm: the rest of the hint space, which executes as a NOP (Arm ARM, HINT)
            ("HINT", "11010101000000110010 CRm:4 op2:3 11111"),
        ],
    ),
    ("CLREX", "system", "11010101000000110011 CRm:4 010 11111"),
    *_split(
        "BARRIER",
        "system",
        [
            ("DSB", "11010101000000110011 CRm:4 1 op2=00 11111"),  # SSBB (CRm 0000), PSSBB (0100)
            ("DMB", "11010101000000110011 CRm:4 1 op2=01 11111"),
            ("ISB", "11010101000000110011 CRm:4 1 op2=10 11111"),
            ("SB", "11010101000000110011 CRm=0000 1 op2=11 11111", "system_ext"),  # FEAT_SB
        ],
        # SB with CRm != 0000 ((0)(0)(0)(0), CONSTRAINED UNPREDICTABLE): UNDEFINED to Unicorn
        rest="11010101000000110011 CRm:4 1 op2:2 11111",
    ),
    *_split(
        "MSR_imm",
        "system",
        [
            # FEAT_FlagM/FlagM2 (test class system_ext: later than the Switch's A57, run on
            # Unicorn's max CPU), the PSTATE class's op1 = 000, op2 = 000/001/010; CRm is
            # (0)(0)(0)(0), another value UNDEFINED to Unicorn: the group's last row
            ("CFINV", "1101010100000 op1=000 0100 CRm=0000 op2=000 11111", "system_ext"),
            ("XAFLAG", "1101010100000 op1=000 0100 CRm=0000 op2=001 11111", "system_ext"),
            ("AXFLAG", "1101010100000 op1=000 0100 CRm=0000 op2=010 11111", "system_ext"),
            # MSR <pstatefield>, #imm (DAIFSet, SPSel, SSBS...)
            ("MSR_imm", "1101010100000 op1:3 0100 CRm:4 op2:3 11111 !op1=000,op2=000 !op1=000,op2=001 !op1=000,op2=010"),
        ],
        rest="1101010100000 op1:3 0100 CRm:4 op2:3 11111",
    ),
    *_split(
        "SYS",
        "system",
        [
            ("SYS", "1101010100 L=0 01 op1:3 CRn:4 CRm:4 op2:3 Rt:5"),  # DC, IC, AT, TLBI...
            ("SYSL", "1101010100 L=1 01 op1:3 CRn:4 CRm:4 op2:3 Rt:5"),
        ],
    ),
    # MRS/MSR (register): FPSR (op0 3 = o0 1, op1 011, CRn 0100, CRm 0100, op2 001: S3_3_C4_C4_1,
    # Arm ARM) and FPCR (op2 000: S3_3_C4_C4_0) have their own forms, as their lowering differs
    # (lift/fp_fpsr.py: the host's FP flags); MRS of FPCR reads s->fpcr, as the other registers
    # (lift/control.py)
    *_split(
        "MRS",
        "sysreg",
        [
            ("MRS_fpsr", "1101010100 1 1 o0=1 op1=011 CRn=0100 CRm=0100 op2=001 Rt:5"),
            ("MRS", "1101010100 1 1 o0:1 op1:3 CRn:4 CRm:4 op2:3 Rt:5 !o0=1,op1=011,CRn=0100,CRm=0100,op2=001"),
        ],
    ),
    *_split(
        "MSR_reg",
        "sysreg",
        [
            ("MSR_fp", "1101010100 0 1 o0=1 op1=011 CRn=0100 CRm=0100 op2=00x Rt:5"),  # FPCR, FPSR
            ("MSR_reg", "1101010100 0 1 o0:1 op1:3 CRn:4 CRm:4 op2:3 Rt:5 !o0=1,op1=011,CRn=0100,CRm=0100,op2=00x"),
        ],
    ),
    ("BR", "branch_reg", "1101011 0000 11111 000000 Rn:5 00000"),
    ("BLR", "branch_reg", "1101011 0001 11111 000000 Rn:5 00000"),
    ("RET", "branch_reg", "1101011 0010 11111 000000 Rn:5 00000"),
    # ---- loads and stores ----
    *_split(
        "LDR_lit",
        "ldst_lit",
        [
            ("LDR_lit", "opc=0x 011 V=0 00 imm19:19 Rt:5"),  # W (opc 00) or X (01)
            ("LDRSW_lit", "opc=10 011 V=0 00 imm19:19 Rt:5"),
            ("PRFM_lit", "opc=11 011 V=0 00 imm19:19 Rt:5"),
            ("LDR_simd_lit", "opc:2 011 V=1 00 imm19:19 Rt:5 !opc=11"),  # S, D, Q
        ],
        rest="opc:2 011 V:1 00 imm19:19 Rt:5",
    ),
    *_split("LDSTX", "ldst_excl", _excl_rows(), rest="size:2 001000 o2:1 L:1 o1:1 Rs:5 o0:1 Rt2:5 Rn:5 Rt:5"),
    *_split("LDST_pair", "ldst_pair", _pair_rows(), rest="opc:2 101 V:1 0 idx:2 L:1 imm7:7 Rt2:5 Rn:5 Rt:5"),
    *_split("LDST_atomic", "ldst_atomic", _atomic_rows(), rest="size:2 111 V:1 00 A:1 R:1 1 Rs:5 o3:1 opc:3 00 Rn:5 Rt:5"),
    *_split(
        "LDST_regoff",
        "ldst_reg",
        _ldst_reg_rows("_reg", "00 {opc} 1 Rm:5 option:3 S:1 10 Rn:5 Rt:5", {}, "!option=x0x"),
        rest="size:2 111 V:1 00 opc:2 1 Rm:5 option:3 S:1 10 Rn:5 Rt:5",
    ),
    *_split("LDST_rcpc2", "ldst_imm", _rcpc2_rows(), rest="size:2 011001 opc:2 0 imm9:9 00 Rn:5 Rt:5"),
    *_split("LDST_imm9", "ldst_imm", _ldst_imm9_rows(), rest="size:2 111 V:1 00 opc:2 0 imm9:9 idx:2 Rn:5 Rt:5"),
    *_split(
        "LDST_uimm",
        "ldst_imm",
        _ldst_reg_rows("_uimm", "01 {opc} imm12:12 Rn:5 Rt:5", {}),
        rest="size:2 111 V:1 01 opc:2 imm12:12 Rn:5 Rt:5",
    ),
    *_split(
        "LDST_multi",
        "simd_ldst",
        _simd_multi_rows("", "0011000 L={L} 000000"),
        rest="0 Q:1 0011000 L:1 000000 opcode:4 size:2 Rn:5 Rt:5",
    ),
    *_split(
        "LDST_multi_post",
        "simd_ldst",
        _simd_multi_rows("_post", "0011001 L={L} 0 Rm:5"),
        rest="0 Q:1 0011001 L:1 0 Rm:5 opcode:4 size:2 Rn:5 Rt:5",
    ),
    *_split(
        "LDST_single",
        "simd_ldst",
        _simd_single_rows("", "0011010 L={L} R={R} 00000"),
        rest="0 Q:1 0011010 L:1 R:1 00000 opcode:3 S:1 size:2 Rn:5 Rt:5",
    ),
    *_split(
        "LDST_single_post",
        "simd_ldst",
        _simd_single_rows("_post", "0011011 L={L} R={R} Rm:5"),
        rest="0 Q:1 0011011 L:1 R:1 Rm:5 opcode:3 S:1 size:2 Rn:5 Rt:5",
    ),
    # ---- data processing, register ----
    *_split(
        "LOGIC_sreg",
        "logic_reg",
        [
            (name, f"sf:1 opc={opc} 01010 shift:2 N={N} Rm:5 imm6:6 Rn:5 Rd:5 !sf=0,imm6=1xxxxx")
            for name, opc, N in (
                ("AND_sreg", "00", 0),
                ("BIC_sreg", "00", 1),
                ("ORR_sreg", "01", 0),
                ("ORN_sreg", "01", 1),
                ("EOR_sreg", "10", 0),
                ("EON_sreg", "10", 1),
                ("ANDS_sreg", "11", 0),
                ("BICS_sreg", "11", 1),
            )
        ],
        rest="sf:1 opc:2 01010 shift:2 N:1 Rm:5 imm6:6 Rn:5 Rd:5",
    ),
    *_split(
        "ADDSUB_sreg",
        "addsub_reg",
        [
            (name, f"sf:1 op={op} S={S} 01011 shift:2 0 Rm:5 imm6:6 Rn:5 Rd:5 !shift=11 !sf=0,imm6=1xxxxx")
            for name, op, S in (("ADD_sreg", 0, 0), ("ADDS_sreg", 0, 1), ("SUB_sreg", 1, 0), ("SUBS_sreg", 1, 1))
        ],
        rest="sf:1 op:1 S:1 01011 shift:2 0 Rm:5 imm6:6 Rn:5 Rd:5",
    ),
    *_split(
        "ADDSUB_ereg",
        "addsub_ext",
        [
            (name, f"sf:1 op={op} S={S} 01011 00 1 Rm:5 option:3 imm3:3 Rn:5 Rd:5 !imm3=101 !imm3=11x")
            for name, op, S in (("ADD_ereg", 0, 0), ("ADDS_ereg", 0, 1), ("SUB_ereg", 1, 0), ("SUBS_ereg", 1, 1))
        ],
        rest="sf:1 op:1 S:1 01011 00 1 Rm:5 option:3 imm3:3 Rn:5 Rd:5",
    ),
    *_split(
        "ADC",
        "addsub_carry",
        [
            (name, f"sf:1 op={op} S={S} 11010000 Rm:5 000000 Rn:5 Rd:5")
            for name, op, S in (("ADC", 0, 0), ("ADCS", 0, 1), ("SBC", 1, 0), ("SBCS", 1, 1))
        ],
    ),
    *_split(
        "CCMP_reg",
        "condcmp",
        [
            ("CCMN_reg", "sf:1 op=0 1 11010010 Rm:5 cond:4 0 0 Rn:5 0 nzcv:4"),
            ("CCMP_reg", "sf:1 op=1 1 11010010 Rm:5 cond:4 0 0 Rn:5 0 nzcv:4"),
        ],
    ),
    *_split(
        "CCMP_imm",
        "condcmp",
        [
            ("CCMN_imm", "sf:1 op=0 1 11010010 imm5:5 cond:4 1 0 Rn:5 0 nzcv:4"),
            ("CCMP_imm", "sf:1 op=1 1 11010010 imm5:5 cond:4 1 0 Rn:5 0 nzcv:4"),
        ],
    ),
    *_split(
        "CSEL",
        "condsel",
        [
            ("CSEL", "sf:1 op=0 0 11010100 Rm:5 cond:4 0 o2=0 Rn:5 Rd:5"),
            ("CSINC", "sf:1 op=0 0 11010100 Rm:5 cond:4 0 o2=1 Rn:5 Rd:5"),
            ("CSINV", "sf:1 op=1 0 11010100 Rm:5 cond:4 0 o2=0 Rn:5 Rd:5"),
            ("CSNEG", "sf:1 op=1 0 11010100 Rm:5 cond:4 0 o2=1 Rn:5 Rd:5"),
        ],
    ),
    *_split(
        "DP3",
        "mul",
        [
            ("MADD", "sf:1 00 11011 op31=000 Rm:5 o0=0 Ra:5 Rn:5 Rd:5"),
            ("MSUB", "sf:1 00 11011 op31=000 Rm:5 o0=1 Ra:5 Rn:5 Rd:5"),
            ("SMADDL", "sf=1 00 11011 op31=001 Rm:5 o0=0 Ra:5 Rn:5 Rd:5"),
            ("SMSUBL", "sf=1 00 11011 op31=001 Rm:5 o0=1 Ra:5 Rn:5 Rd:5"),
            ("SMULH", "sf=1 00 11011 op31=010 Rm:5 o0=0 Ra:5 Rn:5 Rd:5"),
            ("UMADDL", "sf=1 00 11011 op31=101 Rm:5 o0=0 Ra:5 Rn:5 Rd:5"),
            ("UMSUBL", "sf=1 00 11011 op31=101 Rm:5 o0=1 Ra:5 Rn:5 Rd:5"),
            ("UMULH", "sf=1 00 11011 op31=110 Rm:5 o0=0 Ra:5 Rn:5 Rd:5"),
        ],
        rest="sf:1 00 11011 op31:3 Rm:5 o0:1 Ra:5 Rn:5 Rd:5",
    ),
    *_split(
        "DP2",
        "dp2",
        [
            ("UDIV", "sf:1 0 0 11010110 Rm:5 opcode=000010 Rn:5 Rd:5"),
            ("SDIV", "sf:1 0 0 11010110 Rm:5 opcode=000011 Rn:5 Rd:5"),
            ("LSLV", "sf:1 0 0 11010110 Rm:5 opcode=001000 Rn:5 Rd:5"),
            ("LSRV", "sf:1 0 0 11010110 Rm:5 opcode=001001 Rn:5 Rd:5"),
            ("ASRV", "sf:1 0 0 11010110 Rm:5 opcode=001010 Rn:5 Rd:5"),
            ("RORV", "sf:1 0 0 11010110 Rm:5 opcode=001011 Rn:5 Rd:5"),
            ("CRC32B", "sf=0 0 0 11010110 Rm:5 opcode=010000 Rn:5 Rd:5"),
            ("CRC32H", "sf=0 0 0 11010110 Rm:5 opcode=010001 Rn:5 Rd:5"),
            ("CRC32W", "sf=0 0 0 11010110 Rm:5 opcode=010010 Rn:5 Rd:5"),
            ("CRC32X", "sf=1 0 0 11010110 Rm:5 opcode=010011 Rn:5 Rd:5"),
            ("CRC32CB", "sf=0 0 0 11010110 Rm:5 opcode=010100 Rn:5 Rd:5"),
            ("CRC32CH", "sf=0 0 0 11010110 Rm:5 opcode=010101 Rn:5 Rd:5"),
            ("CRC32CW", "sf=0 0 0 11010110 Rm:5 opcode=010110 Rn:5 Rd:5"),
            ("CRC32CX", "sf=1 0 0 11010110 Rm:5 opcode=010111 Rn:5 Rd:5"),
        ],
        rest="sf:1 0 0 11010110 Rm:5 opcode:6 Rn:5 Rd:5",
    ),
    *_split(
        "DP1",
        "dp1",
        [
            ("RBIT", "sf:1 1 0 11010110 00000 opcode=000000 Rn:5 Rd:5"),
            ("REV16", "sf:1 1 0 11010110 00000 opcode=000001 Rn:5 Rd:5"),
            ("REV_w", "sf=0 1 0 11010110 00000 opcode=000010 Rn:5 Rd:5"),  # REV Wd
            ("REV32", "sf=1 1 0 11010110 00000 opcode=000010 Rn:5 Rd:5"),
            ("REV_x", "sf=1 1 0 11010110 00000 opcode=000011 Rn:5 Rd:5"),  # REV Xd
            ("CLZ", "sf:1 1 0 11010110 00000 opcode=000100 Rn:5 Rd:5"),
            ("CLS", "sf:1 1 0 11010110 00000 opcode=000101 Rn:5 Rd:5"),
        ],
        rest="sf:1 1 0 11010110 00000 opcode:6 Rn:5 Rd:5",
    ),
    # ---- FP gaps (lift/fp_round.py, fp_half.py): before the general FP rows they overlap ----
    *_split(
        "FP_RINT_N",
        "fp_round",
        [
            ("FRINT32Z", "0 0 0 11110 0 sz:1 1 0100 op=00 10000 Rn:5 Rd:5"),
            ("FRINT32X", "0 0 0 11110 0 sz:1 1 0100 op=01 10000 Rn:5 Rd:5"),
            ("FRINT64Z", "0 0 0 11110 0 sz:1 1 0100 op=10 10000 Rn:5 Rd:5"),
            ("FRINT64X", "0 0 0 11110 0 sz:1 1 0100 op=11 10000 Rn:5 Rd:5"),
        ],
    ),
    ("FJCVTZS", "fp_round", "0 0 0 11110 01 1 11 110 000000 Rn:5 Rd:5"),
    ("FCVT_from_half", "fp_narrow", "0 0 0 11110 11 1 00010 o:1 10000 Rn:5 Rd:5"),  # FCVT Sd/Dd, Hn
    ("FCVT_to_half", "fp_narrow", "0 0 0 11110 0 sz:1 1 000111 10000 Rn:5 Rd:5"),  # FCVT Hd, Sn/Dn
    # half precision (lift/fp_f16.py): the general FP rows with ftype = 11; arithmetic in fp_half,
    # compares, selects, moves and integer conversions in fp_half_misc
    *_split(
        "FP_INT_H",
        "fp_half_misc",
        [
            ("FCVTNS_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=000 000000 Rn:5 Rd:5"),
            ("FCVTNU_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=001 000000 Rn:5 Rd:5"),
            ("SCVTF_int_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=010 000000 Rn:5 Rd:5"),
            ("UCVTF_int_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=011 000000 Rn:5 Rd:5"),
            ("FCVTAS_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=100 000000 Rn:5 Rd:5"),
            ("FCVTAU_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=101 000000 Rn:5 Rd:5"),
            ("FMOV_to_gpr_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=110 000000 Rn:5 Rd:5"),
            ("FMOV_from_gpr_h", "sf:1 0 0 11110 11 1 rmode=00 opcode=111 000000 Rn:5 Rd:5"),
            ("FCVTPS_h", "sf:1 0 0 11110 11 1 rmode=01 opcode=000 000000 Rn:5 Rd:5"),
            ("FCVTPU_h", "sf:1 0 0 11110 11 1 rmode=01 opcode=001 000000 Rn:5 Rd:5"),
            ("FCVTMS_h", "sf:1 0 0 11110 11 1 rmode=10 opcode=000 000000 Rn:5 Rd:5"),
            ("FCVTMU_h", "sf:1 0 0 11110 11 1 rmode=10 opcode=001 000000 Rn:5 Rd:5"),
            ("FCVTZS_int_h", "sf:1 0 0 11110 11 1 rmode=11 opcode=000 000000 Rn:5 Rd:5"),
            ("FCVTZU_int_h", "sf:1 0 0 11110 11 1 rmode=11 opcode=001 000000 Rn:5 Rd:5"),
        ],
        rest="sf:1 0 0 11110 11 1 rmode:2 opcode:3 000000 Rn:5 Rd:5",
    ),
    *_split(
        "FP_DP1_H",
        "fp_half",
        [
            ("FMOV_reg_h", "0 0 0 11110 11 1 opcode=000000 10000 Rn:5 Rd:5"),
            ("FABS_h", "0 0 0 11110 11 1 opcode=000001 10000 Rn:5 Rd:5"),
            ("FNEG_h", "0 0 0 11110 11 1 opcode=000010 10000 Rn:5 Rd:5"),
            ("FSQRT_h", "0 0 0 11110 11 1 opcode=000011 10000 Rn:5 Rd:5"),
            ("FRINTN_h", "0 0 0 11110 11 1 opcode=001000 10000 Rn:5 Rd:5"),
            ("FRINTP_h", "0 0 0 11110 11 1 opcode=001001 10000 Rn:5 Rd:5"),
            ("FRINTM_h", "0 0 0 11110 11 1 opcode=001010 10000 Rn:5 Rd:5"),
            ("FRINTZ_h", "0 0 0 11110 11 1 opcode=001011 10000 Rn:5 Rd:5"),
            ("FRINTA_h", "0 0 0 11110 11 1 opcode=001100 10000 Rn:5 Rd:5"),
            ("FRINTX_h", "0 0 0 11110 11 1 opcode=001110 10000 Rn:5 Rd:5"),
            ("FRINTI_h", "0 0 0 11110 11 1 opcode=001111 10000 Rn:5 Rd:5"),
        ],
        rest="0 0 0 11110 11 1 opcode:6 10000 Rn:5 Rd:5",
    ),
    *_split(
        "FP_CMP_H",
        "fp_half_misc",
        [
            ("FCMP_h", "0 0 0 11110 11 1 Rm:5 00 1000 Rn:5 opc=00000"),
            ("FCMP_zero_h", "0 0 0 11110 11 1 Rm:5 00 1000 Rn:5 opc=01000"),
            ("FCMPE_h", "0 0 0 11110 11 1 Rm:5 00 1000 Rn:5 opc=10000"),
            ("FCMPE_zero_h", "0 0 0 11110 11 1 Rm:5 00 1000 Rn:5 opc=11000"),
        ],
        rest="0 0 0 11110 11 1 Rm:5 00 1000 Rn:5 opc:5",
    ),
    ("FMOV_imm_H", "fp_half_misc", "0 0 0 11110 11 1 imm8:8 100 00000 Rd:5"),
    *_split(
        "FP_CCMP_H",
        "fp_half_misc",
        [
            ("FCCMP_h", "0 0 0 11110 11 1 Rm:5 cond:4 01 Rn:5 op=0 nzcv:4"),
            ("FCCMPE_h", "0 0 0 11110 11 1 Rm:5 cond:4 01 Rn:5 op=1 nzcv:4"),
        ],
    ),
    *_split(
        "FP_DP2_H",
        "fp_half",
        [
            ("FMUL_h", "0 0 0 11110 11 1 Rm:5 opcode=0000 10 Rn:5 Rd:5"),
            ("FDIV_h", "0 0 0 11110 11 1 Rm:5 opcode=0001 10 Rn:5 Rd:5"),
            ("FADD_h", "0 0 0 11110 11 1 Rm:5 opcode=0010 10 Rn:5 Rd:5"),
            ("FSUB_h", "0 0 0 11110 11 1 Rm:5 opcode=0011 10 Rn:5 Rd:5"),
            ("FMAX_h", "0 0 0 11110 11 1 Rm:5 opcode=0100 10 Rn:5 Rd:5"),
            ("FMIN_h", "0 0 0 11110 11 1 Rm:5 opcode=0101 10 Rn:5 Rd:5"),
            ("FMAXNM_h", "0 0 0 11110 11 1 Rm:5 opcode=0110 10 Rn:5 Rd:5"),
            ("FMINNM_h", "0 0 0 11110 11 1 Rm:5 opcode=0111 10 Rn:5 Rd:5"),
            ("FNMUL_h", "0 0 0 11110 11 1 Rm:5 opcode=1000 10 Rn:5 Rd:5"),
        ],
        rest="0 0 0 11110 11 1 Rm:5 opcode:4 10 Rn:5 Rd:5",
    ),
    ("FCSEL_H", "fp_half_misc", "0 0 0 11110 11 1 Rm:5 cond:4 11 Rn:5 Rd:5"),
    *_split(
        "FP_DP3_H",
        "fp_half",
        [
            ("FMADD_h", "0 0 0 11111 11 o1=0 Rm:5 o0=0 Ra:5 Rn:5 Rd:5"),
            ("FMSUB_h", "0 0 0 11111 11 o1=0 Rm:5 o0=1 Ra:5 Rn:5 Rd:5"),
            ("FNMADD_h", "0 0 0 11111 11 o1=1 Rm:5 o0=0 Ra:5 Rn:5 Rd:5"),
            ("FNMSUB_h", "0 0 0 11111 11 o1=1 Rm:5 o0=1 Ra:5 Rn:5 Rd:5"),
        ],
    ),
    # ---- scalar floating point ----
    *_split(
        "FP_INT",
        "fp_cvt",
        [
            ("FCVTNS", "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=000 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTNU", "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=001 000000 Rn:5 Rd:5 !ftype=10"),
            ("SCVTF_int", "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=010 000000 Rn:5 Rd:5 !ftype=10"),
            ("UCVTF_int", "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=011 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTAS", "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=100 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTAU", "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=101 000000 Rn:5 Rd:5 !ftype=10"),
            (
                "FMOV_to_gpr",
                "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=110 000000 Rn:5 Rd:5 !ftype=10 !sf=0,ftype=01 !sf=1,ftype=00",
            ),
            (
                "FMOV_from_gpr",
                "sf:1 0 0 11110 ftype:2 1 rmode=00 opcode=111 000000 Rn:5 Rd:5 !ftype=10 !sf=0,ftype=01 !sf=1,ftype=00",
            ),
            ("FMOV_to_gpr_top", "sf=1 0 0 11110 ftype=10 1 rmode=01 opcode=110 000000 Rn:5 Rd:5"),  # FMOV Xd, Vn.D[1]
            ("FMOV_from_gpr_top", "sf=1 0 0 11110 ftype=10 1 rmode=01 opcode=111 000000 Rn:5 Rd:5"),  # FMOV Vd.D[1], Xn
            ("FCVTPS", "sf:1 0 0 11110 ftype:2 1 rmode=01 opcode=000 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTPU", "sf:1 0 0 11110 ftype:2 1 rmode=01 opcode=001 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTMS", "sf:1 0 0 11110 ftype:2 1 rmode=10 opcode=000 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTMU", "sf:1 0 0 11110 ftype:2 1 rmode=10 opcode=001 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTZS_int", "sf:1 0 0 11110 ftype:2 1 rmode=11 opcode=000 000000 Rn:5 Rd:5 !ftype=10"),
            ("FCVTZU_int", "sf:1 0 0 11110 ftype:2 1 rmode=11 opcode=001 000000 Rn:5 Rd:5 !ftype=10"),
        ],
        rest="sf:1 0 0 11110 ftype:2 1 rmode:2 opcode:3 000000 Rn:5 Rd:5",
    ),
    *_split(
        "FP_DP1",
        "fp_arith",
        [
            ("FMOV_reg", "0 0 0 11110 ftype:2 1 opcode=000000 10000 Rn:5 Rd:5 !ftype=10"),
            ("FABS", "0 0 0 11110 ftype:2 1 opcode=000001 10000 Rn:5 Rd:5 !ftype=10"),
            ("FNEG", "0 0 0 11110 ftype:2 1 opcode=000010 10000 Rn:5 Rd:5 !ftype=10"),
            ("FSQRT", "0 0 0 11110 ftype:2 1 opcode=000011 10000 Rn:5 Rd:5 !ftype=10"),
            ("FCVT_to_single", "0 0 0 11110 ftype:2 1 opcode=000100 10000 Rn:5 Rd:5 !ftype=10 !ftype=00"),
            ("FCVT_to_double", "0 0 0 11110 ftype:2 1 opcode=000101 10000 Rn:5 Rd:5 !ftype=10 !ftype=01"),
            ("FRINTN", "0 0 0 11110 ftype:2 1 opcode=001000 10000 Rn:5 Rd:5 !ftype=10"),
            ("FRINTP", "0 0 0 11110 ftype:2 1 opcode=001001 10000 Rn:5 Rd:5 !ftype=10"),
            ("FRINTM", "0 0 0 11110 ftype:2 1 opcode=001010 10000 Rn:5 Rd:5 !ftype=10"),
            ("FRINTZ", "0 0 0 11110 ftype:2 1 opcode=001011 10000 Rn:5 Rd:5 !ftype=10"),
            ("FRINTA", "0 0 0 11110 ftype:2 1 opcode=001100 10000 Rn:5 Rd:5 !ftype=10"),
            ("FRINTX", "0 0 0 11110 ftype:2 1 opcode=001110 10000 Rn:5 Rd:5 !ftype=10"),
            ("FRINTI", "0 0 0 11110 ftype:2 1 opcode=001111 10000 Rn:5 Rd:5 !ftype=10"),
        ],
        rest="0 0 0 11110 ftype:2 1 opcode:6 10000 Rn:5 Rd:5",
    ),
    *_split(
        "FP_CMP",
        "fp_cmp",
        [
            ("FCMP", "0 0 0 11110 ftype:2 1 Rm:5 00 1000 Rn:5 opc=00000 !ftype=10"),
            ("FCMP_zero", "0 0 0 11110 ftype:2 1 Rm:5 00 1000 Rn:5 opc=01000 !ftype=10"),
            ("FCMPE", "0 0 0 11110 ftype:2 1 Rm:5 00 1000 Rn:5 opc=10000 !ftype=10"),
            ("FCMPE_zero", "0 0 0 11110 ftype:2 1 Rm:5 00 1000 Rn:5 opc=11000 !ftype=10"),
        ],
        rest="0 0 0 11110 ftype:2 1 Rm:5 00 1000 Rn:5 opc:5",
    ),
    # (ftype 10 is reserved; 11, half precision, is FMOV_imm_H's)
    *_split(
        "FMOV_imm",
        "fp_mov",
        [("FMOV_imm", "0 0 0 11110 ftype:2 1 imm8:8 100 00000 Rd:5 !ftype=10")],
        rest="0 0 0 11110 ftype:2 1 imm8:8 100 00000 Rd:5",
    ),
    *_split(
        "FP_CCMP",
        "fp_cmp",
        [
            ("FCCMP", "0 0 0 11110 ftype:2 1 Rm:5 cond:4 01 Rn:5 op=0 nzcv:4 !ftype=10"),
            ("FCCMPE", "0 0 0 11110 ftype:2 1 Rm:5 cond:4 01 Rn:5 op=1 nzcv:4 !ftype=10"),
        ],
        rest="0 0 0 11110 ftype:2 1 Rm:5 cond:4 01 Rn:5 op:1 nzcv:4",
    ),
    *_split(
        "FP_DP2",
        "fp_arith",
        [
            (name, f"0 0 0 11110 ftype:2 1 Rm:5 opcode={op:04b} 10 Rn:5 Rd:5 !ftype=10")
            for op, name in enumerate(("FMUL", "FDIV", "FADD", "FSUB", "FMAX", "FMIN", "FMAXNM", "FMINNM", "FNMUL"))
        ],
        rest="0 0 0 11110 ftype:2 1 Rm:5 opcode:4 10 Rn:5 Rd:5",
    ),
    *_split(
        "FCSEL",
        "fp_cmp",
        [("FCSEL", "0 0 0 11110 ftype:2 1 Rm:5 cond:4 11 Rn:5 Rd:5 !ftype=10")],  # (11: FCSEL_H)
        rest="0 0 0 11110 ftype:2 1 Rm:5 cond:4 11 Rn:5 Rd:5",
    ),
    *_split(
        "FP_DP3",
        "fp_arith",
        [
            ("FMADD", "0 0 0 11111 ftype:2 o1=0 Rm:5 o0=0 Ra:5 Rn:5 Rd:5 !ftype=10"),
            ("FMSUB", "0 0 0 11111 ftype:2 o1=0 Rm:5 o0=1 Ra:5 Rn:5 Rd:5 !ftype=10"),
            ("FNMADD", "0 0 0 11111 ftype:2 o1=1 Rm:5 o0=0 Ra:5 Rn:5 Rd:5 !ftype=10"),
            ("FNMSUB", "0 0 0 11111 ftype:2 o1=1 Rm:5 o0=1 Ra:5 Rn:5 Rd:5 !ftype=10"),
        ],
        rest="0 0 0 11111 ftype:2 o1:1 Rm:5 o0:1 Ra:5 Rn:5 Rd:5",
    ),
    # ---- advanced SIMD (the subset compiled C and glibc use) ----
    # ---- FP gaps (lift/fp_recip.py, fp_half.py, fp_round.py, fp_across.py, fp_f16.py): before the
    # rows they overlap ----
    *_split(
        "SIMD_frint_n",
        "fp_round",
        [
            ("FRINT32Z_vec", "0 Q:1 U=0 01110 0 sz:1 10000 1111 op=0 10 Rn:5 Rd:5 !sz=1,Q=0"),
            ("FRINT32X_vec", "0 Q:1 U=1 01110 0 sz:1 10000 1111 op=0 10 Rn:5 Rd:5 !sz=1,Q=0"),
            ("FRINT64Z_vec", "0 Q:1 U=0 01110 0 sz:1 10000 1111 op=1 10 Rn:5 Rd:5 !sz=1,Q=0"),
            ("FRINT64X_vec", "0 Q:1 U=1 01110 0 sz:1 10000 1111 op=1 10 Rn:5 Rd:5 !sz=1,Q=0"),
        ],
        rest="0 Q:1 U:1 01110 0 sz:1 10000 1111 op:1 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_fcvt_nl",
        "fp_narrow",
        [
            ("FCVTN_vec", "0 Q:1 U=0 01110 0 sz:1 10000 1011 o=0 10 Rn:5 Rd:5"),
            ("FCVTL_vec", "0 Q:1 U=0 01110 0 sz:1 10000 1011 o=1 10 Rn:5 Rd:5"),
            ("FCVTXN_vec", "0 Q:1 U=1 01110 0 sz:1 10000 1011 o=0 10 Rn:5 Rd:5 !sz=0"),
        ],
        rest="0 Q:1 U:1 01110 0 sz:1 10000 1011 o:1 10 Rn:5 Rd:5",
    ),
    *_split(  # FCVTXN Sd, Dn: sz = 0 reserved
        "SIMD_scalar_fcvtxn",
        "fp_narrow",
        [("SIMD_scalar_fcvtxn", "01 1 11110 0 sz:1 10000 10110 10 Rn:5 Rd:5 !sz=0")],
        rest="01 1 11110 0 sz:1 10000 10110 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_recip_est",
        "fp_recip",
        [
            ("URECPE", "0 Q:1 U=0 01110 1 sz=0 10000 1110 o=0 10 Rn:5 Rd:5"),
            ("FRECPE_vec", "0 Q:1 U=0 01110 1 sz:1 10000 1110 o=1 10 Rn:5 Rd:5 !sz=1,Q=0"),
            ("URSQRTE", "0 Q:1 U=1 01110 1 sz=0 10000 1110 o=0 10 Rn:5 Rd:5"),
            ("FRSQRTE_vec", "0 Q:1 U=1 01110 1 sz:1 10000 1110 o=1 10 Rn:5 Rd:5 !sz=1,Q=0"),
        ],
        rest="0 Q:1 U:1 01110 1 sz:1 10000 1110 o:1 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_recip_est",
        "fp_recip",
        [
            ("FRECPE_scalar", "01 U=0 11110 1 sz:1 10000 111 o=01 10 Rn:5 Rd:5"),
            ("FRECPX", "01 U=0 11110 1 sz:1 10000 111 o=11 10 Rn:5 Rd:5"),
            ("FRSQRTE_scalar", "01 U=1 11110 1 sz:1 10000 111 o=01 10 Rn:5 Rd:5"),
        ],
        rest="01 U:1 11110 1 sz:1 10000 111 o:2 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_recip_step",
        "fp_recip",
        [
            ("FRECPS_vec", "0 Q:1 0 01110 o=0 sz:1 1 Rm:5 11111 1 Rn:5 Rd:5 !sz=1,Q=0"),
            ("FRSQRTS_vec", "0 Q:1 0 01110 o=1 sz:1 1 Rm:5 11111 1 Rn:5 Rd:5 !sz=1,Q=0"),
        ],
        rest="0 Q:1 0 01110 o:1 sz:1 1 Rm:5 11111 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_recip_step",
        "fp_recip",
        [
            ("FRECPS_scalar", "01 0 11110 o=0 sz:1 1 Rm:5 11111 1 Rn:5 Rd:5"),
            ("FRSQRTS_scalar", "01 0 11110 o=1 sz:1 1 Rm:5 11111 1 Rn:5 Rd:5"),
        ],
    ),
    *_split(
        "SIMD_fp_across",
        "fp_across",
        [
            ("FMAXNMV", "0 Q:1 U=1 01110 a=0 sz=0 11000 011 o=00 10 Rn:5 Rd:5 !Q=0"),
            ("FMAXV", "0 Q:1 U=1 01110 a=0 sz=0 11000 011 o=11 10 Rn:5 Rd:5 !Q=0"),
            ("FMINNMV", "0 Q:1 U=1 01110 a=1 sz=0 11000 011 o=00 10 Rn:5 Rd:5 !Q=0"),
            ("FMINV", "0 Q:1 U=1 01110 a=1 sz=0 11000 011 o=11 10 Rn:5 Rd:5 !Q=0"),
            ("FMAXNMV_h", "0 Q:1 U=0 01110 a=0 sz=0 11000 011 o=00 10 Rn:5 Rd:5"),
            ("FMAXV_h", "0 Q:1 U=0 01110 a=0 sz=0 11000 011 o=11 10 Rn:5 Rd:5"),
            ("FMINNMV_h", "0 Q:1 U=0 01110 a=1 sz=0 11000 011 o=00 10 Rn:5 Rd:5"),
            ("FMINV_h", "0 Q:1 U=0 01110 a=1 sz=0 11000 011 o=11 10 Rn:5 Rd:5"),
        ],
        rest="0 Q:1 U:1 01110 a:1 sz:1 11000 011 o:2 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_three_same_fp16",
        "fp_half_vec",
        [
            (name, f"0 Q:1 U={u} 01110 a{size} 10 Rm:5 00 opcode={op} 1 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("FMAXNM_vec_h", 0, "=0", "000", ""),
                ("FMLA_vec_h", 0, "=0", "001", ""),
                ("FADD_vec_h", 0, "=0", "010", ""),
                ("FMULX_vec_h", 0, "=0", "011", ""),
                ("FCMEQ_vec_h", 0, "=0", "100", ""),
                ("FMAX_vec_h", 0, "=0", "110", ""),
                ("FRECPS_vec_h", 0, "=0", "111", ""),
                ("FMINNM_vec_h", 0, "=1", "000", ""),
                ("FMLS_vec_h", 0, "=1", "001", ""),
                ("FSUB_vec_h", 0, "=1", "010", ""),
                ("FMIN_vec_h", 0, "=1", "110", ""),
                ("FRSQRTS_vec_h", 0, "=1", "111", ""),
                ("FMAXNMP_vec_h", 1, "=0", "000", ""),
                ("FADDP_vec_h", 1, "=0", "010", ""),
                ("FMUL_vec_h", 1, "=0", "011", ""),
                ("FCMGE_vec_h", 1, "=0", "100", ""),
                ("FACGE_vec_h", 1, "=0", "101", ""),
                ("FMAXP_vec_h", 1, "=0", "110", ""),
                ("FDIV_vec_h", 1, "=0", "111", ""),
                ("FMINNMP_vec_h", 1, "=1", "000", ""),
                ("FABD_vec_h", 1, "=1", "010", ""),
                ("FCMGT_vec_h", 1, "=1", "100", ""),
                ("FACGT_vec_h", 1, "=1", "101", ""),
                ("FMINP_vec_h", 1, "=1", "110", ""),
            )
        ],
        rest="0 Q:1 U:1 01110 a:1 10 Rm:5 00 opcode:3 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_two_reg_fp16",
        "fp_half_vec",
        [
            (name, f"0 Q:1 U={u} 01110 a{size} 111100 opcode={op} 10 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("FRINTN_vec_h", 0, "=0", "11000", ""),
                ("FRINTM_vec_h", 0, "=0", "11001", ""),
                ("FCVTNS_vec_h", 0, "=0", "11010", ""),
                ("FCVTMS_vec_h", 0, "=0", "11011", ""),
                ("FCVTAS_vec_h", 0, "=0", "11100", ""),
                ("SCVTF_vec_h", 0, "=0", "11101", ""),
                ("FCMGT_zero_vec_h", 0, "=1", "01100", ""),
                ("FCMEQ_zero_vec_h", 0, "=1", "01101", ""),
                ("FCMLT_zero_vec_h", 0, "=1", "01110", ""),
                ("FABS_vec_h", 0, "=1", "01111", ""),
                ("FRINTP_vec_h", 0, "=1", "11000", ""),
                ("FRINTZ_vec_h", 0, "=1", "11001", ""),
                ("FCVTPS_vec_h", 0, "=1", "11010", ""),
                ("FCVTZS_vec_h", 0, "=1", "11011", ""),
                ("FRECPE_vec_h", 0, "=1", "11101", ""),
                ("FRINTA_vec_h", 1, "=0", "11000", ""),
                ("FRINTX_vec_h", 1, "=0", "11001", ""),
                ("FCVTNU_vec_h", 1, "=0", "11010", ""),
                ("FCVTMU_vec_h", 1, "=0", "11011", ""),
                ("FCVTAU_vec_h", 1, "=0", "11100", ""),
                ("UCVTF_vec_h", 1, "=0", "11101", ""),
                ("FCMGE_zero_vec_h", 1, "=1", "01100", ""),
                ("FCMLE_zero_vec_h", 1, "=1", "01101", ""),
                ("FNEG_vec_h", 1, "=1", "01111", ""),
                ("FRINTI_vec_h", 1, "=1", "11001", ""),
                ("FCVTPU_vec_h", 1, "=1", "11010", ""),
                ("FCVTZU_vec_h", 1, "=1", "11011", ""),
                ("FRSQRTE_vec_h", 1, "=1", "11101", ""),
                ("FSQRT_vec_h", 1, "=1", "11111", ""),
            )
        ],
        rest="0 Q:1 U:1 01110 a:1 111100 opcode:5 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_three_same_fp16",
        "fp_half_vec",
        [
            (name, f"01 U={u} 11110 a{size} 10 Rm:5 00 opcode={op} 1 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("FMULX_scalar_h", 0, "=0", "011", ""),
                ("FCMEQ_scalar_h", 0, "=0", "100", ""),
                ("FRECPS_scalar_h", 0, "=0", "111", ""),
                ("FRSQRTS_scalar_h", 0, "=1", "111", ""),
                ("FCMGE_scalar_h", 1, "=0", "100", ""),
                ("FACGE_scalar_h", 1, "=0", "101", ""),
                ("FABD_scalar_h", 1, "=1", "010", ""),
                ("FCMGT_scalar_h", 1, "=1", "100", ""),
                ("FACGT_scalar_h", 1, "=1", "101", ""),
            )
        ],
        rest="01 U:1 11110 a:1 10 Rm:5 00 opcode:3 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_two_reg_fp16",
        "fp_half_vec",
        [
            (name, f"01 U={u} 11110 a{size} 111100 opcode={op} 10 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("FCVTNS_scalar_h", 0, "=0", "11010", ""),
                ("FCVTMS_scalar_h", 0, "=0", "11011", ""),
                ("FCVTAS_scalar_h", 0, "=0", "11100", ""),
                ("SCVTF_scalar_h", 0, "=0", "11101", ""),
                ("FCMGT_zero_scalar_h", 0, "=1", "01100", ""),
                ("FCMEQ_zero_scalar_h", 0, "=1", "01101", ""),
                ("FCMLT_zero_scalar_h", 0, "=1", "01110", ""),
                ("FCVTPS_scalar_h", 0, "=1", "11010", ""),
                ("FCVTZS_scalar_h", 0, "=1", "11011", ""),
                ("FRECPE_scalar_h", 0, "=1", "11101", ""),
                ("FRECPX_scalar_h", 0, "=1", "11111", ""),
                ("FCVTNU_scalar_h", 1, "=0", "11010", ""),
                ("FCVTMU_scalar_h", 1, "=0", "11011", ""),
                ("FCVTAU_scalar_h", 1, "=0", "11100", ""),
                ("UCVTF_scalar_h", 1, "=0", "11101", ""),
                ("FCMGE_zero_scalar_h", 1, "=1", "01100", ""),
                ("FCMLE_zero_scalar_h", 1, "=1", "01101", ""),
                ("FCVTPU_scalar_h", 1, "=1", "11010", ""),
                ("FCVTZU_scalar_h", 1, "=1", "11011", ""),
                ("FRSQRTE_scalar_h", 1, "=1", "11101", ""),
            )
        ],
        rest="01 U:1 11110 a:1 111100 opcode:5 10 Rn:5 Rd:5",
    ),
    *_split("SIMD_movi", "simd_imm", _modimm_rows(), rest=_MODIMM.format(Q="Q:1", op="op:1", cmode="cmode:4", o2="o2:1")),
    *_split(
        "SIMD_shift_ins",
        "simd_shift_ins",
        [
            ("SRI_vec", "0 Q:1 1 011110 immh:4 immb:3 010 op=0 0 1 Rn:5 Rd:5 !immh=1xxx,Q=0"),
            ("SLI_vec", "0 Q:1 1 011110 immh:4 immb:3 010 op=1 0 1 Rn:5 Rd:5 !immh=1xxx,Q=0"),
        ],
        rest="0 Q:1 1 011110 immh:4 immb:3 010 op:1 0 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_shift_ins",
        "simd_shift_ins",
        [
            ("SRI_scalar", "01 1 111110 immh:4 immb:3 010 op=0 0 1 Rn:5 Rd:5 !immh=0xxx"),
            ("SLI_scalar", "01 1 111110 immh:4 immb:3 010 op=1 0 1 Rn:5 Rd:5 !immh=0xxx"),
        ],
        rest="01 1 111110 immh:4 immb:3 010 op:1 0 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_shift_imm",
        "simd_shift",
        [
            (name, f"0 Q:1 U={u} 011110 immh:4 immb:3 opcode={op} 1 Rn:5 Rd:5 {reserved}")
            for name, u, op, reserved in (
                ("SSHR_vec", 0, "00000", "!immh=1xxx,Q=0"),
                ("SSRA_vec", 0, "00010", "!immh=1xxx,Q=0"),
                ("SRSHR_vec", 0, "00100", "!immh=1xxx,Q=0"),
                ("SRSRA_vec", 0, "00110", "!immh=1xxx,Q=0"),
                ("SHL_vec", 0, "01010", "!immh=1xxx,Q=0"),
                ("SQSHL_imm_vec", 0, "01110", "!immh=1xxx,Q=0"),
                ("SHRN_vec", 0, "10000", "!immh=1xxx"),
                ("RSHRN_vec", 0, "10001", "!immh=1xxx"),
                ("SQSHRN_vec", 0, "10010", "!immh=1xxx"),
                ("SQRSHRN_vec", 0, "10011", "!immh=1xxx"),
                ("SSHLL_vec", 0, "10100", "!immh=1xxx"),
                ("SCVTF_fix_vec", 0, "11100", "!immh=000x !immh=1xxx,Q=0"),
                ("FCVTZS_fix_vec", 0, "11111", "!immh=000x !immh=1xxx,Q=0"),
                ("USHR_vec", 1, "00000", "!immh=1xxx,Q=0"),
                ("USRA_vec", 1, "00010", "!immh=1xxx,Q=0"),
                ("URSHR_vec", 1, "00100", "!immh=1xxx,Q=0"),
                ("URSRA_vec", 1, "00110", "!immh=1xxx,Q=0"),
                ("SQSHLU_vec", 1, "01100", "!immh=1xxx,Q=0"),
                ("UQSHL_imm_vec", 1, "01110", "!immh=1xxx,Q=0"),
                ("SQSHRUN_vec", 1, "10000", "!immh=1xxx"),
                ("SQRSHRUN_vec", 1, "10001", "!immh=1xxx"),
                ("UQSHRN_vec", 1, "10010", "!immh=1xxx"),
                ("UQRSHRN_vec", 1, "10011", "!immh=1xxx"),
                ("USHLL_vec", 1, "10100", "!immh=1xxx"),
                ("UCVTF_fix_vec", 1, "11100", "!immh=000x !immh=1xxx,Q=0"),
                ("FCVTZU_fix_vec", 1, "11111", "!immh=000x !immh=1xxx,Q=0"),
            )
        ],
        rest="0 Q:1 U:1 011110 immh:4 immb:3 opcode:5 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_copy",
        "simd_copy",
        [
            ("DUP_elem", "0 Q:1 op=0 01110000 imm5:5 0 imm4=0000 1 Rn:5 Rd:5 !imm5=x0000 !imm5=x1000,Q=0"),
            ("DUP_gen", "0 Q:1 op=0 01110000 imm5:5 0 imm4=0001 1 Rn:5 Rd:5 !imm5=x0000 !imm5=x1000,Q=0"),
            ("INS_gen", "0 Q=1 op=0 01110000 imm5:5 0 imm4=0011 1 Rn:5 Rd:5 !imm5=x0000"),
            ("SMOV", "0 Q:1 op=0 01110000 imm5:5 0 imm4=0101 1 Rn:5 Rd:5 !imm5=x0000 !imm5=x1000 !imm5=xx100,Q=0"),
            (
                "UMOV",
                "0 Q:1 op=0 01110000 imm5:5 0 imm4=0111 1 Rn:5 Rd:5 !imm5=x0000 !imm5=x1000,Q=0 !imm5=xxxx1,Q=1 !imm5=xxx10,Q=1 !imm5=xx100,Q=1",
            ),
            ("INS_elem", "0 Q=1 op=1 01110000 imm5:5 0 imm4:4 1 Rn:5 Rd:5 !imm5=x0000"),
        ],
        rest="0 Q:1 op:1 01110000 imm5:5 0 imm4:4 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_dot",
        "simd_dot",
        [
            ("SDOT_vec", "0 Q:1 U=0 01110 10 0 Rm:5 1 0010 1 Rn:5 Rd:5"),
            ("UDOT_vec", "0 Q:1 U=1 01110 10 0 Rm:5 1 0010 1 Rn:5 Rd:5"),
        ],
    ),
    *_split(
        "SIMD_rdm",
        "simd_rdm",
        [
            ("SQRDMLAH_vec", "0 Q:1 1 01110 size:2 0 Rm:5 1 000 S=0 1 Rn:5 Rd:5 !size=00 !size=11"),
            ("SQRDMLSH_vec", "0 Q:1 1 01110 size:2 0 Rm:5 1 000 S=1 1 Rn:5 Rd:5 !size=00 !size=11"),
        ],
        rest="0 Q:1 1 01110 size:2 0 Rm:5 1 000 S:1 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_rdm",
        "simd_rdm",
        [
            ("SQRDMLAH_scalar", "01 1 11110 size:2 0 Rm:5 1 000 S=0 1 Rn:5 Rd:5 !size=00 !size=11"),
            ("SQRDMLSH_scalar", "01 1 11110 size:2 0 Rm:5 1 000 S=1 1 Rn:5 Rd:5 !size=00 !size=11"),
        ],
        rest="01 1 11110 size:2 0 Rm:5 1 000 S:1 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_three_same",
        "simd_3same",
        [
            (name, f"0 Q:1 U={u} 01110 size{size} 1 Rm:5 opcode={op} 1 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("SHADD_vec", 0, ":2", "00000", "!size=11"),
                ("SQADD_vec", 0, ":2", "00001", "!size=11,Q=0"),
                ("SRHADD_vec", 0, ":2", "00010", "!size=11"),
                ("AND_vec", 0, "=00", "00011", ""),
                ("BIC_vec", 0, "=01", "00011", ""),
                ("ORR_vec", 0, "=10", "00011", ""),
                ("ORN_vec", 0, "=11", "00011", ""),
                ("SHSUB_vec", 0, ":2", "00100", "!size=11"),
                ("SQSUB_vec", 0, ":2", "00101", "!size=11,Q=0"),
                ("CMGT_vec", 0, ":2", "00110", "!size=11,Q=0"),
                ("CMGE_vec", 0, ":2", "00111", "!size=11,Q=0"),
                ("SSHL_vec", 0, ":2", "01000", "!size=11,Q=0"),
                ("SQSHL_vec", 0, ":2", "01001", "!size=11,Q=0"),
                ("SRSHL_vec", 0, ":2", "01010", "!size=11,Q=0"),
                ("SQRSHL_vec", 0, ":2", "01011", "!size=11,Q=0"),
                ("SMAX_vec", 0, ":2", "01100", "!size=11"),
                ("SMIN_vec", 0, ":2", "01101", "!size=11"),
                ("SABD_vec", 0, ":2", "01110", "!size=11"),
                ("SABA_vec", 0, ":2", "01111", "!size=11"),
                ("ADD_vec", 0, ":2", "10000", "!size=11,Q=0"),
                ("CMTST_vec", 0, ":2", "10001", "!size=11,Q=0"),
                ("MLA_vec", 0, ":2", "10010", "!size=11"),
                ("MUL_vec", 0, ":2", "10011", "!size=11"),
                ("SMAXP_vec", 0, ":2", "10100", "!size=11"),
                ("SMINP_vec", 0, ":2", "10101", "!size=11"),
                ("SQDMULH_vec", 0, ":2", "10110", "!size=00 !size=11"),
                ("ADDP_vec", 0, ":2", "10111", "!size=11,Q=0"),
                ("FMAXNM_vec", 0, "=0x", "11000", "!size=x1,Q=0"),
                ("FMLA_vec", 0, "=0x", "11001", "!size=x1,Q=0"),
                ("FADD_vec", 0, "=0x", "11010", "!size=x1,Q=0"),
                ("FMULX_vec", 0, "=0x", "11011", "!size=x1,Q=0"),
                ("FCMEQ_vec", 0, "=0x", "11100", "!size=x1,Q=0"),
                ("FMAX_vec", 0, "=0x", "11110", "!size=x1,Q=0"),
                ("FMINNM_vec", 0, "=1x", "11000", "!size=x1,Q=0"),
                ("FMLS_vec", 0, "=1x", "11001", "!size=x1,Q=0"),
                ("FSUB_vec", 0, "=1x", "11010", "!size=x1,Q=0"),
                ("FMIN_vec", 0, "=1x", "11110", "!size=x1,Q=0"),
                ("UHADD_vec", 1, ":2", "00000", "!size=11"),
                ("UQADD_vec", 1, ":2", "00001", "!size=11,Q=0"),
                ("URHADD_vec", 1, ":2", "00010", "!size=11"),
                ("EOR_vec", 1, "=00", "00011", ""),
                ("BSL_vec", 1, "=01", "00011", ""),
                ("BIT_vec", 1, "=10", "00011", ""),
                ("BIF_vec", 1, "=11", "00011", ""),
                ("UHSUB_vec", 1, ":2", "00100", "!size=11"),
                ("UQSUB_vec", 1, ":2", "00101", "!size=11,Q=0"),
                ("CMHI_vec", 1, ":2", "00110", "!size=11,Q=0"),
                ("CMHS_vec", 1, ":2", "00111", "!size=11,Q=0"),
                ("USHL_vec", 1, ":2", "01000", "!size=11,Q=0"),
                ("UQSHL_vec", 1, ":2", "01001", "!size=11,Q=0"),
                ("URSHL_vec", 1, ":2", "01010", "!size=11,Q=0"),
                ("UQRSHL_vec", 1, ":2", "01011", "!size=11,Q=0"),
                ("UMAX_vec", 1, ":2", "01100", "!size=11"),
                ("UMIN_vec", 1, ":2", "01101", "!size=11"),
                ("UABD_vec", 1, ":2", "01110", "!size=11"),
                ("UABA_vec", 1, ":2", "01111", "!size=11"),
                ("SUB_vec", 1, ":2", "10000", "!size=11,Q=0"),
                ("CMEQ_vec", 1, ":2", "10001", "!size=11,Q=0"),
                ("MLS_vec", 1, ":2", "10010", "!size=11"),
                ("PMUL_vec", 1, "=00", "10011", ""),
                ("UMAXP_vec", 1, ":2", "10100", "!size=11"),
                ("UMINP_vec", 1, ":2", "10101", "!size=11"),
                ("SQRDMULH_vec", 1, ":2", "10110", "!size=00 !size=11"),
                ("FMAXNMP_vec", 1, "=0x", "11000", "!size=x1,Q=0"),
                ("FADDP_vec", 1, "=0x", "11010", "!size=x1,Q=0"),
                ("FMUL_vec", 1, "=0x", "11011", "!size=x1,Q=0"),
                ("FCMGE_vec", 1, "=0x", "11100", "!size=x1,Q=0"),
                ("FACGE_vec", 1, "=0x", "11101", "!size=x1,Q=0"),
                ("FMAXP_vec", 1, "=0x", "11110", "!size=x1,Q=0"),
                ("FDIV_vec", 1, "=0x", "11111", "!size=x1,Q=0"),
                ("FMINNMP_vec", 1, "=1x", "11000", "!size=x1,Q=0"),
                ("FABD_vec", 1, "=1x", "11010", "!size=x1,Q=0"),
                ("FCMGT_vec", 1, "=1x", "11100", "!size=x1,Q=0"),
                ("FACGT_vec", 1, "=1x", "11101", "!size=x1,Q=0"),
                ("FMINP_vec", 1, "=1x", "11110", "!size=x1,Q=0"),
            )
        ],
        rest="0 Q:1 U:1 01110 size:2 1 Rm:5 opcode:5 1 Rn:5 Rd:5",
    ),
    *_split(  # size 00: 8-bit polynomials, 11: 64-bit (FEAT_PMULL); 01 and 10 reserved
        "PMULL",
        "crypto_pmull",
        [("PMULL", "0 Q:1 0 01110 size:2 1 Rm:5 1110 00 Rn:5 Rd:5 !size=01 !size=10")],
        rest="0 Q:1 0 01110 size:2 1 Rm:5 1110 00 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_three_diff",
        "simd_3diff",
        [
            (name, f"0 Q:1 U={u} 01110 size{size} 1 Rm:5 opcode={op} 00 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("SADDL_vec", 0, ":2", "0000", "!size=11"),
                ("SADDW_vec", 0, ":2", "0001", "!size=11"),
                ("SSUBL_vec", 0, ":2", "0010", "!size=11"),
                ("SSUBW_vec", 0, ":2", "0011", "!size=11"),
                ("ADDHN_vec", 0, ":2", "0100", "!size=11"),
                ("SABAL_vec", 0, ":2", "0101", "!size=11"),
                ("SUBHN_vec", 0, ":2", "0110", "!size=11"),
                ("SABDL_vec", 0, ":2", "0111", "!size=11"),
                ("SMLAL_vec", 0, ":2", "1000", "!size=11"),
                ("SQDMLAL_vec", 0, ":2", "1001", "!size=00 !size=11"),
                ("SMLSL_vec", 0, ":2", "1010", "!size=11"),
                ("SQDMLSL_vec", 0, ":2", "1011", "!size=00 !size=11"),
                ("SMULL_vec", 0, ":2", "1100", "!size=11"),
                ("SQDMULL_vec", 0, ":2", "1101", "!size=00 !size=11"),
                ("UADDL_vec", 1, ":2", "0000", "!size=11"),
                ("UADDW_vec", 1, ":2", "0001", "!size=11"),
                ("USUBL_vec", 1, ":2", "0010", "!size=11"),
                ("USUBW_vec", 1, ":2", "0011", "!size=11"),
                ("RADDHN_vec", 1, ":2", "0100", "!size=11"),
                ("UABAL_vec", 1, ":2", "0101", "!size=11"),
                ("RSUBHN_vec", 1, ":2", "0110", "!size=11"),
                ("UABDL_vec", 1, ":2", "0111", "!size=11"),
                ("UMLAL_vec", 1, ":2", "1000", "!size=11"),
                ("UMLSL_vec", 1, ":2", "1010", "!size=11"),
                ("UMULL_vec", 1, ":2", "1100", "!size=11"),
            )
        ],
        rest="0 Q:1 U:1 01110 size:2 1 Rm:5 opcode:4 00 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_bitcount",
        "simd_bitcount",
        [
            ("CNT_vec", "0 Q:1 U=0 01110 size=00 10000 00101 10 Rn:5 Rd:5"),
            ("NOT_vec", "0 Q:1 U=1 01110 size=00 10000 00101 10 Rn:5 Rd:5"),
            ("RBIT_vec", "0 Q:1 U=1 01110 size=01 10000 00101 10 Rn:5 Rd:5"),
        ],
        rest="0 Q:1 U:1 01110 size:2 10000 00101 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_addlp",
        "simd_pairlong",
        [
            ("SADDLP", "0 Q:1 U=0 01110 size:2 10000 00 op=0 10 10 Rn:5 Rd:5 !size=11"),
            ("UADDLP", "0 Q:1 U=1 01110 size:2 10000 00 op=0 10 10 Rn:5 Rd:5 !size=11"),
            ("SADALP", "0 Q:1 U=0 01110 size:2 10000 00 op=1 10 10 Rn:5 Rd:5 !size=11"),
            ("UADALP", "0 Q:1 U=1 01110 size:2 10000 00 op=1 10 10 Rn:5 Rd:5 !size=11"),
        ],
        rest="0 Q:1 U:1 01110 size:2 10000 00 op:1 10 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_two_reg",
        "simd_2reg",
        [
            (name, f"0 Q:1 U={u} 01110 size{size} 10000 opcode={op} 10 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("REV64_vec", 0, ":2", "00000", "!size=11"),
                ("REV16_vec", 0, "=00", "00001", ""),
                ("SUQADD_vec", 0, ":2", "00011", "!size=11,Q=0"),
                ("CLS_vec", 0, ":2", "00100", "!size=11"),
                ("SQABS_vec", 0, ":2", "00111", "!size=11,Q=0"),
                ("CMGT_zero_vec", 0, ":2", "01000", "!size=11,Q=0"),
                ("CMEQ_zero_vec", 0, ":2", "01001", "!size=11,Q=0"),
                ("CMLT_zero_vec", 0, ":2", "01010", "!size=11,Q=0"),
                ("ABS_vec", 0, ":2", "01011", "!size=11,Q=0"),
                ("XTN_vec", 0, ":2", "10010", "!size=11"),
                ("SQXTN_vec", 0, ":2", "10100", "!size=11"),
                ("FRINTN_vec", 0, "=0x", "11000", "!size=x1,Q=0"),
                ("FRINTM_vec", 0, "=0x", "11001", "!size=x1,Q=0"),
                ("FCVTNS_vec", 0, "=0x", "11010", "!size=x1,Q=0"),
                ("FCVTMS_vec", 0, "=0x", "11011", "!size=x1,Q=0"),
                ("FCVTAS_vec", 0, "=0x", "11100", "!size=x1,Q=0"),
                ("SCVTF_vec", 0, "=0x", "11101", "!size=x1,Q=0"),
                ("FCMGT_zero_vec", 0, "=1x", "01100", "!size=x1,Q=0"),
                ("FCMEQ_zero_vec", 0, "=1x", "01101", "!size=x1,Q=0"),
                ("FCMLT_zero_vec", 0, "=1x", "01110", "!size=x1,Q=0"),
                ("FABS_vec", 0, "=1x", "01111", "!size=x1,Q=0"),
                ("FRINTP_vec", 0, "=1x", "11000", "!size=x1,Q=0"),
                ("FRINTZ_vec", 0, "=1x", "11001", "!size=x1,Q=0"),
                ("FCVTPS_vec", 0, "=1x", "11010", "!size=x1,Q=0"),
                ("FCVTZS_vec", 0, "=1x", "11011", "!size=x1,Q=0"),
                ("REV32_vec", 1, ":2", "00000", "!size=1x"),
                ("USQADD_vec", 1, ":2", "00011", "!size=11,Q=0"),
                ("CLZ_vec", 1, ":2", "00100", "!size=11"),
                ("SQNEG_vec", 1, ":2", "00111", "!size=11,Q=0"),
                ("CMGE_zero_vec", 1, ":2", "01000", "!size=11,Q=0"),
                ("CMLE_zero_vec", 1, ":2", "01001", "!size=11,Q=0"),
                ("NEG_vec", 1, ":2", "01011", "!size=11,Q=0"),
                ("SQXTUN_vec", 1, ":2", "10010", "!size=11"),
                ("UQXTN_vec", 1, ":2", "10100", "!size=11"),
                ("FRINTA_vec", 1, "=0x", "11000", "!size=x1,Q=0"),
                ("FRINTX_vec", 1, "=0x", "11001", "!size=x1,Q=0"),
                ("FCVTNU_vec", 1, "=0x", "11010", "!size=x1,Q=0"),
                ("FCVTMU_vec", 1, "=0x", "11011", "!size=x1,Q=0"),
                ("FCVTAU_vec", 1, "=0x", "11100", "!size=x1,Q=0"),
                ("UCVTF_vec", 1, "=0x", "11101", "!size=x1,Q=0"),
                ("FCMGE_zero_vec", 1, "=1x", "01100", "!size=x1,Q=0"),
                ("FCMLE_zero_vec", 1, "=1x", "01101", "!size=x1,Q=0"),
                ("FNEG_vec", 1, "=1x", "01111", "!size=x1,Q=0"),
                ("FRINTI_vec", 1, "=1x", "11001", "!size=x1,Q=0"),
                ("FCVTPU_vec", 1, "=1x", "11010", "!size=x1,Q=0"),
                ("FCVTZU_vec", 1, "=1x", "11011", "!size=x1,Q=0"),
                ("FSQRT_vec", 1, "=1x", "11111", "!size=x1,Q=0"),
            )
        ],
        rest="0 Q:1 U:1 01110 size:2 10000 opcode:5 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_across",
        "simd_across",
        [
            (name, f"0 Q:1 U={u} 01110 size{size} 11000 opcode={op} 10 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("SADDLV", 0, ":2", "00011", "!size=10,Q=0 !size=11"),
                ("SMAXV", 0, ":2", "01010", "!size=10,Q=0 !size=11"),
                ("SMINV", 0, ":2", "11010", "!size=10,Q=0 !size=11"),
                ("ADDV", 0, ":2", "11011", "!size=10,Q=0 !size=11"),
                ("UADDLV", 1, ":2", "00011", "!size=10,Q=0 !size=11"),
                ("UMAXV", 1, ":2", "01010", "!size=10,Q=0 !size=11"),
                ("UMINV", 1, ":2", "11010", "!size=10,Q=0 !size=11"),
            )
        ],
        rest="0 Q:1 U:1 01110 size:2 11000 opcode:5 10 Rn:5 Rd:5",
    ),
    *_split(  # EXT: Q = 0 with imm4<3> = 1 reserved
        "SIMD_ext",
        "simd_perm",
        [("SIMD_ext", "0 Q:1 101110 00 0 Rm:5 0 imm4:4 0 Rn:5 Rd:5 !Q=0,imm4=1xxx")],
        rest="0 Q:1 101110 00 0 Rm:5 0 imm4:4 0 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_tbl",
        "simd_perm",
        [
            ("TBL", "0 Q:1 001110 00 0 Rm:5 0 len:2 op=0 00 Rn:5 Rd:5"),
            ("TBX", "0 Q:1 001110 00 0 Rm:5 0 len:2 op=1 00 Rn:5 Rd:5"),
        ],
    ),
    *_split(
        "SIMD_perm",
        "simd_perm",
        [
            ("UZP1", "0 Q:1 001110 size:2 0 Rm:5 0 opcode=001 10 Rn:5 Rd:5 !size=11,Q=0"),
            ("TRN1", "0 Q:1 001110 size:2 0 Rm:5 0 opcode=010 10 Rn:5 Rd:5 !size=11,Q=0"),
            ("ZIP1", "0 Q:1 001110 size:2 0 Rm:5 0 opcode=011 10 Rn:5 Rd:5 !size=11,Q=0"),
            ("UZP2", "0 Q:1 001110 size:2 0 Rm:5 0 opcode=101 10 Rn:5 Rd:5 !size=11,Q=0"),
            ("TRN2", "0 Q:1 001110 size:2 0 Rm:5 0 opcode=110 10 Rn:5 Rd:5 !size=11,Q=0"),
            ("ZIP2", "0 Q:1 001110 size:2 0 Rm:5 0 opcode=111 10 Rn:5 Rd:5 !size=11,Q=0"),
        ],
        rest="0 Q:1 001110 size:2 0 Rm:5 0 opcode:3 10 Rn:5 Rd:5",
    ),
    *_split(  # DUP (element), scalar: imm5 = x0000 reserved (no element size)
        "SIMD_scalar_copy",
        "simd_copy",
        [("SIMD_scalar_copy", "01 0 11110000 imm5:5 0 0000 1 Rn:5 Rd:5 !imm5=x0000")],
        rest="01 0 11110000 imm5:5 0 0000 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_pair",
        "simd_across",
        [
            (name, f"01 U={u} 11110 size{size} 11000 opcode={op} 10 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("ADDP_scalar", 0, "=11", "11011", ""),
                ("FMAXNMP_scalar_h", 0, "=00", "01100", ""),
                ("FADDP_scalar_h", 0, "=00", "01101", ""),
                ("FMAXP_scalar_h", 0, "=00", "01111", ""),
                ("FMINNMP_scalar_h", 0, "=10", "01100", ""),
                ("FMINP_scalar_h", 0, "=10", "01111", ""),
                ("FMAXNMP_scalar", 1, "=0x", "01100", ""),
                ("FADDP_scalar", 1, "=0x", "01101", ""),
                ("FMAXP_scalar", 1, "=0x", "01111", ""),
                ("FMINNMP_scalar", 1, "=1x", "01100", ""),
                ("FMINP_scalar", 1, "=1x", "01111", ""),
            )
        ],
        rest="01 U:1 11110 size:2 11000 opcode:5 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_three_same",
        "simd_3same",
        [
            (name, f"01 U={u} 11110 size{size} 1 Rm:5 opcode={op} 1 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("SQADD_scalar", 0, ":2", "00001", ""),
                ("SQSUB_scalar", 0, ":2", "00101", ""),
                ("CMGT_scalar", 0, "=11", "00110", ""),
                ("CMGE_scalar", 0, "=11", "00111", ""),
                ("SSHL_scalar", 0, "=11", "01000", ""),
                ("SQSHL_scalar", 0, ":2", "01001", ""),
                ("SRSHL_scalar", 0, "=11", "01010", ""),
                ("SQRSHL_scalar", 0, ":2", "01011", ""),
                ("ADD_scalar", 0, "=11", "10000", ""),
                ("CMTST_scalar", 0, "=11", "10001", ""),
                ("SQDMULH_scalar", 0, ":2", "10110", "!size=00 !size=11"),
                ("FMULX_scalar", 0, "=0x", "11011", ""),
                ("FCMEQ_scalar", 0, "=0x", "11100", ""),
                ("UQADD_scalar", 1, ":2", "00001", ""),
                ("UQSUB_scalar", 1, ":2", "00101", ""),
                ("CMHI_scalar", 1, "=11", "00110", ""),
                ("CMHS_scalar", 1, "=11", "00111", ""),
                ("USHL_scalar", 1, "=11", "01000", ""),
                ("UQSHL_scalar", 1, ":2", "01001", ""),
                ("URSHL_scalar", 1, "=11", "01010", ""),
                ("UQRSHL_scalar", 1, ":2", "01011", ""),
                ("SUB_scalar", 1, "=11", "10000", ""),
                ("CMEQ_scalar", 1, "=11", "10001", ""),
                ("SQRDMULH_scalar", 1, ":2", "10110", "!size=00 !size=11"),
                ("FCMGE_scalar", 1, "=0x", "11100", ""),
                ("FACGE_scalar", 1, "=0x", "11101", ""),
                ("FABD_scalar", 1, "=1x", "11010", ""),
                ("FCMGT_scalar", 1, "=1x", "11100", ""),
                ("FACGT_scalar", 1, "=1x", "11101", ""),
            )
        ],
        rest="01 U:1 11110 size:2 1 Rm:5 opcode:5 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_three_diff",
        "simd_3diff",
        [
            (name, f"01 U={u} 11110 size{size} 1 Rm:5 opcode={op} 00 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("SQDMLAL_scalar", 0, ":2", "1001", "!size=00 !size=11"),
                ("SQDMLSL_scalar", 0, ":2", "1011", "!size=00 !size=11"),
                ("SQDMULL_scalar", 0, ":2", "1101", "!size=00 !size=11"),
            )
        ],
        rest="01 U:1 11110 size:2 1 Rm:5 opcode:4 00 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_two_reg",
        "simd_2reg",
        [
            (name, f"01 U={u} 11110 size{size} 10000 opcode={op} 10 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("SUQADD_scalar", 0, ":2", "00011", ""),
                ("SQABS_scalar", 0, ":2", "00111", ""),
                ("CMGT_zero_scalar", 0, "=11", "01000", ""),
                ("CMEQ_zero_scalar", 0, "=11", "01001", ""),
                ("CMLT_zero_scalar", 0, "=11", "01010", ""),
                ("SQXTN_scalar", 0, ":2", "10100", "!size=11"),
                ("FCVTNS_scalar", 0, "=0x", "11010", ""),
                ("FCVTMS_scalar", 0, "=0x", "11011", ""),
                ("FCVTAS_scalar", 0, "=0x", "11100", ""),
                ("SCVTF_scalar", 0, "=0x", "11101", ""),
                ("FCMGT_zero_scalar", 0, "=1x", "01100", ""),
                ("FCMEQ_zero_scalar", 0, "=1x", "01101", ""),
                ("FCMLT_zero_scalar", 0, "=1x", "01110", ""),
                ("FCVTPS_scalar", 0, "=1x", "11010", ""),
                ("FCVTZS_scalar", 0, "=1x", "11011", ""),
                ("USQADD_scalar", 1, ":2", "00011", ""),
                ("SQNEG_scalar", 1, ":2", "00111", ""),
                ("CMGE_zero_scalar", 1, "=11", "01000", ""),
                ("NEG_scalar", 1, "=11", "01011", ""),
                ("SQXTUN_scalar", 1, ":2", "10010", "!size=11"),
                ("UQXTN_scalar", 1, ":2", "10100", "!size=11"),
                ("FCVTNU_scalar", 1, "=0x", "11010", ""),
                ("FCVTMU_scalar", 1, "=0x", "11011", ""),
                ("FCVTAU_scalar", 1, "=0x", "11100", ""),
                ("UCVTF_scalar", 1, "=0x", "11101", ""),
                ("FCMGE_zero_scalar", 1, "=1x", "01100", ""),
                ("FCMLE_zero_scalar", 1, "=1x", "01101", ""),
                ("FCVTPU_scalar", 1, "=1x", "11010", ""),
                ("FCVTZU_scalar", 1, "=1x", "11011", ""),
            )
        ],
        rest="01 U:1 11110 size:2 10000 opcode:5 10 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_shift_imm",
        "simd_shift",
        [
            (name, f"01 U={u} 111110 immh:4 immb:3 opcode={op} 1 Rn:5 Rd:5 {reserved}")
            for name, u, op, reserved in (
                ("SSHR_scalar", 0, "00000", "!immh=0xxx"),
                ("SSRA_scalar", 0, "00010", "!immh=0xxx"),
                ("SRSHR_scalar", 0, "00100", "!immh=0xxx"),
                ("SRSRA_scalar", 0, "00110", "!immh=0xxx"),
                ("SHL_scalar", 0, "01010", "!immh=0xxx"),
                ("SQSHL_imm_scalar", 0, "01110", "!immh=0000"),
                ("SQSHRN_scalar", 0, "10010", "!immh=0000 !immh=1xxx"),
                ("SQRSHRN_scalar", 0, "10011", "!immh=0000 !immh=1xxx"),
                ("SCVTF_fix_scalar", 0, "11100", "!immh=000x"),
                ("FCVTZS_fix_scalar", 0, "11111", "!immh=000x"),
                ("USHR_scalar", 1, "00000", "!immh=0xxx"),
                ("USRA_scalar", 1, "00010", "!immh=0xxx"),
                ("URSHR_scalar", 1, "00100", "!immh=0xxx"),
                ("URSRA_scalar", 1, "00110", "!immh=0xxx"),
                ("SQSHLU_scalar", 1, "01100", "!immh=0000"),
                ("UQSHL_imm_scalar", 1, "01110", "!immh=0000"),
                ("SQSHRUN_scalar", 1, "10000", "!immh=0000 !immh=1xxx"),
                ("SQRSHRUN_scalar", 1, "10001", "!immh=0000 !immh=1xxx"),
                ("UQSHRN_scalar", 1, "10010", "!immh=0000 !immh=1xxx"),
                ("UQRSHRN_scalar", 1, "10011", "!immh=0000 !immh=1xxx"),
                ("UCVTF_fix_scalar", 1, "11100", "!immh=000x"),
                ("FCVTZU_fix_scalar", 1, "11111", "!immh=000x"),
            )
        ],
        rest="01 U:1 111110 immh:4 immb:3 opcode:5 1 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_dot_elem",
        "simd_dot",
        [
            ("SDOT_elem", "0 Q:1 U=0 01111 10 L:1 M:1 Rm:4 1110 H:1 0 Rn:5 Rd:5"),
            ("UDOT_elem", "0 Q:1 U=1 01111 10 L:1 M:1 Rm:4 1110 H:1 0 Rn:5 Rd:5"),
        ],
    ),
    *_split(
        "SIMD_elem",
        "simd_elem",
        [
            (name, f"0 Q:1 U={u} 01111 size{size} L:1 M:1 Rm:4 opcode={op} H:1 0 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("FMLA_elem", 0, ":2", "0001", "!size=01 !size=11,L=1 !size=11,Q=0"),
                ("SMLAL_elem", 0, ":2", "0010", "!size=00 !size=11"),
                ("SQDMLAL_elem", 0, ":2", "0011", "!size=00 !size=11"),
                ("FMLS_elem", 0, ":2", "0101", "!size=01 !size=11,L=1 !size=11,Q=0"),
                ("SMLSL_elem", 0, ":2", "0110", "!size=00 !size=11"),
                ("SQDMLSL_elem", 0, ":2", "0111", "!size=00 !size=11"),
                ("MUL_elem", 0, ":2", "1000", "!size=00 !size=11"),
                ("FMUL_elem", 0, ":2", "1001", "!size=01 !size=11,L=1 !size=11,Q=0"),
                ("SMULL_elem", 0, ":2", "1010", "!size=00 !size=11"),
                ("SQDMULL_elem", 0, ":2", "1011", "!size=00 !size=11"),
                ("SQDMULH_elem", 0, ":2", "1100", "!size=00 !size=11"),
                ("SQRDMULH_elem", 0, ":2", "1101", "!size=00 !size=11"),
                ("MLA_elem", 1, ":2", "0000", "!size=00 !size=11"),
                ("UMLAL_elem", 1, ":2", "0010", "!size=00 !size=11"),
                ("MLS_elem", 1, ":2", "0100", "!size=00 !size=11"),
                ("UMLSL_elem", 1, ":2", "0110", "!size=00 !size=11"),
                ("FMULX_elem", 1, ":2", "1001", "!size=01 !size=11,L=1 !size=11,Q=0"),
                ("UMULL_elem", 1, ":2", "1010", "!size=00 !size=11"),
                ("SQRDMLAH_elem", 1, ":2", "1101", "!size=00 !size=11"),
                ("SQRDMLSH_elem", 1, ":2", "1111", "!size=00 !size=11"),
            )
        ],
        rest="0 Q:1 U:1 01111 size:2 L:1 M:1 Rm:4 opcode:4 H:1 0 Rn:5 Rd:5",
    ),
    *_split(
        "SIMD_scalar_elem",
        "simd_elem",
        [
            (name, f"01 U={u} 11111 size{size} L:1 M:1 Rm:4 opcode={op} H:1 0 Rn:5 Rd:5 {reserved}")
            for name, u, size, op, reserved in (
                ("FMLA_elem_scalar", 0, ":2", "0001", "!size=01 !size=11,L=1"),
                ("SQDMLAL_elem_scalar", 0, ":2", "0011", "!size=00 !size=11"),
                ("FMLS_elem_scalar", 0, ":2", "0101", "!size=01 !size=11,L=1"),
                ("SQDMLSL_elem_scalar", 0, ":2", "0111", "!size=00 !size=11"),
                ("FMUL_elem_scalar", 0, ":2", "1001", "!size=01 !size=11,L=1"),
                ("SQDMULL_elem_scalar", 0, ":2", "1011", "!size=00 !size=11"),
                ("SQDMULH_elem_scalar", 0, ":2", "1100", "!size=00 !size=11"),
                ("SQRDMULH_elem_scalar", 0, ":2", "1101", "!size=00 !size=11"),
                ("FMULX_elem_scalar", 1, ":2", "1001", "!size=01 !size=11,L=1"),
                ("SQRDMLAH_elem_scalar", 1, ":2", "1101", "!size=00 !size=11"),
                ("SQRDMLSH_elem_scalar", 1, ":2", "1111", "!size=00 !size=11"),
            )
        ],
        rest="01 U:1 11111 size:2 L:1 M:1 Rm:4 opcode:4 H:1 0 Rn:5 Rd:5",
    ),
    # ---- cryptography extension ----
    *_split(
        "AES",
        "crypto_aes",
        [
            ("AESE", "01001110 00 10100 001 op=00 10 Rn:5 Rd:5"),
            ("AESD", "01001110 00 10100 001 op=01 10 Rn:5 Rd:5"),
            ("AESMC", "01001110 00 10100 001 op=10 10 Rn:5 Rd:5"),
            ("AESIMC", "01001110 00 10100 001 op=11 10 Rn:5 Rd:5"),
        ],
    ),
    *_split(
        "SHA_3reg",
        "crypto_sha",
        [
            ("SHA1C", "01011110 00 0 Rm:5 0 opcode=000 00 Rn:5 Rd:5"),
            ("SHA1P", "01011110 00 0 Rm:5 0 opcode=001 00 Rn:5 Rd:5"),
            ("SHA1M", "01011110 00 0 Rm:5 0 opcode=010 00 Rn:5 Rd:5"),
            ("SHA1SU0", "01011110 00 0 Rm:5 0 opcode=011 00 Rn:5 Rd:5"),
            ("SHA256H", "01011110 00 0 Rm:5 0 opcode=100 00 Rn:5 Rd:5"),
            ("SHA256H2", "01011110 00 0 Rm:5 0 opcode=101 00 Rn:5 Rd:5"),
            ("SHA256SU1", "01011110 00 0 Rm:5 0 opcode=110 00 Rn:5 Rd:5"),
        ],
        rest="01011110 00 0 Rm:5 0 opcode:3 00 Rn:5 Rd:5",
    ),
    *_split(
        "SHA_2reg",
        "crypto_sha",
        [
            ("SHA1H", "01011110 00 10100 opcode=00000 10 Rn:5 Rd:5"),
            ("SHA1SU1", "01011110 00 10100 opcode=00001 10 Rn:5 Rd:5"),
            ("SHA256SU0", "01011110 00 10100 opcode=00010 10 Rn:5 Rd:5"),
        ],
        rest="01011110 00 10100 opcode:5 10 Rn:5 Rd:5",
    ),
    *_split(
        "SHA512_3reg",
        "crypto_sha512",
        [
            ("SHA512H", "11001110011 Rm:5 1000 opcode=00 Rn:5 Rd:5"),
            ("SHA512H2", "11001110011 Rm:5 1000 opcode=01 Rn:5 Rd:5"),
            ("SHA512SU1", "11001110011 Rm:5 1000 opcode=10 Rn:5 Rd:5"),
            ("RAX1", "11001110011 Rm:5 1000 opcode=11 Rn:5 Rd:5"),
        ],
    ),
    ("SHA512SU0", "crypto_sha512", "11001110110000001000 00 Rn:5 Rd:5"),
    *_split(
        "SHA3_4reg",
        "crypto_sha3",
        [
            ("EOR3", "110011100 op=00 Rm:5 0 Ra:5 Rn:5 Rd:5"),
            ("BCAX", "110011100 op=01 Rm:5 0 Ra:5 Rn:5 Rd:5"),
        ],
        rest="110011100 op:2 Rm:5 0 Ra:5 Rn:5 Rd:5",
    ),
    ("XAR", "crypto_sha3", "11001110100 Rm:5 imm6:6 Rn:5 Rd:5"),
    *_split(
        "FP_FIX_CONV",
        "fp_fixcvt",
        [
            ("FCVTZS_fix", "sf:1 0 0 11110 ftype:2 0 rmode=11 opcode=000 scale:6 Rn:5 Rd:5 !ftype=10 !sf=0,scale=0xxxxx"),
            ("FCVTZU_fix", "sf:1 0 0 11110 ftype:2 0 rmode=11 opcode=001 scale:6 Rn:5 Rd:5 !ftype=10 !sf=0,scale=0xxxxx"),
            ("SCVTF_fix", "sf:1 0 0 11110 ftype:2 0 rmode=00 opcode=010 scale:6 Rn:5 Rd:5 !ftype=10 !sf=0,scale=0xxxxx"),
            ("UCVTF_fix", "sf:1 0 0 11110 ftype:2 0 rmode=00 opcode=011 scale:6 Rn:5 Rd:5 !ftype=10 !sf=0,scale=0xxxxx"),
        ],
        rest="sf:1 0 0 11110 ftype:2 0 rmode:2 opcode:3 scale:6 Rn:5 Rd:5",
    ),
]

FORMS: list[Form] = [_compile(*r) for r in _ROWS]
BY_NAME: dict[str, Form] = {f.name: f for f in FORMS}
GROUPS: dict[str, list[Form]] = {}  # group -> its forms, in table order
for _f in FORMS:
    GROUPS.setdefault(_f.group, []).append(_f)
if len(BY_NAME) != len(FORMS):
    raise ValueError("two rows of recompiler/isa.py name the same form")
