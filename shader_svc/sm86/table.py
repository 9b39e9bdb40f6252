"""The SM86 (Ampere, Switch 2) instruction table: one declarative row per (instruction, operand
form).  Decoder, disassembler, assembler, IR lowering and tests all read ``ROWS``.

ALU operand forms (bits 9..11 of the opcode), from NAK's SM70 encoder and nvdisasm
experiments.  Three physical source slots: A = R@24, B = bits 32..63, C = R@64:

  form  B            C        logical (b, c)
  1     R@32         R@64     (B, C)
  2     imm32        R@64     (C, B)
  3     c[][]        R@64     (C, B)
  4     imm32        R@64     (B, C)
  5     c[][]        R@64     (B, C)
  6     UR@32        R@64     (B, C)
  7     UR@32        R@64     (C, B)

Negate/abs bits belong to the physical slot (A: 72/73, B: 63/62, C: 75/74); reuse flags to the
logical operand (a/b/c: 122/123/124).
"""

from __future__ import annotations

from dataclasses import replace

from shader_svc.sm86.fields import Alias, Attr, CBuf, CBufR, Imm, Mem, Mod, Pred, Reg, Row, SReg, Sym, Target

RZ, URZ, PT = 255, 63, 7

# ---------------------------------------------------------------------------------------------
# modifier vocabularies
FCMP = (
    (0, ".F"),
    (1, ".LT"),
    (2, ".EQ"),
    (3, ".LE"),
    (4, ".GT"),
    (5, ".NE"),
    (6, ".GE"),
    (7, ".NUM"),
    (8, ".NAN"),
    (9, ".LTU"),
    (10, ".EQU"),
    (11, ".LEU"),
    (12, ".GTU"),
    (13, ".NEU"),
    (14, ".GEU"),
    (15, ".T"),
)
# DSETP's 0 and 15 are MIN/MAX (fmin/fmax: the first predicate picks the operand, the second
# marks a NaN to quiet) as nvdisasm 13.5 prints them, not F/T
DCMP = ((0, ".MIN"),) + FCMP[1:15] + ((15, ".MAX"),)
ICMP = ((0, ".F"), (1, ".LT"), (2, ".EQ"), (3, ".LE"), (4, ".GT"), (5, ".NE"), (6, ".GE"), (7, ".T"))
BOP = ((0, ".AND"), (1, ".OR"), (2, ".XOR"))
FRND = ((0, ""), (1, ".RM"), (2, ".RP"), (3, ".RZ"))
ONOFF = lambda s: ((0, ""), (1, s))  # noqa: E731
MEMSZ = ((0, ".U8"), (1, ".S8"), (2, ".U16"), (3, ".S16"), (4, ""), (5, ".64"), (6, ".128"))
MUFU_OPS = (
    (0, ".COS"),
    (1, ".SIN"),
    (2, ".EX2"),
    (3, ".LG2"),
    (4, ".RCP"),
    (5, ".RSQ"),
    (6, ".RCP64H"),
    (7, ".RSQ64H"),
    (8, ".SQRT"),
    (9, ".TANH"),
)
ATOM_OPS = ((0, ".ADD"), (1, ".MIN"), (2, ".MAX"), (3, ".INC"), (4, ".DEC"), (5, ".AND"), (6, ".OR"), (7, ".XOR"), (8, ".EXCH"))
RED_OPS = ATOM_OPS[:8]
SHFL_MODES = ((0, ".IDX"), (1, ".UP"), (2, ".DOWN"), (3, ".BFLY"))
SREGS = {
    0x00: "SR_LANEID",
    0x21: "SR_TID.X",
    0x22: "SR_TID.Y",
    0x23: "SR_TID.Z",
    0x25: "SR_CTAID.X",
    0x26: "SR_CTAID.Y",
    0x27: "SR_CTAID.Z",
    # graphics system values
    0x11: "SR_INVOCATION_ID",
    0x12: "SR_Y_DIRECTION",
    0x13: "SR_THREAD_KILL",
}

# ---------------------------------------------------------------------------------------------
# operand slots
D = Reg("d", 16)
UD = Reg("d", 16, file="UR")


def A(neg=False, abs_=False, sym="-"):
    return Reg("a", 24, neg=72 if neg else None, abs=73 if abs_ else None, neg_sym=sym, reuse="a")


def src_forms(n_src: int, neg: dict, abs_: dict, forms: dict[int, str], sym="-", fimm=False, uimm=False, kind: str = ""):
    """Operands of slots b (and c) for each form code.  ``forms`` maps form -> layout name
    ('rr', 'ri', 'rc', 'ir', 'cr', 'ur', 'ru' for 3 sources; 'r', 'i', 'c', 'u' for one)."""
    kind = kind or ("f32" if fimm else ("u" if uimm else "s"))
    out = {}
    for form, lay in forms.items():

        def regB(name):
            return Reg(name, 32, neg=63 if neg.get(name) else None, abs=62 if abs_.get(name) else None, neg_sym=sym, reuse=name)

        def regC(name):
            return Reg(name, 64, neg=75 if neg.get(name) else None, abs=74 if abs_.get(name) else None, neg_sym=sym, reuse=name)

        def cbB(name):
            return CBuf(name, neg=63 if neg.get(name) else None, abs=62 if abs_.get(name) else None, neg_sym=sym)

        def urB(name):
            # a uniform register in the B slot takes that slot's negate/abs bits (63/62) as
            # the register and constant forms do: nvdisasm 13.5 prints bit 63 as '-UR4' on
            # IADD3/LEA (form 6) and IMAD/IMAD.HI's addend (form 7) (decode-gaps, flips)
            return Reg(name, 32, file="UR", neg=63 if neg.get(name) else None, abs=62 if abs_.get(name) else None, neg_sym=sym)

        if n_src == 1:
            ops = {
                "r": (regB("b"),),
                "i": (Imm("b", 32, 32, kind),),
                "c": (cbB("b"),),
                "u": (urB("b"),),
            }[lay]
        else:
            ops = {
                "rr": (regB("b"), regC("c")),
                "ri": (regC("b"), Imm("c", 32, 32, kind)),
                "rc": (regC("b"), cbB("c")),
                "ir": (Imm("b", 32, 32, kind), regC("c")),
                "cr": (cbB("b"), regC("c")),
                "ur": (urB("b"), regC("c")),
                "ru": (regC("b"), urB("c")),
            }[lay]
        out[form] = ops
    return out


FORMS3 = {1: "rr", 2: "ri", 3: "rc", 4: "ir", 5: "cr"}
FORMS1 = {1: "r", 4: "i", 5: "c"}


def hi(v: int) -> int:
    """Reference bits 64..104 given as the high 64-bit word printed by nvdisasm."""
    return (v & ((1 << 41) - 1)) << 64


def rows_for(mnemonic, op9, forms_ops, pre=(), post=(), mods=(), mods_before=(), base=0, **kw):
    # Uniform-register forms (6, 7) carry bit 91 set.
    return [
        Row(
            mnemonic,
            (form << 9) | op9,
            tuple(pre) + ops + tuple(post),
            tuple(mods_before),
            tuple(mods),
            base | ((1 << 91) if form in (6, 7) else 0),
            **kw,
        )
        for form, ops in forms_ops.items()
    ]


def reuse_as(rows: list[Row], operand: str, slot: str) -> list[Row]:
    """The rows with ``operand``'s register answering to reuse flag ``slot``: an add is a fused
    multiply-add's addend, so FADD/DADD/HADD2's second register shows flag 2 (bit 124; nvdisasm
    13.5 refuses flag 1 on them)."""
    return [
        replace(r, operands=tuple(replace(o, reuse=slot) if isinstance(o, Reg) and o.name == operand else o for o in r.operands))
        for r in rows
    ]


def no_reuse(forms: dict) -> dict:
    """Operand forms (``src_forms``) whose registers show no reuse flag (I2F/F2I's source:
    nvdisasm 13.5 prints none, so a set flag is refused)."""
    return {f: tuple(replace(o, reuse=None) if isinstance(o, Reg) else o for o in ops) for f, ops in forms.items()}


P87 = Pred("pp", 87, not_bit=90)
# Reference values of operands a modifier hides (the assembler writes these; ptxas does too):
# the carry-ins of IADD3/IMAD without .X are !PT, ISETP's ex predicate without .EX is PT.
CI87 = 0xF << 87
CI77 = 0xF << 77
EX68 = 0x7 << 68
X_ON = (("X", 1),)

ROWS: list[Row] = []
R = ROWS.extend
# shader-ndv: DEPBAR's set of scoreboards (32..37), printed '{5,2,0}' (highest first), nothing when empty
DEPBAR_SET = Sym(
    "set", 32, 6, tuple((v, "{" + ",".join(str(k) for k in range(5, -1, -1) if v >> k & 1) + "}") for v in range(64)), hide=0
)

# --- moves and selects ---------------------------------------------------------------------
R(
    rows_for(
        "MOV",
        0x002,
        src_forms(1, {}, {}, {1: "r", 4: "i", 5: "c", 6: "u"}, uimm=True),
        pre=(D,),
        # shader-ndv: the quad-lane write mask (72..75: lane (id & 3) k writes where bit k is
        # set; nvdisasm 13.5 prints it as a third operand, nothing for 0xf; ptxas's tex3DGrad
        # quad loop writes 'MOV R18, R4, 0x1'); NAK's OpMov quad_lanes
        post=(Sym("mask", 72, 4, tuple((v, f"{v:#x}") for v in range(16)), hide=15),),
        base=hi(0xF00),
        ir="MOV",
    )
)
R(rows_for("SEL", 0x007, src_forms(1, {}, {}, FORMS1, uimm=True), pre=(D, A()), post=(P87,), ir="SEL"))
R(
    rows_for(
        "FSEL",
        0x008,
        src_forms(1, {"b": 1}, {"b": 1}, FORMS1, fimm=True),
        pre=(D, A(1, 1)),
        post=(P87,),
        mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")),),
        ir="SEL",
    )
)
R([Row("S2R", 0x919, (D, SReg("sr")), ir="S2R", cls="ctrl")])
R([Row("NOP", 0x918, (), ir="NOP", cls="ctrl")])

# --- FP32 ----------------------------------------------------------------------------------
FNA = {"b": 1, "c": 1}
R(
    reuse_as(
        rows_for(
            "FADD",
            0x021,
            src_forms(1, FNA, FNA, {1: "r", 2: "i", 3: "c"}, fimm=True),
            pre=(D, A(1, 1)),
            mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("rnd", 78, 2, FRND), Mod("SAT", 77, 1, ONOFF(".SAT"))),
            ir="FADD",
        ),
        "b",
        "c",
    )
)
R(
    rows_for(
        "FMUL",
        0x020,
        src_forms(1, FNA, FNA, FORMS1, fimm=True),
        pre=(D, A(1, 1)),
        mods=(
            Mod("scale", 84, 3, ((4, ""), (5, ".M2"), (6, ".M4"))),
            Mod("FTZ", 80, 1, ONOFF(".FTZ")),
            Mod("FMZ", 76, 1, ONOFF(".FMZ")),
            Mod("rnd", 78, 2, FRND),
            Mod("SAT", 77, 1, ONOFF(".SAT")),
        ),
        ir="FMUL",
    )
)
R(
    rows_for(
        "FFMA",
        0x023,
        src_forms(2, FNA, FNA, FORMS3, fimm=True),
        pre=(D, A(1, 1)),
        mods=(
            Mod("FTZ", 80, 1, ONOFF(".FTZ")),
            Mod("FMZ", 76, 1, ONOFF(".FMZ")),
            Mod("rnd", 78, 2, FRND),
            Mod("SAT", 77, 1, ONOFF(".SAT")),
        ),
        ir="FFMA",
    )
)
R(
    rows_for(
        "FMNMX",
        0x009,
        src_forms(1, FNA, FNA, FORMS1, fimm=True),
        pre=(D, A(1, 1)),
        post=(P87,),
        mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("NAN", 81, 1, ONOFF(".NAN")), Mod("XORSIGN", 82, 1, ONOFF(".XORSIGN"))),
        ir="FMNMX",
    )
)
R(
    rows_for(
        "FSETP",
        0x00B,
        src_forms(1, FNA, FNA, FORMS1, fimm=True),
        pre=(Pred("p", 81), Pred("q", 84), A(1, 1)),
        post=(P87,),
        mods=(Mod("cmp", 76, 4, FCMP), Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("bop", 74, 2, BOP)),
        ir="FSETP",
    )
)
R(
    rows_for(
        "MUFU",
        0x108,
        src_forms(1, FNA, FNA, FORMS1, fimm=True),
        pre=(D,),
        mods=(Mod("op", 74, 4, MUFU_OPS), Mod("F16", 73, 1, ((0, ""),))),
        ir="MUFU",
        cls="sfu",
    )
)

# --- integer -------------------------------------------------------------------------------
INEG3 = {"b": 1, "c": 1}
R(
    rows_for(
        "IADD3",
        0x010,
        src_forms(2, INEG3, {}, {1: "rr", 4: "ir", 5: "cr"}),
        pre=(D, Pred("co0", 81, hide_pt=True), Pred("co1", 84, hide_pt=True), A(neg=True)),
        post=(Pred("ci0", 87, not_bit=90), Pred("ci1", 77, not_bit=80)),
        mods=(Mod("X", 74, 1, ONOFF(".X")),),
        base=CI87 | CI77,
        show_if=(("ci0", "X", 1), ("ci1", "X", 1)),
        ir="IADD3",
    )
)
UIADD3_OPS = (
    UD,
    Pred("co0", 81, file="UP", hide_pt=True),
    Pred("co1", 84, file="UP", hide_pt=True),
    Reg("a", 24, file="UR", neg=72),
)
UCI = (Pred("ci0", 87, not_bit=90, file="UP"), Pred("ci1", 77, not_bit=80, file="UP"))
R(
    [
        Row(
            "UIADD3",
            0x890,
            UIADD3_OPS + (Imm("b", 32, 32), Reg("c", 64, file="UR", neg=75)) + UCI,
            (),
            (Mod("X", 74, 1, ONOFF(".X")),),
            hi(0x08000000) | CI87 | CI77,
            show_if=(("ci0", "X", 1), ("ci1", "X", 1)),
            ir="IADD3",
            uniform=True,
        ),
        Row(
            "UIADD3",
            0x290,
            UIADD3_OPS + (Reg("b", 32, file="UR", neg=63), Reg("c", 64, file="UR", neg=75)) + UCI,
            (),
            (Mod("X", 74, 1, ONOFF(".X")),),
            hi(0x08000000) | CI87 | CI77,
            show_if=(("ci0", "X", 1), ("ci1", "X", 1)),
            ir="IADD3",
            uniform=True,
        ),
    ]
)
NOX = ("X", "mod", 0)
IMAD_ALIASES = (
    Alias(".MOV", (("a", "reg", RZ), NOX)),
    Alias(".MOV", (("b", "reg", RZ), NOX)),
    Alias(".MOV", (("b", "imm", 0), NOX)),
    Alias(".IADD", (("b", "imm", 1), NOX)),
    # a power-of-two multiplier and no addend: nvdisasm prints a shift (IMAD.SHL.U32)
    Alias(".SHL", (("b", "pow2", 0), ("c", "reg", RZ), NOX)),
)
R(
    rows_for(
        "IMAD",
        0x024,
        src_forms(2, {"c": 1}, {}, FORMS3),
        pre=(D, A()),
        post=(Pred("ci", 87, not_bit=90),),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("X", 74, 1, ONOFF(".X"))),
        show_if=(("ci", "X", 1),),
        aliases=IMAD_ALIASES,
        base=hi(0xE0000) | CI87,
        ir="IMAD",
    )
)
R(
    rows_for(
        "IMAD",
        0x024,
        src_forms(2, {"c": 1}, {}, {6: "ur", 7: "ru"}),
        pre=(D, A()),
        post=(Pred("ci", 87, not_bit=90),),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("X", 74, 1, ONOFF(".X"))),
        show_if=(("ci", "X", 1),),
        base=hi(0xE0000) | CI87,
        ir="IMAD",
    )
)
R(
    rows_for(
        "IMAD.WIDE",
        0x025,
        src_forms(2, {"c": 1}, {}, {1: "rr", 3: "rc", 4: "ir", 5: "cr"}),
        pre=(D, Pred("co", 81, hide_pt=True), A()),
        post=(Pred("ci", 87, not_bit=90),),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("X", 74, 1, ONOFF(".X"))),
        show_if=(("ci", "X", 1),),
        base=CI87,
        ir="IMAD.WIDE",
    )
)
R(
    rows_for(
        "LOP3.LUT",
        0x012,
        src_forms(2, {}, {}, {1: "rr", 4: "ir", 5: "cr"}, uimm=True),
        pre=(Pred("pd", 81, hide_pt=True), D, A()),
        post=(Imm("lut", 72, 8, "u"), P87),
        mods=(Mod("PAND", 80, 1, ONOFF(".PAND")),),
        ir="LOP3",
    )
)
R(
    rows_for(
        "IMNMX",
        0x017,
        src_forms(1, {}, {}, FORMS1),
        pre=(D, A()),
        post=(P87,),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))),),
        ir="IMNMX",
    )
)
R(
    rows_for(
        "ISETP",
        0x00C,
        src_forms(1, {}, {}, {1: "r", 4: "i", 5: "c", 6: "u"}),
        pre=(Pred("p", 81), Pred("q", 84), A()),
        post=(P87, Pred("ex", 68, not_bit=71)),
        mods=(
            Mod("cmp", 76, 3, ICMP),
            Mod("U32", 73, 1, ((0, ".U32"), (1, ""))),
            Mod("bop", 74, 2, BOP),
            Mod("EX", 72, 1, ONOFF(".EX")),
        ),
        show_if=(("ex", "EX", 1),),
        base=EX68,
        ir="ISETP",
    )
)
SHF_MODS = (
    Mod("dir", 76, 1, ((0, ".L"), (1, ".R"))),
    Mod("W", 75, 1, ONOFF(".W")),
    Mod("type", 73, 2, ((0, ".S64"), (1, ".U64"), (2, ".S32"), (3, ".U32"))),
    Mod("HI", 80, 1, ONOFF(".HI")),
)
R(
    rows_for(
        "SHF", 0x019, src_forms(2, {}, {}, {1: "rr", 2: "ri", 3: "rc", 4: "ir"}, uimm=True), pre=(D, A()), mods=SHF_MODS, ir="SHF"
    )
)
R(
    rows_for(
        "PRMT", 0x016, src_forms(2, {}, {}, FORMS3, uimm=True), pre=(D, A()), mods=(Mod("mode", 72, 3, ((0, ""),)),), ir="PRMT"
    )
)
R(
    rows_for(
        "SGXT",
        0x01A,
        src_forms(1, {}, {}, FORMS1, uimm=True),
        pre=(D, A()),
        mods=(Mod("W", 75, 1, ONOFF(".W")), Mod("U32", 73, 1, ((0, ".U32"), (1, "")))),
        ir="SGXT",
    )
)
R(rows_for("POPC", 0x109, src_forms(1, {"b": 1}, {}, FORMS1, sym="~", uimm=True), pre=(D,), ir="POPC"))
R(rows_for("BREV", 0x101, src_forms(1, {}, {}, FORMS1, uimm=True), pre=(D,), ir="BREV"))
R(
    rows_for(
        "FLO",
        0x100,
        src_forms(1, {"b": 1}, {}, FORMS1, sym="~", uimm=True),
        pre=(D, Pred("pd", 81, hide_pt=True)),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("SH", 74, 1, ONOFF(".SH"))),
        base=hi(0xE0000),
        ir="FLO",
    )
)
R(
    [
        Row(
            "UFLO",
            0x2BD,
            (UD, Pred("pd", 81, file="UP", hide_pt=True), Reg("b", 32, file="UR", neg=63, neg_sym="~")),
            (),
            (Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("SH", 74, 1, ONOFF(".SH"))),
            hi(0x080E0000),
            ir="FLO",
            uniform=True,
        )
    ]
)
R(
    [
        Row(
            "PLOP3.LUT",
            0x81C,
            (
                Pred("p", 81),
                Pred("q", 84),
                Pred("a", 87, not_bit=90),
                Pred("b", 77, not_bit=80),
                Pred("c", 68, not_bit=71),
                Imm("lut", 64, 3, "u", hi_lo=72, hi_width=5),
                Imm("lut2", 16, 8, "u"),
            ),
            base=hi(0),
            ir="PLOP3",
        )
    ]
)

# --- conversions ---------------------------------------------------------------------------
R(
    rows_for(
        "I2FP",
        0x045,
        src_forms(1, {}, {}, FORMS1),
        pre=(D,),
        mods=(
            Mod("dst", 75, 3, ((2, ".F32"),)),
            Mod("sign", 74, 1, ((0, ".U32"), (1, ".S32"))),
            Mod("rnd", 78, 2, ((0, ""), (3, ".RZ"))),
        ),
        base=hi(0x0000200000),
        ir="I2F",
        cls="conv",
    )
)
# FRND (0x307 F32, 0x313 F64): round to an integral value; F2F (0x310) between F32 and F64, one
# row per direction (the types print as one word).  nvdisasm 13.5, every bit flipped: FTZ 80,
# rounding 78..79, the source in the B slot with |x| 62 / -x 63; the type bits are the rows' own
FRND_RND = ((0, ""), (1, ".FLOOR"), (2, ".CEIL"), (3, ".TRUNC"))
R(
    rows_for(
        "FRND",
        0x107,
        src_forms(1, FNA, FNA, FORMS1, fimm=True),
        pre=(D,),
        mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("rnd", 78, 2, FRND_RND)),
        base=hi(0x0020_1000),
        ir="FRND",
        cls="conv",
    )
)
R(
    rows_for(
        "FRND",
        0x113,
        src_forms(1, FNA, FNA, FORMS1, kind="f64"),
        pre=(D,),
        mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("f64", 75, 0, ((0, ".F64"),)), Mod("rnd", 78, 2, FRND_RND)),
        base=hi(0x0030_1800),
        ir="FRND",
        cls="conv",
    )
)
F2F_RND = ((0, ""), (1, ".RM"), (2, ".RP"), (3, ".RZ"))
for _types, _base in ((".F64.F32", 0x0020_1800), (".F32.F64", 0x0030_1000)):
    R(
        rows_for(
            "F2F",
            0x110,
            src_forms(1, FNA, FNA, {1: "r"}),
            pre=(D,),
            mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("types", 75, 0, ((0, _types),)), Mod("rnd", 78, 2, F2F_RND)),
            base=hi(_base),
            ir="F2F",
            cls="conv",
        )
    )
R(
    rows_for(
        "F2I",
        0x105,
        src_forms(1, FNA, FNA, FORMS1, fimm=True),
        pre=(D,),
        mods=(
            Mod("FTZ", 80, 1, ONOFF(".FTZ")),
            Mod("sign", 72, 1, ((0, ".U32"), (1, ""))),
            Mod("size", 75, 2, ((2, ""),)),
            Mod("rnd", 78, 2, ((0, ""), (1, ".FLOOR"), (2, ".CEIL"), (3, ".TRUNC"))),
            Mod("NTZ", 77, 1, ONOFF(".NTZ")),
        ),
        base=hi(0x0000200000),
        ir="F2I",
        cls="conv",
    )
)
R([Row("F2FP.PACK_AB", 0x23E, (D, A(), Reg("b", 32, reuse="b")), base=hi(0xFF), ir="F2FP", cls="conv")])
R(
    [
        Row(
            "HADD2",
            0x230,
            (D, Reg("a", 24, neg=72, reuse="a", suffix="@swz:74"), Reg("b", 32, neg=63, abs=62, reuse="c", suffix="@swz:60")),
            (Mod("F32", 78, 1, ((0, ""), (1, ".F32"))),),
            (Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("SAT", 77, 1, ONOFF(".SAT"))),
            free=((60, 2), (74, 2)),
            ir="HADD2",
            cls="conv",
        )
    ]
)

# --- memory --------------------------------------------------------------------------------
# LDG/STG: the free 6 bits name the uniform register pair holding the memory descriptor
# (ptxas loads it with ULDC.64 URn, c[0x0][0x118]); nvdisasm does not print it, UR4 is the
# assembler's default (base).
GMEM = Mem("addr", wide_bit=-1)
CACHE = Mod("cache", 84, 3, ((1, ""), (0, ".EF"), (3, ".LU"), (5, ".NA")))
R(
    [
        Row(
            "LDG",
            0x981,
            (D, GMEM),
            (),
            (Mod("E", 72, 1, ((1, ".E"),)), CACHE, Mod("size", 73, 3, MEMSZ), Mod("order", 77, 4, ((0, ""), (4, ".CONSTANT")))),
            hi(0x0C0E1900) | 4 << 32,
            free=((32, 6),),
            ir="LDG",
            cls="mem",
        ),
        Row(
            "STG",
            0x986,
            (GMEM, Reg("b", 32)),
            (),
            (Mod("E", 72, 1, ((1, ".E"),)), CACHE, Mod("size", 73, 3, MEMSZ), Mod("order", 77, 4, ((0, ""),))),
            hi(0x0C001900) | 4 << 64,
            free=((64, 6),),
            ir="STG",
            cls="mem",
        ),
    ]
)
SMEM = Mem("addr", scale=(78, 2, ((0, ""), (1, ".X4"), (2, ".X8"), (3, ".X16"))))
R(
    [
        Row("LDS", 0x984, (D, SMEM), (), (Mod("size", 73, 3, MEMSZ),), ir="LDS", cls="mem"),
        Row("STS", 0x388, (SMEM, Reg("b", 32)), (), (Mod("size", 73, 3, MEMSZ),), ir="STS", cls="mem"),
    ]
)
R([Row("ULDC", 0xAB9, (UD, CBuf("cb")), (), (Mod("size", 73, 3, ((4, ""), (5, ".64"))),), ir="ULDC", uniform=True)])
# shader-rest: ULDC's indexed form c[bank][URa+off] (ptxas's read of a uniform jump-table index,
# before BRXU; nvdisasm 13.5 bit flips: UR 24..29, signed byte offset 38..53, bank 54..58; the
# size field's other values print .U8 / .INVALID6, held at the reference value)
R(
    [
        Row(
            "ULDC",
            0xABB,
            (UD, CBufR("cb", file="UR")),
            (),
            (Mod("size", 73, 3, ((4, ""), (5, ".64"))),),
            base=1 << 91 | 4 << 73,
            ir="ULDC",
            uniform=True,
        )
    ]
)
AMEM = Mem("addr", wide_bit=91)
ATOM_MODS = (
    CACHE,
    Mod("type", 73, 3, ((0, ""), (1, ".S32"), (2, ".64"), (3, ".F32.FTZ.RN"), (4, ".F16x2.RN"), (5, ".S64"))),  # .S64: shader-mem
    Mod("sem", 77, 4, ((7, ".STRONG.GPU"),)),
)
R(
    [
        Row(
            "ATOMG",
            0x9A8,
            (Pred("p", 81), D, Mem("addr", wide_bit=-1), Reg("b", 32)),
            (),
            (Mod("E", 72, 1, ((1, ".E"),)), Mod("op", 87, 4, ATOM_OPS)) + ATOM_MODS,
            # bits 64..69: a uniform register shown only with bit 71, as RED's
            base=hi(0x080000C6),
            free=((64, 6),),
            ir="ATOMG",
            cls="mem",
        ),
        Row(
            "ATOMG",
            0x3A9,
            (Pred("p", 81), D, AMEM, Reg("b", 32), Reg("c", 64)),
            (),
            (Mod("E", 72, 1, ((1, ".E"),)), Mod("op", 87, 4, ((0, ".CAS"),))) + ATOM_MODS,
            ir="ATOMG.CAS",
            cls="mem",
        ),
        Row(
            "RED",
            0x98E,
            (AMEM, Reg("b", 32)),
            (),
            (Mod("E", 72, 1, ((1, ".E"),)), Mod("op", 87, 3, RED_OPS)) + ATOM_MODS,
            # bits 64..69 name a uniform register nvdisasm shows only with bit 71 (ptxas 12.9 leaves
            # 0b110 there, nvcc 13 0b100)
            base=hi(0x4000086),
            free=((64, 6),),
            ir="RED",
            cls="mem",
        ),
    ]
)

# --- warp ------------------------------------------------------------------------------------
SHFL_FORMS = {
    0x389: (Reg("b", 32), Reg("c", 64)),
    0x589: (Reg("b", 32), Imm("c", 40, 13, "u")),
    0x989: (Imm("b", 53, 5, "u"), Reg("c", 64)),
    0xF89: (Imm("b", 53, 5, "u"), Imm("c", 40, 13, "u")),
}
R(
    [
        Row("SHFL", op, (Pred("p", 81), D, A()) + bc, (), (Mod("mode", 58, 2, SHFL_MODES),), ir="SHFL", cls="warp")
        for op, bc in SHFL_FORMS.items()
    ]
)
VOTE_MODES = ((0, ".ALL"), (1, ".ANY"), (2, ".EQ"))
R(
    [
        Row(
            "VOTE",
            0x806,
            (Reg("d", 16, suffix="@hiderz"), Pred("p", 81), P87),
            (),
            (Mod("mode", 72, 2, VOTE_MODES),),
            ir="VOTE",
            cls="warp",
        ),
        Row(
            "VOTEU",
            0x886,
            (Reg("d", 16, file="UR", suffix="@hiderz"), Pred("p", 81, file="UP"), P87),
            (),
            (Mod("mode", 72, 2, VOTE_MODES),),
            ir="VOTE",
            cls="warp",
        ),
        Row(
            "REDUX",
            0x3C4,
            (UD, A()),
            (),
            (
                # AND is the default nvdisasm 13.5 leaves out ('REDUX UR4, R2')
                Mod("op", 78, 3, ((0, ""), (1, ".OR"), (2, ".XOR"), (3, ".SUM"), (4, ".MIN"), (5, ".MAX"))),
                Mod("S32", 73, 1, ONOFF(".S32")),
            ),
            ir="REDUX",
            cls="warp",
        ),
    ]
)

# --- control -------------------------------------------------------------------------------
PHIDE = Pred("pp", 87, not_bit=90, hide_pt=True)
R(
    [
        Row("EXIT", 0x94D, (PHIDE,), (), (Mod("kind", 84, 3, ((0, ""),)),), hi(0x0000000000), ir="EXIT", cls="branch"),
        Row(
            "BRA",
            0x947,
            (PHIDE, Target("target")),
            (),
            (Mod("bmode", 32, 2, ((0, ""), (1, ".U"), (2, ".DIV"))), Mod("dir", 85, 2, ((0, ""),))),
            free=((16, 16), (82, 3), (92, 13)),
            ir="BRA",
            cls="branch",
        ),
        Row(
            "BAR",
            0xB1D,
            (Imm("id", 54, 4, "u"),),
            (),
            (Mod("mode", 77, 3, ((0, ".SYNC"),)), Mod("defer", 80, 1, ((0, ""), (1, ".DEFER_BLOCKING")))),
            ir="BAR",
            cls="ctrl",
        ),
    ]
)


# --- graphics: attributes --------------------------------------------------------------------
# ALD/AST: attribute byte address 10 bits at 40, components-1 at 74; the index register (24) and
# AST's vertex register (64) only in their RZ forms, ALD's vertex register (32) is printed unless
# RZ.  IPA: address in words at 64; interpolation 78..79, sample location 76..77; the offset
# register (32) only shows with .OFFSET (ALD.P, patch attributes, is left out: nvdisasm prints
# its vertex register as garbage); bits 24..31 are ignored by nvdisasm (free).
COMPS = ((0, ""), (1, ".64"), (2, ".96"), (3, ".128"))
R(
    [
        Row(
            "ALD",
            0x321,
            (D, Attr("attr", 40, 10), Reg("vtx", 32, suffix="@hiderz")),
            (),
            (Mod("O", 79, 1, ONOFF(".O")), Mod("comps", 74, 2, COMPS)),
            base=0xFF << 24,
            ir="ALD",
            cls="attr",
            stages=("vertex",),
        ),
        Row(
            "AST",
            0x322,
            (Attr("attr", 40, 10), Reg("b", 32), Reg("vtx", 64, suffix="@hiderz")),
            (),
            (Mod("P", 76, 1, ONOFF(".P")), Mod("comps", 74, 2, COMPS)),
            base=0xFF << 24,
            ir="AST",
            cls="attr",
            stages=("vertex",),
        ),
        Row(
            "IPA",
            0x326,
            (D, Pred("pd", 81, hide_pt=True), Attr("attr", 64, 8, 4), Reg("off", 32)),
            (),
            (
                Mod("mode", 78, 2, ((0, ".PASS"), (1, ".CONSTANT"), (2, ".STATE"))),
                Mod("loc", 76, 2, ((0, ""), (1, ".CENTROID"), (2, ".OFFSET"))),
            ),
            base=0xFF << 32,
            free=((24, 8),),
            show_if=(("off", "loc", 2),),
            ir="IPA",
            cls="attr",
            stages=("fragment",),
        ),
        Row("KILL", 0x95B, (PHIDE,), ir="KILL", cls="ctrl", stages=("fragment",)),
    ]
)

# --- graphics: textures ----------------------------------------------------------------------
# Bound forms (opcode bit 11): nvdisasm prints the second destination pair (64) first, then the
# first (16), the sources (24; 32 unless RZ), two indices (54..58, 40..53: we read the second as
# the texture slot), the dimension and the component mask (left out when 0xf).  Bindless forms
# (.B, bit 59): the handle register at 32 takes the place of the indices.
TEX_DIM = Sym("dim", 61, 3, ((0, "1D"), (1, "2D"), (2, "3D"), (3, "CUBE"), (4, "ARRAY_1D"), (5, "ARRAY_2D"), (7, "ARRAY_CUBE")))
TEX_MASK = Sym("mask", 72, 4, tuple((v, f"{v:#x}") for v in range(1, 16)), hide=15)
TEX_LOD = Mod("lod", 87, 3, ((0, ""), (1, ".LZ"), (2, ".LB"), (3, ".LL")))
TLD_LOD = Mod("lod", 87, 3, ((1, ".LZ"), (3, ".LL")))
NODEP = Mod("NODEP", 90, 1, ONOFF(".NODEP"))
TEXCACHE = Mod("cache", 84, 3, ((1, ""),))
TEX_DSTS = (Pred("fault", 81, hide_pt=True), Reg("d2", 64), D, Reg("a", 24))
TEX_IDX = (Imm("bank", 54, 5, "u"), Imm("slot", 40, 14, "u"))
TEX_B = Mod("B", 59, 1, ((1, ".B"),))
# reference encoding as ptxas writes one: no fault predicate (PT), default cache, full mask
TEX_BASE = hi(0x7 << 17 | 1 << 20 | 0xF << 8)


def tex_rows(
    mn: str,
    op: int,
    lod: Mod,
    pre: tuple = (),
    post: tuple = (),
    ir: str = "",
    dim: Sym = TEX_DIM,
    bound_extra: tuple = (),
    b_extra: tuple = (),
):
    ir = ir or mn
    return [
        Row(
            mn,
            0x800 | op,
            TEX_DSTS + (Reg("b", 32, suffix="@hiderz"),) + TEX_IDX + (dim, TEX_MASK),
            pre,
            (TEXCACHE, lod) + bound_extra + (NODEP,) if mn != "TLD4" else (TEXCACHE, NODEP) + post,
            TEX_BASE | (1 << 87 if mn == "TLD" else 0),
            refuse=(("a", 255),),  # nvdisasm prints an RZ source as '???255'
            ir=ir,
            cls="tex",
        ),
        Row(
            mn,
            op + 1,
            TEX_DSTS + (Reg("b", 32), dim, TEX_MASK),
            pre + ((TEX_B,) if mn != "TLD4" else ()),
            ((TEXCACHE, lod) + b_extra + (NODEP,) if mn != "TLD4" else (TEX_B, TEXCACHE, NODEP)) + post,
            TEX_BASE | 1 << 59 | (1 << 87 if mn == "TLD" else 0),
            refuse=(("b", 255), ("a", 255)),
            ir=ir + ".B",
            cls="tex",
        ),
    ]


TLD_DIM = Sym("dim", 61, 3, tuple(x for x in TEX_DIM.names if x[0] not in (3, 7)))
TLD4_DIM = Sym("dim", 61, 3, tuple(x for x in TEX_DIM.names if x[0] in (1, 3, 5, 7)))
TLD4_COMP = Mod("comp", 87, 2, ((0, ".R"), (1, ".G"), (2, ".B"), (3, ".A")))
# bound TEX's .DC (78; .AOFFI 76 and .NDV 77 held 0), printed after the LOD (nvdisasm 13.5)
# shader-ndv: .NDV (77) on every TEX row, printed after the LOD and .DC, before .NODEP (nvdisasm
# 13.5: "TEX.SCR.B.LZ.NDV", "TEX.SCR.B.DC.NDV"); ptxas's tex3DGrad / texCubemapGrad quad loop
TEX_NDV = Mod("NDV", 77, 1, ONOFF(".NDV"))
R(tex_rows("TEX", 0x360, TEX_LOD, bound_extra=(Mod("DC", 78, 1, ONOFF(".DC")), TEX_NDV), b_extra=(TEX_NDV,)))
# bound TLD's .AOFFI (76; .MS 78 held 0), printed after the LOD (nvdisasm 13.5); shader-tex: .CL
# (77: ptxas 13 writes TLD.LL.CL for tex.level with integer coordinates), printed after .AOFFI and
# before .NODEP (nvdisasm 13.5 "TLD.SCR.LL.AOFFI.CL", "TLD.SCR.B.LL.CL.NODEP"); on TLD.B too
TLD_CL = Mod("CL", 77, 1, ONOFF(".CL"))
R(tex_rows("TLD", 0x366, TLD_LOD, dim=TLD_DIM, bound_extra=(Mod("AOFFI", 76, 1, ONOFF(".AOFFI")), TLD_CL), b_extra=(TLD_CL,)))
# bound TLD4's offset mode (76..77: .AOFFI, .PTP; both bits print INVALID3, refused) and depth
# compare (78), printed after the component (bits found by flipping them under nvdisasm 13.5; ptxas
# sets them for PTX tld4 with offsets / a depth reference)
TLD4_OFF = Mod("off", 76, 2, ((0, ""), (1, ".AOFFI"), (2, ".PTP")))
TLD4_DC = Mod("DC", 78, 1, ONOFF(".DC"))
R(
    [
        Row(
            "TLD4",
            0xB63,
            TEX_DSTS + (Reg("b", 32, suffix="@hiderz"),) + TEX_IDX + (TLD4_DIM, TEX_MASK),
            (TLD4_COMP,),
            (TLD4_OFF, TLD4_DC, TEXCACHE, NODEP),
            TEX_BASE | 1 << 61,
            refuse=(("a", 255),),
            ir="TLD4",
            cls="tex",
        ),
        Row(
            "TLD4",
            0x364,
            TEX_DSTS + (Reg("b", 32), TLD4_DIM, TEX_MASK),
            (TLD4_COMP,),
            (TEX_B, TEXCACHE, NODEP),
            TEX_BASE | 1 << 61 | 1 << 59,
            refuse=(("b", 255), ("a", 255)),
            ir="TLD4.B",
            cls="tex",
        ),
    ]
)
TXQ_Q = Sym("query", 62, 2, ((0, "TEX_HEADER_DIMENSION"), (1, "TEX_HEADER_TEXTURE_TYPE"), (2, "TEX_HEADER_SAMPLER_POS")))
TXQ_MASK = Sym("mask", 72, 4, tuple((v, f"{v:#x}") for v in range(1, 16)))
# bits 81..84 (TEX's fault predicate and cache): nvdisasm 13.5 prints TXQ the same whatever they
# hold (isa_sweep.py on ptxas's compute TXQ, which has them clear; graphics code sets them)
TXQ_FREE = ((81, 4),)
R(
    [
        Row(
            "TXQ",
            0xB6F,
            (Reg("d2", 64), D, Reg("a", 24), TXQ_Q) + TEX_IDX + (TXQ_MASK,),
            (),
            (NODEP,),
            TEX_BASE,
            free=TXQ_FREE,
            ir="TXQ",
            cls="tex",
        ),
        Row(
            "TXQ",
            0x370,
            (Reg("d2", 64), D, Reg("a", 24), TXQ_Q, TXQ_MASK),
            (TEX_B,),
            (NODEP,),
            TEX_BASE,
            free=TXQ_FREE,
            ir="TXQ.B",
            cls="tex",
        ),
    ]
)


# =============================================================================================
# Issue 31, the rest of nvdisasm 13.5's set (decoded and printed; the translator has no rule
# for them and refuses them by name).  Each layout read off nvdisasm's text of every single-bit
# flip of a reference word (tests/shader_svc/isa_sweep.py); bits not listed keep the reference
# value (a word that differs there is refused, never guessed).

# --- surfaces: SULD/SUST/SURED/SUATOM/SUQUERY with the handle in a register (64); the address
# register at 24; '.BA' (72) byte addressing; dimension 61..63; cache 84..86; out-of-range
# mode 59..60 (.IGN, default, .TRAP); memory order 77..80 held 0; P at 81 left out while PT.
SU_DIM = Mod("dim", 61, 3, ((0, ".1D"), (1, ".1D_BUFFER"), (2, ".1D_ARRAY"), (3, ".2D"), (4, ".2D_ARRAY"), (5, ".3D")))
SU_CACHE = Mod("cache", 84, 3, ((0, ".EF"), (1, ""), (2, ".EL"), (3, ".LU"), (4, ".EU"), (5, ".NA")))
SU_CLAMP = Mod("clamp", 59, 2, ((0, ".IGN"), (1, ""), (2, ".TRAP")))
SU_BA = Mod("BA", 72, 1, ONOFF(".BA"))
SU_TYPE = Mod(
    "type",
    73,
    3,
    ((0, ""), (1, ".S32"), (2, ".U64"), (3, ".F32.FTZ.RN"), (4, ".F16x2.RN"), (5, ".S64"), (6, ".SD32"), (7, ".SD64")),
)
SU_P = Pred("p", 81, hide_pt=True)
# memory order of SULD/SUST/SURED/SUATOM (77..80; shader-surf): the values nvdisasm prints alike
# for all four (nvcc 13 writes .STRONG.SM for surf2Dread/surf2Dwrite, .STRONG.SYS for sured);
# the others stay refused
SU_ORDER = Mod("order", 77, 4, ((0, ""), (5, ".STRONG.SM"), (7, ".STRONG.GPU"), (10, ".STRONG.SYS")))
SU_ADDR = Mem("addr", off=(40, 0))
R(
    [
        Row(
            "SULD.D",
            0x99A,
            (SU_P, D, SU_ADDR, Reg("h", 64)),
            (),
            (SU_BA, SU_DIM, SU_CACHE, Mod("size", 73, 3, MEMSZ), SU_ORDER, SU_CLAMP),
            refuse=(("h", 255),),  # nvdisasm prints a handle of RZ '???255'
            ir="SULD",
            cls="mem",
        ),
        Row(
            "SUST.D",
            0x99E,
            (SU_ADDR, Reg("b", 32), Reg("h", 64)),
            (),
            (SU_BA, SU_DIM, SU_CACHE, Mod("size", 73, 3, MEMSZ), SU_ORDER, SU_CLAMP),
            refuse=(("h", 255),),  # nvdisasm prints a handle of RZ '???255'
            ir="SUST",
            cls="mem",
        ),
        Row(
            "SURED.D",
            0x3A0,
            (SU_ADDR, Reg("b", 32), Reg("h", 64)),
            (),
            (SU_BA, SU_DIM, Mod("op", 87, 4, RED_OPS), SU_CACHE, SU_TYPE, SU_ORDER, SU_CLAMP),
            refuse=(("h", 255),),  # nvdisasm prints a handle of RZ '???255'
            ir="SURED",
            cls="mem",
        ),
        Row(
            "SUATOM.D",
            0x394,
            (SU_P, D, SU_ADDR, Reg("b", 32), Reg("h", 64)),
            (),
            (SU_BA, SU_DIM, Mod("op", 87, 4, ATOM_OPS), SU_CACHE, SU_TYPE, SU_ORDER, SU_CLAMP),
            refuse=(("h", 255),),  # nvdisasm prints a handle of RZ '???255'
            ir="SUATOM",
            cls="mem",
        ),
        Row(
            "SUQUERY",
            0x9B3,
            (SU_P, D, SU_ADDR, Sym("query", 87, 4, ((0, "COMP_STATUS"),)), Reg("h", 64)),
            (),
            (SU_BA, SU_DIM),
            refuse=(("h", 255),),  # nvdisasm prints a handle of RZ '???255'
            ir="SUQUERY",
            cls="mem",
        ),
    ]
)

# --- TMML (LOD query) and TXD (explicit derivatives), bound forms: the TEX layout (second
# destination 64, first 16, sources 24 and 32, bank/slot, dimension, mask left out while 0xf)
TXD_DIM = Sym("dim", 61, 3, ((0, "1D"), (1, "2D"), (4, "ARRAY_1D"), (5, "ARRAY_2D")))
R(
    [
        Row(
            "TMML.LOD",
            0xB69,
            (Reg("d2", 64), D, Reg("a", 24), Reg("b", 32, suffix="@hiderz")) + TEX_IDX + (TEX_DIM, TEX_MASK),
            (),
            (Mod("NDV", 77, 1, ONOFF(".NDV")), NODEP),
            hi(0xF << 8),
            refuse=(("a", 255),),
            ir="TMML",
            cls="tex",
        ),
        Row(
            "TXD",
            0xB6C,
            TEX_DSTS + (Reg("b", 32),) + TEX_IDX + (TXD_DIM, TEX_MASK),
            (),
            (Mod("LC", 87, 1, ONOFF(".LC")), Mod("AOFFI", 76, 1, ONOFF(".AOFFI")), TEXCACHE, NODEP),
            TEX_BASE,
            refuse=(("a", 255),),
            ir="TXD",
            cls="tex",
        ),
    ]
)

# --- matrix multiply-accumulate (tensor cores): D, A, B, C registers (16, 24, 32, 64) and a
# uniform predicate at 87/90 stored inverted (0 = UPT, left out)
MMA_UP = Pred("up", 87, not_bit=90, file="UP", hide_pt=True, xor=7)
R(
    [
        Row(
            "DMMA.884",
            0x23F,
            (
                D,
                Reg("a", 24, neg=72, abs=73, reuse="a"),
                Reg("b", 32, neg=63, abs=62, reuse="b"),
                Reg("c", 64, neg=75, abs=74),
                MMA_UP,
            ),
            (),
            (Mod("rnd", 78, 2, FRND),),
            ir="DMMA",
        ),
        Row(
            "HMMA",
            0x23C,
            (D, Reg("a", 24, neg=72, reuse="a"), Reg("b", 32, neg=63, reuse="b"), Reg("c", 64), MMA_UP),  # reuse: shader-mma
            (),
            (
                Mod("shape", 75, 1, ((0, ".1688"), (1, ".16816"))),
                Mod("acc", 76, 1, ((0, ".F16"), (1, ".F32"))),
                Mod("src", 82, 2, ((0, ""), (1, ".BF16"), (2, ".TF32"))),
            ),
            ir="HMMA",
        ),
        Row(
            "IMMA.8816",
            0x237,
            (D, Reg("a", 24, suffix=".ROW", reuse="a"), Reg("b", 32, suffix=".COL", reuse="b"), Reg("c", 64), MMA_UP),
            (),
            (
                Mod("atype", 76, 2, ((0, ".U8"), (1, ".S8"))),
                Mod("btype", 78, 2, ((0, ".U8"), (1, ".S8"))),
                Mod("SAT", 82, 1, ONOFF(".SAT")),
            ),
            1 << 74,
            ir="IMMA",
        ),
        Row(
            "BMMA",
            0x23D,
            (D, Reg("a", 24, suffix=".ROW", reuse="a"), Reg("b", 32, suffix=".COL", reuse="b"), Reg("c", 64), MMA_UP),
            (),
            (
                Mod("shape", 75, 1, ((0, ".88128"), (1, ".168128"))),
                Mod("op", 78, 1, ((0, ".XOR"), (1, ".AND"))),
                Mod("POPC", 80, 1, ((1, ".POPC"),)),
            ),
            1 << 74 | 1 << 80,
            ir="BMMA",
        ),
    ]
)

# --- FOOTPRINT (texel footprint query, bound form): the TEX layout without a mask; .TEX/.TXD
# (78), .COARSE (76), .NDV (77), LOD (87..89), .NODEP (90)
R(
    [
        Row(
            "FOOTPRINT",
            0xB72,
            TEX_DSTS + (Reg("b", 32, suffix="@hiderz"),) + TEX_IDX + (Sym("dim", 61, 3, ((1, "2D"), (2, "3D"))),),
            (),
            (
                Mod("kind", 78, 1, ((0, ".TEX"), (1, ".TXD"))),
                Mod("COARSE", 76, 1, ONOFF(".COARSE")),
                Mod("NDV", 77, 1, ONOFF(".NDV")),
                Mod("lod", 87, 3, ((0, ""), (1, ".LZ"), (2, ".LB"), (4, ".LC"))),
                NODEP,
            ),
            hi(0x7 << 17) | 1 << 61,
            refuse=(("a", 255), ("d", 255), ("d2", 255)),  # nvdisasm prints these RZ '???255'
            ir="FOOTPRINT",
            cls="tex",
        ),
    ]
)

# --- CSMTEST (coarse shading mask test), CCTLT (texture cache control), UCLEA, UF2FP
R(
    [
        Row(
            "CSMTEST",
            0x80D,
            (Pred("p", 81), Pred("q", 84), Imm("mask", 32, 28, "u"), Pred("c", 87, not_bit=90)),
            (),
            (
                Mod("sel", 62, 2, ((1, ".R"), (2, ".A"), (3, ".RA"))),
                Mod(
                    "test",
                    76,
                    3,
                    (
                        (0, ".F"),
                        (1, ".CSM_TA"),
                        (2, ".CSM_TR"),
                        (3, ".CSM_MX"),
                        (4, ".T"),
                        (5, ".FCSM_TA"),
                        (6, ".FCSM_TR"),
                        (7, ".FCSM_MX"),
                    ),
                ),
                Mod("bop", 74, 2, BOP),
            ),
            1 << 62,
            ir="CSMTEST",
            cls="ctrl",
        ),
        Row(
            "CCTLT",
            0xB91,
            (Imm("bank", 54, 5, "u"), Imm("off", 40, 14, "u")),
            (),
            (Mod("op", 85, 2, ((1, ".IVTH"),)),),
            1 << 85,
            ir="CCTLT",
            cls="ctrl",
        ),
        Row(
            "UCLEA",
            0xCBC,
            (UD, Pred("p", 81, file="UP"), Reg("a", 24, file="UR"), Reg("b", 32, file="UR"), Imm("s", 73, 4, "u")),
            base=1 << 91,
            ir="UCLEA",
            uniform=True,
        ),
        Row(
            "UF2FP",
            0x2BA,
            (UD, Reg("a", 24, file="UR"), Reg("b", 32, file="UR")),
            (),
            (Mod("mode", 78, 1, ((0, ".PACK_AB"), (1, ".MERGE_C"))),),
            1 << 91 | 1 << 75 | 2 << 84,  # the one conversion nvdisasm 13.5 names (others print ???n)
            ir="UF2FP",
            uniform=True,
        ),
    ]
)

# --- asynchronous copies: LDGSTS (global -> shared: the shared address [R16+offset 44..63],
# the global one [R24(.64 at 70, else .U32)+UR64+offset 32..43], predicate 87/90; .BYPASS 81
# clear, cache 84..86, size 73..75, .ZFILL 82) and ARRIVES.LDGSTSBAR.64 (an mbarrier's arrival
# on the copies: [R24+UR64+offset 40..63]); both with bit 91 set
R(
    [
        Row(
            "LDGSTS.E",
            0xFAE,
            (
                Mem("dst", 16, off=(44, 20)),
                Mem("src", 24, wide_bit=70, off=(32, 12), ur=64, u32=True),
                Pred("pp", 87, not_bit=90, hide_pt=True),
            ),
            (),
            (
                Mod("BYPASS", 81, 1, ((0, ".BYPASS"), (1, ""))),
                SU_CACHE,
                Mod("size", 73, 3, ((4, ""), (5, ".64"), (6, ".128"))),
                Mod("ZFILL", 82, 1, ONOFF(".ZFILL")),
            ),
            1 << 91 | 4 << 73,
            ir="LDGSTS",
            cls="mem",
        ),
        # LDTRAM: a triangle-RAM attribute (graphics) at a[UR24 + 4 * (64..71)]; .AB / .C (72)
        Row(
            "LDTRAM",
            0x3AD,
            (D, Attr("attr", 64, 8, scale=4, ur=24)),
            (),
            (Mod("sel", 72, 1, ((0, ".AB"), (1, ".C"))),),
            1 << 91,
            ir="LDTRAM",
            cls="attr",
        ),
        Row(
            "ARRIVES.LDGSTSBAR",
            0x9B0,
            (Mem("addr", 24, off=(40, 24), ur=64),),
            (),
            (Mod("size", 73, 3, ((5, ".64"),)),),
            1 << 91 | 5 << 73,
            ir="ARRIVES",
            cls="mem",
        ),
    ]
)


# =============================================================================================
# Issue 31: the forms nvcc 13 / ptxas emit for ordinary CUDA kernels (reductions, scans, atomics,
# 64-bit integer and double math, calls, divergence).  Each layout found by flipping every bit of
# a compiled word under nvdisasm 13.5 (tests/shader_svc/cuda_corpus.py builds the kernels).

# --- LEA family: d = (a << s) + b; .HI: the high word of (c:a) << s (c = a's sign with .SX32);
# .X adds the carry-in and prints negation as '~'.  B slot by form; shift 75..79; carry out 81.
LEA_MODS = (Mod("HI", 80, 1, ONOFF(".HI")), Mod("X", 74, 1, ONOFF(".X")), Mod("SX32", 73, 1, ONOFF(".SX32")))
for _form, _lay in {1: "rr", 4: "ir", 5: "cr", 6: "ur"}.items():
    _b, _c = src_forms(2, {"b": 1}, {}, {_form: _lay}, uimm=True)[_form]
    R(
        [
            Row(
                "LEA",
                (_form << 9) | 0x011,
                (D, Pred("co", 81, hide_pt=True), A(neg=True), _b, _c, Imm("s", 75, 5, "u"), Pred("ci", 87, not_bit=90)),
                (),
                LEA_MODS,
                CI87 | RZ << 64 | ((1 << 91) if _form == 6 else 0),
                show_if=(("c", "HI", 1), ("c", "SX32", 0), ("ci", "X", 1)),
                exclude=((("HI", 0), ("SX32", 1)),),  # nvdisasm 13.5 refuses .SX32 alone
                ir="LEA",
            )
        ]
    )

# --- IMAD.HI: the high word of a * b, plus c (PTX mad.hi); IABS; IMAD.SHL alias below
R(
    rows_for(
        "IMAD.HI",
        0x027,
        # (no form 2: nvdisasm 13.5 refuses IMAD.HI with an immediate in the C slot)
        src_forms(2, {"c": 1}, {}, {1: "rr", 3: "rc", 4: "ir", 5: "cr", 6: "ur", 7: "ru"}),
        pre=(D, Pred("co", 81, hide_pt=True), A()),
        post=(Pred("ci", 87, not_bit=90),),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("X", 74, 1, ONOFF(".X"))),
        show_if=(("ci", "X", 1),),
        base=CI87,
        ir="IMAD.HI",
    )
)
R(rows_for("IABS", 0x013, src_forms(1, {}, {}, FORMS1), pre=(D,), ir="IABS"))  # signed immediate (nvdisasm)

# --- FP64: DADD's second operand sits in the C slot (64) for its register form
DNA = {"b": 1, "c": 1}
# (the add is a fused multiply-add's addend: its register answers to reuse flag 2, bit 124;
# immediate and constant forms are 2 and 3, as nvdisasm 13.5 reads them)
_DADD = {1: (Reg("b", 64, neg=75, abs=74, reuse="c"),), 2: (Imm("b", 32, 32, "f64"),), 3: (CBuf("b", neg=63, abs=62),)}
R(
    [
        Row("DADD", (f << 9) | 0x029, (D, A(1, 1)) + ops, (), (Mod("rnd", 78, 2, FRND),), ir="DADD", cls="f64")
        for f, ops in _DADD.items()
    ]
)
R(
    rows_for(
        "DMUL",
        0x028,
        src_forms(1, DNA, DNA, FORMS1, kind="f64"),
        pre=(D, A(1, 1)),
        mods=(Mod("rnd", 78, 2, FRND),),
        ir="DMUL",
        cls="f64",
    )
)
R(
    rows_for(
        "DFMA",
        0x02B,
        src_forms(2, DNA, DNA, FORMS3, kind="f64"),
        pre=(D, A(1, 1)),
        mods=(Mod("rnd", 78, 2, FRND),),
        ir="DFMA",
        cls="f64",
    )
)
# DSETP's register B answers to reuse flag 2 (bit 124), as nvdisasm 13.5 prints it
_DSETP_FORMS = {
    f: tuple(
        Reg(o.name, o.lo, neg=o.neg, abs=o.abs, neg_sym=o.neg_sym, reuse="c") if isinstance(o, Reg) and o.file == "R" else o
        for o in ops
    )
    for f, ops in src_forms(1, DNA, DNA, {1: "r", 2: "i", 3: "c"}, kind="f64").items()
}
R(
    rows_for(
        "DSETP",
        0x02A,
        _DSETP_FORMS,
        pre=(Pred("p", 81), Pred("q", 84), A(1, 1)),
        post=(P87,),
        mods=(Mod("cmp", 76, 4, DCMP), Mod("bop", 74, 2, BOP)),
        ir="DSETP",
        cls="f64",
    )
)

# --- conversions between every width: I2F (0x106 8/16/32-bit sources to F32/F16, 0x112 64-bit
# ones or F64 results), F2I (0x111: F64 sources or 64-bit results).  Sign and size print as one
# word, so each (sign, size) is its own row with those bits in its reference encoding.
ISZ = {0: "8", 1: "16", 2: "32", 3: "64"}
FDST = ((1, ".F16"), (2, ""), (3, ".F64"))
# What nvdisasm 13.5 accepts: 0x106 takes 8/16/32-bit sources to F16/F32 (an immediate only
# for 32-bit ones), 0x112 takes 8/16/32-bit sources to F64 only and 64-bit ones to any width
# (an immediate from 32 bits up).  A constant read at a narrow width prints 'c[0x0] [0x0]'.
for _op, _sizes in ((0x106, (0, 1, 2)), (0x112, (0, 1, 2, 3))):
    for _sz in _sizes:
        for _sg in (0, 1):
            _name = "" if (_sg, _sz) == (1, 2) else (".S" if _sg else ".U") + ISZ[_sz]
            _dst = FDST[:2] if _op == 0x106 else (FDST if _sz == 3 else FDST[2:])
            _forms = {1: "r", 5: "c", 6: "u"} | ({4: "i"} if _sz >= 2 else {})
            # (a signed source's immediate prints signed; its register shows no reuse flag)
            _ops = no_reuse(src_forms(1, {}, {}, _forms, kind="s" if _sg else "u"))
            if _sz < 2:
                _ops[5] = (CBuf("b", sep=" "),)
            R(
                rows_for(
                    "I2F",
                    _op,
                    _ops,
                    pre=(D,),
                    mods_before=(Mod("dst", 75, 2, _dst),),
                    mods=(Mod("sign", 74, 1, ((_sg, _name),)), Mod("rnd", 78, 2, ((0, ""), (1, ".RM"), (2, ".RP"), (3, ".RZ")))),
                    base=hi(_sz << 20 | _sg << 10 | _dst[-1][0] << 11),
                    ir="I2F",
                    cls="conv",
                )
            )
F2I_RND = ((0, ""), (1, ".FLOOR"), (2, ".CEIL"), (3, ".TRUNC"))

# 0x111: F64 sources to 16/32/64-bit integers, F16/F32 sources to 64-bit ones only; the
# immediate is a float of the source's width (F16: bits 32..47), a constant read from an F16
# 'c[0x0] [0x0]'; the register shows no reuse flag.  16-bit results and F16 sources have
# lowering keys of their own (the translator refuses them by name).
_F2I_SRC = {1: (".F16", "f16d", " "), 2: ("", "f32", ""), 3: (".F64", "f64", "")}
for _sg in (0, 1):
    _SZ = {1: ".S16" if _sg else ".U16", 2: "" if _sg else ".U32", 3: ".S64" if _sg else ".U64"}
    for _src, _sizes, _ir in ((2, (3,), "F2I"), (3, (2, 3), "F2I"), (3, (1,), "F2I.16"), (1, (3,), "F2I.F16")):
        _name, _kind, _sep = _F2I_SRC[_src]
        _ops = no_reuse(src_forms(1, FNA, FNA, FORMS1, kind=_kind))
        _ops[4] = (Imm("b", 32, 16, "f16d"),) if _src == 1 else _ops[4]
        _ops[5] = (CBuf("b", neg=63, abs=62, sep=_sep),)
        R(
            rows_for(
                "F2I",
                0x111,
                _ops,
                pre=(D,),
                mods=(
                    Mod("FTZ", 80, 1, ONOFF(".FTZ")),
                    Mod("size", 75, 2, tuple((z, _SZ[z]) for z in _sizes)),
                    Mod("src", 84, 2, ((_src, _name),)),
                    Mod("rnd", 78, 2, F2I_RND),
                    Mod("NTZ", 77, 1, ONOFF(".NTZ")),
                ),
                base=hi(_sg << 8 | _sizes[-1] << 11 | _src << 20),
                ir=_ir,
                cls="conv",
            )
        )

# --- uniform datapath
R(
    [
        Row("S2UR", 0x9C3, (UD, SReg("sr")), ir="S2R", cls="ctrl", uniform=True),
        Row("UMOV", 0xC82, (UD, Reg("b", 32, file="UR")), base=hi(0x08000000), ir="MOV", uniform=True),
        Row("UMOV", 0x882, (UD, Imm("b", 32, 32, "u")), ir="MOV", uniform=True),
    ]
)
R(
    rows_for(
        "IADD3",
        0x010,
        src_forms(2, INEG3, {}, {6: "ur"}),
        pre=(D, Pred("co0", 81, hide_pt=True), Pred("co1", 84, hide_pt=True), A(neg=True)),
        post=(Pred("ci0", 87, not_bit=90), Pred("ci1", 77, not_bit=80)),
        mods=(Mod("X", 74, 1, ONOFF(".X")),),
        base=CI87 | CI77,
        show_if=(("ci0", "X", 1), ("ci1", "X", 1)),
        ir="IADD3",
    )
)

# --- control: convergence barriers, calls (the return address travels in a register pair)
PH87 = Pred("pp", 87, not_bit=90, hide_pt=True)
R(
    [
        Row("BSSY", 0x945, (PH87, Reg("bar", 16, file="B"), Target("target", 34, 30)), base=0, ir="BSSY", cls="branch"),
        Row("BSYNC", 0x941, (PH87, Reg("bar", 16, file="B")), ir="BSYNC", cls="branch"),
        Row("WARPSYNC", 0x948, (PH87, Imm("mask", 32, 32, "u")), ir="NOP", cls="ctrl"),
        Row(
            "CALL.REL",
            0x944,
            (PH87, Target("target")),
            (),
            (Mod("NOINC", 86, 1, ((0, ""), (1, ".NOINC"))),),
            ir="CALL",
            cls="branch",
        ),
        Row(
            "RET",
            0x950,
            (PH87, Reg("ra", 24), Target("rt")),
            (),
            (Mod("ABS", 85, 1, ((0, ".REL"),)), Mod("NODEC", 86, 1, ((0, ""), (1, ".NODEC")))),
            ir="RET",
            cls="branch",
        ),
        Row("MEMBAR", 0x992, (), (), (Mod("sem", 76, 4, ((5, ".SC.VC"),)),), ir="MEMBAR", cls="ctrl"),
        Row("ERRBAR", 0x9AB, (), ir="NOP", cls="ctrl"),
    ]
)


# --- what nvcc -G adds: indexed constant loads, register -> uniform register moves, generic
# loads/stores (the LDG/STG layout; bits 64..66 of LD hold a predicate nvdisasm prints when not
# 0, held 0 here), absolute calls (relocated by the linker: refused by the lowering)
R(
    [
        Row(
            "LDC",
            0xB82,
            (D, CBufR("cb")),
            (),
            (Mod("size", 73, 3, MEMSZ), Mod("mode", 78, 2, ((0, ""), (1, ".IL"), (2, ".IS"), (3, ".ISL")))),
            ir="LDC",
            cls="mem",
        ),
        Row("R2UR", 0x3C2, (Pred("p", 81, hide_pt=True), UD, Reg("a", 24)), (), (Mod("OR", 84, 1, ONOFF(".OR")),), ir="R2UR"),
        Row(
            "LD",
            0x980,
            (D, GMEM),
            (),
            # .STRONG.GPU/.SYS (volatile accesses of -G code): shader-mem, nvdisasm 13.5 values 7, 10
            (
                Mod("E", 72, 1, ((1, ".E"),)),
                CACHE,
                Mod("size", 73, 3, MEMSZ),
                Mod("order", 77, 4, ((0, ""), (4, ".CONSTANT"), (7, ".STRONG.GPU"), (10, ".STRONG.SYS"))),
            ),
            hi(0x0C101900) | 4 << 32,
            free=((32, 6),),
            ir="LDG",
            cls="mem",
        ),
        Row(
            "ST",
            0x985,
            (GMEM, Reg("b", 32)),
            (),
            (
                Mod("E", 72, 1, ((1, ".E"),)),
                CACHE,
                Mod("size", 73, 3, MEMSZ),
                Mod("order", 77, 4, ((0, ""), (7, ".STRONG.GPU"), (10, ".STRONG.SYS"))),  # shader-mem
            ),
            hi(0x0C101904),
            free=((64, 6),),
            ir="STG",
            cls="mem",
        ),
        Row(
            "CALL.ABS",
            0x943,
            (PH87, Imm("target", 34, 47, "a4")),  # a word address: nvdisasm ignores bits 32..33
            (),
            (Mod("NOINC", 86, 1, ((0, ""), (1, ".NOINC"))),),
            free=((32, 2),),
            ir="CALL.ABS",
            cls="branch",
        ),
    ]
)

# --- what linked -G code adds (tests/shader_svc/cuda_build.link): the callee's stack frame in
# local memory (STL/LDL, the stack-overflow check S2R SR_LMEMHIOFF + BPT.TRAP), generic ATOM,
# YIELD, RET.ABS (absolute byte address field at 32..81)
LMEM = Mem("addr")
R(
    [
        Row("STL", 0x387, (LMEM, Reg("b", 32)), (), (Mod("size", 73, 3, MEMSZ), CACHE), hi(0x00100800), ir="STL", cls="mem"),
        Row("LDL", 0x983, (D, LMEM), (), (Mod("size", 73, 3, MEMSZ), CACHE), hi(0x00100800), ir="LDL", cls="mem"),
        Row(
            "ATOM",
            0x98A,
            (Pred("p", 81), D, Mem("addr", wide_bit=-1), Reg("b", 32)),
            (),
            (Mod("E", 72, 1, ((1, ".E"),)), Mod("op", 87, 4, ATOM_OPS)) + ATOM_MODS,
            base=hi(0x080000C4),
            free=((64, 6),),
            ir="ATOMG",
            cls="mem",
        ),
        Row("YIELD", 0x946, (PH87,), ir="NOP", cls="ctrl"),
        Row(
            "BPT",
            0x95C,
            (Sym("code", 34, 3, tuple((v, f"{v:#x}") for v in range(8)), hide=0),),
            (),
            (Mod("mode", 84, 3, ((3, ".TRAP"),)),),
            ir="BPT",
            cls="ctrl",
        ),
        Row(
            "RET",
            0x950,
            (PH87, Reg("ra", 24), Imm("rt", 34, 48, "s4")),  # a word address: bits 32..33 ignored
            (),
            (Mod("ABS", 85, 1, ((1, ".ABS"),)), Mod("NODEC", 86, 1, ((0, ""), (1, ".NODEC")))),
            free=((32, 2),),
            ir="RET.ABS",
            cls="branch",
        ),
    ]
)
SREGS[0x37] = "SR_LMEMHIOFF"
R([Row("WARPSYNC", 0x348, (PH87, Reg("mask", 32)), ir="NOP", cls="ctrl")])
# CS2R (0x805): a special register pair (SRZ = 255: zero) into D, .32 (bit 80 clear) one register;
# BREAK (0x942): leave a convergence barrier (second predicate at 87/90) — nvdisasm 13.5
SREGS[0xFF] = "SRZ"
R(
    [
        Row("CS2R", 0x805, (D, SReg("sr")), (), (Mod("w32", 80, 1, ((0, ".32"), (1, ""))),), ir="CS2R"),
        Row("BREAK", 0x942, (PH87, Reg("bar", 16, file="B")), ir="BREAK", cls="branch"),
    ]
)


# --- issue 31 (shader-decode): the rest of nvdisasm 13.5's set, each row from flipping every
# bit 12..104 of a seed word under nvdisasm (tests/shader_svc/isa_sweep.py prints such a sweep;
# test_sm86_disasm.py::test_more_rows_every_bit_flipped checks each row the same way).  No
# lowering key ('ir' left empty): the translator refuses them by name.  Fields a modifier of
# unverified meaning would need (BRX's offsets, ULEA.X/.HI...; R2P's byte select: decode-gaps) are held at
# the reference value, so such words are refused, never guessed.
MORE_FROM = len(ROWS)  # the rows below (tests sweep them all)


def U(name: str, lo: int, neg: int | None = None, sym: str = "-") -> Reg:
    return Reg(name, lo, file="UR", neg=neg, neg_sym=sym)


def UP(name: str, lo: int, not_bit: int | None = None, hide_pt: bool = False) -> Pred:
    return Pred(name, lo, not_bit=not_bit, file="UP", hide_pt=hide_pt)


P81H = Pred("p", 81, hide_pt=True)  # a predicate result nvdisasm leaves out while PT


PR = Sym("pr", 0, 0, ((0, "PR"),))  # the predicate register file as one operand (P2R/R2P)
U91 = 1 << 91  # the uniform datapath's form bit
FIXED = lambda name, s: Mod(name, 0, 0, ((0, s),))  # noqa: E731  (text the opcode implies)
R(
    rows_for(
        "FCHK",
        0x102,
        src_forms(1, {"b": 1}, {"b": 1}, {1: "r", 4: "i", 5: "c"}, fimm=True),
        pre=(Pred("p", 81), A(1, 1)),
        cls="conv",
        ir="FCHK",
    )
)
R(
    rows_for(
        "P2R",
        0x003,
        src_forms(1, {}, {}, FORMS1),
        pre=(D, PR, A()),
        mods=(Mod("bsel", 76, 2, ((0, ""), (1, ".B1"), (2, ".B2"), (3, ".B3"))),),
    )
)
R(rows_for("R2P", 0x004, src_forms(1, {}, {}, FORMS1, uimm=True), pre=(PR, A())))
R(rows_for("BMSK", 0x01B, src_forms(1, {}, {}, FORMS1, uimm=True), pre=(D, A()), mods=(Mod("W", 75, 1, ONOFF(".W")),)))
P87H = Pred("pp", 87, not_bit=90, hide_pt=True)  # NANOSLEEP/PMTRIG: nvdisasm leaves out PT
# ir NOP (shader-tex): __nanosleep(ns) sleeps "in [0, 2 * ns]" (CUDA Programming Guide), so 0 is exact
R(rows_for("NANOSLEEP", 0x15D, src_forms(1, {}, {}, FORMS1, uimm=True), pre=(P87H,), cls="ctrl", ir="NOP"))
R(
    rows_for(
        "I2I",
        0x038,
        src_forms(1, {}, {}, FORMS1),
        pre=(D,),
        mods=(Mod("dt", 76, 2, ((0, ".U8"), (1, ".S8"), (2, ".U16"), (3, ".S16"))), FIXED("st", ".S32.SAT")),
        cls="conv",
    )
)
R(
    rows_for(
        "FSET",
        0x00A,
        src_forms(1, FNA, FNA, FORMS1, fimm=True),
        pre=(D, A(1, 1)),
        post=(P87,),
        mods=(FIXED("BF", ".BF"), Mod("cmp", 76, 4, FCMP), Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("bop", 74, 2, BOP)),
    )
)
R(
    rows_for(
        "VABSDIFF",
        0x014,
        src_forms(2, {}, {}, FORMS3, uimm=True),
        pre=(D, P81H, A()),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))),),
        ir="VABSDIFF",
    )
)
R(
    [
        Row("LEPC", 0x34E, (D,), cls="ctrl"),
        Row("GETLMEMBASE", 0x3C0, (D,), cls="mem"),
        Row("SETLMEMBASE", 0x3C1, (Reg("a", 24),), cls="mem"),
        Row("LDGDEPBAR", 0x9AF, (), cls="mem", ir="NOP"),  # shader-mma: copies are synchronous (lower_async)
        Row("B2R", 0x31C, (D, Imm("b", 54, 4, "u")), cls="ctrl"),
        # shader-rest: PTX pmevent / pmevent.mask (ptxas 12.9: 'pmevent 3' -> PMTRIG 0x8): a
        # performance-monitor trigger, nothing a program observes (PTX ISA "pmevent"): a no-op
        Row("PMTRIG", 0x801, (P87H, Imm("b", 32, 16, "u")), cls="ctrl", ir="NOP"),
        Row(
            "PIXLD",
            0x925,
            (D, P81H),
            mods=(Mod("mode", 78, 3, ((0, ""), (1, ".COVMASK"), (2, ".CENTROID_OFFSET"), (4, ".INNER_COVERAGE"))),),
            cls="attr",
            ir="PIXLD",  # arch-gfx: .COVMASK in fragment programs (lower/gfx_pixel.py)
        ),
        Row(
            "ISBERD",
            0x923,
            (D, Mem("a", off=(40, 16), signed=False)),
            mods=(
                Mod("mode", 74, 6, ((0, ""), (1, ".U16"), (2, ".32"), (4, ".PATCH"), (8, ".PRIM"), (16, ".SKEW"), (32, ".O"))),
            ),
            cls="attr",
            ir="ISBERD",  # gfx-geom: the plain form in geometry programs (lower/gfx_geometry.py)
        ),
        Row(
            "MATCH",
            0x3A1,
            (Pred("p", 81), D, A()),
            mods=(Mod("mode", 79, 1, ((0, ".ALL"),)), Mod("U64", 73, 1, ONOFF(".U64"))),
            cls="warp",
            ir="MATCH",  # shader-tex: lower/match.py
        ),
        Row(
            "MATCH",
            0x3A1,
            (D, A()),
            mods=(Mod("mode", 79, 1, ((1, ".ANY"),)), Mod("U64", 73, 1, ONOFF(".U64"))),
            # .ALL's predicate field: nvdisasm 13.5 prints .ANY the same whatever it holds
            # (isa_sweep on ptxas's word, which has it PT)
            free=((81, 3),),
            cls="warp",
            ir="MATCH",
        ),
        Row(
            "BMOV",
            0x355,
            (D, Reg("b", 24, file="B")),
            mods=(FIXED("w", ".32"), Mod("CLEAR", 84, 1, ONOFF(".CLEAR"))),
            cls="ctrl",
            ir="BMOV",
        ),
    ]
)
R(
    rows_for(
        "BMOV",
        0x156,
        src_forms(1, {}, {}, FORMS1, uimm=True),
        pre=(Reg("d", 24, file="B"),),
        mods=(FIXED("w", ".32"), Mod("PQUAD", 84, 1, ONOFF(".PQUAD"))),
        cls="ctrl",
        ir="BMOV",
    )
)


# the uniform datapath (bit 91 set): forms 1 (b = UR@32, c = UR@64), 2 (b = UR@64, c = imm32),
# 4 (b = imm32, c = UR@64), as the vector ALU's forms
def _urows(mnemonic, op9, n_src, pre=(), post=(), mods=(), base=0, bneg=None, cneg=None, forms=(1, 4), bsym="-", imm="u", **kw):
    lay = {
        1: (U("b", 32, bneg, bsym), U("c", 64, cneg)),
        2: (U("b", 64), Imm("c", 32, 32, imm)),
        4: (Imm("b", 32, 32, imm), U("c", 64, cneg)),
    }
    out = []
    for f in forms:
        ops = lay[f][:n_src] if n_src == 2 else (lay[f][0] if f == 1 else Imm("b", 32, 32, imm),)
        out.append(Row(mnemonic, (f << 9) | op9, tuple(pre) + ops + tuple(post), (), tuple(mods), base | U91, uniform=True, **kw))
    return out


UA = U("a", 24)
R(_urows("USEL", 0x087, 1, pre=(UD, UA), post=(UP("pp", 87, 90),)))
R(_urows("UPOPC", 0x0BF, 1, pre=(UD,), bneg=63, bsym="~"))
R(_urows("UBREV", 0x0BE, 1, pre=(UD,)))
R(_urows("USGXT", 0x09A, 1, pre=(UD, UA), mods=(Mod("W", 75, 1, ONOFF(".W")), Mod("U32", 73, 1, ((0, ".U32"), (1, ""))))))
R(_urows("UBMSK", 0x09B, 1, pre=(UD, UA), mods=(Mod("W", 75, 1, ONOFF(".W")),)))
R(_urows("UPRMT", 0x096, 2, pre=(UD, UA), mods=(Mod("mode", 72, 3, ((0, ""),)),)))
R(
    _urows(
        "ULOP3",
        0x092,
        2,
        pre=(UP("p", 81, hide_pt=True), UD, UA),
        post=(Imm("lut", 72, 8, "u"), UP("pp", 87, 90)),
        mods=(FIXED("LUT", ".LUT"), Mod("PAND", 80, 1, ONOFF(".PAND"))),
    )
)
R(
    _urows(
        "UISETP",
        0x08C,
        1,
        pre=(UP("p", 81), UP("q", 84), UA),
        post=(UP("pp", 87, 90), UP("ex", 68, 71)),
        mods=(
            Mod("cmp", 76, 3, ICMP),
            Mod("U32", 73, 1, ((0, ".U32"), (1, ""))),
            Mod("bop", 74, 2, BOP),
            Mod("EX", 72, 1, ONOFF(".EX")),
        ),
        show_if=(("ex", "EX", 1),),
        base=EX68,
        imm="s",
    )
)
R(_urows("USHF", 0x099, 2, pre=(UD, UA), mods=SHF_MODS, forms=(1, 2, 4)))
R(
    _urows(
        "ULEA",
        0x091,
        1,
        pre=(UD, UP("co", 81, hide_pt=True), U("a", 24, 72)),
        post=(Imm("s", 75, 5, "u"),),
        bneg=63,
        mods=(Mod("X", 74, 1, ((0, ""),)), Mod("HI", 80, 1, ((0, ""),))),
    )
)
R(
    _urows(
        "UIMAD",
        0x0A4,
        2,
        pre=(UD, UA),
        cneg=75,
        imm="s",
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("X", 74, 1, ((0, ""),))),
        forms=(1, 2, 4),
    )
)
R(
    _urows(
        "UIMAD",
        0x0A5,
        2,
        pre=(UD, UP("co", 81, hide_pt=True), UA),
        cneg=75,
        mods=(FIXED("WIDE", ".WIDE"), Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("X", 74, 1, ((0, ""),))),
        forms=(1, 4),
        imm="s",
    )
)

# indirect branches (jump tables): predicate, target register, a 48-bit offset in 4-byte units
# printed after the register ('BRX P0, R2 0x10'; left out while 0); .INC/.DEC held 0
R(
    [
        Row(m, opc, (Pred("pp", 87, not_bit=90, hide_pt=True), Reg("a", 24), Imm("rt", 34, 48, "x4")), cls="branch", ir=ir)
        for m, opc, ir in (("BRX", 0x949, "BRX"), ("JMX", 0x94C, ""))  # shader-ctl: BRX lowered (lower/indirect.py)
    ]
)
# shared-memory atomics: the address as LDS/STS's ([Ra.X4+off]), op 87..90, type 73..74
R(
    [
        Row(
            "ATOMS",
            0x38C,
            (D, SMEM, Reg("b", 32)),
            mods=(Mod("op", 87, 4, ATOM_OPS), Mod("type", 73, 2, ((0, ""), (1, ".S32"), (2, ".64")))),
            ir="ATOMS",  # shader-mem
            cls="mem",
        ),
        Row(
            "ATOMS",
            0x38D,
            (D, SMEM, Reg("b", 32), Reg("c", 64)),
            # bit 88: .SPIN after .CAST (nvdisasm 13.5; ignored with .CAS: held 0) -- shader-mem
            mods=(
                Mod("op", 87, 2, ((0, ".CAS"), (1, ".CAST"), (3, ".CAST.SPIN"))),
                Mod("type", 73, 2, ((0, ""), (1, ".S32"), (2, ".64"))),
            ),
            ir="ATOMS.CAS",
            cls="mem",
        ),
        Row(
            "LDSM",
            0x83B,
            (D, Mem("addr")),
            mods=(
                FIXED("w", ".16"),
                Mod("mode", 78, 2, ((0, ".M88"), (1, ".MT88"), (2, ".M816"))),
                Mod("n", 72, 2, ((0, ""), (1, ".2"), (2, ".4"))),
            ),
            ir="LDSM",  # shader-mma
            cls="mem",
        ),
        Row(
            "QSPC",
            0x3AA,
            (Pred("p", 81), D, Mem("addr")),
            mods=(Mod("E", 72, 1, ONOFF(".E")), Mod("space", 73, 2, ((0, ".G"), (1, ".L"), (2, ".S")))),
            ir="QSPC",  # shader-mem
            cls="mem",
        ),
        Row(
            "CCTL",
            0x98F,
            (Mem("addr", off=(32, 32)),),
            mods=(
                Mod("E", 72, 1, ONOFF(".E")),
                Mod("cache", 78, 2, ((0, ""), (1, ".U"), (2, ".C"))),
                Mod("op", 87, 2, ((0, ".PF1"), (1, ".PF2"), (2, ".WB"))),
            ),
            ir="CCTL",  # shader-ctl (lower/cache.py)
            cls="mem",
        ),
        Row("SETCTAID", 0x31F, (Reg("a", 24),), mods=(Mod("dim", 78, 2, ((0, ".X"), (1, ".Y"), (2, ".Z"))),), cls="ctrl"),
    ]
)
R(
    rows_for(
        "VABSDIFF4",
        0x015,
        src_forms(2, {}, {}, FORMS3, uimm=True),
        pre=(D, P81H, A()),
        mods=(Mod("U8", 73, 1, ((0, ".U8"), (1, ""))), Mod("ACC", 75, 1, ONOFF(".ACC"))),
    )
)
R(
    rows_for(
        "IDP",
        0x026,
        src_forms(2, {}, {}, {1: "rr", 5: "cr"}),
        pre=(D, A()),
        mods=(FIXED("n", ".4A"), Mod("signs", 73, 2, ((0, ".U8.U8"), (1, ".S8.U8"), (2, ".U8.S8"), (3, ".S8.S8")))),
    )
)
R(
    [
        Row(m, opc, (P87H, U("a", 24), Imm("rt", 34, 48, "x4")), base=U91, cls="branch", ir=ir)
        # shader-rest: BRXU lowered as BRX (lower/indirect.py: its table read by ULDC's indexed form)
        for m, opc, ir in (("BRXU", 0x958, "BRX"), ("JMXU", 0x959, ""))
    ]
)
# FSWZADD's pattern: four 2-bit fields, field k (bits 2k) printing letters 6 - 2k and 7 - 2k:
# 0 'PP', 1 'PN', 2 'NP', 3 'ZP' (nvdisasm 13.5)
SWIZZLE = tuple((v, "".join(("PP", "PN", "NP", "ZP")[v >> (2 * k) & 3] for k in (3, 2, 1, 0))) for v in range(256))
UPR = Sym("upr", 0, 0, ((0, "UPR"),))
R(
    [
        Row(
            "CCTLL",
            0x990,
            (Mem("addr"),),
            mods=(Mod("op", 87, 2, ((0, ".PF1"), (1, ".PF2"), (2, ".WB"))),),
            cls="mem",
            ir="CCTLL",
        ),
        Row(
            "AL2P",
            0x920,
            (D, Reg("a", 24, suffix="@hiderz"), Imm("b", 40, 11, "s")),  # RZ left out
            mods=(Mod("size", 74, 2, ((0, ""), (1, ".64"), (2, ".96"), (3, ".128"))), Mod("O", 79, 1, ONOFF(".O"))),
            cls="attr",
            ir="AL2P",  # arch-gfx: lower/gfx_indexed.py
        ),
        Row(
            "FSWZADD",
            0x822,
            (D, A(), Reg("b", 64), Sym("swz", 32, 8, SWIZZLE)),
            mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("rnd", 78, 2, FRND), Mod("NDV", 77, 1, ONOFF(".NDV"))),
        ),
        Row(
            "UP2UR",
            0x883,
            (UD, UPR, UA, Imm("b", 32, 32, "u")),
            mods=(Mod("bsel", 76, 2, ((0, ""), (1, ".B1"), (2, ".B2"), (3, ".B3"))),),
            base=U91,
            uniform=True,
        ),
        Row("UR2UP", 0x884, (UPR, UA, Imm("b", 32, 32, "u")), base=U91, uniform=True),
        Row(
            "MOVM",
            0x23A,
            (D, A()),
            mods=(FIXED("w", ".16"), Mod("mode", 78, 2, ((0, ".MT88"), (1, ".M832"), (2, ".M864")))),
            ir="MOVM",  # shader-mma
            cls="mem",
        ),
        Row(
            "RPCMOV",
            0x352,
            (Sym("rpc", 31, 1, ((0, "Rpc.LO"), (1, "Rpc.HI"))), Reg("b", 32)),
            mods=(FIXED("w", ".32"),),
            cls="ctrl",
        ),
        Row("RPCMOV", 0x353, (D, Sym("rpc", 31, 1, ((0, "Rpc.LO"), (1, "Rpc.HI")))), mods=(FIXED("w", ".32"),), cls="ctrl"),
    ]
)
R(
    rows_for(
        "CLMAD",
        0x02C,
        src_forms(2, {}, {}, {1: "rr", 3: "rc", 5: "cr"}),
        pre=(D, A()),
        mods=(Mod("half", 77, 1, ((0, ".LO"), (1, ".HI"))),),
    )
)
R(
    [
        Row(
            "UPLOP3.LUT",
            0x89C,
            (
                UP("p", 81),
                UP("q", 84),
                UP("a", 87, 90),
                UP("b", 77, 80),
                UP("c", 68, 71),
                Imm("lut", 64, 3, "u", hi_lo=72, hi_width=5),
                Imm("lut2", 16, 8, "u"),
            ),
            uniform=True,
        ),
        # JMP: an absolute target (48 bits at 34, in 4-byte units); .U/.DIV/.INC/.DEC held 0
        Row("JMP", 0x94A, (P87H, Imm("t", 34, 47, "a4")), cls="branch"),
        # DEPBAR: bare (bit 47 clear) or .LE SBn, count (38..43) (bit 47 set); the optional
        # set {..} (32..37) held empty.  Lowered as NOP (as SM53's; shader-surf): it waits for
        # variable-latency results (ptxas puts it after SULD .128), complete when translated
        # shader-ndv: the set is decoded ('{5}', '{3,2,1}': the scoreboards also waited on, bit
        # 32 + k for SBk, printed from the highest; nvdisasm 13.5, ptxas's tex3DGrad quad loop)
        Row("DEPBAR", 0x91A, (DEPBAR_SET,), cls="mem", ir="NOP"),
        Row(
            "DEPBAR",
            0x91A,
            (Sym("sb", 44, 3, tuple((i, f"SB{i}") for i in range(6))), Imm("n", 38, 6, "u"), DEPBAR_SET),
            mods=(FIXED("LE", ".LE"),),
            base=1 << 47,
            cls="mem",
            ir="NOP",
        ),
    ]
)
# packing conversions: two values into the bytes/halves of the destination, C's other half kept
# (C's .H1 select at 72 held 0)
R(
    rows_for(
        "F2IP",
        0x043,
        src_forms(2, {}, {}, {1: "rr", 4: "ir", 5: "cr"}, fimm=True),
        pre=(D, A()),
        mods=(
            Mod("dt", 76, 2, ((0, ".U8"), (1, ".S8"))),
            FIXED("st", ".F32"),
            Mod("NTZ", 74, 1, ONOFF(".NTZ")),
            Mod("RELU", 75, 1, ONOFF(".RELU")),
        ),
        cls="conv",
    )
)
R(
    rows_for(
        "I2IP",
        0x039,
        src_forms(2, {}, {}, {1: "rr", 4: "ir", 5: "cr"}),
        pre=(D, A()),
        mods=(
            Mod("dt", 76, 2, ((0, ".U8"), (1, ".S8"), (2, ".U16"), (3, ".S16"))),
            FIXED("st", ".S32"),
            Mod("sat", 74, 2, ((0, ".SAT"), (1, ""), (2, ".SATRELU"))),
        ),
        cls="conv",
    )
)
R(
    [
        Row(
            "ISBEWR",
            0x927,
            (Mem("a", off=(40, 16), signed=False), Reg("b", 32)),
            mods=(
                Mod("O", 79, 1, ((1, ".O"),)),
                Mod("size", 74, 2, ((0, ""), (1, ".U16"), (2, ".32"))),
                Mod("SKEW", 78, 1, ONOFF(".SKEW")),
            ),
            base=1 << 79,
            cls="attr",
        )
    ]
)
# gfx-geom: .CUT in the register form only (nvdisasm 13.5 prints the immediate form's as .???2)
for _forms, _modes in (
    ({1: "r"}, ((1, ".EMIT"), (2, ".CUT"), (3, ".EMIT_THEN_CUT"))),
    ({4: "i"}, ((1, ".EMIT"), (3, ".EMIT_THEN_CUT"))),
):
    R(
        rows_for(
            "OUT",
            0x124,
            src_forms(1, {}, {}, _forms),
            pre=(D, A()),
            mods=(Mod("mode", 78, 2, _modes),),
            base=1 << 78,
            cls="attr",
            ir="OUT",  # gfx-geom: lower/gfx_geometry.py
        )
    )
# HSET2 (register form): A/B with a half swizzle (74..75 / 60..61: H1_H0 shown as nothing, .F32,
# .H0_H0, .H1_H1), |x| and -x; the result as a boolean float (.BF) or mask per half
R(
    [
        Row(
            "HSET2",
            0x233,
            (
                D,
                Reg("a", 24, neg=72, abs=73, reuse="a", suffix="@swz:74"),
                Reg("b", 32, neg=63, abs=62, reuse="b", suffix="@swz:60"),
                P87,
            ),
            mods=(
                Mod("BF", 71, 1, ONOFF(".BF")),
                Mod("cmp", 76, 4, FCMP),
                Mod("FTZ", 80, 1, ONOFF(".FTZ")),
                Mod("bop", 69, 2, BOP),
            ),
            ir="HSET2",  # lowered by sm86/lower_alu.py (shader-alu)
            cls="conv",
        )
    ]
)


# operands nvdisasm 13.5 prints no '.reuse' on (it prints the flag as nothing, or refuses the
# word): without a reuse slot the decoder refuses a word with that flag set
_NO_REUSE = {"FCHK": "ab", "NANOSLEEP": "b", "MATCH": "a", "BMOV": "b", "MOVM": "a", "OUT": "ab", "HSET2": "b"}
# (and older rows the whole-table sweep found: one-source ops, SHFL's and REDUX's source)
_NO_REUSE.update({"MUFU": "b", "POPC": "b", "BREV": "b", "FLO": "b", "FRND": "b", "F2F": "b", "SHFL": "a", "REDUX": "a"})


def _drop_reuse(row: Row) -> Row:
    from dataclasses import replace

    names = _NO_REUSE.get(row.mnemonic.split(".")[0], "")
    ops = tuple(replace(o, reuse=None) if isinstance(o, Reg) and o.name in names else o for o in row.operands)
    return replace(row, operands=ops)


ROWS[:] = [_drop_reuse(r) for r in ROWS]


# --- half precision (issue 31; shader-half).  nvdisasm 13.5, every bit flipped on ptxas's
# words: A = R@24 (-72, |x| 73, swizzle 74..75), B = R@32 (-63, |x| 62, swizzle 60..61), HFMA2's
# C = R@64 (swizzle 81..82, |x| 83, -84); swizzle 0 = H1_H0 (printed as nothing), 1 = .F32,
# 2 = .H0_H0, 3 = .H1_H1.  .F32 78 (an f32 result), .SAT 77, .FTZ 80; .FMZ 76 is left out (with
# .FTZ nvdisasm prints '.INVALID3'), as are .RELU 79 and .BF16_V2 85: those words are refused.
# HSETP2: comparison 76..79, .H_AND 71, .FTZ 80, combining op 69..70, P 81, Q 84, the combined
# predicate 87/90.  HMNMX2: .NAN 81, .XORSIGN 82, the min/max predicate 87/90.  F2F.F16.F32
# (0x104, register form): destination type 75..76 = 1, source type 84..85 = 2 (the row's own),
# rounding 78..79, .FTZ 80, the source's |x| 62 / -x 63.
def _h(name: str, lo: int, neg: int, abs_: int, swz: int, reuse: str | None) -> Reg:
    return Reg(name, lo, neg=neg, abs=abs_, reuse=reuse, suffix=f"@swz:{swz}")


HA, HB, HC = _h("a", 24, 72, 73, 74, "a"), _h("b", 32, 63, 62, 60, "b"), _h("c", 64, 84, 83, 81, "c")
HF32 = Mod("F32", 78, 1, ((0, ""), (1, ".F32")))
R(
    [
        Row(
            "HMUL2",
            0x232,
            (D, HA, HB),
            (HF32,),
            (Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("SAT", 77, 1, ONOFF(".SAT"))),
            free=((60, 2), (74, 2)),
            ir="HMUL2",
            cls="conv",
        ),
        Row(
            "HFMA2",
            0x231,
            (D, HA, HB, HC),
            (HF32,),
            (Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("SAT", 77, 1, ONOFF(".SAT"))),
            free=((60, 2), (74, 2), (81, 2)),
            ir="HFMA2",
            cls="conv",
        ),
        Row(
            "HMNMX2",
            0x240,
            (D, HA, HB, P87),
            (HF32,),
            (Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("NAN", 81, 1, ONOFF(".NAN")), Mod("XORSIGN", 82, 1, ONOFF(".XORSIGN"))),
            free=((60, 2), (74, 2)),
            ir="HMNMX2",
            cls="conv",
        ),
        Row(
            "HSETP2",
            0x234,
            (Pred("p", 81), Pred("q", 84), HA, _h("b", 32, 63, 62, 60, None), P87),  # B: no reuse flag
            (),
            (
                Mod("cmp", 76, 4, FCMP),
                Mod("H_AND", 71, 1, ONOFF(".H_AND")),
                Mod("FTZ", 80, 1, ONOFF(".FTZ")),
                Mod("bop", 69, 2, BOP),
            ),
            free=((60, 2), (74, 2)),
            ir="HSETP2",
            cls="conv",
        ),
    ]
)
R(
    rows_for(
        "F2F",
        0x104,
        {1: (Reg("b", 32, neg=63, abs=62),)},  # no reuse flag on B (nvdisasm 13.5)
        pre=(D,),
        mods=(Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("types", 75, 0, ((0, ".F16.F32"),)), Mod("rnd", 78, 2, F2F_RND)),
        base=hi(0x0020_0800),
        ir="F2F.F16",
        cls="conv",
    )
)


# --- shader-mem (issue 31): memory rows the atomic kernels of the corpus need; every bit flipped
# under nvdisasm 13.5 on nvcc's words.  Generic ATOM.CAS (-G code): as ATOMG.CAS, the address
# printed without .64 (bit 91 refused), bit 87 .CAST.  ATOMS.POPC.INC.32 (ptxas's shared atomicAdd
# of 1 with the result unused): the address register at 24 printed with the uniform register
# 64..69 ('[R6+URZ]'); only URZ and offset 0 (bits 40..63) are decoded, as a symbol of the
# register; the size 73..74 (0 = .32); the other bits as nvcc sets them.
R(
    [
        Row(
            "ATOM",
            0x38B,
            (Pred("p", 81), D, Mem("addr"), Reg("b", 32), Reg("c", 64)),
            (),
            # the CAS's types: no .F32/.F16x2 (nvdisasm: .INVALID4)
            (
                Mod("E", 72, 1, ((1, ".E"),)),
                Mod("op", 87, 1, ((0, ".CAS"),)),
                CACHE,
                Mod("type", 73, 3, ((0, ""), (1, ".S32"), (2, ".64"))),
                ATOM_MODS[2],
            ),
            base=hi(0x10E100),  # .E, .STRONG.GPU, the default cache policy
            ir="ATOMG.CAS",
            cls="mem",
        ),
        Row(
            "ATOMS",
            0xF8C,
            (D, Sym("addr", 24, 8, tuple((r, f"[{'RZ' if r == 255 else f'R{r}'}+URZ]") for r in range(256)))),
            mods=(FIXED("op", ".POPC.INC"), Mod("size", 73, 2, ((0, ".32"),))),
            base=hi(0x0D00003F),  # bits 88, 90, 91 as nvcc sets them (87..90 otherwise refused)
            ir="ATOMS.POPC.INC",
            cls="mem",
        ),
    ]
)

# --- shader-alu (issue 31): HADD2/HMUL2/HFMA2 with a packed pair of half immediates (bits 32..63,
# printed high half first): HADD2 form 2, HMUL2 form 4 (2 is refused), HFMA2 form 2 (the register at
# 64 as B, answering to reuse flag 1, the pair as C) and form 4 (the pair as B, C at 64);
# .F32 (78) prints one immediate: refused here.  Bits flipped under nvdisasm 13.5 on nvcc's 'HADD2 R0, R2.H0_H0, 3, 3',
# 'HMUL2 R7, R2, -2.5, -2.5' and 'HFMA2 R7, R2, R7, 0.25, 0.25'.
_HIMM = (Imm("bh", 48, 16, "f16"), Imm("bl", 32, 16, "f16"))
_HMODS = (Mod("FTZ", 80, 1, ONOFF(".FTZ")), Mod("SAT", 77, 1, ONOFF(".SAT")))
R(
    [
        Row("HADD2", 0x430, (D, HA) + _HIMM, (), _HMODS, free=((74, 2),), ir="HADD2.I", cls="conv"),
        Row("HMUL2", 0x832, (D, HA) + _HIMM, (), _HMODS, free=((74, 2),), ir="HMUL2.I", cls="conv"),
        Row(
            "HFMA2",
            0x431,
            (D, HA, _h("b", 64, 84, 83, 81, "b")) + _HIMM,
            (),
            _HMODS,
            free=((74, 2), (81, 2)),
            ir="HFMA2.I",
            cls="conv",
        ),
        Row("HFMA2", 0x831, (D, HA) + _HIMM + (HC,), (), _HMODS, free=((74, 2), (81, 2)), ir="HFMA2.I", cls="conv"),
    ]
)


# --- shader-gaps2 (issue 31): what nvcc -G's 64-bit generic atomics and __reduce_*_sync add,
# every bit 12..104 of nvcc's words flipped under nvdisasm 13.5 (tests/shader_svc/isa_sweep.py).
# LD 0x980 with bit 91 clear and ST 0x385 (the emulated CAS's fallback path): the Volta-style
# generic address '[R8]' -- no uniform register, a signed 32-bit offset at 32..63, the register
# pair named by .E (required: 'LD.64 [R8]' is a 32-bit address, refused here), not printed
# '.64'; bits 76, 81..83, 87..90 do not change the text (held as nvcc sets them, 0).  ST's data
# register sits at 64 (its 0x985 form: 32).  WARPSYNC R's bit 86 prints .EXCLUSIVE (the
# immediate form ignores it); a no-op here as WARPSYNC is.
VMEM = Mem("addr", off=(32, 32))
R(
    [
        Row(
            "LD",
            0x980,
            (D, VMEM),
            (),
            (
                Mod("E", 72, 1, ((1, ".E"),)),
                CACHE,
                Mod("size", 73, 3, MEMSZ),
                Mod("order", 77, 4, ((0, ""), (4, ".CONSTANT"), (7, ".STRONG.GPU"), (10, ".STRONG.SYS"))),
            ),
            hi(0x00100100),
            ir="LDG",
            cls="mem",
        ),
        Row(
            "ST",
            0x385,
            (VMEM, Reg("b", 64)),
            (),
            (
                Mod("E", 72, 1, ((1, ".E"),)),
                CACHE,
                Mod("size", 73, 3, MEMSZ),
                Mod("order", 77, 4, ((0, ""), (7, ".STRONG.GPU"), (10, ".STRONG.SYS"))),
            ),
            hi(0x00100100),
            ir="STG",
            cls="mem",
        ),
        Row(
            "WARPSYNC",
            0x348,
            (PH87, Reg("mask", 32)),
            (),
            (Mod("EXCL", 86, 1, ((1, ".EXCLUSIVE"),)),),
            base=1 << 86,
            ir="NOP",
            cls="ctrl",
        ),
    ]
)


# --- textures in compute kernels (issue 31; shader-tex), from nvcc 13.5's sm_86 code of
# tex2DGrad / tex2DLod / PTX txq on CUDA texture objects, printed by nvdisasm 13.5:
# - TXD.B (0x36D: the bound TXD's opcode less bit 11, as TEX/TEX.B): the TEX.B layout, the
#   handle register first in Ra's tuple ("TXD.B R12, R14, R4, R12, 2D": Ra = R4 the handle, R5,
#   R6 the point; Rb..Rb+3 the gradients);
# - TEX with bit 60 (nvdisasm prints ".SCR" after the mnemonic, before .B and the LOD): what
#   ptxas writes for tex.level (tex2DLod) in a kernel; bound and bindless;
# (TXQ as ptxas writes it in a kernel has bits 81..84 clear: TXQ_FREE above.)
TEX_SCR = Mod("SCR", 60, 1, ((1, ".SCR"),))
R(
    [
        Row(
            "TXD",
            0x36D,
            TEX_DSTS + (Reg("b", 32), TXD_DIM, TEX_MASK),
            (TEX_B,),
            (Mod("LC", 87, 1, ONOFF(".LC")), Mod("AOFFI", 76, 1, ONOFF(".AOFFI")), TEXCACHE, NODEP),
            TEX_BASE | 1 << 59,
            refuse=(("b", 255), ("a", 255)),
            ir="TXD.B",
            cls="tex",
        ),
        Row(
            "TEX",
            0xB60,
            TEX_DSTS + (Reg("b", 32, suffix="@hiderz"),) + TEX_IDX + (TEX_DIM, TEX_MASK),
            (TEX_SCR,),
            (TEXCACHE, TEX_LOD, Mod("DC", 78, 1, ONOFF(".DC")), TEX_NDV, NODEP),
            TEX_BASE | 1 << 60,
            refuse=(("a", 255),),
            ir="TEX",
            cls="tex",
        ),
        Row(
            "TEX",
            0x361,
            TEX_DSTS + (Reg("b", 32), TEX_DIM, TEX_MASK),
            (TEX_SCR, TEX_B),
            (TEXCACHE, TEX_LOD, TEX_NDV, NODEP),
            TEX_BASE | 1 << 59 | 1 << 60,
            refuse=(("b", 255), ("a", 255)),
            ir="TEX.B",
            cls="tex",
        ),
    ]
)


# --- shader-u (issue 31): lowering keys of rows written decode-only (``ir`` was ''), so the
# translator's rules reach them; the rows' encodings are unchanged.  UIMAD with .WIDE is its own
# key (a register pair written), UPLOP3.LUT is UPLOP3.
def _lowering_key(r: Row) -> str:
    m = r.mnemonic.split(".")[0]
    if m == "UIMAD" and any(x.name == "WIDE" for x in r.mods):
        return "UIMAD.WIDE"
    return m


# UIMAD: ptxas writes the hidden carry-in !UPT (87..90) and, without .WIDE, the hidden carry-out
# UPT (81..83) as for IMAD (nvcc 13's 'UIMAD UR6, UR9, UR6, 0x3039' and 'UIMAD.WIDE.U32 UR4, UR9,
# -0x61c88647, URZ'); the reference encoding is that word's
def _uimad_base(r: Row) -> Row:
    if r.mnemonic == "UIMAD":
        wide = any(x.name == "WIDE" for x in r.mods)
        return replace(r, base=r.base | CI87 | (0 if wide else hi(0xE0000)))
    return r


ROWS[:] = [_uimad_base(r) for r in ROWS]


# ULEA as LEA (nvcc 13 writes 'ULEA UR4, UR4, UR5, 0x3' and 'ULEA.HI.SX32 UR5, UR5, UR7, 0xc'
# for uniform address arithmetic): the C register at 64 (shown with .HI unless .SX32), the
# carry-in at 87..90 (shown with .X), .HI/.X/.SX32 at 80/74/73; the reference encoding holds
# URZ in C and !UPT in the carry-in, as ptxas writes them.  Replaces the rows that held C and
# the carry-in at 0 (which refused every word nvcc writes).
def _ulea_rows() -> list[Row]:
    out = []
    for f, b in ((1, U("b", 32, 63)), (4, Imm("b", 32, 32, "u"))):
        out.append(
            Row(
                "ULEA",
                (f << 9) | 0x091,
                (UD, UP("co", 81, hide_pt=True), U("a", 24, 72), b, U("c", 64), Imm("s", 75, 5, "u"), UP("ci", 87, 90)),
                (),
                LEA_MODS,
                CI87 | 0x3F << 64 | U91,
                show_if=(("c", "HI", 1), ("c", "SX32", 0), ("ci", "X", 1)),
                exclude=((("HI", 0), ("SX32", 1)),),
                uniform=True,
            )
        )
    return out


_at = next(k for k, r in enumerate(ROWS) if r.mnemonic == "ULEA")
ROWS[:] = ROWS[:_at] + _ulea_rows() + [r for r in ROWS[_at:] if r.mnemonic != "ULEA"]
_KEYED = set(
    "UIMAD UISETP ULEA ULOP3 UPLOP3 USEL USHF UPRMT UPOPC UBMSK UBREV UP2UR UR2UP USGXT UF2FP "
    "I2I BMSK FSET IDP VABSDIFF4 P2R R2P I2IP "
    "FSWZADD F2IP".split()  # (shader-u2)
)
ROWS[:] = [replace(r, ir=_lowering_key(r)) if not r.ir and r.mnemonic.split(".")[0] in _KEYED else r for r in ROWS]
# --- shader-mma (issue 31): tensor-core and asynchronous-copy forms nvcc 13 emits for mma.sync /
# cp.async, each layout found by flipping every bit of a compiled word under nvdisasm 13.5.
# LDGSTS with bit 76 set: no uniform register added (bits 64..69 are then free: ptxas leaves
# the memory descriptor's UR there, printed only with desc[] at bit 101); the source register is
# then always a pair (nvdisasm refuses the word with bit 70 clear).
# IMMA's shape: bits 75 and 86 both clear .8816 (above), 86 alone .16816, both .16832.
R(
    [
        Row(
            "LDGSTS.E",
            0xFAE,
            (
                Mem("dst", 16, off=(44, 20)),
                Mem("src", 24, wide_bit=-1, off=(32, 12)),
                Pred("pp", 87, not_bit=90, hide_pt=True),
            ),
            (),
            (
                Mod("BYPASS", 81, 1, ((0, ".BYPASS"), (1, ""))),
                SU_CACHE,
                Mod("size", 73, 3, ((4, ""), (5, ".64"), (6, ".128"))),
                Mod("ZFILL", 82, 1, ONOFF(".ZFILL")),
            ),
            1 << 91 | 4 << 73 | 1 << 76 | 1 << 70,
            free=((64, 6),),
            ir="LDGSTS",
            cls="mem",
        ),
    ]
    + [
        Row(
            f"IMMA.{shape}",
            0x237,
            (D, Reg("a", 24, suffix=".ROW", reuse="a"), Reg("b", 32, suffix=".COL", reuse="b"), Reg("c", 64), MMA_UP),
            (),
            (
                Mod("atype", 76, 2, ((0, ".U8"), (1, ".S8"))),
                Mod("btype", 78, 2, ((0, ".U8"), (1, ".S8"))),
                Mod("SAT", 82, 1, ONOFF(".SAT")),
            ),
            1 << 74 | bits,
            ir="IMMA",
        )
        for shape, bits in (("16816", 1 << 86), ("16832", 1 << 86 | 1 << 75))
    ]
    + [
        # 4-bit IMMA: bit 83 (A) and 84 (B) make the types .U4/.S4; shapes .8832 (85), .16832
        # (75 and 86, as the 8-bit one), .16864 (85 and 86)
        Row(
            f"IMMA.{shape}",
            0x237,
            (D, Reg("a", 24, suffix=".ROW", reuse="a"), Reg("b", 32, suffix=".COL", reuse="b"), Reg("c", 64), MMA_UP),
            (),
            (
                Mod("atype", 76, 2, ((0, ".U4"), (1, ".S4"))),
                Mod("btype", 78, 2, ((0, ".U4"), (1, ".S4"))),
                Mod("SAT", 82, 1, ONOFF(".SAT")),
            ),
            1 << 74 | 1 << 83 | 1 << 84 | bits,
            ir="IMMA",
        )
        for shape, bits in (("8832", 1 << 85), ("16832", 1 << 86 | 1 << 75), ("16864", 1 << 86 | 1 << 85))
    ]
    + [
        # HMMA m16n8k4 (tf32 only in PTX): shape bit 78 (75 clear)
        Row(
            "HMMA.1684",
            0x23C,
            (D, Reg("a", 24, neg=72, reuse="a"), Reg("b", 32, neg=63, reuse="b"), Reg("c", 64), MMA_UP),
            (),
            (Mod("acc", 76, 1, ((1, ".F32"),)), Mod("src", 82, 2, ((2, ".TF32"),))),
            1 << 78 | 1 << 76 | 2 << 82,
            ir="HMMA",
        )
    ]
    + [
        # BMMA m16n8k256: bit 76 (75 clear); .AND 78, .POPC 80 as the rows above
        Row(
            "BMMA.168256",
            0x23D,
            (D, Reg("a", 24, suffix=".ROW", reuse="a"), Reg("b", 32, suffix=".COL", reuse="b"), Reg("c", 64), MMA_UP),
            (),
            (Mod("op", 78, 1, ((0, ".XOR"), (1, ".AND"))), Mod("POPC", 80, 1, ((1, ".POPC"),))),
            1 << 74 | 1 << 80 | 1 << 76,
            ir="BMMA",
        )
    ]
)


# --- shader-ctl: CCTL's operation is 4 bits (87..90): nvdisasm 13.5 prints 3 .IV, 5 .RS, 9 .PML2,
# 10 .DML2, 11 .RML2 besides the row above's 0..2 (4, 6..8, 12..15 refused); ptxas 12.9 emits
# .PML2 for prefetch.global.L2::evict_last, .DML2 for applypriority.global.L2::evict_normal, .RML2
# for discard.global.L2 (lower/cache.py)
R(
    [
        Row(
            "CCTL",
            0x98F,
            (Mem("addr", off=(32, 32)),),
            mods=(
                Mod("E", 72, 1, ONOFF(".E")),
                Mod("cache", 78, 2, ((0, ""), (1, ".U"), (2, ".C"))),
                Mod("op", 87, 4, ((3, ".IV"), (5, ".RS"), (9, ".PML2"), (10, ".DML2"), (11, ".RML2"))),
            ),
            base=3 << 87,
            ir="CCTL",
            cls="mem",
        )
    ]
)


# --- shader-u2: F2I to 8 and 16 bits (opcode 0x105, the size at 75 = 0 or 1, the sign at 72 in
# the name: .U8/.S8/.U16/.S16, where 32-bit results print .U32 or nothing); ptxas 12.9 writes
# F2I.U8/.S8 for cvt.{rni,rzi}.sat.{u8,s8}.f32 (at -G; .S8 at -O3 too).  Swept under nvdisasm
# (tests/shader_svc/test_alu_forms.py::test_f2i_narrow_rows_print_as_nvdisasm).
for _sg in (0, 1):
    for _sz in (0, 1):
        R(
            rows_for(
                "F2I",
                0x105,
                no_reuse(src_forms(1, FNA, FNA, FORMS1, fimm=True)),  # (nvdisasm prints no reuse flag here)
                pre=(D,),
                mods=(
                    Mod("FTZ", 80, 1, ONOFF(".FTZ")),
                    Mod("size", 75, 2, ((_sz, (".S" if _sg else ".U") + ("8", "16")[_sz]),)),
                    Mod("rnd", 78, 2, F2I_RND),
                    Mod("NTZ", 77, 1, ONOFF(".NTZ")),
                ),
                base=hi(0x0000200000 | _sg << 8),
                ir="F2I",
                cls="conv",
            )
        )

# --- shader-u2: IDP.2A (nvcc 13 writes IDP.2A.LO.S16.U8 for a sum of two 16-bit x 8-bit
# products in ordinary C): bit 76 (.2A), .LO/.HI at 77, the halves' and bytes' signs at 73/74
# as .4A's (printed .U16/.S16 for a), C's negation at 75 (nvdisasm 13.5 prints '-R3'; not
# modelled: refused).  Lowered as IDP (PTX dp2a).
R(
    rows_for(
        "IDP",
        0x026,
        src_forms(2, {}, {}, {1: "rr", 5: "cr"}),
        pre=(D, A()),
        mods=(
            FIXED("n", ".2A"),
            Mod("part", 77, 1, ((0, ".LO"), (1, ".HI"))),
            Mod("signs", 73, 2, ((0, ".U16.U8"), (1, ".S16.U8"), (2, ".U16.S8"), (3, ".S16.S8"))),
        ),
        base=hi(1 << 12),
        ir="IDP",
    )
)


# --- arch-gfx (issue 31): attributes addressed by a register (lower/gfx_indexed.py) ---------------
# ALD / AST with bit 77 set: nvdisasm 13.5 prints 'ALD.PHYS R0, a[R2]' ('.O' before '.PHYS') and
# 'AST.PHYS a[R3], R1', Ra at 24 (RZ refused by nvdisasm); the offset field (40..49) is not
# printed, so it must be 0 here; a size other than one word prints '.???n' (refused: comps 0).
R(
    [
        Row(
            "ALD",
            0x321,
            (D, Attr("a", 24, 8, reg=True), Reg("vtx", 32, suffix="@hiderz")),
            (),
            (Mod("O", 79, 1, ONOFF(".O")), FIXED("phys", ".PHYS")),
            base=1 << 77,
            ir="ALD.PHYS",
            cls="attr",
            stages=("vertex",),
            refuse=(("a", 255),),
        ),
        Row(
            "AST",
            0x322,
            (Attr("a", 24, 8, reg=True), Reg("b", 32), Reg("vtx", 64, suffix="@hiderz")),
            (),
            (FIXED("phys", ".PHYS"),),
            base=1 << 77,
            ir="AST.PHYS",
            cls="attr",
            stages=("vertex",),
            refuse=(("a", 255),),
        ),
    ]
)
# --- shader-ctl: barrier reductions (PTX bar.red.popc/and/or, CUDA __syncthreads_count/and/or).
# nvdisasm 13.5 on nvcc 13's words and every field flipped: BAR's mode 77..79 = 2 is .RED, the
# reduction 74..75 (.POPC, .AND, .OR; 3 prints .INVALID3), the predicate 87 (not 90), the barrier
# 54..57, the thread count 42..53 printed only when not 0 (two rows: a count of 0 is left out);
# B2R's bit 78 is .RESULT (the barrier's result into a register and a predicate at 81, PT
# left out).  Lowered by lower/barrier_red.py.
_BAR_RED_MODS = (
    Mod("mode", 77, 3, ((2, ".RED"),)),
    Mod("op", 74, 2, ((0, ".POPC"), (1, ".AND"), (2, ".OR"))),
    Mod("defer", 80, 1, ((0, ""), (1, ".DEFER_BLOCKING"))),
)
R(
    [
        # (the count's field as a modifier that only 0 satisfies: the rows differ in what they fix)
        Row(
            "BAR",
            0xB1D,
            (Imm("id", 54, 4, "u"), P87),
            (),
            _BAR_RED_MODS + (Mod("all", 42, 12, ((0, ""),)),),
            base=hi(0x14000),
            ir="BAR.RED",
            cls="ctrl",
        ),
        Row(
            "BAR",
            0xB1D,
            (Imm("id", 54, 4, "u"), Imm("count", 42, 12, "u"), P87),
            (),
            _BAR_RED_MODS,
            base=hi(0x14000) | 0x40 << 42,  # a count of 64
            ir="BAR.RED",
            cls="ctrl",
            refuse=(("count", 0),),
        ),
        Row(
            "B2R",
            0x31C,
            (D, Pred("pd", 81, hide_pt=True)),
            (),
            (Mod("mode", 78, 1, ((1, ".RESULT"),)),),
            base=hi(0xE4000),
            ir="B2R.RESULT",
            cls="ctrl",
        ),
    ]
)

# --- shader-ctl: calls through a register (CUDA function pointers, virtual functions).  nvcc 13
# loads the callee's offset from the program start out of constant bank 2 (LDC.64 Rn, c[0x2][Rn]:
# a function pointer's value is a byte offset into the kernel's .nv.constant2) and calls
# CALL.REL.NOINC Rn with its offset field -next (nvdisasm 13.5 raw: the target next + Rn + field,
# printed as the address with Rn = 0; the listing prints it as the kernel's symbol).  CALL.ABS Rn
# calls the address in Rn (nvcc's __assertfail, read from bank 4: outside the program).
R(
    [
        Row(
            "CALL.REL",
            0x344,
            (PH87, Reg("a", 24), Target("rt")),  # ('rt': printed after the register, as RET's)
            (),
            (Mod("NOINC", 86, 1, ((0, ""), (1, ".NOINC"))),),
            ir="CALL.IND",
            cls="branch",
        ),
        Row(
            "CALL.ABS",
            0x343,
            (PH87, Reg("a", 24)),
            (),
            (Mod("NOINC", 86, 1, ((0, ""), (1, ".NOINC"))),),
            ir="CALL.ABS.R",
            cls="branch",
        ),
    ]
)

# --- shader-ctl: mbarriers (PTX mbarrier.arrive / cp.async.mbarrier.arrive; CUDA cuda::barrier,
# cuda::memcpy_async).  nvdisasm 13.5 on nvcc 13's words, every bit flipped: ATOMS's operation
# 87..91 = 25 is .ARRIVE (the 64-bit mbarrier word at [Ra(.X4/.X8)+URb+off], its old value to the
# pair d; the type 73..74 = 2 .64); MEMBAR's semantics 79..80 (0 .SC, 1 .ALL, 3 .MMIO) and scope
# 76..78 (0 .CTA, 1 .SM, 2 .GPU): nvcc writes MEMBAR.ALL.CTA after an ARRIVES.  Lowered by
# lower/mbarrier.py (MEMBAR as the other MEMBAR forms).
R(
    [
        Row(
            "ATOMS",
            0xF8C,
            (D, Mem("addr", 24, off=(40, 24), ur=64)),  # (.X4/.X8 at 78..79: not emitted, refused)
            (),
            # ('width', not 'type': lower/memory.py reads ATOMS's type .64 as a 64-bit data atomic)
            (Mod("op", 87, 5, ((25, ".ARRIVE"),)), Mod("width", 73, 2, ((2, ".64"),))),
            base=0xFF020000 | hi(0x0C80043F),  # nvcc's 'ATOMS.ARRIVE.64 R2, [URZ]'
            ir="ATOMS.ARRIVE",
            cls="mem",
        ),
        Row(
            "MEMBAR",
            0x992,
            (),
            (),
            (Mod("sem", 79, 2, ((1, ".ALL"),)), Mod("scope", 76, 3, ((0, ".CTA"), (1, ".SM"), (2, ".GPU")))),
            base=hi(0x8000),  # MEMBAR.ALL.CTA
            ir="MEMBAR",
            cls="ctrl",
        ),
    ]
)

# shader-ctl: LEPC's lowering key (lower/indirect.py: the instruction's own address)
ROWS[:] = [replace(r, ir="LEPC") if r.mnemonic == "LEPC" and not r.ir else r for r in ROWS]
# --- shader-ctl2: the clock special registers (CS2R / S2UR / S2R SR field 0x50..0x53, nvdisasm 13:
# SR_CLOCKLO/HI, the SM's cycle counter (PTX %clock / %clock64), SR_GLOBALTIMERLO/HI, the
# nanosecond global timer (PTX %globaltimer, cuda::barrier's back-off)); the translation refuses
# them by name (shader_svc/README.md)
SREGS.update({0x50: "SR_CLOCKLO", 0x51: "SR_CLOCKHI", 0x52: "SR_GLOBALTIMERLO", 0x53: "SR_GLOBALTIMERHI"})


# --- decode-gaps (issue 31): R2P / UR2UP's byte select.  nvdisasm 13.5 (bit flips of
# 'R2P PR, R2, 0x7f' in the register, constant and immediate forms, and of 'UR2UP UPR, UR2, 0x7f')
# prints bits 76..77 on the source register ('R2P PR, R2.B1, 0x7f': the bits come from byte n of
# R2, as SM53's R2P Ra.Bn), not as a modifier, after the reuse flag ('R2P PR, R3.reuse.B1, 0x3').
def _r2p_bsel(r: Row) -> Row:
    if r.mnemonic not in ("R2P", "UR2UP"):
        return r
    ops = tuple(replace(o, bsel=76) if isinstance(o, Reg) and o.name == "a" else o for o in r.operands)
    return replace(r, operands=ops)


ROWS[:] = [_r2p_bsel(r) for r in ROWS]


# --- gfx-geom (issue 31): the geometry stage's system registers (lower/gfx_geometry.py) ----------
# nvdisasm 13.5 prints S2R's operand 0x10 SR_PRIM_TYPE, 0x11 SR_INVOCATION_ID, 0x1d SR_INVOCATION_INFO
SREGS.update({0x10: "SR_PRIM_TYPE", 0x1D: "SR_INVOCATION_INFO"})
# --- shader-assert (issue 31): the uniform-register source (form 6, bit 91) of POPC, FLO and
# BREV.  ptxas aggregates an atomic on one address per warp (atomicAdd(&o[0], 1): VOTEU.ANY UR6,
# UFLO.U32 for the leader, then 'POPC R9, UR6' for the count); nvdisasm 13.5 prints opcodes
# 0xd09 / 0xd00 / 0xd01 as 'POPC R9, UR6' (bit 63: '~UR6'), 'FLO.U32 R9, P0, UR6', 'BREV R9, UR6'.
R(rows_for("POPC", 0x109, src_forms(1, {"b": 1}, {}, {6: "u"}, sym="~", uimm=True), pre=(D,), ir="POPC"))
R(rows_for("BREV", 0x101, src_forms(1, {}, {}, {6: "u"}, uimm=True), pre=(D,), ir="BREV"))
R(
    rows_for(
        "FLO",
        0x100,
        src_forms(1, {"b": 1}, {}, {6: "u"}, sym="~", uimm=True),
        pre=(D, Pred("pd", 81, hide_pt=True)),
        mods=(Mod("U32", 73, 1, ((0, ".U32"), (1, ""))), Mod("SH", 74, 1, ONOFF(".SH"))),
        base=hi(0xE0000),
        ir="FLO",
    )
)


# --- shader-assert (issue 31): libcu++'s cuda::barrier at -G (nvcc 13) fences with MEMBAR.SC.CTA
# and makes strong SM-scope accesses: 'ATOM.E.ADD.64.STRONG.SM P0, R10, [R4.64], R8',
# 'LD.E.64.STRONG.SM R8, [R4.64]'.  nvdisasm 13.5 on every value of the fields: MEMBAR's bit 79
# 0 = .SC, 1 = .ALL, scope 76..78 0 .CTA, 1 .SM, 2 .GPU, 3 .SYS, 5 .VC (4, 6, 7 'INVALIDn');
# LD/ST/ATOM's memory order 77..80: 5 = .STRONG.SM besides 7 .STRONG.GPU and 10 .STRONG.SYS
# (the others print .CONSTANT/.MMIO/.PRIVATE combinations, not added).
def _more_orders(r: Row) -> Row:
    def widen(m):
        if not isinstance(m, Mod):
            return m
        if r.mnemonic == "MEMBAR" and m.name == "sem" and m.lo == 79:
            return replace(m, names=((0, ".SC"), *m.names))
        if r.mnemonic == "MEMBAR" and m.name == "scope" and m.lo == 76:
            return replace(m, names=tuple(sorted({**dict(m.names), 3: ".SYS"}.items())))
        if r.mnemonic in ("LD", "ST", "ATOM") and m.name in ("order", "sem") and m.lo == 77 and 7 in dict(m.names):
            return replace(m, names=tuple(sorted({**dict(m.names), 5: ".STRONG.SM"}.items())))
        return m

    return replace(r, mods=tuple(widen(m) for m in r.mods))


ROWS[:] = [_more_orders(r) for r in ROWS]


# --- tex-kernels: TLD.B with bit 60 (nvdisasm 13.5 prints "TLD.SCR.B.LZ RZ, R6, R8, R6, 3D, 0x9"):
# what ptxas 13 writes for an integer-coordinate tex.3d / tex.a2d (.s32) on a texture object in a
# kernel; TLD.B's layout (Ra = the first two coordinates, Rb = the third, Rb+1 the handle)
R(
    [
        Row(
            "TLD",
            0x367,
            TEX_DSTS + (Reg("b", 32), TLD_DIM, TEX_MASK),
            (TEX_SCR, TEX_B),
            (TEXCACHE, TLD_LOD, TLD_CL, NODEP),
            TEX_BASE | 1 << 59 | 1 << 60 | 1 << 87,
            refuse=(("b", 255), ("a", 255)),
            ir="TLD.B",
            cls="tex",
        ),
    ]
)
# tex-kernels: bound TLD with bit 60 (nvdisasm 13.5 "TLD.SCR.LZ RZ, R6, R6, R4, 0x0, 0x5a, 3D, 0x9"):
# ptxas 13's integer tex.3d on a texture object passed as a kernel parameter; bound TLD's layout
R(
    [
        Row(
            "TLD",
            0xB66,
            TEX_DSTS + (Reg("b", 32, suffix="@hiderz"),) + TEX_IDX + (TLD_DIM, TEX_MASK),
            (TEX_SCR,),
            (TEXCACHE, TLD_LOD, Mod("AOFFI", 76, 1, ONOFF(".AOFFI")), TLD_CL, NODEP),
            TEX_BASE | 1 << 60 | 1 << 87,
            refuse=(("a", 255),),
            ir="TLD",
            cls="tex",
        ),
    ]
)


# --- shader-ndv (issue 31): the active-mask moves of ptxas's tex3DGrad / texCubemapGrad quad loop
# (nvcc 13 sm_86: 'BMOV.32 B15, MACTIVE', 'BMOV.32.PQUAD MACTIVE, B15', 'BMOV.32 MACTIVE, B15').
# Fields by nvdisasm 13.5 bit flips: 0xF55 a convergence barrier register at 16 (4 bits) from the
# thread-state register at 24 (6 bits: 16..31 named, the others print '???n': refused); 0xF56 that
# register (0..15 print as B0..B15) from the barrier register at 16; .PQUAD 84.  Bit 84 of 0xF55
# ('.CLEAR' with a garbled source) is held 0.  Lowered in lower/quad_tex.py (the quad region).
_TSTATE = (
    "THREAD_STATE_ENUM.0 THREAD_STATE_ENUM.1 THREAD_STATE_ENUM.2 THREAD_STATE_ENUM.3 THREAD_STATE_ENUM.4 "
    "TRAP_RETURN_PC.LO TRAP_RETURN_PC.HI TRAP_RETURN_MASK MEXITED MKILL MACTIVE MATEXIT OPT_STACK API_CALL_DEPTH "
    "ATEXIT_PC.LO ATEXIT_PC.HI"
).split()
BMOV_STATE = tuple((16 + i, n) for i, n in enumerate(_TSTATE))
MACTIVE_BITS = 26 << 24  # the reference words' register: MACTIVE (ptxas's)
R(
    [
        Row(
            "BMOV",
            0xF55,
            (Reg("d", 16, file="B"), Sym("state", 24, 6, BMOV_STATE)),
            mods=(FIXED("w", ".32"),),
            base=MACTIVE_BITS,
            cls="ctrl",
            ir="BMOV.STATE",
        ),
        Row(
            "BMOV",
            0xF56,
            (Sym("state", 24, 6, tuple((i, f"B{i}") for i in range(16)) + BMOV_STATE), Reg("b", 16, file="B")),
            mods=(FIXED("w", ".32"), Mod("PQUAD", 84, 1, ONOFF(".PQUAD"))),
            base=MACTIVE_BITS,
            cls="ctrl",
            ir="BMOV.STATE",
        ),
    ]
)
# shader-ndv: TEX with the texture handle in a uniform register pair (0xF60: the bound row's form 7;
# ptxas 12.9 sm_86 writes 'TEX.SCR.NDV R4, R2, R2, R4, UR6, 0x0, 3D' in NVRTC's tex3DGrad loop,
# after R2UR UR6 of the handle and USHF.R.U32.HI UR7, URZ, 0x14, UR6): the uniform register at 40
# (6 bits), an 8-bit immediate at 46 (nvdisasm 13.5 bit flips), the bound row's other fields
R(
    [
        Row(
            "TEX",
            0xF60,
            TEX_DSTS + (Reg("b", 32, suffix="@hiderz"), Reg("ur", 40, file="UR"), Imm("uoff", 46, 8, "u"), TEX_DIM, TEX_MASK),
            (Mod("SCR", 60, 1, ONOFF(".SCR")),),
            (TEXCACHE, TEX_LOD, Mod("DC", 78, 1, ONOFF(".DC")), TEX_NDV, NODEP),
            TEX_BASE | 1 << 91,  # (form 7: bit 91, as every uniform-register form)
            refuse=(("a", 255), ("ur", 63)),  # (URZ prints '???63')
            ir="TEX.U",
            cls="tex",
        ),
    ]
)
