"""The SM53 (Maxwell, Switch 1) instruction table: one declarative row per (instruction,
operand form).  Decoder, printer, assembler, lowering and tests all read ``ROWS``.

ALU instructions come in up to four forms, told apart by the opcode's top bits:
  R  (0x5...): B = Rb@20          C = Rc@39
  C  (0x4...): B = c[34..38][20..33]
  I  (0x3...): B = 19-bit immediate @20 with its sign at 56 (float forms: the f32's top bits)
  RC (0x5[13]..): B = Rc@39, C = c[][]  (FFMA and the three-source integer ops)
and 32I forms (0x0.../0x1...) with a 32-bit immediate at 20..51.
Facts: Ryujinx InstTable.cs (MIT), Mesa NAK sm50.rs (MIT), envytools; every row's bits and
printed names were checked by flipping bits under nvdisasm 11.8 (tests/shader_svc/test_sm53_*).
"""

from __future__ import annotations

from dataclasses import replace

from shader_svc.sm53.fields import Attr, CBuf, CIdx, Imm, Mem, Mod, Pred, Reg, Row, SReg, Sym, Target, TexsMask

ROWS: list[Row] = []
GUARD_PT = 7 << 16


def op(top16: int, n: int, holes: tuple[int, ...] = (), fixed: tuple[tuple[int, int], ...] = ()) -> tuple[int, int]:
    """(mask, value) of an opcode given as the word's top 16 bits of which the top ``n``
    count, minus ``holes`` (operand bits inside that range), plus ``fixed`` (bit, value)."""
    mask = ((1 << n) - 1) << (64 - n)
    for h in holes:
        mask &= ~(1 << h)
    value = (top16 << 48) & mask
    for b, v in fixed:
        mask |= 1 << b
        value |= v << b
    return mask, value


def row(
    mnemonic: str,
    opc: tuple[int, int],
    operands=(),
    mods=(),
    base: int = 0,
    ir: str = "",
    cls: str = "alu",
    guard: bool = True,
    exclusive: tuple[int, ...] = (),
):
    mask, value = opc
    ROWS.append(
        Row(
            mnemonic,
            mask,
            value,
            tuple(operands),
            tuple(mods),
            base | value | (GUARD_PT if guard else 0),
            ir or mnemonic,
            cls,
            guard,
            exclusive,
        )
    )


def flag(name: str, bit: int, text: str | None = None) -> Mod:
    return Mod(name, ((bit, 1),), ((0, ""), (1, text if text is not None else "." + name)))


def text(name: str, s: str) -> Mod:
    """Fixed text among the modifiers (no bits: the opcode already says it)."""
    return Mod(name, (), ((0, s),))


def field(name: str, lo: int, width: int, names: dict[int, str]) -> Mod:
    return Mod(name, ((lo, width),), tuple(sorted(names.items())))


# --- vocabularies ---------------------------------------------------------------------------
FCMP = {
    0: ".F",
    1: ".LT",
    2: ".EQ",
    3: ".LE",
    4: ".GT",
    5: ".NE",
    6: ".GE",
    7: ".NUM",
    8: ".NAN",
    9: ".LTU",
    10: ".EQU",
    11: ".LEU",
    12: ".GTU",
    13: ".NEU",
    14: ".GEU",
    15: ".T",
}
ICMP = {0: ".F", 1: ".LT", 2: ".EQ", 3: ".LE", 4: ".GT", 5: ".NE", 6: ".GE", 7: ".T"}
BOP = {0: ".AND", 1: ".OR", 2: ".XOR"}
RND = {0: "", 1: ".RM", 2: ".RP", 3: ".RZ"}
U32_WHEN_CLEAR = {0: ".U32", 1: ""}  # bit 48 of many integer ops: 1 = signed (printed as nothing)
FTZ_FMZ = {0: "", 1: ".FTZ", 2: ".FMZ"}
FMT = {1: ".F16", 2: ".F32", 3: ".F64"}
INT_T = {0: ".U8", 1: ".U16", 2: ".U32", 3: ".U64", 4: ".S8", 5: ".S16", 6: ".S32", 7: ".S64"}
SREGS = {
    0x00: "SR_LANEID",
    0x21: "SR_TID.X",
    0x22: "SR_TID.Y",
    0x23: "SR_TID.Z",
    0x25: "SR_CTAID.X",
    0x26: "SR_CTAID.Y",
    0x27: "SR_CTAID.Z",
    0x37: "SR_LMEMHIOFF",
    0x39: "SR_LTMASK",
}
ATOM_OPS = {0: ".ADD", 1: ".MIN", 2: ".MAX", 3: ".INC", 4: ".DEC", 5: ".AND", 6: ".OR", 7: ".XOR", 8: ".EXCH"}
ATOM_T = {0: "", 1: ".S32", 2: ".U64", 3: ".F32.FTZ.RN", 4: ".F16x2.FTZ.RN", 5: ".S64"}  # .S64: shader-mem
MEM_SZ = {0: ".U8", 1: ".S8", 2: ".U16", 3: ".S16", 4: "", 5: ".64", 6: ".128"}

# --- operand slots --------------------------------------------------------------------------
D = Reg("d", 0)
DCC = Reg("d", 0, cc=47)


def A(**kw) -> Reg:
    return Reg("a", 8, reuse=0, **kw)


def B(**kw) -> Reg:
    return Reg("b", 20, reuse=1, **kw)


def C(**kw) -> Reg:
    return Reg("c", 39, reuse=2, **kw)


def I19(name="b", **kw) -> Imm:
    return Imm(name, 20, 19, "s", sign=56, **kw)


def F20(name="b", **kw) -> Imm:
    return Imm(name, 20, 19, "f20", sign=56, **kw)


P39 = Pred("pc", 39, not_bit=42)
RFORM, CFORM, IFORM = "R", "C", "I"


def forms(
    mnemonic,
    tops: dict[str, int],
    n: int,
    pre,
    b_ops: dict[str, object],
    post=(),
    mods=(),
    base=0,
    ir="",
    cls="alu",
    exclusive=(),
):
    """One row per form: ``tops`` form -> top-16 opcode; I forms leave bit 56 (the sign) out."""
    for f, top in tops.items():
        row(
            mnemonic,
            op(top, n, holes=(56,) if f == IFORM else ()),
            (*pre, b_ops[f], *post),
            mods,
            base,
            ir,
            cls,
            exclusive=exclusive,
        )


ALU3 = {RFORM: 0x5C00, CFORM: 0x4C00, IFORM: 0x3800}


def alu(top_lo: int) -> dict[str, int]:
    return {f: t | top_lo for f, t in ALU3.items()}


# --- integer ALU ----------------------------------------------------------------------------
forms(
    "IADD",
    alu(0x10),
    13,
    (DCC, A(neg=49)),
    {RFORM: B(neg=48), CFORM: CBuf("b", neg=48), IFORM: I19()},
    mods=(flag("SAT", 50), flag("X", 43)),
    ir="IADD",
    exclusive=(3 << 48,),
)
row("IADD32I", op(0x1C00, 7), (Reg("d", 0, cc=52), A(neg=56), Imm("b", 20, 32, "s")), (flag("SAT", 54), flag("X", 53)), ir="IADD")
# IADD3: the R form has a shift mode at 37..38 (bits the C form uses for its bank)
row(
    "IADD3",
    op(0x5CC0, 12),
    (DCC, A(neg=51), B(neg=50), C(neg=49)),
    (field("mode", 37, 2, {0: "", 1: ".RS", 2: ".LS"}), flag("X", 48)),
    ir="IADD3",
)
forms(
    "IADD3",
    {CFORM: 0x4CC0, IFORM: 0x38C0},
    12,
    (DCC, A(neg=51)),
    {CFORM: CBuf("b", neg=50), IFORM: Imm("b", 20, 19, "su", sign=56)},
    (C(neg=49),),
    mods=(flag("X", 48),),
    ir="IADD3",
)
forms(
    "ISCADD",
    alu(0x18),
    13,
    (DCC, A(neg=49)),
    {RFORM: B(neg=48), CFORM: CBuf("b", neg=48), IFORM: I19()},
    (Imm("s", 39, 5, "u"),),
    ir="ISCADD",
    exclusive=(3 << 48,),
)
forms(
    "IMNMX",
    alu(0x20),
    13,
    (DCC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    (P39,),
    # the extended (64-bit) min/max steps; the lowering refuses xm != 0 by name
    mods=(field("u32", 48, 1, U32_WHEN_CLEAR), field("xm", 43, 2, {0: "", 1: ".XLO", 2: ".XMED", 3: ".XHI"})),
    ir="IMNMX",
)
forms(
    "SHL", alu(0x48), 13, (DCC, A()), {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()}, mods=(flag("W", 39), flag("X", 43)), ir="SHL"
)
forms(
    "SHR",
    alu(0x28),
    13,
    (DCC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    mods=(field("u32", 48, 1, U32_WHEN_CLEAR), flag("W", 39), flag("BREV", 40), field("x", 43, 2, {0: "", 2: ".X"})),
    ir="SHR",
)
forms(
    "BFE",
    alu(0x00),
    13,
    (DCC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    mods=(field("u32", 48, 1, U32_WHEN_CLEAR), flag("BREV", 40)),
    ir="BFE",
)
forms(
    "BFI",
    {RFORM: 0x5BF0, CFORM: 0x4BF0, IFORM: 0x36F0},
    13,
    (DCC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    (C(),),
    ir="BFI",
)
# POPC/FLO: nvdisasm 11.8 prints no reuse flag on the source (a set flag is refused)
forms("POPC", alu(0x08), 13, (D,), {RFORM: Reg("b", 20, inv=40), CFORM: CBuf("b", inv=40), IFORM: I19(inv=40)}, ir="POPC")
forms(
    "FLO",
    alu(0x30),
    13,
    (DCC,),
    {RFORM: Reg("b", 20, inv=40), CFORM: CBuf("b", inv=40), IFORM: I19(inv=40)},
    mods=(field("u32", 48, 1, U32_WHEN_CLEAR), flag("SH", 41)),
    ir="FLO",
)
SHF_MODS = (
    flag("W", 50),
    field("maxshift", 37, 2, {0: "", 2: ".U64", 3: ".S64"}),
    field("xhi", 48, 2, {0: "", 1: ".HI", 2: ".X", 3: ".XHI"}),
)
row("SHF.L", op(0x5BF8, 13), (DCC, A(), B(), C()), SHF_MODS, ir="SHF")
row("SHF.L", op(0x36F8, 13), (DCC, A(), Imm("b", 20, 6, "u"), C()), SHF_MODS, ir="SHF")
row("SHF.R", op(0x5CF8, 13), (DCC, A(), B(), C()), SHF_MODS, ir="SHF")
row("SHF.R", op(0x38F8, 13), (DCC, A(), Imm("b", 20, 6, "u"), C()), SHF_MODS, ir="SHF")
forms(
    "PRMT",
    {RFORM: 0x5BC0, CFORM: 0x4BC0, IFORM: 0x36C0},
    13,
    (D, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    (C(),),
    mods=(field("mode", 48, 3, {0: "", 1: ".F4E", 2: ".B4E", 4: ".ECL"}),),
    ir="PRMT",
)
forms("SEL", alu(0xA0), 13, (D, A()), {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()}, (P39,), ir="SEL")


# shader-ndv: the quad-lane write mask (MOV 39..42, MOV32I 12..15: lane (id & 3) k writes where bit
# k is set; nvdisasm 11.8 prints it as a third operand, nothing for 0xf; ptxas's tex3DGrad quad
# loop writes 'MOV R3, R8, 0x1'; Mesa gm107's emitMOV lanes field)
def _lanes(lo: int) -> Sym:
    return Sym("mask", lo, 4, tuple((v, f"{v:#x}") for v in range(15)) + ((15, ""),))


forms("MOV", alu(0x98), 13, (D,), {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()}, (_lanes(39),), base=0xF << 39, ir="MOV")
row("MOV32I", op(0x0100, 12), (D, Imm("b", 20, 32, "u"), _lanes(12)), base=0xF << 12, ir="MOV")

LOP_OPS = {0: ".AND", 1: ".OR", 2: ".XOR", 3: ".PASS_B"}
POP = {0: "", 1: ".T", 2: ".Z", 3: ".NZ"}
forms(
    "LOP",
    alu(0x40),
    13,
    (Pred("pr", 48, hide_pt=True), DCC, A(inv=39)),
    {RFORM: B(inv=40), CFORM: CBuf("b", inv=40), IFORM: I19(inv=40)},
    mods=(field("op", 41, 2, LOP_OPS), flag("X", 43), field("pop", 44, 2, POP)),
    ir="LOP",
)
row(
    "LOP32I",
    op(0x0400, 6),
    (Reg("d", 0, cc=52), A(inv=55), Imm("b", 20, 32, "u", inv=56)),
    (field("op", 53, 2, LOP_OPS), flag("X", 57)),
    ir="LOP",
)
row(
    "LOP3.LUT",
    op(0x5BE0, 13),
    (Pred("pr", 48, hide_pt=True), DCC, A(), B(), C(), Imm("lut", 28, 8, "u")),
    (flag("X", 38), field("pop", 36, 2, POP)),
    base=0,
    ir="LOP3",
)

# ISETP / ICMP
SETP_PRE = (Pred("pd", 3), Pred("qd", 0), A())
forms(
    "ISETP",
    {RFORM: 0x5B60, CFORM: 0x4B60, IFORM: 0x3660},
    12,
    SETP_PRE,
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    (P39,),
    mods=(field("cmp", 49, 3, ICMP), field("u32", 48, 1, U32_WHEN_CLEAR), flag("X", 43), field("bop", 45, 2, BOP)),
    ir="ISETP",
)
forms(
    "ICMP",
    {RFORM: 0x5B40, CFORM: 0x4B40, IFORM: 0x3640},
    12,
    (D, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    (C(),),
    mods=(field("cmp", 49, 3, ICMP), field("u32", 48, 1, U32_WHEN_CLEAR)),
    ir="ICMP",
)
row(
    "PSETP",
    op(0x5090, 13),
    (Pred("pd", 3), Pred("qd", 0), Pred("pa", 12, 15), Pred("pb", 29, 32), Pred("pc", 39, 42)),
    (field("bop1", 24, 2, BOP), field("bop2", 45, 2, BOP)),
    ir="PSETP",
)

# XMAD: 16x16-bit multiply-add.  Sign of A/B (48/49), mode, product shift (PSL), merge (MRG),
# carry (X), half selects.  The R and I forms keep PSL/MRG/X at 36..38, the C form at 55/56/54.
XSIGN = field("sign", 48, 2, {0: "", 1: ".S16.U16", 2: ".U16.S16", 3: ".S16.S16"})
XMODE3 = field("mode", 50, 3, {0: "", 1: ".CLO", 2: ".CHI", 3: ".CSFU", 4: ".CBCC"})
XMODE2 = field("mode", 50, 2, {0: "", 1: ".CLO", 2: ".CHI", 3: ".CSFU"})
row(
    "XMAD",
    op(0x5B00, 10),
    (DCC, A(h1=53), B(h1=35), C()),
    (XSIGN, flag("PSL", 36), XMODE3, flag("MRG", 37), flag("X", 38)),
    ir="XMAD",
)
row(
    "XMAD",
    op(0x3600, 10),
    (DCC, A(h1=53), Imm("b", 20, 16, "x16"), C()),  # signed with .U16.S16 (nvdisasm 11.8)
    (XSIGN, flag("PSL", 36), XMODE3, flag("MRG", 37), flag("X", 38)),
    ir="XMAD",
)
row(
    "XMAD",
    op(0x4E00, 7),
    (DCC, A(h1=53), CBuf("b", h1=52, space=True), C()),
    (XSIGN, flag("PSL", 55), XMODE2, flag("MRG", 56), flag("X", 54)),
    ir="XMAD",
)

# --- floating point -------------------------------------------------------------------------
FPB = {RFORM: B(neg=45, abs=49), CFORM: CBuf("b", neg=45, abs=49), IFORM: F20()}
# FADD's register B answers to reuse flag 2 (nvdisasm 11.8: flag 1 is accepted, not printed)
FADD_B = {**FPB, RFORM: Reg("b", 20, neg=45, abs=49, reuse=2)}
forms(
    "FADD",
    alu(0x58),
    13,
    (DCC, A(neg=48, abs=46)),
    FADD_B,
    mods=(flag("FTZ", 44), field("rnd", 39, 2, RND), flag("SAT", 50)),
    ir="FADD",
)
forms(
    "FMUL",
    alu(0x68),
    13,
    (DCC, A()),
    {RFORM: B(neg=48), CFORM: CBuf("b", neg=48), IFORM: F20()},
    mods=(
        field("ftz", 44, 2, FTZ_FMZ),
        field("scale", 41, 3, {0: "", 1: ".D2", 2: ".D4", 3: ".D8", 4: ".M8"}),
        field("rnd", 39, 2, RND),
        flag("SAT", 50),
    ),
    ir="FMUL",
)
FFMA_MODS = (field("ftz", 53, 2, FTZ_FMZ), field("rnd", 51, 2, RND), flag("SAT", 50))
row("FFMA", op(0x5980, 9), (DCC, A(), B(neg=48), C(neg=49)), FFMA_MODS, ir="FFMA")
row("FFMA", op(0x4980, 9), (DCC, A(), CBuf("b", neg=48), C(neg=49)), FFMA_MODS, ir="FFMA")
row("FFMA", op(0x5180, 9), (DCC, A(), Reg("b", 39, neg=48), CBuf("c", neg=49)), FFMA_MODS, ir="FFMA")
row("FFMA", op(0x3280, 9, holes=(56,)), (DCC, A(), F20(), C(neg=49)), FFMA_MODS, ir="FFMA")
forms("FMNMX", alu(0x60), 13, (DCC, A(neg=48, abs=46)), FPB, (P39,), mods=(flag("FTZ", 44),), ir="FMNMX")
forms(
    "FSETP",
    {RFORM: 0x5BB0, CFORM: 0x4BB0, IFORM: 0x36B0},
    12,
    (Pred("pd", 3), Pred("qd", 0), A(neg=43, abs=7)),
    {RFORM: B(neg=6, abs=44), CFORM: CBuf("b", neg=6, abs=44), IFORM: F20(neg=6, abs=44)},
    (P39,),
    mods=(field("cmp", 48, 4, FCMP), flag("FTZ", 47), field("bop", 45, 2, BOP)),
    ir="FSETP",
)
row(
    "MUFU",
    op(0x5080, 13),
    (D, A(neg=48, abs=46)),
    (
        field("op", 20, 4, {0: ".COS", 1: ".SIN", 2: ".EX2", 3: ".LG2", 4: ".RCP", 5: ".RSQ", 6: ".RCP64H", 7: ".RSQ64H"}),
        flag("SAT", 50),
    ),
    ir="MUFU",
    cls="sfu",
)
forms(
    "RRO",
    alu(0x90),
    13,
    (D,),
    {RFORM: B(neg=45, abs=49), CFORM: CBuf("b", neg=45, abs=49), IFORM: F20()},
    mods=(field("mode", 39, 1, {0: ".SINCOS", 1: ".EX2"}),),
    ir="RRO",
)

# conversions: types are split fields (size 8..9 or 10..11, signedness 12/13)
# nvdisasm writes the constant operand of I2F/F2I (and of F2F from F16) as 'c[0x0] [0x28]'
CVT_B = {RFORM: B(neg=45, abs=49, h1=41), CFORM: CBuf("b", neg=45, abs=49, h1=41, space=True)}
I2F_B = {RFORM: B(neg=45, abs=49, bsel=41), CFORM: CBuf("b", neg=45, abs=49, space=True)}
forms(
    "I2F",
    {RFORM: 0x5CB8, CFORM: 0x4CB8},
    13,
    (DCC,),
    I2F_B,
    mods=(field("dst", 8, 2, FMT), Mod("src", ((10, 2), (13, 1)), tuple(sorted(INT_T.items()))), field("rnd", 39, 2, RND)),
    ir="I2F",
    cls="conv",
)
forms(
    "F2I",
    {RFORM: 0x5CB0, CFORM: 0x4CB0},
    13,
    (DCC,),
    CVT_B,
    mods=(
        flag("FTZ", 44),
        # (1, 5: .U16/.S16, shader-u2; 0 and 4 print INVALID0/1: no 8-bit result)
        Mod("dst", ((8, 2), (12, 1)), tuple(sorted((k, v) for k, v in INT_T.items() if k in (1, 2, 3, 5, 6, 7)))),
        field("src", 10, 2, FMT),
        field("rnd", 39, 2, {0: "", 1: ".FLOOR", 2: ".CEIL", 3: ".TRUNC"}),
    ),
    base=2 << 8 | 2 << 10,  # reference encoding F2I.U32 (nvdisasm prints INVALID0 for 0)
    ir="F2I",
    cls="conv",
)
# F2F: the half select (and the spaced constant) only exist for an F16 source; bit 42 turns the
# rounding field into rounding to an integral value (.ROUND/.FLOOR/.CEIL/.TRUNC, nvdisasm 11.8)
F2F_RND = Mod(
    "rnd",
    ((39, 2), (42, 1)),
    # between equal formats a rounding mode has nothing to round: nvdisasm prints 1..3 as .PASS
    # (only 1 decoded, so the text names one word)
    ((0, ""), (1, ".PASS"), (4, ".ROUND"), (5, ".FLOOR"), (6, ".CEIL"), (7, ".TRUNC")),
)
F32B, F32C = B(neg=45, abs=49), CBuf("b", neg=45, abs=49)
for dst, src, rb, cb in (
    ((1,), {1: ".F16"}, CVT_B[RFORM], CVT_B[CFORM]),
    ((2, 3), {1: ".F16"}, CVT_B[RFORM], CVT_B[CFORM]),
    ((2,), {2: ".F32"}, F32B, F32C),
    ((3,), {3: ".F64"}, F32B, F32C),
    ((3,), {2: ".F32"}, F32B, F32C),
    ((2,), {3: ".F64"}, F32B, F32C),
    ((1,), {2: ".F32", 3: ".F64"}, F32B, F32C),
):
    same = dst == tuple(src)  # F16.F16, F32.F32, F64.F64: integral rounding
    forms(
        "F2F",
        {RFORM: 0x5CA8, CFORM: 0x4CA8},
        13,
        (DCC,),
        {RFORM: rb, CFORM: cb},
        mods=(
            flag("FTZ", 44),
            field("dst", 8, 2, {k: FMT[k] for k in dst}),
            field("src", 10, 2, src),
            F2F_RND if same else field("rnd", 39, 2, RND),
            flag("SAT", 50),
        ),
        base=dst[0] << 8 | min(src) << 10,  # a valid reference (0 prints INVALIDFPDEST0)
        ir="F2F",
        cls="conv",
    )

# --- special registers, control -------------------------------------------------------------
row("S2R", op(0xF0C8, 16), (D, SReg("sr")), ir="S2R", cls="ctrl")
# NOP.TRIG n: PTX pmevent / pmevent.mask (shader-rest, ptxas 12.9: 'pmevent 3' -> NOP.TRIG 0x8):
# TRIG bit 13, the 16-bit mask at 20 (left out while 0: a plain NOP may carry it too, 'NOP 0x8');
# the condition-code test at 8..12 held at T (nvdisasm 11.8 bit flips)
row("NOP", op(0x50B0, 16), (Imm("b", 20, 16, "u", hide_zero=True),), (flag("TRIG", 13),), base=0xF << 8, ir="NOP", cls="ctrl")
CC_T = 0xF  # condition-code test 'always' (bits 0..4)
row("BRA", op(0xE240, 16), (Target("t"),), base=CC_T, ir="BRA", cls="branch")
# SSY/PBK/CAL have no guard predicate; CAL's bit 6 clear would print .NOINC
row("SSY", op(0xE290, 16), (Target("t"),), ir="SSY", cls="branch", guard=False)
row("PBK", op(0xE2A0, 16), (Target("t"),), ir="PBK", cls="branch", guard=False)
row("CAL", op(0xE260, 16), (Target("t"),), base=0x40, ir="CAL", cls="branch", guard=False)
# JCAL: CAL to an absolute address (bits 20..51; what a linked -G program calls its helpers
# with, relocation type 42); bit 6 clear prints .NOINC (nvdisasm 11.8)
row(
    "JCAL",
    op(0xE220, 12),
    (Imm("t", 20, 32, "u"),),
    (Mod("inc", ((6, 1),), ((0, ".NOINC"), (1, ""))),),
    ir="JCAL",
    cls="branch",
    guard=False,
)
# BPT: mode at 6..8 (3 = .TRAP; 1 .CAL / 2 .PAUSE refused), a 20-bit code at 20 (hidden while
# 0); no guard (bits 16..19 print nothing) — nvdisasm 11.8, every bit flipped
row(
    "BPT",
    op(0xE3A0, 16),
    (Imm("code", 20, 20, "u", hide_zero=True),),
    (field("mode", 6, 3, {3: ".TRAP"}),),
    base=3 << 6,  # the reference word .TRAP (mode 0 prints .DRAIN_ILLEGAL: refused)
    ir="BPT",
    cls="ctrl",
    guard=False,
)
row("SYNC", op(0xF0F8, 16), (), base=CC_T, ir="SYNC", cls="branch")
row("BRK", op(0xE340, 16), (), base=CC_T, ir="BRK", cls="branch")
row("RET", op(0xE320, 16), (), base=CC_T, ir="RET", cls="branch")
row("EXIT", op(0xE300, 16), (), base=CC_T, ir="EXIT", cls="branch")
row(
    "BAR.SYNC",
    op(0xF0A8, 16, fixed=((32, 0), (33, 0), (34, 0))),
    (Imm("id", 8, 8, "u"),),
    base=0x1B8000000000,
    ir="BAR",
    cls="ctrl",
)
row(
    "MEMBAR", op(0xEF98, 16), (), (field("lvl", 8, 2, {0: ".CTA", 1: ".GL", 2: ".SYS"}),), ir="MEMBAR", cls="ctrl"
)  # lower/cache.py
row("DEPBAR.LE", op(0xF0F0, 16, fixed=((29, 1),)), (Imm("sb", 26, 3, "sb"), Imm("n", 20, 6, "u")), ir="NOP", cls="ctrl")
row("DEPBAR", op(0xF0F0, 16, fixed=((29, 0),)), (Imm("sbs", 0, 6, "set"),), ir="NOP", cls="ctrl")

# --- memory ---------------------------------------------------------------------------------
SZ = field("size", 48, 3, MEM_SZ)
row(
    "LDG",
    op(0xEED0, 13),
    (D, Mem("addr")),
    (flag("E", 45), field("cache", 46, 2, {0: "", 1: ".CG", 2: ".CI"}), SZ),
    ir="LDG",
    cls="mem",
)
row(
    "STG",
    op(0xEED8, 13),
    (Mem("addr"), D),
    (flag("E", 45), field("cache", 46, 2, {0: "", 1: ".CG", 2: ".CS"}), SZ),
    ir="STG",
    cls="mem",
)
row(
    "LDS.U",
    op(0xEF48, 13, fixed=((44, 1),)),
    (D, Mem("addr")),
    (field("size", 48, 3, {**MEM_SZ, 4: ".32"}),),
    ir="LDS",
    cls="mem",
)
row("LDS", op(0xEF48, 13, fixed=((44, 0),)), (D, Mem("addr")), (SZ,), ir="LDS", cls="mem")
row("STS", op(0xEF58, 13), (Mem("addr"), D), (SZ,), ir="STS", cls="mem")
row(
    "ATOM",
    op(0xED00, 8),
    (D, Mem("addr", off_lo=28, off_w=20), B()),
    (flag("E", 48), field("op", 52, 4, ATOM_OPS), field("type", 49, 3, ATOM_T)),
    ir="ATOM",
    cls="mem",
)
row(
    "ATOM",
    op(0xEEF0, 14, fixed=((49, 0), (50, 0), (51, 0))),
    (D, Mem("addr", off_lo=28, off_w=20), B(pair=True)),
    (flag("E", 48), text("cas", ".CAS")),
    ir="ATOM_CAS",
    cls="mem",
)
row(
    "ATOMS",
    op(0xEC00, 8),
    (D, Mem("addr", off_lo=30, off_w=22, scale=4), B()),
    (field("op", 52, 4, ATOM_OPS), field("type", 28, 2, {0: "", 1: ".S32", 2: ".U64"})),
    ir="ATOMS",
    cls="mem",
)
row(
    "RED",
    op(0xEBF8, 13),
    (Mem("addr", off_lo=28, off_w=20), D),
    (flag("E", 48), field("op", 23, 3, {k: v for k, v in ATOM_OPS.items() if k < 8}), field("type", 20, 3, ATOM_T)),
    ir="RED",
    cls="mem",
)

row("LDL", op(0xEF40, 13), (D, Mem("addr")), (field("cache", 44, 2, {0: "", 1: ".LU", 2: ".CI"}), SZ), ir="LDL", cls="mem")
row("STL", op(0xEF50, 13), (Mem("addr"), D), (field("cache", 44, 2, {0: "", 1: ".CG", 2: ".CS"}), SZ), ir="STL", cls="mem")
# LDC has no 128-bit size: nvdisasm 11.8 prints size 6 as '.INVALIDSIZE6' (refused here)
LDC_SZ = field("size", 48, 3, {k: v for k, v in MEM_SZ.items() if k != 6})
row("LDC", op(0xEF90, 13), (D, CIdx("c")), (LDC_SZ, field("mode", 44, 2, {0: "", 1: ".IL", 2: ".IS"})), ir="LDC", cls="mem")
# generic LD/ST: 3-bit opcodes, 32-bit offset, a predicate operand printed last
GSZ = field("size", 53, 3, MEM_SZ)
row(
    "LD",
    op(0x8000, 3),
    (D, Mem("addr", off_w=32), Pred("p", 58, hide_pt=True)),
    (flag("E", 52), field("cache", 56, 2, {0: "", 1: ".CG", 2: ".CI", 3: ".CV"}), GSZ),  # .CV: shader-mem (volatile)
    ir="LD",
    cls="mem",
)
row(
    "ST",
    op(0xA000, 3),
    (Mem("addr", off_w=32), D, Pred("p", 58, hide_pt=True)),
    (flag("E", 52), field("cache", 56, 2, {0: "", 1: ".CG", 2: ".CS", 3: ".WT"}), GSZ),  # .WT: shader-mem (volatile)
    ir="ST",
    cls="mem",
)

# LEA (address arithmetic): A << shift + B; LEA.HI.X takes the high part of the shifted pair C:A
LEA_SH = Imm("s", 39, 5, "u", hide_zero=True)
row("LEA", op(0x5BD0, 13), (Pred("pd", 48, hide_pt=True), DCC, A(neg=45), B(), LEA_SH), (flag("X", 46),), ir="LEA")
row(
    "LEA.HI",
    op(0x5BD8, 13),
    (Pred("pd", 48, hide_pt=True), DCC, A(neg=37), B(), C(), Imm("s", 28, 5, "u", hide_zero=True)),
    (flag("X", 38),),
    ir="LEA_HI",
)

# constant forms (nvcc 13's PTX through ptxas 12.9; bits flipped under nvdisasm 11.8, issue 31):
# LEA's B from a bank; LEA.HI's own 5-bit opcode 00011 with the shift at 51, negation 56, .X 57
row("LEA", op(0x4BD0, 13), (Pred("pd", 48, hide_pt=True), DCC, A(neg=45), CBuf("b"), LEA_SH), (flag("X", 46),), ir="LEA")
row(
    "LEA.HI",
    op(0x1800, 5),
    (Pred("pd", 48, hide_pt=True), DCC, A(neg=56), CBuf("b"), C(), Imm("s", 51, 5, "u", hide_zero=True)),
    (flag("X", 57),),
    ir="LEA_HI",
)
# I2I: integer width/sign conversion (types as F2I/I2F split fields), |x| / -x, .SAT
I2I_B = {RFORM: B(neg=45, abs=49, bsel=41), CFORM: CBuf("b", neg=45, abs=49, space=True)}
forms(
    "I2I",
    {RFORM: 0x5CE0, CFORM: 0x4CE0},
    13,
    (DCC,),
    I2I_B,
    mods=(
        Mod("dst", ((8, 2), (12, 1)), tuple(sorted(INT_T.items()))),
        Mod("src", ((10, 2), (13, 1)), tuple(sorted(INT_T.items()))),
        flag("SAT", 50),
    ),
    ir="I2I",
    cls="conv",
)


# FP64: the FP32 layouts (DADD = FADD's, DMUL = FMUL's without scale, DFMA = FFMA's with the
# rounding at 50, DSETP = FSETP's); immediates are a double's top 20 bits
def D20(name="b", **kw) -> Imm:
    return Imm(name, 20, 19, "d20", sign=56, **kw)


forms(
    "DADD",
    alu(0x70),
    13,
    (DCC, A(neg=48, abs=46)),
    {RFORM: B(neg=45, abs=49), CFORM: CBuf("b", neg=45, abs=49), IFORM: D20()},
    mods=(field("rnd", 39, 2, RND),),
    ir="DADD",
)
forms(
    "DMUL",
    alu(0x80),
    13,
    (DCC, A()),
    {RFORM: B(neg=48), CFORM: CBuf("b", neg=48), IFORM: D20(neg=48)},
    mods=(field("rnd", 39, 2, RND),),
    ir="DMUL",
)
DFMA_MODS = (field("rnd", 50, 2, RND),)
row("DFMA", op(0x5B70, 12), (DCC, A(), B(neg=48), C(neg=49)), DFMA_MODS, ir="DFMA")
row("DFMA", op(0x4B70, 12), (DCC, A(), CBuf("b", neg=48), C(neg=49)), DFMA_MODS, ir="DFMA")
row("DFMA", op(0x5370, 12), (DCC, A(), Reg("b", 39, neg=48), CBuf("c", neg=49)), DFMA_MODS, ir="DFMA")
row("DFMA", op(0x3670, 12, holes=(56,)), (DCC, A(), D20(), C(neg=49)), DFMA_MODS, ir="DFMA")
# nvdisasm 11.8 prints no reuse flag on DSETP's operands (a set flag is refused here)
forms(
    "DSETP",
    {RFORM: 0x5B80, CFORM: 0x4B80, IFORM: 0x3680},
    12,
    (Pred("pd", 3), Pred("qd", 0), Reg("a", 8, neg=43, abs=7)),
    {
        RFORM: Reg("b", 20, neg=6, abs=44),
        CFORM: CBuf("b", neg=6, abs=44),
        IFORM: D20(neg=6, abs=44),
    },
    (P39,),
    mods=(field("cmp", 48, 4, FCMP), field("bop", 45, 2, BOP)),
    ir="DSETP",
)

# IMUL (-G code keeps it; -O3 builds multiplies from XMAD): sign of a at 40, of b at 41 (both
# signed prints nothing), .HI 39; IMUL32I: signs at 54/55, .HI 53, CC 52, a 32-bit immediate
IMUL_SIGN = Mod("sign", ((40, 2),), ((0, ".U32.U32"), (1, ".S32.U32"), (2, ".U32.S32"), (3, "")))
# IMUL prints no reuse flags (nvdisasm 11.8: a set flag prints nothing, so it is refused), as IMAD
forms(
    "IMUL",
    alu(0x38),
    13,
    (DCC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    mods=(IMUL_SIGN, flag("HI", 39)),
    ir="IMUL",
    cls="mad",
)
# IMAD (-G's 64-bit division helpers): sign of a at 48, of b at 53 (both signed prints nothing),
# .X 49, .SAT 50, negated c 51 / a 52 (both: .PO, refused), .HI 54, CC 47; bit 55 set is
# IMADSP (not a row).  R form 0x5a0, C form 0x4a0 (nvdisasm 11.8, every bit flipped).  Class
# 'mad': nvdisasm ignores reuse flags on it (as on memory rows); scheduled as variable latency
IMAD_SIGN = Mod("sign", ((48, 1), (53, 1)), ((0, ".U32.U32"), (1, ".S32.U32"), (2, ".U32.S32"), (3, "")))
forms(
    "IMAD",
    {RFORM: 0x5A00, CFORM: 0x4A00},
    9,
    (DCC, A(neg=52)),
    {RFORM: B(), CFORM: CBuf("b")},
    (C(neg=51),),
    mods=(IMAD_SIGN, flag("HI", 54), flag("SAT", 50), flag("X", 49)),
    ir="IMAD",
    exclusive=(3 << 51,),
    cls="mad",
)
row(
    "IMUL32I",
    op(0x1F00, 8),
    (Reg("d", 0, cc=52), Reg("a", 8), Imm("b", 20, 32, "s")),  # A prints no reuse flag (nvdisasm 11.8)
    (Mod("sign", ((54, 2),), ((0, ".U32.U32"), (1, ".S32.U32"), (2, ".U32.S32"), (3, ""))), flag("HI", 53)),
    ir="IMUL",
)

# --- warp -----------------------------------------------------------------------------------
row(
    "VOTE",
    op(0x50D8, 13),
    (Reg("d", 0, hide_rz=True), Pred("pd", 45), Pred("pa", 39, 42)),  # RZ left out (nvdisasm 11.8)
    (field("mode", 48, 2, {0: ".ALL", 1: ".ANY", 2: ".EQ"}),),
    ir="VOTE",
    cls="warp",
)
SHFL_MODE = field("mode", 30, 2, {0: ".IDX", 1: ".UP", 2: ".DOWN", 3: ".BFLY"})
for bimm in (0, 1):
    for cimm in (0, 1):
        bop = Imm("b", 20, 5, "u") if bimm else B()
        cop = Imm("c", 34, 13, "u") if cimm else C()
        row(
            "SHFL",
            op(0xEF10, 13, fixed=((28, bimm), (29, cimm))),
            (Pred("pd", 48), D, A(), bop, cop),
            (SHFL_MODE,),
            ir="SHFL",
            cls="warp",
        )

# --- graphics: attributes, interpolation, kill, textures, geometry output ------------------
# Layouts from Ryujinx InstDecoders (InstAld/InstAst/InstIpa/InstKil/InstTex*/InstTxq/InstOutR,
# MIT) and envytools, each bit checked by flipping it under nvdisasm 11.8 (tests in
# tests/shader_svc/test_sm53_gfx*.py).  Indexed forms (ALD/AST/IPA with an index register in
# 8..15, IPA.IDX) and the rarely printed texture options (TEX .AOFFI/.DC/.LC, TLD .AOFFI/.MS/.CL)
# are held at their reference values, so such words are refused, not guessed.  nvdisasm ignores
# bit 30 of ALD/AST's address; it must be 0 here.
AL_SIZE = field("size", 47, 2, {0: "", 1: ".64", 2: ".96", 3: ".128"})
VTX = Reg("vtx", 39, hide_rz=True)
row(
    "ALD",
    op(0xEFD8, 13),
    (D, Attr("attr", 20, 10, zero="RZ"), VTX),
    (flag("P", 31), flag("O", 32), AL_SIZE),
    base=0xFF << 8,
    ir="ALD",
    cls="attr",
    exclusive=(3 << 31,),
)
row(
    "AST",
    op(0xEFF0, 13),
    (Attr("attr", 20, 10, zero="RZ"), Reg("b", 0), VTX),
    (flag("P", 31), AL_SIZE),
    base=0xFF << 8,
    ir="AST",
    cls="attr",
)
row(
    "IPA",
    op(0xE000, 8),
    (D, Attr("attr", 28, 10), Reg("b", 20), Reg("c", 39, hide_rz=True), Pred("p", 47, not_bit=50, hide_pt=True)),
    (
        field("mode", 54, 2, {0: ".PASS", 1: "", 2: ".CONSTANT", 3: ".SC"}),
        field("loc", 52, 2, {0: "", 1: ".CENTROID", 2: ".OFFSET"}),
        flag("SAT", 51),
    ),
    base=0xFF << 8,
    ir="IPA",
    cls="attr",
)
row("KIL", op(0xE330, 12), (), base=0xF, ir="KIL", cls="branch")
row(
    "OUT",
    op(0xFBE0, 13),
    (D, A(), B()),
    (field("type", 39, 2, {1: ".EMIT", 2: ".CUT", 3: ".EMIT_THEN_CUT"}),),
    ir="OUT",
    cls="attr",
)

TID = Imm("tid", 36, 13, "u")
NODEP = flag("NODEP", 49)
# TEXS/TLDS: one 4-bit target field gives both the LOD modifiers and the dimension
TEXS_LOD = {
    0: ".LZ",
    1: "",
    2: ".LZ",
    3: ".LL",
    4: ".DC",
    5: ".LL.DC",
    6: ".LZ.DC",
    7: "",
    8: ".LZ",
    9: ".LZ.DC",
    10: "",
    11: ".LZ",
    12: "",
    13: ".LL",
}
TEXS_DIM = {
    0: "1D",
    1: "2D",
    2: "2D",
    3: "2D",
    4: "2D",
    5: "2D",
    6: "2D",
    7: "ARRAY_2D",
    8: "ARRAY_2D",
    9: "ARRAY_2D",
    10: "3D",
    11: "3D",
    12: "CUBE",
    13: "CUBE",
}
TLDS_LOD = {0: ".LZ", 1: ".LL", 2: ".LZ", 4: ".LZ.AOFFI", 5: ".LL", 6: ".LZ.MS", 7: ".LZ", 8: ".LZ", 12: ".LL.AOFFI"}
TLDS_DIM = {0: "1D", 1: "1D", 2: "2D", 4: "2D", 5: "2D", 6: "2D", 7: "3D", 8: "ARRAY_2D", 12: "2D"}
SHORT_DSTS = (Reg("d2", 28), D, A(), B(hide_rz=True))  # nvdisasm leaves out an Rb of RZ
# the .F16 forms (results packed as half pairs) are their own opcodes: bit 59 clear
for mn, top, lods, dims in (("TEXS", 0xD800, TEXS_LOD, TEXS_DIM), ("TLDS", 0xDA00, TLDS_LOD, TLDS_DIM)):
    for f16 in ("", ".F16"):
        row(
            mn,
            op(top & ~(0x0800 if f16 else 0), 7),
            SHORT_DSTS + (TID, Sym("dim", 53, 4, tuple(sorted(dims.items()))), TexsMask("mask")),
            (text("f16", f16), field("target", 53, 4, lods), NODEP),
            ir=mn,
            cls="tex",
        )
row(
    "TLD4S",
    op(0xDF00, 10, holes=(55,)),
    SHORT_DSTS[:3] + (B(), TID),  # TLD4S prints an Rb of RZ (nvdisasm 11.8)
    (flag("F16", 55), field("comp", 52, 2, {0: ".R", 1: ".G", 2: ".B", 3: ".A"}), flag("AOFFI", 51), flag("DC", 50), NODEP),
    ir="TLD4S",
    cls="tex",
)
TEX_DIM = ((0, "1D"), (1, "ARRAY_1D"), (2, "2D"), (3, "ARRAY_2D"), (4, "3D"), (6, "CUBE"), (7, "ARRAY_CUBE"))
TEX_OPS = (
    Pred("pd", 51, hide_pt=True),
    D,
    A(),
    Reg("b", 20, hide_rz=True),
    TID,
    Sym("dim", 28, 3, TEX_DIM),
    Imm("mask", 31, 4, "u"),
)
# TEX's .DC (50) is decoded; .AOFFI (54) and .LC (58) stay held 0
row(
    "TEX",
    op(0xC000, 6),
    TEX_OPS,
    (field("lod", 55, 3, {0: "", 1: ".LZ", 2: ".LB", 3: ".LL", 6: ".LBA", 7: ".LLA"}), flag("DC", 50), flag("NDV", 35), NODEP),
    base=7 << 51,
    ir="TEX",
    cls="tex",
)
# TLD's .AOFFI (35) is decoded; .MS (50) stays held 0.  shader-tex: .CL (54; ptxas 12.9 writes
# TLD.LL.CL for tex.level with integer coordinates), printed after .AOFFI, before .NODEP
# (nvdisasm 11.8 "TLD.LL.AOFFI.CL", "TLD.B.LL.CL.NODEP"); on TLD.B too
row(
    "TLD",
    op(0xDC00, 8),
    TEX_OPS,
    (field("lod", 55, 1, {0: ".LZ", 1: ".LL"}), flag("AOFFI", 35), flag("CL", 54), NODEP),
    base=7 << 51,
    ir="TLD",
    cls="tex",
)
# Bindless forms (13-bit opcodes; checked by flipping each bit under nvdisasm 11.8): no texture
# index (nvdisasm prints a fixed 0x0 in its place), TEX.B's LOD moves to 37..39 (.AOFFI 36, .LC
# 40, .DC 50 and bits 41..48, which do not change the text, held 0), TLD.B's .LZ/.LL is bit 55
# inside the opcode (.AOFFI 35, .MS 50 held 0).  The handle register is Rb (the lowering's
# convention, shader_svc/README.md "Bindless textures").
TEXB_OPS = (
    D,
    A(),
    Reg("b", 20, hide_rz=True),
    Sym("idx", 36, 0, ((0, "0x0"),)),
    Sym("dim", 28, 3, TEX_DIM),
    Imm("mask", 31, 4, "u"),
)
row(
    "TEX",
    op(0xDEB8, 13),
    TEXB_OPS,
    (text("B", ".B"), field("lod", 37, 3, {0: "", 1: ".LZ", 2: ".LB", 3: ".LL", 6: ".LBA", 7: ".LLA"}), flag("NDV", 35), NODEP),
    ir="TEX.B",
    cls="tex",
)
row(
    "TLD",
    op(0xDD38, 13, holes=(54, 55)),
    TEXB_OPS,
    (text("B", ".B"), field("lod", 55, 1, {0: ".LZ", 1: ".LL"}), flag("CL", 54), NODEP),
    ir="TLD.B",
    cls="tex",
)
row(
    "TXQ",
    op(0xDF48, 13),
    (
        D,
        A(),
        Sym("query", 22, 6, ((1, "TEX_HEADER_DIMENSION"), (2, "TEX_HEADER_TEXTURE_TYPE"), (5, "TEX_HEADER_SAMPLER_POS"))),
        TID,
        Imm("mask", 31, 4, "u"),
    ),
    (NODEP,),
    base=1 << 22,
    ir="TXQ",
    cls="tex",
)
# TLD4.B / TXQ.B (each bit flipped under nvdisasm 11.8): TLD4.B is laid out as TEX.B with the
# gathered component at 38..39 (printed before .B), .NDV 35, .NODEP 49; .AOFFI 36, .PTP 37, .DC 50
# and bit 40 (refused by nvdisasm) held 0, bits 41..48 (not printed) held 0.  TXQ.B is TXQ without
# an index (the fixed 0x0); Ra holds the handle, the level follows in Ra+1 (the lowering's
# convention, shader_svc/README.md "Bindless textures"); bits 20..21 (not printed) held 0.
row(
    "TLD4",
    op(0xDEF8, 13),
    TEXB_OPS,
    (field("comp", 38, 2, {0: ".R", 1: ".G", 2: ".B", 3: ".A"}), text("B", ".B"), flag("NDV", 35), NODEP),
    ir="TLD4.B",
    cls="tex",
)
row(
    "TXQ",
    op(0xDF50, 13),
    (
        D,
        A(),
        Sym("query", 22, 6, ((1, "TEX_HEADER_DIMENSION"), (2, "TEX_HEADER_TEXTURE_TYPE"), (5, "TEX_HEADER_SAMPLER_POS"))),
        Sym("idx", 36, 0, ((0, "0x0"),)),
        Imm("mask", 31, 4, "u"),
    ),
    (text("B", ".B"), NODEP),
    base=1 << 22,
    ir="TXQ.B",
    cls="tex",
)
# TLD4 (bound texture; each bit flipped under nvdisasm 11.8): TEX's operands (predicate result
# 51..53, Rd, Ra, Rb, index 36..48, dimension 28..30, mask 31..34), component 56..57, the offset
# mode 54..55 (.AOFFI, .PTP; both bits set prints INVALIDBTOFF03, refused), .DC 50, .NDV 35,
# .NODEP 49, printed in that order.
row(
    "TLD4",
    op(0xC800, 6),
    TEX_OPS,
    (
        field("comp", 56, 2, {0: ".R", 1: ".G", 2: ".B", 3: ".A"}),
        field("off", 54, 2, {0: "", 1: ".AOFFI", 2: ".PTP"}),
        flag("DC", 50),
        flag("NDV", 35),
        NODEP,
    ),
    base=7 << 51,
    ir="TLD4",
    cls="tex",
)


# --- issue 31 (shader-decode): more of nvdisasm 11.8's set, each row from flipping every bit of
# a seed word under nvdisasm (tests/shader_svc/isa_sweep.py; test_sm53_disasm.py::
# test_more_rows_every_bit_flipped sweeps each row the same way).  No lowering key of an
# existing handler: the translator refuses them by name.  Bits of unverified meaning are held at
# the reference value (the word is refused, never guessed).
MORE_FROM = len(ROWS)
D52 = Reg("d", 0, cc=52)  # the 32-bit-immediate forms keep .CC at 52
F32 = Imm("b", 20, 32, "f32")
row("FADD32I", op(0x0800, 6), (D52, A(neg=56, abs=54), Imm("b", 20, 32, "f32", neg=53, abs=57)), (flag("FTZ", 55),), ir="FADD32I")
row(
    "FMUL32I",
    op(0x1E00, 8),
    (D52, A(), Imm("b", 20, 32, "f32")),
    (field("ftz", 53, 2, FTZ_FMZ), flag("SAT", 55)),
    ir="FMUL32I",
)
# FFMA32I: the addend register is the destination (bits 0..7 print twice)
row(
    "FFMA32I",
    op(0x0C00, 6),
    (D52, A(neg=56), F32, Reg("c", 0, neg=57)),
    (field("ftz", 53, 2, FTZ_FMZ), flag("SAT", 55)),
    ir="FFMA32I",
)
# the condition-code tests, in the order of Maxwell's 5-bit field (Ryujinx's Ccc, envytools)
CC_TESTS = dict(
    enumerate(
        ".F .LT .EQ .LE .GT .NE .GE .NUM .NAN .LTU .EQU .LEU .GTU .NEU .GEU .T .OFF .LO .SFF .LS .HI .SFT .HS .OFT "
        ".CSM_TA .CSM_TR .CSM_MX .FCSM_TA .FCSM_TR .FCSM_MX .RLE .RGT".split()
    )
)
CC = Sym("cc", 0, 0, ((0, "CC"),))
row("CSET", op(0x5098, 13), (DCC, CC, P39), (flag("BF", 44), field("test", 8, 5, CC_TESTS), field("bop", 45, 2, BOP)), ir="CSET")
row(
    "CSETP",
    op(0x50A0, 13),
    (Pred("pd", 3), Pred("qd", 0), CC, P39),
    (field("test", 8, 5, CC_TESTS), field("bop", 45, 2, BOP)),
    ir="CSETP",
)
row(
    "PSET",
    op(0x5088, 13),
    (DCC, Pred("pa", 12, 15), Pred("pb", 29, 32), Pred("pc", 39, 42)),
    (flag("BF", 44), field("bop1", 24, 2, BOP), field("bop2", 45, 2, BOP)),
    ir="PSET",
)
forms(
    "ISET",
    {RFORM: 0x5B50, CFORM: 0x4B50, IFORM: 0x3650},
    12,
    (DCC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    (P39,),
    mods=(
        flag("BF", 44),
        field("cmp", 49, 3, ICMP),
        field("u32", 48, 1, U32_WHEN_CLEAR),
        flag("X", 43),
        field("bop", 45, 2, BOP),
    ),
    ir="ISET",
)
forms(
    "FSET",
    {RFORM: 0x5800, CFORM: 0x4800, IFORM: 0x3000},
    8,
    (DCC, A(neg=43, abs=54)),
    {RFORM: B(neg=53, abs=44), CFORM: CBuf("b", neg=53, abs=44), IFORM: F20(neg=53, abs=44)},
    (P39,),
    mods=(flag("BF", 52), field("cmp", 48, 4, FCMP), flag("FTZ", 55), field("bop", 45, 2, BOP)),
    ir="FSET",
)
forms(
    "DSET",
    {RFORM: 0x5900, CFORM: 0x4900, IFORM: 0x3200},
    9,
    (DCC, Reg("a", 8, neg=43, abs=54)),  # DSET/DMNMX: nvdisasm prints no reuse flags (set: refused)
    {
        RFORM: Reg("b", 20, neg=53, abs=44),
        CFORM: CBuf("b", neg=53, abs=44),
        IFORM: D20(neg=53, abs=44),
    },
    (P39,),
    mods=(flag("BF", 52), field("cmp", 48, 4, FCMP), field("bop", 45, 2, BOP)),
    ir="DSET",
)
forms(
    "DMNMX",
    {RFORM: 0x5C50, CFORM: 0x4C50, IFORM: 0x3850},
    13,
    (DCC, Reg("a", 8, neg=48, abs=46)),
    {
        RFORM: Reg("b", 20, neg=45, abs=49),
        CFORM: CBuf("b", neg=45, abs=49),
        IFORM: D20(neg=45, abs=49),
    },
    (P39,),
    ir="DMNMX",
)
forms(
    "FCHK",
    {RFORM: 0x5C88, CFORM: 0x4C88, IFORM: 0x3888},
    13,
    (Pred("pd", 3), A(neg=48, abs=46)),
    {RFORM: B(neg=45, abs=49), CFORM: CBuf("b", neg=45, abs=49), IFORM: F20(neg=45, abs=49)},
    mods=(field("mode", 39, 6, {0: ".DIVIDE"}),),
    ir="FCHK",
)
forms(
    "FCMP",
    {RFORM: 0x5BA0, CFORM: 0x4BA0, IFORM: 0x36A0},
    12,
    (D, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: F20()},
    (C(),),
    mods=(field("cmp", 48, 4, {**FCMP, 4: ""}), flag("FTZ", 47)),  # nvdisasm 11.8 prints FCMP.GT as FCMP
    ir="FCMP",
)
PR_CC = Sym("pr", 40, 1, ((0, "PR"), (1, "CC")))
forms(
    "P2R",
    {RFORM: 0x5CE8, CFORM: 0x4CE8, IFORM: 0x38E8},
    13,
    (D, PR_CC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: Imm("b", 20, 19, "u")},  # bit 56 held 0 (nvdisasm: unsigned)
    mods=(field("bsel", 41, 2, {0: "", 1: ".B1", 2: ".B2", 3: ".B3"}),),
    ir="P2R",
)
forms(
    "R2P",
    {RFORM: 0x5CF0, CFORM: 0x4CF0, IFORM: 0x38F0},
    13,
    (PR_CC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: Imm("b", 20, 19, "u")},
    ir="R2P",
)
row("LEPC", op(0x50D0, 13), (D,), ir="LEPC", cls="ctrl")
# these four have no guard predicate: nvdisasm ignores bits 16..19 (held 0 here)
row("GETLMEMBASE", op(0xE2D0, 12), (D,), ir="GETLMEMBASE", cls="mem", guard=False)
row("SETLMEMBASE", op(0xE2F0, 12), (A(),), ir="SETLMEMBASE", cls="mem", guard=False)
row("GETCRSPTR", op(0xE2C0, 12), (D,), ir="GETCRSPTR", cls="ctrl", guard=False)
row("SETCRSPTR", op(0xE2E0, 12), (A(),), ir="SETCRSPTR", cls="ctrl", guard=False)
row("B2R", op(0xF0B8, 13), (D, Imm("b", 8, 8, "u")), ir="B2R", cls="ctrl")
# the reconvergence stack's other entries and control ops (targets as SSY/PBK's; CONT/LONGJMP
# test the condition code as BRK; bit 5 of the P* ops (a constant-bank target) held 0)
for _m, _top in (("PCNT", 0xE2B0), ("PEXIT", 0xE230), ("PLONGJMP", 0xE280)):
    row(_m, op(_top, 16), (Target("t"),), ir=_m, cls="branch", guard=False)
row("PRET", op(0xE270, 16), (Target("t"),), (field("inc", 6, 1, {0: ".NOINC", 1: ""}),), ir="PRET", cls="branch", guard=False)
row("CONT", op(0xE350, 16), (), base=CC_T, ir="CONT", cls="branch")
row("LONGJMP", op(0xE310, 16), (), base=CC_T, ir="LONGJMP", cls="branch")
row("CS2R", op(0x50C8, 13), (D, SReg("sr")), ir="CS2R", cls="ctrl")
row(
    "R2B",
    op(0xF0C0, 13),
    (Imm("bar", 28, 4, "u"), B()),
    (field("mode", 32, 2, {0: "", 1: ".RESULT", 2: ".WARP"}),),
    ir="R2B",
    cls="ctrl",
)
row("IDE", op(0xE390, 16), (Imm("b", 20, 16, "u"),), (field("en", 5, 1, {0: ".EN", 1: ""}),), ir="IDE", cls="ctrl", guard=False)
for _m, _top in (("RAM", 0xE380), ("SAM", 0xE370), ("RTT", 0xE360)):
    row(_m, op(_top, 16), (), ir=_m, cls="ctrl", guard=False)
row("STP", op(0xEEA0, 16), (Imm("b", 20, 8, "u"),), (flag("WAIT", 31),), ir="STP", cls="ctrl", guard=False)
CC_SYM = Sym("cc", 0, 5, tuple((k, "" if k == 15 else "CC" + v) for k, v in CC_TESTS.items()))  # CC.T: left out
row("JMP", op(0xE210, 16), (CC_SYM, Imm("t", 20, 32, "u")), (flag("LMT", 6), flag("U", 7)), ir="JMP", cls="branch")
row(
    "PIXLD",
    op(0xEFE8, 13),
    (D, Pred("p", 45, hide_pt=True), Mem("a", 8, 20, 8)),
    (field("mode", 31, 3, {0: "", 1: ".COVMASK", 2: ".COVERED", 4: ".CENTROID_OFFSET"}),),
    ir="PIXLD",
    cls="attr",
)
row(
    "ISBERD",
    op(0xEFD0, 13),
    (D, Mem("a", 8, 20, 0, signed=False)),  # no offset field
    (
        field("mode", 31, 4, {0: "", 1: ".SKEW", 2: ".O", 4: ".PATCH", 8: ".PRIM"}),
        field("size", 47, 2, {0: "", 1: ".U16", 2: ".32"}),
    ),
    ir="ISBERD",
    cls="attr",
)
row(
    "AL2P",
    op(0xEFA0, 13),
    (Pred("p", 44, hide_pt=True), D, A(), Imm("b", 20, 11, "s", hide_zero=True)),
    (field("size", 47, 2, {0: "", 1: ".64", 2: ".96", 3: ".128"}), flag("O", 32)),
    ir="AL2P",
    cls="attr",
    exclusive=(0xFF << 8,),  # Ra = RZ: nvdisasm prints the offset alone, unsigned (refused here)
)
row("ISCADD32I", op(0x1400, 6), (D52, A(), Imm("b", 20, 32, "s"), Imm("s", 53, 5, "u")), ir="ISCADD32I")
# FSWZADD: the swizzle pattern at 28..35: four 2-bit fields, field k (bits 28 + 2k) printing
# letters 6 - 2k and 7 - 2k of the pattern: 0 'PP', 1 'NP', 2 'PN', 3 'ZP' (nvdisasm 11.8)
_SWZ_PAIR = ("PP", "NP", "PN", "ZP")
SWZ53 = tuple((v, "".join(_SWZ_PAIR[v >> (2 * k) & 3] for k in (3, 2, 1, 0))) for v in range(256))
row(
    "FSWZADD",
    op(0x50F8, 13),
    (DCC, A(), Reg("b", 20), Sym("swz", 28, 8, SWZ53)),  # B prints no reuse flag
    (flag("FTZ", 44), field("rnd", 39, 2, RND), flag("NDV", 38)),
    ir="FSWZADD",
)
row(
    "TXA",
    op(0xDF40, 13),
    (D, A(), Imm("idx", 36, 13, "u"), Imm("mask", 31, 4, "u")),
    (flag("NDV", 35), flag("NODEP", 49)),
    ir="TXA",
    cls="tex",
)
row("CCTLT", op(0xEBF0, 16), (), (field("op", 0, 2, {0: ".IVALL"}),), ir="CCTLT", cls="mem")
# XMAD's RC form (B = Rc@39, C = a constant): no PSL/MRG; its own lowering key (refused by
# name: the lowering's XMAD reads PSL/MRG)
row(
    "XMAD",
    op(0x5100, 9),
    (DCC, A(h1=53), Reg("b", 39, h1=52, reuse=1), CBuf("c")),  # B answers to reuse flag 1 (nvdisasm 11.8; shader-alu)
    (XSIGN, XMODE2, flag("X", 54)),
    ir="XMAD.RC",
)


# --- the video ops (register form, bit 50 set): A and B with a selector each (36..38, 28..30:
# bytes, halves or the word; the size in the mnemonic, the byte/half after the register), their
# signs (48, 49), C, and the combining step 51..53 (a merge, an accumulate, a min or max)
def _vtype(name: str, sel_lo: int, sign_bit: int) -> Mod:
    names = {}
    for sign in (0, 1):
        for sel in range(7):
            names[sel | sign << 3] = f".{'S' if sign else 'U'}{8 if sel < 4 else 16 if sel < 6 else 32}"
    return Mod(name, ((sel_lo, 3), (sign_bit, 1)), tuple(sorted(names.items())))


VSTEP = {0: ".MRG_16H", 1: ".MRG_16L", 4: ".ACC", 5: ".MIN", 6: ".MAX", 7: ""}
VA, VB = Reg("a", 8, vsel=36, reuse=0), Reg("b", 20, vsel=28, reuse=1)
row(
    "VABSDIFF",
    op(0x5400, 8, fixed=((50, 1),)),
    (DCC, VA, VB, C()),
    (flag("SD", 54), _vtype("ta", 36, 48), _vtype("tb", 28, 49), flag("SAT", 55), field("step", 51, 3, VSTEP)),
    base=0x5424006060570200,  # VABSDIFF.U32.U32.ACC R0, R2, R5, R0 (nvcc's)
    ir="VABSDIFF",
)
row(
    "VMNMX",
    op(0x3A00, 7, fixed=((50, 1),)),
    (DCC, VA, VB, C()),
    (
        field("UD", 54, 1, {0: ".UD", 1: ""}),
        _vtype("ta", 36, 48),
        _vtype("tb", 28, 49),
        flag("SAT", 55),
        flag("MX", 56),
        field("step", 51, 3, VSTEP),
    ),
    base=0x3A2C04E060270409,  # VMNMX.UD.U32.U32.MIN R9, R4, R2, R9 (nvcc's)
    ir="VMNMX",
)
VMERGE = {0: ".MRG_16H", 1: ".MRG_16L", 2: ".MRG_8B0", 4: ".ACC"}


def _vtype_u(name: str, sel_lo: int) -> Mod:
    """An unsigned operand type (VSHL/VSHR: bits 48/49 are other modifiers there)."""
    return Mod(name, ((sel_lo, 3),), tuple((sel, f".U{8 if sel < 4 else 16 if sel < 6 else 32}") for sel in range(7)))


UD = field("UD", 54, 1, {0: ".UD", 1: ""})
row(
    "VADD",
    op(0x2000, 6, fixed=((50, 1),)),
    (DCC, Reg("a", 8, vsel=36, reuse=0, neg=57), Reg("b", 20, vsel=28, reuse=1, neg=56), C()),
    (UD, _vtype("ta", 36, 48), _vtype("tb", 28, 49), flag("SAT", 55), field("step", 51, 3, VMERGE)),
    base=(6 << 36) | (6 << 28),
    ir="VADD",
)
for _m, _top in (("VSHL", 0x5700), ("VSHR", 0x5600)):
    row(
        _m,
        op(_top, 8, fixed=((50, 1), (48, 0))),
        (DCC, VA, VB, C()),
        (UD, _vtype_u("ta", 36), _vtype_u("tb", 28), flag("W", 49), flag("SAT", 55), field("step", 51, 3, VMERGE)),
        base=(6 << 36) | (6 << 28),
        ir=_m,
    )
row(
    "VSET",
    op(0x4000, 7, fixed=((50, 1),)),
    (DCC, VA, VB, C()),
    (field("cmp", 54, 3, ICMP), _vtype("ta", 36, 48), _vtype("tb", 28, 49), field("step", 51, 3, VMERGE)),
    base=(6 << 36) | (6 << 28),
    ir="VSET",
)
row(
    "VSETP",
    op(0x50F0, 13, fixed=((50, 1),)),
    (Pred("pd", 3), Pred("qd", 0), VA, VB, P39),
    (
        Mod("cmp", ((43, 2), (47, 1)), tuple(sorted(ICMP.items()))),
        _vtype("ta", 36, 48),
        _vtype("tb", 28, 49),
        field("bop", 45, 2, BOP),
    ),
    base=(6 << 36) | (6 << 28),
    ir="VSETP",
)
row(
    "VMAD",
    op(0x5F00, 8, fixed=((50, 1),)),
    # (reuse flags: see the shader-video block at the end)
    (DCC, Reg("a", 8, vsel=36, neg=54), Reg("b", 20, vsel=28), Reg("c", 39, neg=53)),
    (_vtype("ta", 36, 48), _vtype("tb", 28, 49), field("shr", 51, 2, {0: "", 1: ".SHR_7", 2: ".SHR_15"}), flag("SAT", 55)),
    base=(6 << 36) | (6 << 28),
    ir="VMAD",
    exclusive=(3 << 53,),  # both negations print .PO, another operation (refused)
)
# IMAD32I: the addend register is the destination (bits 0..7 print twice), signs of A (54) and
# the immediate (57), .HI 53, .CC 52
row(
    "IMAD32I",
    op(0x1000, 6),
    (D52, Reg("a", 8, neg=56), Imm("b", 20, 32, "s"), Reg("c", 0, neg=55)),  # no reuse flag printed
    # both signed prints no types; both negations is .PO, another operation (refused)
    (Mod("types", ((54, 1), (57, 1)), ((0, ".U32.U32"), (1, ".S32.U32"), (2, ".U32.S32"), (3, ""))), flag("HI", 53)),
    ir="IMAD32I",
    exclusive=((1 << 55) | (1 << 56),),
)
# indirect branches: the condition code, the register and a signed offset printed after it
# ('BRX CC.F, R0 0x10', left out while 0); .LMT 6; bit 5 (a constant-bank target) held 0
row("BRX", op(0xE250, 16), (CC_SYM, A(), Imm("t", 20, 24, "sa", hide_zero=True)), (flag("LMT", 6),), ir="BRX", cls="branch")
row("JMX", op(0xE200, 16), (CC_SYM, A(), Imm("t", 20, 32, "ua", hide_zero=True)), (flag("LMT", 6),), ir="JMX", cls="branch")


# --- issue 31 (shader-decode): the rest of nvdisasm 11.8's set, decoded and printed; the
# translator has no rule for these and refuses them by name.  Every layout read off nvdisasm's
# text of each single-bit flip of a reference word (tests/shader_svc/isa_sweep.py 53 <word>).
#
# Half-precision 32-bit-immediate forms (opcode: top 7 bits): D = R@0, A = R@8 (swizzle 53..54),
# the immediate's two halves (the high one 36..51 printed first, then 20..35); .SAT 52, .FTZ 55;
# HADD2_32I's A negates at 56, HMUL2_32I's/HFMA2_32I's bit 56 is .FMZ (with .FTZ: INVALID,
# refused); HFMA2_32I's C is the destination register (printed again last, negated at 52).
H16HI, H16LO = Imm("bh", 36, 16, "h16"), Imm("bl", 20, 16, "h16")
HA32 = Reg("a", 8, reuse=0, swz=53)
row(
    "HADD2_32I",
    op(0x2C00, 7),
    (D, Reg("a", 8, reuse=0, neg=56, swz=53), H16HI, H16LO),
    (flag("FTZ", 55), flag("SAT", 52)),
    ir="HADD2_32I",
)
row(
    "HMUL2_32I",
    op(0x2A00, 7),
    (D, HA32, H16HI, H16LO),
    (flag("FTZ", 55), flag("FMZ", 56), flag("SAT", 52)),
    ir="HMUL2_32I",
    exclusive=(3 << 55,),
)
row(
    "HFMA2_32I",
    op(0x2800, 7),
    (D, HA32, H16HI, H16LO, Reg("c", 0, neg=52)),
    (flag("FTZ", 55), flag("FMZ", 56)),
    ir="HFMA2_32I",
    exclusive=(3 << 55,),
)
# HSET2 (register form): HSETP2's sources and comparison, a result mask (.BF 49: 1.0 halves)
row(
    "HSET2",
    op(0x5D18, 13),
    (D, Reg("a", 8, reuse=0, neg=43, abs=44, swz=47), Reg("b", 20, reuse=1, neg=31, abs=30, swz=28), P39),
    (flag("BF", 49), field("cmp", 35, 4, FCMP), flag("FTZ", 50), field("bop", 45, 2, BOP)),
    ir="HSET2",
)


# IMADSP (24/16-bit multiply-add): one modifier word of three types: A 48..50 (U32 S32 U24 S24
# U16H0 S16H0 U16H1 S16H1), B 53..54 (U24 S24 U16H0 S16H0), C's size 51..52 (32 24 16H0), C
# printed signed when A or B is
_SP_A = ("U32", "S32", "U24", "S24", "U16H0", "S16H0", "U16H1", "S16H1")
_SP_B = ("U24", "S24", "U16H0", "S16H0")
_SP = tuple(
    (a | c << 3 | b << 5, f".{_SP_A[a]}.{_SP_B[b]}.{'S' if (a | b) & 1 else 'U'}{('32', '24', '16H0')[c]}")
    for a in range(8)
    for b in range(4)
    for c in range(3)
)
forms(
    "IMADSP",
    {RFORM: 0x5A80, CFORM: 0x4A80, IFORM: 0x3480},
    9,
    (DCC, A()),
    {RFORM: B(), CFORM: CBuf("b"), IFORM: I19()},
    (C(),),
    mods=(Mod("types", ((48, 3), (51, 2), (53, 2)), tuple(sorted(_SP))),),
    ir="IMADSP",
    cls="mad",  # prints no reuse flags (as IMAD)
)
# TMML.LOD (LOD query) and TXD (explicit derivatives): the TEX layout (texture index 36..48,
# dimension 28..30, mask 31..34); TMML has no second source (bits 20..27 held), TXD prints its
# fault predicate (51) and B; .LC 50, .AOFFI 35, .NDV 35 (TMML), .NODEP 49; .B forms refused
row(
    "TMML.LOD",
    op(0xDF58, 13),
    (D, A(), TID, Sym("dim", 28, 3, TEX_DIM), Imm("mask", 31, 4, "u")),
    (flag("NDV", 35), NODEP),
    ir="TMML",
    cls="tex",
)
row(
    "TXD",
    op(0xDE00, 10),
    (Pred("pd", 51, hide_pt=True), D, A(), Reg("b", 20), TID, Sym("dim", 28, 3, TEX_DIM), Imm("mask", 31, 4, "u")),
    (flag("LC", 50), flag("AOFFI", 35), NODEP),
    ir="TXD",
    cls="tex",
)


# Surfaces (.D forms, handle in a register at 39; the immediate-handle forms (bit 51) and .P
# forms are refused): address [R8], data/destination R0, .BA, dimension 33..35, cache, size or
# atomic type 20..22, out-of-range mode 49..50; SULD's predicate 30..32 is stored xor 7 (0 =
# PT, left out)
SU_DIM53 = field("dim", 33, 3, {0: ".1D", 1: ".1D_BUFFER", 2: ".1D_ARRAY", 3: ".2D", 4: ".2D_ARRAY", 5: ".3D"})
SU_CLAMP53 = field("clamp", 49, 2, {0: ".IGN", 1: "", 2: ".TRAP"})
SU_SIZE53 = field("size", 20, 3, {0: ".U8", 1: ".S8", 2: ".U16", 3: ".S16", 4: "", 5: ".64", 6: ".128"})
SU_ADDR53 = Mem("addr", 8, off_w=0, signed=False)
row(
    "SULD.D",
    op(0xEB10, 13),
    (Pred("p", 30, hide_pt=True, xor=7), D, SU_ADDR53, C()),
    (flag("BA", 23), SU_DIM53, field("cache", 24, 2, {0: "", 1: ".CG", 2: ".CI"}), SU_SIZE53, SU_CLAMP53),
    ir="SULD",
    cls="mem",
)
row(
    "SUST.D",
    op(0xEB30, 13),
    (SU_ADDR53, Reg("b", 0), C()),
    (flag("BA", 23), SU_DIM53, field("cache", 24, 2, {0: "", 1: ".CG", 2: ".CS"}), SU_SIZE53, SU_CLAMP53),
    ir="SUST",
    cls="mem",
)
row(
    "SURED.D",
    op(0xEB50, 13),
    (SU_ADDR53, Reg("b", 0), C()),
    (
        flag("BA", 23),
        SU_DIM53,
        field("op", 24, 4, {0: ".ADD", 1: ".MIN", 2: ".MAX", 3: ".INC", 4: ".DEC", 5: ".AND", 6: ".OR", 7: ".XOR"}),
        field("type", 20, 3, {0: "", 1: ".S32", 2: ".U64", 4: ".F16x2.FTZ.RN"}),
        SU_CLAMP53,
    ),
    ir="SURED",
    cls="mem",
)


# SUATOM.D with an immediate handle (36..48): address [R8], data R20, destination R0; .BA 28,
# operation 29..32, dimension 33..35, type 51..53, out-of-range mode 49..50 (.CAS, bit 55: refused)
row(
    "SUATOM.D",
    op(0xEA00, 10),
    (D, SU_ADDR53, B(), Imm("h", 36, 13, "u")),
    (
        flag("BA", 28),
        SU_DIM53,
        field("op", 29, 4, {0: ".ADD", 1: ".MIN", 2: ".MAX", 3: ".INC", 4: ".DEC", 5: ".AND", 6: ".OR", 7: ".XOR", 8: ".EXCH"}),
        field(
            "type",
            51,
            3,
            {0: "", 1: ".S32", 2: ".U64", 3: ".F32.FTZ.RN", 4: ".F16x2.FTZ.RN", 5: ".S64", 6: ".SD32", 7: ".SD64"},
        ),
        SU_CLAMP53,
    ),
    ir="SUATOM",
    cls="mem",
)


# CCTL (cache control): operation 0..3, cache 4..6, .E 52, address [R8 + 4 * (22..51)];
# nvdisasm prints .QRY1's address against the mnemonic ('CCTL.QRY1[R0]'): a row of its own
_CCTL_MODS = (flag("E", 52), field("cache", 4, 3, {0: "", 1: ".U", 2: ".C", 3: ".I", 4: ".CRS"}))
row(
    "CCTL",
    op(0xEF60, 11),
    (Mem("addr", 8, 22, 30, scale=4, glue=True),),
    (*_CCTL_MODS, field("op", 0, 4, {0: ".QRY1"})),
    cls="mem",
)
row(
    "CCTL",
    op(0xEF60, 11),
    (Mem("addr", 8, 22, 30, scale=4),),
    (*_CCTL_MODS, field("op", 0, 4, {1: ".PF1", 2: ".PF1.5", 3: ".PF2", 4: ".WB", 5: ".IV", 7: ".RS", 9: ".RSLB"})),
    cls="mem",
)


# VABSDIFF4 (register form): four byte differences; A's and B's byte selectors (32..35,
# 28..31) print as patterns after the register; signs 48 (A), 49 (B); .SD 38, .SAT 50, .ACC
# (53..54 = 1); the result mask (51 X, 52 Y, 36 Z, 37 W; all four print nothing, none is invalid)
_VSEL_A = ((0, ".0000"), (1, ".1111"), (2, ".2222"), (3, ".3333"), (4, ""), (5, ".4321"), (6, ".5432"), (7, ".6543"))
_VSEL_A += ((8, ".3201"), (9, ".3012"), (10, ".0213"), (11, ".3120"), (12, ".1230"), (13, ".2310"))
_VSEL_B = ((0, ".4444"), (1, ".5555"), (2, ".6666"), (3, ".7777"), (4, ""), (5, ".6543"), (6, ".5432"), (7, ".4321"))
_VSEL_B += ((8, ".4567"), (9, ".6745"), (10, ".5476"))
_VMASK = tuple((v, "" if v == 15 else "." + "".join(c for i, c in enumerate("XYZW") if v >> i & 1)) for v in range(1, 16))
row(
    "VABSDIFF4",
    op(0x5000, 9),
    (DCC, Reg("a", 8, sel4=(32, _VSEL_A)), Reg("b", 20, sel4=(28, _VSEL_B)), C()),
    (
        flag("SD", 38),
        field("asign", 48, 1, {0: ".U8", 1: ".S8"}),
        field("bsign", 49, 1, {0: ".U8", 1: ".S8"}),
        flag("SAT", 50),
        field("red", 53, 2, {0: "", 1: ".ACC"}),
        Mod("mask", ((51, 2), (36, 2)), _VMASK),
    ),
    base=0x3 << 51 | 0x3 << 36 | 4 << 32 | 4 << 28,
)


# --- half precision (issue 31; shader-half), register forms; every bit flipped under nvdisasm
# 11.8 on ptxas's words: A = R@8 (-43 but not HMUL2's, |x| 44, swizzle 47..48), B = R@20 (-31, |x| 30, swizzle
# 28..29), HFMA2's C = R@39 (swizzle 35..36, -30; B has no |x| there); swizzle 0 = H1_H0 (printed
# as nothing), 1 = .F32, 2 = .H0_H0, 3 = .H1_H1, inside |x|.  Result mode 49..50 (.F32: one f32;
# .MRG_H0/.MRG_H1: only that half written), .SAT 32, .FTZ 39 (HFMA2: 37); .FMZ (HMUL2 40, HFMA2
# 38; with .FTZ nvdisasm prints '.INVALID') is left out: such words are refused.  HSETP2: P 3,
# Q 0, .FTZ 6, comparison 35..38, the combined predicate 39/42, combining op 45..46, .H_AND 49.
HMODE = field("mode", 49, 2, {0: "", 1: ".F32", 2: ".MRG_H0", 3: ".MRG_H1"})
HA = Reg("a", 8, reuse=0, neg=43, abs=44, swz=47)
HB = Reg("b", 20, reuse=1, neg=31, abs=30, swz=28)
# HADD2's B prints no reuse flag under nvdisasm 11.8 (a set flag is refused)
row("HADD2", op(0x5D10, 13), (D, HA, Reg("b", 20, neg=31, abs=30, swz=28)), (HMODE, flag("FTZ", 39), flag("SAT", 32)), ir="HADD2")
# HMUL2's A has no negate (bit 43 is ignored by nvdisasm: held at 0)
row("HMUL2", op(0x5D08, 13), (D, Reg("a", 8, reuse=0, abs=44, swz=47), HB), (HMODE, flag("FTZ", 39), flag("SAT", 32)), ir="HMUL2")
row(
    "HFMA2",
    op(0x5D00, 13),
    (D, Reg("a", 8, reuse=0, swz=47), Reg("b", 20, reuse=1, neg=31, swz=28), Reg("c", 39, reuse=2, neg=30, swz=35)),
    (HMODE, flag("FTZ", 37), flag("SAT", 32)),
    ir="HFMA2",
)
row(
    "HSETP2",
    op(0x5D20, 13),
    (Pred("p", 3), Pred("q", 0), HA, HB, P39),
    (field("cmp", 35, 4, FCMP), flag("H_AND", 49), flag("FTZ", 6), field("bop", 45, 2, BOP)),
    ir="HSETP2",
)

# --- shader-mem (issue 31): ATOMS.CAS on shared memory (-G code's loop for a generic atomic on a
# shared address); every bit flipped under nvdisasm 11.8 on ptxas's words: d 0..7, address
# register 8..15, offset 30..51 in words (signed), the pair b, b+1 at 20..27; bit 54 clear is
# .CAST, bit 52 .64 (next row), bits 28 / 29 print the second / first of the
# pair as RZ (held 0).
row(
    "ATOMS",
    op(0xEE40, 12, fixed=((28, 0), (29, 0))),
    (D, Mem("addr", off_lo=30, off_w=22, scale=4), B(pair=True)),
    (text("cas", ".CAS"),),
    ir="ATOMS",
    cls="mem",
)

# 64-bit CAS (shader-mem): the pairs b, b+1 (compare) and b+2, b+3 (new) print 'Rb, Rb+2'; bits
# 50 / 51 (ATOM) and 28 / 29 (ATOMS) print the second / first as RZ (held 0); ATOM's .64 is bit 49,
# ATOMS's bit 52.
row(
    "ATOM",
    op(0xEEF0, 14, fixed=((49, 1), (50, 0), (51, 0))),
    (D, Mem("addr", off_lo=28, off_w=20), B(pair=2)),
    (flag("E", 48), text("cas", ".CAS"), text("w", ".64")),
    ir="ATOM_CAS",
    cls="mem",
)
row(
    "ATOMS",
    op(0xEE50, 12, fixed=((28, 0), (29, 0))),
    (D, Mem("addr", off_lo=30, off_w=22, scale=4), B(pair=2)),
    (text("cas", ".CAS"), text("w", ".64")),
    ir="ATOMS",
    cls="mem",
)

# --- shader-alu (issue 31): new forms of instructions the lowering handles (its handlers read
# them by operand name; test_sm53_disasm accepts these rows as lowered)
ALU_FROM = len(ROWS)
# a BRA testing the condition code ('@P0 BRA CC.NEU, 0xe0', ptxas's
# loop on an ISET's .CC); the test 'always' (15) keeps the plain row above
row("BRA", op(0xE240, 16), (CC_SYM, Target("t")), ir="BRA", cls="branch")
# LOP3.LUT's constant (0x02..) and immediate (0x3c..) forms (ptxas's float division/reciprocal
# paths): the LUT at 48..55, C at 39, .CC 47, .X at 56 (C form) / 57 (I form: sign at 56); no
# predicate result (bits flipped under nvdisasm 11.8)
row("LOP3.LUT", op(0x0200, 7), (DCC, A(), CBuf("b"), C(), Imm("lut", 48, 8, "u")), (flag("X", 56),), ir="LOP3")
row("LOP3.LUT", op(0x3C00, 6), (DCC, A(), I19(), C(), Imm("lut", 48, 8, "u")), (flag("X", 57),), ir="LOP3")
# (HSET2's register form, which shader-alu's lowering reads, is shader-decode's row above)


# --- shader-gaps2 (issue 31): the half instructions' immediate forms and HFMA2's constant-bank
# form (ptxas's __hadd2/__hmul2/__hfma2 with a constant pair), every bit flipped under nvdisasm
# 11.8 on ptxas's words.  The pair of halves (printed high one first): each half's bits 6..14 at
# 30..38 (high) / 20..28 (low), signs 56 / 29; bit 55 set is the constant-bank form (HADD2/HMUL2:
# not decoded here).  A = R@8 (-43, |x| 44, swizzle 47..48; HFMA2: no -/|x|), result mode 49..50,
# .SAT 52; HADD2/HMUL2 .FTZ 39, HMUL2 .FMZ 40; HFMA2 .FTZ 57, .FMZ 58, its register at 39 with
# swizzle 53..54 and - at 51 (immediate form: C) or - at 56 (constant form: B, C = c[][] with -
# at 51).  .FTZ with .FMZ is refused (nvdisasm prints .INVALID).
HIMM = (Imm("bh", 30, 9, "h10", sign=56), Imm("bl", 20, 9, "h10", sign=29))
HMODS = (HMODE, flag("FTZ", 39), flag("SAT", 52))
row("HADD2", op(0x7A00, 7, fixed=((55, 0),)), (D, HA) + HIMM, HMODS, ir="HADD2.I")
row(
    "HMUL2",
    op(0x7800, 7, fixed=((55, 0),)),
    (D, HA) + HIMM,
    (HMODE, flag("FTZ", 39), flag("FMZ", 40), flag("SAT", 52)),
    ir="HMUL2.I",
    exclusive=(3 << 39,),
)
HFMODS = (HMODE, flag("FTZ", 57), flag("FMZ", 58), flag("SAT", 52))
row(
    "HFMA2",
    op(0x7000, 5, fixed=((55, 0),)),
    (D, Reg("a", 8, reuse=0, swz=47)) + HIMM + (Reg("c", 39, reuse=2, neg=51, swz=53),),
    HFMODS,
    ir="HFMA2.I",
    exclusive=(3 << 57,),
)
row(
    "HFMA2",
    op(0x6000, 5, fixed=((55, 1),)),
    (D, Reg("a", 8, reuse=0, swz=47), Reg("b", 39, neg=56, swz=53), CBuf("c", neg=51)),
    HFMODS,
    ir="HFMA2",
    exclusive=(3 << 57,),
)
# HFMA2's other constant-bank form (ptxas's __hfma2(x, constant, y): the constant as B, an f32 in
# c[0x2] as the form above reads it): B = c[][] (- 56), C = R@39 (- 51, swizzle 53..54).  HADD2's
# and HMUL2's constant-bank forms (bit 55 of their immediate forms): B = c[][] with - 56 / 43 and
# |x| 54; HMUL2's A has no -.  ptxas 12.9 was not seen to emit these two (a half2 kernel parameter
# goes through LDC.U16 into a register, an f32 one through F2F); their c[][] is an f32 as HFMA2's
# (yuzu's HADD2_cbuf/HMUL2_cbuf read it so; sm53/lower_half.py).
row(
    "HFMA2",
    op(0x7000, 5, fixed=((55, 1),)),
    (D, Reg("a", 8, reuse=0, swz=47), CBuf("b", neg=56), Reg("c", 39, reuse=2, neg=51, swz=53)),
    HFMODS,
    ir="HFMA2",
    exclusive=(3 << 57,),
)
row(
    "HADD2",
    op(0x7A00, 7, fixed=((55, 1),)),
    (D, HA, CBuf("b", neg=56, abs=54)),
    HMODS,
    ir="HADD2",
)
row(
    "HMUL2",
    op(0x7800, 7, fixed=((55, 1),)),
    (D, Reg("a", 8, reuse=0, abs=44, swz=47), CBuf("b", neg=43, abs=54)),
    (HMODE, flag("FTZ", 39), flag("FMZ", 40), flag("SAT", 52)),
    ir="HMUL2",
    exclusive=(3 << 39,),
)


# TXD.B (shader-tex; every bit flipped under nvdisasm 11.8 on ptxas 12.9's word 0xde780007a1471014
# of tex2DGrad on a texture object): the bound TXD with bit 54 set; the texture index (36..48,
# not printed: nvdisasm prints a fixed 0x0) held 0; the fault predicate 51, .AOFFI 35, .NODEP 49,
# .LC 50.  Registers as ptxas packs them: Ra the handle, then the point; Rb.. the gradients.
row(
    "TXD",
    op(0xDE40, 10),
    (
        Pred("pd", 51, hide_pt=True),
        D,
        A(),
        Reg("b", 20),
        Sym("idx", 36, 0, ((0, "0x0"),)),
        Sym("dim", 28, 3, TEX_DIM),
        Imm("mask", 31, 4, "u"),
    ),
    (text("B", ".B"), flag("LC", 50), flag("AOFFI", 35), NODEP),
    ir="TXD.B",
    cls="tex",
)


# --- shader-u (issue 31): VABSDIFF4's two sign bits (48 A, 49 B) as one modifier: nvdisasm 11.8
# prints .U8.U8 / .S8.U8 / .U8.S8 and nothing for .S8.S8 (the four words checked; two separate
# fields printed '.S8.S8', which no text of nvdisasm's has)
def _vabsdiff4_signs(r):
    if r.mnemonic != "VABSDIFF4":
        return r
    signs = Mod("signs", ((48, 2),), ((0, ".U8.U8"), (1, ".S8.U8"), (2, ".U8.S8"), (3, "")))
    mods = []
    for m in r.mods:
        if m.name == "asign":
            mods.append(signs)
        elif m.name != "bsign":
            mods.append(m)
    return replace(r, mods=tuple(mods))


ROWS[:] = [_vabsdiff4_signs(r) for r in ROWS]


# --- arch-gfx (issue 31): attributes addressed by a register (lower/gfx_indexed.py) -----------------
# ALD / AST with Ra (bits 8..15) not RZ and the offset field (20..29) zero: nvdisasm 11.8 prints
# 'ALD.PHYS R0, a[R2]' ('.O' before '.PHYS', the size after it), 'AST.PHYS a[R3], R1' (a word
# with both Ra and an offset it refuses; with .P it prints 'ALD.P R0, a[R2]', left out here).
row(
    "ALD",
    op(0xEFD8, 13),
    (D, Attr("a", 8, 8, reg=True), VTX),
    (flag("O", 32), text("PHYS", ".PHYS"), AL_SIZE),
    ir="ALD.PHYS",
    cls="attr",
    exclusive=(0xFF << 8,),
)
row(
    "AST",
    op(0xEFF0, 13),
    (Attr("a", 8, 8, reg=True), Reg("b", 0), VTX),
    (text("PHYS", ".PHYS"), AL_SIZE),
    ir="AST.PHYS",
    cls="attr",
    exclusive=(0xFF << 8,),
)


# --- shader-ctl: barrier reductions (PTX bar.red.popc/and/or, CUDA __syncthreads_count/and/or).
# nvdisasm 11.8 on ptxas 12.9's words and every field flipped: BAR's mode 32..34 = 2 is .RED,
# the reduction 35..36 (.POPC, .AND, .OR; 3 prints .INVALIDBARMODE3), the predicate 39 (not 42),
# the barrier 8..15, the thread count 20..31 printed only when not 0; B2R's mode 32..33 = 1 is
# .RESULT (the barrier's result into d and a predicate at 45, PT left out; bits 8..15 hold 0xff
# in ptxas's words and nvdisasm refuses other values).  Lowered by lower/barrier_red.py.
row(
    "BAR.RED",
    op(0xF0A8, 16, fixed=((32, 0), (33, 1), (34, 0))),
    (Imm("id", 8, 8, "u"), Imm("count", 20, 12, "u", hide_zero=True), Pred("pp", 39, not_bit=42)),
    (field("op", 35, 2, {0: ".POPC", 1: ".AND", 2: ".OR"}),),
    base=0x180000000000,
    ir="BAR.RED",
    cls="ctrl",
)
row(
    "B2R.RESULT",
    op(0xF0B8, 13, fixed=((32, 1), (33, 0))),
    (D, Pred("pd", 45, hide_pt=True)),
    base=0xFF00,
    ir="B2R.RESULT",
    cls="ctrl",
)
# --- shader-video (issue 31): the video ops as ptxas 12.9 writes them for PTX vadd/vsub/
# vabsdiff/vmin/vmax/vshl/vshr/vset/vmad (tests/shader_svc/cuda_corpus_video.py).  nvdisasm 11.8
# (every value written, then the bit flips of isa_coverage): the step field 51..53 has eight values
# (.MRG_8B2 3, none 7: the rows held only the swept ones, so `vadd d, a, b` was refused); the two
# operand types print as one pair, left out when both are .S32 (VSHL/VSHR: A .S32 (bit 48) and B
# the word; B has no sign bit there, 49 is .W); VMAD with both negations is .PO (a*b + c + 1);
# VMAD's A, B, C print reuse flags 0, 1, 2 when both A and B are sub-word (``_vmad_reuse``).
VSTEP8 = {0: ".MRG_16H", 1: ".MRG_16L", 2: ".MRG_8B0", 3: ".MRG_8B2", 4: ".ACC", 5: ".MIN", 6: ".MAX", 7: ""}
_VT = {sel: f"{8 if sel < 4 else 16 if sel < 6 else 32}" for sel in range(7)}


def _vpair(shift: bool) -> Mod:
    """A's and B's types as one modifier: value = ta | tb << 4 (t = sel | sign << 3)."""
    names = {}
    for ta in [s | g << 3 for g in (0, 1) for s in range(7)]:
        for tb in [s | g << 3 for g in ((0,) if shift else (0, 1)) for s in range(7)]:
            both32 = ta == 14 and (tb & 7 == 6 if shift else tb == 14)
            a = f".{'S' if ta >> 3 else 'U'}{_VT[ta & 7]}"
            names[ta | tb << 4] = "" if both32 else f"{a}.{'S' if tb >> 3 else 'U'}{_VT[tb & 7]}"
    pieces = ((36, 3), (48, 1), (28, 3)) if shift else ((36, 3), (48, 1), (28, 3), (49, 1))
    return Mod("types", pieces, tuple(sorted(names.items())))


def _video_row(r: Row) -> Row:
    if r.mnemonic not in ("VADD", "VABSDIFF", "VMNMX", "VSHL", "VSHR", "VSET", "VSETP", "VMAD"):
        return r
    shift = r.mnemonic in ("VSHL", "VSHR")
    mods = []
    for m in r.mods:
        if m.name == "ta":
            mods.append(_vpair(shift))
        elif m.name == "tb":
            continue
        elif m.name == "step":
            mods.append(field("step", 51, 3, VSTEP8))
        else:
            mods.append(m)
    if r.mnemonic == "VMNMX":  # nvdisasm prints .MX before .SAT
        names = [m.name for m in mods]
        i, j = names.index("SAT"), names.index("MX")
        mods[i], mods[j] = mods[j], mods[i]
    mask, value, base = r.mask, r.value, r.base
    if shift:  # bit 48 is A's sign (ptxas's vshl.s32 words), not a fixed opcode bit
        mask, value, base = mask & ~(1 << 48), value & ~(1 << 48), base & ~(1 << 48)
    return replace(r, mods=tuple(mods), mask=mask, value=value, base=base)


def _vmad_reuse(r: Row) -> list[Row]:
    """VMAD as two rows: nvdisasm 11.8 prints A's, B's, C's reuse flags (0, 1, 2) only when both
    A and B are a byte or half (ptxas's words set them); with a word operand it prints none (a
    set flag is refused there).  Each row lists only its own type pairs."""
    if r.mnemonic != "VMAD":
        return [r]
    out = []
    for sub in (True, False):
        mods = []
        for m in r.mods:
            if m.name == "types":
                keep = tuple((v, t) for v, t in m.names if ((v & 7) != 6 and (v >> 4 & 7) != 6) == sub)
                m = replace(m, names=keep)
            mods.append(m)
        ops = r.operands
        if sub:
            ops = tuple(replace(o, reuse={"a": 0, "b": 1, "c": 2}[o.name]) if o.name in "abc" else o for o in ops)
        else:
            ops = tuple(replace(o, reuse=None) if o.name in "abc" else o for o in ops)
        out.append(replace(r, mods=tuple(mods), operands=ops))
    return out


ROWS[:] = [_video_row(r) for r in ROWS]
_VMAD = next(r for r in ROWS if r.mnemonic == "VMAD")
row(
    "VMAD",
    op(0x5F00, 8, fixed=((50, 1), (53, 1), (54, 1))),
    (DCC, Reg("a", 8, vsel=36, reuse=0), Reg("b", 20, vsel=28, reuse=1), Reg("c", 39, reuse=2)),
    tuple(_VMAD.mods[:1]) + (text("PO", ".PO"),) + tuple(_VMAD.mods[1:]),
    base=(6 << 36) | (6 << 28),
    ir="VMAD",
)
ROWS[:] = [x for r in ROWS for x in _vmad_reuse(r)]
# BFI's RC form (B = Rc@39, C = c[bank][offset]; ptxas's -G tex_grad_aoffi: `BFI R11, R11, R6,
# c[0x2][0x0]`, every bit flipped under nvdisasm 11.8: 48..50 ignored, held 0)
row("BFI", op(0x53F0, 13), (DCC, A(), Reg("b", 39, reuse=1), CBuf("c")), ir="BFI")


# --- shader-video2 (issue 31): R2P's byte select ----------------------------------------------------
# R2P reads its bits from a byte of Ra chosen by bits 41..42 (P2R's .B1-.B3 field): nvdisasm 11.8
# prints it on the register ('R2P PR, R2.B1, 0x3', 'R2P PR, R2.B3, R3'), not as a modifier.
def _r2p_bsel(r: Row) -> Row:
    if r.mnemonic != "R2P":
        return r
    return replace(r, operands=tuple(replace(o, bsel=41) if getattr(o, "name", "") == "a" else o for o in r.operands))


ROWS[:] = [_r2p_bsel(r) for r in ROWS]
# --- shader-ctl2: the clock special registers (S2R / CS2R SR field 0x50..0x53, bits 20..27, as
# nvdisasm 11.8 prints them: SR_CLOCKLO/HI, SR_GLOBALTIMERLO/HI; translated by lower/clock.py)
SREGS.update({0x50: "SR_CLOCKLO", 0x51: "SR_CLOCKHI", 0x52: "SR_GLOBALTIMERLO", 0x53: "SR_GLOBALTIMERHI"})
# shader-ctl2: LEA's immediate form (top 0x36D0, B a 19-bit immediate with its sign at 56, as the
# other I forms; ptxas -O3 scales a function-pointer slot with it: LEA R8.CC, R4, 0x8)
row("LEA", op(0x36D0, 13, holes=(56,)), (Pred("pd", 48, hide_pt=True), DCC, A(neg=45), I19(), LEA_SH), (flag("X", 46),), ir="LEA")

# --- gfx-geom (issue 31): the geometry stage's system registers (lower/gfx_geometry.py) ----------
# nvdisasm 11.8 prints S2R's operand 0x10 SR_PRIM_TYPE, 0x11 SR_INVOCATION_ID, 0x1d SR_INVOCATION_INFO
SREGS.update({0x10: "SR_PRIM_TYPE", 0x11: "SR_INVOCATION_ID", 0x1D: "SR_INVOCATION_INFO"})
# --- shader-assert (issue 31): CCTLL, cache control of local memory (ptxas 12.9 compiles PTX
# prefetch.local.L1 to 'CCTLL.PF1 [R0]', word 0xef80000000070001).  nvdisasm 11.8, bit flips of
# that word: opcode bits 51..63, operation 0..3 (1 PF1, 2 PF1.5, 3 PF2, 4 WB, 5 IV, 7 RS, 9 RSLB;
# 0, 6, 8 print nothing; 10..15 'INVALIDCCTLOP<n>'), the address [R8 + a signed 24-bit byte
# offset at 20..43]; bits 4..5 name cache types nvdisasm calls invalid, left out (refused)
row(
    "CCTLL",
    op(0xEF80, 13),
    (Mem("addr", 8, 20, 24),),
    (field("op", 0, 4, {1: ".PF1", 2: ".PF1.5", 3: ".PF2", 4: ".WB", 5: ".IV", 7: ".RS", 9: ".RSLB"}),),
    cls="mem",
)
